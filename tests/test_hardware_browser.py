"""The hardware view served on its own (``pn.serve``) in headless Chromium."""

import panel as pn
import pytest
from conftest import free_port, wait_for_url

from app.hardware_view import HardwareView

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def hw_url():
    port = free_port()
    server = pn.serve({"hw": lambda: HardwareView(gpu="h100-sxm")}, port=port, address="127.0.0.1", show=False,
                      threaded=True, websocket_origin=[f"127.0.0.1:{port}"])
    url = f"http://127.0.0.1:{port}/hw"
    wait_for_url(url)
    yield url
    server.stop()


def source(page, name, column):
    return page.evaluate(f"Array.from(Bokeh.documents[0].get_model_by_name('{name}').data['{column}'])")


def test_atlas_tour_and_sections_in_the_browser(page, hw_url):
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(hw_url)
    page.wait_for_function("Bokeh.documents.length > 0 && Bokeh.documents[0].get_model_by_name('hw-kernels')",
                           timeout=30000)
    x = source(page, "hw-kernels", "x")
    assert round(x[0]) == 1365 and x[1] == 1  # GEMM 4096³ and batch-1 decode
    page.get_by_text("Start the hardware tour ▶").click()
    page.locator("[data-step='1']").wait_for(timeout=10000)
    assert "295 FLOP per byte" in page.locator("[data-step='1']").inner_text()
    for step in range(2, 9):
        page.get_by_text("Next ▶").click()
        page.locator(f"[data-step='{step}']").wait_for(timeout=10000)
    assert "overhead-bound" in page.locator("[data-step='8']").inner_text()
    # Step 8 brought the three-ceilings section to the front (dynamic tabs: its figure is now live).
    page.wait_for_function("Bokeh.documents[0].get_model_by_name('hw-three-times') !== null", timeout=10000)
    assert source(page, "hw-three-times", "us")[2] == pytest.approx(544)
    page.get_by_text("Leave the tour").click()
    page.locator("[data-step]").wait_for(state="hidden", timeout=10000)
    page.get_by_text("Generations", exact=True).click()
    page.wait_for_function("Bokeh.documents[0].get_model_by_name('hw-ridges') !== null", timeout=10000)
    assert [round(v) for v in source(page, "hw-ridges", "x")[:3]] == [139, 153, 295]
    assert errors == []
