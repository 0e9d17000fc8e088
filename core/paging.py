"""PagedAttention against contiguous KV allocation: reserved, used, wasted, and what fits.

Kwon et al., "Efficient Memory Management for Large Language Model Serving with
PagedAttention", SOSP 2023 (vLLM).  Before it, an engine stored each request's
KV cache in one contiguous chunk reserved up front; PagedAttention stores it in
fixed blocks of ``block_size`` tokens (16 by default, the paper's section 7.2)
allocated as the sequence grows, so a sequence wastes at most the unfilled part
of its last block.

For one request mix (:class:`core.batching.LengthMix`) the module counts, over every
decode step of every request (step t = 1 … O − 1 holds P + t tokens,
:func:`core.batching.held_token_steps`):

* **used**: ``Σ (P + t)`` token-steps, the cache the sequences really hold;
* **reserved**, per policy (the paper's baselines, section 6.1):
  ``contiguous`` (Orca (Max)): every running sequence reserves ``max_len`` tokens;
  ``pow2`` (Orca (Pow2)): ``P`` plus the output rounded up to a power of two (at most 2×);
  ``oracle`` (Orca (Oracle)): exactly ``P + O``, its final length, from its first step;
  ``paged`` (vLLM): ``ceil((P + t) / block_size) · block_size``;
* **waste** = 1 − used / reserved, and the **sequences that fit** in the memory left
  beside the weights: ``floor(free / bytes(reserved per running sequence))``, hence the
  batch (capped at :data:`core.batching.MAX_NUM_SEQS`) and the decode throughput the lab
  gives at that batch.

External fragmentation (holes between contiguous chunks of different sizes, the
paper's Fig. 2 "External frag. & Others") depends on the allocator and is not
modelled: the contiguous policies' waste here is reservation plus internal
fragmentation only.

Reproduced (tests/unit/test_paging.py), for ShareGPT lengths (:data:`core.batching.SHAREGPT`)
and OPT's 2,048-token maximum:

* the vLLM announcement's contrast (blog.vllm.ai/2023/06/20/vllm.html): "existing systems
  waste 60% – 80% of memory" (:data:`EXISTING_WASTE`) — the lab's contiguous policy
  lands inside; "a mere waste of under 4%" with paging (:data:`PAGED_WASTE_BELOW`);
* the paper's Fig. 2 (token states as a share of KV memory: Orca (Max) 20.4 %, Orca (Pow2)
  26.8 %, Orca (Oracle) 38.2 %, vLLM 96.3 %, :data:`FIG2_TOKEN_STATES`) with external
  fragmentation taken out of each bar;
* Fig. 13a: OPT-13B on one A100-40GB (Table 1: 12 GB for KV, 15.7K token slots of
  800 KB) batches 7.00 requests under Orca (Max) and 30.42 under vLLM.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .batching import MAX_NUM_SEQS, SHAREGPT, LengthMix, draw_requests, held_token_steps
from .scenario import Scenario, ScenarioResult, evaluate_levers
from .serving import kv_table_per_gpu
from .units import GiB

__all__ = [
    "BLOCK_SIZE",
    "EXISTING_WASTE",
    "FIG2_EXTERNAL",
    "FIG2_TOKEN_STATES",
    "PAGED_WASTE_BELOW",
    "POLICIES",
    "Allocation",
    "PagingResult",
    "compare_paging",
    "kv_allocation",
    "sequence_bytes",
    "sequences_fit_on_gpu",
    "sequences_fit",
]

#: vLLM's default KV block, tokens (Kwon et al. 2023, section 7.2: "vLLM sets its default block size to 16").
BLOCK_SIZE = 16

#: The allocation policies, contiguous first.
POLICIES = ("contiguous", "pow2", "oracle", "paged")

#: "existing systems waste 60% – 80% of memory due to fragmentation and over-reservation"
#: (vLLM announcement, blog.vllm.ai/2023/06/20/vllm.html, 20 June 2023): the paper's section 3 and Fig. 2,
#: "only 20.4% - 38.2% of the KV cache memory is used to store the actual token states", rounded.
EXISTING_WASTE = (0.60, 0.80)

#: "In PagedAttention, memory waste only happens in the last block of a sequence. In practice, this
#: results in near-optimal memory usage, with a mere waste of under 4%." (the same announcement).
PAGED_WASTE_BELOW = 0.04

#: Kwon et al. 2023, Fig. 2 ("Average percentage of memory wastes in different LLM serving systems
#: during the experiment in §6.2"): the share of KV memory holding token states, printed on the bars.
FIG2_TOKEN_STATES = {"contiguous": 0.204, "pow2": 0.268, "oracle": 0.382, "paged": 0.963}

#: The same figure's "External frag. & Others" segment per bar (none printed for vLLM).
FIG2_EXTERNAL = {"contiguous": 0.089, "pow2": 0.416, "oracle": 0.366, "paged": 0.0}


@dataclass(frozen=True)
class Allocation:
    """One policy's KV accounting over a stream's decode steps.

    Attributes:
        policy: one of :data:`POLICIES`.
        reserved_token_steps: Σ over decode steps of the tokens each running sequence reserves.
        used_token_steps: Σ of the tokens it holds (``P + t``).
        steps: decode steps summed over requests, ``Σ (O − 1)``.
    """

    policy: str
    reserved_token_steps: float
    used_token_steps: float
    steps: float

    @property
    def waste_fraction(self) -> float:
        """1 − used / reserved, in [0, 1]."""
        return 1.0 - self.used_token_steps / self.reserved_token_steps

    @property
    def reserved_per_sequence(self) -> float:
        """Tokens a running sequence reserves, averaged over decode steps (what memory must hold per slot)."""
        return self.reserved_token_steps / self.steps

    @property
    def used_per_sequence(self) -> float:
        """Tokens a running sequence holds, averaged over decode steps (:func:`core.batching.mean_held_context`)."""
        return self.used_token_steps / self.steps


def _ceil_sum(n, b: int):
    """``Σ_{L=1..n} ceil(L / b)`` for whole n >= 0 (broadcasts): with n = q·b + r, ``b·q(q+1)/2 + r·(q+1)``."""
    n = np.asarray(n, dtype=np.int64)
    q, r = np.divmod(n, b)
    return b * q * (q + 1) // 2 + r * (q + 1)


def kv_allocation(prompt, output, max_len: int, block_size: int = BLOCK_SIZE) -> dict[str, Allocation]:
    """Reserved and used KV token-steps of every policy for requests of lengths ``prompt``, ``output``.

    Args:
        prompt, output: P and O per request, whole tokens, arrays of one shape (``P + O <= max_len``).
        max_len: the engine's maximum sequence length, tokens (what ``contiguous`` reserves).
        block_size: tokens per KV block for ``paged`` (>= 1).

    Returns:
        ``{policy: Allocation}`` for each of :data:`POLICIES`.

    Raises:
        ValueError: block_size < 1, a request longer than ``max_len``, or no decode step at all.
    """
    if block_size < 1:
        raise ValueError("the block size must be at least 1 token")
    p = np.asarray(prompt, dtype=np.int64)
    o = np.asarray(output, dtype=np.int64)
    if np.any(p + o > max_len):
        raise ValueError(f"a request is longer than max_len = {max_len} tokens")
    d = o - 1  # decode steps per request
    used, steps = held_token_steps(p, o)
    if steps <= 0:
        raise ValueError("the requests have no decode step (every output is one token)")
    pow2 = np.minimum(p + 2 ** np.ceil(np.log2(np.maximum(o, 1))).astype(np.int64), max_len)
    # paged: Σ_{t=1..O-1} ceil((P+t)/b)·b = b·(F(P+O−1) − F(P)) with F(n) = Σ_{L<=n} ceil(L/b)
    paged = block_size * (_ceil_sum(p + d, block_size) - _ceil_sum(p, block_size))
    reserved = {
        "contiguous": float(max_len) * steps,
        "pow2": float((pow2 * d).sum()),
        "oracle": float(((p + o) * d).sum()),
        "paged": float(paged.sum()),
    }
    return {k: Allocation(k, reserved[k], float(used), float(steps)) for k in POLICIES}


def sequences_fit(free_bytes: float, bytes_per_sequence: float) -> int:
    """Whole sequences of ``bytes_per_sequence`` bytes that fit in ``free_bytes`` (0 when none or nothing free)."""
    if bytes_per_sequence <= 0:
        raise ValueError("a sequence must hold some bytes")
    return int(max(free_bytes, 0.0) // bytes_per_sequence)


def sequence_bytes(r: ScenarioResult, tokens: float) -> float:
    """Bytes one GPU holds for one sequence of ``tokens`` KV tokens, on the pipeline stage that runs out first
    (:func:`core.serving.kv_table_per_gpu`: its layers' cache and fixed state, PP micro-batches in flight), as the
    scenario's ``max_batch`` counts it."""
    return _per_gpu(r, tokens)[0]


def sequences_fit_on_gpu(r: ScenarioResult, tokens: float) -> int:
    """Whole sequences of ``tokens`` KV tokens that fit beside the weights and the reserve on every GPU of ``r``'s
    split: on the stage that runs out first, against that stage's room (Nemotron-H at PP = 4: 63 at S = 8,192, as
    ``max_batch``, where one GPU's average share of the cache against the scenario's free memory gave 58)."""
    per_sequence, room = _per_gpu(r, tokens)
    return sequences_fit(room, per_sequence)


def _per_gpu(r: ScenarioResult, tokens: float) -> tuple[float, float]:
    table, room = kv_table_per_gpu(r.deployment.profile, [float(tokens)], [1], r.kv_bytes_per_element, r.gqa)
    return float(table[0, 0]), float(room[0])


@dataclass(frozen=True)
class PagingResult:
    """The policies side by side for one scenario and request mix.

    Attributes:
        mix, max_len, block_size, seed: what was compared.
        allocations: ``{policy: Allocation}``.
        free_bytes: memory one GPU has for KV beside the weights and the reserve, bytes.
        fit: ``{policy: sequences that fit}`` (per GPU's share, as ``max_batch``).
        batch: ``{policy: min(fit, MAX_NUM_SEQS)}``.
        tokens_per_s: ``{policy: decode tokens/s of one model copy at that batch}`` (None when nothing fits),
            from the scenario evaluated at the mix's held context.
        held_context: tokens a running sequence holds on average (what a decode step reads).
        result: the scenario evaluated at ``held_context`` (batch 1).
    """

    mix: LengthMix
    max_len: int
    block_size: int
    seed: int
    allocations: dict
    free_bytes: float
    fit: dict
    batch: dict
    tokens_per_s: dict
    held_context: int
    result: ScenarioResult

    @property
    def paged_context(self) -> float:
        """Tokens a running sequence reserves with paging, averaged over decode steps (whole blocks)."""
        return self.allocations["paged"].reserved_per_sequence

    def free_words(self) -> str:
        """The memory for KV, as the Serving tab and the CLI print it: "50.00 GiB per GPU for KV", and split into
        stages, whose GPU's (a trial found 50.00 here beside the readouts' 51.72 at S = 8,192: another stage runs out
        first at the mix's 575 tokens)."""
        r = self.result
        if r.pp == 1:
            return f"{self.free_bytes / GiB:,.2f} GiB per GPU for KV"
        return (f"{self.free_bytes / GiB:,.2f} GiB per GPU for KV on stage {r.memory_stage + 1} of {r.pp}, which runs "
                f"out first at the mix's {self.held_context:,} tokens (each policy's fit counts the stage that runs "
                "out first at its own reserve)")

    def to_json(self) -> dict:
        """The fields as a strict-JSON-ready dict (SI units: seconds, bytes, FLOP, tokens)."""
        return {
            "mix": self.mix.to_json(),
            "max_len": self.max_len,
            "block_size": self.block_size,
            "seed": self.seed,
            "held_context": self.held_context,
            "paged_context": self.paged_context,
            "free_bytes": self.free_bytes,
            "policies": {
                k: {"reserved_per_sequence": a.reserved_per_sequence, "used_per_sequence": a.used_per_sequence,
                    "waste_fraction": a.waste_fraction, "fit": self.fit[k], "batch": self.batch[k],
                    "tokens_per_s": self.tokens_per_s[k],
                    "paper_fig2_token_states": FIG2_TOKEN_STATES[k],
                    "paper_fig2_waste_without_external": 1 - FIG2_TOKEN_STATES[k] / (1 - FIG2_EXTERNAL[k])}
                for k, a in self.allocations.items()
            },
            "source": "Kwon et al. SOSP 2023, Fig. 2 (token states per system); vLLM announcement "
                      "blog.vllm.ai/2023/06/20/vllm.html: existing systems waste 60%-80%, paging under 4%",
        }


def _copy_tokens_per_s(r) -> float:
    """Decode tokens/s of one model copy: its PP micro-batches and every EP group, each with its own B (an engineer's
    trial found DeepSeek-V3 on EP = 2 at half the ladder's 67,504 tokens/s: one group's)."""
    return r.tokens_per_s_aggregate / r.replicas


def compare_paging(scenario: Scenario, mix: LengthMix = SHAREGPT, n_requests: int = 1000, seed: int = 0,
                   block_size: int = BLOCK_SIZE, max_len: int | None = None) -> PagingResult:
    """Contiguous (and Orca's Pow2, Oracle) against paged allocation of one seeded stream's KV on ``scenario``.

    Args:
        scenario: model, GPU(s), precisions, reserve; its context S is the default ``max_len``.
        mix, n_requests, seed: the stream (:func:`core.batching.draw_requests`, backlog).
        block_size: tokens per block.
        max_len: the maximum sequence length a contiguous engine reserves (default: S).

    Raises:
        ValueError: an invalid argument.
    """
    max_len = int(max_len or scenario.context)
    req = draw_requests(mix, n_requests, seed, max_len)
    alloc = kv_allocation(req.prompt, req.output, max_len, block_size)
    held = max(1, int(round(alloc["paged"].used_per_sequence)))
    levers = {**scenario.levers(), "context": held, "phase": "decode", "batch": 1}
    r = evaluate_levers(levers, scenario.catalogue)
    fit = {k: sequences_fit_on_gpu(r, a.reserved_per_sequence) for k, a in alloc.items()}
    batch = {k: min(v, MAX_NUM_SEQS) for k, v in fit.items()}
    tps = {k: (_copy_tokens_per_s(evaluate_levers({**levers, "batch": b}, scenario.catalogue)) if b else None)
           for k, b in batch.items()}
    return PagingResult(mix, max_len, block_size, seed, alloc, r.free_for_kv_bytes, fit, batch, tps, held, r)
