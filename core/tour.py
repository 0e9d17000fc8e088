"""The guided tour: the articles' walk-throughs as scenario presets with captions.

Each :class:`TourStep` sets every lever (``BASE`` overridden by the step's
settings, so a step never inherits a lever from wherever the class wandered) and
explains what to notice.  Captions are templates filled from the live
:class:`ScenarioResult`, so the numbers a caption quotes are the numbers the
lab computes; ``tests/unit/test_tour.py`` checks them against the articles.

Article 000: "A Concrete Example", Steps 1-6 (Llama-3-8B on one H100 SXM).
Article 004: sections 01-04 (Llama-3-70B; batch 4 vs INT4 vs k = 4;
A100 -> H100 -> H200; GQA off at 128k on a model trained for 128k; prefill).

The tour opens on the chart itself (axes, roof, slope, ridge, ladder, star) before any
number.  Where the lab's exact value differs from the article's, the step's ``footnote``
says so and why (the caption quotes the lab's value; the footnote the article's).

Captions write each quantity in the unit the readouts use for it: bytes a step moves in
GB (1e9 bytes, as bandwidth is in TB/s), bytes memory holds in GiB (2^30), KV per token
in KiB.  A step that reads the datasheet's capacity otherwise than the step before it
(article 000's Step 5 reads "80 GB" as 80e9 bytes) says so in its caption.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from string import Formatter

from .ladder import ARTICLE_ORDER, climb
from .scenario import LEVERS, Scenario, ScenarioResult
from .units import GB, TFLOP, GiB, KiB, fmt_money

#: Every lever a tour step sets before applying its own settings: the lever
#: table's defaults, on article 000's model (Llama-3-8B).
BASE = {**LEVERS.defaults(), "model": "llama-3-8b"}


def _shown(lever, value) -> str:
    """A lever's value as a tour card names it: "on"/"off", a count with separators, else its link text."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int):
        return f"{value:,}"
    return lever.encode(value)


@dataclass(frozen=True)
class TourStep:
    """One stop of the tour.

    Attributes:
        title: heading shown above the caption.
        source: the article passage the step follows.
        settings: levers that differ from :data:`BASE`.
        caption: a ``str.format`` template over :func:`caption_values`.
        footnote: the same kind of template: where the article's rounding or units differ from the
            lab's exact value, and why ("" when they agree).
        numbers: the caption's placeholders the step is about, in the order the strip beside the chart
            shows them in present mode (:meth:`strip`): each is printed as the caption prints it.
        asks: the levers (names in :data:`core.scenario.LEVERS`) the caption asks the class to move; present
            mode, where the levers are folded away, shows their controls beside the card.
    """

    title: str
    source: str
    settings: dict = field(default_factory=dict)
    caption: str = ""
    footnote: str = ""
    numbers: tuple[str, ...] = ()
    asks: tuple[str, ...] = ()

    def levers(self) -> dict:
        """Every lever this step sets."""
        return {**BASE, **self.settings}

    def apply(self, scenario: Scenario) -> None:
        """Set ``scenario`` to this step (one batched update, so views redraw once)."""
        scenario.param.update(**self.levers())

    def values(self, result: ScenarioResult) -> dict:
        """The values this step's templates may quote (:func:`caption_values` of ``result``, and
        :func:`step_references`)."""
        return {**caption_values(result), **step_references()}

    def render(self, result: ScenarioResult) -> tuple[str, str]:
        """``(title, caption)`` with ``result``'s numbers filled in."""
        values = self.values(result)
        return self.title.format(**values), self.caption.format(**values)

    def moved(self, scenario: Scenario) -> list[str]:
        """The levers ``scenario`` has moved from this step's own, but those the step asks the class to move
        (:attr:`asks`), in the lever table's order: ``["Batch B to 64 (the step's 56)"]``.  Its numbers then follow
        those levers, not the step's, and the article's figures its footnote compares with are the step's own."""
        own = self.levers()
        return [f"{lever.label} to {_shown(lever, getattr(scenario, lever.name))} (the step's "
                f"{_shown(lever, own[lever.name])})" for lever in LEVERS
                if lever.name in own and lever.name not in self.asks
                and getattr(scenario, lever.name) != own[lever.name]]

    def render_footnote(self, result: ScenarioResult) -> str:
        """The footnote with ``result``'s numbers filled in ("" when the step has none)."""
        return self.footnote.format(**self.values(result))

    def strip(self, result: ScenarioResult) -> tuple[tuple[str, str], ...]:
        """The step's :attr:`numbers` as the strip beside the chart shows them: ``(value with its unit, what it
        is)`` pairs, each value formatted with the caption's own format spec, so the strip and the caption
        print the same digits (``("16.1 GB", "weights read")``).

        Raises:
            KeyError: a number the caption does not quote, or one :data:`STRIP_LABELS` does not name.
        """
        specs = {name: spec for _, name, spec, _ in Formatter().parse(self.caption) if name}
        values = self.values(result)
        shown = []
        for name in self.numbers:
            if name not in specs:
                raise KeyError(f"{name!r} is not quoted by the caption of {self.title!r}")
            label, unit = STRIP_LABELS[name]
            # A time is the roofline's least, as a rate is its ceiling: "≥ 291 ms" (a teacher read "291 ms time to
            # first token" as what one prompt takes).
            text = ("≥ " if name in AT_LEAST else "") + format(values[name], specs[name])
            shown.append((f"{text} {unit}".strip() if unit != "%" else f"{text} %", label))
        return tuple(shown)


#: The strip's times: each the least the roofline allows, shown "≥".
AT_LEAST = frozenset({"step_ms", "ttft_ms", "tpot_ms"})
#: What each number a step's strip may show is, and its unit (:meth:`TourStep.strip`): GB (1e9 bytes) for what a
#: step moves, GiB (2^30) for what memory holds, KiB per token, as the captions and readouts write them.
STRIP_LABELS: dict[str, tuple[str, str]] = {
    "n_billion": ("parameters", "billion"),
    "weight_gb": ("weights read per step", "GB"),
    "weight_gib": ("weights held", "GiB"),
    "bandwidth_tb": ("HBM bandwidth", "TB/s"),
    "weight_ms": ("to read the weights", "ms"),
    "tok_no_kv": ("ignoring KV", "tokens/s"),
    "intensity": ("arithmetic intensity", "FLOP/byte"),
    "gflop": ("per step", "GFLOP"),
    "compute_ms": ("compute time", "ms"),
    "peak_tf": ("peak (dense)", "TFLOP/s"),
    "ridge": ("ridge point", "FLOP/byte"),
    "pct": ("of peak", "%"),
    "kv_kib": ("KV cache per token", "KiB"),
    "kv_gib": ("KV cache held", "GiB"),
    "kv_read_gb": ("KV read per step", "GB"),
    "step_gb": ("read per step", "GB"),
    "tok": ("ceiling", "tokens/s"),
    "cap_gib": ("capacity", "GiB"),
    "free_gib": ("free for KV", "GiB"),
    "seq_gib": ("KV per sequence", "GiB"),
    "max_batch": ("sequences that fit", ""),
    "step_ms": ("per step", "ms"),
    "batch": ("batch B", ""),
    "acceptance": ("acceptance α", ""),
    "e_tokens": ("tokens per verify step", ""),
    "prefill_i": ("prefill intensity", "FLOP/byte"),
    "ttft_ms": ("time to first token", "ms"),
    "tpot_ms": ("per output token", "ms"),
    "sparse_tf": ("sparse (2:4) headline", "TFLOP/s"),
    "sparse_ridge": ("ridge, sparse figure", "FLOP/byte"),
    "kv_kib_gqa_on": ("KV per token with GQA", "KiB"),
    "kv_gib_32k_x8": ("KV at 32k × 8 users", "GiB"),
    "seq_gib_gqa_on": ("KV per sequence with GQA", "GiB"),
    "seq_gib_gqa_off": ("KV per sequence without GQA", "GiB"),
    "held_gib": ("weights per GPU", "GiB"),
    "used_gib": ("with the KV cache and the reserve", "GiB"),
    "suggested_tp": ("smallest TP that fits", ""),
    "comm_ms": ("all-reduces per step", "ms"),
    "comm_pct": ("of the step", "%"),
    "kv_kib_per_gpu": ("KV per token per GPU", "KiB"),
    "cost_out": ("per million output tokens", ""),
    "replicas": ("replicas", ""),
    "tok_all": ("all replicas", "tokens/s"),
    "gpus": ("GPUs", ""),
    "i": ("arithmetic intensity", "FLOP/byte"),
    "b": ("batch B", ""),
    "k": ("tokens per read k", ""),
    "fit": ("sequences that fit", ""),
    "tok_gpu": ("per GPU", "tokens/s"),
    "tok_gpu_before": ("per GPU, before", "tokens/s"),
    "static_b": ("static batching's B", ""),
    "freed_gib": ("freed for KV per GPU", "GiB"),
    "block_waste": ("KV wasted, paged", "%"),
    "reserved_waste": ("KV wasted, reserved", "%"),
}


@cache
def step_titles() -> tuple[str, ...]:
    """Each step's title, filled from its own scenario (for a jump-to-step menu)."""
    titles = []
    for step in TOUR:
        levers = step.levers()
        titles.append(step.render(Scenario(**levers).evaluate())[0])
    return tuple(titles)


def step_references() -> dict:
    """The numbers (1-based) of the steps a caption points the class to, found by their titles, so that a reordered
    tour keeps them right: ``tp2_step``, the step that splits the 70B over two GPUs ("TP = 2: it fits").

    Raises:
        StopIteration: no step has that title (a test runs every caption).
    """
    return {"tp2_step": next(i for i, step in enumerate(TOUR, 1) if step.title.startswith("TP = 2"))}


def caption_values(r: ScenarioResult) -> dict:
    """Display values (GB = 1e9 bytes, GiB = 2^30 bytes, ms, %) that captions may quote."""
    m = r.model
    seq_gqa_on = m.kv_bytes_per_sequence(r.context, r.kv_bytes_per_element, True)
    seq_gqa_off = m.kv_bytes_per_sequence(r.context, r.kv_bytes_per_element, False)
    # The dense figure's datasheet twin, 2:4 structured sparsity (nan where the datasheet prints none).
    sparse = r.gpu.sparse_flop_per_s.get(r.compute_roof, float("nan"))
    return {
        "model": m.name,
        "gpu": r.gpu.name,
        "n_billion": r.n_params / 1e9,
        "weight_gb": r.weight_bytes_read / GB,
        "weight_gib": r.weight_bytes_read / GiB,
        "weight_ms": r.weight_bytes_read / r.bandwidth * 1e3,
        "bandwidth_tb": r.bandwidth / 1e12,
        # The articles count the weights' FLOPs (2 per weight per token); attention is its own term.
        "gflop": r.flop_per_step_weights / 1e9,
        "step_gflop": r.flop_per_step / 1e9,  # the FLOP per step readout: the weights' and attention's
        "compute_ms": r.flop_per_step_weights / r.peak_flop_per_s * 1e3,
        "peak_tf": r.peak_flop_per_s / TFLOP,
        "ridge": r.ridge_point,
        "intensity": r.arithmetic_intensity_weights,
        "pct": 100 * r.peak_fraction_weights,
        "attainable_tf": r.attainable_flop_per_s_weights / TFLOP,
        "tok": r.tokens_per_s_with_kv,
        "tok_no_kv": r.tokens_per_s_weights,
        "sparse_tf": sparse / TFLOP,
        "sparse_ridge": sparse / r.bandwidth,
        "kv_kib": r.kv_bytes_per_token / KiB,
        # GQA on, whatever the lever: per token, and article 004's "32k context with eight concurrent users".
        "kv_kib_gqa_on": m.kv_bytes_per_token(r.kv_bytes_per_element, True) / KiB,
        "kv_gib_32k_x8": 8 * m.kv_bytes_per_sequence(32768, r.kv_bytes_per_element, True) / GiB,
        "kv_read_gb": r.kv_traffic_bytes / GB,
        # Attention's own arithmetic on the cache: why the point counting KV reads sits right of the weights' one.
        "attn_gflop": r.attention_flop_per_step / 1e9,
        "attn_i": r.attention_flop_per_step / r.kv_traffic_bytes if r.kv_traffic_bytes else 0.0,
        "i_kv": r.arithmetic_intensity_with_kv,
        "query_per_kv": m.n_heads / m.n_kv_heads if r.gqa else 1,
        "kv_gib": r.kv_bytes / GiB,
        "seq_gib": r.kv_bytes_per_sequence / GiB,
        "gqa_word": "on" if r.gqa else "off",
        "seq_gib_gqa_on": seq_gqa_on / GiB,
        "seq_gib_gqa_off": seq_gqa_off / GiB,
        "step_gb": r.bytes_per_step / GB,
        "step_ms": r.step_time_s_with_kv * 1e3,
        "kv_share": 100 * r.kv_traffic_bytes / r.bytes_per_step,
        "weight_share": 100 * r.weight_bytes_read / r.bytes_per_step,
        "cap_gib": r.capacity_bytes / GiB,
        "reserve_gib": r.reserve_bytes / GiB,
        "free_gib": r.free_for_kv_bytes / GiB,
        "max_batch": r.max_batch,
        "batch": r.batch,
        "context": r.context,
        "e_tokens": r.expected_tokens_per_step,
        "acceptance": r.acceptance,
        "prefill_i": r.prefill_intensity,
        "ttft_ms": r.ttft_s * 1e3,
        # In prefill the tokens per weight read are the prompt's (k = prompt length).
        "prompt": f"{r.tokens_per_read:,}-token prompt" if r.phase == "prefill" else "prompt",
        "trained_context": r.model.max_context or 0,
        "prompts_s": "" if r.batch == 1 else "s",
        "tpot_ms": r.tpot_s * 1e3,
    }


TOUR: tuple[TourStep, ...] = (
    TourStep(
        "Reading the chart",
        "article 004, section 01 (the roofline model: Williams, Waterman & Patterson 2009)",
        {"context": 128},
        "Both axes are logarithmic. Across: arithmetic intensity, FLOP per byte read from memory. Up: attainable "
        "performance, dense TFLOP/s. The thick green line is the roof, min(P_peak, BW·I): on its slope, bandwidth "
        "× intensity, a step waits for memory (memory-bound); on its flat top, the chip's peak, it waits for "
        "arithmetic (compute-bound). They meet at the ridge point, the upright dotted line at P_peak / BW (the "
        "grey dotted line across: launch overhead, the third ceiling). The blue "
        "circles are the batch ladder, B named along the top (hollow: does not fit); the orange star "
        "is your workload, named in the title. Nothing sits above the roof: the dashed grey line is the "
        "datasheet's 2:4-sparsity headline, out of reach for dense models.",
    ),
    TourStep(
        "Weight traffic per decode step",
        "article 000's step 1, A Concrete Example",
        {"context": 128},
        "Every decode step of {model} reads all {n_billion:.2f} billion weights from HBM: {weight_gb:.1f} GB "
        "at BF16. At {bandwidth_tb:.2f} TB/s that read takes {weight_ms:.2f} ms before any arithmetic happens, "
        "which caps one stream at {tok_no_kv:.0f} tokens/s (ignoring the cache). The orange star sits at "
        "intensity {intensity:g} FLOP/byte, far down the slope. (The cache's {kv_read_gb:.4f} GB a step bring the "
        "readouts' step time to {step_ms:.3f} ms.)",
        numbers=("weight_gb", "bandwidth_tb", "weight_ms", "tok_no_kv", "intensity"),
    ),
    TourStep(
        "The arithmetic, for comparison",
        "article 000's step 2, A Concrete Example",
        {"context": 128},
        "The same step is only {gflop:.0f} GFLOP (2 FLOP per weight): {compute_ms:.4f} ms on {peak_tf:.0f} "
        "TFLOP/s of tensor cores. Memory time over compute time is {ridge:.0f}, the ridge point, arrived at from "
        "the other direction. Utilisation is 1/{ridge:.0f} = {pct:.2f} % of peak, and no kernel can beat it: "
        "the weights must be read and there is one token of work to do with them.",
        "Article 000 gives 0.0163 ms and a ratio of 294; the lab divides the weights' exact {gflop:.2f} GFLOP by "
        "{peak_tf:.1f} TFLOP/s: {compute_ms:.5f} ms, ratio {ridge:.1f}. The FLOP per step readout, {step_gflop:.2f} "
        "GFLOP, adds attention's {attn_gflop:.2f} GFLOP over the {context:,}-token cache.",
        numbers=("gflop", "compute_ms", "peak_tf", "ridge", "pct"),
    ),
    TourStep(
        "Add the KV cache",
        "article 000's step 3, A Concrete Example",
        {"context": 8192},
        "With grouped-query attention (8 KV heads of 128 dimensions) the cache holds {kv_kib:.0f} KiB per token "
        "across 32 layers: {kv_gib:.2f} GiB at {context:,} tokens of context. Each step reads it all beside the "
        "weights: {weight_gb:.2f} GB + {kv_read_gb:.2f} GB = {step_gb:.2f} GB per step, a ceiling of "
        "{tok:.1f} tokens/s. Counting the cache, the pink triangle sits right of the star, at I = {i_kv:.4g}: "
        "attention does {attn_gflop:.2f} GFLOP on those {kv_read_gb:.2f} GB ({query_per_kv:.0f} query heads per KV "
        "head). More intensity, fewer tokens/s.",
        "Bytes moved are GB (1e9), as bandwidth is TB/s; bytes held, GiB (2^30), as on the memory bar. Article 000 "
        "writes the cache as 1.07 GB ({kv_gib:.2f} GiB), the traffic 17.2 GB, the ceiling down to 195 tokens/s; the "
        "lab's: {step_gb:.2f} GB, {tok:.1f} tokens/s.",
        numbers=("kv_kib", "kv_gib", "step_gb", "tok"),
    ),
    TourStep(
        "Batch to escape the diagonal",
        "article 000's step 4, A Concrete Example",
        {"batch": 56},
        "At batch {batch} the weight read is unchanged but the arithmetic is {batch}× larger: intensity "
        "{intensity:g}, {pct:.0f} % of peak. Ignoring the cache, {batch} tokens emerge every {weight_ms:.2f} ms: "
        "{tok_no_kv:,.0f} tokens/s for zero extra weight traffic. The star has climbed the ladder.",
        "Article 000 says 11,690 tokens/s (56 / 4.79 ms, with the step time rounded); the lab divides by the "
        "exact {weight_ms:.4f} ms: {tok_no_kv:,.0f} tokens/s.",
        numbers=("batch", "intensity", "pct", "tok_no_kv"),
    ),
    TourStep(
        "Run out of memory instead",
        "article 000's step 5, A Concrete Example",
        {"batch": 56, "capacity_convention": "decimal", "reserve_bytes": 0.0},
        "Capacity, not bandwidth, stops the batch. A change of convention for this step: the datasheet's "
        "\"80 GB\" is read as the article reads it, 80e9 bytes = {cap_gib:.1f} GiB (the lab reads it as 80 GiB, "
        "as DRAM is built), with no reserve to start with. The weights take {weight_gib:.1f} GiB and leave "
        "{free_gib:.1f} GiB for cache once the reserve is set aside (none at the start): at {seq_gib:.2f} GiB per "
        "8k sequence only {max_batch} sequences fit; the article's 56 leave headroom (move the reserve to 3 GiB). "
        "The ridge needs batch 295: the hollow rungs do not fit.",
        numbers=("cap_gib", "weight_gib", "free_gib", "seq_gib", "max_batch"),
        asks=("reserve_bytes",),
    ),
    TourStep(
        "Notice what now dominates",
        "article 000's step 6, A Concrete Example",
        {"batch": 56},
        "Back to the lab's convention ({cap_gib:.0f} GiB, a {reserve_gib:.0f} GiB reserve). At batch {batch} "
        "and {context:,} tokens, each step reads {weight_gb:.1f} GB of weights plus "
        "{kv_read_gb:.1f} GB of KV cache: {step_gb:.1f} GB, {step_ms:.1f} ms for {batch} tokens, {tok:,.0f} "
        "tokens/s. The cache is {kv_share:.0f} % of the traffic and does not amortise across the batch, so a "
        "faster matmul optimises the other {weight_share:.0f} %. At 8k context the KV cache, not the matmul, "
        "dominates, and batching cannot fix it: only GQA, MLA, cache quantisation, eviction and prefix sharing "
        "touch it.",
        "Article 000 writes \"56 GiB, or 60.1 GB\" (one amount, binary and decimal) and \"about 2,470 tokens per "
        "second\"; the lab's exact value is {tok:,.0f} tokens/s ({step_ms:.2f} ms a step).",
        numbers=("weight_gb", "kv_read_gb", "step_gb", "step_ms", "tok"),
    ),
    TourStep(
        "70B at batch 1: a very expensive memory controller",
        "article 004, section 01",
        {"model": "llama-3-70b"},
        "{model} in BF16 at batch 1: each token reads all {weight_gb:.1f} GB of weights and {kv_read_gb:.2f} GB "
        "of 8k cache, {step_ms:.2f} ms at {bandwidth_tb:.2f} TB/s: {tok:.1f} tokens/s. Intensity {intensity:g} "
        "against a ridge of {ridge:.0f}: {attainable_tf:.1f} TFLOP/s of {peak_tf:.0f}, {pct:.2f} %. Its "
        "{weight_gib:.1f} GiB of weights do not fit one card: every rung is hollow.",
        "Article 004's 140 GB → 41.8 ms → 23.9 tokens/s is a round 70 billion parameters × 2 bytes, the weights "
        "alone, over 3.35 TB/s. The lab counts the config's "
        "{n_billion:.2f} billion ({weight_gb:.1f} GB: {weight_ms:.2f} ms, {tok_no_kv:.1f} tokens/s) and adds the "
        "{context:,}-token context's KV cache, {kv_read_gb:.2f} GB a step.",
        numbers=("weight_gb", "kv_read_gb", "step_ms", "tok", "intensity"),
    ),
    TourStep(
        "Lever B: batch 4",
        "article 004, section 03",
        {"model": "llama-3-70b", "batch": 4},
        "Four sequences share one read of the weights: I = 2·B·k/p = 2·4·1/2 = {intensity:g} FLOP/byte. The star "
        "is hollow: in BF16 the weights alone ({weight_gib:.1f} GiB) overflow one H100's 80 GiB, so it marks where the "
        "step would land (step {tp2_step} splits the model over two GPUs).",
        numbers=("intensity",),
    ),
    TourStep(
        "Lever p: INT4 weights",
        "article 004, section 03",
        {"model": "llama-3-70b", "weight_dtype": "int4"},
        "Back to batch 1, but a quarter of the bytes per weight: I = 2·1·1/0.5 = {intensity:g} FLOP/byte, "
        "exactly where batch 4 landed. INT4 changes the weights ({weight_gib:.1f} GiB now), not the KV cache.",
        numbers=("intensity", "weight_gib"),
    ),
    TourStep(
        "Lever k: 4-token speculation",
        "article 004, section 03; Leviathan et al. 2023",
        {"model": "llama-3-70b", "spec_k": 4},
        "Verifying 4 tokens per read of the weights: I = 2·1·4/2 = {intensity:g} FLOP/byte, the same spot again. "
        "It only pays if drafts are accepted: at α = {acceptance:.2f} a verify step yields {e_tokens:.2f} tokens "
        "on average (Speculation tab). Hollow again, as batch 4's: the BF16 weights do not fit one H100.",
        numbers=("intensity", "acceptance", "e_tokens"),
    ),
    TourStep(
        "Prefill: the same formula with k = prompt length",
        "article 004, Go deeper",
        {"model": "llama-3-70b", "phase": "prefill"},
        "A {prompt} is processed in one pass: I = {prefill_i:,.0f} FLOP/byte, past the ridge of "
        "{ridge:.0f}, under the flat roof. The star is the batch's prefill ({batch} prompt{prompts_s}), the rung "
        "right of it two prompts at once (B = 2, its tick unlabelled for room); one prompt "
        "alone takes {ttft_ms:,.0f} ms, the time to first token. Each output token then costs {tpot_ms:.1f} ms at "
        "the diamond on the slope (decode). "
        "Two metrics, opposite sides of one chart.",
        numbers=("prefill_i", "ridge", "ttft_ms", "tpot_ms"),
    ),
    TourStep(
        "A100 80GB: ridge {ridge:.0f}",
        "article 004, section 02",
        {"model": "llama-3-70b", "gpu": "a100-80gb"},
        "{gpu}: {peak_tf:.0f} TFLOP/s over {bandwidth_tb:.3f} TB/s, a ridge of {ridge:.0f}. Batch-1 decode "
        "uses {pct:.2f} % of the chip.",
        numbers=("peak_tf", "bandwidth_tb", "ridge", "pct"),
    ),
    TourStep(
        "H100 SXM: ridge {ridge:.0f}",
        "article 004, section 02; the sparse trap, section 01",
        {"model": "llama-3-70b", "gpu": "h100-sxm"},
        "Compute tripled, bandwidth rose only 64 %: the ridge climbs to {ridge:.0f} and batch-1 decode falls to "
        "{pct:.2f} % of the chip. The wall went up. A trap that doubles the answer: the dashed grey line is the "
        "datasheet's {sparse_tf:,.0f} TFLOP/s, printed \"with sparsity\" (2:4, two of every four weights zero, "
        "which dense LLM weights are not). Take it as the peak and the ridge comes out at {sparse_ridge:.0f} "
        "instead of {ridge:.0f}: every conclusion off by 2×.",
        numbers=("ridge", "pct", "sparse_tf", "sparse_ridge"),
    ),
    TourStep(
        "H200: ridge {ridge:.0f}",
        "article 004, section 02; article 000, TL;DR",
        {"model": "llama-3-70b", "gpu": "h200"},
        "Same compute, 43 % more bandwidth: the ridge falls to {ridge:.0f} and efficiency recovers to {pct:.2f} %. "
        "For memory-bound decode that is a real speedup that appears nowhere in a FLOPS comparison.",
        numbers=("ridge", "pct"),
    ),
    TourStep(
        # The heading follows the class's tick (a trial: it still said "GQA off" once GQA was back on).
        "GQA {gqa_word} at 128k: {seq_gib:,.0f} GiB a sequence",
        "article 004, section 04",
        # A model trained for 128k: Llama-3-70B's trained context is 8,192 tokens.
        {"model": "qwen2.5-72b", "context": 131072, "gqa": False},
        "Capacity is the second wall. With GQA, {model} caches {kv_kib_gqa_on:.0f} KiB per token: at 32k context "
        "and 8 users that is {kv_gib_32k_x8:.0f} GiB, a whole H100 holding no weights. With GQA off, one "
        "128k-token sequence needs {seq_gib_gqa_off:,.0f} GiB: all 64 query heads keep their own K and V. Tick "
        "GQA back on: 8 KV heads, {seq_gib_gqa_on:,.0f} GiB, 8× less. Long context came "
        "from a narrower cache, not from bigger memory.",
        "Article 004 quotes Llama-3-70B, trained for 8,192 tokens only; {model}, with the same attention, "
        "allows {trained_context:,} positions.",
        numbers=("kv_kib_gqa_on", "kv_gib_32k_x8", "seq_gib_gqa_off", "seq_gib_gqa_on"),
        asks=("gqa",),
    ),
)


# -- Many GPUs (issue 10): appended after the articles' walk-through -------------------


def gpu_caption_values(r: ScenarioResult) -> dict:
    """:func:`caption_values` plus the many-GPU numbers (per GPU, communication, cost in USD)."""
    return {
        **caption_values(r),
        "tp": r.tp,
        "gpus": r.gpus_total,
        "replicas": r.replicas,
        "held_gib": r.weight_bytes_held / GiB,
        "used_gib": r.memory_used_bytes / GiB,
        "fits": "fits" if r.fits else "DOES NOT FIT",
        "suggested_tp": r.suggested_tp,
        "comm_ms": r.communication_time_s * 1e3,
        "memory_ms": r.memory_time_s * 1e3,
        "comm_pct": 100 * r.communication_time_s / r.step_time_s_with_kv,
        "kv_kib_per_gpu": r.kv_bytes_per_token_per_gpu / KiB,
        "tok_all": r.tokens_per_s_aggregate,
        "cost_out": fmt_money(r.cost_per_million_output_tokens),
        "price": fmt_money(r.gpu_hour_price if r.gpu_hour_price > 0 else None),
    }


@dataclass(frozen=True)
class GpuTourStep(TourStep):
    """A tour step whose caption may also quote :func:`gpu_caption_values`."""

    def values(self, result: ScenarioResult) -> dict:
        """:func:`gpu_caption_values`, and ``cost_b1``: the cost per million output tokens of this step at B = 1,
        so that a step that moves the model and the batch at once can say which did what."""
        return {**gpu_caption_values(result), "cost_b1": _cost_at_batch_1(tuple(sorted(self.levers().items())))}


@cache
def _cost_at_batch_1(levers: tuple) -> str:
    return fmt_money(Scenario(**{**dict(levers), "batch": 1}).evaluate().cost_per_million_output_tokens)


#: The many-GPU steps, at $2 per GPU-hour so the cost shows.
GPU_TOUR: tuple[TourStep, ...] = (
    GpuTourStep(
        "Many GPUs: does 70B fit one H100?",  # a question: after its own TP = 2 button the body says it fits
        "article 004, section 07",
        {"model": "llama-3-70b", "gpu_hour_price": 2.0},
        # "per GPU at TP = …": after the card's own button (TP = 2) it had said the model "is 66 GiB of weights"
        "{model} in BF16 holds {held_gib:.0f} GiB of weights per GPU at TP = {tp}; with one sequence's KV cache and "
        "the reserve it needs {used_gib:.0f} GiB against {cap_gib:.0f} GiB: it {fits}. The smallest split that does "
        "is TP = {suggested_tp} (the button under the memory bar).",
        numbers=("held_gib", "used_gib", "cap_gib", "suggested_tp"),
    ),
    GpuTourStep(
        "TP = 2: it fits",
        "Megatron-LM (Shoeybi et al. 2019)",
        {"model": "llama-3-70b", "tp": 2, "gpu_hour_price": 2.0},
        "Each GPU holds half of every matrix, {held_gib:.2f} GiB, and reads half per step: {tpot_ms:.1f} ms per "
        "output token, room for {max_batch} sequences of 8k. The roofline stays per GPU and the point does not "
        "move: TP divides the FLOPs and the bytes alike; it buys bandwidth and capacity.",
        numbers=("held_gib", "tpot_ms", "max_batch"),
    ),
    GpuTourStep(
        "TP = 8: fast, and communication shows",
        "article 004, section 07",
        {"model": "llama-3-70b", "tp": 8, "gpu_hour_price": 2.0},
        "Eight GPUs read 1/8 each: {tpot_ms:.2f} ms per token, but the 160 all-reduces per step cost "
        "{comm_ms:.2f} ms, {comm_pct:.0f} % of the step, and do not shrink with TP (the Scaling tab draws each "
        "TP's step); the KV cache has shrunk as "
        "far as it can ({kv_kib_per_gpu:.0f} KiB per token per GPU: TP = h_kv, one KV head a GPU; past it, GPUs "
        "hold copies). {cost_out} per million "
        "output tokens at batch 1 (the readouts' cost).",
        numbers=("tpot_ms", "comm_ms", "comm_pct", "kv_kib_per_gpu", "cost_out"),
    ),
    GpuTourStep(
        "8B on one GPU, times eight: cheapest per token",
        "article 000, How It Is Used in Practice (cost from bytes moved)",
        {"model": "llama-3-8b", "batch": 56, "replicas": 8, "gpu_hour_price": 2.0},
        "{replicas} replicas of {model} at B = 56 each: {tok_all:,.0f} tokens/s on {gpus} GPUs, no "
        "communication at all, {cost_out} per million output tokens at {price} per GPU-hour. Two levers moved from "
        "the last step: at B = 1 this 8B costs {cost_b1}. The smaller model on one GPU each brings the cost that "
        "far, the batch of 56 the rest of the way.",
        numbers=("replicas", "tok_all", "gpus", "cost_out"),
    ),
)

TOUR = TOUR + GPU_TOUR


# -- The ladder (issue 29): article 004 section 06's rungs, one step at a time ------------------


@cache
def _climb(levers: tuple, rungs: tuple[str, ...]):
    return climb(Scenario(**dict(levers)), rungs)


def ladder_caption_values(levers: dict, rungs: tuple[str, ...]) -> dict:
    """The numbers a ladder step's caption quotes: the climb from ``levers`` through ``rungs``
    (:func:`core.ladder.climb`), after its last rung (``b``, ``i``, ``tok_gpu``, ``fit``, ``tpot_ms``, ``bound``,
    ``ridge``, and ``s``, the context the climb times) and before it (the same names with ``_before``), what the
    rungs pulled (``static_b``, ``freed_gib``, ``fit_without_gqa``, ``block_waste``, ``reserved_waste``,
    ``paged_fit_before``), and where k > 1
    no longer pays, the same step at k = 1 (``tok_gpu_k1``, ``tpot_ms_k1``) and a verify in its steps
    (``verify_steps``, for ``e_tokens``)."""
    ladder = _climb(tuple(sorted(levers.items())), tuple(rungs))
    after = ladder.final.numbers()
    before = ladder.steps[-2].numbers() if len(ladder.steps) > 1 else after
    # ``s``: the context the steps are timed at, the request mix's mean held context (the Many GPUs steps time 8,192;
    # a teacher read step 21's 22.7 tokens/s per GPU against step 18's 22.4 ms per token).
    out = {"model": ladder.final.result.model.name, "tp": ladder.final.result.tp, "s": ladder.steps[0].result.context}
    for suffix, n in (("", after), ("_before", before)):
        out.update({f"k{suffix}": n["k"], f"b{suffix}": n["batch"], f"i{suffix}": n["intensity"],
                    f"tok_gpu{suffix}": n["tokens_per_s_per_gpu"], f"fit{suffix}": n["max_batch"],
                    f"tpot_ms{suffix}": 1e3 * n["tpot_s"], f"bound{suffix}": n["bound"]})
    out["ridge"] = after["ridge_point"]
    # Article 004's reported figures beside the climb's own (core.ladder.REPORTED): tokens/s per sequence as the
    # table prints them, one decimal, and their ratio; the batch at the ridge at the row before's p and k.
    seq, seq_before = (round(n["tokens_per_s_per_sequence"], 1) for n in (after, before))
    out.update(seq=seq, seq_before=seq_before, seq_ratio=seq / seq_before if seq_before else 0.0,
               ridge_b=before["ridge_point"] * before["p"] / (2 * before["k"]))
    k1 = ladder.final.speculation_numbers()  # k > 1 past the point where it pays (core.ladder.LadderStep)
    if k1 is not None:
        out.update(tok_gpu_k1=k1["tokens_per_s_per_gpu"], tpot_ms_k1=1e3 * k1["tpot_s"], e_tokens=k1["e_tokens"],
                   verify_steps=k1["verify_steps"])
    effects = {s.rung: s for s in ladder.steps if s.rung}
    if "continuous_batching" in effects and "static" in effects["continuous_batching"].effect:
        out["static_b"] = effects["continuous_batching"].effect["static"]["sustained_batch"]
    if "weight_quantization" in effects:
        out["freed_gib"] = effects["weight_quantization"].effect["freed_bytes_per_gpu"] / GiB  # one stage's GPU
    if "gqa_mla" in effects:
        out["fit_without_gqa"] = effects["gqa_mla"].effect["fit_without"]
    if "paged_attention" in effects:
        e = effects["paged_attention"].effect
        waste = e["waste_fraction"]
        out.update(block_waste=100 * waste["paged"], reserved_waste=100 * waste["contiguous"],
                   paged_fit_before=e["fit"][0])
        # Paging's own gain per GPU and its TPOT, over the rung before it, beside article 004's "2–4× throughput at
        # equal latency" (a lecturer's trial: the card quoted none of the article's figures for rungs 4-7).
        i = [s.rung for s in ladder.steps].index("paged_attention")
        paged, prior = ladder.steps[i].numbers(), ladder.steps[i - 1].numbers()
        out.update(paged_ratio=paged["tokens_per_s_per_gpu"] / prior["tokens_per_s_per_gpu"],
                   paged_tpot_before=1e3 * prior["tpot_s"], paged_tpot=1e3 * paged["tpot_s"])
    return out


@dataclass(frozen=True)
class LadderTourStep(TourStep):
    """A tour step on the Ladder tab: it sets the levers and shows the rungs ``rungs`` (in order); its caption
    quotes :func:`ladder_caption_values` for the step's own scenario (the tab follows any lever moved after)."""

    rungs: tuple[str, ...] = ()

    def values(self, result: ScenarioResult) -> dict:
        return ladder_caption_values(self.levers(), self.rungs)


_ARTICLE_70B = {"model": "llama-3-70b", "tp": 2}
_UP_TO_SPECULATION = ("continuous_batching", "weight_quantization", "speculative_decoding")

#: The ladder steps: the article's 70B at B = 1 on two H100s, then the rungs in the article's order.
LADDER_TOUR: tuple[TourStep, ...] = (
    LadderTourStep(
        "The ladder: {model} at B = 1 on TP = {tp}",
        "article 004, section 06",
        _ARTICLE_70B,
        "\"Each rung below raises 2Bk/p, relieves capacity, or both.\" The start (Ladder tab): one request at a "
        "time, I = {i:g} FLOP/byte against a ridge of {ridge:.0f}, {tok_gpu:,.1f} tokens/s per GPU at the mix's "
        "mean S = {s:,}; {fit} sequences fit when each reserves 8,192 tokens. Next: the rungs, one at a time.",
        rungs=(),
        numbers=("i", "ridge", "tok_gpu", "fit"),
    ),
    LadderTourStep(
        "Rung 1 · Continuous batching raises B to {b}",
        "article 004, section 06; Orca (Yu et al., OSDI 2022)",
        _ARTICLE_70B,
        "Sequences join and leave every iteration, so the {b} slots that fit stay full: B = {b}, I = {i:g}, "
        "{tok_gpu:,.1f} tokens/s per GPU ({tok_gpu_before:,.1f} before). Static batching in the same slots "
        "sustains {static_b:.1f}: it waits for each batch's longest output. Article 004: past B ≈ 295 \"further "
        "batching buys throughput only at the cost of latency\"; here capacity stops B at {b} long before the "
        "ridge's B = {ridge_b:.0f}.",
        rungs=_UP_TO_SPECULATION[:1],
        numbers=("b", "i", "tok_gpu", "tok_gpu_before", "static_b"),
    ),
    LadderTourStep(
        "Rung 2 · INT4 weights lower p, and B follows",
        "article 004, section 06",
        _ARTICLE_70B,
        "A quarter of the bytes per weight, and {freed_gib:.1f} GiB more for KV on each GPU: {fit} sequences fit "
        "instead of {fit_before}, and rung 1 fills them. B = {b}, I = {i:g}, {tok_gpu:,.1f} tokens/s per GPU, still "
        "{bound}-bound. Article 004: \"GPTQ reports ~3.25× end-to-end on A100; AWQ ~3.2×\"; here {seq:,.1f} / "
        "{seq_before:,.1f} = {seq_ratio:.2f}× per sequence.",
        rungs=_UP_TO_SPECULATION[:2],
        numbers=("freed_gib", "fit", "b", "i", "tok_gpu"),
    ),
    LadderTourStep(
        "Rung 3 · Speculation raises k past the ridge",
        "article 004, section 06; Leviathan et al. 2023",
        _ARTICLE_70B,
        "{k} tokens verified per read of the weights: I = {i:g} FLOP/byte, past the ridge of {ridge:.0f}; the "
        "step turns {bound}-bound. {tok_gpu:,.1f} tokens/s per GPU, TPOT {tpot_ms:.2f} ms. Article 004: \"Reported "
        "2–3×\"; here {seq:,.1f} / {seq_before:,.1f} = {seq_ratio:.2f}× per sequence: past the ridge, verifying is no "
        "longer free.",
        rungs=_UP_TO_SPECULATION,
        numbers=("k", "i", "ridge", "tok_gpu", "tpot_ms"),
    ),
    LadderTourStep(
        "Rungs 4-7 · Capacity, traffic and pools",
        "article 004, section 06; vLLM (Kwon et al., SOSP 2023); DistServe (Zhong et al., OSDI 2024)",
        _ARTICLE_70B,
        "GQA was already in the start (without it {fit_without_gqa} would fit, not {paged_fit_before}). "
        "PagedAttention wastes {block_waste:.1f} % of the KV where reserving 8,192 tokens wasted "
        "{reserved_waste:.0f} %: {fit} fit instead of {paged_fit_before} and B reaches {b}, vLLM's cap: "
        "{tok_gpu:,.1f} tokens/s per GPU, {paged_ratio:.2f}× (article 004: \"2–4× throughput at equal latency\"), "
        "but TPOT {paged_tpot_before:.2f} → {paged_tpot:.2f} ms. Now {bound}-bound, k = {k} costs: k = 1 "
        "gives {tok_gpu_k1:,.1f} tokens/s per GPU (TPOT {tpot_ms_k1:.2f} ms); a verify takes {verify_steps:.2f} "
        "steps for its {e_tokens:.2f} tokens. "
        "FlashAttention and disaggregation move no lever: the step already keeps the scores on chip and times each "
        "phase on its own.",
        rungs=ARTICLE_ORDER,
        numbers=("block_waste", "reserved_waste", "fit", "b", "tok_gpu"),
    ),
)

TOUR = TOUR + LADDER_TOUR
