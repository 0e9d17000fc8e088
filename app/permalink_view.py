"""Permalinks: the whole state (scenario, a session's own GPU, pins) lives in the URL query.

Reading: the page's address comes through Panel's ``pn.state.location``; its raw
query (every value of a repeated key kept) is decoded by
:func:`core.permalink.from_query`, which leaves out what is invalid with a notice
and applies the rest.  Writing (:class:`AddressBar`, a Panel ``JSComponent``): every
change replaces the browser's history entry (``history.replaceState``), so dragging
a slider does not add one entry per tick and the address bar is always a link to what is on screen (within
:data:`WRITE_INTERVAL_MS`: writes are spaced to stay under the browsers' cap on
address rewrites, and the last state of a burst is always written).  (Writing through
``pn.state.location.search`` would push a new history entry per change: Panel
1.9's Location model calls ``history.pushState``.)
"""

from __future__ import annotations

from functools import lru_cache
from html import escape
from urllib.parse import parse_qs, urlencode

import panel as pn
import param
from panel.custom import JSComponent

from core.batching import MIXES
from core.ladder import ARTICLE_ORDER
from core.paging import BLOCK_SIZE
from core.permalink import IGNORED_WHOLE, config_for_link, fit_gpus, from_query, link_gpus, shown_value, to_query
from core.units import parse_number

from .message import Message
from .state import LabState

#: Query keys of the app itself (not levers): left to the app, never reported as unknown.
APP_KEYS = ("embed", "present", "tour", "tab", "engine", "band", "ladder", "mix", "block-size")


#: Least time between two rewrites of the address (ms).  Browsers cap how often a page may rewrite it (Safari:
#: 100 history.replaceState/pushState calls in 30 s, then each call throws; Chrome ignores calls past its own
#: cap), and a slider dragged back and forth passes the cap within seconds: the address bar then stayed on an
#: older state.  At most one write per interval (75 in 30 s), and always one for the last state of a burst.
WRITE_INTERVAL_MS = 400

class AddressBar(JSComponent):
    """The browser's address bar: ``query`` is written into it, and ``back`` says where Back or Forward went.

    A change of pins adds a history entry (``history.pushState``), so the browser's Back restores the previous pin
    set; every other change replaces the entry (``history.replaceState``).  Writes are spaced by
    :data:`WRITE_INTERVAL_MS`, the last state of a burst always written.  No element of its own is shown.
    """

    query = param.String(default="", doc="The query string the address bar shows (``?key=value&…``); set by the "
                                          "server, written by the browser.")
    back = param.String(default="", doc="The query of the history entry the browser went Back or Forward to, "
                                         "then ``#`` and a nonce (the same entry twice still tells); set by the "
                                         "browser.")

    _esm = """
    const INTERVAL = WRITE_INTERVAL;
    // One writer per page, whichever render of this component is current.
    const lab = window._labLink || (window._labLink = {query: null, timer: null, restoring: false, last: 0,
                                                       model: null});
    function write() {
      lab.timer = null;
      const query = lab.query;
      if (!query) { return; }
      const pins = (q) => new URLSearchParams(q).get("pins");
      try {
        if (pins(query) !== pins(window.location.search) && !lab.restoring) {
          window.history.pushState(null, "", query);
        } else if (query !== window.location.search) {
          window.history.replaceState(null, "", query);
        }
      } catch (error) {  // over the browser's cap after all: try again after the next interval
        lab.timer = setTimeout(write, INTERVAL);
        return;
      }
      lab.restoring = false;
      lab.last = Date.now();
    }
    export function render({ model }) {
      lab.model = model;
      // A query set before the page was drawn (an opening link with ignored parts, PermalinkView.write_opening):
      // the address bar shows what applies, in place of the values ignored, before anyone copies it.
      if (model.query && model.query !== window.location.search && lab.last === 0) {
        try { window.history.replaceState(null, "", model.query); } catch (error) { /* over the cap: left */ }
      }
      model.on("query", () => {
        lab.query = model.query;
        if (lab.timer === null) {
          lab.timer = setTimeout(write, Math.max(0, lab.last + INTERVAL - Date.now()));
        }
      });
      if (!lab.listening) {
        lab.listening = true;
        window.addEventListener("popstate", () => {
          lab.restoring = true;
          lab.model.back = window.location.search + "#" + Date.now();
        });
      }
      return document.createElement("span");
    }
    """.replace("WRITE_INTERVAL", str(WRITE_INTERVAL_MS))


def _first(query: dict, key: str) -> str | None:
    value = query.get(key)
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    return None if value is None else str(value)


def app_link_state(query: dict, tabs: tuple[str, ...], steps: int,
                   engines: tuple[str, ...] = ("generic",)) -> tuple[dict, list[str]]:
    """The app's own keys of a link: ``embed``/``present``/``band`` (true/false), ``tour`` (a step, 1..steps),
    ``tab`` (a name), ``engine`` (the expected step's preset, one of ``engines``, any case), ``ladder`` (the Ladder
    tab's rung ids in order, comma-separated; empty: none), ``mix`` (a request mix of :data:`core.batching.MIXES`)
    and ``block-size`` (PagedAttention's block, 1 to 1,024 tokens).

    Returns:
        ``({"embed": bool, "present": bool, "band": bool, "tour_step": int | None, "tab": str | None,
        "engine": str | None, "ladder": list[str] | None, "mix": str | None, "block_size": int | None}, notices)``;
        a value that cannot be used is left out with a notice naming it and what is accepted (an unknown or
        repeated rung id alone: the other rungs apply).
    """
    out: dict = {"embed": False, "present": False, "band": False, "tour_step": None, "tab": None, "engine": None,
                 "ladder": None, "mix": None, "block_size": None}
    notices = []
    for key in ("embed", "present", "band"):
        text = _first(query, key)
        if text is None:
            continue
        if text.lower() in ("true", "1", "false", "0", ""):
            out[key] = text.lower() in ("true", "1")
        else:
            notices.append(f"ignored {key}={shown_value(text)}: accepted true or false")
    text = _first(query, "tour")
    if text is not None:
        out["tour_step"] = _whole(text, 1, steps)
        if out["tour_step"] is None:
            notices.append(f"ignored tour={shown_value(text)}: accepted a step from 1 to {steps}")
    text = _first(query, "tab")
    if text is not None:
        match = next((t for t in tabs if t.lower() == text.strip().lower()), None)
        if match is None:
            notices.append(f"ignored tab={shown_value(text)}: accepted {', '.join(tabs)}")
        else:
            out["tab"] = match
    text = _first(query, "engine")
    if text is not None:
        match = next((e for e in engines if e.lower() == text.strip().lower()), None)
        if match is None:
            notices.append(f"ignored engine={shown_value(text)}: accepted {', '.join(engines)}")
        else:
            out["engine"] = match
    text = _first(query, "ladder")
    if text is not None:
        out["ladder"], bad = parse_rungs(text)
        if bad:
            named = ", ".join(shown_value(b) for b in bad[:3])
            notices.append(f"ignored ladder rung{'s' if len(bad) > 1 else ''} {named}: accepted each of "
                           f"{', '.join(ARTICLE_ORDER)} once")
    text = _first(query, "mix")
    if text is not None:
        if text.strip().lower() in MIXES:
            out["mix"] = text.strip().lower()
        else:
            notices.append(f"ignored mix={shown_value(text)}: accepted {', '.join(MIXES)}")
    text = _first(query, "block-size")
    if text is not None:
        out["block_size"] = _whole(text, 1, 1024)
        if out["block_size"] is None:
            notices.append(f"ignored block-size={shown_value(text)}: accepted a whole number of tokens from 1 to 1,024")
    return out, notices


def _whole(text: str, low: int, high: int) -> int | None:
    """``text`` as a whole number from ``low`` to ``high`` (``5``, ``5.0``, ``5e0``), or None."""
    try:
        number = parse_number(text)
        value = int(number)
    except (ValueError, OverflowError):
        return None
    return value if value == number and low <= value <= high else None


def parse_rungs(text: str) -> tuple[list[str], list[str]]:
    """A link's ``ladder=`` value (rung ids, comma-separated, in order) -> (the rungs kept, the items left out:
    unknown ids and repeats).  Ids match without regard to case or surrounding spaces; at most
    ``len(ARTICLE_ORDER)`` items are read."""
    kept: list[str] = []
    bad: list[str] = []
    items = [t.strip() for t in text.split(",") if t.strip()]
    for item in items[: 2 * len(ARTICLE_ORDER)]:
        rung = item.lower()
        if rung in ARTICLE_ORDER and rung not in kept:
            kept.append(rung)
        else:
            bad.append(item)
    return kept, bad


def session_query() -> dict[str, list[str]]:
    """The page's query parameters (key -> every value given), or {} outside a server session."""
    if not (pn.state.curdoc and pn.state.curdoc.session_context) or pn.state.location is None:
        return {}
    return parse_qs(pn.state.location.search.lstrip("?"), keep_blank_values=True)


class PermalinkView(pn.viewable.Viewer):
    """The notices of the opening link, and a hidden element whose value change rewrites the URL in place."""

    state = param.ClassSelector(class_=LabState, doc="The session state it follows.")

    def __init__(self, **params):
        super().__init__(**params)
        # The address bar (a browser-side writer: no element shown, no room taken).
        self.address = AddressBar(width=0, height=0, margin=0, css_classes=["permalink"])
        self.address.param.watch(self._back, "back")
        #: The opening link's notices, made when a link has any (most links have none).
        self.notice = Message(lambda: pn.pane.HTML(
            sizing_mode="stretch_width", css_classes=["link-notice"],
            styles={"background": "#fff3cd", "border": "1px solid #ffe69c", "padding": "4px 12px",
                    "border-radius": "4px"},
        ))
        self.show_notices()

    @param.depends("state.notices", watch=True)
    def show_notices(self, busy: str = "") -> None:
        """The opening link's notices; ``busy``: what is still being read (the link's config.json)."""
        notices = self.state.notices
        # Notices quote what the link said: rendered as text (escaped HTML), never as Markdown.
        items = "".join(f"<li>{escape(n)}</li>" for n in notices)
        # A link refused whole (too many parameters) is not "part of" it: the heading says which (a new user's trial).
        whole = any(n.startswith(IGNORED_WHOLE) for n in notices)
        head = ("<b>This link was ignored</b>; the lab opens as it starts." if whole else
                "<b>Part of this link was ignored</b>; the rest of it applies.")
        # In an embed the list folds under its heading: a 500 × 450 iframe never scrolls, and four notices took 60 %
        # of it and made it scroll (an attacker's trial); the heading says how many, a click opens them.
        if self.state.embed and notices:
            many = f" ({len(notices)} {'notice' if len(notices) == 1 else 'notices'})"
            text = f'<details><summary>{head}{many}</summary><ul>{items}</ul></details>'
        else:
            text = f"{head}<ul>{items}</ul>" if notices else ""
        if busy:
            text = f'<div aria-busy="true">{escape(busy)}</div>{text}'
        self.notice.say(text)

    def __panel__(self):
        return self.address

    def _back(self, event) -> None:
        """The browser went Back (or Forward) to an entry: restore that entry's pins."""
        query = parse_qs(str(event.new).split("#")[0].lstrip("?"), keep_blank_values=True)  # '#' + a nonce
        # Read in the session's own catalogue: a pin of a model it read (a pasted config) is one of its own.
        pins = from_query({"pins": query["pins"]} if "pins" in query else {},
                          catalogue=self.state.scenario.catalogue).pins
        self.state.set_pins(pins)

    @param.depends("state.result", "state.pins", "state.configs", "state.tab", "state.present", "state.tour_step",
                   "state.engine", "state.band", "state.ladder", "state.mix", "state.block_size", watch=True)
    def write(self) -> None:
        """Point the address bar at the levers, the pins, the session's own GPU, the tab, present mode, the
        tour's step, the expected step's engine preset and the expected point, the Ladder tab's rungs and the
        serving tabs' request mix and block."""
        self.address.query = "?" + urlencode(self.query())

    def write_opening(self, opening: dict | None = None) -> None:
        """An opening link with ignored parts, or with a value written another way than the lab writes it
        (``opening``: the link's query, key -> list of texts): the address bar shows what applies, as the lab
        writes it, from the page's first drawing.  A trial: ``?batch=1e30`` ran at B = 1 while the bar kept
        ``batch=1e30`` until a lever moved, and "Copy link" shared the bad value and its notice again; ``batch=1e3``
        and ``batch=+4`` ran at B = 1,000 and 4 with the bar keeping the raw text."""
        if self.state.notices:
            self.write()
            return
        written = self.query()
        given = {key: [values] if isinstance(values, str) else list(values) for key, values in (opening or {}).items()}
        if any(key in written and values != [written[key]] for key, values in given.items()):
            self.write()

    def query(self) -> dict[str, str]:
        """The permalink's query parameters for what is on screen."""
        return link_query(self.state)[0]


@lru_cache(maxsize=4)
def _config_value(text: str) -> str | None:
    """:func:`core.permalink.config_for_link` once per config text, not per lever move (the address bar and the
    Share text's check both ask); a few texts kept, each one a session holds anyway."""
    return config_for_link(text)


def link_query(state: LabState) -> tuple[dict[str, str], list]:
    """The permalink's query parameters for what is on screen, and the session's own GPUs it carries (the selected
    one's and the pins', as many as the link's length allows: :func:`core.permalink.fit_gpus`)."""
    s = state.scenario
    gpus = link_gpus(s, state.pins)
    query = to_query(s.levers(), state.pins, gpus)
    config = state.configs.get(s.model)
    value = _config_value(config) if config is not None else None
    if value is not None:
        query["config"] = value
    query.update(_app_keys(state))
    return query, fit_gpus(query, gpus) if len(gpus) > 1 else gpus


def _app_keys(state: LabState) -> dict[str, str]:
    """The app's own keys of a link: embed and present mode, the tour's step, the tab, the engine, the band, the
    Ladder's rungs, the serving tabs' mix and block."""
    query: dict[str, str] = {}
    if state.embed:
        query["embed"] = "true"
    if state.present:
        query["present"] = "true"
    if state.tour_step is not None:
        query["tour"] = str(state.tour_step)
    if state.tab != state.param.tab.default:
        query["tab"] = state.tab
    if state.engine != state.param.engine.default:
        query["engine"] = state.engine
    if state.band:
        query["band"] = "true"
    if list(state.ladder) != list(ARTICLE_ORDER):
        query["ladder"] = ",".join(state.ladder)
    if state.mix != state.param.mix.default:
        query["mix"] = state.mix
    if state.block_size != BLOCK_SIZE:
        query["block-size"] = str(state.block_size)
    return query


def pins_left_out(state) -> str:
    """What a link (or a scenario file) of ``state`` leaves out, in a sentence or two, or ``""``: the pins on a pasted
    model other than the selected one, and the pins on a GPU of the session's own that the link has no room for.
    A link carries one config.json, the selected model's; a pin on another read config names a model the receiving
    session does not have, and is ignored there (a new user's second pasted config lost its pin, unwarned).  It
    carries the session's own GPUs the pins use while it stays under its length (:func:`link_query`): a scenario
    file carries them all."""
    model = state.scenario.model
    lost = [pin.name for pin in state.pins if pin.levers.get("model") in state.configs and pin.levers["model"] != model]
    said = ""
    if lost:
        names = ", ".join(f"“{name}”" for name in lost)
        one = len(lost) == 1
        said = (f"{'This pin is' if one else 'These pins are'} on another pasted model, whose config.json a link or "
                f"a scenario file does not carry (they carry the selected model's): {names}. Opened elsewhere, "
                f"{'it is' if one else 'they are'} left out; select that model to share {'it' if one else 'them'}.")
    wanted = link_gpus(state.scenario, state.pins)
    if len(wanted) > 1:  # a pin on a GPU of the session's own beside another: does the link have room for it?
        carried = {gpu.id for gpu in link_query(state)[1]}
        off = [pin.name for pin in state.pins
               if pin.levers.get("gpu") in state.scenario.catalogue.own_gpus and pin.levers["gpu"] not in carried]
        if off:
            one = len(off) == 1
            said += ((" " if said else "") + f"{'This pin is' if one else 'These pins are'} on a GPU of your own "
                     "that the link has no room for (it is near its length limit; a scenario file carries it): "
                     + ", ".join(f"“{name}”" for name in off) + ".")
    return said
