"""Connection notices: a page whose server has gone never looks alive.

Panel's notification area announces, on every served page:

* when the websocket to the server drops (the server stopped, restarted or the
  network went away): a notice that stays until the page is reloaded, saying
  that moves are no longer computed, with a reload link.  The link is the
  page's own address, and the lab rewrites the address bar with every change
  (see :mod:`app.permalink_view`), so reloading rebuilds what was on screen;
* when the page is connected and ready (a short notice that fades), except in an
  embedded lab or one opened in present mode (:func:`quiet_ready_notice`).

The texts are Panel's ``disconnect_notification`` and ``ready_notification``;
the disconnect notice is rendered as HTML by Panel's notification library, so
it is a fixed string here and never holds user text.
"""

from __future__ import annotations

from html import escape

#: The lab's font (its readouts'): the notice's toast would otherwise inherit the browser's serif.
NOTICE_FONT = "Helvetica, Arial, sans-serif"
#: The reload link: white and underlined on the notice's dark red (#b71c1c, 6.6:1), not the browser's link blue
#: (about 1.5:1 on red).  Inline: the disconnect notice is drawn outside the stylesheets the lab can reach.
RELOAD_LINK_STYLE = "color: #ffffff; text-decoration: underline; font-weight: 700"
#: Shown, and kept, when the connection to the server is lost.  ``href=""`` is
#: the current address, query included, as last rewritten by the lab.
DISCONNECT_NOTICE = (
    "Connection to the server lost: moves are no longer computed. "
    f'<a href="" class="reload-link" style="{RELOAD_LINK_STYLE}">Reload</a> to reconnect; the address keeps '
    "your settings."
)
#: The notices' font, for the page's head (Notyf draws its toasts in the page's body, outside every component's
#: stylesheet: in the browser's serif otherwise).  A stylesheet, not a span around each text: Notyf's screen-reader
#: announcer reads a notice's text as given, and read the span's markup aloud (a new user's trial).
NOTICE_CSS = f".notyf {{ font-family: {NOTICE_FONT}; }}"


def notice_html(text: str) -> str:
    """``text`` as a notice shows it: escaped (Notyf renders a notice's text as HTML)."""
    return escape(text)


#: Shown for a few seconds once the page is connected and ready.
READY_NOTICE = notice_html("Connected: the lab is live.")

#: ``pn.extension`` settings that turn the notices on: ``pn.extension(..., **CONNECTION_NOTICES)``.
#: They go through ``pn.extension`` (not ``pn.config`` alone) so that the page
#: also loads the notification library's script; their font comes from :data:`NOTICE_CSS` in the page's head.
CONNECTION_NOTICES = {
    "notifications": True,
    "global_css": [NOTICE_CSS],
    "disconnect_notification": DISCONNECT_NOTICE,
    "ready_notification": READY_NOTICE,
}

#: Where the notices show, by layout: a corner that layout leaves empty.  Panel's default, the bottom right, put
#: the ready notice over the readouts of the full page for its three seconds.  On a projector (no ready notice:
#: :func:`quiet_ready_notice`) the lost-connection notice keeps clear of the memory verdict at the top right.
NOTICE_POSITION = {"page": "top-right", "present": "bottom-right"}


#: Notice colours dark enough for their white text (WCAG AA contrast); Notyf's own green and
#: red are too light. Notyf overrides its built-in types by name.
NOTICE_TYPES = [
    {"type": "success", "background": "#1b5e20"},
    {"type": "error", "background": "#b71c1c"},
]


def style_notices() -> None:
    """Give this session's notification area the lab's notice colours (no-op outside a served session)."""
    import panel as pn

    area = pn.state.notifications
    if area is not None:
        area.types = [*[t for t in area.types if t["type"] not in {n["type"] for n in NOTICE_TYPES}], *NOTICE_TYPES]
        area.position = NOTICE_POSITION["page"]


def place_notices(present: bool) -> None:
    """Put this session's notices in the corner the layout leaves empty (:data:`NOTICE_POSITION`).

    No-op outside a served session.  Called when the layout changes; a notice on screen is redrawn there.
    """
    import panel as pn

    area = pn.state.notifications if pn.state.curdoc is not None else None
    if area is not None:
        area.position = NOTICE_POSITION["present" if present else "page"]


def quiet_ready_notice() -> None:
    """No "connected" toast for this session's page (an embedded lab, present mode); the lost-connection notice stays.

    In a 500 × 450 iframe the ready notice covered the levers drawer for its three seconds on every load, and a
    page of documentation with several embedded labs flashed one in each.  No-op outside a served session.
    """
    import panel as pn

    area = pn.state.notifications if pn.state.curdoc is not None else None
    if area is not None:
        area.js_events = {event: notice for event, notice in area.js_events.items() if event != "document_ready"}
