"""The training compliance rule engine: runs a ruleset's tables over a log and returns findings.

Same semantics as the official checker (`mlperf_logging.compliance_checker`), so both give the
same verdict: configs run FIFO starting from "common", each over every line with a fresh state;
a `submission_*` key is checked on its first occurrence only; a config that defines a key drops
the messages earlier configs gave for it; EXACTLY_ONE with identical repeated values is a
warning; the quality target must hold on at least one occurrence. The log is read once, keeping
only what the rules need: occurrence counts, first values and the last evaluation per key. Records of
rule-named keys are cached for a small log; a large one is streamed again for each later config, so
memory stays bounded whatever the log's size (bench/training_log_memory.py).

What no table checks, whether the log can be true at all (a clock that goes back, run_stop before
run_start, a non-finite quality: `training/plausibility.py`), is checked on the same pass and adds
its errors after the tables' findings (docs/deviations.md, Issue 30).
"""

from __future__ import annotations

import importlib
import math
import stat
from collections import defaultdict
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from proctor.errors import ConfigError
from proctor.findings import Finding, Severity, is_valid
from proctor.mllog_lines import BadLine, LogLine
from proctor.rules.training.benchmarks import rules_text_keys, rules_text_table
from proctor.rules.training.rulesets import CURRENT_RULESET, RULESET_MODULES, RULESETS, unknown_ruleset
from proctor.rules.training.types import Check, Config, KeyRule, Line, Req, Ruleset, State
from proctor.training.benchmarks import GROUP, TrainingBenchmark, resolve
from proctor.training.logparse import iter_records
from proctor.training.plausibility import LogPlausibility
from proctor.typed_records import field, record, replace

_SRC_PARSE = "§11 Run Results: result logs include all MLLOG lines"
CACHE_LIMIT = 20_000  # rule-keyed records kept in memory; past it later configs re-read the file
MAX_KEY_FINDINGS = 20  # errors listed per key; the rest are counted in one finding
MAX_PARSE_FINDINGS = 100
# Rules §9 Training Loop: "OPEN: An arbitrary stopping criteria may be used ... the number of epochs,
# or a fixed time". The official open tables still require a quality target (for llama31_8b even a
# log perplexity below 1.0); proctor follows the rules and reports a missed target as a warning
# (docs/deviations.md, training section).
OPEN_STOPPING_IS_FREE = True
OPEN_STOPPING_SOURCE = "§9 Training Loop: OPEN arbitrary stopping criteria"
# Findings of the rules-text tables (rules/training/rules_text.py, named by each benchmark's record):
# rule ids start with this, and the message says the official checker does not make the check
# (docs/deviations.md, Issue 21: training).
RULES_TEXT_PREFIX = "rules_text"
RULES_TEXT_NOTE = " (a rule of the Training rules text that the official checker does not check)"


def available_rulesets() -> tuple[str, ...]:
    return RULESETS


def get_ruleset(version: str) -> Ruleset:
    """The official tables of one ruleset (imported on first use, never changed afterwards)."""
    module = RULESET_MODULES.get(version)
    if module is None:
        raise ValueError(unknown_ruleset(version))
    return importlib.import_module(module).RULESET


def ruleset_with(version: str, extra_benchmarks: Iterable[TrainingBenchmark] | None = None) -> Ruleset:
    """A new Ruleset: the official tables plus the benchmarks outside them.

    `extra_benchmarks` None reads the registered ones now (entry points, proctor.training.benchmarks);
    a sequence uses exactly those. The official object is left as it is.
    """
    rs = get_ruleset(version)
    extra = resolve(version, extra_benchmarks)
    if not extra:
        return rs
    configs = dict(rs.configs)
    for bench in extra.values():
        for table in bench.tables.values():
            if table.name in configs:
                raise ConfigError(
                    f"{bench.source or bench.name}: ruleset {version} already has a table {table.name!r}"
                )
            configs[table.name] = table
    return replace(rs, configs=configs, extra_benchmarks=frozenset(extra))


@record(slots=True)
class ComplianceReport:
    file: str
    valid: bool
    benchmark: str | None
    division: str | None
    ruleset: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.failed]

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "valid": self.valid,
            "benchmark": self.benchmark,
            "division": self.division,
            "ruleset": self.ruleset,
            "findings": [
                {
                    "key": f.key,
                    "line": f.line,
                    "message": f.message,
                    "severity": str(f.severity),
                    "rule": f.rule,
                    "value": jsonable(f.value),
                    "expected": jsonable(f.expected),
                    "source": f.source,
                }
                for f in self.findings
            ],
        }


def jsonable(x: Any, depth: int = 0) -> Any:
    """A JSON-safe copy for `--json`: NaN/inf and ints past 64 bits become text, nesting past 24 levels
    its type name (orjson refuses all three), other objects (paths, numpy numbers) their str."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if x is None or isinstance(x, str | int | float | bool):
        if isinstance(x, int) and not isinstance(x, bool) and abs(x) >= 2**63:
            return str(x)
        return x
    if depth >= 24:
        return f"<{type(x).__name__} nested too deep>"
    if isinstance(x, list | tuple):
        return [jsonable(i, depth + 1) for i in x]
    if isinstance(x, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in x.items()}
    if hasattr(x, "item") and callable(x.item):  # a numpy scalar
        return jsonable(x.item(), depth)
    return str(x)


def _short(x: Any, limit: int = 120) -> str:
    """repr of a log value for a message, cut to `limit` characters."""
    try:
        text = repr(x)
    except RecursionError:
        text = f"<{type(x).__name__} nested too deep>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


class _Seen:
    """What the occurrence rules need of a key's values: count, first value, whether all are equal."""

    __slots__ = ("count", "first", "same", "distinct")

    def __init__(self) -> None:
        self.count = 0
        self.first: Any = None
        self.same = True
        self.distinct: set[str] = set()

    def add(self, value: Any) -> None:
        if self.count == 0:
            self.first = value
        elif self.same and not _equal(value, self.first):
            self.same = False
        if len(self.distinct) < 10:
            self.distinct.add(_short(value, 60))
        self.count += 1


def _equal(a: Any, b: Any) -> bool:
    try:
        return bool(a == b)
    except RecursionError:
        return False


class _Messages:
    """The official checker's three message stores, holding Findings."""

    def __init__(self) -> None:
        self.warnings: dict[str, Finding] = {}  # one per key, as the official dict
        self.keyed: dict[str, list[Finding]] = defaultdict(list)
        self.unkeyed: list[Finding] = []
        self.more: dict[str, int] = defaultdict(int)  # errors per key past MAX_KEY_FINDINGS

    def keyed_error(self, key: str, f: Finding) -> None:
        if len(self.keyed[key]) < MAX_KEY_FINDINGS:
            self.keyed[key].append(f)
        else:
            self.more[key] += 1

    def drop(self, keys: Any) -> None:
        for k in keys:
            self.keyed.pop(k, None)
            self.more.pop(k, None)

    def all(self) -> list[Finding]:
        out = list(self.warnings.values())
        for k, fs in self.keyed.items():
            out.extend(fs)
            if self.more.get(k):
                out.append(
                    replace(
                        fs[-1],
                        rule=f"more:{k}",
                        message=f"{self.more[k]} more errors on '{k}' like the one above, not listed",
                        line=None,
                        value=self.more[k],
                    )
                )
        out.extend(self.unkeyed)
        return sorted(out, key=lambda f: (f.line is None, f.line or 0))


def _ll(rec: Any) -> Line:
    return Line(rec.line, rec.key, float(rec.time_ms), {"value": rec.value, "metadata": rec.metadata})


class _Engine:
    def __init__(self, ruleset: Ruleset, path: str) -> None:
        self.rs = ruleset
        self.path = path
        self.msgs = _Messages()
        self.queue: list[str] = []
        self.rules_text = False  # running a rules-text table: keep earlier messages, mark its findings

    def _finding(
        self,
        rule: str,
        message: str,
        *,
        line: Line | None = None,
        key: str | None = None,
        value: Any = None,
        expected: Any = None,
        source: str | None = None,
        severity: Severity = Severity.ERROR,
    ) -> Finding:
        return Finding(
            rule=rule,
            message=message,
            severity=severity,
            path=self.path,
            line=line.lineno if line else None,
            key=key if key else (line.key if line else None),
            value=value,
            expected=expected,
            source=source,
        )

    def _eval(self, rule: KeyRule, checks: tuple[Check, ...], s: State, ll: Line, kind: str) -> None:
        for c in checks:
            try:
                ok = c.fn(s, ll.value, ll)
            except Exception as exc:  # a check that cannot be evaluated fails, as in the official tool
                self.msgs.keyed_error(
                    ll.key,
                    self._finding(
                        f"{kind}:{ll.key}",
                        f"'{ll.key}' at line {ll.lineno}: cannot evaluate `{c.expr}` "
                        f"({type(exc).__name__}: {exc}); a value it needs is missing or of the wrong type",
                        line=ll,
                        value=ll.value.get("value"),
                        expected=c.expr,
                        source=rule.source,
                    ),
                )
                continue
            if not ok:
                note = RULES_TEXT_NOTE if self.rules_text else ""
                self.msgs.keyed_error(
                    ll.key,
                    self._finding(
                        f"{RULES_TEXT_PREFIX}:{ll.key}" if self.rules_text else f"{kind}:{ll.key}",
                        f"'{ll.key}' at line {ll.lineno} = {_short(ll.value.get('value'))} fails `{c.expr}`"
                        + note,
                        line=ll,
                        value=ll.value.get("value"),
                        expected=c.expr,
                        source=rule.source,
                    ),
                )

    def _act(self, rule: KeyRule, fn: Any, s: State, ll: Line, what: str) -> None:
        try:
            fn(s, ll.value, ll)
        except Exception as exc:
            self.msgs.keyed_error(
                ll.key,
                self._finding(
                    f"{what}:{ll.key}",
                    f"'{ll.key}' at line {ll.lineno}: the rule's {what} step failed "
                    f"({type(exc).__name__}: {exc})",
                    line=ll,
                    value=ll.value.get("value"),
                    source=rule.source,
                ),
            )

    def run_config(self, cfg: Config, recs: Iterable[LogLine], *, rules_text: bool = False) -> None:
        """Run one config over the records (in line order; keys it has no rule for are skipped).

        `rules_text`: a table of rules the official checker does not check; it adds findings and drops
        none of the official tables' (a config of the official chain replaces its keys' messages)."""
        self.rules_text = rules_text
        s = State(self.queue.append, frozenset(self.rs.extra_benchmarks))
        if cfg.begin is not None:
            cfg.begin(s)
        rules = cfg.by_key()
        if not rules_text:
            self.msgs.drop(rules)
        reported: dict[str, _Seen] = {k: _Seen() for k in rules}
        seen_submission: set[str] = set()
        first_seen: set[str] = set()
        atleast: dict[str, list[Any]] = {}
        for rec in recs:
            rule = rules.get(rec.key)
            if rule is None:
                continue
            ll = _ll(rec)
            reported[rec.key].add(rec.value)
            if rec.key not in seen_submission:
                if rule.pre is not None:
                    self._act(rule, rule.pre, s, ll, "pre")
                if rule.checks:
                    self._eval(rule, rule.checks, s, ll, "check")
                if rule.post is not None:
                    self._act(rule, rule.post, s, ll, "post")
            if rule.first_check and rec.key not in first_seen:
                first_seen.add(rec.key)
                self._eval(rule, rule.first_check, s, ll, "first_check")
            if rule.atleast_one is not None:
                slot = atleast.setdefault(rec.key, [0, rule, None])
                try:
                    if rule.atleast_one.fn(s, ll.value, ll):
                        slot[0] += 1
                except Exception as exc:  # the official tool crashes here: an error on this line
                    self.msgs.keyed_error(
                        rec.key,
                        self._finding(
                            f"target:{rec.key}",
                            f"'{rec.key}' at line {ll.lineno} = {_short(ll.value.get('value'))} cannot be "
                            f"compared with the quality target `{rule.atleast_one.expr}` "
                            f"({type(exc).__name__}); it must be a number",
                            line=ll,
                            value=ll.value.get("value"),
                            expected=rule.atleast_one.expr,
                            source=rule.source,
                        ),
                    )
                slot[2] = ll
            if "submission_" in rec.key:
                seen_submission.add(rec.key)
        for key, (count, rule, last) in atleast.items():
            if count == 0:
                finding = self._finding(
                    f"target:{key}",
                    f"no '{key}' line meets `{rule.atleast_one.expr}` (last value "
                    f"{_short(last.value.get('value'))} at line {last.lineno}): the quality target was not reached",
                    key=key,
                    line=last,
                    value=last.value.get("value"),
                    expected=rule.atleast_one.expr,
                    source=rule.source,
                )
                if cfg.name.startswith("open_") and OPEN_STOPPING_IS_FREE:
                    self.msgs.warnings[f"target:{key}"] = replace(
                        finding,
                        severity=Severity.WARNING,
                        message=finding.message + " (the official checker rejects this; the rules let an "
                        "Open run stop by any criterion, §9 Training Loop)",
                        source=OPEN_STOPPING_SOURCE,
                    )
                else:
                    self.msgs.unkeyed.append(finding)
        self._occurrences(cfg, rules, reported)
        if cfg.end is not None:
            if cfg.end.pre is not None:
                cfg.end.pre(s)
            for expr, fn in cfg.end.checks:
                try:
                    ok = fn(s)
                except Exception:
                    ok = False
                if not ok:
                    self.msgs.unkeyed.append(
                        self._finding(
                            "end", f"end-of-log check `{expr}` failed", expected=expr, source=cfg.source
                        )
                    )

    def _occurrences(self, cfg: Config, rules: dict[str, KeyRule], reported: dict[str, _Seen]) -> None:
        alternatives: dict[frozenset[str], KeyRule] = {}
        for k, rule in rules.items():
            seen = reported[k]
            n = seen.count
            if rule.req is Req.EXACTLY_ONE and n != 1:
                if n and seen.same:
                    self.msgs.warnings[k] = self._finding(
                        f"exactly_one:{k}",
                        f"'{k}' must appear exactly once but appears {n} times "
                        f"(all with the value {_short(seen.first)})",
                        key=k,
                        value=n,
                        expected="exactly one",
                        source=rule.source,
                        severity=Severity.WARNING,
                    )
                else:
                    detail = f" with different values: {sorted(seen.distinct)}" if n else ""
                    self.msgs.keyed_error(
                        k,
                        self._finding(
                            f"exactly_one:{k}",
                            f"'{k}' must appear exactly once but appears {n} times{detail}",
                            key=k,
                            value=n,
                            expected="exactly one",
                            source=rule.source,
                        ),
                    )
            elif rule.req is Req.AT_LEAST_ONE and n < 1:
                self.msgs.keyed_error(
                    k,
                    self._finding(
                        f"at_least_one:{k}",
                        f"'{k}' must appear at least once but is missing",
                        key=k,
                        value=0,
                        expected="at least one",
                        source=rule.source,
                    ),
                )
            elif rule.req is Req.AT_LEAST and n < rule.at_least:
                self.msgs.keyed_error(
                    k,
                    self._finding(
                        f"at_least:{k}",
                        f"'{k}' must appear at least {rule.at_least} times but appears {n}",
                        key=k,
                        value=n,
                        expected=f"at least {rule.at_least}",
                        source=rule.source,
                    ),
                )
            elif rule.req is Req.AT_LEAST_ONE_OR:
                alternatives.setdefault(frozenset((k, *rule.alternatives)), rule)
        for alts, rule in alternatives.items():
            if not any(reported[a].count if a in reported else 0 for a in alts):
                names = " or ".join(f"'{a}'" for a in sorted(alts))
                self.msgs.unkeyed.append(
                    self._finding(
                        "at_least_one_of",
                        f"at least one of {names} must appear",
                        key=sorted(alts)[0],
                        expected=names,
                        source=rule.source,
                    )
                )


def _rule_keys(rs: Ruleset) -> frozenset[str]:
    return frozenset(k.name for c in rs.configs.values() for k in c.keys) | rules_text_keys()


def _regular(path: Path) -> str | None:
    """Why `path` cannot be read as a log (None: a regular file); never opens a FIFO or device."""
    try:
        st = path.stat()
    except OSError as exc:
        return f"cannot be read: {exc.strerror or exc}"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    return None


class _Records:
    """The rule-keyed records of a log, cached while small and streamed again from the file after.

    Each config needs every line of its keys in order; caching all of them cost 812 MiB on a 200 MB
    log, so past `CACHE_LIMIT` records the cache is dropped and each later config re-reads the file.
    """

    def __init__(self, path: Path, keys: frozenset[str]) -> None:
        self.path = path
        self.keys = keys
        self.cache: list[LogLine] | None = []

    def add(self, rec: LogLine) -> None:
        if self.cache is not None:
            if len(self.cache) >= CACHE_LIMIT:
                self.cache = None
            else:
                self.cache.append(rec)

    def of(self, keys: Any) -> Iterator[LogLine]:
        if self.cache is not None:
            yield from (r for r in self.cache if r.key in keys)
            return
        for rec in iter_records(self.path):
            if not isinstance(rec, BadLine) and rec.key in keys:
                yield rec


def check_file(
    path: str | Path,
    ruleset: str | None = None,
    *,
    division: str | None = None,
    benchmark: str | None = None,
    extra_benchmarks: Iterable[TrainingBenchmark] | None = None,
) -> ComplianceReport:
    """Check one training log against a ruleset (default 6.1.0).

    `division`/`benchmark`, when given, are what the caller expects the log to declare: a log that
    declares something else gets a finding (the log's own keys still choose the tables). A file with
    no readable `:::MLLOG` record gets that one finding (and its unreadable lines), not one per rule.
    Benchmarks outside the official tables are the registered ones (None) or `extra_benchmarks`.
    """
    version = ruleset or CURRENT_RULESET
    rs = ruleset_with(version, extra_benchmarks)
    p = Path(path)
    path_s = str(path)
    engine = _Engine(rs, path_s)

    def report(findings: list[Finding], bench: Any = None, div: Any = None) -> ComplianceReport:
        return ComplianceReport(
            file=path_s,
            valid=is_valid(findings),
            benchmark=_text_or_none(bench) or benchmark,
            division=_text_or_none(div) or division,
            ruleset=version,
            findings=findings,
        )

    why = _regular(p)
    if why is not None:
        return report([Finding(rule="file", message=f"{path_s} {why}", path=path_s, source=_SRC_PARSE)])
    records = _Records(p, _rule_keys(rs))
    plausible = LogPlausibility(path_s)  # what no table checks: whether the log can be true
    first: dict[str, Any] = {}
    n_lines = 0
    n_bad = 0

    def first_pass() -> Iterator[LogLine]:
        """Every readable record once; parse findings, the cache and the submission keys on the way."""
        nonlocal n_lines, n_bad
        for rec in iter_records(p):
            if isinstance(rec, BadLine):
                n_bad += 1
                if n_bad <= MAX_PARSE_FINDINGS:
                    engine.msgs.unkeyed.append(
                        Finding(
                            rule="parse",
                            message=f"line {rec.line} cannot be read as an MLLOG record: {rec.reason}",
                            path=path_s,
                            line=rec.line,
                            value=rec.text[:200],
                            source=_SRC_PARSE,
                        )
                    )
                continue
            n_lines += 1
            plausible.add(rec)
            if rec.key in records.keys:
                records.add(rec)
                if rec.key.startswith("submission_") and rec.key not in first:
                    first[rec.key] = rec.value
                yield rec

    try:
        engine.queue.append(rs.root)
        root = rs.configs.get(engine.queue.pop(0))
        if root is not None:
            engine.run_config(root, first_pass())
        else:
            for _ in first_pass():
                pass
        if n_lines == 0:
            findings = [f for f in engine.msgs.unkeyed if f.rule == "parse"]
            findings += _more_parse(n_bad, path_s)
            findings.append(
                Finding(rule="no_lines", message=f"no :::MLLOG records in {path_s}", path=path_s, source=_SRC_PARSE)
            )
            return report(findings)
        while engine.queue:
            name = engine.queue.pop(0)
            cfg = rs.configs.get(name)
            if cfg is None:
                engine.msgs.unkeyed.append(
                    Finding(
                        rule="no_rules",
                        message=f"ruleset {version} has no rules {_short(name, 80)} (unknown division or "
                        f"benchmark); a benchmark outside the official tables declares its tables by "
                        f"entry point ({GROUP})",
                        path=path_s,
                        value=name,
                        source="§3 Benchmarks; §4 Divisions",
                    )
                )
                continue
            engine.run_config(cfg, records.of(cfg.by_key()))
        text_cfg = rules_text_table(
            version, first.get("submission_division"), first.get("submission_benchmark")
        )
        if text_cfg is not None:
            engine.run_config(text_cfg, records.of(text_cfg.by_key()), rules_text=True)
    except OSError as exc:
        return report([Finding(rule="file", message=f"{path_s} cannot be read: {exc.strerror or exc}", path=path_s)])
    findings = engine.msgs.all() + _more_parse(n_bad, path_s) + plausible.findings()
    log_div, log_bench = first.get("submission_division"), first.get("submission_benchmark")
    for what, want, got in (("division", division, log_div), ("benchmark", benchmark, log_bench)):
        if want is not None and got != want:
            findings.append(
                Finding(
                    rule=f"expected_{what}",
                    message=f"the log declares {what} {_short(got)}, expected {want!r}",
                    path=path_s,
                    key=f"submission_{what}",
                    value=got,
                    expected=want,
                    source="§3 Benchmarks; §4 Divisions",
                )
            )
    return report(findings, log_bench, log_div)


def _text_or_none(x: Any) -> str | None:
    return x if isinstance(x, str) and x else None


def _more_parse(n_bad: int, path: str) -> list[Finding]:
    if n_bad <= MAX_PARSE_FINDINGS:
        return []
    return [
        Finding(
            rule="parse",
            message=f"{n_bad - MAX_PARSE_FINDINGS} more unreadable lines not listed ({n_bad} in all)",
            path=path,
            value=n_bad,
            source=_SRC_PARSE,
        )
    ]


def suggest_ruleset(
    report: ComplianceReport,
    *,
    max_bytes: int = 64 * 1024 * 1024,
    extra_benchmarks: Iterable[TrainingBenchmark] | None = None,
) -> str | None:
    """A hint when an invalid log may be from another round: a ruleset it complies with, if any.

    Logs carry no round number, so the hint comes from checking the log against the other rulesets
    (newest first; skipped for files over `max_bytes`), else from which rulesets know its benchmark.
    """
    if report.valid or any(f.rule in ("no_lines", "file") for f in report.findings):
        return None
    others = [v for v in reversed(available_rulesets()) if v != report.ruleset]
    try:
        small = Path(report.file).stat().st_size <= max_bytes
    except OSError:
        small = False
    given = list(extra_benchmarks) if extra_benchmarks is not None else None
    extra = {v: list(resolve(v, given).values()) for v in (report.ruleset, *others)}  # read once
    rulesets = {v: ruleset_with(v, benches) for v, benches in extra.items()}
    if small:
        for v in others:
            if check_file(report.file, v, extra_benchmarks=extra[v]).valid:
                return f"the log complies with ruleset {v}: it may be from that round (try --ruleset {v})"
    bench = report.benchmark
    if bench and bench not in rulesets[report.ruleset].allowed_benchmarks():
        known = [v for v in others if bench in rulesets[v].allowed_benchmarks()]
        if known:
            return (
                f"benchmark {bench!r} is not in ruleset {report.ruleset} but is in {', '.join(known)}: "
                f"the log may be from another round (try --ruleset {known[0]})"
            )
    return None


def target_reached(
    ruleset: str,
    division: str,
    benchmark: str,
    value: Any,
    *,
    samples_count: Any = None,
    epoch_num: Any = None,
    state: dict[str, Any] | None = None,
    extra_benchmarks: Iterable[TrainingBenchmark] | None = None,
) -> bool | None:
    """Whether an accuracy meets the benchmark's quality target (None: the table has no target)."""
    name = f"{division}_{benchmark}"
    cfg = get_ruleset(ruleset).configs.get(name)
    if cfg is None:  # not official: the benchmarks outside the tables are read only then
        cfg = ruleset_with(ruleset, extra_benchmarks).configs.get(name)
    if cfg is None:
        return None
    s = State(lambda _n: None, frozenset())
    if cfg.begin is not None:
        cfg.begin(s)
    if state:
        s.update(state)
    md = {k: v for k, v in (("samples_count", samples_count), ("epoch_num", epoch_num)) if v is not None}
    v = {"value": value, "metadata": md}
    for rule in cfg.keys:
        if rule.atleast_one is not None:
            try:
                return bool(rule.atleast_one.fn(s, v, Line(0, rule.name, 0.0, v)))
            except Exception:
                return False
    return None


__all__ = [
    "ComplianceReport",
    "available_rulesets",
    "check_file",
    "get_ruleset",
    "jsonable",
    "math",
    "ruleset_with",
    "suggest_ruleset",
    "target_reached",
]
