"""Memory bar: weights + KV cache + reserve against the card's capacity (GiB), per GPU.

With several GPUs the bar is one GPU's (the most loaded pipeline stage); when the
scenario does not fit, a button offers the smallest TP (then PP) that does.

Drawn as one HTML element rather than a Bokeh figure: a stacked bar needs no
axes, tools or glyph renderers, and a Bokeh figure for it cost every session
about 60 extra document models (a third of the page's per-session build).
"""

from __future__ import annotations

from html import escape

import panel as pn
import param

from core.hardware import CAPACITY_CONVENTIONS
from core.scenario import ScenarioResult
from core.units import GiB, fmt_count, sum_digits

from .state import LabState
from .style import PALETTE, live_html

#: Narrowest segment (percent of the bar) that carries its label, "KV cache 12.3 GiB" at 18 px in present mode.
MIN_LABEL_PERCENT = 14

PARTS = (("weights", PALETTE["weights"]), ("KV cache", PALETTE["kv_cache"]), ("reserve", PALETTE["reserve"]))


class MemoryView(pn.viewable.Viewer):
    """The memory bar and the capacity note, following the session's result."""

    state = param.ClassSelector(class_=LabState, doc="The session state it follows.")

    def __init__(self, **params):
        super().__init__(**params)
        self.bar = live_html(margin=(24, 10, 5, 10))
        self._shown = pn.pane.Bokeh(self.bar, sizing_mode="stretch_width")
        self.note = pn.pane.Markdown("", sizing_mode="stretch_width")
        # One click to the smallest split that fits (core: ScenarioResult.suggested_tp / suggested_pp).
        # Its label wraps within the column (at 18 px in present mode it ran past the side column's edge).
        self.suggest = pn.widgets.Button(label="", color="primary", visible=False, css_classes=["suggest-tp"],
                                         sizing_mode="stretch_width",
                                         stylesheets=[".bk-btn { white-space: normal; text-align: left; }"])
        self.suggest.on_click(lambda _e: self.apply_suggestion())
        self._view = pn.Column(self._shown, self.suggest, self.note, sizing_mode="stretch_width")
        self._refresh()

    def __panel__(self):
        return self._view

    @param.depends("state.result", "state.present", "state.tab", watch=True)
    def _refresh(self) -> None:
        r = self.state.result
        # Not beside the Ladder tab, whose rows each say what fits at their rung: the bar's scenario is the lab's,
        # before the rungs, and a teacher read its "largest batch: 9" beside the card's "48 fit" as a contradiction
        # (a line above it saying whose scenario it showed did not help).
        self._view.visible = self.state.tab != LADDER_TAB
        self.bar.text = memory_html(r, approximate=r.model.approximate_note())
        self.note.object = capacity_note(r)
        target = suggestion(r)
        self.suggest.visible = target is not None
        if target is not None:
            tp, pp = target
            per_replica = " per replica" if r.replicas > 1 else ""
            self.suggest.label = (f"Does not fit: use TP = {fmt_count(tp)}"
                                  + (f", PP = {fmt_count(pp)}" if pp > 1 else "")
                                  + f" ({fmt_count(tp * pp * r.ep)} GPUs{per_replica})"
                                  # one line at 18 px in present mode's side column, above the tour card
                                  + ("" if self.state.present else ", the smallest split that fits"))

    def apply_suggestion(self) -> None:
        """Set the scenario to the suggested TP and PP (nothing when it fits or nothing does)."""
        target = suggestion(self.state.result)
        if target is not None:
            self.state.scenario.param.update(tp=target[0], pp=target[1])


def suggestion(r: ScenarioResult) -> tuple[int, int] | None:
    """``(TP, PP)`` to offer when ``r`` does not fit and a split that fits exists, else None."""
    if r.fits or r.suggested_tp is None:
        return None
    return r.suggested_tp, r.suggested_pp



#: The tab the bar is not shown beside: its rows climb article 004's rungs from the bar's scenario, each with its own
#: largest batch.
LADDER_TAB = "Ladder"


def memory_segments(r: ScenarioResult) -> list[tuple[str, str, float]]:
    """``(name, colour, GiB)`` for each stacked part of the bar."""
    sizes = (r.weight_bytes_held, r.kv_bytes, r.reserve_bytes)  # what memory holds, not what a step reads
    return [(name, colour, size / GiB) for (name, colour), size in zip(PARTS, sizes, strict=True)]


def memory_html(r: ScenarioResult, approximate: str = "") -> str:
    """The bar as HTML: segments scaled to max(capacity, use) and a capacity marker.

    ``approximate``: the model's note when its config has keys the lab did not model
    (:meth:`core.models.ModelSpec.approximate_note`): the verdict then says "≈" and the note follows it.
    """
    cap = r.capacity_bytes / GiB
    used = r.memory_used_bytes / GiB
    scale = 100.0 / (max(cap, used) * 1.04)
    # The parts with the decimals that make them add to the title's total as printed (gpt-oss-20b: 39.0 + 0.2 + 3.0
    # beside 42.1).
    d = sum_digits([gib for _, _, gib in memory_segments(r)], used)
    left, segs = 0.0, []
    for name, colour, gib in memory_segments(r):
        width = gib * scale
        # A segment too narrow for its words shows none (a cut "weights 1" misleads); the title and
        # the legend under the bar still name it.
        # In a span drawn over the capacity marker: the marker inside a segment ran through its number.
        # With its unit: beside the header's "60.1 GB KV read" a bare 56.0 read as the same unit (a teacher's trial).
        text = f"<span>{name} {gib:,.{d}f} GiB</span>" if width >= MIN_LABEL_PERCENT else ""
        segs.append(f'<div class="mem-seg" data-part="{name}" style="left:{left:.3f}%;width:{width:.3f}%;'
                    f'background:{colour}" title="{name}: {gib:,.{max(d, 2)}f} GiB">{text}</div>')
        left += width
    verdict, cls = ("fits", "fits") if r.fits else ("DOES NOT FIT", "nofit")
    if approximate:
        verdict = f"≈ {verdict} (approximate)"
    # "1 of N" counts one replica's GPUs; replicas are named, so N is never read as all the GPUs.
    replicas = f" in each of {r.replicas:,} replicas" if r.replicas > 1 else ""
    # Split into stages, the bar is one GPU of the stage that runs out of memory first as B grows (a trial found
    # another stage's GPU fuller at B = 1 and the bar's "per GPU" silent on which it was).
    stage = f"; stage {r.memory_stage + 1}, which runs out first" if r.pp > 1 else ""
    per_gpu = (f" per GPU (1 of {r.gpus_per_replica:,}{replicas}, TP = {r.tp:,}, PP = {r.pp:,}"
               + (f", EP = {r.ep:,}" if r.ep > 1 else "") + stage + ")" if r.gpus_per_replica > 1 else "")
    legend = "".join(f'<i style="background:{c}"></i>{escape(n)}' for n, c in PARTS)
    return (
        # The verdict said to a screen reader when it changes (app/a11y.js): shown by colour and a word, it was silent.
        f'<div class="mem-title {cls}" data-readout="memory" data-announce-key="memory" '
        f'data-announce="{"Approximately: " if approximate else ""}{SAID[r.fits]}">'
        f"Memory{per_gpu}: {used:,.{d}f} GiB of {cap:,.1f} GiB → "
        f"{verdict} &nbsp;(largest batch at S = {r.context:,}{' (the prompt)' if r.phase == 'prefill' else ''}: "
        f"{r.max_batch:,})</div>"
        + (f'<div class="warn approx" data-readout="memory-approximate">{escape(approximate)}</div>'
           if approximate else "")
        + f'<div class="mem-track">{"".join(segs)}'
        f'<div class="mem-cap" style="left:{cap * scale:.3f}%"></div></div>'
        f'<div class="mem-legend">{legend}<b style="margin-left:10px">┃</b> capacity {cap:,.1f} GiB '
        '<span style="margin-left:14px;white-space:nowrap">(GiB = 2^30 bytes)</span></div>'
    )


#: The memory verdict as a screen reader hears it when it changes (the bar's title shows it in capitals and colour).
SAID = {True: "Fits in memory", False: "Does not fit in memory"}


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
