"""`proctor submission truncate-accuracy` against the official truncate_accuracy_log.py.

The differential tests run the official script (subprocess) on a copy of the same tree and compare
every file byte for byte. They need the mlcommons/inference repository: set PROCTOR_INFERENCE_REPO
to a checkout (the folder holding tools/submission/truncate_accuracy_log.py); without it they skip.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proctor.submission_files import (
    MAX_ACCURACY_LOG_SIZE,
    TRUNCATION_MARK,
    VIEWABLE_SIZE,
    hash_lines,
    is_truncated,
    sha256_hex,
    truncate_bytes,
)

SCRIPT = "tools/submission/truncate_accuracy_log.py"


def official_repo() -> Path | None:
    repo = os.environ.get("PROCTOR_INFERENCE_REPO")
    return Path(repo) if repo and (Path(repo) / SCRIPT).is_file() else None


def _log(n_entries: int) -> bytes:
    rows = [f'{{ "seq_id" : {i}, "qsl_idx" : {i % 97}, "data" : "{i:016X}" }}' for i in range(n_entries)]
    return ("[\n" + ",\n".join(rows) + "\n]\n").encode()


def build_tree(root: Path, sizes: dict[str, int]) -> Path:
    """closed/acme/results/box/resnet/<scenario>/{accuracy,performance/run_1,TEST01,TEST04}."""
    res = root / "closed" / "acme" / "results" / "box" / "resnet"
    for scenario, n in sizes.items():
        acc = res / scenario / "accuracy"
        acc.mkdir(parents=True)
        (acc / "mlperf_log_accuracy.json").write_bytes(_log(n))
        (acc / "accuracy.txt").write_text("accuracy=76.500%, good=765, total=1000\n")
        (res / scenario / "performance" / "run_1").mkdir(parents=True)
        t1 = res / scenario / "TEST01" / "accuracy"
        t1.mkdir(parents=True)
        (t1 / "mlperf_log_accuracy.json").write_bytes(_log(n // 2))
        (t1 / "accuracy.txt").write_text("accuracy=76.500%\n")
        (res / scenario / "TEST04").mkdir()
    return root


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


SIZES = {"Offline": 2000, "Server": 60, "SingleStream": 150}  # large, under 4 KB, between 4 and 10 KB


def test_truncate_output_mode(tmp_path: Path, cli) -> None:
    src = build_tree(tmp_path / "in", SIZES)
    full = (src / "closed/acme/results/box/resnet/Offline/accuracy/mlperf_log_accuracy.json").read_bytes()
    r = cli(
        "submission",
        "truncate-accuracy",
        "--input",
        str(src),
        "--submitter",
        "acme",
        "--output",
        str(tmp_path / "out"),
    )
    assert r.rc == 0, r.out + r.err
    out = tmp_path / "out" / "closed/acme/results/box/resnet/Offline/accuracy"
    log = (out / "mlperf_log_accuracy.json").read_bytes()
    assert is_truncated(log) and len(log) < MAX_ACCURACY_LOG_SIZE
    assert log == full[:VIEWABLE_SIZE] + TRUNCATION_MARK + full[-VIEWABLE_SIZE:]
    assert hash_lines((out / "accuracy.txt").read_text()) == [hashlib.sha256(full).hexdigest()]
    assert _files(src)["closed/acme/results/box/resnet/Offline/accuracy/mlperf_log_accuracy.json"] == full
    # a second pass changes nothing: the hash is there and the log is small
    before = _files(tmp_path / "out")
    r = cli(
        "submission",
        "truncate-accuracy",
        "--input",
        str(tmp_path / "out"),
        "--submitter",
        "acme",
        "--backup",
        str(tmp_path / "bk"),
    )
    assert r.rc == 0 and _files(tmp_path / "out") == before


def test_truncate_backup_mode(tmp_path: Path, cli) -> None:
    src = build_tree(tmp_path / "in", {"Offline": 2000})
    orig = _files(src)
    r = cli(
        "submission",
        "truncate-accuracy",
        "--input",
        str(src),
        "--submitter",
        "acme",
        "--backup",
        str(tmp_path / "bk"),
    )
    assert r.rc == 0, r.out + r.err
    saved = tmp_path / "bk" / "closed/acme/results/box/resnet/Offline/accuracy/mlperf_log_accuracy.json"
    assert (
        saved.read_bytes() == orig["closed/acme/results/box/resnet/Offline/accuracy/mlperf_log_accuracy.json"]
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--submitter", "acme"), "--output"),
        (("--submitter", "acme", "--output", "{tmp}/o"), "not a folder"),
    ],
)
def test_truncate_bad_input(tmp_path: Path, cli, args: tuple[str, ...], words: str) -> None:
    r = cli(
        "submission",
        "truncate-accuracy",
        "--input",
        str(tmp_path / "nope"),
        *(a.format(tmp=tmp_path) for a in args),
    )
    assert r.rc == 2 and words in r.err and "Traceback" not in r.err


def test_truncate_existing_output(tmp_path: Path, cli) -> None:
    src = build_tree(tmp_path / "in", {"Offline": 10})
    (tmp_path / "o").mkdir()
    r = cli(
        "submission",
        "truncate-accuracy",
        "--input",
        str(src),
        "--submitter",
        "acme",
        "--output",
        str(tmp_path / "o"),
    )
    assert r.rc == 2 and "already exists" in r.err


def test_missing_accuracy_txt_is_an_error(tmp_path: Path, cli) -> None:
    src = build_tree(tmp_path / "in", {"Offline": 2000})
    (src / "closed/acme/results/box/resnet/Offline/accuracy/accuracy.txt").unlink()
    r = cli(
        "submission",
        "truncate-accuracy",
        "--input",
        str(src),
        "--submitter",
        "acme",
        "--output",
        str(tmp_path / "o"),
    )
    assert r.rc == 1 and "accuracy.txt" in r.out


@pytest.mark.official
@pytest.mark.parametrize("mode", ["output", "backup"])
def test_truncate_matches_official(tmp_path: Path, cli, mode: str) -> None:
    repo = official_repo()
    if repo is None:
        pytest.skip("set PROCTOR_INFERENCE_REPO to a mlcommons/inference checkout")
    ours = build_tree(tmp_path / "ours", SIZES)
    theirs = tmp_path / "theirs"
    shutil.copytree(ours, theirs)
    extra = ["--output", "OUT"] if mode == "output" else ["--backup", "BK"]
    r = cli(
        "submission",
        "truncate-accuracy",
        "--input",
        str(ours),
        "--submitter",
        "acme",
        *[str(tmp_path / ("ours_" + a)) if a in ("OUT", "BK") else a for a in extra],
    )
    assert r.rc == 0, r.out
    subprocess.run(
        [
            sys.executable,
            str(repo / SCRIPT),
            "--input",
            str(theirs),
            "--submitter",
            "acme",
            *[str(tmp_path / ("theirs_" + a)) if a in ("OUT", "BK") else a for a in extra],
        ],
        check=True,
        capture_output=True,
        timeout=60,
    )
    for name in ("ours", "theirs"):
        assert (tmp_path / f"{name}_{extra[1]}").is_dir()
    assert _files(tmp_path / f"ours_{extra[1]}") == _files(tmp_path / f"theirs_{extra[1]}")
    assert _files(ours) == _files(theirs)


@pytest.mark.fuzz
@given(st.binary(max_size=3 * VIEWABLE_SIZE))
def test_truncate_bytes_shape(data: bytes) -> None:
    out = truncate_bytes(data)
    if len(data) < VIEWABLE_SIZE:
        assert out == data
    else:
        assert (
            is_truncated(out) and out.startswith(data[:VIEWABLE_SIZE]) and out.endswith(data[-VIEWABLE_SIZE:])
        )
    assert len(out) < MAX_ACCURACY_LOG_SIZE


@pytest.mark.fuzz
@given(st.text() | st.binary().map(lambda b: b.decode("utf-8", "replace")))
def test_hash_lines_never_raise(text: str) -> None:
    for value in hash_lines(text):
        assert value and "\n" not in value
    assert hash_lines(text + "\nhash=" + "a" * 64 + "\n")[-1] == "a" * 64


@pytest.mark.parametrize("size", [0, 1, 63, 64, 65, MAX_ACCURACY_LOG_SIZE, (1 << 20), (1 << 20) + 1])
def test_sha256_hex_is_sha256(size: int) -> None:
    """The checker's hash of an accuracy log (CPython's own sha256 up to 1 MiB, hashlib's above)
    is the sha256 the packager writes with hashlib."""
    data = os.urandom(size)
    assert sha256_hex(data) == hashlib.sha256(data).hexdigest()


def test_checking_a_log_hash_does_not_load_openssl() -> None:
    """hashlib's first use loads OpenSSL (3-4 ms of a small tree's check) to hash at most 10 KiB."""
    code = (
        "import sys\n"
        "from proctor.submission_files import sha256_hex\n"
        "print(sha256_hex(b'abc'), 'hashlib' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [hashlib.sha256(b"abc").hexdigest(), "False"]
