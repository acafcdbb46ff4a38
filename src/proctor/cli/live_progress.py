"""The live progress line of `proctor run` and `proctor sweep`: the engine's progress events drawn.

The engine emits events (`loadgen.progress.ProgressHooks`); `LiveProgress` draws them. It polls the
phase's records from its own thread (four times a second on a terminal) through
`loadgen.progress.snapshot`, a bounded window of recent samples, so its cost does not grow with the
run. The line says what is done of the total and when the phase should end (ETA) and, for a
performance run, its elapsed time against the expected length said before it started
(loadgen.expected), and for runs with token latencies TTFT/TPOT percentiles and tokens/s so far.
Without a terminal (a pipe, a file, CI) it prints one plain line every `PLAIN_INTERVAL_S` instead,
and a final line per phase.
"""

from __future__ import annotations

import dataclasses
import math
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from proctor.loadgen.progress import (
    CLOSED_LOOP_SCENARIOS,
    Plan,
    ProgressHooks,
    Snapshot,
    TokenTally,
    snapshot,
)
from proctor.loadgen.records import NOT_SET, Records, Schedule
from proctor.typed_records import record

PLAIN_INTERVAL_S = 10.0  # without a terminal: one progress line this often
PLAIN_INTERVAL_ENV = "PROCTOR_PROGRESS_INTERVAL_S"  # overrides it (tests, CI logs that want more or fewer)


def default_plain_interval_s() -> float:
    """PLAIN_INTERVAL_S, or the environment's override when it is a number > 0."""
    try:
        value = float(os.environ.get(PLAIN_INTERVAL_ENV, ""))
    except ValueError:
        return PLAIN_INTERVAL_S
    return value if math.isfinite(value) and value > 0 else PLAIN_INTERVAL_S


def _eta_text(seconds: float) -> str:
    if seconds >= 3600:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"
    if seconds >= 60:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{seconds:.0f} s"


def format_snapshot(s: Snapshot, label: str) -> str:
    pct = "  ".join(f"p{int(p * 100)} {v:.3f} ms" for p, v in s.latency_ms.items())
    of = f" of {s.total_samples:,}" if s.total_samples is not None else ""
    if s.eta_s is None:
        eta = ""
    elif s.eta_s == math.inf:
        eta = "  ETA unknown until a query completes"
    else:
        eta = f"  ETA {_eta_text(s.eta_s)}"
    if s.waiting_s > 0:  # an ETA from a rate that is not moving only grows: say what is happening
        eta = f"  waiting for the SUT: nothing completed in {_eta_text(s.waiting_s)}"
    expected = ""
    if s.expected_s is not None:
        sign = ">=" if s.expected_at_least else "" if s.expected_exact else "~"
        # under 10 s whole seconds say too little (a 0.5 s bound read ">=0 s")
        length = f"{s.expected_s:.1f} s" if s.expected_s < 10 else _eta_text(s.expected_s)
        expected = f" / {sign}{length}"
    line = (
        f"{label}  {s.elapsed_s:6.1f} s{expected}  queries {s.queries_issued}  samples {s.samples_issued} issued / "
        f"{s.samples_completed} done{of}{eta}  {s.qps:,.0f}/s  {pct}"
    )
    if s.ttft_ms:
        line += "  TTFT " + " / ".join(f"p{int(p * 100)} {v:.1f}" for p, v in s.ttft_ms.items()) + " ms"
    if s.tpot_ms:
        line += "  TPOT " + " / ".join(f"p{int(p * 100)} {v:.2f}" for p, v in s.tpot_ms.items()) + " ms"
    if s.tokens_per_s is not None:
        line += f"  {s.tokens_per_s:,.0f} tok/s"
    return line


@record(slots=True)
class SetTally:
    """A run issued over several loaded sets (`on_sets`): what the sets before this one did, so each
    line counts the whole run's queries and samples of its total, not one set's."""

    mode: str
    sizes: list[int]
    index: int = -1  # the set in progress
    queries: int = 0
    issued: int = 0
    done: int = 0
    elapsed_s: float = 0.0

    def label(self) -> str:
        return f"{self.mode} set {self.index + 1}/{len(self.sizes)}"

    def whole(self, s: Snapshot) -> Snapshot:
        """The set's snapshot as the run's: the earlier sets' counts added, of all the sets' samples."""
        elapsed = self.elapsed_s + s.elapsed_s
        done = self.done + s.samples_completed
        total = sum(self.sizes)
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = None if s.eta_s is None else ((total - done) / rate if rate > 0 else None)
        return dataclasses.replace(
            s, elapsed_s=elapsed, queries_issued=self.queries + s.queries_issued,
            samples_issued=self.issued + s.samples_issued, samples_completed=done, qps=rate,
            total_samples=total, eta_s=eta,
        )

    def add(self, s: Snapshot) -> None:
        """A set ended with snapshot `s` (its own counts)."""
        self.queries += s.queries_issued
        self.issued += s.samples_issued
        self.done += s.samples_completed
        self.elapsed_s += s.elapsed_s


class LiveProgress(ProgressHooks):
    """A live line on a terminal: elapsed time, done of total, ETA, throughput, running latency
    percentiles (and for token runs TTFT/TPOT and tokens/s so far).

    When the console is not a terminal (a pipe, a file) nothing is drawn live: a plain line every
    `plain_interval_s` (default `default_plain_interval_s()`: 10 s) and one final line per phase, each
    newline-terminated, so nothing printed after it is glued to it. A notice (`on_notice`: a SUT
    fault, a stall) is printed at once either way, as a `warning:` line of its own."""

    def __init__(
        self, console: Any | None = None, interval_s: float = 0.25, plain_interval_s: float | None = None
    ) -> None:
        from proctor.cli import output

        self.console = console or output.console(stderr=True)
        self.interval_s = interval_s
        self.plain_interval_s = plain_interval_s if plain_interval_s is not None else default_plain_interval_s()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._live: Any = None
        self._phase: tuple[Schedule, Records, Any, str] | None = None
        self._effective: Any = None
        self._plan = Plan()
        self._tally = TokenTally()
        self._sets: SetTally | None = None  # a run over several loaded sets (accuracy)
        self._expected: Any = None  # the coming performance phase's expected length (on_expected)
        self.updates = 0
        self._notices: list[str] = []
        self._notice_lock = threading.Lock()
        self._wake = threading.Event()  # a notice came: print it now, not at the next tick

    def on_notice(self, line: str) -> None:
        with self._notice_lock:
            self._notices.append(line)
        self._wake.set()

    def _flush_notices(self) -> None:
        with self._notice_lock:
            lines, self._notices = self._notices, []
        for line in lines:
            self.console.print(f"warning: {line}", markup=False, highlight=False, soft_wrap=True)

    def _tick(self, timeout_s: float) -> bool:
        """Wait up to `timeout_s` or until a notice comes (printed then); False once stopped."""
        self._wake.wait(timeout_s)
        self._wake.clear()
        self._flush_notices()
        return not self._stop.is_set()

    def on_end(self, outcome: Any) -> None:
        self._flush_notices()  # the run's end: the count lines, a fault said after the last phase
        self._sets = None

    def on_sets(self, mode: Any, samples: Sequence[int]) -> None:
        self._sets = SetTally(str(mode), [int(n) for n in samples]) if len(samples) > 1 else None

    def on_settings(self, effective: Any) -> None:
        self._effective = effective

    def on_expected(self, expected: Any) -> None:
        """Say how long the run will last and why, before it starts."""
        self._expected = expected
        self.console.print(expected.text, markup=False, highlight=False, soft_wrap=True)

    def _look(self, now_ns: int | None = None, *, final: bool = False) -> str:
        assert self._phase is not None
        schedule, records, tracker, label = self._phase
        if now_ns is None:
            now_ns = time.perf_counter_ns()
        snap = snapshot(
            schedule, records, tracker.completed_samples, now_ns, plan=self._plan, tally=self._tally,
            waiting_s=0.0 if final else float(getattr(tracker, "waiting_s", 0.0)),
        )
        if self._expected is not None and label == "PerformanceOnly":
            snap = dataclasses.replace(snap, expected_s=self._expected.seconds,
                                       expected_exact=bool(self._expected.exact),
                                       expected_at_least=bool(self._expected.at_least))
        if final:  # the phase ended: no time left to estimate; past the official queries (an
            # early-stopping extension, which stops when it can), or where the total was only an
            # estimate from the rate (a closed loop ends at its bounds), the total is what was issued
            nominal = schedule.nominal_queries
            past = 0 < nominal < schedule.n_queries and records.n_queries_issued > nominal
            past = past or (self._plan.performance and self._plan.scenario in CLOSED_LOOP_SCENARIOS)
            snap = dataclasses.replace(
                snap, eta_s=None, total_samples=snap.samples_issued if past else snap.total_samples
            )
        sets = self._sets
        if sets is not None and sets.mode == label:
            whole = sets.whole(snap)
            if final:
                sets.add(snap)
            return format_snapshot(whole, sets.label())
        return format_snapshot(snap, label)

    def on_phase(self, mode: Any, schedule: Schedule, records: Records, tracker: Any) -> None:
        from rich.live import Live
        from rich.text import Text

        self._stop.clear()
        self._phase = (schedule, records, tracker, str(mode))
        if self._sets is not None and self._sets.mode == str(mode):
            self._sets.index += 1
        self._plan = Plan.of(self._effective, mode)
        if str(mode) != "PerformanceOnly":
            self._expected = None
        self._tally = TokenTally()
        if not self.console.is_terminal:  # a pipe or a file: a plain line now and then
            self._thread = threading.Thread(target=self._plain_loop, name="proctor-progress", daemon=True)
            self._thread.start()
            return
        self._live = Live(
            Text(f"{mode}: starting"), console=self.console, refresh_per_second=4, transient=False
        )
        self._live.start()

        def loop() -> None:
            next_at = time.monotonic() + self.interval_s
            while self._tick(max(next_at - time.monotonic(), 0.0)):
                if time.monotonic() >= next_at:
                    next_at = time.monotonic() + self.interval_s
                    self._live.update(Text(self._look()))
                    self.updates += 1

        self._thread = threading.Thread(target=loop, name="proctor-progress", daemon=True)
        self._thread.start()

    def _plain_loop(self) -> None:
        next_at = time.monotonic() + self.plain_interval_s
        while self._tick(max(next_at - time.monotonic(), 0.0)):
            if time.monotonic() >= next_at:
                next_at = time.monotonic() + self.plain_interval_s
                self.console.print(self._look(), markup=False, highlight=False, soft_wrap=True)
                self.updates += 1

    def on_phase_end(self, mode: Any, records: Records) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None
        self._flush_notices()
        if self._phase is None:
            return
        end = records.end_ns if records.end_ns != NOT_SET else time.perf_counter_ns()
        final = self._look(end, final=True)
        self._phase = None
        if self._live is not None:
            from rich.text import Text

            self._live.update(Text(final))
            self._live.stop()
            self._live = None
        else:
            self.console.print(final, markup=False, highlight=False, soft_wrap=True)
