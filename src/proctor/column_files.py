"""Rows of named, typed columns written as JSON Lines, CSV or Parquet, the format by the extension.

One writer for every table proctor hands to other tools (the per-request export, a sweep's points),
so the three formats hold the same columns with the same values: a JSON null is an empty CSV cell
and a Parquet null. Rows come a chunk of whole columns at a time (`write`), so memory holds one
chunk, and Parquet gets one row group per chunk. pyarrow is imported only for Parquet; without it
the one-line error names the extra to install. The JSONL writer formats whole columns to JSON text
(a dict per row through an encoder is several times slower); a `meta` dict, when given, is the
JSONL file's first line and the Parquet schema's metadata (CSV has no place for it).
"""

from __future__ import annotations

import csv
import importlib
import math
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import IO, Any

import orjson

from proctor.errors import ConfigError

FORMATS = ("jsonl", "csv", "parquet")
EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
KINDS = ("int", "float", "str", "bool")
PARQUET_EXTRA = "pip install 'proctor[parquet]'"
META_KEY = b"proctor"  # the Parquet schema metadata key holding `meta` (JSON)

Column = tuple[str, str]  # (name, kind): kind one of KINDS; every value may be None (null)


def file_format(path: str | Path, key: str) -> str:
    """The format a file's extension names; ConfigError naming `key` (the option or parameter) else."""
    ext = Path(path).suffix.lower()
    if ext not in EXTENSIONS:
        raise ConfigError(
            f"cannot tell the format of {str(path)[:200]} from '{ext or '(no extension)'}'; end its name in "
            f"{', '.join(sorted(EXTENSIONS))}",
            key=key,
        )
    return EXTENSIONS[ext]


def pyarrow_parquet(what: str, key: str | None = None) -> ModuleType:
    """pyarrow.parquet, or a ConfigError saying `what` needs the extra (one line)."""
    try:
        importlib.import_module("pyarrow")
        return importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise ConfigError(f"{what} needs pyarrow: {PARQUET_EXTRA}", key=key) from None


def _json_texts(values: list[Any], kind: str) -> list[str]:
    """A column's values as JSON text (None: null; a float that is not finite: null)."""
    if kind == "int":
        return ["null" if v is None else str(int(v)) for v in values]
    if kind == "bool":
        return ["null" if v is None else ("true" if v else "false") for v in values]
    if kind == "float":
        return ["null" if v is None or not math.isfinite(v) else orjson.dumps(float(v)).decode() for v in values]
    cache: dict[str, str] = {}
    out = []
    for v in values:
        if v is None:
            out.append("null")
            continue
        text = cache.get(v)
        if text is None:
            text = cache[v] = orjson.dumps(str(v)).decode()
        out.append(text)
    return out


def _csv_cell(v: Any, kind: str) -> Any:
    if v is None or (kind == "float" and not math.isfinite(v)):
        return ""
    if kind == "bool":
        return "true" if v else "false"
    return v


class ColumnWriter:
    """Write chunks of columns to `path` in `fmt` (by the extension when None); `close` finishes the
    file (Parquet writes its footer then). Use as a context manager."""

    def __init__(
        self, path: str | Path, columns: Sequence[Column], *, fmt: str | None = None,
        meta: dict[str, Any] | None = None, key: str = "export",
    ) -> None:
        self.path = Path(path)
        self.columns = list(columns)
        for name, kind in self.columns:
            if kind not in KINDS:
                raise ValueError(f"column {name!r}: kind {kind!r} is not one of {KINDS}")
        self.fmt = fmt or file_format(path, key)
        self.rows = 0
        self._file: IO[Any] | None = None
        self._parquet: Any = None
        self._pa: Any = None
        if self.fmt == "parquet":
            pq = pyarrow_parquet(f"a Parquet file ({self.path.name})", key)
            pa = self._pa = importlib.import_module("pyarrow")
            types = {"int": pa.int64(), "float": pa.float64(), "str": pa.string(), "bool": pa.bool_()}
            schema = pa.schema([(name, types[kind]) for name, kind in self.columns])
            if meta is not None:
                schema = schema.with_metadata({META_KEY: orjson.dumps(meta)})
            self._schema = schema
            self._parquet = pq.ParquetWriter(str(self.path), schema)
        elif self.fmt == "csv":
            self._file = open(self.path, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed in close()
            self._csv = csv.writer(self._file)
            self._csv.writerow([name for name, _ in self.columns])
        elif self.fmt == "jsonl":
            self._file = open(self.path, "wb")  # noqa: SIM115 - closed in close()
            if meta is not None:
                self._file.write(orjson.dumps(meta) + b"\n")
            self._template = "{" + ",".join(f"{orjson.dumps(name).decode()}:%s" for name, _ in self.columns) + "}\n"
        else:
            raise ConfigError(f"{key}: format {self.fmt!r} is not one of {', '.join(FORMATS)}", key=key)

    def write(self, values: Sequence[list[Any]]) -> None:
        """One chunk: a list of values per column, in the columns' order, all of one length."""
        if len(values) != len(self.columns):
            raise ValueError(f"{len(values)} columns given, {len(self.columns)} declared")
        n = len(values[0]) if values else 0
        if any(len(v) != n for v in values):
            raise ValueError("the columns of a chunk differ in length")
        if n == 0:
            return
        self.rows += n
        if self._parquet is not None:
            pa = self._pa
            arrays: list[Any] = []
            for (_, kind), col in zip(self.columns, values, strict=True):
                if kind == "float":
                    col = [None if v is None or not math.isfinite(v) else float(v) for v in col]
                arrays.append(pa.array(col, type=self._schema.field(len(arrays)).type))
            self._parquet.write_table(pa.Table.from_arrays(arrays, schema=self._schema))
        elif self.fmt == "csv":
            kinds = [kind for _, kind in self.columns]
            self._csv.writerows([[_csv_cell(v, k) for v, k in zip(row, kinds, strict=True)]
                                 for row in zip(*values, strict=True)])
        else:
            assert self._file is not None
            texts = [_json_texts(list(col), kind) for (_, kind), col in zip(self.columns, values, strict=True)]
            self._file.write("".join([self._template % row for row in zip(*texts, strict=True)]).encode())

    def close(self) -> None:
        if self._parquet is not None:
            self._parquet.close()
            self._parquet = None
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> ColumnWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def write_table(
    path: str | Path, columns: Sequence[Column], values: Sequence[list[Any]], *, fmt: str | None = None,
    meta: dict[str, Any] | None = None, key: str = "export",
) -> int:
    """A whole (small) table in one call; the rows written."""
    with ColumnWriter(path, columns, fmt=fmt, meta=meta, key=key) as w:
        w.write(values)
        return w.rows


__all__ = [
    "EXTENSIONS",
    "FORMATS",
    "KINDS",
    "META_KEY",
    "PARQUET_EXTRA",
    "Column",
    "ColumnWriter",
    "file_format",
    "pyarrow_parquet",
    "write_table",
]
