"""Issue 23, journey 7: a run leaves compact output, and the report reads it or the trace alike.

By default `proctor run` writes the per-sample data the report needs to mlperf_log_samples.bin (at
most 32 bytes per sample) and no trace; `--trace` adds the official Chrome trace. A report built
from the samples file and one built from the trace of the same run draw the same figures.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from report_runs import make_llm_run

from proctor.loadgen.logs.reader import read_detail
from proctor.loadgen.logs.samples import read_samples
from proctor.report import plots
from proctor.report.data import SAMPLES, TRACE, read_run

SRC = Path(__file__).resolve().parents[2] / "src"
MAX_BYTES_PER_SAMPLE = 32


def _run(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run(
        [sys.executable, "-m", "proctor", "run", "-s", "Offline", "--sut", "synthetic:service_us=0,workers=0,batch=4096",
         "--duration-ms", "0", "--min-queries", "20000", "-o", str(out), "-q", *extra],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )


def _without(src: Path, dst: Path, name: str) -> Path:
    """A copy of a run folder without one file (and without its report)."""
    dst.mkdir()
    for f in src.iterdir():
        if f.name not in (name, "report.html"):
            shutil.copy(f, dst / f.name)
    return dst


def _same_samples(a: Path, b: Path) -> None:
    ra, rb = read_run(a), read_run(b)
    sa, sb = ra.samples, rb.samples
    assert sa is not None and sb is not None
    for name in ("issue_s", "latency_ns", "scheduled_ns", "first_token_ns", "has_first", "n_tokens"):
        va, vb = getattr(sa, name), getattr(sb, name)
        assert (va is None) == (vb is None), name
        if va is not None:
            assert np.array_equal(va, vb), name
    rb.name = ra.name  # figure titles name the run
    fa, fb = plots.inference_figures(ra), plots.inference_figures(rb)
    assert fa.keys() == fb.keys() and len(fa) >= 3
    assert fa == fb  # the same PNG bytes


def test_default_run_writes_the_samples_file_and_no_trace(tmp_path: Path) -> None:
    out = tmp_path / "default"
    r = _run(out)
    assert r.returncode == 0, r.stdout + r.stderr
    names = sorted(p.name for p in out.iterdir())
    assert SAMPLES in names and TRACE not in names and "report.html" in names
    n = read_detail(out / "mlperf_log_detail.txt").require("effective_samples_per_query")
    assert n == 20000
    cols = read_samples(out / SAMPLES)
    assert cols.n == n and np.array_equal(cols.seq, np.arange(n))
    assert (out / SAMPLES).stat().st_size / n <= MAX_BYTES_PER_SAMPLE
    html = (out / "report.html").read_text()
    assert "per-sample latencies are not in these logs" not in html  # the report drew from the samples file


def test_trace_flag_adds_the_trace_and_both_give_the_same_report(tmp_path: Path) -> None:
    out = tmp_path / "traced"
    r = _run(out, "--trace")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (out / SAMPLES).is_file() and (out / TRACE).stat().st_size > 290 * 20000 * 0.5
    trace_bytes = (out / TRACE).stat().st_size
    assert (out / SAMPLES).stat().st_size * 20 < trace_bytes  # compact: a small fraction of the trace
    only_trace = _without(out, tmp_path / "only_trace", SAMPLES)
    only_samples = _without(out, tmp_path / "only_samples", TRACE)
    _same_samples(only_samples, only_trace)


@pytest.fixture(scope="module")
def llm_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d, _ = make_llm_run(tmp_path_factory.mktemp("llm") / "llm", queries=400)
    return d


def test_token_runs_fit_32_bytes_per_sample_and_match_the_trace(llm_run: Path, tmp_path: Path) -> None:
    cols = read_samples(llm_run / SAMPLES)
    assert cols.n >= 400 and cols.n_tokens is not None and cols.has_first is not None and cols.has_first.all()
    assert (llm_run / SAMPLES).stat().st_size / cols.n <= MAX_BYTES_PER_SAMPLE
    _same_samples(_without(llm_run, tmp_path / "s", TRACE), _without(llm_run, tmp_path / "t", SAMPLES))


def test_a_damaged_samples_file_falls_back_to_the_trace_with_a_note(llm_run: Path, tmp_path: Path) -> None:
    d = _without(llm_run, tmp_path / "damaged", "none")
    data = (d / SAMPLES).read_bytes()
    (d / SAMPLES).write_bytes(data[:-3])
    run = read_run(d)
    assert run.samples is not None and run.samples.n_tokens is not None  # from the trace
    assert any(f"{SAMPLES} not read" in n and "truncated" in n for n in run.notes)
    (d / TRACE).unlink()
    run = read_run(d)
    assert run.samples is None
    assert any("per-sample latencies are not in these logs" in n for n in run.notes)
