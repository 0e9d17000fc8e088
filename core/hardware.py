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

from .units import GB, GiB, fmt_sig

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
        measured: True for a part whose roofs were measured on the machine (``python -m core measure``): its
            bandwidth and BF16 roof are already attainable figures, so the expected step takes nothing off them.
        sm_count: streaming multiprocessors (or CUs, MMEs, TensorCores: ``compute_unit``
            says which); None where no source prints it.
        compute_unit: ``"SM"``, ``"CU"``, ``"MME"`` or ``"TensorCore"``.
        l2_bytes: last-level on-chip cache (L2), bytes; None where unpublished.
        sram_per_sm_bytes: the largest shared memory (LDS) one thread block may use
            on one SM, bytes: FlashAttention's SRAM size M.  None where unpublished.
        roof_kind: what the compute roof is (GPU tensor cores, TPU MXU, Gaudi MME).
        interconnect: the scale-up link, or None.
        l2_bandwidth: L2 bandwidth, bytes/s, where a source gives it (else None).
        sram_bandwidth: aggregate shared-memory bandwidth, bytes/s (else None).
        sixteen_bit: the format of the 16-bit roof (``dense_flop_per_s["bf16"]``): ``"BF16"``, or ``"FP16"`` on a
            part whose tensor cores have no BF16 (Volta).
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
    measured: bool = False
    sm_count: int | None = None
    compute_unit: str = "SM"
    l2_bytes: float | None = None
    sram_per_sm_bytes: float | None = None
    roof_kind: str = ""
    interconnect: Interconnect | None = None
    l2_bandwidth: float | None = None
    sram_bandwidth: float | None = None
    sixteen_bit: str = "BF16"

    @property
    def short_name(self) -> str:
        """The name without its vendor's prefix or a parenthesis, for a label or a list: ``"H100 SXM5 80GB"``,
        ``"MI300X"``, ``"B200"``."""
        return self.name.replace("NVIDIA ", "").replace("AMD Instinct ", "").split(" (")[0]

    def capacity_bytes(self, convention: str = "binary") -> float:
        """Memory capacity in bytes under a :data:`CAPACITY_CONVENTIONS` reading.

        Raises:
            ValueError: unknown convention.
        """
        if self.memory_datasheet_unit == "GiB" and convention in CAPACITY_CONVENTIONS:
            return self.memory_datasheet_value * GiB  # printed in GiB: one reading only
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

    @property
    def is_gpu(self) -> bool:
        """False for TPUs and Gaudi parts, whose roofs are not GPU tensor cores."""
        return self.compute_unit in ("SM", "CU")

    def memory_levels(self) -> list[tuple[str, float, float | None]]:
        """The memory hierarchy's bandwidth ceilings the catalogue has, fastest first.

        Returns:
            ``(level, bandwidth bytes/s, capacity bytes or None)`` for SRAM (all SMs'
            shared memory together), L2 and DRAM (HBM), each only where a source
            gives the bandwidth.
        """
        levels = []
        if self.sram_bandwidth:
            cap = self.sram_per_sm_bytes * self.sm_count if self.sram_per_sm_bytes and self.sm_count else None
            levels.append(("SRAM", self.sram_bandwidth, cap))
        if self.l2_bandwidth:
            levels.append(("L2", self.l2_bandwidth, self.l2_bytes))
        levels.append(("HBM", self.hbm_bandwidth, self.capacity_bytes()))
        return levels


@dataclass(frozen=True)
class Interconnect:
    """An accelerator's scale-up link, as its datasheet prints it.

    Attributes:
        kind: ``"NVLink"``, ``"NVLink bridge"``, ``"PCIe"``, ``"Infinity Fabric"``, ``"ICI"``, ...
        generation: e.g. ``"4"`` for NVLink 4 or PCIe Gen4.
        bandwidth: bytes/s per GPU as printed (None where no per-chip figure is printed).
        direction: whether the printed figure is both directions together or one
            (``"bidirectional, total"``, ``"per direction"``, ``"not stated: ..."``).
        max_node: the most accelerators one scale-up domain joins (8 for HGX, 72 for
            NVL72, the pod for TPUs); None for PCIe-only cards (no scale-up domain).
        as_printed: the datasheet's wording.
        mesh_links: for a full mesh (AMD's Infinity Fabric platforms: no switch, a direct link to each peer), the
            links per GPU the printed bandwidth is the total of; None for a switched fabric, where any group of GPUs
            has the whole bandwidth.
    """

    kind: str
    generation: str
    bandwidth: float | None
    direction: str
    max_node: int | None
    as_printed: str
    mesh_links: int | None = None

    @property
    def per_direction_bandwidth(self) -> float | None:
        """Bytes/s one way: half a bidirectional total, else the figure as printed (None if unknown)."""
        if self.bandwidth is None:
            return None
        return self.bandwidth / 2 if self.direction.startswith("bidirectional") else self.bandwidth

    def group_bandwidth(self, gpus: int) -> float | None:
        """Bytes/s one way that one GPU of a group of ``gpus`` has toward the others: the whole per-direction figure
        on a switched fabric; on a full mesh of ``mesh_links`` links, only the ``gpus − 1`` links to its peers
        (a pair of MI300Xs shares one 64 GB/s link, not the 448 GB/s of all seven).  None if unknown.

        A ring all-reduce over that bandwidth takes what the mesh's direct algorithm takes: each GPU sends
        2·(n−1)/n of the data over n − 1 links at once.

        >>> from core.hardware import get_accelerator
        >>> [get_accelerator("mi300x").interconnect.group_bandwidth(n) / 1e9 for n in (2, 4, 8)]
        [64.0, 192.0, 448.0]
        >>> get_accelerator("h100-sxm").interconnect.group_bandwidth(2) / 1e9
        450.0
        """
        bw = self.per_direction_bandwidth
        if bw is None or not self.mesh_links or gpus < 2:
            return bw
        return bw * min(gpus - 1, self.mesh_links) / self.mesh_links

    def words(self, group: int | None = None) -> str:
        """The link in words.

        Args:
            group: the GPUs one collective spans (TP·EP).  None: a few words that hold for every group size (kind,
                figure per direction and, on a full mesh, how a group uses it), for a chart across TP.  A number:
                the catalogue's wording, the node, and on a full mesh what each of ``group`` GPUs has of it (the
                figure the communication uses).

        >>> link = get_accelerator("mi300x").interconnect
        >>> link.words()
        'Infinity Fabric 4 (CDNA 3), 448 GB/s per direction, a full mesh: a group of n GPUs uses n − 1 of its 7 links'
        >>> link.words(2).split("; ")[1]
        'a full mesh: each of 2 GPUs reaches the others over 1 of its 7 links, 64 GB/s per direction)'
        """
        bw = self.per_direction_bandwidth
        name = f"{self.kind} {self.generation}".strip()
        per_dir = f", {bw / 1e9:,.0f} GB/s per direction" if bw else ""
        if group is None:
            mesh = (f", a full mesh: a group of n GPUs uses n − 1 of its {self.mesh_links} links" if self.mesh_links
                    else "")
            return name + per_dir + mesh
        node = f", up to {self.max_node} accelerators per node" if self.max_node else ", no scale-up node"
        mesh = ""
        if self.mesh_links and bw and group > 1:
            used = min(group - 1, self.mesh_links)
            mesh = (f"; a full mesh: each of {group} GPUs reaches the others over {used} of its {self.mesh_links} "
                    f"links, {fmt_sig(self.group_bandwidth(group) / 1e9)} GB/s per direction")
        return f"{name} ({self.as_printed}{per_dir}{node}{mesh})"


#: The link's words where the catalogue has none (:meth:`Interconnect.words`).
NO_LINK_WORDS = "no interconnect in the catalogue"


def _interconnect(rec: dict | None) -> Interconnect | None:
    if not rec:
        return None
    bw = rec.get("bandwidth_bytes_per_s")
    return Interconnect(kind=rec["kind"], generation=str(rec["generation"]),
                        bandwidth=None if bw is None else float(bw), direction=rec["direction"],
                        max_node=rec.get("max_node"), as_printed=rec["as_printed"], mesh_links=rec.get("mesh_links"))


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
        sm_count=rec.get("sm_count"),
        compute_unit=rec.get("compute_unit", "SM"),
        l2_bytes=None if rec.get("l2_bytes") is None else float(rec["l2_bytes"]),
        sram_per_sm_bytes=None if rec.get("sram_per_sm_bytes") is None else float(rec["sram_per_sm_bytes"]),
        roof_kind=rec.get("roof_kind", ""),
        interconnect=_interconnect(rec.get("interconnect")),
        l2_bandwidth=rec.get("hierarchy", {}).get("l2_bandwidth"),
        sram_bandwidth=rec.get("hierarchy", {}).get("sram_bandwidth"),
        sixteen_bit=rec.get("sixteen_bit", "BF16"),
    )


@cache
def load_accelerators(path: Path = CATALOGUE_PATH) -> dict[str, Accelerator]:
    """The lab's selector list (``"gpus"`` in the file) keyed by id, in file order."""
    records = json.loads(Path(path).read_text())["gpus"]
    return {rec["id"]: _from_record(rec) for rec in records}


@cache
def load_catalogue(path: Path = CATALOGUE_PATH) -> dict[str, Accelerator]:
    """Every catalogue accelerator: the selector list, then ``"more_accelerators"`` (TPUs,
    Gaudi, further GPUs) used by the hardware views, keyed by id in file order."""
    raw = json.loads(Path(path).read_text())
    return {rec["id"]: _from_record(rec) for rec in raw["gpus"] + raw.get("more_accelerators", [])}


def get_accelerator(gpu_id: str) -> Accelerator:
    """The catalogue accelerator ``gpu_id``.

    Raises:
        ValueError: unknown id; the message lists the accepted ids.
    """
    gpus = load_catalogue()
    try:
        return gpus[gpu_id]
    except KeyError:
        raise ValueError(f"unknown GPU {gpu_id!r}; accepted: {', '.join(gpus)}") from None


CUSTOM_ROOFS = ("bf16", "fp8", "int8", "fp4")

#: Plausible ranges of a custom part's numbers, in the form's units: from a laptop CPU's
#: roofs (10 GFLOP/s, 1 GB/s, 0.1 GB) to a thousand times past today's largest parts.
#: Outside them a number is a typo, and the arithmetic would overflow.  The one table the
#: browser form and the command line's ``--gpu-*`` flags are checked against; the
#: scale-up link in GB/s per direction (PCIe 3 x4 to a thousand NVLink 5s), its node in GPUs.
CUSTOM_RANGES = {"peak": (0.01, 1e7), "bandwidth": (1e-3, 1e4), "capacity": (0.1, 1e7), "link": (1.0, 1e6),
                 "node": (1, 100_000)}


class CustomAcceleratorError(ValueError):
    """A number or name :func:`custom_accelerator` refuses, with the argument it is about.

    Attributes:
        field: the argument's name as :func:`custom_accelerator` takes it (``"name"``, ``"bandwidth_tbs"``,
            ``"capacity_gb"``, ``"capacity_gib"``, ``"link_gbs"``, ``"max_node"``, ``"reference"``, ``"measured"``, or a
            roof such as ``"bf16"``), so that a caller can name its own field or flag for it.
    """

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


def custom_accelerator(name: str, bandwidth_tbs: float, capacity_gb: float | None = None, reference: str | None = None,
                       link_gbs: float | None = None, max_node: int | None = None, measured: bool = False,
                       capacity_gib: float | None = None, **peaks_tflops: float) -> Accelerator:
    """A user's accelerator from datasheet-style numbers (TFLOP/s, TB/s, GB as printed).

    Args:
        name: display name (1 to 60 characters).
        bandwidth_tbs: memory bandwidth, TB/s (1e12 bytes/s).
        capacity_gb: memory capacity as the datasheet prints it, "GB" (read under the scenario's capacity
            convention).
        capacity_gib: instead of ``capacity_gb``, a capacity in GiB (2^30 bytes), one reading whatever the
            convention: what a device reports (``python -m core measure`` writes it).
        reference: a catalogue id whose datasheet roof is drawn beside this
            one (a measured H200 beside the H200's datasheet), or None.
        link_gbs: the scale-up link, GB/s (1e9 bytes/s) per direction per GPU, or None (no link figure).
        max_node: GPUs one scale-up domain joins, or None (no scale-up node).
        measured: the numbers were measured on the machine, not read from a datasheet (``python -m core
            measure`` sets it): the expected step takes no attainable fraction off its bandwidth and BF16 roof.
            A measured part's ``capacity_gb`` (a link written before ``capacity_gib``) is read as GiB.
        **peaks_tflops: dense peaks by roof (``bf16`` required; ``fp8``,
            ``int8``, ``fp4`` optional), TFLOP/s.

    Raises:
        CustomAcceleratorError: a ValueError naming the argument it is about (``field``): a missing number, one
            outside :data:`CUSTOM_RANGES`, an unknown roof or reference.
    """
    name = str(name).strip()
    if not 1 <= len(name) <= 60:
        raise CustomAcceleratorError("name", "name must be 1 to 60 characters")
    hidden = next((c for c in name if not c.isprintable()), None)
    if hidden is not None:  # a bidi override turned the page's words around it backwards (an attacker's trial)
        raise CustomAcceleratorError("name", f"name holds a character a page does not print "
                                     f"({ascii(hidden)[1:-1]}): letters, digits, spaces and punctuation only")
    unknown = set(peaks_tflops) - set(CUSTOM_ROOFS)
    if unknown:
        roof = sorted(unknown)[0]
        raise CustomAcceleratorError(roof, f"unknown compute roof {roof!r}; accepted: {', '.join(CUSTOM_ROOFS)}")
    if capacity_gb is not None and capacity_gib is not None:
        raise CustomAcceleratorError("capacity_gb", "capacity: give capacity_gb (as the datasheet prints it) or "
                                     "capacity_gib, not both")
    in_gib = capacity_gib is not None or measured is True
    values = {"bandwidth (TB/s)": (bandwidth_tbs, CUSTOM_RANGES["bandwidth"], "bandwidth_tbs"),
              **({"capacity (GiB)": (capacity_gib, CUSTOM_RANGES["capacity"], "capacity_gib")}
                 if capacity_gib is not None else
                 {"capacity (GB)": (capacity_gb, CUSTOM_RANGES["capacity"], "capacity_gb")}),
              **{f"{k.upper()} peak (TFLOP/s)": (v, CUSTOM_RANGES["peak"], k) for k, v in peaks_tflops.items()
                 if v is not None}}
    if peaks_tflops.get("bf16") is None:
        raise CustomAcceleratorError("bf16", "the BF16/FP16 dense peak (TFLOP/s) is required")
    for label, (v, (lo, hi), arg) in values.items():
        if v is None:
            raise CustomAcceleratorError(arg, f"{label} is missing: enter a positive number")
        if isinstance(v, str):
            raise CustomAcceleratorError(arg, f"{label} must be a JSON number, not text: got {v[:20]!r}")
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not (lo <= v <= hi):
            raise CustomAcceleratorError(arg, f"{label} must be a positive number from {lo:g} to {hi:g}, got {v!r}")
    if reference is not None and (not isinstance(reference, str) or reference not in load_catalogue()):
        raise CustomAcceleratorError("reference", f"unknown reference GPU {reference!r}; accepted: "
                                                  f"{', '.join(load_accelerators())}")
    if not isinstance(measured, bool):
        raise CustomAcceleratorError("measured", f"measured must be true or false, got {str(measured)[:20]!r}")
    for label, v, key, arg in (("link (GB/s per direction)", link_gbs, "link", "link_gbs"),
                               ("node (GPUs)", max_node, "node", "max_node")):
        lo, hi = CUSTOM_RANGES[key]
        if v is not None and (not isinstance(v, (int, float)) or isinstance(v, bool) or not lo <= v <= hi
                              or (key == "node" and v != int(v))):
            whole = "a whole number" if key == "node" else "a positive number"
            raise CustomAcceleratorError(arg, f"{label} must be {whole} from {lo:g} to {hi:g}, got {v!r}")
    link = None if link_gbs is None else Interconnect(
        kind="custom link", generation="", bandwidth=float(link_gbs) * 1e9, direction="per direction",
        max_node=None if max_node is None else int(max_node),
        as_printed="entered by the user")
    slug = "".join(c if c.isalnum() else "-" for c in name.lower()).strip("-")[:40] or "gpu"
    return Accelerator(
        id=f"custom-{slug}", name=name, vendor="", architecture="", year=0,
        dense_flop_per_s={k: float(v) * 1e12 for k, v in peaks_tflops.items() if v is not None},
        sparse_flop_per_s={}, hbm_bandwidth=float(bandwidth_tbs) * 1e12,
        memory_datasheet_value=float(capacity_gib if capacity_gib is not None else capacity_gb),
        # A capacity in GiB (what a device reports): one reading, whatever the convention.
        memory_datasheet_unit="GiB" if in_gib else "GB", memory_type="",
        sources={"all": "measured on the machine (python -m core measure)" if measured else "entered by the user"},
        notes="A custom accelerator: its numbers are the user's.", reference_id=reference, interconnect=link,
        measured=measured,
    )


def accelerator_form(gpu: Accelerator) -> dict:
    """The datasheet-style numbers :func:`custom_accelerator` takes (for permalinks)."""
    capacity = "capacity_gib" if gpu.memory_datasheet_unit == "GiB" else "capacity_gb"  # never GiB under a GB name
    form = {"name": gpu.name, "bandwidth_tbs": gpu.hbm_bandwidth / 1e12, capacity: gpu.memory_datasheet_value}
    form.update({k: v / 1e12 for k, v in gpu.dense_flop_per_s.items() if k in CUSTOM_ROOFS})
    if gpu.reference_id:
        form["reference"] = gpu.reference_id
    if gpu.measured:
        form["measured"] = True
    link = gpu.interconnect
    if link is not None and link.kind == "custom link":
        form["link_gbs"] = link.bandwidth / 1e9
        if link.max_node is not None:
            form["max_node"] = link.max_node
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


def peak_order_warnings(gpu: Accelerator) -> list[str]:
    """Peaks of a narrower format below the BF16/FP16 peak: every datasheet in the catalogue prints FP8 and INT8 at
    1× to 2× BF16 and FP4 at 2× to 4×, so a lower figure is most often a typo or a wrong column (the lab would then
    run an FP8 step slower than a BF16 one).

    >>> from core.hardware import custom_accelerator
    >>> peak_order_warnings(custom_accelerator("x", 3.0, 80, bf16=100, fp8=50))
    ['FP8 50 TFLOP/s is below the BF16/FP16 peak of 100: datasheets print a narrower format at 1× to 4× BF16. Check \
the figure.']
    """
    bf16 = gpu.dense_flop_per_s.get("bf16")
    return [f"{roof.upper()} {peak / 1e12:,.4g} TFLOP/s is below the BF16/FP16 peak of {bf16 / 1e12:,.4g}: datasheets "
            "print a narrower format at 1× to 4× BF16. Check the figure."
            for roof, peak in gpu.dense_flop_per_s.items() if roof in ("fp8", "int8", "fp4") and bf16 and peak < bf16]


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
