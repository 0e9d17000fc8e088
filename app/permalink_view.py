"""Permalinks: the whole state (scenario and pins) lives in the URL query.

Reading: the query of the page request (``pn.state.session_args``) is decoded
by :func:`core.permalink.from_query`; what is invalid is ignored with a visible
notice and the rest applies.  Writing: every change replaces the browser's
history entry (``history.replaceState``), so dragging a slider does not add one
entry per tick and the address bar is always a link to what is on screen.
"""

from __future__ import annotations

from html import escape
from urllib.parse import urlencode

import panel as pn

from core.permalink import Pin, to_query


def session_query() -> dict[str, str]:
    """The page request's query parameters (first value of each), or {} outside a server session."""
    args = pn.state.session_args if pn.state.curdoc and pn.state.curdoc.session_context else {}
    return {key: values[0].decode("utf-8", "replace") for key, values in (args or {}).items() if values}


class PermalinkView:
    """A hidden element whose value change rewrites the URL in place, plus the notices."""

    def __init__(self, notices: list[str], embed: bool):
        self.embed = embed
        # The value is the query string; a browser-side callback swaps it into the
        # address bar without a reload and without a new history entry.
        self.writer = pn.widgets.TextInput(value="", visible=False, css_classes=["permalink"])
        self.writer.jscallback(value="if (source.value) { window.history.replaceState(null, '', source.value) }")
        items = "".join(f"<li>{escape(n)}</li>" for n in notices)
        self.notice = pn.pane.Alert(
            f"**Part of this link was ignored**; the rest of it applies.<ul>{items}</ul>" if notices else "",
            alert_type="warning", visible=bool(notices), sizing_mode="stretch_width", css_classes=["link-notice"],
        )

    def write(self, levers: dict, pins: list[Pin], custom_gpu=None) -> None:
        """Point the address bar at ``levers``, ``pins`` and the session's own GPU, if selected."""
        query = to_query(levers, pins, custom_gpu)
        if self.embed:
            query["embed"] = "true"
        self.writer.value = "?" + urlencode(query)
