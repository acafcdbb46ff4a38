"""`proctor results query` and the Python API: a user's SQL answered as a table, CSV, JSON, an Arrow
table or a pandas frame; read-only and kept from the file system; DuckDB missing is one line."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sys
from pathlib import Path

import pytest

import proctor.resultsdb as api
from proctor.errors import ResultsError
from proctor.resultsdb.ingest import ingest, plans
from proctor.resultsdb.store import Store
from proctor.schemas import SCHEMAS, validate
from tests.resultsdb.resultsdb_trees import inference_round, training_round

BEST = ("SELECT round, accelerator, max(per_accelerator) AS best FROM results WHERE scenario = 'Offline' "
        "GROUP BY ALL ORDER BY best DESC, round, accelerator LIMIT 2")


@pytest.fixture(scope="module")
def db(pristine_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("query")
    trees = [inference_round(pristine_tree, base, "v5.1"),
             inference_round(pristine_tree, base, "v4.1", peers={"Gamma": (3.0, 1.0, 1)}),
             training_round(base, "v6.1")]
    path = base / "results.duckdb"
    with Store(path, write=True) as store:
        ingest(store, plans(trees))
    return path


def test_best_offline_per_accelerator_across_rounds(db: Path) -> None:
    table = api.query(BEST, db)
    assert table.column_names == ["round", "accelerator", "best"]
    assert table.to_pylist() == [
        {"round": "v4.1", "accelerator": "Gamma X1", "best": 421875.0},
        {"round": "v5.1", "accelerator": "Beta X1", "best": 70312.5},  # tied with UntetherAI X2
    ]


def test_a_pandas_frame_when_pandas_is_there(db: Path, monkeypatch) -> None:
    pytest.importorskip("pandas")
    frame = api.query(BEST, db, pandas=True)
    assert list(frame["best"]) == [421875.0, 70312.5] and list(frame.columns) == ["round", "accelerator", "best"]
    with api.connect(db) as rdb:
        assert rdb.frame("SELECT submitter FROM results WHERE round = 'v4.1' LIMIT 1")["submitter"][0] == "Gamma"
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ResultsError, match="pip install pandas"):
        api.query(BEST, db, pandas=True)


def test_the_api_ingests_queries_and_compares(pristine_tree: Path, tmp_path: Path) -> None:
    root = inference_round(pristine_tree, tmp_path, "v6.0", peers={"Solo": (1.0, 1.0, 2)})
    with api.connect(tmp_path / "r.duckdb", write=True) as rdb:
        [stats] = rdb.ingest(root)
        assert stats.results == 3
        assert rdb.query("SELECT count(*) AS n FROM results WHERE round = ?", ["v6.0"]).to_pylist() == [{"n": 3}]
    with api.connect(tmp_path / "r.duckdb") as rdb:
        assert rdb.query("SELECT submitter FROM results LIMIT 1").to_pylist() == [{"submitter": "Solo"}]
        [p] = rdb.compare(root / "closed" / "Solo", scenario="Offline")
        assert (p.rank, p.peers_count) == (1, 0)


def test_cli_query_as_table_csv_and_json(db: Path, cli) -> None:
    sql = "SELECT submitter, scenario, value FROM results WHERE round = 'v5.1' AND scenario = 'Offline' ORDER BY value DESC"
    r = cli("results", "query", sql, "--db", db)
    assert r.rc == 0 and "Acme" in r.out and "281250" in r.out and "3 row(s)" in r.out
    r = cli("results", "query", sql, "--db", db, "--csv")
    rows = list(csv.DictReader(io.StringIO(r.out)))
    assert [(x["submitter"], float(x["value"])) for x in rows] == [("Acme", 281250.0), ("UntetherAI", 140625.0),
                                                                     ("Beta", 70312.5)]
    r = cli("results", "query", sql, "--db", db, "--json")
    doc = json.loads(r.out)
    assert validate(doc, SCHEMAS["proctor.results.query"]) == []
    assert doc["kind"] == "proctor.results.query" and doc["columns"] == ["submitter", "scenario", "value"]
    assert doc["rows"][0] == {"submitter": "Acme", "scenario": "Offline", "value": 281250.0}


def test_any_sql_type_prints_as_json(db: Path, cli) -> None:
    sql = "SELECT DATE '2025-09-01' AS d, 1.5::DECIMAL(4,2) AS x, 'ab'::BLOB AS b, [1, 2] AS l"
    r = cli("results", "query", sql, "--db", db, "--json")
    assert r.rc == 0 and json.loads(r.out)["rows"] == [{"d": "2025-09-01", "x": "1.50", "b": "b'ab'", "l": [1, 2]}]


def test_findings_and_units_can_be_asked(db: Path, cli) -> None:
    r = cli("results", "query", "SELECT unit, results, invalid FROM units WHERE suite = 'training' ORDER BY unit",
            "--db", db, "--json")
    assert json.loads(r.out)["rows"] == [{"unit": "acme", "results": 1, "invalid": 0},
                                          {"unit": "zeta", "results": 1, "invalid": 0}]


def test_a_query_cannot_write_or_reach_a_file(db: Path, tmp_path: Path, cli) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("a\nSECRET\n")
    for sql in (f"SELECT * FROM read_csv('{secret}')", "CREATE TABLE x (a INTEGER)", "DELETE FROM results",
                f"COPY results TO '{tmp_path / 'out.csv'}'", f"ATTACH '{tmp_path / 'other.duckdb'}' AS o"):
        r = cli("results", "query", sql, "--db", db)
        assert r.rc == 2 and r.err.startswith("error: the query failed") and "SECRET" not in r.out + r.err, sql
        assert len(r.err.strip().splitlines()) == 1
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "other.duckdb").exists()
    assert api.query("SELECT count(*) AS n FROM results", db).to_pylist()[0]["n"] == 14


def test_a_wrong_query_is_one_line_naming_it(db: Path, cli) -> None:
    r = cli("results", "query", "SELECT nosuchcolumn FROM results", "--db", db)
    assert r.rc == 2 and "nosuchcolumn" in r.err and len(r.err.strip().splitlines()) == 1
    r = cli("results", "query", "  ", "--db", db)
    assert r.rc == 2 and "the query is empty" in r.err
    with pytest.raises(ResultsError, match="the query failed"):
        api.query("SELEC 1", db)


def test_without_duckdb_every_command_names_the_extra(monkeypatch, tmp_path: Path, cli) -> None:
    monkeypatch.setitem(sys.modules, "duckdb", None)  # import duckdb now raises ImportError
    for args in (("ingest", tmp_path), ("query", "SELECT 1"), ("compare", tmp_path)):
        r = cli("results", *args, "--db", tmp_path / "r.duckdb")
        assert r.rc == 2 and 'pip install -e ".[results]"' in r.err and len(r.err.strip().splitlines()) == 1, args


def test_cli_ingest_prints_what_it_did(pristine_tree: Path, tmp_path: Path, cli) -> None:
    root = inference_round(pristine_tree, tmp_path, "v5.0")
    db = tmp_path / "r.duckdb"
    r = cli("results", "ingest", root, "--db", db)
    assert r.rc == 0, r.err
    assert "inference v5.0 9 results" in r.out and "the folder 'inference_results_v5.0' names it" in r.out
    r = cli("results", "ingest", root, "--db", db, "--json")
    doc = json.loads(r.out)
    assert validate(doc, SCHEMAS["proctor.results.ingest"]) == []
    assert doc["kind"] == "proctor.results.ingest" and doc["db_results"] == {"inference v5.0": 9}
    assert [(t["checked"], t["unchanged"]) for t in doc["trees"]] == [(0, 3)] and doc["db_bytes"] > 0
    r = cli("results", "ingest", tmp_path / "nowhere", "--db", db)
    assert r.rc == 2 and "no such folder" in r.err
    empty = tmp_path / "empty"
    empty.mkdir()
    r = cli("results", "ingest", empty, "--db", db)
    assert r.rc == 2 and "no submitter folders found" in r.err
    r = cli("results", "ingest", root, "--db", db, "--suite", "vision")
    assert r.rc == 2 and "--suite 'vision'" in r.err


def test_a_database_another_process_writes_is_one_line(db: Path, tmp_path: Path) -> None:
    import subprocess

    import duckdb

    busy = tmp_path / "busy.duckdb"
    shutil.copy(db, busy)
    holder = duckdb.connect(str(busy))  # this process writes it
    try:
        r = subprocess.run([sys.executable, "-m", "proctor", "results", "query", "SELECT 1", "--db", str(busy)],
                           capture_output=True, text=True, timeout=120)
    finally:
        holder.close()
    assert r.returncode == 2 and "in use by another process" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_names_that_look_like_markup_print_as_written(pristine_tree: Path, tmp_path: Path, cli, monkeypatch) -> None:
    import json as _json

    monkeypatch.setenv("COLUMNS", "200")  # the table whole on one line each (xdist's workers set 80)

    from tests.resultsdb.resultsdb_trees import SYSTEM

    root = inference_round(pristine_tree, tmp_path, "v5.1", peers={"Acme": (1.0, 1.0, 2)})
    desc = root / "closed/Acme/systems" / f"{SYSTEM}.json"
    d = _json.loads(desc.read_text())
    d.update(system_name="[/bold] box [red]x", accelerator_model_name="[link=file:///etc]A[/link]")
    desc.write_text(_json.dumps(d))
    db = tmp_path / "r.duckdb"
    assert cli("results", "ingest", root, "--db", db).rc == 0
    r = cli("results", "query", "SELECT system_name, accelerator FROM results LIMIT 1", "--db", db)
    assert r.rc == 0 and "[/bold] box [red]x" in r.out and "[link=file:///etc]A[/link]" in r.out
    run = tmp_path / "again" / "runs" / "resnet50" / "Offline" / "performance" / "run_1"
    shutil.copytree(root / "closed/Acme/results" / SYSTEM / "resnet50/offline/performance/run_1", run)
    r = cli("results", "compare", run, "--db", db, "--round", "v5.1")
    assert r.rc == 0 and "[/bold] box [red]x" in r.out, r.err
