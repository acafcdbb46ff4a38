"""Engine overhead: proctor against the official mlperf_loadgen, same settings, same SUTs, one table.

Each figure is the median of REPEATS runs of each engine, interleaved (official, proctor, official,
...) so both see the same machine load. SUTs:
- instant: completes every sample inside the issue call;
- worker: one thread completes queued samples in batches of up to 64.
Official SUTs use `ConstructFastSUT` (the fastest Python path the official offers) and
`QuerySamplesComplete`; proctor's use `issue_query_arrays` and `complete_arrays`.
Offline "summary" is each engine's own figure (the official stops its clock when the last completion
call starts); "end to end" is samples / wall time of the whole StartTest / run_test call.
Server: the median over the repeats of the highest rate on SERVER_LADDER reached before the first
invalid run (10 ms bound; each run >= RUNG_QUERIES queries), both engines climbing in lockstep (each
rate: one run per engine, back to back). Issue lateness: the
official does not record it, so both engines are compared on the instant SUT's median sample
latency at LATENESS_QPS (lateness plus one callback), median of LATENESS_RUNS runs per
engine (p99 beside a CPU hog is bimodal per run: a run with no tick-long stall gives ~0.1 ms, one
with a few gives 1-3 ms, for both engines; the per-run values are printed in the row's label);
proctor's own lateness record is shown too.
The 1M-sample Offline row runs each engine in a fresh child process (peak RSS, CPU seconds).

    python bench/loadgen_overhead.py [--quick]

Under contention (`--contention hog`: one CPU-bound process per core beside both engines; `gil`: a
Python thread holding the GIL whenever it runs), the rows that issue 14 compares, medians of 5:

    python bench/loadgen_overhead.py --only ss,server --contention hog --repeats 5 --quick
    python bench/loadgen_overhead.py --only ss,server --contention gil --repeats 5 --quick

Where proctor's Server stalls come from (per-query records, threads, gc, run-queue delay):

    python bench/loadgen_overhead.py --stalls 3 --contention hog

Several Server issue threads (the official's server_num_issue_query_threads), as a prototype of
proctor's open loop in K threads (thread j issues queries j, j+K, ...) against its one thread:
completed samples/s at a 1M QPS target, and the highest valid QPS on the ladder, per SUT:

    python bench/loadgen_overhead.py --issue-threads 2 --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import orjson

REPEATS = 3
SERVER_LADDER = (1_000, 2_000, 5_000, 10_000, 20_000, 30_000, 40_000, 60_000, 80_000, 100_000, 120_000, 150_000, 200_000)
RUNG_QUERIES = 2000
BATCH = 64
LATENESS_QPS = 10_000
LATENESS_RUNS = 11
TOTAL, PERF = 1024, 1024


# --- the SUTs --------------------------------------------------------------------------------------


class _Queue:
    """One worker thread completing queued ids in batches of up to BATCH via `complete(chunk)`."""

    def __init__(self, complete: Callable[[Any], None]) -> None:
        self.q: deque[Any] = deque()
        self.cv = threading.Condition()
        self.closed = False
        self.complete = complete
        self.t = threading.Thread(target=self.loop, daemon=True)
        self.t.start()

    def put(self, ids: Any) -> None:
        with self.cv:
            self.q.append(ids)
            self.cv.notify()

    def loop(self) -> None:
        while True:
            with self.cv:
                while not self.q:
                    if self.closed:
                        return
                    self.cv.wait()
                ids = self.q.popleft()
            for a in range(0, len(ids), BATCH):
                self.complete(ids[a : a + BATCH])

    def close(self) -> None:
        with self.cv:
            self.closed = True
            self.cv.notify()
        self.t.join()


class ProctorSUT:
    issue_from_completion = True  # issuing only queues: SS/MS issue from the completing thread

    def __init__(self, worker: bool) -> None:
        from proctor.loadgen.completion import complete_arrays

        self.worker = _Queue(complete_arrays) if worker else None
        if self.worker is None:
            self.issue_query_arrays = lambda ids, idx: complete_arrays(ids)
        else:
            put = self.worker.put
            self.issue_query_arrays = lambda ids, idx: put(ids)

    name = "bench"

    def issue_query(self, samples: Any) -> None:  # unused: the engine prefers issue_query_arrays
        raise AssertionError

    def flush_queries(self) -> None:
        pass

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()


class ProctorQSL:
    name = "bench-qsl"
    total_sample_count = TOTAL
    performance_sample_count = PERF

    def load_samples(self, indices: Any) -> None:
        pass

    def unload_samples(self, indices: Any) -> None:
        pass


def official_sut(lg: Any, worker: bool) -> tuple[Any, Any]:
    R, done = lg.QuerySampleResponse, lg.QuerySamplesComplete
    if not worker:

        def issue(ids: list[int], idx: list[int]) -> None:
            done([R(i, 0, 0) for i in ids])

        return lg.ConstructFastSUT(issue, lambda: None), None
    w = _Queue(lambda chunk: done([R(i, 0, 0) for i in chunk]))
    return lg.ConstructFastSUT(lambda ids, idx: w.put(ids), lambda: None), w


# --- one run of each engine --------------------------------------------------------------------------


def settings_for(kind: str, **kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = dict(
        min_duration_ms=kw.get("duration_ms", 1000), min_query_count=1, performance_sample_count_override=PERF
    )
    if kind == "Offline":
        base.update(
            scenario="Offline", min_query_count=kw["samples"], min_duration_ms=0, offline_expected_qps=1.0
        )
    elif kind == "SingleStream":
        base.update(scenario="SingleStream", single_stream_expected_latency_ns=2_000.0, min_query_count=100)
    elif kind == "MultiStream":
        base.update(
            scenario="MultiStream",
            multi_stream_expected_latency_ns=10_000.0,
            multi_stream_samples_per_query=8,
            min_query_count=100,
        )
    elif kind == "Server":
        base.update(
            scenario="Server",
            server_target_qps=float(kw["qps"]),
            server_target_latency_ns=10_000_000,
            min_query_count=100,
        )
    return base


def read_detail(path: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for line in path.read_bytes().splitlines():
        if line.startswith(b":::MLLOG"):
            rec = orjson.loads(line[9:])
            out.setdefault(rec["key"], rec["value"])
    return out


def run_official(fields: dict[str, Any], worker: bool, outdir: Path) -> tuple[dict[str, Any], float]:
    import mlperf_loadgen as lg

    ts = lg.TestSettings()
    for k, v in fields.items():
        if k == "scenario":
            v = getattr(lg.TestScenario, v)
        setattr(ts, k, v)
    ts.mode = lg.TestMode.PerformanceOnly
    ls = lg.LogSettings()
    ls.log_output.outdir = str(outdir)
    ls.enable_trace = False
    sut, w = official_sut(lg, worker)
    qsl = lg.ConstructQSL(TOTAL, PERF, lambda s: None, lambda s: None)
    t0 = time.perf_counter()
    lg.StartTestWithLogSettings(sut, qsl, ts, ls, "")
    wall = time.perf_counter() - t0
    if w is not None:
        w.close()
    lg.DestroyQSL(qsl)
    lg.DestroyFastSUT(sut)
    return read_detail(outdir / "mlperf_log_detail.txt"), wall


def run_proctor(fields: dict[str, Any], worker: bool, outdir: Path) -> tuple[dict[str, Any], float]:
    from proctor.loadgen.engine import run_test
    from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
    from proctor.loadgen.types import Scenario, TestMode

    ts = TestSettings(mode=TestMode.PERFORMANCE_ONLY)
    for k, v in fields.items():
        setattr(ts, k, Scenario(v) if k == "scenario" else v)
    ls = LogSettings(log_output=LogOutputSettings(outdir=str(outdir)), enable_trace=False)
    sut = ProctorSUT(worker)
    t0 = time.perf_counter()
    run_test(sut, ProctorQSL(), ts, ls, audit_config=None)
    wall = time.perf_counter() - t0
    sut.close()
    return read_detail(outdir / "mlperf_log_detail.txt"), wall


Engine = Callable[[dict[str, Any], bool, Path], tuple[dict[str, Any], float]]
ENGINES: dict[str, Engine] = {"official": run_official, "proctor": run_proctor}


def measure(
    fields: dict[str, Any], worker: bool, repeats: int | None = None, engines: dict[str, Engine] = ENGINES
) -> dict[str, list[tuple[dict[str, Any], float]]]:
    """(detail log values, wall seconds) of `repeats` runs per engine, interleaved."""
    runs: dict[str, list[tuple[dict[str, Any], float]]] = {e: [] for e in engines}
    for r in range(REPEATS if repeats is None else repeats):
        for name in turn_order(r, engines):
            with tempfile.TemporaryDirectory() as d:
                runs[name].append(engines[name](fields, worker, Path(d)))
    return runs


def turn_order(r: int, engines: dict[str, Engine] = ENGINES) -> list[str]:
    """The engines in repeat r: official first on even repeats, proctor first on odd ones, so neither
    always runs right after the other (in its wake: caches, the scheduler's view of this process)."""
    names = list(engines)
    return names if r % 2 == 0 else names[::-1]


def med(
    runs: dict[str, list[tuple[dict[str, Any], float]]],
    pick: Callable[[dict[str, Any], float], float],
    engines: tuple[str, ...] = tuple(ENGINES),
) -> dict[str, float]:
    return {e: statistics.median(pick(d, w) for d, w in runs[e]) for e in engines}


def ladder_walks(
    fields_at: Callable[[int], dict[str, Any]], worker: bool, r: int, engines: dict[str, Engine] = ENGINES
) -> dict[str, float]:
    """Each engine's highest SERVER_LADDER rate before its first invalid run (one run per rate), the
    engines walking in lockstep: at each rate every engine still climbing runs once, one right after
    the other, so both see the same moment of a shared host's load."""
    best = {name: 0.0 for name in engines}
    climbing = set(engines)
    for qps in SERVER_LADDER:
        for name in turn_order(r, engines):
            if name not in climbing:
                continue
            with tempfile.TemporaryDirectory() as d:
                detail, _ = engines[name](fields_at(qps), worker, Path(d))
            if detail.get("result_validity") == "VALID":
                best[name] = float(qps)
            else:
                climbing.discard(name)
        if not climbing:
            break
    return best


def server_peak(worker: bool, quick: bool, engines: dict[str, Engine] = ENGINES) -> tuple[dict[str, float], str]:
    """Median over REPEATS lockstep ladder walks of the highest valid rate, per engine (one outlier
    run ends a walk, so under contention single walks scatter widely), and the walks as text."""
    dur = 300 if quick else 500

    def fields(qps: int) -> dict[str, Any]:
        # at least RUNG_QUERIES queries: fewer fail early stopping's p99 estimate at low rates
        return settings_for("Server", qps=qps, duration_ms=max(dur, RUNG_QUERIES * 1000 // qps))

    walks = [ladder_walks(fields, worker, r, engines) for r in range(REPEATS)]
    spread = ", ".join("/".join(f"{w[name] / 1000:g}k" for name in engines) for w in walks)
    return {name: statistics.median(w[name] for w in walks) for name in engines}, spread


# --- the 1M-sample child ----------------------------------------------------------------------------


def child(engine: str, samples: int) -> None:
    fields = settings_for("Offline", samples=samples)
    with tempfile.TemporaryDirectory() as d:
        c0 = time.process_time()
        ENGINES[engine](fields, False, Path(d))
        cpu = time.process_time() - c0
    # VmHWM: this process's own peak (ru_maxrss of a child can carry the parent's peak over fork)
    with open("/proc/self/status") as status:
        hwm_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    rss_mib = hwm_kb / 1024
    print(json.dumps({"cpu_s": cpu, "rss_mib": rss_mib}))


BASE_SAMPLES = 1_000  # the start-up base: the peak of a run this small is the process's own
OFFICIAL_BYTES_PER_SAMPLE = 416  # measured: the official needs this much per Offline sample
MEMORY_BUDGET = 20 << 30  # the official's run is skipped where it would need more than this


def million(samples: int, repeats: int | None = None) -> dict[str, tuple[float, float]]:
    out: dict[str, list[tuple[float, float]]] = {e: [] for e in ENGINES}
    engines = [e for e in ENGINES if e != "official" or samples * OFFICIAL_BYTES_PER_SAMPLE < MEMORY_BUDGET]
    for _ in range(REPEATS if repeats is None else repeats):
        for e in engines:
            res = subprocess.run(
                [sys.executable, __file__, "--child", e, "--samples", str(samples)],
                capture_output=True,
                text=True,
                check=True,
                env=os.environ,
            )
            d = json.loads(res.stdout.strip().splitlines()[-1])
            out[e].append((d["rss_mib"], d["cpu_s"]))
    return {
        e: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v))
        if v
        else (float("nan"), float("nan"))
        for e, v in out.items()
    }


def generation_rate(samples: int = 30_000_000, tries: int = 3) -> float:
    """proctor's Offline schedule generation (loaded set, sample indices, accuracy-log mask), samples/s
    on this one thread; best of `tries`."""
    from proctor.loadgen.normalize import normalize
    from proctor.loadgen.schedule import generate_schedule, loadable_sets
    from proctor.loadgen.settings import TestSettings
    from proctor.loadgen.types import Scenario, TestMode

    ts = TestSettings(
        scenario=Scenario.OFFLINE,
        mode=TestMode.PERFORMANCE_ONLY,
        min_query_count=samples,
        min_duration_ms=0,
        performance_sample_count_override=PERF,
    )
    eff = normalize(ts, TOTAL, PERF)
    best = 0.0
    for _ in range(tries):
        t0 = time.perf_counter()
        loaded = loadable_sets(eff, TOTAL, TestMode.PERFORMANCE_ONLY)[0]
        sch = generate_schedule(eff, loaded, TestMode.PERFORMANCE_ONLY)
        best = max(best, sch.n_samples / (time.perf_counter() - t0))
        del sch
    return best


# --- find-peak side by side -------------------------------------------------------------------------

# A FixedServiceQueue of 10 ms per query: capacity 100 QPS; with a 100 ms p99 bound over 2 s runs the
# peak is ~101.6 QPS (the queue simulated on the schedule), and 3 ms of extra latency on every query
# moves it by 0.4 QPS: queueing decides, not the machine's noise.
PEAK_SERVICE_S = 0.010
PEAK_FIELDS: dict[str, Any] = dict(
    scenario="Server",
    server_target_qps=60.0,
    server_target_latency_ns=100_000_000,
    server_find_peak_qps_boundary_step_size=0.5,
    server_find_peak_qps_decimals_of_precision=0,
    min_duration_ms=2000,
    min_query_count=200,
    performance_sample_count_override=PERF,
)
FOUND_PEAK = "FindPeakPerformance: Found peak performance field: "


def found_peak(detail_path: Path) -> float:
    """The searched peak, from the message both engines log at the end of the search."""
    for line in detail_path.read_bytes().splitlines():
        if line.startswith(b":::MLLOG"):
            value = orjson.loads(line[9:])["value"]
            if isinstance(value, str) and value.startswith(FOUND_PEAK):
                return float(value[len(FOUND_PEAK) :])
    return float("nan")


def find_peak_official(fields: dict[str, Any], outdir: Path, service_s: float = PEAK_SERVICE_S) -> float:
    import mlperf_loadgen as lg

    from proctor.suts.synthetic import FixedServiceQueue

    ts = lg.TestSettings()
    for k, v in fields.items():
        setattr(ts, k, getattr(lg.TestScenario, v) if k == "scenario" else v)
    ts.mode = lg.TestMode.FindPeakPerformance
    ls = lg.LogSettings()
    ls.log_output.outdir = str(outdir)
    ls.enable_trace = False
    R, done = lg.QuerySampleResponse, lg.QuerySamplesComplete
    queue = FixedServiceQueue(service_s, lambda ids: done([R(i, 0, 0) for i in ids]))
    sut = lg.ConstructFastSUT(lambda ids, idx: queue.put(ids), lambda: None)
    qsl = lg.ConstructQSL(TOTAL, PERF, lambda s: None, lambda s: None)
    try:
        lg.StartTestWithLogSettings(sut, qsl, ts, ls, "")
    finally:
        queue.close()
        lg.DestroyQSL(qsl)
        lg.DestroyFastSUT(sut)
    return found_peak(outdir / "mlperf_log_detail.txt")


class QueueSUT(ProctorSUT):
    """proctor's side of the find-peak pair: every issue call is one query into the queue."""

    def __init__(self, service_s: float) -> None:
        from proctor.loadgen.completion import complete_arrays
        from proctor.suts.synthetic import FixedServiceQueue

        self.worker = None
        self.queue = FixedServiceQueue(service_s, complete_arrays)
        self.issue_query_arrays = lambda ids, idx: self.queue.put(ids)

    def close(self) -> None:
        self.queue.close()


def find_peak_proctor(fields: dict[str, Any], outdir: Path, service_s: float = PEAK_SERVICE_S) -> float:
    from proctor.loadgen.engine import run_test
    from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
    from proctor.loadgen.types import Scenario, TestMode

    ts = TestSettings(mode=TestMode.FIND_PEAK_PERFORMANCE)
    for k, v in fields.items():
        setattr(ts, k, Scenario(v) if k == "scenario" else v)
    ls = LogSettings(log_output=LogOutputSettings(outdir=str(outdir)), enable_trace=False)
    sut = QueueSUT(service_s)
    try:
        run_test(sut, ProctorQSL(), ts, ls, audit_config=None)
    finally:
        sut.close()
    return found_peak(outdir / "mlperf_log_detail.txt")


FIND_PEAK = {"official": find_peak_official, "proctor": find_peak_proctor}


def find_peak_pair() -> dict[str, float]:
    """Both engines' FindPeakPerformance (PEAK_FIELDS) on the same queue, one after the other, each in
    a fresh child process (no threads or engine state left over from earlier runs)."""
    out: dict[str, float] = {}
    for name in FIND_PEAK:
        res = subprocess.run(
            [sys.executable, __file__, "--find-peak-child", name],
            capture_output=True,
            text=True,
            check=True,
            env=os.environ,
        )
        out[name] = float(res.stdout.strip().splitlines()[-1])
    return out


def find_peak_child(engine: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        print(FIND_PEAK[engine](PEAK_FIELDS, Path(d)))


RULES_OFFLINE_SAMPLES = 660_000_000


class Contention:
    """Load beside both engines while they run: `hog` one CPU-bound process per core, `gil` one
    Python thread in this process that holds the GIL whenever it runs."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.procs: list[subprocess.Popen[bytes]] = []
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> Contention:
        if self.kind == "hog":
            self.procs = [
                subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)
            ]
        elif self.kind == "gil":
            def spin() -> None:
                x = 0
                while not self.stop.is_set():
                    x += 1

            self.thread = threading.Thread(target=spin, daemon=True)
            self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for p in self.procs:
            p.kill()
            p.wait()
        if self.thread is not None:
            self.thread.join()


# --- where the stalls come from ----------------------------------------------------------------------

STALL_NS = 500_000  # an issue this late (or later) starts a stall


def _task_stat(tid: int) -> tuple[int, int, int, int]:
    """(voluntary, involuntary switches, ns on the CPU, ns runnable but waiting) of one thread."""
    with open(f"/proc/self/task/{tid}/status") as f:
        status = f.read()
    vol = int(status.split("\nvoluntary_ctxt_switches:")[1].split()[0])
    invol = int(status.split("nonvoluntary_ctxt_switches:")[1].split()[0])
    with open(f"/proc/self/task/{tid}/schedstat") as f:
        run, delay, _ = map(int, f.read().split())
    return vol, invol, run, delay


def stall_probe(runs: int) -> None:
    """proctor Server at LATENESS_QPS, instant SUT, beside the chosen contention: per run the stalls
    (issues >= STALL_NS late: count, period, length, and whether completions lag too), every thread
    in the process while issuing with its switches and run-queue delay, and gc collections."""
    import gc

    from proctor.loadgen.engine import run_test
    from proctor.loadgen.progress import ProgressHooks
    from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
    from proctor.loadgen.types import Scenario, TestMode

    collections: list[tuple[int, int]] = []  # (start ns, generation)

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append((time.perf_counter_ns(), info["generation"]))

    class Hooks(ProgressHooks):
        def on_phase(self, mode: Any, schedule: Any, records: Any, tracker: Any) -> None:
            self.threads = {t.native_id: t.name for t in threading.enumerate() if t.native_id}
            self.before = {tid: _task_stat(tid) for tid in self.threads}

        def on_phase_end(self, mode: Any, records: Any) -> None:
            self.after = {tid: _task_stat(tid) for tid in self.threads if os.path.exists(f"/proc/self/task/{tid}")}

    gc.callbacks.append(on_gc)
    try:
        for r in range(runs):
            ts = TestSettings(mode=TestMode.PERFORMANCE_ONLY)
            for k, v in settings_for("Server", qps=LATENESS_QPS, duration_ms=1000).items():
                setattr(ts, k, Scenario(v) if k == "scenario" else v)
            hooks = Hooks()
            collections.clear()
            with tempfile.TemporaryDirectory() as d:
                ls = LogSettings(log_output=LogOutputSettings(outdir=d), enable_trace=False)
                out = run_test(ProctorSUT(False), ProctorQSL(), ts, ls, audit_config=None, progress=hooks)
            rec = out.records
            assert rec is not None
            n = rec.n_queries_issued
            sched, issued, done = (a[:n] for a in (rec.query_scheduled_ns, rec.query_issued_ns, rec.query_done_ns))
            late = issued - sched
            bad = late >= STALL_NS
            first = np.flatnonzero(bad & ~np.r_[False, bad[:-1]])
            at_ms = (sched[first] - rec.start_ns) / 1e6
            gaps = np.diff(at_ms)
            print(
                f"run {r}: p99 latency {np.percentile(done - sched, 99) / 1e3:,.0f} us; p99 issue lateness "
                f"{np.percentile(late, 99) / 1e3:,.0f} us; p99 done-after-issue {np.percentile(done - issued, 99) / 1e3:,.1f} us"
            )
            print(
                f"  stalls: {first.size}, at ms {np.round(at_ms[:12], 1).tolist()}"
                f"{' ...' if first.size > 12 else ''}; median period "
                f"{np.median(gaps) if gaps.size else float('nan'):.1f} ms; worst issue lateness {late.max() / 1e6:.2f} ms"
            )
            end = int(issued[-1]) if n else rec.start_ns
            gcs = [(round((t - rec.start_ns) / 1e6, 1), g) for t, g in collections if rec.start_ns <= t <= end]
            print(f"  gc collections while issuing (ms, generation): {gcs}")
            for tid, name in hooks.threads.items():
                if tid in hooks.after:
                    b, a = hooks.before[tid], hooks.after[tid]
                    print(
                        f"  thread {name} ({tid}): {a[0] - b[0]} voluntary / {a[1] - b[1]} involuntary switches, "
                        f"{(a[2] - b[2]) / 1e6:.1f} ms on CPU, {(a[3] - b[3]) / 1e6:.1f} ms runnable but waiting"
                    )
    finally:
        gc.callbacks.remove(on_gc)


# --- several issue threads (a prototype) --------------------------------------------------------------


def threaded_open_loop(issuer: Any, k: int) -> Any:
    """The Server open loop in k threads: thread j sleeps to and issues queries j, j + k, ... (no
    coalescing, no after-issue checks: a measurement of what the threads gain, not a feature)."""
    from proctor.loadgen.issuer import IssueOutcome

    rec, tracker, issue = issuer.records, issuer.tracker, issuer._issue
    offs = issuer.schedule.query_offsets.tolist()
    rel = issuer.schedule.scheduled_ns.tolist()
    qsched, qissued = rec.query_scheduled_ns.data, rec.query_issued_ns.data
    now, nq, lock = issuer.clock.now_ns, len(rel), threading.Lock()
    start = now()
    rec.start_ns = start
    wall_start = time.monotonic_ns()

    def one_thread(j: int) -> None:
        for q in range(j, nq, k):
            due = start + rel[q]
            t = now()
            if t < due:
                time.sleep((due - t) * 1e-9)
                t = now()
            with lock:  # completions check ids against it: it only grows
                if offs[q + 1] > tracker.issued_end:
                    tracker.issued_end = offs[q + 1]
            qsched[q], qissued[q] = due, t
            issue(offs[q], offs[q + 1])

    threads = [threading.Thread(target=one_thread, args=(j,)) for j in range(k)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rec.n_queries_issued, rec.n_samples_issued = nq, offs[nq]
    return IssueOutcome(issuer._exhausted(), start, now(), wall_start)


def run_proctor_threads(k: int) -> Engine:
    def run(fields: dict[str, Any], worker: bool, outdir: Path) -> tuple[dict[str, Any], float]:
        from proctor.loadgen import issuer as issuer_mod

        orig = issuer_mod.Issuer._open_loop
        issuer_mod.Issuer._open_loop = lambda self: threaded_open_loop(self, k)  # type: ignore[method-assign]
        try:
            return run_proctor(fields, worker, outdir)
        finally:
            issuer_mod.Issuer._open_loop = orig  # type: ignore[method-assign]

    return run


def issue_threads(k: int) -> None:
    """proctor's one issue thread against k (threaded_open_loop), per SUT: completed samples/s at a
    1M QPS target (every query late: the issue rate), median of REPEATS runs; the highest valid QPS
    on SERVER_LADDER, median of REPEATS lockstep walks."""
    engines: dict[str, Engine] = {"1 thread": run_proctor, f"{k} threads": run_proctor_threads(k)}
    names = list(engines)
    print(f"1-min load {os.getloadavg()[0]:.2f}; medians of {REPEATS}; Server, proctor's issuer in 1 vs {k} threads")
    for worker in (False, True):
        label = "one-worker-thread" if worker else "instant"
        runs = measure(settings_for("Server", qps=1_000_000, duration_ms=500), worker, REPEATS, engines)
        rate = {n: [float(d["result_completed_samples_per_sec"]) for d, _ in runs[n]] for n in names}
        peak, walks = server_peak(worker, False, engines)
        for n in names:
            print(
                f"  {label:18s} {n:10s} completed samples/s at 1M QPS target {statistics.median(rate[n]):>10,.0f} "
                f"(runs {', '.join(f'{v / 1000:,.0f}k' for v in rate[n])}); highest valid QPS {peak[n]:>9,.0f}"
            )
        print(f"  {label:18s} ladder walks ({' / '.join(names)}): {walks}")


# --- the table --------------------------------------------------------------------------------------


def row(label: str, unit: str, official: float, proctor: float, higher_better: bool) -> tuple[str, ...]:
    if official != official:  # NaN: the official was not run (it would not fit in memory)
        return (label, unit, "n/a", f"{proctor:,.1f}", "", "")
    fmt = (lambda v: f"{v:,.0f}") if abs(official) >= 100 else (lambda v: f"{v:,.1f}")
    if not official and not proctor:  # e.g. no valid Server rate for either engine
        return (label, unit, fmt(official), fmt(proctor), "-", "both 0")
    good, bad = (proctor, official) if higher_better else (official, proctor)
    ratio = good / bad if bad else float("inf")
    return (label, unit, fmt(official), fmt(proctor), f"{ratio:.2f}x", "ok" if ratio >= 1 else "BEHIND")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--find-peak-child", choices=("official", "proctor"))
    ap.add_argument("--samples", type=int, default=1_000_000)
    ap.add_argument("--quick", action="store_true", help="shorter runs, for a smoke test")
    ap.add_argument("--only", default="", help="comma list: offline,ss,ms,server,million,scale,gen,peak")
    ap.add_argument("--repeats", type=int, default=REPEATS, help="runs per figure (median)")
    ap.add_argument("--contention", choices=("none", "hog", "gil"), default="none")
    ap.add_argument("--stalls", type=int, default=0, metavar="RUNS", help="only: instrumented proctor Server runs")
    ap.add_argument("--issue-threads", type=int, default=0, metavar="K", help="only: Server with 1 vs K issue threads")
    args = ap.parse_args()
    if args.child:
        child(args.child, args.samples)
        return
    if args.find_peak_child:
        find_peak_child(args.find_peak_child)
        return
    if args.stalls:
        print(f"1-min load {os.getloadavg()[0]:.2f}; contention {args.contention}")
        with Contention(args.contention):
            stall_probe(args.stalls)
        return
    globals()["REPEATS"] = args.repeats  # one knob for every figure
    if args.issue_threads:
        with Contention(args.contention):
            issue_threads(args.issue_threads)
        return
    only = set(filter(None, args.only.split(","))) or {"offline", "ss", "ms", "server", "million", "scale", "gen", "peak"}
    t_start = time.perf_counter()
    load_start = os.getloadavg()[0]
    with Contention(args.contention):
        rows = table_rows(args, only)
    print_table(rows, args, t_start, load_start)


def table_rows(args: argparse.Namespace, only: set[str]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    n_off = 100_000 if args.quick else 300_000
    dur = 300 if args.quick else 1000
    if "offline" in only:
        for worker in (False, True):
            label = "one-worker-thread, batches of 64" if worker else "instant"
            runs = measure(settings_for("Offline", samples=n_off), worker)
            summ = med(runs, lambda d, w: float(d["result_samples_per_second"]))
            e2e = med(runs, lambda d, w: n_off / w)
            rows.append(
                row(
                    f"Offline samples/s, summary ({label})",
                    "samples/s",
                    summ["official"],
                    summ["proctor"],
                    True,
                )
            )
            rows.append(
                row(
                    f"Offline samples/s, end to end ({label})",
                    "samples/s",
                    e2e["official"],
                    e2e["proctor"],
                    True,
                )
            )
    if "ss" in only:
        for worker in (False, True):
            label = "one-worker-thread" if worker else "instant"
            runs = measure(settings_for("SingleStream", duration_ms=dur), worker)
            got = med(runs, lambda d, w: d["result_90.00_percentile_latency_ns"] / 1e3)
            qps = med(runs, lambda d, w: float(d["result_qps_with_loadgen_overhead"]))
            rows.append(
                row(f"SingleStream p90 latency ({label})", "us", got["official"], got["proctor"], False)
            )
            rows.append(
                row(
                    f"SingleStream queries/s w/ loadgen overhead ({label})",
                    "queries/s",
                    qps["official"],
                    qps["proctor"],
                    True,
                )
            )
    if "ms" in only:
        for worker in (False, True):
            label = "one-worker-thread" if worker else "instant"
            runs = measure(settings_for("MultiStream", duration_ms=dur), worker)
            got = med(runs, lambda d, w: d["result_99.00_percentile_per_query_latency_ns"] / 1e3)
            rows.append(
                row(
                    f"MultiStream p99 query latency, 8 samples/query ({label})",
                    "us",
                    got["official"],
                    got["proctor"],
                    False,
                )
            )
    if "server" in only:
        for worker in (False, True):
            label = "one-worker-thread" if worker else "instant"
            peak, walks = server_peak(worker, args.quick)
            rows.append(
                row(
                    f"Server highest valid QPS, 10 ms, median of {REPEATS} ladder walks ({label}; walks: {walks})",
                    "QPS",
                    peak["official"],
                    peak["proctor"],
                    True,
                )
            )
        runs = measure(settings_for("Server", qps=LATENESS_QPS, duration_ms=dur), False, max(REPEATS, LATENESS_RUNS))
        p50 = med(runs, lambda d, w: d["result_50.00_percentile_latency_ns"] / 1e3)
        rows.append(
            row(
                f"Server p50 latency at {LATENESS_QPS:,} QPS, instant SUT (= lateness + 1 call)",
                "us",
                p50["official"],
                p50["proctor"],
                False,
            )
        )
        p99 = med(runs, lambda d, w: d["result_99.00_percentile_latency_ns"] / 1e3)
        each = "; ".join(
            f"{name} " + "/".join(f"{d['result_99.00_percentile_latency_ns'] / 1e6:.2g}" for d, _ in sorted(
                runs[name], key=lambda r: r[0]["result_99.00_percentile_latency_ns"]
            ))
            for name in ENGINES
        )
        rows.append(
            row(
                f"Server p99 latency at {LATENESS_QPS:,} QPS, instant SUT (runs, ms: {each})",
                "us",
                p99["official"],
                p99["proctor"],
                False,
            )
        )
        for key in ("p50", "p99", "max"):
            v = med(runs, lambda d, w, key=key: d[f"proctor_issue_lateness_{key}_ns"] / 1e3, ("proctor",))
            rows.append(
                (
                    f"Server issue lateness {key} at {LATENESS_QPS:,} QPS (proctor's record)",
                    "us",
                    "n/a",
                    f"{v['proctor']:,.1f}",
                    "",
                    "",
                )
            )
    if "million" in only:
        m = million(args.samples)
        rows.append(
            row(
                f"Offline {args.samples:,} samples: peak RSS (child process)",
                "MiB",
                m["official"][0],
                m["proctor"][0],
                False,
            )
        )
        rows.append(
            row(
                f"Offline {args.samples:,} samples: CPU time (child process)",
                "s",
                m["official"][1],
                m["proctor"][1],
                False,
            )
        )
    if "scale" in only:
        sizes = (1_000_000, 10_000_000, 100_000_000)
        mem = {n: million(n, REPEATS if n <= 1_000_000 else 1) for n in sizes}
        for n in sizes:
            for k, what, unit in ((0, "peak RSS", "MiB"), (1, "CPU time", "s")):
                rows.append(
                    row(f"Offline {n:,} samples: {what} (child)", unit, mem[n]["official"][k], mem[n]["proctor"][k], False)
                )
        for lo, hi in ((1_000_000, 10_000_000), (10_000_000, 100_000_000)):
            per = {
                e: (mem[hi][e][0] - mem[lo][e][0]) * 2**20 / (hi - lo) for e in ENGINES
            }
            rows.append(row(f"Offline bytes/sample at peak, {lo:,} -> {hi:,}", "B", per["official"], per["proctor"], False))
        # issue 33 §1: the peak over the start-up base (the same child's peak for BASE_SAMPLES), per sample
        base = million(BASE_SAMPLES, 1)
        for n in sizes[1:]:
            over = {e: (mem[n][e][0] - base[e][0]) * 2**20 / n for e in ENGINES}
            rows.append(row(f"Offline {n:,} samples: bytes/sample over the start-up base ({BASE_SAMPLES:,}-sample run: "
                            f"{base['proctor'][0]:,.0f} MiB proctor)", "B", over["official"], over["proctor"], False))
    if "peak" in only:
        peaks = [find_peak_pair() for _ in range(REPEATS)]
        p = {e: statistics.median(x[e] for x in peaks) for e in ENGINES}
        spread = ", ".join(f"{x['official']:g}/{x['proctor']:g}" for x in peaks)
        rows.append(
            (
                f"FindPeakPerformance, 10 ms/query FIFO queue, p99 <= 100 ms (runs: {spread})",
                "QPS",
                f"{p['official']:g}",
                f"{p['proctor']:g}",
                f"{p['proctor'] - p['official']:+g}",
                "ok" if abs(p["proctor"] - p["official"]) <= 1 else "DIFFERS",
            )
        )
    if "gen" in only:
        rate = generation_rate()
        rows.append(("Offline schedule generation, one core (proctor)", "samples/s", "n/a", f"{rate:,.0f}", "", ""))
        # the rules' 600 s at 1M samples/s x 1.1: 660M samples in one query
        full = RULES_OFFLINE_SAMPLES / generation_rate(RULES_OFFLINE_SAMPLES, 1)
        rows.append(
            (
                f"Offline schedule generation of {RULES_OFFLINE_SAMPLES:,} samples (share of a 600 s run)",
                "s",
                "n/a",
                f"{full:,.1f} ({full / 600:.1%})",
                "",
                "",
            )
        )
    return rows


def print_table(rows: list[tuple[str, ...]], args: argparse.Namespace, t_start: float, load_start: float) -> None:
    header = ("figure", "unit", "official", "proctor", "ratio", "")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    from importlib.metadata import version

    import mlperf_loadgen  # noqa: F401  (version line only)

    print(
        f"medians of {REPEATS} runs (Offline >= 10M samples: one run); mlcommons-loadgen {version('mlcommons-loadgen')}; Python "
        f"{sys.version.split()[0]}; {os.cpu_count()} CPUs; 1-min load {load_start:.2f} before, "
        f"{os.getloadavg()[0]:.2f} at the end (with the contention); trace off; "
        f"contention {args.contention}"
    )
    print(
        "ratio: proctor / official for rates, official / proctor for times and sizes (>= 1 is proctor ahead)"
    )
    for r in [header, tuple("-" * w for w in widths), *rows]:
        print(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))
            )
        )
    print(f"total bench time {time.perf_counter() - t_start:.0f} s")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
