"""'What was read': the layer stack as a strip of layers coloured by kind, with counts.

A pure function of :meth:`core.layers.LayerStack.summary` (runs of equal
layers in order); every text it writes is escaped.  Colours are the
Okabe–Ito palette (colour-blind safe: Okabe & Ito 2008, "Color Universal
Design"), and every kind also has its own letter, so the strip reads
without colour too.  Kinds past the palette's eight colours mix two of them:
attention beside Mamba-2 (a parallel hybrid) is half full-attention blue,
half Mamba vermillion; sparse attention is the blue striped with black.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from core.layers import LayerStack

#: Attention/mixer kind → (letter, Okabe–Ito colour, text colour, words).
KIND_STYLE = {
    "full": ("F", "#0072B2", "#ffffff", "full attention"),
    "sliding": ("W", "#56B4E9", "#000000", "sliding-window attention"),
    "chunked": ("C", "#009E73", "#ffffff", "chunked attention"),
    "shared_kv": ("R", "#CC79A7", "#000000", "attention reusing an earlier layer's KV cache"),
    "sparse": ("S", "repeating-linear-gradient(45deg,#0072B2 0 5px,#000000 5px 7px)", "#ffffff",
               "sparse attention (top-k keys; the indexer's own key cache)"),
    "cross": ("X", "#000000", "#ffffff", "cross-attention to the image (K/V fixed per image)"),
    "parallel": ("H", "linear-gradient(90deg,#0072B2 50%,#D55E00 50%)", "#ffffff",
                 "attention ∥ Mamba-2 (KV cache and a fixed state)"),
    "linear": ("L", "#E69F00", "#000000", "linear attention (fixed state)"),
    "mamba": ("M", "#D55E00", "#ffffff", "Mamba (fixed state)"),
    "none": ("P", "#F0E442", "#000000", "MLP only"),
}
#: MLP kind → mark after the letter.
MLP_MARK = {"moe": "E", "gated": "", "plain": "", "squared_relu": "", "none": ""}


def layer_strip_html(stack: LayerStack | Sequence[dict]) -> str:
    """The stack as an HTML strip: one segment per run of equal layers, width ∝ its layers.

    Args:
        stack: a :class:`core.layers.LayerStack`, or its :meth:`~core.layers.LayerStack.summary` rows
            (``first``, ``count``, ``attention``, ``mlp``, ``label``).

    Returns:
        ``<div class="layer-strip">`` with the segments (letter, ``×count``, a title naming the layers
        and their kind) and a legend of the kinds present with their layer counts; ``E`` after a letter
        marks mixture-of-experts MLPs.
    """
    rows = stack.summary() if isinstance(stack, LayerStack) else list(stack)
    total = sum(int(r["count"]) for r in rows) or 1
    segments, counts = [], {}
    for r in rows:
        kind = r["attention"] if r["attention"] in KIND_STYLE else "full"
        letter, colour, ink, _ = KIND_STYLE[kind]
        mark = letter + MLP_MARK.get(r["mlp"], "")
        n, first = int(r["count"]), int(r["first"])
        span = f"layer {first}" if n == 1 else f"layers {first}–{first + n - 1}"
        title = escape(f"{span}: {r['label']}", quote=True)
        segments.append(
            f'<span class="layer-run" data-kind="{escape(kind, quote=True)}" title="{title}" '
            f'style="flex:{n} 1 0;background:{colour};color:{ink};min-width:1.6em;text-align:center;'
            f'font:11px/1.8 monospace;overflow:hidden;white-space:nowrap;border-right:1px solid #fff">'
            f"{escape(mark)}{'×' + str(n) if n > 1 else ''}</span>")
        key = (kind, r["mlp"] == "moe")
        counts[key] = counts.get(key, 0) + n
    legend = "".join(
        f'<span style="margin-right:1em"><span style="display:inline-block;width:1.6em;text-align:center;'
        f'background:{KIND_STYLE[k][1]};color:{KIND_STYLE[k][2]};font:11px/1.6 monospace">'
        f"{escape(KIND_STYLE[k][0] + ('E' if moe else ''))}</span> {n} × {escape(KIND_STYLE[k][3])}"
        f"{' + MoE' if moe else ''}</span>"
        for (k, moe), n in counts.items())
    return (f'<div class="layer-strip" data-layers="{total}">'
            # Rows of runs that wrap inside the column: 32 runs of one layer each (Jamba) at their 1.6-em minimum
            # are wider than the column and ran into the Readouts beside it.
            f'<div style="display:flex;flex-wrap:wrap;width:100%;max-width:100%;box-sizing:border-box;'
            f'border:1px solid #888" role="img" '
            f'aria-label="{escape(_aria(counts), quote=True)}">{"".join(segments)}</div>'
            f'<div style="font-size:12px;margin-top:4px">{legend}</div></div>')


def _aria(counts: dict) -> str:
    return "layers: " + ", ".join(f"{n} {KIND_STYLE[k][3]}{' with MoE' if moe else ''}"
                                  for (k, moe), n in counts.items())
