"""Static against continuous batching: a seeded simulation of one stream of requests.

A stream of requests — prompt length P and output length O drawn from a
:class:`LengthMix` (fixed, uniform, or long-tailed: :data:`SHAREGPT`) — is served
by one model copy (the scenario's GPUs) in two ways:

* **static, request-level batching** (FasterTransformer behind a dynamic batcher,
  as the vLLM paper's baseline 1 describes it, Kwon et al. SOSP 2023, section 6.1:
  "the scheduler takes up to B number of earliest arrived requests and sends the
  batch"): a batch is formed when the engine is free, its prompts are prefilled,
  and it decodes until its *longest* output is done; a sequence that finishes
  early leaves its slot empty until the whole batch ends;
* **continuous, iteration-level batching** (Orca: Yu et al., OSDI 2022, section
  3.1 "iteration-level scheduling"): the scheduler runs one iteration at a time,
  retires a sequence the iteration it emits its last token and admits a waiting
  request into the free slot the next iteration, so the batch stays full while
  requests wait.

Article 000, "How It Is Used in Practice": "static batching leaves the batch
dimension small whenever sequences finish at different times, and a small batch
is a low intensity."  The simulation makes that a picture: the effective batch of
every step, the decode intensity it gives, tokens/s and latency (TTFT, TPOT,
end-to-end) for both policies.

A model copy split into PP pipeline stages runs PP micro-batches of B at once, and one with EP
expert-parallel groups a batch per group (:attr:`core.scenario.ScenarioResult.sequences_in_flight`):
``lanes = PP · EP`` schedulers, as vLLM runs a scheduler per pipeline micro-batch (its virtual engines)
and per data-parallel attention group.  The simulation runs one lane: its slots are B's, its
iteration takes PP stage steps (the lab's TPOT: a micro-batch crosses every stage), each lane has the
stream's requests (a backlog each; a rate is split evenly over the lanes), and the tokens/s count
every lane.  Lanes are taken as independent: a lane's prefill does not delay the others' stages.

The engine's step times are the lab's own (:class:`StepTable`): the decode step at
each batch B from :func:`core.sweeps.batch_sweep` of the scenario evaluated at the
mix's mean held context (computed once per distinct B), and each prompt's prefill
from the same step the lab's TTFT uses (:func:`core.step.step` at
``k = P``), once per distinct P.  Assumptions: one token per sequence per step
(speculation is the ladder's rung, not the simulation's); the KV a decode step
reads is the mix's mean held context, not each step's own; a static batch's
finished sequences drop out of the step (generous to static batching: a padded
engine keeps computing them); the prompts admitted in an iteration add their own
prefill times to it (no chunking, no sharing of the weight read with the decode
tokens); no preemption: a request admitted keeps its slot to the end.
Deterministic for a seed: the lengths and arrivals come from
``numpy.random.default_rng(seed)`` in a fixed order.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from heapq import heappop, heappush

import numpy as np

from .scenario import Scenario, ScenarioResult, evaluate_levers
from .step import step
from .sweeps import batch_sweep

__all__ = [
    "MAX_NUM_SEQS",
    "MIXES",
    "NOTE",
    "SHAREGPT",
    "BatchingComparison",
    "BatchingRun",
    "LengthMix",
    "Requests",
    "StepTable",
    "compare_batching",
    "draw_requests",
    "held_token_steps",
    "mean_held_context",
    "simulate",
    "step_table",
]

#: Which kind of number the simulation gives.
NOTE = ("ceilings: every step takes the lab's roofline time at its batch (plus launch overhead), so tokens/s and "
        "latencies are what the ceilings allow a policy, not a measured engine's")

#: The most sequences a continuous-batching engine runs in one iteration by default:
#: vLLM's ``max_num_seqs`` (``EngineArgs.max_num_seqs = 256``, vllm/engine/arg_utils.py;
#: "maximum number of sequences per iteration").  A cap on the slots, not a capacity.
MAX_NUM_SEQS = 256
#: The most decode steps one run simulates: five numbers each (40 bytes), 640 MB at most.  ShareGPT's 100,000 requests
#: (``--requests``' most) take 12.2 million steps batched statically at the default slots; requests of 2,097,152 output
#: tokens took 10^9 (an attacker's trial: 7.8 GiB asked of numpy, then all of the machine's memory).
MAX_STEPS = 16_000_000


@dataclass(frozen=True)
class LengthMix:
    """The distribution requests' prompt and output lengths come from (tokens).

    Attributes:
        kind: ``"fixed"`` (every request ``prompt_a`` / ``output_a`` tokens),
            ``"uniform"`` (whole numbers uniform in ``[a, b]``) or ``"lognormal"``
            (mean ``a`` tokens, shape σ = ``b``: ``μ = ln(mean) − σ²/2``, rounded).
        prompt_a, prompt_b, output_a, output_b: the parameters above, tokens (σ is unitless).
        source: where the numbers come from ("" for a user's own).

    Raises (on construction):
        ValueError: an unknown kind, a length below 1, ``a > b`` for uniform, σ <= 0.
    """

    kind: str
    prompt_a: float
    prompt_b: float
    output_a: float
    output_b: float
    source: str = ""

    def __post_init__(self):
        if self.kind not in ("fixed", "uniform", "lognormal"):
            raise ValueError(f"unknown length distribution {self.kind!r}; accepted: fixed, uniform, lognormal")
        if min(self.prompt_a, self.output_a) < 1:
            raise ValueError("prompt and output lengths must be at least 1 token")
        if self.kind == "uniform" and (self.prompt_a > self.prompt_b or self.output_a > self.output_b):
            raise ValueError("a uniform range needs low <= high")
        if self.kind == "lognormal" and min(self.prompt_b, self.output_b) <= 0:
            raise ValueError("a lognormal needs sigma > 0")

    @classmethod
    def fixed(cls, prompt: int, output: int) -> LengthMix:
        """Every request ``prompt`` tokens in, ``output`` tokens out."""
        return cls("fixed", prompt, prompt, output, output)

    @classmethod
    def uniform(cls, prompt: tuple[int, int], output: tuple[int, int]) -> LengthMix:
        """Lengths uniform over whole numbers in ``[low, high]`` (each a ``(low, high)`` pair)."""
        return cls("uniform", prompt[0], prompt[1], output[0], output[1])

    @classmethod
    def lognormal(cls, prompt_mean: float, output_mean: float, sigma: float, source: str = "") -> LengthMix:
        """Long-tailed lengths: lognormal of the given means (tokens) and shape σ (both lengths)."""
        return cls("lognormal", prompt_mean, sigma, output_mean, sigma, source)

    @property
    def label(self) -> str:
        """The mix in words, e.g. ``lognormal, prompt mean 161, output mean 338, σ = 1``."""
        if self.kind == "fixed":
            return f"fixed, prompt {self.prompt_a:g}, output {self.output_a:g} tokens"
        if self.kind == "uniform":
            return (f"uniform, prompt {self.prompt_a:g}-{self.prompt_b:g}, output {self.output_a:g}-"
                    f"{self.output_b:g} tokens")
        return (f"lognormal, prompt mean {self.prompt_a:g}, output mean {self.output_a:g} tokens, "
                f"σ = {self.prompt_b:g}")

    def _draw(self, a: float, b: float, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.kind == "fixed":
            return np.full(n, int(round(a)), dtype=np.int64)
        if self.kind == "uniform":
            return rng.integers(int(a), int(b), endpoint=True, size=n).astype(np.int64)
        mu = math.log(a) - b * b / 2.0
        return np.maximum(np.rint(rng.lognormal(mu, b, n)), 1).astype(np.int64)

    def sample(self, n: int, rng: np.random.Generator, max_len: int) -> tuple[np.ndarray, np.ndarray]:
        """``n`` (prompt, output) pairs, int64 arrays of shape ``(n,)``, capped so ``P + O <= max_len``.

        The prompt is drawn first, then the output (a fixed order, so a seed fixes both); a prompt is cut
        to ``max_len − 1`` and an output to ``max_len − P`` (the engine's maximum sequence length).

        Raises:
            ValueError: ``max_len < 2``.
        """
        if max_len < 2:
            raise ValueError("max_len must be at least 2 tokens (one prompt token and one output token)")
        prompts = np.minimum(self._draw(self.prompt_a, self.prompt_b, n, rng), max_len - 1)
        outputs = np.minimum(self._draw(self.output_a, self.output_b, n, rng), max_len - prompts)
        return prompts, outputs

    def to_json(self) -> dict:
        """The fields as a strict-JSON-ready dict (SI units: seconds, bytes, FLOP, tokens)."""
        return {"kind": self.kind, "label": self.label, "prompt": [self.prompt_a, self.prompt_b],
                "output": [self.output_a, self.output_b], "source": self.source}


#: ShareGPT's lengths as the vLLM paper reports them (Kwon et al., SOSP 2023, section 6.1, Fig. 11a:
#: "Input (mean: 161.31)", "Output (mean: 337.99)" tokens, both right-skewed with a tail to ~2,000).
#: The paper prints the means, not the shape: σ = 1 is an assumption (the round value whose output
#: 99th percentile, ~1,900 tokens, sits at the figure's right edge); tests/unit/test_paging.py checks the
#: paper's Fig. 2 and Fig. 13a against it and that their conclusions hold for σ from 0.8 to 1.2.
SHAREGPT = LengthMix.lognormal(
    161.31, 337.99, 1.0,
    source="ShareGPT lengths, Kwon et al. (vLLM), SOSP 2023, Fig. 11a: means 161.31 (prompt) and 337.99 "
           "(output) tokens; lognormal shape σ = 1 assumed (not printed)",
)


#: The request mixes the lab offers by name (the Ladder and Serving tabs, ``?mix=`` in a link): ShareGPT's
#: long-tailed lengths, and two with the same means to set against them: every request at the means (no spread:
#: static batching loses nothing) and uniform from 1 token to twice the mean.
MIXES: dict[str, LengthMix] = {
    "sharegpt": SHAREGPT,
    "fixed": LengthMix.fixed(round(SHAREGPT.prompt_a), round(SHAREGPT.output_a)),
    "uniform": LengthMix.uniform((1, round(2 * SHAREGPT.prompt_a) - 1), (1, round(2 * SHAREGPT.output_a) - 1)),
}


@dataclass(frozen=True)
class Requests:
    """One stream of requests, arrays of shape ``(n,)`` sorted by arrival.

    Attributes:
        prompt: P per request, tokens (int64).
        output: O per request, tokens (int64, >= 1).
        arrival: arrival time, seconds from the start (all 0: a backlog).
    """

    prompt: np.ndarray
    output: np.ndarray
    arrival: np.ndarray

    def __len__(self) -> int:
        return len(self.prompt)


def draw_requests(mix: LengthMix, n: int, seed: int, max_len: int, rate: float | None = None) -> Requests:
    """``n`` requests from ``mix``, seeded.

    Args:
        mix: the length distribution.
        n: requests (>= 1).
        seed: seed of ``numpy.random.default_rng``; the same seed gives the same stream.
        max_len: the engine's maximum sequence length (tokens): ``P + O <= max_len``.
        rate: requests per second of a Poisson arrival process (exponential gaps, the vLLM
            paper's section 6.1 synthesis); None: every request waits at t = 0 (a backlog, the
            throughput setting).

    Raises:
        ValueError: n < 1, a rate <= 0, or ``max_len < 2``.
    """
    if n < 1:
        raise ValueError("at least one request is needed")
    if rate is not None and not rate > 0:
        raise ValueError("the request rate must be > 0 requests/s")
    rng = np.random.default_rng(seed)
    prompts, outputs = mix.sample(n, rng, max_len)
    arrival = np.zeros(n) if rate is None else np.cumsum(rng.exponential(1.0 / rate, n))
    return Requests(prompts, outputs, arrival)


def held_token_steps(prompt, output) -> tuple[int, int]:
    """``(Σ tokens held over every decode step, Σ decode steps)``, whole numbers, for lengths P and O (arrays).

    Decode step t = 1 … O − 1 of a request attends to its P + t cached tokens, so the first is
    ``Σ (O−1)·P + (O−1)·O/2`` and the second ``Σ (O−1)``.
    """
    p = np.asarray(prompt, dtype=np.int64)
    d = np.asarray(output, dtype=np.int64) - 1
    return int((d * p).sum() + (d * (d + 1) // 2).sum()), int(d.sum())


def mean_held_context(prompt, output) -> float:
    """The KV a decode step reads per sequence, averaged over every decode step of every request (tokens).

    :func:`held_token_steps`' ratio: long requests weigh in for as many steps as they run.  A mix with no
    decode step (every O = 1) holds its prompts: the mean P.
    """
    held, steps = held_token_steps(prompt, output)
    return held / steps if steps > 0 else float(np.mean(prompt))


@dataclass(frozen=True)
class StepTable:
    """The lab's step times for one scenario, looked up by the simulation.

    Attributes:
        decode_step_s: seconds of one decode step at batch B, indexed by B (``[0]`` = 0), shape ``(slots+1,)``.
        intensity_weights: ``2·B·k/p`` at batch B, FLOP/byte, same shape (``[0]`` = 0).
        intensity_with_kv: counting the KV reads at the held context, FLOP/byte, same shape.
        context: the held context S the decode steps read, tokens.
        ridge_point: ``P_peak / BW`` of the scenario's GPU, FLOP/byte.
        prompts, prefill_s: distinct prompt lengths (sorted) and the prefill seconds of each, one
            prompt alone (the lab's TTFT step at ``k = P``).
        result: the :class:`ScenarioResult` the decode steps come from (at ``context`` and batch 1).
        lanes: schedulers side by side, PP micro-batches × EP groups, each with these steps (1 on one
            stage and group); a decode step here is ``PP`` stage steps.
    """

    decode_step_s: np.ndarray
    intensity_weights: np.ndarray
    intensity_with_kv: np.ndarray
    context: int
    ridge_point: float
    prompts: np.ndarray
    prefill_s: np.ndarray
    result: ScenarioResult
    lanes: int = 1

    @property
    def slots(self) -> int:
        return len(self.decode_step_s) - 1

    def prefill_time(self, prompt) -> np.ndarray:
        """Prefill seconds of each prompt length in ``prompt`` (broadcasts).

        Raises:
            ValueError: a length that is not one of :attr:`prompts`.
        """
        i = np.minimum(np.searchsorted(self.prompts, prompt), len(self.prompts) - 1)
        if not np.all(self.prompts[i] == prompt):
            raise ValueError("a prompt length the step table was not built for")
        return self.prefill_s[i]


def step_table(scenario: Scenario, requests: Requests, slots: int) -> StepTable:
    """The step times the simulation needs, from the lab's own step (three array evaluations).

    The scenario is evaluated once at the mix's :func:`mean_held_context` (decode, batch 1, k = 1: one
    token per step), the decode
    step at B = 1 … ``slots`` comes from :func:`core.sweeps.batch_sweep`, and each distinct prompt's
    prefill from :func:`core.step.step` on the result's profile, as the scenario's own TTFT step is made
    (its prompt's KV written, its causal attention), scaled by the result's ``ttft_s`` over that step at
    the scenario's prompt (1 on one pipeline stage; PP stages in series otherwise).

    Raises:
        ValueError: ``slots < 1``.
    """
    if slots < 1:
        raise ValueError("the engine needs at least one slot (no sequence's cache fits beside the weights)")
    held = max(1, int(round(mean_held_context(requests.prompt, requests.output))))
    levers = {**scenario.levers(), "context": held, "phase": "decode", "batch": 1, "spec_k": 1}
    r = evaluate_levers(levers, scenario.catalogue)
    ladder = batch_sweep(r, np.arange(1, slots + 1))  # a stage's step; a micro-batch's iteration crosses PP of them
    zero = np.zeros(1)
    prompts = np.unique(np.append(requests.prompt, int(levers["prompt_len"])))
    prefill = step(r.deployment.profile, np.ones(len(prompts)), tokens=prompts, context=prompts,
                   gained=prompts.astype(float), p_kv=r.kv_bytes_per_element, gqa=r.gqa, prefill=True)
    step_s = prefill.step_time_s_with_kv
    scale = r.ttft_s / float(step_s[np.searchsorted(prompts, int(levers["prompt_len"]))])
    return StepTable(
        decode_step_s=np.concatenate([zero, r.pp * ladder.step_time_s_with_kv]),
        intensity_weights=np.concatenate([zero, ladder.arithmetic_intensity_weights]),
        intensity_with_kv=np.concatenate([zero, ladder.arithmetic_intensity_with_kv]),
        context=held,
        ridge_point=r.ridge_point,
        prompts=prompts,
        prefill_s=np.asarray(step_s) * scale,
        result=r,
        lanes=r.pp * r.ep,
    )


@dataclass(frozen=True)
class BatchingRun:
    """One policy's run over a stream: per step and per request.

    A step is one engine iteration; every sequence in it emits one token (a prefill emits the first).

    Attributes:
        policy: ``"static"`` or ``"continuous"``.
        slots: the most sequences a step may hold.
        step_batch: sequences of one lane emitting a token in each step, int64 ``(steps,)``: the effective batch.
        step_time_s: seconds of each step, ``(steps,)``.
        step_end_s: time at the end of each step, seconds from the start (idle gaps included).
        step_intensity: the lab's decode intensity ``2·B·k/p`` at each step's batch, FLOP/byte.
        last_admission_step: index of the step that admitted the last request.
        arrival_s, first_token_s, finish_s: per request, seconds, ``(n,)``.
        output: O per request, tokens.
        lanes: lanes running the same steps side by side (:class:`StepTable`); :attr:`tokens_per_s` counts
            them all, everything else is one lane's.
    """

    policy: str
    slots: int
    step_batch: np.ndarray
    step_time_s: np.ndarray
    step_end_s: np.ndarray
    step_intensity: np.ndarray
    last_admission_step: int
    arrival_s: np.ndarray
    first_token_s: np.ndarray
    finish_s: np.ndarray
    output: np.ndarray
    lanes: int = 1

    @property
    def output_tokens(self) -> int:
        """Tokens emitted, Σ step_batch (= Σ O: every requested token is served)."""
        return int(self.step_batch.sum())

    @property
    def makespan_s(self) -> float:
        """From t = 0 to the last token, seconds."""
        return float(self.step_end_s[-1])

    @property
    def tokens_per_s(self) -> float:
        """Output tokens over the makespan, every lane's, tokens/s."""
        return self.lanes * self.output_tokens / self.makespan_s

    @property
    def mean_batch(self) -> float:
        """Effective batch averaged over steps."""
        return float(self.step_batch.mean())

    @property
    def time_mean_batch(self) -> float:
        """Effective batch averaged over busy time (each step weighted by its duration)."""
        return float((self.step_batch * self.step_time_s).sum() / self.step_time_s.sum())

    @property
    def sustained_batch(self) -> float:
        """Effective batch averaged over the steps up to the last admission: what the policy sustains while
        requests keep coming (the drain after it, when nothing is left to admit, is left out)."""
        return float(self.step_batch[: self.last_admission_step + 1].mean())

    @property
    def mean_intensity(self) -> float:
        """Decode intensity averaged over busy time, FLOP/byte."""
        return float((self.step_intensity * self.step_time_s).sum() / self.step_time_s.sum())

    @property
    def ttft_s(self) -> np.ndarray:
        """Time to first token per request, seconds: first token − arrival (queueing included)."""
        return self.first_token_s - self.arrival_s

    @property
    def tpot_s(self) -> np.ndarray:
        """Time per output token after the first, seconds, for requests with O > 1."""
        many = self.output > 1
        return (self.finish_s[many] - self.first_token_s[many]) / (self.output[many] - 1)

    @property
    def e2e_s(self) -> np.ndarray:
        """End-to-end latency per request, seconds: last token − arrival."""
        return self.finish_s - self.arrival_s

    def summary(self) -> dict:
        """The run's scalars (SI units), JSON-ready."""
        tpot = self.tpot_s
        return {
            "policy": self.policy,
            "slots": self.slots,
            "lanes": self.lanes,
            "steps": int(len(self.step_batch)),
            "output_tokens": self.lanes * self.output_tokens,  # every lane's, as tokens_per_s counts them
            "output_tokens_per_lane": self.output_tokens,
            "makespan_s": self.makespan_s,
            "tokens_per_s": self.tokens_per_s,
            "mean_batch": self.mean_batch,
            "time_mean_batch": self.time_mean_batch,
            "sustained_batch": self.sustained_batch,
            "mean_intensity": self.mean_intensity,
            "ttft_mean_s": float(self.ttft_s.mean()),
            "ttft_p50_s": float(np.percentile(self.ttft_s, 50)),
            "ttft_p99_s": float(np.percentile(self.ttft_s, 99)),
            "tpot_mean_s": float(tpot.mean()) if len(tpot) else None,
            "tpot_p99_s": float(np.percentile(tpot, 99)) if len(tpot) else None,
            "e2e_mean_s": float(self.e2e_s.mean()),
            "e2e_p99_s": float(np.percentile(self.e2e_s, 99)),
        }


def _continuous_segments(req: Requests, prefill: np.ndarray, tdec: np.ndarray, slots: int):
    """Iteration-level scheduling as runs of equal steps: ``(batch, count, dt, gap)`` lists and each
    request's admission step.  Work is per event (an admission, a finish, an arrival), not per step."""
    n_req = len(req)
    arr = req.arrival.tolist()
    out = req.output.tolist()
    cpre = np.concatenate([[0.0], np.cumsum(prefill)]).tolist()
    td = tdec.tolist()
    admit = np.empty(n_req, dtype=np.int64)
    seg_batch, seg_count, seg_dt, seg_gap = [], [], [], []
    heap: list[tuple[int, int]] = []  # (step that emits the request's last token, request)
    t, j, n, nxt, last_admit = 0.0, 0, 0, 0, 0
    while nxt < n_req or n:
        gap = 0.0
        if n == 0 and arr[nxt] > t:  # idle until the next arrival
            gap, t = arr[nxt] - t, arr[nxt]
        a = min(slots - n, bisect_right(arr, t, nxt) - nxt) if nxt < n_req else 0
        if a > 0:  # one step: the running sequences decode, the admitted prompts prefill
            dt = td[n] + cpre[nxt + a] - cpre[nxt]
            for i in range(nxt, nxt + a):
                admit[i] = j
                heappush(heap, (j + out[i] - 1, i))
            seg_batch.append(n + a)
            seg_count.append(1)
            last = j
            n, nxt, last_admit = n + a, nxt + a, j
            t += dt
        else:  # decode-only steps until the next finish, or the step at whose end a request has arrived
            dt = td[n]
            last = heap[0][0]
            if n < slots and nxt < n_req:
                last = min(last, j + max(1, math.ceil((arr[nxt] - t) / dt)) - 1)
            seg_batch.append(n)
            seg_count.append(last - j + 1)
            t += (last - j + 1) * dt
        seg_dt.append(dt)
        seg_gap.append(gap)
        j = last + 1
        while heap and heap[0][0] == last:
            heappop(heap)
            n -= 1
    return seg_batch, seg_count, seg_dt, seg_gap, admit, last_admit


def _static_segments(req: Requests, prefill: np.ndarray, tdec: np.ndarray, slots: int):
    """Request-level batching as runs of equal steps (see :func:`_continuous_segments`)."""
    n_req = len(req)
    arr = req.arrival.tolist()
    admit = np.empty(n_req, dtype=np.int64)
    parts_batch, parts_count, parts_dt, parts_gap = [], [], [], []
    t, j, nxt, last_admit = 0.0, 0, 0, 0
    while nxt < n_req:
        gap = max(0.0, arr[nxt] - t)
        t = max(t, arr[nxt])  # the arrival itself, not t + gap (rounding must not leave it a hair ahead)
        a = min(slots, bisect_right(arr, t, nxt) - nxt)
        o = req.output[nxt: nxt + a]
        admit[nxt: nxt + a] = j
        last_admit = j
        dt_prefill = float(prefill[nxt: nxt + a].sum())
        # After the prefill step, decode step s (1-based) runs the sequences with O > s: constant between
        # consecutive distinct output lengths u_(k-1) <= s < u_k, with #{O >= u_k} alive.
        u, counts = np.unique(o, return_counts=True)
        alive = a - np.concatenate([[0], np.cumsum(counts)[:-1]])
        lengths = np.diff(np.concatenate([[1], u]))
        keep = lengths > 0
        alive, lengths = alive[keep], lengths[keep]
        parts_batch += [np.array([a]), alive]
        parts_count += [np.array([1]), lengths]
        dts = tdec[alive]
        parts_dt += [np.array([dt_prefill]), dts]
        parts_gap += [np.array([gap]), np.zeros(len(alive))]
        t += dt_prefill + float((dts * lengths).sum())
        j += 1 + int(lengths.sum())
        nxt += a
    cat = np.concatenate
    return cat(parts_batch), cat(parts_count), cat(parts_dt), cat(parts_gap), admit, last_admit


def simulate(requests: Requests, table: StepTable, policy: str, slots: int | None = None) -> BatchingRun:
    """Serve ``requests`` with ``policy`` on the steps of ``table``.

    Args:
        requests: the stream (:func:`draw_requests`).
        table: the lab's step times (:func:`step_table`); its slots bound ``slots``.
        policy: ``"static"`` (request-level) or ``"continuous"`` (iteration-level, Orca).
        slots: the most sequences in a step (default: the table's).

    Returns:
        a :class:`BatchingRun`; Σ of its ``step_batch`` is Σ O (tokens served = tokens requested).

    Raises:
        ValueError: an unknown policy, or slots outside 1 … ``table.slots``.
    """
    slots = table.slots if slots is None else int(slots)
    if not 1 <= slots <= table.slots:
        raise ValueError(f"slots must be from 1 to {table.slots} (the step table's)")
    prefill = table.prefill_time(requests.prompt)
    if policy == "continuous":
        batch, count, dt, gap, admit, last_admit = _continuous_segments(requests, prefill, table.decode_step_s, slots)
    elif policy == "static":
        batch, count, dt, gap, admit, last_admit = _static_segments(requests, prefill, table.decode_step_s, slots)
    else:
        raise ValueError(f"unknown batching policy {policy!r}; accepted: static, continuous")
    count = np.asarray(count, dtype=np.int64)
    steps = int(count.sum())
    if steps > MAX_STEPS:  # each step is five numbers in the run: 10^9 steps had asked numpy for 40 GB
        raise ValueError(f"the stream takes {steps:,} decode steps {policy}, more than the {MAX_STEPS:,} simulated: "
                         "fewer requests or shorter outputs")
    step_batch = np.repeat(np.asarray(batch, dtype=np.int64), count)
    step_time = np.repeat(np.asarray(dt, dtype=float), count)
    gaps = np.zeros(len(step_time))
    gaps[np.cumsum(count) - count] = gap
    step_end = np.cumsum(step_time + gaps)
    finish_step = admit + requests.output - 1
    return BatchingRun(
        policy=policy,
        slots=slots,
        step_batch=step_batch,
        step_time_s=step_time,
        step_end_s=step_end,
        step_intensity=table.intensity_weights[step_batch],
        last_admission_step=int(last_admit),
        arrival_s=requests.arrival,
        first_token_s=step_end[admit],
        finish_s=step_end[finish_step],
        output=requests.output,
        lanes=table.lanes,
    )


@dataclass(frozen=True)
class BatchingComparison:
    """Both policies over the same stream on the same steps.

    The step times are the lab's roofline ceilings (with its launch overhead), so the tokens/s and latencies
    are what those ceilings allow each policy, not a measured engine's (:data:`NOTE`).

    Attributes:
        mix, seed, rate, max_len: the stream's parameters (:func:`draw_requests`).
        requests: the stream.  table: the step times (:class:`StepTable`).
        static, continuous: each policy's :class:`BatchingRun`.
        fit: sequences whose KV fits at ``max_len`` per lane (the scenario's ``max_batch`` there; None when the
            slots were not derived from it).
    """

    mix: LengthMix
    seed: int
    rate: float | None
    max_len: int
    requests: Requests
    table: StepTable
    static: BatchingRun
    continuous: BatchingRun
    fit: int | None = None

    def slots_text(self) -> str:
        """The slots in words, with where they come from and the lanes ("256 slots (vLLM's max_num_seqs; 433 fit at
        S = 4,096) in each of 4 lanes, PP = 2 micro-batches × EP = 2 groups")."""
        r, slots = self.table.result, self.static.slots
        if self.fit is None or slots != min(self.fit, MAX_NUM_SEQS):  # slots given: said as given
            why = ""
        elif slots < self.fit:
            why = f" (vLLM's max_num_seqs; {self.fit:,} fit at S = {self.max_len:,})"
        else:
            why = f" (what fits at S = {self.max_len:,})"
        parts = [f"PP = {r.pp} micro-batches"] * (r.pp > 1) + [f"EP = {r.ep} groups"] * (r.ep > 1)
        lanes = f" in each of {self.table.lanes} lanes, {' × '.join(parts)}" if self.table.lanes > 1 else ""
        return f"{slots:,} slot{'s' if slots != 1 else ''}{why}{lanes}"

    @property
    def at_max_len(self) -> int:
        """Requests whose P + O is the maximum length: a longer draw of the mix is cut to it (:meth:`LengthMix.sample`)
        and, rarely, one is drawn at exactly that length (an attacker's trial: 100,000-token prompts ran as 8,191
        without a word)."""
        return int(np.count_nonzero(self.requests.prompt + self.requests.output == self.max_len))

    def to_json(self, steps: bool = False) -> dict:
        """Strict-JSON-ready dict (SI units); ``steps`` adds the per-step effective batch of each policy."""
        out = {
            "mix": self.mix.to_json(),
            "seed": self.seed,
            "requests": len(self.requests),
            "rate_per_s": self.rate,
            "max_len": self.max_len,
            "requests_at_max_len": self.at_max_len,
            "prompt_mean": float(self.requests.prompt.mean()),
            "output_mean": float(self.requests.output.mean()),
            "held_context": self.table.context,
            "ridge_point": self.table.ridge_point,
            "note": NOTE,
            "fit": self.fit,
            "lanes": self.table.lanes,
            "static": self.static.summary(),
            "continuous": self.continuous.summary(),
        }
        if steps:
            for run in (self.static, self.continuous):
                out[run.policy]["step_batch"] = run.step_batch.tolist()
                out[run.policy]["step_end_s"] = run.step_end_s.tolist()
        return out


def compare_batching(scenario: Scenario, mix: LengthMix = SHAREGPT, n_requests: int = 1000, seed: int = 0,
                     slots: int | None = None, rate: float | None = None,
                     max_len: int | None = None) -> BatchingComparison:
    """Static against continuous batching of one seeded stream on ``scenario``'s GPUs.

    Args:
        scenario: model, GPU(s), precisions and the rest (its batch lever is not used: the policies set B).
        mix, n_requests, seed, rate: the stream (:func:`draw_requests`).
        slots: the most sequences per step of one lane (default: what fits when each sequence reserves
            ``max_len`` tokens of KV — the scenario's ``max_batch`` at that context — capped at
            :data:`MAX_NUM_SEQS`); ``rate`` (requests/s, the whole copy's) is split evenly over the lanes.
        max_len: the engine's maximum sequence length (default: the scenario's context S).

    Raises:
        ValueError: nothing fits (no slot), or an invalid argument.
    """
    max_len = int(max_len or scenario.context)
    at_max = evaluate_levers({**scenario.levers(), "context": max_len, "phase": "decode", "batch": 1},
                             scenario.catalogue)
    if slots is None:
        slots = min(at_max.max_batch, MAX_NUM_SEQS)
    lanes = at_max.pp * at_max.ep
    requests = draw_requests(mix, n_requests, seed, max_len, None if rate is None else rate / lanes)
    table = step_table(scenario, requests, slots)
    return BatchingComparison(mix, seed, rate, max_len, requests, table,
                              simulate(requests, table, "static"), simulate(requests, table, "continuous"),
                              at_max.max_batch)
