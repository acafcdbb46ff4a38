"""`proctor early-stopping`: how many queries a run needs, and what early stopping will report.

Inputs that cannot describe a run (a percentile outside (0, 1) or (0, 100), negative counts, more
over-latency queries than queries) are one error line and exit 2.
"""

from __future__ import annotations

import math

import typer

from proctor.cli.apps import app, examples
from proctor.cli.output import console, fail, print_table, table

MAX_QUERIES = 10**12  # far beyond any run; keeps the early-stopping search bounded


def _percentile(value: float) -> float:
    """90 or 0.9 -> 0.9; raises ValueError outside (0, 1) / (0, 100)."""
    p = value / 100.0 if value > 1.0 else value
    if not (math.isfinite(p) and 0.0 < p < 1.0):
        raise ValueError(f"--percentile {value}: give a percentile in (0, 1) or (0, 100), e.g. 90 or 0.9")
    return p


def _check_counts(queries: int, overlatency: int | None) -> None:
    if not 0 <= queries <= MAX_QUERIES:
        raise ValueError(f"--queries {queries}: give the number of queries, 0 to {MAX_QUERIES}")
    if overlatency is not None and not 0 <= overlatency <= queries:
        raise ValueError(
            f"--overlatency {overlatency}: over-latency queries are part of the {queries} queries; "
            f"give 0 to {queries}"
        )


def early_stopping_report(percentile: float, queries: int, overlatency: int | None) -> dict[str, object]:
    """The figures the command prints (shared by the table and --json); ValueError on bad input."""
    from proctor.loadgen import early_stopping as es

    p = _percentile(percentile)
    _check_counts(queries, overlatency)
    out: dict[str, object] = {"percentile": p, "queries": queries, "min_queries": es.min_queries(p)}
    if overlatency is None:
        t = es.stream_t(queries, p)
        out["enough"] = t is not None
        out["discarded"] = None if t is None else t - 1
        # 1-based rank in ascending order: the official reports sorted[n - t]
        out["reported_rank"] = None if t is None else queries - t + 1
    else:
        need = es.server_required_queries(overlatency, p)
        out["overlatency"] = overlatency
        out["required_queries"] = need  # total n = h + t, as the rules' step 2 computes it
        out["required_underlatency_queries"] = es.min_passing(overlatency, p)  # h alone
        out["enough"] = queries >= need
        out["more_queries_needed"] = max(0, need - queries)
    return out


@app.command(
    "early-stopping",
    epilog=examples(
        "proctor early-stopping --percentile 90 --queries 10000",
        "proctor early-stopping -p 99 -n 270336 -t 2000 --json",
    ),
)
def early_stopping_cmd(
    percentile: float = typer.Option(
        ..., "--percentile", "-p", metavar="P", help="Target percentile: 90 or 0.9."
    ),
    queries: int = typer.Option(..., "--queries", "-n", metavar="N", help="Queries processed (or planned)."),
    overlatency: int | None = typer.Option(
        None,
        "--overlatency",
        "-t",
        metavar="N",
        help="Server: queries over the latency target (at most --queries).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Early stopping (MLPerf Inference rules, appendix): queries needed and the percentile reported."""
    import numpy as np
    import orjson

    try:
        with np.errstate(all="ignore"):  # extreme percentiles overflow the guess; the search settles it
            report = early_stopping_report(percentile, queries, overlatency)
    except ValueError as exc:
        fail(str(exc))
    if as_json:
        typer.echo(orjson.dumps(report).decode())
        return
    p = float(report["percentile"]) * 100  # type: ignore[arg-type]
    tbl = table("", "", title=f"Early stopping, {p:g}th percentile, {queries} queries", show_header=False)
    tbl.columns[1].justify = "right"
    tbl.add_row("min queries (SingleStream/MultiStream)", str(report["min_queries"]))
    if overlatency is None:
        if report["enough"]:
            tbl.add_row("highest latencies discarded", str(report["discarded"]))
            tbl.add_row("reported order statistic (rank, ascending)", str(report["reported_rank"]))
        else:
            tbl.add_row("result", f"too few queries: need {report['min_queries']}")
    else:
        tbl.add_row("over-latency queries", str(overlatency))
        tbl.add_row("required queries (Server)", str(report["required_queries"]))
        tbl.add_row("enough", "yes" if report["enough"] else f"no: {report['more_queries_needed']} more")
    print_table(console(), tbl)
