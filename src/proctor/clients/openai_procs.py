"""The openai SUT's worker processes (`procs=N`): streams spread over processes, one schedule.

Beyond what one core can parse, the engine's process keeps issuing by the schedule and each
`issue_query` only picks, under one lock, the worker and the endpoint with the fewest requests in
flight (one global choice each) and writes a 27-byte record per sample to that worker's pipe:
response id, QSL index, endpoint index, engine issue time, flags (the output is logged; the
per-request export is on: the worker counts the content chunks). Each
worker (started with the "spawn" context: a threaded process is never forked) loads the dataset
itself from its spec, builds each request body once, and runs the same `transport.Transport` as the
in-process path on its own asyncio loop. Its `PipeSink` stamps every event with
`time.perf_counter_ns` (CLOCK_MONOTONIC: the engine's clock, shared by the processes of the
machine) where the chunk was parsed and sends the events in one batch per loop iteration. A reader
thread in the engine's process applies them to the SUT's completion sink (`Tally.sink`) with their
`t_ns`, so the pipe's delay adds nothing to TTFT or TPOT.

Events (tuples, pickled in a list per batch; `apply` checks each one's shape):
  ("T", id, t_ns, first_text | None)                       first token
  ("D", id, t_ns, n_tokens, source, mismatch, output | None, t_sent, chunks, t_last)   stream complete
  ("F", id, kind, message, t_sent, chunks, t_last)          the sample failed (a fault kind)
  ("J", n)                                                  n stream events were not JSON chunks
Output text travels only for samples whose output the accuracy log keeps. `t_sent` is the send
stamp (0: not sent); `chunks` and `t_last` the content chunks received and the last one's arrival
for the per-request export (`request_export`; 0 and 0 when none were counted): two integers per
outcome, kept in the worker per request in flight, never per chunk.

A worker that dies fails its outstanding samples with one clear error (fault kind `worker`) and
the run goes on with the others. Workers ignore SIGINT (the engine drains, then closes them),
leave when their request pipe closes (the engine's process is gone) and are terminated if they
have not left a second after `close()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
import struct
import threading
import time
from dataclasses import replace
from multiprocessing.connection import Connection, wait
from typing import Any

from proctor.clients.llm_dataset import DatasetSpec
from proctor.clients.llm_formats import load_dataset
from proctor.clients.openai_config import OpenAIConfig
from proctor.clients.stream import Endpoint, least_busy, new_loop, times_of
from proctor.clients.tally import Tally
from proctor.clients.transport import make_transport
from proctor.clients.warmup import is_warm, warm_body
from proctor.errors import ConfigError, ProctorError
from proctor.loadgen.types import QuerySampleResponse

log = logging.getLogger("proctor.clients.openai")

REQUEST = struct.Struct("<qqhqB")  # id, QSL index, endpoint index, engine issue time, flags
LOGGED = 1  # a flag: the accuracy log keeps this sample's output (its text travels back)
COUNT_CHUNKS = 2  # a flag: the export is on (the worker counts the sample's content chunks)
START_TIMEOUT_S = 120.0  # a spawned worker imports aiohttp and loads the dataset: slow on a busy box
STOP_WAIT_S = 1.0  # close(): workers that have not left by then are terminated


# --- the worker process ----------------------------------------------------------------------------


class PipeSink:
    """A worker's `stream.StreamSink`: events stamped on the shared clock, sent in one batch per loop iteration."""

    def __init__(self, conn: Connection, loop: asyncio.AbstractEventLoop) -> None:
        self._conn = conn
        self._loop = loop
        self._batch: list[tuple[Any, ...]] = []
        self._issue: dict[int, tuple[int, bool]] = {}  # id -> (engine issue time, output logged)
        self._sent: dict[int, int] = {}
        # the export's chunk notes of the requests in flight (the transport's `export` calls note_chunks)
        self._chunks: dict[int, int] = {}
        self._last_chunk: dict[int, int] = {}
        self.broken = False

    def expect(self, i: int, t_issue: int, logged: bool) -> None:
        self._issue[i] = (t_issue, logged)

    def _put(self, ev: tuple[Any, ...]) -> None:
        if not self._batch:
            self._loop.call_soon(self.flush)
        self._batch.append(ev)

    def flush(self) -> None:
        batch, self._batch = self._batch, []
        if batch and not self.broken:
            try:
                self._conn.send(batch)
            except OSError:  # the engine's process is gone: nobody to report to
                self.broken = True
                self._loop.stop()

    def sent(self, i: int, t_issue: int, t_sent: int) -> None:
        self._sent[i] = t_sent

    def note_chunks(self, i: int, n: int, t_ns: int) -> None:
        """n content chunks so far, the last one arrived at t_ns (the `RequestLog` call the transport
        makes while it exports); only for a request in flight, so the notes stay bounded."""
        if i in self._issue:
            self._chunks[i] = n
            self._last_chunk[i] = t_ns

    def first_token(self, i: int, text: bytes, t_ns: int | None = None) -> None:
        t = time.perf_counter_ns() if t_ns is None else t_ns
        logged = self._issue.get(i, (0, False))[1]
        self._put(("T", i, t, text if logged else None))

    def complete(
        self, i: int, output: bytes, n: int, source: str, mismatch: bool, t_ns: int | None = None
    ) -> None:
        t = time.perf_counter_ns() if t_ns is None else t_ns
        logged = self._issue.pop(i, (0, False))[1]
        self._put(("D", i, t, n, source, mismatch, output if logged else None, self._sent.pop(i, 0),
                   self._chunks.pop(i, 0), self._last_chunk.pop(i, 0)))

    def fail(self, i: int, idx: int, kind: str, message: str) -> None:
        self._issue.pop(i, None)
        self._put(("F", i, kind, message, self._sent.pop(i, 0), self._chunks.pop(i, 0), self._last_chunk.pop(i, 0)))

    def junk(self, n: int) -> None:
        self._put(("J", n))


def worker_main(requests: Connection, events: Connection, config: OpenAIConfig, spec: DatasetSpec) -> None:
    """A worker process: load the dataset, then stream what the engine sends until told to stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the engine's: it drains, then closes us
    try:
        samples = load_dataset(spec)
    except (ProctorError, OSError) as exc:
        events.send([("E", f"{type(exc).__name__}: {exc}")])
        return
    bodies: dict[int, bytes] = {}

    def body(idx: int) -> bytes:
        b = bodies.get(idx)
        if b is None:  # a warm-up request's (idx < 0): the sample's prompt reversed (clients.warmup)
            b = bodies[idx] = warm_body(config, samples, idx) if is_warm(idx) else config.body(samples[idx])
        return b

    loop = new_loop()
    asyncio.set_event_loop(loop)
    sink = PipeSink(events, loop)
    try:
        client = make_transport(config, body, sink)
        loop.run_until_complete(client.open())
    except (ProctorError, OSError) as exc:
        events.send([("E", f"{type(exc).__name__}: {exc}")])
        return

    def on_request() -> None:
        try:
            while requests.poll():
                buf = requests.recv_bytes()
                if not buf:  # the engine's stop
                    loop.stop()
                    return
                batch = []
                for i, idx, e, t_issue, flags in REQUEST.iter_unpack(buf):
                    sink.expect(i, t_issue, bool(flags & LOGGED))
                    if flags & COUNT_CHUNKS and client.export is None:  # the export is on: count chunks
                        client.export = sink
                    batch.append((i, idx, e, t_issue))
                client.start(batch)
        except (EOFError, OSError):  # the engine's process is gone
            loop.stop()

    loop.add_reader(requests.fileno(), on_request)
    events.send([("R", os.getpid())])
    try:
        loop.run_forever()
        loop.remove_reader(requests.fileno())
        with contextlib.suppress(Exception):
            loop.run_until_complete(asyncio.wait_for(client.shut(), STOP_WAIT_S / 2))
        sink.flush()
    finally:
        loop.close()


# --- the engine's side ------------------------------------------------------------------------------


class _Worker:
    __slots__ = ("index", "proc", "requests", "events", "outstanding", "alive", "pid")

    def __init__(self, index: int, proc: Any, requests: Connection, events: Connection) -> None:
        self.index, self.proc, self.requests, self.events = index, proc, requests, events
        self.outstanding = 0
        self.alive = True
        self.pid = 0


class WorkerPool:
    """N worker processes behind one `issue`; a reader thread applies their events to the run."""

    def __init__(self, config: OpenAIConfig, spec: DatasetSpec, tally: Tally, endpoints: list[Endpoint]) -> None:
        self.config = config
        self.tally = tally  # its `sink` takes the completions, read at each use (the SUT's `start` sets it)
        self.endpoints = endpoints
        self._lock = threading.Lock()
        self._pending: dict[int, tuple[_Worker, Endpoint, int, int]] = {}  # id -> worker, ep, idx, t_issue
        self._closing = False
        self.deaths: list[str] = []
        self.bad_events = 0
        ctx = multiprocessing.get_context("spawn")
        n, c = config.procs, config.concurrency
        self.workers: list[_Worker] = []
        for k in range(n):
            share = c // n + (k < c % n) if c else 0
            req_r, req_w = ctx.Pipe(duplex=False)
            ev_r, ev_w = ctx.Pipe(duplex=False)
            proc = ctx.Process(
                target=worker_main,
                args=(req_r, ev_w, replace(config, procs=0, concurrency=share), spec),
                name=f"openai-worker-{k}",
                daemon=True,
            )
            proc.start()
            req_r.close()
            ev_w.close()
            self.workers.append(_Worker(k, proc, req_w, ev_r))
        try:
            self._await_ready()
        except BaseException:
            self._stop_all()
            raise
        self._reader = threading.Thread(target=self._read, name="openai-workers", daemon=True)
        self._reader.start()

    def _await_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        for w in self.workers:
            left = deadline - time.monotonic()
            if left <= 0 or not w.events.poll(left):
                raise ProctorError(f"openai worker process {w.index} did not start in {START_TIMEOUT_S:g} s")
            try:
                msg = w.events.recv()
            except (EOFError, OSError):
                raise ProctorError(
                    f"openai worker process {w.index} exited at start (exit code {w.proc.exitcode})"
                ) from None
            if msg and msg[0][0] == "E":
                raise ConfigError(f"openai worker process {w.index}: {msg[0][1]}", key="procs")
            w.pid = int(msg[0][1])

    # --- issuing (the engine's thread) ------------------------------------------------------------

    def issue(self, pairs: list[tuple[int, int]], t_issue: int) -> None:
        """Each sample to the live worker and the endpoint with the fewest requests in flight."""
        out: dict[_Worker, bytearray] = {}
        lost: list[tuple[int, int]] = []
        pack = REQUEST.pack
        logged = self.tally.sink.output_logged
        count = COUNT_CHUNKS if self.tally.export is not None else 0
        eps = self.endpoints
        with self._lock:
            live = [w for w in self.workers if w.alive]
            for i, idx in pairs:
                if not live:
                    lost.append((i, idx))
                    continue
                w = min(live, key=_load) if len(live) > 1 else live[0]
                e = least_busy(eps)
                ep = eps[e]
                w.outstanding += 1
                ep.outstanding += 1
                ep.sent += 1
                self._pending[i] = (w, ep, idx, t_issue)
                buf = out.get(w)
                if buf is None:
                    buf = out[w] = bytearray()
                flags = 0 if is_warm(i) else (LOGGED if logged(i) else 0) | count
                buf += pack(i, idx, e, t_issue, flags)
        for w, buf in out.items():
            with contextlib.suppress(OSError):  # died under us: the reader fails its outstanding samples
                w.requests.send_bytes(buf)
        for i, idx in lost:
            self.tally.fail(i, idx, "worker", "no openai worker process is left to carry the request")

    # --- the reader thread --------------------------------------------------------------------------

    def _read(self) -> None:
        watch: dict[Any, _Worker] = {}
        for w in self.workers:
            watch[w.events] = w
            watch[w.proc.sentinel] = w
        while watch:
            for ready in wait(list(watch)):
                found = watch.get(ready)
                if found is None:
                    continue
                w = found
                if ready is w.events:
                    try:
                        batch = w.events.recv()
                    except (EOFError, OSError):
                        self._lost(w, watch)
                        continue
                    self.apply(w, batch)
                else:  # the process ended: take what it sent before, then account for it
                    with contextlib.suppress(EOFError, OSError):
                        while w.events in watch and w.events.poll():
                            self.apply(w, w.events.recv())
                    self._lost(w, watch)

    def _lost(self, w: _Worker, watch: dict[Any, _Worker]) -> None:
        watch.pop(w.events, None)
        watch.pop(w.proc.sentinel, None)
        if not w.alive:
            return
        w.proc.join(STOP_WAIT_S)
        with self._lock:
            w.alive = False
            mine = [(i, p) for i, p in self._pending.items() if p[0] is w]
            for i, (_, ep, _, _) in mine:
                del self._pending[i]
                ep.outstanding -= 1
            w.outstanding = 0
        if self._closing:
            return
        text = (
            f"openai worker process {w.index} (pid {w.pid}) died (exit code {w.proc.exitcode}); "
            f"its {len(mine)} outstanding sample(s) failed, the others go on"
        )
        self.deaths.append(text)
        log.warning(text)
        if mine:
            self.tally.faults["worker"] += len(mine)
            self.tally.sink.fail([i for i, _ in mine], f"openai SUT: worker: {text}")
        else:
            self.tally.sink.report_failure(text, "openai SUT")

    def _done(self, i: int) -> tuple[int, int] | None:
        """Forget request `i`: (QSL index, engine issue time), None if it is not outstanding."""
        with self._lock:
            p = self._pending.pop(i, None)
            if p is None:
                return None
            w, ep, idx, t_issue = p
            w.outstanding -= 1
            ep.outstanding -= 1
        return idx, t_issue

    def apply(self, w: _Worker, batch: Any) -> None:
        """Apply one batch of a worker's events; one that is not of a known shape is counted and
        reported (the first one), never raised: the reader thread must go on."""
        if not isinstance(batch, list):
            self._bad(w, batch)
            return
        tally = self.tally
        sink, times = tally.sink, tally.times
        for ev in batch:
            try:
                kind = ev[0] if isinstance(ev, tuple) and ev else None
                if kind in ("D", "F") and len(ev) in (7, 10) and _ints(ev[1]) and is_warm(ev[1]):
                    self._done(ev[1])  # a warm-up request ended (clients.warmup): not the run's
                    tally.warm_settled(ev[1], ev[2] if kind == "F" and isinstance(ev[2], str) else None)
                elif kind == "T" and len(ev) == 4 and _ints(ev[1], ev[2]) and is_warm(ev[1]):
                    pass
                elif kind == "T" and len(ev) == 4 and _ints(ev[1], ev[2]) and isinstance(ev[3], bytes | None):
                    if times is not None:
                        times_of(times, ev[1]).first_token = ev[2]
                    sink.first_token([QuerySampleResponse(ev[1], ev[3] or b"")], t_ns=ev[2])
                elif (
                    kind == "D" and len(ev) == 10 and _ints(ev[1], ev[2], ev[3], ev[7], ev[8], ev[9])
                    and isinstance(ev[4], str) and isinstance(ev[6], bytes | None)
                ):
                    i = ev[1]
                    known = self._done(i)
                    if known is not None and ev[7]:
                        tally.note_sent(i, known[1], ev[7])
                    if ev[8] > 0 and tally.export is not None:  # before the completion: the run may end with it
                        tally.export.note_chunks(i, ev[8], ev[9])
                    tally.note_done(i, ev[4], bool(ev[5]))
                    if times is not None:
                        times_of(times, i).done = ev[2]
                    sink.complete([QuerySampleResponse(i, ev[6] or b"", ev[3])], t_ns=ev[2])
                elif kind == "F" and len(ev) == 7 and _ints(ev[1], ev[4], ev[5], ev[6]) and isinstance(ev[2], str):
                    i = ev[1]
                    known = self._done(i)
                    if known is not None and ev[4]:
                        tally.note_sent(i, known[1], ev[4])
                    if ev[5] > 0 and tally.export is not None:
                        tally.export.note_chunks(i, ev[5], ev[6])
                    tally.fail(i, -1 if known is None else known[0], ev[2], str(ev[3]))
                elif kind == "J" and len(ev) == 2 and _ints(ev[1]):
                    tally.junk_events += ev[1]
                else:
                    self._bad(w, ev)
            except Exception as exc:  # noqa: BLE001 - a bad event must not end the reader thread
                self._bad(w, f"{type(exc).__name__}: {exc}")

    def _bad(self, w: _Worker, ev: Any) -> None:
        self.bad_events += 1
        text = repr(ev)
        self.tally.sink.report_failure(
            f"openai worker process {w.index} sent an event of no known shape: {text[:60]}", "openai SUT"
        )

    # --- reporting and shutdown ---------------------------------------------------------------------

    def report(self) -> list[str]:
        died = f", {len(self.deaths)} died" if self.deaths else ""
        lines = [f"worker processes: {len(self.workers)}{died}", *self.deaths]
        if self.bad_events:
            lines.append(f"{self.bad_events} worker event(s) of no known shape (ignored)")
        return lines

    def close(self) -> None:
        """Stop every worker within about a second (terminate, then kill, the ones that stay)."""
        self._closing = True
        self._stop_all()
        self._reader.join(STOP_WAIT_S)
        if not self._reader.is_alive():
            for w in self.workers:
                with contextlib.suppress(OSError):
                    w.events.close()

    def _stop_all(self) -> None:
        self._closing = True
        for w in self.workers:
            with contextlib.suppress(OSError):
                w.requests.send_bytes(b"")
        deadline = time.monotonic() + STOP_WAIT_S
        for w in self.workers:
            w.proc.join(max(0.0, deadline - time.monotonic()))
        for w in self.workers:
            if w.proc.is_alive():
                w.proc.terminate()
                w.proc.join(0.5)
            if w.proc.is_alive():
                w.proc.kill()
                w.proc.join(0.5)
            with contextlib.suppress(OSError):
                w.requests.close()


def _load(w: _Worker) -> int:
    return w.outstanding


def _ints(*xs: Any) -> bool:
    return all(type(x) is int for x in xs)


__all__ = ["COUNT_CHUNKS", "LOGGED", "REQUEST", "PipeSink", "WorkerPool", "worker_main"]
