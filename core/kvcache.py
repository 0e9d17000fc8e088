"""KV-cache size.

``KV_bytes = 2 · L · h_kv · d_head · S · B · p_kv`` (article 004, section 04):
one K and one V, per layer, per KV head, per head dimension, per token of
context S, per concurrent sequence B, at p_kv bytes per element.
"""

from __future__ import annotations

import numpy as np


def kv_cache_bytes(n_layers, n_kv_heads, head_dim, context, batch, bytes_per_element):
    """KV-cache bytes for ``batch`` sequences of ``context`` tokens (broadcasts)."""
    return (
        2.0
        * np.asarray(n_layers, dtype=float)
        * n_kv_heads
        * head_dim
        * np.asarray(context, dtype=float)
        * np.asarray(batch, dtype=float)
        * bytes_per_element
    )


def max_batch_that_fits(free_bytes, kv_bytes_per_sequence):
    """Largest whole number of sequences whose caches fit in ``free_bytes``: ``floor(free / kv_per_sequence)``.

    Args:
        free_bytes: memory beside the weights and reserve, bytes (scalar or array).
        kv_bytes_per_sequence: one sequence's KV cache, bytes (> 0; scalar or array broadcasting with it).

    Returns:
        int64 array of ``free_bytes``' shape: 0 where nothing is free (weights and reserve already overflow memory).

    Raises:
        ValueError: a KV cache per sequence that is not a positive number (a model with none holds any batch).
    """
    kv = np.asarray(kv_bytes_per_sequence, dtype=float)
    if not np.all(np.isfinite(kv) & (kv > 0)):
        raise ValueError(f"kv_bytes_per_sequence must be positive bytes, got {kv_bytes_per_sequence!r}")
    free = np.maximum(np.asarray(free_bytes, dtype=float), 0.0)
    return np.floor(free / kv_bytes_per_sequence).astype(np.int64)
