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
import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import param

from . import roofline
from .catalogue import Catalogue
from .hardware import CAPACITY_CONVENTIONS, Accelerator, load_catalogue
from .levers import Lever, LeverTable
from .model_catalogue import load_models
from .models import ModelSpec
from .parallelism import ACTIVATION_BYTES
from .precision import KV_PRECISIONS, PRECISIONS, WEIGHT_PRECISIONS, get_precision
from .profiles import Deployment, deployment
from .step import Step, workload
from .units import GiB, split_words
from .weights import STORED

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
          flag="weight-dtype", deploys=True),
    Lever("kv_dtype", param.Selector(default="bf16", objects={PRECISIONS[p].label: p for p in KV_PRECISIONS},
                                     label="KV-cache precision p_kv",
                                     doc="KV-cache format; p_kv = its bytes per element."),
          flag="kv-dtype"),
    Lever("batch", param.Integer(default=1, bounds=(1, 65536), label="Batch B",
                                 doc="B: concurrent sequences sharing one read of the weights."),
          flag="batch",
          # Dense where the articles work (1-8, 56) and roughly logarithmic beyond,
          # so 1 -> 4 is a short drag, not a pixel.
          stops=(1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 48, 56, 64, 96, 128, 192, 256, 384, 512, 768, 1024),
          symbol="B"),
    Lever("spec_k", param.Integer(default=1, bounds=(1, 64), softbounds=(1, 16), label="Speculation depth k",
                                  doc="k: tokens computed per read of the weights in decode (speculative "
                                      "decoding verifies k tokens in one pass; of them E = (1 − α^k)/(1 − α) "
                                      "are kept on average, at the acceptance rate α)."),
          flag="spec-k"),
    Lever("context", param.Integer(default=8192, bounds=(1, 2**21), label="Context S (tokens)",
                                   doc="S: tokens of context each sequence holds in the KV cache during decode."),
          flag="context", stops=(128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072), symbol="S"),
    Lever("gqa", param.Boolean(default=True, label="Grouped-query attention",
                               doc="Off: every query head keeps its own K and V (h_kv = number of query heads); "
                                   "for an MLA model, the expanded K and V in place of the latent."),
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
          flag="capacity", more=True, deploys=True),
    Lever("reserve_bytes", param.Number(default=DEFAULT_RESERVE_BYTES, bounds=(0, 1024 * GiB),
                                        softbounds=(0, 16 * GiB), step=GiB / 2,
                                        label="Reserve for activations and slack",
                                        doc="Memory held back for activations, CUDA context and allocator slack "
                                            "(bytes inside; GiB at the edges)."),
          flag="reserve", unit="GiB", scale=GiB, more=True, deploys=True),
    Lever("tp", param.Integer(default=1, bounds=(1, 512), softbounds=(1, 16), label="Tensor parallel TP",
                              doc="TP: GPUs each weight matrix is split over (per GPU: weights / TP, query heads / TP, "
                                  "KV heads ceil(h_kv / TP); two all-reduces per layer)."),
          flag="tp", stops=(1, 2, 4, 8, 16, 32, 64, 72), more=True, deploys=True, symbol="TP"),
    Lever("pp", param.Integer(default=1, bounds=(1, 512), softbounds=(1, 16), label="Pipeline parallel PP",
                              doc="PP: stages the layers are split into (latency adds across stages; throughput "
                                  "needs PP micro-batches of B in flight)."),
          flag="pp", stops=(1, 2, 4, 8, 16), more=True, deploys=True, symbol="PP"),
    Lever("ep", param.Integer(default=1, bounds=(1, 1024), softbounds=(1, 64), label="Expert parallel EP (MoE)",
                              doc="EP: GPU groups a mixture-of-experts model's routed experts are spread over, each "
                                  "group serving its own B sequences (ignored, with a warning, for a dense model)."),
          flag="ep", stops=(1, 2, 4, 8, 16, 32, 64), more=True, deploys=True, symbol="EP"),
    Lever("replicas", param.Integer(default=1, bounds=(1, 1_000_000), softbounds=(1, 64), label="Replicas",
                                    doc="Whole copies of the model (data parallel): throughput, GPUs and memory "
                                        "multiply."),
          flag="replicas", more=True, deploys=True),
    Lever("gpu_hour_price", param.Number(default=0.0, bounds=(0.0, 1e6), softbounds=(0.0, 10.0), step=0.05,
                                         label="Price per GPU-hour (USD)",
                                         doc="USD per GPU per hour, for the cost per million tokens (0: not given)."),
          flag="gpu-hour-price", more=True),
    Lever("cuda_graphs", param.Boolean(default=False, label="CUDA graphs",
                                       doc="Launch each step as one captured CUDA graph: the launch overhead falls "
                                           "from kernels × 4 µs to one launch plus 1 µs per kernel (article 000, "
                                           "the third ceiling)."),
          flag="cuda-graphs", more=True, deploys=True),
)


@dataclass(frozen=True)
class ScenarioResult:
    """Everything derived from a :class:`Scenario`, SI units throughout.

    Bytes are bytes, FLOP are FLOP, times are seconds, rates per second.
    ``kv_bytes_per_sequence`` is all a sequence caches: its KV cache, which grows with S
    (``kv_cache_bytes_per_sequence``), and the fixed state that does not (``state_bytes_per_sequence``: a linear
    attention's recurrent state, a cross-attention layer's image K/V), whose sum is what memory holds and a step
    reads.  ``kv_bytes`` is the cache held by the whole batch; ``kv_traffic_bytes`` is
    what one step moves (read in decode, written in prefill).  ``weight_bytes_read``
    is what one step reads; ``weight_bytes_held`` what memory holds (they differ
    only for mixture-of-experts, whose step reads the experts its tokens touch);
    ``weight_params_read`` and ``weight_params_held`` are the same as parameter
    counts, whatever the weights' format (p changes bytes, not parameters).

    Several GPUs (:mod:`core.parallelism`): the roofline stays per GPU, so the
    step's FLOPs, bytes and times (``weight_bytes_read``, ``weight_params_read``, ...)
    are one GPU's of the slowest pipeline stage (``slowest_stage``: it sets the pipeline's pace), and the
    memory fields (``weight_bytes_held``, ``weight_params_held``, ``kv_bytes``,
    ``memory_used_bytes``, ``free_for_kv_bytes``, ``fits``, ``max_batch``: B per
    micro-batch) one GPU's of ``memory_stage``, the stage that runs out of memory first
    (:func:`core.step.memory_stage`); ``kv_bytes_per_token`` and ``kv_bytes_per_sequence`` stay the whole
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

    ``suggested_tp``/``suggested_pp`` are the smallest split that holds the workload at its precision (None where
    none does); ``stored_tp``/``stored_pp`` the same at the checkpoint's bytes as stored, where the weights do not
    fit and the checkpoint stores them in fewer bytes than the precision picked (the warning's hint; None otherwise).

    ``peak_flop_per_s`` is the roof of ``compute_roof``'s format, or, for a checkpoint that multiplies some matrices
    in 16 bits beside a faster format, the two roofs' mix (``sixteen_bit_flop_share`` of the weights' FLOP on the BF16
    roof, 0..1; 0 under one roof: :func:`core.precision.mixed_roof`).
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
    sixteen_bit_flop_share: float
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
    kv_cache_bytes_per_sequence: float
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
    memory_stage: int
    slowest_stage: int
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
    stored_tp: int | None
    stored_pp: int | None
    gpu_hour_price: float
    output_tokens_per_s_aggregate: float
    prompt_tokens_per_s_aggregate: float
    cost_per_million_output_tokens: float | None
    cost_per_million_prompt_tokens: float | None
    reference_gpu: Accelerator | None
    reference_peak_flop_per_s: float | None
    ladder: Step
    deployment: Deployment
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def roof(self, intensity):
        """The roof of this scenario's GPU and compute precision, ``min(P_peak, BW·I)`` in FLOP/s.

        Args:
            intensity: FLOP/byte, scalar or array.
        """
        return roofline.attainable_flop_per_s(intensity, self.peak_flop_per_s, self.bandwidth)

    @property
    def attends_to_latent(self) -> bool:
        """Whether the step's attention runs on MLA's cached latent, the up-projections absorbed (decode with GQA
        on; :meth:`core.models.ModelSpec.attention_flop_per_key` with ``latent``): GQA off expands the cache, and a
        prefill attends in the uncompressed form.  Other models read the same either way."""
        return self.phase == "decode" and self.gqa

    @property
    def tokens_per_s_per_gpu(self) -> float:
        """Output tokens/s per GPU: every replica's output tokens/s over all its GPUs (tokens/s).  The figure that
        compares deployments of different sizes: 4 GPUs at TP = 4 against 1."""
        return self.output_tokens_per_s_aggregate / self.gpus_total

    @property
    def kv_share_per_gpu(self) -> float:
        """Fraction of one sequence's KV cache one GPU reads per step (1 on one GPU; see :mod:`core.parallelism`)."""
        return self.deployment.plan.kv_share(self.gqa)

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
            elif isinstance(value, (Step, Deployment)):
                continue
            elif isinstance(value, tuple):
                value = list(value)
            out[f.name] = value.item() if isinstance(value, np.generic) else value
        return out


def added_levers(model: ModelSpec) -> dict:
    """The levers a newly added model sets: itself, and a quantised checkpoint's weights "as stored"."""
    levers = {"model": model.id}
    if model.quantization and model.quantization.modelled:
        levers["weight_dtype"] = STORED
    return levers


def stored_hint(model: ModelSpec, weight_dtype: str, bytes_per_weight: float,
                stored_bytes_per_weight: float | None) -> str:
    """The end of the does-not-fit warning when the checkpoint is stored in fewer bytes than the precision picked
    (DeepSeek-V3 in BF16, its checkpoint FP8): the precision that reads it as stored.

    ``stored_bytes_per_weight``: the checkpoint's mean bytes per weight as stored, its 16-bit embeddings and scales
    counted (:attr:`core.profiles.Deployment.stored_bytes_per_weight`).  No hint where that is as many bytes as the
    pick (DeepSeek-V3 in FP8: 1.000244 bytes per weight picked, 1.003166 stored), or None.
    """
    q = model.quantization
    if (weight_dtype == STORED or not (q and q.modelled) or stored_bytes_per_weight is None
            or stored_bytes_per_weight >= bytes_per_weight):
        return ""
    return (f"; its checkpoint is stored in {q.bits}-bit {q.method.upper()}: weight precision "
            "“As stored (checkpoint)” holds it in that format")


def fit_words(fit: tuple[int, int] | None, how: str) -> str:
    """The smallest split that fits, as the does-not-fit warning names it: `` (TP = 8, PP = 2 fits in BF16)``;
    none found: `` (no split up to the node and 1,024 GPUs fits <how>)``."""
    if fit is None:
        return f" (no split up to the node and 1,024 GPUs fits {how})"
    return f" ({split_words(*fit)} fits {how})"


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
        return {name: getattr(self, name) for name in _LEVER_NAMES}

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
        return self.select_added(*self.catalogue.with_model(model))

    def select_added(self, catalogue: Catalogue, model: ModelSpec) -> ModelSpec:
        """Use ``catalogue`` and select ``model`` in it, as :meth:`add_model` does: the two made beforehand by
        ``self.catalogue.with_model(model)`` (in a worker thread, say, while the session goes on).

        Returns:
            ``model``.
        """
        # Offered in the selector before it is selected, then the catalogue and the levers in one change: the
        # session evaluates once, not once for the catalogue and again for the model.
        self.param["model"].objects = catalogue.model_options()
        self.param.update(catalogue=catalogue, **added_levers(model))
        return model

    def add_gpu(self, gpu: Accelerator) -> None:
        """Add ``gpu`` to this scenario's catalogue (replacing a session GPU of the same id) and select it."""
        self.add_gpus([gpu])
        self.gpu = gpu.id

    def add_gpus(self, gpus: list[Accelerator] | tuple[Accelerator, ...]) -> None:
        """Add ``gpus`` to this scenario's catalogue (each replacing a session GPU of the same id), in one change,
        selecting none (a link's: its pins' GPUs beside the selected one)."""
        catalogue = self.catalogue
        for gpu in gpus:
            if catalogue.own_gpus.get(gpu.id) != gpu:
                catalogue = catalogue.with_gpu(gpu)
        if catalogue is not self.catalogue:
            self.catalogue = catalogue

    def custom_gpu(self) -> Accelerator | None:
        """The selected accelerator if it is this session's own, else None."""
        return self.catalogue.own_gpus.get(self.gpu)

    def evaluate(self) -> ScenarioResult:
        """Derive every number of the scenario (see the module docstring)."""
        levers = self.levers()
        model, gpu = self._entries(levers.pop("model"), levers.pop("gpu"))
        return evaluate(gpu=gpu, model=model, **levers)

    def _entries(self, model_id: str, gpu_id: str) -> tuple[ModelSpec, Accelerator]:
        """The selected model and GPU, looked up in the catalogue once per choice (a batch move looks up nothing)."""
        found = getattr(self, "_found", None)
        if found is None or found[:3] != (model_id, gpu_id, id(self.catalogue)) or found[3] is not self.catalogue:
            found = (model_id, gpu_id, id(self.catalogue), self.catalogue, self.catalogue.model(model_id),
                     self.catalogue.gpu(gpu_id))
            self._found = found
        return found[4], found[5]


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

#: What :func:`evaluate` takes, and the defaults of what it is not given (read once: a move is only steps).
_LEVER_NAMES = LEVERS.names
#: The levers a deployment is made of (:func:`core.profiles.deployment`); the others move within one.
DEPLOYMENT_LEVERS = tuple(lever.name for lever in LEVERS if lever.deploys)
_STEP_LEVERS = frozenset(LEVERS.names) - {"model", "gpu"}
_DEFAULTS = LEVERS.defaults()
#: Each lever's parameter, read once: a batch move's :func:`evaluate` checks its levers without leaving this module.
_PARAMETERS = {lever.name: lever.parameter for lever in LEVERS}


def check_lever(name: str, value):
    """``value`` (SI, as a caller of :func:`evaluate` passes it) if the lever ``name`` accepts it, as an int for an
    integer lever.

    A number lever takes a finite real within its bounds, an integer lever a whole one (``4``, ``4.0``, numpy's
    too; never ``True``), a Boolean a bool.  Selectors are checked where they are looked up.

    Raises:
        ValueError: one line naming the lever, the value and what is accepted.

    >>> check_lever("batch", -4)
    Traceback (most recent call last):
    ...
    ValueError: batch=-4 is not a whole number from 1 to 65,536
    """
    p = _PARAMETERS[name]
    if isinstance(p, param.Selector):
        return value
    if isinstance(p, param.Boolean):
        if not isinstance(value, (bool, np.bool_)):
            raise ValueError(f"{name}={value!r} is not true or false")
        return bool(value)
    real = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    number = float(value) if real else math.nan
    lo, hi = p.bounds or (None, None)
    if (not math.isfinite(number) or (isinstance(p, param.Integer) and not number.is_integer())
            or (lo is not None and number < lo) or (hi is not None and number > hi)):
        lever = LEVERS[name]
        accepted = lever.accepted() if lever.scale == 1 else f"a number from {lo:,.15g} to {hi:,.15g} (SI)"
        raise ValueError(f"{name}={value!r} is not {accepted}")
    return int(number) if isinstance(p, param.Integer) else value
BATCH_BOUND = LEVERS["batch"].parameter.bounds[1]


def evaluate(*, gpu: Accelerator, model: ModelSpec, **levers) -> ScenarioResult:
    """The :class:`ScenarioResult` of a model on a GPU at explicit levers (what :meth:`Scenario.evaluate` calls).

    The model on the GPU at the levers a step does not move is a :func:`core.profiles.deployment` (made once
    and kept); every number below is one of its steps (:func:`core.step.step`): the workload, the batch
    ladder, the other phase, the verify pass, the time to first token.

    Args:
        gpu, model: the accelerator and the model themselves (not ids).
        **levers: any of :data:`LEVERS` but ``model`` and ``gpu`` (SI values); a
            lever left out takes the table's default.

    Raises:
        ValueError: an unknown lever, precision, phase or capacity convention, or a number a lever does not accept
            (:func:`check_lever`: B = -4, 2.5 or NaN), naming it.
    """
    unknown = sorted(set(levers) - _STEP_LEVERS)
    if unknown:
        raise ValueError(f"unknown lever {unknown[0]!r} for evaluate(); accepted: {', '.join(sorted(_STEP_LEVERS))}")
    v = {**_DEFAULTS, **{name: check_lever(name, value) for name, value in levers.items()}}
    batch, spec_k, context, gqa = int(v["batch"]), int(v["spec_k"]), int(v["context"]), bool(v["gqa"])
    phase, prompt_len, acceptance = v["phase"], int(v["prompt_len"]), float(v["acceptance"])
    if phase not in ("decode", "prefill"):
        raise ValueError(f"unknown phase {phase!r}; accepted: decode, prefill")
    dep = deployment(model, gpu, **{name: v[name] for name in DEPLOYMENT_LEVERS})
    prof, plan, p = dep.profile, dep.plan, dep.weights.bytes_per_weight
    p_kv = PRECISIONS[v["kv_dtype"]].bytes_per_element if v["kv_dtype"] in PRECISIONS else \
        get_precision(v["kv_dtype"]).bytes_per_element  # an unknown id raises, naming the accepted ones
    decode = phase == "decode"
    # Decode reads each sequence's cache of S tokens every step; prefill writes the cache of its prompt once.
    k = spec_k if decode else prompt_len
    s_held = context if decode else prompt_len
    w = workload(prof, batch=batch, spec_k=spec_k, context=context, prompt=prompt_len, acceptance=acceptance,
                 p_kv=p_kv, gqa=gqa, prefill=not decode, max_batch=BATCH_BOUND,
                 stored_bytes_per_weight=dep.stored_bytes_per_weight)
    point, prefill, verify, ttft_step = w.point, w.prefill, w.verify, w.ttft
    e_tokens = w.expected_tokens
    gained = e_tokens if decode else float(prompt_len)
    t_plain = float(w.plain.step_time_s_with_kv[0])
    ridge = prof.peak_flop_per_s / prof.bandwidth

    def first(name: str):
        return getattr(point, name)[0].item()

    t_verify = float(verify.step_time_s_with_kv[0])

    kv_seq = w.kv_bytes_per_sequence  # the whole model's, one sequence: its KV cache and its fixed state
    fixed_seq = prof.model_cache[gqa].fixed_bytes(p_kv)
    kv_held_per_seq = plan.pp * first("kv_bytes_per_sequence")  # a stage holds its layers' KV for PP micro-batches
    free_for_kv = w.free_for_kv_bytes
    fit = w.smallest_fit
    warnings = list(dep.warnings)
    stored_fit = None
    if free_for_kv < 0:
        split = dep.gpus_per_replica > 1
        stored = stored_hint(model, v["weight_dtype"], p, dep.stored_bytes_per_weight)
        if stored:  # the smallest split that holds the checkpoint as stored
            stored_fit = w.stored_fit
            stored += fit_words(stored_fit, "as stored")
        warnings.append(
            f"the weights alone ({w.weight_bytes_held / GiB:,.1f} GiB{' per GPU' if split else ''}) and the reserve "
            f"do not fit in {prof.capacity_bytes / GiB:,.1f} GiB: this needs "
            f"{'more GPUs' if split else 'tensor parallelism over several GPUs'} or smaller weights"
            + fit_words(fit, "as stored" if v["weight_dtype"] == STORED else f"in {dep.weights.label}") + stored)
    if model.max_context and s_held > model.max_context:
        warnings.append(f"S = {s_held:,} tokens is beyond {model.name}'s trained context of {model.max_context:,}")

    # Throughput of the whole deployment and what a token costs (article 000: from bytes moved, i.e. the
    # roofline step time, not from FLOPs).  EP groups and replicas each serve their own B sequences.
    groups = prof.groups
    decode_tps = groups * batch * e_tokens / t_verify
    prefill_tps = groups * batch * prompt_len / float(prefill.step_time_s_with_kv[0])
    price = float(v["gpu_hour_price"])

    def per_million(tokens_per_s: float) -> float | None:
        return price * prof.gpus / 3600.0 / tokens_per_s * 1e6 if price > 0 else None

    slowest = prof.stages[first("stage")]  # the pipeline stage that sets the pace (the only one on one GPU)
    tp_call = next((c for c in slowest.collectives if c.name == "TP all-reduce"), None)
    message = batch * k * (tp_call.message_bytes_per_token if tp_call else model.hidden_size * ACTIVATION_BYTES)
    allreduce_s = (tp_call.bytes_per_token / tp_call.calls * batch * k / prof.link_bandwidth
                   if tp_call and prof.link_bandwidth else 0.0) + (prof.call_latency_s if tp_call else 0.0)
    sent, link, flops, launch = first("bytes_sent"), prof.link_bandwidth, first("flop"), slowest.launch_s
    used = first("memory_used_bytes")
    return ScenarioResult(
        phase=phase,
        gpu=gpu,
        model=model,
        weight_dtype=v["weight_dtype"],
        weight_format=dep.weights.label,
        kv_dtype=v["kv_dtype"],
        gqa=gqa,
        batch=batch,
        spec_k=spec_k,
        tokens_per_read=int(k),
        context=int(s_held),
        n_params=dep.n_params,
        n_active_params=dep.n_active_params,
        weight_bytes_held=w.weight_bytes_held,
        bytes_per_weight=p,
        kv_bytes_per_element=p_kv,
        compute_roof=dep.roof,
        compute_roof_reason=dep.roof_reason,
        sixteen_bit_flop_share=dep.sixteen_bit_share,
        peak_flop_per_s=prof.peak_flop_per_s,
        bandwidth=prof.bandwidth,
        capacity_bytes=prof.capacity_bytes,
        capacity_convention=v["capacity_convention"],
        reserve_bytes=prof.reserve_bytes,
        weight_bytes_read=first("weight_bytes_read"),
        weight_params_read=first("params_read"),
        weight_params_held=w.params_held,
        flop_per_step=flops,
        flop_per_step_weights=first("flop_weights"),
        attention_flop_per_step=first("attention_flop"),
        state_bytes_per_sequence=fixed_seq,
        arithmetic_intensity_weights=first("arithmetic_intensity_weights"),
        arithmetic_intensity_with_kv=first("arithmetic_intensity_with_kv"),
        ridge_point=ridge,
        attainable_flop_per_s_weights=first("attainable_flop_per_s_weights"),
        attainable_flop_per_s_with_kv=first("attainable_flop_per_s_with_kv"),
        peak_fraction_weights=first("peak_fraction_weights"),
        peak_fraction_with_kv=first("peak_fraction_with_kv"),
        bound=first("bound"),
        kv_bytes_per_token=w.kv_bytes_per_token,
        kv_bytes_per_sequence=kv_seq,
        kv_cache_bytes_per_sequence=kv_seq - fixed_seq,
        kv_bytes=batch * kv_held_per_seq,
        kv_traffic_bytes=first("kv_traffic_bytes"),
        bytes_per_step=first("bytes_moved"),
        step_time_s_with_kv=first("step_time_s_with_kv"),
        step_time_s_weights=first("step_time_s_weights"),
        tokens_per_s_with_kv=first("tokens_per_s_with_kv"),
        tokens_per_s_weights=first("tokens_per_s_weights"),
        memory_used_bytes=used,
        free_for_kv_bytes=max(free_for_kv, 0.0),
        weights_shortfall_bytes=max(-free_for_kv, 0.0),
        fits=first("fits"),
        max_batch=w.max_batch,
        memory_stage=w.memory_stage,
        slowest_stage=first("stage"),
        acceptance=acceptance,
        expected_tokens_per_step=e_tokens,
        speculative_speedup=e_tokens * t_plain / t_verify,
        prefill_intensity=float(prefill.arithmetic_intensity_weights[0]),
        prefill_attainable_flop_per_s=float(prefill.attainable_flop_per_s_weights[0]),
        decode_intensity=float(verify.arithmetic_intensity_weights[0]),
        decode_attainable_flop_per_s=float(verify.attainable_flop_per_s_weights[0]),
        ttft_intensity=float(ttft_step.arithmetic_intensity_weights[0]),
        ttft_attainable_flop_per_s=float(ttft_step.attainable_flop_per_s_weights[0]),
        ttft_s=float(ttft_step.step_time_s_with_kv[0]) * plan.pp,
        verify_step_time_s=t_verify,
        tpot_s=t_verify * plan.pp / e_tokens,
        tp=plan.tp,
        pp=plan.pp,
        ep=plan.ep,
        replicas=plan.replicas,
        gpus_per_replica=dep.gpus_per_replica,
        gpus_total=prof.gpus,
        interconnect=dep.interconnect,
        link_bandwidth=link,
        model_weight_bytes=float(dep.n_params * p),
        query_heads_per_gpu=dep.query_heads_per_gpu,
        kv_heads_per_gpu=dep.kv_heads_per_gpu[gqa],
        kv_bytes_per_token_per_gpu=w.kv_bytes_per_token_per_gpu,
        kv_bytes_per_sequence_per_gpu=first("kv_bytes_per_sequence"),
        layers_per_gpu=dep.layers_per_gpu,
        compute_time_s=first("compute_time_s"),
        kernels_per_step=slowest.kernels_per_step,
        launch_overhead_s=launch,
        overhead_ceiling_flop_per_s=flops / launch if launch > 0 else float("inf"),
        gpu_time_s=first("gpu_time_s"),
        memory_time_s=first("memory_time_s"),
        communication_time_s=first("communication_time_s"),
        allreduce_bytes=float(message),
        allreduce_time_s=float(allreduce_s),
        bytes_sent_per_step=sent,
        communication_intensity=flops / sent if sent > 0 else None,
        interconnect_ridge_point=prof.peak_flop_per_s / link if link else None,
        experts_per_gpu=dep.experts_per_gpu,
        experts_touched_per_gpu=dep.experts_per_gpu * first("experts_touched_fraction"),
        pipeline_bubble=(plan.pp - 1) / (2 * plan.pp - 1),
        sequences_in_flight=int(batch * plan.pp * groups),
        tokens_per_s_aggregate=first("tokens_per_s_with_kv") * groups,
        tokens_per_s_per_sequence=gained / (plan.pp * first("step_time_s_with_kv")),
        total_memory_bytes=used * prof.gpus,
        suggested_tp=fit[0] if fit else None,
        suggested_pp=fit[1] if fit else None,
        stored_tp=stored_fit[0] if stored_fit else None,
        stored_pp=stored_fit[1] if stored_fit else None,
        gpu_hour_price=price,
        output_tokens_per_s_aggregate=float(decode_tps),
        prompt_tokens_per_s_aggregate=float(prefill_tps),
        cost_per_million_output_tokens=per_million(decode_tps),
        cost_per_million_prompt_tokens=per_million(prefill_tps),
        reference_gpu=dep.reference,
        reference_peak_flop_per_s=dep.reference_peak,
        ladder=w.ladder,
        deployment=dep,
        warnings=tuple(warnings),
    )
