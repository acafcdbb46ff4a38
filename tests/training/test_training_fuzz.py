"""Property tests: every training parser and checker on hostile input ends in a verdict or a
documented error, never an uncaught exception or a hang; a harmless change keeps a valid log valid.

Profiles in tests/conftest.py (`ci` short by default, `long` for bench runs).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.errors import ProctorError
from proctor.mllog_lines import BadLine, LogLine, parse_line
from proctor.rules.training_rcps import parse_rcp_table
from proctor.training.compliance import check_file, jsonable
from proctor.training.package import check_package, check_system
from proctor.training.rcp import check_rcp
from proctor.training.runs import read_run_set, read_scaling
from proctor.training.scoring import score_run_set
from proctor.training.seeds import check_seeds
from tests.support import synthetic_logs as sl

from .results_pkg import write_package

pytestmark = pytest.mark.fuzz

PASS_FAST = [175104 + 512 * i for i in range(10)]
MINUTES = [60.0 + 1.5 * i for i in range(10)]
VALID = sl.render(sl.valid_events("llama31_8b")).encode()

HOSTILE_JSON = [
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"1e400",
    b"0x1p99999",
    b"9" * 5000,
    b"[" * 1000 + b"1" + b"]" * 1000,
    b'{"a": ' * 600 + b"1" + b"}" * 600,
    b"null",
    b'"\\ud800"',
    b"\xff\xfe",
    b"[1, 2",
    b'{"a": 1, "a": 2}',
    b"true",
    b'"' + b"x" * 100_000 + b'"',
]
values = st.one_of(
    st.sampled_from(HOSTILE_JSON),
    st.binary(max_size=64),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
        max_leaves=8,
    ).map(lambda v: json.dumps(v).encode()),
)


def _mllog(key: bytes, value: bytes, md: bytes = b'{"file": "t.py", "lineno": 1}') -> bytes:
    return (
        b':::MLLOG {"namespace": "", "time_ms": 1700000000000.5, "event_type": "POINT_IN_TIME", "key": "'
        + key
        + b'", "value": '
        + value
        + b', "metadata": '
        + md
        + b"}"
    )


@given(st.binary(max_size=300) | values.map(lambda v: _mllog(b"global_batch_size", v)), st.integers(1, 10**9))
def test_parse_line_never_raises(text: bytes, lineno: int) -> None:
    rec = parse_line(text, lineno)
    assert rec is None or isinstance(rec, LogLine | BadLine)
    if isinstance(rec, LogLine):
        orjson.dumps(jsonable(rec.raw))  # what --json prints is always serializable


KEYS = [b"global_batch_size", b"eval_accuracy", b"seed", b"submission_benchmark", b"run_stop", b"opt_name"]



@st.composite
def mutated_logs(draw: st.DrawFn) -> bytes:
    """A valid log with a few hostile edits: values, inserted or removed lines, bytes, BOM, CRLF."""
    lines = VALID.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["value", "insert", "delete", "dup", "bytes", "cut"]))
        i = draw(st.integers(0, len(lines) - 1))
        if op == "value":
            try:  # an earlier edit may have broken this line
                key = str(orjson.loads(lines[i].split(b":::MLLOG ", 1)[-1])["key"]).encode()
            except (orjson.JSONDecodeError, KeyError, TypeError):
                key = b"opt_name"
            lines[i] = _mllog(key, draw(values)) + b"\n"
        elif op == "insert":
            lines.insert(i, _mllog(draw(st.sampled_from(KEYS)), draw(values)) + b"\n")
        elif op == "delete" and len(lines) > 1:
            del lines[i]
        elif op == "dup":
            lines.insert(i, lines[i])
        elif op == "bytes":
            lines.insert(i, draw(st.binary(max_size=80)) + b"\n")
        elif op == "cut":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
    data = b"".join(lines)
    if draw(st.booleans()):
        data = data.replace(b"\n", b"\r\n")
    if draw(st.booleans()):
        data = b"\xef\xbb\xbf" + data
    return data


def _tmp() -> tempfile.TemporaryDirectory[str]:
    return tempfile.TemporaryDirectory()


@given(mutated_logs())
def test_compliance_on_mutated_logs(data: bytes) -> None:
    with _tmp() as d:
        p = Path(d) / "result_0.txt"
        p.write_bytes(data)
        rep = check_file(p)
        assert isinstance(rep.valid, bool)
        assert rep.valid == (not [f for f in rep.findings if f.failed])
        orjson.dumps(jsonable(rep.to_json()))
        for f in rep.findings:
            assert len(f.message) < 2000


@given(st.binary(max_size=2000))
def test_compliance_on_random_bytes(data: bytes) -> None:
    with _tmp() as d:
        p = Path(d) / "result_0.txt"
        p.write_bytes(data)
        rep = check_file(p)
        assert not rep.valid  # random bytes never make a complete run
        assert sum(f.failed for f in rep.findings) >= 1


@given(st.booleans(), st.booleans(), st.sampled_from(["", "[1,0]<stdout>:", "I0101 12:00 train.py] "]))
def test_harmless_changes_keep_a_valid_log_valid(crlf: bool, bom: bool, prefix: str) -> None:
    lines = VALID.decode().splitlines()
    text = "".join(prefix + line + ("\r\n" if crlf else "\n") for line in lines)
    data = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    with _tmp() as d:
        p = Path(d) / "result_0.txt"
        p.write_bytes(data)
        rep = check_file(p)
        assert rep.valid, [f.message for f in rep.findings]


def test_a_huge_line_is_one_bad_line(tmp_path: Path) -> None:
    from proctor import mllog_lines

    p = tmp_path / "result_0.txt"
    with open(p, "wb") as fh:
        fh.write(VALID)
        fh.write(b':::MLLOG {"key": "x", "value": "' + b"y" * (mllog_lines.MAX_LINE_BYTES + 10) + b'"}\n')
        fh.write(VALID.splitlines(keepends=True)[0])
    recs = list(mllog_lines.iter_log(p))
    bad = [r for r in recs if isinstance(r, BadLine)]
    assert len(bad) == 1 and "longer than" in bad[0].reason
    assert recs[-1].line == len(VALID.splitlines()) + 2


# -- results trees ------------------------------------------------------------------------------------


@st.composite
def mutated_packages(draw: st.DrawFn) -> list[tuple[str, bytes | None]]:
    """Edits to a valid package: (relative path, new content or None to delete)."""
    edits: list[tuple[str, bytes | None]] = []
    for _ in range(draw(st.integers(1, 3))):
        target = draw(
            st.sampled_from(
                [
                    "results/sysA/llama31_8b/result_{}.txt",
                    "results/sysA/llama31_8b/scaling.json",
                    "systems/sysA.json",
                    "results/sysA/llama31_8b/package_checker_params",
                ]
            )
        ).format(draw(st.integers(0, 9)))
        if target.endswith(".txt"):
            content: bytes | None = draw(mutated_logs() | st.binary(max_size=200) | st.none())
        elif target.endswith("scaling.json"):
            content = draw(scaling_docs())
        elif target.endswith("sysA.json"):
            content = draw(system_docs())
        else:
            content = draw(st.binary(max_size=100))
        edits.append((target, content))
    return edits


def scaling_docs() -> st.SearchStrategy[bytes]:
    return st.one_of(
        values.map(lambda v: b'{"scaling_factor": ' + v + b"}"),
        values,
        st.floats().map(lambda f: json.dumps({"scaling_factor": f}).encode()),
    )


def system_docs() -> st.SearchStrategy[bytes]:
    fields = st.sampled_from(["division", "status", "submitter", "system_name", "number_of_nodes",
                              "accelerators_per_node", "host_processors_per_node"])
    return st.one_of(
        values,
        st.dictionaries(fields, values.map(lambda v: v.decode("utf-8", "replace")), max_size=5).map(
            lambda d: b"{" + b", ".join(json.dumps(k).encode() + b": " + v.encode() for k, v in d.items()) + b"}"
        ),
    )


_PKG_CACHE: dict[str, bytes] = {}


def _package(root: Path) -> Path:
    if not _PKG_CACHE:
        with _tmp() as d:
            src = write_package(Path(d) / "pkg", {"sysA": {"llama31_8b": (PASS_FAST, MINUTES)}})
            for p in src.rglob("*"):
                if p.is_file():
                    _PKG_CACHE[str(p.relative_to(src))] = p.read_bytes()
    for rel, data in _PKG_CACHE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


@given(mutated_packages())
def test_results_checkers_on_mutated_packages(edits: list[tuple[str, bytes | None]]) -> None:
    with _tmp() as d:
        pkg = _package(Path(d) / "pkg")
        for rel, content in edits:
            p = pkg / rel
            if content is None:
                p.unlink(missing_ok=True)
            else:
                p.write_bytes(content)
        bdir = pkg / "results" / "sysA" / "llama31_8b"
        rep = check_package(pkg)
        assert isinstance(rep.valid, bool)
        orjson.dumps(jsonable(rep.to_dict()))
        check_seeds(bdir)
        rs = read_run_set(bdir)
        res = check_rcp(rs, "6.1.0")
        assert isinstance(res.passed, bool)
        orjson.dumps(jsonable(res.to_dict()))
        sc = score_run_set(rs)
        assert isinstance(sc.valid, bool)
        if any(rel.endswith("scaling.json") for rel, c in edits) and read_scaling(bdir)[1]:
            assert not sc.valid and not res.passed and not rep.valid


@given(scaling_docs())
def test_scaling_json(doc: bytes) -> None:
    with _tmp() as d:
        (Path(d) / "scaling.json").write_bytes(doc)
        factor, findings = read_scaling(d)
        assert findings or 1.0 <= factor <= 10.0
        assert not findings or factor == 1.0


@given(system_docs())
def test_system_description_json(doc: bytes) -> None:
    with _tmp() as d:
        p = Path(d) / "sys.json"
        p.write_bytes(doc)
        for f in check_system(p, "6.1.0"):
            assert f.path == str(p) and len(f.message) < 500


def _rcp_record(draw: st.DrawFn) -> object:
    good = {"Benchmark": "llama31_8b", "BS": 32, "Epochs to converge": [1.0, 2.0, 3.0, 4.0]}
    field = draw(st.sampled_from(["Benchmark", "BS", "Epochs to converge", "Hyperparams", None]))
    if field is None:
        return draw(st.sampled_from([[], "x", None, 3, good]))
    rec = dict(good)
    rec[field] = json.loads(draw(values.filter(_json_ok)).decode()) if draw(st.booleans()) else None
    if draw(st.booleans()):
        rec.pop(field)
    return rec


def _json_ok(v: bytes) -> bool:
    try:
        json.loads(v)
        return True
    except (ValueError, RecursionError):
        return False


@given(st.data())
def test_rcp_json(data: st.DataObject) -> None:
    n = data.draw(st.integers(0, 3))
    doc = {f"rec_{i}": _rcp_record(data.draw) for i in range(n)}
    try:
        raw = json.dumps(doc).encode()
    except (ValueError, RecursionError):
        return
    raw = data.draw(st.sampled_from([raw, raw[: len(raw) // 2], b"[" + raw + b"]"]))
    try:
        table = parse_rcp_table(raw, "custom.json")
    except ProctorError as exc:
        assert "custom.json" in str(exc)
        return
    for recs in table.values():
        for r in recs:
            assert r.batch_size > 0 and len(r.points) >= 3
            with _tmp() as d:
                res = check_rcp(read_run_set(Path(d)), "6.1.0", table)
                assert not res.passed
