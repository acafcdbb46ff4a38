"""LLM dataset files besides JSONL: ShareGPT conversations, JSON records, CSV, Parquet and the
official MLPerf pickled DataFrames, each read into `LLMSample`s under proctor's bounds; and
`load_dataset`, the samples of any dataset spec (files, synthetic, in-code).

Which columns hold what is told by the file's layout (`LAYOUTS`, the layouts people download, as
data): proctor's own (`prompt` or `input_ids`, `output`, `max_tokens`), ShareGPT (a `conversations`
or `messages` list of turns), MLPerf's processed datasets (llama2-70b's OpenOrca and llama3.1's
pickles and JSON, gpt-oss-120b's Parquet/pickle: `input`, `tok_input` or `input_tokens`, `output`,
`gt_output` or `ground_truth`) and OpenOrca as downloaded (`system_prompt`, `question`,
`response`). The first layout whose prompt columns the file has is used; a column named by the user
(`prompt_column=` ...) wins over it. A file of no known layout is one error naming the file, the
columns it has and the columns expected.

- JSON (`.json`; a `.jsonl` whose first line is not proctor's JSONL): a JSON array of objects, or
  one object per line. Records with `conversations` are ShareGPT: the first human turn is the
  prompt, a system turn before it the system prompt, the first gpt turn after it the reference
  output; a conversation of the wrong shape is skipped and counted (`Loaded.skipped`, with the
  first reason); a file where every one is skipped is an error. Other records are rows of named
  columns (the keys of the first record).
- CSV (`.csv`): a header row, then one sample per row.
- Parquet (`.parquet`): read with pyarrow (the optional extra `parquet`), a batch of rows at a time
  and only the columns used; a ShareGPT `conversations` column holds its turns as structs.
- Pickle (`.pkl`): the official MLPerf LLM dataset files are pickled pandas DataFrames. Unpickling
  runs code from the file, so it is read only when the user says `allow_pickle` explicitly; pandas
  is needed and imported then.

Every reader bounds the file size (`MAX_FILE_BYTES`; a JSON file, parsed whole, `MAX_JSON_BYTES`),
the sample count (`MAX_SAMPLES`) and each text cell (`MAX_LINE_BYTES`), and an error is one line
naming the file, the row (CSV: the line it ends on; others: the row from 1) and what to do.
"""

from __future__ import annotations

import csv
import importlib
import os
from collections.abc import Iterable, Iterator
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
from proctor.trees import read_at_most
from proctor.typed_records import record
from proctor.untrusted_text import printable

MAX_FILE_BYTES = 4 << 30  # a whole-file format (JSON, Parquet, pickle) larger than this is refused
MAX_JSON_BYTES = 1 << 30  # a JSON file is parsed whole: its size bounds the memory
PARQUET_BATCH = 4096  # Parquet rows decoded at a time (only the columns used)
# "json": JSON records (ShareGPT conversations or named columns); "sharegpt" is the same reader
FORMATS = ("jsonl", "json", "sharegpt", "csv", "parquet", "pickle")
EXTENSIONS = {
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".parquet": "parquet",
    ".pq": "parquet", ".pkl": "pickle", ".pickle": "pickle",
}
HUMAN_ROLES = ("human", "user")
GPT_ROLES = ("gpt", "chatgpt", "assistant", "bard", "bing")
SYSTEM_ROLES = ("system",)
MAX_TURNS = 100_000  # turns in one conversation (a longer list is skipped, not walked)


@record(frozen=True, slots=True)
class Layout:
    """A dataset layout as downloaded: the columns that hold each part, each list in the order they
    are looked for (the first the file has is used). `source`: where the names come from."""

    name: str
    prompt: tuple[str, ...] = ()
    input_ids: tuple[str, ...] = ()
    output: tuple[str, ...] = ()
    max_tokens: tuple[str, ...] = ()
    system: tuple[str, ...] = ()  # a system prompt beside the prompt (chat: a system message)
    conversations: tuple[str, ...] = ()  # ShareGPT turns, instead of a prompt column
    source: str = ""

    @property
    def keys(self) -> tuple[str, ...]:
        """The columns that tell this layout (a prompt, its token ids, or conversations)."""
        return (*self.prompt, *self.input_ids, *self.conversations)

    def expected(self) -> str:
        return f"{' or '.join(self.keys)} ({self.name})"


# The layouts, in the order they are tried. The MLPerf names are read from the reference
# implementation (github.com/mlcommons/inference): language/llama2-70b/processorca.py (input,
# tok_input, output renamed from OpenOrca's response), language/llama3.1-405b/dataset.py and
# evaluate-accuracy.py (input, tok_input, gt_output), language/llama3.1-8b/download_cnndm.py (a JSON
# array of input, tok_input, output), language/gpt-oss-120b/utils/tokenization.py (tok_input, from
# v4.0 input_tokens) and eval_mlperf_accuracy.py (ground_truth).
LAYOUTS: tuple[Layout, ...] = (
    Layout("proctor", prompt=("prompt",), input_ids=("input_ids",), output=("output",), max_tokens=("max_tokens",),
           source="proctor's JSONL columns"),
    Layout("ShareGPT", conversations=("conversations", "messages"), source="ShareGPT: turns of from/value"),
    Layout("MLPerf llama2-70b, llama3.1, gpt-oss-120b", prompt=("input", "input_text"),
           input_ids=("tok_input", "input_tokens"), output=("output", "gt_output", "ref_output", "ground_truth"),
           max_tokens=("max_tokens",), source="the MLPerf reference's processed datasets"),
    Layout("OpenOrca", prompt=("question",), output=("response",), system=("system_prompt",),
           source="Open-Orca/OpenOrca: id, system_prompt, question, response"),
)


@record(frozen=True, slots=True)
class Columns:
    """Which named columns hold what (CSV, Parquet, pickle, JSON records); None: the layout's."""

    prompt: str | None = None
    output: str | None = None
    max_tokens: str | None = None
    input_ids: str | None = None


@record(frozen=True, slots=True)
class Picked:
    """The columns a file's samples are read from (None: the file has no such column)."""

    layout: str
    prompt: str | None = None
    input_ids: str | None = None
    output: str | None = None
    max_tokens: str | None = None
    system: str | None = None
    conversations: str | None = None

    @property
    def used(self) -> list[str]:
        return [c for c in (self.prompt, self.input_ids, self.output, self.max_tokens, self.system,
                            self.conversations) if c is not None]


def _shown(names: list[str]) -> str:
    """The columns a file has, for an error line (bounded, printable)."""
    text = ", ".join(printable(str(n), 40) for n in names[:20]) + (f", ... ({len(names)} in all)" if len(names) > 20 else "")
    return text or "none"


def pick_columns(names: list[str], cols: Columns, path: str) -> Picked:
    """The columns to read: the user's where named (each must be there), the rest from the first
    layout whose prompt, token-id or conversations columns the file has. ConfigError naming the
    file, the columns found and the columns expected when no layout fits."""
    have = set(names)
    for given, key in ((cols.output, "output_column"), (cols.max_tokens, "max_tokens_column"),
                       (cols.input_ids, "input_ids_column")):
        if given is not None and given not in have:
            raise ConfigError(f"no column '{given}' (columns: {_shown(names)}); fix {key}=", file=path)
    layout = next((lay for lay in LAYOUTS if have & set(lay.keys)), None)

    def first(candidates: tuple[str, ...]) -> str | None:
        return next((c for c in candidates if c in have), None)

    ids = cols.input_ids or (first(layout.input_ids) if layout else None)
    if cols.prompt is not None:
        if cols.prompt not in have and ids is None:
            raise ConfigError(f"no column '{cols.prompt}' (columns: {_shown(names)}); fix prompt_column=", file=path)
        prompt = cols.prompt if cols.prompt in have else None
    else:
        prompt = first(layout.prompt) if layout else None
    if layout is None and prompt is None and ids is None:
        expected = "; ".join(lay.expected() for lay in LAYOUTS)
        raise ConfigError(
            f"no prompt column: expected {expected} (columns: {_shown(names)}); name it with prompt_column= "
            "or input_ids_column=",
            file=path,
        )
    base = layout or LAYOUTS[0]
    return Picked(
        layout=base.name if layout else "named columns",
        prompt=prompt,
        input_ids=ids,
        output=cols.output or first(base.output),
        max_tokens=cols.max_tokens or first(base.max_tokens),
        system=first(base.system) if prompt is not None and prompt in base.prompt else None,
        conversations=first(base.conversations) if prompt is None and ids is None else None,
    )


@record(slots=True)
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
    if len(turns) > MAX_TURNS:
        return f"more than {MAX_TURNS} turns"
    prompt: str | None = None
    system: str | None = None
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
        if prompt is None and role in SYSTEM_ROLES:
            system = text or None
        elif prompt is None and role in HUMAN_ROLES:
            if not text:
                return "the first human turn is empty"
            prompt = text
        elif prompt is not None and role in GPT_ROLES:
            return LLMSample(prompt=prompt, output=text, system=system)
    return LLMSample(prompt=prompt, system=system) if prompt is not None else "no human turn"


def _records(path: str) -> Iterator[tuple[int, Any]]:
    """(position, record) of a JSON file: a JSON array, or JSONL (one record per line)."""
    _size(path, MAX_JSON_BYTES)
    with open(path, "rb") as f:
        data = read_at_most(f, MAX_JSON_BYTES)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data.lstrip()[:1] == b"[":
        try:
            arr = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise ConfigError(f"not valid JSON ({exc}); a JSON dataset is an array of records or "
                              "conversations, or one per line", file=path) from None
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


SNIFF_RECORDS = 64  # records looked at to tell ShareGPT conversations from rows of named columns


def load_json(path: str | Path, cols: Columns = Columns()) -> Loaded:
    """The samples of a JSON file of records (an array, or one object per line): ShareGPT
    conversations when one of the first records holds them (malformed ones counted, not fatal),
    else rows of named columns (the first record's keys; a record that is not an object is an
    error naming its position)."""
    p = str(path)
    records = list(_records(p))
    head = [rec for _, rec in records[:SNIFF_RECORDS] if isinstance(rec, dict)]
    if cols == Columns() and any("conversations" in rec or "messages" in rec for rec in head):
        return _sharegpt(p, records)
    if not head:
        pos = records[0][0] if records else None
        raise ConfigError("expected JSON objects (rows of named columns or ShareGPT conversations)"
                          if records else "the dataset holds no samples", file=p, line=pos)
    names = [str(k) for k in head[0]]

    def rows() -> Iterator[tuple[int, dict[str, Any]]]:
        for pos, rec in records:
            if not isinstance(rec, dict):
                raise ConfigError("expected a JSON object" + (" (not valid JSON)" if isinstance(rec, Exception)
                                                              else ""), file=p, line=pos)
            yield pos, rec

    return samples_of_rows(rows(), names, cols, p)


def _sharegpt(p: str, records: list[tuple[int, Any]]) -> Loaded:
    out = Loaded([])
    for pos, rec in records:
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


def load_sharegpt(path: str | Path) -> Loaded:
    """The samples of a ShareGPT file: a JSON array of conversations, or one per line."""
    p = str(path)
    return _sharegpt(p, list(_records(p)))


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


def _conversation(v: Any) -> Any:
    """A conversations cell: its turns (a list; Parquet structs arrive as dicts), or the JSON text of
    them (CSV); anything else is given as it is, to be refused as a conversation of the wrong shape."""
    if isinstance(v, str | bytes) and len(v) <= MAX_LINE_BYTES:
        try:
            return orjson.loads(v)
        except (orjson.JSONDecodeError, RecursionError):
            return None
    if hasattr(v, "tolist"):  # a numpy array from a pickled DataFrame
        return v.tolist()
    return v


def samples_of_rows(
    rows: Iterable[tuple[int, dict[str, Any]]], names: list[str], cols: Columns, path: str, *,
    picked: Picked | None = None,
) -> Loaded:
    """(row number, row) of named columns to samples; `names`: the columns the file has (the columns
    are picked from them before any row: `pick_columns`). An empty cell is no value (an empty prompt
    is an error); a ShareGPT row of the wrong shape is skipped and counted."""
    pc = picked or pick_columns(names, cols, path)
    ids_col, prompt_col, out_col, mt_col, sys_col = pc.input_ids, pc.prompt, pc.output, pc.max_tokens, pc.system
    out = Loaded([])
    for n, row in rows:
        if pc.conversations is not None:
            s = conversation_sample({"conversations": _conversation(row.get(pc.conversations))})
            if isinstance(s, str):
                out.skipped += 1
                out.first_skip = out.first_skip or f"row {n}: {s}"
                continue
        else:
            ids = _ids(row.get(ids_col), path, n, ids_col) if ids_col else None
            prompt = _text(row.get(prompt_col), path, n, prompt_col, required=ids is None) if prompt_col else None
            if prompt is None and ids is None:
                raise ConfigError(f"column '{prompt_col or ids_col}' is empty", file=path, line=n)
            output = _text(row.get(out_col), path, n, out_col, required=False) if out_col else None
            mt = _max_tokens(row.get(mt_col), path, n, mt_col) if mt_col else None
            system = _text(row.get(sys_col), path, n, sys_col, required=False) if sys_col and ids is None else None
            s = LLMSample(prompt, ids, output, mt, system)
        out.samples.append(s)
        if len(out.samples) > MAX_SAMPLES:
            raise ConfigError(f"more than {MAX_SAMPLES} samples; split the dataset", file=path, line=n)
    if not out.samples:
        why = f" ({out.skipped} skipped; first: {out.first_skip})" if out.skipped else ""
        raise ConfigError(f"the dataset holds no samples{why}", file=path)
    return out


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

            return samples_of_rows(rows(), list(header), cols, p)
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
    """A Parquet file with named columns, read with pyarrow (imported only here): the columns used
    alone, PARQUET_BATCH rows at a time, so a file's other columns are never decompressed."""
    p = str(path)
    _size(path, MAX_FILE_BYTES)
    pq = _optional("pyarrow.parquet", "proctor[parquet]", "a Parquet dataset", p)
    try:
        with open(p, "rb") as fh:  # closed here whatever pyarrow does
            meta = pq.ParquetFile(fh)
            md = meta.metadata
            if md.num_rows > MAX_SAMPLES:
                raise ConfigError(f"more than {MAX_SAMPLES} samples; split the dataset", file=p)
            names = [str(n) for n in meta.schema_arrow.names]
            picked = pick_columns(names, cols, p)
            used = [k for k, n in enumerate(meta.schema_arrow.names) if str(n) in picked.used]
            # the size the used columns decompress to, as the footer states it: a small file must
            # not unpack to 100 GB
            schema = md.schema
            leaves = {k for k in range(md.num_columns) if schema.column(k).path.split(".")[0] in picked.used}
            size = sum(md.row_group(g).column(k).total_uncompressed_size
                       for g in range(md.num_row_groups) for k in leaves)
            if size > MAX_FILE_BYTES:
                raise ConfigError(f"the data is over {MAX_FILE_BYTES >> 20} MiB uncompressed; split the dataset",
                                  file=p)
            columns = [meta.schema_arrow.names[k] for k in used]

            def rows() -> Iterator[tuple[int, dict[str, Any]]]:
                n = 0
                for batch in meta.iter_batches(batch_size=PARQUET_BATCH, columns=columns):
                    for row in batch.to_pylist():
                        n += 1
                        yield n, row

            return samples_of_rows(rows(), names, cols, p, picked=picked)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - pyarrow raises its own error types for a bad file
        why = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise ConfigError(f"not a readable Parquet file ({why})", file=p) from None


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
    rows = enumerate((dict(zip(names, r, strict=True)) for r in df.itertuples(index=False, name=None)), 1)
    return samples_of_rows(rows, names, cols, p)


SNIFF_BYTES = 1 << 16


def sniff_json(path: str | Path, kind: str) -> str:
    """.json / .jsonl by content: an array is JSON records; a first line holding `prompt`/`input_ids`
    is proctor's JSONL, another object JSON records (ShareGPT or named columns); else as the
    extension says."""
    with open(path, "rb") as f:
        head = f.read(SNIFF_BYTES)
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if head[:1] == b"[":
        return "json"
    first = head.split(b"\n", 1)[0]
    try:
        obj = orjson.loads(first)
    except (orjson.JSONDecodeError, RecursionError):
        return kind
    if isinstance(obj, dict):
        if "prompt" in obj or "input_ids" in obj:
            return "jsonl"
        return "json"
    return kind


def load_file(path: str | Path, fmt: str | None = None, cols: Columns = Columns(), *,
              allow_pickle: bool = False) -> Loaded:
    """A dataset file in its format (by extension unless given)."""
    kind = format_of(path, fmt)
    if not Path(path).is_file():
        raise ConfigError("no such file", file=str(path))
    if not fmt and kind in ("jsonl", "json"):
        kind = sniff_json(path, kind)
    if kind == "jsonl":
        return Loaded(load_jsonl(path))
    if kind in ("json", "sharegpt"):
        return load_json(path, cols)
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
    "LAYOUTS",
    "Columns",
    "Layout",
    "Loaded",
    "Picked",
    "conversation_sample",
    "format_of",
    "load_csv",
    "load_dataset",
    "load_file",
    "load_json",
    "load_parquet",
    "load_pickle",
    "load_sharegpt",
    "pick_columns",
    "samples_of_rows",
    "sniff_json",
]
