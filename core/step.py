"""One step of one GPU: its profile, and the step itself.

Every number the lab derives for a workload comes from one step: B sequences, each
adding k tokens for one read of the weights (decode: k = 1, or the speculation depth;
prefill: the prompt).  A :class:`StepProfile` holds what a step needs of a model on a
GPU — split over GPUs, in a weight format, with the fixed levers applied
(:func:`core.profiles.deployment` makes it) — as a few per-GPU numbers for each pipeline
stage, and :func:`step` turns a profile and (B, k, S, p_kv, GQA) into times,
intensities, the bound and tokens/s.  The browser runs the same step on the same
profile (``app/step.js``, fed :meth:`StepProfile.to_json`); ``tests/parity/test_step_parity.py``
checks one against the other over random profiles.

The step of one stage's GPU (article 000, Steps 1, 4 and 6 and "The third regime
nobody plots"; article 004, sections 01 and 03; Williams et al. 2009)::

    FLOP        = 2·N_active·B·k + B·attention(k, S)
    bytes       = weights read(B·k) + B·cache read(S)
    t_compute   = FLOP / P_peak;   t_memory = bytes / BW
    t_comm      = Σ calls·t_call + B·k·(bytes sent per token) / link
    step time   = max(max(t_compute, t_memory) + t_comm, t_launch)
    I           = 2·N_active·B·k / weights read          (= 2·B·k/p for a dense model)
    I_kv        = FLOP / bytes
    attainable  = min(P_peak, BW·I, FLOP / t_launch)
    tokens/s    = B·gained / step time

``weights read`` is ``fixed + f·routed``, f the fraction of the GPU's routed experts the
step's tokens touch, ``1 − (1 − k_e/E)^(EP·B·k)`` (uniform routing; 0 routed bytes for a
dense model).  The cache a sequence holds is ``Σ (elements·p_kv + own bytes)·min(S, cap)``
over the layer groups plus what does not grow with S (a recurrent state, an image's K/V);
a decode step reads ``min(S, cap, top k)`` tokens of it (sparse attention reads its top k).
Decode attention is ``k·(Σ flop_per_key·min(S, cap) + per-token)``; prefill's is
``Σ flop_per_pair·pairs(P) + P·per-token`` over causal pairs (:func:`causal_pairs`).
Communication is added, not overlapped; the launches overlap the GPU's work, so the step
is at least as long as they are.

Split into PP pipeline stages, each stage's GPU runs its own step on its own layers; the
pipeline moves at the pace of the slowest stage, whose numbers the step reports, and the
memory must fit on every stage (each holds its layers' cache for PP micro-batches): what
fits is decided by the fullest.

Units: bytes, FLOP, seconds, FLOP/s.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .roofline import batch_ladder
from .speculation import expected_tokens_per_verify

__all__ = ["AttentionProfile", "CacheProfile", "Collective", "Split", "StageProfile", "Step", "StepProfile",
           "Workload", "causal_pairs", "memory_stage", "step", "workload"]


def causal_pairs(prompt, window: int | None = None, chunk: int | None = None):
    """(query, key) pairs of causal attention over P tokens (broadcasts over P).

    ``P(P+1)/2``; with a sliding window w (a query sees itself and the w − 1 before it):
    ``w(w+1)/2 + (P − w)·w`` once P > w; with chunks of c: ``n·c(c+1)/2 + r(r+1)/2``
    where P = n·c + r.  Sparse attention over the top k keys has the pairs of a window of k.
    """
    p = np.asarray(prompt, dtype=float)
    if window is not None:
        w = float(window)
        return np.where(p <= w, p * (p + 1) / 2, w * (w + 1) / 2 + (p - w) * w)
    if chunk is not None:
        c = float(chunk)
        whole = np.floor(p / c)
        rest = p - whole * c
        return whole * c * (c + 1) / 2 + rest * (rest + 1) / 2
    return p * (p + 1) / 2


def _capped(s, *caps):
    caps = [c for c in caps if c is not None]
    return np.minimum(s, min(caps)) if caps else s


@dataclass(frozen=True)
class CacheProfile:
    """What one sequence holds on one GPU: its cache by layer group, and what does not grow with S.

    Attributes:
        terms: ``(elements, own_bytes, cap, read_cap)`` per group of layers: one token adds
            ``elements·p_kv + own_bytes`` bytes on this GPU over the group (``own_bytes``: a part in its
            own format, e.g. a sparse-attention indexer's FP8 keys); the group holds ``min(S, cap)`` tokens
            (cap None: all S) and a decode step reads ``min(S, cap, read_cap)`` of them (sparse attention's
            top k).
        fixed: ``(elements, own_bytes)`` per sequence whatever S: ``elements·p_kv`` (an image's K/V in
            cross-attention layers) and ``own_bytes`` (linear-attention and Mamba state).
    """

    terms: tuple[tuple[float, float, int | None, int | None], ...]
    fixed: tuple[float, float]

    def fixed_bytes(self, p_kv: float) -> float:
        """Bytes one sequence holds whatever its length, at ``p_kv``."""
        elements, own = self.fixed
        return elements * p_kv + own

    def bytes_per_sequence(self, context, p_kv: float, read: bool = False):
        """Bytes one sequence of S tokens holds on this GPU (broadcasts), or with ``read`` those a decode step
        reads of them."""
        s = np.asarray(context, dtype=float)
        total = np.full(s.shape, self.fixed_bytes(p_kv))
        for elements, own, cap, read_cap in self.terms:
            total = total + (elements * p_kv + own) * (_capped(s, cap, read_cap) if read else _capped(s, cap))
        return total

    def kv_bytes_per_token(self, p_kv: float) -> float:
        """Cache bytes one token adds on this GPU while no cap is reached, ``Σ elements·p_kv + own bytes``."""
        return float(sum(elements * p_kv + own for elements, own, _, _ in self.terms))


@dataclass(frozen=True)
class AttentionProfile:
    """Attention FLOP per sequence on one GPU, beyond the weights' ``2·N_active`` per token.

    Attributes:
        decode: ``(flop_per_key, cap)`` per group of attention layers: FLOP per cached key one new token
            costs over the group (``4·h_q·d_head`` per layer, this GPU's heads; MLA's absorbed form), and the
            most keys it reads (None: S).
        decode_mha: the same with GQA off (every head its own K and V; MLA's uncompressed form).
        prefill: ``(flop_per_pair, window, chunk)`` per group: FLOP per causal (query, key) pair of a prompt.
        per_token: FLOP per token that does not grow with S (fixed-state mixers, cross-attention to an image).
    """

    decode: tuple[tuple[float, int | None], ...]
    decode_mha: tuple[tuple[float, int | None], ...]
    prefill: tuple[tuple[float, int | None, int | None], ...]
    per_token: float

    def decode_terms(self, gqa: bool = True) -> tuple[tuple[float, int | None], ...]:
        """The decode terms with GQA on (the cache as the config has it) or off."""
        return self.decode if gqa else self.decode_mha

    def decode_flop(self, context, gqa: bool = True):
        """Attention FLOP of one new token at context S (broadcasts over S), with GQA on or off."""
        s = np.asarray(context, dtype=float)
        total = np.full(s.shape, float(self.per_token))
        for flop, cap in self.decode_terms(gqa):
            total = total + flop * _capped(s, cap)
        return total

    def prefill_flop(self, prompt):
        """Attention FLOP of a prefill of P tokens (broadcasts over P): causal pairs, and P × the per-token cost."""
        p = np.asarray(prompt, dtype=float)
        total = p * float(self.per_token)
        for flop, window, chunk in self.prefill:
            total = total + flop * causal_pairs(p, window, chunk)
        return total


@dataclass(frozen=True)
class Collective:
    """One kind of communication one GPU does per step.

    Attributes:
        name: what it is (``"TP all-reduce"``, ``"PP send"``, ``"EP all-to-all"``).
        calls: calls per step, each paying the profile's ``call_latency_s``.
        bytes_per_token: bytes this GPU sends per token of its batch (B·k tokens a step), all calls together.
        message_bytes_per_token: one call's message per token (the activations it carries), bytes.
    """

    name: str
    calls: float
    bytes_per_token: float
    message_bytes_per_token: float


@dataclass(frozen=True)
class StageProfile:
    """One pipeline stage, on one of its GPUs (per GPU, SI units).

    Attributes:
        n_active_params: parameters this GPU computes with per token (FLOP per token = 2 × this).
        weights: ``(fixed, routed)`` weight bytes on this GPU: a step reads ``fixed + f·routed``, memory holds both.
        params: the same in parameters (whatever the format).
        cache: what one sequence holds on this GPU, with GQA on (``True``) and off (``False``).
        attention: attention FLOP per sequence on this GPU.
        collectives: what this GPU sends per step (empty on one GPU).
        kernels_per_step: kernels one step launches on this GPU.
        launch_s: seconds those launches take (the third ceiling).
        layers: the model's layers on this stage (the kernels are counted from them).
    """

    n_active_params: float
    weights: tuple[float, float]
    params: tuple[float, float]
    cache: dict[bool, CacheProfile]
    attention: AttentionProfile
    collectives: tuple[Collective, ...]
    kernels_per_step: int
    launch_s: float
    layers: int

    @property
    def weight_bytes_held(self) -> float:
        return float(self.weights[0] + self.weights[1])

    @property
    def params_held(self) -> float:
        return float(self.params[0] + self.params[1])


@dataclass(frozen=True)
class Split:
    """A split of the model over GPUs that the smallest-fit search tries (:attr:`StepProfile.splits`).

    B sequences of S tokens fit when on every stage ``params · p + PP · B · cache(S) + reserve <= capacity``.

    Attributes:
        tp, pp: the split's tensor- and pipeline-parallel degrees (at the deployment's EP).
        stages: per stage, the parameters one GPU holds and what one sequence holds there, by GQA.
    """

    tp: int
    pp: int
    stages: tuple[tuple[float, dict[bool, CacheProfile]], ...]

    @cached_property
    def _json(self) -> dict:
        return _lists({"tp": self.tp, "pp": self.pp,
                       "stages": [(params, _keyed({gqa: dataclasses.asdict(c) for gqa, c in cache.items()}))
                                  for params, cache in self.stages]})

    def to_json(self) -> dict:
        """The split as JSON-ready data (:meth:`StepProfile.to_json`'s ``splits``), worked out once per split: a
        split of a long stack over 128 stages is thousands of numbers, and every weight format's profile shares
        its model's splits.  The data is shared: read it, do not change it."""
        return self._json


@dataclass(frozen=True)
class StepProfile:
    """A model on one GPU, reduced to what a step needs (per GPU, SI units).

    Attributes:
        peak_flop_per_s: the compute roof of the weight format on this GPU (dense), FLOP/s.
        bandwidth: HBM bandwidth, bytes/s.
        bytes_per_weight: p, the weight format's mean bytes per weight held (the model's, whatever the split).
        stages: one :class:`StageProfile` per pipeline stage (PP of them; one on a single GPU).
        experts: routed experts E per MoE layer (0 for a dense model).
        experts_per_token: k_e.
        expert_groups: EP, the groups a GPU's experts serve (tokens of all groups reach them).
        model_cache: what one sequence holds in the whole model (all GPUs together), by GQA.
        call_latency_s: fixed seconds of one collective call.
        link_bandwidth: the scale-up link's bytes/s per direction, or None (only call latency counts).
        capacity_bytes: memory capacity, bytes.
        reserve_bytes: memory held back (activations, CUDA context, slack), bytes.
        groups: sequences' groups served side by side: EP groups × replicas.
        gpus: every GPU of the deployment.
        splits: the splits the smallest-fit search tries, in its order (TP = 1, 2, 4, … up to the node, then
            PP stages at the node's TP): the first that holds a workload is the one to suggest.
    """

    peak_flop_per_s: float
    bandwidth: float
    bytes_per_weight: float
    stages: tuple[StageProfile, ...]
    experts: int
    experts_per_token: int
    expert_groups: int
    model_cache: dict[bool, CacheProfile]
    call_latency_s: float
    link_bandwidth: float | None
    capacity_bytes: float
    reserve_bytes: float
    groups: int
    gpus: int
    splits: tuple[Split, ...]

    def touched_fraction(self, tokens):
        """Fraction of this GPU's routed experts ``tokens`` tokens of its batch touch: ``1 − (1 − k_e/E)^(EP·t)``."""
        t = np.asarray(tokens, dtype=float)
        if not self.experts:
            return np.zeros(t.shape)
        return 1.0 - (1.0 - self.experts_per_token / self.experts) ** (self.expert_groups * t)

    @property
    def weight_bytes_held(self) -> float:
        """Weight bytes the fullest stage's GPU holds (every expert of its share)."""
        return max(s.weight_bytes_held for s in self.stages)

    @property
    def params_held(self) -> float:
        """Parameters the fullest stage's GPU holds."""
        return max(s.params_held for s in self.stages)

    @property
    def free_for_kv_bytes(self) -> float:
        """Capacity less the fullest stage's weights and the reserve (negative when they alone do not fit), bytes."""
        return self.capacity_bytes - self.weight_bytes_held - self.reserve_bytes

    def to_json(self) -> dict:
        """The profile as JSON-ready data for ``app/step.js`` (the caches keyed ``"gqa"`` and ``"mha"``)."""
        out = dataclasses.asdict(dataclasses.replace(self, splits=()))
        for stage in out["stages"]:
            stage["cache"] = _keyed(stage["cache"])
        out["model_cache"] = _keyed(out["model_cache"])
        out = _lists(out)
        out["splits"] = [split.to_json() for split in self.splits]
        return out


def _keyed(cache: dict) -> dict:
    """A cache by GQA keyed ``"gqa"`` and ``"mha"``, as ``app/step.js`` reads it."""
    return {("gqa" if gqa else "mha"): c for gqa, c in cache.items()}


def _lists(value):
    """Tuples as lists, all the way down (JSON's arrays)."""
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    return value


@dataclass(frozen=True)
class Step:
    """One step of one GPU at each batch size: numpy arrays of one length (per GPU, SI units).

    The step's numbers are the slowest pipeline stage's (``stage``), which sets the pipeline's pace; the
    memory (``memory_used_bytes``, ``fits``, ``kv_bytes_per_sequence``) is that of the stage that runs out of
    memory first (:func:`memory_stage`).

    Attributes:
        batch: B, sequences per step (per micro-batch).
        stage: the index of the slowest pipeline stage (0 on one GPU).
        arithmetic_intensity_weights: ``2·N_active·B·k / weights read``, FLOP/byte (``2·B·k/p`` dense).
        arithmetic_intensity_with_kv: all the step's FLOP over all its bytes, FLOP/byte.
        attainable_flop_per_s_weights: ``min(P_peak, BW·I, FLOP_weights / t_launch)``, FLOP/s.
        attainable_flop_per_s_with_kv: ``min(P_peak, BW·I_kv, FLOP / t_launch)``, FLOP/s.
        peak_fraction_weights, peak_fraction_with_kv: those over P_peak, 0..1.
        flop: FLOP of the step; flop_weights: its ``2·N_active·B·k``; attention_flop: the rest.
        weight_bytes_read: weight bytes the step reads; params_read: those weights as parameters.
        kv_traffic_bytes: cache and state bytes the step moves (read in decode, written in prefill).
        bytes_moved: their sum.
        kv_bytes_per_sequence: cache and state one sequence holds on a GPU of the memory stage.
        compute_time_s, memory_time_s, communication_time_s, launch_time_s: the step's four times, s.
        gpu_time_s: ``max(compute, memory) + communication``, what the launches race, s.
        step_time_s_with_kv: ``max(gpu time, launch time)``, s.
        step_time_s_weights: the same ignoring the cache's traffic, s.
        bytes_sent: bytes this GPU sends per step.
        tokens_per_s_with_kv: ``B·gained / step time``; tokens_per_s_weights: ignoring KV traffic.
        memory_used_bytes: weights + PP micro-batches' cache + reserve on the memory stage; fits: within capacity.
        bound: ``"overhead"`` when the launches outlast the GPU's time, else ``"memory"`` below the ridge
            point (by the intensity counting KV reads) and ``"compute"`` at or above it.
        experts_touched_fraction: of this GPU's routed experts, the fraction the step's tokens touch.
    """

    batch: np.ndarray
    stage: np.ndarray
    arithmetic_intensity_weights: np.ndarray
    arithmetic_intensity_with_kv: np.ndarray
    attainable_flop_per_s_weights: np.ndarray
    attainable_flop_per_s_with_kv: np.ndarray
    peak_fraction_weights: np.ndarray
    peak_fraction_with_kv: np.ndarray
    flop: np.ndarray
    flop_weights: np.ndarray
    attention_flop: np.ndarray
    weight_bytes_read: np.ndarray
    params_read: np.ndarray
    kv_traffic_bytes: np.ndarray
    bytes_moved: np.ndarray
    kv_bytes_per_sequence: np.ndarray
    compute_time_s: np.ndarray
    memory_time_s: np.ndarray
    communication_time_s: np.ndarray
    launch_time_s: np.ndarray
    gpu_time_s: np.ndarray
    step_time_s_with_kv: np.ndarray
    step_time_s_weights: np.ndarray
    bytes_sent: np.ndarray
    tokens_per_s_with_kv: np.ndarray
    tokens_per_s_weights: np.ndarray
    memory_used_bytes: np.ndarray
    fits: np.ndarray
    bound: np.ndarray
    experts_touched_fraction: np.ndarray

    def at(self, i: int = 0) -> dict:
        """Entry ``i`` as plain Python numbers (bools and strings kept)."""
        return {f.name: getattr(self, f.name)[i].item() for f in dataclasses.fields(self)}


def _per_launch(flop, launch_s: float):
    """The overhead ceiling ``FLOP / t_launch`` in FLOP/s (``inf`` when launches cost nothing)."""
    return flop / launch_s if launch_s > 0 else np.full(np.shape(flop), math.inf)


def _stage_step(profile: StepProfile, st: StageProfile, b, t, tokens, context, gained, p_kv, gqa, prefill) -> dict:
    """One stage's step at each batch size (the arrays of :class:`Step` but ``stage``, ``memory_used_bytes``,
    ``fits`` and ``kv_bytes_per_sequence``; ``held``: the cache one sequence holds here)."""
    ones = np.ones(b.shape)
    peak, bw, launch = profile.peak_flop_per_s, profile.bandwidth, st.launch_s
    per_sequence_attention = (st.attention.prefill_flop(tokens) if prefill
                              else tokens * st.attention.decode_flop(context, bool(gqa)))
    cache = st.cache[bool(gqa)]
    held = cache.bytes_per_sequence(tokens if prefill else context, p_kv) * ones
    moved_per_sequence = held if prefill else cache.bytes_per_sequence(context, p_kv, read=True) * ones
    f = profile.touched_fraction(t) * ones
    weight = st.weights[0] + st.weights[1] * f
    flop_weights = 2.0 * st.n_active_params * t
    attention_flop = b * per_sequence_attention
    flop = flop_weights + attention_flop
    kv = b * moved_per_sequence
    moved = weight + kv
    t_compute, t_memory = flop / peak, moved / bw
    sent = t * sum(c.bytes_per_token for c in st.collectives)
    wire = sent / profile.link_bandwidth if profile.link_bandwidth else 0.0 * sent
    t_comm = (wire + sum(c.calls for c in st.collectives) * profile.call_latency_s) * ones
    gpu_time = np.maximum(t_compute, t_memory) + t_comm
    t_step = np.maximum(gpu_time, launch)
    t_weights = np.maximum(np.maximum(flop_weights / peak, weight / bw) + t_comm, launch)
    intensity, intensity_kv = flop_weights / weight, flop / moved
    attainable = np.minimum(np.minimum(peak, bw * intensity), _per_launch(flop_weights, launch))
    attainable_kv = np.minimum(np.minimum(peak, bw * intensity_kv), _per_launch(flop, launch))
    return dict(
        arithmetic_intensity_weights=intensity,
        arithmetic_intensity_with_kv=intensity_kv,
        attainable_flop_per_s_weights=attainable,
        attainable_flop_per_s_with_kv=attainable_kv,
        peak_fraction_weights=attainable / peak,
        peak_fraction_with_kv=attainable_kv / peak,
        flop=flop,
        flop_weights=flop_weights,
        attention_flop=attention_flop,
        weight_bytes_read=weight,
        params_read=st.params[0] + st.params[1] * f,
        kv_traffic_bytes=kv,
        bytes_moved=moved,
        compute_time_s=t_compute,
        memory_time_s=t_memory,
        communication_time_s=t_comm,
        launch_time_s=launch * ones,
        gpu_time_s=gpu_time,
        step_time_s_with_kv=t_step,
        step_time_s_weights=t_weights,
        bytes_sent=sent * ones,
        tokens_per_s_with_kv=b * gained / t_step,
        tokens_per_s_weights=b * gained / t_weights,
        bound=np.where(launch > gpu_time, "overhead", np.where(intensity_kv < peak / bw, "memory", "compute")),
        experts_touched_fraction=f,
        held=held,
    )


def step(profile: StepProfile, batch, *, tokens, context, gained, p_kv: float, gqa: bool = True,
         prefill: bool = False) -> Step:
    """One step of one GPU at each batch size in ``batch`` (see the module docstring).

    Args:
        profile: the model on this GPU (:func:`core.profiles.deployment`).
        batch: B, sequences per step: a scalar or 1-D array (>= 1).
        tokens: k, tokens each sequence adds for one read of the weights (decode: the speculation depth;
            prefill: the prompt length P); a scalar, or an array of ``batch``'s shape.
        context: S, tokens of cache each sequence reads in decode (ignored in prefill, where it is P).
        gained: tokens each sequence gains per step (E in decode, P in prefill), for tokens/s.
        p_kv: bytes per KV-cache element.
        gqa: grouped-query attention on (the cache as the config has it) or off (every head its own K/V).
        prefill: the step processes a prompt (causal attention over it, writing its cache).

    Returns:
        a :class:`Step`, one entry per batch size: the slowest stage's numbers, the fullest stage's memory.
    """
    b = np.atleast_1d(np.asarray(batch, dtype=float))
    t = b * tokens  # the tokens of one step, per weight read
    per_stage = [_stage_step(profile, st, b, t, tokens, context, gained, p_kv, gqa, prefill) for st in profile.stages]
    if len(per_stage) == 1:  # one GPU, or PP = 1: the only stage is the slowest and the fullest
        fields = per_stage[0]
        slowest = np.zeros(b.shape, dtype=np.int64)
        held = fields.pop("held")
        weights_held = profile.stages[0].weight_bytes_held
    else:
        slowest = np.argmax(np.stack([s["step_time_s_with_kv"] for s in per_stage]), axis=0)
        columns = np.arange(b.shape[0])
        m = memory_stage(profile, tokens if prefill else context, p_kv, gqa) * np.ones(b.shape, dtype=np.int64)
        held = np.stack([s["held"] for s in per_stage])[m, columns]
        weights_held = np.array([st.weight_bytes_held for st in profile.stages])[m]
        fields = {name: np.stack([s[name] for s in per_stage])[slowest, columns]
                  for name in per_stage[0] if name != "held"}
    used = weights_held + len(profile.stages) * b * held + profile.reserve_bytes
    return Step(
        batch=b.astype(np.int64),
        stage=slowest.astype(np.int64),
        kv_bytes_per_sequence=held,
        memory_used_bytes=used,
        fits=used <= profile.capacity_bytes,
        **fields,
    )


def memory_stage(profile: StepProfile, context, p_kv: float, gqa: bool):
    """The pipeline stage whose GPU runs out of memory first as the batch grows: the one that holds the fewest
    sequences of ``context`` tokens beside its weights and the reserve (broadcasts over S; the fullest by weights
    when a sequence holds nothing).  One GPU, or PP = 1: stage 0.  What fits is this stage's to say: B sequences
    fit on every stage exactly when they fit on it."""
    s = np.asarray(context, dtype=float)
    pp = len(profile.stages)
    if pp == 1:
        return np.zeros(s.shape, dtype=np.int64)
    ratios = []
    for st in profile.stages:
        room = profile.capacity_bytes - st.weight_bytes_held - profile.reserve_bytes
        kv = pp * st.cache[gqa].bytes_per_sequence(s, p_kv)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratios.append(np.where(kv > 0, room / kv, math.inf if room >= 0 else -math.inf))
    ratios = np.stack(ratios)
    by_weights = max(range(pp), key=lambda i: profile.stages[i].weight_bytes_held)
    return np.where(np.all(np.isposinf(ratios), axis=0), by_weights, np.argmin(ratios, axis=0)).astype(np.int64)


@dataclass(frozen=True)
class Workload:
    """The steps of one workload: itself, its batch ladder, and the same request's other steps.

    Attributes:
        point: the workload's step (decode: B sequences, k tokens each; prefill: B prompts).
        ladder: the same step at B = 1, 2, 4, … to past the ridge (:func:`core.roofline.batch_ladder`).
        prefill: the prefill of B prompts; ttft: of one prompt alone (the time to first token).
        verify: the decode step at depth k (a verify pass); plain: the decode step at k = 1.
        expected_tokens: E, tokens a sequence gains per verify pass (1 at k = 1).
        max_batch: the most sequences of the workload's cache that fit beside the weights and the reserve on
            every stage: on the memory stage (:func:`memory_stage`; the ``max_batch`` given when a sequence holds
            nothing).
        memory_stage: the index of that stage (0 on one GPU).
        weight_bytes_held, params_held: the memory stage's GPU's weights held, as bytes and parameters.
        free_for_kv_bytes: capacity less those weights and the reserve (negative when the weights do not fit).
        kv_bytes_per_sequence: one sequence's cache and state in the whole model, at the workload's context.
        kv_bytes_per_token: cache bytes one token adds in the whole model; kv_bytes_per_token_per_gpu: on the
            GPU of the stage that adds the most.
        smallest_fit: the first of the profile's splits whose fullest GPU holds the workload, ``(TP, PP)``, or None.
        stored_fit: the same at the checkpoint's bytes as stored, where ``stored_bytes_per_weight`` was given and
            the weights alone do not fit (``free_for_kv_bytes < 0``); else None.
    """

    point: Step
    ladder: Step
    prefill: Step
    ttft: Step
    verify: Step
    plain: Step
    expected_tokens: float
    max_batch: int
    memory_stage: int
    weight_bytes_held: float
    params_held: float
    free_for_kv_bytes: float
    kv_bytes_per_sequence: float
    kv_bytes_per_token: float
    kv_bytes_per_token_per_gpu: float
    smallest_fit: tuple[int, int] | None
    stored_fit: tuple[int, int] | None


def smallest_fit(profile: StepProfile, batch: int, context: int, p_kv: float, gqa: bool,
                 bytes_per_weight: float | None = None) -> tuple[int, int] | None:
    """The first of ``profile``'s splits (:attr:`StepProfile.splits`, fewest GPUs first) whose every GPU holds its
    weights (at ``bytes_per_weight``, by default ``profile``'s; a split counts parameters, whatever their bytes),
    the KV cache of ``batch`` sequences of ``context`` tokens for each of its PP micro-batches, and the reserve:
    ``(TP, PP)``, or None."""
    pw = profile.bytes_per_weight if bytes_per_weight is None else bytes_per_weight

    def holds(split: Split) -> bool:
        return all(params * pw + split.pp * batch * float(cache[gqa].bytes_per_sequence(
            context, p_kv)) + profile.reserve_bytes <= profile.capacity_bytes for params, cache in split.stages)

    return next(((sp.tp, sp.pp) for sp in profile.splits if holds(sp)), None)


def workload(profile: StepProfile, *, batch: int, spec_k: int, context: int, prompt: int, acceptance: float,
             p_kv: float, gqa: bool, prefill: bool, max_batch: int,
             stored_bytes_per_weight: float | None = None) -> Workload:
    """Every step a result shows, on one profile: the workload, its ladder, its prefill, verify and TTFT steps.

    In decode a sequence gains E tokens per step, the expected accepted tokens of a verify pass of depth k
    (Leviathan et al. 2023, :func:`core.speculation.expected_tokens_per_verify`); in prefill its prompt.  One
    request crosses the roofline twice (article 004, "Go deeper"): the prefill of its prompt (k = P, writing
    its cache), then decode steps (k = the speculation depth, reading a cache of S tokens).

    Args:
        batch: B; spec_k: k in decode; context: S; prompt: P, the prompt length; acceptance: α.
        p_kv, gqa: the KV cache's bytes per element, and GQA on or off.
        prefill: the workload itself is the prefill of B prompts (k = P) rather than a decode step.
        max_batch: the ladder's top (the batch lever's bound).
        stored_bytes_per_weight: the checkpoint's bytes per weight as stored, where another precision is picked
            (:attr:`core.profiles.Deployment.stored_bytes_per_weight`): its smallest fit is searched too.
    """
    e = float(expected_tokens_per_verify(acceptance, spec_k))
    k, gained = (prompt, float(prompt)) if prefill else (spec_k, e)
    held_context = prompt if prefill else context

    def at(b, tokens, is_prefill, tokens_gained=gained):
        return step(profile, b, tokens=tokens, context=context, gained=tokens_gained, p_kv=p_kv, gqa=gqa,
                    prefill=is_prefill)

    ridge = profile.peak_flop_per_s / profile.bandwidth
    memory = int(memory_stage(profile, held_context, p_kv, gqa))
    m = profile.stages[memory]
    room = profile.capacity_bytes - m.weight_bytes_held - profile.reserve_bytes
    kv = len(profile.stages) * float(m.cache[gqa].bytes_per_sequence(held_context, p_kv))
    whole = profile.model_cache[gqa]

    return Workload(
        point=at(batch, k, prefill),
        ladder=at(batch_ladder(ridge, profile.bytes_per_weight, k, max_batch), k, prefill),
        prefill=at(batch, prompt, True),
        ttft=at(1, prompt, True),
        verify=at(batch, spec_k, False),
        plain=at(batch, 1, False),
        expected_tokens=e,
        max_batch=math.floor(max(room, 0.0) / kv) if kv > 0 else max_batch,
        memory_stage=memory,
        weight_bytes_held=m.weight_bytes_held,
        params_held=m.params_held,
        free_for_kv_bytes=room,
        kv_bytes_per_sequence=float(whole.bytes_per_sequence(held_context, p_kv)),
        kv_bytes_per_token=whole.kv_bytes_per_token(p_kv),
        kv_bytes_per_token_per_gpu=max(st.cache[gqa].kv_bytes_per_token(p_kv) for st in profile.stages),
        smallest_fit=smallest_fit(profile, batch, held_context, p_kv, gqa),
        # Searched only where the weights alone do not fit, the one case a warning names it (not on every move).
        stored_fit=None if stored_bytes_per_weight is None or room >= 0 else smallest_fit(
            profile, batch, held_context, p_kv, gqa, stored_bytes_per_weight),
    )
