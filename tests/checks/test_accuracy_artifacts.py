"""SDXL's images (and WAN-2.2's videos) in a result's accuracy folder, as each round's official checker
requires them (REQUIRED_ACC_BENCHMARK), with the switch that skips the check: built results in
tmp_path with the files present, missing, partly there, with the switch, per division and round."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.checks.accuracy_artifacts import RULE, SKIP_SWITCH, check_accuracy_artifacts
from proctor.checks.submission import check_submission
from proctor.findings import Severity
from proctor.rules.inference_rounds import round_table
from proctor.rules.rounds import ROUNDS
from tests.checks import test_rounds as built

SDXL = "stable-diffusion-xl"
WAN = "wan-2.2-t2v-a14b"
V51_IMAGES = ("2747", "2235", "2165", "1515", "1538", "1367", "2419", "4629", "3657", "4532")
SDXL_ACC = "Accuracy Results: {'FID_SCORE': '23.5', 'CLIP_SCORE': '31.75'}\n"


def _sdxl_v51(root: Path) -> None:
    """A v5.1 SDXL datacenter result: Offline and Server (20 s bound), audits TEST01 and TEST04."""
    psc = {"effective_performance_sample_count": "5000"}
    audits = ("TEST01", "TEST04")
    built._result(root, SDXL, "Offline", "offline", "v5.1", psc, 5000, SDXL_ACC, audits)
    edits = {**psc, "effective_target_latency_ns": "20000000000"}
    built._result(root, SDXL, "Server", "server", "v5.1", edits, 5000, SDXL_ACC, audits)


def _accdirs(root: Path) -> list[Path]:
    return sorted(root.glob(f"*/*/results/*/{SDXL}/*/accuracy"))


def with_images(root: Path, stems: tuple[str, ...] = V51_IMAGES, captions: bool = True) -> Path:
    for acc in _accdirs(root):
        (acc / "images").mkdir(exist_ok=True)
        for stem in stems:
            (acc / "images" / f"{stem}.png").write_bytes(b"\x89PNG\r\n\x1a\n")
        if captions:
            (acc / "images" / "captions.txt").write_text("a prompt per image\n")
    return root


@pytest.fixture
def sdxl_tree(tmp_path: Path) -> Path:
    return built._build(tmp_path, _sdxl_v51)


def _mine(report) -> list:  # type: ignore[no-untyped-def]
    return [f for f in report.findings if f.rule == RULE]


def test_sdxl_result_without_its_images_is_rejected_as_the_official_does(sdxl_tree: Path) -> None:
    report = check_submission(sdxl_tree, "v5.1")
    mine = _mine(report)
    assert [Path(f.path).parent for f in mine] == _accdirs(sdxl_tree)  # one per result, naming the folder
    assert all(f.failed and "2747.png" in f.message and "captions.txt" in f.message for f in mine)
    assert all("REQUIRED_ACC_BENCHMARK" in (f.source or "") and "v5.1.1" in (f.source or "") for f in mine)
    assert [f.rule for f in report.findings if f.failed] == [RULE, RULE]
    assert not report.valid


def test_sdxl_result_with_its_images_passes(sdxl_tree: Path) -> None:
    report = check_submission(with_images(sdxl_tree), "v5.1")
    assert report.valid and _mine(report) == [], [f.message for f in report.findings if f.failed]


def test_the_skip_switch_skips_the_check_and_says_so(sdxl_tree: Path) -> None:
    report = check_submission(sdxl_tree, "v5.1", skip_extra_accuracy_files=True)
    assert report.valid
    assert [f.severity for f in _mine(report)] == [Severity.INFO, Severity.INFO]
    assert all(SKIP_SWITCH in f.message for f in _mine(report))


def test_cli_switch_has_the_official_name(sdxl_tree: Path) -> None:
    assert built._cli("check", "submission", str(sdxl_tree), "--round", "v5.1").exit_code == 1
    res = built._cli("check", "submission", str(sdxl_tree), "--round", "v5.1", SKIP_SWITCH)
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize(
    ("stems", "captions", "missing", "warnings"),
    [
        (V51_IMAGES, True, [], 0),
        (V51_IMAGES[2:], True, ["2747.png", "2235.png"], 0),
        (V51_IMAGES, False, [], 1),  # the official names captions.txt but does not fail on it
        ((), True, list(f"{s}.png" for s in V51_IMAGES), 0),
    ],
)
def test_each_missing_image_is_named(
    sdxl_tree: Path, stems: tuple[str, ...], captions: bool, missing: list[str], warnings: int
) -> None:
    report = check_submission(with_images(sdxl_tree, stems, captions), "v5.1")
    errors = [f for f in _mine(report) if f.failed]
    assert len(errors) == (2 if missing else 0)
    assert all(f.message.startswith(f"missing {', '.join(missing)}:") for f in errors)
    assert sum(f.severity is Severity.WARNING for f in _mine(report)) == 2 * warnings
    assert report.valid is not missing


def test_names_count_up_to_their_first_dot_and_only_files(tmp_path: Path) -> None:
    """As the official's `f.split(".")[0]` over os.path.isfile entries: 2747.jpeg counts, a folder
    named 2235.png does not."""
    art = round_table("v5.1").accuracy_artifacts[SDXL]
    images = tmp_path / "images"
    images.mkdir()
    for stem in V51_IMAGES[2:]:
        (images / f"{stem}.png").write_bytes(b"")
    (images / "2747.jpeg").write_bytes(b"")
    (images / "2235.png").mkdir()
    (images / "captions.tsv").write_text("x\n")
    found = check_accuracy_artifacts(tmp_path, art, closed=True)
    assert [(f.severity, f.message.split(":")[0]) for f in found] == [(Severity.ERROR, "missing 2235.png")]


@pytest.mark.parametrize(("version", "division_error"), [("v4.1", False), ("v5.1", False), ("v6.0", True)])
def test_open_division_follows_its_rounds_checker(tmp_path: Path, version: str, division_error: bool) -> None:
    """v4.1-v5.1 keep an open result whose accuracy check failed; the v6.x checker fails it."""
    art = round_table(version).accuracy_artifacts[SDXL]
    [found] = check_accuracy_artifacts(tmp_path, art, closed=False)
    assert found.failed is division_error
    assert check_accuracy_artifacts(tmp_path, art, closed=True)[0].failed


def test_each_round_asks_its_own_checkers_files() -> None:
    sdxl = {v: round_table(v).accuracy_artifacts.get(SDXL) for v in ROUNDS}
    assert sdxl["v5.0"] is None and sdxl["v6.1"] is None  # v5.0.1 lists no v5.0 images; v6.1 has no SDXL
    assert sdxl["v5.1"] is not None and sdxl["v5.1"].stems == V51_IMAGES
    lists = [a.stems for a in sdxl.values() if a is not None]
    assert len(lists) == 3 and all(len(s) == 10 for s in lists) and len(set(lists)) == 3
    wan = {v: round_table(v).accuracy_artifacts.get(WAN) for v in ROUNDS}
    assert [v for v, a in wan.items() if a is not None] == ["v6.0", "v6.1"]
    assert all(a.folder == "videos" and a.suffix == ".mp4" for a in wan.values() if a is not None)
    assert wan["v6.0"].stems != wan["v6.1"].stems  # type: ignore[union-attr]


def test_no_artifacts_no_findings(tmp_path: Path) -> None:
    assert check_accuracy_artifacts(tmp_path, None, closed=True) == []


NAMES = st.sampled_from([*V51_IMAGES, "captions", "x", "", ".", "2747.", ".2747", "2747.png.bak", "é"])


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.lists(st.tuples(NAMES, st.sampled_from(["", ".png", ".txt", ".jpeg"]), st.booleans()), max_size=15))
def test_any_folder_contents_give_the_official_verdict(tmp_path_factory: pytest.TempPathFactory, files) -> None:  # type: ignore[no-untyped-def]
    art = round_table("v5.1").accuracy_artifacts[SDXL]
    acc = tmp_path_factory.mktemp("acc")
    (acc / "images").mkdir()
    present: set[str] = set()
    for stem, ext, as_dir in files:
        name = stem + ext
        if not name or name in (".", "..") or (acc / "images" / name).exists():
            continue
        if as_dir:
            (acc / "images" / name).mkdir()
        else:
            (acc / "images" / name).write_bytes(b"")
            present.add(name.split(".")[0])
    found = check_accuracy_artifacts(acc, art, closed=True)
    missing = [s for s in art.stems if s not in present]
    errors = [f for f in found if f.failed]
    assert len(errors) == (1 if missing else 0)
    if missing:
        assert errors[0].message.startswith("missing " + ", ".join(f"{s}.png" for s in missing) + ":")
    assert any("captions" in (f.path or "") for f in found) is ("captions" not in present)
