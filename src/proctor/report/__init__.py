"""Reports people read: one self-contained HTML file (and PNGs) for inference runs and training results.

`build_report(paths)` reads the runs (`data`, `training`), `write_report` draws the figures
(`plots`, matplotlib, imported only then) and writes the HTML (`html`).
"""

from __future__ import annotations

from pathlib import Path

from proctor.report.collect import Report, build_report

REPORT_NAME = "report.html"


def write_report(rep: Report, out: Path, png_dir: Path | None = None, *, figures: bool = True) -> list[Path]:
    """Write `out` (HTML) and, with `png_dir`, every figure as a PNG; returns the files written.
    `figures=False`: the tables alone, with a line saying how to draw the figures (no matplotlib)."""
    from proctor.report import html
    from proctor.version import __version__

    return html.write(rep, out, png_dir, version=__version__, draw=figures)


def report_for_run(log_dir: Path, *, figures: bool = True) -> Path:
    """Write `<log_dir>/report.html` for the run whose logs are in `log_dir` (`proctor run`, `proctor demo`).
    A stopped run's report leaves its figures out (`figures=False`): drawing them takes seconds that
    the stop must not wait for; `proctor report` draws them later from the same logs."""
    out = log_dir / REPORT_NAME
    write_report(build_report([log_dir]), out, figures=figures)
    return out


__all__ = ["REPORT_NAME", "Report", "build_report", "report_for_run", "write_report"]
