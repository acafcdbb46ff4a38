"""What the official LoadGen (mlperf_loadgen 6.0.17) writes into its logs around the settings, proctor's
compat API writes too: the audit.config notice, the six logger_* counters, FromConfig's errors, and
mlperf.conf applied when user.conf fails. Each engine runs the same harness in its own process (the
official counts FromConfig calls per process)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from proctor.loadgen.logs.detail import AUDIT_CONFIG_NOTICE, LOGGER_COUNTER_KEYS

_RUN = r"""
import importlib, os, sys
import numpy as np
module, outdir, variant = sys.argv[1:4]
lg = importlib.import_module(module)
os.chdir(outdir)
s = lg.TestSettings()
rcs = []
if variant in ("audit", "second"):
    open("user.conf", "w").write("*.*.min_duration = 100\n")
    rcs.append(s.FromConfig("user.conf", "resnet50", "SingleStream", 1))
    if variant == "second":
        rcs.append(s.FromConfig("user.conf", "resnet50", "SingleStream", 1))
    else:
        open("audit.config", "w").write("*.*.min_query_count = 70\n")
elif variant == "missing":
    rcs.append(s.FromConfig("nope.conf", "resnet50", "SingleStream", 1))
elif variant == "badline":
    open("user.conf", "w").write("*.*.min_duration = 100\nthis line is bad\n")
    rcs.append(s.FromConfig("user.conf", "resnet50", "SingleStream", 1))
print(rcs)
s.scenario = lg.TestScenario.SingleStream
s.mode = lg.TestMode.PerformanceOnly
s.min_duration_ms = 100
s.max_duration_ms = 5000
keep = []
def issue(samples):
    bufs = [np.array([q.index], dtype="<i8") for q in samples]
    lg.QuerySamplesComplete([lg.QuerySampleResponse(q.id, b.__array_interface__["data"][0], 8)
                             for q, b in zip(samples, bufs)])
sut = lg.ConstructSUT(issue, lambda: None)
qsl = lg.ConstructQSL(50000, 1024, lambda idx: None, lambda idx: None)
log = lg.LogSettings(); log.log_output.outdir = "."; log.enable_trace = False
lg.StartTestWithLogSettings(sut, qsl, s, log, "audit.config")
lg.DestroyQSL(qsl); lg.DestroySUT(sut)
"""
ENGINES = {"official": "mlperf_loadgen", "proctor": "proctor.compat.mlperf_loadgen"}


def _run(tmp_path: Path, engine: str, variant: str) -> tuple[list[dict], str, str]:
    out = tmp_path / engine / variant
    out.mkdir(parents=True)
    done = subprocess.run(
        [sys.executable, "-c", _RUN, ENGINES[engine], str(out), variant],
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
    )
    lines = [orjson.loads(x[len(":::MLLOG ") :]) for x in (out / "mlperf_log_detail.txt").read_text().splitlines()]
    return lines, (out / "mlperf_log_summary.txt").read_text(), done.stdout + done.stderr


def _official_logging_the_early_error(tmp_path: Path, variant: str, tries: int = 3) -> tuple[list[dict], str, str]:
    """The official LoadGen logs FromConfig's errors through its asynchronous logger before StartTest
    opens the log files: its IO thread can consume the entry first and drop it (seen in 1 of 25 runs
    beside three CPU hogs; docs/deviations.md). Its behaviour is what a run that kept the entry shows."""
    for i in range(tries):
        got = _run(tmp_path / f"try{i}", "official", variant)
        if _errors(got[0]):
            break
    return got


EARLY_ERRORS = ("second", "missing", "badline")  # variants whose FromConfig logs an error before StartTest


def _both(tmp_path: Path, variant: str) -> dict[str, tuple[list[dict], str, str]]:
    pytest.importorskip("mlperf_loadgen")
    if variant in EARLY_ERRORS:
        official = _official_logging_the_early_error(tmp_path, variant)
        return {"proctor": _run(tmp_path, "proctor", variant), "official": official}
    return {engine: _run(tmp_path, engine, variant) for engine in ENGINES}


def _keys(lines: list[dict]) -> list[str]:
    return [x["key"] for x in lines]


def _value(lines: list[dict], key: str) -> object:
    return next(x["value"] for x in lines if x["key"] == key)


def _errors(lines: list[dict]) -> list[dict]:
    return [x for x in lines if x["key"] == "error_invalid_config"]


@pytest.mark.official
def test_audit_config_notice_is_logged_and_counted(tmp_path):
    got = _both(tmp_path, "audit")
    for _engine, (lines, summary, _) in got.items():
        notices = [x for x in lines if x["key"] == "warning_generic_message" and x["value"] == AUDIT_CONFIG_NOTICE]
        assert len(notices) == 1
        meta = notices[0]["metadata"]
        assert (meta["is_warning"], meta["is_error"], meta["file"], meta["line_no"]) == (True, False, "loadgen.cc", 1235)
        keys = _keys(lines)
        at = keys.index("warning_generic_message")
        # after the QSL's report, before the requested settings (which audit.config changed)
        assert keys[at - 1] == "qsl_reported_performance_count" and keys[at + 1] == "requested_scenario"
        assert _value(lines, "requested_min_query_count") == 70
        assert "1 warning encountered. See detailed log." in summary


@pytest.mark.official
def test_logger_counters_after_each_issue_pass(tmp_path):
    got = _both(tmp_path, "audit")
    where = {}
    for engine, (lines, _, _) in got.items():
        counters = [x for x in lines if x["key"].startswith("logger_")]
        assert [x["key"] for x in counters] == list(LOGGER_COUNTER_KEYS)
        assert all(isinstance(x["value"], int) and x["value"] >= 0 for x in counters)
        where[engine] = [(x["metadata"]["file"], x["metadata"]["line_no"]) for x in counters]
        keys = _keys(lines)
        assert keys.index(LOGGER_COUNTER_KEYS[-1]) + 1 == keys.index("power_begin")
        assert keys.index(LOGGER_COUNTER_KEYS[0]) > keys.index("generated_query_duration")
    assert where["proctor"] == where["official"]


@pytest.mark.official
def test_second_user_conf_is_an_error_in_the_detail_log(tmp_path):
    got = _both(tmp_path, "second")
    for _engine, (lines, summary, out) in got.items():
        errors = _errors(lines)
        assert [x["value"] for x in errors] == [
            "Multiple conf files are used. This is not valid for official submission."
        ]
        assert errors[0]["metadata"]["is_error"] is True
        assert (errors[0]["metadata"]["file"], errors[0]["metadata"]["line_no"]) == ("test_settings_internal.cc", 562)
        assert _keys(lines)[0] == "error_invalid_config"  # logged before the test, so first
        assert "No errors encountered during test." not in summary
        assert "[0, 0]" in out  # both calls still succeed
    assert "Multiple conf files" in got["proctor"][2]  # and proctor says it on stderr too


@pytest.mark.official
@pytest.mark.parametrize("variant", ["missing", "badline"])
def test_a_failed_user_conf_still_applies_mlperf_conf(tmp_path, variant):
    got = _both(tmp_path, variant)
    seeds = {}
    for engine, (lines, summary, out) in got.items():
        errors = _errors(lines)
        assert len(errors) == 1 and errors[0]["metadata"]["is_error"] is True
        if variant == "missing":
            assert errors[0]["value"].startswith("can't open file ")
            assert errors[0]["metadata"]["line_no"] == 620
        assert "No errors encountered during test." not in summary
        rc = int(out.split("[", 1)[1].split("]", 1)[0])
        assert rc < 0, engine
        seeds[engine] = [
            _value(lines, f"effective_{k}")
            for k in ("qsl_rng_seed", "sample_index_rng_seed", "schedule_rng_seed")
        ]
    assert seeds["proctor"] == seeds["official"]
    assert seeds["official"] == [2085463073848966840, 2747215439041700203, 16159082839903944936]
