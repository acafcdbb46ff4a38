"""The public API: every exported name resolves, and the README's Python use runs as written."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

import proctor


def test_every_exported_name_resolves():
    for name in proctor.__all__:
        assert getattr(proctor, name) is not None, name


def test_import_is_cheap():
    """`import proctor` (what the CLI does first) must not pull in the engine or numpy."""
    code = "import sys, proctor; print('numpy' in sys.modules, 'proctor.loadgen.engine' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


class EchoSUT:
    """Completes each sample at once with its index as the response."""

    name = "echo"

    def issue_query(self, samples):
        proctor.query_samples_complete(
            [proctor.QuerySampleResponse(s.id, np.int64(s.index).tobytes()) for s in samples]
        )

    def flush_queries(self):
        pass


def test_readme_python_use(tmp_path):
    from proctor.suts.synthetic import InMemoryQSL

    settings = proctor.TestSettings(
        scenario=proctor.Scenario.OFFLINE, mode=proctor.TestMode.PERFORMANCE_ONLY, min_duration_ms=20,
        min_query_count=1, offline_expected_qps=1000.0,
    )
    logs = proctor.LogSettings(log_output=proctor.LogOutputSettings(outdir=str(tmp_path)))
    outcome = proctor.run_test(EchoSUT(), InMemoryQSL(64, 64), settings, logs)
    assert outcome.result is not None
    assert outcome.result.sample_count >= 22  # 1.1 x 20 ms x 1000/s
    assert (tmp_path / "mlperf_log_summary.txt").is_file()
