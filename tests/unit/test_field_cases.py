"""The field cases (tests/field_cases/, copied from the team's shared folder): real configs whose right values
were worked out by hand.  Each expected value is a test at the model's level (its public methods); values that
need a GPU (time to first token, the largest batch) are computed here from those methods and the roofline
formula, as the case's own arithmetic does, and say so."""

import json

import pytest
from conftest import FIELD_CASES

from core import Scenario, from_hf_config, get_accelerator
from core.kvcache import max_batch_that_fits
from core.parallelism import Parallelism
from core.units import GiB

CASES = FIELD_CASES


def case(name):
    data = json.loads((CASES / name).read_text())
    model = from_hf_config(data["input"]["config"], model_id=name.removesuffix(".json"), name=name)
    return data, model


def test_every_field_case_is_tested_here():
    assert sorted(p.name for p in CASES.glob("*.json")) == sorted(TESTED)


# -- hybrid-linear-attention.json: 30 of 40 layers keep a fixed state, only 10 hold a growing KV cache ----------
def test_hybrid_linear_attention_kv_and_state():
    data, m = case("hybrid-linear-attention.json")
    e = data["expected"]
    assert m.kv_bytes_per_token(2) == pytest.approx(e["kv_bytes_per_token"], rel=0.005)
    assert m.kv_bytes_per_sequence(8192, 2) == pytest.approx(e["kv_bytes_S8192"], rel=0.005)
    assert m.kv_bytes_per_sequence(262144, 2) == pytest.approx(e["kv_bytes_S262144"], rel=0.005)
    # The arithmetic's state line: 30 × (32·128·128·4 B + (16·128·2 + 32·128)·3·2 B), constant in S.
    assert m.state_bytes_per_sequence() == 30 * 2_146_304 == 64_389_120
    assert m.cache_bytes_per_sequence(8192, 2) == 167_772_160 + 64_389_120
    assert m.stack.count(lambda k: k.mixer == "linear_attention") == 30 and m.n_kv_layers == 10
    # Nested text_config: the language model is read, and the vision tower is named as not counted.
    assert any("vision_config not counted" in w for w in m.warnings)
    assert any("mtp_num_hidden_layers" in w for w in m.warnings)


# -- shared-kv-layers.json: the last 15 of 35 layers reuse earlier layers' KV and allocate none -----------------
def test_shared_kv_layers_allocate_none():
    data, m = case("shared-kv-layers.json")
    e = data["expected"]
    assert m.kv_bytes_per_token(2) == pytest.approx(e["kv_bytes_per_token"], rel=0.005)
    assert m.kv_bytes_per_sequence(data["input"]["settings"]["context"], 2) == pytest.approx(e["kv_bytes"], rel=0.005)
    assert m.n_kv_layers == 20 and m.n_layers == 35
    # Shared layers still attend: decode attention FLOPs count all 35 layers (8 heads × 256: 8,192 per key).
    assert m.decode_attention_flop(512) == 35 * 4 * 8 * 256 * 512


# -- mxfp4-moe-sliding.json: MXFP4 experts beside BF16 attention, router and embeddings ------------------------
def test_mxfp4_checkpoint_as_stored():
    data, m = case("mxfp4-moe-sliding.json")
    e = data["expected"]
    s = data["input"]["settings"]
    assert m.n_params == pytest.approx(e["n_params"], rel=0.005)
    assert m.weight_bytes_held_as_stored() == pytest.approx(e["weight_bytes_held"], rel=0.005)
    assert m.kv_bytes_per_sequence(s["context"], 2) == pytest.approx(e["kv_bytes"], rel=0.005)
    # The largest batch needs the GPU: floor((80 GiB − held − reserve 0) / KV per sequence), the lab's formula.
    free = get_accelerator(s["gpu"]).capacity_bytes("binary") - m.weight_bytes_held_as_stored()
    assert int(max_batch_that_fits(free, m.kv_bytes_per_sequence(s["context"], 2))) == e["max_batch"]
    groups = {g.name: g for g in m.stored_breakdown()}
    assert groups["routed experts"].format == "MXFP4" and groups["routed experts"].bytes_per_weight == 17 / 32
    assert groups["routed experts"].params == 36 * 128 * 24_883_200
    assert groups["attention"].format == "BF16" and groups["router"].format == "BF16"
    assert groups["embeddings"].format == groups["LM head"].format == "BF16"
    assert m.weight_bytes_held_as_stored() / GiB == pytest.approx(60.77, abs=0.01)


# -- llama4-moe-layout.json: a shared expert on every MoE layer, dense layers of their own width ----------------
def test_llama4_parameters():
    data, m = case("llama4-moe-layout.json")
    e = data["expected"]
    assert m.n_params == pytest.approx(e["n_params"], rel=0.005)
    assert m.n_active_params == pytest.approx(e["n_active_params"], rel=0.005)
    assert m.n_params == e["n_params"] and m.n_active_params == e["n_active_params"]  # exact, as hand-worked
    # Chunked attention: 36 RoPE layers hold at most one 8,192-token chunk, 12 NoPE layers hold all S.
    per_layer_token = 2 * 8 * 128 * 2
    assert m.kv_bytes_per_sequence(100_000, 2) == per_layer_token * (36 * 8192 + 12 * 100_000)


# -- prefill-attention-flops.json: causal attention FLOPs at a 32,768-token prompt -------------------------------
def test_prefill_attention_flops_and_ttft():
    data, m = case("prefill-attention-flops.json")
    e = data["expected"]
    s = data["input"]["settings"]
    p = s["prompt_len"]
    flop = 2 * m.n_params * p + m.prefill_attention_flop(p)  # the weights term as the lab counts it, + attention
    assert flop == pytest.approx(e["flops"], rel=0.05)
    assert m.prefill_attention_flop(p) == 4 * 32 * 128 * (p * (p + 1) // 2) * 32  # the arithmetic, exactly
    # Time to first token needs the GPU: max(FLOP / peak, bytes / bandwidth), compute-bound here.
    gpu = get_accelerator(s["gpu"])
    assert gpu.dense_flop_per_s["bf16"] == s["peak_dense_flops"]
    moved = m.n_params * 2 + m.kv_bytes_per_sequence(p, 2)
    ttft = max(flop / gpu.dense_flop_per_s["bf16"], moved / gpu.hbm_bandwidth)
    assert ttft == pytest.approx(e["ttft_s"], rel=0.05)
    # The derivation's intensity multiplies out: 2 × 1 × 32,768 / 2 bytes = 32,768 (four digits wrote 32,770).
    from core.explain import quantities
    from core.scenario import Scenario

    q = quantities(Scenario(model="llama-3-8b", phase="prefill", prompt_len=p).evaluate())["intensity"]
    assert q.work == "2 × 1 × 32,768 / 2 bytes = 32,768 FLOP/byte" and q.value == "32,768 FLOP/byte"


# -- sparse-attention-indexer-cache.json: the indexer's FP8 keys beside the MLA latent, on every TP rank ---------
def test_sparse_attention_indexer_keeps_its_own_key_cache():
    data, m = case("sparse-attention-indexer-cache.json")
    e, s = data["expected"], data["input"]["settings"]
    assert m.kv_bytes_per_token(2) == pytest.approx(e["kv_bytes_per_token"], rel=0.005)
    assert m.kv_bytes_per_sequence(s["context"], 2) == pytest.approx(e["kv_bytes_S131072"], rel=0.005)
    # The arithmetic exactly: 61 × (512 + 64) × 2 = 70,272 latent + 61 × (128 × 1 + 1 × 4) = 8,052 indexer keys.
    assert m.kv_bytes_per_token(2) == 61 * 576 * 2 + 61 * 132 == 78_324
    # FP8 whatever the KV dtype: at an FP8 cache only the latent halves.
    assert m.kv_bytes_per_token(1) == 61 * 576 + 61 * 132
    # Top-k caps the reads, not the memory: held all S, a decode step reads 2,048 latents and every indexer key.
    assert m.cache_bytes_per_sequence(131_072, 2) == 78_324 * 131_072
    assert m.cache_bytes_read_per_sequence(131_072, 2) == 61 * (1152 * 2048 + 132 * 131_072)
    # TP 8: the latent and the single-head indexer keys are both replicated on every rank.
    plan = Parallelism(m, tp=s["tensor_parallel"])
    assert m.kv_bytes_per_token(2) * plan.kv_share() == pytest.approx(e["kv_bytes_per_token_per_gpu_tp8"], rel=0.005)
    assert plan.cache_bytes_per_sequence_per_gpu(131_072, 2) == 78_324 * 131_072
    scenario = Scenario(gpu=s["gpu"], batch=s["batch"], context=s["context"], tp=s["tensor_parallel"])
    scenario.add_model(m)
    r = scenario.evaluate()
    assert r.kv_bytes_per_token_per_gpu == pytest.approx(e["kv_bytes_per_token_per_gpu_tp8"], rel=0.005)
    assert r.kv_bytes_per_sequence == pytest.approx(e["kv_bytes_S131072"], rel=0.005)


# -- cross-attention-layers.json: 8 of 40 layers attend to the image; the text KV grows on the other 32 ----------
def test_cross_attention_layers_hold_image_kv_not_text_kv():
    data, m = case("cross-attention-layers.json")
    e, s = data["expected"], data["input"]["settings"]
    assert m.kv_bytes_per_token(2) == pytest.approx(e["kv_bytes_per_token"], rel=0.005)
    assert m.kv_bytes_per_sequence(s["context"], 2) == pytest.approx(e["kv_bytes_S8192"], rel=0.005)
    assert m.n_kv_layers == 32 and m.stack.count(lambda k: k.cross) == 8
    # The arithmetic's reference line: one image of 4 tiles × 1,601 tokens, 8 × 2 × 8 × 128 × 2 × 6,404, fixed in S.
    assert m.cross_attention_tokens == 6404
    assert m.state_bytes_per_sequence(2) == 209_846_272
    assert m.cache_bytes_per_sequence(8192, 2) == 1_073_741_824 + 209_846_272
    assert m.cache_bytes_per_sequence(16384, 2) == 2 * 1_073_741_824 + 209_846_272
    # The vision tower is named as not counted, and so the numbers are approximate, said beside them.
    assert m.approximate and "vision_config" in m.approximate_note()


# -- expert-parallel-fullest-gpu.json: ceil(E/EP) experts on the fullest GPU decide what fits ---------------------
def test_expert_parallel_memory_is_the_fullest_gpus():
    data, m = case("expert-parallel-fullest-gpu.json")
    e = data["expected"]
    for ep in data["input"]["settings"]["expert_parallel"]:
        plan = Parallelism(m, ep=ep, tp=data["input"]["settings"]["tp"])
        assert plan.experts_per_gpu() == e[f"experts_per_gpu_ep{ep}"]  # rel 0: a count of experts
        assert plan.weight_bytes_held((2.0,) * 4) == pytest.approx(e[f"weight_bytes_per_gpu_ep{ep}_bf16"], rel=0.005)
    # Exactly as the arithmetic works it: (17,117,648,384 + 58 × 2 × 44,040,192) × 2 bytes at EP 144.
    assert m.n_params == 671_026_419_200
    assert Parallelism(m, ep=144).n_params == 17_117_648_384 + 58 * 2 * 44_040_192
    scenario = Scenario(gpu="h200", weight_dtype="bf16", batch=1, context=4096, ep=144)
    scenario.add_model(m)
    r = scenario.evaluate()
    assert r.experts_per_gpu == 2
    assert r.weight_bytes_held == pytest.approx(e["weight_bytes_per_gpu_ep144_bf16"], rel=0.005)


TESTED = ["hybrid-linear-attention.json", "shared-kv-layers.json", "mxfp4-moe-sliding.json",
          "llama4-moe-layout.json", "prefill-attention-flops.json", "sparse-attention-indexer-cache.json",
          "cross-attention-layers.json", "expert-parallel-fullest-gpu.json"]


@pytest.mark.parametrize("name", ["hybrid-linear-attention.json", "cross-attention-layers.json"])
def test_the_cli_json_gives_the_kv_cache_apart_from_the_fixed_state(name, capsys, tmp_path):
    """``explain --json``'s ``kv_cache_bytes_per_sequence`` is the case's KV cache; ``kv_bytes_per_sequence`` adds the
    fixed state (an engineer's trial compared the latter with the case and found 232,161,280 against 167,772,160)."""
    from core.cli import main
    data = json.loads((CASES / name).read_text())
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data["input"]["config"]))
    assert main(["explain", "--config", str(path), "--context", "8192", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["kv_cache_bytes_per_sequence"] == pytest.approx(data["expected"]["kv_bytes_S8192"], rel=0.005)
    assert out["kv_bytes_per_sequence"] == out["kv_cache_bytes_per_sequence"] + out["state_bytes_per_sequence"]
