"""The served roofline answers a lever in the browser, before (and without) the server.

Every message from the server is held back once the page is ready (Playwright's
websocket routing), so what the chart shows after a move is the browser's own
drawing; it must equal core's evaluation of the same levers.
"""

import re

import pytest
from conftest import LEGEND_ENTRIES

from core.scenario import Scenario


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

    def open_and_hold(query: str = "", ready: str = "[data-readout=ridge]", first=None) -> None:
        """``first``: what the page does, answered by the server, before its messages are held back."""
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(lab_url + query)
        page.locator(ready).wait_for()
        if first is not None:
            first()
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


Y_RANGE_JS = ("(() => { const y = Bokeh.documents[0].get_model_by_name('roofline').y_range;"
              " return [y.start, y.end]; })()")


def test_the_browser_widens_the_y_range_as_the_server_does(page, held):
    """B200's 2:4 FP8 headline (9 PFLOP/s) would touch the top of 2e4: the browser's own redraw gives it room, to
    the decade the server picks (app/roofline_view.py fit_y_range)."""
    from app.lab import Lab

    held("?gpu=b200")
    assert page.evaluate(Y_RANGE_JS) == [0.01, 2e4]
    page.locator(".weight-dtype select").select_option("FP8")
    page.wait_for_function(f"{Y_RANGE_JS}[1] > 2e4", timeout=3000)
    server = Lab(Scenario(gpu="b200", weight_dtype="fp8"), {}).roofline
    assert page.evaluate(Y_RANGE_JS) == [server.figure.y_range.start, server.figure.y_range.end] == [0.01, 1e5]
    assert data(page, "ridge", "y") == [0.01]
    assert page.errors == []


X_END_JS = "Bokeh.documents[0].get_model_by_name('roofline').x_range.end"


def test_the_browser_ends_the_x_range_where_the_server_does(page, held):
    """Tour step 5's levers (Llama-3-8B, B = 56, S = 8k), then B = 64 drawn by the browser alone: the x range ends
    at the server's 10^5, set by the drawn points (the farthest, the prefill of one prompt, I ≈ 2,000).  The server
    used to stretch it to 10^6 for the undrawn prefill of the whole batch, and a move in the browser shrank it."""
    from app.lab import Lab

    held("?model=llama-3-8b&batch=56&context=8192")
    press(page, ".batch", "ArrowRight", 1)  # 56 -> 64
    page.wait_for_function("Bokeh.documents[0].get_model_by_name('workload').data.batch[0] === 64", timeout=3000)
    server = Lab(Scenario(model="llama-3-8b", batch=64, context=8192), {}).roofline
    assert page.evaluate(X_END_JS) == server.figure.x_range.end == 1e5
    assert page.errors == []


# Each scatter mark of the roofline (by source name) -> [its y on the canvas, the frame's top, the frame's bottom].
MARKS_IN_FRAME = """(() => {
  const fig = Bokeh.documents[0].get_model_by_name('roofline'), pv = Bokeh.index.find_one(fig), f = pv.frame.bbox;
  const out = {};
  for (const r of fig.renderers) {
    if (r.type !== 'GlyphRenderer' || r.glyph.type !== 'Scatter' || !r.visible) continue;  // a hidden mark is not drawn
    const v = Bokeh.index.find_one(r);
    out[r.data_source.name] = Array.from(v.glyph.sy).map((y) => [y, f.top, f.bottom]);
  }
  return out; })()"""


def test_a_10_gflop_part_keeps_its_workload_star_on_the_chart(page, lab_url):
    """A custom GPU of 0.01 TFLOP/s and 5 GB/s: the star (0.005 TFLOP/s) sat below the chart's fixed floor."""
    import json
    from urllib.parse import urlencode

    from core.hardware import accelerator_form, custom_accelerator

    tiny = custom_accelerator("tiny", bandwidth_tbs=0.005, capacity_gb=80, bf16=0.01)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(lab_url + "?" + urlencode({"model": "llama-3-8b", "custom-gpu": json.dumps(accelerator_form(tiny))}))
    page.locator("[data-readout=ridge]").wait_for()
    page.wait_for_function("Bokeh.documents[0].get_model_by_name('workload').data.y[0] < 0.01", timeout=10_000)
    page.wait_for_timeout(500)
    assert page.evaluate(Y_RANGE_JS) == [1e-4, 2e4]
    marks = page.evaluate(MARKS_IN_FRAME)
    assert marks["workload"] and marks["ladder"]
    for name in ("workload", "workload-kv", "ladder", "kv-ladder"):
        for y, top, bottom in marks[name]:
            assert top < y < bottom, (name, y, top, bottom)
    # A batch move redrawn in the browser keeps the range the server set.
    press(page, ".batch", "ArrowRight", 3)
    page.wait_for_function("Bokeh.documents[0].get_model_by_name('workload').data.batch[0] === 4", timeout=3000)
    assert page.evaluate(Y_RANGE_JS) == [1e-4, 2e4]
    assert errors == []


def test_the_legend_stays_whole_through_moves_and_follows_a_legend_change(page, lab_url):
    """The legend after moves redrawn in the browser and by the server: every entry there, its swatch painted; a
    legend click greys its entry (and the greying outlives the next move); another phase renames an entry."""
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.goto(lab_url + "?model=llama-3-8b")
    page.locator("[data-readout=ridge]").wait_for()
    press(page, ".batch", "ArrowRight", 1)
    page.wait_for_function("Bokeh.documents[0].get_model_by_name('workload').data.batch[0] === 2", timeout=3000)
    page.wait_for_timeout(500)
    press(page, ".batch", "ArrowRight", 3)  # 2 -> 5: the browser's redraws, then the server's updates
    expect_text = page.locator("[data-readout=intensity]")
    expect_text.filter(has_text="5 FLOP/byte").wait_for(timeout=5000)
    page.wait_for_timeout(300)
    entries = page.evaluate(LEGEND_ENTRIES)
    labels = [label for label, *_ in entries]
    assert "batch ladder (hollow: does not fit)" in labels and "your workload" in labels, labels
    assert all(ink > 0 for *_, ink in entries), entries  # every swatch painted
    # A legend click hides its series and greys its entry; the swatches stay painted after the next move.
    ladder = next(i for i, (label, *_) in enumerate(entries) if label.startswith("batch ladder"))
    greyed_before = [inactive for _, inactive, _ in entries]
    assert not greyed_before[ladder]
    page.locator(".bk-item").nth(ladder).dispatch_event("pointerdown")
    page.wait_for_timeout(200)
    assert page.evaluate("Bokeh.documents[0].get_model_by_name('roofline').renderers"
                         ".find((r) => r.data_source.name === 'ladder').visible") is False
    press(page, ".batch", "ArrowRight", 1)  # 5 -> 6
    expect_text.filter(has_text="6 FLOP/byte").wait_for(timeout=5000)
    page.wait_for_timeout(300)
    entries = page.evaluate(LEGEND_ENTRIES)
    greyed = [inactive for _, inactive, _ in entries]
    assert greyed == [was != (i == ladder) for i, was in enumerate(greyed_before)], entries  # the band's is, off
    assert all(ink > 0 for *_, ink in entries), entries
    # Prefill: the other phase is now decode, and its entry says so.
    before = next(label for label, *_ in entries if label.startswith("other phase"))
    page.locator(".phase select").select_option(label="prefill")
    page.wait_for_function(f"""(() => {{ const e = {LEGEND_ENTRIES};
        return e.some(([label]) => label.startsWith('other phase') && label !== {before!r}); }})()""", timeout=5000)
    entries = page.evaluate(LEGEND_ENTRIES)
    assert all(ink > 0 for *_, ink in entries), entries
    assert errors == []


# The batch slider's model that is shown (has a view).
SLIDER_IDS_JS = ("Array.from(Bokeh.documents[0].all_models)"
                 ".filter((m) => (m.css_classes || []).includes('instant-batch') && Bokeh.index.find_one(m) != null)"
                 ".map((m) => m.id)")


def test_the_browser_still_redraws_after_present_mode_rebuilt_the_levers(page, held):
    """Present mode on and off lays the page out again: the levers' browser-side models are new ones, and the
    instant redraw's hook (app/instant_levers.js) finds them."""
    ids = {}

    def present_on_and_off():
        ids["before"] = page.evaluate(SLIDER_IDS_JS)
        page.locator(".present-toggle button").click()
        page.locator(".present-toggle button", has_text="Leave present mode").wait_for()
        page.locator(".present-toggle button").click()
        page.locator(".present-toggle button", has_text="Present mode (projector)").wait_for()
        page.wait_for_timeout(500)

    held("?model=llama-3-8b", first=present_on_and_off)
    before, after = ids["before"], page.evaluate(SLIDER_IDS_JS)
    assert len(after) == 1 and after != before  # the layout's models were made again
    press(page, ".batch", "ArrowRight", 3)  # stops 1, 2, 3, 4
    page.wait_for_function("Bokeh.documents[0].get_model_by_name('workload').data.batch[0] === 4", timeout=3000)
    r = Scenario(model="llama-3-8b", batch=4).evaluate()
    assert data(page, "workload", "x") == [pytest.approx(r.arithmetic_intensity_weights, rel=1e-12)]
    assert page.errors == []
