"""Scaling with tensor parallelism: what more GPUs buy, and where they stop paying.

Two Bokeh figures against the tensor-parallel degree TP (1, 2, 4, 8, … up to the
model's query heads), for the current scenario with every other lever held
(:func:`core.sweeps.tp_sweep`): one GPU's step split into compute, memory and
communication time with the time per output token; and tokens/s for the whole
deployment and per sequence.  The TP where communication overtakes the memory
time is marked, the degrees that do not fit are shaded hollow, and degrees past
the GPU's largest scale-up node are greyed (their collectives would cross the
scale-out network).  The view computes nothing itself.
"""

from __future__ import annotations

from html import escape

import numpy as np
import panel as pn
import param
from bokeh.models import BoxAnnotation, ColumnDataSource, FixedTicker, HoverTool, NoOverlap, Span
from bokeh.plotting import figure

from core.hardware import NO_LINK_WORDS
from core.sweeps import tp_sweep

from .image_export import chart_levers, image_actions
from .present import present_figure, wrap_title
from .state import LabState
from .style import PALETTE, STYLESHEET, describe_chart

TAB = "Scaling"
MS = 1e3
#: Tick values 1, 2 and 5 in each decade from 10⁻³ to 10⁹, and the minor ticks 1…9 of each decade (tokens/s).
ONE_TWO_FIVE = [m * 10.0 ** e for e in range(-3, 10) for m in (1, 2, 5)]
LOG_MINOR = [m * 10.0 ** e for e in range(-3, 10) for m in range(1, 10)]
#: The two charts' heights (px), built and in present mode (18-px text and a one-column legend of wrapped labels,
#: side by side: at 1280 × 720 both show under the note and the two rows of tabs without scrolling).
HEIGHTS = {"times": (340, 500), "rates": (300, 500)}
#: Each chart's flex basis: a whole row each (one above the other) normally; in present mode side by side where the
#: column is wide enough (a projector), one above the other on a phone.
CHART_FLEX = ("1 1 100%", "1 1 360px")
#: What each chart plots, for a screen reader (app/style.py describe_chart).
SCALING_TEXTS = {
    "scaling-time-figure": "Scaling chart, log-log: one GPU's compute, memory and communication time per step and the "
                           "time per output token, against the tensor-parallel degree TP.",
    "scaling-rate-figure": "Scaling chart, log-log: tokens/s of the whole deployment and per sequence, against the "
                           "tensor-parallel degree TP.",
}


def kv_under_tp(model) -> str:
    """What TP does to a GPU's KV cache: a GQA cache splits by KV head up to TP = h_kv; an MLA cache (one latent
    per token and layer, shared by every head) is whole on every TP GPU from TP = 1."""
    if model.mla is not None:
        return ("With MLA the cache is one latent per token and layer, shared by every head: each TP GPU holds "
                "all of it from TP = 1, and it does not shrink.")
    return f"Once TP passes h_kv = {model.n_kv_heads} the KV cache is replicated and stops shrinking."


class ScalingView(pn.viewable.Viewer):
    """Time per step and tokens/s against TP, following a :class:`LabState` while its tab is open."""

    state = param.ClassSelector(class_=LabState, doc="The session state it follows.")

    def __init__(self, **params):
        super().__init__(**params)
        self.times = ColumnDataSource(data={"tp": [], "compute": [], "memory": [], "comm": [], "tpot": [],
                                            "fill": []}, name="scaling-times")
        self.rates = ColumnDataSource(data={"tp": [], "aggregate": [], "per_seq": [], "fill": []},
                                      name="scaling-rates")
        self.current = ColumnDataSource(data={"tp": [], "tpot": [], "aggregate": []}, name="scaling-current")
        self.times_fig = self._times_figure()
        self.rates_fig = self._rates_figure()
        self.panes = {name: pn.pane.Bokeh(fig, sizing_mode="stretch_width", min_height=fig.height, min_width=0)
                      for name, fig in (("times", self.times_fig), ("rates", self.rates_fig))}
        # HTML with every name escaped: a session's own GPU or model name is shown as text.
        self.note = pn.pane.HTML("", sizing_mode="stretch_width", css_classes=["scaling-note"],
                                 stylesheets=[STYLESHEET])
        self._refresh()
        self._on_present()

    @param.depends("state.present", watch=True)
    def _on_present(self) -> None:
        """Present mode: chart text of at least 18 px (app/present.py), the note as a caption of 18 px."""
        present = self.state.present
        for name, fig in (("times", self.times_fig), ("rates", self.rates_fig)):
            present_figure(fig, present)
            fig.height = self.panes[name].min_height = HEIGHTS[name][present]
            fig.legend[0].ncols = 1 if present else 3  # 18-px labels in half the width: one column, each wrapped
            # Its rows closer on a projector: the two rows of tabs above and the legend below stay within 720 px.
            fig.legend[0].spacing, fig.legend[0].padding, fig.legend[0].margin = (0, 2, 2) if present else (3, 10, 10)
            self.panes[name].styles = {"flex": CHART_FLEX[present]}
        self.note.css_classes = ["scaling-note", "present"] if present else ["scaling-note"]
        self.note.margin = (0, 10) if present else (5, 10)  # every pixel of 720: the charts' axes above the fold

    def __panel__(self):
        charts = pn.FlexBox(*self.panes.values(), flex_wrap="wrap", sizing_mode="stretch_width")
        return pn.Column(self.note, charts, sizing_mode="stretch_width")

    def _axes(self, **kw):
        fig = figure(x_axis_type="log", y_axis_type="log", sizing_mode="stretch_width",
                     x_axis_label="tensor-parallel degree TP (GPUs per layer)", tools="pan,wheel_zoom,reset",
                     toolbar_location="above", **kw)
        fig.add_tools(*image_actions(fig, (fig.name or "scaling").removesuffix("-figure")))  # app/image_export.py
        describe_chart(fig, SCALING_TEXTS[fig.name])
        fig.toolbar.autohide = True
        fig.toolbar_inner = True  # over the frame's top, as the roofline's: beside a long title it folded into "⋮"
        fig.xaxis.ticker = [1, 2, 4, 8, 16, 32, 64, 128]
        # Room beyond the extreme values for the current-TP marker (24 px in present mode): Bokeh's default 10 %
        # left it half outside the frame when it is the highest point (TP = 1).
        fig.y_range.range_padding = 0.3
        fig.x_range.range_padding = 0.15
        fig.yaxis.major_label_policy = NoOverlap()  # a short log range labels 100, 200, … 900: 18-px labels collide
        return fig

    def _times_figure(self):
        fig = self._axes(height=HEIGHTS["times"][0], y_axis_label="time per step, one GPU (ms)",
                         name="scaling-time-figure")
        # Dot-dash: told from memory's solid line by more than its colour (an accessibility audit)
        fig.line("tp", "compute", source=self.times, color=PALETTE["roof"], line_width=2, line_dash="dotdash",
                 legend_label="compute: FLOP / P_peak")
        fig.line("tp", "memory", source=self.times, color=PALETTE["ladder"], line_width=3,
                 legend_label="memory: (weights + KV) / BW")
        fig.line("tp", "comm", source=self.times, color=PALETTE["interconnect"], line_width=3, line_dash="dashed",
                 legend_label="communication: all-reduces (+ PP, EP)")
        tpot = fig.line("tp", "tpot", source=self.times, color=PALETTE["workload"], line_width=3,
                        legend_label="time per output token")
        fig.scatter("tp", "tpot", source=self.times, size=10, fill_color="fill", line_color=PALETTE["workload"],
                    line_width=2)
        fig.scatter("tp", "tpot", source=self.current, size=18, color=PALETTE["workload"],
                    line_color=PALETTE["workload_line"], legend_label="current TP")
        self.crossover = Span(location=1, dimension="height", line_color=PALETTE["interconnect"], line_width=2,
                              line_dash="dotted", visible=False)
        fig.add_layout(self.crossover)
        self.past_node = BoxAnnotation(left=1e3, fill_color="#9e9e9e", fill_alpha=0.2, line_alpha=0)
        fig.add_layout(self.past_node)
        fig.add_tools(HoverTool(renderers=[tpot], mode="vline", tooltips=[
            ("TP", "@tp"), ("compute", "@compute{0.000} ms"), ("memory", "@memory{0.000} ms"),
            ("communication", "@comm{0.000} ms"), ("per output token", "@tpot{0.000} ms")]))
        self._legend_below(fig)
        return fig

    def _rates_figure(self):
        fig = self._axes(height=HEIGHTS["rates"][0], y_axis_label="tokens/s", name="scaling-rate-figure")
        # 1, 2, 5 in each decade: over the short ranges tokens/s often spans (23 to 300 at B = 1) Bokeh's log ticker
        # counted linearly, 50, 100, 150, … 400, crowded at the top and none below the lowest point.
        fig.yaxis.ticker = FixedTicker(ticks=ONE_TWO_FIVE, minor_ticks=LOG_MINOR)
        agg = fig.line("tp", "aggregate", source=self.rates, color=PALETTE["ladder"], line_width=3,
                       legend_label="all GPUs (EP groups × replicas)")
        fig.scatter("tp", "aggregate", source=self.rates, size=9, fill_color="fill", line_color=PALETTE["ladder"],
                    line_width=2)
        # Dashed: at B = 1 with one replica it lies on the line of all GPUs, which shows through.
        fig.line("tp", "per_seq", source=self.rates, color=PALETTE["kv"], line_width=3, line_dash="dashed",
                 legend_label="per sequence")
        fig.scatter("tp", "aggregate", source=self.current, size=18, color=PALETTE["workload"],
                    line_color=PALETTE["workload_line"], legend_label="current TP")
        fig.add_tools(HoverTool(renderers=[agg], mode="vline", tooltips=[
            ("TP", "@tp"), ("all GPUs", "@aggregate{0,0} tok/s"), ("per sequence", "@per_seq{0,0.0} tok/s")]))
        self._legend_below(fig)
        return fig

    @staticmethod
    def _legend_below(fig) -> None:
        legend = fig.legend[0]
        legend.label_text_font_size = "11px"
        legend.border_line_alpha = 0
        legend.ncols = 3
        fig.add_layout(legend, "below")
        wrap_title(fig)  # a phone's page: the title and keys wrap to the chart's width, none runs past it

    @param.depends("state.result", "state.tab", watch=True)
    def _refresh(self) -> None:
        if self.state.tab != TAB:
            return  # recomputed only while the tab is open
        self.update()

    def update(self) -> None:
        """Redraw for the state's scenario (every lever but TP held)."""
        r = self.state.result
        d = tp_sweep(self.state.scenario)
        fill = np.where(d["fits"], PALETTE["workload"], "white")
        self.times.data = {"tp": d["tp"], "compute": d["compute_time_s"] * MS, "memory": d["memory_time_s"] * MS,
                           # a log axis cannot draw 0: TP = 1 sends nothing, drawn at the axis floor
                           "comm": np.where(d["communication_time_s"] > 0, d["communication_time_s"] * MS, np.nan),
                           "tpot": d["tpot_s"] * MS, "fill": fill}
        self.rates.data = {"tp": d["tp"], "aggregate": d["tokens_per_s_aggregate"],
                           "per_seq": d["tokens_per_s_per_sequence"],
                           "fill": np.where(d["fits"], PALETTE["ladder"], "white")}
        self.current.data = {"tp": [r.tp], "tpot": [r.tpot_s * MS], "aggregate": [r.tokens_per_s_aggregate]}
        over = d["crossover"]
        self.crossover.visible = over is not None
        self.crossover.location = over or 1
        node = r.gpu.interconnect.max_node if r.gpu.interconnect else None
        self.past_node.left = node * 1.41 if node else 1e3
        # Its scenario, the large dot's TP included: a saved image is named after its title (app/image_export.py),
        # and TP = 1 and TP = 8 were one name.
        levers = f"{chart_levers(r, batch=True)}, current TP = {r.tp:,}"
        # Ceilings, and their scenario; "≈" where the model has a key the lab does not model (an engineer's trial
        # found the approximate mark everywhere but here).
        mark = r.model.approximate_mark
        self.times_fig.title.text = (f"{mark}{r.model.name} on {r.gpu.name} ({levers})\n"
                                     "one GPU's step, its ceiling, against TP (hollow: does not fit)")
        self.rates_fig.title.text = f"{mark}tokens/s ceiling against TP, {r.model.name} ({levers})"
        cross = (f"communication overtakes the memory time at <b>TP = {over}</b>" if over is not None else
                 f"communication stays below the memory time up to TP = {int(d['tp'][-1])}")
        link = r.gpu.interconnect
        link_words = NO_LINK_WORDS if link is None else link.words()
        # Past the node the figures keep the scale-up link (docs/known-limits.md): said where the claim is made (a
        # hardware engineer's trial read "below the memory time up to TP = 64" on an 8-GPU MI300X platform).
        node_text = (f"; past {node} GPUs (grey) the {escape(link.kind)} node ends, and the figures there keep its "
                     "link (the slower scale-out network is not modelled)" if node else
                     f"; {escape(r.gpu.name)} has no scale-up node: its GPUs talk over "
                     f"{escape(link.kind) if link else 'an unknown link'}")
        self.note.object = ('<div class="caption"><b>Why more TP stops paying:</b> each doubling halves the weights '
                            "a GPU reads, but every "
                            f"layer still pays two all-reduces of B·k·h activations ({escape(link_words)}); "
                            f"{cross}{node_text}. {kv_under_tp(r.model)}</div>")
