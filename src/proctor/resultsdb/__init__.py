"""Your result beside the published ones: every round's results in one embedded database.

`proctor results ingest DIR...` reads published inference and training results trees (as cloned:
whole rounds or some submitters) into one DuckDB file, one row per result with proctor's verdict
and findings (`ingest`, `store`); `proctor results compare RUN_OR_PACKAGE` places one's own run or
package among the results of the same round, benchmark and scenario (`compare`, `page`);
`proctor results query SQL` and this module's `query` answer anything else.

    from proctor.resultsdb import query
    best = query("SELECT round, accelerator, max(per_accelerator) AS best FROM results "
                 "WHERE scenario = 'Offline' AND units = 'tokens/s' GROUP BY ALL ORDER BY best DESC")

DuckDB and pyarrow are the `results` extra (`pip install -e ".[results]"`), imported on first use;
`query` returns a pyarrow Table, or a pandas DataFrame with `pandas=True` when pandas is installed.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from proctor.errors import ResultsError
from proctor.resultsdb.store import Store, default_path


class ResultsDB:
    """An open results database: read-only (queries cannot touch files outside it) unless `write`."""

    def __init__(self, db: str | os.PathLike[str] | None = None, *, write: bool = False) -> None:
        self.store = Store(db, write=write, sandbox=not write)

    @property
    def path(self) -> Path:
        return self.store.path

    def query(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        """The rows of `sql` as a pyarrow Table."""
        return run_query(self.store, sql, params)

    def frame(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        """The rows of `sql` as a pandas DataFrame (pandas must be installed)."""
        return _pandas(self.query(sql, params))

    def ingest(
        self, *directories: str | os.PathLike[str], round: str | None = None, suite: str | None = None,
        force: bool = False,
    ) -> list[Any]:
        """`proctor results ingest`: each tree's statistics (ingest.TreeStats)."""
        from proctor.resultsdb.ingest import ingest, plans

        return ingest(self.store, plans([Path(d) for d in directories], round, suite), force=force)

    def compare(self, path: str | os.PathLike[str], **options: Any) -> list[Any]:
        """`proctor results compare`: a compare.Placement per own result (options as compare.compare's)."""
        from proctor.resultsdb.compare import compare

        return compare(self.store, Path(path), **options)

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> ResultsDB:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def connect(db: str | os.PathLike[str] | None = None, *, write: bool = False) -> ResultsDB:
    """The database at `db` (default: $PROCTOR_RESULTS_DB or the user's data folder)."""
    return ResultsDB(db, write=write)


def query(
    sql: str, db: str | os.PathLike[str] | None = None, *, params: Sequence[Any] | None = None, pandas: bool = False
) -> Any:
    """The rows of `sql` on the database at `db`: a pyarrow Table, or a pandas DataFrame with `pandas=True`."""
    with ResultsDB(db) as rdb:
        table = rdb.query(sql, params)
    return _pandas(table) if pandas else table


def run_query(store: Store, sql: str, params: Sequence[Any] | None) -> Any:
    if not sql.strip():
        raise ResultsError("the query is empty; give SQL such as: SELECT * FROM results LIMIT 10")
    try:
        return store.arrow(sql, params)
    except ResultsError:
        raise
    except Exception as exc:  # noqa: BLE001 - duckdb's own error types: a wrong query is the user's input
        why = " ".join(str(exc).split())[:500]
        raise ResultsError(f"the query failed: {why}") from None


def _pandas(table: Any) -> Any:
    try:
        importlib.import_module("pandas")
    except ImportError:
        raise ResultsError("a DataFrame needs pandas: pip install pandas (or use the Arrow table)") from None
    return table.to_pandas()


__all__ = ["ResultsDB", "connect", "default_path", "query", "run_query"]
