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
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from proctor.audits.specs import RUNNABLE, SPECS
from proctor.cli import output
from proctor.cli.apps import app, examples
from proctor.cli.run import list_suts
from proctor.cli.run_options import RunOptions, run_options
from proctor.errors import ConfigError, LogFormatError, ProctorError, RunError, TreeError
from proctor.rules.rounds import Layout

if TYPE_CHECKING:
    from rich.console import Console

    from proctor.audits.run import AuditOutcome


ALL = "all"  # the AUDIT argument for every audit the benchmark needs
AUDITS = ", ".join(RUNNABLE)


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
        str,
        typer.Argument(metavar="AUDIT", help=f"{AUDITS}, or {ALL} (the benchmark's audits)."),
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
    """Run MLPerf Inference compliance audits and verify them."""
    from proctor.app.session import session_runner, sut_spec
    from proctor.audits.configs import TEST06_DTYPES
    from proctor.audits.run import Tree, run_audits, verify_audit
    from proctor.audits.specs import TokenOptions, not_applicable, required_audits, runnable
    from proctor.loadgen import output_lock
    from proctor.loadgen.options import EngineOptions
    from proctor.trees import real_root, safe_name

    out = output.console()
    if opts.list_suts_flag:
        list_suts(out)
        raise typer.Exit(output.EXIT_OK)
    request = opts.request(command="audit")
    if dtype not in TEST06_DTYPES:
        output.fail(f"--dtype must be one of {', '.join(TEST06_DTYPES)}, not {dtype!r}")
    if audit_logs is not None and results is None:
        output.fail("--audit-logs needs --results (the reference runs to compare against)")
    if which != ALL and which not in RUNNABLE:
        output.fail(f"AUDIT {which!r} is not an audit proctor runs; use one of {AUDITS}, or {ALL}")
    model = opts.model
    audits = required_audits(model) if which == ALL else (runnable(which),)
    for audit in audits:  # before anything runs: an audit the benchmark cannot take is bad input
        why = not_applicable(audit, model)
        if why:
            output.fail(why)
    if audit_logs is not None and len(audits) != 1:
        output.fail(f"--audit-logs verifies one audit: name one of {AUDITS}, not {ALL}")
    try:  # each becomes a folder under -o: one safe name each
        safe_name(system, "--system")
        safe_name(benchmark or model, "--benchmark" if benchmark else "--model")
    except TreeError as exc:
        output.fail(str(exc))
    tree = Tree(real_root(opts.output_dir), system, benchmark or model, str(request.scenario), layout, results)
    t06 = TokenOptions(dtype, eos_token_id)
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
                # the SUT is told (RunContext); its parameters may say otherwise
                token_ids = any(SPECS[a].token_ids for a in audits)
                if token_ids:
                    out.print("note: TEST06 reads token ids: the SUT is told so (the openai SUT logs them "
                              "(output=ids) unless its output= is given)", markup=False)
                options = EngineOptions(timeout_s=request.timeout_s, drain_s=request.drain_s, short_run=short_run,
                                        labels=request.option_names)
                runner = session_runner(spec, request.engine, options, trace=request.trace, benchmark=model,
                                        token_ids=token_ids)
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
