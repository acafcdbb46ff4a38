"""What an LLM client's requests ask for: the benchmark's generation parameters, or the user's.

The rules fix `max_new_tokens` (and `min_new_tokens`) per benchmark and mode and name the decoding
(rules.llm_generation). `plan` turns the run's benchmark and mode (suts.context.RunContext) and the
user's `k=v` parameters into the numbers every request carries, and says when they are not the
benchmark's (`Generation.override`): a run may ask for something else, but it is then marked in the
logs and the verdict as "not the benchmark's parameters".

`min_tokens` is a vLLM/SGLang request field: `min_tokens=auto` sends it when every endpoint's model
list names one of them (`preflight.server_owner`), `on` always, `off` never.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from proctor.rules.inference import PARAMS_TABLE
from proctor.rules.llm_generation import ACCURACY, PERFORMANCE, GenerationParams, generation_params
from proctor.suts.context import ACCURACY_ONLY, SUBMISSION_RUN, RunContext
from proctor.typed_records import record

DEFAULT_MAX_TOKENS = 128  # where no benchmark names one (a model outside the rules' table)
MIN_TOKENS_CHOICES = ("auto", "on", "off")


@record(frozen=True, slots=True)
class Generation:
    """The parameters every request carries, and how they relate to the benchmark's."""

    max_tokens: int
    min_tokens: int = 0  # 0: not sent
    temperature: float = 0.0
    top_p: float | None = None
    override: str = ""  # "" when these are the benchmark's; else what differs (logged and in the verdict)
    line: str = ""  # the SUT report's line: what was sent and from where


def rules_mode(mode: str) -> str:
    """The rules' mode (performance or accuracy) of a TestMode value."""
    return ACCURACY if mode == ACCURACY_ONLY else PERFORMANCE


def plan(
    context: RunContext | None,
    *,
    max_tokens: int | None,
    min_tokens: str,
    ignore_eos: bool,
    sample_max_tokens: Sequence[int | None],
    accepts_min_tokens: Callable[[], bool],
) -> Generation:
    """The requests' parameters: the benchmark's where the run names one, the user's `max_tokens`
    where given (an override unless equal), proctor's default (128) for a model the rules have none
    for. `sample_max_tokens`: the dataset's per-sample max_tokens (None: the request's);
    `accepts_min_tokens` is asked only for `min_tokens=auto` when the benchmark names a minimum."""
    gp: GenerationParams | None = None
    if context is not None:
        mode = rules_mode(context.mode)
        if context.mode == SUBMISSION_RUN:  # both phases in one run: the bodies are built once
            mode = ACCURACY
        gp = generation_params(context.benchmark, mode)
    rule_max = gp.max_new_tokens if gp is not None else None
    if rule_max is None:  # no rule: what the user asked, or proctor's default, and nothing to mark
        n = max_tokens or DEFAULT_MAX_TOKENS
        name = context.benchmark if context is not None else "the run"
        why = "set by max_tokens=" if max_tokens else "proctor's default"
        return Generation(
            n, n if ignore_eos else 0, line=f"generation: max_tokens={n} ({why}; no rule for {name[:60]})"
        )
    assert gp is not None
    overrides: list[str] = []
    n = rule_max
    if max_tokens is not None and max_tokens != rule_max:
        n = max_tokens
        overrides.append(f"max_tokens={max_tokens} (the benchmark's max_new_tokens: {rule_max})")
    own = sum(1 for m in sample_max_tokens if m is not None and m != n)
    if own:
        overrides.append(f"{own} dataset sample(s) set their own max_tokens")
    if context is not None and context.mode == SUBMISSION_RUN and gp.per_mode:
        perf = generation_params(context.benchmark, PERFORMANCE)
        overrides.append(
            f"SubmissionRun sends the accuracy mode's max_tokens={rule_max} in its performance phase too "
            f"(performance mode: {perf.max_new_tokens if perf else '?'}); run AccuracyOnly and PerformanceOnly"
        )
    rule_min = gp.min_new_tokens or 0
    send_min = 0
    if ignore_eos:
        send_min = n
        overrides.append("ignore_eos=1 (every request generates max_tokens)")
    elif rule_min and (min_tokens == "on" or (min_tokens == "auto" and accepts_min_tokens())):
        send_min = rule_min
    elif rule_min > 1:  # a 1-token minimum only excludes empty outputs (counted as "empty"); 2+ may cut one
        overrides.append(f"min_tokens not sent (the benchmark's min_new_tokens: {rule_min}; min_tokens=on sends it)")
    decoding = gp.decoding
    temperature = decoding.temperature if decoding is not None else 0.0
    top_p = decoding.top_p if decoding is not None else None
    sent = [f"max_tokens={n}"]
    if send_min:
        sent.append(f"min_tokens={send_min}")
    elif rule_min:
        sent.append("min_tokens not sent (server not known to take it)")
    sent.append(f"temperature={temperature:g}" + (f", top_p={top_p:g}" if top_p is not None else ""))
    whose = "; ".join(overrides) + ": not the benchmark's parameters" if overrides else "the benchmark's"
    line = f"generation: {', '.join(sent)} ({whose}; {gp.describe()}, {PARAMS_TABLE})"
    return Generation(n, send_min, temperature, top_p, override="; ".join(overrides), line=line)


__all__ = ["DEFAULT_MAX_TOKENS", "MIN_TOKENS_CHOICES", "Generation", "plan", "rules_mode"]
