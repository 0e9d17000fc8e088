"""One session's state: the scenario and everything the views read, as parameters.

Views are ``pn.viewable.Viewer`` s that depend on these parameters
(``@param.depends("state.result", watch=True)``); nothing pushes to a view by
hand.  Controls, the tour, a permalink and the bring-your-own forms write the
:class:`core.Scenario` (or :attr:`LabState.pins`, :attr:`LabState.measurements`);
the state evaluates the scenario once per change and every view that depends on
:attr:`LabState.result` redraws itself.
"""

from __future__ import annotations

import panel as pn
import param

from core.batching import MIXES
from core.expected import ExpectedStep, engine_names, expected_step
from core.ladder import ARTICLE_ORDER
from core.measured_points import MeasuredPoint, Measurement, analyse
from core.paging import BLOCK_SIZE
from core.pins import MAX_PINS, Pin, PinRow, compare
from core.scenario import LEVERS, Scenario, ScenarioResult

#: The view tabs, by name, in order.
TABS = ("Roofline", "Expected", "Throughput vs B", "Scaling", "Compare", "Traffic", "KV table", "Speculation",
        "Ladder", "Serving", "Pins", "Hardware", "Bring your own", "Export")
#: The engine presets of the expected step (``core/efficiency.json``): "generic" first, the lab's default.
ENGINES = ("generic", *engine_names())
#: Pin sets kept for undo.
UNDO_DEPTH = 20


class LabState(param.Parameterized):
    """A session's scenario, its result, pins and measurements, and what the page shows.

    Args:
        scenario: the scenario (its catalogue holds the session's own models and GPUs).
    """

    scenario = param.ClassSelector(class_=Scenario, doc="The levers and the session catalogue.")
    result = param.ClassSelector(class_=ScenarioResult, doc="The scenario evaluated; replaced on every change.")
    error = param.String(default="", doc="Why the last change could not be evaluated ('' when it could).")
    pins = param.List(default=[], item_type=Pin, doc=f"Pinned scenarios (at most {MAX_PINS}).")
    pin_rows = param.List(default=[], item_type=PinRow, doc="The pins, evaluated and compared.")
    measurements = param.List(default=[], item_type=Measurement, doc="Measured decode points (bring your own).")
    measurement_problems = param.List(default=[], item_type=str, doc="CSV rows refused, with the reason.")
    measured = param.List(default=[], item_type=MeasuredPoint, doc="The measurements against the current roof.")
    tab = param.Selector(default=TABS[0], objects=list(TABS), doc="The open view tab, by name.")
    came_from = param.Selector(default=TABS[0], objects=list(TABS),
                               doc="The tab open before the current one (the Export tab's copied link carries it).")
    ladder = param.List(default=list(ARTICLE_ORDER), item_type=str,
                        doc="The Ladder tab's rungs, by id, in the order applied (core.ladder); ?ladder= in a link.")
    mix = param.Selector(default="sharegpt", objects=list(MIXES),
                         doc="The request mix of the Ladder and Serving tabs (core.batching.MIXES); ?mix= in a link.")
    block_size = param.Integer(default=BLOCK_SIZE, bounds=(1, 1024),
                               doc="PagedAttention's block, tokens (Ladder and Serving tabs); ?block-size= in a link.")
    show_work = param.Boolean(default=False, doc="Readouts show their formulas with values.")
    band = param.Boolean(default=False, doc="The roofline shows the expected point with its spread (?band=true).")
    engine = param.Selector(default=ENGINES[0], objects=list(ENGINES),
                            doc="The engine preset of the expected step (?engine=vLLM); view state, not a lever.")
    expected = param.ClassSelector(class_=ExpectedStep, default=None, allow_None=True,
                                   doc="The expected step of the result under the engine (None: could not be "
                                       "computed; expected_error says why).")
    expected_error = param.String(default="", doc="Why the expected step could not be computed ('' when it could).")
    embed = param.Boolean(default=False, doc="?embed=true: the compact layout for an iframe.")
    present = param.Boolean(default=False, doc="?present=true: large text, thick lines, for a projector.")
    tour_step = param.Integer(default=None, allow_None=True, bounds=(1, None),
                              doc="The tour's step shown, 1-based (None: not touring); ?tour=5 in a link.")
    pin_undo = param.List(default=[], doc="Earlier pin sets (lists of Pin), newest last, for undo.")
    notices = param.List(default=[], item_type=str, doc="What the opening link could not apply, and why.")
    configs = param.Dict(default={}, doc="The config.json text (minified) of each model read in this session, by "
                         "model id: what a link (config=) or a scenario file carries for it.")

    def __init__(self, scenario: Scenario | None = None, **params):
        scenario = scenario or Scenario()
        super().__init__(scenario=scenario, result=scenario.evaluate(), **params)
        self.param.update(**self._expect(self.result))
        scenario.param.watch(self._evaluate, [*LEVERS.names, "catalogue"])
        self.param.watch(lambda e: setattr(self, "came_from", e.old), "tab")  # before any view's watcher of the tab

    @property
    def engine_preset(self) -> str | None:
        """The session's engine preset as :mod:`core.expected` takes it: None for the generic engine."""
        return None if self.engine == "generic" else self.engine

    def _expect(self, result: ScenarioResult) -> dict:
        """``expected`` and ``expected_error`` for ``result`` under the session's engine preset (an embedded page,
        without readouts or the Expected tab, computes none unless its link shows the expected point)."""
        if self.embed and not self.band:
            return {"expected": None, "expected_error": ""}
        try:
            e = expected_step(result, self.engine_preset)
        except Exception as exc:  # noqa: BLE001 - a model or GPU the expected step cannot read keeps the ceiling
            return {"expected": None, "expected_error": f"no expected step for this scenario: {exc}"}
        return {"expected": e, "expected_error": ""}

    @param.depends("engine", "band", watch=True)
    def _on_engine(self) -> None:
        with pn.io.hold():
            self.param.update(**self._expect(self.result))

    def _evaluate(self, *_events) -> None:
        # A failure shows a message and keeps the last good result: no traceback
        # reaches the page, and nothing already shown is lost.
        try:
            result = self.scenario.evaluate()
        except Exception as exc:  # noqa: BLE001 - any failure must stay off the page
            self.error = f"Could not evaluate this scenario: {exc}"
            return
        # One message to the browser for every view's update: the chart, readouts and
        # memory bar never show two different scenarios at once.
        with pn.io.hold():
            self.param.update(error="", result=result, **self._expect(result))

    @param.depends("pins", "scenario.catalogue", watch=True, on_init=True)
    def _compare_pins(self) -> None:
        self.pin_rows = compare(self.pins, self.scenario.catalogue)

    @param.depends("measurements", "result", watch=True)
    def _analyse(self) -> None:
        self.measured = analyse(self.scenario, self.measurements) if self.measurements else []

    def add_pin(self, pin: Pin) -> bool:
        """Pin ``pin``; False (nothing changes) when :data:`MAX_PINS` are pinned."""
        if len(self.pins) >= MAX_PINS:
            return False
        self.set_pins([*self.pins, pin])
        return True

    def set_pins(self, pins: list[Pin]) -> list[Pin]:
        """Replace the pins (at most :data:`MAX_PINS` kept), remembering the old set for :meth:`undo_pins`.

        Returns:
            the pins that did not fit (beyond :data:`MAX_PINS`), or [].
        """
        pins = list(pins)
        if pins != self.pins:
            self.pin_undo = [*self.pin_undo, list(self.pins)][-UNDO_DEPTH:]
            self.pins = pins[:MAX_PINS]
        return pins[MAX_PINS:]

    def undo_pins(self) -> bool:
        """Restore the pin set before the last change; False when there is nothing to undo."""
        if not self.pin_undo:
            return False
        *rest, last = self.pin_undo
        self.pins = last
        self.pin_undo = rest
        return True
