"""Logs written by the official LoadGen (mlperf_loadgen 6.0.17) go through the checker like proctor's.

One short SingleStream run (and its accuracy run) of an instant Python SUT, with the embedded
mlperf.conf plus a user.conf that shortens the duration; the edge submission infers MultiStream and
Offline from it by copying, as the rules allow. The checker must reject exactly the short duration,
find the official seeds correct, and report LoadGen's own numbers.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from checks_corpus import complete_results, summary_metric

from proctor.checks.submission import SYSTEM_FIELDS, check_submission
from proctor.loadgen.logs import read_detail

_RUN = r"""
import sys, numpy as np, mlperf_loadgen as lg
outdir, scenario, mode, user_conf = sys.argv[1:5]
s = lg.TestSettings()
assert s.FromConfig(user_conf, "resnet50", scenario, 1) == 0
s.scenario = getattr(lg.TestScenario, scenario)
s.mode = getattr(lg.TestMode, mode)
keep = []
def issue(samples):
    bufs = [np.array([q.index], dtype="<i8") for q in samples]
    lg.QuerySamplesComplete([lg.QuerySampleResponse(q.id, b.__array_interface__["data"][0], 8)
                             for q, b in zip(samples, bufs)])
sut = lg.ConstructSUT(issue, lambda: None)
qsl = lg.ConstructQSL(50000, 1024, lambda idx: None, lambda idx: None)
log = lg.LogSettings(); log.log_output.outdir = outdir; log.enable_trace = False
lg.StartTestWithLogSettings(sut, qsl, s, log, "")
lg.DestroyQSL(qsl); lg.DestroySUT(sut)
"""
USER_CONF = "*.*.min_duration = 100\nresnet50.SingleStream.target_latency = 0.001\n"


def _official(outdir: Path, mode: str, user_conf: Path) -> None:
    outdir.mkdir(parents=True)
    subprocess.run(
        [sys.executable, "-c", _RUN, str(outdir), "SingleStream", mode, str(user_conf)],
        check=True,
        timeout=120,
        capture_output=True,
    )


@pytest.mark.official
def test_official_loadgen_logs(tmp_path: Path) -> None:
    pytest.importorskip("mlperf_loadgen")
    user_conf = tmp_path / "user.conf"
    user_conf.write_text(USER_CONF)
    sub = tmp_path / "closed" / "acme"
    (sub / "systems").mkdir(parents=True)
    desc = {k: "x" for k in SYSTEM_FIELDS} | {
        "division": "closed",
        "submitter": "acme",
        "status": "rdi",
        "system_type": "edge",
    }
    (sub / "systems" / "box.json").write_bytes(orjson.dumps(desc))
    ss = sub / "results" / "box" / "resnet" / "SingleStream"
    _official(ss / "performance" / "run_1", "PerformanceOnly", user_conf)
    _official(ss / "accuracy", "AccuracyOnly", user_conf)
    entries = orjson.loads((ss / "accuracy" / "mlperf_log_accuracy.json").read_bytes())
    good = sum(int.from_bytes(base64.b16decode(e["data"]), "little") == e["qsl_idx"] for e in entries)
    (ss / "accuracy" / "accuracy.txt").write_text(f"accuracy={100 * good / len(entries):.3f}%, good={good}\n")
    for inferred in ("MultiStream", "Offline"):
        shutil.copytree(ss, ss.parent / inferred)

    complete_results(tmp_path)
    report = check_submission(tmp_path, "v6.1")
    failed = [f for f in report.findings if f.failed]
    errors = sorted((f.rule, f.key, Path(f.path).parts[-4]) for f in failed if "TEST0" not in f.path)
    assert errors == [
        ("min_duration", "effective_min_duration_ms", s) for s in ("MultiStream", "Offline", "SingleStream")
    ]
    # the audits (copies of the short run) are short too, as the official checker also says
    audits = sorted((f.rule, Path(f.path).parts[-5], Path(f.path).parts[-4]) for f in failed if "TEST0" in f.path)
    assert audits == [("min_duration", s, t) for s in ("MultiStream", "Offline", "SingleStream") for t in ("TEST01", "TEST04")]
    # logs of the official LoadGen release (6.0.17) are submittable in its round: no LoadGen finding
    assert not [f for f in report.findings if f.rule.startswith(("unofficial_loadgen", "loadgen_"))]
    assert report.unofficial_logs == 0
    # ... and re-verifying the audits from these logs agrees with their verify files
    assert not [f for f in report.findings if f.rule == "compliance_reverify"]
    # another round's LoadGen series (v4.1: 4.0 or 4.1) is named, as a warning: it is still a tagged
    # approved release, and a published v5.1 result used LoadGen 4.1
    old = check_submission(tmp_path, "v4.1")
    details = {str(p) for p in tmp_path.rglob("mlperf_log_detail.txt")}
    assert {f.path for f in old.findings if f.rule == "loadgen_release" and not f.failed} == details
    rows = {r.scenario: r for r in report.results}
    log = read_detail(ss / "performance/run_1/mlperf_log_detail.txt")
    estimate = summary_metric(
        ss / "performance/run_1/mlperf_log_summary.txt", r"Early stopping 90\.0th percentile estimate"
    )
    assert rows["SingleStream"].value == estimate / 1e6
    assert rows["MultiStream"].inferred_from == "SingleStream"
    estimate99 = summary_metric(
        ss / "performance/run_1/mlperf_log_summary.txt", r"Early stopping 99\.0th percentile estimate"
    )
    assert rows["MultiStream"].value == pytest.approx(8 * estimate99 / 1e6)
    assert rows["Offline"].value == pytest.approx(1000 / (log.get("result_mean_latency_ns") / 1e6))
