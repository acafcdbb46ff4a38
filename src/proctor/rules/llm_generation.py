"""The generation parameters an LLM benchmark's requests carry, as data.

The rules fix them for the closed division (§Additional inference parameters: `max_new_tokens`,
`min_new_tokens`, per mode where they differ), forbid cutting output short (§FAQ, LLM Benchmarks:
"Truncating output tokens to boost performance or meet accuracy is not permitted") and name the
decoding (§FAQ, LLM Benchmarks: greedy search for most; sampling with temperature=1.0, top_p=1.0 and
top_k disabled for GPT-OSS-120B and Qwen3-VL). The table's numbers live once, in
`rules.inference` (`Benchmark.parameters`, cited there as PARAMS_TABLE); this module reads them per
mode and adds the decoding, so an LLM client asks for what the benchmark asks.
"""

from __future__ import annotations

import re

from proctor.rules.inference import PARAMS_TABLE, RULES, Benchmark, resolve
from proctor.typed_records import record

DECODING_FAQ = f"{RULES} §FAQ, LLM Benchmarks ('What algorithm is used for the auto-regressive decoding loop?')"
TRUNCATION_FAQ = (
    f"{RULES} §FAQ, LLM Benchmarks ('Truncating output tokens to boost performance or meet accuracy is "
    "not permitted')"
)
GPT_OSS_REFERENCE = "mlcommons/inference language/gpt-oss-120b/generation_config.json (top_k -1 = disabled)"

PERFORMANCE = "performance"
ACCURACY = "accuracy"
MODES = (PERFORMANCE, ACCURACY)
_LEVEL = re.compile(r"-99(?:\.9)?$")


@record(frozen=True, slots=True)
class Decoding:
    """How the next token is chosen. `temperature` 0 is greedy search over the OpenAI API; `top_p`
    and `top_k` are None where the rules name none (top_k "disabled" is -1 in vLLM and SGLang)."""

    name: str  # "greedy" | "sampling"
    temperature: float
    top_p: float | None = None
    top_k: int | None = None
    source: str = DECODING_FAQ


GREEDY = Decoding("greedy", 0.0)
SAMPLING_T1 = Decoding("sampling", 1.0, top_p=1.0, top_k=-1, source=f"{DECODING_FAQ}; {GPT_OSS_REFERENCE}")

# §FAQ, LLM Benchmarks: "Llama2-70b, Llama3.1-405B, Mixtral-8x7B, DeepSeek-r1, and Llama3.1-8B use greedy
# search. GPT-OSS-120B and Qwen3-VL-235B-A22B uses sampling with temperature=1.0, top_p=1.0, and top_k
# disabled." Keys: mlperf.conf model names.
DECODING: dict[str, Decoding] = {
    "llama2-70b": GREEDY,
    "llama3_1-405b": GREEDY,
    "mixtral-8x7b": GREEDY,
    "deepseek-r1": GREEDY,
    "llama3_1-8b": GREEDY,
    "gpt-oss-120b": SAMPLING_T1,
    "qwen3-vl-235b-a22b": SAMPLING_T1,
}


@record(frozen=True, slots=True)
class GenerationParams:
    """One benchmark's generation parameters in one mode (performance or accuracy)."""

    benchmark: str  # mlperf.conf model name
    mode: str  # PERFORMANCE or ACCURACY
    max_new_tokens: int | None  # None: the rules' table has no row for it
    min_new_tokens: int | None
    decoding: Decoding | None
    per_mode: bool  # the table gives max_new_tokens per mode (the other mode's differs)
    source: str

    def describe(self) -> str:
        """One line: what the requests ask and where it comes from."""
        parts = [f"max_tokens={self.max_new_tokens}" if self.max_new_tokens else "max_tokens: no rule"]
        if self.min_new_tokens:
            parts.append(f"min_tokens={self.min_new_tokens}")
        if self.decoding is not None:
            parts.append(
                "greedy (temperature=0)" if self.decoding.name == "greedy"
                else f"sampling temperature={self.decoding.temperature:g}"
                + (f", top_p={self.decoding.top_p:g}" if self.decoding.top_p is not None else "")
                + (", top_k disabled" if self.decoding.top_k == -1 else "")
            )
        mode = f" ({self.mode} mode)" if self.per_mode else ""
        return f"{self.benchmark}{mode}: {', '.join(parts)}"


def _max_new_tokens(b: Benchmark, mode: str) -> tuple[int | None, bool]:
    table = b.parameters
    per_mode = f"max_new_tokens_{mode}" in table
    return (table[f"max_new_tokens_{mode}"] if per_mode else table.get("max_new_tokens")), per_mode


def for_benchmark(benchmark: Benchmark, mode: str = PERFORMANCE) -> GenerationParams | None:
    """The benchmark's parameters in `mode`; None for a benchmark that has neither a table row nor a
    named decoding (not an LLM benchmark)."""
    if mode not in MODES:
        raise ValueError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
    max_new, per_mode = _max_new_tokens(benchmark, mode)
    decoding = DECODING.get(benchmark.name)
    if max_new is None and decoding is None:
        return None
    sources = [f"{PARAMS_TABLE}, {benchmark.display} rows"] if max_new is not None else []
    if decoding is not None:
        sources.append(decoding.source)
    return GenerationParams(
        benchmark=benchmark.name,
        mode=mode,
        max_new_tokens=max_new,
        min_new_tokens=benchmark.parameters.get("min_new_tokens"),
        decoding=decoding,
        per_mode=per_mode,
        source="; ".join(sources),
    )


def generation_params(name: str, mode: str = PERFORMANCE) -> GenerationParams | None:
    """The parameters of the benchmark any spelling names (`llama2-70b-99`, `llama3.1-8b`,
    `gpt-oss-120b-interactive`); None for an unknown name or a benchmark without them."""
    for spelling in (name, _LEVEL.sub("", name)):  # llama2-70b-99: a level the rules do not list
        try:
            return for_benchmark(resolve(spelling).benchmark, mode)
        except KeyError:
            continue
    return None


__all__ = [
    "ACCURACY",
    "DECODING",
    "GREEDY",
    "MODES",
    "PERFORMANCE",
    "SAMPLING_T1",
    "TRUNCATION_FAQ",
    "Decoding",
    "GenerationParams",
    "for_benchmark",
    "generation_params",
]
