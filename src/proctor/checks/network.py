"""The Network division's rules that a tree shows beyond the system description: what crossed the
network (inference data, not sample indices; compression only where the benchmark allows it) and
what the submission must contain (the QDL's source, a system diagram).

Evidence: the detail log's `sut_name`, where proctor's QDL (`proctor.clients.network`) names its
input mode (`input=index`) and QSL-side compression (`compress=<codec>`); the official LoadGen logs
whatever Name() returns, so a submitter's own QDL states the same there or passes unflagged.
"""

from __future__ import annotations

import os
from pathlib import Path

from proctor.checks.detail_log import DetailLogData, short
from proctor.findings import Finding
from proctor.lazy_patterns import LazyPattern
from proctor.rules.inference import (
    COMPRESSION_OPTIONS,
    NETWORK_QDL,
    NETWORK_QSL_TABLE,
    NETWORK_SETUP,
    Benchmark,
)
from proctor.trees import is_dir

_TAG = LazyPattern(r"(?:^|\s)(input|compress)=([A-Za-z0-9_.+-]{1,40})")
NO_COMPRESSION = ("none", "off", "0")
DIAGRAM_SUFFIXES = (".png", ".jpg", ".jpeg", ".svg", ".pdf", ".gif", ".webp")
DIAGRAM_DIRS = ("systems", "documentation", "docs")
SOURCE_DIRS = ("code", "src")
MAX_WALK = 20_000  # entries looked at per folder: a submission holds far fewer outside results/


def name_tags(sut_name: str) -> dict[str, str]:
    """The `key=value` tags of a QDL's name (`input`, `compress`), lower-cased; bounded input."""
    return {k: v.lower() for k, v in _TAG.findall(sut_name[:4096])}


def check_network_run(log: DetailLogData, bench: Benchmark) -> list[Finding]:
    """One network-division performance run: index mode and compression, read from `sut_name`."""
    name = log.get("sut_name")
    if not isinstance(name, str):
        return []
    tags, out = name_tags(name), []
    line = log.line_of("sut_name")
    if tags.get("input") == "index":
        out.append(
            Finding(
                rule="network_index_mode",
                path=log.path,
                line=line,
                key="sut_name",
                value=short(name),
                source=NETWORK_SETUP,
                message="the nodes were sent sample indices, not inference data (sut_name says "
                "'input=index'); the rules require every query to carry its inference data over the network: "
                "serve a SUT whose inputs cross the wire (tensor mode) or submit in open",
            )
        )
    method = tags.get("compress")
    if method is not None and method not in NO_COMPRESSION and "lossless" not in bench.network_compression:
        allowed = ", ".join(COMPRESSION_OPTIONS[o] for o in bench.network_compression)
        out.append(
            Finding(
                rule="network_compression",
                path=log.path,
                line=line,
                key="sut_name",
                value=short(name),
                expected=allowed,
                source=NETWORK_QSL_TABLE,
                message=f"{bench.display}: the QSL compressed the queries ({method}); the rules allow "
                f"only: {allowed}. Rerun with compress=none",
            )
        )
    return out


def _walk_files(root: Path, suffixes: tuple[str, ...] | None) -> bool:
    """Whether `root` holds a regular file (with one of `suffixes`), looking at MAX_WALK entries at most."""
    seen = 0
    stack = [root]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    seen += 1
                    if seen > MAX_WALK:
                        return False
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(Path(entry.path))
                    elif entry.is_file(follow_symlinks=False) and (
                        suffixes is None or entry.name.lower().endswith(suffixes)
                    ):
                        return True
        except OSError:
            continue
    return False


def check_network_submitter(root: Path) -> list[Finding]:
    """A network submitter's folder: the QDL source and a system diagram (§Network Division)."""
    out: list[Finding] = []
    if not any(_walk_files(root / d, None) for d in SOURCE_DIRS if is_dir(root / d)):  # no link followed
        out.append(
            Finding(
                rule="network_qdl_source",
                path=str(root / SOURCE_DIRS[0]),
                source=NETWORK_QDL,
                message="no source code found in code/ (or src/): the network division must include the QDL's "
                "source above the session layer and documentation of the session-layer API",
            )
        )
    if not any(_walk_files(root / d, DIAGRAM_SUFFIXES) for d in DIAGRAM_DIRS if is_dir(root / d)):
        out.append(
            Finding(
                rule="network_diagram",
                path=str(root / DIAGRAM_DIRS[0]),
                source=NETWORK_SETUP,
                message="no system diagram found (an image or PDF under systems/ or documentation/): the "
                "network division must include one showing how the LoadGen node and the SUT nodes are "
                "connected, with the text needed to understand it",
            )
        )
    return out
