"""The kernel atlas and the overhead ceiling: article 000's figures and hand-computed cases."""

import pytest

from core.hardware import get_accelerator
from core.kernels import (
    ELEMENTWISE,
    attention_compulsory_bytes,
    attention_score_bytes,
    decode_attention,
    decode_matvec,
    flash_attention,
    flash_tiling,
    fuse,
    gemm,
    naive_attention,
)
from core.overhead import FIXES, kernels_per_step, overhead_time, three_ceilings

H100 = get_accelerator("h100-sxm")
H100_SRAM = 228 * 1024  # shared memory per SM, Hopper whitepaper


def test_gemm_4096_cube_is_1365_flop_per_byte():
    # Article 000: "A 4096-cube matmul lands around 1,365 FLOP per byte".
    g = gemm(4096, 4096, 4096)
    assert g.flop == 2 * 4096**3
    assert g.bytes_moved == 3 * 4096**2 * 2
    assert g.intensity == pytest.approx(1365.33, abs=0.01)
    assert g.bound(H100) == "compute"
    assert "2·M·K·N" in g.formula


@pytest.mark.parametrize("n", [512, 1024, 8192])
def test_square_gemm_intensity_is_n_over_3_at_bf16(n):
    assert gemm(n, n, n).intensity == pytest.approx(n / 3)


def test_gemm_at_fp8_doubles_intensity():
    assert gemm(1024, 1024, 1024, 1).intensity == pytest.approx(2 * gemm(1024, 1024, 1024).intensity)


@pytest.mark.parametrize("batch", [1, 8, 56, 296])
def test_decode_matvec_intensity_equals_batch(batch):
    # Article 000: "The arithmetic intensity of a decode step equals the batch size."
    k = decode_matvec(4096, 14336, batch)
    assert k.intensity == pytest.approx(batch)
    assert k.bound(H100) == ("memory" if batch < 295.3 else "compute")


def test_decode_matvec_with_activations_is_a_little_below_batch():
    k = decode_matvec(4096, 4096, 1, bytes_per_activation=2)
    # 2·4096² FLOPs over (4096²·2 + 8192·2) bytes
    assert k.intensity == pytest.approx(2 * 4096**2 / (4096**2 * 2 + 8192 * 2))


def test_layernorm_intensity_is_2_5():
    # Article 000: "Per element it moves 4 bytes and performs on the order of 10 FLOPs, so I ≈ 2.5."
    assert ELEMENTWISE["LayerNorm"].cost(4096).intensity == pytest.approx(2.5)


def test_residual_add_intensity():
    # The article's strip chart: residual add at 0.17 FLOP/byte (1 FLOP over 2 reads + 1 write of 2 bytes).
    # Its text's "I = 0.33" is 1 FLOP per 3 elements moved: 0.33 FLOP/byte only at 1 byte per element.
    add = ELEMENTWISE["residual add"]
    assert add.cost(1000).intensity == pytest.approx(1 / 6)
    assert round(add.cost(1000).intensity, 2) == 0.17
    assert round(add.cost(1000, bytes_per_element=1).intensity, 2) == 0.33


def test_gelu_is_worse_than_layernorm():
    # Article 000: "GeLU is worse."
    assert ELEMENTWISE["GeLU"].cost(10).intensity < ELEMENTWISE["LayerNorm"].cost(10).intensity


def test_fusion_keeps_flops_and_cuts_traffic():
    e = 4096 * 4096
    f = fuse(["LayerNorm", "GeLU", "residual add"], e)
    assert f.fused.flop == f.unfused.flop == (10 + 5 + 1) * e
    # unfused: (1+1) + (1+1) + (2+1) = 7 tensors moved; fused: x and the residual read, one output: 3.
    assert f.unfused.bytes_moved == 7 * e * 2 and f.fused.bytes_moved == 3 * e * 2
    assert f.bytes_saved == 4 * e * 2
    assert f.traffic_ratio == pytest.approx(7 / 3)
    # Three single-input ops fused: exactly the article's "factor of three".
    assert fuse(["LayerNorm", "GeLU", "dropout"], e).traffic_ratio == pytest.approx(3.0)


def test_fusion_refuses_unknown_ops():
    with pytest.raises(ValueError, match="unknown op 'conv'.*LayerNorm"):
        fuse(["LayerNorm", "conv"], 10)
    with pytest.raises(ValueError, match="at least one"):
        fuse([], 10)


def test_naive_attention_counts_algorithm_0():
    n, d = 4096, 128
    a = naive_attention(n, d)
    assert a.flop == 4 * n * n * d + 5 * n * n
    assert a.bytes_moved == (4 * n * d + 4 * n * n) * 2  # 138.4 MB per head
    assert a.bytes_moved / 1e6 == pytest.approx(138.41, abs=0.01)
    # Article 000: "an intensity of about d": d FLOPs per element moved, d/p FLOP/byte.
    assert a.flop / (a.bytes_moved / 2) == pytest.approx(d, rel=0.05)
    assert a.bound(H100) == "memory"


def test_flash_attention_traffic_example_on_h100():
    # N = 4096, d = 128 (the article's example length), H100: 228 KiB of shared memory per SM
    # = 116,736 BF16 elements; B_c = ceil(116736 / 512) = 228; T_c = ceil(4096 / 228) = 18.
    t = flash_tiling(4096, 128, H100_SRAM)
    assert (t.sram_elements, t.block_cols, t.block_rows, t.outer_passes) == (116_736, 228, 128, 18)
    fa, na = flash_attention(4096, 128, H100_SRAM), naive_attention(4096, 128)
    # bytes = (2Nd + 18·(3Nd + 4N))·2 = 59,310,080
    assert fa.bytes_moved == 59_310_080
    # More FLOPs, fewer bytes, less time: the article's inversion.
    assert fa.flop > na.flop
    assert fa.bytes_moved < na.bytes_moved / 2
    assert fa.time(H100) < na.time(H100)
    # "2 to 4 times faster": 41.3 µs against 17.7 µs on the roofline.
    assert na.time(H100) / fa.time(H100) == pytest.approx(2.33, abs=0.01)


def test_flash_traffic_scales_as_n2_d2_over_m():
    # Θ(N²d²/M): the re-read term doubles with N², and halves when M doubles.
    def reread(n, d, m_bytes):
        return flash_attention(n, d, m_bytes).bytes_moved - 2 * n * d * 2

    base = reread(16384, 64, 256 * 1024)
    assert reread(32768, 64, 256 * 1024) / base == pytest.approx(4, rel=0.02)
    assert reread(16384, 64, 512 * 1024) / base == pytest.approx(0.5, rel=0.02)


def test_attention_capacity_and_floor():
    assert attention_score_bytes(4096) == 4096**2 * 2
    assert attention_compulsory_bytes(4096, 128) == 4 * 4096 * 128 * 2
    with pytest.raises(ValueError, match="cannot hold one row"):
        flash_tiling(4096, 128, 512)


@pytest.mark.parametrize("batch", [1, 64])
def test_decode_attention_is_one_flop_per_byte_whatever_the_batch(batch):
    # Article 000: 2 FLOPs per cached element of 2 bytes, independent of the batch.
    k = decode_attention(8192, 8, 128, batch)
    assert k.intensity == pytest.approx(1.0)
    assert k.bytes_moved == 2 * 8192 * 8 * 128 * batch * 2


def test_decode_attention_gqa_group_reads_each_element_g_times():
    assert decode_attention(8192, 8, 128, 1, queries_per_kv_head=4).intensity == pytest.approx(4.0)


@pytest.mark.parametrize("bad", [0, -1, 1.5, float("nan"), float("inf"), 1e30, "12", True, None])
def test_shapes_are_refused_by_name(bad):
    with pytest.raises(ValueError, match="M"):
        gemm(bad, 10, 10)


def test_kernels_per_step_counts():
    assert kernels_per_step(32) == 32 * 11 + 4
    assert kernels_per_step(32, "fused") == 32 * 5 + 4
    with pytest.raises(ValueError, match="unknown fusion level"):
        kernels_per_step(32, "mega")


def test_overhead_time_and_cuda_graphs():
    assert overhead_time(356) == pytest.approx(356 * 4e-6)
    assert overhead_time(356, cuda_graphs=True) == pytest.approx(4e-6 + 356 * 1e-6)
    with pytest.raises(ValueError, match="launch latency"):
        overhead_time(10, launch_latency_s=float("nan"))


def test_llama_3_8b_batch_1_is_memory_bound():
    # 16.06 GB of weights, 16.06 GFLOP: 4.79 ms of memory, 356 launches = 1.42 ms of overhead.
    t = three_ceilings(2 * 8.03e9, 16.06e9, kernels_per_step(32), H100)
    assert t.memory_s * 1e3 == pytest.approx(4.79, abs=0.01)
    assert t.overhead_s * 1e3 == pytest.approx(1.424, abs=0.001)
    assert t.regime == "memory" and t.fixes == FIXES["memory"]


def test_batch_1_layernorm_is_overhead_bound():
    # Article 000: "a batch-1 LayerNorm on a 4096-dimensional vector takes less than" a launch.
    ln = ELEMENTWISE["LayerNorm"].cost(4096)
    t = three_ceilings(ln.flop, ln.bytes_moved, 1, H100)
    assert t.memory_s < 1e-8 and t.overhead_s == 4e-6
    assert t.regime == "overhead" and "CUDA graphs" in t.fixes


def test_small_model_at_batch_1_falls_below_both_roofs_and_graphs_lift_it():
    # A 125M-parameter, 12-layer model at batch 1: 0.25 GB read in 75 µs, 136 launches take 544 µs.
    n = 125e6
    t = three_ceilings(2 * n, 2 * n, kernels_per_step(12), H100)
    assert t.regime == "overhead"
    assert t.achieved_flop_per_s < min(H100.dense_flop_per_s["bf16"], H100.hbm_bandwidth * t.intensity)
    g = three_ceilings(2 * n, 2 * n, kernels_per_step(12), H100, cuda_graphs=True)
    assert g.overhead_s < t.overhead_s and g.overhead_ceiling_flop_per_s > t.overhead_ceiling_flop_per_s


def test_large_gemm_is_compute_bound():
    g = gemm(8192, 8192, 8192)
    assert three_ceilings(g.flop, g.bytes_moved, 1, H100).regime == "compute"


def test_fusion_is_never_a_fix_that_cannot_help_a_memory_or_overhead_bound_step():
    """A teacher's trial: one overhead-bound step's readout offered "bigger, fused kernels" and said "fusion" cannot
    help.  Fusing cuts bytes and launches; a compute-bound step it does not help."""
    from core.overhead import fixes_that_cannot_help

    overhead, memory = fixes_that_cannot_help("overhead"), fixes_that_cannot_help("memory")
    assert "fusion" not in overhead["memory"] and overhead["compute"] == FIXES["compute"]
    assert "batching" not in overhead["memory"]  # more work a launch: the overhead ceiling rises with B
    assert memory["overhead"] == ("CUDA graphs", "less Python in the loop")
    assert fixes_that_cannot_help("compute") == {"memory": FIXES["memory"], "overhead": FIXES["overhead"]}
    with pytest.raises(KeyError):
        fixes_that_cannot_help("network")
