"""The Serving tab (app/serving_system.py): each section's numbers are core's and the hand-computed ones, the
sparkline is built from numbers only, and the tab computes only while it is open."""

import re
from html import unescape
from types import SimpleNamespace

import numpy as np
import pytest

from app.lab import Lab
from app.serving_system import batch_sparkline, pools_html, serving_system_html, time_binned_batch
from core.batching import SHAREGPT, compare_batching
from core.disaggregation import plan_pools
from core.ladder import article_start
from core.scenario import Scenario


@pytest.fixture(scope="module")
def lab():
    lab = Lab(query={"tab": ["Serving"]})
    return lab


@pytest.fixture(scope="module")
def html(lab):
    return lab._tab_views["Serving"].pane.object


def _text(html: str) -> str:
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)))


def test_time_binned_batch_by_hand():
    def steps(ends):
        return SimpleNamespace(step_batch=np.array([2, 4]), step_time_s=np.array([1.0, 1.0]), step_end_s=np.array(ends))

    run = steps([1.0, 2.0])
    assert time_binned_batch(run, 4.0, 4).tolist() == [2, 4, 0, 0]
    gap = steps([1.0, 3.0])
    assert time_binned_batch(gap, 4.0, 4).tolist() == [2, 0, 4, 0]  # idle between the steps counts as 0
    assert time_binned_batch(gap, 4.0, 2).tolist() == [1, 2]


def test_the_sparkline_is_cores_time_mean_batch():
    c = compare_batching(article_start())
    for run in (c.static, c.continuous):
        binned = time_binned_batch(run, run.makespan_s, 200)
        assert binned.mean() == pytest.approx(run.time_mean_batch, rel=1e-9)
    assert time_binned_batch(c.continuous, c.continuous.makespan_s, 10)[:9] == pytest.approx([9] * 9, abs=0.05)
    svg = batch_sparkline(c.static, c.continuous)
    # Numbers only: every text in the SVG is a number (the slots, 0, the time axis's ends).
    assert re.findall(r"<text[^>]*>([^<]*)</text>", svg) == ["9", "0", "0 s", f"{c.static.makespan_s:,.0f} s"]
    assert svg.count("<polyline") == 2 and not re.search(r"<(?!/?(svg|line|text|polyline)\b)", svg)


def test_batching_section_is_cores(html):
    c = compare_batching(article_start())
    st, co = c.static.summary(), c.continuous.summary()
    text = _text(html)
    assert f"static sustains {st['sustained_batch']:.2f} sequences a step, continuous 9.00" in text
    assert "static 2.89" in text and "continuous 9.00" in text
    assert f" {st['tokens_per_s']:,.0f} " in text and f" {co['tokens_per_s']:,.0f} " in text  # 129 and 386
    assert "3.0× the tokens/s" in text and "Orca: Yu et al., OSDI 2022" in text


def test_paging_section_lands_in_the_papers_range(html):
    text = _text(html)
    # 8,192 reserved against 575 held: 1 - 575/8192 = 93 %; paged reserves whole blocks of 16.
    assert "reserves 8,192 tokens per sequence for 575 used, waste 93.0 %" in text
    assert "existing systems waste 60–80 % of KV memory, paging under 4 %" in text
    assert re.search(r"2,048-token maximum: contiguous 7\d\.\d % , paged 1\.\d % — inside the paper's range", text)
    assert "127 fit, batch 127" in text  # the Ladder's PagedAttention row alone (tests/unit/test_ladder.py)


def test_pools_section(html):
    text = _text(html)
    # Each plan at its GPU count (a trial: 4 GPUs × the balanced 1.277 is 5.11 req/s, where one prefill and one
    # decode instance serve 4.408), the balanced figure named for what it is.
    assert ("split: 4 GPUs serve up to 1 × 4.408 = 4.408 req/s (the decode pool's), 1.102 per GPU (1.277 with the "
            "pools in their best ratio, at scale); colocated: 4 GPUs serve up to 2 × 2.5993 = 5.199 req/s, 1.300 per "
            "GPU") in text
    assert round(4.408 / 4, 3) == 1.102 and round(2 * 2.5993, 3) == 5.199 and round(5.199 / 4, 3) == 1.300
    assert "prefill 6.074 3.037 2 2,000" in text  # I = 2·P/p = 2 × 2,000 / 2


def test_ring_section_by_hand(html):
    text = _text(html)
    c_min = 989.4e12 / 450e9 * 163_840 / 1_310_720  # (P_peak / link) × KV bytes per token / FLOP per key
    assert round(c_min) == 275 and int(8192 // c_min) == 29
    assert "= 275 tokens : at S = 8,192 it stops hiding past N = 29 hosts (S/N < c_min)" in text
    assert "1 73,080 8,192" in text and "16 1,169,280 512" in text  # 73,080 tokens per host, N times as many
    assert re.search(r"16 1,169,280 512 \S+ ms \S+ ms hidden 32 2,338,560 256 \S+ µs \S+ µs exposed", text)


def test_the_ring_is_made_of_the_scenarios_hosts_not_the_ladders_start():
    """At TP = 2, B = 8 and S = 131,072 the other sections start at TP = 8, the split that holds the whole batch's KV
    cache; the ring's host stays TP = 2, which holds the weights, and the table says how many hosts the context
    needs (it had said one host of 8 GPUs holds it, leaving the ring nothing to do)."""
    state = SimpleNamespace(scenario=Scenario(tp=2, batch=8, context=131_072), mix="sharegpt", block_size=16)
    text = _text(serving_system_html(state))
    assert "it starts at TP = 8, the smallest split that fits" in text
    assert "a host is 2 GPU(s)" in text and "1 73,080 131,072" in text and "2 146,160 65,536" in text
    # Each column says at which S it is (a teacher read the largest context and the block as one context's).
    assert "largest context N hosts hold (tokens) block S/N at S = 131,072" in text
    assert "tokens/s ceiling on 8 GPUs" in text  # the paging lines' rates are the start's copy's, TP = 8
    state.scenario = Scenario(tp=1, context=131_072)
    assert ("The weights do not fit at TP = 1: a host is TP = 2, the smallest split that holds them."
            in _text(serving_system_html(state)))


def test_zero_section_by_hand(html):
    text = _text(html)
    psi = article_start().evaluate().model.n_params  # 70.55e9
    assert round(psi / 1e9, 2) == 70.55
    assert f"{16 * psi / 64 / 1e9:.2f}" == "17.64" and "3 2.20 2.20 13.23 17.64 64.00× 1.5×" in text
    assert f"{(2 + 2 + 12 / 64) * psi / 1e9:,.2f}" == "295.44" and "1 141.11 141.11 13.23 295.44 3.82× 1×" in text
    assert "M = 4: bubble 42.9 %" in text and f"{3 / 7:.3f}" == "0.429"  # (4 − 1)/(4 + 4 − 1)


def test_computed_only_while_the_tab_is_open(lab):
    view = lab._tab_views["Serving"]
    before = view.pane.object
    lab.state.tab = "Roofline"
    lab.state.scenario.spec_k = 2
    assert view.pane.object == before
    lab.state.tab = "Serving"
    assert view.pane.object != before
    lab.state.scenario.spec_k = 1
    assert view.pane.object == before == serving_system_html(lab.state)


def test_a_scenario_a_model_refuses_says_why():
    # 2M tokens of Llama-3-8B's KV fit no RTX 4090 split: batching has no slot; the other sections still show.
    lab = Lab(query={"tab": ["Serving"], "model": ["llama-3-8b"], "gpu": ["rtx-4090"], "context": ["2097152"]})
    html = lab._tab_views["Serving"].pane.object
    assert ('<div class="caption" data-refused="batching_html"><b>Continuous against static batching</b>: the engine '
            "needs at least one slot") in html
    assert html.count('<section class="serving"') == 4 and 'data-section="batching"' not in html


def test_the_mix_and_the_block_follow_the_inputs_and_travel_in_the_link():
    lab = Lab(query={"tab": ["Serving"], "mix": ["fixed"], "block-size": ["1"]})
    assert (lab.state.mix, lab.state.block_size) == ("fixed", 1)
    text = _text(lab._tab_views["Serving"].pane.object)
    # Every request 161 in, 338 out: all of a static batch finish together, so it loses nothing.
    assert "fixed, prompt 161, output 338 tokens" in text
    assert "static sustains 9.00 sequences a step, continuous 9.00" in text
    # Blocks of one token reserve exactly what is held: ceil((P + t) / 1) · 1 = P + t.
    assert re.search(r"paged, vLLM : reserves (\S+) tokens per sequence for \1 used, waste 0\.0 %", text)
    assert lab.link.query()["mix"] == "fixed" and lab.link.query()["block-size"] == "1"
    view = lab._tab_views["Serving"]
    mix = next(w for w in view.inputs if "serving-mix" in w.css_classes)
    mix.value = "sharegpt"  # the buttons write the state; the tab follows
    assert lab.state.mix == "sharegpt" and "static sustains 2.89" in _text(view.pane.object)
    assert "mix" not in lab.link.query()
    bad = Lab(query={"mix": ["zipf"], "block-size": ["0"]})
    assert (bad.state.mix, bad.state.block_size) == ("sharegpt", 16)
    assert any("ignored mix='zipf': accepted sharegpt, fixed, uniform" in n for n in bad.state.notices)
    assert any("ignored block-size='0'" in n for n in bad.state.notices)


def test_sessions_on_one_scenario_share_the_serving_tab():
    a, b = Lab(query={"tab": ["Serving"]}), Lab(query={"tab": ["Serving"]})
    assert a._tab_views["Serving"].pane.object is b._tab_views["Serving"].pane.object  # computed once


def test_ring_attentions_largest_context_prints_the_formula_it_is():
    """A trial: the tab's 11.29 GiB for KV over 163,840 bytes per token is 73,993 tokens, beside the table's 73,080;
    the incoming block's layer (1 + 1/L) was not said."""
    import math

    from app.serving_system import ring_html
    from core.batching import SHAREGPT

    page = unescape(ring_html(article_start(), SHAREGPT, 16))  # Llama-3-70B at TP = 2
    free, kv, layers, shown = re.search(r"at N = 1, ([\d,]+) bytes / \(([\d,]+) × \(1 \+ 1/(\d+)\)\) = ([\d,]+) tokens",
                                        page).groups()
    value = math.floor(int(free.replace(",", "")) / (int(kv.replace(",", "")) * (1 + 1 / int(layers))))
    assert f"{value:,}" == shown == "73,080" and layers == "80"
    assert '<tr data-hosts="1" class=""><td>1</td><td>73,080</td>' in page


def test_pools_under_pipeline_stages_say_how_they_are_counted():
    text = unescape(re.sub("<[^>]+>", "", pools_html(Scenario(model="deepseek-v3", tp=8, pp=4), None, 16)))
    assert ("With PP = 4, a stage takes the next prompt after 1/4 of one prompt's prefill, and 4 micro-batches of B "
            "decode at once.") in text
    assert "With EP" not in text and "With PP" not in unescape(pools_html(Scenario(tp=2), None, 16))
    # A split past the model's layers runs at the layers' count: the pools' plan and its caption say the split it ran.
    past = Scenario(model="llama-3-8b", pp=64)
    d = plan_pools(past, 10.0, 1000, 200)
    assert (d.pp, d.ep) == (past.evaluate().pp, 1) == (32, 1) and d.to_json()["pp"] == 32
    assert "With PP = 32, a stage takes the next prompt after 1/32" in unescape(pools_html(past, None, 16))


def test_pool_names_close_together_take_rows_of_their_own():
    """An engineer's trial: colocated at 279 FLOP/byte and prefill at 532 read "colocatprefill"."""
    from app.serving_system import _mini_roofline

    svg = _mini_roofline([("prefill", 532.0, "#111"), ("decode", 34.0, "#222"), ("colocated", 279.0, "#333")], 412)
    names = re.findall(r'<text x="[\d.]+" y="(-?\d+)"[^>]*font-size="11">(\w+)</text>', svg)
    rows = {name: int(y) for y, name in names}
    assert rows["decode"] == rows["colocated"] != rows["prefill"]
    apart = _mini_roofline([("prefill", 2000.0, "#111"), ("decode", 34.0, "#222")], 295)
    assert len(set(re.findall(r'y="(-?\d+)"[^>]*font-size="11"', apart))) == 1  # far apart: one row


def test_a_context_under_one_block_hides_at_no_n():
    """At S = 64, under the 275-token block, the caption had said "it stops hiding past N = 0 hosts"."""
    state = SimpleNamespace(scenario=Scenario(tp=2, context=64), mix="sharegpt", block_size=16)
    text = _text(serving_system_html(state))
    assert "= 275 tokens : at S = 64 it hides at no N (S < c_min)." in text
    assert "past N = 0" not in text
    assert "128 9,354,240 0.5 (S < N: a host holds no whole token)" in text


def test_the_batching_tables_columns_say_they_are_ceilings(html):
    """An engineer's trial read the table's 3,202 tokens/s as what an engine delivers: "Ceilings" was in the caption
    only."""
    assert ('<th colspan="4" class="span-head">at the ceiling: each step the roofline\'s time</th></tr><tr><th>policy'
            "</th><th>sustained batch</th><th>batch over the run</th><th>mean I (FLOP/byte)</th><th>tokens/s</th>"
            "<th>TTFT mean</th><th>TPOT mean</th><th>end-to-end mean</th></tr>") in html


def test_the_batching_lines_differ_by_dash_as_well_as_colour():
    """An accessibility audit: static and continuous were two solid lines told apart by colour alone."""
    from app.serving_system import DASHES, GLYPHS

    c = compare_batching(Scenario(model="llama-3-8b"), SHAREGPT, 200, 0)
    svg = batch_sparkline(c.static, c.continuous)
    assert svg.count('stroke-dasharray="6 3"') == 1 and DASHES["continuous"] == ""
    assert GLYPHS["static"] != GLYPHS["continuous"]
