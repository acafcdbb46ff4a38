"""Tables for the terminal, shared by the app layer (which builds them) and the CLI (which prints
them): label columns wrap, values never wrap or cut. rich is imported on first use."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.table import Table


def table(*headers: str, title: str | None = None, labels: Sequence[int] = (0,), show_header: bool = True) -> Table:
    """A table whose label columns (indexes in `labels`) wrap and whose other columns never do."""
    from rich.table import Table

    t = Table(title=title, show_header=show_header)
    for i, header in enumerate(headers):
        if i in labels:
            t.add_column(header, overflow="fold", style="bold" if not show_header else None)
        else:
            t.add_column(header, no_wrap=True, overflow="ignore")
    return t


__all__ = ["table"]
