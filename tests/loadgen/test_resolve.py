"""The one settings pipeline: resolve_settings -> start_settings -> normalize."""

from __future__ import annotations

import dataclasses

import pytest

from proctor.errors import ConfigError
from proctor.loadgen.engine import run_test
from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.normalize import normalize
from proctor.loadgen.resolve import Confs, Overrides, resolve_settings, short_run_reason, start_settings
from proctor.loadgen.settings import LogOutputSettings, LogSettings, TestSettings
from proctor.loadgen.types import Scenario, TestMode
from proctor.suts.synthetic import from_params


def test_requested_settings_follow_mlperf_conf_then_user_conf_then_overrides():
    r = resolve_settings(
        "resnet50",
        "Server",
        TestMode.PERFORMANCE_ONLY,
        Confs(user_conf="*.Server.target_qps = 50\n*.Server.min_duration = 20000\n"),
        Overrides(target_qps=70.0, min_query_count=10),
    )
    s = r.settings
    assert (s.server_target_qps, s.min_duration_ms, s.min_query_count) == (70.0, 20_000, 10)
    assert r.rules.min_duration_ms == 600_000 and r.rules.server_target_latency_ns == 15_000_000
    assert r.short_run == "min_duration 20 s < 600 s; min_query_count 10 < 100"
    assert r.notes == ("user.conf applied: user.conf", f"not a submission run: {r.short_run}")


def test_effective_settings_keep_what_was_requested_beside_them():
    s = dataclasses.replace(
        resolve_settings("resnet50", "Offline").settings,
        test05=True,
        test05_qsl_rng_seed=1,
        test05_sample_index_rng_seed=2,
        test05_schedule_rng_seed=3,
        mode=TestMode.ACCURACY_ONLY,
    )
    started = start_settings(s, None)  # the one place test05 is applied
    eff = normalize(started, 100, 10)
    assert eff.requested is started and eff.test_mode is TestMode.PERFORMANCE_ONLY
    assert (eff.qsl_rng_seed, eff.sample_index_rng_seed, eff.schedule_rng_seed) == (1, 2, 3)
    assert normalize(s, 100, 10).test_mode is TestMode.ACCURACY_ONLY  # normalize alone does not


def test_unknown_models_are_refused_unless_allowed():
    with pytest.raises(ConfigError, match="did you mean 'resnet50'"):
        resolve_settings("resnet", "Offline")
    s, _ = resolve_settings("digits", "Offline", None, None, Overrides(target_qps=5.0), check_model=False)
    assert s.offline_expected_qps == 5.0 and s.min_duration_ms == 600_000


def test_accuracy_runs_are_never_short():
    s = TestSettings(scenario=Scenario.OFFLINE, mode=TestMode.ACCURACY_ONLY, min_duration_ms=1)
    assert short_run_reason(s, TestSettings(min_duration_ms=600_000)) == ""


@pytest.mark.parametrize(
    ("field", "value"),
    [("server_target_qps", 0.0), ("server_target_qps", float("nan")), ("min_duration_ms", -1)],
)
def test_run_test_refuses_settings_built_in_code(tmp_path, field, value):
    s = dataclasses.replace(
        TestSettings(scenario=Scenario.SERVER, min_duration_ms=10, min_query_count=1), **{field: value}
    )
    sut, qsl = from_params(service_us="0", workers="0", total="8", perf="8")
    with pytest.raises(ConfigError, match=field):
        run_test(sut, qsl, s, LogSettings(LogOutputSettings(outdir=str(tmp_path))), audit_config=None)
    detail = read_detail(tmp_path / "mlperf_log_detail.txt")
    assert field in detail.require("error_invalid_test_settings")


def test_llm_server_with_token_bounds_needs_no_latency_bound():
    """mlperf.conf gives llama2-70b Server target_latency = 0: its bounds are TTFT and TPOT."""
    from proctor.loadgen.resolve import resolve_settings as resolve

    s = resolve("llama2-70b", "Server").settings
    assert s.use_token_latencies and int(s.server_target_latency_ns) == 0
    assert int(s.server_ttft_latency) == 2_000_000_000
