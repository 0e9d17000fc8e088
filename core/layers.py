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
(Qwen3-Next's gated delta-net, ``linear_*`` config keys) and
:class:`MambaSpec` (Mamba-2 blocks of Nemotron-H / Granite-4.0-H, ``mamba_*`` /
``ssm_*`` keys; Mamba-1 blocks of Jamba).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

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
    """

    mixer: str = "attention"
    window: int | None = None
    chunk: int | None = None
    kv_shared: bool = False
    mlp: MLPKind = MLPKind()

    def __post_init__(self):
        if self.mixer not in MIXERS:
            raise ValueError(f"unknown mixer {self.mixer!r}; accepted: {', '.join(MIXERS)}")

    @property
    def attention(self) -> str:
        """The mixer in one word: ``full``, ``sliding``, ``chunked``, ``shared_kv``, ``linear``, ``mamba``, ``none``."""
        if self.mixer == "linear_attention":
            return "linear"
        if self.mixer != "attention":
            return self.mixer
        if self.kv_shared:
            return "shared_kv"
        if self.window is not None:
            return "sliding"
        if self.chunk is not None:
            return "chunked"
        return "full"

    @property
    def allocates_kv(self) -> bool:
        """Whether the layer holds KV cache of its own (an attention layer that does not share)."""
        return self.mixer == "attention" and not self.kv_shared

    @property
    def token_cap(self) -> int | None:
        """Most tokens of KV the layer's attention looks at (window or chunk), or None for all S."""
        if self.mixer != "attention":
            return None
        return self.window if self.window is not None else self.chunk

    def label(self) -> str:
        """The kind in words, e.g. ``"sliding window 4,096 + gated MLP"``."""
        mixer = {
            "full": "full attention",
            "sliding": f"sliding window {self.window:,}" if self.window else "sliding window",
            "chunked": f"chunked attention {self.chunk:,}" if self.chunk else "chunked attention",
            "shared_kv": "attention on a shared KV cache",
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

    @property
    def n_layers(self) -> int:
        """L, every block."""
        return sum(n for _, n in self.runs)

    def groups(self) -> tuple[tuple[LayerKind, int], ...]:
        """``((kind, count), ...)``: each distinct kind once, with its count, in order of first appearance."""
        counts: dict[LayerKind, int] = {}
        for kind, n in self.runs:
            counts[kind] = counts.get(kind, 0) + n
        return tuple(counts.items())

    def count(self, predicate) -> int:
        """Blocks whose kind satisfies ``predicate(kind)``."""
        return sum(n for kind, n in self.groups() if predicate(kind))

    def kind_at(self, index: int) -> LayerKind:
        """The kind of block ``index`` (0-based).

        Raises:
            IndexError: ``index`` outside 0..L-1.
        """
        start = 0
        for kind, n in self.runs:
            if start <= index < start + n:
                return kind
            start += n
        raise IndexError(f"layer {index} outside 0..{start - 1}")

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


@dataclass(frozen=True)
class LinearAttentionSpec:
    """Gated delta-net / linear-attention layers (Qwen3-Next, ``linear_*`` keys).

    The layer keeps, per sequence, a recurrent state of ``n_value_heads ×
    key_head_dim × value_head_dim`` elements and a causal-convolution state of
    ``conv_dim × (conv_kernel − 1)`` elements, where ``conv_dim = 2·h_k·d_k +
    h_v·d_v``; neither grows with S (transformers, models/qwen3_next/
    modeling_qwen3_next.py, Qwen3NextGatedDeltaNet).

    Attributes:
        n_key_heads, n_value_heads, key_head_dim, value_head_dim: ``linear_num_key_heads`` ...
        conv_kernel: ``linear_conv_kernel_dim``.
    """

    n_key_heads: int
    n_value_heads: int
    key_head_dim: int
    value_head_dim: int
    conv_kernel: int

    @property
    def conv_dim(self) -> int:
        return 2 * self.n_key_heads * self.key_head_dim + self.n_value_heads * self.value_head_dim

    def state_elements(self) -> int:
        """Recurrent-state elements per sequence per layer."""
        return self.n_value_heads * self.key_head_dim * self.value_head_dim

    def conv_elements(self) -> int:
        """Convolution-state elements per sequence per layer."""
        return self.conv_dim * max(self.conv_kernel - 1, 0)

    def params(self, hidden: int) -> int:
        """Weights of one layer's mixer: in_proj_qkvz, in_proj_ba, conv1d, dt_bias, A_log, norm, out_proj."""
        key_dim, value_dim = self.n_key_heads * self.key_head_dim, self.n_value_heads * self.value_head_dim
        qkvz = hidden * (2 * key_dim + 2 * value_dim)
        ba = hidden * 2 * self.n_value_heads
        conv = self.conv_dim * self.conv_kernel
        return qkvz + ba + conv + 2 * self.n_value_heads + self.value_head_dim + value_dim * hidden

    def flop_per_token(self) -> int:
        """FLOP per token of the gated delta rule: ~7 per state element.

        Per head, with state S (d_k × d_v): the decay a·S (1), the delta's k·S
        (2), the rank-1 update S += k⊗δ (2) and the read-out q·S (2): 7 per
        element.  Small beside the projections; counted so it is not silent.
        """
        return 7 * self.state_elements()


@dataclass(frozen=True)
class MambaSpec:
    """Mamba blocks (Mamba-2 of Nemotron-H / Granite-4.0-H; Mamba-1 of Jamba).

    Mamba-2 (``version=2``): ``n_heads`` heads of ``head_dim`` channels,
    ``d_inner = n_heads·head_dim``; state ``n_heads·head_dim·d_state``; conv
    over ``conv_dim = d_inner + 2·n_groups·d_state`` channels with kernel
    ``d_conv`` (state ``conv_dim·(d_conv − 1)``).  Weights: in_proj
    ``h·(2·d_inner + 2·n_groups·d_state + n_heads)``, conv ``conv_dim·d_conv``
    (+ bias), dt_bias, A_log and D (``n_heads`` each), a gated norm
    (``d_inner``), out_proj ``d_inner·h`` (transformers, models/nemotron_h and
    models/granitemoehybrid, the Mamba2Mixer).  Mamba-1 (``version=1``):
    state ``d_inner·d_state``, conv ``d_inner·(d_conv − 1)``; weights in_proj
    ``h·2·d_inner``, conv ``d_inner·d_conv`` + bias, x_proj ``d_inner·(dt_rank
    + 2·d_state)``, dt_proj ``dt_rank·d_inner + d_inner``, A_log
    ``d_inner·d_state``, D ``d_inner``, out_proj ``d_inner·h`` (models/jamba).
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
            return p + ((2 * d + hidden) if self.proj_bias else 0)
        in_proj = hidden * (2 * self.d_inner + 2 * self.n_groups * self.d_state + self.n_heads)
        p = in_proj + conv + 3 * self.n_heads + self.d_inner + self.d_inner * hidden
        if self.proj_bias:
            p += 2 * self.d_inner + 2 * self.n_groups * self.d_state + self.n_heads + hidden
        return p

    def flop_per_token(self) -> int:
        """FLOP per token of the selective scan: ~5 per state element.

        h ← exp(Δ·A)·h + Δ·B·x (3 per element) and y = C·h (2 per element).
        """
        return 5 * self.state_elements()
