"""Pins in core and the session state: many pins, names that say what moved, compare notes, undo."""

import pytest

from core import Scenario
from core.pins import (
    COMPARE_METRICS,
    MAX_PINS,
    Pin,
    compare,
    compare_metrics,
    default_pin_name,
    lever_preset,
    preset_notes,
)


def _twelve():
    """Article 004's trio for two models on two GPUs: 12 pins, all at I = 4."""
    pins = []
    for model in ("llama-3-8b", "llama-3-70b"):
        for gpu in ("h100-sxm", "h200"):
            pins += lever_preset(Scenario(model=model, gpu=gpu).levers())
    return pins


def test_twelve_pins_at_one_intensity_still_say_what_differs():
    rows = compare(_twelve())
    assert len(rows) == 12 and {r.result.arithmetic_intensity_weights for r in rows} == {4.0}
    assert len({r.pin.name for r in rows}) == 12  # names tell them apart
    first = rows[0]  # batch 4, Llama-3-8B, H100: model and GPU tie 6-6, batch departs from B = 1
    assert first.notes[0] == "B = 4: KV memory grows with B only — 4.00 GiB of cache for 4 sequences"
    assert any(n.startswith("Llama-3-8B: 15.0 GiB of weights") for n in first.notes)
    assert any(n.startswith("NVIDIA H100 SXM5 80GB: ridge 295") for n in first.notes)
    # A trio pin says what differs from the scenario it was pinned from (its model and GPU are in their own column).
    assert (first.differs_by, first.differs_from) == (("batch=4",), "the scenario it was pinned from")
    int4_70b_h200 = rows[10]
    assert int4_70b_h200.differs_by == ("weight-dtype=int4",)
    # Pins of the scenario itself still say where they depart from the other pins.
    mine = compare([Pin("a", Scenario(model="llama-3-70b").levers()), *_twelve()[:2]])[0]
    assert (mine.differs_by, mine.differs_from) == (("model=llama-3-70b",), "the other pins")
    assert any("INT4 weights: 32.9 GiB held" in n for n in int4_70b_h200.notes)
    assert all(r.notes for r in rows)


def test_default_names_say_model_gpu_and_the_lever_that_moved():
    s = Scenario(model="llama-3-8b", batch=4)
    assert default_pin_name(s.levers(), []) == "Llama-3-8B · h100-sxm · B=4"
    first = Pin("a", s.levers())
    s.weight_dtype = "int4"
    assert default_pin_name(s.levers(), [first]) == "Llama-3-8B · h100-sxm · INT4"
    same = Pin(default_pin_name(s.levers(), [first]), s.levers())
    assert default_pin_name(s.levers(), [first, same]) == "Llama-3-8B · h100-sxm · baseline"
    assert len(default_pin_name({**s.levers(), "model": "llama-3.1-405b", "gpu": "h100-pcie"}, [])) <= 40
    # Only the GPU moved since the last pin: the levers set, as the first pin names them, not "baseline" (an
    # engineer's trial pinned the same B = 4 on three GPUs: "B=4", then "baseline" twice).
    b4 = Pin("b4", Scenario(model="llama-3-8b", batch=4).levers())
    assert default_pin_name({**b4.levers, "gpu": "b200"}, [b4]) == "Llama-3-8B · b200 · B=4"
    assert default_pin_name(Scenario(gpu="b200").levers(), [Pin("d", Scenario().levers())]) == (
        "Llama-3-70B · b200 · baseline")  # every lever at its default: the baseline on that GPU


def test_a_long_model_name_is_shortened_in_a_pin_name_not_the_lever_or_the_gpu():
    """A new user's trial pinned article 004's trio for a pasted config: "INT4 weights · Qwen2ForCausalLM · h100-s"
    and "speculation k=4 · … · h10", cut at 40 characters mid-word.  The model's name gives way (the pins table
    shows it whole in its own column), with an ellipsis that says so."""
    from core.pins import pin_name

    trio = [p.name for p in lever_preset(Scenario(model="llama-3.1-405b", gpu="h100-pcie").levers())]
    # Cut between words, never within a number: an engineer's trial read "Llama-3-7…" (of Llama-3-70B) as Llama-3-7B,
    # and "Llama-3.1-40…" reads as a 40B.
    assert trio == ["batch 4 · Llama-3.1-405B · h100-pcie", "INT4 weights · Llama-3.1… · h100-pcie",
                    "speculation k=4 · Llama-3.1… · h100-pcie"]
    assert lever_preset(Scenario(model="llama-3-70b", gpu="a100-80gb").levers())[2].name == \
        "speculation k=4 · Llama-3… · a100-80gb"
    assert pin_name(["INT4 weights", "Qwen2ForCausalLM (your config)", "h100-sxm"], shorten=1) == \
        "INT4 weights · Qwen2ForCausa… · h100-sxm"
    moved = {**Scenario().levers(), "model": "llama-3.1-405b", "gpu": "h100-pcie", "batch": 4096, "context": 131072}
    assert default_pin_name(moved, []) == "Llama-3… · h100-pcie · B=4096 S=131,072"
    # Parts that leave the model too little room: the whole name is cut, and still says it was.
    assert pin_name(["x" * 50, "model", "gpu"], shorten=1) == "x" * 39 + "…"
    assert all(len(n) <= 40 for n in trio)
    # The chart's label of pins that coincide says a part they share once, whole, though one name shortened it.
    from app.roofline_view import shared_name_parts

    assert shared_name_parts(["batch 4 · Llama-3-70B · a100-80gb", "speculation k=4 · Llama-3-7… · a100-80gb"]) \
        == (["batch 4", "speculation k=4"], ["Llama-3-70B", "a100-80gb"])
    assert shared_name_parts(["a · Llama-3-8B", "b · Llama-3-70B"]) == (["a · Llama-3-8B", "b · Llama-3-70B"], [])


def test_the_state_keeps_sixteen_pins_and_undoes_changes():
    from app.state import LabState

    state = LabState(Scenario())
    for b in range(1, MAX_PINS + 1):
        assert state.add_pin(Pin(f"p{b}", Scenario(batch=b).levers()))
    assert len(state.pins) == 16 and len(state.pin_rows) == 16
    assert not state.add_pin(Pin("one too many", Scenario().levers()))
    state.set_pins(state.pins[1:])  # remove one
    state.set_pins([])  # remove all
    assert state.undo_pins() and len(state.pins) == 15
    assert state.undo_pins() and len(state.pins) == 16 and state.pins[0].name == "p1"


def test_the_trio_button_adds_to_the_pins():
    from app.lab import Lab

    lab = Lab(Scenario(), {})
    lab.pin_current()
    lab.pins.add_preset()
    assert len(lab.state.pins) == 4 and lab.state.pins[0].name == "Llama-3-70B · h100-sxm · baseline"
    lab.scenario.gpu = "h200"
    lab.pins.add_preset()  # again, on the H200
    assert len(lab.state.pins) == 7
    lab.pins.set_pins([])
    assert lab.pins.which.value is None and lab.pins.which.options == {}
    lab.pins.undo_last()
    assert len(lab.state.pins) == 7


def test_a_pin_is_chosen_for_rename_and_remove_whenever_there_are_pins():
    from app.lab import Lab

    lab = Lab(Scenario(), {"pins": '[{"name": "<b>a</b>", "batch": "4"}, {"name": "b", "spec-k": "4"}]'})
    assert lab.pins.which.value == 0 and list(lab.pins.which.options) == ["1. <b>a</b>", "2. b"]
    lab.pins.which.value = 1
    lab.pins.remove.clicks += 1  # Remove pin 2: pin 1 stays chosen
    assert [p.name for p in lab.state.pins] == ["<b>a</b>"] and lab.pins.which.value == 0


def test_compare_metrics_part_the_trio():
    rows = compare(lever_preset(Scenario(model="llama-3-8b").levers()))
    values = {m.key: [m.value(r.result) for r in rows] for m in COMPARE_METRICS}
    batch, int4, spec = range(3)
    assert values["kv"][batch] == 4 * values["kv"][int4] == 4 * values["kv"][spec]  # cache grows with B only
    assert values["weights"][int4] == values["weights"][batch] / 4
    assert values["tokens_aggregate"][batch] > values["tokens_aggregate"][spec] > values["tokens_aggregate"][int4] / 4
    assert values["tokens_per_sequence"][batch] == values["tokens_aggregate"][batch] / 4
    assert all(0 < f <= 100 for f in values["peak_fraction"])


def test_compare_view_and_the_charts_show_every_pin_under_its_own_roof():
    from app.lab import Lab

    lab = Lab(Scenario(), {})
    for gpu in ("h100-sxm", "a100-80gb"):
        lab.scenario.gpu = gpu
        lab.pins.add_preset()
    lab.state.tab = "Compare"
    lab.state.tab = "Throughput vs B"
    kv = lab.compare.sources["kv"].data["value"]
    assert kv[0] == 4 * kv[1] and len(kv) == 6  # batch 4 holds four caches, INT4 one
    assert lab.compare.x_range.factors == ["1", "2", "3", "4", "5", "6"]
    roofs = lab.roofline.pin_roofs.data
    assert len(roofs["xs"]) == 1  # a faint roof per pinned GPU but the chart's own (the A100's)
    assert round(roofs["xs"][0][1]) == 295 and roofs["gpu"] == ["NVIDIA H100 SXM5 80GB (bf16)"]
    a100_pin_y = lab.roofline.pins.data["y"][3]
    assert a100_pin_y == 2.039 * 4  # TFLOP/s: 4 FLOP/byte on the A100's 2.039 TB/s slope, not the H100's
    # 0.2 decades apart: one label, naming them (their model, shared, left to the hover: no room).
    assert lab.roofline.pin_labels.data["text"] == ["pins 1, 2, 3, 4, 5, 6: batch 4 · h100-sxm, INT4 weights · h…"]
    assert lab.throughput.pins.data["batch"] == [4, 1, 1, 4, 1, 1]


def test_pins_a_few_pixels_apart_share_one_label():
    from app.roofline_view import pin_groups

    # The trio on an H100 (13.4 TFLOP/s at I = 4) and on an H200 (19.2): 0.16 decades apart, one label.
    groups = pin_groups([4, 4, 4, 4, 4, 4, 56], [13.4, 13.4, 13.4, 19.2, 19.2, 19.2, 187], range(1, 8))
    assert groups == {"x": [4.0, 56.0], "y": [13.4, 187.0], "text": ["pins 1, 2, 3, 4, 5, 6", "pin 7"],
                      "short": ["pins 1, 2, 3, 4, 5, 6", "pin 7"], "shown": ["pins 1, 2, 3, 4, 5, 6", "pin 7"]}
    # Batch 1 and batch 4 on one GPU are 0.6 decades apart on both axes: two labels.
    assert pin_groups([1, 4], [3.35, 13.4], [1, 2])["text"] == ["pin 1", "pin 2"]


def _awq_scenario(**levers):
    from inputs import QWEN3_MOE_AWQ

    from core.config_reader import from_hf_config

    s = Scenario(**levers)
    s.add_model(from_hf_config(QWEN3_MOE_AWQ, model_id="qwen3-moe-awq", name="Qwen3 MoE AWQ"))
    return s


def test_the_trio_starts_from_the_scenario_a_checkpoint_as_stored_stays_as_stored():
    from core.units import GiB

    s = _awq_scenario()
    assert s.weight_dtype == "stored"  # a quantised checkpoint opens as stored
    rows = compare(lever_preset(s.levers(), s.catalogue), s.catalogue)
    assert [r.result.weight_dtype for r in rows] == ["stored", "int4", "stored"]
    # Held as stored: 16-bit embeddings, LM head, norms and router (1,270,247,424 bytes) + 4-bit AWQ attention and
    # experts ((905,969,664 + 28,991,029,248 = 29,896,998,912 params) × 0.51953125 = 15,532,425,216 bytes) =
    # 16,802,672,640 bytes = 15.65 GiB; INT4 everywhere: 30,532,122,624 × 0.51953125 = 15,862,391,832 = 14.77 GiB
    # (not BF16's 30,532,122,624 × 2 = 56.87 GiB).
    assert [round(r.result.weight_bytes_held / GiB, 2) for r in rows] == [15.65, 14.77, 15.65]
    assert [(r.differs_by, r.differs_from) for r in rows] == [
        (("batch=4",), "the scenario it was pinned from"), (("weight-dtype=int4",), "the scenario it was pinned from"),
        (("spec-k=4",), "the scenario it was pinned from")]
    # From B = 8, k = 2 in prefill, every lever that moved is named: the INT4 pin is at B = 1, k = 1, decoding.
    s.param.update(batch=8, spec_k=2, phase="prefill")
    rows = compare(lever_preset(s.levers(), s.catalogue), s.catalogue)
    assert [r.differs_by for r in rows] == [("batch=4", "spec-k=1", "phase=decode"),
                                            ("weight-dtype=int4", "batch=1", "spec-k=1", "phase=decode"),
                                            ("batch=1", "spec-k=4", "phase=decode")]


def test_an_moe_trio_says_why_batch_4_and_k_4_part_from_int4():
    # Qwen3-30B-A3B-style, E = 128, k_e = 8.  Four tokens touch 128 × (1 − (15/16)^4) = 29.12 experts per layer, one
    # token 8.  As stored, B = 4 reads 5,167,832,640 bytes (tests/unit/test_scenario.py's hand count) for
    # 2 × 3,353,032,704 × 4 FLOP: I = 5.191; INT4 at B = 1 reads N_active × 0.51953125 bytes: I = 2 / 0.51953125 =
    # 3.850.  From BF16, B = 4 reads 8,137,242,624 × 2 bytes: I = 8 × 3,353,032,704 / 16,274,485,248 = 1.648.
    s = _awq_scenario()
    notes = preset_notes(compare(lever_preset(s.levers(), s.catalogue), s.catalogue))
    assert notes == [
        "Qwen3 MoE AWQ is a mixture of experts: batch 4 and k = 4 each run 4 tokens per step, which touch 29.1 of "
        "its 128 experts per MoE layer, against 8 at batch 1 (the INT4 pin): they read more weights per FLOP, so "
        "their intensity (5.191 FLOP/byte) differs from INT4's (3.85 FLOP/byte).",
        "The batch-4 and k = 4 pins keep the weights of the scenario they were pinned from, as stored (awq 4-bit); "
        "the three coincide only from BF16 weights."]
    s.weight_dtype = "bf16"
    notes = preset_notes(compare(lever_preset(s.levers(), s.catalogue), s.catalogue))
    assert len(notes) == 1 and "(1.648 FLOP/byte) differs from INT4's (3.85 FLOP/byte), where a dense" in notes[0]
    # A dense model's trio from BF16 coincides at I = 4: nothing to add.
    assert preset_notes(compare(lever_preset(Scenario(model="llama-3-8b").levers()))) == []
    # The trios of one model on two GPUs touch the same experts: said once (a trial read it twice, word for word).
    pins = [*lever_preset(Scenario(model="mixtral-8x7b").levers()),
            *lever_preset(Scenario(model="mixtral-8x7b", gpu="h200").levers())]
    notes = preset_notes(compare(pins))
    assert len(notes) == 1 and notes[0].startswith("Mixtral-8x7B is a mixture of experts")


def test_the_compare_key_and_the_pins_message_show_the_trio_note():
    from app.lab import Lab

    lab = Lab(_awq_scenario(), {})
    lab.pins.add_preset()
    assert [r.result.weight_dtype for r in lab.state.pin_rows] == ["stored", "int4", "stored"]
    assert 'data-readout="pins-trio"' in lab.pins.message.text
    assert "touch 29.1 of its 128 experts per MoE layer" in lab.pins.message.text
    assert lab.pin_row.objects == [lab.pins.pin_button, lab.pins.message.pane]  # under the tabs, by the button
    lab.state.tab = "Compare"
    key = lab.compare.key.object
    assert "differs from the scenario it was pinned from (batch=1) by: batch=4" in key
    assert 'data-readout="compare-trio"' in key and "against 8 at batch 1 (the INT4 pin)" in key
    # Compare says it: the message under the chart goes, or the paragraph shows twice (a new user's trial).
    assert lab.pins.message.text == "" and not lab.pins.message.visible
    # A renamed trio pin still says what differs from the scenario it was pinned from.
    lab.pins.which.value = 0
    lab.pins.new_name.value_input = "four sequences"
    lab.pins.rename.clicks += 1
    assert lab.state.pin_rows[0].pin.name == "four sequences"
    assert lab.state.pin_rows[0].differs_from == "the scenario it was pinned from"


def test_the_compare_key_names_the_pin_the_others_differ_from():
    """A helper's trial: the baseline of a pin and the trio read "differs by: the most common value of every lever
    that varies", as if that were a difference."""
    from app.compare_view import compare_key_html

    base = Scenario(model="llama-3-8b")
    pins = [Pin("base", base.levers()), Pin("b4", base.clone(batch=4).levers()),
            Pin("b8", base.clone(batch=8).levers()), Pin("base again", base.levers())]
    key = compare_key_html(compare(pins))
    rows = key.split("<tr data-compare-pin=")[1:]
    assert "nothing: the others differ from it" in rows[0] and "nothing: the others differ from it" in rows[3]
    assert "differs by: batch=4" in rows[1] and "most common value of every lever that varies" not in key


def _moe_trio_lab():
    """Qwen3-30B-A3B's trio on a B200 (found by a trial on an MoE): batch 4 reaches 1,641 tokens/s (410.3 per
    sequence), and INT4's step waits on its kernel launches (2.13 ms of them against 0.31 ms of memory)."""
    from app.lab import Lab

    lab = Lab(Scenario(model="qwen3-30b-a3b", gpu="b200"), {})
    lab.pins.add_preset()
    lab.state.tab = "Compare"  # the tab's view is made when it first opens
    return lab


def test_compare_and_the_pins_table_write_a_pins_tokens_per_s_alike():
    # Found by a trial: Compare's aggregate read "1,080" (three significant digits) where the Pins table said
    # "1,076"; both are core.units.fmt_rate's now (whole numbers from 10 up).
    import re

    from core.units import fmt_rate

    lab = _moe_trio_lab()
    batch4 = lab.state.pin_rows[0].result
    assert batch4.batch == 4 and batch4.tokens_per_s_with_kv > 1000
    total, one = fmt_rate(batch4.tokens_per_s_with_kv), fmt_rate(batch4.tokens_per_s_with_kv / 4)
    assert total == "1,641" and one == "410"
    assert lab.compare.sources["tokens_aggregate"].data["text"][0] == total
    assert lab.compare.sources["tokens_aggregate"].data["hover"][0] == f"{total} tokens/s"
    assert lab.compare.sources["tokens_per_sequence"].data["text"][0] == one
    cells = re.findall(r"<td>([^<]*)<", lab.pins.table.object.split('<tr data-pin="1">')[1].split("</tr>")[0])
    assert total in cells and "1,640" not in cells


def test_pins_and_compare_say_what_bounds_each_pin():
    # Found by a trial: an MoE's INT4 pin waits on 2.13 ms of kernel launches against 0.31 ms of memory, and neither
    # tab said so, so nothing told why INT4 was the slowest of the trio.
    lab = _moe_trio_lab()
    bounds = [row.result.bound for row in lab.state.pin_rows]
    assert bounds == ["memory", "overhead", "memory"]
    int4 = lab.state.pin_rows[1].result
    assert (round(int4.launch_overhead_s * 1e3, 2), round(int4.gpu_time_s * 1e3, 2)) == (2.13, 0.31)
    table = lab.pins.table.object
    assert ">bound</abbr>" in table
    cells = [table.split(f'<tr data-pin="{i}">')[1].split("</tr>")[0] for i in (1, 2, 3)]
    assert ['<span class="unit bound"' in c for c in cells] == [True] * 3
    assert ">memory</span>" in cells[0] and ">overhead</span>" in cells[1] and ">memory</span>" in cells[2]
    assert "launch overhead: 2.128 ms of kernel launches &gt; 0.3102 ms of GPU time" in cells[1]  # its tooltip
    key = lab.compare.key.object.split("<tr data-compare-pin=")[1:]
    assert ">bound</th>" in lab.compare.key.object
    assert "launch overhead: 2.128 ms of kernel launches &gt; 0.3102 ms of GPU time" in key[1]
    assert "memory-bound (" in key[0] and "memory-bound (" in key[2]


def test_the_pins_csv_names_what_bounds_each_pin_with_the_tables_word():
    """Issue 30: the Pins table said under each tokens/s what bounds the pin (an MoE's INT4 pin: its kernel
    launches) and the pins CSV did not; its ``bound`` column is the table's word, from one function."""
    import csv
    import io

    from core.export import PIN_COLUMNS, pins_csv
    from core.pins import bound_word

    lab = _moe_trio_lab()
    rows = lab.state.pin_rows
    table = list(csv.DictReader(io.StringIO(pins_csv(rows))))
    assert PIN_COLUMNS.index("bound") == PIN_COLUMNS.index("fits_in_memory") + 1
    assert [t["bound"] for t in table] == ["memory", "overhead", "memory"]
    assert [t["bound"] for t in table] == [bound_word(row.result) for row in rows]
    cells = [lab.pins.table.object.split(f'<tr data-pin="{i}">')[1].split("</tr>")[0] for i in (1, 2, 3)]
    assert [c.split('<span class="unit bound"')[1].split(">")[1].split("<")[0] for c in cells] == \
        [t["bound"] for t in table]
    compute = compare([Pin("prefill", Scenario(model="llama-3-8b", phase="prefill").levers())])
    assert list(csv.DictReader(io.StringIO(pins_csv(compute))))[0]["bound"] == "compute"


def _visible_keys(view) -> list[str]:
    return [item.label.value for item in view.legend.items if item.visible]


def test_the_faint_roof_is_keyed_only_while_one_is_seen_apart_from_the_charts_own():
    # Found by a trial: with every pin on the current GPU (their roofs under its own: nothing faint to see) the
    # legend still listed "roof of a pinned GPU (faint)".
    from app.lab import Lab

    lab = Lab(Scenario(model="qwen3-30b-a3b"), {})
    lab.pins.add_preset()
    assert {(row.result.gpu.id, row.result.compute_roof) for row in lab.state.pin_rows} == {("h100-sxm", "bf16")}
    assert "roof of a pinned GPU (faint)" not in _visible_keys(lab.roofline)
    lab.scenario.gpu = "a100-80gb"  # the pins' H100 roof now lies apart from the chart's own
    assert "roof of a pinned GPU (faint)" in _visible_keys(lab.roofline)
    lab.scenario.gpu = "h100-sxm"
    assert "roof of a pinned GPU (faint)" not in _visible_keys(lab.roofline)
    lab.scenario.weight_dtype = "fp8"  # the same GPU's FP8 roof: the pins' BF16 roof is below it, seen
    assert lab.result.compute_roof == "fp8"
    assert "roof of a pinned GPU (faint)" in _visible_keys(lab.roofline)


def test_a_pinned_roof_is_drawn_only_apart_from_the_charts_own():
    """Issue 30: the served roofline drew a faint copy of the chart's own roof for pins on the current GPU and
    compute roof (under the thick one, and in a saved SVG); now a pinned GPU's roof is drawn only while it differs
    from the chart's, and drawn again when the chart's GPU or compute roof changes."""
    from app.lab import Lab

    lab = Lab(Scenario(model="llama-3-8b"), {})
    lab.pins.add_preset()  # three pins on the H100, BF16: the chart's own roof
    lab.scenario.gpu = "a100-80gb"
    lab.pins.add_preset()  # three on the A100
    view = lab.roofline
    assert view.pin_roofs.data["gpu"] == ["NVIDIA H100 SXM5 80GB (bf16)"]  # the A100's is the chart's own
    assert [round(x) for x in view.pin_roofs.data["xs"][0][1:2]] == [295]
    lab.scenario.gpu = "h100-sxm"
    assert view.pin_roofs.data["gpu"] == ["NVIDIA A100 SXM4 80GB (bf16)"]
    assert round(view.pin_roofs.data["xs"][0][1]) == 153
    lab.scenario.gpu = "h200"  # apart from both
    assert view.pin_roofs.data["gpu"] == ["NVIDIA H100 SXM5 80GB (bf16)", "NVIDIA A100 SXM4 80GB (bf16)"]
    lab.state.set_pins(lab.state.pins[:3])  # only the H100's pins, on an H100 chart: nothing faint
    lab.scenario.gpu = "h100-sxm"
    assert view.pin_roofs.data["xs"] == [] and "roof of a pinned GPU (faint)" not in _visible_keys(view)


def test_the_dotted_overhead_ceiling_is_keyed_as_the_workloads_own_at_its_b():
    # Found by a trial: the dotted ceiling is the current B's, while ladder points at other B sit above it.
    from app.lab import Lab

    lab = Lab(Scenario(model="llama-3-8b", batch=12, spec_k=2), {})
    keys = _visible_keys(lab.roofline)
    assert "launch overhead ceiling at your B" in keys
    assert "overhead ceiling (kernel launches)" not in keys
    ceiling = lab.roofline.overhead.data["y"][0]
    assert max(lab.roofline.ladder.data["y"]) > ceiling  # rungs at other B above it: it is not theirs


def _what_differs(lab) -> list[str]:
    """The Compare key's "what differs" cells and its trio notes, as text."""
    import re
    from html import unescape

    lab.state.tab = "Compare"
    key = lab.compare.key.object
    cells = [row.split('<td class="k">')[3].split("</td>")[0] for row in key.split("<tr data-compare-pin=")[1:]]
    notes = re.findall(r'data-readout="compare-trio">([^<]*)<', key)
    return [unescape(t) for t in [*cells, *notes]]


@pytest.mark.parametrize("model", ["llama-3-8b", "qwen3-30b-a3b"])
def test_what_a_pin_differs_by_reads_the_same_live_and_in_its_reopened_link(model):
    """Issue 30: after the levers moved on from a trio, the live session said "differs from the scenario it was
    pinned from by: batch=4" and the reopened link "differs by: batch=4" (the link did not carry what a pin was
    pinned from), and an MoE trio's note on Compare was lost.  One function (core.pins.differs_text) writes it from
    what the link now carries, and names the origin's own values (the scenario shown has moved on)."""
    from app.lab import Lab
    from core.pins import differs_text

    live = Lab(Scenario(model=model), {})
    live.pins.add_preset()
    live.pins.pin_current()  # a pin of the scenario itself
    live.scenario.param.update(batch=8, weight_dtype="int8")  # the scenario shown moves on
    reopened = Lab(query=live.link.query())
    assert (reopened.scenario.batch, reopened.scenario.weight_dtype) == (8, "int8")
    texts = _what_differs(live)
    assert texts == _what_differs(reopened)
    assert texts[:4] == ["differs from the scenario it was pinned from (batch=1) by: batch=4",
                         "differs from the scenario it was pinned from (weight-dtype=bf16) by: weight-dtype=int4",
                         "differs from the scenario it was pinned from (spec-k=1) by: spec-k=4",
                         "nothing: the others differ from it (it has the most common value of every lever)"]
    assert texts[:4] == [differs_text(row) for row in reopened.state.pin_rows]
    assert [p.origin for p in reopened.state.pins] == [p.origin for p in live.state.pins]
    assert [p.moves for p in reopened.state.pins] == ["batch", "weight_dtype", "spec_k", None]
    if model == "qwen3-30b-a3b":
        assert any(t.startswith("Qwen3-30B-A3B is a mixture of experts") for t in texts[4:]), texts


def test_a_links_malformed_pin_origin_is_ignored_with_a_notice():
    from core.permalink import from_query

    state = from_query({"pins": '[{"name": "a", "batch": "4", "from": {"batch": "x"}, "moves": "batch"},'
                                ' {"name": "b", "batch": "4", "from": [1]}]'})
    assert [(p.name, p.levers["batch"], p.origin, p.moves) for p in state.pins] == [("a", 4, None, None),
                                                                                    ("b", 4, None, None)]
    assert len(state.notices) == 2 and state.notices[1] == "pin 'b': ignored from: not an object"
    assert state.notices[0].startswith("pin 'a': ignored from: ")


def test_compares_rates_of_a_pin_that_does_not_fit_say_if_it_fit():
    """A teacher's trial: Compare's top rows gave batch 4's and k = 4's tokens/s (22, 59) with no mark; only the
    memory row, five charts below, said neither fits on one H100."""
    from core.units import fmt_rate

    rows = {m.key: m for m in COMPARE_METRICS}
    unfit = Scenario(model="llama-3-70b", batch=4).evaluate()
    fits = Scenario(model="llama-3-8b", batch=4).evaluate()
    assert not unfit.fits and fits.fits
    rate = fmt_rate(unfit.tokens_per_s_per_sequence)
    assert rows["tokens_per_sequence"].text(unfit) == f"{rate} tokens/s (if it fit)"
    assert rows["tpot"].hover(unfit).endswith(" ms (if it fit)")
    assert rows["tokens_per_sequence"].text(fits) == fmt_rate(fits.tokens_per_s_per_sequence)  # the title's unit
    assert rows["memory"].text(unfit).endswith(" % does not fit") and rows["memory"].hover(fits).endswith(" % (fits)")
    assert rows["weights"].text(unfit) == rows["weights"].fmt(rows["weights"].value(unfit))  # held, fit or not


def test_a_pin_named_after_a_split_says_which_lever_each_number_is():
    """A trial: DeepSeek-V3 at B = 4, TP = 8, PP = 4 was pinned as "DeepSeek-V3 · h100-sxm · B=4 8"."""
    from core.pins import default_pin_name, lever_text

    s = Scenario(model="deepseek-v3", tp=8, pp=4, batch=4)
    assert default_pin_name(s.levers(), [], s.catalogue) == "DeepSeek-V3 · h100-sxm · B=4 TP=8"
    assert [lever_text(n, v) for n, v in (("pp", 4), ("ep", 2), ("replicas", 3), ("cuda_graphs", True),
                                          ("gpu_hour_price", 2.5))] == \
        ["PP=4", "EP=2", "replicas=3", "CUDA graphs", "$2.5/GPU-h"]


def test_each_change_on_the_pins_tab_is_said_to_a_screen_reader():
    """A keyboard trial: rename, remove, undo and the trio changed only a redrawn table. Each sets the Pins tab's
    status (data-announce, a new sequence each time), which app/a11y.js reads out; a user's name is escaped."""
    import re

    from app.lab import Lab

    lab = Lab(Scenario(), {"pins": '[{"name": "a", "batch": "4"}]'})
    pins = lab.pins

    def said():
        found = re.search(r'data-announce="([^"]*)" data-announce-seq="(\d+)"', pins._tab()["status"].object)
        return found.groups() if found else None

    pins.preset.clicks += 1
    text, first = said()
    assert text.startswith("Added 3 pins: “") and text.endswith(f". 4 of {MAX_PINS} pins.")
    pins.which.value = 1
    pins.new_name.value_input = "<i>x</i>"
    pins.rename.clicks += 1
    assert said()[0] == "Renamed pin 2 “&lt;i&gt;x&lt;/i&gt;”."
    pins.which.value = 0
    pins.remove.clicks += 1
    assert said()[0] == "Removed pin 1 “a”: 3 pins left."
    pins.clear.clicks += 1
    assert said()[0] == "Removed every pin (3); Undo restores them."
    pins.undo.clicks += 1
    text, last = said()
    assert text == "Restored the pins before the last change: 3 pins." and int(last) == int(first) + 4
    pins.pin_current()
    assert said()[0] == f"Pinned “{pins.pins[-1].name}”: 4 of {MAX_PINS} pins."


def test_the_scenario_pinned_after_its_trio_is_named_its_baseline():
    """A teacher's trial pinned the trio, then the scenario: it was named "k=1" (what moved since the k = 4 pin) and
    read as another speculation depth beside "speculation k…"."""
    s = Scenario(model="llama-3-70b")
    trio = lever_preset(s.levers(), s.catalogue)
    assert default_pin_name(s.levers(), trio) == "Llama-3-70B · h100-sxm · baseline"
    s.batch = 8
    assert default_pin_name(s.levers(), trio) == "Llama-3-70B · h100-sxm · B=8"
    # A trio pressed at B = 8 moves B = 1, k = 1: the B = 8 scenario pinned after it is not its baseline (a trial).
    at_8 = lever_preset(s.levers(), s.catalogue)
    assert default_pin_name(s.levers(), at_8) == "Llama-3-70B · h100-sxm · B=8"
    s.batch = 1
    assert default_pin_name(s.levers(), at_8) == "Llama-3-70B · h100-sxm · baseline"


def test_a_name_typed_or_linked_is_cut_by_one_rule_between_whole_escapes():
    """Review: the link and the rename each cut a name at 40 characters after writing a bidi override as its escape,
    so a name could end mid-escape ("… \\u20"), and the rename's 40 was a literal of its own."""
    import json

    from app.lab import Lab
    from core.permalink import from_query
    from core.pins import MAX_PIN_NAME

    name = "x" * 36 + "\u202e" + "tail"  # the escape "\u202e" (6 characters) starts at 37: it does not fit whole
    link = from_query({"pins": json.dumps([{"name": name, "batch": "4"}])})
    assert [p.name for p in link.pins] == ["x" * 36 + "…"]
    assert link.notices == [f"pin 1: its name was cut to {MAX_PIN_NAME} characters (of 46)"]
    lab = Lab(Scenario(), {"pins": '[{"name": "a", "batch": "4"}]'})
    lab.pins.which.value = 0
    lab.pins.new_name.value_input = name
    lab.pins.rename.clicks += 1
    assert lab.pins.pins[0].name == "x" * 36 + "…"
    lab.pins.new_name.value_input = "\u202e" * 7  # 42 characters shown: six overrides whole, the seventh left out
    lab.pins.rename.clicks += 1
    assert lab.pins.pins[0].name == "\\u202e" * 6 + "…"
    lab.pins.new_name.value_input = "My test of Llama-3.1-405B quantised to four bits"
    lab.pins.rename.clicks += 1
    assert lab.pins.pins[0].name == "My test of Llama-3.1-405B quantised to…"  # a verifying trial: "… to f"


def test_an_moes_trio_notes_each_pin_of_the_lever_it_moved():
    """An engineer's trial on an MoE: batch 4 and k = 4 share a point apart from INT4's (more experts touched), and
    on their tie each was told of the other's lever: "k = 1: no speculation" on the batch-4 pin, "B = 1: KV memory
    grows with B only" on the k = 4 pin."""
    s = Scenario(model="mixtral-8x7b")
    rows = compare(lever_preset(s.levers(), s.catalogue), s.catalogue)
    assert [[note.split(":")[0] for note in row.notes] for row in rows] == [["B = 4"], [], ["k = 4"]]
    # Pins of scenarios (no trio) still name every pin's value on a tie.
    two = compare([Pin("a", Scenario(batch=4).levers()), Pin("b", Scenario(spec_k=4).levers())])
    assert [len(row.notes) for row in two] == [2, 2]


def test_compare_gives_pins_of_different_sizes_a_rate_per_gpu():
    """A hardware engineer's trial: 4 × H100 at TP = 4 showed 2,573 tokens/s above one B200's 1,636 with no row per
    GPU, and read as "H100 beats B200"; the KV row said "(the batch)" over a figure per GPU."""
    from app.lab import Lab

    lab = Lab(query={"pins": '[{"name": "h", "gpu": "h100-sxm", "batch": "64", "tp": "4"}, '
                             '{"name": "b", "gpu": "b200", "batch": "64"}]'})
    lab.state.tab = "Compare"
    h100, b200 = (Scenario(model="llama-3-70b", gpu=gpu, batch=64, tp=tp).evaluate()
                  for gpu, tp in (("h100-sxm", 4), ("b200", 1)))
    per_gpu = lab.compare.sources["tokens_per_gpu"].data["value"]
    assert list(per_gpu) == pytest.approx([h100.output_tokens_per_s_aggregate / 4, b200.output_tokens_per_s_aggregate])
    assert per_gpu[1] > per_gpu[0] and h100.tokens_per_s_with_kv > b200.tokens_per_s_with_kv
    labels = {m.key: m.label for m in COMPARE_METRICS}
    assert labels["kv"] == "KV cache of the batch, held per GPU" and labels["weights"] == "weights held per GPU"


def test_a_lever_the_result_has_no_field_of_is_said_as_the_pin_set_it():
    """A serving engineer's trial: two trios of Qwen3-30B-A3B, pressed with CUDA graphs off and on, read "CUDA
    graphs: no CUDA graphs" under every pin, the graphs-on INT4 pin at 1,350 tokens/s beside the other's 470 (the
    note read a field the result does not have); the Pins table's levers never said graphs."""
    from app.pins_view import pins_table_html
    from core import Scenario

    s = Scenario(model="qwen3-30b-a3b")
    off = lever_preset(s.levers(), s.catalogue)
    on = lever_preset(s.clone(cuda_graphs=True).levers(), s.catalogue)
    rows = compare(off + on, s.catalogue)
    int4_off, int4_on = rows[1], rows[4]
    assert round(int4_off.result.tokens_per_s_with_kv) == 470 and round(int4_on.result.tokens_per_s_with_kv) == 1350
    assert "no CUDA graphs: 2.128 ms of kernel launches a step, launch overhead: 2.128 ms of kernel launches > " \
           "0.7408 ms of GPU time" in int4_off.notes
    assert "CUDA graphs: 0.536 ms of kernel launches a step, memory-bound (0.7408 ms of memory)" in int4_on.notes
    html = pins_table_html(rows)
    assert html.count(", CUDA graphs</td>") == 3
    from core.export import pin_records

    assert [rec["cuda_graphs"] for rec in pin_records(rows)] == [False] * 3 + [True] * 3


def test_a_ceiling_at_the_engines_launches_is_said_once_in_compares_hover():
    """The bar's label says "engine's launches"; its hover says the whole of it, once (as for "extrapolated")."""
    s = Scenario(model="qwen3-30b-a3b", weight_dtype="int4", context=2048)
    rows = compare([Pin("a", s.levers())], s.catalogue)
    metric = next(m for m in compare_metrics("vLLM") if m.key == "expected_tokens")
    assert metric.text(rows[0].result) == "638 (35.75 % of 1,784; extrapolated; engine's launches)"
    hover = metric.hover(rows[0].result)
    assert "engine's launches" not in hover and hover.count("launched as vLLM launches them") == 1
    assert "at the scenario's CUDA-graphs lever (off) its ceiling is 2.128 ms per step, 470" in hover
