"""Many GPUs: hand-computed cases for tensor, pipeline and expert parallelism, replicas and cost."""

import json

import pytest

from core import Scenario
from core.cli import main
from core.model_catalogue import load_models
from core.parallelism import CALL_LATENCY_S, Parallelism
from core.permalink import from_query, to_query
from core.sweeps import batch_sweep, tp_sweep
from core.units import GiB

MODELS = load_models()
L70 = MODELS["llama-3-70b"]
H = 8192  # Llama-3-70B hidden size
NORMS = 80 * 2 * H + H  # two RMSNorms per layer and the final norm: replicated on every TP rank


@pytest.mark.parametrize("tp, per_gpu", [(1, 327_680), (2, 163_840), (4, 81_920), (8, 40_960), (16, 40_960),
                                         (64, 40_960)])
def test_gqa_kv_per_gpu_splits_until_tp_passes_the_kv_heads_then_replicates(tp, per_gpu):
    # 2·L·ceil(h_kv/TP)·d_head·p = 2 × 80 × ceil(8/TP) × 128 × 2 bytes
    r = Scenario(tp=tp).evaluate()
    assert r.kv_bytes_per_token_per_gpu == per_gpu
    assert r.kv_heads_per_gpu == max(1, 8 // tp)
    assert r.kv_bytes_per_token == 327_680  # what one token adds to the whole model's cache


def test_mla_latent_is_replicated_on_every_gpu():
    # DeepSeek-V3: 61 layers × (512 + 64) × 2 bytes = 70,272 bytes per token, on each of the 8 GPUs
    r = Scenario(model="deepseek-v3", tp=8).evaluate()
    assert r.kv_bytes_per_token == 70_272
    assert r.kv_bytes_per_token_per_gpu == 70_272


def test_weights_per_gpu_split_matrices_and_replicate_norms():
    n = 70_553_706_496
    assert L70.n_params == n
    assert Parallelism(L70, tp=2).n_params == (n - NORMS) / 2 + NORMS == 35_277_512_704
    # TP 16 > h_kv = 8: each GPU keeps one whole K and one V head projection per layer
    kv_proj = 2 * H * 8 * 128
    expected = (n - NORMS - 80 * kv_proj) / 16 + NORMS + 80 * 2 * H * 128
    assert Parallelism(L70, tp=16).n_params == pytest.approx(expected, rel=1e-15)
    r = Scenario(tp=2).evaluate()
    assert r.weight_bytes_held == 2 * 35_277_512_704
    assert r.model_weight_bytes == 2 * n


def test_defaults_are_one_gpu():
    r = Scenario().evaluate()
    assert (r.tp, r.pp, r.ep, r.replicas, r.gpus_total) == (1, 1, 1, 1, 1)
    assert r.weight_bytes_held == r.model_weight_bytes
    assert r.communication_time_s == 0 and r.bytes_sent_per_step == 0
    assert r.communication_intensity is None
    assert r.cost_per_million_output_tokens is None


def test_allreduce_bytes_and_time():
    # B = 1, k = 1: one all-reduce moves B·k·h·a = 8192 × 2 = 16,384 bytes; ring over 8 GPUs on
    # NVLink 4 at 450 GB/s per direction: 2·7/8 × 16,384 / 450e9 + 6 µs
    r = Scenario(tp=8).evaluate()
    assert r.allreduce_bytes == 16_384
    assert r.link_bandwidth == 450e9
    assert r.allreduce_time_s == pytest.approx(2 * 7 / 8 * 16_384 / 450e9 + CALL_LATENCY_S, rel=1e-12)
    # two per layer, 80 layers: 160 calls
    assert r.bytes_sent_per_step == pytest.approx(160 * 2 * 7 / 8 * 16_384)
    assert r.communication_time_s == pytest.approx(160 * r.allreduce_time_s)
    assert r.communication_intensity == pytest.approx(r.flop_per_step / r.bytes_sent_per_step)
    assert r.interconnect_ridge_point == pytest.approx(989.4e12 / 450e9, rel=1e-3)
    # the roofline stays per GPU: TP divides FLOPs and weight bytes alike, so I barely moves
    assert r.arithmetic_intensity_weights == pytest.approx(1.0, rel=1e-3)
    assert r.step_time_s_with_kv == pytest.approx(max(r.compute_time_s, r.memory_time_s) + r.communication_time_s)


def test_pipeline_stage_memory_and_latency():
    # PP 2: 40 layers per stage; the last also holds the LM head (V·h) and the final norm (h),
    # the first the embedding (V·h): the last is the larger, (N + h) / 2 parameters.
    n = L70.n_params
    plan = Parallelism(L70, pp=2)
    assert plan.stage_layers() == (40, 40)
    assert plan.n_params == (n + H) / 2
    one, two = Scenario(tp=4).evaluate(), Scenario(tp=4, pp=2).evaluate()
    # a token crosses both stages: latency is two half-steps plus a send, not halved
    assert two.tpot_s == pytest.approx(2 * two.verify_step_time_s)
    assert two.tpot_s > 0.95 * one.tpot_s
    # each stage holds its layers' KV for PP micro-batches: the same KV per GPU per sequence
    assert two.kv_bytes == pytest.approx(one.kv_bytes)
    assert two.pipeline_bubble == pytest.approx(1 / 3)  # (P−1)/(M+P−1) at M = P = 2
    assert Parallelism(L70, pp=3).stage_layers() == (27, 27, 26)


def test_expert_placement():
    mixtral = MODELS["mixtral-8x7b"]
    assert Parallelism(mixtral, ep=2).experts_per_gpu() == 4
    qwen = MODELS["qwen3-30b-a3b"]  # 128 experts, 8 per token
    plan = Parallelism(qwen, ep=8)
    assert plan.experts_per_gpu() == 16
    # B·k = 1 token per group, 8 groups: 16·(1 − (1 − 8/128)^8) experts touched per GPU per layer
    assert plan.experts_touched_per_gpu(1) == pytest.approx(16 * (1 - (1 - 8 / 128) ** 8))
    r = Scenario(model="qwen3-30b-a3b", ep=8, batch=4).evaluate()
    assert r.experts_per_gpu == 16
    # all-to-all: dispatch + combine of B·k·k_e·h·a·(EP−1)/EP bytes per MoE layer (48 layers, h = 2048)
    assert r.bytes_sent_per_step == pytest.approx(2 * 48 * 4 * 8 * 2048 * 2 * 7 / 8)
    assert r.gpus_total == 8
    # expert weights are spread, the attention is not
    one = Scenario(model="qwen3-30b-a3b", batch=4).evaluate()
    assert r.weight_bytes_held < one.weight_bytes_held / 4


def test_ep_on_a_dense_model_is_named_and_ignored():
    r = Scenario(ep=4, tp=2).evaluate()
    assert r.ep == 1 and r.gpus_total == 2
    assert any("EP = 4 is ignored" in w for w in r.warnings)


def test_70b_default_fits_at_tp2_on_h100():
    one = Scenario().evaluate()
    assert not one.fits
    assert (one.suggested_tp, one.suggested_pp) == (2, 1)
    assert "TP = 2 fits" in one.warnings[0]
    two = Scenario(tp=2).evaluate()
    assert two.fits
    assert two.memory_used_bytes / GiB == pytest.approx(65.71 + 8192 * 163_840 / GiB + 3, abs=0.01)


def test_405b_needs_a_node_and_then_stages():
    r = Scenario(model="llama-3.1-405b").evaluate()
    assert r.suggested_tp == 8 and r.suggested_pp == 2  # 810 GB of BF16 weights: 8 × 80 GiB is not enough


def test_replicas_multiply_throughput_gpus_and_memory_only():
    one, four = Scenario(model="llama-3-8b", batch=32).evaluate(), Scenario(model="llama-3-8b", batch=32,
                                                                            replicas=4).evaluate()
    assert four.tokens_per_s_aggregate == pytest.approx(4 * one.tokens_per_s_aggregate)
    assert four.total_memory_bytes == pytest.approx(4 * one.total_memory_bytes)
    assert four.tpot_s == one.tpot_s and four.memory_used_bytes == one.memory_used_bytes
    assert four.gpus_total == 4


def test_cost_per_million_tokens():
    r = Scenario(model="llama-3-8b", batch=32, gpu_hour_price=2.0, replicas=2).evaluate()
    # USD/h × GPUs / 3600 s / (tokens/s) × 1e6
    assert r.cost_per_million_output_tokens == pytest.approx(2.0 * 2 / 3600 / r.output_tokens_per_s_aggregate * 1e6)
    assert r.output_tokens_per_s_aggregate == pytest.approx(2 * 32 / r.verify_step_time_s)
    assert r.cost_per_million_prompt_tokens < r.cost_per_million_output_tokens / 10  # prefill is compute-rich


def test_impossible_splits_are_evaluated_at_the_limit_and_named():
    r = Scenario(tp=128).evaluate()
    assert r.tp == 64 and "TP = 128 is more than Llama-3-70B's 64 query heads: evaluated at TP = 64" in r.warnings
    assert Scenario(pp=81).evaluate().pp == 80
    r = Scenario(model="mixtral-8x7b", ep=16).evaluate()
    assert r.ep == 8 and any("EP = 16 is more than" in w for w in r.warnings)


def test_past_the_node_is_named():
    r = Scenario(tp=16).evaluate()
    assert any("largest NVLink node of 8" in w for w in r.warnings)


def test_tp_sweep_marks_where_communication_overtakes_memory():
    d = tp_sweep(Scenario(model="llama-3-8b", batch=1))
    assert list(d["tp"]) == [1, 2, 4, 8, 16, 32]  # 32 query heads
    assert d["communication_time_s"][0] == 0
    # 64 all-reduces of 8 KiB cost ~0.39 ms whatever TP; 16 GB of weights / 16 GPUs read in ~0.35 ms
    over = d["crossover"]
    assert over == 16
    i = list(d["tp"]).index(over)
    assert d["communication_time_s"][i] > d["memory_time_s"][i]
    assert d["communication_time_s"][i - 1] <= d["memory_time_s"][i - 1]


def test_batch_sweep_is_per_gpu():
    r = Scenario(tp=4).evaluate()
    sweep = batch_sweep(r, [r.batch])
    assert sweep.step_time_s_with_kv[0] == pytest.approx(r.step_time_s_with_kv)
    assert bool(sweep.fits[0]) == r.fits


def test_cli_and_permalink_carry_the_new_levers(capsys):
    assert main(["explain", "--tp", "4", "--gpu-hour-price", "2.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tp"] == 4 and out["kv_bytes_per_token_per_gpu"] == 81_920
    assert out["cost_per_million_output_tokens"] > 0
    s = Scenario(tp=4, pp=2, replicas=3, gpu_hour_price=2.5)
    query = to_query(s.levers())
    assert query["tp"] == "4" and query["pp"] == "2" and query["replicas"] == "3"
    state = from_query({"tp": ["4"]})
    assert state.levers["tp"] == 4


def test_pins_at_different_tp_share_the_intensity_and_say_what_tp_buys():
    from core.catalogue import Catalogue
    from core.pins import Pin, compare

    base = Scenario().levers()
    rows = compare([Pin("TP 2", {**base, "tp": 2}), Pin("TP 8", {**base, "tp": 8})], Catalogue())
    assert rows[0].result.arithmetic_intensity_weights == pytest.approx(rows[1].result.arithmetic_intensity_weights,
                                                                        rel=1e-9)
    assert any("TP = 8: same intensity" in note and "16.4 GiB of weights per GPU" in note for note in rows[1].notes)


def test_the_interconnect_roof_applies_only_when_gpus_send():
    assert not Scenario().evaluate().sends_between_gpus  # one GPU sends nothing
    assert Scenario(tp=2).evaluate().sends_between_gpus  # two all-reduces per layer over NVLink
