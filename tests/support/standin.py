"""What a tree of synthetic-SUT runs needs besides the logs: the stand-in accuracy script, the
system and measurements JSON.

The synthetic SUT (proctor.suts.synthetic) answers each sample with its QSL index as 8 little-endian
bytes. Standing in for a real model (e.g. resnet50) it has no predictions to score, so its accuracy
script counts a response as correct when it carries its own sample's index, and prints the line in
the image-classification format (`accuracy=...%, good=..., total=...`) that the checkers parse for
resnet. A tree built this way exercises the whole submission path; its accuracy says only that every
response reached the right sample (docs/deviations.md, "Submission side").
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import os
import platform
from pathlib import Path
from typing import Any

import orjson

from proctor.checks.system_description import SYSTEM_FIELDS

MEASUREMENTS = {
    "input_data_types": "int64",
    "retraining": "no",
    "starting_weights_filename": "none (synthetic SUT: no model)",
    "weight_data_types": "none",
    "weight_transformations": "none",
}


def accuracy_line(accuracy_json: Path) -> str:
    """The synthetic SUT's accuracy script: the share of responses that carry their QSL index."""
    entries = orjson.loads(accuracy_json.read_bytes())
    good = 0
    for e in entries:
        with contextlib.suppress(binascii.Error, KeyError, TypeError, ValueError):
            good += int.from_bytes(base64.b16decode(e["data"]), "little") == e["qsl_idx"]
    total = len(entries)
    share = 100.0 * good / total if total else 0.0
    return f"accuracy={share:.3f}%, good={good}, total={total}\n"


def system_json(
    *, submitter: str, system_name: str, division: str = "closed", system_type: str = "edge"
) -> dict[str, Any]:
    """A system description with every field both checkers require, for this machine."""
    cores = os.cpu_count() or 1
    # the official checker wants every field but the notes non-empty (0 counts as empty there)
    desc: dict[str, Any] = {k: "n/a" for k in SYSTEM_FIELDS} | {"hw_notes": "", "sw_notes": ""}
    desc |= {
        "division": division,
        "submitter": submitter,
        "status": "rdi",
        "system_name": system_name,
        "system_type": system_type,
        "system_type_detail": "synthetic SUT on a CPU host",
        "number_of_nodes": 1,
        "host_processor_model_name": platform.processor() or platform.machine() or "CPU",
        "host_processors_per_node": 1,
        "host_processor_core_count": cores,
        "host_memory_capacity": "n/a",
        "host_storage_capacity": "n/a",
        "host_storage_type": "local",
        "host_network_card_count": "0",
        "accelerators_per_node": "0",
        "accelerator_model_name": "N/A",
        "accelerator_memory_capacity": "N/A",
        "framework": "proctor synthetic SUT",
        "operating_system": f"{platform.system()} {platform.release()}",
        "other_software_stack": f"Python {platform.python_version()}",
        "cooling": "air",
        "sw_notes": "proctor: a synthetic SUT standing in for the benchmark's model",
    }
    return desc


def write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n")
