"""Scenario and pins <-> URL query, with the command line's flag names.

A permalink carries every lever (``?model=llama-3-8b&batch=56&context=8192``)
and the pinned scenarios (``pins=`` a JSON list).  Reading one never fails as a
whole: a value that is unknown, malformed or out of range is left out with a
notice naming it and what is accepted, and the rest of the link still applies.

Query names are the flags of ``python -m core explain`` without the dashes
(``weight-dtype``, ``spec-k``, ``no-gqa``, ``reserve`` in GiB, ``capacity``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import NamedTuple

import param

from .hardware import Accelerator, accelerator_form, custom_accelerator
from .scenario import LEVERS, Scenario
from .units import GiB

#: Scenario parameter -> query / command-line flag name.
FLAG_NAMES = {
    "model": "model",
    "gpu": "gpu",
    "weight_dtype": "weight-dtype",
    "kv_dtype": "kv-dtype",
    "batch": "batch",
    "spec_k": "spec-k",
    "context": "context",
    "gqa": "no-gqa",
    "phase": "phase",
    "prompt_len": "prompt-len",
    "acceptance": "acceptance",
    "capacity_convention": "capacity",
    "reserve_bytes": "reserve",
}
PARAM_NAMES = {flag: name for name, flag in FLAG_NAMES.items()}
assert set(FLAG_NAMES) == set(LEVERS)

MAX_PINS = 8


@dataclass(frozen=True)
class Pin:
    """A pinned scenario: a label and every lever (Scenario parameter names, SI values)."""

    name: str
    levers: dict


def encode_value(name: str, value) -> str:
    """One lever as query text (``reserve`` in GiB, ``no-gqa`` as true/false)."""
    if name == "gqa":
        return "false" if value else "true"
    if name == "reserve_bytes":
        return f"{value / GiB:g}"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def decode_value(name: str, text: str):
    """Query text back to a lever value, validated by the Scenario's parameter.

    Raises:
        ValueError: the text is not a valid value; the message names the flag and
            what it accepts.
    """
    flag = FLAG_NAMES[name]
    p = Scenario.param[name]
    try:
        if name == "gqa":
            if text.lower() not in ("true", "false", "1", "0"):
                raise ValueError
            value = text.lower() not in ("true", "1")
        elif name == "reserve_bytes":
            gib = float(text)
            if not math.isfinite(gib) or gib < 0:
                raise ValueError
            value = gib * GiB
        elif isinstance(p, param.Integer):
            number = float(text)
            if not number.is_integer():  # "4" and "4.0" are four; "4.5" is refused
                raise ValueError
            value = int(number)
        elif name == "acceptance":
            value = float(text)
        else:
            value = text.lower()  # catalogue and precision ids are lower case
    except ValueError:
        raise ValueError(f"{flag}={text!r} is not {_accepted(name)}") from None
    try:
        Scenario(**{name: value})  # param validates bounds and selector ids
    except ValueError:
        raise ValueError(f"{flag}={text!r} is not {_accepted(name)}") from None
    return value


def _accepted(name: str) -> str:
    p = Scenario.param[name]
    if name == "gqa":
        return "true or false"
    if name == "reserve_bytes":
        return "a number of GiB >= 0"
    objects = getattr(p, "objects", None)
    if objects:
        return "one of " + ", ".join(map(str, objects))
    lo, hi = p.bounds
    return f"a number from {lo:g} to {hi:g}" if name == "acceptance" else f"a whole number from {lo} to {hi}"


class LinkState(NamedTuple):
    """What a permalink restores: valid levers, pins, a custom GPU, and notices for what was ignored."""

    levers: dict
    pins: list[Pin]
    notices: list[str]
    custom_gpu: Accelerator | None


def to_query(levers: dict, pins: list[Pin] | tuple[Pin, ...] = (), custom_gpu: Accelerator | None = None
             ) -> dict[str, str]:
    """The query parameters of a permalink for ``levers``, ``pins`` and a custom GPU."""
    query = {FLAG_NAMES[name]: encode_value(name, levers[name]) for name in LEVERS}
    if custom_gpu is not None:
        query["custom-gpu"] = json.dumps(accelerator_form(custom_gpu), separators=(",", ":"))
    if pins:
        # A pin lists only the levers that differ from the defaults, to keep links short.
        defaults = Scenario().levers()
        query["pins"] = json.dumps(
            [
                {"name": pin.name, **{FLAG_NAMES[n]: encode_value(n, pin.levers[n])
                                      for n in LEVERS if pin.levers[n] != defaults[n]}}
                for pin in pins
            ],
            separators=(",", ":"),
        )
    return query


def from_query(query: dict[str, str]) -> LinkState:
    """Levers, pins, a custom GPU and notices from permalink query parameters.

    Args:
        query: flag name -> text (unknown names are reported, not applied).

    Returns:
        a :class:`LinkState`: the valid levers (Scenario parameter names), the
        valid pins (each completed from the defaults), the custom GPU if the link
        defines one, and one notice per value that was ignored, saying what and why.
    """
    levers, notices = {}, []
    custom = _custom_gpu_from_query(query.get("custom-gpu"), notices)
    for key, text in query.items():
        if key in ("pins", "embed", "custom-gpu"):
            continue
        if key not in PARAM_NAMES:
            notices.append(f"ignored unknown parameter {key!r}")
            continue
        if key == "gpu" and custom is not None and text == custom.id:
            levers["gpu"] = text
            continue
        if key == "model" and text.startswith("config-"):
            notices.append(f"ignored model={text!r}: a config.json read in another session does not travel in "
                           "links; paste it again under Bring your own")
            continue
        try:
            levers[PARAM_NAMES[key]] = decode_value(PARAM_NAMES[key], text)
        except ValueError as exc:
            notices.append(f"ignored {exc}")
    pins = _pins_from_query(query.get("pins"), notices)
    return LinkState(levers, pins, notices, custom)


def _custom_gpu_from_query(text: str | None, notices: list[str]) -> Accelerator | None:
    if not text:
        return None
    try:
        form = json.loads(text)
        if not isinstance(form, dict):
            raise ValueError("not a JSON object")
        known = {"name", "bandwidth_tbs", "capacity_gb", "reference", "bf16", "fp8", "int8", "fp4"}
        missing = {"name", "bandwidth_tbs", "capacity_gb", "bf16"} - set(form)
        if missing or set(form) - known:
            raise ValueError(f"needs name, bandwidth_tbs, capacity_gb and bf16 (optional fp8, int8, fp4, reference); "
                             f"missing {sorted(missing)}, unknown {sorted(set(form) - known)}")
        return custom_accelerator(**form)
    except ValueError as exc:
        notices.append(f"ignored custom-gpu: {exc}")
        return None


def _pins_from_query(text: str | None, notices: list[str]) -> list[Pin]:
    if not text:
        return []
    try:
        records = json.loads(text)
        if not isinstance(records, list):
            raise ValueError
    except ValueError:
        notices.append("ignored pins: not a JSON list")
        return []
    pins = []
    for i, rec in enumerate(records[:MAX_PINS]):
        if not isinstance(rec, dict):
            notices.append(f"ignored pin {i + 1}: not an object")
            continue
        name = str(rec.get("name") or f"pin {i + 1}")[:40]
        levers = Scenario().levers()
        for key, value in rec.items():
            if key == "name":
                continue
            if key not in PARAM_NAMES:
                notices.append(f"pin {name!r}: ignored unknown parameter {key!r}")
                continue
            try:
                levers[PARAM_NAMES[key]] = decode_value(PARAM_NAMES[key], str(value))
            except ValueError as exc:
                notices.append(f"pin {name!r}: ignored {exc}")
        pins.append(Pin(name, levers))
    if len(records) > MAX_PINS:
        notices.append(f"ignored pins after the first {MAX_PINS}")
    return pins
