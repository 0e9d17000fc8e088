"""Article 000's serving story and article 004's KV table, in core (no UI)."""

import numpy as np
import pytest

from core import Scenario, evaluate, get_accelerator, get_model
from core.roofline import EFFICIENCY_BAND
from core.serving import TABLE_CONTEXTS, TABLE_USERS, kv_table, traffic_by_context
from core.speculation import expected_tokens_per_verify
from core.sweeps import batch_sweep, speculation_sweep
from core.units import GB, GiB

H100 = get_accelerator("h100-sxm")
L8B, L70B = get_model("llama-3-8b"), get_model("llama-3-70b")


# --- speculation (Leviathan et al. 2023, eq. 1) ---------------------------------
@pytest.mark.parametrize(
    "alpha, k, expected",
    [(0.7, 1, 1.0), (0.0, 4, 1.0), (1.0, 4, 4.0), (0.7, 4, (1 - 0.7**4) / 0.3), (0.5, 3, 1.75), (0.8, 5, 3.3616)],
)
def test_expected_tokens_per_verify(alpha, k, expected):
    assert float(expected_tokens_per_verify(alpha, k)) == pytest.approx(expected)


def test_expected_tokens_refuses_impossible_acceptance():
    with pytest.raises(ValueError, match=r"acceptance must be in \[0, 1\]"):
        expected_tokens_per_verify(1.5, 4)


def test_speculation_is_free_only_while_memory_bound():
    base = Scenario(model="llama-3-8b", context=128, acceptance=0.7)
    sweep = speculation_sweep(base, [1, 4])
    # Batch 1: the verify pass of 4 tokens costs what a plain step costs, so the speedup is E.
    assert sweep["step_time_s_with_kv"][1] == pytest.approx(sweep["step_time_s_with_kv"][0])
    assert sweep["speedup"][1] == pytest.approx((1 - 0.7**4) / 0.3)
    # Batch 256 at k = 4 is compute-bound: the verify pass costs more and the speedup falls below E.
    busy = speculation_sweep(base.clone(batch=256), [1, 4])
    assert busy["step_time_s_with_kv"][1] > 2 * busy["step_time_s_with_kv"][0]
    assert busy["speedup"][1] < 0.6 * (1 - 0.7**4) / 0.3
    # With no acceptance, speculation never pays.
    assert speculation_sweep(base.clone(acceptance=0.0), [4])["speedup"][0] == pytest.approx(1.0)


def test_the_speculation_table_shows_the_intensity_that_decides_the_bound():
    # Llama-3-8B, BF16, H100 SXM, B = 56, S = 8,192 (the trial's case).  Per verify pass of depth k:
    # FLOP = 56·k·(2·8,030,261,248 + 4·32·128·32·8,192) = 56·k·20,355,489,792 (weights + attention over the cache);
    # bytes = 2·8,030,261,248 + 56·(2·32·8·128·2)·8,192 = 16.06 GB + 60.13 GB = 76,190,064,640, whatever k.
    # Counting KV reads, I = k × 14.96 FLOP/byte: 119.7 at k = 8, far below the ridge of 295.3, so the pass stays
    # memory-bound and costs 76.19 GB / 3.35 TB/s = 22.74 ms at every depth; on the weights alone I = 56·k (448).
    from app.serving_views import speculation_html
    from app.state import LabState

    scenario = Scenario(model="llama-3-8b", batch=56)
    sweep = speculation_sweep(scenario, [1, 6, 7, 8])
    flop_per_k, step_bytes = 56 * 20_355_489_792, 76_190_064_640
    assert sweep["intensity_with_kv"] == pytest.approx([k * flop_per_k / step_bytes for k in (1, 6, 7, 8)])
    assert sweep["intensity_with_kv"][3] == pytest.approx(119.69, abs=0.01)
    assert sweep["intensity_weights"].tolist() == [56, 336, 392, 448]
    assert sweep["bound"].tolist() == ["memory"] * 4
    assert sweep["step_time_s_with_kv"] == pytest.approx([step_bytes / 3.35e12] * 4)
    html = speculation_html(LabState(scenario=scenario))
    assert "<th>I counting KV reads (FLOP/byte)</th><th>bound</th><th>I, weights alone (FLOP/byte)</th>" in html
    assert "<tr><td>8</td><td>119.7</td><td>memory</td><td>448</td><td>3.14</td><td>22.74</td>" in html
    assert "reaches the ridge point, 295.3 FLOP/byte on this GPU" in html
    # At B = 256 and k = 4 the pass counting KV reads passes the ridge: the same column says compute-bound.
    busy = speculation_sweep(scenario.clone(batch=256, context=128), [1, 4])
    assert busy["bound"].tolist() == ["memory", "compute"] and busy["intensity_with_kv"][1] > 295.3


# --- article 004, section 04: the KV cache table --------------------------------
def test_kv_table_for_llama_3_70b():
    table = kv_table(L70B, TABLE_CONTEXTS, TABLE_USERS, 2) / GiB
    i32k, i128k = TABLE_CONTEXTS.index(32768), TABLE_CONTEXTS.index(131072)
    assert table[i32k, TABLE_USERS.index(8)] == 80  # "At 32k context with eight concurrent users, 80 GiB"
    assert table[i128k, TABLE_USERS.index(1)] == 40  # "One sequence at 128k costs 40 GiB"
    no_gqa = kv_table(L70B, TABLE_CONTEXTS, TABLE_USERS, 2, gqa=False) / GiB
    assert no_gqa[i128k, 0] == 320  # "turn off grouped-query attention ... 320 GiB"
    assert table.shape == (8, 7)


def test_kv_table_follows_kv_precision():
    assert kv_table(L70B, [131072], [1], 1)[0, 0] / GiB == 20  # FP8 cache halves it


# --- article 000: traffic per step ----------------------------------------------
def test_traffic_weight_dominated_at_2k_cache_dominated_at_8k():
    # Image caption: Llama-3-8B at batch 56, weights 15 GiB constant, KV 14 GiB at 2k and 56 GiB at 8k.
    t = traffic_by_context(L8B, L8B.n_params * 2, 56, [2048, 8192], 2)
    assert round(t.weight_bytes / GiB) == 15
    assert list(t.kv_bytes / GiB) == [14, 56]
    assert t.kv_share[0] < 0.5 < t.kv_share[1]


# --- article 000: throughput vs batch ---------------------------------------------
def test_throughput_curves_bend_and_flatten():
    r = evaluate(gpu=H100, model=L8B, context=8192)
    b = np.array([1, 2, 56, 295, 512, 1024])
    sweep = batch_sweep(r, b)
    no_kv = sweep.tokens_per_s_weights
    # Linear in B below the ridge, flat above it (compute-bound).
    assert no_kv[1] == pytest.approx(2 * no_kv[0])
    assert no_kv[-1] == pytest.approx(no_kv[-2])
    assert round(no_kv[2], -1) == 11_680
    # Counting KV reads at 8k, the curve bends over long before the ridge.
    assert sweep.tokens_per_s_with_kv[2] == pytest.approx(2462, abs=1)
    assert sweep.tokens_per_s_with_kv[-1] < 0.35 * no_kv[-1]
    assert list(sweep.fits) == [True, True, True, False, False, False]


# --- article 000, Open Questions: the efficiency band ------------------------------
def test_measured_130_to_180_tokens_per_s_against_the_band():
    r = evaluate(gpu=H100, model=L8B, context=128)
    lo, hi = (f * r.tokens_per_s_with_kv for f in EFFICIENCY_BAND)
    assert round(r.tokens_per_s_with_kv) == 208  # the 209 ceiling, less 128 tokens of cache
    assert lo < 130 < hi and lo < 150 < hi
    assert 180 == pytest.approx(hi, rel=0.02)  # 180 sits at 86 %, the band's top edge


# --- article 004, Go deeper: one request crosses the roofline twice -----------------
def test_prefill_and_decode_of_one_request():
    r = evaluate(gpu=H100, model=L8B, context=8192, prompt_len=2000)
    assert r.prefill_intensity == 2000 and r.decode_intensity == 1
    assert r.prefill_attainable_flop_per_s == H100.dense_flop_per_s["bf16"]
    # TTFT: 2·N·2000 FLOP of weights plus causal attention, 4·h_q·d_head·P(P+1)/2·L, at 989.4 TFLOP/s
    # = 32.5 + 1.1 = 33.5 ms (compute-bound; the articles' weights-only figure is the 32.5).
    attention = 4 * 32 * 128 * (2000 * 2001 / 2) * 32
    assert r.ttft_s * 1e3 == pytest.approx((2 * r.n_params * 2000 + attention) / 989.4e12 * 1e3)
    assert round(r.ttft_s * 1e3, 1) == 33.5
    # TPOT: (16.06 GB + 1.07 GB) / 3.35 TB/s = 5.11 ms (memory-bound).
    assert round(r.tpot_s * 1e3, 2) == 5.11
    assert round(r.bytes_per_step / GB, 2) == 17.13


# --- one α-aware tokens/s everywhere ------------------------------------------------
def test_tokens_per_s_counts_expected_accepted_tokens():
    plain = Scenario(spec_k=1).evaluate()
    spec = Scenario(spec_k=4, acceptance=0.7).evaluate()
    e = (1 - 0.7**4) / 0.3
    # Memory-bound: the verify pass of 4 tokens costs what a plain step costs, and yields E tokens.
    assert spec.step_time_s_with_kv == pytest.approx(plain.step_time_s_with_kv, rel=1e-3)
    assert spec.tokens_per_s_with_kv == pytest.approx(e / spec.step_time_s_with_kv)
    assert spec.tpot_s == pytest.approx(spec.step_time_s_with_kv / e)
    assert spec.speculative_speedup == pytest.approx(spec.tokens_per_s_with_kv / plain.tokens_per_s_with_kv)
    assert Scenario(spec_k=4, acceptance=0.0).evaluate().tokens_per_s_with_kv == pytest.approx(
        plain.tokens_per_s_with_kv, rel=1e-3
    )
    lad = spec.ladder
    assert lad.tokens_per_s_with_kv[0] == pytest.approx(spec.tokens_per_s_with_kv)  # B = 1 rung is the point itself


def test_time_to_first_token_is_one_prompt():
    one = Scenario(model="llama-3-8b", batch=1).evaluate()
    many = Scenario(model="llama-3-8b", batch=56).evaluate()
    assert many.ttft_s == one.ttft_s
    assert round(one.ttft_s * 1e3, 1) == 33.5


def test_peak_fraction_counting_kv_reads():
    r = Scenario(model="llama-3-8b", batch=56, context=8192).evaluate()
    assert round(100 * r.peak_fraction_weights) == 19
    # (899.4 GFLOP of weights + 56 × 4·32·128·8192·32 of attention) / 76.19 GB = 14.96 FLOP/byte,
    # × 3.35 TB/s = 50.1 TFLOP/s = 5.1 % of 989.4 (weights' FLOPs alone over the same bytes: 4.0 %).
    flop = 2 * 8_030_261_248 * 56 + 56 * 4 * 32 * 128 * 8192 * 32
    assert r.arithmetic_intensity_with_kv == pytest.approx(flop / r.bytes_per_step)
    assert round(100 * r.peak_fraction_with_kv, 1) == 5.1
    extreme = Scenario(
        model="llama-3.1-405b", gpu="l4", batch=1024, context=131072, gqa=False, weight_dtype="fp32"
    ).evaluate()
    assert extreme.peak_fraction_weights == 1.0 and extreme.bound == "memory"
    # Without GQA the cache's reads sit at "about 1 FLOP per byte" (article 000): 4·h_q·d_head FLOP per
    # key against 2·h_kv·d_head·2 bytes with h_q = h_kv; the weights' 2·N·B FLOP lift the step to 1.75.
    n, kv_token, attn_token = extreme.n_params, 2 * 126 * 128 * 128 * 2, 4 * 128 * 128 * 126
    flop = 2 * n * 1024 + 1024 * attn_token * 131072
    moved = n * 4 + 1024 * kv_token * 131072
    assert attn_token / kv_token == 1.0
    assert extreme.arithmetic_intensity_with_kv == pytest.approx(flop / moved) == pytest.approx(1.747, abs=1e-3)


def test_sliding_window_is_explained():
    assert get_model("mistral-7b").attention_pattern().startswith("a 4,096-token sliding window on all 32 layers")
    assert get_model("llama-3-8b").attention_pattern() == "global attention on all 32 layers"
    # A mix names each kind's count first: "…(FP8 keys) on 61" read as a sentence cut short.
    assert get_model("llama-4-scout").attention_pattern() == (
        "48 layers: 12 with global attention; 36 with chunked attention (cache ≤ one chunk)")
