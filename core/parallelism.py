"""Many GPUs: tensor, pipeline and expert parallelism and replicas, per GPU.

A :class:`Parallelism` says how one model is split over GPUs and answers, per
GPU, what the roofline needs: the parameters a GPU holds, computes with and
reads per step, the share of a sequence's KV cache it holds, and the bytes it
sends and the time it spends communicating per step.  At TP = PP = EP = 1 every
answer is the model's own (the single-GPU lab, unchanged).

Layout and formulas:

* **Tensor parallelism** (Megatron-LM: Shoeybi et al. 2019, arXiv:1909.08053,
  section 3): every weight matrix is split over TP GPUs, so a GPU holds and reads
  ``1/TP`` of the weights; the normalisation weights are replicated (assumed two
  RMSNorms of h per layer plus the final norm: :data:`NORMS_PER_LAYER`).  Query
  heads split TP ways; each GPU needs ``ceil(h_kv / TP)`` KV heads, so once TP
  exceeds h_kv the K/V heads (their projection weights and their cache) are
  *replicated*: Llama-3-70B at TP >= 8 holds 40,960 bytes of KV per token per GPU,
  not 327,680 / TP.  An MLA latent is shared by all heads and so replicated on
  every GPU.  Each layer ends attention and the MLP with an all-reduce of the
  activations, ``B·k·h·a`` bytes (article 004, section 07: "two all-reduces
  forward ... per transformer layer").
* **Ring all-reduce**: each GPU sends ``2·(TP−1)/TP`` times the message
  (Patarasuk & Yuan 2009, "Bandwidth optimal all-reduce algorithms for clusters
  of workstations", JPDC 69(2); NCCL's bus-bandwidth factor, nccl-tests
  doc/PERFORMANCE.md), so one call takes ``2·(TP−1)/TP · bytes / link + t_call``
  with the link's per-direction bandwidth and :data:`CALL_LATENCY_S`.
* **Pipeline parallelism**: layers split into PP stages (the first stages take
  the remainder); the first stage also holds the embedding, the last the LM head
  and final norm.  A decode token crosses every stage, so its latency is the sum
  of the stage times plus a point-to-point send of ``B·k·h·a / TP`` bytes per
  boundary; throughput needs at least PP micro-batches of B in flight, and each
  stage then holds its layers' KV for all of them.  The bubble of one pass of M
  micro-batches is ``(PP−1)/(M+PP−1)`` (article 004, section 07).
* **Expert parallelism** (MoE): the routed experts of each MoE layer are spread
  over EP GPU groups (E/EP each, split TP ways inside a group); attention is data
  parallel across the groups, each serving its own B sequences.  Each MoE layer
  dispatches every token to its k_e experts and combines the results, an
  all-to-all of ``B·k·k_e·h·a·(EP−1)/EP`` bytes each way per group (the dispatch
  and combine AllToAll of GShard, Lepikhin et al. 2020, arXiv:2006.16668, section 2),
  sent TP ways in slices; each call also pays :data:`CALL_LATENCY_S` (as does the
  pipeline's send — the same small-message figure, an assumption).  A GPU's experts see the
  tokens of all EP groups, ``EP·B·k``, so it touches
  ``(E/EP)·(1 − (1 − k_e/E)^(EP·B·k))`` of them per step (uniform routing, as
  :meth:`ModelSpec.params_read`).
* **Replicas** (data parallel): whole copies; throughput, GPUs and memory
  multiply, nothing per GPU changes.

Communication is added to the step time, not overlapped: in decode the
all-reduces sit between one layer's matmuls and the next (an assumption; engines
overlap some of it).  Activations travel in :data:`ACTIVATION_BYTES` (BF16).
All links are the accelerator's scale-up link; beyond the largest node a real
system uses the slower scale-out network, which the lab names in a warning.

Only ``ModelSpec``'s public API is used; the embedding and head size come from
``vocab_size`` and ``tie_word_embeddings`` (fields of the spec).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .models import ModelSpec

__all__ = ["ACTIVATION_BYTES", "CALL_LATENCY_S", "NORMS_PER_LAYER", "Parallelism"]

#: Bytes per activation element on the wire: BF16 (engines all-reduce in the activation dtype).
ACTIVATION_BYTES = 2.0

#: Fixed cost of one collective call, seconds.  A small all-reduce on two NVLink-
#: connected H100s measures about 6 µs (NVIDIA/nccl issue #1259, nccl-tests with
#: CUDA graphs; the same thread shows it growing with the GPU count), so this is a
#: lower bound for 8 GPUs.
CALL_LATENCY_S = 6e-6

#: Normalisation weights per layer assumed replicated on every TP rank: two RMSNorms of h.
NORMS_PER_LAYER = 2

#: Weights of (embedding, LM head, the rest, routed experts) that count parameters rather than bytes.
ONE_PER_PARAM = (1.0, 1.0, 1.0, 1.0)


@dataclass(frozen=True)
class Parallelism:
    """How one model is split over GPUs, and what one GPU holds, reads and sends.

    Attributes:
        model: the :class:`ModelSpec`.
        tp, pp, ep: tensor-, pipeline- and expert-parallel degrees (ep is 1 for a
            dense model).
        replicas: whole copies (data parallel).
        link_bandwidth: the scale-up link's bytes/s per direction per GPU, or None
            when the catalogue has no figure (communication is then not counted).
        call_latency_s: fixed seconds per collective call.
        activation_bytes: bytes per activation element sent.
        gqa: grouped-query attention on (the lab's GQA lever): which h_kv the KV split uses.

    Per-GPU quantities are for the most loaded pipeline stage (it sets the step).
    """

    model: ModelSpec
    tp: int = 1
    pp: int = 1
    ep: int = 1
    replicas: int = 1
    link_bandwidth: float | None = None
    call_latency_s: float = CALL_LATENCY_S
    activation_bytes: float = ACTIVATION_BYTES
    gqa: bool = True

    # -- shape -------------------------------------------------------------------
    @property
    def identity(self) -> bool:
        """One GPU per replica (TP = PP = EP = 1): every per-GPU answer is the model's."""
        return self.tp == self.pp == self.ep == 1

    @property
    def gpus_per_replica(self) -> int:
        """TP·PP·EP GPUs hold one copy of the model."""
        return self.tp * self.pp * self.ep

    @property
    def gpus(self) -> int:
        """Every GPU: TP·PP·EP·replicas."""
        return self.gpus_per_replica * self.replicas

    def stage_layers(self) -> tuple[int, ...]:
        """Layers per pipeline stage (the first ``L mod PP`` stages take one more)."""
        q, r = divmod(self.model.n_layers, self.pp)
        return (q + 1,) * r + (q,) * (self.pp - r)

    @property
    def layers_per_gpu(self) -> int:
        """Layers of the largest stage, ``ceil(L / PP)``."""
        return -(-self.model.n_layers // self.pp)

    def kv_heads_per_gpu(self, gqa: bool | None = None) -> int:
        """KV heads one GPU keeps: ``ceil(h_kv / TP)`` (replicated once TP > h_kv); MLA: its one latent."""
        gqa = self.gqa if gqa is None else gqa
        if self.model.mla and gqa:
            return 1
        return math.ceil(self._h_kv(gqa) / self.tp)

    def query_heads_per_gpu(self) -> int:
        """Query heads per GPU, ``ceil(n_heads / TP)``."""
        return math.ceil(self.model.n_heads / self.tp)

    def _h_kv(self, gqa: bool | None = None) -> int:
        gqa = self.gqa if gqa is None else gqa
        return self.model.n_kv_heads if gqa else self.model.n_heads

    # -- parameters per GPU --------------------------------------------------------
    def stage_parts(self, parts=ONE_PER_PARAM) -> tuple[tuple[float, float], ...]:
        """Per pipeline stage, one GPU's ``(fixed, routed)`` weights: what every step reads, and every routed expert.

        The embedding (V·h) sits on the first stage and the LM head (V·h, a second
        copy of a tied table when PP > 1) on the last, both split TP ways
        (vocabulary-parallel); the final norm (h) on the last stage, replicated.
        ``parts`` weighs each part's parameters (embedding, LM head, the rest,
        routed experts): all 1 counts parameters, bytes per parameter gives bytes
        (:meth:`core.models.ModelSpec.stored_bytes_per_param_parts`).  A step whose
        tokens touch a fraction f of the routed experts reads ``fixed + f·routed`` on
        that stage (:meth:`weight_bytes_read`); the most loaded stage sets the step.
        """
        m, tp = self.model, self.tp
        w_emb, w_head, w_rest, w_exp = parts
        h, n_layers = m.hidden_size, m.n_layers
        _, moe_layers, per_expert = m.layer_split()
        experts_total = moe_layers * m.moe.n_experts * per_expert if m.moe else 0
        vh = m.vocab_size * h
        if self.identity:
            head = 0 if m.tie_word_embeddings else vh
            return ((float(vh * w_emb + head * w_head + (m.fixed_params() - vh - head) * w_rest),
                     float(experts_total * w_exp)),)
        head = 0 if (m.tie_word_embeddings and self.pp == 1) else vh
        layer_fixed = m.fixed_params() - vh - (0 if m.tie_word_embeddings else vh) - h
        norms = NORMS_PER_LAYER * h
        kv_proj = 0 if m.mla else 2 * h * m.n_kv_heads * m.head_dim
        kv_proj_gpu = 0 if m.mla else 2 * h * m.head_dim * math.ceil(m.n_kv_heads / tp)
        stages = self.stage_layers()
        out = []
        for i, n_s in enumerate(stages):
            frac = n_s / n_layers
            split = layer_fixed * frac - (norms + kv_proj) * n_s
            fixed = (split / tp + (norms + kv_proj_gpu) * n_s) * w_rest
            fixed += (vh * w_emb / tp) if i == 0 else 0
            fixed += (head * w_head / tp + h * w_rest) if i == len(stages) - 1 else 0
            out.append((float(fixed), float(experts_total * frac / (tp * self.ep) * w_exp)))
        return tuple(out)

    def _per_gpu(self, fraction, parts=ONE_PER_PARAM):
        """Weights per GPU of the most loaded stage when a fraction ``fraction`` of the routed experts counts.

        ``max over stages of fixed + fraction·routed`` (:meth:`stage_parts`); broadcasts over ``fraction``.
        """
        f = np.asarray(fraction, float)
        best = 0.0
        for fixed, routed in self.stage_parts(parts):
            best = np.maximum(best, fixed + routed * f)
        return float(best) if np.ndim(best) == 0 else best

    @cached_property
    def n_params(self) -> float:
        """Parameters one GPU holds (the most loaded stage)."""
        return self.weight_bytes_held(ONE_PER_PARAM)

    @cached_property
    def n_active_params(self) -> float:
        """Parameters one GPU computes with per token (FLOP per token per GPU = 2 × this)."""
        if self.identity:
            return float(self.model.n_active_params)
        # With EP, a GPU's E/EP experts serve EP groups' tokens: per token of its own
        # batch it computes k_e experts' worth on average (k_e/E of all experts, times EP).
        e = self.model.moe
        return self._per_gpu(e.experts_per_token / e.n_experts * self.ep if e else 0.0)

    def weight_bytes_held(self, parts) -> float:
        """Weight bytes one GPU holds (the most loaded stage), every expert of its share.

        ``parts``: bytes per parameter of (embedding, LM head, the rest, routed
        experts), e.g. ``(p, p, p, p)`` for one format or the checkpoint's
        :meth:`~core.models.ModelSpec.stored_bytes_per_param_parts`; all 1 gives parameters.
        """
        return self._per_gpu(1.0, parts)

    def experts_per_gpu(self) -> float:
        """Routed experts per MoE layer on one GPU group, E/EP (0 for a dense model)."""
        return self.model.moe.n_experts / self.ep if self.model.moe else 0.0

    def experts_touched_per_gpu(self, tokens) -> float:
        """Of a GPU's E/EP experts per MoE layer, how many ``EP·tokens`` routed tokens touch."""
        if not self.model.moe:
            return 0.0
        e = self.model.moe
        return float(self.experts_per_gpu() * (1.0 - (1.0 - e.experts_per_token / e.n_experts)
                                               ** (self.ep * float(tokens))))

    # -- KV cache per GPU -------------------------------------------------------------
    def kv_share(self, gqa: bool | None = None) -> float:
        """Fraction of one sequence's KV cache one GPU holds and reads per step.

        ``ceil(h_kv/TP)/h_kv`` of the heads (1 for an MLA latent: replicated) times
        the largest stage's share of the layers.  A recurrent layer's fixed state
        (Mamba, linear attention) is assumed to split the same way.
        """
        if self.identity:
            return 1.0
        gqa = self.gqa if gqa is None else gqa
        heads = 1.0 if (self.model.mla and gqa) else self.kv_heads_per_gpu(gqa) / self._h_kv(gqa)
        return heads * self.layers_per_gpu / self.model.n_layers

    def attention_share(self) -> float:
        """Fraction of a step's attention FLOPs one GPU does: its query heads and layers."""
        if self.identity:
            return 1.0
        return self.query_heads_per_gpu() / self.model.n_heads * self.layers_per_gpu / self.model.n_layers

    # -- communication per GPU per step ------------------------------------------------
    def message_bytes(self, batch, tokens_per_read):
        """One all-reduce's message, the activations ``B·k·h·a`` bytes (broadcasts)."""
        return np.asarray(batch, float) * tokens_per_read * self.model.hidden_size * self.activation_bytes

    def _moe_layers_per_gpu(self) -> float:
        _, moe_layers, _ = self.model.layer_split()
        return moe_layers * self.layers_per_gpu / self.model.n_layers

    def comm_parts(self, batch, tokens_per_read) -> dict:
        """Bytes one GPU sends and calls it makes per step, by kind (arrays broadcast over ``batch``).

        Returns:
            dict with ``tp_bytes``, ``tp_calls`` (two all-reduces per layer),
            ``pp_bytes``, ``pp_calls`` (one send to the next stage), ``ep_bytes``,
            ``ep_calls`` (dispatch and combine per MoE layer).
        """
        msg = self.message_bytes(batch, tokens_per_read)
        layers = self.layers_per_gpu
        tp = self.tp
        out = {"tp_bytes": 0.0 * msg, "tp_calls": 0, "pp_bytes": 0.0 * msg, "pp_calls": 0,
               "ep_bytes": 0.0 * msg, "ep_calls": 0}
        if tp > 1:
            out["tp_bytes"] = 2 * layers * 2.0 * (tp - 1) / tp * msg
            out["tp_calls"] = 2 * layers
        if self.pp > 1:
            out["pp_bytes"] = msg / tp
            out["pp_calls"] = 1
        if self.ep > 1 and self.model.moe:
            moe_layers = self._moe_layers_per_gpu()
            k_e = self.model.moe.experts_per_token
            out["ep_bytes"] = 2 * moe_layers * k_e * msg * (self.ep - 1) / self.ep / tp
            out["ep_calls"] = 2 * moe_layers
        return out
