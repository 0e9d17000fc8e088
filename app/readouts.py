"""Live readouts: the derivation's quantities (:func:`core.explain.derivation`), each
expandable to its formula with the values substituted and their units ("show your
work").  The same records the command line prints; this module only renders them
as HTML (GB = 1e9 bytes and GiB = 2^30 bytes are both written out by the core)."""

from __future__ import annotations

from html import escape

import panel as pn
import param

from core.explain import Quantity, quantities
from core.scenario import ScenarioResult

from .state import LabState
from .style import STYLESHEET

#: The quantities the readouts panel shows, in display order.
READOUT_KEYS = (
    "intensity", "intensity-kv", "ridge", "attainable", "peak-fraction", "attainable-kv", "bound", "roof",
    "weights", "flops", "step-time", "overhead", "tokens", "tokens-no-kv", "ttft", "tpot", "spec", "kv-token",
    "kv-total", "kv-share", "fits", "max-batch", "gpus", "weights-gpu", "kv-gpu", "comm-time", "comm-intensity",
    "tokens-aggregate", "smallest-fit", "cost-output", "cost-prompt",
)


def rows(r: ScenarioResult, keys: tuple[str, ...] = READOUT_KEYS) -> list[Quantity]:
    """The readouts of ``r`` named by ``keys``, in that order."""
    found = quantities(r)
    return [found[key] for key in keys]


def readouts_html(r: ScenarioResult, show_work: bool = False, keys: tuple[str, ...] = READOUT_KEYS) -> str:
    """The readouts as HTML, value cells marked ``data-readout=<key>``.

    With ``show_work`` each readout also shows its formula and the same formula
    with this scenario's values and units substituted.  ``keys``: which readouts
    (the offline page, one GPU, shows fewer; ``app/offline_readouts.js`` writes
    the same HTML in the browser).
    """
    items = "".join(
        f'<div class="ro" data-key="{x.key}"><div class="line">'
        f'<span class="q">{escape(x.label)}</span><span class="v" data-readout="{x.key}">{escape(x.value)}</span>'
        "</div>"
        + (f'<div class="f">{escape(x.formula)}</div><div class="w" data-work="{x.key}">{escape(x.work)}</div>'
           if show_work else "")
        + "</div>"
        for x in rows(r, keys)
    )
    warn = "".join(f'<div class="warn">⚠ {escape(w)}</div>' for w in r.warnings)
    return f'<div class="readouts">{items}</div>{warn}'


def approximate_html(model, key: str = "approximate") -> str:
    """The line that heads a model's numbers when its config has keys the lab did not model
    (:meth:`core.models.ModelSpec.approximate_note`), or ``""``: every number below depends on them.
    ``key``: its ``data-readout`` name."""
    note = model.approximate_note()
    if not note:
        return ""
    return (f'<div class="warn approx" data-readout="{escape(key, quote=True)}">≈ {escape(note[0].upper() + note[1:])}'
            ": every number here assumes they change nothing</div>")


class ReadoutsView(pn.viewable.Viewer):
    """The readouts panel, following the session's result and its "show your work" switch."""

    state = param.ClassSelector(class_=LabState, doc="The session state it follows.")

    def __init__(self, **params):
        super().__init__(**params)
        self.pane = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width")
        self.show_work = pn.widgets.Checkbox.from_param(self.state.param.show_work,
                                                        name="Show your work (formulas with values)",
                                                        css_classes=["show-work"])
        self._refresh()

    def __panel__(self):
        # At most 380 px, less on a phone-width page (nothing is cut off at 360 px).
        return pn.Column("### Readouts", self.show_work, self.pane, max_width=380, min_width=0,
                         sizing_mode="stretch_width", styles={"flex": "1 1 300px"})

    @param.depends("state.result", "state.show_work", watch=True)
    def _refresh(self) -> None:
        r = self.state.result
        self.pane.object = approximate_html(r.model) + readouts_html(r, self.state.show_work)
