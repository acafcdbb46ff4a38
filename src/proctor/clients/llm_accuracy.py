"""Scoring an LLM run's accuracy log against the dataset's reference outputs.

The openai SUT puts each sample's generated text (UTF-8) in the accuracy log's `data`; this reads
the log back, pairs each entry with its sample's `output`, and scores exact match (whitespace at
the ends ignored) and, when the `rouge-score` package is installed (the maintained Google
implementation the reference benchmarks use), ROUGE-1/2/L F-measures in percent. The scorer is the
package's, never a hand-written one; without it the ROUGE keys are simply absent.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from proctor.clients.llm_dataset import LLMSample
from proctor.errors import LogFormatError


def read_outputs(path: str | Path) -> dict[int, bytes]:
    """qsl_idx -> output bytes from an accuracy log (the last entry wins for a repeated index)."""
    try:
        entries = orjson.loads(Path(path).read_bytes())
    except orjson.JSONDecodeError as exc:
        raise LogFormatError(f"not a JSON accuracy log: {exc}", file=str(path)) from None
    if not isinstance(entries, list):
        raise LogFormatError("an accuracy log is a JSON list", file=str(path))
    out: dict[int, bytes] = {}
    for k, e in enumerate(entries):
        try:
            out[int(e["qsl_idx"])] = bytes.fromhex(e["data"])
        except (TypeError, KeyError, ValueError) as exc:
            raise LogFormatError(f"entry {k}: needs qsl_idx and hex data ({exc})", file=str(path)) from None
    return out


def rouge_available() -> bool:
    try:
        importlib.import_module("rouge_score")
    except ImportError:
        return False
    return True


def score(outputs: dict[int, bytes], samples: Sequence[LLMSample]) -> dict[str, Any]:
    """Exact match (and ROUGE when available) over the samples that have a reference output."""
    pairs = []
    for idx, data in sorted(outputs.items()):
        if 0 <= idx < len(samples) and samples[idx].output is not None:
            pairs.append((data.decode("utf-8", "replace").strip(), str(samples[idx].output).strip()))
    result: dict[str, Any] = {"scored": len(pairs), "logged": len(outputs)}
    if not pairs:
        return result
    result["exact_match"] = 100.0 * sum(p == r for p, r in pairs) / len(pairs)
    if rouge_available():
        rouge_scorer = importlib.import_module("rouge_score.rouge_scorer")
        scorer = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)
        sums = {"rouge1": 0.0, "rouge2": 0.0, "rougeL": 0.0}
        for pred, ref in pairs:
            s = scorer.score(ref, pred)
            for key in sums:
                sums[key] += s[key].fmeasure
        result.update({k: 100.0 * v / len(pairs) for k, v in sums.items()})
    return result


def score_log(path: str | Path, samples: Sequence[LLMSample]) -> dict[str, Any]:
    return score(read_outputs(path), samples)


__all__ = ["read_outputs", "rouge_available", "score", "score_log"]
