"""The demo's system descriptions: this machine (submission.describe) under the demo's submitter and
system name, in the inference form and in the training form `proctor training init` writes."""

from __future__ import annotations

from typing import Any

from proctor.app.demo.options import SUBMITTER, SYSTEM


def system_description(*, division: str, status: str, framework: str) -> dict[str, Any]:
    """This machine's description (submission.describe) under the demo's submitter and system name:
    the digits workloads run on the CPU in one process, and what the demo cannot read says so."""
    from proctor.submission.describe import this_machine, unfilled

    desc = this_machine(submitter=SUBMITTER, system_name=SYSTEM, division=division, status=status,
                        framework=framework, notes="proctor demo", accelerators=0)
    desc |= {"system_type_detail": "this machine, as the demo found it",
             "host_networking": "none used (the demo's SUT runs in its process)",
             "host_networking_topology": "none used (the demo's SUT runs in its process)"}
    return desc | dict.fromkeys(unfilled(desc), "not read by the demo")


def training_system_description(*, framework: str) -> dict[str, str]:
    """The training package's systems/<system>.json: the fields the training checkers require, each
    as text (the official package checker fails on a count written as a number), as `proctor
    training init` writes them; what the demo cannot read says so."""
    from proctor.submission.training_package import system_template

    desc = system_template(submitter=SUBMITTER, system_name=SYSTEM, division="closed",
                           status="Available on-premise", framework=framework)
    demo = system_description(division="closed", status="Available on-premise", framework=framework)
    return {k: v if v.strip() else str(demo.get(k) or "not read by the demo") for k, v in desc.items()}


__all__ = ["system_description", "training_system_description"]
