"""What the expected step's calibration set covers, and a scenario beyond it (core/coverage.py): an engineer's trial
read "0.65–1.2 × the expected speed" for an MLA model with 256 experts at TP = 8, which no measurement had."""

import json
import re

from app.lab import Lab
from core import Scenario
from core.cli import main
from core.config_reader import from_hf_config
from core.coverage import beyond_calibration, beyond_text, calibration_coverage
from core.model_catalogue import CATALOGUE_DIR


def test_the_calibration_sets_reach():
    c = calibration_coverage()
    assert c.n == 57
    # dense Llama-2/3/3.1 and Mixtral-8x7B: no MLA, windows, state, indexer, image tokens or shared experts
    assert c.features == frozenset()
    assert c.max_experts == 8 and c.max_tp == 8 and (c.max_ep, c.max_pp) == (1, 1) and c.max_layers == 126
    assert c.max_spec_k == 1  # no measurement speculated
    assert c.max_batch == 960 and c.max_prompt == 2048
    assert c.max_context == 2048 + 2048 // 2  # the longest generation: a 2,048-token prompt and 2,048 out
    assert {"a100-80gb", "h100-sxm", "h200", "mi300x"} <= c.gpus and "b200" not in c.gpus


def test_a_scenario_like_the_measured_ones_is_not_extrapolated():
    r = Scenario(model="llama-2-7b", gpu="a100-80gb", context=1024).evaluate()
    assert beyond_calibration(r) == () and beyond_text(()) == ""


def test_a_speculating_prediction_is_named_an_extrapolation_without_the_drafts_cost():
    """An engineer's trial: k = 4's expected 42 tokens/s (Compare, Pins, Expected) said nowhere that no measurement
    speculated, nor that the draft model's steps are not counted."""
    k4 = beyond_calibration(Scenario(model="llama-2-7b", gpu="a100-80gb", context=1024, spec_k=4).evaluate())
    assert k4 == ("k = 4 tokens a verify step (the set's measurements decode one token a step, without speculation; "
                  "the draft model's own steps are not counted)",)
    prefill = Scenario(model="llama-2-7b", gpu="a100-80gb", context=1024, spec_k=4, phase="prefill").evaluate()
    assert not any(item.startswith("k = ") for item in beyond_calibration(prefill))


def test_what_a_scenario_has_beyond_the_set_is_named():
    dsv3 = beyond_calibration(Scenario(model="deepseek-v3", tp=8, context=1024).evaluate())
    assert dsv3 == ("multi-head latent attention (MLA)", "shared experts",
                    "256 routed experts (the set's MoE models have at most 8)")
    qwen = beyond_calibration(Scenario(model="qwen3-30b-a3b", tp=2, ep=2, gpu="b200", batch=1024).evaluate())
    assert "128 routed experts (the set's MoE models have at most 8)" in qwen
    assert "EP = 2 (the set's largest is 1)" in qwen and "B = 1,024 (the set's largest is 960)" in qwen
    assert any(item.endswith("(no measurement in the set ran on it)") and "B200" in item for item in qwen)
    assert "TP = 16 (the set's largest is 8)" in beyond_calibration(Scenario(tp=16, context=1024).evaluate())
    gemma = beyond_calibration(Scenario(model="gemma-2-9b", context=1024).evaluate())
    assert gemma == ("sliding-window or chunked attention layers",)
    # A thousand layers: the launches and per-layer terms were fitted on stacks of at most 126 (Llama-3.1-405B).
    config = json.loads((CATALOGUE_DIR / "llama-3-8b.json").read_text())
    deep = Scenario(context=1024)
    deep.add_model(from_hf_config({**config, "num_hidden_layers": 1000}, model_id="deep", name="Deep"))
    assert beyond_calibration(deep.evaluate()) == ("1,000 layers (the set's deepest model has 126)",)
    # a prefill's batch and context are not a decode step's; its prompt is what it reads (the set's longest: 2,048)
    assert beyond_calibration(Scenario(phase="prefill", batch=1024, context=65536).evaluate()) == ()
    assert beyond_calibration(Scenario(phase="prefill", prompt_len=2**21).evaluate()) == (
        "a prompt of 2,097,152 tokens (the set's longest is 2,048)",)


def test_the_readout_the_tab_and_the_command_line_say_it(capsys):
    lab = Lab(Scenario(model="deepseek-v3", tp=8, context=1024), query={})
    lab.state.tab = "Expected"
    page = lab._tab_views["Expected"].pane.object
    beyond = re.search(r'data-readout="expected-beyond">(.*?)</div>', page).group(1)
    assert "Outside what was measured" in beyond and "multi-head latent attention (MLA)" in beyond
    assert "256 routed experts (the set&#x27;s MoE models have at most 8)" in beyond
    value = re.search(r'data-readout="expected-tokens">(.*?)</span>', lab.readouts.pane.text).group(1)
    # beside the ≈ and the fit's
    assert value.endswith("generic engine without CUDA graphs (approximate; if it fit; extrapolated)")
    near = Lab(Scenario(model="llama-2-7b", gpu="a100-80gb", context=1024), query={})
    near.state.tab = "Expected"
    assert 'data-readout="expected-beyond"' not in near._tab_views["Expected"].pane.object
    assert "extrapolated" not in near.readouts.pane.text
    assert main(["explain", "--model", "deepseek-v3", "--tp", "8", "--context", "1024", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["expected_beyond_calibration"] == list(
        beyond_calibration(Scenario(model="deepseek-v3", tp=8, context=1024).evaluate()))


def test_an_approximate_models_waterfall_marks_each_value():
    # An engineer's trial: DeepSeek-V3 (num_nextn_predict_layers not modelled) had "≈" on each readout, none on the
    # Expected tab's rows.
    lab = Lab(Scenario(model="deepseek-v3", tp=8, context=1024), query={})
    lab.state.tab = "Expected"
    page = lab._tab_views["Expected"].pane.object
    values = re.findall(r"→ <b>([^<]*)</b>|</span> → ([^<]*) tokens/s", page)
    assert values and all((a or b).startswith("≈ ") for a, b in values)
    # the ends' step times and the time to first token's summary too (a trial: "64.99 ms per step → ≈ 64.99 ms")
    ends = re.findall(r'data-term="(?:ceiling|expected)"[^>]*><div class="wf-head"><b>[^<]*</b>: ([^<]*) →', page)
    assert len(ends) == 4 and all(t.startswith("≈ ") for t in ends), ends
    assert re.search(r"<summary>Time to first token, term by term: ceiling ≈ [\d.]+ ms, expected ≈ ", page)
    value = re.search(r'data-readout="expected-tokens">(.*?)</span>', lab.readouts.pane.text).group(1)
    assert value.startswith("ceiling ≈ ") and "; expected ≈ " in value
    near = Lab(Scenario(model="llama-3-8b"), query={})
    near.state.tab = "Expected"
    assert "≈" not in near._tab_views["Expected"].pane.object


def test_a_batch_past_its_weight_class_measurements_is_an_extrapolation():
    """An engineer's trial: INT4 at B = 256 predicted 22,463 tokens/s with no word of extrapolation, while every 4-bit
    (and 8-bit) measurement of the set is at B = 1: the class's dequantisation factor was fitted on matvecs only."""
    c = calibration_coverage()
    assert dict(c.max_batch_by_class) == {"16-bit": 384, "fp8": 960, "8-bit": 1, "4-bit": 1}

    def beyond(weights, batch, phase="decode"):
        return beyond_calibration(Scenario(model="llama-3-8b", gpu="h100-sxm", weight_dtype=weights, batch=batch,
                                           context=505, phase=phase).evaluate())

    assert beyond("int4", 256) == ("B = 256 with 4-bit weights (the set's 4-bit measurements are all at B = 1)",)
    assert beyond("int8", 8) == ("B = 8 with 8-bit weights (the set's 8-bit measurements are all at B = 1)",)
    assert beyond("int4", 1) == beyond("fp8", 256) == beyond("bf16", 384) == ()
    assert beyond("bf16", 385) == ("B = 385 with 16-bit weights (the set's 16-bit measurements are at B ≤ 384)",)
    assert beyond("int4", 256, phase="prefill") == ()  # a prefill's batch of prompts is read against its prompt
    assert "B = 256 with 4-bit weights" in beyond_text(beyond("int4", 256))


def test_a_preset_read_outside_its_own_measurements_says_so():
    """An engineer's trial: vLLM's own constants come from three measurements (A100s at TP = 4, B = 64; MI300Xs at
    TP = 8), yet an H100 at TP = 1 was predicted with no word.  Inside the engine's own GPUs, TPs and batches nothing
    is added; the generic engine (the median of the fitted ones) has no own measurements to leave."""
    from core.coverage import beyond_engine, engine_coverage

    assert engine_coverage("vLLM") == (3, frozenset({"a100-80gb", "mi300x"}), (4, 8), (1, 64))
    h100 = Scenario(model="llama-3-8b", gpu="h100-sxm", context=1024).evaluate()
    said = beyond_calibration(h100, "vLLM")
    assert said[-1] == ("vLLM's own constants were fitted on 3 measurements (A100 SXM4 80GB, MI300X; TP 4–8; B 1–64): "
                        "not on this GPU, not at TP = 1")
    assert beyond_calibration(h100) == beyond_calibration(h100, None) == ()
    inside = Scenario(model="llama-3-70b", gpu="a100-80gb", tp=4, batch=64, context=1024).evaluate()
    assert beyond_engine(inside, "vLLM") == ""
    assert beyond_engine(Scenario(model="llama-3-70b", gpu="a100-80gb", tp=4, batch=128).evaluate(),
                         "vLLM").endswith(": not at B = 128")
    from core.coverage import beyond_text
    from core.expected import expected_step, waterfall_text

    assert "not on this GPU, not at TP = 1" in waterfall_text(expected_step(h100, "vLLM"),
                                                            beyond=beyond_text(said))
