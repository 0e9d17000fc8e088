"""Live readouts: the derivation's quantities (:func:`core.explain.derivation`), each
expandable to its formula with the values substituted and their units ("show your
work").  The same records the command line prints; this module only renders them
as HTML (GB = 1e9 bytes and GiB = 2^30 bytes are both written out by the core)."""

from __future__ import annotations

from html import escape

import panel as pn
import param

from core.coverage import beyond_calibration
from core.expected import ExpectedStep, expected_quantities
from core.explain import Quantity, marked_value, quantities
from core.measured_points import ABOVE_ROOF_CAUSE
from core.scenario import ScenarioResult

from .present import INPUT_TEXT_CSS
from .state import ENGINES, LabState
from .style import live_html

#: The quantities the readouts panel shows, in display order.
#: Whether the scenario fits comes right after its bound: the memory bar is under the chart, below the fold of
#: a 1280 × 720 projector, and the default scenario (70B weights on one 80 GB GPU) does not fit.
READOUT_KEYS = (
    "intensity", "intensity-kv", "ridge", "attainable", "peak-fraction", "attainable-kv", "attainable-comm", "bound",
    "fits", "roof", "weights", "flops", "step-time", "overhead", "tokens", "tokens-no-kv", "ttft", "tpot", "spec",
    "kv-token", "kv-total", "kv-share", "max-batch", "gpus", "weights-gpu", "kv-gpu", "comm-time", "comm-intensity",
    "tokens-aggregate", "smallest-fit", "cost-output", "cost-prompt",
)


def rows(r: ScenarioResult, keys: tuple[str, ...] = READOUT_KEYS) -> list[Quantity]:
    """The readouts of ``r`` named by ``keys``, in that order; a key ``r`` has no quantity for is left out (one GPU
    has no "attainable with communication")."""
    found = quantities(r)
    return [found[key] for key in keys if key in found]


#: Where the expected readouts go: each right after the ceiling readout it predicts.
EXPECTED_AFTER = {"tokens": "expected-tokens", "tokens-aggregate": "expected-tokens-aggregate"}


def _item(x: Quantity, show_work: bool, css: str = "ro", approximate: bool = False) -> str:
    """One readout; ``approximate``: its model has keys the lab did not model, so its value says "≈" where it is
    (a value the model cannot change, one already marked, or one with no figure but zeros, as is)."""
    value = marked_value(x, approximate)
    return (f'<div class="{css}" data-key="{x.key}"><div class="line">'
            f'<span class="q">{escape(x.label)}</span><span class="v" data-readout="{x.key}">{escape(value)}</span>'
            "</div>"
            + (f'<div class="f">{escape(x.formula)}</div><div class="w" data-work="{x.key}">{escape(x.work)}</div>'
               if show_work else "")
            + "</div>")


def readouts_html(r: ScenarioResult, show_work: bool = False, keys: tuple[str, ...] = READOUT_KEYS,
                  expected: ExpectedStep | None = None, expected_error: str = "") -> str:
    """The readouts as HTML, value cells marked ``data-readout=<key>``.

    With ``show_work`` each readout also shows its formula and the same formula
    with this scenario's values and units substituted.  ``keys``: which readouts
    (the offline page shows them all, Step 7's included; ``app/offline_readouts.js``
    writes the same HTML in the browser).  ``expected``: the expected step of ``r``
    (:func:`core.expected.expected_quantities`), shown after the ceiling readouts it
    predicts (:data:`EXPECTED_AFTER`), marked approximate with the model;
    ``expected_error``: why there is none, said in its place.
    """
    extra: dict[str, str] = {}
    if expected is not None:
        for q in expected_quantities(expected, approximate=r.model.approximate, fits=r.fits,
                                     beyond=beyond_calibration(r, expected.engine)):
            extra[q.key] = _item(q, show_work, "ro expected")
    elif expected_error:
        extra["expected-tokens"] = (f'<div class="ro expected" data-key="expected-tokens"><div class="warn" '
                                    f'data-readout="expected-tokens">{escape(expected_error)}</div></div>')
    approximate = bool(r.model.approximate)
    items = "".join(_item(x, show_work, approximate=approximate) + extra.get(EXPECTED_AFTER.get(x.key, ""), "")
                    for x in rows(r, keys))
    warn = "".join(f'<div class="warn">⚠ {escape(w)}</div>' for w in r.warnings)
    return f'<div class="readouts">{items}</div>{warn}'


def result_announcement(r: ScenarioResult) -> str:
    """What a screen reader hears once a move of a lever settles (app/a11y.js, after a second without another): the
    intensity, its share of peak, the bound and the ceiling's tokens/s, as the readouts print them.  An
    accessibility audit moved the batch six times and heard only the slider's value; the readouts were silent."""
    q = quantities(r)
    return (f"Intensity {q['intensity'].value}, {q['peak-fraction'].value} of peak, {q['bound'].value}, "
            f"ceiling {q['tokens'].value}")


def approximate_html(model, key: str = "approximate", see: str = "see what the lab read") -> str:
    """The line that heads a model's numbers when its config has keys the lab did not model
    (:meth:`core.models.ModelSpec.approximate_note`), or ``""``: every number below depends on them.
    ``key``: its ``data-readout`` name; ``see``: where the keys are listed (``""``: the page has no such place)."""
    note = model.approximate_note(see)
    if not note:
        return ""
    return (f'<div class="warn approx" data-readout="{escape(key, quote=True)}">≈ {escape(note[0].upper() + note[1:])}'
            ": every number here leaves them out</div>")


def above_roof_html(measured) -> str:
    """A warning beside the chart when measured points lie above the scenario's roof (measured on another model,
    GPU or precision: the Bring your own tab says so too, but the chart is read here), or ``""``."""
    n = sum(p.above_roof for p in measured)
    if not n:
        return ""
    return (f'<div class="warn" data-readout="measured-above-roof">⚠ {n} measured '
            f"{'point on the chart lies' if n == 1 else 'points on the chart lie'} above this roof: "
            f"{escape(ABOVE_ROOF_CAUSE)}</div>")


class ReadoutsView(pn.viewable.Viewer):
    """The readouts panel, following the session's result and its "show your work" switch."""

    state = param.ClassSelector(class_=LabState, doc="The session state it follows.")

    def __init__(self, **params):
        super().__init__(**params)
        self.pane = live_html()
        self._shown = pn.pane.Bokeh(self.pane, sizing_mode="stretch_width")
        self.show_work = pn.widgets.Checkbox.from_param(self.state.param.show_work,
                                                        name="Show your work (formulas with values)",
                                                        css_classes=["show-work"])
        # The expected step's preset: view state (in the link as ?engine=), not a lever of the scenario.
        self.engine = pn.widgets.Select.from_param(self.state.param.engine, name="Engine preset (expected step)",
                                                   options=list(ENGINES), css_classes=["engine"],
                                                   stylesheets=[INPUT_TEXT_CSS], sizing_mode="stretch_width")
        self._readouts = ""
        self._refresh()

    def __panel__(self):
        # At most 380 px, less on a phone-width page (nothing is cut off at 360 px).
        return pn.Column("### Readouts", self.show_work, self.engine,
                         self._shown, max_width=380, min_width=0,
                         sizing_mode="stretch_width", styles={"flex": "1 1 300px"})

    @param.depends("state.result", "state.expected", "state.show_work", watch=True)
    def _refresh(self) -> None:
        s = self.state
        said = (f'<div hidden data-announce-key="result" data-announce-settle="1000" '
                f'data-announce="{escape(result_announcement(s.result))}"></div>')
        self._readouts = approximate_html(s.result.model) + readouts_html(
            s.result, s.show_work, expected=s.expected, expected_error=s.expected_error) + said
        self._on_measured()

    @param.depends("state.measured", watch=True)
    def _on_measured(self) -> None:
        # The measurements are scored again after each move (LabState._analyse): the readouts are not rebuilt for it.
        # The warning heads them, on screen beside the chart (after the thirty readouts it was below the fold).
        # Held: a click's callback (Plot measurements) runs outside the document's lock, where only a held document
        # may change; unheld, Bokeh raised, no table came, and every later plot failed (an engineer's trial).
        with pn.io.hold():
            self.pane.text = above_roof_html(self.state.measured) + self._readouts
