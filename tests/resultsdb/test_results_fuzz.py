"""Hypothesis on what the results database reads: a tree's fingerprint (stat only, no link followed,
the same tree the same digest, a changed file another) and the ingest of a submitter folder whose
files hold any bytes (no exception, the damaged result INVALID, the unit stored)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.resultsdb.ingest import ingest, plans
from proctor.resultsdb.store import Store
from proctor.trees import fingerprint
from tests.resultsdb.resultsdb_trees import SYSTEM, inference_round

pytestmark = pytest.mark.fuzz

NAMES = st.text(alphabet=st.characters(blacklist_characters="/\x00", blacklist_categories=("Cs",)), min_size=1,
                max_size=12).filter(lambda n: n not in (".", ".."))
ENTRY = st.tuples(st.lists(NAMES, min_size=1, max_size=4), st.sampled_from(["file", "dir", "link-out", "link-in"]),
                  st.binary(max_size=64))


def _build(root: Path, outside: Path, entries: list) -> int:
    """The entries under `root` (a link out points at `outside`); the regular files made."""
    files = 0
    for parts, what, data in entries:
        p = root.joinpath(*parts)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(p):
                continue
            if what == "file":
                p.write_bytes(data)
                files += 1
            elif what == "dir":
                p.mkdir()
            elif what == "link-out":
                p.symlink_to(outside)
            else:
                p.symlink_to(parts[0])
        except (OSError, ValueError):  # a name the file system refuses, a file where a folder was wanted
            continue
    return files


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(ENTRY, max_size=25))
def test_fingerprint_is_stable_bounded_and_sees_a_change(entries: list) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        outside = base / "outside"
        outside.mkdir()
        for i in range(30):
            (outside / f"f{i}").write_bytes(b"x" * i)
        root = base / "tree"
        root.mkdir()
        _build(root, outside, entries)
        first, second = fingerprint(root), fingerprint(root)
        assert first == second and not first.stopped
        regular = sum(1 for d, _, fs in os.walk(root) for f in fs if os.path.isfile(Path(d) / f)
                      and not os.path.islink(Path(d) / f))
        assert first.files == regular  # nothing behind a link counted (outside holds 30 files)
        probe = root / "probe.bin"
        if not os.path.lexists(probe):
            probe.write_bytes(b"1")
            assert fingerprint(root).digest != first.digest
            probe.write_bytes(b"22")
            assert fingerprint(root).digest != first.digest


TARGETS = {
    "detail log": Path("results") / SYSTEM / "resnet50/offline/performance/run_1/mlperf_log_detail.txt",
    "accuracy.txt": Path("results") / SYSTEM / "resnet50/offline/accuracy/accuracy.txt",
    "system description": Path("systems") / f"{SYSTEM}.json",
}


@pytest.fixture(scope="module")
def one_unit(pristine_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return inference_round(pristine_tree, tmp_path_factory.mktemp("fuzz"), "v5.1", peers={"Fuzz": (1.0, 1.0, 1)})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(target=st.sampled_from(sorted(TARGETS)), data=st.binary(max_size=3000))
def test_any_bytes_in_a_result_give_an_invalid_row_never_an_exception(one_unit: Path, target: str, data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / one_unit.name
        shutil.copytree(one_unit, root, symlinks=True)
        (root / "closed/Fuzz" / TARGETS[target]).write_bytes(data)
        with Store(Path(tmp) / "r.duckdb", write=True) as store:
            [stats] = ingest(store, plans([root]))
            rows = {Path(r["path"]).name: r["verdict"] for r in store.records("SELECT path, verdict FROM results")}
            units = store.records("SELECT results FROM units")
    assert stats.failed == [] and units == [{"results": 3}]
    assert rows["offline"] == "INVALID"
    if target == "system description":
        assert set(rows.values()) == {"INVALID"}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
FIELDS = ("accelerators_per_node", "number_of_nodes", "accelerator_model_name", "status", "framework", "system_name")


@settings(max_examples=300, deadline=None)
@given(desc=st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=len(FIELDS)))
def test_any_system_description_gives_bounded_columns(desc: dict) -> None:
    from proctor.resultsdb.rows import MAX_COUNT, system_columns

    cols = system_columns(desc)
    for key in ("accelerators_per_node", "nodes", "accelerators"):
        assert cols[key] is None or (isinstance(cols[key], int) and 0 <= cols[key] < MAX_COUNT)
    for key in ("accelerator", "availability", "framework", "system_name"):
        assert cols[key] is None or (isinstance(cols[key], str) and len(cols[key]) <= 300)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.binary(max_size=5000))
def test_any_readme_names_a_known_round_or_none(text: bytes) -> None:
    from proctor.errors import ResultsError
    from proctor.resultsdb.layout import plan

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tree"
        (root / "acme" / "results" / "sys" / "llama31_8b").mkdir(parents=True)
        (root / "acme" / "results" / "sys" / "llama31_8b" / "result_0.txt").write_text("x\n")
        (root / "README.md").write_bytes(text)
        try:
            p = plan(root)
        except ResultsError as exc:
            assert "--round" in str(exc)
        else:
            assert p.suite == "training" and p.round.startswith("v")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=4000), scenario=st.sampled_from([None, "Offline", "SingleStream"]))
def test_any_run_log_is_placed_or_refused_in_one_line(one_unit: Path, data: bytes, scenario: str | None) -> None:
    from proctor.errors import ResultsError
    from proctor.resultsdb.compare import compare

    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "runs" / "resnet50" / "Offline" / "performance" / "run_1"
        run.mkdir(parents=True)
        (run / "mlperf_log_detail.txt").write_bytes(data)
        db = Path(tmp) / "r.duckdb"
        Store(db, write=True).close()
        with Store(db) as store:
            try:
                [p] = compare(store, run, round_="v5.1", scenario=scenario, accelerators=2)
            except ResultsError as exc:
                assert "\n" not in str(exc)
                return
    assert p.own["verdict"] == "INVALID" and p.rank in (None, 1) and p.peers_count == 0
