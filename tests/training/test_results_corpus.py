"""The real public run sets in shared/corpus/training score and check as the official tools do.

Each run set is copied into the official package layout (`results/<system>/<benchmark>`, `systems/`)
so both tools see the same files; the official numbers are computed in the same run, never stored.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from proctor.training.package import check_package
from proctor.training.rcp import check_rcp
from proctor.training.runs import read_run_set
from proctor.training.scoring import score_run_set
from proctor.training.summarize import summarize

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "training"
SETS = [
    ("v5.1/AMD", "MI355X_EPYC_9575F_pytorch", "llama31_8b", "5.1.0"),
    ("v5.1/ASUSTeK", "ESC_NB8_E11", "rgat", "5.1.0"),
    ("v4.0/ASUSTeK", "ESC_N8A-E12", "llama2_70b_lora", "4.0.0"),
]

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")


def _package(tmp: Path, sub: str, system: str, bench: str) -> Path:
    root = tmp / sub.replace("/", "_")
    dst = root / "results" / system / bench
    shutil.copytree(CORPUS / sub / system / bench, dst)
    (root / "systems").mkdir()
    shutil.copy(CORPUS / sub / "systems" / f"{system}.json", root / "systems" / f"{system}.json")
    for p in [root, *root.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return root


def _times(folder: Path) -> list[float]:
    """Time to train of each log, read with json directly (independent of proctor's reader)."""
    out = []
    for f in sorted(folder.glob("result_*.txt")):
        start = stop = None
        for line in f.read_text(encoding="latin-1").splitlines():
            if ":::MLLOG" not in line:
                continue
            obj = json.loads(line.split(":::MLLOG", 1)[1])
            if obj["key"] == "run_start" and start is None:
                start = obj["time_ms"]
            if obj["key"] == "run_stop" and stop is None:
                stop = obj["time_ms"]
        out.append((stop - start) / 60000.0)
    return out


@pytest.mark.parametrize(("sub", "system", "bench", "ruleset"), SETS)
def test_corpus_scores_and_rcp(tmp_path: Path, sub: str, system: str, bench: str, ruleset: str) -> None:
    folder = CORPUS / sub / system / bench
    rs = read_run_set(folder)
    assert rs.benchmark == bench and len(rs.runs) == 10 and all(r.converged for r in rs.runs)
    sc = score_run_set(rs)
    t = sorted(_times(folder))
    assert sc.valid and sc.score_minutes == pytest.approx(sum(t[1:-1]) / 8, rel=1e-12)
    r = check_rcp(folder, ruleset)
    assert r.passed and r.rcp == "found"
    assert r.scaling_factor == pytest.approx(max(1.0, r.rcp_mean / r.submission_mean))


@pytest.mark.official
@pytest.mark.parametrize(("sub", "system", "bench", "ruleset"), SETS)
def test_corpus_matches_official_tools(
    tmp_path: Path, sub: str, system: str, bench: str, ruleset: str
) -> None:
    rcp_checker = pytest.importorskip("mlperf_logging.rcp_checker.rcp_checker")
    rsum = pytest.importorskip("mlperf_logging.result_summarizer.result_summarizer")
    pc = pytest.importorskip("mlperf_logging.package_checker.package_checker")
    off = _package(tmp_path / "official", sub, system, bench)
    mine = _package(tmp_path / "proctor", sub, system, bench)
    bdir_off, bdir = off / "results" / system / bench, mine / "results" / system / bench

    ok, msg, norm = rcp_checker.check_directory(
        str(bdir_off), "training", ruleset, False, False, rcp_pass="pruned_rcps", set_scaling=False
    )
    for policy in ("official", "rules"):
        r = check_rcp(bdir, ruleset, policy=policy)
        assert (r.passed, r.message) == (ok, msg)
        assert r.scaling_factor == pytest.approx(norm, rel=1e-12)

    score, _, _ = rsum._compute_strong_score_standalone(
        bench, system, False, str(bdir_off), "training", ruleset
    )
    assert score_run_set(read_run_set(bdir)).score_minutes == pytest.approx(score, rel=1e-9)

    official_ok = pc.check_systems(str(off), "training", ruleset) and pc.check_training_result_files(
        str(off), "training", ruleset, True, False, False, False, False
    )
    assert check_package(mine, ruleset).valid == bool(official_ok)

    # the official summarizer applies scaling.json, which its first pass writes: compare with the second
    rsum.summarize_results(str(off), "training", ruleset)
    strong, _, _, _ = rsum.summarize_results(str(off), "training", ruleset)
    ours = summarize([mine], ruleset)
    assert ours.rows[0][bench] == pytest.approx(strong.iloc[0][bench], rel=1e-9)
    assert ours.rows[0]["system"] == strong.iloc[0]["system"]
