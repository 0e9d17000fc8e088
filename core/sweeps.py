"""Sweeps of one scenario along one lever, everything else held.

* :func:`batch_sweep`: tokens/s and the rest at other batch sizes — article 000's
  throughput-vs-batch chart (after Step 5);
* :func:`speculation_sweep`: decode at other speculation depths k, with the
  expected accepted tokens E (Leviathan et al. 2023) — when speculation pays;
* :func:`tp_sweep`: the scenario at tensor-parallel degrees 1…64 — when more TP
  stops paying (communication overtakes the memory time).
"""

from __future__ import annotations

import numpy as np

from .scenario import LEVERS, Scenario, ScenarioResult, check_lever
from .step import Step, step


def _whole(values, lever: str) -> np.ndarray:
    """``values`` as a 1-D integer array, each one the lever ``lever`` accepts (:func:`core.scenario.check_lever`).

    Raises:
        ValueError: the first value the lever refuses, naming it (``batch=0 is not a whole number from 1 to …``).
    """
    array = np.atleast_1d(np.asarray(values))
    if array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iuf":
        raise ValueError(f"{lever}: a non-empty 1-D list of numbers, not {str(values)[:40]}")
    lo, hi = LEVERS[lever].parameter.bounds
    with np.errstate(invalid="ignore"):
        bad = ~(np.isfinite(array) & (array == np.round(array)) & (array >= lo) & (array <= hi))
    if bad.any():
        check_lever(lever, array[bad][0].item())  # raises, naming the value
    return array.astype(np.int64)


def batch_sweep(r: ScenarioResult, batches) -> Step:
    """The step of ``r``'s scenario at other batch sizes (:func:`core.step.step` on its profile).

    Everything but B is held (model, GPU, precisions, k, S, reserve, the launch overhead).

    Args:
        r: a result of :func:`core.scenario.evaluate`.
        batches: 1-D array of batch sizes, whole numbers from 1 to 65,536.

    Raises:
        ValueError: a batch size that is not one (0, -1, 2.5, NaN), naming it.
    """
    gained = r.expected_tokens_per_step if r.phase == "decode" else float(r.tokens_per_read)
    return step(r.deployment.profile, _whole(batches, "batch"), tokens=r.tokens_per_read, context=r.context,
                gained=gained, p_kv=r.kv_bytes_per_element, gqa=r.gqa, prefill=r.phase == "prefill")


def tp_sweep(scenario: Scenario, degrees=(1, 2, 4, 8, 16, 32, 64)) -> dict:
    """The scenario at each tensor-parallel degree in ``degrees``, its other levers held.

    Degrees above the model's query heads are left out.

    Returns:
        dict of numpy arrays, one entry per degree: ``tp``, ``tokens_per_s_aggregate``
        (tokens/s of every GPU group and replica), ``tokens_per_s_per_sequence``,
        ``tpot_s`` (time per output token), ``compute_time_s``, ``memory_time_s``,
        ``communication_time_s`` (one GPU's step, seconds), ``fits`` (bool) and
        ``crossover`` (the first TP whose communication time exceeds its memory
        time, or None).
    """
    model = scenario.catalogue.model(scenario.model)
    rows = [scenario.clone(tp=int(t)).evaluate() for t in _whole(degrees, "tp") if t <= model.n_heads]
    comm = np.array([r.communication_time_s for r in rows])
    memory = np.array([r.memory_time_s for r in rows])
    tps = np.array([r.tp for r in rows])
    over = np.nonzero(comm > memory)[0]
    return {
        "tp": tps,
        "tokens_per_s_aggregate": np.array([r.tokens_per_s_aggregate for r in rows]),
        "tokens_per_s_per_sequence": np.array([r.tokens_per_s_per_sequence for r in rows]),
        "tpot_s": np.array([r.tpot_s for r in rows]),
        "compute_time_s": np.array([r.compute_time_s for r in rows]),
        "memory_time_s": memory,
        "communication_time_s": comm,
        "fits": np.array([r.fits for r in rows]),
        "crossover": int(tps[over[0]]) if len(over) else None,
    }


def speculation_sweep(scenario: Scenario, depths) -> dict:
    """Decode at each speculation depth in ``depths``, the scenario's other levers held.

    Args:
        scenario: the scenario (its catalogue resolves a session's own model and GPU).
        depths: speculation depths k, whole numbers (the lever's bounds; 2.5 raises ValueError).

    Returns:
        dict of numpy arrays, one entry per depth: ``k``, ``intensity_weights``
        (FLOP/byte on the weights alone, ``2·B·k/p``), ``intensity_with_kv`` (FLOP/byte
        counting the KV reads: what sets the bound against the ridge point),
        ``bound`` (``"memory"``, ``"compute"`` or ``"overhead"``: the step's, as
        :class:`core.scenario.ScenarioResult` has it), ``expected_tokens`` (E per
        sequence per verify step), ``step_time_s_with_kv`` (the verify pass, s),
        ``tokens_per_s_with_kv`` (B·E / step) and ``speedup`` (over k = 1 at the same batch).
    """
    rows = [scenario.clone(phase="decode", spec_k=int(k)).evaluate() for k in _whole(depths, "spec_k")]
    return {
        "k": np.array([r.tokens_per_read for r in rows]),
        "intensity_weights": np.array([r.arithmetic_intensity_weights for r in rows]),
        "intensity_with_kv": np.array([r.arithmetic_intensity_with_kv for r in rows]),
        "bound": np.array([r.bound for r in rows]),
        "expected_tokens": np.array([r.expected_tokens_per_step for r in rows]),
        "step_time_s_with_kv": np.array([r.step_time_s_with_kv for r in rows]),
        "tokens_per_s_with_kv": np.array([r.tokens_per_s_with_kv for r in rows]),
        "speedup": np.array([r.speculative_speedup for r in rows]),
    }
