"""Commands: `proctor check submission`, `proctor bandwidth`, `proctor summarize` (parse, call, print).

Bad input (a missing or empty folder, a folder at the wrong level, an unknown benchmark, a
throughput or dtype size that cannot be) is one error line and exit 2; a checked tree that fails
the rules is exit 1 (README, "Exit status").
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from proctor.cli.apps import app, check_app, examples
from proctor.cli.output import (
    EXIT_INVALID,
    EXIT_OK,
    AllowUnofficialOpt,
    RoundOpt,
    SkipExtraAccuracyFilesOpt,
    check_round,
    console,
    fail,
    print_findings,
    print_table,
    table,
)
from proctor.rules.rounds import CURRENT_ROUND

if TYPE_CHECKING:
    from proctor.checks.submission import ResultRow

MAX_DTYPE_SIZE = 8  # bytes: the widest element type the bandwidth appendix has in mind is 64 bits
LEVEL = (
    "a submission root (holding closed/open/network) or one <division>/<submitter> folder "
    "(holding systems/ and results/)"
)


def _check_directory(directory: Path) -> None:
    if not directory.is_dir():
        fail(f"{directory}: not a folder; give {LEVEL}")


def _results_table(rows: list[ResultRow]) -> None:
    out = console()
    tbl = table("system", "benchmark", "scenario", "metric", "value", "units", "valid", labels=(0, 1, 3))
    for r in rows:
        tbl.add_row(
            r.system,
            r.benchmark,
            r.scenario,
            r.metric,
            "" if r.value is None else f"{r.value:.6g}",
            r.units,
            "yes" if r.valid else "NO",
        )
        if r.power is not None:  # the official summary's power row
            tbl.add_row(
                r.system, r.benchmark, r.scenario, "power", f"{r.power.metric:.6g}", r.power.units, ""
            )
    print_table(out, tbl)


@check_app.command(
    "submission",
    epilog=examples(
        "proctor check submission SUBMISSION",
        "proctor check submission closed/ACME --round v5.1 --json",
        "proctor check submission SUBMISSION --allow-unofficial-loadgen",
        "proctor check submission SUBMISSION --round v5.1 --skip-extra-accuracy-files-check",
    ),
)
def submission_cmd(
    directory: Annotated[
        Path,
        typer.Argument(
            metavar="DIR",
            help="Submission root (holding closed/open/network) or one <division>/<submitter> folder."
        ),
    ],
    round_: RoundOpt = CURRENT_ROUND,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print one JSON document (verdict, findings, results; schema: proctor.schemas)."
    )] = False,
    allow_unofficial: AllowUnofficialOpt = False,
    skip_extra_accuracy_files: SkipExtraAccuracyFilesOpt = False,
) -> None:
    """Check a submission tree against the inference rules; exit 0 if valid, 1 if not."""
    import orjson

    from proctor.checks.loadgen_origin import unofficial_verdict
    from proctor.checks.submission import check_submission

    check_round(round_)
    _check_directory(directory)
    report = check_submission(
        directory, round_, allow_unofficial_loadgen=allow_unofficial, skip_extra_accuracy_files=skip_extra_accuracy_files
    )
    verdict = "INVALID" if not report.valid else "VALID" if report.submittable else "VALID (development only)"
    if as_json:
        doc = {"kind": "proctor.check.submission", "version": 1, "verdict": verdict, **report.to_dict()}
        sys.stdout.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        out = console()
        print_findings(out, report.findings, indent="")
        _results_table(report.results)
        n_err = sum(f.failed for f in report.findings)
        out.print(
            f"{verdict}: {len(report.results)} result(s), {n_err} error(s), "
            f"{len(report.findings) - n_err} other finding(s)",
            markup=False,
        )
        if report.unofficial_logs:
            out.print(unofficial_verdict(report.unofficial_logs, allow_unofficial), markup=False, soft_wrap=True)
    raise typer.Exit(EXIT_OK if report.valid else EXIT_INVALID)


def _bandwidth_inputs(throughput: float, dtype_size: int) -> None:
    if not math.isfinite(throughput) or throughput <= 0:
        fail(f"--throughput {throughput}: give the achieved samples per second, a finite number > 0")
    if not 0 < dtype_size <= MAX_DTYPE_SIZE:
        fail(f"--dtype-size {dtype_size}: give the bytes per element, 1 to {MAX_DTYPE_SIZE} (64 bits)")


@app.command(
    "bandwidth",
    epilog=examples(
        "proctor bandwidth dlrm-v3 --throughput 1000 --dtype-size 1",
        "proctor bandwidth resnet50 --throughput 50000 --dtype-size 1 --json",
    ),
)
def bandwidth_cmd(
    benchmark: Annotated[
        str, typer.Argument(metavar="BENCHMARK", help="Benchmark name (mlperf.conf or rules spelling).")
    ],
    throughput: Annotated[
        float, typer.Option("--throughput", metavar="SAMPLES_PER_S", help="Achieved samples per second.")
    ],
    dtype_size: Annotated[
        int, typer.Option(
            "--dtype-size", metavar="BYTES", help=f"Bytes per input/output element (1 to {MAX_DTYPE_SIZE})."
        )
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Minimum ingress and egress bandwidth (bytes/s) from the rules' datacenter bandwidth appendix."""
    import orjson

    from proctor.checks.bandwidth import minimum_bandwidth
    from proctor.rules.inference import resolve

    _bandwidth_inputs(throughput, dtype_size)
    try:
        req = minimum_bandwidth(resolve(benchmark).benchmark, throughput, dtype_size)
    except (KeyError, ValueError) as exc:
        fail(str(exc.args[0] if exc.args else exc))
    if as_json:
        sys.stdout.write(orjson.dumps(req.to_dict(), option=orjson.OPT_INDENT_2).decode() + "\n")
        return
    out = console()
    out.print(f"{req.benchmark} at {req.throughput:g} samples/s, dtype size {req.dtype_size} B", markup=False)
    out.print(f"  ingress: {req.ingress_bytes_per_s:.6g} bytes/s  ({req.ingress_formula})", markup=False)
    out.print(f"  egress:  {req.egress_bytes_per_s:.6g} bytes/s  ({req.egress_formula})", markup=False)
    for note in req.notes:
        out.print(f"  note: {note}", markup=False)


@app.command(
    "summarize",
    epilog=examples(
        "proctor summarize SUBMISSION",
        "proctor summarize SUBMISSION --csv > summary.csv",
        "proctor summarize closed/ACME --json",
    ),
)
def summarize_cmd(
    directory: Annotated[
        Path, typer.Argument(metavar="DIR", help="Submission root or <division>/<submitter> folder.")
    ],
    as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    round_: RoundOpt = CURRENT_ROUND,
) -> None:
    """One row per system, benchmark and scenario with the metric the rules name and its units."""
    from proctor.checks.summarize import summarize, to_csv, to_json

    check_round(round_)
    _check_directory(directory)
    rows = summarize(directory, round_)
    if not rows:
        fail(f"{directory}: no results found; give {LEVEL}, with results/<system>/<benchmark>/<scenario>")
    if as_json:
        sys.stdout.write(to_json(rows).decode() + "\n")
    elif as_csv:
        sys.stdout.write(to_csv(rows))
    else:
        _results_table(rows)
