"""`proctor audit TEST04 --engine official`: the official LoadGen (mlperf_loadgen, the test extra)
runs the reference and the audit run on the synthetic SUT, with TEST04's audit.config applied, and
proctor verifies them.

The runs are real-clock and short, so the PASS/FAIL of the performance comparison depends on
timing: the test checks that the verdict is the one the two summaries' numbers give, not which.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from proctor.audits.verify import PERF_THRESHOLD
from proctor.loadgen.logs import read_detail

pytestmark = pytest.mark.official


def _samples_per_second(summary: Path) -> str:
    m = re.search(r"^Samples per second: (\S+)$", summary.read_text(), re.M)
    assert m, summary
    return m.group(1)


def test_test04_on_the_official_engine(cli, tmp_path: Path) -> None:
    pytest.importorskip("mlperf_loadgen")
    r = cli("audit", "TEST04", "--engine", "official", "--sut", "synthetic:service_us=200,workers=2",
            "-s", "Offline", "--duration-ms", "300", "--target-qps", "2000", "--no-trace", "-o", tmp_path)  # fmt: skip
    assert "Traceback" not in r.err and r.rc in (0, 1), r.out + r.err
    run = tmp_path / "audit_runs/resnet50/Offline/TEST04"
    detail = read_detail(run / "mlperf_log_detail.txt")
    assert not str(detail.get("loadgen_version")).startswith("proctor")  # the official LoadGen wrote it
    assert detail.get("effective_performance_issue_same") is True
    assert detail.get("effective_performance_issue_same_index") == 3
    assert detail.get("effective_performance_issue_unique") is False
    res = tmp_path / "results/proctor/resnet50/Offline"
    ref_ref = read_detail(res / "performance/run_1/mlperf_log_detail.txt")
    assert ref_ref.get("effective_performance_issue_same") is False  # the reference is a plain run
    ref = _samples_per_second(res / "performance/run_1/mlperf_log_summary.txt")
    test = _samples_per_second(res / "TEST04/performance/run_1/mlperf_log_summary.txt")
    text = (res / "TEST04/verify_performance.txt").read_text()
    assert f"reference score = {ref}\n" in text and f"test score = {test}\n" in text
    passed = float(test) < float(ref) * (1 + PERF_THRESHOLD)
    assert ("TEST PASS" in text) == passed and r.rc == (0 if passed else 1)
    assert (res / "TEST04/performance/run_1/mlperf_log_detail.txt").read_bytes() == (
        run / "mlperf_log_detail.txt"
    ).read_bytes()
