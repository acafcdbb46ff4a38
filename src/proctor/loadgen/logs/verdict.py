"""proctor_verdict.json: the verdict `proctor run` printed, beside the run's logs.

The verdict is judged once the engine has closed its logs (app/session.verdict), so it is not a
record of the detail log (nothing is appended to a closed log): the session writes this file, a JSON
list of the printed lines, and report.html shows the same words. Logs written before this file
existed carry the verdict as the detail log's `proctor_verdict` record; the report reads either.
The file is read as hostile input: bounded in bytes, lines and characters, anything but a list of
strings is no verdict.
"""

from __future__ import annotations

import json
from pathlib import Path

from proctor.errors import TreeError
from proctor.trees import is_file, open_output, read_bytes

VERDICT_FILE = "proctor_verdict.json"
MAX_VERDICT_BYTES = 256 << 10  # a verdict is tens of lines; a larger file is not read past this
VERDICT_LINES = 50  # lines a report shows at most
LINE_CHARS = 2000  # characters of one line a report shows at most


def write_verdict(folder: str | Path, lines: list[str]) -> Path:
    """Write the printed verdict next to the run's logs (never through a link placed there)."""
    path = Path(folder) / VERDICT_FILE
    with open_output(path) as fh:
        fh.write(json.dumps([str(line) for line in lines], ensure_ascii=False) + "\n")
    return path


def read_verdict(folder: str | Path) -> list[str] | None:
    """The verdict's lines (at most VERDICT_LINES, each cut to LINE_CHARS), or None when the folder
    holds no readable verdict file: missing, a link, too large, not JSON, not a list of strings."""
    path = Path(folder) / VERDICT_FILE
    try:
        if not is_file(path):
            return None
        data = read_bytes(path, MAX_VERDICT_BYTES + 1)
    except (OSError, TreeError):
        return None
    if len(data) > MAX_VERDICT_BYTES:
        return None
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(value, list) or not all(isinstance(line, str) for line in value):
        return None
    return [line[:LINE_CHARS] for line in value[:VERDICT_LINES]]


__all__ = ["LINE_CHARS", "MAX_VERDICT_BYTES", "VERDICT_FILE", "VERDICT_LINES", "read_verdict", "write_verdict"]
