"""LLM dataset files besides JSONL: ShareGPT conversations, CSV, Parquet and the official MLPerf
pickled DataFrames, each read into `LLMSample`s under proctor's bounds; and `load_dataset`, the
samples of any dataset spec (files, synthetic, in-code).

- ShareGPT (`.json`; a `.jsonl` whose first line holds `conversations` too, and a `.json` whose
  first line holds `prompt` is proctor's JSONL: `sniff_json`): a JSON array of objects (or JSONL, one per line) whose `conversations` (or
  `messages`) list holds turns `{"from": "human"|"gpt", "value": ...}` (or `role`/`content`,
  `user`/`assistant`). The first human turn is the prompt, the first gpt turn after it the reference
  output. A conversation without a human turn, or of the wrong shape, is skipped and counted
  (`Loaded.skipped`, with the first reason); a file where every one is skipped is an error.
- CSV (`.csv`): a header row, then one sample per row; the prompt column (default `prompt`) and the
  optional output and max_tokens columns are named (`Columns`).
- Parquet (`.parquet`): the same named columns, read with pyarrow (the optional extra `parquet`).
- Pickle (`.pkl`): the official MLPerf LLM dataset files are pickled pandas DataFrames (`input`,
  `tok_input`, `output`/`gt_output`). Unpickling runs code from the file, so it is read only when
  the user says `allow_pickle` explicitly; pandas is needed and imported then.

Every reader bounds the file size (`MAX_FILE_BYTES`; a ShareGPT file, parsed whole,
`MAX_JSON_BYTES`), the sample count (`MAX_SAMPLES`) and each text cell (`MAX_LINE_BYTES`), and an
error is one line naming the file, the row (CSV: the line it ends on; Parquet and pickle: the row
from 1) and what to do.
"""

from __future__ import annotations

import csv
import importlib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from proctor.clients.llm_dataset import (
    MAX_LINE_BYTES,
    MAX_SAMPLES,
    MAX_TOKEN_ID,
    DatasetSpec,
    LLMSample,
    load_jsonl,
    synthetic,
)
from proctor.errors import ConfigError

MAX_FILE_BYTES = 4 << 30  # a whole-file format (JSON, Parquet, pickle) larger than this is refused
MAX_JSON_BYTES = 1 << 30  # a ShareGPT JSON array is parsed whole: its size bounds the memory
FORMATS = ("jsonl", "sharegpt", "csv", "parquet", "pickle")
EXTENSIONS = {
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "sharegpt", ".csv": "csv", ".parquet": "parquet",
    ".pq": "parquet", ".pkl": "pickle", ".pickle": "pickle",
}
HUMAN_ROLES = ("human", "user")
GPT_ROLES = ("gpt", "chatgpt", "assistant", "bard", "bing")
# the official MLPerf LLM dataset files' columns (language/*/dataset.py, evaluate-accuracy.py)
PICKLE_PROMPT, PICKLE_IDS, PICKLE_OUTPUTS = "input", "tok_input", ("output", "gt_output", "ref_output")


@dataclass(frozen=True, slots=True)
class Columns:
    """Which named columns hold what (CSV, Parquet, pickle); None: that format's default."""

    prompt: str | None = None
    output: str | None = None
    max_tokens: str | None = None
    input_ids: str | None = None


@dataclass(slots=True)
class Loaded:
    samples: list[LLMSample]
    skipped: int = 0  # ShareGPT conversations of the wrong shape, left out
    first_skip: str = ""  # why the first one was left out (with its position)


def format_of(path: str | Path, fmt: str | None = None) -> str:
    """The dataset format: the explicit one, else by the file's extension."""
    if fmt:
        if fmt not in FORMATS:
            raise ConfigError(f"format={fmt!r}: expected one of {', '.join(FORMATS)}", key="format")
        return fmt
    ext = Path(path).suffix.lower()
    if ext not in EXTENSIONS:
        raise ConfigError(
            f"cannot tell the dataset format from '{ext or '(no extension)'}': give format= "
            f"({', '.join(FORMATS)})",
            file=str(path),
        )
    return EXTENSIONS[ext]


def _size(path: str | Path, limit: int) -> int:
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        raise ConfigError(f"cannot read the dataset ({exc.strerror})", file=str(path)) from None
    if size > limit:
        raise ConfigError(f"the file is over {limit >> 20} MiB; split the dataset", file=str(path))
    return size


# --- ShareGPT -------------------------------------------------------------------------------------


def conversation_sample(obj: Any) -> LLMSample | str:
    """A ShareGPT record to a sample, or the reason it is skipped."""
    if not isinstance(obj, dict):
        return f"expected an object, got {type(obj).__name__}"
    turns = obj.get("conversations", obj.get("messages"))
    if not isinstance(turns, list):
        return "no 'conversations' list"
    prompt: str | None = None
    for t in turns:
        if not isinstance(t, dict):
            return "a turn is not an object"
        role = t.get("from", t.get("role"))
        text = t.get("value", t.get("content"))
        if not isinstance(role, str) or not isinstance(text, str):
            return "a turn lacks 'from'/'value' strings"
        if len(text) > MAX_LINE_BYTES:
            return f"a turn is longer than {MAX_LINE_BYTES >> 20} MiB"
        role = role.lower()
        if prompt is None and role in HUMAN_ROLES:
            if not text:
                return "the first human turn is empty"
            prompt = text
        elif prompt is not None and role in GPT_ROLES:
            return LLMSample(prompt=prompt, output=text)
    return LLMSample(prompt=prompt) if prompt is not None else "no human turn"


def _records(path: str) -> Iterator[tuple[int, Any]]:
    """(position, record) of a ShareGPT file: a JSON array, or JSONL (one record per line)."""
    _size(path, MAX_JSON_BYTES)
    with open(path, "rb") as f:
        data = f.read(MAX_JSON_BYTES + 1)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data.lstrip()[:1] == b"[":
        try:
            arr = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise ConfigError(f"not valid JSON ({exc}); a ShareGPT file is an array of conversations",
                              file=path) from None
        except RecursionError:
            raise ConfigError("JSON nested too deeply", file=path) from None
        del data
        yield from enumerate(arr, 1)
        return
    for n, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        if len(raw) > MAX_LINE_BYTES:
            raise ConfigError(f"the line is longer than {MAX_LINE_BYTES >> 20} MiB", file=path, line=n)
        try:
            yield n, orjson.loads(raw)
        except (orjson.JSONDecodeError, RecursionError) as exc:
            yield n, exc


def load_sharegpt(path: str | Path) -> Loaded:
    """The samples of a ShareGPT file; malformed conversations are counted, not fatal."""
    p = str(path)
    out = Loaded([])
    for pos, rec in _records(p):
        s = "not valid JSON" if isinstance(rec, Exception) else conversation_sample(rec)
        if isinstance(s, str):
            out.skipped += 1
            if not out.first_skip:
                out.first_skip = f"conversation {pos}: {s}"
            continue
        out.samples.append(s)
        if len(out.samples) > MAX_SAMPLES:
            raise ConfigError(f"more than {MAX_SAMPLES} samples; split the dataset", file=p, line=pos)
    if not out.samples:
        why = f" ({out.skipped} skipped; first: {out.first_skip})" if out.skipped else ""
        raise ConfigError(f"the dataset holds no conversation with a human turn{why}", file=p)
    return out


# --- rows of named columns (CSV, Parquet, pickle) ------------------------------------------------


def _text(v: Any, path: str, row: int, col: str, *, required: bool) -> str | None:
    if v is None or (isinstance(v, float) and v != v):  # empty cell / NaN
        if required:
            raise ConfigError(f"column '{col}' is empty", file=path, line=row)
        return None
    if not isinstance(v, str):
        raise ConfigError(f"column '{col}' holds {type(v).__name__}, not text", file=path, line=row)
    if not v and not required:
        return None
    if len(v) > MAX_LINE_BYTES:
        raise ConfigError(f"column '{col}' is longer than {MAX_LINE_BYTES >> 20} MiB", file=path, line=row)
    if required and not v:
        raise ConfigError(f"column '{col}' is empty", file=path, line=row)
    return v


def _max_tokens(v: Any, path: str, row: int, col: str) -> int | None:
    if v is None or (isinstance(v, str) and not v.strip()) or (isinstance(v, float) and v != v):
        return None
    n: int | None = None
    if isinstance(v, str) and v.strip().isdigit() and len(v.strip()) <= 8:
        n = int(v)
    elif hasattr(v, "__index__") and not isinstance(v, bool):  # int, numpy integers
        n = int(v.__index__())
    if n is None or not 1 <= n <= 1_000_000:
        raise ConfigError(f"column '{col}' must be an integer 1..1000000, got {v!r:.40}", file=path, line=row)
    return n


def _ids(v: Any, path: str, row: int, col: str) -> tuple[int, ...] | None:
    if v is None or (isinstance(v, float) and v != v):
        return None
    if isinstance(v, str | bytes) or not hasattr(v, "__len__") or not hasattr(v, "__iter__"):
        raise ConfigError(f"column '{col}' must hold a list of token ids", file=path, line=row)
    if not 0 < len(v) <= MAX_LINE_BYTES // 2:
        raise ConfigError(f"column '{col}' must hold 1..{MAX_LINE_BYTES // 2} token ids", file=path, line=row)
    out: list[int] = []
    for t in v:
        if isinstance(t, bool | float) or not hasattr(t, "__index__") or not 0 <= int(t) <= MAX_TOKEN_ID:
            raise ConfigError(f"column '{col}' holds {t!r:.40}: token ids are integers 0..{MAX_TOKEN_ID}",
                              file=path, line=row)
        out.append(int(t))
    return tuple(out)


def samples_of_rows(
    rows: Iterable[tuple[int, dict[str, Any]]], names: list[str], cols: Columns, path: str, *,
    defaults: Columns | None = None, outputs: tuple[str, ...] = ("output",),
) -> list[LLMSample]:
    """(row number, row) of named columns to samples; `names`: the columns the file has (checked
    before any row). An empty cell is no value (an empty prompt is an error)."""
    d = defaults or Columns(prompt="prompt", max_tokens="max_tokens")
    ids_col = cols.input_ids or (d.input_ids if d.input_ids in names else None)
    prompt_col = cols.prompt or d.prompt
    if prompt_col not in names and ids_col is None:
        raise ConfigError(
            f"no column '{prompt_col}' (columns: {', '.join(names[:20])}); name it with prompt_column=",
            file=path,
        )
    if prompt_col not in names:
        prompt_col = None
    out_col = cols.output or next((c for c in outputs if c in names), None)
    mt_col = cols.max_tokens or (d.max_tokens if d.max_tokens in names else None)
    for given, key in ((cols.output, "output_column"), (cols.max_tokens, "max_tokens_column"),
                       (cols.input_ids, "input_ids_column")):
        if given is not None and given not in names:
            raise ConfigError(f"no column '{given}' (columns: {', '.join(names[:20])}); fix {key}=", file=path)
    samples: list[LLMSample] = []
    for n, row in rows:
        ids = _ids(row.get(ids_col), path, n, ids_col) if ids_col else None
        prompt = _text(row.get(prompt_col), path, n, prompt_col, required=ids is None) if prompt_col else None
        if prompt is None and ids is None:
            raise ConfigError(f"column '{prompt_col or ids_col}' is empty", file=path, line=n)
        output = _text(row.get(out_col), path, n, out_col, required=False) if out_col else None
        mt = _max_tokens(row.get(mt_col), path, n, mt_col) if mt_col else None
        samples.append(LLMSample(prompt, ids, output, mt))
        if len(samples) > MAX_SAMPLES:
            raise ConfigError(f"more than {MAX_SAMPLES} samples; split the dataset", file=path, line=n)
    if not samples:
        raise ConfigError("the dataset holds no samples", file=path)
    return samples


def load_csv(path: str | Path, cols: Columns = Columns()) -> Loaded:
    """A CSV file with a header row (UTF-8); the row numbers in errors are the file's lines."""
    p = str(path)
    _size(path, MAX_FILE_BYTES)
    csv.field_size_limit(MAX_LINE_BYTES)
    with open(path, encoding="utf-8-sig", newline="", errors="strict") as f:
        reader = csv.reader(f)
        try:
            header = next(reader, None)
            if header is None:
                raise ConfigError("the dataset holds no samples (no header row)", file=p)

            def rows() -> Iterator[tuple[int, dict[str, Any]]]:
                for r in reader:  # a row's number is the line it ends on (a quoted field may span lines)
                    if not any(r):
                        continue
                    if len(r) > len(header):
                        raise ConfigError(f"{len(r)} fields where the header names {len(header)}", file=p,
                                          line=reader.line_num)
                    yield reader.line_num, dict(zip(header, r, strict=False))

            return Loaded(samples_of_rows(rows(), list(header), cols, p))
        except csv.Error as exc:
            raise ConfigError(f"not valid CSV ({exc})", file=p, line=reader.line_num) from None
        except UnicodeDecodeError:
            raise ConfigError("not UTF-8 text; save the CSV as UTF-8", file=p, line=reader.line_num + 1) from None


def _optional(module: str, install: str, what: str, path: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(f"{what} needs {module.split('.')[0]}: pip install {install}", file=path) from None


def load_parquet(path: str | Path, cols: Columns = Columns()) -> Loaded:
    """A Parquet file with named columns, read with pyarrow (imported only here)."""
    p = str(path)
    _size(path, MAX_FILE_BYTES)
    pq = _optional("pyarrow.parquet", "proctor[parquet]", "a Parquet dataset", p)
    try:
        with open(p, "rb") as fh:  # closed here whatever pyarrow does
            meta = pq.ParquetFile(fh)
            md = meta.metadata
            if md.num_rows > MAX_SAMPLES:
                raise ConfigError(f"more than {MAX_SAMPLES} samples; split the dataset", file=p)
            # the size it decompresses to, as its footer states it: a small file must not unpack to 100 GB
            if sum(md.row_group(k).total_byte_size for k in range(md.num_row_groups)) > MAX_FILE_BYTES:
                raise ConfigError(f"the data is over {MAX_FILE_BYTES >> 20} MiB uncompressed; split the dataset",
                                  file=p)
            names = list(meta.schema_arrow.names)
            table = meta.read()
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - pyarrow raises its own error types for a bad file
        why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise ConfigError(f"not a readable Parquet file ({why})", file=p) from None
    return Loaded(samples_of_rows(enumerate(table.to_pylist(), 1), names, cols, p))


def load_pickle(path: str | Path, cols: Columns = Columns(), *, allow_pickle: bool = False) -> Loaded:
    """An official MLPerf LLM dataset file (a pickled pandas DataFrame): only with allow_pickle."""
    p = str(path)
    if not allow_pickle:
        raise ConfigError(
            "loading a pickle runs code from the file: give allow_pickle=1 (--allow-pickle) only for a "
            "file you trust",
            file=p,
        )
    _size(path, MAX_FILE_BYTES)
    pd = _optional("pandas", "pandas", "a pickled DataFrame", p)
    try:
        df = pd.read_pickle(p)
    except Exception as exc:  # noqa: BLE001 - unpickling can raise anything
        why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise ConfigError(f"not a readable pickled DataFrame ({why})", file=p) from None
    if not isinstance(df, pd.DataFrame):
        raise ConfigError(f"the pickle holds a {type(df).__name__}, not a pandas DataFrame", file=p)
    if len(df) > MAX_SAMPLES:
        raise ConfigError(f"more than {MAX_SAMPLES} samples; split the dataset", file=p)
    names = [str(c) for c in df.columns]
    defaults = Columns(prompt=PICKLE_PROMPT, max_tokens="max_tokens", input_ids=PICKLE_IDS)
    rows = enumerate((dict(zip(names, r, strict=True)) for r in df.itertuples(index=False, name=None)), 1)
    return Loaded(samples_of_rows(rows, names, cols, p, defaults=defaults, outputs=PICKLE_OUTPUTS))


SNIFF_BYTES = 1 << 16


def sniff_json(path: str | Path, kind: str) -> str:
    """.json / .jsonl by content: an array, or a first line holding `conversations`/`messages`, is
    ShareGPT; a first line holding `prompt`/`input_ids` is proctor's JSONL; else as the extension says."""
    with open(path, "rb") as f:
        head = f.read(SNIFF_BYTES)
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if head[:1] == b"[":
        return "sharegpt"
    first = head.split(b"\n", 1)[0]
    try:
        obj = orjson.loads(first)
    except (orjson.JSONDecodeError, RecursionError):
        return kind
    if isinstance(obj, dict):
        if "conversations" in obj or "messages" in obj:
            return "sharegpt"
        if "prompt" in obj or "input_ids" in obj:
            return "jsonl"
    return kind


def load_file(path: str | Path, fmt: str | None = None, cols: Columns = Columns(), *,
              allow_pickle: bool = False) -> Loaded:
    """A dataset file in its format (by extension unless given)."""
    kind = format_of(path, fmt)
    if not Path(path).is_file():
        raise ConfigError("no such file", file=str(path))
    if not fmt and kind in ("jsonl", "sharegpt"):
        kind = sniff_json(path, kind)
    if kind == "jsonl":
        return Loaded(load_jsonl(path))
    if kind == "sharegpt":
        return load_sharegpt(path)
    if kind == "csv":
        return load_csv(path, cols)
    if kind == "parquet":
        return load_parquet(path, cols)
    return load_pickle(path, cols, allow_pickle=allow_pickle)


def load_dataset(spec: DatasetSpec) -> list[LLMSample]:
    """The samples a dataset spec names (the engine's process and each worker load them alike)."""
    kind = spec[0]
    if kind == "jsonl":
        return load_jsonl(spec[1])
    if kind == "file":
        return load_file(spec[1], spec[2], Columns(*spec[3]), allow_pickle=bool(spec[4])).samples
    if kind == "synthetic":
        return synthetic(int(spec[1]), str(spec[2]), str(spec[3]), int(spec[4]))
    if kind == "samples":
        return list(spec[1])
    raise ConfigError(f"unknown dataset spec {kind!r}", key="dataset")


__all__ = [
    "EXTENSIONS",
    "FORMATS",
    "MAX_FILE_BYTES",
    "Columns",
    "Loaded",
    "conversation_sample",
    "format_of",
    "load_csv",
    "load_dataset",
    "load_file",
    "load_parquet",
    "load_pickle",
    "load_sharegpt",
    "samples_of_rows",
    "sniff_json",
]
