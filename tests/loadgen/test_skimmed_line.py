"""The detail reader's `loaded_qsl_set` skim: a line it skims is one `json.loads` reads, with the same
record apart from the list; a line it does not skim is decoded whole. The checkers' reading keeps no
value for the key, and reads every other key as before."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.loadgen.logs import reader
from proctor.loadgen.logs.reader import _skimmed, read_detail

HEAD = '{"key": "loaded_qsl_set", "value": '
TAIL = ', "time_ms": 1.5, "namespace": "mlperf::logging", "event_type": "POINT_IN_TIME", "metadata": {"is_error": false}}'
LIST_TEXT = st.one_of(
    st.lists(st.integers(0, 10**7), max_size=30).map(lambda v: json.dumps(v, separators=(",", ":"))),
    st.text(alphabet="0123456789,-.e[] ", max_size=30).map(lambda t: "[" + t),
)


@given(items=LIST_TEXT, tail=st.sampled_from([TAIL, "}", ', "value": 3}', "", ',}', ' ]}', "e0}", ".5}", "0}", " }"]))
@settings(max_examples=1000, deadline=None)
def test_a_skimmed_line_is_json_with_the_same_record(items: str, tail: str) -> None:
    payload = (HEAD + items + tail).encode()
    skim = _skimmed(payload)
    if skim is None:
        return  # decoded whole, as any other line
    try:
        whole = json.loads(payload)
    except ValueError:
        whole = None
    try:
        rest = json.loads(skim)
    except ValueError:
        rest = None
    assert (whole is None) is (rest is None), payload  # the skim reads as JSON where the line does
    if whole is not None:
        assert rest == {**whole, "value": rest["value"]}  # the same record, but for the list
        assert json.loads(payload[len(HEAD) : payload.index(b"]") + 1]) == [int(i) for i in items[1:-1].split(",")]


def test_loadgen_lists_are_skimmed() -> None:
    for values in ([0], [5, 0, 17], list(range(1000, 0, -3)), [10, 100, 0, 1]):
        payload = (HEAD + json.dumps(values, separators=(",", ":")) + TAIL).encode()
        assert json.loads(_skimmed(payload) or b"null") == {**json.loads(payload), "value": []}
    for text in ("[]", "[01]", "[1,,2]", "[,1]", "[1,]", "[1, 2]", "[-1]", "[1.0]", "[1,[2]]", "[00]"):
        assert _skimmed((HEAD + text + TAIL).encode()) is None, text


def test_the_checkers_reading_keeps_no_value_for_the_key_and_the_rest_as_before(tmp_path: Path) -> None:
    lines = [
        ':::MLLOG {"key": "a", "value": 1, "time_ms": 0.1, "metadata": {}}',
        ":::MLLOG " + HEAD + "[3,1,2]" + TAIL,
        ':::MLLOG {"key": "b", "value": "x", "time_ms": 0.2, "metadata": {"is_warning": true}}',
        ":::MLLOG " + HEAD + "[3,01]" + TAIL,  # not JSON: a bad line, skimmed or not
    ]
    path = tmp_path / "mlperf_log_detail.txt"
    path.write_text("\n".join(lines) + "\n")
    checker = read_detail(path, keep_entries=False)
    full = read_detail(path, keep_entries=True)
    assert full.values["loaded_qsl_set"] == [3, 1, 2]
    assert reader.SKIMMED_KEY not in checker.values and checker.lines[reader.SKIMMED_KEY] == 2
    assert {k: v for k, v in full.values.items() if k != reader.SKIMMED_KEY} == checker.values
    assert checker.n_bad_lines == full.n_bad_lines == 1 and checker.bad_lines[0].line == 4
    assert checker.n_warnings == 1
