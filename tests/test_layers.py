"""The layer stack, fixed state, attention FLOPs and checkpoints as stored: small configs worked by hand, and other
configs of the field cases' kinds."""

import json
from pathlib import Path

import numpy as np
import pytest

from core import ConfigError, from_hf_config
from core.layers import LayerKind, LayerStack, MLPKind
from core.step import causal_pairs

FIELD = Path(__file__).with_name("field_cases")


def read(cfg):
    return from_hf_config(cfg, model_id="t", name="t")


TINY = {"num_hidden_layers": 4, "hidden_size": 16, "num_attention_heads": 4, "num_key_value_heads": 2,
        "head_dim": 8, "intermediate_size": 32, "vocab_size": 10, "tie_word_embeddings": True}
PER_LAYER_TOKEN = 2 * 2 * 8 * 2  # 2·h_kv·d_head·p_kv at BF16


# -- the stack --------------------------------------------------------------------------------------------------
def test_stack_runs_groups_and_summary():
    full, local = LayerKind(), LayerKind(window=4)
    s = LayerStack.from_kinds([local, local, full, local, local, full])
    assert s.runs == ((local, 2), (full, 1), (local, 2), (full, 1))
    assert s.groups() == ((local, 4), (full, 2)) and s.n_layers == 6
    assert s.kind_at(2) is full and s.kind_at(5) is full
    assert [r["count"] for r in s.summary()] == [2, 1, 2, 1] and s.summary()[1]["first"] == 2
    with pytest.raises(IndexError):
        s.kind_at(6)
    with pytest.raises(ValueError, match="unknown mixer"):
        LayerKind("conv")
    with pytest.raises(ValueError, match="unknown MLP kind"):
        MLPKind("swish")


def test_cost_of_a_model_does_not_grow_with_its_layers():
    # Per kind × count: a 2,048-layer stack of one kind is one group, and its sums are exact.
    m = read({**TINY, "num_hidden_layers": 2048})
    assert m.stack.runs == ((m.stack.runs[0][0], 2048),)
    assert m.kv_bytes_per_token(2) == 2048 * PER_LAYER_TOKEN


def test_chunked_attention_from_layer_types():
    m = read({**TINY, "attention_chunk_size": 5,
              "layer_types": ["chunked_attention", "full_attention", "chunked_attention", "full_attention"]})
    assert m.kv_bytes_per_sequence(12, 2) == PER_LAYER_TOKEN * (5 + 12 + 5 + 12)
    # Prefill of 12 tokens: chunks of 5 → 2·(5·6/2) + 2·3/2 = 33 pairs; global layers 12·13/2 = 78.
    per_key = 4 * 4 * 8
    assert m.prefill_attention_flop(12) == per_key * (2 * 33 + 2 * 78)
    assert m.decode_attention_flop(12) == per_key * (2 * 5 + 2 * 12)


def test_llama4_nope_layers_attend_globally():
    m = read({**TINY, "model_type": "llama4_text", "attention_chunk_size": 3})
    assert [k.attention for k, _ in m.stack.runs] == ["chunked", "full"]  # layers 0-2 chunked, 3 NoPE
    assert any("NoPE" in a for a in m.assumptions)
    m = read({**TINY, "attention_chunk_size": 3, "no_rope_layers": [1, 0, 1, 0]})
    assert m.layer_windows == (3, None, 3, None)


def test_sliding_window_prefill_pairs():
    # A window of w: w(w+1)/2 + (P − w)·w pairs once P > w.
    pairs = causal_pairs(np.array([3, 10]), window=4)
    assert list(pairs) == [6, 10 + 6 * 4]
    assert causal_pairs(7, chunk=3) == 2 * 6 + 1


def test_shared_kv_layers_allocate_no_cache():
    m = read({**TINY, "num_kv_shared_layers": 3})
    assert m.n_kv_layers == 1 and m.kv_bytes_per_token(2) == PER_LAYER_TOKEN
    assert m.kv_formula(2) == "2·L_kv·h_kv·d_head·p_kv = 2 × 1 × 2 × 8 × 2"
    with pytest.raises(ConfigError, match="num_kv_shared_layers"):
        read({**TINY, "num_kv_shared_layers": 4})  # every layer sharing: no cache to share


def test_linear_attention_layers_keep_a_fixed_state():
    cfg = {**TINY, "model_type": "qwen3_next", "full_attention_interval": 2, "linear_num_key_heads": 2,
           "linear_num_value_heads": 4, "linear_key_head_dim": 3, "linear_value_head_dim": 5,
           "linear_conv_kernel_dim": 4, "mamba_ssm_dtype": "float32"}
    m = read(cfg)
    assert m.stack.count(lambda k: k.mixer == "linear_attention") == 2 and m.n_kv_layers == 2
    # State per layer: 4·3·5 = 60 elements × 4 B; conv (2·2·3 + 4·5)·3 = 96 elements × 2 B.
    assert m.state_bytes_per_sequence() == 2 * (60 * 4 + 96 * 2)
    terms = m.kv_terms(2)
    for s in (1, 7, 100):
        total = sum(t.layers * (t.bytes_per_token * (s if t.cap is None else min(s, t.cap)) + t.fixed_bytes)
                    for t in terms)
        assert total == m.cache_bytes_per_sequence(s, 2)
    # Gated delta rule: 7 FLOP per state element per token in each linear layer.
    assert m.decode_attention_flop(10) == 2 * 4 * 4 * 8 * 10 + 2 * 7 * 60
    assert "state per sequence" in m.architecture()


def test_nemotron_h_pattern_mamba_attention_mlp_and_moe_blocks():
    cfg = {"model_type": "nemotron_h", "num_hidden_layers": 5, "hidden_size": 16, "num_attention_heads": 4,
           "num_key_value_heads": 2, "head_dim": 8, "intermediate_size": 32, "vocab_size": 10,
           "tie_word_embeddings": False, "hybrid_override_pattern": "M-*ME", "mamba_num_heads": 4,
           "mamba_head_dim": 8, "ssm_state_size": 4, "n_groups": 1, "conv_kernel": 4, "expand": 2,
           "mlp_hidden_act": "relu2", "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 8}
    m = read(cfg)
    assert [k.attention for k, _ in m.stack.runs] == ["mamba", "none", "full", "mamba", "none"]
    assert m.stack.kind_at(1).mlp.kind == "squared_relu" and m.stack.kind_at(4).mlp.kind == "moe"
    # Mamba-2 mixer: in_proj 16·(2·32 + 2·4 + 4) = 1216; conv (32 + 8)·4 + 40 = 200; dt_bias, A_log, D 12;
    # norm 32; out_proj 32·16 = 512 → 1972.  Squared-ReLU MLP 2·16·32 = 1024.  Attention 2·16·32 + 2·16·16 = 1536.
    # Expert 2·16·8 = 256 (four), router 64.  One norm of 16 per block; embedding 160 + head 160 + final norm 16.
    assert m.n_params == 2 * 1972 + 1024 + 1536 + 4 * 256 + 64 + 5 * 16 + 160 + 160 + 16
    assert m.n_kv_layers == 1 and m.state_bytes_per_sequence() == 2 * (32 * 4 * 2 + 40 * 3 * 2)


def test_jamba_attention_period_and_expert_period():
    cfg = {**TINY, "model_type": "jamba", "attn_layer_period": 2, "attn_layer_offset": 1, "expert_layer_period": 2,
           "expert_layer_offset": 0, "num_experts": 4, "num_experts_per_tok": 2, "mamba_d_state": 2,
           "mamba_d_conv": 4, "mamba_expand": 2}
    m = read(cfg)
    assert [(k.attention, k.mlp.kind) for k, _ in m.stack.runs] == [("mamba", "moe"), ("full", "gated")] * 2
    assert m.mamba.version == 1 and m.mamba.state_elements() == 32 * 2


# -- other configs of the field cases' kinds -----------------------------------------------------------------------
def test_llama4_maverick_interleaves_moe_and_dense_layers_of_their_own_width():
    # meta-llama/Llama-4-Maverick-17B-128E-Instruct text_config (interleave_moe_layer_step 2, 128 experts).
    cfg = json.loads((FIELD / "llama4-moe-layout.json").read_text())["input"]["config"]
    text = {**cfg["text_config"], "interleave_moe_layer_step": 2, "num_local_experts": 128, "use_qk_norm": False}
    m = read({**cfg, "text_config": text})
    attention, expert, dense = 62_914_560 + 2 * 5120, 3 * 5120 * 8192, 3 * 5120 * 16384
    embed_head_norm = 2 * 202_048 * 5120 + 5120
    assert m.layer_split()[:2] == (24, 24)  # odd layers MoE (router + 128 routed + 1 shared), even layers dense
    assert m.n_params == 48 * attention + 24 * (129 * expert + 5120 * 128) + 24 * dense + embed_head_norm
    assert m.n_params == pytest.approx(400e9, rel=0.005)  # model card: 400B total (multimodal), 17B active
    assert m.n_active_params == 48 * attention + 24 * (2 * expert + 5120 * 128) + 24 * dense + embed_head_norm
    assert m.params_read(1) == pytest.approx(m.n_active_params)


def test_gpt_oss_20b_alternating_sliding_layers_and_sinks():
    cfg = json.loads((FIELD / "mxfp4-moe-sliding.json").read_text())["input"]["config"]
    cfg = {**cfg, "num_hidden_layers": 24, "layer_types": cfg["layer_types"][:24], "num_local_experts": 32}
    m = read(cfg)
    assert m.n_params == 20_914_757_184
    assert m.kv_bytes_per_sequence(4096, 2) == 2 * 8 * 64 * 2 * (12 * 128 + 12 * 4096)
    assert m.weight_bytes_held_as_stored() == 13_761_264_768


def test_gemma3n_style_shared_kv_with_sliding_layers_of_another_size():
    cfg = json.loads((FIELD / "shared-kv-layers.json").read_text())["input"]["config"]
    text = {**cfg["text_config"], "num_hidden_layers": 30, "layer_types": cfg["text_config"]["layer_types"][:30],
            "num_kv_shared_layers": 10}
    m = read({**cfg, "text_config": text})
    assert m.n_kv_layers == 20  # 16 sliding + 4 global own a cache
    assert m.kv_bytes_per_sequence(8192, 2) == 2048 * (4 * 8192 + 16 * 512)


# -- quantised checkpoints as stored -------------------------------------------------------------------------------
QBASE = {"num_hidden_layers": 1, "hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 16,
         "vocab_size": 10, "tie_word_embeddings": False}
# attention 4·64 = 256 and MLP 3·8·16 = 384 linear weights; embedding 80, LM head 80, norms 16 + 8 = 24.


def groups(m):
    return {g.name: (g.format, g.bytes_per_weight, g.params) for g in m.stored_breakdown()}


def test_gptq_as_stored_keeps_embeddings_and_head_in_16_bits():
    m = read({**QBASE, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128}})
    w = 0.5 + 2.5 / 128
    assert m.weight_bytes_held_as_stored() == pytest.approx(640 * w + (80 + 80 + 24) * 2)
    assert groups(m)["LM head"][0] == "BF16"
    m = read({**QBASE, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128, "lm_head": True}})
    assert groups(m)["LM head"][1] == pytest.approx(w)


def test_modelopt_nvfp4_with_excluded_modules():
    qc = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16,
          "exclude_modules": ["lm_head", "model.layers.*.self_attn*"]}
    m = read({**QBASE, "quantization_config": qc})
    g = groups(m)
    assert g["dense MLP"][:2] == ("NVFP4", 0.5 + 1 / 16) and g["attention"][0] == "BF16"
    assert m.weight_bytes_held_as_stored() == pytest.approx(384 * 0.5625 + (256 + 184) * 2)


def test_compressed_tensors_groups_and_regex_ignore():
    qc = {"quant_method": "compressed-tensors", "ignore": ["lm_head", "re:.*self_attn.*"],
          "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
              "num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": True}}}}
    m = read({**QBASE, "quantization_config": qc})
    assert groups(m)["dense MLP"][1] == pytest.approx(0.5 + 2 / 128)
    assert groups(m)["attention"][0] == "BF16"
    fp8 = {"quant_method": "compressed-tensors", "config_groups": {"g": {"targets": ["Linear"], "weights": {
        "num_bits": 8, "type": "float", "strategy": "channel"}}}}
    m = read({**QBASE, "quantization_config": fp8})
    assert groups(m)["attention"][1] == pytest.approx(1 + 2 / 8)  # one 16-bit scale per row of h = 8 inputs
    assert groups(m)["LM head"][0] == "FP8 (channel)"  # "Linear" with lm_head not ignored: quantised


def test_bitsandbytes_nf4_double_quant_and_int8():
    nf4 = {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
           "bnb_4bit_use_double_quant": True}
    m = read({**QBASE, "quantization_config": nf4})
    assert groups(m)["dense MLP"][:2] == ("NF4 (bitsandbytes)", pytest.approx(0.5 + (1 + 4 / 256) / 64))
    m = read({**QBASE, "quantization_config": {"quant_method": "bitsandbytes", "load_in_8bit": True,
                                               "llm_int8_skip_modules": ["mlp"]}})
    assert groups(m)["attention"][1] == pytest.approx(1 + 4 / 8) and groups(m)["dense MLP"][0] == "BF16"


def test_ignore_entries_naming_one_layer_apply_to_that_layer_only():
    qc = {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.0.mlp", "lm_head"]}
    m = read({**QBASE, "num_hidden_layers": 3, "quantization_config": qc})
    mlp = [(g.format, g.params) for g in m.stored_breakdown() if g.name == "dense MLP"]
    assert sorted(mlp) == [("BF16", 384), ("MXFP4", 768)]


def test_unknown_quantisation_is_named_not_silent():
    m = read({**QBASE, "quantization_config": {"quant_method": "hqq", "bits": 3}})
    assert any("'hqq' is not modelled" in a for a in m.assumptions)


@pytest.mark.parametrize("qc, field", [
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": "four"}}}}, "num_bits"),
    ({"quant_method": "fp8", "weight_block_size": [0, 128]}, "weight_block_size"),
    ({"quant_method": "mxfp4", "modules_to_not_convert": ["re:(a+)+$"]}, "modules_to_not_convert"),
    ({"quant_method": "mxfp4", "modules_to_not_convert": 5}, "modules_to_not_convert"),
    ([1, 2], "quantization_config"),
])
def test_broken_quantization_config_is_refused_by_name(qc, field):
    with pytest.raises(ConfigError, match=field):
        read({**QBASE, "quantization_config": qc})


# -- "what was read": the strip ------------------------------------------------------------------------------------
def test_layer_strip_shows_runs_with_counts_letters_and_escapes_text():
    from app.layer_strip import layer_strip_html

    cfg = json.loads((FIELD / "hybrid-linear-attention.json").read_text())["input"]["config"]
    m = read(cfg)
    html = layer_strip_html(m.stack)
    assert html.count('class="layer-run"') == 20  # (3 linear + 1 full) × 10 runs
    assert 'data-kind="linear"' in html and "LE×3" in html and "FE</span>" in html
    assert "30 × linear attention (fixed state) + MoE" in html and "10 × full attention + MoE" in html
    assert "#E69F00" in html and "#0072B2" in html  # Okabe–Ito orange and blue
    rows = [{"first": 0, "count": 2, "attention": "<script>", "mlp": "gated", "label": "<img src=x onerror=alert(1)>"}]
    evil = layer_strip_html(rows)
    assert "<img" not in evil and "<script>" not in evil and "&lt;img src=x" in evil
