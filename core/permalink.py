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

import base64
import binascii
import json
import re
import sys
import zlib
from typing import NamedTuple
from urllib.parse import parse_qsl, urlencode

from .catalogue import Catalogue
from .config_reader import MAX_CONFIG_BYTES
from .hardware import CUSTOM_ROOFS, Accelerator, accelerator_form, custom_accelerator, load_catalogue
from .models import ModelSpec
from .pins import MAX_PIN_NAME, MAX_PINS, Pin, given_pin_name
from .scenario import LEVERS, Scenario

#: Query keys that are not levers.
EXTRA_KEYS = ("pins", "custom-gpu", "config")
#: Longest ``config=`` value written or read: a config.json's minified JSON, deflated and in base64url.  The
#: lab's longest link with one this long is 31,655 characters, under :data:`MAX_LINK_CHARS`, and its page's
#: websocket request ~50,600 bytes, under the server's 64 KiB, each of its lines under the nginx recipe's 48 KiB
#: (tests/unit/test_link_limits.py).  A real config.json is 600-3,000 characters here; a longer one travels in a
#: scenario file (:func:`scenario_file`).
MAX_LINK_CONFIG_CHARS = 8_192
#: Longest scenario file read, characters: the largest config the reader takes, as a JSON string (its quotes and line
#: ends escaped: up to twice its characters; at once its size, the lab refused a 2-MB config's file it had saved
#: itself, a verifying trial), pins and a custom GPU.
MAX_SCENARIO_CHARS = 2 * MAX_CONFIG_BYTES + 2 * 20_000 + 10_000
#: What a scenario file says it is (:func:`scenario_file`).
SCENARIO_KIND = "roofline-lab scenario"
#: Longest ``pins`` or ``custom-gpu`` text read (8 pins of every lever fit in 4 kB).
MAX_JSON_TEXT = 20_000
#: Longest link query opened, characters of the query as sent (percent-encoded).  The longest the lab writes is
#: 31,655 (a config.json of :data:`MAX_LINK_CONFIG_CHARS`, 16 pins with 40-character names of 4-byte characters,
#: every lever moved to a 15-digit value, a custom GPU with every roof, the seven ladder rungs reordered, a mix and
#: a block, the longest engine name: tests/unit/test_permalink.py); ~20,000 with ASCII names.
MAX_LINK_CHARS = 32_768
#: Most query values a link may give; the lab writes at most 31 keys (19 levers, ``pins``, ``custom-gpu``,
#: ``config`` and the app's 9).
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
                                f"{MAX_LINK_CHARS:,} (its own are at most 31,655)")
    limit = sys.get_int_max_str_digits() or len(query) + 1
    for key, value in parse_qsl(query, keep_blank_values=True):
        if not value.isdigit():
            continue
        if not value.isdecimal():
            return LinkRefusal(400, f"{shown_value(key)} is written in digits other than 0-9 ({shown_value(value)})")
        if len(value) > limit:
            return LinkRefusal(400, f"{shown_value(key)} is a number {len(value):,} digits long, more than the "
                                    f"{limit:,} a number may have")
    return None


#: How the notice of a link ignored as a whole begins (:func:`_too_many_keys`): the page heads it accordingly.
IGNORED_WHOLE = "ignored this link:"


def _too_many_keys(query: dict) -> str | None:
    """The notice for a parsed query giving more than :data:`MAX_LINK_KEYS` values (a key given thrice counts 3)."""
    count = sum(len(v) if isinstance(v, (list, tuple)) else 1 for v in query.values())
    if count <= MAX_LINK_KEYS:
        return None
    return (f"{IGNORED_WHOLE} it gives {count:,} parameters, more than the {MAX_LINK_KEYS} a link can give "
            f"(the lab writes at most 31)")


class LinkState(NamedTuple):
    """What a permalink restores: valid levers, pins, a custom GPU, and notices for what was ignored; and the
    text of the config.json the link carries (``config=``), to be read before its model and pins apply."""

    levers: dict
    pins: list[Pin]
    notices: list[str]
    custom_gpu: Accelerator | None
    config: str | None = None
    #: Every GPU of the session's own the link defines, ``custom_gpu`` (the first) among them: its pins' too.
    custom_gpus: tuple[Accelerator, ...] = ()


_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")


def minified(text: str) -> str:
    """JSON text without its spaces (the text as given when it is not JSON Python's reader takes whole)."""
    try:
        return json.dumps(json.loads(text), separators=(",", ":"), ensure_ascii=False)
    except (ValueError, RecursionError):
        return text


def config_for_link(text: str | bytes) -> str | None:
    """A config.json's text as a link's ``config=`` value: its minified JSON (the text as given when it is not
    JSON Python's reader takes whole), deflated (zlib) and in base64url without padding.

    Returns:
        the value, or None when it is longer than :data:`MAX_LINK_CONFIG_CHARS` (a scenario file carries it).
    """
    if isinstance(text, bytes):
        text = text.decode("utf-8", "surrogatepass")
    packed = zlib.compress(minified(text).encode("utf-8", "surrogatepass"), 9)
    value = base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")
    return value if len(value) <= MAX_LINK_CONFIG_CHARS else None


def config_from_link(value: str) -> str:
    """The config.json text of a link's ``config=`` value (:func:`config_for_link`), not yet read as a config.

    Raises:
        ValueError: longer than :data:`MAX_LINK_CONFIG_CHARS`, not base64url, not a whole zlib stream, inflating
            to more than :data:`core.config_reader.MAX_CONFIG_BYTES` (read no further than that), or not UTF-8.
    """
    if len(value) > MAX_LINK_CONFIG_CHARS:
        raise ValueError(f"{len(value):,} characters, more than the {MAX_LINK_CONFIG_CHARS:,} a link's config "
                         "may have (a larger config travels in a scenario file: Bring your own)")
    if not _BASE64URL.fullmatch(value):
        raise ValueError("not base64url text (A-Z, a-z, 0-9, - and _)")
    try:
        packed = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
    except (binascii.Error, ValueError):
        raise ValueError("not base64url text of whole bytes") from None
    inflate = zlib.decompressobj()
    try:
        text = inflate.decompress(packed, MAX_CONFIG_BYTES + 1)
    except zlib.error:
        raise ValueError("not a deflated (zlib) config") from None
    if len(text) > MAX_CONFIG_BYTES or inflate.unconsumed_tail:
        raise ValueError(f"inflates to more than the {MAX_CONFIG_BYTES / 1e6:g} MB a config may have")
    if not inflate.eof or inflate.unused_data:
        raise ValueError("not one whole deflated (zlib) config")
    try:
        return text.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("not UTF-8 text once inflated") from None


def to_query(levers: dict, pins: list[Pin] | tuple[Pin, ...] = (),
             custom_gpu: Accelerator | list[Accelerator] | tuple[Accelerator, ...] | None = None) -> dict[str, str]:
    """The query parameters of a permalink for ``levers``, ``pins`` and a session's own GPUs (one, or a list:
    :func:`link_gpus`)."""
    query = {lever.flag: lever.encode(levers[lever.name]) for lever in LEVERS}
    gpus = [custom_gpu] if isinstance(custom_gpu, Accelerator) else list(custom_gpu or ())
    if gpus:
        query["custom-gpu"] = gpus_text(gpus)
    if pins:
        # A pin lists only the levers that differ from the defaults, to keep links short.
        defaults = LEVERS.defaults()
        query["pins"] = json.dumps([_pin_record(pin, defaults) for pin in pins], separators=(",", ":"),
                                   ensure_ascii=False)
    return query


def link_gpus(scenario: Scenario, pins: list[Pin] | tuple[Pin, ...] = ()) -> list[Accelerator]:
    """The session's own GPUs a link of ``scenario`` and ``pins`` carries: the selected GPU, then each pin's, each
    once, where they are the session's own (an engineer's trial pinned their own H20 beside an H100 and a B200 with
    the B200 selected: the link carried no H20, and the pin was dropped where it opened)."""
    own = scenario.catalogue.own_gpus
    ids = dict.fromkeys([scenario.gpu, *(pin.levers.get("gpu") for pin in pins)])
    return [own[gpu_id] for gpu_id in ids if gpu_id in own]


def apply_link_gpus(scenario: Scenario, link: LinkState) -> None:
    """Add ``link``'s GPUs of the user's own to ``scenario``'s catalogue in one change, and select the first where
    the link names no GPU (a hand-written ``custom-gpu=`` alone opens on it); its ``gpu=`` lever selects otherwise."""
    scenario.add_gpus(link.custom_gpus)
    if link.custom_gpu is not None and "gpu" not in link.levers:
        scenario.gpu = link.custom_gpu.id


def gpus_text(gpus: list[Accelerator] | tuple[Accelerator, ...]) -> str:
    """``custom-gpu``'s text: one GPU's datasheet numbers as a JSON object (as links have always carried one), or
    a list of them."""
    forms = [accelerator_form(gpu) for gpu in gpus]
    return json.dumps(forms[0] if len(forms) == 1 else forms, separators=(",", ":"), ensure_ascii=False)


def fit_gpus(query: dict[str, str], gpus: list[Accelerator]) -> list[Accelerator]:
    """Set ``query``'s ``custom-gpu`` to ``gpus``, less the last ones while its link would be longer than
    :data:`MAX_LINK_CHARS` (the first, the selected GPU's, stays); the GPUs it carries.  Only a link near the
    limit already (a config.json and 16 pins with long names) leaves one out."""
    gpus = list(gpus)
    if not gpus:
        query.pop("custom-gpu", None)
        return gpus
    query["custom-gpu"] = gpus_text(gpus)
    while len(gpus) > 1 and len(urlencode(query)) > MAX_LINK_CHARS:
        gpus.pop()
        query["custom-gpu"] = gpus_text(gpus)
    return gpus


#: A pin record's keys beside its name and levers: a preset pin's origin (the levers where the scenario it was
#: pinned from differs from the pin) and the lever it moves (:class:`core.pins.Pin`).
PIN_ORIGIN_KEY, PIN_MOVES_KEY = "from", "moves"


def _pin_record(pin: Pin, defaults: dict) -> dict:
    """A pin in a link: its name, its levers that differ from the defaults and, for a preset pin, what it was pinned
    from and moves, so that a reopened link says what the live session said of it (issue 30: "differs from the
    scenario it was pinned from by: batch=4" became "differs by: batch=4", the MoE trio's note was lost)."""
    record = {"name": pin.name, **{lever.flag: lever.encode(pin.levers[lever.name]) for lever in LEVERS
                                   if pin.levers[lever.name] != defaults[lever.name]}}
    if pin.origin is not None:
        record[PIN_ORIGIN_KEY] = {lever.flag: lever.encode(pin.origin[lever.name]) for lever in LEVERS
                                  if lever.name in pin.origin and pin.origin[lever.name] != pin.levers[lever.name]}
        if pin.moves:
            record[PIN_MOVES_KEY] = pin.moves
    return record


def from_query(query: dict, ignore: tuple[str, ...] = (), added: ModelSpec | None = None,
               catalogue: Catalogue | None = None) -> LinkState:
    """Levers, pins, a custom GPU and notices from permalink query parameters.

    A link that carries a config.json (``config=``, :func:`config_for_link`) is read twice: first without
    ``added``, which gives its text (``LinkState.config``) and every lever but the model, and no pins (they
    may name its model); then, once the text is read into a model (off the event loop: ``app/permalink_view.py``),
    with ``added``, that model, which is the link's model whatever ``model=`` says.

    Args:
        query: key -> text, or key -> list of texts (a key given more than once:
            the first is used, with a notice).  Unknown keys are reported, not
            applied; keys in ``ignore`` (the app's own, e.g. ``embed``) are skipped.
            More than :data:`MAX_LINK_KEYS` values: nothing applies, one notice says why.
        added: the model the link's config.json gave, as its session registered it.
        catalogue: the catalogue the link's model and GPU names are read in: a session's own (with the models
            it read and the GPU it defined) when the session goes Back to one of its own links; a fresh
            catalogue by default (a link opened anew knows only what it carries).

    Returns:
        a :class:`LinkState`: the valid levers (Scenario parameter names, SI
        values), the valid pins (each completed from the defaults; a pin whose model or GPU
        this lab does not have is dropped, with a notice), the custom GPU
        if the link defines a valid one, the config.json text of a valid ``config=`` (without ``added``), and
        one notice per value that was ignored.
    """
    too_many = _too_many_keys(query)
    if too_many:
        return LinkState({}, [], [too_many], None)
    notices: list[str] = []
    query = _first_values(query, notices)
    customs = _custom_gpus(query.get("custom-gpu"), notices)
    catalogue = catalogue if catalogue is not None else Catalogue()
    for gpu in customs:
        catalogue = catalogue.with_gpu(gpu)
    config = None
    if added is not None:
        catalogue, added = catalogue.with_model(added)
    elif "config" in query:
        try:
            config = config_from_link(query["config"])
        except ValueError as exc:
            notices.append(f"ignored config: {exc}")
    scenario = Scenario(catalogue=catalogue)  # its selectors offer the link's own GPU and model
    levers = {} if added is None else {"model": added.id}
    for key, text in query.items():
        if key in EXTRA_KEYS or key in ignore or (key == "model" and (config is not None or added is not None)):
            continue
        lever = LEVERS.by_flag(key)
        if lever is None:
            notices.append(f"ignored unknown parameter {shown_value(key)}")
            continue
        try:
            levers[lever.name] = lever.decode(text, scenario.param[lever.name])
        except ValueError as exc:
            notices.append(f"ignored {exc}" + _travel_note(lever.name, "config" in query))
    pins = [] if config is not None else _pins(query.get("pins"), scenario, notices, "config" in query,
                                               _carried_model_renamed(query, added, scenario))
    return LinkState(levers, pins, notices, customs[0] if customs else None, config, tuple(customs))


def shown_value(text: str) -> str:
    """A link's value as a notice quotes it: ``repr``, cut after 40 characters and marked "…" where it goes on.

    >>> shown_value("W" * 3000)[-3:]
    "W…'"
    """
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
    # Shown as written, never run: a bidi override or a control character is its escape (a trial's U+202E showed
    # the name reversed), as a config's name is.
    name, length = given_pin_name(given)
    if length > MAX_PIN_NAME:
        notices.append(f"{default}: its name was cut to {MAX_PIN_NAME} characters (of {length:,})")
    return name or default


def _json_kind(value) -> str:
    """What JSON calls ``value``'s type."""
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "number"
    return {list: "list", dict: "object"}.get(type(value), type(value).__name__)


def _travel_note(name: str, carried: bool = False) -> str:
    if name == "model" and not carried:
        return ("; this link carries no config.json for it: paste it again under Bring your own, or open "
                "its scenario file there")
    return ""


def _first_values(query: dict, notices: list[str]) -> dict[str, str]:
    out = {}
    for key, value in query.items():
        if isinstance(value, (list, tuple)):
            if not value:
                continue
            if len(value) > 1:
                notices.append(f"{shown_value(str(key))} was given {len(value)} times; used the first, "
                               f"{shown_value(str(value[0]))}")
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
    except ValueError as exc:
        # Python refuses an integer of more than sys.get_int_max_str_digits() digits in valid JSON: said as such
        # (an attacker's 4,400-digit batch read "not valid JSON").
        too_long = "integer string conversion" in str(exc)
        notices.append(f"ignored {key}: " + (f"a number of more than {sys.get_int_max_str_digits():,} digits"
                                             if too_long else "not valid JSON"))
        return None


def _custom_gpus(text: str | None, notices: list[str]) -> list[Accelerator]:
    """``custom-gpu``'s GPUs: one JSON object, or a list of them (:func:`gpus_text`), each checked on its own."""
    if not text:
        return []
    form = _load_json("custom-gpu", text, notices)
    if form is None:
        return []
    if not isinstance(form, list):
        gpu = _custom_gpu(form, "custom-gpu", notices)
        return [gpu] if gpu is not None else []
    if not form or len(form) > MAX_PINS + 1:
        notices.append(f"ignored custom-gpu: a list of 1 to {MAX_PINS + 1} GPUs (the selected one's and one per "
                       f"pin), got {len(form)}")
        return []
    gpus: dict[str, Accelerator] = {}
    for i, one in enumerate(form, 1):
        gpu = _custom_gpu(one, f"custom-gpu's GPU {i}", notices)
        if gpu is not None and gpu.id in gpus:  # one id, two sets of numbers: the first is the link's
            notices.append(f"ignored custom-gpu's GPU {i}: its name gives the id of an earlier one ({gpu.id})")
        elif gpu is not None:
            gpus[gpu.id] = gpu
    return list(gpus.values())


def _custom_gpu(form, key: str, notices: list[str]) -> Accelerator | None:
    try:
        if not isinstance(form, dict):
            raise ValueError("not a JSON object")
        known = {"name", "bandwidth_tbs", "capacity_gb", "capacity_gib", "reference", "link_gbs", "max_node",
                 "measured", *CUSTOM_ROOFS}
        missing = {"name", "bandwidth_tbs", "bf16"} - set(form)
        if not {"capacity_gb", "capacity_gib"} & set(form):
            missing.add("capacity_gb")
        if missing or set(form) - known:
            raise ValueError(f"needs name, bandwidth_tbs, capacity_gb (or capacity_gib) and bf16 (optional fp8, int8, "
                             "fp4, reference, link_gbs, max_node, measured); "
                             f"missing {sorted(missing)}, unknown {sorted(map(shown_value, set(form) - known))}")
        if not isinstance(form["name"], str):
            raise ValueError("name must be text")
        reference = form.get("reference")
        if reference is not None and (not isinstance(reference, str) or reference not in load_catalogue()):
            raise ValueError(f"reference must be a catalogue GPU id ({', '.join(load_catalogue())})")
        return custom_accelerator(**form)
    except ValueError as exc:
        notices.append(f"ignored {key}: {exc}")
        return None


def _pin_origin(rec: dict, levers: dict, scenario: Scenario, name: str,
                notices: list[str]) -> tuple[dict | None, str | None]:
    """A link pin's origin and moved lever (:func:`_pin_record`), or ``(None, None)`` (a pin of a scenario itself, or
    a malformed ``from``, with a notice: the pin is then compared with the other pins)."""
    given = rec.get(PIN_ORIGIN_KEY)
    if given is None:
        return None, None
    if not isinstance(given, dict):
        notices.append(f"pin {name!r}: ignored {PIN_ORIGIN_KEY}: not an object")
        return None, None
    origin = dict(levers)
    for key, value in given.items():
        lever = LEVERS.by_flag(key)
        try:
            if lever is None:
                raise ValueError(f"unknown parameter {shown_value(str(key))}")
            origin[lever.name] = lever.decode(value, scenario.param[lever.name])
        except ValueError as exc:
            notices.append(f"pin {name!r}: ignored {PIN_ORIGIN_KEY}: {exc}")
            return None, None
    moves = rec.get(PIN_MOVES_KEY)
    return origin, (moves if isinstance(moves, str) and moves in LEVERS.names else None)


#: A pin's levers that say which scenario it is: one that cannot be restored drops the pin, not just the lever.
PIN_IDENTITY = ("model", "gpu")


def _carried_model_renamed(query: dict[str, str], added: ModelSpec | None,
                           scenario: Scenario) -> tuple[str, str] | None:
    """``(the id the link's writer gave its config's model, the id it has here)`` when they differ, else None.

    A link that carries a config names its model, in ``model=`` and in its pins, by the id the session that wrote
    it gave it; read again, the config's model may get another: the writer's was numbered (``config-x-2``, a second
    paste there), or named by an older rule (a nameless paste was ``config-pasted-config`` before configs were
    named after ``architectures[0]``: :func:`core.config_reader.config_name`).  A pin naming the written id is a pin
    of the carried model, not one of a model this lab lacks.  A written id this lab has (a shipped model) is left
    to mean that model.
    """
    written = query.get("model")
    if added is None or not isinstance(written, str) or written == added.id:
        return None
    try:
        LEVERS["model"].decode(written, scenario.param["model"])
    except ValueError:
        return written, added.id
    return None


def _renamed_pin(rec: dict, renamed: tuple[str, str] | None) -> dict:
    """A link's pin record with the carried model's written id, as its model and as its origin's, read as the id it
    has here (:func:`_carried_model_renamed`)."""
    if renamed is None:
        return rec
    written, here = renamed
    if rec.get("model") == written:
        rec = {**rec, "model": here}
    origin = rec.get(PIN_ORIGIN_KEY)
    if isinstance(origin, dict) and origin.get("model") == written:
        rec = {**rec, PIN_ORIGIN_KEY: {**origin, "model": here}}
    return rec


def _pins(text: str | None, scenario: Scenario, notices: list[str], carried: bool = False,
          renamed: tuple[str, str] | None = None) -> list[Pin]:
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
        if renamed is not None and rec.get("model") == renamed[1]:
            # The id the carried model has here named another of the writer's pasted models there (its first
            # "LlamaForCausalLM" beside the carried second, "-2"): that pin's model is not in the link.
            notices.append(f"ignored pin {name!r}: its model, {renamed[1]!r} where the link was made, is another "
                           "pasted model than the one the link carries (a link carries one config.json)")
            continue
        rec = _renamed_pin(rec, renamed)
        levers = LEVERS.defaults()
        lost = None  # a model or GPU this lab does not have: the pin would be another scenario under its name
        for key, value in rec.items():
            if key in ("name", PIN_ORIGIN_KEY, PIN_MOVES_KEY):
                continue
            lever = LEVERS.by_flag(key)
            if lever is None:
                notices.append(f"pin {name!r}: ignored unknown parameter {shown_value(str(key))}")
                continue
            try:
                levers[lever.name] = lever.decode(value, scenario.param[lever.name])
            except ValueError as exc:
                if lever.name in PIN_IDENTITY:
                    lost = f"ignored pin {name!r}: {exc}" + _travel_note(lever.name, carried)
                    break
                notices.append(f"pin {name!r}: ignored {exc}")
        if lost:
            notices.append(lost)
            continue
        origin, moves = _pin_origin(rec, levers, scenario, name, notices)
        pins.append(Pin(name, levers, origin, moves))
    if len(records) > MAX_PINS:
        notices.append(f"ignored pins after the first {MAX_PINS}")
    return pins


def scenario_file(query: dict[str, str], config: str | None) -> str:
    """A scenario file: what a link holds (:func:`to_query` and the app's keys) with the config.json's text
    itself, for a config too large for a link (JSON, UTF-8).

    Args:
        query: a link's query parameters, key -> text (a ``config`` key is left out: ``config`` is the text).
        config: the config.json text of the link's model, or None.

    Returns:
        ``{"kind": SCENARIO_KIND, "version": 1, "config": text or null, "levers": {flag: text},
        "pins": [...], "custom-gpu": {...} or [...]}`` (pins and custom-gpu as in a link, when there are any), indented.
    """
    flags = {lever.flag for lever in LEVERS}
    doc: dict = {"kind": SCENARIO_KIND, "version": 1, "config": config,
                 "levers": {k: v for k, v in query.items() if k in flags}}
    for key in ("pins", "custom-gpu"):
        if key in query:
            doc[key] = json.loads(query[key])
    return json.dumps(doc, indent=1, ensure_ascii=False)


def read_scenario_file(text: str | bytes) -> tuple[dict[str, str], str | None]:
    """A scenario file (:func:`scenario_file`) as a link's query parameters and the config.json text.

    What the query holds is then read as a link's is (:func:`from_query`: each value checked, a bad one left
    out with a notice); the config text is read by the config reader, with its limits.

    Raises:
        ValueError: over :data:`MAX_SCENARIO_CHARS`, not UTF-8, not JSON, or not a scenario file (its kind,
            or a part of the wrong type); the message says which.
    """
    if len(text) > MAX_SCENARIO_CHARS:
        raise ValueError(f"{len(text):,} characters, more than the {MAX_SCENARIO_CHARS:,} a scenario file may have")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("not UTF-8 text") from None
    text = text.removeprefix("\ufeff")  # a byte-order mark before the JSON (RFC 8259 §8.1), as a config's
    try:
        doc = json.loads(text)
    except RecursionError:
        raise ValueError("nests deeper than the JSON reader allows") from None
    except ValueError:
        raise ValueError("not valid JSON") from None
    if not isinstance(doc, dict) or doc.get("kind") != SCENARIO_KIND:
        raise ValueError(f"not a scenario file (its \"kind\" must be {SCENARIO_KIND!r})")
    config = doc.get("config")
    if config is not None and not isinstance(config, str):
        raise ValueError("its config must be the config.json's text")
    levers = doc.get("levers", {})
    if not isinstance(levers, dict) or not all(isinstance(v, str) for v in levers.values()):
        raise ValueError("its levers must be an object of texts (flag: value)")
    query = {str(k): v for k, v in levers.items() if k not in EXTRA_KEYS}
    for key in ("pins", "custom-gpu"):
        if key in doc:
            query[key] = json.dumps(doc[key], separators=(",", ":"), ensure_ascii=False)
    return query, config
