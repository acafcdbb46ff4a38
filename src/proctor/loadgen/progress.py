"""Progress of a run for people: hooks the engine calls between phases, and a rich live line.

Nothing here runs on the issue path: the live display polls the records arrays from its own
thread about four times a second, reading a bounded window of recent samples, so its cost does not
grow with the run.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from proctor.loadgen.records import NOT_SET, Records, Schedule

WINDOW = 20_000  # recent samples the running percentiles are computed over


class ProgressHooks:
    """The engine's progress callbacks; the base does nothing (`progress=None` means this)."""

    def on_phase(self, mode: Any, schedule: Schedule, records: Records, tracker: Any) -> None:
        """A phase (accuracy set or performance run) is about to start issuing."""

    def on_phase_end(self, mode: Any, records: Records) -> None:
        """Its issuing and waiting ended (normally or not)."""

    def on_probe(self, probe: Any) -> None:
        """FindPeakPerformance finished one probe (a find_peak.Probe)."""

    def on_end(self, outcome: Any) -> None:
        """The run ended and its logs are written."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    elapsed_s: float
    queries_issued: int
    samples_issued: int
    samples_completed: int
    qps: float  # completed samples per second so far
    latency_ms: dict[float, float]  # running percentiles over the recent window


def snapshot(schedule: Schedule, records: Records, completed: int, now_ns: int) -> Snapshot:
    """A cheap look at a run in progress (reads at most WINDOW samples)."""
    start = records.start_ns
    elapsed = max(now_ns - start, 0) / 1e9 if start else 0.0
    issued = records.n_samples_issued
    lo = max(0, issued - WINDOW)
    done = records.sample_done_ns[lo:issued]
    lat_ms: dict[float, float] = {}
    if done.size:
        queries = np.searchsorted(schedule.query_offsets, np.arange(lo, issued), side="right") - 1
        ok = done != NOT_SET
        if ok.any():
            lat = (done[ok] - records.query_scheduled_ns[queries[ok]]) / 1e6
            for p in (0.5, 0.9, 0.99):
                lat_ms[p] = float(np.quantile(lat, p))
    return Snapshot(
        elapsed,
        records.n_queries_issued,
        issued,
        completed,
        completed / elapsed if elapsed > 0 else 0.0,
        lat_ms,
    )


def format_snapshot(s: Snapshot, label: str) -> str:
    pct = "  ".join(f"p{int(p * 100)} {v:.3f} ms" for p, v in s.latency_ms.items())
    return (
        f"{label}  {s.elapsed_s:6.1f} s  queries {s.queries_issued}  samples {s.samples_issued} issued / "
        f"{s.samples_completed} done  {s.qps:,.0f}/s  {pct}"
    )


class LiveProgress(ProgressHooks):
    """A rich live line: elapsed time, issued/completed, throughput, running latency percentiles.

    When the console is not a terminal (a pipe, a file) nothing is drawn live: each phase prints one
    final line, newline-terminated, so nothing printed after it is glued to it."""

    def __init__(self, console: Any | None = None, interval_s: float = 0.25) -> None:
        from rich.console import Console

        self.console = console or Console(stderr=True)
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._live: Any = None
        self._final: tuple[Schedule, Records, Any, str] | None = None  # non-terminal: what to print at the end
        self.updates = 0

    def on_phase(self, mode: Any, schedule: Schedule, records: Records, tracker: Any) -> None:
        from rich.live import Live
        from rich.text import Text

        self._stop.clear()
        if not self.console.is_terminal:  # a pipe or a file: no live line, one final line per phase
            self._final = (schedule, records, tracker, str(mode))
            return
        self._live = Live(
            Text(f"{mode}: starting"), console=self.console, refresh_per_second=4, transient=False
        )
        self._live.start()
        label = str(mode)

        def loop() -> None:
            while not self._stop.wait(self.interval_s):
                snap = snapshot(schedule, records, tracker.completed_samples, time.perf_counter_ns())
                self._live.update(Text(format_snapshot(snap, label)))
                self.updates += 1
            snap = snapshot(
                schedule,
                records,
                tracker.completed_samples,
                records.end_ns if records.end_ns != NOT_SET else time.perf_counter_ns(),
            )
            self._live.update(Text(format_snapshot(snap, label)))

        self._thread = threading.Thread(target=loop, name="proctor-progress", daemon=True)
        self._thread.start()

    def on_phase_end(self, mode: Any, records: Records) -> None:
        if self._final is not None:
            schedule, recs, tracker, label = self._final
            self._final = None
            end = recs.end_ns if recs.end_ns != NOT_SET else time.perf_counter_ns()
            snap = snapshot(schedule, recs, tracker.completed_samples, end)
            self.console.print(format_snapshot(snap, label), markup=False, highlight=False, soft_wrap=True)
            return
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None
        if self._live is not None:
            self._live.stop()
            self._live = None
