"""Tables for the terminal, shared by the app layer (which builds them) and the CLI (which prints
them): label columns wrap, values never wrap or cut. rich is imported on first use; `plain_table`
writes one without it, for the commands that print plain columns to a pipe or a file."""

from __future__ import annotations

from collections.abc import Sequence

TYPE_CHECKING = False
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


def plain_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A table for a pipe or a file, without rich: each column as wide as its widest cell, two spaces
    apart, a rule under the header; nothing wraps or is cut (what grep and a CI log want)."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip() + "\n"

    return line(headers) + line(["-" * w for w in widths]) + "".join(line(r) for r in rows)


__all__ = ["plain_table", "table"]
