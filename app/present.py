"""Present mode: chart text of at least 18 px, thicker lines and larger markers, for a projector.

One concept: :func:`present_figure` switches any Bokeh figure between its built
look and the projector look, and back (the built values are remembered on the
first switch, so toggling never drifts).  The page's HTML follows the ``present``
CSS class (``app/lab.css``).
"""

from __future__ import annotations

from bokeh.models import Axis, CustomJS, GlyphRenderer, Label, LabelSet, Legend, Title

#: The smallest chart text in present mode (px): readable from the back of a room at 1280×720.
PRESENT_TEXT_PX = 18
#: The style, in present mode, of the whole page (and of the Hardware tab's cards and the Compare and Export tabs'
#: buttons, which set it too): every widget draws its text at ``PRESENT_TEXT_PX``.  Bokeh's widgets take their size
#: from this CSS variable (``var(--bokeh-font-size, 12px)`` in their base stylesheet), and a custom property is
#: inherited into every shadow root below the element that sets it, so set once on the page it reaches every
#: control of every tab, built now or on first view (a teacher's trial found "Show your work", "Engine preset",
#: the Export tab's text and copy buttons and the Serving tab's controls at 12 px when it was set row by row).
#: By present mode (on, off): off, ``initial`` (BokehJS keeps a style a later ``styles`` leaves out, so the 18 px
#: stayed after leaving present mode), under which Bokeh's own 12 px applies.
PRESENT_CONTROLS = {True: {"--bokeh-font-size": f"{PRESENT_TEXT_PX}px"}, False: {"--bokeh-font-size": "initial"}}
#: The tab bar's names in present mode (a stylesheet of the bar: its buttons are in its own shadow root), at
#: ``PRESENT_TEXT_PX`` with less room above and below, so that the bar takes little more height than at 12 px.
PRESENT_TABS_CSS = (f".bk-btn-group > .bk-btn {{ font-size: {PRESENT_TEXT_PX}px; "
                    "padding-top: 1px; padding-bottom: 2px; }")
#: A card's header (its chevron and title, "Levers") draws its text at the card's font size: a browser draws a
#: <button> at 13.33 px unless told, and the title (an <h3>, 1.17 em) follows the button.  In present mode the card
#: takes PRESENT_CONTROLS, so its header reads 18 px and more.
CARD_HEADER_CSS = ".card-header { font-size: var(--font-size); }"
#: The text a select shows and a text or number input holds follows the widget's size (12 px, 18 px on a
#: projector): a browser draws them at its own 13.33 px unless told, and Bokeh's ``.bk-input`` does not tell it.
#: Their labels wrap inside the widget's width (Bokeh's input group does not wrap), so at 18 px the labels of a
#: row of fixed-width inputs do not run over each other.  Every select and input the lab builds takes this.
#: A select's value too long for its box ends in "…" (a tour step's title read "7. Notice what now dc").
INPUT_TEXT_CSS = ("input, select, textarea { font-size: var(--font-size); } .bk-input-group { white-space: normal; } "
                  "select { text-overflow: ellipsis; }")
#: A file dropper's words ("Drag & Drop your files or Browse") at FilePond's 16 px, or the page's text size where that
#: is larger (18 px on a projector).
DROPPER_TEXT_CSS = ".filepond--root { font-size: max(16px, var(--font-size)); }"
#: On a projector "Jump to step" is read by a screen reader but not drawn (the list shows the step it is on): the
#: tour's longest cards keep their last line above the fold of a 720-px screen.
PRESENT_JUMP_CSS = ("label { position: absolute; width: 1px; height: 1px; overflow: hidden; "
                    "clip-path: inset(50%); white-space: nowrap; }")


#: The widths (px) of buttons with fixed widths, built and in present mode: their labels at 18 px.  During a tour
#: "Next ▶" is narrower than "Start the tour ▶" ("tour-next-running"), so that on a projector Previous, Next and
#: Leave share one row beside the chart and the longest cards stay above the fold of a 720-px screen.
#: On a projector "Pin this scenario" shares the row of "Jump to step" (both 205 px, with their margins the side
#: column's 440 px at 1280): under the card it ended below the fold at the longest cards (tour steps 8 and 14).
PRESENT_WIDTHS = {"tour-prev": (110, 125), "tour-next": (150, 210), "tour-next-running": (150, 105),
                  "tour-resume": (170, 240), "tour-leave": (130, 160), "tour-jump": (260, 205), "pin": (170, 205),
                  # the Pins tab's buttons, wide enough for their labels at 18 px
                  "pin-preset": (210, 300), "pin-clear": (100, 130), "pin-undo": (90, 110), "pin-rename": (90, 110),
                  "pin-remove": (90, 110)}
#: In present mode a chart's plot frame keeps at least this share of the figure's built height: the figure grows
#: taller rather than let 18-px text, a wrapped title and the legend squeeze the data into a strip (a phone).
MIN_FRAME_SHARE = 0.4
#: Line widths and marker sizes are multiplied by these in present mode.
LINE_SCALE = 1.6
MARKER_SCALE = 1.35
#: Legend glyph boxes (``glyph_width``, ``glyph_height``) grow with the legend's text in present mode, to at least
#: this (px).  BokehJS draws a marker in its legend at 0.4 × the box, so the 20-px default box gives an 8-px star
#: beside 18-px text: a blob from the back of the room; it reads as a star at about 0.6 × the text (0.4 × 28 =
#: 11.2 px ≥ 0.6 × 18).  No more than that: the box is a legend row's height, and at 18 / 11 × 20 = 33 px the
#: roofline's four rows under a five-line title (tour steps 18 and 19: TP = 2 and 8) ended below a 720-px fold.
LEGEND_GLYPH_PX = 28
LEGEND_GLYPH_PROPS = ("glyph_width", "glyph_height")

_TEXT_PROPS = {
    Axis: ("axis_label_text_font_size", "major_label_text_font_size"),
    Legend: ("label_text_font_size", "title_text_font_size"),
    Title: ("text_font_size",),
    Label: ("text_font_size",),
    LabelSet: ("text_font_size",),
}


def _px(size) -> float | None:
    """A Bokeh font size ('13px', '10pt', {'value': '12px'}) in px; None when it is not a fixed size."""
    if isinstance(size, dict):
        size = size.get("value")
    if not isinstance(size, str):
        return None
    size = size.strip()
    try:
        if size.endswith("px"):
            return float(size[:-2])
        if size.endswith("pt"):
            return float(size[:-2]) * 4 / 3
        if size.endswith("em"):
            return float(size[:-2]) * 16
    except ValueError:
        return None
    return None


# Wraps each title line wider than the plot frame, each axis title longer than the canvas has room for (an axis
# title is centred on its side of the frame and may run past the frame, not past the canvas: at 18 px on a phone
# "attainable performance (TFLOP/s, dense)" is 332 px and the Three-ceilings chart's frame is centred 150 px
# below the canvas's top), and each legend label wider than the legend's share of the figure, at its spaces (the
# text as the server set it is kept, so the lines are re-wrapped from it when the frame or the font changes).
# Canvas text does not wrap by itself, and at 18 px a line such as "Llama-3-70B · NVIDIA H100 SXM5 80GB · decode"
# is wider than a phone.
WRAP_TEXT = r"""
const val = (v) => (v !== null && typeof v === "object" && "value" in v) ? v.value : v;
const ctx = document.createElement("canvas").getContext("2d");
const wrap = (text, avail) => {
  const out = [];
  for (const line of text.split("\n")) {
    if (ctx.measureText(line).width <= avail) { out.push(line); continue; }
    let cur = "";
    for (const word of line.split(" ")) {
      const next = cur ? cur + " " + word : word;
      if (cur && ctx.measureText(next).width > avail) { out.push(cur); cur = word; } else { cur = next; }
    }
    out.push(cur);
  }
  return out.join("\n");
};
const t = fig.title;
if (t != null && typeof t.text === "string" && fig.inner_width > 0) {
  if (t.text !== t._wrapped) { t._source = t.text; }  // a new text from the server
  ctx.font = `${val(t.text_font_style) || "bold"} ${val(t.text_font_size)} ${val(t.text_font) || "helvetica"}`;
  t._wrapped = wrap(t._source, fig.inner_width);
  if (t._wrapped !== t.text) { t.text = t._wrapped; }
}
const view = typeof Bokeh !== "undefined" && Bokeh.index != null ? Bokeh.index.find_one(fig) : null;
for (const axis of [...fig.left, ...fig.right, ...fig.below, ...fig.above]) {
  if (!axis.type.endsWith("Axis") || typeof axis.axis_label !== "string") { continue; }
  const vertical = fig.left.includes(axis) || fig.right.includes(axis);
  let avail = vertical ? fig.inner_height : fig.inner_width;
  if (view != null && view.frame != null && view.canvas_view != null) {  // room on the canvas, around the centre
    const f = view.frame.bbox, c = view.canvas_view.bbox;
    avail = vertical ? 2 * Math.min(f.vcenter, c.height - f.vcenter) : 2 * Math.min(f.hcenter, c.width - f.hcenter);
    avail -= 4;
  }
  if (!(avail > 0)) { continue; }
  if (axis.axis_label !== axis._wrapped) { axis._source = axis.axis_label; }  // a new text from the server
  ctx.font = `${val(axis.axis_label_text_font_style) || "italic"} ${val(axis.axis_label_text_font_size)} ` +
    `${val(axis.axis_label_text_font) || "helvetica"}`;
  axis._wrapped = wrap(axis._source, avail);
  if (axis._wrapped !== axis.axis_label) { axis.axis_label = axis._wrapped; }
}
const width = fig.outer_width || fig.width;
if (width > 0) {
  for (const legend of [...fig.center, ...fig.below, ...fig.above, ...fig.left, ...fig.right]) {
    if (legend.type !== "Legend") { continue; }
    const cols = Number(legend.ncols) > 0 ? Number(legend.ncols) : 1;
    // A key under or over the frame lines up with the frame's right edge: it has the room left of that edge (the
    // canvas's whole width put a 1024-px projector's key 11 px past the canvas's left edge, its swatches cut).
    // Before the first layout the frame has no size (right: 0): the canvas's width then, or every name wrapped to
    // 60 px and the figure, grown for so tall a key, stayed that tall.
    const panel = fig.below.includes(legend) || fig.above.includes(legend);
    const right = panel && view != null && view.frame != null ? view.frame.bbox.right : 0;
    const room = right > 0 ? Math.min(width, right) : width;
    const avail = (room - 2 * legend.margin - 2 * legend.padding - (cols - 1) * legend.spacing) / cols -
      legend.glyph_width - legend.label_standoff;
    ctx.font = `${val(legend.label_text_font_style) || "normal"} ${val(legend.label_text_font_size)} ` +
      `${val(legend.label_text_font) || "helvetica"}`;
    for (const item of legend.items) {
      const label = item.label;
      if (label == null || typeof label !== "object" || typeof label.value !== "string") { continue; }
      if (label.value !== item._wrapped) { item._source = label.value; }
      item._wrapped = wrap(item._source, Math.max(avail, 60));
      if (item._wrapped !== label.value) { item.label = {value: item._wrapped}; }
    }
  }
}
"""


# Grows the figure until its plot frame is at least tags[0] px tall (0: no floor; present mode sets it), and gives
# back what it grew once the frame has the room again: shown after a hidden tab, the roofline's first layout still had
# the legend wrapped to no width, grew 95 px for it, and kept them when the legend unwrapped, its last rows below a
# 720-px screen's fold (a lecturer's trial: tour step 20 after 21).  What it grew is forgotten when anything else sets
# the height (the server, a phone's narrow page).
KEEP_FRAME = """
const floor = me.tags.length ? me.tags[0] : 0;
if (me._height !== fig.height) { me._grown = 0; }
const grown = me._grown || 0;
if (floor > 0 && fig.inner_height > 0 && fig.inner_height < floor) {
  const more = Math.ceil(floor - fig.inner_height);
  me._grown = grown + more;
  fig.height = fig.height + more;
} else if (grown > 0 && fig.inner_height > floor) {
  const back = Math.min(grown, Math.floor(fig.inner_height - floor));
  me._grown = grown - back;
  if (back > 0) { fig.height = fig.height - back; }
}
me._height = fig.height;
"""


# Bokeh (3.9) repaints a title whose text changed but does not lay the figure out again, so a title that gains a
# line (tour step 19 -> 18: three lines -> four) keeps the room of the old one and its first line is drawn above
# the canvas, under the page's tab bar (and one that loses a line leaves a gap).  This forces a new layout
# (``request_layout(true)``: unforced, BokehJS keeps the title's old size) at once, before the next paint (one paint
# with the old layout left the cut first line's foot on the canvas's top rows for good: tour steps 11 -> 12), and
# again once the title's new text has been built (BokehJS builds it asynchronously, hence the timeout).
RELAYOUT = """
// Only when the number of lines changed: the served chart's title changes with every server update and the
// offline page's with every move, and a forced layout measures the whole figure again.
const lines = String(fig.title.text).split("\\n").length;
if (fig.title._lines !== lines) {
  fig.title._lines = lines;
  const relayout = () => { const view = Bokeh.index.find_one(fig); if (view != null) { view.request_layout(true); } };
  relayout();
  setTimeout(relayout, 0);
}
"""


def relayout_on_title_change(fig) -> None:
    """Lay ``fig`` out again whenever its title's text gains or loses a line, so every line of a longer title has
    its room (:data:`RELAYOUT`)."""
    if fig.title is None or getattr(fig, "_relayouts_title", False):
        return
    fig.title.js_on_change("text", CustomJS(args={"fig": fig}, code=RELAYOUT))
    fig._relayouts_title = True  # Python-side only


def wrap_title(fig) -> None:
    """Wrap ``fig``'s title lines to its plot frame's width, its axis titles to the canvas's room, and its
    legend labels to the legend's share of the figure, in the browser, whenever a text, its size or the frame's
    size changes (nothing is cut off and no line widens a phone-width page): :data:`WRAP_TEXT`."""
    if getattr(fig, "_wraps_title", False):
        return
    relayout_on_title_change(fig)
    callback = CustomJS(args={"fig": fig}, code=WRAP_TEXT)
    fig.js_on_change("inner_width", callback)
    fig.js_on_change("inner_height", callback)
    for axis in fig.axis:
        axis.js_on_change("axis_label", callback)
        axis.js_on_change("axis_label_text_font_size", callback)
    if fig.title is not None:
        fig.title.js_on_change("text", callback)
        fig.title.js_on_change("text_font_size", callback)
    for legend in fig.legend:
        legend.js_on_change("label_text_font_size", callback)
        legend.js_on_change("ncols", callback)
        for item in legend.items:
            item.js_on_change("label", callback)
    fig._wraps_title = True  # Python-side only


def _own(fig, cls):
    """``fig``'s axes, annotations or renderers of type ``cls``, where Bokeh puts them (its side panels, its centre
    and its renderers): a walk of every model the figure references (``fig.select``) cost ~0.1 s per chart."""
    for obj in (*fig.above, *fig.below, *fig.left, *fig.right, *fig.center, *fig.renderers):
        if isinstance(obj, cls):
            yield obj


def _models(fig):
    yield from _own(fig, Axis)
    yield from _own(fig, Legend)
    yield from _own(fig, Label)
    yield from _own(fig, LabelSet)
    yield fig.title


def present_figure(fig, on: bool) -> None:
    """Switch ``fig`` to the projector look (``on``) or back to its built look.

    Text: every font size set in px/pt/em is raised to at least :data:`PRESENT_TEXT_PX` (title lines
    wrap to the chart's width: :func:`wrap_title`, and the figure grows to keep its plot frame at least
    :data:`MIN_FRAME_SHARE` of its built height); glyphs: line widths × :data:`LINE_SCALE`, marker sizes ×
    :data:`MARKER_SCALE` (fixed values only; sizes taken from data are kept); legend glyph boxes grow with
    the legend's text (:data:`LEGEND_GLYPH_PROPS`).
    """
    saved = getattr(fig, "_present_saved", None)
    if saved is None and not on:
        return  # still its built look: nothing to remember or restore (most sessions never present)
    if saved is None:
        wrap_title(fig)
        keep = CustomJS(code=KEEP_FRAME, tags=[0])
        keep.args = {"fig": fig, "me": keep}
        fig.js_on_change("inner_height", keep)
        keep.js_on_change("tags", keep)
        saved = {"present": False, "values": {}, "keep": keep, "height": fig.height}
        fig._present_saved = saved  # Python-side only: never sent to the browser
    # Models added since the last switch (a chart's marks layer, made with its first pin) are remembered too.
    seen = len(saved["values"])
    for model in _models(fig):
        for cls, props in _TEXT_PROPS.items():
            if isinstance(model, cls):
                for prop in props:
                    saved["values"].setdefault((model.id, prop), getattr(model, prop))
    for legend in _own(fig, Legend):
        for prop in LEGEND_GLYPH_PROPS:
            saved["values"].setdefault((legend.id, prop), getattr(legend, prop))
    for r in _own(fig, GlyphRenderer):
        for prop in ("line_width", "size"):
            if prop in r.glyph.properties():
                saved["values"].setdefault((r.glyph.id, prop), getattr(r.glyph, prop))
    if saved["present"] == on and len(saved["values"]) == seen:
        return
    saved["present"] = on
    saved["keep"].tags = [round(MIN_FRAME_SHARE * saved["height"]) if on else 0]
    by_id = {m.id: m for m in [*_models(fig), *(r.glyph for r in _own(fig, GlyphRenderer))]}
    for (model_id, prop), built in saved["values"].items():
        model = by_id.get(model_id)
        if model is None:
            continue
        setattr(model, prop, _present_value(prop, built) if on else built)


def _present_value(prop: str, built):
    if prop in LEGEND_GLYPH_PROPS:  # a legend's glyph box: with its text
        return max(built, LEGEND_GLYPH_PX)
    if prop.endswith("font_size"):
        px = _px(built)
        return built if px is not None and px >= PRESENT_TEXT_PX else f"{PRESENT_TEXT_PX}px"
    if isinstance(built, (int, float)):
        return built * (LINE_SCALE if prop == "line_width" else MARKER_SCALE)
    return built
