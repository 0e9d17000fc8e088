"""Serving views of one scenario: the KV-cache table and per-step traffic by context.

Sources: article 004, section 04 (KV cache against contexts and users) and
article 000, the traffic chart before "By the Numbers" (weights vs KV cache per
decode step for Llama-3-8B at batch 56, 2k and 8k context).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .models import ModelSpec

#: Contexts and concurrent users of the KV-cache table (article 004, section 04).
TABLE_CONTEXTS = (1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)
TABLE_USERS = (1, 2, 4, 8, 16, 32, 64)


def kv_table(model: ModelSpec, contexts, users, bytes_per_element: float, gqa: bool = True,
             share: float = 1.0) -> np.ndarray:
    """KV-cache bytes for every (context, users) pair.

    Args:
        share: the fraction of a sequence's cache one GPU holds (``core.parallelism``:
            ``Parallelism.kv_share`` × PP micro-batches); 1 on one GPU.

    Returns:
        float array of shape ``(len(contexts), len(users))``:
        ``users · KV_seq(context) · share``, bytes.
    """
    per_seq = share * np.array([model.kv_bytes_per_sequence(s, bytes_per_element, gqa) for s in contexts])
    return per_seq[:, None] * np.asarray(users, dtype=float)[None, :]


@dataclass(frozen=True)
class Traffic:
    """Bytes one decode step moves, split into weights and KV cache.

    Attributes:
        context: S per row, tokens (int array).
        weight_bytes: the weights, read once per step (same on every row), bytes.
        kv_bytes: the batch's KV cache read that step, bytes (array).
    """

    context: np.ndarray
    weight_bytes: float
    kv_bytes: np.ndarray

    @property
    def kv_share(self) -> np.ndarray:
        """KV bytes / (weights + KV bytes), 0..1."""
        return self.kv_bytes / (self.weight_bytes + self.kv_bytes)


def traffic_by_context(model: ModelSpec, weight_bytes: float, batch: int, contexts, bytes_per_element: float,
                       gqa: bool = True, share: float = 1.0) -> Traffic:
    """Per-step traffic of a batch of ``batch`` sequences at each context in ``contexts``.

    ``share``: the fraction of each sequence's cache one GPU reads per step (1 on one GPU).
    """
    ctx = np.asarray(contexts, dtype=np.int64)
    kv = np.array([batch * share * model.kv_bytes_per_sequence(int(s), bytes_per_element, gqa) for s in ctx])
    return Traffic(context=ctx, weight_bytes=float(weight_bytes), kv_bytes=kv)
