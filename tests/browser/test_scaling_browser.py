"""Many GPUs in headless Chromium: the TP slider moves the memory bar, the ladder and the scaling chart;
a permalink with tp=4 restores it."""




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
    assert page.evaluate("Bokeh.documents[0].get_model_by_name('interconnect-roof')") is None


# Per figure: chart text sizes (px), the current-TP marker's box and the plot frame (canvas px), each legend's box
# and the figure's drawn height.
SCALING_LOOK = """(() => {
  const px = (v) => { const s = (v && typeof v === 'object' && 'value' in v) ? v.value : v;
                      return typeof s === 'string' && s.endsWith('px') ? parseFloat(s) : null; };
  const out = {};
  for (const name of ['scaling-time-figure', 'scaling-rate-figure']) {
    const fig = Bokeh.documents[0].get_model_by_name(name), pv = Bokeh.index.find_one(fig), f = pv.frame.bbox;
    const sizes = [];
    const parts = [...fig.left, ...fig.below, ...fig.above, ...fig.right, ...fig.center, fig.title];
    for (const m of parts.filter((m) => /Axis|Legend|Title/.test(m.type))) {
      for (const p of ['axis_label_text_font_size', 'major_label_text_font_size', 'label_text_font_size',
                       'text_font_size']) { if (p in m && px(m[p]) !== null) sizes.push(px(m[p])); }
    }
    const marks = [];
    for (const r of fig.renderers) {
      if (r.type !== 'GlyphRenderer' || r.data_source.name !== 'scaling-current') continue;
      const v = Bokeh.index.find_one(r);
      for (let i = 0; i < v.glyph.sx.length; i++) {
        const s = v.glyph.size.get(i) / 2 + r.glyph.line_width.value / 2;
        marks.push({left: v.glyph.sx[i] - s, right: v.glyph.sx[i] + s, top: v.glyph.sy[i] - s,
                    bottom: v.glyph.sy[i] + s});
      }
    }
    const legends = fig.below.filter((m) => m.type === 'Legend').map((m) => {
      const b = Bokeh.index.find_one(m).bbox; return {top: b.top, bottom: b.bottom, items: m.items.length}; });
    out[name] = {sizes, marks, legends, frame: {left: f.left, right: f.right, top: f.top, bottom: f.bottom},
                 height: pv.el.getBoundingClientRect().height, labels: fig.below.filter((m) => m.type === 'Legend')
                   .flatMap((m) => m.items.map((i) => i.label.value))};
  }
  return out; })()"""


def test_present_mode_on_the_scaling_and_kv_table_tabs(page, lab_url):
    """Present mode at 1280×720: 18-px chart text and captions; the current-TP marker inside its frame (it was cut
    at the top of the chart at TP = 1); every legend, the tokens/s chart's lines included, drawn inside its chart."""
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(lab_url + "?present=true&tab=Scaling")
    page.wait_for_function("(() => { const f = window.Bokeh && Bokeh.documents.length &&"
                           " Bokeh.documents[0].get_model_by_name('scaling-rate-figure');"
                           " return f && Bokeh.index.find_one(f) && f.title.text_font_size === '18px'; })()",
                           timeout=15_000)
    page.wait_for_timeout(1000)  # the legends wrap and the figures settle
    look = page.evaluate(SCALING_LOOK)
    for name, fig in look.items():
        assert fig["sizes"] and min(fig["sizes"]) >= 18, (name, fig["sizes"])
        frame = fig["frame"]
        assert fig["marks"], name
        for m in fig["marks"]:
            assert frame["left"] <= m["left"] and m["right"] <= frame["right"], (name, m, frame)
            assert frame["top"] <= m["top"] and m["bottom"] <= frame["bottom"], (name, m, frame)
        for legend in fig["legends"]:
            assert legend["bottom"] <= fig["height"] + 1, (name, legend, fig["height"])
    assert {"all GPUs (EP groups × replicas)", "per sequence", "current TP"} <= {
        " ".join(label.split()) for label in look["scaling-rate-figure"]["labels"]}
    size = "e => parseFloat(getComputedStyle(e).fontSize)"
    assert page.locator(".scaling-note .caption").evaluate(size) >= 18
    page.get_by_text("KV table", exact=True).click()
    page.locator("[data-readout=kv-table]").wait_for()
    assert page.locator("[data-readout=kv-table]").evaluate(size) >= 18
    assert page.locator("table.lab td").first.evaluate(size) >= 18
    # The Traffic tab's bars at 18 px: each label shows whole inside its segment or not at all ("KV cac" was cut).
    page.get_by_text("Traffic", exact=True).click()
    page.locator("[data-readout=traffic]").wait_for()
    assert page.locator("[data-readout=traffic]").evaluate(size) >= 18
    cut = page.locator(".bar").first.evaluate("""(first) => {
      const out = [];
      for (const seg of first.getRootNode().querySelectorAll('.bar div')) {
        const s = seg.getBoundingClientRect(), range = document.createRange();
        range.selectNodeContents(seg);
        const t = range.getBoundingClientRect();
        const shown = t.top < s.bottom - 1 && t.bottom > s.top + 1;
        if (shown && (t.right > s.right + 1 || t.left < s.left - 1)) out.push(seg.textContent);
        if (shown && parseFloat(getComputedStyle(seg).fontSize) < 18) out.push('small: ' + seg.textContent);
      }
      return out; }""")
    assert cut == []
    assert errors == []


def test_the_kv_table_scrolls_in_its_column_on_a_phone_and_the_serving_note_keeps_its_width_on_a_projector(
        page, lab_url):
    """A trial: at 360 px the KV table (447 px) made the whole page scroll sideways; in present mode the Serving tab's
    source note was squeezed beside its controls to one word a line, pushing the chart down ~300 px."""
    page.set_viewport_size({"width": 360, "height": 640})
    page.goto(f"{lab_url}?tab=KV%20table")
    page.locator("[data-readout=kv-table]").wait_for()
    page.wait_for_timeout(500)
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 360
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{lab_url}?present=true&tab=Serving")
    note = page.get_by_text("ShareGPT lengths, Kwon et al.", exact=False)
    note.wait_for(timeout=10_000)
    page.wait_for_timeout(500)
    assert note.bounding_box()["width"] >= 300


def test_the_pins_tabs_buttons_hold_their_labels_on_a_projector(page, lab_url):
    """A trial: in present mode "Pin batch 4 vs INT4 vs k = 4" (210 px at 18 px text) was cut at "k = ·" and ran
    into "Remove all"."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{lab_url}?present=true&tab=Pins")
    for css in (".pin-preset", ".pin-clear", ".pin-undo", ".pin-rename", ".pin-remove"):
        button = page.locator(f"{css} button")
        button.wait_for(timeout=10_000)
        # The button drawn within its widget's box (at 210 px the 251-px button ran over its neighbour).
        assert button.evaluate("b => b.getBoundingClientRect().width <= "
                               "b.getRootNode().host.getBoundingClientRect().width + 0.5"), css
