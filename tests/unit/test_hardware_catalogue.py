"""The extended catalogue: 25 accelerators, architecture and interconnect fields, every number sourced."""

import json

import pytest

from core.hardware import CATALOGUE_PATH, get_accelerator, load_accelerators, load_catalogue
from core.units import GiB, KiB, MiB

ALL = list(load_catalogue())
RAW = json.loads(CATALOGUE_PATH.read_text())
RECORDS = {r["id"]: r for r in RAW["gpus"] + RAW["more_accelerators"]}


def test_at_least_25_accelerators_and_the_selector_list_is_first():
    assert len(ALL) >= 25
    assert ALL[: len(load_accelerators())] == list(load_accelerators())
    for gid in ("h100-nvl", "gb200", "mi325x", "mi355x", "tpu-v5e", "tpu-v5p", "tpu-v6e", "gaudi-2", "gaudi-3",
                "rtx-5090", "a10"):
        assert gid in ALL


@pytest.mark.parametrize("gpu_id", ALL)
def test_every_number_has_a_source(gpu_id):
    rec = RECORDS[gpu_id]
    for key in ("dense_flop_per_s", "hbm_bandwidth", "memory", "interconnect"):
        assert rec["sources"][key].startswith("https://"), key
    if rec["sparse_flop_per_s"]:
        assert rec["sources"]["sparse_flop_per_s"].startswith("https://")
    # Every architecture field is either sourced (a URL) or null with the reason written where the source would be.
    for key in ("sm_count", "l2_bytes", "sram_per_sm_bytes"):
        src = rec["sources"][key]
        if rec[key] is not None:
            assert "https://" in src, key
        else:
            assert src and "https://" not in src.split(" ")[0], key
    assert rec["sources"]["year"]
    if "hierarchy" in rec:
        assert "https://" in rec["sources"]["hierarchy"]


@pytest.mark.parametrize("gpu_id", ALL)
def test_units_are_si_and_peaks_dense(gpu_id):
    g = get_accelerator(gpu_id)
    assert 1e11 < g.hbm_bandwidth < 1e14
    assert all(1e12 < v < 1e17 for v in g.dense_flop_per_s.values())
    for roof, sparse in g.sparse_flop_per_s.items():
        assert sparse / g.dense_flop_per_s[roof] == pytest.approx(2.0, rel=0.03)
    assert 2015 <= g.year <= 2026
    assert "bf16" in g.dense_flop_per_s


def test_existing_entries_keep_their_values():
    h = get_accelerator("h100-sxm")
    assert h.dense_flop_per_s["bf16"] == 989.4e12 and h.hbm_bandwidth == 3.35e12
    assert get_accelerator("b200").dense_flop_per_s["bf16"] == 2.25e15


def test_architecture_fields_from_the_whitepapers():
    h = get_accelerator("h100-sxm")
    assert (h.sm_count, h.l2_bytes, h.sram_per_sm_bytes) == (132, 50 * MiB, 228 * KiB)
    a = get_accelerator("a100-80gb")
    assert (a.sm_count, a.l2_bytes, a.sram_per_sm_bytes) == (108, 40 * MiB, 164 * KiB)
    assert get_accelerator("v100").sm_count == 80
    assert get_accelerator("h100-pcie").sm_count == 114
    assert get_accelerator("mi300x").compute_unit == "CU" and get_accelerator("mi300x").sm_count == 304


@pytest.mark.parametrize(("gpu_id", "kind", "bandwidth", "node"), [
    ("a100-80gb", "NVLink", 600e9, 8), ("h100-sxm", "NVLink", 900e9, 8), ("h200", "NVLink", 900e9, 8),
    ("b200", "NVLink", 1.8e12, 8), ("gb200", "NVLink", 1.8e12, 72), ("l4", "PCIe", 64e9, None),
    ("l40s", "PCIe", 64e9, None), ("rtx-4090", "PCIe", 64e9, None), ("h100-pcie", "PCIe", 128e9, None),
    ("mi300x", "Infinity Fabric", 896e9, 8),
])
def test_interconnects_as_issue_10_needs_them(gpu_id, kind, bandwidth, node):
    ic = get_accelerator(gpu_id).interconnect
    assert (ic.kind, ic.bandwidth, ic.max_node) == (kind, bandwidth, node)
    assert ic.direction and ic.as_printed


def test_per_direction_bandwidth_halves_a_bidirectional_total():
    assert get_accelerator("h100-sxm").interconnect.per_direction_bandwidth == 450e9
    assert get_accelerator("tpu-v3").interconnect.per_direction_bandwidth is None


def test_non_gpu_roofs_are_marked():
    for gid in ("tpu-v5e", "tpu-v6e", "gaudi-3"):
        g = get_accelerator(gid)
        assert not g.is_gpu
        assert "tensor cores" not in g.roof_kind
    assert "MXU" in get_accelerator("tpu-v5p").roof_kind
    assert get_accelerator("h100-sxm").is_gpu


def test_capacity_printed_in_gib_has_one_reading():
    v4 = get_accelerator("tpu-v4")
    assert v4.capacity_bytes("binary") == v4.capacity_bytes("decimal") == 32 * GiB


def test_memory_levels_fastest_first():
    levels = get_accelerator("a100-80gb").memory_levels()
    assert [name for name, _, _ in levels] == ["SRAM", "L2", "HBM"]
    bws = [bw for _, bw, _ in levels]
    assert bws == sorted(bws, reverse=True)
    # A100: L2 5120 bytes/clk at 1410 MHz = 7.22 TB/s; SRAM 128 B/clk × 108 SMs × 1410 MHz = 19.5 TB/s
    assert bws[1] == pytest.approx(7.2192e12) and bws[0] == pytest.approx(19.49e12, rel=1e-3)
    assert [n for n, _, _ in get_accelerator("h100-sxm").memory_levels()] == ["SRAM", "HBM"]
    assert get_accelerator("h100-sxm").memory_levels()[0][1] == pytest.approx(33.45e12, rel=1e-3)


def test_the_rtx_5090s_fp8_int8_and_fp4_roofs_are_the_whitepapers_dense_figures():
    """Blackwell GeForce's appendix (FP32 accumulate, as the RTX 4090's): FP8 419, INT8 838, FP4 1,676 dense; the
    catalogue had BF16 only, so FP8 weights on an RTX 5090 took BF16's roof for their prefill."""
    g = get_accelerator("rtx-5090")
    assert {k: v / 1e12 for k, v in g.dense_flop_per_s.items()} == {"fp32": 104.8, "bf16": 209.5, "fp8": 419,
                                                                   "int8": 838, "fp4": 1676}
    assert g.sparse_flop_per_s["fp4"] == 3352e12  # the "3,352 AI TOPS" headline is FP4 with 2:4 sparsity
    assert "main-horse.github.io" in RECORDS["rtx-5090"]["sources"]["dense_flop_per_s"]


def test_amds_links_are_bidirectional_and_a_mesh_gives_a_group_its_peers_links_only():
    """A hardware engineer's trial: an MI300X's 7 × 128 GB/s Infinity Fabric links were counted as 896 GB/s each way
    (as much as a B200's NVLink 5), where each link is 16 lanes × 32 Gb/s = 64 GB/s each way; and on the platform's
    full mesh, with no switch, a pair of GPUs shares one link."""
    for gpu, per_link in (("mi300x", 64e9), ("mi325x", 64e9), ("mi355x", 76.8e9)):
        ic = get_accelerator(gpu).interconnect
        assert ic.mesh_links == 7 and ic.per_direction_bandwidth == pytest.approx(7 * per_link)
        assert [ic.group_bandwidth(n) for n in (1, 2, 4, 8, 16)] == pytest.approx(
            [7 * per_link, per_link, 3 * per_link, 7 * per_link, 7 * per_link])
    nvlink = get_accelerator("h100-sxm").interconnect
    assert nvlink.mesh_links is None and nvlink.group_bandwidth(2) == nvlink.group_bandwidth(8) == 450e9


def test_a_split_on_a_mesh_communicates_over_its_peers_links():
    from core import Scenario

    def link(gpu, tp):
        return Scenario(model="llama-3-70b", gpu=gpu, tp=tp).evaluate()

    pair, eight = link("mi300x", 2), link("mi300x", 8)
    assert pair.link_bandwidth == 64e9 and eight.link_bandwidth == 448e9
    assert "over 1 of its 7 links, 64 GB/s per direction" in pair.interconnect
    assert link("h100-sxm", 2).link_bandwidth == 450e9
    # the same bytes over a seventh of the links: the pair's wire time is 7 × the eight's per byte
    assert pair.communication_time_s > eight.communication_time_s


def test_the_sixteen_bit_roof_names_its_format():
    # Volta's tensor cores multiply FP16 only: its 16-bit roof (kept under "bf16") is FP16's, said as data, not as a
    # note's words; every other part's is BF16's.
    formats = {g.id: g.sixteen_bit for g in load_catalogue().values()}
    assert formats.pop("v100") == "FP16"
    assert set(formats.values()) == {"BF16"}


def test_a_link_in_words_for_every_group_and_for_one():
    mesh, switched = get_accelerator("mi300x").interconnect, get_accelerator("h100-sxm").interconnect
    assert mesh.words().endswith("448 GB/s per direction, a full mesh: a group of n GPUs uses n − 1 of its 7 links")
    assert "over 3 of its 7 links, 192 GB/s per direction" in mesh.words(4)
    assert "up to 8 accelerators per node" in switched.words(2) and "mesh" not in switched.words(8)
