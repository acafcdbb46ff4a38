"""The live line of `proctor run`, plus one printed line per FindPeakPerformance probe.

Its own module so that `proctor --help` and `proctor run --help` do not load the engine's progress
code (and numpy) that only a run needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.markup import escape

from proctor.cli.live_progress import LiveProgress

if TYPE_CHECKING:
    from proctor.loadgen.find_peak import Probe


class PeakProgress(LiveProgress):
    """The live line, plus one printed line per FindPeakPerformance probe with its verdict."""

    def on_probe(self, probe: Probe) -> None:
        verdict_text = "[green]PASS[/green]" if probe.passed else "[red]FAIL[/red]"
        self.console.print(
            f"probe {probe.index} ({probe.stage}): target_qps {probe.target_qps:,.4f} -> "
            f"{verdict_text}  {escape(probe.detail)}",
            soft_wrap=True,
        )
