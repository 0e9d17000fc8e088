"""A checkpoint in two formats multiplies each weight on its own format's roof (core.precision.mixed_roof).

gpt-oss-120b as stored keeps its attention, router and LM head in BF16 beside MXFP4 experts: on a B200 those
16-bit weights run on the 2,250 TFLOP/s BF16 roof, not the 9,000 TFLOP/s FP4 one.  Counting every FLOP on the FP4
roof had put an 8,192-token prefill at 11.53 ms (an engineer's trial, by hand: at least twice that).
"""

import re

import pytest

from app.roofline_view import pinned_roofs_apart, roof_name
from core import Scenario
from core.explain import quantities
from core.hardware import get_accelerator
from core.precision import mixed_roof
from core.units import TFLOP

# gpt-oss-120b's config.json: hidden 2,880, 64 query heads and 8 KV heads of 64, 36 layers, 128 experts (4 per
# token), vocabulary 201,088, untied.  Its 16-bit weights a token multiplies with, by hand:
GPT_OSS_16BIT = (
    201_088 * 2_880  # LM head
    + 36 * (2_880 * 64 * 64 * 2 + 2_880 * 8 * 64 * 2)  # q, o and k, v projections
    + 36 * (64 * 64 + 2 * 8 * 64 + 2_880 + 64)  # their biases and the attention sinks
    + 36 * 2 * 2_880 + 2_880  # RMSNorm weights
    + 36 * (128 * 2_880 + 128)  # router and its biases
    + 36 * 128 * (2 * 2_880 + 2_880) * 4 // 128  # the 4 active experts' biases, gate-up and down (MXFP4 matrices)
)
GPT_OSS_ACTIVE = 5_711_982_912


def test_the_hand_count_is_the_checkpoints():
    assert GPT_OSS_16BIT == 1_549_668_672


def test_gpt_oss_as_stored_on_a_b200_runs_its_16_bit_weights_on_the_bf16_roof():
    s = GPT_OSS_16BIT / GPT_OSS_ACTIVE  # 27.13 %
    want = 1 / ((1 - s) / 9_000e12 + s / 2_250e12)  # 4,961.7 TFLOP/s
    r = Scenario(model="gpt-oss-120b", gpu="b200", weight_dtype="stored", phase="prefill", prompt_len=8192).evaluate()
    assert r.peak_flop_per_s == pytest.approx(want, rel=1e-12)
    assert r.peak_flop_per_s / TFLOP == pytest.approx(4_961.7, abs=0.05)
    assert r.ridge_point == pytest.approx(want / 8e12, rel=1e-12)
    assert r.compute_roof == "fp4"
    # The prefill's compute time: all its FLOP at the mix, not at 9,000 TFLOP/s (11.53 ms).
    assert r.compute_time_s == pytest.approx(r.flop_per_step / want, rel=1e-12)
    assert r.flop_per_step / 9_000e12 == pytest.approx(11.53e-3, abs=5e-6)
    assert r.compute_time_s == pytest.approx(20.92e-3, abs=5e-6)


def test_the_roofs_work_multiplies_out_at_its_printed_digits():
    r = Scenario(model="gpt-oss-120b", gpu="b200", weight_dtype="stored").evaluate()
    work = quantities(r)["roof"].work
    assert "its 16-bit weights (LM head, attention: 27.13 % of the 5,711,982,912 active)" in work, work
    m = re.search(r"1 / \(([\d.]+) / ([\d,.]+) TFLOP/s \+ ([\d.]+) / ([\d,.]+) TFLOP/s\) = ([\d,.]+) TFLOP/s\)$", work)
    a, p, b, p16, shown = (float(g.replace(",", "")) for g in m.groups())
    assert (a, p, b, p16) == (0.7287, 9_000, 0.2713, 2_250)
    assert a + b == pytest.approx(1)
    assert shown == 4_962 == round(1 / (a / p + b / p16))
    assert work.startswith("4,962 TFLOP/s dense (as stored (mxfp4 4-bit): FP4 tensor roof; ")
    # The compute time divides by the roof it names.
    assert quantities(r)["compute-time"].work.split(" / ")[1].startswith("4,962 TFLOP/s")


def test_deepseek_v3_as_stored_keeps_its_lm_head_and_router_in_bf16():
    # 129,280 × 7,168 LM head; 58 MoE layers' routers of 256 × 7,168 and their biases; norms (61 layers' two of
    # 7,168, MLA's q and kv norms of 1,536 and 512, the final one).
    head, routers = 129_280 * 7_168, 58 * (256 * 7_168 + 256)
    norms = 61 * (2 * 7_168 + 1_536 + 512) + 7_168
    r = Scenario(model="deepseek-v3", gpu="h100-sxm", weight_dtype="stored").evaluate()
    s = (head + routers + norms) / r.n_active_params
    assert s == pytest.approx(0.02754, abs=5e-6)
    assert r.peak_flop_per_s == pytest.approx(mixed_roof(1_978.9e12, 989.4e12, s), rel=1e-12)
    assert "its 16-bit weights (LM head, router: 2.75 % of the 37,552,297,472 active)" in r.compute_roof_reason


@pytest.mark.parametrize("model, gpu, dtype, peak", [
    ("llama-3-8b", "h100-sxm", "fp8", 1_978.9e12),  # every weight FP8: one roof
    ("llama-3-8b", "b200", "stored", 2_250e12),  # a 16-bit checkpoint: BF16
    ("gpt-oss-120b", "h100-sxm", "stored", 989.4e12),  # no FP4 roof: the MXFP4 experts run weight-only on BF16
    ("gpt-oss-120b", "b200", "fp4", 9_000e12),  # the lever's FP4 is every weight's format
])
def test_one_format_keeps_its_roof_exactly(model, gpu, dtype, peak):
    r = Scenario(model=model, gpu=gpu, weight_dtype=dtype).evaluate()
    assert r.peak_flop_per_s == peak
    assert "16-bit weights" not in r.compute_roof_reason


def test_mixed_roof_is_the_flop_weighted_harmonic_mean():
    assert mixed_roof(9e15, 2.25e15, 0.0) == 9e15
    assert mixed_roof(2.25e15, 2.25e15, 0.3) == 2.25e15
    assert mixed_roof(9e15, 2.25e15, 1.0) == pytest.approx(2.25e15, rel=1e-15)
    # Half the FLOP at each roof: 2 / (1/9 + 1/2.25) = 3.6 PFLOP/s.
    assert mixed_roof(9e15, 2.25e15, 0.5) == pytest.approx(3.6e15, rel=1e-15)


def test_a_pin_under_a_mixed_roof_draws_its_own_roof_and_names_it():
    b200 = get_accelerator("b200")
    llama = Scenario(model="llama-3-8b", gpu="b200", weight_dtype="fp4").evaluate()
    oss = Scenario(model="gpt-oss-120b", gpu="b200", weight_dtype="stored").evaluate()
    assert llama.compute_roof == oss.compute_roof == "fp4"
    assert pinned_roofs_apart(llama, [oss])
    assert roof_name(oss) == f"{b200.name} (fp4 + bf16 mix)"
    assert roof_name(llama) == f"{b200.name} (fp4)"


def test_the_expected_steps_gemms_run_on_the_checkpoints_mix():
    from core.expected import chain_inputs, engine_parameters
    r = Scenario(model="gpt-oss-120b", gpu="b200", weight_dtype="stored", phase="prefill", prompt_len=8192).evaluate()
    x = chain_inputs(r, engine_parameters(r))
    assert x.peak_gemm == r.peak_flop_per_s < 9_000e12
    assert x.peak_bf16 == 2_250e12
