"""The results summary: one row per system as the official result_summarizer lays it out.

Row columns: division, availability, submitter, system, number_of_nodes, host_processor_model_name,
host_processors_count, accelerator_model_name, accelerators_count, framework, notes, private_id, one
score per benchmark of the ruleset, details_url, code_url. The detailed table adds per benchmark the
time to train, global batch size, samples to converge, RCP verdict and scaling factor.

Scores follow 002 §11: a run counts when it converged (run_stop status success) and, where proctor
has compliance tables for the ruleset, complies. `scaling.json` is applied when present; in the
closed division a passing RCP check's normalization is applied when there is no such file.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from proctor.findings import Finding
from proctor.rules.training import benchmarks
from proctor.rules.training.rulesets import CURRENT_RULESET
from proctor.training.package import ComplianceFn, default_compliance, read_system
from proctor.training.rcp import Policy, RcpCheck, check_rcp, olympic_mean
from proctor.training.runs import RunSet, read_run_set, result_files
from proctor.training.scoring import BenchmarkScore, Compliance, score_run_set
from proctor.trees import MISSING, is_dir, is_file, kind, real_root, replace
from proctor.typed_records import field, record

SPEC_COLUMNS = (
    "division",
    "availability",
    "submitter",
    "system",
    "number_of_nodes",
    "host_processor_model_name",
    "host_processors_count",
    "accelerator_model_name",
    "accelerators_count",
    "framework",
    "notes",
    "private_id",
)
URL_COLUMNS = ("details_url", "code_url")
DETAIL_METRICS = ("time_to_train", "Energy", "GBS", "samples_to_converge", "RCP", "rcp_scaling_factor")
RCP_LABELS = {"found": "Fail", "interpolated": "Interp. Fail", "missing": "Missing", "no_rcps": "No RCP"}


@record(slots=True)
class Summary:
    columns: list[str]
    rows: list[dict[str, Any]]
    detailed_columns: list[str]
    detailed: list[dict[str, Any]]
    findings: list[Finding] = field(default_factory=list)
    # Open results: the geometric mean of the final quality by the closed quality measure, which the
    # rules require an Open result to report (002 §9); not a column of the official summary's layout
    open_final_quality: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "summary": self.rows,
            "detailed": self.detailed,
            "open_final_quality": self.open_final_quality,
            "findings": [f.to_dict() for f in self.findings],
        }


def _url_prefix(ruleset: str) -> str:
    short = ruleset[:3] + ruleset[3:].replace(".0", "")
    return f"https://github.com/mlcommons/training_results_v{short}"


def _system_specs(desc: dict[str, Any], private_id: str) -> dict[str, Any]:
    def count(per_node: str) -> int | None:
        try:
            return int(desc[per_node]) * int(desc["number_of_nodes"])
        except (KeyError, TypeError, ValueError):
            return None

    return {
        "division": desc.get("division"),
        "availability": desc.get("status"),
        "submitter": desc.get("submitter"),
        "system": desc.get("system_name"),
        "number_of_nodes": desc.get("number_of_nodes"),
        "host_processor_model_name": desc.get("host_processor_model_name"),
        "host_processors_count": count("host_processors_per_node"),
        "accelerator_model_name": desc.get("accelerator_model_name"),
        "accelerators_count": count("accelerators_per_node"),
        "framework": desc.get("framework"),
        "notes": ";".join(s for s in (desc.get("hw_notes"), desc.get("sw_notes")) if s),
        "private_id": private_id,
    }


def _private_id(sys_dir: Path) -> str:
    path = sys_dir / "privateid.json"
    if not is_file(path):
        return ""
    try:
        return str(orjson.loads(path.read_bytes()).get("private_id", ""))[:200]
    except (OSError, orjson.JSONDecodeError, AttributeError):
        return ""


def system_dirs(package: str | os.PathLike[str]) -> list[Path]:
    """System folders with results: `PKG/results/<system>` (or `PKG/<system>` for a results/ folder).

    Empty for any other level (a benchmark folder, an empty folder); unreadable folders are skipped.
    """
    root = real_root(package)
    base = root / "results" if is_dir(root / "results") else root

    def entries(d: Path) -> list[Path]:
        try:
            return [p for p in d.iterdir() if is_dir(p)]  # a link is not followed
        except OSError:
            return []

    return sorted(
        p for p in entries(base) if p.name != "systems" and any(result_files(b) for b in entries(p))
    )


def system_bench_dirs(sys_dir: Path) -> list[Path]:
    try:
        return [p for p in sys_dir.iterdir() if is_dir(p) and result_files(p)]
    except OSError:
        return []


def _predicate(comp: ComplianceFn | None, ruleset: str, bench: str) -> Compliance | None:
    if comp is None:
        return None
    return lambda p: comp(p, ruleset, bench)[0]


def score_benchmark(
    bdir: Path,
    ruleset: str,
    division: str | None,
    comp: ComplianceFn | None,
    *,
    policy: Policy = "rules",
    rcp_bypass: bool = False,
) -> tuple[RunSet, BenchmarkScore, RcpCheck | None]:
    """One benchmark folder's runs, its score (002 §11) and, in the closed division, its RCP check,
    whose normalization applies when there is no scaling.json (the summary's per-benchmark figures)."""
    rs = read_run_set(bdir, ruleset=ruleset)
    rcp = None
    if division == "closed":
        rcp = check_rcp(rs, ruleset, bypass=rcp_bypass, policy=policy)
        if kind(bdir / "scaling.json") == MISSING and rcp.passed and not rcp.bypassed:
            rs.scaling_factor = rcp.scaling_factor
    return rs, score_run_set(rs, compliance=_predicate(comp, ruleset, bdir.name)), rcp


def summarize(
    packages: Sequence[str | os.PathLike[str]],
    ruleset: str = CURRENT_RULESET,
    *,
    compliance: ComplianceFn | None | str = "auto",
    policy: Policy = "rules",
    rcp_bypass: bool = False,
) -> Summary:
    """Summarize one or more submission folders (each with systems/ and results/ or system folders)."""
    comp = default_compliance(ruleset) if isinstance(compliance, str) else compliance
    benches = list(benchmarks.allowed_benchmarks(ruleset))
    rows: list[dict[str, Any]] = []
    detailed: list[dict[str, Any]] = []
    findings: list[Finding] = []
    extra: list[str] = []
    open_quality: list[dict[str, Any]] = []
    for pkg in map(real_root, packages):
        for sys_dir in system_dirs(pkg):
            desc_path = pkg / "systems" / f"{sys_dir.name}.json"
            desc, errs = (
                read_system(desc_path)
                if kind(desc_path) != MISSING
                else (
                    None,
                    [
                        Finding(
                            "system_json",
                            f"no systems/{sys_dir.name}.json: system skipped",
                            path=str(desc_path),
                        )
                    ],
                )
            )
            findings.extend(errs)
            if desc is None:
                continue
            specs = _system_specs(desc, _private_id(sys_dir))
            urls = {
                "details_url": f"{_url_prefix(ruleset)}/blob/main/{desc.get('submitter')}/systems/"
                f"{sys_dir.name}.json",
                "code_url": f"{_url_prefix(ruleset)}/blob/master/{desc.get('submitter')}/benchmarks",
            }
            scores: dict[str, Any] = {}
            det: dict[str, Any] = {}
            for bdir in sorted(p for p in system_bench_dirs(sys_dir)):
                bench = bdir.name
                if bench not in benches and bench not in extra:
                    extra.append(bench)
                rs, sc, rcp = score_benchmark(
                    bdir, ruleset, specs["division"], comp, policy=policy, rcp_bypass=rcp_bypass
                )
                findings.extend(f for f in sc.findings if f.failed)
                if specs["division"] == "open":
                    open_quality.append(
                        {
                            "system": specs["system"],
                            "benchmark": bench,
                            "final_quality_geomean": sc.final_quality_geomean,
                        }
                    )
                scores[bench] = sc.score_minutes
                det[f"{bench}:time_to_train"] = sc.score_minutes
                det[f"{bench}:GBS"] = rs.batch_size
                stc = olympic_mean(rs.samples(), benchmarks.olympic_drop(bench))
                det[f"{bench}:samples_to_converge"] = stc if math.isfinite(stc) else None
                det[f"{bench}:RCP"] = (
                    ""
                    if rcp is None
                    else ("Pass" if rcp.passed else RCP_LABELS.get(rcp.rcp, "Unknown state"))
                )
                det[f"{bench}:rcp_scaling_factor"] = rs.scaling_factor
            rows.append({**specs, **scores, **urls})
            detailed.append({**specs, **det, **urls})
    bench_cols = benches + extra
    columns = [*SPEC_COLUMNS, *bench_cols, *URL_COLUMNS]
    dcols = [*SPEC_COLUMNS, *(f"{b}:{m}" for b in bench_cols for m in DETAIL_METRICS), *URL_COLUMNS]
    rows = [{c: r.get(c) for c in columns} for r in rows]
    detailed = [{c: r.get(c) for c in dcols} for r in detailed]
    order = sorted(range(len(rows)), key=lambda i: tuple(str(rows[i][c] or "") for c in SPEC_COLUMNS))
    return Summary(
        columns, [rows[i] for i in order], dcols, [detailed[i] for i in order], findings, open_quality
    )


def to_csv(columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    """CSV as pandas writes it: None/NaN empty, floats in repr."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow(["" if r.get(c) is None or r.get(c) != r.get(c) else r.get(c) for c in columns])
    return buf.getvalue()


def write_outputs(summary: Summary, csv_path: str | os.PathLike[str]) -> list[Path]:
    """`X.csv`, `X_detailed.csv`, `X.json`, `X_detailed.json`, as the official `--csv X.csv` does.
    Each replaces what is there (never written through a link: TreeError)."""
    given = Path(csv_path)
    p = real_root(given.parent) / given.name
    stem = p.with_suffix("")
    det = Path(f"{stem}_detailed.csv")
    jp, djp = p.with_suffix(".json"), det.with_suffix(".json")
    opt = orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY
    replace(p, to_csv(summary.columns, summary.rows).encode("utf-8"))
    replace(det, to_csv(summary.detailed_columns, summary.detailed).encode("utf-8"))
    replace(jp, orjson.dumps(summary.rows, option=opt))
    replace(djp, orjson.dumps(summary.detailed, option=opt))
    return [p, det, jp, djp]
