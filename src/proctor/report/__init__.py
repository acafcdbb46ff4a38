"""Reports people read: one self-contained HTML file (and PNGs) for inference runs and training results.

`build_report(paths)` reads the runs (`data`, `training`), `write_report` draws the figures
(`plots`, matplotlib, imported only then) and writes the HTML (`html`).
"""

from __future__ import annotations

from pathlib import Path

from proctor.report.collect import Report, build_report

REPORT_NAME = "report.html"


def write_report(rep: Report, out: Path, png_dir: Path | None = None) -> list[Path]:
    """Write `out` (HTML) and, with `png_dir`, every figure as a PNG; returns the files written."""
    from proctor.report import html
    from proctor.version import __version__

    return html.write(rep, out, png_dir, version=__version__)


def report_for_run(log_dir: Path) -> Path:
    """Write `<log_dir>/report.html` for the run whose logs are in `log_dir` (`proctor run`, `proctor demo`)."""
    out = log_dir / REPORT_NAME
    write_report(build_report([log_dir]), out)
    return out


__all__ = ["REPORT_NAME", "Report", "build_report", "report_for_run", "write_report"]
