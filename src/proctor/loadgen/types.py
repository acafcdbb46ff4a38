"""The vocabulary shared by the engine and every system under test.

Response ids are plain integers: the engine's sample sequence number, which indexes its
preallocated record arrays, so completing a sample is an array write and never a lookup.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from proctor.errors import ConfigError
from proctor.loadgen.scenarios import MODE_BY_NUMBER as MODE_BY_NUMBER
from proctor.loadgen.scenarios import Scenario as Scenario
from proctor.loadgen.scenarios import TestMode as TestMode
from proctor.untrusted_text import printable

if TYPE_CHECKING:  # annotations only: the CLI's option enums come from here and must not load numpy
    import numpy as np


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
    """What the engine drives: two methods, nothing else required.

        issue_query(samples)  samples: a list of `QuerySample` (`.id`, the response id to answer
                              with; `.index`, the sample's index in the QSL). Answer each, now or
                              later and from any thread, with
                              `proctor.query_samples_complete([proctor.QuerySampleResponse(s.id)])`.
        flush_queries()       no more queries are coming for now (may do nothing).

    A name is optional (`NamedSUT`: a `name` attribute; default: the class name). `proctor run
    --sut FILE.py:make` checks both methods before the run and names any that is missing.

    `issue_query` may also complete through the sink the engine handed it (`sink.StartableSUT`) or
    the module functions `query_samples_complete` / `complete_arrays` (and `first_token_complete`
    in token runs). Optional capabilities are the protocols below and in `sink`: `NamedSUT`,
    `ArraySUT` (the engine then calls `issue_query_arrays` instead of `issue_query` and builds no
    Python object per sample), `ClosableSUT` (the run session closes it after the run), `TokenSUT` (it reports first
    tokens, so token-latency runs can use it), `CompletionIssuingSUT`, `OverridingSUT`, `ExportingSUT`,
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
class WarmableSUT(Protocol):
    """A SUT whose issue path can be run dry: at low Server rates its code is cold when a query is due
    (its caches went to other work over the idle gap: ~100 us on a 2-core VM, against ~10 us warm), so
    the issuer calls `warm_issue` in the spin before each arrival. It must send, record and change
    nothing observable; it is told nothing of the coming query."""

    def warm_issue(self) -> None: ...


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
class OverridingSUT(Protocol):
    """A SUT whose requests carry generation parameters other than the benchmark's says which (e.g.
    `max_tokens=64`; "" when it sends the benchmark's), fixed when it is built: the run session logs
    it (`proctor_generation_override`) and marks the run, valid for what it measured but not as the
    benchmark (rules §Additional inference parameters)."""

    @property
    def generation_override(self) -> str: ...


@runtime_checkable
class ExportingSUT(Protocol):
    """A SUT that writes a per-request export once the run ended, from the run's outcome (its records);
    it returns the line saying where the export went (or why not), "" when it writes none."""

    def write_export(self, outcome: Any) -> str: ...


@runtime_checkable
class QuerySampleLibrary(Protocol):
    """The samples a run draws from: two counts and two calls, nothing else required.

        total_sample_count        int >= 1: the samples there are (indices 0 .. total-1)
        performance_sample_count  int >= 1: how many fit in memory at once (a performance run
                                  issues from a loaded set of this many)
        load_samples(indices)     bring these indices into memory before they are issued
        unload_samples(indices)   they are no longer needed

    A name is optional (`NamedQSL`; default: the class name). A SUT that holds its own data can
    use a ready-made one: `proctor.SimpleQSL(total_sample_count)`. `proctor run` checks the four
    members before the run and names any that is missing.
    """

    @property
    def total_sample_count(self) -> int: ...

    @property
    def performance_sample_count(self) -> int: ...

    def load_samples(self, indices: list[int]) -> None: ...

    def unload_samples(self, indices: list[int]) -> None: ...


@runtime_checkable
class NamedQSL(Protocol):
    """A QSL that names itself in the logs (`qsl_name`)."""

    @property
    def name(self) -> str: ...


def qsl_name(qsl: object) -> str:
    """The QSL's own name (`NamedQSL`), else its class name; one printable, bounded line."""
    return printable(qsl.name if isinstance(qsl, NamedQSL) else type(qsl).__name__, SUT_NAME_LIMIT)


_Needs = tuple[tuple[str, bool], ...]  # (member, is a method)
_SUT_NEEDS: _Needs = (("issue_query", True), ("flush_queries", True))  # issue_query first: an ArraySUT may lack it
_ARRAYS: _Needs = (("issue_query_arrays", True),)  # an ArraySUT's, checked as the others (a class may change)
_QSL_NEEDS: _Needs = (("total_sample_count", False), ("performance_sample_count", False),
                      ("load_samples", True), ("unload_samples", True))


def _missing(obj: object, needs: _Needs) -> list[str]:
    """The members `obj` lacks (or has in the wrong form: a method not callable, a count not an int >= 1)."""
    wrong = []
    for member, method in needs:
        try:
            value = getattr(obj, member)
        except AttributeError:
            wrong.append(f"no {member}")
            continue
        except Exception as exc:  # noqa: BLE001 - the user's property raised: name it, in one line
            wrong.append(f"reading {member} raised {type(exc).__name__}: {printable(str(exc), 200)}")
            continue
        if method and not callable(value):
            wrong.append(f"{member} is not callable")
        elif not method and (isinstance(value, bool) or not _is_count(value)):
            wrong.append(f"{member} must be an int >= 1, not {printable(repr(value), 60)}")
    return wrong


def _is_count(value: object) -> bool:
    try:
        return operator.index(value) >= 1  # type: ignore[arg-type]
    except TypeError:
        return False


def check_sut_qsl(sut: object, qsl: object, source: str = "") -> None:
    """Refuse, before the run, a SUT or QSL that lacks what the engine calls: one line naming the
    missing members and the Protocol that lists them (a ConfigError; `source`: where the pair came
    from, e.g. "--sut my_sut.py:make")."""
    for obj, needs, what, protocol, hint in (
        (sut, _SUT_NEEDS, "SUT", "SystemUnderTest", "issue_query(samples) and flush_queries()"),
        (qsl, _QSL_NEEDS, "QSL", "QuerySampleLibrary",
         "total_sample_count, performance_sample_count, load_samples(indices) and unload_samples(indices); "
         "or use proctor.SimpleQSL(total_sample_count)"),
    ):
        if what == "SUT" and isinstance(sut, ArraySUT) and not _missing(sut, _ARRAYS):
            needs = needs[1:]  # an ArraySUT is issued through issue_query_arrays instead (None: it is not)
        wrong = _missing(obj, needs)
        if wrong:
            raise ConfigError(
                (f"{source}: " if source else "")
                + f"the {what} ({printable(type(obj).__name__, 100)}): {'; '.join(wrong)}: a {protocol} "
                f"needs {hint} (see help(proctor.{protocol}))"
            )


ResponseCallback = Any  # called with each QuerySampleResponse right before its data is copied


__all__ = [
    "MODE_BY_NUMBER",
    "ArraySUT",
    "ClosableSUT",
    "CompletionIssuingSUT",
    "ExportingSUT",
    "NamedQSL",
    "NamedSUT",
    "OverridingSUT",
    "QuerySample",
    "QuerySampleLibrary",
    "QuerySampleResponse",
    "ResponseCallback",
    "WarmableSUT",
    "Scenario",
    "SystemUnderTest",
    "TestMode",
    "TokenSUT",
    "check_sut_qsl",
    "qsl_name",
    "sut_name",
]
