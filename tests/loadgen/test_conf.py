"""conf files: lookup order, precedence, unit conversions, loud errors, and the official FromConfig."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.errors import ConfigError
from proctor.loadgen.conf import (
    ConfType,
    apply_conf,
    find_audit_config,
    load_conf_files,
    parse_conf,
    shipped_mlperf_conf,
)
from proctor.loadgen.settings import TestSettings as Settings
from proctor.loadgen.types import Scenario
from proctor.loadgen.types import TestMode as Mode


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def user(text: str, model: str = "resnet50", scenario: str = "Offline") -> Settings:
    return apply_conf(
        Settings(), parse_conf(text, ConfType.USER, name="user.conf"), model, scenario, ConfType.USER
    )


# ------------------------------------------------------------------ shipped mlperf.conf


def test_shipped_conf_values():
    s = load_conf_files(Settings(), "resnet50", Scenario.SERVER)
    assert (s.qsl_rng_seed, s.sample_index_rng_seed, s.schedule_rng_seed) == (
        2085463073848966840,
        2747215439041700203,
        16159082839903944936,
    )
    assert (s.test05_qsl_rng_seed, s.test05_schedule_rng_seed) == (7975553102935885558, 15816800565822761601)
    assert s.scenario is Scenario.SERVER
    assert (s.server_target_latency_ns, s.min_duration_ms, s.performance_sample_count_override) == (
        15_000_000,
        600000,
        1024,
    )
    assert s.server_target_latency_percentile == pytest.approx(0.99)
    o = load_conf_files(Settings(), "resnet50", "Offline")
    assert (o.min_query_count, o.offline_expected_qps) == (24576, 1.0)
    ss = load_conf_files(Settings(), "pointpainting", "SingleStream")
    assert ss.single_stream_target_latency_percentile == 99.9 * 0.01
    assert ss.single_stream_expected_latency_ns == 10 * 1e6
    llm = load_conf_files(Settings(), "llama2-70b", "Interactive")
    assert llm.use_token_latencies and llm.sample_concatenate_permutation
    assert (llm.server_ttft_latency, llm.server_tpot_latency, llm.server_target_latency_ns) == (
        450_000_000,
        40_000_000,
        0,
    )
    gptj = load_conf_files(Settings(), "gptj", "Offline")
    assert gptj.infer_token_latencies and gptj.token_latency_scaling_factor == 69
    wan = load_conf_files(Settings(), "wan-2.2-t2v-a14b", "Offline")  # a model name with a dot
    assert (wan.performance_sample_count_override, wan.min_query_count) == (248, 248)


def test_lookup_order_most_specific_first():
    lines = [
        "m.Offline.min_query_count = 1",
        "*.Offline.min_query_count = 2",
        "m.*.min_query_count = 3",
        "*.*.min_query_count = 4",
    ]
    for k, expect in enumerate([1, 2, 3, 4]):
        assert user("\n".join(lines[k:]), "m").min_query_count == expect
    assert user("\n".join(lines), "other").min_query_count == 2
    assert user("\n".join(lines), "other", "Server").min_query_count == 4
    assert user("*.*.min_query_count = 5\n*.*.min_query_count = 6\n").min_query_count == 6  # last wins


def test_precedence_code_mlperf_user_audit(tmp_path):
    u = write(
        tmp_path,
        "user.conf",
        "resnet50.Offline.min_query_count = 100\n*.*.min_duration = 5000\n*.Offline.target_qps = 250.5\n",
    )
    a = write(
        tmp_path, "audit.config", "*.*.min_duration = 7\nresnet50.*.max_query_count = 9\n*.*.mode = 2\n"
    )
    code = Settings(min_query_count=3, min_duration_ms=4, max_query_count=5, mode=Mode.ACCURACY_ONLY)
    s = load_conf_files(code, "resnet50", "Offline")
    assert (s.min_query_count, s.min_duration_ms, s.max_query_count) == (24576, 600000, 5)
    s = load_conf_files(code, "resnet50", "Offline", user_conf=u)
    assert (s.min_query_count, s.min_duration_ms, s.offline_expected_qps) == (100, 5000, 250.5)
    s = load_conf_files(code, "resnet50", "Offline", user_conf=u, audit_conf=a)
    # audit.config is read with model "*": its resnet50 line never matches
    assert (s.min_query_count, s.min_duration_ms, s.max_query_count, s.mode) == (
        100,
        7,
        5,
        Mode.PERFORMANCE_ONLY,
    )
    own = write(tmp_path, "mine.conf", "*.*.min_query_count = 11\n")
    assert load_conf_files(code, "resnet50", "Offline", mlperf_conf=own).min_query_count == 11


def test_unit_conversions_and_modes():
    s = user(
        "*.SingleStream.target_latency = 1.5\n*.MultiStream.target_latency = 0.25\n"
        "*.Server.target_latency = 130\n*.Server.target_latency_percentile = 99.9\n"
        "*.*.max_duration = 0x10\n*.Server.target_qps = 12.5\n*.*.accuracy_sample_count_override = 7\n",
        scenario="Server",
    )
    assert (s.single_stream_expected_latency_ns, s.multi_stream_expected_latency_ns) == (1.5e6, 0.25e6)
    assert s.server_target_latency_ns == 130_000_000
    assert s.server_target_latency_percentile == 99.9 * 0.01
    assert (s.max_duration_ms, s.server_target_qps, s.accuracy_sample_count_override) == (16, 12.5, 7)
    expected = [Mode.SUBMISSION_RUN, Mode.ACCURACY_ONLY, Mode.PERFORMANCE_ONLY, Mode.FIND_PEAK_PERFORMANCE]
    assert [user(f"*.*.mode = {n}").mode for n in range(4)] == expected


def test_token_latency_keys_need_their_switch():
    off = user("*.Server.ttft_latency = 3\n*.Server.tpot_latency = 4\n*.*.token_latency_scaling_factor = 9\n")
    assert (off.server_ttft_latency, off.server_tpot_latency) == (100_000_000, 100_000_000)
    assert off.token_latency_scaling_factor == 0
    on = user(
        "*.*.use_token_latencies = 1\n*.Server.ttft_latency = 3\n*.Server.tpot_latency = 4\n"
        "*.*.infer_token_latencies = 1\n*.*.token_latency_scaling_factor = 9\n",
        scenario="Offline",
    )
    # ttft/tpot are always looked up under Server, whatever the run's scenario
    assert (on.server_ttft_latency, on.server_tpot_latency, on.token_latency_scaling_factor) == (
        3_000_000,
        4_000_000,
        9,
    )


def test_interactive_is_server_with_interactive_model():
    s = load_conf_files(Settings(), "llama3_1-8b", "Interactive")
    assert s.scenario is Scenario.SERVER
    assert (s.server_ttft_latency, s.server_tpot_latency) == (500_000_000, 30_000_000)


def test_parse_conf_entries_and_comments():
    entries = parse_conf(
        "# header\n\n  wan-2.2-t2v-a14b.Offline.min_query_count   =  248  \n#x y\n*.*.mode = 2\n",
        "user.conf",
        name="u.conf",
    )
    assert [(e.file, e.line, e.model, e.scenario, e.key, e.value) for e in entries] == [
        ("u.conf", 3, "wan-2.2-t2v-a14b", "Offline", "min_query_count", "248"),
        ("u.conf", 5, "*", "*", "mode", "2"),
    ]


def test_find_audit_config(tmp_path):
    assert find_audit_config(tmp_path) is None
    p = write(tmp_path, "audit.config", "*.*.mode = 2\n")
    assert find_audit_config(tmp_path) == p


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(
    "text, key, pattern",
    [
        ("*.*.min_duraton = 5", "min_duraton", "did you mean 'min_duration'"),
        ("*.*.min_query_count = abc", "min_query_count", "not a number"),
        ("*.*.min_query_count = 1.5", "min_query_count", "whole number.*truncate it to 1"),
        ("*.*.min_query_count = 1e3", "min_query_count", "whole number"),
        ("*.*.max_query_count = 6 # six", "*.*.max_query_count", "comment after the value"),
        ("*.*.max_query_count = 6 7", "*.*.max_query_count", "unexpected text"),
        ("*.*.qsl_rng_seed = 1", "qsl_rng_seed", "only be set in mlperf.conf"),
        ("*.*.accuracy_log_probability = 10", "accuracy_log_probability", "only be set in mlperf.conf"),
        ("*.*.min_duration=5", "*.*.min_duration", "spaces around '='"),
        ("*.*.min_duration =", "*.*.min_duration", "expected 'model.scenario.key = value'"),
        ("*.server.target_qps = 5", "target_qps", "did you mean 'Server'"),
        ("m.Interactive.target_qps = 5", "target_qps", "scenario Server with model 'm-interactive'"),
        ("*.Offline.target_latency = 5", "target_latency", "no effect under scenario Offline"),
        (
            "*.Offline.target_latency_percentile = 90",
            "target_latency_percentile",
            "no effect under scenario Offline",
        ),
        ("*.Server.target_duration = 0", "target_duration", "has no effect"),
        ("min_duration = 5", "min_duration", "model.scenario.key"),
        ("*.*.min_duration = 010", "min_duration", "octal"),
        ("*.*.min_duration = -1", "min_duration", "negative"),
        ("*.*.print_timestamps = 2", "print_timestamps", "0 or 1"),
        ("*.*.mode = 4", "mode", "mode must be"),
        ("*.Server.target_qps = nan", "target_qps", "finite"),
        (
            "*.*.performance_issue_same_index = 18446744073709551616",
            "performance_issue_same_index",
            "overflows",
        ),
        ("*.Server.target_latency = 18446744073709551", "target_latency", "overflows"),
        ("*.*.test07_accuracy_threshold = 60.698", "test07_accuracy_threshold", "unknown key"),
        ("*.Offline.target_qps = 0x1p99999", "target_qps", "too large"),
        ("*.Offline.target_qps = 1e400", "target_qps", "finite"),
        ("*.*.min_duration = " + "9" * 5000, "min_duration", r"\(5000 characters\)' is too large"),
        ("*.*.min_query_count = 0x" + "f" * 5000, "min_query_count", "too large"),
    ],
)
def test_user_conf_errors_name_file_line_key(text, key, pattern):
    with pytest.raises(ConfigError, match=pattern) as exc:
        parse_conf("# first line\n" + text + "\n", ConfType.USER, name="my/user.conf")
    err = exc.value
    assert (err.file, err.line, err.key) == ("my/user.conf", 2, key)
    assert str(err).startswith(f"my/user.conf:2: key '{key}': ")


def test_audit_config_rules():
    entries = parse_conf("*.*.mode = 2\n*.*.test07_accuracy_threshold = 60.698\n", "audit.config", name="a")
    assert [e.key for e in entries] == ["mode", "test07_accuracy_threshold"]  # compliance-script key kept
    s = apply_conf(Settings(), entries, "gpt-oss-120b", "Offline", ConfType.AUDIT)
    assert s.mode is Mode.PERFORMANCE_ONLY
    with pytest.raises(ConfigError, match="only be set in mlperf.conf"):
        parse_conf("*.*.schedule_rng_seed = 413914573387865862\n", "audit.config")
    with pytest.raises(ConfigError, match="comment after the value") as exc:
        # compliance/TEST09/gpt-oss-120b/audit.config ships lines like this one
        parse_conf("*.*.mode = 2\n*.*.test09_min_output_tokens = 1150.38 # 1278.2 * 0.90\n", 2, name="t09")
    assert exc.value.line == 2


def test_missing_file_is_config_error(tmp_path):
    with pytest.raises(ConfigError, match="cannot read") as exc:
        load_conf_files(Settings(), "resnet50", "Offline", user_conf=tmp_path / "nope.conf")
    assert exc.value.file == str(tmp_path / "nope.conf")


def test_a_bad_user_conf_applies_nothing(tmp_path):
    u = write(tmp_path, "user.conf", "*.*.min_query_count = 5\n*.*.max_query_count = x\n")
    with pytest.raises(ConfigError) as exc:
        load_conf_files(Settings(), "resnet50", "Offline", user_conf=u)
    assert (exc.value.line, exc.value.key) == (2, "max_query_count")


# ------------------------------------------------------------------ differential vs official

FIELD_NAMES = {"server_ttft_latency": "ttft_latency", "server_tpot_latency": "tpot_latency"}


def official_fields(o) -> dict:
    out = {}
    for f in Settings.field_names():
        if f == "scenario":
            continue
        v = getattr(o, FIELD_NAMES.get(f, f))
        out[f] = v.name if f == "mode" else v
    if not out["infer_token_latencies"]:
        del out["token_latency_scaling_factor"]  # left uninitialised by the official TestSettings
    return out


def our_fields(s: Settings) -> dict:
    out = {f: getattr(s, f) for f in Settings.field_names() if f != "scenario"}
    out["mode"] = s.mode.value
    if not out["infer_token_latencies"]:
        del out["token_latency_scaling_factor"]
    return out


def shipped_models() -> list[str]:
    text = shipped_mlperf_conf().read_text()
    models = {ln.split()[0].rsplit(".", 2)[0] for ln in text.splitlines() if ln.strip() and ln[0] != "#"}
    return sorted(models - {"*"}) + ["unknown-model"]


@pytest.mark.official
def test_shipped_conf_is_the_official_embedded_text():
    lg = pytest.importorskip("mlperf_loadgen")
    blob = Path(lg.__file__).read_bytes()
    start = blob.index(b"# The format of this config file")
    end = blob.index(b"\x00", start)
    assert shipped_mlperf_conf().read_bytes() == blob[start:end]


@pytest.mark.official
def test_mlperf_conf_matches_official_for_every_model_and_scenario():
    lg = pytest.importorskip("mlperf_loadgen")
    entries = parse_conf(shipped_mlperf_conf(), ConfType.MLPERF)
    checked = 0
    for model in shipped_models():
        for scen in ("SingleStream", "MultiStream", "Server", "Offline"):
            o = lg.TestSettings()
            assert o.FromConfig("", model, scen, 0) == 0
            mine = apply_conf(Settings(), entries, model, scen, ConfType.MLPERF)
            assert our_fields(mine) == official_fields(o), (model, scen)
            checked += 1
    assert checked >= 100


USER_CONFS = [
    "resnet50.Offline.target_qps = 12345.5\nresnet50.Server.target_qps = 99\n*.SingleStream.target_latency = 0.7\n"
    "*.MultiStream.target_latency = 12\n*.*.min_duration = 600000\nresnet50.*.performance_sample_count_override = 0x400\n",
    "*.*.use_token_latencies = 1\n*.Server.ttft_latency = 2000\n*.Server.tpot_latency = 150\n"
    "*.*.sample_concatenate_permutation = 1\n*.Server.coalesce_queries = 1\n*.Server.max_async_queries = 3\n"
    "*.*.infer_token_latencies = 1\n*.*.token_latency_scaling_factor = 42\n",
    "*.Server.ttft_latency = 2000\n*.*.mode = 3\n*.*.print_timestamps = 1\n*.*.accuracy_log_rng_seed = 5\n"
    "*.*.accuracy_log_sampling_target = 64\n*.*.performance_issue_unique = 1\n*.*.performance_issue_same = 0\n"
    "*.*.performance_issue_same_index = 9\n*.MultiStream.samples_per_query = 4\n",
    "*.SingleStream.target_latency_percentile = 95\n*.MultiStream.target_latency_percentile = 99.5\n"
    "*.Server.target_latency_percentile = 97\n*.Server.target_latency = 25\n*.*.max_query_count = 1000\n"
    "*.*.min_query_count = 77\n*.*.max_duration = 1000\n*.*.accuracy_sample_count_override = 100\n",
    "m.Server.min_query_count = 1\n*.Server.min_query_count = 2\nm.*.min_query_count = 3\n*.*.min_query_count = 4\n"
    "m.*.mode = 1\n*.*.mode = 2\n",
]


@pytest.mark.official
@pytest.mark.parametrize("case", range(len(USER_CONFS)))
@pytest.mark.parametrize(
    "model, scen", [("resnet50", "Offline"), ("m", "Server"), ("x", "MultiStream"), ("m", "SingleStream")]
)
def test_user_conf_matches_official(tmp_path, case, model, scen):
    lg = pytest.importorskip("mlperf_loadgen")
    path = write(tmp_path, "user.conf", USER_CONFS[case])
    o = lg.TestSettings()
    # conf_type 2 parses exactly like user.conf but without first applying the embedded mlperf.conf
    assert o.FromConfig(str(path), model, scen, 2) == 0
    mine = apply_conf(Settings(), parse_conf(path, ConfType.USER), model, scen, ConfType.USER)
    assert our_fields(mine) == official_fields(o)


@pytest.mark.official
@pytest.mark.parametrize(
    "text",
    [
        "*.*.min_query_count = 5\n*.*.max_query_count = 6 # six\n",
        "*.*.min_query_count = 5\n*.*.max_query_count = abc\n",
    ],
)
def test_official_rejects_whole_file_where_we_raise(tmp_path, text):
    pytest.importorskip("mlperf_loadgen")
    path = write(tmp_path, "bad.conf", text)
    # In a process of its own: the official logger keeps the refusal (`error_invalid_config`) and
    # writes it into the next detail log this process opens, another test's official run.
    probe = (
        "import mlperf_loadgen as lg\n"
        "o = lg.TestSettings()\n"
        f"print(o.FromConfig({str(path)!r}, 'm', 'Offline', 2) != 0, o.min_query_count)\n"
    )
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert res.stdout.split()[-2:] == ["True", "100"]  # refused; nothing applied, the first good line included
    with pytest.raises(ConfigError) as exc:
        parse_conf(path, ConfType.USER)
    assert exc.value.line == 2 and re.search("max_query_count", str(exc.value))


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_a_byte_order_mark_does_not_hide_the_first_line(tmp_path, eol):
    u = tmp_path / "user.conf"
    u.write_bytes(("\ufeff*.Offline.target_qps = 4321" + eol).encode())
    (entry,) = parse_conf(u, ConfType.USER)
    assert (entry.model, entry.key, entry.line) == ("*", "target_qps", 1)
    s = load_conf_files(Settings(), "resnet50", "Offline", user_conf=u)
    assert s.offline_expected_qps == 4321.0
    assert parse_conf("\ufeff*.Offline.target_qps = 5\n", ConfType.USER)[0].model == "*"


def test_conf_as_loadgen_parses_each_text_once_and_hands_out_fresh_lists(tmp_path: Path) -> None:
    """A submission's results each hold a copy of mlperf.conf: one text is parsed once (the checker
    names the copies alike), a changed copy is parsed anew, and a caller's edits never reach the next."""
    from proctor.loadgen.conf import ConfType, parse_conf_as_loadgen

    one = "*.Offline.min_duration = 600000\n*.*.bogus_key = 1\n"
    other = "*.Offline.min_duration = 1000\n"
    a = tmp_path / "a" / "mlperf.conf"
    b = tmp_path / "b" / "mlperf.conf"
    for path, text in ((a, one), (b, one)):
        path.parent.mkdir()
        path.write_text(text)
    first_entries, first_ignored = parse_conf_as_loadgen(a, ConfType.MLPERF, name="mlperf.conf")
    assert [(e.key, e.value, e.line) for e in first_entries] == [("min_duration", "600000", 1)]
    assert [exc.line for exc in first_ignored] == [2]  # the official skips an unknown key
    first_entries.clear()
    again, _ = parse_conf_as_loadgen(b, ConfType.MLPERF, name="mlperf.conf")
    assert [(e.key, e.value) for e in again] == [("min_duration", "600000")]
    b.write_text(other)
    changed, ignored = parse_conf_as_loadgen(b, ConfType.MLPERF, name="mlperf.conf")
    assert [(e.key, e.value) for e in changed] == [("min_duration", "1000")] and ignored == []


def test_a_conf_file_past_the_bound_is_refused_naming_it(tmp_path: Path) -> None:
    from proctor.loadgen.conf import MAX_CONF_BYTES, ConfType, parse_conf_as_loadgen

    path = tmp_path / "user.conf"
    path.write_bytes(b"# a comment line, repeated\n" * (MAX_CONF_BYTES // 27 + 1))
    with pytest.raises(ConfigError, match=f"larger than {MAX_CONF_BYTES} bytes") as err:
        parse_conf_as_loadgen(path, ConfType.USER)
    assert err.value.file == str(path)
    path.write_bytes(b"# a comment line, repeated\n" * (MAX_CONF_BYTES // 27))  # at the bound: read
    assert parse_conf_as_loadgen(path, ConfType.USER) == ([], [])
