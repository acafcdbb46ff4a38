"""`proctor early-stopping`: how many queries a run needs, and what early stopping will report."""

from __future__ import annotations

import orjson
import typer
from rich.console import Console
from rich.table import Table

from proctor.cli.apps import app
from proctor.loadgen import early_stopping as es


def _percentile(value: float) -> float:
    p = value / 100.0 if value > 1.0 else value
    if not 0.0 < p < 1.0:
        raise typer.BadParameter(f"percentile must be in (0, 1) or (0, 100), got {value}")
    return p


def early_stopping_report(percentile: float, queries: int, overlatency: int | None) -> dict[str, object]:
    """The figures the command prints (shared by the table and --json)."""
    p = _percentile(percentile)
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


@app.command("early-stopping")
def early_stopping_cmd(
    percentile: float = typer.Option(..., "--percentile", "-p", help="Target percentile: 90 or 0.9."),
    queries: int = typer.Option(..., "--queries", "-n", min=0, help="Queries processed (or planned)."),
    overlatency: int | None = typer.Option(
        None, "--overlatency", "-t", min=0, help="Server: queries over the latency target."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """Early stopping (MLPerf Inference rules, appendix): queries needed and the percentile reported."""
    report = early_stopping_report(percentile, queries, overlatency)
    if as_json:
        typer.echo(orjson.dumps(report).decode())
        return
    p = float(report["percentile"]) * 100  # type: ignore[arg-type]
    table = Table(title=f"Early stopping, {p:g}th percentile, {queries} queries", show_header=False)
    table.add_column(style="bold")
    table.add_column(justify="right")
    table.add_row("min queries (SingleStream/MultiStream)", str(report["min_queries"]))
    if overlatency is None:
        if report["enough"]:
            table.add_row("highest latencies discarded", str(report["discarded"]))
            table.add_row("reported order statistic (rank, ascending)", str(report["reported_rank"]))
        else:
            table.add_row("result", f"too few queries: need {report['min_queries']}")
    else:
        table.add_row("over-latency queries", str(overlatency))
        table.add_row("required queries (Server)", str(report["required_queries"]))
        table.add_row("enough", "yes" if report["enough"] else f"no: {report['more_queries_needed']} more")
    Console().print(table)
