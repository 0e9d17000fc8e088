"""The layer stack: what each transformer block's mixer holds and what its MLP is.

A model is a stack of L blocks, and blocks differ: some attend globally, some
through a sliding window or in chunks, some reuse an earlier layer's KV cache,
some keep a fixed-size recurrent state (linear attention, gated delta-net,
Mamba) instead of a cache that grows with S, and MLPs are dense (gated,
plain, squared-ReLU) or mixture-of-experts.  :class:`LayerKind` names one such
block, :class:`LayerStack` is the stack as runs of equal kinds in layer order.
Everything the model computes is a sum over *kinds × counts*
(:meth:`LayerStack.groups`), so its cost does not grow with L.

The fixed-state mixers have their own shapes: :class:`LinearAttentionSpec`
(Qwen3-Next's gated delta-net, ``linear_*`` config keys; MiniMax's lightning
attention, ``attn_type_list``) and :class:`MambaSpec` (Mamba-2 blocks of
Nemotron-H / Granite-4.0-H / Falcon-H1, ``mamba_*`` / ``ssm_*`` keys; Mamba-1
blocks of Jamba).  Attention layers come in further kinds: sparse attention
over the top-k keys an indexer picks (DeepSeek-V3.2, :class:`IndexerSpec`),
cross-attention to an image's tokens (Llama-3.2-Vision), and attention with a
Mamba-2 mixer beside it in the same block (Falcon-H1's parallel hybrid).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

#: Mixer kinds: what sits where attention sits in a block.
MIXERS = ("attention", "linear_attention", "mamba", "none")

#: MLP kinds: ``gated`` (SwiGLU/GeGLU: gate, up, down = 3·h·i), ``plain`` (up, down = 2·h·i),
#: ``squared_relu`` (Nemotron-H's relu², up and down = 2·h·i), ``moe`` (router + experts),
#: ``none`` (a block with a mixer only, e.g. Nemotron-H's Mamba and attention blocks).
MLP_KINDS = ("gated", "plain", "squared_relu", "moe", "none")


@dataclass(frozen=True)
class MLPKind:
    """A block's MLP.

    Attributes:
        kind: one of :data:`MLP_KINDS`.
        width: the dense MLP's intermediate width i (0 for ``moe``/``none``: the
            experts' widths are the model's :class:`core.models.MoESpec`).
        bias: the dense MLP's matrices carry biases.
    """

    kind: str = "gated"
    width: int = 0
    bias: bool = False

    def __post_init__(self):
        if self.kind not in MLP_KINDS:
            raise ValueError(f"unknown MLP kind {self.kind!r}; accepted: {', '.join(MLP_KINDS)}")

    @property
    def matrices(self) -> int:
        """Weight matrices of h × i in a dense MLP of this kind (3 gated, 2 plain/squared-ReLU, else 0)."""
        return {"gated": 3, "plain": 2, "squared_relu": 2}.get(self.kind, 0)


@dataclass(frozen=True)
class LayerKind:
    """One block's kind: its mixer, what its attention holds, its MLP.

    Attributes:
        mixer: one of :data:`MIXERS`.
        window: sliding-window size w in tokens (attention holds min(S, w)), or None.
        chunk: chunked-attention size c in tokens (Llama-4 ``attention_chunk_size``:
            a query sees only its own chunk, so the layer holds at most c), or None.
        kv_shared: the layer reads an earlier layer's KV cache and allocates none
            (Gemma-3n ``num_kv_shared_layers``).
        mlp: the block's MLP.
        sparse_topk: sparse attention (DeepSeek-V3.2 ``index_topk``): an indexer scores
            every cached key and the attention reads only the top k of them; the cache
            still holds all S tokens, plus the indexer's own keys.  None: dense.
        cross: a cross-attention layer (Llama-3.2-Vision ``cross_attention_layers``):
            its K/V come from the image tokens, fixed per image; it holds no text KV.
        parallel_ssm: a Mamba-2 mixer runs beside the attention in the same block
            (Falcon-H1): the block keeps the attention's KV *and* a fixed SSM state.
    """

    mixer: str = "attention"
    window: int | None = None
    chunk: int | None = None
    kv_shared: bool = False
    mlp: MLPKind = MLPKind()
    sparse_topk: int | None = None
    cross: bool = False
    parallel_ssm: bool = False

    def __post_init__(self):
        if self.mixer not in MIXERS:
            raise ValueError(f"unknown mixer {self.mixer!r}; accepted: {', '.join(MIXERS)}")
        if (self.sparse_topk or self.cross or self.parallel_ssm) and self.mixer != "attention":
            raise ValueError("sparse, cross and parallel-hybrid layers are attention layers")

    @property
    def attention(self) -> str:
        """The mixer in one word: ``full``, ``sliding``, ``chunked``, ``shared_kv``, ``sparse``, ``cross``,
        ``parallel`` (attention ∥ Mamba), ``linear``, ``mamba``, ``none``."""
        if self.mixer == "linear_attention":
            return "linear"
        if self.mixer != "attention":
            return self.mixer
        if self.cross:
            return "cross"
        if self.kv_shared:
            return "shared_kv"
        if self.parallel_ssm:
            return "parallel"
        if self.sparse_topk is not None:
            return "sparse"
        if self.window is not None:
            return "sliding"
        if self.chunk is not None:
            return "chunked"
        return "full"

    @property
    def allocates_kv(self) -> bool:
        """Whether the layer holds a KV cache of its own that grows with S (an attention layer that neither
        shares another's nor attends to the image: a cross-attention layer's K/V are fixed per image)."""
        return self.mixer == "attention" and not self.kv_shared and not self.cross

    @property
    def token_cap(self) -> int | None:
        """Most tokens of KV the layer's attention looks at (window or chunk), or None for all S."""
        if self.mixer != "attention":
            return None
        return self.window if self.window is not None else self.chunk

    @property
    def read_cap(self) -> int | None:
        """Most cached tokens one decode step's attention reads: the window or chunk, or sparse attention's top k."""
        caps = [c for c in (self.token_cap, self.sparse_topk) if c is not None]
        return min(caps) if caps else None

    def label(self) -> str:
        """The kind in words, e.g. ``"sliding window 4,096 + gated MLP"`` (worked out once per kind)."""
        return self._label

    @cached_property
    def _label(self) -> str:
        mixer = {
            "full": "full attention",
            "sliding": f"sliding window {self.window:,}" if self.window else "sliding window",
            "chunked": f"chunked attention {self.chunk:,}" if self.chunk else "chunked attention",
            "shared_kv": "attention on a shared KV cache",
            "sparse": f"sparse attention (top {self.sparse_topk:,} keys by an indexer)" if self.sparse_topk
            else "sparse attention",
            "cross": "cross-attention to the image (K/V fixed per image)",
            "parallel": "attention ∥ Mamba-2 (parallel hybrid: KV + fixed state)",
            "linear": "linear attention (fixed state)",
            "mamba": "Mamba (fixed state)",
            "none": "no mixer",
        }[self.attention]
        if self.kv_shared and self.window:
            mixer += f" (window {self.window:,})"
        mlp = {"gated": "gated MLP", "plain": "MLP", "squared_relu": "squared-ReLU MLP", "moe": "MoE",
               "none": ""}[self.mlp.kind]
        if self.mlp.kind in ("gated", "plain", "squared_relu") and self.mlp.width:
            mlp += f" {self.mlp.width:,}"
        return f"{mixer} + {mlp}" if mlp else mixer


@dataclass(frozen=True)
class LayerStack:
    """The blocks in layer order, as runs ``(kind, count)`` of equal consecutive kinds.

    Attributes:
        runs: ``((kind, count), ...)`` whose counts sum to L.
    """

    runs: tuple[tuple[LayerKind, int], ...]

    @classmethod
    def uniform(cls, kind: LayerKind, n_layers: int) -> LayerStack:
        """``n_layers`` blocks of one kind."""
        return cls(((kind, n_layers),) if n_layers else ())

    @classmethod
    def from_kinds(cls, kinds: Iterable[LayerKind]) -> LayerStack:
        """Run-length encode kinds given in layer order."""
        runs: list[list] = []
        for kind in kinds:
            if runs and runs[-1][0] == kind:
                runs[-1][1] += 1
            else:
                runs.append([kind, 1])
        return cls(tuple((k, n) for k, n in runs))

    # What depends only on the runs is worked out once per stack (the stack is immutable; a pasted model of
    # thousands of layers asked for its groups a thousand times per read): kept in the instance, so it lives and
    # goes with the model.
    @cached_property
    def _starts(self) -> tuple[int, ...]:
        """The first layer index of each run, and L after the last."""
        starts, index = [0], 0
        for _, n in self.runs:
            index += n
            starts.append(index)
        return tuple(starts)

    @cached_property
    def _groups(self) -> tuple[tuple[LayerKind, int], ...]:
        return _grouped(self.runs)

    @property
    def n_layers(self) -> int:
        """L, every block."""
        return self._starts[-1]

    def groups(self) -> tuple[tuple[LayerKind, int], ...]:
        """``((kind, count), ...)``: each distinct kind once, with its count, in order of first appearance.

        Worked out once per stack: a call costs a lookup, not a pass over the runs.
        """
        return self._groups

    def runs_between(self, start: int, end: int) -> tuple[tuple[LayerKind, int], ...]:
        """``((kind, count), ...)`` of blocks ``start`` … ``end - 1`` (0-based) in layer order, as runs.

        Found by bisection over the runs' starts: a pipeline stage of a long stack costs its own runs, not the
        whole stack's.
        """
        if end <= start:
            return ()
        starts, out = self._starts, []
        i = max(bisect_right(starts, start) - 1, 0)
        while i < len(self.runs) and starts[i] < end:
            lo, hi = max(starts[i], start), min(starts[i + 1], end)
            if hi > lo:
                out.append((self.runs[i][0], hi - lo))
            i += 1
        return tuple(out)

    @cached_property
    def _kind_layers(self) -> dict[LayerKind, tuple[int, ...]]:
        """Each distinct kind's layer indices, in order (L indices in all, L ≤ 2,048 for a config)."""
        out: dict[LayerKind, list[int]] = {}
        for kind, n, first in self.runs_with_starts():
            out.setdefault(kind, []).extend(range(first, first + n))
        return {kind: tuple(layers) for kind, layers in out.items()}

    def layers_of(self, kind: LayerKind) -> tuple[int, ...]:
        """The 0-based indices of the blocks of ``kind``, in order (() when none is)."""
        return self._kind_layers.get(kind, ())

    def runs_with_starts(self) -> tuple[tuple[LayerKind, int, int], ...]:
        """``((kind, count, first layer), ...)``: the runs in layer order with the index each starts at."""
        return tuple((kind, n, first) for (kind, n), first in zip(self.runs, self._starts, strict=False))

    def groups_between(self, start: int, end: int) -> tuple[tuple[LayerKind, int], ...]:
        """:meth:`groups` of blocks ``start`` … ``end - 1``: each distinct kind once, with its count there, in
        order of first appearance there.

        By bisection in each kind's layers: a pipeline stage costs the number of kinds, not of its layers.
        """
        found = []
        for kind, layers in self._kind_layers.items():
            lo, hi = bisect_left(layers, start), bisect_left(layers, end)
            if hi > lo:
                found.append((layers[lo], kind, hi - lo))
        return tuple((kind, n) for _, kind, n in sorted(found, key=lambda f: f[0]))

    def count(self, predicate) -> int:
        """Blocks whose kind satisfies ``predicate(kind)``."""
        return sum(n for kind, n in self.groups() if predicate(kind))

    def kind_at(self, index: int) -> LayerKind:
        """The kind of block ``index`` (0-based).

        Raises:
            IndexError: ``index`` outside 0..L-1.
        """
        if not 0 <= index < self.n_layers:
            raise IndexError(f"layer {index} outside 0..{self.n_layers - 1}")
        return self.runs[bisect_right(self._starts, index) - 1][0]

    def summary(self) -> list[dict]:
        """The stack as data for a person: one row per run in layer order.

        Each row: ``{"first": first layer index, "count": n, "attention": word, "mlp": MLP kind,
        "label": words}``.
        """
        rows, start = [], 0
        for kind, n in self.runs:
            rows.append({"first": start, "count": n, "attention": kind.attention, "mlp": kind.mlp.kind,
                         "label": kind.label()})
            start += n
        return rows

    def describe(self) -> str:
        """Kinds with counts in words, e.g. ``"30 × linear attention (fixed state) + MoE, 10 × ..."``."""
        return ", ".join(f"{n} × {kind.label()}" for kind, n in self.groups())


def _grouped(runs) -> tuple[tuple[LayerKind, int], ...]:
    counts: dict[LayerKind, int] = {}
    for kind, n in runs:
        counts[kind] = counts.get(kind, 0) + n
    return tuple(counts.items())


@dataclass(frozen=True)
class LinearAttentionSpec:
    """Linear-attention layers with a fixed state per sequence, of two kinds.

    ``gated_delta`` (Qwen3-Next, ``linear_*`` keys): the layer keeps, per
    sequence, a recurrent state of ``n_value_heads × key_head_dim ×
    value_head_dim`` elements and a causal-convolution state of ``conv_dim ×
    (conv_kernel − 1)`` elements, where ``conv_dim = 2·h_k·d_k + h_v·d_v``;
    neither grows with S (transformers, models/qwen3_next/modeling_qwen3_next.py,
    Qwen3NextGatedDeltaNet).

    ``lightning`` (MiniMax-Text-01 / MiniMax-M1 lightning attention,
    ``attn_type_list`` 0): one state of ``h × d × d`` elements per sequence (the
    running ``KᵀV`` of every head, decayed per head), no convolution; weights
    ``qkv_proj`` h·3·h·d, ``output_gate`` h·h·d, ``out_proj`` h·d·h and a norm of
    h·d (vLLM, vllm/model_executor/models/minimax_text_01.py,
    MiniMaxText01LinearAttention; state ``(heads, head_dim, head_dim)``).

    Attributes:
        n_key_heads, n_value_heads, key_head_dim, value_head_dim: ``linear_num_key_heads`` ...
            (lightning: the attention heads and head_dim, keys and values alike).
        conv_kernel: ``linear_conv_kernel_dim`` (0 for lightning attention: no convolution).
        kind: ``"gated_delta"`` or ``"lightning"``.
    """

    n_key_heads: int
    n_value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int
    kind: str = "gated_delta"

    def __post_init__(self):
        if self.kind not in ("gated_delta", "lightning"):
            raise ValueError(f"unknown linear attention {self.kind!r}; accepted: gated_delta, lightning")

    @property
    def conv_dim(self) -> int:
        if self.kind == "lightning":
            return 0
        return 2 * self.n_key_heads * self.key_head_dim + self.n_value_heads * self.value_head_dim

    def state_elements(self) -> int:
        """Recurrent-state elements per sequence per layer."""
        return self.n_value_heads * self.key_head_dim * self.value_head_dim

    def conv_elements(self) -> int:
        """Convolution-state elements per sequence per layer."""
        return self.conv_dim * max(self.conv_kernel - 1, 0)

    def linear_params(self, hidden: int) -> int:
        """Weights of the mixer's matrices (the projections), without norms, biases and per-head scalars."""
        key_dim, value_dim = self.n_key_heads * self.key_head_dim, self.n_value_heads * self.value_head_dim
        if self.kind == "lightning":
            return hidden * 3 * value_dim + hidden * value_dim + value_dim * hidden  # qkv, output gate, out_proj
        return hidden * (2 * key_dim + 2 * value_dim) + hidden * 2 * self.n_value_heads + value_dim * hidden

    def params(self, hidden: int) -> int:
        """Weights of one layer's mixer.

        Gated delta-net: in_proj_qkvz, in_proj_ba, conv1d, dt_bias, A_log, norm, out_proj.
        Lightning: qkv_proj, output_gate, out_proj and the norm over h·d.
        """
        value_dim = self.n_value_heads * self.value_head_dim
        if self.kind == "lightning":
            return self.linear_params(hidden) + value_dim
        conv = self.conv_dim * self.conv_kernel
        return self.linear_params(hidden) + conv + 2 * self.n_value_heads + self.value_head_dim

    def flop_per_token(self) -> int:
        """FLOP per token of the recurrence, per layer.

        Gated delta rule, ~7 per state element: per head, with state S (d_k × d_v),
        the decay a·S (1), the delta's k·S (2), the rank-1 update S += k⊗δ (2) and
        the read-out q·S (2).  Lightning attention, ~5: the decay (1), S += kᵀv (2)
        and the read-out q·S (2).  Small beside the projections; counted so it is
        not silent.
        """
        return (5 if self.kind == "lightning" else 7) * self.state_elements()


@dataclass(frozen=True)
class MambaSpec:
    """Mamba blocks (Mamba-2 of Nemotron-H / Granite-4.0-H / Falcon-H1; Mamba-1 of Jamba).

    Mamba-2 (``version=2``): ``n_heads`` heads of ``head_dim`` channels,
    ``d_inner = n_heads·head_dim``; state ``n_heads·head_dim·d_state``; conv
    over ``conv_dim = d_inner + 2·n_groups·d_state`` channels with kernel
    ``d_conv`` (state ``conv_dim·(d_conv − 1)``).  Weights: in_proj
    ``h·(2·d_inner + 2·n_groups·d_state + n_heads)``, conv ``conv_dim·d_conv``
    (+ bias), dt_bias, A_log and D (``n_heads`` each), a gated norm
    (``d_inner``; Falcon-H1 only with ``mamba_rms_norm``), out_proj ``d_inner·h``
    (transformers, models/nemotron_h, models/granitemoehybrid and
    models/falcon_h1, the Mamba2Mixer / FalconH1Mixer).  Mamba-1 (``version=1``):
    state ``d_inner·d_state``, conv ``d_inner·(d_conv − 1)``; weights in_proj
    ``h·2·d_inner``, conv ``d_inner·d_conv`` + bias, x_proj ``d_inner·(dt_rank
    + 2·d_state)``, dt_proj ``dt_rank·d_inner + d_inner``, A_log
    ``d_inner·d_state``, D ``d_inner``, out_proj ``d_inner·h`` (models/jamba), and with ``inner_norms``
    Jamba's RMSNorms on dt, B and C (``dt_rank + 2·d_state``: models/jamba JambaMambaMixer's dt_layernorm,
    b_layernorm, c_layernorm; plain Mamba-1, models/mamba, has none).
    """

    version: int
    d_inner: int
    d_state: int
    d_conv: int
    n_heads: int = 0
    head_dim: int = 0
    n_groups: int = 1
    dt_rank: int = 0
    conv_bias: bool = True
    proj_bias: bool = False
    gated_norm: bool = True
    out_bias: bool | None = None
    inner_norms: bool = False

    @property
    def conv_dim(self) -> int:
        if self.version == 1:
            return self.d_inner
        return self.d_inner + 2 * self.n_groups * self.d_state

    def state_elements(self) -> int:
        """SSM-state elements per sequence per layer."""
        return self.d_inner * self.d_state

    def conv_elements(self) -> int:
        """Convolution-state elements per sequence per layer."""
        return self.conv_dim * max(self.d_conv - 1, 0)

    def params(self, hidden: int) -> int:
        """Weights of one Mamba mixer (see the class docstring)."""
        conv = self.conv_dim * self.d_conv + (self.conv_dim if self.conv_bias else 0)
        if self.version == 1:
            d, n, r = self.d_inner, self.d_state, self.dt_rank
            p = hidden * 2 * d + conv + d * (r + 2 * n) + r * d + d + d * n + d + d * hidden
            p += (r + 2 * n) if self.inner_norms else 0
            return p + ((2 * d + hidden) if self.proj_bias else 0)
        in_proj = hidden * (2 * self.d_inner + 2 * self.n_groups * self.d_state + self.n_heads)
        p = in_proj + conv + 3 * self.n_heads + (self.d_inner if self.gated_norm else 0) + self.d_inner * hidden
        if self.proj_bias:
            p += 2 * self.d_inner + 2 * self.n_groups * self.d_state + self.n_heads
        if self.proj_bias if self.out_bias is None else self.out_bias:
            p += hidden
        return p

    def flop_per_token(self) -> int:
        """FLOP per token of the selective scan: ~5 per state element.

        h ← exp(Δ·A)·h + Δ·B·x (3 per element) and y = C·h (2 per element).
        """
        return 5 * self.state_elements()


@dataclass(frozen=True)
class IndexerSpec:
    """DeepSeek-V3.2's lightning indexer: the selector of sparse attention's top-k keys.

    Every sparse-attention layer runs its own indexer: per token it projects one
    key of ``head_dim`` (``wk``, h·d_I, then a LayerNorm) and ``n_heads`` index
    queries from the MLA query latent (``wq_b``, q_lora_rank·n_heads·d_I) with a
    weight per head (``weights_proj``, h·n_heads); the score of a cached key is
    ``Σ_heads w·ReLU(q·k)``.  It caches its keys in FP8, ``head_dim`` bytes plus one
    FP32 scale per 128 elements, per token per layer, beside the MLA latent and
    whatever the KV dtype (DeepSeek-V3.2-Exp inference/model.py: ``k_cache`` float8
    and ``k_scale_cache`` float32; vLLM deepseek_v2.py ``Indexer``: ``head_dim +
    head_dim // 128 * 4`` bytes; sglang#11309).  Engines keep the indexer whole on
    every TP rank (vLLM: ``wq_b`` a ReplicatedLinear, ``wk_weights_proj`` with
    ``disable_tp``, "no tensor parallel, just replicated").

    Attributes:
        n_heads, head_dim, topk: ``index_n_heads``, ``index_head_dim``, ``index_topk``.
        key_bytes: bytes per cached key element (1: FP8).
        scale_bytes, block: one scale of ``scale_bytes`` per ``block`` key elements.
    """

    n_heads: int
    head_dim: int
    topk: int
    key_bytes: float = 1.0
    scale_bytes: float = 4.0
    block: int = 128

    def cache_bytes_per_token(self) -> float:
        """Indexer-cache bytes one token adds per layer: ``d_I·1 + ceil(d_I / 128)·4`` (132 for d_I = 128)."""
        return self.head_dim * self.key_bytes + -(-self.head_dim // self.block) * self.scale_bytes

    def linear_params(self, hidden: int, q_lora_rank: int) -> int:
        """The indexer's matrices: ``wq_b`` (q_lora_rank·n_heads·d_I), ``wk`` (h·d_I), ``weights_proj`` (h·n_heads)."""
        return q_lora_rank * self.n_heads * self.head_dim + hidden * self.head_dim + hidden * self.n_heads

    def norm_params(self) -> int:
        """The key's LayerNorm: weight and bias of d_I."""
        return 2 * self.head_dim

    def flop_per_key(self) -> int:
        """FLOP per (query, cached key) pair: ``2·n_heads·d_I`` for the dot products, ``2·n_heads`` to weigh and sum."""
        return 2 * self.n_heads * self.head_dim + 2 * self.n_heads
