"""Many GPUs: tensor, pipeline and expert parallelism and replicas, per GPU.

A :class:`Parallelism` says how one model is split over GPUs and answers, per
GPU, what the roofline needs: the parameters a GPU holds, computes with and
reads per step, the share of a sequence's KV cache it holds, and the bytes it
sends and the time it spends communicating per step.  At TP = PP = EP = 1 every
answer is the model's own (the single-GPU lab, unchanged).

Layout and formulas:

* **Tensor parallelism** (Megatron-LM: Shoeybi et al. 2019, arXiv:1909.08053,
  section 3): the large weight matrices are split over TP GPUs, so a GPU holds and
  reads ``1/TP`` of them; what serving engines keep whole on every rank is
  replicated: the norms, q/k norms, MLA's down-projections (``q_a_proj``,
  ``kv_a_proj_with_mqa``) and their norms, the MoE router, the shared-expert gate
  and the sparse-attention indexer, following vLLM's and SGLang's model code
  (``ReplicatedLinear`` there: :meth:`core.models.ModelSpec.replicated_params`).
  Query heads split TP ways; each GPU needs ``ceil(h_kv / TP)`` KV heads, so once
  TP exceeds h_kv the K/V heads (their projection weights and their cache) are
  *replicated*: Llama-3-70B at TP >= 8 holds 40,960 bytes of KV per token per GPU,
  not 327,680 / TP.  An MLA latent is shared by all heads and so replicated on
  every GPU, as are a sparse-attention indexer's keys; Mamba and linear-attention
  states split by heads (TP ways).  Each layer ends attention and the MLP with an
  all-reduce of the activations, ``B·k·h·a`` bytes (article 004, section 07: "two
  all-reduces forward ... per transformer layer").
* **Ring all-reduce**: each GPU sends ``2·(TP−1)/TP`` times the message
  (Patarasuk & Yuan 2009, "Bandwidth optimal all-reduce algorithms for clusters
  of workstations", JPDC 69(2); NCCL's bus-bandwidth factor, nccl-tests
  doc/PERFORMANCE.md), so one call takes ``2·(TP−1)/TP · bytes / link + t_call``
  with the link's per-direction bandwidth and :data:`CALL_LATENCY_S`.
* **Pipeline parallelism**: layers split into PP stages as vLLM splits them
  (``L // PP`` each, the remainder to the stages before the last, from the
  second-to-last backwards: vllm/distributed/utils.py ``get_pp_indices``); the
  first stage also holds the embedding, the last the LM head and final norm.  Each
  stage's own layers are counted (a hybrid's stages differ in kind, not only in
  count): each stage's GPU runs its own step (:mod:`core.step`), the slowest sets the
  pipeline's pace, and the stage that runs out of memory first decides what fits.  A
  decode token crosses every stage, so its latency is at most PP × the slowest stage's
  step, each stage adding a point-to-point send of ``B·k·h·a / TP`` bytes; throughput
  needs at least PP micro-batches of B in flight, and each stage then holds its layers'
  KV for all of them.  The
  bubble of one pass of M micro-batches is ``(PP−1)/(M+PP−1)`` (article 004,
  section 07).
* **Expert parallelism** (MoE): the routed experts of each MoE layer are spread
  over EP GPU groups, split TP ways inside a group; attention is data parallel
  across the groups, each serving its own B sequences.  E experts do not always
  divide: the fullest group holds ``ceil(E/EP)`` of them, and the fullest GPU
  decides what fits (DeepSeek-V3 decodes at EP 144 with 2 routed experts on every
  GPU, 32 of the slots holding redundant copies: deepseek-ai/open-infra-index,
  "Day 6", decoding phase).  Each MoE layer dispatches every token to its k_e
  experts and combines the results, an all-to-all of ``B·k·k_e·h·a·(EP−1)/EP``
  bytes each way per group (the dispatch and combine AllToAll of GShard, Lepikhin
  et al. 2020, arXiv:2006.16668, section 2), sent TP ways in slices; each call also
  pays :data:`CALL_LATENCY_S` (as does the pipeline's send — the same small-message
  figure, an assumption).  A GPU's experts see the tokens of all EP groups,
  ``EP·B·k``, so it touches ``ceil(E/EP)·(1 − (1 − k_e/E)^(EP·B·k))`` of them per
  step (uniform routing, as :meth:`ModelSpec.params_read`).
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
from bisect import bisect_left
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .models import ModelSpec

__all__ = ["ACTIVATION_BYTES", "CALL_LATENCY_S", "NORMS_PER_LAYER", "Parallelism", "StageParts", "smallest_fit"]

#: Bytes per activation element on the wire: BF16 (engines all-reduce in the activation dtype).
ACTIVATION_BYTES = 2.0

#: Fixed cost of one collective call, seconds.  A small all-reduce on two NVLink-
#: connected H100s measures about 6 µs (NVIDIA/nccl issue #1259, nccl-tests with
#: CUDA graphs; the same thread shows it growing with the GPU count), so this is a
#: lower bound for 8 GPUs.
CALL_LATENCY_S = 6e-6

#: Normalisation weights per layer of a Llama-style block, two RMSNorms of h (kept for callers; the split
#: itself reads each block's own norms and replicated matrices from :meth:`ModelSpec.replicated_params`).
NORMS_PER_LAYER = 2

#: Weights of (embedding, LM head, the rest, routed experts) that count parameters rather than bytes.
ONE_PER_PARAM = (1.0, 1.0, 1.0, 1.0)


@dataclass(frozen=True)
class StageParts:
    """The parameters one GPU of one pipeline stage holds, by how TP divides them.

    One GPU holds ``(embedding + head + split + experts) / TP + replicated`` parameters:
    ``embedding`` (V·h and any other table, first stage) and ``head`` (the LM head, last
    stage) are split vocabulary-parallel; ``split`` is every matrix TP divides; ``replicated``
    what each rank keeps whole (norms, the final norm, MLA's down-projections, the router, the
    indexer, the K/V projections' ``ceil(h_kv/TP)`` heads); ``experts`` the ``ceil(E/EP)`` routed
    experts per MoE layer of the GPU's group (split TP ways).

    Attributes:
        stage: the stage's index; first: its first layer; layers: its layer count.
        moe_layers: its MoE layers; experts_per_layer: routed experts per MoE layer on one GPU group.
    """

    stage: int
    first: int
    layers: int
    moe_layers: int
    experts_per_layer: int
    embedding: int
    head: int
    split: int
    replicated: int
    experts: int

    def per_gpu(self, tp: int, parts=ONE_PER_PARAM) -> float:
        """Parameters (``parts`` all 1) or bytes (bytes per parameter of embedding, LM head, rest, experts)."""
        w_emb, w_head, w_rest, w_exp = parts
        return (self.embedding * w_emb / tp + self.head * w_head / tp + (self.split / tp + self.replicated) * w_rest
                + self.experts * w_exp / tp)


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
        """Layers per pipeline stage as vLLM splits them: ``L // PP`` each, and the ``L mod PP`` left over one each
        to the stages before the last, from the second-to-last backwards (vllm/distributed/utils.py
        ``get_pp_indices``: the first and last stages hold the embedding and the LM head)."""
        q, r = divmod(self.model.n_layers, self.pp)
        counts = [q] * self.pp
        for i in range(2, r + 2):
            counts[-i] += 1
        return tuple(counts)

    def stage_kinds(self, stage: int) -> tuple[tuple, ...]:
        """``((kind, count), ...)`` of the layers of pipeline stage ``stage``, in layer order."""
        counts = self.stage_layers()
        start = sum(counts[:stage])
        return self.model.stack.runs_between(start, start + counts[stage])

    def stage_groups(self, stage: int) -> tuple[tuple, ...]:
        """``((kind, count), ...)`` of pipeline stage ``stage``: each distinct kind once, with its count there."""
        counts = self.stage_layers()
        start = sum(counts[:stage])
        return self.model.stack.groups_between(start, start + counts[stage])

    def stage_parts(self, stage: int) -> StageParts:
        """What one GPU of ``stage`` holds, by how TP divides it (:class:`StageParts`)."""
        m, tp = self.model, self.tp
        h, vh = m.hidden_size, m.vocab_size * m.hidden_size
        last = stage == self.pp - 1
        split = replicated = moe_layers = 0
        for kind, n in self.stage_groups(stage):
            kv, per_head = m.kv_projection_params(kind)
            repl = m.replicated_params(kind)
            split += n * (m.layer_params(kind) - repl - kv)
            replicated += n * (repl + per_head * math.ceil(m.n_kv_heads / tp))
            if kind.mlp.kind == "moe" and m.moe:
                moe_layers += n
        per_expert = m.layer_split()[2]
        experts = self.experts_held_per_layer()
        counts = self.stage_layers()
        final_norm = h if m.final_norm_params is None else m.final_norm_params
        head = 0 if (m.tie_word_embeddings and self.pp == 1) else vh
        return StageParts(
            stage=stage, first=sum(counts[:stage]), layers=counts[stage], moe_layers=moe_layers,
            experts_per_layer=experts,
            embedding=(vh + m.extra_params) if stage == 0 else 0, head=head if last else 0,
            split=split, replicated=replicated + (final_norm if last else 0),
            experts=moe_layers * experts * per_expert)

    def experts_held_per_layer(self) -> int:
        """Routed experts per MoE layer on the fullest GPU group: ``ceil(E/EP)`` (0 for a dense model)."""
        return math.ceil(self.model.moe.n_experts / self.ep) if self.model.moe else 0

    @cached_property
    def _stages(self) -> tuple[StageParts, ...]:
        return tuple(self.stage_parts(i) for i in range(self.pp))

    def stage_weights(self, parts=ONE_PER_PARAM) -> tuple[tuple[float, float], ...]:
        """Per pipeline stage, one GPU's ``(fixed, routed)``: what every step reads, and its routed experts
        (parameters, or bytes under ``parts``).  A step whose tokens touch a fraction f of the experts reads
        ``fixed + f·routed`` there."""
        w_emb, w_head, w_rest, w_exp = parts
        return tuple((float(st.per_gpu(self.tp, (w_emb, w_head, w_rest, 0.0))), float(st.experts * w_exp / self.tp))
                     for st in self._stages)

    def fullest_stage(self, parts=ONE_PER_PARAM) -> StageParts:
        """The stage whose GPU holds the most (parameters, or bytes under ``parts``)."""
        return max(self._stages, key=lambda st: st.per_gpu(self.tp, parts))

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
    def _per_gpu(self, expert_fraction=1.0, parts=ONE_PER_PARAM):
        """Parameters (or bytes) per GPU of the largest stage with ``expert_fraction`` of its routed experts counted.

        ``parts`` weighs each part's parameters (embedding, LM head, the rest, routed experts):
        all 1 counts parameters, bytes per parameter gives bytes
        (:meth:`core.models.ModelSpec.stored_bytes_per_param_parts`).  ``expert_fraction``
        broadcasts (the experts a step touches); the largest stage is taken per element.
        """
        w_emb, w_head, w_rest, w_exp = parts
        frac = np.asarray(expert_fraction, float)
        best = 0.0
        for st in self._stages:
            fixed = st.per_gpu(self.tp, (w_emb, w_head, w_rest, 0.0))
            best = np.maximum(best, fixed + frac * st.experts * w_exp / self.tp)
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
        if not self.model.moe:
            return self._per_gpu(0.0)
        e = self.model.moe
        # A GPU's ceil(E/EP) experts serve the tokens of all EP groups: per token of its own batch it computes
        # k_e/E of its experts' weights times EP (k_e experts' worth when EP divides E).
        return self._per_gpu(e.experts_per_token / e.n_experts * self.ep)

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
        return self._per_gpu(1.0, parts)

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
        # Of each of its experts, the chance that one of the EP·tokens routed tokens picks it.
        fraction = 1.0 - (1.0 - e.experts_per_token / e.n_experts) ** (self.ep * np.asarray(tokens, float))
        touched = e.n_experts * fraction
        if self.identity:
            w_emb, w_head, w_rest, w_exp = parts
            vh = m.vocab_size * m.hidden_size
            head = 0 if m.tie_word_embeddings else vh
            fixed = vh * w_emb + head * w_head + (m.fixed_params() - vh - head) * w_rest
            out = fixed + moe_layers * per_expert * touched * w_exp
            return float(out) if np.ndim(out) == 0 else out
        return self._per_gpu(fraction, parts)

    def params_read(self, tokens):
        """Parameters one GPU reads per step for ``tokens`` tokens of its own batch (broadcasts).

        Dense: everything it holds.  MoE: the fixed part plus the experts of its
        share touched by the ``EP·tokens`` tokens routed over the groups.
        """
        if self.identity:
            return self.model.params_read(tokens)
        return self.weight_bytes_read(tokens, ONE_PER_PARAM)

    def experts_per_gpu(self) -> float:
        """Routed experts per MoE layer on the fullest GPU group, ``ceil(E/EP)`` (0 for a dense model)."""
        return float(self.experts_held_per_layer())

    def experts_touched_per_gpu(self, tokens) -> float:
        """Of a GPU's ``ceil(E/EP)`` experts per MoE layer, how many ``EP·tokens`` routed tokens touch."""
        if not self.model.moe:
            return 0.0
        e = self.model.moe
        return float(self.experts_per_gpu() * (1.0 - (1.0 - e.experts_per_token / e.n_experts)
                                               ** (self.ep * float(tokens))))

    # -- KV cache per GPU -------------------------------------------------------------
    def _term_tp_factor(self, term, gqa: bool) -> float:
        if term.tp_share == "replicated":
            return 1.0
        if term.tp_share == "even":
            return 1.0 / self.tp
        h_kv = self._h_kv(gqa)
        return math.ceil(h_kv / self.tp) / h_kv

    def stage_term_shares(self, terms, gqa: bool) -> list[list[float]]:
        """Per pipeline stage, the share of each cache term one of its GPUs holds: the term's layers in the
        stage over all its layers, times how its ``tp_share`` divides it over TP (:class:`core.models.KVTerm`)."""
        out, start = [], 0
        for n_stage in self.stage_layers():
            end = start + n_stage
            shares = []
            for t in terms:
                # layer_indices are in order: the stage's count by bisection, not a pass over every layer
                here = (bisect_left(t.layer_indices, end) - bisect_left(t.layer_indices, start)
                        if t.layer_indices else t.layers)
                shares.append(here / t.layers * self._term_tp_factor(t, gqa) if here else 0.0)
            out.append(shares)
            start = end
        return out

    def _stage_cache(self, value, bytes_per_element: float, gqa: bool) -> list:
        """Per pipeline stage, one GPU's share of ``Σ_terms value(term)`` (``value`` is the whole term's bytes)."""
        terms = self.model.kv_terms(bytes_per_element, gqa)
        return [sum((share * value(t) for t, share in zip(terms, shares, strict=True) if share), 0.0)
                for shares in self.stage_term_shares(terms, gqa)]

    def kv_bytes_per_token_per_stage(self, bytes_per_element: float, gqa: bool | None = None) -> list[float]:
        """Per pipeline stage, the cache bytes one token adds on one of its GPUs (each term's own TP share)."""
        gqa = self.gqa if gqa is None else gqa
        return [float(x) for x in self._stage_cache(lambda t: t.layers * t.bytes_per_token, bytes_per_element, gqa)]

    def cache_bytes_per_sequence_per_gpu(self, context, bytes_per_element: float, gqa: bool | None = None,
                                         read: bool = False):
        """Cache bytes one GPU holds for one sequence of S tokens (broadcasts over S): the fullest stage.

        Each :class:`core.models.KVTerm` of the model counts its own layers in each stage and
        divides as its ``tp_share`` says (KV heads ``ceil(h_kv/TP)/h_kv``; an MLA latent and an
        indexer's keys whole on every rank; Mamba and linear-attention state 1/TP).  ``read``:
        the bytes a decode step reads instead (sparse attention's top k).
        """
        gqa = self.gqa if gqa is None else gqa
        s = np.asarray(context, float)
        stages = self._stage_cache(lambda t: t.read(s) if read else t.held(s), bytes_per_element, gqa)
        best = np.max(np.broadcast_arrays(*[np.asarray(x, float) + np.zeros(s.shape) for x in stages]), axis=0)
        return float(best) if np.ndim(best) == 0 else best

    def kv_share(self, gqa: bool | None = None, context=None, bytes_per_element: float = 2.0) -> float:
        """Fraction of one sequence's cache one GPU holds and reads per step (the fullest stage).

        With ``context`` S: exactly :meth:`cache_bytes_per_sequence_per_gpu` over the model's
        :meth:`~core.models.ModelSpec.cache_bytes_per_sequence` at that S.  Without it, the share
        of the growing part, bytes per token (what dominates at long S): ``ceil(h_kv/TP)/h_kv``
        of the heads (1 for an MLA latent and an indexer's keys: replicated) times the fullest
        stage's share of the cache-holding layers; a model with no growing cache, the share of its
        fixed state.
        """
        if self.identity:
            return 1.0
        gqa = self.gqa if gqa is None else gqa
        if context is not None:
            whole = self.model.cache_bytes_per_sequence(context, bytes_per_element, gqa)
            return float(self.cache_bytes_per_sequence_per_gpu(context, bytes_per_element, gqa) / whole) if whole \
                else 1.0
        per_token = self.model.kv_bytes_per_token(bytes_per_element, gqa)
        if per_token:
            return float(max(self.kv_bytes_per_token_per_stage(bytes_per_element, gqa)) / per_token)
        fixed = self.model.state_bytes_per_sequence(bytes_per_element, gqa)
        if not fixed:
            return 1.0
        return float(max(self._stage_cache(lambda t: t.layers * t.fixed_bytes, bytes_per_element, gqa)) / fixed)

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
        return float(max(st.moe_layers for st in self._stages))

    def comm_parts(self, batch, tokens_per_read, stage: int | None = None) -> dict:
        """Bytes one GPU sends and calls it makes per step, by kind (arrays broadcast over ``batch``).

        Args:
            stage: the pipeline stage whose GPU this is (its own layers); None: the stage with the most layers.

        Returns:
            dict with ``tp_bytes``, ``tp_calls`` (two all-reduces per layer),
            ``pp_bytes``, ``pp_calls`` (one send to the next stage), ``ep_bytes``,
            ``ep_calls`` (dispatch and combine per MoE layer).
        """
        msg = self.message_bytes(batch, tokens_per_read)
        layers = self.layers_per_gpu if stage is None else self._stages[stage].layers
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
            moe_layers = self._moe_layers_per_gpu() if stage is None else self._stages[stage].moe_layers
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
                     reserve_bytes: float, *, context: int | None = None,
                     kv_bytes_per_element: float | None = None) -> float:
        """Bytes one GPU holds: its weights, the KV of PP micro-batches of ``batch`` for its layers, the reserve.

        With ``context`` and ``kv_bytes_per_element``: the fullest stage of weights and cache together,
        ``max_stage(weights_stage·p + PP·B·cache_stage(S))`` (a hybrid's stages differ in both); otherwise the
        fullest stage's weights plus ``PP·B·kv_bytes_per_sequence·`` :meth:`kv_share`.
        """
        if context is None or kv_bytes_per_element is None or self.identity:
            kv = self.pp * batch * kv_bytes_per_sequence * self.kv_share()
            return self.n_params * bytes_per_weight + kv + reserve_bytes
        caches = self._stage_cache(lambda t: float(t.held(context)), kv_bytes_per_element, self.gqa)
        best = max(st.per_gpu(self.tp) * bytes_per_weight + self.pp * batch * cache
                   for st, cache in zip(self._stages, caches, strict=True))
        return best + reserve_bytes


def smallest_fit(model: ModelSpec, *, bytes_per_weight: float, kv_bytes_per_sequence: float, batch: int,
                 reserve_bytes: float, capacity: float, ep: int = 1, gqa: bool = True,
                 max_node: int | None = 8, max_gpus: int = 1024, context: int | None = None,
                 kv_bytes_per_element: float | None = None) -> tuple[int, int] | None:
    """The smallest (TP, PP) whose fullest GPU holds ``batch`` sequences, or None.

    TP is tried first over 1, 2, 4, ... up to the node (``max_node``; 8 when the
    part has no scale-up domain), each at PP = 1; past the node, pipeline stages
    are added at the node's TP.  TP must not exceed the query heads.  Each split is
    judged by its fullest GPU (:meth:`Parallelism.memory_bytes`: ``ceil(E/EP)`` experts,
    the fullest pipeline stage; with ``context`` and ``kv_bytes_per_element``, the stage
    fullest in weights and cache together).

    Args:
        bytes_per_weight: p; kv_bytes_per_sequence: a whole sequence's KV bytes;
        reserve_bytes, capacity: bytes per GPU; context: S; kv_bytes_per_element: p_kv.
    """
    node = max_node or 8
    tps = [t for t in (2 ** i for i in range(11)) if t <= min(node, model.n_heads)]

    def fits(tp: int, pp: int) -> bool:
        plan = Parallelism(model, tp=tp, pp=pp, ep=ep, gqa=gqa)
        return plan.memory_bytes(bytes_per_weight, kv_bytes_per_sequence, batch, reserve_bytes, context=context,
                                 kv_bytes_per_element=kv_bytes_per_element) <= capacity

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
