"""Prefill/decode disaggregation: the GPUs each pool needs for a request rate and latency targets.

DistServe (Zhong et al., "DistServe: Disaggregating Prefill and Decoding for
Goodput-optimized Large Language Model Serving", OSDI 2024) serves the two
phases of a request on separate GPU pools, each sized against its own latency
target: the time to first token (TTFT) for prefill, the time per output token
(TPOT) for decode.  Goodput is the request rate served within both targets; per
GPU it is what a deployment pays for.  Article 000 ("How It Is Used in
Practice"): prefill "is compute-bound, comfortably above the ridge point", decode
"is memory-bound, far below it", so one pool "forces a compromise that suits
neither".

For a request rate λ (requests/s), a prompt of P tokens, O output tokens and targets
``T_ttft``, ``T_tpot`` (means, not DistServe's percentile attainment), each pool's
instance is the scenario's model copy (``g = tp · pp · ep`` GPUs) and its times are the lab's.
An instance runs ``PP`` pipeline stages and ``EP`` expert-parallel groups; each group serves its
own requests (:class:`core.scenario.ScenarioResult`'s ``sequences_in_flight``), so Poisson
arrivals split evenly over the EP groups, ``λ_g = λ / EP``:

* **prefill pool**: one prompt alone takes ``D`` = the scenario's ``ttft_s`` at P (it crosses all
  PP stages); a stage holds it for ``s = D / PP`` (the slowest stage), and the next prompt enters
  the first stage as soon as it is free.  Prompts arriving as a Poisson stream queue for that
  stage, an M/D/1 queue with service time s, so the mean TTFT is
  ``D + λ_g s² / (2(1 − λ_g s))`` (DistServe, section 3.1, eq. 1; the Pollaczek–Khinchine mean of
  M/D/1).  Solving for λ_g at ``TTFT = T_ttft`` gives ``2(T − D) / (s(2(T − D) + s))``, at PP = 1
  DistServe's ``2(T − D) / (D(2T − D))``; an instance's goodput ``R_p`` is EP times that (0 when
  ``D >= T``).
* **decode pool**: continuous batching at batch B per micro-batch, one token per sequence per
  ``tpot(B)`` (the scenario's ``tpot_s``, PP stage steps, scaled along
  :func:`core.sweeps.batch_sweep`'s step times); ``B · PP · EP`` sequences are in flight.  The
  largest B within the KV capacity and ``tpot(B) <= T_tpot`` serves
  ``R_d = B·PP·EP / ((O − 1)·tpot(B))`` requests/s (Little's law: each request holds a slot for its
  O − 1 decode tokens; its first token came from the prefill pool).
* **colocated pool**: one instance does both, prefill first (vLLM's default).  A fraction ``λ_g s``
  of each stage's time goes to prefills, during which every decoding sequence waits, so
  ``TPOT = tpot(B) / (1 − λ_g s)``; Little's law ``B·PP = λ_g (O − 1)·TPOT`` gives
  ``λ_g(B) = B·PP / ((O − 1)·tpot(B) + B·PP·s)``; a prompt also waits on average half the decode step
  in flight, ``TTFT = D + λ_g s²/(2(1 − λ_g s)) + step(B)/2``.  The goodput ``R_c`` is EP times the
  largest λ_g(B) meeting both targets.

At PP = EP = 1 these are DistServe's single-instance formulas.  Splitting the arrivals at random
over the EP groups is the simple case; a router that sends each prompt to the least-busy group
waits less (an M/D/c queue), which is not modelled.

GPUs for rate λ: ``ceil(λ / R) · g`` per pool; disaggregated serving
needs a prefill pool and a decode pool.  The KV cache's transfer from the prefill to the decode
pool is not counted (DistServe places the two on the same node's NVLink, section 4.3).

Each pool's operating point on the roofline (per GPU, intensity on the weights): prefill at
``2·P/p`` (batch 1, k = P), decode at ``2·B·k/p``; colocated, the time-blend of the two.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .batching import MAX_NUM_SEQS, mean_held_context
from .scenario import Scenario, evaluate_levers
from .sweeps import batch_sweep
from .units import factor_digits

__all__ = [
    "OUTPUT_LEN",
    "RATE",
    "TPOT_TARGET_S",
    "TTFT_TARGET_S",
    "DisaggregationResult",
    "Pool",
    "md1_max_rate",
    "md1_ttft",
    "plan_pools",
]

#: Default latency targets: MLPerf Inference's Llama-2-70B Server scenario (loadgen/mlperf.conf:
#: ``llama2-70b.Server.ttft_latency = 2000``, ``tpot_latency = 200``, milliseconds).  MLPerf holds
#: them at the 99th percentile; the lab compares means.
TTFT_TARGET_S = 2.0
TPOT_TARGET_S = 0.2
#: The example's request rate (requests/s) and output length (tokens) when none is given (the CLI's and the
#: Serving tab's): an illustration, not a measurement.
RATE = 4.0
OUTPUT_LEN = 300


def md1_ttft(rate, service_s):
    """Mean time in an M/D/1 queue, ``D + λD² / (2(1 − λD))`` seconds (inf at or past λD = 1; broadcasts).

    DistServe (OSDI 2024), section 3.1, eq. 1: the mean TTFT of one prefill instance under
    Poisson arrivals at ``rate`` λ requests/s with a fixed prefill time ``service_s`` D.
    """
    lam = np.asarray(rate, dtype=float)
    rho = lam * service_s
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(rho < 1, service_s + lam * service_s**2 / (2 * (1 - rho)), np.inf)
    return float(out) if out.ndim == 0 else out


def md1_max_rate(target_s: float, service_s: float) -> float:
    """The largest Poisson rate (requests/s) whose M/D/1 mean time stays within ``target_s``.

    ``2(T − D) / (D(2T − D))`` for T > D, else 0 (one request alone misses the target).

    Raises:
        ValueError: a service time <= 0.
    """
    if service_s <= 0:
        raise ValueError("the service time must be > 0 s")
    t, d = float(target_s), float(service_s)
    return 2 * (t - d) / (d * (2 * t - d)) if t > d else 0.0


@dataclass(frozen=True)
class Pool:
    """One pool's sizing and operating point.

    Attributes:
        name: ``"prefill"``, ``"decode"`` or ``"colocated"``.
        gpus_per_instance: GPUs of one model copy (TP · PP · EP).
        rate_per_instance: goodput of one instance, requests/s within the targets (0: cannot meet them).
        instances, gpus: for the requested rate (None when the pool cannot meet the targets).
        batch: decode batch B, per micro-batch under PP and per EP group (None for the prefill pool, which runs
            one prompt at a time).
        ttft_s, tpot_s: the pool's mean latencies at its goodput (None where the pool has no such phase).
        intensity: FLOP/byte on the weights at the operating point.
        attainable_flop_per_s: the roofline there, ``min(P_peak, BW·I)`` per GPU.
    """

    name: str
    gpus_per_instance: int
    rate_per_instance: float
    instances: int | None
    gpus: int | None
    batch: int | None
    ttft_s: float | None
    tpot_s: float | None
    intensity: float
    attainable_flop_per_s: float

    @property
    def goodput_per_gpu(self) -> float:
        """Requests/s per GPU at one instance's goodput."""
        return self.rate_per_instance / self.gpus_per_instance

    def to_json(self) -> dict:
        """The fields as a strict-JSON-ready dict (SI units: seconds, bytes, FLOP, tokens)."""
        return {"name": self.name, "gpus_per_instance": self.gpus_per_instance,
                "rate_per_instance": self.rate_per_instance, "goodput_per_gpu": self.goodput_per_gpu,
                "instances": self.instances, "gpus": self.gpus, "batch": self.batch, "ttft_s": self.ttft_s,
                "tpot_s": self.tpot_s, "intensity": self.intensity,
                "attainable_flop_per_s": self.attainable_flop_per_s}


@dataclass(frozen=True)
class DisaggregationResult:
    """Prefill and decode pools against one colocated pool for one workload.

    Attributes:
        rate: requests/s to serve.  prompt_len, output_len: P and O, tokens.  context: the KV a decode
        step reads per sequence, tokens.  ttft_target_s, tpot_target_s: the targets, seconds.
        prefill, decode, colocated: the three :class:`Pool`s.
        ridge_point: ``P_peak / BW`` per GPU, FLOP/byte.
        peak_flop_per_s: the compute roof per GPU.
        pp, ep: the pipeline stages a prompt crosses and the expert-parallel groups that each serve their own
        requests, in a replica (the split it ran at, past a model's limits clamped as the scenario's result is).
    """

    rate: float
    prompt_len: int
    output_len: int
    context: int
    ttft_target_s: float
    tpot_target_s: float
    prefill: Pool
    decode: Pool
    colocated: Pool
    ridge_point: float
    peak_flop_per_s: float
    pp: int = 1
    ep: int = 1

    @property
    def disaggregated_gpus(self) -> int | None:
        """GPUs of the prefill pool plus the decode pool at :attr:`rate` (None if either cannot meet its target)."""
        if self.prefill.gpus is None or self.decode.gpus is None:
            return None
        return self.prefill.gpus + self.decode.gpus

    @property
    def disaggregated_capacity(self) -> float | None:
        """Requests/s the two pools serve at their GPU counts: the slower pool's instances × its rate (a trial
        multiplied 4 GPUs by the balanced figure below, 1.277, where one prefill and one decode instance serve
        4.408)."""
        p, d = self.prefill, self.decode
        if p.instances is None or d.instances is None:
            return None
        return min(p.instances * p.rate_per_instance, d.instances * d.rate_per_instance)

    @property
    def colocated_capacity(self) -> float | None:
        """Requests/s the colocated pool serves at its GPU count: instances × rate per instance."""
        c = self.colocated
        return None if c.instances is None else c.instances * c.rate_per_instance

    @property
    def disaggregated_goodput_per_gpu(self) -> float:
        """Requests/s per GPU of a balanced prefill + decode pair: ``1 / (g_p/R_p + g_d/R_d)`` (0 if either is 0):
        the pools in their best ratio, which whole instances reach only at scale (:attr:`disaggregated_capacity` is
        what the printed GPU counts serve)."""
        p, d = self.prefill, self.decode
        if not p.rate_per_instance or not d.rate_per_instance:
            return 0.0
        return 1.0 / (p.gpus_per_instance / p.rate_per_instance + d.gpus_per_instance / d.rate_per_instance)

    def verdict(self) -> str:
        """The two plans side by side in words, each at its GPU count ("split: 4 GPUs serve up to 1 × 4.408 = 4.408
        req/s (the decode pool's), 1.102 per GPU (1.277 with the pools in their best ratio, at scale); colocated: 4
        GPUs serve up to 2 × 2.5995 = 5.199 req/s, 1.300 per GPU"), or why no plan meets the targets.  The CLI and
        the Serving tab print it."""
        split, together = self.disaggregated_capacity, self.colocated_capacity
        if split is None or together is None:
            return "the targets cannot be met"
        slow = min((self.prefill, self.decode), key=lambda q: q.instances * q.rate_per_instance)
        return (f"split: {self.disaggregated_gpus} GPUs serve up to {_times(slow)} req/s (the {slow.name} pool's), "
                f"{split / self.disaggregated_gpus:.3f} per GPU ({self.disaggregated_goodput_per_gpu:.3f} with the "
                f"pools in their best ratio, at scale); colocated: {self.colocated.gpus} GPUs serve up to "
                f"{_times(self.colocated)} req/s, {together / self.colocated.gpus:.3f} per GPU")

    def to_json(self) -> dict:
        """The fields as a strict-JSON-ready dict (SI units: seconds, bytes, FLOP, tokens)."""
        return {
            "rate_per_s": self.rate, "prompt_len": self.prompt_len, "output_len": self.output_len,
            "context": self.context, "ttft_target_s": self.ttft_target_s, "tpot_target_s": self.tpot_target_s,
            "prefill": self.prefill.to_json(), "decode": self.decode.to_json(),
            "colocated": self.colocated.to_json(),
            "disaggregated_gpus": self.disaggregated_gpus,
            "colocated_gpus": self.colocated.gpus,
            "disaggregated_goodput_per_gpu": self.disaggregated_goodput_per_gpu,
            "disaggregated_capacity_per_s": self.disaggregated_capacity,
            "colocated_capacity_per_s": self.colocated_capacity,
            "colocated_goodput_per_gpu": self.colocated.goodput_per_gpu,
            "ridge_point": self.ridge_point, "peak_flop_per_s": self.peak_flop_per_s, "pp": self.pp, "ep": self.ep,
            "source": "DistServe (Zhong et al., OSDI 2024), section 3.1 eq. 1 (M/D/1 prefill queue); "
                      "targets: MLPerf Inference llama2-70b Server (TTFT 2 s, TPOT 200 ms)",
        }


def _times(pool: Pool) -> str:
    """``instances × rate = total`` (req/s), the rate with the decimals that make the product print right."""
    n, rate = pool.instances, pool.rate_per_instance
    return f"{n} × {rate:.{factor_digits(rate, n, n * rate, 3, 3)}f} = {n * rate:.3f}"


def _gpus(rate: float, per_instance: float, g: int) -> tuple[int | None, int | None]:
    if per_instance <= 0:
        return None, None
    n = max(1, math.ceil(rate / per_instance - 1e-9))
    return n, n * g


def plan_pools(scenario: Scenario, rate: float, prompt_len: int, output_len: int,
               ttft_target_s: float = TTFT_TARGET_S, tpot_target_s: float = TPOT_TARGET_S,
               context: int | None = None, max_batch: int | None = None) -> DisaggregationResult:
    """Size a prefill pool and a decode pool against one colocated pool (see the module docstring).

    Args:
        scenario: model, GPU(s), precisions, speculation k and α, reserve (its batch, phase, prompt and
            context levers are set here).
        rate: requests/s to serve (> 0).
        prompt_len, output_len: P (>= 1) and O (>= 2: one token from prefill, at least one decoded).
        ttft_target_s, tpot_target_s: mean latency targets, seconds (> 0).
        context: KV tokens a decode step reads per sequence (default ``P + O/2``, the mean over its decode:
            :func:`core.batching.mean_held_context`).
        max_batch: the most sequences a decode instance holds (default: what fits at ``context``, capped
            at :data:`core.batching.MAX_NUM_SEQS`).

    Raises:
        ValueError: an argument out of range.
    """
    if not rate > 0 or not ttft_target_s > 0 or not tpot_target_s > 0:
        raise ValueError("the rate and the latency targets must be > 0")
    if prompt_len < 1 or output_len < 2:
        raise ValueError("prompt_len must be >= 1 and output_len >= 2 (a first token and one decoded)")
    ctx = int(context or max(1, round(mean_held_context([prompt_len], [output_len]))))
    levers = {**scenario.levers(), "phase": "decode", "batch": 1, "prompt_len": int(prompt_len), "context": ctx}
    r = evaluate_levers(levers, scenario.catalogue)
    g = r.gpus_per_replica
    d = r.ttft_s  # one prompt alone
    top = int(max_batch if max_batch is not None else min(r.max_batch, MAX_NUM_SEQS))
    ridge = r.ridge_point

    depth, streams = r.pp, r.ep  # stages a prompt crosses; groups that each serve their own requests
    s = d / depth  # a stage's share of a prompt: the service time of the pipeline's queue
    rp = streams * md1_max_rate(ttft_target_s - (d - s), s)
    n_p, gpus_p = _gpus(rate, rp, g)
    prefill = Pool("prefill", g, rp, n_p, gpus_p, None, (d - s) + md1_ttft(rp / streams, s) if rp else None,
                   None, r.ttft_intensity, r.ttft_attainable_flop_per_s)

    if top < 1:  # nothing fits beside the weights: no decode at all
        empty = Pool("decode", g, 0.0, None, None, None, None, None, 0.0, 0.0)
        return DisaggregationResult(rate, prompt_len, output_len, ctx, ttft_target_s, tpot_target_s, prefill,
                                    empty, Pool("colocated", g, 0.0, None, None, None, None, None, 0.0, 0.0),
                                    ridge, r.peak_flop_per_s, depth, streams)
    sweep = batch_sweep(r, np.arange(1, top + 1))
    step = sweep.step_time_s_with_kv
    tpot = r.tpot_s * step / step[0]  # the lab's TPOT at B = 1, along the step's growth with B
    b = sweep.batch.astype(float)
    decode_tokens = output_len - 1

    ok = np.nonzero(tpot <= tpot_target_s)[0]
    if len(ok):
        i = int(ok[-1])
        rd = float(b[i] * depth * streams / (decode_tokens * tpot[i]))
        n_d, gpus_d = _gpus(rate, rd, g)
        decode = Pool("decode", g, rd, n_d, gpus_d, int(b[i]), None, float(tpot[i]),
                      float(sweep.arithmetic_intensity_weights[i]), float(sweep.attainable_flop_per_s_weights[i]))
    else:
        decode = Pool("decode", g, 0.0, None, None, None, None, None, float(sweep.arithmetic_intensity_weights[0]),
                      float(sweep.attainable_flop_per_s_weights[0]))

    lam = b * depth / (decode_tokens * tpot + b * depth * s)  # per EP group
    busy = lam * s
    tpot_c = tpot / (1 - busy)
    ttft_c = (d - s) + md1_ttft(lam, s) + step / 2
    feasible = np.nonzero((tpot_c <= tpot_target_s) & (ttft_c <= ttft_target_s))[0]
    if len(feasible):
        i = int(feasible[np.argmax(lam[feasible])])
        rc = float(lam[i]) * streams
        n_c, gpus_c = _gpus(rate, rc, g)
        steps_per_s = (1 - busy[i]) / step[i]  # a stage's decode steps per second beside its prefills
        blend = float((lam[i] * r.ttft_intensity + steps_per_s * sweep.arithmetic_intensity_weights[i])
                      / (lam[i] + steps_per_s))
        colocated = Pool("colocated", g, rc, n_c, gpus_c, int(b[i]), float(ttft_c[i]), float(tpot_c[i]), blend,
                         float(r.roof(blend)))
    else:
        colocated = Pool("colocated", g, 0.0, None, None, None, None, None, r.ttft_intensity, 0.0)
    return DisaggregationResult(rate, int(prompt_len), int(output_len), ctx, float(ttft_target_s),
                                float(tpot_target_s), prefill, decode, colocated, ridge, r.peak_flop_per_s, depth,
                                streams)
