"""Figures and data out: CSV and JSON downloads, and SVG rendering for the save tool."""

from __future__ import annotations

import io

import panel as pn

from core.export import ladder_csv, pins_csv, to_json

from .standalone import standalone_html
from .state import LabState


def build_exports(state: LabState, figure) -> pn.Column:
    """Download buttons for the current scenario, its ladder and the pins.

    Args:
        state: the session state (its scenario, result and pins are read at download time).
        figure: the roofline figure, whose save tool exports PNG, or SVG when
            drawn with the SVG backend.
    """
    def result():
        return state.result

    def pin_rows():
        return state.pin_rows

    page = pn.widgets.FileDownload(
        callback=lambda: io.StringIO(standalone_html(state.scenario)), filename="roofline-lab.html",
        label="Download page (offline, one HTML file)", width=300, css_classes=["download-page"])
    scenario_json = pn.widgets.FileDownload(
        callback=lambda: io.StringIO(to_json(result(), pin_rows())), filename="roofline-scenario.json",
        label="Scenario, ladder and pins (JSON)", width=260, css_classes=["download-json"])
    ladder = pn.widgets.FileDownload(
        callback=lambda: io.StringIO(ladder_csv(result())), filename="roofline-ladder.csv",
        label="Batch ladder (CSV)", width=200, css_classes=["download-ladder"])
    pins = pn.widgets.FileDownload(
        callback=lambda: io.StringIO(pins_csv(pin_rows())), filename="roofline-pins.csv",
        label="Pins (CSV)", width=150, css_classes=["download-pins"])
    svg = pn.widgets.Checkbox(label="Draw the roofline as SVG (the chart's save tool then saves SVG, else PNG)",
                              value=False, css_classes=["svg"])
    svg.param.watch(lambda e: setattr(figure, "output_backend", "svg" if e.new else "canvas"), "value")
    return pn.Column(
        pn.pane.Markdown("**Figures and data out** — SI units; CSV headers name their units. "
                         "The save icon in the chart's toolbar saves the roofline as an image."),
        # The buttons wrap onto a second line in a narrow column instead of running over the readouts.
        pn.FlexBox(scenario_json, ladder, pins, flex_wrap="wrap", sizing_mode="stretch_width"), svg,
        pn.pane.Markdown("**Offline page** — the roofline, ladder and readouts in one self-contained HTML file "
                         "(no server, no network; opens from disk or a wiki attachment). Batch, speculation depth, "
                         "acceptance rate, precisions, context and GQA still move, with the memory bar and the "
                         "derivation; the model and GPU are fixed to the current ones. Served beside the lab, it "
                         "is the class page (README, *Serving a class*)."),
        page, sizing_mode="stretch_width",
    )
