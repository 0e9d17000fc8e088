"""The third ceiling (article 000, "The third regime nobody plots") is part of the step: one step time, one bound.

A step waits on its kernel launches when they outlast the GPU's own work, so the step time is
``max(max(FLOP/P_peak, bytes/BW) + communication, t_launch)``; the tokens/s, the attainable FLOP/s (the points on
the chart) and the bound follow from it, and the readouts say "overhead-bound" only when the launches set the step.
"""

import json

import pytest

from app.roofline_view import RooflineView
from core import Scenario
from core.config_reader import from_hf_config
from core.explain import explain, quantities
from core.model_catalogue import CATALOGUE_DIR
from core.sweeps import batch_sweep

# Qwen3-30B-A3B with AWQ 4-bit weights, as in the new-user trial's config (the shipped config with an AWQ
# quantization_config): 48 layers.
AWQ = {"bits": 4, "group_size": 128, "modules_to_not_convert": ["gate"], "quant_method": "awq", "version": "gemm",
       "zero_point": True}
KERNELS = 48 * 11 + 4  # 11 kernels per layer, 4 outside the layers (core/overhead.py)
T_LAUNCH = KERNELS * 4e-6  # 4 µs each: 2.128 ms


@pytest.fixture(scope="module")
def awq_moe():
    config = {**json.loads((CATALOGUE_DIR / "qwen3-30b-a3b.json").read_text()), "quantization_config": AWQ}
    s = Scenario()
    s.add_model(from_hf_config(config, model_id="qwen3moe-awq", name="qwen3moe_awq.json"))
    assert s.weight_dtype == "stored"
    return s


def test_launches_that_outlast_the_reads_set_the_step_the_tokens_and_the_bound(awq_moe):
    r = awq_moe.evaluate()  # B = 1, S = 8,192, H100
    assert r.kernels_per_step == 532 and r.launch_overhead_s == pytest.approx(2.128e-3)
    # The reads take ~1 ms (weights ~2.7 GB and 0.81 GB of KV at 3.35 TB/s): the launches are longer.
    assert r.memory_time_s < 1.1e-3 and r.compute_time_s < 2e-5 and r.gpu_time_s == r.memory_time_s
    assert r.bound == "overhead"
    assert r.step_time_s_with_kv == r.verify_step_time_s == pytest.approx(2.128e-3)
    assert r.tokens_per_s_with_kv == pytest.approx(1 / 2.128e-3)  # 470 tokens/s, not the 961 of the reads alone
    assert r.tokens_per_s_weights == pytest.approx(1 / 2.128e-3)
    assert r.tpot_s == pytest.approx(2.128e-3)
    # The points sit on the overhead ceiling, not above it: FLOP / t_launch.
    flop_weights = 2 * 3_353_032_704  # 2·N_active·B·k = 6.706 GFLOP
    assert r.flop_per_step_weights == pytest.approx(flop_weights)
    assert r.attainable_flop_per_s_weights == pytest.approx(flop_weights / 2.128e-3)  # 3.151 TFLOP/s
    assert r.attainable_flop_per_s_with_kv == pytest.approx(r.flop_per_step / 2.128e-3)
    assert r.attainable_flop_per_s_with_kv == pytest.approx(r.overhead_ceiling_flop_per_s)
    assert r.peak_fraction_with_kv == pytest.approx(r.flop_per_step / 2.128e-3 / 989.4e12, rel=1e-3)
    # The readouts say so, each the same way.
    q = quantities(r)
    assert q["bound"].value == "overhead-bound"
    assert q["overhead"].value == "2.128 ms (overhead-bound)"
    assert q["step-time"].value == "2.128 ms"
    assert q["tokens"].value == "470 tokens/s"
    assert q["tokens-no-kv"].value == "470 tokens/s"
    assert q["attainable"].value == "3.151 TFLOP/s"
    assert q["step-time"].formula == "max(FLOP/P_peak, bytes/BW, t_launch)"
    assert q["step-time"].work.endswith(", 2.128 ms) = 2.128 ms")
    assert "launches 2.128 ms > 1.04" in q["bound"].work
    assert "Launch overhead (the third ceiling): " in explain(r) and "(memory-bound)" not in explain(r)


def test_the_star_is_drawn_under_the_overhead_ceiling(awq_moe):
    r = awq_moe.evaluate()
    view = RooflineView(result=r)
    ceiling = view.overhead.data["y"][0]
    assert ceiling == pytest.approx(r.flop_per_step / 2.128e-3 / 1e12)  # 6.18 TFLOP/s
    assert view.point.data["y"][0] == pytest.approx(3.151, rel=1e-3) and view.point.data["y"][0] <= ceiling
    assert view.point_kv.data["y"][0] == pytest.approx(ceiling)
    assert all(y <= c * (1 + 1e-12) for y, c in zip(view.kv_ladder.data["y"],
                                                     r.ladder.flop / 2.128e-3 / 1e12, strict=True))


def test_cuda_graphs_lift_the_ceiling_and_the_reads_bind_again(awq_moe):
    r = awq_moe.clone(cuda_graphs=True).evaluate()
    assert r.launch_overhead_s == pytest.approx(4e-6 + 532 * 1e-6)  # 0.536 ms
    assert r.bound == "memory"
    assert r.step_time_s_with_kv == r.memory_time_s
    assert quantities(r)["overhead"].value == "0.536 ms (not binding)"
    assert quantities(r)["bound"].value == "memory-bound"


def test_the_ladder_and_the_sweep_count_the_launches(awq_moe):
    r = awq_moe.evaluate()
    lad = r.ladder
    assert lad.batch[0] == 1 and lad.step_time_s_with_kv[0] == pytest.approx(2.128e-3)
    assert (lad.step_time_s_with_kv >= T_LAUNCH).all()
    sweep = batch_sweep(r, [1, 2])
    assert sweep.step_time_s_with_kv[0] == pytest.approx(2.128e-3)
    assert sweep.tokens_per_s_with_kv[1] == pytest.approx(2 / max(2.128e-3, float(sweep.memory_time_s[1])))


def test_launches_that_outlast_only_the_weights_reads_bind_the_weights_only_readouts():
    """A new user's trial: Qwen3-30B-A3B at BF16, B = 1, S = 8,192 on an H100.  The weights alone take 2.00 ms to
    read, less than the 532 launches' 2.128 ms, so the weights-only readouts sit on the overhead ceiling (3.151,
    not 3.35 TFLOP/s); the KV's reads make the step 2.24 ms, which hides the launches.  The overhead readout said
    "not binding" beside an attainable it had lowered."""
    r = Scenario(model="qwen3-30b-a3b").evaluate()
    assert r.memory_time_s > r.launch_overhead_s == pytest.approx(2.128e-3) == r.step_time_s_weights
    assert r.bound == "memory"
    q = quantities(r)
    assert q["overhead"].value == "2.128 ms (binds the weights-only figures)"
    # Its work said "hidden under the GPU's work" alone, which a later trial read as contradicting the value.
    assert q["overhead"].work.endswith("2.128 ms against 2.242 ms of GPU time (13.3 µs of compute, 2.242 ms of "
                                       "memory): hidden under the GPU's work counting KV reads, not under the "
                                       "weights-only step's: they set the weights-only figures; overhead ceiling "
                                       "6.179 TFLOP/s")
    assert q["attainable"].value == "3.151 TFLOP/s"  # 6.706 GFLOP / 2.128 ms, not BW·I = 3.35
    # The bound says it too: an engineer's trial read INT4's "1.14 % of peak" beside a bare "memory-bound" and batch
    # 4's 1.35 % at the same I as a contradiction.
    assert q["bound"].value == "memory-bound; weights alone: overhead"
    assert quantities(Scenario(model="qwen3-30b-a3b", batch=16).evaluate())["bound"].value == "memory-bound"


def test_launches_hidden_under_the_reads_and_communication_are_not_the_bound():
    # Llama-3-70B, TP = 8, PP = 2: one GPU runs its stage's 40 layers, 40·11 + 4 = 444 kernels, 1.776 ms; its step
    # is 2.68 ms of reads plus 0.49 ms of all-reduces: memory-bound, the launches hidden.
    r = Scenario(model="llama-3-70b", tp=8, pp=2, replicas=2).evaluate()
    assert r.kernels_per_step == 40 * 11 + 4 and r.launch_overhead_s == pytest.approx(1.776e-3)
    assert r.gpu_time_s == pytest.approx(r.memory_time_s + r.communication_time_s)
    assert r.step_time_s_with_kv == pytest.approx(r.gpu_time_s) and r.step_time_s_with_kv > 1.776e-3
    assert r.bound == "memory"
    q = quantities(r)
    assert q["overhead"].value == "1.776 ms (not binding)"
    assert q["bound"].value == "memory-bound"
    assert q["step-time"].formula == "max(max(FLOP/P_peak, bytes/BW) + communication, t_launch)"


def test_llama_3_8b_at_batch_1_stays_memory_bound_as_in_the_article():
    # Article 000, Step 4: 16.06 GB / 3.35 TB/s = 4.79 ms of reads; 356 launches take 1.42 ms.
    r = Scenario(model="llama-3-8b", context=1).evaluate()
    assert r.bound == "memory" and r.step_time_s_with_kv == pytest.approx(r.memory_time_s)
    assert r.step_time_s_with_kv > 356 * 4e-6


def test_under_pp_the_batch_total_says_it_counts_every_micro_batch():
    """A new user's trial: DeepSeek-V3 on TP = 8, PP = 2 at B = 1 showed "the batch's total 725 tokens/s" beside a
    per-sequence 362: B is one micro-batch's, and PP of them are in flight.  The readout says so."""
    r = Scenario(model="deepseek-v3", tp=8, pp=2).evaluate()
    q = quantities(r)
    assert q["tokens"].label == "Tokens/s ceiling, the batch's total (2 micro-batches of B in flight)"
    assert r.tokens_per_s_with_kv == pytest.approx(2 * r.tokens_per_s_per_sequence)
    assert r.sequences_in_flight == 2 * r.batch
    assert quantities(Scenario(model="llama-3-8b").evaluate())["tokens"].label == "Tokens/s ceiling, the batch's total"
