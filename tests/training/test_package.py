"""Package checker: layout, system descriptions, compliance, seeds, RCPs, bypass files, exit status.

Every generated package is also given to mlperf-logging 4.1.68's package checker (on its own copy,
since it writes scaling.json files) and the verdicts must agree, except where proctor follows the
rules against the official tool (documented in docs/deviations.md and asserted as such here).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from proctor.training.package import check_package

from .results_pkg import SYSTEM, llama_log, write_package

GOOD = [175104 + 512 * i for i in range(10)]  # olympic mean 177408: faster than the RCP, within limits
FAST = [120000] * 10
MIN = [70.0 + i for i in range(10)]


def _official_verdict(root: Path, ruleset: str = "6.1.0", rcp_bypass: bool = False) -> bool | None:
    pc = pytest.importorskip("mlperf_logging.package_checker.package_checker")
    systems_ok = pc.check_systems(str(root), "training", ruleset)
    results_ok = pc.check_training_result_files(
        str(root), "training", ruleset, True, False, rcp_bypass, False, False
    )
    return bool(systems_ok and results_ok)


Mutate = Callable[[Path], None]


def _both(
    tmp_path: Path, build: Callable[[Path], Path], official: bool = True, **kw
) -> tuple[bool, bool | None]:
    mine = check_package(build(tmp_path / "proctor"), **kw)
    theirs = (
        _official_verdict(build(tmp_path / "official"), rcp_bypass=kw.get("rcp_bypass", False))
        if official
        else None
    )
    return mine.valid, theirs


def _pkg(
    samples: list[int] = GOOD,
    *,
    failed: tuple[int, ...] = (),
    division: str = "closed",
    sys_over: dict | None = None,
    after: Mutate | None = None,
) -> Callable[[Path], Path]:
    def build(root: Path) -> Path:
        write_package(
            root,
            {"sys1": {"llama31_8b": (samples, MIN)}},
            failed=failed,
            division=division,
            system_overrides=sys_over,
        )
        if after:
            after(root)
        return root

    return build


official = pytest.mark.official


@official
def test_valid_package_passes_in_both(tmp_path: Path) -> None:
    rep = check_package(_pkg()(tmp_path / "p"))
    assert rep.valid, [f.to_dict() for f in rep.findings if f.failed]
    assert len(rep.rcp) == 1 and rep.rcp[0].passed and rep.rcp[0].rcp == "found"
    assert _official_verdict(_pkg()(tmp_path / "o")) is True
    assert not (tmp_path / "p" / "results" / "sys1" / "llama31_8b" / "scaling.json").exists()


@official
@pytest.mark.parametrize(
    ("name", "build", "expected"),
    [
        ("missing_field", _pkg(after=lambda r: _edit_system(r, drop="cooling")), False),
        ("bad_status", _pkg(sys_over={"status": "available"}), False),
        ("nine_runs", _pkg(after=lambda r: (r / "results/sys1/llama31_8b/result_9.txt").unlink()), False),
        ("one_noncompliant", _pkg(failed=(3,)), True),
        ("two_noncompliant", _pkg(failed=(3, 4)), False),
        ("rcp_fail", _pkg(FAST), False),
        (
            "rcp_fail_system_bypass",
            _pkg(FAST, after=lambda r: _params(r / "results/sys1", "rcp-bypass")),
            True,
        ),
        ("open_division_no_rcp", _pkg(FAST, division="open"), True),
        ("unknown_benchmark_skipped", _pkg(after=lambda r: _copy_bench(r, "resnet")), True),
    ],
)
def test_verdicts_match_official(
    tmp_path: Path, name: str, build: Callable[[Path], Path], expected: bool
) -> None:
    mine, theirs = _both(tmp_path, build)
    assert (mine, theirs) == (expected, expected), name


@official
def test_duplicate_seeds_fail_in_both(tmp_path: Path) -> None:
    def dup(root: Path) -> None:
        d = root / "results/sys1/llama31_8b"
        llama_log(
            d / "result_5.txt", samples=GOOD[5], minutes=MIN[5], seed=1000
        )  # same seed/line as result_0

    mine, theirs = _both(tmp_path, _pkg(after=dup))
    assert (mine, theirs) == (False, False)
    rep = check_package(tmp_path / "proctor")
    assert any(f.rule.startswith("seed") and f.failed for f in rep.findings)
    assert check_package(tmp_path / "proctor", seed_bypass=True).valid


@official
def test_params_file_with_newline_counts_in_proctor_only(tmp_path: Path) -> None:
    """002 §13 says put the flags in the file; the official checker only sees a last line without newline."""
    build = _pkg(FAST, after=lambda r: _params(r / "results/sys1/llama31_8b", "rcp-bypass\n"))
    mine, theirs = _both(tmp_path, build)
    assert (mine, theirs) == (True, False)
    # the package root is a place the rules name too
    root_level = check_package(_pkg(FAST, after=lambda r: _params(r, "rcp-bypass\n"))(tmp_path / "root"))
    assert root_level.valid and root_level.rcp[0].bypassed


def test_findings_name_what_is_wrong(tmp_path: Path) -> None:
    root = _pkg(after=lambda r: _edit_system(r, drop="framework"), sys_over={"status": "GA"})(tmp_path / "p")
    (root / "results/sys1/llama31_8b/notes.md").write_text("x")
    rep = check_package(root)
    rules = {(f.rule, f.key) for f in rep.findings if f.failed}
    assert ("system_field", "framework") in rules and ("system_status", "status") in rules
    assert any(f.rule == "file_names" and not f.failed for f in rep.findings)
    orphan = _pkg()(tmp_path / "q")
    (orphan / "systems/sys1.json").unlink()
    assert not check_package(orphan).valid


def test_set_scaling_writes_the_normalization(tmp_path: Path) -> None:
    root = _pkg()(tmp_path / "p")
    rep = check_package(root, set_scaling=True)
    factor = json.loads((root / "results/sys1/llama31_8b/scaling.json").read_text())["scaling_factor"]
    assert factor == pytest.approx(rep.rcp[0].rcp_mean / rep.rcp[0].submission_mean) and factor > 1


def test_cli_exit_status(tmp_path: Path) -> None:
    from proctor.cli.apps import app
    from proctor.cli.main import _register

    _register()
    good = _pkg()(tmp_path / "good")
    res = CliRunner().invoke(app, ["training", "check-package", str(good), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["valid"] is True
    bad = _pkg(FAST)(tmp_path / "bad")
    res = CliRunner().invoke(app, ["training", "check-package", str(bad)])
    assert res.exit_code == 1 and "PACKAGE INVALID" in res.output
    assert CliRunner().invoke(app, ["training", "check-package", str(bad), "--rcp-bypass"]).exit_code == 0


def _edit_system(root: Path, drop: str) -> None:
    p = root / "systems/sys1.json"
    obj = json.loads(p.read_text())
    obj.pop(drop)
    p.write_text(json.dumps(obj))


def _params(folder: Path, text: str) -> None:
    (folder / "package_checker_params").write_text(text)


def _copy_bench(root: Path, name: str) -> None:
    src = root / "results/sys1/llama31_8b"
    dst = root / "results/sys1" / name
    dst.mkdir()
    (dst / "result_0.txt").write_text((src / "result_0.txt").read_text())


assert SYSTEM["status"] == "Available on-premise"


# M > N runs (002 §12): "it is also allowed to run M>N independent runs as a group and to designate N
# consecutive runs ... Submitting the full run set ... is optional": check-package accepts the folder
# and judges the median window, as `score` scores it; the official package checker wants exactly N.
TWELVE = [175104 + 512 * (i % 10) for i in range(12)]
TWELVE_MIN = [70.0 + i for i in range(12)]


def _twelve(failed: tuple[int, ...] = (), runs: int = 12) -> Callable[[Path], Path]:
    def build(root: Path) -> Path:
        write_package(root, {"sys1": {"llama31_8b": (TWELVE[:runs], TWELVE_MIN[:runs])}}, failed=failed)
        return root

    return build


def _score_valid(root: Path, *, compliance: bool) -> bool:
    from proctor.training.package import default_compliance
    from proctor.training.runs import read_run_set
    from proctor.training.scoring import score_run_set

    bdir = root / "results/sys1/llama31_8b"
    comp = default_compliance("6.1.0")
    assert comp is not None
    pred = (lambda p: comp(p, "6.1.0", "llama31_8b")[0]) if compliance else None
    return score_run_set(read_run_set(bdir, ruleset="6.1.0"), compliance=pred).valid


@pytest.mark.parametrize(
    ("failed", "runs", "expected"),
    [
        ((), 12, True),  # the full set of 12: the median window of 10 is the result
        ((0, 1), 12, True),  # the first window holds both failures: infinite, not the median
        ((0, 5, 11), 12, False),  # every window holds two failures: the median window is invalid
        ((), 9, False),  # fewer than N
    ],
)
def test_more_runs_than_required_check_package_and_score_agree(
    tmp_path: Path, failed: tuple[int, ...], runs: int, expected: bool
) -> None:
    root = _twelve(failed, runs)(tmp_path / "p")
    rep = check_package(root)
    assert rep.valid is expected, [f.to_dict() for f in rep.findings if f.failed]
    assert _score_valid(root, compliance=True) is expected
    assert _score_valid(root, compliance=False) is expected
    window = [f for f in rep.findings if f.rule == "run_window"]
    if runs > 10:
        assert len(window) == 1 and len(window[0].value) == 10
        assert window[0].source is not None and window[0].source.startswith("002 §12")
        assert window[0].failed is (not expected)
        assert len(rep.rcp) == 1 and rep.rcp[0].passed is expected  # RCPs: on the scored window
    else:
        assert any(f.rule == "run_count" and f.failed and f.expected == 10 for f in rep.findings)


@official
def test_more_runs_than_required_official_rejects_proctor_accepts(tmp_path: Path) -> None:
    """The difference docs/deviations.md lists: the official checker wants exactly N result files."""
    mine, theirs = _both(tmp_path, _twelve())
    assert (mine, theirs) == (True, False)


def test_more_runs_than_required_cli(tmp_path: Path) -> None:
    from proctor.cli.apps import app
    from proctor.cli.main import _register

    _register()
    root = _twelve()(tmp_path / "p")
    res = CliRunner().invoke(app, ["training", "check-package", str(root), "--json"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["training", "score", str(root / "results/sys1/llama31_8b"), "--json"])
    assert res.exit_code == 0, res.output
    assert len(json.loads(res.output)[0]["used"]) == 10
    nine = _twelve(runs=9)(tmp_path / "nine")
    assert CliRunner().invoke(app, ["training", "check-package", str(nine)]).exit_code == 1
    score = CliRunner().invoke(app, ["training", "score", str(nine / "results/sys1/llama31_8b")])
    assert score.exit_code == 1
