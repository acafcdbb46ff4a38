"""The side files a submission needs besides the logs, started for the user: this machine's system
description and an unfilled measurements JSON (`proctor submission init`).

What proctor can read from the machine it fills in (CPU model, cores, memory, storage, network
cards, operating system), and a count as the string the official checker accepts ("0", not 0: the
official calls 0 empty). What only the submitter knows (the framework, the accelerators unless given,
memory and networking layout, cooling) it leaves empty and names (`unfilled`), and the checker
rejects an empty field by name, so a template is never mistaken for a finished description.
"""

from __future__ import annotations

import os
import platform
import shutil
from pathlib import Path
from typing import Any

import orjson

from proctor.errors import TreeError
from proctor.rules.inference import MEASUREMENT_FIELDS, SYSTEM_MEANINGFUL, empty_response
from proctor.trees import FILE, MISSING, kind, not_a_file, real_root, show, write_new

SYSTEM_FILE = "system.json"  # where `package` looks in RUNS when --system is not given
MEASUREMENTS_FILE = "measurements.json"
NO_ACCELERATOR = "N/A"  # what published CPU-only systems write in the accelerator fields
ACCELERATOR_FIELDS = (
    "accelerator_model_name", "accelerator_memory_capacity", "accelerator_host_interconnect",
    "accelerator_memory_configuration", "accelerator_interconnect", "accelerator_frequency",
    "accelerator_interconnect_topology", "accelerator_on-chip_memories",
)  # fmt: skip
SYS_NET = Path("/sys/class/net")


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
        return ""


def storage_gb(where: Path) -> str:
    """The capacity of the file system holding `where` (the runs), or "" when it cannot be read."""
    probe = where
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        return f"{shutil.disk_usage(probe).total / 1e9:.0f} GB"
    except OSError:
        return ""


def network_card_count(sys_net: Path = SYS_NET) -> str:
    """The network interfaces backed by a device (not loopback, bridges or veth pairs), as a string
    ("0" when there are none); "" when the kernel does not say."""
    try:
        return str(sum(1 for p in sys_net.iterdir() if (p / "device").exists()))
    except OSError:
        return ""


def this_machine(
    *, submitter: str, system_name: str, division: str, status: str, framework: str, system_type: str = "edge",
    notes: str = "", accelerators: int | None = None, storage: Path = Path("."),
) -> dict[str, Any]:
    """One description of this machine with every field the inference and training checkers require.

    `accelerators`: how many the SUT used per node (0: a CPU-only run, the accelerator fields say
    N/A); None leaves them to the submitter. `storage`: a path on the storage the runs are on."""
    cores = os.cpu_count() or 1
    desc: dict[str, Any] = {
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
        "host_storage_type": "",
        "host_storage_capacity": storage_gb(storage),
        "host_networking": "",
        "host_networking_topology": "",
        "host_network_card_count": network_card_count(),
        "accelerators_per_node": "" if accelerators is None else str(accelerators),
        **dict.fromkeys(ACCELERATOR_FIELDS, ""),
        "cooling": "",
        "hw_notes": "",
        "framework": framework,
        "operating_system": f"{platform.system()} {platform.release()}",
        "other_software_stack": f"Python {platform.python_version()}",
        "sw_notes": notes,
    }
    if accelerators == 0:
        desc |= dict.fromkeys(ACCELERATOR_FIELDS, NO_ACCELERATOR)
    return desc


def unfilled(desc: dict[str, Any]) -> list[str]:
    """The fields the official checker requires a meaningful response in that `desc` leaves empty."""
    return [k for k in SYSTEM_MEANINGFUL if empty_response(desc.get(k))]


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
    runs: Path, *, submitter: str, system_name: str, division: str, status: str, framework: str, system_type: str,
    accelerators: int | None = None,
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
                            framework=framework, system_type=system_type, accelerators=accelerators, storage=runs)
        write_json(system, desc)
        written.append((system, ", ".join(unfilled(desc))))
    if need_meas:
        write_json(meas, dict.fromkeys(MEASUREMENT_FIELDS, ""))
        written.append((meas, ", ".join(MEASUREMENT_FIELDS)))
    return written


__all__ = ["MEASUREMENTS_FILE", "SYSTEM_FILE", "this_machine", "unfilled", "write_json", "write_templates"]
