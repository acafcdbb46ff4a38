"""Training packages and benchmark folders with links out of them, loops and FIFOs (issue 30 §1):
`training check-package`, `check-seeds`, `check-rcp`, `score`, `summarize` and `proctor report` name
them and never read them; `--set-scaling` and `summarize --output` write nothing through a link."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from proctor.training.package import check_package
from proctor.training.runs import read_run_set
from proctor.training.seeds import check_seeds

from .results_pkg import write_package, write_run_set

PASS_FAST = [175104 + 512 * i for i in range(10)]
MINUTES = [60.0 + 1.5 * i for i in range(10)]
BENCH = Path("results/sysA/llama31_8b")


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(folder.rglob("*"))
    }


@pytest.fixture
def pkg_and_outside(tmp_path: Path) -> tuple[Path, Path]:
    pkg = write_package(tmp_path / "pkg", {"sysA": {"llama31_8b": (PASS_FAST, MINUTES)}})
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(pkg / BENCH / "result_0.txt", outside / "result_0.txt")
    shutil.copy(pkg / "systems" / "sysA.json", outside / "sysA.json")
    (outside / "scaling.json").write_text('{"scaling_factor": 9.0}')
    return pkg, outside


CASES = [
    ("result file: absolute link out", BENCH / "result_10.txt", lambda p, out: p.symlink_to(out / "result_0.txt")),
    ("scaling.json: link out", BENCH / "scaling.json", lambda p, out: p.symlink_to(out / "scaling.json")),
    ("system JSON: link out", Path("systems/sysA.json"), lambda p, out: p.symlink_to(out / "sysA.json")),
    ("system folder: link out", Path("results/sysB"), lambda p, out: p.symlink_to(out)),
    ("benchmark folder: '..' links", BENCH / "up", lambda p, out: (p.symlink_to(".."), (p.parent / "up2").symlink_to(".."))),
    ("result file: FIFO", BENCH / "result_11.txt", lambda p, out: os.mkfifo(p)),
    ("result file: loop", BENCH / "result_12.txt", lambda p, out: p.symlink_to(p.name)),
]


@pytest.mark.parametrize("case", range(len(CASES)), ids=[c[0] for c in CASES])
def test_check_package_names_links_and_fifos_and_reads_none(pkg_and_outside, case: int) -> None:
    pkg, outside = pkg_and_outside
    before = _digest(outside)
    _, rel, make = CASES[case]
    if (pkg / rel).exists() and not (pkg / rel).is_symlink():
        (pkg / rel).unlink()
    make(pkg / rel, outside)
    rep = check_package(pkg, set_scaling=True)
    assert not rep.valid
    assert any(f.failed and f.path == str(pkg / rel) for f in rep.findings), [(f.rule, f.path) for f in rep.findings]
    assert _digest(outside) == before  # --set-scaling wrote nothing through the scaling.json link


def test_a_linked_result_file_is_not_a_run(pkg_and_outside) -> None:
    """`score`/`check-rcp` on the benchmark folder: the link is a finding, not a tenth run."""
    pkg, outside = pkg_and_outside
    bdir = pkg / BENCH
    (bdir / "result_9.txt").unlink()
    (bdir / "result_9.txt").symlink_to(outside / "result_0.txt")
    rs = read_run_set(bdir)
    assert len(rs.runs) == 9 and all(r.path.name != "result_9.txt" for r in rs.runs)
    assert any(f.rule == "result_files" and f.path == str(bdir / "result_9.txt") for f in rs.findings)
    named = [f for f in check_seeds(bdir) if f.path == str(bdir / "result_9.txt")]
    assert [f.rule for f in named] == ["seeds:not_a_file"] and "symbolic link" in named[0].message


@pytest.mark.parametrize("cmd", ["check-package", "check-rcp", "score", "summarize", "check-seeds"])
def test_commands_on_a_package_with_loops_never_hang_or_trace(pkg_and_outside, cli, cmd: str) -> None:
    pkg, outside = pkg_and_outside
    (pkg / "results/sysA/a").symlink_to("..")
    (pkg / "results/sysA/b").symlink_to("..")
    (pkg / BENCH / "result_20.txt").symlink_to(outside / "result_0.txt")
    target = pkg / BENCH if cmd == "check-seeds" else pkg
    r = cli("training", cmd, target)
    assert r.rc in (0, 1) and "Traceback" not in r.err, (cmd, r.err)


def test_set_scaling_replaces_a_link_instead_of_writing_through_it(tmp_path: Path) -> None:
    from proctor.training.rcp import write_scaling

    outside = tmp_path / "outside.json"
    outside.write_text("keep")
    bdir = write_run_set(tmp_path / "llama31_8b", PASS_FAST, MINUTES)
    (bdir / "scaling.json").symlink_to(outside)
    write_scaling(bdir, 1.5)
    assert outside.read_text() == "keep"
    assert not (bdir / "scaling.json").is_symlink() and "1.5" in (bdir / "scaling.json").read_text()


def test_summarize_output_is_not_written_through_a_link(pkg_and_outside, cli, tmp_path: Path) -> None:
    pkg, outside = pkg_and_outside
    before = _digest(outside)
    (tmp_path / "sum.csv").symlink_to(outside / "result_0.txt")
    r = cli("training", "summarize", pkg, "--output", tmp_path / "sum.csv")
    assert r.rc == 2 and "symbolic link" in r.err and len(r.err.strip().splitlines()) == 1
    assert _digest(outside) == before


def test_report_skips_a_linked_log_and_writes_no_report_through_a_link(tmp_path: Path, cli) -> None:
    bdir = write_run_set(tmp_path / "runs" / "llama31_8b", PASS_FAST, MINUTES)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "report.html").write_text("keep")
    (tmp_path / "link.html").symlink_to(outside / "report.html")
    r = cli("report", bdir.parent, "-o", tmp_path / "link.html")
    assert r.rc == 2 and "symbolic link" in r.err
    assert (outside / "report.html").read_text() == "keep"
