"""Bad and hostile input to the inference checks and their commands: one clear line or a finding,
never a traceback, a hang or a pass (issue 10)."""

from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pytest
from checks_corpus import UT_EDGE, build_valid_tree, edit_detail, edit_summary
from rich.console import Console

from proctor.checks.accuracy import check_accuracy, parse_accuracy_text
from proctor.checks.submission import check_submission
from proctor.checks.system_description import check_system_description
from proctor.errors import LogFormatError
from proctor.loadgen.logs import read_detail, read_summary
from proctor.rules.inference import resolve

SS = Path("closed/UntetherAI/results") / UT_EDGE / "resnet50" / "singlestream"
DETAIL = SS / "performance/run_1/mlperf_log_detail.txt"


@pytest.fixture
def valid_tree(tmp_path: Path) -> Path:
    return build_valid_tree(tmp_path)


def _failed(report) -> list:
    return [f for f in report.findings if f.failed]


# ---- the commands: exit 2 and one line for input that cannot be right ---------------------------

BAD_CLI = [
    (("bandwidth", "resnet50", "--throughput", "nan", "--dtype-size", "1"), ["--throughput", "finite"]),
    (("bandwidth", "resnet50", "--throughput", "inf", "--dtype-size", "1"), ["--throughput"]),
    (("bandwidth", "resnet50", "--throughput", "-5", "--dtype-size", "1"), ["--throughput", "> 0"]),
    (("bandwidth", "resnet50", "--throughput", "0", "--dtype-size", "1"), ["--throughput"]),
    (("bandwidth", "resnet50", "--throughput", "10", "--dtype-size", "9"), ["--dtype-size", "64 bits"]),
    (("bandwidth", "resnet50", "--throughput", "10", "--dtype-size", "0"), ["--dtype-size"]),
    (("bandwidth", "resnet50", "--throughput", "10", "--dtype-size", "-2"), ["--dtype-size"]),
    (("bandwidth", "resnt50", "--throughput", "10", "--dtype-size", "1"), ["did you mean 'resnet50'"]),
    (("early-stopping", "-p", "99", "-n", "10", "-t", "11"), ["--overlatency 11", "0 to 10"]),
    (("early-stopping", "-p", "99", "-n", "-1"), ["--queries -1"]),
    (("early-stopping", "-p", "99", "-n", "100", "-t", "-1"), ["--overlatency -1"]),
    (("early-stopping", "-p", "100", "-n", "10"), ["--percentile", "(0, 100)"]),
    (("early-stopping", "-p", "0", "-n", "10"), ["--percentile"]),
    (("early-stopping", "-p", "-90", "-n", "10"), ["--percentile"]),
    (("early-stopping", "-p", "nan", "-n", "10"), ["--percentile"]),
]


@pytest.mark.parametrize(("args", "words"), BAD_CLI, ids=[" ".join(a) for a, _ in BAD_CLI])
def test_bad_input_is_one_line_and_exit_2(cli, args, words) -> None:
    r = cli(*args)
    assert r.rc == 2, (r.out, r.err)
    assert "Traceback" not in r.err and r.out == ""
    assert len(r.err.strip().splitlines()) == 1, r.err
    for w in words:
        assert w in r.err


def test_summarize_empty_folder_and_wrong_level(cli, tmp_path: Path, valid_tree: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    r = cli("summarize", empty)
    assert r.rc == 2 and "no results found" in r.err and str(empty) in r.err and "<division>/<submitter>" in r.err
    wrong = valid_tree / "closed/UntetherAI/results"  # one level too deep
    r = cli("summarize", wrong, "--csv", "--round", "v4.1")
    assert r.rc == 2 and str(wrong) in r.err and r.out == "" and "Traceback" not in r.err
    r = cli("summarize", valid_tree, "--csv", "--round", "v4.1")
    assert r.rc == 0 and r.out.count("\n") == 4  # header + three results


def test_empty_results_folder_does_not_pass(cli, valid_tree: Path) -> None:
    results = valid_tree / "closed/UntetherAI/results"
    shutil.rmtree(results)
    results.mkdir()
    report = check_submission(valid_tree, "v4.1")
    assert not report.valid and report.results == []
    assert [f.rule for f in _failed(report)] == ["no_results"]
    r = cli("check", "submission", valid_tree, "--round", "v4.1")
    assert r.rc == 1 and "0 result(s)" in r.out


def test_tables_never_cut_numbers_at_80_columns(monkeypatch, valid_tree: Path) -> None:
    from proctor.cli import tree_commands

    buf = io.StringIO()
    monkeypatch.setattr(
        tree_commands, "console", lambda: Console(file=buf, width=80, force_terminal=True, color_system=None)
    )
    monkeypatch.setattr(tree_commands, "is_terminal", lambda: True)  # an 80-column terminal: rich's table
    from proctor.checks.summarize import summarize

    rows = summarize(valid_tree, "v4.1")
    tree_commands.results_table(rows)
    text = buf.getvalue()
    assert "…" not in text
    for r in rows:
        assert f"{r.value:.6g}" in text
    assert max(len(line) for line in text.splitlines()) <= 80


def test_early_stopping_table_in_a_narrow_pipe(cli) -> None:
    r = cli("early-stopping", "-p", "99.9", "-n", "123456789012", "-t", "123456789")
    assert r.rc == 0 and "…" not in r.out and "123456789" in r.out


# ---- accuracy.txt ---------------------------------------------------------------------------------


def test_accuracy_out_of_range_is_a_finding() -> None:
    values = parse_accuracy_text("accuracy=1e999%, good=1, total=2\n")
    findings, _ = check_accuracy(resolve("resnet").benchmark, resolve("resnet").level, values, "accuracy.txt")
    assert [f.rule for f in findings] == ["accuracy_value"] and "not a finite number" in findings[0].message


def test_accuracy_long_line_without_separator_is_linear() -> None:
    # 64 KB took 191 s with the old pattern; 1 MB of the same is cut at MAX_LINE_CHARS and parsed at once
    assert parse_accuracy_text("a" * (1 << 20)) == {}
    assert parse_accuracy_text(" a" * 20000 + "=1") == {("a " * 20000).strip(): 1.0}
    assert parse_accuracy_text("x" * 70000 + "\naccuracy=76.1%") == {"accuracy": 76.1}


# ---- performance detail logs ----------------------------------------------------------------------


def test_invalid_result_validity_fails(valid_tree: Path) -> None:
    edit_detail(valid_tree / DETAIL, "result_validity", '"INVALID"')
    edit_summary(valid_tree / DETAIL.with_name("mlperf_log_summary.txt"), "Result is", "INVALID")
    report = check_submission(valid_tree, "v4.1")
    assert [(f.rule, f.key) for f in _failed(report)] == [("result_validity", "result_validity")]
    assert _failed(report)[0].line is not None


def test_unknown_effective_scenario_fails(valid_tree: Path) -> None:
    edit_detail(valid_tree / DETAIL, "effective_scenario", '"Batch"')
    report = check_submission(valid_tree, "v4.1")
    assert [(f.rule, f.key) for f in _failed(report)] == [("detail_log_value", "effective_scenario")]
    assert "'Batch'" in _failed(report)[0].message


def test_deeply_nested_rule_value_is_a_finding(valid_tree: Path) -> None:
    edit_detail(valid_tree / DETAIL, "effective_scenario", "[" * 1000 + "]" * 1000)
    report = check_submission(valid_tree, "v4.1")
    rules = {f.rule for f in _failed(report)}
    assert "detail_log_parse" in rules and not report.valid
    assert any("nested deeper" in f.message for f in _failed(report))


def test_read_summary_invalid_utf8(tmp_path: Path) -> None:
    p = tmp_path / "mlperf_log_summary.txt"
    p.write_bytes(b"MLPerf Results Summary\nSUT name : \xff\xfe\n")
    with pytest.raises(LogFormatError, match=r"mlperf_log_summary.txt:2: not UTF-8"):
        read_summary(p)


@pytest.mark.parametrize(
    "label", ["additional_stats", "test_parameters", "per_query", "early_stopping", "lines", "recommendations"]
)
def test_a_summary_label_named_like_the_readers_own_keys_is_refused(tmp_path: Path, label: str) -> None:
    """`additional_stats : 1` at the top once replaced the section's dict and crashed the reader (TypeError)."""
    p = tmp_path / "mlperf_log_summary.txt"
    p.write_text(
        f"MLPerf Results Summary\n{label} : 1\nAdditional Stats\nMin latency (ns) : 5\n"
        "Test Parameters Used\nmin_duration (ms): 3\n"
    )
    with pytest.raises(LogFormatError, match=r"mlperf_log_summary.txt:2: unexpected line"):
        read_summary(p)


def test_readers_refuse_non_regular_files(tmp_path: Path) -> None:
    fifo = tmp_path / "mlperf_log_detail.txt"
    os.mkfifo(fifo)
    for reader in (read_detail, read_summary):
        with pytest.raises(LogFormatError, match="not a regular file"):
            reader(fifo)


@pytest.mark.parametrize(
    "where",
    [
        DETAIL,
        SS / "performance/run_1/mlperf_log_summary.txt",
        SS / "accuracy/accuracy.txt",
        SS / "accuracy/mlperf_log_accuracy.json",
        SS / "accuracy/mlperf_log_detail.txt",
        Path("closed/UntetherAI/systems") / f"{UT_EDGE}.json",
    ],
)
def test_fifo_named_like_a_log_is_a_finding(valid_tree: Path, where: Path) -> None:
    target = valid_tree / where
    target.unlink()
    os.mkfifo(target)
    report = check_submission(valid_tree, "v4.1")  # would block forever if it opened the FIFO
    bad = [f for f in _failed(report) if f.path == str(target)]
    assert bad and "not a regular file" in bad[0].message


def test_unreadable_files_and_folders_are_findings(monkeypatch, valid_tree: Path) -> None:
    denied = {str(valid_tree / "closed/UntetherAI/systems" / f"{UT_EDGE}.json")}
    real_open, real_os_open, real_iterdir = open, os.open, Path.iterdir
    locked_dir = valid_tree / "closed/UntetherAI/results" / UT_EDGE / "resnet50"

    def fake_os_open(path, *a, **kw):
        # a file opened relative to a folder's fd (trees.open_file: no link followed) is named in full
        full = os.path.join(os.readlink(f"/proc/self/fd/{kw['dir_fd']}"), path) if kw.get("dir_fd") else str(path)
        if full in denied:
            raise PermissionError(13, "Permission denied", full)
        return real_os_open(path, *a, **kw)

    def fake_open(path, *a, **kw):
        if str(path) in denied:
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *a, **kw)

    def fake_iterdir(self):
        if self == locked_dir:
            raise PermissionError(13, "Permission denied", str(self))
        return real_iterdir(self)

    monkeypatch.setattr(os, "open", fake_os_open)
    monkeypatch.setattr("builtins.open", fake_open)
    monkeypatch.setattr(Path, "iterdir", fake_iterdir)
    monkeypatch.setattr(Path, "open", lambda self, *a, **kw: fake_open(self, *a, **kw))
    report = check_submission(valid_tree, "v4.1")
    assert not report.valid
    paths = {f.path for f in _failed(report)}
    monkeypatch.undo()
    denied_files = {str(valid_tree / DETAIL), str(valid_tree / SS / "accuracy/accuracy.txt")}
    monkeypatch.setattr(os, "open", lambda p, *a, **kw: fake_os_open(p, *a, **kw))
    denied |= denied_files
    monkeypatch.setattr("builtins.open", fake_open)
    monkeypatch.setattr(Path, "open", lambda self, *a, **kw: fake_open(self, *a, **kw))
    report = check_submission(valid_tree.parent / "valid", "v4.1")
    paths |= {f.path for f in _failed(report)}
    for p in denied | {str(locked_dir)}:
        assert p in paths, (p, [(f.rule, f.path, f.message) for f in _failed(report)])
    assert all("Permission denied" in f.message for f in _failed(report) if f.path in denied)


# ---- system description JSON ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"division": "closed", "division": "open"}', "duplicate key(s) division: the last value is the one read"),
        ('{"number_of_nodes": 1e400}', "out of range"),
        ('{"number_of_nodes": ' + "9" * 5000 + "}", "not valid JSON"),
        ('{"number_of_nodes": NaN}', "not valid JSON"),
        ("[" * 100000 + "]" * 100000, "not valid JSON"),
        ('{"system_name": ["a"], "status": {"x": 1}, "division": null}', "must be a string or a number"),
        ('{"number_of_nodes": -3}', "whole numbers"),
        ("\ufeff{}", "not valid JSON"),
    ],
)
def test_system_description_hostile_json(tmp_path: Path, text: str, words: str) -> None:
    p = tmp_path / "sys.json"
    p.write_text(text)
    _, findings = check_system_description(p, "closed", "acme")
    assert any(words in f.message for f in findings), [f.message for f in findings]
