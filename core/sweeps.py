"""Sweeps of one scenario along one lever, everything else held.

* :func:`batch_sweep`: tokens/s and the rest at other batch sizes — article 000's
  throughput-vs-batch chart (after Step 5);
* :func:`speculation_sweep`: decode at other speculation depths k, with the
  expected accepted tokens E (Leviathan et al. 2023) — when speculation pays.
"""

from __future__ import annotations

import numpy as np

from .scenario import Ladder, Scenario, ScenarioResult, step_ladder, weights_as


def batch_sweep(r: ScenarioResult, batches) -> Ladder:
    """The per-batch numbers of ``r``'s scenario at other batch sizes.

    Everything but B is held (model, GPU, precisions, k, S, reserve).

    Args:
        r: a result of :func:`core.scenario.evaluate`.
        batches: 1-D array of batch sizes (>= 1).
    """
    gained = r.expected_tokens_per_step if r.phase == "decode" else float(r.tokens_per_read)
    return step_ladder(np.asarray(batches), weights_as(r.model, r.weight_dtype), r.tokens_per_read, gained,
                       r.kv_bytes_per_sequence, r.attention_flop_per_step / r.batch, r.peak_flop_per_s, r.bandwidth,
                       r.reserve_bytes, r.capacity_bytes)


def speculation_sweep(scenario: Scenario, depths) -> dict:
    """Decode at each speculation depth in ``depths``, the scenario's other levers held.

    Args:
        scenario: the scenario (its catalogue resolves a session's own model and GPU).
        depths: speculation depths k (>= 1).

    Returns:
        dict of numpy arrays, one entry per depth: ``k``, ``intensity``
        (FLOP/byte, weights), ``expected_tokens`` (E per sequence per verify step),
        ``step_time_s_with_kv`` (the verify pass, s), ``tokens_per_s_with_kv`` (B·E / step)
        and ``speedup`` (over k = 1 at the same batch).
    """
    rows = [scenario.clone(phase="decode", spec_k=int(k)).evaluate() for k in depths]
    return {
        "k": np.array([r.tokens_per_read for r in rows]),
        "intensity": np.array([r.arithmetic_intensity_weights for r in rows]),
        "expected_tokens": np.array([r.expected_tokens_per_step for r in rows]),
        "step_time_s_with_kv": np.array([r.step_time_s_with_kv for r in rows]),
        "tokens_per_s_with_kv": np.array([r.tokens_per_s_with_kv for r in rows]),
        "speedup": np.array([r.speculative_speedup for r in rows]),
    }
