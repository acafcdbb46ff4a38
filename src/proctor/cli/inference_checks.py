"""Commands: `proctor check submission`, `proctor bandwidth`, `proctor summarize` (parse, call, print;
the two tree commands' bodies are cli/tree_commands.py's, which the fast path calls too).

Bad input (a missing or empty folder, a folder at the wrong level, an unknown benchmark, a
throughput or dtype size that cannot be) is one error line and exit 2; a checked tree that fails
the rules is exit 1 (README, "Exit status").
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Annotated

import typer

from proctor.cli.apps import app, check_app, examples
from proctor.cli.output import console, fail
from proctor.cli.shared_options import AllowUnofficialOpt, RoundOpt, SkipExtraAccuracyFilesOpt
from proctor.cli.tree_commands import check_submission_command, summarize_command
from proctor.rules.rounds import CURRENT_ROUND

MAX_DTYPE_SIZE = 8  # bytes: the widest element type the bandwidth appendix has in mind is 64 bits


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
    raise typer.Exit(
        check_submission_command(directory, round_, as_json, allow_unofficial, skip_extra_accuracy_files)
    )


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
    raise typer.Exit(summarize_command(directory, as_csv, as_json, round_))
