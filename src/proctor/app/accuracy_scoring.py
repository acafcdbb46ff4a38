"""An accuracy run scores itself: accuracy.txt next to its logs, and the score against the target.

After an AccuracyOnly run, in this order:

1. `--accuracy-script CMD`: the benchmark's own script. CMD is split as a shell would split it
   (`shlex`), never run by a shell; `{log}` becomes the accuracy log's path, `{dir}` the log folder,
   `{dataset}` the `--dataset` file. Its standard output becomes `accuracy.txt` (as the official
   flow redirects it); a non-zero exit or a timeout fails the run and writes no accuracy.txt.
2. proctor's reference workloads: the `digits` QSL is scored by its accuracy script
   (`proctor.workloads.digits.accuracy`).
3. An LLM dataset with reference outputs (`output` in the JSONL): ROUGE-1/2/L, exact match and the
   generation length (`proctor.clients.llm_accuracy`), printed as the reference scripts print them.

Otherwise nothing is scored and the run says how to score it. The accuracy.txt is then read back as
the submission checker reads it (`checks.accuracy.parse_accuracy_text`) and compared with the rules'
targets of the benchmark (`--model`, or `digits` for its own QSL): each quality level (99 % /
99.9 % of the reference, after the rules' five-significant-figure rounding) and the LLM
generation-length bounds (rules/inference*.py, each cited). A run passes when it meets at least one
quality level (and the length bounds); a score below every level is a failed run (exit 1).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from proctor.errors import ConfigError, ProctorError
from proctor.loadgen.scenarios import TestMode
from proctor.typed_records import field, record

if TYPE_CHECKING:
    from proctor.loadgen.engine import RunOutcome

ACCURACY_TXT = "accuracy.txt"
SCRIPT_TIMEOUT_S = 3600.0  # the reference LLM scripts take minutes on 24,576 samples
PLACEHOLDERS = ("{log}", "{dir}", "{dataset}")
MAX_TEXT_BYTES = 1 << 20  # what is read back of accuracy.txt: a script prints a few lines


@record(slots=True)
class Scored:
    """What an accuracy run adds to its verdict: lines, whether it passed, where accuracy.txt is."""

    lines: list[str] = field(default_factory=list)
    ok: bool = True
    paths: list[tuple[str, str]] = field(default_factory=list)


def script_argv(cmd: str, *, log: Path, folder: Path, dataset: Path | None) -> list[str]:
    """CMD split with shlex and its placeholders filled; ConfigError for an empty or unsplittable
    CMD, a program that cannot be found, or `{dataset}` without `--dataset`."""
    try:
        argv = shlex.split(cmd)
    except ValueError as exc:
        raise ConfigError(
            f"{cmd!r}: cannot be split into arguments ({exc})", key="--accuracy-script"
        ) from None
    if not argv:
        raise ConfigError(
            "empty command; give the accuracy script and its arguments", key="--accuracy-script"
        )
    if any("{dataset}" in a for a in argv) and dataset is None:
        raise ConfigError("uses {dataset} but no --dataset FILE was given", key="--accuracy-script")
    if shutil.which(argv[0]) is None:
        raise ConfigError(
            f"{argv[0]!r}: no such program (not a file, not on PATH); give the script's interpreter "
            "first, e.g. 'python evaluate.py --mlperf-accuracy-file {log}'",
            key="--accuracy-script",
        )
    subs = {"{log}": str(log), "{dir}": str(folder), "{dataset}": str(dataset) if dataset else ""}
    out = []
    for arg in argv:
        for key, value in subs.items():
            arg = arg.replace(key, value)
        out.append(arg)
    return out


def check_script(cmd: str | None, mode: TestMode, dataset: Path | None) -> None:
    """Refuse a bad `--accuracy-script` before anything runs (ConfigError naming the option)."""
    if cmd is None:
        return
    if mode != TestMode.ACCURACY_ONLY:
        raise ConfigError(
            f"applies to accuracy runs; add --mode AccuracyOnly (this run is {mode})", key="--accuracy-script"
        )
    script_argv(cmd, log=Path("mlperf_log_accuracy.json"), folder=Path("."), dataset=dataset)


def run_script(
    argv: Sequence[str], folder: Path, timeout_s: float = SCRIPT_TIMEOUT_S
) -> tuple[Path | None, str]:
    """Run the script with its stdout going to accuracy.txt: (path, "") or (None, why it failed)."""
    target = folder / ACCURACY_TXT
    partial = folder / (ACCURACY_TXT + ".partial")
    with open(partial, "wb") as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.run(  # noqa: S603 (an argument list, never a shell)
                list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=err, timeout=timeout_s, check=False
            )
        except subprocess.TimeoutExpired:
            partial.unlink(missing_ok=True)
            return None, f"did not finish within {timeout_s:g} s"
        except OSError as exc:
            partial.unlink(missing_ok=True)
            return None, f"could not start: {exc.strerror or exc}"
        err.seek(0)
        tail = err.read()[-4096:].decode("utf-8", "replace").strip().splitlines()
    if proc.returncode != 0:
        partial.unlink(missing_ok=True)
        last = f" (last line on stderr: {tail[-1][:300]})" if tail else ""
        return None, f"exited with status {proc.returncode}{last}"
    partial.replace(target)
    return target, ""


def _builtin_text(qsl: Any, log: Path) -> tuple[str, str, Scope | None] | None:
    """(accuracy.txt text, the benchmark it is scored for, what was scored where it may not be the
    official dataset) from proctor's own scorers, or None."""
    from proctor.clients.llm_dataset import LLMDataset
    from proctor.workloads.digits.qsl import DigitsQSL

    if isinstance(qsl, DigitsQSL):
        from proctor.workloads.digits import MODEL_NAME
        from proctor.workloads.digits.accuracy import evaluate

        return evaluate(log).line() + "\n", MODEL_NAME, None
    if isinstance(qsl, LLMDataset) and any(s.output is not None for s in qsl.samples):
        from proctor.clients import llm_accuracy

        scores = llm_accuracy.score_log(log, qsl.samples)
        if scores["scored"] == 0:
            return None
        scope = Scope(int(scores["scored"]), float(scores["ref_gen_len"]))
        return llm_accuracy.accuracy_text(scores), "", scope
    return None


def _read_text(path: Path) -> str:
    with open(path, "rb") as f:
        return f.read(MAX_TEXT_BYTES).decode("utf-8", "replace")


@record(frozen=True, slots=True)
class Scope:
    """What proctor's scorer scored: the samples with a reference output, and those references' total
    length (gen_len's measure). On a dataset that is not the official one, the rules' gen_len bound
    (a fraction of the reference implementation's total over the official dataset) applies to these
    references instead: the same fraction, of the outputs the dataset says are right."""

    samples: int
    reference_gen_len: float


def target_lines(model: str, text: str, scope: Scope | None = None) -> tuple[bool, list[str]]:
    """The scores of `text` against `model`'s targets: (passed, one line per level and bound)."""
    from proctor.checks.accuracy import (
        check_level,
        format_significant,
        parse_accuracy_text,
    )
    from proctor.rules.inference import DC_TABLE, resolve

    reported = parse_accuracy_text(text)
    if not reported:
        return False, [f"FAILED: {ACCURACY_TXT} holds no 'key: number' score the checker can read"]
    try:
        variant = resolve(model)
    except KeyError:
        return True, [
            f"note: {model!r} is not a benchmark of the rules; no target to compare with (--model NAME)"
        ]
    bench = variant.benchmark
    explicit = variant.name.rstrip().endswith(("-99", "-99.9"))
    levels = [variant.level] if explicit and variant.level is not None else list(bench.quality)
    lines: list[str] = []
    official = {n for n in (bench.accuracy_dataset_size, *bench.accuracy_dataset_by_suite.values()) if n}
    own_gen_len: tuple[float, str] | None = None  # (gen_len's reference, its name) on another dataset
    if scope is not None and official and scope.samples not in official:
        if scope.reference_gen_len > 0 and any(gb.metric == "gen_len" for gb in bench.generation):
            own_gen_len = (scope.reference_gen_len, f"this dataset's {scope.samples} references'")
        lines.append(
            f"note: {scope.samples} sample(s) scored, not {bench.display}'s official dataset "
            f"({' or '.join(f'{n:,}' for n in sorted(official))}): its targets are the official dataset's"
            + (", but gen_len is bounded by this dataset's own references" if own_gen_len else "")
        )
    passed_levels = []
    for level in levels:
        findings, results = check_level(bench, level, reported, ACCURACY_TXT)
        missing = sorted({str(f.key) for f in findings if f.rule == "accuracy_metric_missing"})
        if missing:
            note = (
                f"note: the scores name no {', '.join(missing)}, the metric(s) of {bench.display}'s targets; "
                "no target compared (--model names the benchmark)"
            )
            lines += [] if note in lines else [note]
            continue
        parts = []
        for r in results:
            value = "-" if r.rounded is None else format_significant(r.rounded)
            parts.append(
                f"{r.metric} {value} {'meets' if r.passed else 'MISSES'} {r.bound} {r.threshold:.6g}"
            )
        ok = not any(f.failed for f in findings)
        passed_levels.append(ok)
        lines.append(f"{bench.display} {level.suffix}% of {level.precision}: " + "; ".join(parts))
    gen_ok = True
    for gb in bench.generation:  # the rules' output-length bounds (rules/inference*.py, cited there)
        length = reported.get(gb.metric.lower())
        if length is None:
            lines.append(f"note: no {gb.metric} in {ACCURACY_TXT}; the rules bound it ({DC_TABLE})")
            continue
        reference, of_what = gb.reference, "the reference dataset's"
        if own_gen_len is not None and gb.metric == "gen_len":
            reference, of_what = own_gen_len
        low, high = gb.low * reference, None if gb.high is None else gb.high * reference
        inside = length > low and (high is None or length < high)
        gen_ok = gen_ok and inside
        bound = f"> {low:.6g}" if high is None else f"in ({low:.6g}, {high:.6g})"
        lines.append(
            f"{bench.display} generation length: {gb.metric} {length:g} {'within' if inside else 'OUTSIDE'} "
            f"{bound}: {gb.low:.0%}{'' if gb.high is None else f'-{gb.high:.0%}'} of {of_what} "
            f"{reference:g} ({DC_TABLE})"
        )
    if not passed_levels:
        return True, lines
    ok = any(passed_levels) and gen_ok
    if not ok:
        lines.append(
            f"INVALID: the accuracy misses every quality target of {bench.display}"
            if not any(passed_levels)
            else f"INVALID: the generation length is outside the bounds of {bench.display}"
        )
    return ok, lines


def score_run(
    qsl: Any,
    log: Path,
    *,
    model: str,
    script: str | None = None,
    dataset: Path | None = None,
    timeout_s: float = SCRIPT_TIMEOUT_S,
) -> Scored:
    """Score one finished accuracy run whose accuracy log is `log`; accuracy.txt goes beside it."""
    folder = log.parent
    scored = Scored()
    scope: Scope | None = None  # an accuracy script scores the dataset it knows
    if script:
        argv = script_argv(script, log=log, folder=folder, dataset=dataset)
        path, why = run_script(argv, folder, timeout_s)
        if path is None:
            scored.ok = False
            scored.lines.append(f"FAILED: --accuracy-script {why}; no {ACCURACY_TXT} written")
            return scored
        text = _read_text(path)
        source = "the accuracy script"
    else:
        try:
            got = _builtin_text(qsl, log)
        except (ProctorError, OSError, ValueError) as exc:
            scored.ok = False
            scored.lines.append(f"FAILED: scoring {log}: {exc}")
            return scored
        if got is None:
            scored.lines.append(
                f"note: not scored (proctor has no scorer for this SUT's samples): give --accuracy-script "
                f"'CMD ... {{log}}' to run the benchmark's accuracy script; its output becomes {ACCURACY_TXT}"
            )
            return scored
        text, bench, scope = got
        model = bench or model
        path = folder / ACCURACY_TXT
        path.write_text(text)
        source = "proctor's scorer"
    shown = " ".join(line.strip() for line in text.strip().splitlines() if line.strip())
    scored.lines.append(f"accuracy ({source}): {shown[:500]}")
    scored.paths.append(("accuracy", str(path)))
    ok, lines = target_lines(model, text, scope)
    scored.ok = ok
    scored.lines += lines
    return scored


def score_accuracy_run(
    ok: bool, lines: list[str], outcome: RunOutcome, qsl: Any, model: str, script: str | None, dataset: Path | None
) -> tuple[bool, list[tuple[str, str]]]:
    """The session's hook: a finished accuracy run is scored (its lines appended to `lines`);
    (ok after scoring, [("accuracy", accuracy.txt)] or []). Other runs pass through."""
    if not ok or outcome.mode != TestMode.ACCURACY_ONLY:
        return ok, []
    scored = score_run(qsl, outcome.log_paths["accuracy"], model=model, script=script, dataset=dataset)
    lines += scored.lines
    return scored.ok, scored.paths


__all__ = [
    "ACCURACY_TXT",
    "SCRIPT_TIMEOUT_S",
    "Scope",
    "Scored",
    "check_script",
    "run_script",
    "score_accuracy_run",
    "score_run",
    "script_argv",
    "target_lines",
]
