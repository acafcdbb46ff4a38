"""Reading a training result log (`result_*.txt`) into what the checkers and scorers need.

Built on `proctor.mllog_lines`, so prefixes (rank tags) before `:::MLLOG` and malformed lines are
handled the same way everywhere: a line the official parser would reject (bad JSON, a missing
`time_ms`/`value`/`metadata` field, a `time_ms` that is not a number) becomes a `BadLine` with its
line number instead of an exception.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from proctor.findings import Finding
from proctor.mllog_lines import BadLine, LogLine, iter_log
from proctor.training.plausibility import LogPlausibility
from proctor.typed_records import field, record

MARKERS = (b":::MLLOG ",)  # the official parser's token, with its space
_EVENT_KEYS = frozenset(
    {
        "init_start",
        "init_stop",
        "run_start",
        "run_stop",
        "block_start",
        "block_stop",
        "epoch_start",
        "epoch_stop",
        "eval_start",
        "eval_stop",
        "eval_accuracy",
        "cache_clear",
        "seed",
        "train_samples",
        "eval_samples",
        "power_reading",
        "staging_start",
        "staging_stop",
    }
)


def iter_records(path: str | Path) -> Iterator[LogLine | BadLine]:
    """Every `:::MLLOG` line in order; lines missing what the official parser needs become BadLines."""
    for rec in iter_log(path, MARKERS):
        if isinstance(rec, BadLine):
            yield rec
            continue
        raw = rec.raw
        missing = [f for f in ("time_ms", "value", "metadata") if f not in raw]
        if missing:
            yield BadLine(rec.line, _text(raw), f"missing field(s) {', '.join(missing)}")
            continue
        t = rec.time_ms
        try:
            float(t)  # type: ignore[arg-type]  # the official parser accepts what float() accepts
        except (TypeError, ValueError):
            yield BadLine(rec.line, _text(raw), f"time_ms {str(t)[:40]!r} is not a number")
            continue
        except OverflowError:  # an integer past a double: the official parser crashes on it
            yield BadLine(rec.line, _text(raw), f"time_ms {str(t)[:20]}... is too large for a number")
            continue
        yield rec


def _text(raw: dict[str, Any]) -> str:
    return str(raw)[:200]


def time_of(rec: LogLine) -> float:
    return float(rec.time_ms)  # type: ignore[arg-type]


@record(frozen=True, slots=True)
class EvalEvent:
    line: int
    time_ms: float
    key: str  # eval_accuracy (or eval_error / averaged_validation_loss)
    value: Any
    samples_count: Any
    epoch_num: Any


@record(slots=True)
class TrainingLog:
    path: str
    lines: list[LogLine] = field(default_factory=list)
    bad_lines: list[BadLine] = field(default_factory=list)
    benchmark: str | None = None
    division: str | None = None
    org: str | None = None
    platform: str | None = None
    submission_status: str | None = None
    init_start_ms: float | None = None  # the first init_start
    init_stop_ms: float | None = None
    run_start_ms: float | None = None  # the first run_start
    run_stop_ms: float | None = None  # the first run_stop
    status: str | None = None  # metadata.status of the first run_stop
    evals: list[EvalEvent] = field(default_factory=list)
    hyperparameters: dict[str, Any] = field(default_factory=dict)  # last value of each other key
    seeds: list[LogLine] = field(default_factory=list)
    # what makes the log impossible (training/plausibility.py); no time to train is taken from such a log
    findings: list[Finding] = field(default_factory=list)

    @property
    def global_batch_size(self) -> Any:
        return self.hyperparameters.get("global_batch_size")

    @property
    def converged(self) -> bool:
        return self.status == "success"

    def run_time_ms(self) -> float | None:
        """run_start to run_stop; None when either is missing or the log cannot be true."""
        if self.run_start_ms is None or self.run_stop_ms is None or any(f.failed for f in self.findings):
            return None
        return self.run_stop_ms - self.run_start_ms


_SUBMISSION = {
    "submission_benchmark": "benchmark",
    "submission_division": "division",
    "submission_org": "org",
    "submission_platform": "platform",
    "submission_status": "submission_status",
}


def read_log(path: str | Path) -> TrainingLog:
    """Read a whole training log (one pass, streaming); submission keys: the first value wins."""
    log = TrainingLog(str(path))
    plausible = LogPlausibility(str(path))
    for rec in iter_records(path):
        if isinstance(rec, BadLine):
            log.bad_lines.append(rec)
            continue
        log.lines.append(rec)
        plausible.add(rec)
        key = rec.key
        attr = _SUBMISSION.get(key)
        if attr is not None:
            if getattr(log, attr) is None:
                setattr(log, attr, rec.value)
        elif key == "init_start":
            if log.init_start_ms is None:
                log.init_start_ms = time_of(rec)
        elif key == "init_stop":
            if log.init_stop_ms is None:
                log.init_stop_ms = time_of(rec)
        elif key == "run_start":
            if log.run_start_ms is None:
                log.run_start_ms = time_of(rec)
        elif key == "run_stop":
            if log.run_stop_ms is None:
                log.run_stop_ms = time_of(rec)
                log.status = rec.metadata.get("status")
        elif key in ("eval_accuracy", "eval_error", "averaged_validation_loss"):
            md = rec.metadata
            log.evals.append(
                EvalEvent(
                    rec.line, time_of(rec), key, rec.value, md.get("samples_count"), md.get("epoch_num")
                )
            )
        elif key == "seed":
            log.seeds.append(rec)
        elif key not in _EVENT_KEYS:
            log.hyperparameters[key] = rec.value
    log.findings = plausible.findings()
    return log
