"""The served roofline answers a lever in the browser, before (and without) the server.

Every message from the server is held back once the page is ready (Playwright's
websocket routing), so what the chart shows after a move is the browser's own
drawing; it must equal core's evaluation of the same levers.
"""

import re

import pytest

from core.scenario import Scenario

pytestmark = pytest.mark.browser


def data(page, name, column):
    return page.evaluate(f"Array.from(Bokeh.documents[0].get_model_by_name('{name}').data['{column}'])")


@pytest.fixture
def held(page, lab_url):
    """Open ``lab_url + query``; returns a function that holds back the server's messages from then on."""
    gate = {"hold": False}

    def route(ws):
        server = ws.connect_to_server()
        ws.on_message(lambda m: server.send(m))
        server.on_message(lambda m: None if gate["hold"] else ws.send(m))

    page.route_web_socket(re.compile(r".*/ws(\?.*)?$"), route)
    page.set_viewport_size({"width": 1400, "height": 1000})

    def open_and_hold(query: str = "", ready: str = "[data-readout=ridge]") -> None:
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(lab_url + query)
        page.locator(ready).wait_for()
        page.wait_for_timeout(300)
        gate["hold"] = True
        page.errors = errors

    return open_and_hold


def press(page, css, key, times):
    page.locator(f"{css} .noUi-handle").focus()
    for _ in range(times):
        page.keyboard.press(key)


def test_batch_redraws_in_the_browser_with_cores_numbers(page, held):
    held()
    press(page, ".batch", "ArrowRight", 3)  # stops 1, 2, 3, 4
    page.wait_for_function("Bokeh.documents[0].get_model_by_name('workload').data.batch[0] === 4", timeout=3000)
    r = Scenario(batch=4).evaluate()
    assert data(page, "workload", "x") == [pytest.approx(r.arithmetic_intensity_weights, rel=1e-12)]
    assert data(page, "workload", "y")[0] == pytest.approx(r.attainable_flop_per_s_weights / 1e12, rel=1e-12)
    assert data(page, "workload-kv", "x")[0] == pytest.approx(r.arithmetic_intensity_with_kv, rel=1e-12)
    assert data(page, "ladder", "x") == pytest.approx(list(r.ladder.arithmetic_intensity_weights), rel=1e-12)
    assert data(page, "kv-ladder", "y") == pytest.approx(list(r.ladder.attainable_flop_per_s_with_kv / 1e12),
                                                         rel=1e-12)
    assert data(page, "overhead-ceiling", "y")[0] == pytest.approx(r.overhead_ceiling_flop_per_s / 1e12, rel=1e-12)
    # The readouts are the server's: held back, they still say batch 1.
    assert page.locator("[data-readout=intensity]").inner_text() == "1 FLOP/byte"
    assert page.errors == []


def test_weight_format_context_and_gqa_redraw_roof_and_points(page, held):
    held("?model=llama-3-8b&batch=8")
    page.locator(".weight-dtype select").select_option("FP8")
    press(page, ".context", "ArrowRight", 2)  # 8192 -> 32768
    page.locator(".gqa input[type=checkbox]").click()
    page.wait_for_function("Bokeh.documents[0].get_model_by_name('ridge').data.x[0] > 500", timeout=3000)
    page.wait_for_timeout(200)
    r = Scenario(model="llama-3-8b", batch=8, weight_dtype="fp8", context=32768, gqa=False).evaluate()
    assert data(page, "ridge", "x")[0] == pytest.approx(r.ridge_point, rel=1e-12)
    assert data(page, "roof", "y")[2] == pytest.approx(r.peak_flop_per_s / 1e12, rel=1e-12)
    assert data(page, "workload", "x")[0] == pytest.approx(r.arithmetic_intensity_weights, rel=1e-12)
    assert data(page, "workload-kv", "x")[0] == pytest.approx(r.arithmetic_intensity_with_kv, rel=1e-12)
    assert data(page, "ladder", "fits") == ["yes" if f else "no" for f in r.ladder.fits]
    assert page.errors == []


def test_several_gpus_leave_the_chart_to_the_server(page, held):
    held("?tp=2")
    before = data(page, "workload", "x")
    press(page, ".batch", "ArrowRight", 3)
    page.wait_for_timeout(500)
    assert data(page, "workload", "x") == before
    assert page.errors == []


def test_embed_strip_redraws_too_with_the_servers_kv_precision(page, held):
    held("?embed=true&kv-dtype=fp8&model=llama-3-8b", ready="[data-readout=embed-summary]")
    page.get_by_text("Levers", exact=True).click()  # the drawer
    press(page, ".batch", "ArrowRight", 4)  # stops 1, 2, 3, 4, 5
    page.wait_for_function("Bokeh.documents[0].get_model_by_name('workload').data.batch[0] === 5", timeout=3000)
    r = Scenario(model="llama-3-8b", kv_dtype="fp8", batch=5).evaluate()
    assert data(page, "workload-kv", "x")[0] == pytest.approx(r.arithmetic_intensity_with_kv, rel=1e-12)
    assert page.errors == []
