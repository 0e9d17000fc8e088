"""A model's weights at one weight-precision choice: the bytes memory holds and a step reads.

The weight-precision lever is a format applied to every weight (p = its bytes per
element, plus a quantised checkpoint's scale/zero overhead when the width matches:
:meth:`core.models.ModelSpec.weight_bytes_per_param`) or :data:`STORED`: the checkpoint
as published, each tensor group in its own format (:meth:`core.models.ModelSpec.stored_breakdown`).
Split over GPUs, each pipeline stage's share is :meth:`core.parallelism.Parallelism.stage_weights`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .models import ModelSpec
from .parallelism import Parallelism
from .precision import get_precision
from .quantization import BF16

__all__ = ["STORED", "Weights", "weights_as"]

#: The weight-precision choice that keeps the checkpoint as it is stored.
STORED = "stored"


@dataclass(frozen=True)
class Weights:
    """How a model's weights sit in memory and what a step reads, at one weight-precision choice.

    Attributes:
        held_bytes: bytes memory holds (every expert), bytes.
        bytes_per_weight: mean bytes per weight held, p.
        roof_precision: the precision id whose compute-roof rule applies (:func:`core.precision.compute_roof`).
        label: how the choice is named in a derivation.
        roof_note: why a checkpoint as stored runs on the roof it does, where the precision's rule does not say
            (a weight-only 8-bit format; a quantization_config that leaves every weight 16-bit); else "".
    """

    model: ModelSpec
    held_bytes: float
    bytes_per_weight: float
    roof_precision: str
    label: str
    stored: bool
    roof_note: str = ""

    @property
    def parts(self) -> tuple[float, float, float, float]:
        """Bytes per parameter of (embedding, LM head, the rest, routed experts): p for each under one format;
        as stored, :meth:`ModelSpec.stored_bytes_per_param_parts` (16-bit embeddings beside 4-bit experts)."""
        if self.stored:
            return self.model.stored_bytes_per_param_parts()
        return (self.bytes_per_weight,) * 4

    @property
    def sixteen_bit_groups(self) -> tuple[tuple[str, float], ...]:
        """A checkpoint as stored in a narrower main format: its tensor groups a token multiplies with in 16 bits
        (kept in BF16, or in a weight-only format beside a W8A8 one), as ``(name, active parameters)``; empty under
        one format for every weight.

        Each weight matrix multiplies on its own format's roof: gpt-oss's MXFP4 experts on an FP4 roof, its BF16
        attention, router and LM head on the BF16 roof (:func:`core.precision.mixed_roof`).  Routed groups count
        ``k_e/E`` of their parameters (the experts a token computes with).  Only matrices count: norms and biases
        are elementwise, and the embedding table is a lookup, not a product; their ``2·N`` FLOP (the articles'
        convention counts every parameter in N) stay on the main roof.  A tied table is the LM head's matrix.
        """
        if not self.stored or self.model.quantization is None or not self.model.quantization.modelled:
            return ()
        m = self.model
        out: dict[str, float] = {}
        for g in m.stored_breakdown():
            in_16_bits = g.format == BF16.name or g.weight_only  # a weight-only format multiplies in 16 bits too
            if not in_16_bits or not (g.linear or (g.name == "embeddings" and m.tie_word_embeddings)):
                continue
            active = g.params * (m.moe.experts_per_token / m.moe.n_experts if g.routed and m.moe else 1.0)
            out[g.name] = out.get(g.name, 0.0) + float(active)
        return tuple(out.items())

    @property
    def sixteen_bit_share(self) -> float:
        """Of a token's weight FLOP (``2·N_active``), the share its matrices multiplied in 16 bits do
        (:attr:`sixteen_bit_groups`), 0..1; 0 under one format."""
        return sum(p for _, p in self.sixteen_bit_groups) / self.model.n_active_params

    def stages(self, plan: Parallelism) -> tuple[tuple[float, float], ...]:
        """One GPU's ``(fixed, routed)`` weight bytes per pipeline stage of ``plan``.

        A step whose tokens touch a fraction f of the routed experts reads ``fixed + f·routed`` bytes on a
        stage; memory holds ``fixed + routed`` (every expert).  One GPU: the checkpoint's own groups as
        stored, or ``N·p`` (MoE: the always-read part and the routed experts, each times p); split over
        GPUs: :meth:`core.parallelism.Parallelism.stage_weights` with :attr:`parts`.
        """
        m = self.model
        if not plan.identity:
            return plan.stage_weights(self.parts)
        if self.stored:
            routed = sum(g.bytes for g in m.stored_breakdown() if g.routed)
            return ((float(sum(g.bytes for g in m.stored_breakdown() if not g.routed)), float(routed)),)
        if not m.moe:
            return ((float(self.held_bytes), 0.0),)
        _, moe_layers, per_expert = m.layer_split()
        return ((m.fixed_params() * self.bytes_per_weight,
                 moe_layers * m.moe.n_experts * per_expert * self.bytes_per_weight),)


def weights_as(model: ModelSpec, weight_dtype: str) -> Weights:
    """The model's weights at a weight-precision lever value (a format, or :data:`STORED`).

    A format applies to every weight, with the checkpoint's scale/zero overhead when
    its width matches (:meth:`ModelSpec.weight_bytes_per_param`).  ``"stored"`` is the
    checkpoint as published: each tensor group in its own format, embeddings and
    ignored modules 16-bit (:meth:`ModelSpec.stored_breakdown`), on the compute roof
    of its main quantised format (4-bit MXFP4/NVFP4 on an FP4 roof where the part has
    one; other 4-bit formats weight-only on BF16; FP8 on FP8).

    Raises:
        ValueError: an unknown precision id.
    """
    if weight_dtype == STORED:
        q = model.quantization
        note = ""
        if q is None or not q.modelled:
            roof = "bf16"
        elif model.stores_every_weight_16_bit():
            roof, note = "bf16", "no weight is stored in a narrower format (every tensor group BF16): the BF16 roof"
        else:
            roof, note = _stored_roof(q, {g.format for g in model.stored_breakdown() if g.linear})
        label = "as stored (16-bit)" if q is None or model.stores_every_weight_16_bit() else \
            f"as stored ({q.method} {q.bits}-bit)"
        return Weights(model, model.weight_bytes_held_as_stored(), model.stored_bytes_per_param(), roof, label, True,
                       note)
    p = model.weight_bytes_per_param(get_precision(weight_dtype).bytes_per_element)
    return Weights(model, model.n_params * p, p, weight_dtype, get_precision(weight_dtype).label, False)


def _stored_roof(q, used: set[str]) -> tuple[str, str]:
    """The precision id whose roof a quantised checkpoint's fastest format runs on, and a note where the id's own
    rule does not say why (``""``).

    The fastest format is the first rule's that quantises the activations too (W8A8, FP4) and that some matrix has
    (``used``, the formats of the checkpoint's matrices: a rule every matrix matches an earlier one before is no
    matrix's, an attacker's trial of two groups both targeting ``Linear``): a weight-only format
    (W4A16, W8A16) multiplies on the BF16 roof, and where every format is weight-only the checkpoint does.  4-bit
    MXFP4 / NVFP4 multiply natively on an FP4 roof; other 4-bit formats (NF4, INT4) are weight-only; 8-bit FP8 on
    FP8, INT8 on INT8.  The matrices a checkpoint multiplies in 16 bits beside its fastest format are
    :attr:`Weights.sixteen_bit_groups`.
    """
    fast = next((fmt for _, fmt in q.rules if not fmt.weight_only and fmt.name in used), None)
    if fast is None:  # every matrix weight-only: name the format one has (the first rule may be no matrix's)
        main = next((fmt for _, fmt in q.rules if fmt.name in used), q.main_format)
        if round(main.bits) == 4:
            return "int4", ""  # its own rule: INT4 is weight-only (W4A16)
        return "bf16", (f"{main.name} is weight-only (W{round(main.bits)}A16): dequantised and multiplied on the "
                        "BF16 roof")
    name = fast.name.upper()
    if round(fast.bits) == 4:
        return ("fp4" if "FP4" in name and "NF4" not in name and "BITSANDBYTES" not in name else "int4"), ""
    if round(fast.bits) == 8:
        return ("fp8" if "FP8" in name else "int8"), ""
    return "bf16", ""
