"""Whether a detail log was written by an official LoadGen release the round accepts, unaltered.

The rule and the releases: proctor.rules.loadgen_releases. A log proctor's own engine wrote (or any
log whose `loadgen_version` is not an official release's) is the `unofficial_loadgen` finding: an
error in every division, or a warning under the development switch (`allow_unofficial=True`,
`proctor check submission --allow-unofficial-loadgen`), when the tree is still not submittable.
An official release from another round's series is a warning (it is still a tagged approved
revision); a build whose logged git fields show it was altered is an error either way.
"""

from __future__ import annotations

from proctor.checks.detail_log import DetailLogData, short
from proctor.findings import Finding, Severity
from proctor.rules.loadgen_releases import (
    BY_COMMIT,
    LOG_SHA,
    OFFICIAL_EXTRA,
    OFFICIAL_EXTRA_CHECKOUT,
    RELEASES,
    RELEASES_SOURCE,
    SOURCE,
    VERSIONS,
    parse_version_line,
    round_series,
    series,
)

UNOFFICIAL = "unofficial_loadgen"
RELEASE = "loadgen_release"
ALTERED = "loadgen_altered"
ENDPOINTS_KEY = "endpoints_version"  # logs of mlcommons/endpoints, which the official checker maps
# How to make a tree of proctor-engine logs submittable: said once per command, under its verdict
# (`unofficial_verdict`); each log's finding names only its log and `--engine official`.
RERUN = (
    "for a submittable result, run the same commands again with `--engine official` (the official "
    f"mlperf_loadgen: `{OFFICIAL_EXTRA}`, or `{OFFICIAL_EXTRA_CHECKOUT}` in a checkout; same SUT, same "
    "options): `proctor run ... --engine official` for the results and `proctor audit all ... --engine "
    "official` for the audits, then check the tree again"
)
_KNOWN_SERIES = frozenset(series(r.version) for r in RELEASES)


def check_loadgen_origin(log: DetailLogData, round_: str, *, allow_unofficial: bool = False) -> list[Finding]:
    """The log's LoadGen identity against the official releases of `round_` (no finding when the log
    could not be read: that is reported already)."""
    if not log.values:
        return []
    if ENDPOINTS_KEY in log and "loadgen_version" not in log:
        value = log.get(ENDPOINTS_KEY)
        if isinstance(value, str) and value.strip():
            return []  # the official checker reads mlcommons/endpoints logs as LoadGen's (ENDPOINTS_MAPPINGS)
    value = log.get("loadgen_version")
    parsed = parse_version_line(value)
    known = parsed is not None and (parsed[0] in VERSIONS or series(parsed[0]) in _KNOWN_SERIES)
    if parsed is None or not known:
        return [_unofficial(log, value, allow_unofficial)]
    version, rev = parsed
    out: list[Finding] = []
    line = log.line_of("loadgen_version")
    allowed = round_series(round_)
    if allowed is not None and series(version) not in allowed:
        out.append(
            Finding(
                rule=RELEASE,
                path=log.path,
                line=line,
                key="loadgen_version",
                value=value,
                expected=", ".join(f"{s}.x" for s in allowed),
                # a tagged release of another round is still "a tagged approved revision": the rules
                # name no round, so this is a warning (a published v5.1 result used LoadGen 4.1)
                severity=Severity.WARNING,
                message=f"LoadGen {version} is not of round {round_}'s series ({' or '.join(allowed)}); it is an "
                "official release, but make sure the round's instructions accept it",
                source=f"{SOURCE}; {RELEASES_SOURCE}",
            )
        )
    elif version not in VERSIONS:
        newest = max((r for r in RELEASES if series(r.version) == series(version)), key=lambda r: r.date)
        out.append(
            Finding(
                rule=RELEASE,
                path=log.path,
                line=line,
                key="loadgen_version",
                value=value,
                severity=Severity.WARNING,
                message=f"LoadGen {version} is not in proctor's table of official releases (newest known of "
                f"the {series(version)} series: {newest.version}); make sure it is a tagged approved release",
                source=f"{SOURCE}; {RELEASES_SOURCE}",
            )
        )
    out += _altered(log, version, rev)
    return out


def _unofficial(log: DetailLogData, value: object, allow: bool) -> Finding:
    if value is None:
        what = "has no loadgen_version: it was not written by the official LoadGen"
    elif isinstance(value, str) and value.startswith("proctor"):
        what = f"was written by proctor's own engine (loadgen_version {short(value, 80)}), not the official LoadGen"
    else:
        what = f"loadgen_version {short(value, 80)} is not an official LoadGen release"
    severity = Severity.WARNING if allow else Severity.ERROR
    tail = "; development only (--allow-unofficial-loadgen): not submittable" if allow else ""
    return Finding(
        rule=UNOFFICIAL,
        path=log.path,
        line=log.line_of("loadgen_version"),
        key="loadgen_version",
        value=value if isinstance(value, str | None) else short(value),
        severity=severity,
        message=f"this log {what}{tail}; run it again with `--engine official` (how: under the verdict)",
        source=SOURCE,
    )


def _altered(log: DetailLogData, version: str, rev: str) -> list[Finding]:
    """The git fields an official build logs, where they show an altered or mislabelled build."""
    out: list[Finding] = []

    def bad(key: str, message: str) -> None:
        out.append(
            Finding(
                rule=ALTERED,
                path=log.path,
                line=log.line_of(key),
                key=key,
                message=message + "; build LoadGen from the tagged release without changes and run again",
                source=SOURCE,
            )
        )

    release = BY_COMMIT.get(rev)
    if release is not None and release.version != version:
        bad(
            "loadgen_version",
            f"revision {rev} is the official commit of LoadGen {release.version}, not {version}",
        )
    status = log.get("loadgen_git_status_message")
    if isinstance(status, str) and status.strip() and status.strip() != "NA":
        bad(
            "loadgen_git_status_message",
            f"LoadGen was built with uncommitted changes ({short(status.strip(), 80)})",
        )
    history = log.get("loadgen_git_log_message")
    if rev != "NA" and isinstance(history, str) and history.strip() and history.strip() != "NA":
        first = LOG_SHA.match(history.strip()[:40])
        if first is not None and not first.group().startswith(rev):
            bad(
                "loadgen_git_log_message",
                f"the logged git history starts at {first.group()[:10]}, not at the logged revision {rev}",
            )
    return out


def unofficial_verdict(n: int, allowed: bool) -> str:
    """The line under a checked tree's verdict when `n` logs are not from an official LoadGen."""
    if allowed:
        return (
            f"NOT SUBMITTABLE: {n} log(s) were not written by an official LoadGen release (proctor's own "
            f"engine), let through only by --allow-unofficial-loadgen; {RERUN}"
        )
    return (
        f"{n} log(s) were not written by an official LoadGen release (proctor's own engine): {RERUN}; "
        "to check such a tree for development only, add --allow-unofficial-loadgen"
    )


__all__ = ["ALTERED", "RELEASE", "RERUN", "UNOFFICIAL", "check_loadgen_origin", "unofficial_verdict"]
