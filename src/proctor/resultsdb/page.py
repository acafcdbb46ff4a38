"""The compare page: one self-contained HTML file in the report's style (`report.html.CSS`), one
figure per own result (matplotlib, PNG inlined) with one's own point marked, and every peer in a
table. As in the report, each number is also in a `data-value` attribute next to a `data-key`.
"""

from __future__ import annotations

import base64
import datetime as dt
import math
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from proctor.report.html import CSS
from proctor.report.plots import DPI, png
from proctor.resultsdb.compare import Peer, Placement
from proctor.trees import real_root, replace

if TYPE_CHECKING:
    from matplotlib.axes import Axes

OWN, PEER, NEAR = "#d62728", "#8c8c8c", "#1f77b4"
EXTRA_CSS = "tr.own td{background:#fdecea;font-weight:600} tr.near td{background:#eef5fb}"


def _g(x: float | None, digits: int = 6) -> str:
    return "-" if x is None or not math.isfinite(x) else f"{x:,.{digits}g}"


def _num(key: str, value: float | int | None, shown: str) -> str:
    raw = "" if value is None else repr(value)
    return f'<td class="num" data-key="{escape(key)}" data-value="{escape(raw)}">{escape(shown)}</td>'


def _tx(value: object, limit: int = 60) -> str:
    """Text for a figure: one printable line (report.plots.png draws a '$' as a dollar sign)."""
    from proctor.untrusted_text import printable

    return printable(value, limit)


def _badge(verdict: str) -> str:
    cls = "valid" if verdict == "VALID" else "invalid"
    return f'<span class="badge {cls}" data-verdict="{escape(verdict)}">{escape(verdict)}</span>'


def figure(p: Placement) -> bytes | None:
    """Two panels: every peer's value in rank order with one's own value marked, and value (per
    accelerator where it means something) against the accelerator count. None without peers."""
    values = [x.value for x in p.peers]
    if not values:
        return None
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11.0, 4.0), dpi=DPI, layout="constrained")
    left, right = fig.subplots(1, 2)
    own_value = p.own.get("value")
    colours = [NEAR if _same(x, p.above) or _same(x, p.below) else PEER for x in p.peers]
    # one place per result, yours included: a peer behind yours moves one place to the right
    xs = [i + (1 if p.rank is not None and i >= p.rank else 0) for i in range(1, len(values) + 1)]
    left.bar(xs, values, color=colours, width=0.85)
    if own_value is not None:
        left.axhline(own_value, color=OWN, linestyle="--", linewidth=1.2, label=_tx(f"yours: {_g(own_value)} {p.units}"))
        if p.rank is not None:
            left.bar([p.rank], [own_value], color=OWN, width=0.85)
            left.plot([p.rank], [own_value], marker="*", color=OWN, markersize=16, linestyle="none")
    _log_if_wide(left, [*values, *([own_value] if own_value else [])])
    left.set_xlabel("rank, yours included" + (" (lower is better)" if not p.higher_is_better else ""))
    left.set_ylabel(_tx(f"{p.metric} ({p.units})", 80))
    left.set_title(_tx(f"{p.benchmark} {p.scenario} · round {p.round}: {len(values)} published", 90), fontsize=10)
    if own_value is not None:
        left.legend(fontsize=8, loc="upper right")
    _scatter(right, p)
    return png(fig)


def _same(a: Peer, b: Peer | None) -> bool:
    return b is not None and a.path == b.path and a.value == b.value


def _log_if_wide(ax: Axes, ys: Sequence[float]) -> None:
    pos = [y for y in ys if y is not None and y > 0]
    if pos and max(pos) > 50 * min(pos):
        ax.set_yscale("log")


def _scatter(ax: Axes, p: Placement) -> None:
    per = p.per_accelerator_meaningful
    pts: list[tuple[int, float]] = []
    for x in p.peers:
        y = x.per_accelerator if per else x.value
        if x.accelerators and y is not None:
            pts.append((x.accelerators, y))
    label = f"{p.metric} per accelerator" if per else p.metric
    if pts:
        ax.scatter([a for a, _ in pts], [y for _, y in pts], color=PEER, s=18, label="published")
    for near, name in ((p.above, "just above"), (p.below, "just below")):
        y = None if near is None else (near.per_accelerator if per else near.value)
        if near is not None and near.accelerators and y is not None:
            ax.scatter([near.accelerators], [y], color=NEAR, s=40, label=_tx(f"{name}: {near.submitter}"))
    mine = p.own.get("per_accelerator") if per else p.own.get("value")
    if p.own.get("accelerators") and mine is not None:
        ax.scatter([p.own["accelerators"]], [mine], color=OWN, marker="*", s=220, label="yours", zorder=5)
    elif mine is not None:
        ax.axhline(mine, color=OWN, linestyle="--", linewidth=1.2, label="yours (accelerators not given)")
    if not pts and mine is None:
        ax.text(0.5, 0.5, "no accelerator counts to plot", ha="center", va="center", transform=ax.transAxes)
    xs = [a for a, _ in pts] + ([p.own["accelerators"]] if p.own.get("accelerators") else [])
    if xs and max(xs) > 8 * min(xs):
        ax.set_xscale("log")
    else:
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # accelerator counts are whole
    _log_if_wide(ax, [y for _, y in pts] + ([mine] if mine else []))
    ax.set_xlabel("accelerators (per node x nodes)")
    ax.set_ylabel(_tx(f"{label} ({p.units})", 80))
    ax.set_title("per accelerator" if per else _tx(f"{p.metric}: per accelerator is not meaningful", 90), fontsize=10)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="best")


def _own_line(p: Placement) -> str:
    own = p.own
    value = own.get("value")
    shown = "no value" if value is None else f"{_g(value)} {p.units}"
    rank = (
        f"rank <b data-key=\"rank\" data-value=\"{p.rank}\">{p.rank}</b> of {p.peers_count + 1}"
        if p.rank is not None
        else "not ranked"
    )
    per = ""
    if p.rank_per_accelerator is not None:
        per = (f" · per accelerator {escape(_g(own.get('per_accelerator')))} {escape(p.units)}: rank "
               f'<b data-key="rank_per_accelerator" data-value="{p.rank_per_accelerator}">{p.rank_per_accelerator}</b>'
               f" of {p.peers_per_accelerator + 1}")
    return (f'<p class="cause">{_badge(own.get("verdict") or "INVALID")} {escape(p.metric)} = '
            f'<span data-key="own_value" data-value="{"" if value is None else repr(value)}">{escape(shown)}</span> · '
            f"{rank}{per}</p>")


def _peer_row(x: Peer, cls: str = "") -> str:
    return (
        f'<tr class="{cls}" data-rank="{x.rank}"><td class="num">{x.rank}</td><td>{escape(x.submitter or "")}</td>'
        f"<td>{escape(x.system_name or x.system or '')}</td><td>{escape(x.accelerator or '-')}</td>"
        + _num("accelerators", x.accelerators, "-" if x.accelerators is None else str(x.accelerators))
        + _num("value", x.value, _g(x.value))
        + _num("per_accelerator", x.per_accelerator, _g(x.per_accelerator))
        + f"<td>{escape(x.division or '')}</td><td>{escape(x.availability or '')}</td><td>{_badge(x.verdict)}</td></tr>"
    )


def _own_row(p: Placement) -> str:
    o = p.own
    return (
        f'<tr class="own" id="own-row" data-rank="{p.rank if p.rank is not None else ""}">'
        f'<td class="num">{p.rank if p.rank is not None else "-"}</td><td>yours</td>'
        f"<td>{escape(str(o.get('system_name') or o.get('system') or ''))}</td><td>{escape(str(o.get('accelerator') or '-'))}</td>"
        + _num("accelerators", o.get("accelerators"), "-" if o.get("accelerators") is None else str(o.get("accelerators")))
        + _num("value", o.get("value"), _g(o.get("value")))
        + _num("per_accelerator", o.get("per_accelerator"), _g(o.get("per_accelerator")))
        + f"<td>{escape(str(o.get('division') or ''))}</td><td></td><td>{_badge(o.get('verdict') or 'INVALID')}</td></tr>"
    )


def _section(i: int, p: Placement, png: bytes | None) -> str:
    sid = f"compare-{i}"
    filters = ", ".join(x for x in (f"division {p.division}" if p.division else "every division",
                                     "VALID results" if p.valid_only else "every verdict") if x)
    out = [
        f'<section class="compare" id="{sid}" data-benchmark="{escape(p.benchmark)}" data-scenario="{escape(p.scenario)}">',
        f"<h2>{escape(p.benchmark)} {escape(p.scenario)} · {escape(p.suite)} round {escape(p.round)}</h2>",
        f'<p class="meta">yours: {escape(str(p.own.get("path") or ""))} · peers: {escape(filters)}, same units · '
        f"{p.benchmark_results} stored result(s) of this benchmark and scenario, {p.round_results} in the round</p>",
        f'<div class="headline {"valid-run" if p.own.get("verdict") == "VALID" else "invalid-run"}">{_own_line(p)}</div>',
    ]
    for note in p.notes:
        out.append(f'<p class="note">{escape(note)}</p>')
    if png is not None:
        b64 = base64.b64encode(png).decode("ascii")
        cap = "Published results in rank order with yours marked (star, dashed line); per accelerator against accelerators"
        out.append(f'<div class="grid"><figure id="{sid}-figure"><img alt="{escape(cap)}" '
                   f'src="data:image/png;base64,{b64}"><figcaption>{escape(cap)}</figcaption></figure></div>')
    if p.findings:
        out.append(f'<details id="{sid}-findings"><summary>What the check found in yours ({len(p.findings)})</summary><ul>')
        for f in p.findings[:200]:
            out.append(f"<li>{escape(str(f.get('severity', '')).upper())} [{escape(str(f.get('rule', '')))}] "
                       f"{escape(str(f.get('path') or ''))}: {escape(str(f.get('message', '')))}</li>")
        out.append("</ul></details>")
    out.append(f'<table id="{sid}-peers"><tr><th>rank</th><th>submitter</th><th>system</th><th>accelerator</th>'
               f"<th>accelerators</th><th>{escape(p.metric)} ({escape(p.units)})</th><th>per accelerator</th>"
               "<th>division</th><th>availability</th><th>verdict</th></tr>")
    placed = False
    for x in p.peers:
        if not placed and p.rank is not None and x.rank >= p.rank:
            out.append(_own_row(p))
            placed = True
        cls = "near" if _same(x, p.above) or _same(x, p.below) else ""
        out.append(_peer_row(x, cls))
    if not placed:
        out.append(_own_row(p))
    out.append("</table></section>")
    return "\n".join(out)


def render(placements: Sequence[Placement], figures: Sequence[bytes | None], *, version: str = "") -> str:
    n = len(placements)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        f"<title>proctor results compare: {n} result{'s' if n != 1 else ''}</title>"
        f"<style>{CSS}{EXTRA_CSS}</style></head>",
        '<body data-loaded="0">',
        '<h1 id="title">Your result beside the published ones</h1>'
        f'<p class="meta">{n} result{"s" if n != 1 else ""} compared · generated '
        f"{dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M UTC')}{' · proctor ' + escape(version) if version else ''}</p>",
    ]
    for i, (p, figure) in enumerate(zip(placements, figures, strict=True)):
        parts.append(_section(i, p, figure))
    parts.append("<script>document.body.setAttribute('data-loaded','1');</script></body></html>")
    return "\n".join(parts)


def write(placements: Sequence[Placement], out: Path, *, version: str = "") -> Path:
    """Write the page (replacing a file there, never through a link); returns its path."""
    figures = [figure(p) for p in placements]
    out.parent.mkdir(parents=True, exist_ok=True)
    path = real_root(out.parent) / out.name
    replace(path, render(placements, figures, version=version).encode("utf-8"))
    return path


__all__ = ["figure", "render", "write"]
