"""FindPeakPerformance side by side: the official search and proctor's, on the same queue, land on the
same QPS within the search precision (1 QPS here).

The SUT is a FixedServiceQueue (10 ms per query, first come first served, virtual time): its p99
latency at a rate is set by the arrival schedule, which both engines draw bit for bit alike, so the
peak is decided by queueing; noise of a few ms per query moves it by well under the precision
(bench/loadgen_overhead.py `--only peak` has the numbers). One search per engine, each in a child process, ~20 s each.
"""

from __future__ import annotations

import importlib.util
import math
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("mlperf_loadgen")

pytestmark = [
    pytest.mark.official,
    pytest.mark.slow,
    # the official engine stamps completions on the real clock, so a loaded host lowers its peak
    # (96 vs 100.5 QPS seen beside other work): a check for a quiet machine, not for shared CI
    pytest.mark.skipif(not os.environ.get("PROCTOR_TIMING_TESTS"),
                       reason="real-time comparison with the official engine: set PROCTOR_TIMING_TESTS=1"),
]

BENCH = Path(__file__).resolve().parents[2] / "bench" / "loadgen_overhead.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("loadgen_overhead", BENCH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def test_official_and_proctor_find_the_same_peak() -> None:
    peaks = _bench().find_peak_pair()  # each engine in its own child process
    official, proctor = peaks["official"], peaks["proctor"]
    assert not math.isnan(official) and not math.isnan(proctor)
    # the queue's capacity is 100 QPS: a search that ran saturates near it, not at the start (60)
    assert 90 <= official <= 110 and 90 <= proctor <= 110, peaks
    # the same peak within the search precision (decimals 0: bounds 1 QPS apart), plus one
    # precision step for a probe right at the boundary that noise tips the other way
    assert abs(official - proctor) <= 2.0, peaks
