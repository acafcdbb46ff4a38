"""`proctor summarize`: one row per system, benchmark and scenario with the rules' metric and units."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import orjson
from checks_corpus import NV_SYSTEM, UT_DC, UT_EDGE
from typer.testing import CliRunner

from proctor.checks.summarize import COLUMNS, summarize


def _app():
    from proctor.cli import inference_checks  # noqa: F401
    from proctor.cli.apps import app

    return app


def test_rows_and_units(corpus_tree: Path) -> None:
    rows = summarize(corpus_tree, "v4.1")
    got = [(r.system, r.scenario, r.units) for r in rows]
    assert got == [
        (NV_SYSTEM, "Server", "tokens/s"),
        (UT_EDGE, "MultiStream", "ms"),
        (UT_EDGE, "Offline", "samples/s"),
        (UT_EDGE, "SingleStream", "ms"),
        (UT_DC, "Server", "samples/s"),
    ]


def test_csv_and_json(corpus_tree: Path) -> None:
    res = CliRunner().invoke(_app(), ["summarize", str(corpus_tree), "--csv", "--round", "v4.1"])
    assert res.exit_code == 0, res.output
    table = list(csv.DictReader(io.StringIO(res.stdout)))
    assert tuple(table[0]) == COLUMNS and len(table) == 5
    off = next(r for r in table if r["scenario"] == "Offline")
    assert (off["metric"], float(off["value"]), off["units"]) == ("samples per second", 140625.0, "samples/s")
    res = CliRunner().invoke(_app(), ["summarize", str(corpus_tree), "--json", "--round", "v4.1"])
    data = orjson.loads(res.stdout)
    ss = next(r for r in data if r["scenario"] == "SingleStream")
    assert ss["metric"] == "90th percentile early-stopping latency" and ss["value"] == 0.118879
