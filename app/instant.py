"""Instant redraw: the served roofline answers a slider in the browser, before the server does.

A moved lever reaches the server over the websocket; the server re-evaluates the
scenario and sends the new chart data back.  Under a class of students that round
trip grows to hundreds of milliseconds.  This module gives the served page the
offline page's browser-side model (``app/step.js``: core's step on the same profile,
parity-tested): when a lever the model covers moves in the browser (batch,
speculation depth, context, weight and KV precision, GQA), one CustomJS callback
redraws the points, the ladders, the roofs, the ridge and the overhead ceiling at
once (``app/instant.js``), and the server's own update, which follows, agrees with
it.  :class:`InstantLevers`, a Panel ``JSComponent`` in the page, connects the
widgets' browser-side models to that callback (``app/instant_levers.js``).

What the browser needs (the model's shape, the GPU's roofs, the slider stops) the
server keeps in one small ``ColumnDataSource`` (``holder``), refreshed when the
model, the GPU or another lever the browser does not model changes.  Outside one GPU
decoding (TP, PP, EP or replicas above 1, or prefill) the browser leaves the chart
to the server: ``on`` is false.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from pathlib import Path

import panel as pn
import param
from bokeh.models import CustomJS
from panel.custom import JSComponent

from core.scenario import ONE_GPU, Scenario, ScenarioResult

from .roofline_view import X_FAR, X_MARGIN, X_RANGE, Y_MARGIN, Y_RANGE, RooflineView
from .standalone import FIT_SCRIPT, MODEL_SCRIPT, constants
from .state import LabState

SCRIPT = Path(__file__).with_name("instant.js")
LEVERS_SCRIPT = Path(__file__).with_name("instant_levers.js")
#: Read once per process, not per session: the redraw (the model, then the update) and a
#: widget's own callback.
REDRAW_CODE = "\n".join(path.read_text(encoding="utf-8") for path in (MODEL_SCRIPT, FIT_SCRIPT, SCRIPT))

#: The levers the browser-side model redraws for, by the name of their argument in ``instant.js``.
INSTANT_LEVERS = {"batch": "batch", "spec_k": "spec_k", "context": "context", "weight_dtype": "weight",
                  "kv_dtype": "kv", "gqa": "gqa"}
#: Levers that must hold these values for the browser's model (one GPU, decode) to be the server's.
ONE_GPU_DECODE = {"phase": "decode", **dict.fromkeys(ONE_GPU, 1)}
#: The browser's constants as sent, by :meth:`InstantRedraw.refresh`'s key: every session of a class opens on the
#: same scenario, and its constants cost ~15 ms to work out (about a twentieth of a session); a pasted model's are
#: made in the worker that reads it (:meth:`InstantRedraw.prepare`).  ``(model and GPU, or None, JSON)``.
_SENT: OrderedDict[tuple, tuple] = OrderedDict()
_SENT_MAX = 64
_SENT_LOCK = threading.Lock()


def browser_state(state: LabState | Scenario, widgets: dict[str, pn.widgets.Widget], result: ScenarioResult) -> dict:
    """What ``instant.js`` reads: whether it may redraw, the constants, the stops, the levers it has no widget for.

    Args:
        state: the session state, or its scenario.
        widgets: lever name -> its widget (stop sliders carry their stops).
    """
    s = state if isinstance(state, Scenario) else state.scenario
    on = all(getattr(s, name) == value for name, value in ONE_GPU_DECODE.items())
    stops = {name: list(widgets[name].stops.values) if name in widgets else [getattr(s, name)]
             for name in ("batch", "context")}
    return {
        "on": on,
        "c": constants(s, result) if on else None,
        "stops": stops,
        # A select shows labels ("FP8"); the model's ids ("fp8") are looked up here.
        "options": {name: dict(widgets[name].options) for name in ("weight_dtype", "kv_dtype")
                    if name in widgets and isinstance(widgets[name].options, dict)},
        # Only levers without a widget on the page (embed mode has no KV-precision select): the JSON, and so
        # the message, changes only when a constant does, not on every move.
        "current": {name: getattr(s, name) for name in INSTANT_LEVERS if name not in widgets},
        "launch_s": result.launch_overhead_s,
        "x0": X_RANGE[0], "x_end": X_RANGE[1], "x_far": X_FAR, "y0": Y_RANGE[0], "y_end": Y_RANGE[1],
        "y_margin": Y_MARGIN, "x_margin": X_MARGIN,
    }


class InstantLevers(JSComponent):
    """No element of its own: in the browser it runs the session's redraw callback when a wired lever's widget
    moves (``app/instant_levers.js``).

    Its script finds the widgets' Bokeh models by CSS class and the callback by name, and finds them again when
    the page's layout changes.  (Panel's ``widget.jscallback`` does the same job, but a page with one makes Panel
    walk every model of the page on each layout change, a tab's first opening included.)
    """

    levers = param.Dict(default={}, doc="The wired levers: argument name in ``instant.js`` -> the CSS class of "
                                        "its widget.")

    _esm = LEVERS_SCRIPT.read_text(encoding="utf-8")


class InstantRedraw:
    """Wires ``widgets`` to redraw ``roofline`` in the browser, and keeps the browser's constants current.

    Args:
        state: the session state (its scenario and result).
        roofline: the session's roofline view (its sources are redrawn).
        widgets: the lever widgets on the page, by lever name (those of :data:`INSTANT_LEVERS` are wired).
    """

    def __init__(self, state: LabState, roofline: RooflineView, widgets: dict[str, pn.widgets.Widget]):
        self.state, self.widgets, self.roofline = state, widgets, roofline
        # c: the constants (JSON); shown: whether the chart is on the page (the browser redraws only then).
        self.holder = roofline.new_source(data={"c": [""], "shown": [roofline.shown]}, name="instant-constants")
        self._key = None
        self._levers_key = None
        self.refresh()
        state.param.watch(lambda _e: self.refresh(), "result")
        state.param.watch(lambda _e: self._on_shown(), "tab")
        for widget in widgets.values():
            if hasattr(widget, "stops"):  # a value set elsewhere became a stop (after the result, or before)
                widget.param.watch(lambda _e: self.refresh(), "end")
        view = roofline
        args = {
            "holder": self.holder, "ladder": view.ladder, "kv_ladder": view.kv_ladder, "point": view.point,
            "point_kv": view.point_kv, "roof": view.roof, "sparse": view.sparse_roof, "ridge": view.ridge,
            "span": view.ridge_span, "overhead": view.overhead, "x_range": view.figure.x_range,
            # The y range's other sources (pins, measurements, the other phase, a datasheet twin) are looked up by
            # name in the browser (instant.js): an argument here would keep them in the document while the Roofline
            # tab is closed, where a pin renamed on the Pins tab then changed a model outside the session's lock
            # (a RuntimeError, the rename lost).
            "y_range": view.figure.y_range,
            "y_sources": [view.roof, view.sparse_roof, view.point, view.point_kv, view.ladder, view.kv_ladder],
        }
        # One redraw callback per session, its code sent once; the page's InstantLevers runs it on a lever's move.
        redraw = CustomJS(args=args, code=REDRAW_CODE, name="instant-redraw")
        wired = {arg: widgets[name] for name, arg in INSTANT_LEVERS.items() if name in widgets}
        for arg, widget in wired.items():
            widget.css_classes = [*widget.css_classes, f"instant-{arg}"]
        #: What the page must hold for the browser to redraw (no room taken).
        self.hook = InstantLevers(levers={arg: f"instant-{arg}" for arg in wired}, width=0, height=0, margin=0)
        # A server update for an older lever state, landing after the browser drew a newer one, and new
        # constants (another model or GPU): the browser redraws what its widgets say.
        view.point.js_on_change("data", redraw)
        self.holder.js_on_change("data", redraw)

    def _on_shown(self) -> None:
        """Tell the browser whether the chart is on the page: a hidden chart is not redrawn on a lever's move."""
        shown = self.roofline.shown
        if self.holder.data["shown"][0] != shown:
            self.holder.patch({"shown": [(0, shown)]})

    def refresh(self) -> None:
        """Send the browser its constants again when they changed (a new model, GPU, reserve, stops, …).

        The constants do not depend on the levers the browser moves (that is what lets it move them), so a
        move of one of those changes nothing here and costs a comparison, not a rebuild.
        """
        s = self.state.scenario
        fixed, stops = self._levers(s)
        key = (s.catalogue, fixed, stops)
        if key == self._levers_key:
            return
        self._levers_key = key
        data = self._constants(s, fixed, stops, lambda: self.state.result)
        if data != self._key:
            self._key = data
            self.holder.data = {"c": [data], "shown": [self.roofline.shown]}

    def prepare(self, scenario: Scenario) -> None:
        """Work out and keep the constants of ``scenario`` (a session's own model just read, say) before the
        session selects it, so that selecting it costs the event loop a lookup (:data:`_SENT`).

        Safe in a worker thread: it reads ``scenario`` and the widgets' stops and options, and changes neither.
        """
        fixed, stops = self._levers(scenario)
        self._constants(scenario, fixed, stops, scenario.evaluate)

    def _levers(self, s: Scenario) -> tuple[tuple, tuple]:
        fixed = tuple(getattr(s, n) for n in s.levers() if n not in INSTANT_LEVERS or n not in self.widgets)
        return fixed, tuple(tuple(w.stops.values) for w in self.widgets.values() if hasattr(w, "stops"))

    def _constants(self, s: Scenario, fixed: tuple, stops: tuple, result) -> str:
        """The constants as JSON, kept in :data:`_SENT` by the levers they depend on; a session's own model or
        GPU by the object's identity as well (as core.profiles keeps its deployments)."""
        own = bool(s.catalogue.own_models or s.catalogue.own_gpus)
        objects = (s.catalogue.model(s.model), s.catalogue.gpu(s.gpu)) if own else None
        cache_key = (fixed, stops, tuple(self.widgets), tuple(map(id, objects)) if own else None)
        with _SENT_LOCK:
            found = _SENT.get(cache_key)
            if found is not None and (not own or all(a is b for a, b in zip(found[0], objects, strict=True))):
                _SENT.move_to_end(cache_key)
                return found[1]
        try:
            data = json.dumps(browser_state(s, self.widgets, result()), allow_nan=False)
        except (ValueError, TypeError, KeyError):
            # Constants the browser's model cannot take (none known): the server draws alone, still right.
            data = json.dumps({"on": False})
        with _SENT_LOCK:
            _SENT[cache_key] = (objects, data)
            if len(_SENT) > _SENT_MAX:
                _SENT.popitem(last=False)
        return data
