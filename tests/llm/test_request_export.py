"""The per-request export (`openai:...,export=FILE`): the figures recomputed from the file alone equal
the run's summary (mlperf_log_summary.txt), and each request's count source and fault are there."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.clients.openai import from_params
from proctor.clients.request_export import RequestLog, figures, read_export, write_export
from proctor.errors import ConfigError, LogFormatError
from proctor.loadgen.completion import ID_GENERATION_BITS
from proctor.loadgen.engine import run_test
from proctor.loadgen.logs.numbers import percentile_label
from proctor.loadgen.records import NOT_SET, Records, Schedule
from proctor.loadgen.results import PERCENTILES
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario, TestMode
from proctor.serving.llm_server import Faults

ROOT = Path(__file__).resolve().parents[2]


def run(tmp_path, sut, qsl, scenario, **kw):
    base = dict(scenario=scenario, mode=TestMode.PERFORMANCE_ONLY, use_token_latencies=True, min_duration_ms=300,
                min_query_count=24, server_target_qps=60.0, offline_expected_qps=24.0)
    base.update(kw)
    try:
        out = run_test(sut, qsl, TestSettings(**base), LogSettings(LogOutputSettings(outdir=str(tmp_path))),
                       audit_config=None, timeout_s=60)
        line = sut.write_export(out)
    finally:
        sut.close()
    return out, line


def summary_values(path: Path) -> dict[str, float]:
    """`label : value` lines of mlperf_log_summary.txt."""
    out = {}
    for line in path.read_text().splitlines():
        m = re.match(r"^(.+?)\s*:\s*(-?[\d.]+)\s*$", line)
        if m:
            out[m.group(1).strip()] = float(m.group(2))
    return out


@pytest.mark.parametrize("procs", ["0", "2"])
def test_server_figures_recomputed_from_the_export_equal_the_summary(tmp_path, llm_server, procs):
    # procs=2: the workers send each request's send stamp, chunk count and last chunk's time back
    # with its completion; the export is as complete as with one process
    export = tmp_path / "requests.jsonl"
    with llm_server(ttft_ms=3, tpot_ms=1, chunk=(1, 3)) as server:
        sut, qsl = from_params(url=f"http://127.0.0.1:{server.port}", synthetic="40", procs=procs,
                               **{"in": "uniform:12:4", "out": "uniform:8:4"}, seed="5", export=str(export))
        out, line = run(tmp_path, sut, qsl, Scenario.SERVER)
    n = out.records.n_samples_issued
    assert line == f"per-request export: {n} requests in {export}"
    fig = figures(export)
    summary = summary_values(out.log_paths["summary"])
    for p in PERCENTILES:
        label = percentile_label(p)
        assert fig["ttft"][p] == summary[f"{label} percentile first token latency (ns)"], p
        assert fig["tpot"][p] == summary[f"{label} percentile time to output token (ns)"], p
        assert fig["latency"][p] == summary[f"{label} percentile latency (ns)"], p
    res = out.result
    assert fig["completed"] == res.sample_count == n
    assert fig["token_count"] == res.token_count == int(out.records.sample_n_tokens[:n].sum())
    assert fig["tokens_per_second"] == pytest.approx(res.completed_tokens_per_second, rel=1e-12)
    assert round(fig["tokens_per_second"], 2) == summary["Completed tokens per second"]
    header, rows = read_export(export)
    assert header["scenario"] == "Server" and header["samples"] == n == len(rows)
    assert all(r["source"] == "usage" and r["fault"] is None for r in rows), [orjson.dumps(r) for r in rows[:2]]
    # every request's hops are there and in order; chunks held 1-3 tokens each
    for r in rows:
        assert r["scheduled_ns"] <= r["issued_ns"] <= r["sent_ns"] <= r["first_token_ns"] <= r["last_chunk_ns"]
        assert r["last_chunk_ns"] <= r["done_ns"]
        assert -(-r["tokens"] // 3) <= r["chunks"] <= r["tokens"]
    assert sorted(r["qsl"] for r in rows) == sorted(out.schedule.sample_index[:n].tolist())


def test_offline_export_counts_token_ids_and_the_tokens_per_second(tmp_path, llm_server):
    export = tmp_path / "offline.jsonl"
    with llm_server(ttft_ms=5, tpot_ms=1, chunk=(2, 2)) as server:
        sut, qsl = from_params(url=f"http://127.0.0.1:{server.port}", synthetic="24", token_ids="1",
                               **{"in": "const:8", "out": "const:6"}, export=str(export))
        out, _ = run(tmp_path, sut, qsl, Scenario.OFFLINE)
    fig = figures(export)
    assert fig["token_count"] == out.result.token_count == 6 * 24
    assert fig["tokens_per_second"] == pytest.approx(out.result.tokens_per_second, rel=1e-12)
    assert fig["latency"][0.9] == out.result.samples.percentiles[0.9]
    _, rows = read_export(export)
    assert Counter(r["source"] for r in rows) == {"token_ids": 24} and all(3 <= r["chunks"] <= 6 for r in rows)


def test_faults_are_exported_per_request_and_left_out_of_the_figures(tmp_path, llm_server):
    export = tmp_path / "faults.jsonl"
    faults = Faults(rate_429=0.2, rate_500=0.2)
    with llm_server(ttft_ms=2, tpot_ms=1, faults=faults, seed=4) as server:
        sut, qsl = from_params(url=f"http://127.0.0.1:{server.port}", synthetic="40",
                               **{"in": "const:8", "out": "const:5"}, export=str(export))
        out, _ = run(tmp_path, sut, qsl, Scenario.SERVER, min_query_count=40)
    _, rows = read_export(export)
    kinds = Counter(r["fault"] for r in rows if r["fault"])
    assert kinds == {k: v for k, v in sut.faults.items() if v} and sum(kinds.values()) > 0
    assert sum(kinds.values()) == out.result.failed_samples
    assert all(r["source"] is None and r["tokens"] == 0 for r in rows if r["fault"])
    fig = figures(export)
    assert fig["completed"] == out.result.sample_count == len(rows) - sum(kinds.values())
    assert fig["ttft"][0.99] == out.result.ttft.percentiles[0.99]
    assert fig["token_count"] == out.result.token_count
    assert fig["tokens_per_second"] == pytest.approx(out.result.completed_tokens_per_second, rel=1e-12)


def test_worker_processes_feed_the_export_too(tmp_path, llm_server):
    # procs=2: the workers read the CSV themselves (the dataset spec travels), their events carry the
    # send stamps, count sources, faults and chunk counts back
    export = tmp_path / "procs.jsonl"
    data = tmp_path / "d.csv"
    data.write_text("q\n" + "".join(f"ba de {i}\n" for i in range(16)))
    with llm_server(ttft_ms=2, tpot_ms=1, chunk=(1, 2)) as server:
        sut, qsl = from_params(url=f"http://127.0.0.1:{server.port}", dataset=str(data), prompt_column="q",
                               max_tokens="4", procs="2", export=str(export))
        out, _ = run(tmp_path, sut, qsl, Scenario.OFFLINE, min_query_count=16)
    _, rows = read_export(export)
    assert len(rows) == 16 and all(r["source"] == "usage" and r["sent_ns"] is not None for r in rows)
    # 4 tokens in chunks of 1-2 tokens: 2 to 4 chunks, the last one after the first token
    assert all(2 <= r["chunks"] <= 4 and r["tokens"] == 4 for r in rows), rows[:2]
    assert all(r["sent_ns"] <= r["first_token_ns"] <= r["last_chunk_ns"] <= r["done_ns"] for r in rows)
    assert figures(export)["token_count"] == out.result.token_count == 64


def test_the_cli_writes_the_export_and_says_where(tmp_path, llm_server):
    # a user's journey, as typed: `proctor run --sut openai:...,export=FILE`
    export = tmp_path / "req.jsonl"
    data = tmp_path / "prompts.csv"
    data.write_text("question,answer\n" + "".join(f"ba de ko {i},x y\n" for i in range(24)))
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    with llm_server(ttft_ms=250, tpot_ms=10, chunk=(2, 2)) as server:
        spec = (f"openai:url=http://127.0.0.1:{server.port},model=tiny,max_tokens=6,prompt_column=question,"
                f"output_column=answer,export={export}")
        r = subprocess.run(
            [sys.executable, "-m", "proctor", "run", "--scenario", "Offline", "--model", "llama2-70b", "--sut", spec,
             "--dataset", str(data), "--duration-ms", "300", "--min-queries", "24", "--target-qps", "40",
             "--output", str(tmp_path / "logs")],
            capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
        )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "sut: per-request export: 24 requests in" in r.stdout
    header, rows = read_export(export)
    assert header["scenario"] == "Offline" and len(rows) == 24
    assert sum(row["tokens"] for row in rows) == figures(export)["token_count"] > 0


def test_export_rows_from_records_alone(tmp_path):
    # two queries of two samples: one completed (usage), one SUT fault, one failed by the engine
    # without a SUT fault, one never completed; stamps relative to the run's start, null where unset
    sch = Schedule(scheduled_ns=np.array([0, 50], np.int64), query_offsets=np.array([0, 2, 4], np.int64),
                   sample_index=np.array([3, 1, 0, 2], np.int64))
    rec = Records.allocate(sch, 1000)
    rec.n_queries_issued = 2
    rec.query_scheduled_ns[:] = [1000, 1050]
    rec.query_issued_ns[:] = [1001, 1052]
    rec.sample_first_token_ns[:] = [1100, NOT_SET, 1200, NOT_SET]
    rec.sample_done_ns[:] = [1300, 1090, 1400, NOT_SET]
    rec.sample_n_tokens[:] = [5, 0, 0, 0]
    rec.sample_failed = np.array([0, 1, 1, 0], np.uint8)
    base = 7 << ID_GENERATION_BITS
    log = RequestLog(1)
    for i, t in enumerate((1010, 1011, 1060, 1061)):
        log.sent(base + i, t)
    log.done(base, "usage")
    log.failed(base + 1, "http_429")
    log.note_chunks(base, 2, 1290)

    class Outcome:
        schedule, records, effective, scenario, mode, result = sch, rec, None, "Server", "PerformanceOnly", None

    path = tmp_path / "e.jsonl"
    assert write_export(path, Outcome(), log) == 5
    header, rows = read_export(path)
    assert header["samples"] == 4 and header["queries"] == 2
    assert rows[0] == {"id": 0, "qsl": 3, "query": 0, "scheduled_ns": 0, "issued_ns": 1, "sent_ns": 10,
                       "first_token_ns": 100, "done_ns": 300, "tokens": 5, "source": "usage", "fault": None,
                       "chunks": 2, "last_chunk_ns": 290, "met_ttft": None, "met_tpot": None, "met_latency": None,
                       "met_all": None}
    assert [r["fault"] for r in rows] == [None, "http_429", "failed", None]
    assert [r["source"] for r in rows] == ["usage", None, None, None]
    assert rows[3]["done_ns"] is None and rows[2]["scheduled_ns"] == 50
    fig = figures(path)
    assert fig["completed"] == 1 and fig["token_count"] == 5 and fig["ttft"][0.5] == 100
    assert fig["tpot"][0.5] == (300 - 100) // 4 and fig["final_query_done_ns"] == 400 - 0


def test_an_export_into_no_folder_is_refused_before_the_run(tmp_path):
    with pytest.raises(ConfigError) as exc:
        from_params(url="http://127.0.0.1:9", synthetic="2", preflight="0", export=str(tmp_path / "no" / "e.jsonl"))
    assert str(exc.value) == f"key 'export': export={tmp_path / 'no' / 'e.jsonl'}: no folder {tmp_path / 'no'} to write it in"


def test_the_export_needs_proctors_records():
    class Outcome:
        schedule = records = effective = None

    with pytest.raises(ConfigError, match="proctor's engine"):
        write_export("x.jsonl", Outcome(), None)


def test_the_request_log_grows_and_keeps_the_last_phase():
    g1, g2 = 1 << ID_GENERATION_BITS, 2 << ID_GENERATION_BITS
    log = RequestLog(2)
    log.sent(g1 + 4, 7)  # an earlier phase (accuracy, a find-peak probe): dropped when the next begins
    log.sent(g2 + 5, 100)
    log.done(g2 + 5, "usage")
    log.failed(g2 + 7, "stall")
    log.note_chunks(g2 + 5, 3, 150)
    log.done(g1 + 3, "usage")  # a straggler of the earlier phase: not noted
    assert log.ignored == 1 and log.generation == 2
    assert log.column("sent_ns", 9).tolist()[4] == 0
    assert log.column("sent_ns", 9).tolist()[5] == 100 and log.column("chunks", 9).tolist()[5] == 3
    assert log.column("last_chunk_ns", 9).tolist()[5] == 150
    assert log.column("source", 9).tolist()[5] == 3 and log.column("fault", 9).tolist()[7] == 5
    assert log.column("chunks", 20).tolist()[19] == -1


@pytest.mark.fuzz
@given(st.binary(max_size=600))
def test_reading_an_export_takes_any_bytes(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("x") / "e.jsonl"
    path.write_bytes(orjson.dumps({"proctor_request_export": 1}) + b"\n" + raw)
    try:
        header, rows = read_export(path)
    except LogFormatError as exc:
        assert str(path) in str(exc)
    else:
        assert header["proctor_request_export"] == 1 and all(isinstance(r, dict) for r in rows)
        try:
            fig = figures(path)
        except LogFormatError as exc:
            assert str(path) in str(exc)
        else:
            assert fig["completed"] <= len(rows)
