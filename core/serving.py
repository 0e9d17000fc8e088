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
             plan=None) -> np.ndarray:
    """Cache bytes for every (context, users) pair: the KV cache and, for a model with linear-attention, Mamba or
    cross-attention layers, the fixed state every sequence holds whatever its length
    (:meth:`core.models.ModelSpec.cache_bytes_per_sequence`: what serving allocates and the memory bar counts).

    Args:
        plan: a :class:`core.parallelism.Parallelism`: one GPU's cache (its fullest stage, each term's own TP
            share, PP micro-batches in flight); None: the whole model's.

    Returns:
        float array of shape ``(len(contexts), len(users))``: ``users · cache_seq(context)``, bytes.
    """
    if plan is None:
        per_seq = np.asarray(model.cache_bytes_per_sequence(np.asarray(contexts, float), bytes_per_element, gqa))
    else:
        per_seq = plan.pp * np.asarray(plan.cache_bytes_per_sequence_per_gpu(np.asarray(contexts, float),
                                                                             bytes_per_element, gqa))
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
                       gqa: bool = True, plan=None) -> Traffic:
    """Per-step traffic of a batch of ``batch`` sequences at each context in ``contexts``: the weights, and the
    cache a decode step reads (:meth:`core.models.ModelSpec.cache_bytes_read_per_sequence`: the KV, a hybrid's
    fixed state, sparse attention's top k).

    ``plan``: a :class:`core.parallelism.Parallelism`: one GPU's cache reads (its fullest stage); None: the whole
    model's.
    """
    ctx = np.asarray(contexts, dtype=np.int64)
    per_seq = (model.cache_bytes_read_per_sequence(ctx.astype(float), bytes_per_element, gqa) if plan is None else
               plan.cache_bytes_per_sequence_per_gpu(ctx.astype(float), bytes_per_element, gqa, read=True))
    kv = batch * np.atleast_1d(np.asarray(per_seq, dtype=float))
    return Traffic(context=ctx, weight_bytes=float(weight_bytes), kv_bytes=kv)
