"""Present mode, the tour's keys and the app's own link keys, without a browser."""

import panel as pn
from bokeh.models import Axis, Label, LabelSet, Legend

from app.lab import Lab
from app.present import PRESENT_TEXT_PX, _px
from core.tour import TOUR


def _text_sizes(fig):
    sizes = [fig.title.text_font_size]
    for model in [*fig.select({"type": Axis}), *fig.select({"type": Legend}), *fig.select({"type": LabelSet}),
                  *fig.select({"type": Label})]:
        for prop in ("axis_label_text_font_size", "major_label_text_font_size", "label_text_font_size",
                     "text_font_size"):
            if prop in model.properties():
                sizes.append(getattr(model, prop))
    return [_px(s) for s in sizes if _px(s) is not None]


def test_a_link_opens_present_mode_a_tour_step_and_a_tab():
    lab = Lab(query={"present": "true", "tour": "6", "tab": "Compare"})
    assert lab.state.present and lab.state.tab == "Compare" and lab.compare is not None
    assert lab.tour.index == 5 and lab.state.tour_step == 6
    assert lab.scenario.capacity_convention == "decimal"  # step 6's levers applied (article 000's Step 5)
    assert {"present": "true", "tour": "6", "tab": "Compare"}.items() <= lab.link.query().items()
    assert min(_text_sizes(lab.roofline.figure)) >= PRESENT_TEXT_PX
    assert min(_text_sizes(lab.compare.figures[0])) >= PRESENT_TEXT_PX
    lab.state.present = False
    assert min(_text_sizes(lab.roofline.figure)) < PRESENT_TEXT_PX  # the built look comes back
    assert "present" not in lab.link.query()


def test_link_values_the_app_cannot_use_are_named():
    lab = Lab(query={"present": "maybe", "tour": "99", "tab": "Nope", "batch": "4"})
    notices = " ".join(lab.state.notices)
    assert "present='maybe': accepted true or false" in notices
    assert f"tour='99': accepted a step from 1 to {len(TOUR)}" in notices
    assert "tab='Nope'" in notices
    assert not lab.state.present and lab.tour.index is None and lab.scenario.batch == 4


def test_the_tour_keys_step_leave_and_offer_to_resume():
    lab = Lab(query={})
    lab.tour._key("next")  # ignored: no tour running
    assert lab.tour.index is None
    lab.tour.go(0)
    for action, index in (("next", 1), ("next", 2), ("previous", 1)):
        lab.tour._key(action)
        assert lab.tour.index == index and lab.state.tour_step == index + 1
    lab.tour._key("leave")
    assert lab.tour.index is None and lab.state.tour_step is None
    assert lab.tour.resume.visible and lab.tour.resume.label == "Resume at step 2 ▶"
    lab.tour.jump.value = 15  # jump to the articles' last step
    assert lab.tour.index == 15 and "Qwen2.5-72B" in lab.tour.caption.object
    assert "Note: Article 004 quotes Llama-3-70B" in lab.tour.caption.object


def test_embed_key_names_every_mark_and_the_link_opens_the_full_lab():
    lab = Lab(query={"embed": "true", "model": "llama-3-8b", "present": "true"})
    assert not lab.state.present  # embed wins
    key = lab._embed_key.object
    for mark in ("roof", "ridge point", "your workload", "counting KV reads", "batch ladder", "prefill of one prompt",
                 "sparse (2:4)", "overhead ceiling"):
        assert mark in key, mark
    assert "interconnect" not in key
    assert "model=llama-3-8b" in lab._embed_open.object and "embed" not in lab._embed_open.object
    lab.scenario.tp = 2  # split over two GPUs: communication is time (the title), not a roof on this axis
    assert "interconnect" not in lab._embed_key.object


def test_the_embed_keys_star_is_hollow_where_the_chart_draws_it_hollow():
    """A trial: the default 70B scenario on one H100 does not fit, so the chart's star is hollow, while the key showed
    a filled one."""
    lab = Lab(query={"embed": "true"})
    assert not lab.state.result.fits and lab.roofline.point.data["fill"] == ["white"]
    assert "☆" in lab._embed_key.object and "your workload (hollow: does not fit)" in lab._embed_key.object
    lab.scenario.model = "llama-3-8b"
    assert lab.state.result.fits and "★" in lab._embed_key.object and "☆" not in lab._embed_key.object


def test_the_embed_key_lists_the_expected_point_and_the_pins_roofs_only_while_drawn():
    # Found by a trial: ?embed=true&band=true drew the expected point's ring, and the key under the chart left it
    # out; it said "each under its GPU's faint dotted roof" of pins all on the chart's own roof.
    from core.pins import Pin

    lab = Lab(query={"embed": "true", "band": "true"})
    key = lab._embed_key.object
    legend = lab.roofline.band_item.label["value"]
    assert lab.roofline.band_renderer.visible and legend.startswith("expected (generic engine; extrapolated), spread ")
    assert f"◯</span> {legend}</span>" in key
    assert "launch overhead ceiling at your B" in key
    lab.state.band = False
    assert "expected," not in lab._embed_key.object
    plain = Lab(query={"embed": "true"})
    assert "expected," not in plain._embed_key.object
    plain.state.add_pin(Pin("b4", {**plain.scenario.levers(), "batch": 4}))
    assert "1 pin</span>" in plain._embed_key.object and "faint" not in plain._embed_key.object
    plain.state.add_pin(Pin("a100", {**plain.scenario.levers(), "gpu": "a100-80gb"}))
    assert "2 pins, each under its GPU&#x27;s faint dotted roof" in plain._embed_key.object


def test_the_hardware_tab_follows_present_mode():
    import panel as pn

    lab = Lab(query={"present": "true", "tab": "Hardware"})
    from bokeh.models import Plot

    figures = [pane.object for pane in pn.panel(lab.hardware).select(pn.pane.Bokeh)
               if isinstance(pane.object, Plot)]  # not the placeholders of sections not opened yet
    assert figures and all(min(_text_sizes(f)) >= PRESENT_TEXT_PX for f in figures)


def test_a_clicker_starts_the_tour_in_present_mode_and_resumes_it():
    lab = Lab(query={"present": "true"})
    assert lab.tour.keys.active and lab.tour.index is None  # a clicker's "next" is heard before the tour runs
    assert lab.present_toggle.label == "Leave present mode"
    lab.tour._key("next")
    assert lab.tour.index == 0
    lab.tour._key("next")
    lab.tour._key("leave")
    assert lab.tour.index is None and lab.tour.keys.active
    lab.tour._key("next")  # resumes where it was left
    assert lab.tour.index == 1
    lab.state.present = False
    lab.tour.stop()
    assert not lab.tour.keys.active and lab.present_toggle.label == "Present mode (projector)"
    lab.tour._key("next")  # outside present mode the keys wait for "Start the tour"
    assert lab.tour.index is None


def test_a_stray_press_after_finish_keeps_the_last_step():
    from core.tour import TOUR

    lab = Lab(query={"present": "true"})
    lab.tour.go(len(TOUR) - 1)
    after_last = lab.scenario.levers()
    lab.tour.next.clicks += 1  # "Finish ✓"
    assert lab.tour.index is None
    lab.tour._key("next")  # one press too many: the class keeps looking at the last step
    assert lab.tour.index is None and lab.scenario.levers() == after_last
    lab.tour.next.clicks += 1  # "Start again" still starts it
    assert lab.tour.index == 0


def test_a_clicker_drives_the_hardware_tour_in_present_mode():
    from core.hardware_tour import HARDWARE_TOUR

    lab = Lab(query={"present": "true", "tab": "Hardware"})
    hw = lab.hardware
    assert hw.tour_keys.active and hw.tour_index is None and not lab.tour.keys.active  # its tour takes the keys
    hw._tour_key("next")
    assert hw.tour_index == 0
    hw.go(len(HARDWARE_TOUR) - 1)
    hw._tour_key("next")  # the last step stays on screen for a clicker (a double tap ended the tour)
    assert hw.tour_index == len(HARDWARE_TOUR) - 1
    hw.tour_next.clicks += 1  # "Finish ✓"
    hw._tour_key("next")  # stray
    assert hw.tour_index is None and hw.tour_keys.active
    lab.state.present = False
    assert not hw.tour_keys.active


def test_the_hardware_tour_hears_the_clicker_only_while_its_tab_is_open():
    """A trial: after the Hardware tab had been opened once, each PageDown of the main tour on the Roofline tab also
    moved the hardware tour (kept in the page behind the other tab) a step on, and its section with it."""
    lab = Lab(query={"present": "true", "tab": "Hardware"})
    hw = lab.hardware
    hw.section = "Three ceilings"
    lab.state.tab = "Roofline"
    assert lab.tour.keys.active and not hw.tour_keys.active  # the main tour alone hears the clicker
    lab.tour._key("next")
    assert lab.tour.index == 0 and hw.tour_index is None
    lab.state.tab = "Hardware"
    assert hw.tour_keys.active and not lab.tour.keys.active and hw.section == "Three ceilings"


def test_present_mode_draws_the_controls_text_at_18_px_and_widens_the_fixed_buttons():
    """Issue 30: tabs, tour buttons, "Jump to step" and "Leave present mode" were 12 px on a projector."""
    from app.lab import Lab
    from app.present import INPUT_TEXT_CSS

    lab = Lab(query={"present": "true", "tour": "3"})
    big = {"--bokeh-font-size": "18px"}  # Bokeh's widgets size their text by it, inherited by every shadow root
    assert lab.page.styles == lab.tour.bar.styles == big
    assert lab.tab_bar.stylesheets[-1] == (".bk-btn-group > .bk-btn { font-size: 18px; padding-top: 1px; "
                                           "padding-bottom: 2px; }")
    tour = lab.tour
    # During a tour "Next ▶" is narrower than "Start the tour ▶": Previous, Next and Leave share one row.
    assert (tour.prev.width, tour.next.width, tour.leave.width, tour.resume.width, tour.jump.width) == (
        125, 105, 160, 240, 205)
    assert tour.prev.width + tour.next.width + tour.leave.width + 3 * 10 <= 440  # the side column at 1280 px
    # The pin button right after "Jump to step" in the tour's row (above the card), the two in one row of 440 px.
    bar = tour.bar.objects
    assert bar[bar.index(tour.jump) + 1] is lab.pins.pin_button and lab.pins.pin_button not in lab.pin_row.objects
    assert bar.index(tour.caption) > bar.index(lab.pins.pin_button)
    assert tour.jump.width + lab.pins.pin_button.width + 2 * 10 <= 440
    assert tour.jump.stylesheets[0] == INPUT_TEXT_CSS
    assert "clip-path: inset(50%)" in tour.jump.stylesheets[1]  # its label read by a screen reader, not drawn
    tour.stop()
    assert tour.next.width == 210  # "Start again ▶" / "Start the tour ▶"
    tour.go(2)
    assert lab.pins.pin_button.width == 205
    lab.state.present = False  # back to the page's own look
    assert lab.pin_row.objects[0] is lab.pins.pin_button and lab.pins.pin_button not in tour.bar.objects
    # "initial": Bokeh's own 12 px (a style left out of a later `styles` would stay in the browser).
    assert lab.page.styles == lab.tour.bar.styles == {"--bokeh-font-size": "initial"}
    assert tour.jump.stylesheets == [INPUT_TEXT_CSS] and len(lab.tab_bar.stylesheets) == 1
    assert (tour.prev.width, tour.next.width, tour.leave.width, tour.resume.width, tour.jump.width) == (
        110, 150, 130, 170, 260)
    assert lab.pins.pin_button.width == 170


def test_the_expected_points_switch_is_a_row_of_the_tour_above_the_card_on_a_projector():
    """Issue 30: in present mode the switch sat under the card, below the fold at tour steps 1 and 7 (723-775 px);
    it is the tour's row after "Jump to step" and the pin button, above the card, one line long."""
    from app.lab import BAND_LABELS, BAND_ROW

    lab = Lab(query={"present": "true", "tour": "1"})
    bar, band = lab.tour.bar.objects, lab.band
    assert bar.index(lab.tour.jump) + 2 == bar.index(band) < bar.index(lab.tour.caption)
    assert bar[bar.index(band) - 1] is lab.pins.pin_button
    assert band.styles["flex"] == BAND_ROW["flex"] == "1 1 100%"  # a row of its own in the tour's flex box
    assert band.label == "Show the expected point with its spread" and band.margin == (0, 10)
    assert lab.memory_view.bar.margin == (4, 10, 5, 10)  # no gap at the top of the side column
    side = next(o for o in lab.page.objects if isinstance(o, pn.FlexBox)).objects[1]
    assert band not in side.objects
    lab.state.present = False  # back under the chart, with its full label
    assert band not in lab.tour.bar.objects and lab._tab_views["Roofline"].objects[-1] is band
    assert band.label == BAND_LABELS[False] == "Show the expected point (the engine preset) with its spread"
    assert band.styles == {"flex": "initial"} and band.margin == (5, 10)  # BokehJS would keep a style left out
    assert lab.memory_view.bar.margin == (24, 10, 5, 10)


def test_present_legend_glyph_boxes_read_as_shapes_without_growing_the_rows_past_the_fold():
    """Issue 30: the roofline legend's glyph box grew 20 → 33 px with its text (18 / 11), a row 33 px tall, and at
    tour step 18 (five title lines) its last row ended at 736 px of 720; 28 px keeps the star a star (BokehJS draws
    it at 0.4 × the box: 11.2 px ≥ 0.6 × 18) and the rows 5 px shorter, and its padding (blank) is 5 px, not 10."""
    from app.present import LEGEND_GLYPH_PX

    lab = Lab(query={"present": "true", "tour": "18"})
    legend = lab.roofline.legend
    assert (legend.glyph_width, legend.glyph_height) == (LEGEND_GLYPH_PX, LEGEND_GLYPH_PX) == (28, 28)
    assert 0.4 * LEGEND_GLYPH_PX >= 0.6 * PRESENT_TEXT_PX
    assert legend.padding == 5 and legend.border_line_alpha == 0  # blank room, halved on a projector
    lab.state.present = False
    assert (legend.glyph_width, legend.glyph_height, legend.padding) == (20, 20, 10)


def test_a_clickers_next_on_the_last_step_keeps_its_summary_on_screen():
    """A teacher's trial: a double tap of the clicker at step 25 ended the tour, and the closing card the class was
    reading went away.  Only "Finish" (the button) or Esc ends it; a press after that does nothing."""
    lab = Lab(query={"present": "true", "tour": str(len(TOUR))})
    assert lab.tour.index == len(TOUR) - 1 and lab.tour.next.label == "Finish ✓"
    lab.tour._key("next")
    lab.tour._key("next")
    assert lab.tour.index == len(TOUR) - 1 and lab.tour.caption.visible
    lab.tour.next.clicks += 1  # the button
    assert lab.tour.index is None
    lab.tour._key("next")
    assert lab.tour.index is None
