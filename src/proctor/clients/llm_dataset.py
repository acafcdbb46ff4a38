"""LLM datasets for the OpenAI-compatible SUT: a JSONL file or synthetic prompts, served by a QSL.

A JSONL file has one object per line: `prompt` (text) or `input_ids` (token ids), optionally
`output` (the reference output text) and `max_tokens` (this sample's output budget). Anything
else on a line is ignored; a line that breaks these rules is an error naming the file and line.

The synthetic dataset draws input and output lengths from given distributions for quick sweeps:
`DIST:MEAN[:SPREAD]` with DIST one of const (or fixed), uniform (SPREAD: the half-width), normal
(SPREAD: the standard deviation), lognormal (SPREAD: sigma, the mean kept at MEAN), exp; a bare
`MEAN` is const; `file:PATH` samples the lengths from a file of lengths (one integer per line,
`#` comments, at most `MAX_LENGTHS_FILE_LINES`). Prompts are words from a fixed list (one token each
for whitespace and most BPE vocabularies), the output length becomes the sample's `max_tokens`.
Every length is at least 1. Same seed, same dataset.

Other file formats (ShareGPT, CSV, Parquet, the official pickled DataFrames): `llm_formats`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from proctor.errors import ConfigError
from proctor.typed_records import record

MAX_TOKEN_ID = 2**31 - 1
LENGTH_DISTS = ("const", "fixed", "uniform", "normal", "lognormal", "exp", "file")
MAX_LENGTHS_FILE_LINES = 10_000_000
MAX_LENGTH = 1_000_000
# Common English words: each is a single token in whitespace and most byte-level BPE vocabularies.
WORDS = ["the", "of", "and", "to", "in", "is", "was", "for", "on", "that", "with", "as", "by", "at", "from", "his", "her", "an", "were", "are", "which", "this", "be", "or", "has", "had", "not", "but", "first", "one", "their", "its", "new", "after", "who", "they", "have", "two", "been", "more", "all", "when", "also", "into", "other", "time", "over", "only", "most", "some", "any", "year", "made", "may", "between", "these", "out", "up", "than", "about", "such", "through", "city", "world", "state", "part", "while", "both", "where", "used", "during", "under", "many", "then", "later", "each", "known", "since", "group"]


@record(frozen=True, slots=True)
class LLMSample:
    prompt: str | None = None
    input_ids: tuple[int, ...] | None = None
    output: str | None = None
    max_tokens: int | None = None
    system: str | None = None  # a system prompt (OpenOrca's system_prompt, a ShareGPT system turn)

    @property
    def input_len(self) -> int:
        """Prompt length in tokens when known (ids), else in whitespace words (an estimate)."""
        if self.input_ids is not None:
            return len(self.input_ids)
        return len((self.prompt or "").split())


MAX_LINE_BYTES = 16 << 20  # one sample's JSON line (a long-context prompt is well under 1 MiB)
MAX_SAMPLES = 10_000_000


def _bad(path: str, line: int, what: str) -> ConfigError:
    return ConfigError(what, file=path, line=line)


def parse_line(raw: bytes, path: str = "<dataset>", line: int = 1) -> LLMSample | None:
    """One JSONL line to a sample (None for a blank line); ConfigError naming the line otherwise."""
    if line == 1 and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if not raw.strip():
        return None
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _bad(path, line, f"not valid JSON ({exc})") from None
    except RecursionError:
        raise _bad(path, line, "JSON nested too deeply") from None
    if not isinstance(obj, dict):
        raise _bad(path, line, f"expected a JSON object, got {type(obj).__name__}")
    prompt, ids = obj.get("prompt"), obj.get("input_ids")
    if prompt is None and ids is None:
        raise _bad(path, line, "needs 'prompt' (text) or 'input_ids' (token ids)")
    if prompt is not None and not isinstance(prompt, str):
        raise _bad(path, line, f"'prompt' must be a string, got {type(prompt).__name__}")
    input_ids: tuple[int, ...] | None = None
    if ids is not None:
        if not isinstance(ids, list) or not ids:
            raise _bad(path, line, "'input_ids' must be a non-empty list of token ids")
        for t in ids:
            if type(t) is not int or not 0 <= t <= MAX_TOKEN_ID:
                raise _bad(path, line, f"'input_ids' holds {t!r}: token ids are integers 0..{MAX_TOKEN_ID}")
        input_ids = tuple(ids)
    output = obj.get("output")
    if output is not None and not isinstance(output, str):
        raise _bad(path, line, f"'output' must be a string, got {type(output).__name__}")
    max_tokens = obj.get("max_tokens")
    if max_tokens is not None and (type(max_tokens) is not int or not 1 <= max_tokens <= 1_000_000):
        raise _bad(path, line, f"'max_tokens' must be an integer 1..1000000, got {max_tokens!r}")
    return LLMSample(prompt, input_ids, output, max_tokens)


def load_jsonl(path: str | Path) -> list[LLMSample]:
    """Every sample of a JSONL dataset file, in file order."""
    p = str(path)
    samples: list[LLMSample] = []
    with open(path, "rb") as f:
        n = 0
        while raw := f.readline(MAX_LINE_BYTES + 1):  # read no more than the bound: a 1 GB line is refused
            n += 1
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):  # MAX_LINE_BYTES + 1 bytes, no end
                raise _bad(p, n, f"the line is longer than {MAX_LINE_BYTES >> 20} MiB; one sample per line")
            s = parse_line(raw, p, n)
            if s is not None:
                samples.append(s)
            if len(samples) > MAX_SAMPLES:
                raise _bad(p, n, f"more than {MAX_SAMPLES} samples; split the dataset")
    if not samples:
        raise ConfigError("the dataset holds no samples", file=p)
    return samples


LengthSpec = tuple[str, float, float] | tuple[str, float, float, np.ndarray]


def read_lengths(path: str, key: str) -> np.ndarray:
    """The lengths of a lengths file (`file:PATH`): one integer 1..MAX_LENGTH per line."""
    values: list[int] = []
    try:
        with open(path, "rb") as f:
            n = 0
            while raw := f.readline(256):
                n += 1
                if len(raw) == 256 and not raw.endswith(b"\n"):
                    raise ConfigError("the line is too long: one length per line", file=path, line=n)
                text = raw.split(b"#", 1)[0].strip()
                if not text:
                    continue
                if not text.isdigit() or len(text) > 7 or not 1 <= int(text) <= MAX_LENGTH:
                    raise ConfigError(f"{text[:20]!r} is not a length 1..{MAX_LENGTH}", file=path, line=n)
                values.append(int(text))
                if len(values) > MAX_LENGTHS_FILE_LINES:
                    raise ConfigError(f"more than {MAX_LENGTHS_FILE_LINES} lengths", file=path, line=n)
    except OSError as exc:
        raise ConfigError(f"{key}=file:{path}: cannot read it ({exc.strerror})", key=key) from None
    if not values:
        raise ConfigError(f"{key}=file:{path}: the file holds no lengths", key=key)
    return np.array(values, np.int64)


def parse_length(spec: str, key: str) -> LengthSpec:
    """`DIST:MEAN[:SPREAD]` (or a bare MEAN, constant) to (dist, mean, spread); `file:PATH` to
    ("file", mean, 0, the file's lengths)."""
    if spec.startswith("file:"):
        values = read_lengths(spec[5:], key)
        return "file", float(values.mean()), 0.0, values
    parts = spec.split(":")
    if len(parts) == 1:
        parts = ["const", *parts]
    dist = "const" if parts[0] == "fixed" else parts[0]
    if dist not in LENGTH_DISTS or dist == "file" or len(parts) > 3 or len(parts) < 2:
        raise ConfigError(
            f"{key}={spec!r}: expected DIST:MEAN[:SPREAD] (DIST one of {', '.join(LENGTH_DISTS[:-1])}) "
            "or file:PATH",
            key=key,
        )
    try:
        mean = float(parts[1])
        spread = float(parts[2]) if len(parts) == 3 else 0.0
    except ValueError:
        raise ConfigError(f"{key}={spec!r}: MEAN and SPREAD must be numbers", key=key) from None
    if not (math.isfinite(mean) and math.isfinite(spread)) or not 1 <= mean <= MAX_LENGTH or spread < 0:
        raise ConfigError(f"{key}={spec!r}: MEAN must be 1..{MAX_LENGTH} and SPREAD >= 0", key=key)
    return dist, mean, spread


def draw_lengths(spec: LengthSpec, n: int, rng: np.random.Generator) -> np.ndarray:
    """n lengths in 1..MAX_LENGTH from the distribution; SPREAD is the half-width (uniform), the
    standard deviation (normal) or sigma (lognormal, whose mean is kept at MEAN); a lengths file's
    values are drawn with replacement."""
    dist, mean, spread = spec[0], spec[1], spec[2]
    draws: dict[str, Callable[[], np.ndarray]] = {
        "const": lambda: np.full(n, mean),
        "uniform": lambda: rng.uniform(mean - spread, mean + spread, n),
        "normal": lambda: rng.normal(mean, spread, n),
        "lognormal": lambda: rng.lognormal(math.log(mean) - spread**2 / 2, spread, n),
        "exp": lambda: rng.exponential(mean, n),
        "file": lambda: rng.choice(spec[3], n).astype(np.float64),  # type: ignore[misc]
    }
    lengths: np.ndarray = np.clip(np.rint(draws[dist]()), 1, MAX_LENGTH).astype(np.int64)
    return lengths


def synthetic(n: int, input_len: str, output_len: str, seed: int = 0) -> list[LLMSample]:
    """n samples whose prompt and output lengths follow the given `DIST:MEAN[:SPREAD]` specs."""
    if not 1 <= n <= 10_000_000:
        raise ConfigError(f"synthetic={n}: the sample count must be 1..10000000", key="synthetic")
    rng = np.random.default_rng(seed)
    ins = draw_lengths(parse_length(input_len, "in"), n, rng)
    outs = draw_lengths(parse_length(output_len, "out"), n, rng)
    words = np.array(WORDS)
    return [
        LLMSample(prompt=" ".join(words[rng.integers(0, len(words), int(k))]), max_tokens=int(m))
        for k, m in zip(ins.tolist(), outs.tolist(), strict=True)
    ]


class LLMDataset:
    """A QSL over LLM samples: load_samples builds each request body ahead of the timed part."""

    def __init__(
        self,
        samples: list[LLMSample],
        body: Callable[[LLMSample], bytes],
        *,
        performance_count: int = 0,
        name: str = "llm-dataset",
    ) -> None:
        if not samples:
            raise ConfigError("the dataset holds no samples", key="dataset")
        self.samples = samples
        self._body = body
        self._perf = min(performance_count or len(samples), len(samples))
        self._name = name
        self.bodies: dict[int, bytes] = {}

    @property
    def name(self) -> str:
        return self._name

    @property
    def total_sample_count(self) -> int:
        return len(self.samples)

    @property
    def performance_sample_count(self) -> int:
        return self._perf

    def load_samples(self, indices: list[int]) -> None:
        for i in indices:
            if i not in self.bodies:
                self.bodies[i] = self._body(self.samples[i])

    def unload_samples(self, indices: list[int]) -> None:
        for i in indices:
            self.bodies.pop(i, None)


# how a worker process finds the samples (`llm_formats.load_dataset`): ("jsonl", path) | ("file", path, format or None, columns
# (prompt, output, max_tokens, input_ids: names or None), allow_pickle) | ("synthetic", n, in, out,
# seed) | ("samples", [LLMSample, ...]) (a dataset built in code: sent once at start)
DatasetSpec = tuple[Any, ...]


__all__ = [
    "LENGTH_DISTS",
    "MAX_LENGTH",
    "DatasetSpec",
    "LengthSpec",
    "LLMDataset",
    "LLMSample",
    "draw_lengths",
    "load_jsonl",
    "parse_length",
    "parse_line",
    "read_lengths",
    "synthetic",
]
