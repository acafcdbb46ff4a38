"""The digits accuracy script: mlperf_log_accuracy.json -> top-1 accuracy in the rules' format.

    python -m proctor.workloads.digits.accuracy --mlperf-accuracy-file mlperf_log_accuracy.json

prints `accuracy=94.167%, good=565, total=600` (the official classification scripts' line; the
rules' §Benchmarks: "reported to five significant figures with round to even", rounded here from
the exact fraction). Each logged sample's data is its predicted class (`RESPONSE_DTYPE`); a QSL
index logged more than once counts once, as the official scripts do. `--targets` adds one line per
quality level saying whether the accuracy meets 99 % / 99.9 % of the FP32 reference.
"""

from __future__ import annotations

import argparse
import sys
from decimal import ROUND_HALF_EVEN, Decimal
from pathlib import Path

import numpy as np
import orjson

from proctor.errors import LogFormatError
from proctor.typed_records import record
from proctor.workloads.digits import (
    ACCURACY_TARGETS,
    REFERENCE_ACCURACY,
    RESPONSE_DTYPE,
    TOTAL_SAMPLE_COUNT,
    data,
)

SIGNIFICANT_FIGURES = 5  # Inference rules §Benchmarks


def format_accuracy(good: int, total: int, figures: int = SIGNIFICANT_FIGURES) -> str:
    """100 * good / total to `figures` significant figures, round half to even, exactly."""
    if total <= 0:
        raise ValueError("no samples")
    value = Decimal(100 * good) / Decimal(total)
    if value == 0:
        return f"{0:.{figures - 1}f}"
    exponent = value.adjusted() - figures + 1
    return str(value.quantize(Decimal(1).scaleb(exponent), rounding=ROUND_HALF_EVEN))


@record(frozen=True, slots=True)
class AccuracyResult:
    good: int
    total: int
    expected_total: int

    @property
    def accuracy(self) -> float:
        """Percent, from the reported (rounded) string."""
        return float(format_accuracy(self.good, self.total))

    def line(self) -> str:
        return f"accuracy={format_accuracy(self.good, self.total)}%, good={self.good}, total={self.total}"

    def meets(self, fraction: float) -> bool:
        return self.accuracy >= ACCURACY_TARGETS[fraction]


def read_predictions(path: str | Path, dtype: str = RESPONSE_DTYPE) -> tuple[np.ndarray, np.ndarray]:
    """(qsl_idx int64[n], predicted class int64[n]) of every entry of an accuracy log, in file order."""
    where = str(path)
    raw = Path(path).read_bytes()
    try:
        entries = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise LogFormatError(f"not JSON: {exc.msg}", file=where, line=exc.lineno) from None
    if not isinstance(entries, list):
        raise LogFormatError("expected a JSON list of entries", file=where, line=1)
    width = np.dtype(dtype).itemsize
    idx = np.empty(len(entries), np.int64)
    pred = np.empty(len(entries), np.int64)
    for k, e in enumerate(entries):
        line = k + 2  # the official writer puts entry k on line k + 2
        if not isinstance(e, dict):
            raise LogFormatError(f"entry {k} is not an object", file=where, line=line)
        for key in ("qsl_idx", "data"):
            if key not in e:
                raise LogFormatError(f"entry {k} has no key '{key}'", file=where, line=line)
        try:
            payload = bytes.fromhex(e["data"])
        except (TypeError, ValueError):
            raise LogFormatError(f"entry {k}: key 'data' is not hex", file=where, line=line) from None
        if len(payload) < width:
            raise LogFormatError(
                f"entry {k}: key 'data' holds {len(payload)} bytes, a prediction needs {width}",
                file=where,
                line=line,
            )
        if not isinstance(e["qsl_idx"], int):
            raise LogFormatError(f"entry {k}: key 'qsl_idx' is not an integer", file=where, line=line)
        idx[k] = e["qsl_idx"]
        pred[k] = int(np.frombuffer(payload[:width], dtype)[0])
    return idx, pred


def evaluate(
    path: str | Path, labels: np.ndarray | None = None, dtype: str = RESPONSE_DTYPE
) -> AccuracyResult:
    """Top-1 accuracy of the logged predictions against the validation labels (first entry per index)."""
    if labels is None:
        labels = data.validation().labels
    idx, pred = read_predictions(path, dtype)
    bad = (idx < 0) | (idx >= labels.shape[0])
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise LogFormatError(
            f"entry {k}: key 'qsl_idx' = {idx[k]} is outside [0, {labels.shape[0]})",
            file=str(path),
            line=k + 2,
        )
    _, first = np.unique(idx, return_index=True)
    good = int(np.count_nonzero(pred[first] == labels[idx[first]]))
    return AccuracyResult(good, int(first.size), int(labels.shape[0]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="digits top-1 accuracy from mlperf_log_accuracy.json")
    parser.add_argument("--mlperf-accuracy-file", required=True, type=Path)
    parser.add_argument("--dtype", default=RESPONSE_DTYPE, help="numpy dtype of each response's data")
    parser.add_argument("--targets", action="store_true", help="also print the 99%% / 99.9%% verdicts")
    args = parser.parse_args(argv)
    try:
        result = evaluate(args.mlperf_accuracy_file, dtype=args.dtype)
    except (LogFormatError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(result.line())
    if result.total != TOTAL_SAMPLE_COUNT:
        print(
            f"warning: {result.total} of {TOTAL_SAMPLE_COUNT} samples were logged; an accuracy run covers all",
            file=sys.stderr,
        )
    if args.targets:
        for fraction, target in ACCURACY_TARGETS.items():
            verdict = "PASS" if result.meets(fraction) else "FAIL"
            print(f"{fraction * 100:g}% of FP32 ({REFERENCE_ACCURACY}%): target={target:.3f}% {verdict}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
