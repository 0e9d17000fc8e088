"""The lab's look, in one place: the palette and the stylesheet.

Colours are Okabe & Ito's colour-blind-safe set ("Color Universal Design", 2008),
each with a role; every view takes its colours from :data:`PALETTE` and its CSS
from ``app/lab.css`` (:data:`STYLESHEET`), so a change of look is one edit.
"""

from __future__ import annotations

from pathlib import Path

from bokeh.models import Div

#: Okabe-Ito colours by role.
PALETTE = {
    "roof": "#009E73",        # bluish green
    "ladder": "#0072B2",      # blue
    "workload": "#E69F00",    # orange
    "workload_line": "#7a3b00",
    "kv": "#CC79A7",          # reddish purple: anything counting KV reads
    "measured": "#D55E00",    # vermillion
    "reference": "#000000",
    "sparse": "#999999",
    "weights": "#0072B2",
    "kv_cache": "#B34F00",    # vermillion, darkened so white labels on it reach 4.5:1 (WCAG AA)
    "reserve": "#6B6B6B",     # grey dark enough for white text (the Okabe-Ito grey is not)
    "text": "#424242",
    "overhead": "#555555",      # dark grey, dotted: the launch-overhead ceiling
    "interconnect": "#56B4E9",  # sky blue: the scale-up link and communication time
    "expected": "#7a3b00",      # the workload's dark orange: the workload as a real engine runs it
}

#: One colour and one marker per pin slot (16, :data:`core.pins.MAX_PINS`): no two slots share a
#: marker, so shape alone tells pins apart where colour cannot (colour-blind viewers, greyscale print).
PIN_STYLES = (
    ("#CC79A7", "triangle"), ("#56B4E9", "square"), ("#D55E00", "inverted_triangle"), ("#000000", "hex"),
    ("#E69F00", "star"), ("#0072B2", "square_pin"), ("#009E73", "triangle_pin"), ("#F0E442", "plus"),
    ("#CC79A7", "diamond_cross"), ("#56B4E9", "circle_x"), ("#D55E00", "square_x"), ("#000000", "triangle_dot"),
    ("#E69F00", "hex_dot"), ("#0072B2", "circle_cross"), ("#009E73", "square_cross"), ("#F0E442", "star_dot"),
)

#: Marker (shape) per chart series, beside its colour: each series keeps its shape under any colour vision.
SERIES_MARKERS = {
    "workload": "star",           # filled orange star: your workload
    "workload_kv": "triangle",    # hollow purple triangle: the same point counting KV reads
    "ladder": "circle",           # blue discs (hollow: does not fit)
    "kv_ladder": "square",        # small purple squares
    "other_phase": "diamond",     # the same request's other phase (prefill or decode)
    "measured": "x",
    "expected": "circle_dot",     # hollow, dotted disc with a whisker: the expected point and its spread
}

#: Line dash per roof-like series: the roof solid, the sparse headline dashed, a datasheet twin dot-dash.
SERIES_DASHES = {"roof": "solid", "sparse": "dashed", "reference": "dotdash", "pinned_roof": "dotted"}

#: Room right of a log chart's frame, px: its last tick's label ("10⁵") is centred on the frame's edge, and Bokeh's
#: default 5 px cut it in half.
LAST_TICK_ROOM = 20
#: The served lab's stylesheet (each HTML pane gets it: Panel renders panes in shadow roots).
STYLESHEET = Path(__file__).with_name("lab.css").read_text(encoding="utf-8")


def scroll_table(rows: str, cls: str = "lab", attrs: str = "") -> str:
    """An HTML table of ``rows`` (its ``<tr>`` elements, escaped by the caller) in a box that scrolls sideways
    (``.scroll``, lab.css): a table wider than a narrow page (a phone's) scrolls inside its box, not the page.
    The box is a named region the keyboard reaches (tabindex 0), so that its arrows scroll it: an accessibility
    audit found the Serving tab's batching table cut at 1280 px in a box no key could scroll (axe's
    scrollable-region-focusable).  ``attrs``: more attributes of the table, with a leading space
    (`` data-readout="pins"``)."""
    return (f'<div class="scroll" tabindex="0" role="region" aria-label="table, scrolls sideways">'
            f'<table class="{cls}"{attrs}>{rows}</table></div>')


def describe_chart(fig, text: str):
    """Name a chart for a screen reader: ``text`` says what it plots and, where the page gives them as text, where its
    figures are.  Returns ``fig``.

    A chart's title, labels and marks are drawn on a canvas, which a screen reader cannot read.  The text rides on
    the figure's own element (Bokeh's ``html_attributes``, ``data-chart``); the page's repairs (``app/a11y.js``) give
    it to the chart's focusable layer as its name.
    """
    fig.html_attributes = {**fig.html_attributes, "data-chart": text}
    return fig


#: Code in a Markdown pane (`roofline.svg`) dark enough to read on white: Panel's default theme draws it #82aaff,
#: 2.4:1 against white, under WCAG's 4.5:1 (axe's color-contrast); #0a4a85 is 9:1.  The theme sets the colour on
#: each pane's own root, so the pane's stylesheet sets it again there.
CODE_CSS = ":host { --code-text-color: #0a4a85; }"


def live_html(margin: tuple[int, int, int, int] = (5, 10, 5, 10)) -> Div:
    """An HTML element rewritten on every move of a lever (the readouts, the memory bar), with :data:`STYLESHEET`.

    A Bokeh ``Div`` whose ``text`` the view sets in place, placed in a Panel layout as ``pn.pane.Bokeh(div)``:
    a change sends the text alone.  A Panel HTML pane rebuilds every property of its model on each change of its
    ``object``, its stylesheets included (~0.75 ms a change, in process, against 0.03 ms for the memory bar's
    HTML), and two of them changed on every move.

    Args:
        margin: top, right, bottom, left (px; a Panel HTML pane's default).
    """
    return Div(text="", stylesheets=[STYLESHEET], sizing_mode="stretch_width", margin=margin)


#: One (colour, dash, marker) per series of a chart that overlays several of one kind (the Hardware tab's parts,
#: kernels, memory levels, trend series): Okabe-Ito colours (yellow left out: too faint on white), with the dash
#: cycling over 6 patterns and the marker over 7 shapes, so that no two of the first 42 series share both dash and
#: marker and each series keeps its look under any colour vision (deuteranopia merges green, red and brown).
SERIES_COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")
SERIES_DASH_CYCLE = ("solid", "dashed", "dotted", "dotdash", "dashdot", "10 3 2 3 2 3")  # the last: dash-dot-dot
SERIES_MARKER_CYCLE = ("circle", "square", "triangle", "diamond", "inverted_triangle", "hex", "star")


def _luminance(rgb: tuple[float, float, float]) -> float:
    """WCAG 2's relative luminance of an sRGB colour (channels 0-1)."""
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def text_color(color: str, contrast: float = 4.5) -> str:
    """``color`` ("#rrggbb") darkened, hue kept, until it reads on white at ``contrast``:1 (WCAG 2 AA for text,
    4.5): a series' name written in its own colour (sky blue and orange reach 2.2:1 and 2.1:1 as they are).

    >>> text_color("#0072B2")  # already 5.1:1
    '#0072b2'
    >>> text_color("#56B4E9")
    '#3b7ca1'
    """
    rgb = tuple(int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))
    scale = 1.0
    while 1.05 / (_luminance(tuple(c * scale for c in rgb)) + 0.05) < contrast:
        scale -= 0.01
    return "#" + "".join(f"{round(c * scale * 255):02x}" for c in rgb)


def series_style(i: int) -> tuple[str, str, str]:
    """Series ``i``'s (colour, dash, marker): :data:`SERIES_COLORS`, :data:`SERIES_DASH_CYCLE` and
    :data:`SERIES_MARKER_CYCLE` each cycled (6 and 7 are coprime: the pair repeats only after 42 series)."""
    return (SERIES_COLORS[i % len(SERIES_COLORS)], SERIES_DASH_CYCLE[i % len(SERIES_DASH_CYCLE)],
            SERIES_MARKER_CYCLE[i % len(SERIES_MARKER_CYCLE)])


#: For pn.Tabs whose tabs all stay in the page (built once, kept): BokehJS hides an inactive tab's view with
#: ``visibility: hidden``, which keeps its room, so a short tab stood as tall as the tallest one opened before;
#: taken out of the layout instead, the tabs are as tall as the one shown.
ONLY_THE_ACTIVE_TAB = "[style*='visibility: hidden'] { display: none; }"


def tab_placeholder():
    """What a tab shows until its view is first opened (and built): a plain Bokeh spacer in a Panel pane.

    A ``pn.Spacer`` goes through Panel's whole component machinery for a model that shows nothing; a tab
    bar of eleven costs about twice as much with them (5 against 13 ms per session, in process).
    """
    import panel as pn
    from bokeh.models import Spacer

    return pn.pane.Bokeh(Spacer())
