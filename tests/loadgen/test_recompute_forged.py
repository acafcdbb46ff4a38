"""recompute() re-derives every claim of a detail log from the raw values it holds, and
compare_summary() every line of its summary (issue 30 §2): real logs of every scenario (the corpus,
the official LoadGen and proctor's engine, run here) agree with themselves; a forged claim is a
mismatch naming the key, the claimed value and what the numbers give.

Forged logs are the real ones with values replaced, in memory (the reader's output) or in files
written under tmp_path.
"""

from __future__ import annotations

import math
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from proctor.errors import LogFormatError
from proctor.loadgen.logs import read_detail, read_summary
from proctor.loadgen.logs.numbers import percentile_label, printed, printed_fixed
from proctor.loadgen.logs.reader import DetailLogData
from proctor.loadgen.logs.recompute import PERCENTILES, RECOMPUTED, Recomputed, recompute
from proctor.loadgen.logs.summary_claims import compare_summary
from tests.support.run_logs import official_runs, proctor_runs

_IN = Path("shared") / "corpus" / "inference" / "v4.1"
CORPUS = next((p / _IN for p in Path(__file__).resolve().parents if (p / _IN).is_dir()), Path(_IN))

RATES = (
    "result_samples_per_second",
    "result_scheduled_samples_per_sec",
    "result_completed_samples_per_sec",
    "result_qps_with_loadgen_overhead",
    "result_qps_without_loadgen_overhead",
    "result_completed_tokens_per_second",
    "result_token_throughput_with_loadgen_overhead",
)
PARTS = {
    "result_min_duration_met": "min_duration",
    "result_min_queries_met": "min_queries",
    "early_stopping_met": "early_stopping",
    "result_perf_constraints_met": "perf_constraints",
}


class Base:
    """One real run's parsed logs and what recompute made of them (a plain class: hypothesis prints
    its name, not its megabytes)."""

    __slots__ = ("log", "name", "rc", "summary")

    def __init__(self, name: str, log: DetailLogData, summary: dict[str, Any], rc: Recomputed) -> None:
        self.name, self.log, self.summary, self.rc = name, log, summary, rc

    def __repr__(self) -> str:
        return f"Base({self.name})"


def _base(name: str, folder: Path) -> Base:
    log = read_detail(folder / "mlperf_log_detail.txt", keep_entries=False)
    summary = read_summary(folder / "mlperf_log_summary.txt")
    return Base(name, log, summary, recompute(log))


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Base]:
    """Every real log at hand: the v4.1 corpus (copied), proctor's engine and the official LoadGen."""
    root = tmp_path_factory.mktemp("bases")
    folders: dict[str, Path] = {}
    if CORPUS.is_dir():
        for detail in sorted(CORPUS.glob("**/mlperf_log_detail.txt")):
            name = "corpus_" + "_".join(detail.parts[-3:-1]).lower()
            shutil.copytree(detail.parent, root / name)
            folders[name] = root / name
    folders.update(proctor_runs(root / "proctor"))
    try:
        import mlperf_loadgen as lg
    except ImportError:  # the official LoadGen is optional: the corpus and proctor's runs stand
        lg = None
    if lg is not None:
        folders.update(official_runs(lg, root / "official"))
    return {name: _base(name, path) for name, path in folders.items()}


def forged(log: DetailLogData, **values: Any) -> DetailLogData:
    """The log with `values` replaced (a key it lacks is added after its last line)."""
    out = DetailLogData(path=log.path, values=dict(log.values), lines=dict(log.lines))
    for key, value in values.items():
        out.values[key] = value
        out.lines.setdefault(key, max(out.lines.values(), default=0) + 1)
    out.n_errors, out.n_warnings = log.n_errors, log.n_warnings
    return out


def _g(value: float) -> float | int:
    """A double as the official prints it (%g), read back as the reader reads it."""
    text = f"{value:g}"
    return int(text) if re.fullmatch(r"-?\d+", text) else float(text)


def _with_official(bases: dict[str, Base]) -> bool:
    """Whether the official LoadGen's runs are among the bases (it is optional: Python 3.14 has no wheel)."""
    return any(name.startswith("official_") for name in bases)


def _named(rc: Recomputed, key: str) -> list[str]:
    return [str(m) for m in rc.mismatches if m.key == key]


# ---- real logs agree with themselves -------------------------------------------------------------


def test_every_real_log_agrees_with_itself(bases: dict[str, Base]) -> None:
    """Not one mismatch on the corpus, on the official LoadGen's logs nor on proctor's, whether the
    run was VALID or not; each derivation that had what it needs was made."""
    assert len(bases) >= 11
    for b in bases.values():
        assert [str(m) for m in b.rc.mismatches] == [], b.name
        assert compare_summary(b.summary, b.log, b.rc, "summary") == [], b.name
        assert b.rc.valid == (b.log.get("result_validity") == "VALID"), b.name
    # every scenario's rate claims were derived somewhere
    derived = {k for b in bases.values() for k in b.rc.implied}
    assert derived >= set(RATES) - {"result_token_throughput_with_loadgen_overhead"}


# ---- the cases -----------------------------------------------------------------------------


def test_a_short_offline_run_claiming_min_duration_met_is_caught(bases: dict[str, Base]) -> None:
    b = bases["proctor_offline_short"]
    # far short of its 600 s min_duration however loaded the host (an instant SUT: 0.6 s was seen beside two hogs)
    assert b.log.get("result_validity") == "INVALID" and b.log.get("result_max_latency_ns") < 60 * 10**9
    rc = recompute(forged(b.log, result_min_duration_met=True, result_validity="VALID"))
    assert not rc.min_duration_met and rc.source["min_duration"] == RECOMPUTED and not rc.valid
    (duration,) = [m for m in rc.mismatches if m.key == "result_min_duration_met"]
    assert (duration.claimed, duration.derived, duration.line) == ("true", "false", b.log.line_of("result_min_duration_met"))
    (validity,) = [m for m in rc.mismatches if m.key == "result_validity"]
    assert (validity.claimed, validity.derived) == ("VALID", "INVALID") and "min duration" in validity.basis


def test_samples_per_second_raised_100x_is_caught_and_corrected(bases: dict[str, Base]) -> None:
    for name in ("corpus_resnet50_offline", "proctor_offline"):
        if name not in bases:
            continue
        b = bases[name]
        honest = b.log.get("result_samples_per_second")
        rc = recompute(forged(b.log, result_samples_per_second=_g(honest * 100)))
        (m,) = _named(rc, "result_samples_per_second")
        assert f"{honest * 100:.6g}" in m and f"{b.rc.implied['result_samples_per_second'].text()}" in m
        assert rc.corrected["result_samples_per_second"] in printed(honest)  # the value its numbers give


def test_a_valid_summary_with_a_huge_metric_beside_an_honest_detail_log(bases: dict[str, Base]) -> None:
    b = bases["proctor_offline_short"]  # INVALID, honestly logged
    summary = {**b.summary, "Result is": "VALID", "Min duration satisfied": "Yes", "Samples per second": 99999999}
    found = {m.key: m for m in compare_summary(summary, b.log, b.rc, "mlperf_log_summary.txt")}
    assert set(found) == {"Result is", "Min duration satisfied", "Samples per second"}
    assert found["Samples per second"].claimed == "99999999"
    assert found["Result is"].line == b.summary["lines"]["head/Result is"]


# ---- table-driven forgeries, every real log they apply to -----------------------------------------


@pytest.mark.parametrize("factor", [100.0, 0.01])
def test_every_rate_moved_off_its_numbers_is_a_mismatch(bases: dict[str, Base], factor: float) -> None:
    tried = 0
    for b in bases.values():
        failed = "proctor_issue_lateness_p50_ns" in b.log.values and b.log.n_errors > 0
        for key in RATES:
            if key not in b.rc.implied or not b.log.get(key) or (failed and factor < 1):
                continue  # with failed samples a rate is only bounded above (fewer results than samples)
            value = _g(b.log.get(key) * factor)
            rc = recompute(forged(b.log, **{key: value}))
            found = _named(rc, key)
            assert len(found) == 1, (b.name, key, value)
            assert f"{float(value):.6g}" in found[0] and rc.implied[key].text() in found[0]
            assert key in rc.corrected
            tried += 1
    assert tried >= 15


def test_rates_within_their_print_precision_agree(bases: dict[str, Base]) -> None:
    """A rate changed in its last printed digit (or less) is what the log can hold: no mismatch."""
    for b in bases.values():
        for key in RATES:
            v = b.log.get(key)
            if key not in b.rc.implied or not v:
                continue
            rc = recompute(forged(b.log, **{key: _g(float(v) * (1 + 4e-7))}))
            assert _named(rc, key) == [], (b.name, key)


def test_verdicts_claimed_without_their_numbers_are_mismatches(bases: dict[str, Base]) -> None:
    """Every INVALID run, each part it failed claimed met and the result VALID: each recomputed part
    and the validity are mismatches naming the key (a part the log cannot decide is not claimed)."""
    tried = 0
    for b in bases.values():
        if b.rc.valid:
            continue
        claims = {key: True for key, part in PARTS.items() if b.log.get(key) is False}
        rc = recompute(forged(b.log, result_validity="VALID", **claims))
        for key in claims:
            decided = rc.source.get(PARTS[key]) == RECOMPUTED
            assert bool(_named(rc, key)) == decided, (b.name, key)
            tried += decided
        assert bool(_named(rc, "result_validity")) == (not rc.valid), b.name  # not: every failed part undecidable
        tried += not rc.valid
    assert tried >= (8 if _with_official(bases) else 4)


def test_early_stopping_estimates_outside_their_ranks_are_mismatches(bases: dict[str, Base]) -> None:
    """The estimate set below the array's minimum (its text edited to match): outside the logged order
    statistics around its rank. Left as is but its text changed: the text contradicts it."""
    tried = 0
    for b in bases.values():
        for key in ("early_stopping_latency_ss", "early_stopping_latency_ms"):
            value, lowest = b.log.get(key), b.log.get("result_min_latency_ns")
            if not value or b.log.get("effective_scenario") not in ("SingleStream", "MultiStream"):
                continue
            if b.log.get("effective_scenario") == "MultiStream":
                lowest = b.log.get("result_min_query_latency_ns")
            if b.log.get("requested_use_token_latencies") is True:
                lowest = b.log.get("result_first_token_min_latency_ns")
            text_key = "early_stopping_ttft_result" if b.log.get("requested_use_token_latencies") else "early_stopping_result"
            text = str(b.log.get(text_key)).replace(f"estimate: {value}", f"estimate: {lowest - 1}")
            rc = recompute(forged(b.log, **{key: lowest - 1, text_key: text}))
            assert any("rank" in m for m in _named(rc, key)), (b.name, key)
            rc = recompute(forged(b.log, **{text_key: str(b.log.get(text_key)).replace(f"estimate: {value}", "estimate: 1")}))
            assert any("text" in m for m in _named(rc, key)), (b.name, key)
            tried += 2
    assert tried >= 8


def test_order_statistics_out_of_order_are_mismatches(bases: dict[str, Base]) -> None:
    for b in bases.values():
        top = b.log.get("result_max_latency_ns")
        rc = recompute(forged(b.log, **{"result_99.90_percentile_latency_ns": top + 1}))
        assert _named(rc, "result_max_latency_ns"), b.name
        mean = b.log.get("result_mean_latency_ns")
        samples = b.log.get("result_query_count") * b.log.get("generated_samples_per_query", 1)
        if samples * top < 2**63 and mean:  # else the int64 sum may have wrapped: no bound
            rc = recompute(forged(b.log, result_mean_latency_ns=top + 1))
            assert _named(rc, "result_mean_latency_ns"), b.name


def test_offline_consistently_shortened_contradicts_its_power_window(bases: dict[str, Base]) -> None:
    """Max latency and samples/s edited together (100x faster): the power window still spans the run."""
    tried = 0
    for b in bases.values():
        if b.log.get("effective_scenario") != "Offline" or "power" not in b.rc.durations:
            continue
        if b.log.get("result_max_latency_ns") < 20_000_000:
            continue  # a run of a few ms: the window's millisecond print cannot tell 1/100 of it
        top = b.log.get("result_max_latency_ns") // 100
        rate = b.log.get("result_query_count") * b.log.get("generated_samples_per_query") * 1e9 / top
        stats = {f"result_{percentile_label(p)}_percentile_latency_ns": min(b.log.get(
            f"result_{percentile_label(p)}_percentile_latency_ns"), top) for p in PERCENTILES}
        rc = recompute(forged(b.log, result_max_latency_ns=top, result_samples_per_second=_g(rate),
                              result_min_latency_ns=min(b.log.get("result_min_latency_ns"), top),
                              result_mean_latency_ns=min(b.log.get("result_mean_latency_ns"), top), **stats))
        power = [m for m in rc.mismatches if m.key == "result_max_latency_ns"]
        assert len(power) == 1 and "power" in power[0].basis, b.name
        assert {m.key for m in rc.mismatches} <= {"result_max_latency_ns", "result_min_duration_met", "result_validity"}
        tried += 1
    assert tried >= (2 if CORPUS.is_dir() else 1)  # the corpus's runs with a power window, and proctor's


def test_server_rates_raised_together_contradict_the_schedule(bases: dict[str, Base]) -> None:
    tried = 0
    for b in bases.values():
        if b.log.get("effective_scenario") != "Server":
            continue
        rc = recompute(forged(
            b.log,
            result_scheduled_samples_per_sec=_g(b.log.get("result_scheduled_samples_per_sec") * 100),
            result_completed_samples_per_sec=_g(b.log.get("result_completed_samples_per_sec") * 100),
        ))
        assert _named(rc, "result_scheduled_samples_per_sec"), b.name
        assert not rc.min_duration_met or rc.source["min_duration"] == RECOMPUTED
        tried += 1
    assert tried >= 3


SUMMARY_FORGERIES = (
    ("metric x100", lambda s: _scale_first(s, ("Samples per second", "Completed samples per second",
                                               "Tokens per second", "Completed tokens per second"), 100)),
    ("latency changed", lambda s: _replace_stat(s, "Max latency (ns)", lambda v: v * 2 + 1)),
    ("setting changed", lambda s: _set(s, "test_parameters", "min_duration (ms)", 600000 + 1)),
    ("scenario changed", lambda s: _set(s, "head", "Scenario", "Offline" if s.get("Scenario") != "Offline" else "Server")),
    ("early stopping text changed", lambda s: _es_text(s)),
)


def _set(s: dict[str, Any], section: str, label: str, value: Any) -> tuple[dict[str, Any], str] | None:
    out = {**s, **{k: dict(v) for k, v in s.items() if isinstance(v, dict)}}
    part = out if section == "head" else out.get(section, {})
    if label not in part:
        return None
    part[label] = value
    return out, label


def _scale_first(s: dict[str, Any], labels: tuple[str, ...], factor: float) -> tuple[dict[str, Any], str] | None:
    label = next((k for k in labels if isinstance(s.get(k), int | float)), None)
    return None if label is None else _set(s, "head", label, _g(s[label] * factor))


def _replace_stat(s: dict[str, Any], label: str, f: Any) -> tuple[dict[str, Any], str] | None:
    section = "per_query" if label in s.get("per_query", {}) else "additional_stats"
    value = s.get(section, {}).get(label)
    return None if value is None else _set(s, section, label, f(value))


def _es_text(s: dict[str, Any]) -> tuple[dict[str, Any], str] | None:
    blocks = s.get("early_stopping", {})
    block = next((k for k, v in blocks.items() if v), None)
    if block is None:
        return None
    out = {**s, "early_stopping": {**blocks, block: blocks[block] + " * Run successful."}}
    return out, block


@pytest.mark.parametrize(("what", "forge"), SUMMARY_FORGERIES, ids=[f[0] for f in SUMMARY_FORGERIES])
def test_summary_claims_the_detail_log_does_not_hold_are_mismatches(bases: dict[str, Base], what: str, forge: Any) -> None:
    tried = 0
    for b in bases.values():
        made = forge(b.summary)
        if made is None:
            continue
        summary, label = made
        found = [m for m in compare_summary(summary, b.log, b.rc, "s") if m.key == label]
        assert len(found) == 1, (b.name, what, found)
        tried += 1
    assert tried >= 5, what


def test_summary_verdicts_better_than_the_numbers_are_mismatches(bases: dict[str, Base]) -> None:
    tried = 0
    for b in bases.values():
        if b.rc.valid:
            continue
        labels = ["Result is"] + [k for k in ("Min duration satisfied", "Min queries satisfied",
                                              "Early stopping satisfied", "Performance constraints satisfied")
                                  if b.summary.get(k) == "NO"]
        summary = {**b.summary, **{k: "VALID" if k == "Result is" else "Yes" for k in labels}}
        found = {m.key for m in compare_summary(summary, b.log, b.rc, "s")}
        assert found == set(labels), b.name
        tried += len(labels)
    assert tried >= (8 if _with_official(bases) else 4)


# ---- properties ----------------------------------------------------------------------------------

_NAMES = st.shared(st.integers(0, 10**6), key="base")


@pytest.mark.fuzz
@given(pick=st.integers(0, 10**6), key=st.sampled_from(RATES), exponent=st.floats(-3, 3))
def test_a_perturbed_rate_is_a_mismatch_or_within_what_its_numbers_allow(
    bases: dict[str, Base], pick: int, key: str, exponent: float
) -> None:
    usable = [b for b in bases.values() if key in b.rc.implied and b.log.get(key)]
    assume(usable)
    b = usable[pick % len(usable)]
    value = _g(float(b.log.get(key)) * 10**exponent)
    assume(value > 0)
    rc = recompute(forged(b.log, **{key: value}))
    flagged = bool(_named(rc, key))
    assert flagged == (not printed(value).overlaps(rc.implied[key]))
    assert rc.implied[key] == b.rc.implied[key]  # what the numbers allow does not follow the claim
    # 10x off: every derivation here is tighter than that (with failed samples, bounded above only)
    if exponent >= 1 or (exponent <= -1 and rc.implied[key].lo > 0):
        assert flagged


SUMMARY_RATES = {
    "Samples per second": ("result_samples_per_second", printed),
    "Tokens per second": ("result_tokens_per_second", printed),
    "Completed samples per second": ("result_completed_samples_per_sec", printed_fixed),
    "Completed tokens per second": ("result_completed_tokens_per_second", printed_fixed),
    "QPS w/ loadgen overhead": ("result_qps_with_loadgen_overhead", printed_fixed),
}


@pytest.mark.fuzz
@given(pick=st.integers(0, 10**6), label=st.sampled_from(sorted(SUMMARY_RATES)), exponent=st.floats(-3, 3))
def test_a_perturbed_summary_rate_is_a_mismatch_or_within_what_the_detail_log_allows(
    bases: dict[str, Base], pick: int, label: str, exponent: float
) -> None:
    key, shown_as = SUMMARY_RATES[label]
    usable = [b for b in bases.values() if key in b.log.values and any(
        isinstance(part.get(label), int | float) for part in (b.summary, b.summary["additional_stats"]))]
    assume(usable)
    b = usable[pick % len(usable)]
    section = "head" if isinstance(b.summary.get(label), int | float) else "additional_stats"
    said = b.summary[label] if section == "head" else b.summary["additional_stats"][label]
    value = round(float(said) * 10**exponent, 2) if shown_as is printed_fixed else _g(float(said) * 10**exponent)
    made = _set(b.summary, section, label, value)
    assert made is not None
    found = [m for m in compare_summary(made[0], b.log, b.rc, "s") if m.key == label]
    # the line must print the detail log's value, itself within what the detail log's numbers allow
    allowed = [printed(b.log.get(key))] + ([b.rc.implied[key]] if key in b.rc.implied else [])
    assert bool(found) == (not all(shown_as(value).overlaps(a) for a in allowed)), (b.name, label, value)
    if abs(exponent) >= 1:
        assert found


_ANY_VALUE = (
    st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.booleans()
    | st.text(max_size=30)
    | st.none()
    | st.lists(st.integers(), max_size=3)
)


@pytest.mark.fuzz
@given(pick=st.integers(0, 10**6), changes=st.lists(st.tuples(st.integers(0, 10**6), _ANY_VALUE), min_size=1, max_size=4))
def test_any_values_give_mismatches_or_a_format_error_never_a_crash(
    bases: dict[str, Base], pick: int, changes: list[tuple[int, Any]]
) -> None:
    b = list(bases.values())[pick % len(bases)]
    keys = sorted(b.log.values)
    log = forged(b.log, **{keys[i % len(keys)]: v for i, v in changes})
    try:
        rc = recompute(log)
    except LogFormatError as exc:
        assert str(exc)
        return
    assert all(m.key and m.derived for m in rc.mismatches)
    compare_summary(b.summary, log, rc, "s")


@pytest.mark.fuzz
@given(pick=st.integers(0, 10**6), label=st.text(max_size=40), value=_ANY_VALUE)
def test_any_summary_line_is_compared_without_a_crash(bases: dict[str, Base], pick: int, label: str, value: Any) -> None:
    b = list(bases.values())[pick % len(bases)]
    for section in ("head", "additional_stats", "test_parameters", "per_query"):
        summary = {**b.summary, **{k: dict(v) for k, v in b.summary.items() if isinstance(v, dict)}}
        summary.setdefault(section, {}) if section != "head" else None
        (summary if section == "head" else summary[section])[label] = value
        for m in compare_summary(summary, b.log, b.rc, "s"):
            assert m.key and isinstance(m.claimed, str)


def test_span_arithmetic_keeps_the_exact_value() -> None:
    for v in (1.0, 39.5667, 140310.0, 7.61642e-09, 9.99999e5):
        assert v in printed(v) and math.nextafter(v, 0) in printed(v)
    assert printed(140625).lo == pytest.approx(140624.5) and printed_fixed(1.25).hi == pytest.approx(1.255)
