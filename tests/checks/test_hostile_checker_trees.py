"""The checker on hostile trees (issue 30 §1): a file that is a link (out of the tree or not), a FIFO,
a socket or a device is an ERROR finding naming it and is never opened; nothing outside the tree is
read. Each test builds its tree and an `outside/` folder in tmp_path and records every file the
check opens."""

from __future__ import annotations

import builtins
import io
import json
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from checks_corpus import UT_EDGE, build_valid_tree
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.checks.submission import check_submission
from proctor.checks.summarize import summarize

SUB = Path("closed/UntetherAI")
SS = SUB / "results" / UT_EDGE / "resnet50" / "singlestream"
MEAS = SUB / "measurements" / UT_EDGE / "resnet50" / "singlestream"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    return build_valid_tree(tmp_path_factory.mktemp("pristine"))


def _tree(pristine: Path, base: Path) -> tuple[Path, Path]:
    root = base / "valid"
    shutil.copytree(pristine, root, symlinks=True)
    outside = base / "outside"
    outside.mkdir()
    for name in ("mlperf_log_detail.txt", "mlperf_log_summary.txt"):
        shutil.copy(root / SS / "performance/run_1" / name, outside / name)
    shutil.copy(root / MEAS / f"{UT_EDGE}.json", outside / "measurements.json")
    shutil.copy(root / SUB / "systems" / f"{UT_EDGE}.json", outside / "system.json")
    shutil.copytree(root / SS / "accuracy", outside / "accuracy")
    return root, outside


class _Opened:
    """Every path the check opens, through open(), io.open and os.open."""

    def __init__(self, monkeypatch) -> None:
        self.paths: list[str] = []
        real_open, real_os_open = builtins.open, os.open

        def rec_open(file, *a, **k):
            if isinstance(file, str | os.PathLike):
                self.paths.append(os.path.abspath(file))
            return real_open(file, *a, **k)

        def rec_os_open(path, *a, dir_fd=None, **k):
            if dir_fd is None:
                self.paths.append(os.path.abspath(path))
            else:
                self.paths.append(os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), os.fspath(path)))
            return real_os_open(path, *a, dir_fd=dir_fd, **k)

        monkeypatch.setattr(builtins, "open", rec_open)
        monkeypatch.setattr(io, "open", rec_open)
        monkeypatch.setattr(os, "open", rec_os_open)

    def under(self, folder: Path) -> list[str]:
        real = os.path.realpath(folder)
        return [p for p in self.paths if os.path.realpath(p).startswith(real + os.sep)]


def _swap(p: Path, make: Callable[[Path], None]) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p)
    elif os.path.lexists(p):
        p.unlink()
    make(p)


CASES: list[tuple[str, Path, Callable[[Path, Path], None]]] = [
    ("detail log: absolute link out", SS / "performance/run_1/mlperf_log_detail.txt",
     lambda p, out: p.symlink_to(out / "mlperf_log_detail.txt")),
    ("measurements JSON: absolute link out", MEAS / f"{UT_EDGE}.json",
     lambda p, out: p.symlink_to(out / "measurements.json")),
    ("measurements.json (v6 place): absolute link out", SS / "measurements.json",
     lambda p, out: p.symlink_to(out / "measurements.json")),
    ("system description: relative link out", SUB / "systems" / f"{UT_EDGE}.json",
     lambda p, out: p.symlink_to(os.path.relpath(out / "system.json", p.parent))),
    ("accuracy folder: link out", SS / "accuracy", lambda p, out: p.symlink_to(out / "accuracy")),
    ("performance folder: link out", SS / "performance", lambda p, out: p.symlink_to(out)),
    ("results folder: link out", SUB / "results", lambda p, out: p.symlink_to(out)),
    ("a division: link out", Path("open"), lambda p, out: p.symlink_to(out)),
    ("detail log: link inside the tree", SS / "performance/run_1/mlperf_log_detail.txt",
     lambda p, out: p.symlink_to("../../../multistream/performance/run_1/mlperf_log_detail.txt")),
    ("accuracy.txt: loop", SS / "accuracy/accuracy.txt", lambda p, out: p.symlink_to("accuracy.txt")),
    ("two '..' links in a TEST01 folder", SUB / "compliance" / UT_EDGE / "resnet50/singlestream/TEST01/a",
     lambda p, out: (p.symlink_to(".."), (p.parent / "b").symlink_to(".."))),
    ("user.conf: FIFO", MEAS / "user.conf", lambda p, out: os.mkfifo(p)),
    ("summary log: FIFO", SS / "performance/run_1/mlperf_log_summary.txt", lambda p, out: os.mkfifo(p)),
    ("accuracy log: dangling link", SS / "accuracy/mlperf_log_accuracy.json", lambda p, out: p.symlink_to("gone")),
    ("system description: device", SUB / "systems" / f"{UT_EDGE}.json", lambda p, out: _device(p)),
    ("verify_performance.txt: device", SUB / "compliance" / UT_EDGE / "resnet50/singlestream/TEST04/verify_performance.txt",
     lambda p, out: _device(p)),
]


def _device(p: Path) -> None:
    try:
        os.mknod(p, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except OSError:
        pytest.skip("cannot make a device node here")


@pytest.mark.parametrize("case", range(len(CASES)), ids=[c[0] for c in CASES])
def test_links_and_specials_are_errors_naming_them_and_never_read(
    pristine: Path, tmp_path: Path, monkeypatch, case: int
) -> None:
    root, outside = _tree(pristine, tmp_path)
    _, rel, make = CASES[case]
    _swap(root / rel, lambda p: make(p, outside))
    opened = _Opened(monkeypatch)
    report = check_submission(root, "v4.1")
    monkeypatch.undo()
    assert not report.valid
    named = [f for f in report.findings if f.failed and f.path == str(root / rel)]
    assert named, [(f.rule, f.path) for f in report.findings if f.failed]
    assert any(f.rule == "tree" for f in named) or rel == Path("open") and named[0].rule == "tree"
    assert opened.under(outside) == []  # nothing outside the tree was opened
    assert not any(p == str(root / rel) for p in opened.paths)  # nor the link or FIFO itself


def test_the_valid_tree_stays_valid(pristine: Path, tmp_path: Path) -> None:
    root, _ = _tree(pristine, tmp_path)
    assert check_submission(root, "v4.1").valid


def test_code_links_inside_the_submitter_are_allowed(pristine: Path, tmp_path: Path) -> None:
    """Published submissions (v5.1 GATEOverflow) link model variants to one folder under code/."""
    root, _ = _tree(pristine, tmp_path)
    code = root / SUB / "code"
    (code / "mobilenets").mkdir()
    (code / "mobilenets/README.md").write_text("x\n")
    (code / "mobilenet-v1-0.25").symlink_to("mobilenets")
    assert check_submission(root, "v4.1").valid
    (code / "escape").symlink_to(tmp_path / "outside")
    report = check_submission(root, "v4.1")
    assert not report.valid and any(f.rule == "tree" and f.path == str(code / "escape") for f in report.findings)


def test_a_tree_given_through_a_link_is_checked_as_the_user_named_it(pristine: Path, tmp_path: Path) -> None:
    """Links at and above the root are the user's: only what is below it is held to the rule."""
    root, _ = _tree(pristine, tmp_path)
    (tmp_path / "via").symlink_to(root)
    assert check_submission(tmp_path / "via", "v4.1").valid


def test_summarize_names_no_row_of_a_linked_result(pristine: Path, tmp_path: Path) -> None:
    root, outside = _tree(pristine, tmp_path)
    _swap(root / SS / "performance/run_1/mlperf_log_detail.txt",
          lambda p: p.symlink_to(outside / "mlperf_log_detail.txt"))
    rows = {r.scenario: r for r in summarize(root, "v4.1")}
    assert rows["SingleStream"].valid is False and rows["SingleStream"].value is None
    assert rows["Offline"].valid is True


def test_check_submission_cli_exits_1_naming_the_link(pristine: Path, tmp_path: Path, cli) -> None:
    root, outside = _tree(pristine, tmp_path)
    _swap(root / SS / "performance/run_1/mlperf_log_detail.txt",
          lambda p: p.symlink_to(outside / "mlperf_log_detail.txt"))
    r = cli("check", "submission", root, "--round", "v4.1")
    assert r.rc == 1 and "to outside the tree" in r.out and "mlperf_log_detail.txt" in r.out


SPOTS = (
    SS / "performance/run_1/mlperf_log_detail.txt",
    SS / "performance/run_1",
    SS / "accuracy/accuracy.txt",
    SS / "accuracy",
    MEAS / "README.md",
    MEAS / f"{UT_EDGE}.json",
    SUB / "systems" / f"{UT_EDGE}.json",
    SUB / "compliance" / UT_EDGE / "resnet50/singlestream/TEST04/verify_performance.txt",
    SUB / "compliance" / UT_EDGE / "resnet50/singlestream/TEST01",
    SUB / "results" / UT_EDGE,
)
KINDS = ("abs_out", "rel_out", "up", "self", "in_tree", "fifo", "dangling")


def _make(kind: str, p: Path, root: Path, out: Path) -> None:
    target = {
        "abs_out": out / "mlperf_log_detail.txt",
        "rel_out": Path(os.path.relpath(out, p.parent)),
        "up": Path(".."),
        "self": Path(p.name),
        "in_tree": Path(os.path.relpath(root / SUB / "systems", p.parent)),
        "dangling": Path("gone"),
    }.get(kind)
    if target is None:
        os.mkfifo(p)
    else:
        p.symlink_to(target)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], max_examples=25)
@given(st.lists(st.tuples(st.sampled_from(SPOTS), st.sampled_from(KINDS)), min_size=1, max_size=3))
def test_random_hostile_trees_are_invalid_and_nothing_outside_is_opened(
    pristine: Path, tmp_path_factory, monkeypatch, placed
) -> None:
    from proctor.trees import kind

    root, outside = _tree(pristine, tmp_path_factory.mktemp("c"))
    made = []
    for spot, kind_ in placed:
        if kind((root / spot).parent) != "dir":
            continue  # below a link placed before: never made through it
        _swap(root / spot, lambda p, k=kind_: _make(k, p, root, outside))
        made.append(root / spot)
    opened = _Opened(monkeypatch)
    try:
        report = check_submission(root, "v4.1")
    finally:
        monkeypatch.undo()
    assert opened.under(outside) == []
    assert not report.valid
    still = [p for p in made if os.path.lexists(p) and kind(p.parent) == "dir"]  # not replaced by a later one
    flagged = {f.path for f in report.findings if f.failed}
    assert all(str(p) in flagged for p in still), (still, flagged)


def test_an_oversized_conf_or_model_mapping_is_refused_unread(pristine: Path, tmp_path: Path) -> None:
    """A file's size is the other side's: a user.conf, mlperf.conf or model_mapping.json past proctor's
    bound (well-formed, so only the size is wrong) is an ERROR naming that file instead of being read whole."""
    from proctor.checks.submission import MAX_MODEL_MAPPING, _model_mapping
    from proctor.loadgen.conf import MAX_CONF_BYTES

    root, _ = _tree(pristine, tmp_path)
    conf = root / MEAS / "user.conf"
    conf.write_bytes(b"*.SingleStream.target_latency = 10\n" * (MAX_CONF_BYTES // 30))
    report = check_submission(root, "v4.1")
    hits = [f for f in report.findings if f.path == str(conf)]
    assert [f.severity.value for f in hits] == ["error"] and f"larger than {MAX_CONF_BYTES} bytes" in hits[0].message
    assert not report.valid

    conf.write_bytes(b"*.SingleStream.target_latency = 10\n")  # well-formed again: now the mlperf.conf is too big
    mlperf = root / MEAS / "mlperf.conf"
    mlperf.write_bytes(b"*.SingleStream.target_latency = 10\n" * (MAX_CONF_BYTES // 30))
    too_big = [f for f in check_submission(root, "v4.1").findings if f"larger than {MAX_CONF_BYTES} bytes" in f.message]
    assert [(f.path, f.severity.value) for f in too_big] == [(str(mlperf), "error")]  # named, not user.conf

    mapping = tmp_path / "model_mapping.json"
    mapping.write_bytes(b'{"a": "' + b"x" * MAX_MODEL_MAPPING + b'"}')
    findings: list = []
    assert _model_mapping(mapping, findings) == {}
    assert [f.message for f in findings] == [f"larger than {MAX_MODEL_MAPPING} bytes: not a model mapping"]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.one_of(
    st.binary(max_size=64),
    st.sampled_from([b'{"a": NaN}', b'{"a": "\\ud800"}', b"[" * 100_000 + b"]" * 100_000, b"\xef\xbb\xbf{}",
                     b'{"a": "b", "a": "c"}', b'{"x": 1}', b'{"m": "resnet50"}', b"\xff\xfe{\x00}\x00"]),
    st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=4).map(lambda d: json.dumps(d).encode()),
))
def test_a_model_mapping_reads_as_the_official_json_load_reads_it(tmp_path: Path, raw: bytes) -> None:
    """Any bytes: a finding or the mapping, never an exception; a mapping exactly when json.load of the
    file opened as UTF-8 text gives an object of strings (what the official checker reads it with)."""
    from proctor.checks.submission import _model_mapping

    mapping = tmp_path / "model_mapping.json"
    mapping.write_bytes(raw)
    findings: list = []
    got = _model_mapping(mapping, findings)
    try:
        want = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        want = None
    if isinstance(want, dict) and all(isinstance(v, str) for v in want.values()):
        assert got == want and findings == []
    else:
        assert got == {} and len(findings) == 1 and findings[0].rule == "model_mapping"


def test_a_model_mapping_is_read_without_orjson(tmp_path: Path) -> None:
    """Its import cost more than checking a small open-division tree (v4.1 open/CTuning)."""
    import subprocess
    import sys

    mapping = tmp_path / "model_mapping.json"
    mapping.write_text('{"my-resnet": "resnet50"}')
    code = ("import sys; from pathlib import Path; from proctor.checks.submission import _model_mapping\n"
            f"print(_model_mapping(Path({str(mapping)!r}), []), 'orjson' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.stdout.strip() == "{'my-resnet': 'resnet50'} False", res.stderr
