"""Training commands on bad input: one clear verdict or error line, the exit-code convention, no hang.

Exit status: 0 valid, 1 checked and invalid, 2 bad input or usage (README, "Exit status").
"""

from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path

import orjson
import pytest

from proctor.errors import ConfigError
from proctor.rules.training_rcps import load_rcp_file
from proctor.training import compliance
from proctor.training.compliance import check_file
from proctor.training.package import check_package
from proctor.training.runs import read_run_set
from proctor.training.scoring import score_run_set
from proctor.training.seeds import check_seeds
from tests.support import synthetic_logs as sl

from .results_pkg import write_package, write_run_set

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "training"
PASS_FAST = [175104 + 512 * i for i in range(10)]
MINUTES = [60.0 + 1.5 * i for i in range(10)]


def _valid_log(tmp_path: Path, name: str = "result_0.txt") -> Path:
    return sl.write_log(tmp_path / name, sl.valid_events("llama31_8b"))


def _insert(path: Path, line: str, before_key: str = "run_stop") -> Path:
    """Insert one raw line before the first line whose key is `before_key`."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    i = next(i for i, t in enumerate(lines) if f'"key": "{before_key}"' in t)
    lines.insert(i, line + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def _raw(key: str, value_json: str, md: str = '{"file": "train.py", "lineno": 5}') -> str:
    return (
        f':::MLLOG {{"namespace": "", "time_ms": 1700000000500.0, "event_type": "POINT_IN_TIME", '
        f'"key": "{key}", "value": {value_json}, "metadata": {md}}}'
    )


# -- check-log verdicts ------------------------------------------------------------------------------


@pytest.mark.parametrize("content", [b"", b"\x00\xff\xfe binary \x89PNG\r\n\x1a\n" * 50, b"plain output\n"])
def test_no_records_is_one_finding(tmp_path: Path, content: bytes, cli) -> None:
    p = tmp_path / "result_0.txt"
    p.write_bytes(content)
    rep = check_file(p)
    assert not rep.valid
    assert [f.rule for f in rep.findings] == ["no_lines"]
    assert rep.findings[0].message == f"no :::MLLOG records in {p}"
    r = cli("training", "check-log", p)
    assert r.rc == 1 and "no :::MLLOG records" in r.out
    assert "must appear exactly once" not in r.out and "None" not in r.out and "Traceback" not in r.err


def test_only_unreadable_records_lists_them_and_no_rule_errors(tmp_path: Path) -> None:
    p = tmp_path / "result_0.txt"
    p.write_bytes(b":::MLLOG {not json\n:::MLLOG [1, 2]\n")
    rep = check_file(p)
    assert [f.rule for f in rep.findings] == ["parse", "parse", "no_lines"]


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_log_from_another_round_gets_a_hint(cli) -> None:
    log = next(CORPUS.glob("v4.0/*/*/llama2_70b_lora/result_*.txt"))
    r = cli("training", "check-log", log)
    assert r.rc == 1
    assert "hint" in r.out and "--ruleset 4" in r.out and "another round" not in r.err
    assert cli("training", "check-log", log, "--ruleset", "4.0.0").rc == 0
    explicit = cli("training", "check-log", log, "--ruleset", "6.1.0")
    assert explicit.rc == 1 and "hint" not in explicit.out  # the user chose the round


def test_nan_and_infinity_values_do_not_invalidate(tmp_path: Path) -> None:
    p = _valid_log(tmp_path)
    _insert(p, _raw("train_loss", "NaN"))
    _insert(p, _raw("grad_norm", "Infinity"))
    _insert(p, _raw("eval_accuracy", "NaN", '{"file": "t.py", "lineno": 5, "samples_count": 1}'), "eval_stop")
    rep = check_file(p)
    assert not [f for f in rep.findings if f.rule == "parse"]
    # the NaN evaluation does not reach the target but others do; only cadence rules may object
    assert all(f.key == "eval_accuracy" for f in rep.findings if f.failed) or rep.valid
    q = _insert(_valid_log(tmp_path, "result_1.txt"), _raw("train_loss", "-Infinity"))
    assert check_file(q).valid


@pytest.mark.parametrize("bad", ["null", '"0.5"', "[3.0]", '{"v": 3.0}'])
def test_non_number_eval_accuracy_is_an_error_even_when_target_met(tmp_path: Path, bad: str) -> None:
    p = _valid_log(tmp_path)
    lines = p.read_text(encoding="utf-8").splitlines(keepends=True)
    i = next(i for i, t in enumerate(lines) if '"key": "eval_accuracy"' in t)
    obj = orjson.loads(lines[i].split(":::MLLOG ", 1)[1])
    obj["value"] = orjson.loads(bad)
    lines[i] = ":::MLLOG " + orjson.dumps(obj).decode() + "\n"
    p.write_text("".join(lines), encoding="utf-8")
    rep = check_file(p)
    assert not rep.valid
    (f,) = [f for f in rep.findings if f.rule == "target:eval_accuracy"]
    assert f.line == i + 1 and "must be a number" in f.message


def test_deep_value_is_a_finding_and_json_output_works(tmp_path: Path, cli) -> None:
    p = _insert(_valid_log(tmp_path), _raw("global_batch_size", "[" * 1000 + "1" + "]" * 1000))
    rep = check_file(p)
    assert any(f.rule == "parse" and "nested" in f.message for f in rep.findings)
    r = cli("training", "check-log", p, "--json")
    assert r.rc == 1 and "Traceback" not in r.err
    assert orjson.loads(r.out)["valid"] is False


def test_json_output_holds_nan_and_huge_ints(tmp_path: Path, cli) -> None:
    p = _valid_log(tmp_path)
    p.write_text(
        p.read_text()
        .replace('"value": 0.1,', '"value": NaN,', 1)
        .replace('"value": 1000,', '"value": ' + "9" * 30 + ",", 1)
    )
    r = cli("training", "check-log", p, "--json")
    assert r.rc in (0, 1) and "Traceback" not in r.err
    orjson.loads(r.out)


def test_streaming_past_the_cache_gives_the_same_findings(tmp_path: Path, monkeypatch) -> None:
    good = _valid_log(tmp_path)
    bad = sl.write_log(
        tmp_path / "result_1.txt",
        sl.duplicated(sl.with_value(sl.valid_events("llama31_8b"), "opt_name", "sgd"), "opt_name", "lamb"),
    )
    before = [(check_file(p).valid, [f.message for f in check_file(p).findings]) for p in (good, bad)]
    monkeypatch.setattr(compliance, "CACHE_LIMIT", 3)
    after = [(check_file(p).valid, [f.message for f in check_file(p).findings]) for p in (good, bad)]
    assert before == after and before[0][0] and not before[1][0]


def test_errors_per_key_are_capped(tmp_path: Path) -> None:
    p = _valid_log(tmp_path)
    for _ in range(50):
        _insert(p, _raw("opt_name", '"sgd"'))
    rep = check_file(p)
    per_key = [f for f in rep.findings if f.key == "opt_name" and f.failed]
    assert len(per_key) <= compliance.MAX_KEY_FINDINGS + 2
    assert any("more errors" in f.message for f in per_key) or len(per_key) < compliance.MAX_KEY_FINDINGS


def test_fifo_log_is_refused_without_blocking(tmp_path: Path, cli) -> None:
    fifo = tmp_path / "result_0.txt"
    os.mkfifo(fifo)
    r = _bounded(lambda: cli("training", "check-log", fifo))
    assert r.rc == 2 and "not a regular file" in r.err
    assert [f.rule for f in check_file(fifo).findings] == ["file"]


# -- RCP files and scaling.json ----------------------------------------------------------------------


def test_custom_rcp_with_a_list_benchmark_names_file_and_key(tmp_path: Path, cli) -> None:
    rcp = tmp_path / "rcps.json"
    rcp.write_text(
        json.dumps({"rec_a": {"Benchmark": ["llama31_8b"], "BS": 32, "Epochs to converge": [1, 2, 3]}})
    )
    with pytest.raises(ConfigError) as ei:
        load_rcp_file(rcp)
    assert "rcps.json" in str(ei.value) and "rec_a" in str(ei.value) and "Benchmark" in str(ei.value)
    folder = write_run_set(tmp_path / "llama31_8b", PASS_FAST, MINUTES)
    r = cli("training", "check-rcp", folder, "--custom-rcps", rcp)
    assert r.rc == 2 and "rcps.json" in r.err and "rec_a" in r.err and "Traceback" not in r.err


@pytest.mark.parametrize(
    "bad",
    [
        b'{"scaling_factor": 0.5}',
        b'{"scaling_factor": 1e308}',
        b'{"scaling_factor": NaN}',
        b"not json",
        b'{"scaling_factor": "2"}',
        b"[1.1]",
        b'{"scaling_factor": true}',
    ],
)
def test_bad_scaling_json_fails_every_checker(tmp_path: Path, bad: bytes, cli) -> None:
    pkg = write_package(tmp_path / "pkg", {"sysA": {"llama31_8b": (PASS_FAST, MINUTES)}})
    bdir = pkg / "results" / "sysA" / "llama31_8b"
    assert cli("training", "check-rcp", bdir).rc == 0
    (bdir / "scaling.json").write_bytes(bad)
    r = cli("training", "check-rcp", bdir)
    assert r.rc == 1 and "scaling.json" in r.out
    assert cli("training", "check-package", pkg).rc == 1
    assert not score_run_set(read_run_set(bdir)).valid
    assert cli("training", "score", bdir).rc == 1


def test_good_scaling_json_still_scales(tmp_path: Path) -> None:
    bdir = write_run_set(tmp_path / "llama31_8b", PASS_FAST, MINUTES)
    (bdir / "scaling.json").write_text('{"scaling_factor": 1.25}')
    sc = score_run_set(read_run_set(bdir))
    assert (
        sc.valid and sc.scaling_factor == 1.25 and math.isclose(sc.score_minutes, sc.unscaled_minutes * 1.25)
    )


# -- hostile trees: FIFOs, unreadable files, symlink loops -------------------------------------------


def _bounded(fn, seconds: float = 120.0):
    """Run fn in a thread; a hang fails the test instead of blocking the suite."""
    box: list = []
    t = threading.Thread(target=lambda: box.append(fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert box, "hung (a FIFO was opened?)"
    return box[0]


def test_fifos_in_a_package_never_block(tmp_path: Path) -> None:
    pkg = write_package(tmp_path / "pkg", {"sysA": {"llama31_8b": (PASS_FAST, MINUTES)}})
    os.mkfifo(pkg / "systems" / "sysB.json")
    os.mkfifo(pkg / "results" / "sysA" / "llama31_8b" / "scaling.json")
    os.mkfifo(pkg / "results" / "sysA" / "llama31_8b" / "result_10.txt")
    os.mkfifo(pkg / "results" / "sysA" / "package_checker_params")
    rep = _bounded(lambda: check_package(pkg))
    named = {f.path for f in rep.findings if f.failed}
    assert str(pkg / "systems" / "sysB.json") in named
    assert str(pkg / "results" / "sysA" / "llama31_8b" / "scaling.json") in named
    assert str(pkg / "results" / "sysA" / "llama31_8b" / "result_10.txt") in named


def test_symlink_loops_are_not_followed(tmp_path: Path, cli) -> None:
    pkg = write_package(tmp_path / "pkg", {"sysA": {"llama31_8b": (PASS_FAST, MINUTES)}})
    (pkg / "results" / "sysA" / "loop").symlink_to(pkg / "results" / "sysA" / "loop")
    (pkg / "results" / "sysA" / "up").symlink_to(pkg / "results")
    (pkg / "systems" / "self.json").symlink_to(pkg / "systems" / "self.json")
    rep = _bounded(lambda: check_package(pkg))
    assert any(f.path == str(pkg / "systems" / "self.json") for f in rep.findings)
    for cmd in ("check-package", "check-rcp", "score", "summarize"):
        r = _bounded(lambda c=cmd: cli("training", c, pkg))
        assert r.rc in (0, 1) and "Traceback" not in r.err, (cmd, r.err)


def _deny(monkeypatch, victim: Path) -> None:
    """Simulate chmod 000 (tests run as root): opening or listing `victim` raises PermissionError."""
    real_open, real_scandir, real_read = open, os.scandir, Path.read_bytes
    victim_s = str(victim)

    def check(p) -> None:
        if str(p) == victim_s or str(p).startswith(victim_s + os.sep):
            raise PermissionError(13, "Permission denied", str(p))

    def fake_open(file, *a, **k):
        check(file)
        return real_open(file, *a, **k)

    def fake_scandir(path=".", *a, **k):
        check(path)
        return real_scandir(path, *a, **k)

    def fake_read(self):
        check(self)
        return real_read(self)

    import builtins
    import io

    monkeypatch.setattr(builtins, "open", fake_open)
    monkeypatch.setattr(io, "open", fake_open)
    monkeypatch.setattr(os, "scandir", fake_scandir)
    monkeypatch.setattr(Path, "read_bytes", fake_read)


def test_unreadable_files_are_findings(tmp_path: Path, monkeypatch, cli) -> None:
    pkg = write_package(tmp_path / "pkg", {"sysA": {"llama31_8b": (PASS_FAST, MINUTES)}})
    bdir = pkg / "results" / "sysA" / "llama31_8b"
    victim = bdir / "result_3.txt"
    sysjson = pkg / "systems" / "sysA.json"
    _deny(monkeypatch, victim)
    rep = check_package(pkg)
    assert not rep.valid and any(str(victim) in (f.path or "") + f.message for f in rep.findings if f.failed)
    seeds = check_seeds(bdir)
    assert any(f.rule == "seeds:unreadable" and f.path == str(victim) for f in seeds)
    log = check_file(victim)
    assert [f.rule for f in log.findings] == ["file"] and "Permission denied" in log.findings[0].message
    run = read_run_set(bdir).runs[3]
    assert any(f.rule == "log_read" for f in run.findings)
    for cmd in ("check-rcp", "score", "check-seeds"):
        r = cli("training", cmd, bdir)
        assert r.rc in (1, 2) and "Traceback" not in r.err, (cmd, r.err)
    r = cli("training", "summarize", pkg)  # a summary it could make exits 0; the finding names the file
    assert r.rc == 0 and "Traceback" not in r.err and "Permission denied" in r.out, r.out + r.err
    monkeypatch.undo()
    _deny(monkeypatch, sysjson)
    rep = check_package(pkg)
    assert any(f.path == str(sysjson) and "cannot be read" in f.message for f in rep.findings)


def test_unreadable_folder_is_a_finding(tmp_path: Path, monkeypatch) -> None:
    pkg = write_package(tmp_path / "pkg", {"sysA": {"llama31_8b": (PASS_FAST, MINUTES)}})
    victim = pkg / "results" / "sysA"
    _deny(monkeypatch, victim)
    rep = check_package(pkg)
    assert any(f.rule == "unreadable" and f.path == str(victim) for f in rep.findings)


# -- exit codes: the same input problem, the same status in every command ----------------------------

COMMANDS = ("check-seeds", "check-rcp", "score", "check-package", "summarize")


@pytest.mark.parametrize("cmd", COMMANDS)
def test_bad_input_table(tmp_path: Path, cmd: str, cli) -> None:
    pkg = write_package(tmp_path / "pkg", {"sysA": {"llama31_8b": (PASS_FAST, MINUTES)}})
    empty = tmp_path / "empty"
    empty.mkdir()
    a_file = pkg / "systems" / "sysA.json"
    cases = [
        (tmp_path / "missing", ("does not exist",)),
        (a_file, ("is a file",)),
        (empty, (str(empty),)),
    ]
    for path, words in cases:
        r = cli("training", cmd, path)
        assert r.rc == 2, (cmd, path, r.rc, r.out, r.err)
        assert "Traceback" not in r.err
        for w in words:
            assert w in r.err, (cmd, path, r.err)


@pytest.mark.parametrize(
    ("cmd", "level", "words"),
    [
        ("check-seeds", "results/sysA", ("benchmark folder",)),
        ("check-package", "results/sysA", ("systems/", "results/")),
        ("summarize", "results/sysA/llama31_8b", ("submission folder",)),
    ],
)
def test_wrong_level_is_exit_2(tmp_path: Path, cmd: str, level: str, words: tuple[str, ...], cli) -> None:
    pkg = write_package(tmp_path / "pkg", {"sysA": {"llama31_8b": (PASS_FAST, MINUTES)}})
    r = cli("training", cmd, pkg / level)
    assert r.rc == 2 and "Traceback" not in r.err
    assert str(pkg / level) in r.err
    for w in words:
        assert w in r.err


def test_bad_option_values_are_exit_2(tmp_path: Path, cli) -> None:
    bdir = write_run_set(tmp_path / "llama31_8b", PASS_FAST, MINUTES)
    assert cli("training", "check-log", bdir / "result_0.txt", "--ruleset", "9.9.9").rc == 2
    for ref in ("llama31_8b=nan", "llama31_8b=-1", "llama31_8b", "=3"):
        r = cli("training", "score", bdir, "--reference", ref)
        assert r.rc == 2 and "--reference" in r.err, ref
    r = cli("training", "check-package", tmp_path, "--extra-benchmark", "x=0")
    assert r.rc == 2 and "--extra-benchmark" in r.err


def test_valid_and_invalid_exit_codes(tmp_path: Path, cli) -> None:
    pkg = write_package(tmp_path / "pkg", {"sysA": {"llama31_8b": (PASS_FAST, MINUTES)}})
    bdir = pkg / "results" / "sysA" / "llama31_8b"
    for cmd, path in (
        ("check-seeds", bdir),
        ("check-rcp", bdir),
        ("score", bdir),
        ("check-package", pkg),
        ("summarize", pkg),
    ):
        assert cli("training", cmd, path).rc == 0, cmd
    (bdir / "result_2.txt").write_text((bdir / "result_1.txt").read_text())  # a repeated seed
    assert cli("training", "check-seeds", bdir).rc == 1


# -- summarize output --------------------------------------------------------------------------------


def test_summarize_csv_flag_and_output_file(tmp_path: Path, cli) -> None:
    pkg = write_package(tmp_path / "pkg", {"sysA": {"llama31_8b": (PASS_FAST, MINUTES)}})
    r = cli("training", "summarize", pkg, "--csv")
    assert r.rc == 0
    head, row = r.out.splitlines()[:2]
    assert head.startswith("division,availability,submitter,system") and ",sysA," in row
    out = tmp_path / "sum.csv"
    r = cli("training", "summarize", pkg, "-o", out)
    assert r.rc == 0 and "sysA" in r.out
    assert {p.name for p in tmp_path.iterdir()} >= {
        "sum.csv",
        "sum_detailed.csv",
        "sum.json",
        "sum_detailed.json",
    }
    assert cli("training", "summarize", pkg, "-o", tmp_path).rc == 2  # a folder is not a file


def test_tables_never_cut_numbers(tmp_path: Path, cli) -> None:
    bdir = write_run_set(
        tmp_path / "a_rather_long_folder_name_for_a_benchmark" / "llama31_8b", PASS_FAST, MINUTES
    )
    r = cli("training", "score", bdir)
    assert r.rc == 0 and "…" not in r.out
    sc = score_run_set(read_run_set(bdir))
    assert f"{sc.score_minutes:.10g}" in r.out
