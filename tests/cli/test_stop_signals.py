"""A run that is stopped loses nothing (issue 30 §5): SIGTERM and SIGHUP are handled as Ctrl-C is,
for `proctor run`, `audit` and `sweep` (the demo: tests/app/test_demo.py): the logs whole and marked
incomplete, exit 128 + the signal (130, 143, 129), `--json` the partial result. A run killed outright
(SIGKILL) cannot be handled: `proctor report` says it did not finish and its lock blocks no one."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.logs.summary import INCOMPLETE_MARK
from proctor.loadgen.output_lock import LOCK_NAME
from proctor.schemas import SCHEMAS, validate

SRC = Path(__file__).resolve().parents[2] / "src"
GUARD_S = 120  # hang guard for the subprocesses; never a measured duration
SLOW_SUT = "synthetic:service_us=200000,workers=2"  # 10 samples/s: the run is mid-way when stopped
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
NAME = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}


class Proctor:
    """`python -m proctor ARGS` with its stderr read line by line (to wait for the progress line)."""

    def __init__(self, *args: object, cwd: Path) -> None:
        # a progress line each 0.2 s: the first one says the timed part is under way
        env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "120", "PROCTOR_PROGRESS_INTERVAL_S": "0.2"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "proctor", *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=env, cwd=cwd,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.err: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.err.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, words: str) -> None:
        """Until stderr shows `words` (the live progress line), not a sleep of fixed length."""
        try:
            while True:
                line = self.lines.get(timeout=GUARD_S)
                assert line is not None, "".join(self.err)
                if words in line:
                    return
        except BaseException:
            self.proc.kill()
            raise

    def wait_for_run(self, folder: Path) -> None:
        """Until a run under `folder` is issuing (for commands without a live line: audit)."""
        deadline = time.monotonic() + GUARD_S
        while not any("Starting performance mode" in d.read_text(errors="replace")
                      for d in folder.rglob("mlperf_log_detail.txt")):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.proc.kill()
                raise AssertionError("no run started: " + "".join(self.err))
            time.sleep(0.05)

    def stop(self, sig: int) -> tuple[int, str, str]:
        """Send `sig`; (exit status, stdout, stderr) once the process ended."""
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=GUARD_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        assert self.proc.stdout is not None
        out = self.proc.stdout.read()
        self.reader.join(timeout=GUARD_S)
        return self.proc.returncode, out, "".join(self.err)


def _assert_whole_and_marked(folder: Path, sig: int) -> None:
    summary = (folder / "mlperf_log_summary.txt").read_text()
    assert f"{INCOMPLETE_MARK} interrupted ({NAME[sig]})" in summary, summary
    assert "No errors encountered" not in summary
    detail = read_detail(folder / "mlperf_log_detail.txt")
    assert detail.require("proctor_run_incomplete") == f"interrupted ({NAME[sig]})"
    json.loads((folder / "mlperf_log_accuracy.json").read_text())  # whole JSON, not a 0-byte file
    assert not (folder / LOCK_NAME).exists()  # released on the way out


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_a_stopped_run_keeps_whole_logs_marked_incomplete(tmp_path, sig):
    out = tmp_path / "logs"
    p = Proctor("run", "-s", "Offline", "--duration-ms", "60000", "--no-trace", "--sut", SLOW_SUT, "-o", out,
                cwd=tmp_path)
    p.wait_for("done of")  # the first progress line: the timed part is under way
    rc, stdout, stderr = p.stop(sig)
    assert rc == STATUS[sig], stderr
    assert "Traceback" not in stderr
    assert stderr.splitlines()[-1].startswith("interrupted"), stderr
    if sig != signal.SIGINT:
        assert f"interrupted by {NAME[sig]}" in stderr
    _assert_whole_and_marked(out, sig)
    report = subprocess.run(
        [sys.executable, "-m", "proctor", "report", out, "-o", tmp_path / "r.html"], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)}, timeout=GUARD_S,
    )
    # the report is written (exit 0, whatever the verdict, as after Ctrl-C) and says the run did not finish
    assert report.returncode == 0, report.stderr
    assert f"the run did not finish: interrupted ({NAME[sig]})" in report.stderr
    assert "did not finish" in (tmp_path / "r.html").read_text()


def test_sigterm_with_json_prints_the_partial_result(tmp_path):
    out = tmp_path / "logs"
    p = Proctor("run", "-s", "Offline", "--duration-ms", "60000", "--no-trace", "--sut", SLOW_SUT, "-o", out,
                "--json", cwd=tmp_path)
    p.wait_for("done of")
    rc, stdout, stderr = p.stop(signal.SIGTERM)
    assert rc == 143, stderr
    doc = json.loads(stdout)  # exactly one document
    assert validate(doc, SCHEMAS["proctor.run"]) == [], stdout
    assert doc["incomplete"] is True and doc["exit_code"] == 143 and doc["verdict"] == "INCOMPLETE"
    assert doc["cause"] == "interrupted (SIGTERM)" and doc["numbers"]["sample_count"] >= 0
    _assert_whole_and_marked(out, signal.SIGTERM)


def test_sigterm_stops_an_audit_with_its_run_marked(tmp_path):
    out = tmp_path / "audit"
    p = Proctor("audit", "TEST04", "-s", "Offline", "--duration-ms", "60000", "--no-trace", "--sut", SLOW_SUT,
                "-o", out, "--json", cwd=tmp_path)
    p.wait_for_run(out)
    rc, stdout, stderr = p.stop(signal.SIGTERM)
    assert rc == 143, stderr
    doc = json.loads(stdout)
    assert validate(doc, SCHEMAS["proctor.error"]) == [] and doc["incomplete"] is True and doc["exit_code"] == 143
    details = list(out.rglob("mlperf_log_detail.txt"))
    assert details
    cut = [d.parent for d in details if "interrupted" in d.read_text()]
    assert len(cut) == 1, details  # the run the signal cut; any before it ended whole
    _assert_whole_and_marked(cut[0], signal.SIGTERM)
    assert not (out / LOCK_NAME).exists()


def test_sigterm_stops_a_sweep_keeping_the_points_that_ended(tmp_path):
    out = tmp_path / "sweep"
    p = Proctor("sweep", "--rates", "5,6", "--duration-ms", "60000", "--no-trace", "--sut", SLOW_SUT, "-o", out,
                "--json", cwd=tmp_path)
    p.wait_for("done of")
    rc, stdout, stderr = p.stop(signal.SIGTERM)
    assert rc == 143, stderr
    doc = json.loads(stdout)
    assert doc["incomplete"] is True and doc["exit_code"] == 143 and doc["points"] == []
    assert json.loads((out / "sweep.json").read_text())["points"] == []
    (point,) = [d.parent for d in out.rglob("mlperf_log_detail.txt")]
    _assert_whole_and_marked(point, signal.SIGTERM)


def test_a_killed_run_is_reported_unfinished_and_its_lock_blocks_no_one(tmp_path):
    out = tmp_path / "logs"
    p = Proctor("run", "-s", "Offline", "--duration-ms", "60000", "--no-trace", "--sut", SLOW_SUT, "-o", out,
                cwd=tmp_path)
    p.wait_for("done of")
    rc, _, _ = p.stop(signal.SIGKILL)
    assert rc == -signal.SIGKILL
    assert (out / LOCK_NAME).exists()  # left behind, but the kernel dropped its lock
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    report = subprocess.run([sys.executable, "-m", "proctor", "report", out, "-o", tmp_path / "r.html"],
                            capture_output=True, text=True, env=env, timeout=GUARD_S)
    assert report.returncode == 0 and "the run did not finish" in report.stderr, report.stderr
    again = subprocess.run(
        [sys.executable, "-m", "proctor", "run", "-s", "Offline", "--sut", "synthetic:service_us=0,workers=0",
         "--duration-ms", "0", "--min-queries", "100", "--no-trace", "--no-report", "--quiet", "-o", out],
        capture_output=True, text=True, env=env, timeout=GUARD_S,
    )
    assert again.returncode in (0, 1) and "in use" not in again.stderr, again.stderr
    assert not (out / LOCK_NAME).exists()


def test_stop_signals_are_held_while_logs_are_written_and_then_raised():
    from proctor.loadgen import stop_signals

    previous = signal.getsignal(signal.SIGTERM)
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        stop_signals.install()
        with pytest.raises(stop_signals.Stopped) as info:
            os.kill(os.getpid(), signal.SIGTERM)  # the handler raises at the next bytecode, here
        assert info.value.signum == signal.SIGTERM and isinstance(info.value, KeyboardInterrupt)
        assert stop_signals.exit_status(info.value) == 143 and stop_signals.reason(info.value) == "interrupted (SIGTERM)"
        with stop_signals.held() as got:
            os.kill(os.getpid(), signal.SIGTERM)
            os.kill(os.getpid(), signal.SIGINT)
        assert got == [signal.SIGTERM, signal.SIGINT]  # held, in order; the handlers are back after
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        assert isinstance(stop_signals.interruption(signal.SIGTERM), stop_signals.Stopped)
        assert type(stop_signals.interruption(signal.SIGINT)) is KeyboardInterrupt
        wrapped = KeyboardInterrupt()
        wrapped.__cause__ = stop_signals.Stopped(signal.SIGHUP)
        assert stop_signals.exit_status(wrapped) == 129 and stop_signals.exit_status(KeyboardInterrupt()) == 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_install_leaves_a_handler_someone_else_set():
    from proctor.loadgen import stop_signals

    previous = signal.getsignal(signal.SIGTERM)

    def theirs(signum, frame):  # pragma: no cover - never delivered
        pass

    try:
        signal.signal(signal.SIGTERM, theirs)
        stop_signals.install()
        assert signal.getsignal(signal.SIGTERM) is theirs
    finally:
        signal.signal(signal.SIGTERM, previous)
