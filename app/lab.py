"""The app factory: ``create_app()`` builds one session's dashboard.

Importable and testable without a server (``create_app()`` returns a Panel
layout); ``app/main.py`` marks it servable for ``panel serve app``.

Data flow, the HoloViz way: the controls, the tour, a permalink and the
bring-your-own forms write the :class:`core.Scenario` (or the pins and
measurements) held by a :class:`app.state.LabState`; the state evaluates the
scenario once per change, and every view is a ``pn.viewable.Viewer`` that
depends on the state's parameters and redraws itself in place.  Tabs are named;
a tab's view is built when it is first opened.
"""

from __future__ import annotations

from html import escape

import panel as pn
import param

from core.permalink import from_query
from core.precision import get_precision
from core.scenario import Scenario, ScenarioResult

from .byo_view import BringYourOwnView
from .compare_view import CompareView
from .controls import build_controls
from .exports_view import build_exports
from .memory_view import MemoryView
from .permalink_view import APP_KEYS, PermalinkView, session_query
from .pins_view import PinsView
from .readouts import ReadoutsView
from .roofline_view import RooflineView
from .serving_views import TabHTMLView, kv_table_html, speculation_html, traffic_html
from .state import TABS, LabState
from .style import PALETTE, STYLESHEET
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

#: The levers of embed mode's compact control strip.
EMBED_LEVERS = ["model", "gpu", "weight_dtype", "batch", "spec_k", "context", "gqa"]


def _flag(query: dict, key: str) -> bool:
    value = query.get(key, "")
    value = value[0] if isinstance(value, (list, tuple)) and value else value
    return str(value).lower() in ("true", "1")


class Lab(pn.viewable.Viewer):
    """One session: a scenario, its controls and the views that follow it.

    Args:
        scenario: the scenario to show (a new default one if None).
        query: permalink query parameters (key -> text, or key -> list of texts);
            by default the page's.  ``embed=true`` selects the compact embed layout.
    """

    state = param.ClassSelector(class_=LabState, doc="The session state every view follows.")

    def __init__(self, scenario: Scenario | None = None, query: dict | None = None):
        scenario = scenario or Scenario()
        query = session_query() if query is None else query
        link = from_query(query, ignore=APP_KEYS)
        if link.custom_gpu is not None:
            scenario.add_gpu(link.custom_gpu)
        scenario.param.update(**link.levers)
        super().__init__(state=LabState(scenario, pins=link.pins, notices=link.notices, embed=_flag(query, "embed")))
        state = self.state
        self.scenario = scenario
        self.embed = state.embed
        self.roofline = RooflineView(state=state, compact=self.embed)
        self.error = pn.pane.Alert("", alert_type="danger", visible=False, sizing_mode="stretch_width")
        self.link = PermalinkView(state=state)
        self.pins = PinsView(state=state)
        self.tour = TourView(state=state)
        self.readouts = ReadoutsView(state=state)
        self.memory_view = MemoryView(state=state)
        self.throughput: ThroughputView | None = None
        self.compare: CompareView | None = None
        self._byo: BringYourOwnView | None = None
        self._tab_bodies = {name: pn.Column(sizing_mode="stretch_width") for name in TABS}
        self._on_error()
        self.layout = self._embed_layout() if self.embed else self._layout()

    def __panel__(self):
        return self.layout

    # -- what tests and the benchmark read ---------------------------------------------
    @property
    def result(self) -> ScenarioResult:
        return self.state.result

    @property
    def memory(self) -> pn.pane.HTML:
        return self.memory_view.bar

    @property
    def byo(self) -> BringYourOwnView:
        """The bring-your-own forms, built on first use."""
        if self._byo is None:
            self._byo = BringYourOwnView(state=self.state)
            self._tab_bodies["Bring your own"].append(self._byo)
        return self._byo

    # -- layouts ----------------------------------------------------------------
    def _layout(self) -> pn.viewable.Viewable:
        controls = pn.Column("### Levers", build_controls(self.scenario), width=320, margin=(0, 20, 0, 5))
        band = pn.widgets.Checkbox.from_param(self.state.param.band, label="Show the 60–85 % measured-efficiency band",
                                              css_classes=["band"])
        self._tab_bodies["Roofline"].extend([self.roofline, band])
        tabs = pn.Tabs(*((name, self._tab_bodies[name]) for name in TABS), dynamic=True,
                       sizing_mode="stretch_width")
        tabs.param.watch(lambda e: setattr(self.state, "tab", TABS[e.new]), "active")
        self.state.param.watch(lambda e: setattr(tabs, "active", TABS.index(e.new)), "tab")
        self.state.param.watch(lambda e: self._open(e.new), "tab")
        self.tabs = tabs
        views = pn.Column(tabs, pn.Row(self.pins.pin_button, self.pins.message), sizing_mode="stretch_width",
                          styles={"flex": "1 1 480px"}, min_width=0)
        # The readouts wrap below the views on a narrow screen instead of squeezing the chart.
        main = pn.Column(self.link.notice, self.tour, self.error,
                         pn.FlexBox(views, self.readouts, flex_wrap="wrap", sizing_mode="stretch_width"),
                         self.memory_view, sizing_mode="stretch_width")
        return pn.Column(
            pn.pane.Markdown(INTRO, sizing_mode="stretch_width"),
            pn.Row(controls, main, sizing_mode="stretch_width"),
            self.link,
            sizing_mode="stretch_width",
        )

    def _embed_layout(self) -> pn.viewable.Viewable:
        """``?embed=true``: the roofline and a compact control strip, no page chrome."""
        strip = build_controls(self.scenario, parameters=EMBED_LEVERS, compact=True)
        self._embed_summary = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width",
                                           margin=(0, 10))
        self._on_embed_result()
        return pn.Column(self.link.notice, strip, self.error, self._embed_summary, self.roofline, self.link,
                         sizing_mode="stretch_width", css_classes=["embed"])

    # -- following the state ------------------------------------------------------------
    def _open(self, name: str) -> None:
        """Build a tab's view the first time it opens: most sessions look at the roofline only."""
        body = self._tab_bodies[name]
        if body.objects:
            return
        if name == "Throughput vs B":
            self.throughput = ThroughputView(state=self.state)
            body.append(self.throughput)
        elif name == "Compare":
            self.compare = CompareView(state=self.state)
            body.append(self.compare)
        elif name == "Traffic":
            body.append(TabHTMLView(lambda s: traffic_html(s.result), state=self.state, tab=name))
        elif name == "KV table":
            body.append(TabHTMLView(lambda s: kv_table_html(s.result), state=self.state, tab=name))
        elif name == "Speculation":
            body.append(TabHTMLView(speculation_html, state=self.state, tab=name))
        elif name == "Pins":
            body.append(self.pins)
        elif name == "Bring your own":
            self.byo  # noqa: B018 - building it is the point
        elif name == "Export":
            body.append(build_exports(self.state, self.roofline.figure))

    def _on_tab(self, index: int) -> None:
        """Open tab ``index`` as a click would (tests and the benchmark use this)."""
        self.state.tab = TABS[index]

    @param.depends("state.error", watch=True)
    def _on_error(self) -> None:
        self.error.object = escape(self.state.error)
        self.error.visible = bool(self.state.error)

    @param.depends("state.result", watch=True)
    def _on_embed_result(self) -> None:
        if self.embed:
            self._embed_summary.object = embed_summary(self.state.result)

    def pin_current(self) -> None:
        """Pin the current scenario under a default name."""
        self.pins.pin_current()


def embed_summary(r: ScenarioResult) -> str:
    """One line of the key numbers for embed mode, where the legend and readouts are left out."""
    fits = "fits" if r.fits else "does not fit"
    return (
        f'<div style="font-size:13px" data-readout="embed-summary"><b>I = 2·B·k/p = '
        f"{r.arithmetic_intensity_weights:,.4g} FLOP/byte</b> · ridge {r.ridge_point:,.0f} · "
        f"{r.attainable_flop_per_s_weights / 1e12:,.4g} TFLOP/s attainable "
        f"({100 * r.peak_fraction_weights:.3g} % of peak) · {r.tokens_per_s_with_kv:,.0f} tokens/s · "
        f"memory {fits} · weights {escape(get_precision(r.weight_dtype).label)} · "
        f'<span style="color:{PALETTE["workload"]}">●</span> workload '
        f'<span style="color:{PALETTE["ladder"]}">●</span> batch ladder '
        f'<span style="color:{PALETTE["roof"]}">━</span> roof</div>'
    )


def create_app(scenario: Scenario | None = None, query: dict | None = None) -> pn.viewable.Viewable:
    """The dashboard for ``scenario`` (defaults: Llama-3-70B, BF16, batch 1, H100 SXM).

    ``query`` (key -> text or texts) restores a permalink; by default the page's.
    A link that cannot be opened at all still opens the lab, at the defaults,
    saying why: never a blank page.
    """
    try:
        return Lab(scenario, query).layout
    except Exception as exc:  # noqa: BLE001 - a link must never leave a blank page
        lab = Lab(Scenario(), {})
        lab.state.notices = [f"this link could not be opened ({type(exc).__name__}: {exc}); showing the defaults"]
        lab.link.notice.object = ("<b>This link could not be opened</b>; the lab shows its defaults.<ul>"
                                  f"<li>{escape(lab.state.notices[0])}</li></ul>")
        lab.link.notice.visible = True
        return lab.layout
