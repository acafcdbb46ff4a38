"""Every text file the checker reads is read as the official Python tools read it: universal newlines
(a CRLF or CR file is the LF file) and strict UTF-8 (a byte that is not UTF-8 is an error naming the
file, as the official stops on it). Table-driven over each kind of file in valid trees built in
tmp_path (v4.1 BERT with TEST01/TEST05, v5.1 Llama2-70B with TEST06), and fuzzed at the reader.
"""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.checks.compliance import check_accuracy_hash
from proctor.checks.submission import SubmissionReport, check_submission
from proctor.errors import LogFormatError
from proctor.findings import Severity
from proctor.loadgen.logs.reader import iter_lines
from proctor.mllog_lines import iter_log
from proctor.submission_files import hash_lines, is_truncated, lf_form, truncate_bytes
from proctor.text_files import decode_utf8, read_text, split_lines, universal_lines
from tests.checks import test_rounds as built

SUB = Path("closed") / built.SUB

# Each kind of text file the checker reads, by a glob under the submitter folder.
BERT_FILES = {
    "accuracy.txt": "results/*/*/*/accuracy/accuracy.txt",
    "verify_accuracy.txt": "compliance/*/*/*/TEST01/verify_accuracy.txt",
    "verify_performance.txt (TEST01)": "compliance/*/*/*/TEST01/verify_performance.txt",
    "verify_performance.txt (TEST05)": "compliance/*/*/*/TEST05/verify_performance.txt",
    "TEST01 accuracy.txt": "compliance/*/*/*/TEST01/accuracy/accuracy.txt",
    "README.md": "measurements/*/*/*/README.md",
    "user.conf": "measurements/*/*/*/user.conf",
    "measurements JSON": "measurements/*/*/*/*.json",
    "system JSON": "systems/*.json",
    "detail log (result)": "results/*/*/*/performance/run_1/mlperf_log_detail.txt",
    "detail log (accuracy run)": "results/*/*/*/accuracy/mlperf_log_detail.txt",
    "detail log (audit)": "compliance/*/*/*/TEST0[15]/performance/run_1/mlperf_log_detail.txt",
    "summary log": "**/mlperf_log_summary.txt",
    "accuracy log": "**/mlperf_log_accuracy.json",
}
LLAMA_FILES = {"verify_accuracy.txt (TEST06)": "compliance/*/*/*/TEST06/verify_accuracy.txt"}
NEWLINES = {"CRLF": b"\r\n", "CR": b"\r"}


def _bert(tmp: Path) -> Path:
    return built._build(tmp, built._bert_v41)


def _llama(tmp: Path) -> Path:
    return built._build(tmp, built._llama2_v51)


TREES: dict[str, tuple[Callable[[Path], Path], str, dict[str, str]]] = {
    "bert v4.1": (_bert, "v4.1", BERT_FILES),
    "llama2 v5.1": (_llama, "v5.1", LLAMA_FILES),
}


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, SubmissionReport]]:
    """Each tree once, with its LF report (the baseline every variant is compared with)."""
    out = {}
    for name, (build, version, _) in TREES.items():
        root = build(tmp_path_factory.mktemp(name.replace(" ", "_")))
        report = check_submission(root, version)
        assert report.valid, [f.message for f in report.findings if f.failed]
        out[name] = (root, report)
    return out


def _summary(report: SubmissionReport, root: Path) -> tuple[list, list]:
    rows = sorted((r.benchmark, r.scenario, r.value, r.valid) for r in report.results)
    errors = sorted((f.rule, str(Path(f.path or "").relative_to(root))) for f in report.findings if f.failed)
    return rows, errors


def _variant(tmp: Path, src: Path) -> Path:
    root = tmp / "tree"
    shutil.copytree(src, root)
    return root


CASES = [(tree, kind, glob) for tree, (_, _, files) in TREES.items() for kind, glob in files.items()]


@pytest.mark.parametrize("newline", list(NEWLINES))
@pytest.mark.parametrize(("tree", "kind", "glob"), CASES)
def test_crlf_and_cr_files_read_as_the_lf_file(
    trees: dict[str, tuple[Path, SubmissionReport]], tmp_path: Path, tree: str, kind: str, glob: str, newline: str
) -> None:
    src, base = trees[tree]
    root = _variant(tmp_path, src)
    files = sorted((root / SUB).glob(glob))
    assert files, f"{kind}: no file matches {glob}"
    for path in files:
        data = path.read_bytes()
        if path.suffix == ".json" and b"\n" not in data:  # written compact: give it lines first
            data = json.dumps(json.loads(data), indent=2).encode() + b"\n"
        assert b"\n" in data, path
        path.write_bytes(data.replace(b"\n", NEWLINES[newline]))
    report = check_submission(root, TREES[tree][1])
    assert _summary(report, root) == _summary(base, src), [f.message for f in report.findings if f.failed]
    crlf_logs = [f for f in report.findings if f.rule == "accuracy_hash" and f.severity is Severity.WARNING]
    # an accuracy log whose line ends a copy converted: its hash is read on the LF form, with a warning
    assert len(crlf_logs) == (len(base.results) if kind == "accuracy log" else 0)


# The files the official checker reads as text, and a byte that is not UTF-8 in them: one error naming
# the file (the official stops with a traceback). README.md is never read as text by the official.
NOT_UTF8 = {
    "accuracy.txt": ("results/*/*/Offline/accuracy/accuracy.txt", "text_encoding"),
    "verify_accuracy.txt": ("compliance/*/*/Offline/TEST01/verify_accuracy.txt", "text_encoding"),
    "verify_performance.txt": ("compliance/*/*/Offline/TEST01/verify_performance.txt", "text_encoding"),
    "system JSON": ("systems/*.json", "system_description"),
    "measurements JSON": ("measurements/*/*/Offline/*.json", "measurements"),
}


@pytest.mark.parametrize(("kind", "where"), list(NOT_UTF8.items()))
def test_a_byte_that_is_not_utf8_is_an_error_naming_the_file(
    trees: dict[str, tuple[Path, SubmissionReport]], tmp_path: Path, kind: str, where: tuple[str, str]
) -> None:
    src, _ = trees["bert v4.1"]
    root = _variant(tmp_path, src)
    [path] = sorted((root / SUB).glob(where[0]))
    data = path.read_bytes()
    cut = data.index(b"\n") if b"\n" in data else len(data) // 2
    path.write_bytes(data[:cut] + b" \xff\xfe" + data[cut:])  # Latin-1 bytes in a UTF-8 file
    report = check_submission(root, "v4.1")
    mine = [f for f in report.findings if f.failed and f.path == str(path)]
    assert [f.rule for f in mine] == [where[1]], [f.message for f in report.findings if f.failed]
    assert "UTF-8" in mine[0].message
    assert not report.valid


def test_readme_is_scanned_whatever_its_bytes(trees: dict[str, tuple[Path, SubmissionReport]], tmp_path: Path) -> None:
    src, _ = trees["bert v4.1"]
    root = _variant(tmp_path, src)
    for readme in (root / SUB).glob("measurements/*/*/*/README.md"):
        readme.write_bytes(b"\xff\xfe how the result was produced\r\n")
    assert check_submission(root, "v4.1").valid


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("final", [True, False])
@pytest.mark.parametrize(
    "lines",
    [
        [b"{'rouge1': 44.1}", b"hash=" + b"a" * 64],
        [b"Downloading: ...", b"Accuracy Results: {'FID_SCORE': '23.79'}", b"", b"hash=" + b"a" * 64],
        [b"accuracy=76.1%, good=1, total=1", b"hash=" + b"a" * 64, b"hash=" + b"b" * 64],
    ],
)
def test_hash_line_is_found_with_any_line_end(lines: list[bytes], newline: bytes, final: bool) -> None:
    data = newline.join(lines) + (newline if final else b"")
    assert hash_lines(decode_utf8(data))[0] == "a" * 64


def test_only_universal_newlines_split_a_line() -> None:
    """What str.splitlines() also splits on stays inside the line, as in the official `for line in f`."""
    for sep in ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"):
        assert hash_lines(f"x{sep}hash={'b' * 64}\n") == []
        assert split_lines(f"a{sep}b\n") == [f"a{sep}b"]


def test_crlf_copy_of_a_truncated_accuracy_log_is_the_truncated_log(tmp_path: Path) -> None:
    """A published v5.1 open result: its truncated log's line ends turned CRLF after the hash was taken."""
    import hashlib

    full = b"[\n" + b",\n".join(b'{"seq_id": %d, "qsl_idx": %d, "data": "00"}' % (i, i) for i in range(400)) + b"\n]\n"
    acc = tmp_path / "accuracy"
    acc.mkdir()
    (acc / "mlperf_log_accuracy.json").write_bytes(truncate_bytes(full).replace(b"\n", b"\r\n"))
    (acc / "accuracy.txt").write_bytes(b"accuracy=76.1%\r\nhash=" + hashlib.sha256(full).hexdigest().encode() + b"\r\n")
    found = check_accuracy_hash(acc)
    assert [(f.rule, f.severity) for f in found] == [("accuracy_hash", Severity.WARNING)]
    assert "CRLF" in found[0].message
    # the same log with its hash changed is still an error: the LF form is the one judged
    (acc / "mlperf_log_accuracy.json").write_bytes(full.replace(b"\n", b"\r\n"))
    assert any(f.failed for f in check_accuracy_hash(acc))


# --- the readers, fuzzed: the same lines as Python's universal newlines, never an exception --------
LINE_BYTES = st.lists(
    st.sampled_from([b"a", b"hash=", b"\r", b"\n", b"\r\n", b"\x85", b"\xe2\x80\xa8", b" ", b"\xff", b"TEST PASS"]),
    max_size=40,
).map(b"".join)


def _python_lines(data: bytes) -> list[str]:
    """The official loop: `for line in open(path, encoding="utf-8")`, each line without its "\\n"."""
    return [line.removesuffix("\n") for line in io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline=None)]


@given(LINE_BYTES)
def test_split_lines_is_pythons_text_mode(data: bytes) -> None:
    try:
        want = _python_lines(data)
    except UnicodeDecodeError:
        with pytest.raises(LogFormatError, match="not UTF-8"):
            decode_utf8(data)
        return
    assert split_lines(decode_utf8(data)) == want
    assert [line.decode("utf-8") for line in universal_lines(data)] == want


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(LINE_BYTES, st.integers(1, 64))
def test_read_text_at_a_bound_never_splits_a_character(tmp_path: Path, data: bytes, limit: int) -> None:
    path = tmp_path / "t.txt"
    path.write_bytes(data)
    try:
        text = read_text(path, limit)
    except LogFormatError as exc:
        assert "not UTF-8" in str(exc) and str(path) in str(exc)
        with pytest.raises(UnicodeDecodeError):
            data[:limit].decode("utf-8", "strict")  # a bad byte inside the bound, not a cut character
        return
    assert text == data[:limit].decode("utf-8", "ignore").replace("\r\n", "\n").replace("\r", "\n")
    assert "\r" not in read_text(path, limit, lenient=True)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(LINE_BYTES)
def test_streaming_readers_split_as_python(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "log.txt"
    path.write_bytes(data)
    with path.open("rb") as fh:
        got = [line for _, line in iter_lines(fh)]
    assert got == data.splitlines()
    marked = b"".join(b':::MLLOG {"key": "k%d", "value": 1}' % i + sep for i, sep in enumerate((b"\r", b"\r\n", b"\n")))
    path.write_bytes(marked + data)
    recs = list(iter_log(path))
    assert [r.key for r in recs[:3]] == ["k0", "k1", "k2"] and [r.line for r in recs[:3]] == [1, 2, 3]


@given(st.binary(max_size=9000), st.sampled_from([b"\r\n", b"\r"]))
def test_lf_form_undoes_a_newline_conversion(data: bytes, newline: bytes) -> None:
    clean = data.replace(b"\r", b"")
    assert lf_form(clean.replace(b"\n", newline)) == clean
    assert is_truncated(lf_form(truncate_bytes(clean * 3).replace(b"\n", newline))) == is_truncated(
        truncate_bytes(clean * 3)
    )


ACCURACY_TEXT = st.lists(
    st.sampled_from(
        ["accuracy=76.1%, good=1, total=2", "{'rouge1': '44.1', 'gen_len': 12}", "hash=" + "c" * 64, "", "mAP=37.6%",
         "Accuracy: mean = 0.8633", "x\x85y=1", "FID_SCORE: 23.5\u2028CLIP_SCORE: 31.7"]  # fmt: skip
    ),
    max_size=8,
).map("\n".join)


@given(ACCURACY_TEXT, st.sampled_from(["\r\n", "\r"]))
def test_accuracy_values_and_hash_do_not_depend_on_line_ends(text: str, newline: str) -> None:
    from proctor.checks.accuracy import parse_accuracy_text

    other = text.replace("\n", newline)
    assert parse_accuracy_text(other) == parse_accuracy_text(text)
    assert hash_lines(other) == hash_lines(text)
