"""audits.verify.read_token_log: TEST06's reader. A log in LoadGen's exact layout is read from its
bytes; every other text goes through read_accuracy_log. Either way the entries, the errors and the
TEST06 verdicts are those of read_accuracy_log followed by bytes.fromhex: the two readers are compared
on generated LoadGen logs, on the same logs altered, and on arbitrary bytes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.audits import verify
from proctor.audits.configs import TEST06_DTYPES
from proctor.audits.verify import TokenEntry, read_accuracy_log, read_token_log, verify_test06_entries
from proctor.errors import LogFormatError

HEX = "0123456789abcdefABCDEF"


def _via_json(path: Path) -> list[TokenEntry] | str:
    """What the JSON reader and bytes.fromhex give (the reference), or its error's text."""
    try:
        entries = read_accuracy_log(path)
    except LogFormatError as exc:
        return str(exc)

    def decoded(value: Any) -> bytes | None:
        if not isinstance(value, str):
            return None
        try:
            return bytes.fromhex(value)
        except ValueError:
            return None

    return [TokenEntry(e.qsl_idx, decoded(e.data), decoded(e.token_data), e.token_count) for e in entries]


def _via_tokens(path: Path) -> list[TokenEntry] | str:
    try:
        return read_token_log(path)
    except LogFormatError as exc:
        return str(exc)


def _entry_text(seq: str, idx: str, data: str, token_data: str | None, count: str | None) -> str:
    out = f'{{ "seq_id" : {seq}, "qsl_idx" : {idx}, "data" : "{data}"'
    if token_data is not None:
        out += f', "token_data" : "{token_data}"'
    if count is not None:
        out += f', "token_count" : {count}'
    return out + " }"


GOOD_NUMBER = st.integers(0, 10**19 - 1).map(str)
ODD_NUMBER = st.sampled_from(["18446744073709551615", "007", "-1", "00", "99999999999999999999", "1.5", "1e3", "true", '"3"', " 1", ""])
GOOD_HEX = st.binary(max_size=24).flatmap(lambda b: st.sampled_from([b.hex(), b.hex().upper()]))
ODD_HEX = st.one_of(st.text(HEX + " gG\\\"\u00e9\t", max_size=12),
                    st.sampled_from(["E98", "\\u0041B", "AB CD", "0", "\\n", "ab\\\"", "\u00e9\u00e9"]))  # fmt: skip
GOOD_ENTRY = st.tuples(GOOD_NUMBER, GOOD_NUMBER, GOOD_HEX, st.one_of(st.none(), GOOD_HEX),
                       st.one_of(st.none(), GOOD_NUMBER))  # fmt: skip
ODD_FIELD = [ODD_NUMBER, ODD_NUMBER, ODD_HEX, ODD_HEX, ODD_NUMBER]


@st.composite
def entries_with_a_tweak(draw: st.DrawFn) -> list[tuple[str, str, str, str | None, str | None]]:
    """LoadGen entries, one field of one of them replaced by an odd value."""
    entries = draw(st.lists(GOOD_ENTRY, min_size=1, max_size=4))
    i = draw(st.integers(0, len(entries) - 1))
    f = draw(st.integers(0, 4))
    entry = list(entries[i])
    entry[f] = draw(ODD_FIELD[f])
    entries[i] = tuple(entry)  # type: ignore[assignment]
    return entries


def _layout(entries: list[tuple[str, str, str, str | None, str | None]], end: str) -> bytes:
    return ("[\n" + ",\n".join(_entry_text(*e) for e in entries) + end).encode("utf-8")


def _agree(tmp_path: Path, raw: bytes) -> None:
    """Equal, with the log read whole in one chunk and a few bytes at a time (an entry, its end and
    the log's end falling across reads)."""
    path = tmp_path / "mlperf_log_accuracy.json"
    path.write_bytes(raw)
    want = _via_json(path)
    assert _via_tokens(path) == want
    chunk = verify._TOKEN_CHUNK
    try:
        for small in (1, 3, 7, 64):
            verify._TOKEN_CHUNK = small
            assert _via_tokens(path) == want, small
    finally:
        verify._TOKEN_CHUNK = chunk


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(GOOD_ENTRY, max_size=5))
def test_the_two_readers_agree_on_loadgen_logs(tmp_path: Path, entries: list[Any]) -> None:
    _agree(tmp_path, _layout(entries, "\n]\n"))


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=entries_with_a_tweak())
def test_the_two_readers_agree_on_odd_values(tmp_path: Path, entries: list[Any]) -> None:
    _agree(tmp_path, _layout(entries, "\n]\n"))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(GOOD_ENTRY, min_size=1, max_size=4),
       end=st.sampled_from(["\n]\n", "\n]", "\n]\n\n", "]\n", "\n] ", "\r\n]\r\n", "\n]\nx"]),
       cut=st.one_of(st.none(), st.integers(0, 300)),
       insert=st.one_of(st.none(), st.tuples(st.integers(0, 300), st.sampled_from(
           [b" ", b"\n", b",", b"\\", b'"', b"\x00", b"\xff", b"}", b"0", b"A"]))))  # fmt: skip
def test_the_two_readers_agree_on_odd_layouts(tmp_path: Path, entries: list[Any], end: str, cut: int | None,
                                              insert: tuple[int, bytes] | None) -> None:  # fmt: skip
    raw = _layout(entries, end)
    if cut is not None:
        raw = raw[:cut]
    if insert is not None:
        at, what = insert
        raw = raw[:at] + what + raw[at:]
    _agree(tmp_path, raw)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=200))
def test_the_two_readers_agree_on_any_bytes(tmp_path: Path, raw: bytes) -> None:
    _agree(tmp_path, b"[\n" + raw)


def _loadgen_log(tmp_path: Path, n: int = 40) -> Path:
    entries = []
    for i in range(n):
        tokens = [(i * 7 + k) % 50000 for k in range(1 + i % 9)] + ([2] if i % 3 else [2, 2])
        data = b"".join(t.to_bytes(4, "little") for t in tokens).hex().upper()
        entries.append((str(i), str(1000 + i), data, data[:8] if i % 5 else data[8:16], str(len(tokens) - i % 4 // 3)))
    path = tmp_path / "mlperf_log_accuracy.json"
    path.write_bytes(_layout(entries, "\n]\n"))
    return path


@pytest.mark.parametrize("chunk", [1, 5, 100, 1 << 18])
def test_a_loadgen_log_is_read_from_its_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    """LoadGen's layout never reaches the JSON reader, and gives what it would have given, however
    the reads cut it."""
    monkeypatch.setattr(verify, "_TOKEN_CHUNK", chunk)
    path = _loadgen_log(tmp_path)
    want = _via_json(path)
    assert isinstance(want, list) and len(want) == 40

    def no_json(raw: bytes, p: str) -> Any:
        raise AssertionError("the JSON reader was used")

    monkeypatch.setattr(verify, "_accuracy_entries", no_json)
    assert read_token_log(path) == want


def test_a_log_past_the_cap_is_refused_as_it_streams(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _loadgen_log(tmp_path)
    monkeypatch.setattr(verify, "_TOKEN_CHUNK", 64)
    monkeypatch.setattr(verify, "MAX_ACCURACY_JSON_BYTES", path.stat().st_size - 1)
    with pytest.raises(LogFormatError, match="larger than"):
        read_token_log(path)


@pytest.mark.parametrize("scenario", ["Offline", "Server"])
def test_test06_verdicts_are_the_same_either_way(tmp_path: Path, scenario: str) -> None:
    path = _loadgen_log(tmp_path)
    tokens = read_token_log(path)
    entries = read_accuracy_log(path)
    for dtype in TEST06_DTYPES:
        a = verify.verify_test06_tokens(tokens, scenario, dtype=dtype)
        b = verify_test06_entries(entries, scenario, dtype=dtype)
        assert (a.passed, a.lines, a.notes, a.numbers) == (b.passed, b.lines, b.notes, b.numbers)
    verdict = verify.verify_test06_tokens(tokens, scenario)
    assert not verdict.passed and not verdict.numbers["eos"]  # every third output ends with two EOS
    assert verdict.numbers["length"] is False  # some counts are one short


def test_an_official_json_dump_goes_through_the_json_reader(tmp_path: Path) -> None:
    """json.dump's own layout (other separators) is not LoadGen's: read as JSON, same entries."""
    path = tmp_path / "mlperf_log_accuracy.json"
    path.write_text(json.dumps([{"seq_id": 0, "qsl_idx": 3, "data": "E9800000", "token_count": 1}]))
    assert read_token_log(path) == [TokenEntry(3, bytes.fromhex("E9800000"), None, 1)]


def test_a_log_proctor_writes_is_read_from_its_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """proctor's own accuracy-log writer (loadgen/logs/accuracy.py) writes LoadGen's layout: its TEST06
    logs take the fast path, with the values it wrote."""
    from proctor.loadgen.logs.accuracy import AccuracyLog

    tokens = [b"\x01\x00\x00\x00\x02\x00\x00\x00", b"", b"\xff" * 4]
    path = tmp_path / "mlperf_log_accuracy.json"
    with AccuracyLog(path) as log:
        for i, t in enumerate(tokens):
            log.add(i, 10 + i, t, token_count=len(t) // 4, token_data=t[:4] or None)
    monkeypatch.setattr(verify, "_accuracy_entries", lambda raw, p: pytest.fail("the JSON reader was used"))
    assert read_token_log(path) == [TokenEntry(10 + i, t, t[:4] or None, len(t) // 4) for i, t in enumerate(tokens)]
