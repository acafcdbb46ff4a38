"""`proctor results ingest`: every round's layout and both suites into one database, one row per result
with the checker's metric and verdict; an unchanged tree skipped, a changed unit replaced, a removed
one dropped; the round read from the tree."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from proctor.checks.submission import check_submission
from proctor.errors import ResultsError
from proctor.resultsdb.ingest import ingest, plans
from proctor.resultsdb.layout import plan
from proctor.resultsdb.store import SCHEMA_VERSION, Store
from proctor.rules.rounds import ROUNDS
from proctor.training.summarize import summarize
from tests.checks.checks_corpus import set_offline_rate
from tests.resultsdb.resultsdb_trees import PEERS, SYSTEM, inference_round, readme, training_round

ORDER = "ORDER BY round, suite, unit, path"


def _table(store: Store, name: str) -> list[dict]:
    cols = "* EXCLUDE (seconds)" if name == "units" else "*"
    return store.records(f"SELECT {cols} FROM {name} ORDER BY ALL")


@pytest.mark.parametrize("version", ROUNDS)
def test_every_round_is_ingested_with_the_checkers_values(pristine_tree: Path, tmp_path: Path, version: str) -> None:
    root = inference_round(pristine_tree, tmp_path, version)
    with Store(tmp_path / "r.duckdb", write=True) as store:
        [stats] = ingest(store, plans([root]))
        rows = store.records(f"SELECT * FROM results {ORDER}")
    assert (stats.suite, stats.round, stats.units, stats.checked, stats.results) == ("inference", version, 3, 3, 9)
    assert "inference_results_" + version in stats.round_from
    want = {}
    for who in PEERS:
        for r in check_submission(root / "closed" / who, version).results:
            want[(who, r.scenario)] = (r.value, r.metric, r.units, r.valid)
    got = {(r["submitter"], r["scenario"]): (r["value"], r["metric"], r["units"], r["verdict"] == "VALID") for r in rows}
    assert got == want and all(v[3] for v in got.values())
    acme = {r["scenario"]: r for r in rows if r["submitter"] == "Acme"}
    assert acme["Offline"]["accelerators"] == 8 and acme["Offline"]["per_accelerator"] == pytest.approx(281250.0 / 8)
    assert acme["SingleStream"]["per_accelerator"] is None and acme["SingleStream"]["higher_is_better"] is False
    assert {r["category"] for r in rows} == {"edge"} and {r["availability"] for r in rows} == {"preview"}
    assert {r["benchmark"] for r in rows} == {"resnet50"} and {r["division"] for r in rows} == {"closed"}
    assert acme["Offline"]["path"] == f"closed/Acme/results/{SYSTEM}/resnet50/offline"


def test_training_round_rows_are_the_summary_scores(tmp_path: Path) -> None:
    root = training_round(tmp_path, "v6.1")
    with Store(tmp_path / "r.duckdb", write=True) as store:
        [stats] = ingest(store, plans([root]))
        rows = {r["submitter"]: r for r in store.records("SELECT * FROM results")}
    assert (stats.suite, stats.round, stats.results, stats.invalid) == ("training", "v6.1", 2, 0)
    summary = summarize([root / "acme", root / "zeta"], "6.1.0")
    scores = {d["submitter"]: d["llama31_8b:time_to_train"] for d in summary.detailed}
    assert {k: r["value"] for k, r in rows.items()} == pytest.approx(scores)
    assert rows["zeta"]["value"] < rows["acme"]["value"]
    assert (rows["zeta"]["accelerators_per_node"], rows["zeta"]["nodes"], rows["zeta"]["accelerators"]) == (4, 2, 8)
    assert {r["metric"] for r in rows.values()} == {"time to train"} and {r["units"] for r in rows.values()} == {"minutes"}
    assert all(r["verdict"] == "VALID" and r["scenario"] == "" and r["per_accelerator"] is None for r in rows.values())


def test_a_failed_training_run_set_is_invalid_with_its_findings(tmp_path: Path) -> None:
    from tests.training.results_pkg import write_package

    root = tmp_path / "training_results_v6.1"
    write_package(root / "acme", {"sys1": {"llama31_8b": ([196608] * 10, [100.0] * 10)}}, failed=(0, 1, 2))
    with Store(tmp_path / "r.duckdb", write=True) as store:
        ingest(store, plans([root]))
        [row] = store.records("SELECT verdict, errors, value FROM results")
        rules = {r["rule"] for r in store.records("SELECT rule FROM findings WHERE severity = 'error'")}
    assert row["verdict"] == "INVALID" and row["errors"] >= 1 and row["value"] is None
    assert "non_converged" in rules or "compliance" in rules


def test_the_round_is_read_from_the_readme_or_must_be_given(pristine_tree: Path, tmp_path: Path) -> None:
    root = inference_round(pristine_tree, tmp_path, "v5.0", name="results")
    with pytest.raises(ResultsError, match="which round.*--round"):
        plan(root)
    readme(root, "Inference", "v5.0")
    p = plan(root)
    assert (p.round, p.suite, p.whole) == ("v5.0", "inference", True) and "README.md" in p.round_from
    assert plan(root, "v4.1").round == "v4.1"
    with pytest.raises(ResultsError, match="not a known inference round; use one of v4.1"):
        plan(root, "v3.1")
    with pytest.raises(ResultsError, match="no submitter folders found; expected a training"):
        plan(root, suite="training")
    sub = plan(root / "closed" / "Acme", "v5.0")  # one submitter: the same unit id as the whole tree's
    assert [u.id for u in sub.units] == ["closed/Acme"] and sub.root == root.absolute() and not sub.whole
    assert [u.id for u in plan(root / "closed", "v5.0").units] == ["closed/Acme", "closed/Beta", "closed/UntetherAI"]


def test_training_rounds_are_the_rulesets_rounds(tmp_path: Path) -> None:
    root = training_round(tmp_path, "v6.1", name="t")
    with pytest.raises(ResultsError, match="not a known training round"):
        plan(root, "v3.0")
    assert plan(root, "v5.1").round == "v5.1"  # the 5.1.0 ruleset
    readme(root, "Training", "v6.1")
    assert (plan(root).suite, plan(root).round) == ("training", "v6.1")


def test_ingesting_an_unchanged_tree_again_changes_nothing(pristine_tree: Path, tmp_path: Path) -> None:
    root = inference_round(pristine_tree, tmp_path, "v5.1")
    troot = training_round(tmp_path, "v6.1")
    db = tmp_path / "r.duckdb"
    with Store(db, write=True) as store:
        ingest(store, plans([root, troot]))
        before = {t: _table(store, t) for t in ("results", "findings", "units")}
    with Store(db, write=True) as store:
        again = ingest(store, plans([root, troot]))
        after = {t: _table(store, t) for t in ("results", "findings", "units")}
    assert [(s.checked, s.unchanged, s.removed) for s in again] == [(0, 3, 0), (0, 2, 0)]
    assert after == before and len(before["results"]) == 11


def test_a_changed_result_replaces_its_rows_and_only_its_units(pristine_tree: Path, tmp_path: Path) -> None:
    root = inference_round(pristine_tree, tmp_path, "v5.1")
    db = tmp_path / "r.duckdb"
    with Store(db, write=True) as store:
        ingest(store, plans([root]))
        n = store.records("SELECT count(*) AS n FROM results")[0]["n"]
    offline = root / "closed/Beta/results" / SYSTEM / "resnet50/offline"
    for log in [offline / "performance/run_1/mlperf_log_detail.txt",
                *sorted((root / "closed/Beta/compliance" / SYSTEM / "resnet50/offline").glob("TEST*/performance/run_1/mlperf_log_detail.txt"))]:
        set_offline_rate(log, 99999.5)  # a re-run with another rate: its logs' numbers give it
    with Store(db, write=True) as store:
        [stats] = ingest(store, plans([root]))
        rows = store.records("SELECT submitter, value FROM results WHERE scenario = 'Offline' ORDER BY submitter")
        count = store.records("SELECT count(*) AS n, count(DISTINCT path) AS paths FROM results")[0]
        units = store.records("SELECT count(*) AS n FROM units")[0]["n"]
    assert (stats.checked, stats.unchanged) == (1, 2)
    assert rows == [{"submitter": "Acme", "value": 281250.0}, {"submitter": "Beta", "value": 99999.5},
                    {"submitter": "UntetherAI", "value": 140625.0}]
    assert count == {"n": n, "paths": n} and units == 3


def test_a_submitter_gone_from_a_whole_tree_is_removed(pristine_tree: Path, tmp_path: Path) -> None:
    root = inference_round(pristine_tree, tmp_path, "v5.1")
    db = tmp_path / "r.duckdb"
    with Store(db, write=True) as store:
        ingest(store, plans([root]))
    shutil.rmtree(root / "closed" / "Beta")
    with Store(db, write=True) as store:
        [one] = ingest(store, plans([root / "closed" / "Acme"]))  # some submitters: nothing removed
        assert one.removed == 0 and store.records("SELECT count(*) AS n FROM units")[0]["n"] == 3
        [whole] = ingest(store, plans([root]))
        left = {t: store.records(f"SELECT count(*) AS n FROM {t} WHERE unit = 'closed/Beta'")[0]["n"]
                for t in ("results", "findings", "units")}
    assert (whole.removed, whole.unchanged, whole.checked) == (1, 2, 0)
    assert left == {"results": 0, "findings": 0, "units": 0}


def test_the_same_files_in_another_clone_are_not_checked_again(pristine_tree: Path, tmp_path: Path) -> None:
    root = inference_round(pristine_tree, tmp_path, "v4.1")
    copy = tmp_path / "elsewhere" / root.name
    shutil.copytree(root, copy, copy_function=shutil.copy2)  # names, sizes and times kept
    for dirpath, _, _ in os.walk(root):  # folder times too
        os.utime(copy / Path(dirpath).relative_to(root), ns=(0, os.stat(dirpath).st_mtime_ns))
    db = tmp_path / "r.duckdb"
    with Store(db, write=True) as store:
        ingest(store, plans([root]))
        [again] = ingest(store, plans([copy]))
        trees = {r["tree"] for r in store.records("SELECT DISTINCT tree FROM results")}
    assert (again.checked, again.unchanged) == (0, 3)
    assert trees == {str(copy.absolute())}


def test_force_checks_every_unit_again(pristine_tree: Path, tmp_path: Path) -> None:
    root = inference_round(pristine_tree, tmp_path, "v6.0")
    with Store(tmp_path / "r.duckdb", write=True) as store:
        ingest(store, plans([root]))
        [again] = ingest(store, plans([root]), force=True)
        assert store.records("SELECT count(*) AS n FROM results")[0]["n"] == 9
    assert (again.checked, again.unchanged) == (3, 0)


class _Progress:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def begin(self, what: str, units: int, files: int) -> None:
        self.calls.append(("begin", what, units, files))

    def unit(self, unit: str) -> None:
        self.calls.append(("unit", unit))

    def advance(self, files: int) -> None:
        self.calls.append(("advance", files))

    def end(self) -> None:
        self.calls.append(("end",))


def test_progress_counts_the_files_of_the_units_checked(pristine_tree: Path, tmp_path: Path) -> None:
    root = inference_round(pristine_tree, tmp_path, "v5.1")
    files = sum(len(f) for _, _, f in os.walk(root / "closed"))
    seen = _Progress()
    with Store(tmp_path / "r.duckdb", write=True) as store:
        ingest(store, plans([root]), progress=seen)
    assert seen.calls[0] == ("begin", "inference v5.1", 3, files)
    assert [c[1] for c in seen.calls if c[0] == "unit"] == ["closed/Acme", "closed/Beta", "closed/UntetherAI"]
    assert sum(c[1] for c in seen.calls if c[0] == "advance") == files and seen.calls[-1] == ("end",)


def test_a_database_of_another_schema_or_program_is_refused(tmp_path: Path) -> None:
    import duckdb

    other = tmp_path / "other.duckdb"
    con = duckdb.connect(str(other))
    con.execute("CREATE TABLE customers (id INTEGER)")
    con.close()
    with pytest.raises(ResultsError, match="not proctor's results database"):
        Store(other, write=True)
    old = tmp_path / "old.duckdb"
    Store(old, write=True).close()
    con = duckdb.connect(str(old))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(ResultsError, match=f"schema version '99', this proctor reads version {SCHEMA_VERSION}"):
        Store(old)
    (tmp_path / "folder").mkdir()
    with pytest.raises(ResultsError, match="a folder; give the database file"):
        Store(tmp_path / "folder")
    (tmp_path / "notes.txt").write_text("not a database\n")
    with pytest.raises(ResultsError, match="cannot be opened as a DuckDB database"):
        Store(tmp_path / "notes.txt")
    with pytest.raises(ResultsError, match="no results database there"):
        Store(tmp_path / "missing.duckdb")


def test_the_default_database_is_in_the_users_data_folder(monkeypatch, tmp_path: Path) -> None:
    from proctor.resultsdb.store import default_path

    monkeypatch.delenv("PROCTOR_RESULTS_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_path() == tmp_path / "data" / "proctor" / "results.duckdb"
    monkeypatch.setenv("PROCTOR_RESULTS_DB", str(tmp_path / "mine.duckdb"))
    assert default_path() == tmp_path / "mine.duckdb"


def test_system_description_columns_come_from_its_json(pristine_tree: Path, tmp_path: Path) -> None:
    root = inference_round(pristine_tree, tmp_path, "v5.1", peers={"Acme": (1.0, 1.0, 4)})
    desc = root / "closed/Acme/systems" / f"{SYSTEM}.json"
    d = json.loads(desc.read_text())
    d.update(number_of_nodes="3", framework="TensorFlow 2.99", status="available", system_type="datacenter,edge")
    desc.write_text(json.dumps(d))
    with Store(tmp_path / "r.duckdb", write=True) as store:
        ingest(store, plans([root]))
        row = store.records("SELECT * FROM results WHERE scenario = 'Offline'")[0]
    assert (row["accelerators_per_node"], row["nodes"], row["accelerators"]) == (4, 3, 12)
    assert row["per_accelerator"] == pytest.approx(140625.0 / 12)
    assert (row["framework"], row["availability"], row["category"]) == ("TensorFlow 2.99", "available", "datacenter,edge")


def test_an_interrupted_ingest_keeps_each_unit_whole(pristine_tree: Path, tmp_path: Path, monkeypatch) -> None:
    from proctor.resultsdb import inference_units

    root = inference_round(pristine_tree, tmp_path, "v5.1")
    real = inference_units.unit_rows

    def interrupted(unit, *a, **k):
        if unit.submitter == "Beta":
            raise KeyboardInterrupt
        return real(unit, *a, **k)

    db = tmp_path / "r.duckdb"
    monkeypatch.setattr(inference_units, "unit_rows", interrupted)
    with Store(db, write=True) as store, pytest.raises(KeyboardInterrupt):
        ingest(store, plans([root]))
    monkeypatch.undo()
    with Store(db, write=True) as store:
        units = [r["unit"] for r in store.records("SELECT unit FROM units ORDER BY unit")]
        assert units == ["closed/Acme"]  # done before the interrupt, whole; nothing of Beta
        assert store.records("SELECT count(*) AS n FROM results")[0]["n"] == 3
        [again] = ingest(store, plans([root]))
        assert (again.checked, again.unchanged) == (2, 1)
        assert store.records("SELECT count(*) AS n FROM results")[0]["n"] == 9


def test_the_progress_bar_draws_on_a_terminal() -> None:
    import io

    from rich.console import Console

    from proctor.cli.results import _Bar

    buf = io.StringIO()
    bar = _Bar(Console(file=buf, force_terminal=True, width=100))
    bar.begin("inference v5.1", 2, 40)
    bar.unit("closed/Acme")
    bar.advance(25)
    bar.unit("closed/Beta\nInjected")
    bar.advance(15)
    bar.end()
    shown = buf.getvalue()
    assert "inference v5.1: 2 submitter folder(s)" in shown and "40/40" in shown and "files" in shown
    assert "closed/Beta\\x0aInjected" in shown and "Beta\nInjected" not in shown  # one printable line
