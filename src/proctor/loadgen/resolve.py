"""The one settings pipeline: what a run is asked to do, from the conf files and overrides.

    mlperf.conf -> user.conf -> overrides        resolve_settings  (the requested TestSettings)
    -> audit.config -> test05                    start_settings    (what StartTest logs as requested_*)
    -> normalize                                 EffectiveSettings (keeps `requested` beside it)

The CLI, the demo, the compat layer and the official-engine adapter all build their settings here,
as the official LoadGen keeps requested settings beside effective ones (test_settings_internal.h;
docs/architecture.md, "Inference"). Settings that cannot run are refused before anything starts,
each with the file:line:key or option that set them. A run whose duration or query count is below
what mlperf.conf asks for this model and scenario is valid for its settings but is not a
submission run: `Resolved.short_run` says why, and the caller marks the logs with it.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path

from proctor.errors import ConfigError, SettingRangeError
from proctor.loadgen.conf import (
    ConfEntry,
    ConfType,
    _resolve_scenario,
    apply_conf,
    mlperf_models,
    parse_conf,
    shipped_mlperf_conf,
)
from proctor.loadgen.normalize import normalize
from proctor.loadgen.option_names import scenario_field
from proctor.loadgen.scenarios import Scenario, TestMode
from proctor.loadgen.settings import (
    INT64_MAX,
    MAX_QPS,
    NS_PER_S,
    RANGES,
    TestSettings,
    value_problem,
)
from proctor.typed_records import field, record

BYTES_PER_SAMPLE = 64  # schedule + records arrays per generated sample (loadgen/records.py)
_OFFLINE_SLACK = 1.1  # as normalize: Offline generates 10% more samples than min duration needs
_SHOWN_MODELS = 12


@record(frozen=True, slots=True)
class Overrides:
    """Values that replace the conf files' (None: keep them). `labels` names each in messages the way
    the caller sets it (the CLI: its flags); without a label a value is named by its own name here
    (`min_duration_ms`, ..., and `model`, `scenario`)."""

    min_duration_ms: int | None = None
    max_duration_ms: int | None = None
    target_qps: float | None = None  # Server target QPS / Offline expected QPS
    expected_latency_ms: float | None = None  # SingleStream / MultiStream expected latency
    min_query_count: int | None = None
    labels: Mapping[str, str] = field(default_factory=dict)

    def label(self, name: str) -> str:
        return self.labels.get(name, name)


@record(frozen=True, slots=True)
class Confs:
    """The conf files: `user_conf` is a path, or conf text (a str holding a newline or '=')."""

    user_conf: Path | str | None = None
    mlperf_conf: Path | None = None  # None: the shipped official mlperf.conf
    user_conf_name: str = "user.conf"  # how user.conf *text* is named in messages


@record(frozen=True, slots=True)
class Resolved:
    """The requested settings, what the rules ask (mlperf.conf alone), and what to tell the user."""

    settings: TestSettings
    rules: TestSettings
    notes: tuple[str, ...]
    short_run: str  # "" for a run by the rules; else why it is not a submission run
    origin: Mapping[str, ConfEntry | str] = field(default_factory=dict)  # field -> its conf line or option

    def __iter__(self) -> Iterator[object]:  # `settings, notes = resolve_settings(...)`
        yield self.settings
        yield self.notes


Origin = dict[str, ConfEntry | str]  # field -> the conf line or the option that set it


def resolve_settings(
    model: str,
    scenario: Scenario | str,
    mode: TestMode | str | None = None,
    confs: Confs | None = None,
    overrides: Overrides | None = None,
    *,
    check_model: bool = True,
    extra_models: Collection[str] = (),
) -> Resolved:
    """Requested TestSettings for `model` in `scenario`, checked; raises ConfigError naming the source.

    `extra_models`: models mlperf.conf does not name that the caller knows (proctor's own workloads,
    from its benchmark table), run on the `*` lines alone as the official LoadGen runs them;
    `check_model` False accepts any model that way.
    """
    confs = confs or Confs()
    ov = overrides or Overrides()
    try:
        scen, conf_model = _resolve_scenario(scenario, model)
    except ValueError as exc:
        raise ConfigError(str(exc), key=ov.label("scenario")) from None
    known = mlperf_models(confs.mlperf_conf)
    if check_model and conf_model not in known and conf_model not in extra_models:
        raise ConfigError(_unknown_model(model, known), key=ov.label("model"))
    mlperf_entries = parse_conf(confs.mlperf_conf or shipped_mlperf_conf(), ConfType.MLPERF)
    user_entries = None
    if confs.user_conf is not None:
        src = confs.user_conf
        name = None if isinstance(src, Path) or ("\n" not in src and "=" not in src) else confs.user_conf_name
        user_entries = parse_conf(src, ConfType.USER, name=name)
        _check_models(user_entries, known, conf_model)
    origin: Origin = {}
    rules = apply_conf(TestSettings(scenario=scen), mlperf_entries, conf_model, scen, ConfType.MLPERF, origin)
    settings = rules
    if user_entries is not None:
        settings = apply_conf(settings, user_entries, conf_model, scen, ConfType.USER, origin)
    if mode is not None:
        settings = dataclasses.replace(settings, mode=TestMode(mode))
    settings = _apply_overrides(settings, ov, origin)
    check_settings(settings, origin)
    notes: list[str] = []
    if confs.user_conf is not None:
        notes.append(f"user.conf applied: {confs.user_conf if isinstance(confs.user_conf, Path) else name}")
    short = short_run_reason(settings, rules)
    if short:
        notes.append(f"not a submission run: {short}")
    return Resolved(settings, rules, tuple(notes), short, origin)


def _unknown_model(model: str, known: tuple[str, ...]) -> str:
    hint = difflib.get_close_matches(model, known, n=1, cutoff=0.6)
    if hint:
        return f"unknown model '{model}' (not in mlperf.conf); did you mean '{hint[0]}'?"
    shown = ", ".join(known[:_SHOWN_MODELS]) + (", ..." if len(known) > _SHOWN_MODELS else "")
    return f"unknown model '{model}' (not in mlperf.conf; its models: {shown})"


def _check_models(entries: list[ConfEntry], known: tuple[str, ...], model: str) -> None:
    """A user.conf line for a model mlperf.conf does not know never applies: a typo, refused."""
    for e in entries:
        if e.model not in ("*", model) and e.model not in known:
            hint = difflib.get_close_matches(e.model, known, n=1, cutoff=0.6)
            raise ConfigError(
                f"unknown model '{e.model}' (not in mlperf.conf, so this line never applies)"
                + (f"; did you mean '{hint[0]}'?" if hint else ""),
                file=e.file,
                line=e.line,
                key=e.key,
            )


def _apply_overrides(s: TestSettings, ov: Overrides, origin: Origin) -> TestSettings:
    values: dict[str, object] = {}

    def put(name: str, value: object, label: str) -> None:
        values[name] = value
        origin[name] = ov.label(label)

    scen = Scenario(s.scenario)
    for name in ("min_duration_ms", "max_duration_ms", "min_query_count"):
        value = getattr(ov, name)
        if value is not None:
            put(name, _checked(name, value, ov.label(name)), name)
    if ov.target_qps is not None:
        rate_field = scenario_field("target_qps", scen)
        if rate_field is None:
            raise ConfigError(
                f"applies to Server and Offline; use {ov.label('expected_latency_ms')} for {scen}",
                key=ov.label("target_qps"),
            )
        put(rate_field, _checked(rate_field, ov.target_qps, ov.label("target_qps")), "target_qps")
    if ov.expected_latency_ms is not None:
        latency_field = scenario_field("expected_latency_ms", scen)
        if latency_field is None:
            raise ConfigError(
                f"applies to SingleStream and MultiStream; use {ov.label('target_qps')} for {scen}",
                key=ov.label("expected_latency_ms"),
            )
        ms = ov.expected_latency_ms
        label = ov.label("expected_latency_ms")
        if isinstance(ms, bool) or not isinstance(ms, int | float):
            raise SettingRangeError(f"must be a number, got {ms!r}", key=label)
        ns = float(ms) * 1e6  # a finite ms value past ~1.8e302 becomes inf here: refused below, in ms
        problem = value_problem(latency_field, ns, scale=1e6, shown=repr(ms), unit="ms")
        if problem:
            raise SettingRangeError(problem, key=label)
        put(latency_field, ns, "expected_latency_ms")
    return dataclasses.replace(s, **values)  # type: ignore[arg-type]


def _checked(name: str, value: float, label: str) -> float:
    """`value` for field `name`, or SettingRangeError naming the option (`label`) that gave it."""
    problem = value_problem(name, value)
    if problem:
        raise SettingRangeError(problem, key=label)
    return int(value) if RANGES[name].whole else float(value)


def _refuse(message: str, field_name: str, origin: Origin) -> ConfigError:
    """A SettingRangeError naming where `field_name` was set: the conf line, the option or the field."""
    src = origin.get(field_name)
    if isinstance(src, ConfEntry):
        return SettingRangeError(message, file=src.file, line=src.line, key=src.key)
    return SettingRangeError(message, key=src or field_name)


def _rate(s: TestSettings) -> tuple[str, float]:
    """(field, queries per second) the scenario's schedule is generated from."""
    scen = Scenario(s.scenario)
    if scen is Scenario.SINGLE_STREAM:
        return "single_stream_expected_latency_ns", 1e9 / float(s.single_stream_expected_latency_ns)
    if scen is Scenario.MULTI_STREAM:
        return "multi_stream_expected_latency_ns", 1e9 / float(s.multi_stream_expected_latency_ns)
    if scen is Scenario.SERVER:
        return "server_target_qps", float(s.server_target_qps)
    return "offline_expected_qps", float(s.offline_expected_qps)


def _memory_bytes() -> int:
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 1 << 40


def check_settings(s: TestSettings, origin: Origin | None = None) -> None:
    """Refuse settings no run can honour, naming the conf line, option or field that set each: a
    value outside its legal range (settings.RANGES: NaN, inf, <= 0 rates, durations and bounds past
    the int64 nanosecond clock, counts and seeds past 64 bits), a Server run without a latency bound,
    a schedule past the clock or larger than this machine's memory. The official LoadGen clamps some
    of these (a negative target QPS becomes 1) and reports the run VALID; proctor stops first."""
    origin = origin or {}
    for name in TestSettings.field_names():
        if name in ("scenario", "mode"):
            continue
        problem = value_problem(name, getattr(s, name))
        if problem:
            raise _refuse(problem, name, origin)
    scen = Scenario(s.scenario)
    if scen is Scenario.SERVER and int(s.server_target_latency_ns) <= 0 and not s.use_token_latencies:
        raise _refuse("Server's latency bound must be > 0", "server_target_latency_ns", origin)
    if TestMode(s.mode) is not TestMode.ACCURACY_ONLY:
        _check_span(s, origin)
        _check_size(s, origin)


def _check_span(s: TestSettings, origin: Origin) -> None:
    """The schedule's timestamps are int64 nanoseconds: min_query_count queries at the scenario's
    rate, or its duration (non-Server schedules run to twice min_duration), must fit them with room
    (x4: a Poisson schedule's sum strays from its mean)."""
    scen = Scenario(s.scenario)
    rate_field, qps = _rate(s)
    period_ns = NS_PER_S / qps
    gen_ns = (1 if scen is Scenario.SERVER else 2) * int(s.min_duration_ms) * 1_000_000
    queries = 1 if scen is Scenario.OFFLINE else int(s.min_query_count) + 1
    span_ns = max(float(gen_ns), queries * period_ns)
    if span_ns * 4 > INT64_MAX:
        raise _refuse(
            f"{queries:,} queries at {qps:g} per second would be scheduled over ~{span_ns / NS_PER_S / 31_557_600:,.0f} "
            f"years, past the nanosecond clock; lower min_query_count or raise {rate_field}",
            "min_query_count" if rate_field not in origin else rate_field,
            origin,
        )


def _check_size(s: TestSettings, origin: Origin) -> None:
    """The performance schedule is generated before the clock starts: it must fit in memory."""
    scen = Scenario(s.scenario)
    rate_field, qps = _rate(s)
    seconds = int(s.min_duration_ms) / 1000
    queries = max(
        float(s.min_query_count), seconds * qps * (_OFFLINE_SLACK if scen is Scenario.OFFLINE else 1)
    )
    if s.max_query_count:
        queries = min(queries, float(s.max_query_count))
    spq = int(s.multi_stream_samples_per_query) if scen is Scenario.MULTI_STREAM else 1
    samples = queries * spq
    need, have = samples * BYTES_PER_SAMPLE, _memory_bytes()
    if need > have:
        blame = "min_query_count" if float(s.min_query_count) >= seconds * qps else "min_duration_ms"
        if spq > queries:
            blame = "multi_stream_samples_per_query"
        raise _refuse(
            f"the run would generate ~{samples:.3g} samples before it starts (~{need / 2**30:,.0f} GiB of "
            f"memory, more than this machine's {have / 2**30:,.0f} GiB); lower min_duration, min_query_count "
            f"or {rate_field}",
            blame,
            origin,
        )


def max_schedulable_qps(min_duration_ms: int) -> float:
    """The highest Server rate whose schedule for `min_duration_ms` fits this machine's memory and
    the schedule's nanosecond resolution (settings.MAX_QPS): FindPeakPerformance widens no further."""
    seconds = max(int(min_duration_ms) / 1000, 1e-3)
    return min(MAX_QPS, _memory_bytes() / BYTES_PER_SAMPLE / seconds)


def _seconds(ms: int) -> str:
    return f"{ms / 1000:g} s"


def short_run_reason(settings: TestSettings, rules: TestSettings) -> str:
    """Why a performance run with `settings` is not a submission run by `rules` ("" when it is)."""
    if TestMode(settings.mode) is TestMode.ACCURACY_ONLY:
        return ""
    why = []
    if settings.min_duration_ms < rules.min_duration_ms:
        why.append(f"min_duration {_seconds(settings.min_duration_ms)} < {_seconds(rules.min_duration_ms)}")
    if settings.max_duration_ms and settings.max_duration_ms < rules.min_duration_ms:
        why.append(f"max_duration {_seconds(settings.max_duration_ms)} < {_seconds(rules.min_duration_ms)}")
    if settings.min_query_count < rules.min_query_count:
        why.append(f"min_query_count {settings.min_query_count} < {rules.min_query_count}")
    return "; ".join(why)


def start_settings(
    settings: TestSettings, audit_config: str | os.PathLike[str] | None, origin: Origin | None = None
) -> TestSettings:
    """What StartTest runs: audit.config (read with model "*") applied, then test05, the one place
    for it: performance mode with the test05 seeds (official StartTest, before anything is logged).
    Raises ConfigError for settings no run can honour (check_settings), naming the conf line or
    option in `origin` (which gets audit.config's lines)."""
    if audit_config is not None and Path(audit_config).is_file():
        entries = parse_conf(Path(audit_config), ConfType.AUDIT)
        settings = apply_conf(settings, entries, "*", settings.scenario, ConfType.AUDIT, origin)
    if settings.test05:
        settings = dataclasses.replace(
            settings,
            mode=TestMode.PERFORMANCE_ONLY,
            qsl_rng_seed=settings.test05_qsl_rng_seed,
            sample_index_rng_seed=settings.test05_sample_index_rng_seed,
            schedule_rng_seed=settings.test05_schedule_rng_seed,
        )
    check_settings(settings, origin)  # settings built in code (run_test, the compat API) are held to the same
    return settings


def check_for_qsl(
    resolved: Resolved, audit_config: str | os.PathLike[str] | None, qsl_total: int, qsl_perf_count: int
) -> None:
    """Before a run starts, with its QSL known: what StartTest will run (audit.config, test05) and
    normalize's guard on it (normalize.guard: performance_issue_same_index inside the loaded set, the
    schedule within the clock), each error naming the conf line or option that set the value."""
    origin: Origin = dict(resolved.origin)
    started = start_settings(resolved.settings, audit_config, origin)
    try:
        normalize(started, int(qsl_total), int(qsl_perf_count))
    except SettingRangeError as exc:
        if exc.key in origin:
            raise _refuse(exc.message, exc.key, origin) from None
        raise


__all__ = [
    "Confs",
    "Overrides",
    "Resolved",
    "check_for_qsl",
    "check_settings",
    "resolve_settings",
    "short_run_reason",
    "start_settings",
]
