"""The second guided tour: article 000's hardware sections, step by step.

Same mechanism as :mod:`core.tour`: each :class:`HardwareTourStep` sets every lever
of the hardware view (:data:`HARDWARE_BASE` overridden by the step's settings) and
explains what to notice; its caption is a template filled by
:func:`hardware_values` from the numbers the core modules compute for those
levers, so a caption never quotes a number the lab did not compute.

Article 000 sections: TL;DR, How the Memory Wall Got Here, Where each transformer
operation lands, Attention and why FlashAttention wins, Where It Breaks (the third
regime, tile and wave quantisation, the cache hierarchy, sparsity).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .generations import (
    EXAMPLE_KERNEL_INTENSITY,
    GENERATIONS,
    GHOLAMI_RATES_PER_2Y,
    bound_by_generation,
    catalogue_trend,
    ridge_points,
)
from .hardware import get_accelerator
from .kernels import ELEMENTWISE, decode_attention, decode_matvec, flash_attention, fuse, gemm, naive_attention
from .model_catalogue import get_model
from .overhead import kernels_per_step, three_ceilings
from .units import fmt_bandwidth
from .waves import TILES, gemm_quantisation, padded, sm_count_for_waves, waves

#: Every lever of the hardware view a tour step sets (names are the view's params).
HARDWARE_BASE: dict = {
    "gpu": "h100-sxm", "section": "Kernel atlas", "batch": 1, "matvec_n": 4096, "matvec_k": 4096,
    "gemm_m": 4096, "gemm_k": 4096, "gemm_n": 4096, "ew_elements": 4096 * 2048,
    "ew_chain": ["LayerNorm", "GeLU", "residual add"], "fused": False, "attn_n": 4096, "attn_d": 128,
    "kv_context": 8192, "kv_heads": 8, "kv_d_head": 128, "step_params": 8.03e9, "layers": 32,
    "launch_latency_us": 4.0, "fusion_level": "unfused", "cuda_graphs": False, "tile": "128×128",
    "wave_m": 132 * 128, "wave_k": 4096, "n_min": 240, "n_max": 400, "n_probe": 257, "generations": list(GENERATIONS),
    "show_sparse": False, "example_intensity": None, "focus": [],
}

#: The Kernel atlas's kernels, by the family names a step's ``focus`` lists: the kernels it speaks of, drawn with a
#: heavy outline, their levers' group unfolded in present mode.
KERNEL_FAMILIES = ("gemm", "matvec", "elementwise", "naive", "flash", "decode_attention")

#: Sections of the hardware view a step can bring to the front.
SECTIONS = ("Kernel atlas", "Three ceilings", "Tiles and waves", "Hierarchy", "Generations")


@dataclass(frozen=True)
class HardwareTourStep:
    """One stop of the hardware tour (fields as :class:`core.tour.TourStep`).

    Attributes:
        title: heading, a ``str.format`` template over :func:`hardware_values`.
        source: the article passage the step follows.
        settings: levers that differ from :data:`HARDWARE_BASE`.
        caption: a ``str.format`` template over :func:`hardware_values`.
    """

    title: str
    source: str
    settings: dict = field(default_factory=dict)
    caption: str = ""

    def levers(self) -> dict:
        """Every lever this step sets."""
        return {**HARDWARE_BASE, **self.settings}

    def apply(self, view) -> None:
        """Set ``view`` (anything with ``param.update``) to this step in one batched update."""
        view.param.update(**self.levers())

    def render(self, levers: dict | None = None) -> tuple[str, str]:
        """``(title, caption)`` filled from the values of ``levers`` (default: this step's)."""
        values = hardware_values(levers or self.levers())
        return self.title.format(**values), self.caption.format(**values)


def _growth(roof: str) -> float:
    """The H100 SXM's dense BF16 peak (``"dense_flop_per_s"``) or HBM bandwidth over the V100's."""
    old, new = get_accelerator("v100"), get_accelerator("h100-sxm")
    if roof == "dense_flop_per_s":
        return new.dense_flop_per_s["bf16"] / old.dense_flop_per_s["bf16"]
    return new.hbm_bandwidth / old.hbm_bandwidth


def hardware_values(lv: dict) -> dict:
    """Display values (TFLOP/s, TB/s, MB = 1e6 bytes, µs, FLOP/byte) captions may quote, from the levers ``lv``."""
    gpu = get_accelerator(lv["gpu"])
    peak = gpu.dense_flop_per_s["bf16"]
    g = gemm(lv["gemm_m"], lv["gemm_k"], lv["gemm_n"])
    mv = decode_matvec(lv["matvec_n"], lv["matvec_k"], lv["batch"])
    ln = ELEMENTWISE["LayerNorm"].cost(lv["ew_elements"])
    add = ELEMENTWISE["residual add"].cost(lv["ew_elements"])
    chain = fuse(lv["ew_chain"], lv["ew_elements"]) if lv["ew_chain"] else None
    na = naive_attention(lv["attn_n"], lv["attn_d"])
    sram = gpu.sram_per_sm_bytes or 228 * 1024
    fa = flash_attention(lv["attn_n"], lv["attn_d"], sram)
    kv = decode_attention(lv["kv_context"], lv["kv_heads"], lv["kv_d_head"], lv["batch"])
    gqa_model = get_model("llama-3-8b")  # the main tour's model (article 000's)
    group = gqa_model.n_heads // gqa_model.n_kv_heads
    n_kernels = kernels_per_step(lv["layers"], lv["fusion_level"])
    step = three_ceilings(2 * lv["step_params"] * lv["batch"], 2 * lv["step_params"], n_kernels, gpu,
                          launch_latency_s=lv["launch_latency_us"] * 1e-6, cuda_graphs=lv["cuda_graphs"])
    tm, tn = TILES[lv["tile"]]
    sms, _ = sm_count_for_waves(gpu)
    q = gemm_quantisation(lv["wave_m"], 257, lv["wave_k"], tm, tn, sms, peak)
    probe = gemm_quantisation(lv["wave_m"], lv["n_probe"], lv["wave_k"], tm, tn, sms, peak)  # the readout's N
    ridges = ridge_points(lv["generations"]) if lv["generations"] else {}
    trend = catalogue_trend()
    sparse = gpu.sparse_flop_per_s.get("bf16")
    levels = {name: bw for name, bw, _ in gpu.memory_levels()}
    return {
        # Bandwidths as the Hierarchy chart's legend prints them (one formatter, the same digits: issue 30 saw "HBM
        # 2.0 TB/s" in the legend beside "2.04 TB/s" here).
        "gpu": gpu.name, "peak_tf": peak / 1e12, "bw": fmt_bandwidth(gpu.hbm_bandwidth), "ridge": gpu.ridge_point(),
        "sms": sms, "sram_kib": sram / 1024,
        "sram_bw": fmt_bandwidth(levels.get("SRAM", float("nan"))),
        "l2_bw": fmt_bandwidth(levels.get("L2", float("nan"))),
        "gemm_i": g.intensity, "gemm_bound": g.bound(gpu), "m": lv["gemm_m"], "k": lv["gemm_k"], "n": lv["gemm_n"],
        # The GEMM as its sliders stand, and its I to the chart's digits (a student shrank N to 16 as step 2 asks and
        # read "M = K = N = 4,096 … = 16 FLOP/byte" over a chart that said 15.9).
        "gemm_dims": (f"M = K = N = {lv['gemm_m']:,}" if lv["gemm_m"] == lv["gemm_k"] == lv["gemm_n"] else
                      f"M = {lv['gemm_m']:,}, K = {lv['gemm_k']:,}, N = {lv['gemm_n']:,}"),
        # whole above 100 (the article's "1,365"), else to a tenth as its work line (core.kernels.gemm) prints it
        "gemm_i_text": f"{g.intensity:,.0f}" if g.intensity >= 100 else f"{g.intensity:,.1f}",
        "batch": lv["batch"], "batch_tokens": f"{lv['batch']:,} token{'' if lv['batch'] == 1 else 's'}",
        "matvec_i": mv.intensity, "matvec_pct": 100 * mv.attainable_flop_per_s(gpu) / peak,
        "ln_i": ln.intensity, "add_i": add.intensity,
        "chain": " → ".join(lv["ew_chain"]) if chain else "(none)",
        "fusion_ratio": chain.traffic_ratio if chain else 1.0,
        "fusion_saved_mb": chain.bytes_saved / 1e6 if chain else 0.0,
        "attn_n": lv["attn_n"], "attn_d": lv["attn_d"],
        "naive_mb": na.bytes_moved / 1e6, "flash_mb": fa.bytes_moved / 1e6, "naive_i": na.intensity,
        "flash_i": fa.intensity, "naive_us": na.time(gpu) * 1e6, "flash_us": fa.time(gpu) * 1e6,
        "flop_ratio": fa.flop / na.flop, "speedup": na.time(gpu) / fa.time(gpu),
        "byte_ratio": na.bytes_moved / fa.bytes_moved, "scores_mb": lv["attn_n"] ** 2 * 2 / 1e6,
        "kv_i": kv.intensity,
        # GQA's group, on the main tour's model (article 000's Llama-3-8B): decode attention's I is 2·g/p_kv.
        "gqa_model": gqa_model.name, "gqa_g": group,
        "gqa_i": decode_attention(lv["kv_context"], lv["kv_heads"], lv["kv_d_head"], lv["batch"], group).intensity,
        "n_kernels": n_kernels, "launch_us": lv["launch_latency_us"], "overhead_us": step.overhead_s * 1e6,
        "memory_us": step.memory_s * 1e6, "compute_us": step.compute_s * 1e6, "regime": step.regime,
        # Step 9's verdict as the step now stands (a student set fusion back to unfused, as the card asks, and read
        # "Now the weight read (75 µs) binds: overhead-bound").
        "graph_verdict": (f"Now the weight read ({step.memory_s * 1e6:,.0f} µs) binds: {step.regime}-bound, and the "
                          "bandwidth fixes apply again." if step.regime != "overhead" else
                          f"The launches ({step.overhead_s * 1e6:,.0f} µs) still outlast the weight read "
                          f"({step.memory_s * 1e6:,.0f} µs): overhead-bound."),
        "fixes": ", ".join(step.fixes), "params_m": lv["step_params"] / 1e6,
        "tile": lv["tile"], "tile_n": tn, "wave_m": lv["wave_m"], "full_n": sms * tn, "n_probe": lv["n_probe"],
        "probe_blocks": probe.blocks, "probe_waves": probe.waves,
        "padded_257": padded(257, tn), "waves_full": waves(sms, sms),
        "waves_plus1": waves(sms + 1, sms),
        "extra_work_pct": 100 / sms, "extra_useful_pct": 100 * (lv["n_probe"] / (sms * tn) - 1),
        "tile_eff": 100 * q.tile_efficiency,
        "ridges": ", ".join(f"{get_accelerator(i).name.replace('NVIDIA ', '').replace('AMD Instinct ', '')} {r:.0f}"
                            for i, r in ridges.items()),
        # V100 → H100: the growth of each roof the Generations step speaks of (a teacher's trial: "nearly the same
        # bandwidth" beside 0.9 → 3.35 TB/s drawn).
        "v100_h100_flop": _growth("dense_flop_per_s"), "v100_h100_bw": _growth("hbm_bandwidth"),
        "flop_rate": GHOLAMI_RATES_PER_2Y["peak FLOP/s"], "bw_rate": GHOLAMI_RATES_PER_2Y["DRAM bandwidth"],
        "ic_rate": GHOLAMI_RATES_PER_2Y["interconnect bandwidth"],
        "cat_flop_rate": trend.rates["peak FLOP/s"], "cat_bw_rate": trend.rates["DRAM bandwidth"],
        "cat_ic_rate": trend.rates.get("interconnect bandwidth", float("nan")),
        "sparse_tf": (sparse or peak) / 1e12, "sparse_ridge": (sparse or peak) / gpu.hbm_bandwidth,
        "example": EXAMPLE_KERNEL_INTENSITY,
        "v100_example": bound_by_generation(EXAMPLE_KERNEL_INTENSITY, ["v100"])["v100"],
        "h100_example": bound_by_generation(EXAMPLE_KERNEL_INTENSITY, ["h100-sxm"])["h100-sxm"],
    }


HARDWARE_TOUR: tuple[HardwareTourStep, ...] = (
    HardwareTourStep(
        "1 · The ridge point: {ridge:.0f} FLOP per byte",
        "article 000, TL;DR and The definition and the ridge point",
        {"section": "Kernel atlas"},
        "{gpu}: {peak_tf:.1f} TFLOP/s of dense BF16 over {bw} of HBM. The two roofs meet at "
        "{ridge:.0f} FLOP/byte: a kernel must do {ridge:.0f} FLOPs for every byte it moves or the tensor cores wait. "
        "Every dot on this chart is one kernel; the ones left of the red line are bandwidth-limited.",
    ),
    HardwareTourStep(
        "2 · GEMM: the one kernel above the ridge",
        "article 000, Where each transformer operation lands (matrix multiply)",
        {"section": "Kernel atlas", "focus": ["gemm"]},
        "C = AB with {gemm_dims}: 2MKN FLOPs over (MK + KN + MN)·2 bytes = {gemm_i_text} FLOP/byte, "
        "{gemm_bound}-bound. For square matrices I ≈ n/3: shrink N with its slider and watch the dot slide down the "
        "roof into the memory-bound region.",
    ),
    HardwareTourStep(
        "3 · Decode is a matrix-vector product: I = B",
        "article 000, Matrix-vector multiply, which is what decoding is",
        {"section": "Kernel atlas", "batch": 1, "focus": ["matvec"]},
        "At batch {batch} the weight matrix is read once for {batch_tokens}: intensity {matvec_i:g} FLOP/byte, "
        "{matvec_pct:.2f} % of peak at best. No kernel can do better: the weights must be read. Move B (the main "
        "lab's batch) and the dot climbs exactly with it.",
    ),
    HardwareTourStep(
        "4 · Elementwise ops: almost no arithmetic",
        "article 000, Elementwise and reduction operations",
        {"section": "Kernel atlas", "focus": ["elementwise"]},
        "LayerNorm moves 4 bytes per element (read and write at BF16) for about 10 FLOPs: I = {ln_i:.1f}. A residual "
        "add reads two tensors and writes one for one FLOP: I = {add_i:.2f}. Individually trivial, collectively a "
        "large share of runtime. (The article's text says 0.33, one FLOP per three elements; per byte at BF16 it is "
        "1/6, as its figure has it.)",
    ),
    HardwareTourStep(
        "5 · Fusion: same FLOPs, fewer bytes",
        "article 000, Elementwise and reduction operations; Ivanov et al. 2021",
        {"section": "Kernel atlas", "fused": True, "focus": ["elementwise"]},
        "Fusing {chain} into one kernel keeps the intermediates on chip: the arithmetic is unchanged and the traffic "
        "falls {fusion_ratio:.2f}× ({fusion_saved_mb:,.0f} MB saved). Three single-input ops would give exactly the "
        "article's 3×; the residual's second input is read either way.",
    ),
    HardwareTourStep(
        "6 · FlashAttention: more FLOPs, fewer bytes, faster",
        "article 000, Attention, and why FlashAttention wins by doing more work; Dao et al. 2022",
        {"section": "Hierarchy"},
        "One head at N = {attn_n:,}, d = {attn_d}: the naive kernel writes and reads the N×N scores and "
        "probabilities in HBM, {naive_mb:,.0f} MB at I = {naive_i:.1f}. FlashAttention tiles Q, K, V through "
        "{sram_kib:.0f} KiB of SRAM per SM: {flop_ratio:.3f}× the FLOPs but {flash_mb:,.0f} MB (Θ(N²d²/M)), "
        "{naive_us:.1f} µs → {flash_us:.1f} µs, {speedup:.1f}× faster. FLOPs are the wrong unit of account. (The "
        "article's \"about d\" counts elements, not bytes; its \"order of magnitude fewer bytes\", {byte_ratio:.1f}× "
        "here.)",
    ),
    HardwareTourStep(
        "7 · The KV cache: about 1 FLOP per byte, whatever the batch",
        "article 000, Attention (the KV cache during decoding)",
        {"section": "Kernel atlas", "batch": 64, "focus": ["decode_attention"]},
        "Here each KV head serves one query head (multi-head attention, g = 1): each cached key and value does one "
        "multiply-accumulate (2 FLOPs) against its own sequence's query and occupies 2 bytes: I = {kv_i:g} at batch "
        "{batch}, exactly as at batch 1. Batching cannot fix it. GQA shares each KV head among g query heads, "
        "I = 2·g/p_kv ({gqa_model}'s g = {gqa_g} gives {gqa_i:g}, the main tour's \"Add the KV cache\"); MLA and "
        "cache compression cut the bytes.",
    ),
    HardwareTourStep(
        "8 · The third ceiling: overhead",
        "article 000, The third regime nobody plots; He 2022",
        {"section": "Three ceilings", "step_params": 125e6, "layers": 12},
        "A {params_m:,.0f}M-parameter, 12-layer model at batch 1 launches {n_kernels} kernels per step: at "
        "{launch_us:g} µs each that is {overhead_us:,.0f} µs of launches against {memory_us:,.0f} µs of weight reads. "
        "It is {regime}-bound: neither roof binds, and only {fixes} can help.",
    ),
    HardwareTourStep(
        "9 · CUDA graphs lift the overhead ceiling",
        "article 000, The third regime nobody plots",
        {"section": "Three ceilings", "step_params": 125e6, "layers": 12, "cuda_graphs": True, "fusion_level": "fused"},
        "Fuse each layer's kernels ({n_kernels} kernels in the whole step) and capture the step as one CUDA graph: "
        "one launch plus a short gap per node, {overhead_us:,.0f} µs. {graph_verdict} Set fusion back to unfused: "
        "graphs alone are not enough for this model.",
    ),
    HardwareTourStep(
        "10 · Tile quantisation: N = 257 costs N = {padded_257}",
        "article 000, Peak is not attainable (tile quantisation)",
        {"section": "Tiles and waves"},
        "With a {tile} output tile, a GEMM with N = 257 pads its last column of tiles and computes N = {padded_257} "
        "at full cost: {tile_eff:.1f} % useful work. The time against N is a staircase with risers at multiples of "
        "the tile, so the useful throughput is a sawtooth: it drops just past each multiple and climbs back.",
    ),
    HardwareTourStep(
        "11 · Wave quantisation: {waves_plus1} waves for one extra block",
        "article 000, Peak is not attainable (wave quantisation); NVIDIA Matrix Multiplication Background",
        # One row of tiles (M = 128), so that a block is a column of N: N = 132·128 is one block per SM.
        {"section": "Tiles and waves", "wave_m": 128, "n_min": 132 * 128 - 256, "n_max": 132 * 128 + 384,
         "n_probe": 132 * 128 + 1},
        "With M = {wave_m} (one row of {tile} tiles) a block is {tile_n} columns of N. N = {full_n:,} makes {sms} "
        "blocks, one per SM: {waves_full} wave. N = {n_probe:,} makes {sms} + 1 = {probe_blocks}: {probe_waves} waves, "
        "twice the time for {extra_useful_pct:.3f} % more useful work (article 000's whole block more: "
        "{extra_work_pct:.1f} %). The stair in the chart; the readout over it.",
    ),
    HardwareTourStep(
        "12 · The hierarchy: which level the traffic hits",
        "article 000, The cache hierarchy is missing from the model",
        {"section": "Hierarchy", "gpu": "a100-80gb"},
        "{gpu}: shared memory (all SMs) {sram_bw}, L2 {l2_bw}, HBM {bw}, three "
        "slopes on one chart. The naive attention point moves its N×N scores through HBM; FlashAttention keeps them "
        "in SRAM and sends only Θ(N²d²/M) bytes to HBM. A single-level roofline cannot draw this.",
    ),
    HardwareTourStep(
        "13 · Generations: the ridge climbs, unless bandwidth catches up",
        "article 000, How the Memory Wall Got Here (generations chart)",
        {"section": "Generations"},
        "Ridge points: {ridges}. From the V100 to the H100 dense FLOP/s grew {v100_h100_flop:.1f}× and bandwidth "
        "only {v100_h100_bw:.1f}×: the ridge climbed and more work sits under the slope. The H200 did the opposite "
        "(same compute, 43 % more bandwidth) and is faster for inference.",
    ),
    HardwareTourStep(
        "14 · Why a faster GPU makes more of your workload memory-bound",
        "article 000, Gholami et al. 2024; Insights 2",
        {"section": "Generations", "example_intensity": EXAMPLE_KERNEL_INTENSITY},
        "A kernel at {example:,.0f} FLOP/byte (the triangle between the ridges) is {v100_example}-bound on a V100 and "
        "{h100_example}-bound on an H100, with no change to "
        "the code. Over two decades peak FLOP/s grew {flop_rate:.1f}× per two years, DRAM bandwidth {bw_rate:.1f}× and "
        "interconnect {ic_rate:.1f}× (Gholami et al. 2024); this catalogue's NVIDIA flagships since 2017 fit "
        "{cat_flop_rate:.2f}×, {cat_bw_rate:.2f}× and {cat_ic_rate:.2f}×.",
    ),
    HardwareTourStep(
        "15 · The sparse-headline trap",
        "article 000, Sparsity and low precision move the goalposts; By the Numbers",
        # The H100 beside the A100 it followed, not all six parts: with the B200's roof drawn the dashed headline
        # lay 3 px under it (a teacher's trial found it only by its label).
        {"section": "Generations", "show_sparse": True, "generations": ["a100-80gb", "h100-sxm"]},
        "The datasheet headline for the {gpu} is {sparse_tf:,.0f} TFLOP/s: the 2:4 structured-sparsity figure. "
        "Dense LLM GEMMs have no such sparsity. Taken at face value it doubles the ridge to {sparse_ridge:.0f} "
        "(dashed), making every memory-bound kernel look twice as far from peak as it is.",
    ),
)
