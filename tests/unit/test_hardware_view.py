"""The hardware view without a server: param-driven, figures updated in place, numbers from core."""

import panel as pn
import pytest

from app.hardware_view import HardwareView
from core.hardware_tour import HARDWARE_TOUR, SECTIONS


@pytest.fixture
def view():
    v = HardwareView(gpu="h100-sxm")
    v.__panel__()
    return v


def names_and_x(source):
    return dict(zip(source.data["name"], source.data["x"], strict=True))


def test_standalone_view_is_a_panel_layout(view):
    assert isinstance(view.__panel__(), pn.layout.Panel)
    assert [t for t in view.tabs._names] == list(SECTIONS)


def test_atlas_places_the_articles_kernels(view):
    x = names_and_x(view.atlas_points)
    assert x["GEMM 4,096×4,096×4,096"] == pytest.approx(1365.33, abs=0.01)
    assert x["decode matvec 4,096×4,096, B = 1"] == pytest.approx(1.0)
    assert x["LayerNorm × 8,388,608"] == pytest.approx(2.5)
    assert x["decode attention, S = 8,192, B = 1"] == pytest.approx(1.0)
    assert view.atlas_ridge.location == pytest.approx(295.34, abs=0.01)
    assert "2·M·K·N" in view.atlas_work.object and "compute-bound" in view.atlas_work.object


def test_updates_change_data_in_place_and_follow_the_main_labs_batch(view):
    fig, src = view.atlas_fig, view.atlas_points
    view.batch = 56
    assert view.atlas_fig is fig and view.atlas_points is src
    assert names_and_x(src)["decode matvec 4,096×4,096, B = 56"] == pytest.approx(56)
    assert names_and_x(src)["decode attention, S = 8,192, B = 56"] == pytest.approx(1.0)  # batching cannot fix it
    view.gpu = "h200"
    assert view.atlas_ridge.location == pytest.approx(206.1, abs=0.1)


def test_fusion_toggle_replaces_three_points_by_one(view):
    before = [n for n in view.atlas_points.data["name"] if "×" in n and "GEMM" not in n and "matvec" not in n]
    assert len(before) == 3
    view.fused = True
    fused = [n for n in view.atlas_points.data["name"] if "(fused)" in n]
    assert fused == ["LayerNorm → GeLU → residual add (fused)"]
    assert "saves 67,108,864 bytes" in view.atlas_work.object


def test_flash_attention_beats_naive_with_more_flops(view):
    x = names_and_x(view.atlas_points)
    assert x["attention, FlashAttention (N = 4,096, d = 128)"] > x["attention, naive (N = 4,096, d = 128)"]
    assert "138.4 MB" in view.hier_text.object and "59.3 MB" in view.hier_text.object
    assert "41.3 µs → 17.7 µs" in view.hier_text.object
    # Dao et al.'s count is an IO bound with no L2 reuse; with one head's K and V in L2 the forward pass is past the
    # ridge (a hardware engineer's trial read "17.7 µs on the HBM roof" as FlashAttention being memory-bound).
    from core.kernels import attention_compulsory_bytes, flash_attention

    text = view.hier_text.object
    floor = attention_compulsory_bytes(4096, 128)
    assert floor == 4 * 4096 * 128 * 2  # Q, K, V and O once, BF16
    assert round(flash_attention(4096, 128, 228 * 1024).flop / floor) == 2077
    assert "(4.2 MB): I = 2,077, past the ridge (295), compute-bound as in practice." in text
    assert "59.3 MB (I = 146.9, Dao et al.'s bound)" in text


def test_overhead_ceiling_and_the_decision(view):
    assert "memory-bound" in view.decision.object  # Llama-3-8B at batch 1
    # "Cannot help" is the three-ceiling model's, said so; a real engine's launches hide only in part (a hardware
    # engineer's trial: the Expected tab's CUDA graphs took 12 % off this step).
    assert "Cannot help here, where the longest of the three times sets the step: " in view.fixes.object
    assert "CUDA graphs still shave some of it: the Expected tab counts that" in view.fixes.object
    view.section = "Three ceilings"  # its chart, with the overhead ceiling's key
    view.param.update(step_params=125e6, layers=12)
    assert "overhead-bound" in view.decision.object
    assert "Fixes that can help this overhead-bound step: CUDA graphs" in view.fixes.object
    assert "shave" not in view.fixes.object
    bars = dict(zip(view.ceil_bars.data["regime"], view.ceil_bars.data["us"], strict=True))
    assert bars["overhead"] == pytest.approx(544) and bars["memory"] == pytest.approx(74.6, abs=0.1)
    # The ceiling is FLOPs / overhead time: 2.5e8 FLOP / 544 µs = 0.46 TFLOP/s.
    assert view.ceil_overhead.data["y"][0] == pytest.approx(0.25e9 / 544e-6 / 1e12)
    assert "136 kernels × 4 µs = 544 µs of launches" in view.decision.object
    assert view.ceil_overhead_item.label.value == "overhead ceiling: FLOPs / (kernels × launch)"
    view.param.update(cuda_graphs=True, fusion_level="fused")
    assert "memory-bound" in view.decision.object
    # A teacher's trial read "64 kernels × 4 µs (one CUDA graph)" beside 68 µs: the graph's product, multiplied out.
    assert "one CUDA graph: 4 µs + 64 kernels × 1 µs node gap = 68 µs of launches" in view.decision.object
    assert view.ceil_overhead.data["y"][0] == pytest.approx(0.25e9 / 68e-6 / 1e12)
    assert view.ceil_overhead_item.label.value == "overhead ceiling: FLOPs / (launch + kernels × node gap)"
    # Counts past a thousand with their separators, as every other count of the lab (160 layers × 11 + 4 kernels).
    view.param.update(cuda_graphs=False, fusion_level="unfused", layers=160)
    assert "1,764 kernels × 4 µs = 7,056 µs of launches" in view.decision.object


def test_staircase_and_the_133_block_example(view):
    assert view.stairs.data["n"][0] == 240 and view.stairs.data["n"][-1] == 400
    assert "padded to 16,896 × 384" in view.stairs_readout.object
    view.param.update(wave_m=133 * 128, n_probe=128)
    assert "133 thread blocks in <b>2 wave(s)</b>" in view.stairs_readout.object


def test_hierarchy_levels_with_sources_or_a_note(view):
    assert "no source in the catalogue gives this part's l2 bandwidth" in view.hier_text.object.lower().replace(
        "&#x27;", "'")
    view.gpu = "a100-80gb"
    roofs = view.level_lines.data_source.data
    assert len(roofs["xs"]) == 3  # SRAM, L2, HBM
    # Each roof named with its bandwidth in the legend under the chart, in the roofs' order.
    assert [item.label.value for item in view.level_legend.items] == [
        "SRAM 19.49 TB/s", "L2 7.219 TB/s", "HBM 2.039 TB/s"]
    assert [item.index for item in view.level_legend.items if item.visible] == [0, 1, 2]
    view.gpu = "h100-sxm"  # no sourced L2 bandwidth: two roofs, two names
    assert [item.label.value for item in view.level_legend.items if item.visible] == [
        "SRAM 33.45 TB/s", "HBM 3.35 TB/s"]


def test_generations_ridges_trend_and_sparse_trap(view):
    assert view.gen_ridges.data["text"][:3] == ["V100 SXM2 32GB: 139", "A100 SXM4 80GB: 153", "H100 SXM5 80GB: 295"]
    assert view.gen_sparse.data["x"] == []
    view.show_sparse = True
    assert view.gen_sparse_label.data["text"] == ["H100 SXM5 80GB 2:4 headline: 591"]  # as the ridges are named
    assert set(view.trend_points.data["series"]) == {"peak FLOP/s", "DRAM bandwidth", "interconnect bandwidth"}
    assert "3.0×" in view.gen_text.object


def test_non_gpu_parts_say_what_is_assumed():
    v = HardwareView(gpu="tpu-v5e")
    assert "publishes no per-SM SRAM size" in v.atlas_work.object
    assert "is not a GPU (no thread-block waves): 132 SMs (H100 SXM) assumed" in v.stairs_readout.object
    assert "TPU MXU" in v.atlas_fig.title.text


def test_tour_sets_the_view_and_its_section(view):
    view.go(7)
    assert view.section == "Three ceilings" and view.tabs.active == SECTIONS.index("Three ceilings")
    assert view.layers == 12 and "overhead-bound" in view.tour_caption.object
    view.go(len(HARDWARE_TOUR) - 1)
    assert view.show_sparse and view.tour_next.label == "Finish ✓"
    view._tour_next()
    assert view.tour_index is None and not view.tour_caption.visible and view.show_sparse  # levers stay


def test_leaving_the_tour_puts_the_labs_own_levers_back_as_they_were():
    """A teacher's trial left the hardware tour at step 9 (CUDA graphs on): the main lab kept CUDA graphs and B = 1,
    its overhead ceiling moved from about 45 to 160 TFLOP/s with nothing saying why.  Leaving or finishing the
    tour puts B and CUDA graphs, which are the lab's too, back as they were; the view's own levers stay."""
    from app.lab import Lab

    lab = Lab(query={"batch": "56", "tab": "Hardware"})
    hw = lab.hardware
    hw.go(8)  # "CUDA graphs lift the overhead ceiling": B = 1, graphs on, in the lab too
    assert (lab.scenario.batch, lab.scenario.cuda_graphs) == (1, True) and hw.layers == HARDWARE_TOUR[8].levers()[
        "layers"]
    hw.stop_tour()
    assert (lab.scenario.batch, lab.scenario.cuda_graphs) == (56, False)
    assert hw.layers == HARDWARE_TOUR[8].levers()["layers"]  # its own: where the step left them
    hw.go(0)
    hw.go(len(HARDWARE_TOUR) - 1)
    hw._tour_next()  # Finish
    assert (lab.scenario.batch, lab.scenario.cuda_graphs) == (56, False)


def test_section_follows_the_tabs(view):
    view.tabs.active = 2
    assert view.section == "Tiles and waves"


def test_params_refuse_bad_values(view):
    for name, bad in (("batch", 0), ("gemm_m", -5), ("attn_d", 10_000), ("gpu", "h900")):
        with pytest.raises(ValueError):
            setattr(view, name, bad)
    assert not view.error.visible


def test_user_text_is_escaped(view):
    view.gpu = "rtx-5090"
    assert "<script" not in view.atlas_work.object


def test_links_to_the_main_lab_custom_gpu_and_large_batch(view):
    from core.hardware import custom_accelerator

    view.batch = 8192  # the lab's B goes to 65,536
    assert not view.error.visible
    view.add_gpu(custom_accelerator("My GPU", 2.0, 48, bf16=400))
    assert view.gpu == "custom-my-gpu" and view.atlas_ridge.location == pytest.approx(200)
    assert "My GPU has no published SM count" in view.stairs_readout.object


def test_a_wide_staircase_range_is_capped_and_says_so(view):
    view.param.update(n_min=1, n_max=100_000)
    assert len(view.stairs.data["n"]) == 4001
    assert "N = 1 to 4,001 (at most 4,000 points), not to 100,000" in view.stairs_readout.object
    view.param.update(n_min=500, n_max=100)  # reversed: read as 100 to 500
    assert view.stairs.data["n"][0] == 100 and view.stairs.data["n"][-1] == 500


def _series_looks(fig) -> dict[str, tuple[frozenset, frozenset]]:
    """Each colour drawn on ``fig`` -> (the dashes of its lines, the markers of its points), row by row where a
    glyph takes them from its data (one colour is one series: a part's roof and its ridge mark share it)."""
    from bokeh.models import GlyphRenderer, Line, MultiLine, Scatter

    looks: dict[str, tuple[set, set]] = {}

    def column(glyph, prop, n):
        spec = getattr(glyph, prop)
        name = spec.get("field") if isinstance(spec, dict) else spec
        if isinstance(name, str) and name in glyph_source.data:
            return [str(v) for v in glyph_source.data[name]]
        return [str(spec.get("value") if isinstance(spec, dict) else spec)] * n

    for r in fig.select({"type": GlyphRenderer}):
        glyph, glyph_source = r.glyph, r.data_source
        if not isinstance(glyph, (Line, MultiLine, Scatter)):
            continue
        data = glyph_source.data
        n = 1 if isinstance(glyph, Line) else len(next(iter(data.values()), []))
        colors = column(glyph, "fill_color" if isinstance(glyph, Scatter) else "line_color", n)
        if isinstance(glyph, Scatter):
            shapes = column(glyph, "marker", n)
            for c, m in zip(colors, shapes, strict=True):
                looks.setdefault(c, (set(), set()))[1].add(m)
        else:
            dashes = column(glyph, "line_dash", n)
            for c, d in zip(colors, dashes, strict=True):
                looks.setdefault(c, (set(), set()))[0].add(d)
    return {c: (frozenset(d), frozenset(m)) for c, (d, m) in looks.items()}


@pytest.mark.parametrize("chart", ["gen_fig", "atlas_fig", "hier_fig", "trend_fig"])
def test_no_two_series_share_both_dash_and_marker(chart):
    """Colour-blind safety: H100 (green), H200 (red) and MI300X (brown) were one olive under deuteranopia, each a
    solid line with circles; every series now differs from every other in its dash or its marker."""
    from core.hardware import load_catalogue

    view = HardwareView(gpu="h100-sxm", generations=list(load_catalogue()))  # every part: 25 roofs
    looks = _series_looks(getattr(view, chart))
    assert len(looks) >= 3, looks
    items = list(looks.items())
    for i, (c1, look1) in enumerate(items):
        for c2, look2 in items[i + 1:]:
            assert look1 != look2, (chart, c1, c2, look1)
    if chart == "gen_fig":  # row by row too: every part's roof and ridge mark, even where colours repeat
        pairs = list(zip(view.gen_roofs.data["dash"], view.gen_ridges.data["marker"], strict=True))
        assert len(pairs) == len(load_catalogue()) and len(set(pairs)) == len(pairs)


def test_the_atlas_title_is_two_short_lines():
    # The toolbar shares the title's row: one long line ("… (tensor cores (dense matrix-multiply units))") ran
    # under it.
    v = HardwareView(gpu="h100-sxm")
    assert v.atlas_fig.title.text == ("NVIDIA H100 SXM5 80GB: ridge 295 FLOP/byte\n"
                                      "roof: tensor cores (dense matrix-multiply units)")


@pytest.mark.parametrize("bf16", [2e6, 1e7])
def test_every_gpu_the_custom_form_accepts_is_drawn(view, bf16):
    """Issue 31, F6: a custom BF16 peak of 2e6 TFLOP/s is inside the custom-GPU form's range, but the Tiles and
    waves section refused it ("peak FLOP/s must be positive, got 2e+18") and the tab kept the H100's charts."""
    from core.hardware import CUSTOM_RANGES, custom_accelerator

    assert CUSTOM_RANGES["peak"][0] <= bf16 <= CUSTOM_RANGES["peak"][1]
    view.add_gpu(custom_accelerator("Big", bandwidth_tbs=CUSTOM_RANGES["bandwidth"][0], capacity_gb=0.1, bf16=bf16))
    assert not view.error.visible
    assert view.peak_span.location == pytest.approx(bf16) and "Big: ridge" in view.atlas_fig.title.text
    assert max(view.stairs.data["tflops"]) <= bf16 and "of " + f"{bf16:,.0f} TFLOP/s" in view.stairs_readout.object


def test_a_refused_input_clears_the_charts_it_would_have_changed(view, monkeypatch):
    """A refusal said so above the charts, and the charts went on showing the previous GPU's numbers under it."""
    import app.hardware_view as hw

    assert view.atlas_points.data["x"] and view.stairs.data["n"]

    def refuse(*_args, **_kwargs):
        raise ValueError("tile must be a whole number")

    monkeypatch.setattr(hw, "staircase", refuse)
    view.gpu = "h200"
    assert view.error.visible and "tile must be a whole number" in view.error.object
    assert not view.stairs.data["n"] and not view.atlas_points.data["x"] and not view.gen_roofs.data["xs"]
    assert view.stairs_readout.object == "" and view.atlas_work.object == ""
    monkeypatch.undo()
    view.gpu = "h100-sxm"
    assert not view.error.visible and view.stairs.data["n"] and view.atlas_points.data["x"]


def test_a_gpu_added_again_under_its_name_with_new_numbers_is_drawn_with_them(view):
    """Found by the fuzz tier (issue 31): the same name is the same id, so the selector did not change, and the
    tab kept drawing the first numbers (a student correcting a typo in the peak saw the typo's charts)."""
    from core.hardware import custom_accelerator

    view.add_gpu(custom_accelerator("My GPU", 2.0, 48, bf16=400))
    view.add_gpu(custom_accelerator("My GPU", 2.0, 48, bf16=800))
    assert view.atlas_ridge.location == pytest.approx(400) and view.peak_span.location == pytest.approx(800)
    assert view.accelerator().dense_flop_per_s["bf16"] == 800e12


def test_the_labs_hardware_tab_follows_a_gpu_added_again_with_new_numbers():
    from app.lab import Lab
    from core.hardware import custom_accelerator

    lab = Lab()
    view = lab._hardware_view()
    lab.scenario.add_gpu(custom_accelerator("My GPU", 2.0, 48, bf16=400))
    assert view.peak_span.location == pytest.approx(400)
    lab.scenario.add_gpu(custom_accelerator("My GPU", 2.0, 48, bf16=800))  # the Bring your own form, corrected
    assert view.peak_span.location == pytest.approx(800) and lab.result.ridge_point == pytest.approx(400)


def _plots(viewable) -> set[str]:
    """The names of the Bokeh plots a Panel object puts in a document."""
    from bokeh.document import Document
    from bokeh.models import Plot

    return {m.name for m in viewable.get_root(Document()).references() if isinstance(m, Plot)}


def test_the_tab_opens_with_the_front_sections_chart_only():
    # Issue 31: the tab built all nine charts when it first opened (~0.25 s of the event loop every student shares);
    # a first visit sees the Kernel atlas. Another section's charts are built when it is first shown, and keep
    # the view's numbers.
    view = HardwareView(gpu="h100-sxm")
    assert _plots(pn.panel(view)) == {"hw-atlas"}
    view.section = "Generations"
    assert _plots(pn.panel(view)) == {"hw-atlas", "hw-generations", "hw-trend", "hw-timeline-fig"}
    assert view.peak_span.location == pytest.approx(989.4, abs=0.1)  # the Tiles section's, set before its chart


def test_a_section_built_in_present_mode_is_in_present_mode():
    view = HardwareView(gpu="h100-sxm", present=True)
    view._on_present()
    view.section = "Tiles and waves"
    fig = view.stairs_fig
    assert fig.xaxis[0].axis_label_text_font_size == view.atlas_fig.xaxis[0].axis_label_text_font_size
    assert fig.xaxis[0].axis_label_text_font_size != HardwareView(gpu="h100-sxm").stairs_fig.xaxis[0] \
        .axis_label_text_font_size


def _contrast_on_white(color: str) -> float:
    """WCAG 2's contrast ratio of ``color`` ("#rrggbb") against white, computed here from the definition."""
    lin = [(c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4)
           for c in (int(color[i:i + 2], 16) / 255 for i in (1, 3, 5))]
    return 1.05 / (0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2] + 0.05)


def test_the_generations_names_read_on_white_in_their_series_colour(view):
    """A teacher's trial: the Generations chart's ridge names were written in the series' own sky blue and orange,
    2.2:1 and 2.1:1 on white; a name reads at WCAG AA's 4.5:1, in its series' hue (the marker keeps the colour)."""
    data = view.gen_ridges.data
    assert len(data["text"]) >= 5
    assert min(_contrast_on_white(c) for c in data["text_color"]) >= 4.5
    assert min(_contrast_on_white(c) for c in data["color"]) < 2.5  # the markers' own colours, as before
    # Hue kept: each channel scaled by one factor (sky blue #56B4E9 → #3b7ca1).
    assert dict(zip(data["color"], data["text_color"], strict=True))["#56B4E9"] == "#3b7ca1"


def test_a_typed_number_out_of_range_is_refused_by_name_and_the_box_shows_the_value_in_use(view, monkeypatch):
    """A verifying trial typed 0 into "Readout at N": the box kept the 0 beside a readout of N = 257, no word said
    why.  The box is refused with the range and goes back to the value in use; emptied, it goes back silently."""
    import app.controls as controls_module

    said = []
    monkeypatch.setattr(controls_module, "notify_refusal", said.append)
    view.section = "Tiles and waves"
    box = next(w for w in view.__panel__().select(pn.widgets.FloatInput) if w.label == "Readout at N")
    box.value = 0
    assert (view.n_probe, box.value) == (257, 257)
    assert said == ["Readout at N: 0 refused; type a whole number from 1 to 100,000."]
    # A whole-number box dropped the ".": a teacher's trial typed 1.5 and got N = 15.  Refused by name; 300.0 is 300.
    box.value = 1.5
    assert (view.n_probe, box.value, said[-1]) == (257, 257, "Readout at N: 1.5 refused; type a whole number from 1 "
                                                              "to 100,000.")
    said.pop()
    box.value = None
    assert (view.n_probe, box.value, len(said)) == (257, 257, 1)
    box.value = 300.0  # accepted, as the whole number it is: the readout follows
    assert view.n_probe == 300 and type(view.n_probe) is int and "N = 300 " in view.stairs_readout.object
    view.n_probe = 256  # set elsewhere (a tour step): the box follows
    assert box.value == 256
    view.section = "Three ceilings"  # a number, not a whole one: refused the same way
    params = next(w for w in view.__panel__().select(pn.widgets.FloatInput) if w.label == "Parameters read per step")
    params.value = 5.0
    assert (view.step_params, params.value) == (8.03e9, 8.03e9)
    assert said[-1] == "Parameters read per step: 5 refused; type a number from 1,000,000 to 2,000,000,000,000."


def test_a_part_keeps_its_colour_whatever_else_is_overlaid(view):
    """A teacher's trial: the A100 was brown at tour step 13 (six parts) and blue at step 15 (two)."""
    view.section = "Generations"
    six = dict(zip(view.gen_roofs.data["name"], zip(view.gen_roofs.data["color"], view.gen_roofs.data["dash"],
                                                      strict=True), strict=True))
    view.generations = ["a100-80gb", "h100-sxm", "l4"]
    two = dict(zip(view.gen_roofs.data["name"], zip(view.gen_roofs.data["color"], view.gen_roofs.data["dash"],
                                                      strict=True), strict=True))
    assert {name: two[name] for name in six if name in two} == {name: six[name] for name in six if name in two}
    assert len(two) == 3 and len(set(two.values())) == 3  # the part not in the default six takes a style of its own


def test_the_readout_says_where_the_chart_and_the_readout_part(view):
    """A teacher's trial: "N from" 240 with "N to" 15 drew 15 to 240 in silence, and a readout N off the chart's range
    stood alone, off every curve, with nothing said."""
    view.section = "Tiles and waves"
    assert "past N to" not in view.stairs_readout.object and "outside" not in view.stairs_readout.object
    view.param.update(n_min=240, n_max=15)
    text = view.stairs_readout.object
    assert "N from (240) is past N to (15): the chart shows N = 15 to 240." in text
    assert "The readout's N = 257 lies outside the chart's N = 15 to 240." in text
    assert view.stairs.data["n"][0] == 15 and view.stairs.data["n"][-1] == 240


@pytest.mark.parametrize(("tile", "m", "n"), [("128×128", 132 * 128, 132 * 128 + 1), ("64×64", 64, 351),
                                               ("128×64", 1000, 777), ("256×128", 16896, 257)])
def test_the_readouts_product_multiplies_out_as_printed(view, tile, m, n):
    """A verifying trial: "91.4062 % × 4.5455 % = 4.1548 %", whose factors multiply to 4.1549: where no count of
    decimals made the whole's share agree with its factors', the share printed was the whole's."""
    import re

    view.section = "Tiles and waves"
    view.param.update(tile=tile, wave_m=m, n_probe=n)
    a, b, c = re.search(r"([\d.]+) % × ([\d.]+) % = ([\d.]+) %", view.stairs_readout.object).groups()
    decimals = len(c.split(".")[1])
    assert len(a.split(".")[1]) == len(b.split(".")[1]) == decimals
    assert f"{float(a) * float(b) / 100:.{decimals}f}" == c


def test_the_generations_section_says_the_timelines_figures_and_the_twenty_years_compounded(view):
    """Article 004 section 02's compounding and article 000's timeline figures are in the section's words, not only
    in a hover a projector never shows (a lecturer's audit)."""
    view.section = "Generations"
    view.__panel__()
    assert round(3.0**10) == 59_049 and round(1.6**10) == 110 and round(1.4**10, 1) == 28.9
    assert round(1.875**10) == 537 and round(3.0**10 / 1.6**10) == 537
    text = view.gen_text.object
    assert "peak FLOP/s 3.0^10 = 59,049× (&quot;up 60,000×&quot;)" in text
    assert "1.875^10 = 537× more FLOP demanded per byte" in text
    timeline = view.timeline_text.object
    for fragment in ("2017 · Volta ships tensor cores</b>: FP16 matmul throughput jumps about 8×", "1.30×",
                     "2022 · FlashAttention makes attention IO-aware</b>: 2-4× faster with 5-20 % of the memory"):
        assert fragment in timeline
