"""Helpers for the checks tests: official-layout trees built from the real logs in shared/corpus/inference."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "inference" / "v4.1"
NV_SYSTEM = "B200-SXM-180GBx1_TRT"
UT_EDGE, UT_DC = "h13_u2_preview", "h13_u2_preview_dc"


def _copy_result(root: Path, submitter: str, system: str, bench: str, scenario: str, src: Path) -> Path:
    d = root / "closed" / submitter / "results" / system / bench / scenario
    perf = d / "performance" / "run_1"
    perf.mkdir(parents=True, exist_ok=True)
    for name in ("mlperf_log_detail.txt", "mlperf_log_summary.txt"):
        shutil.copy(src / name, perf / name)
    (d / "accuracy").mkdir(exist_ok=True)
    if (src / "accuracy.txt").exists():
        shutil.copy(src / "accuracy.txt", d / "accuracy" / "accuracy.txt")
    return d


def build_corpus_tree(tmp_path: Path) -> Path:
    """closed/{NVIDIA,UntetherAI}: the llama2-70b-99.9 Server, resnet50 SS/MS/Offline (edge), Server (dc)."""
    if not CORPUS.is_dir():
        pytest.skip("shared/corpus/inference is not available")
    root = tmp_path / "submission"
    for sub in ("NVIDIA", "UntetherAI"):
        (root / "closed" / sub / "systems").mkdir(parents=True)
        for j in (CORPUS / sub / "systems").glob("*.json"):
            shutil.copy(j, root / "closed" / sub / "systems" / j.name)
    _copy_result(
        root,
        "NVIDIA",
        NV_SYSTEM,
        "llama2-70b-99.9",
        "Server",
        CORPUS / "NVIDIA" / NV_SYSTEM / "llama2-70b-99.9" / "Server",
    )
    for scen in ("singlestream", "multistream", "offline"):
        _copy_result(
            root, "UntetherAI", UT_EDGE, "resnet50", scen, CORPUS / "UntetherAI" / UT_EDGE / "resnet50" / scen
        )
    _copy_result(
        root, "UntetherAI", UT_DC, "resnet50", "server", CORPUS / "UntetherAI" / UT_DC / "resnet50" / "server"
    )
    return root


def summary_metric(summary: Path, pattern: str) -> float:
    """A number from an official mlperf_log_summary.txt (the LoadGen's own report)."""
    m = re.search(pattern + r"\s*:\s*([\d.]+)", summary.read_text())
    assert m is not None, f"{pattern!r} not in {summary}"
    return float(m.group(1))


def edit_detail(path: Path, key: str, value: str) -> None:
    """Replace one key's JSON value in a detail log (as a wrongly configured run would have logged it)."""
    text = path.read_text()
    new, n = re.subn(
        r'("key": "' + re.escape(key) + r'", "value": )([^,]+|"[^"]*")(, "time_ms")',
        lambda m: m.group(1) + value + m.group(3),
        text,
    )
    assert n >= 1, f"{key} not in {path}"
    path.write_text(new)


def build_valid_tree(tmp_path: Path) -> Path:
    """One closed submitter whose edge resnet50 SingleStream/MultiStream/Offline results pass every
    check: the real UntetherAI performance logs, plus an accuracy folder built from them (the detail
    log switched to AccuracyOnly over the whole ImageNet validation set, an accuracy.txt at target)."""
    if not CORPUS.is_dir():
        pytest.skip("shared/corpus/inference is not available")
    root = tmp_path / "valid"
    sub = root / "closed" / "UntetherAI"
    for name in ("systems", "measurements", "code", "compliance"):
        (sub / name).mkdir(parents=True)
    shutil.copy(CORPUS / "UntetherAI" / "systems" / f"{UT_EDGE}.json", sub / "systems" / f"{UT_EDGE}.json")
    for scen in ("singlestream", "multistream", "offline"):
        d = _copy_result(
            root, "UntetherAI", UT_EDGE, "resnet50", scen, CORPUS / "UntetherAI" / UT_EDGE / "resnet50" / scen
        )
        acc = d / "accuracy"
        shutil.copy(d / "performance" / "run_1" / "mlperf_log_detail.txt", acc / "mlperf_log_detail.txt")
        edit_detail(acc / "mlperf_log_detail.txt", "effective_test_mode", '"AccuracyOnly"')
        edit_detail(acc / "mlperf_log_detail.txt", "qsl_reported_total_count", "50000")
        (acc / "accuracy.txt").write_text("accuracy=76.078%, good=38039, total=50000\n")
        (acc / "mlperf_log_accuracy.json").write_text('[\n{ "seq_id" : 0, "qsl_idx" : 0, "data" : "00" }\n]\n')
    return root
