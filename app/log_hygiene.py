"""The server's log stays readable when a crafted link arrives.

Panel parses every query parameter of a page's address (``panel.util.parse_query``) and, for a value it cannot
read, logs a warning that quotes the whole value: a crafted link (pins nested 2,000 deep, 60,000 characters of
markup) wrote kilobytes per request into the log of a classroom's server.  :class:`ShortLogLines` cuts such a
line to :data:`MAX_LOG_LINE` characters and says how long it was.  The lab's own notice on the page names the
field either way (:mod:`core.permalink`).

A browser closed or reloaded while the server was sending it an update is normal in a class, yet each one wrote a
traceback: Panel writes a document patch with Tornado's ``WebSocketHandler.write_message``
(``panel.io.document.dispatch_tornado``, Panel 1.9) and awaits the futures it returns later; once the socket has
closed they fail with ``WebSocketClosedError``, and one that is never awaited reaches asyncio's "Task exception was
never retrieved" report, a dozen lines each.  :class:`ClosedSocketReports` drops
that report and no other (the session is discarded by Bokeh as usual; nothing is lost).
"""

from __future__ import annotations

import logging

from tornado.websocket import WebSocketClosedError

#: The longest log message kept whole (characters).
MAX_LOG_LINE = 300
#: The loggers whose lines may quote a visitor's input: Panel's query reader, and Tornado's access log (a refused
#: link's request line, up to 64 KiB) and its notes on malformed requests.
QUOTING_LOGGERS = ("panel.util", "tornado.access", "tornado.general")


class ShortLogLines(logging.Filter):
    """Cuts a log message longer than :data:`MAX_LOG_LINE` characters; keeps every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if len(message) > MAX_LOG_LINE:
            record.msg = f"{message[:MAX_LOG_LINE]}… ({len(message):,} characters, cut)"
            record.args = ()
        return True


class ClosedSocketReports(logging.Filter):
    """Drops asyncio's report of a never-retrieved ``WebSocketClosedError`` (a browser that left mid-update);
    keeps every other record."""

    def filter(self, record: logging.LogRecord) -> bool:
        exception = record.exc_info[1] if record.exc_info else None
        return not isinstance(exception, WebSocketClosedError)


def _add_once(logger_name: str, kind: type[logging.Filter]) -> None:
    logger = logging.getLogger(logger_name)
    if not any(isinstance(f, kind) for f in logger.filters):
        logger.addFilter(kind())


def install() -> None:
    """Add :class:`ShortLogLines` to :data:`QUOTING_LOGGERS` and :class:`ClosedSocketReports` to asyncio's logger,
    once per process (``app/main.py`` runs per session; ``app/app_hooks.py`` at server start, before the first
    request)."""
    for name in QUOTING_LOGGERS:
        _add_once(name, ShortLogLines)
    _add_once("asyncio", ClosedSocketReports)
