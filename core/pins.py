"""Pinned scenarios and their comparison.

A :class:`Pin` keeps a scenario (a label and every lever) while the controls move
on.  :func:`compare` evaluates pins side by side and says what still differs
between pins that land on the same intensity — "batch 4 vs INT4 vs 4-token
speculation" coincide at I = 4 (article 004, section 03) but are not the same
thing: KV memory grows with B only, INT4 changes the weights (and quality) but
not the cache, and speculation pays only with acceptance.  :data:`COMPARE_METRICS`
are the rows of the Compare view's small multiples, read from each pin's result;
:func:`compare_metrics` adds the expected tokens/s under an engine preset
(:mod:`core.expected`) beside the ceiling's.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from .catalogue import Catalogue
from .config_reader import printable_name
from .coverage import beyond_calibration
from .expected import above_ceiling, ceiling_basis, engine_label, engine_names, expected_step
from .precision import get_precision
from .scenario import LEVERS, STORED, ScenarioResult, evaluate_levers
from .units import GiB, fmt_rate, fmt_seconds, fmt_sig

__all__ = ["COMPARE_METRICS", "MAX_PINS", "CompareMetric", "Pin", "PinRow", "bound_text", "bound_word",
           "compare", "compare_metrics", "differs_text", "expected_metric",
           "default_pin_name", "evaluate_pin", "given_pin_name", "lever_preset", "lever_text",
           "preset_notes", "speculation_notes", "trio_base"]

#: Pins a session keeps at once (3 levers x 2 models x 2 GPUs = 12 fit, with room to spare).
MAX_PINS = 16
#: Longest pin name kept (a permalink's, a rename's and a default name's).
MAX_PIN_NAME = 40


@dataclass(frozen=True)
class Pin:
    """A pinned scenario: a label and every lever (Scenario parameter names, SI values).

    Attributes:
        origin: the levers of the scenario a preset pin was made from (:func:`lever_preset`), so
            :func:`compare` names every lever that differs from it; None for a pin of the scenario itself.
            Not part of a pin's identity (a permalink does not carry it).
        moves: the trio lever a preset pin moves (``"batch"``, ``"weight_dtype"``, ``"spec_k"``), or None.
    """

    name: str
    levers: dict
    origin: dict | None = field(default=None, compare=False, repr=False)
    moves: str | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class PinRow:
    """One pin, evaluated.

    Attributes:
        notes: what distinguishes it from pins at the same intensity, and what that means (sentences).
        differs_by: the levers on which it departs, as ``flag=value`` texts: for a preset pin every
            lever that differs from the scenario it was made from (:attr:`Pin.origin`); otherwise
            those on which it departs from the other pins (empty for a lone pin, or one that holds
            every lever's most common value).
        differs_from: what ``differs_by`` is against: ``"the scenario it was pinned from"`` or
            ``"the other pins"``.
    """

    pin: Pin
    result: ScenarioResult
    notes: tuple[str, ...]
    differs_by: tuple[str, ...] = ()
    differs_from: str = "the other pins"


def evaluate_pin(pin: Pin, catalogue: Catalogue | None = None) -> ScenarioResult:
    """The :class:`ScenarioResult` of a pin's levers, its ids looked up in ``catalogue``.

    Raises:
        ValueError: a model or GPU the catalogue does not hold.
    """
    return evaluate_levers(pin.levers, catalogue or Catalogue())


def lever_text(name: str, value) -> str:
    """A lever's value in the articles' notation, short enough for a pin name (``B=4``, ``INT4``, ``k=4``)."""
    if name == "batch":
        return f"B={value}"
    if name == "spec_k":
        return f"k={value}"
    if name == "context":
        return f"S={value:,}"
    if name == "weight_dtype":
        return "as stored" if value == STORED else get_precision(value).label
    if name == "kv_dtype":
        return f"KV {get_precision(value).label}"
    if name == "gqa":
        return "GQA" if value else "GQA off"
    if name == "prompt_len":
        return f"prompt {value:,}"
    if name == "acceptance":
        return f"α={value:.2f}"
    if name == "reserve_bytes":
        return f"reserve {value / GiB:g} GiB"
    if name == "capacity_convention":
        return "GB=1e9" if value == "decimal" else "GB as GiB"
    if name in ("tp", "pp", "ep", "replicas"):  # a trial's pin read "B=4 8" for B = 4 at TP = 8
        return f"{'replicas' if name == 'replicas' else name.upper()}={value}"
    if name == "phase":
        return str(value)
    if name == "cuda_graphs":
        return "CUDA graphs" if value else "no CUDA graphs"
    if name == "gpu_hour_price":
        return f"${value:g}/GPU-h"
    lever = LEVERS[name] if name in LEVERS.names else None
    symbol = getattr(lever, "symbol", "") or (lever.label.split()[0].lower() if lever is not None else name)
    return f"{symbol}={value}"


def bound_word(r: ScenarioResult) -> str:
    """What bounds ``r``'s step in one word, ``memory``, ``compute`` or ``overhead`` (the kernel launches): the Pins
    table's word under a pin's tokens/s and the pins CSV's ``bound`` column, the word the readouts' "Bound" and
    ``explain --json``'s ``bound`` say (:attr:`core.scenario.ScenarioResult.bound`; the table and the CSV had said
    "launches" for it, and a trial read two bounds)."""
    return r.bound


def bound_text(r: ScenarioResult) -> str:
    """What bounds ``r``'s step, with the times that decide it: ``"memory-bound (5.82 ms of memory)"``, or
    ``"launch overhead: 2.13 ms of kernel launches > 0.31 ms of GPU time"`` (why an INT4 pin of an MoE is slowest)."""
    if r.bound == "overhead":
        return (f"launch overhead: {fmt_seconds(r.launch_overhead_s)} of kernel launches > "
                f"{fmt_seconds(r.gpu_time_s)} of GPU time")
    t = r.memory_time_s if r.bound == "memory" else r.compute_time_s
    return f"{r.bound}-bound ({fmt_seconds(t)} of {r.bound})"


def _most_common(values: list):
    """The strictly most common value, or None on a tie (no value stands for the group)."""
    counts = Counter(values).most_common(2)
    if len(counts) == 1 or counts[0][1] > counts[1][1]:
        return counts[0][0]
    return _TIE


_TIE = object()


def _departures(levers: dict, group: list[dict], names=None) -> list[str]:
    """Lever names on which ``levers`` departs from ``group``: the group varies there and
    ``levers`` does not hold its strictly most common value."""
    out = []
    for name in names or LEVERS.names:
        values = [g[name] for g in group]
        if len(set(map(repr, values))) > 1 and _most_common(values) != levers[name]:
            out.append(name)
    return out


def compare(pins: list[Pin], catalogue: Catalogue | None = None) -> list[PinRow]:
    """Evaluate ``pins`` and say what differs.

    For pins sharing an intensity, ``notes`` explain each lever on which a pin
    departs from the others at that point (the lever whose value is not the
    group's most common one; on a tie, every pin's value is named, but of the
    levers a trio moves, :data:`TRIO_LEVERS`, a preset pin's only of the one it
    moves), so that 8 or more coinciding pins still part.  ``differs_by`` does the same against all
    pins.  ``catalogue`` resolves ids (a session's own models and GPUs as well as
    the shipped ones: :attr:`core.Scenario.catalogue`).
    """
    results = [evaluate_pin(p, catalogue) for p in pins]
    all_levers = [p.levers for p in pins]
    rows = []
    for pin, r in zip(pins, results, strict=True):
        group = [p.levers for p, o in zip(pins, results, strict=True) if _same_point(o, r)]
        departs = _departures(pin.levers, group) if len(group) > 1 else []
        if pin.moves:
            # A preset pin's notes are of the lever it moved (an engineer's trial: an MoE's batch-4 and k = 4 pins
            # share a point without INT4's, and on their tie each was told of the other's lever, "k = 1: no
            # speculation" on the batch-4 pin).
            departs = [n for n in departs if n not in TRIO_LEVERS or n == pin.moves]
        notes = tuple(_notes(r, departs, pin.levers))
        if pin.origin is not None:
            names = [n for n in LEVERS.names if n in pin.origin and pin.levers[n] != pin.origin[n]]
            against = ORIGIN
        else:
            names, against = _departures(pin.levers, all_levers), "the other pins"
        differs = tuple(f"{LEVERS[n].flag}={LEVERS[n].encode(pin.levers[n])}" for n in names)
        rows.append(PinRow(pin, r, notes, differs, against))
    return rows


#: Article 004's three levers as :func:`lever_preset` pins them from :func:`trio_base`: each pin's name and the one
#: lever it moves, to which value.  :data:`TRIO_LEVERS` and the trio are both read from it.
TRIO = (("batch 4", "batch", 4), ("INT4 weights", "weight_dtype", "int4"), ("speculation k=4", "spec_k", 4))

#: The levers :func:`lever_preset`'s trio moves, one each.
TRIO_LEVERS = tuple(lever for _what, lever, _value in TRIO)

#: What a preset pin's ``differs_by`` is against.
ORIGIN = "the scenario it was pinned from"


def differs_text(row: PinRow) -> str:
    """What a pin differs by, in one sentence, the same in the session it was pinned in and in a link that reopens
    it (the link carries a preset pin's origin: :func:`core.permalink.to_query`).

    A preset pin: ``"differs from the scenario it was pinned from (batch=1) by: batch=4"``, the origin's own
    values of those levers said, since the scenario shown may have moved on since; a pin of a scenario itself: what
    it departs from the other pins by, or that it is the one they differ from.
    """
    if row.differs_from == ORIGIN:
        if not row.differs_by:
            return f"nothing: it is {ORIGIN}"
        origin = row.pin.origin or {}
        was = "; ".join(f"{LEVERS[n].flag}={LEVERS[n].encode(origin[n])}" for n in LEVERS.names
                        if n in origin and origin[n] != row.pin.levers[n])
        return f"differs from {ORIGIN} ({was}) by: {'; '.join(row.differs_by)}"
    # A pin that differs by nothing is the group's reference ("differs by: the most common value of every lever
    # that varies" read as a difference, found by a helper).
    return ("differs by: " + "; ".join(row.differs_by) if row.differs_by
            else "nothing: the others differ from it (it has the most common value of every lever)")


def _one_or_both(x: float, y: float, sig: int) -> str:
    """``x`` alone when ``x`` and ``y`` read the same at ``sig`` significant digits, else ``x and y``."""
    a, b = fmt_sig(x, sig), fmt_sig(y, sig)
    return a if a == b else f"{a} and {b}"


def preset_notes(rows: list[PinRow]) -> list[str]:
    """Sentences on a trio of :func:`lever_preset` pins that the roofline alone does not explain.

    For a mixture-of-experts model, batch 4 and k = 4 run 4 tokens per step per sequence group, which
    touch more of the experts than batch 1 does (``E·(1 − (1 − k_e/E)^tokens)``, per GPU under EP:
    :attr:`ScenarioResult.experts_touched_per_gpu`), so they read more weight bytes per FLOP and their
    intensities differ from INT4's; the figures are each pin's own result.  A trio whose weights start
    from a format other than BF16 (a checkpoint kept as stored) is said to start there.
    """
    out = []
    trios: dict[str, dict[str, PinRow]] = {}  # by the scenario they were pinned from (pressed twice: one trio)
    for row in rows:
        if row.pin.origin is not None and row.pin.moves:
            trios.setdefault(repr(sorted(row.pin.origin.items())), {})[row.pin.moves] = row
    for trio in trios.values():
        if set(trio) != {"batch", "weight_dtype", "spec_k"}:
            continue
        b4, int4, k4 = trio["batch"].result, trio["weight_dtype"].result, trio["spec_k"].result
        m = b4.model
        if m.moe:
            per = "per MoE layer" + (" on one GPU" if b4.gpus_per_replica > 1 else "")
            n_b4, n_k4 = b4.batch * b4.tokens_per_read, k4.batch * k4.tokens_per_read
            tokens = f"each run {n_b4} tokens" if n_b4 == n_k4 else f"run {n_b4} and {n_k4} tokens"
            touched = _one_or_both(b4.experts_touched_per_gpu, k4.experts_touched_per_gpu, 3)
            intensity = _one_or_both(b4.arithmetic_intensity_weights, k4.arithmetic_intensity_weights, 4)
            out.append(
                f"{m.name} is a mixture of experts: batch {b4.batch} and k = {k4.spec_k} {tokens} per step, which "
                f"touch {touched} of its {fmt_sig(b4.experts_per_gpu, 3)} experts {per}, against "
                f"{fmt_sig(int4.experts_touched_per_gpu, 3)} at batch {int4.batch} (the INT4 pin): they read more "
                f"weights per FLOP, so their intensity ({intensity} FLOP/byte) differs from INT4's "
                f"({fmt_sig(int4.arithmetic_intensity_weights, 4)} FLOP/byte)"
                + (", where a dense model's three coincide." if b4.weight_dtype == "bf16" else "."))
        if b4.weight_dtype != "bf16":
            out.append(f"The batch-{b4.batch} and k = {k4.spec_k} pins keep the weights of the scenario they were "
                       f"pinned from, {b4.weight_format}; the three coincide only from BF16 weights.")
    # Once each: the trios of one model on two GPUs touch the same experts (a trial read the same sentence twice).
    return list(dict.fromkeys(out))


def speculation_notes(rows: list[PinRow]) -> list[str]:
    """For each speculating pin (decode, k > 1), what its ceiling assumes: the tokens a verify step keeps, E =
    (1 − α^k)/(1 − α), at the acceptance rate α, an assumption rather than the hardware's (an engineer's trial took k
    = 4's "ceiling" for a bound that holds whatever the drafts), and no draft model's cost.  Once per k and α.

    >>> from core import Scenario
    >>> print(speculation_notes(compare([Pin("k = 4", Scenario(spec_k=4).levers())]))[0][:65])
    k = 4: a speculating pin's ceiling counts the E = 2.53 tokens a v
    """
    out = []
    for row in rows:
        r = row.result
        if r.phase == "decode" and r.spec_k > 1:
            out.append(f"k = {r.spec_k}: a speculating pin's ceiling counts the E = {r.expected_tokens_per_step:.2f} "
                       f"tokens a verify step keeps at the acceptance rate α = {r.acceptance:g}, not all {r.spec_k}; "
                       "α is an assumption (More levers), and the ceiling rises and falls with it. The draft "
                       "model's own steps and weights are not counted: a draft costs time and memory the pin does "
                       "not show.")
    return list(dict.fromkeys(out))


def _same_point(a: ScenarioResult, b: ScenarioResult) -> bool:
    return abs(a.arithmetic_intensity_weights - b.arithmetic_intensity_weights) <= 1e-9 * b.arithmetic_intensity_weights


def _notes(r: ScenarioResult, levers: list[str], values: dict) -> list[str]:
    """What each lever on which ``r`` departs from its point's other pins means; ``values``: the pin's levers (a
    lever the result has no field of, such as ``cuda_graphs``, is read there: a trial read "no CUDA graphs" under a
    pin with them, from a missing field)."""
    notes = []
    # The lever that moved first; which model and GPU it was, after.
    for name in sorted(levers, key=lambda n: n in ("model", "gpu")):
        if name == "batch":
            notes.append(f"B = {r.batch}: KV memory grows with B only — {r.kv_bytes / GiB:,.2f} GiB of cache for "
                         f"{r.batch} sequence{'s' if r.batch > 1 else ''}")
        elif name == "weight_dtype":
            notes.append(f"{r.weight_format} weights: {r.weight_bytes_held / GiB:,.1f} GiB held "
                         "— p changes the weights (and quality), not the KV cache")
        elif name == "spec_k":
            if r.spec_k > 1:
                notes.append(f"k = {r.spec_k}: pays only with acceptance — at α = {r.acceptance:.2f} a verify step "
                             f"yields {r.expected_tokens_per_step:.2f} tokens, {r.tokens_per_s_with_kv:,.0f} tokens/s")
            else:
                notes.append(f"k = 1: no speculation, one token per step, {r.tokens_per_s_with_kv:,.0f} tokens/s")
        elif name == "kv_dtype":
            notes.append(f"KV cache in {get_precision(r.kv_dtype).label}: {r.kv_bytes / GiB:,.2f} GiB")
        elif name == "tp":
            notes.append(f"TP = {r.tp}: same intensity (TP divides FLOPs and weight bytes alike) — "
                         f"{r.weight_bytes_held / GiB:,.1f} GiB of weights per GPU, {r.tpot_s * 1e3:.2f} ms per token, "
                         f"{r.communication_time_s * 1e3:.2f} ms of it communication")
        elif name == "gpu":
            notes.append(f"{r.gpu.name}: ridge {r.ridge_point:,.0f}, {100 * r.peak_fraction_weights:.3g} % of its peak")
        elif name == "model":
            notes.append(f"{r.model.name}: {r.weight_bytes_held / GiB:,.1f} GiB of weights, "
                         f"{r.kv_bytes_per_token / 1024:,.0f} KiB of KV per token")
        elif name == "context":
            notes.append(f"S = {r.context:,} tokens: {r.kv_bytes / GiB:,.2f} GiB of cache")
        elif name == "gqa":
            notes.append(f"GQA {'on' if r.gqa else 'off'}: {r.kv_bytes_per_token / 1024:,.0f} KiB of KV per token")
        elif name == "cuda_graphs":
            notes.append(f"{lever_text(name, values[name])}: {fmt_seconds(r.launch_overhead_s)} of kernel launches "
                         f"a step, {bound_text(r)}")
        else:
            notes.append(f"{LEVERS[name].label}: {lever_text(name, values[name])}")
    return notes


def pin_name(parts: list[str], shorten: int) -> str:
    """``parts`` joined by " · ", in at most :data:`MAX_PIN_NAME` characters.

    When they are longer, part ``shorten`` (the model's name, which the pins table also shows whole in a column
    of its own) is cut and ends in "…", so that the lever a pin moves and its GPU stay whole: "INT4 weights ·
    Qwen2ForCausa… · h100-sxm", not "INT4 weights · Qwen2ForCausalLM · h100-s".  Parts too long for that
    leave the whole name cut, ending in "…".

    >>> pin_name(["speculation k=4", "Llama-3.1-405B", "h100-pcie"], shorten=1)
    'speculation k=4 · Llama-3.1… · h100-pcie'
    >>> pin_name(["speculation k=4", "Llama-3-70B", "a100-80gb"], shorten=1)
    'speculation k=4 · Llama-3… · a100-80gb'
    """
    name = " · ".join(parts)
    over = len(name) - MAX_PIN_NAME
    if over <= 0:
        return name
    keep = len(parts[shorten]) - over - 1  # the part's characters left beside its "…"
    if keep >= 3:
        cut = _cut_between_words(parts[shorten], parts[shorten][:keep])
        if cut:
            return " · ".join([*parts[:shorten], cut + "…", *parts[shorten + 1:]])
    return name[:MAX_PIN_NAME - 1].rstrip() + "…"


def _cut_between_words(whole: str, cut: str) -> str:
    """``cut`` (the start of ``whole``) backed off to where a reader sees a cut: between words where a word is left
    ("Llama-3-7…" read as Llama-3-7B; "Llama-3…" reads as cut), else not within a number ("Qwen2ForCausa…"), else
    where it falls; without a separator at its end.  The caller adds the "…"."""
    tries = [cut]
    if cut and cut[-1].isalnum() and len(whole) > len(cut) and whole[len(cut)].isalnum():
        word_start = len(cut) - next((i for i, c in enumerate(reversed(cut)) if not c.isalnum()), len(cut))
        tries = [cut[:word_start], cut.rstrip("0123456789"), cut]
    return next(t.rstrip(" -_.·/") for t in tries if len(t.rstrip(" -_.·/")) >= 3 or t is cut)


def given_pin_name(text: str) -> tuple[str, int]:
    r"""A name a person gave a pin (typed in the Pins tab, or in a link's ``pins=``) as the lab shows it, and how
    long it was: one line of printable text (a bidi override or a control character written as its escape,
    :func:`core.config_reader.printable_name`), cut to :data:`MAX_PIN_NAME` characters between whole
    characters as shown; the length is the whole name's, as shown, for a notice that it was cut.

    >>> given_pin_name("batch\u202e 4")
    ('batch\\u202e 4', 13)
    """
    whole = printable_name(text)
    if len(whole) <= MAX_PIN_NAME:
        return whole, len(whole)
    # Cut as the lab's own names are, between words and marked (a trial's linked "… Llama-3-70B …" showed as
    # "… Llama-3-7"), an escape kept whole.
    return _cut_between_words(whole, printable_name(text, MAX_PIN_NAME - 1)) + "…", len(whole)


def default_pin_name(levers: dict, pins: list[Pin], catalogue: Catalogue | None = None) -> str:
    """A name that says the model, the GPU and the lever that moved since the last pin (or the defaults): after a
    preset pin, since the scenario its trio moves one lever of (:func:`trio_base` of its :attr:`Pin.origin`), so the
    trio's own B = 1, k = 1 scenario pinned after it is its ``"baseline"``, not ``"k=1"`` beside
    ``"speculation k=4"``, and the scenario at B = 8 it was pressed from is ``"B=8"``.

    ``"Llama-3-70B · h100-sxm · B=4"``; at most :data:`MAX_PIN_NAME` characters, unique among ``pins``.
    """
    catalogue = catalogue or Catalogue()
    last = pins[-1] if pins else None
    before = LEVERS.defaults() if last is None else trio_base(last.origin) if last.origin else last.levers
    moved = [n for n in LEVERS.names if n not in ("model", "gpu") and levers[n] != before.get(n)]
    if not moved and any(levers[n] != before.get(n) for n in ("model", "gpu")):
        # Only the model or the GPU moved (they are in the name already): the levers set, as the first pin says
        # them, not "baseline" (an engineer's trial: "phi-4 · custom-h20 · B=4", then "phi-4 · h100-sxm · baseline"
        # at the same B = 4).
        defaults = LEVERS.defaults()
        moved = [n for n in LEVERS.names if n not in ("model", "gpu") and levers[n] != defaults[n]]
    what = " ".join(lever_text(n, levers[n]) for n in moved[:2]) or "baseline"
    try:
        model = catalogue.model(levers["model"]).name
    except ValueError:
        model = str(levers["model"])
    name = pin_name([model, levers["gpu"], what], shorten=0)
    names = {p.name for p in pins}
    n = 2
    unique = name
    while unique in names:
        suffix = f" ({n})"
        unique = name[: MAX_PIN_NAME - len(suffix)] + suffix
        n += 1
    return unique


def trio_base(levers: dict) -> dict:
    """The scenario a trio of :func:`lever_preset` moves one lever of: ``levers`` at B = 1, k = 1, decode."""
    return {**levers, "batch": 1, "spec_k": 1, "phase": "decode"}


def lever_preset(levers: dict, catalogue: Catalogue | None = None) -> list[Pin]:
    """Article 004's three levers from the scenario ``levers`` at B = 1, k = 1, decode: batch 4, INT4, k = 4.

    Every other lever is the scenario's, the weight format included: a checkpoint kept as
    stored (or any format chosen) stays so in the batch-4 and k = 4 pins; the INT4 pin is INT4.
    Each pin records ``levers`` as its :attr:`Pin.origin` (what :func:`compare` says it differs
    from) and the lever it moves.  Each name says the lever, the model and the GPU
    (``"batch 4 · Llama-3-70B · h100-sxm"``), so trios pinned for two models on two GPUs stay apart.
    """
    catalogue = catalogue or Catalogue()
    origin = dict(levers)
    base = trio_base(levers)
    try:
        model = catalogue.model(levers["model"]).name
    except ValueError:
        model = str(levers["model"])
    return [Pin(pin_name([what, model, levers["gpu"]], shorten=1), {**base, lever: value}, origin, lever)
            for what, lever, value in TRIO]


@dataclass(frozen=True)
class CompareMetric:
    """One row of the Compare view: a label with its unit and how to read it from a result.

    Attributes:
        si: the row's quantity from a result, in SI (tokens/s, seconds, bytes, FLOP/byte, a fraction).
        column: its CSV header, naming the SI unit (``time_per_output_token_s``).
        factor: display value = SI value × ``factor`` (1e3 for ms, 1/GiB for GiB, 100 for %).
        note: words shown after the value (``"fits"``), or None.
        caveat: words the hover adds after the note (``"extrapolated: …"``), or None.
        hover_note: the note as the hover reads it, where the caveat says in full what the note says in a word
            (``"; extrapolated"``), or None: the note.
        unit_in_label: whether the label beside a mark names the unit before its note (the title names it too: a
            long note leaves the unit out, so the label fits beside its mark).
        fmt: the display value as text: three significant digits, or tokens/s as every other tab writes them
            (:func:`core.units.fmt_rate`: the Pins table's and the readouts' "1,076", not "1,080").
    """

    key: str
    label: str
    unit: str
    si: Callable[[ScenarioResult], float]
    column: str
    factor: float = 1.0
    note: Callable[[ScenarioResult], str] | None = None
    fmt: Callable[[float], str] = partial(fmt_sig, sig=3)
    caveat: Callable[[ScenarioResult], str] | None = None
    unit_in_label: bool = True
    hover_note: Callable[[ScenarioResult], str] | None = None

    def value(self, r: ScenarioResult) -> float:
        """The row's value for ``r`` in its display unit (:attr:`unit`)."""
        return self.si(r) * self.factor

    def text(self, r: ScenarioResult) -> str:
        """The value's label beside its mark: the value, with the unit and the note where there is one ("181 % does
        not fit", "22 tokens/s (if it fit)"); the value alone otherwise (the row's title names the unit); "≈ " before
        it where the pin's model has a config key the lab does not model."""
        note = self.note(r) if self.note else ""
        value = self.value(r)
        if not math.isfinite(value):  # no value for this pin (an expected step that could not be computed)
            return note or "n/a"
        shown = r.model.approximate_mark + self.fmt(value)  # ≈ where the model has a key not modelled
        unit = f" {self.unit}" if self.unit_in_label else ""
        return f"{shown}{unit} {note}" if note else shown

    def brief(self, r: ScenarioResult) -> str:
        """The value alone, as a label with no room for its note says it ("≈ " before it where the model has a key
        not modelled; "n/a" for no value): the note stays in the hover."""
        value = self.value(r)
        return r.model.approximate_mark + self.fmt(value) if math.isfinite(value) else "n/a"

    def hover(self, r: ScenarioResult) -> str:
        """The value as the row's hover reads it: with its unit, the note and the caveat in brackets."""
        note = (self.hover_note or self.note or (lambda _r: ""))(r)
        caveat = self.caveat(r) if self.caveat else ""
        more = [text[1:-1] if text.startswith("(") and text.endswith(")") else text for text in (note, caveat) if text]
        value = self.value(r)
        shown = f"{r.model.approximate_mark}{self.fmt(value)} {self.unit}" if math.isfinite(value) else "n/a"
        return shown + (f" ({'; '.join(more)})" if more else "")


def _if_it_fit(r: ScenarioResult) -> str:
    """A rate or time of a workload that does not fit: what it would be if it fit (a teacher's trial read batch 4's
    and k = 4's tokens/s as deliverable; only the memory row, five charts below, said neither fits on one H100)."""
    return "" if r.fits else "(if it fit)"


def _verified(r: ScenarioResult) -> str:
    """Speculating, the FLOPs are all k tokens a verify checks, the rejected drafts' too: a teacher's trial found k = 4
    highest in fraction of peak (1.61 % against 1.35 %) and lowest in tokens/s (495 against 658)."""
    if r.spec_k == 1:
        return ""
    return f"(all {r.spec_k} tokens verified; {r.expected_tokens_per_step:.2f} kept)"


def _fits(r: ScenarioResult) -> str:
    """The verdict, "≈" where the model has config keys the lab does not model (as the memory bar says it)."""
    return r.model.approximate_mark + ("fits" if r.fits else "does not fit")


def expected_metric(engine: str | None = None, ceiling: str = "tokens_per_sequence",
                    steps: dict | None = None) -> CompareMetric:
    """The Compare row of a ceiling's tokens/s (the :data:`COMPARE_METRICS` row keyed ``ceiling``: per sequence, or
    the batch's) as an engine is expected to deliver it, under ``engine``'s preset (None: the generic engine): the
    ceiling's rate × ceiling step / expected step (:attr:`core.expected.ExpectedStep.of_scenario_ceiling`).

    Which lever wins on an engine, beside which wins at the ceiling (:func:`core.expected.expected_step`: an INT4
    pin's dequantisation and launches cost it a larger share of its ceiling than a batch's or a speculation's).  The
    label gives the share of the pin's ceiling it keeps (:attr:`core.expected.ExpectedStep.shares`), "if it fit"
    where it does not fit, and "extrapolated" where the scenario has what the calibration set had not; the hover
    names what (:func:`core.coverage.beyond_calibration`).  A scenario the expected step cannot read has no mark;
    its label says why.  Key ``expected_tokens`` (per sequence) or ``expected_`` + the ceiling's key; CSV column
    ``expected_`` + the ceiling's.  ``steps``: a dict the rows of one engine share (:func:`compare_metrics`), so a
    pin's expected step is worked out once for both.

    Raises:
        KeyError: ``ceiling`` is no row of :data:`COMPARE_METRICS`.
        ValueError: (when a value is read) an engine :func:`core.expected.engine_names` does not list.
    """
    of = {m.key: m for m in COMPARE_METRICS}[ceiling]
    # Each result's expected step once (its value, label and hover read it, in each row given the same ``steps``):
    # kept with the result it was computed for, so a result made later at the same address is not mistaken for it.
    steps = {} if steps is None else steps

    def step_of(r: ScenarioResult):
        kept = steps.get(id(r))
        if kept is None or kept[0] is not r:
            try:
                kept = (r, expected_step(r, engine))
            except ValueError:
                if engine is not None and engine not in engine_names():
                    raise
                kept = (r, None)
            steps[id(r)] = kept
        return kept[1]

    def expected(r: ScenarioResult) -> float:
        e = step_of(r)
        return of.si(r) * e.of_scenario_ceiling if e is not None else math.nan

    def note(r: ScenarioResult, words: bool = True) -> str:
        """The label's note; ``words`` False: without the caveats the hover says in full (:func:`caveat`)."""
        value = expected(r)
        if not math.isfinite(value):
            return "(no expected step for this scenario)"
        caveats = "".join(text for text, on in ((", if it fit", not r.fits),
                                                ("; extrapolated", words and beyond_calibration(r, engine)),
                                                ("; above the ceiling", words and above_ceiling(step_of(r))),
                                                # the ceiling of the engine's launches, not the ceiling row's
                                                ("; engine's launches", words and step_of(r).ceiling_rebased)) if on)
        # The pin's share as its readouts print it, alike in the per-sequence and the batch's rows (a trial read
        # "110 (67 % of 164.6)" above "442 (67.1 % of 658)"); a finite value has an expected step
        pct, whole = step_of(r).shares[0 if ceiling == "tokens_per_sequence" else 1]
        return f"({pct} % of {whole}{caveats})"

    def caveat(r: ScenarioResult) -> str:
        beyond = beyond_calibration(r, engine)
        said = [f"extrapolated: {'; '.join(beyond)}"] if beyond else []
        if step_of(r) is not None and (above := above_ceiling(step_of(r))):
            said.append(above)
        if step_of(r) is not None and (basis := ceiling_basis(step_of(r))):
            said.append(f"the share is of the ceiling with its {basis}")
        return "; ".join(said)

    key = "expected_tokens" if ceiling == "tokens_per_sequence" else f"expected_{ceiling}"
    label = f"{of.label.removesuffix(', ceiling')} expected on the {engine_label(engine)}, a prediction"
    return CompareMetric(key, label, of.unit, expected, f"expected_{of.column}", note=note, fmt=of.fmt, caveat=caveat,
                         unit_in_label=False, hover_note=partial(note, words=False))


#: The Compare view's rows (issue 11): where batch 4, INT4 and k = 4 part although they share an intensity.
#: The memory row is weights + KV cache + reserve over the GPU's capacity (one GPU of the memory stage):
#: ``fits`` is exactly "at most 100 %" (:func:`core.step.step`).
COMPARE_METRICS = (
    # The rates and the time are the roofline's ceiling (its floor for the time), as the readouts' are: said in the
    # title, as a new user took them for what an engine delivers (the Expected tab's prediction).
    CompareMetric("tokens_per_sequence", "tokens/s per sequence, ceiling", "tokens/s",
                  lambda r: r.tokens_per_s_per_sequence, "tokens_per_s_per_sequence", note=_if_it_fit, fmt=fmt_rate),
    CompareMetric("tokens_aggregate", "aggregate tokens/s of the batch (× PP micro-batches in flight), ceiling",
                  "tokens/s",
                  lambda r: r.tokens_per_s_with_kv, "tokens_per_s_with_kv", note=_if_it_fit, fmt=fmt_rate),
    # Per GPU: pins of different sizes (TP = 4 against one GPU) compared by the batch's rate alone read as the larger
    # deployment's GPU being faster (a hardware engineer's trial).
    CompareMetric("tokens_per_gpu", "tokens/s per GPU (all the deployment's GPUs), ceiling", "tokens/s",
                  lambda r: r.tokens_per_s_per_gpu, "tokens_per_s_per_gpu", note=_if_it_fit, fmt=fmt_rate),
    CompareMetric("tpot", "time per output token at the ceiling", "ms", lambda r: r.tpot_s, "time_per_output_token_s",
                  1e3, _if_it_fit),
    CompareMetric("weights", "weights held per GPU", "GiB", lambda r: r.weight_bytes_held, "weight_bytes_held",
                  1 / GiB),
    CompareMetric("kv", "KV cache of the batch, held per GPU", "GiB", lambda r: r.kv_bytes, "kv_cache_bytes", 1 / GiB),
    CompareMetric("memory", "fits in memory? weights + KV + reserve, of one GPU's capacity", "%",
                  lambda r: r.memory_used_bytes / r.capacity_bytes, "memory_used_fraction_of_capacity", 100, _fits),
    CompareMetric("intensity_kv", "intensity counting KV reads", "FLOP/byte", lambda r: r.arithmetic_intensity_with_kv,
                  "arithmetic_intensity_with_kv_flop_per_byte"),
    CompareMetric("peak_fraction", "fraction of its compute roof on the roofline, counting KV reads (communication "
                  "aside)", "%",
                  lambda r: r.peak_fraction_with_kv, "peak_fraction_with_kv", 100, _verified),
)


def compare_metrics(engine: str | None = None) -> tuple[CompareMetric, ...]:
    """The Compare view's rows under ``engine``'s preset (None: generic): :data:`COMPARE_METRICS` with the expected
    tokens/s per sequence and of the batch (:func:`expected_metric`) each after its ceiling's, so the two read one
    above the other."""
    steps: dict[int, tuple[ScenarioResult, float]] = {}  # each pin's expected step, once for both rows
    return (COMPARE_METRICS[0], expected_metric(engine, steps=steps), COMPARE_METRICS[1],
            expected_metric(engine, "tokens_aggregate", steps), *COMPARE_METRICS[2:])
