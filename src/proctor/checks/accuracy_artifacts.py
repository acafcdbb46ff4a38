"""The files a result's `accuracy/` folder holds beside the logs for reviewers to look at (SDXL's
generated images, WAN-2.2's videos), as the round's official checker requires them.

The official check (REQUIRED_ACC_BENCHMARK, `check_extra_files`): the folder (`images/`, `videos/`)
exists and holds a regular file for each required name, names compared up to their first "." (so
`2747.png` and `2747.jpeg` both count); the captions file is named when missing but does not fail the
check. A result without them is rejected; in rounds v4.1-v5.1 the checker keeps an open-division
result whose accuracy check failed, so there it is a warning. `--skip-extra-accuracy-files-check`
skips the check, as the official switch of that name does (an info finding says so per result).
"""

from __future__ import annotations

import os
from pathlib import Path

from proctor.findings import Finding, Severity
from proctor.rules.inference_rounds import AccuracyArtifacts

RULE = "accuracy_artifacts"
SKIP_SWITCH = "--skip-extra-accuracy-files-check"
MAX_ENTRIES = 100_000  # a folder of ten images and a captions file; stop listing past this


def _stems(folder: Path) -> tuple[set[str], bool]:
    """(the names of the folder's regular files up to their first ".", whether the listing stopped at
    MAX_ENTRIES). OSError when the folder cannot be listed."""
    stems: set[str] = set()
    with os.scandir(folder) as it:
        for n, entry in enumerate(it):
            if n >= MAX_ENTRIES:
                return stems, True
            try:
                if entry.is_file():
                    stems.add(entry.name.split(".")[0])
            except OSError:
                continue
    return stems, False


def check_accuracy_artifacts(
    accdir: Path, artifacts: AccuracyArtifacts | None, *, closed: bool, skip: bool = False
) -> list[Finding]:
    """Findings for `accdir` (a result's accuracy folder) against what its benchmark must show there;
    none when the round asks nothing of the benchmark."""
    if artifacts is None:
        return []
    folder = accdir / artifacts.folder
    names = ", ".join(f"{s}{artifacts.suffix}" for s in artifacts.stems)
    if skip:
        return [
            Finding(
                rule=RULE,
                path=str(folder),
                message=f"not checked ({SKIP_SWITCH}): the round's checker asks for {names} and "
                f"{artifacts.captions}.txt here",
                severity=Severity.INFO,
                source=artifacts.source,
            )
        ]
    severity = Severity.ERROR if closed or artifacts.required_in_open else Severity.WARNING
    kept = "" if severity is Severity.ERROR else " (the round's checker keeps an open result without them)"
    try:
        is_dir = os.path.isdir(folder)
        stems, cut = _stems(folder) if is_dir else (set(), False)
    except OSError as exc:
        return [
            Finding(
                rule="unreadable",
                path=str(folder),
                message=f"cannot read it ({exc.strerror or exc}); fix its permissions",
            )
        ]
    if not is_dir:
        return [
            Finding(
                rule=RULE,
                path=str(folder),
                message=f"missing: the accuracy run's {artifacts.folder} {names} and {artifacts.captions}.txt "
                f"must be here for review{kept}; copy them from the accuracy run, or check with {SKIP_SWITCH}",
                severity=severity,
                source=artifacts.source,
            )
        ]
    out: list[Finding] = []
    if cut:
        out.append(
            Finding(
                rule=RULE,
                path=str(folder),
                message=f"more than {MAX_ENTRIES} entries: only the first {MAX_ENTRIES} were read",
                severity=Severity.WARNING,
            )
        )
    missing = [f"{s}{artifacts.suffix}" for s in artifacts.stems if s not in stems]
    if missing:
        out.append(
            Finding(
                rule=RULE,
                path=str(folder),
                message=f"missing {', '.join(missing)}: the accuracy run's {artifacts.folder} the round's checker "
                f"requires for review{kept}",
                severity=severity,
                source=artifacts.source,
            )
        )
    if artifacts.captions not in stems:
        out.append(
            Finding(
                rule=RULE,
                path=str(folder / f"{artifacts.captions}.txt"),
                message=f"missing: the prompts of the {artifacts.folder} (the round's checker names it but does "
                "not fail without it)",
                severity=Severity.WARNING,
                source=artifacts.source,
            )
        )
    return out


__all__ = ["MAX_ENTRIES", "RULE", "SKIP_SWITCH", "check_accuracy_artifacts"]
