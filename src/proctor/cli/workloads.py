"""`proctor demo`, `proctor training train` and `proctor training reference-rcps`: the reference workloads.

The commands only parse options and call the workload modules (`proctor.workloads`) or, for the
demo, the application layer (`proctor.app.demo`); the work and its checks live there.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from proctor.cli.apps import app, examples, training_app
from proctor.cli.output import EXIT_INVALID, EXIT_OK, console, fail, interrupted, print_table
from proctor.errors import ProctorError, RunError


def _int_list(text: str) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise typer.BadParameter(f"expected comma-separated integers, got {text!r}") from exc
    if not values or any(v <= 0 for v in values):
        raise typer.BadParameter(f"expected positive integers, got {text!r}")
    return values


@app.command(
    "demo",
    epilog=examples(
        "proctor demo",
        "proctor demo --quick -o demo",
        "proctor demo --full --json",
    ),
)
def demo_cmd(
    output: Annotated[
        Path, typer.Option("--output", "-o", metavar="DIR", help="folder for every log, check and table")
    ] = Path("proctor-demo"),
    full: Annotated[
        bool,
        typer.Option(
            "--full", help="the rules' minimum durations (10 min per performance run): every check passes"
        ),
    ] = False,
    quick: Annotated[bool, typer.Option("--quick", help="a much shorter demo (tests, smoke checks)")] = False,
    training_runs: Annotated[
        int | None, typer.Option(metavar="N", help="training runs (default: the benchmark's N)")
    ] = None,
    backend: Annotated[
        str, typer.Option(metavar="BACKEND", help="digits_train backend: sklearn or torch")
    ] = "sklearn",
    json_out: Annotated[bool, typer.Option("--json", help="print the final table as JSON")] = False,
) -> None:
    """One benchmark round on the reference workloads: inference digits (Offline, Server, SingleStream
    and accuracy), the submission checker, digits_train runs with their compliance, seed, RCP checks and
    olympic score; ends with one table of every result, its validity and why.

    Exit status: 0 everything as expected, 1 not, 2 bad options, 130 interrupted (Ctrl-C)."""
    from proctor.app.demo import (
        DemoInterrupted,
        DemoOptions,
        closing_lines,
        output_paths,
        render_table,
        run_demo,
        why_notes,
    )

    if full and quick:
        fail("--full and --quick exclude each other; pick one")
    if backend not in ("sklearn", "torch"):
        fail(f"--backend: unknown digits_train backend {backend!r}; use sklearn or torch")
    if training_runs is not None and training_runs < 3:
        fail(f"--training-runs: {training_runs} is too few for an olympic score; give 3 or more")
    if output.exists() and not output.is_dir():
        fail(f"--output {output}: exists and is not a folder; give a folder (it is emptied first)")
    out = console()
    try:
        report = run_demo(
            DemoOptions(output=output, full=full, quick=quick, training_runs=training_runs, backend=backend),
            echo=None if json_out else out.print,
        )
    except DemoInterrupted as exc:
        if json_out:  # what was measured before the stop: the partial result
            import orjson

            typer.echo(orjson.dumps({**exc.report.to_dict(), "incomplete": True}, default=str).decode())
        interrupted(f"demo interrupted; partial output (logs marked incomplete) in {exc.output}", exc)
    except RunError as exc:
        fail(str(exc), EXIT_INVALID)
    except ProctorError as exc:
        fail(str(exc))
    if json_out:
        import orjson

        typer.echo(orjson.dumps(report.to_dict(), default=str).decode())
    else:
        out.print()
        print_table(out, render_table(report, out.width), output_paths(report))
        for k, why in why_notes(report, out.width):
            out.print(f"[{k}] {why}", markup=False, soft_wrap=False)
        for line in closing_lines(report):
            out.print(line, markup=False)
    raise typer.Exit(EXIT_OK if report.as_expected else EXIT_INVALID)


@training_app.command(
    "train",
    epilog=examples(
        "proctor training train -o pkg/results/sys/digits_train",
        "proctor training train -o bench --runs 5 --batch-size 128 --base-seed 3",
    ),
)
def train_cmd(
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", metavar="DIR", help="benchmark folder: result_<i>.txt are written here"
        ),
    ] = None,
    # the old form, the folder as a positional DIR, kept for scripts
    output_arg: Annotated[
        Path | None, typer.Argument(hidden=True, metavar="DIR", help="old form of -o/--output DIR")
    ] = None,
    runs: Annotated[
        int | None, typer.Option(metavar="N", help="number of runs (default: the benchmark's N)")
    ] = None,
    batch_size: Annotated[int | None, typer.Option(metavar="N", help="global batch size")] = None,
    backend: Annotated[str, typer.Option(metavar="BACKEND", help="sklearn (default) or torch")] = "sklearn",
    nproc: Annotated[
        int, typer.Option(metavar="N", help="processes per run; >1 runs torch DDP under torchrun (gloo)")
    ] = 1,
    base_seed: Annotated[
        int, typer.Option(metavar="SEED", help="the seeds of the runs are drawn from it")
    ] = 1,
    division: Annotated[str, typer.Option(metavar="DIVISION", help="closed or open")] = "closed",
    benchmark: Annotated[str, typer.Option(metavar="NAME", help="reference workload")] = "digits_train",
) -> None:
    """Run N training runs of a reference workload into a results folder (results/<system>/<benchmark>)."""
    from proctor.workloads.digits_train import BENCHMARK, DEFAULT_BATCH_SIZE, RUNS_PER_SUBMISSION
    from proctor.workloads.digits_train.train import run_seeds, train_run

    if benchmark != BENCHMARK:
        raise typer.BadParameter(f"unknown reference workload {benchmark!r}; known: {BENCHMARK}")
    if output is not None and output_arg is not None:
        fail(f"give the benchmark folder once: -o/--output {output} or {output_arg}, not both")
    output = output if output is not None else output_arg
    if output is None:
        fail("missing option -o/--output DIR: the benchmark folder the result_<i>.txt are written to")
    n = runs or RUNS_PER_SUBMISSION
    bs = batch_size or DEFAULT_BATCH_SIZE
    out = console()
    from proctor.loadgen.output_lock import owned

    with owned(output, "proctor training train"):  # a second training run into it is refused (exit 2)
        for i, seed in enumerate(run_seeds(n, base_seed)):
            path = output / f"result_{i}.txt"
            try:
                if nproc > 1:
                    from proctor.workloads.digits_train.distributed import run_distributed

                    line = run_distributed(path, seed=seed, nproc=nproc, batch_size=bs, division=division)
                    out.print(f"{path}: seed {seed}: {line}")
                else:
                    r = train_run(path, seed=seed, batch_size=bs, backend=backend, division=division)
                    out.print(
                        f"{path}: seed {seed}: {r.status}, {r.samples_to_converge} samples to converge, "
                        f"accuracy {r.accuracy:.4f}, {r.seconds:.2f} s"
                    )
            except (ProctorError, ValueError, ImportError) as exc:
                fail(f"{output}: {exc}")


@training_app.command(
    "reference-rcps",
    epilog=examples(
        "proctor training reference-rcps -o rcps.json",
        "proctor training reference-rcps -o rcps.json --batch-sizes 64,128 --runs 10",
    ),
)
def reference_rcps_cmd(
    output: Annotated[Path, typer.Option("--output", "-o", metavar="FILE", help="RCP JSON to write")] = Path(
        "rcps_digits_train.json"
    ),
    batch_sizes: Annotated[
        str, typer.Option(metavar="N,N,...", help="comma-separated global batch sizes")
    ] = "32,64,128",
    runs: Annotated[int | None, typer.Option(metavar="N", help="runs per batch size (default 2N)")] = None,
    backend: Annotated[str, typer.Option(metavar="BACKEND", help="sklearn or torch")] = "sklearn",
    base_seed: Annotated[
        int | None, typer.Option(metavar="SEED", help="seed stream of the reference runs")
    ] = None,
) -> None:
    """Run the digits_train reference 2N times per batch size and write RCPs in the official JSON format."""
    from proctor.workloads.digits_train import RUNS_PER_SUBMISSION
    from proctor.workloads.digits_train.reference_rcps import REFERENCE_BASE_SEED, generate, write

    sizes = _int_list(batch_sizes)
    out = console()
    try:
        table = generate(
            sizes,
            runs or 2 * RUNS_PER_SUBMISSION,
            backend=backend,
            base_seed=REFERENCE_BASE_SEED if base_seed is None else base_seed,
            on_run=lambda r: out.print(
                f"bs {r.batch_size} seed {r.seed}: {r.samples_to_converge} samples ({r.seconds:.2f} s)"
            ),
        )
    except (RuntimeError, ValueError, ImportError) as exc:
        fail(str(exc))
    path = write(table, output)
    for name, rec in table.items():
        pts = rec["Epochs to converge"]
        out.print(f"{name}: BS {rec['BS']}, {len(pts)} runs, samples to converge {min(pts)}..{max(pts)}")
    out.print(f"wrote {path}")
