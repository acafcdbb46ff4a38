"""The helpers that keep `check submission`'s start-up lean give what the costly forms give:
`trees.read_at_most` what `read(limit + 1)` returns, `LazyPattern` what `re.compile` matches."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.lazy_patterns import LazyPattern
from proctor.trees import read_at_most


# --- read_at_most ------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(size=st.integers(0, 5000), limit=st.integers(0, 6000), skip=st.integers(0, 40))
def test_read_at_most_is_the_bounded_read(tmp_path_factory: pytest.TempPathFactory, size: int, limit: int,
                                          skip: int) -> None:  # fmt: skip
    path = tmp_path_factory.mktemp("r") / "f"
    path.write_bytes(os.urandom(size))
    with open(path, "rb") as a, open(path, "rb") as b:
        a.read(skip), b.read(skip)
        assert read_at_most(a, limit) == b.read(limit + 1)


def test_read_at_most_reads_what_the_file_grew_by_up_to_the_cap(tmp_path: Path) -> None:
    """A file that grows between the fstat and the read: the rest is read, one byte past the cap at most."""
    path = tmp_path / "f"
    path.write_bytes(b"a" * 100)
    with open(path, "rb") as fh, open(path, "ab") as grow:
        real_fstat = os.fstat

        def fstat_then_grow(fd: int) -> os.stat_result:
            st_ = real_fstat(fd)
            grow.write(b"b" * 1000)
            grow.flush()
            return st_

        os.fstat = fstat_then_grow  # type: ignore[assignment]
        try:
            data = read_at_most(fh, 500)
        finally:
            os.fstat = real_fstat
    assert data == b"a" * 100 + b"b" * 401  # limit + 1: the caller sees "too large"


def test_read_at_most_on_a_pipe_is_the_bounded_read() -> None:
    """Not a regular file (no size to trust): the plain bounded read, which a writer that stops ends."""
    r, w = os.pipe()
    writer = threading.Thread(target=lambda: (os.write(w, b"x" * 300), os.close(w)))
    writer.start()
    with os.fdopen(r, "rb") as fh:
        assert read_at_most(fh, 100) == b"x" * 101
    writer.join()


# --- LazyPattern ---------------------------------------------------------------------------------
PATTERNS = (r"(\d+)-(\d+)", r"^a.*z$", r"[^a-z0-9]", r"(?i)early (\w+)")


@settings(max_examples=80, deadline=None)
@given(pattern=st.sampled_from(PATTERNS), text=st.text(alphabet="az09-AZ early", max_size=40))
def test_a_lazy_pattern_matches_as_the_compiled_one(pattern: str, text: str) -> None:
    lazy, compiled = LazyPattern(pattern), re.compile(pattern)

    def same(a: Any, b: Any) -> bool:
        return (a is None and b is None) or (a is not None and b is not None and a.group(0, *range(1, b.re.groups + 1))
                                             == b.group(0, *range(1, b.re.groups + 1)) and a.span() == b.span())  # fmt: skip

    assert same(lazy.match(text), compiled.match(text))
    assert same(lazy.search(text), compiled.search(text))
    assert same(lazy.fullmatch(text), compiled.fullmatch(text))
    assert lazy.findall(text) == compiled.findall(text)
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in compiled.finditer(text)]
    assert lazy.sub("_", text) == compiled.sub("_", text)
    assert lazy.split(text) == compiled.split(text)


def test_a_lazy_pattern_compiles_once_on_first_use() -> None:
    lazy = LazyPattern(r"x+", re.IGNORECASE)
    assert lazy._compiled is None
    assert lazy.search("aXXb") is not None
    first = lazy.compiled()
    lazy.match("x")
    assert lazy.compiled() is first and first.flags & re.IGNORECASE


def test_a_bad_lazy_pattern_fails_on_first_use() -> None:
    lazy = LazyPattern("(")
    with pytest.raises(re.error):
        lazy.search("x")
