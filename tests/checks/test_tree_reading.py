"""proctor.trees.reading(): one look at a tree gives the answers separate looks give (kinds through
links, FIFOs, missing folders, files on the way), and a file parsed twice within it is parsed once
while it is unchanged."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor import trees
from proctor.loadgen.logs.reader import read_detail

NAMES = ("a", "b", "c")
KINDS = ("dir", "file", "link_in", "link_out", "dangling", "fifo")


def _build(root: Path, layout: list[tuple[tuple[str, ...], str]]) -> None:
    """Entries under root, each a path of NAMES and what to put there (skipped when its folder is not one)."""
    outside = root.parent / f"{root.name}-outside"
    outside.mkdir(exist_ok=True)
    (root / "real").mkdir(parents=True, exist_ok=True)
    for parts, what in layout:
        path = root.joinpath(*parts)
        if not os.path.isdir(path.parent) or os.path.islink(path.parent) or os.path.lexists(path):
            continue
        if what == "dir":
            path.mkdir()
        elif what == "file":
            path.write_text("x")
        elif what == "link_in":
            path.symlink_to(root / "real")
        elif what == "link_out":
            path.symlink_to(outside)
        elif what == "dangling":
            path.symlink_to(root / "nowhere")
        elif what == "fifo":
            os.mkfifo(path)


paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map(tuple)
layouts = st.lists(st.tuples(paths, st.sampled_from(KINDS)), max_size=14)
queries = st.lists(st.lists(st.sampled_from((*NAMES, "real", "x")), min_size=0, max_size=5).map(tuple), max_size=25)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(layout=layouts, asked=queries, relative=st.booleans())
def test_kinds_in_one_reading_equal_separate_looks(tmp_path: Path, layout, asked, relative) -> None:
    root = Path(os.path.join(tmp_path, f"t{abs(hash((tuple(layout), tuple(asked)))) % 10**9}"))
    _build(root, layout)
    base = Path(os.path.relpath(root)) if relative else root
    want = [trees.kind(base.joinpath(*q)) for q in asked]
    with trees.reading():
        got = [trees.kind(base.joinpath(*q)) for q in asked]
        again = [trees.kind(base.joinpath(*q)) for q in reversed(asked)]
    assert got == want
    assert again == want[::-1]


def test_a_link_on_the_way_is_a_link_however_the_reading_got_there(tmp_path: Path) -> None:
    (tmp_path / "real" / "sub").mkdir(parents=True)
    (tmp_path / "real" / "sub" / "f").write_text("x")
    (tmp_path / "lnk").symlink_to(tmp_path / "real")
    (tmp_path / "file").write_text("x")
    with trees.reading():
        assert trees.kind(tmp_path / "real" / "sub" / "f") == trees.FILE
        assert trees.kind(tmp_path / "lnk" / "sub" / "f") == trees.LINK
        assert trees.kind(tmp_path / "lnk") == trees.LINK
        assert trees.kind(tmp_path / "file" / "below") == trees.MISSING
        assert trees.kind(tmp_path / "nothing" / "below") == trees.MISSING
        assert trees.kind(tmp_path / "real" / "sub") == trees.DIR


def test_a_file_is_parsed_once_per_reading_while_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "log.txt"
    path.write_text("one")
    calls: list[str] = []

    def parse() -> str:
        calls.append(path.read_text())
        return calls[-1]

    assert trees.parsed(path, "t", parse) == trees.parsed(path, "t", parse) == "one"
    assert len(calls) == 2  # outside a reading, every call parses
    with trees.reading():
        assert [trees.parsed(path, "t", parse) for _ in range(3)] == ["one"] * 3
        assert len(calls) == 3
        trees.parsed(path, "another way", parse)
        assert len(calls) == 4  # another parse of the same file is its own entry
        path.write_text("two, longer")  # a new size: a new file as far as the reading knows
        assert trees.parsed(path, "t", parse) == "two, longer"
        assert len(calls) == 5
    with trees.reading():  # a new reading keeps nothing of the last
        trees.parsed(path, "t", parse)
        assert len(calls) == 6


def test_a_failure_is_not_kept_and_the_kept_parses_are_bounded(tmp_path: Path) -> None:
    boom = {"n": 0}

    def fail() -> str:
        boom["n"] += 1
        raise ValueError("unreadable")

    (tmp_path / "bad").write_text("x")
    with trees.reading():
        for _ in range(2):
            with pytest.raises(ValueError):
                trees.parsed(tmp_path / "bad", "t", fail)
        assert boom["n"] == 2
        files = [tmp_path / f"f{i}" for i in range(trees.MAX_PARSED + 5)]
        count = {"n": 0}

        def parse() -> int:
            count["n"] += 1
            return count["n"]

        for f in files:
            f.write_text("x")
            trees.parsed(f, "t", parse)
        trees.parsed(files[-1], "t", parse)  # still kept
        assert count["n"] == len(files)
        trees.parsed(files[0], "t", parse)  # the oldest was let go
        assert count["n"] == len(files) + 1


def test_a_detail_log_read_in_a_reading_equals_one_read_alone(tmp_path: Path) -> None:
    log = tmp_path / "mlperf_log_detail.txt"
    log.write_text(
        ':::MLLOG {"key": "effective_scenario", "value": "Offline", "metadata": {}}\n'
        "not a record\n"
        ':::MLLOG {"key": "error_x", "value": 1, "metadata": {"is_error": true}}\n'
        ":::MLLOG {broken\n"
    )
    alone = read_detail(log, keep_entries=False)
    with trees.reading():
        first = read_detail(log, keep_entries=False)
        assert read_detail(log, keep_entries=False) is first
        assert read_detail(log, keep_entries=True) is not first  # entries are never kept
    assert (first.values, first.lines, first.errors, first.bad_lines, first.n_bad_lines) == (
        alone.values, alone.lines, alone.errors, alone.bad_lines, alone.n_bad_lines)
