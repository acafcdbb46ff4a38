"""Scoring an LLM run's accuracy log against the dataset's reference outputs.

The openai SUT puts each sample's generated text (UTF-8) in the accuracy log's `data` and, for a
token run, its token count in `token_count`; this reads the log back (first entry per QSL index, as
the official scripts count), pairs each entry with its sample's `output`, and scores:

- ROUGE-1/2/L: proctor's implementation of what the reference scripts compute (`rouge.py`: the
  `rouge_score` tokenizer with NLTK's Porter stemmer), mean F-measure x 100 to four decimals;
- exact match: the share of outputs equal to the reference (whitespace at the ends ignored), in %;
- the generation length as the scripts report it: `gen_len` (characters), `gen_num`, `gen_tok_len`
  and `tokens_per_sample` (token counts from the log; absent when the run logged none).

`accuracy_text` prints them as the official scripts do (`{'rouge1': 44.4312, ...}`), the lines the
submission checker's regexes read.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from proctor.clients import rouge
from proctor.clients.llm_dataset import LLMSample
from proctor.errors import LogFormatError

MAX_LOG_BYTES = 4 << 30  # an accuracy log of 24,576 long outputs is well under this


def read_entries(path: str | Path) -> tuple[dict[int, bytes], dict[int, int]]:
    """(qsl_idx -> output bytes, qsl_idx -> token_count) from an accuracy log; the first entry of
    a repeated index counts (the official scripts skip the ones seen)."""
    p = Path(path)
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise LogFormatError(f"cannot read the accuracy log ({exc.strerror})", file=str(path)) from None
    if size > MAX_LOG_BYTES:
        raise LogFormatError(f"larger than {MAX_LOG_BYTES >> 30} GiB; not an accuracy log", file=str(path))
    try:
        entries = orjson.loads(p.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise LogFormatError(f"not a JSON accuracy log: {exc}", file=str(path)) from None
    if not isinstance(entries, list):
        raise LogFormatError("an accuracy log is a JSON list", file=str(path))
    out: dict[int, bytes] = {}
    tokens: dict[int, int] = {}
    for k, e in enumerate(entries):
        try:
            idx = e["qsl_idx"]
            if type(idx) is not int:
                raise TypeError("qsl_idx is not an integer")
            data = bytes.fromhex(e["data"])
            count = e.get("token_count")
        except (TypeError, KeyError, ValueError, AttributeError) as exc:
            raise LogFormatError(f"entry {k}: needs qsl_idx and hex data ({exc})", file=str(path)) from None
        if idx in out:
            continue
        out[idx] = data
        if type(count) is int and count >= 0:
            tokens[idx] = count
    return out, tokens


def read_outputs(path: str | Path) -> dict[int, bytes]:
    """qsl_idx -> output bytes from an accuracy log (the first entry of a repeated index)."""
    return read_entries(path)[0]


def score(
    outputs: dict[int, bytes], samples: Sequence[LLMSample], token_counts: dict[int, int] | None = None
) -> dict[str, Any]:
    """ROUGE, exact match and the generation length over the samples that have a reference output."""
    pairs = []
    for idx, data in sorted(outputs.items()):
        if 0 <= idx < len(samples) and samples[idx].output is not None:
            pairs.append((data.decode("utf-8", "replace").strip(), str(samples[idx].output).strip()))
    result: dict[str, Any] = {"scored": len(pairs), "logged": len(outputs)}
    if not pairs:
        return result
    result.update(rouge.mean_scores(pairs))
    result["exact_match"] = round(100.0 * sum(p == r for p, r in pairs) / len(pairs), 4)
    result["gen_len"] = sum(len(p) for p, _ in pairs)
    result["gen_num"] = len(pairs)
    result["ref_gen_len"] = sum(len(r) for _, r in pairs)  # the references' own, for a dataset not the official
    counts = token_counts or {}
    if counts and all(idx in counts for idx in outputs):
        total = sum(counts[idx] for idx in outputs)
        result["gen_tok_len"] = total
        result["tokens_per_sample"] = round(total / len(outputs), 1)
    return result


def score_log(path: str | Path, samples: Sequence[LLMSample]) -> dict[str, Any]:
    outputs, tokens = read_entries(path)
    return score(outputs, samples, tokens)


SCRIPT_KEYS = (
    "rouge1",
    "rouge2",
    "rougeL",
    "exact_match",
    "gen_len",
    "gen_num",
    "gen_tok_len",
    "tokens_per_sample",
)


def accuracy_text(scores: dict[str, Any]) -> str:
    """The scores as the reference scripts print them: a `Results` header, then one dict line."""
    shown = {k: scores[k] for k in SCRIPT_KEYS if k in scores}
    return "\nResults\n\n" + repr(shown) + "\n"


__all__ = ["accuracy_text", "read_entries", "read_outputs", "score", "score_log"]
