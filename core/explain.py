"""The derivation of a scenario, step by step, in the style of article 000's
"A Concrete Example": every quantity with its formula, this scenario's values
substituted with their units, and the result.

One derivation, several renderings: :func:`derivation` returns structured
:class:`Step` s of :class:`Quantity` records; :func:`explain` renders them as
the command line's text, the app's readouts render the same records as HTML
(``app/readouts.py``), and the offline page takes their labels and formulas.
Bytes are written as GB (1e9) or GiB (2^30), each named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .hardware import CAPACITY_CONVENTIONS
from .overhead import GRAPH_NODE_GAP_S, KERNELS_OUTSIDE_LAYERS, KERNELS_PER_LAYER, LAUNCH_LATENCY_S, STEP_FUSION
from .precision import get_precision, roof_mix
from .scenario import ScenarioResult
from .units import (
    GB,
    GiB,
    KiB,
    factor_digits,
    fmt_bandwidth,
    fmt_bytes_gb,
    fmt_bytes_gib,
    fmt_bytes_small,
    fmt_flop,
    fmt_flops_rate,
    fmt_intensity,
    fmt_money,
    fmt_rate,
    fmt_ridge,
    fmt_seconds,
    fmt_sig,
    fmt_sig_whole,
    rate_terms,
    split_words,
    sum_digits,
)

__all__ = ["Quantity", "Step", "derivation", "explain", "quantities"]


@dataclass(frozen=True)
class Quantity:
    """One derived quantity.

    Attributes:
        key: a stable name (readouts are found by it: ``data-readout=<key>``).
        label: what it is, in words ("Arithmetic intensity (weights)").
        formula: the formula in the articles' symbols ("I = 2·B·k / p").
        work: the formula with this scenario's values and units, ending in the result.
        value: the result alone, with its unit ("1 FLOP/byte").
    """

    key: str
    label: str
    formula: str
    work: str
    value: str


@dataclass(frozen=True)
class Step:
    """A titled group of quantities (article 000's Steps 1-6)."""

    title: str
    quantities: tuple[Quantity, ...]


# Split over GPUs the attainable FLOP/s stay the roofline's ceiling (the figure the articles print), and the work
# goes on to what the step sustains once its communication is added: the term between the two, named.
_UNDER_CEILING = ", the ceiling; with communication the step sustains {flop} / step time"


def _held(flop: float, step_s: float, r: ScenarioResult, which: str = "") -> str:
    """What a step split over GPUs sustains with its communication: ``flop / step_s``, worked out, in % of peak."""
    sustained = flop / step_s
    return (f"{fmt_flop(flop)} / {fmt_seconds(step_s)} ({which}{fmt_seconds(r.communication_time_s)} of it "
            f"communication) = {fmt_flops_rate(sustained)} = {_pct(sustained / r.peak_flop_per_s)} of peak")


def _sustained(flop: float, step_s: float, r: ScenarioResult, which: str) -> str:
    """The weights line's work tail, split over GPUs: what the step sustains with its communication."""
    return "; with communication " + _held(flop, step_s, r, which)


def _with_communication(r: ScenarioResult) -> Quantity:
    """Split over GPUs, the readout under the ceiling counting KV reads: what that step (all its FLOP, attention's
    included) sustains once its communication is added, the figure the tokens/s readouts go with."""
    sustained = r.flop_per_step / r.step_time_s_with_kv
    return Quantity("attainable-comm", "Attainable with communication, counting KV reads, per GPU",
                    "FLOP / step time, both counting KV reads (the roofline's time + communication): what the "
                    "tokens/s readouts go with",
                    _held(r.flop_per_step, r.step_time_s_with_kv, r),
                    f"{fmt_flops_rate(sustained)} ({_pct(sustained / r.peak_flop_per_s)})")


def _floor_work(free_gib: float, seq_gib: float, n: int) -> str:
    """``floor(free GiB / KV_seq GiB) = n`` with as many digits as make the printed quotient floor to ``n``: 0.3125
    GiB printed 0.312 and 60.57 / 0.312 is 194.1, not the 193 it floors to.  ``app/offline_readouts.js`` the same."""
    for digits in range(2, 8):
        free, seq = f"{free_gib:,.{digits}f}", fmt_sig(seq_gib, digits + 2)
        if seq_gib == 0 or math.floor(float(free.replace(",", "")) / float(seq.replace(",", ""))) == n:
            break
    return f"floor({free} GiB / {seq} GiB) = {n:,}"


def _quotient_terms(flop: float, sent: float, intensity: float) -> str:
    """``FLOP / bytes`` as the quotient's digits need: whole FLOP and bytes where the intensity is printed whole
    (a trial: "239.9 GFLOP / 131,072 bytes = 1,830,620" is 1,830,292).  ``app/offline_readouts.js`` the same."""
    if abs(intensity) < 1e4:
        return f"{fmt_flop(flop)} / {fmt_bytes_small(sent)}"
    return f"{flop:,.0f} FLOP / {sent:,.0f} bytes"


def _unfit_value(r: ScenarioResult) -> str:
    """A tokens/s readout's value where the workload does not fit in memory: what it would deliver if it fit."""
    return "" if r.fits else " (if it fit)"


def _unfit_work(r: ScenarioResult) -> str:
    """The same readout's work: why the rate is one of a workload that cannot run as set."""
    return "" if r.fits else "; it does not fit in memory (Step 5), so no engine runs it as set"


def _fpb(x: float) -> str:
    """An intensity, FLOP/byte: four significant digits, or whole FLOP/byte from 10,000 (a prefill's
    "2 × 1 × 32,768 / 2 bytes" is 32,768, which four digits wrote 32,770)."""
    return f"{fmt_intensity(x)} FLOP/byte"


def bound_by_kv_reads(bound: str, intensity_weights: float, ridge_point: float) -> bool:
    """Whether a memory-bound step is so only by its KV reads: the intensity on the weights alone
    (FLOP/byte) is at or past the ridge point (FLOP/byte), so the weights alone would be compute-bound.  The
    readouts' Bound and the Ladder table's bound column both ask this."""
    return bound == "memory" and intensity_weights >= ridge_point


def rung_bound_word(bound: str, intensity_weights: float, ridge_point: float) -> str:
    """A ladder rung's bound as the Ladder tab and ``python -m core ladder`` word it: the step's (counting KV reads),
    saying so where the intensity on the weights beside it (FLOP/byte) is at or past the ridge point (a trial read
    "memory" under 449.8 with the ridge at 295 as an error).

    >>> rung_bound_word("memory", 1024.0, 295.0), rung_bound_word("memory", 16.0, 295.0)
    ('memory, by KV reads', 'memory')
    """
    return "memory, by KV reads" if bound_by_kv_reads(bound, intensity_weights, ridge_point) else bound


def launches_bind_weights_only(r: ScenarioResult) -> bool:
    """Whether the launches outlast the weights-only step (what the "weights" readouts count) but not the step
    counting KV: they then set the weights-only figures (the chart's point, the headline's share of peak), not the
    step.  (app/offline_readouts.js ``weightsWait`` is its twin.)"""
    return r.bound != "overhead" and r.step_time_s_weights == r.launch_overhead_s


def bound_word_kv(r: ScenarioResult) -> str:
    """The Bound readout: the step's bound, saying when the KV reads alone put it under the ridge, the weights alone
    being above it (the chart's point, at the weights' intensity, then sits on the compute roof).  Short: the
    readouts' value column does not wrap."""
    kv_only = bound_by_kv_reads(r.bound, r.arithmetic_intensity_weights, r.ridge_point)
    # The launches outlast the weights-only step but not the step counting KV: the chart's point and the headline's
    # share of peak sit under the overhead ceiling (an engineer's trial read INT4's "1.14 % of peak" beside
    # "memory-bound" and batch 4's 1.35 % at the same I as a contradiction).
    return (f"{r.bound}-bound" + (" by KV reads" if kv_only else "")
            + ("; weights alone: overhead" if launches_bind_weights_only(r) else ""))


def _pct(x: float) -> str:
    return f"{fmt_sig(100 * x, 3)} %"


def _decode_attention_work(r: ScenarioResult) -> str:
    """The decode attention FLOP of one step (the slowest stage's GPU) as the sum it is:
    ``B·k × (Σ FLOP per key over the layers × min(S, cap) + FLOP per token that does not grow with S)``
    (:class:`core.step.AttentionProfile`; app/offline_readouts.js writes the same words)."""
    a = r.deployment.profile.stages[r.slowest_stage].attention
    parts = []
    for flop, cap in a.decode_terms(r.gqa):
        keys = r.context if cap is None else min(r.context, cap)
        parts.append(f"{_count(flop)} FLOP per key over the layers × {keys:,} keys"
                     + (f" (S = {r.context:,} capped at {cap:,})" if cap is not None and cap < r.context else ""))
    if a.per_token:
        parts.append(f"{_count(a.per_token)} FLOP per token of mixers that do not grow with S")
    sum_ = " + ".join(parts) if len(parts) == 1 else "(" + " + ".join(parts) + ")"
    return f"B·k = {r.batch * r.tokens_per_read:,} × {sum_ if parts else '0'}"


def _count(x: float) -> str:
    """A FLOP count per key or token: whole numbers with separators, else two decimals."""
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.2f}"


def p_note(model, weight_dtype: str) -> str:
    """Why p is not the precision's bytes: a checkpoint quantised in the lever's bit width adds its scales and
    zero points to every weight (:meth:`core.models.ModelSpec.weight_bytes_per_param`), e.g. INT4 on an AWQ group-128
    checkpoint is 0.5 + 0.0195 bytes, I = 2/0.5195 = 3.85, not the articles' 4.  Empty otherwise."""
    if weight_dtype == "stored":
        return ""
    pe = get_precision(weight_dtype).bytes_per_element
    extra = model.weight_bytes_per_param(pe) - pe
    if extra <= 0:
        return ""
    q = model.quantization
    return (f" (p = {pe:g} bytes of {get_precision(weight_dtype).label} + {extra:.4g} of the checkpoint's "
            f"{q.method.upper()} scale and zero-point overhead per weight)")


def _launch_work(r: ScenarioResult) -> str:
    """The launch time as its product: ``kernels × latency`` or, with CUDA graphs, ``latency + kernels × gap``."""
    if r.deployment.cuda_graphs:
        return (f"{fmt_seconds(LAUNCH_LATENCY_S)} + {r.kernels_per_step:,} × {fmt_seconds(GRAPH_NODE_GAP_S)} = "
                f"{fmt_seconds(r.launch_overhead_s)}")
    return f"{r.kernels_per_step:,} × {fmt_seconds(LAUNCH_LATENCY_S)} = {fmt_seconds(r.launch_overhead_s)}"


def _window_note(m) -> str:
    """The KV-per-token label's note for a model with windowed or chunked layers: the figure holds while S is within
    the smallest window, past which those layers stop growing (Gemma-3: 496 KiB a token for the first 1,024
    tokens, 80 KiB after)."""
    caps = [kind.token_cap for kind, _ in m.stack.runs if kind.allocates_kv]
    windowed = [c for c in caps if c is not None]
    if not windowed:
        return ""
    if len(set(windowed)) > 1:
        return f" (S ≤ {min(windowed):,}; past its window a layer stops growing)"
    if len(windowed) < len(caps):
        return f" (S ≤ {windowed[0]:,}; past it only the global layers grow)"
    return f" (S ≤ {windowed[0]:,}; past it the cache stops growing)"


def _rate_terms(r: ScenarioResult, step_s: float) -> tuple[str, str]:
    """E and the step time as ``B × E / step = tokens/s`` prints them, multiplying out (:func:`rate_terms`)."""
    prefill = r.phase == "prefill"
    return rate_terms(r.batch, r.tokens_per_read if prefill else r.expected_tokens_per_step, step_s, whole=prefill)


def derivation(r: ScenarioResult) -> list[Step]:
    """The steps of ``r``'s derivation, each quantity with formula, work and value."""
    m, g = r.model, r.gpu
    prefill = r.phase == "prefill"
    k_note = " (k = prompt length in prefill)" if prefill else ""
    s_note = " (the prompt, in prefill)" if prefill else ""
    peak, bw = fmt_flops_rate(r.peak_flop_per_s), fmt_bandwidth(r.bandwidth)
    att, att_kv = fmt_flops_rate(r.attainable_flop_per_s_weights), fmt_flops_rate(r.attainable_flop_per_s_with_kv)
    n_read = r.weight_params_read  # a count of parameters (one GPU's when split), whatever the format
    kv_share = r.kv_traffic_bytes / r.bytes_per_step
    # The value's digits in its work (the article's "79 percent": "21 %" had its work end "= 21.1 %", an engineer's
    # trial); under 1 %, two significant digits over a KV figure with three ("0.02 GB / 16.08 GB = 0 %": a trial)
    kv_gb = r.kv_traffic_bytes / GB
    kv_digits = max(2, 2 - math.floor(math.log10(kv_gb))) if kv_gb > 0 else 2
    share = f"{100 * kv_share:.0f} %" if kv_share >= 0.01 or kv_share == 0 else f"{fmt_sig(100 * kv_share, 2)} %"
    split = r.gpus_per_replica > 1
    # With several GPUs a quantity that is one GPU's share says so in its label; whole-model figures say so in
    # their work (one GPU's bytes never sit unlabelled beside the whole model's parameter count).
    per_gpu = ", per GPU" if split else ""
    one_copy = ", one EP group" if r.ep > 1 else ", one replica" if r.replicas > 1 else ""
    launch, gpu_time = fmt_seconds(r.launch_overhead_s), fmt_seconds(r.gpu_time_s)
    graphs, launch_work = r.deployment.cuda_graphs, _launch_work(r)
    overhead_bound = r.bound == "overhead"
    # The launches can outlast the weights-only step (what the "weights" readouts count) and not the whole step's
    # GPU time: they then bind those readouts, not the step.
    weights_only = launches_bind_weights_only(r)
    overhead_word = ("overhead-bound" if overhead_bound else "binds the weights-only figures"
                     if weights_only else "not binding")
    roofline_bound = "memory" if r.arithmetic_intensity_with_kv < r.ridge_point else "compute"
    roofline_side = "<" if roofline_bound == "memory" else "≥"
    # Split into stages, the step is the slowest stage's: said, as the weights held are another stage's (the one
    # that runs out of memory first) and a GPU seemed to read more than it holds (a trial).
    per_gpu_note = (f" (one GPU of {r.gpus_per_replica:,}" + (" in each replica" if r.replicas > 1 else "")
                    + (f", of stage {r.slowest_stage + 1} of {r.pp}, the slowest" if r.pp > 1 else "")
                    + ": its share, see Step 7)") if split else ""
    stored = r.weight_dtype == "stored"
    # The GPU whose step this is: its stage's weights held beside its read (an engineer's trial: DeepSeek-V3's stage
    # 2 read 19,803,849,428 "of the 21,336,185,856 parameters this GPU holds", stage 1's, the one memory binds).
    slowest = r.deployment.profile.stages[r.slowest_stage]
    stored = r.weight_dtype == "stored"
    weights = (
        Quantity("params", "Parameters N" + (" (whole model)" if split else ""),
                 "from config.json" + (" (MoE: total held; active per token)" if m.moe else ""),
                 f"{r.n_params:,} held" + (f"; {r.n_active_params:,} active per token" if m.moe else ""),
                 f"{r.n_params / 1e9:,.2f}e9"),
        Quantity("weights", "Weight bytes read per step" + per_gpu,
                 "N_read·p (MoE: the experts the step's tokens touch)" if m.moe else "N·p",
                 (f"{n_read:,.0f} " + (f"of the {slowest.params_held:,.0f} parameters this GPU holds "
                                       f"({r.n_params:,} in the whole model; " if split
                                       else f"of {r.n_params:,} parameters (")
                  + f"the experts {r.batch * r.tokens_per_read:,} "
                  + ("token touches) " if r.batch * r.tokens_per_read == 1 else "tokens touch) ")
                  + (f"× {r.weight_bytes_read / n_read:.6g} bytes (their mean as stored)" if stored and split
                     else "as stored" if stored else f"× {r.bytes_per_weight:g} bytes") + " = "
                  f"{fmt_bytes_gb(r.weight_bytes_read)} "
                  f"({fmt_bytes_gib(r.weight_bytes_read)}{' on this GPU' if split else ''}); "
                  + (f"this GPU holds {fmt_bytes_gib(slowest.weight_bytes_held)} of the model's "
                     f"{fmt_bytes_gib(r.model_weight_bytes)}" if split else
                     f"memory holds all {fmt_bytes_gib(r.weight_bytes_held)}"))
                 if m.moe else
                 f"{n_read:,.0f} weights on this GPU (of {r.n_params:,} in the whole model) × "
                 f"{r.weight_bytes_read / n_read:.6g} bytes (their mean as stored) = "
                 f"{fmt_bytes_gb(r.weight_bytes_read)} ({fmt_bytes_gib(r.weight_bytes_read)}){per_gpu_note}"
                 if stored and split else
                 f"{r.n_params:,} weights as stored, {r.bytes_per_weight:.4g} bytes each on average = "
                 f"{fmt_bytes_gb(r.weight_bytes_read)} ({fmt_bytes_gib(r.weight_bytes_read)})"
                 if stored else
                 f"{n_read:,.0f} parameters on this GPU × {r.bytes_per_weight:g} bytes = "
                 f"{fmt_bytes_gb(r.weight_bytes_read)} ({fmt_bytes_gib(r.weight_bytes_read)}){per_gpu_note}"
                 if split else
                 f"{r.n_params:,} × {r.bytes_per_weight:g} bytes = {fmt_bytes_gb(r.weight_bytes_read)} "
                 f"({fmt_bytes_gib(r.weight_bytes_read)})",
                 f"{r.weight_bytes_read / GB:,.2f} GB ({r.weight_bytes_read / GiB:,.2f} GiB)"),
        Quantity("weight-time", "Weight read time" + per_gpu, "weight bytes / BW",
                 f"{fmt_bytes_gb(r.weight_bytes_read)} / {bw} = {fmt_seconds(r.weight_bytes_read / r.bandwidth)}",
                 fmt_seconds(r.weight_bytes_read / r.bandwidth)),
    )
    # With several GPUs both sides of the intensity are one GPU's: its share of N_active over its N_read
    # (the whole model's N_active over one GPU's bytes read overstated I by the GPU count).
    n_active_gpu = r.flop_per_step_weights / (2 * r.batch * r.tokens_per_read)
    n_active_shown = f"{n_active_gpu:,.0f}" if split else f"{r.n_active_params:,}"
    gpu_terms = ", this GPU's share" if split else ""
    # Dense, 2·B·k / p holds on every GPU as on one; the other two name N, which is one GPU's share.
    intensity_formula = intensity_weights_formula(r) + (gpu_terms if stored or m.moe else "")
    if stored:  # each tensor group in its own format: the bytes read, not N·p, are the denominator
        intensity_work = (f"2 × {n_active_shown} × {r.batch} × {r.tokens_per_read:,} / "
                          f"{fmt_bytes_gb(r.weight_bytes_read)}")
    elif m.moe:
        intensity_work = (f"2 × {r.batch} × {r.tokens_per_read:,} × {n_active_shown} / ({n_read:,.0f} × "
                          f"{r.bytes_per_weight:g} bytes)")
    else:
        intensity_work = f"2 × {r.batch} × {r.tokens_per_read:,} / {r.bytes_per_weight:g} bytes"
    attention_where = "causal (query, key) pairs of the prompt" if prefill else _decode_attention_work(r)
    latent = r.attends_to_latent
    roofline = (
        Quantity("flops", "FLOP per step" + per_gpu,
                 f"2·N_active·B·k (weights) + attention ({m.attention_flop_formula(latent)} per key per layer"
                 + ("; MLA decode attends to the latent itself, d_c = kv_lora_rank" if m.mla and latent else "")
                 + ")"
                 + (" + indexer (2·h_I·(d_I + 1) per key of all S per sparse layer, "
                    f"h_I = {m.indexer.n_heads}, d_I = {m.indexer.head_dim})" if m.indexer else "")
                 + ((" (this GPU's share of the weights' and the attention's; the indexer whole on every GPU)"
                     if m.indexer else " (this GPU's share of both)") if split else ""),
                 f"2 × {n_active_gpu if split else r.n_active_params:,.0f} × {r.batch} × {r.tokens_per_read:,} = "
                 f"{fmt_flop(r.flop_per_step_weights)} (the articles' weights-only count) + "
                 f"{fmt_flop(r.attention_flop_per_step)} of attention{' and its indexer' if m.indexer else ''} "
                 f"({attention_where}) = "
                 f"{fmt_flop(r.flop_per_step)}",
                 fmt_flop(r.flop_per_step)),
        Quantity("roof", "Compute roof", "dense peak for the weight precision",
                 f"{peak} dense ({r.compute_roof_reason})",
                 peak + (f" ({mix})" if (mix := roof_mix(r.compute_roof, r.sixteen_bit_flop_share)) else "")),
        Quantity("compute-time", "Compute time" + per_gpu, "FLOP / P_peak",
                 f"{fmt_flop(r.flop_per_step)} / {peak} = {fmt_seconds(r.flop_per_step / r.peak_flop_per_s)}",
                 fmt_seconds(r.flop_per_step / r.peak_flop_per_s)),
        Quantity("intensity", "Arithmetic intensity (weights)", intensity_formula + k_note,
                 f"{intensity_work} = {_fpb(r.arithmetic_intensity_weights)}{p_note(r.model, r.weight_dtype)}",
                 _fpb(r.arithmetic_intensity_weights)),
        Quantity("ridge", "Ridge point", "P_peak / BW",
                 f"{peak} / {bw} = {fmt_ridge(r.ridge_point, work=True)} FLOP/byte",
                 f"{fmt_ridge(r.ridge_point)} FLOP/byte"),
        Quantity("attainable", "Attainable (weights roofline)" + per_gpu, "min(P_peak, BW·I, FLOP_weights / t_launch)"
                 + (_UNDER_CEILING.format(flop="FLOP_weights") + " ignoring KV" if split else ""),
                 f"min({peak}, {bw} × {_fpb(r.arithmetic_intensity_weights)}, "
                 f"{fmt_flop(r.flop_per_step_weights)} / {launch}) = {att} = "
                 f"{_pct(r.peak_fraction_weights)} of peak"
                 + (_sustained(r.flop_per_step_weights, r.step_time_s_weights, r, "ignoring KV, ") if split else ""),
                 att),
        Quantity("peak-fraction", "Fraction of peak (weights)", "attainable / P_peak",
                 f"{att} / {peak} = {_pct(r.peak_fraction_weights)}", _pct(r.peak_fraction_weights)),
        Quantity("tokens-no-kv", "Tokens/s ceiling ignoring KV" + one_copy,
                 "B·E / max(max(FLOP/P_peak, N_read·p/BW) + communication, t_launch)" if split else
                 "B·E / max(FLOP/P_peak, N_read·p/BW, t_launch)",
                 f"{r.batch} × {' / '.join(_rate_terms(r, r.step_time_s_weights))} = "
                 f"{fmt_rate(r.tokens_per_s_weights)} tokens/s", f"{fmt_rate(r.tokens_per_s_weights)} tokens/s"),
    )
    # Over the stack's runs, not its layers: a pasted hybrid has 2,048, and this runs for every session's update.
    window = "" if all(kind.token_cap is None for kind, _ in m.stack.runs) else f"; {m.attention_pattern()}"
    # A hybrid's recurrent state (or a cross-attention layer's image K/V) is held beside the KV: its figures say so.
    state_note = " (with fixed state)" if r.state_bytes_per_sequence else ""
    kv_cache = "KV cache with fixed state" if r.state_bytes_per_sequence else "KV cache"
    # Printed with the digits that make them multiply and add out (a trial: "0.205 GiB × 8 × 4 = 6.55 GiB" is 6.56,
    # "29.18 GB + 1.42 GB = 30.61 GB"); app/offline_readouts.js the same.
    seq_digits = factor_digits((r.kv_bytes_per_sequence_per_gpu if split else r.kv_bytes_per_sequence) / GiB,
                               r.batch * (r.pp if split else 1), r.kv_bytes / GiB)
    step_digits = sum_digits([r.weight_bytes_read / GB, r.kv_traffic_bytes / GB], r.bytes_per_step / GB, digits=2)
    kv = (
        Quantity("kv-token", "KV per token" + _window_note(m), "over the layers that hold their own cache",
                 f"{m.kv_formula(r.kv_bytes_per_element, r.gqa)} = {fmt_bytes_small(r.kv_bytes_per_token)}",
                 f"{fmt_sig_whole(r.kv_bytes_per_token / KiB)} KiB"),
        Quantity("kv-seq", "KV per sequence" + state_note,
                 "KV per token × S (windowed layers hold at most their window)"
                 + (" + what does not grow with S (linear-attention / Mamba state, cross-attention layers' image "
                    "K/V)" if r.state_bytes_per_sequence else "")
                 + ("; sparse attention holds all S and reads the top k" if m.indexer else ""),
                 f"at S = {r.context:,}{s_note}: {_kv_seq_sum(r)}{fmt_bytes_gb(r.kv_bytes_per_sequence)} "
                 f"({fmt_bytes_gib(r.kv_bytes_per_sequence)}){window}"
                 + (f", of which {fmt_bytes_gib(r.state_bytes_per_sequence)} fixed state whatever S"
                    if r.state_bytes_per_sequence else ""),
                 fmt_bytes_gib(r.kv_bytes_per_sequence, 3)),
        Quantity("kv-total", f"{kv_cache} (whole batch)", "KV_seq(S) × B",
                 f"{r.kv_bytes_per_sequence / GiB:,.{seq_digits}f} GiB × {r.batch} = {r.kv_bytes / GiB:,.2f} GiB = "
                 f"{r.kv_bytes / GB:,.2f} GB at S = {r.context:,}{s_note}",
                 f"{r.kv_bytes / GiB:,.2f} GiB")
        if not split else
        Quantity("kv-total", f"{kv_cache} per GPU (whole batch)",
                 "KV_seq(S) on this GPU (its share of the layers and KV heads) × B × PP micro-batches",
                 f"{r.kv_bytes_per_sequence_per_gpu / GiB:,.{seq_digits}f} GiB × {r.batch} × {r.pp} = "
                 f"{r.kv_bytes / GiB:,.2f} GiB"
                 f" = {r.kv_bytes / GB:,.2f} GB at S = {r.context:,}{s_note}",
                 f"{r.kv_bytes / GiB:,.2f} GiB"),
    )
    moves = (
        Quantity("bytes-step", "Bytes per step" + per_gpu, "weights read + KV",
                 " + ".join(fmt_bytes_gb(b, step_digits) for b in (r.weight_bytes_read, r.kv_traffic_bytes))
                 + f" = {fmt_bytes_gb(r.bytes_per_step, step_digits)}", fmt_bytes_gb(r.bytes_per_step)),
        Quantity("kv-share", "KV share of traffic", "KV bytes / bytes per step",
                 f"{fmt_bytes_gb(r.kv_traffic_bytes, kv_digits)} / {fmt_bytes_gb(r.bytes_per_step, 2)} = {share}",
                 share),
        Quantity("intensity-kv", "Intensity counting KV reads",
                 ("FLOP (weights' and attention's) / (N_read·p + B·KV read(S)), the KV read being the top k keys and "
                  "the indexer's keys of all S (not all that is held)" if m.indexer and not prefill else
                  "FLOP (weights' and attention's) / (N_read·p + B·KV_seq(S))")
                 + ": above I (weights) when attention's share of the FLOP exceeds the KV's share of the bytes",
                 f"{fmt_flop(r.flop_per_step)} / ({r.weight_bytes_read / GB:,.2f} GB + "
                 f"{r.kv_traffic_bytes / GB:,.2f} GB) = {_fpb(r.arithmetic_intensity_with_kv)}",
                 _fpb(r.arithmetic_intensity_with_kv)),
        Quantity("attainable-kv", "Attainable counting KV reads" + per_gpu,
                 "min(P_peak, BW·I_kv, FLOP / t_launch)"
                 + (", the ceiling; the next readout adds the step's communication" if split
                    else ": what the step sustains"),
                 f"min({peak}, {bw} × {_fpb(r.arithmetic_intensity_with_kv)}, {fmt_flop(r.flop_per_step)} / "
                 f"{launch}) = {att_kv} = {_pct(r.peak_fraction_with_kv)} of peak",
                 f"{att_kv} ({_pct(r.peak_fraction_with_kv)})"),
        *((_with_communication(r),) if split else ()),
        Quantity("bound", "Bound", "overhead if the launches outlast the GPU's time, else intensity counting KV vs "
                 "ridge point",
                 (f"launches {launch} > {gpu_time} of GPU time: overhead-bound (the roofline alone: "
                  f"{_fpb(r.arithmetic_intensity_with_kv)} {roofline_side} {r.ridge_point:,.1f} FLOP/byte, "
                  f"{roofline_bound}-bound)")
                 if r.bound == "overhead" else
                 f"{_fpb(r.arithmetic_intensity_with_kv)} {roofline_side} {r.ridge_point:,.1f} FLOP/byte; launches "
                 f"{launch} ≤ {gpu_time} of GPU time", bound_word_kv(r)),
        Quantity("overhead", "Launch overhead (the third ceiling)",
                 "CUDA graphs: one launch + kernels × node gap" if graphs else "kernels × launch latency",
                 _kernels_work(r)
                 + f" → {launch_work} against {gpu_time} of GPU time ({fmt_seconds(r.compute_time_s)} of compute, "
                 f"{fmt_seconds(r.memory_time_s)} of memory"
                 + (f", + {fmt_seconds(r.communication_time_s)} of communication" if split else "") + "): "
                 + ("the launches set the step" if overhead_bound else
                    # A new user read "hidden" beside the value's "binds the weights-only figures" as a contradiction.
                    "hidden under the GPU's work counting KV reads, not under the weights-only step's: they set "
                    "the weights-only figures" if weights_only else
                    "hidden under the GPU's work")
                 + f"; overhead ceiling {fmt_flops_rate(r.overhead_ceiling_flop_per_s)}",
                 f"{launch} ({overhead_word})"),
        Quantity("step-time", "Step time (at best)",
                 "max(max(FLOP/P_peak, bytes/BW) + communication, t_launch)" if split else
                 "max(FLOP/P_peak, bytes/BW, t_launch)",
                 ("max(" if split else "")
                 + f"max({fmt_flop(r.flop_per_step)} / {peak}, {r.bytes_per_step / GB:,.2f} GB / {bw}"
                 + (f") + {fmt_seconds(r.communication_time_s)}, {launch})" if split else f", {launch})")
                 + f" = {fmt_seconds(r.step_time_s_with_kv)}", fmt_seconds(r.step_time_s_with_kv)),
        # The batch's total (B·E), not one sequence's: the expected readout that follows it is per sequence.
        # Under PP the batch lever is one micro-batch's: PP of them are in flight, one per stage, and the total
        # counts them all (a new user read B = 1 as one sequence beside a total of twice its rate).
        Quantity("tokens", "Tokens/s ceiling, the batch's total"
                 + (f" ({r.pp} micro-batches of B in flight)" if r.pp > 1 else "") + one_copy,
                 "B·E / step time (counting KV; E = tokens gained per sequence per step)"
                 + ("; a step is one stage's, and each stage runs its own micro-batch of B" if r.pp > 1 else ""),
                 f"{r.batch} × {' / '.join(_rate_terms(r, r.step_time_s_with_kv))} = "
                 f"{fmt_rate(r.tokens_per_s_with_kv)} tokens/s" + _unfit_work(r),
                 f"{fmt_rate(r.tokens_per_s_with_kv)} tokens/s" + _unfit_value(r)),
    )
    kv_held_seq = r.kv_bytes_per_sequence_per_gpu * r.pp
    fits = (
        Quantity("capacity", "Capacity" + per_gpu, "datasheet GB read by the capacity convention",
                 f"{g.memory_datasheet_value:g} {g.memory_datasheet_unit} "
                 f"{'measured on the machine' if g.measured else 'on the datasheet'} -> "
                 f"{fmt_bytes_gib(r.capacity_bytes)} ("
                 + ("in GiB already: one reading" if g.memory_datasheet_unit == "GiB"
                    else CAPACITY_CONVENTIONS[r.capacity_convention]) + ")" + _other_reading(r),
                 fmt_bytes_gib(r.capacity_bytes)),
        Quantity("free", "Free for KV" + per_gpu, "max(0, capacity − weights held − reserve)",
                 f"max(0, {r.capacity_bytes / GiB:,.2f} GiB − {r.weight_bytes_held / GiB:,.2f} GiB − "
                 f"{r.reserve_bytes / GiB:,.2f} GiB) = {fmt_bytes_gib(r.free_for_kv_bytes)}"
                 + (f": the weights and reserve are {fmt_bytes_gib(r.weights_shortfall_bytes)} over capacity"
                    if r.weights_shortfall_bytes else ""),
                 fmt_bytes_gib(r.free_for_kv_bytes)),
        Quantity("max-batch", "Largest batch at S", "floor(free / KV_seq(S))"
                 + (" (per GPU: its KV share × PP micro-batches)" if split else ""),
                 _floor_work(r.free_for_kv_bytes / GiB, kv_held_seq / GiB, r.max_batch), f"{r.max_batch:,}"),
        Quantity("fits", "Fits in memory", "weights held + KV + reserve ≤ capacity" + (" (per GPU)" if split else ""),
                 f"{r.weight_bytes_held / GiB:,.2f} + {r.kv_bytes / GiB:,.2f} + {r.reserve_bytes / GiB:,.2f} = "
                 f"{r.memory_used_bytes / GiB:,.2f} GiB {'≤' if r.fits else '>'} {r.capacity_bytes / GiB:,.2f} GiB",
                 # A config key the lab does not model: the verdict is approximate too, where it is read.
                 r.model.approximate_mark + ("yes" if r.fits else "NO")),
    )
    e_text = f"{r.expected_tokens_per_step:.3g}"  # tokens per verify step, as printed ("1 token", "2.53 tokens")
    latency = (
        Quantity("ttft", "Time to first token (one prompt, at best)",
                 "prefill of one prompt: k = prompt length, B = 1, weights + causal attention FLOP",
                 f"prefill I (weights) = {_fpb(r.ttft_intensity)} → {fmt_seconds(r.ttft_s)}", fmt_seconds(r.ttft_s)),
        Quantity("tpot", "Time per output token (at best)",
                 "decode step at context S × PP stages / E" if r.pp > 1 else "decode step at context S / E",
                 f"decode I = {_fpb(r.decode_intensity)} → {fmt_seconds(r.verify_step_time_s)} per step "
                 + (f"× {r.pp} (a token crosses every stage) " if r.pp > 1 else "")
                 + f"/ E = {e_text} {'token' if e_text == '1' else 'tokens'} = {fmt_seconds(r.tpot_s)}",
                 fmt_seconds(r.tpot_s)),
        Quantity("spec", "Speculation: tokens per verify", "E = (1 − α^k) / (1 − α) (Leviathan et al. 2023)",
                 (f"(1 − {r.acceptance:.2f}^{r.spec_k}) / (1 − {r.acceptance:.2f}) = "
                  if r.acceptance < 1 else "α = 1: every draft accepted, E = k = ")
                 + f"{r.expected_tokens_per_step:.2f}; {r.speculative_speedup:.2f}× the tokens/s of k = 1"
                 + ("; the draft model's own steps and weights are not counted" if r.spec_k > 1 else ""),
                 f"{r.expected_tokens_per_step:.2f}"),
    )
    steps = [
        Step("Step 1  weight traffic per step", weights),
        Step("Step 2  arithmetic and the roofline", roofline),
        Step("Step 3  KV cache", kv),
        Step("Step 4  what one step moves", moves),
        Step("Step 5  what fits", fits),
        Step("Step 6  latency", latency),
        Step("Step 7  many GPUs and what a token costs", _many_gpus(r)),
    ]
    return steps


def _money(x: float | None) -> str:
    return fmt_money(x)


def _weights_per_gpu(r: ScenarioResult) -> Quantity:
    """The weights of a GPU of the stage that runs out of memory first (``r.memory_stage``): what TP splits, what the
    engines keep whole, its experts (numbers that multiply out)."""
    m, plan = r.model, r.deployment.plan
    parts = m.stored_bytes_per_param_parts() if r.weight_dtype == "stored" else (r.bytes_per_weight,) * 4
    st = plan.stage_parts(r.memory_stage)
    w_emb, w_head, w_rest, w_exp = parts
    split_terms = [(st.embedding, w_emb), (st.head, w_head), (st.split, w_rest), (st.experts, w_exp)]
    split = " + ".join(f"{n:,} × {w:.6g}" for n, w in split_terms if n)
    where = (f"stage {st.stage + 1} of {r.pp}, layers {st.first + 1}–{st.first + st.layers} of {m.n_layers}" if r.pp > 1
             else f"all {m.n_layers} layers")
    experts = (f"; {st.experts_per_layer:,} routed experts per MoE layer on this GPU's group (ceil of "
               f"{m.moe.n_experts} / {r.ep})" if m.moe else "")
    return Quantity(
        "weights-gpu", "Weights held per GPU",
        "the GPU that runs out of memory first: (embedding + LM head + split + routed experts)·p / TP + "
        "per-rank·p, where per-rank is each rank's ceil(h_kv/TP) heads of the K and V projections (whole heads: "
        "past TP = h_kv each is replicated) and what vLLM and SGLang keep whole on every rank (norms, MLA's "
        "q_a_proj and kv_a_proj_with_mqa, the MoE router, a sparse-attention indexer: ReplicatedLinear in vLLM's "
        "models/deepseek_v2.py and SGLang's), and each MoE layer holds ceil(E/EP) experts",
        f"{where}: ({split}) bytes / {r.tp} + {st.replicated:,} × {w_rest:.6g} bytes = "
        f"{fmt_bytes_gib(r.weight_bytes_held)} of the model's {fmt_bytes_gib(r.model_weight_bytes)}{experts}",
        fmt_bytes_gib(r.weight_bytes_held))


def intensity_weights_formula(r: ScenarioResult) -> str:
    """The formula of ``r``'s intensity on the weights in the articles' symbols: ``I = 2·B·k / p`` where every
    parameter read does its FLOPs in one format (article 004, section 03); an MoE reads more than it uses
    (``N_active / N_read``), and a checkpoint kept as stored reads each tensor group in its own format.

    >>> from core import Scenario
    >>> intensity_weights_formula(Scenario(model="mixtral-8x7b").evaluate())
    'I = 2·B·k·N_active / (N_read·p)'
    """
    if r.weight_dtype == "stored":
        return "I = 2·N_active·B·k / weight bytes read"
    return "I = 2·B·k·N_active / (N_read·p)" if r.model.moe else "I = 2·B·k / p"


def _kernels_work(r: ScenarioResult) -> str:
    """The step's kernels, counted: a Llama-style block's per layer, whatever each layer's kind, and those outside
    the layers (:data:`core.overhead.KERNELS_PER_LAYER`; an engineer's trial found the count nowhere, for a hybrid of
    118 one-mixer layers counted as full blocks)."""
    layers = r.deployment.profile.stages[r.slowest_stage].layers
    per = len(KERNELS_PER_LAYER[STEP_FUSION])
    return (f"{r.kernels_per_step:,} kernels ({layers:,} layers{' on this GPU' if r.pp > 1 else ''} × {per} + "
            f"{KERNELS_OUTSIDE_LAYERS}: a Llama-style block's kernels, whatever each layer's kind)")


def _kv_seq_sum(r: ScenarioResult) -> str:
    """Where KV per token × S is not the sum (a layer holds at most its window, or fixed state), the sum layer group
    by group, then " = " (an engineer's trial: "496 KiB × 131,072" is 66.6 GB, not Gemma-3-27B's 11.17 GB); else ""."""
    terms = r.model.kv_terms(r.kv_bytes_per_element, r.gqa)
    if all(t.cap is None and not t.fixed_bytes for t in terms):
        return ""
    s = r.context

    def b(x: float) -> str:
        return f"{round(x):,}" if float(x).is_integer() else f"{x:,.6g}"

    pieces = [f"{t.layers} × {b(t.bytes_per_token)} bytes × {min(s, t.cap) if t.cap else s:,}" for t in terms
              if t.bytes_per_token]
    pieces += [f"{t.layers} × {b(t.fixed_bytes)} bytes" for t in terms if t.fixed_bytes]
    return " + ".join(pieces) + " = "


def _kv_per_gpu(r: ScenarioResult) -> Quantity:
    """KV per token on the fullest GPU, term by term: layers × bytes × the share each TP rank holds."""
    m, plan = r.model, r.deployment.plan
    h_kv = m.n_kv_heads if r.gqa else m.n_heads
    counts = plan.stage_layers()
    stages = plan.kv_bytes_per_token_per_stage(r.kv_bytes_per_element, r.gqa)
    # The fullest; on a tie the memory bar's stage (a trial read "stage 3 of 3" for the weights held, then "stage 1
    # of 3" for the KV of Qwen3-30B-A3B's three stages of 16 layers, the same bytes)
    stage = max(range(len(stages)), key=lambda i: (stages[i], i == r.memory_stage))
    start = sum(counts[:stage])
    end = start + counts[stage]
    pieces = []
    for t in m.kv_terms(r.kv_bytes_per_element, r.gqa):
        here = sum(1 for i in t.layer_indices if start <= i < end)
        if not (here and t.bytes_per_token):
            continue
        share = {"replicated": "1", "even": f"1/{r.tp}"}.get(t.tp_share, f"ceil({h_kv}/{r.tp})/{h_kv}")
        pieces.append(f"{here} × {t.bytes_per_token:,.6g} bytes × {share}")
    replicated = ", replicated on every TP GPU" if all(t.tp_share == "replicated" or not t.bytes_per_token
                                                        for t in m.kv_terms(1.0, r.gqa)) else (
        " (replicated: TP > h_kv)" if r.tp > h_kv else "")
    where = f"stage {stage + 1} of {r.pp}: " if r.pp > 1 else ""
    per_gpu = float(stages[stage])  # at this scenario's p_kv: an indexer's FP8 keys do not scale with it
    return Quantity(
        "kv-gpu", "KV per token per GPU",
        "Σ over the fullest stage's layers: bytes per token × the share a TP rank holds (ceil(h_kv/TP)/h_kv of "
        "the KV heads; all of an MLA latent and of an indexer's keys)",
        (where + " + ".join(pieces) + f" = {fmt_bytes_small(per_gpu)}"
         + f"; {r.kv_heads_per_gpu} KV head{'s' if r.kv_heads_per_gpu > 1 else ''} per GPU{replicated}")
        if pieces else "no layer holds a KV cache that grows with S",
        f"{fmt_sig_whole(per_gpu / KiB)} KiB")


def _sent_parts(r: ScenarioResult, sent: float) -> str:
    """The bytes a GPU of the slowest stage sends per step, kind by kind, summed, and "; " before the time they take
    (from its profile's collectives, :func:`core.profiles._collectives`; the offline page's twin reads the same);
    where one kind alone is sent, nothing (its formula is the all-reduce's readout). An engineer's trial could not
    find the EP all-to-all's 1,048,576 of Mixtral's 3,145,728 bytes at TP = EP = 2."""
    stage = r.deployment.profile.stages[r.slowest_stage]
    by = {c.name: c for c in stage.collectives}
    if len(by) < 2:
        return ""
    tp, ep, tokens = r.tp, r.ep, r.batch * r.tokens_per_read
    first = by.get("TP all-reduce") or next(iter(by.values()))
    # one call's whole message, B·k·h·a: the all-reduce's; the send's and the all-to-all's are its TP slice
    msg = first.message_bytes_per_token * (1 if first.name == "TP all-reduce" else tp) * tokens
    parts = []
    if "TP all-reduce" in by:
        parts.append(f"2 × {by['TP all-reduce'].calls / 2:.0f} × 2 × ({tp} − 1)/{tp} × {msg:,.0f} bytes (TP: two "
                     "all-reduces a layer)")
    if "EP all-to-all" in by:
        parts.append(f"2 × {by['EP all-to-all'].calls / 2:.0f} × {r.deployment.profile.experts_per_token} × "
                     f"{msg:,.0f} bytes × ({ep} − 1)/{ep} / {tp} (EP: dispatch and combine a MoE layer, to k_e "
                     "experts, the other groups' share, in TP slices)")
    if "PP send" in by:
        parts.append(f"{msg:,.0f} bytes / {tp} (PP: one send to the next stage)")
    return " + ".join(parts) + f" = {sent:,.0f} bytes; "


def _many_gpus(r: ScenarioResult) -> tuple[Quantity, ...]:
    """TP/PP/EP/replicas: per-GPU shares, communication, the interconnect roof, throughput and cost."""
    m = r.model
    link = fmt_bandwidth(r.link_bandwidth) if r.link_bandwidth else "no link figure"
    fit = ("fits as set" if r.fits and r.tp == (r.suggested_tp or r.tp) else
           split_words(r.suggested_tp, r.suggested_pp)
           if r.suggested_tp else "none up to the node and 1,024 GPUs")
    fit += f" (at EP = {r.ep})" if r.ep > 1 and r.suggested_tp else ""
    comm_i = "—" if r.communication_intensity is None else _fpb(r.communication_intensity)
    sent = r.bytes_sent_per_step
    comm = r.deployment.plan.comm_parts(r.batch, r.tokens_per_read, stage=r.slowest_stage)
    calls = comm["tp_calls"] + comm["pp_calls"] + comm["ep_calls"]
    wire = (f"{sent:,.0f} bytes / {link}" if r.link_bandwidth else "no link figure: the calls only")
    call_s = fmt_seconds(r.allreduce_time_s - 2 * (r.tp - 1) / r.tp * r.allreduce_bytes / r.link_bandwidth) \
        if (r.link_bandwidth and r.tp > 1) else fmt_seconds(r.deployment.plan.call_latency_s)
    return (
        Quantity("gpus", "GPUs", "TP × PP × EP × replicas",
                 f"{r.tp} × {r.pp} × {r.ep} × {r.replicas} = {r.gpus_total:,} ({r.interconnect})",
                 f"{r.gpus_total:,} ({r.replicas:,} replicas × {r.gpus_per_replica:,})" if r.replicas > 1
                 else f"{r.gpus_total:,}"),
        _weights_per_gpu(r),
        _kv_per_gpu(r),
        Quantity("allreduce", "One all-reduce (ring)", "2·(TP−1)/TP · B·k·h·a / link + t_call (Patarasuk & Yuan "
                 "2009; nccl-tests PERFORMANCE.md)",
                 (f"2 × {r.tp - 1}/{r.tp} × {r.allreduce_bytes:,.0f} bytes / {link} + {call_s} = "
                  f"{fmt_seconds(r.allreduce_time_s)}; two per layer (the link's figure per direction)")
                 if r.tp > 1 else "TP = 1: none",
                 fmt_seconds(r.allreduce_time_s) if r.tp > 1 else "none"),
        Quantity("comm-time", "Communication per step", "TP all-reduces + PP send + EP all-to-all, not overlapped: "
                 "bytes sent / link + calls × t_call",
                 (_sent_parts(r, sent)
                  + f"{wire} + {calls} × {fmt_seconds(r.deployment.plan.call_latency_s)} = "
                  f"{fmt_seconds(r.communication_time_s)}, against {fmt_seconds(r.memory_time_s)} of memory and "
                  f"{fmt_seconds(r.compute_time_s)} of compute") if calls else "nothing sent on one GPU",
                 fmt_seconds(r.communication_time_s)),
        Quantity("comm-intensity", "Communication intensity", "FLOP per byte a GPU sends, vs P_peak / link",
                 (f"{_quotient_terms(r.flop_per_step, sent, r.communication_intensity)} = {comm_i}; "
                  "interconnect ridge "
                  + (f"{fmt_sig(r.interconnect_ridge_point)} FLOP/byte" + _below_ridge(r)
                     if r.interconnect_ridge_point else "unknown")
                  + _call_latency(r, calls) + _comm_share(r))
                 if sent else "nothing sent on one GPU", comm_i),
        Quantity("pipeline", "Pipeline", "latency adds over PP stages; bubble (PP−1)/(M+PP−1) (article 004, §07)",
                 (f"{r.pp} stages of ≤ {r.layers_per_gpu} layers; a token takes {r.pp} × "
                  f"{fmt_seconds(r.verify_step_time_s)}; throughput needs {r.pp} micro-batches of B in flight; one "
                  f"pass of M = {r.pp} idles {100 * r.pipeline_bubble:.0f} %") if r.pp > 1 else "PP = 1: one stage",
                 f"{r.pp} stage{'s' if r.pp > 1 else ''}"),
        Quantity("experts-gpu", "Experts per GPU (MoE)",
                 "ceil(E / EP) on the fullest GPU; touched: ceil(E/EP)·(1 − (1 − k_e/E)^(EP·B·k))",
                 (f"ceil({m.moe.n_experts} / {r.ep}) = {fmt_sig(r.experts_per_gpu)} per MoE layer; "
                  f"{fmt_sig(r.experts_touched_per_gpu, 3)} touched per step") if m.moe else "dense model: no experts",
                 fmt_sig(r.experts_per_gpu) if m.moe else "—"),
        Quantity("tokens-aggregate", "Tokens/s ceiling, all GPUs", "B·E / step × EP groups × replicas",
                 f"{fmt_rate(r.tokens_per_s_with_kv)} tokens/s × {r.ep} × {r.replicas} = "
                 f"{fmt_rate(r.tokens_per_s_aggregate)} tokens/s ({r.sequences_in_flight:,} "
                 f"{'sequence' if r.sequences_in_flight == 1 else 'sequences'} in flight); "
                 f"per sequence "
                 f"{fmt_rate(r.tokens_per_s_per_sequence)} tokens/s" + _unfit_work(r),
                 f"{fmt_rate(r.tokens_per_s_aggregate)} tokens/s" + _unfit_value(r)),
        Quantity("smallest-fit", "Smallest split that fits", "fewest GPUs: TP up to the node, then PP",
                 f"at B = {r.batch}, S = {r.context:,}: {fit}", fit),
        _cost("cost-output", "output", r.output_tokens_per_s_aggregate, r.cost_per_million_output_tokens, r),
        _cost("cost-prompt", "prompt", r.prompt_tokens_per_s_aggregate, r.cost_per_million_prompt_tokens, r),
    )


def _below_ridge(r: ScenarioResult) -> str:
    """What the communication intensity against the interconnect ridge says: which of the link's bytes and the
    chip's FLOPs takes longer (the call latencies aside)."""
    if r.communication_intensity < r.interconnect_ridge_point:
        return " (below it, the link takes longer for the bytes than the chip for the FLOPs)"
    return " (above it, the chip takes longer for the FLOPs than the link for the bytes)"


def _call_latency(r: ScenarioResult, calls: int) -> str:
    """What no intensity counts: the calls' fixed latency, and its part of the communication time (at B = 1 on
    NVLink, nearly all of it: the bytes are few and each call costs its launch and synchronisation)."""
    t = r.deployment.plan.call_latency_s
    return (f"; beside the bytes, the calls' latency: {calls} × {fmt_seconds(t)} = {fmt_seconds(calls * t)} of the "
            f"communication's {fmt_seconds(r.communication_time_s)}")


def _comm_share(r: ScenarioResult) -> str:
    """Communication's share of the step, and whether it is the step's largest part: only then is the step called
    communication-bound, so the line never contradicts the Bound readout's roofline verdict unexplained."""
    comm, step = r.communication_time_s, r.step_time_s_with_kv
    share = f"; communication is {fmt_seconds(comm)} / {fmt_seconds(step)} = {_pct(comm / step)} of the step"
    if r.bound == "overhead":
        return share + f": the kernel launches ({fmt_seconds(r.launch_overhead_s)}) set it, overhead-bound"
    if comm > max(r.compute_time_s, r.memory_time_s):
        return share + (", its largest part: communication-bound (the Bound readout is the roofline of one GPU's "
                        f"own work, {r.bound}-bound, which the communication adds to)")
    name, t = ("memory", r.memory_time_s) if r.memory_time_s >= r.compute_time_s else ("compute", r.compute_time_s)
    return share + f", less than its {name} time ({fmt_seconds(t)}): the step stays {r.bound}-bound"


def _cost(key: str, kind: str, tokens_per_s: float, cost: float | None, r: ScenarioResult) -> Quantity:
    """USD per million tokens: price per GPU-hour × GPUs / 3600 s / tokens/s × 1e6."""
    gpus = f"{r.gpus_total:,} GPU" + ("s" if r.gpus_total != 1 else "")
    work = (f"{_money(r.gpu_hour_price)} × {r.gpus_total:,} / 3600 / {fmt_sig(tokens_per_s, 6)} tokens/s × 1e6 = "
            f"{_money(cost)} ({_money(r.gpu_hour_price)} per GPU-hour, {gpus}, 3,600 s an hour)")
    # A cost of tokens that no engine makes as set says so, as their tokens/s do (a student's trial: $23.85 beside
    # "23 tokens/s (if it fit)").
    return Quantity(key, f"Cost per million {kind} tokens", f"price × GPUs / 3600 / {kind} tokens/s × 1e6",
                    work if cost is not None else "set a price per GPU-hour",
                    _money(cost) + (_unfit_value(r) if cost is not None else ""))


def quantities(r: ScenarioResult) -> dict[str, Quantity]:
    """Every quantity of ``r``'s derivation by key, in derivation order."""
    return {q.key: q for step in derivation(r) for q in step.quantities}


#: Quantities a model's config cannot change (the GPU's, its capacity, the split's GPUs and stages, speculation's E):
#: never marked approximate.
NOT_THE_MODELS = ("ridge", "roof", "capacity", "gpus", "pipeline", "spec")


def _other_reading(r: ScenarioResult) -> str:
    """The capacity under the convention not in use, where a datasheet's GB has two readings (a lecturer's audit:
    the default's 62 sequences of Llama-3-8B beside article 000's 59, and nothing said how to get there)."""
    g = r.gpu
    if g.memory_datasheet_unit == "GiB":
        return ""
    other = next(c for c in CAPACITY_CONVENTIONS if c != r.capacity_convention)
    return (f"; the capacity convention's other reading, {CAPACITY_CONVENTIONS[other]}, gives "
            f"{fmt_bytes_gib(g.capacity_bytes(other))}")


def marked_value(q: Quantity, approximate: bool) -> str:
    """``q``'s value as shown: ``"≈ "`` before it where ``approximate`` (its model has config keys the lab does not
    model) and the model can change it; as is where it cannot (:data:`NOT_THE_MODELS`), is marked already, or has no
    figure but zeros ("no price given", "0 µs").  The readouts, the offline page's twin and ``explain`` mark alike.

    >>> marked_value(Quantity("tpot", "Time per output token", "", "", "22.74 ms"), True)
    '≈ 22.74 ms'
    """
    if approximate and q.key not in NOT_THE_MODELS and not q.value.startswith("≈") \
            and any(c in q.value for c in "123456789"):
        return "≈ " + q.value
    return q.value


def explain(r: ScenarioResult) -> str:
    """The derivation of ``r`` as plain text (one line per quantity), then the model as read.  For a model with
    config keys the lab does not model, each line whose figure they can change starts with "≈" (:func:`marked_value`),
    as the readouts mark their values."""
    m = r.model
    w_label, kv_label = r.weight_format, get_precision(r.kv_dtype).label
    k_name = "k (prompt length)" if r.phase == "prefill" else "k"
    approximate = m.approximate_note(see="see the model as read, below")
    lines = [
        f"{m.name} on {r.gpu.name}: {r.phase}, B = {r.batch}, {k_name} = {r.tokens_per_read:,}, "
        f"S = {r.context:,}, weights {w_label}, KV cache {kv_label}, GQA {'on' if r.gqa else 'off'}"
        + (f" — APPROXIMATE: {approximate.removeprefix('approximate: ')}; every number here leaves them out"
           if approximate else ""),  # as the lab's line says it (a trial found only the lab's said so)
    ]
    for step in derivation(r):
        lines += ["", step.title]
        # The verdict "Fits in memory" is a word its work does not end with: said after it (≈ where the model has a
        # key the lab does not model).
        lines += [f"  {'≈ ' if marked_value(q, bool(m.unmodelled)) != q.value else ''}{q.label}: {q.formula} = "
                  f"{q.work}" + (f" → {q.value}" if q.key == "fits" else "")
                  for q in step.quantities]
    lines += [f"  note: {w}" for w in r.warnings]
    lines += ["", f"Model as read from its config.json ({m.config_url or m.name})"]
    lines += [f"  {key}: {value}" for key, value in m.architecture().items()]
    lines += [f"  assumed: {a}" for a in m.assumptions]
    return "\n".join(lines)
