"""The app factory: ``create_app()`` builds one session's dashboard.

Importable and testable without a server (``create_app()`` returns a Panel
layout); ``app/main.py`` marks it servable for ``panel serve app``.

Data flow: the controls (and the tour) write the :class:`core.Scenario`; one
watcher evaluates it once per change and hands the :class:`core.ScenarioResult`
to each view, which only reads it and replaces its data in place.
"""

from __future__ import annotations

import panel as pn

from core.scenario import LEVERS, Scenario, ScenarioResult

from .controls import build_controls
from .memory_view import MEMORY_CSS, capacity_note, memory_html
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


THROUGHPUT_TAB = 1  # index of "Throughput vs batch" in the view tabs


class Lab:
    """One session: a scenario, its controls and the views that read it."""

    def __init__(self, scenario: Scenario | None = None):
        self.scenario = scenario or Scenario()
        result = self.scenario.evaluate()
        self.roofline = RooflineView(result)
        # The throughput chart is built when its tab first opens: a Bokeh figure
        # is a third of a session's build cost, and most sessions never open it.
        self.throughput: ThroughputView | None = None
        self.throughput_tab = pn.Column(sizing_mode="stretch_width", min_height=520)
        self.show_work = pn.widgets.Checkbox(label="Show your work (formulas with values)", value=False,
                                             css_classes=["show-work"])
        self.band = pn.widgets.Checkbox(label="Show the 60–85 % measured-efficiency band", value=False,
                                        css_classes=["band"])
        self.readouts = pn.pane.HTML(readouts_html(result), stylesheets=[READOUT_CSS], sizing_mode="stretch_width",
                                     name="readouts")
        self.memory = pn.pane.HTML(memory_html(result), stylesheets=[MEMORY_CSS], sizing_mode="stretch_width",
                                   margin=(24, 10, 5, 10), name="memory")
        self.capacity = pn.pane.Markdown(capacity_note(result), sizing_mode="stretch_width", name="capacity-note")
        self.traffic = pn.pane.HTML(traffic_html(result), stylesheets=[SERVING_CSS], sizing_mode="stretch_width")
        self.kv_table = pn.pane.HTML(kv_table_html(result), stylesheets=[SERVING_CSS], sizing_mode="stretch_width")
        self.speculation = pn.pane.HTML(speculation_html(result, self.scenario.levers()),
                                        stylesheets=[SERVING_CSS], sizing_mode="stretch_width")
        self.error = pn.pane.Alert("", alert_type="danger", visible=False, sizing_mode="stretch_width")
        self.tour = TourView(self.scenario)
        self.result = result
        self.scenario.param.watch(self._on_change, list(LEVERS))
        self.show_work.param.watch(lambda _e: self._redraw_readouts(), "value")
        self.band.param.watch(lambda e: setattr(self.roofline.band_renderer, "visible", e.new), "value")
        self.layout = self._layout()

    def _layout(self) -> pn.viewable.Viewable:
        controls = pn.Column("### Levers", build_controls(self.scenario), width=320)
        tabs = pn.Tabs(
            ("Roofline", pn.Column(pn.pane.Bokeh(self.roofline.figure, sizing_mode="stretch_width", min_height=540),
                                   self.band, sizing_mode="stretch_width")),
            ("Throughput vs batch", self.throughput_tab),
            ("Traffic per step", self.traffic),
            ("KV cache table", self.kv_table),
            ("Speculation", self.speculation),
            dynamic=True, sizing_mode="stretch_width", name="views",
        )
        tabs.param.watch(self._on_tab, "active")
        readouts = pn.Column("### Readouts", self.show_work, self.readouts, width=380)
        main = pn.Column(self.tour.layout, self.error, pn.Row(tabs, readouts, sizing_mode="stretch_width"),
                         self.memory, self.capacity, sizing_mode="stretch_width")
        return pn.Column(
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width"),
            pn.Row(controls, main, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
        )

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

    def _on_tab(self, event) -> None:
        if event.new == THROUGHPUT_TAB and self.throughput is None:
            self.throughput = ThroughputView(self.result)
            self.throughput_tab.append(pn.pane.Bokeh(self.throughput.figure, sizing_mode="stretch_width",
                                                     min_height=520))

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
            self.traffic.object = traffic_html(result)
            self.kv_table.object = kv_table_html(result)
            self.speculation.object = speculation_html(result, self.scenario.levers())
            self.tour.update(result)


def create_app(scenario: Scenario | None = None) -> pn.viewable.Viewable:
    """The dashboard for ``scenario`` (defaults: Llama-3-70B, BF16, batch 1, H100 SXM)."""
    return Lab(scenario).layout
