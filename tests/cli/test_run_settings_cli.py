"""`proctor run` settings: refusals before anything starts (exit 2, one line), short-run marking,
user SUTs from a module or a file, --list-suts."""

from __future__ import annotations

import sys
import textwrap

import pytest

from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.logs.summary import SHORT_RUN_MARK
from proctor.loadgen.resolve import resolve_settings
from proctor.loadgen.types import Scenario

OFF = ["run", "--scenario", "Offline", "--quiet"]
SRV = ["run", "--scenario", "Server", "--quiet"]

# (args, user.conf text or None, words the one error line must contain)
REFUSED = [
    (SRV + ["--target-qps", "0"], None, ["--target-qps", "out of range", ">= 1e-06"]),
    (SRV + ["--target-qps", "-5"], None, ["--target-qps", "out of range"]),
    (SRV + ["--target-qps", "nan"], None, ["--target-qps", "nan"]),
    (OFF + ["--target-qps", "inf"], None, ["--target-qps", "inf"]),
    (["run", "--scenario", "SingleStream", "--expected-latency-ms", "-1"], None, ["--expected-latency-ms"]),
    (["run", "--scenario", "SingleStream", "--expected-latency-ms", "0"], None, ["--expected-latency-ms"]),
    (OFF + ["--duration-ms", "-1"], None, ["--duration-ms", ">= 0"]),
    (OFF + ["--max-duration-ms", "-1"], None, ["--max-duration-ms"]),
    (OFF + ["--min-queries", "-3"], None, ["--min-queries"]),
    (OFF + ["--duration-ms", "12345678901234567890"], None, ["--duration-ms", "<= 1e+12 ms"]),
    (SRV + ["--duration-ms", "900000000000", "--target-qps", "1000"], None, ["--duration-ms", "memory"]),
    (OFF + ["--min-queries", "100000000000000"], None, ["--min-queries", "memory"]),
    (OFF + ["--timeout-s", "nan"], None, ["--timeout-s"]),
    (OFF + ["--model", "resnet"], None, ["--model", "did you mean 'resnet50'"]),
    (OFF + ["--model", "zzzz"], None, ["--model", "unknown model"]),
    (["run", "--quiet"], None, ["--scenario"]),
    (SRV, "*.Server.target_qps = 0\n", ["user.conf:1", "target_qps", "out of range"]),
    (SRV, "*.Server.target_qps = -5\n", ["user.conf:1", "target_qps"]),
    (SRV, "*.Server.target_qps = nan\n", ["user.conf:1", "target_qps", "finite"]),
    (SRV, "*.Server.target_qps = inf\n", ["user.conf:1", "finite"]),
    (OFF, "*.Offline.target_qps = 0x1p99999\n", ["user.conf:1", "too large"]),
    (OFF, "*.Offline.min_duration = " + "9" * 5000 + "\n", ["user.conf:1", "min_duration", "too large"]),
    (OFF, "*.Offline.min_duration = -1\n", ["user.conf:1", "negative"]),
    (OFF, "\ufeff*.Offline.target_qps = 0\n", ["user.conf:1", "target_qps"]),  # BOM: line 1 is read
    (OFF, "resnt50.Offline.target_qps = 100\n", ["user.conf:1", "did you mean 'resnet50'"]),
    (OFF, "# ok\r\n*.Offline.target_qps = -1\r\n", ["user.conf:2", "target_qps"]),
    (SRV + ["--sut", "nosuch"], None, ["--sut", "unknown SUT"]),
    (SRV + ["--sut", "synthetc"], None, ["did you mean 'synthetic'"]),
    (SRV + ["--sut", "no_such_module.x:make"], None, ["--sut", "cannot import"]),
    (SRV + ["--sut", "nofile.py:make"], None, ["--sut", "no such file"]),
]


@pytest.mark.parametrize(
    ("args", "conf", "words"), REFUSED, ids=[" ".join(r[0][2:]) + (r[1] or "")[:30] for r in REFUSED]
)
def test_bad_settings_are_refused_before_anything_starts(cli, tmp_path, args, conf, words):
    out = tmp_path / "logs"
    extra = []
    if conf is not None:
        path = tmp_path / "user.conf"
        path.write_text(conf, encoding="utf-8", newline="")
        extra = ["--user-conf", str(path)]
    r = cli(*args, *extra, "--output", str(out))
    assert r.rc == 2, r.out + r.err
    assert "Traceback" not in r.err
    assert len(r.err.strip().splitlines()) == 1, r.err
    for word in words:
        assert word in r.err, (word, r.err)
    assert not out.exists()  # refused before anything started


def test_bom_user_conf_first_line_applies(tmp_path):
    conf = tmp_path / "user.conf"
    conf.write_bytes(b"\xef\xbb\xbf*.Offline.target_qps = 4321\r\n")
    s, _ = resolve_settings("resnet50", Scenario.OFFLINE, None, _confs(conf))
    assert s.offline_expected_qps == 4321.0


def _confs(path):
    from proctor.loadgen.resolve import Confs

    return Confs(user_conf=path)


def test_short_run_is_marked_in_the_logs(cli, tmp_path):
    r = cli(
        "run",
        "--scenario",
        "SingleStream",
        "--sut",
        "synthetic:service_us=1000,workers=1",
        "--duration-ms",
        "300",
        "--expected-latency-ms",
        "1",
        "--output",
        tmp_path,
        "--no-trace",
    )
    assert r.rc == 0, r.out + r.err
    assert "VALID for these settings; not a submission run: min_duration 0.3 s < 600 s" in r.out
    detail = read_detail(tmp_path / "mlperf_log_detail.txt")
    assert detail.require("proctor_short_run").startswith("min_duration 0.3 s < 600 s")
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    footer_at = summary.index("No errors encountered during test.")
    mark_at = summary.index(f"{SHORT_RUN_MARK} min_duration 0.3 s < 600 s")
    assert mark_at > footer_at
    assert "logs: " + str(tmp_path) in r.out  # under the table, in full


def test_an_explicit_duration_wins_over_quick(cli, tmp_path):
    """A verdict suggests "--duration-ms N": added to a --quick command, it is the duration run."""
    r = cli("run", "--scenario", "SingleStream", "--sut", "synthetic:service_us=1000,workers=1", "--quick",
            "--duration-ms", "300", "--expected-latency-ms", "1", "--output", tmp_path, "--no-trace")
    assert r.rc == 0, r.out + r.err
    assert read_detail(tmp_path / "mlperf_log_detail.txt").require("effective_min_duration_ms") == 300


def test_default_run_is_not_marked_short():
    resolved = resolve_settings("resnet50", "Server", None)
    assert resolved.settings.min_duration_ms == resolved.rules.min_duration_ms == 600_000
    assert resolved.short_run == ""


USER_SUT = textwrap.dedent(
    """
    from proctor.suts.synthetic import InMemoryQSL, SyntheticParams, SyntheticSUT

    class UserSUT(SyntheticSUT):
        name = "user-sut"

    def make(service_us="0", total="64"):
        '''A user's SUT: the synthetic one under another name.'''
        return UserSUT(SyntheticParams(service_us=float(service_us), workers=0)), InMemoryQSL(int(total), int(total))
    """
)


@pytest.mark.parametrize("form", ["file", "module", "package"])
def test_user_sut_from_a_file_or_a_module(cli, tmp_path, monkeypatch, form):
    (tmp_path / "my_user_sut.py").write_text(USER_SUT)
    (tmp_path / "userpkg").mkdir()
    (tmp_path / "userpkg" / "__init__.py").write_text("")
    (tmp_path / "userpkg" / "sut.py").write_text(USER_SUT)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("my_user_sut", "userpkg", "userpkg.sut"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    spec = {
        "file": f"{tmp_path / 'my_user_sut.py'}:make:total=32",
        "module": "my_user_sut:make:total=32",
        "package": "userpkg.sut:make:total=32",
    }[form]
    out = tmp_path / "logs"
    r = cli(
        "run",
        "--scenario",
        "Offline",
        "--sut",
        spec,
        "--duration-ms",
        "0",
        "--min-queries",
        "100",
        "--output",
        out,
        "--quiet",
    )
    assert r.rc == 0, r.out + r.err
    detail = read_detail(out / "mlperf_log_detail.txt")
    assert detail.require("qsl_reported_total_count") == 32
    assert detail.require("sut_name") == "user-sut"


def test_user_sut_with_an_unknown_parameter_names_the_known_ones(cli, tmp_path):
    (tmp_path / "u.py").write_text(USER_SUT)
    r = cli(
        "run",
        "--scenario",
        "Offline",
        "--sut",
        f"{tmp_path / 'u.py'}:make:speed=3",
        "--output",
        tmp_path / "o",
    )
    assert r.rc == 2 and "Traceback" not in r.err
    assert "speed" in r.err and "service_us, total" in r.err


def test_list_suts_shows_every_sut_with_parameters_and_defaults(cli):
    r = cli("run", "--list-suts")
    assert r.rc == 0, r.err
    assert "synthetic  (proctor.suts.synthetic:from_params)" in r.out
    assert "  service_us=100.0  service time per batch, microseconds" in r.out
    assert "  workers=2" in r.out and "  total=1024" in r.out
    assert "digits  (proctor.workloads.digits.sut:from_params)" in r.out
    assert "  precision=fp32" in r.out


@pytest.mark.official
def test_short_run_with_the_official_engine_is_marked_too(cli, tmp_path):
    pytest.importorskip("mlperf_loadgen")
    r = cli(
        "run", "--scenario", "SingleStream", "--sut", "synthetic:service_us=1000,workers=1",
        "--duration-ms", "300", "--expected-latency-ms", "1", "--engine", "official",
        "--output", tmp_path, "--no-trace",
    )  # fmt: skip
    assert r.rc == 0, r.out + r.err
    assert "VALID for these settings; not a submission run: min_duration 0.3 s < 600 s" in r.out
    summary = (tmp_path / "mlperf_log_summary.txt").read_text()
    assert summary.rstrip().endswith(f"{SHORT_RUN_MARK} min_duration 0.3 s < 600 s")
    assert read_detail(tmp_path / "mlperf_log_detail.txt").require("proctor_short_run").startswith("min_duration")


@pytest.mark.parametrize("under", [False, True])
def test_output_that_is_a_file_is_refused(cli, tmp_path, under):
    a_file = tmp_path / "afile"
    a_file.write_text("x")
    target = a_file / "sub" if under else a_file
    r = cli(*OFF, "--duration-ms", "10", "--output", str(target))
    assert r.rc == 2 and "Traceback" not in r.err
    assert len(r.err.strip().splitlines()) == 1
    assert "--output" in r.err and "is a file" in r.err and "give a folder" in r.err
    assert a_file.read_text() == "x"
