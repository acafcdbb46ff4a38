"""A ready-made QSL for a SUT that holds its own data: only the sample counts.

`proctor.SimpleQSL(1024)` is a `types.QuerySampleLibrary` of 1024 samples, all loadable at once;
loading and unloading do nothing (the SUT finds sample `index` itself), so they cost nothing however
large the set.
"""

from __future__ import annotations

import operator

from proctor.errors import ConfigError


class SimpleQSL:
    """A QSL of `total_sample_count` samples, `performance_sample_count` of them (default: all)
    loadable at once; load/unload do nothing."""

    def __init__(
        self, total_sample_count: int, performance_sample_count: int | None = None, name: str = "SimpleQSL"
    ) -> None:
        total = _count(total_sample_count, "total_sample_count")
        perf = total if performance_sample_count is None else _count(
            performance_sample_count, "performance_sample_count"
        )
        if perf > total:
            raise ConfigError(f"must be <= total_sample_count ({total}), not {perf}", key="performance_sample_count")
        self._total, self._perf, self._name = total, perf, name

    @property
    def name(self) -> str:
        return self._name

    @property
    def total_sample_count(self) -> int:
        return self._total

    @property
    def performance_sample_count(self) -> int:
        return self._perf

    def load_samples(self, indices: list[int]) -> None:
        """Nothing to load: the SUT holds its data."""

    def unload_samples(self, indices: list[int]) -> None:
        """Nothing to unload."""

    def __repr__(self) -> str:
        return f"SimpleQSL({self._total}, {self._perf})"


def _count(value: object, key: str) -> int:
    try:
        n = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ConfigError(f"must be an int, not {type(value).__name__}", key=key) from None
    if isinstance(value, bool) or n < 1:
        raise ConfigError(f"must be an int >= 1, not {value!r}", key=key)
    return int(n)


__all__ = ["SimpleQSL"]
