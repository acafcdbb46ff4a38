"""`proctor report` on the command line, and the report `proctor run` writes next to its logs."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_runs import make_run

from proctor.loadgen.types import Scenario


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("off") / "run", Scenario.OFFLINE, 5000.0, queries=1)


def test_report_writes_html_and_pngs(cli, offline_run: Path, tmp_path: Path) -> None:
    out, png = tmp_path / "x" / "r.html", tmp_path / "png"
    r = cli("report", str(offline_run), "-o", str(out), "--png", str(png))
    assert r.rc == 0, r.err
    assert f"report: {out}" in r.out and out.is_file()
    assert sorted(p.name for p in png.iterdir()) and all(p.suffix == ".png" for p in png.iterdir())
    assert 'id="run-0"' in out.read_text()


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["{tmp}/missing"], ["missing", "no such"]),
        (["{tmp}/empty"], ["no LoadGen logs", "result_"]),
        (["{tmp}/file.txt"], ["not a folder"]),
        (["{run}", "-o", "{tmp}"], ["is a folder"]),
        (["{run}", "--png", "{tmp}/file.txt"], ["--png", "is a file"]),
        (["{tmp}/garbage"], ["not a summary", "mlperf_log_summary.txt"]),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli, offline_run: Path, tmp_path: Path, args, words) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "file.txt").write_text("x")
    (tmp_path / "garbage").mkdir()
    (tmp_path / "garbage" / "mlperf_log_summary.txt").write_bytes(b"\xff\xfe" * 100)
    argv = [a.format(tmp=tmp_path, run=offline_run) for a in args]
    r = cli("report", *argv)
    assert r.rc == 2, (r.out, r.err)
    assert "Traceback" not in r.err and r.err.count("\n") == 1
    assert any(w in r.err for w in words), r.err


def test_a_bad_run_among_good_ones_is_skipped_not_fatal(cli, offline_run: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "mlperf_log_detail.txt").write_text("no mllog here\n")
    r = cli("report", str(offline_run), str(bad), "-o", str(tmp_path / "r.html"))
    assert r.rc == 0 and "skipped" in r.err and str(bad) in r.err
    html = (tmp_path / "r.html").read_text()
    assert 'id="skipped"' in html and "not a detail log" in html


def test_proctor_run_writes_the_report_next_to_the_logs(cli, tmp_path: Path) -> None:
    args = ["run", "--sut", "synthetic", "--scenario", "Offline", "--duration-ms", "100", "--target-qps", "2000"]
    r = cli(*args, "--output", str(tmp_path / "a"))
    assert r.rc in (0, 1), r.err
    assert (tmp_path / "a" / "report.html").is_file()
    assert f"report: {tmp_path / 'a' / 'report.html'}" in r.out
    r = cli(*args, "--output", str(tmp_path / "b"), "--no-report")
    assert r.rc in (0, 1) and not (tmp_path / "b" / "report.html").exists()
    assert "report:" not in r.out
