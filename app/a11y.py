"""Accessibility repairs the widget library leaves to the page.

Bokeh 3.9's checkbox draws its text as a ``<div>`` beside the ``<input>``, so the
text neither names the box for a screen reader nor toggles it when clicked, and
noUiSlider's handles (``role="slider"``) carry no name, and announce a stop slider's
index ("7.00") rather than the value its title shows ("12"); a number box's spin buttons
have no text, a card's header button holds its title in shadow roots, and a button group
(the tab bar) marks its chosen button by colour alone.
:class:`A11yFixes`, placed once in the page, names every checkbox, slider handle, spin
button and card header after its visible label, makes each handle announce the value its
title shows, makes a checkbox's text toggle its box and each button of a group say whether
it is pressed, in every shadow root, including
the widgets of tabs and drawers built later (it looks again when the page changes).
"""

from __future__ import annotations

from pathlib import Path

import param
from panel.custom import JSComponent

#: The repairs' script (``app/a11y.js``), also run by the offline page (:mod:`app.standalone`).
REPAIRS = Path(__file__).with_name("a11y.js").read_text(encoding="utf-8")


class A11yFixes(JSComponent):
    """An invisible element whose script repairs checkbox and slider labelling across the page, and counts the
    Escape key's presses (``escapes``: the embed layout closes its Levers drawer on each; pressed inside the
    drawer, the focus returns to its header)."""

    escapes = param.Integer(default=0, doc="Times Escape was pressed in the page (the browser counts).")

    _esm = REPAIRS + """
    export function render({ model }) {
      const stop = keepFixing();
      // Escape closes the embed's Levers drawer (the server folds it on each press); pressed inside the drawer, the
      // focus goes back to the drawer's header, where it was opened, not to the page's top.
      const escape = (e) => {
        if (e.key !== "Escape") return;
        model.escapes += 1;
        const drawer = e.composedPath().find((el) => el instanceof Element && el.classList.contains("embed-drawer"));
        const header = drawer ? (drawer.shadowRoot || drawer).querySelector(".card-header") : null;
        if (header) header.focus();
      };
      document.addEventListener("keydown", escape);
      model.on("remove", () => { stop(); document.removeEventListener("keydown", escape); });
      return document.createElement("span");
    }
    """
