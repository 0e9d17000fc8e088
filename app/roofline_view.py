"""The log-log roofline chart: roof, ridge point, batch ladder and the workload.

x is arithmetic intensity (FLOP/byte), y attainable performance.  The chart is
built once per session; it depends on the session state's result, pins,
measurements, expected step and its switch (``param.depends``) and only replaces the data of
its ColumnDataSources, so the browser repaints without rebuilding the figure.
Every number it draws comes from the :class:`core.ScenarioResult` (roofs through
:func:`core.roofline.attainable_flop_per_s`); the view computes no formula.
"""

from __future__ import annotations

from contextlib import nullcontext
from functools import partial

import numpy as np
import panel as pn
import param
from bokeh.core.properties import field, value
from bokeh.models import (
    AllIndices,
    CDSView,
    ColumnDataSource,
    CustomJS,
    CustomJSTicker,
    CustomJSTickFormatter,
    GlyphRenderer,
    HoverTool,
    LabelSet,
    Legend,
    LegendItem,
    Line,
    LogAxis,
    MultiLine,
    NoOverlap,
    Scatter,
    Selection,
    Span,
    TeeHead,
    UnionRenderers,
    Whisker,
)
from bokeh.plotting import figure

from core.coverage import beyond_calibration
from core.expected import engine_label
from core.precision import get_precision, roof_mix
from core.roofline import attainable_flop_per_s
from core.scenario import ScenarioResult
from core.spread import expected_point
from core.units import GB, TFLOP, fmt_intensity, fmt_ridge, fmt_sig

from .image_export import image_actions
from .label_layout import place_labels_in_browser, unplaced
from .present import present_figure, wrap_title
from .state import LabState
from .style import LAST_TICK_ROOM, PALETTE, PIN_STYLES, SERIES_DASHES, SERIES_MARKERS, describe_chart

#: The tab that shows the chart (app/state.py's TABS).
CHART_TAB = "Roofline"
#: What the chart plots, for a screen reader (app/style.py describe_chart).
ROOFLINE_TEXT = ("Roofline chart, log-log: attainable TFLOP/s (dense) against arithmetic intensity in FLOP/byte, "
                 "with the roof, its ridge point, the batch ladder and your workload.")
PRESENT_HEIGHT = 560  # px: the chart in present mode, legend included, under the tabs of a 720-px screen
#: px the roofline grows by on a page under 640 px wide, where its legend takes one column (10 rows, not 5) and its
#: title wraps to five lines: its plot keeps ~330 px for its six decades.
NARROW_EXTRA = 230
#: The browser's side of that: the legend's columns and the chart's height from the page's width (``cb_obj`` is the
#: figure; its first tag, its height on a wide page).
NARROW_CODE = """
const narrow = window.innerWidth < 640;
legend.ncols = narrow ? 1 : 2;
const base = cb_obj.tags.length ? cb_obj.tags[0] : cb_obj.height;
const height = narrow ? base + extra : base;
if (cb_obj.height !== height) { cb_obj.height = height; }
"""
#: The legend's padding (px), by present mode: its border is not drawn, so the padding is blank; in present mode
#: 5 px each side gives its rows 10 px of the fold (the five-line title of tour step 18 left its last row 4 px above).
LEGEND_PADDING = {False: 10, True: 5}
#: The legend's margin and the gap between its rows (px), by present mode.  On a projector a row is its 28-px glyph
#: box (app/present.py's LEGEND_GLYPH_PX), 10 px taller than its 18-px text, so the rows need no gap, and the
#: legend none above it (its padding stays): with the expected point switched on (``band=true``) its ninth entry
#: made a fifth row, and at tour steps 12 and 18 the last one ended below a 720-px screen's fold (722 and 742 px).
LEGEND_MARGIN = {False: 10, True: 0}
LEGEND_SPACING = {False: 3, True: 0}
X_RANGE = (0.1, 1e5)  # FLOP/byte; the right edge grows when a point lies beyond it
X_FAR = 1e9  # roofs are drawn out to here, so a wider x range never shows their end
Y_RANGE = (0.01, 2e4)  # TFLOP/s (the axis shows TFLOP/s; the model keeps FLOP/s); widened by fit_y_range
#: A point or roof this close to the y range's end (a factor) widens it to the next decade, as for the x range.
Y_MARGIN = 3.0
#: A point this close to the x range's right end (a factor) widens it to the next decade.
X_MARGIN = 3.0

ROOF_COLOR = PALETTE["roof"]
LADDER_COLOR = PALETTE["ladder"]
POINT_COLOR = PALETTE["workload"]
KV_LADDER_COLOR = PALETTE["kv"]


def roof_xy(peak_flop_per_s: float, bandwidth: float) -> dict[str, list[float]]:
    """The roof as three points: the left edge, the ridge and the right edge (x FLOP/byte, y TFLOP/s)."""
    x = np.array([X_RANGE[0], peak_flop_per_s / bandwidth, X_FAR])
    return {"x": list(x), "y": list(attainable_flop_per_s(x, peak_flop_per_s, bandwidth) / TFLOP)}


def fit_x_end(*xs) -> float:
    """The x range's right end (FLOP/byte) that keeps every point of ``xs`` (sequences: the drawn points — the
    workload, both ladders, the other phase, pins, measurements; not the roofs, drawn out to :data:`X_FAR`) on the
    chart: :data:`X_RANGE`'s end, or the decade past the farthest point times :data:`X_MARGIN`.  ``fitXEnd`` in
    ``app/chart_fit.js`` is the same rule in the browser (the instant redraw and the offline page)."""
    values = np.concatenate([np.asarray(v, dtype=float).ravel() for v in xs]) if xs else np.array([])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size == 0:
        return X_RANGE[1]
    return float(max(X_RANGE[1], 10 ** np.ceil(np.log10(values.max() * X_MARGIN))))


def fit_y_range(*ys) -> tuple[float, float]:
    """The y range (TFLOP/s) that keeps every value of ``ys`` (sequences: the points, the roofs from the chart's
    left edge to their flat part) on the chart: :data:`Y_RANGE`, its start lowered and its end raised to whole
    decades past any value within :data:`Y_MARGIN` of it; never narrower than :data:`Y_RANGE`.  A 10 GFLOP/s part
    or a CPU roof (0.09 TFLOP/s) gets room below; a 9 PFLOP/s FP4 roof room above.  ``fitYRange`` in
    ``app/chart_fit.js`` is the same rule in the browser (the instant redraw and the offline page)."""
    values = np.concatenate([np.asarray(v, dtype=float).ravel() for v in ys]) if ys else np.array([])
    values = values[np.isfinite(values) & (values > 0)]
    if values.size == 0:
        return Y_RANGE
    lo, hi = float(values.min()), float(values.max())
    start = Y_RANGE[0] if lo / Y_MARGIN >= Y_RANGE[0] else float(10 ** np.floor(np.log10(lo / Y_MARGIN)))
    end = Y_RANGE[1] if hi * Y_MARGIN <= Y_RANGE[1] else float(10 ** np.ceil(np.log10(hi * Y_MARGIN)))
    return start, end


#: The chart title's mark for a model with config keys the lab does not model (standalone.js writes the same).
APPROXIMATE_MARK = " · ≈ approximate"

#: The key of the dotted overhead ceiling: the workload's own, at its B (the ladder's rungs at other B have theirs,
#: :data:`OVERHEAD_RUNGS_KEY`, drawn where one holds a rung down; a rung above the dotted line is not under it).
OVERHEAD_KEY = "launch overhead ceiling at your B"

#: The key of each rung's own overhead ceiling, drawn while it holds a rung down.
OVERHEAD_RUNGS_KEY = "overhead ceiling at each rung's B"


def rung_overhead_ceilings(flop_weights, launch_s, attainable) -> np.ndarray:
    """Each rung's overhead ceiling ``FLOP_weights / t_launch`` (FLOP/s; :func:`core.step._per_launch`), or NaN
    for all (nothing drawn) unless it is what holds some rung down (its attainable, ``min(P_peak, BW·I,
    FLOP_weights / t_launch)``, is that ceiling).  The browser's twin: chart_fit.js ``rungOverheadCeilings``."""
    flop_weights, launch_s = np.asarray(flop_weights, dtype=float), np.asarray(launch_s, dtype=float)
    with np.errstate(divide="ignore"):
        ceiling = np.where(launch_s > 0, flop_weights / np.where(launch_s > 0, launch_s, 1.0), np.inf)
    binds = np.isfinite(ceiling) & (ceiling <= np.asarray(attainable, dtype=float) * (1 + 1e-9))
    return ceiling if binds.any() else np.full(ceiling.shape, np.nan)


#: The key of each rung's drop to what its step sustains with communication (split over GPUs).
COMMUNICATION_RUNGS_KEY = "each rung with its communication"


def rung_communication_feet(flop_weights, step_time_weights, attainable) -> np.ndarray:
    """What each rung's step sustains with its communication, ``FLOP_weights / step time`` (FLOP/s; the step of
    :mod:`core.step`), or NaN for a rung it does not lower below its ceiling (on one GPU, or under launches that
    outlast it).  The rung stays on its roofline ceiling, ``min(P_peak, BW·I, FLOP_weights / t_launch)``, the figure
    the articles print; the gap from it down to here is communication's share of the step.  The browser's twin:
    chart_fit.js ``rungCommunicationFeet``."""
    foot = np.asarray(flop_weights, dtype=float) / np.asarray(step_time_weights, dtype=float)
    return np.where(foot < np.asarray(attainable, dtype=float) * (1 - 1e-9), foot, np.nan)


def rungs_lowered_by_communication(r: ScenarioResult) -> bool:
    """Whether communication lowers some rung of ``r``'s ladder (:func:`rung_communication_feet`): only then are the
    drops drawn, and keyed."""
    lad = r.ladder
    return bool(np.isfinite(rung_communication_feet(lad.flop_weights, lad.step_time_s_weights,
                                                    lad.attainable_flop_per_s_weights)).any())


def rungs_held_down(r: ScenarioResult) -> bool:
    """Whether some rung of ``r``'s ladder sits under its own overhead ceiling (:func:`rung_overhead_ceilings`): only
    then are the rungs' ceilings drawn, and keyed."""
    lad = r.ladder
    return bool(np.isfinite(rung_overhead_ceilings(lad.flop_weights, lad.launch_time_s,
                                                   lad.attainable_flop_per_s_weights)).any())


def ridge_text(ridge_point: float, mix: str = "") -> str:
    r"""The ridge's label at the foot of its dotted line, ``"ridge 295\nFLOP/byte"``; under a roof of two formats
    the mix it is ``P_peak / BW`` of (:func:`core.precision.roof_mix`), which the flat roof is drawn at.
    The offline page and the served instant redraw take it from their constants (``ridge``).

    >>> ridge_text(620.54, "FP4 + BF16 mix")
    'ridge 621\nFLOP/byte\n(FP4 + BF16 mix)'
    """
    return f"ridge {fmt_ridge(ridge_point)}\nFLOP/byte" + (f"\n({mix})" if mix else "")


def roof_key(r: ScenarioResult) -> tuple[str, str, float]:
    """The roof ``r`` is drawn under: its GPU, compute roof and peak (a checkpoint in two formats has its mix's,
    below the format's own: :func:`core.precision.mixed_roof`)."""
    return (r.gpu.id, r.compute_roof, r.peak_flop_per_s)


def roof_name(r: ScenarioResult) -> str:
    """The roof ``r`` is drawn under, in words: ``"NVIDIA B200 (fp4)"``, ``"… (fp4 + bf16 mix)"`` for two formats."""
    mixed = r.peak_flop_per_s != r.gpu.dense_flop_per_s.get(r.compute_roof)
    return f"{r.gpu.name} ({r.compute_roof}{' + bf16 mix' if mixed else ''})"


def pinned_roofs_apart(r: ScenarioResult, pinned) -> bool:
    """Whether a pinned result of ``pinned`` sits under another roof than ``r``'s: only then is a faint roof seen
    (one on ``r``'s own roof lies under it), and keyed."""
    return any(roof_key(p) != roof_key(r) for p in pinned)


def expected_label(e, p, r: ScenarioResult) -> str:
    """The expected point's key: its engine preset, "extrapolated" where ``r`` has what no calibration measurement
    had (:func:`core.coverage.beyond_calibration`: the spread was measured on scenarios unlike it), and the spread its
    whisker spans (``p``: :func:`core.spread.expected_point`).  Short: a legend entry as wide as a sentence widened
    its column over the chart's, and on a projector two lines pushed the legend's last row below a 720-px screen's
    fold (tour steps 12 and 18); the Expected tab and the readouts say the rest, what is extrapolated included."""
    beyond = "; extrapolated" if beyond_calibration(r, e.engine) else ""
    # Over this chart's overhead ceiling where the engine captures CUDA graphs and the lever does not (its own
    # ceiling counts its launches: core.expected.ceiling_basis).
    beyond += "; engine's launches" if e.ceiling_rebased else ""
    return (f"expected ({engine_label(e.engine)}{beyond}), spread "
            f"{fmt_sig(p.spread.low, 2)}–{fmt_sig(p.spread.high, 2)}×")


def _rung_labels(batches, intensities, ridge: float) -> list[str]:
    """``B=…`` for each rung up to and including the first past the ridge, then blank."""
    labels, past = [], False
    for b, i in zip(batches, intensities, strict=True):
        labels.append("" if past else f"B={b}")
        past = past or i >= ridge
    return labels


#: Pins closer than this on the log axes (decades in x, in y) share one label: batch 4, INT4 and k = 4 on an
#: H100 and on an H200 sit at one intensity, 0.16 decades apart — a few pixels, two labels would collide.
PIN_LABEL_NEAR = (0.15, 0.3)


#: Characters a pin label keeps: of each name in a shared label, and of the whole label (the hover and the Pins tab
#: name every pin whole).
PIN_LABEL_NAME, PIN_LABEL_MAX = 18, 60


def _cut(text: str, room: int) -> str:
    return text if len(text) <= room else text[:room - 1].rstrip(" ·,") + "…"


def shared_name_parts(names: list[str]) -> tuple[list[str], list[str]]:
    """Pin names without the parts (between " · ") that every one of them holds, and those parts.

    ``["batch 4 · Llama-3-70B · h100-sxm", "INT4 weights · Llama-3-70B · h100-sxm"]`` gives
    ``(["batch 4", "INT4 weights"], ["Llama-3-70B", "h100-sxm"])``; a single name, or one that would be left
    empty, is kept whole.  A part one name shortened ("speculation k=4 · Llama-3-7… · a100-80gb") is the part the
    others hold whole, and is said whole.
    """
    parts = [name.split(" · ") for name in names]
    shared = [p for p in parts[0] if all(any(_same_part(p, q) for q in other) for other in parts[1:])] \
        if len(names) > 1 else []
    shared = [next((q for ps in parts for q in ps if _same_part(p, q) and not q.endswith("…")), p) for p in shared]
    own = [" · ".join(p for p in ps if not any(_same_part(p, s) for s in shared)) or name
           for ps, name in zip(parts, names, strict=True)]
    return own, shared


def _same_part(a: str, b: str) -> bool:
    """Two parts of pin names are one: equal, or one is the other shortened to fit a name ("Llama-3-7…", by
    :func:`core.pins.pin_name`)."""
    return a == b or (a.endswith("…") and b.startswith(a[:-1])) or (b.endswith("…") and a.startswith(b[:-1]))


def pin_group_label(numbers: list[int], names: list[str]) -> str:
    """A cluster's label: its pins' numbers and names, ``"pins 1, 2, 3: batch 4, INT4 weights, speculation k=4"``.

    The parts of the names (between " · ") that every name of the cluster shares (the trio's model and GPU) are
    said once, after the names, where the label has room for them; each name is cut to :data:`PIN_LABEL_NAME`
    characters in a shared label, and the label to :data:`PIN_LABEL_MAX`, "…" marking a cut.
    """
    head = ("pin " if len(numbers) == 1 else "pins ") + ", ".join(map(str, numbers))
    if not names:
        return head
    own, shared = shared_name_parts(names)
    if len(names) > 1:
        own = [_cut(n, PIN_LABEL_NAME) for n in own]
    label = f"{head}: {', '.join(own)}"
    tail = f" ({' · '.join(shared)})" if shared else ""
    return label + tail if len(label + tail) <= PIN_LABEL_MAX else _cut(label, PIN_LABEL_MAX)


def pin_groups(xs, ys, numbers, names=None) -> dict[str, list]:
    """One label per cluster of nearby points: pins that coincide or nearly so share one label naming each
    (:func:`pin_group_label`; without ``names`` only their numbers, ``"pins 1, 2, 3"``), with its short form
    (the numbers: ``short``) and the text drawn (``shown``, the whole label until the browser's layout finds it no
    room).

    A pin joins the first cluster whose first point is within :data:`PIN_LABEL_NEAR` of it on both log axes;
    the label sits at that first point.
    """
    names = list(names) if names is not None else [None] * len(numbers)
    groups: list[tuple[float, float, list[int], list[str]]] = []
    for x, y, n, name in zip(xs, ys, numbers, names, strict=True):
        lx, ly = np.log10(float(x)), np.log10(float(y))
        for gx, gy, members, member_names in groups:
            if abs(lx - np.log10(gx)) <= PIN_LABEL_NEAR[0] and abs(ly - np.log10(gy)) <= PIN_LABEL_NEAR[1]:
                members.append(n)
                member_names.append(name)
                break
        else:
            groups.append((float(x), float(y), [n], [name]))
    text = [pin_group_label(ns, [m for m in ms if m is not None]) for _, _, ns, ms in groups]
    return {
        "x": [g[0] for g in groups], "y": [g[1] for g in groups], "text": text,
        # Where the whole label has no room (a phone), its pins' numbers (app/label_layout.py, ``short``).
        "short": [pin_group_label(ns, []) for _, _, ns, _ in groups],
        "shown": list(text),  # what the chart draws: the text, or the short form, as the browser's layout picks
    }

# The batch ladder's labels live on an axis above the chart, one tick per rung
# (B = 1, 2, 4, ...): thinned by Bokeh's NoOverlap policy, they can never sit on a
# rung, the workload, the sparse roof or each other, at any zoom or font size.
RUNG_TICKS = "return Array.from(ladder.data.x)"
RUNG_LABEL = ("const xs = ladder.data.x, bs = ladder.data.batch;"
              "for (let i = 0; i < xs.length; i++) {"
              "  if (Math.abs(Math.log(tick / xs[i])) < 1e-6) { return 'B=' + bs[i].toLocaleString('en-US'); } }"
              "return '';")


def _renderer_adder(fig, legend: Legend, rows: AllIndices):
    """``add(glyph, source, legend_label=None, **renderer)``: a glyph renderer on ``fig`` (and its legend entry).

    Built directly rather than through ``figure.line``/``scatter``, which make a nonselection and a muted
    copy of every glyph: here BokehJS derives those in the browser ("auto"), two Bokeh models fewer per
    series for every session to build and send.
    """

    def add(glyph, source: ColumnDataSource, legend_label: str | None = None, **renderer) -> GlyphRenderer:
        r = GlyphRenderer(data_source=source, glyph=glyph, view=CDSView(filter=rows), **renderer)
        fig.renderers.append(r)
        if legend_label:
            legend.items.append(LegendItem(label=value(legend_label), renderers=[r]))
        return r

    return add


class RooflineView(pn.viewable.Viewer):
    """A Bokeh roofline figure that follows a :class:`LabState` (or shows one result, for the offline page).

    Args:
        result: the result to draw first (default: the state's).
    """

    state = param.ClassSelector(class_=LabState, default=None, doc="The session state it follows (None: static).")
    compact = param.Boolean(default=False, doc="Embed mode: no legend (a one-line key is shown instead).")
    height = param.Integer(default=540, doc="The chart's height in px (present mode and embed mode set it).")

    def __init__(self, result: ScenarioResult | None = None, **params):
        super().__init__(**params)
        result = result if result is not None else self.state.result
        # One selection policy, one selection for all the chart's sources and one row filter for all its renderers.
        # The policy and the filter are stateless; the selection never changes, as the chart has no selection tool
        # (its hover inspects, which BokehJS keeps per renderer).  Bokeh would make one of each per source and per
        # renderer (30 models of a session).
        self._policy, self._selected, self._rows = UnionRenderers(), Selection(), AllIndices()
        #: ``new_source(data=..., name=...)``: a ColumnDataSource with the chart's one selection and policy (the
        #: chart's sources, and the instant redraw's constants).
        self.new_source = cds = partial(ColumnDataSource, selection_policy=self._policy, selected=self._selected)
        # Named so that browser tests and the benchmark can find them in the document.
        self.roof = cds(data={"x": [], "y": []}, name="roof")
        self.sparse_roof = cds(data={"x": [], "y": []}, name="sparse-roof")
        self.ridge = cds(data={"x": [], "y": [], "text": []}, name="ridge")
        self.ladder = cds(data=self._ladder_data(result), name="ladder")
        self.point = cds(data=self._point_data(result), name="workload")
        self.point_kv = cds(data={"x": [], "y": [], "batch": [], "pct": [], "fits": []}, name="workload-kv")
        self.kv_ladder = cds(data={"x": [], "y": [], "batch": [], "pct": [], "fits": []}, name="kv-ladder")
        self.other_phase = cds(data={"x": [], "y": [], "label": []}, name="other-phase")
        self.overhead = cds(data={"x": [], "y": [], "label": []}, name="overhead-ceiling")
        self._roof_key = None
        #: The pinned results drawn, and the result drawn (their roofs are the chart's own, or faint ones apart).
        self._pinned: list[ScenarioResult] = []
        self._drawn: ScenarioResult | None = None
        #: A result arrived while the chart was not shown (:meth:`_on_result`).
        self._stale = False
        #: The marks most charts never show (pins, measurements, a datasheet twin's roof, pinned GPUs' roofs, the
        #: expected point): made with the chart when it opens with one, else when the first arrives
        #: (:meth:`_ensure_marks`).
        self._marks: dict | None = None
        #: The expected point, its whisker and its legend entry: the marks layer's (None until it is made).
        self.band = self.band_renderer = self.band_whisker = self.band_item = None
        self.figure = self._build()
        if self.state is not None and (self.state.pin_rows or self.state.measured):
            self._ensure_marks(None)
        self.update(result)
        if self.state is not None:
            self._on_pins()
            self._on_measured()
            self._on_band()
            self._on_present()
        if self.compact:  # embed mode: the chart takes the iframe's height the summary, key and link leave
            self.figure.sizing_mode = "stretch_both"
            # and keeps at least its least height: the key under it gives way instead (app/lab.py, EMBED_KEY_STYLES)
            self.figure.min_height = self.height
            self.pane = pn.pane.Bokeh(self.figure, sizing_mode="stretch_both", min_height=self.height)
        else:
            self.pane = pn.pane.Bokeh(self.figure, sizing_mode="stretch_width", min_height=self.figure.height)

    def __panel__(self):
        return self.pane

    @param.depends("state.present", watch=True)
    def _on_present(self) -> None:
        present = self.state.present
        present_figure(self.figure, present)
        # On a projector the chart is as tall as a 720-px screen allows beside the tour card.
        self.figure.height = PRESENT_HEIGHT if present else self.height
        self.figure.tags = [self.figure.height]  # a phone's page adds NARROW_EXTRA (NARROW_CODE)
        self.legend.update(padding=LEGEND_PADDING[present], margin=LEGEND_MARGIN[present],
                           spacing=LEGEND_SPACING[present])
        if hasattr(self, "pane"):
            self.pane.min_height = self.figure.height

    @property
    def shown(self) -> bool:
        """Whether the chart is on the page: the Roofline tab is open, or the page is the embed (the chart only)."""
        return self.compact or self.state is None or self.state.tab == CHART_TAB

    # A result while another tab is open is drawn when the Roofline tab opens again: a batch move on the
    # Throughput tab would otherwise redraw a chart nobody sees, in the server and in the browser.
    @param.depends("state.result", watch=True)
    def _on_result(self) -> None:
        if not self.shown:
            self._stale = True
            return
        self.update(self.state.result)

    @param.depends("state.tab", watch=True)
    def _on_tab(self) -> None:
        if self._stale and self.shown:
            self._stale = False
            self.update(self.state.result)

    # Pins and measurements change on a button's click: the chart's changes (points, labels, leader lines, ranges)
    # go to the browser as one message, as LabState's result does (and a click's callback runs outside the
    # document's lock, where only a held document may change).  The first needs the marks layer (_ensure_marks).
    @param.depends("state.pin_rows", watch=True)
    def _on_pins(self) -> None:
        if self._marks is None and not self.state.pin_rows:
            return
        with pn.io.hold():
            if self._ensure_marks(self._on_pins):
                self.show_pins([(row.pin.name, *PIN_STYLES[i], row.result)
                                for i, row in enumerate(self.state.pin_rows)])

    @param.depends("state.measured", watch=True)
    def _on_measured(self) -> None:
        if self._marks is None and not self.state.measured:
            return
        with pn.io.hold():
            if self._ensure_marks(self._on_measured):
                self.show_measured(self.state.measured)

    def _draw_marks(self) -> None:
        """Everything the marks layer shows, in one message: pins, measurements, and the result's roofs."""
        self._roof_key = None  # the datasheet twin's roof is drawn with the GPU's
        with pn.io.hold():
            self.update(self.state.result)
            self._on_pins()
            self._on_measured()
            self._on_band()

    def _ensure_marks(self, then) -> bool:
        """True when the marks layer is there to draw on now; else it is made and ``then()`` (if given) draws
        later.

        On a chart a browser already shows, the layer goes in three messages (:func:`pn.state.execute`, each
        for the next): its renderers and callbacks, then its label sets, then the data (``then``).  BokehJS 3.9
        ran layout callbacks that arrived in the same message as data they watch before it had finished making
        them ("CustomJS.module is unset"), and laid out a plot whose new label sets arrived with new renderers
        before it had made the label sets' views ("cannot find a view for LabelSet").
        """
        if self._marks is not None:
            return True
        self._add_marks()
        if self.figure.document is None:  # being built, the offline page, a notebook: nothing in a browser yet
            self._add_label_sets()
            return True
        pn.state.execute(partial(self._add_label_sets, then), schedule=True)
        return False

    def _add_label_sets(self, then=None) -> None:
        """Put the marks layer's label sets and the expected point's whisker on the chart; then (on a chart in a
        browser) ``then()``, for the next message."""
        with pn.io.hold():
            for annotation in (self.reference_label, self.pin_label_set, self.measured_label_set, self.band_whisker):
                self.figure.add_layout(annotation)
            if self.state is not None and self.state.present:  # the new marks take the projector look too
                present_figure(self.figure, True)
        if then is not None:
            pn.state.execute(then, schedule=True)

    @param.depends("state.band", "state.expected", watch=True)
    def _on_band(self) -> None:
        """The expected point and its spread (drawn only while shown: ``?band=true`` or the switch; the first
        makes the marks layer)."""
        shown = self.state.band and self.state.expected is not None
        if self._marks is None and not shown:
            return
        with pn.io.hold():
            if self._ensure_marks(self._on_band):
                self._draw_band(shown)

    def _draw_band(self, shown: bool) -> None:
        if shown:
            r, e = self.state.result, self.state.expected
            p = expected_point(r, e)
            self.band.data = {"x": [p.intensity], "y": [p.flop_per_s / TFLOP], "lo": [p.low / TFLOP],
                              "hi": [p.high / TFLOP]}
            self.band_item.label = {"value": expected_label(e, p, r)}
        elif self.band.data["x"]:
            self.band.data = {"x": [], "y": [], "lo": [], "hi": []}
        self.band_renderer.visible = self.band_whisker.visible = self.band_item.visible = shown

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
            tools="pan,wheel_zoom,reset",
            toolbar_location="above",
            name="roofline",
            min_border_right=LAST_TICK_ROOM,
        )
        fig.add_tools(*image_actions(fig, "roofline"))  # SVG and PNG at 2x (app/image_export.py)
        describe_chart(fig, ROOFLINE_TEXT + (" Its figures are in the summary above it." if self.compact
                                             else " Your workload's figures are in the readouts."))
        self.legend = legend = Legend(items=[])
        add = _renderer_adder(fig, legend, self._rows)
        self.sparse_renderer = add(Line(x="x", y="y", line_color=PALETTE["sparse"], line_dash=SERIES_DASHES["sparse"],
                                        line_width=1.5), self.sparse_roof, "sparse (2:4) headline: not attainable")
        add(Line(x="x", y="y", line_color=ROOF_COLOR, line_width=4), self.roof, "roof: min(P_peak, BW·I)")
        # The third ceiling: this step's FLOP over its kernels' launch time (article 000).
        add(Line(x="x", y="y", line_color=PALETTE["overhead"], line_width=2, line_dash="dotted"), self.overhead,
            OVERHEAD_KEY)
        self.ridge_span = Span(location=1.0, dimension="height", line_color=ROOF_COLOR, line_dash="dotted",
                               line_width=1.5)
        fig.add_layout(self.ridge_span)
        # The ridge label sits at the foot of the dotted line, clear of the ladder, on the side with more
        # room (two short lines, so it fits a phone-width chart in present mode).
        self.ridge_label = LabelSet(x="x", y="y", text="text", source=self.ridge, x_offset=6, y_offset=4,
                                    text_color=ROOF_COLOR, text_font_style="bold", text_font_size="13px",
                                    name="ridge-label")
        fig.add_layout(self.ridge_label)
        ladder = add(Scatter(x="x", y="y", marker=SERIES_MARKERS["ladder"], size=11, fill_color=field("fill"),
                             line_color=field("line"), line_width=2), self.ladder,
                     "batch ladder (hollow: does not fit)")
        # Each rung's own overhead ceiling (its B's weight FLOPs over the launches), through the rungs, where it
        # holds one down (an MoE at TP = 2: the B = 1 rung sat under a ceiling not drawn, the drawn one being the
        # current B's with attention); under the markers.
        add(Line(x="x", y="overhead", line_color=PALETTE["overhead"], line_width=1.5, line_dash="dashdot"),
            self.ladder, OVERHEAD_RUNGS_KEY, level="underlay")
        rungs_item = legend.items[-1]
        # Split over GPUs, each rung's communication lowers its step under its ceiling: a bar under the rung at what
        # the step sustains (the ceiling is not the step; the gap is the term between).  Drawn over the rungs and
        # the workload's star (the annotation level), so that a gap shorter than a marker's radius still shows: the
        # star sits on its rung and hid the bar of the B a student has set.
        add(Scatter(x="x", y="comm_foot", marker="dash", size=14, line_color=PALETTE["interconnect"], line_width=3),
            self.ladder, COMMUNICATION_RUNGS_KEY, level="annotation")
        comm_item = legend.items[-1]
        rung_axis = LogAxis(ticker=CustomJSTicker(args={"ladder": self.ladder}, major_code=RUNG_TICKS),
                            formatter=CustomJSTickFormatter(args={"ladder": self.ladder}, code=RUNG_LABEL),
                            major_label_policy=NoOverlap(min_distance=8), axis_label="batch ladder: B at each rung",
                            major_label_text_color=LADDER_COLOR, axis_label_text_font_size="11px",
                            axis_label_text_font_style="normal", name="rung-axis")
        fig.add_layout(rung_axis, "above")
        point_kv = add(Scatter(x="x", y="y", marker=SERIES_MARKERS["workload_kv"], size=16, fill_color=None,
                               line_color=KV_LADDER_COLOR, line_width=3), self.point_kv,
                       "your workload counting KV reads")
        kv_ladder = add(Scatter(x="x", y="y", marker=SERIES_MARKERS["kv_ladder"], size=8, fill_color=KV_LADDER_COLOR,
                                line_color=KV_LADDER_COLOR, fill_alpha=0.8), self.kv_ladder,
                        "ladder counting KV reads at S")
        other = add(Scatter(x="x", y="y", marker=SERIES_MARKERS["other_phase"], size=18, fill_color="white",
                            line_color=POINT_COLOR, line_width=3), self.other_phase, "same request, other phase",
                    name="other")
        # The other phase is named in the legend (which phase, one prompt or the batch), not on the chart:
        # under the flat roof near the ridge no spot is clear of the slope and the sparse roof.
        self.other_phase_item = next(i for i in legend.items if i.label.value == "same request, other phase")
        # The workload's launch ceiling, keyed only while it is on the chart (a prefill's lies far above the axis).
        self.overhead_item = next(i for i in legend.items if i.label.value == OVERHEAD_KEY)
        # Keys of series that are often empty: shown only while their series has something to draw (the marks
        # layer adds two more).
        # The offline page toggles them too.
        self.sparse_item, self.rungs_item, self.comm_item = legend.items[0], rungs_item, comm_item
        self._optional_items = {"sparse (2:4)": legend.items[0], OVERHEAD_RUNGS_KEY: rungs_item,
                                COMMUNICATION_RUNGS_KEY: comm_item}
        legend.items[0].visible = False  # until its series has something to draw
        point = add(Scatter(x="x", y="y", marker=SERIES_MARKERS["workload"], size=22, fill_color=field("fill"),
                            line_color=PALETTE["workload_line"], line_width=2), self.point, "your workload")
        self._tooltips = [
            ("batch B", "@batch"),
            ("intensity I", "@x{0,0.[00]} FLOP/byte"),
            ("attainable", "@y{0,0.[0]} TFLOP/s"),
            ("of peak", "@pct{0.[00]} %"),
            ("fits in memory", "@fits"),
        ]
        fig.add_tools(HoverTool(renderers=[ladder, kv_ladder, point], tooltips=self._tooltips))
        self._series = {"point": point, "point_kv": point_kv, "ladder": ladder, "kv_ladder": kv_ladder,
                        "other": other}
        fig.title.text_font_size = "12px"  # the title carries both intensities
        # Three lines, or five with tensor parallelism: wrapped to the frame's width in the browser (at 360 px the
        # communication line ran past the canvas, served and offline), with the room each new line needs.
        wrap_title(fig)
        fig.toolbar.autohide = True
        fig.toolbar_inner = True  # over the frame's top, shown on hover: beside a three-line title it folded into "⋮"
        fig.height = self.height
        legend.visible = not self.compact
        if self.compact:  # a 500 × 450 iframe: short axis titles; the key under the chart explains the marks
            fig.yaxis.axis_label = "TFLOP/s"
            rung_axis.axis_label = None
        legend.click_policy = "hide"
        legend.label_text_font_size = "11px"
        legend.ncols = 2
        legend.border_line_alpha = 0
        fig.add_layout(legend, "below")
        # Two legend columns need about 500 px at 11 px text: a phone-width page, or present mode's 18 px
        # text, gets one, so the legend is never wider than the chart. Its one column and the title's extra lines
        # then take NARROW_EXTRA px more of the chart's height: the chart grows by as much, or its plot was ~105 px
        # tall for six decades on a 390-px phone (a teacher's trial). Its height without them is its first tag
        # (:meth:`_on_present` sets both); a change of either runs this again.
        if not self.compact:
            narrow = CustomJS(args={"legend": legend, "extra": NARROW_EXTRA}, code=NARROW_CODE)
            fig.js_on_change("inner_width", narrow)
            fig.js_on_change("tags", narrow)
        fig.tags = [fig.height]
        return fig

    def _add_marks(self) -> None:
        """Add the marks layer: pins with their labels and their GPUs' faint roofs, measurements with theirs, a
        datasheet twin's roof and label; and, on a session's chart, the labels' layouts
        in the browser (:meth:`_place_point_labels`) and their leader lines.

        Each series takes the place it has among the chart's series and legend entries, as if it had been there
        from the start.
        """
        # One recomputation of the document's models at the end, not one per renderer, label set and callback
        # added (Bokeh's Document.models.freeze).
        with self.figure.document.models.freeze() if self.figure.document is not None else nullcontext():
            self._make_marks()

    def _make_marks(self) -> None:
        fig, legend = self.figure, self.legend
        cds = self.new_source
        marks = self._marks = {
            "reference": cds(data={"x": [], "y": [], "label": [], "lx": [], "ly": [], **unplaced(0)},
                             name="reference-roof"),
            "pins": cds(data={"x": [], "y": [], "name": [], "color": [], "marker": [], "batch": [], "pct": [],
                              "fits": [], "number": [], "gpu": []}, name="pins"),
            "pin_labels": cds(data={"x": [], "y": [], "text": [], "short": [], "shown": [], **unplaced(0)},
                              name="pin-labels"),
            "pin_roofs": cds(data={"xs": [], "ys": [], "gpu": []}, name="pin-roofs"),
            "measured": cds(data={"x": [], "y": [], "batch": [], "pct": [], "fits": [], "label": [], "shown": [],
                                  **unplaced(0)}, name="measured"),
            # The expected point and its whisker (named "band": the switch and the link key it took over).
            "band": cds(data={"x": [], "y": [], "lo": [], "hi": []}, name="band"),
        }
        renderers, items = list(fig.renderers), list(legend.items)

        def insert(glyph, source, before: GlyphRenderer | None, label: str | None = None) -> GlyphRenderer:
            r = GlyphRenderer(data_source=source, glyph=glyph, view=CDSView(filter=self._rows))
            renderers.insert(renderers.index(before) if before is not None else len(renderers), r)
            if label:
                item = LegendItem(label=value(label), renderers=[r], visible=False)  # until it has data
                at = next((i for i, it in enumerate(items) if before in it.renderers), len(items))
                items.insert(at, item)
                self._optional_items[label.split(" (")[0]] = item
            return r

        roof = next(r for r in renderers if r.data_source is self.roof)
        # A faint roof per GPU among the pins: a pin from another GPU is read against its own roof.
        pin_roofs = insert(MultiLine(xs="xs", ys="ys", line_color=PALETTE["text"], line_alpha=0.35, line_width=2,
                                     line_dash=SERIES_DASHES["pinned_roof"]), marks["pin_roofs"], roof,
                           "roof of a pinned GPU (faint)")
        # A custom or measured part's datasheet twin, when it names one: its roof, dotted, labelled on the chart.
        insert(Line(x="x", y="y", line_color=PALETTE["reference"], line_width=2, line_dash="dotdash"),
               marks["reference"], self._series["ladder"])
        self.reference_label = LabelSet(x="lx", y="ly", text="label", source=marks["reference"], x_offset=4,
                                        y_offset=4, text_font_size="11px", text_color=PALETTE["text"])
        # Pins and measurements are labelled on the chart itself, so they stay out of the legend.
        pins = insert(Scatter(x="x", y="y", marker=field("marker"), size=16, fill_color=field("color"),
                              line_color="black", line_width=1, fill_alpha=0.85), marks["pins"],
                      self._series["point"])
        # Pins that coincide (the point of pinning batch 4, INT4 and k = 4) share one label of their numbers and
        # names ("pins 1, 2, 3: batch 4, INT4 weights, speculation k=4 (Llama-3-70B · h100-sxm)"); the hover, the
        # Pins and Compare tabs name each whole.
        # A session's chart lays these labels out in the browser (_place_point_labels); these fixed offsets, right of
        # and below the point (the roofs and ladders run up and to the right), are the chart's before that runs.
        self.pin_label_set = LabelSet(x="x", y="y", text="shown", source=marks["pin_labels"], x_offset=14,
                                      y_offset=-12, text_baseline="top", text_font_size="11px",
                                      text_color=PALETTE["text"], name="pin-label")
        measured = insert(Scatter(x="x", y="y", marker=SERIES_MARKERS["measured"], size=14, line_width=3,
                                  line_color=PALETTE["measured"], fill_color=PALETTE["measured"],
                                  hatch_color=PALETTE["measured"]), marks["measured"], self._series["point"])
        # Drawn from "shown": the label, or "" where the browser's layout found it no clear place (many points).
        self.measured_label_set = LabelSet(x="x", y="y", text="shown", source=marks["measured"], x_offset=10,
                                           y_offset=-12, text_baseline="top", text_font_size="10px",
                                           text_color=PALETTE["measured"], name="measured-label")
        # The expected point (hidden until switched on), with a whisker for its spread.  Drawn last, over the
        # workload's star: at B = 1 it lies 6 px from the star's centre; under the star its white disc showed as a
        # sliver (issue 30), and hollow over it its ring ran into the star's (a trial could not find it).  A white
        # disc over the star, ringed.  Its legend entry follows the sparse roof's.
        expected_color = PALETTE["expected"]
        self.band = marks["band"]
        self.band_renderer = GlyphRenderer(
            data_source=self.band, view=CDSView(filter=self._rows), name="band-area", visible=False,
            glyph=Scatter(x="x", y="y", marker=SERIES_MARKERS["expected"], size=15, fill_color="white", fill_alpha=0.9,
                          line_color=expected_color, line_width=2.5))
        renderers.append(self.band_renderer)
        self.band_item = LegendItem(label=value("expected (engine preset)"), renderers=[self.band_renderer],
                                    visible=False)
        items.insert(items.index(self.sparse_item) + 1, self.band_item)
        head = TeeHead(size=12, line_color=expected_color, line_width=2)
        self.band_whisker = Whisker(source=self.band, base="x", lower="lo", upper="hi", dimension="height",
                                    line_color=expected_color, line_width=2, upper_head=head, lower_head=head,
                                    visible=False, name="expected-whisker")  # placed with the label sets
        fig.renderers = renderers
        legend.items = items
        fig.add_tools(HoverTool(renderers=[pins], tooltips=[("pin", "@number: @name"), ("GPU", "@gpu"),
                                                            *self._tooltips]),
                      HoverTool(renderers=[pin_roofs], tooltips=[("roof of", "@gpu")]),
                      HoverTool(renderers=[measured], tooltips=[("measured at B", "@batch"),
                                                                ("intensity with KV", "@x{0,0.[00]} FLOP/byte"),
                                                                ("achieved", "@y{0,0.[00]} TFLOP/s"),
                                                                ("of peak (MFU)", "@pct{0.[00]} %")]))
        series = self._series
        others = [series["point"], series["point_kv"], series["ladder"], series["kv_ladder"], series["other"], pins,
                  measured]
        self._place_reference_label(fig, others)
        # The labels of pins and measurements keep off every series' markers (a session's chart: the offline page
        # has neither).
        if self.state is not None:
            self._place_point_labels(fig, {"pins": pins, "measured": measured, "others": others})

    # The marks layer's sources (made with the layer: reading one makes it).
    def _mark(self, name: str) -> ColumnDataSource:
        self._ensure_marks(None)
        return self._marks[name]

    pins = property(lambda self: self._mark("pins"), doc="The pins' source (x, y, name, colour, marker, …).")
    pin_labels = property(lambda self: self._mark("pin_labels"), doc="The pins' labels, one per cluster.")
    pin_roofs = property(lambda self: self._mark("pin_roofs"), doc="The pinned GPUs' roofs (xs, ys, gpu).")
    measured = property(lambda self: self._mark("measured"), doc="The measured points (x, y, batch, pct, label).")
    reference = property(lambda self: self._mark("reference"), doc="A datasheet twin's roof and its label.")

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
            "overhead": rung_overhead_ceilings(lad.flop_weights, lad.launch_time_s,
                                               lad.attainable_flop_per_s_weights) / TFLOP,
            "comm_foot": rung_communication_feet(lad.flop_weights, lad.step_time_s_weights,
                                                 lad.attainable_flop_per_s_weights) / TFLOP,
        }

    @staticmethod
    def _point_data(r: ScenarioResult) -> dict:
        return {
            "x": [r.arithmetic_intensity_weights],
            "y": [r.attainable_flop_per_s_weights / TFLOP],
            "batch": [r.batch],
            "pct": [100 * r.peak_fraction_weights],
            "fits": ["yes" if r.fits else "no"],
            "fill": [POINT_COLOR if r.fits else "white"],  # hollow, as the ladder's rungs, where it does not fit
        }

    def show_pins(self, rows: list[tuple[str, str, str, ScenarioResult]]) -> None:
        """Draw pinned scenarios, each under its own GPU's roof: ``(name, colour, marker, result)`` per pin."""
        xs = [r.arithmetic_intensity_weights for *_, r in rows]
        ys = [r.attainable_flop_per_s_weights / TFLOP for *_, r in rows]
        numbers = list(range(1, len(rows) + 1))
        self.pins.data = {
            "x": xs, "y": ys,
            "name": [name for name, *_ in rows],
            "color": [color for _, color, *_ in rows],
            "marker": [marker for _, _, marker, _ in rows],
            "batch": [r.batch for *_, r in rows],
            "pct": [100 * r.peak_fraction_weights for *_, r in rows],
            "fits": ["yes" if r.fits else "no" for *_, r in rows],
            "number": numbers,
            "gpu": [r.gpu.name for *_, r in rows],
        }
        groups = pin_groups(xs, ys, numbers, [name for name, *_ in rows])
        self.pin_labels.data = {**groups, **unplaced(len(groups["x"]))}
        self._pinned = [r for *_, r in rows]
        self._draw_pin_roofs()
        self.fit_x()
        self.fit_y()

    def _draw_pin_roofs(self) -> None:
        """A faint roof per pinned GPU and compute roof that is not the chart's own (:func:`roof_key`), and its legend
        entry while there is one: a pin on the current GPU and roof is read against the chart's roof, and a faint
        copy of it under that roof was drawn for nothing (and listed).  Drawn again when the chart's roof changes."""
        own = roof_key(self._drawn) if self._drawn is not None else None
        roofs: dict[tuple, ScenarioResult] = {}
        for r in self._pinned:
            if roof_key(r) != own:
                roofs.setdefault(roof_key(r), r)
        lines = [roof_xy(r.peak_flop_per_s, r.bandwidth) for r in roofs.values()]
        data = {"xs": [line["x"] for line in lines], "ys": [line["y"] for line in lines],
                "gpu": [roof_name(r) for r in roofs.values()]}
        if data != dict(self.pin_roofs.data):
            self.pin_roofs.data = data
        self._optional_items["roof of a pinned GPU"].visible = bool(roofs)

    def _draw_reference(self, r: ScenarioResult) -> None:
        ref = r.reference_gpu
        if ref is None:
            self.reference.data = {"x": [], "y": [], "label": [], "lx": [], "ly": [], **unplaced(0)}
            return
        xy = roof_xy(r.reference_peak_flop_per_s, ref.hbm_bandwidth)
        # Label the flat part well right of the ridge, clear of the ladder's labels; the browser places it beside
        # that point inside the frame (_place_reference_label: at a fixed offset a long name ran past the right edge).
        self.reference.data = {**xy, "label": [f"datasheet: {ref.name}", "", ""],
                               "lx": [xy["x"][1] * 8] * 3, "ly": [xy["y"][1]] * 3, **unplaced(3)}

    def show_measured(self, points) -> None:
        """Draw measured points at their intensity counting KV reads and their achieved FLOP/s."""
        labels = [f"measured B={p.measurement.batch}" for p in points]
        self.measured.data = {
            "x": [p.intensity for p in points], "y": [p.achieved_flop_per_s / TFLOP for p in points],
            "batch": [p.measurement.batch for p in points], "pct": [100 * p.mfu for p in points],
            "fits": ["" for _ in points],
            "label": labels,
            "shown": list(labels),  # until the browser's layout leaves out one with no room
            **unplaced(len(points)),
        }
        self.fit_x()
        self.fit_y()

    def _chart_lines(self) -> list[ColumnDataSource]:
        """The roofs and ceilings that labels laid out in the browser keep off."""
        return [self.roof, self.sparse_roof, self.overhead, self.pin_roofs, self.reference]

    def _place_reference_label(self, fig, marks: list) -> None:
        """Lay out the datasheet twin's label in the browser (:func:`place_labels_in_browser`), beside its point on
        the twin's flat roof, inside the frame and clear of the ridge's label, the markers ``marks`` and the
        roofs, on the served chart and the offline page (a fixed offset ran a long name past the right edge)."""
        place_labels_in_browser(fig, self.reference_label, None, "label", lines=self._chart_lines(),
                                others=[self.ridge_label], marks=marks, name="reference-label-layout", pad=6,
                                leader_lines=False)  # it names a roof, not a point

    def _place_point_labels(self, fig, marks: dict) -> None:
        """Lay out the labels of pins and measurements in the browser (:func:`place_labels_in_browser`): clear of
        each other, of every marker on the chart, of the roofs and ceilings, of the ridge's and the datasheet's
        labels and inside the frame, at any size and in present mode, joined to their points by leader lines
        where they had to move away."""
        lines = self._chart_lines()
        # The ridge's label at a fixed offset from its point, the datasheet twin's laid out before these.
        fixed = [self.ridge_label, self.reference_label]
        # Named, and run by name from the chart's sources and ranges (RELAY, app/label_layout.py), which the
        # instant redraw's callbacks also hold (app/instant.py).
        # 6 px apart sideways: two labels abutting on one row read as one.
        place_labels_in_browser(fig, self.pin_label_set, marks["pins"].glyph, "text", lines=lines, others=fixed,
                                marks=marks["others"], name="pin-label-layout", pad=6, shown="shown", short="short")
        place_labels_in_browser(fig, self.measured_label_set, marks["measured"].glyph, "label", lines=lines,
                                others=[self.pin_label_set, *fixed], marks=marks["others"],
                                name="measured-label-layout", pad=6,
                                # Many measurements crowd a decade: one with no clear place is left out (its
                                # batch and MFU stay in the hover); a pin always shows.
                                shown="shown")

    def y_sources(self) -> list[ColumnDataSource]:
        """The sources whose ``y`` the y range keeps on the chart: the roofs (the main one from the chart's left
        edge), the points, the ladders, pins and measurements (not the interconnect or overhead ceilings)."""
        marks = [] if self._marks is None else [self.reference, self.pins, self.measured]
        return [self.roof, self.sparse_roof, self.point, self.point_kv, self.ladder, self.kv_ladder,
                self.other_phase, *marks]

    def x_sources(self) -> list[ColumnDataSource]:
        """The sources whose ``x`` the x range keeps on the chart: every drawn point (not the roofs)."""
        marks = [] if self._marks is None else [self.pins, self.measured]
        return [self.point, self.point_kv, self.ladder, self.kv_ladder, self.other_phase, *marks]

    def fit_x(self) -> None:
        """Widen the x range past the farthest drawn point (:func:`fit_x_end`), and no further: a point that is
        not drawn (the prefill of the whole batch) does not stretch the chart."""
        end = fit_x_end(*(src.data["x"] for src in self.x_sources()))
        if self.figure.x_range.end != end:
            self.figure.x_range.end = end

    def fit_y(self) -> None:
        """Widen the y range to keep every point and roof on the chart (:func:`fit_y_range`); the ridge label
        sits at its foot."""
        start, end = fit_y_range(*(src.data["y"] for src in self.y_sources()))
        y_range = self.figure.y_range
        if (y_range.start, y_range.end) != (start, end):
            y_range.update(start=start, end=end)
        if list(self.ridge.data["y"]) != [start] * len(self.ridge.data["x"]):
            self.ridge.data = {**self.ridge.data, "y": [start] * len(self.ridge.data["x"])}

    def update(self, r: ScenarioResult) -> None:
        """Replace the chart's data with ``r``'s (the figure itself is kept).

        The roof and ridge change only with the GPU or the compute roof; they are
        left alone otherwise, so a batch move sends only the points that moved.
        """
        if self._marks is None and r.reference_gpu is not None and \
                not self._ensure_marks(self._draw_marks):
            return  # the layer went to the browser on its own; this result follows in the next message
        self._drawn = r
        key = roof_key(r)
        if key != self._roof_key:
            self._roof_key = key
            self.roof.data = roof_xy(r.peak_flop_per_s, r.bandwidth)
            sparse = r.gpu.sparse_flop_per_s.get(r.compute_roof)
            self.sparse_roof.data = roof_xy(sparse, r.bandwidth) if sparse else {"x": [], "y": []}
            self.sparse_renderer.visible = bool(sparse)
            self._optional_items["sparse (2:4)"].visible = bool(sparse)
            self.ridge_span.location = r.ridge_point
            if self._marks is not None:
                self._draw_reference(r)
                self._draw_pin_roofs()
            self.ridge.data = {"x": [r.ridge_point], "y": [self.figure.y_range.start],
                               "text": [ridge_text(r.ridge_point, roof_mix(r.compute_roof,
                                                                           r.sixteen_bit_flop_share))]}
        self.ladder.data = self._ladder_data(r)
        self._optional_items[OVERHEAD_RUNGS_KEY].visible = bool(np.isfinite(self.ladder.data["overhead"]).any())
        dropped = bool(np.isfinite(self.ladder.data["comm_foot"]).any())  # split over GPUs
        self._optional_items[COMMUNICATION_RUNGS_KEY].visible = dropped
        self.comm_item.renderers[0].visible = dropped  # drawn only then (one GPU: nothing to draw)
        self.point.data = self._point_data(r)
        ceiling = r.overhead_ceiling_flop_per_s / TFLOP
        self.overhead.data = {"x": [X_RANGE[0], X_FAR], "y": [ceiling, ceiling],
                              "label": [f"overhead ceiling: {r.kernels_per_step:,} kernels × launch "
                                        f"= {fmt_sig(r.launch_overhead_s * 1e3, 3)} ms", ""]}
        lad = r.ladder
        self.kv_ladder.data = {
            "x": lad.arithmetic_intensity_with_kv, "y": lad.attainable_flop_per_s_with_kv / TFLOP, "batch": lad.batch,
            "pct": 100 * lad.peak_fraction_with_kv, "fits": np.where(lad.fits, "yes", "no"),
        }
        self.point_kv.data = {"x": [r.arithmetic_intensity_with_kv], "y": [r.attainable_flop_per_s_with_kv / TFLOP],
                              "batch": [r.batch], "pct": [100 * r.peak_fraction_with_kv],
                              "fits": ["yes" if r.fits else "no"]}
        if r.phase == "decode":
            # The same quantity as the time-to-first-token readout: one prompt, alone.
            other = (r.ttft_intensity, r.ttft_attainable_flop_per_s, "prefill of one prompt (TTFT)")
        else:
            other = (r.decode_intensity, r.decode_attainable_flop_per_s, f"decode at B = {r.batch}")
        self.other_phase.data = {"x": [other[0]], "y": [other[1] / TFLOP], "label": [other[2]]}
        # Keep every drawn point on the chart: the x range past the farthest, the y range past the lowest and the
        # highest (a 10 GFLOP/s part, a CPU); the ridge label on the side with more room.
        self.fit_x()
        self.fit_y()
        self.overhead_item.visible = bool(ceiling <= self.figure.y_range.end)
        left, right = np.log10(r.ridge_point / X_RANGE[0]), np.log10(self.figure.x_range.end / r.ridge_point)
        self.ridge_label.update(**(dict(text_align="right", x_offset=-6) if left > right
                                   else dict(text_align="left", x_offset=6)))
        if self.state is not None:  # the offline page leaves the other phase out, legend entry included
            self.other_phase_item.label = {"value": f"other phase: {other[2]}"}
        # Replicas are named on the first line: the chart is one GPU's, the throughput readouts count them all.  A
        # config key the lab does not model marks it, as the readouts and the memory bar (and so a saved image).
        # A workload that does not fit says so there too: a saved image of it is not a deployment that runs.
        head = (f"{r.model.name} · {r.gpu.name} · {r.phase}" + (f" · {r.replicas:,} replicas" if r.replicas > 1 else "")
                + ("" if r.fits else DOES_NOT_FIT) + (APPROXIMATE_MARK if r.model.approximate else ""))
        if self.compact:  # embed mode: the summary above the chart carries the numbers
            self.figure.title.text = head
            return
        # Short lines: a long one would widen a phone-width page (wrap_title wraps what the frame cannot hold; "x % of
        # peak" stays whole, its spaces no-break).  Each intensity names the levers that set it, so that a saved
        # image says which scenario it is (batch 4, INT4 and k = 4 share an intensity and part only there).
        self.figure.title.text = (
            f"{head}\n"
            # The readouts' digits (fmt_intensity: whole from 10,000; a trial found 54,170 beside 54,172).
            f"I = {fmt_intensity(r.arithmetic_intensity_weights)} FLOP/byte ({weight_levers(r)}): "
            f"{fmt_sig(100 * r.peak_fraction_weights, 3)}{OF_PEAK}\n"
            f"I = {fmt_intensity(r.arithmetic_intensity_with_kv)} counting KV reads ({kv_levers(r)}): "
            f"{fmt_sig(100 * r.peak_fraction_with_kv, 3)}{OF_PEAK}"
            + (f"\n{attention_line(r)}" if r.phase == "prefill" else "")
            # Many GPUs: two more short lines (one line of both was wider than the chart at 1280 px).
            # With replicas, the "of N" is one replica's GPUs, said on its own line (the readout counts them all).
            + (f"\n{communication_lines(r)}" if r.communication_intensity is not None else "")
        )


#: The chart title's first line, after the phase, when the workload does not fit in memory.
DOES_NOT_FIT = " · does not fit in memory"

#: The chart title's "… % of peak", with no-break spaces: a wrapped title never leaves "peak" on a line alone.
OF_PEAK = "\u00a0%\u00a0of\u00a0peak"


def weight_levers(r: ScenarioResult) -> str:
    """The levers of the chart title's weights intensity: ``weights, B = 4, k = 1, p = INT4`` (a prefill's tokens
    per step are its prompt, ``P = 2,000``).  ``standalone.js`` writes the same."""
    tokens = f"P = {r.tokens_per_read:,}" if r.phase == "prefill" else f"k = {r.spec_k}"
    return f"weights, B = {r.batch}, {tokens}, p = {r.weight_format}"


def kv_levers(r: ScenarioResult) -> str:
    """The levers the KV reads add: ``S = 8,192, KV BF16`` (a prefill writes its prompt's: no S), GQA if off."""
    return ((f"S = {r.context:,}, " if r.phase == "decode" else "") + f"KV {get_precision(r.kv_dtype).label}"
            + ("" if r.gqa else ", GQA off"))


def attention_line(r) -> str:
    """The chart title's line under a prefill's intensity counting KV reads: why it lies right of the weights' one
    (issue 30, tour step 12: 2,028 beside 2,000) — the causal attention's FLOP are counted too, as core's step
    counts them (``flop / (weight + kv)``); its four terms, in TFLOP and GB, multiply out to the I above."""
    return (f"it counts attention FLOP too: ({fmt_sig(r.flop_per_step_weights / TFLOP)} + "
            f"{fmt_sig(r.attention_flop_per_step / TFLOP)}) TFLOP / ({fmt_sig(r.weight_bytes_read / GB)} + "
            f"{fmt_sig(r.kv_traffic_bytes / GB)}) GB")


def communication_lines(r) -> str:
    """The chart title's lines for a step split over GPUs: the communication as time and its share of the step (or,
    overhead-bound, the launches' step it runs under), then its own intensity (FLOP per byte a GPU sends) beside the
    interconnect ridge (``P_peak / link``).

    The chart's x axis is FLOP per byte read from HBM: a roof against FLOP per byte sent has no place on it (the
    star would sit above it), so communication is told in time here and drawn as time on the Scaling tab.
    """
    share = 100 * r.communication_time_s / r.step_time_s_with_kv
    # The split named: a saved image of TP = 8 and one of TP = 4, PP = 2 say which they are (and are named apart:
    # app/image_export.py takes the levers in a title's brackets).
    levels = f"TP = {r.tp:,}" + (f", PP = {r.pp:,}" if r.pp > 1 else "") + (f", EP = {r.ep:,}" if r.ep > 1 else "")
    who = (f"per GPU: 1 of {r.gpus_per_replica:,} ({levels}) in each of {r.replicas:,} replicas\n" if r.replicas > 1
           else f"per GPU of {r.gpus_per_replica:,} ({levels}): ")
    # named by its formula (a student read "link ridge 2,199" and found the term explained nowhere on the chart)
    link = f" (link ridge P_peak/link: {fmt_sig(r.interconnect_ridge_point)})" if r.interconnect_ridge_point else ""
    # Overhead-bound, the launches set the step and the communication runs under them: a share of the step would
    # read as if it lengthened it.
    took = (f", under {fmt_sig(r.step_time_s_with_kv * 1e3, 3)} ms of launches" if r.bound == "overhead"
            else f" = {fmt_sig(share, 2)} % of the step")
    return (f"{who}communication {fmt_sig(r.communication_time_s * 1e3, 3)} ms{took}"
            f"\nits I = {fmt_intensity(r.communication_intensity)} FLOP per byte sent{link}")
