"""Drive any proctor SUT and QSL with the official `mlperf_loadgen`, for submission logs.

A user develops against proctor's engine and produces the logs with the official one using the
same SUT code: `proctor run --engine official`. The official run's sink is `OfficialRoute`: a
`sink.StartableSUT` is started with it, and while the test runs the module functions of
`proctor.loadgen.completion` forward to it too; it hands each completion to the official
`QuerySamplesComplete` / `FirstTokenComplete` with each payload's address and size. Response ids are
the official ones (addresses), which fit proctor's int64 arrays.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from proctor.errors import ConfigError, RunError
from proctor.loadgen import completion
from proctor.loadgen.completion import FaultCounter
from proctor.loadgen.engine import (
    MAX_ERROR_MESSAGES,
    Metric,
    RunOutcome,
    log_paths,
    metric_name,
    sut_report_lines,
)
from proctor.loadgen.logs import reader as logs_reader
from proctor.loadgen.logs.detail import SHORT_RUN_KEY, SUT_REPORT_KEY, WARMUP_KEY, append_record
from proctor.loadgen.logs.summary import append_annotations
from proctor.loadgen.settings import LogSettings, TestSettings, binding_name
from proctor.loadgen.sink import ResponseCallback, StartableSUT, WarmUpSUT
from proctor.loadgen.types import ArraySUT, Scenario, sut_name
from proctor.rules.loadgen_releases import OFFICIAL_EXTRA, OFFICIAL_EXTRA_CHECKOUT
from proctor.trees import clear_output


def official_module() -> Any:
    try:
        import mlperf_loadgen
    except ImportError as exc:
        raise ConfigError(
            f"the official LoadGen is not installed: {OFFICIAL_EXTRA} (from a checkout: "
            f"{OFFICIAL_EXTRA_CHECKOUT})", key="--engine"
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
    """The `CompletionSink` of an official run: forwards completions to the official module's
    `QuerySamplesComplete` / `FirstTokenComplete` (which take their own time, so `t_ns` is unused).
    The official LoadGen knows no failed sample: a failed one is completed empty and counted as an
    error of the run."""

    def __init__(self, lg: Any) -> None:
        self.lg = lg
        self.completed_samples = 0
        self.error_count = 0
        self.errors: list[str] = []  # what the SUT reported failing (the official log cannot say)
        self.faults = FaultCounter(self._error)

    def _error(self, message: str) -> None:
        self.error_count += 1
        if len(self.errors) < MAX_ERROR_MESSAGES:
            self.errors.append(message)

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

    def complete(
        self,
        responses: Sequence[Any],
        response_cb: ResponseCallback | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        rs, keep = self._responses(
            [int(r.id) for r in responses], [r.data for r in responses], [int(r.n_tokens) for r in responses]
        )
        self.lg.QuerySamplesComplete(rs, response_cb) if response_cb else self.lg.QuerySamplesComplete(rs)
        self.completed_samples += len(rs)
        del keep

    def complete_arrays(
        self,
        ids: np.ndarray,
        n_tokens: np.ndarray | None = None,
        data: np.ndarray | None = None,
        *,
        t_ns: int | None = None,
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

    def first_token(
        self,
        responses: Sequence[Any],
        response_cb: ResponseCallback | None = None,
        *,
        t_ns: int | None = None,
    ) -> None:
        rs, keep = self._responses(
            [int(r.id) for r in responses], [r.data for r in responses], [int(r.n_tokens) for r in responses]
        )
        self.lg.FirstTokenComplete(rs, response_cb) if response_cb else self.lg.FirstTokenComplete(rs)
        del keep

    def fail(self, ids: Sequence[int], reason: str) -> None:
        """Complete the failed samples empty (so the official run ends) and count them as errors."""
        id_list = [int(i) for i in ids]
        if not id_list:
            return
        self.lg.QuerySamplesComplete([self.lg.QuerySampleResponse(i, 0, 0) for i in id_list])
        self.completed_samples += len(id_list)
        self.faults.report(reason, f"{len(id_list)} sample(s) failed")

    def report_failure(self, exc: BaseException | str, where: str = "") -> bool:
        self.faults.report(exc, where)
        return True

    def output_logged(self, response_id: int) -> bool:
        """The official module does not say which samples it logs: every output is shipped."""
        return True


class _FastAdapter:
    """The official fast SUT hands lists; proctor array SUTs take numpy arrays."""

    def __init__(self, sut: Any) -> None:
        self.arrays = sut.issue_query_arrays

    def __call__(self, ids: list[int], indices: list[int]) -> None:
        self.arrays(np.array(ids, np.int64), np.array(indices, np.int64))


METRIC_KEYS = {  # the detail-log key of each scenario's headline metric
    "SingleStream": "early_stopping_latency_ss",
    "MultiStream": "early_stopping_latency_ms",
    "Server": "result_completed_samples_per_sec",
    "Offline": "result_samples_per_second",
}
PERCENTILE_FIELDS = {
    "SingleStream": "single_stream_target_latency_percentile",
    "MultiStream": "multi_stream_target_latency_percentile",
}


def official_metric(values: dict[str, Any], settings: TestSettings) -> Metric | None:
    """The headline metric from an official detail log, named as proctor's engine names it."""
    scenario = str(settings.scenario)
    value = values.get(METRIC_KEYS[scenario])
    if not isinstance(value, int | float):
        return None
    field_name = PERCENTILE_FIELDS.get(scenario)
    pct = float(getattr(settings, field_name)) if field_name else 0.99
    name, unit = metric_name(scenario, pct)
    return Metric(name, float(value), unit)


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
    short_run: str = "",
) -> RunOutcome:
    """One official StartTest with a proctor SUT and QSL; the four official log files land where
    `log_settings` says. The official LoadGen closes its logs itself: proctor's annotations (the
    short-run mark, the SUT's report) are appended right after StartTest returns. Raises
    ConfigError when the official module is missing."""
    lg = official_module()
    log_settings = log_settings or LogSettings()
    Path(log_settings.log_output.outdir).mkdir(parents=True, exist_ok=True)
    for path in log_paths(log_settings).values():  # the official opens its logs following any link:
        clear_output(path)  # a link, FIFO or device placed where one goes is refused first (TreeError)
    arrays = sut.issue_query_arrays if isinstance(sut, ArraySUT) else None  # None: an objects-only SUT
    if arrays is not None:
        handle = lg.ConstructFastSUT(_FastAdapter(sut), sut.flush_queries)
        destroy = lg.DestroyFastSUT  # the fast SUT is logged as "PyFastSUT" (official binding)
    else:
        name = sut_name(sut)
        handle = lg.ConstructQDL(sut.issue_query, sut.flush_queries, lambda: name)
        destroy = lg.DestroyQDL  # the QDL form keeps the SUT's own name in the logs
    qsl_handle = lg.ConstructQSL(
        int(qsl.total_sample_count), int(qsl.performance_sample_count), qsl.load_samples, qsl.unload_samples
    )
    route = OfficialRoute(lg)
    completion.attach(route)  # the module functions (official-API harnesses) reach the route too
    t0 = time.perf_counter()
    try:
        if isinstance(sut, StartableSUT):
            sut.start(route)
        warmup = sut.warm_up(official_in_flight(settings)) if isinstance(sut, WarmUpSUT) else ""
        lg.StartTestWithLogSettings(
            handle,
            qsl_handle,
            official_settings(lg, settings),
            official_log_settings(lg, log_settings),
            str(audit_config or ""),
        )
    finally:
        completion.detach(route)
        wall = time.perf_counter() - t0
        lg.DestroyQSL(qsl_handle)
        destroy(handle)
    paths = log_paths(log_settings)
    if not paths["detail"].is_file():
        raise RunError(f"the official LoadGen wrote no detail log in {paths['detail'].parent}")
    report = sut_report_lines(sut)
    if warmup:  # done before StartTest, so outside the official clock; logged as proctor's engine logs it
        append_record(paths["detail"], WARMUP_KEY, warmup)
    annotate(paths, short_run, report)
    values, errors, warnings, messages = read_detail(paths["detail"])
    messages = (route.errors + messages)[:MAX_ERROR_MESSAGES]
    errors += route.error_count
    invalid = str(values.get("result_invalid_reason") or "")
    return RunOutcome(
        result=None,
        valid=values.get("result_validity") == "VALID",
        incomplete=False,
        incomplete_reason="",
        log_paths=paths,
        errors=errors,
        warnings=warnings,
        engine="official",
        scenario=str(settings.scenario),
        mode=str(settings.mode),
        metric=official_metric(values, settings),
        invalid_reasons=[invalid] if invalid else [],
        error_messages=messages,
        sut_report=report,
        wall_s=wall,
        detail=values,
        accuracy_samples=_accuracy_count(paths["accuracy"]) if str(settings.mode) == "AccuracyOnly" else 0,
        sut_failures=route.faults.total,
        warmup=warmup,
    )


def official_in_flight(settings: TestSettings) -> int:
    """The most queries the official run keeps in flight where the scenario fixes it (0: it does not),
    for `sink.WarmUpSUT.warm_up`, as proctor's engine tells it."""
    if settings.scenario == Scenario.SINGLE_STREAM:
        return 1
    if settings.scenario == Scenario.MULTI_STREAM:
        return int(settings.multi_stream_samples_per_query)
    return 0


def annotate(paths: dict[str, Path], short_run: str, sut_report: list[str]) -> None:
    """proctor's annotations on the logs the official LoadGen wrote and closed: the detail keys and
    the summary's lines, as proctor's engine writes them before closing its own."""
    if short_run:
        append_record(paths["detail"], SHORT_RUN_KEY, short_run)
    if sut_report:
        append_record(paths["detail"], SUT_REPORT_KEY, sut_report)
    if paths["summary"].is_file():
        append_annotations(paths["summary"], short_run, sut_report)


def _accuracy_count(path: Path) -> int:
    """The entries of an official accuracy log (a JSON list, one object per line)."""
    try:
        with open(path, encoding="utf-8") as f:
            return sum(1 for line in f if line.lstrip().startswith("{"))
    except OSError:
        return 0


__all__ = [
    "OfficialRoute",
    "annotate",
    "official_metric",
    "official_log_settings",
    "official_module",
    "official_settings",
    "run_official",
]
