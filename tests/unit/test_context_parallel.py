"""Ring Attention (core.context_parallel): the paper's Table 2, the largest context against N and where the
ring's transfer stops hiding, by hand."""

import numpy as np
import pytest

from core.context_parallel import min_block_tokens, ring_attention
from core.scenario import Scenario


@pytest.mark.parametrize("host, tflops, gbps, printed", [
    # Liu, Zaharia & Abbeel 2023, Table 2: per-host FLOPS (TF), interconnect GB/s, minimal block size (x1e3).
    ("A100 NVLink", 312, 300, 1.0),
    ("TPU v3", 123, 112, 1.1),
    ("TPU v4", 275, 268, 1.0),
    ("TPU v5e", 196, 186, 1.1),
])
def test_ring_attention_table2_minimal_block(host, tflops, gbps, printed):
    # Multi-head attention in BF16: a block carries 2·d·2 = 4d bytes per token per layer for 4d FLOP per key,
    # so c >= FLOPS / Bandwidth.
    d = 8192
    c = min_block_tokens(tflops * 1e12, gbps * 1e9, kv_bytes_per_token=4 * d, attention_flop_per_key=4 * d)
    assert round(c / 1e3, 1) == printed


def test_ring_attention_table2_infiniband():
    # Table 2 prints 24.5 (x1e3) for an A100 over InfiniBand at 12.5 GB/s; 312e12 / 12.5e9 is 24,960.
    assert min_block_tokens(312e12, 12.5e9, 1.0, 1.0) == pytest.approx(24.5e3, rel=0.02)


@pytest.fixture(scope="module")
def mha():
    """Llama-3-70B with GQA off (every query head keeps K and V) on two H100s, a 100k-token sequence."""
    return ring_attention(Scenario(tp=2, gqa=False), context=100_000)


def test_multi_head_block_condition_is_flops_over_bandwidth(mha):
    assert mha.kv_bytes_per_token == 2 * 80 * 32 * 128 * 2  # one GPU's 32 of 64 heads
    assert mha.attention_flop_per_key == 4 * 32 * 128 * 80
    assert mha.min_block == pytest.approx(989.4e12 / 450e9)  # H100 SXM: dense BF16 over NVLink per direction


def test_where_the_ring_stops_hiding(mha):
    # c = S/N must stay >= 2,198.7 tokens: up to N = floor(100,000 / 2,198.7) = 45 hosts.
    assert mha.hosts_hidden == 45
    assert mha.hidden.tolist() == [n <= 45 for n in mha.hosts]
    n = 32
    i = mha.hosts.tolist().index(n)
    c = 100_000 / n
    assert mha.compute_time_s[i] == pytest.approx(c * c * 4 * 32 * 128 * 80 / 989.4e12)
    assert mha.transfer_time_s[i] == pytest.approx(c * 2 * 80 * 32 * 128 * 2 / 450e9)
    assert not mha.decode_hides  # one query token per host never hides a block's send


def test_gqa_shrinks_the_block_needed_by_h_kv_over_h():
    gqa = ring_attention(Scenario(tp=2), context=100_000)
    assert gqa.min_block == pytest.approx(989.4e12 / 450e9 * 8 / 64)
    assert gqa.hosts_hidden == int(100_000 // gqa.min_block) == 363


def test_largest_context_grows_with_the_hosts():
    r = Scenario(tp=2).evaluate()
    ring = ring_attention(Scenario(tp=2), hosts=(1, 2, 8, 64))
    per_host = r.free_for_kv_bytes / (163_840 * (1 + 1 / 80))  # one layer's incoming block beside the cache
    assert ring.max_context.tolist() == [int(np.floor(n * per_host)) for n in (1, 2, 8, 64)]
    assert ring.max_context[0] == 73_080 and ring.max_context[-1] > 4_600_000


def test_a_part_without_a_link_figure_states_no_overlap():
    ring = ring_attention(Scenario(model="llama-3-8b", gpu="tpu-v4"), hosts=(1, 4))
    assert ring.min_block is None and ring.transfer_time_s is None and not ring.hidden.any()
    assert ring.to_json()["min_block_tokens"] is None


@pytest.mark.parametrize("hosts", [(), (0, 2), [[1, 2]]])
def test_invalid_hosts_raise(hosts):
    with pytest.raises(ValueError):
        ring_attention(Scenario(tp=2), hosts=hosts)


def test_a_sparse_models_ring_attention_counts_its_indexer_whole_on_each_tp_gpu():
    # DeepSeek-V3.2 at TP = 8: a GPU's 16 of 128 heads attend on the latent (61 × 278,528 / 8 per pair), and its
    # indexer scores every pair whole (61 × 16,512), as every TP rank runs it.
    import json
    from pathlib import Path

    from core.config_reader import from_hf_config

    cfg = json.loads((Path(__file__).parents[1] / "field_cases" / "sparse-attention-indexer-cache.json").read_text())
    s = Scenario(gpu="h200", tp=8)
    s.add_model(from_hf_config(cfg["input"]["config"], model_id="v32", name="DeepSeek-V3.2"))
    s.model = "v32"
    assert ring_attention(s).attention_flop_per_key == pytest.approx(61 * 278_528 / 8 + 61 * 16_512, rel=1e-12)


def test_a_pipeline_stage_holds_its_own_layers_blocks_and_attention_runs_in_bf16():
    """An engineer's trial, DeepSeek-V3 in FP8 on TP = 8, PP = 2: the KV per token was stage 1's 31 layers, the
    receive buffer 1/61 of it, and the blocks' attention timed at the FP8 roof (1,979 TFLOP/s) with a BF16 cache."""
    s = Scenario(model="deepseek-v3", gpu="h200", weight_dtype="fp8", tp=8, pp=2, context=4096)
    r = s.clone(batch=1).evaluate()
    ring = ring_attention(s)
    stage = r.deployment.plan.stage_layers()[r.memory_stage]
    assert ring.kv_layers == stage == 31 < r.model.n_kv_layers
    assert ring.max_context[0] == int(r.free_for_kv_bytes // (r.kv_bytes_per_token_per_gpu * (1 + 1 / 31)))
    assert ring.peak_flop_per_s == r.gpu.dense_flop_per_s["bf16"] < r.peak_flop_per_s
    assert ring.min_block == pytest.approx(
        ring.peak_flop_per_s / ring.link_bandwidth * ring.kv_bytes_per_token / ring.attention_flop_per_key)


def test_a_context_shorter_than_one_block_hides_at_no_n_and_says_so(mha):
    # A command-line trial: --context 1 printed "transfer hides while S/N >= 275 tokens (N <= 0)" and "block 0" for
    # every ring of 2 hosts or more.
    short = ring_attention(Scenario(tp=2, gqa=False), hosts=[1, 2, 4], context=1)
    assert short.hosts_hidden == 0
    assert short.hiding_text() == ("transfer hides at no N: S = 1 tokens is shorter than one block of "
                                   "c_min = 2,199 tokens")
    assert [short.block_text(i) for i in range(3)] == [
        "1", "0.5 (S < N: a host holds no whole token)", "0.25 (S < N: a host holds no whole token)"]
    assert mha.hiding_text() == "transfer hides while S/N >= 2,199 tokens (N <= 45)"


def test_without_a_link_figure_the_hiding_text_is_empty():
    ring = ring_attention(Scenario(model="llama-3-8b", gpu="tpu-v4"), hosts=(1, 4))
    assert ring.min_block is None and ring.hiding_text() == ""
