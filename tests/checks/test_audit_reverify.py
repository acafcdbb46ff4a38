"""The checker runs each audit's verification again from the logs in the tree: a verify file that says
PASS where the logs do not (a log changed after verification) is rejected, naming audit, file, rule."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from checks_corpus import UT_EDGE, build_valid_tree, edit_detail
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.checks.audit_reverify import RULE, Claim, reverify_audit
from proctor.checks.submission import check_submission
from proctor.findings import Severity

SCEN = "offline"
ENTRY = '{ "seq_id" : 0, "qsl_idx" : 0, "data" : "00" }'


@pytest.fixture
def valid_tree(tmp_path: Path) -> Path:
    return build_valid_tree(tmp_path)


def _audit(root: Path, test: str) -> Path:
    return root / "closed" / "UntetherAI" / "compliance" / UT_EDGE / "resnet50" / SCEN / test


def _result(root: Path) -> Path:
    return root / "closed" / "UntetherAI" / "results" / UT_EDGE / "resnet50" / SCEN


def _reverify_errors(root: Path) -> list[tuple[str, str]]:
    report = check_submission(root, "v4.1")
    return [(f.rule, f.path or "") for f in report.findings if f.failed]


def _with_test01_accuracy(root: Path, data: str) -> Path:
    acc = _audit(root, "TEST01") / "accuracy"
    acc.mkdir(parents=True, exist_ok=True)
    (acc / "mlperf_log_accuracy.json").write_text(f'[\n{ENTRY.replace(chr(34) + "00" + chr(34), json.dumps(data))}\n]\n')
    return acc / "mlperf_log_accuracy.json"


def test_untouched_tree_reverifies(valid_tree: Path) -> None:
    _with_test01_accuracy(valid_tree, "00")
    assert _reverify_errors(valid_tree) == []


def test_test01_accuracy_log_changed_after_verification_is_rejected(valid_tree: Path) -> None:
    _with_test01_accuracy(valid_tree, "01")  # the audit's response differs from the accuracy run's
    report = check_submission(valid_tree, "v4.1")
    [f] = [f for f in report.findings if f.failed]
    assert (f.rule, f.path) == (RULE, str(_audit(valid_tree, "TEST01") / "verify_accuracy.txt"))
    assert "TEST01 accuracy verification" in f.message and "qsl_idx 0" in f.message
    assert "verify_accuracy.txt says it passed" in f.message and "proctor audit TEST01" in f.message
    assert f.source is not None and "same output should be passed in QuerySampleComplete" in f.source
    assert not report.valid


def test_whole_responses_are_compared(valid_tree: Path) -> None:
    """Same first byte, different rest: the official default mode (first element) would pass it."""
    acc = _result(valid_tree) / "accuracy" / "mlperf_log_accuracy.json"
    acc.write_text(f"[\n{ENTRY.replace('00', '0001')}\n]\n")
    (_result(valid_tree) / "accuracy" / "accuracy.txt").write_text("accuracy=76.078%, good=38039, total=50000\n")
    from proctor.submission.truncate import truncate_tree

    truncate_tree(valid_tree, None)  # the new log's hash
    _with_test01_accuracy(valid_tree, "0002")
    assert (RULE, str(_audit(valid_tree, "TEST01") / "verify_accuracy.txt")) in _reverify_errors(valid_tree)


def _reverify_warnings(report) -> list:  # type: ignore[no-untyped-def]
    return [f for f in report.findings if f.rule == RULE and f.severity is Severity.WARNING]


def test_test01_numbers_that_the_logs_do_not_give_are_a_warning_when_the_logs_reverify(valid_tree: Path) -> None:
    _with_test01_accuracy(valid_tree, "00")
    verify = _audit(valid_tree, "TEST01") / "verify_accuracy.txt"
    verify.write_text("num_perf_log_entries = 7\nnum_perf_log_data_mismatch = 0\nTEST PASS\n")
    report = check_submission(valid_tree, "v4.1")
    [f] = _reverify_warnings(report)
    assert "num_perf_log_entries = 7, the logs in the tree give 1" in f.message and "passes" in f.message
    assert report.valid


# A verify_performance.txt written before the final performance run (a published v5.1 SDXL result:
# reference 31.8603 in the file, 31.935 in the submitted result log): the logs re-verify within the
# procedure's 10 %, so the file is stale, a warning naming both numbers; logs that do not re-verify
# are an error whatever the file says.
STALE = [
    # (the result's score in its log, the audit's, what the file says: reference, test), error?
    (140625.0, 140000.0, (139000.0, 140000.0), False),  # stale reference, logs within 10 %
    (140625.0, 140625.0, (140625.0, 150000.0), False),  # stale test score, logs equal
    (140625.0, 127000.0, (140625.0, 127000.0), False),  # 9.7 % slower: still within 10 %
    (140625.0, 120000.0, (121000.0, 120000.0), True),  # 14.7 % apart in the logs: not re-verified
    (140625.0, 160000.0, (160000.0, 160000.0), True),  # 13.8 % faster in the logs
]


@pytest.mark.parametrize(("result_score", "audit_score", "said", "error"), STALE)
def test_stale_test01_verify_performance(
    valid_tree: Path, result_score: float, audit_score: float, said: tuple[float, float], error: bool
) -> None:
    edit_detail(_result(valid_tree) / "performance" / "run_1" / "mlperf_log_detail.txt",
                "result_samples_per_second", f"{result_score:g}")  # fmt: skip
    edit_detail(_audit(valid_tree, "TEST01") / "performance" / "run_1" / "mlperf_log_detail.txt",
                "result_samples_per_second", f"{audit_score:g}")  # fmt: skip
    verify = _audit(valid_tree, "TEST01") / "verify_performance.txt"
    verify.write_text(f"Verifying performance.\nReference score = {said[0]:g}\nTest score = {said[1]:g}\nTEST PASS\n")
    report = check_submission(valid_tree, "v4.1")
    mine = [f for f in report.findings if f.rule == RULE and f.path == str(verify)]
    if error:
        [f] = mine
        assert f.failed and "fails" in f.message and "not within 10%" in f.message
        assert not report.valid
        return
    stale = [(k, s) for k, s in zip(("reference score", "test score"), said, strict=True)
             if s != (result_score, audit_score)[k == "test score"]]  # fmt: skip
    assert len(mine) == len(stale) and all(f.severity is Severity.WARNING for f in mine)
    for f, (key, value) in zip(mine, stale, strict=True):
        logs = result_score if key == "reference score" else audit_score
        assert f"{key} = {value:g}, the logs in the tree give {logs:g}" in f.message
    assert report.valid, [f.message for f in report.findings if f.failed]


def test_test01_performance_log_changed_after_verification_is_rejected(valid_tree: Path) -> None:
    detail = _audit(valid_tree, "TEST01") / "performance" / "run_1" / "mlperf_log_detail.txt"
    edit_detail(detail, "result_samples_per_second", "281250")  # twice the result's 140625
    report = check_submission(valid_tree, "v4.1")
    [f] = [f for f in report.findings if f.failed]
    assert (f.rule, f.path) == (RULE, str(_audit(valid_tree, "TEST01") / "verify_performance.txt"))
    assert "TEST01 performance verification" in f.message and "not within 10%" in f.message


def test_test04_summary_changed_after_verification_is_rejected(valid_tree: Path) -> None:
    summary = _audit(valid_tree, "TEST04") / "performance" / "run_1" / "mlperf_log_summary.txt"
    summary.write_text(re.sub(r"Samples per second: \S+", "Samples per second: 281250", summary.read_text()))
    report = check_submission(valid_tree, "v4.1")
    [f] = [f for f in report.findings if f.failed]
    assert (f.rule, f.path) == (RULE, str(_audit(valid_tree, "TEST04") / "verify_performance.txt"))
    assert "TEST04 performance verification" in f.message and "caching" in f.message
    assert f.source is not None and "Caching" in f.source


def test_test04_score_in_the_verify_file_that_the_logs_do_not_give_is_a_warning(valid_tree: Path) -> None:
    verify = _audit(valid_tree, "TEST04") / "verify_performance.txt"
    verify.write_text("reference score = 140625\ntest score = 100000\nTEST PASS\n")
    report = check_submission(valid_tree, "v4.1")
    [f] = _reverify_warnings(report)
    assert "test score = 100000, the logs in the tree give 140625" in f.message
    assert report.valid


def test_a_failed_verify_file_is_its_own_finding_not_a_reverify_one(valid_tree: Path) -> None:
    (_audit(valid_tree, "TEST04") / "verify_performance.txt").write_text("TEST FAIL: Test score invalid\n")
    assert [r for r, _ in _reverify_errors(valid_tree)] == ["compliance_failed"]


# --- TEST06, from the audit's own accuracy log ----------------------------------------------------
def _hex(tokens: list[int]) -> str:
    return np.asarray(tokens, dtype="<i4").tobytes().hex().upper()


def _test06(tmp: Path, entries: list[dict[str, object]] | None) -> tuple[Path, Claim]:
    folder = tmp / "TEST06"
    (folder / "accuracy").mkdir(parents=True)
    if entries is not None:
        (folder / "accuracy" / "mlperf_log_accuracy.json").write_text(json.dumps(entries))
    verify = folder / "verify_accuracy.txt"
    verify.write_text("First token check pass: True\nEOS check pass: True\nSample length check pass: True\n")
    return folder, Claim(verify, True)


GOOD = [{"seq_id": i, "qsl_idx": i, "data": _hex([5, 6, 7, 2]), "token_data": _hex([5]), "token_count": 4} for i in range(3)]


def test_test06_consistent_log_passes(tmp_path: Path) -> None:
    folder, claim = _test06(tmp_path, GOOD)
    assert reverify_audit("TEST06", folder, tmp_path, "Server", {"accuracy": claim}) == []


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"token_count": 9}, "4 output tokens, token_count 9"),
        ({"token_data": _hex([8])}, "reported first token differs"),
    ],
)
def test_test06_log_changed_after_verification_is_rejected(tmp_path: Path, change: dict[str, object], why: str) -> None:
    folder, claim = _test06(tmp_path, [GOOD[0], {**GOOD[1], **change}])
    [f] = reverify_audit("TEST06", folder, tmp_path, "Server", {"accuracy": claim})
    assert (f.rule, f.path, f.severity) == (RULE, str(claim.path), Severity.ERROR)
    assert why in f.message and "TEST06 verification" in f.message and "TEST06" in (f.source or "")


def test_test06_log_is_read_once_for_every_token_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The re-verification tries each token type the script accepts on one reading of the log (an
    LLM's TEST06 log is megabytes)."""
    from proctor.checks import audit_reverify

    reads: list[Path] = []
    real = audit_reverify.read_token_log
    monkeypatch.setattr(audit_reverify, "read_token_log", lambda p: reads.append(p) or real(p))
    folder, claim = _test06(tmp_path, [{**GOOD[0], "token_count": 9}])  # fails every type: all are tried
    [f] = reverify_audit("TEST06", folder, tmp_path, "Server", {"accuracy": claim})
    assert f.failed and all(d in f.message for d in ("int64", "int32", "int16", "float32"))
    at = [f.message.index(f"{d}: ") for d in ("int64", "int32", "int16", "float32")]
    assert at == sorted(at)  # the script's order, whichever type was tried first
    assert reads == [folder / "accuracy" / "mlperf_log_accuracy.json"]


def test_test06_log_without_entries_is_rejected(tmp_path: Path) -> None:
    folder, claim = _test06(tmp_path, [])
    [f] = reverify_audit("TEST06", folder, tmp_path, "Offline", {"accuracy": claim})
    assert f.rule == RULE and f.failed and "holds no entries" in f.message


def test_test06_without_its_log_cannot_be_reverified(tmp_path: Path) -> None:
    folder, claim = _test06(tmp_path, None)
    [f] = reverify_audit("TEST06", folder, tmp_path, "Offline", {"accuracy": claim})
    assert (f.rule, f.severity) == (RULE, Severity.WARNING) and "cannot be re-run" in f.message


# --- hostile logs: findings, never a crash ---------------------------------------------------------
BYTES = st.one_of(
    st.binary(max_size=200),
    st.sampled_from([b"[]", b"{}", b"[1]", b'[{"qsl_idx": -1, "data": "00"}]', b'[{"qsl_idx": 0, "data": "zz"}]',
                     b"Scenario : Offline\nSamples per second: nan\nResult is : VALID\n", b"\xff\xfe", b"[" * 5000]),
)  # fmt: skip


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    test=st.sampled_from(["TEST01", "TEST04", "TEST06"]),
    ref=BYTES,
    audit=BYTES,
    passed=st.booleans(),
    scenario=st.sampled_from(["Offline", "Server", "SingleStream"]),
)
def test_any_logs_give_findings_never_a_crash(
    tmp_path_factory: pytest.TempPathFactory, test: str, ref: bytes, audit: bytes, passed: bool, scenario: str
) -> None:
    root = tmp_path_factory.mktemp("rv")
    result, folder = root / "result", root / "result" / test
    for base, data in ((result, ref), (folder, audit)):
        for sub, name in (("accuracy", "mlperf_log_accuracy.json"), ("performance/run_1", "mlperf_log_summary.txt"),
                          ("performance/run_1", "mlperf_log_detail.txt")):  # fmt: skip
            (base / sub).mkdir(parents=True, exist_ok=True)
            (base / sub / name).write_bytes(data)
    claims = {k: Claim(folder / f"verify_{k}.txt", passed, {"test score": 1.0}) for k in ("accuracy", "performance")}
    found = reverify_audit(test, folder, result, scenario, claims)
    assert all(f.rule == RULE and f.message and f.path for f in found)
    if not passed:
        assert found == []
