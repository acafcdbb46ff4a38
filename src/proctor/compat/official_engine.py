"""Drive any proctor SUT and QSL with the official `mlperf_loadgen`, for submission logs.

A user develops against proctor's engine and produces the logs with the official one using the
same SUT code: `proctor run --engine official`. proctor SUTs report completions through
`proctor.loadgen.completion` (`query_samples_complete`, `complete_arrays`, `first_token_complete`);
while the official test runs, those calls are routed here and forwarded to the official
`QuerySamplesComplete` / `FirstTokenComplete` with each payload's address and size. Response ids are
the official ones (addresses), which fit proctor's int64 arrays.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from proctor.errors import ConfigError, RunError
from proctor.loadgen import completion
from proctor.loadgen.logs import reader as logs_reader
from proctor.loadgen.settings import LogSettings, TestSettings, binding_name


def official_module() -> Any:
    try:
        import mlperf_loadgen
    except ImportError as exc:
        raise ConfigError(
            "the official LoadGen is not installed: pip install mlcommons-loadgen", key="--engine"
        ) from exc
    return mlperf_loadgen


def official_settings(lg: Any, settings: TestSettings) -> Any:
    """The official TestSettings holding the same values as proctor's."""
    ts = lg.TestSettings()
    for name in TestSettings.field_names():
        value = getattr(settings, name)
        if name == "scenario":
            value = getattr(lg.TestScenario, str(value))
        elif name == "mode":
            value = getattr(lg.TestMode, str(value))
        setattr(ts, binding_name(name), value)
    return ts


def official_log_settings(lg: Any, log_settings: LogSettings) -> Any:
    ls = lg.LogSettings()
    for name in (
        "outdir",
        "prefix",
        "suffix",
        "prefix_with_datetime",
        "copy_detail_to_stdout",
        "copy_summary_to_stdout",
    ):
        setattr(ls.log_output, name, getattr(log_settings.log_output, name))
    ls.enable_trace = log_settings.enable_trace
    return ls


def _buffer(data: Any) -> np.ndarray:
    if data is None:
        return np.zeros(0, np.uint8)
    if isinstance(data, np.ndarray):
        return np.ascontiguousarray(data)
    return np.frombuffer(memoryview(data).cast("B"), np.uint8)


class OfficialRoute:
    """Stands where proctor's CompletionTracker stands and forwards completions to the official module."""

    def __init__(self, lg: Any) -> None:
        self.lg = lg
        self.completed_samples = 0
        self.error_count = 0

    def _responses(
        self, ids: list[int], datas: list[Any], ntoks: list[int]
    ) -> tuple[list[Any], list[np.ndarray]]:
        R = self.lg.QuerySampleResponse
        keep: list[np.ndarray] = []
        out = []
        for i, d, n in zip(ids, datas, ntoks, strict=True):
            if d is None:
                out.append(R(i, 0, 0, n))
                continue
            buf = _buffer(d)
            keep.append(buf)  # alive until the official call has copied it
            out.append(R(i, buf.ctypes.data if buf.nbytes else 0, buf.nbytes, n))
        return out, keep

    def complete(self, responses: Any, response_cb: Any = None) -> None:
        rs, keep = self._responses(
            [int(r.id) for r in responses], [r.data for r in responses], [int(r.n_tokens) for r in responses]
        )
        self.lg.QuerySamplesComplete(rs, response_cb) if response_cb else self.lg.QuerySamplesComplete(rs)
        self.completed_samples += len(rs)
        del keep

    def complete_arrays(
        self, ids: np.ndarray, n_tokens: np.ndarray | None = None, data: np.ndarray | None = None
    ) -> None:
        R, n = self.lg.QuerySampleResponse, len(ids)
        id_list = np.asarray(ids).tolist()
        if data is None:
            if n_tokens is None:
                rs = [R(i, 0, 0) for i in id_list]
            else:
                rs = [R(i, 0, 0, t) for i, t in zip(id_list, np.asarray(n_tokens).tolist(), strict=True)]
            self.lg.QuerySamplesComplete(rs)
        else:
            rows = np.ascontiguousarray(data).reshape(n, -1) if n else np.zeros((0, 0), np.uint8)
            row_bytes = rows.strides[0] if n else 0
            base = rows.ctypes.data
            toks = [0] * n if n_tokens is None else np.asarray(n_tokens).tolist()
            rs = [
                R(i, base + k * row_bytes, row_bytes, t)
                for k, (i, t) in enumerate(zip(id_list, toks, strict=True))
            ]
            self.lg.QuerySamplesComplete(rs)
            del rows
        self.completed_samples += n

    def first_token(self, responses: Any, response_cb: Any = None) -> None:
        rs, keep = self._responses(
            [int(r.id) for r in responses], [r.data for r in responses], [int(r.n_tokens) for r in responses]
        )
        self.lg.FirstTokenComplete(rs, response_cb) if response_cb else self.lg.FirstTokenComplete(rs)
        del keep


class _FastAdapter:
    """The official fast SUT hands lists; proctor array SUTs take numpy arrays."""

    def __init__(self, sut: Any) -> None:
        self.arrays = sut.issue_query_arrays

    def __call__(self, ids: list[int], indices: list[int]) -> None:
        self.arrays(np.array(ids, np.int64), np.array(indices, np.int64))


@dataclass(slots=True)
class OfficialOutcome:
    """What the official run left, read back from its detail log."""

    valid: bool
    detail: dict[str, Any]
    log_paths: dict[str, Path]
    errors: int
    warnings: int
    wall_s: float
    metric: tuple[str, Any] | None = None
    error_messages: list[str] = field(default_factory=list)


METRIC_KEYS = {
    "SingleStream": ("early_stopping_latency_ss", "90th percentile latency (early stopping estimate, ns)"),
    "MultiStream": (
        "early_stopping_latency_ms",
        "99th percentile per-query latency (early stopping estimate, ns)",
    ),
    "Server": ("result_completed_samples_per_sec", "completed samples per second"),
    "Offline": ("result_samples_per_second", "samples per second"),
}


def read_detail(path: Path) -> tuple[dict[str, Any], int, int, list[str]]:
    """Each key's value, and the error and warning counts, of an official detail log (the one
    reader in `proctor.loadgen.logs`)."""
    log = logs_reader.read_detail(path, keep_entries=False)
    messages = [f"{e.key}: {e.value}" for e in log.errors]
    return log.values, log.n_errors, log.n_warnings, messages


def run_official(
    sut: Any,
    qsl: Any,
    settings: TestSettings,
    log_settings: LogSettings | None = None,
    *,
    audit_config: str | Path | None = "audit.config",
) -> OfficialOutcome:
    """One official StartTest with a proctor SUT and QSL; the four official log files land where
    `log_settings` says. Raises ConfigError when the official module is missing."""
    from proctor.loadgen.engine import log_paths

    lg = official_module()
    log_settings = log_settings or LogSettings()
    Path(log_settings.log_output.outdir).mkdir(parents=True, exist_ok=True)
    arrays = getattr(sut, "issue_query_arrays", None)
    if arrays is not None:
        handle = lg.ConstructFastSUT(_FastAdapter(sut), sut.flush_queries)
        destroy = lg.DestroyFastSUT  # the fast SUT is logged as "PyFastSUT" (official binding)
    else:
        name = str(sut.name)
        handle = lg.ConstructQDL(sut.issue_query, sut.flush_queries, lambda: name)
        destroy = lg.DestroyQDL  # the QDL form keeps the SUT's own name in the logs
    qsl_handle = lg.ConstructQSL(
        int(qsl.total_sample_count), int(qsl.performance_sample_count), qsl.load_samples, qsl.unload_samples
    )
    route = OfficialRoute(lg)
    completion.attach(route)  # type: ignore[arg-type]
    t0 = time.perf_counter()
    try:
        lg.StartTestWithLogSettings(
            handle,
            qsl_handle,
            official_settings(lg, settings),
            official_log_settings(lg, log_settings),
            str(audit_config or ""),
        )
    finally:
        completion.detach(route)  # type: ignore[arg-type]
        wall = time.perf_counter() - t0
        lg.DestroyQSL(qsl_handle)
        destroy(handle)
    paths = log_paths(log_settings)
    if not paths["detail"].is_file():
        raise RunError(f"the official LoadGen wrote no detail log in {paths['detail'].parent}")
    values, errors, warnings, messages = read_detail(paths["detail"])
    key, label = METRIC_KEYS[str(settings.scenario)]
    metric = (label, values[key]) if key in values else None
    return OfficialOutcome(
        values.get("result_validity") == "VALID", values, paths, errors, warnings, wall, metric, messages
    )


__all__ = [
    "OfficialOutcome",
    "OfficialRoute",
    "official_log_settings",
    "official_module",
    "official_settings",
    "run_official",
]
