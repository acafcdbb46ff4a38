"""Running the official submission checker (mlcommons/inference `tools/submission/submission_checker`)
on a tree, for differential tests and benchmarks; proctor never needs it to give a verdict."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

CHECKER_DIR = Path("tools") / "submission"


@dataclass(frozen=True, slots=True)
class OfficialCheck:
    returncode: int
    lines: list[str]  # the checker's log lines (stdout and stderr together)

    @property
    def errors(self) -> list[str]:
        # "[<time> submission_checker.py:<line> ERROR] ..." (its logging format), or a bare "ERROR ..."
        return [ln for ln in self.lines if " ERROR] " in ln or " ERROR " in ln or ln.startswith("ERROR")]


def run_official_checker(
    repo: Path,
    tree: Path,
    *,
    version: str,
    submitter: str,
    csv: Path,
    timeout_s: float = 600.0,
    extra_args: list[str] | tuple[str, ...] = (),
) -> OfficialCheck:
    """`python -m submission_checker.main --input TREE ...` from the repo's tools/submission folder, or
    `python submission_checker.py ...` in a checkout of an older tag (up to v5.1.x, one script);
    `extra_args`: its switches (e.g. --skip-extra-accuracy-files-check)."""
    script = repo / CHECKER_DIR / "submission_checker.py"
    entry = [str(script)] if script.is_file() else ["-m", "submission_checker.main"]
    cmd = [
        sys.executable, *entry, "--input", str(tree.resolve()), "--version", version,
        "--submitter", submitter, "--csv", str(csv.resolve()), *extra_args,
    ]  # fmt: skip
    proc = subprocess.run(
        cmd, cwd=repo / CHECKER_DIR, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    return OfficialCheck(proc.returncode, (proc.stdout + proc.stderr).splitlines())
