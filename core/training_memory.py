"""Training-side memory: ZeRO/FSDP stages per GPU, and the pipeline bubble.

Article 004, section 07's table: ZeRO / FSDP splits "optimizer state, gradients,
then parameters" with "4×, 8×, then N_d× memory reduction by stage; stage 3 adds
about 50% communication volume. A training-side answer."  Pipeline parallelism's
cost is "the bubble: (P−1)/(M+P−1) for P stages and M microbatches".

ZeRO (Rajbhandari, Rasley, Ruwase & He, "ZeRO: Memory Optimizations Toward
Training Trillion Parameter Models", SC 2020, arXiv:1910.02054), section 3.1 and
Fig. 1: mixed-precision Adam holds per parameter 2 bytes of FP16 weights, 2 of
FP16 gradients and K = 12 of optimizer state (FP32 weights, momentum, variance).
Over ``N_d`` data-parallel GPUs, per GPU (Ψ parameters):

* stage 0 (plain data parallel): ``(2 + 2 + K)·Ψ``;
* stage 1, P_os (optimizer state partitioned): ``2Ψ + 2Ψ + KΨ/N_d`` → 4× fewer as N_d grows;
* stage 2, P_os+g (and gradients): ``2Ψ + (2 + K)Ψ/N_d`` → 8×;
* stage 3, P_os+g+p (and parameters; FSDP's full sharding): ``(2 + 2 + K)Ψ/N_d`` → N_d×.

Fig. 1's example, Ψ = 7.5B, N_d = 64: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB (GB = 1e9 bytes;
tests/unit/test_training_memory.py).  Communication per step and GPU (section 7.2): data
parallelism's all-reduce moves 2Ψ elements (a reduce-scatter and an all-gather); stages 1 and
2 move the same 2Ψ; stage 3 adds an all-gather of the parameters in the backward pass, 3Ψ,
1.5× the baseline.  Activations, buffers and fragmentation are not counted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .models import ModelSpec

__all__ = [
    "DATA_PARALLEL",
    "GRADIENT_BYTES",
    "MICROBATCHES",
    "PIPELINE_STAGES",
    "OPTIMIZER_BYTES",
    "WEIGHT_BYTES",
    "ZeroStage",
    "pipeline_bubble",
    "zero_memory",
    "zero_stages",
]

#: Bytes per parameter of mixed-precision Adam (ZeRO, section 3.1): FP16 weights, FP16 gradients, and
#: K = 12 bytes of optimizer state (an FP32 copy of the weights, momentum and variance, 4 bytes each).
#: The examples' defaults (the CLI's and the Serving tab's): ZeRO's Fig. 1 runs N_d = 64; P = 4 stages.
DATA_PARALLEL = 64
PIPELINE_STAGES = 4
MICROBATCHES = (1, 2, 4, 8, 16, 32, 64)
WEIGHT_BYTES = 2
GRADIENT_BYTES = 2
OPTIMIZER_BYTES = 12

#: Communication of each stage relative to plain data parallelism's 2Ψ (ZeRO, section 7.2).
_COMMUNICATION = (1.0, 1.0, 1.0, 1.5)


@dataclass(frozen=True)
class ZeroStage:
    """Per-GPU model-state memory at one ZeRO stage.

    Attributes:
        stage: 0 (data parallel) to 3.
        data_parallel: N_d, GPUs the states are partitioned over.
        n_params: Ψ.
        weight_bytes, gradient_bytes, optimizer_bytes: per GPU, bytes.
        communication_elements: elements one GPU sends per step (2Ψ, or 3Ψ at stage 3).
    """

    stage: int
    data_parallel: int
    n_params: float
    weight_bytes: float
    gradient_bytes: float
    optimizer_bytes: float
    communication_elements: float

    @property
    def total_bytes(self) -> float:
        """Weights + gradients + optimizer state per GPU, bytes."""
        return self.weight_bytes + self.gradient_bytes + self.optimizer_bytes

    @property
    def reduction(self) -> float:
        """Stage 0's total over this stage's (1 at stage 0; tends to 4, 8, N_d as N_d grows)."""
        return (WEIGHT_BYTES + GRADIENT_BYTES + OPTIMIZER_BYTES) * self.n_params / self.total_bytes

    @property
    def communication_factor(self) -> float:
        """Communication volume over plain data parallelism's (1, 1, 1, 1.5)."""
        return _COMMUNICATION[self.stage]

    def to_json(self) -> dict:
        """The fields as a strict-JSON-ready dict (SI units: seconds, bytes, FLOP, tokens)."""
        return {"stage": self.stage, "data_parallel": self.data_parallel, "n_params": self.n_params,
                "weight_bytes": self.weight_bytes, "gradient_bytes": self.gradient_bytes,
                "optimizer_bytes": self.optimizer_bytes, "total_bytes": self.total_bytes,
                "reduction": self.reduction, "communication_elements": self.communication_elements,
                "communication_factor": self.communication_factor}


def zero_memory(n_params: float, data_parallel: int, stage: int) -> ZeroStage:
    """Per-GPU bytes of weights, gradients and optimizer state at a ZeRO stage (see the module docstring).

    Args:
        n_params: Ψ, parameters (``ModelSpec.n_params`` for a catalogue model).
        data_parallel: N_d >= 1.
        stage: 0, 1, 2 or 3.

    Raises:
        ValueError: a stage outside 0-3, N_d < 1 or Ψ <= 0.
    """
    if stage not in (0, 1, 2, 3):
        raise ValueError("the ZeRO stage must be 0, 1, 2 or 3")
    if data_parallel < 1 or not n_params > 0:
        raise ValueError("N_d must be >= 1 and the parameter count > 0")
    psi, nd = float(n_params), int(data_parallel)
    weights = WEIGHT_BYTES * psi / (nd if stage >= 3 else 1)
    grads = GRADIENT_BYTES * psi / (nd if stage >= 2 else 1)
    optimizer = OPTIMIZER_BYTES * psi / (nd if stage >= 1 else 1)
    return ZeroStage(stage, nd, psi, weights, grads, optimizer, 2 * psi * _COMMUNICATION[stage])


def zero_stages(model: ModelSpec | float, data_parallel: int) -> tuple[ZeroStage, ...]:
    """Stages 0-3 for a model (its ``n_params``) or a parameter count, over ``data_parallel`` GPUs."""
    psi = model.n_params if isinstance(model, ModelSpec) else model
    return tuple(zero_memory(psi, data_parallel, s) for s in range(4))


def limits_text(data_parallel: int) -> str:
    """Why ZeRO's stages 1 and 2 save less than the article's "4×, 8×" at ``data_parallel`` GPUs: those are the
    limits as N_d grows, ``16 / (2 + 2 + 12/N_d) → 4`` and ``16 / (2 + 14/N_d) → 8`` (mixed-precision Adam's 2 + 2 + 12
    bytes per parameter; Rajbhandari et al. 2020, Fig. 1).

    >>> print(limits_text(64))  # doctest: +NORMALIZE_WHITESPACE
    Article 004's "4×, 8×" are the limits as N_d grows: 16 / (2 + 2 + 12/N_d) and 16 / (2 + 14/N_d); at
    N_d = 64, 16 / 4.1875 = 3.82× and 16 / 2.21875 = 7.21×.
    """
    total = WEIGHT_BYTES + GRADIENT_BYTES + OPTIMIZER_BYTES
    one = WEIGHT_BYTES + GRADIENT_BYTES + OPTIMIZER_BYTES / data_parallel
    two = WEIGHT_BYTES + (GRADIENT_BYTES + OPTIMIZER_BYTES) / data_parallel
    return (f"Article 004's \"4×, 8×\" are the limits as N_d grows: {total} / ({WEIGHT_BYTES} + {GRADIENT_BYTES} + "
            f"{OPTIMIZER_BYTES}/N_d) and {total} / ({WEIGHT_BYTES} + {GRADIENT_BYTES + OPTIMIZER_BYTES}/N_d); at "
            f"N_d = {data_parallel:,}, {total} / {one:g} = {total / one:.2f}× and {total} / {two:g} = "
            f"{total / two:.2f}×.")


def pipeline_bubble(stages, microbatches):
    """The idle fraction of one pipeline pass, ``(P − 1) / (M + P − 1)`` (broadcasts).

    P stages and M micro-batches (article 004, section 07; GPipe, Huang et al. 2019, section 2.2:
    the bubble is ``O((K−1)/(M+K−1))``).  :class:`core.scenario.ScenarioResult`'s ``pipeline_bubble``
    is this at M = P.

    Raises:
        ValueError: P < 1 or M < 1.
    """
    p = np.asarray(stages, dtype=float)
    m = np.asarray(microbatches, dtype=float)
    if np.any(p < 1) or np.any(m < 1):
        raise ValueError("stages and micro-batches must be >= 1")
    out = (p - 1) / (m + p - 1)
    return float(out) if out.ndim == 0 else out
