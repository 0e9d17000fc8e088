"""Speculative decoding that pays: expected accepted tokens per verify step.

A draft model proposes γ tokens; the target model scores them in one forward
pass over k = γ + 1 positions (the γ drafts plus the token it produces itself),
reading its weights once.  That is the lab's speculation depth k: the intensity
``2·B·k/p`` counts k tokens of arithmetic per weight read (article 000,
"Alternative Designs"; article 004, section 03).

If each draft token is accepted independently with probability α, the expected
number of tokens produced per verify step is (Leviathan, Kalman & Matias 2023,
"Fast Inference from Transformers via Speculative Decoding", eq. 1)::

    E = (1 − α^(γ+1)) / (1 − α)  =  (1 − α^k) / (1 − α)

E = 1 with no speculation (k = 1) and tends to k as α → 1.  The draft model's
own cost is not counted here.
"""

from __future__ import annotations

import numpy as np


def expected_tokens_per_verify(acceptance, k):
    """E, expected tokens produced per verify pass of depth ``k`` at acceptance α.

    Args:
        acceptance: α in [0, 1], the per-token acceptance rate (array or scalar).
        k: speculation depth (positions scored per pass, γ = k − 1 drafts), >= 1.

    Raises:
        ValueError: α outside [0, 1] or k < 1.
    """
    a = np.asarray(acceptance, dtype=float)
    k = np.asarray(k, dtype=float)
    if np.any((a < 0) | (a > 1)) or np.any(k < 1):
        raise ValueError("acceptance must be in [0, 1] and k >= 1")
    with np.errstate(divide="ignore", invalid="ignore"):
        e = (1.0 - a**k) / (1.0 - a)
    return np.where(a == 1.0, k, e)


def speculation_sweep(levers: dict, depths, resolve_model=None, resolve_gpu=None) -> dict:
    """Decode at each speculation depth in ``depths``, other levers held.

    Args:
        levers: :meth:`core.Scenario.levers` (ids and SI values).
        depths: speculation depths k (>= 1).
        resolve_model, resolve_gpu: id -> spec (default: the catalogues).

    Returns:
        dict of numpy arrays, one entry per depth: ``k``, ``intensity``
        (FLOP/byte), ``expected_tokens`` (E per sequence per verify step),
        ``step_time_s_with_kv`` (the verify pass), ``tokens_per_s`` (B·E / step) and
        ``speedup`` (over k = 1 at the same batch).
    """
    # Imported here: scenario imports this module for expected_tokens_per_verify.
    from .hardware import get_accelerator
    from .model_catalogue import get_model
    from .scenario import evaluate

    base = {**levers, "phase": "decode"}
    gpu = (resolve_gpu or get_accelerator)(base.pop("gpu"))
    model = (resolve_model or get_model)(base.pop("model"))
    rows = [evaluate(gpu=gpu, model=model, **{**base, "spec_k": int(k)}) for k in depths]
    out = {
        "k": np.array([r.tokens_per_read for r in rows]),
        "intensity": np.array([r.arithmetic_intensity_weights for r in rows]),
        "expected_tokens": np.array([r.expected_tokens_per_step for r in rows]),
        "step_time_s_with_kv": np.array([r.step_time_s_with_kv for r in rows]),
        "tokens_per_s": np.array([r.tokens_per_s_with_kv for r in rows]),
        "speedup": np.array([r.speculative_speedup for r in rows]),
    }
    return out
