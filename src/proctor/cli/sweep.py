"""`proctor sweep`: one SUT at many loads, one table and one sweep.json; `--goodput` finds the
highest Server rate that meets the benchmark's latency (or TTFT/TPOT) limits.

The run itself is the app layer's (proctor.app.sweep); this command parses, prints each point as it
ends and the table at the end. Exit status: 0 when every point ran (an INVALID point is a
measurement, not a failure) and, with --goodput, a rate that meets the limits was found; 1 when a
point produced no result or logged errors, or no probed rate met the limits; 2 usage; 130 interrupted.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from proctor.cli import output
from proctor.cli.apps import app, examples
from proctor.cli.run_options import RunOptions, check_output_dir, run_options

if TYPE_CHECKING:
    from rich.table import Table

    from proctor.app.sweep import Point
    from proctor.loadgen.progress import ProgressHooks


def _table(kind: str, points: list[Point]) -> Table:
    """The points as one table that never cuts a number: a p50 / p90 / p99 cell wraps between its
    figures (at " / "), and no column is narrower than the longest figure in it, so a pipe's 120
    columns (or a narrow terminal) fold headers and cells between numbers, never inside one."""
    from rich.table import Table
    from rich.text import Text

    from proctor.report.sweep import figure_text  # one number per figure: sweep.html writes them alike

    def _ms(block: dict[str, float] | None, key: str) -> str:
        return "-" if not block else figure_text("ms", block.get(key))

    tokens = any(p.ttft_ms for p in points)
    tbl = Table(title="proctor sweep" + (" (closed loop: not an MLPerf scenario)" if kind == "concurrency" else ""))
    tbl.add_column("in flight" if kind == "concurrency" else "target QPS", justify="right")
    tbl.add_column("verdict")
    if kind == "rate":
        tbl.add_column("limits")
    if tokens:
        for name in ("TTFT", "TPOT"):
            tbl.add_column(f"{name} p50 / p90 / p99 ms", justify="right")
    tbl.add_column("latency p50 / p90 / p99 ms", justify="right")
    tbl.add_column("requests/s", justify="right")
    if tokens:
        tbl.add_column("tokens/s", justify="right")
    slo = any(p.slo_attainment is not None for p in points)
    rows: list[list[str]] = []
    if slo:
        tbl.add_column("SLO met", justify="right")
        tbl.add_column("goodput req/s", justify="right")
    for p in points:
        verdict = "not MLPerf" if p.valid is None else ("[green]VALID[/green]" if p.valid else "[red]INVALID[/red]")
        row = [figure_text("value", p.value), verdict]
        if kind == "rate":
            row.append("met" if p.meets_limits else "[red]NOT met[/red]")
        blocks = [p.ttft_ms, p.tpot_ms, p.latency_ms] if tokens else [p.latency_ms]
        row += [" / ".join(_ms(b, k) for k in ("p50", "p90", "p99")) for b in blocks]
        row.append(figure_text("rate", p.requests_per_s))
        if tokens:
            row.append(figure_text("rate", p.tokens_per_s))
        if slo:
            row.append(figure_text("share", p.slo_attainment))
            row.append(figure_text("rate", p.goodput_per_s))
        tbl.add_row(*row)
        rows.append(row)
    for i, column in enumerate(tbl.columns):  # a column folds its header, never a figure below it
        column.overflow = "fold"
        column.min_width = max((len(word) for row in rows for word in Text.from_markup(row[i]).plain.split()), default=1)
    return tbl


@app.command(
    "sweep",
    epilog=examples(
        "proctor sweep --rates 100,200,400 --sut synthetic:service_us=5000,workers=4 --duration-ms 2000 -o sw",
        "proctor sweep --rates 4:64:x2 --model llama2-70b --sut openai:url=http://127.0.0.1:8000 -o sw",
        "proctor sweep --concurrency 1,4,16 --sut synthetic:service_us=20000,workers=8 --duration-ms 1000",
        "proctor sweep --goodput --target-qps 100 --sut synthetic:service_us=5000,workers=4 --tolerance 0.05",
    ),
)
@run_options(output_default=Path("proctor-sweep"),
             output_help="Directory for sweep.json, sweep.csv, sweep.parquet, sweep.html and each point's logs.")
def sweep_cmd(
    opts: RunOptions,
    rates: Annotated[
        str | None,
        typer.Option(
            "--rates", metavar="LIST",
            help="Server runs at these target QPS: 4,8,16 or a range 4:64:x2 (times 2) or 10:50:+10.",
        ),
    ] = None,
    concurrency: Annotated[
        str | None,
        typer.Option(
            "--concurrency", metavar="LIST",
            help="Closed-loop runs keeping N requests in flight, e.g. 1,4,16 or 1:64:x2 (the everyday mode "
            "of GuideLLM, AIPerf, vllm bench; not an MLPerf scenario: never VALID).",
        ),
    ] = None,
    goodput: Annotated[
        bool,
        typer.Option(
            "--goodput",
            help="Find the highest passing offered rate: the highest Server target QPS that meets the "
            "benchmark's latency (or TTFT/TPOT) limits in a complete run without errors: double from "
            "--target-qps, then narrow to --tolerance. (The table's 'goodput req/s' is another figure: "
            "the completed requests/s that met every SLO target.)",
        ),
    ] = False,
    tolerance: Annotated[
        float,
        typer.Option("--tolerance", metavar="FRACTION", help="--goodput: stop when hi/lo - 1 <= this (0.02 = 2 %)."),
    ] = 0.02,
    max_qps: Annotated[
        float,
        typer.Option("--max-qps", metavar="QPS", help="--goodput: never probe above this rate."),
    ] = 1e6,
    no_report: Annotated[bool, typer.Option("--no-report", help="Do not write sweep.html.")] = False,
) -> None:
    """Run a SUT at many loads: one table, sweep.json, sweep.csv/.parquet and sweep.html; or find its goodput.

    Each point is a full run with its own logs (a subfolder of --output) and its own verdict. Each
    point lasts --duration-ms (default 10 s, as --quick), plus what early stopping asks of a Server run.
    """
    from proctor.app import sweep as sw
    from proctor.app.choices import QUICK_DURATION_MS, Engine
    from proctor.errors import ConfigError, ProctorError
    from proctor.loadgen.scenarios import Scenario

    console = output.console(stderr=opts.as_json)  # --json: stdout holds the document alone
    err = output.console(stderr=True)
    if opts.list_suts_flag:
        from proctor.cli.run import list_suts

        list_suts(console)
        raise typer.Exit(output.EXIT_OK)
    chosen = [name for name, given in (("--rates", rates), ("--concurrency", concurrency), ("--goodput", goodput)) if given]
    if len(chosen) != 1:
        output.fail("give one of --rates LIST, --concurrency LIST or --goodput (see 'proctor sweep --help')")
    if opts.engine != Engine.PROCTOR:
        output.fail("--engine official: a sweep runs on proctor's engine only (each point's logs are proctor's)")
    wanted = Scenario.SINGLE_STREAM if concurrency else Scenario.SERVER
    if opts.scenario is not None and opts.scenario != Scenario.SERVER:
        output.fail(f"--scenario {opts.scenario}: a sweep runs Server points (--rates, --goodput) or a closed loop "
                    "(--concurrency); leave --scenario out")
    if goodput and opts.target_qps is None:
        output.fail("--goodput needs --target-qps QPS to start from (a rate the SUT should meet)")
    opts.scenario = wanted
    if opts.duration_ms is None:
        opts.duration_ms = QUICK_DURATION_MS
    check_output_dir(opts.output_dir)
    request = opts.request(command="sweep", report=False)
    outdir = opts.output_dir
    try:
        if rates:
            kind, values = "rate", sw.parse_values(rates, "--rates")
        elif concurrency:
            kind, values = "concurrency", [float(n) for n in sw.parse_concurrencies(concurrency)]
        else:
            kind, values = "rate", []
            if not (sw.MIN_TOLERANCE <= tolerance < 1):
                raise ConfigError(
                    f"--tolerance: must be at least {sw.MIN_TOLERANCE} and below 1 (0.02 = 2 %), got {tolerance:g}"
                )
        request.resolve()  # refuse bad settings before the first point runs
        from proctor.loadgen.settings import value_problem

        for option, rate in [("--rates", v) for v in values if kind == "rate"] + [("--max-qps", max_qps)]:
            problem = value_problem("server_target_qps", rate)  # each point is a Server run at that rate
            if problem:
                raise ConfigError(f"{option}: {problem}")
    except ConfigError as exc:
        output.fail(str(exc))

    def progress() -> ProgressHooks | None:
        if opts.quiet:
            return None
        from proctor.cli.live_progress import LiveProgress

        return LiveProgress(err)

    run_point = sw.point_runner(request, progress, early_stopping_extension=not goodput)

    def said(p: Point) -> None:
        if not opts.quiet:
            what = "in flight" if p.kind == "concurrency" else "QPS"
            err.print(f"{p.value:g} {what}: {p.verdict}", markup=False, highlight=False, soft_wrap=True)

    from proctor.loadgen import output_lock, stop_signals

    # the folder is this sweep's until it ends: a second sweep or run into it is refused (exit 2)
    with output_lock.owned(outdir, "proctor sweep"):
        found = None
        points: list[Point] = []
        try:
            if goodput:

                def probe_line(p: sw.GoodputProbe) -> None:
                    console.print(
                        f"probe {p.index} ({p.stage}) {p.rate:,.4g} QPS: {'PASS' if p.passed else 'FAIL'} "
                        f"({p.wall_s:.1f} s)  {p.why}",
                        markup=False, highlight=False, soft_wrap=True,
                    )

                assert opts.target_qps is not None
                found = sw.goodput_search(
                    sw.goodput_runner(run_point, outdir, points), opts.target_qps, tolerance,
                    max_rate=max_qps, on_probe=probe_line,
                )
            else:
                sw.run_sweep(kind, values, outdir, run_point, said, points)
        except KeyboardInterrupt as exc:
            doc = sw.sweep_document(kind, points, request, None)
            path = sw.write_document(doc, outdir)
            sw.write_tables(points, outdir)
            if opts.as_json:  # the points that ended: the partial result
                _print_json(doc, stop_signals.exit_status(exc), incomplete=True)
            output.interrupted(f"interrupted: the {len(points)} point(s) that ended are in {path}", exc)
        except ConfigError as exc:
            output.fail(str(exc))
        except ProctorError as exc:
            output.fail(f"run failed: {exc}", output.EXIT_INVALID)
        doc = sw.sweep_document(kind, points, request, found)
        path = sw.write_document(doc, outdir)
        if not opts.quiet:
            output.print_table(console, _table(kind, points))
        console.print(f"sweep.json: {path}", markup=False, soft_wrap=True)
        tables, why = sw.write_tables(points, outdir)
        for table in tables:
            console.print(f"{table.name}: {table}", markup=False, soft_wrap=True)
        if why:
            err.print(why, markup=False, soft_wrap=True)
        if not no_report:
            from proctor.report.sweep import write_sweep_html

            console.print(f"sweep.html: {write_sweep_html(doc, outdir)}", markup=False, soft_wrap=True)
        failed = [p for p in points if p.errors or p.samples == 0]
        for p in failed:
            err.print(f"point {p.value:g}: {p.verdict} (logs: {outdir / p.logs})", markup=False, soft_wrap=True)
        code = output.EXIT_INVALID if (failed and not goodput) or (found is not None and not found.found) else 0
        if opts.as_json:
            _print_json(doc, code, incomplete=False)
        if found is not None:
            if found.found:
                from proctor.report.sweep import figure_text

                hi = f"{found.upper:,.4g}" if found.upper > 0 else "none failed"
                best = sw.passing_point(found, points)
                run_verdict = "" if best is None else f"; its run: {best.verdict}"
                # an offered rate, named apart from the SLO goodput column (requests/s that met every target)
                achieved = "" if best is None else f" (achieved {figure_text('rate', best.requests_per_s)} requests/s)"
                console.print(
                    f"highest passing offered rate: {found.lower:,.4g} QPS{achieved} meets the limits, "
                    f"bracket [{found.lower:,.4g}, {hi}) "
                    f"after {len(found.probes)} probes in {found.wall_s:.1f} s (tolerance {found.tolerance * 100:g} %)"
                    + (f"; {found.stopped}" if found.stopped else "") + run_verdict,
                    markup=False, soft_wrap=True,
                )
            else:
                console.print(
                    f"highest passing offered rate: none: no probed rate met the limits ({found.stopped}); "
                    "lower --target-qps",
                    markup=False, soft_wrap=True,
                )
                raise typer.Exit(output.EXIT_INVALID)
        raise typer.Exit(output.EXIT_INVALID if failed and not goodput else output.EXIT_OK)


def _print_json(doc: dict[str, object], exit_code: int, *, incomplete: bool) -> None:
    """`--json`: sweep.json's document, with the exit status and whether the sweep ended."""
    import json
    import sys

    sys.stdout.write(json.dumps({**doc, "exit_code": exit_code, "incomplete": incomplete}) + "\n")
