"""A result must come from an official LoadGen release of its round, unaltered (Inference rules
§LoadGen Operation); proctor's own engine is for development (--allow-unofficial-loadgen)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from checks_corpus import CORPUS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.checks.detail_log import load_detail_log
from proctor.checks.loadgen_origin import (
    ALTERED,
    RELEASE,
    UNOFFICIAL,
    check_loadgen_origin,
    unofficial_verdict,
)
from proctor.findings import Severity
from proctor.rules.loadgen_releases import RELEASES, ROUND_SERIES, VERSIONS, parse_version_line, series
from proctor.rules.rounds import SEEDS

OFFICIAL_6017 = {
    "loadgen_version": "6.0.17 @ d6147c7eb7",
    "loadgen_git_commit_date": "2026-07-24T17:36:50Z",
    "loadgen_git_log_message": "d6147c7eb760c75ac2f7f2dd379719afb090d87c Increment version to 6.0.17\n"
    "da26cb17af33bc90328b17b18b3d9ab9617e3017 Add pre-commit setup documentation (#2597)",
    "loadgen_git_status_message": "",
}
PROCTOR = {"loadgen_version": "proctor 0.1.0 (official LoadGen 6.0.17 compatible)", "loadgen_git_status_message": ""}


def _log(tmp: Path, values: dict[str, Any], name: str = "mlperf_log_detail.txt") -> Path:
    lines = [
        ":::MLLOG "
        + json.dumps(
            {
                "key": k,
                "value": v,
                "time_ms": 0.01,
                "namespace": "mlperf::logging",
                "event_type": "POINT_IN_TIME",
                "metadata": {"is_error": False, "is_warning": False, "file": "version.cc", "line_no": 53},
            }
        )
        for k, v in {**values, "effective_scenario": "Offline"}.items()
    ]
    path = tmp / name
    path.write_text("\n".join(lines) + "\n")
    return path


def _check(tmp: Path, values: dict[str, Any], round_: str = "v6.1", allow: bool = False) -> list[Any]:
    log, problems = load_detail_log(_log(tmp, values))
    assert problems == []
    return check_loadgen_origin(log, round_, allow_unofficial=allow)


def test_proctor_engine_log_is_an_error_naming_the_rule_and_the_way_out(tmp_path: Path) -> None:
    [f] = _check(tmp_path, PROCTOR)
    assert (f.rule, f.severity, f.key, f.line) == (UNOFFICIAL, Severity.ERROR, "loadgen_version", 1)
    assert "proctor's own engine" in f.message and "run it again with `--engine official`" in f.message
    # how is said once, under the verdict, however many logs there are: the official extra, both commands
    said = unofficial_verdict(4, False)
    assert "pip install 'proctor[official]'" in said and 'pip install -e ".[official]"' in said
    assert "`proctor run ... --engine official`" in said and "`proctor audit all ... --engine official`" in said
    assert "same SUT, same options" in said and "pip install" not in f.message
    assert f.source is not None and "§LoadGen Operation" in f.source and "tagged approved revision" in f.source


def test_development_switch_makes_it_a_warning_that_says_not_submittable(tmp_path: Path) -> None:
    [f] = _check(tmp_path, PROCTOR, allow=True)
    assert (f.rule, f.severity) == (UNOFFICIAL, Severity.WARNING)
    assert "not submittable" in f.message and "--engine official" in f.message
    assert unofficial_verdict(3, True).startswith("NOT SUBMITTABLE: 3 log(s)")
    assert "--allow-unofficial-loadgen" in unofficial_verdict(3, False) and "--engine official" in unofficial_verdict(3, False)


@pytest.mark.parametrize("round_", ["v4.1", "v6.0", "v6.1"])
@pytest.mark.parametrize(
    "values",
    [
        {},  # no loadgen_version at all
        {"loadgen_version": ""},
        {"loadgen_version": 6017},
        {"loadgen_version": "7.3.1 @ 0123456789"},  # no such series
        {"loadgen_version": "6.0.17"},  # not the "<version> @ <revision>" LoadGen writes
        {"loadgen_version": "MLPerf LoadGen++ 6.0.17 @ d6147c7eb7"},
    ],
)
def test_any_log_not_from_an_official_release_is_rejected_in_every_round(
    tmp_path: Path, values: dict[str, Any], round_: str
) -> None:
    assert [(f.rule, f.severity) for f in _check(tmp_path, values, round_)] == [(UNOFFICIAL, Severity.ERROR)]


def test_official_6017_log_passes_in_the_rounds_of_its_series(tmp_path: Path) -> None:
    assert _check(tmp_path, OFFICIAL_6017, "v6.1") == []
    assert _check(tmp_path, OFFICIAL_6017, "v6.0") == []


def test_a_release_of_another_rounds_series_is_named_as_a_warning(tmp_path: Path) -> None:
    """Still "a tagged approved revision" (the rules name no round); a published v5.1 result used 4.1."""
    for allow in (False, True):
        [f] = _check(tmp_path, OFFICIAL_6017, "v4.1", allow=allow)
        assert (f.rule, f.severity, f.expected) == (RELEASE, Severity.WARNING, "4.0.x, 4.1.x")
        assert "LoadGen 6.0.17 is not of round v4.1's series" in f.message


def test_a_patch_not_in_the_table_is_a_warning(tmp_path: Path) -> None:
    [f] = _check(tmp_path, {"loadgen_version": "6.0.99 @ NA", "loadgen_git_status_message": "NA"})
    assert (f.rule, f.severity) == (RELEASE, Severity.WARNING) and "newest known of the 6.0 series: 6.0.17" in f.message


@pytest.mark.parametrize(
    ("values", "key"),
    [
        ({**OFFICIAL_6017, "loadgen_version": "6.0.16 @ d6147c7eb7"}, "loadgen_version"),  # 6.0.17's commit
        ({**OFFICIAL_6017, "loadgen_git_status_message": " M loadgen.cc"}, "loadgen_git_status_message"),
        ({**OFFICIAL_6017, "loadgen_version": "6.0.17 @ 0123456789"}, "loadgen_git_log_message"),
    ],
)
def test_an_altered_or_mislabelled_build_is_an_error(tmp_path: Path, values: dict[str, Any], key: str) -> None:
    found = _check(tmp_path, values)
    assert [(f.rule, f.key, f.severity) for f in found] == [(ALTERED, key, Severity.ERROR)]
    assert "without changes" in found[0].message


def test_endpoints_logs_are_read_as_the_official_checker_reads_them(tmp_path: Path) -> None:
    assert _check(tmp_path, {"endpoints_version": "0.3.1"}) == []


def test_the_table_covers_every_round_and_each_entry_is_well_formed() -> None:
    assert set(SEEDS) <= set(ROUND_SERIES)
    for r in RELEASES:
        assert re.fullmatch(r"[0-9a-f]{10}", r.commit) and re.fullmatch(r"\d{4}-\d\d-\d\d", r.date), r
        assert parse_version_line(f"{r.version} @ {r.commit}") == (r.version, r.commit)
    assert [r.date for r in RELEASES] == sorted(r.date for r in RELEASES)
    assert VERSIONS["6.0.17"].commit == "d6147c7eb7" and series("6.0.17") == "6.0" and series(".5a1") == ".5a1"


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared/corpus/inference is not available")
def test_real_official_logs_pass() -> None:
    """Published v4.1 logs (LoadGen 4.0 and 4.1 builds) and a local mlcommons-loadgen 6.0.17 run."""
    v41 = sorted(CORPUS.rglob("mlperf_log_detail.txt"))
    assert len(v41) >= 5
    for path in v41:
        log, _ = load_detail_log(path)
        assert check_loadgen_origin(log, "v4.1") == [], path
    for path in sorted((CORPUS.parent / "loadgen-6.0.17-local").rglob("mlperf_log_detail.head80.txt")):
        log, _ = load_detail_log(path)
        assert check_loadgen_origin(log, "v6.1") == [], path


VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=80),
    st.sampled_from(["6.0.17 @ d6147c7eb7", "4.1 @ NA", ".5a1 @ f854fd9646", "6.0.17 @ ", " @ ", "proctor"]),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    version=VALUE,
    status=VALUE,
    history=VALUE,
    round_=st.sampled_from([*ROUND_SERIES, "v9.9"]),
    allow=st.booleans(),
)
def test_any_logged_values_give_findings_never_a_crash(
    tmp_path: Path, version: Any, status: Any, history: Any, round_: str, allow: bool
) -> None:
    values = {"loadgen_version": version, "loadgen_git_status_message": status, "loadgen_git_log_message": history}
    for f in _check(tmp_path, values, round_, allow):
        assert f.rule in (UNOFFICIAL, RELEASE, ALTERED) and f.path and f.message
        if f.rule == UNOFFICIAL:
            assert f.severity is (Severity.WARNING if allow else Severity.ERROR)


@given(text=st.text(max_size=300))
def test_version_line_reader_takes_any_text(text: str) -> None:
    parsed = parse_version_line(text)
    assert parsed is None or (parsed[0] and parsed[1])
