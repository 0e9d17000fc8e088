"""The Scenario: hand-computed cases, validation, and properties (hypothesis)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from inputs import QWEN3_MOE_AWQ

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


@pytest.mark.parametrize("levers, message", [
    ({"batch": -4}, "batch=-4 is not a whole number from 1 to 65,536"),  # had given -1,138.9 tokens/s and fits
    ({"batch": 2.5}, "batch=2.5 is not a whole number"),  # had been read as 2
    ({"batch": float("nan")}, "batch=nan is not a whole number"),  # had named no lever
    ({"batch": True}, "batch=True is not a whole number"),
    ({"acceptance": float("nan")}, "acceptance=nan is not a number from 0 to 1"),
    ({"reserve_bytes": -1}, "reserve_bytes=-1 is not a number from 0 to"),
    ({"gqa": "no"}, "gqa='no' is not true or false"),
])
def test_evaluate_refuses_what_the_scenario_refuses(levers, message):
    """``core.evaluate``, called from a notebook with explicit levers, checks them as ``Scenario`` does."""
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        evaluate(gpu=H100, model=get_model("llama-3-8b"), **levers)
    assert evaluate(gpu=H100, model=get_model("llama-3-8b"), batch=np.int64(4), context=8192.0).batch == 4


def test_sweeps_refuse_a_batch_or_depth_that_is_not_one():
    from core.sweeps import batch_sweep, speculation_sweep
    r = Scenario(model="llama-3-8b").evaluate()
    for bad, shown in (([-1], "-1"), ([0], "0"), ([np.nan], "nan"), ([1, 2.5], "2.5"), (np.arange(0, 257), "0")):
        with pytest.raises(ValueError, match=f"batch={shown} is not a whole number from 1 to 65,536"):
            batch_sweep(r, bad)  # [-1] had given -223.5 tokens/s that fit
    with pytest.raises(ValueError, match="spec_k=2.5 is not a whole number"):
        speculation_sweep(Scenario(), [2.5])  # had been read as 2
    assert batch_sweep(r, [1, 2.0]).batch.tolist() == [1, 2]


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




def _qwen3_awq(**levers):
    from core.config_reader import from_hf_config

    s = Scenario()
    s.add_model(from_hf_config(QWEN3_MOE_AWQ, model_id="qwen3-moe-awq", name="Qwen3 MoE AWQ"))
    return s.clone(**levers).evaluate()


@pytest.mark.parametrize("weight_dtype", ["bf16", "int4", "stored"])
def test_moe_parameters_read_per_step_are_a_count_whatever_the_format(weight_dtype):
    # Hand count at B = 4, k = 1 (4 tokens): fixed parameters (read every step) = embedding + LM head 2 × 151,936 ×
    # 2048 = 622,329,856; attention 48 × (2 × 2048·32·128 + 2 × 2048·4·128) = 905,969,664; router 48 × 2048·128 =
    # 12,582,912; norms 2·2048·48 + 2048 = 198,656 and q/k norms 2·128·48 = 12,288: 1,541,093,376.  Experts touched
    # per layer: 128 × (1 − (15/16)^4) = 128 × 14,911/65,536 = 29.123046875; routed read 48 × 4,718,592 ×
    # 29.123046875 = 6,596,149,248.  Read: 8,137,242,624 of 30,532,122,624 parameters, in every format (the
    # format changes bytes, not parameters); the old count as stored was bytes ÷ the mean 0.5503 = 9,390,464,437.
    r = _qwen3_awq(batch=4, weight_dtype=weight_dtype)
    assert r.weight_params_read == pytest.approx(8_137_242_624, rel=1e-12)
    assert r.weight_params_held == 30_532_122_624
    from core.explain import quantities

    assert quantities(r)["weights"].work.startswith("8,137,242,624 of 30,532,122,624 parameters")
    if weight_dtype == "stored":
        # Bytes as stored (AWQ: 0.5 + 2.5/128 = 0.51953125 bytes per weight): 16-bit embeddings 1,244,659,712 +
        # norms 421,888 + router 25,165,824; 4-bit attention 905,969,664 × 0.51953125 = 470,679,552 and routed
        # 6,596,149,248 × 0.51953125 = 3,426,905,664: 5,167,832,640 bytes = 5.17 GB.
        assert r.weight_bytes_read == pytest.approx(5_167_832_640, rel=1e-12)


def test_moe_as_stored_one_gpu_never_reads_more_than_it_holds_under_tp_and_ep():
    # TP = 2, EP = 4, B = 32, as stored.  One GPU holds: the LM head's and embedding's halves 2 × 155,582,464
    # params at 2 bytes = 622,329,856 bytes; the rest of the fixed part (layer_fixed = 1,541,093,376 − 622,329,856 −
    # 2048 = 918,761,472; what the engines keep whole on each rank stays whole: per layer the norms 2·2048, the q/k
    # norms 2·128 and the router 2048·128 = 262,144 (vLLM ReplicatedLinear), and the KV projections 2·2048·4·128 as
    # ceil(4/2) = 2 heads: (918,761,472 − 48 × 2,363,648) / 2 + 48 × (4096 + 256 + 262,144 + 1,048,576) =
    # 465,776,640, + the final norm 2048) = 465,778,688 params at the rest's mean 496,267,264 / 918,763,520 bytes
    # (4-bit attention, 16-bit router and norms) = 251,588,912.8 bytes; and 1/8 of the experts, 3,623,878,656
    # params × 0.51953125 = 1,882,718,208 bytes: 2,756,636,976.8 bytes held = 2.567 GiB (splitting the router and
    # q/k norms too said 2,753,235,347.7).  A step's 4 × 32 = 128 tokens touch 32 × (1 − (15/16)^128) = 31.99173
    # of its 32 experts per layer: 48 × 4,718,592 × 31.99173 / 2 = 3,622,942,179 params = 1,882,231,679 bytes, so
    # it reads 2,756,150,447.9 bytes, just under what it holds.
    r = _qwen3_awq(batch=32, tp=2, ep=4, weight_dtype="stored")
    assert r.weight_bytes_held == pytest.approx(2_756_636_976.8, rel=1e-9)
    assert r.weight_bytes_read == pytest.approx(2_756_150_447.9, rel=1e-9)
    assert r.weight_params_held == pytest.approx(4_400_822_272, rel=1e-12)
    assert r.weight_params_read == pytest.approx(465_778_688 + 311_164_928 + 3_622_942_179.19, rel=1e-10)
    assert r.weight_bytes_read <= r.weight_bytes_held
    from core.explain import quantities

    work = quantities(r)["weights"].work
    assert "of the 4,400,822,272 parameters this GPU holds" in work
    assert work.endswith("= 2.76 GB (2.57 GiB on this GPU); this GPU holds 2.57 GiB of the model's 15.65 GiB")
    # In every format and at every batch, a GPU reads at most what it holds.
    for w in ("bf16", "int4", "stored"):
        for b in (1, 4, 32, 4096):
            r = _qwen3_awq(batch=b, tp=2, ep=4, weight_dtype=w)
            assert r.weight_bytes_read <= r.weight_bytes_held * (1 + 1e-12)


@pytest.mark.parametrize("tp, spec_k, intensity", [(1, 1, 128 * 1088 / 576), (8, 1, 16 * 1088 / 576),
                                                     (1, 2, 2 * 128 * 1088 / 576)])
def test_mla_decode_attends_to_the_latent_at_flashmlas_intensity(tp, spec_k, intensity):
    # FlashMLA's deep dive (2025-04-22): decode attention on the latent costs 2·h_q·s_q·s_k·(d_k + d_v) FLOP with
    # d_k = 576, d_v = 512, and reads 2·s_k·d_k bytes in BF16: h_q·s_q·(d_k + d_v)/d_k FLOP per byte (241.8 for
    # DeepSeek-V3's 128 heads on one GPU, near an H100's ridge; the uncompressed count gave 71).  Under TP each
    # GPU runs h_q/TP heads on the whole latent; k verified tokens are FlashMLA's s_q.
    r = Scenario(model="deepseek-v3", batch=4, context=32_768, kv_dtype="bf16", tp=tp, spec_k=spec_k,
                 acceptance=0.0 if spec_k == 1 else 0.7).evaluate()
    assert r.attention_flop_per_step / r.kv_traffic_bytes == pytest.approx(intensity, rel=1e-12)
    assert r.attention_flop_per_step == pytest.approx(4 * spec_k * 61 * 278_528 * 32_768 * (128 // tp) / 128,
                                                      rel=1e-12)


def test_an_mla_model_prints_its_latent_and_head_dims_never_a_d_head():
    # Issue 30: DeepSeek's "head dim d_head" read hidden / heads (56 for V3, 112 for a 64-head one), which means
    # nothing for MLA: the cache holds a 512 + 64 latent, and each head has d_nope, d_rope and d_v.
    from core.explain import quantities
    from core.model_catalogue import get_model

    mla = get_model("deepseek-v3")
    arch = mla.architecture()
    assert not any("d_head" in key for key in arch)
    assert arch["MLA latent (cached)"] == "kv_lora_rank 512 + qk_rope_head_dim 64 elements per token per layer"
    assert arch["MLA head dims"] == "d_nope 128, d_rope 64, d_v 128 (no single d_head)"
    flops = quantities(Scenario(model="deepseek-v3").evaluate())["flops"]
    assert "d_head" not in flops.formula and "2·h_q·(2·d_c + d_rope) per key per layer" in flops.formula
    assert "d_c = kv_lora_rank" in flops.formula
    assert mla.attention_flop_per_key(latent=True) == 2 * 128 * (2 * 512 + 64)  # the formula's numbers multiply out
    # Prefill, and decode with GQA off (each head's K and V cached, the latent expanded), use the uncompressed form.
    for levers in ({"phase": "prefill"}, {"gqa": False}):
        other = quantities(Scenario(model="deepseek-v3", **levers).evaluate())["flops"]
        assert "2·h_q·(d_nope + d_rope + d_v) per key per layer)" in other.formula, levers
    assert mla.attention_flop_per_key() == 2 * 128 * (128 + 64 + 128)
    dense = get_model("llama-3-8b")
    assert dense.architecture()["head dim d_head"] == 128
    assert "4·h_q·d_head per key per layer" in quantities(Scenario(model="llama-3-8b").evaluate())["flops"].formula


def test_mla_with_gqa_off_decodes_each_heads_own_keys_and_values():
    # "GQA off" for MLA is the cache the latent replaces: 128 heads × (192 + 128) elements per token per layer,
    # which the heads read in the uncompressed form (81,920 FLOP per key per layer): 81,920 / (2 × 320 × 2 bytes)
    # = 64 FLOP per byte, where the latent gives 241.8.
    r = Scenario(model="deepseek-v3", batch=4, context=32_768, kv_dtype="bf16", gqa=False).evaluate()
    assert r.attention_flop_per_step == 4 * 61 * 81_920 * 32_768
    assert r.attention_flop_per_step / r.kv_traffic_bytes == pytest.approx(81_920 / (128 * 320 * 2), rel=1e-12)


def test_an_mla_config_assumes_no_head_dim():
    # A DeepSeek config has no head_dim, and needs none: the lab listed "head_dim absent: hidden_size /
    # num_attention_heads" (56 for V3), an assumption nothing of MLA reads.  A GQA config without one still says so.
    import json
    from pathlib import Path

    from core.config_reader import from_hf_config

    cfg = json.loads((Path(__file__).parents[1] / "field_cases" / "sparse-attention-indexer-cache.json").read_text())
    mla = from_hf_config(cfg["input"]["config"], model_id="v32", name="DeepSeek-V3.2")
    assert not any("head_dim" in a for a in mla.assumptions)
    assert mla.attention_flop_per_key(latent=True) == 278_528  # d_c and d_rope, not hidden / heads
    plain = {k: v for k, v in cfg["input"]["config"].items()
             if k not in ("kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
                          "index_head_dim", "index_n_heads", "index_topk")}
    gqa = from_hf_config({**plain, "architectures": ["LlamaForCausalLM"], "model_type": "llama"}, model_id="l",
                         name="l")
    assert "head_dim absent: hidden_size / num_attention_heads" in gqa.assumptions


def test_tensor_parallelism_splits_the_attention_heads_and_not_the_replicated_indexer():
    # DeepSeek-V3.2 at TP = 8: each GPU attends with 16 of the 128 query heads (61 × 278,528 / 8 = 2,123,776 FLOP
    # per key over the layers, top 2,048 keys), but runs the whole indexer over all S keys (vLLM's Indexer: "no
    # tensor parallel, just replicated"): 61 × 16,512 = 1,007,232 FLOP per key, not an eighth of it.
    import json
    from pathlib import Path

    from core.config_reader import from_hf_config

    cfg = json.loads((Path(__file__).parents[1] / "field_cases" / "sparse-attention-indexer-cache.json").read_text())
    model = from_hf_config(cfg["input"]["config"], model_id="v32", name="DeepSeek-V3.2")
    assert model.indexer.flop_per_key() == 16_512
    s = Scenario(gpu="h200", tp=8, context=32_768, batch=2)
    s.add_model(model)
    s.model = "v32"
    r = s.evaluate()
    assert r.attention_flop_per_step == 2 * (61 * 278_528 // 8 * 2_048 + 61 * 16_512 * 32_768)
    # The derivation names both terms, and what the KV bytes of its intensity are.
    from core.explain import quantities

    q = quantities(r)
    assert "+ indexer (2·h_I·(d_I + 1) per key of all S per sparse layer, h_I = 64, d_I = 128)" in q["flops"].formula
    assert "(this GPU's share of the weights' and the attention's; the indexer whole on every GPU)" in (
        q["flops"].formula)
    # The attention's sum has the indexer's term: its FLOP are named with it.
    assert " GFLOP of attention and its indexer (B·k = 2 × (2,123,776 FLOP per key over the layers × 2,048 keys " \
           "(S = 32,768 capped at 2,048) + 1,007,232 FLOP per key over the layers × 32,768 keys)) = " in q["flops"].work
    assert "B·KV read(S)), the KV read being the top k keys and the indexer's keys" in q["intensity-kv"].formula


def test_a_checkpoint_stored_smaller_than_the_precision_picked_is_named_where_it_does_not_fit():
    # DeepSeek-V3 opens in BF16: 157.9 GiB of weights per GPU at TP = 8 on an H200 (141 GiB).  Its checkpoint is
    # FP8, and "as stored" holds 79.2 GiB per GPU and fits: the warning says so.  A model stored in BF16 says nothing.
    r = Scenario(model="deepseek-v3", gpu="h200", tp=8, batch=16).evaluate()
    assert not r.fits
    assert r.warnings[0].endswith("this needs more GPUs or smaller weights (TP = 8, PP = 2 fits in BF16); its "
                                  "checkpoint is stored in 8-bit FP8: weight precision “As stored (checkpoint)” "
                                  "holds it in that format (TP = 8 fits as stored)")
    assert Scenario(model="deepseek-v3", gpu="h200", tp=8, batch=16, weight_dtype="stored").evaluate().fits
    assert "checkpoint" not in Scenario(model="llama-3.1-405b").evaluate().warnings[0]


def test_each_smallest_split_that_fits_names_the_precision_it_was_searched_at():
    # DeepSeek-V3 on 8 H100s: "as stored" (FP8) is still 79.2 GiB of weights per GPU, over the 80 GiB less the
    # reserve, so the stored hint may not imply that it fits there.  A new user read "(TP = 8, PP = 4 fits)" as the
    # checkpoint's fit and "tensor parallelism over several GPUs" at TP = 8.  Each fit names its precision.
    w = Scenario(model="deepseek-v3", tp=8, batch=16).evaluate().warnings[0]
    assert "this needs more GPUs or smaller weights (TP = 8, PP = 4 fits in BF16); its checkpoint is stored in " in w
    assert w.endswith("holds it in that format (TP = 8, PP = 2 fits as stored)")
    assert not Scenario(model="deepseek-v3", tp=8, batch=16, weight_dtype="stored").evaluate().fits
    assert Scenario(model="deepseek-v3", tp=8, pp=2, batch=16, weight_dtype="stored").evaluate().fits
    stored = Scenario(model="deepseek-v3", tp=8, batch=16, weight_dtype="stored").evaluate().warnings[0]
    assert stored.endswith("this needs more GPUs or smaller weights (TP = 8, PP = 2 fits as stored)")
    # FP8 picked is 1.000244 bytes per weight (block scales), the checkpoint as stored 1.003166 (16-bit embeddings):
    # "As stored" is no smaller, so no hint of it, though the stored format's bits (8) are fewer than the pick's.
    fp8 = Scenario(model="deepseek-v3", tp=8, batch=16, weight_dtype="fp8").evaluate()
    assert fp8.warnings[0].endswith("or smaller weights (TP = 8, PP = 2 fits in FP8)")
    assert (fp8.stored_tp, fp8.stored_pp) == (None, None)
    one = Scenario(model="llama-3-70b", gpu="l4", batch=1024, context=131072).evaluate().warnings[0]
    assert one.endswith("this needs tensor parallelism over several GPUs or smaller weights (no split up to the "
                        "node and 1,024 GPUs fits in BF16)")


def test_the_articles_formulas_refuse_a_zero_divisor():
    """``ridge_point(P, 0)`` had returned inf beside a numpy warning, ``max_batch_that_fits(free, 0)`` -2^63."""
    from core.kvcache import max_batch_that_fits
    from core.roofline import ridge_point
    with pytest.raises(ValueError, match="bandwidth must be positive bytes/s"):
        ridge_point(1e15, 0)
    with pytest.raises(ValueError, match="kv_bytes_per_sequence must be positive bytes"):
        max_batch_that_fits(1e10, 0)
    assert max_batch_that_fits(np.array([1e10, -1.0]), 3e9).tolist() == [3, 0]
