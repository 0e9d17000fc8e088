"""'What was read': the layer stack as a strip of layers coloured by kind, with counts.

A pure function of :meth:`core.layers.LayerStack.summary` (runs of equal
layers in order); every text it writes is escaped.  Colours are the
Okabe–Ito palette (colour-blind safe: Okabe & Ito 2008, "Color Universal
Design"), and every kind also has its own letter, so the strip reads
without colour too.  Kinds past the palette's eight colours mix two of them:
attention beside Mamba-2 (a parallel hybrid) is half full-attention blue,
half Mamba vermillion; sparse attention is the blue striped with black.

A stack of up to :data:`MAX_RUNS` runs is drawn run by run.  A longer one (a hybrid whose kinds alternate
layer by layer: 2,048 runs of one layer) is drawn as what a person reads: each stretch that repeats a
pattern of a few runs is one block, the pattern's cells once and its repeat count (``(F W C L M)×409``);
at most :data:`MAX_SEGMENTS` segments are drawn and any layers after them are one grey segment that says
how many layers and runs it holds.  The legend's counts are of every layer either way.
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


#: Runs drawn one by one; a stack of more is drawn with its repeating patterns folded (:func:`fold_runs`).
MAX_RUNS = 64
#: The longest pattern, in runs, looked for when folding (a hybrid's period: Jamba's is 8 layers).
MAX_PERIOD = 16
#: Segments drawn at most (a run, or a folded block); the layers after them are summarised as one.
MAX_SEGMENTS = 48


def fold_runs(rows: Sequence[dict], max_period: int = MAX_PERIOD) -> list[tuple[int, list[dict], int]]:
    """The runs as stretches of a repeated pattern, greedily from the first layer.

    Args:
        rows: :meth:`core.layers.LayerStack.summary` rows, in layer order.
        max_period: the longest pattern looked for, in runs.

    Returns:
        ``(first row's index, pattern rows, repeats)`` for each stretch, in order; a run that starts no
        repeat is a pattern of one, repeated once.  Concatenating each pattern ``repeats`` times gives the
        rows' kinds and counts back.  At each row the pattern that covers the most runs (at least two
        repeats) is taken, the shortest of those that cover as many.
    """
    sig = [(r["attention"], r["mlp"], r["label"], int(r["count"])) for r in rows]
    out, i, n = [], 0, len(sig)
    while i < n:
        best_p, best_reps = 1, 1
        for p in range(2, min(max_period, (n - i) // 2) + 1):
            reps = 1
            while i + (reps + 1) * p <= n and sig[i + reps * p:i + (reps + 1) * p] == sig[i:i + p]:
                reps += 1
            if reps >= 2 and p * reps > best_p * best_reps:
                best_p, best_reps = p, reps
        out.append((i, list(rows[i:i + best_p]), best_reps))
        i += best_p * best_reps
    return out


def _style(r: dict) -> tuple[str, str, str, str]:
    """A row's kind (a known one), its mark (letter and MoE's E), colour and text colour."""
    kind = r["attention"] if r["attention"] in KIND_STYLE else "full"
    letter, colour, ink, _ = KIND_STYLE[kind]
    return kind, letter + MLP_MARK.get(r["mlp"], ""), colour, ink


def _span(first: int, n: int) -> str:
    return f"layer {first}" if n == 1 else f"layers {first}–{first + n - 1}"


_CELL = "text-align:center;font:11px/1.8 monospace;overflow:hidden;white-space:nowrap"


def _run_html(r: dict, first: int, titled: bool = True) -> str:
    """One run's cell; a cell inside a folded block has no title of its own (the block's is shown)."""
    kind, mark, colour, ink = _style(r)
    n = int(r["count"])
    words = f"{_span(first, n)}: {r['label']}"
    title = f' title="{escape(words, quote=True)}"' if titled else ""
    return (f'<span class="layer-run" data-kind="{escape(kind, quote=True)}"{title} '
            f'style="flex:{n} 1 0;background:{colour};color:{ink};min-width:1.6em;{_CELL};'
            f'border-right:1px solid #fff">{escape(mark)}{"×" + str(n) if n > 1 else ""}</span>')


def _segments(rows: list[dict]) -> list[str]:
    """The strip's segments: every run, or (more than :data:`MAX_RUNS`) the folded blocks, at most
    :data:`MAX_SEGMENTS` of them and then one for the layers left."""
    if len(rows) <= MAX_RUNS:
        return [_run_html(r, int(r["first"])) for r in rows]
    segments = []
    stretches = fold_runs(rows)
    for done, (i, pattern, reps) in enumerate(stretches):
        first = int(rows[i]["first"])
        if done == MAX_SEGMENTS:
            left = rows[i:]
            n = sum(int(r["count"]) for r in left)
            segments.append(
                f'<span class="layer-rest" title="{escape(_span(first, n), quote=True)}: {len(left):,} more '
                f'runs without a short repeating pattern (their kinds are counted in the legend)" '
                f'style="flex:{n} 1 0;background:#bbbbbb;color:#000000;min-width:4em;{_CELL}">'
                f"… {n:,} layers</span>")
            break
        if reps == 1:
            segments.append(_run_html(pattern[0], first))
            continue
        per = sum(int(r["count"]) for r in pattern)
        words = ", ".join(r["label"] for r in pattern)
        title = f"{_span(first, per * reps)}: {reps:,} × ({words})"
        cells = "".join(_run_html(r, int(r["first"]), titled=False) for r in pattern)
        segments.append(
            f'<span class="layer-repeat" data-repeats="{reps}" title="{escape(title, quote=True)}" '
            f'style="flex:{per * reps} 1 0;display:flex;min-width:{1.6 * len(pattern) + 3.2:g}em;'
            f'border:2px solid #444;box-sizing:border-box">{cells}'
            f'<span style="{_CELL};padding:0 .3em;background:#ffffff;color:#000000">×{reps:,}</span></span>')
    return segments


def layer_strip_html(stack: LayerStack | Sequence[dict]) -> str:
    """The stack as an HTML strip: one segment per run of equal layers, width ∝ its layers.

    Args:
        stack: a :class:`core.layers.LayerStack`, or its :meth:`~core.layers.LayerStack.summary` rows
            (``first``, ``count``, ``attention``, ``mlp``, ``label``).

    Returns:
        ``<div class="layer-strip">`` with the segments (letter, ``×count``, a title naming the layers
        and their kind) and a legend of the kinds present with their layer counts; ``E`` after a letter
        marks mixture-of-experts MLPs.  Over :data:`MAX_RUNS` runs, a stretch repeating a pattern is one
        ``layer-repeat`` block (the pattern's runs, then ``×repeats``), and after :data:`MAX_SEGMENTS`
        segments the rest is one ``layer-rest`` segment.
    """
    rows = stack.summary() if isinstance(stack, LayerStack) else list(stack)
    total = sum(int(r["count"]) for r in rows) or 1
    counts = {}
    for r in rows:
        key = (_style(r)[0], r["mlp"] == "moe")
        counts[key] = counts.get(key, 0) + int(r["count"])
    segments = _segments(rows)
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
