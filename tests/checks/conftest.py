"""Fixtures of the checks tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from checks_corpus import build_corpus_tree


@pytest.fixture
def corpus_tree(tmp_path: Path) -> Path:
    """closed/{NVIDIA,UntetherAI}: the llama2-70b-99.9 Server, resnet50 SS/MS/Offline (edge), Server (dc)."""
    return build_corpus_tree(tmp_path)
