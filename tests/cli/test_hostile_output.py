"""A run's output folder may hold what someone else placed there: a log file that is a link (to a file
outside the folder), a FIFO or a device. proctor writes no log through it, refuses the run with one
line naming the file (exit 2), and reads no log through a link either (issue 30 §1)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.errors import LogFormatError
from proctor.loadgen.logs.reader import read_detail

LOGS = ("mlperf_log_detail.txt", "mlperf_log_summary.txt", "mlperf_log_accuracy.json", "mlperf_log_trace.json",
        "mlperf_log_samples.bin")
RUN = ["run", "-s", "Offline", "--sut", "synthetic:service_us=0,workers=0", "--target-qps", "20000",
       "--duration-ms", "100", "--trace", "--no-report"]


def proctor(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "proctor", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", LOGS)
@pytest.mark.parametrize("what", ["link", "dangling", "fifo"])
def test_a_log_that_is_not_a_regular_file_is_refused_and_nothing_is_written_through_it(
    tmp_path: Path, name: str, what: str
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("someone else's file\n" * 100)
    before = digest(outside)
    out = tmp_path / "out"
    out.mkdir()
    placed = out / name
    if what == "link":
        placed.symlink_to(outside)
    elif what == "dangling":
        placed.symlink_to(tmp_path / "nowhere.txt")
    else:
        os.mkfifo(placed)
    r = proctor(*RUN, "-o", out, cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and name in lines[0] and "Traceback" not in r.stderr, r.stderr
    assert digest(outside) == before  # not truncated, not appended to
    assert not (tmp_path / "nowhere.txt").exists()  # a dangling link is not followed to create its target
    assert placed.is_symlink() or placed.is_fifo()  # left as it was, for the user to look at


def test_a_clean_folder_still_runs_and_its_logs_are_regular_files(tmp_path: Path) -> None:
    r = proctor(*RUN, "-o", tmp_path / "out", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr  # 1: a run this short may miss min_duration on a fast machine
    for name in LOGS:
        p = tmp_path / "out" / name
        assert p.is_file() and not p.is_symlink() and p.stat().st_size > 0, name


def test_a_log_read_through_a_link_is_refused(tmp_path: Path) -> None:
    r = proctor(*RUN, "-o", tmp_path / "real", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr  # the verdict is not what this test is about
    (tmp_path / "view").mkdir()
    (tmp_path / "view" / "mlperf_log_detail.txt").symlink_to(tmp_path / "real" / "mlperf_log_detail.txt")
    with pytest.raises(LogFormatError, match="a link"):
        read_detail(tmp_path / "view" / "mlperf_log_detail.txt")
    assert read_detail(tmp_path / "real" / "mlperf_log_detail.txt").get("result_validity") is not None


def test_the_official_engine_is_not_let_write_through_a_link_either(tmp_path: Path) -> None:
    """The official LoadGen opens its logs following links: the folder is checked before it starts."""
    pytest.importorskip("mlperf_loadgen")
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "mlperf_log_summary.txt").symlink_to(outside)
    r = proctor(*RUN, "--engine", "official", "-o", out, cwd=tmp_path)
    assert r.returncode == 2 and "mlperf_log_summary.txt" in r.stderr, r.stderr[-2000:]
    assert outside.read_text() == "keep me\n"
