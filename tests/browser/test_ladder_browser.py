"""The Ladder and Serving tabs in headless Chromium at 1280×720: the rows and the chart show, a rung switched off
leaves the table and the link, the link brings it back, and the Serving tab's sections draw."""

import os
from pathlib import Path

#: ``ROOFLINE_SHOTS=<folder>`` saves the tab as it looks (``ladder.png``) for a person to check.
SHOTS = os.environ.get("ROOFLINE_SHOTS")


def test_the_ladder_tab_shows_toggles_and_links_its_rungs(page, lab_url):
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(lab_url + "?tab=Ladder")
    row = page.locator("tr[data-rung='paged_attention']")
    row.wait_for(timeout=30000)
    assert "256; 4; 0.5" in row.inner_text() and "4,096" in row.inner_text()
    points = page.evaluate("Array.from(Bokeh.documents[0].get_model_by_name('ladder-points').data.x)")
    assert points == [1, 9, 192, 768, 768, 4096, 4096, 4096]
    if SHOTS:
        page.screenshot(path=str(Path(SHOTS) / "ladder.png"))
    # The table fits beside the readouts: its last column is not cut off.
    fits = page.locator("table.ladder").evaluate("t => t.parentElement.scrollWidth <= t.parentElement.clientWidth")
    assert fits
    page.get_by_role("button", name="2 quantization").click()  # off
    page.locator("tr[data-rung='weight_quantization']").wait_for(state="detached", timeout=20000)
    page.wait_for_function("() => location.search.includes('ladder=')", timeout=10000)
    search = page.evaluate("location.search")
    assert "ladder=continuous_batching%2Cspeculative_decoding%2Cgqa_mla%2Cpaged_attention" in search
    page.goto(lab_url + search)
    page.locator("tr[data-rung='paged_attention']").wait_for(timeout=30000)
    assert page.locator("tr[data-rung='weight_quantization']").count() == 0
    assert page.locator(".ladder-order input").input_value() == "1,3,4,5,6,7"
    page.get_by_text("Serving", exact=True).click()
    page.locator("[data-section='zero']").wait_for(timeout=30000)
    assert page.locator("svg.spark polyline").count() == 2
    assert "inside the paper's range" in page.locator("[data-readout=paging]").inner_text()
    assert errors == []
