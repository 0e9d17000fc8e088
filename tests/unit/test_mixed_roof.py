"""A checkpoint in two formats multiplies each weight on its own format's roof (core.precision.mixed_roof).

gpt-oss-120b as stored keeps its attention, router and LM head in BF16 beside MXFP4 experts: on a B200 those
16-bit weights run on the 2,250 TFLOP/s BF16 roof, not the 9,000 TFLOP/s FP4 one.  Counting every FLOP on the FP4
roof had put an 8,192-token prefill at 11.53 ms (an engineer's trial, by hand: at least twice that).
"""

import re

import pytest

from app.roofline_view import pinned_roofs_apart, roof_name
from core import Scenario
from core.explain import quantities
from core.hardware import get_accelerator
from core.precision import mixed_roof
from core.units import TFLOP

# gpt-oss-120b's config.json: hidden 2,880, 64 query heads and 8 KV heads of 64, 36 layers, 128 experts (4 per
# token), vocabulary 201,088, untied.  Its 16-bit matrices a token multiplies with, by hand (norms, biases and the
# attention sinks are elementwise: their FLOP stay on the main roof):
GPT_OSS_16BIT = (
    201_088 * 2_880  # LM head
    + 36 * (2_880 * 64 * 64 * 2 + 2_880 * 8 * 64 * 2)  # q, o and k, v projections
    + 36 * 128 * 2_880  # routers
)
GPT_OSS_ACTIVE = 5_711_982_912


def test_the_hand_count_is_the_checkpoints():
    assert GPT_OSS_16BIT == 1_547_919_360


def test_gpt_oss_as_stored_on_a_b200_runs_its_16_bit_weights_on_the_bf16_roof():
    s = GPT_OSS_16BIT / GPT_OSS_ACTIVE  # 27.10 %
    want = 1 / ((1 - s) / 9_000e12 + s / 2_250e12)  # 4,964.2 TFLOP/s
    r = Scenario(model="gpt-oss-120b", gpu="b200", weight_dtype="stored", phase="prefill", prompt_len=8192).evaluate()
    assert r.peak_flop_per_s == pytest.approx(want, rel=1e-12)
    assert r.peak_flop_per_s / TFLOP == pytest.approx(4_964.2, abs=0.05)
    assert r.ridge_point == pytest.approx(want / 8e12, rel=1e-12)
    assert r.compute_roof == "fp4"
    # The prefill's compute time: all its FLOP at the mix, not at 9,000 TFLOP/s (11.53 ms).
    assert r.compute_time_s == pytest.approx(r.flop_per_step / want, rel=1e-12)
    assert r.flop_per_step / 9_000e12 == pytest.approx(11.53e-3, abs=5e-6)
    assert r.compute_time_s == pytest.approx(20.91e-3, abs=5e-6)


def test_the_roofs_work_multiplies_out_at_its_printed_digits():
    r = Scenario(model="gpt-oss-120b", gpu="b200", weight_dtype="stored").evaluate()
    work = quantities(r)["roof"].work
    assert ("its matrices multiplied in 16 bits (LM head, attention, router: 27.10 % of the 5,711,982,912 active) "
            "run on the BF16 roof") in work, work
    m = re.search(r"1 / \(([\d.]+) / ([\d,.]+) TFLOP/s \+ ([\d.]+) / ([\d,.]+) TFLOP/s\) = ([\d,.]+) TFLOP/s\)$", work)
    a, p, b, p16, shown = (float(g.replace(",", "")) for g in m.groups())
    assert (a, p, b, p16) == (0.729005, 9_000, 0.270995, 2_250)
    assert a + b == pytest.approx(1)
    assert shown == 4_964 == round(1 / (a / p + b / p16))
    assert work.startswith("4,964 TFLOP/s dense (as stored (mxfp4 4-bit): FP4 tensor roof; ")
    # The compute time divides by the roof it names.
    assert quantities(r)["compute-time"].work.split(" / ")[1].startswith("4,964 TFLOP/s")


def test_deepseek_v3_as_stored_keeps_its_lm_head_and_router_in_bf16():
    # 129,280 × 7,168 LM head; 58 MoE layers' routers of 256 × 7,168 (their biases and the norms are elementwise).
    head, routers = 129_280 * 7_168, 58 * 256 * 7_168
    r = Scenario(model="deepseek-v3", gpu="h100-sxm", weight_dtype="stored").evaluate()
    s = (head + routers) / r.n_active_params
    assert s == pytest.approx(0.027511, abs=5e-7)
    assert r.peak_flop_per_s == pytest.approx(mixed_roof(1_978.9e12, 989.4e12, s), rel=1e-12)
    assert ("its matrices multiplied in 16 bits (LM head, router: 2.75 % of the 37,552,297,472 active)"
            in r.compute_roof_reason)


@pytest.mark.parametrize("model, gpu, dtype, peak", [
    ("llama-3-8b", "h100-sxm", "fp8", 1_978.9e12),  # every weight FP8: one roof
    ("llama-3-8b", "b200", "stored", 2_250e12),  # a 16-bit checkpoint: BF16
    ("gpt-oss-120b", "h100-sxm", "stored", 989.4e12),  # no FP4 roof: the MXFP4 experts run weight-only on BF16
    ("gpt-oss-120b", "b200", "fp4", 9_000e12),  # the lever's FP4 is every weight's format
])
def test_one_format_keeps_its_roof_exactly(model, gpu, dtype, peak):
    r = Scenario(model=model, gpu=gpu, weight_dtype=dtype).evaluate()
    assert r.peak_flop_per_s == peak
    assert "16 bits" not in r.compute_roof_reason


def test_mixed_roof_is_the_flop_weighted_harmonic_mean():
    assert mixed_roof(9e15, 2.25e15, 0.0) == 9e15
    assert mixed_roof(2.25e15, 2.25e15, 0.3) == 2.25e15
    assert mixed_roof(9e15, 2.25e15, 1.0) == pytest.approx(2.25e15, rel=1e-15)
    # Half the FLOP at each roof: 2 / (1/9 + 1/2.25) = 3.6 PFLOP/s.
    assert mixed_roof(9e15, 2.25e15, 0.5) == pytest.approx(3.6e15, rel=1e-15)


def test_a_pin_under_a_mixed_roof_draws_its_own_roof_and_names_it():
    b200 = get_accelerator("b200")
    llama = Scenario(model="llama-3-8b", gpu="b200", weight_dtype="fp4").evaluate()
    oss = Scenario(model="gpt-oss-120b", gpu="b200", weight_dtype="stored").evaluate()
    assert llama.compute_roof == oss.compute_roof == "fp4"
    assert pinned_roofs_apart(llama, [oss])
    assert roof_name(oss) == f"{b200.name} (fp4 + bf16 mix)"
    assert roof_name(llama) == f"{b200.name} (fp4)"


def test_the_charts_ridge_label_names_the_mix_its_flat_roof_is_drawn_at():
    """The readouts said "4,964 TFLOP/s (FP4 + BF16 mix)"; the chart's flat roof sat at 4,964 unlabelled, the ridge
    label "ridge 621 FLOP/byte" beside it.  The label names the mix, and only for a mix."""
    from app.roofline_view import RooflineView
    from app.state import LabState

    state = LabState(Scenario(model="gpt-oss-120b", gpu="b200", weight_dtype="stored"))
    view = RooflineView(state=state)
    assert view.ridge.data["text"] == ["ridge 621\nFLOP/byte\n(FP4 + BF16 mix)"]
    from app.standalone import constants  # the offline page's and the instant redraw's label, by weight format
    ridges = constants(state.scenario, state.result)["ridge"]
    assert ridges["stored"][2] == view.ridge.data["text"][0] and ridges["fp4"][2] == "ridge 1,125\nFLOP/byte"
    state.scenario.weight_dtype = "fp4"  # one format: its own roof, no mix named
    assert view.ridge.data["text"] == ["ridge 1,125\nFLOP/byte"]


def test_the_expected_steps_gemms_run_on_the_checkpoints_mix():
    from core.expected import chain_inputs, engine_parameters
    r = Scenario(model="gpt-oss-120b", gpu="b200", weight_dtype="stored", phase="prefill", prompt_len=8192).evaluate()
    x = chain_inputs(r, engine_parameters(r))
    assert x.peak_gemm == r.peak_flop_per_s < 9_000e12
    assert x.peak_bf16 == 2_250e12


def _llama(quantization_config: dict):
    """Llama-3-8B's config with a quantization_config, read as a pasted config."""
    import json
    from pathlib import Path

    from core.config_reader import from_hf_config
    cfg = json.loads((Path(__file__).parents[2] / "core" / "model_configs" / "llama-3-8b.json").read_text())
    return from_hf_config({**cfg, "quantization_config": quantization_config}, model_id="q", name="q")


def _as_stored(model, gpu="h100-sxm"):
    s = Scenario(gpu=gpu, weight_dtype="stored")
    s.add_model(model)
    s.model = model.id
    return s.evaluate()


@pytest.mark.parametrize("ignored", [["*"], ["re:.*"], ["model.layers", "lm_head"]])
def test_a_checkpoint_whose_config_leaves_every_weight_16_bit_is_on_the_bf16_roof(ignored):
    # A trial: FP8 with every module left unconverted read p = 2 and every group BF16, on a roof of 1,023 TFLOP/s
    # (the FP8 roof mixed with the embedding's share), above the H100's BF16 989.4.
    from core.expected import stored_weight_format
    model = _llama({"quant_method": "fp8", "activation_scheme": "dynamic", "modules_to_not_convert": ignored})
    r = _as_stored(model)
    assert r.bytes_per_weight == 2.0
    assert r.peak_flop_per_s == 989.4e12
    assert r.compute_roof_reason.endswith("no weight is stored in a narrower format (every tensor group BF16): "
                                          "the BF16 roof")
    assert stored_weight_format(model) == "bf16"


@pytest.mark.parametrize("qc, peak, why, fmt", [
    ({"quant_method": "gptq", "bits": 8, "group_size": 128}, 989.4e12,
     "INT8 (GPTQ, group 128) is weight-only (W8A16): dequantised and multiplied on the BF16 roof", "gptfast-int8"),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"targets": ["Linear"], "weights": {
        "num_bits": 8, "type": "float", "strategy": "channel"}}}}, 989.4e12,
     "FP8 (channel) is weight-only (W8A16): dequantised and multiplied on the BF16 roof", "gptfast-int8"),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"targets": ["Linear"], "weights": {
        "num_bits": 8, "type": "float", "strategy": "channel"}, "input_activations": {
        "num_bits": 8, "type": "float", "dynamic": True}}}}, 1_978.9e12,
     "FP8 is W8A8: the matmul runs on the FP8 tensor roof", "fp8"),
])
def test_a_weight_only_8_bit_checkpoint_multiplies_in_bf16(qc, peak, why, fmt):
    # A trial: GPTQ 8-bit and compressed-tensors FP8 with no input_activations (W8A16) were on the INT8 / FP8 roof.
    from core.expected import stored_weight_format
    model = _llama(qc)
    r = _as_stored(model)
    assert r.peak_flop_per_s == peak
    assert r.compute_roof_reason.endswith(why), r.compute_roof_reason
    assert stored_weight_format(model) == fmt


def test_the_expected_gemm_fraction_says_it_is_taken_for_the_mix():
    from core.expected import engine_parameters
    r = Scenario(model="gpt-oss-120b", gpu="b200", weight_dtype="stored").evaluate()
    source = engine_parameters(r).gemm_fraction.source
    assert "of the FP4 peak" in source
    assert "taken for the checkpoint's FP4 + BF16 mix (its 16-bit matrices too)" in source
    one = Scenario(model="llama-3-8b", gpu="b200", weight_dtype="fp4").evaluate()
    assert "mix" not in engine_parameters(one).gemm_fraction.source


def test_the_compare_rows_fraction_is_of_each_pins_own_roof():
    # A trial: the row read "fraction of its GPU's peak", and divided by 4,964 for gpt-oss and 9,000 for Llama FP4,
    # both on one B200: each pin's own compute roof, which the label now says.
    from core.pins import COMPARE_METRICS
    row = next(m for m in COMPARE_METRICS if m.column == "peak_fraction_with_kv")
    assert row.label.startswith("fraction of its compute roof on the roofline")
    oss = Scenario(model="gpt-oss-120b", gpu="b200", weight_dtype="stored", phase="prefill", prompt_len=8192).evaluate()
    assert row.si(oss) == pytest.approx(oss.attainable_flop_per_s_with_kv / oss.peak_flop_per_s, rel=1e-12)


def test_weight_only_matrices_beside_a_w8a8_format_multiply_in_bf16():
    # A trial: compressed-tensors with W8A8 attention and a W4A16 MLP (Llama-3-8B) had the INT8 roof's mix with its
    # BF16 norms only, 1,857 TFLOP/s on an H100: the weight-only MLP, 70 % of the FLOP, on the INT8 roof.
    group = {"num_bits": 8, "type": "int", "strategy": "channel"}
    model = _llama({"quant_method": "compressed-tensors", "ignore": ["lm_head"], "config_groups": {
        "attention": {"targets": ["re:.*self_attn.*"], "weights": group, "input_activations": {"num_bits": 8}},
        "mlp": {"targets": ["re:.*mlp.*"], "weights": {"num_bits": 4, "type": "int", "strategy": "group",
                                                        "group_size": 128}}}})
    r = _as_stored(model)
    # 16-bit: the LM head (128,256 × 4,096) and the MLP (32 × 3 × 4,096 × 14,336); INT8: the attention.
    s = (128_256 * 4_096 + 32 * 3 * 4_096 * 14_336) / 8_030_261_248
    assert r.compute_roof == "int8"
    assert r.sixteen_bit_flop_share == pytest.approx(s, rel=1e-12)
    assert r.peak_flop_per_s == pytest.approx(mixed_roof(1_978.9e12, 989.4e12, s), rel=1e-12)
    assert r.peak_flop_per_s / TFLOP == pytest.approx(1_119.6, abs=0.05)
    assert ("its matrices multiplied in 16 bits (LM head, dense MLP: 76.74 % of the 8,030,261,248 active)"
            in r.compute_roof_reason)


def test_the_config_report_of_a_checkpoint_leaving_every_weight_16_bit_says_so():
    # A trial: its report said "Its checkpoint is 8-bit fp8" above a table of BF16 rows.
    import html

    from app.byo_view import report_html
    text = html.unescape(report_html(_llama({"quant_method": "fp8", "modules_to_not_convert": ["*"]})))
    assert "Its quantization_config (fp8) leaves every weight 16-bit: the weight precision is set to as stored" in text
    assert "8-bit fp8" not in text
    assert "Its checkpoint is 8-bit fp8" in html.unescape(report_html(_llama({"quant_method": "fp8"})))


def test_a_w8a8_group_no_matrix_has_gives_no_roof():
    # An attacker's trial: two groups both targeting Linear, W4A16 first: every matrix is W4A16 (the first rule
    # matches), yet the roof was the INT8 + BF16 mix of the W8A8 group no matrix has (1,023 TFLOP/s on an H100).
    model = _llama({"quant_method": "compressed-tensors", "ignore": ["lm_head"], "config_groups": {
        "group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "type": "int", "strategy": "group",
                                                       "group_size": 128}},
        "group_1": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "int", "strategy": "channel"},
                    "input_activations": {"num_bits": 8}}}})
    r = _as_stored(model)
    assert r.peak_flop_per_s == 989.4e12 and r.sixteen_bit_flop_share == 0


def test_a_checkpoint_leaving_every_weight_16_bit_is_labelled_16_bit():
    # An attacker's trial: AWQ with modules_to_not_convert ["*"] read "weights as stored (awq 4-bit)" and
    # "INT4 (AWQ, group 128): 2.0000 bytes per weight".
    model = _llama({"quant_method": "awq", "bits": 4, "group_size": 128, "modules_to_not_convert": ["*"]})
    r = _as_stored(model)
    assert r.deployment.weights.label == "as stored (16-bit)"
    assert model.architecture()["quantization"].startswith("awq, every weight left 16-bit: 2.0000 bytes per weight")
