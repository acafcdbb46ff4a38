"""Server early stopping as the rules state the procedure, step 4 included.

MLPerf Inference rules, appendix "Early stopping", "Early Stopping Criterion" (server scenario):
1. when the minimum run duration is met, q queries were processed, t of them over latency;
2. compute the minimum total query count n for t; 3. q >= n: the run is successful;
4. otherwise run n - q more queries and go back to step 2.

The official LoadGen stops at step 3 and reports the shortfall; proctor's engine keeps issuing the
same seeded schedule, drawn on past the official queries (schedule.generate_schedule's
`extra_queries`), at the same rate, until the criterion holds or a bound is reached
(docs/deviations.md, "Issue 21"). The bound: max_duration and max_query_count when set, and never
more than EXTENSION_MAX_QUERIES or as many queries again as the official schedule has, so a SUT that
is always over latency ends.

While queries are in flight their latency is not known. At the end of the official schedule the
extension starts only when the queries known to be over latency (completed over the bound, or still
outstanding past it) already need more queries, so a run that passes today runs exactly as before.
Once extending, issuing stops only when the criterion holds even if every query still in flight
ends over latency: the final check (results.summarize, on every completed query) then holds too.
"""

from __future__ import annotations

import numpy as np

from proctor.loadgen.records import NOT_SET, Records
from proctor.loadgen.scenarios import Scenario, TestMode
from proctor.loadgen.settings import EffectiveSettings
from proctor.typed_records import record

EXTENSION_MAX_QUERIES = 1 << 20  # proctor's bound on the queries added after the official ones
EXTENSION_SOURCE = "MLPerf Inference rules, appendix Early stopping, Early Stopping Criterion, step 4"
# Stop reasons the watcher gives (Records.extension_stop); the issuer's own limits keep theirs.
MET_AT_SCHEDULE_END = "met_at_schedule_end"  # the official queries were enough: no extension
MET = "met"  # the criterion holds after extra queries
BOUND = "bound"  # proctor's bound (EXTENSION_MAX_QUERIES, or the official count again) was reached
WINDOW_EVERY = 4096  # past this many unresolved queries, check once per WINDOW_EVERY // 64 issues


def extension_queries(eff: EffectiveSettings, nominal: int, mode: TestMode) -> int:
    """How many queries to draw past the official `nominal` ones (0: no extension for this run)."""
    if (
        eff.scenario != Scenario.SERVER
        or mode != TestMode.PERFORMANCE_ONLY
        or eff.samples_per_query != 1
        or eff.performance_issue_unique
    ):
        return 0
    extra = min(int(nominal), EXTENSION_MAX_QUERIES)
    if eff.max_query_count:
        extra = min(extra, max(int(eff.max_query_count) - int(nominal), 0))
    return max(extra, 0)


@record(slots=True)
class _Count:
    """Over-latency queries of one measure: those resolved before the cursor, and the target."""

    target_ns: int
    resolved_late: int = 0


class ExtensionWatch:
    """Decides, after each issue past the official queries, whether the procedure needs more.

    `check(q, now)` is called with q queries issued; it returns a stop reason (MET_AT_SCHEDULE_END,
    MET) or None to keep issuing. Work per call is over the queries still unresolved (a cursor
    moves past completed ones), not the whole run.
    """

    def __init__(self, eff: EffectiveSettings, records: Records, nominal: int) -> None:
        self.records = records
        self.nominal = int(nominal)
        self.percentile = float(eff.target_latency_percentile)
        self.tokens = bool(eff.use_token_latencies)
        if self.tokens:
            self.counts = [_Count(int(eff.server_ttft_latency)), _Count(int(eff.server_tpot_latency))]
        else:
            self.counts = [_Count(int(eff.target_latency_ns))]
        self.cursor = 0
        self.extending = False
        self.needed_at_schedule_end = 0  # n for the queries known over latency at the schedule's end
        self._skip = 0

    def _required(self, t: int) -> int:
        from proctor.loadgen import early_stopping as es  # scipy: loaded when a run first asks, not at start

        return es.server_required_queries(t, self.percentile)

    def _window(self, q: int, now_ns: int) -> tuple[int, int]:
        """(known over latency, known + unresolved) over all q issued queries, each the largest over
        the measures (latency; or TTFT and TPOT); moves the cursor past the completed prefix."""
        rec, a = self.records, self.cursor
        done = rec.sample_done_ns[a:q]
        sched = rec.query_scheduled_ns[a:q]
        finished = done != NOT_SET
        age = now_ns - sched
        late_known: list[np.ndarray] = []
        unresolved: list[np.ndarray] = []
        if not self.tokens:
            target = self.counts[0].target_ns
            late = (finished & (done - sched > target)) | (~finished & (age > target))
            late_known.append(late)
            unresolved.append(~finished & ~late)
        else:
            first = rec.sample_first_token_ns[a:q]
            has_first = first != NOT_SET
            ttft_t, tpot_t = self.counts[0].target_ns, self.counts[1].target_ns
            ttft = first - sched
            late_ttft = (has_first & (ttft > ttft_t)) | (~has_first & (age > ttft_t))
            late_known.append(late_ttft)
            unresolved.append(~has_first & ~late_ttft)
            per = np.maximum(rec.sample_n_tokens[a:q] - 1, 1)
            tpot = (done - first) // per
            complete = finished & has_first
            late_known.append(complete & (tpot > tpot_t))
            unresolved.append(~complete)
        # the cursor passes queries that completed: their counts are final
        pending = np.flatnonzero(~finished)
        step = int(pending[0]) if pending.shape[0] else q - a
        known = worst = 0
        for count, late, open_ in zip(self.counts, late_known, unresolved, strict=True):
            count.resolved_late += int(np.count_nonzero(late[:step]))
            k = count.resolved_late + int(np.count_nonzero(late[step:]))
            known, worst = max(known, k), max(worst, k + int(np.count_nonzero(open_[step:])))
        self.cursor = a + step
        return known, worst

    def check(self, q: int, now_ns: int) -> str | None:
        if q < self.nominal:
            return None
        if self.extending and q - self.cursor > WINDOW_EVERY:  # a large unresolved window: check less often
            self._skip += 1
            if self._skip % (WINDOW_EVERY // 64):
                return None
        known, worst = self._window(q, now_ns)
        if not self.extending:
            self.needed_at_schedule_end = self._required(known)
            if q >= self.needed_at_schedule_end:
                return MET_AT_SCHEDULE_END
            self.extending = True
            return None
        if q >= self._required(worst):
            return MET
        return None


__all__ = [
    "BOUND",
    "EXTENSION_MAX_QUERIES",
    "EXTENSION_SOURCE",
    "MET",
    "MET_AT_SCHEDULE_END",
    "ExtensionWatch",
    "extension_queries",
]
