"""The server's log stays readable when a crafted link arrives.

Panel parses every query parameter of a page's address (``panel.util.parse_query``) and, for a value it cannot
read, logs a warning that quotes the whole value: a crafted link (pins nested 2,000 deep, 60,000 characters of
markup) wrote kilobytes per request into the log of a classroom's server.  :class:`ShortLogLines` cuts such a
line to :data:`MAX_LOG_LINE` characters and says how long it was.  The lab's own notice on the page names the
field either way (:mod:`core.permalink`).
"""

from __future__ import annotations

import logging

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


def install() -> None:
    """Add :class:`ShortLogLines` to :data:`QUOTING_LOGGERS`, once per process (``app/main.py`` runs per session;
    ``app/app_hooks.py`` at server start, before the first request)."""
    for name in QUOTING_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, ShortLogLines) for f in logger.filters):
            logger.addFilter(ShortLogLines())
