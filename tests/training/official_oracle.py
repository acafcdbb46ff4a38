"""The official compliance checker run in-process (much faster than a subprocess per log).

The official checker re-reads and YAML-parses every config file for every log, which dominates its
run time on small logs; the oracle memoizes that parse (the files do not change during a test run),
which leaves the checking itself untouched.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import pytest


class _CachedYaml:
    def __init__(self, yaml: Any) -> None:
        self._yaml = yaml
        self._cache: dict[str, Any] = {}

    def load(self, stream: Any, Loader: Any) -> Any:  # noqa: N803 - the yaml.load signature
        name = getattr(stream, "name", None)
        if name is None:
            return self._yaml.load(stream, Loader=Loader)
        if name not in self._cache:
            self._cache[name] = self._yaml.load(stream, Loader=Loader)
        return self._cache[name]

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._yaml, attr)


def official_verdict(path: str, ruleset: str = "6.1.0") -> bool:
    """True when `mlperf_logging.compliance_checker` accepts the file (a crash counts as a reject)."""
    mlp = pytest.importorskip("mlperf_logging.compliance_checker.mlp_compliance")
    if not isinstance(mlp.yaml, _CachedYaml):
        mlp.yaml = _CachedYaml(mlp.yaml)
    mlp.enqueued_configs.clear()
    logging.disable(logging.CRITICAL)
    try:
        checker = mlp.make_checker("training", ruleset, quiet=True, werror=False)
        config = os.path.join(f"training_{ruleset}", "common.yaml")
        return bool(checker.check_file(path, config))
    except Exception:
        return False
    finally:
        mlp.enqueued_configs.clear()
        logging.disable(logging.NOTSET)
