"""The Scenario: hand-computed cases, validation, and properties (hypothesis)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import Scenario, evaluate, get_accelerator, get_model
from core.precision import PRECISIONS
from core.roofline import arithmetic_intensity_weights, attainable_flop_per_s, batch_ladder
from core.units import GiB

H100 = get_accelerator("h100-sxm")
P = st.sampled_from(sorted({p.bytes_per_element for p in PRECISIONS.values()}))


def test_defaults_match_the_design_card():
    s = Scenario()
    assert (s.model, s.gpu, s.weight_dtype, s.batch, s.spec_k) == ("llama-3-70b", "h100-sxm", "bf16", 1, 1)
    r = s.evaluate()
    assert r.arithmetic_intensity_weights == 1
    assert round(r.ridge_point) == 295


def test_h200_drops_the_ridge_to_206():
    assert round(Scenario(gpu="h200").evaluate().ridge_point) == 206


def test_gqa_off_at_long_context_explodes_past_memory():
    on = Scenario(context=131072).evaluate()
    off = Scenario(context=131072, gqa=False).evaluate()
    assert off.kv_bytes == 8 * on.kv_bytes
    assert off.kv_bytes / GiB == 320
    assert not off.fits
    assert off.max_batch == 0


def test_bad_values_are_refused_and_nothing_changes():
    s = Scenario(batch=8)
    with pytest.raises(ValueError, match="batch"):
        s.batch = 0
    with pytest.raises(ValueError):
        s.gpu = "h900"
    assert (s.batch, s.gpu) == (8, "h100-sxm")


def test_hand_computed_70b_int4_on_h100():
    # 70B (70,553,706,496 params) at 0.5 bytes: 35.28 GB; at batch 1, k=1: I = 4.
    r = Scenario(weight_dtype="int4").evaluate()
    assert r.weight_bytes_read == 70_553_706_496 * 0.5
    assert r.arithmetic_intensity_weights == 4
    assert r.compute_roof == "bf16"
    assert r.attainable_flop_per_s_weights == pytest.approx(4 * 3.35e12)


def test_prefill_uses_prompt_length_as_k():
    r = Scenario(phase="prefill", prompt_len=2000, batch=1).evaluate()
    assert r.tokens_per_read == 2000
    assert r.flop_per_step_weights == 2 * r.n_params * 2000
    # Causal attention over the prompt: 4·h_q·d_head per (query, key) pair per layer, P(P+1)/2 pairs.
    assert r.attention_flop_per_step == 4 * 64 * 128 * (2000 * 2001 // 2) * 80
    assert r.flop_per_step == r.flop_per_step_weights + r.attention_flop_per_step
    assert r.context == 2000


def test_ladder_goes_past_the_ridge():
    r = Scenario().evaluate()
    assert list(r.ladder.batch[:4]) == [1, 2, 4, 8]
    assert r.ladder.arithmetic_intensity_weights[-1] > r.ridge_point
    assert r.ladder.attainable_flop_per_s_weights[-1] == r.peak_flop_per_s


def test_long_context_warns_beyond_trained_context():
    r = Scenario(model="llama-2-7b", context=8192).evaluate()
    assert any("4,096" in w for w in r.warnings)


def test_json_has_the_cli_keys():
    keys = {
        "weight_bytes_read",
        "flop_per_step",
        "arithmetic_intensity_weights",
        "arithmetic_intensity_with_kv",
        "ridge_point",
        "attainable_flop_per_s_weights",
        "peak_fraction_weights",
        "bound",
        "step_time_s_with_kv",
        "tokens_per_s_with_kv",
        "tokens_per_s_weights",
        "kv_bytes_per_token",
        "kv_bytes",
        "fits",
        "max_batch",
    }
    assert keys <= set(Scenario().evaluate().to_json())


# --- properties -----------------------------------------------------------------
@given(b=st.integers(1, 4096), k=st.integers(1, 64), p=P)
def test_intensity_rises_with_b_and_k_and_falls_with_p(b, k, p):
    i = arithmetic_intensity_weights(b, k, p)
    assert arithmetic_intensity_weights(b + 1, k, p) > i
    assert arithmetic_intensity_weights(b, k + 1, p) > i
    assert arithmetic_intensity_weights(b, k, p * 2) < i


@given(i=st.floats(1e-3, 1e6), peak=st.floats(1e12, 1e17), bw=st.floats(1e11, 1e14))
def test_attainable_never_exceeds_either_roof(i, peak, bw):
    a = attainable_flop_per_s(i, peak, bw)
    assert a <= peak
    assert a <= bw * i * (1 + 1e-12)


@given(
    gpu=st.sampled_from(["a100-80gb", "h100-sxm", "h200", "mi300x", "l4"]),
    model=st.sampled_from(["llama-3-8b", "llama-3-70b", "qwen2.5-7b"]),
)
def test_batch4_equals_int4_equals_speculation4(gpu, model):
    g, m = get_accelerator(gpu), get_model(model)
    # Article 004's three levers land on one point of the roofline: with CUDA graphs, whose launches (0.3 ms) hide
    # under every one of these steps.
    a, b, c = (evaluate(gpu=g, model=m, cuda_graphs=True, **lever)
               for lever in ({"batch": 4}, {"weight_dtype": "int4"}, {"spec_k": 4}))
    assert a.arithmetic_intensity_weights == b.arithmetic_intensity_weights == c.arithmetic_intensity_weights == 4
    assert a.attainable_flop_per_s_weights == b.attainable_flop_per_s_weights == c.attainable_flop_per_s_weights
    # Without graphs a short step can wait on its launches (the third ceiling): each point is its roof capped by
    # FLOP / t_launch, the roof itself the same.
    for r in (evaluate(gpu=g, model=m, **lever) for lever in ({"batch": 4}, {"weight_dtype": "int4"}, {"spec_k": 4})):
        assert r.roof(r.arithmetic_intensity_weights) == a.attainable_flop_per_s_weights
        assert r.attainable_flop_per_s_weights == min(a.attainable_flop_per_s_weights,
                                                      r.flop_per_step_weights / r.launch_overhead_s)


@settings(max_examples=50)
@given(b=st.integers(1, 2048), s=st.integers(1, 131072), gqa=st.booleans())
def test_kv_intensity_lies_between_its_parts_and_fits_matches_max_batch(b, s, gqa):
    r = evaluate(gpu=H100, model=get_model("llama-3-8b"), batch=b, context=s, gqa=gqa)
    # Counting KV mixes two streams: the weights (2·B·k/p) and attention over the cache
    # (its FLOPs over its bytes); the step's intensity lies between the two.
    attention_intensity = r.attention_flop_per_step / r.kv_traffic_bytes
    lo, hi = sorted((r.arithmetic_intensity_weights, attention_intensity))
    assert lo * (1 - 1e-12) <= r.arithmetic_intensity_with_kv <= hi * (1 + 1e-12)
    assert r.fits == (b <= r.max_batch)
    assert r.step_time_s_with_kv >= r.step_time_s_weights


@given(ridge=st.floats(10, 1000), p=P, k=st.integers(1, 16))
def test_ladder_is_powers_of_two_reaching_past_the_ridge(ridge, p, k):
    lad = batch_ladder(ridge, p, k)
    assert lad[0] == 1 and np.all(lad[1:] == 2 * lad[:-1])
    assert arithmetic_intensity_weights(lad[-1], k, p) >= ridge
