"""Speculative decoding ([[appendix-speculative-decoding]]): where a result may use it, what it must
report. Each failing declaration is paired with the passing one it differs from."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from checks_corpus import UT_EDGE, build_valid_tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.checks.compliance import ResultContext
from proctor.checks.speculative import check_speculative, token_count_mismatches
from proctor.checks.submission import check_submission
from proctor.findings import Severity
from proctor.rules.inference import SPEC_DECODING, Category, resolve
from proctor.rules.speculative import SPECULATIVE_RULES, TPOT_DEFINITION, speculative_rule

GPT_HEAD = "https://huggingface.co/nvidia/gpt-oss-120b-Eagle3-long-context"
GOOD = {
    "algorithm": "EAGLE3-style decoding with nvidia/gpt-oss-120b-Eagle3-long-context MTP head",
    "mtp_head": GPT_HEAD,
    "configuration": {"speculative-num-steps": 3, "speculative-eagle-topk": 1.0},
}


def _ctx(
    tmp_path: Path, bench: str, scenario: str, declared: object, readme: str = "how it ran\n"
) -> ResultContext:
    scendir = tmp_path / "closed" / "Sub" / "results" / "sys" / bench / scenario
    scendir.mkdir(parents=True)
    meas: dict[str, object] = {"weight_data_types": "fp8"}
    if declared is not None:
        meas["speculative_decoding"] = declared
    (scendir / "measurements.json").write_bytes(orjson.dumps(meas))
    (scendir / "README.md").write_text(readme)
    variant = resolve(bench)
    cat = Category.INTERACTIVE if "interactive" in bench else Category(scenario)
    return ResultContext(
        scendir.parents[3], "sys", bench, scenario, cat.value, scendir, "v6.1", variant, None
    )


def _errors(findings: list) -> list:
    return [f for f in findings if f.failed]


def test_table_rows_match_the_rules_table() -> None:
    """Every row of the benchmark table's `speculative=` has its checker rule, and no other row does."""
    assert {r.benchmark for r in SPECULATIVE_RULES} == {"deepseek-r1", "gpt-oss-120b", "qwen3.6-27b"}
    assert speculative_rule("gpt-oss-120b", Category.INTERACTIVE) is not None
    assert speculative_rule("gpt-oss-120b", Category.SERVER) is None
    assert speculative_rule("deepseek-r1", Category.OFFLINE) is None
    assert speculative_rule("llama3.1-8b", Category.INTERACTIVE) is None
    for rule in SPECULATIVE_RULES:
        heads = {s.head for s in resolve(rule.benchmark).benchmark.speculative}
        assert heads == {rule.head}
        assert rule.source.startswith(SPEC_DECODING)


def test_allowed_and_fully_reported_passes(tmp_path: Path) -> None:
    assert (
        check_speculative(_ctx(tmp_path, "gpt-oss-120b-interactive", "Interactive", GOOD), closed=True) == []
    )


def test_not_declared_passes(tmp_path: Path) -> None:
    assert check_speculative(_ctx(tmp_path, "gpt-oss-120b", "Server", None), closed=True) == []
    assert check_speculative(_ctx(tmp_path / "b", "gpt-oss-120b", "Offline", False), closed=True) == []


@pytest.mark.parametrize(
    ("bench", "scenario"),
    [("gpt-oss-120b", "Server"), ("gpt-oss-120b", "Offline"), ("llama3.1-8b-interactive", "Interactive")],
)
def test_declared_where_not_allowed_is_an_error(tmp_path: Path, bench: str, scenario: str) -> None:
    found = _errors(check_speculative(_ctx(tmp_path, bench, scenario, GOOD), closed=True))
    assert [f.rule for f in found] == ["speculative_decoding"]
    assert SPEC_DECODING in (found[0].source or "") and "allow only for" in found[0].message


def test_open_division_is_not_constrained(tmp_path: Path) -> None:
    assert check_speculative(_ctx(tmp_path, "gpt-oss-120b", "Server", GOOD), closed=False) == []


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        (
            {"mtp_head": "https://huggingface.co/someone/finetuned-eagle"},
            "mtp_head",
            "not the reference MTP head",
        ),
        (
            {"configuration": {"speculative-num-steps": 5, "speculative-eagle-topk": 1.0}},
            "speculative-num-steps",
            "fix",
        ),
        ({"configuration": {"speculative-num-steps": 3}}, "speculative-eagle-topk", "fix"),
        ({"algorithm": ""}, "algorithm", "lacks algorithm"),
        ({"mtp_head_quantized": True}, "mtp_head_quantized", "quantized"),
    ],
)
def test_what_the_appendix_requires(tmp_path: Path, change: dict, key: str, words: str) -> None:
    found = _errors(
        check_speculative(_ctx(tmp_path, "gpt-oss-120b-interactive", "Interactive", GOOD | change), True)
    )
    assert [(f.rule, f.key) for f in found] == [("speculative_decoding", key)]
    assert words in found[0].message and "GPT-OSS-120B" in (found[0].source or "")


def test_not_an_object_is_an_error(tmp_path: Path) -> None:
    found = _errors(check_speculative(_ctx(tmp_path, "deepseek-r1-interactive", "Interactive", True), True))
    assert [f.key for f in found] == ["speculative_decoding"] and "must be an object" in found[0].message


def test_qwen_edge_row_reports_its_own_configuration(tmp_path: Path) -> None:
    head = "https://huggingface.co/Qwen/Qwen3.6-27B"
    ok = {"algorithm": "chain MTP", "mtp_head": head, "configuration": {"num-steps": 4}}
    assert check_speculative(_ctx(tmp_path / "a", "qwen3.6-27b", "Offline", ok), True) == []
    unreported = ok | {"configuration": {"draft": "chain"}}
    found = _errors(check_speculative(_ctx(tmp_path / "b", "qwen3.6-27b", "Offline", unreported), True))
    assert [f.key for f in found] == ["num-steps"] and "must report" in found[0].message
    # a quantized head is allowed on the edge row only when decoding stays lossless
    quantized = ok | {"mtp_head_quantized": True}
    found = _errors(check_speculative(_ctx(tmp_path / "c", "qwen3.6-27b", "Offline", quantized), True))
    assert [f.key for f in found] == ["lossless"]
    assert (
        check_speculative(
            _ctx(tmp_path / "d", "qwen3.6-27b", "Offline", quantized | {"lossless": True}), True
        )
        == []
    )


def test_readme_that_describes_it_without_a_declaration_is_a_warning(tmp_path: Path) -> None:
    ctx = _ctx(
        tmp_path, "gpt-oss-120b-interactive", "Interactive", None, "We use EAGLE3 speculative decoding.\n"
    )
    found = check_speculative(ctx, True)
    assert [(f.rule, f.severity) for f in found] == [("speculative_decoding", Severity.WARNING)]


def test_submission_rejects_a_resnet_result_declaring_it(tmp_path: Path) -> None:
    root = build_valid_tree(tmp_path)
    assert check_submission(root, "v4.1").valid
    meas = root / "closed/UntetherAI/measurements" / UT_EDGE / "resnet50" / "offline" / f"{UT_EDGE}.json"
    data = orjson.loads(meas.read_bytes()) | {"speculative_decoding": GOOD}
    meas.write_bytes(orjson.dumps(data))
    report = check_submission(root, "v4.1")
    bad = [f for f in report.findings if f.failed]
    assert [(f.rule, Path(f.path).name) for f in bad] == [("speculative_decoding", meas.name)]
    assert not report.valid


DECLARED = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from([*GOOD, "mtp_head_quantized", "lossless", "speculative-num-steps", "x"]),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(declared=DECLARED, bench=st.sampled_from(["gpt-oss-120b-interactive", "qwen3.6-27b", "resnet50"]))
def test_any_declaration_gives_findings_not_exceptions(
    tmp_path_factory: pytest.TempPathFactory, declared: object, bench: str
) -> None:
    scenario = "Interactive" if "interactive" in bench else "Offline"
    try:
        ctx = _ctx(tmp_path_factory.mktemp("spec"), bench, scenario, declared)
    except (TypeError, ValueError):  # orjson refuses NaN / out-of-range numbers: no such file can be written
        return
    for f in check_speculative(ctx, closed=True):
        assert f.rule == "speculative_decoding" and len(f.message) < 800


def _token_log(folder: Path, entries: list[tuple[int, int]]) -> Path:
    """An accuracy log of (tokens in the response, reported token_count) entries, int32 token ids."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        {"seq_id": i, "qsl_idx": i, "data": "01000000" * n, "token_data": "01000000", "token_count": c}
        for i, (n, c) in enumerate(entries)
    ]
    path = folder / "mlperf_log_accuracy.json"
    path.write_bytes(orjson.dumps(rows))
    return path


def test_tpot_token_counts_in_the_audit_logs(tmp_path: Path) -> None:
    """TPOT counts each emitted token once: a speculative SUT that reports drafted tokens is caught in the
    TEST09 performance-mode log, where every sample's token_count sits beside its response."""
    ctx = _ctx(tmp_path / "ok", "gpt-oss-120b-interactive", "Interactive", GOOD)
    _token_log(ctx.scendir / "TEST09", [(12, 12), (3, 3)])
    assert check_speculative(ctx, True) == []
    ctx = _ctx(tmp_path / "bad", "gpt-oss-120b-interactive", "Interactive", GOOD)
    log = _token_log(ctx.scendir / "TEST09" / "accuracy", [(12, 12), (3, 8), (5, 20)])
    found = _errors(check_speculative(ctx, True))
    assert [(f.rule, f.path, f.value) for f in found] == [("speculative_decoding", str(log), 2)]
    assert "2 of 3 samples" in found[0].message and "qsl_idx 1: token_count 8, 3 tokens" in found[0].message
    assert TPOT_DEFINITION in (found[0].source or "")


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=400) | st.lists(st.dictionaries(st.sampled_from(["data", "token_count", "qsl_idx"]),
       st.integers() | st.text(alphabet="0123456789abcdefXYZ", max_size=24) | st.none(), max_size=3),
       max_size=5).map(lambda rows: json.dumps(rows).encode()))  # fmt: skip
def test_token_log_reader_never_raises(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("tok") / "mlperf_log_accuracy.json"
    path.write_bytes(data)
    checked, bad, _ = token_count_mismatches(path)
    assert 0 <= bad <= checked


def test_a_fifo_readme_is_not_read(tmp_path: Path) -> None:
    import os

    ctx = _ctx(tmp_path, "gpt-oss-120b-interactive", "Interactive", None)
    (ctx.scendir / "README.md").unlink()
    os.mkfifo(ctx.scendir / "README.md")
    assert check_speculative(ctx, True) == []  # would block forever if it opened the FIFO
