"""The expected step in the lab (issue 27): readouts beside the ceiling, the engine in the link, the Expected tab's
waterfall and reality check, the expected point on the roofline with its spread."""

import html
import math
import re
from urllib.parse import parse_qs, urlencode

import pytest

from app.expected_view import expected_tab_html, linkify, published_html, waterfall_html
from app.lab import Lab
from core import Scenario
from core.expected import chain_inputs, expected_step
from core.measured_points import Measurement
from core.units import fmt_rate


def _readout(pane: str, key: str) -> str:
    return html.unescape(re.search(rf'data-readout="{key}">([^<]*)<', pane).group(1))


def _text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


# -- readouts --------------------------------------------------------------------------------------------------------
def test_the_readout_names_the_ceiling_the_expected_value_and_the_engine():
    # Article 004's 70B in BF16 on an H100 at B = 1 (S = 8192): the ceiling is the bytes over the datasheet
    # bandwidth, (141.107 GB of weights + 2.684 GB of KV cache) / 3.35 TB/s = 42.92 ms, 23.3 tokens/s.
    lab = Lab(Scenario(), query={})
    r, e = lab.result, lab.state.expected
    assert r.step_time_s_with_kv == pytest.approx((141.107e9 + 2.684e9) / 3.35e12, rel=1e-4)
    assert e.ceiling_tokens_per_s_per_sequence == pytest.approx(23.30, abs=0.01)
    # The HBM term by hand: the memory time (embedding gathered) ÷ 0.949 (BabelStream Dot 3.18 of 3.35 TB/s) more.
    x = chain_inputs(r, e.parameters)
    memory = (x.weight_bytes_gathered + x.kv_bytes) / x.bandwidth
    hbm = {t.key: t for t in e.terms}["hbm"]
    assert e.parameters.stream_fraction.value == pytest.approx(3.18 / 3.35, abs=5e-4)
    assert hbm.seconds == pytest.approx(memory * (1 / e.parameters.stream_fraction.value - 1), rel=1e-9)
    # Expected is a prediction below the ceiling: 42.92 ms + the terms = 60.27 ms, 71 % of the ceiling's 23 tokens/s.
    assert e.expected_step_time_s == pytest.approx(60.27e-3, abs=0.01e-3)
    pane = lab.readouts.pane.text
    # It does not fit on one H100, so the prediction says "(if it fit)" as the ceiling's 23 tokens/s does.
    assert _readout(pane, "tokens") == "23 tokens/s (if it fit)"
    assert _readout(pane, "expected-tokens") == (
        "ceiling 23.3 tokens/s; expected ≈ 17 tokens/s (71 % of the ceiling), generic engine without CUDA graphs "
        "(if it fit; extrapolated)")
    assert round(0.71 * 23.3) == 17  # it multiplies out (a trial: "71 % of the ceiling" beside 23 read as 16.3)
    assert "Expected tokens/s per sequence (a prediction, generic engine)" in html.unescape(pane)
    assert _readout(pane, "expected-tokens-aggregate").startswith("ceiling 23.3 tokens/s; expected ≈ 17 tokens/s")
    # Right after the ceiling readout it predicts.
    assert pane.index('data-key="tokens"') < pane.index('data-key="expected-tokens"') < pane.index('data-key="ttft"')


def test_show_your_work_gives_the_sum_of_the_terms():
    lab = Lab(Scenario(model="llama-3-8b"), query={})
    lab.state.show_work = True
    work = html.unescape(re.search(r'data-work="expected-tokens">([^<]*)<', lab.readouts.pane.text).group(1))
    e = lab.state.expected
    shown = [t for t in e.terms if t.seconds]
    assert len(shown) >= 6
    assert work.startswith("expected step = ceiling 5.115 ms − 0.3136 ms (embedding) + 0.2564 ms (HBM)")
    assert "= 7.795 ms; 195.5 tokens/s × 5.115 ms / 7.795 ms = 128 tokens/s (65.6 % of the ceiling)" in work
    # The printed terms multiply out: the ceiling plus every printed term is the printed expected step (to print
    # precision, 4 significant digits each).
    numbers = [float(v) * (1e-3 if unit == "ms" else 1e-6) * (-1 if sign == "−" else 1)
               for sign, v, unit in re.findall(r"([+−]) ([\d.]+) (ms|µs) \(", work)]
    assert len(numbers) == len(shown)
    assert 5.115e-3 + sum(numbers) == pytest.approx(7.795e-3, abs=2e-6)


def test_the_engine_selector_changes_the_prediction_not_the_ceiling():
    lab = Lab(Scenario(model="llama-3-8b"), query={})
    ceiling = lab.result
    generic = lab.state.expected.expected_step_time_s
    lab.state.engine = "vLLM"
    assert lab.result is ceiling  # no re-evaluation: the ceiling is untouched
    assert lab.state.expected.engine == "vLLM" and lab.state.expected.expected_step_time_s != generic
    assert _readout(lab.readouts.pane.text, "expected-tokens").endswith(
        ", vLLM preset with CUDA graphs (extrapolated)")  # S = 8,192
    assert lab.readouts.engine.value == "vLLM"
    assert "generic" in lab.readouts.engine.options and "llama.cpp" in lab.readouts.engine.options


def test_the_batch_ceiling_is_labelled_as_the_batchs_total_above_the_per_sequence_one():
    # Found by a trial: at B = 12, k = 2 "Tokens/s ceiling 117" sat right above "Expected tokens/s per sequence:
    # ceiling 9.7 tokens/s" -- two ceilings, one the batch's total (12 × 9.7), the other one sequence's.
    lab = Lab(Scenario(model="llama-3-8b", batch=12, spec_k=2), query={})
    pane = lab.readouts.pane.text
    labels = re.findall(r'<span class="q">([^<]*)</span>', pane)
    at = labels.index("Tokens/s ceiling, the batch&#x27;s total")
    assert labels[at + 1].startswith("Expected tokens/s per sequence (a prediction")
    r = lab.result
    total, one = _readout(pane, "tokens"), _readout(pane, "expected-tokens")
    assert total == f"{r.tokens_per_s_with_kv:,.0f} tokens/s"
    assert one.startswith(f"ceiling {fmt_rate(r.tokens_per_s_with_kv / 12)} tokens/s; expected")
    # One replica of two: the label says both.
    two = Lab(Scenario(model="llama-3-8b", batch=12, replicas=2), query={}).readouts.pane.text
    assert "Tokens/s ceiling, the batch&#x27;s total, one replica" in two


def test_a_model_with_keys_not_modelled_marks_the_expected_value_approximate():
    lab = Lab(Scenario(model="deepseek-v3", gpu="b200", weight_dtype="fp8", tp=8), query={})
    assert lab.result.model.approximate
    # (extrapolated: MLA, 256 experts, a B200 and S = 8,192 are beyond the calibration set, core/coverage.py)
    assert _readout(lab.readouts.pane.text, "expected-tokens").endswith(
        "generic engine without CUDA graphs (approximate; extrapolated)")
    lab.scenario.model = "llama-3-70b"
    assert "(approximate)" not in _readout(lab.readouts.pane.text, "expected-tokens")
    # On one B200 DeepSeek-V3 does not fit: both caveats, in one bracket, and the work says why.
    one = Lab(Scenario(model="deepseek-v3", gpu="b200", weight_dtype="fp8"), query={})
    one.state.show_work = True
    assert _readout(one.readouts.pane.text, "expected-tokens").endswith(
        "generic engine without CUDA graphs (approximate; if it fit; extrapolated)")
    work = html.unescape(re.search(r'data-work="expected-tokens">([^<]*)<', one.readouts.pane.text).group(1))
    assert ("of the ceiling); it does not fit in memory (Step 5), so no engine runs it as set; extrapolated, the "
            "calibration set had none of: multi-head latent attention (MLA); shared experts; 256 routed "
            "experts") in work


# -- the link ----------------------------------------------------------------------------------------------------------
def test_the_link_round_trips_the_engine_and_the_expected_point():
    lab = Lab(Scenario(), query={"engine": ["tensorrt-llm (v0.7)"], "band": ["true"]})
    assert lab.state.engine == "TensorRT-LLM (v0.7)" and lab.state.band
    query = lab.link.query()
    assert query["engine"] == "TensorRT-LLM (v0.7)" and query["band"] == "true"
    again = Lab(Scenario(), query=parse_qs(urlencode(query)))
    assert again.state.engine == "TensorRT-LLM (v0.7)" and again.state.band and again.state.notices == []
    # The defaults stay out of the link; a name not among the presets is ignored with a notice.
    assert "engine" not in Lab(Scenario(), query={}).link.query()
    bad = Lab(Scenario(), query={"engine": ["SGLang"]})
    assert bad.state.engine == "generic"
    assert any(n.startswith("ignored engine='SGLang': accepted generic, gpt-fast") for n in bad.state.notices)


# -- the waterfall ----------------------------------------------------------------------------------------------------
def _chain(page: str, chain: str) -> list[tuple[str, str]]:
    """(term, row html) of one waterfall of the tab."""
    return re.findall(rf'<div class="wf-row[^"]*" data-chain="{chain}" data-term="([^"]+)"(.*?)'
                      r'(?=<div class="wf-row|</details>|<div class="caption"|\Z)', page, re.S)


@pytest.mark.parametrize("levers", [dict(), dict(model="llama-3-70b", weight_dtype="int4", tp=2, batch=16),
                                    dict(model="mixtral-8x7b", gpu="a100-80gb", batch=8, cuda_graphs=True)])
def test_the_waterfalls_rows_add_up_exactly_and_each_shows_its_source(levers):
    lab = Lab(Scenario(**levers), query={})
    lab.state.tab = "Expected"
    page = lab._tab_views["Expected"].pane.object
    e = lab.state.expected
    rows = _chain(page, "step")
    seconds = [float(re.search(r'data-seconds="([^"]+)"', h).group(1)) for k, h in rows if k != "expected"]
    assert rows[0][0] == "ceiling" and rows[-1][0] == "expected"
    assert math.fsum(seconds) == e.expected_step_time_s  # exactly: the rows' seconds are the terms'
    terms = {t.key: t for t in e.terms}
    assert [k for k, _ in rows[1:-1]] == [t.key for t in e.terms if t.shown]
    for key, row in rows[1:-1]:
        source = re.search(rf'<div class="wf-source" data-source="{key}">(.*?)</div>', row, re.S).group(1)
        assert _text(source) == f"source: {terms[key].source}"  # the whole source, as text
        assert _text(re.search(r'<div class="wf-formula">(.*?)</div>', row).group(1)) == terms[key].formula
    # The expected row's tokens/s is the readout's, to the digit (a trial read 1,100 here beside 1,099 there).
    rate = fmt_rate(e.expected_tokens_per_s_per_sequence)
    assert f"→ <b>{rate} tokens/s" in rows[-1][1]
    assert f"{rate} tokens/s" in lab.readouts.pane.text
    # The time to first token: its rows add up to the expected TTFT too.
    ttft = _chain(page, "ttft")
    ttft_s = [float(re.search(r'data-seconds="([^"]+)"', h).group(1)) for k, h in ttft if k != "expected"]
    ex = expected_step(lab.result, None, ttft_result=lab.scenario.clone(phase="prefill", batch=1).evaluate())
    assert math.fsum(ttft_s) * lab.result.pp == pytest.approx(ex.expected_ttft_s, rel=1e-15)


def test_the_tabs_share_of_the_ceiling_is_the_readouts():
    """A trial: the Expected tab's intro said "66 % of the ceiling's tokens/s" beside the readouts' "65.6 % of the
    ceiling's 195.5" (5.115 / 7.795 ms is 65.6 %)."""
    from core.units import fmt_share

    lab = Lab(Scenario(model="llama-3-8b"), query={})
    lab.state.tab = "Expected"
    e = lab.state.expected
    pct, whole = fmt_share(e.expected_tokens_per_s_per_sequence, e.ceiling_tokens_per_s_per_sequence)
    assert (pct, whole) == ("65.6", "195.5")
    assert f"{pct} % of the ceiling's {whole} tokens/s" in lab._tab_views["Expected"].pane.object
    # The readout gives the ceiling once, with those digits (an engineer's trial: "ceiling 196 tokens/s; expected
    # ≈ 128 tokens/s (65.6 % of the ceiling's 195.5)" gave it two ways); its work says the same share (above).
    readouts = html.unescape(lab.readouts.pane.text)
    assert f"ceiling {whole} tokens/s; expected ≈ 128 tokens/s ({pct} % of the ceiling)" in readouts


def test_a_term_whose_source_is_missing_from_the_page_fails_the_check():
    # The check above reads the source from the page: a rendering that dropped it would not match.
    lab = Lab(Scenario(), query={})
    lab.state.tab = "Expected"
    page = lab._tab_views["Expected"].pane.object
    hbm = lab.state.expected.terms[2]
    assert hbm.key == "hbm" and "AI-benchmarking-guide" in hbm.source
    assert page.count('data-source="hbm"') == 2  # the step's chain, and the first token's (under its compute)
    stripped = re.sub(r'(<div class="wf-source" data-source="hbm">).*?(</div>)', r"\1\2", page, flags=re.S)
    row = dict(_chain(stripped, "step"))["hbm"]
    assert _text(re.search(r'data-source="hbm">(.*?)</div>', row).group(1)) != f"source: {hbm.source}"


def test_sources_are_escaped_text_with_their_addresses_as_links():
    got = linkify("<b>x</b> see https://example.org/a?b=1&c=2, and javascript:alert(1) (row 'Dot | 3')")
    assert "<b>" not in got and "&lt;b&gt;x&lt;/b&gt;" in got
    assert got.count("<a ") == 1
    assert ('<a href="https://example.org/a?b=1&amp;c=2" target="_blank" rel="noopener noreferrer">'
            "https://example.org/a?b=1&amp;c=2</a>, and javascript:alert(1)") in got
    assert "(row &#x27;Dot | 3&#x27;)" in got


def test_the_tab_is_computed_only_once_opened():
    lab = Lab(Scenario(), query={})
    assert "Expected" not in lab._tab_views
    lab.state.engine = "gpt-fast"
    lab.state.tab = "Expected"
    assert "a prediction for the <b>gpt-fast preset</b>" in lab._tab_views["Expected"].pane.object
    lab.state.engine = "llama.cpp"  # an engine change alone redraws the open tab
    assert "a prediction for the <b>llama.cpp preset</b>" in lab._tab_views["Expected"].pane.object


# -- the reality check ------------------------------------------------------------------------------------------------
def test_the_reality_check_lists_this_gpus_measurements_with_ceiling_and_expected():
    r = Scenario(model="llama-2-7b", gpu="a100-80gb", context=105, cuda_graphs=True).evaluate()
    page = published_html(r)
    rows = re.findall(r'<tr( class="same-model")? data-measurement="([^"]+)">(.*?)</tr>', page, re.S)
    # 40 shipped measurements on an A100 80GB; the 11 of Llama-2-7B first, highlighted, the other 29 folded away.
    assert len(rows) == 40
    assert [bool(c) for c, _, _ in rows] == [True] * 11 + [False] * 29
    assert page.index("<details") > page.index(rows[10][1]) and "29 more on NVIDIA A100 SXM4 80GB" in page
    # gpt-fast's README: Llama-2-7B BF16 on an A100, 104.9 tokens/s; the ceiling for its run (prefill of 5 tokens
    # then 199 decode steps) is 150.7 and the expected 101.5 (docs/expected-performance.md): 0.70 and 1.03.
    cells = dict((i, re.findall(r"<td[^>]*>(.*?)</td>", body, re.S)) for _, i, body in rows)
    gf = cells["gptfast-a100-llama2-7b-bf16"]
    assert gf[0].startswith("<b>gpt-fast</b> · Llama-2-7B · B = 1, TP = 1, bf16, KV bf16, prompt 5, output 200 · "
                            "tokens/s per sequence<br><small>README at commit 32971d3")
    assert "; held out</small>" in gf[0] and "GPU as printed: 8xA100-80GB, power limited to 330W" in gf[0]
    assert gf[1:6] == ["105", "151", "102", "0.70", "1.03"]
    assert ('href="https://github.com/pytorch-labs/gpt-fast/blob/32971d3129541c5bfb4f715abc33d1c5f408d204/README.md"'
            in gf[0]) and "Benchmarks table, row &#x27;Llama-2-7B | Base | 104.9&#x27;" in gf[0]
    # No published measurement beats the ceiling.
    assert all(float(c[4]) <= 1.0 for c in cells.values())
    # A part with none shipped says so.
    assert "No published measurement on" in published_html(Scenario(gpu="b200").evaluate())


def test_your_measurements_join_the_reality_check_with_the_same_ratios():
    lab = Lab(Scenario(model="llama-3-8b", gpu="h100-sxm"), query={})
    lab.state.measurements = [Measurement(batch=1, context=2048, tokens_per_s=120.0),
                              Measurement(batch=16, context=2048, tokens_per_s=1500.0)]
    page = expected_tab_html(lab.state)
    rows = re.findall(r'<tr data-user="([^"]+)">(.*?)</tr>', page, re.S)
    assert [k for k, _ in rows] == ["1-2048", "16-2048"]
    for (_key, body), point in zip(rows, lab.state.measured, strict=True):
        cells = re.findall(r"<td>(.*?)</td>", body)
        r = lab.scenario.clone(batch=point.measurement.batch, context=2048).evaluate()
        e = expected_step(r)
        assert cells[2] == f"{r.tokens_per_s_with_kv:,.0f}" and f"{point.ceiling_tokens_per_s:,.0f}" == cells[2]
        assert cells[4] == f"{1 / point.gap:.2f}"
        assert cells[5] == f"{point.measurement.tokens_per_s / (r.tokens_per_s_with_kv * e.fraction_of_ceiling):.2f}"


# -- the expected point and its spread -------------------------------------------------------------------------------
def test_the_spread_file_is_what_its_points_give():
    from core.spread import REGIMES, load_spread, spread_table

    data = load_spread()
    points = {i: (p["regime"], p["ratio"]) for i, p in data["points"].items()}
    assert len(points) == 57 and data["fitted_on"].startswith("core/measurements.json calibration set (57")
    table = spread_table(points)
    assert {k: {f: v[f] for f in v if f != "covers"} for k, v in data["regimes"].items()} == table
    # Counts per regime: 6 prefills, 13 small-batch 16-bit, 20 small-batch quantised, 18 at B > 8.
    assert {k: table[k]["n"] for k in REGIMES} == {"prefill": 6, "small-batch-16bit": 13,
                                                   "small-batch-quantised": 20, "large-batch": 18}
    # The 10th and 90th percentiles by hand for the 13 small-batch 16-bit ratios (numpy's linear rule: ranks
    # 0.1·12 = 1.2 and 0.9·12 = 10.8 of the sorted ratios).
    v = sorted(r for k, r in points.values() if k == "small-batch-16bit")
    assert table["small-batch-16bit"]["p10"] == pytest.approx(v[1] + 0.2 * (v[2] - v[1]), rel=1e-5)
    assert table["small-batch-16bit"]["p90"] == pytest.approx(v[10] + 0.8 * (v[11] - v[10]), rel=1e-5)


def test_the_spread_points_are_leave_one_out_scores():
    # Two of the 57 refits, warm-started from the full fit as core.published.leave_one_out does.
    from core import published as P
    from core.spread import load_spread, measurement_regime, speed_ratio

    ms = P.calibration_set()
    full = P.fit(ms)

    def warm(lay):
        import numpy as np

        return np.array([full.theta[full.layout.index(*n)] if n in full.layout.names else lay.prior[j]
                         for j, n in enumerate(lay.names)])

    stored = load_spread()["points"]
    for i in (0, len(ms) - 1):
        m = ms[i]
        row = P.score(P.fit(ms[:i] + ms[i + 1:], start=warm), (m,))[0]
        assert stored[m.id]["regime"] == measurement_regime(m)
        assert stored[m.id]["ratio"] == pytest.approx(speed_ratio(m, row.expected), rel=1e-5)


def test_the_expected_point_sits_at_the_expected_flops_with_its_regimes_whisker():
    from core.spread import load_spread, spread_for

    lab = Lab(Scenario(), query={})
    rv = lab.roofline
    assert rv.band_renderer is None and rv.band is None  # nothing made or computed while hidden
    lab.state.band = True
    r, e = lab.result, lab.state.expected
    y = r.flop_per_step / e.expected_step_time_s / 1e12
    # 70B at B = 1: 2 FLOP per parameter over 60.27 ms, against the ceiling's 42.92 ms (3.79 TFLOP/s counting KV).
    assert y == pytest.approx(r.attainable_flop_per_s_with_kv / 1e12 * 42.92 / 60.27, rel=1e-3)
    band = load_spread()["regimes"]["small-batch-16bit"]
    assert list(rv.band.data["x"]) == [r.arithmetic_intensity_with_kv]
    assert rv.band.data["y"][0] == pytest.approx(y, rel=1e-12)
    assert rv.band.data["lo"][0] == pytest.approx(y * band["p10"], rel=1e-12)
    assert rv.band.data["hi"][0] == pytest.approx(y * band["p90"], rel=1e-12)
    assert rv.band_renderer.visible and rv.band_whisker.visible
    # The default's S = 8,192 is longer than any measurement's decode context: its spread is extrapolated, said in
    # the key, as the Expected tab, the readouts and Compare say it.
    assert rv.band_item.label["value"] == "expected (generic engine; extrapolated), spread 0.73–1.2×"
    # It follows the engine, and a prefill (6 scores, fewer than 8) takes every regime's spread.
    lab.state.engine = "gpt-fast"
    assert rv.band.data["y"][0] == pytest.approx(r.flop_per_step / lab.state.expected.expected_step_time_s / 1e12)
    assert spread_for("prefill", 1, "16-bit").used == "overall"
    lab.scenario.phase = "prefill"
    overall = load_spread()["regimes"]["overall"]
    assert rv.band.data["lo"][0] == pytest.approx(rv.band.data["y"][0] * overall["p10"], rel=1e-12)
    assert rv.band_item.label["value"].endswith("spread 0.66–1.2×")
    lab.state.band = False
    assert not rv.band_renderer.visible and list(rv.band.data["x"]) == []
    # Within the calibration set's reach, the key names no extrapolation.
    inside = Lab(Scenario(model="llama-2-7b", gpu="a100-80gb", context=1024), query={"band": "true"})
    assert inside.roofline.band_item.label["value"] == "expected (generic engine), spread 0.73–1.2×"


def test_a_server_computes_every_published_row_once_at_start():
    from core.published import load_measurements, shipped_row, warm_rows

    assert warm_rows() == len(load_measurements()) == 98
    hits = shipped_row.cache_info().hits
    shipped_row(load_measurements()[0])
    assert shipped_row.cache_info().hits == hits + 1  # cached: the tab computes nothing twice


def test_an_embedded_page_computes_no_expected_step_unless_it_shows_the_point():
    embed = Lab(Scenario(), query={"embed": ["true"]})
    assert embed.state.expected is None and embed.state.expected_error == ""
    embed.scenario.batch = 4
    assert embed.state.expected is None
    shown = Lab(Scenario(), query={"embed": ["true"], "band": ["true"]})
    assert shown.state.expected is not None and list(shown.roofline.band.data["x"]) != []


def test_the_caption_says_why_the_embedding_term_can_rise_above_the_ceiling():
    """A new user's trial: Llama-3-8B's waterfall went from the ceiling's 205 tokens/s to 219 at its first term (the
    input embedding), read as a prediction above its bound.  The ceiling counts the whole table, as the articles
    do; the caption says so where the engine gathers rows."""
    from app.state import LabState

    state = LabState(scenario=Scenario(model="llama-3-8b"))
    e = state.expected
    assert e.embedding_convention == "gathered"
    embedding = next(t for t in e.terms if t.key == "embedding")
    assert embedding.seconds < 0  # the row rises above the ceiling
    text = _text(expected_tab_html(state))
    assert "The ceiling reads the whole input-embedding table every step, as the articles count" in text
    # Tied to the output head (Gemma-2), the table is read anyway: no such term, and the caption says nothing of it.
    tied = LabState(scenario=Scenario(model="gemma-2-9b"))
    assert all(t.seconds == 0 for t in tied.expected.terms if t.key == "embedding")
    assert "input-embedding table" not in _text(expected_tab_html(tied))


def test_the_expected_tab_says_a_workload_that_does_not_fit_is_what_it_would_deliver():
    # A new user's trial: the readouts' ceiling said "(if it fit)" for Llama-3-70B on one H100 (141 GB of BF16
    # weights on 80 GB), its prediction and the Expected tab's waterfall did not.
    from app.state import LabState

    text = _text(expected_tab_html(LabState(scenario=Scenario())))
    assert ("This workload does not fit in memory (Step 5): every figure here is what it would deliver if it fit."
            in text)
    assert "does not fit" not in _text(expected_tab_html(LabState(scenario=Scenario(model="llama-3-8b"))))


def test_a_term_the_launches_hide_is_a_row_at_zero():
    """Under the host's launches (Qwen3-30B-A3B on TP = 2) HBM's fraction moves the GPU's time, not the step: a row
    at 0 that says so, not a row dropped."""
    r = Scenario(model="qwen3-30b-a3b", tp=2).evaluate()
    rows = waterfall_html(expected_step(r), r)
    assert 'data-term="hbm" data-seconds="0.0"' in rows and 'data-term="format"' not in rows
    assert "under the launches&#x27; 2.128 ms: the step stays 2.128 ms" in rows


def test_a_prediction_above_its_ceiling_says_why_where_it_is_printed():
    """An engineer's trial: gpt-oss-20b on a B200 under gpt-fast read "expected ≈ 1,132 tokens/s (121.3 % of the
    ceiling's 933)" with no word.  The ceiling now counts the launches as the engine makes them (a second trial: a
    prediction 36 % over its ceiling, by a lever the engine ignores); what an engine still does better than the
    ceiling counts (TensorRT-LLM's fused kernels, launched from C++ faster than article 000's 4 µs each) is said in
    the readout, ``explain`` and Compare."""
    from core import Scenario
    from core.expected import ceiling_basis, expected_quantities, expected_step, waterfall_text
    from core.pins import Pin, compare, compare_metrics

    gpt_oss = Scenario(model="gpt-oss-20b", gpu="b200", weight_dtype="stored", batch=1, context=2048)
    rebased = expected_step(gpt_oss.evaluate(), "gpt-fast")
    assert rebased.fraction_of_ceiling < 1 and rebased.ceiling_rebased
    assert round(rebased.expected_tokens_per_s_per_sequence) == 1132  # the prediction is the same
    assert expected_quantities(rebased)[0].value.startswith("ceiling with CUDA graphs ")
    assert ceiling_basis(rebased) in expected_quantities(rebased)[0].work

    s = Scenario(model="qwen3-30b-a3b", gpu="b200", weight_dtype="int4", batch=1)
    engine = "TensorRT-LLM (v0.7)"
    e = expected_step(s.evaluate(), engine)
    assert e.fraction_of_ceiling > 1 and not e.ceiling_rebased
    why = "above the ceiling: the engine does better on launches than the ceiling counts"
    assert why in expected_quantities(e)[0].value and why in waterfall_text(e)
    rows = compare([Pin("a", s.levers())], s.catalogue)
    metric = next(m for m in compare_metrics(engine) if m.key == "expected_tokens")
    assert metric.text(rows[0].result).endswith("; above the ceiling)") and why in metric.hover(rows[0].result)
    # The hover says each caveat once, in full (a verifying trial: "extrapolated; above the ceiling; extrapolated: …").
    hover = metric.hover(rows[0].result)
    assert hover.count("extrapolated") == 1 and hover.count("above the ceiling") == 1
    from app.expected_view import waterfall_html

    assert f" tokens/s ({why})." in waterfall_html(e, s.evaluate())
    below = expected_step(Scenario(model="llama-3-8b", context=512).evaluate(), "vLLM")
    assert below.fraction_of_ceiling < 1 and "above the ceiling" not in expected_quantities(below)[0].value


def test_one_share_and_one_ceiling_wherever_the_expected_tokens_are_printed():
    """A verifying trial: Llama-3-8B at B = 4 printed "(67 % of the ceiling)" per sequence beside "(67.1 % of the
    ceiling)" for all GPUs, in the readouts, Compare and the command line; on an A100 at B = 16 the readout said
    "ceiling 61.3 tokens/s" over its work's "61 tokens/s × 16.3 ms / 24.73 ms"."""
    from core.expected import expected_quantities, expected_step, waterfall_text
    from core.pins import compare_metrics

    r = Scenario(model="llama-3-8b", batch=4).evaluate()
    e = expected_step(r)
    per_seq, aggregate = expected_quantities(e, fits=r.fits)
    assert per_seq.value.startswith("ceiling 164.6 tokens/s; expected ≈ 110 tokens/s (67.1 % of the ceiling)")
    assert aggregate.value.startswith("ceiling 658 tokens/s; expected ≈ 442 tokens/s (67.1 % of the ceiling)")
    assert "(67.1 % of the ceiling)" in waterfall_text(e)
    assert round(0.671 * 164.6) == 110 and round(0.671 * 658) == 442
    rows = {m.key: m for m in compare_metrics()}
    assert rows["expected_tokens"].text(r).startswith("110 (67.1 % of 164.6")
    assert rows["expected_tokens_aggregate"].text(r).startswith("442 (67.1 % of 658")
    a100 = Scenario(model="llama-3-8b", gpu="a100-80gb", batch=16).evaluate()
    q = expected_quantities(expected_step(a100), fits=a100.fits)[0]
    ceiling = re.match(r"ceiling ([\d.,]+) tokens/s", q.value).group(1)
    assert ceiling == "61.3" and f"; {ceiling} tokens/s × 16.3 ms / 24.73 ms = 40 tokens/s" in q.work
    assert round(61.3 * 16.3 / 24.73) == 40


def test_the_expected_readout_says_whether_the_launches_are_captured():
    """An engineer's trial compared INT4's expected 264 tokens/s with batch 4's 442 without knowing that the generic
    engine follows the CUDA-graphs lever, off by default: with it on, INT4 expects 357.  The readout says which."""
    lab = Lab(Scenario(model="llama-3-8b", weight_dtype="int4"), query={})
    before = _readout(lab.readouts.pane.text, "expected-tokens")
    assert "expected ≈ 264 tokens/s" in before and before.endswith("generic engine without CUDA graphs (extrapolated)")
    lab.scenario.cuda_graphs = True
    after = _readout(lab.readouts.pane.text, "expected-tokens")
    assert "expected ≈ 357 tokens/s" in after and after.endswith("generic engine with CUDA graphs (extrapolated)")


def test_the_expected_time_per_output_token_is_one_over_the_expected_tokens_per_sequence(capsys):
    """An engineer's trial judged 4-token speculation by its time per output token and found only the ceiling's."""
    import json

    from core.cli import main

    assert main(["explain", "--model", "llama-3-8b", "--spec-k", "4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["expected_time_per_output_token_s"] == pytest.approx(1 / out["expected_tokens_per_s_per_sequence"])
    assert out["expected_time_per_output_token_s"] == pytest.approx(3.079e-3, abs=1e-6)  # 7.799 ms per step / 2.533
    assert out["expected_cuda_graphs"] is False
    assert main(["explain", "--model", "llama-3-8b", "--spec-k", "4"]) == 0
    assert "  time per output token: ceiling 2.019 ms, expected 3.079 ms" in capsys.readouterr().out
    assert main(["explain", "--model", "llama-3-8b", "--phase", "prefill", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["expected_time_per_output_token_s"] is None
