"""Present mode: chart text of at least 18 px, thicker lines and larger markers, for a projector.

One concept: :func:`present_figure` switches any Bokeh figure between its built
look and the projector look, and back (the built values are remembered on the
first switch, so toggling never drifts).  The page's HTML follows the ``present``
CSS class (``app/lab.css``).
"""

from __future__ import annotations

from bokeh.models import Axis, GlyphRenderer, Label, LabelSet, Legend, Title

#: The smallest chart text in present mode (px): readable from the back of a room at 1280×720.
PRESENT_TEXT_PX = 18
#: Line widths and marker sizes are multiplied by these in present mode.
LINE_SCALE = 1.6
MARKER_SCALE = 1.35

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


def _models(fig):
    yield from fig.select({"type": Axis})
    yield from fig.select({"type": Legend})
    yield from fig.select({"type": Label})
    yield from fig.select({"type": LabelSet})
    yield fig.title


def present_figure(fig, on: bool) -> None:
    """Switch ``fig`` to the projector look (``on``) or back to its built look.

    Text: every font size set in px/pt/em is raised to at least
    :data:`PRESENT_TEXT_PX`; glyphs: line widths × :data:`LINE_SCALE`, marker
    sizes × :data:`MARKER_SCALE` (fixed values only; sizes taken from data are kept).
    """
    saved = getattr(fig, "_present_saved", None)
    if saved is None and not on:
        return  # still its built look: nothing to remember or restore (most sessions never present)
    if saved is None:
        saved = {"present": False, "values": {}}
        for model in _models(fig):
            for cls, props in _TEXT_PROPS.items():
                if isinstance(model, cls):
                    for prop in props:
                        saved["values"][(model.id, prop)] = getattr(model, prop)
        for r in fig.select({"type": GlyphRenderer}):
            for prop in ("line_width", "size"):
                if prop in r.glyph.properties():
                    saved["values"][(r.glyph.id, prop)] = getattr(r.glyph, prop)
        fig._present_saved = saved  # Python-side only: never sent to the browser
    if saved["present"] == on:
        return
    saved["present"] = on
    by_id = {m.id: m for m in [*_models(fig), *(r.glyph for r in fig.select({"type": GlyphRenderer}))]}
    for (model_id, prop), built in saved["values"].items():
        model = by_id.get(model_id)
        if model is None:
            continue
        setattr(model, prop, _present_value(prop, built) if on else built)


def _present_value(prop: str, built):
    if prop.endswith("font_size"):
        px = _px(built)
        return built if px is not None and px >= PRESENT_TEXT_PX else f"{PRESENT_TEXT_PX}px"
    if isinstance(built, (int, float)):
        return built * (LINE_SCALE if prop == "line_width" else MARKER_SCALE)
    return built
