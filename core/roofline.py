"""The roofline model and decode arithmetic intensity.

All functions accept scalars or numpy arrays (broadcasting) and return the same.
Units: FLOP, bytes, FLOP/s, bytes/s, FLOP/byte.

Sources:
* Roofline: Williams, Waterman & Patterson (2009), CACM 52(4):65-76;
  article 004, section 01: ``P(I) = min(P_peak, BW × I)``, ``I_ridge = P_peak / BW``.
* Decode intensity: article 004, section 03: ``FLOPs = 2·N·B·k``, ``bytes = N·p``,
  ``I = 2·B·k / p`` (the model size N cancels).
"""

from __future__ import annotations

import numpy as np

#: Share of the roofline ceiling that measured single-stream decode typically
#: reaches: "60 to 85 percent" (article 000, "Open Questions"; the shortfall is
#: launch overhead, imperfect overlap and tile effects).  An assumption, drawn
#: as a band under the roof.
EFFICIENCY_BAND = (0.60, 0.85)


def arithmetic_intensity_weights(batch, tokens_per_read, bytes_per_weight):
    """Intensity on the weights, ``I = 2·B·k / p`` in FLOP/byte.

    Args:
        batch: B, sequences sharing one read of the weights (>= 1).
        tokens_per_read: k, tokens computed per read of the weights (speculation
            depth in decode, the prompt length in prefill).
        bytes_per_weight: p, bytes per weight (2 for BF16, 0.5 for INT4).
    """
    return 2.0 * np.asarray(batch, dtype=float) * tokens_per_read / bytes_per_weight


def ridge_point(peak_flop_per_s, bandwidth):
    """``I_ridge = P_peak / BW`` in FLOP/byte (Williams, Waterman & Patterson 2009; article 000, Step 3).

    Args:
        peak_flop_per_s: dense peak, FLOP/s (scalar or array).
        bandwidth: memory bandwidth, bytes/s (> 0; scalar or array).

    Raises:
        ValueError: a bandwidth that is not a positive number.

    >>> round(float(ridge_point(989.4e12, 3.35e12)), 1)  # H100 SXM, BF16
    295.3
    """
    bw = np.asarray(bandwidth, dtype=float)
    if not np.all(np.isfinite(bw) & (bw > 0)):
        raise ValueError(f"bandwidth must be positive bytes/s, got {bandwidth!r}")
    return np.asarray(peak_flop_per_s, dtype=float) / bw


def attainable_flop_per_s(intensity, peak_flop_per_s, bandwidth):
    """Attainable FLOP/s, ``min(P_peak, BW·I)``."""
    return np.minimum(peak_flop_per_s, np.asarray(bandwidth, dtype=float) * intensity)


def decode_flop(n_params, batch, tokens_per_read):
    """FLOPs of one forward step over the weights, ``2·N·B·k``.

    Each weight does one multiply-accumulate (2 FLOP) per token.  Attention-score
    FLOPs over the KV cache are left out, as in both articles.
    """
    return 2.0 * np.asarray(n_params, dtype=float) * batch * tokens_per_read


def step_time(flops, bytes_moved, peak_flop_per_s, bandwidth):
    """Roofline time of one step, ``max(FLOPs / P_peak, bytes / BW)`` in seconds."""
    return np.maximum(
        np.asarray(flops, dtype=float) / peak_flop_per_s, np.asarray(bytes_moved, dtype=float) / bandwidth
    )


def batch_ladder(ridge, bytes_per_weight, tokens_per_read, max_batch: int = 2**16):
    """Batch sizes 1, 2, 4, ... up to the first power of two past the ridge.

    The ladder stops at the first power of two at or above twice the batch that
    reaches the ridge (``B_ridge = I_ridge·p / (2k)``), and has at least two
    rungs, so a chart always shows rungs on both sides of the ridge; it never
    climbs past ``max_batch`` (a part with an absurd ridge gets a ladder of
    bounded length, not an overflow).

    Returns:
        int64 array of batch sizes.
    """
    b_ridge = float(ridge) * bytes_per_weight / (2.0 * tokens_per_read)
    top = min(max(2.0 * b_ridge, 2.0), float(max_batch))
    n = int(np.ceil(np.log2(top)))
    return 2 ** np.arange(n + 1, dtype=np.int64)
