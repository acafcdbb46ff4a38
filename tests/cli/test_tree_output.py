"""The tree commands' plain report: `tables.plain_table`'s columns, and the terminal's rich report
holding the same findings, rows and verdict line."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.cli import tree_commands
from proctor.tables import plain_table
from tests.checks.checks_corpus import build_valid_tree


def test_plain_table_aligns_columns_and_cuts_nothing() -> None:
    text = plain_table(("a", "long header", "v"), [("xxxxxx", "y", "1.5"), ("", "zz", "")])
    assert text.splitlines() == [
        "a       long header  v",
        "------  -----------  ---",
        "xxxxxx  y            1.5",
        "        zz",
    ]
    assert plain_table(("h",), []) == "h\n-\n"


def test_a_terminal_gets_the_same_report_from_rich(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    tree = build_valid_tree(tmp_path) / "closed" / "UntetherAI"
    assert tree_commands.check_submission_command(tree, "v4.1") == 0
    plain = capsys.readouterr().out
    monkeypatch.setattr(tree_commands, "is_terminal", lambda: True)
    monkeypatch.setenv("COLUMNS", "300")
    assert tree_commands.check_submission_command(tree, "v4.1") == 0
    rich = capsys.readouterr().out
    assert "┃" in rich and "┃" not in plain
    assert plain.splitlines()[-1] == rich.splitlines()[-1]  # the verdict line
    for row in plain.splitlines()[2:-1]:
        if row.startswith(("system ", "---")):
            continue
        assert all(cell in rich for cell in row.split()), row
