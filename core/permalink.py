"""Scenario and pins <-> URL query, with the command line's flag names.

A permalink carries every lever (``?model=llama-3-8b&batch=56&context=8192``),
a session's own GPU (``custom-gpu=`` its datasheet numbers as JSON) and the
pinned scenarios (``pins=`` a JSON list).  Query keys and values are the
lever table's (:data:`core.scenario.LEVERS`: flags and :meth:`Lever.encode` /
:meth:`Lever.decode`), so the link, the command line and the controls cannot
drift apart.

Reading one never fails as a whole: a value that is unknown, malformed, out of
range, too long or given twice is left out (or the first one used) with a notice
naming it and what is accepted, and the rest of the link still applies.  A link
that gives more than :data:`MAX_LINK_KEYS` values is ignored as a whole, with one
notice.  A link no page can be built for (:func:`link_refusal`: longer than
:data:`MAX_LINK_CHARS`, or a value the page's address reader cannot read) is
refused before the page is built, with an error page that says why
(``app/app_hooks.py``).
"""

from __future__ import annotations

import json
import sys
from typing import NamedTuple
from urllib.parse import parse_qsl

from .catalogue import Catalogue
from .hardware import CUSTOM_ROOFS, Accelerator, accelerator_form, custom_accelerator, load_catalogue
from .pins import MAX_PINS, Pin
from .scenario import LEVERS, Scenario

#: Query keys that are not levers.
EXTRA_KEYS = ("pins", "custom-gpu")
#: Longest ``pins`` or ``custom-gpu`` text read (8 pins of every lever fit in 4 kB).
MAX_JSON_TEXT = 20_000
#: Longest pin name kept.
MAX_PIN_NAME = 40
#: Longest link query opened, characters of the query as sent (percent-encoded).  The longest the lab writes is
#: 20,735 (16 pins with 40-character names of 4-byte characters, every lever moved to a 15-digit value, a
#: custom GPU with every roof, the seven ladder rungs reordered, a mix and a block, the longest engine name:
#: tests/unit/test_permalink.py); ~12,000 with ASCII names.
MAX_LINK_CHARS = 32_768
#: Most query values a link may give; the lab writes at most 30 keys (19 levers, ``pins``, ``custom-gpu`` and
#: the app's 9).
MAX_LINK_KEYS = 100


class LinkRefusal(NamedTuple):
    """Why a link cannot be opened at all: the HTTP status to answer with and the reason, in words."""

    status: int
    reason: str


def link_refusal(query: str) -> LinkRefusal | None:
    """Why no page can be built for a link with this query (the text after ``?``, as sent), or None.

    Two things cannot be left out with a notice, because they fail before the lab reads the link:

    * a query over :data:`MAX_LINK_CHARS` characters (HTTP 414): the page's websocket repeats it, and the server
      closes a request whose headers pass its limit, which left a white page;
    * a value written in digits that is no whole number Python reads (HTTP 400): over
      ``sys.get_int_max_str_digits()`` (4,300) digits, or digits other than 0-9 (``²``, ``①``).  Panel's reader of
      the page's address (``panel.util.parse_query``) converts every such value with ``int()``, which raised
      while the page was built: the page's address never updated again and every move logged a traceback.

    Returns:
        a :class:`LinkRefusal` naming the length or the key, or None (the lab reads the link and leaves out,
        with a notice, what it cannot use).
    """
    if len(query) > MAX_LINK_CHARS:
        return LinkRefusal(414, f"this link is {len(query):,} characters long; Roofline Lab opens links of up to "
                                f"{MAX_LINK_CHARS:,} (its own are at most ~21,000)")
    limit = sys.get_int_max_str_digits() or len(query) + 1
    for key, value in parse_qsl(query, keep_blank_values=True):
        if not value.isdigit():
            continue
        if not value.isdecimal():
            return LinkRefusal(400, f"{_shown(key)} is written in digits other than 0-9 ({_shown(value)})")
        if len(value) > limit:
            return LinkRefusal(400, f"{_shown(key)} is a number {len(value):,} digits long, more than the "
                                    f"{limit:,} a number may have")
    return None


def _too_many_keys(query: dict) -> str | None:
    """The notice for a parsed query giving more than :data:`MAX_LINK_KEYS` values (a key given thrice counts 3)."""
    count = sum(len(v) if isinstance(v, (list, tuple)) else 1 for v in query.values())
    if count <= MAX_LINK_KEYS:
        return None
    return (f"ignored this link: it gives {count:,} parameters, more than the {MAX_LINK_KEYS} a link can give "
            f"(the lab writes at most 28)")


class LinkState(NamedTuple):
    """What a permalink restores: valid levers, pins, a custom GPU, and notices for what was ignored."""

    levers: dict
    pins: list[Pin]
    notices: list[str]
    custom_gpu: Accelerator | None


def to_query(levers: dict, pins: list[Pin] | tuple[Pin, ...] = (), custom_gpu: Accelerator | None = None,
             ) -> dict[str, str]:
    """The query parameters of a permalink for ``levers``, ``pins`` and a session's own GPU."""
    query = {lever.flag: lever.encode(levers[lever.name]) for lever in LEVERS}
    if custom_gpu is not None:
        query["custom-gpu"] = json.dumps(accelerator_form(custom_gpu), separators=(",", ":"), ensure_ascii=False)
    if pins:
        # A pin lists only the levers that differ from the defaults, to keep links short.
        defaults = LEVERS.defaults()
        query["pins"] = json.dumps(
            [{"name": pin.name, **{lever.flag: lever.encode(pin.levers[lever.name]) for lever in LEVERS
                                   if pin.levers[lever.name] != defaults[lever.name]}}
             for pin in pins],
            separators=(",", ":"), ensure_ascii=False,
        )
    return query


def from_query(query: dict, ignore: tuple[str, ...] = ()) -> LinkState:
    """Levers, pins, a custom GPU and notices from permalink query parameters.

    Args:
        query: key -> text, or key -> list of texts (a key given more than once:
            the first is used, with a notice).  Unknown keys are reported, not
            applied; keys in ``ignore`` (the app's own, e.g. ``embed``) are skipped.
            More than :data:`MAX_LINK_KEYS` values: nothing applies, one notice says why.

    Returns:
        a :class:`LinkState`: the valid levers (Scenario parameter names, SI
        values), the valid pins (each completed from the defaults; a pin whose model or GPU
        this lab does not have is dropped, with a notice), the custom GPU
        if the link defines a valid one, and one notice per value that was ignored.
    """
    too_many = _too_many_keys(query)
    if too_many:
        return LinkState({}, [], [too_many], None)
    notices: list[str] = []
    query = _first_values(query, notices)
    custom = _custom_gpu(query.get("custom-gpu"), notices)
    catalogue = Catalogue().with_gpu(custom) if custom else Catalogue()
    scenario = Scenario(catalogue=catalogue)  # its selectors offer the link's own GPU
    levers = {}
    for key, text in query.items():
        if key in EXTRA_KEYS or key in ignore:
            continue
        lever = LEVERS.by_flag(key)
        if lever is None:
            notices.append(f"ignored unknown parameter {_shown(key)}")
            continue
        try:
            levers[lever.name] = lever.decode(text, scenario.param[lever.name])
        except ValueError as exc:
            notices.append(f"ignored {exc}" + _travel_note(lever.name))
    pins = _pins(query.get("pins"), scenario, notices)
    return LinkState(levers, pins, notices, custom)


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "…")


def _pin_name(given, index: int, notices: list[str]) -> str:
    """A link's pin name: text, cut to :data:`MAX_PIN_NAME` characters; anything else (a number, a list, an
    object) is not a name and the pin is called by its place, each with a notice."""
    default = f"pin {index + 1}"
    if given is None or given == "":
        return default
    if not isinstance(given, str):
        notices.append(f"{default}: ignored its name: not text (a JSON {_json_kind(given)})")
        return default
    if len(given) > MAX_PIN_NAME:
        notices.append(f"{default}: its name was cut to {MAX_PIN_NAME} characters (of {len(given):,})")
    return given[:MAX_PIN_NAME]


def _json_kind(value) -> str:
    """What JSON calls ``value``'s type."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "number"
    return {list: "list", dict: "object"}.get(type(value), type(value).__name__)


def _travel_note(name: str) -> str:
    if name == "model":
        return ("; a config.json read in another session does not travel in links: paste it again under "
                "Bring your own")
    return ""


def _first_values(query: dict, notices: list[str]) -> dict[str, str]:
    out = {}
    for key, value in query.items():
        if isinstance(value, (list, tuple)):
            if not value:
                continue
            if len(value) > 1:
                notices.append(f"{_shown(str(key))} was given {len(value)} times; used the first, "
                               f"{_shown(str(value[0]))}")
            value = value[0]
        out[str(key)] = str(value)
    return out


def _load_json(key: str, text: str, notices: list[str]):
    if len(text) > MAX_JSON_TEXT:
        notices.append(f"ignored {key}: {len(text):,} characters, more than {MAX_JSON_TEXT:,}")
        return None
    try:
        return json.loads(text)
    except RecursionError:
        notices.append(f"ignored {key}: nests deeper than the JSON reader allows")
        return None
    except ValueError:
        notices.append(f"ignored {key}: not valid JSON")
        return None


def _custom_gpu(text: str | None, notices: list[str]) -> Accelerator | None:
    if not text:
        return None
    form = _load_json("custom-gpu", text, notices)
    if form is None:
        return None
    try:
        if not isinstance(form, dict):
            raise ValueError("not a JSON object")
        known = {"name", "bandwidth_tbs", "capacity_gb", "reference", "link_gbs", "max_node", *CUSTOM_ROOFS}
        missing = {"name", "bandwidth_tbs", "capacity_gb", "bf16"} - set(form)
        if missing or set(form) - known:
            raise ValueError(f"needs name, bandwidth_tbs, capacity_gb and bf16 (optional fp8, int8, fp4, reference, "
                             "link_gbs, max_node); "
                             f"missing {sorted(missing)}, unknown {sorted(map(_shown, set(form) - known))}")
        if not isinstance(form["name"], str):
            raise ValueError("name must be text")
        reference = form.get("reference")
        if reference is not None and (not isinstance(reference, str) or reference not in load_catalogue()):
            raise ValueError(f"reference must be a catalogue GPU id ({', '.join(load_catalogue())})")
        return custom_accelerator(**form)
    except ValueError as exc:
        notices.append(f"ignored custom-gpu: {exc}")
        return None


#: A pin's levers that say which scenario it is: one that cannot be restored drops the pin, not just the lever.
PIN_IDENTITY = ("model", "gpu")


def _pins(text: str | None, scenario: Scenario, notices: list[str]) -> list[Pin]:
    if not text:
        return []
    records = _load_json("pins", text, notices)
    if records is None:
        return []
    if not isinstance(records, list):
        notices.append("ignored pins: not a JSON list")
        return []
    pins = []
    for i, rec in enumerate(records[:MAX_PINS]):
        if not isinstance(rec, dict):
            notices.append(f"ignored pin {i + 1}: not an object")
            continue
        name = _pin_name(rec.get("name"), i, notices)
        levers = LEVERS.defaults()
        lost = None  # a model or GPU this lab does not have: the pin would be another scenario under its name
        for key, value in rec.items():
            if key == "name":
                continue
            lever = LEVERS.by_flag(key)
            if lever is None:
                notices.append(f"pin {name!r}: ignored unknown parameter {_shown(str(key))}")
                continue
            try:
                levers[lever.name] = lever.decode(value, scenario.param[lever.name])
            except ValueError as exc:
                if lever.name in PIN_IDENTITY:
                    lost = f"ignored pin {name!r}: {exc}" + _travel_note(lever.name)
                    break
                notices.append(f"pin {name!r}: ignored {exc}")
        if lost:
            notices.append(lost)
            continue
        pins.append(Pin(name, levers))
    if len(records) > MAX_PINS:
        notices.append(f"ignored pins after the first {MAX_PINS}")
    return pins
