"""The Hardware tab in present mode at 1280×720 (a projector), found by a new-user trial: its text size, its labels
and what shows above the fold."""

import pytest

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1280, "height": 720}
HEADINGS = ("GEMM C = AB", "Decode matrix-vector (the main lab's B)", "Elementwise ops", "Show your work")


def _font_sizes(page, texts) -> dict:
    """Each visible text's computed font size (CSS px)."""
    size = "e => parseFloat(getComputedStyle(e).fontSize)"
    return {t: page.get_by_text(t, exact=True).first.evaluate(size) for t in texts}


def _wait_for_sizes(page, texts, at_least, tries=20) -> dict:
    """The texts' font sizes, polled every 0.5 s until all are ``at_least`` px (a re-render lands late)."""
    for _ in range(tries):
        sizes = _font_sizes(page, texts)
        if min(sizes.values()) >= at_least:
            break
        page.wait_for_timeout(500)
    return sizes


@pytest.mark.parametrize("route", ["link", "click", "toggle"])
def test_hardware_text_is_projector_size_however_the_tab_was_reached(page, lab_url, route):
    # The trial: the tab opened by a click after the page loaded in present mode had 12-px headings, the same tab
    # opened by ?present=true&tab=Hardware 18 px.
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size(PROJECTOR)
    if route == "link":
        page.goto(f"{lab_url}?present=true&tab=Hardware")
    elif route == "click":
        page.goto(f"{lab_url}?present=true")
        page.locator("[data-readout=ridge]").first.wait_for()
        page.get_by_text("Hardware", exact=True).click()
    else:
        page.goto(f"{lab_url}?tab=Hardware")
        page.get_by_text(HEADINGS[0], exact=True).wait_for(timeout=30_000)
        assert max(_font_sizes(page, HEADINGS).values()) < 18  # the built look first
        page.locator(".present-toggle button").click()
        page.wait_for_function("window.location.search.includes('present=true')", timeout=10_000)
    page.get_by_text(HEADINGS[0], exact=True).wait_for(timeout=30_000)
    sizes = _wait_for_sizes(page, HEADINGS, 18)
    assert min(sizes.values()) >= 18, sizes
    assert errors == []
