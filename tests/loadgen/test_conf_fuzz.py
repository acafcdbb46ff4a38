"""Property tests of the conf reader on hostile input: only ConfigError or a result, never a crash."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.errors import ConfigError
from proctor.loadgen.conf import ConfType, apply_conf, parse_conf
from proctor.loadgen.resolve import Confs, resolve_settings
from proctor.loadgen.settings import TestSettings
from proctor.loadgen.types import Scenario

pytestmark = pytest.mark.fuzz

KEYS = [
    "target_qps",
    "target_latency",
    "min_duration",
    "max_duration",
    "min_query_count",
    "mode",
    "samples_per_query",
    "target_latency_percentile",
    "ttft_latency",
    "use_token_latencies",
    "performance_sample_count_override",
    "coalesce_queries",
    "qsl_rng_seed",
    "bogus",
]
MODELS = ["*", "resnet50", "resnt50", "llama2-70b", "a.b", ""]
SCENARIOS = ["*", "Offline", "Server", "SingleStream", "MultiStream", "Interactive", "offline"]
VALUES = st.one_of(
    st.sampled_from(
        [
            "0",
            "1",
            "-5",
            "nan",
            "inf",
            "-inf",
            "1e400",
            "0x1p99999",
            "0x" + "f" * 5000,
            "9" * 5000,
            "1.5",
            "007",
            "0x10",
            "",
            "# c",
            "1 # c",
            "1e-400",
            "+3",
            "NaN(1)",
        ]
    ),
    st.integers(min_value=-(10**30), max_value=10**30).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(max_size=20),
)
LINE = st.one_of(
    st.builds(
        lambda m, s, k, v, sep: f"{m}.{s}.{k}{sep}{v}",
        st.sampled_from(MODELS),
        st.sampled_from(SCENARIOS),
        st.sampled_from(KEYS),
        VALUES,
        st.sampled_from([" = ", "=", " =", " "]),
    ),
    st.text(max_size=80),
)
TEXT = st.builds(
    lambda bom, lines, eol: ("\ufeff" if bom else "") + eol.join(lines),
    st.booleans(),
    st.lists(LINE, max_size=8),
    st.sampled_from(["\n", "\r\n", "\r"]),
)


@given(TEXT)
def test_conf_text_gives_entries_or_config_error(text):
    for ctype in (ConfType.MLPERF, ConfType.USER, ConfType.AUDIT):
        try:
            entries = parse_conf(text + "\n", ctype, name="fuzz.conf")
        except ConfigError:
            continue
        for scen in Scenario:
            with contextlib.suppress(ConfigError):
                apply_conf(TestSettings(), entries, "resnet50", scen, ctype)


@given(st.binary(max_size=300), st.booleans())
def test_conf_bytes_gives_entries_or_config_error(tmp_path_factory, data, bom):
    path = tmp_path_factory.mktemp("c") / "user.conf"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    with contextlib.suppress(ConfigError):
        resolve_settings("resnet50", Scenario.SERVER, None, Confs(user_conf=path))


@given(TEXT, st.sampled_from(list(Scenario)))
def test_user_conf_through_the_pipeline_is_refused_or_runnable(text, scenario):
    try:
        s, _ = resolve_settings("resnet50", scenario, None, Confs(user_conf=text + "\n"))
    except ConfigError:
        return
    assert s.min_duration_ms >= 0 and s.server_target_qps > 0 and s.offline_expected_qps > 0


@given(
    st.sampled_from(["*.Offline.target_qps = 4321", "*.*.min_duration = 1234"]),
    st.booleans(),
    st.sampled_from(["\n", "\r\n"]),
)
def test_a_valid_line_stays_valid_with_bom_and_crlf(line, bom, eol):
    text = ("\ufeff" if bom else "") + "# comment" + eol + line + eol
    s, _ = resolve_settings("resnet50", Scenario.OFFLINE, None, Confs(user_conf=text))
    assert s.offline_expected_qps == 4321.0 or s.min_duration_ms == 1234
