"""The official LoadGen's notices in proctor's logs, without the official module at hand (the
differential versions are in test_official_log_parity.py): the audit.config notice, the logger_*
counters, FromConfig's errors, and mlperf.conf kept when user.conf fails."""

from __future__ import annotations

import orjson

import proctor.compat.mlperf_loadgen as lg
from proctor.loadgen.logs.detail import AUDIT_CONFIG_NOTICE, LOGGER_COUNTER_KEYS, DetailLogWriter

SEEDS = (2085463073848966840, 2747215439041700203, 16159082839903944936)  # mlperf.conf's


def _start(tmp_path, ts: lg.TestSettings, audit: str = "") -> list[dict]:
    def issue(samples):
        lg.QuerySamplesComplete([lg.QuerySampleResponse(s.id, 0, 0) for s in samples])

    ts.scenario, ts.mode = lg.TestScenario.Offline, lg.TestMode.PerformanceOnly
    ts.min_duration_ms, ts.min_query_count, ts.offline_expected_qps = 0, 1, 100.0
    sut = lg.ConstructSUT(issue, lambda: None)
    qsl = lg.ConstructQSL(64, 16, lambda i: None, lambda i: None)
    log = lg.LogSettings()
    log.log_output.outdir = str(tmp_path)
    log.enable_trace = False
    lg.StartTestWithLogSettings(sut, qsl, ts, log, audit)
    lg.DestroySUT(sut)
    lg.DestroyQSL(qsl)
    text = (tmp_path / "mlperf_log_detail.txt").read_text()
    return [orjson.loads(x[len(":::MLLOG ") :]) for x in text.splitlines()]


def test_audit_config_notice_is_a_warning_the_summary_counts(tmp_path):
    audit = tmp_path / "audit.config"
    audit.write_text("*.*.min_query_count = 3\n")
    lines = _start(tmp_path, lg.TestSettings(), str(audit))
    notice = [x for x in lines if x["value"] == AUDIT_CONFIG_NOTICE]
    assert len(notice) == 1 and notice[0]["key"] == "warning_generic_message"
    assert notice[0]["metadata"]["is_warning"] is True
    assert "1 warning encountered. See detailed log." in (tmp_path / "mlperf_log_summary.txt").read_text()


def test_no_audit_config_no_notice(tmp_path):
    lines = _start(tmp_path, lg.TestSettings(), str(tmp_path / "absent.config"))
    assert not [x for x in lines if x["value"] == AUDIT_CONFIG_NOTICE]
    assert "No warnings encountered during test." in (tmp_path / "mlperf_log_summary.txt").read_text()


def test_logger_counters_before_power_begin(tmp_path):
    keys = [x["key"] for x in _start(tmp_path, lg.TestSettings())]
    at = keys.index("power_begin")
    assert keys[at - 6 : at] == list(LOGGER_COUNTER_KEYS)


def test_logger_counters_count_contention(tmp_path):
    """The one contention proctor's logger has (a thread finding another one logging) is counted."""

    class BusyOnce:  # the lock is held by another thread at the first try
        def __init__(self) -> None:
            self.tries = 0

        def acquire(self, blocking: bool = True) -> bool:
            self.tries += 1
            return blocking or self.tries > 1

        def release(self) -> None:
            pass

    w = DetailLogWriter(tmp_path / "d.txt")
    w._lock = BusyOnce()  # type: ignore[assignment]
    w.log("a", 1)
    w.log("b", 2)
    w.close()
    counts = dict(w.logger_counters())
    assert list(counts) == list(LOGGER_COUNTER_KEYS)
    assert counts["logger_tls_total_log_cas_fail_count"] == w.contended == 1
    assert sum(counts.values()) == 1


def test_failed_user_conf_keeps_mlperf_conf_and_logs_the_error(tmp_path, capsys):
    ts = lg.TestSettings()
    assert ts.FromConfig(str(tmp_path / "missing.conf"), "resnet50", "Offline") < 0
    assert (ts.qsl_rng_seed, ts.sample_index_rng_seed, ts.schedule_rng_seed) == SEEDS
    assert "missing.conf" in capsys.readouterr().err  # loud, as before
    bad = tmp_path / "bad.conf"
    bad.write_text("*.Offline.min_query_count = 12\nnot a line\n")
    ts2 = lg.TestSettings()
    assert ts2.FromConfig(str(bad), "resnet50", "Offline") < 0
    assert ts2.qsl_rng_seed == SEEDS[0] and ts2.min_query_count != 12  # nothing of the bad file
    lines = _start(tmp_path, ts)
    errors = [x for x in lines if x["key"] == "error_invalid_config"]
    assert [e["value"].startswith("can't open file ") for e in errors[:1]] == [True]
    assert any(e["value"].startswith("Multiple conf files are used") for e in errors)  # the second call
    assert len(errors) == 3 and lines[0]["key"] == "error_invalid_config"
    assert "No errors encountered during test." not in (tmp_path / "mlperf_log_summary.txt").read_text()
    # logged once: the next test starts clean
    again = _start(tmp_path, lg.TestSettings())
    assert not [x for x in again if x["key"] == "error_invalid_config"]
