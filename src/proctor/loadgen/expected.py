"""How long a run will last and why, said before it starts, from its settings and its schedule.

A run asked for 20 s can last twice that, by the rules: the LLM benchmarks issue equally
(`sample_concatenate_permutation`), which rounds the query count up to whole passes over the loaded
samples; min_query_count may ask more queries than min_duration gives; a Server run's 99th
percentile early-stopping estimate needs 459 queries even with none over latency (proctor issues
them: the rules' procedure, `early_stopping_extension`). The schedule is generated before the clock
starts, so the length of a Server run is known exactly (up to the last query's latency); a
SingleStream, MultiStream or Offline run's length depends on the SUT, and is given for the rate the
settings expect. Each cause that made the run longer than `min_duration` is named with its number.
"""

from __future__ import annotations

import numpy as np

from proctor.loadgen.option_names import NO_LABELS, OptionNames, scenario_field
from proctor.loadgen.records import Schedule
from proctor.loadgen.scenarios import Scenario, TestMode
from proctor.loadgen.settings import EffectiveSettings
from proctor.typed_records import field, record

_OFFLINE_SLACK = 1.1  # as normalize: Offline generates 10% more samples than min duration needs


@record(frozen=True, slots=True)
class Expected:
    """A phase's expected length: `seconds` (None: it depends on the SUT alone), the queries and
    samples it issues, and why, each cause with its number (`why[0]` the one that decides)."""

    seconds: float | None
    queries: int
    samples: int
    why: list[str] = field(default_factory=list)
    exact: bool = False  # the schedule fixes the length (Server), up to the last query's latency
    # the shortest it may be, where the length depends on the SUT (a Server run's early-stopping
    # procedure stops sooner when no query is in flight); None: `seconds` alone
    low_seconds: float | None = None
    low_queries: int | None = None
    # the length is a lower bound, not an estimate (a closed loop: it ends once both min_duration and
    # min_query_count are met, at the SUT's own pace): "at least" in the text, ">=" in the progress line
    at_least: bool = False
    # what the SUT did to get ready before the clock (sink.WarmUpSUT's line, "warm-up: 16 requests in
    # 2.21 s ..., not timed"): not part of the length, but part of the wait, so said with it
    warmup: str = ""

    @property
    def text(self) -> str:
        """`expected length: ~49 s (1,024 queries): why; why`."""
        if self.seconds is None:
            head = f"expected: {self.samples:,} samples, as fast as the SUT answers"
        elif self.at_least:
            head = (f"expected length: at least {_secs(self.seconds)} and {self.queries:,} "
                    f"{'query' if self.queries == 1 else 'queries'}")
        else:
            counts = f"{self.queries:,} {'query' if self.queries == 1 else 'queries'}"
            length = _secs(self.seconds)
            if self.low_queries is not None and self.low_seconds is not None and self.low_queries < self.queries:
                counts = f"{self.low_queries:,}-{counts}"
                low = _secs(self.low_seconds)
                length = f"{low.removesuffix(' s')}-{length}" if low.endswith(" s") and length.endswith(" s") \
                    else f"{low} to {length}"
            if self.samples != self.queries:
                counts += f", {self.samples:,} samples"
            head = f"expected length: {'' if self.exact else '~'}{length} ({counts})"
        why = self.why + ([f"before it, not in it: {self.warmup}"] if self.warmup else [])
        return head + (": " + "; ".join(why) if why else "")


def _secs(s: float) -> str:
    if s >= 3600:
        return f"{s / 3600:.1f} h"
    if s >= 120:
        return f"{s / 60:.1f} min"
    return f"{s:.3g} s" if s < 10 else f"{s:.0f} s"


def _first_at_or_after(schedule: Schedule, t_ns: int, upto: int) -> int:
    """How many of the first `upto` queries are scheduled before `t_ns`."""
    return int(np.searchsorted(schedule.scheduled_ns[:upto], t_ns, side="left"))


def expected_length(eff: EffectiveSettings, schedule: Schedule, mode: TestMode | str, n_loaded: int,
                    concurrency: int = 0, names: OptionNames = NO_LABELS) -> Expected:
    """The expected length of one phase of `eff` with `schedule` over `n_loaded` loaded samples;
    `concurrency` N > 0: a closed loop keeping N queries in flight (`proctor sweep --concurrency`).
    The options a cause names are named as `names` says (the caller's labels, else the settings)."""
    mode = TestMode(mode)
    nq, ns = schedule.n_queries, schedule.n_samples
    if mode is TestMode.ACCURACY_ONLY:
        return Expected(None, nq, ns, [f"every loaded sample once ({n_loaded:,})"])
    if concurrency > 0:
        return _closed_loop(eff, nq, concurrency)
    scenario = eff.scenario
    min_s = eff.min_duration_ms / 1000.0
    rate = float(eff.target_qps)
    equal = bool(eff.sample_concatenate_permutation)
    if scenario is Scenario.SERVER:
        return _server(eff, schedule, min_s, rate, equal, n_loaded, names)
    if scenario is Scenario.OFFLINE:
        return _offline(eff, ns, min_s, rate, equal, n_loaded, names)
    return _stream(eff, nq, ns, min_s, rate, equal, names)


def _server(eff: EffectiveSettings, schedule: Schedule, min_s: float, rate: float, equal: bool,
            n_loaded: int, names: OptionNames) -> Expected:
    from proctor.loadgen import early_stopping as es  # scipy: loaded when a run first asks

    nominal = schedule.nominal_queries
    total = schedule.n_queries
    by_time = min(_first_at_or_after(schedule, eff.min_duration_ms * 1_000_000, nominal) + 1, nominal)
    why = [f"min_duration {_secs(min_s)} at {rate:g} QPS gives {by_time:,} queries"]
    mq = int(eff.min_query_count)
    if mq > by_time:
        why.append(f"min_query_count asks {mq:,}")
    if nominal > max(by_time, mq):
        why.append(f"rounded up to {nominal:,}, whole passes over the {n_loaded:,} loaded samples "
                   "(equal issue: sample_concatenate_permutation)" if equal else f"the schedule holds {nominal:,}")
    queries = nominal
    low: int | None = None
    pct = float(eff.target_latency_percentile)
    need = es.server_required_queries(0, pct)
    if total > nominal and need > nominal:  # the rules' early-stopping procedure issues more
        # it stops once the estimate holds even if every query still in flight ends over latency:
        # with one in flight at each issue (any SUT that takes time), that is the count for one
        open_need = es.server_required_queries(1, pct)
        low, queries = min(need, total), min(open_need, total)
        fewer = (f"{names.name('min_query_count', 'min_query_count')} {need} or a longer "
                 f"{names.name('min_duration_ms', 'min_duration')}")
        why.append(f"a {pct * 100:g}th percentile early-stopping estimate needs {need:,} queries with none over "
                   f"latency, {open_need:,} while one is still in flight (counted as over): proctor issues them "
                   f"(the rules' early-stopping procedure), at most {total - nominal:,} more"
                   + (f": {total:,} in all are too few, the run will be INVALID ({fewer})" if total < need else ""))
    elif need > nominal:
        why.append(f"a {pct * 100:g}th percentile early-stopping estimate needs {need:,} queries even with none "
                   "over latency: fewer make the run INVALID")
    def at(n: int) -> float:
        return float(schedule.scheduled_ns[n - 1]) / 1e9 if n else 0.0

    seconds = at(queries)
    low_seconds = None if low is None else at(low)
    if eff.max_duration_ms and seconds > eff.max_duration_ms / 1000.0:
        seconds = eff.max_duration_ms / 1000.0
        low_seconds = None if low_seconds is None else min(low_seconds, seconds)
        why.append(f"max_duration stops it at {_secs(seconds)}")
    if len(why) == 1:
        why[0] = f"min_duration {_secs(min_s)} at {rate:g} QPS"
    return Expected(seconds, queries, int(schedule.query_offsets[queries]), why, exact=low is None,
                    low_seconds=low_seconds, low_queries=low)


def _offline(eff: EffectiveSettings, ns: int, min_s: float, rate: float, equal: bool, n_loaded: int,
             names: OptionNames) -> Expected:
    by_time = int(_OFFLINE_SLACK * min_s * rate)
    mq = int(eff.requested.min_query_count) if eff.requested is not None else 0
    why = [f"min_duration {_secs(min_s)} x {rate:g} samples/s x {_OFFLINE_SLACK:g} = {by_time:,} samples"]
    if mq > by_time:
        why.append(f"min_query_count asks {mq:,} samples")
    if ns > max(by_time, mq) and equal:
        why.append(f"rounded up to {ns:,}, whole passes over the {n_loaded:,} loaded samples (equal issue)")
    why.append(f"at the {rate:g} samples/s the settings expect ({names.name('target_qps', 'offline_expected_qps')}); "
               "the SUT's own speed decides")
    return Expected(ns / rate if rate > 0 else None, 1, ns, why)


def _closed_loop(eff: EffectiveSettings, nq: int, n: int) -> Expected:
    """A closed loop ends once both min_duration and min_query_count are met, each next query issued
    as one ends: its length is the SUT's latency x min_query_count / N, or min_duration if that is
    longer. Nothing before the run knows that latency (the expected latency is a setting, not the
    SUT's), so the length said is the bound the settings fix."""
    min_s = eff.min_duration_ms / 1000.0
    mq = min(max(int(eff.min_query_count), 1), nq) if nq else max(int(eff.min_query_count), 1)
    why = [f"a closed loop with {n:,} in flight ends once both min_duration {_secs(min_s)} and min_query_count "
           f"{mq:,} are met, whichever comes later: {mq:,} queries take the SUT's latency x {mq:,} / {n:,}, "
           "which no setting knows before the run (the progress line shows how far it is)"]
    if eff.max_duration_ms:
        why.append(f"max_duration stops it at {_secs(eff.max_duration_ms / 1000.0)}")
    spq = max(int(eff.samples_per_query), 1)
    return Expected(min_s, mq, mq * spq, why, at_least=True)


def _stream(eff: EffectiveSettings, nq: int, ns: int, min_s: float, rate: float, equal: bool,
            names: OptionNames) -> Expected:
    from proctor.loadgen import early_stopping as es

    latency_s = 1.0 / rate if rate > 0 else 0.0
    mq = int(eff.min_query_count)
    asked = int(eff.requested.min_query_count) if eff.requested is not None else mq
    by_time = int(min_s / latency_s) if latency_s > 0 else 0
    queries = max(mq, by_time)
    seconds = max(min_s, mq * latency_s)
    why = [f"min_duration {_secs(min_s)}"]
    if mq * latency_s > min_s:
        why = [f"min_query_count {mq:,} queries one after another at {latency_s * 1e3:g} ms each"]
    if mq > asked and equal:
        why.append(f"min_query_count {asked:,} rounded up to {mq:,}: at least twice min_duration x the expected "
                   "rate, then whole passes over the loaded samples (equal issue: sample_concatenate_permutation)")
    latency = names.name("expected_latency_ms", scenario_field("expected_latency_ms", eff.scenario) or "expected latency")
    why.append(f"at the {latency_s * 1e3:g} ms per query the settings expect ({latency}); the SUT's own latency decides")
    need = es.min_queries(float(eff.target_latency_percentile))
    if queries < need:
        why.append(f"a {eff.target_latency_percentile * 100:g}th percentile early-stopping estimate needs {need:,} "
                   "queries: fewer make the run INVALID")
    spq = max(int(eff.samples_per_query), 1)
    return Expected(seconds, min(queries, nq), min(queries, nq) * spq, why)


__all__ = ["Expected", "expected_length"]
