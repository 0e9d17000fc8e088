"""The Serving tab: the serving system around the ladder, as HTML (no Bokeh models).

Five sections, each from one model in ``core/`` with its inputs from the current scenario (on the smallest
tensor-parallel split that fits, as the Ladder tab starts): continuous against static batching
(:mod:`core.batching`, Orca), PagedAttention's waste (:mod:`core.paging`, vLLM), prefill and decode pools
(:mod:`core.disaggregation`, DistServe), Ring Attention's hiding condition (:mod:`core.context_parallel`) and
ZeRO's stages with the pipeline bubble (:mod:`core.training_memory`).  The tab is a
:class:`app.serving_views.TabHTMLView`: recomputed on each new result only while it is open.

The inline SVG is built from numbers only: every coordinate and every text in it is a number this module
formats; names (the model's, the GPU's) appear only in the HTML around it, escaped.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from html import escape

import numpy as np
import panel as pn
import param

from core.batching import MIXES, BatchingRun, LengthMix, compare_batching
from core.context_parallel import HOSTS, ring_attention, ring_host
from core.disaggregation import OUTPUT_LEN, RATE, plan_pools
from core.ladder import ladder_start
from core.paging import EXISTING_WASTE, PAGED_WASTE_BELOW, POLICIES, compare_paging
from core.scenario import Scenario
from core.training_memory import (
    DATA_PARALLEL,
    MICROBATCHES,
    PIPELINE_STAGES,
    limits_text,
    pipeline_bubble,
    zero_stages,
)
from core.units import GB, GiB, fmt_count, fmt_rate, fmt_seconds, fmt_sig

from .ladder_view import SHARED_CLIMBS, shipped
from .serving_views import TabHTMLView, serving_inputs
from .state import LabState
from .style import PALETTE, scroll_table

#: The paper's setting for the paging comparison: OPT's 2,048-token maximum (Kwon et al. 2023, section 6.1).
PAPER_MAX_LEN = 2048
#: Points in the effective-batch sparkline: the runs are averaged over this many equal spans of time.
SPARK_BINS = 160
SPARK_W, SPARK_H = 640, 130
COLORS = {"static": PALETTE["kv_cache"], "continuous": PALETTE["ladder"]}
#: Each policy's line by its dash as well as its colour, and the glyph its key draws (an accessibility audit: two
#: solid lines told apart by colour alone).
DASHES = {"static": "6 3", "continuous": ""}
GLYPHS = {"static": "╍", "continuous": "━"}
POLICY_NAMES = {"contiguous": "contiguous, Orca (Max)", "pow2": "Orca (Pow2)", "oracle": "Orca (Oracle)",
                "paged": "paged, vLLM"}


def time_binned_batch(run: BatchingRun, end_s: float, bins: int = SPARK_BINS) -> np.ndarray:
    """The run's effective batch averaged over each of ``bins`` equal spans of ``[0, end_s]`` (time-weighted:
    a step counts for the time it takes; idle time and time after the run count as batch 0), ``(bins,)``."""
    ends = np.asarray(run.step_end_s, dtype=float)
    starts = ends - np.asarray(run.step_time_s, dtype=float)
    area = np.cumsum(np.asarray(run.step_batch, dtype=float) * np.asarray(run.step_time_s, dtype=float))
    before = np.concatenate([[0.0], area[:-1]])
    t = np.empty(2 * len(ends))
    c = np.empty(2 * len(ends))
    t[0::2], t[1::2] = starts, ends
    c[0::2], c[1::2] = before, area
    edges = np.linspace(0.0, end_s, bins + 1)
    covered = np.interp(edges, np.concatenate([[0.0], t]), np.concatenate([[0.0], c]))
    return np.diff(covered) / np.diff(edges)


def _polyline(values: np.ndarray, y_max: float, color: str, dash: str = "") -> str:
    n = len(values)
    xs = np.arange(n) * (SPARK_W - 40) / max(n - 1, 1) + 36
    ys = SPARK_H - 18 - np.asarray(values, dtype=float) / y_max * (SPARK_H - 28)
    points = " ".join(f"{x:.1f},{y:.1f}" for x, y in zip(xs, ys, strict=True))
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return f'<polyline fill="none" stroke="{color}" stroke-width="2"{dashed} points="{points}"/>'


def batch_sparkline(static: BatchingRun, continuous: BatchingRun) -> str:
    """Both runs' effective batch over time as one inline SVG (numbers only): the time axis to the slower run's
    end, the batch axis to the slots."""
    end = max(static.makespan_s, continuous.makespan_s)
    slots = max(static.slots, 1)
    lines = "".join(_polyline(time_binned_batch(run, end), slots, COLORS[run.policy], DASHES[run.policy])
                    for run in (static, continuous))
    base, top = SPARK_H - 18, 10
    return (f'<svg class="spark" viewBox="0 0 {SPARK_W} {SPARK_H}" width="100%" style="max-width:{SPARK_W}px" '
            'role="img" aria-label="effective batch over time, static and continuous">'
            f'<line x1="36" y1="{base}" x2="{SPARK_W - 4}" y2="{base}" stroke="#999"/>'
            f'<line x1="36" y1="{top}" x2="36" y2="{base}" stroke="#999"/>'
            f'<text x="32" y="{top + 8}" text-anchor="end" font-size="11">{slots:d}</text>'
            f'<text x="32" y="{base}" text-anchor="end" font-size="11">0</text>'
            f'<text x="36" y="{SPARK_H - 4}" font-size="11">0 s</text>'
            f'<text x="{SPARK_W - 4}" y="{SPARK_H - 4}" text-anchor="end" font-size="11">{end:,.0f} s</text>'
            f"{lines}</svg>")


def _section(title: str, body: str, anchor: str) -> str:
    return f'<section class="serving" data-section="{anchor}"><h3>{escape(title)}</h3>{body}</section>'


def batching_html(s: Scenario, mix: LengthMix, block: int) -> str:
    """Static against continuous batching of 1,000 requests of ``mix`` (a backlog, seed 0) in the slots that fit."""
    c = compare_batching(s, mix, 1000, 0)
    rows = []
    for run in (c.static, c.continuous):
        m = run.summary()
        rows.append(
            f'<tr data-policy="{run.policy}"><td class="k" style="white-space:nowrap">'
            f'<span style="color:{COLORS[run.policy]}">{GLYPHS[run.policy]}</span> '
            f"{run.policy}</td><td>{m['sustained_batch']:.2f}</td><td>{m['time_mean_batch']:.2f}</td>"
            f"<td>{fmt_sig(m['mean_intensity'])}</td>"
            f"<td>{fmt_rate(m['tokens_per_s'])}</td><td>{fmt_seconds(m['ttft_mean_s'])}</td>"
            f"<td>{fmt_seconds(m['tpot_mean_s'] or 0)}</td><td>{fmt_seconds(m['e2e_mean_s'])}</td></tr>")
    st, co = c.static.summary(), c.continuous.summary()
    caption = (
        f'<div class="caption" data-readout="batching">{len(c.requests):,} requests of {escape(c.mix.label)} '
        f"(seed {c.seed}, all waiting at t = 0{', in each lane' if c.table.lanes > 1 else ''}), {c.slots_text()}"
        + ("; a lane's step crosses every stage, and the tokens/s count every lane" if c.table.lanes > 1 else "")
        + ". "
        + (f"{c.at_max_len:,} of them reach the maximum length S = {c.max_len:,} (P + O = S): the mix's longer ones "
           "are cut to it. " if c.at_max_len else "")
        + "Static, request-level batching (a batch decodes until its longest output is done) against continuous, "
        "iteration-level batching (Orca: Yu et al., OSDI 2022, section 3.1: a finished sequence leaves and a "
        "waiting one joins at the next iteration). Article 000: \"static batching leaves the batch dimension "
        f'small whenever sequences finish at different times". Here static sustains {st["sustained_batch"]:.2f} '
        f'sequences a step, continuous {co["sustained_batch"]:.2f}: {co["tokens_per_s"] / st["tokens_per_s"]:.1f}× '
        "the tokens/s, which count the whole run: once no request waits, the batch drains (the batch over the run). "
        "Ceilings: each step is the lab's roofline time at its batch.</div>")
    # The batch over the whole run beside the sustained one: the tokens/s follow from it, the drain included (a
    # trial found 256 sustained beside tokens/s that 256 at the step time did not give).
    # The rates and times are ceilings, said over their columns (an engineer's trial read them as predictions) in
    # one heading that spans them: said in each heading, they squeezed the table past its box at 1280 px.
    head = ('<tr><th colspan="4"></th><th colspan="4" class="span-head">at the ceiling: each step the roofline\'s '
            "time</th></tr>"
            "<tr><th>policy</th><th>sustained batch</th><th>batch over the run</th><th>mean I (FLOP/byte)</th>"
            "<th>tokens/s</th><th>TTFT mean</th><th>TPOT mean</th><th>end-to-end mean</th></tr>")
    key = " ".join(f'<span style="color:{COLORS[p]}">{GLYPHS[p]}</span> {p}' for p in ("static", "continuous"))
    spark = ('<div class="caption">Effective batch over time (sequences emitting a token'
             + (" in one lane" if c.table.lanes > 1 else "") + f"; mean over each 1/{SPARK_BINS} of the time): "
             f"{key}</div>" + batch_sparkline(c.static, c.continuous))
    return _section("Continuous against static batching", caption + spark +
                    scroll_table(head + "".join(rows)), "batching")


def _waste_bar(reserved: float, used: float) -> str:
    used_pct = 100 * used / reserved if reserved else 0.0
    return (f'<div class="bar"><div style="width:{used_pct:.2f}%;background:{PALETTE["weights"]}">used</div>'
            f'<div style="width:{100 - used_pct:.2f}%;background:{PALETTE["reserve"]}">reserved, unused</div></div>')


def paging_html(s: Scenario, mix: LengthMix, block: int) -> str:
    """PagedAttention (blocks of ``block`` tokens) against contiguous allocation of ``mix``: reserved against used,
    waste, what fits; vLLM's figures beside the lab's own at the paper's 2,048-token maximum."""
    p = compare_paging(s, mix, 1000, 0, block)
    paper = compare_paging(s, mix, 1000, 0, block, max_len=PAPER_MAX_LEN)
    rows = []
    for k in POLICIES:
        a = p.allocations[k]
        tps = p.tokens_per_s[k]
        rows.append(
            f'<div class="row-label" data-policy="{k}"><b>{escape(POLICY_NAMES[k])}</b>: reserves '
            f"{a.reserved_per_sequence:,.0f} tokens per sequence for {a.used_per_sequence:,.0f} used, waste "
            f"<b>{100 * a.waste_fraction:.1f} %</b>; {fmt_count(p.fit[k])} fit, batch {p.batch[k]}, "
            + (f"{s.catalogue.model(s.model).approximate_mark}{fmt_rate(tps)} tokens/s ceiling"
               + (f" on {p.result.gpus_per_replica:,} GPUs" if p.result.gpus_per_replica > 1 else "")
               if tps else "no batch") + "</div>"
            + _waste_bar(a.reserved_per_sequence, a.used_per_sequence))
    lo, hi = EXISTING_WASTE
    cont, paged = paper.allocations["contiguous"].waste_fraction, paper.allocations["paged"].waste_fraction
    inside = lo <= cont <= hi and paged < PAGED_WASTE_BELOW
    caption = (
        f'<div class="caption" data-readout="paging">KV cache per running sequence over every decode step of '
        f"{escape(p.mix.label)}; maximum length {p.max_len:,}, blocks of {p.block_size} tokens; "
        f"{escape(p.free_words())}. Kwon et al., SOSP 2023 (vLLM; blog.vllm.ai/2023/06/20/"
        f"vllm.html): existing systems waste {100 * lo:.0f}–{100 * hi:.0f} % of KV memory, paging under "
        f"{100 * PAGED_WASTE_BELOW:.0f} %. The lab's own at the paper's {PAPER_MAX_LEN:,}-token maximum: contiguous "
        f"<b>{100 * cont:.1f} %</b>, paged <b>{100 * paged:.1f} %</b>"
        + (" — inside the paper's range" if inside else " — outside the paper's range") +
        f"; at S = {p.max_len:,} here, {100 * p.allocations['contiguous'].waste_fraction:.1f} % against "
        f"{100 * p.allocations['paged'].waste_fraction:.1f} %. External fragmentation is not modelled.</div>")
    return _section("PagedAttention: KV reserved against used", caption + "".join(rows), "paging")


def _mini_roofline(points: list[tuple[str, float, str]], ridge: float) -> str:
    """A log-x strip from 1 to 100,000 FLOP/byte with the ridge and one tick per pool (numbers and fixed
    names only).  A name that would overlap the one before it on its row goes on the row above (an engineer's
    trial read "colocatprefill" where the two pools sat at 279 and 532 FLOP/byte)."""
    w, h, x0, x1, axis = 480, 70, 16, 440, 32

    def x(i: float) -> float:
        return x0 + (np.log10(max(min(i, 1e5), 1.0)) / 5) * (x1 - x0)

    ticks = "".join(f'<line x1="{x(10 ** d):.1f}" y1="{axis}" x2="{x(10 ** d):.1f}" y2="{axis + 6}" stroke="#999"/>'
                    f'<text x="{x(10 ** d):.1f}" y="{axis + 18}" text-anchor="middle" font-size="10">{10 ** d:,}'
                    "</text>" for d in range(6))
    ends: list[float] = []  # the right end of the last name on each row, bottom row first
    marks = []
    for name, i, color in sorted(points, key=lambda p: p[1]):
        half = 3.3 * len(name) + 3  # about half the name's width at 11 px, and a gap
        row = next((k for k, end in enumerate(ends) if x(i) - half >= end), len(ends))
        if row == len(ends):
            ends.append(0.0)
        ends[row] = x(i) + half
        marks.append(f'<circle cx="{x(i):.1f}" cy="{axis}" r="5" fill="{color}"/>'
                     f'<text x="{x(i):.1f}" y="{axis - 10 - 12 * row}" text-anchor="middle" font-size="11">{name}'
                     "</text>")
    return (f'<svg class="strip" viewBox="0 {-12 * max(len(ends) - 2, 0)} {w} {h + 12 * max(len(ends) - 2, 0)}" '
            f'width="100%" style="max-width:{w}px" role="img" aria-label="each pool\'s intensity against the ridge '
            f'point"><line x1="{x0}" y1="{axis}" x2="{x1}" y2="{axis}" stroke="#999"/>{ticks}'
            f'<line x1="{x(ridge):.1f}" y1="{axis - 16}" x2="{x(ridge):.1f}" y2="{axis + 24}" '
            f'stroke="{PALETTE["roof"]}" stroke-dasharray="4 3"/><text x="{x(ridge):.1f}" y="{axis + 34}" '
            f'text-anchor="middle" font-size="10">ridge {ridge:,.0f}</text>{"".join(marks)}</svg>')


def pools_html(s: Scenario, mix: LengthMix, block: int) -> str:
    """Prefill and decode pools against one colocated pool at :data:`core.disaggregation.RATE` requests/s."""
    d = plan_pools(s, RATE, int(s.prompt_len), OUTPUT_LEN)
    rows = []
    for pool in (d.prefill, d.decode, d.colocated):
        gpus = "cannot meet the targets" if pool.gpus is None else fmt_count(pool.gpus)
        rows.append(
            f'<tr data-pool="{pool.name}"><td class="k">{pool.name}</td><td>{pool.rate_per_instance:.3f}</td>'
            f"<td>{pool.goodput_per_gpu:.3f}</td><td>{gpus}</td><td>{'' if pool.batch is None else pool.batch}</td>"
            f"<td>{fmt_sig(pool.intensity)}</td></tr>")
    verdict = d.verdict()
    caption = (
        f'<div class="caption" data-readout="pools">DistServe (Zhong et al., OSDI 2024): prefill and decode on '
        f"pools of their own, each sized against its target. {d.rate:g} req/s of P = {d.prompt_len:,} prompt and "
        f"O = {d.output_len:,} output tokens; targets TTFT {d.ttft_target_s:g} s and TPOT "
        f"{1e3 * d.tpot_target_s:g} ms (MLPerf Inference llama2-70b Server; means here, p99 there). Prefill's "
        "M/D/1 queue (section 3.1, eq. 1), decode by Little's law, colocated with prefills pausing decode. "
        + (f"With PP = {d.pp}, a stage takes the next prompt after 1/{d.pp} of one prompt's prefill, and {d.pp} "
           "micro-batches of B decode at once. " if d.pp > 1 else "")
        + (f"With EP = {d.ep}, each of the {d.ep} groups serves its own requests and its own B. " if d.ep > 1 else "")
        + f"<b>{verdict}</b>. Prefill sits above the ridge ({fmt_sig(d.ridge_point)} FLOP/byte), decode below: "
        "colocated, they average. The KV transfer between pools is not counted.</div>")
    head = ("<tr><th>pool</th><th>req/s per instance</th><th>req/s per GPU</th><th>GPUs</th><th>batch</th>"
            "<th>I (FLOP/byte)</th></tr>")
    strip = _mini_roofline([("prefill", d.prefill.intensity, PALETTE["workload"]),
                            ("decode", d.decode.intensity, PALETTE["ladder"]),
                            ("colocated", d.colocated.intensity, PALETTE["reserve"])], d.ridge_point)
    return _section("Prefill/decode disaggregation",
                    caption + scroll_table(head + "".join(rows))
                    + '<div class="caption">Each pool\'s intensity against the ridge (dashed), FLOP/byte:</div>'
                    + strip, "pools")


def ring_html(s: Scenario, mix: LengthMix, block: int, note: str = "") -> str:
    """Ring Attention over N hosts of ``s`` (:func:`core.context_parallel.ring_host`) for its context S: the largest
    context and where the transfer hides; ``note`` says where the host is not the scenario's split."""
    ring = ring_attention(s, HOSTS, context=int(s.context))
    rows = []
    for i, n in enumerate(ring.hosts):
        transfer = "—" if ring.transfer_time_s is None else fmt_seconds(float(ring.transfer_time_s[i]))
        hidden = "hidden" if ring.hidden[i] else "exposed"
        rows.append(f'<tr data-hosts="{int(n)}" class="{"" if ring.hidden[i] else "over"}"><td>{int(n)}</td>'
                    f"<td>{int(ring.max_context[i]):,}</td><td>{escape(ring.block_text(i))}</td>"
                    f"<td>{fmt_seconds(float(ring.compute_time_s[i]))}</td><td>{transfer}</td>"
                    f'<td class="{"" if ring.hidden[i] else "over"}">{hidden}</td></tr>')
    if ring.min_block is None:
        condition = "The catalogue gives this GPU no link bandwidth: the overlap is not evaluated."
    else:
        condition = (
            f"The transfer of a block of c tokens hides under its attention while c ≥ c_min = (P_peak / link) · "
            f"KV bytes per token / attention FLOP per key = ({fmt_sig(ring.peak_flop_per_s / 1e12)} TFLOP/s, "
            "the BF16 roof attention runs at, / "
            f"{fmt_sig(ring.link_bandwidth / GB)} GB/s) × {ring.kv_bytes_per_token:,.0f} bytes / "
            f"{ring.attention_flop_per_key:,.0f} FLOP = <b>{ring.min_block:,.0f} tokens</b>: at S = "
            + (f"{ring.context:,} it stops hiding past N = {ring.hosts_hidden:,} hosts (S/N &lt; c_min)."
               if ring.hosts_hidden else f"{ring.context:,} it hides at no N (S &lt; c_min).")
            + " In decode a host "
            f"has one query token and the transfer {'hides' if ring.decode_hides else 'never hides'}: the ring pays "
            "off in prefill.")
    caption = (
        f'<div class="caption" data-readout="ring">Ring Attention (Liu, Zaharia &amp; Abbeel, arXiv:2310.01889, '
        f"section 3): one sequence of S tokens in N blocks, one per host (a host is {ring.gpus_per_host} GPU(s), "
        f"the scenario's model copy), each passing its K/V block around a ring while it attends to the one it holds. "
        # The largest context's formula, with its numbers (a trial divided the free memory by the KV per token and
        # found 73,993 beside the table's 73,080: the incoming block's layer was not said).
        f"Largest context = N × free memory / (KV bytes per token × (1 + 1/L)): a GPU holds its S/N tokens' K/V and "
        f"one of the L = {ring.kv_layers} layers' block arriving from its neighbour (the layers with KV on the GPU"
        f"{', of its pipeline stage' if s.pp > 1 else ''}); at N = 1, "
        f"{ring.free_bytes:,.0f} bytes / ({ring.kv_bytes_per_token:,.0f} × (1 + 1/{ring.kv_layers})) = "
        f"{int(ring.free_bytes / (ring.kv_bytes_per_token * (1 + 1 / ring.kv_layers))):,} tokens. "
        f"{condition} Causal masking's imbalance is not modelled.{(' ' + escape(note)) if note else ''}</div>")
    # Which S each column is at (a teacher's trial read the largest context, which grows with N, beside the blocks of
    # the scenario's S as one row of one context).
    head = ("<tr><th>hosts N</th><th>largest context N hosts hold (tokens)</th>"
            f"<th>block S/N at S = {ring.context:,}</th><th>block compute</th>"
            "<th>block transfer</th><th>transfer</th></tr>")
    return _section("Context parallelism: Ring Attention",
                    caption + scroll_table(head + "".join(rows)), "ring")


def zero_html(s: Scenario, mix: LengthMix, block: int) -> str:
    """ZeRO's stages 0-3 per GPU for the scenario's model at :data:`core.training_memory.DATA_PARALLEL`, and the
    pipeline bubble at :data:`core.training_memory.PIPELINE_STAGES` stages."""
    r = s.evaluate()
    stages = zero_stages(r.model, DATA_PARALLEL)
    capacity = r.capacity_bytes
    rows = []
    for z in stages:
        over = z.total_bytes > capacity
        rows.append(f'<tr data-stage="{z.stage}"><td>{z.stage}</td><td>{z.weight_bytes / GB:,.2f}</td>'
                    f"<td>{z.gradient_bytes / GB:,.2f}</td><td>{z.optimizer_bytes / GB:,.2f}</td>"
                    f'<td class="{"over" if over else ""}">{z.total_bytes / GB:,.2f}</td><td>{z.reduction:,.2f}×</td>'
                    f"<td>{z.communication_factor:g}×</td></tr>")
    bubble = np.atleast_1d(pipeline_bubble(PIPELINE_STAGES, np.asarray(MICROBATCHES)))
    bars = "".join(
        f'<div class="row-label" data-microbatches="{m}">M = {m}: bubble {100 * b:.1f} %</div>'
        f'<div class="bar"><div style="width:{100 * b:.2f}%;background:{PALETTE["reserve"]}"></div></div>'
        for m, b in zip(MICROBATCHES, bubble, strict=True))
    caption = (
        f'<div class="caption" data-readout="zero">Article 004, section 07: ZeRO / FSDP splits "optimizer state, '
        f'gradients, then parameters" — "4×, 8×, then N_d× memory reduction by stage; stage 3 adds about 50% '
        f'communication volume. A training-side answer." {escape(r.model.name)} (Ψ = {stages[0].n_params / 1e9:,.2f}'
        f"B) over N_d = {DATA_PARALLEL} GPUs, mixed-precision Adam (2 + 2 + 12 bytes per parameter; Rajbhandari et "
        f"al., SC 2020, section 3.1), GB (10^9 bytes) per GPU; red: over one {escape(r.gpu.name)}'s "
        f"{capacity / GiB:,.1f} GiB ({capacity / GB:,.1f} GB), before activations. "
        f"{escape(limits_text(DATA_PARALLEL))}</div>")
    head = ("<tr><th>stage</th><th>weights</th><th>gradients</th><th>optimizer</th><th>total per GPU</th>"
            "<th>less than stage 0</th><th>communication</th></tr>")
    pipe = (f'<div class="caption" data-readout="bubble">Pipeline bubble (P − 1)/(M + P − 1) for P = '
            f"{PIPELINE_STAGES} stages (GPipe, Huang et al. 2019): the idle share of a pass falls as micro-batches M "
            "grow.</div>" + bars)
    return _section("Training memory: ZeRO stages and the pipeline bubble",
                    caption + scroll_table(head + "".join(rows)) + pipe,
                    "zero")


#: The sections in order, with the title a section that cannot be computed shows its reason under.
SECTIONS: tuple[tuple[str, Callable[[Scenario, LengthMix, int], str]], ...] = (
    ("Continuous against static batching", batching_html), ("PagedAttention", paging_html),
    ("Prefill/decode disaggregation", pools_html), ("Ring Attention", ring_html), ("ZeRO", zero_html))


def serving_system_html(state: LabState) -> str:
    """The Serving tab for the session's scenario (on the smallest split that fits), its request mix and block; a
    section whose model refuses the scenario says why instead.  Shared between sessions for a scenario of the
    shipped catalogue (:func:`app.ladder_view.shipped`; :data:`app.ladder_view.SHARED_CLIMBS` kept)."""
    start, note = ladder_start(state.scenario)
    # Ring Attention's host holds the weights, not the whole context (core.context_parallel.ring_host): the ladder's
    # start, grown until one split held B sequences of S, would leave the ring nothing to split.
    host, host_note = ring_host(state.scenario)
    if shipped(start) and shipped(host):
        return _shared_html(tuple(sorted(start.levers().items())), note, state.mix, state.block_size,
                            tuple(sorted(host.levers().items())), host_note)
    return _sections_html(start, note, state.mix, state.block_size, host, host_note)


@lru_cache(maxsize=SHARED_CLIMBS)
def _shared_html(levers: tuple, note: str, mix: str, block_size: int, host_levers: tuple, host_note: str) -> str:
    return _sections_html(Scenario(**dict(levers)), note, mix, block_size, Scenario(**dict(host_levers)), host_note)


def _sections_html(start: Scenario, note: str, mix: str, block_size: int, host: Scenario, host_note: str) -> str:
    parts = [f'<div class="caption"><b>{escape(note)}</b></div>'] if note else []
    for title, section in SECTIONS:
        try:
            parts.append(ring_html(host, MIXES[mix], block_size, host_note) if section is ring_html
                         else section(start, MIXES[mix], block_size))
        except ValueError as exc:
            parts.append(f'<div class="caption" data-refused="{escape(section.__name__)}"><b>{escape(title)}</b>: '
                         f"{escape(str(exc))}</div>")
    return "".join(parts)


class ServingSystemView(pn.viewable.Viewer):
    """The Serving tab: the mix and block inputs above :func:`serving_system_html`, recomputed while it is open."""

    state = param.ClassSelector(class_=LabState, doc="The session state it follows.")

    def __init__(self, **params):
        super().__init__(**params)
        self.inputs = serving_inputs(self.state)
        self.html = TabHTMLView(serving_system_html, state=self.state, tab="Serving")
        self.state.param.watch(lambda _e: self.html._refresh(), ["mix", "block_size"])
        self.layout = pn.Column(self.inputs, self.html, sizing_mode="stretch_width")

    def __panel__(self):
        return self.layout

    @property
    def pane(self) -> pn.pane.HTML:
        return self.html.pane
