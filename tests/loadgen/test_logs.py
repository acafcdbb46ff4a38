"""The four log files: byte-level format against the official LoadGen 6.0.17, and the readers."""

from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path

import numpy as np
import pytest

import proctor.loadgen.types as lt
from proctor.loadgen import settings as lset
from proctor.loadgen.logs import (
    AccuracyLog,
    DetailLogWriter,
    TraceLog,
    log_effective_settings,
    log_requested_settings,
    read_detail,
    read_summary,
    recompute,
    render_summary,
)
from proctor.loadgen.logs.detail import format_line
from proctor.loadgen.results import PERCENTILES, LatencyStats, PerformanceResult
from proctor.loadgen.settings import EffectiveSettings
from tests.support.run_logs import run_official

_IN = Path("shared") / "corpus" / "inference"  # the nearest shared/ up (a checkout or a worktree of it)
CORPUS = next((p / _IN for p in Path(__file__).resolve().parents if (p / _IN).is_dir()), Path(_IN)) / "loadgen-6.0.17-local"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="corpus not present")


# ---- rebuild a PerformanceResult from an official summary (+ the detail's settings) ---------------


def eff_from_detail(d, summ) -> EffectiveSettings:
    names = [n for n in EffectiveSettings.__dataclass_fields__ if f"effective_{n}" in d.values]
    kw = {n: d.get(f"effective_{n}") for n in names}
    kw["scenario"], kw["test_mode"] = lt.Scenario(kw["scenario"]), lt.TestMode(kw["test_mode"])
    tp = summ["test_parameters"]
    kw["use_token_latencies"] = "ttft_latency (ns)" in tp
    kw["server_ttft_latency"] = tp.get("ttft_latency (ns)", 100_000_000)
    kw["server_tpot_latency"] = tp.get("tpot_latency (ns)", 100_000_000)
    kw["accuracy_sample_count"] = tp["accuracy_sample_count"]
    kw["sample_concatenate_permutation"] = bool(summ.get("equal_issue_warning"))
    return EffectiveSettings(**kw)


def stats(section: dict, word: str = "latency") -> LatencyStats:
    pct = {p: section[f"{p * 100:.2f} percentile {word} (ns)"] for p in PERCENTILES}
    return LatencyStats(
        count=1,
        min=section["Min latency (ns)"] if word == "latency" else 0,
        max=section["Max latency (ns)"] if word == "latency" else 0,
        mean=section["Mean latency (ns)"] if word == "latency" else 0,
        percentiles=pct,
    )


def result_from_summary(summ: dict, eff: EffectiveSettings) -> PerformanceResult:
    sc = summ["Scenario"]
    ast = summ["additional_stats"]
    r = PerformanceResult(
        scenario=sc,
        mode=summ["Mode"],
        target_percentile=eff.target_latency_percentile,
        use_token_latencies=eff.use_token_latencies,
    )
    r.min_duration_met = summ["Min duration satisfied"] == "Yes"
    r.min_queries_met = summ["Min queries satisfied"] == "Yes"
    r.early_stopping_met = summ["Early stopping satisfied"] == "Yes"
    r.perf_constraints_met = summ.get("Performance constraints satisfied", "Yes") == "Yes"
    r.recommendations = summ["recommendations"]
    es_text = summ["early_stopping"]
    r.early_stopping_text = es_text.get("Early Stopping", "")
    r.early_stopping_ttft_text = es_text.get("TTFT Early Stopping", "")
    r.early_stopping_tpot_text = es_text.get("TPOT Early Stopping", "")
    head = f"{r.target_percentile * 100:.1f}th percentile latency (ns)"
    if sc == "MultiStream":
        r.queries = stats(summ["per_query"])
        r.queries.target = summ[head]
    else:
        r.samples = stats(ast)
        r.samples.target = summ.get(head, 0)
    r.qps_with_loadgen_overhead = ast.get("QPS w/ loadgen overhead", 0.0)
    r.qps_without_loadgen_overhead = ast.get("QPS w/o loadgen overhead", 0.0)
    r.completed_samples_per_sec = summ.get("Completed samples per second", 0.0)
    r.scheduled_samples_per_sec = ast.get("Scheduled samples per second", 0.0)
    r.samples_per_second = float(summ.get("Samples per second", 0.0))
    if r.use_token_latencies:
        r.tokens_per_second = float(summ.get("Tokens per second", 0.0))
        r.completed_tokens_per_second = summ.get("Completed tokens per second", 0.0)
        r.token_throughput_with_loadgen_overhead = ast.get("TPS w/ loadgen overhead", 0.0)
        r.tps_without_loadgen_overhead = ast.get("TPS w/o loadgen overhead", 0.0)
        if sc != "Offline":
            r.ttft = LatencyStats(
                min=ast["Min First Token latency (ns)"],
                max=ast["Max First Token latency (ns)"],
                mean=ast["Mean First Token latency (ns)"],
                percentiles={
                    p: ast[f"{p * 100:.2f} percentile first token latency (ns)"] for p in PERCENTILES
                },
            )
            r.ttft.target = summ.get(
                f"{r.target_percentile * 100:.1f}th first token percentile latency (ns)", 0
            )
            r.tpot = LatencyStats(
                min=ast["Min Time per Output Token (ns)"],
                max=ast["Max Time per Output Token (ns)"],
                mean=ast["Mean Time per Output Token (ns)"],
                percentiles={
                    p: ast[f"{p * 100:.2f} percentile time to output token (ns)"] for p in PERCENTILES
                },
            )
    return r


def check_summary_roundtrip(summary_path: Path, detail_path: Path) -> None:
    summ = read_summary(summary_path)
    d = read_detail(detail_path)
    eff = eff_from_detail(d, summ)
    r = result_from_summary(summ, eff)
    text = render_summary(r, eff, summ["SUT name"], n_warnings=summ["warnings"], n_errors=summ["errors"])
    want = summary_path.read_text().splitlines()
    got = text.splitlines()
    for i, (a, b) in enumerate(zip(want, got, strict=False), 1):
        assert a == b, f"{summary_path}:{i}"
    assert len(want) == len(got)
    assert text == summary_path.read_text()


@needs_corpus
@pytest.mark.parametrize("scenario", ["SingleStream", "MultiStream", "Server", "Offline"])
def test_summary_lines_match_official_corpus(scenario):
    check_summary_roundtrip(
        CORPUS / scenario / "mlperf_log_summary.txt", CORPUS / scenario / "mlperf_log_detail.head80.txt"
    )


@needs_corpus
@pytest.mark.parametrize("scenario", ["SingleStream", "MultiStream", "Server", "Offline"])
def test_detail_line_format_is_byte_identical(scenario):
    """Re-format each official line from its parsed parts: the bytes must match."""
    path = CORPUS / scenario / "mlperf_log_detail.head80.txt"
    lines = path.read_text().splitlines()
    checked = 0
    for raw in lines:
        obj = json.loads(raw[len(":::MLLOG ") :])
        if obj["key"] in ("loadgen_file_sha1",):  # nested JSON object, compact as orjson writes it
            continue
        whole, frac = raw.split('"time_ms": ')[1].split(",")[0].split(".")
        ns = int(whole) * 1_000_000 + int(frac)
        value = obj["value"]
        m = obj["metadata"]
        mine = format_line(
            obj["key"],
            value,
            ns,
            is_error=m["is_error"],
            is_warning=m["is_warning"],
            file=m["file"],
            line_no=m["line_no"],
            pid=m["pid"],
            tid=m["tid"],
        )
        assert mine == raw
        checked += 1
    assert checked >= 70


@needs_corpus
def test_settings_blocks_match_official_order_and_values():
    for scenario in ("SingleStream", "MultiStream", "Server", "Offline"):
        official = read_detail(CORPUS / scenario / "mlperf_log_detail.head80.txt")
        want = [(e.key, e.value) for e in official.entries if e.key.startswith(("requested_", "effective_"))]
        ts = lset.TestSettings()
        for k, v in want:
            if k.startswith("requested_"):
                name = k[len("requested_") :]
                if name == "scenario":
                    v = lt.Scenario(v)
                elif name == "test_mode":
                    name, v = "mode", lt.TestMode(v)
                setattr(ts, name, v)
        summ = read_summary(CORPUS / scenario / "mlperf_log_summary.txt")
        eff = eff_from_detail(official, summ)
        buf = io.StringIO()
        with DetailLogWriter(buf) as log:
            log_requested_settings(log, ts)
            log_effective_settings(log, eff)
        got = [json.loads(x[len(":::MLLOG ") :]) for x in buf.getvalue().splitlines()]
        assert [(g["key"], g["value"]) for g in got] == want
        lines = {e.key: e.line for e in official.entries}
        raw = (CORPUS / scenario / "mlperf_log_detail.head80.txt").read_text().splitlines()
        for g in got:
            assert f'"line_no": {g["metadata"]["line_no"]},' in raw[lines[g["key"]] - 1]


def test_detail_log_writes_as_it_goes_and_counts():
    buf = io.StringIO()
    clock = iter(range(0, 10**12, 1_234_567))
    log = DetailLogWriter(buf, clock_ns=lambda: next(clock), flush_interval_s=0.01)
    log.log("sut_name", "my sut")
    log.warning("careful")
    log.error("broken")
    deadline = time.monotonic() + 10
    while buf.getvalue().count("\n") < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert buf.getvalue().count("\n") == 3  # written before close()
    log.log("result_validity", "VALID")
    log.close()
    rows = [json.loads(x[9:]) for x in buf.getvalue().splitlines()]
    assert [r["key"] for r in rows] == [
        "sut_name",
        "warning_generic_message",
        "error_runtime",
        "result_validity",
    ]
    assert [r["time_ms"] for r in rows] == [1.234567, 2.469134, 3.703701, 4.938268]
    assert rows[2]["metadata"]["is_error"] and rows[1]["metadata"]["is_warning"]
    assert rows[3]["metadata"]["file"] == "results.cc" and rows[3]["metadata"]["line_no"] == 674
    assert (log.n_errors, log.n_warnings) == (1, 1)


def test_detail_value_formatting():
    line = format_line("k", [1, 2], 7886, pid=1, tid=2)
    assert line == (
        ':::MLLOG {"key": "k", "value": [1,2], "time_ms": 0.007886, "namespace": "mlperf::logging", '
        '"event_type": "POINT_IN_TIME", "metadata": {"is_error": false, "is_warning": false, '
        '"file": "proctor", "line_no": 0, "pid": 1, "tid": 2}}'
    )
    assert '"value": 83.9006,' in format_line("k", 83.90057, 0)
    assert '"value": 7.61642e-09,' in format_line("k", 7.616421e-09, 0)
    assert '"value": true,' in format_line("k", True, 0)


def test_accuracy_log_exact_bytes(tmp_path):
    p = tmp_path / "acc.json"
    with AccuracyLog(p) as acc:
        acc.add(0, 2, bytes([2, 0, 0, 0, 255]))
        acc.add(1, 1, b"\x01", token_count=3)
        acc.add(2, 0, b"\x00\xab", token_count=3, token_data=b"\xab")
    assert p.read_text() == (
        '[\n{ "seq_id" : 0, "qsl_idx" : 2, "data" : "02000000FF" },\n'
        '{ "seq_id" : 1, "qsl_idx" : 1, "data" : "01", "token_count" : 3 },\n'
        '{ "seq_id" : 2, "qsl_idx" : 0, "data" : "00AB", "token_data" : "AB", "token_count" : 3 }\n]\n'
    )
    empty = tmp_path / "empty.json"
    AccuracyLog(empty).close()
    assert empty.read_text() == "[\n]\n"
    assert len(json.loads(p.read_text())) == 3


def test_trace_log(tmp_path):
    off = tmp_path / "off.json"
    TraceLog(off, enabled=False).close()
    assert off.read_bytes() == b""
    on = tmp_path / "on.json"
    with TraceLog(on, start_ns=1000, pid=7) as tr:
        tr.span("GenerateQueries", 2000, 1500, tid=7)
        tr.samples(
            np.array([0, 1]),
            np.array([0, 1]),
            np.array([5, 6]),
            np.array([3000, 4000]),
            np.array([3500, 4100]),
        )
    doc = json.loads(on.read_text())
    ev = doc["traceEvents"]
    assert ev[0] == {
        "name": "GenerateQueries",
        "ph": "X",
        "pid": 7,
        "tid": 7,
        "ts": 1.0,
        "dur": 1.5,
        "args": {},
    }
    assert ev[1]["args"] == {
        "sample_seq": 0,
        "query_seq": 0,
        "sample_idx": 5,
        "issue_start_ns": 0,
        "complete_ns": 500,
    }
    assert ev[4]["ts"] == 3.1 and ev[-1] == {"name": "LastTrace"}
    assert doc["displayTimeUnit"] == "ns" and doc["otherData"]["version"] == "MLPerf LoadGen v1.0"


def test_read_detail_crlf_endpoints_and_bad_lines(tmp_path):
    p = tmp_path / "d.txt"
    good = format_line("result_validity", "VALID", 5)
    p.write_bytes(
        (
            good
            + "\r\n"
            + ":::MLLOG {not json\r\nplain output\r\n"
            + good.replace(":::MLLOG", ":::ENDPTS").replace("VALID", "INVALID")
            + "\r\n"
        ).encode()
    )
    d = read_detail(p)
    assert d.get("result_validity") == "INVALID" and len(d.entries) == 2
    assert [b.line for b in d.bad_lines] == [2]
    assert d.line_of("result_validity") == 4
    from proctor.errors import LogFormatError

    with pytest.raises(LogFormatError, match=r"d.txt:2"):
        read_detail(p, strict=True)


# ---- differential: the official LoadGen on this machine ------------------------------------------


_run_official = run_official  # tests/support/run_logs.py: shared with the re-derivation tests


@pytest.fixture(scope="module")
def official_runs(tmp_path_factory):
    lg = pytest.importorskip("mlperf_loadgen")
    S = lg.TestScenario
    base = tmp_path_factory.mktemp("official")
    return {
        "ss": _run_official(
            lg, base / "ss", S.SingleStream, min_duration_ms=100, single_stream_expected_latency_ns=100_000
        ),
        "ss_short": _run_official(
            lg,
            base / "ss_short",
            S.SingleStream,
            min_duration_ms=50,
            min_query_count=10,
            max_query_count=30,
            single_stream_expected_latency_ns=10_000_000,
        ),
        "ms": _run_official(
            lg,
            base / "ms",
            S.MultiStream,
            min_duration_ms=50,
            min_query_count=700,
            multi_stream_expected_latency_ns=50_000,
        ),
        "server": _run_official(
            lg,
            base / "server",
            S.Server,
            min_duration_ms=200,
            server_target_qps=2000,
            server_target_latency_ns=10_000_000,
        ),
        "server_bad": _run_official(
            lg,
            base / "server_bad",
            S.Server,
            min_duration_ms=100,
            server_target_qps=2000,
            server_target_latency_ns=1,
        ),
        "offline": _run_official(
            lg, base / "offline", S.Offline, min_duration_ms=50, offline_expected_qps=1000
        ),
        "server_tok": _run_official(
            lg,
            base / "server_tok",
            S.Server,
            True,
            min_duration_ms=200,
            server_target_qps=2000,
            server_target_latency_ns=10_000_000,
        ),
        "offline_tok": _run_official(
            lg, base / "offline_tok", S.Offline, True, min_duration_ms=50, offline_expected_qps=1000
        ),
        "perm": _run_official(
            lg,
            base / "perm",
            S.SingleStream,
            min_duration_ms=50,
            min_query_count=10,
            single_stream_expected_latency_ns=1_000_000,
            sample_concatenate_permutation=True,
            qsl=16,
        ),
        "ss_mid": _run_official(
            lg,
            base / "ss_mid",
            S.SingleStream,
            min_duration_ms=50,
            min_query_count=300,
            single_stream_expected_latency_ns=1_000_000,
        ),
        "ss_tok": _run_official(
            lg,
            base / "ss_tok",
            S.SingleStream,
            True,
            min_duration_ms=50,
            min_query_count=700,
            single_stream_expected_latency_ns=1_000_000,
        ),
        "acc_tok": _run_official(lg, base / "acc_tok", S.Server, True, mode=lg.TestMode.AccuracyOnly, qsl=3),
    }


RUNS = [
    "ss",
    "ss_short",
    "ms",
    "server",
    "server_bad",
    "offline",
    "server_tok",
    "offline_tok",
    "perm",
    "ss_mid",
    "ss_tok",
]


@pytest.mark.official
@pytest.mark.parametrize("name", RUNS)
def test_official_detail_parses_and_validity_recomputes(official_runs, name):
    d = read_detail(official_runs[name] / "mlperf_log_detail.txt")
    assert d.bad_lines == [] and d.get("loadgen_version", "").startswith("6.0.17")
    assert len(d.errors) == d.get("num_errors")
    rc = recompute(d)
    assert rc.mismatches == []
    assert rc.valid == (d.get("result_validity") == "VALID")
    summ = read_summary(official_runs[name] / "mlperf_log_summary.txt")
    assert summ["Result is"] == d.get("result_validity") and summ["errors"] == d.get("num_errors")
    assert summ["warnings"] == len(d.warnings)


@pytest.mark.official
@pytest.mark.parametrize("name", RUNS)
def test_official_summary_rebuilt_line_by_line(official_runs, name):
    check_summary_roundtrip(
        official_runs[name] / "mlperf_log_summary.txt", official_runs[name] / "mlperf_log_detail.txt"
    )


@pytest.mark.official
def test_official_accuracy_log_format(official_runs, tmp_path):
    want = (official_runs["acc_tok"] / "mlperf_log_accuracy.json").read_text()
    p = tmp_path / "a.json"
    with AccuracyLog(p) as acc:
        for e in json.loads(want):
            acc.add(
                e["seq_id"],
                e["qsl_idx"],
                bytes.fromhex(e["data"]),
                token_count=e["token_count"],
                token_data=bytes.fromhex(e["token_data"]),
            )
    assert p.read_text() == want


@pytest.mark.official
def test_official_results_block_keys_in_order(official_runs):
    """Our results block has the official keys in the official order (values differ: other run)."""
    from proctor.loadgen.logs.detail import result_entries

    for name in ("ss", "ms", "server", "server_bad", "offline", "server_tok", "offline_tok", "ss_short"):
        d = read_detail(official_runs[name] / "mlperf_log_detail.txt")
        keys = [e.key for e in d.entries]
        official = keys[keys.index("result_validity") : keys.index("num_errors")]
        summ = read_summary(official_runs[name] / "mlperf_log_summary.txt")
        r = result_from_summary(summ, eff_from_detail(d, summ))
        assert [k for k, _ in result_entries(r)] == official, name


@pytest.mark.official
@pytest.mark.parametrize("name", ["ss", "ss_short", "ms", "perm", "ss_mid", "ss_tok"])
def test_official_early_stopping_texts_regenerated(official_runs, name):
    """Our ES text from (query count, the estimates the official logged) equals the official text."""
    from proctor.loadgen import early_stopping as es

    d = read_detail(official_runs[name] / "mlperf_log_detail.txt")
    n = d.get("result_query_count")
    pct = d.get("effective_target_latency_percentile")
    sc = d.get("effective_scenario")
    key = (
        "early_stopping_ttft_result" if "early_stopping_ttft_result" in d.values else "early_stopping_result"
    )
    t = es.stream_t(n, pct)
    h_min = es.min_passing(1, pct)
    if sc == "SingleStream":
        est = es.StreamEstimate(t is not None, t or 0, d.get("early_stopping_latency_ss"), h_min)
        t99 = es.stream_t(n, 0.99)
        p99 = es.StreamEstimate(
            t99 is not None, t99 or 0, d.get("early_stopping_latency_ms"), es.min_passing(1, 0.99)
        )
        text = es.stream_text(n, pct, est, also_p99=p99 if est.ok else None)
    else:
        est = es.StreamEstimate(t is not None, t or 0, d.get("early_stopping_latency_ms"), h_min)
        text = es.stream_text(n, pct, est)
    assert text.replace("\n", " ") == d.get(key)
    if name == "ss_mid":
        assert "Not enough queries processed for 99.0th percentile" in text


def _proctor_records(n: int = 300):
    from proctor.loadgen.records import Records, Schedule

    sched = np.arange(n, dtype=np.int64) * 1_000_000
    lat = (np.arange(n, dtype=np.int64) % 17 + 1) * 10_000
    schedule = Schedule(
        scheduled_ns=sched.copy(),
        query_offsets=np.arange(n + 1, dtype=np.int64),
        sample_index=np.arange(n, dtype=np.int64) % 7,
    )
    rec = Records.allocate(schedule)
    rec.query_scheduled_ns[:] = rec.query_issued_ns[:] = sched
    rec.sample_done_ns[:] = rec.query_done_ns[:] = sched + lat
    rec.n_queries_issued = rec.n_samples_issued = n
    return schedule, rec


@pytest.mark.parametrize("scenario", [lt.Scenario.SERVER, lt.Scenario.SINGLE_STREAM])
def test_proctor_logs_round_trip(tmp_path, scenario):
    """summarize -> detail + summary files -> readers -> recompute agrees with summarize."""
    from proctor.loadgen.logs import log_results, write_summary
    from proctor.loadgen.results import summarize

    schedule, rec = _proctor_records()
    eff = EffectiveSettings(
        scenario=scenario,
        test_mode=lt.TestMode.PERFORMANCE_ONLY,
        samples_per_query=1,
        target_qps=1000.0,
        target_latency_ns=150_000,
        target_latency_percentile=0.99 if scenario == lt.Scenario.SERVER else 0.9,
        max_async_queries=0,
        target_duration_ms=200,
        min_duration_ms=200,
        max_duration_ms=0,
        min_query_count=100,
        max_query_count=0,
        min_sample_count=100,
        qsl_rng_seed=1,
        sample_index_rng_seed=2,
        schedule_rng_seed=3,
        accuracy_log_rng_seed=0,
        accuracy_log_probability=0.0,
        accuracy_log_sampling_target=0,
        print_timestamps=False,
        performance_issue_unique=False,
        performance_issue_same=False,
        performance_issue_same_index=0,
        performance_sample_count=7,
        accuracy_sample_count=7,
    )
    r = summarize(eff, schedule, rec)
    with DetailLogWriter(tmp_path / "detail.txt") as log:
        log_effective_settings(log, eff)
        log_results(log, r)
    write_summary(
        tmp_path / "summary.txt", r, eff, "proctor-sut", n_warnings=log.n_warnings, n_errors=log.n_errors
    )
    d = read_detail(tmp_path / "detail.txt")
    rc = recompute(d)
    assert rc.mismatches == [] and rc.valid == r.valid
    assert d.get("result_query_count") == 300 and d.get("num_errors") == 0
    assert d.get("proctor_issue_lateness_max_ns") == 0
    s = read_summary(tmp_path / "summary.txt")
    assert s["Result is"] == ("VALID" if r.valid else "INVALID")
    assert s["additional_stats"]["Mean latency (ns)"] == r.samples.mean
    assert s["test_parameters"]["schedule_rng_seed"] == 3 and s["run_incomplete"] is None
    if scenario == lt.Scenario.SERVER:
        assert r.overlatency_count == d.get("result_overlatency_query_count") > 0
        assert not r.early_stopping_met and rc.required_queries == r.query_count + int(
            re.search(r"at least (\d+) more", r.early_stopping_text).group(1)
        )


def test_read_detail_bounds_hostile_lines(tmp_path):
    """Overlong lines, deep values and floods of errors cost bounded memory and become bad lines."""
    from proctor.loadgen.logs.reader import MAX_DEPTH, MAX_KEPT, MAX_LINE_BYTES

    p = tmp_path / "d.txt"
    deep = "[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2)
    with p.open("w") as fh:
        fh.write(format_line("result_validity", "VALID", 1) + "\n")
        fh.write(":::MLLOG " + "x" * (MAX_LINE_BYTES + 10) + "\n")
        fh.write(f':::MLLOG {{"key": "effective_scenario", "value": {deep}}}\n')
        for _ in range(MAX_KEPT + 5):
            fh.write(format_line("error_runtime", "boom", 2, is_error=True) + "\n")
    d = read_detail(p, keep_entries=False)
    assert [b.line for b in d.bad_lines] == [2, 3] and "longer than" in d.bad_lines[0].reason
    assert "nested deeper" in d.bad_lines[1].reason and "effective_scenario" not in d
    assert d.n_errors == MAX_KEPT + 5 and len(d.errors) == MAX_KEPT and d.entries == []
    assert d.get("result_validity") == "VALID" and d.line_of("error_runtime") == MAX_KEPT + 8
