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
own cost is not counted here.  :func:`core.sweeps.speculation_sweep` sweeps a
scenario over k.
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
