"""`proctor run` and `proctor audit` share one option set (proctor.cli.run_options)."""

from __future__ import annotations

import typer.main

from proctor.cli.apps import app

# audits set their own mode and audit.config; no report; an accuracy run's scorer (issue 23); the
# audits size their Offline reference runs always, as run --fit does (issue 31)
RUN_ONLY = {"--mode", "--audit-conf", "--no-report", "--accuracy-script", "--fit"}


def options(command: str) -> dict[str, tuple[str, ...]]:
    import proctor.cli.audit  # noqa: F401 - registers the commands
    import proctor.cli.run  # noqa: F401

    group = typer.main.get_command(app)
    cmd = group.commands[command]  # type: ignore[attr-defined]
    return {p.opts[0]: tuple(p.opts + p.secondary_opts) for p in cmd.params if p.opts[0].startswith("-")}


def test_every_run_option_but_the_run_only_ones_is_an_audit_option() -> None:
    run, audit = options("run"), options("audit")
    shared = set(run) - RUN_ONLY
    assert {"--quiet", "--engine", "--dataset", "--timeout-s", "--list-suts", "--quick"} <= shared
    assert shared <= set(audit)
    assert all(run[o] == audit[o] for o in shared)  # the same names and short forms (-q, -s, -o)
    assert audit["--quiet"] == ("--quiet", "-q")


def test_audit_takes_quiet_and_prints_one_line_per_audit(cli, tmp_path) -> None:
    r = cli("audit", "TEST04", "-q", "--scenario", "Offline", "--sut", "synthetic:service_us=0,workers=1",
            "--duration-ms", "50", "--min-queries", "1", "--target-qps", "1000", "--no-trace",
            "--output", tmp_path)
    assert r.rc in (0, 1), r.out + r.err
    lines = [line for line in r.out.splitlines() if line.strip()]
    assert lines[0].startswith("TEST04: ")
    # no per-check detail under -q; only why a failed or inconclusive audit is so (a busy host can tip
    # TEST04's timed comparison either way), each on one line
    detail = [line for line in lines[1:-1]]
    if lines[0].startswith("TEST04: PASS"):
        assert detail == []
    else:
        assert detail and all(line.startswith(("  FAIL: ", "  INCONCLUSIVE: ", "  TEST04 ")) for line in detail), lines
    assert lines[-1].startswith("note: not submission runs: ")
