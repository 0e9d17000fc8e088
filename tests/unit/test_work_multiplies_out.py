"""Lines of the derivation whose arithmetic sat in words: each now prints the product it is.

The decode attention FLOP (``B·k × (Σ FLOP per key over the layers × keys read + FLOP per token of fixed-state
mixers)``) names the window or cap that stops S, and a hybrid's Mamba FLOP; the launch time prints
``kernels × latency`` or, with CUDA graphs, ``latency + kernels × node gap``.  A config's Mamba mixer counts
Jamba's dt/B/C RMSNorms.
"""

import json
import math
import re
from pathlib import Path

import pytest

from app.readouts import rows
from core import Scenario
from core.config_reader import from_hf_config
from core.explain import quantities
from core.units import fmt_seconds

DATA = Path(__file__).parents[1] / "data"

KERNELS = "(32 layers × 11 + 4: a Llama-style block's kernels, whatever each layer's kind)"


def number(text: str) -> float:
    return float(text.replace(",", ""))


def scenario(model="llama-3-8b", **levers):
    return Scenario(model=model, **levers)


def jamba(**levers):
    s = Scenario(**levers)
    s.add_model(from_hf_config(json.loads((DATA / "jamba-1.5-mini.config.json").read_text()), model_id="jamba",
                               name="Jamba-1.5-Mini"))
    return s


def attention_sum(work: str) -> tuple[int, float]:
    """``B·k`` and the bracket of the attention work, evaluated: Σ a × b keys + c per token."""
    m = re.search(r"B·k = ([\d,]+) × (.*)\) = ", work)
    bk, terms = int(number(m.group(1))), m.group(2)
    pairs = re.findall(r"([\d,.]+) FLOP per key over the layers × ([\d,]+) keys", terms)
    total = sum(number(a) * number(b) for a, b in pairs)
    total += sum(number(c) for c in re.findall(r"([\d,.]+) FLOP per token of mixers", terms))
    return bk, total


def test_a_sliding_window_caps_the_keys_the_attention_work_counts():
    # Mistral-7B: a 4,096-token window on all 32 layers; 4·h_q·d_head = 4 × 32 × 128 = 16,384 FLOP per key per
    # layer, × 32 layers = 524,288 per key; at S = 8,192 each token reads 4,096 keys, not 8,192.
    r = scenario("mistral-7b", context=8192, batch=2).evaluate()
    work = quantities(r)["flops"].work
    assert "B·k = 2 × 524,288 FLOP per key over the layers × 4,096 keys (S = 8,192 capped at 4,096)" in work, work
    assert "attending to S = 8,192" not in work
    assert 2 * 524_288 * 4_096 == r.attention_flop_per_step


def test_a_hybrids_mamba_flop_are_in_the_sum_it_prints():
    # Jamba: 4 attention layers of 32 (4 × 16,384 = 65,536 FLOP per key) and 28 Mamba mixers at a fixed cost per
    # token; the attention GFLOP printed is their sum, not the attention alone.
    r = jamba(batch=4, spec_k=2).evaluate()
    bk, total = attention_sum(quantities(r)["flops"].work)
    assert bk == 8
    assert "65,536 FLOP per key over the layers × 8,192 keys + " in quantities(r)["flops"].work
    assert bk * total == pytest.approx(r.attention_flop_per_step, rel=1e-12)


def test_jambas_parameter_count_is_its_checkpoints():
    # ai21labs/AI21-Jamba-1.5-Mini model.safetensors.index.json: metadata.total_size 103,140,646,656 bytes of BF16
    # = 51,570,323,328 parameters; the Mamba mixers' dt/B/C RMSNorms (256 + 16 + 16 per mixer, 28 mixers = 8,064)
    # are part of it (transformers models/jamba JambaMambaMixer).
    assert jamba().evaluate().n_params * 2 == 103_140_646_656


@pytest.mark.parametrize(("graphs", "expected"), [
    # 32 layers × 11 kernels + 4 outside them, the count said (an engineer's trial found it nowhere)
    (False, f"356 kernels {KERNELS} → 356 × 4 µs = 1.424 ms against"),
    (True, f"356 kernels {KERNELS} → 4 µs + 356 × 1 µs = 0.36 ms against"),
])
def test_the_launch_time_prints_its_product(graphs, expected):
    q = quantities(scenario(cuda_graphs=graphs).evaluate())["overhead"]
    assert expected in q.work
    assert ("CUDA graphs" in q.formula) is graphs


AWQ = {"bits": 4, "group_size": 128, "quant_method": "awq", "version": "gemm", "zero_point": True}


def awq_llama(**levers):
    from core.model_catalogue import CATALOGUE_DIR

    s = Scenario(**levers)
    config = {**json.loads((CATALOGUE_DIR / "llama-3-8b.json").read_text()), "quantization_config": AWQ}
    s.add_model(from_hf_config(config, model_id="llama-awq", name="Llama-3-8B-AWQ"))
    return s


def test_int4_on_an_awq_checkpoint_says_why_p_is_not_half_a_byte():
    # 4 bits + one FP16 scale and one 4-bit zero per group of 128: 0.5 + 2.5/128 = 0.51953 bytes; I = 2/0.51953
    s = awq_llama()
    s.weight_dtype = "int4"
    work = quantities(s.evaluate())["intensity"].work
    assert work == ("2 × 1 × 1 / 0.519531 bytes = 3.85 FLOP/byte (p = 0.5 bytes of INT4 + 0.01953 of the "
                    "checkpoint's AWQ scale and zero-point overhead per weight)")
    s.weight_dtype = "int8"  # not the checkpoint's width: the precision's bytes alone, nothing to explain
    assert quantities(s.evaluate())["intensity"].work == "2 × 1 × 1 / 1 bytes = 2 FLOP/byte"


@pytest.mark.parametrize(("make", "expected"), [
    (lambda: awq_llama(), "awq-int4-g128"),  # the AWQ kernels' format, not BF16
    (lambda: Scenario(model="gpt-oss-20b", weight_dtype="stored"), "fp4"),  # MXFP4 experts
    (lambda: Scenario(model="deepseek-v3", weight_dtype="stored"), "fp8"),  # FP8 128×128 blocks
    (lambda: Scenario(model="llama-3-8b", weight_dtype="stored"), "bf16"),  # an unquantised checkpoint
])
def test_the_expected_step_of_a_checkpoint_as_stored_runs_in_its_own_format(make, expected):
    from core.expected import expected_step, to_json

    s = make()
    assert s.weight_dtype == "stored"
    assert to_json(expected_step(s.evaluate()))["expected_weight_format"] == expected


@pytest.mark.parametrize("levers, shown", [
    ({"model": "llama-3-70b", "phase": "prefill"}, "2,028"),  # tour step 12: right of the weights' 2,000
    ({"model": "llama-3-8b", "phase": "prefill", "context": 32768}, None),  # attention a third of the FLOP
])
def test_a_prefills_title_says_why_its_kv_intensity_is_right_of_the_weights_one(levers, shown):
    # Issue 30, prefill tour step 12: "I = 2,028 counting KV reads" beside the weights' 2,000, and nothing on the page
    # said that attention's FLOP are counted too.  The title's line under it: its four terms multiply out to it.
    from app.roofline_view import RooflineView
    from core.units import fmt_sig

    r = Scenario(**levers).evaluate()
    lines = RooflineView(r).figure.title.text.split("\n")
    kv_intensity = re.fullmatch(r"I = ([\d,.]+) counting KV reads \(KV BF16\): .*", lines[2]).group(1)
    assert kv_intensity == fmt_sig(r.arithmetic_intensity_with_kv) == (shown or kv_intensity)
    m = re.fullmatch(r"it counts attention FLOP too: \(([\d,.]+) \+ ([\d,.]+)\) TFLOP / \(([\d,.]+) \+ ([\d,.]+)\) GB",
                     lines[3])
    weights_tflop, attention_tflop, weights_gb, kv_gb = (float(g.replace(",", "")) for g in m.groups())
    assert fmt_sig(1e3 * (weights_tflop + attention_tflop) / (weights_gb + kv_gb)) == kv_intensity
    assert fmt_sig(1e3 * weights_tflop / weights_gb) == fmt_sig(r.arithmetic_intensity_weights)  # the line above
    assert attention_tflop == pytest.approx(r.attention_flop_per_step / 1e12, rel=1e-3) and attention_tflop > 0
    decode = RooflineView(Scenario(**{**levers, "phase": "decode"}).evaluate()).figure.title.text
    assert "attention FLOP" not in decode  # decode's three lines (and the offline page's) are unchanged


def test_a_decodes_kv_intensity_above_the_weights_one_says_why_and_the_shares_agree():
    # Issue 30's trial: at B = 1 (Llama-3-70B, S = 8,192) "I counting KV reads" is 1.131 beside the weights' 1:
    # counting more bytes raised it.  The formula says when that happens, and here it does: attention adds
    # 21.47 / 141.1 = 15 % to the FLOP, the KV 2.68 / 141.11 = 1.9 % to the bytes.
    r = Scenario().evaluate()
    q = quantities(r)["intensity-kv"]
    assert "above I (weights) when attention's share of the FLOP exceeds the KV's share of the bytes" in q.formula
    weights_flop = r.flop_per_step - r.attention_flop_per_step
    assert r.attention_flop_per_step / weights_flop > r.kv_traffic_bytes / r.weight_bytes_read
    assert r.arithmetic_intensity_with_kv > r.arithmetic_intensity_weights
    assert q.work.endswith(f"= {r.arithmetic_intensity_with_kv:,.3f} FLOP/byte")
    flop, weights, kv = (number(x) for x in re.match(r"([\d.,]+) GFLOP / \(([\d.,]+) GB \+ ([\d.,]+) GB\)",
                                                      q.work).groups())
    assert flop / (weights + kv) == pytest.approx(r.arithmetic_intensity_with_kv, rel=1e-3)  # it multiplies out


def test_the_bound_readout_says_when_the_kv_reads_alone_make_the_step_memory_bound():
    """A teacher's trial: B = 64, INT4 weights, k = 4 on an H100 puts the point on the compute roof (I = 1,024 on the
    weights) while the readout said "memory-bound" (201 < 295 counting the KV reads), unexplained."""
    from core import Scenario
    from core.explain import quantities

    r = Scenario(batch=64, weight_dtype="int4", spec_k=4).evaluate()
    assert round(r.arithmetic_intensity_weights) == 1024 and round(r.arithmetic_intensity_with_kv) == 201
    assert quantities(r)["bound"].value == "memory-bound by KV reads"  # the weights alone: compute-bound
    assert quantities(Scenario(batch=64).evaluate())["bound"].value == "memory-bound"


def test_split_over_gpus_the_attainable_names_the_communication_between_ceiling_and_step():
    # DeepSeek-V3 on 8 H100s, B = 1: the ceiling counting KV reads is min(989.4, 3.35 × 2.43, 28.59 GFLOP / 2.7 ms)
    # = 8.139 TFLOP/s, the figure the chart plots; the step adds 0.7388 ms of communication, so it sustains
    # 28.59 GFLOP / 4.252 ms = 6.725 TFLOP/s, the figure its tokens/s go with.  The readout said "what the step
    # sustains" of the ceiling and left the communication out.
    # Its own readout, under the ceiling's, so the two percentages are side by side without "Show your work" (a new
    # user read 4.79 % on the ceiling and 4.11 % in the tokens/s and could not tell why).
    r = scenario("deepseek-v3", tp=8).evaluate()
    q, held = quantities(r)["attainable-kv"], quantities(r)["attainable-comm"]
    assert "the ceiling; the next readout adds the step's communication" in q.formula
    assert held.label == "Attainable with communication, counting KV reads, per GPU"
    assert held.value == "6.725 TFLOP/s (0.68 %)"
    assert [x.key for x in rows(r)].index("attainable-comm") == [x.key for x in rows(r)].index("attainable-kv") + 1
    m = re.search(r"^([\d.]+) GFLOP / ([\d.]+) ms \(([\d.]+) ms of it communication\) = "
                  r"([\d.]+) TFLOP/s = ([\d.]+) % of peak$", held.work)
    flop, step, comm, sustained, pct = (float(g) for g in m.groups())
    assert flop / step == pytest.approx(sustained, rel=1e-3) and sustained == 6.725  # GFLOP / ms = TFLOP/s
    assert sustained == pytest.approx(r.flop_per_step / r.step_time_s_with_kv / 1e12, rel=1e-3)
    assert comm == pytest.approx(r.communication_time_s * 1e3, rel=1e-3)
    assert pct == pytest.approx(100 * sustained * 1e12 / r.peak_flop_per_s, rel=1e-2)
    assert q.value == "8.139 TFLOP/s (0.823 %)"  # the ceiling, as the chart's point
    weights = quantities(r)["attainable"].work
    assert "with communication 11.19 GFLOP / 4.08 ms (ignoring KV, 0.7388 ms of it communication)" in weights
    # Two H100s: the readout counts the attention's FLOP (3.459 TFLOP/s), the weights line's work and the chart's
    # bar the weights' only (2.886); a new user read the first as the weights' and found it above the weights'
    # roofline (3.35).  Its label says which step it is, and it sits under its own ceiling (3.98).
    two = scenario(tp=2).evaluate()
    comm, kv = quantities(two)["attainable-comm"], quantities(two)["attainable-kv"]
    assert "counting KV reads" in comm.label and "both counting KV reads" in comm.formula
    assert comm.value == "3.459 TFLOP/s (0.35 %)" and kv.value == "3.98 TFLOP/s (0.402 %)"
    assert "with communication 8.031 GFLOP / 2.782 ms (ignoring KV" in quantities(two)["attainable"].work
    one = scenario().evaluate()  # one GPU sends nothing: no such readout
    assert "communication" not in quantities(one)["attainable-kv"].work and "attainable-comm" not in quantities(one)
    assert "attainable-comm" not in [x.key for x in rows(one)]


def test_a_tokens_per_s_of_a_workload_that_does_not_fit_says_so_where_the_number_is():
    # Llama-3-70B in BF16 on one H100: 131.4 GiB of weights in 80 GiB.  The rate is the bandwidth's ceiling (article
    # 004's 23.9 tokens/s), not one an engine delivers: a new user read it as the deployment's.
    r = Scenario().evaluate()
    q = quantities(r)
    assert not r.fits and q["tokens"].value == "23 tokens/s (if it fit)"
    assert q["tokens"].work.endswith(" = 23 tokens/s; it does not fit in memory (Step 5), so no engine runs it as set")
    assert q["tokens-aggregate"].value == "23 tokens/s (if it fit)"
    fits = quantities(Scenario(tp=2).evaluate())
    assert fits["tokens"].value == "45 tokens/s" and "fit" not in fits["tokens-aggregate"].value


def test_the_communication_intensity_says_how_much_of_the_communication_no_intensity_counts():
    # Llama-3-70B on 8 H100s at B = 16: 4,431 FLOP per byte sent, above the link's ridge of 2,199, so the bytes are
    # not what the link spends its time on: 160 calls × 6 µs = 0.96 ms of the 1.123 ms is call latency.
    r = scenario("llama-3-70b", tp=8, batch=16).evaluate()
    work = quantities(r)["comm-intensity"].work
    assert "(above it, the chip takes longer for the FLOPs than the link for the bytes); beside the bytes, the " \
           "calls' latency: 160 × 6 µs = 0.96 ms of the communication's 1.123 ms; communication is" in work
    assert 160 * r.deployment.plan.call_latency_s == pytest.approx(0.96e-3)
    assert r.communication_time_s == pytest.approx(1.123e-3, rel=1e-3)


@pytest.mark.parametrize(("model", "tp", "want"), [
    # Qwen2.5-72B on 8 H100s: KV_seq is 0.3125 GiB, printed 0.312, and 60.57 / 0.312 is 194.1, not 193.
    ("qwen2.5-72b", 8, "floor(60.07 GiB / 0.3125 GiB) = 192"),
    # Mistral-7B on 8: the free 75.3125 GiB printed 75.31, and 75.31 / 0.0625 floors to 1,204, not 1,205.
    ("mistral-7b", 8, "floor(75.313 GiB / 0.0625 GiB) = 1,205"),
])
def test_the_largest_batch_floors_the_quotient_it_prints(model, tp, want):
    work = quantities(Scenario(model=model, tp=tp).evaluate())["max-batch"].work
    assert work == want
    free, seq, n = (float(x.replace(",", "")) for x in re.findall(r"[\d,.]+(?= GiB|$)", work))
    assert math.floor(free / seq) == n


@pytest.mark.parametrize("levers", [{"model": "qwen3-next-80b-a3b"}, {"model": "nemotron-h-56b"},
                                    {"model": "llama-3-70b", "tp": 4, "batch": 64},
                                    {"model": "deepseek-v3", "tp": 8, "batch": 8}, {"model": "gpt-oss-120b"}])
def test_the_traffic_bars_parts_add_to_the_total_they_print(levers):
    """A trial's Qwen3-Next at S = 8,192: "8.0 GB per step (weights 7.7 GB, KV + state 0.2 GB)": 7.7 + 0.2 is 7.9.
    Each bar's parts are printed with the decimals that make them add to its total as printed."""
    from app.serving_views import traffic_html

    rows_seen = re.findall(r"([\d,.]+) GB per step, .*? \(weights ([\d,.]+) GB, KV(?: \+ state)? ([\d,.]+) GB",
                           traffic_html(Scenario(**levers).evaluate()))
    assert len(rows_seen) >= 4
    for total, weights, kv in rows_seen:
        decimals = len(total.partition(".")[2])
        assert len(weights.partition(".")[2]) == len(kv.partition(".")[2]) == decimals
        assert round(number(weights) + number(kv), decimals) == number(total), (total, weights, kv)
    if levers == {"model": "qwen3-next-80b-a3b"}:
        assert ("7.99 GB per step, KV + state 3 % (weights 7.75 GB, KV + state 0.24 GB = 0.22 GiB)"
                in traffic_html(Scenario(**levers).evaluate()))


def _expected_text(**query) -> str:
    import html

    from app.expected_view import expected_tab_html
    from app.lab import Lab

    page = expected_tab_html(Lab(query={k: str(v) for k, v in query.items()}).state)
    page = re.sub(r'<div class="wf-source".*?</div>', "", page)  # sources quote their own benchmarks' figures
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page)))


def test_the_time_to_first_token_over_pipeline_stages_multiplies_out():
    """A trial's Nemotron-H at PP = 4: each TTFT row added 4 × the step change it printed ("GEMM … + 56.72 ms …
    the step goes 59.75 ms → 73.93 ms"; "ceiling: 239 ms per step" of a 59.75 ms step) and said nothing of the 4."""
    from core.units import seconds_value

    text = _expected_text(model="nemotron-h-56b", batch=8, pp=4)
    ttft = text[text.index("Time to first token, term by term"):]
    assert "ceiling (the roofline) : 4 × 59.75 ms = 239 ms (a step on each of 4 pipeline stages)" in ttft
    assert "+ 4 × 14.18 ms = 56.72 ms → 295.7 ms time to first token" in ttft
    products = re.findall(r"(\d+) × ([\d.,]+) (ms|µs|s) = ([\d.,]+ (?:ms|µs|s))", ttft)
    # the ceiling; eight terms (embedding, HBM, kernels and KV reads at 4 × 0 µs under the compute; GEMM, attention,
    # launches, overlap); the engine's is per request, not per stage; expected
    assert len(products) == 10
    for n, each, unit, total in products:
        assert fmt_seconds(int(n) * seconds_value(f"{each} {unit}")) == total, (n, each, total)
    assert "per step → 290.5 ms time to first token" in _expected_text()  # one stage: as before


def test_the_expected_terms_constants_have_the_digits_their_terms_need():
    """A trial recomputed the Expected tab from what it prints: "memory time ÷ 0.949" added 2.273 ms where the row
    says 2.259; "884 kernels × 2.49 µs gaps" is 2.201 ms beside + 2.204 ms; "× 0.331" gave 2.065 ms for 2.063; the
    readout's "23 tokens/s × 42.92 ms / 60.27 ms = 17 tokens/s" is 16.4."""
    text = _expected_text(model="llama-3-70b")
    assert "+ 2.204 ms → 17 tokens/s per sequence max(GPU time + 884 kernels × 2.493 µs gaps" in text
    assert 884 * 2.493e-6 == pytest.approx(2.204e-3, abs=5e-7)
    gemm = re.search(r"([\d.]+) TFLOP / \(([\d.]+) TFLOP/s × ([\d.]+) × ([\d.]+)\) = ([\d.]+) ms in place", text)
    flop, peak, fraction, factor, ms = map(float, gemm.groups())
    assert fmt_seconds(flop / (peak * fraction * factor)) == f"{gemm.group(5)} ms"
    attention = re.search(r"([\d.]+) TFLOP / \(([\d.]+) TFLOP/s × ([\d.]+)\) = ([\d.]+) ms in place", text)
    flop, peak, fraction, _ = map(float, attention.groups())
    assert fmt_seconds(flop / (peak * fraction)) == f"{attention.group(4)} ms"
    # the time each efficiency divides, from its bytes at the bandwidth the terms before left, then before and after,
    # with 1 − f to three digits (0.0507)
    divided = re.findall(r"(?:memory|weight-read|KV-read) time ([\d.]+) GB / \(?([\d.]+) TB/s(?: × ([\d.]+))?\)? = "
                         r"([\d.]+) ms ÷ \(?([\d.]+)(?: × grouped-KV factor ([\d.]+)\))? = ([\d.]+) ms", text)
    # HBM, kernels, KV reads (BF16: no dequantisation), in the step's chain and the first token's (under its compute)
    assert len(divided) == 6 and divided[0][4] == "0.9493"
    assert [d[2] for d in divided] == ["", "0.9493", "0.9493"] * 2  # the kernels and KV reads at the HBM's fraction
    for gb, tb_s, earlier, before, f, grouped, after in divided:
        assert float(gb) * 1e9 / (float(tb_s) * 1e12 * float(earlier or 1)) == pytest.approx(float(before) * 1e-3,
                                                                                          rel=2e-4)
        assert fmt_seconds(float(before) / float(f) / float(grouped or 1) * 1e-3) == f"{after} ms"
    from core.expected import expected_quantities, expected_step

    r = Scenario(model="llama-3-70b").evaluate()
    work = expected_quantities(expected_step(r), fits=r.fits)[0].work
    a, b, c, d = re.search(r"([\d.,]+) tokens/s × ([\d.]+) ms / ([\d.]+) ms = ([\d,]+) tokens/s", work).groups()
    assert (a, d) == ("23.3", "17") and round(number(a) * float(b) / float(c)) == 17


def test_split_into_stages_the_kernels_are_the_slowest_stages_everywhere():
    """A trial's Nemotron-H at PP = 4: the readout said "323 kernels (30 layers on this GPU)" and the Expected tab
    334 kernels; the step is the slowest stage's, whose 29 layers launch 323."""
    from core.expected import expected_step

    r = Scenario(model="nemotron-h-56b", batch=8, pp=4).evaluate()
    layers = r.deployment.plan.stage_layers()
    assert layers == (29, 30, 30, 29) and r.slowest_stage == 3 and r.kernels_per_step == 323
    assert quantities(r)["overhead"].work.startswith(
        "323 kernels (29 layers on this GPU × 11 + 4: a Llama-style block's kernels, whatever each layer's kind) → "
        "323 × 4 µs")
    launches = {t.key: t for t in expected_step(r).terms}["launches"]
    assert launches.formula.startswith("max(GPU time + 324 kernels (323 + 1 other collective call) × ")  # its PP send


@pytest.mark.parametrize(("levers", "shown"), [({"model": "llama-3-70b", "tp": 2, "batch": 64}, "31,011"),
                                               ({"model": "nemotron-h-56b", "batch": 8, "pp": 4}, "1,830,620")])
def test_the_communication_intensity_is_one_number_that_its_terms_give(levers, shown):
    """A trial: the chart's title said "31,010 FLOP per byte sent" beside the readout's 31,011, and the readout's
    "239.9 GFLOP / 131,072 bytes = 1,830,620" is 1,830,292."""
    from app.roofline_view import RooflineView

    r = Scenario(**levers).evaluate()
    q = quantities(r)["comm-intensity"]
    assert q.value == f"{shown} FLOP/byte"
    assert f"its I = {shown} FLOP per byte sent" in RooflineView(r).figure.title.text
    flop, sent, quotient = re.match(r"([\d,]+) FLOP / ([\d,]+) bytes = ([\d,]+) FLOP/byte", q.work).groups()
    assert f"{number(flop) / number(sent):,.0f}" == quotient == shown


@pytest.mark.parametrize("levers", [{"model": "nemotron-h-56b", "batch": 8, "pp": 4}, {},
                                    {"model": "llama-3-70b", "tp": 2, "batch": 64},
                                    {"model": "qwen3-30b-a3b", "batch": 16}, {"model": "deepseek-v3", "tp": 8}])
def test_the_kv_total_multiplies_and_the_bytes_per_step_add_as_printed(levers):
    """A trial's Nemotron-H at PP = 4: "0.205 GiB × 8 × 4 = 6.55 GiB" is 6.56, and "29.18 GB + 1.42 GB" (30.60)
    beside the step's 30.61 GB."""
    q = quantities(Scenario(**levers).evaluate())
    factors = re.match(r"([\d.,]+) GiB × ([\d,]+)(?: × ([\d,]+))? = ([\d.,]+) GiB", q["kv-total"].work).groups()
    each, batch, pp, total = factors
    assert f"{number(each) * number(batch) * number(pp or '1'):,.2f}" == total, factors
    weights, kv, step = re.match(r"([\d.,]+) GB \+ ([\d.,]+) GB = ([\d.,]+) GB", q["bytes-step"].work).groups()
    assert number(weights) + number(kv) == pytest.approx(number(step), abs=1e-9), (weights, kv, step)
    if levers.get("pp") == 4:
        assert q["kv-total"].work.startswith("0.2047 GiB × 8 × 4 = 6.55 GiB")
        assert q["bytes-step"].work == "29.183 GB + 1.422 GB = 30.605 GB"


def test_the_charts_title_gives_the_readouts_intensities():
    """A teacher's trial: Llama-3.1-405B's prefill on an H100 PCIe, title "I = 54,170 counting KV reads" beside the
    readout's 54,172 FLOP/byte.  The title prints each intensity as the readouts do (whole from 10,000)."""
    from app.lab import Lab

    lab = Lab(query={"model": "llama-3.1-405b", "gpu": "h100-pcie", "weight-dtype": "stored", "kv-dtype": "fp16",
                     "batch": "59", "spec-k": "2", "context": "30000", "no-gqa": "true", "phase": "prefill"})
    title = lab.roofline.figure.title.text
    shown = {q.key: q.value for q in rows(lab.result)}
    assert shown["intensity"] == "118,000 FLOP/byte" and shown["intensity-kv"] == "54,172 FLOP/byte"
    assert "\nI = 118,000 FLOP/byte (weights" in title and "\nI = 54,172 counting KV reads" in title


def test_a_split_step_names_one_gpus_read_and_holdings_and_ties_name_the_memory_stage():
    """An engineer's trial: DeepSeek-V3 on TP = 8, PP = 2, EP = 2 printed stage 2's read "of the 21,336,185,856
    parameters this GPU holds", stage 1's; and Qwen3-30B-A3B's three stages of 16 layers named stage 3 for the
    weights held and stage 1 for the same KV bytes."""
    r = Scenario(model="deepseek-v3", gpu="h200", weight_dtype="fp8", tp=8, pp=2, ep=2, batch=32,
                 context=4096).evaluate()
    slowest = r.deployment.profile.stages[r.slowest_stage]
    assert r.slowest_stage != r.memory_stage and slowest.params_held != r.weight_params_held
    q = quantities(r)
    assert f"of the {slowest.params_held:,.0f} parameters this GPU holds" in q["weights"].work
    qwen = Scenario(model="qwen3-30b-a3b", tp=4, pp=3, ep=2).evaluate()
    q = quantities(qwen)
    assert qwen.memory_stage == 2 and "stage 3 of 3" in q["weights-gpu"].work and "stage 3 of 3" in q["kv-gpu"].work


def test_a_traffic_rows_small_cache_is_not_printed_as_nothing():
    """A trial: a 1B model's 17.8 MB of cache at S = 2,048 read "KV 0.0 GB = 0.0 GiB".  A part that would print as 0
    takes two significant digits, and the parts still add to the total as printed."""
    from app.serving_views import traffic_html

    text = traffic_html(Scenario(model="llama-3-8b", context=64).evaluate())  # 64 × 131,072 bytes = 8.4 MB
    row = re.search(r"<b>S = 64</b>[^<]*", text).group(0)
    assert "KV 0.0084 GB = 0.0078 GiB" in row and "weights 16.0605 GB" in row and "16.0689 GB per step" in row
    assert "S = 2,048</b>: 16.33 GB per step" in text  # the other rows keep their own decimals


@pytest.mark.parametrize(("levers", "ceiling"), [
    ({"model": "llama-3-8b", "gpu": "a100-80gb"}, "119"),  # not "120 tokens/s ×" under a readout of 119
    ({"model": "llama-3-8b", "gpu": "b200", "batch": 2}, "439"),
])
def test_the_expected_work_restates_the_ceiling_no_coarser_than_its_readout(levers, ceiling):
    from core.expected import expected_quantities, expected_step
    from core.units import fmt_rate

    r = Scenario(**levers).evaluate()
    assert fmt_rate(r.tokens_per_s_per_sequence) == ceiling
    work = expected_quantities(expected_step(r), fits=r.fits)[0].work
    a, b, c, d = re.search(r"([\d.,]+) tokens/s × ([\d.]+) ms / ([\d.]+) ms = ([\d,]+) tokens/s", work).groups()
    assert round(number(a)) == int(ceiling) and round(number(a) * float(b) / float(c)) == number(d)


@pytest.mark.parametrize("kw", [{"model": "llama-3-8b"}, {"model": "llama-3-8b", "batch": 56},
                                {"model": "llama-3-70b", "context": 131072, "batch": 4},
                                {"model": "llama-3-8b", "context": 128}, {"model": "llama-3-8b", "context": 16}])
def test_the_kv_share_is_the_value_its_work_ends_with(kw):
    # An engineer's trial: the readout said "21 %" over its work's "= 21.1 %"; a verifying trial: "0.02 GB / 16.08 GB
    # = 0 %" at S = 128, and a KV cache of "0.00 GB" at S = 16.
    q = quantities(Scenario(**kw).evaluate())["kv-share"]
    kv, total = (number(v) for v in re.findall(r"([\d.,]+) GB", q.work))
    assert q.work.endswith(f"= {q.value}")
    pct = 100 * kv / total
    shown = q.value.removesuffix(" %")
    decimals = len(shown.split(".")[1]) if "." in shown else 0
    assert f"{pct:.{decimals}f}" == shown and kv > 0 and shown != "0"


_READ_ROW = re.compile(r"(?:memory|weight-read|KV-read) time ([\d.,]+) GB / \(?([\d.]+) TB/s((?: × [\d.]+)*)\)? = "
                       r"([\d.,]+) (ms|µs|s) ÷ \(?([\d.]+)(?: × grouped-KV factor ([\d.]+)\))? = ([\d.,]+) (ms|µs|s)")
_DIFFERENCE_ROW = re.compile(r"\(([\d.,]+) GB − ([\d.,]+) GB\) / ([\d.]+) TB/s")
_UNIT = {"µs": 1e-6, "ms": 1e-3, "s": 1.0}


def _as_printed(seconds: float, printed: str, unit: str) -> str:
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return f"{seconds / _UNIT[unit]:,.{decimals}f}"


@pytest.mark.parametrize("kw", [
    {"model": "llama-3-8b"}, {"model": "llama-3-8b", "gpu": "a100-80gb", "batch": 16},
    {"model": "llama-3-70b", "weight_dtype": "int4"}, {"model": "qwen3-30b-a3b", "tp": 2},
    {"model": "qwen3-30b-a3b", "gpu": "a100-80gb", "batch": 16, "tp": 2}, {"model": "llama-3-8b", "context": 16},
    {"model": "llama-3-70b", "tp": 8, "batch": 64}, {"model": "llama-3-8b", "gpu": "l4", "batch": 4},
    {"model": "llama-3-8b", "spec_k": 4, "weight_dtype": "fp8"}])
@pytest.mark.parametrize("engine", [None, "vLLM"])
def test_every_bandwidth_row_multiplies_out_at_its_printed_digits(kw, engine):
    """A verifying trial recomputed every row from what it prints: "1.074 GB / (3.35 TB/s × 0.9493) = 0.3376 ms" is
    0.3377, "(15.010 GB − 16.061 GB) / 2.039 TB/s" printed 0.5152 ms for 0.5154, "26.353 GB / 2.039 TB/s =
    12.925 ms" is 12.924: the bytes now take the digits that give the time printed, in both chains."""
    from core.expected import expected_for_scenario

    e = expected_for_scenario(Scenario(**kw), engine)
    rows = 0
    for t in (*e.terms, *e.ttft_terms):
        if not t.shown:
            continue
        for gb, tb, earlier, before, unit, f, grouped, after, unit_after in _READ_ROW.findall(t.formula):
            rate = float(tb) * 1e12 * math.prod(float(v) for v in re.findall(r"[\d.]+", earlier))
            assert _as_printed(number(gb) * 1e9 / rate, before, unit) == before, t.formula
            done = number(before) * _UNIT[unit] / float(f) / float(grouped or 1)
            assert _as_printed(done, after, unit_after) == after, t.formula
            rows += 1
        for a, b, tb in _DIFFERENCE_ROW.findall(t.formula):
            said = re.search(r"= (−?)([\d.,]+) (ms|µs|s) of memory time", t.formula)
            printed, unit = (said.group(2), said.group(3)) if said else fmt_seconds(abs(t.seconds)).split()
            got = abs(number(a) - number(b)) * 1e9 / (float(tb) * 1e12)
            assert _as_printed(got, printed, unit) == printed, t.formula
            rows += 1
    assert rows >= 3


@pytest.mark.parametrize("model, levers", [
    ("gpt-oss-120b", dict(gpu="b200", weight_dtype="stored", phase="prefill", prompt_len=8192)),
    ("llama-3-8b", dict(batch=8, spec_k=4)),
    ("llama-3-70b", dict(batch=56, tp=2)),
    ("mixtral-8x7b", dict(batch=3, spec_k=3, acceptance=0.6)),
])
def test_the_tokens_per_s_work_divides_to_the_rate_it_prints(model, levers):
    """A teacher's check: gpt-oss-120b's prefill printed "1 × 8,192 / 20.91 ms = 391,821 tokens/s", and 8,192 /
    20.91 ms is 391,774.  Each "B × E / t" divides, as printed, to the rate printed beside it, with and without KV."""
    from core.units import fmt_rate, seconds_value

    q = quantities(scenario(model, **levers).evaluate())
    work = re.compile(r"(\d+) × ([\d.,]+) / ([\d.,]+ (?:ms|µs|s)) = ([\d.,]+) tokens/s")
    for key in ("tokens", "tokens-no-kv"):
        b, e, t, rate = work.match(q[key].work).groups()
        assert fmt_rate(int(b) * number(e) / seconds_value(t)) == rate, (key, q[key].work)


def test_a_measured_cpus_ridge_prints_as_core_measure_prints_it():
    """`python -m core measure` on a 2-core machine: "0.2294 TFLOP/s, 0.04213 TB/s -> ridge point 5.4 FLOP/byte";
    its link opened a lab whose readout and chart said 5 (whole numbers at any size).  Below 10 a ridge keeps two
    significant digits (three in the work that divides to it); the offline page takes the same strings."""
    from app.roofline_view import RooflineView, ridge_text
    from app.standalone import constants
    from app.state import LabState
    from core.hardware import custom_accelerator

    s = Scenario(model="llama-3-8b")
    s.add_gpu(custom_accelerator("This machine: CPU (NumPy)", 0.04213236, 23.54, measured=True, bf16=0.22936379))
    r = s.evaluate()
    q = quantities(r)["ridge"]
    assert (q.work, q.value) == ("0.2294 TFLOP/s / 0.04213 TB/s = 5.44 FLOP/byte", "5.4 FLOP/byte")
    assert RooflineView(state=LabState(s)).ridge.data["text"] == ["ridge 5.4\nFLOP/byte"]
    assert constants(s, r)["ridge"]["bf16"] == ["5.44", "5.4", ridge_text(r.ridge_point)]
    h100 = quantities(Scenario(model="llama-3-8b").evaluate())["ridge"]
    assert (h100.work.rsplit("= ", 1)[1], h100.value) == ("295.3 FLOP/byte", "295 FLOP/byte")  # as before from 10
