"""The hardware tour: every step sets every lever and quotes the lab's numbers (article 000's figures)."""

import pytest

from core.hardware_tour import HARDWARE_BASE, HARDWARE_TOUR, SECTIONS, hardware_values


def caption(i):
    return " ".join(HARDWARE_TOUR[i].render())


def test_every_step_renders_and_sets_every_lever():
    for step in HARDWARE_TOUR:
        assert set(step.settings) <= set(HARDWARE_BASE), step.title
        assert step.levers()["section"] in SECTIONS
        title, text = step.render()
        assert "{" not in title + text and "nan" not in text
        assert step.source.startswith("article 000")


@pytest.mark.parametrize(("i", "expected"), [
    (0, ["295 FLOP per byte", "989.4 TFLOP/s", "3.35 TB/s"]),
    (1, ["1,365 FLOP/byte", "compute-bound"]),
    (2, ["intensity 1 FLOP/byte", "0.34 %"]),
    # Where the article's text and its figure differ, the card says which it follows (a lecturer's audit).
    (3, ["I = 2.5", "I = 0.17", "The article's text says 0.33, one FLOP per three elements; per byte at BF16 it is "
                                "1/6"]),
    (4, ["2.33×", "3×"]),
    (5, ["138 MB", "59 MB", "2.3× faster", "I = 62.7", '"about d" counts elements, not bytes',
         '"order of magnitude fewer bytes", 2.3× here']),
    (6, ["I = 1 at batch 64"]),
    (7, ["136 kernels", "544 µs", "75 µs", "overhead-bound"]),
    (8, ["64 kernels", "memory-bound"]),
    (9, ["N = 384"]),
    (10, ["N = 16,896 makes 132 blocks, one per SM: 1 wave", "132 + 1 = 133: 2 waves", "whole block more: 0.8 %"]),
    (11, ["shared memory (all SMs) 19.49 TB/s, L2 7.219 TB/s, HBM 2.039 TB/s"]),
    (12, ["V100 SXM2 32GB 139", "A100 SXM4 80GB 153", "H100 SXM5 80GB 295", "206", "281",
          # 989.4 / 125 TFLOP/s and 3.35 / 0.9 TB/s: the ridge 295 / 139 = 2.1× (a teacher's trial: "nearly the same
          # bandwidth" beside the 3.7× drawn)
          "From the V100 to the H100 dense FLOP/s grew 7.9× and bandwidth only 3.7×"]),
    (13, ["compute-bound on a V100", "memory-bound on an H100", "3.0×", "1.6×", "1.4×"]),
    (14, ["1,979 TFLOP/s", "591"]),
])
def test_captions_quote_the_articles_figures(i, expected):
    text = caption(i)
    for fragment in expected:
        assert fragment in text, (fragment, text)


def test_values_follow_the_levers():
    base = hardware_values(HARDWARE_BASE)
    h200 = hardware_values({**HARDWARE_BASE, "gpu": "h200"})
    assert round(base["ridge"]) == 295 and round(h200["ridge"]) == 206
    assert hardware_values({**HARDWARE_BASE, "batch": 56})["matvec_i"] == pytest.approx(56)


def test_apply_sets_a_view_in_one_update():
    class FakeParam:
        def __init__(self):
            self.calls = []

        def update(self, **kw):
            self.calls.append(kw)

    class FakeView:
        param = FakeParam()

    view = FakeView()
    HARDWARE_TOUR[7].apply(view)
    assert len(view.param.calls) == 1 and view.param.calls[0]["layers"] == 12
    assert set(view.param.calls[0]) == set(HARDWARE_BASE)


def test_the_hierarchy_steps_caption_prints_each_bandwidth_as_the_charts_legend_does():
    # Issue 30: at hardware tour step 12 the Hierarchy chart's legend said "HBM 2.0 TB/s" and the caption "2.04 TB/s"
    # (two formatters): one formatter, the same digits in both.
    from app.hardware_view import HardwareView

    step = HARDWARE_TOUR[11]
    view = HardwareView(**{k: v for k, v in step.levers().items() if k != "section"})
    view.section = "Hierarchy"
    legend = [item.label.value for item in view.level_legend.items if item.visible]
    assert legend == ["SRAM 19.49 TB/s", "L2 7.219 TB/s", "HBM 2.039 TB/s"]
    text = caption(11)
    for label in legend:
        assert label.split(" ", 1)[1] in text, (label, text)
    assert caption(0).count("3.35 TB/s") == 1  # step 1 (the H100) as core's fmt_bandwidth prints it


def test_the_wave_step_shows_the_stair_its_caption_describes():
    """A teacher's trial: hardware step 11 said "132 + 1 = 133 blocks take 2 waves" over step 10's chart and readout
    (N = 240 to 400 at M = 132·128: 396 blocks in 3 waves); nothing on screen showed 132 or 133 blocks."""
    from app.hardware_view import HardwareView

    step = HARDWARE_TOUR[10]
    view = HardwareView(**{k: v for k, v in step.levers().items() if k != "section"})
    view.section = "Tiles and waves"
    assert "133 thread blocks in <b>2 wave(s)</b> on 132 SMs" in view.stairs_readout.object
    n, waves = view.stairs.data["n"], view.stairs.data["waves"]
    assert n[0] < 132 * 128 < n[-1]
    assert (waves[n.index(132 * 128)], waves[n.index(132 * 128 + 1)]) == (1, 2)
    assert view.waves_fig.yaxis.ticker.min_interval == 1  # whole waves: no tick at 1.2


def test_the_tile_steps_say_each_loss_as_what_it_is_and_their_product():
    """A teacher's trial: step 11's readout said "99.3 % useful" and then "35.43 GFLOP for 17.72 useful" (50 %), one
    workload called useful twice; step 10's caption said 67 % beside the readout's 66.9 %; and two of the five tiles,
    a row of buttons wider than the 300-px column, lay under the chart."""
    import panel as pn

    from app.hardware_view import HardwareView
    from core.waves import TILES

    view = HardwareView(**{k: v for k, v in HARDWARE_TOUR[10].levers().items() if k != "section"})
    view.section = "Tiles and waves"
    text = view.stairs_readout.object
    tiles, busy = 16897 / 17024, 133 / 264  # N = 132·128 + 1 padded to 133 tiles of 128; 133 blocks in 2 × 132
    useful = tiles * busy
    assert f"({100 * tiles:.1f} % of the padded tiles useful)" in text and "(99.3 %" in text
    assert f"({100 * busy:.1f} % of SM slots busy)" in text and "(50.4 %" in text
    # The product written out, at decimals that multiply out: 99.3 × 50.4 / 100 = 50.05, printed 50.0 as 50.03 is.
    assert (f"99.3 % × 50.4 % = {100 * useful:.1f} % of the work the waves take time for is useful "
            "(17.72 GFLOP of 35.43 GFLOP)") in text
    assert round(17.72 / 35.43, 3) == round(useful, 3) == 0.5 and f"{99.3 * 50.4 / 100:.1f}" == "50.0"
    ten = HardwareView(**{k: v for k, v in HARDWARE_TOUR[9].levers().items() if k != "section"})
    ten.section = "Tiles and waves"
    assert "(66.9 % of the padded tiles useful)" in ten.stairs_readout.object
    assert "66.9 % useful work" in caption(9)
    # A GEMM of one tile's work is counted in FLOP, not "0.00 of 0.00 GFLOP" (a verifying trial).
    tiny = HardwareView(wave_m=8, wave_k=8, n_probe=8, section="Tiles and waves")
    assert "(1,024 FLOP of " in tiny.stairs_readout.object and "0.00" not in tiny.stairs_readout.object
    # The tiles are offered as a list in the column, each of them.
    select = [w for w in view.__panel__().select(pn.widgets.Select) if w.name == "Output tile"]
    assert len(select) == 1 and list(select[0].options) == list(TILES)


def test_the_captions_say_what_the_step_counts_in_plain_words():
    """A teacher's trial: step 3 read "for 1 token(s)", and step 9 "Fuse the layer into 64 kernels", 64 being the
    whole 12-layer step's kernels (4 + 12 × 5), not one layer's."""
    assert "read once for 1 token:" in caption(2)
    assert "Fuse each layer's kernels (64 kernels in the whole step)" in caption(8)
    assert "token(s)" not in " ".join(caption(i) for i in range(len(HARDWARE_TOUR)))


def test_the_generations_step_marks_the_kernel_its_caption_speaks_of():
    # A teacher's trial: step 14 said "a kernel at 200 FLOP/byte is compute-bound on a V100 and memory-bound on an
    # H100" over a chart whose triangles sat at 1, 2.5, 56 and 500: nothing to point at.
    from app.hardware_view import HardwareView

    step = HARDWARE_TOUR[13]
    view = HardwareView(**{k: v for k, v in step.levers().items() if k != "section"})
    marked = dict(zip(view.workloads.data["text"], view.workloads.data["x"], strict=True))
    assert marked["a kernel at 200"] == 200
    ridges = dict(zip(view.gen_ridges.data["text"], view.gen_ridges.data["x"], strict=True))
    v100 = next(x for t, x in ridges.items() if t.startswith("V100"))
    h100 = next(x for t, x in ridges.items() if t.startswith("H100"))
    assert v100 < 200 < h100  # between the two ridges: compute-bound on one, memory-bound on the other
    assert "A kernel at 200 FLOP/byte (the triangle between the ridges) is compute-bound on a V100 and " \
           "memory-bound on an H100" in caption(13)
    assert "and a kernel at 200, the tour's example" in view.gen_text.object
    HARDWARE_TOUR[14].apply(view)  # the next step leaves the article's four workloads alone
    assert view.workloads.data["text"] == ["batch-1 decode", "LayerNorm", "batch-56 decode", "training GEMM"]
    assert "tour's example" not in view.gen_text.object


def test_a_step_outlines_the_kernels_it_speaks_of_and_opens_their_levers_on_a_projector():
    # A teacher's trial: step 2 says "shrink N with its slider", and in present mode the GEMM's group of levers was
    # folded; steps 1 to 4 showed the same chart with nothing to point at.
    from app.hardware_view import FOCUS_LINE_WIDTH, HardwareView

    view = HardwareView(present=True)
    view._section_parts("Kernel atlas")
    assert [card.collapsed for card in view.atlas_groups] == [True] * 5  # step 1 speaks of them all: all folded
    view.go(1)
    assert view.focus == ["gemm"]
    widths = dict(zip(view.atlas_points.data["name"], view.atlas_points.data["line_width"], strict=True))
    assert widths["GEMM 4,096×4,096×4,096"] == FOCUS_LINE_WIDTH
    assert {w for name, w in widths.items() if not name.startswith("GEMM")} == {1}
    assert [card.title for card in view.atlas_groups if not card.collapsed] == ["GEMM C = AB"]
    view.go(6)  # the KV cache step: the decode attention's group
    assert [card.title for card in view.atlas_groups if not card.collapsed] == ["Decode attention over the KV cache"]
    view.stop_tour()  # leaving drops the outline, and folds the group again
    assert view.focus == [] and set(view.atlas_points.data["line_width"]) == {1}
    assert all(card.collapsed for card in view.atlas_groups)
    view.present = False  # off the projector every group is open
    assert not any(card.collapsed for card in view.atlas_groups)


def test_the_kernels_a_step_speaks_of_are_drawn_over_the_others():
    # A teacher's trial: at step 3 the outlined decode matvec (I = 1 at B = 1) lay under decode attention's marker,
    # at the same point, and could not be seen. A scatter draws its rows in order: the step's kernels come last.
    from app.hardware_view import FOCUS_LINE_WIDTH, HardwareView

    view = HardwareView()
    view._section_parts("Kernel atlas")
    view.go(2)
    assert view.focus == ["matvec"]
    data = view.atlas_points.data
    assert data["name"][-1] == "decode matvec 4,096×4,096, B = 1" and data["line_width"][-1] == FOCUS_LINE_WIDTH
    at_matvec = [name for name, x, y in zip(data["name"], data["x"], data["y"], strict=True)
                 if (x, y) == (data["x"][-1], data["y"][-1])]
    assert at_matvec == ["decode attention, S = 8,192, B = 1", "decode matvec 4,096×4,096, B = 1"]
    view.stop_tour()  # no step: the kernels in their own order, the decode attention last
    assert view.atlas_points.data["name"][-1].startswith("decode attention")


def test_the_kv_step_says_its_group_and_what_gqa_does_to_it():
    """A teacher's trial: the main tour gives decode attention 4 FLOP/byte on Llama-3-8B (4 query heads per KV head)
    and this step 1, with 8 KV heads on the slider and no word of g; the work printed "2·g per element" without g."""
    from core.kernels import decode_attention

    text = caption(6)
    assert "each KV head serves one query head (multi-head attention, g = 1)" in text and "I = 1 at batch 64" in text
    assert "I = 2·g/p_kv (Llama-3-8B's g = 4 gives 4, the main tour's \"Add the KV cache\")" in text
    work = decode_attention(8192, 8, 128, 1, 4).formula
    assert "g = 4 query heads per KV head: 8 × 16,777,216 = 134,217,728" in work and "I = 2·g/p_kv = 8 / 2 = 4" in work
    assert "g = 1 query head per KV head: 2 × 16,777,216" in decode_attention(8192, 8, 128).formula


def test_the_wave_step_says_how_much_more_work_its_extra_column_is():
    """A teacher's trial: "twice the time for 0.8 % more work" at N = 132·128 + 1, one column more (0.006 %); the
    0.8 % is article 000's 133 whole blocks (tests/unit/test_waves.py)."""
    text = caption(10)
    assert "N = 16,897 makes 132 + 1 = 133: 2 waves, twice the time for 0.006 % more useful work" in text
    assert "(article 000's whole block more: 0.8 %)" in text
    assert f"{100 / 16896:.3f}" == "0.006" and f"{100 / 132:.1f}" == "0.8"


def test_step_9_says_what_binds_as_the_step_stands():
    """A student set fusion back to unfused, as step 9 asks, and read "Now the weight read (75 µs) binds:
    overhead-bound"."""
    step = HARDWARE_TOUR[8]
    fused = step.render()[1]
    assert "Now the weight read (" in fused and "µs) binds: memory-bound, and the bandwidth fixes apply again." in fused
    unfused = step.render({**step.levers(), "fusion_level": "unfused"})[1]
    assert "binds" not in unfused
    assert "µs) still outlast the weight read (" in unfused and "µs): overhead-bound." in unfused


def test_the_many_gpu_steps_weights_are_per_gpu_at_the_split_shown():
    """Step 17's own button (TP = 2) had made it say "Llama-3-70B in BF16 is 66 GiB of weights"."""
    from core.scenario import Scenario
    from core.tour import GPU_TOUR

    for tp, text in ((1, "holds 131 GiB of weights per GPU at TP = 1;"),
                     (2, "holds 66 GiB of weights per GPU at TP = 2;")):
        assert text in GPU_TOUR[0].render(Scenario(model="llama-3-70b", tp=tp).evaluate())[1]


def test_step_2_follows_the_gemm_its_card_asks_to_shrink():
    """A student shrank N to 16, as step 2 asks, and read "M = K = N = 4,096 … = 16 FLOP/byte" over a chart at 15.9."""
    step = HARDWARE_TOUR[1]
    text = step.render({**step.levers(), "gemm_n": 16})[1]
    assert "C = AB with M = 4,096, K = 4,096, N = 16: 2MKN FLOPs over (MK + KN + MN)·2 bytes = 15.9 FLOP/byte, " \
           "memory-bound." in text
    assert round(2 * 4096 * 4096 * 16 / ((4096 * 4096 + 4096 * 16 + 4096 * 16) * 2), 1) == 15.9


def test_step_10_says_the_time_is_the_staircase_and_the_throughput_a_sawtooth():
    # A student read "Throughput against N is a staircase" over the chart's sawtooth (drops past N = 257 and 385).
    assert "The time against N is a staircase" in caption(9) and "useful throughput is a sawtooth" in caption(9)
