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

__all__ = ["ACTIVATION_BYTES", "CALL_LATENCY_S", "NORMS_PER_LAYER", "Parallelism", "smallest_fit"]

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
    def _per_gpu(self, experts_total, parts=ONE_PER_PARAM):
        """Parameters (or bytes) per GPU of the largest stage, ``experts_total`` routed-expert params counted.

        The embedding (V·h) sits on the first stage and the LM head (V·h, a second
        copy of a tied table when PP > 1) on the last, both split TP ways
        (vocabulary-parallel); the final norm (h) on the last stage, replicated.
        ``parts`` weighs each part's parameters (embedding, LM head, the rest,
        routed experts): all 1 counts parameters, bytes per parameter gives bytes
        (:meth:`core.models.ModelSpec.stored_bytes_per_param_parts`).  ``experts_total``
        broadcasts; the largest stage is taken per element.
        """
        m, tp = self.model, self.tp
        w_emb, w_head, w_rest, w_exp = parts
        h, n_layers = m.hidden_size, m.n_layers
        embedding = m.vocab_size * h
        head = 0 if (m.tie_word_embeddings and self.pp == 1) else embedding
        layer_fixed = m.fixed_params() - embedding - (0 if m.tie_word_embeddings else embedding) - h
        norms = NORMS_PER_LAYER * h
        kv_proj = 0 if m.mla else 2 * h * m.n_kv_heads * m.head_dim
        kv_proj_gpu = 0 if m.mla else 2 * h * m.head_dim * math.ceil(m.n_kv_heads / tp)
        best = 0.0
        stages = self.stage_layers()
        for i, n_s in enumerate(stages):
            frac = n_s / n_layers
            split = layer_fixed * frac - (norms + kv_proj) * n_s
            value = (split / tp + (norms + kv_proj_gpu) * n_s) * w_rest
            value = value + np.asarray(experts_total, float) * frac / (tp * self.ep) * w_exp
            value = value + ((embedding * w_emb / tp) if i == 0 else 0)
            value = value + ((head * w_head / tp + h * w_rest) if i == len(stages) - 1 else 0)
            best = np.maximum(best, value)
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
        _, moe_layers, per_expert = self.model.layer_split()
        experts = moe_layers * self.model.moe.experts_per_token * per_expert if self.model.moe else 0
        # With EP, a GPU's E/EP experts serve EP groups' tokens: per token of its own
        # batch it computes k_e experts' worth on average, so undo the 1/EP.
        return self._per_gpu(experts * self.ep)

    def weight_bytes_held(self, parts) -> float:
        """Weight bytes one GPU holds (the most loaded stage), every expert of its share.

        ``parts``: bytes per parameter of (embedding, LM head, the rest, routed
        experts), e.g. ``(p, p, p, p)`` for one format or the checkpoint's
        :meth:`~core.models.ModelSpec.stored_bytes_per_param_parts`; all 1 gives parameters.
        """
        m = self.model
        _, moe_layers, per_expert = m.layer_split()
        experts = moe_layers * m.moe.n_experts * per_expert if m.moe else 0
        if self.identity:
            w_emb, w_head, w_rest, w_exp = parts
            vh = m.vocab_size * m.hidden_size
            head = 0 if m.tie_word_embeddings else vh
            return float(vh * w_emb + head * w_head + (m.fixed_params() - vh - head) * w_rest + experts * w_exp)
        return self._per_gpu(experts, parts)

    def weight_bytes_read(self, tokens, parts):
        """Weight bytes one GPU reads per step for ``tokens`` tokens of its own batch (broadcasts).

        Dense: everything it holds.  MoE: the fixed part plus the experts of its
        share touched by the ``EP·tokens`` tokens routed over the groups,
        ``E/EP·(1 − (1 − k_e/E)^(EP·tokens))`` per MoE layer.  Weighed by the
        same ``parts`` as :meth:`weight_bytes_held`, so a GPU never reads more
        than it holds.
        """
        m = self.model
        if not m.moe:
            held = self.weight_bytes_held(parts)
            return np.full(np.shape(tokens), held) if np.ndim(tokens) else held
        e = m.moe
        _, moe_layers, per_expert = m.layer_split()
        share = e.n_experts / self.ep
        touched = share * (1.0 - (1.0 - e.experts_per_token / e.n_experts) ** (self.ep * np.asarray(tokens, float)))
        if self.identity:
            w_emb, w_head, w_rest, w_exp = parts
            vh = m.vocab_size * m.hidden_size
            head = 0 if m.tie_word_embeddings else vh
            fixed = vh * w_emb + head * w_head + (m.fixed_params() - vh - head) * w_rest
            out = fixed + moe_layers * per_expert * touched * w_exp
            return float(out) if np.ndim(out) == 0 else out
        # the experts the tokens touch, as a total the stages divide like the experts held
        return self._per_gpu(moe_layers * per_expert * touched * self.ep, parts)

    def params_read(self, tokens):
        """Parameters one GPU reads per step for ``tokens`` tokens of its own batch (broadcasts).

        Dense: everything it holds.  MoE: the fixed part plus the experts of its
        share touched by the ``EP·tokens`` tokens routed over the groups.
        """
        if self.identity:
            return self.model.params_read(tokens)
        return self.weight_bytes_read(tokens, ONE_PER_PARAM)

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

    def bytes_sent(self, batch, tokens_per_read):
        """Bytes one GPU sends per step (TP all-reduces + PP send + EP all-to-all)."""
        c = self.comm_parts(batch, tokens_per_read)
        return c["tp_bytes"] + c["pp_bytes"] + c["ep_bytes"]

    def allreduce_time_s(self, message_bytes):
        """One ring all-reduce: ``2·(TP−1)/TP · bytes / link + t_call`` seconds (0 at TP = 1)."""
        if self.tp == 1:
            return 0.0 * np.asarray(message_bytes, float)
        bw = self.link_bandwidth
        wire = 2.0 * (self.tp - 1) / self.tp * np.asarray(message_bytes, float)
        return (wire / bw if bw else 0.0 * wire) + self.call_latency_s

    def comm_time_s(self, batch, tokens_per_read):
        """Seconds one GPU spends communicating per step: bytes / link + calls × t_call."""
        c = self.comm_parts(batch, tokens_per_read)
        sent = c["tp_bytes"] + c["pp_bytes"] + c["ep_bytes"]
        calls = c["tp_calls"] + c["pp_calls"] + c["ep_calls"]
        wire = sent / self.link_bandwidth if self.link_bandwidth else 0.0 * sent
        return wire + calls * self.call_latency_s

    # -- memory per GPU ---------------------------------------------------------------
    def memory_bytes(self, bytes_per_weight: float, kv_bytes_per_sequence: float, batch: int,
                     reserve_bytes: float) -> float:
        """Bytes one GPU holds: its weights, the KV of PP micro-batches of ``batch`` for its layers, the reserve."""
        kv = self.pp * batch * kv_bytes_per_sequence * self.kv_share()
        return self.n_params * bytes_per_weight + kv + reserve_bytes


def smallest_fit(model: ModelSpec, *, bytes_per_weight: float, kv_bytes_per_sequence: float, batch: int,
                 reserve_bytes: float, capacity: float, ep: int = 1, gqa: bool = True,
                 max_node: int | None = 8, max_gpus: int = 1024) -> tuple[int, int] | None:
    """The smallest (TP, PP) whose per-GPU memory holds ``batch`` sequences, or None.

    TP is tried first over 1, 2, 4, ... up to the node (``max_node``; 8 when the
    part has no scale-up domain), each at PP = 1; past the node, pipeline stages
    are added at the node's TP.  TP must not exceed the query heads.

    Args:
        bytes_per_weight: p; kv_bytes_per_sequence: a whole sequence's KV bytes;
        reserve_bytes, capacity: bytes per GPU.
    """
    node = max_node or 8
    tps = [t for t in (2 ** i for i in range(11)) if t <= min(node, model.n_heads)]

    def fits(tp: int, pp: int) -> bool:
        plan = Parallelism(model, tp=tp, pp=pp, ep=ep, gqa=gqa)
        return plan.memory_bytes(bytes_per_weight, kv_bytes_per_sequence, batch, reserve_bytes) <= capacity

    for tp in tps:
        if fits(tp, 1):
            return tp, 1
    tp = tps[-1]
    pp = 2
    while pp <= model.n_layers and tp * pp * ep <= max_gpus:
        if fits(tp, pp):
            return tp, pp
        pp *= 2
    return None
