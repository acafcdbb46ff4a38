"""`proctor results compare`: one's own run or package beside the published results of its round,
benchmark and scenario: rank by the metric's direction, value per accelerator where it means
something, the nearest results above and below, the counts; a table, JSON and an HTML page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from proctor.errors import ResultsError
from proctor.resultsdb.compare import compare
from proctor.resultsdb.ingest import ingest, plans
from proctor.resultsdb.store import Store
from proctor.schemas import SCHEMAS, validate
from tests.resultsdb.resultsdb_trees import inference_round, run_folder, training_round

COMPARE_SCHEMA = SCHEMAS["proctor.results.compare"]


@pytest.fixture(scope="module")
def published(pristine_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(database, base folder): inference v5.1 and v6.1 (Acme 2x, UntetherAI 1x, Beta 0.5x) and training v6.1."""
    base = tmp_path_factory.mktemp("published")
    trees = [inference_round(pristine_tree, base, "v5.1"), inference_round(pristine_tree, base, "v6.1"),
             training_round(base, "v6.1")]
    db = base / "results.duckdb"
    with Store(db, write=True) as store:
        ingest(store, plans(trees))
    return db, base


def _place(db: Path, path: Path, **kw):
    with Store(db) as store:
        return compare(store, path, **kw)


def test_an_offline_run_is_ranked_between_its_neighbours(published, pristine_tree: Path, tmp_path: Path) -> None:
    db, _ = published
    run = run_folder(pristine_tree, tmp_path, "resnet50", "Offline", "v5.1", samples_per_second=200000.0)
    [p] = _place(db, run, round_="v5.1", accelerators=4)
    assert (p.round, p.benchmark, p.scenario, p.units, p.higher_is_better) == ("v5.1", "resnet50", "Offline", "samples/s", True)
    assert (p.rank, p.peers_count, p.benchmark_results, p.round_results) == (2, 3, 3, 9)
    assert p.above is not None and p.below is not None
    assert (p.above.submitter, p.above.value, p.above.rank) == ("Acme", 281250.0, 1)
    assert (p.below.submitter, p.below.value, p.below.rank) == ("UntetherAI", 140625.0, 3)
    assert [(x.submitter, x.rank) for x in p.peers] == [("Acme", 1), ("UntetherAI", 3), ("Beta", 4)]
    # per accelerator: yours 200000/4 = 50000; UntetherAI 140625/2 and Beta 70312.5/1 are better, Acme 35156.25 not
    assert p.own["per_accelerator"] == 50000.0
    assert (p.per_accelerator_meaningful, p.rank_per_accelerator, p.peers_per_accelerator) == (True, 3, 3)
    assert p.own["verdict"] == "VALID"  # a real LoadGen log of the round's seeds


def test_a_latency_ranks_lower_first_and_has_no_value_per_accelerator(published, pristine_tree, tmp_path) -> None:
    db, _ = published
    run = run_folder(pristine_tree, tmp_path, "resnet50", "SingleStream", "v5.1")  # UntetherAI's 0.118879 ms
    [p] = _place(db, run, round_="v5.1", accelerators=2)
    assert (p.units, p.higher_is_better, p.per_accelerator_meaningful) == ("ms", False, False)
    assert p.rank == 2 and p.above is not None and p.above.submitter == "Acme"  # 0.05944 ms: lower is better
    assert p.below is not None and (p.below.submitter, p.below.rank) == ("UntetherAI", 2)  # a tie shares the rank
    assert [(x.submitter, x.rank) for x in p.peers] == [("Acme", 1), ("UntetherAI", 2), ("Beta", 4)]  # 1 + 3 better
    assert p.rank_per_accelerator is None and p.own["per_accelerator"] is None
    assert any("per accelerator: not meaningful" in n for n in p.notes)


def test_the_newest_round_with_the_benchmark_is_the_default(published, pristine_tree, tmp_path) -> None:
    db, _ = published
    run = run_folder(pristine_tree, tmp_path, "resnet50", "Offline", "v6.1")
    [p] = _place(db, run)
    assert p.round == "v6.1" and p.own["verdict"] == "VALID"
    [old] = _place(db, run, round_="v5.1")  # the v6.1 seeds in a v5.1 comparison: not that round's run
    assert old.round == "v5.1" and old.own["verdict"] == "INVALID"
    assert {f["rule"] for f in old.findings if f["severity"] == "error"} == {"seeds"}


def test_without_accelerators_the_run_is_ranked_by_value_only(published, pristine_tree, tmp_path) -> None:
    db, _ = published
    run = run_folder(pristine_tree, tmp_path, "resnet50", "Offline", "v5.1", samples_per_second=500000.0)
    [p] = _place(db, run, round_="v5.1")
    assert p.rank == 1 and p.above is None and p.below is not None and p.below.submitter == "Acme"
    assert p.rank_per_accelerator is None and any("--accelerators N" in n for n in p.notes)


def test_a_system_description_gives_the_runs_accelerators(published, pristine_tree, tmp_path) -> None:
    db, _ = published
    run = run_folder(pristine_tree, tmp_path, "resnet50", "Offline", "v5.1", samples_per_second=80000.0)
    desc = tmp_path / "system.json"
    desc.write_text(json.dumps({"accelerators_per_node": "2", "number_of_nodes": 2, "accelerator_model_name": "Z9",
                                "system_name": "my box"}))
    [p] = _place(db, run, round_="v5.1", system=desc)
    assert (p.own["accelerators"], p.own["accelerator"], p.own["per_accelerator"]) == (4, "Z9", 20000.0)
    assert (p.rank, p.rank_per_accelerator) == (3, 4)


def test_digits_has_no_published_peers_and_says_so(published, pristine_tree, tmp_path, cli) -> None:
    db, _ = published
    run = run_folder(pristine_tree, tmp_path, "digits", "Offline", "v6.1")
    r = cli("results", "compare", run, "--db", db)
    assert r.rc == 2
    assert "proctor's own reference workload" in r.err and "--benchmark NAME" in r.err
    assert len(r.err.strip().splitlines()) == 1
    r = cli("results", "compare", run, "--db", db, "--json")
    doc = json.loads(r.out)
    assert r.rc == 2 and validate(doc, COMPARE_SCHEMA) == [] and doc["exit_code"] == 2
    assert doc["placements"][0]["peers_count"] == 0 and doc["placements"][0]["rank"] == 1
    # the same run standing in for a published benchmark has peers
    r = cli("results", "compare", run, "--db", db, "--benchmark", "resnet50", "--round", "v6.1")
    assert r.rc == 0 and "rank 2 of 4" in r.out


def test_a_run_whose_folders_name_no_benchmark_needs_one(published, pristine_tree, tmp_path) -> None:
    db, _ = published
    run = run_folder(pristine_tree, tmp_path, "resnet50", "Offline", "v5.1")
    loose = tmp_path / "loose"
    run.rename(loose)
    with pytest.raises(ResultsError, match="which benchmark does this run stand for.*--benchmark NAME"):
        _place(db, loose)
    with pytest.raises(ResultsError, match="no benchmark of any round proctor knows.*did you mean"):
        _place(db, loose, benchmark="resnet5O")
    [p] = _place(db, loose, benchmark="resnet", round_="v5.1")
    assert (p.benchmark, p.rank) == ("resnet50", 2)


def test_a_package_is_checked_and_each_result_placed(published, pristine_tree, tmp_path) -> None:
    db, _ = published
    pkg = inference_round(pristine_tree, tmp_path, "v5.1", peers={"Mine": (1.5, 1.0, 3)})
    placed = _place(db, pkg / "closed" / "Mine")
    assert sorted(p.scenario for p in placed) == ["MultiStream", "Offline", "SingleStream"]
    off = next(p for p in placed if p.scenario == "Offline")
    assert off.round == "v5.1" and off.own["verdict"] == "VALID" and off.own["value"] == pytest.approx(210937.5, rel=1e-5)  # as the log prints it: 6 digits
    assert (off.rank, off.peers_count, off.own["accelerators"]) == (2, 3, 3)
    [only] = _place(db, pkg / "closed" / "Mine", scenario="offline")
    assert only.scenario == "Offline"


def test_an_ingested_package_is_not_its_own_peer(published, tmp_path) -> None:
    db, base = published
    [p] = _place(db, base / "inference_results_v5.1" / "closed" / "Acme", scenario="Offline")
    assert (p.rank, p.peers_count) == (1, 2) and {x.submitter for x in p.peers} == {"UntetherAI", "Beta"}


def test_training_time_to_train_lower_is_better(published, tmp_path) -> None:
    db, base = published
    [p] = _place(db, base / "training_results_v6.1" / "acme")
    assert (p.suite, p.benchmark, p.units, p.higher_is_better) == ("training", "llama31_8b", "minutes", False)
    assert (p.rank, p.peers_count) == (2, 1) and p.above is not None and p.above.submitter == "zeta"
    assert p.rank_per_accelerator is None and any("not meaningful" in n for n in p.notes)


def test_division_and_verdict_filters(published, pristine_tree, tmp_path) -> None:
    db, _ = published
    run = run_folder(pristine_tree, tmp_path, "resnet50", "Offline", "v5.1", samples_per_second=1.0)
    [p] = _place(db, run, round_="v5.1", division="open")
    assert p.peers_count == 0 and "division open" in p.notes[-1]
    [p] = _place(db, run, round_="v5.1", division=None, valid_only=False)
    assert (p.peers_count, p.rank) == (3, 4)


def test_cli_prints_the_table_and_writes_the_page(published, pristine_tree, tmp_path, cli, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # the table's names on one line each (xdist's workers set 80)
    db, _ = published
    run = run_folder(pristine_tree, tmp_path, "resnet50", "Offline", "v5.1", samples_per_second=200000.0)
    page = tmp_path / "out" / "compare.html"
    r = cli("results", "compare", run, "--db", db, "--round", "v5.1", "--accelerators", "4", "-o", page)
    assert r.rc == 0, r.err
    assert "rank 2 of 4" in r.out and "per accelerator 50,000: rank 3 of 4" in r.out
    assert re.search(r"YOURS.*200,000", r.out) and "Acme (above)" in r.out and "UntetherAI (below)" in r.out
    html = page.read_text()
    assert 'data-key="rank" data-value="2"' in html and 'id="own-row"' in html
    assert html.count('src="data:image/png;base64,') == 1 and "border-collapse" in html  # the report's CSS
    assert len(re.findall(r'<tr class="[a-z]*" data-rank=', html)) == 3 and 'data-value="200000.0"' in html
    r = cli("results", "compare", run, "--db", db, "--round", "v5.1", "--json")
    doc = json.loads(r.out)
    assert validate(doc, COMPARE_SCHEMA) == [] and doc["placements"][0]["rank"] == 2 and doc["html"] is None


def test_an_invalid_own_result_is_placed_and_exits_1(published, pristine_tree, tmp_path, cli) -> None:
    db, _ = published
    run = run_folder(pristine_tree, tmp_path, "resnet50", "Offline", "v6.1")
    r = cli("results", "compare", run, "--db", db, "--round", "v5.1")
    assert r.rc == 1 and "INVALID" in r.out and "[seeds]" in r.out and "rank 2 of 4" in r.out  # tied with UntetherAI


def test_bad_options_are_one_line_exit_2(published, pristine_tree, tmp_path, cli) -> None:
    db, _ = published
    run = run_folder(pristine_tree, tmp_path, "resnet50", "Offline", "v5.1")
    for args, text in (
        (("--division", "private"), "--division 'private'"),
        (("--scenario", "Sometimes"), "--scenario 'Sometimes' is not a scenario"),
        (("--accelerators", "0"), "--accelerators 0"),
        (("--round", "v4.1", "--benchmark", "llama3.1-8b"), "its benchmark table has no 'llama3.1-8b'"),
        (("--system", str(tmp_path / "nope.json")), "--system"),
    ):
        r = cli("results", "compare", run, "--db", db, *args)
        assert r.rc == 2 and text in r.err and len(r.err.strip().splitlines()) == 1, (args, r.err)
    r = cli("results", "compare", tmp_path / "nothing", "--db", db)
    assert r.rc == 2 and "no such folder" in r.err


def test_the_default_round_is_the_newest_with_valid_results(pristine_tree, tmp_path) -> None:
    from proctor.resultsdb.layout import plan

    root = inference_round(pristine_tree, tmp_path, "v5.1", peers={"Acme": (2.0, 1.0, 8)})
    db = tmp_path / "r.duckdb"
    with Store(db, write=True) as store:  # the same tree held to v6.1's rules too: its seeds fail there
        ingest(store, [plan(root), plan(root, "v6.1")])
        verdicts = {r["round"]: r["v"] for r in store.records("SELECT round, any_value(verdict) AS v FROM results GROUP BY round")}
    assert verdicts == {"v5.1": "VALID", "v6.1": "INVALID"}
    run = run_folder(pristine_tree, tmp_path, "resnet50", "Offline", "v5.1")
    [p] = _place(db, run)
    assert (p.round, p.peers_count, p.rank) == ("v5.1", 1, 2)


def test_the_page_draws_whatever_a_submitter_is_called(pristine_tree, tmp_path) -> None:
    from proctor.resultsdb import page

    root = inference_round(pristine_tree, tmp_path, "v5.1", peers={"a$^{x": (2.0, 1.0, 2), "b$_$": (0.5, 1.0, 1)})
    db = tmp_path / "r.duckdb"
    with Store(db, write=True) as store:
        ingest(store, plans([root]))
    run = run_folder(pristine_tree, tmp_path, "resnet50", "Offline", "v5.1")
    placed = _place(db, run, accelerators=2)
    assert placed[0].above is not None and placed[0].above.submitter == "a$^{x"
    out = page.write(placed, tmp_path / "p.html")
    html = out.read_text()
    assert "a$^{x" in html and html.count("data:image/png;base64,") == 1


def test_a_run_that_logged_its_benchmark_needs_no_folder_names(published, pristine_tree, tmp_path) -> None:
    """`proctor run --model resnet50 -o anywhere` logs proctor_benchmark: compare reads it where the
    folders name none; a logged name no round knows is not taken (hostile log: the question stays)."""
    from proctor.loadgen.logs.detail import BENCHMARK_KEY, append_record

    db, _ = published
    run = run_folder(pristine_tree, tmp_path, "resnet50", "Offline", "v5.1")
    loose = tmp_path / "loose"
    run.rename(loose)
    detail = next(loose.rglob("mlperf_log_detail.txt"))
    append_record(detail, BENCHMARK_KEY, "no-such-net")
    with pytest.raises(ResultsError, match="which benchmark does this run stand for"):
        _place(db, loose)
    append_record(detail, BENCHMARK_KEY, "resnet50")  # the last record of a key is the one read
    [p] = _place(db, loose, round_="v5.1")
    assert (p.benchmark, p.rank) == ("resnet50", 2)


def test_proctor_run_logs_the_benchmark_it_was_set_up_as(tmp_path) -> None:
    import subprocess
    import sys

    from proctor.loadgen.logs.detail import BENCHMARK_KEY
    from proctor.loadgen.logs.reader import read_detail

    r = subprocess.run([sys.executable, "-m", "proctor", "run", "-s", "Offline", "--sut",
                        "synthetic:service_us=0,workers=0", "--model", "retinanet", "--duration-ms", "0",
                        "--min-queries", "1", "--no-report", "-o", str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 1), r.stderr
    assert read_detail(tmp_path / "out" / "mlperf_log_detail.txt").values[BENCHMARK_KEY] == "retinanet"
