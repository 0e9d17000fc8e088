"""Read a Hugging Face ``config.json`` into a :class:`core.models.ModelSpec`.

Every dialect in common use, not only Llama's:

* **Llama family** (Llama 1-4, Mistral, Mixtral, Qwen2/2.5/3, Qwen3-MoE,
  Qwen3-Next, Gemma 1-3n, DeepSeek-V2/V3, gpt-oss, Nemotron-H, Granite-4.0-H,
  Jamba): ``num_hidden_layers``, ``hidden_size``, ``num_attention_heads``,
  ``num_key_value_heads`` (absent or null = MHA), ``head_dim`` (absent =
  ``hidden_size / num_attention_heads``, except Gemma, whose default is 256),
  ``intermediate_size``, ``vocab_size``, ``tie_word_embeddings`` (absent =
  untied, except Gemma), ``attention_bias``, mixture-of-experts
  (``num_local_experts`` / ``num_experts`` / ``n_routed_experts``,
  ``num_experts_per_tok`` / ``experts_per_token``, ``moe_intermediate_size``,
  shared experts) and multi-head latent attention (``kv_lora_rank``, ...).
* **GPT-2** (``n_layer``, ``n_embd``, ``n_head``, ``n_inner``, ``n_positions``).
* **Falcon** (``n_layer``/``num_hidden_layers``, ``n_head``, ``multi_query``,
  ``new_decoder_architecture`` with ``num_kv_heads``, ``parallel_attn``, ``bias``).
* **ChatGLM 2/3** (``num_layers``, ``multi_query_group_num``, ``kv_channels``,
  ``ffn_hidden_size``, ``padded_vocab_size``, ``seq_length``).

The layer stack (:mod:`core.layers`) is read from every way configs mark it:
``layer_types`` (full / sliding / chunked / linear attention, mamba),
``hybrid_override_pattern`` (``M`` Mamba, ``*`` attention, ``-`` MLP, ``E``
MoE), ``layers_block_type``, ``attn_layer_period``/``attn_layer_offset``,
``full_attention_interval``, ``sliding_window`` (with ``use_sliding_window``,
``max_window_layers``, Gemma-2's alternation and Gemma-3's
``sliding_window_pattern``), ``attention_chunk_size`` with
``no_rope_layers``/``nope_layer_interval``, ``num_kv_shared_layers``, and for
the MLPs ``interleave_moe_layer_step``, ``moe_layer_freq``,
``mlp_only_layers``, ``decoder_sparse_step``, ``first_k_dense_replace``,
``expert_layer_period``/``expert_layer_offset`` and ``intermediate_size_mlp``.
Further layer kinds: sparse attention with an indexer (DeepSeek-V3.2:
``index_head_dim``, ``index_n_heads``, ``index_topk``), cross-attention
layers (Llama-3.2-Vision: ``cross_attention_layers``, the image's tokens from
``vision_config``), parallel hybrids (Falcon-H1: ``model_type`` falcon_h1,
attention and Mamba-2 in every block, ``mamba_d_ssm``) and lightning
attention by list (MiniMax-Text-01 / M1: ``attn_type_list``, 0 lightning,
1 softmax).

A multimodal config's language model under ``text_config`` is used.
``rope_scaling`` is reported; it extends the trained context only where the
config gives ``original_max_position_embeddings`` × ``factor`` beyond
``max_position_embeddings`` (Qwen's YaRN recipe).  ``quantization_config`` is
read per tensor group (:mod:`core.quantization`).

Nothing is silent: everything assumed for a missing field is listed in
``ModelSpec.assumptions``; every key the reader does not read and does not
know to be irrelevant to memory and FLOPs is named in ``ModelSpec.warnings``
(and in the assumptions) with what the numbers assume instead.  Anything
missing, out of its plausible range (:data:`LIMITS`), of the wrong type, or
contradictory raises one :class:`ConfigError` naming the fields.  Every size
is range-checked before any per-layer work, so reading costs at most
``O(MAX_LAYERS)`` whatever the numbers say.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from .layers import IndexerSpec, LayerKind, LayerStack, LinearAttentionSpec, MambaSpec, MLPKind
from .models import ConfigError, MLASpec, ModelSpec, MoESpec, Quantization
from .quantization import read_quantization

__all__ = ["LIMITS", "MAX_CONFIG_BYTES", "NAME_LIMIT", "UNNAMED", "ConfigError", "config_model_id", "config_name",
           "from_hf_config", "named_by_file", "parse_config_text", "read_config_file", "Quantization"]

#: Largest config text accepted (a real config.json is a few kB; long ``layer_types`` lists stay far below).
MAX_CONFIG_BYTES = 2_000_000
#: Deepest JSON nesting accepted (real configs nest 3-4 levels).
MAX_DEPTH = 32
#: Longest integer literal accepted, in digits (larger ones are refused by the field that holds them).
MAX_INT_DIGITS = 24

#: Plausible ranges of the sizes a config gives (inclusive).  Far beyond any published model,
#: small enough that no evaluation can blow up: L × widths stay well inside float64.
LIMITS = {
    "layers": (1, 2048),
    "hidden": (1, 131_072),
    "heads": (1, 4096),
    "head_dim": (1, 4096),
    "intermediate": (1, 1_048_576),
    "vocab": (1, 10_000_000),
    "experts": (1, 16_384),
    "window": (1, 1 << 30),
    "context": (1, 1 << 30),
    "rank": (1, 65_536),
    "state": (1, 65_536),
    "kernel": (1, 1024),
    "count": (0, 2048),
}

#: Field → range name.
FIELD_LIMITS = {
    "num_hidden_layers": "layers", "n_layer": "layers", "num_layers": "layers",
    "hidden_size": "hidden", "n_embd": "hidden",
    "num_attention_heads": "heads", "n_head": "heads", "num_key_value_heads": "heads", "num_kv_heads": "heads",
    "multi_query_group_num": "heads", "linear_num_key_heads": "heads", "linear_num_value_heads": "heads",
    "mamba_num_heads": "heads", "mamba_n_heads": "heads", "n_groups": "heads", "mamba_n_groups": "heads",
    "head_dim": "head_dim", "kv_channels": "head_dim", "attention_head_dim": "head_dim",
    "linear_key_head_dim": "head_dim", "linear_value_head_dim": "head_dim", "mamba_head_dim": "head_dim",
    "mamba_d_head": "head_dim", "qk_rope_head_dim": "head_dim", "qk_nope_head_dim": "head_dim",
    "v_head_dim": "head_dim",
    "intermediate_size": "intermediate", "moe_intermediate_size": "intermediate", "ffn_hidden_size": "intermediate",
    "n_inner": "intermediate", "shared_expert_intermediate_size": "intermediate",
    "moe_shared_expert_intermediate_size": "intermediate",
    "intermediate_size_mlp": "intermediate", "shared_intermediate_size": "intermediate",
    "vocab_size": "vocab", "padded_vocab_size": "vocab",
    "num_local_experts": "experts", "num_experts": "experts", "n_routed_experts": "experts",
    "num_experts_per_tok": "experts", "experts_per_token": "experts", "n_shared_experts": "count",
    "sliding_window": "window", "attention_chunk_size": "window",
    "max_position_embeddings": "context", "n_positions": "context", "n_ctx": "context", "seq_length": "context",
    "kv_lora_rank": "rank", "q_lora_rank": "rank", "time_step_rank": "rank",
    "ssm_state_size": "state", "mamba_d_state": "state",
    "conv_kernel": "kernel", "mamba_d_conv": "kernel", "linear_conv_kernel_dim": "kernel",
    "expand": "kernel", "mamba_expand": "kernel",
    "first_k_dense_replace": "count", "num_kv_shared_layers": "count", "max_window_layers": "count",
    "sliding_window_pattern": "layers", "interleave_moe_layer_step": "layers", "decoder_sparse_step": "layers",
    "moe_layer_freq": "layers", "full_attention_interval": "layers", "attn_layer_period": "layers",
    "attn_layer_offset": "count", "expert_layer_period": "layers", "expert_layer_offset": "count",
    "nope_layer_interval": "layers", "no_rope_layer_interval": "layers",
    "index_head_dim": "head_dim", "index_n_heads": "heads", "index_topk": "window", "mamba_d_ssm": "intermediate",
    "sliding_window_size": "window",
}

#: The kinds of FIELD_LIMITS whose keys set a layer's sizes: one given and not read changes what the numbers mean.
SHAPE_KINDS = frozenset({"hidden", "heads", "head_dim", "intermediate", "experts", "state", "rank"})
#: Size keys a config may carry that no layer the lab reads uses: Mamba-1's Δ rank, which Mamba-2 configs
#: (Nemotron-H) keep from their parent class.
UNUSED_SHAPE_KEYS = frozenset({"time_step_rank"})

GEMMA_TYPES = ("gemma", "gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text")

#: Defaults the transformers config classes apply when a published config leaves
#: a field out (Gemma-3's text_config, for one, omits its vocabulary size).
#: Source: transformers, models/gemma3/configuration_gemma3.py, Gemma3TextConfig.__init__.
MODEL_TYPE_DEFAULTS = {
    "gemma3_text": {"vocab_size": 262_208, "head_dim": 256, "max_position_embeddings": 131_072,
                    "sliding_window_pattern": 6},
    # transformers' configuration_qwen3.py: Qwen3Config(head_dim=128), not hidden / heads (Qwen3-32B: 5,120 / 64 =
    # 80); Qwen3MoeConfig's default is None, hidden / heads.
    "qwen3": {"head_dim": 128},
}
QK_NORM_TYPES = ("qwen3", "qwen3_moe", "gemma3", "gemma3_text", "qwen3_next", "qwen3_5_moe_text", "qwen3_5_moe",
                 "qwen3_5_text", "gemma3n", "gemma3n_text")
#: Model types whose linear-attention layers are MiniMax's lightning attention (one h·d·d state, no conv).
LIGHTNING_TYPES = ("minimax", "minimax_text_01", "minimax_m1", "minimaxtext01", "minimaxm1")
#: Model types whose every block runs attention and Mamba-2 side by side (parallel hybrids).
PARALLEL_HYBRID_TYPES = ("falcon_h1",)
#: Model types whose text model embeds 8 image-token rows beside the vocabulary (Llama-3.2-Vision:
#: transformers models/mllama ``MllamaTextModel.embed_tokens = nn.Embedding(vocab_size + 8, h)``).
MLLAMA_TYPES = ("mllama", "mllama_text_model")

#: Model types whose MoE shared expert is scaled by a sigmoid gate h → 1.
SHARED_GATE_TYPES = ("qwen2_moe", "qwen3_next", "qwen3_5_moe", "qwen3_5_moe_text")

#: The ``model_type`` values the reader was written and checked for (its tests and the shipped configs).  Another is
#: read as the Llama-style decoder its keys name, and the result is marked approximate: a family whose keys mean
#: something else is misread without a word (Qwen-1's ``intermediate_size`` counts both MLP halves: 56 % too many
#: parameters; an engineer's trial).
READER_TYPES = frozenset({
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen3_next", "qwen3_5_text",
    "qwen3_5_moe", "qwen3_5_moe_text", "gpt_oss", "deepseek_v2", "deepseek_v3", "deepseek_v32", "llama4", "llama4_text",
    "nemotron_h", "jamba", "granitemoehybrid", "gpt2", "chatglm", "falcon", "refinedweb", "refinedwebmodel",
    *GEMMA_TYPES, *LIGHTNING_TYPES, *PARALLEL_HYBRID_TYPES, *MLLAMA_TYPES})

#: Keys that do not change memory traffic or FLOPs (ids, training settings,
#: numerics, rope details, names); every other key not read is named in a warning.
IRRELEVANT_KEYS = frozenset("""
architectures auto_map bos_token_id eos_token_id pad_token_id sep_token_id decoder_start_token_id unk_token_id
torch_dtype dtype transformers_version _name_or_path model_type use_cache initializer_range initializer_factor
rms_norm_eps layer_norm_eps layer_norm_epsilon norm_eps epsilon rope_theta rope_scaling rope_parameters
rope_local_base_freq partial_rotary_factor rotary_pct rotary_emb_base rope_ratio rope_type rope_interleaved
attention_dropout hidden_dropout embd_pdrop resid_pdrop attn_pdrop summary_type summary_use_proj
summary_activation summary_proj_to_labels summary_first_dropout hidden_dropout_prob attention_probs_dropout_prob
dropout activation_dropout ffn_dropout output_attentions output_hidden_states output_router_logits
router_aux_loss_coef router_z_loss_coef router_jitter_noise aux_loss_alpha seq_aux norm_topk_prob
routed_scaling_factor scoring_func topk_method n_group topk_group moe_router_topk_scaling_factor
hidden_act hidden_activation activation_function mlp_hidden_act mamba_hidden_act swiglu_limit
use_sliding_window attn_logit_softcapping final_logit_softcapping query_pre_attn_scalar attn_scale
attn_temperature_tuning floor_scale use_qk_norm qk_layernorm pretraining_tp task_specific_params
scale_attn_weights scale_attn_by_inverse_layer_idx reorder_and_upcast_attn tokenizer_class
image_token_index image_token_id video_token_id vision_token_id boi_token_index eoi_token_index vision_start_token_id
vision_end_token_id audio_token_id mm_tokens_per_image vision_feature_layer vision_feature_select_strategy
text_config vision_config audio_config quantization_config num_logits_to_keep use_mamba_kernels
residual_in_fp32 rescale_prenorm_residual time_step_min time_step_max time_step_floor time_step_limit
mamba_chunk_size chunk_size ssm_chunk_size mamba_dt_rank mamba_proj_bias mamba_conv_bias use_conv_bias use_bias
mlp_bias attention_multiplier embedding_multiplier residual_multiplier logits_scaling attention_bias
initial_context_length ep_size num_nextn_predict_layers max_window_layers apply_residual_connection_post_layernorm
alibi multi_query new_decoder_architecture parallel_attn bias use_cache_quantization rope_percent
original_max_position_embeddings attention_softmax_in_fp32 fp32_residual_connection post_layer_norm
add_bias_linear add_qkv_bias multi_query_attention layernorm_epsilon rmsnorm apply_query_key_layer_scaling
bias_dropout_fusion use_mrope mrope_section vocab_size_per_layer_input sliding_window_pattern
layer_types hybrid_override_pattern layers_block_type full_attention_interval attention_chunk_size
no_rope_layers nope_layer_interval no_rope_layer_interval num_kv_shared_layers interleave_moe_layer_step
moe_layer_freq mlp_only_layers decoder_sparse_step first_k_dense_replace expert_layer_period
expert_layer_offset attn_layer_period attn_layer_offset intermediate_size_mlp mamba_ssm_dtype
attn_output_gate cache_implementation is_encoder_decoder tie_encoder_decoder position_embedding_type
mamba_d_conv mamba_d_state mamba_expand mamba_n_heads mamba_d_head mamba_n_groups expand conv_kernel n_groups
ssm_state_size time_step_rank mamba_num_heads mamba_head_dim attention_head_dim linear_conv_kernel_dim
linear_key_head_dim linear_value_head_dim linear_num_key_heads linear_num_value_heads
shared_intermediate_size shared_expert_intermediate_size n_shared_experts moe_intermediate_size
num_experts num_local_experts n_routed_experts num_experts_per_tok experts_per_token
kv_lora_rank q_lora_rank qk_rope_head_dim qk_nope_head_dim v_head_dim sliding_window
max_position_embeddings n_positions n_ctx seq_length vocab_size padded_vocab_size hidden_size n_embd
num_hidden_layers n_layer num_layers num_attention_heads n_head num_key_value_heads num_kv_heads
multi_query_group_num head_dim kv_channels intermediate_size ffn_hidden_size n_inner tie_word_embeddings
hidden_size_per_layer_input
topk_method index_head_dim index_n_heads index_topk cross_attention_layers attn_type_list mamba_d_ssm
mamba_rms_norm projectors_bias mamba_norm_before_gate attn_layer_indices sliding_window_size
attention_in_multiplier attention_out_multiplier key_multiplier lm_head_multiplier mlp_multipliers ssm_multipliers
ssm_in_multiplier ssm_out_multiplier postnorm layernorm_full_attention_alpha layernorm_full_attention_beta
layernorm_linear_attention_alpha layernorm_linear_attention_beta layernorm_mlp_alpha layernorm_mlp_beta
full_attn_alpha_factor full_attn_beta_factor linear_attn_alpha_factor linear_attn_beta_factor mlp_alpha_factor
mlp_beta_factor rotary_dim shared_moe_mode block_size for_llm_compressor
init_method init_std normalization_function gradient_checkpointing return_dict use_return_dict torchscript
""".split())

#: Keys known to change the architecture in ways not modelled: what the numbers assume instead.
NOT_MODELLED = {
    "mtp_num_hidden_layers": "multi-token-prediction layers are not counted (held only when speculating with them)",
    "num_nextn_predict_layers": "multi-token-prediction layers are not counted",
    "altup_num_inputs": "Gemma-3n AltUp streams are not counted (one residual stream assumed)",
    "laurel_rank": "Gemma-3n LAuReL blocks are not counted",
    "activation_sparsity_pattern": "activation sparsity is ignored: every MLP weight is read",
    "hidden_size_per_layer_input": "Gemma-3n per-layer input embeddings are not counted",
    "num_nextn_predict_layer": "multi-token-prediction layers are not counted",
}


class _TooLong(str):
    """An integer literal with more digits than :data:`MAX_INT_DIGITS` (refused where a number is read)."""


def _parse_int(text: str):
    digits = text.lstrip("-")
    return _TooLong(text[:MAX_INT_DIGITS] + "…") if len(digits) > MAX_INT_DIGITS else int(text)


def _once_each(pairs: list) -> dict:
    """A JSON object's members, refusing a name given twice with two values (RFC 8259 §4: names SHOULD be unique;
    Python's and transformers' readers keep the last silently, so a config saying both 4,096 and 8,192 was read as
    whichever came last).  The same value twice is one value."""
    out: dict = {}
    for key, value in pairs:
        if key in out and repr(out[key]) != repr(value) and not _same_number(out[key], value):
            raise ConfigError(f"{_show(key)} is given twice, as {_show(out[key])} and as {_show(value)}: a config "
                              "names each field once; keep the one the model has")
        out[key] = value
    return out


def _same_number(a, b) -> bool:
    """Whether two JSON values are one value written two ways: a number (4096 and 4096.0), or an object whose members
    come in another order (JSON's objects are unordered).  ``true`` is not 1."""
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
    objects = isinstance(a, dict) and isinstance(b, dict)
    return (numbers or objects) and a == b


def _depth_problem(value, limit: int = MAX_DEPTH) -> str | None:
    """The path of the first value nested deeper than ``limit``, or None (iterative: no recursion)."""
    stack = [(value, "", 0)]
    while stack:
        v, path, depth = stack.pop()
        if depth > limit:
            return path or "(top level)"
        if isinstance(v, dict):
            stack.extend((x, f"{path}.{k}" if path else str(k), depth + 1) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((x, f"{path}[{i}]", depth + 1) for i, x in enumerate(v))
    return None


def parse_config_text(text) -> dict:
    """Parse config text, refusing what cannot be a config.

    Args:
        text: ``str``, ``bytes`` or a binary file object (read up to the limit plus one byte).

    Raises:
        ConfigError: larger than :data:`MAX_CONFIG_BYTES`, not UTF-8, not JSON, nested
            deeper than :data:`MAX_DEPTH`, not a JSON object, or a field given twice with two values; the
            message says which and where.
    """
    limit = MAX_CONFIG_BYTES
    if hasattr(text, "read"):
        text = text.read(limit + 1)
    if isinstance(text, str) and len(text) > limit:
        raise ConfigError(f"config is over {limit / 1e6:,.0f} MB; a config.json is a few kB (limit 2 MB)")
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if len(raw) > limit:
        raise ConfigError(f"config is over {limit / 1e6:,.0f} MB; a config.json is a few kB (limit 2 MB)")
    if not isinstance(text, str):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"config is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    # A byte-order mark before the JSON (Windows editors save one) is not part of it (RFC 8259 §8.1 lets a reader
    # ignore it); json refused it with Python's own advice, "decode using utf-8-sig" (an engineer's trial).
    text = text.removeprefix("\ufeff")
    try:
        config = json.loads(text, parse_int=_parse_int, object_pairs_hook=_once_each)
    except ConfigError:
        raise
    except json.JSONDecodeError as exc:
        raise ConfigError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise ConfigError(f"config nests deeper than {MAX_DEPTH} levels") from None
    except (ValueError, UnicodeError) as exc:
        raise ConfigError(f"invalid JSON: {str(exc)[:80]}") from None
    if not isinstance(config, dict):
        raise ConfigError("config must be a JSON object")
    where = _depth_problem(config)
    if where:
        raise ConfigError(f"config nests deeper than {MAX_DEPTH} levels (at {where[:80]})")
    return config


#: What a 32-bit checkpoint's note says (``torch_dtype`` float32): the report's table of the checkpoint as stored
#: says it beside its 2-byte rows.
COUNTED_AT_16_BITS = 'the weights "as stored" are counted at 16 bits'

#: The longest model name a config gives (characters): a chart title's first line holds it and the GPU's.
NAME_LIMIT = 60

#: The name of a config that names nothing: pasted text without ``_name_or_path``, ``architectures`` or
#: ``model_type`` (:func:`config_name`).
UNNAMED = "Pasted config"


def _last_part(text: str) -> str:
    r"""The last part of a path or a repository id (``/`` and ``\`` both separate: a Windows path)."""
    return text.replace("\\", "/").rstrip("/").split("/")[-1]


def _file_part(file_name: str) -> str:
    """What a file's name says of its model: its last part without ``.json``; ``""`` for ``config.json`` (or
    ``config``), the name every Hugging Face download has, which names nothing."""
    part = _last_part(file_name)
    stem = part[:-5] if part.lower().endswith(".json") else part
    return "" if stem.strip().lower() == "config" else stem


def printable_name(text: str, limit: int | None = None) -> str:
    r"""``text`` as a name is shown: each run of whitespace one space, and every other character a terminal or a
    page would not print (ESC, BEL, a C1 control, a bidi override) written as its escape, ``\x1b``, as the CLI
    writes them (:func:`core.cli.one_line`); at most ``limit`` characters (None: all), cut between whole
    characters as shown, so that an escape is never cut short (``\u20``) and no space ends it.

    >>> printable_name("evil\u202e  name\x1b", limit=10)
    'evil\\u202e'
    """
    shown = [[c if c.isprintable() else repr(c)[1:-1] for c in word] for word in text.split()]
    pieces = [piece for i, word in enumerate(shown) for piece in ([" "] if i else []) + word]
    if limit is not None:
        kept, length = [], 0
        for piece in pieces:
            if length + len(piece) > limit:
                break
            kept.append(piece)
            length += len(piece)
        pieces = kept
    return "".join(pieces).rstrip()


def config_name(config: dict, file_name: str = "") -> str:
    r"""The name of the model a config describes: one rule for the lab, ``python -m core … --config`` and the
    offline page, so the same config.json has the same name (and :func:`config_model_id`) in all three.

    The first of these that gives a name, most telling first:

    1. the last part of ``_name_or_path`` (``"meta-llama/Llama-3.1-8B"`` → ``"Llama-3.1-8B"``): the name the
       model's author or a Hugging Face download gave it;
    2. the file's name without ``.json`` (``"half-llama.json"`` → ``"half-llama"``): the reader named the file,
       unless it is ``config.json``, the name of every download, which names nothing;
    3. ``architectures[0]`` (``"MistralForCausalLM"``): what a nameless config still says of its model;
    4. ``model_type`` (``"mistral"``);
    5. :data:`UNNAMED`, ``"Pasted config"``.

    A name is one line of printable text: whitespace runs become one space and a control character (ESC, BEL,
    a bidi override: a hostile file's name or field) is written as its escape (``\x1b``), so a terminal
    shows it and never runs it; then it is cut to :data:`NAME_LIMIT` characters.  A candidate left empty (a
    ``_name_or_path`` of ``"/"``, a field that is not text) gives way to the next.

    Args:
        config: the parsed config (a dict; anything else has only the file's name to go by).
        file_name: the file's name (a path is reduced to its last part), ``""`` for pasted text.

    Returns:
        the name, 1 to :data:`NAME_LIMIT` characters, none of them a control character.

    >>> config_name({"_name_or_path": "meta-llama/Llama-3.1-8B"}, "some/dir/config.json")
    'Llama-3.1-8B'
    >>> config_name({}, "models/half-llama.json")
    'half-llama'
    >>> config_name({"architectures": ["MistralForCausalLM"], "model_type": "mistral"}, "config.json")
    'MistralForCausalLM'
    >>> config_name({"model_type": "mistral"}), config_name({})
    ('mistral', 'Pasted config')
    >>> config_name({}, "evil\x1b[2J.json")  # ESC [2J: a terminal would clear its screen
    'evil\\x1b[2J'
    """
    config = config if isinstance(config, dict) else {}
    given, architectures, model_type = (config.get(k) for k in ("_name_or_path", "architectures", "model_type"))
    candidates = (
        _last_part(given) if isinstance(given, str) else "",
        _file_part(file_name),
        architectures[0] if isinstance(architectures, list) and architectures else "",
        model_type,
    )
    for candidate in candidates:
        name = printable_name(candidate, NAME_LIMIT) if isinstance(candidate, str) else ""
        if name:
            return name
    return UNNAMED


def config_model_id(name: str) -> str:
    r"""The model id of a config named ``name`` (:func:`config_name`): ``config-`` and the name's letters and
    digits, lower case, every other character a hyphen, at most 40 after the prefix (``"Llama-3.1-8B"`` →
    ``"config-llama-3-1-8b"``).  The prefix keeps it clear of the catalogue's ids, and links name the model by
    it (``model=``, a pin's model), so the lab and the CLI derive it alike.

    >>> config_model_id("Llama-3.1-8B"), config_model_id("Pasted config"), config_model_id("\\x1b")
    ('config-llama-3-1-8b', 'config-pasted-config', 'config-x1b')
    """
    slug = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")[:40]
    return f"config-{slug or 'model'}"


def named_by_file(config: dict, file_name: str) -> dict:
    """``config`` carrying the name its file gave it: when ``file_name`` is what names the model
    (:func:`config_name`'s step 2), a copy with the file's part as ``_name_or_path``, so the text alone (in a
    link, a scenario file, the offline page's link to the lab) is read as the same model; else ``config``."""
    if not isinstance(config, dict) or config_name(config, file_name) == config_name(config):
        return config
    return {**config, "_name_or_path": _file_part(file_name)}


def read_config_file(path) -> dict:
    """Read and parse a config file, reading at most :data:`MAX_CONFIG_BYTES` + 1 bytes.

    Raises:
        ConfigError: as :func:`parse_config_text`.
        OSError: the file cannot be opened or read.
    """
    with Path(path).open("rb") as f:
        return parse_config_text(f.read(MAX_CONFIG_BYTES + 1))


def _show(value) -> str:
    text = repr(value) if not isinstance(value, _TooLong) else f"a {MAX_INT_DIGITS}+-digit number"
    return text if len(text) <= 40 else text[:37] + "..."


class _Reader:
    """Collects values, problems and assumptions while reading one config."""

    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.problems: list[str] = []
        self.assumptions: list[str] = []
        self.read: set[str] = set()
        self.unmodelled: list[str] = []  # "key: what the numbers assume instead", for what is read but not modelled

    def get(self, *keys, default=None):
        """The first of ``keys`` present with a non-null value."""
        for key in keys:
            self.read.add(key)
            if self.cfg.get(key) is not None:
                return self.cfg[key]
        return default

    def _check(self, name: str, value, low: int, high: int) -> int | None:
        ok = ((isinstance(value, int) and not isinstance(value, bool))
              or (isinstance(value, float) and math.isfinite(value) and value.is_integer()))
        if not ok or not low <= value <= high:
            kind = "a positive integer" if low >= 1 else "a non-negative integer"
            self.problems.append(f"{name!r} must be {kind}, got {_show(value)} (plausible: {low:,}..{high:,})")
            return None
        return int(value)

    def positive_int(self, *keys, required: bool = True, default: int | None = None) -> int:
        """A positive integer in its plausible range under the first present key; problems are recorded."""
        self.read.update(keys)
        name = next((k for k in keys if self.cfg.get(k) is not None), None)
        if name is None:
            if required:
                self.problems.append(f"missing {' or '.join(repr(k) for k in keys)}")
            return default or 0
        low, high = LIMITS[FIELD_LIMITS.get(name, "intermediate")]
        value = self._check(name, self.cfg[name], max(low, 1), high)
        return 0 if value is None else value

    def count(self, key: str, default: int = 0, low: int = 0, high: int | None = None) -> int:
        """A non-negative integer (a count or an index) under ``key``, or ``default`` if absent."""
        self.read.add(key)
        value = self.cfg.get(key)
        if value is None:
            return default
        rng = LIMITS[FIELD_LIMITS.get(key, "count")]
        checked = self._check(key, value, low, rng[1] if high is None else high)
        return default if checked is None else checked

    def flag(self, key: str, default: bool = False) -> bool:
        """A boolean under ``key`` (null or absent: ``default``)."""
        self.read.add(key)
        value = self.cfg.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            self.problems.append(f"{key!r} must be true or false, got {_show(value)}")
            return default
        return value

    def int_list(self, key: str, length: int | None = None, high: int = 1 << 20) -> list[int] | None:
        """A list of non-negative integers under ``key`` (optionally of ``length``), or None."""
        self.read.add(key)
        value = self.cfg.get(key)
        if value is None:
            return None
        if (not isinstance(value, list) or (length is not None and len(value) != length)
                or not all(isinstance(v, int) and not isinstance(v, (bool, _TooLong)) and 0 <= v <= high
                           for v in value)):
            size = f" of {length} " if length is not None else " of "
            self.problems.append(f"{key!r} must be a list{size}integers in 0..{high:,}")
            return None
        return value


def _language_model(config: dict) -> tuple[dict, list[str], set[str]]:
    if "text_config" in config and isinstance(config["text_config"], dict) and not any(
        k in config for k in ("num_hidden_layers", "n_layer", "num_layers")
    ):
        text = dict(config["text_config"])
        text.setdefault("model_type", config.get("model_type", ""))
        for key in ("tie_word_embeddings", "quantization_config"):
            if key in config and key not in text:
                text[key] = config[key]
        notes = [f"multimodal config ({_show(config.get('model_type', '?'))}): language model read from "
                 "text_config; the vision/audio towers are not counted"]
        if isinstance(config.get("vision_config"), dict):
            text["__vision_config"] = config["vision_config"]
        return text, notes, set(config)
    # The language model at the top level: a tower beside it, or a text_config it did not need, is still said (an
    # engineer's trial: both passed in silence).  An empty text_config holds nothing left unread.
    return config, [], {k for k in config if k in TOWERS or (k == "text_config" and isinstance(config[k], dict)
                                                            and config[k])}


#: A multimodal config's towers, whose weights the lab does not count.
TOWERS = ("vision_config", "audio_config", "speech_config")


def _dialect(cfg: dict) -> str:
    model_type = str(cfg.get("model_type", "")).lower()
    if model_type in ("gpt2",) or ("n_embd" in cfg and "n_layer" in cfg):
        return "gpt2"
    if model_type == "chatglm" or ("ffn_hidden_size" in cfg and "num_layers" in cfg):
        return "chatglm"
    if model_type in ("falcon", "refinedweb", "refinedwebmodel"):
        return "falcon"
    return "llama"


def _ordinal(n: int) -> str:
    """``2nd``, ``3rd``, ``4th``, ``11th``, ``21st``: "every 2th layer" read as a typo (a trial).

    >>> [_ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 103)]
    ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '103rd']
    """
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _dtype_bytes(value, default: float) -> float:
    return {"float32": 4.0, "fp32": 4.0, "float": 4.0, "bfloat16": 2.0, "float16": 2.0, "half": 2.0,
            "fp16": 2.0, "bf16": 2.0}.get(str(value).lower(), default) if value is not None else default


def from_hf_config(
    config: dict,
    *,
    model_id: str,
    name: str,
    config_url: str = "",
    official_parameters: int | None = None,
    official_active_parameters: int | None = None,
) -> ModelSpec:
    """A :class:`ModelSpec` from a Hugging Face ``config.json`` (as a dict).

    Raises:
        ConfigError: missing, out-of-range, mistyped or contradictory fields, all named in one message.
    """
    if not isinstance(config, dict):
        raise ConfigError("config must be a JSON object")
    where = _depth_problem(config)
    if where:
        raise ConfigError(f"config nests deeper than {MAX_DEPTH} levels (at {where[:80]})")
    if "text_config" in config and config["text_config"] is not None and not isinstance(config["text_config"], dict):
        raise ConfigError(f"cannot read config: 'text_config' must be an object, got {_show(config['text_config'])}")
    cfg, notes, outer = _language_model(config)
    defaults = MODEL_TYPE_DEFAULTS.get(str(cfg.get("model_type", "")).lower(), {})
    for key, value in defaults.items():
        if cfg.get(key) is None:
            cfg = {**cfg, key: value}
            notes.append(f"{key} absent: {value} (the {cfg['model_type']} config class default)")
    dialect = _dialect(cfg)
    r = _Reader(cfg)
    r.assumptions.extend(notes)
    try:
        fields = {"gpt2": _gpt2, "chatglm": _chatglm, "falcon": _falcon, "llama": _llama}[dialect](r)
    except _Refused:
        fields = None
    if not r.problems and fields:
        heads, kv = fields["n_heads"], fields["n_kv_heads"]
        if kv > heads or heads % kv:
            r.problems.append(f"num_attention_heads {heads} is not a multiple of num_key_value_heads {kv}")
    quant = read_quantization(cfg.get("quantization_config"), hidden=(fields or {}).get("hidden_size", 1),
                              problems=r.problems, notes=r.assumptions)
    if r.problems:
        raise ConfigError("cannot read config: " + "; ".join(dict.fromkeys(r.problems)))
    rope = cfg.get("rope_scaling")
    if isinstance(rope, dict):
        r.assumptions.append(_rope_context(rope, cfg, fields))
    stored = cfg.get("torch_dtype") or cfg.get("dtype")
    if quant is None and _dtype_bytes(stored, 2.0) == 4.0:  # an engineer's trial: read as 16-bit without a word
        r.assumptions.append(f"torch_dtype {_show(stored)}: {COUNTED_AT_16_BITS}, as "
                             "engines serve a 32-bit checkpoint (vLLM's dtype \"auto\" loads FP32 weights as FP16); "
                             "its files hold twice those bytes")
    warnings, unmodelled = _unread(cfg, r, outer)
    if quant is not None and not quant.modelled:  # counted at its bits alone: no scales, no format's layout
        unmodelled += (f"quantization_config ({quant.method})",)
    model_type = str(cfg.get("model_type") or "").strip().lower()
    if model_type and model_type not in READER_TYPES:
        warnings += (f"model_type {_show(cfg.get('model_type'))} is not one the reader knows: read as a "
                     f"{dialect}-style decoder from the keys it names; a family whose keys mean something else is "
                     "misread",)
        unmodelled += ("model_type",)
    return ModelSpec(
        id=model_id,
        name=name,
        dialect=dialect,
        quantization=quant,
        config_url=config_url,
        official_parameters=official_parameters,
        official_active_parameters=official_active_parameters,
        assumptions=tuple(r.assumptions) + warnings,
        warnings=warnings,
        unmodelled=unmodelled,
        **fields,
    )


def _rope_context(rope: dict, cfg: dict, fields: dict) -> str:
    """The trained context under ``rope_scaling`` (``fields["max_context"]`` raised where the config says more), and
    the assumption that says how it was read.

    Configs write the extended length two ways: Llama-3.1 and DeepSeek-V3 put it in ``max_position_embeddings``
    (131,072 = 8,192 × 16 … their ``original_max_position_embeddings`` × factor is no more); Qwen's YaRN recipe keeps
    the original there and gives ``original_max_position_embeddings`` × ``factor`` (32,768 × 4 = 131,072).  The
    larger is the trained context.  Without ``original_max_position_embeddings`` the two cannot be told apart, and
    ``max_position_embeddings`` is taken as given.
    """
    # transformers re-saves Qwen2-VL's {"type": "mrope"} with "rope_type": "default" beside it: the other names it;
    # a rope_scaling that names no type is said without one (a trial read "rope_scaling '?'")
    names = [v for v in (rope.get("rope_type"), rope.get("type")) if v not in (None, "")]
    specific = [v for v in names if v != "default"]
    label = f"rope_scaling {_show((specific or names)[0])}" if names else "rope_scaling"
    factor, original = rope.get("factor"), rope.get("original_max_position_embeddings",
                                                    cfg.get("original_max_position_embeddings"))
    given = fields.get("max_context") or 0
    number = [isinstance(v, (int, float)) and not isinstance(v, bool) and 0 < v < 2**40 for v in (factor, original)]
    extended = int(original * factor) if all(number) else 0
    if original is None or not 0 < extended < 2**40:
        why = ("without original_max_position_embeddings" if original is None else
               f"(original_max_position_embeddings {_show(original)}) not two positive numbers of a context's size")
        if factor is None:  # Qwen2-VL's "mrope" sets how positions split, not a longer context
            return f"{label} gives no factor: the trained context is max_position_embeddings as given ({given:,})"
        return (f"{label} (factor {_show(factor)}) {why}: the trained "
                f"context is max_position_embeddings as given ({given:,}), not multiplied by the factor (Llama-3.1 "
                "and DeepSeek-V3 write the extended length there)")
    if extended > given:
        fields["max_context"] = extended
        return (f"{label}: the trained context is original_max_position_embeddings × factor = "
                f"{int(original):,} × {factor:g} = {extended:,} (max_position_embeddings {given:,} is the original's)")
    return (f"{label} (original {int(original):,} × factor {factor:g} = {extended:,}): the trained "
            f"context is max_position_embeddings as given, {given:,}, which already extends it")


def _unread(cfg: dict, r: _Reader, outer: set[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Warnings for architecture keys not modelled and for keys neither read nor known to be irrelevant, and the
    names of those keys (what makes a result approximate: :attr:`core.models.ModelSpec.unmodelled`)."""
    out, names = [], []
    for key, what in NOT_MODELLED.items():
        value = cfg.get(key)
        if value not in (None, 0, False, [], {}):
            out.append(f"{key} not modelled: {what}")
            names.append(key)
    # A size key another family reads, given here and not read by this one (``kv_channels`` on a Llama config: its
    # head_dim was taken as hidden / heads, without a word; an engineer's trial).
    shapes = sorted(k for k, kind in FIELD_LIMITS.items() if kind in SHAPE_KINDS and cfg.get(k) not in (None, 0, [])
                    and k not in r.read and k not in UNUSED_SHAPE_KEYS)
    for key in shapes:
        out.append(f"{key} not read: the {_show(cfg.get('model_type', '?'))} reader takes its sizes from other keys "
                   "and the numbers assume this one changes none of them")
        names.append(key)
    unknown = sorted(k for k in cfg if isinstance(k, str) and k not in IRRELEVANT_KEYS and k not in NOT_MODELLED
                     and k not in r.read and not k.startswith(("_", "id2label", "label2id"))
                     and k not in ("id2label", "label2id", "num_labels", "problem_type", "finetuning_task",
                                   "return_dict", "prefix", "chunk_size_feed_forward", "torchscript", "tf_legacy_loss",
                                   "use_bfloat16", "tie_encoder_decoder", "add_cross_attention", "is_decoder"))
    if unknown:
        shown = ", ".join(_show(k)[1:-1] for k in unknown[:12]) + (f" and {len(unknown) - 12} more"
                                                                   if len(unknown) > 12 else "")
        out.append(f"keys not read: {shown}: the numbers assume they do not change the layers, their sizes or "
                   "what the cache holds")
        names += [_show(k)[1:-1] for k in unknown]
    if "text_config" in outer and "text_config" in cfg:  # read at the top level, not from its text_config
        out.append("text_config not read: the top level gives the layers (num_hidden_layers) and was read as the "
                   "language model; where the two differ, the numbers are the top level's")
        names.append("text_config (not read)")
    extra = sorted(k for k in outer if k.endswith("_config") and k not in ("text_config", "quantization_config"))
    if extra:
        out.append(f"{', '.join(_show(k)[1:-1] for k in extra[:6])} not counted: the weights and FLOPs are the "
                   "language model's only")
        names += [_show(k)[1:-1] + " (weights not counted)" for k in extra]
    for key in r.unmodelled:
        out.append(key)
        names.append(key.split(":")[0])
    return tuple(out), tuple(dict.fromkeys(names))


class _Refused(Exception):
    """Internal: stop reading after a problem that makes the rest meaningless."""


def _mixers(r: _Reader, n_layers: int) -> list[str]:
    """Per layer: ``full``, ``sliding``, ``chunked``, ``linear``, ``mamba``, ``mlp`` or ``moe`` (pattern letters)."""
    cfg = r.cfg
    types = r.get("layer_types")
    pattern = r.get("hybrid_override_pattern")
    blocks = r.get("layers_block_type")
    if types is not None:
        names = {"full_attention": "full", "attention": "full", "global_attention": "full",
                 "sliding_attention": "sliding", "local_attention": "sliding", "chunked_attention": "chunked",
                 "linear_attention": "linear", "mamba": "mamba", "mamba2": "mamba"}
        if not isinstance(types, list) or len(types) != n_layers or not all(isinstance(t, str) for t in types):
            r.problems.append(f"'layer_types' must be a list of {n_layers} layer-type names "
                              f"('num_hidden_layers' is {n_layers})")
            raise _Refused
        bad = sorted({t for t in types if t not in names})
        if bad:
            r.problems.append(f"'layer_types' has kinds this lab cannot model: {', '.join(_show(b) for b in bad[:5])} "
                              f"(accepted: {', '.join(names)})")
            raise _Refused
        mixers = [names[t] for t in types]
        # Both given and at odds: the list wins, as in transformers (Qwen3-Next's config derives layer_types from the
        # interval only when the list is absent); said, not silently (an engineer's trial).
        interval = cfg.get("full_attention_interval")
        if isinstance(interval, int) and not isinstance(interval, bool) and interval > 0 and \
                [m == "full" for m in mixers] != [(i + 1) % interval == 0 for i in range(n_layers)]:
            r.assumptions.append(f"layer_types and full_attention_interval {interval} disagree on which layers are "
                                 "full attention: layer_types is read, as transformers reads it")
        return mixers
    if pattern is not None:
        letters = {"M": "mamba", "*": "full", "-": "mlp", "E": "moe"}
        if not isinstance(pattern, str) or len(pattern) != n_layers or set(pattern) - set(letters):
            r.problems.append(f"'hybrid_override_pattern' must be {n_layers} letters of M, *, -, E "
                              f"('num_hidden_layers' is {n_layers})")
            raise _Refused
        return [letters[c] for c in pattern]
    if blocks is not None:
        names = {"mamba": "mamba", "attention": "full", "linear_attention": "linear"}
        if not isinstance(blocks, list) or len(blocks) != n_layers or not all(b in names for b in blocks):
            r.problems.append(f"'layers_block_type' must be a list of {n_layers} of mamba, attention "
                              f"('num_hidden_layers' is {n_layers})")
            raise _Refused
        return [names[b] for b in blocks]
    if cfg.get("attn_type_list") is not None:  # MiniMax: 0 lightning (linear) attention, 1 softmax attention
        flags = r.int_list("attn_type_list", length=n_layers, high=1)
        if flags is None:
            raise _Refused
        return ["full" if f else "linear" for f in flags]
    if cfg.get("attn_layer_period") is not None:
        period = r.count("attn_layer_period", 1, low=1)
        offset = r.count("attn_layer_offset", 0, high=period - 1)
        return ["full" if i % period == offset else "mamba" for i in range(n_layers)]
    if cfg.get("full_attention_interval") is not None:
        interval = r.count("full_attention_interval", 1, low=1)
        r.assumptions.append(f"no layer_types: every {_ordinal(interval)} layer full attention, the others linear "
                             "attention (full_attention_interval)")
        return ["full" if (i + 1) % interval == 0 else "linear" for i in range(n_layers)]
    return ["full"] * n_layers


def _windows(r: _Reader, mixers: list[str]) -> tuple[list[int | None], list[int | None]]:
    """Per layer (window, chunk) for attention layers."""
    model_type, n = str(r.cfg.get("model_type", "")).lower(), len(mixers)
    window = r.positive_int("sliding_window", "sliding_window_size", required=False) or None
    windows: list[int | None] = [None] * n
    if "sliding" in mixers:
        if not window:
            if r.get("sliding_window") is None and r.get("sliding_window_size") is None:  # given but bad: said
                r.problems.append("'layer_types' names sliding_attention layers but 'sliding_window' is not given")
            raise _Refused
        windows = [window if m == "sliding" else None for m in mixers]
    elif r.get("layer_types") is not None or r.get("hybrid_override_pattern") is not None:
        pass  # the explicit list has no sliding layers: a sliding_window key, if any, applies to none
    elif window and r.flag("use_sliding_window", True) is False:
        r.assumptions.append("sliding_window is switched off (use_sliding_window: false): global attention")
    elif window:
        if model_type == "gemma2":
            r.assumptions.append("Gemma-2: local (sliding) and global layers alternate, starting local")
            windows = [window if i % 2 == 0 else None for i in range(n)]
        elif model_type == "gpt_oss":
            # transformers' configuration_gpt_oss.py: layer_types default "sliding_attention" if (i + 1) % 2, else
            # "full_attention" (a trial: without layer_types every layer had slid within 128 tokens, KV 128× low).
            r.assumptions.append("gpt-oss with no layer_types: sliding and full layers alternate, starting sliding "
                                 "(transformers' default)")
            windows = [window if i % 2 == 0 else None for i in range(n)]
        elif model_type in ("gemma3", "gemma3_text"):
            pattern = r.count("sliding_window_pattern", 6, low=1)
            r.assumptions.append(f"Gemma-3: {pattern - 1} local layers per global layer "
                                 f"(sliding_window_pattern {pattern})")
            windows = [None if (i + 1) % pattern == 0 else window for i in range(n)]
        elif (model_type.startswith("qwen2") or model_type == "qwen3") and r.flag("use_sliding_window"):
            # transformers' Qwen2Config and Qwen3Config: layer i slides where i >= max_window_layers (default 28).
            start = r.count("max_window_layers", 28)
            windows = [window if i >= start else None for i in range(n)]
            r.assumptions.append(f"{model_type}: layers {start} and up slide within {window:,} tokens "
                                 f"(max_window_layers {start}), as transformers reads it")
        elif model_type == "qwen3_moe" and r.flag("use_sliding_window") and r.get("max_window_layers") is not None:
            r.read.add("max_window_layers")
            r.assumptions.append("Qwen3-MoE: the window on every layer; transformers' Qwen3MoeConfig reads no "
                                 "max_window_layers")
            windows = [window] * n
        elif model_type.startswith("qwen") and not r.flag("use_sliding_window"):
            r.assumptions.append("sliding_window given but use_sliding_window is not true: global attention")
        else:
            windows = [window] * n
        windows = [w if m in ("full", "sliding") else None for w, m in zip(windows, mixers, strict=True)]
    chunks: list[int | None] = [None] * n
    chunk = r.positive_int("attention_chunk_size", required=False) or None
    if "chunked" in mixers:
        if not chunk:
            if r.get("attention_chunk_size") is None:  # given but not a positive whole number: said already
                r.problems.append("'layer_types' names chunked_attention layers but 'attention_chunk_size' is not "
                                  "given")
            raise _Refused
        chunks = [chunk if m == "chunked" else None for m in mixers]
    elif chunk:
        # An empty list is not given: transformers' Llama4TextConfig reads [] as its default (a model has layers),
        # and Llama-4 Scout's and Maverick's published configs ship "no_rope_layers": [].
        empty = r.cfg.get("no_rope_layers") == []
        rope = None if empty else r.int_list("no_rope_layers", length=n, high=1)
        if rope is None:
            r.read.add("no_rope_layers")
            interval = r.count("nope_layer_interval", 0, low=1) or r.count("no_rope_layer_interval", 4, low=1)
            rope = [int((i + 1) % interval != 0) for i in range(n)]
            r.assumptions.append(("no_rope_layers is []" if empty else "no no_rope_layers")
                                 + f": every {_ordinal(interval)} layer is a NoPE layer with global attention, the "
                                 "others attend within chunks (Llama-4's default, as transformers reads it)")
        chunks = [chunk if (use and mixers[i] == "full" and windows[i] is None) else None
                  for i, use in enumerate(rope)]
    return windows, chunks


def _moe_layers(r: _Reader, n_layers: int, model_type: str) -> list[bool]:
    """Per layer: whether its MLP is mixture-of-experts (for configs without a hybrid pattern)."""
    cfg = r.cfg
    first = r.count("first_k_dense_replace", 0, high=n_layers)
    moe = [i >= first for i in range(n_layers)]
    if first >= n_layers:
        r.problems.append(f"first_k_dense_replace {first} leaves no MoE layer of {n_layers}")
    if cfg.get("interleave_moe_layer_step") is not None:
        step = r.count("interleave_moe_layer_step", 1, low=1)
        moe = [m and (i + 1) % step == 0 for i, m in enumerate(moe)]
    # Llama-4: the MoE layers' indices, or null for the interleave step's (transformers' Llama4TextConfig).
    r.read.add("moe_layers")
    if cfg.get("moe_layers") is not None:
        chosen = r.int_list("moe_layers", high=n_layers - 1)
        if chosen is not None:
            chosen = set(chosen)
            moe = [i >= first and i in chosen for i in range(n_layers)]
    freq = cfg.get("moe_layer_freq")
    if isinstance(freq, list):
        flags = r.int_list("moe_layer_freq", length=n_layers, high=1)
        if flags is not None:
            moe = [m and bool(f) for m, f in zip(moe, flags, strict=True)]
    elif freq is not None:
        step = r.count("moe_layer_freq", 1, low=1)
        moe = [m and (i - first) % step == 0 for i, m in enumerate(moe)] if model_type.startswith("deepseek") \
            else [m and (i + 1) % step == 0 for i, m in enumerate(moe)]
    if cfg.get("decoder_sparse_step") is not None:
        step = r.count("decoder_sparse_step", 1, low=1)
        moe = [m and (i + 1) % step == 0 for i, m in enumerate(moe)]
    if cfg.get("expert_layer_period") is not None:
        period = r.count("expert_layer_period", 1, low=1)
        offset = r.count("expert_layer_offset", 0, high=period - 1)
        moe = [m and i % period == offset for i, m in enumerate(moe)]
    only = r.int_list("mlp_only_layers", high=1 << 20)
    if only:
        dense = set(only)
        moe = [m and i not in dense for i, m in enumerate(moe)]
    return moe


def _llama(r: _Reader) -> dict:
    cfg = r.cfg
    model_type = str(cfg.get("model_type", "")).lower()
    n_layers = r.positive_int("num_hidden_layers")
    hidden = r.positive_int("hidden_size")
    heads = r.positive_int("num_attention_heads")
    pattern = cfg.get("hybrid_override_pattern")
    experts_key = next((k for k in ("num_local_experts", "num_experts", "n_routed_experts") if cfg.get(k)), None)
    inter = r.positive_int("intermediate_size", required="moe_intermediate_size" not in cfg, default=0)
    vocab = r.positive_int("vocab_size")
    if cfg.get("num_key_value_heads") is None:
        kv = 1 if cfg.get("multi_query") else heads
        r.assumptions.append("num_key_value_heads absent: " + ("multi-query attention (1 KV head)"
                             if cfg.get("multi_query") else "multi-head attention (h_kv = num_attention_heads)"))
    else:
        kv = r.positive_int("num_key_value_heads")
    if cfg.get("head_dim") is not None or cfg.get("attention_head_dim") is not None:
        head_dim = r.positive_int("head_dim", "attention_head_dim")
    elif model_type in GEMMA_TYPES:
        head_dim = 256
        r.assumptions.append("head_dim absent: Gemma's default 256")
    else:
        head_dim = hidden // heads if heads else 0
        if cfg.get("kv_lora_rank") is None:  # MLA's heads have d_nope, d_rope and d_v: no single d_head to assume
            if heads and hidden % heads:
                r.problems.append(f"hidden_size {hidden} is not divisible by num_attention_heads {heads}")
            r.assumptions.append("head_dim absent: hidden_size / num_attention_heads")
    gemma = model_type in GEMMA_TYPES
    if "tie_word_embeddings" not in cfg:
        r.assumptions.append("tie_word_embeddings absent: " + ("tied (Gemma's default)" if gemma else "untied LM head"))
    if r.problems or not n_layers:
        raise _Refused  # sizes needed below are missing or out of range
    norms = (4 if model_type in ("gemma2", "gemma3", "gemma3_text", "gemma3n", "gemma3n_text") else 2) * hidden
    qk_norm = 2 * head_dim if model_type in QK_NORM_TYPES else 0
    if pattern is not None:
        norms = hidden  # Nemotron-H: one RMSNorm per block (each block is a mixer or an MLP)

    mixers = _mixers(r, n_layers)
    windows, chunks = _windows(r, mixers)
    shared_from = n_layers - r.count("num_kv_shared_layers", 0, high=n_layers - 1)

    # MLPs.
    moe = _moe(r, n_layers, model_type, inter, bool(experts_key) or "moe" in mixers)
    gated = not (str(cfg.get("mlp_hidden_act") or "").lower() in ("relu2", "squared_relu") or pattern is not None)
    dense_kind = "squared_relu" if str(cfg.get("mlp_hidden_act") or "").lower() in ("relu2", "squared_relu") \
        else ("gated" if gated else "plain")
    dense_width = r.positive_int("intermediate_size_mlp", required=False) or inter
    mlp_bias = r.flag("mlp_bias") and model_type != "gpt_oss"
    dense_mlp = MLPKind(dense_kind, dense_width, mlp_bias)
    if pattern is not None:
        is_moe = [m == "moe" for m in mixers]
    elif moe:
        is_moe = _moe_layers(r, n_layers, model_type)
    else:
        is_moe = [False] * n_layers
    if moe and not any(is_moe):
        where = ("'hybrid_override_pattern' has no E" if pattern is not None else
                 "'first_k_dense_replace', 'interleave_moe_layer_step', 'moe_layer_freq', 'decoder_sparse_step', "
                 "'expert_layer_period' or 'mlp_only_layers' leave no MoE layer")
        r.problems.append(f"{experts_key or 'num_experts'!r} names experts but {where}")
    if not dense_width and not all(is_moe) and pattern is None:
        r.problems.append("missing 'intermediate_size' for the dense MLP layers")

    parallel = model_type in PARALLEL_HYBRID_TYPES
    mamba = _mamba(r, hidden, parallel) if ("mamba" in mixers or parallel) else None
    lightning = model_type in LIGHTNING_TYPES or cfg.get("attn_type_list") is not None
    if "linear" in mixers:
        linear = (LinearAttentionSpec(heads, heads, head_dim, head_dim, 0, kind="lightning") if lightning
                  else _linear_attention(r))
    else:
        linear = None
    indexer = _indexer(r) if cfg.get("index_topk") is not None else None
    cross = set(r.int_list("cross_attention_layers", high=n_layers - 1) or ())
    if r.problems:
        raise _Refused
    granite_shared = model_type.startswith("granitemoehybrid") and r.positive_int("shared_intermediate_size",
                                                                                required=False)
    kinds = []
    for i, m in enumerate(mixers):
        if m in ("mlp", "moe"):  # Nemotron-H MLP-only blocks
            kinds.append(LayerKind("none", mlp=MLPKind("moe") if m == "moe" else dense_mlp))
            continue
        mixer = {"full": "attention", "sliding": "attention", "chunked": "attention", "linear": "linear_attention",
                 "mamba": "mamba"}[m]
        if pattern is not None:
            mlp = MLPKind("none")
        elif is_moe[i]:
            mlp = MLPKind("moe")
        else:
            mlp = dense_mlp
        attention = mixer == "attention"
        is_cross = attention and i in cross
        kinds.append(LayerKind(mixer, window=windows[i] if attention and not is_cross else None,
                               chunk=chunks[i] if attention and not is_cross else None,
                               kv_shared=attention and i >= shared_from and not is_cross, mlp=mlp,
                               sparse_topk=indexer.topk if (indexer and attention and not is_cross) else None,
                               cross=is_cross, parallel_ssm=attention and parallel))
    if shared_from < n_layers:
        r.assumptions.append(f"num_kv_shared_layers {n_layers - shared_from}: the last {n_layers - shared_from} "
                             "layers reuse earlier layers' KV cache and allocate none")
    stack = LayerStack.from_kinds(kinds)
    _layer_kind_notes(r, stack, indexer, linear, mamba if parallel else None)
    cross_tokens = _cross_attention_tokens(r, len(cross)) if cross else 0
    gpt_oss = model_type == "gpt_oss"
    attention_bias = r.flag("attention_bias")
    fields = dict(
        n_layers=n_layers, hidden_size=hidden, n_heads=heads, n_kv_heads=kv, head_dim=head_dim,
        intermediate_size=inter, vocab_size=vocab,
        tie_word_embeddings=r.flag("tie_word_embeddings", gemma),
        qkv_bias=attention_bias or model_type.startswith("qwen2"),
        attention_out_bias=attention_bias and not model_type.startswith("qwen"),
        attention_norm_params=qk_norm,
        attention_extra_params=heads if gpt_oss else 0,  # one learned sink logit per head
        q_gate=r.flag("attn_output_gate", model_type in ("qwen3_next",)),
        gated_mlp=gated,
        max_context=r.positive_int("max_position_embeddings", required=False) or 0,
        stack=stack,
        norm_params_per_layer=norms,
        moe=moe,
        mla=_mla(r),
        linear_attention=linear,
        mamba=mamba,
        indexer=indexer,
        cross_attention_tokens=cross_tokens,
        extra_params=8 * hidden if model_type in MLLAMA_TYPES else 0,
        state_bytes_per_element=_dtype_bytes(cfg.get("mamba_ssm_dtype") or cfg.get("ssm_state_dtype"), 2.0),
        conv_state_bytes_per_element=_dtype_bytes(cfg.get("torch_dtype") or cfg.get("dtype"), 2.0),
    )
    if granite_shared and moe:
        fields["moe"] = MoESpec(**{**moe.__dict__, "n_shared_experts": 1, "shared_intermediate": granite_shared})
    if (linear or mamba) and cfg.get("mamba_ssm_dtype") is None and cfg.get("ssm_state_dtype") is None:
        r.assumptions.append("mamba_ssm_dtype absent: the recurrent state is counted at 16 bits")
    if fields["mla"]:
        fields["qkv_bias"] = fields["attention_out_bias"] = False
    if fields["mla"] and fields["q_gate"]:
        fields["q_gate"] = False
    return fields


def _moe(r: _Reader, n_layers: int, model_type: str, inter: int, wanted: bool) -> MoESpec | None:
    cfg = r.cfg
    if not wanted:
        return None
    experts = r.positive_int("num_local_experts", "num_experts", "n_routed_experts")
    per_token = r.positive_int("num_experts_per_tok", "experts_per_token")
    width = r.positive_int("moe_intermediate_size", required=False) or inter
    if not width:
        r.problems.append("missing 'moe_intermediate_size' (or 'intermediate_size') for the experts")
    # Nemotron-H's MoE (Nemotron-3 Nano) names its one shared expert's width moe_shared_expert_intermediate_size:
    # unread, 459 M parameters were missing (an engineer's trial; NVIDIA's 31.6 B total).
    shared_width = r.positive_int("shared_expert_intermediate_size", "moe_shared_expert_intermediate_size",
                                  required=False)
    shared = r.count("n_shared_experts", 1 if shared_width else 0)
    if model_type == "qwen3_moe" and shared:
        # transformers' Qwen3MoeConfig has no shared expert (Qwen2-MoE's and Qwen3-Next's have one).
        r.assumptions.append("Qwen3-MoE has no shared expert (transformers' Qwen3MoeConfig): "
                             "shared_expert_intermediate_size / n_shared_experts not counted")
        shared, shared_width = 0, None
    if model_type in ("llama4", "llama4_text"):
        shared, shared_width = 1, width
        r.assumptions.append("Llama-4: one shared expert of the routed experts' width on every MoE layer "
                             "(the model has it; the config does not name it)")
    if experts and per_token > experts:
        r.problems.append(f"num_experts_per_tok {per_token} exceeds the {experts} experts")
    if r.problems:
        return None
    squared = str(cfg.get("mlp_hidden_act") or "").lower() in ("relu2", "squared_relu")
    return MoESpec(n_experts=experts, experts_per_token=per_token, expert_intermediate=width,
                   n_shared_experts=shared, shared_intermediate=shared_width or width,
                   first_dense_layers=r.count("first_k_dense_replace", 0, high=n_layers),
                   expert_matrices=2 if squared else 3,
                   expert_bias=model_type == "gpt_oss",
                   # DeepSeek-V3's noaux_tc routing adds a bias per expert to the gate (vLLM deepseek_v2.py:
                   # e_score_correction_bias, one per routed expert).
                   router_bias=model_type == "gpt_oss" or r.get("topk_method") == "noaux_tc",
                   shared_gate=model_type in SHARED_GATE_TYPES or (
                       bool(shared) and str(r.get("shared_moe_mode") or "") == "sigmoid"))


def _mamba(r: _Reader, hidden: int, parallel: bool = False) -> MambaSpec | None:
    """The Mamba mixer's shape; ``parallel``: Falcon-H1's, beside the attention (``mamba_d_ssm`` the inner width,
    ``mamba_d_head`` "auto" = d_inner / heads, a gated norm only with ``mamba_rms_norm``, out_proj's bias
    ``projectors_bias``: transformers models/falcon_h1 FalconH1Config / FalconH1Mixer)."""
    cfg = r.cfg
    d_state = r.positive_int("ssm_state_size", "mamba_d_state")
    d_conv = r.positive_int("conv_kernel", "mamba_d_conv", required=False) or 4
    expand = r.positive_int("expand", "mamba_expand", required=False) or 2
    heads = r.positive_int("mamba_num_heads", "mamba_n_heads", required=False)
    if heads:  # Mamba-2
        d_ssm = r.positive_int("mamba_d_ssm", required=False)
        if cfg.get("mamba_d_head") == "auto":
            r.read.add("mamba_d_head")
            head_dim = 0
        else:
            head_dim = r.positive_int("mamba_head_dim", "mamba_d_head", required=False)
        head_dim = head_dim or ((d_ssm or expand * hidden) // heads)
        if d_ssm and d_ssm != heads * head_dim:
            r.problems.append(f"'mamba_d_ssm' {d_ssm} is not mamba_n_heads × mamba_d_head = {heads} × {head_dim}")
        groups = r.positive_int("n_groups", "mamba_n_groups", required=False) or 1
        return MambaSpec(version=2, d_inner=heads * head_dim, d_state=d_state, d_conv=d_conv, n_heads=heads,
                         head_dim=head_dim, n_groups=groups,
                         conv_bias=r.flag("use_conv_bias", r.flag("mamba_conv_bias", True)),
                         proj_bias=r.flag("use_bias", r.flag("mamba_proj_bias", False)),
                         gated_norm=r.flag("mamba_rms_norm", not parallel),
                         out_bias=r.flag("projectors_bias") if parallel else None)
    d_inner = expand * hidden
    dt_rank = r.count("mamba_dt_rank", 0) if isinstance(cfg.get("mamba_dt_rank"), int) else 0
    return MambaSpec(version=1, d_inner=d_inner, d_state=d_state, d_conv=d_conv,
                     dt_rank=dt_rank or math.ceil(hidden / 16),
                     conv_bias=r.flag("mamba_conv_bias", True), proj_bias=r.flag("mamba_proj_bias", False),
                     inner_norms=cfg.get("model_type") == "jamba")


def _linear_attention(r: _Reader) -> LinearAttentionSpec:
    return LinearAttentionSpec(
        n_key_heads=r.positive_int("linear_num_key_heads"),
        n_value_heads=r.positive_int("linear_num_value_heads"),
        key_head_dim=r.positive_int("linear_key_head_dim"),
        value_head_dim=r.positive_int("linear_value_head_dim"),
        conv_kernel=r.positive_int("linear_conv_kernel_dim", required=False) or 4,
    )


def _indexer(r: _Reader) -> IndexerSpec | None:
    """DeepSeek-V3.2's sparse-attention indexer (every attention layer has one)."""
    spec = IndexerSpec(n_heads=r.positive_int("index_n_heads"), head_dim=r.positive_int("index_head_dim"),
                       topk=r.positive_int("index_topk"))
    if r.cfg.get("kv_lora_rank") is None or r.cfg.get("q_lora_rank") is None:
        r.problems.append("'index_topk' names a sparse-attention indexer, which reads MLA's query latent: "
                          "'kv_lora_rank' and 'q_lora_rank' must be given")
    return spec


def _cross_attention_tokens(r: _Reader, n_cross: int) -> int:
    """Image tokens a cross-attention layer attends to per sequence: one image at the vision tower's largest tiling.

    Llama-3.2-Vision: ``max_num_tiles × ((image_size / patch_size)² + 1)`` (a class token per tile) = 4 × 1,601
    (transformers models/mllama ``MllamaVisionModel``: ``num_patches = (image_size // patch_size) ** 2 + 1``).
    """
    vision = r.cfg.get("__vision_config")
    vision = vision if isinstance(vision, dict) else {}
    size, patch, tiles = (vision.get(k) for k in ("image_size", "patch_size", "max_num_tiles"))
    if not all(isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 1 << 16 for v in (size, patch, tiles)) \
            or patch > size:
        r.unmodelled.append(f"cross_attention_layers: the image K/V of the {n_cross} cross-attention layers are not "
                            "counted (the vision config does not give image_size, patch_size and max_num_tiles)")
        return 0
    per_tile = (size // patch) ** 2 + 1
    tokens = tiles * per_tile
    r.assumptions.append(f"cross_attention_layers: {n_cross} layers attend to one image of {tiles} tiles × "
                         f"{per_tile:,} tokens ((image_size {size} / patch_size {patch})² + 1) = {tokens:,} image "
                         "tokens per sequence; their K/V are fixed per image, the text KV grows on the other layers")
    return tokens


def _layer_kind_notes(r: _Reader, stack: LayerStack, indexer, linear, parallel_mamba) -> None:
    """Say in the assumptions how the newer layer kinds were read."""
    if indexer:
        r.assumptions.append(
            f"index_topk {indexer.topk:,}: sparse attention reads the top {indexer.topk:,} keys per query; the cache "
            f"still holds all S, and each layer's indexer adds its own FP8 keys ({indexer.cache_bytes_per_token():g} "
            "bytes per token, whatever the KV precision), replicated on every TP rank")
    if linear is not None and linear.kind == "lightning":
        n = stack.count(lambda k: k.mixer == "linear_attention")
        r.assumptions.append(
            f"lightning attention on {n} of {stack.n_layers} layers (attn_type_list 0): each keeps a fixed state of "
            f"{linear.n_value_heads} × {linear.key_head_dim} × {linear.value_head_dim} elements per sequence, no KV")
    if parallel_mamba is not None:
        r.assumptions.append(
            f"parallel hybrid: every block runs attention and Mamba-2 ({parallel_mamba.n_heads} heads × "
            f"{parallel_mamba.head_dim}, state {parallel_mamba.d_state}) side by side: a KV cache and a fixed state")
        indices = r.get("attn_layer_indices")
        if indices is not None:
            r.unmodelled.append("attn_layer_indices: every block is counted with its attention")


def _mla(r: _Reader) -> MLASpec | None:
    if r.cfg.get("kv_lora_rank") is None:
        return None
    return MLASpec(
        kv_lora_rank=r.positive_int("kv_lora_rank"),
        qk_rope_head_dim=r.positive_int("qk_rope_head_dim"),
        qk_nope_head_dim=r.positive_int("qk_nope_head_dim"),
        v_head_dim=r.positive_int("v_head_dim"),
        q_lora_rank=r.positive_int("q_lora_rank", required=False) or None,
    )


def _plain_stack(n_layers: int, width: int, gated: bool) -> LayerStack:
    return LayerStack.uniform(LayerKind(mlp=MLPKind("gated" if gated else "plain", width)), n_layers)


def _gpt2(r: _Reader) -> dict:
    n_layers = r.positive_int("n_layer")
    hidden = r.positive_int("n_embd")
    heads = r.positive_int("n_head")
    vocab = r.positive_int("vocab_size")
    positions = r.positive_int("n_positions", "n_ctx")
    inner = r.positive_int("n_inner", required=False) or 4 * hidden
    if r.cfg.get("n_inner") is None:
        r.assumptions.append("n_inner absent: 4 × n_embd")
    if heads and hidden % heads:
        r.problems.append(f"n_embd {hidden} is not divisible by n_head {heads}")
    return dict(
        n_layers=n_layers, hidden_size=hidden, n_heads=heads, n_kv_heads=heads,
        head_dim=hidden // heads if heads else 0, intermediate_size=inner, vocab_size=vocab,
        tie_word_embeddings=True, qkv_bias=True, gated_mlp=False, max_context=positions,
        stack=_plain_stack(n_layers, inner, False),
        norm_params_per_layer=4 * hidden,  # two LayerNorms with biases
        final_norm_params=2 * hidden,
        extra_params=positions * hidden,  # learned position embeddings (wpe)
        block_bias_params=hidden + inner + hidden,  # attention output, MLP in and out biases
    )


def _falcon(r: _Reader) -> dict:
    cfg = r.cfg
    n_layers = r.positive_int("num_hidden_layers", "n_layer")
    hidden = r.positive_int("hidden_size")
    heads = r.positive_int("num_attention_heads", "n_head")
    vocab = r.positive_int("vocab_size")
    new_arch = r.flag("new_decoder_architecture")
    if new_arch:
        kv = r.positive_int("num_kv_heads")
    else:
        kv = 1 if r.flag("multi_query", True) else heads
    if heads and hidden % heads:
        r.problems.append(f"hidden_size {hidden} is not divisible by heads {heads}")
    bias = r.flag("bias")
    if "tie_word_embeddings" not in cfg:
        r.assumptions.append("tie_word_embeddings absent: untied (Falcon checkpoints store lm_head separately)")
    inner = r.positive_int("ffn_hidden_size", required=False) or 4 * hidden
    # parallel attention with the old architecture has one LayerNorm per block.
    norms_per_block = 2 if new_arch or not r.flag("parallel_attn", True) else 1
    return dict(
        n_layers=n_layers, hidden_size=hidden, n_heads=heads, n_kv_heads=kv,
        head_dim=hidden // heads if heads else 0, intermediate_size=inner, vocab_size=vocab,
        tie_word_embeddings=r.flag("tie_word_embeddings"), qkv_bias=bias, gated_mlp=False,
        max_context=r.positive_int("max_position_embeddings", required=False) or 2048,
        stack=_plain_stack(n_layers, inner, False),
        norm_params_per_layer=norms_per_block * 2 * hidden,
        final_norm_params=2 * hidden,
        block_bias_params=(hidden + inner + hidden) if bias else 0,
    )


def _chatglm(r: _Reader) -> dict:
    n_layers = r.positive_int("num_layers")
    hidden = r.positive_int("hidden_size")
    heads = r.positive_int("num_attention_heads")
    kv = r.positive_int("multi_query_group_num") if r.flag("multi_query_attention") else heads
    head_dim = r.positive_int("kv_channels", required=False) or (hidden // heads if heads else 0)
    ffn = r.positive_int("ffn_hidden_size")
    return dict(
        n_layers=n_layers, hidden_size=hidden, n_heads=heads, n_kv_heads=kv, head_dim=head_dim,
        intermediate_size=ffn,
        vocab_size=r.positive_int("padded_vocab_size", "vocab_size"),
        tie_word_embeddings=False,
        qkv_bias=r.flag("add_qkv_bias") or r.flag("add_bias_linear"),
        gated_mlp=True,  # SwiGLU: dense_h_to_4h is h × 2·ffn
        max_context=r.positive_int("seq_length", required=False) or 0,
        stack=_plain_stack(n_layers, ffn, True),
    )
