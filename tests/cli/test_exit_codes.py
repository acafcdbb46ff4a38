"""The one exit-code convention, through the same entry point as the console script."""

from __future__ import annotations


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
    r = cli("--debug", "early-stopping", "--percentile", "90", "--queries", "10000")
    assert r.rc == 70 and "Traceback" in r.err
