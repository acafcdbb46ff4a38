"""GPT-J's metric: the inferred token rates (infer_token_latencies, token_latency_scaling_factor) that
LoadGen's results.cc writes to the detail log, `result_inferred_tokens_per_second` (Offline) and
`result_inferred_completed_tokens_per_second` (Server), and that the v4.1 and v5.0 checkers read as
GPT-J's result. proctor's engine writes them as the official does (same keys, same formula, Server
and Offline only), and the checker reads them, a missing one being an error naming the key."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from proctor.checks.submission import check_submission
from proctor.loadgen import completion
from proctor.loadgen.engine import run_test
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import QuerySampleResponse, Scenario, TestMode
from tests.checks import test_rounds as built

FACTOR = 69  # gptj.*.token_latency_scaling_factor in mlperf.conf
TOTAL, PERF = 64, 16
SETTINGS: dict[Scenario, dict[str, object]] = {
    Scenario.SINGLE_STREAM: dict(min_duration_ms=0, min_query_count=100),
    Scenario.MULTI_STREAM: dict(min_duration_ms=0, min_query_count=700, multi_stream_samples_per_query=8),
    Scenario.SERVER: dict(min_duration_ms=50, min_query_count=10, server_target_qps=2000.0),
    Scenario.OFFLINE: dict(min_duration_ms=0, min_query_count=500),
}
KEYS = {
    Scenario.OFFLINE: "result_inferred_tokens_per_second",
    Scenario.SERVER: "result_inferred_completed_tokens_per_second",
}
SUMMARY = {Scenario.OFFLINE: "Tokens per second (inferred)", Scenario.SERVER: "Completed tokens per second (inferred)"}


class _InstantSUT:
    name = "instant"

    def issue_query(self, samples):  # type: ignore[no-untyped-def]
        completion.query_samples_complete([QuerySampleResponse(s.id, np.int64(s.index).tobytes()) for s in samples])

    def flush_queries(self) -> None:
        pass


class _QSL:
    name = "qsl"
    total_sample_count = TOTAL
    performance_sample_count = PERF

    def load_samples(self, indices):  # type: ignore[no-untyped-def]
        pass

    def unload_samples(self, indices):  # type: ignore[no-untyped-def]
        pass


def _proctor(scenario: Scenario, outdir: Path, infer: bool = True) -> Path:
    ts = TestSettings(scenario=scenario, mode=TestMode.PERFORMANCE_ONLY, **SETTINGS[scenario])  # type: ignore[arg-type]
    ts.infer_token_latencies = infer
    ts.token_latency_scaling_factor = FACTOR if infer else 0
    log = LogSettings(log_output=LogOutputSettings(outdir=str(outdir)), enable_trace=False)
    run_test(_InstantSUT(), _QSL(), ts, log, audit_config=None, early_stopping_extension=False)
    return outdir


def _values(path: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    for e in read_detail(path, strict=True).entries:
        out.setdefault(e.key, e.value)
    return out


@pytest.mark.parametrize("scenario", list(Scenario))
def test_detail_log_has_the_inferred_token_rate_where_results_cc_writes_it(tmp_path: Path, scenario: Scenario) -> None:
    out = _proctor(scenario, tmp_path / "run")
    values = _values(out / "mlperf_log_detail.txt")
    summary = (out / "mlperf_log_summary.txt").read_text()
    key = KEYS.get(scenario)
    inferred = {k for k in values if k.startswith("result_inferred")}
    assert inferred == ({key} if key else set())
    if key is None:  # SingleStream, MultiStream: neither log says anything inferred
        assert "(inferred)" not in summary
        return
    # results.cc: factor x samples / max latency (Offline), factor x (samples - 1) / final done (Server),
    # i.e. factor times the scenario's own rate; printed to the detail log's 6 significant digits
    rate = values["result_samples_per_second" if scenario is Scenario.OFFLINE else "result_completed_samples_per_sec"]
    assert isinstance(rate, int | float) and values[key] == pytest.approx(FACTOR * rate, rel=2e-5)
    assert f"{SUMMARY[scenario]}: " in summary
    last = [e.key for e in read_detail(out / "mlperf_log_detail.txt", strict=True).entries if e.key.startswith("result_")]
    assert last[-1] == key  # after the other results, as the official logs it


def test_no_inferred_keys_without_the_setting(tmp_path: Path) -> None:
    values = _values(_proctor(Scenario.OFFLINE, tmp_path / "run", infer=False) / "mlperf_log_detail.txt")
    assert not [k for k in values if k.startswith("result_inferred")]


@pytest.mark.parametrize("scenario", [Scenario.OFFLINE, Scenario.SERVER])
def test_the_official_loadgen_writes_the_same_keys(tmp_path: Path, scenario: Scenario) -> None:
    lg = pytest.importorskip("mlperf_loadgen")
    from tests.loadgen.test_official_diff import OFFICIAL_SCENARIO, comparable_keys

    def issue(samples):  # type: ignore[no-untyped-def]
        idx = np.array([s.index for s in samples], dtype="<i8")
        lg.QuerySamplesComplete([lg.QuerySampleResponse(s.id, idx.ctypes.data + 8 * k, 8) for k, s in enumerate(samples)])

    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(TOTAL, PERF, lambda s: None, lambda s: None)
    ts = lg.TestSettings()
    ts.scenario = getattr(lg.TestScenario, OFFICIAL_SCENARIO[scenario])
    ts.mode = lg.TestMode.PerformanceOnly
    for k, v in SETTINGS[scenario].items():
        setattr(ts, k, v)
    ts.infer_token_latencies = True
    ts.token_latency_scaling_factor = FACTOR
    log = lg.LogSettings()
    log.log_output.outdir = str(tmp_path / "official")
    log.enable_trace = False
    (tmp_path / "official").mkdir()
    try:
        lg.StartTestWithLogSettings(sut, qsl, ts, log)
    finally:
        lg.DestroyQSL(qsl)
        lg.DestroySUT(sut)
    theirs_path = tmp_path / "official" / "mlperf_log_detail.txt"
    mine_path = _proctor(scenario, tmp_path / "proctor") / "mlperf_log_detail.txt"
    mine, theirs = comparable_keys(mine_path), comparable_keys(theirs_path)
    assert KEYS[scenario] in theirs and mine == theirs, (sorted(mine - theirs), sorted(theirs - mine))
    theirs_values = _values(theirs_path)
    rate = theirs_values["result_samples_per_second" if scenario is Scenario.OFFLINE else "result_completed_samples_per_sec"]
    assert theirs_values[KEYS[scenario]] == pytest.approx(FACTOR * rate, rel=2e-5)  # the formula checked above


# --- the checker reads them: GPT-J in v4.1 -------------------------------------------------------------
def test_gptj_result_is_read_from_the_inferred_keys(tmp_path: Path) -> None:
    root = built._build(tmp_path, built._gptj_v41)
    report = check_submission(root, "v4.1")
    assert report.valid, [f.message for f in report.findings if f.failed]
    rows = {r.scenario: (r.metric, r.value) for r in report.results}
    assert rows == {
        "Offline": ("inferred tokens per second", 2650.4),
        "Server": ("inferred completed tokens per second", 2480.7),
    }


@pytest.mark.parametrize(("scenario", "key"), [("Offline", KEYS[Scenario.OFFLINE]), ("Server", KEYS[Scenario.SERVER])])
def test_a_gptj_log_without_the_inferred_key_is_an_error_naming_it(tmp_path: Path, scenario: str, key: str) -> None:
    root = built._build(tmp_path, built._gptj_v41)
    detail = next(root.glob(f"closed/*/results/*/gptj-99/{scenario}/performance/run_1/mlperf_log_detail.txt"))
    detail.write_text("".join(ln for ln in detail.read_text().splitlines(keepends=True) if f'"key": "{key}"' not in ln))
    report = check_submission(root, "v4.1")
    [f] = [f for f in report.findings if f.failed]
    assert (f.rule, f.key, f.path) == ("detail_log_key", key, str(detail))
    assert "infer_token_latencies = 1" in f.message and "GPT-J" in f.message
    assert not report.valid
