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

from collections import OrderedDict
from dataclasses import dataclass

from .hardware import Accelerator, get_accelerator
from .models import ModelSpec
from .overhead import kernels_per_step, overhead_time
from .parallelism import Parallelism
from .precision import compute_roof
from .step import AttentionProfile, CacheProfile, Collective, StepProfile
from .weights import Weights, weights_as

__all__ = ["CACHE_SIZE", "Deployment", "FitCandidate", "deployment"]

#: Deployments kept (a class's sessions share the shipped models; a session's own model adds a few).
CACHE_SIZE = 256


@dataclass(frozen=True)
class FitCandidate:
    """One split the smallest-fit search tries, in its order (TP first up to the node, then PP stages).

    A batch of B sequences of ``kv`` whole-model cache bytes each fits when
    ``params · p + B · kv · kv_factor[gqa] + reserve <= capacity``.
    """

    tp: int
    pp: int
    params: float
    kv_factor: dict[bool, float]


@dataclass(frozen=True)
class Deployment:
    """A model on a GPU at the fixed levers: the step profile and the facts around it.

    Attributes:
        model, gpu: what is deployed, and where.
        weights: the weight format's bytes (:class:`core.weights.Weights`).
        plan: the split over GPUs as used (TP, PP, EP clamped to what the model takes).
        profile: what every step reads (:class:`core.step.StepProfile`).
        roof, roof_reason: the compute roof's key and why it applies.
        kv_share: the fraction of a sequence's cache one GPU holds, by GQA.
        kv_heads_per_gpu: KV heads one GPU keeps, by GQA.
        fit_candidates: the splits the smallest-fit search tries, in order.
        warnings: what the split or the part makes doubtful, in words.
        interconnect: the scale-up link in words.
        reference: a custom part's datasheet twin, or None; reference_peak: its peak on the same roof.
        cuda_graphs: whether each step is launched as one captured graph.
        n_params, n_active_params: the whole model's parameters, held and per token.
        query_heads_per_gpu, layers_per_gpu, experts_per_gpu: one GPU's share of the heads, layers and
            routed experts per MoE layer (E/EP; 0 for a dense model).
        gpus_per_replica: TP·PP·EP.
    """

    model: ModelSpec
    gpu: Accelerator
    weights: Weights
    plan: Parallelism
    profile: StepProfile
    roof: str
    roof_reason: str
    kv_share: dict[bool, float]
    kv_heads_per_gpu: dict[bool, int]
    fit_candidates: tuple[FitCandidate, ...]
    warnings: tuple[str, ...]
    interconnect: str
    reference: Accelerator | None
    reference_peak: float | None
    cuda_graphs: bool
    n_params: int
    n_active_params: int
    query_heads_per_gpu: int
    layers_per_gpu: int
    experts_per_gpu: float
    gpus_per_replica: int

    def smallest_fit(self, batch: int, kv_bytes_per_sequence: float, gqa: bool) -> tuple[int, int] | None:
        """The first (TP, PP) of :attr:`fit_candidates` whose GPUs hold ``batch`` sequences, or None.

        Args:
            kv_bytes_per_sequence: one sequence's cache and state for the whole model, bytes.
        """
        p = self.weights.bytes_per_weight
        budget = self.profile.capacity_bytes - self.profile.reserve_bytes
        for c in self.fit_candidates:
            if c.params * p + batch * kv_bytes_per_sequence * c.kv_factor[gqa] <= budget:
                return c.tp, c.pp
        return None


_CACHE: OrderedDict[tuple, Deployment] = OrderedDict()


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
    found = _CACHE.get(key)
    if found is not None and found.model is model and found.gpu is gpu:
        _CACHE.move_to_end(key)
        return found
    made = _build(model, gpu, levers)
    _CACHE[key] = made
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return made


def _build(model: ModelSpec, gpu: Accelerator, v: dict) -> Deployment:
    weights = weights_as(model, v["weight_dtype"])
    warnings: list[str] = []
    plan = _plan(gpu, model, int(v["tp"]), int(v["pp"]), int(v["ep"]), int(v["replicas"]), warnings)
    roof, roof_reason = compute_roof(weights.roof_precision, gpu.dense_flop_per_s)
    if weights.stored:
        roof_reason = f"{weights.label}: {roof_reason}"
    model_cache = {gqa: _model_cache(model, gqa) for gqa in (True, False)}
    kv_share = {gqa: plan.kv_share(gqa) for gqa in (True, False)}
    n_kernels = kernels_per_step(plan.layers_per_gpu)
    profile = StepProfile(
        peak_flop_per_s=gpu.dense_flop_per_s[roof],
        bandwidth=gpu.hbm_bandwidth,
        n_active_params=plan.n_active_params,
        bytes_per_weight=weights.bytes_per_weight,
        weight_stages=weights.stages(plan),
        param_stages=plan.stage_parts(),
        experts=model.moe.n_experts if model.moe else 0,
        experts_per_token=model.moe.experts_per_token if model.moe else 0,
        expert_groups=plan.ep,
        cache={gqa: CacheProfile(tuple((e * kv_share[gqa], cap) for e, cap in c.terms),
                                 c.state_bytes * kv_share[gqa]) for gqa, c in model_cache.items()},
        model_cache=model_cache,
        attention=_attention(model, plan.attention_share()),
        collectives=_collectives(plan),
        call_latency_s=plan.call_latency_s,
        link_bandwidth=plan.link_bandwidth,
        kernels_per_step=n_kernels,
        launch_s=overhead_time(n_kernels, cuda_graphs=bool(v["cuda_graphs"])),
        capacity_bytes=gpu.capacity_bytes(v["capacity_convention"]),
        reserve_bytes=float(v["reserve_bytes"]),
        stages=plan.pp,
        groups=plan.ep * plan.replicas,
        gpus=plan.gpus,
    )
    reference = get_accelerator(gpu.reference_id) if gpu.reference_id else None
    reference_peak = reference.dense_flop_per_s.get(roof, reference.dense_flop_per_s["bf16"]) if reference else None
    return Deployment(
        model=model, gpu=gpu, weights=weights, plan=plan, profile=profile, roof=roof, roof_reason=roof_reason,
        kv_share=kv_share, kv_heads_per_gpu={gqa: plan.kv_heads_per_gpu(gqa) for gqa in (True, False)},
        fit_candidates=_fit_candidates(model, plan.ep, gpu), warnings=tuple(warnings),
        interconnect=_link_text(gpu), reference=reference, reference_peak=reference_peak,
        cuda_graphs=bool(v["cuda_graphs"]), n_params=model.n_params, n_active_params=model.n_active_params,
        query_heads_per_gpu=plan.query_heads_per_gpu(), layers_per_gpu=plan.layers_per_gpu,
        experts_per_gpu=plan.experts_per_gpu(), gpus_per_replica=plan.gpus_per_replica,
    )


def _model_cache(model: ModelSpec, gqa: bool) -> CacheProfile:
    """One sequence's cache for the whole model, from :meth:`ModelSpec.kv_terms` (in elements: p_kv = 1)."""
    terms = model.kv_terms(1.0, gqa)
    return CacheProfile(tuple((t.layers * t.bytes_per_token, t.cap) for t in terms if t.bytes_per_token),
                        model.state_bytes_per_sequence())


def _attention(model: ModelSpec, share: float) -> AttentionProfile:
    """One GPU's share of the attention FLOP per sequence (its query heads and layers)."""
    *decode, (fixed, _) = model.decode_attention_terms()
    per_key = float(model.attention_flop_per_key())
    return AttentionProfile(
        decode=tuple((flop * share, cap) for flop, cap in decode),
        prefill=tuple((n * per_key * share, kind.window, kind.chunk)
                      for kind, n in model.stack.groups() if kind.mixer == "attention"),
        per_token=fixed * share,
    )


def _collectives(plan: Parallelism) -> tuple[Collective, ...]:
    """What one GPU of ``plan`` sends per step, per token of its batch (:meth:`Parallelism.comm_parts`)."""
    parts = plan.comm_parts(1.0, 1.0)
    message = float(plan.message_bytes(1.0, 1.0))
    names = {"tp": ("TP all-reduce", message), "pp": ("PP send", message / plan.tp),
             "ep": ("EP all-to-all", message / plan.tp)}
    return tuple(Collective(name, float(parts[f"{kind}_calls"]), float(parts[f"{kind}_bytes"]), msg)
                 for kind, (name, msg) in names.items() if parts[f"{kind}_calls"])


def _fit_candidates(model: ModelSpec, ep: int, gpu: Accelerator, max_gpus: int = 1024) -> tuple[FitCandidate, ...]:
    """The splits :meth:`Deployment.smallest_fit` tries: TP = 1, 2, 4, … up to the node (8 without one) and
    the query heads, at PP = 1; then PP = 2, 4, … at the largest such TP, within the layers and ``max_gpus``."""
    node = (gpu.interconnect.max_node if gpu.interconnect else None) or 8
    tps = [t for t in (2 ** i for i in range(11)) if t <= min(node, model.n_heads)]
    splits = [(t, 1) for t in tps]
    pp = 2
    while pp <= model.n_layers and tps[-1] * pp * ep <= max_gpus:
        splits.append((tps[-1], pp))
        pp *= 2

    def candidate(tp: int, pp: int) -> FitCandidate:
        plan = Parallelism(model, tp=tp, pp=pp, ep=ep)
        return FitCandidate(tp, pp, plan.n_params, {gqa: pp * plan.kv_share(gqa) for gqa in (True, False)})

    return tuple(candidate(tp, pp) for tp, pp in splits)


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
    bandwidth = link.per_direction_bandwidth if link else None
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


def _link_text(gpu: Accelerator) -> str:
    """The scale-up link in words, as the catalogue prints it."""
    link = gpu.interconnect
    if link is None:
        return "no interconnect in the catalogue"
    bw = link.per_direction_bandwidth
    per_dir = f", {bw / 1e9:,.0f} GB/s per direction" if bw else ""
    node = f", up to {link.max_node} accelerators per node" if link.max_node else ", no scale-up node"
    return f"{link.kind} {link.generation}".strip() + f" ({link.as_printed}{per_dir}{node})"
