"""The app factory: ``create_app()`` builds one session's dashboard.

Importable and testable without a server (``create_app()`` returns a Panel
layout); ``app/main.py`` marks it servable for ``panel serve app``.

Data flow: the controls (and the tour, and a permalink) write the
:class:`core.Scenario`; one watcher evaluates it once per change and hands the
:class:`core.ScenarioResult` to each view, which only reads it and replaces its
data in place.
"""

from __future__ import annotations

import panel as pn

from core.measurements import analyse
from core.permalink import from_query
from core.scenario import LEVERS, Scenario, ScenarioResult

from .byo_view import BringYourOwnView
from .controls import build_controls
from .exports_view import build_exports
from .memory_view import MEMORY_CSS, capacity_note, memory_html
from .permalink_view import PermalinkView, session_query
from .pins_view import PinsView
from .readouts import READOUT_CSS, readouts_html
from .roofline_view import RooflineView
from .serving_views import SERVING_CSS, kv_table_html, speculation_html, traffic_html
from .throughput_view import ThroughputView
from .tour_view import TourView

INTRO = """
# Roofline Lab
A decode step reads every weight once and does **2·B·k** FLOPs with it, so its
arithmetic intensity is **I = 2·B·k / p** (B batch, k tokens per weight read, p bytes
per weight). Below the **ridge point P_peak / BW** the GPU waits on memory; the
KV cache (**2·L·h_kv·d_head·S·B·p_kv**) decides whether the batch fits at all.
Try batch 4, INT4 weights, or speculation depth 4: all three land on the same spot.
"""

# Indices of the view tabs.  Tabs are dynamic (only the open one reaches the
# browser); the throughput chart, the bring-your-own forms and the export tab
# are also built only when first opened, and the HTML views are recomputed only
# while open: most sessions look at the roofline and never pay for the rest.
THROUGHPUT_TAB, TRAFFIC_TAB, KV_TAB, SPECULATION_TAB, PINS_TAB, BYO_TAB, EXPORT_TAB = range(1, 8)
EMBED_LEVERS = ["model", "gpu", "weight_dtype", "batch", "spec_k", "context", "gqa"]


class Lab:
    """One session: a scenario, its controls and the views that read it.

    Args:
        scenario: the scenario to show (a new default one if None).
        query: permalink query parameters (flag name -> text); by default the
            page request's.  ``embed=true`` selects the compact embed layout.
    """

    def __init__(self, scenario: Scenario | None = None, query: dict[str, str] | None = None):
        self.scenario = scenario or Scenario()
        query = session_query() if query is None else query
        levers, pins, notices, custom_gpu = from_query(query)
        self.embed = query.get("embed", "").lower() in ("true", "1")
        if custom_gpu is not None:
            self.scenario.add_gpu(custom_gpu)
        self.scenario.param.update(**levers)
        self.result = result = self.scenario.evaluate()

        self.roofline = RooflineView(result, compact=self.embed)
        # The throughput chart is built when its tab first opens: a Bokeh figure
        # is a third of a session's build cost, and most sessions never open it.
        self.throughput: ThroughputView | None = None
        self.throughput_tab = pn.Column(sizing_mode="stretch_width", min_height=520)
        self.show_work = pn.widgets.Checkbox(label="Show your work (formulas with values)", value=False,
                                             css_classes=["show-work"])
        self.band = pn.widgets.Checkbox(label="Show the 60–85 % measured-efficiency band", value=False,
                                        css_classes=["band"])
        self.readouts = pn.pane.HTML(readouts_html(result), stylesheets=[READOUT_CSS], sizing_mode="stretch_width")
        self.memory = pn.pane.HTML(memory_html(result), stylesheets=[MEMORY_CSS], sizing_mode="stretch_width",
                                   margin=(24, 10, 5, 10))
        self.capacity = pn.pane.Markdown(capacity_note(result), sizing_mode="stretch_width")
        self.traffic = pn.pane.HTML("", stylesheets=[SERVING_CSS], sizing_mode="stretch_width")
        self.kv_table = pn.pane.HTML("", stylesheets=[SERVING_CSS], sizing_mode="stretch_width")
        self.speculation = pn.pane.HTML("", stylesheets=[SERVING_CSS], sizing_mode="stretch_width")
        self.active_tab = 0
        self.error = pn.pane.Alert("", alert_type="danger", visible=False, sizing_mode="stretch_width")
        self.link = PermalinkView(notices, self.embed)
        self.pins = PinsView(self.scenario, draw=self.roofline.show_pins, on_change=self._write_link)
        self.pins.set_pins(pins)
        self.tour = TourView(self.scenario)
        self.measurements: list = []
        self._byo: BringYourOwnView | None = None
        self.byo_tab = pn.Column(sizing_mode="stretch_width")
        self.export_tab = pn.Column(sizing_mode="stretch_width")

        self.scenario.param.watch(self._on_change, list(LEVERS))
        self.show_work.param.watch(lambda _e: self._redraw_readouts(), "value")
        self.band.param.watch(lambda e: setattr(self.roofline.band_renderer, "visible", e.new), "value")
        # The address bar is rewritten at the first change; until then the link
        # the page was opened with already reproduces what it shows.
        self.layout = self._embed_layout() if self.embed else self._layout()

    # -- layouts ----------------------------------------------------------------
    def _layout(self) -> pn.viewable.Viewable:
        controls = pn.Column("### Levers", build_controls(self.scenario), width=320, margin=(0, 20, 0, 5))
        tabs = pn.Tabs(
            ("Roofline", pn.Column(pn.pane.Bokeh(self.roofline.figure, sizing_mode="stretch_width", min_height=540),
                                   self.band, sizing_mode="stretch_width")),
            ("Throughput vs B", self.throughput_tab),
            ("Traffic", self.traffic),
            ("KV table", self.kv_table),
            ("Speculation", self.speculation),
            ("Pins", self.pins.layout),
            ("Bring your own", self.byo_tab),
            ("Export", self.export_tab),
            dynamic=True, sizing_mode="stretch_width",
        )
        tabs.param.watch(self._on_tab, "active")
        readouts = pn.Column("### Readouts", self.show_work, self.readouts, width=380)
        views = pn.Column(tabs, pn.Row(self.pins.pin_button, self.pins.message), sizing_mode="stretch_width",
                          styles={"flex": "1 1 480px"}, min_width=0)
        # The readouts wrap below the views on a narrow screen instead of squeezing the chart.
        main = pn.Column(self.link.notice, self.tour.layout, self.error,
                         pn.FlexBox(views, readouts, flex_wrap="wrap", sizing_mode="stretch_width"),
                         self.memory, self.capacity, sizing_mode="stretch_width")
        return pn.Column(
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width"),
            pn.Row(controls, main, sizing_mode="stretch_width"),
            self.link.writer,
            sizing_mode="stretch_width",
        )

    def _embed_layout(self) -> pn.viewable.Viewable:
        """``?embed=true``: the roofline and a compact control strip, no page chrome."""
        strip = build_controls(self.scenario, parameters=EMBED_LEVERS, compact=True)
        summary = pn.pane.HTML(embed_summary(self.result), sizing_mode="stretch_width", margin=(0, 10))
        self._embed_summary = summary
        chart = pn.pane.Bokeh(self.roofline.figure, sizing_mode="stretch_width")
        return pn.Column(self.link.notice, strip, self.error, summary, chart, self.link.writer,
                         sizing_mode="stretch_width", css_classes=["embed"])

    # -- updates ------------------------------------------------------------------
    @property
    def byo(self) -> BringYourOwnView:
        """The bring-your-own forms, built on first use."""
        if self._byo is None:
            self._byo = BringYourOwnView(self.scenario, on_measured=self._on_measured)
            self.byo_tab.append(self._byo.layout)
        return self._byo

    def _on_tab(self, event) -> None:
        self.active_tab = event.new
        if event.new == THROUGHPUT_TAB and self.throughput is None:
            self.throughput = ThroughputView(self.result)
            self.throughput.show_measured(self._measured_points())
            self.throughput_tab.append(pn.pane.Bokeh(self.throughput.figure, sizing_mode="stretch_width",
                                                     min_height=520))
        elif event.new == BYO_TAB:
            self.byo  # noqa: B018 - building it is the point
        elif event.new == EXPORT_TAB and not self.export_tab.objects:
            self.export_tab.append(build_exports(lambda: self.result, lambda: self.pins.rows, self.roofline.figure,
                                                 self.scenario))
        self._refresh_open_tab(self.result)

    def _refresh_open_tab(self, result: ScenarioResult) -> None:
        """Recompute the HTML view of the open tab (the others wait until opened)."""
        if self.active_tab == TRAFFIC_TAB:
            self.traffic.object = traffic_html(result)
        elif self.active_tab == KV_TAB:
            self.kv_table.object = kv_table_html(result)
        elif self.active_tab == SPECULATION_TAB:
            self.speculation.object = speculation_html(result, self.scenario)

    def _measured_points(self) -> list:
        """The measurements against the current model's and GPU's roof."""
        return analyse(self.scenario.levers(), self.measurements, self.scenario.resolve_model,
                       self.scenario.resolve_gpu)

    def _on_measured(self, measurements: list) -> None:
        self.measurements = measurements
        self._show_measured()

    def _show_measured(self) -> None:
        points = self._measured_points()
        self.roofline.show_measured(points)
        if self.throughput is not None:
            self.throughput.show_measured(points)
        if self._byo is not None:
            self._byo.show_measured(points)

    def _on_change(self, *_events) -> None:
        # A failure shows a message and keeps the last good views: no traceback
        # reaches the page, and nothing already shown is lost.
        try:
            result = self.scenario.evaluate()
        except Exception as exc:  # noqa: BLE001 - any failure must stay off the page
            self.error.object = f"Could not evaluate this scenario: {exc}"
            self.error.visible = True
            return
        self.error.visible = False
        self.show(result)
        self._write_link()

    def _write_link(self) -> None:
        self.link.write(self.scenario.levers(), self.pins.pins, self.scenario.custom_gpu())

    def _redraw_readouts(self) -> None:
        self.readouts.object = readouts_html(self.result, self.show_work.value)

    def show(self, result: ScenarioResult) -> None:
        """Push ``result`` into every view (data only; no figure is rebuilt)."""
        self.result = result
        with pn.io.hold():
            self.roofline.update(result)
            if self.throughput is not None:
                self.throughput.update(result)
            self._redraw_readouts()
            self.memory.object = memory_html(result)
            self.capacity.object = capacity_note(result)
            self._refresh_open_tab(result)
            self.tour.update(result)
            if self.measurements:
                self._show_measured()
            if self.embed:
                self._embed_summary.object = embed_summary(result)


def embed_summary(r: ScenarioResult) -> str:
    """One line of the key numbers for embed mode, where the legend and readouts are left out."""
    fits = "fits" if r.fits else "does not fit"
    return (
        f'<div style="font-size:13px" data-readout="embed-summary"><b>I = 2·B·k/p = '
        f"{r.arithmetic_intensity_weights:,.4g} "
        f"FLOP/byte</b> · ridge {r.ridge_point:,.0f} · "
        f"{r.attainable_flop_per_s_weights / 1e12:,.4g} TFLOP/s attainable "
        f"({100 * r.peak_fraction_weights:.3g} % of peak) · {r.tokens_per_s_with_kv:,.0f} tokens/s · "
        f"memory {fits} · "
        '<span style="color:#ff7f0e">●</span> workload <span style="color:#1f77b4">●</span> batch ladder '
        '<span style="color:#2ca02c">━</span> roof</div>'
    )


def create_app(scenario: Scenario | None = None, query: dict[str, str] | None = None) -> pn.viewable.Viewable:
    """The dashboard for ``scenario`` (defaults: Llama-3-70B, BF16, batch 1, H100 SXM).

    ``query`` (flag name -> text) restores a permalink; by default the page request's.
    """
    return Lab(scenario, query).layout
