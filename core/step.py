"""One step of one GPU: its profile, and the step itself.

Every number the lab derives for a workload comes from one step: B sequences, each
adding k tokens for one read of the weights (decode: k = 1, or the speculation depth;
prefill: the prompt).  A :class:`StepProfile` holds what a step needs of a model on a
GPU — split over GPUs, in a weight format, with the fixed levers applied
(:func:`core.profiles.step_profile` makes it) — as a few per-GPU numbers, and
:func:`step` turns a profile and (B, k, S, p_kv, GQA) into times, intensities, the
bound and tokens/s.  The browser runs the same step on the same profile
(``app/step.js``, fed :meth:`StepProfile.to_json`); ``tests/test_step_parity.py``
checks one against the other over random profiles.

The step (article 000, Steps 1, 4 and 6 and "The third regime nobody plots";
article 004, sections 01 and 03; Williams et al. 2009)::

    FLOP        = 2·N_active·B·k + B·attention(k, S)
    bytes       = weights read(B·k) + B·cache(S)
    t_compute   = FLOP / P_peak;   t_memory = bytes / BW
    t_comm      = Σ calls·t_call + B·k·(bytes sent per token) / link
    step time   = max(max(t_compute, t_memory) + t_comm, t_launch)
    I           = 2·N_active·B·k / weights read          (= 2·B·k/p for a dense model)
    I_kv        = FLOP / bytes
    attainable  = min(P_peak, BW·I, FLOP / t_launch)
    tokens/s    = B·gained / step time

``weights read`` is ``fixed + f·routed`` on the most loaded pipeline stage, f the
fraction of the GPU's routed experts the step's tokens touch,
``1 − (1 − k_e/E)^(EP·B·k)`` (uniform routing; 0 routed bytes for a dense model).
``cache(S)`` is ``Σ elements·p_kv·min(S, cap)`` over the layer groups plus the fixed
state of recurrent layers.  Decode attention is ``k·(Σ flop_per_key·min(S, cap) +
per-token)``; prefill's is ``Σ flop_per_pair·pairs(P) + P·per-token`` over causal pairs
(:func:`causal_pairs`).  Communication is added, not overlapped; the launches overlap
the GPU's work, so the step is at least as long as they are.

Units: bytes, FLOP, seconds, FLOP/s; every per-GPU quantity is one GPU's (the most
loaded pipeline stage's).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from .kvcache import max_batch_that_fits
from .roofline import batch_ladder
from .speculation import expected_tokens_per_verify

__all__ = ["AttentionProfile", "CacheProfile", "Collective", "Step", "StepProfile", "Workload", "causal_pairs",
           "step", "workload"]


def causal_pairs(prompt, window: int | None = None, chunk: int | None = None):
    """(query, key) pairs of causal attention over P tokens (broadcasts over P).

    ``P(P+1)/2``; with a sliding window w (a query sees itself and the w − 1 before it):
    ``w(w+1)/2 + (P − w)·w`` once P > w; with chunks of c: ``n·c(c+1)/2 + r(r+1)/2``
    where P = n·c + r.
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


def _capped(s, cap):
    return s if cap is None else np.minimum(s, cap)


@dataclass(frozen=True)
class CacheProfile:
    """What one sequence holds on one GPU: its KV cache by layer group, and a fixed recurrent state.

    Attributes:
        terms: ``(elements, cap)`` per group of layers: KV elements one token adds on this GPU over the
            group's layers (bytes at ``p_kv`` = elements × p_kv), and the window or chunk that caps the
            group's cache in tokens (None: no cap).
        state_bytes: bytes of fixed state per sequence on this GPU (linear attention, Mamba), whatever S.
    """

    terms: tuple[tuple[float, int | None], ...]
    state_bytes: float

    def kv_bytes_per_sequence(self, context, p_kv: float):
        """KV bytes one sequence of S tokens holds on this GPU, ``Σ elements·p_kv·min(S, cap)`` (broadcasts)."""
        s = np.asarray(context, dtype=float)
        total = np.zeros(s.shape)
        for elements, cap in self.terms:
            total = total + elements * p_kv * _capped(s, cap)
        return total

    def bytes_per_sequence(self, context, p_kv: float):
        """KV plus fixed state one sequence of S tokens holds on this GPU (broadcasts): what serving allocates."""
        return self.kv_bytes_per_sequence(context, p_kv) + self.state_bytes

    def kv_bytes_per_token(self, p_kv: float) -> float:
        """KV bytes one token adds on this GPU while no cap is reached, ``Σ elements·p_kv``."""
        return float(sum(elements for elements, _ in self.terms)) * p_kv


@dataclass(frozen=True)
class AttentionProfile:
    """Attention FLOP per sequence on one GPU, beyond the weights' ``2·N_active`` per token.

    Attributes:
        decode: ``(flop_per_key, cap)`` per group of attention layers: FLOP per cached key one new token
            costs over the group (``4·h_q·d_head`` per layer, this GPU's heads), and the cap (None: S).
        prefill: ``(flop_per_pair, window, chunk)`` per group: FLOP per causal (query, key) pair of a prompt.
        per_token: FLOP per token of the fixed-state layers' own mixing (independent of S).
    """

    decode: tuple[tuple[float, int | None], ...]
    prefill: tuple[tuple[float, int | None, int | None], ...]
    per_token: float

    def decode_flop(self, context):
        """Attention FLOP of one new token at context S (broadcasts over S)."""
        s = np.asarray(context, dtype=float)
        total = np.full(s.shape, float(self.per_token))
        for flop, cap in self.decode:
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
class StepProfile:
    """A model on one GPU, reduced to what a step needs (per GPU, SI units).

    Attributes:
        peak_flop_per_s: the compute roof of the weight format on this GPU (dense), FLOP/s.
        bandwidth: HBM bandwidth, bytes/s.
        n_active_params: parameters this GPU computes with per token (FLOP per token = 2 × this).
        bytes_per_weight: p, the weight format's mean bytes per weight held (the model's, whatever the split).
        weight_stages: ``(fixed, routed)`` weight bytes per pipeline stage on one GPU
            (:meth:`core.weights.Weights.stages`): a step reads ``fixed + f·routed``, memory holds both.
        param_stages: the same in parameters (whatever the format).
        experts: routed experts E per MoE layer (0 for a dense model).
        experts_per_token: k_e.
        expert_groups: EP, the groups a GPU's experts serve (tokens of all groups reach them).
        cache: what one sequence holds on this GPU, with GQA on (``True``) and off (``False``).
        model_cache: what one sequence holds in the whole model (all GPUs together), by GQA.
        attention: attention FLOP per sequence on this GPU.
        collectives: what this GPU sends per step (empty on one GPU).
        call_latency_s: fixed seconds of one collective call.
        link_bandwidth: the scale-up link's bytes/s per direction, or None (only call latency counts).
        kernels_per_step: kernels one step launches on this GPU.
        launch_s: seconds those launches take (the third ceiling).
        capacity_bytes: memory capacity, bytes.
        reserve_bytes: memory held back (activations, CUDA context, slack), bytes.
        stages: PP, pipeline stages; each holds KV for PP micro-batches, and a token crosses all of them.
        groups: sequences' groups served side by side: EP groups × replicas.
        gpus: every GPU of the deployment.
    """

    peak_flop_per_s: float
    bandwidth: float
    n_active_params: float
    bytes_per_weight: float
    weight_stages: tuple[tuple[float, float], ...]
    param_stages: tuple[tuple[float, float], ...]
    experts: int
    experts_per_token: int
    expert_groups: int
    cache: dict[bool, CacheProfile]
    model_cache: dict[bool, CacheProfile]
    attention: AttentionProfile
    collectives: tuple[Collective, ...]
    call_latency_s: float
    link_bandwidth: float | None
    kernels_per_step: int
    launch_s: float
    capacity_bytes: float
    reserve_bytes: float
    stages: int
    groups: int
    gpus: int

    # -- what a step reads, and what memory holds ----------------------------------
    def touched_fraction(self, tokens):
        """Fraction of this GPU's routed experts ``tokens`` tokens of its batch touch: ``1 − (1 − k_e/E)^(EP·t)``."""
        t = np.asarray(tokens, dtype=float)
        if not self.experts:
            return np.zeros(t.shape)
        return 1.0 - (1.0 - self.experts_per_token / self.experts) ** (self.expert_groups * t)

    @staticmethod
    def _most_loaded(stages, fraction):
        best = np.zeros(np.shape(fraction))
        for fixed, routed in stages:
            best = np.maximum(best, fixed + routed * fraction)
        return best

    def weight_bytes_read(self, tokens):
        """Weight bytes this GPU reads for ``tokens`` tokens of its batch (broadcasts)."""
        return self._most_loaded(self.weight_stages, self.touched_fraction(tokens))

    def params_read(self, tokens):
        """Parameters this GPU reads for ``tokens`` tokens of its batch (broadcasts)."""
        return self._most_loaded(self.param_stages, self.touched_fraction(tokens))

    @property
    def weight_bytes_held(self) -> float:
        """Weight bytes this GPU holds: every expert of its share, on the most loaded stage."""
        return float(max(fixed + routed for fixed, routed in self.weight_stages))

    @property
    def params_held(self) -> float:
        """Parameters this GPU holds."""
        return float(max(fixed + routed for fixed, routed in self.param_stages))

    @property
    def free_for_kv_bytes(self) -> float:
        """Capacity less the weights and the reserve (negative when the weights alone do not fit), bytes."""
        return self.capacity_bytes - self.weight_bytes_held - self.reserve_bytes

    # -- communication ---------------------------------------------------------------
    def bytes_sent(self, tokens):
        """Bytes this GPU sends per step for ``tokens`` tokens of its batch (broadcasts)."""
        per_token = sum(c.bytes_per_token for c in self.collectives)
        return np.asarray(tokens, dtype=float) * per_token

    def communication_time_s(self, tokens):
        """Seconds this GPU communicates per step: ``Σ calls·t_call + bytes sent / link`` (broadcasts)."""
        sent = self.bytes_sent(tokens)
        calls = sum(c.calls for c in self.collectives)
        wire = sent / self.link_bandwidth if self.link_bandwidth else 0.0 * sent
        return wire + calls * self.call_latency_s

    # -- serialisation -----------------------------------------------------------------
    def to_json(self) -> dict:
        """The profile as JSON-ready data for ``app/step.js`` (the caches keyed ``"gqa"`` and ``"mha"``)."""
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in ("cache", "model_cache"):
                value = {("gqa" if key else "mha"): dataclasses.asdict(c) for key, c in value.items()}
            elif f.name == "attention":
                value = dataclasses.asdict(value)
            elif f.name == "collectives":
                value = [dataclasses.asdict(c) for c in value]
            out[f.name] = value
        return _lists(out)


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

    Attributes:
        batch: B, sequences per step (per micro-batch).
        arithmetic_intensity_weights: ``2·N_active·B·k / weights read``, FLOP/byte (``2·B·k/p`` dense).
        arithmetic_intensity_with_kv: all the step's FLOP over all its bytes, FLOP/byte.
        attainable_flop_per_s_weights: ``min(P_peak, BW·I, FLOP_weights / t_launch)``, FLOP/s.
        attainable_flop_per_s_with_kv: ``min(P_peak, BW·I_kv, FLOP / t_launch)``, FLOP/s.
        peak_fraction_weights, peak_fraction_with_kv: those over P_peak, 0..1.
        flop: FLOP of the step; flop_weights: its ``2·N_active·B·k``; attention_flop: the rest.
        weight_bytes_read: weight bytes the step reads; kv_traffic_bytes: cache and state bytes it moves.
        bytes_moved: their sum.
        kv_bytes_per_sequence: cache and state one sequence holds on this GPU.
        compute_time_s, memory_time_s, communication_time_s, launch_time_s: the step's four times, s.
        gpu_time_s: ``max(compute, memory) + communication``, what the launches race, s.
        step_time_s_with_kv: ``max(gpu time, launch time)``, s.
        step_time_s_weights: the same ignoring the cache's traffic, s.
        bytes_sent: bytes this GPU sends per step.
        tokens_per_s_with_kv: ``B·gained / step time``; tokens_per_s_weights: ignoring KV traffic.
        memory_used_bytes: weights + PP micro-batches' cache + reserve; fits: that within capacity.
        bound: ``"overhead"`` when the launches outlast the GPU's time, else ``"memory"`` below the ridge
            point (by the intensity counting KV reads) and ``"compute"`` at or above it.
        experts_touched_fraction: of this GPU's routed experts, the fraction the step's tokens touch.
    """

    batch: np.ndarray
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


def step(profile: StepProfile, batch, *, tokens, context, gained, p_kv: float, gqa: bool = True,
         prefill: bool = False) -> Step:
    """One step of one GPU at each batch size in ``batch`` (see the module docstring).

    Args:
        profile: the model on this GPU (:func:`core.profiles.step_profile`).
        batch: B, sequences per step: a scalar or 1-D array (>= 1).
        tokens: k, tokens each sequence adds for one read of the weights (decode: the speculation depth;
            prefill: the prompt length P).
        context: S, tokens of cache each sequence reads in decode (ignored in prefill, where it is P).
        gained: tokens each sequence gains per step (E in decode, P in prefill), for tokens/s.
        p_kv: bytes per KV-cache element.
        gqa: grouped-query attention on (the cache as the config has it) or off (every head its own K/V).
        prefill: the step processes a prompt (causal attention over it, writing its cache).

    Returns:
        a :class:`Step`, one entry per batch size.
    """
    b = np.atleast_1d(np.asarray(batch, dtype=float))
    ones = np.ones(b.shape)
    t = b * tokens  # the tokens of one step, per weight read
    held_context = tokens if prefill else context
    attention = profile.attention
    per_sequence_attention = attention.prefill_flop(tokens) if prefill else tokens * attention.decode_flop(context)
    cache = profile.cache[bool(gqa)]
    kv_seq = cache.bytes_per_sequence(held_context, p_kv) * ones
    peak, bw, launch = profile.peak_flop_per_s, profile.bandwidth, profile.launch_s

    weight = profile.weight_bytes_read(t) * ones
    flop_weights = 2.0 * profile.n_active_params * t
    attention_flop = b * per_sequence_attention
    flop = flop_weights + attention_flop
    kv = b * kv_seq
    moved = weight + kv
    t_compute, t_memory = flop / peak, moved / bw
    t_comm = profile.communication_time_s(t) * ones
    gpu_time = np.maximum(t_compute, t_memory) + t_comm
    t_step = np.maximum(gpu_time, launch)
    t_weights = np.maximum(np.maximum(flop_weights / peak, weight / bw) + t_comm, launch)
    intensity, intensity_kv = flop_weights / weight, flop / moved
    attainable = np.minimum(np.minimum(peak, bw * intensity), _per_launch(flop_weights, launch))
    attainable_kv = np.minimum(np.minimum(peak, bw * intensity_kv), _per_launch(flop, launch))
    used = profile.weight_bytes_held + profile.stages * kv + profile.reserve_bytes
    ridge = peak / bw
    bound = np.where(launch > gpu_time, "overhead", np.where(intensity_kv < ridge, "memory", "compute"))
    return Step(
        batch=b.astype(np.int64),
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
        kv_traffic_bytes=kv,
        bytes_moved=moved,
        kv_bytes_per_sequence=kv_seq,
        compute_time_s=t_compute,
        memory_time_s=t_memory,
        communication_time_s=t_comm,
        launch_time_s=launch * ones,
        gpu_time_s=gpu_time,
        step_time_s_with_kv=t_step,
        step_time_s_weights=t_weights,
        bytes_sent=profile.bytes_sent(t) * ones,
        tokens_per_s_with_kv=b * gained / t_step,
        tokens_per_s_weights=b * gained / t_weights,
        memory_used_bytes=used,
        fits=used <= profile.capacity_bytes,
        bound=bound,
        experts_touched_fraction=profile.touched_fraction(t) * ones,
    )


@dataclass(frozen=True)
class Workload:
    """The steps of one workload: itself, its batch ladder, and the same request's other steps.

    Attributes:
        point: the workload's step (decode: B sequences, k tokens each; prefill: B prompts).
        ladder: the same step at B = 1, 2, 4, … to past the ridge (:func:`core.roofline.batch_ladder`).
        prefill: the prefill of B prompts; ttft: of one prompt alone (the time to first token).
        verify: the decode step at depth k (a verify pass); plain: the decode step at k = 1.
        expected_tokens: E, tokens a sequence gains per verify pass (1 at k = 1).
        max_batch: the most sequences of the workload's cache that fit beside the weights and the reserve.
        weight_bytes_held, params_held, params_read: this GPU's weights held, and its parameters held and read.
        free_for_kv_bytes: capacity less weights and reserve (negative when the weights alone do not fit).
        kv_bytes_per_sequence: one sequence's cache and state in the whole model, at the workload's context.
        kv_bytes_per_token: KV bytes one token adds in the whole model; kv_bytes_per_token_per_gpu: on this GPU.
    """

    point: Step
    ladder: Step
    prefill: Step
    ttft: Step
    verify: Step
    plain: Step
    expected_tokens: float
    max_batch: int
    weight_bytes_held: float
    params_held: float
    params_read: float
    free_for_kv_bytes: float
    kv_bytes_per_sequence: float
    kv_bytes_per_token: float
    kv_bytes_per_token_per_gpu: float


def workload(profile: StepProfile, *, batch: int, spec_k: int, context: int, prompt: int, acceptance: float,
             p_kv: float, gqa: bool, prefill: bool, max_batch: int) -> Workload:
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
    """
    e = float(expected_tokens_per_verify(acceptance, spec_k))
    k, gained = (prompt, float(prompt)) if prefill else (spec_k, e)

    def at(b, tokens, is_prefill, tokens_gained=gained):
        return step(profile, b, tokens=tokens, context=context, gained=tokens_gained, p_kv=p_kv, gqa=gqa,
                    prefill=is_prefill)

    ridge = profile.peak_flop_per_s / profile.bandwidth
    point = at(batch, k, prefill)
    kv_held = profile.stages * float(point.kv_bytes_per_sequence[0])  # a stage holds PP micro-batches' cache
    return Workload(
        point=point,
        ladder=at(batch_ladder(ridge, profile.bytes_per_weight, k, max_batch), k, prefill),
        prefill=at(batch, prompt, True),
        ttft=at(1, prompt, True),
        verify=at(batch, spec_k, False),
        plain=at(batch, 1, False),
        expected_tokens=e,
        max_batch=int(max_batch_that_fits(profile.free_for_kv_bytes, kv_held)),
        weight_bytes_held=profile.weight_bytes_held,
        params_held=profile.params_held,
        params_read=float(profile.params_read(batch * k)),
        free_for_kv_bytes=profile.free_for_kv_bytes,
        kv_bytes_per_sequence=float(profile.model_cache[gqa].bytes_per_sequence(prompt if prefill else context, p_kv)),
        kv_bytes_per_token=profile.model_cache[gqa].kv_bytes_per_token(p_kv),
        kv_bytes_per_token_per_gpu=profile.cache[gqa].kv_bytes_per_token(p_kv),
    )
