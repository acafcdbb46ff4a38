"""proctor's engine against the official mlperf_loadgen, with the same instant SUT and settings.

Settings are chosen so that what is issued does not depend on speed (SingleStream/MultiStream stop
at min_query_count with a 0 ms minimum duration; Server issues every generated query; Offline is
one query), so both engines must agree exactly: effective settings, queries and sample indices
issued, validity, accuracy-log entries. Each engine's detail log is read by the other's reader.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pytest

from proctor.loadgen import completion
from proctor.loadgen.engine import run_test
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import QuerySampleResponse, Scenario, TestMode

lg = pytest.importorskip("mlperf_loadgen")
pytestmark = pytest.mark.official

TOTAL, PERF = 64, 16
SETTINGS: dict[Scenario, dict[str, object]] = {
    Scenario.SINGLE_STREAM: dict(min_duration_ms=0, min_query_count=100),
    Scenario.MULTI_STREAM: dict(min_duration_ms=0, min_query_count=700, multi_stream_samples_per_query=8),
    Scenario.SERVER: dict(min_duration_ms=50, min_query_count=10, server_target_qps=2000.0),
    Scenario.OFFLINE: dict(min_duration_ms=0, min_query_count=500),
}
OFFICIAL_SCENARIO = {
    Scenario.SINGLE_STREAM: "SingleStream",
    Scenario.MULTI_STREAM: "MultiStream",
    Scenario.SERVER: "Server",
    Scenario.OFFLINE: "Offline",
}
# Keys only the official writes: its logger's internal counters and allocation warnings.
# Keys only the official writes: its logger's internals, and `error_invalid_config`, which it logs
# ("Multiple conf files are used") whenever an earlier test in the same process already called
# TestSettings.FromConfig: process state, not a property of this run.
OFFICIAL_ONLY = ("logger_", "warning_generic_message", "error_invalid_config")


def run_official(scenario: Scenario, mode: TestMode, outdir: Path) -> list[list[int]]:
    calls: list[list[int]] = []

    def issue(samples):
        idx = np.array([s.index for s in samples], dtype="<i8")
        calls.append(idx.tolist())
        base = idx.ctypes.data
        lg.QuerySamplesComplete(
            [lg.QuerySampleResponse(s.id, base + 8 * k, 8) for k, s in enumerate(samples)]
        )

    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(TOTAL, PERF, lambda s: None, lambda s: None)
    ts = lg.TestSettings()
    ts.scenario = getattr(lg.TestScenario, OFFICIAL_SCENARIO[scenario])
    ts.mode = getattr(lg.TestMode, str(mode))
    for key, value in SETTINGS[scenario].items():
        setattr(ts, key, value)
    log = lg.LogSettings()
    log.log_output.outdir = str(outdir)
    log.enable_trace = False
    outdir.mkdir(parents=True, exist_ok=True)
    try:
        lg.StartTestWithLogSettings(sut, qsl, ts, log)
    finally:
        lg.DestroyQSL(qsl)
        lg.DestroySUT(sut)
    return calls


class InstantSUT:
    name = "instant"

    def __init__(self) -> None:
        self.calls: list[list[int]] = []

    def issue_query(self, samples):
        self.calls.append([s.index for s in samples])
        completion.query_samples_complete(
            [QuerySampleResponse(s.id, np.int64(s.index).tobytes()) for s in samples]
        )

    def flush_queries(self) -> None:
        pass


class InstantQSL:
    name = "instant-qsl"
    total_sample_count = TOTAL
    performance_sample_count = PERF

    def load_samples(self, indices):
        pass

    def unload_samples(self, indices):
        pass


def run_proctor(scenario: Scenario, mode: TestMode, outdir: Path) -> list[list[int]]:
    sut = InstantSUT()
    ts = TestSettings(scenario=scenario, mode=mode, **SETTINGS[scenario])  # type: ignore[arg-type]
    run_test(
        sut,
        InstantQSL(),
        ts,
        LogSettings(log_output=LogOutputSettings(outdir=str(outdir)), enable_trace=False),
        audit_config=None,
        early_stopping_extension=False,  # stop where the official does (test_early_stopping_extension)
    )
    return sut.calls


def first_values(path: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    for e in read_detail(path, strict=True).entries:
        out.setdefault(e.key, e.value)
    return out


def comparable_keys(path: Path) -> set[str]:
    keys = {e.key for e in read_detail(path, strict=True).entries}
    return {k for k in keys if not k.startswith(OFFICIAL_ONLY) and not k.startswith("proctor_")}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Both engines, every scenario, both modes (run once for the module)."""
    out = {}
    for scenario in Scenario:
        for mode in (TestMode.PERFORMANCE_ONLY, TestMode.ACCURACY_ONLY):
            base = tmp_path_factory.mktemp(f"{scenario}-{mode}")
            off = run_official(scenario, mode, base / "official")
            mine = run_proctor(scenario, mode, base / "proctor")
            out[scenario, mode] = (base, off, mine)
    return out


CASES = [(s, m) for s in Scenario for m in (TestMode.PERFORMANCE_ONLY, TestMode.ACCURACY_ONLY)]


@pytest.mark.parametrize(("scenario", "mode"), CASES)
def test_same_settings_queries_and_samples(runs, scenario, mode):
    base, off_calls, my_calls = runs[scenario, mode]
    off = first_values(base / "official" / "mlperf_log_detail.txt")
    mine = first_values(base / "proctor" / "mlperf_log_detail.txt")
    effective = sorted(k for k in off if k.startswith(("effective_", "requested_")))
    assert len(effective) > 40
    assert {k: mine.get(k) for k in effective} == {k: off[k] for k in effective}
    for key in (
        "generated_query_count",
        "generated_samples_per_query",
        "generated_query_duration",
        "loaded_qsl_set",
        "qsl_reported_total_count",
        "qsl_reported_performance_count",
    ):
        assert mine[key] == off[key], key
    assert [len(c) for c in my_calls] == [len(c) for c in off_calls]
    assert my_calls == off_calls  # the very same sample indices, in order
    if mode == TestMode.PERFORMANCE_ONLY:
        for key in (
            "result_query_count",
            "result_validity",
            "result_min_duration_met",
            "result_min_queries_met",
            "early_stopping_met",
        ):
            assert mine[key] == off[key], key


@pytest.mark.parametrize("scenario", list(Scenario))
def test_same_accuracy_log(runs, scenario):
    base, _, _ = runs[scenario, TestMode.ACCURACY_ONLY]
    off = orjson.loads((base / "official" / "mlperf_log_accuracy.json").read_bytes())
    mine = orjson.loads((base / "proctor" / "mlperf_log_accuracy.json").read_bytes())
    assert len(off) >= TOTAL
    key = ("seq_id", "qsl_idx", "data")
    assert sorted(tuple(e[k] for k in key) for e in mine) == sorted(tuple(e[k] for k in key) for e in off)


@pytest.mark.parametrize(("scenario", "mode"), CASES)
def test_same_detail_keys_and_strict_json(runs, scenario, mode):
    base, _, _ = runs[scenario, mode]
    mine_path = base / "proctor" / "mlperf_log_detail.txt"
    for line in mine_path.read_text().splitlines():
        assert line.startswith(":::MLLOG ")
        record = orjson.loads(line[len(":::MLLOG ") :])
        assert set(record) == {"key", "value", "time_ms", "namespace", "event_type", "metadata"}
    mine, theirs = comparable_keys(mine_path), comparable_keys(base / "official" / "mlperf_log_detail.txt")
    assert mine == theirs, f"only proctor: {sorted(mine - theirs)}; only official: {sorted(theirs - mine)}"


@pytest.mark.parametrize("scenario", list(Scenario))
def test_official_reader_parses_proctor_detail_log(runs, scenario):
    parser = pytest.importorskip("mlperf_logging.compliance_checker.mlp_parser.ruleset_610")
    base, _, _ = runs[scenario, TestMode.PERFORMANCE_ONLY]
    lines, errors = parser.parse_file(str(base / "proctor" / "mlperf_log_detail.txt"))
    assert errors == []
    official_lines, _ = parser.parse_file(str(base / "official" / "mlperf_log_detail.txt"))
    mine = {ll.key: ll.value["value"] for ll in lines}
    theirs = {ll.key: ll.value["value"] for ll in official_lines}
    for key in (
        "effective_scenario",
        "effective_samples_per_query",
        "effective_target_qps",
        "result_query_count",
    ):
        assert mine[key] == theirs[key], key
