"""The training journey closes (issue 31 §4): init -> train -> package -> check-package -> summarize,
each a `proctor` process as a user runs it, ending in a package the official package checker accepts
and a summary row with a finite, positive score."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.rules.training.package import SYSTEM_REQUIRED_FIELDS, SYSTEM_STATUS_VALUES

RUNS = 5  # digits_train's N (the default of `train`); its runs take well under a second each


def proctor(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "proctor", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
        timeout=600,
    )


@pytest.fixture(scope="module")
def journey(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """init, train and package in a fresh folder; each step's exit status and files checked."""
    cwd = tmp_path_factory.mktemp("journey")
    r = proctor("training", "init", "runs", "--submitter", "ACME", "--framework", "scikit-learn", cwd=cwd)
    assert r.returncode == 0, r.stderr
    desc = json.loads((cwd / "runs" / "system.json").read_text())
    assert set(desc) == set(SYSTEM_REQUIRED_FIELDS)
    assert desc["submitter"] == "ACME" and desc["division"] == "closed" and desc["framework"] == "scikit-learn"
    assert desc["status"] in SYSTEM_STATUS_VALUES and desc["system_name"] == "my-system"
    assert all(isinstance(v, str) for v in desc.values())  # the official checker joins them as text
    r = proctor("training", "train", "-o", "runs/digits_train", cwd=cwd)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (cwd / "runs" / "digits_train").iterdir()) == [
        f"result_{i}.txt" for i in range(RUNS)
    ]
    r = proctor("training", "package", "runs", "-o", "SUBMISSION", cwd=cwd)  # and checks it
    assert r.returncode == 0, r.stdout + r.stderr
    assert "check-package: PACKAGE VALID (1 benchmark folders)" in r.stdout
    return cwd


def test_package_layout(journey: Path) -> None:
    pkg = journey / "SUBMISSION"
    assert (pkg / "systems" / "my-system.json").read_bytes() == (journey / "runs" / "system.json").read_bytes()
    results = pkg / "results" / "my-system" / "digits_train"
    assert sorted(p.name for p in results.iterdir()) == [f"result_{i}.txt" for i in range(RUNS)]
    for i in range(RUNS):
        src = journey / "runs" / "digits_train" / f"result_{i}.txt"
        assert (results / f"result_{i}.txt").read_bytes() == src.read_bytes()
    assert (pkg / "benchmarks" / "digits_train" / "README.md").is_file()


def test_check_package_accepts_it(journey: Path) -> None:
    r = proctor("training", "check-package", "SUBMISSION", "--json", cwd=journey)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads(r.stdout)
    assert rep["valid"] is True and len(rep["checked"]) == 1
    assert rep["checked"][0].endswith("results/my-system/digits_train")
    assert [x["passed"] for x in rep["rcp"]] == [True]
    assert not [f for f in rep["findings"] if f["severity"] == "error"]


def test_summarize_prints_the_row_with_a_finite_positive_score(journey: Path) -> None:
    r = proctor("training", "summarize", "SUBMISSION", "--json", cwd=journey)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["summary"]
    assert len(rows) == 1
    row = rows[0]
    assert (row["system"], row["submitter"], row["division"]) == ("my-system", "ACME", "closed")
    score = row["digits_train"]
    assert isinstance(score, float) and math.isfinite(score) and 0 < score < 10  # minutes
    r = proctor("training", "summarize", "SUBMISSION", cwd=journey)
    assert r.returncode == 0 and "digits_train" in r.stdout and "my-system" in r.stdout
    assert f"{score:.8g}"[:6] in r.stdout  # the table shows the same score


def test_package_checks_and_exits_by_the_verdict(journey: Path) -> None:
    """A package one run short fails the check (exit 1, the rule named); a second package into the
    same folder is one error line and exit 2."""
    short = journey / "short"
    (short / "digits_train").mkdir(parents=True)
    (short / "system.json").write_bytes((journey / "runs" / "system.json").read_bytes())
    for i in range(RUNS - 1):
        src = journey / "runs" / "digits_train" / f"result_{i}.txt"
        (short / "digits_train" / src.name).write_bytes(src.read_bytes())
    r = proctor("training", "package", "short", "-o", "SHORT", cwd=journey)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "run_count" in r.stdout and "PACKAGE INVALID" in r.stdout
    r = proctor("training", "package", "runs", "-o", "SHORT", cwd=journey)
    assert r.returncode == 2 and "already exists" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_the_official_package_checker_accepts_it(journey: Path) -> None:
    pytest.importorskip("mlperf_logging.package_checker")
    r = subprocess.run(
        [sys.executable, "-m", "mlperf_logging.package_checker", "SUBMISSION", "training", "6.1.0",
         "--log_output", str(journey / "package_checker.log")],
        capture_output=True, text=True, cwd=journey, timeout=600,
    )
    out = r.stdout + r.stderr
    assert "PACKAGE CHECKER FOUND NO ERRORS, SUCCESS !" in out, out
    assert "System description checker passed for my-system" in out


# -- bad input: one error line, exit 2, nothing written -------------------------------------------------
def _runs(tmp_path: Path, *, system: dict | bytes | None = None, logs: int = 2) -> Path:
    from proctor.submission.training_package import system_template

    runs = tmp_path / "runs"
    (runs / "digits_train").mkdir(parents=True)
    desc = system_template(submitter="ACME", system_name="sys1", division="closed",
                           status="Available on-premise", framework="x")
    if system is None:
        (runs / "system.json").write_text(json.dumps(desc))
    elif isinstance(system, bytes):
        (runs / "system.json").write_bytes(system)
    else:
        (runs / "system.json").write_text(json.dumps({**desc, **system}))
    for i in range(logs):
        (runs / "digits_train" / f"result_{i}.txt").write_text(":::MLLOG {}\n")
    return runs


def _one_error(r, *words: str) -> None:
    assert r.rc == 2, (r.rc, r.out, r.err)
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    for w in words:
        assert w in lines[0], (w, lines[0])


BAD_RUNS = {
    "no system.json": (lambda runs: (runs / "system.json").unlink(), ["system.json", "training init"]),
    "system.json not JSON": (lambda runs: (runs / "system.json").write_bytes(b"{nope"), ["system.json"]),
    "system.json a list": (lambda runs: (runs / "system.json").write_bytes(b"[1]"), ["system.json"]),
    "system_name a path": (
        lambda runs: (runs / "system.json").write_text(json.dumps({"system_name": "../x", "division": "closed"})),
        ["system_name", "../x"],
    ),
    "division unknown": (
        lambda runs: (runs / "system.json").write_text(json.dumps({"system_name": "s", "division": "network"})),
        ["division", "closed, open"],
    ),
    "no result logs": (
        lambda runs: [p.unlink() for p in (runs / "digits_train").iterdir()],
        ["result_*.txt", "training train"],
    ),
    "linked result log": (
        lambda runs: (runs / "digits_train" / "result_9.txt").symlink_to(runs.parent / "elsewhere.txt"),
        ["result_9.txt", "not a regular file"],
    ),
    "linked benchmark folder": (
        lambda runs: (runs / "other").symlink_to(runs / "digits_train", target_is_directory=True),
        ["other", "link"],
    ),
    "benchmark folder name with a space": (
        lambda runs: (runs / "digits_train").rename(runs / "digits train"),
        ["digits train", "rename"],
    ),
    "a FIFO named like a log": (
        lambda runs: os.mkfifo(runs / "digits_train" / "result_5.txt"),
        ["result_5.txt", "not a regular file"],
    ),
}


@pytest.mark.parametrize("case", BAD_RUNS)
def test_package_refuses_bad_runs_with_one_line(tmp_path: Path, cli, case: str) -> None:
    runs = _runs(tmp_path)
    (tmp_path / "elsewhere.txt").write_text(":::MLLOG {}\n")
    spoil, words = BAD_RUNS[case]
    spoil(runs)
    r = cli("training", "package", runs, "-o", tmp_path / "pkg")
    _one_error(r, *words)
    assert not (tmp_path / "pkg").exists()


def test_package_refuses_an_existing_output_and_a_missing_folder(tmp_path: Path, cli) -> None:
    runs = _runs(tmp_path)
    (tmp_path / "pkg").mkdir()
    _one_error(cli("training", "package", runs, "-o", tmp_path / "pkg"), "already exists")
    assert list((tmp_path / "pkg").iterdir()) == []
    _one_error(cli("training", "package", tmp_path / "nope", "-o", tmp_path / "pkg2"), "nope")
    _one_error(cli("training", "package", runs, "-o", tmp_path / "pkg3", "--ruleset", "9.9.9"), "9.9.9")
    _one_error(cli("training", "package", runs, "-o", tmp_path / "pkg4", "--system", tmp_path / "x.json"),
               "--system")


def test_package_takes_a_system_file_and_the_runs_readme(tmp_path: Path, cli) -> None:
    runs = _runs(tmp_path, system={"system_name": "other"})
    (runs / "README.md").write_text("how to reproduce\n")
    sysfile = tmp_path / "described.json"
    sysfile.write_text((runs / "system.json").read_text().replace('"other"', '"sysB"'))
    r = cli("training", "package", runs, "-o", tmp_path / "pkg", "--system", sysfile, "--no-check")
    assert r.rc == 0, r.err
    pkg = tmp_path / "pkg"
    assert (pkg / "systems" / "sysB.json").read_text() == sysfile.read_text()
    assert sorted(p.name for p in (pkg / "results" / "sysB" / "digits_train").iterdir()) == [
        "result_0.txt", "result_1.txt"
    ]
    assert (pkg / "benchmarks" / "digits_train" / "README.md").read_text() == "how to reproduce\n"


def test_init_writes_once_and_names_what_is_left(tmp_path: Path, cli) -> None:
    r = cli("training", "init", tmp_path / "runs", "--submitter", "ACME", "--status", "cloud",
            "--division", "open", "--system-name", "box-1")
    assert r.rc == 0, r.err
    assert "fill in: framework" in r.out
    path = tmp_path / "runs" / "system.json"
    desc = json.loads(path.read_text())
    assert (desc["status"], desc["division"], desc["system_name"]) == ("Available cloud", "open", "box-1")
    path.write_text(json.dumps({**desc, "framework": "mine"}))
    before = path.read_bytes()
    r = cli("training", "init", tmp_path / "runs", "--submitter", "OTHER")
    assert r.rc == 0 and "nothing to write" in r.out and path.read_bytes() == before


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--status", "sold"], ["--status", "cloud"]),
        (["--division", "network"], ["--division", "closed, open"]),
        (["--system-name", "a/b"], ["--system-name"]),
    ],
)
def test_init_refuses_bad_options(tmp_path: Path, cli, args: list[str], words: list[str]) -> None:
    _one_error(cli("training", "init", tmp_path / "runs", "--submitter", "ACME", *args), *words)
    assert not (tmp_path / "runs").exists()


def test_init_refuses_a_file_for_the_runs_folder(tmp_path: Path, cli) -> None:
    (tmp_path / "runs").write_text("x")
    _one_error(cli("training", "init", tmp_path / "runs", "--submitter", "ACME"), "is a file")


# -- property: whatever the runs tree holds, package copies only its regular logs or refuses ------------
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

NAMES = st.sampled_from(["digits_train", "llama31_8b", "x y", "..", ".hidden", "power", "a" * 200, "é"])
FILES = st.sampled_from(["result_0.txt", "result_1.txt", "result_x.txt", "notes.txt", "README.md"])


@st.composite
def runs_trees(draw: st.DrawFn) -> list[tuple[str, str, str, bytes]]:
    """(folder, file, kind, bytes): kind is file, link (to a file outside RUNS) or dir."""
    return draw(
        st.lists(
            st.tuples(NAMES, FILES, st.sampled_from(["file", "file", "file", "link", "dir"]), st.binary(max_size=40)),
            max_size=6,
        )
    )


@pytest.mark.fuzz
@given(runs_trees(), st.sampled_from([b"ok", b"", b"{", b"[]", b'{"system_name": 3}', b"\xff"]))
def test_package_copies_only_regular_logs_or_refuses(tree: list[tuple[str, str, str, bytes]], sysdoc: bytes) -> None:
    import tempfile

    from proctor.errors import PackageError
    from proctor.submission.training_package import package_runs

    with tempfile.TemporaryDirectory() as d:
        base = Path(d)
        outside = base / "outside.txt"
        outside.write_bytes(b"secret")
        runs = base / "runs"
        runs.mkdir()
        (runs / "system.json").write_bytes(
            json.dumps({"system_name": "s", "division": "closed"}).encode() if sysdoc == b"ok" else sysdoc
        )
        for folder, name, kind, data in tree:
            f = runs / folder
            try:
                f.mkdir(exist_ok=True)
                p = f / name
                if p.exists() or p.is_symlink():
                    continue
                if kind == "file":
                    p.write_bytes(data)
                elif kind == "link":
                    p.symlink_to(outside)
                else:
                    p.mkdir()
            except OSError:
                continue
        out = base / "pkg"
        try:
            got = package_runs(runs, out)
        except PackageError as exc:
            assert str(exc) and "\n" not in str(exc)
            assert not out.exists()
            return
        for p in out.rglob("*"):
            assert not p.is_symlink() and p.resolve().is_relative_to(out.resolve())
            assert p.is_dir() or p.read_bytes() != b"secret"  # nothing from outside RUNS
        for b in got.benchmarks:
            for name in b.runs:
                copy = out / "results" / got.system / b.name / name
                assert copy.read_bytes() == (runs / b.name / name).read_bytes() != b"secret"
