"""The ladder of article 004, section 06, as one motion: seven rungs applied one after another.

"Each rung below raises 2Bk/p, relieves capacity, or both — and the honest way to
read any inference optimization is to ask which."  The rungs, in the article's
order (:data:`ARTICLE_ORDER`): continuous batching (raises B), weight quantization
(lowers p), speculative decoding (raises k), GQA and MLA (relieve capacity),
PagedAttention (recovers wasted capacity), FlashAttention (removes traffic) and
prefill/decode disaggregation (stops averaging two workloads).

A climb starts from a :class:`core.scenario.Scenario` (default :func:`article_start`:
the article's 70B at batch 1 on H100s) serving a request mix
(:data:`core.batching.SHAREGPT` by default).  Its state is the scenario's levers
plus the rungs applied so far; each rung is a function of that state returning the
next one (:meth:`Rung.apply`), what it pulled, and the numbers after it from
``Scenario.evaluate()`` (intensity, tokens/s per sequence and per GPU, the largest
batch that fits, TTFT, TPOT).  Rungs can be left out and reordered (a list of rung
ids); the end state depends only on the set of rungs, and equals the scenario the
same levers give directly (:func:`direct`, tests/unit/test_ladder.py).

What a rung that is not a lever of the lab takes from elsewhere:

* the batch B is derived, not set: before continuous batching it is the start's
  (one request at a time); after it, the batch :func:`core.batching.simulate` sustains
  with a backlog of the mix, in the slots the KV capacity allows under the allocation in
  effect (capped at :data:`core.batching.MAX_NUM_SEQS`) — so a rung that frees capacity
  (quantization, GQA, paging) raises B too ("which feeds back into rung 1");
* the capacity per sequence comes from :mod:`core.paging`: before PagedAttention each
  sequence reserves the start's context S (the engine's maximum length), after it the
  blocks it fills; the scenario's own S is the mix's mean held context throughout, the KV
  a decode step reads (paging changes what is reserved, not what is read);
* FlashAttention changes no lever: the lab's step has always counted attention as
  FlashAttention computes it (the KV read once, no score matrix in HBM); the rung names
  the traffic that removes, from the lab's attention FLOP count;
* disaggregation changes no lever: the lab's TTFT and TPOT are each phase on its own,
  the disaggregated ideal; the rung sizes the pools with :func:`core.disaggregation.plan_pools`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from .batching import MAX_NUM_SEQS, SHAREGPT, LengthMix, Requests, draw_requests, simulate, step_table
from .disaggregation import TPOT_TARGET_S, TTFT_TARGET_S, plan_pools
from .paging import BLOCK_SIZE, Allocation, kv_allocation, sequences_fit_on_gpu
from .precision import get_precision
from .scenario import Scenario, ScenarioResult, evaluate_levers
from .units import GB, TFLOP, GiB, fmt_sig, split_words

__all__ = [
    "ARTICLE_ORDER",
    "RUNGS",
    "SCORE_PASSES",
    "Ladder",
    "LadderSettings",
    "LadderStep",
    "Rung",
    "article_start",
    "climb",
    "direct",
    "ladder_start",
]

#: Standard attention moves its score matrix through HBM four times: S written, read for the softmax,
#: P written, read for PV (Dao et al. 2022, FlashAttention, Algorithm 0; article 004, section 05:
#: "write S² ... read S², write S² ... read S²").  FlashAttention keeps it on chip.
SCORE_PASSES = 4


@dataclass(frozen=True)
class LadderSettings:
    """What the rungs pull to, and the request mix they serve.

    Attributes:
        weight_dtype: the precision weight quantization moves to (a weight-precision id).
        spec_k: the speculation depth k speculative decoding moves to.
        mix, n_requests, seed: the request mix (lengths capped at the start's context S).
        block_size: PagedAttention's block, tokens.
        max_num_seqs: the most slots continuous batching runs.
        ttft_target_s, tpot_target_s: disaggregation's latency targets, seconds.
        request_rate: disaggregation's rate, requests/s (None: the rate the state's sequences in flight
            serve, ``B · PP · EP · replicas / ((O − 1) · TPOT)``).
    """

    weight_dtype: str = "int4"
    spec_k: int = 4
    mix: LengthMix = SHAREGPT
    n_requests: int = 1000
    seed: int = 0
    block_size: int = BLOCK_SIZE
    max_num_seqs: int = MAX_NUM_SEQS
    ttft_target_s: float = TTFT_TARGET_S
    tpot_target_s: float = TPOT_TARGET_S
    request_rate: float | None = None


def article_start() -> Scenario:
    """Article 004's default: Llama-3-70B in BF16 at batch 1 (k = 1) on H100 SXMs (section 01), on the
    smallest tensor-parallel split whose weights fit (TP = 2: the tour's "TP = 2: it fits"); the lab's
    other defaults (S = 8,192, GQA on, 3 GiB reserve)."""
    one = Scenario(model="llama-3-70b", gpu="h100-sxm", weight_dtype="bf16", batch=1, spec_k=1)
    return one.clone(tp=one.evaluate().suggested_tp or 1)


def ladder_start(scenario: Scenario) -> tuple[Scenario, str]:
    """Where the ladder (and the serving system around it) starts from ``scenario``, and a note where a reader needs
    one.  A scenario that does not fit starts on the smallest split that does, tensor parallel first and pipeline
    stages past the node (as :func:`article_start`: the lab's default, Llama-3-70B in BF16 on one H100, starts at
    TP = 2; DeepSeek-V3 in BF16 at TP = 8, PP = 4).  Where no split up to the node and 1,024 GPUs holds it, the
    climb starts as given and the note says no rung fits a sequence until a lever frees memory.  With pipeline
    stages the note says that B is per micro-batch and the tokens/s count the PP micro-batches in flight; with a
    config key the lab does not model, that every figure is approximate.  The Ladder and Serving tabs and
    ``python -m core ladder|batching|paging|disaggregation`` all start here.
    """
    r = scenario.evaluate()
    start, notes = scenario, []
    if (r.tp, r.pp, r.ep) != (scenario.tp, scenario.pp, scenario.ep):
        # A split past the model's heads, layers or experts (or EP on a dense model) runs at the model's
        # (core.profiles), said once; the notes after name the split that runs (a trial read "PP = 64" and
        # "PP = 61" for DeepSeek-V3's 61 layers in one paragraph).
        start = scenario.clone(tp=r.tp, pp=r.pp, ep=r.ep)
        notes += [f"{w}." for w in r.warnings if " is more than " in w or " is ignored: " in w]
    given = split_words(r.tp, r.pp)
    if not r.fits and not r.suggested_tp:
        notes.append(f"The scenario does not fit at {given} (weights and KV cache at B = {r.batch}), nor on any split "
                     "up to the node and 1,024 GPUs: it starts as given, and a rung fits no sequence until a lever "
                     "frees memory.")
    elif not r.fits and (r.suggested_tp, r.suggested_pp or 1) != (r.tp, r.pp):
        tp, pp = r.suggested_tp, r.suggested_pp or 1
        start = start.clone(tp=tp, pp=pp)
        notes.append(f"The scenario does not fit at {given} (weights and KV cache at B = {r.batch}): it starts at "
                     f"{split_words(tp, pp)}, the smallest split that fits.")
    if start.pp > 1:  # a trial: "B 1 … 238.5 tokens/s per sequence, 29.8 per GPU" on 32 GPUs, unexplained
        notes.append(f"B is per micro-batch: PP = {start.pp} micro-batches are in flight, and the tokens/s per GPU "
                     "count them all.")
    if r.model.approximate:
        notes.append(r.model.approximate_sentence)
    return start, " ".join(notes)


@dataclass(frozen=True)
class _Mix:
    """The request mix of one climb: drawn once, shared by every rung."""

    requests: Requests
    max_len: int
    allocations: dict

    @property
    def held(self) -> int:
        """Tokens a running sequence holds on average: the scenario's S on the ladder."""
        return max(1, int(round(self.allocations["paged"].used_per_sequence)))

    @property
    def prompt(self) -> int:
        return max(1, int(round(self.requests.prompt.mean())))

    @property
    def output(self) -> int:
        return max(2, int(round(self.requests.output.mean())))

    def reserved(self, paged: bool) -> Allocation:
        return self.allocations["paged" if paged else "contiguous"]


@dataclass(frozen=True)
class _State:
    levers: dict
    applied: frozenset


class _Climb:
    """One climb's shared inputs and memoised evaluations."""

    def __init__(self, start: Scenario, settings: LadderSettings):
        self.start = start
        self.settings = settings
        max_len = int(start.context)
        req = draw_requests(settings.mix, settings.n_requests, settings.seed, max_len)
        self.mix = _Mix(req, max_len, kv_allocation(req.prompt, req.output, max_len, settings.block_size))
        self._results: dict = {}
        self._sims: dict = {}

    def base(self) -> _State:
        levers = {**self.start.levers(), "context": self.mix.held, "prompt_len": self.mix.prompt}
        return _State(levers, frozenset())

    def evaluate(self, levers: dict) -> ScenarioResult:
        key = tuple(sorted(levers.items()))
        if key not in self._results:
            self._results[key] = evaluate_levers(levers, self.start.catalogue)
        return self._results[key]

    def fit(self, levers: dict, applied) -> int:
        """The largest batch whose KV fits under the allocation in effect (paged once PagedAttention is on)."""
        r = self.evaluate(levers)
        reserved = self.mix.reserved("paged_attention" in applied).reserved_per_sequence
        return sequences_fit_on_gpu(r, reserved)

    def simulation(self, levers: dict, slots: int):
        """Static and continuous batching of the mix (a backlog) in ``slots`` slots."""
        key = (tuple(sorted((k, v) for k, v in levers.items() if k != "batch")), slots)
        if key not in self._sims:
            scenario = self.start.clone(**levers)
            table = step_table(scenario, self.mix.requests, slots)
            self._sims[key] = (simulate(self.mix.requests, table, "static"),
                               simulate(self.mix.requests, table, "continuous"))
        return self._sims[key]

    def batch(self, levers: dict, applied) -> int:
        """B of a state: the start's until continuous batching, then the batch it sustains."""
        if "continuous_batching" not in applied:
            return int(self.start.batch)
        slots = min(self.fit(levers, applied), self.settings.max_num_seqs)
        if slots < 1:
            return int(self.start.batch)
        return int(round(self.simulation(levers, slots)[1].sustained_batch))

    def settle(self, levers: dict, applied) -> _State:
        """The state with its B derived from its levers and rungs."""
        applied = frozenset(applied)
        return _State({**levers, "batch": self.batch(levers, applied)}, applied)


@dataclass(frozen=True)
class Rung:
    """One rung of the ladder.

    Attributes:
        id: the rung's id (:data:`ARTICLE_ORDER`).
        title: its name, as the article writes it.
        raises: what it pulls in the article's terms (``"B"``, ``"p"``, ``"k"``, ``"capacity"``,
            ``"traffic"``, ``"pools"``).
        models: what the lab models for it.
        assumes: what that assumes.
        levers: the lever changes it makes (a function of the settings; ``{}`` for a rung that is not a lever).
        effect: its own numbers, ``effect(climb, before, after) -> (summary, dict)``.
    """

    id: str
    title: str
    raises: str
    models: str
    assumes: str
    levers: Callable[[LadderSettings], dict]
    effect: Callable

    def apply(self, climb: _Climb, state: _State) -> tuple[_State, str, dict]:
        """The next state, a one-line summary of what this rung pulled, and its own numbers."""
        after = climb.settle({**state.levers, **self.levers(climb.settings)}, state.applied | {self.id})
        summary, effect = self.effect(climb, state, after)
        return after, summary, effect


def _b_change(before: _State, after: _State) -> str:
    b0, b1 = before.levers["batch"], after.levers["batch"]
    return f"; B {b0} → {b1}" if b0 != b1 else ""


def _continuous(climb: _Climb, before: _State, after: _State):
    fit = climb.fit(after.levers, after.applied)
    slots = min(fit, climb.settings.max_num_seqs)
    if slots < 1:
        return "B unchanged: no sequence's KV fits beside the weights", {"fit": fit, "slots": 0}
    static, cont = climb.simulation(after.levers, slots)
    lanes = cont.lanes  # PP micro-batches × EP groups, each with its own slots (core.batching)
    each = f" in each of {lanes} lanes (micro-batches × EP groups)" if lanes > 1 else ""
    summary = (f"B {before.levers['batch']} → {after.levers['batch']}: {slots} slots{each} kept full; static "
               f"batching in the same slots sustains {static.sustained_batch:.1f} sequences a step")
    return summary, {
        "fit": fit, "slots": slots,
        "allocation": "paged" if "paged_attention" in after.applied else "contiguous",
        "static": static.summary(), "continuous": cont.summary(),
        "source": "Orca (Yu et al., OSDI 2022), iteration-level scheduling; core.batching",
    }


def _quantization(climb: _Climb, before: _State, after: _State):
    r0, r1 = climb.evaluate(before.levers), climb.evaluate(after.levers)
    # The weights freed on one GPU, that of the stage that runs out first after the rung: the two scenarios' free
    # memory can be two stages' (Nemotron-H at PP = 4 "freed" 20.7 GiB, more than the 3/4 of its 25.3 GiB of weights
    # the stage the readouts name holds).
    stage = r1.memory_stage
    freed = (r0.deployment.profile.stages[stage].weight_bytes_held
             - r1.deployment.profile.stages[stage].weight_bytes_held)
    where = "per GPU" if r1.pp == 1 else f"on the GPUs of stage {stage + 1} of {r1.pp}, which run out first"
    # A format that moves the compute roof says so where its tokens/s fall (a trial: FP8 → INT4 weight-only, 76,653
    # → 44,143 tokens/s per GPU beside "p 1 → 0.5", the BF16 roof said only far below)
    roof = (f"; the compute roof moves from {fmt_sig(r0.peak_flop_per_s / TFLOP)} to "
            f"{fmt_sig(r1.peak_flop_per_s / TFLOP)} TFLOP/s ({r1.compute_roof_reason})"
            if r1.peak_flop_per_s != r0.peak_flop_per_s else "")
    summary = (f"p {r0.bytes_per_weight:g} → {r1.bytes_per_weight:g} bytes/weight; {freed / GiB:,.1f} GiB more for "
               f"KV {where}" + roof + _b_change(before, after))
    return summary, {"bytes_per_weight": [r0.bytes_per_weight, r1.bytes_per_weight],
                     "weight_bytes_per_gpu": [r0.weight_bytes_held, r1.weight_bytes_held],
                     "free_bytes_per_gpu": [r0.free_for_kv_bytes, r1.free_for_kv_bytes],
                     "freed_bytes_per_gpu": freed, "stage": stage,
                     "weight_format": r1.weight_format}


def _speculation(climb: _Climb, before: _State, after: _State):
    r0, r1 = climb.evaluate(before.levers), climb.evaluate(after.levers)
    change = (f"k {r0.spec_k} → {r1.spec_k}" if r0.spec_k != r1.spec_k
              else f"k = {r1.spec_k} already in the start")  # the levers had it: the rung moves nothing
    summary = (f"{change}: {r1.expected_tokens_per_step:.2f} tokens per verify at "
               f"α = {r1.acceptance:g}, {r1.speculative_speedup:.2f}× the tokens/s of k = 1")
    # From a start already speculating (k = 3 → 4), "of k = 1" alone was read as the move's own gain: the move's is
    # the tokens/s after over before (the batch the same, their speed-ups' ratio).
    over_before = r1.output_tokens_per_s_aggregate / r0.output_tokens_per_s_aggregate
    if r0.spec_k not in (1, r1.spec_k):
        summary += f" ({over_before:.2f}× those of k = {r0.spec_k})"
    return summary, {"k": [r0.spec_k, r1.spec_k], "acceptance": r1.acceptance,
                     "expected_tokens_per_step": r1.expected_tokens_per_step,
                     "speedup_over_k1": r1.speculative_speedup, "speedup_over_before": over_before}


def _gqa(climb: _Climb, before: _State, after: _State):
    r0, r1 = climb.evaluate(before.levers), climb.evaluate(after.levers)
    model = r1.model
    without = {**after.levers, "gqa": False}
    fit_without, fit_with = climb.fit(without, after.applied), climb.fit(after.levers, after.applied)
    kv_without = model.kv_bytes_per_token(r1.kv_bytes_per_element, False)
    kind = "MLA's latent" if model.mla else f"{model.n_kv_heads} KV heads for {model.n_heads} query heads"
    ratio = kv_without / r1.kv_bytes_per_token
    if r0.gqa:
        # (No sequence fitting either way says so: "without it 0 sequences would fit, not 0" read as a slip.)
        summary = (f"capacity: already in the start ({kind}): {ratio:.0f}× less KV per token; " + (
            f"without it {fit_without} sequences would fit, not {fit_with}" if fit_with else
            "no sequence fits with it or without it"))
    else:
        summary = (f"capacity: KV per token {r0.kv_bytes_per_token / 1024:,.0f} → {r1.kv_bytes_per_token / 1024:,.0f}"
                   f" KiB ({kind}, {ratio:.0f}×); fit {fit_without} → {fit_with}" + _b_change(before, after))
    return summary, {"already_on": bool(r0.gqa), "mla": model.mla is not None,
                     "kv_bytes_per_token": [r0.kv_bytes_per_token, r1.kv_bytes_per_token],
                     "kv_bytes_per_token_without": kv_without, "reduction": ratio,
                     "fit_without": fit_without, "fit_with": fit_with}


def _paging(climb: _Climb, before: _State, after: _State):
    mix = climb.mix
    contiguous, paged = mix.reserved(False), mix.reserved(True)
    fit0, fit1 = climb.fit(before.levers, before.applied), climb.fit(after.levers, after.applied)
    summary = (f"capacity: reserving {contiguous.reserved_per_sequence:,.0f} tokens per sequence wasted "
               f"{100 * contiguous.waste_fraction:.0f} % of the KV, blocks of {climb.settings.block_size} waste "
               f"{100 * paged.waste_fraction:.1f} %; fit {fit0} → {fit1}" + _b_change(before, after))
    return summary, {
        "block_size": climb.settings.block_size,
        "waste_fraction": {"contiguous": contiguous.waste_fraction, "paged": paged.waste_fraction},
        "reserved_per_sequence": {"contiguous": contiguous.reserved_per_sequence,
                                  "paged": paged.reserved_per_sequence},
        "held_per_sequence": paged.used_per_sequence, "fit": [fit0, fit1],
        "source": "Kwon et al. (vLLM), SOSP 2023; existing systems waste 60-80 %, paging under 4 % "
                  "(blog.vllm.ai/2023/06/20/vllm.html); core.paging",
    }


def _score_bytes(r: ScenarioResult, attention_flop: float, latent: bool) -> float:
    """HBM bytes standard attention's score matrix would move for ``attention_flop`` of attention: one score
    per (query, key, head, layer) = FLOP × h_q / FLOP-per-key (MLA's on the ``latent`` in decode), written
    and read :data:`SCORE_PASSES` times in the activation precision (BF16)."""
    scores = attention_flop * r.model.n_heads / r.model.attention_flop_per_key(latent)
    return SCORE_PASSES * scores * get_precision("bf16").bytes_per_element


def _flash(climb: _Climb, before: _State, after: _State):
    r = climb.evaluate(after.levers)
    step = _score_bytes(r, r.attention_flop_per_step, r.attends_to_latent)
    prefill_flop = r.model.prefill_attention_flop(int(after.levers["prompt_len"]))
    prefill = _score_bytes(r, float(prefill_flop) * r.deployment.plan.attention_share(), False)
    share = step / (step + r.bytes_per_step)
    summary = (f"traffic removed: {step / GB:,.2f} GB per decode step per GPU ({100 * share:.0f} % of what it would "
               f"move), {prefill / GB:,.2f} GB per prompt's prefill")
    return summary, {
        "traffic_removed_bytes_per_step": step, "step_bytes": r.bytes_per_step,
        "time_at_bandwidth_s": step / r.bandwidth,
        "traffic_removed_bytes_per_prefill": prefill, "prefill_time_at_bandwidth_s": prefill / r.bandwidth,
        "source": "Dao et al. 2022 (FlashAttention), Algorithm 0; article 004, section 05",
    }


def _disaggregation(climb: _Climb, before: _State, after: _State):
    s = climb.settings
    r = climb.evaluate(after.levers)
    mix = climb.mix
    rate = s.request_rate or r.sequences_in_flight / ((mix.output - 1) * r.tpot_s)
    fit = climb.fit(after.levers, after.applied)
    plan = plan_pools(climb.start.clone(**after.levers), rate, mix.prompt, mix.output, s.ttft_target_s,
                      s.tpot_target_s, context=mix.held, max_batch=min(fit, s.max_num_seqs))
    split = plan.disaggregated_gpus
    given = "" if s.request_rate else f" (what its {r.sequences_in_flight:,} sequences in flight serve)"
    summary = (f"pools split at {rate:,.2f} req/s{given}: prefill {plan.prefill.gpus} + decode "
               f"{plan.decode.gpus} GPUs against {plan.colocated.gpus} colocated" if split is not None
               else "pools: the targets cannot be met (see the pools)")
    return summary, plan.to_json()


RUNGS: tuple[Rung, ...] = (
    Rung("continuous_batching", "Continuous batching", "B",
         "Iteration-level scheduling (Orca, Yu et al. OSDI 2022): sequences join and leave every step, so the batch "
         "is the slots the KV capacity allows (capped at vLLM's 256), kept full; core.batching simulates the mix "
         "both ways.",
         "A backlog of requests (the throughput setting); B is the batch sustained while requests wait.",
         lambda s: {}, _continuous),
    Rung("weight_quantization", "Weight quantization", "p",
         "The weight-precision lever p: fewer bytes per weight read every step, and memory freed for KV. GPTQ "
         "reports ~3.25× end to end on A100, AWQ ~3.2× (article 004, section 06).",
         "Weight-only: the arithmetic stays on the BF16 roof; accuracy is not modelled.",
         lambda s: {"weight_dtype": s.weight_dtype}, _quantization),
    Rung("speculative_decoding", "Speculative decoding", "k",
         "The speculation lever k: k tokens verified per read of the weights, E = (1 − α^k)/(1 − α) accepted "
         "(Leviathan et al. 2023); reported 2-3× (article 004, section 06).",
         "Acceptance α is the scenario's lever; the draft model's cost and memory are not counted.",
         lambda s: {"spec_k": s.spec_k}, _speculation),
    Rung("gqa_mla", "Grouped-query attention and MLA", "capacity",
         "The GQA lever: K and V kept for n_kv_heads, not every query head (n_heads/n_kv_heads less KV, 8× for "
         "Llama-3-70B); a model with multi-head latent attention caches its latent (reported ~93 % less).",
         "The model's own KV heads or latent; on a model that ships with GQA the rung is already in the start.",
         lambda s: {"gqa": True}, _gqa),
    Rung("paged_attention", "PagedAttention", "capacity",
         "KV in blocks (vLLM, Kwon et al. SOSP 2023): a sequence reserves the blocks it fills, not the maximum "
         "length; the batch that fits comes from core.paging.",
         "Waste averaged over the decode steps of the mix; external fragmentation is not modelled.",
         lambda s: {}, _paging),
    Rung("flash_attention", "FlashAttention", "traffic",
         "The lab's step already counts attention as FlashAttention computes it (the KV read once, no score "
         "matrix in HBM); the rung names the traffic that removes: the scores written and read four times.",
         "Scores in BF16, standard attention's four passes (Dao et al. 2022, Algorithm 0).",
         lambda s: {}, _flash),
    Rung("disaggregation", "Prefill/decode disaggregation", "pools",
         "Prefill and decode on separate pools, each sized against its own latency target (DistServe, Zhong et al. "
         "OSDI 2024; core.disaggregation). The lab's TTFT and TPOT are each phase on its own: the split's.",
         "Mean-latency targets (MLPerf llama2-70b Server: 2 s, 200 ms); the KV transfer between pools is not "
         "counted.",
         lambda s: {}, _disaggregation),
)

#: What article 004, section 06, reports for a rung, in its words (each a test: tests/unit/test_articles.py).
REPORTED: dict[str, str] = {
    "continuous_batching": "The ceiling is the ridge: past B ≈ 295 on an H100 you are compute-bound and further "
                           "batching buys throughput only at the cost of latency.",
    "weight_quantization": "GPTQ reports ~3.25× end-to-end on A100; AWQ ~3.2×.",
    "speculative_decoding": "Reported 2–3×.",
    "gqa_mla": "GQA cuts KV by n_heads/n_kv_heads (8× for Llama-3-70B). DeepSeek’s multi-head latent attention "
               "compresses K and V into a shared low-rank latent, reported at roughly 93% reduction.",
    "paged_attention": "vLLM manages KV in fixed blocks with an indirection table … driving waste to near zero and "
                       "reporting 2–4× throughput at equal latency.",
}
#: The rungs whose reported figure is a speedup: their note sets the climb's own ratio beside it.
SPEEDUP_RUNGS = frozenset({"weight_quantization", "speculative_decoding", "paged_attention"})

#: The rung ids in article 004's order.
ARTICLE_ORDER: tuple[str, ...] = tuple(r.id for r in RUNGS)
_BY_ID = {r.id: r for r in RUNGS}


@dataclass(frozen=True)
class LadderStep:
    """The state after one rung (or the start), and what the rung pulled.

    Attributes:
        rung: the rung's id, None for the start.
        title: the rung's (or the start's) name.
        models, assumes: what the lab models for it and what that assumes.
        summary: what it pulled, in one line.
        effect: its own numbers (JSON-ready).
        levers: the scenario's levers after it (ids, SI units), ``Scenario(**levers)`` reproduces it.
        applied: the rungs applied so far, in order.
        fit: the largest batch whose KV fits under the allocation in effect.
        result: ``Scenario(**levers).evaluate()``.
        without_speculation: where the step verifies k > 1 tokens, is not memory-bound, and the same levers with
            k = 1 give more tokens/s per GPU (the verification's arithmetic is no longer free),
            ``Scenario(**levers, spec_k=1).evaluate()``; else None (a memory-bound step with a low acceptance may
            also lose to k = 1: that is the acceptance's doing, not the ridge's).  "It works precisely because you
            were memory-bound" (article 004, section 06).
    """

    rung: str | None
    title: str
    models: str
    assumes: str
    summary: str
    effect: dict
    levers: dict
    applied: tuple[str, ...]
    fit: int
    result: ScenarioResult = field(repr=False)
    without_speculation: ScenarioResult | None = field(default=None, repr=False)

    def numbers(self) -> dict:
        """The numbers after the rung (SI units): B, k, p, the intensity on the weights and counting KV reads,
        the ridge, the attainable FLOP/s at each (the point on the roofline: ``intensity``,
        ``attainable_flop_per_s``), the bound, tokens/s per sequence and per GPU, the largest
        batch that fits, TTFT and TPOT.  The rates and times are the lab's roofline ceilings, not a prediction
        of a measured engine."""
        r = self.result
        return {
            "batch": r.batch, "k": r.spec_k, "p": r.bytes_per_weight, "gqa": r.gqa,
            "intensity": r.arithmetic_intensity_weights, "intensity_with_kv": r.arithmetic_intensity_with_kv,
            "ridge_point": r.ridge_point, "attainable_flop_per_s": r.attainable_flop_per_s_weights,
            "attainable_flop_per_s_with_kv": r.attainable_flop_per_s_with_kv,
            "bound": r.bound, "tokens_per_s_per_sequence": r.tokens_per_s_per_sequence,
            "tokens_per_s_per_gpu": r.tokens_per_s_per_gpu,
            "max_batch": self.fit, "ttft_s": r.ttft_s, "tpot_s": r.tpot_s, "fits": r.fits,
            "gpus": r.gpus_total,
        }

    def speculation_numbers(self) -> dict | None:
        """Where k > 1 no longer pays (:attr:`without_speculation`): the same step at k = 1 (``tokens_per_s_per_gpu``,
        ``tpot_s``) and a verify pass of this step (``verify_s`` = TPOT × E, all stages; ``e_tokens``; and
        ``verify_steps``, the verify in k = 1 steps); None elsewhere.  SI units."""
        k1 = self.without_speculation
        if k1 is None:
            return None
        e = self.result.expected_tokens_per_step
        verify = self.result.tpot_s * e  # TPOT = verify / E
        return {"tokens_per_s_per_gpu": k1.tokens_per_s_per_gpu, "tpot_s": k1.tpot_s, "verify_s": verify, "e_tokens": e,
                "verify_steps": verify / k1.tpot_s}

    @property
    def speculation_cost(self) -> str:
        """What k > 1 costs where it no longer pays (:meth:`speculation_numbers`), in one line; ``""`` elsewhere."""
        k1 = self.speculation_numbers()
        if k1 is None:
            return ""
        n = self.numbers()
        return (f"{n['bound']}-bound, k = {n['k']} costs: a verify takes {k1['verify_steps']:.2f} × the k = 1 step "
                f"({1e3 * k1['verify_s']:.2f} ms against {1e3 * k1['tpot_s']:.2f} ms) for {k1['e_tokens']:.2f} "
                f"tokens, so k = 1 at B = {n['batch']:,} gives {k1['tokens_per_s_per_gpu']:,.1f} tokens/s per GPU "
                f"(here {n['tokens_per_s_per_gpu']:,.1f}); speculation pays while a verify costs less than its tokens "
                "in steps")

    def to_json(self) -> dict:
        """The fields as a strict-JSON-ready dict (SI units: seconds, bytes, FLOP, tokens)."""
        k1 = self.speculation_numbers()
        return {"rung": self.rung, "title": self.title, "models": self.models, "assumes": self.assumes,
                "summary": self.summary, "numbers": self.numbers(), "effect": self.effect,
                "levers": dict(self.levers), "applied": list(self.applied),
                "without_speculation": None if k1 is None else {key: k1[key] for key in ("tokens_per_s_per_gpu",
                                                                                         "tpot_s")}}


@dataclass(frozen=True)
class Ladder:
    """A climb: the start and one :class:`LadderStep` per rung, in the order applied."""

    start: Scenario
    settings: LadderSettings
    rungs: tuple[str, ...]
    steps: tuple[LadderStep, ...]
    mix_held_context: int
    mix_prompt: int
    mix_output: int

    @property
    def final(self) -> LadderStep:
        return self.steps[-1]

    def article_notes(self) -> list[str]:
        """Per step, what article 004 (section 06) reports for its rung beside what the lab's climb gives here
        (:data:`REPORTED`), ``""`` for the start and a rung the article gives no figure for.

        The ratios are of the tokens/s as the table prints them (one decimal), this rung's row over the row above:
        engines' end-to-end speedups measured on their own workloads, against this climb's ceilings.  Continuous
        batching's line gives the batch at the ridge on a dense model, ``B = I_ridge·p / (2·k)``, at the p and k
        of the row above (article 004: "past B ≈ 295 on an H100 you are compute-bound").
        """
        notes = [""]
        for before, step in zip(self.steps, self.steps[1:], strict=False):
            said = REPORTED.get(step.rung)
            if said is None:
                notes.append("")
                continue
            a, b = before.numbers(), step.numbers()
            here = ""
            if step.rung == "continuous_batching":
                if not step.result.model.moe:
                    ridge_b = a["ridge_point"] * a["p"] / (2 * a["k"])
                    here = (f"here the ridge is at B = {fmt_sig(a['ridge_point'])} × {fmt_sig(a['p'])} / (2 × "
                            f"{a['k']}) = {fmt_sig(ridge_b)}, and B stops at {b['batch']:,} (what the KV capacity "
                            f"allows, at most {self.settings.max_num_seqs:,})")
            elif step.rung in SPEEDUP_RUNGS and min(round(a["tokens_per_s_per_sequence"], 1),
                                                    round(a["tokens_per_s_per_gpu"], 1)) > 0:
                # (A climb that fits no sequence has no rate to divide by: the quote stands alone.)
                seq = [round(n["tokens_per_s_per_sequence"], 1) for n in (a, b)]
                gpu = [round(n["tokens_per_s_per_gpu"], 1) for n in (a, b)]
                tpot = [1e3 * n["tpot_s"] for n in (a, b)]
                latency = (f"; TPOT {tpot[0]:.2f} → {tpot[1]:.2f} ms, not at equal latency" if tpot[1] > 1.05 * tpot[0]
                           else "")
                here = (f"here {seq[1]:,.1f} / {seq[0]:,.1f} = {seq[1] / seq[0]:.2f}× per sequence, "
                        f"{gpu[1]:,.1f} / {gpu[0]:,.1f} = {gpu[1] / gpu[0]:.2f}× per GPU (ceilings; the rung's "
                        f"row over the row above){latency}")
            notes.append(f'Article 004 reports: "{said}"' + (f"; {here}" if here else ""))
        return notes

    def speculation_notes(self) -> list[str]:
        """Per step, its :attr:`LadderStep.speculation_cost` where it starts or changes, ``""`` elsewhere: what the
        Ladder tab and ``python -m core ladder`` say once, under the rung where it starts."""
        costs = [step.speculation_cost for step in self.steps]
        return [cost if cost != before else "" for cost, before in zip(costs, ["", *costs[:-1]], strict=True)]

    @cached_property
    def final_scenario(self) -> Scenario:
        """The end state as a scenario of its own."""
        return self.start.clone(**self.final.levers)

    def to_json(self) -> dict:
        """The fields as a strict-JSON-ready dict (SI units: seconds, bytes, FLOP, tokens)."""
        s = self.settings
        return {
            "start": dict(self.start.levers()), "rungs": list(self.rungs),
            "settings": {"weight_dtype": s.weight_dtype, "spec_k": s.spec_k, "mix": s.mix.to_json(),
                         "requests": s.n_requests, "seed": s.seed, "block_size": s.block_size,
                         "max_num_seqs": s.max_num_seqs, "ttft_target_s": s.ttft_target_s,
                         "tpot_target_s": s.tpot_target_s, "request_rate": s.request_rate},
            "mix": {"held_context": self.mix_held_context, "prompt": self.mix_prompt, "output": self.mix_output,
                    "max_len": int(self.start.context)},
            "steps": [{**step.to_json(), "article": note}
                      for step, note in zip(self.steps, self.article_notes(), strict=True)],
        }


def _check(rungs) -> tuple[str, ...]:
    rungs = tuple(rungs)
    unknown = [r for r in rungs if r not in _BY_ID]
    if unknown:
        raise ValueError(f"unknown rung {unknown[0]!r}; accepted: {', '.join(ARTICLE_ORDER)}")
    if len(set(rungs)) != len(rungs):
        raise ValueError("a rung appears twice")
    return rungs


def _step(climb: _Climb, state: _State, order: tuple[str, ...], rung: Rung | None, summary: str,
          effect: dict) -> LadderStep:
    r = climb.evaluate(state.levers)
    if rung is None:
        mix = climb.mix
        models = (f"{r.model.name} in {r.weight_format} at batch {r.batch} on {r.gpus_total} × {r.gpu.name} "
                  f"({split_words(r.tp, r.pp, r.ep, r.replicas)}), serving {climb.settings.mix.label}: a sequence "
                  f"holds {mix.held:,} tokens on average and the engine reserves S = {mix.max_len:,} for each")
        # A teacher's trial read the start row against the readouts' S = 8,192 (1,068 tokens/s beside 311): its S
        # is the mix's mean, said where the row is.
        title = f"Start (S = {mix.held:,}, the mix's mean)"
        assumes = "The scenario's S and prompt are the mix's means; nothing of the ladder applied."
    else:
        title, models, assumes = rung.title, rung.models, rung.assumes
    k1 = None
    if state.levers.get("spec_k", 1) > 1 and r.bound != "memory":  # past the ridge, does verifying k still pay?
        k1 = climb.evaluate({**state.levers, "spec_k": 1})
        k1 = k1 if k1.tokens_per_s_per_gpu > r.tokens_per_s_per_gpu else None
    return LadderStep(rung.id if rung else None, title, models, assumes, summary, effect, dict(state.levers), order,
                      climb.fit(state.levers, state.applied), r, k1)


def climb(start: Scenario | None = None, rungs=ARTICLE_ORDER, settings: LadderSettings | None = None) -> Ladder:
    """Apply ``rungs`` one after another from ``start``.

    Args:
        start: the starting scenario (default :func:`article_start`); its context S is the engine's maximum
            sequence length, its batch the B before continuous batching.
        rungs: rung ids in the order to apply (any subset of :data:`ARTICLE_ORDER`, each once).
        settings: what the rungs pull to and the request mix (:class:`LadderSettings`).

    Returns:
        a :class:`Ladder` whose ``steps[0]`` is the start.

    Raises:
        ValueError: an unknown or repeated rung, or an invalid setting.
    """
    start = start or article_start()
    settings = settings or LadderSettings()
    order = _check(rungs)
    c = _Climb(start, settings)
    state = c.settle(c.base().levers, frozenset())
    steps = [_step(c, state, (), None, "", {})]
    for i, rung_id in enumerate(order):
        rung = _BY_ID[rung_id]
        state, summary, effect = rung.apply(c, state)
        steps.append(_step(c, state, order[: i + 1], rung, summary, effect))
    return Ladder(start, settings, order, tuple(steps), c.mix.held, c.mix.prompt, c.mix.output)


def direct(start: Scenario | None = None, rungs=ARTICLE_ORDER, settings: LadderSettings | None = None) -> Scenario:
    """The scenario the same levers give directly: every rung's lever set at once and B derived once for the
    whole set of rungs (no walk).  :func:`climb`'s end state equals it, whatever the order."""
    start = start or article_start()
    settings = settings or LadderSettings()
    order = _check(rungs)
    c = _Climb(start, settings)
    levers = dict(c.base().levers)
    for rung_id in order:
        levers.update(_BY_ID[rung_id].levers(settings))
    return start.clone(**c.settle(levers, frozenset(order)).levers)
