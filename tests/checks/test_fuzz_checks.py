"""Property tests (hypothesis) of every reader the inference checks use on outside input: no uncaught
exception, no hang, a finding or a verdict; a valid tree stays valid under harmless changes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from checks_corpus import UT_EDGE, build_valid_tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.checks.accuracy import check_accuracy, parse_accuracy_text
from proctor.checks.submission import check_submission
from proctor.checks.system_description import check_system_description
from proctor.errors import LogFormatError
from proctor.loadgen.logs import read_detail, read_summary
from proctor.rules.inference import resolve

pytestmark = pytest.mark.fuzz

SS = Path("closed/UntetherAI/results") / UT_EDGE / "resnet50" / "singlestream"
SYSTEM_JSON = Path("closed/UntetherAI/systems") / f"{UT_EDGE}.json"
TARGETS = [
    SS / "performance/run_1/mlperf_log_detail.txt",
    SS / "performance/run_1/mlperf_log_summary.txt",
    SS / "accuracy/accuracy.txt",
    SS / "accuracy/mlperf_log_accuracy.json",
    SS / "accuracy/mlperf_log_detail.txt",
    SYSTEM_JSON,
]
_OLD_PAIR = re.compile(
    r"""['"]?(?P<key>[A-Za-z][\w .-]*?)['"]?\s*[:=]\s*(?:mean\s*=\s*)?['"]?(?P<num>[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?P<pct>%)?"""
)

NESTED = st.integers(1, 1200).map(lambda n: "[" * n + "]" * n)
HUGE_NUMBERS = st.sampled_from(["1e400", "-1e999", "0x1p99999", "9" * 5000, "NaN", "Infinity", "1e-400"])
JSON_VALUES = st.one_of(
    st.just("null"),
    st.sampled_from(["true", "false"]),
    st.integers().map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    HUGE_NUMBERS,
    NESTED,
    st.text(max_size=40).map(lambda s: '"' + s.replace("\\", "").replace('"', "") + '"'),
    st.just("[1, 2, 3]"),
    st.just('{"a": {"b": [1]}}'),
)
KEYS = st.sampled_from(
    [
        "effective_scenario",
        "result_validity",
        "effective_test_mode",
        "early_stopping_latency_ss",
        "effective_min_duration_ms",
        "effective_qsl_rng_seed",
        "result_min_queries_met",
        "error_runtime",
    ]
)


@st.composite
def detail_lines(draw: st.DrawFn) -> bytes:
    """Detail-log-like bytes: valid records with hostile values, broken records, noise, CRLF, BOM."""
    parts: list[bytes] = []
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.integers(0, 5))
        if kind <= 2:
            key, value = draw(KEYS), draw(JSON_VALUES)
            meta = draw(st.sampled_from(['{"is_error": true}', '{"is_warning": true}', "{}", "[]", "null"]))
            parts.append(f':::MLLOG {{"key": "{key}", "value": {value}, "metadata": {meta}}}'.encode())
        elif kind == 3:
            parts.append(b":::MLLOG " + draw(st.binary(max_size=60)))
        elif kind == 4:
            parts.append(draw(st.binary(max_size=60)))
        else:
            parts.append(b':::MLLOG {"key": ' + draw(JSON_VALUES).encode() + b', "value": 1}')
    sep = draw(st.sampled_from([b"\n", b"\r\n"]))
    head = draw(st.sampled_from([b"", b"\xef\xbb\xbf"]))
    return head + sep.join(parts)


@given(data=detail_lines())
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
def test_detail_reader_never_crashes(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "mlperf_log_detail.txt"
    p.write_bytes(data)
    try:
        log = read_detail(p, keep_entries=False)
    except LogFormatError as exc:
        assert str(p) in str(exc)
        return
    assert log.n_bad_lines >= len(log.bad_lines) and all(isinstance(k, str) for k in log.values)
    assert set(log.lines) == set(log.values)


@given(data=st.one_of(st.binary(max_size=400), st.text(max_size=400).map(str.encode)))
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
def test_summary_reader_never_crashes(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "mlperf_log_summary.txt"
    p.write_bytes(b"MLPerf Results Summary\n" + data)
    try:
        out = read_summary(p)
    except LogFormatError as exc:
        assert str(p) in str(exc)
        return
    assert isinstance(out, dict) and "recommendations" in out


_SUMMARY_WORDS = st.sampled_from([
    "MLPerf Results Summary", "Additional Stats", "Test Parameters Used", "Recommendations:",
    "Early Stopping Result:", "TTFT Early Stopping Result:", "Per-query latency:  ", "Result is", "lines",
    "additional_stats", "test_parameters", "per_query", "early_stopping", "errors", " * x", "   y", "",
    "No warnings encountered during test.", "1 ERROR encountered. See detailed log.", "Samples per second",
])


@given(lines=st.lists(st.tuples(_SUMMARY_WORDS, st.sampled_from(["", " : ", ": ", " "]),
                                st.one_of(st.text(max_size=8), st.integers().map(str))), max_size=25))
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
def test_summary_reader_on_summary_shaped_lines(tmp_path: Path, lines: list[tuple[str, str, str]]) -> None:
    """Lines made of the summary's own labels and section names, in any order: a dict whose `lines`
    point at lines of the file, or a LogFormatError naming it."""
    p = tmp_path / "mlperf_log_summary.txt"
    text = "\n".join(a + b + c for a, b, c in lines)
    p.write_text(text, encoding="utf-8")
    try:
        out = read_summary(p)
    except LogFormatError as exc:
        assert str(p) in str(exc)
        return
    n = text.count("\n") + 1
    assert isinstance(out["lines"], dict) and all(1 <= v <= n for v in out["lines"].values())
    assert isinstance(out["additional_stats"], dict) and isinstance(out["test_parameters"], dict)


@given(
    text=st.one_of(
        st.text(alphabet="ab ='\":.-_1%eE+\té,{}", max_size=30),
        st.text(max_size=200),
        st.builds(lambda k, n: f"{k}={n}%", st.sampled_from(["accuracy", "acc", "mAP"]), HUGE_NUMBERS),
    )
)
def test_accuracy_text_parse_matches_the_old_pattern_and_checks(text: str) -> None:
    """The linear parser finds what the old (quadratic) pattern found, and any value gets a verdict."""
    got = parse_accuracy_text(text)
    want: dict[str, float] = {}
    for line in text.splitlines():
        if not line.strip().lower().startswith("hash="):
            for m in _OLD_PAIR.finditer(line):
                want[m["key"].strip().lower()] = float(m["num"]) if len(m["num"]) <= 400 else float("inf")
    assert got == want
    variant = resolve("resnet")
    findings, results = check_accuracy(variant.benchmark, variant.level, got, "accuracy.txt")
    assert results and all(f.message for f in findings)


@given(
    text=st.one_of(
        st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
        st.builds(
            lambda k, v: "{" + f'"{k}": {v}' + "}",
            st.sampled_from(["division", "number_of_nodes", "system_type", "status", "system_name"]),
            JSON_VALUES,
        ),
        st.builds(lambda k: "{" + f'"{k}": "a", "{k}": "b"' + "}", st.sampled_from(["division", "x"])),
    )
)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
def test_system_description_never_crashes(tmp_path: Path, text: str) -> None:
    p = tmp_path / "sys.json"
    p.write_text(text, encoding="utf-8", errors="surrogateescape")
    desc, findings = check_system_description(p, "closed", "acme")
    assert findings and all(f.path == str(p) for f in findings)


@st.composite
def hostile_content(draw: st.DrawFn) -> bytes:
    return draw(
        st.one_of(
            st.binary(max_size=300),
            detail_lines(),
            NESTED.map(str.encode),
            HUGE_NUMBERS.map(str.encode),
            st.just(b"accuracy=1e999%\n"),
            st.just(b"x" * 70000),
            st.just(b"\xef\xbb\xbf{}"),
            st.just(b""),
        )
    )


@pytest.fixture(scope="module")
def valid_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_valid_tree(tmp_path_factory.mktemp("template"))


def _copy(template: Path, dest: Path) -> Path:
    import shutil

    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(template, dest)
    return dest


@given(target=st.sampled_from(TARGETS), content=hostile_content())
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)
def test_submission_tree_with_one_hostile_file(
    tmp_path: Path, valid_template: Path, target: Path, content: bytes
) -> None:
    root = _copy(valid_template, tmp_path / "tree")
    (root / target).write_bytes(content)
    report = check_submission(root, "v4.1")
    assert report.results  # the walk went on: every result still has a row
    if not report.valid:
        assert all(f.path and f.message for f in report.findings if f.failed)


@given(
    change=st.sampled_from(
        [
            "accuracy_trailing_lines",
            "detail_extra_output",
            "detail_crlf",
            "system_json_reformatted",
            "hidden_file",
            "summary_trailing_blank",
        ]
    )
)
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
def test_valid_tree_stays_valid_under_harmless_changes(tmp_path: Path, valid_template: Path, change: str) -> None:
    import orjson

    root = _copy(valid_template, tmp_path / "tree")
    detail = root / SS / "performance/run_1/mlperf_log_detail.txt"
    if change == "accuracy_trailing_lines":
        with (root / SS / "accuracy/accuracy.txt").open("a") as fh:
            fh.write("\nhash=0123456789abcdef\n\n")
    elif change == "detail_extra_output":  # a launcher's own lines between the records
        detail.write_bytes(b"[1,0]<stdout>: starting\n" + detail.read_bytes() + b"done\n")
    elif change == "detail_crlf":  # the official parsers read lines through str.strip / splitlines
        detail.write_bytes(detail.read_bytes().replace(b"\n", b"\r\n"))
    elif change == "system_json_reformatted":
        p = root / SYSTEM_JSON
        p.write_bytes(orjson.dumps(orjson.loads(p.read_bytes()), option=orjson.OPT_INDENT_2))
    elif change == "hidden_file":
        (root / SS.parent / ".DS_Store").mkdir()
    else:
        with (root / SS / "performance/run_1/mlperf_log_summary.txt").open("a") as fh:
            fh.write("\n\n")
    report = check_submission(root, "v4.1")
    assert report.valid, [(f.rule, f.path, f.message) for f in report.findings if f.failed]
    assert len(report.results) == 3
