"""The expected step beside the ceiling (core/expected.py): terms that add up, hand-computed terms, the CLI keys."""

import json
import math
import re

import pytest

from core import Scenario
from core.cli import main
from core.expected import (
    EFFICIENCY_PATH,
    TERM_NAMES,
    chain_inputs,
    chain_step_times,
    engine_names,
    engine_parameters,
    expected_for_scenario,
    expected_step,
    load_efficiency,
    to_json,
    waterfall_text,
)
from core.model_catalogue import get_model

SCENARIOS = [
    dict(model="llama-3-8b", gpu="h100-sxm", batch=1, context=1024),
    dict(model="llama-3-8b", gpu="h100-sxm", batch=56, context=8192),
    dict(model="llama-2-7b", gpu="a100-80gb", batch=1, context=105, cuda_graphs=True),
    dict(model="llama-3-70b", gpu="h100-sxm", batch=8, context=4096, tp=4),
    dict(model="llama-2-70b", gpu="a100-pcie-80gb", batch=1, context=135, tp=8, weight_dtype="int4"),
    dict(model="mixtral-8x7b", gpu="a100-80gb", batch=1, context=105, tp=2, weight_dtype="int8"),
    dict(model="llama-3.1-405b", gpu="mi300x", batch=64, context=192, tp=8, weight_dtype="fp8"),
    dict(model="llama-2-7b", gpu="l40s", batch=64, phase="prefill", prompt_len=2048, weight_dtype="fp8"),
    dict(model="llama-3-70b", gpu="h200", batch=4, context=2048, pp=2),
    dict(model="gpt-oss-20b", gpu="h100-sxm", batch=16, context=4096, weight_dtype="stored"),
]
ENGINES = [None, *engine_names()]


@pytest.mark.parametrize("levers", SCENARIOS)
@pytest.mark.parametrize("engine", [None, "gpt-fast", "vLLM (eager, 2023)", "TensorRT-LLM (v0.5-0.6)"])
@pytest.mark.parametrize("embedding", ["gathered", "article"])
def test_terms_add_up_to_the_expected_step_exactly(levers, engine, embedding):
    r = Scenario(**levers).evaluate()
    e = expected_step(r, engine, embedding=embedding)
    assert e.scenario_ceiling_step_time_s == r.step_time_s_with_kv
    # The ceiling is the scenario's where the engine launches as its lever says, else the chain's first state.
    same = bool(e.parameters.cuda_graphs.value) == r.deployment.cuda_graphs
    assert (e.ceiling_step_time_s == r.step_time_s_with_kv) == (same or not e.ceiling_rebased)
    assert e.expected_step_time_s == math.fsum([e.ceiling_step_time_s, *(t.seconds for t in e.terms)])
    # ... and the sum is the chain's last state (what the expected step is), not a bookkeeping artefact.
    states = chain_step_times(chain_inputs(r, e.parameters), e.parameters.chain_params(), embedding)
    assert float(states[-1]) == pytest.approx(e.expected_step_time_s, rel=1e-12)
    assert [t.key for t in e.terms] == [k for k, _ in TERM_NAMES]


@pytest.mark.parametrize("levers", SCENARIOS)
def test_the_chain_starts_at_the_ceiling(levers):
    """The first state is the lab's step: max(max(compute, memory) + communication, launches), bit for bit."""
    r = Scenario(**levers).evaluate()
    params = engine_parameters(r)
    assert float(chain_step_times(chain_inputs(r, params), params.chain_params())[0]) == r.step_time_s_with_kv


def test_the_ceiling_launches_as_the_engine_does():
    """An engineer's trial: Qwen3-30B-A3B in INT4 at B = 1 on an H100, vLLM expected 638 tokens/s, "135.7 % of the
    ceiling": the ceiling counted the scenario's uncaptured launches (532 × 4 µs = 2.128 ms), vLLM captures graphs.
    The ceiling now counts the launches as the engine makes them, and the lever no longer moves the share."""
    from core.expected import ceiling_basis

    off, on = (Scenario(model="qwen3-30b-a3b", gpu="h100-sxm", weight_dtype="int4", context=2048,
                        cuda_graphs=g).evaluate()
               for g in (False, True))
    assert off.launch_overhead_s == pytest.approx(532 * 4e-6) and off.bound == "overhead"
    e_off, e_on = expected_step(off, "vLLM"), expected_step(on, "vLLM")
    assert e_off.ceiling_rebased and not e_on.ceiling_rebased
    assert e_off.ceiling_step_time_s == pytest.approx(on.step_time_s_with_kv, rel=1e-12)
    assert e_off.expected_step_time_s == pytest.approx(e_on.expected_step_time_s, rel=1e-12)
    assert e_off.fraction_of_ceiling == pytest.approx(e_on.fraction_of_ceiling, rel=1e-12)
    assert e_off.fraction_of_ceiling < 1
    assert round(e_off.expected_tokens_per_s_per_sequence) == 638
    # The scenario's own ceiling is said, and the expected rate over it is kept for the rows that scale it.
    assert "at the scenario's CUDA-graphs lever (off) its ceiling is 2.128 ms per step, 470" in ceiling_basis(e_off)
    assert off.tokens_per_s_per_sequence * e_off.of_scenario_ceiling == pytest.approx(
        e_off.expected_tokens_per_s_per_sequence, rel=1e-12)
    assert ceiling_basis(e_on) == ""
    from core.expected import waterfall_text

    assert "ceiling (the roofline, at the engine's launches): 0.5606 ms" in waterfall_text(e_off)
    # Where the launches bind in neither mode the ceiling is the scenario's, bit for bit (a trial read "its ceiling
    # 6.076 ms … at the scenario's lever its ceiling is 6.076 ms": the chain's first state, one rounding apart).
    for levers in ({"model": "llama-3-8b", "batch": 4}, {"model": "llama-3-8b", "weight_dtype": "int4"}):
        r = Scenario(**levers).evaluate()
        e = expected_step(r, "vLLM")
        assert e.ceiling_step_time_s == r.step_time_s_with_kv and not e.ceiling_rebased and not ceiling_basis(e)
        assert "ceiling (the roofline): " in waterfall_text(e)


def test_input_embedding_term_is_the_table_minus_the_rows_gathered():
    # Llama-3-8B at B = 1 on an H100: the article counts the 128,256 × 4,096 table every step (6.5 % of the
    # 16.06 GB); a step looks up one row.  Memory-bound, so the term is the bytes over the datasheet bandwidth.
    r = Scenario(model="llama-3-8b", gpu="h100-sxm", batch=1, context=1024).evaluate()
    e = expected_step(r)
    term = {t.key: t for t in e.terms}["embedding"]
    assert term.seconds == pytest.approx(-(128256 - 1) * 4096 * 2 / 3.35e12, rel=1e-9)
    assert round(-term.seconds * 1e3, 4) == 0.3136
    assert {t.key: t for t in expected_step(r, embedding="article").terms}["embedding"].seconds == 0


def test_a_byte_term_the_launches_clip_names_the_step_it_moves():
    # A new user's trial: Qwen3-30B-A3B on an H100 at B = 1 printed "− 0.1142 ms" beside "(6.084 GB − 6.706 GB) /
    # 3.35 TB/s", which is −0.1858 ms: the step fell only to the host's launches, 2.128 ms, and the formula left them
    # out.  Memory-bound all the way down (Llama-3-8B above), the formula alone gives the term.
    e = expected_step(Scenario(model="qwen3-30b-a3b", gpu="h100-sxm").evaluate())
    term = {t.key: t for t in e.terms}["embedding"]
    assert term.formula == ("(6.0837 GB − 6.7061 GB) / 3.35 TB/s (B·k rows of d_model instead of all V) = "
                            "−0.1858 ms of memory time; the GPU's time goes 2.2422 ms → 2.0564 ms and the step, "
                            "max(GPU time, launches 2.128 ms), goes 2.2422 ms → 2.1280 ms")
    assert term.gpu_seconds == pytest.approx(-0.1858e-3, abs=5e-8)
    assert round(term.seconds * 1e3, 4) == -0.1142 and term.seconds * 1e3 == pytest.approx(2.128 - 2.242, abs=5e-4)
    r = Scenario(model="llama-3-8b", gpu="h100-sxm", batch=1, context=1024).evaluate()
    assert "max(GPU time" not in {t.key: t for t in expected_step(r).terms}["embedding"].formula
    # The other terms end with the step before and after them; where their formula is a time, it is set beside
    # the ceiling's for the same work (a later trial: "160 × (31 µs + …) = 4.97 ms" printed beside "+ 4.003 ms").
    terms = {t.key: t for t in expected_step(Scenario(model="llama-3-70b", tp=8).evaluate(), "vLLM").terms}
    assert terms["collectives"].formula == ("160 × (31.02 µs + 16,384 bytes × 2(8−1)/8 [ring, n = TP] / 478.9 "
                                            "GB/s) = 4.973 ms in place of the ceiling's 0.9702 ms; the step goes "
                                            "8.160 ms → 12.163 ms")
    assert round(terms["collectives"].seconds * 1e3, 3) == 4.003 == round(4.973 - 0.9702, 3)
    assert terms["hbm"].formula == ("memory time 17.714 GB / 3.35 TB/s = 5.288 ms ÷ 0.9493 = 5.57 ms; the step goes "
                                    "6.2578 ms → 6.5402 ms")
    # With experts split (EP = 2) the all-to-all stays the ceiling's and is named beside the all-reduces.
    moe = {t.key: t for t in expected_step(Scenario(model="qwen3-30b-a3b", tp=2, ep=2).evaluate(), "vLLM").terms}
    assert moe["collectives"].formula.startswith("0.5777 ms of other communication (EP all-to-all, PP sends: the "
                                                 "ceiling's, α not fitted for them) + 96 × (31.02 µs + ")
    assert "= 3.557 ms in place of the ceiling's 1.155 ms" in moe["collectives"].formula
    assert round(moe["collectives"].seconds * 1e3, 3) == 2.402
    # TP alone has no other communication: the ceiling's less its all-reduces is rounding, not "0.000000000000108 µs
    # of other communication" (a teacher's trial, decode and prefill).
    for phase in ("decode", "prefill"):
        r = Scenario(model="llama-3-70b", tp=2, phase=phase).evaluate()
        assert chain_inputs(r, engine_parameters(r)).communication_other_s == 0.0
        assert {t.key: t for t in expected_step(r).terms}["collectives"].formula.startswith("160 × (31.02 µs + ")
    # The launches count the ceiling's kernels (Show your work: 884) and the all-reduces' own, named apart; an engine
    # that captures CUDA graphs says so where the lab's lever is off (the same page read 884 and 1044, and "CUDA
    # graphs: one launch" beside cuda-graphs=false).
    r = Scenario(model="llama-3-70b", tp=2, cuda_graphs=False).evaluate()
    assert r.kernels_per_step == 884
    launches = {t.key: t for t in expected_step(r, "vLLM").terms}["launches"]
    assert launches.formula.startswith("CUDA graphs: one launch + 1044 kernels (884 + 160 all-reduces) × 1.028 µs")
    assert launches.source.startswith("vLLM captures CUDA graphs, whatever the lab's CUDA-graphs lever (off): ")
    generic = {t.key: t for t in expected_step(r).terms}["launches"]
    assert generic.formula.startswith(
        "max(GPU time + 1044 kernels (884 + 160 all-reduces) × 2.493 µs gaps, 1044 × 4.084 µs")
    assert generic.source.startswith("the scenario's CUDA-graphs lever")


def test_terms_under_the_launches_say_the_gpu_time_they_move():
    """Qwen3-30B-A3B on TP = 2 is held by the host's launches (2.128 ms): the byte and efficiency terms move the GPU's
    time under them and are listed at 0 with it, and the collectives' 2.979 − 0.5769 = 2.402 ms is the GPU's change,
    2.255 ms the step's (a trial could not find the 2.402 in the row that printed "+ 2.255 ms")."""
    e = expected_step(Scenario(model="qwen3-30b-a3b", tp=2).evaluate())
    terms = {t.key: t for t in e.terms}
    assert terms["hbm"].seconds == 0 and terms["hbm"].shown
    assert terms["hbm"].formula == ("memory time 3.457 GB / 3.35 TB/s = 1.032 ms ÷ 0.9493 = 1.087 ms; the GPU's time "
                                    "goes 1.6089 ms → 1.6640 ms, under the launches' 2.128 ms: the step stays 2.128 ms")
    c = terms["collectives"]
    assert c.formula.endswith("= 2.979 ms in place of the ceiling's 0.5769 ms; the GPU's time goes 1.981 ms → "
                              "4.383 ms and the step, max(GPU time, launches 2.128 ms), goes 2.128 ms → 4.383 ms")
    assert round(c.gpu_seconds * 1e3, 3) == 2.402 == round(2.979 - 0.5769, 3)
    assert round(c.seconds * 1e3, 3) == 2.255 == round(4.383 - 2.128, 3)
    assert not terms["format"].shown and terms["format"].gpu_seconds is None  # BF16: nothing to move
    text = waterfall_text(e)
    assert "  + 0 µs  HBM: attainable fraction of datasheet bandwidth: memory time 3.457 GB / 3.35 TB/s = 1.032 ms" \
        in text


def test_tied_embeddings_are_read_whole_by_the_head():
    m = get_model("gemma-2-9b")
    assert m.tie_word_embeddings
    r = Scenario(model="gemma-2-9b", gpu="h100-sxm", batch=1, context=1024).evaluate()
    assert {t.key: t for t in expected_step(r).terms}["embedding"].seconds == 0


def test_format_term_counts_scales_zeros_and_the_16_bit_embedding():
    # gpt-fast int4 (groupsize 32): 0.5 + 4/32 bytes per linear weight, the output layer too; nn.Embedding stays
    # BF16.  Llama-2-7B: 6,738,415,616 parameters, of which 32,000 × 4,096 each for the table and the LM head.
    r = Scenario(model="llama-2-7b", gpu="a100-80gb", batch=1, context=105, weight_dtype="int4").evaluate()
    e = expected_step(r, "gpt-fast")
    assert e.parameters.weight_format == "gptfast-int4-g32"
    table = 32000 * 4096
    real = (6738415616 - 2 * table) * 0.625 + table * 2 + table * 0.625
    term = {t.key: t for t in e.terms}["format"]
    assert term.seconds == pytest.approx((real - 6738415616 * 0.5) / 2.039e12, rel=1e-9)


def test_hbm_term_is_the_measured_stream_fraction():
    # Azure ND H100 v5, BabelStream Dot: 3.18 of 3.35 TB/s.
    r = Scenario(model="llama-3-8b", gpu="h100-sxm", batch=1, context=1024).evaluate()
    e = expected_step(r, embedding="article")
    assert e.parameters.stream_fraction.value == pytest.approx(3.18 / 3.35, abs=1e-4)
    hbm = {t.key: t for t in e.terms}["hbm"]
    memory = r.memory_time_s  # bf16 weights: the format term is nil, so the memory time is the lab's
    assert hbm.seconds == pytest.approx(memory / e.parameters.stream_fraction.value - memory, rel=1e-6)
    assert "ND_H100_v5_results.md" in hbm.source and "Dot | 3.18" in hbm.source


def test_collectives_term_is_alpha_beta_per_all_reduce():
    r = Scenario(model="llama-3-70b", gpu="h100-sxm", batch=8, context=4096, tp=4).evaluate()
    e = expected_step(r, "TensorRT-LLM (v0.5-0.6)")
    x = chain_inputs(r, e.parameters)
    assert x.allreduce_calls == 2 * 80
    alpha, busbw = e.parameters.allreduce_alpha_s.value, e.parameters.bus_bandwidth.value
    new_comm = 160 * (alpha + 8 * 8192 * 2 * 2 * 3 / 4 / busbw)
    term = {t.key: t for t in e.terms}["collectives"]
    # Memory-bound with the communication added (not overlapped): the term is the change of communication time.
    assert term.seconds == pytest.approx(new_comm - r.communication_time_s, rel=1e-9)
    assert "nvlink4" == e.parameters.link and "NCCL" in term.source


def test_launch_term_with_and_without_cuda_graphs():
    r = Scenario(model="llama-2-7b", gpu="rtx-4090", batch=1, context=100, weight_dtype="int4").evaluate()
    with_graphs = expected_step(r, "llama.cpp", cuda_graphs=True)
    without = expected_step(r, "llama.cpp", cuda_graphs=False)
    assert without.expected_step_time_s > with_graphs.expected_step_time_s
    assert "CUDA graphs" in {t.key: t for t in with_graphs.terms}["launches"].formula


def test_expected_is_below_the_ceiling_and_scales_tokens():
    for levers in SCENARIOS:
        r = Scenario(**levers).evaluate()
        for engine in ENGINES:
            e = expected_step(r, engine)
            assert e.expected_step_time_s > e.ceiling_step_time_s
            assert e.expected_tokens_per_s_per_sequence == pytest.approx(
                r.tokens_per_s_per_sequence * r.step_time_s_with_kv / e.expected_step_time_s)
            assert e.expected_tokens_per_s_aggregate == pytest.approx(
                r.tokens_per_s_aggregate * r.step_time_s_with_kv / e.expected_step_time_s)
            assert e.ceiling_tokens_per_s_aggregate == pytest.approx(
                r.tokens_per_s_aggregate * r.step_time_s_with_kv / e.ceiling_step_time_s)
            assert 0 < e.fraction_of_ceiling < 1


def test_ttft_runs_the_same_chain_on_the_prefill():
    s = Scenario(model="llama-3-8b", gpu="h100-sxm", batch=4, context=2048, prompt_len=1000)
    e = expected_for_scenario(s, "vLLM")
    prefill = s.clone(phase="prefill", batch=1).evaluate()
    assert e.ceiling_ttft_s == prefill.step_time_s_with_kv == pytest.approx(s.evaluate().ttft_s)
    assert e.expected_ttft_s == math.fsum([e.ceiling_ttft_s, *(t.seconds for t in e.ttft_terms)])
    assert e.expected_ttft_s > e.ceiling_ttft_s
    assert {t.key: t for t in e.ttft_terms}["engine"].formula.endswith("per prefill")


def test_unknown_names_are_refused():
    r = Scenario().evaluate()
    with pytest.raises(ValueError, match="unknown engine 'SGLang'"):
        expected_step(r, "SGLang")
    with pytest.raises(ValueError, match="unknown weight format"):
        expected_step(r, weight_format="int3")
    with pytest.raises(ValueError, match="unknown embedding convention"):
        expected_step(r, embedding="half")
    with pytest.raises(ValueError, match="unknown interconnect"):
        expected_step(Scenario(tp=2).evaluate(), interconnect="smoke signals")


def test_presets_are_only_engines_with_sourced_figures():
    engines = load_efficiency()["engines"]
    assert set(engine_names()) == {k for k in engines if not k.startswith("_")}
    assert "SGLang" not in engine_names() and "SGLang" in engines["_about"]
    for name in engine_names():
        assert "https://" in engines[name]["source"], name


def _entries(node, path=()):
    if isinstance(node, dict):
        if "value" in node and path[0] not in ("fitted",):
            yield path, node
        for k, v in node.items():
            if not k.startswith("_"):
                yield from _entries(v, (*path, k))


def test_every_efficiency_term_has_a_source():
    data = json.loads(EFFICIENCY_PATH.read_text())
    entries = list(_entries(data))
    assert len(entries) > 25
    for path, entry in entries:
        assert entry.get("source"), path
        if entry["source"] != "assumption":
            assert entry["source"].startswith("https://") or path[0] == "priors", path
    for name, fmt in data["formats"].items():
        if name not in ("lever_defaults", "_about"):
            assert fmt["source"] and fmt["class"] in ("16-bit", "8-bit", "fp8", "4-bit"), name
    for name, link in data["collectives"].items():
        if not name.startswith("_"):
            assert link["where"] and link["source"], name


def test_formats_bytes_are_the_layouts_arithmetic():
    f = load_efficiency()["formats"]
    assert f["gptq-int4-g128"]["matrix"] == 0.5 + 2.5 / 128
    assert f["mlc-q4f16_1"]["matrix"] == 0.5625 and f["llamacpp-q4_0"]["matrix"] == 0.5625
    # Q4_0 Llama-2-7B: every tensor 18/32 bytes, the output in Q6_K = llama-bench's 3.56 GiB.
    table = 32000 * 4096
    size = (6738415616 - table) * 18 / 32 + table * 210 / 256
    assert round(size / 2**30, 2) == 3.56
    # Q4_K_M: the matrices' mix is what remains of the 3.80 GiB file.
    q4km = f["llamacpp-q4_k_m"]
    total = (6738415616 - 2 * table) * q4km["matrix"] + table * (q4km["embedding"] + q4km["head"])
    assert total / 2**30 == pytest.approx(3.80, rel=1e-9)


def test_a_memory_bound_steps_longer_compute_is_a_row_the_overlap_reads():
    """An engineer's trial: the overlap's row read "compute 0.242 ms" where the ceiling's compute was 0.1643 ms, and
    no row shown said where the rest came from. The GEMMs' and attention's terms, hidden under the memory time, are
    rows at 0 that give the compute before and after them."""
    r = Scenario(model="llama-3-70b", gpu="h100-sxm", weight_dtype="int4").evaluate()
    e = expected_step(r)
    terms = {t.key: t for t in e.terms}
    gemm, attention = terms["gemm"], terms["attention"]
    assert gemm.seconds == attention.seconds == 0 and gemm.shown and attention.shown
    assert gemm.compute_seconds > 0 and attention.compute_seconds > 0
    before = float(r.compute_time_s)
    after = before + gemm.compute_seconds + attention.compute_seconds
    # each row's "compute goes a → b", and the overlap's compute is the last b
    assert "the step's compute goes 0.1643 ms → 0.1986 ms, under its memory time's 16.4 ms" in gemm.formula
    assert "the step's compute goes 0.1986 ms → 0.2424 ms" in attention.formula
    assert f"{1e3 * before:.4f}" == "0.1643" and f"{1e3 * after:.3f} ms and memory" in terms["overlap"].formula
    # "= 0.1769 ms in place of the ceiling's 0.1426 ms": 0.1769 − 0.1426 is the GEMM row's compute change
    new, old = (float(v) for v in re.search(r"= ([\d.]+) ms in place of the ceiling's ([\d.]+) ms",
                                           gemm.formula).groups())
    assert new - old == pytest.approx(1e3 * gemm.compute_seconds, abs=1e-3)
    text = waterfall_text(e)
    assert "+ 0 µs  GEMM" in text and "+ 0 µs  attention" in text
    rows = {row["key"]: row for row in to_json(e)["expected_terms"]}
    assert rows["gemm"]["compute_seconds"] == gemm.compute_seconds and rows["hbm"]["compute_seconds"] is None
    # Compute-bound, the same terms change the step itself: no hidden compute is reported.
    big = expected_step(Scenario(model="llama-3-8b", batch=1024, context=128).evaluate())
    assert {t.key: t for t in big.terms}["gemm"].compute_seconds is None


def test_the_time_to_first_tokens_engine_term_is_paid_once_a_request():
    # An engineer's trial: the TTFT chain's last row read "engine per-step overhead: + 1 ms per prefill".
    e = expected_for_scenario(Scenario(model="llama-3-8b"))
    ttft = {t.key: t for t in e.ttft_terms}["engine"]
    assert ttft.name == "engine per-request overhead" and ttft.formula.endswith(" per prefill")
    assert {t.key: t for t in e.terms}["engine"].name == "engine per-step overhead"


def test_waterfall_text_goes_from_the_ceiling_to_the_expected_step():
    r = Scenario(model="llama-3-8b", gpu="h100-sxm", batch=1, context=1024).evaluate()
    e = expected_step(r, "vLLM")
    text = waterfall_text(e)
    lines = text.splitlines()
    assert lines[1].strip().startswith("ceiling (the roofline): 4.834 ms per step = 207 tokens/s per sequence")
    assert lines[-2].strip().startswith("= expected:")
    assert lines[-1].strip() == "time per output token: ceiling 4.834 ms, expected 6.612 ms"  # 1 / 207 tokens/s
    for term in e.terms:
        if term.seconds:
            assert term.name in text
    assert text.count("source: ") == sum(1 for t in e.terms if t.shown and t.source)


def test_cli_json_gains_the_expected_keys_and_keeps_every_other(capsys):
    args = ["explain", "--model", "llama-3-70b", "--gpu", "h100-sxm", "--tp", "4", "--batch", "8", "--json"]
    assert main([*args, "--engine", "vLLM"]) == 0
    out = json.loads(capsys.readouterr().out)
    s = Scenario(model="llama-3-70b", gpu="h100-sxm", tp=4, batch=8)
    r = s.evaluate()
    for key, value in r.to_json().items():
        assert out[key] == value, key
    e = expected_for_scenario(s, "vLLM")
    assert out["expected_step_time_s"] == e.expected_step_time_s
    assert out["expected_tokens_per_s_per_sequence"] == e.expected_tokens_per_s_per_sequence
    assert out["expected_tokens_per_s_aggregate"] == e.expected_tokens_per_s_aggregate
    assert out["expected_ttft_s"] == e.expected_ttft_s
    assert [t["name"] for t in out["expected_terms"]] == [n for _, n in TERM_NAMES]
    assert all(set(t) >= {"name", "seconds", "source"} for t in out["expected_terms"])
    assert out == json.loads(json.dumps(to_json(e) | out))


def test_cli_text_prints_the_waterfall_after_the_derivation(capsys):
    assert main(["explain", "--model", "llama-2-7b", "--gpu", "a100-80gb", "--engine", "gpt-fast"]) == 0
    text = capsys.readouterr().out
    assert text.index("Step 7") < text.index("Expected step (gpt-fast;") < text.index("= expected:")
    assert "would deliver if it fit" not in text
    # Llama-3-70B in BF16 on one H100 does not fit: the prediction says so, as the readouts' "(if it fit)" do.
    assert main(["explain", "--engine", "vLLM"]) == 0
    last = capsys.readouterr().out.rstrip().splitlines()[-2:]
    assert last[0].strip() == ("it does not fit in memory (Step 5): every figure above is what it would deliver if "
                               "it fit")
    # S = 8,192 is past the calibration set's longest decode context: said last (core/coverage.py)
    assert last[1].strip().startswith("Not in the 57 calibration measurements the expected step's constants")


def test_cli_refuses_an_unknown_engine(capsys):
    assert main(["explain", "--engine", "nonesuch"]) == 2
    assert "--engine" in capsys.readouterr().err


def test_the_overlap_term_prints_what_it_smooths_and_they_multiply_out():
    """Two trials could not recompute "max(a, b) → (aⁿ + bⁿ)^(1/n), n = 1.704" without a and b. The row prints
    compute and memory, their smooth maximum, the GPU time with communication and gaps, and the launches' smooth
    maximum: recomputed from the printed numbers, each lands on the next printed one."""
    import re

    for r in (Scenario(model="qwen3-30b-a3b", tp=2).evaluate(), Scenario(model="llama-3-70b", tp=8).evaluate()):
        overlap = {t.key: t for t in expected_step(r).terms}["overlap"]
        printed = re.match(
            r"max\(a, b\) → \(aⁿ \+ bⁿ\)\^\(1/n\), n = ([\d.]+): compute ([\d.,]+) ms and memory ([\d.,]+) ms → "
            r"([\d.,]+) ms; \+ ([\d.,]+) ms of communication and gaps = GPU time ([\d.,]+) ms; with the host's "
            r"launches ([\d.,]+) ms → ([\d.,]+) ms; the step goes", overlap.formula).groups()
        n, c, m, inner, comm, gpu, cpu, outer = (float(v.replace(",", "")) for v in printed)
        digits = len(printed[3].split(".")[1])
        # n as printed reproduces the printed smooth maxima to their last digit (at 1.704 for 1.70411 it did not)
        assert abs((c**n + m**n) ** (1 / n) - inner) <= 1.5 * 10**-digits
        assert round(inner + comm, digits) == gpu  # the GPU time is the two printed parts' sum
        assert abs((gpu**n + cpu**n) ** (1 / n) - outer) <= 1.5 * 10**-digits


def test_every_collective_call_is_a_kernel_launched():
    """An engineer's trial on DeepSeek-V3 (TP = 8, PP = 2, EP = 2): the launches counted "334 + 60 all-reduces" and
    left out the step's all-to-alls and its PP send; the other communication kept the ceiling's per-call time
    without saying so."""
    r = Scenario(model="deepseek-v3", gpu="h200", weight_dtype="fp8", tp=8, pp=2, ep=2, batch=32,
                 context=4096).evaluate()
    slowest = r.deployment.profile.stages[r.slowest_stage]
    others = sum(c.calls for c in slowest.collectives if c.name != "TP all-reduce")
    x = chain_inputs(r, engine_parameters(r))
    assert others > 0 and x.other_calls == others and x.kernels == r.kernels_per_step + x.allreduce_calls + others
    terms = {t.key: t for t in expected_step(r).terms}
    assert (f"{x.kernels:.0f} kernels ({r.kernels_per_step} + {x.allreduce_calls:.0f} all-reduces + {others:.0f} "
            "other collective calls)") in terms["launches"].formula
    assert "(EP all-to-all, PP sends: the ceiling's, α not fitted for them)" in terms["collectives"].formula


def test_each_bandwidth_terms_time_multiplies_out_from_its_bytes():
    """An engineer's trial: "weight-read time 4.72 ms ÷ 0.7722" and "KV-read time (1.074 GB) 0.3376 ms" did not come
    from 15.010 GB or 1.074 GB at 3.35 TB/s (4.48 and 0.3206 ms): both held the HBM term's ÷ 0.9493 unsaid."""
    terms = {t.key: t for t in expected_step(Scenario(model="llama-3-8b", gpu="h100-sxm").evaluate()).terms}
    assert terms["kernels"].formula.startswith(
        "weight-read time 15.010 GB / (3.35 TB/s × 0.9493) = 4.72 ms ÷ 0.7722 = 6.112 ms; ")
    assert terms["kv"].formula.startswith(
        "KV-read time 1.0737 GB / (3.35 TB/s × 0.9493) = 0.3376 ms ÷ (0.7991 × grouped-KV factor 0.9901) = 0.4267 ms")
    assert round(15.010e9 / (3.35e12 * 0.9493) * 1e3, 2) == 4.72
    # a verifying trial: 1.074 GB gives 0.3377 ms; the bytes take the digits that give the 0.3376 the row divides
    assert round(1.0737e9 / (3.35e12 * 0.9493) * 1e3, 4) == 0.3376
    int4 = {t.key: t for t in expected_step(Scenario(model="llama-3-8b", weight_dtype="int4").evaluate()).terms}
    assert int4["dequant"].formula.startswith("weight-read time ")
    assert " / (3.35 TB/s × 0.9493 × " in int4["dequant"].formula


def test_a_prefills_byte_terms_under_its_compute_are_listed_with_the_memory_time_they_move():
    """An engineer's trial: the time to first token's chain listed GEMM, attention, launches, overlap and engine,
    and its overlap row read "memory 6.2232 ms" where the ceiling's was 4.8724 ms: the byte and bandwidth terms,
    hidden under the compute, were left out."""
    from core.expected import expected_for_scenario

    e = expected_for_scenario(Scenario(model="llama-3-8b", gpu="h100-sxm"))
    ttft = {t.key: t for t in e.ttft_terms}
    shown = [t.key for t in e.ttft_terms if t.shown]
    assert shown[:4] == ["embedding", "hbm", "kernels", "kv"]
    for key in ("embedding", "hbm", "kernels", "kv"):
        assert ttft[key].seconds == 0 and ttft[key].formula.endswith("under its compute time's 33.53 ms: the step "
                                                                      "stays 33.53 ms"), ttft[key].formula
    assert "the step's memory time goes 4.8724 ms → 4.5637 ms" in ttft["embedding"].formula
    assert "the step's memory time goes 6.2014 ms → 6.2232 ms" in ttft["kv"].formula
    # The rows' memory times chain from the ceiling's to the overlap's
    moved = math.fsum(ttft[k].memory_seconds for k in ("embedding", "hbm", "kernels", "kv"))
    assert round((4.8724e-3 + moved) * 1e3, 4) == 6.2232
    assert "compute 43.4680 ms and memory 6.2232 ms" in ttft["overlap"].formula


def test_a_constant_the_fit_left_at_its_prior_is_called_the_assumption_it_is():
    """An engineer's trial: vLLM's KV efficiency, 0.7976, and its 98.4 µs step overhead were "fitted on 3 calibration
    measurements", yet are the priors 0.8 and 0.1 ms moved under 2 %; and its all-reduce α, "no calibration
    measurement of vLLM" beside "fitted for vLLM on 3", is TensorRT-LLM's on NVLink 4, where vLLM has none."""
    r = Scenario(model="llama-3-70b", gpu="h100-sxm", batch=8, tp=2).evaluate()
    p = engine_parameters(r, "vLLM")
    assert p.kv_efficiency.value == pytest.approx(0.7976, abs=1e-4)
    assert "within 2 % of its prior 0.8 (assumption: " in p.kv_efficiency.source
    assert "within 2 % of its prior 0.1 ms (assumption " in p.step_overhead_s.source
    assert "within 2 %" not in p.kernel_efficiency.source  # 0.7746 against 0.8: 3.2 %, the data moved it
    assert p.allreduce_alpha_s.source.startswith(
        "no calibration measurement of vLLM with nvlink4: the generic value, the one engine with a fitted value, "
        "TensorRT-LLM (v0.5-0.6)'s")
