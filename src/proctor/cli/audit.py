"""`proctor audit TEST01|TEST04|TEST06|all`: run the compliance audits and verify them.

The same run options as `proctor run`. Without `--results` the reference runs (performance and,
for TEST01, accuracy) are made first into `OUT/results/<system>/<benchmark>/<scenario>/`; with
`--results DIR` (a folder holding `performance/run_1/` and `accuracy/`) they are taken from there,
and with `--audit-logs DIR` as well nothing is run: the audit logs in DIR are only verified (e.g.
logs from the official LoadGen). The layout and rules: proctor.audits.run, proctor.audits.verify.

Exit status: 0 every audit passed, 1 one failed or stayed inconclusive (or a run failed), 2 bad input,
130 interrupted.
With `--json` stdout holds one document (`proctor.schemas.AUDIT`) and the exit status is the same.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from proctor.audits.layout import Layout
from proctor.cli import output
from proctor.cli.apps import app, examples
from proctor.cli.run import list_suts
from proctor.cli.run_options import RunOptions, run_options
from proctor.errors import ConfigError, LogFormatError, ProctorError, RunError, TreeError

if TYPE_CHECKING:
    from rich.console import Console

    from proctor.audits.configs import Audit
    from proctor.audits.run import AuditOutcome


class Which(StrEnum):
    TEST01 = "TEST01"
    TEST04 = "TEST04"
    TEST06 = "TEST06"
    ALL = "all"


def print_outcomes(out: Console, outcomes: list[AuditOutcome], *, quiet: bool = False) -> None:
    """One line per audit; unless `quiet`, each check's last line and numbers, and the notes. With
    `quiet` an audit that did not pass still says why (its failed run, or its failed checks)."""
    for o in outcomes:
        word = "PASS" if o.passed else "INCONCLUSIVE" if o.inconclusive else "FAIL"
        out.print(f"{o.audit}: {word}  ({o.folder})", markup=False, soft_wrap=True)
        for why in o.failures:  # the reason a failed run fails the audit, even with --quiet
            out.print(f"  FAIL: {why}", markup=False, soft_wrap=True)
        if o.inconclusive:  # inside run-to-run noise: not a finding against the SUT, even with --quiet
            out.print(f"  INCONCLUSIVE: {o.inconclusive}", markup=False, soft_wrap=True)
        if quiet:
            if not o.passed and not o.failures and not o.inconclusive:
                for v in o.verdicts:
                    if not v.passed:
                        out.print(f"  {v.check}: {v.last_line}", markup=False, soft_wrap=True)
            continue
        for v in o.verdicts:
            last = v.last_line  # an inconclusive check: TEST INCONCLUSIVE, not the script's TEST FAIL
            nums = ", ".join(
                f"{k} {val:.6g}" if isinstance(val, float) else f"{k} {val}"
                for k, val in v.numbers.items()
                if not isinstance(val, list)
            )
            out.print(f"  {v.check}: {last}" + (f" ({nums})" if nums else ""), markup=False, soft_wrap=True)
            for note in v.notes:
                out.print(f"    - {note}", markup=False, soft_wrap=True)
        for note in o.notes:
            out.print(f"  note: {note}", markup=False, soft_wrap=True)


def token_ids_for_test06(spec: str, audits: tuple[Audit, ...]) -> str:
    """TEST06 reads each response as token ids (int32, as the MLPerf LLM references log them): the
    openai SUT is asked to log them (`output=ids`) unless the spec says otherwise."""
    from proctor.audits.configs import Audit
    from proctor.suts import registry

    name, _, params = spec.partition(":")
    if Audit.TEST06 not in audits or name != "openai" or any(
        kv.partition("=")[0].strip() == "output" for kv in params.split(",")
    ):
        return spec
    return registry.with_param(spec, "output", "ids")


@app.command(
    "audit",
    epilog=examples(
        "proctor audit all --sut digits --model resnet50 --scenario Offline -o audits",
        "proctor audit TEST01 --sut digits -s Offline --quick -o audits",
        "proctor audit TEST04 -s Offline --results runs/offline --audit-logs audit-logs",
        "proctor audit TEST01 --sut digits -s Offline --quick -o audits --json",
    ),
)
@run_options(output_default=Path("proctor-audit"), output_help="Folder for the trees and logs.")
def audit_cmd(
    opts: RunOptions,
    which: Annotated[
        Which,
        typer.Argument(
            metavar="AUDIT", help="TEST01, TEST04, TEST06, or all (the benchmark's audits)."
        ),
    ],
    system: Annotated[
        str, typer.Option("--system", metavar="NAME", help="System name in the tree (<system>).")
    ] = "proctor",
    benchmark: Annotated[
        str | None, typer.Option(
            "--benchmark", metavar="NAME", help="Benchmark name in the tree (default: --model)."
        )
    ] = None,
    layout: Annotated[
        Layout,
        typer.Option("--layout", help="results (rounds v6.0+: audits next to performance/) or compliance (to v5.1)."),
    ] = Layout.RESULTS,
    results: Annotated[
        Path | None,
        typer.Option(
            "--results",
            metavar="DIR",
            help="Existing reference runs: a folder with performance/run_1/ and accuracy/.",
        ),
    ] = None,
    audit_logs: Annotated[
        Path | None,
        typer.Option(
            "--audit-logs",
            metavar="DIR",
            help="Verify only: the audit run's logs are in this folder (needs --results).",
        ),
    ] = None,
    eos_token_id: Annotated[
        int, typer.Option("--eos-token-id", metavar="ID", help="TEST06: the tokenizer's EOS id.")
    ] = 2,
    dtype: Annotated[
        str, typer.Option("--dtype", metavar="TYPE", help="TEST06: output token type (int32, int64, ...).")
    ] = "int32",
) -> None:
    """Run MLPerf Inference compliance audits (TEST01, TEST04, TEST06) and verify them."""
    from proctor.app.session import session_runner, sut_spec
    from proctor.audits.configs import TEST06_DTYPES, Audit, not_applicable, required_audits
    from proctor.audits.run import Test06Options, Tree, run_audits, verify_audit
    from proctor.loadgen import output_lock
    from proctor.trees import real_root, safe_name

    out = output.console()
    if opts.list_suts_flag:
        list_suts(out)
        raise typer.Exit(output.EXIT_OK)
    request = opts.request()
    if dtype not in TEST06_DTYPES:
        output.fail(f"--dtype must be one of {', '.join(TEST06_DTYPES)}, not {dtype!r}")
    if audit_logs is not None and results is None:
        output.fail("--audit-logs needs --results (the reference runs to compare against)")
    model = opts.model
    audits = required_audits(model) if which == Which.ALL else (Audit(which.value),)
    for audit in audits:  # before anything runs: an audit the benchmark cannot take is bad input
        why = not_applicable(audit, model)
        if why:
            output.fail(why)
    if audit_logs is not None and len(audits) != 1:
        output.fail("--audit-logs verifies one audit: name TEST01, TEST04 or TEST06, not all")
    try:  # each becomes a folder under -o: one safe name each
        safe_name(system, "--system")
        safe_name(benchmark or model, "--benchmark" if benchmark else "--model")
    except TreeError as exc:
        output.fail(str(exc))
    tree = Tree(real_root(opts.output_dir), system, benchmark or model, str(request.scenario), layout, results)
    t06 = Test06Options(dtype, eos_token_id)
    short_run = ""
    # the tree is this audit's until it ends: a second audit or run into it is refused (exit 2)
    with output_lock.owned(opts.output_dir, "proctor audit"):
        try:
            if audit_logs is not None:
                outcomes = [verify_audit(audits[0], tree, audit_logs, test06=t06)]
            else:
                resolved = request.resolve()
                short_run = resolved.short_run
                spec = sut_spec(request.sut, request.dataset)
                if token_ids_for_test06(spec, audits) != spec:
                    spec = token_ids_for_test06(spec, audits)
                    out.print("note: TEST06 reads token ids: the openai SUT logs them (output=ids)", markup=False)
                runner = session_runner(
                    spec,
                    request.engine,
                    short_run=short_run,
                    timeout_s=request.timeout_s,
                    drain_s=request.drain_s,
                    trace=request.trace,
                    benchmark=model,
                )
                outcomes = run_audits(runner, resolved.settings, model, tree, audits, test06=t06)
        except KeyboardInterrupt:
            output.interrupted(f"interrupted: partial logs in {opts.output_dir}")
        except (ConfigError, LogFormatError, TreeError) as exc:
            output.fail(str(exc))
        except RunError as exc:
            output.fail(f"run failed: {exc}", output.EXIT_INVALID)
        except ProctorError as exc:
            output.fail(str(exc), output.EXIT_INVALID)
    code = output.EXIT_OK if all(o.passed for o in outcomes) else output.EXIT_INVALID
    if opts.as_json:  # one document on stdout, nothing else
        from proctor.app.documents import audit_document, dumps

        sys.stdout.write(dumps(audit_document(outcomes, short_run, code)))
        raise typer.Exit(code)
    print_outcomes(out, outcomes, quiet=opts.quiet)
    if short_run:
        out.print(f"note: not submission runs: {short_run}", markup=False, soft_wrap=True)
    raise typer.Exit(code)
