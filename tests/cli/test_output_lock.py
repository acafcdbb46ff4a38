"""One process owns an output folder (issue 30 §5): a second command writing into it is refused with
exit 2 naming the first one's pid, for every command that writes a run folder; the lock dies with
its process, however it ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from proctor.errors import ConfigError, PackageError
from proctor.loadgen.output_lock import LOCK_NAME, FolderInUse, check_free, owned
from proctor.schemas import SCHEMAS, validate

SRC = Path(__file__).resolve().parents[2] / "src"
GUARD_S = 120
FAST = ("--sut", "synthetic:service_us=0,workers=0,total=64,perf=64", "--duration-ms", "0", "--min-queries", "64",
        "--no-trace", "--quiet")


class Holder:
    """Another process holding `folder` (as a running `proctor run` does) until it is told to go."""

    def __init__(self, folder: Path, owner: str = "proctor run") -> None:
        code = textwrap.dedent(f"""
            import sys
            from proctor.loadgen.output_lock import owned
            with owned({str(folder)!r}, {owner!r}):
                print("held", flush=True)
                sys.stdin.read()
        """)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(SRC)},
        )
        assert self.proc.stdout is not None and self.proc.stdout.readline() == "held\n"

    def release(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=GUARD_S)


@pytest.fixture
def held(tmp_path):
    folder = tmp_path / "out"
    holder = Holder(folder)
    yield folder, holder.proc.pid
    if holder.proc.poll() is None:
        holder.release()


COMMANDS = [
    ("run", ["run", "-s", "Offline", *FAST, "-o", "{out}"]),
    ("run --json", ["run", "-s", "Offline", *FAST, "-o", "{out}", "--json"]),
    ("accuracy run", ["run", "-s", "Offline", *FAST, "--mode", "AccuracyOnly", "-o", "{out}"]),
    ("audit", ["audit", "TEST04", "-s", "Offline", *FAST, "-o", "{out}"]),
    ("sweep", ["sweep", "--rates", "10", *FAST, "-o", "{out}"]),
    ("demo", ["demo", "--quick", "-o", "{out}"]),
    ("training train", ["training", "train", "-o", "{out}", "--runs", "1"]),
]


@pytest.mark.parametrize(("name", "args"), COMMANDS, ids=[c[0] for c in COMMANDS])
def test_a_second_writer_is_refused_naming_the_first_ones_pid(cli, held, name, args):
    folder, pid = held
    before = sorted(p.name for p in folder.iterdir())
    r = cli(*[a.format(out=folder) for a in args])
    assert r.rc == 2, r.out + r.err
    line = r.err.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    assert f"{folder} is in use by proctor run (pid {pid})" in line and "choose another output folder" in line
    assert sorted(p.name for p in folder.iterdir()) == before  # nothing written, nothing emptied
    if "--json" in args:
        doc = json.loads(r.out)
        assert validate(doc, SCHEMAS["proctor.error"]) == [] and doc["exit_code"] == 2 and str(pid) in doc["error"]


def test_submission_package_into_a_held_folder_is_refused(cli, tmp_path):
    from proctor.submission.package import package

    runs = tmp_path / "runs"
    (runs / "digits" / "Offline" / "accuracy").mkdir(parents=True)
    (runs / "system.json").write_text("{}")
    holder = Holder(tmp_path / "sub")
    try:  # a package is made into a new folder, which it then holds (output_lock) while it writes
        with pytest.raises(PackageError, match="already exists"):
            package(runs, tmp_path / "sub", submitter="x", system_json=None, division="closed", version="v6.0")
    finally:
        holder.release()


def test_two_real_runs_into_one_folder(tmp_path):
    """The issue's case: `proctor run -o SAME` twice at once. The second is refused while the first
    runs on; the first's logs are its own."""
    out = tmp_path / "same"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    first = subprocess.Popen(
        [sys.executable, "-m", "proctor", "run", "-s", "Offline", "--duration-ms", "60000", "--no-trace",
         "--sut", "synthetic:service_us=200000,workers=2", "-o", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        while not (out / LOCK_NAME).exists():
            assert first.poll() is None, first.stderr.read() if first.stderr else ""
            time.sleep(0.02)  # polling: the lock appears when the run starts
        second = subprocess.run(
            [sys.executable, "-m", "proctor", "run", "-s", "Offline", *FAST, "-o", str(out)],
            capture_output=True, text=True, env=env, timeout=GUARD_S,
        )
        assert second.returncode == 2, second.stderr
        assert f"in use by proctor run (pid {first.pid})" in second.stderr
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=GUARD_S)
    assert first.returncode == 143
    summary = (out / "mlperf_log_summary.txt").read_text()
    assert summary.count("MLPerf Results Summary") == 1 and "interrupted (SIGTERM)" in summary


def test_the_lock_is_reentrant_released_and_taken_again(tmp_path):
    folder = tmp_path / "f"
    with owned(folder, "me") as path:
        assert path == folder and (folder / LOCK_NAME).read_text() == f"{os.getpid()}\nme\n"
        with owned(folder):  # a command, then the engine it runs: one owner
            check_free(folder)
        assert (folder / LOCK_NAME).exists()
    assert not (folder / LOCK_NAME).exists()
    holder = Holder(folder)
    try:
        with pytest.raises(FolderInUse) as info:
            check_free(folder)
        assert info.value.pid == holder.proc.pid
    finally:
        holder.proc.kill()  # SIGKILL: no cleanup, yet the kernel drops the lock
        holder.proc.wait(timeout=GUARD_S)
    with owned(folder):
        pass


def test_a_link_in_place_of_the_lock_is_refused(tmp_path):
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / LOCK_NAME).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(ConfigError, match="is a link"), owned(folder):
        pass
    assert not (tmp_path / "elsewhere").exists()  # never followed, never created


def test_garbage_in_another_owners_lock_is_shown_harmlessly(tmp_path):
    folder = tmp_path / "f"
    holder = Holder(folder)
    try:
        (folder / LOCK_NAME).write_bytes(b"\x1b[31m999999999999999999\n" + b"x" * 10_000)
        with pytest.raises(FolderInUse) as info:
            check_free(folder)
        assert info.value.pid is None and "\x1b" not in str(info.value) and len(str(info.value)) < 400
    finally:
        holder.release()
