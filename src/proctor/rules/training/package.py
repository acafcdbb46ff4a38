"""What a training submission package must hold: system description fields, statuses, divisions.

Sources: the official mlperf-logging 4.1.68 `system_desc_checker.py` (required fields, the status
values for rulesets >= 4). Which benchmarks a round has and how many runs each needs are the
benchmarks' records (`rules/training/benchmarks.py`).
"""

from __future__ import annotations

SYSTEM_REQUIRED_FIELDS: tuple[str, ...] = (
    "submitter",
    "division",
    "status",
    "system_name",
    "number_of_nodes",
    "host_processors_per_node",
    "host_processor_model_name",
    "host_processor_core_count",
    "host_processor_vcpu_count",
    "host_processor_frequency",
    "host_processor_caches",
    "host_processor_interconnect",
    "host_memory_capacity",
    "host_storage_type",
    "host_storage_capacity",
    "host_networking",
    "host_networking_topology",
    "host_memory_configuration",
    "accelerators_per_node",
    "accelerator_model_name",
    "accelerator_host_interconnect",
    "accelerator_frequency",
    "accelerator_on-chip_memories",
    "accelerator_memory_configuration",
    "accelerator_memory_capacity",
    "accelerator_interconnect",
    "accelerator_interconnect_topology",
    "cooling",
    "hw_notes",
    "framework",
    "other_software_stack",
    "operating_system",
    "sw_notes",
)

# system_desc_checker: enforced for ruleset major >= 4.
SYSTEM_STATUS_VALUES: tuple[str, ...] = (
    "Available on-premise",
    "Available cloud",
    "Research, Development, or Internal (RDI)",
    "Preview",
)
STATUS_MIN_MAJOR = 4
# `proctor training init --status`: a short name for each allowed value (the values themselves work too).
STATUS_ALIASES: dict[str, str] = {
    "available": "Available on-premise",
    "on-premise": "Available on-premise",
    "cloud": "Available cloud",
    "rdi": "Research, Development, or Internal (RDI)",
    "preview": "Preview",
}

DIVISIONS = ("closed", "open")

# Rulesets the package checker runs seeds and RCPs for (closed division).
RCP_RULESETS = frozenset(
    {
        "1.0.0",
        "1.1.0",
        "2.0.0",
        "2.1.0",
        "3.0.0",
        "3.1.0",
        "4.0.0",
        "4.1.0",
        "5.0.0",
        "5.1.0",
        "6.0.0",
        "6.1.0",
    }
)

# Params file lines (002 §13: "create a file called package_checker_params in the root directory /
# system directory / benchmark results directory of your submission and put the flags ... there").
PARAMS_FILE = "package_checker_params"
PARAM_RCP_BYPASS = "rcp-bypass"
PARAM_SEED_BYPASS = "seed-checker-bypass"

