"""The Ladder tab: article 004 section 06's rungs applied one after another to the current scenario.

One table (HTML) with a row per rung — what it pulled and the numbers after it — and one small log-log
roofline of its own with the rungs as points joined by arrows.  The chart is the tab's (built when the tab
first opens, so a session that never opens it builds none of its models): one ColumnDataSource and one
glyph renderer for the points (a LabelSet on the same source), one Arrow set, one roof line and the ridge.
Every number comes from :func:`core.ladder.climb`; the view computes no formula.  The rungs shown and
their order are :attr:`app.state.LabState.ladder` (``?ladder=`` in a link).
"""

from __future__ import annotations

import math
from functools import lru_cache
from html import escape

import panel as pn
import param
from bokeh.models import Arrow, ColumnDataSource, LabelSet, NormalHead, Span
from bokeh.plotting import figure

from core.batching import MIXES
from core.explain import rung_bound_word
from core.ladder import ARTICLE_ORDER, RUNGS, Ladder, LadderSettings, climb, ladder_start
from core.permalink import shown_value
from core.scenario import Scenario
from core.units import TFLOP, fmt_count, fmt_sig

from .label_layout import place_labels_in_browser, unplaced
from .message import Message
from .present import INPUT_TEXT_CSS, present_figure, wrap_title
from .roofline_view import fit_x_end, roof_xy
from .serving_views import serving_inputs
from .state import LabState
from .style import LAST_TICK_ROOM, PALETTE, STYLESHEET, describe_chart

#: The rung's short name on the chart (the table gives the article's title).
SHORT = {"continuous_batching": "batching", "weight_quantization": "quantization",
         "speculative_decoding": "speculation", "gqa_mla": "GQA/MLA", "paged_attention": "paging",
         "flash_attention": "Flash", "disaggregation": "pools"}
#: A rung's number in the article's order (1-7): the order box's vocabulary.
NUMBER = {rung: i + 1 for i, rung in enumerate(ARTICLE_ORDER)}
#: What each rung pulls, in the article's words (the ``raises`` of :data:`core.ladder.RUNGS`).
PULLS = {"B": "raises B", "p": "lowers p", "k": "raises k", "capacity": "relieves capacity",
         "traffic": "removes traffic", "pools": "splits the pools"}
TITLES = {r.id: r.title for r in RUNGS}
CHART_HEIGHT = 360
#: The chart's height in present mode (px): at 360 the rows' table began at 700 px of a 720-px projector at tour
#: step 25 (the chart, then the article's paragraph at 18 px); at this height its head and first rows show.
PRESENT_CHART_HEIGHT = 260
#: The seven rung buttons in one row of the centre column at 1280 px (with Bokeh's padding the row runs into the
#: readouts column): narrower padding, and a row that wraps rather than spill.
RUNG_BUTTONS_CSS = (".bk-btn-group { flex-wrap: wrap; } .bk-btn { padding-left: 0.45em; padding-right: 0.45em; }"
                    # a rung switched on keeps a mark of its own in forced colours (its fill was painted over)
                    "@media (forced-colors: active) { .bk-btn.bk-active { border: 3px solid Highlight; "
                    "text-decoration: underline; } }")
#: Points this close on the log axes (decades) share one label: a rung that moves no lever lands where the
#: one before it did.
NEAR = 0.02


#: Climbs kept per server process for scenarios of the shipped catalogue: a class that opens the tab on one
#: scenario climbs once, not once per student.
SHARED_CLIMBS = 64


def shipped(scenario: Scenario) -> bool:
    """Whether ``scenario``'s model and GPU are the shipped catalogue's (not a session's own), so that its levers
    alone decide what it computes and the result may be shared between sessions."""
    return not (scenario.catalogue.is_own(scenario.model) or scenario.catalogue.is_own(scenario.gpu))


@lru_cache(maxsize=SHARED_CLIMBS)
def _shared_climb(levers: tuple, rungs: tuple[str, ...], mix: str, block_size: int) -> Ladder:
    return climb(Scenario(**dict(levers)), rungs, LadderSettings(mix=MIXES[mix], block_size=block_size))


def climb_for(start: Scenario, rungs, mix: str, block_size: int) -> Ladder:
    """:func:`core.ladder.climb` from ``start`` through ``rungs`` serving ``MIXES[mix]`` with PagedAttention's block
    of ``block_size`` tokens; shared between sessions (:data:`SHARED_CLIMBS` kept) when ``start`` is
    :func:`shipped` (a climb is read only).

    Raises:
        ValueError: as :func:`core.ladder.climb`.
    """
    if shipped(start):
        return _shared_climb(tuple(sorted(start.levers().items())), tuple(rungs), mix, block_size)
    return climb(start, rungs, LadderSettings(mix=MIXES[mix], block_size=block_size))


def ladder_rows(ladder: Ladder) -> list[dict]:
    """One row per step (the start first): the rung, what it pulled and the numbers after it (SI units:
    tokens/s, seconds, FLOP/byte, FLOP/s) exactly as :meth:`core.ladder.LadderStep.numbers` gives them."""
    raises = {r.id: r.raises for r in RUNGS}
    rows = []
    notes = zip(ladder.steps, ladder.speculation_notes(), ladder.article_notes(), strict=True)
    for i, (step, note, article) in enumerate(notes):
        # ``number``: the rung's in article 004's list (0: the start), as its toggle and the order box say it; ``n``
        # its place in this climb (a student switched speculation off and the rows renumbered under the toggles).
        rows.append({"n": i, "number": NUMBER[step.rung] if step.rung else 0, "rung": step.rung, "title": step.title,
                     "pulls": PULLS[raises[step.rung]] if step.rung else "", "summary": step.summary,
                     "speculation_cost": note, "article": article, **step.numbers()})
    return rows


def ladder_table_html(ladder: Ladder, note: str = "") -> str:
    """The steps as an HTML table: per rung what it pulled, then B, k, p, the intensity 2·B·k/p on the weights,
    the bound, tokens/s per sequence and per GPU, the largest batch that fits, TTFT and TPOT."""
    rows = ladder_rows(ladder)
    moe = ladder.steps[0].result.model.moe
    ridge = ladder.steps[0].numbers()["ridge_point"]
    moved = later_roof(ladder)
    ridges = (f"Ridge point {fmt_sig(ridge)} FLOP/byte ({fmt_sig(moved.ridge_point)} on the dashed roof)" if moved
              else f"Ridge point {fmt_sig(ridge)} FLOP/byte")
    # The readouts' formula: an MoE's step reads the experts its B·k tokens touch (a trial found "16 · 1 · 2" beside
    # I = 2.655 under "I = 2·B·k/p").
    intensity = "I = 2·B·k·N_active / (N_read·p)" if moe else "I = 2·B·k/p"
    # The three levers apart, not a product: "48 · 4 · 0.5" multiplied to 96 beside I = 768 (a teacher's trial);
    # semicolons, as B takes a thousands comma.
    head = (f'<tr><th>rung<span class="rung-title"> (what it pulls)</span></th>'
            f"<th>B; k; p</th><th>{intensity}</th>"
            "<th>tokens/s per seq.</th><th>tokens/s per GPU</th><th>largest B that fits</th><th>TTFT ms</th>"
            "<th>TPOT ms</th></tr>")
    body = []
    for row in rows:
        pulls = f' <span class="pulls">({escape(row["pulls"])})</span>' if row["pulls"] else ""
        body.append(
            f'<tr data-rung="{escape(row["rung"] or "start")}">'
            f'<td class="k">{row["number"]} <span class="rung-title">{escape(row["title"])}{pulls}</span>'
            f'<span class="rung-short">{escape(SHORT.get(row["rung"], "start"))}</span></td>'
            f'<td>{fmt_count(row["batch"])}; {row["k"]}; {fmt_sig(row["p"])}</td>'
            f'<td>{fmt_sig(row["intensity"])}<br>'
            f'<span class="pulls">{escape(rung_bound_word(row["bound"], row["intensity"], row["ridge_point"]))}'
            '</span></td>'
            # One decimal, as the rungs' notes and the tour's ladder steps print them (the table said 23 beside
            # step 21's "22.7 tokens/s per GPU").
            f'<td>{row["tokens_per_s_per_sequence"]:,.1f}</td><td>{row["tokens_per_s_per_gpu"]:,.1f}</td>'
            f'<td>{fmt_count(row["max_batch"])}</td><td>{fmt_sig(1e3 * row["ttft_s"])}</td>'
            f'<td>{fmt_sig(1e3 * row["tpot_s"])}</td></tr>')
        if row["summary"]:
            body.append(f'<tr class="summary"><td class="k" colspan="8"><span class="row-note">↳ '
                        f'{escape(row["summary"])}</span></td></tr>')
        if row["article"]:  # the article's reported figure beside the climb's (core.ladder.Ladder.article_notes)
            body.append('<tr class="summary" data-readout="article-reports"><td class="k" colspan="8">'
                        f'<span class="row-note">↳ {escape(row["article"])}</span></td></tr>')
        if row["speculation_cost"]:  # said once, where it starts (core.ladder.Ladder.speculation_notes)
            body.append('<tr class="summary" data-readout="speculation-cost"><td class="k warn" colspan="8">'
                        f'<span class="row-note">↳ {escape(row["speculation_cost"])}</span></td></tr>')
    start = ladder.steps[0]
    # The article's words and the scenario under the chart; how B is derived after the table: at 18 px on a
    # projector the one paragraph of both ran below the fold at tour step 21 (issue 30).
    caption = (
        '<div class="caption" data-readout="ladder">Article 004, section 06: "Each rung below raises 2Bk/p, relieves '
        'capacity, or both — and the honest way to read any inference optimization is to ask which." '
        f"From {escape(start.models)}." + (f" <b>{escape(note)}</b>" if note else "") + "</div>")
    units = ('<div class="caption">B is derived, not set: one request at a time until continuous batching, then '
             "the batch the batching simulation sustains in the slots the KV capacity allows (at most 256), so a rung "
             f"that frees capacity raises B too. {ridges}. Every rate and time is the "
             "lab's roofline ceiling, not what a measured engine delivers.</div>"
             '<div class="caption">B the batch, k tokens per weight read, p bytes per weight; I in FLOP/byte on '
             "the weights" + (" (N_active / N_read: the active parameters over those the step reads, the experts "
                              "its B·k tokens touch)" if moe else "")
             + "; under it the step's bound, counting its KV reads as the readouts' Bound does (\"memory, by KV "
             "reads\" where I on the weights alone is past the ridge); TTFT the time to the first token of one "
             "prompt, TPOT the time per output token." + _later_roof_text(ladder) + "</div>")
    # On a projector (lab.css, present mode) the rows scroll in a box under their sticky head, opened at the newest
    # rung, which the tour's card talks about, and the paragraphs follow the table: under the chart at 720 px only
    # the head and the start row showed (a teacher's trial, tour steps 22-25).
    return ('<div class="ladder-pane">' + caption
            + f'<div class="ladder-rows"><table class="lab ladder">{head}{"".join(body)}</table></div>' + units
            + "</div>")


def later_roof(ladder: Ladder):
    """The first step whose compute roof differs from the start's (INT4 weight-only after FP8: the BF16 roof), whose
    roof the chart draws dashed, or None: a teacher's trial found rung 2's point under the only roof drawn."""
    first = ladder.steps[0].result.peak_flop_per_s
    return next((step.result for step in ladder.steps if step.result.peak_flop_per_s != first), None)


def _later_roof_text(ladder: Ladder) -> str:
    """The dashed roof in words, where the chart draws one (:func:`later_roof`)."""
    moved = later_roof(ladder)
    if moved is None:
        return ""
    r = ladder.steps[0].result
    return (f" The chart's dashed roof is {fmt_sig(moved.peak_flop_per_s / TFLOP)} TFLOP/s, where the compute roof "
            f"moves from {fmt_sig(r.peak_flop_per_s / TFLOP)}: {escape(moved.compute_roof_reason)}.")


def chart_data(ladder: Ladder) -> dict:
    """The chart's columns: ``points`` (x intensity FLOP/byte, y attainable TFLOP/s, one per step, ``label``
    blank where a point repeats the one before it, those rungs named on the first; ``xoff``, ``yoff`` and
    ``align``, the labels' offsets before the browser lays them out: :func:`app.label_layout.unplaced`) and
    ``arrows`` (from each point to the next one that moved)."""
    xs, ys, labels = [], [], []
    for step in ladder.steps:
        n = step.numbers()
        x, y = n["intensity"], n["attainable_flop_per_s"] / TFLOP
        name = f"{NUMBER[step.rung]} {SHORT[step.rung]}" if step.rung else "0 start"  # the article's numbers
        if xs and abs(_log(x) - _log(xs[-1])) < NEAR and abs(_log(y) - _log(ys[-1])) < NEAR:
            # Same place as the point before: named on the first label of the run.
            first = max(j for j, lab in enumerate(labels) if lab)
            labels[first] += f", {name}"
            labels.append("")
        else:
            labels.append(name)
        xs.append(x)
        ys.append(y)
    moved = [i for i, lab in enumerate(labels) if lab]
    arrows = {"x_start": [xs[a] for a in moved[:-1]], "y_start": [ys[a] for a in moved[:-1]],
              "x_end": [xs[b] for b in moved[1:]], "y_end": [ys[b] for b in moved[1:]]}
    return {"points": {"x": xs, "y": ys, "label": labels, **unplaced(len(xs))}, "arrows": arrows}


def _log(v: float) -> float:
    return math.log10(v) if v > 0 else -99.0


class LadderView(pn.viewable.Viewer):
    """The Ladder tab: the rungs to apply (toggle and order), the table and the chart, following the scenario
    while the tab is open."""

    state = param.ClassSelector(class_=LabState, doc="The session state it follows.")

    def __init__(self, **params):
        super().__init__(**params)
        # On/off per rung (a rung switched on goes last), and the order as the rungs' numbers.
        self.rungs = pn.widgets.CheckButtonGroup(
            options={f"{NUMBER[r.id]} {SHORT[r.id]}": r.id for r in RUNGS}, value=list(self.state.ladder),
            color="primary", variant="outline", sizing_mode="stretch_width", css_classes=["ladder-rungs"],
            stylesheets=[RUNG_BUTTONS_CSS])
        self.order = pn.widgets.TextInput(label="Order (rung numbers)", value=self._order_text(), width=170,
                                          css_classes=["ladder-order"], stylesheets=[INPUT_TEXT_CSS])
        self.reset = pn.widgets.Button(label="All seven, in the article's order", width=240,
                                       css_classes=["ladder-reset"])
        self.reset.on_click(lambda _e: setattr(self.state, "ladder", list(ARTICLE_ORDER)))
        self.rungs.param.watch(self._on_toggle, "value")
        self.order.param.watch(self._on_order, "value")
        self.table = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width")
        self.points = ColumnDataSource({"x": [], "y": [], "label": [], **unplaced(0)}, name="ladder-points")
        self.arrows = ColumnDataSource({"x_start": [], "y_start": [], "x_end": [], "y_end": []})
        self.roof = ColumnDataSource({"x": [], "y": []})
        # A rung that moves the compute roof (INT4 weight-only from FP8: BF16's) draws the roof it moves to, dashed.
        self.later_roof = ColumnDataSource({"x": [], "y": []}, name="ladder-later-roof")
        self.figure = self._figure()
        self.ladder: Ladder | None = None
        self._key = None
        # What the order box left out, said under it (an attacker's trial: "5,1,5,99,-1,x" became "5,1" silently).
        self.order_note = Message(lambda: pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width",
                                                       css_classes=["ladder-order-note"]))
        controls = pn.FlexBox(self.rungs, self.order, self.reset, align_items="end", sizing_mode="stretch_width")
        self.order_note.place = lambda pane: self.layout.insert(1, pane)
        self.layout = pn.Column(controls,
                                pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"), self.table,
                                serving_inputs(self.state), sizing_mode="stretch_width")
        self.refresh()
        self._on_present()

    def __panel__(self):
        return self.layout

    def _order_text(self) -> str:
        return ",".join(str(NUMBER[r]) for r in self.state.ladder)

    def _on_toggle(self, event) -> None:
        """A rung switched off leaves; one switched on is applied last."""
        on = set(event.new)
        kept = [r for r in self.state.ladder if r in on]
        self.state.ladder = kept + [r for r in ARTICLE_ORDER if r in on and r not in kept]

    def _on_order(self, event) -> None:
        """The order box: rung numbers 1-7 (the article's), separated by commas or spaces; what is not one is
        left out, a repeat counts once."""
        if event.new == self._order_text():
            return  # the box rewritten as the lab writes it (below): what was said of the text typed stays
        by_number = {str(n): r for r, n in NUMBER.items()}
        rungs: list[str] = []
        unknown: list[str] = []
        repeated = False
        for item in str(event.new).replace(",", " ").split():
            rung = by_number.get(item)
            if rung is None:
                unknown.append(item)
            elif rung in rungs:
                repeated = True
            else:
                rungs.append(rung)
        said = []
        if unknown:
            shown = ", ".join(shown_value(item) for item in dict.fromkeys(unknown[:5]))
            said.append(f"Left out {escape(shown)}{', …' if len(set(unknown)) > 5 else ''}: the rungs are 1 to 7.")
        if repeated:
            said.append("A rung given twice counts once.")
        self.order_note.say(f'<div class="warn" data-readout="ladder-order-note">{" ".join(said)}</div>'
                            if said else "")
        self.state.ladder = rungs
        if self.order.value != self._order_text():
            self.order.value = self._order_text()

    def _figure(self):
        fig = figure(height=CHART_HEIGHT, sizing_mode="stretch_width", x_axis_type="log", y_axis_type="log",
                     x_range=(0.5, 1e5), y_range=(0.1, 2e3),
                     x_axis_label="arithmetic intensity I = 2·B·k/p (FLOP/byte, on the weights)",
                     y_axis_label="attainable (TFLOP/s, dense)",
                     # What the table's rates and times are, where a projector shows it: the caption that says so
                     # sat below the fold (a teacher's trial).
                     title="The ladder on the roofline: ceilings, as is every rate and time in the table",
                     toolbar_location=None, tools="", name="ladder-chart",
                     min_border_right=LAST_TICK_ROOM)
        wrap_title(fig)  # a phone's page: the axis titles wrap to the chart's width
        describe_chart(fig, "Ladder chart, log-log: the climb, a point per rung switched on at its arithmetic "
                            "intensity on the weights and its attainable TFLOP/s under the roof, joined by arrows. "
                            "The table gives each rung's figures.")
        fig.line("x", "y", source=self.roof, color=PALETTE["roof"], line_width=2)
        fig.line("x", "y", source=self.later_roof, color=PALETTE["roof"], line_width=2, line_dash="dashed")
        self.ridge = Span(dimension="height", location=1, line_color=PALETTE["roof"], line_dash="dashed")
        fig.add_layout(self.ridge)
        fig.add_layout(Arrow(end=NormalHead(size=9, fill_color=PALETTE["ladder"], line_color=PALETTE["ladder"]),
                             source=self.arrows, x_start="x_start", y_start="y_start", x_end="x_end", y_end="y_end",
                             line_color=PALETTE["ladder"], line_width=2))
        marks = fig.scatter("x", "y", source=self.points, size=9, color=PALETTE["workload"],
                            line_color=PALETTE["text"])
        labels = LabelSet(x="x", y="y", text="label", source=self.points, text_font_size="12px",
                          text_color=PALETTE["text"])
        fig.add_layout(labels)
        # Laid out in the browser, clear of the roof, the arrows and the ridge, a label moved from its point joined
        # to it by a leader (at 18 px the roof's two labels sat a decade left of their points, over the ridge).
        place_labels_in_browser(fig, labels, marks.glyph, "label",
                                lines=[self.roof, self.later_roof, (self.points, "x", "y")], spans=[self.ridge])
        return fig

    @param.depends("state.result", "state.tab", "state.ladder", "state.mix", "state.block_size", watch=True)
    def refresh(self) -> None:
        """Climb again when the scenario, the rungs, the request mix or the block changed and the tab is open."""
        if list(self.rungs.value) != list(self.state.ladder):
            self.rungs.value = list(self.state.ladder)
        if self.order.value != self._order_text():
            self.order.value = self._order_text()
        if self.state.tab != "Ladder":
            return
        start, note = ladder_start(self.state.scenario)
        key = (tuple(sorted(start.levers().items())), repr(start.custom_gpu()), tuple(self.state.ladder),
               self.state.mix, self.state.block_size)
        if key == self._key:
            return
        try:
            ladder = climb_for(start, self.state.ladder, self.state.mix, self.state.block_size)
        except Exception as exc:  # noqa: BLE001 - the tab says why, the session goes on
            self.table.object = f'<div class="caption">The ladder cannot be climbed from here: {escape(str(exc))}</div>'
            self._key = key
            return
        self.ladder, self._key = ladder, key
        data = chart_data(ladder)
        r = ladder.steps[0].result
        roof = roof_xy(r.peak_flop_per_s, r.bandwidth)
        moved = later_roof(ladder)
        peak = max(r.peak_flop_per_s, moved.peak_flop_per_s if moved else 0.0)
        with pn.io.hold():
            self.table.object = ladder_table_html(ladder, note)
            self.points.data = data["points"]
            self.arrows.data = data["arrows"]
            self.roof.data = roof
            self.later_roof.data = (roof_xy(moved.peak_flop_per_s, moved.bandwidth) if moved
                                    else {"x": [], "y": []})
            self.ridge.location = r.ridge_point
            self.figure.x_range.start, self.figure.x_range.end = 0.5, fit_x_end(data["points"]["x"])
            low = min(data["points"]["y"]) / 3
            self.figure.y_range.start = 10 ** math.floor(math.log10(low)) if low > 0 else 0.1
            # A decade over the roof's flat, not two (a teacher's trial: an FP8 roof at 1,979 ran the axis to 10⁵)
            self.figure.y_range.end = 10 ** math.ceil(math.log10(1.5 * peak / TFLOP))

    @param.depends("state.present", watch=True)
    def _on_present(self) -> None:
        present = self.state.present
        present_figure(self.figure, present)
        self.figure.height = PRESENT_CHART_HEIGHT if present else CHART_HEIGHT
        self.table.css_classes = ["present"] if present else []
        # The rungs' buttons, the order box and its reset read 18 px by the page's size; these two widen to hold it.
        self.reset.width = 330 if present else 240  # their labels at 18 px
        self.order.width = 230 if present else 170
