"""The compliance audits, one record each: what proctor runs, what the checker reads.

An audit's record says its settings (the audit.config it runs with), the runs it compares against,
its verification (each verify_<kind>.txt: which log it reads, the function that writes it, the
numbers a re-run must reproduce), the files its folder keeps, which benchmarks it applies to, and
what the submission checker and the truncation do with it. `audits/run.py` (running), `cli/audit.py`
(the AUDIT argument), `checks/compliance.py` and `checks/audit_reverify.py` (checking),
`checks/speculative.py` and `submission/truncate.py` read the record; none names an audit.

Adding an audit: a member of `Audit` and its record in `SPECS` (its verification function in
`verify.py`, its audit.config in `configs.py` when proctor runs it). Which benchmark needs it is the
round's (`rules.inference_rounds`, `InferenceRound.audits`).

This module imports only the standard library at its top, so the command line's AUDIT argument
loads without the benchmark tables; the functions it names import theirs on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from pathlib import Path

from proctor.typed_records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from proctor.audits.configs import AuditConfig
    from proctor.audits.verify import Verdict

DETAIL, SUMMARY, ACCURACY = "mlperf_log_detail.txt", "mlperf_log_summary.txt", "mlperf_log_accuracy.json"
# where a log sits in a results folder and in an audit's folder
PLACES = {ACCURACY: "accuracy", DETAIL: "performance/run_1", SUMMARY: "performance/run_1"}


class Audit(StrEnum):
    """Every audit a round's checker names; `SPECS` holds each one's record."""

    TEST01 = "TEST01"  # accuracy in performance mode
    TEST04 = "TEST04"  # the SUT does not cache repeated samples
    TEST05 = "TEST05"  # the performance run with other seeds (rounds up to v4.1)
    TEST06 = "TEST06"  # LLM output consistency (first token, EOS, token counts)
    TEST07 = "TEST07"  # gpt-oss-120b accuracy in performance mode
    TEST08 = "TEST08"  # dlrm-v3
    TEST09 = "TEST09"  # output length (gpt-oss-120b, e2e-rag)


class Truncation(StrEnum):
    """What the official truncation does with an audit's accuracy log."""

    APPEND = "append"  # the hash line goes under the accuracy script's accuracy.txt
    NEW = "new"  # the hash line is a fresh accuracy.txt (no accuracy script runs on it)


@record(frozen=True, slots=True)
class TokenOptions:
    """How a token-output verification reads responses: the token type and the EOS id."""

    dtype: str = "int32"
    eos_token_id: int = 2


# (the reference run's log, the audit run's log, the scenario, options) -> the verdict
Verifier = Callable[[Path, Path, str, TokenOptions], "Verdict"]


@record(frozen=True, slots=True)
class Comparison:
    """One verification an audit's folder holds as verify_<kind>.txt."""

    kind: str  # "accuracy" / "performance": the verify file's name
    log: str  # the log it reads (ACCURACY, DETAIL, SUMMARY), in the audit run's and the reference's folders
    verify: Verifier
    against_reference: bool = True  # False: the audit run's log alone (TEST06)
    # numbers the verify file prints that a re-run must reproduce: file key -> (the re-run's key,
    # relative tolerance); counts are exact
    compared: Mapping[str, tuple[str, float]] = field(default_factory=dict)


@record(frozen=True, slots=True)
class AuditSpec:
    audit: Audit
    source: str  # the rule and the official files it follows
    # settings: its audit.config for a model (mlperf.conf name); None: proctor does not run it
    config: Callable[[str], AuditConfig] | None = None
    references: tuple[str, ...] = ()  # the submission runs it compares against: "performance", "accuracy"
    comparisons: tuple[Comparison, ...] = ()  # its verification, in the order it writes them
    keeps: tuple[str, ...] = ()  # the audit run's logs its folder keeps
    verify_files: tuple[str, ...] = ()  # the verify_<kind>.txt kinds the checker reads
    needs_llm: bool | None = None  # which benchmarks it applies to: True LLMs only; None any
    faster_only: bool = False  # its performance check fails only a faster run (a cache)
    audit_keys: tuple[str, ...] = ()  # detail-log settings that show the run was the audit
    performance_logs: bool = False  # its folder holds the run's performance/run_1 detail and summary logs
    accuracy_delta: bool = False  # a failed accuracy verify falls back to the accuracy delta (TEST01)
    pass_line_alone: bool = False  # its verify_accuracy.txt passes on a whole "TEST PASS" line only
    accuracy_lines: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # lines that must hold
    round_seeds: bool = False  # its performance run used the round's own seeds for it
    truncation: Truncation | None = None  # what truncation does with its accuracy log
    token_ids: bool = False  # it reads responses as token ids (the openai SUT must log them)
    token_counts: bool = False  # its run logs every sample with its reported token_count

    @property
    def runs(self) -> bool:
        """Whether `proctor audit` runs it (else the checker only reads what it left)."""
        return self.config is not None

    @property
    def score_log(self) -> str | None:
        """The log its performance comparison scores runs by (None: it compares no performance)."""
        return next((c.log for c in self.comparisons if c.kind == "performance"), None)

    def comparison(self, kind: str) -> Comparison | None:
        return next((c for c in self.comparisons if c.kind == kind), None)


# --- the verifications, named here; verify.py holds each one ----------------------------------
def _test01_accuracy(reference: Path, test: Path, scenario: str, opts: TokenOptions) -> Verdict:
    from proctor.audits.verify import verify_test01_accuracy

    return verify_test01_accuracy(reference, test)


def _test01_performance(reference: Path, test: Path, scenario: str, opts: TokenOptions) -> Verdict:
    from proctor.audits.verify import verify_test01_performance

    return verify_test01_performance(reference, test)


def _test04_performance(reference: Path, test: Path, scenario: str, opts: TokenOptions) -> Verdict:
    from proctor.audits.verify import verify_test04_performance

    return verify_test04_performance(reference, test)


def _test06_accuracy(reference: Path, test: Path, scenario: str, opts: TokenOptions) -> Verdict:
    from proctor.audits.verify import verify_test06

    return verify_test06(test, scenario, dtype=opts.dtype, eos_token_id=opts.eos_token_id)


def _test01_config(model: str) -> AuditConfig:
    from proctor.audits.configs import test01_config

    return test01_config(model)


def _test04_config(model: str) -> AuditConfig:
    from proctor.audits.configs import TEST04_CONFIG

    return TEST04_CONFIG


def _test06_config(model: str) -> AuditConfig:
    from proctor.audits.configs import TEST06_CONFIG

    return TEST06_CONFIG


# relative: a score may come from a summary (6 significant digits) where proctor reads the detail log
SCORE_TOLERANCE = 1e-4
_SCORES = {"reference score": ("reference_score", SCORE_TOLERANCE), "test score": ("test_score", SCORE_TOLERANCE)}

SPECS: Mapping[Audit, AuditSpec] = {
    Audit.TEST01: AuditSpec(
        Audit.TEST01,
        source="Inference rules §LoadGen Operation ('The same code must be run for both the accuracy and "
        "performance LoadGen modes. This means the same output should be passed in QuerySampleComplete in "
        "both modes'); official compliance/TEST01 verify_accuracy.py, verify_performance.py",
        config=_test01_config,
        references=("performance", "accuracy"),
        comparisons=(
            # num_perf_log_qsl_idx_match is left out: the official script counts a repeated sample
            # missing from the accuracy run as matched, proctor as missing
            Comparison(
                "accuracy",
                ACCURACY,
                _test01_accuracy,
                compared={
                    "num_perf_log_entries": ("num_perf_log_entries", 0.0),
                    "num_perf_log_data_mismatch": ("num_perf_log_data_mismatch", 0.0),
                },
            ),
            Comparison("performance", DETAIL, _test01_performance, compared=_SCORES),
        ),
        keeps=(ACCURACY, DETAIL, SUMMARY),
        verify_files=("accuracy", "performance"),
        audit_keys=("effective_accuracy_log_sampling_target", "effective_accuracy_log_probability"),
        performance_logs=True,
        accuracy_delta=True,
        pass_line_alone=True,
        truncation=Truncation.APPEND,
    ),
    Audit.TEST04: AuditSpec(
        Audit.TEST04,
        source="Inference rules §LoadGen Operation ('Caching of any other queries ... is prohibited'); "
        "official compliance/TEST04 verify_performance.py",
        config=_test04_config,
        references=("performance",),
        comparisons=(Comparison("performance", SUMMARY, _test04_performance, compared=_SCORES),),
        keeps=(DETAIL, SUMMARY),
        verify_files=("performance",),
        faster_only=True,
        audit_keys=("effective_performance_issue_same",),
        performance_logs=True,
    ),
    Audit.TEST05: AuditSpec(
        Audit.TEST05,
        source="official submission checker (v4.1) TEST05: the performance run with the round's test05 seeds",
        verify_files=("performance",),
        round_seeds=True,
    ),
    Audit.TEST06: AuditSpec(
        Audit.TEST06,
        source="official compliance/TEST06 run_verification.py (LLM output consistency)",
        config=_test06_config,
        comparisons=(Comparison("accuracy", ACCURACY, _test06_accuracy, against_reference=False),),
        keeps=(ACCURACY,),
        verify_files=("accuracy",),
        needs_llm=True,
        accuracy_lines={
            "first token": ("First token check pass: True", "First token check pass: Skipped"),
            "EOS": ("EOS check pass: True",),
            "sample length": ("Sample length check pass: True",),
        },
        token_ids=True,
    ),
    Audit.TEST07: AuditSpec(
        Audit.TEST07,
        source="official compliance/TEST07 (accuracy in performance mode, gpt-oss-120b)",
        verify_files=("accuracy",),
        truncation=Truncation.NEW,
        token_counts=True,
    ),
    Audit.TEST08: AuditSpec(
        Audit.TEST08, source="official compliance/TEST08 (dlrm-v3)", verify_files=("accuracy",)
    ),
    Audit.TEST09: AuditSpec(
        Audit.TEST09,
        source="official compliance/TEST09 (output length)",
        verify_files=("output_len",),
        truncation=Truncation.NEW,
        token_counts=True,
    ),
}
RUNNABLE: tuple[Audit, ...] = tuple(a for a, s in SPECS.items() if s.runs)


def spec_of(name: str) -> AuditSpec | None:
    """The record of an audit by its folder name (TEST01, ...); None for a name no round uses."""
    return SPECS[Audit(name)] if name in Audit.__members__ else None


def audit_config(audit: Audit, model: str) -> AuditConfig:
    """The audit.config `audit` runs with for `model`; ValueError for an audit proctor does not run."""
    config = SPECS[audit].config
    if config is None:
        raise ValueError(f"proctor does not run {audit}; it runs {', '.join(RUNNABLE)}")
    return config(model)


def runnable(name: str) -> Audit:
    """The audit `proctor audit` runs by this name; ValueError naming those it runs for any other."""
    spec = spec_of(name)
    if spec is None or not spec.runs:
        raise ValueError(f"{name!r} is not an audit proctor runs; use one of {', '.join(RUNNABLE)}")
    return spec.audit


# --- which benchmarks an audit applies to --------------------------------------------------------
# proctor's own workload is shaped like resnet (image classification): it takes resnet's audits
# (docs/deviations.md, "Submission side").
PROCTOR_AUDITS: dict[str, tuple[str, ...]] = {"digits": ("TEST01", "TEST04")}


def _key(name: str) -> tuple[str, bool]:
    """(benchmark, interactive) for any spelling; a name the rules table lacks stands for itself."""
    from proctor.rules.inference import resolve

    try:
        v = resolve(name)
    except KeyError:
        return name.removesuffix("-interactive"), name.endswith("-interactive")
    return v.benchmark.name, v.interactive


def is_llm(model: str) -> bool:
    """Whether the rules' table makes `model` an LLM benchmark (token latencies); a model it lacks
    (proctor's own workloads) is not one."""
    from proctor.rules.inference import resolve

    try:
        return resolve(model).benchmark.is_llm
    except KeyError:
        return False


def not_applicable(audit: Audit, model: str) -> str:
    """"" when `audit` applies to `model`, else one line saying why not and which audits do."""
    need = SPECS[audit].needs_llm
    if need is None or need == is_llm(model):
        return ""
    audits = ", ".join(required_audits(model))
    return (
        f"{audit} does not apply to {model}: it checks an LLM's token outputs (first token, EOS, token "
        f"counts) and {model} is not an LLM benchmark; its audits: {audits} (`proctor audit all` runs them)"
    )


def required_audits(model: str, *, llm: bool | None = None) -> tuple[Audit, ...]:
    """The audits `proctor audit all` runs for `model` (an mlperf.conf name or a submission name).

    A benchmark in the current round's lists gets exactly its audits that proctor runs. Any other
    model (proctor's own workloads, or one the round requires none for) gets those that apply to
    its kind of output: the LLM ones if it is an LLM, else the others.
    """
    from proctor.rules.inference_rounds import round_table

    key = _key(model)
    own = PROCTOR_AUDITS.get(key[0])
    if own is None:
        lists = round_table().audits
        own = tuple(t for name, tests in lists.items() if _key(name) == key for t in tests)
    found = tuple(a for a in RUNNABLE if a in own)
    if found:
        return found
    if llm is None:
        llm = is_llm(model)
    return tuple(a for a in RUNNABLE if (SPECS[a].needs_llm is True) == llm)


__all__ = [
    "ACCURACY",
    "DETAIL",
    "PLACES",
    "PROCTOR_AUDITS",
    "RUNNABLE",
    "SPECS",
    "SUMMARY",
    "Audit",
    "AuditSpec",
    "Comparison",
    "TokenOptions",
    "Truncation",
    "Verifier",
    "audit_config",
    "is_llm",
    "not_applicable",
    "required_audits",
    "runnable",
    "spec_of",
]
