"""`systems/<system>.json`: the fields every system description needs, and agreement with its folders.

The field list is the official checker's SYSTEM_DESC_REQUIRED_FIELDS; the rules (§Audit Process,
§Networking) lean on this JSON to decide system equivalence and networking, so a missing field is an
error, and one of SYSTEM_DESC_MEANINGFUL_RESPONSE_REQUIRED_FIELDS that the official calls empty
(`not value`: "", 0, null, [] or {}; rules.inference.empty_response) is an error too. `system_type`
decides which suite's required scenarios apply.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from proctor.findings import Finding, Severity
from proctor.lazy_patterns import LazyPattern
from proctor.rules.inference import (
    DC_MINIMUM,
    FORBIDDEN_BUS_INTERCONNECTS,
    NETWORK_GENERAL,
    PERMITTED_FABRICS,
    SYSTEM_FIELDS,
    SYSTEM_MEANINGFUL,
    Suite,
    empty_response,
)
from proctor.trees import FILE, LINK, MISSING, kind, not_a_file, read_at_most

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

STATUSES = ("available", "preview", "rdi")
SYSTEM_TYPES: dict[str, tuple[Suite, ...]] = {
    "datacenter": (Suite.DATACENTER,),
    "edge": (Suite.EDGE,),
    "datacenter,edge": (Suite.DATACENTER, Suite.EDGE),
    "edge,datacenter": (Suite.DATACENTER, Suite.EDGE),
}
# The fields a value of another type makes unusable (the official checker writes them into its CSV as
# text, or counts with them): a string or a number.
SYSTEM_SCALARS = (
    "division", "submitter", "system_type", "status", "system_name", "number_of_nodes",
    "host_processor_model_name", "host_processors_per_node", "host_processor_core_count",
    "host_memory_capacity", "accelerators_per_node", "accelerator_model_name", "framework", "operating_system",
)  # fmt: skip
# Counts: a whole number (or a string holding one) in a sane range.
SYSTEM_COUNTS = ("number_of_nodes", "host_processors_per_node", "host_processor_core_count", "accelerators_per_node")
# Network division (the official SYSTEM_DESC_REQUIRED_FIELDS_NETWORK_MODE): the fabric (type, media,
# rate, topology), the protocol, and both ends' interfaces and stacks: what the rules (§Network
# Division, General Constraints) ask for, "sufficient to determine OSI layers one through four".
NETWORK_FLAG = "is_network"
# fmt: off
NETWORK_FIELDS = (
    "network_type", "network_media", "network_rate", "nic_loadgen", "number_nic_loadgen",
    "net_software_stack_loadgen", "network_protocol", "number_connections", "nic_sut", "number_nic_sut",
    "net_software_stack_sut", "network_topology",
)
# fmt: on
FABRICS = PERMITTED_FABRICS
# A named bus interconnect as a whole word ("PCIe Gen5", "NVLink4"; not "efficient" for ICI).
_BUS = LazyPattern(
    r"(?<![A-Za-z])(" + "|".join(re.escape(b) for b in FORBIDDEN_BUS_INTERCONNECTS) + r")(?![a-z])",
    re.IGNORECASE,
)
INTERCONNECT_FIELDS = ("network_type", "network_media")
# The datacenter minimum (§Minimum requirements of a datacenter system): ECC on DRAM and HBM, and the
# networking described in the system JSON. ECC is read from the memory fields; only an explicit "no"
# can be checked (the JSON has no ECC field).
PLACEHOLDERS = ("n/a", "na", "none", "-", "tbd", "unknown")
MEMORY_FIELDS = ("host_memory_configuration", "accelerator_memory_configuration")
_NO_ECC = re.compile(
    r"\b(non[- ]?ecc|no[- ]ecc|without[- ]ecc|ecc[- ]?(?:disabled|off|none|no)\b|ecc\s*[:=]\s*(?:disabled|off|no|none|false)\b)",
    re.IGNORECASE,
)
MAX_COUNT = 1 << 31
MAX_BYTES = 1 << 20  # a system description is a few KB


class _Duplicate(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _Duplicate(k)
        out[k] = v
    return out


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def _constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def load_strict_json(data: bytes, duplicates: list[str] | None = None) -> Any:
    """JSON as the rules' tools expect it: no duplicate keys, no NaN/Infinity, no numbers out of range.

    Raises ValueError (the message says what is wrong); deep nesting raises it too. With a
    `duplicates` list, a repeated key is recorded there and its last value kept (as Python's json,
    the official tools' reader, keeps it) instead of raising.
    """
    if duplicates is not None:
        def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
            out: dict[str, Any] = {}
            for k, v in pairs:
                if k in out and len(duplicates) < 100:
                    duplicates.append(k)
                out[k] = v
            return out
    else:
        hook = _pairs
    if data.startswith(b"\xef\xbb\xbf"):  # Python's json (the official checker) refuses it too
        raise ValueError("starts with a UTF-8 byte-order mark; save the file without one")
    try:
        return json.loads(data.decode("utf-8"), object_pairs_hook=hook, parse_float=_finite, parse_constant=_constant)
    except _Duplicate as exc:
        raise ValueError(f"duplicate key '{exc.args[0]}'") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text") from None
    except ValueError as exc:  # JSONDecodeError, too many digits, a number out of range
        raise ValueError(" ".join(str(exc).split())[:200]) from None


def _count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    # ASCII digits only: str.isdigit() is true for "¹" and "²", which int() refuses
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 12:
        value = int(value.strip())
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and 0 <= value < MAX_COUNT else None


def system_suites(desc: dict[str, Any] | None) -> tuple[Suite, ...]:
    value = (desc or {}).get("system_type", "")
    return SYSTEM_TYPES.get(value.replace(" ", "").lower(), ()) if isinstance(value, str) else ()


def check_system_description(
    path: Path, division: str, submitter: str
) -> tuple[dict[str, Any] | None, list[Finding]]:
    """Load and check one description; None when it is missing or not a JSON object."""

    def err(message: str, key: str | None = None, severity: Severity = Severity.ERROR) -> Finding:
        return Finding(rule="system_description", path=str(path), message=message, key=key, severity=severity)

    got = kind(path)  # a link is never followed, a FIFO never opened (it would block the read)
    if got == MISSING:
        return None, [err(f"missing system description; write systems/{path.name} with the required fields")]
    if got.startswith("error"):
        return None, [err(f"cannot read it ({got[7:]}); fix its permissions")]
    if got == LINK:
        return None, [err(f"not read: {not_a_file(path, got)}")]
    if got != FILE:
        return None, [err("not a regular file (a folder, FIFO or device); put the JSON file itself here")]
    try:
        with open(path, "rb") as fh:
            data = read_at_most(fh, MAX_BYTES)
    except OSError as exc:
        return None, [err(f"cannot read it ({exc.strerror or exc}); fix its permissions")]
    if len(data) > MAX_BYTES:
        return None, [err(f"larger than {MAX_BYTES} bytes: not a system description")]
    repeated: list[str] = []
    try:
        desc = load_strict_json(data, duplicates=repeated)
    except ValueError as exc:
        return None, [err(f"not valid JSON: {exc}")]
    if not isinstance(desc, dict):
        return None, [err("must be a JSON object")]
    out: list[Finding] = []
    if repeated:  # the official reader (Python's json) keeps the last value: ambiguous, not invalid
        out.append(
            err(
                f"duplicate key(s) {', '.join(sorted(set(repeated))[:5])}: the last value is the one read; keep one",
                repeated[0],
                Severity.WARNING,
            )
        )
    # a value the official calls empty is reported as empty below; any other non-scalar is the wrong type
    wrong = [
        k
        for k in SYSTEM_SCALARS
        if k in desc and not empty_response(desc[k]) and (isinstance(desc[k], bool) or not isinstance(desc[k], str | int | float))
    ]
    if wrong:
        out.append(err(f"fields must be a string or a number: {', '.join(wrong)}", wrong[0]))
    bad_counts = [k for k in SYSTEM_COUNTS if k in desc and k not in wrong and _count(desc[k]) is None]
    if bad_counts:
        out.append(
            err(
                f"fields should be whole numbers from 0 to {MAX_COUNT - 1}: {', '.join(bad_counts)}",
                bad_counts[0],
                Severity.WARNING,  # the official checker does not check them; reviewers will
            )
        )

    def text(key: str) -> str:  # a wrongly typed field was reported above: read it as empty
        v = desc.get(key, "")
        return "" if key in wrong or not isinstance(v, str | int | float) else str(v)

    missing = [k for k in SYSTEM_FIELDS if k not in desc]
    if missing:
        out.append(err(f"missing fields: {', '.join(missing)}", missing[0]))
    # empty as the official judges it (`not value`: "", 0, null, [] and {}); a blank string passes there
    empty = [k for k in SYSTEM_MEANINGFUL if k in desc and k not in wrong and empty_response(desc[k])]
    if empty:
        out.append(
            err(
                f"fields must hold a meaningful response, not empty (the official checker counts \"\", 0, "
                f"null, [] and {{}} as empty; write \"0\" for a count of none): {', '.join(empty)}",
                empty[0],
            )
        )
    blank = [k for k in SYSTEM_MEANINGFUL if isinstance(desc.get(k), str) and desc[k] and not desc[k].strip()]
    if blank:
        out.append(
            err(
                f"fields hold only spaces (the official checker accepts them): {', '.join(blank)}; say what they are",
                blank[0],
                Severity.WARNING,
            )
        )
    div = text("division").lower()
    if div and div != division:
        out.append(err(f"division '{div[:80]}' does not match the folder '{division}'", "division"))
    sub = text("submitter")
    if sub and sub.casefold() != submitter.casefold():  # the official compares case-insensitively
        out.append(err(f"submitter '{sub[:80]}' does not match the folder '{submitter}'", "submitter"))
    status = text("status").lower()
    if status and status not in STATUSES:
        out.append(err(f"status '{status[:80]}' must be one of {', '.join(STATUSES)}", "status"))
    stype = text("system_type").replace(" ", "").lower()
    if stype and stype not in SYSTEM_TYPES:
        out.append(err(f"system_type '{stype[:80]}' must be datacenter, edge or datacenter,edge", "system_type"))
    out += _network(desc, division, err)
    if Suite.DATACENTER in SYSTEM_TYPES.get(stype, ()):
        out += _datacenter(desc, err, text)
    return desc, out


def _datacenter(desc: dict[str, Any], err: Any, text: Any) -> list[Finding]:
    """The rules' minimum for a datacenter system: networking described, ECC not turned off."""
    out: list[Finding] = []
    said = text("host_networking").strip()  # empty: the meaningful-response check names it
    if said and said.lower().strip(".") in PLACEHOLDERS:
        out.append(
            err(
                f"host_networking is '{said}': a datacenter system should describe its networking in the "
                f"system JSON ({DC_MINIMUM}, Networking); published results say 'N/A' and were accepted",
                "host_networking",
                Severity.WARNING,
            )
        )
    for key in MEMORY_FIELDS:
        said = text(key)
        if _NO_ECC.search(said[:2000]):
            out.append(
                err(
                    f"{key} says the memory runs without ECC ('{said[:80]}'): a datacenter submission must use "
                    f"ECC on DRAM and HBM for every run ({DC_MINIMUM}, ECC)",
                    key,
                )
            )
    return out


def _flag(value: Any) -> bool | None:
    """`is_network` as true/false; None when it says neither."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def _network(desc: dict[str, Any], division: str, err: Any) -> list[Finding]:
    """The network division's fields and the datacenter-only rule; other divisions must not claim it."""
    out: list[Finding] = []
    flag = _flag(desc.get(NETWORK_FLAG)) if NETWORK_FLAG in desc else False
    if NETWORK_FLAG in desc and flag is None:
        out.append(err(f"'{NETWORK_FLAG}' must be \"true\" or \"false\"", NETWORK_FLAG))
    elif isinstance(desc.get(NETWORK_FLAG), bool):
        out.append(
            err(
                f"'{NETWORK_FLAG}' is a JSON boolean; write the string \"{str(flag).lower()}\" "
                "(the official checker calls .lower() on it and fails)",
                NETWORK_FLAG,
                Severity.WARNING,
            )
        )
    if division == "closed" and flag:
        out.append(err(f"'{NETWORK_FLAG}' is true in the closed division; move the result to network", NETWORK_FLAG))
    if division != "network":
        return out
    if flag is False:
        out.append(err(f"the network division needs '{NETWORK_FLAG}': \"true\"", NETWORK_FLAG))
    missing = [k for k in NETWORK_FIELDS if k not in desc]
    if missing:
        out.append(
            err(
                f"missing network fields: {', '.join(missing)} (fabric, protocol and both ends' interfaces: "
                "OSI layers 1 to 4 must be clear from them)",
                missing[0],
            )
        )
    empty = [k for k in NETWORK_FIELDS if k in desc and str(desc[k] if desc[k] is not None else "").strip() == ""]
    if empty:
        out.append(err(f"network fields must not be empty: {', '.join(empty)}", empty[0]))
    for key in INTERCONNECT_FIELDS:
        named = desc.get(key)
        bus = _BUS.search(named[:2000]) if isinstance(named, str) else None
        if bus is not None and isinstance(named, str):
            out.append(
                err(
                    f"{key} '{named[:80]}' names {bus.group(1)}, a bus interconnect: the network division "
                    f"forbids bus interconnects between LoadGen and SUT; use a fabric (Ethernet, IEEE802.11, "
                    f"Infiniband, 3GPP) or submit in open ({NETWORK_GENERAL})",
                    key,
                )
            )
    fabric = desc.get("network_type")
    if isinstance(fabric, str) and _BUS.search(fabric[:2000]):
        pass  # reported above as an error
    elif isinstance(fabric, str) and fabric.strip() and not any(f in fabric.lower() for f in FABRICS):
        out.append(
            err(
                f"network_type '{fabric[:80]}' is not a permitted fabric (Ethernet, IEEE802.11, Infiniband, "
                "3GPP); another needs the Inference WG's clearance",
                "network_type",
                Severity.WARNING,
            )
        )
    stype = str(desc.get("system_type", "")).replace(" ", "").lower()
    if stype and stype != "datacenter":
        out.append(
            err(
                f"system_type '{stype[:80]}': the network division supports only the datacenter suite",
                "system_type",
            )
        )
    return out
