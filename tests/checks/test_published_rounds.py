"""Differential check on published results: every submitter folder of an `inference_results_vX.Y`
checkout, checked with `--round vX.Y`, result by result against the official checker of that tag:
proctor accepts each result the official accepts unless an error that cites its rule says otherwise,
rejects each result the official rejects, and raises no error without a cited rule beside a result
the official accepts (a folder both reject, e.g. for a file the checkout lacks, is agreement).
Without the official checker, no error may lack its rule.

Skipped unless PROCTOR_RESULTS_V41 / PROCTOR_RESULTS_V50 / PROCTOR_RESULTS_V51 point at a checkout of
mlcommons/inference_results_v4.1 / _v5.0 / _v5.1 (its closed/, open/, network/ folders only: the
official checker refuses other files at the root); the official comparison also needs
PROCTOR_INFERENCE_REPO_V41 / _V50 / _V51, a checkout of mlcommons/inference at v4.1 / v5.0.1 / v5.1.1.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from proctor.checks.submission import check_submission
from proctor.findings import Finding
from tests.checks import test_rounds as built

ROUNDS = {"v4.1": "V41", "v5.0": "V50", "v5.1": "V51"}
DIVISIONS = ("closed", "network", "open")


def _submitters(root: Path) -> list[Path]:
    return sorted(s for d in DIVISIONS if (root / d).is_dir() for s in (root / d).iterdir() if s.is_dir())


def _uncited(findings: list[Finding]) -> list[str]:
    return [f"{f.rule}: {f.path}: {f.message}" for f in findings if f.failed and not f.source]


def _official_results(lines: list[str], prefix: str) -> tuple[set[str], set[str]]:
    """The result folders (relative to the results root) the official lists as accepted and rejected."""
    text = "\n".join(lines)
    ok = {m for m in re.findall(r"INFO\] Results (\S+) \S+", text) if m.startswith(prefix)}
    no = {m for m in re.findall(r"ERROR\] NoResults (\S+)", text) if m.startswith(prefix)}
    return ok, no


def _under(finding: Finding, root: Path, result: str) -> bool:
    """The finding is about this result: its results/, compliance/ or measurements/ folder."""
    div, sub, _, *rest = Path(result).parts
    return any(
        finding.path == str(base) or finding.path.startswith(str(base) + os.sep)
        for base in (root / div / sub / part / Path(*rest) for part in ("results", "compliance", "measurements"))
    )


@pytest.mark.parametrize("version", list(ROUNDS))
def test_published_round_agrees_with_the_official_checker(version: str, tmp_path: Path) -> None:
    results = os.environ.get(f"PROCTOR_RESULTS_{ROUNDS[version]}")
    if not results:
        pytest.skip(f"PROCTOR_RESULTS_{ROUNDS[version]} is not set (a checkout of inference_results_{version})")
    repo = os.environ.get(f"PROCTOR_INFERENCE_REPO_{ROUNDS[version]}")
    subs = _submitters(Path(results))
    assert subs, f"{results}: no <division>/<submitter> folders"
    problems: dict[str, list[str]] = {}
    official_runs: dict[str, list[str]] = {}
    for sub in subs:
        report = check_submission(sub, version)
        root = Path(report.results[0].path).parents[5] if report.results else sub.resolve().parents[1]
        rel = {str(Path(r.path).relative_to(root)): r for r in report.results}
        where = f"{sub.parent.name}/{sub.name}"
        if not repo:
            if bad := _uncited(report.findings):
                problems[where] = bad[:5]
            continue
        from tests.support.official_submission import run_official_checker

        if sub.name not in official_runs:  # the official checker filters on the submitter's name, every division
            official_runs[sub.name] = run_official_checker(
                Path(repo), Path(results), version=version, submitter=sub.name, csv=tmp_path / f"{sub.name}.csv"
            ).lines
        ok, no = _official_results(official_runs[sub.name], where + "/")
        found: list[str] = []
        for path, row in sorted(rel.items()):
            mine = [f for f in report.findings if f.failed and _under(f, root, path)]
            if path in ok and not row.valid and not any(f.source for f in mine):
                found.append(f"{path}: official accepts, proctor rejects without a cited rule: {_uncited(mine)[:2]}")
            if path not in ok and row.valid:
                found.append(f"{path}: official rejects, proctor accepts")
        rejected = (no | set(rel)) - ok  # what both reject may fail for any reason (a file the checkout lacks)
        for line in _uncited([f for f in report.findings if not any(_under(f, root, r) for r in rejected)]):
            found.append(f"{line} (no rule cited, beside results the official accepts)")
        if found:
            problems[where] = found[:5]
    assert not problems, problems


# The trees of test_rounds.py, given what only the official checker of those tags asks for (a copy of
# mlperf.conf beside user.conf, code/<benchmark>/, calibration.md, a summary in accuracy/): the
# official checker of the round accepts them and reports the metrics proctor reports.
BUILT = {"v4.1": ("_bert_v41", "_gptj_v41"), "v5.0": ("_llama2_interactive_v50",), "v5.1": ("_llama2_v51",)}
CONF_AT = {"v4.1": "mlperf.conf", "v5.0": "loadgen/mlperf.conf", "v5.1": "loadgen/mlperf.conf"}


def _official_extras(root: Path, conf: Path) -> None:
    """What only the official checker of those tags asks for besides what proctor checks."""
    import shutil

    sub = root / "closed" / built.SUB
    (sub / "calibration.md").write_text("calibration: none (FP32)\n")
    for scen in sub.glob("results/*/*/*"):
        (sub / "code" / scen.parent.name).mkdir(parents=True, exist_ok=True)
        (sub / "code" / scen.parent.name / "README.md").write_text("how to run\n")
        shutil.copy(conf, sub / "measurements" / scen.parents[1].name / scen.parent.name / scen.name / "mlperf.conf")
        shutil.copy(scen / "performance/run_1/mlperf_log_summary.txt", scen / "accuracy/mlperf_log_summary.txt")


@pytest.mark.parametrize("version", list(BUILT))
def test_official_checker_of_the_round_agrees_on_built_results(version: str, tmp_path: Path) -> None:
    import csv

    from tests.support.official_submission import run_official_checker

    repo = os.environ.get(f"PROCTOR_INFERENCE_REPO_{ROUNDS[version]}")
    if not repo:
        pytest.skip(f"PROCTOR_INFERENCE_REPO_{ROUNDS[version]} is not set (mlcommons/inference at {version})")
    root = built._build(tmp_path, *(getattr(built, name) for name in BUILT[version]))
    _official_extras(root, Path(repo) / CONF_AT[version])
    report = check_submission(root, version)
    official = run_official_checker(
        Path(repo), root, version=version, submitter=built.SUB, csv=tmp_path / "official.csv"
    )
    assert report.valid and not official.errors, official.errors[:5]
    with (tmp_path / "official.csv").open() as fh:
        theirs = {(r["Model"], r["Scenario"]): float(r["Result"]) for r in csv.DictReader(fh)}
    # the official names a v5.0 interactive result's scenario Server; proctor names it Interactive
    ours = {(r.benchmark, "Server" if r.scenario == "Interactive" and version == "v5.0" else r.scenario): r.value
            for r in report.results}  # fmt: skip
    assert ours == pytest.approx(theirs)


@pytest.mark.parametrize(("images", "switch", "valid"), [(False, False, False), (True, False, True), (False, True, True)])
def test_official_checker_of_v51_agrees_on_sdxl_images(tmp_path: Path, images: bool, switch: bool, valid: bool) -> None:
    """SDXL's accuracy/images: both checkers reject a result without them, accept it with them, and
    accept it without them under --skip-extra-accuracy-files-check."""
    from tests.checks.test_accuracy_artifacts import _sdxl_v51, with_images
    from tests.support.official_submission import run_official_checker

    repo = os.environ.get("PROCTOR_INFERENCE_REPO_V51")
    if not repo:
        pytest.skip("PROCTOR_INFERENCE_REPO_V51 is not set (mlcommons/inference at v5.1.1)")
    root = built._build(tmp_path, _sdxl_v51)
    _official_extras(root, Path(repo) / CONF_AT["v5.1"])
    if images:
        with_images(root)
    flag = ["--skip-extra-accuracy-files-check"] if switch else []
    report = check_submission(root, "v5.1", skip_extra_accuracy_files=switch)
    official = run_official_checker(
        Path(repo), root, version="v5.1", submitter=built.SUB, csv=tmp_path / "o.csv", extra_args=flag
    )
    assert report.valid is valid, [f.message for f in report.findings if f.failed]
    assert (official.returncode == 0 and not official.errors) is valid, official.errors[:5]
    if not valid:
        assert any("expected to have the following extra files" in e for e in official.errors)
