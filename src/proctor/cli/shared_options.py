"""Options several commands share, stated once (typer's Annotated parameter types).

Kept apart from cli/output.py so that module stays free of typer: the fast path (cli/fast_path.py)
prints and exits through it without loading typer.
"""

from __future__ import annotations

from typing import Annotated

import typer

from proctor.rules.rounds import ROUNDS
from proctor.rules.training.rulesets import RULESETS

# `check submission` and `submission package --check`: the development switch for proctor-engine logs
AllowUnofficialOpt = Annotated[
    bool,
    typer.Option(
        "--allow-unofficial-loadgen",
        help="Development only: logs not written by an official LoadGen release (proctor's own engine) "
        "are a warning instead of an error, and the verdict says the tree is not submittable.",
    ),
]

# `check submission` and `submission package --check`: the official checker's switch of the same name
SkipExtraAccuracyFilesOpt = Annotated[
    bool,
    typer.Option(
        "--skip-extra-accuracy-files-check",
        help="Do not look for the files a benchmark's accuracy folder must hold beside the logs (SDXL's "
        "images, WAN-2.2's videos), as the official checker's switch of this name.",
    ),
]

# every command that reads a submission round's rules (`check submission`, `summarize`, `submission package`)
RoundOpt = Annotated[
    str,
    typer.Option(
        "--round",
        metavar="ROUND",
        help=f"Submission round whose benchmark table, seeds, layout and checker conventions apply "
        f"({', '.join(ROUNDS)}).",
    ),
]

# every training command that reads a ruleset's tables
RulesetOpt = Annotated[
    str, typer.Option("--ruleset", metavar="VERSION", help=f"training ruleset ({', '.join(RULESETS)})")
]
