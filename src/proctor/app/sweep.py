"""Sweeps and goodput: many runs of one SUT, one row each, and the highest rate that stays valid.

A sweep runs the SUT at a list of Server rates (each point an MLPerf Server run with its own verdict)
or at a list of concurrencies (a closed loop keeping N queries in flight, the everyday mode of
GuideLLM, AIPerf and `vllm bench`; not an MLPerf scenario, so such a point is never VALID: see
`loadgen.engine.closed_loop_reason`). Each point's figures and validity come from its own run's
logs and results, never from its neighbours.

`--goodput` searches for the highest passing offered rate: the highest Server target QPS whose run
meets the benchmark's limits (its latency (or TTFT and TPOT) within the bounds at the benchmark's
percentile, in a complete run without errors or failed
samples: `meets_limits`). It is an offered rate, not the SLO goodput (a point's `goodput_per_s`, the
completed requests/s that met every target), and is named apart from it everywhere: sweep.json's
`highest_passing_qps` (`goodput_qps`, its older name, kept for readers of schema 1) beside
`achieved_requests_per_s`, that point's own completed requests/s. The run-length checks (min duration, min queries, the query count early
stopping needs) say whether a run was long enough, not whether the rate was too high; each probe
still carries its full verdict. `goodput_search` finds it coarse-to-fine: double (or
halve) from the start rate until the verdict changes, then narrow the bracket geometrically until
hi / lo - 1 <= tolerance. The official FindPeakPerformance (loadgen/find_peak.py) bisects to a
number of decimals instead, many more full runs for a figure no more precise than run-to-run noise.

Nothing here prints: the CLI (cli/sweep.py) shows the table and the probes.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proctor.errors import ConfigError
from proctor.loadgen.scenarios import Scenario, TestMode
from proctor.typed_records import field, record

if TYPE_CHECKING:
    from proctor.app.session import RunRequest
    from proctor.loadgen.engine import RunOutcome
    from proctor.loadgen.progress import ProgressHooks
    from proctor.loadgen.results import SLOTargets

SCHEMA = "proctor.sweep/1"
MAX_POINTS = 64  # a list or range longer than this is refused (each point is a full run)
MAX_PROBES = 40  # goodput: a guard; a 2 % search from a sane start needs about 10
# goodput's halving stops once a rate KEPT_UP_BY 4 times lower, which the SUT kept up with, left its
# latency over the bound by more than LOAD_DRIVEN of the excess it had: the latency does not come from
# the load, so no lower rate passes, and each halving doubles a probe's length (min queries / rate)
KEPT_UP = 0.8  # a probe kept up when it completed at least this share of its target rate
LOAD_DRIVEN = 0.5
DEFAULT_TOLERANCE = 0.02
MIN_TOLERANCE = 0.001  # 0.1 %: finer than run-to-run noise already; rates are run to 6 digits
PERCENTILES = (0.5, 0.9, 0.99)
CLOSED_LOOP = "closed loop"  # the scenario column of a concurrency point


# --- what the user asks for ------------------------------------------------------------------------


def _bad(option: str, message: str) -> ConfigError:
    """A refused option value: one line that starts with the option as the user typed it."""
    return ConfigError(f"{option}: {message}")


def _number(text: str, option: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _bad(option, f"'{text}' is not a number") from None
    if not (math.isfinite(value) and value > 0):
        raise _bad(option, f"'{text}' must be a finite number > 0")
    return value


def parse_values(text: str, option: str) -> list[float]:
    """`4,8,16`, or a range `START:STOP:xF` (times F, F > 1) or `START:STOP:+D` (plus D), STOP
    included when the steps reach it; at most MAX_POINTS values, increasing, no repeats."""
    text = text.strip()
    if not text:
        raise _bad(option, "give a list (4,8,16) or a range (4:64:x2 or 10:50:+10)")
    if ":" in text:
        parts = text.split(":")
        if len(parts) != 3:
            raise _bad(option, f"'{text}': a range is START:STOP:xFACTOR or START:STOP:+STEP")
        start, stop = _number(parts[0], option), _number(parts[1], option)
        step = parts[2].strip()
        if stop < start:
            raise _bad(option, f"'{text}': STOP ({stop:g}) is below START ({start:g})")
        if not re.fullmatch(r"[x+][0-9.eE+-]+", step):
            raise _bad(option, f"'{text}': the step is xFACTOR (x2) or +STEP (+10), not '{step}'")
        amount = _number(step[1:], option)
        if step[0] == "x" and amount <= 1:
            raise _bad(option, f"'{text}': a factor must be > 1")
        values: list[float] = []
        v = start
        while v <= stop * (1 + 1e-9):
            values.append(v)
            if len(values) > MAX_POINTS:
                break
            v = v * amount if step[0] == "x" else v + amount
    else:
        values = [_number(part, option) for part in text.split(",")]
    if len(values) > MAX_POINTS:
        raise _bad(option, f"'{text}' gives more than {MAX_POINTS} points; each is a full run")
    values = [float(f"{v:.6g}") for v in values]  # 6 significant digits: a range's sums do not drift
    if any(b <= a for a, b in zip(values, values[1:], strict=False)):
        raise _bad(option, f"'{text}': give the values increasing, each once")
    return values


def parse_concurrencies(text: str, option: str = "--concurrency") -> list[int]:
    values = parse_values(text, option)
    bad = [v for v in values if v != int(v)]
    if bad:
        raise _bad(option, f"'{text}': a concurrency is a whole number of requests, not {bad[0]:g}")
    return [int(v) for v in values]


# --- one point -------------------------------------------------------------------------------------


@record(slots=True)
class Point:
    """One run of a sweep, as the table and sweep.json show it (times in ms, rates per second)."""

    kind: str  # "rate" (Server, target QPS) or "concurrency" (closed loop, N in flight)
    value: float  # the target QPS or N
    scenario: str  # "Server" or CLOSED_LOOP
    mlperf: bool  # an MLPerf scenario (Server) or not (closed loop)
    valid: bool | None  # the run's own MLPerf verdict; None for a closed loop (no MLPerf verdict)
    # Server: latency (or TTFT and TPOT) within the benchmark's bounds at its percentile, the run
    # complete, no errors, no failed sample: what load decides (goodput's test); None: closed loop
    meets_limits: bool | None
    verdict: str  # the verdict's first line, or for a closed loop how the run ended
    # the run's requests/s (loadgen.results: PerformanceResult.requests_per_second): for a Server point
    # the verdict's "completed samples per second", the same number unrounded
    requests_per_s: float
    tokens_per_s: float | None  # completed tokens per second (token-latency benchmarks)
    latency_ms: dict[str, float]  # p50, p90, p99 of the sample latency
    ttft_ms: dict[str, float] | None
    tpot_ms: dict[str, float] | None
    samples: int  # completed samples
    errors: int
    duration_s: float  # from the first issue to the last completion
    wall_s: float  # the whole run, logs included
    logs: str  # the point's folder, relative to the sweep's
    reasons: list[str] = field(default_factory=list)  # why INVALID (Server points)
    # Server: the bounds its run was held to, in ms ({"latency": ..} or {"ttft": .., "tpot": ..})
    limits_ms: dict[str, float] | None = None
    # per-request SLO attainment (loadgen.results.Attainment): the share of requests that met every
    # target, the requests/s that did (goodput), and the targets in ms; None where the run had none
    slo_attainment: float | None = None
    goodput_per_s: float | None = None
    slo_ms: dict[str, float] | None = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _pcts(stats: Any) -> dict[str, float]:
    return {f"p{p * 100:g}": round(stats.percentiles.get(p, 0) / 1e6, 4) for p in PERCENTILES}


def point_of(outcome: RunOutcome, kind: str, value: float, ok: bool, verdict_lines: list[str], logs: str) -> Point:
    """A sweep point from one run's outcome: every figure from that run's own results."""
    r = outcome.result
    closed = kind == "concurrency"
    lines = [line for line in verdict_lines if line and not line.startswith("engine:")]
    first = lines[0] if lines else ""
    if first.endswith("checks failed:"):  # "INVALID: 2 checks failed:" then one "  - reason" each
        first = first.removesuffix(":") + ": " + "; ".join(
            line.strip().removeprefix("- ") for line in lines[1:] if line.startswith("  - ")
        )
    if closed:
        first = f"not an MLPerf scenario ({CLOSED_LOOP}, {int(value)} in flight); ran: {outcome.issue_stop_reason}"
        if outcome.warmup:  # its streams connected and warmed up before the timed part (sink.WarmUpSUT)
            first += f"; {outcome.warmup}"
        if outcome.errors:
            first += f"; {outcome.errors} error(s)"
    if r is None:
        return Point(kind, value, CLOSED_LOOP if closed else "Server", not closed, None if closed else False,
                     None if closed else False, first or "no performance result", 0.0, None, {}, None, None, 0, outcome.errors, 0.0,
                     round(outcome.wall_s, 3), logs, list(outcome.invalid_reasons))
    done_s = r.final_query_done_s
    tokens = r.use_token_latencies
    att = r.attainment
    return Point(
        kind=kind,
        value=value,
        scenario=CLOSED_LOOP if closed else "Server",
        mlperf=not closed,
        valid=None if closed else ok,
        meets_limits=None if closed else meets_limits(outcome),
        verdict=first,
        requests_per_s=r.requests_per_second,
        tokens_per_s=r.completed_tokens_per_second if tokens else None,
        latency_ms=_pcts(r.samples),
        ttft_ms=_pcts(r.ttft) if tokens else None,
        tpot_ms=_pcts(r.tpot) if tokens else None,
        samples=r.sample_count,
        errors=outcome.errors,
        duration_s=round(done_s, 4),
        wall_s=round(outcome.wall_s, 3),
        logs=logs,
        reasons=[] if closed or ok else list(outcome.invalid_reasons),
        limits_ms=None if closed else limits_of(outcome),
        slo_attainment=None if att is None else att.share,
        goodput_per_s=None if att is None else att.goodput_per_s,
        slo_ms=None if att is None else {k: v / 1e6 for k, v in att.targets_ns.items()},
    )


def limits_of(outcome: RunOutcome) -> dict[str, float] | None:
    """The Server bounds the run was judged against (its effective settings), in ms."""
    eff = outcome.effective
    if eff is None:
        return None
    if eff.use_token_latencies:
        return {"ttft": eff.server_ttft_latency / 1e6, "tpot": eff.server_tpot_latency / 1e6}
    return {"latency": eff.target_latency_ns / 1e6}


def meets_limits(outcome: RunOutcome) -> bool:
    """What load decides in a Server run: the latency bound (or the TTFT and TPOT bounds) met at the
    benchmark's percentile, in a run that completed without errors or failed samples. The run-length
    checks (min duration, min queries, early stopping's query count) are the run's, not the rate's."""
    r = outcome.result
    return bool(
        r is not None
        and r.perf_constraints_met
        and r.failed_samples == 0
        and not outcome.incomplete
        and outcome.errors == 0
    )


PointRunner = Callable[[str, float, Path], Point]  # (kind, value, folder) -> the point


def point_runner(
    request: RunRequest,
    progress: Callable[[], ProgressHooks | None] = lambda: None,
    *,
    early_stopping_extension: bool = True,
) -> PointRunner:
    """Runs one point through the run session (`app.session.RunSession`, proctor's engine) with
    `request`'s settings: a Server run at a rate, or a closed loop at a concurrency (the session's
    `RunRequest.concurrency`: SingleStream settings sized to end at --duration-ms), in the point's
    own folder, without audit.config or report. Each point builds its SUT afresh and closes it after.
    `early_stopping_extension` False: a Server run stops where the official LoadGen stops (goodput
    probes: the queries early stopping would add decide the run's length, not the rate). A SUT that
    raised ends the sweep (its RunError goes up)."""
    from proctor.app.session import RunSession

    def run_point(kind: str, value: float, outdir: Path) -> Point:
        closed = kind == "concurrency"
        point = dataclasses.replace(
            request,
            scenario=Scenario.SINGLE_STREAM if closed else Scenario.SERVER,
            mode=TestMode.PERFORMANCE_ONLY,
            target_qps=None if closed else value,
            concurrency=int(value) if closed else 0,
            early_stopping_extension=early_stopping_extension,
            slo=closed_loop_slo(request) if closed else request.slo,
            audit_conf=None,
            output_dir=outdir,
            report=False,
            fit=False,
            accuracy_script=None,
        )
        outdir.mkdir(parents=True, exist_ok=True)
        result = RunSession(point).execute(progress())
        if result.failure is not None:
            raise result.failure
        return point_of(result.outcome, kind, value, result.ok, result.verdict, outdir.name)

    return run_point


def closed_loop_slo(request: RunRequest) -> SLOTargets | None:
    """A closed loop's per-request targets: those given, the rest the benchmark's Server bounds (a
    SingleStream run has none of its own), so its points are judged as a Server point would be."""
    from proctor.app.session import build_settings
    from proctor.loadgen.results import SLOTargets

    mine = request.slo or SLOTargets(source="")
    try:
        server = build_settings(Scenario.SERVER, TestMode.PERFORMANCE_ONLY, request.model, request.user_conf).settings
    except ConfigError:
        return request.slo
    bounds: dict[str, int | None] = {"ttft_ns": None, "tpot_ns": None, "latency_ns": None}
    if server.use_token_latencies:
        bounds.update(ttft_ns=int(server.server_ttft_latency), tpot_ns=int(server.server_tpot_latency))
    elif server.server_target_latency_ns > 0:
        bounds["latency_ns"] = int(server.server_target_latency_ns)
    given = mine.given()
    targets = {k: given.get(k.removesuffix("_ns"), v) for k, v in bounds.items()}
    if not any(v is not None for v in targets.values()) and not given:
        return None
    targets.update({f"{k}_ns": v for k, v in given.items()})
    words = "the benchmark's Server bounds"
    source = f"{mine.source}; otherwise {words}" if given else words
    return SLOTargets(**targets, source=source)


def point_folder(kind: str, value: float, index: int | None = None) -> str:
    """`rate-8`, `concurrency-16`; goodput probes `probe-03-rate-11.31`."""
    name = f"{kind}-{value:g}"
    return name if index is None else f"probe-{index:02d}-{name}"


def run_sweep(
    kind: str, values: Sequence[float], outdir: Path, run_point: PointRunner,
    on_point: Callable[[Point], None] = lambda p: None,
    points: list[Point] | None = None,
) -> list[Point]:
    """Each value's point in turn, appended to `points` (a new list by default) as it ends, so a
    caller interrupted midway still holds the points that ended."""
    points = [] if points is None else points
    for value in values:
        point = run_point(kind, value, outdir / point_folder(kind, value))
        points.append(point)
        on_point(point)
    return points


# --- goodput ---------------------------------------------------------------------------------------


@record(slots=True)
class GoodputProbe:
    index: int
    stage: str  # "double", "halve" or "narrow"
    rate: float
    passed: bool
    why: str  # the verdict's first line
    wall_s: float


@record(slots=True)
class Goodput:
    found: bool  # False: no probed rate passed (then `lower` is 0)
    lower: float  # the highest passing offered rate (target QPS), not an achieved or SLO goodput rate
    upper: float  # the lowest failing rate above it (0: none failed up to max_rate)
    tolerance: float
    probes: list[GoodputProbe]
    wall_s: float
    stopped: str = ""  # why the search stopped before the tolerance ("" when it reached it)

    @property
    def reached(self) -> bool:
        return self.found and self.upper > 0 and self.upper / self.lower - 1 <= self.tolerance * (1 + 1e-9)

    def to_json(self) -> dict[str, Any]:
        return {
            "found": self.found,
            "highest_passing_qps": self.lower if self.found else None,
            "goodput_qps": self.lower if self.found else None,  # the same offered rate: its schema-1 name
            "bracket": [self.lower, self.upper if self.upper > 0 else None],
            "tolerance": self.tolerance,
            "tolerance_reached": self.reached,
            "stopped": self.stopped,
            "probes": [dataclasses.asdict(p) for p in self.probes],
            "wall_s": round(self.wall_s, 3),
        }


# a probe's answer: (passed, why), or (passed, why, strain) with strain the worst ratio of a measured
# latency percentile to its bound in a run that kept up with its rate (None: it did not, or unknown)
ProbeAnswer = tuple[bool, str] | tuple[bool, str, float | None]


def goodput_search(
    probe: Callable[[float, str], ProbeAnswer],
    start: float,
    tolerance: float = DEFAULT_TOLERANCE,
    *,
    max_rate: float = 1e9,
    min_rate: float = 1e-3,
    max_probes: int = MAX_PROBES,
    on_probe: Callable[[GoodputProbe], None] = lambda p: None,
) -> Goodput:
    """The highest passing rate to `tolerance`: from `start`, double while passing (or halve while
    failing) until the verdict changes, then probe the geometric middle of the bracket
    [lo (passes), hi (fails)] until hi / lo - 1 <= tolerance. `probe(rate, stage)` runs one full
    run and says (passed, why[, strain]). Each bound is a rate actually run; nothing is interpolated.
    Halving stops early where lowering the rate 4 times did not bring a kept-up run's latency down
    (`LOAD_DRIVEN`): the SUT is slower than the bound at any rate (or its host is busy)."""
    if not (math.isfinite(start) and start > 0):
        raise _bad("--target-qps", f"must be a finite number > 0 to search from, got {start}")
    if not (math.isfinite(tolerance) and MIN_TOLERANCE <= tolerance < 1):
        raise _bad("--tolerance", f"must be at least {MIN_TOLERANCE} and below 1 (0.02 = 2 %), got {tolerance:g}")
    t0 = time.perf_counter()
    probes: list[GoodputProbe] = []
    strains: list[float | None] = []

    def run(rate: float, stage: str) -> bool:
        rate = float(f"{rate:.6g}")  # the rate run, logged and reported: 6 significant digits
        t = time.perf_counter()
        answer = probe(rate, stage)
        passed, why = answer[0], answer[1]
        strains.append(answer[2] if len(answer) > 2 else None)
        p = GoodputProbe(len(probes), stage, rate, passed, why, round(time.perf_counter() - t, 3))
        probes.append(p)
        on_probe(p)
        return passed

    def not_load_driven() -> str:
        """Why halving further cannot pass ("" while it still may): the last probe and the one two
        halvings before it both kept up and both failed, and the latency's excess barely moved."""
        if len(probes) < 3 or probes[-3].passed:
            return ""
        now, before = strains[-1], strains[-3]
        if now is None or before is None or not (now > 1 and before > 1) or now - 1 <= LOAD_DRIVEN * (before - 1):
            return ""
        return (f"no rate down to {probes[-1].rate:g} passed: at {probes[-3].rate:g} and {probes[-1].rate:g} QPS the "
                f"SUT kept up and its latency stayed {before:.3g}x and {now:.3g}x its bound, so it does not come "
                "from the load: the SUT is slower than the bound at any rate, or its host is busy")

    def result(found: bool, lo: float, hi: float, stopped: str = "") -> Goodput:
        return Goodput(found, lo, hi, tolerance, probes, time.perf_counter() - t0, stopped)

    lo, hi = 0.0, 0.0
    if run(start, "double"):
        lo = probes[-1].rate
        while True:
            if len(probes) >= max_probes:
                return result(True, lo, 0.0, f"{max_probes} probes, every one passed")
            if lo * 2 > max_rate:
                return result(True, lo, 0.0, f"passed up to the highest rate allowed ({max_rate:g})")
            if not run(lo * 2, "double"):
                hi = probes[-1].rate
                break
            lo = probes[-1].rate
    else:
        hi = probes[-1].rate
        while True:
            if hi / 2 < min_rate or len(probes) >= max_probes:
                return result(False, 0.0, hi, f"no rate down to {hi:g} passed")
            if run(hi / 2, "halve"):
                lo = probes[-1].rate
                break
            hi = probes[-1].rate
            why = not_load_driven()
            if why:
                return result(False, 0.0, hi, why)
    while hi / lo - 1 > tolerance:
        if len(probes) >= max_probes:
            return result(True, lo, hi, f"stopped after {max_probes} probes")
        if run(math.sqrt(lo * hi), "narrow"):
            lo = probes[-1].rate
        else:
            hi = probes[-1].rate
    return result(True, lo, hi)


def goodput_runner(
    run_point: PointRunner, outdir: Path, points: list[Point]
) -> Callable[[float, str], ProbeAnswer]:
    """A `goodput_search` probe: one Server point per call (kept in `points`); it passes when the
    run meets the benchmark's limits (`meets_limits`); its full verdict goes with it."""

    def probe(rate: float, stage: str) -> ProbeAnswer:
        point = run_point("rate", rate, outdir / point_folder("rate", rate, len(points)))
        points.append(point)
        return bool(point.meets_limits), point.verdict, strain(point, rate)

    return probe


def strain(point: Point, rate: float) -> float | None:
    """The worst ratio of a point's p99 latency (or TTFT, TPOT) to its bound, where the run kept up
    with its rate (`KEPT_UP`); None otherwise: over capacity, latency grows with the run's length."""
    if not point.limits_ms or point.requests_per_s < KEPT_UP * rate:
        return None
    measured = {"latency": point.latency_ms, "ttft": point.ttft_ms, "tpot": point.tpot_ms}
    ratios = [
        pcts["p99"] / bound
        for name, bound in point.limits_ms.items()
        if bound > 0 and (pcts := measured.get(name)) and "p99" in pcts
    ]
    return max(ratios) if ratios else None


def passing_point(goodput: Goodput, points: Sequence[Point]) -> Point | None:
    """The run at the highest passing offered rate (None when no rate passed): its own figures say
    what that rate achieved."""
    if not goodput.found:
        return None
    return next((p for p in points if p.meets_limits and p.value == goodput.lower), None)


def search_json(goodput: Goodput, points: Sequence[Point]) -> dict[str, Any]:
    """sweep.json's `goodput` block: the search, and what its highest passing offered rate achieved
    (`achieved_requests_per_s`: that run's completed requests/s, the table's figure)."""
    best = passing_point(goodput, points)
    return {**goodput.to_json(), "achieved_requests_per_s": None if best is None else best.requests_per_s}


# --- the document ----------------------------------------------------------------------------------


def sweep_document(
    kind: str, points: Sequence[Point], request: RunRequest, goodput: Goodput | None = None
) -> dict[str, Any]:
    """sweep.json: what was run, each point, and the goodput search if there was one."""
    from proctor.version import __version__

    closed = kind == "concurrency"
    return {
        "schema": SCHEMA,
        "proctor": __version__,
        "kind": kind,
        "scenario": CLOSED_LOOP if closed else "Server",
        "mlperf": not closed,
        "note": (
            "closed loop with N requests in flight: not an MLPerf scenario; no point has an MLPerf verdict"
            if closed
            else "each point is an MLPerf Server run with its own verdict from its own logs"
        ),
        "sut": str(request.sut),
        "model": request.model,
        "duration_ms": request.duration_ms,
        "points": [p.to_json() for p in points],
        "goodput": None if goodput is None else search_json(goodput, points),
    }


def write_document(doc: dict[str, Any], outdir: Path) -> Path:
    outdir.mkdir(parents=True, exist_ok=True)
    path = outdir / "sweep.json"
    path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return path


# --- the points as one table (sweep.csv, sweep.parquet) ---------------------------------------------

_MEASURES = ("latency", "ttft", "tpot")
TABLE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("kind", "str"), ("value", "float"), ("scenario", "str"), ("mlperf", "bool"), ("valid", "bool"),
    ("meets_limits", "bool"), ("requests_per_s", "float"), ("tokens_per_s", "float"),
    *((f"{m}_{p}_ms", "float") for m in _MEASURES for p in ("p50", "p90", "p99")),
    *((f"{m}_limit_ms", "float") for m in _MEASURES),
    ("slo_attainment", "float"), ("goodput_per_s", "float"), *((f"{m}_slo_ms", "float") for m in _MEASURES),
    ("samples", "int"), ("errors", "int"), ("duration_s", "float"), ("wall_s", "float"), ("logs", "str"),
    ("verdict", "str"), ("reasons", "str"),
)


def table_rows(points: Sequence[Point]) -> list[list[Any]]:
    """The points as TABLE_COLUMNS' columns (one list per column): the figures of sweep.json, flat."""
    rows: list[list[Any]] = []
    for p in points:
        blocks = {"latency": p.latency_ms, "ttft": p.ttft_ms, "tpot": p.tpot_ms}
        rows.append([
            p.kind, p.value, p.scenario, p.mlperf, p.valid, p.meets_limits, p.requests_per_s, p.tokens_per_s,
            *((blocks[m] or {}).get(q) for m in _MEASURES for q in ("p50", "p90", "p99")),
            *((p.limits_ms or {}).get(m) for m in _MEASURES),
            p.slo_attainment, p.goodput_per_s, *((p.slo_ms or {}).get(m) for m in _MEASURES),
            p.samples, p.errors, p.duration_s, p.wall_s, p.logs, p.verdict, "; ".join(p.reasons),
        ])
    return [list(col) for col in zip(*rows, strict=True)] if rows else [[] for _ in TABLE_COLUMNS]


def write_tables(points: Sequence[Point], outdir: Path) -> tuple[list[Path], str]:
    """sweep.csv, and sweep.parquet where pyarrow is installed: (the files written, and the line that
    says why the Parquet one is not, or "")."""
    from proctor.column_files import write_table

    values = table_rows(points)
    written = [outdir / "sweep.csv"]
    write_table(written[0], TABLE_COLUMNS, values, key="sweep.csv")
    try:
        write_table(outdir / "sweep.parquet", TABLE_COLUMNS, values, key="sweep.parquet")
    except ConfigError as exc:
        return written, f"sweep.parquet not written: {exc}"
    written.append(outdir / "sweep.parquet")
    return written, ""


__all__ = [
    "CLOSED_LOOP",
    "DEFAULT_TOLERANCE",
    "SCHEMA",
    "TABLE_COLUMNS",
    "Goodput",
    "GoodputProbe",
    "Point",
    "ProbeAnswer",
    "goodput_runner",
    "goodput_search",
    "parse_concurrencies",
    "parse_values",
    "passing_point",
    "point_folder",
    "point_of",
    "point_runner",
    "run_sweep",
    "search_json",
    "sweep_document",
    "table_rows",
    "write_document",
    "write_tables",
]
