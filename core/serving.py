"""Serving views of one scenario: the KV-cache table and per-step traffic by context.

Sources: article 004, section 04 (KV cache against contexts and users) and
article 000, the traffic chart before "By the Numbers" (weights vs KV cache per
decode step for Llama-3-8B at batch 56, 2k and 8k context).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .models import ModelSpec
from .step import StepProfile, memory_stage

#: Contexts and concurrent users of the KV-cache table (article 004, section 04).
TABLE_CONTEXTS = (1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)
TABLE_USERS = (1, 2, 4, 8, 16, 32, 64)


def kv_table(model: ModelSpec, contexts, users, bytes_per_element: float, gqa: bool = True) -> np.ndarray:
    """Cache bytes of the whole model for every (context, users) pair: the KV cache and, for a model with
    linear-attention, Mamba or cross-attention layers, the fixed state every sequence holds whatever its length
    (:meth:`core.models.ModelSpec.cache_bytes_per_sequence`: what serving allocates).

    Returns:
        float array of shape ``(len(contexts), len(users))``: ``users · cache_seq(context)``, bytes.
    """
    per_seq = np.asarray(model.cache_bytes_per_sequence(np.asarray(contexts, float), bytes_per_element, gqa))
    return per_seq[:, None] * np.asarray(users, dtype=float)[None, :]


def kv_table_per_gpu(profile: StepProfile, contexts, users, p_kv: float, gqa: bool = True):
    """The cache table of one GPU, as the memory bar counts it: for each context S, the GPU of the pipeline stage
    that runs out first (:func:`core.step.memory_stage`), holding its layers' cache (KV and fixed state) for PP
    micro-batches of ``users`` sequences.

    Returns:
        ``(table, room)``: bytes of shape ``(len(contexts), len(users))``, and per context the bytes that stage's GPU
        has left for them (capacity less its weights and the reserve; negative when those alone do not fit).
    """
    s = np.asarray(contexts, dtype=float)
    stage = np.atleast_1d(memory_stage(profile, s, p_kv, gqa))
    pp = len(profile.stages)
    per_seq = np.array([pp * float(profile.stages[m].cache[gqa].bytes_per_sequence(c, p_kv))
                        for m, c in zip(stage, s, strict=True)])
    room = np.array([profile.capacity_bytes - profile.stages[m].weight_bytes_held - profile.reserve_bytes
                     for m in stage])
    return per_seq[:, None] * np.asarray(users, dtype=float)[None, :], room


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
                       gqa: bool = True, profile: StepProfile | None = None, stage: int = 0) -> Traffic:
    """Per-step traffic of a batch of ``batch`` sequences at each context in ``contexts``: the weights, and the
    cache a decode step reads (:meth:`core.models.ModelSpec.cache_bytes_read_per_sequence`: the KV, a hybrid's
    fixed state, sparse attention's top k).

    ``profile``, ``stage``: one GPU's reads, that of pipeline stage ``stage`` (the slowest, whose step the result's
    figures are: ``ScenarioResult.slowest_stage``); None: the whole model's.
    """
    ctx = np.asarray(contexts, dtype=np.int64)
    per_seq = (model.cache_bytes_read_per_sequence(ctx.astype(float), bytes_per_element, gqa) if profile is None
               else profile.stages[stage].cache[gqa].bytes_per_sequence(ctx.astype(float), bytes_per_element,
                                                                        read=True))
    kv = batch * np.atleast_1d(np.asarray(per_seq, dtype=float))
    return Traffic(context=ctx, weight_bytes=float(weight_bytes), kv_bytes=kv)
