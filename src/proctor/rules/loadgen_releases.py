"""The official LoadGen releases, and which of them a round's results may come from.

The rule (Inference rules, §LoadGen Operation): "The LoadGen must be compiled from a tagged approved
revision of the mlperf/inference GitHub repository without alteration." A LoadGen built from that
repository logs, as the first line of every detail log (`loadgen/version.cc`, LogLoadgenVersion):

- `loadgen_version`: "<Version> @ <GitRevision>"; Version is `loadgen/VERSION.txt` (since commit
  ecb8801677, 2024-10-22; before it the literal in `loadgen/version_generator.py`), GitRevision the
  10-digit `git rev-parse --short=10 HEAD` of the build, or "NA" when built outside a git checkout
  (a source archive, a wheel built from one);
- `loadgen_git_status_message`: `git status -s -uno .` in loadgen/ ("" when unaltered, "NA" outside
  git); a non-empty one is logged with `error_uncommitted_loadgen_changes`;
- `loadgen_git_log_message`: the last 16 commits, newest first, each "<40-hex sha> <subject>".

proctor's own engine writes "proctor <version> (official LoadGen ... compatible)": such logs are
for development and are never a submittable result.

The versions below were read from the official repository (mlcommons/inference): `git log` of
loadgen/VERSION.txt and of the Version literal in loadgen/version_generator.py; each entry is the
version and the commit that set it. Which series a round accepts: its own and the one before,
as published and official sample results show (v4.1 results by UntetherAI log "4.0 @ 7fc059bf91",
NVIDIA's "4.1 @ c83565d85d"; the v5.1 samples in tools/submission/directory_structure_samples log
5.0.21, 5.0.24, 5.0.25 and 5.1.0). The seeds the round's mlperf.conf fixes (compiled into LoadGen
since 4.1.7) are checked separately.
"""

from __future__ import annotations

import re

from proctor.lazy_patterns import LazyPattern
from proctor.typed_records import record

SOURCE = (
    "Inference rules §LoadGen Operation ('The LoadGen must be compiled from a tagged approved revision "
    "of the mlperf/inference GitHub repository without alteration')"
)
RELEASES_SOURCE = "mlcommons/inference: git log of loadgen/VERSION.txt and loadgen/version_generator.py"
# What installs the official LoadGen (mlcommons-loadgen, the release pyproject.toml pins in proctor's
# `official` extra): named wherever a log or a run needs it (--engine official, the checker's verdict)
OFFICIAL_EXTRA = "pip install 'proctor[official]'"
OFFICIAL_EXTRA_CHECKOUT = 'pip install -e ".[official]"'  # the same from a source checkout


@record(frozen=True, slots=True)
class LoadgenRelease:
    """One official LoadGen version and the repository commit (10 hex digits) that set it."""

    version: str
    commit: str
    date: str


def _r(version: str, commit: str, date: str) -> LoadgenRelease:
    return LoadgenRelease(version, commit, date)


# fmt: off
RELEASES: tuple[LoadgenRelease, ...] = (
    # the Version literal in loadgen/version_generator.py
    _r(".5a1", "f854fd9646", "2019-05-09"), _r("1.1", "9e250a4bee", "2021-06-01"),
    _r("2.0", "0ca20e70d6", "2022-03-31"), _r("2.1", "22579b44a1", "2022-10-03"),
    _r("3.0", "b1c4cb972d", "2023-02-03"), _r("3.1", "2da0c52666", "2023-07-25"),
    _r("4.0", "8e36925bd3", "2024-01-17"), _r("4.1", "c83565d85d", "2024-07-10"),
    # loadgen/VERSION.txt
    _r("4.1.7", "ecb8801677", "2024-10-22"), _r("4.1.23", "c8c1e61f1a", "2024-10-31"),
    _r("4.1.24", "feca9f610b", "2024-12-03"), _r("4.1.29", "b6f5a343ba", "2024-12-04"),
    _r("4.1.30", "e7c301cc70", "2024-12-04"),
    _r("5.0.0", "8ce46d5fd7", "2024-12-09"), _r("5.0.1", "6afe9962a8", "2024-12-09"),
    _r("5.0.2", "1e48c0dce3", "2024-12-13"), _r("5.0.3", "b3e1e8e636", "2024-12-18"),
    _r("5.0.4", "6af0288cd0", "2024-12-19"), _r("5.0.5", "d6c3a8d9e0", "2025-01-07"),
    _r("5.0.6", "c40d6e1ef6", "2025-01-14"), _r("5.0.7", "1618142d40", "2025-01-14"),
    _r("5.0.8", "ded1712ff4", "2025-01-14"), _r("5.0.9", "7fe474165b", "2025-01-14"),
    _r("5.0.10", "ab7f700043", "2025-01-15"), _r("5.0.11", "ef1bd3b95e", "2025-01-15"),
    _r("5.0.12", "2ed0a3e0c8", "2025-01-21"), _r("5.0.13", "25bba8f6c6", "2025-01-21"),
    _r("5.0.14", "35030b8ce8", "2025-01-28"), _r("5.0.15", "d67b62657a", "2025-02-01"),
    _r("5.0.16", "c6d4f3658c", "2025-04-15"), _r("5.0.17", "654b6ec354", "2025-05-20"),
    _r("5.0.18", "088bb82889", "2025-06-10"), _r("5.0.19", "ab2b81063c", "2025-06-11"),
    _r("5.0.20", "248bc351bc", "2025-06-16"), _r("5.0.21", "d286c08030", "2025-06-16"),
    _r("5.0.22", "5c282545dc", "2025-06-17"), _r("5.0.23", "20628f046f", "2025-07-07"),
    _r("5.0.24", "745b9fe5fc", "2025-07-08"), _r("5.0.25", "1bc3e998cb", "2025-07-08"),
    _r("5.1.0", "c57507b122", "2025-07-21"), _r("5.1.1", "0e556f1cfc", "2025-10-13"),
    _r("5.1.2", "06c742a84a", "2025-11-26"),
    _r("6.0.0", "003f4fb38d", "2025-12-18"), _r("6.0.1", "abed98ce74", "2025-12-19"),
    _r("6.0.2", "0369dd1011", "2025-12-22"), _r("6.0.3", "27db053025", "2025-12-23"),
    _r("6.0.4", "93749590a4", "2026-01-06"), _r("6.0.5", "9142ef0e74", "2026-01-13"),
    _r("6.0.6", "65ef999eb7", "2026-01-20"), _r("6.0.7", "0c1353faf7", "2026-01-27"),
    _r("6.0.8", "236aa641b2", "2026-01-28"), _r("6.0.9", "6520e394e9", "2026-01-28"),
    _r("6.0.10", "0b4aa6f62e", "2026-02-06"), _r("6.0.11", "fa55ac47fa", "2026-03-27"),
    _r("6.0.12", "7adee7837e", "2026-03-27"), _r("6.0.13", "bdc87e2e73", "2026-03-30"),
    _r("6.0.14", "534cbfd4d6", "2026-04-10"), _r("6.0.15", "3546c66b9e", "2026-06-25"),
    _r("6.0.16", "2b5f63eb56", "2026-07-02"), _r("6.0.17", "d6147c7eb7", "2026-07-24"),
)
# fmt: on
VERSIONS: dict[str, LoadgenRelease] = {r.version: r for r in RELEASES}
BY_COMMIT: dict[str, LoadgenRelease] = {r.commit: r for r in RELEASES}

# The LoadGen series (major.minor) whose releases a round's results may come from.
ROUND_SERIES: dict[str, tuple[str, ...]] = {
    "v4.1": ("4.0", "4.1"),
    "v5.0": ("4.1", "5.0"),
    "v5.1": ("5.0", "5.1"),
    "v6.0": ("5.1", "6.0"),
    "v6.1": ("6.0", "6.1"),
}

# "<version> @ <revision>": the version as VERSION.txt holds it, the revision 10 hex digits or NA.
VERSION_LINE = re.compile(r"(?P<version>\.?\d+(?:\.\d+){0,2}[a-z0-9]*) @ (?P<rev>[0-9a-f]{7,40}|NA)")
LOG_SHA = LazyPattern(r"[0-9a-f]{40}")


def series(version: str) -> str:
    """'6.0.17' -> '6.0'; the literal versions before VERSION.txt are their own series."""
    parts = version.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 and parts[0] else version


def round_series(round_: str) -> tuple[str, ...] | None:
    """The series a round accepts; None for a round this table does not cover (then any release)."""
    return ROUND_SERIES.get(round_)


def parse_version_line(value: object) -> tuple[str, str] | None:
    """(version, revision) of an official `loadgen_version` value, else None."""
    if not isinstance(value, str) or len(value) > 200:
        return None
    m = VERSION_LINE.fullmatch(value.strip())
    return (m["version"], m["rev"]) if m else None


__all__ = [
    "BY_COMMIT",
    "RELEASES",
    "RELEASES_SOURCE",
    "ROUND_SERIES",
    "SOURCE",
    "VERSIONS",
    "LoadgenRelease",
    "parse_version_line",
    "round_series",
    "series",
]
