"""`systems/<system>.json`: the fields every system description needs, and agreement with its folders.

The field list is the official checker's SYSTEM_DESC_REQUIRED_FIELDS; the rules (§Audit Process,
§Networking) lean on this JSON to decide system equivalence and networking, so a missing field is an
error. `system_type` decides which suite's required scenarios apply.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from proctor.findings import Finding
from proctor.rules.inference import Suite

STATUSES = ("available", "preview", "rdi")
SYSTEM_TYPES: dict[str, tuple[Suite, ...]] = {
    "datacenter": (Suite.DATACENTER,),
    "edge": (Suite.EDGE,),
    "datacenter,edge": (Suite.DATACENTER, Suite.EDGE),
    "edge,datacenter": (Suite.DATACENTER, Suite.EDGE),
}
# fmt: off
SYSTEM_FIELDS = (
    "division", "submitter", "status", "system_name", "number_of_nodes", "host_processor_model_name",
    "host_processors_per_node", "host_processor_core_count", "host_memory_capacity", "host_storage_capacity",
    "host_storage_type", "accelerators_per_node", "accelerator_model_name", "accelerator_memory_capacity",
    "framework", "operating_system", "system_type", "other_software_stack", "host_processor_frequency",
    "host_processor_caches", "host_memory_configuration", "host_processor_interconnect", "host_networking",
    "host_networking_topology", "accelerator_frequency", "accelerator_host_interconnect",
    "accelerator_interconnect", "accelerator_interconnect_topology", "accelerator_memory_configuration",
    "accelerator_on-chip_memories", "cooling", "hw_notes", "sw_notes", "host_network_card_count",
    "system_type_detail",
)
# Of those, the ones that must say something (not "").
SYSTEM_MEANINGFUL = (
    "division", "submitter", "system_type", "status", "system_name", "number_of_nodes",
    "host_processor_model_name", "host_processors_per_node", "host_processor_core_count",
    "host_memory_capacity", "accelerators_per_node", "accelerator_model_name", "framework", "operating_system",
)
# fmt: on


def system_suites(desc: dict[str, Any] | None) -> tuple[Suite, ...]:
    return SYSTEM_TYPES.get(str((desc or {}).get("system_type", "")).replace(" ", "").lower(), ())


def check_system_description(
    path: Path, division: str, submitter: str
) -> tuple[dict[str, Any] | None, list[Finding]]:
    """Load and check one description; None when it is missing or not a JSON object."""

    def err(message: str, key: str | None = None) -> Finding:
        return Finding(rule="system_description", path=str(path), message=message, key=key)

    if not path.is_file():
        return None, [err(f"missing system description; write systems/{path.name} with the required fields")]
    try:
        desc = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        return None, [err(f"not valid JSON: {exc}")]
    if not isinstance(desc, dict):
        return None, [err("must be a JSON object")]
    out: list[Finding] = []
    missing = [k for k in SYSTEM_FIELDS if k not in desc]
    if missing:
        out.append(err(f"missing fields: {', '.join(missing)}", missing[0]))
    empty = [k for k in SYSTEM_MEANINGFUL if k in desc and str(desc[k]).strip() == ""]
    if empty:
        out.append(err(f"fields must not be empty: {', '.join(empty)}", empty[0]))
    div = str(desc.get("division", "")).lower()
    if div and div != division:
        out.append(err(f"division '{div}' does not match the folder '{division}'", "division"))
    sub = str(desc.get("submitter", ""))
    if sub and sub != submitter:
        out.append(err(f"submitter '{sub}' does not match the folder '{submitter}'", "submitter"))
    status = str(desc.get("status", "")).lower()
    if status and status not in STATUSES:
        out.append(err(f"status '{status}' must be one of {', '.join(STATUSES)}", "status"))
    stype = str(desc.get("system_type", "")).replace(" ", "").lower()
    if stype and stype not in SYSTEM_TYPES:
        out.append(err(f"system_type '{stype}' must be datacenter, edge or datacenter,edge", "system_type"))
    return desc, out
