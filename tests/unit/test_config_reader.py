"""Reading config.json dialects: small configs whose right values were computed by hand."""

import json

import pytest

from core import ConfigError, Scenario, evaluate, from_hf_config, get_accelerator, parse_config_text


def read(cfg):
    return from_hf_config(cfg, model_id="t", name="t")


def test_gpt2_small_is_124_439_808_parameters():
    m = read({"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "n_positions": 1024,
              "vocab_size": 50257})
    # 38,597,376 wte + 786,432 wpe + 12 × 7,087,872 blocks + 1,536 ln_f (tied head).
    assert m.n_params == 124_439_808
    assert (m.dialect, m.n_kv_heads, m.head_dim, m.max_context) == ("gpt2", 12, 64, 1024)
    assert m.kv_bytes_per_token(2) == 2 * 12 * 12 * 64 * 2


def test_training_settings_do_not_make_a_model_approximate():
    # A new user's trial: a Granite config's "init_method" (how the weights were initialised for training) and
    # "normalization_function" (RMSNorm or LayerNorm: neither's FLOP nor bytes are counted) marked every figure
    # "approximate".  A key that changes the architecture still does.
    base = {"model_type": "llama", "hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 1,
            "intermediate_size": 16, "vocab_size": 10}
    m = read({**base, "init_method": "mup", "init_std": 0.02, "normalization_function": "rmsnorm"})
    assert not m.approximate and m.approximate_note() == ""
    assert read({**base, "mtp_num_hidden_layers": 1}).approximate


def test_falcon_multi_query_parallel_attention():
    m = read({"model_type": "falcon", "hidden_size": 8, "n_head": 2, "n_layer": 1, "vocab_size": 10,
              "multi_query": True, "parallel_attn": True, "bias": False})
    # q 64 + k,v 2·8·4 = 64 + o 64; MLP 2·8·32 = 512; one LayerNorm 16; final LayerNorm 16; embedding 80 and
    # a separate LM head 80 (Falcon checkpoints store lm_head: falcon-7b's 7.22B counts it).
    assert m.n_kv_heads == 1
    assert m.n_params == 192 + 512 + 16 + 16 + 80 + 80
    assert m.kv_bytes_per_token(2) == 2 * 1 * 4 * 2


def test_chatglm_keys():
    m = read({"model_type": "chatglm", "num_layers": 1, "hidden_size": 8, "num_attention_heads": 2,
              "multi_query_attention": True, "multi_query_group_num": 1, "kv_channels": 4, "ffn_hidden_size": 6,
              "padded_vocab_size": 10, "add_qkv_bias": True, "seq_length": 32768})
    # q 64 + k,v 64 + o 64 + q/k/v biases 16; SwiGLU 3·8·6 = 144; norms 16; embedding + output 160; final norm 8.
    assert m.n_params == 208 + 144 + 16 + 160 + 8
    assert (m.n_kv_heads, m.head_dim, m.max_context) == (1, 4, 32768)


MOE = {"model_type": "deepseek_v3", "num_hidden_layers": 2, "hidden_size": 8, "num_attention_heads": 2,
       "num_key_value_heads": 1, "head_dim": 4, "intermediate_size": 16, "vocab_size": 10,
       "tie_word_embeddings": False, "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 6,
       "n_shared_experts": 1, "first_k_dense_replace": 1}


def test_mixture_of_experts_total_active_and_read():
    m = read(MOE)
    # Per layer: attention 192 + norms 16.  Layer 1 dense MLP 3·8·16 = 384.  Layer 2: router 32, shared
    # expert 144, four experts of 144 (two per token).  Embedding 80, head 80, final norm 8.
    assert m.parameter_counts().total == 1720
    assert m.parameter_counts().active == 1720 - 4 * 144 + 2 * 144
    # One token touches 4·(1 − (1 − 2/4)^1) = 2 experts; many tokens touch all 4.
    assert m.params_read(1) == pytest.approx(m.n_active_params)
    assert m.params_read(10_000) == pytest.approx(1720)
    assert m.params_read(2) == pytest.approx(1144 + 144 * 4 * (1 - 0.5**2))


def test_moe_intensity_falls_back_toward_batch_one():
    # Article 000, "Where It Breaks": a batch touches every expert but does a batch's arithmetic on each.
    m = read(MOE)
    gpu = get_accelerator("h100-sxm")
    r1 = evaluate(gpu=gpu, model=m, batch=1)
    r64 = evaluate(gpu=gpu, model=m, batch=64)
    assert r1.weight_bytes_read == pytest.approx(m.n_active_params * 2)
    assert r64.weight_bytes_read == pytest.approx(m.n_params * 2)
    assert r1.weight_bytes_held == r64.weight_bytes_held == m.n_params * 2
    assert r64.arithmetic_intensity_weights == pytest.approx(64 * m.n_active_params / m.n_params)
    assert r64.arithmetic_intensity_weights < 64


def test_multi_head_latent_attention_caches_the_latent():
    m = read({"model_type": "deepseek_v3", "num_hidden_layers": 1, "hidden_size": 8, "num_attention_heads": 2,
              "intermediate_size": 16, "vocab_size": 10, "kv_lora_rank": 4, "qk_rope_head_dim": 2,
              "qk_nope_head_dim": 3, "v_head_dim": 3, "tie_word_embeddings": False})
    # q 8·2·5 = 80; kv down 8·6 + norm 4 + up 4·2·6 = 100; o 2·3·8 = 48; norms 16; MLP 384; 80 + 80 + 8.
    assert m.n_params == 228 + 16 + 384 + 168
    assert m.kv_bytes_per_token(2) == (4 + 2) * 2  # kv_lora_rank + qk_rope_head_dim per layer
    assert m.kv_bytes_per_token(2, gqa=False) == 2 * (3 + 2 + 3) * 2  # every head's K and V, uncompressed


def test_gemma2_alternates_local_and_global_layers():
    m = read({"model_type": "gemma2", "num_hidden_layers": 4, "hidden_size": 16, "num_attention_heads": 2,
              "num_key_value_heads": 1, "intermediate_size": 32, "vocab_size": 10, "sliding_window": 8})
    assert m.layer_windows == (8, None, 8, None)
    assert m.head_dim == 256 and m.tie_word_embeddings  # Gemma's defaults when absent
    per_layer_token = 2 * 1 * 256 * 2
    assert m.kv_bytes_per_sequence(20, 2) == per_layer_token * (8 + 20 + 8 + 20)
    assert any("alternate" in a for a in m.assumptions)


def test_gemma3_pattern_and_explicit_layer_types():
    cfg = {"model_type": "gemma3_text", "num_hidden_layers": 6, "hidden_size": 16, "num_attention_heads": 2,
           "num_key_value_heads": 1, "head_dim": 8, "intermediate_size": 32, "vocab_size": 10, "sliding_window": 4,
           "sliding_window_pattern": 3}
    assert read(cfg).layer_windows == (4, 4, None, 4, 4, None)
    types = ["full_attention"] + ["sliding_attention"] * 5
    assert read({**cfg, "layer_types": types}).layer_windows == (None, 4, 4, 4, 4, 4)


QWEN3_SWA = {"num_hidden_layers": 6, "hidden_size": 16, "num_attention_heads": 2, "num_key_value_heads": 1,
             "head_dim": 8, "intermediate_size": 32, "vocab_size": 10, "use_sliding_window": True,
             "sliding_window": 4}


def test_qwen3_slides_from_max_window_layers_as_transformers_reads_it():
    # A trial: Qwen3 with use_sliding_window read the window on all 48 layers (0.40 GB of KV at 32k where
    # transformers' Qwen3Config slides layers 24 and up: 1.81 GB).  Layer i slides where i >= max_window_layers.
    m = read({**QWEN3_SWA, "model_type": "qwen3", "max_window_layers": 2})
    assert m.layer_windows == (None, None, 4, 4, 4, 4)
    per_layer_token = 2 * 1 * 8 * 2
    assert m.kv_bytes_per_sequence(20, 2) == per_layer_token * (2 * 20 + 4 * 4)
    assert any("max_window_layers 2" in a for a in m.assumptions)
    assert read({**QWEN3_SWA, "model_type": "qwen3"}).layer_windows == (None,) * 6  # 28 by default: none of 6
    assert read({**QWEN3_SWA, "model_type": "qwen3", "use_sliding_window": False}).layer_windows == (None,) * 6


def test_qwen3_moe_has_no_shared_expert_and_slides_every_layer():
    # transformers' Qwen3MoeConfig: no shared expert (a trial's shared_expert_intermediate_size had added 13.5 % to
    # the active weights) and no max_window_layers (its attention takes the window on every layer).
    moe = {**QWEN3_SWA, "model_type": "qwen3_moe", "num_experts": 4, "num_experts_per_tok": 2,
           "moe_intermediate_size": 6}
    plain = read(moe)
    extra = read({**moe, "shared_expert_intermediate_size": 12, "max_window_layers": 2})
    assert plain.moe.n_shared_experts == extra.moe.n_shared_experts == 0
    assert extra.n_params == plain.n_params and extra.n_active_params == plain.n_active_params
    assert extra.layer_windows == plain.layer_windows == (4,) * 6
    assert any("no shared expert" in a for a in extra.assumptions)
    assert any("reads no max_window_layers" in a for a in extra.assumptions)


def test_rope_scaling_extends_the_context_only_where_the_config_says_so():
    """Llama-3.1 writes the extended length in max_position_embeddings; Qwen's YaRN recipe keeps the original there
    with original_max_position_embeddings × factor (an engineer's trial: a YaRN ×4 model at 8k was warned "beyond its
    trained context of 4,096" under an assumption that said the context was not multiplied)."""
    base = {"num_hidden_layers": 1, "hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 16,
            "vocab_size": 10}
    llama = read({**base, "max_position_embeddings": 131072,
                  "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}})
    assert llama.max_context == 131072
    assert any("8,192 × factor 8 = 65,536): the trained context is max_position_embeddings as given, 131,072" in a
               for a in llama.assumptions)
    qwen = read({**base, "max_position_embeddings": 32768,
                 "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}})
    assert qwen.max_context == 131072
    assert any("original_max_position_embeddings × factor = 32,768 × 4 = 131,072" in a for a in qwen.assumptions)
    bare = read({**base, "max_position_embeddings": 4096, "rope_scaling": {"type": "yarn", "factor": 4.0}})
    assert bare.max_context == 4096
    assert any("without original_max_position_embeddings: the trained context is max_position_embeddings as given "
               "(4,096)" in a for a in bare.assumptions)
    nan = read({**base, "max_position_embeddings": 4096,
                "rope_scaling": {"type": "yarn", "factor": float("nan"), "original_max_position_embeddings": 4096}})
    assert nan.max_context == 4096  # a factor that is no number: as given, and the assumption says why
    assert any("(original_max_position_embeddings 4096) not two positive numbers" in a for a in nan.assumptions)



def test_a_vision_language_config_names_only_what_it_leaves_out():
    """An engineer's trial with Qwen2-VL-7B's config: "rope_scaling 'mrope' (factor '?')" showed a placeholder where
    mrope has no factor, and vision_token_id (a token id, like image_token_id) was named among the keys not
    modelled."""
    base = {"num_hidden_layers": 1, "hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 16,
            "vocab_size": 10, "max_position_embeddings": 32768}
    m = read({**base, "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}, "vision_token_id": 151654,
              "image_token_id": 151655, "vision_start_token_id": 151652, "vision_config": {"depth": 32}})
    assert m.max_context == 32768
    assert "rope_scaling 'mrope' gives no factor: the trained context is max_position_embeddings as given (32,768)" \
        in m.assumptions
    assert not any("?" in a for a in m.assumptions)
    assert "vision_token_id" not in m.unmodelled and "vision_config (weights not counted)" in m.unmodelled
    # A verifying trial: transformers re-saves it with "rope_type": "default" beside "type": "mrope" (read as
    # 'default'), and an empty rope_scaling printed "rope_scaling '?'"
    resaved = read({**base, "rope_scaling": {"type": "mrope", "rope_type": "default", "mrope_section": [16, 24, 24]}})
    assert any(a.startswith("rope_scaling 'mrope' gives no factor") for a in resaved.assumptions)
    empty = read({**base, "rope_scaling": {}})
    assert not any("?" in a for a in empty.assumptions)


def test_gptq_4bit_adds_scale_and_zero_overhead():
    base = {"num_hidden_layers": 1, "hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 16,
            "vocab_size": 10}
    m = read({**base, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128}})
    # A 16-bit scale and a 4-bit zero point per 128 weights: (2 + 0.5) / 128 bytes per weight.
    assert m.weight_bytes_per_param(0.5) == 0.5 + 2.5 / 128
    assert m.weight_bytes_per_param(2.0) == 2.0  # BF16 is not the checkpoint's format: no overhead
    r = evaluate(gpu=get_accelerator("h100-sxm"), model=m, weight_dtype="int4")
    assert r.weight_bytes_read == pytest.approx(m.n_params * (0.5 + 2.5 / 128))
    # -1: one group per output row (GPTQ's and AWQ's own value for it); 0 is no size at all (an engineer's trial read
    # it as "group 0").
    per_row = read({**base, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": -1}})
    assert per_row.weight_bytes_per_param(0.5) == 0.5 + 2.5 / 8
    assert "INT4 (GPTQ, one group per row)" in [fmt.name for _, fmt in per_row.quantization.rules]
    with pytest.raises(ConfigError, match=r"group_size must be positive, or -1 \(one group per output row\)"):
        read({**base, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 0}})


def test_multimodal_text_config_and_missing_fields_are_reported():
    m = read({"model_type": "llava", "text_config": {"num_hidden_layers": 2, "hidden_size": 8,
                                                     "num_attention_heads": 2, "intermediate_size": 16,
                                                     "vocab_size": 10}})
    text = " ".join(m.assumptions)
    assert "text_config" in text and "num_key_value_heads absent" in text and "head_dim absent" in text


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "invalid JSON at line 1, column 2"),
        ("[1, 2]", "must be a JSON object"),
        (" " * 2_000_001, "limit 2 MB"),
        ('{"num_hidden_layers": NaN}', "'num_hidden_layers' must be a positive integer, got nan"),
    ],
)
def test_broken_config_text_is_refused_with_a_clear_message(text, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        from_hf_config(parse_config_text(text), model_id="t", name="t")


@pytest.mark.parametrize(("key", "value", "said"), [
    ("sliding_window", -128, "'sliding_window' must be a positive integer, got -128"),
    ("sliding_window", None, "'layer_types' names sliding_attention layers but 'sliding_window' is not given"),
])
def test_a_bad_window_is_refused_once_for_what_it_is(key, value, said):
    """A new user's trial: gpt-oss with "sliding_window": -128 was refused as "must be a positive integer, got -128"
    and, in the same message, "'sliding_window' is not given"."""
    from pathlib import Path

    cfg = json.loads((Path(__file__).parents[2] / "core" / "model_configs" / "gpt-oss-20b.json").read_text())
    cfg[key] = value
    with pytest.raises(ConfigError) as refused:
        from_hf_config(cfg, model_id="config-gpt-oss", name="gpt-oss")
    text = str(refused.value)
    assert said in text
    assert ("is not given" in text) == (value is None)


def test_mxfp4_stores_the_routed_experts_only_with_or_without_an_ignore_list():
    """A new user's trial: gpt-oss's config without its modules_to_not_convert stored the attention in MXFP4 too
    (63.85 GB).  Transformers' MXFP4 quantiser replaces the routed experts only, so the checkpoint is the same
    65,248,815,744 bytes either way (the field case mxfp4-moe-sliding.json), and the reader says so."""
    from pathlib import Path

    cfg = json.loads((Path(__file__).parents[2] / "core" / "model_configs" / "gpt-oss-120b.json").read_text())
    bare = {**cfg, "quantization_config": {"quant_method": "mxfp4"}}
    for c in (cfg, bare):
        m = from_hf_config(c, model_id="config-gpt-oss", name="gpt-oss")
        stored = {g.name: g for g in m.stored_breakdown()}
        assert sum(g.params * g.bytes_per_weight for g in stored.values()) == 65_248_815_744
        assert stored["attention"].format == "BF16" and stored["routed experts"].format == "MXFP4"
    assert any(a.startswith("MXFP4: the routed experts in MXFP4") for a in m.assumptions)


def test_a_refused_config_leaves_the_scenario_as_it_was():
    s = Scenario(model="llama-3-8b", batch=56)
    with pytest.raises(ConfigError):
        read(json.loads('{"num_hidden_layers": -1}'))
    assert (s.model, s.batch) == ("llama-3-8b", 56)
    assert round(s.evaluate().tokens_per_s_with_kv) == 2462


def test_catalogue_configs_read_back_to_the_catalogue_numbers():
    from core import get_model, load_models
    from core.model_catalogue import CATALOGUE_DIR

    for model_id in load_models():
        cfg = json.loads((CATALOGUE_DIR / f"{model_id}.json").read_text())
        again = from_hf_config(cfg, model_id=model_id, name=model_id)
        m = get_model(model_id)
        assert again.parameter_counts() == m.parameter_counts()
        assert again.kv_bytes_per_token(2) == m.kv_bytes_per_token(2)
        assert again.kv_bytes_per_sequence(131072, 2) == m.kv_bytes_per_sequence(131072, 2)


# --- a config's name (issue 30: one name on the CLI, in the lab and on the offline page) ---------------------------
@pytest.mark.parametrize("config, file_name, name", [
    ({"_name_or_path": "meta-llama/Llama-3.1-8B"}, "some/dir/config.json", "Llama-3.1-8B"),  # the config's own name
    ({"_name_or_path": "meta-llama/Llama-3.1-8B"}, "half-llama.json", "Llama-3.1-8B"),  # before the file's
    ({"_name_or_path": "C:\\models\\Llama-3.1-8B\\"}, "", "Llama-3.1-8B"),  # a Windows path
    ({"architectures": ["LlamaForCausalLM"]}, "half-llama.json", "half-llama"),  # the file, before the class
    ({"architectures": ["LlamaForCausalLM"]}, "C:\\Users\\me\\half-llama.json", "half-llama"),
    ({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}, "config.json", "LlamaForCausalLM"),
    ({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}, "CONFIG.JSON", "LlamaForCausalLM"),
    ({"architectures": ["MistralForCausalLM"], "model_type": "mistral"}, "", "MistralForCausalLM"),  # pasted
    ({"model_type": "mistral"}, "", "mistral"),
    ({"model_type": "mistral"}, "config", "mistral"),
    ({}, "config.json", "Pasted config"),
    ({}, "", "Pasted config"),
    ({"_name_or_path": "/", "architectures": [7], "model_type": ["x"]}, "", "Pasted config"),  # none names it
    ({"_name_or_path": 42, "architectures": "MistralForCausalLM"}, "", "Pasted config"),  # not text, not a list
    ({"_name_or_path": "  ", "architectures": [], "model_type": " gemma "}, "", "gemma"),
])
def test_a_config_is_named_by_its_name_or_path_its_file_its_class_or_its_type(config, file_name, name):
    from core.config_reader import config_name

    assert config_name(config, file_name) == name


def test_a_config_name_is_one_printable_line_of_at_most_60_characters():
    """The CLI prints the name to a terminal: ESC, BEL, a C1 control or a bidi override in a file's name or a
    config's field is written as its escape (as ``core.cli.printable`` writes them), never kept."""
    from core.config_reader import NAME_LIMIT, config_name

    hostile = "\x1b]0;pwned\x07\x1b[2J\x9b\u202e"
    assert config_name({}, f"evil{hostile}.json") == "evil\\x1b]0;pwned\\x07\\x1b[2J\\x9b\\u202e"
    assert config_name({"_name_or_path": f"org/{hostile}"}) == "\\x1b]0;pwned\\x07\\x1b[2J\\x9b\\u202e"
    assert config_name({"architectures": [f"Bad{hostile}ForCausalLM"]}).startswith("Bad\\x1b]0;pwned")
    assert config_name({"model_type": "a\tb\n\nc\u00a0d"}) == "a b c d"  # whitespace: one space
    assert config_name({"model_type": "\x1b"}) == "\\x1b"  # said, not dropped: a name that was only ESC
    for config in ({"_name_or_path": "x" * 500}, {"model_type": "\x07" * 100}, {"model_type": "y " * 100}):
        name = config_name(config)
        assert 0 < len(name) <= NAME_LIMIT and name == name.strip()
        assert all(c.isprintable() for c in name), name


def test_a_config_model_id_is_config_and_its_name_slug():
    from core.config_reader import config_model_id

    assert config_model_id("Llama-3.1-8B") == "config-llama-3-1-8b"
    assert config_model_id("Pasted config") == "config-pasted-config"  # the lab's id before the rule moved to core
    assert config_model_id("MistralForCausalLM") == "config-mistralforcausallm"
    assert config_model_id("\\x1b]0") == "config-x1b-0"
    assert config_model_id("---") == "config-model"
    assert config_model_id("a" * 60) == "config-" + "a" * 40


@pytest.mark.parametrize("config, file_name", [
    ({}, "half-llama.json"),
    ({"architectures": ["LlamaForCausalLM"]}, "C:\\Users\\me\\half-llama.json"),
    ({"_name_or_path": "/"}, "models/mine.json"),  # a name that names nothing: the file's replaces it
    ({}, "evil\x1b[2J\\x.json"),
    ({"architectures": ["LlamaForCausalLM"]}, "config.json"),  # the file names nothing: nothing to carry
    ({"_name_or_path": "meta-llama/Llama-3.1-8B"}, "half-llama.json"),
])
def test_a_config_carries_its_files_name_so_its_text_alone_is_named_the_same(config, file_name):
    """What a link or the offline page carries is the text alone: the name the file gave travels in it."""
    from core.config_reader import config_name, named_by_file

    carried = named_by_file(config, file_name)
    assert config_name(carried) == config_name(config, file_name)
    if config_name(config) == config_name(config, file_name):
        assert carried is config


def test_a_checkpoints_kv_cache_scheme_is_said_not_dropped():
    # A trial: compressed-tensors' kv_cache_scheme (an FP8 KV cache) was read silently; the KV bytes are the KV
    # precision lever's, and the read says so.
    base = {"model_type": "llama", "hidden_size": 8, "num_attention_heads": 2, "num_hidden_layers": 1,
            "intermediate_size": 16, "vocab_size": 10}
    groups = {"g": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float"}}}
    m = read({**base, "quantization_config": {"quant_method": "compressed-tensors", "config_groups": groups,
                                              "kv_cache_scheme": {"num_bits": 8, "type": "float"}}})
    assert ("quantization_config.kv_cache_scheme: the checkpoint ships its KV cache in 8-bit float; the KV-cache "
            "precision lever (p_kv) sets the KV bytes here (FP8 for an 8-bit cache)") in m.assumptions
    odd = read({**base, "quantization_config": {"quant_method": "compressed-tensors", "config_groups": groups,
                                                "kv_cache_scheme": "fp8"}})  # a worst input: not an object
    assert any("ships its KV cache in a quantised format" in a for a in odd.assumptions)
    opt = read({**base, "quantization_config": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}})
    assert any(a.startswith("quantization_config.kv_cache_quant_algo FP8") for a in opt.assumptions)


def test_a_tower_or_a_text_config_beside_a_top_level_language_model_is_said():
    """An engineer's trial: a config with the language model at the top level and a ``text_config`` of other sizes
    beside a ``vision_config`` was read with neither said, though the docs promise nothing silent."""
    base = {"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
            "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256}
    both = from_hf_config({**base, "text_config": {"hidden_size": 2048, "num_hidden_layers": 16},
                           "vision_config": {"hidden_size": 1024}}, model_id="x", name="x")
    assert both.unmodelled == ("text_config (not read)", "vision_config (weights not counted)")
    assert both.n_layers == 32  # the top level's
    # Without them, nothing is flagged; nor beside an empty text_config, which holds nothing to read.
    assert from_hf_config(base, model_id="y", name="y").unmodelled == ()
    empty = from_hf_config({**base, "text_config": {}}, model_id="z", name="z")
    assert empty.unmodelled == () and not empty.approximate_mark


def test_a_32_bit_checkpoint_says_it_is_counted_at_16_bits():
    """An engineer's trial: a TinyLlama-shaped config with torch_dtype float32 read "as stored (16-bit)", 2.2 GB, with
    no word that its files hold 4.4 GB (engines serve it in 16 bits: vLLM's dtype "auto")."""
    cfg = {"model_type": "llama", "hidden_size": 2048, "intermediate_size": 5632, "num_attention_heads": 32,
           "num_key_value_heads": 4, "num_hidden_layers": 22, "vocab_size": 32000, "torch_dtype": "float32",
           "max_position_embeddings": 2048, "tie_word_embeddings": False}
    said = [a for a in from_hf_config(cfg, model_id="config-t", name="t").assumptions if "float32" in a]
    assert said == ["torch_dtype 'float32': the weights \"as stored\" are counted at 16 bits, as engines serve a "
                    "32-bit checkpoint (vLLM's dtype \"auto\" loads FP32 weights as FP16); its files hold twice those "
                    "bytes"]
    for other in ({"torch_dtype": "bfloat16"}, {"torch_dtype": None}):
        assert not any("16 bits, as engines" in a
                       for a in from_hf_config({**cfg, **other}, model_id="config-t", name="t").assumptions)
    newer = {**{k: v for k, v in cfg.items() if k != "torch_dtype"}, "dtype": "float32"}  # transformers ≥ 4.56's key
    assert any("16 bits, as engines" in a for a in from_hf_config(newer, model_id="config-t", name="t").assumptions)


@pytest.mark.parametrize("with_bom", [b"\xef\xbb\xbf", "\ufeff"], ids=["file", "pasted"])
def test_a_byte_order_mark_before_the_json_is_read_past(with_bom):
    """An engineer's trial: a config saved with a byte-order mark was refused with Python's "decode using utf-8-sig"."""
    text = json.dumps({"num_hidden_layers": 2, "hidden_size": 8, "num_attention_heads": 2})
    given = with_bom + (text.encode() if isinstance(with_bom, bytes) else text)
    assert parse_config_text(given)["num_hidden_layers"] == 2


def test_a_field_given_twice_with_two_values_is_refused_by_name():
    # An attacker's config said hidden_size 4,096 and then 8,192: json kept the last without a word.
    with pytest.raises(ConfigError, match=r"'hidden_size' is given twice, as 4096 and as 8192"):
        parse_config_text('{"hidden_size": 4096, "num_hidden_layers": 32, "hidden_size": 8192}')
    with pytest.raises(ConfigError, match=r"'bits' is given twice, as 4 and as 8"):
        parse_config_text('{"quantization_config": {"bits": 4, "bits": 8}}')
    # The same value twice is one value.
    assert parse_config_text('{"hidden_size": 4096, "hidden_size": 4096}') == {"hidden_size": 4096}
    assert parse_config_text('{"hidden_size": 4096, "hidden_size": 4096.0}') == {"hidden_size": 4096.0}


@pytest.mark.parametrize("qc, said", [
    ({"quant_method": "gptq", "bits": 16, "group_size": 128}, "bits must be a number in 2..8, got '16'"),
    ({"quant_method": "awq", "w_bit": 1}, "w_bit must be a number in 2..8, got '1'"),
])
def test_gptq_and_awq_widths_outside_two_to_eight_bits_are_refused(qc, said):
    # A trial: GPTQ "bits": 16 read as "gptq 16-bit", 2.027 bytes per weight (a 16-bit weight with group scales).
    cfg = {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
           "num_hidden_layers": 32, "vocab_size": 128256, "quantization_config": qc}
    with pytest.raises(ConfigError, match=said.replace("(", r"\(")):
        from_hf_config(cfg, model_id="q", name="q")


def test_an_unmodelled_methods_bits_are_said_to_count_as_stored_only():
    # A trial: {"bits": 4} with no quant_method said "every linear weight counted at 4 bits" while the numbers beside
    # it, at the BF16 lever, counted 2 bytes: the 4 bits are the "as stored" choice's.
    cfg = {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
           "num_hidden_layers": 32, "vocab_size": 128256, "quantization_config": {"bits": 4}}
    said = [a for a in from_hf_config(cfg, model_id="q", name="q").assumptions if "not modelled" in a]
    assert said == ["quantization_config quant_method 'unknown' is not modelled: \"as stored\" counts every linear "
                    "weight at 4 bits, no scale overhead, embeddings and LM head 16-bit (the weight precision lever's "
                    "formats count every weight at theirs)"]


def test_an_object_given_twice_with_its_members_in_another_order_is_one_value():
    # An attacker's trial: JSON's objects are unordered; true is not 1.
    text = '{"q": {"bits": 4, "group_size": 128}, "q": {"group_size": 128, "bits": 4}}'
    assert parse_config_text(text) == {"q": {"group_size": 128, "bits": 4}}
    with pytest.raises(ConfigError, match="'tie_word_embeddings' is given twice, as True and as 1"):
        parse_config_text('{"tie_word_embeddings": true, "tie_word_embeddings": 1}')


def test_a_fractional_gptq_group_size_is_refused():
    # An attacker's trial: group_size 128.5 read "group 128.5".
    cfg = {"hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
           "num_hidden_layers": 32, "vocab_size": 128256,
           "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128.5}}
    with pytest.raises(ConfigError, match=r"group_size must be a whole number, got 128\.5"):
        from_hf_config(cfg, model_id="q", name="q")
    cfg["quantization_config"]["group_size"] = 128.0  # a whole number written with a point is one
    assert from_hf_config(cfg, model_id="q", name="q").quantization.main_format.name == "INT4 (GPTQ, group 128)"


LLAMA_8B = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
            "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
            "vocab_size": 128256}


@pytest.mark.parametrize("patterns, why", [
    # An attacker's trial: nine .* took 34 s to match the module names, and held every session of the class (Python's
    # re holds the GIL); each .* more multiplied it by ~5.  The nested-repetition guard let a row of .* through.
    (["re:.*.*.*.*.*.*.*.*.*!"], "'re:.*.*.*.*.*.*.*.*.*!' has 9 repetitions of .*-like atoms (at most 3)"),
    (["re:(.|\\w)*!"], "has a repeated group holding a repetition or |"),
    (["re:([\\w.]+)*!"], "has a repeated group holding a repetition or |"),
    (["re:[^.]*\\.[^.]*\\.[^.]*\\.[^.]*x"], "has 4 repetitions of .*-like atoms"),
    (["*a*b*c*d"], "wildcard '*a*b*c*d' has more than 3 *"),
    ([f"re:.*x{i}" for i in range(17)], "brings the regular expressions and wildcards to more than 16"),
])
def test_a_module_pattern_that_would_take_seconds_to_match_is_refused_by_name(patterns, why):
    cfg = {**LLAMA_8B, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128,
                                               "modules_to_not_convert": patterns}}
    with pytest.raises(ConfigError, match="quantization_config.modules_to_not_convert") as err:
        read(cfg)
    assert why in str(err.value)


def test_module_patterns_real_checkpoints_write_are_read():
    """gpt-oss's, compressed-tensors' and ModelOpt's own: a literal path with \\d+, a .* at either end, globs."""
    cfg = {**LLAMA_8B, "quantization_config": {
        "quant_method": "gptq", "bits": 4, "group_size": 128,
        "modules_to_not_convert": ["lm_head", "re:.*self_attn.*", "re:model\\.layers\\.\\d+\\.mlp\\.gate_proj$",
                                   "*.mlp.up_proj", "model.layers.*.self_attn"]}}
    m = read(cfg)
    s = Scenario()
    s.add_model(m)
    s.weight_dtype = "stored"
    assert s.evaluate().weight_bytes_read > 0


def test_compressed_tensors_targets_over_every_group_are_counted_together():
    """64 groups of 16 regular expressions each passed the per-key count and took 5.7 s to read."""
    groups = {f"g{g}": {"targets": [f"re:.*.*.*!{g}_{i}" for i in range(16)],
                        "weights": {"num_bits": 4, "type": "int", "symmetric": True, "strategy": "group",
                                    "group_size": 128}} for g in range(64)}
    with pytest.raises(ConfigError, match="targets have more than 16 regular expressions and wildcards in all"):
        read({**LLAMA_8B, "quantization_config": {"quant_method": "compressed-tensors", "config_groups": groups}})


# -- a trial with the newest architectures: what a config leaves out, or names in another family's words -----------
def _gpt_oss(**changes) -> dict:
    with open("core/model_configs/gpt-oss-120b.json") as f:
        cfg = json.load(f)
    cfg.update(changes)
    return {k: v for k, v in cfg.items() if v is not None}


def test_gpt_oss_without_layer_types_alternates_sliding_and_full_layers_as_transformers_does():
    """Without layer_types every layer had slid within 128 tokens: the KV cache 128× low, 1,846 sequences "fitting"."""
    listed, bare = read(_gpt_oss()), read(_gpt_oss(layer_types=None))
    assert list(bare.layer_windows) == list(listed.layer_windows) == [128 if i % 2 == 0 else None for i in range(36)]
    assert any("sliding and full layers alternate, starting sliding (transformers' default)" in a
               for a in bare.assumptions)


def test_an_unmodelled_quantisation_is_counted_at_its_bits_and_marks_the_model_approximate():
    """An HQQ 4-bit checkpoint ("nbits") was counted at 16 bits, its readouts bare of "≈"."""
    cfg = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
           "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
           "max_position_embeddings": 8192, "quantization_config": {"quant_method": "hqq", "nbits": 4,
                                                                     "group_size": 64}}
    m = read(cfg)
    assert m.quantization.bits == 4 and not m.quantization.modelled
    assert m.approximate and "quantization_config (hqq)" in m.unmodelled


def test_a_model_type_the_reader_does_not_know_marks_the_model_approximate():
    """Qwen-1's intermediate_size counts both MLP halves (22,016 for an 11,008 MLP): read as Llama's, 12.0 B
    parameters for a 7.7 B model, with no word; an unknown type read as Llama, with none either."""
    base = {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
            "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 8192}
    assert not read({**base, "model_type": "llama"}).approximate
    for model_type in ("frobnicator", "qwen"):
        m = read({**base, "model_type": model_type})
        assert m.approximate and "model_type" in m.unmodelled
        assert any(w.startswith(f"model_type '{model_type}' is not one the reader knows: read as a llama-style "
                                "decoder") for w in m.warnings), m.warnings


def test_a_size_key_of_another_family_is_named_when_not_read():
    """kv_channels on a Llama config (ChatGLM's name for head_dim): head_dim was taken as hidden / heads, without a
    word."""
    base = {"model_type": "llama", "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32,
            "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
            "max_position_embeddings": 8192}
    m = read({**base, "kv_channels": 64})
    assert m.approximate and "kv_channels" in m.unmodelled
    assert any(w.startswith("kv_channels not read: the 'llama' reader takes its sizes from other keys") for w in
               m.warnings)


def test_qwen3_without_head_dim_takes_its_config_class_default():
    """transformers' Qwen3Config(head_dim=128): Qwen3-32B's is 128, not 5,120 / 64 = 80."""
    cfg = {"model_type": "qwen3", "hidden_size": 5120, "intermediate_size": 25600, "num_hidden_layers": 64,
           "num_attention_heads": 64, "num_key_value_heads": 8, "vocab_size": 151936,
           "max_position_embeddings": 40960}
    m = read(cfg)
    assert m.head_dim == 128 and m.kv_bytes_per_token(2) == 2 * 64 * 8 * 128 * 2  # 262,144 bytes
    assert "head_dim absent: 128 (the qwen3 config class default)" in m.assumptions


def test_an_interval_is_said_as_an_ordinal():
    from core.config_reader import _ordinal

    assert [_ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 103)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "103rd"]


def test_nemotron_3_nanos_shared_expert_is_counted():
    """Nemotron-H's MoE names its shared expert's width moe_shared_expert_intermediate_size: unread, 23 MoE layers ×
    2 × 2,688 × 3,712 = 458,981,376 parameters were missing.

    NVIDIA gives 31.6 B in all: the model card of https://huggingface.co/nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16,
    as reproduced at https://replicate.com/nvidia/nemotron-3-nano-30b-a3b/readme ("31.6 billion total parameters").
    The config is that card's config.json, the keys the reader uses."""
    cfg = {"architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "hidden_size": 2688,
           "num_hidden_layers": 52, "hybrid_override_pattern": "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
           "num_attention_heads": 32, "num_key_value_heads": 2, "head_dim": 128, "mamba_num_heads": 64,
           "mamba_head_dim": 64, "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4, "expand": 2,
           "intermediate_size": 1856, "moe_intermediate_size": 1856, "moe_shared_expert_intermediate_size": 3712,
           "n_routed_experts": 128, "num_experts_per_tok": 6, "vocab_size": 131072, "mlp_hidden_act": "relu2",
           "tie_word_embeddings": False, "max_position_embeddings": 262144, "torch_dtype": "bfloat16"}
    with_shared = read(cfg)
    without = read({k: v for k, v in cfg.items() if k != "moe_shared_expert_intermediate_size"})
    assert with_shared.moe.n_shared_experts == 1 and with_shared.moe.shared_intermediate == 3712
    assert cfg["hybrid_override_pattern"].count("E") == 23
    assert with_shared.n_params - without.n_params == 23 * 2 * 2688 * 3712 == 458_981_376
    assert with_shared.n_active_params - without.n_active_params == 458_981_376  # the shared expert runs always
    assert round(with_shared.n_params / 1e9, 1) == 31.6 and not with_shared.approximate


def test_a_layer_types_list_at_odds_with_full_attention_interval_is_read_and_said():
    """The list wins, as in transformers, but the disagreement was silent (an engineer's trial)."""
    with open("core/model_configs/qwen3-next-80b-a3b.json") as f:
        cfg = json.load(f)
    n = cfg["num_hidden_layers"]
    agree = read({**cfg, "layer_types": ["full_attention" if (i + 1) % 4 == 0 else "linear_attention"
                                         for i in range(n)], "full_attention_interval": 4})
    odd = read({**cfg, "layer_types": ["full_attention" if i % 2 == 0 else "linear_attention" for i in range(n)],
                "full_attention_interval": 4})
    said = "layer_types and full_attention_interval 4 disagree on which layers are full attention"
    assert not any(said in a for a in agree.assumptions)
    assert any(said in a for a in odd.assumptions)
    # the list, not the interval: 24 full-attention layers hold KV, not 12
    assert odd.kv_bytes_per_token(2) == 2 * agree.kv_bytes_per_token(2)
