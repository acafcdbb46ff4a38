"""Commands: `proctor results ingest | query | compare` (parse, call proctor.resultsdb, print).

Exit status: 0 done; `compare` exits 1 when one's own result is INVALID (it is still placed) and 2
when no own result has a published peer (nothing to compare with: the message says why); 2 for bad
input (a folder that is no results tree, a round that cannot be told, a query that fails, DuckDB
missing: one line naming what to install).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from proctor.cli import output
from proctor.cli.apps import examples, results_app
from proctor.cli.shared_options import AllowUnofficialOpt

if TYPE_CHECKING:
    from rich.console import Console

    from proctor.resultsdb.compare import Peer, Placement
    from proctor.resultsdb.ingest import TreeStats

DbOpt = Annotated[
    Path | None,
    typer.Option(
        "--db",
        metavar="FILE",
        help="The results database (DuckDB file). Default: $PROCTOR_RESULTS_DB, else "
        "~/.local/share/proctor/results.duckdb (under $XDG_DATA_HOME when set).",
    ),
]
TreeRoundOpt = Annotated[
    str | None,
    typer.Option(
        "--round",
        metavar="ROUND",
        help="The round (v4.1 ... v6.1) whose rules check the results; default: the one the tree names "
        "(its README.md or an inference_results_vX.Y / training_results_vX.Y folder).",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document instead of tables.")]
MAX_SHOWN = 1000  # rows of a query printed as a table (--csv and --json print them all)


def _store(db: Path | None, write: bool = False, sandbox: bool = False) -> Any:
    from proctor.resultsdb.store import Store

    return Store(db, write=write, sandbox=sandbox)


def _plain(value: Any, limit: int) -> str:
    """A value from a tree or the database as one printable line that rich prints as written (a
    name like "[/bold]" is text, not markup)."""
    from rich.markup import escape

    from proctor.untrusted_text import printable

    return escape(printable(value, limit))


def _json(doc: dict[str, Any]) -> None:
    import orjson

    # a user's query may return dates, decimals or blobs: written as their text
    sys.stdout.write(orjson.dumps(doc, default=str, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode() + "\n")


class _Bar:
    """The ingest's progress bar on stderr (a terminal only): files checked of the files to check."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.bar: Any = None
        self.task: Any = None

    def begin(self, what: str, units: int, files: int) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        if not units:
            return
        self.bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("files"),
            TimeElapsedColumn(), TextColumn("{task.fields[unit]}"), console=self.console, transient=True,
        )
        self.bar.start()
        self.task = self.bar.add_task(f"{what}: {units} submitter folder(s)", total=files, unit="")

    def unit(self, unit: str) -> None:
        if self.bar is not None:
            self.bar.update(self.task, unit=_plain(unit, 60))

    def advance(self, files: int) -> None:
        if self.bar is not None:
            self.bar.advance(self.task, files)

    def end(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


@results_app.command(
    "ingest",
    epilog=examples(
        "proctor results ingest inference_results_v5.1",
        "proctor results ingest training_results_v5.1 --db results.duckdb",
        "proctor results ingest my_tree/closed/ACME --round v5.1 --quiet",
    ),
)
def ingest_cmd(
    directories: Annotated[
        list[Path],
        typer.Argument(
            metavar="DIR...",
            help="Results trees as cloned (inference: closed|open|network/<submitter>; training: <submitter>), "
            "a division folder or submitter folders.",
        ),
    ],
    db: DbOpt = None,
    round_: TreeRoundOpt = None,
    suite: Annotated[
        str | None,
        typer.Option("--suite", metavar="SUITE", help="inference or training; default: what the tree holds."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Check every submitter folder again, changed or not.")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Read published results trees into the database: one row per result with proctor's verdict."""
    from proctor.resultsdb.ingest import ingest, plans
    from proctor.resultsdb.store import duckdb

    duckdb()  # missing: one line naming the extra, before any folder is read
    planned = plans(directories, round_, suite)  # every folder understood before any work
    err = output.console(stderr=True)
    bar = _Bar(err) if not quiet and err.is_terminal else None
    with _store(db, write=True) as store:
        stats = ingest(store, planned, progress=bar, force=force)
        totals = store.records(
            "SELECT suite, round, count(*) AS n FROM results GROUP BY ALL ORDER BY suite, round"
        )
        path = store.path
    size = store.size()  # closed: the write-ahead log is in the file now
    if as_json:
        _json({"kind": "proctor.results.ingest", "version": 1, "db": str(path), "db_bytes": size,
               "db_results": {f"{t['suite']} {t['round']}": t["n"] for t in totals},
               "trees": [s.to_dict() for s in stats]})
        return
    _ingest_table(stats)
    out = output.console()
    out.print(
        f"{path}: {size / 1e6:,.1f} MB, "
        + (", ".join(f"{t['suite']} {t['round']} {t['n']:,} results" for t in totals) or "no results"),
        markup=False, soft_wrap=True,
    )
    for s in stats:
        for unit in s.failed:
            output.error_line(f"{unit}: the checker stopped on it (a bug in proctor; its 'ingest' finding says why)")


def _ingest_table(stats: list[TreeStats]) -> None:
    t = output.table("tree", "suite", "round", "folders", "checked", "unchanged", "removed", "results", "invalid",
                     "files", "seconds")
    for s in stats:
        t.add_row(_plain(s.tree, 300), s.suite, s.round, str(s.units), str(s.checked), str(s.unchanged),
                  str(s.removed), f"{s.results:,}", f"{s.invalid:,}", f"{s.files:,}", f"{s.seconds:.1f}")
    output.print_table(output.console(), t)
    for s in stats:
        output.console().print(f"{s.suite} {s.round}: {s.round_from}", markup=False, soft_wrap=True)


@results_app.command(
    "query",
    epilog=examples(
        "proctor results query \"SELECT round, accelerator, max(per_accelerator) AS best FROM results "
        "WHERE scenario = 'Offline' AND units = 'tokens/s' GROUP BY ALL ORDER BY best DESC LIMIT 10\"",
        "proctor results query \"SELECT * FROM findings WHERE severity = 'error' LIMIT 20\" --csv",
        "proctor results query 'DESCRIBE results' --db results.duckdb --json",
    ),
)
def query_cmd(
    sql: Annotated[str, typer.Argument(metavar="SQL", help="A query on the tables results, findings and units.")],
    db: DbOpt = None,
    as_csv: Annotated[bool, typer.Option("--csv", help="Print CSV.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Ask the database what the commands do not (read-only; the query reaches no other file)."""
    from proctor.resultsdb import run_query

    with _store(db, sandbox=True) as store:
        table = run_query(store, sql, None)
    rows = table.to_pylist()
    names = list(table.column_names)
    if as_json:
        _json({"kind": "proctor.results.query", "version": 1, "columns": names, "rows": rows})
    elif as_csv:
        import csv

        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(names)
        for r in rows:
            w.writerow(["" if r[c] is None else r[c] for c in names])
    else:
        _query_table(names, rows)


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}"
    return _plain(v, 300)


def _query_table(names: list[str], rows: list[dict[str, Any]]) -> None:
    t = output.table(*names, labels=tuple(range(len(names))))
    for r in rows[:MAX_SHOWN]:
        t.add_row(*(_cell(r[c]) for c in names))
    out = output.console()
    output.print_table(out, t)
    more = f" (the first {MAX_SHOWN} shown: add LIMIT or use --csv)" if len(rows) > MAX_SHOWN else ""
    out.print(f"{len(rows):,} row(s){more}", markup=False)


@results_app.command(
    "compare",
    epilog=examples(
        "proctor results compare runs/resnet50/Offline/performance/run_1 --accelerators 1",
        "proctor results compare RUN_DIR --benchmark llama2-70b-99 --round v5.1 --system runs/system.json -o compare.html",
        "proctor results compare SUBMISSION/closed/ACME --division all --json",
    ),
)
def compare_cmd(
    path: Annotated[
        Path,
        typer.Argument(
            metavar="RUN_OR_PACKAGE",
            help="A `proctor run -o` folder (or its <benchmark>/<Scenario> folder) or a submission package.",
        ),
    ],
    db: DbOpt = None,
    round_: Annotated[
        str | None,
        typer.Option(
            "--round", metavar="ROUND",
            help="The round to compare in; default: the one the package names, else the newest stored round "
            "with the benchmark.",
        ),
    ] = None,
    benchmark: Annotated[
        str | None,
        typer.Option(
            "--benchmark", metavar="NAME",
            help="The published benchmark the run stands for (default: its <benchmark>/<Scenario> folders); "
            "for a package, only its results of NAME.",
        ),
    ] = None,
    scenario: Annotated[
        str | None,
        typer.Option("--scenario", metavar="SCENARIO", help="The result's scenario (default: the log's)."),
    ] = None,
    accelerators: Annotated[
        int | None,
        typer.Option("--accelerators", metavar="N", help="The run's accelerators (all nodes), for value per accelerator."),
    ] = None,
    system: Annotated[
        Path | None,
        typer.Option(
            "--system", metavar="FILE",
            help="A system description (systems/<system>.json, or runs/system.json of `proctor submission init`) "
            "naming the run's accelerators.",
        ),
    ] = None,
    division: Annotated[
        str,
        typer.Option(
            "--division", metavar="DIVISION",
            help="Peers of this division: closed, open, network or all (default: your result's; a run is closed).",
        ),
    ] = "own",
    include_invalid: Annotated[
        bool, typer.Option("--include-invalid", help="Rank among INVALID published results too.")
    ] = False,
    as_json: JsonOpt = False,
    html: Annotated[
        Path | None,
        typer.Option("-o", "--output", metavar="FILE", help="Also write an HTML page with the plot (FILE.html)."),
    ] = None,
    allow_unofficial: AllowUnofficialOpt = False,
) -> None:
    """Place your run or package beside the published results of its round, benchmark and scenario."""
    from proctor.resultsdb.compare import compare

    if division not in ("own", "all", "closed", "open", "network"):
        output.fail(f"--division {division!r}: use closed, open, network or all")
    with _store(db, sandbox=True) as store:
        placements = compare(
            store, path, round_=round_, benchmark=benchmark, scenario=scenario, accelerators=accelerators,
            system=system, division=None if division == "all" else division, valid_only=not include_invalid,
            allow_unofficial_loadgen=allow_unofficial,
        )
    written = None
    if html is not None:
        from proctor.resultsdb import page
        from proctor.version import __version__

        written = page.write(placements, html, version=__version__)
    compared = [p for p in placements if p.peers_count]
    invalid = any(p.own.get("verdict") != "VALID" for p in placements)
    code = output.EXIT_USAGE if not compared else output.EXIT_INVALID if invalid else output.EXIT_OK
    if as_json:
        _json({"kind": "proctor.results.compare", "version": 1, "exit_code": code,
               "html": None if written is None else str(written), "placements": [p.to_dict() for p in placements]})
        raise typer.Exit(code)
    out = output.console()
    for p in placements:
        _print_placement(out, p)
    if written is not None:
        out.print(f"page: {written}", markup=False, soft_wrap=True)
    if not compared:
        output.fail(placements[0].notes[-1] if placements and placements[0].notes else "no published peers")
    raise typer.Exit(code)


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:,.6g}"


def _peer_cells(rank: Any, who: str, system: str, accel: str, n: Any, value: Any, per: Any, verdict: str) -> list[str]:
    return [str(rank), _plain(who, 60), _plain(system, 80), _plain(accel, 60),
            "-" if n is None else str(n), _fmt(value), _fmt(per), _plain(verdict, 20)]


def _window(p: Placement) -> list[Peer]:
    """The peers a terminal shows: the top three and three each side of one's own rank."""
    if p.rank is None:
        return p.peers[:10]
    near = [x for x in p.peers if abs(x.rank - p.rank) <= 3 or x.rank <= 3]
    keep = {id(x) for x in near}
    for x in (p.above, p.below):
        if x is not None:
            keep |= {id(y) for y in p.peers if y.path == x.path and y.value == x.value}
    return [x for x in p.peers if id(x) in keep]


def _print_placement(out: Console, p: Placement) -> None:
    from proctor.untrusted_text import printable

    own = p.own
    head = f"{p.benchmark} {p.scenario}".strip()
    value = own.get("value")
    out.print(
        f"{printable(head, 120)} · {p.suite} {p.round}: yours {_fmt(value)} {p.units} ({p.metric}), "
        f"{own.get('verdict')} ({own.get('errors', 0)} error(s), {own.get('warnings', 0)} warning(s))",
        markup=False, soft_wrap=True,
    )
    filters = f"{'division ' + p.division if p.division else 'every division'}, "
    filters += "VALID only" if p.valid_only else "every verdict"
    if p.rank is not None and p.peers_count:
        line = f"rank {p.rank} of {p.peers_count + 1} ({filters})"
        if p.rank_per_accelerator is not None:
            line += f"; per accelerator {_fmt(own.get('per_accelerator'))}: rank {p.rank_per_accelerator} of " \
                    f"{p.peers_per_accelerator + 1}"
        out.print(line, markup=False, soft_wrap=True)
    out.print(
        f"{p.benchmark_results} stored result(s) of {printable(head, 120)} in {p.round}, {p.round_results} in the round",
        markup=False, soft_wrap=True,
    )
    if p.peers:
        t = output.table("rank", "submitter", "system", "accelerator", "acc.", "value", "per acc.", "verdict",
                         labels=(1, 2, 3))
        shown = _window(p)
        placed = False
        for x in shown:
            if not placed and p.rank is not None and x.rank >= p.rank:
                t.add_row(*_own_cells(p), style="bold red")
                placed = True
            tag = " (above)" if p.above is not None and x.path == p.above.path else \
                " (below)" if p.below is not None and x.path == p.below.path else ""
            t.add_row(*_peer_cells(x.rank, (x.submitter or "") + tag, x.system_name or x.system or "",
                                   x.accelerator or "-", x.accelerators, x.value, x.per_accelerator, x.verdict))
        if not placed:
            t.add_row(*_own_cells(p), style="bold red")
        output.print_table(out, t)
    for note in p.notes:
        out.print(f"note: {note}", markup=False, soft_wrap=True)
    if p.findings:
        errors = [f for f in p.findings if f.get("severity") == "error"][:5]
        for f in errors:
            out.print(f"  ERROR [{f.get('rule')}] {printable(f.get('path') or '', 200)}: {printable(f.get('message'), 300)}",
                      markup=False, soft_wrap=True)


def _own_cells(p: Placement) -> list[str]:
    o = p.own
    return _peer_cells("-" if p.rank is None else p.rank, "YOURS", str(o.get("system_name") or o.get("system") or ""),
                       str(o.get("accelerator") or "-"), o.get("accelerators"), o.get("value"), o.get("per_accelerator"),
                       str(o.get("verdict")))
