"""Entry point: the command line to a command, and the exit-code convention (cli/output.py).

Commands register on the shared apps (cli/apps.py, with the root command's options) when their
module is imported, which the root group does on first lookup, so `proctor --version` imports
none; a plain command line of a command in cli/fast_path.py skips typer altogether. `main()` owns
the exit codes, on either path: a usage error, a ProctorError or an OSError becomes one line on stderr and exit 2 (a checker's own
invalid verdict is exit 1, set by the command); anything else is a bug: one line and exit 70; Ctrl-C is 130; `--debug` anywhere on the line shows
the traceback instead. SIGTERM and SIGHUP are handled as Ctrl-C is (exit 143 and 129).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable

from proctor.cli import fast_path, output
from proctor.errors import ProctorError, RunError
from proctor.version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn


def _register() -> None:
    """Import every command module now (the root group would on first lookup; tests that build the
    click command once want them all), in the order `proctor --help` lists the commands."""
    from proctor.cli.apps import COMMANDS, load

    load(tuple(dict.fromkeys(m for modules in COMMANDS.values() for m in modules)))


def _usage_hint(exc: Exception) -> str:
    ctx = getattr(exc, "ctx", None)
    path = getattr(ctx, "command_path", None) if ctx is not None else None
    return f" (see '{path} --help')" if path else ""


def _json_command(command: Any, args: list[str]) -> str:
    """The command path (`proctor check submission`) when `args` ask a command that takes `--json`
    for it, else "". Looks up only the commands on the line (lazy modules load as they would)."""
    if "--json" not in args:
        return ""
    path, current = ["proctor"], command
    ctx_class = getattr(command, "context_class", None)
    for token in args:
        if token.startswith("-") or not hasattr(current, "get_command"):
            continue
        try:
            sub = current.get_command(ctx_class(current) if ctx_class else None, token)
        except Exception:  # noqa: BLE001 - an unknown word: the usage error says so
            sub = None
        if sub is None:
            break
        path.append(token)
        current = sub
    takes = any("--json" in getattr(p, "opts", ()) for p in getattr(current, "params", ()))
    return " ".join(path) if takes and not hasattr(current, "get_command") else ""


def _print_traceback() -> None:
    import traceback  # only with --debug: it loads linecache and tokenize

    traceback.print_exc()


def run(argv: list[str] | None = None, *, fast: bool = True) -> int:
    """Run the CLI on argv and return its exit status; every failure is one line unless --debug.
    With `--json`, stdout holds exactly one JSON document whatever the status: the command's own,
    or the error document (output.error_document) when it ends without one. A plain command line of
    a command in cli/fast_path.py runs without typer (`fast=False`: through typer all the same)."""
    return _run_line(argv, fast)[0]


def _run_line(
    argv: list[str] | None, fast: bool, before_typer: Callable[[], None] | None = None
) -> tuple[int, bool]:
    """`run`'s exit status, and whether the fast path ran the command. `before_typer` is called when
    the line goes to typer (cli/entry.py gives the cyclic collector back there)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--debug" in args:  # accepted anywhere on the line, not only before the command
        args.remove("--debug")
        output.set_debug(True)
    call = fast_path.match(args) if fast else None
    if call is not None:
        return _one_document(call.json_for, lambda: _guarded(lambda: fast_path.call(call))), True
    if before_typer is not None:
        before_typer()
    import typer

    from proctor.cli.apps import app

    command = typer.main.get_command(app)
    return _one_document(_json_command(command, args), lambda: _run(command, args)), False


def _one_document(json_for: str, run_: Callable[[], int]) -> int:
    """`run_()`'s status; when `json_for` names the command (its line asked for `--json`) and it
    ended without printing its document, the error document is printed instead."""
    if not json_for:
        return run_()
    real = sys.stdout
    counting = output.CountingStdout(real)
    sys.stdout = counting
    try:
        rc = run_()
    finally:
        sys.stdout = real
    if counting.written == 0 and rc != output.EXIT_OK:
        import json

        doc = output.error_document(json_for, rc, output.last_message())
        with contextlib.suppress(OSError):
            real.write(json.dumps(doc) + "\n")
            real.flush()
    return rc


def _run(command: Any, args: list[str]) -> int:
    """typer's path: click parses `args` and runs the command; a usage error is one line and exit 2."""
    import typer

    click_exception: type[Exception] = next(
        c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
    )

    def invoke() -> int:
        try:
            rc = command.main(args, prog_name="proctor", standalone_mode=False)
        except click_exception as exc:
            usage: Any = exc  # typer's click exception: format_message() and exit_code
            output.error_line(usage.format_message() + _usage_hint(exc))
            return output.EXIT_USAGE if usage.exit_code == 2 else int(usage.exit_code)
        except typer.Abort:  # click turns a Ctrl-C it sees into Abort (raised from the KeyboardInterrupt)
            return output.interrupted_status()
        return int(rc or 0) if isinstance(rc, int) else 0

    return _guarded(invoke)


def _guarded(invoke: Callable[[], int]) -> int:
    """`invoke()`'s exit status, or the status of what it raised: one line each (cli/output.py)."""
    try:
        return invoke()
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP (loadgen/stop_signals.py)
        return output.interrupted_status(exc=exc)
    except RunError as exc:
        if output.debug():
            _print_traceback()
        output.error_line(f"run failed: {exc}")
        return output.EXIT_INVALID
    except ProctorError as exc:
        if output.debug():
            _print_traceback()
        output.error_line(str(exc))
        return output.EXIT_USAGE
    except OSError as exc:
        if output.debug():
            _print_traceback()
        where = f"{exc.filename}: " if exc.filename else ""
        output.error_line(f"{where}{exc.strerror or exc}")
        return output.EXIT_USAGE
    except RecursionError as exc:
        if output.debug():
            _print_traceback()
        output.error_line(f"input nested too deeply to read ({exc})")
        return output.EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the last resort keeps the one-line promise
        status = _typer_exit_status(exc)
        if status is not None:
            return status
        if output.debug():
            _print_traceback()
        output.error_line(
            f"internal error: {type(exc).__name__}: {exc} (a bug in proctor {__version__}: please report it with "
            "the command line and the traceback that rerunning with --debug prints)"
        )
        return output.EXIT_INTERNAL


def _typer_exit_status(exc: Exception) -> int | None:
    """The status of a typer.Exit (`output.fail` raises one; on typer's path click returns it, on
    the fast path it reaches here). typer is not loaded unless something raised it, so no import."""
    typer = sys.modules.get("typer")
    return int(exc.exit_code) if typer is not None and isinstance(exc, typer.Exit) else None


def main(before_typer: Callable[[], None] | None = None) -> None:
    """The command line in `sys.argv`, run, and the process's exit with its status."""
    from proctor.loadgen import stop_signals

    stop_signals.install()  # SIGTERM and SIGHUP stop a run as Ctrl-C does: logs whole, marked incomplete
    rc, fast = _run_line(None, True, before_typer)
    if rc in output.EXIT_STOPPED:
        # Ctrl-C: the logs are written and closed; the interpreter's teardown of a large heap took
        # 0.6-1 s on a loaded host, past the one second a stop may take. Flush and leave now.
        import logging  # loaded already by whatever logged; cheap to ask again

        logging.shutdown()
        _flush_and_exit(rc)
    if fast:
        # a fast-path command only reads (cli/fast_path.py) and has printed all it prints; the
        # teardown of its modules was 14 ms of the 100 ms a small tree's check takes. The exit
        # handlers are what `sys.exit` would still run that could matter: run them, then leave.
        import atexit

        with contextlib.suppress(Exception):
            getattr(atexit, "_run_exitfuncs", lambda: None)()  # CPython's own; absent: none to run
        _flush_and_exit(rc)
    sys.exit(rc)


def _flush_and_exit(rc: int) -> NoReturn:
    """Leave without the interpreter's teardown, the standard streams' buffers written first."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(rc)
