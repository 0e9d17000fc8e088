"""The layer stack, fixed state, attention FLOPs and checkpoints as stored: small configs worked by hand, and other
configs of the field cases' kinds."""

import json

import numpy as np
import pytest
from conftest import FIELD_CASES
from inputs import FALCON_H1_7B, MINIMAX_M1

from core import ConfigError, from_hf_config
from core.layers import LayerKind, LayerStack, MLPKind
from core.parallelism import Parallelism
from core.step import causal_pairs

FIELD = FIELD_CASES


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
    # Llama-4 Scout's and Maverick's published configs ship "no_rope_layers": [], which transformers reads as its
    # default (a new user's pasted Scout config was refused: "must be a list of 48 integers").
    m = read({**TINY, "model_type": "llama4_text", "attention_chunk_size": 3, "no_rope_layers": []})
    assert [k.attention for k, _ in m.stack.runs] == ["chunked", "full"]
    assert any(a.startswith("no_rope_layers is []") for a in m.assumptions)
    assert "no_rope_layers" not in m.approximate_note()
    with pytest.raises(ConfigError, match="no_rope_layers"):
        read({**TINY, "attention_chunk_size": 3, "no_rope_layers": [1, 0]})  # a list of the wrong length still is


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


def test_llama4_moe_layers_by_index_or_null():
    """Llama-4's ``moe_layers``: the MoE layers' indices, or null for the interleave step's (transformers'
    Llama4TextConfig).  A new user's Scout config (``moe_layers: null``, ``for_llm_compressor: false``) was marked
    approximate for both keys, which change nothing."""
    cfg = {**TINY, "model_type": "llama4_text", "num_local_experts": 4, "num_experts_per_tok": 1,
           "interleave_moe_layer_step": 1, "for_llm_compressor": False}
    default = read({**cfg, "moe_layers": None})
    assert default.layer_split()[:2] == (0, 4) and default.approximate_note() == ""  # (dense, MoE)
    chosen = read({**cfg, "moe_layers": [1, 3]})
    assert [k.mlp.kind for k, _ in chosen.stack.runs] == ["gated", "moe"] * 2
    assert chosen.layer_split()[:2] == (2, 2) and chosen.approximate_note() == ""
    with pytest.raises(ConfigError, match="moe_layers"):
        read({**cfg, "moe_layers": [7]})


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
    # FP8, whose rule is every linear layer (MXFP4 stores the routed experts only: a dense MLP stays 16-bit).
    qc = {"quant_method": "fp8", "modules_to_not_convert": ["model.layers.0.mlp", "lm_head"]}
    m = read({**QBASE, "num_hidden_layers": 3, "quantization_config": qc})
    mlp = [(g.format, g.params) for g in m.stored_breakdown() if g.name == "dense MLP"]
    assert sorted(mlp) == [("BF16", 384), ("FP8 (128×128 blocks)", 768)]


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


def test_a_stack_of_2048_alternating_layers_is_drawn_as_its_repeating_pattern():
    """Issue 31's heavy hybrid: 2,048 runs of one layer cycling five kinds.  Drawn run by run the report was 587 KB
    (2,048 cells nobody reads) sent to every session that read it; folded, one block of the five kinds ×409 and the
    three layers left, the legend still counting every layer."""
    from fuzz_strategies import heavy_hybrid_config

    from app.layer_strip import layer_strip_html

    html = layer_strip_html(read(heavy_hybrid_config()).stack)
    assert len(html) < 8_000
    assert html.count('class="layer-repeat"') == 1 and 'data-repeats="409"' in html and "×409</span>" in html
    assert 'title="layers 0–2044: 409 × (full attention' in html
    assert html.count('class="layer-run"') == 5 + 3  # the pattern's five cells, then layers 2045, 2046, 2047
    assert 'title="layer 2047: chunked attention 8,192' in html and "layer-rest" not in html
    for words in ("410 × full attention", "410 × sliding-window attention", "410 × chunked attention",
                  "409 × linear attention (fixed state)", "409 × Mamba (fixed state)"):
        assert words in html  # 3 × 410 + 2 × 409 = 2,048: every layer in the legend
    assert 'data-layers="2048"' in html


def test_folding_gives_the_runs_back_and_a_strip_without_patterns_stays_bounded():
    import random

    from app.layer_strip import MAX_PERIOD, MAX_RUNS, MAX_SEGMENTS, fold_runs, layer_strip_html

    rng = random.Random(31)
    for _ in range(50):
        rows, first = [], 0
        for _ in range(rng.randint(1, 300)):
            kind = rng.choice(["full", "mamba", "linear"] if rng.random() < 0.5 else ["full", "sliding"])
            if rows and rows[-1]["attention"] == kind:
                continue  # a summary's neighbouring runs differ
            n = rng.choice([1, 1, 1, 2, 3])
            rows.append({"first": first, "count": n, "attention": kind, "mlp": "gated", "label": kind})
            first += n
        back = [r for _, pattern, reps in fold_runs(rows) for _ in range(reps) for r in pattern]
        assert [(r["attention"], r["count"]) for r in back] == [(r["attention"], r["count"]) for r in rows]
        assert [i for i, _, _ in fold_runs(rows)] == sorted({i for i, _, _ in fold_runs(rows)})
    # Jamba-like: 8 layers repeated 4 times, 32 runs: drawn run by run (a person reads 32 cells).
    jamba = [{"first": i, "count": 1, "attention": "full" if i % 8 == 4 else "mamba",
              "mlp": "moe" if i % 2 else "gated", "label": str(i % 8)} for i in range(32)]
    assert len(jamba) <= MAX_RUNS and layer_strip_html(jamba).count('class="layer-run"') == 32
    assert fold_runs(jamba) == [(0, jamba[:8], 4)]
    # 2,048 layers in no short pattern: at most MAX_SEGMENTS segments, then one for the rest; every layer counted.
    noise = [{"first": i, "count": 1, "attention": ("full", "mamba")[rng.random() < 0.5], "mlp": "gated",
              "label": "x"} for i in range(2048)]
    html = layer_strip_html(noise)
    assert html.count('class="layer-rest"') == 1 and len(html) < 60_000
    assert html.count('class="layer-repeat"') + html.count('title="layer ') <= MAX_SEGMENTS  # top-level segments
    assert html.count('class="layer-run"') <= MAX_SEGMENTS * MAX_PERIOD
    full = sum(r["attention"] == "full" for r in noise)
    assert f"{full} × full attention" in html and f"{2048 - full} × Mamba (fixed state)" in html


# -- round 3: sparse attention with an indexer, cross-attention, parallel hybrids, lightning attention by list --
def _field_config(name):
    return json.loads((FIELD / name).read_text())["input"]["config"]


def test_deepseek_v32_indexer_params_flops_and_reads():
    m = read(_field_config("sparse-attention-indexer-cache.json"))
    # Every layer's indexer: wq_b 1536 × 64·128 + wk 7168 × 128 + weights_proj 7168 × 64 + k_norm 2 × 128.
    per_layer = 1536 * 8192 + 7168 * 128 + 7168 * 64 + 256
    assert per_layer == 13_959_424
    assert m.n_params == 671_026_419_200 + 61 * per_layer  # DeepSeek-V3's count plus the indexers
    assert all(k.sparse_topk == 2048 for k, _ in m.stack.groups())
    # Decode at S = 131,072: the attention reads 2,048 keys (MLA absorbed, on the latent: 2·128·(512 + 64) +
    # 2·128·512 = 278,528 FLOP per key), the indexer scores all S (2·64·128 + 2·64 = 16,512 per key).
    s = 131_072
    assert m.decode_attention_flop(s) == 61 * (278_528 * 2048 + 16_512 * s)
    assert m.decode_attention_flop(1000) == 61 * (278_528 + 16_512) * 1000  # below top-k every key is read
    # Prefill of P = 4,096: the attention's pairs are those of a window of 2,048, the indexer's all causal pairs.
    # The sparse prefill kernel (FlashMLA's flash_mla_sparse_fwd, d_qk 576, d_v 512) also attends to the latent.
    p = 4096
    pairs_topk = 2048 * 2049 / 2 + (p - 2048) * 2048
    assert m.prefill_attention_flop(p) == pytest.approx(61 * (278_528 * pairs_topk + 16_512 * p * (p + 1) / 2),
                                                        rel=1e-12)
    # The JavaScript twin's decode terms carry the top-k cap: Σ flop · min(S, cap).
    terms = m.decode_attention_terms()
    assert sum(f * (s if c is None else min(s, c)) for f, c in terms[:-1]) == m.decode_attention_flop(s)
    # The indexer is kept whole on every TP rank, beside MLA's down-projections and the router.
    sparse_moe = next(k for k, _ in m.stack.groups() if k.mlp.kind == "moe")
    assert m.replicated_params(sparse_moe) == 2 * 7168 + 7168 * 1536 + 1536 + 7168 * 576 + 512 + per_layer + (
        7168 * 256 + 256)
    arch = m.architecture()
    # 61 × 576 × 2 + 8,052 (≈: a key not modelled)
    assert arch["KV per token (BF16; the indexer's keys FP8)"] == "≈ 78,324 bytes"
    assert "8,052 bytes" in arch["indexer keys per token"]


def test_llama_32_90b_vision_cross_attention_layers():
    # Llama-3.2-90B-Vision's text model: 100 layers, 20 of them cross-attention ([3, 8, ..., 98], every 5th from
    # 3), the Llama-3.1-70B shape otherwise; the same vision tower as the 11B (560-pixel tiles of 14-pixel patches).
    cfg = {"model_type": "mllama", "text_config": {
        "model_type": "mllama_text_model", "cross_attention_layers": list(range(3, 100, 5)), "hidden_size": 8192,
        "intermediate_size": 28672, "max_position_embeddings": 131072, "num_attention_heads": 64,
        "num_hidden_layers": 100, "num_key_value_heads": 8, "rope_theta": 500000.0, "tie_word_embeddings": False,
        "vocab_size": 128256, "rms_norm_eps": 1e-05},
        "vision_config": {"image_size": 560, "patch_size": 14, "max_num_tiles": 4, "model_type": "mllama_vision_model"}}
    m = read(cfg)
    assert m.n_kv_layers == 80 and m.stack.count(lambda k: k.cross) == 20
    assert m.kv_bytes_per_token(2) == 80 * 2 * 8 * 128 * 2 == 327_680  # not 100 layers' 409,600
    assert m.state_bytes_per_sequence(2) == 20 * 2 * 8 * 128 * 2 * 6404 == 524_615_680
    assert m.state_bytes_per_sequence(1) == 524_615_680 / 2  # the image K/V are at the KV precision
    # Each text token attends to the 6,404 image tokens in the cross layers, whatever S; to S in the others.
    per_key = 4 * 64 * 128
    assert m.decode_attention_flop(8192) == per_key * (80 * 8192 + 20 * 6404)
    # Parameters: embeddings of V + 8 rows (image tokens), cross layers' q/k norms and two gates.
    layer = 2 * 8192 * 8192 + 2 * 8192 * 1024 + 3 * 8192 * 28672 + 2 * 8192
    assert m.n_params == (128256 + 8) * 8192 + 128256 * 8192 + 100 * layer + 20 * (2 * 128 + 2) + 8192
    # TP 8: the image K/V split by KV heads like the text KV (8 heads, one per rank).
    plan = Parallelism(m, tp=8)
    assert plan.cache_bytes_per_sequence_per_gpu(8192, 2) == (327_680 * 8192 + 524_615_680) / 8




def test_falcon_h1_parallel_hybrid_keeps_kv_and_a_fixed_state_in_every_layer():
    # Falcon-H1-7B (transformers' Falcon-H1 table: 44 layers, 12 attention heads, 2 KV heads, 24 Mamba heads of
    # 128, d_state 256): attention and Mamba-2 side by side in all 44 blocks.
    m = read(FALCON_H1_7B)
    assert m.stack.count(lambda k: k.parallel_ssm) == 44 and m.n_kv_layers == 44
    assert m.kv_bytes_per_token(2) == 44 * 2 * 2 * 128 * 2 == 45_056
    # Per layer: SSM 24 × 128 × 256 elements and conv (3072 + 2·256) × (4 − 1), at 16 bits: 1,594,368 bytes.
    per_layer = 24 * 128 * 256 * 2 + (3072 + 2 * 256) * 3 * 2
    assert per_layer == 1_594_368
    assert m.state_bytes_per_sequence() == 44 * per_layer == 70_152_192
    assert m.cache_bytes_per_sequence(8192, 2) == 45_056 * 8192 + 70_152_192
    # Parameters per block: attention 3072 × (1536 + 256 + 256) + 1536 × 3072, Mamba-2 in_proj 3072 × (2·3072 +
    # 2·256 + 24), conv 3584 × 4 + bias 3584, dt_bias/A_log/D 3 × 24, no gated norm (mamba_rms_norm false),
    # out_proj 3072 × 3072; gated MLP 3 × 3072 × 12288; two RMSNorms.
    block = (3072 * 2048 + 1536 * 3072) + (3072 * 6680 + 3584 * 4 + 3584 + 72 + 3072 * 3072) \
        + 3 * 3072 * 12288 + 2 * 3072
    assert m.n_params == 2 * 130048 * 3072 + 44 * block + 3072 == 7_585_513_568
    # As stored (BF16 throughout), the tensor groups hold every parameter: the Mamba-2 beside the attention too.
    assert sum(g.params for g in m.stored_breakdown()) == m.n_params
    assert {g.name: g.params for g in m.stored_breakdown()}["Mamba"] == 44 * (3072 * 6680 + 3072 * 3072)
    # The Mamba state's recurrence is counted in decode, once per block.
    assert m.decode_attention_flop(0) == 44 * 5 * 24 * 128 * 256
    assert m.warnings == ()  # every key read or known not to change memory or FLOPs
    # TP 2: the KV heads (2) split one per rank, the Mamba heads split in two; TP 4: KV replicated, Mamba in four.
    assert Parallelism(m, tp=2).cache_bytes_per_sequence_per_gpu(8192, 2) == (45_056 * 8192 + 70_152_192) / 2
    assert Parallelism(m, tp=4).cache_bytes_per_sequence_per_gpu(8192, 2) == 45_056 * 8192 / 2 + 70_152_192 / 4


def test_falcon_h1_15b_deep_auto_head_dim():
    # Falcon-H1-1.5B: 24 layers, 48 Mamba heads of 64 (mamba_d_ssm 3072), "auto" head dim resolved as d_ssm / heads.
    cfg = {**FALCON_H1_7B, "num_hidden_layers": 24, "hidden_size": 2048, "intermediate_size": 4608,
           "num_attention_heads": 8, "mamba_n_heads": 48, "mamba_d_head": "auto", "vocab_size": 65537}
    m = read(cfg)
    assert m.mamba.head_dim == 64 and m.mamba.d_inner == 3072
    assert m.kv_bytes_per_token(2) == 24 * 2 * 2 * 128 * 2
    assert m.state_bytes_per_sequence() == 24 * (48 * 64 * 256 * 2 + (3072 + 512) * 3 * 2)




def test_minimax_lightning_attention_by_list():
    m = read(MINIMAX_M1)
    # attn_type_list: a softmax layer after every 7 lightning layers: 10 hold KV, 70 a fixed state.
    assert m.n_kv_layers == 10 and m.stack.count(lambda k: k.mixer == "linear_attention") == 70
    assert m.linear_attention.kind == "lightning"
    assert m.kv_bytes_per_token(2) == 10 * 2 * 8 * 128 * 2 == 40_960  # not 80 layers' 327,680
    # Each lightning layer keeps 64 heads × 128 × 128 of KᵀV per sequence (vLLM's state (heads, d, d)), no conv.
    assert m.state_bytes_per_sequence() == 70 * 64 * 128 * 128 * 2 == 146_800_640
    # Parameters: lightning layers qkv 6144 × 3·8192 + output gate 6144 × 8192 + out 8192 × 6144 + norm 8192; softmax
    # layers q, o 6144 × 8192 and k, v 6144 × 1024; 32 experts of 3 × 6144 × 9216 and a router on every layer.
    lightning = 6144 * 3 * 8192 + 6144 * 8192 + 8192 * 6144 + 8192
    softmax = 2 * 6144 * 8192 + 2 * 6144 * 1024
    expert = 3 * 6144 * 9216
    common = 2 * 6144 + 6144 * 32
    total = 2 * 200064 * 6144 + 70 * lightning + 10 * softmax + 80 * (common + 32 * expert) + 6144
    assert m.n_params == total == 456_089_655_296  # the model card: 456B total
    assert m.n_active_params == total - 80 * 30 * expert
    # ... and 45.9B activated per token, the card counting no embeddings: 45,944,920,064.
    assert m.n_active_params - 2 * 200064 * 6144 == 45_944_920_064
    # Decode: softmax layers attend to S, lightning layers update their state (5 FLOP per element).
    assert m.decode_attention_flop(4096) == 10 * 4 * 64 * 128 * 4096 + 70 * 5 * 64 * 128 * 128
    assert m.warnings == ()


def test_expert_parallel_and_pipeline_stages_count_the_fullest_gpu():
    # Qwen3-30B-A3B's 128 experts at EP 48: the fullest group holds ceil(128/48) = 3 per layer, not 2.67.
    from core.model_catalogue import load_models

    models = load_models()
    qwen = models["qwen3-30b-a3b"]
    assert Parallelism(qwen, ep=48).experts_per_gpu() == 3
    per_expert = 3 * 2048 * 768
    assert Parallelism(qwen, ep=48).n_params == pytest.approx(
        qwen.n_params - 48 * 128 * per_expert + 48 * 3 * per_expert, rel=1e-15)
    # DeepSeek-V3's 61 layers over PP 4 as vLLM splits them: 15, 15, 16, 15 (the extra layer before the last stage).
    v3 = models["deepseek-v3"]
    plan = Parallelism(v3, pp=4)
    assert plan.stage_layers() == (15, 15, 16, 15)
    dense = 187_107_328 + 14_336 + 3 * 7168 * 18432  # MLA attention, two norms, the dense MLP
    moe = 187_107_328 + 14_336 + 7168 * 256 + 256 + 3 * 7168 * 2048 + 256 * 3 * 7168 * 2048
    assert v3.n_params == 3 * dense + 58 * moe + 2 * 129280 * 7168 + 7168
    # Stage 0: 3 dense + 12 MoE layers + the embedding; stage 2: 16 MoE layers, the fullest; stage 3: 15 + the head.
    assert [plan.stage_parts(i).per_gpu(1) for i in range(4)] == [
        3 * dense + 12 * moe + 129280 * 7168, 15 * moe, 16 * moe, 15 * moe + 129280 * 7168 + 7168]
    assert plan.n_params == 16 * moe == 184_116_580_352
    # Memory per GPU is the fullest stage's, so is what smallest_fit looks for.
    assert plan.memory_bytes(2.0, 0.0, 1, 0.0) == 2 * 184_116_580_352


def test_tensor_parallel_keeps_small_matrices_whole_as_the_engines_do():
    # DeepSeek-V3 at TP 8.  Whole on every rank (vLLM deepseek_v2.py / SGLang: ReplicatedLinear): per layer the
    # norms 2 × 7168, q_a_proj 7168 × 1536 + its norm 1536, kv_a_proj_with_mqa 7168 × 576 + its norm 512, and on the
    # 58 MoE layers the router 7168 × 256 + its bias 256; plus the final norm.
    from core.model_catalogue import load_models

    v3 = load_models()["deepseek-v3"]
    attention_whole = 2 * 7168 + 7168 * 1536 + 1536 + 7168 * 576 + 512
    replicated = 61 * attention_whole + 58 * (7168 * 256 + 256) + 7168
    assert replicated == 1_030_919_680
    plan = Parallelism(v3, tp=8)
    assert plan.fullest_stage().replicated == replicated
    assert plan.n_params == (v3.n_params - replicated) / 8 + replicated == 84_780_357_120
    # Splitting all but the norms, as the lab did, said 83,879,073,856 per GPU: 1.8 GB too few at BF16.
    old = (v3.n_params - 61 * 14_336 - 7168) / 8 + 61 * 14_336 + 7168
    assert (plan.n_params - old) * 2 == pytest.approx(1.80e9, rel=0.01)


def test_layer_strip_shows_the_round_3_kinds():
    from app.layer_strip import layer_strip_html

    sparse = layer_strip_html(read(_field_config("sparse-attention-indexer-cache.json")).stack)
    assert 'data-kind="sparse"' in sparse and "S×3" in sparse and "SE×58" in sparse
    assert "58 × sparse attention (top-k keys; the indexer&#x27;s own key cache) + MoE" in sparse
    cross = layer_strip_html(read(_field_config("cross-attention-layers.json")).stack)
    assert cross.count('data-kind="cross"') == 8 and "8 × cross-attention to the image" in cross
    assert "32 × full attention" in cross and "#000000" in cross
    hybrid = layer_strip_html(read(FALCON_H1_7B).stack)
    assert 'data-kind="parallel"' in hybrid and "H×44" in hybrid and "#D55E00" in hybrid and "#0072B2" in hybrid
    lightning = layer_strip_html(read(MINIMAX_M1).stack)
    assert "70 × linear attention (fixed state) + MoE" in lightning and "10 × full attention + MoE" in lightning


def test_the_kv_per_token_readout_says_how_far_it_holds_with_windowed_layers():
    """A new user's trial: Gemma-3's "KV per token" is every layer's, true for the first window's tokens only (its
    sliding layers stop there), and read as if it held at any S.  The label says where it holds, and the bytes agree:
    up to the window the cache grows by it a token, past the window by the global layers' share alone."""
    from core.explain import quantities
    from core.scenario import Scenario

    r = Scenario(model="gemma-3-12b").evaluate()
    q = quantities(r)["kv-token"]
    assert q.label == "KV per token (S ≤ 1,024; past it only the global layers grow)"
    m, per_token = r.model, r.kv_bytes_per_token
    assert m.kv_bytes_per_sequence(1024, 2) == 1024 * per_token
    global_layers = m.stack.count(lambda k: k.allocates_kv and k.token_cap is None)
    assert m.kv_bytes_per_sequence(2048, 2) - m.kv_bytes_per_sequence(1024, 2) == 1024 * per_token * global_layers \
        // m.n_kv_layers
    assert quantities(Scenario(model="llama-3-8b").evaluate())["kv-token"].label == "KV per token"


def test_what_the_lab_read_marks_an_approximate_models_figures_and_says_how_mla_caches():
    """A trial on Bring your own: DeepSeek-V2-Lite with a multi-token-prediction key read "parameters (total)
    15,706,484,224" and "KV per token 31,104 bytes" unmarked beside "≈" readouts, "KV heads h_kv 16" beside the command
    line's one cached head, and "1 layers with a dense MLP"."""
    from core.model_catalogue import get_model

    v3 = get_model("deepseek-v3").architecture()  # num_nextn_predict_layers: not modelled
    assert v3["parameters (total)"] == "≈ 671,026,419,200" and v3["KV per token (BF16)"] == "≈ 70,272 bytes"
    assert v3["KV heads h_kv"] == "128 in the config; none cached per head: MLA caches one latent per token per layer"
    assert v3["experts"].endswith("on 58 MoE layers; 3 layers with a dense MLP")
    llama = get_model("llama-3-8b").architecture()
    assert llama["parameters (total)"] == "8,030,261,248" and llama["KV heads h_kv"] == 8
    qwen = get_model("qwen3-30b-a3b").architecture()
    assert "dense MLP" not in qwen["experts"]
