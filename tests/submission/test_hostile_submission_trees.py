"""Hostile trees for `proctor submission truncate-accuracy`, `package` and `init` (issue 30 §1): a tree
reviewers are handed is untrusted. Nothing proctor writes lands outside its output folder, nothing it
reads comes from outside the tree it was given, copies are bounded, and every refusal is one line
naming the path, exit 2.

Each test builds its hostile tree and an `outside/` folder beside it in tmp_path; `_Outside` hashes
everything in `outside/` before and after, so a write (or truncation, or append) through a link shows.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.errors import TreeError, TruncateError
from proctor.submission.truncate import copy_submission, truncate_tree
from proctor.trees import (
    MAX_DEPTH,
    SAFE_NAME,
    copy_tree,
    kind,
    read_bytes,
    replace,
    safe_name,
    scan,
    write_new,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checks"))

SECRET = b"the reviewer's own log\n" * 1500  # ~34 KB, as in the issue
RES = Path("closed/acme/results/box/resnet")


class _Outside:
    """A folder beside the tree that nothing may touch: its files' hashes and names, before/after."""

    def __init__(self, base: Path) -> None:
        self.root = base / "outside"
        (self.root / "accdir").mkdir(parents=True)
        (self.root / "secret.log").write_bytes(SECRET)
        (self.root / "notes.txt").write_text("accuracy=1.0\n")
        (self.root / "accdir" / "mlperf_log_accuracy.json").write_bytes(SECRET)
        (self.root / "accdir" / "accuracy.txt").write_text("accuracy=2.0\n")
        self.before = self.state()

    def state(self) -> dict[str, str]:
        out = {}
        for dirpath, dirnames, files in os.walk(self.root):
            for name in sorted(dirnames + files):
                p = Path(dirpath) / name
                out[str(p.relative_to(self.root))] = (
                    hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_symlink() else "dir"
                )
        return out

    def unchanged(self) -> bool:
        return self.state() == self.before


def _log(n: int) -> bytes:
    return ("[\n" + ",\n".join(f'{{ "seq_id" : {i}, "qsl_idx" : {i}, "data" : "{i:08X}" }}' for i in range(n)) + "\n]\n").encode()


def build_tree(base: Path) -> Path:
    """closed/acme/{code,results/box/resnet/{Offline,Server}/{accuracy,TEST01/accuracy}}: logs to truncate."""
    root = base / "sub"
    for scen in ("Offline", "Server"):
        acc = root / RES / scen / "accuracy"
        acc.mkdir(parents=True)
        (acc / "mlperf_log_accuracy.json").write_bytes(_log(600))
        (acc / "accuracy.txt").write_text("accuracy=76.5%\n")
        t1 = root / RES / scen / "TEST01" / "accuracy"
        t1.mkdir(parents=True)
        (t1 / "mlperf_log_accuracy.json").write_bytes(_log(300))
        (t1 / "accuracy.txt").write_text("accuracy=76.4%\n")
    (root / "closed/acme/code/shared").mkdir(parents=True)
    (root / "closed/acme/code/shared/model.py").write_text("print(1)\n")
    return root


def _fifo(p: Path) -> None:
    os.mkfifo(p)


def _socket(p: Path) -> None:
    s, cwd = socket.socket(socket.AF_UNIX), os.getcwd()
    try:
        os.chdir(p.parent)  # a relative name: a socket's path is limited to ~107 bytes
        s.bind(p.name)
    except OSError:
        pytest.skip("cannot bind a unix socket here")
    finally:
        os.chdir(cwd)
        s.close()


def _device(p: Path) -> None:
    try:
        os.mknod(p, stat.S_IFCHR | 0o600, os.makedev(1, 3))  # a /dev/null twin
    except OSError:
        pytest.skip("cannot make a device node here")


def _replace_with(p: Path, make: Callable[[Path], None]) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p)
    elif os.path.lexists(p):
        p.unlink()
    p.parent.mkdir(parents=True, exist_ok=True)
    make(p)


OFF = RES / "Offline"
# (id, relative path in the tree, how to make it (given the outside folder), words the error names)
HOSTILE: list[tuple[str, Path, Callable[[Path, Path], None]]] = [
    ("abs link: accuracy log", OFF / "accuracy/mlperf_log_accuracy.json",
     lambda p, out: p.symlink_to(out / "secret.log")),
    ("abs link: accuracy.txt", OFF / "accuracy/accuracy.txt", lambda p, out: p.symlink_to(out / "notes.txt")),
    ("relative link escaping: accuracy.txt", OFF / "accuracy/accuracy.txt",
     lambda p, out: p.symlink_to(Path("../" * 9) / out.relative_to(out.anchor) / "notes.txt")),
    ("folder link out: accuracy/", OFF / "accuracy", lambda p, out: p.symlink_to(out / "accdir")),
    ("folder link out: results/box", Path("closed/acme/results/box"), lambda p, out: p.symlink_to(out)),
    ("two '..' links in TEST01", OFF / "TEST01/a",
     lambda p, out: (p.symlink_to(".."), (p.parent / "b").symlink_to(".."))),
    ("self loop", OFF / "loop", lambda p, out: p.symlink_to(p.name)),
    ("mutual loop", OFF / "a", lambda p, out: (p.symlink_to("b"), (p.parent / "b").symlink_to("a"))),
    ("dangling link", OFF / "accuracy/accuracy.txt", lambda p, out: p.symlink_to("nowhere.txt")),
    ("in-tree link in results", OFF / "accuracy/accuracy.txt",
     lambda p, out: p.symlink_to("../../Server/accuracy/accuracy.txt")),
    ("in-tree folder link in results", OFF / "TEST01", lambda p, out: p.symlink_to("../Server/TEST01")),
    ("FIFO as the accuracy log", OFF / "accuracy/mlperf_log_accuracy.json", lambda p, out: _fifo(p)),
    ("FIFO in code/", Path("closed/acme/code/pipe"), lambda p, out: _fifo(p)),
    ("socket in results", OFF / "sock", lambda p, out: _socket(p)),
    ("device as accuracy.txt", OFF / "accuracy/accuracy.txt", lambda p, out: _device(p)),
    ("link out of code/", Path("closed/acme/code/escape"), lambda p, out: p.symlink_to(out)),
    ("code/ link to a folder above it", Path("closed/acme/code/up"), lambda p, out: p.symlink_to("..")),
    ("code/ link to a folder holding a link", Path("closed/acme/code/v1"),
     lambda p, out: ((p.parent / "shared" / "again").symlink_to("../v1"), p.symlink_to("shared"))),
]


def _hostile(tmp_path: Path, case: int) -> tuple[Path, _Outside, Path]:
    outside = _Outside(tmp_path)
    root = build_tree(tmp_path)
    _, rel, make = HOSTILE[case]
    _replace_with(root / rel, lambda p: make(p, outside.root))
    return root, outside, rel


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("case", range(len(HOSTILE)), ids=[h[0] for h in HOSTILE])
@pytest.mark.parametrize("mode", ["--output", "--backup"])
def test_truncate_refuses_a_hostile_tree_and_writes_nothing(tmp_path: Path, cli, case: int, mode: str) -> None:
    root, outside, rel = _hostile(tmp_path, case)
    before = {p: p.read_bytes() for p in root.rglob("*") if kind(p) == "file"}
    target = tmp_path / ("out" if mode == "--output" else "bk")
    r = cli("submission", "truncate-accuracy", "--input", root, "--submitter", "acme", mode, target)
    assert r.rc == 2, (r.out, r.err)
    line = _one_line(r.err)
    assert str(rel.parent) in " ".join(line.split()) or rel.name in line, line
    assert not os.path.lexists(target)  # refused before anything was written
    assert {p: p.read_bytes() for p in before} == before  # in place: nothing was truncated either
    assert outside.unchanged()


def test_the_issues_link_case_leaves_the_outside_log_whole(tmp_path: Path, cli) -> None:
    """A copy that kept the link would have cut the 34 KB log outside to 8 KB and appended to it."""
    root, outside, _ = _hostile(tmp_path, 0)
    r = cli("submission", "truncate-accuracy", "--input", root, "--submitter", "acme", "-o", tmp_path / "out")
    assert r.rc == 2 and "to outside the tree" in r.err
    assert (outside.root / "secret.log").read_bytes() == SECRET and outside.unchanged()


def test_two_dotdot_links_are_refused_at_once_not_copied_2_to_the_40(tmp_path: Path, cli) -> None:
    root, outside, _ = _hostile(tmp_path, 5)
    r = cli("submission", "truncate-accuracy", "--input", root, "--submitter", "acme", "-o", tmp_path / "out")
    assert r.rc == 2 and "TEST01/a" in r.err and "(1 more problem(s)" in r.err
    assert not (tmp_path / "out").exists()


def test_links_inside_code_are_kept_as_links_and_never_followed(tmp_path: Path, cli) -> None:
    """Published submissions link model variants to one folder under code/: that copy works."""
    outside = _Outside(tmp_path)
    root = build_tree(tmp_path)
    code = root / "closed/acme/code"
    (code / "variant-a").symlink_to("shared")
    (code / "variant-b").symlink_to(code / "shared" / "model.py")  # absolute, inside the tree
    r = cli("submission", "truncate-accuracy", "--input", root, "--submitter", "acme", "-o", tmp_path / "out")
    assert r.rc == 0, r.out + r.err
    out_code = tmp_path / "out/closed/acme/code"
    assert os.readlink(out_code / "variant-a") == "shared"
    assert os.readlink(out_code / "variant-b") == "shared/model.py"  # re-pointed into the copy
    assert (out_code / "variant-b").resolve() == (out_code / "shared/model.py").resolve()
    assert outside.unchanged()


def test_hard_links_to_outside_are_not_written_through(tmp_path: Path, cli) -> None:
    """In place (--backup), the log and accuracy.txt are replaced by new files, so a hard link's other
    name (here outside the tree) keeps its bytes."""
    outside = _Outside(tmp_path)
    root = build_tree(tmp_path)
    acc = root / OFF / "accuracy"
    (acc / "mlperf_log_accuracy.json").unlink()
    os.link(outside.root / "secret.log", acc / "mlperf_log_accuracy.json")
    (acc / "accuracy.txt").unlink()
    os.link(outside.root / "notes.txt", acc / "accuracy.txt")
    r = cli("submission", "truncate-accuracy", "--input", root, "--submitter", "acme", "--backup", tmp_path / "bk")
    assert r.rc == 0, r.out + r.err
    assert len((acc / "mlperf_log_accuracy.json").read_bytes()) < len(SECRET)
    assert b"hash=" in (acc / "accuracy.txt").read_bytes()
    assert outside.unchanged()
    assert (tmp_path / "bk" / OFF / "accuracy/mlperf_log_accuracy.json").read_bytes() == SECRET


def test_truncate_output_inside_the_input_is_refused(tmp_path: Path, cli) -> None:
    root = build_tree(tmp_path)
    out = root / "closed/acme/results/copy"
    r = cli("submission", "truncate-accuracy", "--input", root, "--submitter", "acme", "-o", out)
    assert r.rc == 2 and "inside --input" in _one_line(r.err) and not out.exists()


BAD_NAMES = ["../../escape", "", ".", "..", "a/b", "a\\b", "-x", "x" * 129, "a\nb", "a b", "é", "a\x7fb", "/abs"]


@pytest.mark.parametrize("name", BAD_NAMES, ids=repr)
def test_truncate_submitter_is_one_safe_name(tmp_path: Path, cli, name: str) -> None:
    outside = _Outside(tmp_path)
    root = build_tree(tmp_path)
    r = cli("submission", "truncate-accuracy", "--input", root, "--submitter", name, "-o", tmp_path / "out")
    assert r.rc == 2 and "--submitter" in _one_line(r.err)
    assert not (tmp_path / "out").exists() and outside.unchanged()


@pytest.mark.parametrize("name", [*BAD_NAMES, "a\x00b", "\x1b[31m", "..\\..", "a" * 1000], ids=repr)
def test_safe_name_refuses_every_unsafe_component(name: str) -> None:
    with pytest.raises(TreeError, match="--x"):
        safe_name(name, "--x")


@given(st.text(max_size=140))
def test_safe_name_accepts_only_one_plain_component(name: str) -> None:
    try:
        got = safe_name(name, "--x")
    except TreeError:
        assert not SAFE_NAME.fullmatch(name)
        return
    assert got == name and os.sep not in name and "\\" not in name and name not in ("", ".", "..")
    assert name.isprintable() and len(name) <= 128 and not name.startswith(("-", "."))


# --- package -------------------------------------------------------------------------------------
@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    from test_package import _runs  # the runs folder the package tests use (real corpus logs)

    return _runs(tmp_path)


def _package(cli, runs: Path, out: Path, *extra: str, submitter: str = "UntetherAI", system: Path | None = None):
    args = ["submission", "package", runs, "-o", out, "--submitter", submitter, "--no-check", "--round", "v6.1"]
    return cli(*args, *(["--system", system] if system else []), *extra)


PKG_HOSTILE: list[tuple[str, str, Callable[[Path, Path], None]]] = [
    ("abs link: accuracy log", "resnet50/singlestream/accuracy/mlperf_log_accuracy.json",
     lambda p, out: p.symlink_to(out / "secret.log")),
    ("abs link: detail log", "resnet50/singlestream/performance/run_1/mlperf_log_detail.txt",
     lambda p, out: p.symlink_to(out / "secret.log")),
    ("folder link out: accuracy/", "resnet50/singlestream/accuracy", lambda p, out: p.symlink_to(out / "accdir")),
    ("two '..' links in TEST01", "resnet50/singlestream/TEST01/a",
     lambda p, out: (p.symlink_to(".."), (p.parent / "b").symlink_to(".."))),
    ("link: README.md", "README.md", lambda p, out: p.symlink_to(out / "notes.txt")),
    ("link: measurements.json", "resnet50/singlestream/measurements.json", lambda p, out: p.symlink_to(out / "notes.txt")),
    ("FIFO: user.conf", "resnet50/singlestream/user.conf", lambda p, out: _fifo(p)),
    ("FIFO in TEST04", "resnet50/singlestream/TEST04/pipe", lambda p, out: _fifo(p)),
    ("device as the detail log", "resnet50/singlestream/performance/run_1/mlperf_log_detail.txt",
     lambda p, out: _device(p)),
    ("dangling link: accuracy.txt", "resnet50/singlestream/accuracy/accuracy.txt", lambda p, out: p.symlink_to("x")),
    ("benchmark folder name with a space", "resnet 50/singlestream/accuracy",
     lambda p, out: shutil.copytree(p.parents[2] / "resnet50/singlestream/accuracy", p)),
    ("scenario folder name starting with '-'", "resnet50/-x/accuracy",
     lambda p, out: shutil.copytree(p.parents[1] / "singlestream/accuracy", p)),
]


@pytest.mark.parametrize("case", range(len(PKG_HOSTILE)), ids=[h[0] for h in PKG_HOSTILE])
def test_package_refuses_a_hostile_runs_folder(tmp_path: Path, cli, runs, case: int) -> None:
    folder, system = runs
    outside = _Outside(tmp_path)
    _, rel, make = PKG_HOSTILE[case]
    _replace_with(folder / rel, lambda p: make(p, outside.root))
    r = _package(cli, folder, tmp_path / "out", system=system)
    assert r.rc == 2, (r.out, r.err)
    line = _one_line(r.err)
    assert Path(rel).parts[-1] in line or Path(rel).parts[0] in line or "TEST0" in line, line
    assert not os.path.lexists(tmp_path / "out")  # nothing half-made stays
    assert outside.unchanged()


@pytest.mark.parametrize("name", BAD_NAMES, ids=repr)
def test_package_submitter_is_one_safe_name(tmp_path: Path, cli, runs, name: str) -> None:
    folder, system = runs
    r = _package(cli, folder, tmp_path / "out", submitter=name, system=system)
    assert r.rc == 2 and "--submitter" in _one_line(r.err)
    assert not os.path.lexists(tmp_path / "out") and not (tmp_path / "escape").exists()


SYSTEM_STEMS = ["...json", "..json", ".hidden.json", "a b.json", "-x.json", "tab\t.json", "x" * 130 + ".json"]


@pytest.mark.parametrize("file_name", SYSTEM_STEMS, ids=repr)
def test_package_system_file_stem_is_one_safe_name(tmp_path: Path, cli, runs, file_name: str) -> None:
    """A system file whose stem is '..' made systems/...json and results/../ (outside -o)."""
    folder, system = runs
    bad = tmp_path / "sys" / file_name
    bad.parent.mkdir()
    shutil.copy(system, bad)
    r = _package(cli, folder, tmp_path / "out", system=bad)
    assert r.rc == 2 and "--system" in _one_line(r.err)
    assert not os.path.lexists(tmp_path / "out")


@pytest.mark.parametrize("value", ["..", "../up", "", "a/b", ".", "-x", None, 3])
def test_package_system_name_from_system_json_is_one_safe_name(tmp_path: Path, cli, runs, value) -> None:
    import orjson

    folder, system = runs
    desc = orjson.loads(system.read_bytes())
    (folder / "system.json").write_bytes(orjson.dumps({**desc, "system_name": value}))
    r = _package(cli, folder, tmp_path / "out")
    assert r.rc == 2 and "system_name" in _one_line(r.err)
    assert not os.path.lexists(tmp_path / "out")


def test_package_output_may_not_pre_exist_as_a_link(tmp_path: Path, cli, runs) -> None:
    folder, system = runs
    outside = _Outside(tmp_path)
    (tmp_path / "out").symlink_to(outside.root / "accdir")
    r = _package(cli, folder, tmp_path / "out", system=system)
    assert r.rc == 2 and "already exists" in _one_line(r.err)
    (tmp_path / "dangling").symlink_to(outside.root / "new")
    r = _package(cli, folder, tmp_path / "dangling", system=system)
    assert r.rc == 2 and not (outside.root / "new").exists()
    assert outside.unchanged()


def test_package_of_a_clean_runs_folder_still_works(tmp_path: Path, cli, runs) -> None:
    folder, system = runs
    r = _package(cli, folder, tmp_path / "out", system=system)
    assert r.rc == 0, r.out + r.err
    assert not any(p.is_symlink() for p in (tmp_path / "out").rglob("*"))
    assert (tmp_path / "out/closed/UntetherAI/systems" / system.name).is_file()


# --- init ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["system.json", "measurements.json"])
def test_init_writes_nothing_through_a_link(tmp_path: Path, cli, name: str) -> None:
    outside = _Outside(tmp_path)
    folder = tmp_path / "runs"
    folder.mkdir()
    (folder / name).symlink_to(outside.root / "created-by-proctor.json")  # dangling: exists() said no
    r = cli("submission", "init", folder, "--submitter", "acme")
    assert r.rc == 2 and name in _one_line(r.err)
    assert not (outside.root / "created-by-proctor.json").exists() and outside.unchanged()


@pytest.mark.parametrize("option", ["--submitter", "--system-name"])
@pytest.mark.parametrize("name", ["../../escape", "", ".."], ids=repr)
def test_init_names_are_one_safe_name(tmp_path: Path, cli, option: str, name: str) -> None:
    args = {"--submitter": "acme", "--system-name": "box", option: name}
    r = cli("submission", "init", tmp_path / "runs", *[x for kv in args.items() for x in kv])
    assert r.rc == 2 and option in _one_line(r.err)
    assert not (tmp_path / "runs").exists()


# --- the primitives ------------------------------------------------------------------------------
def test_writes_never_go_through_a_link(tmp_path: Path) -> None:
    outside = _Outside(tmp_path)
    d = tmp_path / "tree"
    d.mkdir()
    (d / "f").symlink_to(outside.root / "secret.log")
    (d / "sub").symlink_to(outside.root)
    with pytest.raises(TreeError, match="symbolic link"):
        replace(d / "f", b"x")
    with pytest.raises(TreeError, match="already exists|symbolic link"):
        write_new(d / "f", b"x")
    with pytest.raises(TreeError, match="symbolic link"):
        write_new(d / "sub" / "new.txt", b"x")
    with pytest.raises(TreeError, match="symbolic link"):
        read_bytes(d / "sub" / "notes.txt")
    assert outside.unchanged() and not (outside.root / "new.txt").exists()


def test_a_fifo_is_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p")
    with pytest.raises(TreeError, match="FIFO"):
        read_bytes(tmp_path / "p")  # would block forever if opened for reading without O_NONBLOCK


def test_walks_and_copies_are_bounded(tmp_path: Path, monkeypatch) -> None:
    import proctor.trees as trees

    deep = tmp_path / "deep"
    p = deep
    for i in range(MAX_DEPTH + 2):
        p = p / f"d{i}"
    p.mkdir(parents=True)
    assert "deeper than" in scan(deep).stopped
    wide = tmp_path / "wide"
    wide.mkdir()
    for i in range(30):
        (wide / f"f{i}").write_text("x")
    monkeypatch.setattr(trees, "MAX_ENTRIES", 10)
    assert "more than 10" in scan(wide, budget=trees.Budget(entries=10)).stopped
    with pytest.raises(TreeError, match="more than"):
        copy_tree(wide, tmp_path / "copy", budget=trees.Budget(entries=10))
    big = tmp_path / "big"
    big.mkdir()
    (big / "f").write_bytes(b"x" * 5000)
    with pytest.raises(TreeError, match="bytes"):
        copy_tree(big, tmp_path / "copy2", budget=trees.Budget(bytes=4096))


# --- hypothesis: random hostile trees --------------------------------------------------------------
KINDS = ("abs_out", "rel_out", "up", "self", "dangling", "in_tree", "fifo")
SPOTS = (
    OFF / "accuracy/mlperf_log_accuracy.json",
    OFF / "accuracy/accuracy.txt",
    OFF / "accuracy",
    OFF / "TEST01",
    OFF / "TEST01/accuracy/mlperf_log_accuracy.json",
    OFF / "x",
    RES / "Server/accuracy/extra",
    Path("closed/acme/results/box"),
    Path("closed/acme/results"),
    Path("closed/acme/code/x"),
    Path("closed/acme/systems"),
)


def _make(kind_: str, p: Path, root: Path, out: Path) -> None:
    if kind_ == "abs_out":
        p.symlink_to(out / "secret.log")
    elif kind_ == "rel_out":
        p.symlink_to(os.path.relpath(out, p.parent))
    elif kind_ == "up":
        p.symlink_to("..")
    elif kind_ == "self":
        p.symlink_to(p.name)
    elif kind_ == "dangling":
        p.symlink_to("missing")
    elif kind_ == "in_tree":
        p.symlink_to(os.path.relpath(root / RES / "Server/accuracy/accuracy.txt", p.parent))
    else:
        os.mkfifo(p)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(SPOTS), st.sampled_from(KINDS)), min_size=1, max_size=4))
def test_random_hostile_trees_are_refused_and_touch_nothing_outside(tmp_path_factory, placed) -> None:
    base = tmp_path_factory.mktemp("h")
    outside = _Outside(base)
    root = build_tree(base)
    for spot, kind_ in placed:
        if kind(root / spot).startswith("error") or kind((root / spot).parent) != "dir":
            continue  # below a link placed before: never made through it
        _replace_with(root / spot, lambda p, k=kind_: _make(k, p, root, outside.root))
    code = root / "closed/acme/code"

    def kept(p: Path) -> bool:  # a link under code/ to a file in the tree: copied as a link
        try:
            target = Path(os.path.realpath(p, strict=True))
        except (OSError, RuntimeError):
            return False
        return p.parent == code and p.is_symlink() and target.is_file() and target.is_relative_to(root.resolve())

    hostile = [p for p in root.rglob("*") if (p.is_symlink() or stat.S_ISFIFO(p.lstat().st_mode)) and not kept(p)]
    before = {p: p.read_bytes() for p in root.rglob("*") if kind(p) == "file"}
    try:
        copy_submission(root, base / "out", "acme")
        copied = True
    except (TreeError, TruncateError):
        copied = False
    assert copied == (not hostile), hostile  # every placed entry is one proctor refuses
    if copied:
        truncate_tree(base / "out", "acme")
    else:
        assert not os.path.lexists(base / "out")
        with pytest.raises(TreeError):
            truncate_tree(root, "acme", base / "bk")
    assert {p: p.read_bytes() for p in before} == before
    assert outside.unchanged()


@pytest.mark.parametrize(("option", "name"), [("--system", "../../x"), ("--system", ""), ("--benchmark", ".."),
                                              ("--benchmark", "a/b"), ("--system", "-rf")])
def test_audit_names_that_become_folders_are_one_safe_name(tmp_path: Path, cli, option: str, name: str) -> None:
    r = cli("audit", "TEST04", "--scenario", "Offline", option, name, "-o", tmp_path / "aud")
    assert r.rc == 2 and option in _one_line(r.err)
    assert sorted(os.listdir(tmp_path)) == []  # nothing made, inside -o or beside it
