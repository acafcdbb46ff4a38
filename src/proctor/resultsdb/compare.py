"""One's own result beside the published results of the same round, benchmark and scenario.

The peers are the stored results of that round, suite, benchmark and scenario measured in the same
units (by default the VALID ones of the own result's division). The rank follows the metric's
direction (a latency or a time to train: lower is better; a rate: higher); results equal to one's
own share its rank; every rank counts one's own result in (a peer behind it ranks one lower). Value per accelerator (value / (accelerators per node x nodes)) is ranked too
where it means something: a rate measured on a system that names its accelerators; for a latency or
a time it is not computed. The nearest peers are the one just better (above) and the one just not
better (below).
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from proctor.resultsdb.layout import INFERENCE
from proctor.resultsdb.own import Own, proctor_workload, read_own
from proctor.resultsdb.rows import VALID, benchmark_name
from proctor.resultsdb.store import Store
from proctor.rules.inference_rounds import round_table
from proctor.typed_records import field, record

MAX_PEERS = 5000  # peers listed (the rank counts them all)
PEER_COLUMNS = (
    "submitter", "system", "system_name", "accelerator", "accelerators", "value", "per_accelerator", "verdict",
    "division", "category", "availability", "path",
)  # fmt: skip


@record(slots=True)
class Peer:
    rank: int
    submitter: str | None
    system: str | None
    system_name: str | None
    accelerator: str | None
    accelerators: int | None
    value: float
    per_accelerator: float | None
    verdict: str
    division: str | None
    category: str | None
    availability: str | None
    path: str | None


@record(slots=True)
class Placement:
    own: dict[str, Any]
    findings: list[dict[str, Any]]
    round: str
    suite: str
    benchmark: str
    scenario: str
    metric: str
    units: str
    higher_is_better: bool
    division: str | None  # the peers' division (None: every division)
    valid_only: bool
    peers_count: int = 0  # the peers ranked
    rank: int | None = None  # of peers_count + 1
    per_accelerator_meaningful: bool = False
    rank_per_accelerator: int | None = None
    peers_per_accelerator: int = 0
    above: Peer | None = None
    below: Peer | None = None
    peers: list[Peer] = field(default_factory=list)  # best first, at most MAX_PEERS
    benchmark_results: int = 0  # stored results of this round, benchmark and scenario (every verdict)
    round_results: int = 0  # stored results of this round and suite
    rounds_with_benchmark: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def newest_round(store: Store, suite: str, benchmark: str | None = None, rounds: list[str] | None = None) -> str | None:
    """The newest stored round of `suite` (with results of `benchmark`, among `rounds`)."""
    sql = "SELECT DISTINCT round FROM results WHERE suite = ?"
    params: list[Any] = [suite]
    if benchmark is not None:
        sql += " AND (benchmark = ? OR benchmark_folder = ?)"
        params += [benchmark, benchmark]
    found = [r["round"] for r in store.records(sql, params)]
    if rounds is not None:
        found = [r for r in found if r in rounds]
    return max(found, key=_order, default=None)


def _order(round_: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in round_.removeprefix("v").split("."))
    except ValueError:
        return (-1,)


def place(store: Store, own: Own, *, division: str | None = "own", valid_only: bool = True) -> Placement:
    """Where `own` stands among the stored results (`division`: "own" for the own result's, None for all)."""
    row = own.row
    div = row.get("division") if division == "own" else division
    higher = bool(row.get("higher_is_better", True)) if row.get("higher_is_better") is not None else True
    out = Placement(
        own=row,
        findings=own.findings,
        round=row["round"],
        suite=row["suite"],
        benchmark=row["benchmark"],
        scenario=row["scenario"] or "",
        metric=row["metric"],
        units=row["units"] or "",
        higher_is_better=higher,
        division=div,
        valid_only=valid_only,
        notes=list(own.notes),
    )
    key = [out.round, out.suite, out.benchmark, out.scenario]
    where = "round = ? AND suite = ? AND benchmark = ? AND scenario = ?"
    out.round_results = _count(store, "round = ? AND suite = ?", key[:2])
    out.benchmark_results = _count(store, where, key)
    out.rounds_with_benchmark = sorted(
        (r["round"] for r in store.records(
            "SELECT DISTINCT round FROM results WHERE suite = ? AND benchmark = ? AND scenario = ?", key[1:]
        )),
        key=_order,
    )
    peers_where = where + " AND units = ? AND value IS NOT NULL AND isfinite(value)"
    params: list[Any] = [*key, out.units]
    if valid_only:
        peers_where += " AND verdict = ?"
        params.append(VALID)
    if div:
        peers_where += " AND division = ?"
        params.append(div)
    if row.get("tree"):  # one's own package, ingested too: not its own peer
        peers_where += " AND NOT (tree = ? AND path = ?)"
        params += [row["tree"], row["path"]]
    value = row.get("value")
    better = ">" if higher else "<"
    order = "DESC" if higher else "ASC"
    out.peers_count = _count(store, peers_where, params)
    if value is None:
        out.notes.append("your result has no value (its log could not give one): it is not ranked")
    else:
        out.rank = 1 + _count(store, peers_where + f" AND value {better} ?", [*params, value])
        above = store.records(
            f"SELECT {', '.join(PEER_COLUMNS)} FROM results WHERE {peers_where} AND value {better} ? "
            f"ORDER BY value {'ASC' if higher else 'DESC'}, submitter, system LIMIT 1",
            [*params, value],
        )
        below = store.records(
            f"SELECT {', '.join(PEER_COLUMNS)} FROM results WHERE {peers_where} AND NOT (value {better} ?) "
            f"ORDER BY value {order}, submitter, system LIMIT 1",
            [*params, value],
        )
        out.above = _peer(store, peers_where, params, above[0], better, value) if above else None
        out.below = _peer(store, peers_where, params, below[0], better, value) if below else None
    out.per_accelerator_meaningful = higher
    if higher:
        mine = row.get("per_accelerator")
        pa_where = peers_where + " AND per_accelerator IS NOT NULL"
        out.peers_per_accelerator = _count(store, pa_where, params)
        if mine is not None:
            out.rank_per_accelerator = 1 + _count(store, pa_where + " AND per_accelerator > ?", [*params, mine])
        else:
            out.notes.append(
                "value per accelerator: your result names no accelerators (give --accelerators N or --system FILE)"
            )
    else:
        out.notes.append(f"value per accelerator: not meaningful for a {out.metric} ({out.units}); lower is better")
    listed = store.records(
        f"SELECT {', '.join(PEER_COLUMNS)} FROM results WHERE {peers_where} ORDER BY value {order}, submitter, system "
        f"LIMIT {MAX_PEERS}",
        params,
    )
    rank, prev = 0, None
    for i, r in enumerate(listed, 1):
        if r["value"] != prev:
            rank, prev = i, r["value"]
        out.peers.append(Peer(rank=rank + _behind(value, r["value"], higher), **r))
    if out.peers_count == 0:
        out.notes.append(_no_peers(store, out))
    return out


def _peer(store: Store, where: str, params: list[Any], r: dict[str, Any], better: str, own: float) -> Peer:
    rank = 1 + _count(store, where + f" AND value {better} ?", [*params, r["value"]])
    return Peer(rank=rank + _behind(own, r["value"], better == ">"), **r)


def _behind(own: float | None, value: float, higher: bool) -> int:
    """1 when one's own result is strictly better than a peer's (it then ranks one place lower)."""
    if own is None:
        return 0
    return int(own > value if higher else own < value)


def _count(store: Store, where: str, params: list[Any]) -> int:
    got = store.records(f"SELECT count(*) AS n FROM results WHERE {where}", params)
    return int(got[0]["n"]) if got else 0


def _no_peers(store: Store, p: Placement) -> str:
    what = f"{p.benchmark} {p.scenario}".strip()
    filters = ", ".join(x for x in (p.division and f"division {p.division}", p.valid_only and "VALID only") if x)
    text = f"no published result of {what} in round {p.round} in the database" + (f" ({filters})" if filters else "")
    if p.suite == INFERENCE and proctor_workload(p.benchmark, p.round):
        name = p.own.get("benchmark_folder") or p.benchmark
        return (
            f"{text}: {name} is proctor's own reference workload, which no published round has, so it has no "
            "published peers; give --benchmark NAME for the published benchmark your run stands in for"
        )
    others = [r for r in p.rounds_with_benchmark if r != p.round]
    if p.benchmark_results:
        return f"{text}; {p.benchmark_results} stored result(s) of it do not pass the filters (--division all, --include-invalid)"
    if others:
        return f"{text}; the database has it in round(s) {', '.join(others)} (--round)"
    return f"{text}; ingest that round first: proctor results ingest DIR"


def compare(
    store: Store,
    path: str | Path,
    *,
    round_: str | None = None,
    benchmark: str | None = None,
    scenario: str | None = None,
    accelerators: int | None = None,
    system: Path | None = None,
    division: str | None = "own",
    valid_only: bool = True,
    allow_unofficial_loadgen: bool = False,
) -> list[Placement]:
    """Each own result at `path` (a run folder or a package) placed among the stored ones; a round not
    given is the one the package names, else the newest stored round that has the benchmark."""
    owns = read_own(
        path,
        round_=round_,
        benchmark=benchmark,
        scenario=scenario,
        accelerators=accelerators,
        system=system,
        allow_unofficial_loadgen=allow_unofficial_loadgen,
        pick_round=lambda rounds, name: _pick(store, rounds, name),
        default_round=lambda suite: newest_round(store, suite),
    )
    return [place(store, o, division=division, valid_only=valid_only) for o in owns]


def _pick(store: Store, rounds: list[str], name: str) -> str | None:
    """The newest stored round whose table has the benchmark and that holds VALID results of it (else
    any results of it)."""
    found: dict[bool, list[str]] = {True: [], False: []}
    for r in rounds:
        bench = benchmark_name(round_table(r), name)
        got = store.records(
            "SELECT bool_or(verdict = ?) AS valid FROM results WHERE round = ? AND suite = ? AND benchmark = ?",
            [VALID, r, INFERENCE, bench],
        )
        if got and got[0]["valid"] is not None:
            found[bool(got[0]["valid"])].append(r)
    return max(found[True] or found[False], key=_order, default=None)


__all__ = ["MAX_PEERS", "Peer", "Placement", "compare", "newest_round", "place"]
