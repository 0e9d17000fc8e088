"""The Ladder tab (app/ladder_view.py): its rows are core.ladder's numbers, the article's climb by hand, toggling
and reordering rungs, the chart's points and arrows, and the rungs in the link."""

import pytest

from app.lab import Lab
from app.ladder_view import chart_data, ladder_rows, ladder_table_html
from core.ladder import ARTICLE_ORDER, article_start, climb, direct, ladder_start
from core.scenario import Scenario


@pytest.fixture(scope="module")
def lab():
    lab = Lab(query={})
    lab.state.tab = "Ladder"
    return lab


def test_the_default_scenario_starts_where_the_article_does(lab):
    # The lab's default (70B BF16 on one H100) does not fit; the ladder starts at the smallest split that fits.
    start, note = ladder_start(lab.state.scenario)
    assert start.levers() == article_start().levers() and start.tp == 2
    assert "TP = 2" in note and "TP = 1" in note
    assert "does not fit at TP = 1 (weights and KV cache at B = 1): it starts at TP = 2" in lab.ladder.table.object
    fits = article_start()
    assert ladder_start(fits)[0] is fits and ladder_start(fits)[1] == ""


def test_the_chart_says_its_rates_and_times_are_ceilings(lab):
    # A teacher's trial: on a projector the table's "tokens/s per GPU 4,016.3" never said "ceiling"; the caption that
    # does sat below the fold.  The chart's title, above the table, says it.
    assert "ceilings, as is every rate and time in the table" in lab.ladder.figure.title.text
    assert "roofline ceiling, not what a measured engine delivers" in lab.ladder.table.object


def test_the_rows_are_cores_numbers(lab):
    core = climb(article_start())
    rows = ladder_rows(lab.ladder.ladder)
    assert [r["rung"] for r in rows] == [None, *ARTICLE_ORDER]
    for row, step in zip(rows, core.steps, strict=True):
        assert {k: row[k] for k in step.numbers()} == step.numbers()


def test_the_article_climb_by_hand(lab):
    rows = ladder_rows(lab.ladder.ladder)
    # B: one at a time; 9 slots at 8,192 reserved tokens each; 48 after INT4 frees 49 GiB; 256 (vLLM's cap) paged.
    assert [r["batch"] for r in rows] == [1, 9, 48, 48, 48, 256, 256, 256]
    assert [r["k"] for r in rows] == [1, 1, 1, 4, 4, 4, 4, 4]
    assert [r["p"] for r in rows] == [2, 2, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    for r in rows:
        assert r["intensity"] == 2 * r["batch"] * r["k"] / r["p"]  # I = 2·B·k/p
        assert r["tokens_per_s_per_gpu"] == pytest.approx(r["batch"] * r["tokens_per_s_per_sequence"] / 2)  # 2 GPUs
        assert r["bound"] == ("compute" if r["intensity"] > 295.3 else "memory")
    assert [round(r["intensity"]) for r in rows] == [1, 9, 192, 768, 768, 4096, 4096, 4096]
    assert [r["max_batch"] for r in rows] == [9, 9, 48, 48, 48, 681, 681, 681]
    assert [r["pulls"] for r in rows[1:]] == ["raises B", "lowers p", "raises k", "relieves capacity",
                                              "relieves capacity", "removes traffic", "splits the pools"]
    html = lab.ladder.table.object
    assert html.count("<tr data-rung=") == 8
    assert '<tr data-rung="weight_quantization"><td class="k">2 <span class="rung-title">Weight quantization' in html
    assert "<th>B; k; p</th>" in html and "<td>48; 1; 0.5</td><td>192<br>" in html
    assert "<td>3,055.5</td>" in html  # tokens/s per GPU, one decimal as the notes and the tour write it
    # k = 4 past the point where it pays: said once, under the rung where it starts (paging's B = 256).
    assert html.count('data-readout="speculation-cost"') == 1
    cost = html.index('data-readout="speculation-cost"')
    assert html.index('data-rung="paged_attention"') < cost < html.index('data-rung="flash_attention"')
    assert "so k = 1 at B = 256 gives 6,123.8 tokens/s per GPU (here 4,016.3)" in html


def test_the_chart_joins_the_points_that_moved(lab):
    data = chart_data(lab.ladder.ladder)
    p = data["points"]
    assert p["x"] == [1, 9, 192, 768, 768, 4096, 4096, 4096]
    # Below the ridge the point climbs the bandwidth slope (3.35 TB/s × I); past it the flat roof, 989.4 TFLOP/s.
    assert p["y"][:3] == pytest.approx([3.35, 30.15, 643.2])
    assert p["y"][3:] == pytest.approx([989.4] * 5)
    assert p["label"] == ["0 start", "1 batching", "2 quantization", "3 speculation, 4 GQA/MLA", "",
                          "5 paging, 6 Flash, 7 pools", "", ""]
    # Where each label goes is the browser's (app/label_layout.py): right of its point until it is laid out.
    assert p["xoff"] == [10] * 8 and p["yoff"] == [0] * 8 and p["align"] == ["left"] * 8
    assert data["arrows"]["x_start"] == [1, 9, 192, 768] and data["arrows"]["x_end"] == [9, 192, 768, 4096]
    assert lab.ladder.points.data == p
    assert lab.ladder.ridge.location == pytest.approx(989.4e12 / 3.35e12)


def test_the_end_state_equals_the_same_levers_directly(lab):
    ladder = lab.ladder.ladder
    assert ladder.final_scenario.levers() == direct(article_start()).levers()


def test_toggling_a_rung_removes_its_row_and_reordering_follows():
    lab = Lab(query={})
    lab.state.tab = "Ladder"
    view = lab.ladder
    view.order.value = "5, 1, 9, 5"  # no rung 9; a repeat counts once
    assert lab.state.ladder == ["paged_attention", "continuous_batching"] and view.order.value == "5,1"
    assert view.rungs.value == ["paged_attention", "continuous_batching"]
    rows = ladder_rows(view.ladder)
    assert [r["rung"] for r in rows] == [None, "paged_attention", "continuous_batching"]
    assert "weight_quantization" not in view.table.object
    # Paging first: 127 fit, but one request at a time until continuous batching fills them (B = 127).
    assert [r["batch"] for r in rows] == [1, 1, 127] and rows[1]["max_batch"] == 127
    assert len(view.points.data["x"]) == 3
    assert view.ladder.final_scenario.levers() == direct(article_start(), lab.state.ladder).levers()
    assert lab.link.query()["ladder"] == "paged_attention,continuous_batching"
    view.reset.clicks += 1
    assert lab.state.ladder == list(ARTICLE_ORDER) and view.rungs.value == list(ARTICLE_ORDER)
    assert "ladder" not in lab.link.query()
    view.rungs.value = [r for r in ARTICLE_ORDER if r != "weight_quantization"]  # a toggle off removes its row
    assert lab.state.ladder == [r for r in ARTICLE_ORDER if r != "weight_quantization"]
    assert '<tr data-rung="weight_quantization">' not in view.table.object and view.order.value == "1,3,4,5,6,7"
    view.rungs.value = [*view.rungs.value, "weight_quantization"]  # on again: applied last
    assert lab.state.ladder[-1] == "weight_quantization" and view.order.value == "1,3,4,5,6,7,2"
    view.rungs.value = []
    assert [r["rung"] for r in ladder_rows(view.ladder)] == [None] and lab.link.query()["ladder"] == ""


def test_the_rungs_travel_in_the_link():
    lab = Lab(query={"ladder": ["speculative_decoding,continuous_batching"], "tab": ["Ladder"]})
    assert lab.state.ladder == ["speculative_decoding", "continuous_batching"]
    assert [r["rung"] for r in ladder_rows(lab.ladder.ladder)] == [None, "speculative_decoding",
                                                                    "continuous_batching"]
    query = lab.link.query()
    assert query["ladder"] == "speculative_decoding,continuous_batching" and query["tab"] == "Ladder"
    again = Lab(query={k: [v] for k, v in query.items()})
    assert again.state.ladder == lab.state.ladder and again.link.query() == query
    assert Lab(query={"ladder": [""]}).state.ladder == []


def test_a_bad_rung_in_a_link_is_left_out_with_a_notice():
    lab = Lab(query={"ladder": ["warp_drive, Paged_Attention ,paged_attention"]})
    assert lab.state.ladder == ["paged_attention"]
    assert any("ignored ladder rungs 'warp_drive', 'paged_attention'" in n for n in lab.state.notices)


def test_another_scenario_climbs_from_itself():
    lab = Lab(Scenario(model="llama-3-8b", gpu="h100-sxm"), query={"tab": ["Ladder"]})
    rows = ladder_rows(lab.ladder.ladder)
    assert lab.ladder.ladder.start.levers() == lab.state.scenario.levers()  # it fits: no note
    assert "smallest split" not in lab.ladder.table.object
    assert rows[0]["gpus"] == 1 and rows[-1]["batch"] == 256
    lab.state.scenario.batch = 4  # the start's B: one row's worth of change
    assert ladder_rows(lab.ladder.ladder)[0]["batch"] == 4


def test_present_mode_enlarges_the_chart_text(lab):
    lab.state.present = True
    try:
        assert lab.ladder.figure.xaxis[0].axis_label_text_font_size == "18px"
        assert lab.ladder.table.css_classes == ["present"]
    finally:
        lab.state.present = False
    assert lab.ladder.table.css_classes == []


def test_not_climbed_until_the_tab_opens():
    lab = Lab(query={})
    assert lab.ladder is None
    lab.state.tab = "Ladder"
    lab.state.tab = "Roofline"
    lab.state.scenario.batch = 2
    assert ladder_rows(lab.ladder.ladder)[0]["batch"] == 1  # climbed again only when the tab is open


def test_the_ladder_serves_the_mix_and_block_of_the_serving_inputs():
    lab = Lab(query={"tab": ["Ladder"], "mix": ["fixed"], "block-size": ["32"]})
    steps = {s.rung: s for s in lab.ladder.ladder.steps}
    assert "static batching in the same slots sustains 9.0" in steps["continuous_batching"].summary  # no spread
    assert steps["paged_attention"].effect["block_size"] == 32
    # Fixed lengths: every sequence holds 161 + 337/2 tokens on average over its decode, 161 + 338 at the end;
    # blocks of 32 reserve ceil((161 + t)/32)·32.
    assert lab.ladder.ladder.mix_prompt == 161 and lab.ladder.ladder.mix_output == 338
    lab.state.block_size = 16
    assert {s.rung: s for s in lab.ladder.ladder.steps}["paged_attention"].effect["block_size"] == 16


def test_a_class_on_one_scenario_climbs_once_and_a_sessions_own_gpu_climbs_its_own():
    from app.ladder_view import shipped
    from core.hardware import custom_accelerator

    a, b = Lab(query={"tab": ["Ladder"]}), Lab(query={"tab": ["Ladder"]})
    assert a.ladder.ladder is b.ladder.ladder  # one climb for both sessions (read only)
    assert a._tab_views["Ladder"] is not b._tab_views["Ladder"]
    # A session's own GPU with the H100's numbers but twice its bandwidth: its own climb, its own numbers.
    gpu = custom_accelerator("my h100", bandwidth_tbs=6.7, capacity_gb=80, bf16=989.4)
    b.state.scenario.add_gpu(gpu)
    assert not shipped(b.state.scenario) and shipped(a.state.scenario)
    mine, shared = ladder_rows(b.ladder.ladder), ladder_rows(a.ladder.ladder)
    assert mine[0]["attainable_flop_per_s"] == pytest.approx(2 * shared[0]["attainable_flop_per_s"])  # BW·I, I = 1
    assert b.ladder.ladder is not a.ladder.ladder


def test_present_mode_shortens_the_chart_so_the_table_starts_above_the_fold(lab):
    # Issue 30, tour step 25 at 1280x720: under the 360-px chart and the article's paragraph at 18 px the table
    # began at 700 px (tests/browser/test_browser_present.py measures it).
    from app.ladder_view import CHART_HEIGHT, PRESENT_CHART_HEIGHT

    lab.state.present = True
    try:
        assert lab.ladder.figure.height == PRESENT_CHART_HEIGHT == CHART_HEIGHT - 100
    finally:
        lab.state.present = False
    assert lab.ladder.figure.height == CHART_HEIGHT == 360


def test_an_moes_rows_name_the_intensity_they_print_and_why_past_the_ridge_is_memory_bound():
    """A trial's Qwen3-30B-A3B: "16 · 1 · 2" beside I = 2.655 under "I = 2·B·k/p" (2·16·1/2 is 16), and "memory"
    under 449.8 with the ridge at 295.3."""
    import html as html_lib

    moe = climb(Scenario(model="qwen3-30b-a3b", batch=16))
    page = html_lib.unescape(ladder_table_html(moe))
    assert "<th>I = 2·B·k·N_active / (N_read·p)</th>" in page and "N_active / N_read" in page
    r = moe.steps[0].result  # N_read·p: the bytes the step reads
    assert moe.steps[0].numbers()["intensity"] == pytest.approx(2 * 16 * 1 * r.n_active_params / r.weight_bytes_read,
                                                                rel=1e-9)
    assert "<td>449.8<br><span class=\"pulls\">memory, by KV reads</span></td>" in page
    assert "<td>2.655<br><span class=\"pulls\">memory</span></td>" in page
    dense = ladder_table_html(climb(Scenario(model="llama-3-70b", tp=2)))
    assert "<th>I = 2·B·k/p</th>" in dense and "by KV reads</span>" not in dense


def test_a_rung_that_moves_the_compute_roof_draws_the_roof_it_moves_to():
    """A teacher's trial: from FP8 weights, rung 2's INT4 (weight-only, BF16 arithmetic) sat under the only roof
    drawn, the FP8 one, and the axis ran to 10⁵. The BF16 roof is drawn dashed and said under the table; the axis
    ends a decade over the higher roof."""
    from app.ladder_view import LadderView, later_roof
    from app.state import LabState

    start = Scenario(model="llama-3-8b", gpu="h200", weight_dtype="fp8", batch=24, spec_k=3)
    ladder = climb(start)
    moved = later_roof(ladder)
    assert moved.compute_roof == "bf16" and moved.peak_flop_per_s == pytest.approx(989.4e12)
    html = ladder_table_html(ladder)
    assert ("The chart's dashed roof is 989.4 TFLOP/s, where the compute roof moves from 1,979: INT4 is weight-only "
            "(W4A16): dequantised and multiplied in BF16.") in html
    assert later_roof(climb(Scenario(tp=2))) is None and "dashed roof" not in ladder_table_html(climb(Scenario(tp=2)))
    # The caption's ridge is the chart's (FP8's, 412), the dashed roof's beside it; the rung says the roof moved; each
    # row's bound against its own ridge (a verification trial: "Ridge point 206.1" under a line at 412).
    assert "Ridge point 412.3 FLOP/byte (206.1 on the dashed roof)" in html
    rung = next(s for s in ladder.steps if s.rung == "weight_quantization")
    assert ("; the compute roof moves from 1,979 to 989.4 TFLOP/s (INT4 is weight-only (W4A16): dequantised and "
            "multiplied in BF16)") in rung.summary
    view = LadderView(state=LabState(scenario=start, tab="Ladder"))
    assert max(view.later_roof.data["y"]) == pytest.approx(989.4) and view.figure.y_range.end == 1e4


def test_the_tables_tokens_per_gpu_read_as_the_tours_ladder_steps_say_them():
    # The last note's trial: the Ladder tab said 23 tokens/s per GPU beside the tour's step 21, "22.7 tokens/s per
    # GPU", and 202 beside step 22's "201.6".
    from core.tour import TOUR

    step = TOUR[20]
    lab = Lab(Scenario(**step.levers()), query={})
    lab.state.tab = "Ladder"
    html = lab.ladder.table.object
    caption = step.render(lab.state.result)[1]
    assert "22.7 tokens/s per GPU" in caption
    start = html[html.index('<tr data-rung="start">'):]
    assert "<td>22.7</td>" in start[:start.index("</tr>")]
    assert "<td>201.6</td>" in html  # step 22's rung


def test_the_order_box_says_what_it_left_out():
    """An attacker's trial: "5,1,5,99,-1,<b>x</b>" became "5,1" without a word.  What is not a rung number is named
    (as text), a repeat is said to count once, and a good order clears the note."""
    lab = Lab(query={"tab": "Ladder"})
    lab.ladder.order.value = "5,1,5,99,-1,<b>x</b>"
    assert lab.ladder.order.value == "5,1" and lab.state.ladder == ["paged_attention", "continuous_batching"]
    note = lab.ladder.order_note.text
    assert "Left out &#x27;99&#x27;, &#x27;-1&#x27;, &#x27;&lt;b&gt;x&lt;/b&gt;&#x27;: the rungs are 1 to 7." in note
    assert "A rung given twice counts once." in note and "<b>" not in note
    lab.ladder.order.value = "2,3"
    assert not lab.ladder.order_note.visible and lab.state.ladder == ["weight_quantization", "speculative_decoding"]


def test_rows_and_chart_keep_the_articles_numbers_whatever_the_order():
    """A student switched speculation off: the rows and the chart's labels renumbered ("3 GQA/MLA"), under toggles and
    an order box that kept article 004's numbers ("4 GQA/MLA", order "1,2,4,5,6,7")."""
    from core.ladder import LadderSettings, article_start, climb

    ladder = climb(article_start(), ["paged_attention", "continuous_batching"], LadderSettings())
    assert [r["number"] for r in ladder_rows(ladder)] == [0, 5, 1]
    assert [r["n"] for r in ladder_rows(ladder)] == [0, 1, 2]
    html = ladder_table_html(ladder)
    assert '<td class="k">5 <span class="rung-title">PagedAttention' in html
    assert '<td class="k">1 <span class="rung-title">Continuous batching' in html
    labels = [lab for lab in chart_data(ladder)["points"]["label"] if lab]
    assert labels[0].startswith("0 start") and any(lab.startswith("1 ") for lab in labels)
    assert not any(lab.startswith("2 ") for lab in labels)
