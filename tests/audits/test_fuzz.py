"""Property tests for every reader the audits add: only LogFormatError or a verdict, never a crash."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from proctor.audits import verify as V
from proctor.errors import LogFormatError

pytestmark = pytest.mark.fuzz

NASTY = st.sampled_from(
    [b"", b"\xef\xbb\xbf[]", b"[\r\n]\r\n", b"\xff\xfe", b"[" * 1000 + b"]" * 1000, b'[{"qsl_idx": 1e400, "data": ""}]',
     b'[{"qsl_idx": ' + b"9" * 5000 + b', "data": ""}]', b'[{"qsl_idx": NaN, "data": "00"}]',
     b'[{"qsl_idx": 1, "qsl_idx": 2, "data": "0"}]', b'[{"qsl_idx": true, "data": "00"}]', b"0x1p99999"]
)
SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=True),
    st.text(max_size=12), st.sampled_from(["00", "0A0B", "zz", "0", "FFFFFFFF", "02000000" * 3])
)
ENTRY = st.dictionaries(st.sampled_from(["qsl_idx", "data", "token_data", "token_count", "seq_id"]), SCALAR, max_size=5)


def _write(tmp_path_factory, raw: bytes):
    p = tmp_path_factory.mktemp("f") / "mlperf_log_accuracy.json"
    p.write_bytes(raw)
    return p


@given(raw=st.one_of(st.binary(max_size=300), NASTY))
def test_accuracy_reader_never_crashes(tmp_path_factory, raw):
    p = _write(tmp_path_factory, raw)
    try:
        entries = V.read_accuracy_log(p)
    except LogFormatError as exc:
        assert str(p) in str(exc)
    else:
        assert all(isinstance(e.qsl_idx, int) for e in entries)


@given(a=st.lists(ENTRY, max_size=6), b=st.lists(ENTRY, max_size=6))
def test_test01_accuracy_is_a_verdict_or_a_named_error(tmp_path_factory, a, b):
    pa = _write(tmp_path_factory, json.dumps(a).encode())
    pb = _write(tmp_path_factory, json.dumps(b).encode())
    try:
        v = V.verify_test01_accuracy(pa, pb)
    except LogFormatError:
        return
    assert v.passed == (v.lines[-2] == "TEST PASS")


@given(entries=st.lists(ENTRY, max_size=6), scenario=st.sampled_from(["Offline", "Server", "SingleStream"]))
def test_test06_is_a_verdict_or_a_named_error(tmp_path_factory, entries, scenario):
    p = _write(tmp_path_factory, json.dumps(entries).encode())
    try:
        v = V.verify_test06(p, scenario)
    except LogFormatError:
        return
    assert v.lines[-1] in ("TEST06 verification complete", "TEST06 verification failed")
    if not entries:  # nothing logged, nothing verified: a failure (the official script passes it)
        assert not v.passed and "TEST FAIL: the accuracy log holds no entries" in v.lines


LINE = st.one_of(
    st.text(max_size=60),
    st.sampled_from(["Scenario : Offline", "Scenario : SingleStream", "Scenario : Server", "Result is : INVALID",
                     "Samples per second: 1e400", "Samples per second: nan", "Samples per second: abc",
                     " * Early stopping 90.0th percentile estimate: 0", " * Early stopping 90th percentile estimate: -5",
                     "Completed samples per second    : 12", "target_latency (ns): 5", "7 ERRORS encountered.",
                     "Samples per second: " + "9" * 5000]),
)


@given(ref=st.lists(LINE, max_size=8), test=st.lists(LINE, max_size=8), crlf=st.booleans(), bom=st.booleans())
def test_test04_summaries_never_crash(tmp_path_factory, ref, test, crlf, bom):
    nl = "\r\n" if crlf else "\n"
    paths = []
    for lines in (ref, test):
        raw = (nl.join(lines)).encode("utf-8", "surrogatepass")
        paths.append(_write(tmp_path_factory, (b"\xef\xbb\xbf" if bom else b"") + raw))
    try:
        v = V.verify_test04_performance(*paths)
    except LogFormatError:
        return
    assert v.passed == (v.lines[-1] == "TEST PASS")


@given(raw=st.binary(max_size=300))
def test_summary_reader_on_bytes(tmp_path_factory, raw):
    p = _write(tmp_path_factory, raw)
    try:
        score = V.read_summary_score(p)
    except LogFormatError as exc:
        assert str(p) in str(exc)
    else:
        assert isinstance(score.score_text, str)


DETAIL_VALUE = st.one_of(SCALAR, st.sampled_from(["Offline", "Server", "SingleStream", "VALID", "INVALID"]))


@given(values=st.dictionaries(st.sampled_from(["effective_scenario", "result_validity", "result_samples_per_second",
                                               "early_stopping_latency_ss", "num_errors",
                                               "effective_target_latency_ns"]), DETAIL_VALUE, max_size=6),
       bad=st.booleans())
def test_test01_performance_never_crashes(tmp_path_factory, values, bad):
    d = tmp_path_factory.mktemp("d")
    lines = [":::MLLOG " + json.dumps({"key": k, "value": v, "metadata": {}}) for k, v in values.items()]
    (d / "r.txt").write_text("\n".join(lines) + ("\n:::MLLOG {bad\n" if bad else "\n"))
    try:
        v = V.verify_test01_performance(d / "r.txt", d / "r.txt")
    except LogFormatError:
        return
    assert v.passed == (v.lines[-1] == "TEST PASS")


def _json_only(p) -> object:
    """read_accuracy_log as it was, json.loads alone: its entries as tuples, or its refusal."""
    raw = p.read_bytes()
    try:
        doc = json.loads(raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return "not UTF-8"
    except json.JSONDecodeError as exc:
        return f"not JSON ({exc.msg}) line {exc.lineno}"
    except (RecursionError, ValueError) as exc:
        return type(exc).__name__
    if not isinstance(doc, list):
        return "not a list"
    out = []
    for i, item in enumerate(doc):
        if not isinstance(item, dict):
            return f"entry {i}"
        idx, data = item.get("qsl_idx"), item.get("data")
        if not isinstance(idx, int) or isinstance(idx, bool) or idx < 0 or not isinstance(data, str):
            return f"entry {i}"
        out.append((idx, data, repr(item.get("token_data")), repr(item.get("token_count"))))
    return out


@given(entries=st.lists(ENTRY, max_size=6), raw=st.one_of(st.none(), st.binary(max_size=200), NASTY))
@example(entries=[{"qsl_idx": 2**65, "data": "00"}], raw=None)
@example(entries=[{"qsl_idx": 1, "data": "00", "token_count": 2**64}], raw=None)
@example(entries=[{"qsl_idx": 1, "data": "00", "token_count": -(2**64)}], raw=None)
@example(entries=[{"qsl_idx": 1, "data": "00", "token_data": [2**70]}], raw=None)
@example(entries=[{"qsl_idx": 1, "data": "00", "token_count": float("nan")}], raw=None)
@example(entries=[{"qsl_idx": 1, "data": "\ud800"}], raw=None)
@example(entries=[], raw=b'\xef\xbb\xbf[{"qsl_idx": 1, "data": "00"}]')
@example(entries=[], raw=b'\xef\xbb\xbf\xef\xbb\xbf[{"qsl_idx": 1, "data": "00"}]')
@example(entries=[], raw=b'[{"qsl_idx": 1, "data": "\xff"}]')
@example(entries=[], raw=b'[{"qsl_idx": 1, "data": "\xc3\xa9"}]')
def test_accuracy_reader_reads_as_json_loads(tmp_path_factory, entries, raw):
    """orjson reads a log LoadGen wrote; anything else goes through json.loads: the entries (and their
    types: whole numbers past 64 bits stay whole) or the refusal are json.loads's."""
    body = raw if raw is not None else json.dumps(entries, allow_nan=True).encode()
    p = _write(tmp_path_factory, body)
    want = _json_only(p)
    try:
        got: object = [(e.qsl_idx, e.data, repr(e.token_data), repr(e.token_count)) for e in V.read_accuracy_log(p)]
    except LogFormatError as exc:
        assert str(p) in str(exc)
        assert isinstance(want, str)
        return
    assert got == want
