"""Model architectures, read from Hugging Face ``config.json`` files.

The catalogue is the folder ``model_configs/`` beside this file: one published
``config.json`` per model (``<id>.json``, unedited) and ``index.json`` with each
model's display name, the URL the config came from and its official parameter
count.

The description is built to grow: attention is described per layer
(``layer_windows``: a sliding-window size or ``None`` for global attention), and
parameter counts come back as total and active, so mixture-of-experts (all
experts held in memory, only the routed ones read) and multi-head latent
attention (a compressed per-token latent instead of K and V heads) can be added
as new fields without changing what existing callers read.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

CATALOGUE_DIR = Path(__file__).with_name("model_configs")


class ConfigError(ValueError):
    """A ``config.json`` that cannot be understood; the message names the fields."""


@dataclass(frozen=True)
class ParameterCounts:
    """Parameter counts of a model.

    Attributes:
        total: every parameter held in memory.
        active: parameters read per token (equal to ``total`` for dense models;
            smaller for mixture-of-experts).
        embedding: the input embedding table (V·h).
    """

    total: int
    active: int
    embedding: int


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer, as far as memory traffic is concerned.

    Symbols follow the articles: L = ``n_layers``, h_kv = ``n_kv_heads``,
    d_head = ``head_dim``.

    Attributes:
        id: catalogue id (``"llama-3-8b"``).
        name: display name.
        n_layers: L, transformer blocks.
        hidden_size: model width h.
        n_heads: query heads.
        n_kv_heads: h_kv, key/value heads (``n_heads`` for multi-head attention,
            fewer with grouped-query attention).
        head_dim: d_head.
        intermediate_size: MLP width.
        vocab_size: V.
        tie_word_embeddings: the output projection reuses the embedding table.
        qkv_bias: q, k and v projections carry biases (Qwen2).
        gated_mlp: SwiGLU-style MLP with gate, up and down matrices (3·h·i
            weights) rather than up and down (2·h·i).
        max_context: the trained context length (``max_position_embeddings``).
        layer_windows: per layer, the sliding-window size in tokens, or ``None``
            for global attention; the KV cache of a windowed layer stops growing
            at the window.
        config_url: where the config came from.
        official_parameters: the published parameter count, if known.
        assumptions: what was assumed for fields the config left out.
    """

    id: str
    name: str
    n_layers: int
    hidden_size: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    intermediate_size: int
    vocab_size: int
    tie_word_embeddings: bool
    qkv_bias: bool
    gated_mlp: bool
    max_context: int
    layer_windows: tuple[int | None, ...]
    config_url: str = ""
    official_parameters: int | None = None
    assumptions: tuple[str, ...] = field(default_factory=tuple)

    # -- parameters ---------------------------------------------------------
    def parameter_counts(self) -> ParameterCounts:
        """Parameters from the architecture (embeddings, attention, MLP, norms, head).

        Per layer: q and o projections ``h·(n_heads·d_head)`` each, k and v
        ``h·(h_kv·d_head)`` each, optional q/k/v biases, the MLP (``3·h·i`` gated
        or ``2·h·i``) and two RMSNorm weight vectors ``2·h``.  Plus the embedding
        ``V·h``, a final norm ``h`` and the LM head ``V·h`` unless tied.
        """
        h, d = self.hidden_size, self.head_dim
        q_width, kv_width = self.n_heads * d, self.n_kv_heads * d
        attention = 2 * h * q_width + 2 * h * kv_width
        if self.qkv_bias:
            attention += q_width + 2 * kv_width
        mlp = (3 if self.gated_mlp else 2) * h * self.intermediate_size
        per_layer = attention + mlp + 2 * h
        embedding = self.vocab_size * h
        head = 0 if self.tie_word_embeddings else self.vocab_size * h
        total = embedding + self.n_layers * per_layer + h + head
        return ParameterCounts(total=total, active=total, embedding=embedding)

    @property
    def n_params(self) -> int:
        """N, parameters read per decode step (the active count)."""
        return self.parameter_counts().active

    def attention_pattern(self) -> str:
        """The attention layout in words, e.g. ``"global attention on all 32 layers"``."""
        windows = [w for w in self.layer_windows if w is not None]
        if not windows:
            return f"global attention on all {self.n_layers} layers"
        if len(windows) == self.n_layers and len(set(windows)) == 1:
            return (f"a {windows[0]:,}-token sliding window on all {self.n_layers} layers "
                    f"(the KV cache stops growing at {windows[0]:,} tokens)")
        return (f"sliding windows on {len(windows)} of {self.n_layers} layers "
                f"(their KV cache stops growing at the window)")

    # -- KV cache -------------------------------------------------------------
    def kv_heads(self, gqa: bool = True) -> int:
        """h_kv in effect: the config's KV heads, or every query head when GQA is off."""
        return self.n_kv_heads if gqa else self.n_heads

    def kv_bytes_per_token(self, bytes_per_element: float, gqa: bool = True) -> float:
        """KV bytes one token adds across all layers, ``2·L·h_kv·d_head·p_kv``.

        Source: article 004, section 04 (Llama-3-70B: 327,680 bytes = 320 KiB).
        """
        return 2.0 * self.n_layers * self.kv_heads(gqa) * self.head_dim * bytes_per_element

    def kv_bytes_per_sequence(self, context: int, bytes_per_element: float, gqa: bool = True) -> float:
        """KV bytes held by one sequence of ``context`` tokens.

        ``Σ_layers 2·h_kv·d_head·min(S, window)·p_kv``: equal to
        ``kv_bytes_per_token · S`` unless some layers use a sliding window.
        """
        per_layer_token = 2.0 * self.kv_heads(gqa) * self.head_dim * bytes_per_element
        tokens = sum(context if w is None else min(context, w) for w in self.layer_windows)
        return per_layer_token * tokens


def _positive_int(cfg: dict, key: str, problems: list[str]) -> int:
    value = cfg.get(key)
    if value is None:
        problems.append(f"missing {key!r}")
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        problems.append(f"{key!r} must be a positive integer, got {value!r}")
        return 0
    if value <= 0 or int(value) != value:
        problems.append(f"{key!r} must be a positive integer, got {value!r}")
        return 0
    return int(value)


def from_hf_config(
    config: dict,
    *,
    model_id: str,
    name: str,
    config_url: str = "",
    official_parameters: int | None = None,
) -> ModelSpec:
    """A :class:`ModelSpec` from a Hugging Face ``config.json`` (as a dict).

    Reads the Llama / Mistral / Qwen2 dialect: ``num_hidden_layers``,
    ``hidden_size``, ``num_attention_heads``, ``num_key_value_heads`` (absent or
    null means multi-head attention), ``head_dim`` (absent means
    ``hidden_size / num_attention_heads``), ``intermediate_size``, ``vocab_size``,
    ``tie_word_embeddings`` (absent means untied, the Llama/Mistral/Qwen2 class
    default), ``attention_bias`` (Qwen2 always has q/k/v biases),
    ``sliding_window`` with ``use_sliding_window``, ``max_position_embeddings``.
    A multimodal config's language model under ``text_config`` is used.

    Raises:
        ConfigError: missing, non-positive or contradictory fields, all named.
    """
    if not isinstance(config, dict):
        raise ConfigError("config must be a JSON object")
    if "num_hidden_layers" not in config and isinstance(config.get("text_config"), dict):
        config = config["text_config"]
    problems: list[str] = []
    assumptions: list[str] = []
    n_layers = _positive_int(config, "num_hidden_layers", problems)
    hidden = _positive_int(config, "hidden_size", problems)
    n_heads = _positive_int(config, "num_attention_heads", problems)
    inter = _positive_int(config, "intermediate_size", problems)
    vocab = _positive_int(config, "vocab_size", problems)
    if config.get("num_key_value_heads") is None:
        n_kv = n_heads
        assumptions.append("num_key_value_heads absent: multi-head attention (h_kv = num_attention_heads)")
    else:
        n_kv = _positive_int(config, "num_key_value_heads", problems)
    if config.get("head_dim") is None:
        head_dim = hidden // n_heads if n_heads else 0
        if n_heads and hidden % n_heads:
            problems.append(f"hidden_size {hidden} is not divisible by num_attention_heads {n_heads}")
        assumptions.append("head_dim absent: hidden_size / num_attention_heads")
    else:
        head_dim = _positive_int(config, "head_dim", problems)
    if n_heads and n_kv and n_heads % n_kv:
        problems.append(f"num_attention_heads {n_heads} is not a multiple of num_key_value_heads {n_kv}")
    if problems:
        raise ConfigError("cannot read config: " + "; ".join(problems))

    if "tie_word_embeddings" not in config:
        assumptions.append("tie_word_embeddings absent: untied LM head")
    model_type = config.get("model_type", "")
    qkv_bias = bool(config.get("attention_bias", False)) or model_type == "qwen2"
    window = config.get("sliding_window")
    # Qwen2 configs carry a sliding_window value but switch it off with
    # use_sliding_window: false; Mistral-7B-v0.1 windows every layer.
    use_window = bool(config.get("use_sliding_window", True)) and window is not None
    layer_windows = (int(window) if use_window else None,) * n_layers
    max_context = int(config.get("max_position_embeddings") or 0)
    return ModelSpec(
        id=model_id,
        name=name,
        n_layers=n_layers,
        hidden_size=hidden,
        n_heads=n_heads,
        n_kv_heads=n_kv,
        head_dim=head_dim,
        intermediate_size=inter,
        vocab_size=vocab,
        tie_word_embeddings=bool(config.get("tie_word_embeddings", False)),
        qkv_bias=qkv_bias,
        # Llama, Mistral and Qwen2 MLPs are gated (gate, up, down); plain-MLP
        # dialects (GPT-2, Falcon) have other key names and are not read here.
        gated_mlp=True,
        max_context=max_context,
        layer_windows=layer_windows,
        config_url=config_url,
        official_parameters=official_parameters,
        assumptions=tuple(assumptions),
    )


@cache
def load_models(folder: Path = CATALOGUE_DIR) -> dict[str, ModelSpec]:
    """All catalogue models keyed by id, in ``index.json`` order."""
    index = json.loads((folder / "index.json").read_text())
    models = {}
    for model_id, meta in index.items():
        config = json.loads((folder / f"{model_id}.json").read_text())
        models[model_id] = from_hf_config(
            config,
            model_id=model_id,
            name=meta["name"],
            config_url=meta["config_url"],
            official_parameters=meta.get("official_parameters"),
        )
    return models


def get_model(model_id: str) -> ModelSpec:
    """The catalogue model ``model_id``.

    Raises:
        ValueError: unknown id; the message lists the accepted ids.
    """
    models = load_models()
    try:
        return models[model_id]
    except KeyError:
        raise ValueError(f"unknown model {model_id!r}; accepted: {', '.join(models)}") from None
