"""The Compare view: small multiples of the pins, one row per metric, one mark per pin.

On the roofline, batch 4, INT4 and 4-token speculation land on one point by
construction; here they part where they differ (memory, tokens/s, time per
token, intensity counting KV reads, the fraction of peak reached).  The rows
are :func:`core.pins.compare_metrics` under the session's engine preset, read from each
pin's own result (its model, GPU and levers), the expected tokens/s under the ceiling's; the
view computes no formula.  Every row shares one x axis of
pin numbers, each mark keeps its pin's colour and shape, and a key below names
the pins with what differs at a shared intensity.  Every row names its pins on its own
x axis ("1: batch 4 · H100…", shortened to the room a pin has: the key and the hover
name them whole), so a row read alone (in present mode, or scrolled to) needs no key.
The memory row says whether each pin fits (100 % is its GPU's capacity, dashed).
Each value label is laid out in the browser beside its mark (app/label_layout.py);
with many pins one that would meet another label or a mark is left out, and the row's
hover reads it.  The rows download as CSV, in SI units (:func:`core.export.pins_csv`: the same
columns and values as the Export tab's "Pins (CSV)").
"""

from __future__ import annotations

import io
from html import escape

import panel as pn
import param
from bokeh.layouts import gridplot
from bokeh.models import (
    BasicTicker,
    ColumnDataSource,
    CustomJS,
    CustomJSTickFormatter,
    FactorRange,
    HoverTool,
    LabelSet,
    Range1d,
    Span,
)
from bokeh.plotting import figure

from core.export import pins_csv
from core.pins import PinRow, bound_text, compare_metrics, differs_text, preset_notes, speculation_notes

from .image_export import image_actions
from .label_layout import place_labels_in_browser, unplaced
from .present import present_figure, wrap_title
from .roofline_view import shared_name_parts
from .state import LabState
from .style import PALETTE, PIN_STYLES, STYLESHEET, describe_chart, scroll_table

#: A row's height: every row carries its own x axis of pin names (its plot frame about 90 px).
ROW_HEIGHT = 150
#: The bottom row also carries the x axis' title ("pin"): it is this much taller, so its plot frame is as tall as
#: the other rows'.
X_AXIS_HEIGHT = 25
#: Characters of the x-axis labels, by the number of pins: about 72 characters of 11-px text fit a row's width beside
#: the readouts at 1280 px, shared by the pins' labels ("12: " included); at most 28 of a name, "…" marking a cut,
#: and the number alone where fewer than 5 would be left.
AXIS_ROOM, AXIS_NAME_MOST, AXIS_NAME_LEAST = 72, 28, 5
#: Present mode's rows are this much taller (18-px titles and ticks).
PRESENT_ROW_SCALE = 1.3
#: The vertical offsets (lines) a value label tries beside its mark: further off, it reads as a neighbour's.
LABEL_STEPS = (0, -1, 1)

# Fits a row's y range to its values in pixels, once the frame's height is known: the axis starts just below 0
# by a marker's half-size (a value near zero sits wholly above the frame's bottom, not half under it) and ends
# above the tallest value, or `least` where that is more (the memory row's 100 %: its dashed capacity line stayed
# above a row of pins at 10–25 %, unseen: an engineer's trial), by its value label's height (or the marker's
# half-size, whichever is more).  Runs when
# the values, the frame's height, the marker's size or the label's text size change (present mode).
FIT_RANGE = r"""
const H = fig.inner_height;
if (!(H > 0)) { return; }
const val = (v) => (v !== null && typeof v === "object" && "value" in v) ? v.value : v;
const values = Array.from(source.data.value).filter((v) => Number.isFinite(v));
const top = Math.max(0, least, ...values) || 1;
const r = (parseFloat(val(glyph.size)) || 15) / 2 + (parseFloat(val(glyph.line_width)) || 1) + 1;
const text = 1.2 * (parseFloat(val(labels.text_font_size)) || 11);
const above = Math.max(r, (parseFloat(val(labels.y_offset)) || 0) + text) + 2;
const perPx = top / Math.max(H - r - above, 10);
const start = -r * perPx, end = top + above * perPx;
if (Math.abs(fig.y_range.start - start) > 1e-9 * top || Math.abs(fig.y_range.end - end) > 1e-9 * top) {
  fig.y_range.setv({start, end});
}
"""


#: The y ticks' text, as core.units.fmt_sig writes numbers: never in e-notation.
Y_TICK_CODE = "return tick.toLocaleString('en-US', {maximumSignificantDigits: 4})"
#: A pin's x tick (its number) shown as its label ("1: batch 4 · Llama…"), cut further to the room its slot has on
#: the chart as drawn (about 0.55 em a character, one kept as a gap): :data:`AXIS_ROOM` is a 1280-px page's, and on a
#: 390-px phone four labels ran into one another ("2: INT4 weights3: speculation k…").  The number alone where fewer
#: than :data:`AXIS_NAME_LEAST` characters of the name would be left.
PIN_TICK_CODE = f"const LEAST = {AXIS_NAME_LEAST};" + r"""
const s = labels[parseInt(tick, 10) - 1];
if (s === undefined) { return tick; }
if (plot == null || plot.properties.inner_width.is_unset || !(plot.inner_width > 0)) { return s; }  // not laid out
const size = parseFloat(axis.major_label_text_font_size) || 11;
const room = Math.floor(plot.inner_width / ticks.length / (0.55 * size)) - 1;
if (s.length <= room) { return s; }
const n = String(tick);
return room < n.length + 2 + LEAST ? n : s.slice(0, room - 1).replace(/[\s·]+$/, "") + "…";
"""


#: Compare's hover: the pin, then the row's value with its note and caveats, wrapped within 22 em, or 60 % of a
#: phone's width: Bokeh opens it on the side with room, and on a 390-px phone a 22-em hover had room on neither.
HOVER_TEMPLATE = ('<div style="max-width: min(22em, 60vw); white-space: normal; overflow-wrap: anywhere">'
                  "<b>pin</b> @pin: @name<br><b>{label}</b>: @hover</div>")


def pin_axis_labels(names: list[str]) -> list[str]:
    """Each pin's x-axis label: its number and its name without the parts every pin's name holds (the trio's model
    and GPU: :func:`app.roofline_view.shared_name_parts`), cut to the room the number of pins leaves."""
    own, _shared = shared_name_parts(names)
    room = min(AXIS_NAME_MOST, AXIS_ROOM // max(len(names), 1) - 4)
    if room < AXIS_NAME_LEAST:
        return [str(i + 1) for i in range(len(names))]
    return [f"{i + 1}: " + (name if len(name) <= room else name[:room - 1].rstrip(" ·") + "…")
            for i, name in enumerate(own)]


def compare_title(names: list[str]) -> str:
    """What the small multiples compare, in one line, for their saved images' name (the grid has no title): the
    pins' own parts, then the parts every pin's name holds, once.

    >>> compare_title(["batch 4 · Llama-3-70B · h100-sxm", "INT4 weights · Llama-3-70B · h100-sxm"])
    'batch 4 vs INT4 weights · Llama-3-70B · h100-sxm'
    """
    own, shared = shared_name_parts(names)
    return " · ".join([" vs ".join(own), *shared])


class CompareView(pn.viewable.Viewer):
    """Small multiples of the session's pins, following ``state.pin_rows``."""

    state = param.ClassSelector(class_=LabState, doc="The session state it follows.")

    def __init__(self, **params):
        super().__init__(**params)
        # Room right of the last pin for its value label.
        self.x_range = FactorRange(factors=[], range_padding=0.12)
        self.sources = {m.key: ColumnDataSource(data=_empty(), name=f"compare-{m.key}") for m in self.metrics}
        #: One tick formatter for every row's x axis: the pins' numbers as their labels.
        # ``plot`` and ``axis``: the first row's, whose width and tick size every row shares (set with the rows).
        self.pin_ticks = CustomJSTickFormatter(args={"labels": [], "plot": None, "axis": None}, code=PIN_TICK_CODE)
        self._figures: list | None = None  # the small multiples, made with the first pin (figures)
        self.empty = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width")
        self.key = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width")
        self.chart: pn.pane.Bokeh | None = None  # the grid's pane, put in the layout with the figures
        self.download = pn.widgets.FileDownload(
            callback=lambda: io.StringIO(pins_csv(self.state.pin_rows, self.state.engine_preset)),
            filename="roofline-compare.csv",
            label="These rows (CSV, SI units)", css_classes=["download-compare"],
            width=self.state.param.present.rx().rx.where(300, 240))  # its label at 18 px on a projector (the page's)
        self.layout = pn.Column(self.empty, self.download, self.key, sizing_mode="stretch_width")
        self._refresh()
        self._on_present()

    @property
    def metrics(self) -> tuple:
        """The rows, :func:`core.pins.compare_metrics` under the session's engine preset."""
        return compare_metrics(self.state.engine_preset)

    @property
    def figures(self) -> list:
        """The small multiples, one figure per :attr:`metrics` row, made on first read (with the first pin: an
        empty Compare tab shows its sentence, not ten empty charts)."""
        if self._figures is None:
            self._figures = [self._row(m) for m in self.metrics]
            self._figures[-1].xaxis.axis_label = "pin"
            self._grid = gridplot([[f] for f in self._figures], sizing_mode="stretch_width", toolbar_location=None,
                                 merge_tools=False)
            self._grid.name = "compare-grid"
            # The top row's toolbar saves the whole grid as SVG and as PNG at 2x (app/image_export.py).
            top = self._figures[0]
            top.toolbar_location = "above"
            top.toolbar.autohide = True
            top.add_tools(*image_actions(self._grid, "compare"))
            self.pin_ticks.args = {**self.pin_ticks.args, "plot": top, "axis": top.xaxis[0]}
            self._present_rows()
            self.chart = pn.pane.Bokeh(self._grid, sizing_mode="stretch_width")
            self.layout.insert(1, self.chart)
        return self._figures

    @property
    def grid(self):
        """The small multiples' grid (made with :attr:`figures`)."""
        self.figures  # noqa: B018 - made on first read
        return self._grid

    def __panel__(self):
        return self.layout

    def _row(self, metric):
        fig = figure(x_range=self.x_range, height=ROW_HEIGHT, sizing_mode="stretch_width", tools="",
                     toolbar_location=None, title=f"{metric.label} ({metric.unit})", name=f"compare-{metric.key}-fig")
        wrap_title(fig)  # a phone's page: "KV cache, share of one GPU's capacity (%)" wraps, not cut
        describe_chart(fig, f"Compare chart: {metric.label} ({metric.unit}), one mark per pin. The CSV download gives "
                            "every pin's values.")
        source = self.sources[metric.key]
        bars = fig.vbar(x="pin", top="value", width=0.12, source=source, color="color", alpha=0.45)
        # Hollow, in the pin's colour, where the pin does not fit in memory (as the roofline's rungs): its "(if it
        # fit)" label may be left out for room (a trial read such pins as plain bars).
        marks = fig.scatter(x="pin", y="value", marker="marker", size=15, fill_color="fill", line_color="edge",
                            line_width="edge_width", source=source)
        # Each value sits right of its mark (or a line above or below it), laid out in the browser clear of the
        # other values and marks; with many pins a value with no room is left out (PLACE_LABELS) and read in the
        # hover. The fitted range (FIT_RANGE) leaves room above the tallest.
        # On the page's white, so that a value laid over its own pin's bar (the one place it is nearer its own mark
        # than any other: "23 tokens/s (if it fit)" under its mark) reads whole, not struck through by the bar.
        labels = LabelSet(x="pin", y="value", text="shown", source=source, text_font_size="11px",
                          text_color=PALETTE["text"], background_fill_color="white", background_fill_alpha=0.85,
                          name=f"compare-{metric.key}-labels")
        fig.add_layout(labels)
        # A template, so that a long hover (an extrapolated pin's caveats) wraps at a phone's width: as rows it ran
        # 2,448 px wide on one line, its start off the screen (a trial).  Bokeh escapes the fields' text.
        fig.add_tools(HoverTool(renderers=[marks], tooltips=HOVER_TEMPLATE.format(label=escape(metric.label))))
        fig.y_range = Range1d(0, 1)  # fitted in the browser (FIT_RANGE)
        # 12 px apart: on a phone two pins' labels met end to end and read as one ("181 % does not fit 171 % does
        # not fit", the second pin 3's, beside pin 1's mark).
        spans = []
        if metric.key == "memory":  # 100 %: the GPU's capacity, which the values' labels keep clear of (on a phone
            # the dashed line ran through "47.9 % fits" and read as a strike-through)
            spans.append(Span(location=100, dimension="width", line_color=PALETTE["text"], line_dash="dashed",
                              line_width=1))
            fig.add_layout(spans[0])
        place_labels_in_browser(fig, labels, marks.glyph, "text", steps=LABEL_STEPS, both_sides=False, shown="shown",
                                fallback="brief", pad=12, spans=spans, bars=[bars], own_only=True)
        fit = CustomJS(args={"fig": fig, "source": source, "glyph": marks.glyph, "labels": labels,
                             "least": spans[0].location if spans else 0}, code=FIT_RANGE)
        for model, prop in ((fig, "inner_height"), (source, "data"), (marks.glyph, "size"),
                            (labels, "text_font_size")):
            model.js_on_change(prop, fit)
        fig.yaxis.ticker = BasicTicker(desired_num_ticks=3)  # a row is about 90 px tall: three ticks read
        # Four significant digits with separators, as the values' labels (Bokeh's default went to 5.000e+6).
        fig.yaxis.formatter = CustomJSTickFormatter(code=Y_TICK_CODE)
        fig.xaxis.formatter = self.pin_ticks
        fig.xaxis.major_label_text_font_size = "11px"
        fig.title.text_font_size = "12px"
        fig.yaxis.minor_tick_line_color = None
        fig.xgrid.grid_line_color = None
        return fig

    @param.depends("state.pin_rows", "state.engine", watch=True)
    def _refresh(self) -> None:
        rows = self.state.pin_rows
        self.x_range.factors = [str(i + 1) for i in range(len(rows))]
        self.pin_ticks.args = {**self.pin_ticks.args, "labels": pin_axis_labels([row.pin.name for row in rows])}
        metrics = self.metrics
        if self._figures is not None:  # the expected row's title names the engine preset
            for fig, metric in zip(self._figures, metrics, strict=True):
                title = f"{metric.label} ({metric.unit})"
                if " ".join(fig.title.text.split()) != title:  # the browser wraps it to the row's width (wrap_title)
                    fig.title.text = title
        for metric in metrics:
            values = [metric.value(row.result) for row in rows]
            # A row with a note says it beside the value ("92.5 % fits"); the others' unit is in their title.
            # Each row's own format (tokens/s as the Pins table and the readouts write them).
            texts = [metric.text(row.result) for row in rows]
            hover = [metric.hover(row.result) for row in rows]
            self.sources[metric.key].data = {
                "pin": [str(i + 1) for i in range(len(rows))], "value": values,
                "text": texts, "shown": texts, "hover": hover,
                "brief": [metric.brief(row.result) for row in rows],  # the value alone, where its note has no room
                "name": [row.pin.name for row in rows],
                "color": [PIN_STYLES[i][0] for i in range(len(rows))],
                "fill": [PIN_STYLES[i][0] if row.result.fits else "white" for i, row in enumerate(rows)],
                "edge": ["black" if row.result.fits else PIN_STYLES[i][0] for i, row in enumerate(rows)],
                "edge_width": [1 if row.result.fits else 3 for row in rows],
                "marker": [PIN_STYLES[i][1] for i in range(len(rows))], **unplaced(len(rows)),
            }
        if rows:
            self.figures  # noqa: B018 - made with the first pin
            # The grid has no title: its saved images are named after the pins it compares (app/image_export.py).
            self._grid.tags = [compare_title([row.pin.name for row in rows])]
        if self.chart is not None:
            self.chart.visible = bool(rows)
        self.download.visible = bool(rows)
        self._say_empty()
        self.key.object = compare_key_html(rows)

    def _say_empty(self) -> None:
        """What the tab says with no pins: how to pin, the button named where this page shows it."""
        where = "beside <b>Jump to step</b>" if self.state.present else "under the tabs"
        self.empty.object = ("" if self.state.pin_rows else
                             '<div class="caption" data-readout="compare">No pins to compare yet. Pin the current '
                             f"scenario (<b>Pin this scenario</b>, {where}), or press <b>Pin batch 4 vs INT4 vs "
                             "k = 4</b> on the <b>Pins</b> tab for each model and GPU you want side by side: they "
                             "share one point on the roofline and part here.</div>")

    @param.depends("state.present", watch=True)
    def _on_present(self) -> None:
        self.empty.css_classes = ["present"] if self.state.present else []  # its sentence at 18 px (lab.css)
        self._say_empty()
        if self._figures is not None:
            self._present_rows()

    def _present_rows(self) -> None:
        """The rows in present mode or out of it: text and heights."""
        scale = PRESENT_ROW_SCALE if self.state.present else 1
        for fig in self._figures:
            present_figure(fig, self.state.present)
            fig.height = int(ROW_HEIGHT * scale)
        self._figures[-1].height += int(X_AXIS_HEIGHT * scale)


def _empty() -> dict:
    return {"pin": [], "value": [], "text": [], "shown": [], "brief": [], "hover": [], "name": [], "color": [],
            "fill": [],
            "edge": [], "edge_width": [], "marker": [], **unplaced(0)}


def compare_key_html(rows: list[PinRow]) -> str:
    """The key under the small multiples: each pin's number, colour, shape, name, and what differs."""
    if not rows:
        return ""
    items = []
    for i, row in enumerate(rows):
        color, marker = PIN_STYLES[i]
        r = row.result
        differs = differs_text(row)  # the same in a reopened link (it carries a trio pin's origin)
        items.append(
            f'<tr data-compare-pin="{i + 1}"><td><span style="color:{color}">●</span> {i + 1}</td>'
            f'<td class="k">{escape(marker.replace("_", " "))}{"" if r.fits else ", hollow: does not fit"}</td>'
            f'<td class="v">{escape(row.pin.name)}</td>'
            f'<td class="k">{escape(r.model.name)} on {escape(r.gpu.name)}</td>'
            f'<td class="k">{escape(differs)}</td>'
            f'<td class="k" data-bound="{r.bound}">{escape(bound_text(r))}</td></tr>'
        )
    # Why a trio's pins part on the roofline itself (a mixture of experts; weights kept as stored).
    notes = "".join(f'<div class="caption" data-readout="compare-trio">{escape(n)}</div>' for n in preset_notes(rows))
    # What a speculating pin's ceiling assumes (its acceptance rate).
    notes += "".join(f'<div class="caption" data-readout="compare-speculation">{escape(n)}</div>'
                     for n in speculation_notes(rows))
    head = ("<tr><th>pin</th><th>shape</th><th>name</th><th>model and GPU</th><th>what differs</th><th>bound</th>"
            "</tr>")
    return notes + scroll_table(head + "".join(items), "lab compare-key", ' data-readout="compare-key"')
