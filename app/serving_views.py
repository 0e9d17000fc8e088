"""Serving views drawn as HTML tables and bars: per-step traffic, the KV-cache
table and speculation that pays.  Each is one HTML element per session (no
Bokeh models), recomputed from the session's result only while its tab is open
(:class:`TabHTMLView`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from html import escape

import panel as pn
import param

from core.batching import MIXES
from core.precision import get_precision
from core.scenario import ScenarioResult
from core.serving import TABLE_CONTEXTS, TABLE_USERS, kv_table_per_gpu, traffic_by_context
from core.sweeps import speculation_sweep
from core.units import GB, GiB, fmt_count, fmt_seconds, fmt_sig, sum_digits

from .controls import number_box
from .present import INPUT_TEXT_CSS
from .readouts import approximate_html
from .state import TABS, LabState
from .style import PALETTE, STYLESHEET, scroll_table


class TabHTMLView(pn.viewable.Viewer):
    """An HTML view of one tab: ``render(state)`` is recomputed on each new result while the tab is open.

    Args:
        render: the session state -> HTML.
        follow: further :class:`LabState` parameters whose change redraws it (e.g. ``("expected", "measured")``).
    """

    state = param.ClassSelector(class_=LabState, doc="The session state it follows.")
    tab = param.Selector(objects=list(TABS), doc="The tab that shows this view.")

    def __init__(self, render: Callable[[LabState], str], follow: tuple[str, ...] = (), **params):
        super().__init__(**params)
        self._render = render
        if follow:
            self.state.param.watch(lambda *_: self._refresh(), list(follow))
        self.pane = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width")
        self._refresh()
        self._on_present()

    def __panel__(self):
        return self.pane

    @param.depends("state.result", "state.tab", watch=True)
    def _refresh(self) -> None:
        if self.state.tab == self.tab:
            self.pane.object = self._render(self.state)

    @param.depends("state.present", watch=True)
    def _on_present(self) -> None:
        """Present mode: the caption and the table at 18 px (app/lab.css ``.present``)."""
        self.pane.css_classes = ["present"] if self.state.present else []


TRAFFIC_CONTEXTS = (2048, 8192, 32768, 131072)


def traffic_html(r: ScenarioResult) -> str:
    """Stacked weights-vs-KV bars per decode step: the current context, then 2k/8k/32k/128k."""
    contexts = sorted({r.context, *TRAFFIC_CONTEXTS}) if r.phase == "decode" else [r.context]
    t = traffic_by_context(r.model, r.weight_bytes_read, r.batch, contexts, r.kv_bytes_per_element, r.gqa,
                           r.deployment.profile, r.slowest_stage)
    bars = []
    kv_word = "KV + state" if r.state_bytes_per_sequence else "KV"  # a hybrid's recurrent state, read every step
    # What the batch holds at each S beside what its GPU has left, as the KV table and the memory bar count it: a
    # row past capacity says so (a teacher's trial: 224 GiB of cache at S = 32k read as a step that runs).
    held, room = kv_table_per_gpu(r.deployment.profile, t.context, [r.batch], r.kv_bytes_per_element, r.gqa)
    for s, kv, share, hold, left in zip(t.context, t.kv_bytes, t.kv_share, held[:, 0], room, strict=True):
        # Each bar is the whole step (100 %): the split, not the size, is the lesson.
        total = t.weight_bytes + kv
        w_pct, kv_pct = 100 * (1 - share), 100 * share
        mark = " ← current S" if s == r.context else ""
        # With as many decimals as make the two parts add to the total as printed (7.7 + 0.2 beside 8.0 did not);
        # a part that would print as 0 takes two significant digits (a 1B model's 17.8 MB of cache read "KV 0.0 GB").
        parts = [t.weight_bytes / GB, kv / GB]
        d = sum_digits(parts)
        smaller = min((x for x in parts if x > 0), default=0)
        if 0 < smaller < 0.5 * 10 ** -d:
            d = sum_digits(parts, digits=min(5, 1 - math.floor(math.log10(smaller))))
        bars.append(
            f'<div class="row-label" data-context="{s}"><b>S = {s:,}</b>{mark}: {total / GB:,.{d}f} GB per step, '
            f"{kv_word} {100 * share:.0f} % (weights {t.weight_bytes / GB:,.{d}f} GB, {kv_word} {kv / GB:,.{d}f} GB "
            f"= {kv / GiB:,.{d}f} GiB)"
            + (' <span class="nofit" data-fits="no">does not fit: '
               + (f"B = {r.batch:,} would hold {hold / GiB:,.1f} GiB of cache per GPU, {left / GiB:,.1f} GiB free"
                  if left > 0 else "the weights and reserve alone fill the GPU") + "</span>" if hold > left else "")
            + "</div>"
            f'<div class="bar"><div style="width:{w_pct:.2f}%;background:{PALETTE["weights"]}">weights '
            f'{w_pct:.0f} %</div><div style="width:{kv_pct:.2f}%;background:{PALETTE["kv_cache"]}">'
            f"{'KV cache + state' if r.state_bytes_per_sequence else 'KV cache'} {kv_pct:.0f} %</div></div>"
        )
    dominant = "the KV cache" if r.kv_traffic_bytes > r.weight_bytes_read else "the weights"
    per_gpu = f" of one GPU (of {r.gpus_per_replica})" if r.gpus_per_replica > 1 else ""
    head = (
        f'<div class="caption" data-readout="traffic">Per {r.phase} step{per_gpu} at batch B = {r.batch}: '
        f"{dominant} dominate{'s' if dominant == 'the KV cache' else ''} at S = {r.context:,}. Weight traffic is "
        "read once per step whatever the batch; the cache grows with B × S and does not amortise."
        # Split over GPUs the step also waits on its links: bytes over NVLink, not HBM (a trial divided the step
        # time by the HBM bandwidth and found 3.2 GB more than the bars).
        + (f" The step also spends {fmt_seconds(r.communication_time_s)} on communication between GPUs, bytes sent "
           "over the link rather than read from HBM: not in these bars (Show your work: step time)."
           if r.communication_time_s > 0 else "")
        + "</div>"
    )
    return approximate_html(r.model, "traffic-approximate") + head + "".join(bars)


def _state_kinds(model, bytes_per_element: float, gqa: bool) -> str:
    """What a model's fixed per-sequence state is, in the cache terms' words ("Mamba state", "image K/V")."""
    return ", ".join(dict.fromkeys(t.what for t in model.kv_terms(bytes_per_element, gqa) if t.fixed_bytes))


#: What a KV-table cell over the free memory carries besides its colour: a mark, and the words a screen reader says.
OVER_MARK = ' <span aria-hidden="true">✕</span><span class="visually-hidden">, does not fit</span>'


def kv_table_html(r: ScenarioResult) -> str:
    """KV-cache GiB for contexts 1k-128k × users 1-64; cells over the free memory marked."""
    gqa = r.gqa
    kv_label = get_precision(r.kv_dtype).label
    # What a sequence holds, as the memory bar counts it: the KV cache and any fixed state (a hybrid's recurrent
    # state, a cross-attention layer's image K/V), one GPU's when split.
    table, room = kv_table_per_gpu(r.deployment.profile, TABLE_CONTEXTS, TABLE_USERS, r.kv_bytes_per_element, gqa)
    state = r.model.state_bytes_per_sequence(r.kv_bytes_per_element, gqa)
    split = (f" per GPU (TP = {r.tp}: {r.kv_heads_per_gpu} KV head{'s' if r.kv_heads_per_gpu > 1 else ''} and "
             f"{r.layers_per_gpu} of {r.model.n_layers} layers each"
             + (f", {r.pp} micro-batches in flight" if r.pp > 1 else "") + ")") if r.gpus_per_replica > 1 else ""
    share = f" × {fmt_sig(r.kv_share_per_gpu * r.pp)} (one GPU's share)" if r.gpus_per_replica > 1 else ""
    free = r.free_for_kv_bytes
    head = "".join(f"<th>{u} user{'s' if u > 1 else ''}</th>" for u in TABLE_USERS)
    body = []
    for s, row, left in zip(TABLE_CONTEXTS, table, room, strict=True):
        # A cell over the memory says so in a mark and in words, not in its colour alone (an accessibility audit:
        # in forced colours every cell looked alike, and a screen reader heard no difference).
        cells = "".join(
            f'<td class="{"over" if b > left else ""}" data-ctx="{s}" data-users="{u}">{b / GiB:,.1f}'
            + (OVER_MARK if b > left else "") + "</td>"
            for u, b in zip(TABLE_USERS, row, strict=True)
        )
        body.append(f"<tr><th>{fmt_count(s)}</th>{cells}</tr>")  # S as the sliders and the titles write it
    note = (
        f'<div class="caption" data-readout="kv-table">{"KV cache and fixed state" if state else "KV cache"} of '
        f"{escape(r.model.name)}{split} in GiB (2^30 bytes), "
        f"KV cache in {kv_label}{'' if gqa else ', GQA off: every query head keeps its own K and V'}: per token "
        f"{escape(r.model.kv_formula(r.kv_bytes_per_element, gqa))} = {r.kv_bytes_per_token / 1024:,.0f} KiB, "
        f"× S × users{share}; {escape(r.model.attention_pattern())}. "
        + (f"Each cell also holds the {state / GiB:,.3f} GiB of fixed state every sequence keeps whatever S ("
           f"{escape(_state_kinds(r.model, r.kv_bytes_per_element, gqa))})"
           f"{', at its share per GPU' if r.gpus_per_replica > 1 else ''}, as the memory bar counts it. "
           if state else "")
        + (f"Every cell is red (✕): on {escape(r.gpu.name)} the weights and reserve alone exceed its "
           f"{r.capacity_bytes / GiB:,.1f} GiB by {r.weights_shortfall_bytes / GiB:,.1f} GiB, so no KV cache "
           "fits (the memory bar names a split that fits).</div>" if r.weights_shortfall_bytes > 0 else
           f"Red cells (✕) exceed the {max(free, 0) / GiB:,.1f} GiB left on {escape(r.gpu.name)} after the weights and "
           "reserve.</div>")
    )
    return (approximate_html(r.model, "kv-table-approximate") + note
            + scroll_table(f"<tr><th>context S</th>{head}</tr>" + "".join(body), "lab sticky-first"))


SPEC_DEPTHS = tuple(range(1, 9))


def _verify_reads_more(r: ScenarioResult) -> str:
    """What a verify of k tokens costs beyond a plain step while memory-bound, for this model and split (a trial's
    Qwen3-30B-A3B: "the speedup is E" beside 1.36× at E = 1.70; its k tokens touch more experts)."""
    more = [what for what, on in (("an MoE's k tokens touch more experts, whose weights it reads too", r.model.moe),
                                  ("each all-reduce between the GPUs carries k tokens' activations",
                                   r.gpus_per_replica > 1)) if on]
    return f"below E where the verify moves more than a plain step ({'; '.join(more)}); " if more else ""


def _where_it_stops(state: LabState, sweep: dict) -> str:
    """Where this table's depths stop paying, or that none does at this batch; and a workload that does not fit (a
    teacher's trial: at B = 1 the speedup rose to 3.14× at k = 8, and a student concluded speculation always pays)."""
    r = state.result
    memory_bound = all(b == "memory" for b in sweep["bound"])
    clauses = [text for text, on in (
        ("this workload does not fit in memory (the memory bar): every rate here is what it would deliver if it fit",
         not r.fits),
        ("every depth here stays memory-bound, so the speedup keeps rising with k (raise the batch to see the pass "
         "reach the ridge and depth stop paying)", memory_bound)) if on]
    said = f"At B = {r.batch:,}, {'; '.join(clauses)}. " if clauses else ""
    if memory_bound:
        return said
    best = max(range(len(sweep["k"])), key=lambda i: sweep["speedup"][i])
    return said + f"Here it pays most at k = {sweep['k'][best]} ({sweep['speedup'][best]:.2f}×). "


def speculation_html(state: LabState) -> str:
    """Speculation at depths 1-8 (and the current one) for the current batch, context and acceptance α."""
    levers = state.scenario.levers()
    sweep = speculation_sweep(state.scenario, sorted({*SPEC_DEPTHS, levers["spec_k"]}))
    ridge = state.result.ridge_point
    mark = state.result.model.approximate_mark  # ≈ beside each number where the model has a key not modelled
    rows = []
    for i, k in enumerate(sweep["k"]):
        current = ' class="current"' if k == levers["spec_k"] else ""
        rows.append(
            f"<tr{current}><td>{k}</td><td>{fmt_sig(sweep['intensity_with_kv'][i])}</td>"
            f"<td>{sweep['bound'][i]}</td><td>{fmt_sig(sweep['intensity_weights'][i])}</td>"
            f"<td>{sweep['expected_tokens'][i]:.2f}</td>"
            f"<td>{mark}{sweep['step_time_s_with_kv'][i] * 1e3:,.2f}</td>"
            f"<td>{mark}{sweep['tokens_per_s_with_kv'][i]:,.0f}</td>"
            f"<td>{sweep['speedup'][i]:.2f}×</td></tr>"
        )
    caption = (
        f'<div class="caption" data-readout="speculation">At acceptance α = {levers["acceptance"]:.2f}, a verify pass '
        "of depth k (k − 1 draft tokens plus the target's own) yields E = (1 − α^k) / (1 − α) tokens on average "
        "(Leviathan et al. 2023). While decode is memory-bound the verify pass costs about what a plain step does, "
        "so k raises intensity for free and the speedup approaches E; "
        + _verify_reads_more(state.result)
        + "once the pass turns compute-bound, or α is low, extra depth stops paying. "
        + _where_it_stops(state, sweep)
        + "The pass is compute-bound once its intensity counting KV reads (the cache is read "
        f"every step and does not amortise) reaches the ridge point, {fmt_sig(ridge)} FLOP/byte on this GPU; the "
        "intensity on the weights alone (2·B·k/p for a dense model) leaves the cache out and passes the ridge sooner. "
        "The draft model's own cost is not counted.</div>"
    )
    head = ("<tr><th>k</th><th>I counting KV reads (FLOP/byte)</th><th>bound</th>"
            "<th>I, weights alone (FLOP/byte)</th><th>E tokens / verify</th><th>verify step ceiling (ms)</th>"
            "<th>tokens/s ceiling</th><th>speedup vs k = 1</th></tr>")
    return (approximate_html(state.result.model, "speculation-approximate") + caption
            + scroll_table(head + "".join(rows), "lab sticky-first"))


#: The request mixes' names on their buttons, short enough for a phone's width (the note beside says what they are).
MIX_LABELS = {"ShareGPT": "sharegpt", "fixed": "fixed", "uniform": "uniform"}


def serving_inputs(state: LabState) -> pn.Row:
    """The request mix and PagedAttention's block, bound to the session state (one pair per tab, kept in step)."""
    mix = pn.widgets.RadioButtonGroup.from_param(state.param.mix, options=MIX_LABELS, label="Request mix",
                                                 css_classes=["serving-mix"])
    block = number_box(state, "block_size", label="Block (tokens)", width=120, css_classes=["serving-block"],
                       stylesheets=[INPUT_TEXT_CSS])
    note = pn.pane.HTML(f'<div class="caption">{escape(MIXES["sharegpt"].source)}, a long tail; fixed: every '
                        "request at its means; uniform: from 1 token to twice them.</div>", margin=(0, 10),
                        # on a line of its own where less than 320 px is left beside the controls, not squeezed
                        sizing_mode="stretch_width", styles={"flex": "1 1 320px"})
    return pn.Row(mix, block, note, sizing_mode="stretch_width", styles={"flex-wrap": "wrap", "align-items": "end"})
