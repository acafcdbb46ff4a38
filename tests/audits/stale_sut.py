"""A SUT for the CLI tests (`--sut tests/audits/stale_sut.py:factory`): answers inline, and with
`stale=1` gives a repeated sample the previous sample's answer (a wrong cache), so its
performance-mode responses differ from its accuracy-mode ones."""

from __future__ import annotations

import numpy as np

from proctor.loadgen import completion
from proctor.loadgen.types import QuerySample, QuerySampleResponse
from proctor.suts.synthetic import InMemoryQSL


class StaleSUT:
    name = "stale-sut"

    def __init__(self, stale: bool) -> None:
        self.stale, self.seen, self.last = stale, set[int](), 0

    def issue_query(self, samples: list[QuerySample]) -> None:
        out = []
        for s in samples:
            answer = self.last if self.stale and s.index in self.seen else s.index
            self.seen.add(s.index)
            self.last = s.index
            out.append(QuerySampleResponse(s.id, np.int64(answer).tobytes()))
        completion.query_samples_complete(out)

    def flush_queries(self) -> None:
        pass


def factory(stale: str = "0") -> tuple[StaleSUT, InMemoryQSL]:
    return StaleSUT(stale == "1"), InMemoryQSL(64, 16)
