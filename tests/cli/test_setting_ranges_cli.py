"""`proctor run` refuses every out-of-range setting before anything starts (issue 30 §4): exit 2, one
line naming the file, line and key (user.conf, audit.config) or the option, and no log folder."""

from __future__ import annotations

import pytest

from proctor.loadgen.conf import READS

USER_READS = [r for r in READS if r.kind in ("f64", "u64") and not r.mlperf_only]
# no numeric key takes any of these, whatever its range: nothing may start
NEVER_LEGAL = ["nan", "inf", "-1", "1e300", "18446744073709551616"]
SUT = "synthetic:service_us=0,workers=0,total=64,perf=64"


def _scenario(read) -> str:
    return read.scenario or "Offline"


def _conf_text(read, value: str) -> str:
    # the token keys are read only with their switch on; the switches themselves are bools
    return f"*.*.use_token_latencies = 1\n*.*.infer_token_latencies = 1\n*.{read.scenario or '*'}.{read.key} = {value}\n"


def _refused(r, out, words) -> None:
    assert r.rc == 2, r.out + r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.err, r.err
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert not out.exists()  # refused before anything started


@pytest.mark.parametrize("read", USER_READS, ids=lambda r: f"{r.key}:{r.scenario or '*'}")
def test_every_numeric_user_conf_key_is_refused_with_its_line(cli, tmp_path, read):
    for k, value in enumerate(NEVER_LEGAL):
        conf = tmp_path / f"user{k}.conf"
        conf.write_text(_conf_text(read, value))
        out = tmp_path / f"logs{k}"
        r = cli("run", "-s", _scenario(read), "--sut", SUT, "--user-conf", conf, "-o", out, "--quiet")
        _refused(r, out, [f"{conf}:3: key '{read.key}'"])


@pytest.mark.parametrize("read", USER_READS, ids=lambda r: f"{r.key}:{r.scenario or '*'}")
def test_every_numeric_audit_config_key_is_refused_with_its_line(cli, tmp_path, read):
    for k, value in enumerate(("nan", "-1", "1e300")):
        audit = tmp_path / f"audit{k}.config"
        audit.write_text(_conf_text(read, value))
        out = tmp_path / f"logs{k}"
        r = cli("run", "-s", _scenario(read), "--sut", SUT, "--audit-conf", audit, "-o", out, "--quiet")
        _refused(r, out, [f"{audit}:3: key '{read.key}'"])


FLAGS = [
    ("Server", "--target-qps", ["0", "-1", "1e-300", "1e300", "nan", "inf", "1e10"]),
    ("Offline", "--target-qps", ["1e-300", "1e300", "inf"]),
    ("SingleStream", "--expected-latency-ms", ["0", "1e-300", "1e300", "nan", "inf", "1e10"]),
    ("MultiStream", "--expected-latency-ms", ["1e300", "-2"]),
    ("Offline", "--duration-ms", ["-1", "9223372036854775807", "18446744073709551615", "1e3"]),
    ("Offline", "--max-duration-ms", ["-1", "9223372036854775808"]),
    ("Offline", "--min-queries", ["-1", "18446744073709551615", "9007199254740993"]),
    ("Offline", "--timeout-s", ["0", "-1", "nan", "inf", "1e300"]),
    ("Offline", "--drain-s", ["-1", "nan", "1e300", "inf"]),
]


@pytest.mark.parametrize(("scenario", "option", "values"), FLAGS, ids=[f"{f[1]}:{f[0]}" for f in FLAGS])
def test_every_numeric_option_is_refused_naming_it(cli, tmp_path, scenario, option, values):
    for k, value in enumerate(values):
        out = tmp_path / f"logs{k}"
        r = cli("run", "-s", scenario, "--sut", SUT, option, value, "-o", out, "--quiet")
        _refused(r, out, [option])


@pytest.mark.parametrize("index", ["64", "100000", "18446744073709551615"])
def test_an_index_past_the_qsl_is_refused_with_its_line(cli, tmp_path, index):
    conf = tmp_path / "user.conf"
    conf.write_text(f"*.*.performance_issue_same = 1\n*.*.performance_issue_same_index = {index}\n")
    out = tmp_path / "logs"
    r = cli("run", "-s", "Offline", "--sut", SUT, "--user-conf", conf, "-o", out, "--quiet")
    _refused(r, out, [f"{conf}:2: key 'performance_issue_same_index'", "loaded set of 64 samples", "0 to 63"])


def test_the_issue_examples(cli, tmp_path):
    cases = [
        ("Offline", "*.Offline.target_qps = 1e-300\n", "target_qps"),
        ("Server", "*.Server.target_qps = 1e-300\n", "target_qps"),
        ("SingleStream", "*.SingleStream.target_latency = 1e300\n", "target_latency"),
    ]
    for k, (scenario, text, key) in enumerate(cases):
        conf = tmp_path / f"u{k}.conf"
        conf.write_text(text)
        out = tmp_path / f"logs{k}"
        r = cli("run", "-s", scenario, "--sut", SUT, "--user-conf", conf, "-o", out, "--quiet")
        _refused(r, out, [f"{conf}:1: key '{key}'", "out of range"])


@pytest.mark.parametrize("rates", ["1e-300", "10,1e300", "nan", "1:1e12:x10"])
def test_sweep_rates_are_refused_before_the_first_point(cli, tmp_path, rates):
    out = tmp_path / "sweep"
    r = cli("sweep", "--rates", rates, "--sut", SUT, "-o", out, "--quiet")
    _refused(r, out, ["--rates"])
