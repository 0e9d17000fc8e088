"""The served lab fetches nothing from outside its own server, with the class setting too.

A classroom network may have no internet: every script and stylesheet must come
from the lab's server.  Panel 1.9 writes its stylesheet URLs for its CDN and
rewrites them only for a page its GET renders; with ``--reuse-sessions`` the
session is built when the websocket connects, which app/main.py covers.
"""

import pytest
from conftest import start_lab, stop_lab


@pytest.mark.parametrize("flags", [[], ["--reuse-sessions"]], ids=["defaults", "reuse-sessions"])
def test_every_request_stays_on_the_lab_server(page, tmp_path, flags):
    proc, url = start_lab(tmp_path / "server.log", flags)
    try:
        outside, failed = [], []
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(("http://127.0.0.1", "data:",
                                                                                     "blob:")) else None)
        # A request the page's own navigation cancels (net::ERR_ABORTED: a notice's icon font still loading when the
        # test moves on) is not one the server failed.
        page.on("requestfailed", lambda r: failed.append(r.url) if r.failure != "net::ERR_ABORTED" else None)
        for _ in range(2):  # the second page is the one --reuse-sessions answers from its cache
            page.goto(url)
            page.locator("[data-readout=ridge]").wait_for()
        page.get_by_text("Bring your own", exact=True).click()  # file droppers, built on first open
        page.locator("input[type=file]").first.wait_for(state="attached")
        # Panes updated while their tab is hidden (a pin, a lever move, the hardware tour's steps) are updated
        # outside the document, where Panel fell back to its CDN (found by a trial, on the Hardware tab).
        page.get_by_text("Compare", exact=True).click()
        page.get_by_text("Roofline", exact=True).first.click()
        page.locator(".pin button").click()
        page.get_by_text("Compare", exact=True).click()
        page.goto(url + "?present=true&tab=Hardware")
        page.get_by_text("Hardware tour", exact=False).first.wait_for()
        for _ in range(8):
            page.keyboard.press("PageDown")
            page.wait_for_timeout(700)
        page.wait_for_timeout(1000)
        assert outside == [] and failed == []
        # The markdown stylesheet arrived: headings carry no visible "¶" anchor.
        assert not page.get_by_text("¶", exact=True).first.is_visible()
    finally:
        stop_lab(proc)
