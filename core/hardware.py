"""The accelerator catalogue (``hardware.json`` beside this file).

Each entry gives dense peak FLOP/s per compute precision, the sparse headline
figure (kept only to show the 2:4-sparsity trap), memory bandwidth in bytes/s and
memory capacity as the datasheet prints it, with a source for every number.

Memory capacity: datasheets print "80 GB".  DRAM is built in powers of two, so an
H100's "80 GB" of HBM3 is 80 GiB (nvidia-smi shows 81,559 MiB usable).  Article
000 (Step 5) instead reads it as 80e9 bytes = 74.5 GiB.  :data:`CAPACITY_CONVENTIONS`
names both readings; the lab defaults to ``"binary"`` and keeps ``"decimal"`` to
reproduce the article's figures.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from .units import GB, GiB

CATALOGUE_PATH = Path(__file__).with_name("hardware.json")

#: How a datasheet's "N GB" capacity becomes bytes.
CAPACITY_CONVENTIONS = {
    "binary": "datasheet GB read as GiB (2^30 bytes), as DRAM is built",
    "decimal": "datasheet GB read as 1e9 bytes (article 000, Step 5)",
}


@dataclass(frozen=True)
class Accelerator:
    """One accelerator.

    Attributes:
        id: catalogue id (``"h100-sxm"``).
        name: display name.
        dense_flop_per_s: dense peak FLOP/s keyed by compute roof (``"bf16"``, ``"fp8"``,
            ``"int8"``, ``"fp4"``, ``"fp32"``); INT8 figures are OP/s.
        sparse_flop_per_s: the 2:4 structured-sparsity figures, FLOP/s (not used for any
            roof: dense LLM GEMMs have no 2:4 sparsity).
        hbm_bandwidth: peak DRAM bandwidth, bytes/s.
        memory_datasheet_value: capacity as printed, in ``memory_datasheet_unit``.
        memory_type: ``"HBM3"``, ``"GDDR6"``, ...
        sources: datasheet or whitepaper for each field.
        reference_id: for a measured or custom part, the catalogue part whose
            datasheet roof is drawn beside it.
    """

    id: str
    name: str
    vendor: str
    architecture: str
    year: int
    dense_flop_per_s: dict[str, float]
    sparse_flop_per_s: dict[str, float]
    hbm_bandwidth: float
    memory_datasheet_value: float
    memory_datasheet_unit: str
    memory_type: str
    sources: dict[str, str] = field(default_factory=dict)
    notes: str = ""
    reference_id: str | None = None

    def capacity_bytes(self, convention: str = "binary") -> float:
        """Memory capacity in bytes under a :data:`CAPACITY_CONVENTIONS` reading.

        Raises:
            ValueError: unknown convention.
        """
        if convention == "binary":
            return self.memory_datasheet_value * GiB
        if convention == "decimal":
            return self.memory_datasheet_value * GB
        raise ValueError(
            f"unknown capacity convention {convention!r}; accepted: {', '.join(CAPACITY_CONVENTIONS)}"
        )

    def ridge_point(self, roof: str = "bf16") -> float:
        """Ridge point ``P_peak / BW`` in FLOP/byte for the given compute roof.

        Source: Williams, Waterman & Patterson (2009); article 004, section 01.
        """
        return self.dense_flop_per_s[roof] / self.hbm_bandwidth


def _from_record(rec: dict) -> Accelerator:
    mem = rec["memory"]
    return Accelerator(
        id=rec["id"],
        name=rec["name"],
        vendor=rec["vendor"],
        architecture=rec["architecture"],
        year=int(rec["year"]),
        dense_flop_per_s={k: float(v) for k, v in rec["dense_flop_per_s"].items()},
        sparse_flop_per_s={k: float(v) for k, v in rec.get("sparse_flop_per_s", {}).items()},
        hbm_bandwidth=float(rec["hbm_bandwidth"]),
        memory_datasheet_value=float(mem["datasheet_value"]),
        memory_datasheet_unit=mem["datasheet_unit"],
        memory_type=mem["type"],
        sources=dict(rec["sources"]),
        notes=rec.get("notes", ""),
    )


@cache
def load_accelerators(path: Path = CATALOGUE_PATH) -> dict[str, Accelerator]:
    """All catalogue accelerators keyed by id, in file order."""
    records = json.loads(Path(path).read_text())["gpus"]
    return {rec["id"]: _from_record(rec) for rec in records}


def get_accelerator(gpu_id: str) -> Accelerator:
    """The catalogue accelerator ``gpu_id``.

    Raises:
        ValueError: unknown id; the message lists the accepted ids.
    """
    gpus = load_accelerators()
    try:
        return gpus[gpu_id]
    except KeyError:
        raise ValueError(f"unknown GPU {gpu_id!r}; accepted: {', '.join(gpus)}") from None


CUSTOM_ROOFS = ("bf16", "fp8", "int8", "fp4")


def custom_accelerator(name: str, bandwidth_tbs: float, capacity_gb: float, reference: str | None = None,
                       **peaks_tflops: float) -> Accelerator:
    """A user's accelerator from datasheet-style numbers (TFLOP/s, TB/s, GB as printed).

    Args:
        name: display name (1 to 60 characters).
        bandwidth_tbs: memory bandwidth, TB/s (1e12 bytes/s).
        capacity_gb: memory capacity as the datasheet prints it, "GB".
        reference: a catalogue id whose datasheet roof is drawn beside this
            one (a measured H200 beside the H200's datasheet), or None.
        **peaks_tflops: dense peaks by roof (``bf16`` required; ``fp8``,
            ``int8``, ``fp4`` optional), TFLOP/s.

    Raises:
        ValueError: a missing or non-positive number, or an unknown roof, naming it.
    """
    name = str(name).strip()
    if not 1 <= len(name) <= 60:
        raise ValueError("name must be 1 to 60 characters")
    unknown = set(peaks_tflops) - set(CUSTOM_ROOFS)
    if unknown:
        raise ValueError(f"unknown compute roof {sorted(unknown)[0]!r}; accepted: {', '.join(CUSTOM_ROOFS)}")
    values = {"bandwidth (TB/s)": bandwidth_tbs, "capacity (GB)": capacity_gb,
              **{f"{k.upper()} peak (TFLOP/s)": v for k, v in peaks_tflops.items() if v is not None}}
    if peaks_tflops.get("bf16") is None:
        raise ValueError("the BF16/FP16 dense peak (TFLOP/s) is required")
    for label, v in values.items():
        if v is None:
            raise ValueError(f"{label} is missing: enter a positive number")
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not (0 < v < 1e7):
            raise ValueError(f"{label} must be a positive number, got {v!r}")
    if reference is not None and reference not in load_accelerators():
        raise ValueError(f"unknown reference GPU {reference!r}; accepted: {', '.join(load_accelerators())}")
    slug = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")[:40] or "gpu"
    return Accelerator(
        id=f"custom-{slug}", name=name, vendor="", architecture="", year=0,
        dense_flop_per_s={k: float(v) * 1e12 for k, v in peaks_tflops.items() if v is not None},
        sparse_flop_per_s={}, hbm_bandwidth=float(bandwidth_tbs) * 1e12, memory_datasheet_value=float(capacity_gb),
        memory_datasheet_unit="GB", memory_type="", sources={"all": "entered by the user"},
        notes="A custom accelerator: its numbers are the user's.", reference_id=reference,
    )


def accelerator_form(gpu: Accelerator) -> dict:
    """The datasheet-style numbers :func:`custom_accelerator` takes (for permalinks)."""
    form = {"name": gpu.name, "bandwidth_tbs": gpu.hbm_bandwidth / 1e12, "capacity_gb": gpu.memory_datasheet_value}
    form.update({k: v / 1e12 for k, v in gpu.dense_flop_per_s.items() if k in CUSTOM_ROOFS})
    if gpu.reference_id:
        form["reference"] = gpu.reference_id
    return form


def catalogue_match(device_name: str) -> str | None:
    """The catalogue id a device name names, e.g. ``"NVIDIA H200"`` -> ``"h200"`` (None if none does)."""
    words = device_name.lower().replace("-", " ")
    for gpu in load_accelerators().values():
        key = gpu.id.split("-")[0]  # "h100", "a100", "rtx", ...
        if key in words.split() or key in words.replace(" ", ""):
            variants = [g for g in load_accelerators().values() if g.id.split("-")[0] == key]
            # "H100 PCIe" vs "H100 SXM": take the variant whose other words appear, else the first.
            for v in variants:
                if all(part in words for part in v.id.split("-")[1:]):
                    return v.id
            return variants[0].id
    return None


def sparse_warnings(gpu: Accelerator) -> list[str]:
    """Peaks that look like 2:4-sparsity headlines rather than dense figures.

    Each entered peak is compared with the catalogue part whose bandwidth is
    closest: about twice that part's dense peak (1.6× or more, and within 25 %
    of its sparse figure where the datasheet prints one) earns a warning.
    """
    parts = [g for g in load_accelerators().values() if g.id != gpu.id]
    similar = min(parts, key=lambda g: abs(math.log(g.hbm_bandwidth / gpu.hbm_bandwidth)))
    warnings = []
    for roof, peak in gpu.dense_flop_per_s.items():
        dense = similar.dense_flop_per_s.get(roof)
        if not dense or peak < 1.6 * dense:
            continue
        sparse = similar.sparse_flop_per_s.get(roof)
        if sparse is None or abs(peak / sparse - 1) <= 0.25:
            warnings.append(
                f"{roof.upper()} {peak / 1e12:,.0f} TFLOP/s is about twice the dense {dense / 1e12:,.0f} of "
                f"{similar.name} (similar bandwidth): is it the 2:4-sparsity headline? Enter the dense figure.")
    return warnings
