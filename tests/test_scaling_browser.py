"""Many GPUs in headless Chromium: the TP slider moves the memory bar, the ladder and the scaling chart;
a permalink with tp=4 restores it."""

import pytest

pytestmark = pytest.mark.browser


CURRENT_TP = ("(m => m && m.data.tp.length ? m.data.tp[0] : null)"
              "(Bokeh.documents[0].get_model_by_name('scaling-current'))")


def source(page, name, column):
    return page.evaluate(f"Array.from(Bokeh.documents[0].get_model_by_name('{name}').data['{column}'])")


def test_tp_slider_moves_memory_bar_ladder_and_scaling_chart(page, lab_url):
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(lab_url)
    page.locator("[data-readout=ridge]").wait_for()
    assert "DOES NOT FIT" in page.locator("[data-readout=memory]").inner_text()
    assert set(source(page, "ladder", "fill")) == {"white"}  # 70B on one H100: no rung fits
    page.get_by_text("Scaling", exact=True).click()
    page.wait_for_function(CURRENT_TP + " === 1", timeout=10000)
    assert source(page, "scaling-current", "tp") == [1]
    page.locator(".more-levers .card-header").click()  # built when first opened
    handle = page.locator(".tp .noUi-handle")
    handle.focus()
    page.keyboard.press("ArrowRight")  # stops 1 -> 2
    page.locator("[data-readout=memory]", has_text="per GPU (1 of 2, TP = 2").wait_for(timeout=5000)
    assert "→ fits" in page.locator("[data-readout=memory]").inner_text()
    page.wait_for_function(CURRENT_TP + " === 2", timeout=5000)
    page.get_by_text("Roofline", exact=True).click()  # tabs are dynamic: the chart is re-rendered on return
    page.wait_for_function("(m => m && m.data.fill.some(f => f !== 'white'))"
                           "(Bokeh.documents[0].get_model_by_name('ladder'))", timeout=5000)
    fill = source(page, "ladder", "fill")
    assert fill[0] != "white" and fill[-1] == "white"  # B = 1 fits at TP = 2; the top rung does not
    assert page.locator("[data-readout=gpus]").inner_text() == "2"
    assert errors == []


def test_permalink_with_tp_4_restores_it(page, lab_url):
    page.goto(lab_url + "?tp=4&gpu-hour-price=2")
    page.locator("[data-readout=gpus]", has_text="4").wait_for(timeout=10000)
    assert "TP = 4" in page.locator("[data-readout=memory]").inner_text()
    assert page.locator("[data-readout=kv-gpu]").inner_text() == "80 KiB"
    assert page.locator("[data-readout=cost-output]").inner_text().startswith("$")
    assert len(source(page, "interconnect-roof", "x")) == 3
