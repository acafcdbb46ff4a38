"""Power results: the files a power measurement leaves, the metric read from them, and the rules' uses.

A result measured for power has `performance/{power,ranging,run_1}` (rules.power, from the official
layout); its metric is the average of the PTDaemon samples (`run_1/spl.txt`) logged strictly between
the detail log's `power_begin` and `power_end`: watts for Offline/Server/Interactive, millijoules per
query for SingleStream/MultiStream. An inferred result uses its base result's measured power (the
rules, §Benchmarks inferred results). Every power file is hostile input: reads are bounded and a
line that is not a sample is counted, never trusted. `audit_exemption` applies the rules' 10 %
guidance (§Audit Process) to performance and power-efficiency figures.
"""

from __future__ import annotations

import math
from pathlib import Path

from proctor.errors import LogFormatError
from proctor.findings import Finding
from proctor.loadgen.logs.reader import DetailLogData
from proctor.rules.inference import Category
from proctor.rules.power import (
    AUDIT_EXEMPTION_TOLERANCE,
    INFERRED_POWER,
    LAYOUT_SOURCE,
    POWER_DIR,
    POWER_FILES,
    POWER_UNITS,
    RANGING_DIR,
    RUN_FILES,
    SAMPLES_PER_QUERY,
    SPL_FILE,
    SPL_SOURCE,
    TESTING_DIR,
    TIME_FORMAT,
)
from proctor.text_files import TEXT_SOURCE, universal_lines
from proctor.trees import kind, read_at_most
from proctor.typed_records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime as dt

    from proctor.checks.compliance import ResultContext

MAX_SPL_BYTES = 256 << 20  # one sample a second for days is a few MB; read no more than this
MAX_TIME_TEXT = 40
SPL_PREFIX = "Time"
SAME_POWER_REL = 1e-9


@record(frozen=True, slots=True)
class SplWindow:
    """What spl.txt holds between two instants: the positive watt samples' sum and count."""

    total_watts: float
    count: int
    bad_lines: int
    truncated: bool

    @property
    def average(self) -> float | None:
        return self.total_watts / self.count if self.count else None


@record(frozen=True, slots=True)
class PowerResult:
    """A result's power figures: `metric` in `units` (the summary's power row) and its efficiency."""

    average_watts: float
    duration_s: float
    metric: float
    units: str
    efficiency: float | None  # performance per watt (Offline/Server) or samples per joule (SS/MS)
    samples: int


def parse_time(value: object) -> dt.datetime | None:
    """A `power_begin`/`power_end` or spl.txt time ("%m-%d-%Y %H:%M:%S.%f"); None if it is not one."""
    if not isinstance(value, str) or len(value) > MAX_TIME_TEXT:
        return None
    try:
        import datetime as dt  # only a tree with power results needs it (1.7 ms at start-up)

        return dt.datetime.strptime(value.strip(), TIME_FORMAT)
    except ValueError:
        return None


def read_spl(path: Path, begin: dt.datetime, end: dt.datetime, limit: int = MAX_SPL_BYTES) -> SplWindow:
    """The positive watt samples of `path` strictly inside (begin, end), read from at most `limit` bytes.

    Lines are read as the official checker's `for line in open(spl)` reads them (UTF-8, universal
    newlines). Raises OSError when the file cannot be read, LogFormatError when a line is not UTF-8.
    """
    with path.open("rb") as fh:
        data = read_at_most(fh, limit)
    truncated = len(data) > limit
    total, count, bad = 0.0, 0, 0
    for lineno, raw in enumerate(universal_lines(data[:limit]), start=1):
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            if truncated:
                break  # the cut at the size bound; the caller reports the size
            raise LogFormatError(
                "not UTF-8 text: the official checker stops on it with an error; save it as UTF-8",
                file=str(path),
                line=lineno,
            ) from None
        if not line.startswith(SPL_PREFIX):
            continue
        parts = line.split(",", 4)
        when = parse_time(parts[1]) if len(parts) > 3 else None
        try:
            watts = float(parts[3][:MAX_TIME_TEXT]) if when is not None else math.nan
        except ValueError:
            watts = math.nan
        if when is None or not math.isfinite(watts):
            bad += 1
            continue
        if begin < when < end and watts > 0:
            total += watts
            count += 1
    return SplWindow(total, count, bad, truncated)


def power_metric(
    category: Category,
    run_category: Category,
    average_watts: float,
    duration_s: float,
    query_count: int,
    performance: float | None,
) -> tuple[float, float | None]:
    """(metric, efficiency) of a result: Offline/Server/Interactive the average watts and performance per
    watt; SingleStream/MultiStream millijoules per query and samples per joule. A MultiStream result
    inferred from SingleStream counts 8 SingleStream queries per MultiStream query."""
    if category not in SAMPLES_PER_QUERY:
        efficiency = performance / average_watts if performance is not None and average_watts > 0 else None
        return average_watts, efficiency
    if query_count <= 0:
        raise ValueError("result_query_count must be a positive whole number")
    per_query = SAMPLES_PER_QUERY[category]
    metric = average_watts * duration_s * 1000 / query_count
    if category is Category.MULTI_STREAM and run_category is Category.SINGLE_STREAM:
        metric *= per_query
    return metric, (per_query * 1000 / metric if metric > 0 else None)


def _kind(path: Path) -> str:
    """proctor.trees.kind: a link (on the path too) is never "file" or "dir", so never read."""
    return kind(path)


def _err(rule: str, path: Path | str, message: str, **kw: object) -> Finding:
    return Finding(rule=rule, path=str(path), message=message, **kw)  # type: ignore[arg-type]


def has_power(scendir: Path) -> bool:
    return _kind(scendir / "performance" / POWER_DIR) == "dir"


def check_power(
    ctx: ResultContext, inferred_from: Category | None, performance: float | None
) -> tuple[PowerResult | None, list[Finding]]:
    """A result's power figures and the findings about them; (None, []) when it was not measured for power."""
    perf = ctx.scendir / "performance"
    if not has_power(ctx.scendir):
        return None, []
    out: list[Finding] = []
    wanted = [(POWER_DIR, n) for n in POWER_FILES] + [
        (d, n) for d in (RANGING_DIR, TESTING_DIR) for n in RUN_FILES
    ]
    for folder, name in wanted:
        if _kind(perf / folder / name) != "file":
            out.append(
                _err(
                    "power_files",
                    perf / folder / name,
                    f"missing {folder}/{name}: a power result needs the PTD client/server logs, the ranging "
                    "run and the testing run's spl.txt",
                    source=LAYOUT_SOURCE,
                )
            )
    log = ctx.result_log
    spl = perf / TESTING_DIR / SPL_FILE
    if log is None or _kind(spl) != "file":
        return None, out  # an unusable log is a finding already; a missing spl.txt one just above
    window, found = _window(log, spl)
    out += found
    if window is None:
        return None, out
    begin, end, samples = window
    avg = samples.average
    if avg is None:
        out.append(
            _err(
                "power_samples",
                spl,
                f"no positive power sample between power_begin {begin} and power_end {end}: the power "
                "measurement does not cover the run",
                source=SPL_SOURCE,
            )
        )
        return None, out
    category = Category(ctx.category)
    count = log.get("result_query_count")
    queries = count if isinstance(count, int) and not isinstance(count, bool) else 0
    duration = (end - begin).total_seconds()
    try:
        metric, efficiency = power_metric(
            category, inferred_from or category, avg, duration, queries, performance
        )
    except ValueError as exc:
        out.append(
            _err(
                "power_metric", log.path, f"cannot compute the power metric: {exc}", key="result_query_count"
            )
        )
        return None, out
    if inferred_from is not None:
        out += _same_power_as_base(ctx, inferred_from, avg, spl)
    return PowerResult(avg, duration, metric, POWER_UNITS[category], efficiency, samples.count), out


def _window(
    log: DetailLogData, spl: Path
) -> tuple[tuple[dt.datetime, dt.datetime, SplWindow] | None, list[Finding]]:
    begin, end = parse_time(log.get("power_begin")), parse_time(log.get("power_end"))
    if begin is None or end is None or end <= begin:
        key = "power_begin" if begin is None else "power_end"
        return None, [
            _err(
                "power_window",
                log.path,
                f"{key} is missing or not a time ({TIME_FORMAT}) after power_begin: the run's power "
                "window cannot be placed in spl.txt; regenerate the log",
                key=key,
                line=log.line_of(key),
                source=SPL_SOURCE,
            )
        ]
    try:
        samples = read_spl(spl, begin, end)
    except OSError as exc:
        return None, [_err("unreadable", spl, f"cannot read it ({exc.strerror or exc})")]
    except LogFormatError as exc:
        return None, [_err("text_encoding", spl, exc.detail, line=exc.line, source=TEXT_SOURCE)]
    out = []
    if samples.truncated:
        out.append(
            _err("power_samples", spl, f"larger than {MAX_SPL_BYTES} bytes: not a PTDaemon sample log")
        )
        return None, out
    return (begin, end, samples), out


def _same_power_as_base(ctx: ResultContext, base: Category, average: float, spl: Path) -> list[Finding]:
    """The rules: an inferred result's power is the base result's measured power (the copy of its run)."""
    from proctor.checks.detail_log import load_detail_log

    try:
        siblings = sorted(ctx.scendir.parent.iterdir())
    except OSError:
        return []  # the walk names an unreadable folder
    for sibling in siblings:
        if sibling.name.replace("-", "").replace("_", "").lower() != base.value.lower() or not has_power(
            sibling
        ):
            continue
        detail = sibling / "performance" / TESTING_DIR / "mlperf_log_detail.txt"
        base_spl = sibling / "performance" / TESTING_DIR / SPL_FILE
        if _kind(detail) != "file" or _kind(base_spl) != "file":
            return []  # the base result's own check names what it lacks
        log, problems = load_detail_log(detail)
        window, found = _window(log, base_spl) if not problems else (None, [])
        base_avg = window[2].average if window is not None else None
        if base_avg is None or found:
            return []
        if abs(base_avg - average) > SAME_POWER_REL * max(abs(base_avg), abs(average)):
            return [
                _err(
                    "inferred_power",
                    spl,
                    f"the inferred {ctx.category} result averages {average:.6g} W but its base {base.value} "
                    f"result measured {base_avg:.6g} W: an inferred result must use the base result's measured "
                    f"power (copy {sibling.name}/performance here)",
                    value=average,
                    expected=base_avg,
                    source=INFERRED_POWER,
                )
            ]
        return []
    return []


# --- the audit exemption (§Audit Process) -------------------------------------------------------------
@record(frozen=True, slots=True)
class AuditFigures:
    """What the audit-exemption guidance compares: aggregate performance, per accelerator, power efficiency."""

    performance: float
    per_accelerator: float
    power_efficiency: float | None = None  # None: no power metrics


def _within(value: float, reference: float, tolerance: float) -> bool:
    if not (math.isfinite(value) and math.isfinite(reference)) or reference <= 0:
        return False
    return abs(value - reference) <= tolerance * reference


def audit_exemption(
    current: AuditFigures, audited: AuditFigures, tolerance: float = AUDIT_EXEMPTION_TOLERANCE
) -> list[str]:
    """Why a system on an audited accelerator is not eligible for exclusion from random audit (empty:
    eligible): performance and per-accelerator performance not more than 10 % from the last audit's,
    and, with power metrics, power efficiency within 10 % too; a new power measurement voids it."""
    why = []
    if not _within(current.performance, audited.performance, tolerance):
        why.append(
            f"aggregate performance {current.performance:g} is more than {tolerance:.0%} from {audited.performance:g}"
        )
    if not _within(current.per_accelerator, audited.per_accelerator, tolerance):
        why.append(
            f"performance per accelerator {current.per_accelerator:g} is more than {tolerance:.0%} "
            f"from {audited.per_accelerator:g}"
        )
    if current.power_efficiency is not None:
        if audited.power_efficiency is None:
            why.append("a new power measurement since the last audit")
        elif not _within(current.power_efficiency, audited.power_efficiency, tolerance):
            why.append(
                f"power efficiency {current.power_efficiency:g} is not within {tolerance:.0%} "
                f"of {audited.power_efficiency:g}"
            )
    return why


__all__ = [
    "AuditFigures",
    "PowerResult",
    "SplWindow",
    "audit_exemption",
    "check_power",
    "has_power",
    "parse_time",
    "power_metric",
    "read_spl",
]
