"""Live readouts: every derived number, each expandable to its formula with the
values substituted and their units ("show your work").  GB = 1e9 bytes and
GiB = 2^30 bytes are both written out, never mixed under one name."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape

from core.scenario import ScenarioResult
from core.units import GB, GiB, KiB, fmt_bandwidth, fmt_flop, fmt_flops_rate, fmt_rate, fmt_seconds, fmt_sig


@dataclass(frozen=True)
class Readout:
    """One readout: ``key`` names it for tests and CSS; ``work`` is the formula with values."""

    key: str
    quantity: str
    value: str
    formula: str
    work: str


def _fpb(x: float) -> str:
    return f"{fmt_sig(x)} FLOP/byte"


def rows(r: ScenarioResult) -> list[Readout]:
    """The readouts of ``r``, in display order."""
    n_e9 = f"{r.n_params / 1e9:,.3f}e9"
    prefill = r.phase == "prefill"
    k_note = " (k = prompt length in prefill)" if prefill else ""
    s_note = " (the prompt, in prefill)" if prefill else ""
    kv_share = 100 * r.kv_traffic_bytes / r.bytes_per_step
    m = r.model
    # Display strings used by several readouts.
    peak, bw = fmt_flops_rate(r.peak_flop_per_s), fmt_bandwidth(r.bandwidth)
    att, att_kv = fmt_flops_rate(r.attainable_flop_per_s_weights), fmt_flops_rate(r.attainable_flop_per_s_with_kv)
    gained = f"{r.tokens_per_read:,}" if prefill else f"{r.expected_tokens_per_step:.3g}"
    return [
        Readout(
            "intensity",
            "Arithmetic intensity (weights)",
            _fpb(r.arithmetic_intensity_weights),
            "I = 2·B·k / p" + k_note,
            f"2 × {r.batch} × {r.tokens_per_read:,} / {r.bytes_per_weight:g} bytes = "
            f"{_fpb(r.arithmetic_intensity_weights)}",
        ),
        Readout(
            "intensity-kv",
            "Intensity counting KV reads",
            _fpb(r.arithmetic_intensity_with_kv),
            "2·N·B·k / (N·p + B·KV_seq(S))",
            f"{fmt_flop(r.flop_per_step)} / ({r.weight_bytes_read / GB:,.2f} GB + {r.kv_traffic_bytes / GB:,.2f} GB) = "
            f"{_fpb(r.arithmetic_intensity_with_kv)}",
        ),
        Readout(
            "ridge",
            "Ridge point",
            f"{r.ridge_point:,.0f} FLOP/byte",
            "P_peak / BW",
            f"{peak} / {bw} = {r.ridge_point:,.1f} FLOP/byte",
        ),
        Readout(
            "attainable",
            "Attainable (weights roofline)",
            att,
            "min(P_peak, BW·I)",
            f"min({peak}, {bw} × {_fpb(r.arithmetic_intensity_weights)}) = "
            f"{att} = {fmt_sig(100 * r.peak_fraction_weights, 3)} % of peak",
        ),
        Readout(
            "peak-fraction",
            "Fraction of peak (weights)",
            f"{fmt_sig(100 * r.peak_fraction_weights, 3)} %",
            "attainable / P_peak = min(1, I / ridge)",
            f"{att} / {peak} = {fmt_sig(100 * r.peak_fraction_weights, 3)} %",
        ),
        Readout(
            "attainable-kv",
            "Attainable counting KV reads",
            f"{att_kv} ({fmt_sig(100 * r.peak_fraction_with_kv, 3)} %)",
            "min(P_peak, BW·I_kv): what the step really sustains",
            f"min({peak}, {bw} × {_fpb(r.arithmetic_intensity_with_kv)}) = "
            f"{att_kv} = {fmt_sig(100 * r.peak_fraction_with_kv, 3)} % of peak",
        ),
        Readout(
            "bound",
            "Bound",
            f"{r.bound}-bound",
            "intensity counting KV vs ridge point",
            f"{_fpb(r.arithmetic_intensity_with_kv)} {'<' if r.bound == 'memory' else '≥'} "
            f"{r.ridge_point:,.1f} FLOP/byte",
        ),
        Readout("roof", "Compute roof", peak, "dense peak for the weight precision", r.compute_roof_reason),
        Readout(
            "weights",
            "Weight bytes read per step",
            f"{r.weight_bytes_read / GB:,.2f} GB ({r.weight_bytes_read / GiB:,.2f} GiB)",
            "N·p (MoE: only the experts the step's tokens touch)",
            (
                f"{r.weight_bytes_read / r.bytes_per_weight / 1e9:,.2f}e9 of {n_e9} parameters (the experts "
                f"{r.batch * r.tokens_per_read:,} tokens touch) × {r.bytes_per_weight:g} bytes = "
                f"{r.weight_bytes_read / GB:,.2f} GB; memory holds all {r.weight_bytes_held / GiB:,.2f} GiB"
            )
            if m.moe
            else f"{n_e9} × {r.bytes_per_weight:g} bytes = {r.weight_bytes_read / GB:,.2f} GB = "
            f"{r.weight_bytes_read / GiB:,.2f} GiB",
        ),
        Readout(
            "flops",
            "FLOPs per step",
            fmt_flop(r.flop_per_step),
            "2·N_active·B·k",
            f"2 × {r.n_active_params / 1e9:,.3f}e9 × {r.batch} × {r.tokens_per_read:,} = {fmt_flop(r.flop_per_step)}",
        ),
        Readout(
            "step-time",
            "Step time",
            fmt_seconds(r.step_time_s_with_kv),
            "max(FLOPs/P_peak, bytes/BW)",
            f"max({fmt_seconds(r.flop_per_step / r.peak_flop_per_s)}, {r.bytes_per_step / GB:,.2f} GB / "
            f"{bw} = {fmt_seconds(r.bytes_per_step / r.bandwidth)}) = {fmt_seconds(r.step_time_s_with_kv)}",
        ),
        Readout(
            "tokens",
            "Tokens/s ceiling",
            f"{fmt_rate(r.tokens_per_s_with_kv)} tokens/s",
            "B·E / step time (counting KV; E = tokens gained per sequence per step)",
            f"{r.batch} × {gained} / {fmt_seconds(r.step_time_s_with_kv)} = "
            f"{fmt_rate(r.tokens_per_s_with_kv)} tokens/s",
        ),
        Readout(
            "tokens-no-kv",
            "Tokens/s ignoring KV",
            f"{fmt_rate(r.tokens_per_s_weights)} tokens/s",
            "B·E / max(FLOPs/P_peak, N·p/BW)",
            f"{r.batch} × {gained} / {fmt_seconds(r.step_time_s_weights)} = "
            f"{fmt_rate(r.tokens_per_s_weights)} tokens/s",
        ),
        Readout(
            "ttft",
            "Time to first token (one prompt)",
            fmt_seconds(r.ttft_s),
            "prefill of one prompt: k = prompt length, B = 1",
            f"prefill I = {_fpb(r.prefill_intensity / r.batch)} → {fmt_seconds(r.ttft_s)}",
        ),
        Readout(
            "tpot",
            "Time per output token",
            fmt_seconds(r.tpot_s),
            "decode step at context S / E",
            f"decode I = {_fpb(r.decode_intensity)} → {fmt_seconds(r.tpot_s * r.expected_tokens_per_step)} "
            f"per step / E = {r.expected_tokens_per_step:.3g} tokens = {fmt_seconds(r.tpot_s)}",
        ),
        Readout(
            "spec",
            "Speculation: tokens per verify",
            f"{r.expected_tokens_per_step:.2f}",
            "E = (1 − α^k) / (1 − α) (Leviathan et al. 2023)",
            f"(1 − {r.acceptance:.2f}^{r.spec_k}) / (1 − {r.acceptance:.2f}) = {r.expected_tokens_per_step:.2f}; "
            f"{r.speculative_speedup:.2f}× the tokens/s of k = 1",
        ),
        Readout(
            "kv-token",
            "KV per token",
            f"{fmt_sig(r.kv_bytes_per_token / KiB)} KiB",
            "2·L·h_kv·d_head·p_kv (MLA: its latent)",
            f"{m.kv_formula(r.kv_bytes_per_element, r.gqa)} = {r.kv_bytes_per_token:,.0f} bytes",
        ),
        Readout(
            "kv-total",
            "KV cache (whole batch)",
            f"{r.kv_bytes / GiB:,.2f} GiB",
            "KV_seq(S) × B",
            f"{r.kv_bytes_per_sequence / GiB:,.3f} GiB × {r.batch} = {r.kv_bytes / GiB:,.2f} GiB = "
            f"{r.kv_bytes / GB:,.2f} GB at S = {r.context:,}{s_note}; {m.name}: {m.attention_pattern()}",
        ),
        Readout(
            "kv-share",
            "KV share of traffic",
            f"{kv_share:.0f} %",
            "KV bytes / bytes per step",
            f"{r.kv_traffic_bytes / GB:,.2f} GB / {r.bytes_per_step / GB:,.2f} GB = {kv_share:.1f} %",
        ),
        Readout(
            "fits",
            "Fits in memory",
            "yes" if r.fits else "NO",
            "weights + KV + reserve ≤ capacity",
            f"{r.weight_bytes_read / GiB:,.2f} + {r.kv_bytes / GiB:,.2f} + {r.reserve_bytes / GiB:,.2f} = "
            f"{r.memory_used_bytes / GiB:,.2f} GiB {'≤' if r.fits else '>'} {r.capacity_bytes / GiB:,.2f} GiB",
        ),
        Readout(
            "max-batch",
            "Largest batch at S",
            f"{r.max_batch:,}",
            "floor(max(0, capacity − weights − reserve) / KV_seq(S))",
            f"floor(max(0, {r.free_for_kv_bytes / GiB:,.2f} GiB) / {r.kv_bytes_per_sequence / GiB:,.3f} GiB) = "
            f"{r.max_batch:,}",
        ),
    ]


def readouts_html(r: ScenarioResult, show_work: bool = False) -> str:
    """The readouts as HTML, value cells marked ``data-readout=<key>``.

    With ``show_work`` each readout also shows its formula and the same formula
    with this scenario's values and units substituted.  (The switch lives on the
    server, so it survives every redraw, unlike a per-row browser toggle.)
    """
    items = "".join(
        f'<div class="ro" data-key="{x.key}"><div class="line">'
        f'<span class="q">{escape(x.quantity)}</span><span class="v" data-readout="{x.key}">{escape(x.value)}</span>'
        "</div>"
        + (
            f'<div class="f">{escape(x.formula)}</div><div class="w" data-work="{x.key}">{escape(x.work)}</div>'
            if show_work
            else ""
        )
        + "</div>"
        for x in rows(r)
    )
    warn = "".join(f'<div class="warn">⚠ {escape(w)}</div>' for w in r.warnings)
    return f'<div class="readouts">{items}</div>{warn}'


READOUT_CSS = """
.readouts { font-size: 13px; }
div.ro { border-bottom: 1px solid #eee; padding: 3px 2px; }
div.ro .line { display: flex; justify-content: space-between; gap: 8px; }
div.ro .v { font-weight: 600; font-variant-numeric: tabular-nums; white-space: nowrap; }
div.ro .f { color: #555; font-size: 12px; margin: 2px 0 0 10px; }
div.ro .w { color: #1a237e; font-size: 12px; margin: 1px 0 3px 10px; font-variant-numeric: tabular-nums; }
div.warn { color: #b45309; margin-top: 6px; font-size: 13px; }
"""
