"""Hostile logs given to the report's readers: a clear error (ProctorError) or a report, never a crash."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from report_runs import CORPUS

from proctor.errors import ProctorError
from proctor.loadgen.results import LatencyStats
from proctor.report import build_report
from proctor.report.data import InferenceRun, _trace_stats, read_trace_samples
from proctor.report.html import render

pytestmark = pytest.mark.fuzz

_DETAIL = CORPUS / "inference" / "v4.1" / "UntetherAI" / "h13_u2_preview_dc" / "resnet50" / "server" / "mlperf_log_detail.txt"

_values = st.one_of(
    st.sampled_from([
        "1e400", "-1e400", "NaN", "Infinity", "0x1p99999", "9" * 5000, "null", "true", '"x"', "[]", "{}",
        "[" * 1000 + "]" * 1000, '{"a": 1, "a": 2}', "-0", "1e-400",
    ]),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
_keys = st.sampled_from([
    "effective_scenario", "result_validity", "result_query_count", "result_99.00_percentile_latency_ns",
    "effective_target_latency_ns", "effective_target_latency_percentile", "effective_min_duration_ms",
    "result_scheduled_samples_per_sec", "result_overlatency_query_count", "early_stopping_result",
    "proctor_invalid_reasons", "requested_use_token_latencies", "result_first_token_mean_latency_ns",
    "effective_target_qps", "result_mean_latency_ns", "sut_name", "proctor_verdict",
    "proctor_slo_targets_ns", "proctor_slo_met", "proctor_slo_judged_samples", "proctor_slo_attainment",
    "proctor_goodput_requests_per_sec", "proctor_slo_target_source", "proctor_warmup", "proctor_expected_length",
])
_junk = st.one_of(
    st.binary(max_size=300),
    st.sampled_from([b"\xef\xbb\xbf", b"\r\n", b"\xff\xfe\xfd", b"\x00" * 10]),
)


def _mllog(key: str, value: str) -> bytes:
    return (f':::MLLOG {{"key": "{key}", "value": {value}, "time_ms": 0, "namespace": "mlperf::logging", '
            '"event_type": "POINT_IN_TIME", "metadata": {}}\n').encode()


def _report(d: Path) -> None:
    try:
        rep = build_report([d])
    except ProctorError as exc:
        assert str(exc)
        return
    render(rep, {})  # figures are drawn from the same numbers; the HTML must not fail on them


@given(edits=st.lists(st.tuples(_keys, _values), max_size=6), junk=st.lists(_junk, max_size=3))
def test_hostile_detail_log(edits, junk) -> None:
    base = _DETAIL.read_bytes() if _DETAIL.is_file() else _mllog("effective_scenario", '"Server"')
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "mlperf_log_detail.txt").write_bytes(base + b"".join(_mllog(k, v) for k, v in edits) + b"\n".join(junk))
        _report(d)


@given(body=st.lists(st.one_of(_junk, st.sampled_from([
    b"Scenario : Server", b"Result is : VALID", b"99.00 percentile latency (ns) : 1e400",
    b"Additional Stats", b"Test Parameters Used", b"target_latency (ns): NaN", b"Early Stopping Result:",
    b" * Early stopping 90th percentile estimate: 99999999999999999999999", b"===",
])), max_size=12))
def test_hostile_summary(body) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "mlperf_log_summary.txt").write_bytes(b"\n".join(body))
        _report(d)


_trace_lines = st.one_of(
    _junk,
    st.tuples(_values, _values).map(
        lambda t: ('{{"name":"Sample","ph":"b","ts":{},"args":{{"complete_ns":{}}}}},'.format(*t)).encode()
    ),
    st.sampled_from([b'{"name":"Sample","ph":"b"}', b'{"name":"Sample","ph":"b","args":[]},', b'{"traceEvents":[']),
)


@given(lines=st.lists(_trace_lines, max_size=20))
def test_hostile_trace(lines) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "mlperf_log_trace.json"
        p.write_bytes(b"\n".join(lines))
        notes: list[str] = []
        s = read_trace_samples(p, notes)
        if s is not None:
            assert s.issue_s.shape == s.latency_ns.shape and (s.latency_ns >= 0).all()


_TRAIN = CORPUS / "training" / "v5.1" / "ASUSTeK" / "ESC_NB8_E11" / "rgat"


@given(edits=st.lists(st.tuples(st.sampled_from([
    "eval_accuracy", "run_start", "run_stop", "global_batch_size", "submission_benchmark",
]), _values), max_size=5), junk=st.lists(_junk, max_size=2))
def test_hostile_training_logs(edits, junk) -> None:
    if not _TRAIN.is_dir():
        pytest.skip("shared/corpus is not available")
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "rgat"
        shutil.copytree(_TRAIN, d)
        extra = b"".join(
            (f':::MLLOG {{"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "{k}", "value": {v}, '
             f'"metadata": {{"epoch_num": {v}}}}}\n').encode()
            for k, v in edits
        )
        with open(d / "result_1.txt", "ab") as fh:
            fh.write(extra + b"\n".join(junk))
        _report(d)


_arg_values = st.one_of(
    _values,
    st.sampled_from(['"-5"', '"abc"', "1.5", "-1e30", str(1 << 63), str(-(1 << 63)), "false", "null"]),
)
_proctor_args = st.fixed_dictionaries({}, optional={
    "scheduled_ns": _arg_values, "first_token_ns": _arg_values, "n_tokens": _arg_values,
})


def _sample_line(t: tuple[str, dict[str, str]]) -> bytes:
    complete, extra = t
    args = "".join(f',"{k}":{v}' for k, v in extra.items())
    return f'{{"name":"Sample","ph":"b","ts":12.5,"args":{{"complete_ns":{complete}{args}}}}},'.encode()


@given(lines=st.lists(st.one_of(_junk, st.tuples(st.sampled_from(["1000", "250000", "0"]), _proctor_args)
                                 .map(_sample_line)), max_size=20))
def test_hostile_trace_args(lines) -> None:
    """Missing, NaN, huge, string or negative proctor args: left out (with a note), never a crash."""
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / "mlperf_log_trace.json"
        p.write_bytes(b"\n".join(lines))
        s = read_trace_samples(p, [])
        if s is None:
            return
        n = s.latency_ns.shape[0]
        for col in (s.scheduled_ns, s.first_token_ns, s.n_tokens):
            assert col is None or (col.shape == (n,) and col.dtype == np.int64)
        assert s.n_tokens is None or (s.n_tokens >= 0).all()
        for v in (s.from_scheduled_ns(), s.lateness_ns(), s.ttft_ns(), s.tpot_ns()):
            if v is not None and v.size:
                LatencyStats.of(v.copy(), 0.99, count=n)
        run = InferenceRun(name="x", directory=Path(tmp), scenario="Server", samples=s)
        _trace_stats(run)
        assert run.trace_ttft is None or run.trace_ttft.percentiles


_line = st.text(max_size=80)


@given(lines=st.one_of(st.lists(st.one_of(_line, st.integers(), st.none()), max_size=60), _line, st.integers()))
def test_hostile_logged_verdict(lines) -> None:
    """proctor_verdict (the lines `proctor run` printed) is shown escaped and bounded, whatever it holds."""
    import html
    import json

    base = _DETAIL.read_bytes() if _DETAIL.is_file() else _mllog("effective_scenario", '"Server"')
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "mlperf_log_detail.txt").write_bytes(base + _mllog("proctor_verdict", json.dumps(lines)))
        rep = build_report([d])
        page = render(rep, {})
        if isinstance(lines, list) and lines and isinstance(lines[0], str) and "<" in lines[0]:
            assert lines[0] not in page or html.escape(lines[0]) == lines[0]
        assert len(rep.runs[0].verdict) <= 50


@given(name=st.text(alphabet="a$^{}_\\\\x ", min_size=1, max_size=12))
@settings(deadline=None, max_examples=30)
def test_any_name_on_a_figure_is_drawn_as_written(name: str) -> None:
    """Names from logs, trees and the wire reach titles, ticks and legends: a '$' there is a dollar
    sign, never mathtext that stops the drawing (report.plots.png, the one place a figure is made)."""
    from matplotlib.figure import Figure

    from proctor.report.plots import png

    fig = Figure(figsize=(2, 2))
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], label=name)
    ax.set_title(name)
    ax.set_xticks([0, 1], [name, name])
    ax.legend()
    assert png(fig)[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_log_axis_keeps_its_powers_of_ten_drawn_as_numbers() -> None:
    """The numbers' tick labels matplotlib writes itself stay mathtext: a log axis labels 10^6 as
    '$\\mathdefault{10^{6}}$', drawn as written it showed that text (compare.html, report.html)."""
    from matplotlib.figure import Figure

    from proctor.report.plots import png

    fig = Figure(figsize=(3, 3))
    ax = fig.add_subplot()
    ax.plot([1, 2], [10, 1e6])
    ax.set_yscale("log")
    ax.set_xticks([1, 2], ["a$b", "c"])
    png(fig)
    powers = [t.label1 for t in ax.yaxis.get_major_ticks() if "mathdefault" in t.label1.get_text()]
    assert powers and all(label.get_parse_math() for label in powers)
    names = [t.label1.get_text() for t in ax.xaxis.get_major_ticks()]
    assert names == ["a\\$b", "c"]  # a name's '$' escaped: drawn as a dollar sign


_file_bytes = st.one_of(
    st.binary(max_size=400),
    st.lists(st.one_of(_line, st.integers(), st.none(), st.lists(_line, max_size=2)), max_size=80).map(
        lambda v: __import__("json").dumps(v).encode()
    ),
    st.sampled_from([b"[" * 5000 + b"]" * 5000, b'["a"' + b', "b"' * 70_000 + b"]", b"\xff\xfe[]", b"null", b"{}"]),
)


@given(data=_file_bytes)
def test_hostile_verdict_file(data: bytes) -> None:
    """proctor_verdict.json (loadgen.logs.verdict) is hostile input too: a list of strings is read
    bounded (lines and characters); anything else, a file past its byte cap included, is no verdict."""
    import json

    from proctor.loadgen.logs.verdict import (
        LINE_CHARS,
        MAX_VERDICT_BYTES,
        VERDICT_FILE,
        VERDICT_LINES,
        read_verdict,
    )

    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / VERDICT_FILE).write_bytes(data)
        got = read_verdict(d)
        try:
            value = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            value = None
        ok = isinstance(value, list) and all(isinstance(x, str) for x in value) and len(data) <= MAX_VERDICT_BYTES
        if ok:
            assert got == [x[:LINE_CHARS] for x in value[:VERDICT_LINES]]
        else:
            assert got is None
        (d / "mlperf_log_detail.txt").write_bytes(_mllog("effective_scenario", '"Server"'))
        rep = build_report([d])
        render(rep, {})
        assert rep.runs[0].verdict == (got or [])


def test_a_link_in_place_of_the_verdict_file_is_not_followed(tmp_path: Path) -> None:
    from proctor.loadgen.logs.verdict import VERDICT_FILE, read_verdict, write_verdict

    outside = tmp_path / "outside.json"
    outside.write_text('["VALID: planted"]')
    run = tmp_path / "run"
    run.mkdir()
    (run / VERDICT_FILE).symlink_to(outside)
    assert read_verdict(run) is None
    with pytest.raises(ProctorError):
        write_verdict(run, ["INVALID: mine"])
    assert outside.read_text() == '["VALID: planted"]'


_slo_value = st.one_of(
    st.integers(min_value=-(10**20), max_value=10**20), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["1", "x", None, True, [], {}]),
)


@given(targets=st.one_of(st.dictionaries(st.sampled_from(["ttft", "tpot", "latency", "all", "<b>"]), _slo_value,
                                         max_size=4), _slo_value),
       met=st.one_of(st.dictionaries(st.sampled_from(["ttft", "tpot", "latency", "all"]), _slo_value, max_size=4),
                     _slo_value),
       judged=_slo_value, share=_slo_value, source=st.one_of(st.text(max_size=40), _slo_value))
@example(targets={"ttft": 2e9, "tpot": 1e8}, met={"ttft": 3, "tpot": 4, "all": 2}, judged=4, share=0.5, source="<b>")
@example(targets={"latency": 1e7}, met={"latency": 5, "all": 5}, judged=4, share=1.25, source="x")
@example(targets={"latency": 1e7}, met={"latency": 2.5, "all": 2}, judged=4, share=0.5, source="x")
@example(targets={"ttft": 1e7, "tpot": 1e6}, met={"ttft": 1, "tpot": 4, "all": 2}, judged=4, share=0.5, source="")
@settings(max_examples=200)
def test_hostile_slo_records(targets, met, judged, share, source) -> None:
    """The proctor_slo_* records (issue 34): what the report shows of them holds together or is left out."""
    import json

    from proctor.report.data import read_run

    records = {"proctor_slo_targets_ns": targets, "proctor_slo_met": met, "proctor_slo_judged_samples": judged,
               "proctor_slo_attainment": share, "proctor_slo_target_source": source}
    body = _mllog("effective_scenario", '"Server"') + b"".join(
        _mllog(k, json.dumps(v)) for k, v in records.items())
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "mlperf_log_detail.txt").write_bytes(body)
        run = read_run(d)
        slo = run.slo
        if slo is not None:
            assert slo.targets_ns and all(0 < v < float("inf") for v in slo.targets_ns.values())
            assert set(slo.targets_ns) <= {"ttft", "tpot", "latency"} and set(slo.met) == set(slo.targets_ns)
            assert 0 <= slo.met_all <= slo.judged and all(slo.met_all <= n <= slo.judged for n in slo.met.values())
            assert 0 <= slo.share <= 1
        html = render(build_report([d]), {})
        assert ('-slo"' in html) == (slo is not None)
