"""Fixtures of the results-database tests: the valid edge tree once per session (copied per test)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("duckdb")
pytest.importorskip("pyarrow")


@pytest.fixture(scope="session")
def pristine_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.resultsdb.resultsdb_trees import pristine

    return pristine(tmp_path_factory.mktemp("pristine"))
