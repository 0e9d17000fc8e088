"""The served lab in headless Chromium: what a person sees and touches."""

import pytest

pytestmark = pytest.mark.browser

WORKLOAD_X = "Array.from(Bokeh.documents[0].get_model_by_name('workload').data.x)"
WORKLOAD_Y = "Array.from(Bokeh.documents[0].get_model_by_name('workload').data.y)"
LADDER_X = "Array.from(Bokeh.documents[0].get_model_by_name('ladder').data.x)"
RIDGE_X = "Array.from(Bokeh.documents[0].get_model_by_name('ridge').data.x)"


@pytest.fixture
def lab(page, lab_url):
    """The lab, loaded, with console errors and page errors collected."""
    errors = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(lab_url)
    page.locator("[data-readout=ridge]").wait_for()
    page.errors = errors
    return page


def readout(page, key):
    return page.locator(f"[data-readout={key}]").inner_text()


def wait_for_readout(page, key, text):
    page.locator(f"[data-readout={key}]", has_text=text).wait_for(timeout=5000)


def press(page, css, key, times):
    handle = page.locator(f"{css} .noUi-handle")
    handle.focus()
    for _ in range(times):
        page.keyboard.press(key)


def test_page_loads_at_the_design_card_defaults(lab):
    assert readout(lab, "ridge") == "295 FLOP/byte"
    assert readout(lab, "intensity") == "1 FLOP/byte"
    assert readout(lab, "kv-token") == "320 KiB"
    assert lab.evaluate(WORKLOAD_X) == [1]
    assert round(lab.evaluate(RIDGE_X)[0]) == 295
    assert lab.evaluate(LADDER_X)[:4] == [1, 2, 4, 8]
    assert "Traceback" not in lab.content()
    assert lab.errors == []


def test_moving_batch_moves_the_dot_along_the_ladder(lab):
    press(lab, ".batch", "ArrowRight", 3)  # stops 1, 2, 3, 4
    wait_for_readout(lab, "intensity", "4 FLOP/byte")
    x = lab.evaluate(WORKLOAD_X)
    assert x == [4]
    assert 4 in lab.evaluate(LADDER_X)
    assert lab.evaluate(WORKLOAD_Y)[0] == pytest.approx(3.35 * 4)  # TFLOP/s on the slope


def test_switching_gpu_moves_the_ridge(lab):
    lab.get_by_label("GPU").select_option(label="NVIDIA H200 SXM 141GB")
    wait_for_readout(lab, "ridge", "206 FLOP/byte")
    assert round(lab.evaluate(RIDGE_X)[0]) == 206


def test_gqa_off_changes_the_kv_readout(lab):
    lab.locator("input[type=checkbox]").first.uncheck()
    wait_for_readout(lab, "kv-token", "2,560 KiB")
    assert readout(lab, "fits") == "NO"


def test_batch4_int4_and_speculation4_land_on_the_same_spot(lab):
    press(lab, ".batch", "ArrowRight", 3)
    wait_for_readout(lab, "intensity", "4 FLOP/byte")
    batch4 = (lab.evaluate(WORKLOAD_X), lab.evaluate(WORKLOAD_Y))
    press(lab, ".batch", "ArrowLeft", 3)
    wait_for_readout(lab, "intensity", "1 FLOP/byte")
    lab.get_by_label("Weight precision p").select_option(label="INT4")
    wait_for_readout(lab, "intensity", "4 FLOP/byte")
    int4 = (lab.evaluate(WORKLOAD_X), lab.evaluate(WORKLOAD_Y))
    lab.get_by_label("Weight precision p").select_option(label="BF16")
    wait_for_readout(lab, "intensity", "1 FLOP/byte")
    press(lab, ".spec-k", "ArrowRight", 3)
    wait_for_readout(lab, "intensity", "4 FLOP/byte")
    spec4 = (lab.evaluate(WORKLOAD_X), lab.evaluate(WORKLOAD_Y))
    assert batch4 == int4 == spec4
    assert lab.errors == []
