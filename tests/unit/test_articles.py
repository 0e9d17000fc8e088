"""Every figure the two source articles print, to its printed precision.

000 = "Arithmetic Intensity: Why Your GPU Is Idle 99% of the Time";
004 = the roofline-lab article (sections 01-08).  Where an article's figure is a
rounding slip, the exact value is asserted and the slip is noted.
"""

import pytest

from core import evaluate, get_accelerator, get_model
from core.kvcache import kv_cache_bytes
from core.roofline import arithmetic_intensity_weights, attainable_flop_per_s, ridge_point
from core.units import GB, TFLOP, GiB, KiB

H100 = get_accelerator("h100-sxm")


def llama8b(**levers):
    """Article 000's concrete example: Llama-3-8B on one H100 SXM, BF16."""
    return evaluate(gpu=H100, model=get_model("llama-3-8b"), **levers)


# --- ridge points: 000 TL;DR and roofline image, 004 section 01 and 02 -------
@pytest.mark.parametrize(
    "gpu_id, printed",
    [("v100", 139), ("a100-80gb", 153), ("h100-sxm", 295), ("h200", 206), ("b200", 281)],
)
def test_ridge_points(gpu_id, printed):
    assert round(get_accelerator(gpu_id).ridge_point("bf16")) == printed


def test_sparse_headline_doubles_the_ridge():
    # 004 §01: "Use the headline and your ridge point comes out at 591 instead of 295".
    assert round(1979e12 / H100.hbm_bandwidth) == 591
    assert H100.sparse_flop_per_s["bf16"] == 1979e12


def test_flashattention3_utilisation_only_makes_sense_dense():
    # 004 §01: 740/989 = 74.8 %; against 1,979 it would be 37 %.
    assert round(100 * 740 / 989, 1) == 74.8
    assert round(100 * 740e12 / H100.sparse_flop_per_s["bf16"]) == 37


@pytest.mark.parametrize("gpu_id, printed_pct", [("a100-80gb", 0.65), ("h100-sxm", 0.34), ("h200", 0.49)])
def test_batch_one_decode_fraction_of_peak(gpu_id, printed_pct):
    # 004 §02 table, "Batch-1 decode uses".
    r = evaluate(gpu=get_accelerator(gpu_id), model=get_model("llama-3-70b"))
    assert round(100 * r.peak_fraction_weights, 2) == printed_pct


def test_h200_has_43_percent_more_bandwidth():
    assert round(100 * (get_accelerator("h200").hbm_bandwidth / H100.hbm_bandwidth - 1)) == 43


def test_a100_to_h100_bandwidth_up_64_percent_compute_tripled():
    a100 = get_accelerator("a100-80gb")
    assert round(100 * (H100.hbm_bandwidth / a100.hbm_bandwidth - 1)) == 64
    assert round(H100.dense_flop_per_s["bf16"] / a100.dense_flop_per_s["bf16"], 1) == 3.2


# --- 004 opening and section 03 ----------------------------------------------
def test_70b_nominal_weight_read():
    # "A 70-billion-parameter model in BF16 occupies 140 GB ... 41.8 ms ... 23.9 tokens per second".
    # The article uses the nominal 70e9; the catalogue's derived 70.55e9 gives 42.1 ms.
    weight_bytes = 70e9 * 2
    assert weight_bytes / GB == 140
    assert round(weight_bytes / H100.hbm_bandwidth * 1e3, 1) == 41.8
    assert round(H100.hbm_bandwidth / weight_bytes, 1) == 23.9


def test_batch_one_bf16_intensity_is_one_and_delivers_3_4_tflops():
    r = evaluate(gpu=H100, model=get_model("llama-3-70b"))
    assert r.arithmetic_intensity_weights == 1.0
    assert round(r.attainable_flop_per_s_weights / TFLOP, 1) == 3.4  # "delivers 3.4 TFLOP/s out of 989"
    assert round(r.peak_flop_per_s / TFLOP) == 989


def test_three_levers_land_on_intensity_four():
    # "batch 4, or 4-token speculation, or int4 weights all land the dot on exactly the same spot - intensity 4"
    assert (
        arithmetic_intensity_weights(4, 1, 2)
        == arithmetic_intensity_weights(1, 4, 2)
        == arithmetic_intensity_weights(1, 1, 0.5)
        == 4
    )


def test_prefill_2000_token_prompt_is_compute_bound():
    # 004 "Go deeper": a 2,000-token prompt gives I = 2000, past the ridge of 295.
    r = evaluate(gpu=H100, model=get_model("llama-3-70b"), phase="prefill", prompt_len=2000)
    assert r.arithmetic_intensity_weights == 2000
    assert r.bound == "compute"
    assert r.attainable_flop_per_s_weights == r.peak_flop_per_s


def test_model_size_cancels():
    small = evaluate(gpu=H100, model=get_model("llama-2-7b"))
    big = evaluate(gpu=H100, model=get_model("llama-3.1-405b"))
    assert small.arithmetic_intensity_weights == big.arithmetic_intensity_weights == 1.0


# --- 004 section 04: the KV cache of Llama-3-70B ------------------------------
def test_70b_kv_per_token_320_kib():
    m = get_model("llama-3-70b")
    assert m.kv_bytes_per_token(2) == 327_680
    assert m.kv_bytes_per_token(2) / KiB == 320


def test_70b_kv_32k_by_8_users_is_80_gib():
    m = get_model("llama-3-70b")
    assert kv_cache_bytes(m.n_layers, m.n_kv_heads, m.head_dim, 32768, 8, 2) / GiB == 80


def test_70b_kv_one_128k_sequence_40_gib_and_320_without_gqa():
    m = get_model("llama-3-70b")
    assert m.kv_bytes_per_sequence(131072, 2, gqa=True) / GiB == 40
    assert m.kv_bytes_per_sequence(131072, 2, gqa=False) / GiB == 320
    assert m.n_heads / m.n_kv_heads == 8  # "the cache shrinks by exactly 64/8 = 8x"


# --- 004 section 02: two exponentials ----------------------------------------
def test_twenty_years_of_divergence():
    # 3.0x compute, 1.6x DRAM, 1.4x interconnect per two years (Gholami et al. 2024), over 20 years.
    assert round(3.0**10, -4) == 60_000
    assert round(1.6**10, -2) == 100
    assert round(1.4**10, -1) == 30
    assert 60_000 / 100 == 600
    assert 3.0 / 1.6 == 1.875


# --- 000: the concrete example, Llama-3-8B on an H100 SXM --------------------
def test_step1_weight_traffic():
    r = llama8b()
    assert round(r.n_params / 1e9, 2) == 8.03
    assert round(r.weight_bytes_read / GB, 1) == 16.1
    assert round(r.weight_bytes_read / r.bandwidth * 1e3, 2) == 4.79


def test_step2_arithmetic():
    r = llama8b()
    # The article counts the weights' FLOPs only (2·N per token); the lab's attention term
    # over the context, 4·h_q·d_head·S·L, is kept apart and labelled.
    assert round(r.flop_per_step_weights / 1e9) == 16  # "about 16 billion"
    assert r.attention_flop_per_step == 4 * 32 * 128 * r.context * 32  # 4·h_q·d_head·S·L
    # Printed 0.0163 ms: 16.06 GFLOP / 989.4 TFLOP/s is 0.01623 ms (a rounding slip).
    assert round(r.flop_per_step_weights / r.peak_flop_per_s * 1e3, 4) == 0.0162
    # "The ratio of memory time to compute time is 4.79 / 0.0163 = 294, which is the ridge point":
    # exactly, the ratio *is* the ridge point, 295.
    t_mem, t_cmp = r.weight_bytes_read / r.bandwidth, r.flop_per_step_weights / r.peak_flop_per_s
    assert t_mem / t_cmp == pytest.approx(r.ridge_point)
    assert round(4.79 / 0.0163) == 294
    assert round(100 * r.peak_fraction_weights, 2) == 0.34
    assert round(r.tokens_per_s_weights) == 209


def test_opening_3_4_tflops_sustained():
    r = llama8b()
    assert round(r.flop_per_step_weights / (r.weight_bytes_read / r.bandwidth) / TFLOP, 1) == 3.4


def test_step3_kv_cache():
    r = llama8b(context=8192)
    assert r.kv_bytes_per_token / KiB == 128
    assert round(r.kv_bytes / GB, 2) == 1.07
    # Printed "17.2 GB": 16.06 + 1.07 = 17.13 GB (a rounding slip in the article).
    assert round(r.bytes_per_step / GB, 2) == 17.13
    assert round(r.tokens_per_s_with_kv) == 196  # printed "195": 1 / (17.13 GB / 3.35 TB/s) = 195.6
    assert int(r.tokens_per_s_with_kv) == 195


def test_step4_batch_56():
    r = llama8b(batch=56)
    assert r.arithmetic_intensity_weights == 56
    assert round(100 * r.peak_fraction_weights) == 19
    # Printed 11,690 = 56 / 4.79 ms; unrounded 56 / 4.794 ms = 11,681.
    assert round(r.tokens_per_s_weights, -1) == 11_680
    assert round(56 / 4.79e-3, -1) == 11_690


def test_step5_capacity_under_the_articles_assumption():
    # "An 80 GB card holds 74.5 GiB; the weights take 15.0 GiB, leaving about 59 GiB for cache."
    r = llama8b(batch=56, context=8192, capacity_convention="decimal", reserve_bytes=0)
    assert round(r.capacity_bytes / GiB, 1) == 74.5
    assert round(r.weight_bytes_read / GiB, 1) == 15.0
    assert round(r.free_for_kv_bytes / GiB) == 60  # 59.55 GiB: "about 59"
    assert r.max_batch == 59
    # "... and 56 once you leave headroom": the lab's default 3 GiB reserve.
    assert llama8b(context=8192, capacity_convention="decimal").max_batch == 56


def test_step5_ridge_batch_needs_36_gib_per_1000_tokens():
    m = get_model("llama-3-8b")
    assert round(kv_cache_bytes(m.n_layers, m.n_kv_heads, m.head_dim, 1000, 295, 2) / GiB) == 36


def test_step5_lab_default_capacity_reading():
    # The lab reads "80 GB" as 80 GiB: 62 sequences fit with the default 3 GiB reserve.
    r = llama8b(context=8192)
    assert r.capacity_bytes == 80 * GiB
    assert r.max_batch == 62


def test_step6_kv_dominates():
    r = llama8b(batch=56, context=8192)
    assert r.kv_bytes / GiB == 56
    assert round(r.kv_bytes / GB, 1) == 60.1
    assert round(r.bytes_per_step / GB, 1) == 76.2
    assert round(r.step_time_s_with_kv * 1e3, 1) == 22.7
    assert r.tokens_per_s_with_kv == pytest.approx(2470, rel=0.005)  # "about 2,470" (exactly 2,462)
    assert round(100 * r.weight_bytes_read / r.bytes_per_step) == 21
    assert round(100 * r.kv_traffic_bytes / r.bytes_per_step) == 79
    assert r.bound == "memory"


def test_batch_ladder_chart_shades_past_59():
    # 000, throughput chart: "Shade the region past batch 59 as 'does not fit in 80 GB'".
    r = llama8b(context=8192, capacity_convention="decimal", reserve_bytes=0)
    fits = dict(zip(r.ladder.batch.tolist(), r.ladder.fits.tolist(), strict=True))
    assert fits[32] and not fits[64]


def test_square_matmul_intensity():
    # 000: "For square n x n matrices I ~ n/3 ... A 4096-cube matmul lands around 1,365 FLOP per byte".
    n = 4096
    assert round(2 * n**3 / (2 * 3 * n * n)) == 1365


def test_kv_traffic_intensity_near_one():
    # 000: each cached element: one multiply-accumulate (2 FLOP) per 2 bytes at BF16.
    assert arithmetic_intensity_weights(1, 1, 2) == 1


def test_roofline_functions_on_h100():
    assert round(float(ridge_point(989.4e12, 3.35e12))) == 295
    assert attainable_flop_per_s(1, 989.4e12, 3.35e12) == 3.35e12
    assert attainable_flop_per_s(1000, 989.4e12, 3.35e12) == 989.4e12
