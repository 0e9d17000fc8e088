"""The Hardware tab in present mode at 1280×720 (a projector), found by a new-user trial: its text size, its labels
and what shows above the fold."""

import re

import pytest
from conftest import PROJECTOR, open_on_projector

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
        # The switch re-lays the whole page out (Panel makes every model again): 6-8 s with the Hardware tab on a
        # quiet 2-core machine, so 10 s failed one run in four (the same on the previous round's code).
        page.wait_for_function("window.location.search.includes('present=true')", timeout=30_000)
    page.get_by_text(HEADINGS[0], exact=True).wait_for(timeout=30_000)
    sizes = _wait_for_sizes(page, HEADINGS, 18)
    assert min(sizes.values()) >= 18, sizes
    assert errors == []


# Each label of a figure (LabelSets, rotated ones aside): its box, the point it names, and the figure's leader lines
# (Segment glyphs), all in canvas px; and the plot frame.
LABELS_AND_LEADERS = r"""(name) => {
  const fig = Bokeh.documents[0].get_model_by_name(name), pv = Bokeh.index.find_one(fig);
  const ctx = document.createElement('canvas').getContext('2d');
  const val = (v) => (v && typeof v === 'object' && 'value' in v) ? v.value : v;
  const at = (r, prop, i) => { const v = r[prop];
    return (v && typeof v === 'object' && 'field' in v) ? r.source.data[v.field][i] : val(v); };
  const labels = [], leaders = [];
  for (const r of fig.center) {
    if (r.type !== 'LabelSet' || !r.visible || at(r, 'angle', 0)) continue;  // rotated labels aside
    const v = Bokeh.index.find_one(r), texts = r.source.data[r.text.field];
    const size = parseFloat(val(r.text_font_size));
    ctx.font = `${val(r.text_font_style) || 'normal'} ${size}px ${val(r.text_font) || 'helvetica'}`;
    for (let i = 0; i < texts.length; i++) {
      const t = String(texts[i]); if (!t) continue;
      const w = ctx.measureText(t).width, h = size * 1.2;
      const x = v.sx[i] + v.x_offset.get(i), y = v.sy[i] - v.y_offset.get(i);
      const align = at(r, 'text_align', i) || 'left', base = at(r, 'text_baseline', i) || 'bottom';
      const left = align === 'right' ? x - w : align === 'center' ? x - w / 2 : x;
      const top = base === 'top' ? y : base === 'bottom' ? y - h : y - h / 2;
      labels.push({text: t, point: [v.sx[i], v.sy[i]], left, right: left + w, top, bottom: top + h});
    }
  }
  for (const r of fig.renderers) {
    if (r.type !== 'GlyphRenderer' || r.glyph.type !== 'Segment' || !r.visible) continue;
    const g = Bokeh.index.find_one(r).glyph;
    for (let i = 0; i < g.sx0.length; i++) leaders.push([g.sx0[i], g.sy0[i], g.sx1[i], g.sy1[i]]);
  }
  const f = pv.frame.bbox;
  return {labels, leaders, frame: {left: f.left, right: f.right, top: f.top, bottom: f.bottom}}; }"""

NEAR_PX = 30  # a label this close to its point (box edge to the point's centre) needs no leader line


def _distance(box, x, y) -> float:
    cx, cy = min(max(x, box["left"]), box["right"]), min(max(y, box["top"]), box["bottom"])
    return ((cx - x) ** 2 + (cy - y) ** 2) ** 0.5


def _label_problems(found) -> list:
    """Labels cut by the frame's edge, or far from their point with no leader line from the point to the box."""
    problems, frame = [], found["frame"]
    for lab in found["labels"]:
        if not (frame["left"] - 1 <= lab["left"] and lab["right"] <= frame["right"] + 1
                and frame["top"] - 1 <= lab["top"] and lab["bottom"] <= frame["bottom"] + 1):
            problems.append(("cut", lab))
        x, y = lab["point"]
        if _distance(lab, x, y) <= NEAR_PX:
            continue
        joined = any(min(((x0 - x) ** 2 + (y0 - y) ** 2) ** 0.5, ((x1 - x) ** 2 + (y1 - y) ** 2) ** 0.5) <= 15
                     and min(_distance(lab, x0, y0), _distance(lab, x1, y1)) <= 2
                     for x0, y0, x1, y1 in found["leaders"])
        if not joined:
            problems.append(("far, no leader", round(_distance(lab, x, y)), lab))
    for x0, y0, x1, y1 in found["leaders"]:  # a leader line through a label reads as striking it out
        steps = max(1, int(((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5 / 2))
        samples = [(x0 + (x1 - x0) * j / steps, y0 + (y1 - y0) * j / steps) for j in range(steps + 1)]
        problems += [("leader through", lab["text"]) for lab in found["labels"]
                     if any(lab["left"] + 1 < x < lab["right"] - 1 and lab["top"] + 1 < y < lab["bottom"] - 1
                            for x, y in samples)]
    return problems


def _settled(page, name, want="", tries=20):
    """Figure ``name``'s labels and their problems, polled every 0.5 s until a label reads ``want`` and there are no
    problems (labels are laid out in the browser once the chart has its size), or ``tries`` run out."""
    found = problems = None
    for _ in range(tries):
        page.wait_for_timeout(500)
        found = page.evaluate(LABELS_AND_LEADERS, name)
        problems = _label_problems(found)
        if any(want in lab["text"] for lab in found["labels"]) and not problems:
            break
    return found, problems


#: For each leader line (canvas px, as LABELS_AND_LEADERS gives them), the share of points along its middle half where
#: the chart's canvas has ink darker than the grid's light grey within a pixel of the line: a leader that can be seen.
LEADER_INK = r"""([name, leaders]) => {
  const fig = Bokeh.documents[0].get_model_by_name(name), view = Bokeh.index.find_one(fig);
  const canvas = view.canvas_view.el.shadowRoot.querySelector('canvas');
  const ratio = canvas.width / view.canvas_view.bbox.width, ctx = canvas.getContext('2d');
  return leaders.map(([x0, y0, x1, y1]) => { let inked = 0, n = 0;
    for (let t = 0.25; t <= 0.75; t += 0.025, n++) {
      const x = Math.round((x0 + (x1 - x0) * t) * ratio), y = Math.round((y0 + (y1 - y0) * t) * ratio);
      const d = ctx.getImageData(x - 1, y - 1, 3, 3).data; let dark = false;
      for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0 && d[i] < 190 && d[i + 1] < 190) dark = true;
      if (dark) inked++; }
    return inked / n; }); }"""


@pytest.mark.parametrize("present", ["true", "false"])
def test_atlas_labels_sit_by_their_markers_or_have_a_leader(page, lab_url, present):
    # The trial: "decode attention, S = 8,192, B = 1" floated near 10³ TFLOP/s, its marker at I ≈ 1, 3 TFLOP/s.
    errors = open_on_projector(page, f"{lab_url}?present={present}&tab=Hardware")
    page.wait_for_function("(() => { const f = window.Bokeh && Bokeh.documents.length &&"
                           " Bokeh.documents[0].get_model_by_name('hw-atlas');"
                           " return f && Bokeh.index.find_one(f); })()",
                           timeout=30_000)
    found, problems = _settled(page, "hw-atlas")
    assert len(found["labels"]) >= 8 and any(lab["text"].startswith("decode attention") for lab in found["labels"])
    assert problems == []
    # A teacher's trial: decode attention's leader ran straight up from I = 1, along the grid's line at 10⁰, and the
    # grid, drawn over it, hid it: the label floated with nothing to say whose it was.
    ink = page.evaluate(LEADER_INK, ["hw-atlas", found["leaders"]])
    assert found["leaders"] and min(ink) >= 0.9, list(zip(found["leaders"], ink, strict=True))
    assert errors == []


def test_generations_sparse_headline_label_stays_inside_the_plot(page, lab_url):
    # The trial: the label of the 2:4 headline roof (its ridge, 591) ran off the chart's right edge.
    errors = open_on_projector(page, f"{lab_url}?present=true&tab=Hardware")
    page.get_by_text("Generations", exact=True).click()
    page.wait_for_function("(() => { const f = Bokeh.documents[0].get_model_by_name('hw-generations');"
                           " return f && Bokeh.index.find_one(f); })()", timeout=30_000)
    page.wait_for_timeout(500)  # the section's widgets are wired
    page.get_by_role("checkbox", name="Show the 2:4-sparsity headline roof").check()
    found, problems = _settled(page, "hw-generations", want="2:4 headline")
    assert any("2:4 headline" in lab["text"] for lab in found["labels"]), found["labels"]
    assert problems == []
    assert errors == []


# A figure's bottom on the page (CSS px from the viewport's top).
FIGURE_BOTTOM = """(name) => { const f = Bokeh.documents[0].get_model_by_name(name), v = f && Bokeh.index.find_one(f);
  return v ? v.el.getBoundingClientRect().bottom : null; }"""


def _hardware_tour_at(page, lab_url, step: int) -> list[str]:
    """Open the Hardware tab in present mode on the projector, start its tour and walk to ``step`` with the
    clicker's key; the page's errors, as they come."""
    errors = open_on_projector(page, f"{lab_url}?present=true&tab=Hardware")
    page.get_by_text("Start the hardware tour ▶").click()
    page.locator("[data-step='1']").wait_for(timeout=15_000)
    for n in range(2, step + 1):
        page.keyboard.press("ArrowRight")
        page.locator(f"[data-step='{n}']").wait_for(timeout=10_000)
    return errors


def _bottom_when_drawn(page, name, tries=20) -> float:
    """Figure ``name``'s bottom, once it is drawn and has taken its present-mode height (polled every 0.5 s)."""
    last = None
    for _ in range(tries):
        page.wait_for_timeout(500)
        bottom = page.evaluate(FIGURE_BOTTOM, name)
        if bottom is not None and bottom == last:
            return bottom
        last = bottom
    return last


def test_present_mode_scaling_tab_shows_both_charts_above_the_fold(page, lab_url):
    # The trial: the second chart ("tokens/s against TP") was below the fold.
    errors = open_on_projector(page, f"{lab_url}?present=true&tab=Scaling")
    page.wait_for_function("(() => { const f = window.Bokeh && Bokeh.documents.length &&"
                           " Bokeh.documents[0].get_model_by_name('scaling-rate-figure');"
                           " return f && Bokeh.index.find_one(f) && f.title.text_font_size === '18px'; })()",
                           timeout=30_000)
    for name in ("scaling-time-figure", "scaling-rate-figure"):
        bottom = _bottom_when_drawn(page, name)
        assert bottom is not None and bottom <= PROJECTOR["height"], (name, bottom)
    assert errors == []


@pytest.mark.parametrize(("step", "name", "caption"), [(10, "hw-waves", "of SM slots busy"),
                                                       (11, "hw-waves", "of SM slots busy"),
                                                       (6, "hw-hierarchy", "naive attention moves"),
                                                       (8, "hw-ceilings", "overhead 544 µs"),
                                                       (9, "hw-ceilings", "overhead 68 µs")],
                         ids=["tiles-waves", "waves-readout", "hierarchy-caption", "overhead", "cuda-graphs"])
def test_present_mode_hardware_tour_step_fits_the_projector(page, lab_url, step, name, caption):
    # The trial: at step 10 the Tiles section's "waves" chart, at step 6 the hierarchy's caption, were cut at 720 px;
    # a teacher's trial: step 11 sent the class to the readout under the charts, cut in half at 718 px; steps 8 and 9
    # quote the three times of the decision, which lay under both charts.
    errors = _hardware_tour_at(page, lab_url, step)
    bottom = _bottom_when_drawn(page, name)
    assert bottom is not None and bottom <= PROJECTOR["height"], (name, bottom)
    if caption is not None:
        box = page.get_by_text(caption).first.bounding_box()
        assert box["y"] + box["height"] <= PROJECTOR["height"], box
    assert errors == []


# A figure's roofs and ridge lines as segments (canvas px): its Line and MultiLine glyphs, and (with `spans`) its Spans
# across the frame (the atlas's dotted ridge).
ROOF_SEGMENTS = r"""([name, spans]) => {
  const fig = Bokeh.documents[0].get_model_by_name(name), pv = Bokeh.index.find_one(fig), f = pv.frame.bbox;
  const out = [];
  for (const r of fig.renderers) {
    if (r.type !== 'GlyphRenderer' || !r.visible || !['Line', 'MultiLine'].includes(r.glyph.type)) continue;
    const g = Bokeh.index.find_one(r).glyph;
    const polys = r.glyph.type === 'Line' ? [[g.sx, g.sy]] : Array.from(g.sxs, (xs, j) => [xs, g.sys.get(j)]);
    for (const [xs, ys] of polys) {
      for (let j = 0; j + 1 < xs.length; j++) out.push([xs[j], ys[j], xs[j + 1], ys[j + 1]]);
    }
  }
  for (const s of fig.center) {
    if (!spans || s.type !== 'Span' || !s.visible || s.location == null) continue;
    if (s.dimension === 'height') { const x = pv.frame.x_scale.compute(s.location); out.push([x, f.top, x, f.bottom]); }
    else { const y = pv.frame.y_scale.compute(s.location); out.push([f.left, y, f.right, y]); }
  }
  return out; }"""


def _segments_cross(a, b) -> tuple[float, float] | None:
    """Where two segments (x0, y0, x1, y1) cross, or None."""
    (x0, y0, x1, y1), (u0, v0, u1, v1) = a, b
    d = (x1 - x0) * (v1 - v0) - (y1 - y0) * (u1 - u0)
    if abs(d) < 1e-9:
        return None
    t = ((u0 - x0) * (v1 - v0) - (v0 - y0) * (u1 - u0)) / d
    s = ((u0 - x0) * (y1 - y0) - (v0 - y0) * (x1 - x0)) / d
    return (x0 + t * (x1 - x0), y0 + t * (y1 - y0)) if 0 <= t <= 1 and 0 <= s <= 1 else None


def _through_box(box, seg, steps=200) -> bool:
    """Whether a segment passes through a label's box (1 px in from its sides, 2 px from its top and bottom: the
    box is the text's line height, its glyphs a little inside it)."""
    x0, y0, x1, y1 = seg
    return any(box["left"] + 1 < x0 + (x1 - x0) * i / steps < box["right"] - 1
               and box["top"] + 2 < y0 + (y1 - y0) * i / steps < box["bottom"] - 2 for i in range(steps + 1))


def _overprints(found, roofs) -> list:
    """Labels a roof or ridge line runs through, and leader lines that cross one (away from the leader's start,
    on its own point's marker, which sits on a roof)."""
    problems = [("label on a line", lab["text"]) for lab in found["labels"] if any(_through_box(lab, s) for s in roofs)]
    for leader in found["leaders"]:
        for roof in roofs:
            at = _segments_cross(leader, roof)
            if at is not None and ((at[0] - leader[0]) ** 2 + (at[1] - leader[1]) ** 2) ** 0.5 > 12:
                problems.append(("leader across a line", [round(v) for v in leader], [round(v) for v in at]))
                break
    return problems


@pytest.mark.parametrize(("step", "name", "want"), [(1, "hw-atlas", "FlashAttention"),
                                                    (6, "hw-hierarchy", "naive"),
                                                    (12, "hw-hierarchy", "naive")],
                         ids=["atlas", "flash-attention", "hierarchy"])
def test_hardware_tour_labels_and_leaders_keep_off_the_roofs_on_a_projector(page, lab_url, step, name, want):
    # Issue 30's trial in present mode at 1280x720: at step 1 FlashAttention's name was drawn across the ridge's
    # line, at step 12 the L2 roof's leader line crossed the HBM roof.
    errors = _hardware_tour_at(page, lab_url, step)
    page.wait_for_function(f"(() => {{ const f = Bokeh.documents[0].get_model_by_name('{name}');"
                           " return f && Bokeh.index.find_one(f) && f.center.some(r => r.type === 'LabelSet' &&"
                           " JSON.stringify(r.text_font_size).includes('18px')); })()", timeout=10_000)
    found = problems = None
    for _ in range(20):  # laid out in the browser once the chart has its present-mode size
        page.wait_for_timeout(500)
        found = page.evaluate(LABELS_AND_LEADERS, name)
        roofs = page.evaluate(ROOF_SEGMENTS, [name, True])
        problems = _overprints(found, roofs) + _label_problems(found) + _nearer_another(found)
        if not problems and any(want in lab["text"] for lab in found["labels"]):
            break
    assert any(want in lab["text"] for lab in found["labels"]), found["labels"]
    assert len(roofs) > 50  # the roofs were found (the atlas: 119 segments and the ridge)
    assert problems == []
    assert errors == []


def _nearer_another(found, margin=8.0) -> list:
    """Labels with no leader line that sit about as near another labelled marker as their own (within ``margin``
    px): a reader takes such a label for the other marker's."""
    problems = []
    for lab in found["labels"]:
        x, y = lab["point"]
        own = _distance(lab, x, y)
        if own > NEAR_PX:  # far: joined by a leader (checked by _label_problems)
            continue
        problems += [("nearer another's marker", lab["text"], round(own), round(_distance(lab, ox, oy)))
                     for other in found["labels"] for ox, oy in [other["point"]]
                     if abs(ox - x) + abs(oy - y) > 1 and _distance(lab, ox, oy) <= own + margin]
    return problems


@pytest.mark.parametrize("size", [(1280, 720), (1024, 768)], ids=["1280", "1024"])
def test_a_crowded_atlas_names_every_kernel_with_no_leader_through_a_label(page, lab_url, size):
    # A teacher's trial: at hardware tour step 5 on the projector, naive attention's leader line ran through
    # FlashAttention's name (the ridge's dotted line blocks every place right of the two, the labels above them
    # every place left); a verifying trial at 1024 px: the key covered "B = 1", and the roof ran through a name.
    # A name with no clear place says its brief form ("FlashAttention"), or sits across the dotted ridge.
    errors = _hardware_tour_at(page, lab_url, 5)
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.wait_for_function("(() => { const f = Bokeh.documents[0].get_model_by_name('hw-atlas');"
                           " return f && Bokeh.index.find_one(f) && f.center.some(r => r.type === 'LabelSet' &&"
                           " JSON.stringify(r.text_font_size).includes('18px')); })()", timeout=10_000)
    found = problems = None
    for _ in range(20):
        page.wait_for_timeout(500)
        found = page.evaluate(LABELS_AND_LEADERS, "hw-atlas")
        roofs = page.evaluate(ROOF_SEGMENTS, ["hw-atlas", False])
        problems = _overprints(found, roofs) + _label_problems(found) + _nearer_another(found)
        if not problems and any("FlashAttention" in lab["text"] for lab in found["labels"]):
            break
    assert len(found["labels"]) == 6 and any("FlashAttention" in lab["text"] for lab in found["labels"])
    assert problems == []
    key = page.evaluate("(() => { const f = Bokeh.documents[0].get_model_by_name('hw-atlas');"
                        " const b = Bokeh.index.find_one(f.center.find((r) => r.type === 'Legend')).bbox;"
                        " return [b.left, b.top, b.right, b.bottom]; })()")
    under_key = [lab["text"] for lab in found["labels"] if lab["left"] < key[2] and key[0] < lab["right"]
                 and lab["top"] < key[3] and key[1] < lab["bottom"]]
    assert under_key == []  # the key hid "B = 1" at the end of two names at 1024 px
    assert errors == []


# The folded Levers card's header button: its font size, its title's (an <h3> in the header row's shadow roots),
# its aria-label and its box (CSS px).
LEVERS_HEADER = r"""() => {
  const find = (root) => { for (const e of root.querySelectorAll('*')) {
      if (e.classList.contains('levers') && e.shadowRoot) return e.shadowRoot.querySelector('button.card-header');
      if (e.shadowRoot) { const f = find(e.shadowRoot); if (f) return f; } } return null; };
  const button = find(document); if (!button) return null;
  const deep = (root) => { for (const e of root.querySelectorAll('*')) {
      if (e.tagName === 'H3') return e; if (e.shadowRoot) { const f = deep(e.shadowRoot); if (f) return f; } }
    return null; };
  const title = deep(button), r = button.getBoundingClientRect();
  return {button: parseFloat(getComputedStyle(button).fontSize), title: title && title.textContent,
          titlePx: title && parseFloat(getComputedStyle(title).fontSize), label: button.getAttribute('aria-label'),
          top: r.top, bottom: r.bottom}; }"""


@pytest.mark.parametrize("step", [6, 12])
def test_the_levers_cards_header_is_named_and_reads_18_px_on_the_hardware_tour(page, lab_url, step):
    # Issue 30's trial: at hardware tour steps 6 and 12 the folded Levers card's header showed at the fold as a
    # button with no text of its own, 13.3 px (its title in shadow roots, 14 px).
    errors = _hardware_tour_at(page, lab_url, step)
    header = None
    for _ in range(20):  # the page's accessibility repairs look again every 2 s
        page.wait_for_timeout(500)
        header = page.evaluate(LEVERS_HEADER)
        if header and header["label"]:
            break
    assert header["title"] == "Levers" and header["label"] == "Levers", header
    assert header["button"] >= 18 and header["titlePx"] >= 18, header
    button = page.get_by_role("button", name="Levers", exact=True)
    assert button.count() == 1
    button.click()  # it still opens the levers
    page.get_by_text("Batch B", exact=False).first.wait_for(timeout=10_000)
    assert errors == []


def test_hardware_step_1_shows_every_lever_group_and_show_your_work_above_the_fold(page, lab_url):
    # Issue 30's trial: at hardware tour step 1 in present mode the atlas's levers ran to 1,500 px and "Show your
    # work" sat at 707-727 px.  The groups fold to their titles; "Show your work" puts the formulas in the chart's
    # place while pressed.
    errors = _hardware_tour_at(page, lab_url, 1)
    page.wait_for_timeout(1000)
    for text in (*HEADINGS, "Attention (one head)", "Decode attention over the KV cache"):
        box = page.get_by_text(text, exact=True).first.bounding_box()
        assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= PROJECTOR["height"], (text, box)
    page.get_by_text("Show your work", exact=True).click()
    work = page.get_by_text("2·M·K·N", exact=False).first
    work.wait_for(timeout=10_000)
    # In the chart's place, above the fold, once the page is laid out again (a loaded CI machine measured it at
    # 684 px mid-layout, and at under 620 px a moment later).
    page.wait_for_function(f"(el) => el.getBoundingClientRect().top < {PROJECTOR['height'] - 100}",
                           arg=work.element_handle(), timeout=5_000)
    top = work.bounding_box()["y"]
    assert top < PROJECTOR["height"] - 100, top
    page.get_by_text("GEMM C = AB", exact=True).click()  # a group opens to its levers
    page.get_by_text("M:", exact=False).first.wait_for(timeout=10_000)
    assert errors == []


def test_hardware_tour_step_2_opens_the_gemms_levers_and_outlines_its_dot_on_a_projector(page, lab_url):
    # A teacher's trial: step 2 says "shrink N with its slider", and in present mode the GEMM's group of levers was
    # folded, with the dot it meant drawn as every other.
    errors = _hardware_tour_at(page, lab_url, 2)
    title = page.locator(".hw-levers .bk-slider-title", has_text=re.compile(r"^N:")).first
    title.wait_for(timeout=10_000)
    box = title.bounding_box()
    assert box is not None and box["y"] + box["height"] <= PROJECTOR["height"], box
    widths = page.evaluate("(() => { const s = Bokeh.documents[0].get_model_by_name('hw-kernels');"
                           " return [Array.from(s.data.name), Array.from(s.data.line_width)]; })()")
    assert [name for name, w in zip(*widths, strict=True) if w > 1] == ["GEMM 4,096×4,096×4,096"]
    assert errors == []


def _shared_area(a, b) -> float:
    """The area two label boxes share, as a fraction of the smaller box's."""
    w = min(a["right"], b["right"]) - max(a["left"], b["left"])
    h = min(a["bottom"], b["bottom"]) - max(a["top"], b["top"])
    if w <= 0 or h <= 0:
        return 0.0
    return w * h / min((box["right"] - box["left"]) * (box["bottom"] - box["top"]) for box in (a, b))


@pytest.mark.parametrize("step", [1, 3])
def test_on_a_phone_no_kernel_name_lies_over_another_or_runs_out_of_the_frame(page, lab_url, step):
    # A teacher's trial (present mode, 390 × 844, step 1): "decode matvec 4,096×4,096, B = 1" lay over "decode
    # attention, S = 8,192, B = 1", both whole, both past the frame's right edge. A name with no clear place says its
    # brief form ("decode matvec"), less text over what is there: in so small a frame two names may still touch, but
    # none is printed over another (a quarter of the smaller box at most) or cut. A verifying trial: at step 3 (the
    # decode matvec drawn last, over decode attention at I = 1) the two brief names still lay one over the other: a
    # name with no clear place takes the nearest with no label under it, over a marker if it must.
    errors = _hardware_tour_at(page, lab_url, step)
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_function("(() => { const f = Bokeh.documents[0].get_model_by_name('hw-atlas');"
                           " return f && Bokeh.index.find_one(f); })()", timeout=10_000)
    found, over = None, None
    for _ in range(20):
        page.wait_for_timeout(500)
        found = page.evaluate(LABELS_AND_LEADERS, "hw-atlas")
        labels = found["labels"]
        over = [(a["text"], b["text"], round(shared, 2)) for i, a in enumerate(labels) for b in labels[i + 1:]
                for shared in [_shared_area(a, b)] if shared > 0.25]
        cut = [p for p in _label_problems(found) if p[0] == "cut"]
        if len(labels) == 8 and not over and not cut:
            break
    assert len(found["labels"]) == 8  # every kernel named
    assert over == [] and cut == []
    assert errors == []
