"""A dead page never looks alive: the served lab when its server goes away.

Each test starts its own ``panel serve app`` (killing the shared server would
break the other browser tests), kills it with SIGKILL as a crash or a lost
machine would, and watches the page.
"""

from __future__ import annotations

import pytest
from conftest import start_lab, stop_lab

pytestmark = pytest.mark.browser

WORKLOAD_X = "Array.from(Bokeh.documents[0].get_model_by_name('workload').data.x)"
LOST = "Connection to the server lost"


@pytest.fixture
def own_server(tmp_path):
    """A lab server of this test's own: (process, url, log directory); killed at the end if still running."""
    servers = []

    def start(port: int | None = None):
        proc, url = start_lab(tmp_path / f"panel-serve-{len(servers)}.log", port=port)
        servers.append(proc)
        return proc, url

    yield start
    for proc in servers:
        if proc.poll() is None:
            stop_lab(proc)


def open_lab(page, url: str) -> None:
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(url)
    page.locator("[data-readout=ridge]").wait_for()


def kill(proc) -> None:
    proc.kill()
    proc.wait(timeout=10)


def test_a_killed_server_is_announced_within_two_seconds(page, own_server):
    proc, url = own_server()
    open_lab(page, url)
    # Connected and ready is said first, so the page never looks live before it is.
    page.locator(".notyf__toast", has_text="Connected: the lab is live.").wait_for(timeout=10_000)
    assert page.locator(".notyf__toast", has_text=LOST).count() == 0

    kill(proc)
    notice = page.locator(".notyf__toast", has_text=LOST)
    notice.wait_for(state="visible", timeout=2000)
    assert "moves are no longer computed" in notice.inner_text()
    # The reload link is the page's own address (query included).
    assert notice.locator("a.reload-link").get_attribute("href") == ""


def test_reload_after_a_restart_keeps_the_state(page, own_server):
    proc, url = own_server()
    open_lab(page, f"{url}?batch=8")
    assert page.evaluate(WORKLOAD_X) == [8]  # I = 2·B·k/p = 2·8·1/2 FLOP/byte at BF16
    handle = page.locator(".batch .noUi-handle")
    handle.focus()
    page.keyboard.press("ArrowRight")  # the next batch stop after 8 is 12
    page.wait_for_function("window.location.search.includes('batch=12')", timeout=10_000)

    port = int(url.split(":")[2].split("/")[0])
    kill(proc)
    page.locator(".notyf__toast", has_text=LOST).wait_for(state="visible", timeout=2000)

    own_server(port)  # the server comes back on the same address
    # The notice has stayed through the restart (it does not fade like the ready one).
    notice = page.locator(".notyf__toast", has_text=LOST)
    assert notice.is_visible()
    notice.locator("a.reload-link").click()
    page.locator("[data-readout=ridge]").wait_for()
    assert "batch=12" in page.evaluate("window.location.search")
    assert page.evaluate(WORKLOAD_X) == [12]
    assert page.locator("[data-readout=intensity]").inner_text() == "12 FLOP/byte"
    assert page.locator(".notyf__toast", has_text=LOST).count() == 0
