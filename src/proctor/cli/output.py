"""What every command prints and how it exits: one convention, one place.

Exit status (README, "Exit status"): 0 ok/valid, 1 checked and found invalid, 2 the input or the
command line is wrong, 70 a bug, 130 interrupted (143 after SIGTERM, 129 after SIGHUP). An error is one line on stderr that names the file, line,
option or key and what to do; a traceback only with `proctor --debug`.

Tables never cut a number or a path: label columns wrap, value columns do not. When standard
output is not a terminal, plain lines are never wrapped and tables wrap their text columns at
$COLUMNS or 120. Paths that would not fit go under the table, one per line, in full. The tree
commands (`check submission`, `summarize`) write their findings and results to a pipe or a file
without rich (`write_findings`, `tables.plain_table`): plain columns that never wrap.

Findings (every checker's result type) are printed by `print_findings`, the same way for every
command. rich is imported on first print, so importing this module costs nothing at start-up.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable

from proctor.rules.rounds import ROUNDS, unknown_round
from proctor.tables import table as table  # re-exported: the CLI builds its tables from here

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

    from rich.console import Console
    from rich.table import Table

    from proctor.findings import Finding


def check_round(round_: str) -> None:
    """Exit 2 with one line when `--round` names a round proctor has no rules for."""
    if round_ not in ROUNDS:
        fail(f"--round {unknown_round(round_)}")


EXIT_OK = 0
EXIT_INVALID = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 70  # a bug in proctor (EX_SOFTWARE): one line, the traceback with --debug
EXIT_INTERRUPTED = 130  # Ctrl-C; after SIGTERM 143, SIGHUP 129 (128 + the signal, as shells report)
EXIT_STOPPED = frozenset({130, 143, 129})  # every status `interrupted` exits with

_PIPE_WIDTH = 120  # a pipe has no width: tables wrap their text columns at this (or $COLUMNS)

_state: dict[str, object] = {"debug": False, "last_message": ""}


def set_debug(on: bool) -> None:
    _state["debug"] = on


def debug() -> bool:
    """`proctor --debug` (or PROCTOR_DEBUG=1): show tracebacks instead of one-line errors."""
    return bool(_state["debug"]) or os.environ.get("PROCTOR_DEBUG", "") not in ("", "0")


def last_message() -> str:
    """The last error or interrupted line printed: the `error` of a `--json` error document."""
    return str(_state["last_message"])


def console(stderr: bool = False) -> Console:
    """A console that wraps at the terminal's width, and never in a pipe or file."""
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    tty = is_terminal(stream)
    width = None
    if not tty:
        try:
            width = max(int(os.environ.get("COLUMNS", "")), 40)
        except ValueError:
            width = _PIPE_WIDTH
    return Console(stderr=stderr, highlight=False, soft_wrap=not tty, width=width)


def error_line(message: str) -> None:
    """One line on stderr: `error: <message>` (the message names the file/option and what to do)."""
    from rich.console import Console
    from rich.markup import escape

    text = " ".join(str(message).split())  # one line, whatever the message held
    _state["last_message"] = text
    Console(stderr=True, highlight=False, soft_wrap=True).print(f"[red]error:[/red] {escape(text)}")


def fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    """Print one error line and exit with `code` (2: bad input or usage by default): typer.Exit,
    which the command's caller turns into the status (cli/main.py, on either path)."""
    import typer  # loaded already on typer's path; a fast-path command (cli/fast_path.py) loads it here

    error_line(message)
    raise typer.Exit(code)


def interrupted(message: str = "interrupted", exc: BaseException | None = None) -> NoReturn:
    """A stop signal: one line that starts with "interrupted" (not an error) and exit 128 + the
    signal: 130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP (loadgen/stop_signals.py). `exc`
    is the KeyboardInterrupt it raised (default: the one being handled)."""
    import typer  # loaded already by the command that calls this

    raise typer.Exit(interrupted_status(message, exc))


def interrupted_status(message: str = "interrupted", exc: BaseException | None = None) -> int:
    """`interrupted`'s line, printed; returns its status instead of exiting (cli/main.py's handler,
    which runs without typer on the fast path)."""
    from rich.console import Console
    from rich.markup import escape

    from proctor.loadgen import stop_signals

    exc = exc if exc is not None else sys.exception()
    signum = stop_signals.signal_of(exc)
    text = " ".join(str(message).split())
    if isinstance(exc, stop_signals.Stopped) and text.startswith("interrupted"):
        text = f"interrupted by {stop_signals.signal_name(signum)}" + text.removeprefix("interrupted")
    _state["last_message"] = text
    with contextlib.suppress(OSError):  # SIGHUP: the terminal may be gone
        Console(stderr=True, highlight=False, soft_wrap=True).print(f"[yellow]{escape(text)}[/yellow]")
    return 128 + signum


# --- `--json`: exactly one document on stdout, whatever the exit status -----------------------------

JSON_ERROR_KIND = "proctor.error"  # schema: proctor.schemas.ERROR


class CountingStdout:
    """sys.stdout while a `--json` command runs: counts what the command writes, so the entry point
    knows whether it printed its document (cli/main.py adds the error document when it did not)."""

    def __init__(self, inner: object) -> None:
        self._inner = inner
        self.written = 0

    def write(self, text: str) -> int:
        self.written += len(text)
        return int(self._inner.write(text))  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)


def error_document(command: str, exit_code: int, message: str) -> dict[str, object]:
    """What `--json` prints when the command ends without its own document: the input was wrong
    (exit 2), it was interrupted before it had a result (130, 143, 129: `incomplete` true), it failed
    (1) or hit a bug (70). `error` is the line stderr got."""
    return {
        "kind": JSON_ERROR_KIND,
        "version": 1,
        "command": command,
        "exit_code": exit_code,
        "error": message,
        "incomplete": exit_code in EXIT_STOPPED,
    }


def print_table(out: Console, tbl: Table, paths: Iterable[tuple[str, str]] = ()) -> None:
    """Print `tbl` on its own lines, then each (name, path) under it in full, one per line."""
    out.print(tbl, crop=False)
    for name, path in paths:
        out.print(f"{name}: {path}", markup=False, soft_wrap=True)


_COLOURS = {"error": "red", "warning": "yellow", "info": "cyan"}


def _finding_text(f: Finding) -> tuple[str, str]:
    """A finding's severity and the rest of its line: `[rule] path:line [key]: message`."""
    where = (f.path or "") + (f":{f.line}" if f.line is not None else "")
    return f.severity.value, f"[{f.rule}]" + (f" {where}" if where else "") + (f" [{f.key}]" if f.key else "") + (
        f": {f.message}")  # fmt: skip


def print_findings(out: Console, findings: Iterable[Finding], indent: str = "  ") -> None:
    """Every checker's findings, one way for every command:

        ERROR [rule] path:line [key]: message
            rule: <where in the rules text>

    The severity is coloured on a terminal; each part appears only when the finding has it.
    """
    from rich.markup import escape

    for f in findings:
        severity, text = _finding_text(f)
        colour = _COLOURS.get(severity, "cyan")
        out.print(f"{indent}[{colour}]{severity.upper()}[/{colour}] {escape(text)}", soft_wrap=True)
        if f.source:
            out.print(f"{indent}    rule: {f.source}", markup=False, soft_wrap=True)


def write_findings(findings: Iterable[Finding], indent: str = "  ") -> None:
    """print_findings' lines, uncoloured, on standard output without rich: what a pipe or a file gets
    from the commands that print for one (`is_terminal`)."""
    for f in findings:
        severity, text = _finding_text(f)
        sys.stdout.write(f"{indent}{severity.upper()} {text}\n")
        if f.source:
            sys.stdout.write(f"{indent}    rule: {f.source}\n")


def is_terminal(stream: object = None) -> bool:
    """Whether `stream` (standard output by default) is a terminal."""
    stream = sys.stdout if stream is None else stream
    try:
        return bool(getattr(stream, "isatty")())  # noqa: B009 - any object: a test's stand-in too
    except (AttributeError, TypeError, ValueError, OSError):
        return False
