"""Numeric precisions: bytes per element and which compute roof applies.

Bytes per element (article 004, section 03: ``p`` in ``I = 2·B·k/p``):
FP32 4, BF16/FP16 2, FP8/INT8 1, INT4/FP4 0.5.  Weight and KV-cache precisions
are chosen separately (``p`` and ``p_kv``).

Which compute roof a weight precision runs on (the rule the lab uses):

* FP32 runs on the part's FP32 roof (no tensor cores).
* BF16/FP16 run on the 16-bit tensor roof (``bf16`` in the catalogue).
* FP8 and INT8 are W8A8: activations are quantised too and the matmul runs on
  the FP8 / INT8 tensor roof, where the part has one.
* INT4 is weight-only (W4A16, as in GPTQ/AWQ kernels): weights are
  dequantised on the fly and multiplied in BF16, so the BF16 roof applies.
* FP4 runs on the FP4 roof where the part has one (Blackwell).
* A precision whose roof the part lacks (FP8 on an A100, FP4 on an H100) runs
  weight-only: dequantised and multiplied on the BF16 roof.
* A checkpoint in two formats (gpt-oss: MXFP4 experts beside BF16 attention and
  LM head) multiplies each weight on its own format's roof: its compute roof is
  the FLOP-weighted harmonic mean of the two, :func:`mixed_roof`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Precision:
    """One numeric format.

    Attributes:
        id: short name used by the command line and the UI (``"bf16"``).
        label: display name (``"BF16"``).
        bytes_per_element: storage size in bytes (0.5 for 4-bit formats).
        native_roof: the compute-roof key this format multiplies on when the
            part supports it (``"fp32"``, ``"bf16"``, ``"fp8"``, ``"int8"``, ``"fp4"``).
    """

    id: str
    label: str
    bytes_per_element: float
    native_roof: str


PRECISIONS: dict[str, Precision] = {
    p.id: p
    for p in (
        Precision("fp32", "FP32", 4.0, "fp32"),
        Precision("bf16", "BF16", 2.0, "bf16"),
        Precision("fp16", "FP16", 2.0, "bf16"),
        Precision("fp8", "FP8", 1.0, "fp8"),
        Precision("int8", "INT8", 1.0, "int8"),
        Precision("int4", "INT4", 0.5, "bf16"),
        Precision("fp4", "FP4", 0.5, "fp4"),
    )
}

WEIGHT_PRECISIONS = tuple(PRECISIONS)
KV_PRECISIONS = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")

ROOF_LABELS = {
    "fp32": "FP32",
    "bf16": "BF16/FP16 tensor",
    "fp8": "FP8 tensor",
    "int8": "INT8 tensor",
    "fp4": "FP4 tensor",
}


def get_precision(precision_id: str) -> Precision:
    """The :class:`Precision` named ``precision_id``.

    Raises:
        ValueError: if the id is unknown; the message lists the accepted ids.
    """
    try:
        return PRECISIONS[precision_id]
    except KeyError:
        raise ValueError(
            f"unknown precision {precision_id!r}; accepted: {', '.join(PRECISIONS)}"
        ) from None


def compute_roof(precision_id: str, dense_flop_per_s: dict[str, float]) -> tuple[str, str]:
    """Which entry of a part's ``dense_flop_per_s`` a weight precision runs on.

    Args:
        precision_id: weight precision id (see :data:`PRECISIONS`).
        dense_flop_per_s: the part's dense peaks, FLOP/s keyed by roof.

    Returns:
        ``(roof_key, why)``: the key into ``dense_flop_per_s`` and a one-line reason.

    Raises:
        ValueError: unknown precision id, or a part with no 16-bit roof.
    """
    native = get_precision(precision_id).native_roof
    if native in dense_flop_per_s:
        if precision_id == "int4":
            return native, "INT4 is weight-only (W4A16): dequantised and multiplied in BF16"
        if native in ("fp8", "int8"):
            return native, f"{precision_id.upper()} is W8A8: the matmul runs on the {ROOF_LABELS[native]} roof"
        return native, f"{ROOF_LABELS[native]} roof"
    if "bf16" not in dense_flop_per_s:
        raise ValueError("this accelerator has no 16-bit (bf16) compute roof in the catalogue")
    return "bf16", (
        f"no {ROOF_LABELS[native]} figure for this part: {precision_id.upper()} weights are "
        "dequantised and multiplied on the BF16 roof (weight-only)"
    )


def mixed_roof(peak: float, peak_16bit: float, share_16bit: float) -> float:
    """The compute roof of weight FLOP split between two formats, each on its own roof (FLOP/s).

    A step of F FLOP, a share ``s`` of them by 16-bit weights on the BF16 roof and the rest on the main format's,
    takes ``F·(1 − s)/P + F·s/P_16`` seconds of compute: its roof is ``1 / ((1 − s)/P + s/P_16)``, the
    FLOP-weighted harmonic mean (Williams et al. 2009's roofline, one ceiling per instruction mix).  Every FLOP of
    the step is counted at it, attention's too: attention runs on the 16-bit roof in the engines (FlashAttention),
    at or below this mean, so the roof stays a ceiling.

    Args:
        peak: the main format's dense roof P, FLOP/s.
        peak_16bit: the part's dense BF16 roof P_16, FLOP/s.
        share_16bit: s, the share of the weights' FLOP done by 16-bit weights, 0..1.

    Returns:
        the roof, FLOP/s: ``peak`` itself when ``s`` is 0 or the two roofs are one.

    >>> round(mixed_roof(9e15, 2.25e15, 0.25) / 1e12, 3)
    5142.857
    """
    if share_16bit <= 0.0 or peak == peak_16bit:
        return peak
    return 1.0 / ((1.0 - share_16bit) / peak + share_16bit / peak_16bit)


def roof_mix(roof: str, share_16bit: float) -> str:
    """How a readout names a roof of two formats (:func:`mixed_roof`): ``"FP4 + BF16 mix"``; ``""`` under one.

    >>> roof_mix("fp4", 0.271), roof_mix("fp8", 0.0)
    ('FP4 + BF16 mix', '')
    """
    return f"{roof.upper()} + BF16 mix" if share_16bit > 0 and roof != "bf16" else ""
