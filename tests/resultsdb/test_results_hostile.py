"""Hostile results trees: each broken or hostile result is a row, INVALID, with the findings that say
why; the rest of the tree is ingested as if it were not there; nothing outside the tree is opened, and
nothing read from it reaches the database raw. Each case is its own submitter folder beside a valid one."""

from __future__ import annotations

import builtins
import io
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from proctor.resultsdb.ingest import ingest, plans
from proctor.resultsdb.store import Store
from proctor.trees import MAX_DEPTH
from tests.resultsdb.resultsdb_trees import SYSTEM, inference_round

RES = Path("results") / SYSTEM / "resnet50"
OFF = RES / "offline"
SECRET = "SECRET-7f3a"


def _outside(base: Path, pristine: Path) -> Path:
    out = base / "outside"
    out.mkdir()
    src = pristine / "closed" / "UntetherAI"
    log = (src / OFF / "performance/run_1/mlperf_log_detail.txt").read_text()
    (out / "mlperf_log_detail.txt").write_text(log.replace("UntetherAI", SECRET))
    desc = json.loads((src / "systems" / f"{SYSTEM}.json").read_text())
    (out / "system.json").write_text(json.dumps({**desc, "system_name": SECRET}))
    return out


def _swap(make: Callable[[Path, Path], None]) -> Callable[[Path, Path], None]:
    """`make` the path after removing what is there."""

    def run(p: Path, outside: Path) -> None:
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        elif os.path.lexists(p):
            p.unlink()
        make(p, outside)

    return run


def _sparse(p: Path, size: int) -> None:
    with open(p, "wb") as fh:
        fh.truncate(size)


def _deep(p: Path) -> None:
    for i in range(MAX_DEPTH + 2):
        p = p / f"d{i}"
    p.mkdir(parents=True)


# case -> (where, how, the rows' verdicts by scenario folder, the error rules expected among the unit's findings)
CASES: dict[str, tuple[Path, Callable[[Path, Path], None], dict[str, str], set[str]]] = {
    "not-json": (OFF / "performance/run_1/mlperf_log_detail.txt",
                 _swap(lambda p, o: p.write_bytes(b"\x00\xff{not json\n" * 100)), {"offline": "INVALID"}, {"detail_log_parse"}),
    "missing-logs": (OFF / "performance/run_1", _swap(lambda p, o: p.mkdir()), {"offline": "INVALID"}, {"performance_log"}),
    "link-out": (OFF / "performance/run_1/mlperf_log_detail.txt",
                 _swap(lambda p, o: p.symlink_to(o / "mlperf_log_detail.txt")), {"offline": "INVALID"}, {"performance_log", "tree"}),
    "fifo": (RES / "singlestream/performance/run_1/mlperf_log_detail.txt", _swap(lambda p, o: os.mkfifo(p)),
             {"singlestream": "INVALID"}, {"performance_log", "tree"}),
    "huge": (OFF / "performance/run_1/mlperf_log_detail.txt", _swap(lambda p, o: _sparse(p, 300 << 20)),
             {"offline": "INVALID"}, {"detail_log_parse"}),
    "system-link-out": (Path("systems") / f"{SYSTEM}.json", _swap(lambda p, o: p.symlink_to(o / "system.json")),
                        {"offline": "INVALID", "singlestream": "INVALID", "multistream": "INVALID"}, {"system_description"}),
    "scenario-misnamed": (OFF, lambda p, o: p.rename(p.parent / "Offlne"), {"Offlne": "INVALID"}, {"scenario_name"}),
    "benchmark-unknown": (RES, lambda p, o: p.rename(p.parent / "resnet5000"),
                          {"offline": "INVALID", "singlestream": "INVALID", "multistream": "INVALID"}, {"benchmark_name"}),
    "odd-name-link": (OFF / os.fsdecode(b"evil\nname\xff"), lambda p, o: p.symlink_to("/etc/passwd"),
                      {"offline": "INVALID"}, {"tree"}),
    "loop": (OFF / "performance/run_1/loop", lambda p, o: p.symlink_to(".."), {"offline": "INVALID"}, {"tree"}),
    "system-huge": (Path("systems") / f"{SYSTEM}.json", _swap(lambda p, o: p.write_text("[" * 10 + " " * (2 << 20))),
                    {"offline": "INVALID"}, {"system_description"}),
    "too-deep": (OFF / "deep", lambda p, o: _deep(p), {}, {"tree"}),
}


class _Opened:
    """Every path opened through open(), io.open and os.open."""

    def __init__(self, monkeypatch) -> None:
        self.paths: list[str] = []
        real_open, real_os_open = builtins.open, os.open

        def rec_open(file, *a, **k):
            if isinstance(file, str | os.PathLike):
                self.paths.append(os.path.abspath(file))
            return real_open(file, *a, **k)

        def rec_os_open(path, *a, dir_fd=None, **k):
            where = os.readlink(f"/proc/self/fd/{dir_fd}") if dir_fd is not None else ""
            self.paths.append(os.path.join(where, os.fspath(path)) if where else os.path.abspath(path))
            return real_os_open(path, *a, dir_fd=dir_fd, **k)

        monkeypatch.setattr(builtins, "open", rec_open)
        monkeypatch.setattr(io, "open", rec_open)
        monkeypatch.setattr(os, "open", rec_os_open)

    def under(self, folder: Path) -> list[str]:
        real = os.path.realpath(folder)
        return [p for p in self.paths if os.path.realpath(p).startswith(real + os.sep)]


@pytest.fixture(scope="module")
def hostile(pristine_tree: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(tree, outside, database): a v5.1 tree with one valid submitter and one per hostile case."""
    base = tmp_path_factory.mktemp("hostile")
    peers = {"UntetherAI": (1.0, 1.0, 2)} | {f"H-{name}": (1.0, 1.0, 1) for name in CASES}
    root = inference_round(pristine_tree, base, "v5.1", peers=peers)
    outside = _outside(base, pristine_tree)
    for name, (where, make, _, _) in CASES.items():
        make(root / "closed" / f"H-{name}" / where, outside)
    return root, outside, base / "results.duckdb"


def test_hostile_results_are_invalid_rows_and_the_rest_is_ingested(hostile, monkeypatch) -> None:
    root, outside, db = hostile
    opened = _Opened(monkeypatch)
    with Store(db, write=True) as store:
        [stats] = ingest(store, plans([root]))
        rows = store.records("SELECT unit, path, verdict, errors, value, accelerators FROM results")
        findings = store.records("SELECT unit, rule, severity, path, message, result_path FROM findings")
        texts = store.records("SELECT * FROM results")
    monkeypatch.undo()
    assert opened.under(outside) == []
    assert stats.failed == [] and stats.checked == len(CASES) + 1
    valid = [r for r in rows if r["unit"] == "closed/UntetherAI"]
    assert len(valid) == 3 and {r["verdict"] for r in valid} == {"VALID"}
    for name, (_, _, verdicts, rules) in CASES.items():
        unit = f"closed/H-{name}"
        mine = {Path(r["path"]).name: r for r in rows if r["unit"] == unit}
        for folder, verdict in verdicts.items():
            assert folder in mine and mine[folder]["verdict"] == verdict and mine[folder]["errors"] >= 1, (name, mine)
        errors = {f["rule"] for f in findings if f["unit"] == unit and f["severity"] == "error"}
        assert rules <= errors, (name, errors)
    every = json.dumps([*texts, *findings], default=str)
    assert SECRET not in every  # nothing behind a link out of the tree was read
    assert "root:x:0" not in every  # /etc/passwd behind the odd-named link neither
    odd = [f for f in findings if f["unit"] == "closed/H-odd-name-link" and f["rule"] == "tree"]
    assert odd and "evil" in odd[0]["path"] and "\ufffd" in odd[0]["path"]  # the name stored, its bad byte replaced
    deep = [f for f in findings if f["unit"] == "closed/H-too-deep" and f["rule"] == "tree"]
    assert deep and "nested deeper" in deep[0]["message"]  # past the walk's bound: not checked, said so
    assert not [r for r in rows if r["unit"] == "closed/H-too-deep"]


def test_hostile_units_ingest_again_as_unchanged(hostile) -> None:
    root, _, db = hostile
    with Store(db, write=True) as store:
        ingest(store, plans([root]))
        [again] = ingest(store, plans([root]))
    assert (again.checked, again.unchanged) == (0, len(CASES) + 1)


def test_a_checker_that_stops_on_a_unit_stops_no_other(pristine_tree: Path, tmp_path: Path, monkeypatch) -> None:
    from proctor.resultsdb import inference_units

    root = inference_round(pristine_tree, tmp_path, "v5.1")
    real = inference_units.unit_rows

    def flaky(unit, *a, **k):
        if unit.submitter == "Beta":
            raise RecursionError("maximum recursion depth exceeded")
        return real(unit, *a, **k)

    monkeypatch.setattr(inference_units, "unit_rows", flaky)
    with Store(tmp_path / "r.duckdb", write=True) as store:
        [stats] = ingest(store, plans([root]))
        units = {r["unit"]: r for r in store.records("SELECT unit, results, findings FROM units")}
        [f] = store.records("SELECT rule, message FROM findings WHERE unit = 'closed/Beta'")
    assert stats.failed == ["closed/Beta"] and stats.results == 6
    assert units["closed/Beta"]["results"] == 0 and units["closed/Acme"]["results"] == 3
    assert f["rule"] == "ingest" and "RecursionError" in f["message"] and "a bug in proctor" in f["message"]
