"""Inputs several test files share: real configs of the newer kinds and the longest link the lab writes.

Kept here, beside conftest.py (on the path of every tier), rather than in one tier's test module.
"""

from __future__ import annotations

from core.hardware import custom_accelerator
from core.permalink import to_query
from core.pins import MAX_PINS, Pin
from core.scenario import LEVERS

# tiiuae/Falcon-H1-7B's config.json keys as copied into public sizing code (the shape matches transformers' Falcon-H1
# table); the bias and norm flags are FalconH1Config's defaults, written out; the μP multipliers are numerics.
FALCON_H1_7B = {
    "model_type": "falcon_h1", "architectures": ["FalconH1ForCausalLM"], "hidden_size": 3072,
    "num_hidden_layers": 44, "num_attention_heads": 12, "num_key_value_heads": 2, "head_dim": 128,
    "intermediate_size": 12288, "vocab_size": 130048, "tie_word_embeddings": False, "mamba_d_state": 256,
    "mamba_n_groups": 1, "mamba_n_heads": 24, "mamba_d_head": 128, "mamba_d_ssm": 3072, "mamba_expand": 2,
    "mamba_d_conv": 4, "mamba_chunk_size": 128, "max_position_embeddings": 262144, "attn_layer_indices": None,
    "mamba_conv_bias": True, "mamba_proj_bias": False, "mamba_rms_norm": False, "projectors_bias": False,
    "key_multiplier": 0.39, "attention_in_multiplier": 1.0, "ssm_multipliers": [1.0, 1.0, 1.0, 1.0, 1.0]}

# MiniMaxAI/MiniMax-M1's config.json (https://huggingface.co/MiniMaxAI/MiniMax-M1-80k/blob/main/config.json, as
# copied into a public repository): auto_map, token ids, initializer_range and versions left out.
MINIMAX_M1 = {
    "architectures": ["MiniMaxM1ForCausalLM"], "attention_dropout": 0.0,
    "attn_type_list": [0, 0, 0, 0, 0, 0, 0, 1] * 10, "head_dim": 128, "hidden_act": "silu", "hidden_size": 6144,
    "intermediate_size": 9216, "layernorm_full_attention_alpha": 3.5565588200778455,
    "layernorm_full_attention_beta": 1.0, "layernorm_linear_attention_alpha": 3.5565588200778455,
    "layernorm_linear_attention_beta": 1.0, "layernorm_mlp_alpha": 3.5565588200778455, "layernorm_mlp_beta": 1.0,
    "max_position_embeddings": 10240000, "model_type": "minimax_m1", "num_attention_heads": 64,
    "num_experts_per_tok": 2, "num_hidden_layers": 80, "num_key_value_heads": 8, "num_local_experts": 32,
    "output_router_logits": False, "postnorm": True, "rms_norm_eps": 1e-05, "rope_theta": 10000000, "rotary_dim": 64,
    "router_aux_loss_coef": 0.001, "router_jitter_noise": 0.0, "shared_intermediate_size": 0,
    "shared_moe_mode": "sigmoid", "sliding_window": None, "tie_word_embeddings": False, "vocab_size": 200064}

# A Qwen3-30B-A3B-style checkpoint in AWQ 4-bit (group 128, zero points; the router "gate" left in 16 bits), the
# new-user trial's config: h = 2048, L = 48, V = 151,936 (untied), 32 query / 4 KV heads of 128, E = 128 experts
# of 3·2048·768 = 4,718,592 parameters, k_e = 8 per token.
QWEN3_MOE_AWQ = {
    "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "hidden_size": 2048,
    "intermediate_size": 6144, "moe_intermediate_size": 768, "num_hidden_layers": 48, "num_attention_heads": 32,
    "num_key_value_heads": 4, "head_dim": 128, "num_experts": 128, "num_experts_per_tok": 8,
    "decoder_sparse_step": 1, "mlp_only_layers": [], "norm_topk_prob": True, "vocab_size": 151936,
    "tie_word_embeddings": False, "max_position_embeddings": 40960, "attention_bias": False,
    "hidden_act": "silu", "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "torch_dtype": "float16",
    "quantization_config": {"bits": 4, "group_size": 128, "modules_to_not_convert": ["gate"], "quant_method": "awq",
                            "version": "gemm", "zero_point": True},
}

def longest_written_query() -> str:
    """The longest query the lab itself writes: 16 pins with 40-character names of the characters that encode
    longest (4-byte UTF-8), every lever moved to a long value, ids of a pasted model and a custom GPU, a custom
    GPU with a 60-character name and every roof, the pasted model's config.json at the longest a link carries (a
    deflated config is as random as base64 text gets), and the app's own keys."""
    import random
    from urllib.parse import urlencode

    import param

    from core.permalink import MAX_LINK_CONFIG_CHARS

    gpu = custom_accelerator("\U0001f600" * 60, bandwidth_tbs=3.123456789012345, capacity_gb=80.12345678901234,
                             reference="h200", bf16=989.1234567890123, fp8=1979.123456789012, int8=1979.12345678901,
                             fp4=3958.123456789012)
    levers = {}
    for lever in LEVERS:
        p = lever.parameter
        if isinstance(p, param.Boolean):
            levers[lever.name] = not p.default
        elif isinstance(p, param.Selector):
            levers[lever.name] = {"model": "config-" + "m" * 40, "gpu": "custom-" + "g" * 40}.get(
                lever.name, max(map(str, p.objects), key=len))
        elif isinstance(p, param.Integer):
            levers[lever.name] = p.bounds[1] - 7
        else:
            levers[lever.name] = p.bounds[1] * 0.123456789012345 + 0.1
    # Preset pins, each carrying what it was pinned from: a trio's pin differs from its origin on B, k, the phase
    # and the lever it moves (core.pins.lever_preset), here each with a long value.
    origin = {**levers, "batch": levers["batch"] - 1, "spec_k": levers["spec_k"] - 1, "phase": "decode",
              "weight_dtype": min(map(str, LEVERS["weight_dtype"].parameter.objects), key=len)}
    pins = [Pin("\U0001f600" * 40, levers, origin, "weight_dtype") for _ in range(MAX_PINS)]
    from app.state import ENGINES
    from core.ladder import ARTICLE_ORDER

    query = {**to_query(levers, pins, gpu), "embed": "true", "present": "true", "tour": "10", "tab": "Bring your own",
             "engine": max(ENGINES, key=len), "band": "true", "ladder": ",".join(reversed(ARTICLE_ORDER)),
             "mix": "uniform", "block-size": "1024"}
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    query["config"] = "".join(random.Random(30).choices(alphabet, k=MAX_LINK_CONFIG_CHARS))
    return urlencode(query)
