"""The whole demo: the inference part, then the training part, into one emptied folder; the report
(demo_report.json, report.html) at the end, or what was measured when Ctrl-C stopped it."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from proctor.app.demo.inference import run_inference
from proctor.app.demo.interrupt import StopFlag, interruptible
from proctor.app.demo.options import DemoOptions, Echo, quiet
from proctor.app.demo.table import DemoInterrupted, DemoReport
from proctor.app.demo.training import run_training
from proctor.loadgen import output_lock

REPORT_JSON = "demo_report.json"


def run_demo(opts: DemoOptions, echo: Echo | None = None) -> DemoReport:
    """Run the whole round into `opts.output` (emptied first, owned while the demo runs: a second
    demo or run into it is refused, loadgen/output_lock.py) and return its table.

    Ctrl-C or SIGTERM (in the main thread) raises DemoInterrupted within a second, after the report
    of what was measured so far is written (`interrupted: true`)."""
    with output_lock.owned(opts.output, "proctor demo") as out:
        for old in sorted(out.iterdir()):  # emptied, but for the lock this process now holds
            if old.name == output_lock.LOCK_NAME:
                continue
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old)
            else:
                old.unlink()
        return _run_demo(opts, echo)


def _run_demo(opts: DemoOptions, echo: Echo | None) -> DemoReport:
    from proctor.submission.describe import write_json

    say = echo or quiet
    out = opts.output
    work = out / "work"
    report = DemoReport(out, opts.mode)
    stop = StopFlag()
    t0 = time.perf_counter()
    try:
        with interruptible(stop):
            if opts.inference:
                run_inference(opts, out / "inference", work, say, report, stop)
            if opts.training:
                stop.check()
                run_training(opts, out / "training", work, say, report, stop)
            stop.check()
    except KeyboardInterrupt as exc:
        stop.event.set()
        report.interrupted = True
        report.timings_s["total"] = time.perf_counter() - t0
        write_json(out / REPORT_JSON, report.to_dict())
        raise DemoInterrupted(out, report) from exc
    report.timings_s["total"] = time.perf_counter() - t0
    write_json(out / REPORT_JSON, report.to_dict())
    _html_report(out, say)
    return report


def _html_report(out: Path, say: Echo) -> None:
    """`<output>/report.html`: plots and verdicts of the demo's inference and training runs (issue 15)."""
    from proctor.errors import ProctorError
    from proctor.report import build_report, write_report

    roots = [p for p in (out / "inference", out / "training") if p.is_dir()]
    try:
        if roots:
            write_report(build_report(roots), out / "report.html")
    except (ProctorError, OSError) as exc:
        say(f"report.html not written: {exc}")


__all__ = ["REPORT_JSON", "run_demo"]
