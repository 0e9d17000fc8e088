"""Model architectures as far as memory traffic is concerned.

A :class:`ModelSpec` says how many parameters a model holds and reads, how
many bytes of KV cache a token adds and how much fixed state a sequence keeps.
Its blocks are a :class:`core.layers.LayerStack` (full, sliding-window,
chunked, shared-KV, linear-attention and Mamba mixers; gated, plain,
squared-ReLU and mixture-of-experts MLPs); every quantity is a sum over the
stack's kinds × counts, so no cost grows with the number of layers.
Mixture-of-experts (:class:`MoESpec`: every expert held in memory, only the
routed ones read), multi-head latent attention (:class:`MLASpec`), fixed-state
mixers (:class:`core.layers.LinearAttentionSpec`, :class:`core.layers.MambaSpec`)
and the checkpoint's quantisation as stored
(:class:`core.quantization.Quantization`) are optional parts.
:mod:`core.config_reader` builds specs from Hugging Face ``config.json``
files; :mod:`core.model_catalogue` loads the shipped ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .layers import IndexerSpec, LayerKind, LayerStack, LinearAttentionSpec, MambaSpec
from .quantization import BF16, Quantization, TensorFormat
from .step import causal_pairs

__all__ = ["ConfigError", "KVTerm", "MLASpec", "ModelSpec", "MoESpec", "ParameterCounts", "Quantization",
           "StoredGroup"]


class ConfigError(ValueError):
    """A ``config.json`` that cannot be understood; the message names the fields."""


#: How :meth:`ModelSpec.architecture` names a config's dialect: the family of key names it uses.
DIALECT_NAMES = {
    "llama": "Llama-style (num_hidden_layers, hidden_size, …)",
    "gpt2": "GPT-2-style (n_layer, n_embd, …)",
    "chatglm": "ChatGLM-style (num_layers, ffn_hidden_size, …)",
    "falcon": "Falcon-style (num_hidden_layers, multi_query, …)",
}


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
    """Mixture-of-experts MLP layers (every MoE layer of a model has this layout).

    Attributes:
        n_experts: E, routed experts per MoE layer.
        experts_per_token: k_e, routed experts each token uses.
        expert_intermediate: MLP width of one routed expert.
        n_shared_experts: always-on shared experts per MoE layer.
        shared_intermediate: MLP width of one shared expert.
        first_dense_layers: leading layers with a dense MLP instead (DeepSeek's
            ``first_k_dense_replace``); kept for reference, the stack says which
            layers are MoE.
        expert_matrices: weight matrices per expert (3 gated, 2 squared-ReLU/plain).
        expert_bias: experts' matrices carry biases (gpt-oss).
        router_bias: the router carries a bias per expert (gpt-oss).
        shared_gate: a sigmoid gate ``h → 1`` scales the shared expert (Qwen2-MoE, Qwen3-Next).
    """

    n_experts: int
    experts_per_token: int
    expert_intermediate: int
    n_shared_experts: int = 0
    shared_intermediate: int = 0
    first_dense_layers: int = 0
    expert_matrices: int = 3
    expert_bias: bool = False
    router_bias: bool = False
    shared_gate: bool = False


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


#: How a cache term divides over TP ranks (:attr:`KVTerm.tp_share`): ``kv_heads`` by KV heads, each rank
#: holding ``ceil(h_kv/TP)`` of them (replicated once TP > h_kv); ``replicated`` whole on every rank (an MLA
#: latent, the sparse-attention indexer's keys); ``even`` split TP ways (Mamba and linear-attention heads).
TP_SHARES = ("kv_heads", "replicated", "even")


@dataclass(frozen=True)
class KVTerm:
    """One group of layers in the per-sequence cache sum (see :meth:`ModelSpec.kv_terms`).

    A sequence of S tokens holds ``layers · (bytes_per_token · min(S, cap) + fixed_bytes)``
    bytes in these layers (``cap`` None: no cap); a decode step reads
    ``layers · (bytes_per_token · min(S, cap, read_cap) + fixed_bytes)`` of them.

    Attributes:
        layers: how many layers.
        bytes_per_token: cache bytes one token adds in one layer (0 for fixed-state layers).
        cap: window or chunk size in tokens, or None.
        fixed_bytes: bytes per sequence per layer, independent of S (linear-attention and Mamba
            state; a cross-attention layer's image K/V).
        read_cap: most of the held tokens a decode step reads (sparse attention's top k), or None: all.
        own_dtype: ``bytes_per_token`` is the term's own format, not scaled by the KV-precision lever
            (the indexer's FP8 keys); otherwise it is elements × p_kv.
        tp_share: how TP ranks divide the term, one of :data:`TP_SHARES`.
        what: what the term holds, in words ("KV", "MLA latent", "indexer keys", "image K/V", ...).
        layer_indices: which layers (0-based, in order) the term covers.
    """

    layers: int
    bytes_per_token: float
    cap: int | None
    fixed_bytes: float
    read_cap: int | None = None
    own_dtype: bool = False
    tp_share: str = "kv_heads"
    what: str = "KV"
    layer_indices: tuple[int, ...] = ()

    def held(self, context):
        """Bytes the term's layers hold for one sequence of S tokens (broadcasts over S)."""
        s = np.asarray(context, dtype=float)
        tokens = s if self.cap is None else np.minimum(s, self.cap)
        return self.layers * (self.bytes_per_token * tokens + self.fixed_bytes)

    def read(self, context):
        """Bytes one decode step reads from the term's layers at S tokens (broadcasts): the top k for sparse
        attention, all that is held otherwise."""
        s = np.asarray(context, dtype=float)
        caps = [c for c in (self.cap, self.read_cap) if c is not None]
        tokens = np.minimum(s, min(caps)) if caps else s
        return self.layers * (self.bytes_per_token * tokens + self.fixed_bytes)


@dataclass(frozen=True)
class AttentionTerms:
    """Attention FLOP per sequence, as the terms a step sums (:meth:`ModelSpec.attention_terms`).

    Attributes:
        decode: ``(flop_per_key, cap)`` per group: FLOP per cached key one new token costs, and how many keys
            it reads at most (None: all S).
        decode_mha: the same with GQA off, every head its own K and V: MLA's latent is then expanded in the
            cache, and its heads attend in the uncompressed form (other models: ``decode``).
        prefill: ``(flop_per_pair, window, chunk)`` per group: FLOP per causal (query, key) pair of a prompt.
        per_token: FLOP per token that does not grow with S (fixed-state mixers, cross-attention to an image).
    """

    decode: tuple[tuple[float, int | None], ...]
    decode_mha: tuple[tuple[float, int | None], ...]
    prefill: tuple[tuple[float, int | None, int | None], ...]
    per_token: float


@dataclass(frozen=True)
class StoredGroup:
    """One group of tensors of the checkpoint as stored (see :meth:`ModelSpec.stored_breakdown`).

    Attributes:
        name: ``"routed experts"``, ``"attention"``, ``"embeddings"``, ...
        params: parameters in the group (held).
        format: the storage format's name (``"MXFP4"``, ``"BF16"``, ...).
        bytes_per_weight: bytes per parameter, scales included.
        routed: the group is routed experts (a step reads only the experts its tokens touch).
        linear: the group is the weight matrices of linear layers (a token's matrix products), not norms, biases
            or embeddings.
        weight_only: its format is weight-only (W4A16, W8A16): dequantised and multiplied in 16 bits.
    """

    name: str
    params: int
    format: str
    bytes_per_weight: float
    routed: bool = False
    linear: bool = False
    weight_only: bool = False

    @property
    def bytes(self) -> float:
        """Bytes held: ``params × bytes_per_weight``."""
        return self.params * self.bytes_per_weight


def _prefixed(names: list[str]) -> tuple[str, ...]:
    """Module names with the multimodal prefixes checkpoints use as well."""
    out = list(names)
    for n in names:
        if n.startswith("model."):
            out += ["model.language_model." + n[6:], "language_model." + n]
    return tuple(out)


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only model, as far as memory traffic is concerned.

    Symbols follow the articles: L = ``n_layers``, h_kv = ``n_kv_heads``,
    d_head = ``head_dim``.

    Attributes:
        id: catalogue id (``"llama-3-8b"``).
        name: display name.
        n_layers: L, blocks (equal to ``stack.n_layers``).
        hidden_size: model width h.
        n_heads: h_q, query heads.
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
        stack: the blocks, kind by kind (:class:`core.layers.LayerStack`).
        dialect: which key names the config used (``"llama"``, ``"gpt2"``, ...).
        norm_params_per_layer: normalisation weights per block; ``None`` means
            two RMSNorms, 2·h (LayerNorms with biases add more).
        final_norm_params: the final norm's weights; ``None`` means h.
        extra_params: parameters outside the blocks not covered above (GPT-2's
            learned position embeddings, Gemma-3n's per-layer embeddings).
        block_bias_params: per-block biases other than q/k/v (GPT-2's output and
            MLP biases).
        moe: mixture-of-experts layout, or ``None`` for a dense MLP.
        mla: multi-head latent attention, or ``None``.
        quantization: the checkpoint's quantisation, or ``None``.
        linear_attention: the linear-attention (gated delta-net) layers' shape, or None.
        mamba: the Mamba layers' shape (also the parallel Mamba-2 of a hybrid block), or None.
        indexer: the sparse-attention indexer of every sparse layer (DeepSeek-V3.2), or None.
        cross_attention_tokens: image tokens a cross-attention layer attends to per sequence (one image of
            the vision tower's largest tiling, as the config reader assumes), 0 without cross-attention.
        attention_out_bias: the output projection carries a bias (Llama-style ``attention_bias``).
        attention_norm_params: per attention layer, q/k norm weights (Qwen3, Gemma-3).
        attention_extra_params: per attention layer, other weights (gpt-oss's sinks).
        q_gate: the query projection also produces an output gate (``attn_output_gate``: 2·h_q·d_head outputs).
        state_bytes_per_element: bytes of a recurrent-state element (``mamba_ssm_dtype``; 16-bit if not given).
        conv_state_bytes_per_element: bytes of a convolution-state element (the model's dtype).
        config_url: where the config came from.
        official_parameters: the published parameter count, if known.
        official_active_parameters: the published active count (MoE), if known.
        assumptions: what was assumed for fields the config left out, and every
            warning (below) as well, so that it is shown wherever assumptions are.
        warnings: config keys that change the architecture and are not modelled,
            each with what the numbers assume instead.
        unmodelled: the names of those keys (and of towers not counted): a result that depends on
            them is approximate, and says so where it is shown (:attr:`approximate`).
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
    stack: LayerStack
    dialect: str = "llama"
    norm_params_per_layer: int | None = None
    final_norm_params: int | None = None
    extra_params: int = 0
    block_bias_params: int = 0
    moe: MoESpec | None = None
    mla: MLASpec | None = None
    quantization: Quantization | None = None
    linear_attention: LinearAttentionSpec | None = None
    mamba: MambaSpec | None = None
    indexer: IndexerSpec | None = None
    cross_attention_tokens: int = 0
    attention_out_bias: bool = False
    attention_norm_params: int = 0
    attention_extra_params: int = 0
    q_gate: bool = False
    state_bytes_per_element: float = 2.0
    conv_state_bytes_per_element: float = 2.0
    config_url: str = ""
    official_parameters: int | None = None
    official_active_parameters: int | None = None
    assumptions: tuple[str, ...] = field(default_factory=tuple)
    warnings: tuple[str, ...] = field(default_factory=tuple)
    unmodelled: tuple[str, ...] = field(default_factory=tuple)

    # -- what the numbers leave out ------------------------------------------
    @property
    def approximate(self) -> bool:
        """Whether a config key that changes the architecture was not modelled: every number is then approximate."""
        return bool(self.unmodelled)

    @property
    def approximate_mark(self) -> str:
        """``"≈ "`` before a verdict or figure that depends on keys not modelled (:attr:`approximate`), else ``""``."""
        return "≈ " if self.approximate else ""

    def approximate_note(self, see: str = "see what the lab read") -> str:
        """One line for beside a headline number, ``"approximate: <keys> not modelled (<see>)"``, or ``""``.

        ``see``: where the keys are listed (the lab's Bring your own tab); ``""`` on a page that has no such place
        (the offline page), and the parenthesis is left out."""
        if not self.unmodelled:
            return ""
        return f"approximate: {self.unmodelled_keys_text} not modelled" + (f" ({see})" if see else "")

    @property
    def approximate_sentence(self) -> str:
        """``"Approximate: <keys> not modelled."``, the sentence that opens a command's or a tab's note, or ``""``."""
        note = self.approximate_note("")
        return f"{note[0].upper()}{note[1:]}." if note else ""

    @property
    def unmodelled_keys_text(self) -> str:
        """The config keys the lab does not model, in words: the first four and how many more (``""`` when none)."""
        more = len(self.unmodelled) - 4
        return ", ".join(self.unmodelled[:4]) + (f" and {more} more" if more > 0 else "")

    # -- the stack --------------------------------------------------------------
    @property
    def layer_windows(self) -> tuple[int | None, ...]:
        """Per layer, the tokens its attention looks at (sliding window or chunk), or None.

        Kept for callers of the per-layer view; L is bounded by the config
        reader (:data:`core.config_reader.LIMITS`).  New code uses
        :attr:`stack` (kinds × counts).
        """
        return tuple(w for kind, n in self.stack.runs for w in [kind.token_cap] * n)

    # -- parameters ---------------------------------------------------------
    def _attention_parts(self) -> tuple[int, int]:
        """One attention layer's (linear weights, other parameters: biases, norms, sinks)."""
        h, d = self.hidden_size, self.head_dim
        if self.mla:
            a = self.mla
            qk = a.qk_nope_head_dim + a.qk_rope_head_dim
            if a.q_lora_rank:
                q, q_norm = h * a.q_lora_rank + a.q_lora_rank * self.n_heads * qk, a.q_lora_rank
            else:
                q, q_norm = h * self.n_heads * qk, 0
            kv = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank * self.n_heads * (
                a.qk_nope_head_dim + a.v_head_dim)
            linear = q + kv + self.n_heads * a.v_head_dim * h
            return linear, q_norm + a.kv_lora_rank + self.attention_norm_params + self.attention_extra_params
        q_width, kv_width = self.n_heads * d, self.n_kv_heads * d
        linear = (2 if self.q_gate else 1) * h * q_width + h * q_width + 2 * h * kv_width
        other = self.attention_norm_params + self.attention_extra_params
        if self.qkv_bias:
            other += (2 if self.q_gate else 1) * q_width + 2 * kv_width
        if self.attention_out_bias:
            other += h
        return linear, other

    def _attention_params(self) -> int:
        return sum(self._attention_parts())

    def _mixer_parts(self, kind: LayerKind) -> tuple[int, int]:
        """A block's mixer: (linear weights, other parameters).

        An attention mixer counts its sparse-attention indexer (:class:`core.layers.IndexerSpec`) and, for a
        cross-attention layer, its q/k norms (d_head each) and the two tanh gates of the block (Llama-3.2-Vision,
        transformers models/mllama ``MllamaTextCrossAttention`` / ``MllamaCrossAttentionDecoderLayer``).  A
        parallel hybrid's Mamba-2 is :meth:`_parallel_ssm_parts`.
        """
        h = self.hidden_size
        if kind.mixer == "attention":
            linear, other = self._attention_parts()
            if kind.sparse_topk and self.indexer:
                q_rank = self.mla.q_lora_rank if (self.mla and self.mla.q_lora_rank) else h
                linear += self.indexer.linear_params(h, q_rank)
                other += self.indexer.norm_params()
            if kind.cross:
                other += 2 * self.head_dim + 2
            return linear, other
        if kind.mixer == "linear_attention" and self.linear_attention:
            la = self.linear_attention
            linear = la.linear_params(h)
            return linear, la.params(h) - linear
        if kind.mixer == "mamba" and self.mamba:
            return self._mamba_parts()
        return 0, 0

    def _mamba_parts(self) -> tuple[int, int]:
        m, h = self.mamba, self.hidden_size
        if m.version == 1:
            linear = h * 2 * m.d_inner + m.d_inner * h + m.d_inner * (m.dt_rank + 2 * m.d_state)
        else:
            linear = h * (2 * m.d_inner + 2 * m.n_groups * m.d_state + m.n_heads) + m.d_inner * h
        return linear, m.params(h) - linear

    def _parallel_ssm_parts(self, kind: LayerKind) -> tuple[int, int]:
        """The Mamba-2 beside a parallel hybrid's attention (Falcon-H1), as (linear weights, other), or (0, 0)."""
        return self._mamba_parts() if (kind.parallel_ssm and self.mamba) else (0, 0)

    def _dense_mlp_parts(self, kind: LayerKind) -> tuple[int, int]:
        mlp = kind.mlp
        linear = mlp.matrices * self.hidden_size * mlp.width
        bias = ((mlp.matrices - 1) * mlp.width + self.hidden_size) if (mlp.bias and mlp.matrices) else 0
        return linear, bias

    def _mlp_params(self, width: int) -> int:
        return (3 if self.gated_mlp else 2) * self.hidden_size * width

    def _expert_parts(self) -> tuple[int, int]:
        """One routed expert: (linear weights, biases)."""
        m, h = self.moe, self.hidden_size
        linear = m.expert_matrices * h * m.expert_intermediate
        bias = ((m.expert_matrices - 1) * m.expert_intermediate + h) if m.expert_bias else 0
        return linear, bias

    def _moe_fixed_parts(self) -> dict[str, tuple[int, int]]:
        """Per MoE layer, what every token reads: router and shared experts, as (linear, other)."""
        m, h = self.moe, self.hidden_size
        shared = m.n_shared_experts * m.expert_matrices * h * m.shared_intermediate
        return {"router": (h * m.n_experts, m.n_experts if m.router_bias else 0),
                "shared experts": (shared, h if (m.shared_gate and m.n_shared_experts) else 0)}

    def layer_split(self) -> tuple[int, int, int]:
        """(layers with a dense MLP, MoE layers, parameters of one routed expert)."""
        moe_layers = self.stack.count(lambda k: k.mlp.kind == "moe") if self.moe else 0
        dense = self.stack.count(lambda k: k.mlp.matrices > 0)
        return dense, moe_layers, (sum(self._expert_parts()) if self.moe else 0)

    def _norms(self) -> int:
        return self.norm_params_per_layer if self.norm_params_per_layer is not None else 2 * self.hidden_size

    def _layer_fixed_params(self, kind: LayerKind) -> int:
        """One block's parameters a step always reads: all but its routed experts."""
        p = sum(self._mixer_parts(kind)) + sum(self._parallel_ssm_parts(kind)) + self._norms() \
            + self.block_bias_params + sum(self._dense_mlp_parts(kind))
        if kind.mlp.kind == "moe" and self.moe:
            p += sum(sum(v) for v in self._moe_fixed_parts().values())
        return p

    def layer_params(self, kind: LayerKind) -> int:
        """One block of ``kind``: every parameter a step always reads (all but its routed experts)."""
        return self._layer_fixed_params(kind)

    def replicated_params(self, kind: LayerKind) -> int:
        """Parameters of one block of ``kind`` that serving engines keep whole on every TP rank.

        Following vLLM's and SGLang's model code (``ReplicatedLinear`` and norms rather than
        ``ColumnParallelLinear`` / ``RowParallelLinear``): the block's norms; q/k norms
        (per-head, the same on every rank); MLA's down-projections ``q_a_proj`` (h·q_lora_rank) and
        ``kv_a_proj_with_mqa`` (h·(kv_lora_rank + d_rope)) with their norms (vLLM
        vllm/model_executor/models/deepseek_v2.py ``DeepseekV2MLAAttention``: ``fused_qkv_a_proj``
        with ``disable_tp=True``, ``kv_a_proj_with_mqa = ReplicatedLinear``; SGLang
        python/sglang/srt/models/deepseek_v2.py: ``fused_qkv_a_proj_with_mqa = ReplicatedLinear``);
        the sparse-attention indexer (vLLM ``Indexer``: "no tensor parallel, just replicated"); the MoE
        router (vLLM ``GateLinear``, a ``ReplicatedLinear``; Mixtral/Qwen-MoE ``gate = ReplicatedLinear``)
        and its bias; the shared-expert gate (Qwen2-MoE ``shared_expert_gate = ReplicatedLinear``);
        gpt-oss-style biases of row-parallel outputs are small and left split.  The K/V projections'
        replication once TP > h_kv is :class:`core.parallelism.Parallelism`'s (it depends on TP).
        """
        h = self.hidden_size
        p = self._norms() + self.attention_norm_params * (kind.mixer == "attention")
        if kind.mixer == "attention":
            if self.mla:
                a = self.mla
                p += h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank
                if a.q_lora_rank:
                    p += h * a.q_lora_rank + a.q_lora_rank
            if kind.sparse_topk and self.indexer:
                q_rank = self.mla.q_lora_rank if (self.mla and self.mla.q_lora_rank) else h
                p += self.indexer.linear_params(h, q_rank) + self.indexer.norm_params()
            if kind.cross:
                p += 2 * self.head_dim + 2
        if kind.mlp.kind == "moe" and self.moe:
            router, router_bias = self._moe_fixed_parts()["router"]
            p += router + router_bias + (h if (self.moe.shared_gate and self.moe.n_shared_experts) else 0)
        return p

    def kv_projection_params(self, kind: LayerKind) -> tuple[int, int]:
        """``(params, per KV head)`` of one block's K and V projections (0 for MLA and non-attention blocks).

        ``2·h·h_kv·d_head`` (with biases, ``2·h_kv·d_head`` more): a TP rank holds ``ceil(h_kv/TP)``
        heads' worth, so past TP = h_kv the projections are replicated (vLLM ``QKVParallelLinear``).
        """
        if kind.mixer != "attention" or self.mla:
            return 0, 0
        per_head = 2 * self.hidden_size * self.head_dim + (2 * self.head_dim if self.qkv_bias else 0)
        return per_head * self.n_kv_heads, per_head

    def fixed_params(self) -> int:
        """Everything read on every step whatever the batch: all but the routed experts."""
        h = self.hidden_size
        blocks = sum(n * self._layer_fixed_params(kind) for kind, n in self.stack.groups())
        embedding = self.vocab_size * h
        head = 0 if self.tie_word_embeddings else self.vocab_size * h
        final_norm = h if self.final_norm_params is None else self.final_norm_params
        return embedding + head + final_norm + self.extra_params + blocks

    def parameter_counts(self) -> ParameterCounts:
        """Parameters from the architecture, summed over the stack's kinds.

        Per attention layer: q and o projections ``h·(n_heads·d_head)`` each
        (q twice with an output gate), k and v ``h·(h_kv·d_head)`` each (the MLA
        projections instead, when present), biases, q/k norms and sinks; per
        linear-attention or Mamba layer its mixer
        (:class:`core.layers.LinearAttentionSpec`, :class:`core.layers.MambaSpec`);
        per block its MLP (``3·h·i`` gated, ``2·h·i`` plain or squared-ReLU) or
        router, shared and routed experts, and its norms.  Plus the embedding
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

    def experts_touched(self, tokens):
        """Distinct routed experts per MoE layer that ``tokens`` tokens touch: ``E·(1 − (1 − k_e/E)^tokens)``.

        Uniform, independent routing; broadcasts over ``tokens``.  0 for dense models.
        """
        if not self.moe:
            return np.zeros(np.shape(tokens)) if np.ndim(tokens) else 0.0
        m = self.moe
        return m.n_experts * (1.0 - (1.0 - m.experts_per_token / m.n_experts) ** np.asarray(tokens, dtype=float))

    def params_read(self, tokens):
        """Parameters one forward step reads from memory for ``tokens`` tokens (broadcasts).

        Dense models read every weight once.  A mixture-of-experts layer reads
        its router and shared experts and only the routed experts its tokens
        touch: with E experts and k_e per token, ``tokens`` tokens touch
        ``E·(1 − (1 − k_e/E)^tokens)`` distinct experts on average (uniform,
        independent routing), so at batch 1 it reads about k_e experts and at
        large batch all E (article 000, "Where It Breaks": MoE breaks the
        batching argument).  Dense layers between MoE layers are read whole.
        """
        if not self.moe:
            return np.full(np.shape(tokens), float(self.n_params)) if np.ndim(tokens) else float(self.n_params)
        _, moe_layers, per_expert = self.layer_split()
        return self.fixed_params() + moe_layers * per_expert * self.experts_touched(tokens)

    # -- the checkpoint as stored ----------------------------------------------
    def _tensor_groups(self) -> list[tuple[str, int, tuple[str, ...], bool, bool, bool]]:
        """(group, params, module names, linear, routed, explicit-only) for the whole model.

        With an ignore or target list that names layer indices the groups are
        evaluated per layer (L is bounded by the reader); otherwise per kind.
        """
        h = self.hidden_size
        rows = [("embeddings", self.vocab_size * h, _prefixed(["model.embed_tokens", "backbone.embeddings"]),
                 False, False, False)]
        if not self.tie_word_embeddings:
            rows.append(("LM head", self.vocab_size * h, ("lm_head",), True, False, True))
        rows.append(("norms", (h if self.final_norm_params is None else self.final_norm_params) + self.extra_params
                     + self.n_layers * (self._norms() + self.block_bias_params), (), False, False, False))
        per_index = bool(self.quantization and self.quantization.index_sensitive())
        # Per kind, named by its first layer, when no rule names a layer index: the stack's groups, not its runs
        # (a pasted hybrid of 2,048 layers cycling kinds is 2,048 runs of five kinds).
        blocks = ([(kind, range(start, start + n), 1) for kind, n, start in self.stack.runs_with_starts()]
                  if per_index else [(kind, self.stack.layers_of(kind)[:1], n) for kind, n in self.stack.groups()])
        for kind, indices, weight in blocks:
            for i in indices:
                lay = [f"model.layers.{i}", f"backbone.layers.{i}"]
                mixer = {"attention": ("attention", ["self_attn", "attention", "mixer"]),
                         "linear_attention": ("linear attention", ["linear_attn"]),
                         "mamba": ("Mamba", ["mamba", "mixer"]), "none": ("", [])}[kind.mixer]
                linear, other = self._mixer_parts(kind)
                names = _prefixed([f"{p}.{s}" for p in lay for s in mixer[1]])
                if linear:
                    rows.append((mixer[0], weight * linear, names, True, False, False))
                if other:
                    rows.append((mixer[0] + " (biases, norms)", weight * other, names, False, False, False))
                linear, other = self._parallel_ssm_parts(kind)  # a parallel hybrid's Mamba-2 (Falcon-H1)
                ssm_names = _prefixed([f"{p}.mamba" for p in lay])
                if linear:
                    rows.append(("Mamba", weight * linear, ssm_names, True, False, False))
                if other:
                    rows.append(("Mamba (biases, norms)", weight * other, ssm_names, False, False, False))
                mlp_names = _prefixed([f"{p}.{s}" for p in lay for s in ("mlp", "feed_forward", "mixer")])
                if kind.mlp.matrices:
                    linear, other = self._dense_mlp_parts(kind)
                    rows.append(("dense MLP", weight * linear, mlp_names, True, False, False))
                    if other:
                        rows.append(("dense MLP (biases)", weight * other, mlp_names, False, False, False))
                if kind.mlp.kind == "moe" and self.moe:
                    sub = {"router": ("gate", "router"), "shared experts": ("shared_expert", "shared_experts"),
                           "routed experts": ("experts",)}
                    parts = dict(self._moe_fixed_parts())
                    lin, bias = self._expert_parts()
                    parts["routed experts"] = (lin * self.moe.n_experts, bias * self.moe.n_experts)
                    for group, (linear, other) in parts.items():
                        names = _prefixed([f"{p}.{s}.{x}" for p in lay for s in ("mlp", "block_sparse_moe",
                                                                                   "feed_forward", "mixer")
                                           for x in sub[group]])
                        routed = group == "routed experts"
                        if linear:
                            rows.append((group, weight * linear, names, True, routed, group == "router"))
                        if other:
                            rows.append((group + " (biases)", weight * other, names, False, routed, False))
        return rows

    @cached_property
    def _stored(self) -> tuple[StoredGroup, ...]:
        q = self.quantization
        merged: dict[tuple[str, str, float, bool, bool, bool], int] = {}
        for group, params, names, linear, routed, explicit in self._tensor_groups():
            fmt: TensorFormat = q.format_for(names, linear, explicit) if q else BF16
            key = (group, fmt.name, fmt.bytes_per_weight, routed, linear, fmt.weight_only)
            merged[key] = merged.get(key, 0) + params
        return tuple(StoredGroup(g, p, f, b, r, lin, wo) for (g, f, b, r, lin, wo), p in merged.items() if p)

    def stored_breakdown(self) -> tuple[StoredGroup, ...]:
        """The checkpoint as stored, per tensor group: params, format, bytes per weight, bytes held.

        Unquantised checkpoints and every tensor a ``quantization_config`` leaves
        out (its ignore list, norms, biases, embeddings, the LM head unless a
        rule names it) are counted at 2 bytes (BF16).  Sums to :attr:`n_params`.
        """
        return self._stored

    def stores_every_weight_16_bit(self) -> bool:
        """Whether the checkpoint as stored keeps every tensor in 16 bits: no ``quantization_config``, or one whose
        ignore list covers every module (``modules_to_not_convert: ["*"]``)."""
        return all(g.format == BF16.name for g in self._stored)

    def weight_bytes_held_as_stored(self) -> float:
        """Bytes the checkpoint's weights occupy in memory as stored (all experts)."""
        return float(sum(g.bytes for g in self._stored))

    def stored_bytes_per_param(self) -> float:
        """Mean bytes per weight as stored, over every weight held: held bytes / N."""
        return self.weight_bytes_held_as_stored() / self.n_params

    def stored_bytes_per_param_parts(self) -> tuple[float, float, float, float]:
        """Mean bytes per weight as stored of the parts a GPU split treats apart, in bytes per parameter.

        Returns ``(embedding, LM head, rest, routed experts)``: the embedding table,
        the LM head (the embedding's figure when tied), everything else every step
        reads (attention, router, shared experts, norms, ...), and the routed experts
        (0 for a dense model).  ``V·h·e + V·h·l + rest·r + routed·x`` (in parameters)
        is :meth:`weight_bytes_held_as_stored` (each mean is its parts' bytes over
        their params), so :class:`core.parallelism.Parallelism` can split the bytes
        held and the bytes read per step with the same means.
        """
        stored = self._stored

        def mean(groups) -> tuple[float, int]:
            params = sum(g.params for g in groups)
            return (sum(g.bytes for g in groups) / params if params else 0.0), params

        emb, _ = mean([g for g in stored if g.name == "embeddings"])
        head, head_params = mean([g for g in stored if g.name == "LM head"])
        if self.tie_word_embeddings or not head_params:
            head = emb
        routed, _ = mean([g for g in stored if g.routed])
        rest, _ = mean([g for g in stored if not g.routed and g.name not in ("embeddings", "LM head")])
        return emb, head, rest, routed

    def weight_bytes_read_as_stored(self, tokens):
        """Weight bytes one step reads as stored, for ``tokens`` tokens (broadcasts).

        Everything but the routed experts, plus the routed experts' bytes times
        the fraction of experts the tokens touch (:meth:`experts_touched` / E).
        """
        fixed = sum(g.bytes for g in self._stored if not g.routed)
        routed = sum(g.bytes for g in self._stored if g.routed)
        if not self.moe:
            return fixed + routed + (np.zeros(np.shape(tokens)) if np.ndim(tokens) else 0.0)
        return fixed + routed * self.experts_touched(tokens) / self.moe.n_experts

    def stored_bytes_per_param_read(self, tokens):
        """Mean bytes per weight over what a step reads for ``tokens`` tokens (broadcasts).

        Differs from :meth:`stored_bytes_per_param` for MoE checkpoints whose
        experts are stored narrower than the rest (gpt-oss: MXFP4 experts, BF16
        attention): at batch 1 a step reads mostly 16-bit weights.
        """
        return self.weight_bytes_read_as_stored(tokens) / self.params_read(tokens)

    def weight_bytes_per_param(self, bytes_per_element: float) -> float:
        """Bytes per weight at a weight precision of ``bytes_per_element``, as if every weight had it.

        When the precision has the width of the checkpoint's main quantised
        format (INT4/FP4 for a 4-bit GPTQ/AWQ/MXFP4/NVFP4 checkpoint, FP8/INT8
        for an 8-bit one), that format's per-weight scale and zero-point
        overhead is added; otherwise the precision's bytes alone.  This is the
        lever's what-if figure; the checkpoint as it is stored (16-bit
        embeddings, attention left out by the ignore list, ...) is
        :meth:`stored_bytes_per_param` and :meth:`stored_bytes_per_param_read`.
        """
        q = self.quantization
        if q and q.modelled and abs(q.bits / 8 - bytes_per_element) < 1e-9:
            return bytes_per_element + q.overhead_bytes_per_weight
        return bytes_per_element

    # -- description ------------------------------------------------------------
    def attention_pattern(self) -> str:
        """The attention layout in words, e.g. ``"global attention on all 32 layers"``."""
        kind = ""
        if self.mla:
            kind = (f"multi-head latent attention ({self.mla.kv_lora_rank} + {self.mla.qk_rope_head_dim} cached "
                    "elements per token per layer); ")
        groups = self.stack.groups()
        words = {k.attention for k, _ in groups}
        if words == {"full"}:
            return kind + f"global attention on all {self.n_layers} layers"
        if words == {"sliding"} and len({k.window for k, _ in groups}) == 1:
            w = groups[0][0].window
            return kind + (f"a {w:,}-token sliding window on all {self.n_layers} layers "
                           f"(the KV cache stops growing at {w:,} tokens)")
        if words == {"sliding", "full"} and len({k.window for k, _ in groups if k.window}) == 1:
            n_local = self.stack.count(lambda k: k.window is not None)
            w = next(k.window for k, _ in groups if k.window)
            return kind + (f"a {w:,}-token sliding window on {n_local} of {self.n_layers} layers, "
                           f"global attention on the other {self.n_layers - n_local} (local layers' cache stops "
                           "growing at the window)")
        parts = []
        lightning = self.linear_attention is not None and self.linear_attention.kind == "lightning"
        for word, text in (("full", "global attention"), ("sliding", "sliding-window attention (cache ≤ window)"),
                           ("chunked", "chunked attention (cache ≤ one chunk)"),
                           ("sparse", "sparse attention over the top-k keys an indexer picks (the cache holds all "
                                      "S, plus the indexer's FP8 keys)"),
                           ("cross", f"cross-attention to the image ({self.cross_attention_tokens:,} image tokens' "
                                     "K/V, fixed; no text KV)"),
                           ("parallel", "attention and Mamba-2 side by side (KV cache and a fixed state)"),
                           ("shared_kv", "attention reusing an earlier layer's KV cache (none of its own)"),
                           ("linear", ("lightning" if lightning else "linear") + " attention (a fixed state, no KV "
                                      "cache)"),
                           ("mamba", "Mamba (a fixed state, no KV cache)"), ("none", "no mixer (MLP only)")):
            n = self.stack.count(lambda k, word=word: k.attention == word)
            if n:
                parts.append(f"{'all' if n == self.n_layers else n} with {text}")
        return kind + f"{self.n_layers} layers: " + "; ".join(parts)

    def architecture(self) -> dict:
        """What was read, for a person to check against the model card (display values; the counts and sizes
        marked "≈ " where the config has keys the lab does not model, as every other figure of such a model is)."""
        counts = self.parameter_counts()
        mark = self.approximate_mark
        # MLA caches one latent per token per layer, whatever the config's num_key_value_heads (a trial read "KV
        # heads h_kv 16" beside the command line's one head per GPU, as a cache 16 times too large).
        kv_heads = (f"{self.n_kv_heads} in the config; none cached per head: MLA caches one latent per token per "
                    "layer" if self.mla else self.n_kv_heads)
        out = {
            # Which key names the config used, not which architecture (a Jamba or a Qwen3-MoE uses Llama's names).
            "config key names": DIALECT_NAMES.get(self.dialect, self.dialect),
            "layers L": self.n_layers,
            "hidden size h": self.hidden_size,
            "query heads": self.n_heads,
            "KV heads h_kv": kv_heads,
            **self.head_dims(),
            "parameters (total)": f"{mark}{counts.total:,}",
            "parameters (active per token)": f"{mark}{counts.active:,}",
            # An indexer's keys are FP8 whatever the cache's precision: named, as they are in the sum.
            "KV per token (BF16" + ("; the indexer's keys FP8)" if self.indexer else ")"):
                f"{mark}{self.kv_bytes_per_token(2):,.0f} bytes",
            "attention": self.attention_pattern(),
            "layers by kind": self.stack.describe(),
            "trained context": f"{self.max_context:,}" if self.max_context else "not given",
        }
        for t in self.kv_terms(2):
            if t.what.startswith("indexer"):
                ix = self.indexer
                out["indexer keys per token"] = (
                    f"{t.layers * t.bytes_per_token:,.0f} bytes: {t.layers} layers × ({ix.head_dim} FP8 + "
                    f"{-(-ix.head_dim // ix.block)} × {ix.scale_bytes:g}-byte scale), beside the latent, on every TP "
                    f"rank; the attention reads the top {ix.topk:,} keys ({ix.n_heads} index heads)")
            elif t.what == "image K/V":
                out["cross-attention"] = (
                    f"{t.layers} layers attend to {self.cross_attention_tokens:,} image tokens: "
                    f"{t.layers * t.fixed_bytes:,.0f} bytes of image K/V per sequence (BF16), fixed; the text KV "
                    f"grows on the other {self.n_kv_layers} layers")
        state = self.state_bytes_per_sequence()
        if state:
            out["state per sequence"] = f"{mark}{state:,.0f} bytes (fixed, whatever S; beside the KV cache)"
        n_parallel = self.stack.count(lambda k: k.parallel_ssm)
        if n_parallel:
            out["parallel hybrid"] = (f"{n_parallel} layers run attention and Mamba-2 side by side: each keeps its "
                                      "KV cache and a fixed SSM state")
        if self.unmodelled:
            out["approximate"] = self.approximate_note(see="").removeprefix("approximate: ")  # this list: what was read
        if self.moe:
            m = self.moe
            dense, moe_layers, _ = self.layer_split()
            dense_text = "" if not dense else f"; {dense} layer{'s' if dense > 1 else ''} with a dense MLP"
            out["experts"] = (f"{m.n_experts} routed ({m.experts_per_token} per token), {m.n_shared_experts} shared, "
                              f"on {moe_layers} MoE layers{dense_text}")
        if self.quantization:
            q = self.quantization
            fmt = "every weight left 16-bit" if self.stores_every_weight_16_bit() else q.main_format.name
            out["quantization"] = (f"{q.method}, {fmt}: {self.stored_bytes_per_param():.4f} bytes per "
                                   f"weight as stored on average ({self.weight_bytes_held_as_stored() / 1e9:,.2f} GB)")
        return out

    # -- KV cache and state -----------------------------------------------------
    def kv_heads(self, gqa: bool = True) -> int:
        """h_kv in effect: the config's KV heads, or every query head when GQA is off."""
        return self.n_kv_heads if gqa else self.n_heads

    def kv_elements_per_token_per_layer(self, gqa: bool = True) -> int:
        """Cached elements per token per attention layer: ``2·h_kv·d_head``, or MLA's latent.

        With MLA "GQA off" means the uncompressed cache the latent replaces:
        every head's K (nope + rope dims) and V.
        """
        if self.mla:
            a = self.mla
            if gqa:
                return a.kv_lora_rank + a.qk_rope_head_dim
            return self.n_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim)
        return 2 * self.kv_heads(gqa) * self.head_dim

    @property
    def n_kv_layers(self) -> int:
        """Layers that allocate a KV cache of their own (attention layers that do not share one)."""
        return self.stack.count(lambda k: k.allocates_kv)

    def kv_formula(self, bytes_per_element: float, gqa: bool = True) -> str:
        """The per-token KV formula with this model's numbers, e.g. ``2 × 32 × 8 × 128 × 2``.

        ``L`` when every layer holds a cache; ``L_kv`` (the layers that do) otherwise.  A
        sparse-attention indexer's FP8 keys are added as their own term (FP8 whatever p_kv).
        """
        n, sym = self.n_kv_layers, ("L" if self.n_kv_layers == self.n_layers else "L_kv")
        if self.mla and gqa:
            a = self.mla
            text = (f"{sym}·(kv_lora_rank + qk_rope_head_dim)·p_kv = {n} × ({a.kv_lora_rank} + "
                    f"{a.qk_rope_head_dim}) × {bytes_per_element:g}")
        elif self.mla:
            a = self.mla
            text = (f"{sym}·h·(d_nope + d_rope + d_v)·p_kv = {n} × {self.n_heads} × ({a.qk_nope_head_dim} + "
                    f"{a.qk_rope_head_dim} + {a.v_head_dim}) × {bytes_per_element:g}")
        else:
            text = (f"2·{sym}·h_kv·d_head·p_kv = 2 × {n} × {self.kv_heads(gqa)} × {self.head_dim} × "
                    f"{bytes_per_element:g}")
        n_index = self._sparse_kv_layers()
        if not (n_index and self.indexer):
            return text
        ix = self.indexer
        symbols, numbers = text.split(" = ", 1)
        return (f"{symbols} + L_index·(d_I·1 B + ceil(d_I/128)·4 B) = {numbers} + {n_index} × ({ix.head_dim} × "
                f"{ix.key_bytes:g} + {-(-ix.head_dim // ix.block)} × {ix.scale_bytes:g})")

    def _sparse_kv_layers(self) -> int:
        return self.stack.count(lambda k: k.allocates_kv and k.sparse_topk is not None)

    def kv_bytes_per_token(self, bytes_per_element: float, gqa: bool = True) -> float:
        """KV bytes one token adds across the layers that hold a cache, ``2·L_kv·h_kv·d_head·p_kv``.

        ``L_kv`` counts attention layers with a cache of their own (not
        shared-KV, cross-attention, linear-attention or Mamba layers); windowed and chunked
        layers count while S is within their window.  A sparse-attention layer adds its
        indexer's FP8 keys, ``d_I + ceil(d_I/128)·4`` bytes (:class:`core.layers.IndexerSpec`).
        Source: article 004, section 04 (Llama-3-70B: 327,680 bytes = 320 KiB); the field
        case sparse-attention-indexer-cache.json (DeepSeek-V3.2: 78,324 bytes).
        """
        return float(sum(t.layers * t.bytes_per_token for t in self.kv_terms(bytes_per_element, gqa)))

    @cached_property
    def _cache_layers(self) -> dict[tuple, tuple[int, ...]]:
        """Which layers hold which kind of cache, ``{(what, cap, top k): layer indices in order}``: the part of
        :meth:`kv_terms` that depends on the stack alone, worked out once per model (a pass over every layer)."""
        groups: dict[tuple, list[int]] = {}
        index = 0
        for kind, n in self.stack.runs:
            layers = range(index, index + n)
            index += n
            if kind.allocates_kv:
                groups.setdefault(("kv", kind.token_cap, kind.sparse_topk), []).extend(layers)
                if kind.sparse_topk is not None and self.indexer:
                    groups.setdefault(("index", kind.token_cap, None), []).extend(layers)
            if kind.mixer == "attention" and kind.cross:
                groups.setdefault(("cross", None, None), []).extend(layers)
            if kind.mixer == "linear_attention" and self.linear_attention:
                groups.setdefault(("linear", None, None), []).extend(layers)
            if (kind.mixer == "mamba" or kind.parallel_ssm) and self.mamba:
                groups.setdefault(("mamba", None, None), []).extend(layers)
        return {key: tuple(layers) for key, layers in groups.items()}

    def kv_terms(self, bytes_per_element: float, gqa: bool = True) -> tuple[KVTerm, ...]:
        """The per-sequence cache as a short list of layer groups (:class:`KVTerm`).

        ``Σ_terms layers · (bytes_per_token · min(S, cap) + fixed_bytes)`` is
        :meth:`cache_bytes_per_sequence`.  One term per distinct (cap, top-k) among
        cache-holding layers (elements × p_kv: K/V or the MLA latent); one for a sparse
        layer's indexer keys (FP8, ``own_dtype``); one for cross-attention layers' image K/V
        (fixed per sequence, :attr:`cross_attention_tokens` tokens); one per fixed-state mixer
        (linear attention; Mamba, also a parallel hybrid's).  Shared-KV and MLP-only layers
        hold nothing.  Each term says how TP ranks divide it (``tp_share``) and which layers
        it covers (``layer_indices``), so a pipeline stage's share is exact.
        """
        elements = float(self.kv_elements_per_token_per_layer(gqa))
        per = elements * bytes_per_element
        latent = self.mla is not None and gqa
        kv_share = "replicated" if latent else "kv_heads"
        kv_word = "MLA latent" if latent else ("KV (uncompressed MLA)" if self.mla else "KV")
        terms = []
        for (what, cap, topk), layers in self._cache_layers.items():
            n, idx = len(layers), layers
            if what == "kv":
                terms.append(KVTerm(n, per, cap, 0.0, read_cap=topk, tp_share=kv_share, what=kv_word,
                                    layer_indices=idx))
            elif what == "index":
                terms.append(KVTerm(n, self.indexer.cache_bytes_per_token(), cap, 0.0, own_dtype=True,
                                    tp_share="replicated", what="indexer keys (FP8)", layer_indices=idx))
            elif what == "cross":
                terms.append(KVTerm(n, 0.0, None, self.cross_attention_tokens * per, tp_share=kv_share,
                                    what="image K/V", layer_indices=idx))
            elif what == "linear":
                terms.append(KVTerm(n, 0.0, None, self._state_bytes_per_layer(self.linear_attention),
                                    tp_share="even", what="linear-attention state", layer_indices=idx))
            else:
                terms.append(KVTerm(n, 0.0, None, self._state_bytes_per_layer(self.mamba), tp_share="even",
                                    what="Mamba state", layer_indices=idx))
        return tuple(terms)

    def kv_bytes_per_sequence(self, context, bytes_per_element: float, gqa: bool = True):
        """KV bytes held by one sequence of ``context`` tokens S (broadcasts over S).

        ``Σ_layers with a cache 2·h_kv·d_head·min(S, cap)·p_kv`` where cap is
        the layer's sliding window or attention chunk (a chunked layer holds at
        most one chunk), none for global layers, plus a sparse layer's indexer
        keys.  Equal to ``kv_bytes_per_token · S`` when no layer caps.  What does
        not grow with S (the fixed state of linear-attention and Mamba layers, a
        cross-attention layer's image K/V) is :meth:`state_bytes_per_sequence`.
        """
        s = np.asarray(context, dtype=float)
        total = np.zeros(s.shape)
        for t in self.kv_terms(bytes_per_element, gqa):
            if t.bytes_per_token:
                total = total + t.held(s)
        return float(total) if total.ndim == 0 else total

    def _state_bytes_per_layer(self, spec) -> float:
        return (spec.state_elements() * self.state_bytes_per_element
                + spec.conv_elements() * self.conv_state_bytes_per_element)

    def state_bytes_per_sequence(self, bytes_per_element: float = 2.0, gqa: bool = True) -> float:
        """Bytes one sequence holds whatever its length (0 without such layers).

        Linear-attention (gated delta-net, lightning) and Mamba layers keep a recurrent
        state and a convolution state per sequence instead of a KV cache:
        ``Σ layers · (state elements · p_state + conv elements · p_conv)`` with
        p_state from ``mamba_ssm_dtype`` (16-bit if not given) and p_conv the
        model's dtype, independent of the KV precision.  Cross-attention layers hold
        the image's K/V, ``2·h_kv·d_head·tokens·p_kv`` each, at the KV precision
        ``bytes_per_element`` (BF16 if not given).
        """
        return float(sum(t.layers * t.fixed_bytes for t in self.kv_terms(bytes_per_element, gqa)))

    def cache_bytes_per_sequence(self, context, bytes_per_element: float, gqa: bool = True):
        """KV plus fixed state held by one sequence of S tokens (broadcasts): what serving allocates."""
        s = np.asarray(context, dtype=float)
        total = sum((t.held(s) for t in self.kv_terms(bytes_per_element, gqa)), np.zeros(s.shape))
        return float(total) if np.ndim(total) == 0 else total

    def cache_bytes_read_per_sequence(self, context, bytes_per_element: float, gqa: bool = True):
        """Cache bytes one decode step reads for one sequence of S tokens (broadcasts).

        What it holds (:meth:`cache_bytes_per_sequence`), except that sparse attention
        reads only the top k of the latent/KV it holds (``index_topk``), while its
        indexer reads every cached key.  Source: the DeepSeek-V3.2 field case; vLLM#51209
        (the indexer reads all of its own cache per decode token).
        """
        s = np.asarray(context, dtype=float)
        total = sum((t.read(s) for t in self.kv_terms(bytes_per_element, gqa)), np.zeros(s.shape))
        return float(total) if np.ndim(total) == 0 else total

    def head_dims(self) -> dict[str, str | int]:
        """The attention's head dimensions for a person to read: ``{"head dim d_head": 128}``; with MLA, whose cache
        holds a latent and whose heads have no single d_head (``head_dim`` is then only hidden / heads), the
        latent's dims and each head's (DeepSeek-V2, arXiv:2405.04434, section 2.1)."""
        if not self.mla:
            return {"head dim d_head": self.head_dim}
        a = self.mla
        return {"MLA latent (cached)": f"kv_lora_rank {a.kv_lora_rank} + qk_rope_head_dim {a.qk_rope_head_dim} "
                                       "elements per token per layer",
                "MLA head dims": f"d_nope {a.qk_nope_head_dim}, d_rope {a.qk_rope_head_dim}, d_v {a.v_head_dim} "
                                 "(no single d_head)"}

    # -- attention FLOPs ----------------------------------------------------------
    def attention_flop_formula(self, latent: bool = False) -> str:
        """:meth:`attention_flop_per_key` as a formula: ``4·h_q·d_head``; with MLA ``2·h_q·(2·d_c + d_rope)`` on the
        latent (the absorbed form) and ``2·h_q·(d_nope + d_rope + d_v)`` otherwise."""
        if not self.mla:
            return "4·h_q·d_head"
        return "2·h_q·(2·d_c + d_rope)" if latent else "2·h_q·(d_nope + d_rope + d_v)"

    def attention_flop_per_key(self, latent: bool = False) -> int:
        """FLOP per (query, key) pair per attention layer: ``4·h_q·d_head``.

        2·d_head for the score q·k and 2·d_head for weighting v, per query head.
        Source: Kaplan et al. 2020, table 1 (``2·n_layer·n_ctx·d_attn`` per
        token forward, counting both products); the field case
        prefill-attention-flops.json.

        With MLA, decode and prefill run different kernels on the same cache.
        Prefill expands the latent to each head's keys and values (the uncompressed
        form, ``2·h_q·(d_nope + d_rope) + 2·h_q·d_v``).  Decode absorbs the
        up-projections into the query and the output, so every head attends to the
        cached latent itself (``latent``): ``2·h_q·(d_c + d_rope)`` for the scores and
        ``2·h_q·d_c`` for the weighted latent, with d_c = ``kv_lora_rank``
        (DeepSeek-V3: 278,528 FLOP per key per layer against 81,920 uncompressed).
        Sources: FlashMLA, "A Deep-Dive Into the New Flash MLA Kernel" (2025-04-22),
        section "A Theoretical Analysis of the MLA Algorithm":
        ``2·h_q·s_q·s_k·(d_k + d_v)`` with d_k = 576, d_v = 512; vLLM's MLA backend
        (decode absorbed, prefill uncompressed).

        Args:
            latent: MLA's heads attend to the cached latent (decode; sparse attention in both phases), not
                to keys and values expanded from it.  Ignored without MLA.
        """
        if self.mla:
            a = self.mla
            if latent:
                return 2 * self.n_heads * (a.kv_lora_rank + a.qk_rope_head_dim) + 2 * self.n_heads * a.kv_lora_rank
            return 2 * self.n_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim) + 2 * self.n_heads * a.v_head_dim
        return 4 * self.n_heads * self.head_dim

    def attention_terms(self, groups=None, head_share: float = 1.0) -> AttentionTerms:
        """Attention FLOP per sequence over ``groups`` (``(kind, layers)`` pairs; the whole stack by default),
        beyond the weights' ``2·N_active`` per token, as the terms a step sums (:class:`AttentionTerms`), on a
        GPU that runs ``head_share`` of the query heads (tensor parallelism: its heads over h_q; 1 on one GPU).

        Every term is split with the heads but the sparse-attention indexer's, which each TP rank runs whole (vLLM's
        ``Indexer``: "no tensor parallel, just replicated"; its weights and keys are counted replicated too).

        Per self-attention layer ``4·h_q·d_head`` (:meth:`attention_flop_per_key`; MLA's absorbed form in
        decode) per (query, key) pair, the keys capped by the layer's window or chunk; a sparse-attention
        layer attends to its top k keys, in both phases on the latent in MLA's absorbed form (FlashMLA's
        sparse prefill kernel, ``flash_mla_sparse_fwd``, takes d_qk = 576, d_v = 512), and its indexer scores
        all of them (:meth:`core.layers.IndexerSpec.flop_per_key` per key); a
        cross-attention layer attends to the image's :attr:`cross_attention_tokens`, whatever S; a
        linear-attention or Mamba mixer (a parallel hybrid's too) costs its own per-token FLOP
        (:meth:`core.layers.LinearAttentionSpec.flop_per_token`, :meth:`core.layers.MambaSpec.flop_per_token`).
        In prefill a layer's pairs are causal (:func:`core.step.causal_pairs`), top k acting as a window.
        """
        per_key = float(self.attention_flop_per_key())
        absorbed = float(self.attention_flop_per_key(latent=True))
        decode: dict[int | None, float] = {}
        decode_mha: dict[int | None, float] = {}
        prefill: dict[tuple, float] = {}
        per_token = 0.0
        for kind, n in (self.stack.groups() if groups is None else groups):
            if kind.mixer == "linear_attention" and self.linear_attention:
                per_token += n * self.linear_attention.flop_per_token() * head_share
            if (kind.mixer == "mamba" or kind.parallel_ssm) and self.mamba:
                per_token += n * self.mamba.flop_per_token() * head_share
            if kind.mixer != "attention":
                continue
            if kind.cross:
                per_token += n * per_key * self.cross_attention_tokens * head_share
                continue
            decode[kind.read_cap] = decode.get(kind.read_cap, 0.0) + n * absorbed * head_share
            decode_mha[kind.read_cap] = decode_mha.get(kind.read_cap, 0.0) + n * per_key * head_share
            window, pair = kind.window, per_key
            if kind.sparse_topk is not None:
                window = kind.sparse_topk if window is None else min(window, kind.sparse_topk)
                pair = absorbed
            prefill[(window, kind.chunk)] = prefill.get((window, kind.chunk), 0.0) + n * pair * head_share
            if kind.sparse_topk is not None and self.indexer:  # replicated: whole on every TP rank
                index = n * float(self.indexer.flop_per_key())
                decode[kind.token_cap] = decode.get(kind.token_cap, 0.0) + index
                decode_mha[kind.token_cap] = decode_mha.get(kind.token_cap, 0.0) + index
                prefill[(kind.window, kind.chunk)] = prefill.get((kind.window, kind.chunk), 0.0) + index
        return AttentionTerms(tuple((flop, cap) for cap, flop in decode.items()),
                              tuple((flop, cap) for cap, flop in decode_mha.items()),
                              tuple((flop, w, c) for (w, c), flop in prefill.items()), float(per_token))

    def decode_attention_flop(self, context):
        """Attention FLOP for one new token at context S (broadcasts over S), beyond the 2·N_active weights term.

        ``Σ_attention layers 4·h_q·d_head·S_eff`` (MLA: ``2·h_q·(2·d_c + d_rope)``, the absorbed
        form of :meth:`attention_flop_per_key`) with S_eff = min(S, cap) for
        windowed and chunked layers (chunked: at most one chunk) and S
        otherwise; shared-KV layers attend like the others.  A sparse-attention
        layer attends to min(S, top k) keys and its indexer scores all S; a
        cross-attention layer attends to the image's tokens, whatever S.
        Fixed-state layers add their own per-token cost (:meth:`attention_terms`).
        """
        s = np.asarray(context, dtype=float)
        terms = self.attention_terms()
        total = np.full(s.shape, terms.per_token)
        for flop, cap in terms.decode:
            total = total + flop * (s if cap is None else np.minimum(s, cap))
        return float(total) if total.ndim == 0 else total

    def decode_attention_terms(self) -> tuple[tuple[float, int | None], ...]:
        """:meth:`decode_attention_flop` as ``((flop_per_key, cap), …)`` plus a constant term ``(flop, 0)``.

        ``Σ flop_per_key · min(S, cap)`` (cap None: S) over the terms is the decode
        attention FLOP per token.
        """
        terms = self.attention_terms()
        return (*terms.decode, (terms.per_token, 0))

    def prefill_attention_flop(self, prompt):
        """Attention FLOP of a prefill of P prompt tokens (broadcasts over P), beyond the 2·N_active·P term.

        ``Σ_attention layers 4·h_q·d_head · pairs(P)`` over causal (query, key)
        pairs: ``P(P+1)/2`` for global layers, capped by a sliding window w
        (``w(w+1)/2 + (P − w)·w`` for P > w) or chunks of c (``n·c(c+1)/2 +
        r(r+1)/2``, P = n·c + r).  A sparse layer's attention has the pairs of a
        window of top k, its indexer all causal pairs; cross-attention layers and
        fixed-state layers add ``P ×`` their per-token cost.  Source: the field case
        prefill-attention-flops.json (Llama-3-8B, P = 32,768: 2.81e14 FLOP, 35 % of the prefill).
        """
        p = np.asarray(prompt, dtype=float)
        terms = self.attention_terms()
        total = p * terms.per_token
        for flop, window, chunk in terms.prefill:
            total = total + flop * causal_pairs(p, window, chunk)
        return float(total) if total.ndim == 0 else total
