"""The commands scripts run most, started without typer: a well-formed command line for one of
`FAST_COMMANDS` calls the command's typer-free body at once (cli/main.py), and typer's import
(about as costly as the whole check of a small submission tree) is skipped.

Each entry states the command's parameters as its typer command declares them; a test
(tests/cli/test_fast_path.py) builds the typer command and fails when the two disagree (a name,
an option, a type, a default), and compares both paths' output and exit status. Only the plain
forms are taken: every option at most once, as `--opt VALUE` or `--opt=VALUE` with a value that
does not start with '-', the positional arguments all there. Anything else (`--help`, an unknown
or repeated option, a missing or extra argument, `--`, a lone '-') returns None, and typer parses
the line as before, so its help and its usage errors are unchanged.

A body here only reads and prints: `main()` leaves after it without the interpreter's teardown
(the exit handlers run and the standard streams are flushed first), so a body must not leave a
file of its own unwritten or a thread running.
"""

from __future__ import annotations

import sys
from pathlib import Path

from proctor.typed_records import record

# a parameter's Python type on the command line: text, a path, or a flag (present: True)
KINDS = (str, Path, bool)


@record(frozen=True, slots=True)
class FastCommand:
    """One command's plain command line: its words, its parameters and the body both paths call."""

    words: tuple[str, ...]  # after `proctor`: ("check", "submission")
    body: str  # "module:function", typer-free; called with the parameters given, by name
    arguments: tuple[tuple[str, type], ...]  # positional parameters in order: (name, type)
    options: dict[str, tuple[str, type]]  # "--round" -> ("round_", str); bool: a flag


FAST_COMMANDS: tuple[FastCommand, ...] = (
    FastCommand(
        words=("check", "submission"),
        body="proctor.cli.tree_commands:check_submission_command",
        arguments=(("directory", Path),),
        options={
            "--round": ("round_", str),
            "--json": ("as_json", bool),
            "--allow-unofficial-loadgen": ("allow_unofficial", bool),
            "--skip-extra-accuracy-files-check": ("skip_extra_accuracy_files", bool),
        },
    ),
    FastCommand(
        words=("summarize",),
        body="proctor.cli.tree_commands:summarize_command",
        arguments=(("directory", Path),),
        options={"--csv": ("as_csv", bool), "--json": ("as_json", bool), "--round": ("round_", str)},
    ),
)


@record(frozen=True, slots=True)
class FastCall:
    """A matched command line: the command, its parameters by name, and the `--json` command path
    (`proctor check submission`) when the line asks for JSON, else ""."""

    command: FastCommand
    params: dict[str, object]
    json_for: str


def match(args: list[str]) -> FastCall | None:
    """The fast call `args` (the words after `proctor`) make, or None: typer's path parses them."""
    for command in FAST_COMMANDS:
        n = len(command.words)
        if tuple(args[:n]) == command.words:
            params = _parse(command, args[n:])
            if params is None:
                return None
            as_json = "--json" in command.options and command.options["--json"][0] in params
            return FastCall(command, params, "proctor " + " ".join(command.words) if as_json else "")
    return None


def _parse(command: FastCommand, rest: list[str]) -> dict[str, object] | None:
    params: dict[str, object] = {}
    positional: list[str] = []
    i = 0
    while i < len(rest):
        token = rest[i]
        i += 1
        if "\x00" in token or token in ("-", "--"):
            return None
        if not token.startswith("-"):
            positional.append(token)
            continue
        name, eq, value = token.partition("=")
        spec = command.options.get(name)
        if spec is None or spec[0] in params:
            return None
        pname, kind = spec
        if kind is bool:
            if eq:
                return None
            params[pname] = True
            continue
        if not eq:
            if i >= len(rest):
                return None
            value = rest[i]
            i += 1
        if value.startswith("-") or "\x00" in value:
            return None
        params[pname] = kind(value)
    if len(positional) != len(command.arguments):
        return None
    for (pname, kind), value in zip(command.arguments, positional, strict=True):
        params[pname] = kind(value)
    return params


def call(fast: FastCall) -> int:
    """Run the matched command's body; its exit status."""
    module, _, function = fast.command.body.partition(":")
    __import__(module)  # not importlib.import_module: importlib's own module is not loaded here
    status = getattr(sys.modules[module], function)(**fast.params)
    return int(status)
