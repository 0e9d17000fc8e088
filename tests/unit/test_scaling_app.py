"""Many GPUs in the app without a server: scaling tab, memory suggestion, interconnect roof, readouts, tour, page."""

import numpy as np
import pytest

from app.lab import Lab
from app.memory_view import suggestion
from app.readouts import rows
from app.standalone import constants, standalone_html
from app.state import TABS
from core import Scenario
from core.tour import GPU_TOUR, TOUR
from core.units import GiB


def test_scaling_tab_draws_times_and_rates_against_tp():
    lab = Lab(Scenario(model="llama-3-8b"))
    assert "Scaling" in TABS
    lab.state.tab = "Scaling"
    view = lab.scaling
    times = view.times.data
    assert list(times["tp"]) == [1, 2, 4, 8, 16, 32]
    assert np.isnan(times["comm"][0])  # TP = 1 sends nothing (not drawable on a log axis)
    # memory time halves with each doubling while TP <= h_kv = 8
    assert times["memory"][1] == pytest.approx(times["memory"][0] / 2, rel=0.02)
    assert view.crossover.visible and view.crossover.location == 16
    assert "TP = 16" in view.note.object
    assert view.past_node.left == pytest.approx(8 * 1.41)
    # Past the node the figures keep the scale-up link, said beside the claim (a hardware engineer's trial).
    assert ("past 8 GPUs (grey) the NVLink node ends, and the figures there keep its link (the slower "
            "scale-out network is not modelled)") in view.note.object
    assert "(NVLink 4, 450 GB/s per direction);" in view.note.object  # the link in a few words
    # Its title names the levers its curves depend on: a saved image of INT4 and one of k = 4 are named apart.
    # The current TP too (the large dot): TP = 1 and TP = 4 saved as one name.
    assert view.times_fig.title.text.split("\n")[0] == (
        "Llama-3-8B on NVIDIA H100 SXM5 80GB (B = 1, p = BF16, k = 1, S = 8,192, current TP = 1)")
    assert view.rates_fig.title.text == ("tokens/s ceiling against TP, Llama-3-8B "
                                         "(B = 1, p = BF16, k = 1, S = 8,192, current TP = 1)")
    lab.scenario.tp = 4
    assert list(view.current.data["tp"]) == [4]
    assert view.rates_fig.title.text.endswith("(B = 1, p = BF16, k = 1, S = 8,192, current TP = 4)")


def test_the_tokens_per_s_axis_is_labelled_1_2_5_a_decade_down_to_the_lowest_point():
    """A new user's trial: Llama-3-70B's tokens/s against TP (23 to 300 tokens/s) was labelled 50, 100, 150, 200,
    300, 400 (Bokeh's log ticker counts linearly over a short range), crowded at the top, none by the lowest
    point.  Labels 1, 2 and 5 a decade: 20, 50, 100, 200 over that range."""
    lab = Lab(Scenario())
    lab.state.tab = "Scaling"
    view = lab.scaling
    rates = [v for v in view.rates.data["aggregate"] if np.isfinite(v)]
    lo, hi = min(rates), max(rates)
    assert round(lo) == 23 and 250 < hi < 400
    ticks = [t for t in view.rates_fig.yaxis[0].ticker.ticks if lo / 1.3 <= t <= hi * 1.3]
    assert ticks == [20, 50, 100, 200]


def test_scaling_note_escapes_names():
    lab = Lab(Scenario())
    lab.state.tab = "Scaling"
    view = lab.scaling
    assert "<b>Why more TP stops paying:</b>" in view.note.object


def test_memory_bar_is_per_gpu_and_suggests_the_smallest_tp():
    lab = Lab()
    assert "DOES NOT FIT" in lab.memory.text
    assert suggestion(lab.result) == (2, 1)
    assert lab.memory_view.suggest.visible and "TP = 2" in lab.memory_view.suggest.label
    lab.memory_view.apply_suggestion()
    assert lab.scenario.tp == 2 and lab.result.fits
    assert "Memory per GPU (1 of 2, TP = 2, PP = 1)" in lab.memory.text and "→ fits" in lab.memory.text
    assert not lab.memory_view.suggest.visible


def test_communication_is_told_in_time_not_as_a_roof_on_the_hbm_axis():
    """Issue 30: the dashed interconnect roof was drawn against FLOP per byte read from HBM, with the star above
    it (a point above a roof). The chart now draws only roofs of its own axis; the title gives communication as
    time and share of the step, and its own intensity beside the interconnect ridge P_peak / link."""
    lab = Lab()
    lab.scenario.param.update(model="llama-3-70b", tp=8)
    r = lab.result  # FLOP per step (weights and attention) over the 160 all-reduces' bytes
    assert r.communication_intensity == pytest.approx(r.flop_per_step / (160 * 2 * 7 / 8 * 16_384))
    names = {g.data_source.name for g in lab.roofline.figure.renderers}
    assert "interconnect-roof" not in names
    assert all("interconnect" not in str(item.label) for item in lab.roofline.legend.items)
    lines = lab.roofline.figure.title.text.split("\n")
    assert lines[3:] == ["per GPU of 8 (TP = 8): communication 0.97 ms = 15 % of the step",
                         "its I = 4,431 FLOP per byte sent (link ridge P_peak/link: 2,199)"]
    assert r.communication_time_s / r.step_time_s_with_kv == pytest.approx(0.153, abs=5e-4)
    assert 989.4e12 / 450e9 == pytest.approx(r.interconnect_ridge_point, rel=1e-3)


def test_readouts_carry_the_many_gpu_quantities():
    keys = {q.key: q for q in rows(Scenario(tp=8, gpu_hour_price=2.0).evaluate())}
    assert keys["gpus"].value == "8"
    assert keys["kv-gpu"].value == "40 KiB"
    assert keys["cost-output"].value.startswith("$")
    assert keys["smallest-fit"].value == "TP = 2"


def test_gpu_tour_steps_close_the_tour():
    from core.tour import LADDER_TOUR  # the ladder's steps come after the many-GPU ones (tests/unit/test_tour.py)

    assert TOUR[-len(GPU_TOUR) - len(LADDER_TOUR):-len(LADDER_TOUR)] == GPU_TOUR
    captions = []
    for step in GPU_TOUR:
        s = Scenario(batch=300, gpu="l4")  # steps set every lever
        step.apply(s)
        captions.append(" ".join(step.render(s.evaluate())))
    assert "DOES NOT FIT" in captions[0] and "TP = 2" in captions[0]
    assert "65.71 GiB" in captions[1] and "room for 9 sequences" in captions[1]
    # the readout's digits (the caption said 65.7 beside its 65.71)
    from core.explain import quantities

    assert quantities(Scenario(model="llama-3-70b", tp=2).evaluate())["weights-gpu"].value == "65.71 GiB"
    assert "160 all-reduces per step cost 0.97 ms, 15 %" in captions[2]
    assert "40 KiB per token per GPU" in captions[2]  # the kv-gpu readout's unit
    assert "8 replicas of Llama-3-8B" in captions[3] and "$0.23 per million output tokens" in captions[3]


def test_offline_page_keeps_its_split_and_says_so():
    # Issue 30: the page used to clamp a split scenario to one GPU; it now evaluates it at its split, which its
    # levers do not move, and says so where it used to say "this page keeps TP = PP = EP = 1".
    html = standalone_html(Scenario(tp=4, replicas=3))
    assert ("TP = 4, PP = 1, EP = 1, 3 replicas (12 GPUs), kernels launched one by one, without CUDA graphs: fixed "
            "when the page was written; open the served lab to change them, and for what an engine is expected to "
            "deliver (the page gives the roofline's ceilings only).") in html
    # the launches too (a serving engineer's trial: a page written with graphs said nothing of them)
    assert "kernels launched as one CUDA graph a step: fixed" in standalone_html(Scenario(cuda_graphs=True))
    assert "keeps TP = PP = EP = 1" not in html
    assert "Capacity 80.0 GiB, reserve 3.0 GiB per GPU, " in html  # one GPU's, and said so
    assert "Capacity 80.0 GiB, reserve 3.0 GiB, " in standalone_html(Scenario())
    assert ("TP = 1, PP = 1, EP = 1, one replica (one GPU), kernels launched one by one, without CUDA graphs: fixed "
            "when the page was written") in standalone_html(Scenario())
    c = constants(Scenario(tp=4, replicas=3), Scenario(tp=4, replicas=3).evaluate())
    assert c["split"] == {"tp": 4, "pp": 1, "ep": 1, "replicas": 3, "gpus_per_replica": 4, "gpus_total": 12}
    # the weights' stages are one GPU's quarter (the profiles are the split's, not one GPU's)
    one = constants(Scenario(), Scenario().evaluate())
    assert c["profiles"]["bf16"]["stages"][0]["weights"][0] < one["profiles"]["bf16"]["stages"][0]["weights"][0] / 3


def test_the_class_page_link_carries_the_split():
    from app.standalone import full_lab_link

    query = full_lab_link(Scenario(model="mixtral-8x7b", tp=2, pp=2, ep=4, replicas=5))["query"]
    assert (query["tp"], query["pp"], query["ep"], query["replicas"]) == ("2", "2", "4", "5")


def test_the_page_of_a_pasted_model_links_to_the_lab_with_its_config():
    """A page of a pasted config links to the full lab only with the config in the link (``config=``), which the
    lab reads again into the same model; without its text, or with one too long for a link, no link."""
    import json

    from app.standalone import full_lab_link
    from core.config_reader import from_hf_config, parse_config_text
    from core.model_catalogue import CATALOGUE_DIR
    from core.permalink import MAX_LINK_CONFIG_CHARS, from_query

    text = (CATALOGUE_DIR / "qwen2.5-7b.json").read_text()
    s = Scenario(batch=8)
    s.add_model(from_hf_config(json.loads(text), model_id="config-mine", name="mine"))
    assert full_lab_link(s) is None
    query = full_lab_link(s, text)["query"]
    link = from_query(query)
    assert link.notices == [] and link.levers["batch"] == 8
    again = from_hf_config(parse_config_text(link.config), model_id="again", name="again")
    assert again.n_params == s.evaluate().n_params == 7_615_616_512  # Qwen2.5-7B's 7.62 B
    huge = json.dumps({**json.loads(text), "padding": [str(i) * 7 for i in range(4000)]})
    assert len(huge) > MAX_LINK_CONFIG_CHARS and full_lab_link(s, huge) is None


def test_kv_table_and_traffic_are_per_gpu_when_split():
    from app.serving_views import kv_table_html, traffic_html
    from core.units import fmt_seconds

    r = Scenario(tp=8).evaluate()
    html = kv_table_html(r)
    # 40,960 bytes per token per GPU × 8,192 tokens × 8 users = 2.5 GiB (the whole model's would be 20.0)
    assert '<td class="" data-ctx="8192" data-users="8">2.5</td>' in html
    assert "× 0.125 (one GPU's share)" in html
    assert "of one GPU (of 8)" in traffic_html(r)
    # The step's communication is named beside the HBM bars (a trial: 6.336 ms × 3.35 TB/s = 21.2 GB, not 18.0).
    assert (f"The step also spends {fmt_seconds(r.communication_time_s)} on communication between GPUs"
            in traffic_html(r)) and r.communication_time_s > 0
    assert "communication between GPUs" not in traffic_html(Scenario().evaluate())  # one GPU: none


def test_the_kv_table_counts_a_hybrids_fixed_state_as_the_memory_bar_does():
    """A new user's trial: Nemotron-H on an H200 at B = 64 showed 20.0 GiB at S = 8,192 × 64 users, not red, beside
    the memory bar's "DOES NOT FIT (largest batch 44)": the table left out the 54 Mamba layers' state."""
    from app.serving_views import kv_table_html

    r = Scenario(model="nemotron-h-56b", gpu="h200", batch=64).evaluate()
    state = 54 * (256 * 64 * 256 * 2 + 20480 * 3 * 2)  # 54 Mamba layers: SSM state + conv state, 16-bit
    kv = 10 * 2 * 8 * 128 * 2 * 8192  # 10 attention layers' KV at S = 8,192
    assert r.model.state_bytes_per_sequence(2) == state == 459_620_352
    assert r.kv_bytes == pytest.approx(64 * (kv + state)) and r.max_batch == 44 and not r.fits
    html = kv_table_html(r)
    # 47.4, marked in words as well as in red (an accessibility audit)
    assert (f'<td class="over" data-ctx="8192" data-users="64">{64 * (kv + state) / GiB:,.1f} <span aria-hidden="true">'
            '✕</span><span class="visually-hidden">, does not fit</span></td>') in html
    assert '<td class="" data-ctx="8192" data-users="32">23.7</td>' in html  # 32 of the 44 that fit
    assert "KV cache and fixed state of Nemotron-H" in html
    from core.explain import quantities

    q = quantities(r)  # the readouts name the state they count too
    assert q["kv-total"].label == "KV cache with fixed state (whole batch)" and q["kv-total"].value == "47.40 GiB"
    assert quantities(Scenario(model="llama-3-8b").evaluate())["kv-total"].label == "KV cache (whole batch)"
    assert "Each cell also holds the 0.428 GiB of fixed state every sequence keeps whatever S (Mamba state)" in html
    # Split, each cell is one GPU's, as the bar's: the state divides by TP as the KV heads do here (8 heads, TP = 2).
    r2 = Scenario(model="nemotron-h-56b", gpu="h200", batch=64, tp=2).evaluate()
    assert f'data-ctx="8192" data-users="64">{r2.kv_bytes / GiB:,.1f}</td>' in kv_table_html(r2)


def test_a_traffic_row_past_capacity_says_it_does_not_fit():
    """A teacher's trial: the Traffic tab listed S = 32k and 128k at B = 56 (224 and 896 GiB of KV on an 80 GiB card)
    with no mark, beside a memory bar that says which batch fits."""
    import re

    from app.serving_views import traffic_html

    r = Scenario(model="llama-3-8b", batch=56).evaluate()
    rows = dict(re.findall(r'data-context="(\d+)">(.*?)</div>', traffic_html(r)))
    free = r.free_for_kv_bytes / GiB  # 80 − 14.96 − 3 = 62.04 GiB
    per_seq = 2 * 32 * 8 * 128 * 2  # bytes per token
    for s, fits in ((2048, True), (8192, True), (32768, False), (131072, False)):
        held = 56 * s * per_seq / GiB  # 7, 56, 224, 896 GiB
        assert (held <= free) == fits
        mark = f"does not fit: B = 56 would hold {held:,.1f} GiB of cache per GPU, {free:,.1f} GiB free"
        assert (mark in rows[str(s)]) != fits, s
    assert r.fits and 'data-fits="no"' not in rows["8192"]  # the current S, as the memory bar says
    # Weights that alone fill the GPU: every row says so (Llama-3-70B in BF16 on one H100).
    assert traffic_html(Scenario().evaluate()).count("the weights and reserve alone fill the GPU") == 4


def test_the_traffic_tab_reads_what_the_step_reads():
    """The trial's Nemotron-H at B = 1: the Traffic tab said 113.0 GB per step where the step reads 113.44 GB (the
    Mamba state, 0.46 GB, left out); a sparse model's top k, a split's fullest stage, likewise."""
    from app.serving_views import traffic_html
    from core.serving import kv_table_per_gpu, traffic_by_context

    for levers in ({"model": "nemotron-h-56b"}, {"model": "deepseek-v3", "tp": 8, "batch": 8, "context": 32768},
                   {"model": "llama-3-70b", "tp": 4, "pp": 2, "batch": 16}, {"model": "gpt-oss-120b", "batch": 32},
                   # unequal stages: the slowest one's reads (31 and 30 layers), the memory stage's cache
                   {"model": "deepseek-v3", "tp": 8, "pp": 2, "batch": 8, "context": 32768},
                   {"model": "qwen3-next-80b-a3b", "tp": 4, "pp": 2, "batch": 8, "phase": "prefill"}):
        r = Scenario(**levers).evaluate()
        t = traffic_by_context(r.model, r.weight_bytes_read, r.batch, [r.context], r.kv_bytes_per_element, r.gqa,
                               r.deployment.profile, r.slowest_stage)
        assert t.kv_bytes[0] == pytest.approx(r.kv_traffic_bytes, rel=1e-12), levers
        table, room = kv_table_per_gpu(r.deployment.profile, [r.context], [r.batch], r.kv_bytes_per_element, r.gqa)
        assert table[0, 0] == pytest.approx(r.kv_bytes, rel=1e-12), levers
        assert room[0] == pytest.approx(r.capacity_bytes - r.memory_used_bytes + r.kv_bytes, rel=1e-12), levers
    r = Scenario(model="nemotron-h-56b").evaluate()
    assert r.kv_traffic_bytes == 10 * 2 * 8 * 128 * 2 * 8192 + 459_620_352  # KV at S = 8,192 + the Mamba state
    assert ("S = 8,192</b> ← current S: 113.4 GB per step, KV + state 1 % (weights 112.6 GB, KV + state 0.8 GB"
            in traffic_html(r))


def test_the_kv_table_says_why_every_cell_is_red_when_the_weights_alone_do_not_fit():
    """A new user's trial: on one H100, Llama-3-70B's table said "Red cells exceed the 0.0 GiB left", where the
    weights and reserve alone are over capacity."""
    from app.serving_views import kv_table_html

    r = Scenario().evaluate()  # Llama-3-70B, BF16, one H100 SXM (80 GB: 74.5 GiB)
    over = r.memory_used_bytes - r.kv_bytes - r.capacity_bytes  # weights and reserve, less capacity
    assert r.weights_shortfall_bytes == pytest.approx(over)
    html = kv_table_html(r)
    assert (f"the weights and reserve alone exceed its {r.capacity_bytes / GiB:,.1f} GiB by {over / GiB:,.1f} GiB, "
            "so no KV cache fits") in html and "0.0 GiB left" not in html
    assert html.count('<td class="over"') == html.count("<td ")  # every cell red
    assert "GiB left on NVIDIA H100 SXM5 80GB after the weights" in kv_table_html(Scenario(tp=2).evaluate())


def test_per_gpu_and_whole_model_figures_are_labelled_each():
    # The trial's case: Llama-3-70B, TP = 8, PP = 2, 2 replicas.  Each GPU reads its share of the weights,
    # 70,553,706,496 × 2 bytes / 16 = 4,410,187,776 × 2 = 8.82 GB (8.21 GiB), and says so; the 16 of "1 of 16" are
    # one replica's, and the GPUs readout counts both replicas' 32.
    lab = Lab(Scenario(model="llama-3-70b", tp=8, pp=2, replicas=2), {})
    keys = {q.key: q for q in rows(lab.result)}
    assert (keys["weights"].label, keys["weights"].value) == ("Weight bytes read per step, per GPU",
                                                              "8.82 GB (8.21 GiB)")
    assert keys["weights"].work.startswith("4,410,187,776 parameters on this GPU × 2 bytes = 8.82 GB")
    assert keys["weights"].work.endswith(
        "(one GPU of 16 in each replica, of stage 2 of 2, the slowest: its share, see Step 7)")  # the step's stage
    assert keys["gpus"].value == "32 (2 replicas × 16)"
    assert keys["flops"].label == "FLOP per step, per GPU" and keys["tokens"].label == ("Tokens/s ceiling, the batch's "
                                                                                          "total (2 micro-batches of B "
                                                                                          "in flight), one replica")
    assert keys["kv-total"].label == "KV cache per GPU (whole batch)"
    assert ("Memory per GPU (1 of 16 in each of 2 replicas, TP = 8, PP = 2; stage 2, which runs out first)"
            in lab.memory.text)  # the bar's GPU: of the stage that runs out first
    assert lab.roofline.figure.title.text.split("\n")[3] == "per GPU: 1 of 16 (TP = 8, PP = 2) in each of 2 replicas"
    # One GPU, one replica: nothing to tell apart, the labels stay short.
    one = {q.key: q for q in rows(Scenario(model="llama-3-70b").evaluate())}
    assert (one["weights"].label, one["gpus"].value, one["tokens"].label) == (
        "Weight bytes read per step", "1", "Tokens/s ceiling, the batch's total")


def test_the_moe_weights_line_labels_this_gpus_count_and_the_whole_models():
    # Qwen3-30B-A3B in BF16 over TP = 4: the whole model is 30,532,122,624 parameters, 61.06 GB = 56.87 GiB; each GPU
    # holds a quarter of it and whole what the engines keep whole (norms, q/k norms, the router: 14.24 GiB).  The line
    # names which count and which bytes are whose.
    r = Scenario(model="qwen3-30b-a3b", weight_dtype="bf16", tp=4).evaluate()
    work = {q.key: q for q in rows(r)}["weights"].work
    assert (" of the 7,642,626,048 parameters this GPU holds (30,532,122,624 in the whole model; the experts 1 "
            "token touches) × 2 bytes") in work
    assert work.endswith("GiB on this GPU); this GPU holds 14.24 GiB of the model's 56.87 GiB")
    assert "memory holds all" not in work
    alone = {q.key: q for q in rows(Scenario(model="qwen3-30b-a3b", weight_dtype="bf16").evaluate())}["weights"].work
    assert " of 30,532,122,624 parameters (the experts 1 token touches)" in alone
    assert alone.endswith("memory holds all 56.87 GiB")


def test_the_replicas_step_names_the_replicas_in_the_chart_title():
    """Issue 30: at the tour's 8 replicas the roofline's title read as one GPU's scenario; the chart is one GPU's
    and the title now says it is one of 8 replicas (the embed's one-line title too)."""
    step = next(i for i, s in enumerate(TOUR) if s.settings.get("replicas") == 8)
    lab = Lab(query={"tour": str(step + 1)})
    assert lab.result.replicas == 8
    assert lab.roofline.figure.title.text.split("\n")[0] == "Llama-3-8B · NVIDIA H100 SXM5 80GB · decode · 8 replicas"
    embed = Lab(query={"embed": "true", "model": "llama-3-8b", "replicas": "8"})
    assert embed.roofline.figure.title.text.endswith(" · 8 replicas")
    assert Lab(Scenario(model="llama-3-8b"), {}).roofline.figure.title.text.split("\n")[0].endswith("· decode")


@pytest.mark.parametrize("levers, share, verdict", [
    # Issue 30: 10 % of the step, yet "→ communication-bound" beside "Bound: memory-bound".
    ({"tp": 8, "gpu": "h100-pcie"}, "1.032 ms / 10.02 ms = 10.3 % of the step",
     "less than its memory time (8.988 ms): the step stays memory-bound"),
    ({"tp": 8}, "0.9702 ms / 6.336 ms = 15.3 % of the step", "the step stays memory-bound"),
    # A 2,000-token prefill over PCIe: 75 % of the step is communication, its largest part.
    ({"tp": 8, "gpu": "h100-pcie", "phase": "prefill"}, "144.3 ms / 191.9 ms = 75.2 % of the step",
     "its largest part: communication-bound (the Bound readout is the roofline of one GPU's own work, "
     "compute-bound, which the communication adds to)"),
])
def test_the_derivation_calls_a_step_communication_bound_only_when_communication_is_its_largest_part(
        levers, share, verdict):
    from core.explain import quantities

    r = Scenario(model="llama-3-70b", **levers).evaluate()
    q = quantities(r)
    work = q["comm-intensity"].work
    assert share in work and work.endswith(verdict)
    largest = r.communication_time_s > max(r.compute_time_s, r.memory_time_s)
    assert ("communication-bound" in work) == largest
    assert q["bound"].value == f"{r.bound}-bound" and (largest or f"stays {r.bound}-bound" in work)


def test_one_sequence_and_one_token_read_in_the_singular():
    """An engineer's trial of ``python -m core explain``: "(1 sequences in flight)", "the experts 1 tokens touch"."""
    def work(batch):
        return {q.key: q.work for q in rows(Scenario(model="mixtral-8x7b", batch=batch).evaluate())}

    one, four = work(1), work(4)
    assert "(1 sequence in flight)" in one["tokens-aggregate"] and "(the experts 1 token touches)" in one["weights"]
    assert "(4 sequences in flight)" in four["tokens-aggregate"] and "(the experts 4 tokens touch)" in four["weights"]
    assert "/ E = 1 token = " in one["tpot"]
    assert "/ E = 2.53 tokens = " in work_k4()["tpot"]


def work_k4():
    return {q.key: q.work for q in rows(Scenario(model="mixtral-8x7b", spec_k=4).evaluate())}


def test_every_tab_of_an_approximate_model_says_so_over_its_numbers():
    """A second trial: Gemma-3-12B (its vision_config not modelled) marked its readouts "≈", but the KV table, the
    Traffic, Speculation and Expected tabs and Throughput's "largest batch that fits: 67" said nothing."""
    from app.expected_view import waterfall_html
    from app.lab import Lab
    from app.serving_views import kv_table_html, speculation_html, traffic_html
    from core.expected import expected_step

    for model, approximate in (("gemma-3-12b", True), ("llama-3-8b", False)):
        lab = Lab(query={"model": [model]})
        r = lab.result
        assert bool(r.model.approximate) is approximate
        pages = {"traffic": traffic_html(r), "kv-table": kv_table_html(r), "speculation": speculation_html(lab.state),
                 "expected": waterfall_html(expected_step(r), r)}
        for key, html in pages.items():
            assert (f'data-readout="{key}-approximate">≈ Approximate: vision_config' in html) is approximate, key
        lab.state.tab = "Throughput vs B"
        title = lab.throughput.figure.title.text
        assert title.endswith(f"(largest batch that fits: {'≈ ' if approximate else ''}{r.max_batch:,})")


def test_the_speculation_tab_says_where_depth_stops_paying_and_why_below_e():
    """A teacher's trial: at B = 1 the speedup rose to 3.14× at k = 8 and nothing said it stops (nor that the
    workload does not fit); an engineer's: "the speedup is E" beside an MoE's 1.36× at E = 1.70."""
    from app.lab import Lab
    from app.serving_views import speculation_html

    page = speculation_html(Lab(query={"model": "llama-3-70b"}).state)
    assert ("At B = 1, this workload does not fit in memory (the memory bar): every rate here is what it would "
            "deliver if it fit; every depth here stays memory-bound, so the speedup keeps rising with k") in page
    page = speculation_html(Lab(query={"model": "llama-3-70b", "batch": "256"}).state)
    assert "Here it pays most at k = 6 (2.88×)." in page and "<td>6</td>" in page
    page = speculation_html(Lab(query={"model": "qwen3-30b-a3b", "batch": "16"}).state)
    assert "an MoE's k tokens touch more experts, whose weights it reads too" in page
    assert "does not fit" not in page and "the speedup is E" not in page
    assert "carries k tokens' activations" in speculation_html(Lab(query={"model": "llama-3-70b", "tp": "2"}).state)


def test_the_scaling_speculation_and_paging_figures_say_they_are_ceilings_and_approximate_where_they_are():
    """An engineer's trial: with a config the lab marks approximate, the Scaling charts showed no "≈", the Speculation
    table's times and tokens/s did not say they were ceilings, and the paging lines' tokens/s said neither."""
    import json
    from pathlib import Path

    from app.serving_system import paging_html
    from app.serving_views import speculation_html
    from core import from_hf_config
    from core.batching import SHAREGPT

    case = json.loads((Path(__file__).parents[1] / "field_cases" / "hybrid-linear-attention.json").read_text())
    s = Scenario()
    s.add_model(from_hf_config(case["input"]["config"], model_id="config-hybrid", name="hybrid"))
    lab = Lab(s)
    assert lab.state.result.model.approximate
    lab.state.tab = "Scaling"
    assert lab.scaling.times_fig.title.text.startswith("≈ hybrid on NVIDIA H100")
    assert "one GPU's step, its ceiling, against TP" in lab.scaling.times_fig.title.text
    assert lab.scaling.rates_fig.title.text.startswith("≈ tokens/s ceiling against TP, hybrid")
    html = speculation_html(lab.state)
    assert "<th>verify step ceiling (ms)</th><th>tokens/s ceiling</th>" in html
    assert html.count("<td>≈ ") == 2 * 8  # every row's step and tokens/s (k = 1 … 8)
    assert "tokens/s ceiling</div>" in paging_html(lab.scenario, SHAREGPT, 16)
    assert "≈ " in paging_html(lab.scenario, SHAREGPT, 16)
