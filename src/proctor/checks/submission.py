"""The submission checker: an official-layout tree in, findings and per-result metrics out.

Layout (the official one): `<division>/<submitter>/{systems,results,measurements,code,compliance}`,
with `results/<system>/<benchmark>/<Scenario>/performance/run_1/mlperf_log_{detail,summary}.txt` and
`results/<system>/<benchmark>/<Scenario>/accuracy/{accuracy.txt,mlperf_log_accuracy.json,
mlperf_log_detail.txt}`. Only the detail logs are parsed (as the official checker does), so logs
from proctor and from the official LoadGen are read alike. Every finding names the file to fix.
This module walks the tree and decides what applies; the rules live in `performance`,
`accuracy`, `inferred` and `system_description`.
"""

from __future__ import annotations

from pathlib import Path

from proctor import json_text
from proctor.checks.accuracy import check_accuracy, parse_accuracy_text
from proctor.checks.accuracy_artifacts import check_accuracy_artifacts
from proctor.checks.compliance import (
    ResultContext,
    check_accuracy_hash,
    check_audits,
    check_measurements,
    unreadable_text,
)
from proctor.checks.detail_log import DetailLogData, load_detail_log, short
from proctor.checks.e2e_rag import check_e2e_rag
from proctor.checks.inferred import ALLOWED as INFERRED_ALLOWED
from proctor.checks.inferred import SOURCE as INFERRED_SOURCE
from proctor.checks.loadgen_origin import UNOFFICIAL, check_loadgen_origin
from proctor.checks.metrics import Metric, result_metric
from proctor.checks.network import check_network_run, check_network_submitter
from proctor.checks.performance import RunRules, check_performance_log
from proctor.checks.power import PowerResult, check_power
from proctor.checks.rederive import check_rederived
from proctor.checks.speculative import check_speculative
from proctor.checks.system_description import SYSTEM_FIELDS, check_system_description, system_suites
from proctor.errors import LogFormatError, ProctorError
from proctor.findings import Finding, Severity, is_valid
from proctor.rules.inference import (
    DC_REQUIRED,
    EDGE_REQUIRED,
    RULES,
    Benchmark,
    Category,
    Suite,
    Variant,
)
from proctor.rules.inference_rounds import InferenceRound, round_table
from proctor.rules.rounds import CURRENT_ROUND
from proctor.submission_files import CODE_FOLDERS
from proctor.text_files import read_text
from proctor.trees import (
    DIR,
    FILE,
    LINK,
    MISSING,
    OTHER,
    kind,
    not_a_file,
    read_at_most,
    reading,
    real_root,
    scan,
)
from proctor.typed_records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["SYSTEM_FIELDS", "ResultRow", "SubmissionReport", "check_submission"]

DIVISIONS = ("closed", "network", "open")
PERF_FILES = ("mlperf_log_detail.txt", "mlperf_log_summary.txt")
ACC_FILES = ("accuracy.txt", "mlperf_log_accuracy.json", "mlperf_log_detail.txt")
ACCURACY_MODES = ("AccuracyOnly", "SubmissionRun")
SCENARIO_DIRS = {c.value.lower(): c for c in Category}
ACCURACY_RUN_SRC = (
    f"{RULES} §LoadGen Operation ('One LoadGen validation run is required for each ... result')"
)
DATASET_SRC = f"{RULES} §Benchmarks ('the accuracy test must be run with one copy of the ... dataset')"
OPEN_DATASET_SRC = (
    f"{RULES} §Relaxed constraints for the Open division ('An Open benchmark must use all the available samples "
    "in the dataset')"
)
CLOSED_MODEL_SRC = (
    f"{RULES} §Closed Division ('requires using pre-processing, post-processing, and model that is equivalent "
    "to the reference'); §Network Division inherits it"
)


@record(slots=True)
class ResultRow:
    division: str
    submitter: str
    system: str
    benchmark: str
    scenario: str
    metric: str
    value: float | None
    units: str
    valid: bool
    inferred_from: str | None = None
    path: str = ""
    power: PowerResult | None = None  # measured for power: the summary's power row

    def to_dict(self) -> dict[str, Any]:
        return {
            "division": self.division,
            "submitter": self.submitter,
            "system": self.system,
            "benchmark": self.benchmark,
            "scenario": self.scenario,
            "metric": self.metric,
            "value": self.value,
            "units": self.units,
            "valid": self.valid,
            "inferred_from": self.inferred_from,
            "path": self.path,
            "has_power": self.power is not None,
            "power_metric": self.power.metric if self.power else None,
            "power_units": self.power.units if self.power else None,
            "power_efficiency": self.power.efficiency if self.power else None,
        }


@record(slots=True)
class SubmissionReport:
    findings: list[Finding] = field(default_factory=list)
    results: list[ResultRow] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return is_valid(self.findings)

    @property
    def unofficial_logs(self) -> int:
        """Logs not from the official LoadGen, let through as warnings by the development switch."""
        return sum(f.rule == UNOFFICIAL for f in self.findings)

    @property
    def submittable(self) -> bool:
        """Valid, and every log from an official LoadGen release (the development switch aside)."""
        return self.valid and not self.unofficial_logs

    def to_dict(self) -> dict[str, Any]:
        def finding(f: Finding) -> dict[str, Any]:
            d: dict[str, Any] = {
                "path": f.path,
                "rule": f.rule,
                "message": f.message,
                "severity": f.severity.value,
            }
            for k in ("line", "key", "source"):
                if getattr(f, k) is not None:
                    d[k] = getattr(f, k)
            return d

        return {
            "valid": self.valid,
            "submittable": self.submittable,
            "findings": [finding(f) for f in self.findings],
            "results": [r.to_dict() for r in self.results],
        }


MAX_MODEL_MAPPING = 1 << 20  # a few names to a few names; read no more of model_mapping.json
MAX_ACCURACY_TXT = 16 << 20  # an accuracy script prints a few lines; read no more than this


def _dirs(path: Path, findings: list[Finding], *, strays: bool = False) -> list[Path]:
    """The visible sub-folders of `path` (a link is never one); an unreadable folder is a finding,
    not an exception. `strays`: a link, FIFO or device among them is a finding too (the levels
    above the submitter folders, which `_tree_findings` does not walk)."""
    try:
        entries = sorted(p for p in path.iterdir() if not p.name.startswith("."))
    except OSError as exc:
        findings.append(_unreadable(path, exc))
        return []
    out = []
    for p in entries:
        got = _kind(p)
        if got == DIR:
            out.append(p)
        elif strays and got in (LINK, OTHER):
            findings.append(_err("tree", p, not_a_file(p, got)))
    return out


def _kind(path: Path) -> str:
    """'dir', 'file' (regular), 'link' (it or a folder on its path: never followed), 'other' (FIFO,
    socket, device), 'missing', or 'error: <why>' (proctor.trees.kind)."""
    return kind(path)


def _tree_findings(sub: _Submitter) -> tuple[list[Finding], bool]:
    """(a finding per link, FIFO, socket or device in the submitter's folder, whether the walk saw
    it all). Links inside the folder are allowed under code/ and src/ only (published submissions
    link model variants there); nothing is read through any link."""
    found = scan(sub.root, links_ok_under=CODE_FOLDERS)
    out = [_err("tree", path, why) for path, why in found.problems]
    if found.more:
        out.append(_err("tree", sub.root, f"{found.more} more links, FIFOs or devices in this folder"))
    if found.stopped:
        out.append(_err("tree", sub.root, f"{found.stopped}; the folder was not checked"))
    return out, not found.stopped


def _unreadable(path: Path | str, exc: BaseException) -> Finding:
    why = getattr(exc, "strerror", None) or str(exc)
    where = getattr(exc, "filename", None) or path
    return _err("unreadable", where, f"cannot read {where}: {why}; fix its permissions or remove it")


def _file_problem(path: Path, rule: str, missing: str, **kw: Any) -> list[Finding]:
    """No finding when `path` is a regular file; else one saying it is missing, unreadable or not a file."""
    got = _kind(path)
    if got == FILE:
        return []
    if got == MISSING:
        return [_err(rule, path, missing, **kw)]
    if got.startswith("error"):
        return [_err("unreadable", path, f"cannot read it ({got[7:]}); fix its permissions", **kw)]
    if got == LINK:
        return [_err(rule, path, f"not read: {not_a_file(path, got)}", **kw)]
    return [_err(rule, path, "not a regular file (a folder, FIFO or device); put the file itself here", **kw)]


def _err(rule: str, path: Path | str, message: str, **kw: Any) -> Finding:
    return Finding(rule=rule, path=str(path), message=message, **kw)


@record(frozen=True, slots=True)
class _Submitter:
    root: Path
    division: str
    name: str
    version: str
    round: InferenceRound
    allow_unofficial: bool = False  # development: logs of proctor's engine are a warning, not an error
    skip_accuracy_artifacts: bool = False  # the official --skip-extra-accuracy-files-check

    @property
    def closed(self) -> bool:
        return self.division in ("closed", "network")


def check_submission(
    root: str | Path,
    version: str = CURRENT_ROUND,
    *,
    allow_unofficial_loadgen: bool = False,
    skip_extra_accuracy_files: bool = False,
) -> SubmissionReport:
    """Check a whole tree: `root` holds division folders, or is one `<division>/<submitter>` folder.
    `allow_unofficial_loadgen` (development only) reports logs not written by an official LoadGen
    release as warnings; the report is then still not `submittable`. `skip_extra_accuracy_files`:
    the official --skip-extra-accuracy-files-check (SDXL's images, WAN's videos are not looked for)."""
    with reading():  # one look at the tree: each kind looked up once, each log parsed once
        return _check_tree(real_root(root), version, allow_unofficial_loadgen, skip_extra_accuracy_files)


def _check_tree(root: Path, version: str, allow_unofficial_loadgen: bool, skip_extra_accuracy_files: bool) -> SubmissionReport:
    """check_submission on `root` (the user's links above it are theirs; below it none is followed)."""
    opts = (allow_unofficial_loadgen, skip_extra_accuracy_files)
    rnd = round_table(version)  # ValueError naming the known rounds
    report = SubmissionReport()
    if _kind(root) != "dir":
        report.findings.append(_err("layout", root, "not a directory"))
        return report
    if "dir" in (_kind(root / "results"), _kind(root / "systems")):
        _check_submitter(_Submitter(root, root.parent.name.lower(), root.name, version, rnd, *opts), report)
        return report
    found = False
    for div in _dirs(root, report.findings, strays=True):
        if div.name.lower() not in DIVISIONS:
            report.findings.append(
                _err("layout", div, f"'{div.name}' is not a division; use one of {', '.join(DIVISIONS)}")
            )
            continue
        for sub in _dirs(div, report.findings, strays=True):
            found = True
            _check_submitter(_Submitter(sub, div.name.lower(), sub.name, version, rnd, *opts), report)
    if not found:
        report.findings.append(
            _err(
                "layout",
                root,
                "no <division>/<submitter> folders found; expected closed|open|network/<submitter>/{systems,results,...}",
            )
        )
    return report


def _check_submitter(sub: _Submitter, report: SubmissionReport) -> None:
    n_results = len(report.results)
    tree, complete = _tree_findings(sub)
    report.findings.extend(tree)
    if not complete:  # past proctor's bounds: walking its layout would be unbounded too
        return
    try:
        _check_submitter_tree(sub, report)
    except (OSError, ProctorError) as exc:  # anything the walk did not expect still names its file
        report.findings.append(_unreadable(sub.root, exc))
    if len(report.results) == n_results and _kind(sub.root / "results") == "dir":
        report.findings.append(
            _err(
                "no_results",
                sub.root / "results",
                "no results found; expected results/<system>/<benchmark>/<scenario>/performance/run_1",
            )
        )


def _check_submitter_tree(sub: _Submitter, report: SubmissionReport) -> None:
    f = report.findings
    for name in ("systems", "results"):
        got = _kind(sub.root / name)
        if got.startswith("error"):
            f.append(_err("unreadable", sub.root / name, f"cannot read '{name}' ({got[7:]}); fix its permissions"))
        elif got != "dir":
            f.append(_err("layout", sub.root / name, f"missing '{name}' folder"))
    code = sub.round.layout.code_folder
    if "dir" not in (_kind(sub.root / "src"), _kind(sub.root / "code")):
        f.append(
            _err(
                "layout",
                sub.root / code,
                f"missing '{code}' folder (the implementation's source; the official checker requires it)",
                severity=Severity.WARNING,
            )
        )
    if _kind(sub.root / "results") != "dir":
        return
    if sub.division == "network":
        f.extend(check_network_submitter(sub.root))
    # the official reads model_mapping.json in the open division only
    mapping = _model_mapping(sub.root / "model_mapping.json", f) if sub.division == "open" else None
    for sysdir in _dirs(sub.root / "results", f):
        desc, found = check_system_description(
            sub.root / "systems" / f"{sysdir.name}.json", sub.division, sub.name
        )
        f.extend(found)
        for benchdir in _dirs(sysdir, f):
            _check_benchmark(sub, sysdir.name, system_suites(desc), benchdir, mapping, report)


def _model_mapping(path: Path, findings: list[Finding]) -> dict[str, str]:
    """Open division: `model_mapping.json` maps a submitter's model names to benchmark names (read as
    the official checker's json.load reads it; orjson's import alone cost more than a small tree's check)."""
    if _kind(path) == "missing":
        return {}
    problem = _file_problem(path, "model_mapping", "")
    if problem:
        findings += problem
        return {}
    try:
        with path.open("rb") as fh:
            raw = read_at_most(fh, MAX_MODEL_MAPPING)
    except OSError as exc:
        findings.append(_unreadable(path, exc))
        return {}
    if len(raw) > MAX_MODEL_MAPPING:
        findings.append(_err("model_mapping", path, f"larger than {MAX_MODEL_MAPPING} bytes: not a model mapping"))
        return {}
    try:
        data = json_text.loads(raw)
    except (ValueError, RecursionError) as exc:  # a UnicodeDecodeError is a ValueError
        findings.append(_err("model_mapping", path, f"not valid JSON: {exc}"))
        return {}
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        findings.append(_err("model_mapping", path, "must be a JSON object of model name -> benchmark name strings"))
        return {}
    return dict(data)


def _scenario_of(name: str) -> Category | None:
    return SCENARIO_DIRS.get(name.replace("-", "").replace("_", "").lower())


def _check_benchmark(
    sub: _Submitter,
    system: str,
    suites: tuple[Suite, ...],
    benchdir: Path,
    mapping: dict[str, str] | None,
    report: SubmissionReport,
) -> None:
    f = report.findings
    try:
        # as the round's official checker: its names, its model_mapping, model_mapping.json, its guess
        found = sub.round.folder_benchmark(benchdir.name, mapping)
    except KeyError as exc:
        f.append(
            _err(
                "benchmark_name",
                benchdir,
                f"{exc.args[0]} (in the {sub.version} benchmark table); name the folder as the submission layout does "
                "(e.g. resnet, llama2-70b-99.9, llama2-70b-interactive-99.9)"
                + (", or map it in model_mapping.json" if sub.division == "open" else ""),
            )
        )
        return
    variant = found.variant
    bench = variant.benchmark
    if sub.closed and not found.reference:
        f.append(
            _err(
                "benchmark_name",
                benchdir,
                f"'{benchdir.name}' names a model other than {bench.display}'s reference (read as {found.via}); "
                f"the {sub.division} division runs the reference model: name the folder {bench.name} "
                "or move the result to open",
                source=CLOSED_MODEL_SRC,
            )
        )
        return
    in_suites = tuple(s for s in suites if s in bench.qsl_size)
    if sub.closed and suites and not in_suites:
        f.append(
            _err(
                "suite",
                benchdir,
                f"{bench.display} is not a benchmark of the {'/'.join(s.value for s in suites)} suite "
                "in the rules; move it to open or drop it",
                source=f"{RULES} §Benchmarks",
            )
        )
    present: set[Category] = set()
    for scendir in _dirs(benchdir, f):
        cat = _scenario_of(scendir.name)
        if cat is None:
            f.append(
                _err(
                    "scenario_name",
                    scendir,
                    f"'{scendir.name}' is not a scenario; use SingleStream, MultiStream, Server, Interactive or Offline",
                )
            )
            continue
        if variant.interactive and cat is Category.SERVER:
            cat = Category.INTERACTIVE
        present.add(cat)
        try:
            _check_result(sub, system, suites, in_suites, variant, cat, scendir, report, found.official)
        except (OSError, ProctorError) as exc:
            f.append(_unreadable(scendir, exc))
    if not sub.closed:
        return  # open: "Scenario constraints are not applicable"
    for suite in in_suites:
        for group in bench.required.get(suite, ()):
            if not present.intersection(group):
                want = " or ".join(c.value for c in group)
                f.append(
                    _err(
                        "required_scenario",
                        benchdir,
                        f"{bench.display} in the {suite.value} suite requires a result for {want}; "
                        f"add results/{system}/{benchdir.name}/{group[0].value}",
                        source=DC_REQUIRED if suite is Suite.DATACENTER else EDGE_REQUIRED,
                    )
                )


def _json_text(value: object) -> str:
    """A log value as the log spells it (false, null), else short()."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return short(value)


def _equal_issue(sub: _Submitter, official: str, log: DetailLogData) -> list[Finding]:
    """The round's official checker requires equal issue mode for some models' runs."""
    need = sub.round.equal_issue
    if need is None or official not in need.models or (need.closed_only and not sub.closed):
        return []
    key = "effective_sample_concatenate_permutation"
    value = log.get(key)
    if value is True:
        return []
    return [
        _err(
            "equal_issue",
            log.path,
            f"{key} is {_json_text(value) if key in log else 'not logged'}: the {sub.version} checker requires "
            f"{official}'s runs in equal issue mode; run with the round's mlperf.conf (sample_concatenate_permutation = 1)",
            key=key,
            line=log.line_of(key),
            source=need.source,
        )
    ]


def _result_suites(bench: Benchmark, in_suites: tuple[Suite, ...], folder: str) -> tuple[Suite, ...]:
    """The suites a result is held to: edge for a `*-edge` folder (or one mapped to a `*-edge` name),
    else the system's that have it."""
    if folder.endswith("-edge") and Suite.EDGE in bench.qsl_size:
        return (Suite.EDGE,)
    return in_suites


def _required_psc(bench: Benchmark, in_suites: tuple[Suite, ...], folder: str) -> int:
    """The QSL size the performance sample count must reach (the edge size for `*-edge` folders)."""
    if folder.endswith("-edge") and Suite.EDGE in bench.qsl_size:
        return bench.qsl_size[Suite.EDGE]
    sizes = [bench.qsl_size[s] for s in in_suites] or list(bench.qsl_size.values())
    return min(sizes, default=0)


def _check_result(
    sub: _Submitter,
    system: str,
    suites: tuple[Suite, ...],
    in_suites: tuple[Suite, ...],
    variant: Variant,
    cat: Category,
    scendir: Path,
    report: SubmissionReport,
    official: str = "",
) -> None:
    """One result; `official`: the model name the round's official checker gives its folder."""
    bench = variant.benchmark
    local: list[Finding] = []
    perf = scendir / "performance" / "run_1"
    detail: DetailLogData | None = None
    corrected: dict[str, float | None] = {}  # result keys whose claim the log's numbers contradict
    inferred_from: Category | None = None
    if not bench.accuracy_only:
        for name in PERF_FILES:
            local += _file_problem(
                perf / name, "performance_log", f"missing {name}; copy the performance run's LoadGen output here"
            )
        if _kind(perf / "mlperf_log_detail.txt") == "file":
            detail, problems = load_detail_log(perf / "mlperf_log_detail.txt")
            local += problems + check_loadgen_origin(detail, sub.version, allow_unofficial=sub.allow_unofficial)
            if sub.division == "network":
                local += _network_sut_name(detail) + check_network_run(detail, bench)
            logged = _logged_scenario(detail, local)
            base = Category.SERVER if cat is Category.INTERACTIVE else cat
            if logged is not None and logged is not base:
                if (base, logged) in INFERRED_ALLOWED and Suite.EDGE in suites:
                    inferred_from = logged
                else:
                    local.append(
                        _err(
                            "scenario_mismatch",
                            detail.path,
                            f"the log is a {logged.value} run but sits under {scendir.name}"
                            + ("" if Suite.EDGE in suites else "; only edge systems may infer results"),
                            line=detail.line_of("effective_scenario"),
                            key="effective_scenario",
                            source=INFERRED_SOURCE,
                        )
                    )
            if problems or logged is None or (logged is not base and inferred_from is None):
                detail = None  # an unreadable or misplaced log says nothing about this result
            if detail is not None:
                rules = RunRules(
                    benchmark=bench,
                    category=cat,
                    run_category=inferred_from or cat,
                    seeds=sub.round.seeds,
                    version=sub.version,
                    closed=sub.closed,
                    min_performance_samples=_required_psc(bench, in_suites, variant.name),
                    suites=_result_suites(bench, in_suites, variant.name),
                )
                local += check_performance_log(detail, rules)
                local += _equal_issue(sub, official or variant.name, detail)
                if not any(f.rule == "detail_log_value" for f in local):  # else: said, nothing to derive from
                    summary = perf / "mlperf_log_summary.txt"
                    rederived = check_rederived(detail, summary if _kind(summary) == "file" else None)
                    local += rederived.findings
                    corrected = rederived.corrected
    local += _check_accuracy_dir(sub, variant, scendir, _result_suites(bench, in_suites, variant.name), cat)
    ctx = ResultContext(
        sub.root, system, scendir.parent.name, scendir.name, cat.value, scendir, sub.version, variant, detail,
        sub.allow_unofficial,
    )
    if sub.closed:  # open: "Compliance tests not needed"
        local += check_audits(ctx)
    local += check_measurements(ctx)
    local += check_speculative(ctx, sub.closed)
    local += check_e2e_rag(ctx, sub.closed)
    metric = _metric(sub.round, bench, cat, inferred_from, detail, local, corrected)
    power, found = check_power(ctx, inferred_from, metric.value)
    local += found
    report.findings.extend(local)
    report.results.append(
        ResultRow(
            division=sub.division,
            submitter=sub.name,
            system=system,
            benchmark=scendir.parent.name,
            scenario=cat.value,
            metric=metric.name,
            value=metric.value,
            units=metric.units,
            valid=is_valid(local),
            inferred_from=inferred_from.value if inferred_from else None,
            path=str(scendir),
            power=power,
        )
    )


def _dataset_coverage(
    log: DetailLogData, bench: Benchmark, suites: tuple[Suite, ...], cat: Category | None, *, closed: bool = True
) -> list[Finding]:
    """The accuracy run covers one copy of the benchmark's accuracy dataset (of the result's suite);
    an open result too ("must use all the available samples in the dataset")."""
    sizes = {bench.dataset_size(s) for s in suites} if suites else {bench.dataset_size()}
    sizes.discard(None)
    key = next((k for k in ("effective_accuracy_sample_count", "qsl_reported_total_count") if k in log), None)
    count = log.get(key) if key is not None else None
    if not sizes or not isinstance(count, int) or isinstance(count, bool) or count in sizes:
        return []
    size = max(s for s in sizes if s is not None)
    src = f"{DATASET_SRC if closed else OPEN_DATASET_SRC}; size: {bench.accuracy_dataset_source or bench.source}"
    where = dict(key=key, line=log.line_of(key) if key else None, source=src)
    tolerated = bench.accuracy_dataset_tolerated.get(cat) if cat is not None else None
    if tolerated is not None and count == tolerated:
        return [
            _err(
                "accuracy_dataset",
                log.path,
                f"the accuracy run covered {count} samples, the official checker's {cat.value} subset; "  # type: ignore[union-attr]
                f"the rules' {bench.dataset} dataset has {size}",
                severity=Severity.WARNING,
                expected=size,
                **where,
            )
        ]
    return [
        _err(
            "accuracy_dataset",
            log.path,
            f"the accuracy run covered {count} samples; it must use one copy of the "
            f"{bench.dataset} accuracy dataset ({size} samples)",
            expected=size,
            **where,
        )
    ]


NETWORK_SUT_NAME = "Network SUT"


def _network_sut_name(log: DetailLogData) -> list[Finding]:
    """Network division: the QDL's Name() must contain "Network SUT" (rules §QDL Constraints)."""
    name = log.get("sut_name")
    if not log.values or (isinstance(name, str) and NETWORK_SUT_NAME in name):
        return []
    return [
        _err(
            "network_sut_name",
            log.path,
            f"sut_name {short(name)} must contain '{NETWORK_SUT_NAME}': the QDL's Name() in the network division",
            key="sut_name",
            line=log.line_of("sut_name"),
            source=f"{RULES} §Network Division, QDL Constraints",
        )
    ]


def _logged_scenario(log: DetailLogData, findings: list[Finding]) -> Category | None:
    """The scenario the log was measured in; a finding when the key is missing or names none."""
    if not log.values:
        return None  # unreadable: already a finding
    value = log.get("effective_scenario")
    cat = _scenario_of(value) if isinstance(value, str) else None
    if cat is None:
        findings.append(
            _err(
                "detail_log_value" if "effective_scenario" in log else "detail_log_key",
                log.path,
                f"effective_scenario {short(value)} is not a LoadGen scenario "
                "(SingleStream, MultiStream, Server, Offline); regenerate the log"
                if "effective_scenario" in log
                else "key 'effective_scenario' is missing; the run did not start or the log was cut",
                line=log.line_of("effective_scenario"),
                key="effective_scenario",
            )
        )
    return cat


def _metric(
    rnd: InferenceRound,
    bench: Benchmark,
    cat: Category,
    inferred_from: Category | None,
    log: DetailLogData | None,
    findings: list[Finding],
    corrected: dict[str, float | None] | None = None,
) -> Metric:
    """The result's metric; a value its log's numbers contradict is replaced by what they give (None
    where they only bound it): the summary never reports a forged number."""
    if log is None:
        return Metric("accuracy only" if bench.accuracy_only else "n/a", None, "")
    field = rnd.result_field(bench, cat)
    if field is not None and inferred_from is None and field.key not in log and log.values:
        # the round's checker reads the result from this key (float() of a missing key stops it)
        findings.append(
            _err(
                "detail_log_key",
                log.path,
                f"key '{field.key}' is missing: the {rnd.name} checker reads {bench.display}'s {cat.value} "
                f"result ({field.name}) from it; run with the round's mlperf.conf settings"
                + (" (infer_token_latencies = 1)" if "inferred" in field.key else ""),
                key=field.key,
                source=rnd.source,
            )
        )
    values = {**log.values, **corrected} if corrected else log.values
    try:
        return result_metric(bench, cat, values, inferred_from, field)
    except (KeyError, ValueError, TypeError) as exc:
        findings.append(
            _err(
                "inferred_result",
                log.path,
                f"cannot infer {cat.value} from {inferred_from}: {exc}",
                source=INFERRED_SOURCE,
            )
        )
        return Metric("inferred", None, "")
    except (OverflowError, RecursionError) as exc:
        findings.append(_err("detail_log_value", log.path, f"a result value is not a usable number: {exc}"))
        return Metric("n/a", None, "")


def _check_accuracy_dir(
    sub: _Submitter, variant: Variant, scendir: Path, suites: tuple[Suite, ...] = (), cat: Category | None = None
) -> list[Finding]:
    """The accuracy run of a result: its files, its log, its dataset coverage and its score."""
    out: list[Finding] = []
    accdir = scendir / "accuracy"
    for name in ACC_FILES:
        out += _file_problem(
            accdir / name,
            "accuracy_log",
            f"missing {name}; every performance result needs its accuracy run (mode AccuracyOnly) "
            "and the accuracy script's output",
            source=ACCURACY_RUN_SRC,
        )
    if _kind(accdir / "mlperf_log_detail.txt") == "file":
        log, problems = load_detail_log(accdir / "mlperf_log_detail.txt")
        out += problems + _check_accuracy_log(log, variant.benchmark, suites, cat, closed=sub.closed)
        out += check_loadgen_origin(log, sub.version, allow_unofficial=sub.allow_unofficial)
    acc = accdir / "accuracy.txt"
    if _kind(acc) != "file":
        return out + check_accuracy_hash(accdir)
    try:
        text = read_text(acc, MAX_ACCURACY_TXT)  # as the official reads it: UTF-8, universal newlines
    except (OSError, LogFormatError) as exc:
        return out + [unreadable_text(acc, exc)]
    out += check_accuracy_hash(accdir, text)
    artifacts = sub.round.accuracy_artifacts.get(variant.benchmark.name)
    out += check_accuracy_artifacts(accdir, artifacts, closed=sub.closed, skip=sub.skip_accuracy_artifacts)
    values = parse_accuracy_text(text)
    if not values:
        out.append(_err("accuracy_log", acc, "no metric values found; keep the accuracy script's output"))
    elif sub.closed:  # open: "the submission must report the accuracy obtained"
        out += check_accuracy(variant.benchmark, variant.level, values, str(acc))[0]
    return out


def _check_accuracy_log(
    log: DetailLogData,
    bench: Benchmark,
    suites: tuple[Suite, ...] = (),
    cat: Category | None = None,
    *,
    closed: bool = True,
) -> list[Finding]:
    out: list[Finding] = []
    mode = log.get("effective_test_mode")
    if mode is not None and mode not in ACCURACY_MODES:
        out.append(
            _err(
                "test_mode",
                log.path,
                f"test mode {short(mode)} is not an accuracy run: the accuracy folder holds the run in "
                "AccuracyOnly mode over the whole dataset (a performance run's sampled responses score a subset)",
                key="effective_test_mode",
                line=log.line_of("effective_test_mode"),
                source=ACCURACY_RUN_SRC,
            )
        )
    out += _dataset_coverage(log, bench, suites, cat, closed=closed)
    for line, k, value in log.errors[:5]:
        out.append(
            _err(
                "loadgen_error",
                log.path,
                f"LoadGen logged an error at line {line}: {k} = {short(value)}",
                line=line,
                key=k,
            )
        )
    return out
