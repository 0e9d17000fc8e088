"""Controls generated from the lever table (:data:`core.scenario.LEVERS`).

One widget per lever, its kind read from the lever's parameter: a Boolean gets a
checkbox, a Selector a select (its options follow the parameter's, so a pasted
model or a custom GPU appears in the list), a lever with stops a slider over its
stops (on the full page with a box beside it for an exact value), any other
number a slider over its soft bounds (in the lever's edge unit: the reserve is
GiB at the edge, bytes inside).  Labels, docs (the widget's
tooltip), bounds, soft bounds and steps come from the table; every widget gets
the lever's CSS class.  Nothing here restates a bound or a default.

The widgets are plain Panel widgets linked to the scenario both ways, not a
``pn.Param`` panel: each session builds them, and ``pn.Param``'s machinery and
Panel's ``DiscreteSlider`` (a composite of three Bokeh models) cost a class of a
hundred students about twice the server time (``benchmarks/load_test.py --profile``).
"""

from __future__ import annotations

import panel as pn
import param
from bokeh.models import CustomJS, CustomJSTickFormatter

from core.levers import Lever
from core.scenario import LEVERS, Scenario
from core.units import fmt_count

from .notifications import notice_html
from .present import CARD_HEADER_CSS, INPUT_TEXT_CSS

#: Shown as a stop slider's value: the label of the stop at the slider's (index) position.
STOP_LABEL_JS = "const s = labels[Math.round(tick)]; return s === undefined ? '' : s"
#: Redraws the title of the slider whose labels changed (a value set elsewhere became a stop).  BokehJS redraws a
#: slider's title when its value changes, not when its formatter's ``args`` do, and the server's messages can
#: bring the new value before the new labels: the title then read the old stop at the new index ("Batch B: 64"
#: for a typed 59) until the next move.  Both switches are the browser's own (not sent back).
RETITLE_JS = """
for (const m of cb_obj.document.all_models) {
  if (m.format === cb_obj && "show_value" in m) {
    const shown = m.show_value;
    m.setv({show_value: !shown}, {sync: false});
    m.setv({show_value: shown}, {sync: false});
  }
}
"""


def stop_label(value: int) -> str:
    """A slider stop as text, with thousands separators ("8,192"): as the exact box beside it, the chart's title and
    the offline page's sliders write it ("8k" on the lab against "8,192" on the offline page read as two values)."""
    return fmt_count(value)


def build_controls(scenario: Scenario, parameters: list[str] | None = None, compact: bool = False) -> pn.Column:
    """The controls for ``scenario`` (widgets stay linked to it both ways).

    Args:
        parameters: which levers, in table order (default: all of them).
        compact: one horizontal strip of narrow widgets (embed mode).
    """
    names = [name for name in LEVERS.names if name in (parameters or LEVERS.names)]
    if compact:
        return pn.FlexBox(*(lever_widget(scenario, LEVERS[name], compact) for name in names),
                          sizing_mode="stretch_width")
    more = [name for name in names if LEVERS[name].more]
    widgets = [lever_control(scenario, LEVERS[name]) for name in names if name not in more]
    return pn.Column(*widgets, *([MoreLevers(scenario, more).card] if more else []), sizing_mode="stretch_width")


class MoreLevers:
    """The levers marked ``more`` in the table, in a section that is built when first opened.

    Most sessions never open it (a class of a hundred pays for its widgets only where
    someone does); it opens itself whenever one of its levers leaves its default — a
    link, a tour step, the "use TP = 2" suggestion — so a lever in play is never hidden.

    Attributes:
        card: the collapsible section (CSS class ``more-levers``).
    """

    def __init__(self, scenario: Scenario, names: list[str]):
        self.scenario, self.names = scenario, names
        self.card = pn.Card(title=f"More levers ({len(names)})", collapsed=True, sizing_mode="stretch_width",
                            margin=(5, 0), css_classes=["more-levers"], stylesheets=[CARD_HEADER_CSS])
        self.card.param.watch(lambda _e: self._build(), "collapsed")
        scenario.param.watch(lambda *_events: self._open_if_moved(), names)
        self._open_if_moved()

    def _open_if_moved(self) -> None:
        if any(getattr(self.scenario, n) != LEVERS[n].default for n in self.names):
            self.card.collapsed = False

    def _build(self) -> None:
        if not self.card.collapsed and not self.card.objects:
            self.card.objects = [lever_control(self.scenario, LEVERS[n]) for n in self.names]


def lever_widgets(controls: pn.viewable.Viewable) -> dict[str, pn.widgets.Widget]:
    """The lever widgets in ``controls`` (as built by :func:`build_controls`), by lever name."""
    return {w.lever: w for w in controls.select(pn.widgets.Widget) if hasattr(w, "lever")}


def lever_control(scenario: Scenario, lever: Lever) -> pn.viewable.Viewable:
    """What the full page shows for one lever: its widget, and beside a stop slider the box its exact value is
    typed in (:attr:`StopSlider.exact`), the two in one row (two Bokeh models more per stop lever)."""
    widget = lever_widget(scenario, lever)
    exact = getattr(getattr(widget, "stops", None), "exact", None)
    if exact is None:
        return widget
    return pn.Row(widget, exact, sizing_mode="stretch_width", margin=0, css_classes=[f"{lever.css}-row"])


def lever_widget(scenario: Scenario, lever: Lever, compact: bool = False) -> pn.widgets.Widget:
    """The widget for one lever of ``scenario``, linked to it both ways.

    Its ``lever`` attribute names the row it came from (the served page's instant redraw reads it).
    """
    p = scenario.param[lever.name]
    size = {"width": 150} if compact else {"sizing_mode": "stretch_width"}
    common = dict(label=lever.label, css_classes=[lever.css], **size)
    if isinstance(p, param.Boolean):
        widget = _linked(pn.widgets.Checkbox(value=getattr(scenario, lever.name), **common), scenario, lever)
    elif isinstance(p, param.Selector):
        widget = _select(scenario, lever, common)
    elif lever.stops:
        widget = StopSlider(scenario, lever, common, exact=not compact).widget
    else:
        widget = _slider(scenario, lever, common)
    widget.lever = lever.name
    return widget


def write_lever(scenario: Scenario, lever: Lever, value, restore) -> None:
    """Set ``lever`` from its widget; a value the lever refuses leaves the scenario as it was and ``restore()``
    puts the widget back on it.

    The page sends what it likes over the websocket (a crafted message can carry batch index 999 or k = 10^30):
    the parameter's bounds are the refusal, and neither a traceback nor a silently wrapped value follows.
    """
    try:
        setattr(scenario, lever.name, value)
    except (ValueError, TypeError, IndexError):
        restore()


def _linked(widget: pn.widgets.Widget, scenario: Scenario, lever: Lever) -> pn.widgets.Widget:
    widget.param.watch(lambda e: write_lever(scenario, lever, e.new,
                                             lambda: setattr(widget, "value", getattr(scenario, lever.name))),
                       "value")
    scenario.param.watch(lambda e: setattr(widget, "value", e.new), lever.name)
    return widget


def _options(p: param.Selector):
    return dict(p.names) if p.names else list(p.objects)


def _select(scenario: Scenario, lever: Lever, common: dict) -> pn.widgets.Select:
    p = scenario.param[lever.name]
    # A select shows the lever's doc as its tooltip (Panel's sliders and checkboxes have none).
    widget = _linked(pn.widgets.Select(options=_options(p), value=getattr(scenario, lever.name), description=p.doc,
                                       stylesheets=[INPUT_TEXT_CSS], **common), scenario, lever)

    def offer(_event) -> None:
        # The session's catalogue grew (a pasted model, a custom GPU): offer it before it is selected.
        widget.param.update(options=_options(scenario.param[lever.name]), value=getattr(scenario, lever.name))

    scenario.param.watch(offer, lever.name, what="objects")
    return widget


def _slider(scenario: Scenario, lever: Lever, common: dict) -> pn.widgets.Widget:
    """A slider over the soft bounds, in the lever's edge unit (``value × scale`` is the SI value).

    A value beyond the soft bounds (set by a link or the command line) widens the
    slider rather than being clamped: the widget never rewrites the model.
    """
    p = scenario.param[lever.name]
    lo, hi = p.get_soft_bounds()
    integer = isinstance(p, param.Integer) and lever.scale == 1
    value = getattr(scenario, lever.name) if integer else getattr(scenario, lever.name) / lever.scale
    if integer:
        widget = pn.widgets.IntSlider(start=lo, end=max(hi, value), step=p.step or 1, value=value, **common)
    else:
        widget = pn.widgets.FloatSlider(start=lo / lever.scale, end=max(hi / lever.scale, value),
                                        step=(p.step or lever.scale) / lever.scale, value=value, **common)
    kind = int if isinstance(p, param.Integer) else float
    def show(value) -> None:
        shown = value if integer else value / lever.scale
        widget.param.update(end=max(widget.end, shown), value=shown)

    widget.param.watch(lambda e: write_lever(scenario, lever, kind(e.new * lever.scale),
                                             lambda: show(getattr(scenario, lever.name))), "value")
    scenario.param.watch(lambda e: show(e.new), lever.name)
    return widget


class StopSlider:
    """A slider over a lever's stops (batch 1, 2, 3, 4, 5, 6, 8, 12, …), shown by their labels.

    One Bokeh slider over the stop *indices* with a tick formatter that shows the
    stop, so a drag from 1 to 4 is a short move, not a pixel.  A scenario value set
    elsewhere (the command line, a tour step, a link, the exact box) that is not a
    stop becomes one, so the slider never silently disagrees with the model.

    The stops cannot reach every value (article 000's B = 59 lies between 56 and 64): beside
    the slider a small number box (``exact``) takes any value the lever accepts, typed and
    set with Enter or by leaving the box.  A value outside the lever's bounds is refused:
    the model keeps its value, the box goes back to it, and the refusal names the range
    (``refusal``; a served page shows it as a notice).

    Attributes:
        widget: the ``IntSlider`` (value: an index into ``values``).
        values: the stops, ascending, as the lever's values.
        exact: the ``FloatInput`` (CSS class ``<lever>-exact``), or None (``exact=False``: the embed's strip).
        refusal: the last typed value refused, in words ("" when none).
    """

    def __init__(self, scenario: Scenario, lever: Lever, common: dict, exact: bool = True):
        self.scenario, self.lever = scenario, lever
        self.refusal = ""
        value = getattr(scenario, lever.name)
        self.values = sorted({*lever.stops, value})
        self.formatter = CustomJSTickFormatter(args={"labels": [stop_label(v) for v in self.values]},
                                               code=STOP_LABEL_JS)
        self.formatter.js_on_change("args", CustomJS(code=RETITLE_JS))
        self.widget = pn.widgets.IntSlider(start=0, end=len(self.values) - 1, value=self.values.index(value),
                                           format=self.formatter, **common)
        self.widget.stops = self  # what tests and the instant redraw read
        self.widget.param.watch(lambda e: write_lever(scenario, lever, self.value_at(e.new), self.restore), "value")
        self.exact = None
        if exact:
            p = scenario.param[lever.name]
            # No start or end on the box: BokehJS would clamp a typed 70,000 to the end in silence.
            # Named after the lever's symbol ("exact B"), or its first word where it has none ("exact prompt"): two
            # boxes both named "exact" read alike to a screen reader.
            name = lever.symbol or lever.label.split()[0].lower()
            # A number box, not a whole-number one: BokehJS's drops a typed "." (1.5 became 15 in silence); the
            # lever refuses 1.5 by name.
            self.exact = pn.widgets.FloatInput(label=f"exact {name}", value=value, width=92,
                                             margin=(5, 5, 5, 0),
                                             description=f"Type an exact {lever.label}: {lever.accepted(p)}; "
                                                         "Enter sets it.",
                                             css_classes=[f"{lever.css}-exact"], stylesheets=[INPUT_TEXT_CSS])
            self.exact.param.watch(lambda e: self.type(e.new), "value")
        scenario.param.watch(lambda e: self.admit(e.new), lever.name)

    def value_at(self, index: int):
        """The stop at slider position ``index``; None (which the lever refuses) off the ends."""
        return self.values[index] if 0 <= index < len(self.values) else None

    def restore(self) -> None:
        value = getattr(self.scenario, self.lever.name)
        self.widget.value = self.values.index(value)
        if self.exact is not None:
            self.exact.value = value

    def type(self, value) -> None:
        """Set the lever to the value typed in the box, or refuse it naming the lever's range."""
        if value is None or value == getattr(self.scenario, self.lever.name):  # emptied, or the model's own value
            self.restore()
            return
        p = self.scenario.param[self.lever.name]
        value = typed_number(value, isinstance(p, param.Integer))
        try:
            value = self.lever.decode(str(value), p)
        except ValueError:
            self.refusal = f"{self.lever.label}: {shown_typed(value)} refused; type {self.lever.accepted(p)}."
            notify_refusal(self.refusal)
            self.restore()
            return
        self.refusal = ""
        write_lever(self.scenario, self.lever, value, self.restore)

    def admit(self, value: int) -> None:
        if value not in self.values:
            self.values = sorted({*self.values, value})
            self.formatter.args = {"labels": [stop_label(v) for v in self.values]}
            self.widget.end = len(self.values) - 1
        self.widget.value = self.values.index(value)
        if self.exact is not None:
            self.exact.value = value


def typed_number(value, whole: bool):
    """A number box's value as the parameter takes it: a whole float (``59.0``) as an int where the parameter is
    whole, anything else as it came (``1.5`` is then refused by the parameter's own check)."""
    return int(value) if whole and isinstance(value, float) and value.is_integer() else value


def shown_typed(value) -> str:
    """A typed number as a refusal quotes it: with thousands separators, cut after 20 characters ("…")."""
    if isinstance(value, int):
        return f"{value:,}" if len(str(value)) <= 20 else str(value)[:20] + "…"
    text = f"{value:,.6g}" if isinstance(value, float) else str(value)
    return text if len(text) <= 20 else text[:20] + "…"


def number_box(owner: param.Parameterized, name: str, **widget) -> pn.widgets.FloatInput:
    """A box to type parameter ``name`` of ``owner`` in, linked to it both ways, its number written with thousands
    separators.

    A number box, not a whole-number one, even for an Integer: BokehJS's whole-number box drops a typed "." and
    "1.5" became 15 in silence (a teacher's trial).  A value the parameter refuses (out of its bounds, or not whole
    where it must be) is refused with a notice naming what it takes, and the box goes back to the value in use
    (BokehJS leaves what was typed in the box); emptied, it goes back without a notice.

    Args:
        widget: the widget's other settings (``label``, ``width``, ``css_classes``, …).
    """
    p = owner.param[name]
    whole = isinstance(p, param.Integer)
    box = pn.widgets.FloatInput(value=getattr(owner, name), format="0,0", **widget)

    def typed(event) -> None:
        if event.new == getattr(owner, name):
            return
        try:
            if event.new is None:
                raise ValueError("emptied")
            setattr(owner, name, typed_number(event.new, whole))
        except (ValueError, TypeError):
            if event.new is not None:
                lo, hi = p.bounds or (None, None)
                kind = "a whole number" if whole else "a number"
                span = f" from {lo:,.0f} to {hi:,.0f}" if lo is not None and hi is not None else ""
                notify_refusal(f"{box.label}: {shown_typed(event.new)} refused; type {kind}{span}.")
            box.value = getattr(owner, name)

    box.param.watch(typed, "value")
    owner.param.watch(lambda e: setattr(box, "value", e.new), name)
    return box


def notify_refusal(text: str) -> None:
    """Show ``text`` as an error notice on this session's page (Panel's notification area; no-op without one)."""
    area = pn.state.notifications if pn.state.curdoc is not None else None
    if area is not None:
        area.error(notice_html(text), duration=8000)
