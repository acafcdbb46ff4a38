"""`proctor submission package` and the checker's verdicts on what it assembles (and on broken copies)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checks"))
from checks_corpus import UT_EDGE, build_valid_tree  # noqa: E402

from proctor.checks.submission import check_submission  # noqa: E402


def _runs(tmp_path: Path) -> tuple[Path, Path]:
    """A runs folder (as proctor run/audit write them) made from the valid corpus tree."""
    tree = build_valid_tree(tmp_path / "t")
    sub = tree / "closed" / "UntetherAI"
    runs = tmp_path / "runs"
    for scen in sorted((sub / "results" / UT_EDGE / "resnet50").iterdir()):
        dst = runs / "resnet50" / scen.name
        shutil.copytree(scen, dst)
        for test in (sub / "compliance" / UT_EDGE / "resnet50" / scen.name).iterdir():
            shutil.copytree(test, dst / test.name)
        meas = sub / "measurements" / UT_EDGE / "resnet50" / scen.name
        shutil.copy(meas / f"{UT_EDGE}.json", dst / "measurements.json")
        for name in ("README.md", "user.conf"):
            shutil.copy(meas / name, dst / name)
    return runs, sub / "systems" / f"{UT_EDGE}.json"


@pytest.mark.parametrize("version", ["v4.1", "v6.1"])
def test_packaged_tree_passes_and_breakages_are_named(tmp_path: Path, cli, version: str) -> None:
    runs, system = _runs(tmp_path)
    out = tmp_path / "out"
    r = cli(
        "submission",
        "package",
        str(runs),
        "-o",
        str(out),
        "--submitter",
        "UntetherAI",
        "--system",
        str(system),
        "--round",
        version,
        "--no-check",
    )
    assert r.rc == 0, r.out + r.err
    report = check_submission(out, version)
    assert [f for f in report.findings if f.failed] == [] or version == "v6.1"
    if version == "v6.1":  # the v4.1 logs' seeds are not v6.1's: only those fail (their LoadGen is warned)
        assert {f.rule for f in report.findings if f.failed} == {"seeds"}
        assert "loadgen_release" in {f.rule for f in report.findings if not f.failed}
    res = out / "closed/UntetherAI/results" / UT_EDGE / "resnet50"
    comp = (out / "closed/UntetherAI/compliance" / UT_EDGE / "resnet50") if version == "v4.1" else res
    # a missing audit, a failed verification, a tampered log, a wrong hash, an oversized log
    shutil.rmtree(comp / "offline" / "TEST04")
    (comp / "singlestream" / "TEST01" / "verify_performance.txt").write_text(
        "TEST FAIL: Test score invalid\nTEST PASS\n"
    )
    log = res / "multistream" / "accuracy" / "mlperf_log_accuracy.json"
    log.write_text(log.read_text().replace('"00"', '"01"'))
    big = res / "offline" / "accuracy" / "mlperf_log_accuracy.json"
    big.write_bytes(b"[" + b" " * 20000 + b"]")
    acc = res / "singlestream" / "accuracy" / "accuracy.txt"
    acc.write_text(acc.read_text().replace("hash=", "hash=zz"))
    found = {
        (f.rule, Path(f.path).relative_to(out).as_posix())
        for f in check_submission(out, version).findings
        if f.failed
    }
    rel = lambda p: p.relative_to(out).as_posix()  # noqa: E731
    assert ("compliance_missing", rel(comp / "offline" / "TEST04")) in found
    assert ("compliance_failed", rel(comp / "singlestream" / "TEST01" / "verify_performance.txt")) in found
    assert ("accuracy_hash", rel(log)) in found
    assert ("accuracy_log_size", rel(big)) in found
    assert ("accuracy_hash", rel(acc)) in found


def test_package_bad_input(tmp_path: Path, cli) -> None:
    r = cli(
        "submission",
        "package",
        str(tmp_path / "none"),
        "-o",
        str(tmp_path / "o"),
        "--submitter",
        "x",
        "--system",
        str(tmp_path / "s.json"),
    )
    assert r.rc == 2 and "not a folder" in r.err and "Traceback" not in r.err
