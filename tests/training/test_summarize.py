"""Results summary: the official summarizer's row layout, scores and detailed columns, CSV/JSON output."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from proctor.training.summarize import SPEC_COLUMNS, summarize, write_outputs

from .results_pkg import write_package

PASS_FAST = [175104 + 512 * i for i in range(10)]  # passes, faster than the RCP mean: normalized
SLOW = [190464 + 1024 * i for i in range(10)]  # passes, slower: factor 1
FAST = [120000] * 10  # fails the RCP
SYSTEMS = {
    "sysA": {"llama31_8b": (PASS_FAST, [60.0 + 1.5 * i for i in range(10)])},
    "sysB": {"llama31_8b": (SLOW, [80.0 + (i * 7) % 10 for i in range(10)])},
    "sysC": {"llama31_8b": (FAST, [50.0 + i for i in range(10)])},
}


def _build(root: Path) -> Path:
    write_package(root, SYSTEMS)
    return root


def _num(x):
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else x


@pytest.mark.official
def test_rows_match_official_summarizer(tmp_path: Path) -> None:
    rsum = pytest.importorskip("mlperf_logging.result_summarizer.result_summarizer")
    off_dir = _build(tmp_path / "official")
    rsum.summarize_results(str(off_dir), "training", "6.1.0")  # first pass writes scaling.json files
    strong, _, detailed, _ = rsum.summarize_results(str(off_dir), "training", "6.1.0")
    ours = summarize([_build(tmp_path / "proctor")], "6.1.0")
    assert list(strong.columns) == ours.columns
    assert [c for c in detailed.columns if ":Energy" not in c] == [
        c for c in ours.detailed_columns if ":Energy" not in c
    ]
    off_rows = {r["system"]: r for r in strong.to_dict("records")}
    off_det = {r["system"]: r for r in detailed.to_dict("records")}
    assert sorted(off_rows) == sorted(r["system"] for r in ours.rows) == ["sysA", "sysB", "sysC"]
    for row, det in zip(ours.rows, ours.detailed, strict=True):
        off, offd = off_rows[row["system"]], off_det[row["system"]]
        for c in SPEC_COLUMNS:
            assert str(row[c]) == str(off[c]), c
        for c in ours.columns[len(SPEC_COLUMNS) :]:
            a, b = _num(row[c]), _num(off[c])
            if isinstance(b, float):
                assert a == pytest.approx(b, rel=1e-9), c
            else:
                assert a == b, c
        for m in ("time_to_train", "GBS", "samples_to_converge", "RCP", "rcp_scaling_factor"):
            a, b = _num(det[f"llama31_8b:{m}"]), _num(offd[f"llama31_8b:{m}"])
            assert a == (pytest.approx(b, rel=1e-9) if isinstance(b, float) else b), m
    by = {r["system"]: r for r in ours.detailed}
    assert by["sysA"]["llama31_8b:rcp_scaling_factor"] > 1
    assert by["sysB"]["llama31_8b:rcp_scaling_factor"] == 1.0
    assert by["sysC"]["llama31_8b:RCP"] == "Fail"


def test_layout_and_files(tmp_path: Path) -> None:
    root = _build(tmp_path / "p")
    s = summarize([root], "6.1.0")
    assert s.columns[:12] == list(SPEC_COLUMNS)
    assert s.columns[12:19] == [
        "llama31_8b",
        "flux1",
        "llama2_70b_lora",
        "gpt_oss_20b",
        "deepseekv3_671b",
        "qwen35_397b_grpo",
        "dlrmv4",
    ]
    row = s.rows[0]
    assert (
        row["division"],
        row["availability"],
        row["host_processors_count"],
        row["accelerators_count"],
    ) == ("closed", "Available on-premise", 2, 8)
    assert (
        row["details_url"]
        == "https://github.com/mlcommons/training_results_v6.1/blob/main/acme/systems/sysA.json"
    )
    # sysA passes faster than the RCP: its score is normalized by the RCP factor
    det = s.detailed[0]
    unscaled = sum(sorted(60.0 + 1.5 * i for i in range(10))[1:-1]) / 8
    assert row["llama31_8b"] == pytest.approx(unscaled * det["llama31_8b:rcp_scaling_factor"])
    assert det["llama31_8b:samples_to_converge"] == pytest.approx(sum(PASS_FAST[1:-1]) / 8)
    (tmp_path / "out").mkdir()
    paths = write_outputs(s, tmp_path / "out" / "sum.csv")
    assert [p.name for p in paths] == ["sum.csv", "sum_detailed.csv", "sum.json", "sum_detailed.json"]
    with open(paths[0], newline="") as fh:
        back = list(csv.DictReader(fh))
    assert [r["system"] for r in back] == ["sysA", "sysB", "sysC"]
    assert float(back[0]["llama31_8b"]) == row["llama31_8b"] and back[0]["flux1"] == ""
    assert json.loads(paths[3].read_text())[2]["llama31_8b:RCP"] == "Fail"


def test_cli_summarize_json(tmp_path: Path) -> None:
    from proctor.cli.apps import app
    from proctor.cli.main import _register

    _register()
    root = _build(tmp_path / "p")
    res = CliRunner().invoke(app, ["training", "summarize", str(root), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert [r["system"] for r in out["summary"]] == ["sysA", "sysB", "sysC"]
    assert out["detailed"][1]["llama31_8b:GBS"] == 32
