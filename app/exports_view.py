"""Data out: CSV and JSON downloads and the offline page; where each chart's images are saved.

The images are saved from each chart's own toolbar (SVG, and PNG at 2×: :mod:`app.image_export`), where the
chart is on screen and current; this tab says so.
"""

from __future__ import annotations

import asyncio
import io
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from html import escape

import panel as pn
from bokeh.models import Button as BkButton
from bokeh.models import CustomJS, InlineStyleSheet

from core.expected import expected_for_scenario
from core.export import ladder_csv, pins_csv, to_json

from .permalink_view import pins_left_out
from .standalone import standalone_html
from .state import LabState
from .style import CODE_CSS, STYLESHEET

#: Writes offline pages off the event loop the class shares (a page is ~0.3 s of CPU: its Bokeh document, every
#: weight format's profile and the inline BokehJS).  One worker: pages asked for together queue here, and the loop
#: keeps answering the other sessions between the worker's slices of the GIL.
PAGE_WRITERS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="offline-page")


async def offline_page(state: LabState) -> io.StringIO:
    """The offline page of ``state``'s scenario as at the click (a copy: the levers may move meanwhile), written
    in :data:`PAGE_WRITERS`; Panel's FileDownload awaits it (an async callback runs on the loop, this waits off it)."""
    scenario = state.scenario.clone()
    config = state.configs.get(scenario.model)  # a pasted model's config.json: the page's link carries it
    html = await asyncio.wrap_future(PAGE_WRITERS.submit(standalone_html, scenario, config))
    return io.StringIO(html)


#: "Copy link": the address bar holds the whole state (app/permalink_view.py), with the tab the student came to Export
#: from in place of Export (a trial: every copied link opened the class on Export, with no chart; an engineer's, that
#: a link copied after Compare opened on the Roofline); the clipboard where the page may write it
#: (a secure context: https, or localhost), else a prompt with the link selected for copying.
COPY_JS = """
const text = KIND === "link" ? (() => {
  const q = new URLSearchParams(window.location.search);
  if ((q.get("tab") || "").toLowerCase() === "export") {
    const from = btn.tags[0];  // the tab the student came from (LabState.came_from)
    if (from && from !== "Export" && from !== "Roofline") { q.set("tab", from); } else { q.delete("tab"); }
  }
  const query = q.toString();
  return window.location.origin + window.location.pathname + (query ? "?" + query : "") + window.location.hash;
})() : (() => {
  const q = new URLSearchParams(window.location.search);
  for (const key of ["tab", "present", "tour"]) { q.delete(key); }
  q.set("embed", "true");
  const src = window.location.origin + window.location.pathname + "?" + q.toString();
  return '<iframe src="' + src.replace(/&/g, "&amp;").replace(/"/g, "&quot;") +
    '" width="500" height="450" style="border:0;width:100%;max-width:500px" title="Roofline Lab"></iframe>';
})();
const label = btn.label;
const said = (word) => { btn.label = word; setTimeout(() => { btn.label = label; }, 2000); };
const ask = () => { window.prompt(KIND === "link" ? "Copy this link:" : "Copy this embed code:", text); };
if (navigator.clipboard && window.isSecureContext) {
  navigator.clipboard.writeText(text).then(() => said("Copied"), ask);
} else {
  ask();
}
"""


#: A Bokeh button drawn as Panel 1.9's default buttons beside it are (its own look is white with a grey border).
PANEL_BUTTON_LOOK = """
.bk-btn-default { background-color: #f3f3f3; color: #1a1d21; border: 1px solid transparent; }
.bk-btn-default:hover { background-color: #e6e6e6; }
"""


def share_buttons(state: LabState) -> pn.Row:
    """"Copy link" (the page's address: every lever, the pins, the tab, or on Export the tab ``state`` came from) and
    "Copy embed code" (an iframe of ``?embed=true`` at 500 × 450 with the same state, without the tab, present mode
    or tour step).

    Browser-only buttons (the server is not told of a click): Bokeh buttons with their click's script, in a Panel
    pane.  (A Panel button's ``js_on_click`` registers a Panel browser callback, and a page with one makes Panel
    walk every model of the page on each layout change.)
    """
    row = []
    for kind, label, width in (("link", "Copy link to this scenario", 230), ("embed", "Copy embed code (iframe)", 220)):
        button = BkButton(label=label, width=width, css_classes=[f"copy-{kind}"], margin=(5, 10),
                          stylesheets=[InlineStyleSheet(css=PANEL_BUTTON_LOOK)])
        button.js_on_event("button_click", CustomJS(args={"btn": button}, code=COPY_JS.replace("KIND", repr(kind))))
        if kind == "link":
            button.tags = [state.came_from]
            state.param.watch(lambda e, b=button: setattr(b, "tags", [e.new]), "came_from")
        row.append(pn.pane.Bokeh(button))
    return pn.Row(*row, styles={"flex-wrap": "wrap"})  # a phone's width: one under the other


def _left_out_html(*_changed, state: LabState) -> str:
    """The Share paragraph's warning: what a link of ``state`` leaves out (:func:`pins_left_out`), or nothing."""
    lost = pins_left_out(state)
    return f'<div class="warn" data-readout="share-lost">{escape(lost)}</div>' if lost else ""


def build_exports(state: LabState) -> pn.Column:
    """Download buttons for the current scenario, its ladder and the pins.

    Args:
        state: the session state (its scenario, result and pins are read at download time).
    """
    def width(built: int, present: int):
        """A button's width: ``built`` px, or ``present`` px on a projector, where its label is 18 px."""
        return state.param.present.rx().rx.where(present, built)


    def result():
        return state.result

    def pin_rows():
        return state.pin_rows

    def expected():
        """The scenario's expected step with its TTFT, as ``explain --json`` has it (the session's own has no
        prefill chain: the page's readouts do not need it); the session's where the prefill cannot be evaluated."""
        try:
            return expected_for_scenario(state.scenario, state.engine_preset, result=state.result)
        except Exception:  # noqa: BLE001 - the decode chain alone, as the Expected tab then shows it
            return state.expected

    page = pn.widgets.FileDownload(
        callback=partial(offline_page, state), filename="roofline-lab.html",
        label="Download page (offline, one HTML file)", width=width(300, 400), css_classes=["download-page"])
    scenario_json = pn.widgets.FileDownload(
        callback=lambda: io.StringIO(to_json(result(), pin_rows(), state.engine_preset, expected())),
        filename="roofline-scenario.json",
        label="Scenario, ladder and pins (JSON)", width=width(260, 350), css_classes=["download-json"])
    ladder = pn.widgets.FileDownload(
        callback=lambda: io.StringIO(ladder_csv(result())), filename="roofline-ladder.csv",
        label="Batch ladder (CSV)", width=width(200, 230), css_classes=["download-ladder"])
    pins = pn.widgets.FileDownload(
        callback=lambda: io.StringIO(pins_csv(pin_rows(), state.engine_preset)), filename="roofline-pins.csv",
        label="Pins (CSV)", width=width(150, 170), css_classes=["download-pins"])
    return pn.Column(
        pn.pane.Markdown("**Share** — the address bar holds the whole scenario (levers, pins, your own GPU and "
                         "config, the tab); copy it, or an iframe of the embeddable view (500 × 450) for a wiki."),
        # What it leaves out: pins on a second pasted model (a link carries one config.json).
        pn.pane.HTML(pn.bind(_left_out_html, state.param.pins, state.param.configs, state.param.result, state=state),
                     stylesheets=[STYLESHEET], sizing_mode="stretch_width"),
        share_buttons(state),
        pn.pane.Markdown("**Figures and data out** — SI units; CSV headers name their units (the Compare tab's "
                         "\"These rows\" is this Pins CSV). **Images**: every chart's toolbar (top right of the "
                         "chart, shown when the pointer is over it) saves the chart as you see it, as **SVG** "
                         "(`roofline-<model>-<GPU>-<phase>-<levers>.svg`, named after the chart's title) or as "
                         "**PNG at twice its size** (`…@2x.png`, 1,114 × 1,080 px "
                         "for the roofline beside the readouts at 1280 px): on the Roofline, Throughput vs B, "
                         "Scaling and Compare tabs.", stylesheets=[CODE_CSS]),
        # The buttons wrap onto a second line in a narrow column instead of running over the readouts.
        pn.FlexBox(scenario_json, ladder, pins, flex_wrap="wrap", sizing_mode="stretch_width"),
        pn.pane.Markdown("**Offline page** — the roofline, ladder and readouts in one self-contained HTML file "
                         "(no server, no network; opens from disk or a wiki attachment). Batch, speculation depth, "
                         "acceptance rate, precisions, context and GQA still move, with the memory bar and the "
                         "derivation; the model, the GPU and the split (TP, PP, EP, replicas) are fixed to the "
                         "current ones. Served beside the lab, it "
                         "is the class page (README, *Serving a class*)."),
        page, sizing_mode="stretch_width",
    )
