"""The vocabulary shared by the engine and every system under test.

Response ids are plain integers: the engine's sample sequence number, which indexes its
preallocated record arrays, so completing a sample is an array write and never a lookup.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from proctor.untrusted_text import printable

if TYPE_CHECKING:  # annotations only: the CLI's option enums come from here and must not load numpy
    import numpy as np


class Scenario(StrEnum):
    SINGLE_STREAM = "SingleStream"
    MULTI_STREAM = "MultiStream"
    SERVER = "Server"
    OFFLINE = "Offline"


class TestMode(StrEnum):
    SUBMISSION_RUN = "SubmissionRun"
    ACCURACY_ONLY = "AccuracyOnly"
    PERFORMANCE_ONLY = "PerformanceOnly"
    FIND_PEAK_PERFORMANCE = "FindPeakPerformance"


# The official conf files give `mode` as an integer in this order (test_settings.h).
MODE_BY_NUMBER = (TestMode.SUBMISSION_RUN, TestMode.ACCURACY_ONLY, TestMode.PERFORMANCE_ONLY,
                  TestMode.FIND_PEAK_PERFORMANCE)


@dataclass(frozen=True, slots=True)
class QuerySample:
    id: int      # response id: pass it back in QuerySampleResponse
    index: int   # sample index in the QSL


@dataclass(slots=True)
class QuerySampleResponse:
    id: int
    data: bytes | bytearray | memoryview | np.ndarray | None = None
    n_tokens: int = 0


@runtime_checkable
class SystemUnderTest(Protocol):
    """What the engine drives: two methods. `issue_query` may complete inline or later, from any
    thread, through the sink the engine handed it (`sink.StartableSUT`) or the module functions
    `query_samples_complete` / `complete_arrays` (and `first_token_complete` in token runs).

    Optional capabilities are the protocols below and in `sink`: `NamedSUT` (its name in the logs;
    default: the class name), `ArraySUT` (the engine then calls `issue_query_arrays` and builds no
    Python object per sample), `ClosableSUT` (the run session closes it after the run), `TokenSUT`
    (it reports first tokens, so token-latency runs can use it), `CompletionIssuingSUT`,
    `sink.StartableSUT` and `sink.ReportingSUT`.
    """

    def issue_query(self, samples: list[QuerySample]) -> None: ...

    def flush_queries(self) -> None: ...


@runtime_checkable
class NamedSUT(Protocol):
    """A SUT that names itself in the logs (`sut_name`)."""

    @property
    def name(self) -> str: ...


SUT_NAME_LIMIT = 1000  # characters of a SUT's name in the logs


def sut_name(sut: object) -> str:
    """The SUT's own name (`NamedSUT`), else its class name; one printable line, bounded, since it
    goes into the logs and may come from elsewhere (a node's self-reported name)."""
    return printable(sut.name if isinstance(sut, NamedSUT) else type(sut).__name__, SUT_NAME_LIMIT)


@runtime_checkable
class CompletionIssuingSUT(Protocol):
    """A SUT whose issue calls never wait on its own completing threads (they only queue work) says
    `issue_from_completion = True`: SingleStream and MultiStream then issue the next query from the
    thread that completed the previous one, saving two thread hand-offs a query."""

    @property
    def issue_from_completion(self) -> bool: ...


@runtime_checkable
class ArraySUT(Protocol):
    """A SUT that takes samples as two int64 arrays: response ids and QSL indices."""

    def issue_query_arrays(self, ids: np.ndarray, indices: np.ndarray) -> None: ...


@runtime_checkable
class ClosableSUT(Protocol):
    """A SUT holding threads or devices; `close` (the run session calls it after the run) must return within about a second (it drops what
    is still queued) so Ctrl-C and timeouts end promptly."""

    def close(self) -> None: ...


@runtime_checkable
class TokenSUT(Protocol):
    """A SUT that reports first tokens (`first_token_complete`) and n_tokens: it says so here."""

    @property
    def reports_first_token(self) -> bool: ...


@runtime_checkable
class QuerySampleLibrary(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def total_sample_count(self) -> int: ...

    @property
    def performance_sample_count(self) -> int: ...

    def load_samples(self, indices: list[int]) -> None: ...

    def unload_samples(self, indices: list[int]) -> None: ...


ResponseCallback = Any  # called with each QuerySampleResponse right before its data is copied


__all__ = [
    "MODE_BY_NUMBER",
    "ArraySUT",
    "ClosableSUT",
    "CompletionIssuingSUT",
    "NamedSUT",
    "QuerySample",
    "QuerySampleLibrary",
    "QuerySampleResponse",
    "ResponseCallback",
    "Scenario",
    "SystemUnderTest",
    "TestMode",
    "TokenSUT",
    "sut_name",
]
