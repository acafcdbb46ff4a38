"""Server FindPeakPerformance: the official search for the highest target QPS that meets the latency bound.

Official algorithm (loadgen.cc FindPeakPerformanceMode, FindBoundaries, FindPeakPerformanceBinarySearch;
test_settings_internal.h find_peak_performance; docs/deviations.md, "Compat API, ... FindPeakPerformance"):
1. run at server_target_qps; if its performance constraints fail, log an error and report that run;
2. widen: u = l * (1 + server_find_peak_qps_boundary_step_size), run; while it passes, l = u, repeat;
3. bisect: m = l + (u - l) / 2, run; pass -> l = m, fail -> u = m; stop once
   floor(l * 10^p) + 1 >= floor(u * 10^p) (p = server_find_peak_qps_decimals_of_precision);
4. the final report is l's run. "Pass" is PerfConstraintsMet only (not min duration, min queries or
   early stopping), each probe is a full performance run.

The search is pure: it gets a `run(qps, stage)` callable, so tests drive it with a fake system and
the engine with real runs. Messages are the official detail-log texts, plus one line per probe with
its verdict (proctor's addition, so a reader sees every probe without the trace).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Generic, TypeVar

from proctor.errors import ConfigError
from proctor.typed_records import field, record

T = TypeVar("T")

NOT_SUPPORTED = (
    "Finding peak performance is only supported in MultiStream, MultiStreamFree, and Server scenarios."
)
MAX_PROBES = 200  # a guard: with step > 0 and finite precision the search ends far sooner


def field_text(qps: float) -> str:
    """The official ToStringPerformanceField for Server: std::to_string(double), i.e. %f."""
    return f"{qps:f}"


def widen(qps: float, step: float) -> float:
    return qps * (1 + step)


def mid(lower: float, upper: float) -> float:
    return lower + (upper - lower) / 2


def is_finished(lower: float, upper: float, decimals: int) -> bool:
    scale = math.pow(10, decimals)
    return math.floor(lower * scale) + 1 >= math.floor(upper * scale)


@record(frozen=True, slots=True)
class Probe:
    index: int  # 0 = the base run
    stage: str  # "base", "boundary" or "bisect"
    target_qps: float
    passed: bool
    detail: str = ""  # why it failed, or a short latency note


@record(slots=True)
class PeakSearch(Generic[T]):
    peak_qps: float  # the reported run's target QPS (the base one if it failed)
    found: bool  # False when the base run already failed its constraints
    result: T  # what `run` returned for the reported run
    lower_qps: float = 0.0
    upper_qps: float = 0.0  # the lowest failing rate seen (0 if none)
    probes: list[Probe] = field(default_factory=list)


RunProbe = Callable[[float, str], tuple[bool, str, T]]  # (qps, stage) -> (passed, detail, payload)


def search(
    run: RunProbe[T],
    start_qps: float,
    step: float,
    decimals: int,
    *,
    log: Callable[[str], None] = lambda message: None,
    error: Callable[[str], None] | None = None,
    on_probe: Callable[[Probe], None] | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    max_probes: int = MAX_PROBES,
    max_qps: float = math.inf,
) -> PeakSearch[T]:
    """The official search; `log`/`error` get the official detail-log messages. No probe asks more
    than `max_qps` (the rate whose schedule still fits the machine: the official has no such cap)."""
    if not start_qps > 0:
        raise ConfigError(f"must be > 0 to search from, got {start_qps}", key="server_target_qps")
    if not step > 0:
        raise ConfigError(
            f"must be > 0 or the search never widens, got {step}",
            key="server_find_peak_qps_boundary_step_size",
        )
    probes: list[Probe] = []

    def probe(qps: float, stage: str) -> tuple[bool, T]:
        passed, detail, payload = run(qps, stage)
        p = Probe(len(probes), stage, qps, passed, detail)
        probes.append(p)
        log(
            f"FindPeakPerformance: probe {p.index} ({stage}) target_qps {field_text(qps)}: "
            f"{'performance constraints met' if passed else 'performance constraints NOT met'}"
            + (f" ({detail})" if detail else "")
        )
        if on_probe is not None:
            on_probe(p)
        return passed, payload

    log("FindPeakPerformance: Check validity of the base settings field: " + field_text(start_qps))
    ok, lower_payload = probe(start_qps, "base")
    if not ok:
        (error or log)(
            "FindPeakPerformance: Initial lower bound does not satisfy performance constraints, msg: "
            + probes[-1].detail
        )
        return PeakSearch(start_qps, False, lower_payload, start_qps, 0.0, probes)
    lower = start_qps
    upper = 0.0
    while len(probes) < max_probes and not should_stop():
        upper = min(widen(lower, step), max_qps)
        if not upper > lower:  # the cap: the last passing rate is the peak this machine can schedule
            log(f"FindBoundaries: {field_text(lower)} is the highest rate this machine can schedule")
            break
        log(f"FindBoundaries: Checking fields [{field_text(lower)}, {field_text(upper)})")
        ok, payload = probe(upper, "boundary")
        if not ok:
            break
        lower, lower_payload = upper, payload
    log(f"FindPeakPerformance: Found boundaries: [{field_text(lower)}, {field_text(upper)})")
    while not is_finished(lower, upper, decimals) and len(probes) < max_probes and not should_stop():
        m = mid(lower, upper)
        log(
            f"FindPeakPerformanceBinarySearch: Testing the mid value of bounds [{field_text(lower)}, "
            f"{field_text(upper)}): {field_text(m)}"
        )
        ok, payload = probe(m, "bisect")
        if ok:
            lower, lower_payload = m, payload
        else:
            upper = m
    log("FindPeakPerformance: Found peak performance field: " + field_text(lower))
    return PeakSearch(lower, True, lower_payload, lower, upper, probes)


__all__ = ["NOT_SUPPORTED", "PeakSearch", "Probe", "field_text", "is_finished", "mid", "search", "widen"]
