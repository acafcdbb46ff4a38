"""The database file: its tables, its schema version, and the one way rows go in and come out.

One DuckDB file a user can copy (DuckDB and pyarrow are the `results` extra, imported here on first
use; without them every `proctor results` command says what to install). Tables:

- `results`: one row per result (an inference result folder, or a training benchmark folder):
  where it stands (round, suite, division, category, availability, submitter, system, accelerator
  and counts, framework), what it measured (benchmark, scenario, metric, value, units, direction,
  value per accelerator, power and efficiency) and proctor's verdict with its error and warning counts.
- `findings`: every finding of proctor's checkers, tied to the result it is about (`result_path`)
  or, when it is about the submitter's folder or a system description, to the unit (`result_path`
  NULL, `system` set for a system description).
- `units`: one row per submitter folder ingested (the unit that is checked, skipped or replaced
  whole), with the fingerprint of its files and the proctor that checked it.
- `meta`: the schema version.

Rows are keyed by (round, suite, unit) and the result's path in the tree; a unit is replaced in one
transaction, so an interrupted ingest leaves every unit either as it was or new.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from proctor.errors import ResultsError
from proctor.trees import DIR, FILE, LINK, MISSING, kind, show

SCHEMA_VERSION = 1
DB_ENV = "PROCTOR_RESULTS_DB"
DB_NAME = "results.duckdb"
INSTALL = 'pip install -e ".[results]"'
MAX_TEXT = 2000  # characters of one stored text value (a finding's message, a system's name)

# (column, DuckDB type, Arrow type name): one list, read by the DDL, the Arrow batches and the docs.
RESULTS: tuple[tuple[str, str, str], ...] = (
    ("round", "VARCHAR", "string"),  # v4.1 ... v6.1, for both suites
    ("suite", "VARCHAR", "string"),  # inference | training
    ("unit", "VARCHAR", "string"),  # the submitter folder: closed/ACME (inference), ACME (training)
    ("division", "VARCHAR", "string"),
    ("category", "VARCHAR", "string"),  # datacenter | edge | datacenter,edge (inference system_type)
    ("availability", "VARCHAR", "string"),  # the system description's status
    ("submitter", "VARCHAR", "string"),
    ("system", "VARCHAR", "string"),  # the system folder's name
    ("system_name", "VARCHAR", "string"),  # the description's system_name
    ("accelerator", "VARCHAR", "string"),
    ("accelerators_per_node", "INTEGER", "int32"),
    ("nodes", "INTEGER", "int32"),
    ("accelerators", "INTEGER", "int32"),  # per node x nodes
    ("host_processor", "VARCHAR", "string"),
    ("framework", "VARCHAR", "string"),
    ("benchmark", "VARCHAR", "string"),  # the round table's name (one spelling for every submitter)
    ("benchmark_folder", "VARCHAR", "string"),  # the folder as published
    ("scenario", "VARCHAR", "string"),  # "" for training
    ("metric", "VARCHAR", "string"),
    ("value", "DOUBLE", "float64"),
    ("units", "VARCHAR", "string"),
    ("higher_is_better", "BOOLEAN", "bool_"),
    ("per_accelerator", "DOUBLE", "float64"),  # value / accelerators, throughput metrics only
    ("inferred_from", "VARCHAR", "string"),
    ("power", "DOUBLE", "float64"),
    ("power_units", "VARCHAR", "string"),
    ("efficiency", "DOUBLE", "float64"),
    ("verdict", "VARCHAR", "string"),  # VALID | INVALID
    ("errors", "INTEGER", "int32"),
    ("warnings", "INTEGER", "int32"),
    ("path", "VARCHAR", "string"),  # the result's folder, relative to the tree
    ("tree", "VARCHAR", "string"),  # the tree it was read from
)
FINDINGS: tuple[tuple[str, str, str], ...] = (
    ("round", "VARCHAR", "string"),
    ("suite", "VARCHAR", "string"),
    ("unit", "VARCHAR", "string"),
    ("result_path", "VARCHAR", "string"),  # the result it is about; NULL: the unit's
    ("system", "VARCHAR", "string"),  # set when it is about a system description
    ("severity", "VARCHAR", "string"),
    ("rule", "VARCHAR", "string"),
    ("path", "VARCHAR", "string"),  # relative to the tree
    ("line", "INTEGER", "int32"),
    ("key", "VARCHAR", "string"),
    ("message", "VARCHAR", "string"),
    ("source", "VARCHAR", "string"),
)
UNITS: tuple[tuple[str, str, str], ...] = (
    ("round", "VARCHAR", "string"),
    ("suite", "VARCHAR", "string"),
    ("unit", "VARCHAR", "string"),
    ("tree", "VARCHAR", "string"),
    ("fingerprint", "VARCHAR", "string"),
    ("files", "BIGINT", "int64"),
    ("bytes", "BIGINT", "int64"),
    ("results", "INTEGER", "int32"),
    ("invalid", "INTEGER", "int32"),
    ("findings", "INTEGER", "int32"),
    ("checked_by", "VARCHAR", "string"),
    ("seconds", "DOUBLE", "float64"),
)
TABLES = {"results": RESULTS, "findings": FINDINGS, "units": UNITS}


def duckdb() -> Any:
    """The duckdb module, or one line saying how to install it."""
    try:
        return importlib.import_module("duckdb")
    except ImportError:
        raise ResultsError(f"proctor results needs DuckDB: {INSTALL} (or pip install duckdb pyarrow)") from None


def pyarrow() -> Any:
    try:
        return importlib.import_module("pyarrow")
    except ImportError:
        raise ResultsError(f"proctor results needs pyarrow: {INSTALL} (or pip install pyarrow)") from None


def default_path() -> Path:
    """$PROCTOR_RESULTS_DB, else results.duckdb in the user's data folder (XDG_DATA_HOME)."""
    given = os.environ.get(DB_ENV, "").strip()
    if given:
        return Path(given).expanduser()
    data = os.environ.get("XDG_DATA_HOME", "").strip()
    base = Path(data).expanduser() if data else Path.home() / ".local" / "share"
    return base / "proctor" / DB_NAME


def text(value: Any, limit: int = MAX_TEXT) -> str | None:
    """A value as storable text: valid UTF-8 (a file name's undecodable bytes become U+FFFD), bounded."""
    if value is None:
        return None
    s = value if isinstance(value, str) else str(value)
    s = s[: limit + 1]
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        s = s.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    s = s.replace("\x00", "\ufffd")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _ddl(name: str, columns: Sequence[tuple[str, str, str]]) -> str:
    return f"CREATE TABLE IF NOT EXISTS {name} (" + ", ".join(f'"{c}" {t}' for c, t, _ in columns) + ")"


def _arrow_schema(columns: Sequence[tuple[str, str, str]]) -> Any:
    pa = pyarrow()
    return pa.schema([(c, getattr(pa, t)()) for c, _, t in columns])


def _clean_row(row: Mapping[str, Any], columns: Sequence[tuple[str, str, str]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for c, _, t in columns:
        v = row.get(c)
        out[c] = text(v) if t == "string" and v is not None else v
    return out


class Store:
    """An open results database (`write`: created when missing, schema made or checked)."""

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, write: bool = False, sandbox: bool = False
    ) -> None:
        db = duckdb()  # missing: one line naming the extra, before anything else is said
        self.path = Path(path).expanduser() if path is not None else default_path()
        self.write = write
        got = kind(self.path)
        if got == DIR:
            raise ResultsError(f"--db {show(self.path)}: a folder; give the database file (e.g. {DB_NAME})")
        if got not in (FILE, MISSING, LINK):  # the user's own file: a link to it is theirs
            raise ResultsError(f"--db {show(self.path)}: not a regular file ({got})")
        if not write and got == MISSING:
            raise ResultsError(
                f"--db {show(self.path)}: no results database there; make one with "
                "'proctor results ingest DIR' (or give --db FILE)"
            )
        if write and got == MISSING:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ResultsError(f"--db {show(self.path)}: cannot create its folder ({exc.strerror or exc})") from None
        try:
            # sandbox (a user's SQL): no file outside the database read or written by the query, so a
            # query pasted from elsewhere cannot reach the file system
            config = {"enable_external_access": False} if sandbox else {}
            self.con = db.connect(str(self.path), read_only=not write, config=config)
        except Exception as exc:  # noqa: BLE001 - duckdb raises its own IOException / lock errors
            raise ResultsError(_open_error(self.path, exc)) from None
        try:
            self._schema()
        except BaseException:
            self.con.close()
            raise

    # --- the schema --------------------------------------------------------------------------------
    def _schema(self) -> None:
        tables = {r[0] for r in self.con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if "meta" not in tables:
            if tables:
                raise ResultsError(
                    f"--db {show(self.path)}: a DuckDB database, but not proctor's results database "
                    f"(it has tables {', '.join(sorted(tables)[:5])}); give another --db FILE"
                )
            if not self.write:
                raise ResultsError(f"--db {show(self.path)}: an empty database; fill it with 'proctor results ingest DIR'")
            self.con.execute("BEGIN TRANSACTION")
            self.con.execute("CREATE TABLE meta (key VARCHAR, value VARCHAR)")
            for name, columns in TABLES.items():
                self.con.execute(_ddl(name, columns))
            self.con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
            self.con.execute("COMMIT")
            return
        rows = self.con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
        version = rows[0][0] if rows else None
        if version != str(SCHEMA_VERSION):
            raise ResultsError(
                f"--db {show(self.path)}: schema version {version!r}, this proctor reads version {SCHEMA_VERSION}; "
                "ingest into a new --db FILE (the published trees ingest again as they were)"
            )

    # --- rows --------------------------------------------------------------------------------------
    def unit(self, round_: str, suite: str, unit: str) -> dict[str, Any] | None:
        """The stored record of one unit, or None."""
        cur = self.con.execute(
            "SELECT * FROM units WHERE round = ? AND suite = ? AND unit = ?", [round_, suite, unit]
        )
        names = [d[0] for d in cur.description]
        rows = cur.fetchall()  # all: duckdb 2 refuses the next statement while a result is unread
        return dict(zip(names, rows[0], strict=True)) if rows else None

    def units(self, round_: str, suite: str, tree: str) -> list[str]:
        rows = self.con.execute(
            "SELECT unit FROM units WHERE round = ? AND suite = ? AND tree = ? ORDER BY unit", [round_, suite, tree]
        ).fetchall()
        return [r[0] for r in rows]

    def move_unit(self, round_: str, suite: str, unit: str, tree: str) -> None:
        """The same files found in another tree (another clone of the round): point the rows there."""
        self.con.execute("BEGIN TRANSACTION")
        for table in TABLES:
            if "tree" in {c for c, _, _ in TABLES[table]}:
                self.con.execute(
                    f"UPDATE {table} SET tree = ? WHERE round = ? AND suite = ? AND unit = ?", [tree, round_, suite, unit]
                )
        self.con.execute("COMMIT")

    def replace_unit(
        self, record: Mapping[str, Any], results: Iterable[Mapping[str, Any]], findings: Iterable[Mapping[str, Any]]
    ) -> None:
        """One unit's rows, replacing what was stored for it, in one transaction."""
        key = [record["round"], record["suite"], record["unit"]]
        self.con.execute("BEGIN TRANSACTION")
        try:
            for table in TABLES:
                self.con.execute(f"DELETE FROM {table} WHERE round = ? AND suite = ? AND unit = ?", key)
            self._append("results", results)
            self._append("findings", findings)
            self._append("units", [record])
            self.con.execute("COMMIT")
        except BaseException:
            self.con.execute("ROLLBACK")
            raise

    def remove_unit(self, round_: str, suite: str, unit: str) -> None:
        self.con.execute("BEGIN TRANSACTION")
        for table in TABLES:
            self.con.execute(f"DELETE FROM {table} WHERE round = ? AND suite = ? AND unit = ?", [round_, suite, unit])
        self.con.execute("COMMIT")

    def _append(self, table: str, rows: Iterable[Mapping[str, Any]]) -> None:
        columns = TABLES[table]
        batch = [_clean_row(r, columns) for r in rows]
        if not batch:
            return
        pa = pyarrow()
        tbl = pa.Table.from_pylist(batch, schema=_arrow_schema(columns))
        name = f"proctor_batch_{table}"
        self.con.register(name, tbl)
        try:
            self.con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM {name}")
        finally:
            self.con.unregister(name)

    def arrow(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        """The rows of a query as a pyarrow Table (an empty one for a statement without rows)."""
        rel = self.con.sql(sql, params=list(params)) if params else self.con.sql(sql)
        if rel is None:
            return pyarrow().table({})
        for name in ("to_arrow_table", "fetch_arrow_table", "arrow"):  # duckdb 2.x, 1.x
            fn = getattr(rel, name, None)
            if fn is not None:
                return fn()
        raise ResultsError("this duckdb cannot return Arrow tables; upgrade it: pip install -U duckdb")  # pragma: no cover

    def records(self, sql: str, params: Sequence[Any] | None = None) -> list[dict[str, Any]]:
        cur = self.con.execute(sql, list(params or []))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]

    def size(self) -> int:
        try:
            return self.path.stat().st_size
        except OSError:
            return 0

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _open_error(path: Path, exc: BaseException) -> str:
    why = " ".join(str(exc).split())[:300]
    if "lock" in why.lower():
        return (
            f"--db {show(path)}: in use by another process (DuckDB lets one process write a database at a "
            "time); wait for it to finish or give another --db FILE"
        )
    return f"--db {show(path)}: cannot be opened as a DuckDB database ({why}); give another --db FILE"


__all__ = [
    "DB_ENV",
    "FINDINGS",
    "INSTALL",
    "RESULTS",
    "SCHEMA_VERSION",
    "UNITS",
    "Store",
    "default_path",
    "duckdb",
    "pyarrow",
    "text",
]
