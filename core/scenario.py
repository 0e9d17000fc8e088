"""The Scenario: one model, on one accelerator, at one operating point.

A :class:`Scenario` holds the levers (``param`` parameters, validated with
bounds) and :meth:`Scenario.evaluate` derives everything the lab shows, in SI
units, as a :class:`ScenarioResult`.  Nothing here imports a UI library: the
Panel app, the command line and a notebook all read the same object.

Formulas (articles in ``shared/seeds``):

* intensity on the weights ``I = 2·B·k / p`` (article 004, section 03);
* intensity counting KV reads ``2·N·B·k / (N·p + B·KV_seq(S))`` (article 000,
  Steps 3 and 6: the cache is read every step and does not amortise);
* ridge point ``P_peak / BW`` and attainable ``min(P_peak, BW·I)`` (Williams et
  al. 2009; article 004, section 01);
* KV cache ``2·L·h_kv·d_head·S·B·p_kv`` (article 004, section 04);
* step time ``max(FLOPs / P_peak, bytes / BW)`` and tokens/s ``B·E / step``
  (article 000, Steps 1, 4 and 6), where E is the tokens a sequence gains per
  step: 1 in plain decode, the expected accepted tokens ``(1 − α^k)/(1 − α)``
  with speculation depth k (Leviathan et al. 2023), the prompt in prefill.

Prefill is the same formula with ``k`` = the prompt length (article 004,
"Go deeper"): its traffic is the weights plus the KV cache it writes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import param

from . import kvcache, roofline
from .hardware import CAPACITY_CONVENTIONS, Accelerator, get_accelerator, load_accelerators
from .model_catalogue import get_model, load_models
from .models import ModelSpec
from .precision import KV_PRECISIONS, PRECISIONS, WEIGHT_PRECISIONS, compute_roof, get_precision
from .speculation import expected_tokens_per_verify
from .units import GiB

#: Default memory held back for activations, CUDA context and allocator slack.
#: 3 GiB reproduces article 000, Step 5: ~59 sequences of 8k context fit an
#: 80e9-byte H100 with no reserve, "56 once you leave headroom".
DEFAULT_RESERVE_BYTES = 3 * GiB


@dataclass(frozen=True)
class Ladder:
    """The batch ladder: one entry per rung, all numpy arrays of one length.

    Attributes:
        batch: B per rung (1, 2, 4, ...), int64.
        arithmetic_intensity_weights: ``2·B·k/p``, FLOP/byte.
        arithmetic_intensity_with_kv: counting KV reads, FLOP/byte.
        attainable_flop_per_s_weights: ``min(P_peak, BW·I)``, FLOP/s.
        peak_fraction_weights: attainable / P_peak, 0..1.
        tokens_per_s: roofline ceiling counting KV traffic, tokens/s.
        tokens_per_s_weights: the ceiling ignoring KV traffic, tokens/s.
        attainable_flop_per_s_with_kv: ``min(P_peak, BW·I_kv)``, FLOP/s.
        fits: weights + KV + reserve within capacity, bool.
        flop: FLOP of one step, ``2·N_active·B·k``.
        weight_bytes_read: weight bytes one step reads (MoE: the experts touched).
        step_time_s_with_kv: ``max(FLOPs/P_peak, (weights + KV)/BW)``, seconds.
        step_time_s_weights: the same ignoring KV traffic, seconds.
    """

    batch: np.ndarray
    arithmetic_intensity_weights: np.ndarray
    arithmetic_intensity_with_kv: np.ndarray
    attainable_flop_per_s_weights: np.ndarray
    peak_fraction_weights: np.ndarray
    tokens_per_s_with_kv: np.ndarray
    tokens_per_s_weights: np.ndarray
    attainable_flop_per_s_with_kv: np.ndarray
    fits: np.ndarray
    flop: np.ndarray
    weight_bytes_read: np.ndarray
    step_time_s_with_kv: np.ndarray
    step_time_s_weights: np.ndarray


@dataclass(frozen=True)
class ScenarioResult:
    """Everything derived from a :class:`Scenario`, SI units throughout.

    Bytes are bytes, FLOP are FLOP, times are seconds, rates per second.
    ``kv_bytes`` is the cache held by the whole batch; ``kv_traffic_bytes`` is
    what one step moves (read in decode, written in prefill).  ``weight_bytes_read``
    is what one step reads; ``weight_bytes_held`` what memory holds (they differ
    only for mixture-of-experts, whose step reads the experts its tokens touch).
    """

    phase: str
    gpu: Accelerator
    model: ModelSpec
    weight_dtype: str
    kv_dtype: str
    gqa: bool
    batch: int
    spec_k: int
    tokens_per_read: int
    context: int
    n_params: int
    n_active_params: int
    weight_bytes_held: float
    bytes_per_weight: float
    kv_bytes_per_element: float
    compute_roof: str
    compute_roof_reason: str
    peak_flop_per_s: float
    bandwidth: float
    capacity_bytes: float
    capacity_convention: str
    reserve_bytes: float
    weight_bytes_read: float
    flop_per_step: float
    arithmetic_intensity_weights: float
    arithmetic_intensity_with_kv: float
    ridge_point: float
    attainable_flop_per_s_weights: float
    attainable_flop_per_s_with_kv: float
    peak_fraction_weights: float
    peak_fraction_with_kv: float
    bound: str
    kv_bytes_per_token: float
    kv_bytes_per_sequence: float
    kv_bytes: float
    kv_traffic_bytes: float
    bytes_per_step: float
    step_time_s_with_kv: float
    step_time_s_weights: float
    tokens_per_s_with_kv: float
    tokens_per_s_weights: float
    memory_used_bytes: float
    free_for_kv_bytes: float
    fits: bool
    max_batch: int
    acceptance: float
    expected_tokens_per_step: float
    speculative_speedup: float
    prefill_intensity: float
    prefill_attainable_flop_per_s: float
    decode_intensity: float
    decode_attainable_flop_per_s: float
    ttft_s: float
    tpot_s: float
    ladder: Ladder
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict:
        """Every scalar field as a JSON-ready dict (SI units; keys are the field names).

        Generated from the dataclass fields, so a new field is exported without a
        second list to keep in step; the GPU and model appear as their ids and the
        ladder is left out (``core.export`` writes it as its own table).
        """
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in ("gpu", "model"):
                value = value.id
            elif isinstance(value, Ladder):
                continue
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value.item() if isinstance(value, np.generic) else value
        return out


class Scenario(param.Parameterized):
    """The levers of one inference workload on one accelerator.

    Every parameter is validated by ``param`` (selectors for ids, bounds for
    numbers): an invalid value raises ``ValueError`` and leaves the scenario as
    it was.
    """

    gpu = param.Selector(default="h100-sxm", objects={g.name: g.id for g in load_accelerators().values()},
                         label="GPU",
                         doc="Accelerator, by catalogue id (core/hardware.json).")
    model = param.Selector(default="llama-3-70b", objects={m.name: m.id for m in load_models().values()},
                           label="Model",
                           doc="Model, by catalogue id (core/model_configs/).")
    weight_dtype = param.Selector(default="bf16", objects={PRECISIONS[p].label: p for p in WEIGHT_PRECISIONS},
                                  label="Weight precision p",
                                  doc="Weight format; p = its bytes per weight.")
    kv_dtype = param.Selector(default="bf16", objects={PRECISIONS[p].label: p for p in KV_PRECISIONS},
                              label="KV-cache precision p_kv",
                              doc="KV-cache format; p_kv = its bytes per element.")
    batch = param.Integer(default=1, bounds=(1, 65536), label="Batch B",
                          doc="B: concurrent sequences sharing one read of the weights.")
    spec_k = param.Integer(default=1, bounds=(1, 64), label="Speculation depth k",
                           doc="k: tokens produced per read of the weights in decode "
                               "(speculative decoding verifies k tokens in one pass).")
    context = param.Integer(default=8192, bounds=(1, 2**21), label="Context S (tokens)",
                            doc="S: tokens of context each sequence holds in the KV cache during decode.")
    gqa = param.Boolean(default=True, label="Grouped-query attention",
                        doc="Off: every query head keeps its own K and V (h_kv = number of query heads).")
    reserve_bytes = param.Number(default=DEFAULT_RESERVE_BYTES, bounds=(0, None), label="Reserve (bytes)",
                                 doc="Memory held back for activations, CUDA context and allocator slack, bytes.")
    capacity_convention = param.Selector(default="binary",
                                         objects={"GB read as GiB (as built)": "binary",
                                                  "GB = 1e9 bytes (article 000)": "decimal"},
                                         label="Capacity convention",
                                         doc="How the datasheet's 'GB' becomes bytes: " + "; ".join(
                                             f"{k}: {v}" for k, v in CAPACITY_CONVENTIONS.items()))
    phase = param.Selector(default="decode", objects=["decode", "prefill"], label="Phase",
                           doc="decode: k = speculation depth; prefill: k = prompt length.")
    prompt_len = param.Integer(default=2000, bounds=(1, 2**21), label="Prompt length",
                               doc="Tokens in the prompt processed by prefill (k in prefill).")
    acceptance = param.Number(default=0.7, bounds=(0.0, 1.0), step=0.05, label="Acceptance rate α",
                              doc="Probability that the target model accepts each draft token "
                                  "(speculative decoding; an assumption, not a property of the hardware).")

    def __init__(self, **params):
        # A session's own models (read from a config.json) and accelerators (a
        # form, or `python -m core measure`) join the catalogue's, for this
        # scenario only.
        super().__init__(**params)
        self._custom_models: dict[str, ModelSpec] = {}
        self._custom_gpus: dict[str, Accelerator] = {}

    def levers(self) -> dict:
        """The scenario's levers as keyword arguments of :func:`evaluate` (ids, SI units)."""
        return {name: getattr(self, name) for name in LEVERS}

    def resolve_model(self, model_id: str) -> ModelSpec:
        """This scenario's own model ``model_id``, else the catalogue's."""
        return self._custom_models.get(model_id) or get_model(model_id)

    def resolve_gpu(self, gpu_id: str) -> Accelerator:
        """This scenario's own accelerator ``gpu_id``, else the catalogue's."""
        return self._custom_gpus.get(gpu_id) or get_accelerator(gpu_id)

    def add_model(self, model: ModelSpec) -> ModelSpec:
        """Offer ``model`` in the model selector and select it.

        A second model with the same id gets a numbered one (``config-x-2``), so
        selecting it is a change every view sees.  A checkpoint quantised to a
        width the lab has (4-bit GPTQ/AWQ, FP8) also selects that weight precision.

        Returns:
            the model as registered (its id may have been numbered).
        """
        model_id, n = model.id, 2
        while model_id in self._custom_models or model_id in self.param["model"].objects:
            model_id, n = f"{model.id}-{n}", n + 1
        if model_id != model.id:
            model = dataclasses.replace(model, id=model_id, name=f"{model.name} ({n - 1})")
        self._custom_models[model.id] = model
        self.param["model"].objects = {**self.param["model"].names, f"{model.name} (your config)": model.id}
        levers = {"model": model.id}
        quantised = {4: "int4", 8: "fp8" if model.quantization and model.quantization.method == "fp8" else "int8"}
        if model.quantization and model.quantization.bits in quantised:
            levers["weight_dtype"] = quantised[model.quantization.bits]
        self.param.update(**levers)
        return model

    def add_gpu(self, gpu: Accelerator) -> None:
        """Offer ``gpu`` in the GPU selector (replacing one of the same id) and select it."""
        self._custom_gpus[gpu.id] = gpu
        names = {k: v for k, v in self.param["gpu"].names.items() if v != gpu.id}
        self.param["gpu"].objects = {**names, f"{gpu.name} (yours)": gpu.id}
        self.gpu = gpu.id

    def custom_gpu(self) -> Accelerator | None:
        """The selected accelerator if it is this scenario's own, else None."""
        return self._custom_gpus.get(self.gpu)

    def evaluate(self) -> ScenarioResult:
        """Derive every number of the scenario (see the module docstring)."""
        levers = self.levers()
        return evaluate(gpu=self.resolve_gpu(levers.pop("gpu")), model=self.resolve_model(levers.pop("model")),
                        **levers)


#: The Scenario's parameters, in the order the controls show them.
LEVERS = (
    "model", "gpu", "weight_dtype", "kv_dtype", "batch", "spec_k", "context", "gqa", "phase", "prompt_len",
    "acceptance", "capacity_convention", "reserve_bytes",
)


def evaluate(
    *,
    gpu: Accelerator,
    model: ModelSpec,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    batch: int = 1,
    spec_k: int = 1,
    context: int = 8192,
    gqa: bool = True,
    reserve_bytes: float = DEFAULT_RESERVE_BYTES,
    capacity_convention: str = "binary",
    phase: str = "decode",
    prompt_len: int = 2000,
    acceptance: float = 0.7,
) -> ScenarioResult:
    """The :class:`ScenarioResult` of explicit levers (what :meth:`Scenario.evaluate` calls).

    Raises:
        ValueError: unknown precision, phase or capacity convention.
    """
    if phase not in ("decode", "prefill"):
        raise ValueError(f"unknown phase {phase!r}; accepted: decode, prefill")
    p = get_precision(weight_dtype).bytes_per_element
    p_kv = get_precision(kv_dtype).bytes_per_element
    roof, roof_reason = compute_roof(weight_dtype, gpu.dense_flop_per_s)
    peak, bw = gpu.dense_flop_per_s[roof], gpu.hbm_bandwidth
    capacity = gpu.capacity_bytes(capacity_convention)

    # Decode reads each sequence's cache of S tokens every step; prefill writes
    # the cache of its prompt once.  Either way k is the tokens per weight read.
    k = spec_k if phase == "decode" else prompt_len
    s_held = context if phase == "decode" else prompt_len

    # Memory holds every weight; a step reads the weights its tokens use (all of
    # them for a dense model; for MoE only the experts the batch's tokens touch).
    p = model.weight_bytes_per_param(p)  # plus the checkpoint's scale/zero overhead, if quantised
    n, n_active = model.n_params, model.n_active_params
    weight_bytes_held = n * p
    kv_seq = model.kv_bytes_per_sequence(s_held, p_kv, gqa)
    free_for_kv = capacity - weight_bytes_held - reserve_bytes
    # Tokens each sequence gains per step: every prompt token in prefill; in
    # decode the expected accepted tokens of a verify pass of depth k (E = 1 at k = 1).
    e_tokens = float(expected_tokens_per_verify(acceptance, spec_k))
    gained = e_tokens if phase == "decode" else float(prompt_len)

    def at(b, tokens_per_read, kv_per_seq, tokens_gained=gained) -> Ladder:
        """The step of ``b`` sequences, one mechanism for the ladder and every point below."""
        return _ladder(np.array([b]), model, p, tokens_per_read, tokens_gained, kv_per_seq, peak, bw,
                       reserve_bytes, capacity)

    batches = roofline.batch_ladder(roofline.ridge_point(peak, bw), p, k)
    ladder = _ladder(batches, model, p, k, gained, kv_seq, peak, bw, reserve_bytes, capacity)
    point = at(batch, k, kv_seq)

    # One request crosses the roofline twice (article 004, "Go deeper"): prefill
    # of the prompt (k = prompt length, writing its cache), then decode steps
    # (k = speculation depth, reading a cache of S tokens).
    kv_prompt = model.kv_bytes_per_sequence(prompt_len, p_kv, gqa)
    kv_context = model.kv_bytes_per_sequence(context, p_kv, gqa)
    prefill = at(batch, prompt_len, kv_prompt)
    verify = at(batch, spec_k, kv_context)
    t_verify = float(verify.step_time_s_with_kv[0])
    t_plain = float(at(batch, 1, kv_context).step_time_s_with_kv[0])
    ttft = float(at(1, prompt_len, kv_prompt).step_time_s_with_kv[0])  # one request's prompt, alone

    weight_bytes = float(point.weight_bytes_read[0])
    flops = float(point.flop[0])
    kv_traffic = batch * kv_seq
    bytes_step = weight_bytes + kv_traffic
    ridge = float(roofline.ridge_point(peak, bw))
    intensity_kv = float(point.arithmetic_intensity_with_kv[0])

    warnings = []
    if weight_bytes_held + reserve_bytes > capacity:
        warnings.append(
            f"the weights alone ({weight_bytes_held / GiB:,.1f} GiB) and the reserve do not fit in "
            f"{capacity / GiB:,.1f} GiB: this needs tensor parallelism over several GPUs or smaller weights"
        )
    if model.max_context and s_held > model.max_context:
        warnings.append(
            f"S = {s_held:,} tokens is beyond {model.name}'s trained context of {model.max_context:,}"
        )
    return ScenarioResult(
        phase=phase,
        gpu=gpu,
        model=model,
        weight_dtype=weight_dtype,
        kv_dtype=kv_dtype,
        gqa=bool(gqa),
        batch=int(batch),
        spec_k=int(spec_k),
        tokens_per_read=int(k),
        context=int(s_held),
        n_params=int(n),
        n_active_params=int(n_active),
        weight_bytes_held=float(weight_bytes_held),
        bytes_per_weight=p,
        kv_bytes_per_element=p_kv,
        compute_roof=roof,
        compute_roof_reason=roof_reason,
        peak_flop_per_s=peak,
        bandwidth=bw,
        capacity_bytes=capacity,
        capacity_convention=capacity_convention,
        reserve_bytes=float(reserve_bytes),
        weight_bytes_read=float(weight_bytes),
        flop_per_step=flops,
        arithmetic_intensity_weights=float(point.arithmetic_intensity_weights[0]),
        arithmetic_intensity_with_kv=intensity_kv,
        ridge_point=ridge,
        attainable_flop_per_s_weights=float(point.attainable_flop_per_s_weights[0]),
        attainable_flop_per_s_with_kv=float(point.attainable_flop_per_s_with_kv[0]),
        peak_fraction_weights=float(point.peak_fraction_weights[0]),
        peak_fraction_with_kv=float(point.attainable_flop_per_s_with_kv[0]) / peak,
        bound="memory" if intensity_kv < ridge else "compute",
        kv_bytes_per_token=model.kv_bytes_per_token(p_kv, gqa),
        kv_bytes_per_sequence=float(kv_seq),
        kv_bytes=float(batch * kv_seq),
        kv_traffic_bytes=float(kv_traffic),
        bytes_per_step=float(bytes_step),
        step_time_s_with_kv=float(point.step_time_s_with_kv[0]),
        step_time_s_weights=float(point.step_time_s_weights[0]),
        tokens_per_s_with_kv=float(point.tokens_per_s_with_kv[0]),
        tokens_per_s_weights=float(point.tokens_per_s_weights[0]),
        memory_used_bytes=float(weight_bytes_held + batch * kv_seq + reserve_bytes),
        free_for_kv_bytes=float(free_for_kv),
        fits=bool(point.fits[0]),
        max_batch=int(kvcache.max_batch_that_fits(free_for_kv, kv_seq)),
        acceptance=float(acceptance),
        expected_tokens_per_step=e_tokens,
        speculative_speedup=e_tokens * t_plain / t_verify,
        prefill_intensity=float(prefill.arithmetic_intensity_weights[0]),
        prefill_attainable_flop_per_s=float(prefill.attainable_flop_per_s_weights[0]),
        decode_intensity=float(verify.arithmetic_intensity_weights[0]),
        decode_attainable_flop_per_s=float(verify.attainable_flop_per_s_weights[0]),
        ttft_s=ttft,
        tpot_s=t_verify / e_tokens,
        ladder=ladder,
        warnings=tuple(warnings),
    )


def batch_sweep(r: ScenarioResult, batches) -> Ladder:
    """The per-batch numbers of ``r``'s scenario at other batch sizes.

    Everything but B is held (model, GPU, precisions, k, S, reserve), so this is
    the throughput-vs-batch curve of article 000 (chart after Step 5).

    Args:
        r: a result of :func:`evaluate`.
        batches: 1-D array of batch sizes (>= 1).
    """
    gained = r.expected_tokens_per_step if r.phase == "decode" else float(r.tokens_per_read)
    return _ladder(np.asarray(batches), r.model, r.bytes_per_weight, r.tokens_per_read, gained,
                   r.kv_bytes_per_sequence, r.peak_flop_per_s, r.bandwidth, r.reserve_bytes, r.capacity_bytes)


def _ladder(batches, model, p, k, gained, kv_seq, peak, bw, reserve_bytes, capacity) -> Ladder:
    """Vectorised per-batch numbers (used for the ladder and for the point itself).

    ``p`` is bytes per weight (with any quantisation overhead); ``k`` the tokens
    of arithmetic per weight read; ``gained`` the tokens each sequence gains per
    step (k in prefill, the expected accepted tokens in decode).
    """
    b = np.asarray(batches)
    n, n_active = model.n_params, model.n_active_params
    read = model.params_read(b * k)
    weight_bytes = read * p
    flops = roofline.decode_flop(n_active, b, k)
    # 2·B·k/p for a dense model (N_active = N read); MoE reads fewer weights than it holds.
    intensity = roofline.arithmetic_intensity_weights(b, k, p) * (n_active / read)
    bytes_step = weight_bytes + b * kv_seq
    intensity_kv = flops / bytes_step
    attainable = roofline.attainable_flop_per_s(intensity, peak, bw)
    t_step = roofline.step_time(flops, bytes_step, peak, bw)
    t_no_kv = roofline.step_time(flops, weight_bytes, peak, bw)
    return Ladder(
        batch=b,
        arithmetic_intensity_weights=intensity,
        arithmetic_intensity_with_kv=intensity_kv,
        attainable_flop_per_s_weights=attainable,
        peak_fraction_weights=attainable / peak,
        tokens_per_s_with_kv=b * gained / t_step,
        tokens_per_s_weights=b * gained / t_no_kv,
        attainable_flop_per_s_with_kv=roofline.attainable_flop_per_s(intensity_kv, peak, bw),
        fits=n * p + b * kv_seq + reserve_bytes <= capacity,
        flop=flops,
        weight_bytes_read=weight_bytes,
        step_time_s_with_kv=t_step,
        step_time_s_weights=t_no_kv,
    )
