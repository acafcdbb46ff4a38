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
