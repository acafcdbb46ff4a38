"""`proctor audit` through the real entry point: files, exit codes, one-line errors.

Short runs on the real clock: the accuracy checks are exact, the performance verdicts depend on
timing, so these tests check that the exit code agrees with the written verdicts, not the timing.
"""

from __future__ import annotations

from pathlib import Path

import pytest

STALE = str(Path(__file__).with_name("stale_sut.py"))


def _passed(folder: Path) -> bool:
    return all("TEST PASS" in p.read_text() or "verification complete" in p.read_text() for p in folder.glob("verify_*.txt"))


def test_audit_all_on_digits_writes_the_tree(cli, tmp_path):
    r = cli("audit", "all", "--scenario", "Offline", "--sut", "digits:backend=numpy", "--model", "resnet50",
            "--duration-ms", "100", "--target-qps", "20000", "--no-trace", "-o", tmp_path, "--system", "box")
    assert "Traceback" not in r.err
    base = tmp_path / "results/box/resnet50/Offline"
    t01, t04 = base / "TEST01", base / "TEST04"
    assert "num_perf_log_data_mismatch = 0" in (t01 / "verify_accuracy.txt").read_text()
    assert "TEST PASS" in (t01 / "verify_accuracy.txt").read_text()
    assert (t01 / "accuracy/mlperf_log_accuracy.json").is_file()
    assert (t04 / "performance/run_1/mlperf_log_summary.txt").is_file()
    assert "performance_issue_same = 1" in (tmp_path / "audit_runs/resnet50/Offline/TEST04/audit.config").read_text()
    assert r.rc == (0 if _passed(t01) and _passed(t04) else 1)
    assert "TEST01: " in r.out and "TEST04: " in r.out


def test_audit_test01_on_synthetic_and_verify_only(cli, tmp_path):
    r = cli("audit", "TEST01", "--scenario", "Offline", "--sut", "synthetic:service_us=0,workers=0,batch=4096",
            "--duration-ms", "0", "--min-queries", "2000", "--no-trace", "-o", tmp_path)
    t01 = tmp_path / "results/proctor/resnet50/Offline/TEST01"
    assert "TEST PASS" in (t01 / "verify_accuracy.txt").read_text()
    assert r.rc == (0 if _passed(t01) else 1)
    # verify only: the same logs again, into another tree
    r2 = cli("audit", "TEST01", "--scenario", "Offline", "--results", tmp_path / "results/proctor/resnet50/Offline",
             "--audit-logs", tmp_path / "audit_runs/resnet50/Offline/TEST01", "-o", tmp_path / "again")
    again = tmp_path / "again/results/proctor/resnet50/Offline/TEST01"
    assert (again / "verify_accuracy.txt").read_text() == (t01 / "verify_accuracy.txt").read_text()
    assert r2.rc == r.rc


def test_stale_responses_fail_test01_with_the_sample_named(cli, tmp_path):
    r = cli("audit", "TEST01", "--scenario", "SingleStream", "--sut", f"{STALE}:factory:stale=1",
            "--duration-ms", "20", "--min-queries", "100", "--expected-latency-ms", "0.01", "--no-trace", "-o", tmp_path)
    assert r.rc == 1, r.out + r.err
    text = (tmp_path / "results/proctor/resnet50/SingleStream/TEST01/verify_accuracy.txt").read_text()
    assert "TEST FAIL" in text and "proctor: " in text and "qsl_idx " in text
    assert "differ from the accuracy run: qsl_idx" in r.out


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["TEST99", "--scenario", "Offline"], ["TEST99"]),
        (["TEST06", "--scenario", "Offline", "--dtype", "int8"], ["--dtype", "int8"]),
        (["TEST01", "--scenario", "Offline", "--audit-logs", "x"], ["--audit-logs", "--results"]),
        (["all", "--scenario", "Offline", "--results", "r", "--audit-logs", "x"], ["one audit"]),
        (["TEST01", "--scenario", "Offline", "--results", "nowhere"], ["no such file", "--results"]),
        (["TEST01"], ["--scenario"]),
        (["TEST01", "--scenario", "Offline", "--sut", "nosuch"], ["nosuch"]),
    ],
)
def test_bad_input_is_one_line_exit_2(cli, tmp_path, monkeypatch, args, words):
    monkeypatch.chdir(tmp_path)
    r = cli("audit", *args, "-o", tmp_path / "out")
    assert r.rc == 2, r.out + r.err
    assert "Traceback" not in r.err
    for w in words:
        assert w in r.err


def test_bad_audit_logs_are_exit_2(cli, tmp_path):
    res = tmp_path / "res"
    (res / "accuracy").mkdir(parents=True)
    (res / "accuracy/mlperf_log_accuracy.json").write_text("[]")
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "mlperf_log_accuracy.json").write_text("{not json")
    (logs / "mlperf_log_detail.txt").write_text("")
    r = cli("audit", "TEST01", "--scenario", "Offline", "--results", res, "--audit-logs", logs, "-o", tmp_path / "o")
    assert r.rc == 2 and "Traceback" not in r.err and "mlperf_log_accuracy.json" in r.err


def _unused_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_audit_on_a_dead_llm_endpoint_fails_with_the_reason(cli, tmp_path):
    """Nothing listening: every sample fails, the accuracy log holds no entries; TEST06 FAILs, exit 1
    (it used to print 'TEST06: PASS' and exit 0: the official script passes an empty log)."""
    import orjson

    dataset = tmp_path / "prompts.jsonl"
    dataset.write_bytes(b"".join(orjson.dumps({"prompt": f"ba de ko {i}", "max_tokens": 6}) + b"\n" for i in range(8)))
    r = cli("audit", "all", "--scenario", "Offline", "--model", "llama2-70b", "--sut",
            f"openai:url=http://127.0.0.1:{_unused_port()},model=tiny,preflight=0", "--dataset", dataset,
            "--duration-ms", "100", "--min-queries", "8", "--target-qps", "40", "--no-trace", "-o", tmp_path / "o")
    assert r.rc == 1, r.out + r.err
    assert "TEST06: FAIL" in r.out and "TEST06: PASS" not in r.out
    assert "FAIL: audit run: " in r.out, r.out  # the reason, on the line under the verdict
    text = (tmp_path / "o/results/proctor/llama2-70b/Offline/TEST06/verify_accuracy.txt").read_text()
    assert "TEST FAIL" in text and "proctor: audit run: " in text
    assert "Traceback" not in r.err
