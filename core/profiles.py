"""A model deployed on a GPU: its step profile and what a result names beside it.

:func:`deployment` reduces a model, an accelerator and the levers that do not move
within a step — the weight format, the split over GPUs (TP, PP, EP, replicas), the
reserve, the capacity convention, CUDA graphs — to a :class:`Deployment`: the
:class:`core.step.StepProfile` every step reads, and the per-GPU facts, warnings and
the splits that would fit, which a result shows beside the step's numbers.  A
deployment depends on none of the levers a student moves most (B, k, S, the KV
precision, GQA, α, the phase), so it is made once and kept
(:data:`CACHE_SIZE` of them): a batch move is only steps.

Sources of the reduction: :mod:`core.parallelism` (the split: Megatron-LM tensor
parallelism, ring all-reduce, pipeline stages, expert parallelism), :mod:`core.weights`
(the weight format), :mod:`core.overhead` (kernel launches), :mod:`core.precision`
(which compute roof a format runs on).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from .hardware import NO_LINK_WORDS, Accelerator, get_accelerator
from .models import ModelSpec
from .overhead import kernels_per_step, overhead_time
from .parallelism import Parallelism
from .precision import compute_roof, mixed_roof
from .step import AttentionProfile, CacheProfile, Collective, Split, StageProfile, StepProfile
from .units import fmt_flops_rate
from .weights import STORED, Weights, weights_as

__all__ = ["CACHE_SIZE", "Deployment", "deployment"]

#: Deployments kept (a class's sessions share the shipped models; a session's own model adds a few).
CACHE_SIZE = 256


@dataclass(frozen=True)
class Deployment:
    """A model on a GPU at the fixed levers: the step profile and the facts around it.

    Attributes:
        model, gpu: what is deployed, and where.
        weights: the weight format's bytes (:class:`core.weights.Weights`).
        plan: the split over GPUs as used (TP, PP, EP clamped to what the model takes).
        profile: what every step reads (:class:`core.step.StepProfile`).
        roof, roof_reason: the compute roof's key and why it applies.
        sixteen_bit_share: of the weights' FLOP, the share matrices multiplied in 16 bits (kept in BF16, or in a
            weight-only format) do beside a faster main format, on the BF16 roof (the profile's peak is the two roofs'
            mix: :func:`core.precision.mixed_roof`); 0 under one roof.
        kv_heads_per_gpu: KV heads one GPU keeps, by GQA.
        warnings: what the split or the part makes doubtful, in words.
        interconnect: the scale-up link in words.
        reference: a custom part's datasheet twin, or None; reference_peak: its peak on the same roof.
        cuda_graphs: whether each step is launched as one captured graph.
        n_params, n_active_params: the whole model's parameters, held and per token.
        query_heads_per_gpu, layers_per_gpu, experts_per_gpu: one GPU's share of the heads, layers and
            routed experts per MoE layer (E/EP; 0 for a dense model).
        gpus_per_replica: TP·PP·EP.
        stored_bytes_per_weight: the checkpoint's mean bytes per weight as stored, where the model's quantization is
            modelled and another precision is picked (the smallest split that holds it as stored is then named
            beside the one at the precision picked); else None.
    """

    model: ModelSpec
    gpu: Accelerator
    weights: Weights
    plan: Parallelism
    profile: StepProfile
    roof: str
    roof_reason: str
    kv_heads_per_gpu: dict[bool, int]
    warnings: tuple[str, ...]
    interconnect: str
    reference: Accelerator | None
    reference_peak: float | None
    sixteen_bit_share: float
    cuda_graphs: bool
    n_params: int
    n_active_params: int
    query_heads_per_gpu: int
    layers_per_gpu: int
    experts_per_gpu: float
    gpus_per_replica: int
    stored_bytes_per_weight: float | None


_CACHE: OrderedDict[tuple, Deployment] = OrderedDict()
#: Guards the caches' bookkeeping: a config is read and its model evaluated in a worker thread (app/byo_view.py)
#: while the event loop's sessions evaluate theirs.
_LOCK = threading.Lock()


def deployment(model: ModelSpec, gpu: Accelerator, **levers) -> Deployment:
    """The :class:`Deployment` of ``model`` on ``gpu`` at these levers (kept: see the module docstring).

    Args:
        levers: the deployment's levers by name (the lever table's rows marked ``deploys``,
            :data:`core.scenario.DEPLOYMENT_LEVERS`): ``weight_dtype``, ``tp``, ``pp``, ``ep``, ``replicas``,
            ``reserve_bytes``, ``capacity_convention``, ``cuda_graphs``, SI values.

    A split the model cannot take is used at the largest it can, and named in the warnings: TP above the
    query heads, PP above the layers, EP above the experts, EP on a dense model (EP = 1).

    Raises:
        ValueError: an unknown weight precision or capacity convention.
    """
    # Keyed by identity (a model or GPU object is never changed; an id is only reused once its object is gone,
    # which the identity check below catches): hashing a pasted model of thousands of layers would cost more
    # than the steps.
    key = (id(model), id(gpu), *sorted(levers.items()))
    with _LOCK:
        found = _CACHE.get(key)
        if found is not None and found.model is model and found.gpu is gpu:
            _CACHE.move_to_end(key)
            return found
    made = _build(model, gpu, levers)
    with _LOCK:
        _CACHE[key] = made
        if len(_CACHE) > CACHE_SIZE:
            _CACHE.popitem(last=False)
    return made


def _build(model: ModelSpec, gpu: Accelerator, v: dict) -> Deployment:
    weights = weights_as(model, v["weight_dtype"])
    warnings: list[str] = []
    plan = _plan(gpu, model, int(v["tp"]), int(v["pp"]), int(v["ep"]), int(v["replicas"]), warnings)
    roof, roof_reason = compute_roof(weights.roof_precision, gpu.dense_flop_per_s)
    roof_reason = weights.roof_note or roof_reason
    share = weights.sixteen_bit_share if roof != "bf16" and "bf16" in gpu.dense_flop_per_s else 0.0
    peak = mixed_roof(gpu.dense_flop_per_s[roof], gpu.dense_flop_per_s.get("bf16", 0.0), share)
    if weights.stored:
        roof_reason = f"{weights.label}: {roof_reason}" + (_mixed_reason(weights, gpu, roof, peak) if share else "")
    weight_stages = weights.stages(plan)
    stages = tuple(
        StageProfile(
            n_active_params=plan.n_active_params if plan.identity else params[0] + params[1] * _active(model, plan),
            weights=weight_stages[i],
            params=params,
            cache=cache,
            attention=_attention(model, plan, i),
            collectives=_collectives(plan, i),
            kernels_per_step=kernels_per_step(plan.stage_layers()[i]),
            launch_s=overhead_time(kernels_per_step(plan.stage_layers()[i]), cuda_graphs=bool(v["cuda_graphs"])),
            layers=plan.stage_layers()[i],
        )
        for i, (params, cache) in enumerate(_stage_memory(model, plan)))
    profile = StepProfile(
        peak_flop_per_s=peak,
        bandwidth=gpu.hbm_bandwidth,
        bytes_per_weight=weights.bytes_per_weight,
        stages=stages,
        experts=model.moe.n_experts if model.moe else 0,
        experts_per_token=model.moe.experts_per_token if model.moe else 0,
        expert_groups=plan.ep,
        model_cache={gqa: _cache(model, gqa) for gqa in (True, False)},
        call_latency_s=plan.call_latency_s,
        link_bandwidth=plan.link_bandwidth,
        capacity_bytes=gpu.capacity_bytes(v["capacity_convention"]),
        reserve_bytes=float(v["reserve_bytes"]),
        groups=plan.ep * plan.replicas,
        gpus=plan.gpus,
        splits=_splits(model, plan.ep, gpu),
    )
    reference = get_accelerator(gpu.reference_id) if gpu.reference_id else None
    reference_peak = mixed_roof(reference.dense_flop_per_s.get(roof, reference.dense_flop_per_s["bf16"]),
                                reference.dense_flop_per_s["bf16"], share) if reference else None
    return Deployment(
        model=model, gpu=gpu, weights=weights, plan=plan, profile=profile, roof=roof, roof_reason=roof_reason,
        sixteen_bit_share=share,
        kv_heads_per_gpu={gqa: plan.kv_heads_per_gpu(gqa) for gqa in (True, False)},
        warnings=tuple(warnings),
        interconnect=_link_text(gpu, plan.tp * plan.ep), reference=reference, reference_peak=reference_peak,
        cuda_graphs=bool(v["cuda_graphs"]), n_params=model.n_params, n_active_params=model.n_active_params,
        query_heads_per_gpu=plan.query_heads_per_gpu(), layers_per_gpu=max(plan.stage_layers()),
        experts_per_gpu=plan.experts_per_gpu(), gpus_per_replica=plan.gpus_per_replica,
        stored_bytes_per_weight=weights_as(model, STORED).bytes_per_weight
        if model.quantization and model.quantization.modelled and v["weight_dtype"] != STORED else None,
    )


def _mixed_reason(weights: Weights, gpu: Accelerator, roof: str, peak: float) -> str:
    """How a checkpoint in two formats gets its roof (:func:`core.precision.mixed_roof`), its work at the digits
    printed: the shares to six decimals, so that the line multiplies out to the roof's four digits (at four, a
    share's rounding moved a 4,224 roof to 4,223.4: a trial)."""
    s = weights.sixteen_bit_share
    names = ", ".join(name for name, p in weights.sixteen_bit_groups
                      if p >= 0.001 * s * weights.model.n_active_params)
    p_main, p16 = gpu.dense_flop_per_s[roof], gpu.dense_flop_per_s["bf16"]
    return (f"; its matrices multiplied in 16 bits ({names}: {100 * s:.2f} % of the "
            f"{weights.model.n_active_params:,} active) run on the BF16 roof: 1 / ({1 - s:.6f} / "
            f"{fmt_flops_rate(p_main)} + {s:.6f} / "
            f"{fmt_flops_rate(p16)}) = {fmt_flops_rate(peak)}")


def _active(model: ModelSpec, plan: Parallelism) -> float:
    """Of a GPU's routed-expert parameters, the fraction one token of its batch computes with: its ceil(E/EP)
    experts serve the tokens of all EP groups, k_e/E of them each (times EP); 0 for a dense model."""
    e = model.moe
    return e.experts_per_token / e.n_experts * plan.ep if e else 0.0


def _terms(model: ModelSpec, gqa: bool):
    """The model's cache terms with each size split into what scales with p_kv and what is in its own format:
    ``(term, elements per token, own bytes per token, fixed elements, fixed own bytes)`` (sizes are linear in
    p_kv, so two evaluations give both parts exactly)."""
    at1, at2 = model.kv_terms(1.0, gqa), model.kv_terms(2.0, gqa)
    return [(t, b.bytes_per_token - t.bytes_per_token, 2 * t.bytes_per_token - b.bytes_per_token,
             b.fixed_bytes - t.fixed_bytes, 2 * t.fixed_bytes - b.fixed_bytes) for t, b in zip(at1, at2, strict=True)]


def _cache(model: ModelSpec, gqa: bool, shares=None) -> CacheProfile:
    """What one sequence holds: the whole model's terms, or each term's ``shares`` of them (one stage's GPU)."""
    rows = _terms(model, gqa)
    shares = shares if shares is not None else [1.0] * len(rows)
    terms, fixed_e, fixed_o = [], 0.0, 0.0
    for (t, e, o, fe, fo), share in zip(rows, shares, strict=True):
        if not share:
            continue
        if t.bytes_per_token:
            terms.append((t.layers * e * share, t.layers * o * share, t.cap, t.read_cap))
        fixed_e += t.layers * fe * share
        fixed_o += t.layers * fo * share
    return CacheProfile(tuple(terms), (fixed_e, fixed_o))


#: Per-stage memory kept, by model and split (each weight format's deployment and each split the smallest-fit
#: search tries ask for the same ones: they depend on the model, TP, PP and EP alone).
STAGE_CACHE_SIZE = 1024
_STAGES: OrderedDict[tuple, tuple] = OrderedDict()


def _kept(cache: OrderedDict, size: int, model: ModelSpec, key: tuple, make):
    """``make()``, kept in ``cache`` under the model's identity and ``key`` (at most ``size`` entries, the least
    recently used dropped first).  The entry holds the model, so an id reused by a later model is not a hit."""
    key = (id(model), *key)
    with _LOCK:
        found = cache.get(key)
        if found is not None and found[0] is model:
            cache.move_to_end(key)
            return found[1]
    made = make()  # outside the lock: two threads may both make it, and the second's is kept
    with _LOCK:
        cache[key] = (model, made)
        if len(cache) > size:
            cache.popitem(last=False)
    return made


def _stage_memory(model: ModelSpec, plan: Parallelism):
    """Per pipeline stage: one GPU's ``(fixed, routed)`` parameters, and what one sequence holds there by GQA.

    Kept (:data:`STAGE_CACHE_SIZE` entries), keyed by the model's identity as :func:`deployment` is, and by TP,
    PP and EP: nothing else of the plan enters.
    """
    return _kept(_STAGES, STAGE_CACHE_SIZE, model, (plan.tp, plan.pp, plan.ep),
                 lambda: _stage_memory_of(model, plan))


def _stage_memory_of(model: ModelSpec, plan: Parallelism):
    cache = {gqa: [_cache(model, gqa, shares) for shares in plan.stage_term_shares(model.kv_terms(1.0, gqa), gqa)]
             for gqa in (True, False)} if not plan.identity else {gqa: [_cache(model, gqa)] for gqa in (True, False)}
    params = plan.stage_weights() if not plan.identity else ((float(model.fixed_params()),
                                                              float(model.n_params - model.fixed_params())),)
    return tuple((params[i], {gqa: cache[gqa][i] for gqa in (True, False)}) for i in range(plan.pp))


def _attention(model: ModelSpec, plan: Parallelism, stage: int) -> AttentionProfile:
    """One GPU's share of the attention FLOP per sequence in ``stage``: its layers, its query heads (a replicated
    indexer whole, :meth:`ModelSpec.attention_terms`)."""
    terms = (model.attention_terms() if plan.identity else
             model.attention_terms(plan.stage_groups(stage), plan.query_heads_per_gpu() / model.n_heads))
    return AttentionProfile(decode=terms.decode, decode_mha=terms.decode_mha, prefill=terms.prefill,
                            per_token=terms.per_token)


def _collectives(plan: Parallelism, stage: int) -> tuple[Collective, ...]:
    """What one GPU of ``stage`` sends per step, per token of its batch (:meth:`Parallelism.comm_parts`)."""
    parts = plan.comm_parts(1.0, 1.0, stage=stage)
    message = float(plan.message_bytes(1.0, 1.0))
    names = {"tp": ("TP all-reduce", message), "pp": ("PP send", message / plan.tp),
             "ep": ("EP all-to-all", message / plan.tp)}
    return tuple(Collective(name, float(parts[f"{kind}_calls"]), float(parts[f"{kind}_bytes"]), msg)
                 for kind, (name, msg) in names.items() if parts[f"{kind}_calls"])


#: Split lists kept, by model, EP and node size: every weight format's deployment of a model shares one.
SPLITS_CACHE_SIZE = CACHE_SIZE
_SPLITS: OrderedDict[tuple, tuple] = OrderedDict()


def _splits(model: ModelSpec, ep: int, gpu: Accelerator, max_gpus: int = 1024) -> tuple[Split, ...]:
    """The splits the smallest-fit search tries (:attr:`core.step.StepProfile.splits`): TP = 1, 2, 4, … up to
    the node (8 without one) and the query heads, at PP = 1; then PP = 2, 4, … at the largest such TP, within
    the layers and ``max_gpus``.  Kept (:data:`SPLITS_CACHE_SIZE`) by the model's identity, EP and the node:
    they do not depend on the weight format."""
    node = (gpu.interconnect.max_node if gpu.interconnect else None) or 8
    return _kept(_SPLITS, SPLITS_CACHE_SIZE, model, (ep, node, max_gpus), lambda: _splits_of(model, ep, node, max_gpus))


def _splits_of(model: ModelSpec, ep: int, node: int, max_gpus: int) -> tuple[Split, ...]:
    tps = [t for t in (2 ** i for i in range(11)) if t <= min(node, model.n_heads)]
    splits = [(t, 1) for t in tps]
    pp = 2
    while pp <= model.n_layers and tps[-1] * pp * ep <= max_gpus:
        splits.append((tps[-1], pp))
        pp *= 2

    def split(tp: int, pp: int) -> Split:
        plan = Parallelism(model, tp=tp, pp=pp, ep=ep)
        return Split(tp, pp, tuple((fixed + routed, cache) for (fixed, routed), cache in _stage_memory(model, plan)))

    return tuple(split(tp, pp) for tp, pp in splits)


def _plan(gpu: Accelerator, model: ModelSpec, tp: int, pp: int, ep: int, replicas: int,
          warnings: list[str]) -> Parallelism:
    """The :class:`Parallelism` of the levers; impossible or doubtful splits are named in ``warnings``.

    TP above the query heads, PP above the layers and EP above the experts are
    evaluated at those limits (the result's ``tp``, ``pp``, ``ep`` say what was used).
    """
    if tp > model.n_heads:
        warnings.append(f"TP = {tp} is more than {model.name}'s {model.n_heads} query heads: evaluated at "
                        f"TP = {model.n_heads}")
        tp = model.n_heads
    if pp > model.n_layers:
        warnings.append(f"PP = {pp} is more than {model.name}'s {model.n_layers} layers: evaluated at "
                        f"PP = {model.n_layers}")
        pp = model.n_layers
    if model.moe and ep > model.moe.n_experts:
        warnings.append(f"EP = {ep} is more than {model.name}'s {model.moe.n_experts} experts: evaluated at "
                        f"EP = {model.moe.n_experts}")
        ep = model.moe.n_experts
    if ep > 1 and not model.moe:
        warnings.append(f"EP = {ep} is ignored: {model.name} is dense (no experts to spread); counted as EP = 1")
        ep = 1
    if model.n_heads % tp:
        warnings.append(f"TP = {tp} does not divide {model.name}'s {model.n_heads} query heads: engines refuse "
                        f"this split; the lab gives each GPU ceil({model.n_heads}/{tp}) heads")
    link = gpu.interconnect
    # What a GPU has toward the others of its group: on a full mesh only the links to its peers (core/hardware.py).
    bandwidth = link.group_bandwidth(tp * ep) if link else None
    if tp * ep > 1 and not bandwidth:
        warnings.append(f"{gpu.name} has no interconnect bandwidth in the catalogue: communication time counts "
                        "only the per-call latency")
    node = link.max_node if link else None
    if link and not node and bandwidth and tp * ep > 1:
        warnings.append(f"{gpu.name} has no scale-up node: its {tp * ep} GPUs talk over {link.kind} "
                        f"({bandwidth / 1e9:,.0f} GB/s per direction assumed for every GPU, as if each had its own "
                        "x16 link)")
    if node and tp * ep > node:
        warnings.append(f"TP·EP = {tp * ep} GPUs exceed {gpu.name}'s largest {link.kind} node of {node}: past it "
                        "the collectives cross the slower scale-out network, which the lab does not model (it "
                        "still uses the scale-up link)")
    return Parallelism(model, tp=tp, pp=pp, ep=ep, replicas=replicas, link_bandwidth=bandwidth)


def _link_text(gpu: Accelerator, group: int = 1) -> str:
    """The scale-up link in words, with what a group of ``group`` GPUs (TP·EP) has of it
    (:meth:`~core.hardware.Interconnect.words`)."""
    return NO_LINK_WORDS if gpu.interconnect is None else gpu.interconnect.words(group)
