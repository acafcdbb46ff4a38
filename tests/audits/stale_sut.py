"""A SUT for the CLI tests (`--sut tests/audits/stale_sut.py:factory`): answers inline, and with
`stale=1` gives a repeated sample the previous sample's answer (a wrong cache), so its
performance-mode responses differ from its accuracy-mode ones. `service_us=N` spends N us of CPU
per sample (busy, so a loaded machine slows it as it slows real work); with `cache=1` the same
sample twice in a row costs a tenth (a SUT that keeps its last result: TEST04 must fail it)."""

from __future__ import annotations

import time

import numpy as np

from proctor.loadgen import completion
from proctor.loadgen.types import QuerySample, QuerySampleResponse
from proctor.suts.synthetic import InMemoryQSL


class StaleSUT:
    name = "stale-sut"

    def __init__(self, stale: bool, service_ns: int = 0, cache: bool = False) -> None:
        self.stale, self.seen, self.last = stale, set[int](), -1
        self.service_ns, self.cache = service_ns, cache

    def issue_query(self, samples: list[QuerySample]) -> None:
        out = []
        for s in samples:
            cost = self.service_ns // 10 if self.cache and s.index == self.last else self.service_ns
            end = time.perf_counter_ns() + cost
            while time.perf_counter_ns() < end:
                pass
            answer = self.last if self.stale and s.index in self.seen else s.index
            self.seen.add(s.index)
            self.last = s.index
            out.append(QuerySampleResponse(s.id, np.int64(answer).tobytes()))
        completion.query_samples_complete(out)

    def flush_queries(self) -> None:
        pass


def factory(stale: str = "0", service_us: str = "0", cache: str = "0") -> tuple[StaleSUT, InMemoryQSL]:
    return StaleSUT(stale == "1", int(float(service_us) * 1000), cache == "1"), InMemoryQSL(64, 16)
