"""Memory bar: weights + KV cache + reserve against the card's capacity (GiB).

Drawn as one HTML element rather than a Bokeh figure: a stacked bar needs no
axes, tools or glyph renderers, and a Bokeh figure for it cost every session
about 60 extra document models (a third of the page's per-session build).
"""

from __future__ import annotations

from html import escape

from core.hardware import CAPACITY_CONVENTIONS
from core.scenario import ScenarioResult
from core.units import GiB

PARTS = (("weights", "#1f77b4"), ("KV cache", "#d62728"), ("reserve", "#9e9e9e"))

MEMORY_CSS = """
.mem-title { font-weight: 600; font-size: 14px; margin-bottom: 4px; }
.mem-title.fits { color: #2e7d32; } .mem-title.nofit { color: #c62828; }
.mem-track { position: relative; height: 34px; background: #f3f3f3; border: 1px solid #ccc; }
.mem-seg { position: absolute; top: 0; bottom: 0; color: white; font-size: 11px; line-height: 34px;
           overflow: hidden; white-space: nowrap; padding-left: 4px; box-sizing: border-box; }
.mem-cap { position: absolute; top: -6px; bottom: -6px; width: 3px; background: black; }
.mem-legend { font-size: 12px; color: #444; margin-top: 8px; }
.mem-legend i { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 10px; }
"""


def memory_segments(r: ScenarioResult) -> list[tuple[str, str, float]]:
    """``(name, colour, GiB)`` for each stacked part of the bar."""
    sizes = (r.weight_bytes_read, r.kv_bytes, r.reserve_bytes)
    return [(name, colour, size / GiB) for (name, colour), size in zip(PARTS, sizes, strict=True)]


def memory_html(r: ScenarioResult) -> str:
    """The bar as HTML: segments scaled to max(capacity, use) and a capacity marker."""
    cap = r.capacity_bytes / GiB
    used = r.memory_used_bytes / GiB
    scale = 100.0 / (max(cap, used) * 1.04)
    left, segs = 0.0, []
    for name, colour, gib in memory_segments(r):
        width = gib * scale
        segs.append(f'<div class="mem-seg" data-part="{name}" style="left:{left:.3f}%;width:{width:.3f}%;'
                    f'background:{colour}" title="{name}: {gib:,.2f} GiB">{name} {gib:,.1f}</div>')
        left += width
    verdict, cls = ("fits", "fits") if r.fits else ("DOES NOT FIT", "nofit")
    legend = "".join(f'<i style="background:{c}"></i>{escape(n)}' for n, c in PARTS)
    return (
        f'<div class="mem-title {cls}" data-readout="memory">Memory: {used:,.1f} GiB of {cap:,.1f} GiB → '
        f"{verdict} &nbsp;(largest batch at S = {r.context:,}{' (the prompt)' if r.phase == 'prefill' else ''}: "
        f"{r.max_batch:,})</div>"
        f'<div class="mem-track">{"".join(segs)}'
        f'<div class="mem-cap" style="left:{cap * scale:.3f}%"></div></div>'
        f'<div class="mem-legend">{legend}<b style="margin-left:10px">┃</b> capacity {cap:,.1f} GiB '
        '<span style="margin-left:14px">(GiB = 2^30 bytes)</span></div>'
    )


def capacity_note(r: ScenarioResult) -> str:
    """One sentence saying how the datasheet capacity became bytes (Markdown)."""
    g = r.gpu
    other = "decimal" if r.capacity_convention == "binary" else "binary"
    other_bytes = g.capacity_bytes(other)
    return (
        f"**Capacity:** the datasheet says {g.memory_datasheet_value:g} {g.memory_datasheet_unit}"
        f"{' ' + g.memory_type if g.memory_type else ''}; the lab reads it as **{r.capacity_bytes / GiB:,.1f} GiB** "
        f"({CAPACITY_CONVENTIONS[r.capacity_convention]}). "
        f"The other reading ({CAPACITY_CONVENTIONS[other]}) gives {other_bytes / GiB:,.1f} GiB."
    )
