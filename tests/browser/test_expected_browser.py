"""The expected step in the browser (issue 27): the Expected tab's waterfall and reality check, the engine
selector and the link, the expected point on the roofline."""


def test_the_expected_tab_the_engine_in_the_link_and_the_expected_point(page, lab_url):
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{lab_url}?model=llama-2-7b&gpu=a100-80gb&tab=Expected&engine=gpt-fast")
    caption = page.locator("[data-readout=expected-caption]").first
    caption.wait_for(timeout=30_000)
    assert "prediction for the gpt-fast preset" in caption.inner_text()
    # One row per nonzero term between the ceiling and the expected row, each with its source.
    terms = page.locator(".wf-row[data-chain=step]")
    assert terms.first.get_attribute("data-term") == "ceiling"
    assert terms.last.get_attribute("data-term") == "expected"
    sources = page.locator(".wf-source[data-source]")
    assert sources.count() >= 6
    link = page.locator("[data-chain=step] .wf-source[data-source=hbm] a")
    assert link.get_attribute("href").startswith("https://github.com/Azure/AI-benchmarking-guide/")
    assert link.get_attribute("rel") == "noopener noreferrer"
    # The reality check: gpt-fast's Llama-2-7B run on an A100 against its ceiling and expected value.
    row = page.locator("tr[data-measurement=gptfast-a100-llama2-7b-bf16] td")
    assert [row.nth(i).inner_text() for i in range(1, 6)] == ["105", "151", "102", "0.70", "1.03"]
    # The readout names the engine; another engine from the selector follows in the readout and the link.
    readout = page.locator("[data-readout=expected-tokens]")
    assert readout.inner_text().startswith("ceiling 115 tokens/s; expected ≈ ")
    # S = 8,192 is past the calibration set's longest decode context (3,072): "(extrapolated)", core/coverage.py
    assert readout.inner_text().endswith("gpt-fast preset with CUDA graphs (extrapolated)")
    page.locator(".engine select").select_option("llama.cpp")
    page.wait_for_function("new URLSearchParams(window.location.search).get('engine') === 'llama.cpp'",
                           timeout=10_000)
    page.locator("[data-readout=expected-caption]", has_text="llama.cpp preset").wait_for(timeout=10_000)
    # The roofline's switch shows the expected point and its whisker, and puts band=true in the link.
    page.locator(".lab-tabs .bk-btn", has_text="Roofline").click()
    page.locator(".band input[type=checkbox]").check()
    page.wait_for_function("Bokeh.documents[0].get_model_by_name('band-area')?.visible && "
                           "Bokeh.documents[0].get_model_by_name('band')?.data.x.length === 1 && "
                           "Bokeh.documents[0].get_model_by_name('expected-whisker')?.visible", timeout=10_000)
    page.wait_for_function("new URLSearchParams(window.location.search).get('band') === 'true'", timeout=10_000)
    assert errors == []
