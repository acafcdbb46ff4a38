"""A real browser opens a report: headless Chromium loads it, runs its script, and draws it.

Skipped where no Chromium is installed (Debian package `chromium`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from report_html import parse
from report_runs import CORPUS, make_llm_run, make_run

from proctor.loadgen.types import Scenario
from proctor.report import build_report, write_report

BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no chromium installed")


def _chromium(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home)}  # a profile of its own, nothing shared with a user's
    return subprocess.run(
        [str(BROWSER), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--allow-file-access-from-files", "--enable-logging=stderr", "--v=0", *args],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )


def test_report_loads_in_chromium_without_script_errors(tmp_path: Path) -> None:
    runs = [make_run(tmp_path / "runs" / f"qps{q}", Scenario.SERVER, q, queries=200) for q in (1000.0, 3000.0)]
    paths: list[Path] = [tmp_path / "runs"]
    rgat = CORPUS / "training" / "v5.1" / "ASUSTeK" / "ESC_NB8_E11" / "rgat"
    if rgat.is_dir():
        paths.append(rgat)
    out = tmp_path / "report.html"
    write_report(build_report(paths), out)
    r = _chromium("--dump-dom", out.as_uri(), home=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    dom = parse(r.stdout)
    assert dom.body.get("data-loaded") == "1"  # the inline script ran to its end
    assert "Uncaught" not in r.stderr and "SyntaxError" not in r.stderr
    assert {"title", "overview", "comparison", "comparison-table", "fig-sweep", "run-0", "run-0-rules",
            "run-0-latency_cdf", "run-1-rate_over_time"} <= dom.ids
    assert len(runs) == 2 and dom.verdicts["run-0"] in ("VALID", "INVALID")
    if rgat.is_dir():
        assert {"training-0", "training-0-rcp", "training-0-eval_curves", "training-0-time_to_train"} <= dom.ids
    shot = tmp_path / "shot.png"
    r = _chromium(f"--screenshot={shot}", "--window-size=1280,2400", "--hide-scrollbars", out.as_uri(), home=tmp_path)
    assert r.returncode == 0 and shot.read_bytes()[:4] == b"\x89PNG"
    keep = os.environ.get("PROCTOR_REPORT_SCREENSHOT")  # a person can look at it
    if keep:
        shutil.copy(shot, keep)


def test_llm_server_report_in_chromium_has_the_trace_figures(tmp_path: Path) -> None:
    d, _ = make_llm_run(tmp_path / "llm")
    out = tmp_path / "report.html"
    write_report(build_report([d]), out)
    r = _chromium("--dump-dom", out.as_uri(), home=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    dom = parse(r.stdout)
    assert dom.body.get("data-loaded") == "1"
    assert "Uncaught" not in r.stderr and "SyntaxError" not in r.stderr
    assert {"run-0", "run-0-scheduled_latency", "run-0-lateness_over_time", "run-0-ttft", "run-0-tpot",
            "run-0-tokens_over_time", "run-0-latency_cdf"} <= dom.ids
    assert dom.value("run-0", "trace_ttft_p99_ns") is not None
    shot = tmp_path / "shot.png"
    r = _chromium(f"--screenshot={shot}", "--window-size=1280,3600", "--hide-scrollbars", out.as_uri(), home=tmp_path)
    assert r.returncode == 0 and shot.read_bytes()[:4] == b"\x89PNG"
    keep = os.environ.get("PROCTOR_REPORT_LLM_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)
