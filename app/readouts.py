"""Live readouts: every derived number of the scenario with its formula and unit."""

from __future__ import annotations

from html import escape

from core.scenario import ScenarioResult
from core.units import GB, TFLOP, GiB, KiB


def rows(r: ScenarioResult) -> list[tuple[str, str, str, str]]:
    """``(key, quantity, value, formula)`` rows; the key names the readout for tests and CSS."""
    k_name = "k (= prompt length)" if r.phase == "prefill" else "k"
    kv_share = 100 * r.kv_traffic_bytes / r.bytes_per_step
    return [
        ("intensity", "Arithmetic intensity (weights)", f"{r.arithmetic_intensity:,.4g} FLOP/byte",
         f"2·B·k/p = 2×{r.batch}×{r.tokens_per_read}/{r.bytes_per_weight:g}; {k_name}"),
        ("intensity-kv", "Intensity counting KV reads", f"{r.arithmetic_intensity_with_kv:,.4g} FLOP/byte",
         "FLOPs / (weight bytes + KV bytes)"),
        ("ridge", "Ridge point", f"{r.ridge_point:,.0f} FLOP/byte",
         f"P_peak/BW = {r.peak_flops / TFLOP:,.4g} TFLOP/s / {r.bandwidth / 1e12:,.4g} TB/s"),
        ("attainable", "Attainable", f"{r.attainable_flops / TFLOP:,.4g} TFLOP/s",
         "min(P_peak, BW·I)"),
        ("peak-fraction", "Fraction of peak", f"{100 * r.peak_fraction:.3g} %", "attainable / P_peak"),
        ("bound", "Bound", f"{r.bound}-bound", "intensity counting KV vs ridge point"),
        ("roof", "Compute roof", f"{r.peak_flops / TFLOP:,.4g} TFLOP/s", r.compute_roof_reason),
        ("weights", "Weight bytes", f"{r.weight_bytes / GB:,.2f} GB ({r.weight_bytes / GiB:,.2f} GiB)",
         f"N·p = {r.n_params / 1e9:,.2f}e9 × {r.bytes_per_weight:g} bytes"),
        ("flops", "FLOPs per step", f"{r.flops_per_step / 1e9:,.4g} GFLOP", "2·N·B·k"),
        ("step-time", "Step time", f"{r.step_time_s * 1e3:,.4g} ms",
         "max(FLOPs/P_peak, (weights + KV)/BW)"),
        ("tokens", "Tokens/s ceiling", f"{r.tokens_per_s:,.0f} tokens/s", "B·k / step time, counting KV"),
        ("tokens-no-kv", "Tokens/s ignoring KV", f"{r.tokens_per_s_without_kv:,.0f} tokens/s",
         "B·k / max(FLOPs/P_peak, weights/BW)"),
        ("kv-token", "KV per token", f"{r.kv_bytes_per_token / KiB:,.4g} KiB",
         f"2·L·h_kv·d_head·p_kv = {r.kv_bytes_per_token:,.0f} bytes"),
        ("kv-total", "KV cache (whole batch)", f"{r.kv_bytes / GiB:,.2f} GiB ({r.kv_bytes / GB:,.2f} GB)",
         f"× S = {r.context:,} × B = {r.batch}"),
        ("kv-share", "KV share of traffic", f"{kv_share:.0f} %", "KV bytes / bytes per step"),
        ("fits", "Fits in memory", "yes" if r.fits else "NO",
         f"{r.memory_used_bytes / GiB:,.1f} GiB of {r.capacity_bytes / GiB:,.1f} GiB"),
        ("max-batch", "Largest batch at S", f"{r.max_batch:,}",
         "floor((capacity − weights − reserve) / KV per sequence)"),
    ]


def readouts_html(r: ScenarioResult) -> str:
    """The readout table as HTML; each value cell has ``data-readout=<key>``."""
    body = "".join(
        f'<tr><td class="q">{escape(q)}<div class="f">{escape(f)}</div></td>'
        f'<td class="v" data-readout="{key}">{escape(v)}</td></tr>'
        for key, q, v, f in rows(r)
    )
    warn = "".join(f'<div class="warn">⚠ {escape(w)}</div>' for w in r.warnings)
    return f'<table class="readouts">{body}</table>{warn}'


READOUT_CSS = """
table.readouts { border-collapse: collapse; font-size: 13px; width: 100%; }
table.readouts td { padding: 3px 6px; border-bottom: 1px solid #eee; vertical-align: top; }
table.readouts td.q { color: #333; }
table.readouts td.v { font-weight: 600; font-variant-numeric: tabular-nums; white-space: nowrap; text-align: right; }
table.readouts div.f { color: #888; font-size: 11px; }
div.warn { color: #b45309; margin-top: 6px; }
"""
