"""The one exit-code convention, through the same entry point as the console script."""

from __future__ import annotations

import proctor


def test_version(cli):
    r = cli("--version")
    assert r.rc == 0
    assert r.out.startswith("proctor ")


def test_bad_option_value_is_one_line_exit_2(cli):
    r = cli("run", "--scenario", "Bogus")
    assert r.rc == 2
    assert "--scenario" in r.err
    assert "Traceback" not in r.err
    assert len(r.err.strip().splitlines()) == 1


def test_missing_file_names_it(cli, tmp_path):
    missing = tmp_path / "nope.txt"
    r = cli("training", "check-log", str(missing))
    assert r.rc == 2
    assert "nope.txt" in r.err
    assert "Traceback" not in r.err


def test_a_bug_is_one_line_exit_70(cli, monkeypatch):
    """An exception proctor did not mean to raise is an internal error: exit 70 (EX_SOFTWARE), one line
    that says to rerun with --debug; --debug shows the traceback."""
    from proctor.loadgen import early_stopping

    def broken(*args, **kwargs):
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(early_stopping, "min_queries", broken)
    monkeypatch.setattr(early_stopping, "estimate", broken, raising=False)
    r = cli("early-stopping", "--percentile", "90", "--queries", "10000")
    assert r.rc == 70, r
    assert r.err.strip().splitlines() == [r.err.strip()]
    assert "internal error: ZeroDivisionError: a bug" in r.err and "--debug" in r.err
    assert f"a bug in proctor {proctor.__version__}: please report it" in r.err  # says how to report it
    r = cli("--debug", "early-stopping", "--percentile", "90", "--queries", "10000")
    assert r.rc == 70 and "Traceback" in r.err


# --- one convention across commands: a summary exits 0 when it could summarize, a check 1 when invalid


def _invalid_inference_tree(tmp_path):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "checks"))
    from checks_corpus import build_valid_tree

    root = build_valid_tree(tmp_path)
    for acc in root.rglob("accuracy.txt"):  # every result loses its accuracy: each row invalid
        acc.unlink()
    return root


def test_summaries_exit_0_with_invalid_rows_and_checks_exit_1(cli, tmp_path):
    """`proctor summarize` and `proctor training summarize` exit 0 when they could summarize, invalid
    rows or not (before: training summarize exited 1); the checks of the same trees exit 1."""
    from tests.training.results_pkg import write_package

    tree = _invalid_inference_tree(tmp_path / "inf")
    r = cli("summarize", tree, "--csv", "--round", "v4.1")
    assert r.rc == 0, r.out + r.err
    assert [ln.split(",")[8] for ln in r.out.splitlines()[1:]] == ["False"] * 3  # the valid column
    assert cli("check", "submission", tree, "--round", "v4.1").rc == 1

    fast = [120000] * 10  # converges too fast: fails the RCP check
    pkg = write_package(tmp_path / "pkg", {"sysA": {"llama31_8b": (fast, [60.0 + 1.5 * i for i in range(10)])}})
    r = cli("training", "summarize", pkg, "--csv")
    assert r.rc == 0, r.out + r.err
    assert ",sysA," in r.out
    assert cli("training", "check-package", pkg).rc == 1
    assert cli("training", "check-rcp", pkg / "results" / "sysA" / "llama31_8b").rc == 1


def test_a_summary_with_nothing_to_summarize_is_bad_input(cli, tmp_path):
    (tmp_path / "empty").mkdir()
    for args in (("summarize", tmp_path / "empty"), ("training", "summarize", tmp_path / "empty")):
        r = cli(*args)
        assert r.rc == 2 and len(r.err.strip().splitlines()) == 1, (args, r.err)


def _truncate(cli, root, submitter, backup):
    return cli("submission", "truncate-accuracy", "--input", root, "--submitter", submitter, "--backup", backup)


def test_truncate_with_nothing_to_truncate_is_a_success_that_says_so(cli, tmp_path):
    """A no-op truncation exits 0 and says nothing needed truncating; a --submitter with no folder
    is bad input (exit 2, one line naming it and the submitters there), not a silent 0."""
    acc = tmp_path / "sub" / "closed" / "acme" / "results" / "box" / "resnet" / "Offline" / "accuracy"
    acc.mkdir(parents=True)
    (acc / "mlperf_log_accuracy.json").write_text("[]\n", encoding="utf-8")
    (acc / "accuracy.txt").write_text(
        "accuracy=76.0\nhash=" + "0" * 64 + "\n", encoding="utf-8"
    )
    r = _truncate(cli, tmp_path / "sub", "acme", tmp_path / "bk")
    assert r.rc == 0, r.out + r.err
    assert "nothing needed truncating: acme's 1 accuracy log(s)" in r.out.replace("\n", " ")
    assert not (tmp_path / "bk").exists()

    (tmp_path / "bare" / "closed" / "acme" / "results").mkdir(parents=True)
    r = _truncate(cli, tmp_path / "bare", "acme", tmp_path / "bk")
    assert r.rc == 0 and "no accuracy log under acme's results/" in r.out.replace("\n", " ")

    r = _truncate(cli, tmp_path / "sub", "acmee", tmp_path / "bk")
    assert r.rc == 2 and len(r.err.strip().splitlines()) == 1, r.err
    assert "--submitter acmee" in r.err and "submitters there: acme" in r.err
