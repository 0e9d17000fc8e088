"""Read a Hugging Face ``config.json`` into a :class:`core.models.ModelSpec`.

Every dialect in common use, not only Llama's:

* **Llama family** (Llama, Mistral, Mixtral, Qwen2/2.5/3 and their MoE, Gemma
  1-3, DeepSeek-V2/V3): ``num_hidden_layers``, ``hidden_size``,
  ``num_attention_heads``, ``num_key_value_heads`` (absent or null = MHA),
  ``head_dim`` (absent = ``hidden_size / num_attention_heads``, except Gemma,
  whose default is 256), ``intermediate_size``, ``vocab_size``,
  ``tie_word_embeddings`` (absent = untied, except Gemma), ``attention_bias``
  (Qwen2 always has q/k/v biases), sliding windows (``sliding_window`` with
  ``use_sliding_window``; Gemma-2 alternates local and global layers, Gemma-3
  has ``sliding_window_pattern`` local layers per global one; an explicit
  ``layer_types`` list wins), mixture-of-experts (``num_local_experts`` /
  ``num_experts`` / ``n_routed_experts``, ``num_experts_per_tok``,
  ``moe_intermediate_size``, shared experts, ``first_k_dense_replace``) and
  multi-head latent attention (``kv_lora_rank``, ``qk_rope_head_dim``, ...).
* **GPT-2** (``n_layer``, ``n_embd``, ``n_head``, ``n_inner``, ``n_positions``).
* **Falcon** (``n_layer``/``num_hidden_layers``, ``n_head``, ``multi_query``,
  ``new_decoder_architecture`` with ``num_kv_heads``, ``parallel_attn``, ``bias``).
* **ChatGLM 2/3** (``num_layers``, ``multi_query_group_num``, ``kv_channels``,
  ``ffn_hidden_size``, ``padded_vocab_size``, ``seq_length``).

A multimodal config's language model under ``text_config`` is used.
``rope_scaling`` is reported but never multiplies the context: the extended
length is already ``max_position_embeddings``.  ``quantization_config`` (GPTQ,
AWQ, FP8 blocks) gives the checkpoint's bits and its scale/zero overhead.

Everything assumed for a missing field is listed in ``ModelSpec.assumptions``;
anything missing, non-positive or contradictory raises :class:`ConfigError`
naming the fields.
"""

from __future__ import annotations

import json
import math

from .models import ConfigError, MLASpec, ModelSpec, MoESpec, Quantization

#: Largest config text accepted (a real config.json is a few kB).
MAX_CONFIG_BYTES = 1_000_000

GEMMA_TYPES = ("gemma", "gemma2", "gemma3", "gemma3_text")

#: Defaults the transformers config classes apply when a published config leaves
#: a field out (Gemma-3's text_config, for one, omits its vocabulary size).
#: Source: transformers, models/gemma3/configuration_gemma3.py, Gemma3TextConfig.__init__.
MODEL_TYPE_DEFAULTS = {
    "gemma3_text": {"vocab_size": 262_208, "head_dim": 256, "max_position_embeddings": 131_072,
                    "sliding_window_pattern": 6},
}
QK_NORM_TYPES = ("qwen3", "qwen3_moe", "gemma3", "gemma3_text")


def parse_config_text(text: str | bytes) -> dict:
    """Parse config text, refusing what cannot be a config.

    Raises:
        ConfigError: larger than :data:`MAX_CONFIG_BYTES`, not UTF-8, not JSON, or
            not a JSON object; the message says which and where.
    """
    size = len(text.encode() if isinstance(text, str) else text)
    if size > MAX_CONFIG_BYTES:
        raise ConfigError(f"config is {size / 1e6:,.1f} MB; a config.json is a few kB (limit 1 MB)")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"config is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    if not isinstance(config, dict):
        raise ConfigError("config must be a JSON object")
    return config


class _Reader:
    """Collects values, problems and assumptions while reading one config."""

    def __init__(self, cfg: dict):
        self.cfg = cfg
        self.problems: list[str] = []
        self.assumptions: list[str] = []

    def get(self, *keys, default=None):
        """The first of ``keys`` present with a non-null value."""
        for key in keys:
            if self.cfg.get(key) is not None:
                return self.cfg[key]
        return default

    def positive_int(self, *keys, required: bool = True, default: int | None = None) -> int:
        """A positive integer under the first present key; problems are recorded, not raised."""
        name = next((k for k in keys if self.cfg.get(k) is not None), None)
        if name is None:
            if required:
                self.problems.append(f"missing {' or '.join(repr(k) for k in keys)}")
            return default or 0
        value = self.cfg[name]
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if not ok or value <= 0 or int(value) != value:
            self.problems.append(f"{name!r} must be a positive integer, got {value!r}")
            return 0
        return int(value)


def _language_model(config: dict) -> tuple[dict, list[str]]:
    if "text_config" in config and isinstance(config["text_config"], dict) and not any(
        k in config for k in ("num_hidden_layers", "n_layer", "num_layers")
    ):
        text = dict(config["text_config"])
        text.setdefault("model_type", config.get("model_type", ""))
        return text, [f"multimodal config ({config.get('model_type', '?')}): language model read from text_config"]
    return config, []


def _dialect(cfg: dict) -> str:
    model_type = str(cfg.get("model_type", "")).lower()
    if model_type in ("gpt2",) or ("n_embd" in cfg and "n_layer" in cfg):
        return "gpt2"
    if model_type == "chatglm" or ("ffn_hidden_size" in cfg and "num_layers" in cfg):
        return "chatglm"
    if model_type in ("falcon", "refinedweb", "refinedwebmodel"):
        return "falcon"
    return "llama"


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
        ConfigError: missing, non-positive or contradictory fields, all named.
    """
    if not isinstance(config, dict):
        raise ConfigError("config must be a JSON object")
    cfg, notes = _language_model(config)
    defaults = MODEL_TYPE_DEFAULTS.get(str(cfg.get("model_type", "")).lower(), {})
    for key, value in defaults.items():
        if cfg.get(key) is None:
            cfg = {**cfg, key: value}
            notes.append(f"{key} absent: {value} (the {cfg['model_type']} config class default)")
    dialect = _dialect(cfg)
    r = _Reader(cfg)
    r.assumptions.extend(notes)
    fields = {"gpt2": _gpt2, "chatglm": _chatglm, "falcon": _falcon, "llama": _llama}[dialect](r)
    if not r.problems:
        heads, kv = fields["n_heads"], fields["n_kv_heads"]
        if heads % kv:
            r.problems.append(f"num_attention_heads {heads} is not a multiple of num_key_value_heads {kv}")
    if r.problems:
        raise ConfigError("cannot read config: " + "; ".join(r.problems))
    rope = cfg.get("rope_scaling")
    if isinstance(rope, dict):
        kind = rope.get("rope_type") or rope.get("type") or "?"
        r.assumptions.append(
            f"rope_scaling {kind} (factor {rope.get('factor', '?')}): the trained context is "
            "max_position_embeddings as given, not multiplied again")
    quant = _quantization(r, config.get("quantization_config") or cfg.get("quantization_config"))
    return ModelSpec(
        id=model_id,
        name=name,
        dialect=dialect,
        quantization=quant,
        config_url=config_url,
        official_parameters=official_parameters,
        official_active_parameters=official_active_parameters,
        assumptions=tuple(r.assumptions),
        **fields,
    )


def _windows(r: _Reader, n_layers: int) -> tuple[int | None, ...]:
    """Per-layer sliding windows (None = global attention)."""
    cfg, model_type = r.cfg, str(r.cfg.get("model_type", "")).lower()
    window = cfg.get("sliding_window")
    types = cfg.get("layer_types")
    if isinstance(types, list) and len(types) == n_layers and window:
        return tuple(int(window) if t == "sliding_attention" else None for t in types)
    if not window or cfg.get("use_sliding_window") is False:
        if window and cfg.get("use_sliding_window") is False:
            r.assumptions.append("sliding_window is switched off (use_sliding_window: false): global attention")
        return (None,) * n_layers
    window = int(window)
    if model_type == "gemma2":
        r.assumptions.append("Gemma-2: local (sliding) and global layers alternate, starting local")
        return tuple(window if i % 2 == 0 else None for i in range(n_layers))
    if model_type in ("gemma3", "gemma3_text"):
        pattern = int(cfg.get("sliding_window_pattern") or 6)
        r.assumptions.append(f"Gemma-3: {pattern - 1} local layers per global layer (sliding_window_pattern {pattern})")
        return tuple(None if (i + 1) % pattern == 0 else window for i in range(n_layers))
    if model_type.startswith("qwen2") and cfg.get("use_sliding_window"):
        start = int(cfg.get("max_window_layers") or 0)
        return tuple(window if i >= start else None for i in range(n_layers))
    return (window,) * n_layers


def _llama(r: _Reader) -> dict:
    cfg = r.cfg
    model_type = str(cfg.get("model_type", "")).lower()
    n_layers = r.positive_int("num_hidden_layers")
    hidden = r.positive_int("hidden_size")
    heads = r.positive_int("num_attention_heads")
    inter = r.positive_int("intermediate_size", required="moe_intermediate_size" not in cfg, default=0)
    vocab = r.positive_int("vocab_size")
    if cfg.get("num_key_value_heads") is None:
        kv = 1 if cfg.get("multi_query") else heads
        r.assumptions.append("num_key_value_heads absent: " + ("multi-query attention (1 KV head)"
                             if cfg.get("multi_query") else "multi-head attention (h_kv = num_attention_heads)"))
    else:
        kv = r.positive_int("num_key_value_heads")
    if cfg.get("head_dim") is not None:
        head_dim = r.positive_int("head_dim")
    elif model_type in GEMMA_TYPES:
        head_dim = 256
        r.assumptions.append("head_dim absent: Gemma's default 256")
    else:
        head_dim = hidden // heads if heads else 0
        if heads and hidden % heads:
            r.problems.append(f"hidden_size {hidden} is not divisible by num_attention_heads {heads}")
        r.assumptions.append("head_dim absent: hidden_size / num_attention_heads")
    gemma = model_type in GEMMA_TYPES
    if "tie_word_embeddings" not in cfg:
        r.assumptions.append("tie_word_embeddings absent: " + ("tied (Gemma's default)" if gemma else "untied LM head"))
    norms = (4 if model_type in ("gemma2", "gemma3", "gemma3_text") else 2) * hidden
    if model_type in QK_NORM_TYPES:
        norms += 2 * head_dim
    fields = dict(
        n_layers=n_layers, hidden_size=hidden, n_heads=heads, n_kv_heads=kv, head_dim=head_dim,
        intermediate_size=inter, vocab_size=vocab,
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", gemma)),
        qkv_bias=bool(cfg.get("attention_bias", False)) or model_type.startswith("qwen2"),
        gated_mlp=True,
        max_context=int(cfg.get("max_position_embeddings") or 0),
        layer_windows=_windows(r, n_layers) if n_layers else (),
        norm_params_per_layer=norms,
        moe=_moe(r, n_layers),
        mla=_mla(r),
    )
    if fields["mla"]:
        fields["qkv_bias"] = False
    return fields


def _moe(r: _Reader, n_layers: int) -> MoESpec | None:
    cfg = r.cfg
    experts = r.get("num_local_experts", "num_experts", "n_routed_experts")
    if not experts:
        return None
    per_token = r.positive_int("num_experts_per_tok")
    width = r.positive_int("moe_intermediate_size", required=False) or r.positive_int("intermediate_size")
    shared = int(cfg.get("n_shared_experts") or (1 if cfg.get("shared_expert_intermediate_size") else 0))
    shared_width = int(cfg.get("shared_expert_intermediate_size") or width)
    first_dense = int(cfg.get("first_k_dense_replace") or 0)
    if cfg.get("mlp_only_layers"):
        r.assumptions.append("mlp_only_layers ignored: every layer after the first dense ones counted as MoE")
    if not isinstance(experts, int) or experts <= 0 or per_token > experts:
        r.problems.append(f"experts {experts!r} must be a positive integer >= num_experts_per_tok {per_token}")
        return None
    if first_dense >= n_layers > 0:
        r.problems.append(f"first_k_dense_replace {first_dense} leaves no MoE layer of {n_layers}")
    return MoESpec(n_experts=experts, experts_per_token=per_token, expert_intermediate=width,
                   n_shared_experts=shared, shared_intermediate=shared_width, first_dense_layers=first_dense)


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
        layer_windows=(None,) * n_layers,
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
    new_arch = bool(cfg.get("new_decoder_architecture"))
    if new_arch:
        kv = r.positive_int("num_kv_heads")
    else:
        kv = 1 if cfg.get("multi_query", True) else heads
    if heads and hidden % heads:
        r.problems.append(f"hidden_size {hidden} is not divisible by heads {heads}")
    bias = bool(cfg.get("bias", False))
    if "tie_word_embeddings" not in cfg:
        r.assumptions.append("tie_word_embeddings absent: untied (Falcon checkpoints store lm_head separately)")
    inner = int(cfg.get("ffn_hidden_size") or 4 * hidden)
    # parallel attention with the old architecture has one LayerNorm per block.
    norms_per_block = 2 if new_arch or not cfg.get("parallel_attn", True) else 1
    return dict(
        n_layers=n_layers, hidden_size=hidden, n_heads=heads, n_kv_heads=kv,
        head_dim=hidden // heads if heads else 0, intermediate_size=inner, vocab_size=vocab,
        tie_word_embeddings=bool(cfg.get("tie_word_embeddings", False)), qkv_bias=bias, gated_mlp=False,
        max_context=int(cfg.get("max_position_embeddings") or 2048),
        layer_windows=(None,) * n_layers,
        norm_params_per_layer=norms_per_block * 2 * hidden,
        final_norm_params=2 * hidden,
        block_bias_params=(hidden + inner + hidden) if bias else 0,
    )


def _chatglm(r: _Reader) -> dict:
    cfg = r.cfg
    n_layers = r.positive_int("num_layers")
    hidden = r.positive_int("hidden_size")
    heads = r.positive_int("num_attention_heads")
    kv = r.positive_int("multi_query_group_num") if cfg.get("multi_query_attention") else heads
    head_dim = r.positive_int("kv_channels", required=False) or (hidden // heads if heads else 0)
    return dict(
        n_layers=n_layers, hidden_size=hidden, n_heads=heads, n_kv_heads=kv, head_dim=head_dim,
        intermediate_size=r.positive_int("ffn_hidden_size"),
        vocab_size=r.positive_int("padded_vocab_size", "vocab_size"),
        tie_word_embeddings=False,
        qkv_bias=bool(cfg.get("add_qkv_bias", False) or cfg.get("add_bias_linear", False)),
        gated_mlp=True,  # SwiGLU: dense_h_to_4h is h × 2·ffn
        max_context=int(cfg.get("seq_length") or 0),
        layer_windows=(None,) * n_layers,
    )


def _quantization(r: _Reader, qc) -> Quantization | None:
    if not isinstance(qc, dict):
        return None
    method = str(qc.get("quant_method", "unknown")).lower()
    if method in ("gptq", "awq"):
        bits = int(qc.get("bits") or qc.get("w_bit") or 4)
        group = int(qc.get("group_size") or qc.get("q_group_size") or 128)
        if group <= 0:  # group_size -1 means one group per output row: negligible overhead
            return Quantization(method, bits, 0.0)
        # A 16-bit scale and a bits-wide zero point per group of `group` weights.
        return Quantization(method, bits, (2 + bits / 8) / group)
    if method == "fp8":
        block = qc.get("weight_block_size") or [128, 128]
        # One FP32 scale per block (DeepSeek-V3: 128 × 128).
        return Quantization(method, 8, 4 / (block[0] * block[1]))
    r.assumptions.append(f"quantization_config {method!r} not modelled: no scale overhead counted")
    return Quantization(method, int(qc.get("bits") or 16), 0.0)
