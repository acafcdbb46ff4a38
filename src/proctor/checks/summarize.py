"""One row per system, benchmark and scenario: the metric the rules name, its value and units.

Metrics (§Scenarios table and FAQ): SingleStream / MultiStream the 90th / 99th percentile
early-stopping latency (ms), Server "Scheduled samples per second", Offline samples per second;
LLMs (TTFT/TPOT benchmarks) report tokens per second. Inferred edge results carry their formula.
A result measured for power has a second row, as the official summary has (rules.power
SUMMARY_SOURCE): metric "power", its value in Watts (Offline/Server/Interactive) or millijoules per
query (SingleStream/MultiStream), and its power efficiency.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from proctor.checks.submission import ResultRow, check_submission
from proctor.json_text import dumps_indented
from proctor.rules.rounds import CURRENT_ROUND

COLUMNS = (
    "division",
    "submitter",
    "system",
    "benchmark",
    "scenario",
    "metric",
    "value",
    "units",
    "valid",
    "inferred_from",
    "has_power",
    "power_efficiency",
)
POWER_METRIC = "power"


def summarize(root: str | Path, version: str = CURRENT_ROUND) -> list[ResultRow]:
    """The rows of every result in the tree, sorted; validity is the submission checker's verdict."""
    rows = check_submission(root, version).results
    return sorted(rows, key=lambda r: (r.division, r.submitter, r.system, r.benchmark, r.scenario))


def records(rows: list[ResultRow]) -> list[dict[str, Any]]:
    """The summary's records: each result's row, then its power row when it was measured for power."""
    out: list[dict[str, Any]] = []
    for r in rows:
        d = r.to_dict()
        out.append({c: None if c == "power_efficiency" else d[c] for c in COLUMNS})
        if d["has_power"]:
            power = {"metric": POWER_METRIC, "value": d["power_metric"], "units": d["power_units"]}
            out.append({c: power.get(c, d[c]) for c in COLUMNS})
    return out


def to_csv(rows: list[ResultRow]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for d in records(rows):
        writer.writerow(
            ["" if d[c] is None else (repr(d[c]) if isinstance(d[c], float) else d[c]) for c in COLUMNS]
        )
    return buf.getvalue()


def to_json(rows: list[ResultRow]) -> bytes:
    return dumps_indented(records(rows))
