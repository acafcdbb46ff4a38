"""Property tests (hypothesis) of the compliance readers: verify_*.txt (`parse_verify`, `_verify_file`),
the measurements JSON (`check_measurements_json`) and accuracy.txt's hash lines (`check_accuracy_hash`).

Each gets hostile bytes and must give a verdict or findings, never an uncaught exception; a passing
file stays passing under harmless changes (CRLF, trailing blanks, extra number lines)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from proctor.audits.specs import SPECS, Audit
from proctor.checks.compliance import (
    _verify_file,
    check_accuracy_hash,
    check_measurements_json,
    parse_verify,
)
from proctor.rules.inference import MEASUREMENT_FIELDS

pytestmark = pytest.mark.fuzz
TEST06_LINES = SPECS[Audit.TEST06].accuracy_lines
FIXTURE_OK = [HealthCheck.function_scoped_fixture]

KINDS = [("TEST01", "accuracy"), ("TEST01", "performance"), ("TEST04", "performance"), ("TEST06", "accuracy"),
         ("TEST07", "accuracy"), ("TEST09", "output_len")]  # fmt: skip
HOSTILE_TEXT = st.one_of(
    st.text(max_size=400),
    st.binary(max_size=400).map(lambda b: b.decode("utf-8", "replace")),
    st.lists(
        st.sampled_from(
            ["TEST PASS", "TEST FAIL", "TEST FAIL: Test score invalid", "reference score = 1e400",
             "test score = NaN", "num_perf_log_entries = " + "9" * 5000, "threshold = 0x1p99999", "=", "==1",
             "\ufeffTEST PASS", " TEST PASS ", "TEST PASS\r", "\x00", "First token check pass: True",
             "EOS check pass: True", "Sample length check pass: True", "First token check pass: Skipped"]
        ),
        max_size=12,
    ).map("\n".join),
)
HUGE = st.sampled_from(["1e400", "-1e999", "9" * 5000, "NaN", "Infinity", "0x1p99999", "1e-400"])
JSON_VALUE = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)


@settings(suppress_health_check=FIXTURE_OK)
@given(text=HOSTILE_TEXT, which=st.sampled_from(KINDS))
def test_verify_text_gives_a_verdict(text: str, which: tuple[str, str]) -> None:
    v = parse_verify(text, *which)
    assert isinstance(v.passed, bool) and isinstance(v.official_pass, bool)
    assert all(isinstance(x, float) for x in v.numbers.values())
    if any(line.strip().startswith("TEST FAIL") for line in text.replace("\r\n", "\n").split("\n")):
        assert not v.passed and v.why  # a TEST FAIL line always fails, and says why
    if v.passed:
        assert v.official_pass  # proctor never passes what the official reading fails


@given(
    which=st.sampled_from([k for k in KINDS if k[0] != "TEST06"]),
    crlf=st.booleans(),
    blanks=st.integers(0, 3),
    extra=st.lists(st.tuples(st.from_regex(r"[a-z_]{1,12}", fullmatch=True), HUGE), max_size=4),
)
def test_a_passing_verification_stays_passing(which, crlf: bool, blanks: int, extra) -> None:
    lines = ["Verifying performance.", *(f"{k} = {v}" for k, v in extra), "TEST PASS", *([""] * blanks)]
    text = ("\r\n" if crlf else "\n").join(lines)
    v = parse_verify(text, *which)
    assert v.passed and v.official_pass, v


@given(order=st.permutations(list(TEST06_LINES)), crlf=st.booleans())
def test_test06_lines_pass_in_any_order(order: list[str], crlf: bool) -> None:
    text = ("\r\n" if crlf else "\n").join(TEST06_LINES[k][0] for k in order)
    assert parse_verify(text, "TEST06", "accuracy").passed


@settings(suppress_health_check=FIXTURE_OK)
@given(data=st.one_of(st.binary(max_size=300), HOSTILE_TEXT.map(str.encode)), which=st.sampled_from(KINDS))
def test_verify_file_on_disk_gives_findings_not_exceptions(tmp_path: Path, data: bytes, which) -> None:
    (tmp_path / "verify_x.txt").write_bytes(data)
    verdict, found = _verify_file(tmp_path, which[0], which[1], "verify_x.txt")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:  # the official checker stops on it: one error naming the file
        assert verdict is None and [f.rule for f in found] == ["text_encoding"] and found[0].failed
        return
    assert verdict is not None
    assert all(f.rule == "compliance_failed" and f.failed for f in found)
    assert bool(found) == (not verdict.passed)


def _measurements(path: Path, data: bytes) -> list:
    path.write_bytes(data)
    return check_measurements_json(path)


@settings(suppress_health_check=FIXTURE_OK)
@given(
    data=st.one_of(
        st.binary(max_size=300),
        JSON_VALUE.map(lambda v: json.dumps(v).encode()),
        st.integers(1, 1200).map(lambda n: b"[" * n + b"]" * n),
        st.integers(1, 1200).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
        HUGE.map(lambda h: ('{"input_data_types": ' + h + "}").encode()),
        st.just(b'{"retraining": "no", "retraining": "yes"}'),
        st.just(b"\xef\xbb\xbf{}"),
        st.just(b"\xff\xfe{}"),
    )
)
def test_measurements_json_gives_findings(tmp_path: Path, data: bytes) -> None:
    found = _measurements(tmp_path / "m.json", data)
    # a repeated key is read as Python's json reads it (the last value): a warning, not a rejection
    assert found and all(
        f.rule in ("measurements", "unreadable") and f.message and (f.failed or "duplicate key" in f.message)
        for f in found
    )


@settings(suppress_health_check=FIXTURE_OK)
@given(
    values=st.fixed_dictionaries({k: st.text(min_size=1, max_size=10).filter(str.strip) for k in MEASUREMENT_FIELDS}),
    extra=st.dictionaries(st.from_regex(r"x_[a-z]{1,6}", fullmatch=True), JSON_VALUE, max_size=3),
    indent=st.sampled_from([None, 2]),
    crlf=st.booleans(),
)
def test_valid_measurements_stay_valid(tmp_path: Path, values: dict, extra: dict, indent, crlf: bool) -> None:
    try:  # a valid file is real JSON: no NaN/Infinity (those are tested as invalid elsewhere)
        text = json.dumps({**values, **extra}, indent=indent, allow_nan=False)
    except ValueError:
        assume(False)
    data = (text.replace("\n", "\r\n") if crlf else text).encode()
    assert _measurements(tmp_path / "m.json", data) == []


@settings(suppress_health_check=FIXTURE_OK)
@given(
    acc_txt=st.one_of(
        st.binary(max_size=300),
        st.lists(st.sampled_from(["hash=", "hash=" + "a" * 64, "hash=" + "z" * 64, "hash=\x00", "accuracy=1e400%",
                                  "hash=" + "a" * 5000, "\ufeffhash=" + "b" * 64]), max_size=4).map(
            lambda ls: "\n".join(ls).encode()
        ),
    ),
    log=st.one_of(st.binary(max_size=200), st.just(b"[]"), st.just(b"[" + b" " * 20000 + b"]")),
)
def test_accuracy_hash_gives_findings(tmp_path: Path, acc_txt: bytes, log: bytes) -> None:
    acc = tmp_path / "accuracy"
    acc.mkdir(exist_ok=True)
    (acc / "accuracy.txt").write_bytes(acc_txt)
    (acc / "mlperf_log_accuracy.json").write_bytes(log)
    found = check_accuracy_hash(acc)
    assert all(f.message and f.path for f in found)
