"""The lever table: each lever of a scenario declared once, every surface generated from it.

A :class:`Lever` is one row: the ``param`` parameter (type, default, bounds,
soft bounds for a widget, label and doc with symbol and unit) plus what the
edges need and the parameter cannot hold — the command-line flag (which is also
the permalink's query key), the unit a person types at the edges (the model keeps
SI), whether a Boolean flag says the opposite (``--no-gqa``) and the stops a
discrete slider offers.  :class:`core.Scenario` takes its parameters from the
table, and the command line (:meth:`LeverTable.add_arguments`), the permalink
codec (:meth:`Lever.encode`, :meth:`Lever.decode`), the tour's base, the Panel
widgets and the offline page's sliders are all generated from it, so adding a
lever is one row plus its formula.

This follows ``param/cmd.py``'s idea of building an argument parser from
parameters, with one validation path (:meth:`Lever.decode`) shared by the
command line and the permalink.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Iterator
from dataclasses import dataclass

import param

from .units import parse_number, underflows

__all__ = ["Lever", "LeverTable"]

#: Longest text :meth:`Lever.decode` reads; a number or id is never longer, and a
#: 10-megabyte "number" must not cost the server a big-integer parse.
MAX_TEXT = 64


@dataclass(frozen=True)
class Lever:
    """One lever: a Scenario parameter and how it appears at the edges.

    Attributes:
        name: the Scenario parameter's name (``"spec_k"``).
        parameter: the ``param`` parameter itself (Selector, Integer, Number or
            Boolean); its label, doc, bounds and soft bounds are the lever's.
        flag: command-line flag without the dashes, also the permalink's query
            key (``"spec-k"``).
        unit: the unit a person reads and types at the edges when it is not the
            model's SI unit (``"GiB"`` for the reserve); "" when they agree.
        scale: SI value = edge value × ``scale`` (``2**30`` for GiB).
        negated: a Boolean whose flag says the opposite (``--no-gqa`` sets
            ``gqa = False``).
        stops: values a discrete slider offers (a value set elsewhere is added).
        more: shown under the controls' "More levers" section, which is built when
            first opened and opens itself when such a lever leaves its default (a
            link, a tour step): the first page shows the articles' levers only.
        deploys: fixed when the model is deployed: read once into the step profile
            (:func:`core.profiles.deployment`, kept) rather than by each step, so a move of it
            builds a new profile and a move of any other lever does not.
        symbol: the articles' symbol for the lever (``"B"``, ``"S"``, ``"TP"``), or "" where they have none;
            the full page's box for an exact value is named after it ("exact B").
        css: the widget's CSS class (tests and styles find it by this).
    """

    name: str
    parameter: param.Parameter
    flag: str
    unit: str = ""
    scale: float = 1.0
    negated: bool = False
    stops: tuple = ()
    more: bool = False
    deploys: bool = False
    symbol: str = ""

    @property
    def css(self) -> str:
        return self.name.replace("_", "-")

    @property
    def default(self):
        return self.parameter.default

    @property
    def label(self) -> str:
        return self.parameter.label + (f" ({self.unit})" if self.unit else "")

    # -- text at the edges ----------------------------------------------------------
    def encode(self, value) -> str:
        """``value`` (SI) as the text of a flag or query value.

        ``reserve_bytes = 3·2^30`` is ``"3"`` (GiB); ``gqa = True`` is ``no-gqa=false``.
        """
        if isinstance(self.parameter, param.Boolean):
            return "true" if bool(value) != self.negated else "false"
        if isinstance(self.parameter, param.Integer):
            return str(int(value))
        if isinstance(self.parameter, param.Number):
            return f"{value / self.scale:.15g}"
        return str(value)

    def decode(self, text, parameter: param.Parameter | None = None):
        """Text of a flag or query value back to the lever's SI value, validated.

        Args:
            text: what a person typed (str; other types are read as their str).
            parameter: the parameter to validate against; by default the table's.
                A scenario passes its own copy, whose selectors also offer what
                the session added (a custom GPU, a pasted model).

        Raises:
            ValueError: one line naming the flag, the text and what is accepted.
        """
        p = parameter if parameter is not None else self.parameter
        raw = str(text)
        if len(raw) > MAX_TEXT:
            raise ValueError(f"{self.flag}={raw[:20]!r}… is {len(raw):,} characters long, not {self.accepted(p)}")
        try:
            value = self._parse(raw.strip(), p)
        except (ValueError, OverflowError):
            raise ValueError(f"{self.flag}={raw!r} is not {self.accepted(p)}") from None
        return value

    def _parse(self, text: str, p: param.Parameter):
        if isinstance(p, param.Boolean):
            words = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
            if text.lower() not in words:
                raise ValueError
            return words[text.lower()] != self.negated
        if isinstance(p, param.Selector):
            value = text.lower()  # catalogue and precision ids are lower case
            if value not in p.objects:
                raise ValueError
            return value
        number = parse_number(text)  # ASCII digits only: float() also reads a fullwidth "４"
        if not math.isfinite(number) or underflows(text, number):  # 1e-400 is not the 0 it reads as
            raise ValueError
        if isinstance(p, param.Integer):
            if not number.is_integer():  # "4" and "4.0" are four; "4.5" is refused
                raise ValueError
            value = int(number)
        else:
            value = number * self.scale
        lo, hi = p.bounds or (None, None)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise ValueError
        return value

    def accepted(self, parameter: param.Parameter | None = None) -> str:
        """What :meth:`decode` accepts, in words."""
        p = parameter if parameter is not None else self.parameter
        if isinstance(p, param.Boolean):
            return "true or false"
        if isinstance(p, param.Selector):
            return "one of " + ", ".join(map(str, p.objects))
        lo, hi = p.bounds or (None, None)
        unit = f" {self.unit}" if self.unit else ""
        kind = "a whole number" if isinstance(p, param.Integer) else "a number"
        lo_text = _number(lo / self.scale) if lo is not None else None
        hi_text = _number(hi / self.scale) if hi is not None else None
        if lo_text is not None and hi_text is not None:
            return f"{kind} from {lo_text} to {hi_text}{unit}"
        of_unit = f" of{unit}" if unit else ""
        if lo_text is not None:
            return f"{kind}{of_unit} >= {lo_text}"
        return kind + of_unit

    # -- the command line -------------------------------------------------------------
    def add_argument(self, parser: argparse.ArgumentParser) -> None:
        """Add ``--<flag>`` to ``parser``; its value stays text until :meth:`decode`.

        The default is ``None`` (not given), so a caller can tell a typed value from
        the table's default.
        """
        doc = " ".join((self.parameter.doc or "").split())
        if isinstance(self.parameter, param.Boolean):
            parser.add_argument(f"--{self.flag}", dest=self.name, action="store_const",
                                const="true", default=None, help=doc)
            return
        shown = self.encode(self.default)
        doc = doc if doc.endswith(".") else doc + "."
        parser.add_argument(f"--{self.flag}", dest=self.name, default=None, metavar=self._metavar(), action=_Once,
                            help=f"{doc} Accepted: {self.accepted()}. Default: {shown}.")

    def _metavar(self) -> str:
        if isinstance(self.parameter, param.Selector):
            return "ID"
        return self.unit.upper() if self.unit else ("N" if isinstance(self.parameter, param.Integer) else "X")


class _Once(argparse.Action):
    """Stores a flag's text; the same flag again with another value is refused, naming both.

    argparse would keep the last silently.  A link given a key twice uses the first and says so
    (:func:`core.permalink.from_query`); a command line has no page to say it on, so it stops.
    """

    def __call__(self, parser, namespace, values, option_string=None):
        before = getattr(namespace, self.dest, None)
        if before is not None and before != values:
            parser.error(f"{option_string} given twice ({before!r} and {values!r}): give it once")
        setattr(namespace, self.dest, values)


def _number(x: float) -> str:
    """A bound as text: whole numbers with thousands separators (2,097,152), others as written (0.5)."""
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:g}"


class LeverTable:
    """The ordered levers of a scenario (the order the controls show them).

    Iterating yields :class:`Lever` rows; ``table["batch"]`` looks one up by
    parameter name, ``table.by_flag("spec-k")`` by flag.
    """

    def __init__(self, *levers: Lever):
        self._rows = {lever.name: lever for lever in levers}
        self._flags = {lever.flag: lever for lever in levers}
        if len(self._flags) != len(self._rows):
            raise ValueError("two levers share a flag")

    def __iter__(self) -> Iterator[Lever]:
        return iter(self._rows.values())

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, name: str) -> bool:
        return name in self._rows

    def __getitem__(self, name: str) -> Lever:
        return self._rows[name]

    @property
    def names(self) -> tuple[str, ...]:
        """Parameter names, in table order."""
        return tuple(self._rows)

    def by_flag(self, flag: str) -> Lever | None:
        """The lever whose flag (query key) is ``flag``, or None."""
        return self._flags.get(flag)

    def defaults(self) -> dict:
        """Every lever's default (SI values), by parameter name."""
        return {lever.name: lever.default for lever in self}

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        """One ``--flag`` per lever (see :meth:`Lever.add_argument`)."""
        for lever in self:
            lever.add_argument(parser)
