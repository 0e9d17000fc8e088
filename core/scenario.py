"""The Scenario: one model, on one accelerator, at one operating point.

A :class:`Scenario` holds the levers — ``param`` parameters declared once, in
:data:`LEVERS` (the lever table: every surface is generated from it) — and a
:class:`core.catalogue.Catalogue` (the shipped models and GPUs plus a session's
own); :meth:`Scenario.evaluate` derives everything the lab shows, in SI units, as
a :class:`ScenarioResult`.  Nothing here imports a UI library: the
Panel app, the command line and a notebook all read the same object.

Formulas (articles in ``shared/seeds``):

* intensity on the weights ``I = 2·B·k / p`` (article 004, section 03);
* intensity counting KV reads ``2·N·B·k / (N·p + B·KV_seq(S))`` (article 000,
  Steps 3 and 6: the cache is read every step and does not amortise);
* ridge point ``P_peak / BW`` and attainable ``min(P_peak, BW·I)`` (Williams et
  al. 2009; article 004, section 01);
* KV cache ``2·L·h_kv·d_head·S·B·p_kv`` (article 004, section 04);
* step time ``max(FLOPs / P_peak, bytes / BW, t_launch)`` and tokens/s ``B·E / step``
  (article 000, Steps 1, 4 and 6, and "The third regime nobody plots": the GPU
  idles between small kernels waiting for the CPU to launch the next, so the
  launches of a step, ``t_launch`` (:mod:`core.overhead`), are a third ceiling),
  where E is the tokens a sequence gains per step: 1 in plain decode, the
  expected accepted tokens ``(1 − α^k)/(1 − α)`` with speculation depth k
  (Leviathan et al. 2023), the prompt in prefill.  The bound is the ceiling that
  sets the step: ``overhead`` when ``t_launch`` is longer than the GPU's own
  time, else ``memory`` or ``compute`` by the intensity counting KV reads
  against the ridge point; the attainable FLOP/s are ``min(P_peak, BW·I,
  FLOPs / t_launch)``, the roofline under the overhead ceiling.

Prefill is the same formula with ``k`` = the prompt length (article 004,
"Go deeper"): its traffic is the weights plus the KV cache it writes.

Many GPUs (TP, PP, EP, replicas: :mod:`core.parallelism`): the roofline stays per
GPU — FLOPs, bytes and memory are one GPU's share — and the step adds the time
that GPU spends communicating; cost per million tokens is the price per GPU-hour
times the GPUs over the tokens/s the roofline allows (article 000: from bytes
moved, not FLOPs).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import param

from . import kvcache, overhead, roofline
from .catalogue import Catalogue
from .hardware import CAPACITY_CONVENTIONS, Accelerator, get_accelerator, load_catalogue
from .levers import Lever, LeverTable
from .model_catalogue import load_models
from .models import ModelSpec
from .parallelism import Parallelism, smallest_fit
from .precision import KV_PRECISIONS, PRECISIONS, WEIGHT_PRECISIONS, compute_roof, get_precision
from .speculation import expected_tokens_per_verify
from .units import GiB

#: Default memory held back for activations, CUDA context and allocator slack.
#: 3 GiB reproduces article 000, Step 5: ~59 sequences of 8k context fit an
#: 80e9-byte H100 with no reserve, "56 once you leave headroom".
DEFAULT_RESERVE_BYTES = 3 * GiB

#: The lever table: one row per lever, in the order the controls show them.
#: Adding a lever is a row here plus its formula in :func:`evaluate`.
#: The levers that split one step over several GPUs; all at 1 is one GPU (what the browser-side model and
#: the offline page evaluate, and what a pin's summary leaves unsaid).
ONE_GPU = ("tp", "pp", "ep", "replicas")

LEVERS = LeverTable(
    Lever("model", param.Selector(default="llama-3-70b", objects={m.name: m.id for m in load_models().values()},
                                  label="Model", doc="Model, by catalogue id (core/model_configs/)."),
          flag="model"),
    Lever("gpu", param.Selector(default="h100-sxm", objects={g.name: g.id for g in load_catalogue().values()},
                                label="GPU", doc="Accelerator, by catalogue id (core/hardware.json)."),
          flag="gpu"),
    Lever("weight_dtype", param.Selector(default="bf16",
                                         objects={**{PRECISIONS[p].label: p for p in WEIGHT_PRECISIONS},
                                                  "As stored (checkpoint)": "stored"},
                                         label="Weight precision p",
                                         doc="Weight format, every weight in it; or 'stored': the checkpoint as "
                                             "published, each tensor group in its own format. p = bytes per weight."),
          flag="weight-dtype"),
    Lever("kv_dtype", param.Selector(default="bf16", objects={PRECISIONS[p].label: p for p in KV_PRECISIONS},
                                     label="KV-cache precision p_kv",
                                     doc="KV-cache format; p_kv = its bytes per element."),
          flag="kv-dtype"),
    Lever("batch", param.Integer(default=1, bounds=(1, 65536), label="Batch B",
                                 doc="B: concurrent sequences sharing one read of the weights."),
          flag="batch",
          # Dense where the articles work (1-8, 56) and roughly logarithmic beyond,
          # so 1 -> 4 is a short drag, not a pixel.
          stops=(1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 48, 56, 64, 96, 128, 192, 256, 384, 512, 768, 1024)),
    Lever("spec_k", param.Integer(default=1, bounds=(1, 64), softbounds=(1, 16), label="Speculation depth k",
                                  doc="k: tokens produced per read of the weights in decode "
                                      "(speculative decoding verifies k tokens in one pass)."),
          flag="spec-k"),
    Lever("context", param.Integer(default=8192, bounds=(1, 2**21), label="Context S (tokens)",
                                   doc="S: tokens of context each sequence holds in the KV cache during decode."),
          flag="context", stops=(128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)),
    Lever("gqa", param.Boolean(default=True, label="Grouped-query attention",
                               doc="Off: every query head keeps its own K and V (h_kv = number of query heads)."),
          flag="no-gqa", negated=True),
    Lever("phase", param.Selector(default="decode", objects=["decode", "prefill"], label="Phase",
                                  doc="decode: k = speculation depth; prefill: k = prompt length."),
          flag="phase"),
    Lever("prompt_len", param.Integer(default=2000, bounds=(1, 2**21), label="Prompt length",
                                      doc="Tokens in the prompt processed by prefill (k in prefill)."),
          flag="prompt-len", stops=(128, 256, 512, 1000, 2000, 4000, 8000, 16000, 32000), more=True),
    Lever("acceptance", param.Number(default=0.7, bounds=(0.0, 1.0), step=0.05, label="Acceptance rate α",
                                     doc="Probability that the target model accepts each draft token "
                                         "(speculative decoding; an assumption, not a property of the hardware)."),
          flag="acceptance", more=True),
    Lever("capacity_convention", param.Selector(default="binary",
                                                objects={"GB read as GiB (as built)": "binary",
                                                         "GB = 1e9 bytes (article 000)": "decimal"},
                                                label="Capacity convention",
                                                doc="How the datasheet's 'GB' becomes bytes: " + "; ".join(
                                                    f"{k}: {v}" for k, v in CAPACITY_CONVENTIONS.items())),
          flag="capacity", more=True),
    Lever("reserve_bytes", param.Number(default=DEFAULT_RESERVE_BYTES, bounds=(0, 1024 * GiB),
                                        softbounds=(0, 16 * GiB), step=GiB / 2,
                                        label="Reserve for activations and slack",
                                        doc="Memory held back for activations, CUDA context and allocator slack "
                                            "(bytes inside; GiB at the edges)."),
          flag="reserve", unit="GiB", scale=GiB, more=True),
    Lever("tp", param.Integer(default=1, bounds=(1, 512), softbounds=(1, 16), label="Tensor parallel TP",
                              doc="TP: GPUs each weight matrix is split over (per GPU: weights / TP, query heads / TP, "
                                  "KV heads ceil(h_kv / TP); two all-reduces per layer)."),
          flag="tp", stops=(1, 2, 4, 8, 16, 32, 64, 72), more=True),
    Lever("pp", param.Integer(default=1, bounds=(1, 512), softbounds=(1, 16), label="Pipeline parallel PP",
                              doc="PP: stages the layers are split into (latency adds across stages; throughput "
                                  "needs PP micro-batches of B in flight)."),
          flag="pp", stops=(1, 2, 4, 8, 16), more=True),
    Lever("ep", param.Integer(default=1, bounds=(1, 1024), softbounds=(1, 64), label="Expert parallel EP (MoE)",
                              doc="EP: GPU groups a mixture-of-experts model's routed experts are spread over, each "
                                  "group serving its own B sequences (ignored, with a warning, for a dense model)."),
          flag="ep", stops=(1, 2, 4, 8, 16, 32, 64), more=True),
    Lever("replicas", param.Integer(default=1, bounds=(1, 1_000_000), softbounds=(1, 64), label="Replicas",
                                    doc="Whole copies of the model (data parallel): throughput, GPUs and memory "
                                        "multiply."),
          flag="replicas", more=True),
    Lever("gpu_hour_price", param.Number(default=0.0, bounds=(0.0, 1e6), softbounds=(0.0, 10.0), step=0.05,
                                         label="Price per GPU-hour (USD)",
                                         doc="USD per GPU per hour, for the cost per million tokens (0: not given)."),
          flag="gpu-hour-price", more=True),
    Lever("cuda_graphs", param.Boolean(default=False, label="CUDA graphs",
                                       doc="Launch each step as one captured CUDA graph: the launch overhead falls "
                                           "from kernels × 4 µs to one launch plus 1 µs per kernel (article 000, "
                                           "the third ceiling)."),
          flag="cuda-graphs", more=True),
)


@dataclass(frozen=True)
class Ladder:
    """The batch ladder: one entry per rung, all numpy arrays of one length.

    Attributes:
        batch: B per rung (1, 2, 4, ...), int64.
        arithmetic_intensity_weights: ``2·B·k/p``, FLOP/byte.
        arithmetic_intensity_with_kv: counting KV reads, FLOP/byte.
        attainable_flop_per_s_weights: ``min(P_peak, BW·I, FLOP_weights / t_launch)``, FLOP/s.
        peak_fraction_weights: attainable / P_peak, 0..1.
        tokens_per_s: roofline ceiling counting KV traffic, tokens/s.
        tokens_per_s_weights: the ceiling ignoring KV traffic, tokens/s.
        attainable_flop_per_s_with_kv: ``min(P_peak, BW·I_kv, FLOP / t_launch)``, FLOP/s.
        peak_fraction_with_kv: attainable counting KV reads / P_peak, 0..1.
        fits: weights + KV + reserve within capacity, bool.
        flop: FLOP of one step, ``2·N_active·B·k`` plus attention.
        attention_flop: the attention part of ``flop`` (scores and weighting over the cache).
        weight_bytes_read: weight bytes one step reads (MoE: the experts touched).
        step_time_s_with_kv: ``max(max(FLOPs/P_peak, (weights + KV)/BW) + communication, t_launch)``, seconds.
        step_time_s_weights: the same ignoring KV traffic, seconds.
        compute_time_s: ``FLOPs / P_peak`` of one GPU's step, seconds.
        memory_time_s: ``(weights + KV) / BW`` of one GPU's step, seconds.
        communication_time_s: what one GPU spends sending per step (0 on one GPU), seconds.
        bytes_sent: bytes one GPU sends per step (TP all-reduces, PP send, EP all-to-all).

    With several GPUs (:mod:`core.parallelism`) every entry is one GPU's (the
    most loaded pipeline stage), and the step times add the communication time.
    Every step also waits at least ``t_launch``, the launches of its kernels (article
    000's third ceiling: :mod:`core.overhead`).
    """

    batch: np.ndarray
    arithmetic_intensity_weights: np.ndarray
    arithmetic_intensity_with_kv: np.ndarray
    attainable_flop_per_s_weights: np.ndarray
    peak_fraction_weights: np.ndarray
    tokens_per_s_with_kv: np.ndarray
    tokens_per_s_weights: np.ndarray
    attainable_flop_per_s_with_kv: np.ndarray
    peak_fraction_with_kv: np.ndarray
    fits: np.ndarray
    flop: np.ndarray
    attention_flop: np.ndarray
    weight_bytes_read: np.ndarray
    step_time_s_with_kv: np.ndarray
    step_time_s_weights: np.ndarray
    compute_time_s: np.ndarray
    memory_time_s: np.ndarray
    communication_time_s: np.ndarray
    bytes_sent: np.ndarray


@dataclass(frozen=True)
class ScenarioResult:
    """Everything derived from a :class:`Scenario`, SI units throughout.

    Bytes are bytes, FLOP are FLOP, times are seconds, rates per second.
    ``kv_bytes`` is the cache held by the whole batch; ``kv_traffic_bytes`` is
    what one step moves (read in decode, written in prefill).  ``weight_bytes_read``
    is what one step reads; ``weight_bytes_held`` what memory holds (they differ
    only for mixture-of-experts, whose step reads the experts its tokens touch);
    ``weight_params_read`` and ``weight_params_held`` are the same as parameter
    counts, whatever the weights' format (p changes bytes, not parameters).

    Several GPUs (:mod:`core.parallelism`): the roofline stays per GPU, so the
    step's FLOPs, bytes, times, the memory fields (``weight_bytes_held``,
    ``weight_bytes_read``, ``weight_params_held``, ``weight_params_read``,
    ``kv_bytes``, ``memory_used_bytes``, ``free_for_kv_bytes``, ``fits``,
    ``max_batch``: B per micro-batch) are one GPU's (the most loaded pipeline
    stage); ``kv_bytes_per_token`` and ``kv_bytes_per_sequence`` stay the whole
    model's, with ``_per_gpu`` twins; ``model_weight_bytes`` is N·p.  The step
    time adds ``communication_time_s``; ``communication_intensity`` is FLOP per
    byte a GPU sends (None when it sends nothing) against
    ``interconnect_ridge_point = P_peak / link``.  ``tokens_per_s_with_kv`` is one
    model copy's (B·E per stage step, PP micro-batches in flight);
    ``tokens_per_s_aggregate`` multiplies by EP groups and replicas;
    ``pipeline_bubble`` is ``(PP−1)/(M+PP−1)`` for one pass of M = PP micro-batches
    (article 004, section 07; steady decode with PP micro-batches in flight has
    none).  The costs are USD per million tokens (None without a price).

    ``bound`` names the ceiling that sets the step: ``"overhead"`` when the kernel
    launches (``launch_overhead_s``) outlast the GPU's own time (compute or memory,
    plus communication), else ``"memory"`` or ``"compute"`` by the intensity counting
    KV reads against the ridge point.  The step times, tokens/s and attainable FLOP/s
    all count the launches (article 000, "The third regime nobody plots");
    ``gpu_time_s`` is what the launches race: ``max(compute, memory) + communication``.
    """

    phase: str
    gpu: Accelerator
    model: ModelSpec
    weight_dtype: str
    weight_format: str
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
    weight_params_read: float
    weight_params_held: float
    flop_per_step: float
    flop_per_step_weights: float
    attention_flop_per_step: float
    state_bytes_per_sequence: float
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
    weights_shortfall_bytes: float
    fits: bool
    max_batch: int
    acceptance: float
    expected_tokens_per_step: float
    speculative_speedup: float
    prefill_intensity: float
    prefill_attainable_flop_per_s: float
    decode_intensity: float
    decode_attainable_flop_per_s: float
    ttft_intensity: float
    ttft_attainable_flop_per_s: float
    ttft_s: float
    verify_step_time_s: float
    tpot_s: float
    tp: int
    pp: int
    ep: int
    replicas: int
    gpus_per_replica: int
    gpus_total: int
    interconnect: str
    link_bandwidth: float | None
    model_weight_bytes: float
    query_heads_per_gpu: int
    kv_heads_per_gpu: int
    kv_bytes_per_token_per_gpu: float
    kv_bytes_per_sequence_per_gpu: float
    layers_per_gpu: int
    compute_time_s: float
    kernels_per_step: int
    launch_overhead_s: float
    overhead_ceiling_flop_per_s: float
    gpu_time_s: float
    memory_time_s: float
    communication_time_s: float
    allreduce_bytes: float
    allreduce_time_s: float
    bytes_sent_per_step: float
    communication_intensity: float | None
    interconnect_ridge_point: float | None
    experts_per_gpu: float
    experts_touched_per_gpu: float
    pipeline_bubble: float
    sequences_in_flight: int
    tokens_per_s_aggregate: float
    tokens_per_s_per_sequence: float
    total_memory_bytes: float
    suggested_tp: int | None
    suggested_pp: int | None
    gpu_hour_price: float
    output_tokens_per_s_aggregate: float
    prompt_tokens_per_s_aggregate: float
    cost_per_million_output_tokens: float | None
    cost_per_million_prompt_tokens: float | None
    reference_gpu: Accelerator | None
    reference_peak_flop_per_s: float | None
    ladder: Ladder
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def roof(self, intensity):
        """The roof of this scenario's GPU and compute precision, ``min(P_peak, BW·I)`` in FLOP/s.

        Args:
            intensity: FLOP/byte, scalar or array.
        """
        return roofline.attainable_flop_per_s(intensity, self.peak_flop_per_s, self.bandwidth)

    @property
    def kv_share_per_gpu(self) -> float:
        """Fraction of one sequence's KV cache one GPU reads per step (1 on one GPU; see :mod:`core.parallelism`)."""
        return self.parallelism().kv_share()

    def parallelism(self) -> Parallelism:
        """How this scenario splits its model over GPUs (:class:`core.parallelism.Parallelism`)."""
        return Parallelism(self.model, tp=self.tp, pp=self.pp, ep=self.ep, replicas=self.replicas,
                           link_bandwidth=self.link_bandwidth, gqa=self.gqa)

    @property
    def sends_between_gpus(self) -> bool:
        """Whether a step sends data between GPUs over a link of known bandwidth: the interconnect roof applies."""
        return self.communication_intensity is not None and bool(self.link_bandwidth)

    def interconnect_roof(self, intensity):
        """The interconnect roof at communication intensity ``intensity``: ``min(P_peak, link·I)`` FLOP/s.

        None when the catalogue gives no link bandwidth.  Args: FLOP per byte sent, scalar or array.
        """
        if not self.link_bandwidth:
            return None
        return roofline.attainable_flop_per_s(intensity, self.peak_flop_per_s, self.link_bandwidth)

    def efficiency_band(self, intensity):
        """``(low, high)`` FLOP/s: :data:`core.roofline.EFFICIENCY_BAND` of the roof at ``intensity``."""
        lo, hi = roofline.EFFICIENCY_BAND
        roof = self.roof(intensity)
        return lo * roof, hi * roof

    def to_json(self) -> dict:
        """Every scalar field as a JSON-ready dict (SI units; keys are the field names).

        Generated from the dataclass fields, so a new field is exported without a
        second list to keep in step; the GPU and model appear as their ids and the
        ladder is left out (``core.export`` writes it as its own table).
        """
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name in ("gpu", "model", "reference_gpu"):
                value = value.id if value is not None else None
            elif isinstance(value, Ladder):
                continue
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value.item() if isinstance(value, np.generic) else value
        return out


class Scenario(param.Parameterized):
    """The levers of one inference workload on one accelerator, and the catalogue they pick from.

    The levers are the rows of :data:`LEVERS` (added to this class below), each
    validated by ``param`` (selectors for ids, bounds for numbers): an invalid
    value raises ``ValueError`` and leaves the scenario as it was.  The model and
    GPU selectors offer the scenario's :attr:`catalogue`, a session's own entries
    included; :meth:`clone` hands the catalogue to every copy.
    """

    catalogue = param.ClassSelector(class_=Catalogue, default=Catalogue(), instantiate=False, precedence=-1,
                                    doc="The models and accelerators the selectors offer (shipped + a session's own).")

    def __init__(self, catalogue: Catalogue | None = None, **levers):
        unknown = sorted(set(levers) - set(LEVERS.names) - {"name"})
        if unknown:
            raise ValueError(f"unknown lever {unknown[0]!r}; accepted: {', '.join(LEVERS.names)}")
        super().__init__(catalogue=catalogue or Catalogue())
        self._offer_catalogue()
        self.param.watch(lambda _e: self._offer_catalogue(), "catalogue")
        if levers:
            self.param.update(**levers)

    def _offer_catalogue(self) -> None:
        self.param["model"].objects = self.catalogue.model_options()
        self.param["gpu"].objects = self.catalogue.gpu_options()

    def levers(self) -> dict:
        """The scenario's levers as keyword arguments of :func:`evaluate` (ids, SI units)."""
        return {name: getattr(self, name) for name in LEVERS.names}

    def clone(self, **overrides) -> Scenario:
        """A copy with the same catalogue and levers, ``overrides`` applied.

        Raises:
            ValueError: an unknown lever or an invalid value.
        """
        return Scenario(catalogue=self.catalogue, **{**self.levers(), **overrides})

    def add_model(self, model: ModelSpec) -> ModelSpec:
        """Add ``model`` to this scenario's catalogue and select it.

        A quantised checkpoint also selects the weight precision "as stored": each
        tensor group in its own format, as the checkpoint holds it.

        Returns:
            the model as registered (its id may have been numbered: :meth:`Catalogue.with_model`).
        """
        catalogue, model = self.catalogue.with_model(model)
        levers = {"model": model.id}
        if model.quantization and model.quantization.modelled:
            levers["weight_dtype"] = STORED
        self.catalogue = catalogue  # offers it in the selector before it is selected
        self.param.update(**levers)
        return model

    def add_gpu(self, gpu: Accelerator) -> None:
        """Add ``gpu`` to this scenario's catalogue (replacing a session GPU of the same id) and select it."""
        self.catalogue = self.catalogue.with_gpu(gpu)
        self.gpu = gpu.id

    def custom_gpu(self) -> Accelerator | None:
        """The selected accelerator if it is this session's own, else None."""
        return self.catalogue.own_gpus.get(self.gpu)

    def evaluate(self) -> ScenarioResult:
        """Derive every number of the scenario (see the module docstring)."""
        return evaluate_levers(self.levers(), self.catalogue)


def evaluate_levers(levers: dict, catalogue: Catalogue) -> ScenarioResult:
    """:func:`evaluate` of a full lever set whose model and GPU are ids, looked up in ``catalogue``.

    Raises:
        ValueError: a model or GPU the catalogue does not hold, or an invalid lever.
    """
    levers = dict(levers)
    return evaluate(gpu=catalogue.gpu(levers.pop("gpu")), model=catalogue.model(levers.pop("model")), **levers)


for _lever in LEVERS:
    Scenario.param.add_parameter(_lever.name, _lever.parameter)
del _lever


#: The weight-precision choice that keeps the checkpoint as it is stored.
STORED = "stored"


@dataclass(frozen=True)
class Weights:
    """How a model's weights sit in memory and what a step reads, at one weight-precision choice.

    Attributes:
        held_bytes: bytes memory holds (every expert), bytes.
        bytes_per_weight: mean bytes per weight held, p.
        roof_precision: the precision id whose compute-roof rule applies (:func:`core.precision.compute_roof`).
        label: how the choice is named in a derivation.
    """

    model: ModelSpec
    held_bytes: float
    bytes_per_weight: float
    roof_precision: str
    label: str
    stored: bool

    @property
    def parts(self) -> tuple[float, float, float, float]:
        """Bytes per parameter of (embedding, LM head, the rest, routed experts): p for each under one format;
        as stored, :meth:`ModelSpec.stored_bytes_per_param_parts` (16-bit embeddings beside 4-bit experts)."""
        if self.stored:
            return self.model.stored_bytes_per_param_parts()
        return (self.bytes_per_weight,) * 4

    def read_bytes(self, tokens):
        """Weight bytes one step reads for ``tokens`` tokens (MoE: only the experts they touch; broadcasts)."""
        if self.stored:
            return self.model.weight_bytes_read_as_stored(tokens)
        return self.model.params_read(tokens) * self.bytes_per_weight

    def held_bytes_per_gpu(self, plan: Parallelism) -> float:
        """Weight bytes one GPU of ``plan`` holds (all of :attr:`held_bytes` on one GPU)."""
        return self.held_bytes if plan.identity else plan.weight_bytes_held(self.parts)

    def read_bytes_per_gpu(self, tokens, plan: Parallelism):
        """Weight bytes one GPU of ``plan`` reads per step for ``tokens`` tokens of its batch (broadcasts).

        Split with the same per-part bytes per parameter as :meth:`held_bytes_per_gpu`, so it never
        exceeds what the GPU holds.
        """
        return self.read_bytes(tokens) if plan.identity else plan.weight_bytes_read(tokens, self.parts)


def weights_as(model: ModelSpec, weight_dtype: str) -> Weights:
    """The model's weights at a weight-precision lever value (a format, or :data:`STORED`).

    A format applies to every weight, with the checkpoint's scale/zero overhead when
    its width matches (:meth:`ModelSpec.weight_bytes_per_param`).  ``"stored"`` is the
    checkpoint as published: each tensor group in its own format, embeddings and
    ignored modules 16-bit (:meth:`ModelSpec.stored_breakdown`), on the compute roof
    of its main quantised format (4-bit MXFP4/NVFP4 on an FP4 roof where the part has
    one; other 4-bit formats weight-only on BF16; FP8 on FP8).

    Raises:
        ValueError: an unknown precision id.
    """
    if weight_dtype == STORED:
        q = model.quantization
        if q is None or not q.modelled:
            roof = "bf16"
        elif q.bits == 4:  # MXFP4 / NVFP4 multiply natively on an FP4 roof; INT4 formats are weight-only
            roof = "fp4" if any("FP4" in fmt.name.upper() and "NF4" not in fmt.name.upper()
                                and "BITSANDBYTES" not in fmt.name.upper() for _, fmt in q.rules) else "int4"
        elif q.bits == 8:
            roof = "fp8" if any("FP8" in fmt.name.upper() for _, fmt in q.rules) else "int8"
        else:
            roof = "bf16"
        return Weights(model, model.weight_bytes_held_as_stored(), model.stored_bytes_per_param(), roof,
                       f"as stored ({q.method} {q.bits}-bit)" if q else "as stored (16-bit)", True)
    p = model.weight_bytes_per_param(get_precision(weight_dtype).bytes_per_element)
    return Weights(model, model.n_params * p, p, weight_dtype, get_precision(weight_dtype).label, False)


def evaluate(*, gpu: Accelerator, model: ModelSpec, **levers) -> ScenarioResult:
    """The :class:`ScenarioResult` of a model on a GPU at explicit levers (what :meth:`Scenario.evaluate` calls).

    Args:
        gpu, model: the accelerator and the model themselves (not ids).
        **levers: any of :data:`LEVERS` but ``model`` and ``gpu`` (SI values); a
            lever left out takes the table's default.

    Raises:
        ValueError: an unknown lever, precision, phase or capacity convention.
    """
    unknown = sorted(set(levers) - set(LEVERS.names) | {"model", "gpu"} & set(levers))
    if unknown:
        raise ValueError(f"unknown lever {unknown[0]!r} for evaluate(); accepted: "
                         f"{', '.join(n for n in LEVERS.names if n not in ('model', 'gpu'))}")
    v = {**LEVERS.defaults(), **levers}
    weight_dtype, kv_dtype, batch, spec_k = v["weight_dtype"], v["kv_dtype"], v["batch"], v["spec_k"]
    context, gqa, reserve_bytes, capacity_convention = v["context"], v["gqa"], v["reserve_bytes"], \
        v["capacity_convention"]
    phase, prompt_len, acceptance = v["phase"], v["prompt_len"], v["acceptance"]
    if phase not in ("decode", "prefill"):
        raise ValueError(f"unknown phase {phase!r}; accepted: decode, prefill")
    weights = weights_as(model, weight_dtype)
    p = weights.bytes_per_weight
    warnings = []
    plan = _plan(gpu, model, v, warnings)
    p_kv = get_precision(kv_dtype).bytes_per_element
    roof, roof_reason = compute_roof(weights.roof_precision, gpu.dense_flop_per_s)
    if weights.stored:
        roof_reason = f"{weights.label}: {roof_reason}"
    peak, bw = gpu.dense_flop_per_s[roof], gpu.hbm_bandwidth
    capacity = gpu.capacity_bytes(capacity_convention)

    # Decode reads each sequence's cache of S tokens every step; prefill writes
    # the cache of its prompt once.  Either way k is the tokens per weight read.
    k = spec_k if phase == "decode" else prompt_len
    s_held = context if phase == "decode" else prompt_len

    # Memory holds every weight; a step reads the weights its tokens use (all of
    # them for a dense model; for MoE only the experts the batch's tokens touch).
    n, n_active = model.n_params, model.n_active_params
    weight_bytes_held = weights.held_bytes_per_gpu(plan)  # per GPU (the most loaded stage)
    # What a sequence holds and a step moves: its KV cache plus any fixed recurrent
    # state (linear-attention / Mamba layers), read every decode step.
    kv_seq = model.cache_bytes_per_sequence(s_held, p_kv, gqa)
    # Attention FLOPs per sequence per step, beyond the weights' 2·N_active·k: each of
    # k tokens attends to S cached keys in decode; the prompt's causal pairs in prefill.
    attn_seq = (spec_k * model.decode_attention_flop(context) if phase == "decode"
                else model.prefill_attention_flop(prompt_len))
    kv_share = plan.kv_share(gqa)
    kv_held_per_seq = plan.pp * kv_seq * kv_share  # a stage holds its layers' KV for PP micro-batches
    free_for_kv = capacity - weight_bytes_held - reserve_bytes
    # Tokens each sequence gains per step: every prompt token in prefill; in
    # decode the expected accepted tokens of a verify pass of depth k (E = 1 at k = 1).
    e_tokens = float(expected_tokens_per_verify(acceptance, spec_k))
    gained = e_tokens if phase == "decode" else float(prompt_len)

    # The third ceiling (article 000): a step of many small kernels waits on their launches.  One GPU's step
    # launches the kernels of its own pipeline stage's layers.
    n_kernels = overhead.kernels_per_step(plan.layers_per_gpu)
    t_launch = overhead.overhead_time(n_kernels, cuda_graphs=bool(v["cuda_graphs"]))

    def at(b, tokens_per_read, kv_per_seq, attn_per_seq, tokens_gained=gained) -> Ladder:
        """The step of ``b`` sequences, one mechanism for the ladder and every point below."""
        return step_ladder(np.array([b]), weights, tokens_per_read, tokens_gained, kv_per_seq, attn_per_seq, peak,
                           bw, reserve_bytes, capacity, plan, launch_s=t_launch)

    batches = roofline.batch_ladder(roofline.ridge_point(peak, bw), p, k, LEVERS["batch"].parameter.bounds[1])
    ladder = step_ladder(batches, weights, k, gained, kv_seq, attn_seq, peak, bw, reserve_bytes, capacity, plan,
                         launch_s=t_launch)
    point = at(batch, k, kv_seq, attn_seq)

    # One request crosses the roofline twice (article 004, "Go deeper"): prefill
    # of the prompt (k = prompt length, writing its cache), then decode steps
    # (k = speculation depth, reading a cache of S tokens).
    kv_prompt = model.cache_bytes_per_sequence(prompt_len, p_kv, gqa)
    kv_context = model.cache_bytes_per_sequence(context, p_kv, gqa)
    attn_prompt, attn_token = model.prefill_attention_flop(prompt_len), model.decode_attention_flop(context)
    prefill = at(batch, prompt_len, kv_prompt, attn_prompt)
    verify = at(batch, spec_k, kv_context, spec_k * attn_token)
    t_verify = float(verify.step_time_s_with_kv[0])
    t_plain = float(at(batch, 1, kv_context, attn_token).step_time_s_with_kv[0])
    ttft_step = at(1, prompt_len, kv_prompt, attn_prompt)  # one request's prompt, alone
    ttft, ttft_intensity = float(ttft_step.step_time_s_with_kv[0]), float(ttft_step.arithmetic_intensity_weights[0])
    ttft_attainable = float(ttft_step.attainable_flop_per_s_weights[0])
    # A custom or measured part's datasheet twin, drawn beside it on the same compute roof.
    reference = get_accelerator(gpu.reference_id) if gpu.reference_id else None
    reference_peak = (reference.dense_flop_per_s.get(roof, reference.dense_flop_per_s["bf16"])
                      if reference else None)

    weight_bytes = float(point.weight_bytes_read[0])
    flops = float(point.flop[0])
    attention_flops = float(point.attention_flop[0])
    kv_traffic = batch * kv_seq * kv_share
    bytes_step = weight_bytes + kv_traffic
    ridge = float(roofline.ridge_point(peak, bw))
    intensity_kv = float(point.arithmetic_intensity_with_kv[0])

    fit = smallest_fit(model, bytes_per_weight=p, kv_bytes_per_sequence=kv_seq, batch=int(batch),
                       reserve_bytes=reserve_bytes, capacity=capacity, ep=plan.ep, gqa=gqa,
                       max_node=gpu.interconnect.max_node if gpu.interconnect else None)
    if weight_bytes_held + reserve_bytes > capacity:
        per_gpu = " per GPU" if not plan.identity else ""
        hint = (f" (TP = {fit[0]}" + (f", PP = {fit[1]}" if fit[1] > 1 else "") + " fits)") if fit else ""
        warnings.append(
            f"the weights alone ({weight_bytes_held / GiB:,.1f} GiB{per_gpu}) and the reserve do not fit in "
            f"{capacity / GiB:,.1f} GiB: this needs tensor parallelism over several GPUs or smaller weights{hint}"
        )
    # Throughput of the whole deployment and what a token costs (article 000: from
    # bytes moved, i.e. the roofline step time, not from FLOPs).
    groups = plan.ep * plan.replicas  # groups each serving their own B sequences per micro-batch
    decode_tps = groups * batch * e_tokens / t_verify
    prefill_tps = groups * batch * prompt_len / float(prefill.step_time_s_with_kv[0])
    price = float(v["gpu_hour_price"])

    def per_million(tokens_per_s: float) -> float | None:
        return price * plan.gpus / 3600.0 / tokens_per_s * 1e6 if price > 0 else None

    t_step = float(point.step_time_s_with_kv[0])
    # The bound: the ceiling that sets the step.  Launches bind when they outlast the GPU's own work.
    t_busy = max(float(point.compute_time_s[0]), float(point.memory_time_s[0])) + float(point.communication_time_s[0])
    bound = "overhead" if t_launch > t_busy else "memory" if intensity_kv < ridge else "compute"
    sent = float(point.bytes_sent[0])
    link = plan.link_bandwidth
    if model.max_context and s_held > model.max_context:
        warnings.append(
            f"S = {s_held:,} tokens is beyond {model.name}'s trained context of {model.max_context:,}"
        )
    return ScenarioResult(
        phase=phase,
        gpu=gpu,
        model=model,
        weight_dtype=weight_dtype,
        weight_format=weights.label,
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
        weight_params_read=float(plan.params_read(batch * k)),
        weight_params_held=float(plan.n_params),
        flop_per_step=flops,
        flop_per_step_weights=flops - attention_flops,
        attention_flop_per_step=attention_flops,
        state_bytes_per_sequence=float(model.state_bytes_per_sequence()),
        arithmetic_intensity_weights=float(point.arithmetic_intensity_weights[0]),
        arithmetic_intensity_with_kv=intensity_kv,
        ridge_point=ridge,
        attainable_flop_per_s_weights=float(point.attainable_flop_per_s_weights[0]),
        attainable_flop_per_s_with_kv=float(point.attainable_flop_per_s_with_kv[0]),
        peak_fraction_weights=float(point.peak_fraction_weights[0]),
        peak_fraction_with_kv=float(point.attainable_flop_per_s_with_kv[0]) / peak,
        bound=bound,
        kv_bytes_per_token=model.kv_bytes_per_token(p_kv, gqa),
        kv_bytes_per_sequence=float(kv_seq),
        kv_bytes=float(batch * kv_held_per_seq),
        kv_traffic_bytes=float(kv_traffic),
        bytes_per_step=float(bytes_step),
        step_time_s_with_kv=float(point.step_time_s_with_kv[0]),
        step_time_s_weights=float(point.step_time_s_weights[0]),
        tokens_per_s_with_kv=float(point.tokens_per_s_with_kv[0]),
        tokens_per_s_weights=float(point.tokens_per_s_weights[0]),
        memory_used_bytes=float(weight_bytes_held + batch * kv_held_per_seq + reserve_bytes),
        free_for_kv_bytes=float(max(free_for_kv, 0.0)),
        weights_shortfall_bytes=float(max(-free_for_kv, 0.0)),
        fits=bool(point.fits[0]),
        max_batch=int(kvcache.max_batch_that_fits(free_for_kv, kv_held_per_seq)),
        acceptance=float(acceptance),
        expected_tokens_per_step=e_tokens,
        speculative_speedup=e_tokens * t_plain / t_verify,
        prefill_intensity=float(prefill.arithmetic_intensity_weights[0]),
        prefill_attainable_flop_per_s=float(prefill.attainable_flop_per_s_weights[0]),
        decode_intensity=float(verify.arithmetic_intensity_weights[0]),
        decode_attainable_flop_per_s=float(verify.attainable_flop_per_s_weights[0]),
        ttft_intensity=ttft_intensity,
        ttft_attainable_flop_per_s=ttft_attainable,
        ttft_s=ttft * plan.pp if plan.pp > 1 else ttft,
        verify_step_time_s=t_verify,
        tpot_s=t_verify * plan.pp / e_tokens if plan.pp > 1 else t_verify / e_tokens,
        tp=plan.tp,
        pp=plan.pp,
        ep=plan.ep,
        replicas=plan.replicas,
        gpus_per_replica=plan.gpus_per_replica,
        gpus_total=plan.gpus,
        interconnect=_link_text(gpu),
        link_bandwidth=link,
        model_weight_bytes=float(n * p),
        query_heads_per_gpu=plan.query_heads_per_gpu(),
        kv_heads_per_gpu=plan.kv_heads_per_gpu(gqa),
        kv_bytes_per_token_per_gpu=model.kv_bytes_per_token(p_kv, gqa) * kv_share,
        kv_bytes_per_sequence_per_gpu=float(kv_seq * kv_share),
        layers_per_gpu=plan.layers_per_gpu,
        compute_time_s=float(point.compute_time_s[0]),
        kernels_per_step=n_kernels,
        launch_overhead_s=t_launch,
        overhead_ceiling_flop_per_s=flops / t_launch if t_launch > 0 else float("inf"),
        gpu_time_s=t_busy,
        memory_time_s=float(point.memory_time_s[0]),
        communication_time_s=float(point.communication_time_s[0]),
        allreduce_bytes=float(plan.message_bytes(batch, k)),
        allreduce_time_s=float(plan.allreduce_time_s(plan.message_bytes(batch, k))),
        bytes_sent_per_step=sent,
        communication_intensity=flops / sent if sent > 0 else None,
        interconnect_ridge_point=peak / link if link else None,
        experts_per_gpu=plan.experts_per_gpu(),
        experts_touched_per_gpu=plan.experts_touched_per_gpu(batch * k),
        pipeline_bubble=(plan.pp - 1) / (2 * plan.pp - 1),
        sequences_in_flight=int(batch * plan.pp * groups),
        tokens_per_s_aggregate=float(point.tokens_per_s_with_kv[0]) * groups,
        tokens_per_s_per_sequence=gained / (plan.pp * t_step),
        total_memory_bytes=float(weight_bytes_held + batch * kv_held_per_seq + reserve_bytes) * plan.gpus,
        suggested_tp=fit[0] if fit else None,
        suggested_pp=fit[1] if fit else None,
        gpu_hour_price=price,
        output_tokens_per_s_aggregate=float(decode_tps),
        prompt_tokens_per_s_aggregate=float(prefill_tps),
        cost_per_million_output_tokens=per_million(decode_tps),
        cost_per_million_prompt_tokens=per_million(prefill_tps),
        reference_gpu=reference,
        reference_peak_flop_per_s=reference_peak,
        ladder=ladder,
        warnings=tuple(warnings),
    )


def _plan(gpu: Accelerator, model: ModelSpec, v: dict, warnings: list[str]) -> Parallelism:
    """The :class:`Parallelism` of the levers ``v``; impossible or doubtful splits are named in ``warnings``.

    TP above the query heads, PP above the layers and EP above the experts are
    evaluated at those limits (the result's ``tp``, ``pp``, ``ep`` say what was used).
    """
    tp, pp, ep, replicas = (int(v[name]) for name in ("tp", "pp", "ep", "replicas"))
    # A split the model cannot take is evaluated at the largest it can, and named: a lever
    # set within the table's bounds always evaluates (tests/test_fuzz.py).
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
    return Parallelism(model, tp=tp, pp=pp, ep=ep, replicas=replicas, link_bandwidth=bandwidth, gqa=bool(v["gqa"]))


def _link_text(gpu: Accelerator) -> str:
    """The scale-up link in words, as the catalogue prints it."""
    link = gpu.interconnect
    if link is None:
        return "no interconnect in the catalogue"
    bw = link.per_direction_bandwidth
    per_dir = f", {bw / 1e9:,.0f} GB/s per direction" if bw else ""
    node = f", up to {link.max_node} accelerators per node" if link.max_node else ", no scale-up node"
    return f"{link.kind} {link.generation}".strip() + f" ({link.as_printed}{per_dir}{node})"


def step_ladder(batches, weights: Weights, k, gained, kv_seq, attn_seq, peak, bw, reserve_bytes, capacity,
                plan: Parallelism | None = None, *, launch_s: float) -> Ladder:
    """The numbers of one step at each batch size: the one mechanism behind the
    ladder, the workload point, prefill, verify, TTFT and every sweep.

    Args:
        batches: 1-D int array of batch sizes B (>= 1).
        weights: the model's weights at the weight-precision choice (:func:`weights_as`).
        k: tokens of arithmetic per weight read (speculation depth, or prompt length).
        gained: tokens each sequence gains per step (E in decode, the prompt in prefill).
        kv_seq: KV-cache (and fixed-state) bytes each sequence moves per step (the whole
            model's; one GPU's share is taken here).
        attn_seq: attention FLOP each sequence adds per step (beyond the weights' 2·N_active·k;
            the whole model's).
        peak, bw: the compute roof (FLOP/s) and memory bandwidth (bytes/s) of one GPU.
        reserve_bytes, capacity: bytes held back, and the memory capacity in bytes, per GPU.
        plan: how the model is split over GPUs (:class:`core.parallelism.Parallelism`);
            None is one GPU.  Per GPU: weights, FLOPs, KV and attention divide as the
            plan says, each pipeline stage holds KV for PP micro-batches, and the
            communication time is added to the step (not overlapped).
        launch_s: seconds one GPU's step spends launching its kernels (:func:`core.overhead.overhead_time`):
            the third ceiling.  The launches overlap the GPU's work, so the step takes the longer of the two,
            ``max(max(FLOPs/P_peak, bytes/BW) + communication, launch_s)``, and the attainable FLOP/s are
            capped by the overhead ceiling ``FLOPs / launch_s`` (article 000, "The third regime nobody plots").

    Returns:
        a :class:`Ladder` with one entry per batch size, per GPU.
    """
    b = np.asarray(batches)
    model = weights.model
    plan = plan if plan is not None else Parallelism(model)
    weight_bytes = weights.read_bytes_per_gpu(b * k, plan) * np.ones(b.shape)
    held = weights.held_bytes_per_gpu(plan)
    if not plan.identity:  # one GPU's share of what the whole model holds and reads
        kv_seq = kv_seq * plan.kv_share()
        attn_seq = attn_seq * plan.attention_share()
    flop_weights = roofline.decode_flop(plan.n_active_params, b, k)
    attention = b * attn_seq
    flops = flop_weights + attention
    # 2·B·k/p for a dense model (N_active = N read); MoE reads fewer weights than it holds.
    intensity = flop_weights / weight_bytes
    bytes_step = weight_bytes + b * kv_seq
    intensity_kv = flops / bytes_step
    # The roofline under the overhead ceiling: a step cannot sustain more than its FLOPs over its launches.
    attainable = np.minimum(roofline.attainable_flop_per_s(intensity, peak, bw), _per_launch(flop_weights, launch_s))
    attainable_kv = np.minimum(roofline.attainable_flop_per_s(intensity_kv, peak, bw), _per_launch(flops, launch_s))
    t_comm = plan.comm_time_s(b, k) * np.ones(b.shape)
    # The GPU's own time (the roofline, then the communication, not overlapped); the launches overlap it.
    t_step = np.maximum(roofline.step_time(flops, bytes_step, peak, bw) + t_comm, launch_s)
    t_no_kv = np.maximum(roofline.step_time(flop_weights, weight_bytes, peak, bw) + t_comm, launch_s)
    return Ladder(
        batch=b,
        arithmetic_intensity_weights=intensity,
        arithmetic_intensity_with_kv=intensity_kv,
        attainable_flop_per_s_weights=attainable,
        peak_fraction_weights=attainable / peak,
        tokens_per_s_with_kv=b * gained / t_step,
        tokens_per_s_weights=b * gained / t_no_kv,
        attainable_flop_per_s_with_kv=attainable_kv,
        peak_fraction_with_kv=attainable_kv / peak,
        fits=held + plan.pp * b * kv_seq + reserve_bytes <= capacity,
        flop=flops,
        attention_flop=attention,
        weight_bytes_read=weight_bytes,
        step_time_s_with_kv=t_step,
        step_time_s_weights=t_no_kv,
        compute_time_s=flops / peak,
        memory_time_s=bytes_step / bw,
        communication_time_s=t_comm,
        bytes_sent=plan.bytes_sent(b, k) * np.ones(b.shape),
    )


def _per_launch(flop, launch_s: float):
    """The overhead ceiling ``FLOPs / t_launch`` in FLOP/s (no ceiling, ``inf``, when launches cost nothing)."""
    return flop / launch_s if launch_s > 0 else np.full(np.shape(flop), np.inf)
