"""`proctor early-stopping` through typer's CliRunner."""

from __future__ import annotations

import json

from typer.testing import CliRunner

import proctor.cli.early_stopping  # noqa: F401  (registers the command)
from proctor.cli.apps import app

runner = CliRunner()


def run_json(*args: str) -> dict:
    res = runner.invoke(app, ["early-stopping", *args, "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.output)


def test_stream_view_json():
    out = run_json("--percentile", "90", "--queries", "10000")
    assert out["min_queries"] == 64 and out["discarded"] == 929 and out["reported_rank"] == 10000 - 930 + 1
    assert run_json("--percentile", "0.9", "--queries", "10000") == out


def test_stream_view_too_few_queries():
    out = run_json("--percentile", "99", "--queries", "600")
    assert out["min_queries"] == 662 and out["enough"] is False and out["discarded"] is None


def test_server_view_json():
    out = run_json("-p", "99", "-n", "1000", "--overlatency", "3")
    assert out["required_queries"] == 998 + 3 and out["enough"] is False and out["more_queries_needed"] == 1
    out = run_json("-p", "99", "-n", "1001", "-t", "3")
    assert out["enough"] is True and out["more_queries_needed"] == 0


def test_table_output_and_bad_percentile():
    res = runner.invoke(app, ["early-stopping", "-p", "90", "-n", "10000"], env={"COLUMNS": "120"})
    assert res.exit_code == 0
    assert "929" in res.output and "9071" in res.output and "64" in res.output
    bad = runner.invoke(app, ["early-stopping", "-p", "100", "-n", "10"])
    assert bad.exit_code != 0 and "percentile" in bad.output
