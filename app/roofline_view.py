"""The log-log roofline chart: roof, ridge point, batch ladder and the workload.

x is arithmetic intensity (FLOP/byte), y attainable performance.  The chart is
built once per session; it depends on the session state's result, pins,
measurements and band switch (``param.depends``) and only replaces the data of
its ColumnDataSources, so the browser repaints without rebuilding the figure.
Every number it draws comes from the :class:`core.ScenarioResult` (roofs through
:func:`core.roofline.attainable_flop_per_s`); the view computes no formula.
"""

from __future__ import annotations

import numpy as np
import panel as pn
import param
from bokeh.models import ColumnDataSource, HoverTool, LabelSet, Span
from bokeh.plotting import figure

from core.roofline import EFFICIENCY_BAND, attainable_flop_per_s
from core.scenario import ScenarioResult
from core.units import TFLOP, fmt_sig

from .state import LabState
from .style import PALETTE, PIN_STYLES

X_RANGE = (0.1, 1e5)  # FLOP/byte; the right edge grows when a point lies beyond it
X_FAR = 1e9  # roof and band are drawn out to here, so a wider x range never shows their end
Y_RANGE = (0.01, 2e4)  # TFLOP/s (the axis shows TFLOP/s; the model keeps FLOP/s)

ROOF_COLOR = PALETTE["roof"]
LADDER_COLOR = PALETTE["ladder"]
POINT_COLOR = PALETTE["workload"]
KV_LADDER_COLOR = PALETTE["kv"]
BAND_X = np.logspace(np.log10(X_RANGE[0]), np.log10(X_FAR), 200)


def roof_xy(peak_flop_per_s: float, bandwidth: float) -> dict[str, list[float]]:
    """The roof as three points: the left edge, the ridge and the right edge (x FLOP/byte, y TFLOP/s)."""
    x = np.array([X_RANGE[0], peak_flop_per_s / bandwidth, X_FAR])
    return {"x": list(x), "y": list(attainable_flop_per_s(x, peak_flop_per_s, bandwidth) / TFLOP)}


def _rung_labels(batches, intensities, ridge: float) -> list[str]:
    """``B=…`` for each rung up to and including the first past the ridge, then blank."""
    labels, past = [], False
    for b, i in zip(batches, intensities, strict=True):
        labels.append("" if past else f"B={b}")
        past = past or i >= ridge
    return labels


class RooflineView(pn.viewable.Viewer):
    """A Bokeh roofline figure that follows a :class:`LabState` (or shows one result, for the offline page).

    Args:
        result: the result to draw first (default: the state's).
    """

    state = param.ClassSelector(class_=LabState, default=None, doc="The session state it follows (None: static).")
    compact = param.Boolean(default=False, doc="Embed mode: no legend (a one-line key is shown instead).")

    def __init__(self, result: ScenarioResult | None = None, **params):
        super().__init__(**params)
        result = result if result is not None else self.state.result
        # Named so that browser tests and the benchmark can find them in the document.
        self.roof = ColumnDataSource(data={"x": [], "y": []}, name="roof")
        self.sparse_roof = ColumnDataSource(data={"x": [], "y": []}, name="sparse-roof")
        self.ridge = ColumnDataSource(data={"x": [], "y": [], "text": []}, name="ridge")
        self.ladder = ColumnDataSource(data=self._ladder_data(result), name="ladder")
        self.point = ColumnDataSource(data=self._point_data(result), name="workload")
        self.point_kv = ColumnDataSource(data={"x": [], "y": [], "batch": [], "pct": [], "fits": []},
                                         name="workload-kv")
        self.kv_ladder = ColumnDataSource(data={"x": [], "y": [], "batch": [], "pct": [], "fits": []},
                                          name="kv-ladder")
        self.other_phase = ColumnDataSource(data={"x": [], "y": [], "label": []}, name="other-phase")
        self.band = ColumnDataSource(data={"x": [], "lo": [], "hi": []}, name="band")
        self.reference = ColumnDataSource(data={"x": [], "y": [], "label": [], "lx": [], "ly": []},
                                          name="reference-roof")
        self.pins = ColumnDataSource(data={"x": [], "y": [], "name": [], "color": [], "marker": [], "batch": [],
                                           "pct": [], "fits": [], "yoff": []}, name="pins")
        self.measured = ColumnDataSource(data={"x": [], "y": [], "batch": [], "pct": [], "fits": [], "label": []},
                                         name="measured")
        self.interconnect = ColumnDataSource(data={"x": [], "y": []}, name="interconnect-roof")
        self._roof_key = None
        self.figure = self._build()
        self.update(result)
        if self.state is not None:
            self._on_pins()
            self._on_measured()

    def __panel__(self):
        return pn.pane.Bokeh(self.figure, sizing_mode="stretch_width", min_height=380 if self.compact else 540)

    @param.depends("state.result", watch=True)
    def _on_result(self) -> None:
        self.update(self.state.result)

    @param.depends("state.pin_rows", watch=True)
    def _on_pins(self) -> None:
        self.show_pins([(row.pin.name, *PIN_STYLES[i], row.result) for i, row in enumerate(self.state.pin_rows)])

    @param.depends("state.measured", watch=True)
    def _on_measured(self) -> None:
        self.show_measured(self.state.measured)

    @param.depends("state.band", watch=True)
    def _on_band(self) -> None:
        self.band_renderer.visible = self.state.band

    def _build(self):
        fig = figure(
            x_axis_type="log",
            y_axis_type="log",
            x_range=X_RANGE,
            y_range=Y_RANGE,
            height=540,
            sizing_mode="stretch_width",
            x_axis_label="arithmetic intensity (FLOP/byte)",
            y_axis_label="attainable performance (TFLOP/s, dense)",
            tools="pan,wheel_zoom,reset,save",
            toolbar_location="above",
            name="roofline",
        )
        self.sparse_renderer = fig.line("x", "y", source=self.sparse_roof, color=PALETTE["sparse"], line_dash="dashed",
                                        line_width=1.5, legend_label="sparse (2:4) headline: not attainable")
        lo, hi = EFFICIENCY_BAND
        self.band_renderer = fig.varea("x", "lo", "hi", source=self.band, fill_color=ROOF_COLOR, fill_alpha=0.15,
                                       legend_label=f"{lo:.0%}–{hi:.0%} of roof: typical measured",
                                       name="band-area")
        self.band_renderer.visible = False
        fig.line("x", "y", source=self.roof, color=ROOF_COLOR, line_width=4, legend_label="roof: min(P_peak, BW·I)")
        # Several GPUs: the interconnect roof, min(P_peak, link·I_comm) against FLOP per byte a GPU sends.
        fig.line("x", "y", source=self.interconnect, color=PALETTE["interconnect"], line_width=2, line_dash="dashed",
                 legend_label="interconnect roof: min(P_peak, link·I), I = FLOP per byte sent")
        # A custom or measured part's datasheet twin, when it names one: its roof, dotted, labelled on the chart.
        fig.line("x", "y", source=self.reference, color=PALETTE["reference"], line_width=2, line_dash="dotdash")
        fig.add_layout(LabelSet(x="lx", y="ly", text="label", source=self.reference, x_offset=4, y_offset=4,
                                text_font_size="11px", text_color=PALETTE["text"]))
        self.ridge_span = Span(location=1.0, dimension="height", line_color=ROOF_COLOR, line_dash="dotted",
                               line_width=1.5)
        fig.add_layout(self.ridge_span)
        # The ridge label sits at the foot of the dotted line, clear of the ladder.
        fig.add_layout(LabelSet(x="x", y="y", text="text", source=self.ridge, x_offset=6, y_offset=4,
                                text_color=ROOF_COLOR, text_font_style="bold", text_font_size="13px"))
        ladder = fig.scatter("x", "y", source=self.ladder, size=11, fill_color="fill", line_color="line",
                             line_width=2, legend_label="batch ladder (hollow: does not fit)")
        fig.add_layout(LabelSet(x="x", y="y", text="label", source=self.ladder, x_offset=-4, y_offset=9,
                                text_font_size="10px", text_color="#555555"))
        fig.scatter("x", "y", source=self.point_kv, size=16, fill_color=None, line_color=KV_LADDER_COLOR,
                    line_width=3, legend_label="your workload counting KV reads")
        kv_ladder = fig.scatter("x", "y", source=self.kv_ladder, marker="square", size=8, fill_color=KV_LADDER_COLOR,
                                line_color=KV_LADDER_COLOR, fill_alpha=0.8,
                                legend_label="ladder counting KV reads at S")
        fig.scatter("x", "y", source=self.other_phase, marker="diamond", size=18, fill_color="white",
                    line_color=POINT_COLOR, line_width=3, legend_label="same request, other phase")
        # Below the diamond: under the flat roof there is nothing else to collide with.
        fig.add_layout(LabelSet(x="x", y="y", text="label", source=self.other_phase, y_offset=-28,
                                text_align="center", text_font_size="12px", text_color="#7a3b00"))
        # Pins and measurements are labelled on the chart itself, so they stay out of the legend.
        pins = fig.scatter("x", "y", source=self.pins, marker="marker", size=16, fill_color="color",
                           line_color="black", line_width=1, fill_alpha=0.85)
        # Pins that coincide (the point of pinning batch 4, INT4 and k = 4) get
        # stacked labels rather than overprinted ones.
        fig.add_layout(LabelSet(x="x", y="y", text="name", source=self.pins, x_offset=12, y_offset="yoff",
                                text_font_size="11px", text_color="color"))
        measured = fig.scatter("x", "y", source=self.measured, marker="x", size=14, line_width=3,
                               color=PALETTE["measured"])
        fig.add_layout(LabelSet(x="x", y="y", text="label", source=self.measured, x_offset=8, y_offset=-14,
                                text_font_size="10px", text_color=PALETTE["measured"]))
        point = fig.scatter("x", "y", source=self.point, size=20, fill_color=POINT_COLOR,
                            line_color=PALETTE["workload_line"],
                            line_width=2, legend_label="your workload")
        tooltips = [
            ("batch B", "@batch"),
            ("intensity I", "@x{0,0.[00]} FLOP/byte"),
            ("attainable", "@y{0,0.[0]} TFLOP/s"),
            ("of peak", "@pct{0.[00]} %"),
            ("fits in memory", "@fits"),
        ]
        fig.add_tools(HoverTool(renderers=[ladder, kv_ladder, point], tooltips=tooltips))
        fig.title.text_font_size = "12px"  # the title carries both intensities
        fig.add_tools(HoverTool(renderers=[pins], tooltips=[("pin", "@name"), *tooltips]))
        fig.add_tools(HoverTool(renderers=[measured], tooltips=[("measured at B", "@batch"),
                                                                ("intensity with KV", "@x{0,0.[00]} FLOP/byte"),
                                                                ("achieved", "@y{0,0.[00]} TFLOP/s"),
                                                                ("of peak (MFU)", "@pct{0.[00]} %")]))
        fig.toolbar.autohide = True
        if self.compact:
            fig.height = 380
        legend = fig.legend[0]
        legend.visible = not self.compact
        legend.click_policy = "hide"
        legend.label_text_font_size = "11px"
        legend.ncols = 2
        legend.border_line_alpha = 0
        fig.add_layout(legend, "below")
        return fig

    @staticmethod
    def _ladder_data(r: ScenarioResult) -> dict:
        lad = r.ladder
        fits = lad.fits
        return {
            "x": lad.arithmetic_intensity_weights,
            "y": lad.attainable_flop_per_s_weights / TFLOP,
            "batch": lad.batch,
            "pct": 100 * lad.peak_fraction_weights,
            "fits": np.where(fits, "yes", "no"),
            "fill": np.where(fits, LADDER_COLOR, "white"),
            "line": np.full(len(fits), LADDER_COLOR),
            # Past the ridge the rungs crowd on the flat roof: label only the first.
            "label": _rung_labels(lad.batch, lad.arithmetic_intensity_weights, r.ridge_point),
        }

    @staticmethod
    def _point_data(r: ScenarioResult) -> dict:
        return {
            "x": [r.arithmetic_intensity_weights],
            "y": [r.attainable_flop_per_s_weights / TFLOP],
            "batch": [r.batch],
            "pct": [100 * r.peak_fraction_weights],
            "fits": ["yes" if r.fits else "no"],
        }

    def show_pins(self, rows: list[tuple[str, str, str, ScenarioResult]]) -> None:
        """Draw pinned scenarios: ``(name, colour, marker, result)`` per pin."""
        self.pins.data = {
            "x": [r.arithmetic_intensity_weights for *_, r in rows],
            "y": [r.attainable_flop_per_s_weights / TFLOP for *_, r in rows],
            "name": [name for name, *_ in rows],
            "color": [color for _, color, *_ in rows],
            "marker": [marker for _, _, marker, _ in rows],
            "batch": [r.batch for *_, r in rows],
            "pct": [100 * r.peak_fraction_weights for *_, r in rows],
            "fits": ["yes" if r.fits else "no" for *_, r in rows],
            "yoff": [8 - 13 * i for i in range(len(rows))],
        }

    def _draw_reference(self, r: ScenarioResult) -> None:
        ref = r.reference_gpu
        if ref is None:
            self.reference.data = {"x": [], "y": [], "label": [], "lx": [], "ly": []}
            return
        xy = roof_xy(r.reference_peak_flop_per_s, ref.hbm_bandwidth)
        # Label the flat part well right of the ridge, clear of the ladder's labels.
        self.reference.data = {**xy, "label": [f"datasheet: {ref.name}", "", ""],
                               "lx": [xy["x"][1] * 8] * 3, "ly": [xy["y"][1] * 1.15] * 3}

    def show_measured(self, points) -> None:
        """Draw measured points at their intensity counting KV reads and their achieved FLOP/s."""
        self.measured.data = {
            "x": [p.intensity for p in points], "y": [p.achieved_flop_per_s / TFLOP for p in points],
            "batch": [p.measurement.batch for p in points], "pct": [100 * p.mfu for p in points],
            "fits": ["" for _ in points],
            "label": [f"measured B={p.measurement.batch}" for p in points],
        }

    def update(self, r: ScenarioResult) -> None:
        """Replace the chart's data with ``r``'s (the figure itself is kept).

        The roof and ridge change only with the GPU or the compute roof; they are
        left alone otherwise, so a batch move sends only the points that moved.
        """
        roof_key = (r.gpu.id, r.compute_roof)
        if roof_key != self._roof_key:
            self._roof_key = roof_key
            self.roof.data = roof_xy(r.peak_flop_per_s, r.bandwidth)
            sparse = r.gpu.sparse_flop_per_s.get(r.compute_roof)
            self.sparse_roof.data = roof_xy(sparse, r.bandwidth) if sparse else {"x": [], "y": []}
            self.sparse_renderer.visible = bool(sparse)  # greys its legend entry for parts with no such figure
            self.ridge_span.location = r.ridge_point
            self._draw_reference(r)
            self.ridge.data = {"x": [r.ridge_point], "y": [Y_RANGE[0]],
                               "text": [f"ridge {r.ridge_point:,.0f} FLOP/byte"]}
            lo, hi = r.efficiency_band(BAND_X)
            self.band.data = {"x": BAND_X, "lo": lo / TFLOP, "hi": hi / TFLOP}
        self.ladder.data = self._ladder_data(r)
        self.point.data = self._point_data(r)
        sends = r.communication_intensity is not None and r.link_bandwidth
        x_link = np.array([X_RANGE[0], r.interconnect_ridge_point or 1.0, X_FAR])
        self.interconnect.data = ({"x": x_link, "y": r.interconnect_roof(x_link) / TFLOP} if sends
                                  else {"x": [], "y": []})
        lad = r.ladder
        self.kv_ladder.data = {
            "x": lad.arithmetic_intensity_with_kv, "y": lad.attainable_flop_per_s_with_kv / TFLOP, "batch": lad.batch,
            "pct": 100 * lad.peak_fraction_with_kv, "fits": np.where(lad.fits, "yes", "no"),
        }
        self.point_kv.data = {"x": [r.arithmetic_intensity_with_kv], "y": [r.attainable_flop_per_s_with_kv / TFLOP],
                              "batch": [r.batch], "pct": [100 * r.peak_fraction_with_kv],
                              "fits": ["yes" if r.fits else "no"]}
        # Keep every point on the chart: widen the x range past the farthest one.
        far = max(r.arithmetic_intensity_weights, r.prefill_intensity, float(lad.arithmetic_intensity_weights[-1]))
        self.figure.x_range.end = max(X_RANGE[1], 10 ** np.ceil(np.log10(far * 3)))
        if r.phase == "decode":
            other = (r.prefill_intensity, r.prefill_attainable_flop_per_s, "prefill of the prompt")
        else:
            other = (r.decode_intensity, r.decode_attainable_flop_per_s, "decode")
        self.other_phase.data = {"x": [other[0]], "y": [other[1] / TFLOP], "label": [other[2]]}
        self.figure.title.text = (
            f"{r.model.name} on {r.gpu.name}, {r.phase}\n"
            f"I = {fmt_sig(r.arithmetic_intensity_weights)} FLOP/byte on the weights "
            f"({fmt_sig(100 * r.peak_fraction_weights, 3)} % "
            f"of peak); counting KV reads {fmt_sig(r.arithmetic_intensity_with_kv)} "
            f"({fmt_sig(100 * r.peak_fraction_with_kv, 3)} %)"
            + (f"\nper GPU of {r.gpus_per_replica}: communication I = {fmt_sig(r.communication_intensity)} FLOP per "
               f"byte sent; interconnect ridge {fmt_sig(r.interconnect_ridge_point or 0)}"
               if r.communication_intensity is not None else "")
        )
