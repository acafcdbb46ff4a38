"""The two arrays-of-record containers that cross module boundaries inside the engine.

`Schedule` is what query generation produces before the clock starts; `Records` is what the
issuer fills while it runs. Both are plain numpy arrays indexed by integer ids so the hot path
does array writes only, and the results code works on whole arrays.

Ids: query q covers samples `query_offsets[q]:query_offsets[q+1]`; a sample's position in
`sample_index` is its sequence number and the response id handed to the SUT.
"""

from __future__ import annotations

import numpy as np

from proctor.typed_records import field, record

NOT_SET = -1  # timestamp / count not recorded
FILL_CHUNK = 1 << 20  # elements per step of a large fill: a Ctrl-C lands between steps, not after the whole


def unset(n: int) -> np.ndarray:
    """int64[n] of NOT_SET, filled a slice at a time: one fill of hundreds of MB holds the GIL (and
    Ctrl-C) for as long as the host takes to fault its pages in, seconds on a busy one."""
    out = np.empty(n, np.int64)
    for a in range(0, n, FILL_CHUNK):
        out[a : a + FILL_CHUNK] = NOT_SET
    return out


def done_end(done: np.ndarray, n: int) -> int:
    """1 + the last of the first `n` positions of `done` holding a time (0: none), searched from the
    end a slice at a time: an interrupted Offline query has millions of samples that never
    completed past its last completion, and what reads the completions stops here (a finished run
    ends at `n` after one slice)."""
    for b in range(n, 0, -FILL_CHUNK):
        a = max(b - FILL_CHUNK, 0)
        if int(done[a:b].max()) != NOT_SET:  # times are >= 0, NOT_SET below them: one pass, no temporary
            return b - int(np.argmax(done[a:b][::-1] != NOT_SET))  # the last set one: a 1-byte mask of the slice
    return 0


@record(slots=True)
class Schedule:
    scheduled_ns: np.ndarray          # int64[n_queries]: offset from test start (SS/MS: nominal)
    query_offsets: np.ndarray         # int64[n_queries + 1]
    sample_index: np.ndarray          # int[n_samples]: QSL index of each sample (int64; large Offline
    #                                   schedules: the narrowest unsigned type the loaded set allows)
    accuracy_log_mask: np.ndarray | None = None  # bool[n_samples]: log this sample's data (perf mode)
    duration_ns: int = 0  # timestamp after the last official query: the official generated_query_duration
    n_nominal: int = -1  # Server with an early-stopping extension: the official queries (the rest follow)

    @property
    def n_queries(self) -> int:
        return int(self.scheduled_ns.shape[0])

    @property
    def n_samples(self) -> int:
        return int(self.sample_index.shape[0])

    @property
    def nominal_queries(self) -> int:
        """The queries the official LoadGen would generate (all of them without an extension)."""
        return self.n_nominal if self.n_nominal >= 0 else self.n_queries

    def samples_of(self, q: int) -> np.ndarray:
        return self.sample_index[self.query_offsets[q]:self.query_offsets[q + 1]]


@record(slots=True)
class Records:
    """Raw integer-nanosecond timestamps on the engine's monotonic clock; NOT_SET when absent."""

    start_ns: int
    query_scheduled_ns: np.ndarray    # int64[n_queries]: absolute; SS/MS = the actual issue time
    query_issued_ns: np.ndarray       # int64[n_queries]
    query_done_ns: np.ndarray         # int64[n_queries]: when its last sample completed
    sample_done_ns: np.ndarray        # int64[n_samples]
    sample_first_token_ns: np.ndarray  # int64[n_samples] (read-only NOT_SET view until a first token)
    sample_n_tokens: np.ndarray       # int64[n_samples] (read-only zero view in runs without tokens)
    n_queries_issued: int = 0
    n_samples_issued: int = 0
    end_ns: int = NOT_SET             # when the test ended (all issued samples done, or aborted)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    incomplete: bool = False          # interrupted, timed out or the SUT raised
    incomplete_reason: str = ""
    sample_failed: np.ndarray | None = None  # uint8[n_samples], 1: the SUT failed it (fail_samples)
    failed_samples: int = 0
    extension_stop: str = ""  # Server early-stopping extension: why issuing ended past the official queries

    @classmethod
    def allocate(cls, schedule: Schedule, start_ns: int = 0, *, tokens: bool = True) -> Records:
        """Arrays for one schedule. Without `tokens` the two token arrays are read-only views that
        take no memory (8 bytes per sample each saved); `writable_tokens` makes them real."""
        nq, ns = schedule.n_queries, schedule.n_samples
        rec = cls(
            start_ns=start_ns,
            query_scheduled_ns=unset(nq),
            query_issued_ns=unset(nq),
            query_done_ns=unset(nq),
            sample_done_ns=unset(ns),
            sample_first_token_ns=np.broadcast_to(np.int64(NOT_SET), (ns,)),
            sample_n_tokens=np.broadcast_to(np.int64(0), (ns,)),
        )
        if tokens:
            rec.writable_tokens()
        return rec

    def writable_tokens(self) -> None:
        """Give the token arrays their own memory (once; a run that reports tokens needs them)."""
        if not self.sample_first_token_ns.flags.writeable:
            self.sample_first_token_ns = unset(self.sample_done_ns.shape[0])
        if not self.sample_n_tokens.flags.writeable:
            self.sample_n_tokens = np.zeros(self.sample_done_ns.shape[0], np.int64)
