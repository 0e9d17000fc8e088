"""A step-by-step derivation of a scenario, in the style of article 000's
"A Concrete Example": every number with its formula, values and unit."""

from __future__ import annotations

from .hardware import CAPACITY_CONVENTIONS
from .precision import get_precision
from .scenario import ScenarioResult
from .units import (
    GB,
    GiB,
    fmt_bandwidth,
    fmt_bytes_gb,
    fmt_bytes_gib,
    fmt_bytes_small,
    fmt_flop,
    fmt_flops_rate,
    fmt_rate,
    fmt_seconds,
    fmt_sig,
)


def explain(r: ScenarioResult) -> str:
    """The derivation of ``r`` as plain text (one line per quantity)."""
    m, g, gqa = r.model, r.gpu, r.gqa
    w_label, kv_label = get_precision(r.weight_dtype).label, get_precision(r.kv_dtype).label
    k_name = "k (prompt length)" if r.phase == "prefill" else "k"
    lines = [
        f"{m.name} on {g.name}: {r.phase}, B = {r.batch}, {k_name} = {r.tokens_per_read:,}, "
        f"S = {r.context:,}, weights {w_label}, KV cache {kv_label}, GQA {'on' if gqa else 'off'}",
        "",
        "Step 1  weight traffic per step",
        f"  N = {r.n_params:,} parameters (derived from config.json)"
        + (
            f"; {r.n_active_params:,} active per token; this step reads "
            f"{r.weight_bytes_read / r.bytes_per_weight:,.0f} "
            f"(the experts {r.batch * r.tokens_per_read:,} tokens touch)"
            if m.moe
            else ""
        ),
        f"  weight bytes read = N_read·p = {r.weight_bytes_read / r.bytes_per_weight:,.0f} × "
        f"{r.bytes_per_weight:g} B = "
        f"{fmt_bytes_gb(r.weight_bytes_read)} ({fmt_bytes_gib(r.weight_bytes_read)})",
        f"  weight read time = {fmt_bytes_gb(r.weight_bytes_read)} / {fmt_bandwidth(r.bandwidth)} = "
        f"{fmt_seconds(r.weight_bytes_read / r.bandwidth)}",
        "",
        "Step 2  arithmetic and the roofline",
        f"  FLOPs per step = 2·N_active·B·k = 2 × {r.n_active_params:,} × {r.batch} × {r.tokens_per_read:,} = "
        f"{fmt_flop(r.flop_per_step)}",
        f"  compute roof = {fmt_flops_rate(r.peak_flop_per_s)} dense ({r.compute_roof_reason})",
        f"  compute time = {fmt_flop(r.flop_per_step)} / {fmt_flops_rate(r.peak_flop_per_s)} = "
        f"{fmt_seconds(r.flop_per_step / r.peak_flop_per_s)}",
        f"  arithmetic intensity I = 2·B·k/p = 2 × {r.batch} × {r.tokens_per_read:,} / {r.bytes_per_weight:g} = "
        f"{fmt_sig(r.arithmetic_intensity_weights)} FLOP/byte",
        f"  ridge point = P_peak/BW = {fmt_flops_rate(r.peak_flop_per_s)} / {fmt_bandwidth(r.bandwidth)} = "
        f"{r.ridge_point:,.1f} FLOP/byte",
        f"  attainable = min(P_peak, BW·I) = {fmt_flops_rate(r.attainable_flop_per_s_weights)} = "
        f"{fmt_sig(100 * r.peak_fraction_weights, 3)} % of peak",
        f"  ceiling ignoring KV = B·E / max(compute, weight read) = {fmt_rate(r.tokens_per_s_weights)} tokens/s"
        + (
            f"  (E = {r.expected_tokens_per_step:.3g} expected tokens per verify at α = {r.acceptance:g})"
            if r.phase == "decode" and r.spec_k > 1
            else ""
        ),
        "",
        "Step 3  KV cache",
        f"  per token = {m.kv_formula(r.kv_bytes_per_element, gqa)} = {fmt_bytes_small(r.kv_bytes_per_token)}",
        f"  per sequence at S = {r.context:,}: {fmt_bytes_gb(r.kv_bytes_per_sequence)} "
        f"({fmt_bytes_gib(r.kv_bytes_per_sequence)})"
        + (
            ""
            if all(w is None for w in m.layer_windows)
            else f"  (sliding-window layers hold at most their window: {m.attention_pattern()})"
        ),
        f"  whole batch × B = {r.batch}: {fmt_bytes_gb(r.kv_bytes)} ({fmt_bytes_gib(r.kv_bytes)})",
        "",
        "Step 4  what one step moves",
        f"  bytes per step = weights + KV = {fmt_bytes_gb(r.weight_bytes_read)} + {fmt_bytes_gb(r.kv_traffic_bytes)} = "
        f"{fmt_bytes_gb(r.bytes_per_step)}  (KV share {100 * r.kv_traffic_bytes / r.bytes_per_step:.0f} %)",
        f"  intensity counting KV = FLOPs / bytes = {fmt_sig(r.arithmetic_intensity_with_kv)} FLOP/byte -> "
        f"{r.bound}-bound, {fmt_sig(100 * r.peak_fraction_with_kv, 3)} % of peak",
        f"  step time = max({fmt_flop(r.flop_per_step)} / {fmt_flops_rate(r.peak_flop_per_s)}, "
        f"{r.bytes_per_step / GB:,.2f} GB / {fmt_bandwidth(r.bandwidth)}) = {fmt_seconds(r.step_time_s_with_kv)}",
        f"  tokens/s = B·E / step time = {fmt_sig(r.tokens_per_s_with_kv * r.step_time_s_with_kv)} / "
        f"{fmt_seconds(r.step_time_s_with_kv)} = "
        f"{fmt_rate(r.tokens_per_s_with_kv)} tokens/s  (E = tokens each sequence gains per step)",
        "",
        "Step 5  what fits",
        f"  capacity = {g.memory_datasheet_value:g} {g.memory_datasheet_unit} on the datasheet -> "
        f"{fmt_bytes_gib(r.capacity_bytes)} ({CAPACITY_CONVENTIONS[r.capacity_convention]})",
        f"  free for KV = capacity - weights - reserve = {r.capacity_bytes / GiB:,.2f} - "
        f"{r.weight_bytes_held / GiB:,.2f} - "
        f"{r.reserve_bytes / GiB:,.2f} GiB = {fmt_bytes_gib(r.free_for_kv_bytes)}",
        f"  largest batch at S = {r.context:,}: floor(max(0, free) / KV per sequence) = {r.max_batch:,}",
        f"  attention: {m.attention_pattern()}",
        f"  B = {r.batch}: weights + KV + reserve = {fmt_bytes_gib(r.memory_used_bytes)} -> "
        + ("fits" if r.fits else "DOES NOT FIT"),
    ]
    lines += [f"  note: {w}" for w in r.warnings]
    lines += ["", f"Model as read from its config.json ({m.config_url or m.name})"]
    lines += [f"  {key}: {value}" for key, value in m.architecture().items()]
    lines += [f"  assumed: {a}" for a in m.assumptions]
    return "\n".join(lines)
