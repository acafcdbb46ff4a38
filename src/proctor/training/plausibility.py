"""Whether a training log can be true: its clock, its run interval, its quality values and counts.

A log whose `run_stop` comes before its `run_start`, whose `time_ms` is 1.7e25 or whose
`eval_accuracy` is Infinity passes the official checker's tables, and a score taken from it is a
negative, absurd or infinite time. `LogPlausibility` reads the records of one log as they stream by
(any reader: the compliance checker, the run reader of the scorers, the seed checker) and gives one
ERROR finding per violation, naming the file and the line, with the bounds of
`rules/training/log_bounds.py`:

- every `time_ms` is a wall-clock reading: finite, not negative, before 2100;
- the clock events (init, run_start, block and epoch markers) do not go back in line order by more
  than the clocks of a run's ranks disagree (a step back within it between two different events is a
  warning);
- one `run_start`, then one `run_stop`, and the time to train between them positive and under 30 days;
- no quality line before `run_start`; a quality value is a finite number (not text, not a boolean)
  of modest size;
- `samples_count`, `epoch_num` and the other progress counts are finite numbers, not negative.

Every finding's rule starts with `implausible:`; `is_implausible` tells them from the rest, so the
scorers refuse a score from such a log and the package checker does not accept it as a run that
olympic scoring may drop.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from proctor.findings import Finding, Severity
from proctor.mllog_lines import LogLine
from proctor.rules.training import log_bounds as bounds

PREFIX = "implausible:"
MAX_PER_RULE = 20  # findings listed per rule; the rest are counted in one more


def is_implausible(f: Finding) -> bool:
    """An ERROR that says the log cannot be true (not a rule of the tables)."""
    return f.failed and f.rule.startswith(PREFIX)


def _time(rec: LogLine) -> float:
    """The record's time_ms as the official parser reads it (float()); NaN when it is no number, an
    infinity when it is an integer past a double."""
    t = rec.time_ms
    try:
        return float(t)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
    except OverflowError:
        return math.inf if t > 0 else -math.inf  # type: ignore[operator]


def _short(x: Any, limit: int = 60) -> str:
    try:
        text = repr(x)
    except RecursionError:
        text = f"<{type(x).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _ms(x: float) -> str:
    return f"{x:,.0f} ms" if abs(x) >= 1 else f"{x:g} ms"


class LogPlausibility:
    """Feed every readable record of one log in line order (`add`), then read `findings()`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._out: list[Finding] = []
        self._count: Counter[str] = Counter()
        self._clock: tuple[float, int, str] | None = None  # latest clock event: time, line, key
        self.run_start: tuple[float, int] | None = None  # the first run_start: time, line
        self.run_stop: tuple[float, int] | None = None  # the first run_stop: time, line
        self._early_stop: tuple[float, int] | None = None  # a run_stop before any run_start
        self._early_quality: list[int] = []  # quality lines before any run_start
        self._early_quality_n = 0

    # -- findings ---------------------------------------------------------------------------------
    def _add(
        self,
        what: str,
        message: str,
        *,
        line: int | None,
        key: str | None,
        value: Any = None,
        expected: Any = None,
        source: str = bounds.RUN_CLOCK,
        severity: Severity = Severity.ERROR,
    ) -> None:
        rule = PREFIX + what
        self._count[rule] += 1
        if self._count[rule] > MAX_PER_RULE:
            return
        self._out.append(
            Finding(
                rule,
                message,
                severity,
                path=self.path,
                line=line,
                key=key,
                value=value,
                expected=expected,
                source=source,
            )
        )

    def findings(self) -> list[Finding]:
        """Every finding so far, with the ones that need the whole log (call after the last record)."""
        out = list(self._out)
        if self._early_stop is not None and self.run_start is not None:
            t_stop, line_stop = self._early_stop
            out.append(
                self._finding(
                    "run_stop",
                    f"run_stop at line {line_stop} comes before run_start at line {self.run_start[1]}: a run "
                    "stops after it starts",
                    line=line_stop,
                    key="run_stop",
                    expected="run_start, then run_stop",
                )
            )
        if self._early_quality and self.run_start is not None:
            first = self._early_quality[0]
            n = self._early_quality_n
            out.append(
                self._finding(
                    "order",
                    f"{n} quality line{'s' if n > 1 else ''} (the first at line {first}) before run_start at "
                    f"line {self.run_start[1]}: the quality is measured on the model the run trains",
                    line=first,
                    key="eval_accuracy",
                    value=n,
                    expected="quality lines after run_start",
                    source=bounds.QUALITY,
                )
            )
        if self.run_start is not None and self.run_stop is not None and self._early_stop is None:
            (t0, l0), (t1, l1) = self.run_start, self.run_stop
            span = t1 - t0
            if span <= 0:
                out.append(
                    self._finding(
                        "time_to_train",
                        f"run_stop at line {l1} is timed {_ms(-span)} before run_start at line {l0}"
                        if span < 0
                        else f"run_stop at line {l1} has the time of run_start at line {l0}",
                        line=l1,
                        key="run_stop",
                        value=span,
                        expected="run_stop time_ms > run_start time_ms (a positive time to train)",
                    )
                )
            elif span > bounds.MAX_TIME_TO_TRAIN_MS.value:
                out.append(
                    self._finding(
                        "time_to_train",
                        f"run_stop at line {l1} is {span / 86_400_000:,.1f} days after run_start at line {l0}: "
                        f"{bounds.MAX_TIME_TO_TRAIN_MS.why}",
                        line=l1,
                        key="run_stop",
                        value=span,
                        expected=f"at most {bounds.MAX_TIME_TO_TRAIN_MS.value:.0f} ms",
                    )
                )
        for rule, n in sorted(self._count.items()):
            if n > MAX_PER_RULE:
                out.append(
                    self._finding(
                        rule.removeprefix(PREFIX),
                        f"{n - MAX_PER_RULE} more lines like the {MAX_PER_RULE} above ({rule}), not listed",
                        line=None,
                        key=None,
                        value=n,
                    )
                )
        return sorted(out, key=lambda f: (f.line is None, f.line or 0))

    def _finding(self, what: str, message: str, **kw: Any) -> Finding:
        source = kw.pop("source", bounds.RUN_CLOCK)
        return Finding(PREFIX + what, message, Severity.ERROR, path=self.path, source=source, **kw)

    # -- records ----------------------------------------------------------------------------------
    def add(self, rec: LogLine) -> None:
        t = _time(rec)
        key = rec.key
        why = _bad_time(t)
        if why is not None:
            self._add(
                "time_ms",
                f"'{key[:80]}' at line {rec.line} has time_ms {_short(rec.time_ms)}: {why}",
                line=rec.line,
                key=key[:120],
                value=rec.time_ms,
                expected=f"a finite time_ms in [{bounds.MIN_TIME_MS.value:.0f}, {bounds.MAX_TIME_MS.value:.0f}]",
            )
            t = math.nan  # no order or interval from a time that cannot be one
        self._counts(rec)
        if key in bounds.QUALITY_KEYS:
            self._quality(rec, t)
        if key in bounds.CLOCK_EVENTS and not math.isnan(t):
            self._order(rec, t)
        if key == "run_start":
            self._start(rec, t)
        elif key == "run_stop":
            self._stop(rec, t)

    def _order(self, rec: LogLine, t: float) -> None:
        if self._clock is not None:
            t_prev, line_prev, key_prev = self._clock
            back = t_prev - t
            if back > bounds.CLOCK_JITTER_MS.value:
                self._add(
                    "order",
                    f"'{rec.key}' at line {rec.line} is timed {_ms(back)} before '{key_prev}' at line "
                    f"{line_prev}: the run's clock does not go back",
                    line=rec.line,
                    key=rec.key,
                    value=t,
                    expected=f"time_ms >= {t_prev:.0f} - {bounds.CLOCK_JITTER_MS.value:.0f}",
                )
                return
            if back > 0 and rec.key != key_prev:  # ranks logging the same event at once: no finding
                self._add(
                    "clock_jitter",
                    f"'{rec.key}' at line {rec.line} is timed {_ms(back)} before '{key_prev}' at line "
                    f"{line_prev} (within the {bounds.CLOCK_JITTER_MS.value:.0f} ms the clocks of ranks may "
                    "differ; the time to train may be off by as much)",
                    line=rec.line,
                    key=rec.key,
                    value=back,
                    severity=Severity.WARNING,
                )
            if back > 0:
                return  # the latest clock event stays the reference
        self._clock = (t, rec.line, rec.key)

    def _start(self, rec: LogLine, t: float) -> None:
        if self.run_start is None:
            self.run_start = (t, rec.line)
            return
        self._add(
            "run_start",
            f"run_start appears again at line {rec.line} (the first at line {self.run_start[1]}): one log "
            "holds one run, one clock; a restarted run is a new result_*.txt",
            line=rec.line,
            key="run_start",
            expected="exactly one run_start",
        )

    def _stop(self, rec: LogLine, t: float) -> None:
        if self.run_stop is None and self._early_stop is None:
            if self.run_start is None:
                self._early_stop = (t, rec.line)
            else:
                self.run_stop = (t, rec.line)
            return
        first = self.run_stop or self._early_stop
        assert first is not None
        self._add(
            "run_stop",
            f"run_stop appears again at line {rec.line} (the first at line {first[1]}): one run stops once",
            line=rec.line,
            key="run_stop",
            expected="exactly one run_stop",
        )

    def _quality(self, rec: LogLine, t: float) -> None:
        why = _bad_quality(rec.value)
        if why is not None:
            self._add(
                "quality",
                f"'{rec.key}' at line {rec.line} = {_short(rec.value)}: {why}",
                line=rec.line,
                key=rec.key,
                value=rec.value,
                expected=f"a finite number, at most {bounds.MAX_QUALITY_ABS.value:g} in size",
                source=bounds.QUALITY,
            )
        if self.run_start is None:
            self._early_quality_n += 1
            if not self._early_quality:
                self._early_quality.append(rec.line)
        elif math.isfinite(t) and math.isfinite(self.run_start[0]):
            before = self.run_start[0] - t
            if before > bounds.CLOCK_JITTER_MS.value:
                self._add(
                    "order",
                    f"'{rec.key}' at line {rec.line} is timed {_ms(before)} before run_start at line "
                    f"{self.run_start[1]}: the quality is measured on the model the run trains",
                    line=rec.line,
                    key=rec.key,
                    value=t,
                    expected="a quality line timed after run_start",
                    source=bounds.QUALITY,
                )

    def _counts(self, rec: LogLine) -> None:
        md = rec.metadata
        for name in bounds.COUNT_METADATA:
            if name not in md:
                continue
            v = md[name]
            why = _bad_count(v)
            if why is not None:
                self._add(
                    name,
                    f"'{rec.key[:80]}' at line {rec.line} has {name} {_short(v)}: {why}",
                    line=rec.line,
                    key=rec.key[:120],
                    value=v,
                    expected=f"a number in [0, {bounds.MAX_COUNT.value:.0f}]",
                    source=bounds.PROGRESS,
                )


def _bad_time(t: float) -> str | None:
    if not math.isfinite(t):
        return "not a finite number; time_ms is a wall-clock reading"
    if t < bounds.MIN_TIME_MS.value:
        return f"negative; {bounds.MIN_TIME_MS.why}"
    if t > bounds.MAX_TIME_MS.value:
        return bounds.MAX_TIME_MS.why
    return None


def _bad_quality(v: Any) -> str | None:
    """Why a quality value cannot be one (None: it can). A dict of numbers (per-metric values, as
    older detection benchmarks log) is checked value by value."""
    if isinstance(v, dict) and v:
        for k, x in list(v.items())[:16]:
            why = _bad_quality(x)
            if why is not None:
                return f"its {_short(k, 30)} value {why.removeprefix('the value ')}"
        return None
    if isinstance(v, bool) or not isinstance(v, int | float):
        return f"the value is {type(v).__name__ if v is not None else 'null'}, not a number"
    try:
        x = float(v)
    except OverflowError:
        return "the value is too large to be a quality"
    if not math.isfinite(x):
        return "the value is not finite"
    if abs(x) > bounds.MAX_QUALITY_ABS.value:
        return f"the value is past {bounds.MAX_QUALITY_ABS.value:g}: {bounds.MAX_QUALITY_ABS.why}"
    return None


def _bad_count(v: Any) -> str | None:
    if isinstance(v, bool) or not isinstance(v, int | float):
        return f"{type(v).__name__ if v is not None else 'null'} is not a count"
    try:
        x = float(v)
    except OverflowError:
        return "too large to be a count"
    if not math.isfinite(x):
        return "not finite"
    if x < 0:
        return "a count is not negative"
    if x > bounds.MAX_COUNT.value:
        return bounds.MAX_COUNT.why
    return None


__all__ = ["MAX_PER_RULE", "PREFIX", "LogPlausibility", "is_implausible"]
