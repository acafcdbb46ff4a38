"""The side files a submission needs besides the logs, started for the user: this machine's system
description and an unfilled measurements JSON (`proctor submission init`).

What proctor can read from the machine it fills in (CPU model, cores, memory, operating system);
what only the submitter knows (the framework, the measurements' data types and weights) it leaves
empty, and the checker rejects an empty field by name, so a template is never mistaken for a
finished description.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path
from typing import Any

import orjson

from proctor.errors import TreeError
from proctor.rules.inference import MEASUREMENT_FIELDS
from proctor.trees import FILE, MISSING, kind, not_a_file, real_root, show, write_new

SYSTEM_FILE = "system.json"  # where `package` looks in RUNS when --system is not given
MEASUREMENTS_FILE = "measurements.json"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def memory_gb() -> str:
    try:
        return f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GB"
    except (ValueError, OSError, AttributeError):
        return "unknown"


def this_machine(
    *, submitter: str, system_name: str, division: str, status: str, framework: str, system_type: str = "edge",
    notes: str = "",
) -> dict[str, Any]:
    """One description of this machine with every field the inference and training checkers require."""
    cores = os.cpu_count() or 1
    return {
        "submitter": submitter,
        "division": division,
        "status": status,
        "system_name": system_name,
        "system_type": system_type,
        "system_type_detail": "",
        "number_of_nodes": 1,
        "host_processor_model_name": cpu_model(),
        "host_processors_per_node": 1,
        "host_processor_core_count": cores,
        "host_processor_vcpu_count": cores,
        "host_processor_frequency": "",
        "host_processor_caches": "",
        "host_processor_interconnect": "",
        "host_memory_capacity": memory_gb(),
        "host_memory_configuration": "",
        "host_storage_type": "local",
        "host_storage_capacity": "",
        "host_networking": "",
        "host_networking_topology": "",
        "host_network_card_count": 0,
        "accelerators_per_node": 0,
        "accelerator_model_name": "N/A",
        "accelerator_frequency": "",
        "accelerator_host_interconnect": "",
        "accelerator_interconnect": "",
        "accelerator_interconnect_topology": "",
        "accelerator_memory_capacity": "N/A",
        "accelerator_memory_configuration": "",
        "accelerator_on-chip_memories": "",
        "cooling": "air",
        "hw_notes": "",
        "framework": framework,
        "operating_system": f"{platform.system()} {platform.release()}",
        "other_software_stack": f"Python {platform.python_version()}",
        "sw_notes": notes,
    }


def write_json(path: Path, obj: Any) -> None:
    """A new JSON file (never over an existing file or link); its folder is made as named."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_new(real_root(path.parent) / path.name, orjson.dumps(obj, option=orjson.OPT_INDENT_2) + b"\n")


def _absent(path: Path) -> bool:
    """True when nothing is at `path`; a regular file is kept; a link, FIFO or device is refused."""
    got = kind(path)
    if got in (MISSING, FILE):
        return got == MISSING
    raise TreeError(f"{show(path)}: {not_a_file(path, got)}; remove it and run init again")


def write_templates(
    runs: Path, *, submitter: str, system_name: str, division: str, status: str, framework: str, system_type: str
) -> list[tuple[Path, str]]:
    """RUNS/system.json and RUNS/measurements.json where they do not exist yet (never overwritten, nor
    written through a link: TreeError): each written path with what is left to fill in ("" when nothing)."""
    written: list[tuple[Path, str]] = []
    runs.mkdir(parents=True, exist_ok=True)
    runs = real_root(runs)
    system = runs / SYSTEM_FILE
    meas = runs / MEASUREMENTS_FILE
    need_system, need_meas = _absent(system), _absent(meas)
    if need_system:
        desc = this_machine(submitter=submitter, system_name=system_name, division=division, status=status,
                            framework=framework, system_type=system_type)
        write_json(system, desc)
        written.append((system, "" if framework else "framework (and any accelerator you used)"))
    if need_meas:
        write_json(meas, dict.fromkeys(MEASUREMENT_FIELDS, ""))
        written.append((meas, ", ".join(MEASUREMENT_FIELDS)))
    return written


__all__ = ["MEASUREMENTS_FILE", "SYSTEM_FILE", "this_machine", "write_json", "write_templates"]
