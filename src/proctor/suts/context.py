"""What a run tells the SUT it builds: the benchmark (`--model`), the test mode and whether its
responses are read as token ids.

A SUT whose requests depend on the benchmark (an LLM client: the rules fix `max_new_tokens` per
benchmark and mode) needs both, and neither is a `k=v` parameter the user types again. A factory
that names a `context` keyword parameter gets a `RunContext` from the registry (`registry.build`);
one that does not is called as before, so user factories are unchanged.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from proctor.typed_records import record

CONTEXT_PARAM = "context"  # the keyword a factory takes the RunContext by
ACCURACY_ONLY = "AccuracyOnly"  # loadgen.types.TestMode values, as strings (this module imports no engine)
SUBMISSION_RUN = "SubmissionRun"


@record(frozen=True, slots=True)
class RunContext:
    """The run a SUT is built for: `benchmark` is the `--model` value as typed, `mode` the resolved
    TestMode's value ("PerformanceOnly", "AccuracyOnly", "SubmissionRun", "FindPeakPerformance");
    `token_ids`: the run's checks read each response as int32 token ids (the TEST06 audit), so a SUT
    that can log them should unless its parameters say otherwise."""

    benchmark: str
    mode: str = "PerformanceOnly"
    token_ids: bool = False


def takes_context(factory: Callable[..., Any]) -> bool:
    """True when `factory` accepts `context=` (declared by `params.takes`, or a keyword parameter)."""
    declared = getattr(factory, "TAKES_CONTEXT", None)
    if declared is not None:
        return bool(declared)
    try:
        p = inspect.signature(factory).parameters.get(CONTEXT_PARAM)
    except (TypeError, ValueError):
        return False
    return p is not None and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)


__all__ = ["ACCURACY_ONLY", "CONTEXT_PARAM", "SUBMISSION_RUN", "RunContext", "takes_context"]
