"""A dead page never looks alive: the served lab when its server goes away.

Each test starts its own ``panel serve app`` (killing the shared server would
break the other browser tests), kills it with SIGKILL as a crash or a lost
machine would, and watches the page.
"""

from __future__ import annotations

import pytest
from conftest import start_lab, stop_lab

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


# The reload link's colour, the first opaque background behind it, its font and the lab's own font (the readouts').
LINK_LOOK = """(link) => {
  let el = link, bg = 'rgba(0, 0, 0, 0)';
  while (el) {
    const ripple = el.querySelector && el.querySelector(':scope > .notyf__ripple');  // Notyf paints the toast's colour
    const c = getComputedStyle(ripple || el).backgroundColor;
    if (c && c !== 'transparent' && !/rgba\\(.*, 0\\)$/.test(c)) { bg = c; break; }
    el = el.parentElement || (el.getRootNode() && el.getRootNode().host) || null;
  }
  const find = (root) => { const r = root.querySelector('[data-readout=ridge]'); if (r) return r;
    for (const e of root.querySelectorAll('*')) { if (e.shadowRoot) { const f = find(e.shadowRoot); if (f) return f; } }
    return null; };
  const lab = find(document);
  return {color: getComputedStyle(link).color, background: bg, font: getComputedStyle(link).fontFamily,
          lab: lab ? getComputedStyle(lab).fontFamily : null}; }"""


def _luminance(rgb: str) -> float:
    """WCAG relative luminance of a CSS rgb()/rgba() colour."""
    r, g, b = (float(v) / 255 for v in rgb[rgb.index("(") + 1:rgb.index(")")].split(",")[:3])
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def test_the_reload_link_reads_on_the_red_notice(page, own_server):
    # The trial: "Reload" was dark blue on the red notice (about 1.5:1), in the browser's serif.
    proc, url = own_server()
    open_lab(page, url)
    kill(proc)
    notice = page.locator(".notyf__toast", has_text=LOST)
    notice.wait_for(state="visible", timeout=5000)
    look = notice.locator("a.reload-link").evaluate(LINK_LOOK)
    light, dark = sorted((_luminance(look["color"]), _luminance(look["background"])), reverse=True)
    assert (light + 0.05) / (dark + 0.05) >= 4.5, look
    assert look["lab"] and look["font"] == look["lab"], look


def test_an_embedded_lab_does_not_toast_connected(page, lab_url):
    """The ready notice is the full page's; in a 500 × 450 iframe it covered the levers drawer on every load."""
    seen = []
    page.set_viewport_size({"width": 500, "height": 450})
    page.goto(lab_url + "?embed=true")
    page.locator("[data-readout=embed-summary]").wait_for()
    for _ in range(40):  # the toast would show for 3 s from the page's ready
        seen += page.locator(".notyf__toast").all_inner_texts()
        page.wait_for_timeout(100)
    assert seen == []
    # The full page still says it (the same server, the same notification library).
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(lab_url)
    page.locator(".notyf__toast", has_text="Connected: the lab is live.").wait_for(timeout=10_000)


def _overlaps(a: dict, b: dict) -> bool:
    return a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"] and \
        a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]


def test_the_ready_notice_shows_in_an_empty_corner_in_the_labs_font(page, lab_url):
    """At 1280 x 720 the ready notice covered the readouts for its 3 s (Panel's bottom right), in the
    browser's serif: Notyf draws outside every component's stylesheet."""
    clear_of = (".readouts", "[data-readout=memory]", ".levers")
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(lab_url)
    toast = page.locator(".notyf__toast", has_text="Connected: the lab is live.")
    toast.wait_for(timeout=10_000)
    page.wait_for_timeout(500)  # Notyf's slide-in
    box = toast.bounding_box()
    for selector in clear_of:
        other = page.locator(selector).first.bounding_box()
        assert other is not None and not _overlaps(box, other), (selector, box, other)
    font = toast.get_by_text("Connected: the lab is live.").evaluate("e => getComputedStyle(e).fontFamily")
    lab_font = page.locator("[data-readout=memory]").first.evaluate("e => getComputedStyle(e).fontFamily")
    assert "serif" not in font.replace("sans-serif", "") and "Times" not in font, font
    assert font.split(",")[0] == lab_font.split(",")[0], (font, lab_font)
    # The screen reader's announcer reads the notice as text: no markup in it (a new user's trial heard a span).
    announced = page.locator(".notyf-announcer").text_content()
    assert "Connected: the lab is live." in announced and "<" not in announced, announced


def test_present_mode_opens_without_the_ready_notice(page, lab_url):
    """On a projector a long tour card reaches every corner (a helper's trial: the toast sat on step 6's note for
    its 3 s); present mode shows the lab, and the lost-connection notice stays (its own test above)."""
    seen = []
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(lab_url + "?present=true&tour=7")
    page.locator("[data-step='7']").wait_for()
    for _ in range(40):
        seen += page.locator(".notyf__toast").all_inner_texts()
        page.wait_for_timeout(100)
    assert seen == []


def test_a_click_in_a_tab_opened_later_leaves_the_servers_log_clean(page, own_server, tmp_path):
    """The Pins tab's buttons arrive with their whole model (the tab was rendered after the page loaded); Bokeh
    keeps the server's own and logged "BokehUserWarning: reference already known" for every such click."""
    _proc, url = own_server()
    open_lab(page, url)
    page.get_by_text("Pins", exact=True).first.click()
    page.locator(".pin-preset button").click()
    page.locator("[data-pin='3']").wait_for(timeout=5000)
    page.locator(".pin-clear button").click()
    page.locator("[data-readout=pins]", has_text="No pins yet").wait_for(timeout=5000)
    log = (tmp_path / "panel-serve-0.log").read_text()
    assert "WebSocket connection opened" in log
    assert "reference already known" not in log and "Traceback" not in log, log
