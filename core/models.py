"""Model architectures as far as memory traffic is concerned.

A :class:`ModelSpec` says how many parameters a model holds and reads, and how
many bytes of KV cache a token adds.  Attention is described per layer
(``layer_windows``: a sliding-window size or ``None`` for global attention);
mixture-of-experts (:class:`MoESpec`: every expert held in memory, only the
routed ones read), multi-head latent attention (:class:`MLASpec`: a compressed
latent cached instead of K and V heads) and a checkpoint's quantisation
(:class:`Quantization`) are optional parts.  :mod:`core.config_reader` builds
specs from Hugging Face ``config.json`` files; :mod:`core.model_catalogue`
loads the shipped ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


class ConfigError(ValueError):
    """A ``config.json`` that cannot be understood; the message names the fields."""


@dataclass(frozen=True)
class ParameterCounts:
    """Parameter counts of a model.

    Attributes:
        total: every parameter held in memory.
        active: parameters one token is computed with (equal to ``total`` for
            dense models; for mixture-of-experts only the routed and shared
            experts count).
        embedding: the input embedding table (V·h).
    """

    total: int
    active: int
    embedding: int


@dataclass(frozen=True)
class MoESpec:
    """Mixture-of-experts MLP layers.

    Attributes:
        n_experts: E, routed experts per MoE layer.
        experts_per_token: k_e, routed experts each token uses.
        expert_intermediate: MLP width of one routed expert.
        n_shared_experts: always-on shared experts per MoE layer.
        shared_intermediate: MLP width of one shared expert.
        first_dense_layers: leading layers with a dense MLP instead (DeepSeek's
            ``first_k_dense_replace``); their width is ``intermediate_size``.
    """

    n_experts: int
    experts_per_token: int
    expert_intermediate: int
    n_shared_experts: int = 0
    shared_intermediate: int = 0
    first_dense_layers: int = 0


@dataclass(frozen=True)
class MLASpec:
    """DeepSeek multi-head latent attention.

    The cache holds one compressed latent of ``kv_lora_rank`` elements plus a
    decoupled RoPE key of ``qk_rope_head_dim`` elements per token per layer,
    shared by all heads (DeepSeek-V2 paper, section 2.1).
    """

    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None


@dataclass(frozen=True)
class Quantization:
    """A checkpoint's ``quantization_config``: what its linear weights are stored in.

    Attributes:
        method: ``"gptq"``, ``"awq"``, ``"fp8"``, ...
        bits: bits per quantised weight.
        overhead_bytes_per_weight: scales and zero points, amortised per weight
            (a 16-bit scale and a ``bits``-bit zero point per group of ``group_size``
            for GPTQ/AWQ; one FP32 scale per 128×128 block for DeepSeek's FP8).
    """

    method: str
    bits: int
    overhead_bytes_per_weight: float


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
            fewer with grouped-query attention, 1 with multi-query attention).
        head_dim: d_head.
        intermediate_size: MLP width (of the dense layers, for MoE models).
        vocab_size: V.
        tie_word_embeddings: the output projection reuses the embedding table.
        qkv_bias: q, k and v projections carry biases (Qwen2, ChatGLM).
        gated_mlp: SwiGLU-style MLP with gate, up and down matrices (3·h·i
            weights) rather than up and down (2·h·i).
        max_context: the trained context length (``max_position_embeddings``;
            with ``rope_scaling`` this is already the extended length).
        layer_windows: per layer, the sliding-window size in tokens, or ``None``
            for global attention; the KV cache of a windowed layer stops growing
            at the window.
        dialect: which key names the config used (``"llama"``, ``"gpt2"``, ...).
        norm_params_per_layer: normalisation weights per block; ``None`` means
            two RMSNorms, 2·h (LayerNorms with biases and q/k norms add more).
        final_norm_params: the final norm's weights; ``None`` means h.
        extra_params: parameters outside the blocks not covered above (GPT-2's
            learned position embeddings).
        block_bias_params: per-block biases other than q/k/v (GPT-2's output and
            MLP biases).
        moe: mixture-of-experts layout, or ``None`` for a dense MLP.
        mla: multi-head latent attention, or ``None``.
        quantization: the checkpoint's quantisation, or ``None``.
        config_url: where the config came from.
        official_parameters: the published parameter count, if known.
        official_active_parameters: the published active count (MoE), if known.
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
    dialect: str = "llama"
    norm_params_per_layer: int | None = None
    final_norm_params: int | None = None
    extra_params: int = 0
    block_bias_params: int = 0
    moe: MoESpec | None = None
    mla: MLASpec | None = None
    quantization: Quantization | None = None
    config_url: str = ""
    official_parameters: int | None = None
    official_active_parameters: int | None = None
    assumptions: tuple[str, ...] = field(default_factory=tuple)

    # -- parameters ---------------------------------------------------------
    def _attention_params(self) -> int:
        h, d = self.hidden_size, self.head_dim
        if self.mla:
            a = self.mla
            qk = a.qk_nope_head_dim + a.qk_rope_head_dim
            if a.q_lora_rank:
                q = h * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * self.n_heads * qk
            else:
                q = h * self.n_heads * qk
            kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank
            kv += a.kv_lora_rank * self.n_heads * (a.qk_nope_head_dim + a.v_head_dim)
            return q + kv + self.n_heads * a.v_head_dim * h
        q_width, kv_width = self.n_heads * d, self.n_kv_heads * d
        params = 2 * h * q_width + 2 * h * kv_width
        if self.qkv_bias:
            params += q_width + 2 * kv_width
        return params

    def _mlp_params(self, width: int) -> int:
        return (3 if self.gated_mlp else 2) * self.hidden_size * width

    def layer_split(self) -> tuple[int, int, int]:
        """(dense MLP layers, MoE layers, parameters of one routed expert)."""
        if not self.moe:
            return self.n_layers, 0, 0
        m = self.moe
        return m.first_dense_layers, self.n_layers - m.first_dense_layers, self._mlp_params(m.expert_intermediate)

    def fixed_params(self) -> int:
        """Everything read on every step whatever the batch: all but the routed experts."""
        h = self.hidden_size
        norms = self.norm_params_per_layer if self.norm_params_per_layer is not None else 2 * h
        dense_layers, moe_layers, _ = self.layer_split()
        per_layer = self._attention_params() + norms + self.block_bias_params
        fixed = self.n_layers * per_layer + dense_layers * self._mlp_params(self.intermediate_size)
        if self.moe:
            m = self.moe
            router = h * m.n_experts
            shared = m.n_shared_experts * self._mlp_params(m.shared_intermediate)
            fixed += moe_layers * (router + shared)
        embedding = self.vocab_size * h
        head = 0 if self.tie_word_embeddings else self.vocab_size * h
        final_norm = h if self.final_norm_params is None else self.final_norm_params
        return embedding + head + final_norm + self.extra_params + fixed

    def parameter_counts(self) -> ParameterCounts:
        """Parameters from the architecture (embeddings, attention, MLP or experts, norms, head).

        Per layer: q and o projections ``h·(n_heads·d_head)`` each, k and v
        ``h·(h_kv·d_head)`` each (the MLA projections instead, when present),
        optional q/k/v biases, the MLP (``3·h·i`` gated or ``2·h·i``) or the
        router, routed and shared experts, and the norms.  Plus the embedding
        ``V·h``, a final norm and the LM head ``V·h`` unless tied.  Active
        counts a token's ``k_e`` routed experts instead of all ``E``.
        """
        fixed = self.fixed_params()
        _, moe_layers, per_expert = self.layer_split()
        total = fixed + (moe_layers * self.moe.n_experts * per_expert if self.moe else 0)
        active = fixed + (moe_layers * self.moe.experts_per_token * per_expert if self.moe else 0)
        return ParameterCounts(total=int(total), active=int(active), embedding=self.vocab_size * self.hidden_size)

    @property
    def n_params(self) -> int:
        """N, every parameter (what memory holds; what a dense model reads per step)."""
        return self.parameter_counts().total

    @property
    def n_active_params(self) -> int:
        """Parameters one token is computed with (FLOPs per token = 2 × this)."""
        return self.parameter_counts().active

    def params_read(self, tokens):
        """Parameters one forward step reads from memory for ``tokens`` tokens (broadcasts).

        Dense models read every weight once.  A mixture-of-experts layer reads
        only the experts its tokens are routed to: with E experts and k_e per
        token, ``tokens`` tokens touch ``E·(1 − (1 − k_e/E)^tokens)`` distinct
        experts on average (uniform, independent routing), so at batch 1 it
        reads about k_e experts and at large batch all E (article 000, "Where
        It Breaks": MoE breaks the batching argument).
        """
        if not self.moe:
            return np.full(np.shape(tokens), float(self.n_params)) if np.ndim(tokens) else float(self.n_params)
        m = self.moe
        _, moe_layers, per_expert = self.layer_split()
        touched = m.n_experts * (1.0 - (1.0 - m.experts_per_token / m.n_experts) ** np.asarray(tokens, dtype=float))
        return self.fixed_params() + moe_layers * per_expert * touched

    def weight_bytes_per_param(self, bytes_per_element: float) -> float:
        """Bytes per weight at a precision, with the checkpoint's scale and zero overhead.

        When the chosen precision has the checkpoint's quantised width (INT4 for
        a 4-bit GPTQ/AWQ config, FP8 for DeepSeek's), its per-weight overhead is
        added; otherwise the precision's bytes alone.
        """
        q = self.quantization
        if q and abs(q.bits / 8 - bytes_per_element) < 1e-9:
            return bytes_per_element + q.overhead_bytes_per_weight
        return bytes_per_element

    def attention_pattern(self) -> str:
        """The attention layout in words, e.g. ``"global attention on all 32 layers"``."""
        kind = ""
        if self.mla:
            kind = (f"multi-head latent attention ({self.mla.kv_lora_rank} + {self.mla.qk_rope_head_dim} cached "
                    "elements per token per layer); ")
        windows = [w for w in self.layer_windows if w is not None]
        if not windows:
            return kind + f"global attention on all {self.n_layers} layers"
        if len(windows) == self.n_layers and len(set(windows)) == 1:
            return kind + (f"a {windows[0]:,}-token sliding window on all {self.n_layers} layers "
                           f"(the KV cache stops growing at {windows[0]:,} tokens)")
        return kind + (f"a {max(windows):,}-token sliding window on {len(windows)} of {self.n_layers} layers, "
                       f"global attention on the other {self.n_layers - len(windows)} (local layers' cache stops "
                       "growing at the window)")

    def architecture(self) -> dict:
        """What was read, for a person to check against the model card (display values)."""
        counts = self.parameter_counts()
        out = {
            "config dialect": self.dialect,
            "layers L": self.n_layers,
            "hidden size h": self.hidden_size,
            "query heads": self.n_heads,
            "KV heads h_kv": self.n_kv_heads,
            "head dim d_head": self.head_dim,
            "parameters (total)": f"{counts.total:,}",
            "parameters (active per token)": f"{counts.active:,}",
            "KV per token (BF16)": f"{self.kv_bytes_per_token(2):,.0f} bytes",
            "attention": self.attention_pattern(),
            "trained context": f"{self.max_context:,}" if self.max_context else "not given",
        }
        if self.moe:
            m = self.moe
            out["experts"] = (f"{m.n_experts} routed ({m.experts_per_token} per token), {m.n_shared_experts} shared, "
                              f"first {m.first_dense_layers} layers dense")
        if self.quantization:
            q = self.quantization
            out["quantization"] = f"{q.method}, {q.bits}-bit, +{q.overhead_bytes_per_weight:.4f} bytes/weight overhead"
        return out

    # -- KV cache -------------------------------------------------------------
    def kv_heads(self, gqa: bool = True) -> int:
        """h_kv in effect: the config's KV heads, or every query head when GQA is off."""
        return self.n_kv_heads if gqa else self.n_heads

    def kv_elements_per_token_per_layer(self, gqa: bool = True) -> int:
        """Cached elements per token per layer: ``2·h_kv·d_head``, or MLA's latent.

        With MLA "GQA off" means the uncompressed cache the latent replaces:
        every head's K (nope + rope dims) and V.
        """
        if self.mla:
            a = self.mla
            if gqa:
                return a.kv_lora_rank + a.qk_rope_head_dim
            return self.n_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim)
        return 2 * self.kv_heads(gqa) * self.head_dim

    def kv_formula(self, bytes_per_element: float, gqa: bool = True) -> str:
        """The per-token KV formula with this model's numbers, e.g. ``2 × 32 × 8 × 128 × 2``."""
        if self.mla and gqa:
            a = self.mla
            return (f"L·(kv_lora_rank + qk_rope_head_dim)·p_kv = {self.n_layers} × ({a.kv_lora_rank} + "
                    f"{a.qk_rope_head_dim}) × {bytes_per_element:g}")
        if self.mla:
            a = self.mla
            return (f"L·h·(d_nope + d_rope + d_v)·p_kv = {self.n_layers} × {self.n_heads} × ({a.qk_nope_head_dim} + "
                    f"{a.qk_rope_head_dim} + {a.v_head_dim}) × {bytes_per_element:g}")
        return (f"2·L·h_kv·d_head·p_kv = 2 × {self.n_layers} × {self.kv_heads(gqa)} × {self.head_dim} × "
                f"{bytes_per_element:g}")

    def kv_bytes_per_token(self, bytes_per_element: float, gqa: bool = True) -> float:
        """KV bytes one token adds across all layers, ``2·L·h_kv·d_head·p_kv``.

        Source: article 004, section 04 (Llama-3-70B: 327,680 bytes = 320 KiB).
        """
        return float(self.n_layers * self.kv_elements_per_token_per_layer(gqa)) * bytes_per_element

    def kv_bytes_per_sequence(self, context: int, bytes_per_element: float, gqa: bool = True) -> float:
        """KV bytes held by one sequence of ``context`` tokens.

        ``Σ_layers 2·h_kv·d_head·min(S, window)·p_kv``: equal to
        ``kv_bytes_per_token · S`` unless some layers use a sliding window.
        """
        per_layer_token = float(self.kv_elements_per_token_per_layer(gqa)) * bytes_per_element
        tokens = sum(context if w is None else min(context, w) for w in self.layer_windows)
        return per_layer_token * tokens
