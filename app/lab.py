"""The app factory: ``create_app()`` builds one session's dashboard.

Importable and testable without a server (``create_app()`` returns a Panel
layout); ``app/main.py`` marks it servable for ``panel serve app``.

Data flow: the controls write the :class:`core.Scenario`; one watcher evaluates
it once per change and hands the :class:`core.ScenarioResult` to each view,
which only reads it and replaces its data in place.
"""

from __future__ import annotations

import panel as pn

from core.scenario import Scenario, ScenarioResult

from .controls import PARAMETERS, build_controls
from .memory_view import MEMORY_CSS, capacity_note, memory_html
from .readouts import READOUT_CSS, readouts_html
from .roofline_view import RooflineView

INTRO = """
# Roofline Lab
A decode step reads every weight once and does **2·B·k** FLOPs with it, so its
arithmetic intensity is **I = 2·B·k / p** (B batch, k tokens per weight read, p bytes
per weight). Below the **ridge point P_peak / BW** the GPU waits on memory; the
KV cache (**2·L·h_kv·d_head·S·B·p_kv**) decides whether the batch fits at all.
Try batch 4, INT4 weights, or speculation depth 4: all three land on the same spot.
"""

PAGE_CSS = """
.lab-error { font-size: 13px; }
"""


class Lab:
    """One session: a scenario, its controls and the views that read it."""

    def __init__(self, scenario: Scenario | None = None):
        self.scenario = scenario or Scenario()
        result = self.scenario.evaluate()
        self.roofline = RooflineView(result)
        self.memory = pn.pane.HTML(memory_html(result), stylesheets=[MEMORY_CSS], sizing_mode="stretch_width",
                                   margin=(24, 10, 5, 10), name="memory")
        self.readouts = pn.pane.HTML(readouts_html(result), stylesheets=[READOUT_CSS], sizing_mode="stretch_width",
                                     name="readouts")
        self.capacity = pn.pane.Markdown(capacity_note(result), sizing_mode="stretch_width", name="capacity-note")
        self.error = pn.pane.Alert("", alert_type="danger", visible=False, css_classes=["lab-error"],
                                   sizing_mode="stretch_width")
        self.scenario.param.watch(self._on_change, PARAMETERS + ["reserve_bytes"])
        self.layout = self._layout()

    def _layout(self) -> pn.viewable.Viewable:
        controls = pn.Column("### Levers", build_controls(self.scenario), width=330)
        chart = pn.pane.Bokeh(self.roofline.figure, sizing_mode="stretch_width", min_height=540)
        right = pn.Column("### Readouts", self.readouts, width=400)
        main = pn.Column(self.error, pn.Row(chart, right, sizing_mode="stretch_width"), self.memory, self.capacity,
                         sizing_mode="stretch_width")
        return pn.Column(
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width"),
            pn.Row(controls, main, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
            stylesheets=[PAGE_CSS],
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

    def show(self, result: ScenarioResult) -> None:
        """Push ``result`` into every view (data only; no figure is rebuilt)."""
        with pn.io.hold():
            self.roofline.update(result)
            self.memory.object = memory_html(result)
            self.readouts.object = readouts_html(result)
            self.capacity.object = capacity_note(result)


def create_app(scenario: Scenario | None = None) -> pn.viewable.Viewable:
    """The dashboard for ``scenario`` (defaults: Llama-3-70B, BF16, batch 1, H100 SXM)."""
    return Lab(scenario).layout
