"""mlperf.conf / user.conf / audit.config: the official format and lookup order, with loud errors.

A line is `model.scenario.key = value`. For each key the official LoadGen takes the first match of
`model.scenario.key`, `*.scenario.key`, `model.*.key`, `*.*.key` within one file; files apply in
the order code < mlperf.conf < user.conf < audit.config (then test05, in `normalize`). audit.config
is read with model `*`, so model-specific lines in it never match
(docs/architecture.md, "Inference"; rules "Load Generator" and "Audit Process").

The official parser silently ignores unknown keys, keys it only reads from mlperf.conf, lines
without spaces around `=`, and model-specific scenario keys under the wrong scenario; it rejects a
whole file over a trailing comment without saying which key. Here each of those is a ConfigError
naming the file, line and key, with the closest known key for a typo. A UTF-8 byte-order mark is
skipped (the official parser would glue it to the first key and ignore that line), numbers too
large for the official 64-bit fields are refused rather than wrapped, and every number must lie in
its field's legal range (settings.RANGES, in the key's own units: ms, percent), refused with the
file, line and key (SettingRangeError) where it is read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from enum import IntEnum
from functools import cache, lru_cache
from pathlib import Path

from proctor.errors import ConfigError, SettingRangeError
from proctor.lazy_patterns import LazyPattern
from proctor.loadgen.scenarios import MODE_BY_NUMBER, Scenario
from proctor.loadgen.settings import SHORT_NAMES, TestSettings, value_problem
from proctor.trees import read_at_most
from proctor.typed_records import record, replace

_U64_MAX = (1 << 64) - 1
SCENARIO_NAMES = tuple(s.value for s in Scenario)
AUDIT_CONFIG_NAME = "audit.config"


class ConfType(IntEnum):
    """The official `conf_type` argument of TestSettings::FromConfig."""

    MLPERF = 0  # the shipped mlperf.conf: the only file that may set seeds
    USER = 1  # user.conf
    AUDIT = 2  # audit.config, read with model "*"


_CONF_TYPE_NAMES = {
    "mlperf.conf": ConfType.MLPERF,
    "user.conf": ConfType.USER,
    "audit.config": ConfType.AUDIT,
}


@record(frozen=True, slots=True)
class ConfEntry:
    file: str
    line: int
    model: str
    scenario: str  # a Scenario value or "*"
    key: str
    value: str  # the text as written; validated by parse_conf


@record(frozen=True, slots=True)
class ConfRead:
    """One lookup the official FromConfig performs, in its order.

    `scenario` None means the run's scenario; otherwise the official code looks the key up under
    that fixed scenario name whatever the run's scenario is.
    """

    key: str
    field: str
    kind: str  # "u64" | "f64" | "bool" | "mode"
    scale: float = 1
    scenario: str | None = None
    mlperf_only: bool = False
    requires: str | None = None  # a bool TestSettings field that must already be true


_SS, _MS, _SV, _OFF = (
    s.value for s in (Scenario.SINGLE_STREAM, Scenario.MULTI_STREAM, Scenario.SERVER, Scenario.OFFLINE)
)

# test_settings_internal.cc TestSettings::FromConfig, in its lookup order (spec §2).
READS: tuple[ConfRead, ...] = (
    ConfRead("mode", "mode", "mode"),
    ConfRead("qsl_rng_seed", "qsl_rng_seed", "u64", mlperf_only=True),
    ConfRead("sample_index_rng_seed", "sample_index_rng_seed", "u64", mlperf_only=True),
    ConfRead("schedule_rng_seed", "schedule_rng_seed", "u64", mlperf_only=True),
    ConfRead("accuracy_log_probability", "accuracy_log_probability", "f64", 0.01, mlperf_only=True),
    ConfRead("test05", "test05", "bool", mlperf_only=True),
    ConfRead("test05_qsl_rng_seed", "test05_qsl_rng_seed", "u64", mlperf_only=True),
    ConfRead("test05_sample_index_rng_seed", "test05_sample_index_rng_seed", "u64", mlperf_only=True),
    ConfRead("test05_schedule_rng_seed", "test05_schedule_rng_seed", "u64", mlperf_only=True),
    ConfRead("use_token_latencies", "use_token_latencies", "bool"),
    ConfRead(
        SHORT_NAMES["server_ttft_latency"], "server_ttft_latency", "u64", 1_000_000, _SV,
        requires="use_token_latencies",
    ),
    ConfRead(
        SHORT_NAMES["server_tpot_latency"], "server_tpot_latency", "u64", 1_000_000, _SV,
        requires="use_token_latencies",
    ),
    ConfRead("infer_token_latencies", "infer_token_latencies", "bool"),
    ConfRead(
        "token_latency_scaling_factor",
        "token_latency_scaling_factor",
        "u64",
        requires="infer_token_latencies",
    ),
    ConfRead("target_latency_percentile", "single_stream_target_latency_percentile", "f64", 0.01, _SS),
    ConfRead("target_latency_percentile", "multi_stream_target_latency_percentile", "f64", 0.01, _MS),
    ConfRead("samples_per_query", "multi_stream_samples_per_query", "u64", 1, _MS),
    ConfRead("target_latency_percentile", "server_target_latency_percentile", "f64", 0.01, _SV),
    ConfRead("target_latency", "server_target_latency_ns", "u64", 1_000_000, _SV),
    ConfRead("performance_issue_unique", "performance_issue_unique", "bool"),
    ConfRead("performance_issue_same", "performance_issue_same", "bool"),
    ConfRead("performance_issue_same_index", "performance_issue_same_index", "u64"),
    ConfRead("sample_concatenate_permutation", "sample_concatenate_permutation", "bool"),
    ConfRead("coalesce_queries", "server_coalesce_queries", "bool", 1, _SV),
    ConfRead("max_async_queries", "server_max_async_queries", "u64", 1, _SV),
    ConfRead("min_duration", "min_duration_ms", "u64"),
    ConfRead("max_duration", "max_duration_ms", "u64"),
    ConfRead("min_query_count", "min_query_count", "u64"),
    ConfRead("max_query_count", "max_query_count", "u64"),
    ConfRead("performance_sample_count_override", "performance_sample_count_override", "u64"),
    ConfRead("accuracy_sample_count_override", "accuracy_sample_count_override", "u64"),
    ConfRead("target_latency", "single_stream_expected_latency_ns", "f64", 1_000_000, _SS),
    ConfRead("target_latency", "multi_stream_expected_latency_ns", "f64", 1_000_000, _MS),
    ConfRead("target_qps", "server_target_qps", "f64", 1, _SV),
    ConfRead("target_qps", "offline_expected_qps", "f64", 1, _OFF),
    ConfRead("print_timestamps", "print_timestamps", "bool"),
    ConfRead("accuracy_log_rng_seed", "accuracy_log_rng_seed", "u64"),
    ConfRead("accuracy_log_sampling_target", "accuracy_log_sampling_target", "u64"),
)

# Lines the official mlperf.conf ships that no LoadGen code reads; accepted there only.
SHIPPED_INERT: dict[tuple[str, str | None], str] = {
    ("target_duration", None): "no LoadGen code reads target_duration",
    ("target_latency_percentile", _OFF): "Offline has no latency percentile",
}
# audit.config keys read by the compliance verification scripts, not by LoadGen (TEST07, TEST09).
_COMPLIANCE_KEY = LazyPattern(r"test(0[6-9]|[1-9]\d)_\w+")

_KNOWN_KEYS: dict[str, list[ConfRead]] = {}
for _r in READS:
    _KNOWN_KEYS.setdefault(_r.key, []).append(_r)
_KIND_OF_KEY = {k: {r.kind for r in rs} for k, rs in _KNOWN_KEYS.items()}

_C_INT = re.compile(r"[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
_C_FLOAT = re.compile(r"[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?)")
_C_HEXFLOAT = LazyPattern(r"[+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)([pP][+-]?\d+)?")
_C_SPECIAL = LazyPattern(r"[+-]?(inf|infinity|nan(\([0-9A-Za-z_]*\))?)", re.IGNORECASE)
_MAX_DIGITS = 40  # longer than any 64-bit value in any base strtoul accepts: refused, never parsed
_SHOWN = 40  # a value is quoted in messages up to this many characters

Err = Callable[[str], ConfigError]


def shipped_mlperf_conf() -> Path:
    """The official mlperf.conf of LoadGen 6.0.17, as compiled into its library."""
    return Path(__file__).with_name("mlperf.conf")  # beside this module (importlib.resources loads tempfile)


@cache
def mlperf_models(path: Path | None = None) -> tuple[str, ...]:
    """The model names the (shipped) mlperf.conf names in its lines, sorted."""
    entries = parse_conf(path or shipped_mlperf_conf(), ConfType.MLPERF)
    return tuple(sorted({e.model for e in entries if e.model != "*"}))


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + f"... ({len(text)} characters)"


def find_audit_config(cwd: str | Path) -> Path | None:
    """The audit.config the official StartTest would use: the file of that name in the cwd."""
    path = Path(cwd) / AUDIT_CONFIG_NAME
    return path if path.is_file() else None


def _conf_type(conf_type: ConfType | int | str) -> ConfType:
    if isinstance(conf_type, str) and conf_type in _CONF_TYPE_NAMES:
        return _CONF_TYPE_NAMES[conf_type]
    try:
        return ConfType(int(conf_type))
    except (ValueError, TypeError):
        raise ValueError(
            f"conf_type must be one of {sorted(_CONF_TYPE_NAMES)} or 0-2, not {conf_type!r}"
        ) from None


# The shipped mlperf.conf is about 8 KB and a user.conf a few lines: a conf file past this is refused
# unread (a submission's tree is someone else's: its sizes are not proctor's limits).
MAX_CONF_BYTES = 1 << 20


def _read_source(source: str | Path, name: str | None) -> tuple[str, str]:
    """(text, name for errors); a leading byte-order mark is dropped from files and text alike."""
    if isinstance(source, Path) or ("\n" not in source and "=" not in source):
        path = Path(source)
        try:
            with open(path, "rb") as fh:
                data = read_at_most(fh, MAX_CONF_BYTES)
        except OSError as exc:
            raise ConfigError(f"cannot read conf file: {exc.strerror or exc}", file=str(path)) from None
        if len(data) > MAX_CONF_BYTES:
            raise ConfigError(
                f"larger than {MAX_CONF_BYTES} bytes: not a conf file (proctor reads no more of one)", file=str(path)
            )
        try:  # splitlines() below takes "\r\n" and "\r" as the text mode's newline translation would
            return data.decode("utf-8-sig"), name or str(path)
        except UnicodeDecodeError as exc:
            raise ConfigError(f"not UTF-8 text: {exc}", file=str(path)) from None
    return source.removeprefix("\ufeff"), name or "<text>"


def _c_integer(text: str) -> int | None:
    """strtoul(base 0) when it consumes the whole token, else None; OverflowError past 64 bits' digits."""
    if not _C_INT.fullmatch(text):
        return None
    if len(text) > _MAX_DIGITS:
        raise OverflowError(text)
    sign = -1 if text[0] == "-" else 1
    body = text.lstrip("+-")
    if body[:2] in ("0x", "0X"):
        return sign * int(body[2:], 16)
    if len(body) > 1 and body[0] == "0":
        return sign * int(body, 8)
    return sign * int(body)


def _c_double(text: str) -> float | None:
    """strtod when it consumes the whole token, else None."""
    if _C_FLOAT.fullmatch(text):
        return float(text)
    if _C_HEXFLOAT.fullmatch(text):
        sign = -1.0 if text[0] == "-" else 1.0
        return sign * float.fromhex(text.lstrip("+-"))  # OverflowError past the double range
    if _C_SPECIAL.fullmatch(text):
        return float(text.split("(")[0])
    return None


_UNIT_OF_SCALE = {1_000_000: "ms", 0.01: "percent"}  # a conf key's unit where it differs from its field's


def _convert(read: ConfRead, text: str, err: Err, ranges: bool = True) -> object:
    """The value the official lookupkv stores, or a ConfigError where it would store garbage or (with
    `ranges`) a value outside the field's legal range (settings.RANGES, in the key's own units)."""
    try:
        value = _convert_checked(read.kind, read.scale, text, err)
    except OverflowError:
        raise err(f"'{_shown(text)}' is too large for the official 64-bit field") from None
    if ranges and read.kind in ("f64", "u64"):
        problem = value_problem(
            read.field, value, scale=read.scale, shown=f"'{_shown(text)}'", unit=_UNIT_OF_SCALE.get(read.scale)
        )
        if problem:
            where = err(problem)
            raise SettingRangeError(problem, file=where.file, line=where.line, key=where.key)
    return value


def _convert_checked(read_kind: str, scale: float, text: str, err: Err) -> object:
    if read_kind == "f64":
        v = _c_double(text)
        if v is None:
            v = _c_integer(text)
            if v is None:
                raise err(f"'{_shown(text)}' is not a number")
        if v != v or v in (float("inf"), float("-inf")):
            raise err(f"'{_shown(text)}' is not a finite number")
        return float(v) * scale
    v = _c_integer(text)
    if v is None:
        if _c_double(text) is not None:
            raise err(
                f"expects a whole number, got '{_shown(text)}' (the official LoadGen would truncate it "
                f"to {_c_truncated(text)})"
            )
        raise err(f"'{_shown(text)}' is not a number")
    body = text.lstrip("+-")
    if len(body) > 1 and body[0] == "0" and body[1] not in "xX":
        raise err(
            f"'{text}' has a leading zero, which the official LoadGen reads as octal "
            f"({v}); write {v} or {int(body)}"
        )
    if v < 0:
        raise err(f"'{text}' is negative; the official LoadGen would wrap it to {v % (1 << 64)}")
    if read_kind == "bool":
        if v not in (0, 1):
            raise err(f"expects 0 or 1, got '{text}'")
        return bool(v)
    if read_kind == "mode":
        if v >= len(MODE_BY_NUMBER):
            raise err(
                f"mode must be 0 (SubmissionRun), 1 (AccuracyOnly), 2 (PerformanceOnly) or "
                f"3 (FindPeakPerformance), got '{text}'"
            )
        return MODE_BY_NUMBER[v]
    scaled = v * int(scale)
    if scaled > _U64_MAX:
        raise err(
            f"'{_shown(text)}' overflows a 64-bit unsigned value" + (f" after x{int(scale)}" if scale != 1 else "")
        )
    return scaled


def _c_truncated(text: str) -> int:
    m = re.match(r"[+-]?\d*", text)
    digits = m.group(0).lstrip("+") if m else ""
    if len(digits) > _MAX_DIGITS:
        return 0
    try:
        return int(digits)
    except ValueError:
        return 0


def parse_conf(
    path_or_text: str | Path, conf_type: ConfType | int | str, *, name: str | None = None
) -> list[ConfEntry]:
    """Every setting line of a conf file, validated for `conf_type`.

    A str holding a newline or '=' is conf text (named `name` in errors), anything else a path.
    Raises ConfigError on the first bad line, like the official parser rejects the whole file.
    """
    ctype = _conf_type(conf_type)
    text, fname = _read_source(path_or_text, name)
    entries: list[ConfEntry] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        tokens = raw.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        entries.append(_parse_line(tokens, fname, lineno, ctype, ranges=True))
    return entries


def parse_conf_as_loadgen(
    path_or_text: str | Path, conf_type: ConfType | int | str, *, name: str | None = None
) -> tuple[list[ConfEntry], list[ConfigError]]:
    """(the lines the official LoadGen applies, the lines it silently ignores, as errors naming
    each): for judging a file someone else ran with, so any value the official stores is taken (no
    settings.RANGES check). A line that makes the official reject the whole file (text after the
    value) still raises."""
    ctype = _conf_type(conf_type)
    text, fname = _read_source(path_or_text, name)
    entries, ignored = _as_loadgen(text, fname, ctype)
    return list(entries), list(ignored)


@lru_cache(maxsize=8)
def _as_loadgen(text: str, fname: str, ctype: ConfType) -> tuple[tuple[ConfEntry, ...], tuple[ConfigError, ...]]:
    """parse_conf_as_loadgen of one text: kept for the next copy (a submission's results each hold
    the same mlperf.conf; the checker names them alike, see check_conf_matches). Entries are frozen."""
    entries: list[ConfEntry] = []
    ignored: list[ConfigError] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        tokens = raw.split()
        if not tokens or tokens[0].startswith("#"):
            continue
        try:
            entries.append(_parse_line(tokens, fname, lineno, ctype, ranges=False))
        except ConfigError as exc:
            if len(tokens) > 3 and "=" not in tokens[0]:
                raise
            ignored.append(exc)
    return tuple(entries), tuple(ignored)


def _close(word: str, options: list[str], cutoff: float) -> list[str]:
    """The closest of `options` to a misspelt word, if any: one that begins with it or that it begins
    with (a suffix dropped or added, the usual slip: performance_sample_count for
    performance_sample_count_override), else difflib's closest (loaded only then: it cost a check
    more than the rest of the conf's reading)."""
    related = [o for o in options if (o.startswith(word) or word.startswith(o)) and word != o
               and min(len(o), len(word)) >= cutoff * max(len(o), len(word))]  # fmt: skip
    if related:
        return [min(related, key=lambda o: (abs(len(o) - len(word)), o))]
    import difflib

    return difflib.get_close_matches(word, options, n=1, cutoff=cutoff)


@lru_cache(maxsize=1024)
def _close_keys(key: str) -> tuple[str, ...]:
    """The known key closest to an unknown one (cached: a conf's unknown keys repeat in every copy)."""
    return tuple(_close(key, list(_KNOWN_KEYS), 0.6))


def _parse_line(tokens: list[str], fname: str, lineno: int, ctype: ConfType, *, ranges: bool) -> ConfEntry:
    full_key = tokens[0]

    def err(msg: str, key: str | None = full_key) -> ConfigError:
        return ConfigError(msg, file=fname, line=lineno, key=key)

    if "=" in full_key and full_key != "=":
        raise err(
            "write 'model.scenario.key = value' with spaces around '='; the official LoadGen "
            "silently ignores this line",
            key=full_key.split("=")[0],
        )
    if len(tokens) < 3 or tokens[1] != "=":
        raise err("expected 'model.scenario.key = value'")
    if len(tokens) > 3:
        extra = " ".join(tokens[3:])
        if tokens[3].startswith("#"):
            raise err(
                f"comment after the value ('{extra}'): the official LoadGen rejects the whole "
                "file for it; put comments on their own line"
            )
        raise err(f"unexpected text after the value: '{extra}'")
    parts = full_key.rsplit(".", 2)
    if len(parts) != 3 or not all(parts):
        raise err("key must be 'model.scenario.key' (use '*' for any model or scenario)")
    model, scenario, key = parts
    value = tokens[2]
    if scenario != "*" and scenario not in SCENARIO_NAMES:
        hint = _close(scenario, list(SCENARIO_NAMES), 0.5)
        extra = ""
        if scenario.lower() == "interactive":
            extra = f"; Interactive is scenario Server with model '{model}-interactive'"
        elif hint:
            extra = f"; did you mean '{hint[0]}'?"
        raise err(
            f"unknown scenario '{scenario}' (one of {', '.join(SCENARIO_NAMES)} or '*'){extra}", key=key
        )

    reads = _KNOWN_KEYS.get(key)
    if reads is None:
        inert = [why for (k, _s), why in SHIPPED_INERT.items() if k == key]
        if inert and ctype is ConfType.MLPERF:
            return ConfEntry(fname, lineno, model, scenario, key, value)
        if ctype is ConfType.AUDIT and _COMPLIANCE_KEY.fullmatch(key):
            return ConfEntry(fname, lineno, model, scenario, key, value)  # for the compliance scripts
        if inert:
            raise err(f"has no effect: {inert[0]} (the official LoadGen ignores it)", key=key)
        close = _close_keys(key)
        raise err(
            "unknown key"
            + (f"; did you mean '{close[0]}'?" if close else f" (known: {', '.join(sorted(_KNOWN_KEYS))})"),
            key=key,
        )
    if reads[0].mlperf_only and ctype is not ConfType.MLPERF:
        raise err(
            "can only be set in mlperf.conf; the official LoadGen ignores it in "
            f"{'user.conf' if ctype is ConfType.USER else 'audit.config'}",
            key=key,
        )
    fixed = {r.scenario for r in reads}
    if None not in fixed and scenario != "*" and scenario not in fixed:
        why = SHIPPED_INERT.get((key, scenario))
        if not (why and ctype is ConfType.MLPERF):
            raise err(
                f"has no effect under scenario {scenario}; the official LoadGen reads it only "
                f"under {', '.join(sorted(s for s in fixed if s))}",
                key=key,
            )
        return ConfEntry(fname, lineno, model, scenario, key, value)
    for r in reads:
        if scenario in ("*", r.scenario) or r.scenario is None:
            _convert(r, value, lambda m: err(m, key=key), ranges)
    return ConfEntry(fname, lineno, model, scenario, key, value)


def _resolve_scenario(scenario: Scenario | str, model: str) -> tuple[Scenario, str]:
    if isinstance(scenario, str) and scenario.lower() == "interactive":
        return Scenario.SERVER, model if model.endswith("-interactive") else f"{model}-interactive"
    try:
        return Scenario(scenario), model
    except ValueError:
        hint = _close(str(scenario), [*SCENARIO_NAMES, "Interactive"], 0.5)
        raise ValueError(
            f"unknown scenario '{scenario}'" + (f"; did you mean '{hint[0]}'?" if hint else "")
        ) from None


def applied(
    settings: TestSettings,
    entries: list[ConfEntry],
    model: str,
    scenario: Scenario | str,
    conf_type: ConfType | int | str,
    *,
    ranges: bool = True,
) -> Iterator[tuple[str, object, ConfEntry]]:
    """(field, value, the line it came from) for each field one file sets, in FromConfig's order.

    `settings` is read for the `requires` switches as they stand before each lookup; the caller
    applies each value before taking the next (apply_conf does). `ranges` False takes any value the
    official stores, for judging a file someone else ran with (not for running it).
    """
    ctype = _conf_type(conf_type)
    scen, model = _resolve_scenario(scenario, model)
    if ctype is ConfType.AUDIT:
        model = "*"
    table: dict[tuple[str, str, str], ConfEntry] = {}
    for e in entries:
        table[(e.model, e.scenario, e.key)] = e  # later lines win
    for r in READS:
        if r.mlperf_only and ctype is not ConfType.MLPERF:
            continue
        if r.requires and not getattr(settings, r.requires):
            continue
        look = r.scenario or scen.value
        entry = (
            table.get((model, look, r.key))
            or table.get(("*", look, r.key))
            or table.get((model, "*", r.key))
            or table.get(("*", "*", r.key))
        )
        if entry is None:
            continue

        def err(msg: str, entry: ConfEntry = entry) -> ConfigError:
            return ConfigError(msg, file=entry.file, line=entry.line, key=entry.key)

        yield r.field, _convert(r, entry.value, err, ranges), entry


def apply_conf(
    settings: TestSettings,
    entries: list[ConfEntry],
    model: str,
    scenario: Scenario | str,
    conf_type: ConfType | int | str,
    origin: dict[str, ConfEntry | str] | None = None,
    *,
    ranges: bool = True,
) -> TestSettings:
    """A copy of `settings` with one file's entries applied as the official FromConfig does.

    `origin`, when given, gets the line each applied field came from (for error messages); `ranges`
    as for `applied`.
    """
    out = replace(settings)
    for name, value, entry in applied(out, entries, model, scenario, conf_type, ranges=ranges):
        setattr(out, name, value)
        if origin is not None:
            origin[name] = entry
    return out


def load_conf_files(
    settings: TestSettings,
    model: str,
    scenario: Scenario | str,
    *,
    user_conf: str | Path | None = None,
    audit_conf: str | Path | None = None,
    mlperf_conf: str | Path | None = None,
) -> TestSettings:
    """New settings for `model` in `scenario`: mlperf.conf, then user.conf, then audit.config.

    `mlperf_conf` None means the shipped official file. Scenario "Interactive" means Server with
    the model's `-interactive` variant. The returned settings carry that scenario. Every file is
    validated completely before anything is applied.
    """
    scen, model = _resolve_scenario(scenario, model)
    mlperf_entries = parse_conf(
        Path(mlperf_conf) if mlperf_conf is not None else shipped_mlperf_conf(), ConfType.MLPERF
    )
    user_entries = parse_conf(Path(user_conf), ConfType.USER) if user_conf is not None else None
    audit_entries = parse_conf(Path(audit_conf), ConfType.AUDIT) if audit_conf is not None else None
    out = replace(settings, scenario=scen)
    out = apply_conf(out, mlperf_entries, model, scen, ConfType.MLPERF)
    if user_entries is not None:
        out = apply_conf(out, user_entries, model, scen, ConfType.USER)
    if audit_entries is not None:
        out = apply_conf(out, audit_entries, "*", scen, ConfType.AUDIT)
    return out
