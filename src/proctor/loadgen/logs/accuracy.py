"""mlperf_log_accuracy.json, written entry by entry in the official layout (logging.cc).

`[` then, per entry, `\n{ "seq_id" : S, "qsl_idx" : I, "data" : "HEX" }` joined by `,`, then
`\n]\n`; HEX is uppercase. Token runs add `, "token_count" : N` (Offline) or
`, "token_data" : "HEX", "token_count" : N`. Entries are appended as completions arrive, so an
interrupted run keeps them; `close()` writes the closing bracket.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import IO

from proctor.trees import open_output


def format_entry(
    seq_id: int, qsl_idx: int, data: bytes, token_count: int | None = None, token_data: bytes | None = None
) -> str:
    text = f'{{ "seq_id" : {seq_id}, "qsl_idx" : {qsl_idx}, "data" : "{bytes(data).hex().upper()}"'
    if token_data is not None:
        text += f', "token_data" : "{bytes(token_data).hex().upper()}"'
    if token_count is not None:
        text += f', "token_count" : {token_count}'
    return text + " }"


class AccuracyLog:
    """Thread-safe incremental writer; completions may arrive from any thread."""

    def __init__(self, path_or_file: str | Path | IO[str]) -> None:
        if hasattr(path_or_file, "write"):
            self._file: IO[str] = path_or_file  # type: ignore[assignment]
            self._owns = False
        else:
            self._file = open_output(path_or_file)  # never through a link placed in the folder; ASCII JSON
            self._owns = True
        self._lock = threading.Lock()
        self._count = 0
        self._closed = False
        self._file.write("[")

    @property
    def count(self) -> int:
        return self._count

    def add(
        self,
        seq_id: int,
        qsl_idx: int,
        data: bytes,
        token_count: int | None = None,
        token_data: bytes | None = None,
    ) -> None:
        entry = format_entry(seq_id, qsl_idx, data, token_count, token_data)
        with self._lock:
            if self._closed:
                raise ValueError("accuracy log already closed")
            self._file.write(("\n" if self._count == 0 else ",\n") + entry)
            self._count += 1

    def flush(self) -> None:
        with self._lock:
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._file.write("\n]\n")
            self._file.flush()
            if self._owns:
                self._file.close()

    def __enter__(self) -> AccuracyLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
