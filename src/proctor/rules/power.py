"""Power, as data: what the rules say about power results, and the file layout they are read from.

The rules use power in three places: an inferred result's power metric uses the base result's
measured power (§Benchmarks, inferred results); a system with power metrics is exempt from random
audit only if its power efficiency is within 10 % of the last audit's, besides performance
(§Audit Process); and a Datacenter system measured for power must describe all its networking
(§Benchmarks, Datacenter networking). The metric itself (average watts for Offline/Server/
Interactive, energy per query in millijoules for SingleStream/MultiStream) and the file layout are
the official checker's (mlcommons/inference HEAD tools/submission/submission_checker), as cited.
"""

from __future__ import annotations

from proctor.rules.inference import RULES, Category

OFFICIAL = "mlcommons/inference HEAD tools/submission/submission_checker"
INFERRED_POWER = (
    f"{RULES} §Benchmarks, inferred results ('When inferring a metric for the power table, the measured "
    "power used to calculate the metric is the same as for the base result')"
)
AUDIT_EXEMPTION = (
    f"{RULES} §Audit Process ('For systems with power metrics, in addition to the performance, power "
    "efficiency must also be within 10% from the last audit time to be eligible for an exclusion from random audit')"
)
AUDIT_EXEMPTION_TOLERANCE = 0.10  # §Audit Process: performance, per-accelerator performance, power efficiency
POWER_NETWORKING = (
    f"{RULES} §Benchmarks, Datacenter systems ('All necessary networking must be populated if power is "
    "measured along with performance')"
)

# Layout (OFFICIAL constants.py POWER_DIR_PATH, REQUIRED_POWER_FILES, REQUIRED_PERF_POWER_FILES):
# <scenario>/performance/{power,ranging,run_1}.
LAYOUT_SOURCE = f"{OFFICIAL}/constants.py (POWER_DIR_PATH, REQUIRED_POWER_FILES, REQUIRED_PERF_POWER_FILES)"
POWER_DIR = "power"
RANGING_DIR = "ranging"
TESTING_DIR = "run_1"
POWER_FILES = ("client.json", "client.log", "ptd_logs.txt", "server.json", "server.log")
RUN_FILES = ("mlperf_log_detail.txt", "mlperf_log_summary.txt", "spl.txt")
SPL_FILE = "spl.txt"
# spl.txt (the PTDaemon sample log): "Time,<%m-%d-%Y %H:%M:%S.%f>,Watts,<W>,..."; the official
# checker averages the positive watts strictly inside (power_begin, power_end) of the detail log.
SPL_SOURCE = f"{OFFICIAL}/checks/power_check.py (get_power_metric_check)"
TIME_FORMAT = "%m-%d-%Y %H:%M:%S.%f"

# The summary's power row (OFFICIAL results.py: a second row per power result, Result = the power
# metric, Units = POWER_UNIT_DICT[scenario]).
SUMMARY_SOURCE = f"{OFFICIAL}/results.py (has_power, the power row) and constants.py POWER_UNIT_DICT"
WATTS = "Watts"
MILLIJOULES = "millijoules"
POWER_UNITS: dict[Category, str] = {
    Category.SINGLE_STREAM: MILLIJOULES,
    Category.MULTI_STREAM: MILLIJOULES,
    Category.OFFLINE: WATTS,
    Category.SERVER: WATTS,
    Category.INTERACTIVE: WATTS,
}
# Samples per query of the energy metrics (MultiStream: the rules fix 8).
SAMPLES_PER_QUERY: dict[Category, int] = {Category.SINGLE_STREAM: 1, Category.MULTI_STREAM: 8}

__all__ = [
    "AUDIT_EXEMPTION",
    "AUDIT_EXEMPTION_TOLERANCE",
    "INFERRED_POWER",
    "POWER_FILES",
    "POWER_UNITS",
    "RUN_FILES",
    "SAMPLES_PER_QUERY",
]
