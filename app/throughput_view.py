"""Throughput vs batch (article 000, the chart after Step 5).

Tokens/s against batch B on log axes: the roofline ceiling ignoring the KV cache
(linear, then flat at the ridge) and the ceiling counting KV traffic
at the current context (bending over well before the ridge), with the batches
whose cache does not fit shaded, and the current B marked.  Measurements taken at
another context than the curve's are drawn hollow and grey beside their own
ceiling (at their own S), and the key says at which S.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param
from bokeh.models import BoxAnnotation, ColumnDataSource, HoverTool, LabelSet, Span
from bokeh.plotting import figure

from core.scenario import ScenarioResult
from core.sweeps import batch_sweep
from core.units import fmt_count, fmt_sig

from .image_export import chart_levers, image_actions
from .label_layout import place_labels_in_browser, unplaced
from .present import present_figure, wrap_title
from .state import LabState
from .style import PALETTE, PIN_STYLES, SERIES_MARKERS, describe_chart

#: The batch axis: B = 1 … 1,024 and a tenth of a decade either side, so that the markers at B = 1 and 1,024 are
#: drawn whole (they were cut in half by the frame).
X_RANGE = (10 ** -0.1, 1024 * 10**0.1)
#: The vertical offsets (lines, upward) the "does not fit" label tries from the foot of the curves, in the shading
#: (or, where the shading is too narrow for it, before it): the first clear of the curves and the markers.
NO_FIT_LABEL_STEPS = tuple(-i for i in range(17))

#: The share of the batch axis (log) the "does not fit" shading must span for its name in full; below it, the
#: short name (at 18 px the full one is ~210 px, a third of a projector's frame).
NO_FIT_FULL_SHARE = 0.3


def ridge_batch(r: ScenarioResult) -> float:
    """The batch at which ``r``'s weights' intensity reaches the ridge point: ``B · P_peak/BW / I`` (I is
    proportional to B: ``2·B·k/p`` in decode), sequences; a fraction where one sequence is already past it."""
    return r.batch * r.ridge_point / r.arithmetic_intensity_weights


def no_fit_text(left: float, capacity_bytes: float) -> str:
    """The "does not fit" shading's name, for shading from batch ``left`` to the axis's right end: with the
    capacity (GiB) where the shading spans :data:`NO_FIT_FULL_SHARE` of the axis or more, else "does not fit"."""
    share = np.log(X_RANGE[1] / left) / np.log(X_RANGE[1] / X_RANGE[0])
    return (f"does not fit in {capacity_bytes / 2**30:,.0f} GiB" if share >= NO_FIT_FULL_SHARE
            else "does not fit")


#: Measurements taken at another S than the curve's: hollow grey circles, each with its own ceiling as a grey dash.
OTHER_S_STYLE = {"marker": "circle", "color": "#757575"}
#: The keys of those two series (the first is renamed with the S the points were taken at, other_contexts_label).
OTHER_S_KEY = "measured at another S"
OWN_CEILING_KEY = "ceiling at the measurement's own S"
#: At most this many other contexts are listed by value in the key; more are given as a range.
MAX_LISTED_CONTEXTS = 3


def other_contexts_label(contexts: list[int], curve_s: int) -> str:
    """The key of the measurements taken at the contexts ``contexts`` (sorted, tokens), not at the curve's S
    ``curve_s``: "measured at S = 2,048 (curve at 8,192)"."""
    if not contexts:
        return OTHER_S_KEY
    listed = (", ".join(f"{s:,}" for s in contexts) if len(contexts) <= MAX_LISTED_CONTEXTS
              else f"{contexts[0]:,} … {contexts[-1]:,}")
    return f"measured at S = {listed} (curve at {curve_s:,})"


def _measured_columns(points) -> dict[str, list]:
    """A measured series' columns: batch, context S, measured tokens/s and the ceiling at its own S."""
    return {"batch": [p.measurement.batch for p in points], "context": [p.measurement.context for p in points],
            "tok": [p.measurement.tokens_per_s for p in points],
            "ceiling": [p.ceiling_tokens_per_s for p in points]}


BATCHES = np.unique(np.round(np.logspace(0, np.log10(1024), 160)).astype(np.int64))


class ThroughputView(pn.viewable.Viewer):
    """A Bokeh tokens/s-vs-batch figure following a :class:`LabState`; updates only replace data."""

    state = param.ClassSelector(class_=LabState, doc="The session state it follows.")

    def __init__(self, **params):
        super().__init__(**params)
        result = self.state.result
        self.curves = ColumnDataSource(data={"batch": [], "no_kv": [], "with_kv": []}, name="throughput")
        self.current = ColumnDataSource(data={"batch": [], "tok": []}, name="throughput-current")
        # The measurements at the curve's S, and those taken at another S: drawn hollow and grey, each with its own
        # ceiling (at its own S) as a dash above or below it, and named in the key with the S it was taken at (a
        # point measured at S = 2,048 drawn against the curve for 8,192 sat above "achievable").
        self.measured = ColumnDataSource(data=_measured_columns([]), name="throughput-measured")
        self.measured_other = ColumnDataSource(data=_measured_columns([]), name="throughput-measured-other")
        self.pins = ColumnDataSource(data={"batch": [], "tok": [], "name": [], "color": [], "marker": [],
                                           "number": []}, name="throughput-pins")
        fig = figure(
            x_axis_type="log", y_axis_type="log", height=520, sizing_mode="stretch_width",
            x_range=X_RANGE, x_axis_label="batch B (concurrent sequences)", y_axis_label="tokens/s (ceiling)",
            tools="pan,wheel_zoom,reset", toolbar_location="above", name="throughput-figure",
        )
        fig.add_tools(*image_actions(fig, "throughput-vs-batch"))  # SVG and PNG at 2x (app/image_export.py)
        describe_chart(fig, "Throughput chart, log-log: the tokens/s ceiling against batch B, on the weights alone and "
                            "counting KV reads at the context S; the batches whose KV cache does not fit are shaded. "
                            "The current batch's figures are in the readouts.")
        fig.toolbar.autohide = True
        fig.toolbar_inner = True  # over the frame's top, as the roofline's: beside a long title it folded into "⋮"
        # From past the largest batch that fits to the frame's right edge (right=None).
        self.no_fit = BoxAnnotation(left=X_RANGE[1], right=None, fill_color="#9e9e9e", fill_alpha=0.25, line_alpha=0)
        fig.add_layout(self.no_fit)
        # Its name, laid out in the browser (PLACE_LABELS) from the shading's left edge at the foot of the curves:
        # the lowest place clear of the curves and the markers (at the frame's foot it ran over the curves and the
        # current B where the shading starts at B = 1).
        self.no_fit_text = ColumnDataSource(data={"x": [], "y": [], "text": [], "shown": [], **unplaced(0)},
                                            name="throughput-no-fit")
        self.no_fit_label = LabelSet(x="x", y="y", text="shown", source=self.no_fit_text, text_color="#616161",
                                     text_font_size="12px")
        fig.add_layout(self.no_fit_label)
        fig.line("batch", "no_kv", source=self.curves, color=PALETTE["roof"], line_width=3, line_dash="dashed",
                 legend_label="roofline ceiling ignoring the KV cache")
        kv = fig.line("batch", "with_kv", source=self.curves, color=PALETTE["kv"], line_width=3,
                      legend_label="roofline ceiling counting KV reads at context S")
        pins = fig.scatter("batch", "tok", source=self.pins, marker="marker", size=15, fill_color="color",
                           line_color="black", fill_alpha=0.85, legend_label="pins (each on its own scenario)")
        fig.add_tools(HoverTool(renderers=[pins], tooltips=[("pin", "@number: @name"), ("B", "@batch"),
                                                            ("tokens/s", "@tok{0,0}")]))
        current = fig.scatter("batch", "tok", source=self.current, marker=SERIES_MARKERS["workload"], size=18,
                    color=PALETTE["workload"],
                    line_color=PALETTE["workload_line"],
                    legend_label="current B")
        here = fig.scatter("batch", "tok", source=self.measured, marker=SERIES_MARKERS["measured"],
                           size=14, line_width=3, color=PALETTE["measured"],
                           legend_label="your measurements")
        elsewhere = fig.scatter("batch", "tok", source=self.measured_other, marker=OTHER_S_STYLE["marker"], size=14,
                                line_width=2.5, line_color=OTHER_S_STYLE["color"], fill_color=None,
                                legend_label=OTHER_S_KEY)
        own_ceiling = fig.scatter("batch", "ceiling", source=self.measured_other, marker="dash", size=18,
                                  line_width=3, line_color=OTHER_S_STYLE["color"], legend_label=OWN_CEILING_KEY)
        fig.add_tools(HoverTool(renderers=[here, elsewhere, own_ceiling], tooltips=[
            ("measured", "B = @batch, S = @context{0,0}: @tok{0,0} tokens/s"),
            ("ceiling at its own S", "@ceiling{0,0} tokens/s")]))
        # The batch at which the weights' intensity 2·B·k/p reaches the ridge, where the ceiling ignoring the cache
        # bends flat (a teacher pointed at it by hand for "the batch never reaches the ridge"): a diamond on that
        # bend, in the roof's colour, its B in the legend (an upright line through the shading left its name no room).
        self.ridge = ColumnDataSource(data={"batch": [], "tok": []}, name="throughput-ridge")
        ridge = fig.scatter("batch", "tok", source=self.ridge, marker="diamond", size=16, fill_color=PALETTE["roof"],
                            line_color="white", line_width=1.5, legend_label="ridge point")
        # Inside the band only (right of its edge), or not at all: left of it, it lay over batches that fit.
        place_labels_in_browser(fig, self.no_fit_label, None, "text", steps=NO_FIT_LABEL_STEPS, both_sides="right",
                                shown="shown",
                                lines=[(self.curves, "batch", "no_kv"), (self.curves, "batch", "with_kv")],
                                marks=[current, pins, here, elsewhere, own_ceiling, ridge], leader_lines=False)
        self.b_span = Span(location=1, dimension="height", line_color=PALETTE["workload"], line_dash="dotted")
        fig.add_layout(self.b_span)
        fig.add_tools(HoverTool(renderers=[kv], mode="vline", tooltips=[
            ("B", "@batch"), ("ignoring KV", "@no_kv{0,0} tok/s"), ("counting KV", "@with_kv{0,0} tok/s")]))
        legend = fig.legend[0]
        legend.label_text_font_size = "11px"
        legend.border_line_alpha = 0
        fig.add_layout(legend, "below")
        wrap_title(fig)  # a phone's page: the title and keys wrap to the chart's width, none runs past it
        # Keys of series that are often empty (an empty series' key has no symbol): shown while they have points.
        self._optional_items = {item.label.value: item for item in legend.items
                                if item.label.value in ("pins (each on its own scenario)", "your measurements",
                                                        OTHER_S_KEY, OWN_CEILING_KEY)}
        self.ridge_item = next(item for item in legend.items if item.label.value == "ridge point")
        self.figure = fig
        self.update(result)
        self._on_measured()
        self._on_pins()
        self._on_present()

    def __panel__(self):
        return pn.pane.Bokeh(self.figure, sizing_mode="stretch_width", min_height=520)

    @param.depends("state.present", watch=True)
    def _on_present(self) -> None:
        present_figure(self.figure, self.state.present)

    @param.depends("state.pin_rows", watch=True)
    def _on_pins(self) -> None:
        """Each pin at its own batch and its own tokens/s (its model, GPU and levers, not the current ones)."""
        rows = self.state.pin_rows
        self.pins.data = {
            "batch": [row.result.batch for row in rows], "tok": [row.result.tokens_per_s_with_kv for row in rows],
            "name": [row.pin.name for row in rows], "color": [PIN_STYLES[i][0] for i in range(len(rows))],
            "marker": [PIN_STYLES[i][1] for i in range(len(rows))], "number": list(range(1, len(rows) + 1)),
        }
        self._optional_items["pins (each on its own scenario)"].visible = bool(rows)

    @param.depends("state.result", watch=True)
    def _on_result(self) -> None:
        self.update(self.state.result)

    @param.depends("state.measured", watch=True)
    def _on_measured(self) -> None:
        self.show_measured(self.state.measured)

    def show_measured(self, points) -> None:
        """Draw measured throughput at its batch: against the curve where it was measured at the curve's S, hollow
        and grey with its own ceiling (at its own S) where it was measured at another."""
        curve_s = self.state.result.context
        here = [p for p in points if p.measurement.context == curve_s]
        elsewhere = [p for p in points if p.measurement.context != curve_s]
        self.measured.data = _measured_columns(here)
        self.measured_other.data = _measured_columns(elsewhere)
        items = self._optional_items
        items["your measurements"].visible = bool(here)
        items[OTHER_S_KEY].visible = items[OWN_CEILING_KEY].visible = bool(elsewhere)
        items[OTHER_S_KEY].label = {"value": other_contexts_label(
            sorted({p.measurement.context for p in elsewhere}), curve_s)}

    def update(self, r: ScenarioResult) -> None:
        """Redraw the curves for ``r``'s scenario (all levers but B held)."""
        sweep = batch_sweep(r, BATCHES)
        self.curves.data = {
            "batch": BATCHES,
            "no_kv": sweep.tokens_per_s_weights,
            "with_kv": sweep.tokens_per_s_with_kv,
        }
        self.current.data = {"batch": [r.batch], "tok": [r.tokens_per_s_with_kv]}
        if hasattr(self, "_optional_items"):  # the curve's S may have changed: which points are at it too
            self.show_measured(self.state.measured)
        self.b_span.location = r.batch
        b_ridge = ridge_batch(r)
        shown = X_RANGE[0] <= b_ridge <= X_RANGE[1]
        on_curve = float(np.exp(np.interp(np.log(b_ridge), np.log(BATCHES), np.log(sweep.tokens_per_s_weights))))
        self.ridge.data = {"batch": [b_ridge], "tok": [on_curve]} if shown else {"batch": [], "tok": []}
        # Article 000's caption of this chart, where it holds: "The batch never reaches the ridge point, because
        # capacity runs out first" (a lecturer's audit found it in the docs only).
        never = (f"; the batch never reaches it: capacity runs out first, at B = {r.max_batch:,}"
                 if 0 < r.max_batch < b_ridge else "")
        self.ridge_item.label = {"value": f"ridge point: at B = {fmt_sig(b_ridge, 3)}, I = 2·B·k/p reaches "
                                          f"P_peak/BW = {fmt_sig(r.ridge_point, 3)} FLOP/byte{never}"}
        self.ridge_item.visible = shown
        # Batches above max_batch do not fit: shade from halfway past it.
        left = max(r.max_batch, 0) + 0.5
        self.no_fit.left = min(max(left, X_RANGE[0]), X_RANGE[1])
        # Inside the shading: its name in full where the shading is wide, else shorter (the browser leaves it out
        # where even that finds no room inside the shading).
        text = no_fit_text(self.no_fit.left, r.capacity_bytes)
        self.no_fit_text.data = ({"x": [self.no_fit.left], "y": [float(np.min(sweep.tokens_per_s_with_kv))],
                                  "text": [text], "shown": [text], **unplaced(1)}
                                 if r.max_batch < 1024 else {"x": [], "y": [], "text": [], "shown": [], **unplaced(0)})
        unit = "prompt tokens/s" if r.phase == "prefill" else "tokens/s"
        split = (f"one model copy on {fmt_count(r.gpus_per_replica)} GPUs (TP = {fmt_count(r.tp)}, "
                 f"PP = {fmt_count(r.pp)}" + (f", EP = {fmt_count(r.ep)}" if r.ep > 1 else "") + ")\n"
                 if r.gpus_per_replica > 1 else "")
        # Short lines: one long line was cut at the chart's edge at 1280 px, and a line as wide as the chart left
        # the toolbar (and its Save actions) folded into "⋮".
        self.figure.title.text = (
            f"{r.model.name} on {r.gpu.name} ({chart_levers(r)})\n{split}"
            # "≈" where its config has keys the lab did not model
            f"{unit} vs batch (largest batch that fits: {r.model.approximate_mark}{r.max_batch:,})"
        )
