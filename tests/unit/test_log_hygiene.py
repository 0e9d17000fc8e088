"""app/log_hygiene.py: a crafted link does not write kilobytes into the server's log."""

from __future__ import annotations

import logging

from panel.util import parse_query

from app import log_hygiene


def test_panels_line_about_an_unreadable_query_value_is_cut(caplog):
    log_hygiene.install()
    log_hygiene.install()  # once per process, however many sessions run main.py
    assert sum(isinstance(f, log_hygiene.ShortLogLines) for f in logging.getLogger("panel.util").filters) == 1
    value = "[" * 2000 + "x"  # what a helper's crafted link sent: 4 KB quoted in full per request
    with caplog.at_level(logging.WARNING, logger="panel.util"):
        assert "pins" not in parse_query("?pins=" + value)  # Panel ignores it, and says so
    lines = [r.getMessage() for r in caplog.records if r.name == "panel.util"]
    assert len(lines) == 1 and "Could not parse value" in lines[0]
    assert len(lines[0]) < log_hygiene.MAX_LOG_LINE + 40 and lines[0].endswith("(2,077 characters, cut)")


def test_a_short_line_is_kept_whole():
    record = logging.LogRecord("panel.util", logging.WARNING, __file__, 1, "value %r ignored", ("[1",), None)
    assert log_hygiene.ShortLogLines().filter(record) and record.getMessage() == "value '[1' ignored"


def test_a_browser_closed_mid_update_writes_no_traceback_and_other_errors_still_do(caplog):
    """A class's server log filled with asyncio's "Task exception was never retrieved … WebSocketClosedError" as
    browsers closed while an update was on its way; the report of any other exception is kept.  (The reports are
    made by the loop's own exception handler, as asyncio makes them, without running the loop: the suite's browser
    tests may hold one running in this process.)"""
    import asyncio

    from tornado.websocket import WebSocketClosedError

    log_hygiene.install()
    log_hygiene.install()
    assert sum(isinstance(f, log_hygiene.ClosedSocketReports) for f in logging.getLogger("asyncio").filters) == 1
    loop = asyncio.new_event_loop()
    try:
        with caplog.at_level(logging.ERROR, logger="asyncio"):
            for exception in (WebSocketClosedError(), RuntimeError("a real failure")):
                loop.call_exception_handler({"message": "Task exception was never retrieved", "exception": exception})
    finally:
        loop.close()
    reports = [r for r in caplog.records if r.name == "asyncio"]
    assert len(reports) == 1 and isinstance(reports[0].exc_info[1], RuntimeError)
