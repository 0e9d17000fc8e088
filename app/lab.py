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
from urllib.parse import urlencode

import panel as pn
import param
from bokeh.models import Div

from core.explain import intensity_weights_formula
from core.permalink import apply_link_gpus, from_query
from core.scenario import LEVERS, Scenario, ScenarioResult
from core.spread import expected_point
from core.tour import TOUR
from core.units import TFLOP, fmt_sig

from .a11y import A11yFixes
from .byo_view import BringYourOwnView, open_scenario
from .compare_view import CompareView
from .controls import build_controls, lever_widgets, write_lever
from .expected_view import expected_tab_html
from .exports_view import build_exports
from .hardware_view import HardwareView
from .instant import InstantRedraw
from .ladder_view import LadderView
from .memory_view import MemoryView
from .message import Message
from .notifications import place_notices, quiet_ready_notice
from .permalink_view import APP_KEYS, PermalinkView, app_link_state, session_query
from .pins_view import PinsView
from .present import CARD_HEADER_CSS, PRESENT_CONTROLS, PRESENT_TABS_CSS, PRESENT_WIDTHS
from .readouts import ReadoutsView
from .roofline_view import (
    COMMUNICATION_RUNGS_KEY,
    OVERHEAD_KEY,
    OVERHEAD_RUNGS_KEY,
    RooflineView,
    expected_label,
    pinned_roofs_apart,
    rungs_held_down,
    rungs_lowered_by_communication,
)
from .scaling_view import ScalingView
from .serving_system import ServingSystemView
from .serving_views import TabHTMLView, kv_table_html, speculation_html, traffic_html
from .state import ENGINES, TABS, LabState
from .style import PALETTE, STYLESHEET
from .throughput_view import ThroughputView
from .tour_view import PRESENT_BUTTON, TourView
from .turns import in_pieces, later

INTRO = """
# Roofline Lab
A decode step reads every weight once and does **2·B·k** FLOPs with it, so its
arithmetic intensity is **I = 2·B·k / p** (B batch, k tokens per weight read, p bytes
per weight). Below the **ridge point P_peak / BW** the GPU waits on memory; the
KV cache (**2·L·h_kv·d_head·S·B·p_kv**) decides whether the batch fits at all.
Try batch 4, INT4 weights, or speculation depth 4: on a dense model all three land on one spot
(on an MoE, batch 4 and k = 4 read more experts' weights and land left of INT4).
"""

#: The levers of embed mode's compact control strip.
EMBED_LEVERS = ["model", "gpu", "weight_dtype", "batch", "spec_k", "context", "gqa"]
LEVER_DEFAULTS = LEVERS.defaults()
#: The chart's least height in embed mode: with the summary, the key and the link it fits a 500 × 450 iframe; a
#: taller iframe gives the chart its height (the page is one column as tall as the iframe, the chart its rest).
EMBED_CHART_HEIGHT = 250
#: Embed mode's Levers drawer: a sheet fixed to the iframe's foot, its header always there; opened, it lies over
#: the chart (scrolling within itself when its levers need more room) instead of lengthening the page, which made
#: the iframe scroll and the chart leave it.  Its header toggles it.
EMBED_DRAWER_STYLES = {"position": "fixed", "left": "0", "right": "0", "bottom": "0", "z-index": "20",
                       "max-height": "80vh", "overflow-y": "auto", "background": "#ffffff",
                       "box-shadow": "0 -2px 8px rgba(0, 0, 0, 0.25)"}
#: Room kept at the page's foot for the drawer's header (px): it lies over the page's last this many pixels.
EMBED_DRAWER_HEADER = 42
#: The embed key's pane gives way to the chart: it shrinks below its text's height where the chart would otherwise
#: fall under :data:`EMBED_CHART_HEIGHT` (issue 30: at 500 × 450 the expected point and four pins made a seven-line
#: key, and the chart 231 px tall), and its list scrolls within it (``.embed-key``, app/lab.css); the link to the
#: full lab keeps its line under it.
EMBED_KEY_STYLES = {"flex": "0 1 auto", "min-height": "0", "display": "flex", "flex-direction": "column"}
EMBED_KEY_CSS = (":host > div { display: flex; flex-direction: column; min-height: 0; overflow: hidden; }"
                 ".embed-key { min-height: 0; overflow-y: auto; }")
#: The Hardware tab's levers that are the lab's own: one B and one CUDA-graphs switch on the page.
SHARED_LEVERS = ("batch", "cuda_graphs")
#: The tab bar's look: Bokeh's radio button group drawn as a row of tabs, whose names wrap onto a second line on a
#: narrow page instead of scrolling out of sight.  The open tab is joined to the view under it and marked by a
#: 3-px bar above its name, in the palette's blue, so a room can tell it from the others (and from the focus ring).
TAB_BAR_CSS = (".bk-btn-group { flex-wrap: wrap; height: auto; border-bottom: 1px solid #d9d9d9; }"
               ".bk-btn-group > .bk-btn { flex: 0 0 auto; margin: 0 0 -1px 0; padding: 3px 8px 4px 8px; "
               "border: 1px solid transparent; border-top-width: 3px; "
               "border-radius: 4px 4px 0 0; background: none; box-shadow: none; color: #4d4d4d; }"
               ".bk-btn-group > .bk-btn:hover { background: #f2f2f2; }"
               # A tab clicked and then left (the tour moved on) kept a focus box beside the open tab: the ring is
               # for the keyboard's focus only.
               ".bk-btn-group > .bk-btn:focus:not(:focus-visible) { outline: none; box-shadow: none; }"
               ".bk-btn-group > .bk-btn.bk-active { color: #000000; background: #ffffff; "
               f"border-color: {PALETTE['ladder']} #d9d9d9 #ffffff #d9d9d9; }}"
               # In forced colours the open tab's coloured top border was painted over: every tab looked alike (an
               # accessibility audit).  It is outlined in the theme's highlight and underlined.
               "@media (forced-colors: active) { .bk-btn-group > .bk-btn.bk-active { border: 2px solid Highlight; "
               "border-top-width: 4px; text-decoration: underline; } }")
#: Present mode's row of the views and the side column: on a screen too narrow for the two side by side (the side
#: column's 460 px beside the views' 480), the side column (the tour's buttons, the card) comes first.
PRESENT_PHONE_CSS = "@media (max-width: 700px) { .present-side { order: -1; } }"
#: A Bokeh row's style that lets its items wrap onto the next line, as a pn.FlexBox's do (without its template).
WRAP = {"flex-wrap": "wrap"}
#: The header's style: the title and the present-mode button on one line, wrapping on a narrow page.
HEADER_STYLES = {**WRAP, "align-items": "center"}
#: Present mode's button, by present mode: what pressing it does.
PRESENT_LABELS = {False: "Present mode (projector)", True: "Leave present mode"}
#: The expected point's switch, by present mode (on, off): on a projector one line of 18 px in the side column's
#: 440 px (the full label took two lines there).
BAND_LABELS = {False: "Show the expected point (the engine preset) with its spread",
               True: "Show the expected point with its spread"}
#: In present mode the switch is the tour's row after "Jump to step" and the pin button: a row of its own (the
#: tour's controls are a flex box), above the card.
BAND_ROW = {"flex": "1 1 100%"}
#: Its margins (px), by present mode: between "Jump to step" and the card it needs none above or below.
BAND_MARGINS = {False: (5, 10), True: (0, 10)}
#: The memory bar's margins (px), by present mode: under the views, or at the top of the side column.
MEMORY_BAR_MARGINS = {False: (24, 10, 5, 10), True: (4, 10, 5, 10)}


class Lab(pn.viewable.Viewer):
    """One session: a scenario, its controls and the views that follow it.

    Args:
        scenario: the scenario to show (a new default one if None).
        query: permalink query parameters (key -> text, or key -> list of texts);
            by default the page's.  ``embed=true`` selects the compact embed layout,
            ``present=true`` present mode, ``tour=5`` a tour step, ``tab=Compare`` a tab.
    """

    state = param.ClassSelector(class_=LabState, doc="The session state every view follows.")

    def __init__(self, scenario: Scenario | None = None, query: dict | None = None):
        scenario = scenario or Scenario()
        query = session_query() if query is None else query
        link = from_query(query, ignore=APP_KEYS)
        app, app_notices = app_link_state(query, TABS, len(TOUR), ENGINES)
        apply_link_gpus(scenario, link)  # the selected GPU's and its pins'
        scenario.param.update(**link.levers)
        super().__init__(state=LabState(scenario, pins=link.pins, notices=[*link.notices, *app_notices],
                                        embed=app["embed"], present=app["present"] and not app["embed"],
                                        band=app["band"], **({"engine": app["engine"]} if app["engine"] else {}),
                                        **{key: app[key] for key in ("ladder", "mix", "block_size")
                                           if app[key] is not None}))
        state = self.state
        self.scenario = scenario
        self.embed = state.embed
        self.roofline = RooflineView(state=state, compact=self.embed,
                                     height=EMBED_CHART_HEIGHT if self.embed else 540)
        #: A scenario that could not be evaluated, said at the top of the page (made on the first such error).
        self.error = Message(lambda: pn.pane.Alert(alert_type="danger", sizing_mode="stretch_width"))
        self.link = PermalinkView(state=state)
        # The link's notices and the error head the page: placed there when first said (_place_banner).
        self._banner_host: tuple[pn.layout.ListLike, int] | None = None
        self.error.place = self.link.notice.place = self._place_banner
        self.pins = PinsView(state=state)
        self.tour = TourView(state=state)
        self.tour.place_strip = self._place_strip
        self.readouts = ReadoutsView(state=state)
        self.memory_view = MemoryView(state=state)
        self.throughput: ThroughputView | None = None
        self.compare: CompareView | None = None
        self.hardware: HardwareView | None = None
        self.ladder: LadderView | None = None
        self._byo: BringYourOwnView | None = None
        #: What each tab shows, once built (a tab is built when first opened: most sessions look at the roofline).
        self._tab_views: dict[str, pn.viewable.Viewable] = {}
        self._opening: set[str] = set()  # tabs whose view waits its turn of the event loop (_open)
        self._on_error()
        self.layout = self._embed_layout() if self.embed else self._layout()
        if self.embed or state.present:
            # An embed in a documentation page, or a projector: the lab, not a toast over its corner (on a
            # projector a long tour card reaches every corner); the lost-connection notice stays.
            quiet_ready_notice()
        if not self.embed:
            if app["tour_step"]:
                # The link's levers, tab and rungs win over the step's: a link made mid-tour after a move keeps it.
                self.tour.go(app["tour_step"] - 1)
                if link.levers:
                    scenario.param.update(**link.levers)
                if app["ladder"] is not None:
                    state.ladder = app["ladder"]
            if app["tab"]:
                state.tab = app["tab"]
        self._page_built = True  # from now on a tab's first build waits its turn (_open)
        if link.config is None:
            self.link.write_opening(query)  # with a config, once it is read (its result moves the address bar)
        if link.config is not None:
            # The link's config.json is read as the Bring your own tab reads one (off the event loop when served);
            # its model, the levers and the pins then apply.
            self.link.show_notices(busy="Reading the config.json this link carries…")
            open_scenario(state, query, link.config, self.instant.prepare, ignore=APP_KEYS, undoable=False,
                          done=self._link_config_read)

    def __panel__(self):
        return self.layout

    def _link_config_read(self, notices: list[str]) -> None:
        """The opening link's config.json was read (or refused): its notices join the link's."""
        self.state.notices = [*self.state.notices, *(n for n in notices if n not in self.state.notices)]
        self.link.show_notices()

    # -- what tests and the benchmark read ---------------------------------------------
    @property
    def result(self) -> ScenarioResult:
        return self.state.result

    @property
    def memory(self) -> Div:
        return self.memory_view.bar

    @property
    def byo(self) -> BringYourOwnView:
        """The bring-your-own forms, built on first use."""
        if self._byo is None:
            self._byo = BringYourOwnView(state=self.state, prepare=self.instant.prepare)
            self._show_in_tab("Bring your own", self._byo)
        return self._byo

    # -- layouts ----------------------------------------------------------------
    def _layout(self) -> pn.viewable.Viewable:
        # The levers fold away (a drawer on a phone, out of the way on a projector); beside the views on
        # a wide screen, above them when the page is narrow or zoomed.
        levers = build_controls(self.scenario)
        self.instant = InstantRedraw(self.state, self.roofline, lever_widgets(levers))
        # A tour step that asks for a lever of "More levers" opens that section (present mode shows the lever above
        # the card instead): a student looked for step 6's reserve in the folded section.
        more = next((o for o in levers.objects if "more-levers" in o.css_classes), None)

        def open_asked(*_events) -> None:
            step = self.state.tour_step
            if (more is not None and step is not None and not self.state.present
                    and any(LEVERS[name].more for name in TOUR[step - 1].asks)):
                more.collapsed = False

        self.state.param.watch(open_asked, "tour_step")
        self.controls = pn.Card(*levers.objects, title="Levers", collapsible=True,
                                collapsed=self.state.present, width=320, margin=(0, 20, 10, 5),
                                styles={"flex": "0 1 320px"}, min_width=0, css_classes=["levers"],
                                stylesheets=[CARD_HEADER_CSS])
        # Only on the Roofline tab (present mode puts it beside the chart, where every tab shows)
        self.band = band = pn.widgets.Checkbox.from_param(
            self.state.param.band, label=BAND_LABELS[False],
            css_classes=["band"], visible=self.state.param.tab.rx() == "Roofline")
        # A button, not a toggle: its press reaches the server as an event, in order with the keys' (a toggle's
        # change waits 50 ms for more, and a clicker's key sent meanwhile was handled first).  It says what pressing
        # it does.
        self.present_toggle = pn.widgets.Button(label=PRESENT_LABELS[self.state.present], width=230,
                                                css_classes=[PRESENT_BUTTON])
        self.present_toggle.on_click(lambda _e: setattr(self.state, "present", not self.state.present))
        self.state.param.watch(lambda e: setattr(self.present_toggle, "label", PRESENT_LABELS[e.new]), "present")
        self._tab_views["Roofline"] = roofline = pn.Column(self.roofline, band, sizing_mode="stretch_width")
        # The tabs are one control, a bar of their names (the state's ``tab``, both ways), over the views opened so
        # far, of which only the open tab's is shown.  A tab's view is built when it first opens (_open) and stays
        # in the page: a view updated while its tab is hidden is updated in the document, and going back to it
        # rebuilds nothing.  (A Bokeh Tabs needs a panel and a child model for every tab from the start: 27 models
        # of every session's first page, for ten views most sessions never open.)
        self.tab_bar = pn.widgets.RadioButtonGroup.from_param(
            self.state.param.tab, name="", description=None, color="light", css_classes=["lab-tabs"],
            stylesheets=[TAB_BAR_CSS], sizing_mode="stretch_width", margin=0)
        self._tab_panes: dict[str, pn.Column] = {"Roofline": roofline}
        self.tab_content = pn.Column(roofline, sizing_mode="stretch_width", margin=0)
        self.state.param.watch(lambda e: self._open(e.new), "tab")
        self.state.param.watch(self._show_open_tab, "tab")
        # Under the tabs; beside the chart in present mode (_arrange), where under them it was below the fold.
        self.pin_row = pn.Row(self.pins.pin_button)
        self.pins.message.place = self.pin_row.append
        # Present mode's memory verdict: a row of the tour's flex box, under its buttons and above the card.
        self._memory_row = pn.Column(self.memory_view, sizing_mode="stretch_width", margin=0, styles=BAND_ROW,
                                     css_classes=["tour-memory"])
        self.views = pn.Column(self.tab_bar, self.tab_content, sizing_mode="stretch_width",
                               styles={"flex": "1 1 480px"}, min_width=0)
        self.intro = pn.pane.Markdown(INTRO, sizing_mode="stretch_width")
        #: Present mode's title (the intro carries the name otherwise): made when present mode first starts.
        self.title: pn.pane.HTML | None = None
        # The tour's key listener in the header, which present mode keeps (it rebuilds the rows below): moved with
        # the tour's row, a listener was built again, and a clicker's press in the 1-2 s after "Present mode" was
        # lost.  It takes the keys at a click on present mode's button, in the browser, by the server's rule
        # (TourView._take_keys: not on the Hardware tab, whose own tour takes them); the server agrees after.
        self.header = pn.Row(self.present_toggle, A11yFixes(width=0, height=0, margin=0), self.tour.keys,
                             styles=HEADER_STYLES, sizing_mode="stretch_width")
        # One column of the page's parts, no wrapper of its own per part: _arrange fills it.
        self.page = pn.Column(sizing_mode="stretch_width", css_classes=["lab"])
        self._arrange()
        return self.page

    def _place_strip(self, pane) -> None:
        """The tour's numbers strip in the header, after "Leave present mode": beside the chart, above the fold,
        on every tab the tour visits (the embed has no header and no strip)."""
        header = getattr(self, "header", None)
        if header is not None:
            header.insert(header.objects.index(self.present_toggle) + 1, pane)

    @param.depends("state.present", watch=True)
    def _arrange(self) -> None:
        """Place the intro, the levers, the views with the readouts, the tour and the memory bar.

        In present mode (a 1280 × 720 projector) the intro and the levers fold away and the tour card and the
        memory verdict sit beside the chart, so all three show without scrolling.
        """
        if self.embed:
            return
        present = self.state.present
        place_notices(present)
        # Every control's text at 18 px on a projector, on every tab, built now or later: Bokeh's widgets size their
        # text by a CSS variable that every shadow root below the page inherits (PRESENT_CONTROLS).
        self.page.styles = PRESENT_CONTROLS[present]
        # Under the chart and the memory bar: the expected point's switch and "use TP = 2", read from the back row.
        # In present mode the switch takes a row of its own in the tour's controls (BAND_ROW), above the card
        # ("initial" after: BokehJS keeps a style a later ``styles`` leaves out).
        self.band.styles = BAND_ROW if present else {key: "initial" for key in BAND_ROW}
        self.band.label = BAND_LABELS[present]
        self.band.margin = BAND_MARGINS[present]
        # In present mode the memory bar heads the side column, level with the tabs: no gap above it (24 px under
        # the views, where it ends the page), which leaves the switch's row room above the longest cards.
        self.memory_view.bar.margin = MEMORY_BAR_MARGINS[present]
        self.pins.pin_button.width = PRESENT_WIDTHS["pin"][present]
        self.tab_bar.stylesheets = [TAB_BAR_CSS, *([PRESENT_TABS_CSS] if present else [])]
        for pane in (self.memory_view.bar, self.readouts.pane):  # the tour's card and pins table: their views
            pane.css_classes = ["present"] if present else []
        self.controls.collapsed = present
        if present and self.title is None:
            # The page's heading (the intro's, folded away here, is the page's h1 otherwise): a screen reader's
            # list of headings starts with the lab's name.
            self.title = pn.pane.HTML('<h1 style="font-size: 18px; margin: 0">Roofline Lab</h1>', margin=(8, 10))
            self.header.insert(0, self.title)
        if self.title is not None:
            self.title.visible = present
        self.memory_view.note.visible = not present
        # The permalink's address bar writer and the instant redraw's lever hook (no element shown) end the page.
        hidden = [self.link.address, self.instant.hook]
        if present:
            # "Pin this scenario" beside "Jump to step", above the card: under it the longest cards (tour steps 8
            # and 14) left it below the fold of a 720-px screen.  Its message stays under the card.
            # The expected point's switch too, on a row of its own under them, above the card: below the chart's
            # legend it sat at the fold of a 720-px screen, and under the card too at tour steps 1 and 7 (723-775 px).
            # The memory verdict then, above the card: the tour's buttons head the side column, so that "Next"
            # stays where the teacher's pointer is from step to step (under the verdict, whose title takes one to
            # three lines by the step, it moved between 182 and 260 px).
            self.pin_row.objects = self.pins.message.shown()
            self.tour.beside_jump(self.pins.pin_button, self.band, self._memory_row)
            self.views.objects = [self.tab_bar, self.tab_content]
            self._tab_views["Roofline"].objects = [self.roofline]
            side = pn.Column(self.tour, self.pin_row, max_width=460,
                             sizing_mode="stretch_width",
                             styles={"flex": "0 1 460px"}, min_width=0, css_classes=["present-side"],
                             visible=self.state.param.tab.rx() != "Hardware")  # it has its own tour
            # On a phone (the projector's link opened by a student) the side column comes first: under the chart
            # and its legend, each "Next" left the step's card below the fold (a teacher's trial at 390 px).
            row = pn.FlexBox(self.views, side, flex_wrap="wrap", sizing_mode="stretch_width",
                             stylesheets=[PRESENT_PHONE_CSS])
            # The levers and the readouts below the fold, side by side: each is a flex item sized along a row
            # (in a column its 320-px basis became a height, and the opened levers ran over the readouts).
            below = pn.FlexBox(self.controls, self.readouts, flex_wrap="wrap", sizing_mode="stretch_width")
            self.page.objects = [self.header, *self._banners(), row, below, *hidden]
            self._banner_host = (self.page, 1)
        else:
            self.tour.beside_jump()
            self.pin_row.objects = [self.pins.pin_button, *self.pins.message.shown()]
            self._tab_views["Roofline"].objects = [self.roofline, self.band]
            self.views.objects = [self.tab_bar, self.tab_content, self.pin_row]
            # The readouts wrap below the views on a narrow screen instead of squeezing the chart.
            main = pn.Column(*self._banners(), self.tour,
                             pn.FlexBox(self.views, self.readouts, flex_wrap="wrap", sizing_mode="stretch_width"),
                             self.memory_view, sizing_mode="stretch_width", styles={"flex": "1 1 480px"},
                             min_width=0)
            self.page.objects = [self.header, self.intro,
                                 pn.FlexBox(self.controls, main, flex_wrap="wrap", sizing_mode="stretch_width"),
                                 *hidden]
            self._banner_host = (main, 0)

    def _embed_layout(self) -> pn.viewable.Viewable:
        """``?embed=true``: fits a 500 × 450 iframe: a one-line summary, the roofline with a key of every
        mark, the levers folded into a drawer, and a link to the full lab with the same state."""
        strip = build_controls(self.scenario, parameters=EMBED_LEVERS, compact=True)
        self.instant = InstantRedraw(self.state, self.roofline, lever_widgets(strip))
        drawer = pn.Card(strip, title="Levers", collapsed=True, sizing_mode="stretch_width", margin=0,
                         css_classes=["levers", "embed-drawer"], styles=EMBED_DRAWER_STYLES)
        self._embed_summary = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width",
                                           margin=(0, 8))
        self._embed_key = pn.pane.HTML("", stylesheets=[STYLESHEET, EMBED_KEY_CSS], sizing_mode="stretch_width",
                                       margin=(0, 8), styles=EMBED_KEY_STYLES)
        self._embed_open = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width", margin=(0, 8))
        self._on_embed_result()
        self._on_embed_link()
        fixes = A11yFixes(width=0, height=0, margin=0)
        # Escape closes the drawer, as a sheet over the chart is expected to close.
        fixes.param.watch(lambda _: setattr(drawer, "collapsed", True), "escapes")
        layout = pn.Column(*self._banners(), self._embed_summary, self.roofline, self._embed_key,
                           self._embed_open, drawer, self.link, self.instant.hook, fixes,
                           sizing_mode="stretch_both", css_classes=["embed"],
                           styles={"height": "100vh", "padding-bottom": f"{EMBED_DRAWER_HEADER}px",
                                   "box-sizing": "border-box"})
        self._banner_host = (layout, 0)
        return layout

    def _banners(self) -> list[pn.viewable.Viewable]:
        """What heads the page once said: the opening link's notices, then a scenario's error."""
        return [*self.link.notice.shown(), *self.error.shown()]

    def _place_banner(self, pane: pn.viewable.Viewable) -> None:
        """Put a newly made notice or error at the head of the page, in :meth:`_banners`'s order (before the page
        is laid out, its arrangement lists it)."""
        if self._banner_host is not None:
            host, start = self._banner_host
            host.insert(start + self._banners().index(pane), pane)

    # -- following the state ------------------------------------------------------------
    def _open(self, name: str) -> None:
        """Build a tab's view the first time it opens (most sessions look at the roofline only).

        Served, the build waits its turn of the event loop (:func:`app.turns.in_pieces`), in pieces: the view is
        made in one turn, put in the page in a later one, and the parts it hands on in later ones still.  A class
        opening one tab together takes one piece per turn, and the other students' moves are answered between two;
        the tab shows Panel's busy spinner meanwhile.  Without a server (a notebook, the unit tests) it is built at
        once.
        """
        if name in self._tab_views or name in self._opening:
            return
        if name == "Bring your own":
            self.byo  # noqa: B018 - building it is the point (it shows itself)
            return
        doc = pn.state.curdoc
        # At once: the Pins tab (built with the page), a tab the opening link names (the page is being built: no
        # document to change yet, and queuing it would cost a second layout change), and without a server.
        if (name == "Pins" or not getattr(self, "_page_built", False) or doc is None
                or doc.session_context is None):
            self._show_in_tab(name, self._build_view(name))
            return
        self._opening.add(name)
        self.tab_bar.loading = self.tab_content.loading = True

        # Pieces, each its own turn: the view's objects (Python: the figures, the watchers), then its place in the
        # page (Panel making its Bokeh models, Bokeh taking them into the document and sending them), then any part
        # the view hands to app.turns.later (the Hardware view's front section).
        def build() -> None:
            view = self._build_view(name)
            later(lambda: name in self._tab_views or self._show_in_tab(name, view))

        def done() -> None:
            self._opening.discard(name)
            self.tab_bar.loading = self.tab_content.loading = bool(self._opening)

        in_pieces(doc, build, done)

    def _build_view(self, name: str) -> pn.viewable.Viewable:
        """Tab ``name``'s view, following the session state (every tab but Bring your own)."""
        if name == "Throughput vs B":
            self.throughput = view = ThroughputView(state=self.state)
        elif name == "Scaling":
            self.scaling = view = ScalingView(state=self.state)
        elif name == "Compare":
            self.compare = view = CompareView(state=self.state)
        elif name == "Traffic":
            view = TabHTMLView(lambda s: traffic_html(s.result), state=self.state, tab=name)
        elif name == "KV table":
            view = TabHTMLView(lambda s: kv_table_html(s.result), state=self.state, tab=name)
        elif name == "Expected":
            cache: dict = {}  # the user's measurements' ceilings and expected values, by settings and engine
            view = TabHTMLView(lambda s: expected_tab_html(s, cache), follow=("expected", "measured"),
                               state=self.state, tab=name)
        elif name == "Speculation":
            view = TabHTMLView(speculation_html, state=self.state, tab=name)
        elif name == "Ladder":
            self.ladder = view = LadderView(state=self.state)
        elif name == "Serving":
            view = ServingSystemView(state=self.state)
        elif name == "Pins":
            view = self.pins
        elif name == "Hardware":
            self.hardware = view = self._hardware_view()
            self._present_hardware()
        else:  # "Export"
            view = build_exports(self.state)
        return view

    def _show_in_tab(self, name: str, view: pn.viewable.Viewable) -> None:
        """Put ``view`` under the tab bar as tab ``name``'s, shown while that tab is open (embed mode, without tabs,
        only records it)."""
        self._tab_views[name] = view
        if hasattr(self, "tab_content"):
            # Named after its tab in the document, as the chart's sources are (the benchmarks find it by name).
            self._tab_panes[name] = pane = pn.Column(view, name=name, sizing_mode="stretch_width", margin=0,
                                                     visible=name == self.state.tab)
            self.tab_content.append(pane)

    def _show_open_tab(self, *_events) -> None:
        """Show the open tab's view (once built) and hide the others' (kept in the page, as they were left)."""
        for name, pane in self._tab_panes.items():
            pane.visible = name == self.state.tab

    def _hardware_view(self) -> HardwareView:
        """Article 000's hardware story (kernel atlas, three ceilings, waves, hierarchy, generations),
        on the lab's GPU, following it; its B and CUDA-graphs switch are the lab's own (:data:`SHARED_LEVERS`),
        whichever of the lab's and the view's widgets moves them, and its tour's steps set them too."""
        scenario = self.scenario
        view = HardwareView(**{name: getattr(scenario, name) for name in SHARED_LEVERS},
                            shown=self.state.tab == "Hardware")
        self.state.param.watch(lambda e: setattr(view, "shown", e.new == "Hardware"), "tab")

        def follow_gpu(*_events) -> None:
            gpu = scenario.custom_gpu()
            if gpu is not None:
                view.add_gpu(gpu)
            else:
                view.gpu = scenario.gpu

        def to_scenario(*events) -> None:
            for e in events:
                write_lever(scenario, LEVERS[e.name], e.new, lambda n=e.name: setattr(view, n, getattr(scenario, n)))

        follow_gpu()
        scenario.param.watch(follow_gpu, ["gpu", "catalogue"])  # a GPU added again under its name: new numbers
        scenario.param.watch(lambda *events: view.param.update(**{e.name: e.new for e in events}),
                             list(SHARED_LEVERS))
        view.param.watch(to_scenario, list(SHARED_LEVERS))
        return view

    @param.depends("state.present", watch=True)
    def _present_hardware(self) -> None:
        """The Hardware tab follows present mode like the lab (its view switches its own figures and labels)."""
        if self.hardware is not None:
            self.hardware.present = self.state.present

    def _on_tab(self, index: int) -> None:
        """Open tab ``index`` as a click would (tests and the benchmark use this)."""
        self.state.tab = TABS[index]

    @param.depends("state.error", watch=True)
    def _on_error(self) -> None:
        self.error.say(escape(self.state.error))

    @param.depends("state.result", watch=True)
    def _on_embed_result(self) -> None:
        if self.embed:
            self._embed_summary.object = embed_summary(self.state.result, set_elsewhere(self.scenario))

    @param.depends("state.result", "state.pin_rows", "state.measured", "state.band", "state.expected", watch=True)
    def _on_embed_link(self) -> None:
        if not self.embed:
            return
        s = self.state
        r, e = s.result, s.expected
        self._embed_key.object = embed_key(
            sparse=bool(r.gpu.sparse_flop_per_s.get(r.compute_roof)), reference=r.reference_gpu is not None,
            pins=len(s.pins), measured=len(s.measured), other_phase=self.roofline.other_phase.data["label"][0],
            # what else the chart draws, as its legend would list it: the expected point with its whisker, the
            # rungs' own overhead ceilings where one holds a rung down, a pinned GPU's faint roof apart from its own
            expected=expected_label(e, expected_point(r, e), r) if s.band and e is not None else "",
            rungs=rungs_held_down(r), communication=rungs_lowered_by_communication(r),
            pinned_roofs=pinned_roofs_apart(r, [row.result for row in s.pin_rows]), fits=r.fits)
        query = {k: v for k, v in self.link.query().items() if k != "embed"}
        self._embed_open.object = (f'<a class="open-full" href="?{escape(urlencode(query))}" target="_blank" '
                                   'rel="noopener">Open in the full lab ↗</a>')

    def pin_current(self) -> None:
        """Pin the current scenario under a default name."""
        self.pins.pin_current()


def set_elsewhere(scenario: Scenario) -> list[str]:
    """The levers the embed has no control for (:data:`EMBED_LEVERS`) that are not at their defaults, as
    ``"TP = 2"``, ``"KV-cache precision p_kv = fp8"``, ``"CUDA graphs on"``: a link may set them, and the embed's
    numbers depend on them (a docs writer's trial: an FP8 cache at TP = 2 was said nowhere in the embed)."""
    out = []
    for lever in LEVERS:
        value = getattr(scenario, lever.name)
        if lever.name in EMBED_LEVERS or value == LEVER_DEFAULTS[lever.name]:
            continue
        name = lever.symbol or lever.parameter.label
        if isinstance(value, bool):
            out.append(f"{name} {'on' if value else 'off'}")
        else:
            out.append(f"{name} = {lever.encode(value)}{' ' + lever.unit if lever.unit else ''}")
    return out


def embed_summary(r: ScenarioResult, elsewhere: list[str] | tuple = ()) -> str:
    """One line of the key numbers for embed mode, where the readouts are left out: the intensity on the weights
    under its formula (the articles' I = 2·B·k / p, or an MoE's or a stored checkpoint's:
    :func:`core.explain.intensity_weights_formula`), and what the step attains counting KV reads, with the tokens/s
    that go with it; before it the embed's heading, for a screen reader only (the iframe's page has no other).
    ``elsewhere``: the levers set that the embed has no control for (:func:`set_elsewhere`), named after the
    scenario."""
    fits = "fits" if r.fits else "does not fit"
    return (
        '<h1 class="visually-hidden">Roofline Lab: the roofline of one decode step</h1>'
        f'<div class="embed-summary" data-readout="embed-summary"><b>{intensity_weights_formula(r)} = '
        f"{fmt_sig(r.arithmetic_intensity_weights)} FLOP/byte</b> · ridge {r.ridge_point:,.0f} · "
        f"{fmt_sig(r.attainable_flop_per_s_with_kv / TFLOP)} TFLOP/s counting KV reads "
        f"({fmt_sig(100 * r.peak_fraction_with_kv, 3)} % of peak) · "
        # a ceiling, said so (a docs writer's trial read the embed's tokens/s as what an engine delivers)
        f"{r.tokens_per_s_with_kv:,.0f} tokens/s ceiling{'' if r.fits else ' (if it fit)'} · memory {fits} · "
        f"{escape(r.model.name)}, {escape(r.weight_format)}, {escape(r.gpu.id)}"
        + (f" · also set: {escape(', '.join(elsewhere))}" if elsewhere else "") + "</div>"
    )


def embed_key(*, sparse: bool, reference: bool, pins: int, measured: int, other_phase: str, expected: str = "",
              rungs: bool = False, communication: bool = False, pinned_roofs: bool = False, fits: bool = True) -> str:
    """Embed mode's key: one entry per kind of mark the chart shows (its legend is left out to save room).

    ``expected``: the expected point's legend text while it is drawn (``?band=true``), else ``""``; ``rungs``: the
    rungs' own overhead ceilings are drawn; ``communication``: the rungs' drops by communication are drawn;
    ``pinned_roofs``: a pinned GPU's faint roof is drawn apart from the
    chart's own; ``fits``: the workload fits in memory (else its star is hollow, as the chart draws it)."""

    def item(symbol: str, color: str, text: str, *more: tuple[str, str, str]) -> str:
        """One entry of the key (a line never breaks inside it): a mark and its text, and any ``more`` after."""
        marks = " ".join(f'<span style="color:{c}">{sym}</span> {escape(t)}' for sym, c, t in ((symbol, color, text),
                                                                                                *more))
        return f'<span class="k-item">{marks}</span>'

    items = [
        item("━", PALETTE["roof"], "roof min(P_peak, BW·I)"),
        item("┆", PALETTE["roof"], "ridge point"),
        # One entry, so that "it" never starts a line of its own away from the workload it names.
        # The star as the chart draws it: hollow, in its outline's colour, where the workload does not fit (a trial
        # saw a filled star in the key beside the chart's hollow one).
        item("★", PALETTE["workload"], "your workload", ("△", PALETTE["kv"], "it, counting KV reads")) if fits else
        item("☆", PALETTE["workload_line"], "your workload (hollow: does not fit)",
             ("△", PALETTE["kv"], "it, counting KV reads")),
        item("●○", PALETTE["ladder"], "batch ladder, B on the top axis (hollow: does not fit)"),
        item("■", PALETTE["kv"], "ladder counting KV reads"),
        item("◇", PALETTE["workload"], other_phase),
        item("┈", PALETTE["overhead"], OVERHEAD_KEY),
    ]
    # The short entries after the ceiling's, so that two share a line at 500 px (the key gives way to the chart).
    if sparse:
        items.append(item("╌", PALETTE["sparse"], "sparse (2:4) headline: not attainable"))
    if rungs:
        items.append(item("─·", PALETTE["overhead"], OVERHEAD_RUNGS_KEY))
    if communication:
        items.append(item("│", PALETTE["interconnect"], COMMUNICATION_RUNGS_KEY))
    if expected:
        items.append(item("◯", PALETTE["expected"], expected))
    if reference:
        items.append(item("─·", PALETTE["reference"], "datasheet roof"))
    if pins:
        items.append(item("▲■", PALETTE["text"],
                          f"{pins} pin{'s' if pins > 1 else ''}"
                          + (", each under its GPU's faint dotted roof" if pinned_roofs else "")))
    if measured:
        items.append(item("✕", PALETTE["measured"], "your measurements"))
    # Focusable: where the iframe is short the key scrolls within its pane, and a keyboard can scroll it.
    return (f'<div class="embed-key" data-readout="embed-key" tabindex="0" role="region" aria-label="Key to the '
            f'chart\'s marks">{" ".join(items)}</div>')


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
        lab.link.notice.say("<b>This link could not be opened</b>; the lab shows its defaults.<ul>"
                            f"<li>{escape(lab.state.notices[0])}</li></ul>")
        return lab.layout
