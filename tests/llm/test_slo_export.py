"""Per-request SLO attainment and goodput (issue 34 §2) and the export in JSONL, CSV and Parquet (§3),
against `proctor serve llm`: each format holds the same rows, and attainment and goodput recomputed
from any of them equal the summary's, the detail log's and the result's."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.clients.openai import from_params
from proctor.clients.request_export import COLUMNS, figures, read_export, write_export
from proctor.column_files import ColumnWriter, file_format
from proctor.errors import ConfigError, LogFormatError
from proctor.loadgen.engine import run_test
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.results import SLOTargets
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario, TestMode

pa = pytest.importorskip("pyarrow")
ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path, sut, qsl, slo):
    settings = TestSettings(scenario=Scenario.SERVER, mode=TestMode.PERFORMANCE_ONLY, use_token_latencies=True,
                            min_duration_ms=400, min_query_count=40, server_target_qps=80.0,
                            server_ttft_latency=60_000_000, server_tpot_latency=50_000_000)
    try:
        return run_test(sut, qsl, settings, LogSettings(LogOutputSettings(outdir=str(tmp_path))), audit_config=None,
                        timeout_s=60, slo=slo)
    finally:
        sut.close()


def test_attainment_from_each_export_format_equals_the_summary(tmp_path, llm_server):
    # jitter spreads the TTFTs over 3..33 ms: a 15 ms TTFT target is met by some requests, not all
    with llm_server(ttft_ms=3, tpot_ms=1, jitter_ms=30, seed=3, chunk=(1, 2)) as server:
        sut, qsl = from_params(url=f"http://127.0.0.1:{server.port}", synthetic="40", seed="2",
                               **{"in": "const:8", "out": "uniform:6:3"}, export=str(tmp_path / "r.jsonl"))
        out = _run(tmp_path, sut, qsl, SLOTargets(ttft_ns=15_000_000, source="set by --slo-ttft-ms"))
    att = out.result.attainment
    assert att.targets_ns == {"ttft": 15_000_000, "tpot": 50_000_000}
    assert 0 < att.met_all < att.judged == out.result.sample_count  # some met, some did not
    rows_by_format = {}
    for name in ("r.jsonl", "r.csv", "r.parquet"):
        path = tmp_path / name
        write_export(path, out, sut.export)
        header, rows = read_export(path)
        rows_by_format[file_format(path, "export")] = rows
        fig = figures(path, slo_targets_ns=dict(att.targets_ns))  # a CSV has no header to hold them
        slo = fig["slo"]
        assert slo["met"] == att.met and slo["met_all"] == att.met_all and slo["judged"] == att.judged, name
        assert slo["attainment"] == att.share
        assert slo["goodput_per_s"] == pytest.approx(att.goodput_per_s, rel=1e-12)
        assert fig["requests_per_second"] == pytest.approx(out.result.completed_samples_per_sec, rel=1e-12)
        # each row's own verdicts are the result's, request by request
        assert [r["met_all"] for r in rows] == att.masks["all"][: len(rows)].tolist()
        assert [r["met_ttft"] for r in rows] == att.masks["ttft"][: len(rows)].tolist()
        assert all(r["met_latency"] is None for r in rows)  # not a target of this run
    assert rows_by_format["jsonl"] == rows_by_format["csv"] == rows_by_format["parquet"]
    # the Parquet file keeps the header (the targets) in its schema metadata, as the JSONL's first line
    header, _ = read_export(tmp_path / "r.parquet")
    assert header["slo_targets_ns"] == att.targets_ns and header["slo_source"] == att.source
    # and the CSV beside it, in r.csv.meta.json: the same header, so the CSV alone recomputes the SLO figures
    assert read_export(tmp_path / "r.csv")[0] == read_export(tmp_path / "r.jsonl")[0] == header
    assert orjson.loads((tmp_path / "r.csv.meta.json").read_bytes())["scenario"] == "Server"
    slo = figures(tmp_path / "r.csv")["slo"]  # no targets given: the meta file's
    assert slo["targets_ns"] == att.targets_ns and slo["met_all"] == att.met_all
    assert list(pa.parquet.read_schema(tmp_path / "r.parquet").names) == [c for c, _ in COLUMNS]
    with open(tmp_path / "r.csv", newline="") as f:
        assert next(csv.reader(f)) == [c for c, _ in COLUMNS]
    # the detail log and the summary say the same numbers
    detail = read_detail(out.log_paths["detail"]).values
    assert detail["proctor_slo_met"] == {**att.met, "all": att.met_all}
    assert detail["proctor_slo_targets_ns"] == att.targets_ns
    assert detail["proctor_goodput_requests_per_sec"] == pytest.approx(att.goodput_per_s, rel=1e-5)
    summary = out.log_paths["summary"].read_text()
    assert f"PROCTOR: SLO attainment: {att.met_all} of {att.judged} requests ({att.share:.2%})" in summary
    assert f"PROCTOR: goodput: {att.goodput_per_s:.2f} requests/s met every SLO target" in summary


def test_an_export_of_an_unknown_format_is_refused_before_the_run(tmp_path):
    with pytest.raises(ConfigError, match=r"key 'export': cannot tell the format of .*e\.xlsx from '\.xlsx'; end its name in \.csv, \.jsonl"):
        from_params(url="http://127.0.0.1:9", synthetic="2", preflight="0", export=str(tmp_path / "e.xlsx"))


def test_a_parquet_export_without_pyarrow_is_one_line(tmp_path):
    # pyarrow hidden: the export is refused before the run, naming the extra to install
    code = (
        "import sys; sys.modules['pyarrow'] = None\n"
        "from proctor.clients.openai import from_params\n"
        "from proctor.errors import ConfigError\n"
        f"try:\n    from_params(url='http://127.0.0.1:9', synthetic='2', preflight='0', export={str(tmp_path / 'e.parquet')!r})\n"
        "except ConfigError as exc:\n    print(exc)\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert r.stdout.strip() == "key 'export': a Parquet export (e.parquet) needs pyarrow: pip install 'proctor[parquet]'", r.stdout + r.stderr


def test_the_cli_takes_slo_targets_and_refuses_bad_ones(tmp_path, llm_server):
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT}"}
    bad = subprocess.run(
        [sys.executable, "-m", "proctor", "run", "--scenario", "Server", "--sut", "synthetic", "--slo-ttft-ms", "-3",
         "-o", str(tmp_path / "bad")], capture_output=True, text=True, timeout=60, env=env)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1].endswith("--slo-ttft-ms must be a number of milliseconds in "
                                                         "(0, 8.64e+07], got -3.0")
    with llm_server(ttft_ms=2, tpot_ms=1) as server:
        spec = f"openai:url=http://127.0.0.1:{server.port},model=tiny,synthetic=24,in=const:4,out=const:4"
        r = subprocess.run(
            [sys.executable, "-m", "proctor", "run", "--scenario", "Server", "--model", "llama3_1-8b", "--sut", spec,
             "--duration-ms", "300", "--min-queries", "24", "--target-qps", "60", "--slo-tpot-ms", "50",
             "--no-report", "-o", str(tmp_path / "logs")],
            capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    lines = [line for line in r.stdout.splitlines() if line.startswith(("SLO attainment:", "goodput:"))]
    assert len(lines) == 2, r.stdout
    assert "(TTFT <= 2000 ms, TPOT <= 50 ms; set by --slo-tpot-ms; TTFT the benchmark's bound)" in lines[0]


# --- reading exports back: any bytes, any cells -----------------------------------------------------


INT64 = st.integers(-(2**63), 2**63 - 1)  # what JSON from orjson holds


@pytest.mark.fuzz
@given(st.one_of(
    st.binary(max_size=600),
    st.fixed_dictionaries({"proctor_request_export": st.just(1)}, optional={
        "scenario": st.one_of(st.none(), st.text(max_size=8), INT64, st.lists(INT64, max_size=2)),
        "slo_targets_ns": st.one_of(st.none(), st.text(max_size=4), st.dictionaries(
            st.sampled_from(["ttft", "tpot", "latency", "x"]), st.one_of(INT64, st.floats(), st.text(max_size=3)),
            max_size=3)),
    }).map(orjson.dumps),
))
def test_reading_a_csv_exports_meta_file_takes_any_bytes(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("x") / "e.csv"
    path.write_bytes(",".join(c for c, _ in COLUMNS).encode() + b"\n")
    (path.parent / "e.csv.meta.json").write_bytes(raw)
    try:
        header, rows = read_export(path)
        figures(path, scenario="Server")
    except LogFormatError as exc:
        assert "e.csv.meta.json" in str(exc) or str(path) in str(exc)
    else:
        assert isinstance(header, dict) and rows == []


@pytest.mark.fuzz
@given(st.binary(max_size=600))
def test_reading_a_csv_export_takes_any_bytes(tmp_path_factory, raw):
    path = tmp_path_factory.mktemp("x") / "e.csv"
    path.write_bytes(",".join(c for c, _ in COLUMNS).encode() + b"\n" + raw)
    try:
        _, rows = read_export(path)
        fig = figures(path, scenario="Server", slo_targets_ns={"latency": 5})
    except LogFormatError as exc:
        assert str(path) in str(exc)
    else:
        assert fig["completed"] <= len(rows)


@pytest.mark.fuzz
@given(st.lists(st.tuples(st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1)),
                          st.one_of(st.none(), st.text(max_size=8)), st.one_of(st.none(), st.booleans())),
                max_size=20),
       st.one_of(st.none(), st.dictionaries(st.text(max_size=6), st.integers(-(2**63), 2**63 - 1), max_size=3)))
def test_reading_a_parquet_export_takes_any_cells(tmp_path_factory, cells, targets):
    path = tmp_path_factory.mktemp("x") / "e.parquet"
    header = {"proctor_request_export": 1, "scenario": "Server", "slo_targets_ns": targets}
    kinds = {"int": 0, "str": 1, "bool": 2}
    values = [[c[kinds[k]] for c in cells] for _, k in COLUMNS]
    with ColumnWriter(path, COLUMNS, meta=header) as w:
        w.write(values)
    try:
        _, rows = read_export(path)
        fig = figures(path)
    except LogFormatError as exc:
        assert str(path) in str(exc)
    else:
        assert len(rows) == len(cells) and fig["completed"] <= len(rows)


def test_a_parquet_file_that_is_not_an_export_is_one_error(tmp_path):
    path = tmp_path / "other.parquet"
    pa.parquet.write_table(pa.table({"a": [1, 2]}), path)
    with pytest.raises(LogFormatError, match="not a proctor request export: no column id"):
        read_export(path)
    path.write_bytes(b"PAR1" + orjson.dumps({"x": 1}))
    with pytest.raises(LogFormatError, match="not a readable Parquet file"):
        read_export(path)
