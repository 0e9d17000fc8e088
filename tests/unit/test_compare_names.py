"""Compare and pins (issue 30): every small multiple names its pins, a row says what fits, a CSV of the rows,
and coinciding pins on the roofline are named in their one label."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from app.compare_view import pin_axis_labels
from app.exports_view import build_exports
from app.lab import Lab
from app.roofline_view import pin_groups
from core.export import PIN_COLUMNS, pins_csv
from core.units import GiB

TRIO_NAMES = ["batch 4 · Llama-3-70B · h100-sxm", "INT4 weights · Llama-3-70B · h100-sxm",
              "speculation k=4 · Llama-3-70B · h100-sxm"]


@pytest.fixture(scope="module")
def trio():
    lab = Lab(query={})  # Llama-3-70B, BF16, H100 SXM5 (80 GiB read as built), 8k context, 3 GiB reserve
    lab.pins.add_preset()
    lab.state.tab = "Compare"
    return lab


def test_every_row_names_its_pins_on_its_own_axis(trio):
    compare = trio.compare
    assert [p.name for p in trio.state.pins] == TRIO_NAMES
    assert all(fig.xaxis[0].visible and fig.xaxis[0].formatter is compare.pin_ticks for fig in compare.figures)
    # The model and GPU every name holds are left to the key and the hover.
    assert compare.pin_ticks.args["labels"] == ["1: batch 4", "2: INT4 weights", "3: speculation k=4"]
    # Six pins share about 72 characters: 8 of each name ("…" marking the cut); nine or more, their numbers.
    six = pin_axis_labels([f"{n} · Llama-3-70B · {gpu}" for gpu in ("h100-sxm", "a100-80gb")
                           for n in ("batch 4", "INT4 weights", "speculation k=4")])
    assert six == ["1: batch 4…", "2: INT4 we…", "3: specula…", "4: batch 4…", "5: INT4 we…", "6: specula…"]
    assert pin_axis_labels(["abc"] * 8)[7] == "8: abc" and pin_axis_labels(["abc"] * 9)[8] == "9"


def test_the_grid_names_its_saved_images_after_its_pins(trio):
    # The grid has no title: its tags name what it compares, each pin's own part then what all share, once (a new
    # user's images of two trios were both "compare.svg"; app/image_export.py SAVE_IMAGE_JS reads the tag).
    assert trio.compare.grid.tags == ["batch 4 vs INT4 weights vs speculation k=4 · Llama-3-70B · h100-sxm"]


def test_the_memory_row_says_which_pins_fit_one_gpu(trio):
    memory = trio.compare.sources["memory"].data
    # (weights + KV + reserve) / 80 GiB: BF16 131.42 + 4 × 2.5 + 3 = 144.42 GiB; INT4 32.85 + 2.5 + 3 = 38.35 GiB;
    # k = 4 131.42 + 2.5 + 3 = 136.92 GiB (2.5 GiB = 8,192 tokens × 320 KiB).
    gib = [144.4165, 38.3541, 136.9165]
    assert memory["value"] == [pytest.approx(100 * g / 80, abs=1e-3) for g in gib]
    assert memory["text"] == ["181 % does not fit", "47.9 % fits", "171 % does not fit"]
    assert memory["hover"][1] == "47.9 % (fits)"
    assert [r.result.fits for r in trio.state.pin_rows] == [False, True, False]


def test_the_compare_csv_has_per_sequence_tokens_and_time_per_token_in_si(trio):
    rows = list(csv.DictReader(io.StringIO(pins_csv(trio.state.pin_rows))))
    assert [r["pin"] for r in rows] == ["1", "2", "3"] and rows[0]["name"] == TRIO_NAMES[0]
    batch4 = rows[0]
    # Batch 4: the step's tokens/s over B sequences; one token per sequence per step, so time per token = 1 / that.
    assert float(batch4["tokens_per_s_per_sequence"]) == pytest.approx(float(batch4["tokens_per_s_with_kv"]) / 4)
    assert float(batch4["time_per_output_token_s"]) == pytest.approx(1 / float(batch4["tokens_per_s_per_sequence"]))
    assert float(batch4["time_per_output_token_s"]) == pytest.approx(0.04533, abs=1e-5)  # 45.3 ms, as the chart
    assert float(batch4["kv_cache_bytes"]) == 10 * GiB and float(batch4["capacity_bytes"]) == 80 * GiB
    assert [r["fits_in_memory"] for r in rows] == ["False", "True", "False"]
    assert trio.compare.download.filename == "roofline-compare.csv"


def _downloaded(button) -> list[dict]:
    return list(csv.DictReader(io.StringIO(button.callback().getvalue())))


def test_the_export_tabs_pins_csv_and_the_compare_csv_agree(trio):
    """Issue 30: the Export tab's "Pins (CSV)" lacked the per-sequence tokens/s and time per token the Compare tab's
    "These rows (CSV…)" had; both are now the one file, from one column list."""
    exports = build_exports(trio.state)
    pins = next(w for w in exports.select() if "download-pins" in (getattr(w, "css_classes", None) or []))
    from_export, from_compare = _downloaded(pins), _downloaded(trio.compare.download)
    assert list(from_export[0]) == list(from_compare[0]) == list(PIN_COLUMNS)
    assert len(set(PIN_COLUMNS)) == len(PIN_COLUMNS)  # no column named twice
    assert from_export == from_compare
    # The trio's per-sequence rates and times per token, in the Export tab's file: B = 4 shares the step's
    # 88.2 tokens/s four ways (45.3 ms a token); INT4 and k = 4 serve one sequence.
    assert [r["name"] for r in from_export] == TRIO_NAMES
    per_sequence = [float(r["tokens_per_s_per_sequence"]) for r in from_export]
    tpot = [float(r["time_per_output_token_s"]) for r in from_export]
    assert tpot[0] == pytest.approx(0.04533, abs=1e-5)
    assert per_sequence == pytest.approx([1 / t for t in tpot])
    assert per_sequence[0] == pytest.approx(float(from_export[0]["tokens_per_s_with_kv"]) / 4)
    assert [r["batch"] for r in from_export] == ["4", "1", "1"]
    assert [r["spec_k"] for r in from_export] == ["1", "1", "4"]
    assert [r["bound"] for r in from_export] == ["memory", "memory", "memory"]


def test_a_pin_name_a_spreadsheet_would_run_is_text_in_the_pins_csv():
    lab = Lab(query={"pins": '[{"name": "=HYPERLINK(1)", "batch": "4"}, {"name": "＋1", "batch": "8"}]'})
    rows = list(csv.DictReader(io.StringIO(pins_csv(lab.state.pin_rows))))
    assert [r["name"] for r in rows] == ["'=HYPERLINK(1)", "'＋1"]


def test_coinciding_pins_share_one_label_that_names_them():
    groups = pin_groups([4, 4, 4, 56], [13.4, 13.4, 13.4, 187], [1, 2, 3, 4], [*TRIO_NAMES, "mine"])
    # The parts every name shares (model, GPU) said once where there is room, else left to the hover.
    assert groups["text"] == ["pins 1, 2, 3: batch 4, INT4 weights, speculation k=4", "pin 4: mine"]
    two = pin_groups([4, 4], [13.4, 13.4], [1, 2], ["batch 4 · Llama-3-8B · h100", "INT4 · Llama-3-8B · h100"])
    assert two["text"] == ["pins 1, 2: batch 4, INT4 (Llama-3-8B · h100)"]
    long = pin_groups([4, 4], [13.4, 13.4], [1, 2], ["a very long pin name indeed", "another very long one here"])
    assert long["text"] == ["pins 1, 2: a very long pin n…, another very long…"]


def test_the_roofline_labels_the_trio_by_name(trio):
    data = trio.roofline.pin_labels.data
    assert data["text"] == data["shown"] == ["pins 1, 2, 3: batch 4, INT4 weights, speculation k=4"]
    assert data["short"] == ["pins 1, 2, 3"]  # where a phone's chart has no room for the names
    assert trio.roofline.pin_label_set.text == "shown"  # drawn: the browser's layout picks which


def test_an_empty_compare_tab_says_where_its_buttons_are():
    # A trial: the empty tab told the class to press "Pin batch 4 vs INT4 vs k = 4", which is on the Pins tab.
    lab = Lab(query={})
    lab.state.tab = "Compare"
    text = lab.compare.empty.object
    assert "<b>Pin this scenario</b>, under the tabs" in text
    assert "<b>Pin batch 4 vs INT4 vs k = 4</b> on the <b>Pins</b> tab" in text
    # In present mode the pin button sits beside "Jump to step", above the tour's card, not under the tabs.
    lab.state.present = True
    assert "<b>Pin this scenario</b>, beside <b>Jump to step</b>" in lab.compare.empty.object
    assert Lab(query={"present": ["true"], "tab": ["Compare"]}).compare.empty.object == lab.compare.empty.object
    lab.state.present = False
    assert lab.compare.empty.object == text


def test_an_empty_compare_tab_builds_no_chart():
    # Issue 31: the tab built its eight small multiples with no pin to show (~0.4 s of the shared event loop); the
    # figures come with the first pin.
    from bokeh.document import Document
    from bokeh.models import Plot

    lab = Lab(query={})
    lab.state.tab = "Compare"
    plots = lambda: [m for m in lab.compare.layout.get_root(Document()).references() if isinstance(m, Plot)]  # noqa: E731
    assert plots() == [] and "No pins to compare yet" in lab.compare.empty.object
    lab.pins.add_preset()
    assert len(plots()) == 11 and lab.compare.chart.visible  # one per row: compare_metrics()


def test_a_pipeline_pins_tokens_per_sequence_is_one_over_its_time_per_token():
    """With PP = 2 the batch's tokens/s counts two micro-batches of B in flight: B·PP sequences.  The Compare row and
    both CSVs divided it by B, twice the per-sequence rate core computes (44.1 against 22.1 tokens/s here)."""
    from core.pins import COMPARE_METRICS
    from core.scenario import Scenario

    r = Scenario(batch=4, pp=2).evaluate()
    per_sequence = next(m for m in COMPARE_METRICS if m.column == "tokens_per_s_per_sequence")
    assert per_sequence.si(r) == pytest.approx(1 / r.tpot_s) == pytest.approx(r.tokens_per_s_with_kv / (4 * 2))


def test_the_pins_csv_names_each_pins_split_and_the_sequences_its_aggregate_counts():
    """Split into pipeline stages, a pin's aggregate tokens/s counts B sequences in each of its PP micro-batches in
    flight: Llama-3-70B at TP = 2, PP = 4, B = 28 serves 4 × 28 = 112 sequences at 29.36 tokens/s each, 3,289
    tokens/s, on 8 GPUs.  The CSV says so in its own columns (it had no TP or PP column, and 448 ≠ 28 × 29.36)."""
    from core.pins import Pin, compare
    from core.scenario import Scenario

    rows = compare([Pin("PP = 4", Scenario(model="llama-3-70b", tp=2, pp=4, batch=28).levers()),
                    Pin("one GPU", Scenario(model="llama-3-8b").levers())])
    split, one = csv.DictReader(io.StringIO(pins_csv(rows)))
    assert [split[c] for c in ("tensor_parallel", "pipeline_parallel", "expert_parallel", "gpus")] == \
        ["2", "4", "1", "8"]
    assert split["sequences_in_flight"] == "112" and one["sequences_in_flight"] == one["batch"]
    assert float(split["tokens_per_s_per_sequence"]) == pytest.approx(29.3635, abs=1e-4)
    assert float(split["tokens_per_s_with_kv"]) == pytest.approx(112 * float(split["tokens_per_s_per_sequence"]),
                                                                rel=1e-12)


def test_the_pins_csv_says_which_rows_are_approximate():
    """A trial: the Pins table marked DeepSeek-V3's figures "≈", the CSV of the same pins did not."""
    from core.pins import Pin, compare
    from core.scenario import Scenario

    rows = compare([Pin("v3", Scenario(model="deepseek-v3", tp=8, pp=4).levers()),
                    Pin("8b", Scenario(model="llama-3-8b").levers())])
    v3, eight = csv.DictReader(io.StringIO(pins_csv(rows)))
    assert v3["approximate_keys_not_modelled"] == "num_nextn_predict_layers"
    assert eight["approximate_keys_not_modelled"] == ""


def test_a_speculating_pins_fraction_of_peak_says_its_flops_include_the_rejected_drafts():
    # A teacher's trial: the k = 4 pin had the highest fraction of peak (1.61 % against 1.35 %) and the lowest
    # tokens/s; its FLOPs are all 4 tokens a verify checks, of which E = (1 − 0.7⁴)/0.3 = 2.53 are kept.
    from core import Scenario
    from core.pins import COMPARE_METRICS, compare, lever_preset

    s = Scenario(model="llama-3-8b")
    rows = compare(lever_preset(s.levers(), s.catalogue), s.catalogue)
    peak = next(m for m in COMPARE_METRICS if m.key == "peak_fraction")
    texts = [peak.text(row.result) for row in rows]
    assert texts[0] == texts[1] == "1.35"  # batch 4 and INT4: no note
    assert texts[2] == "1.61 % (all 4 tokens verified; 2.53 kept)"
    e = (1 - 0.7**4) / (1 - 0.7)
    assert f"{e:.2f}" == "2.53" and rows[2].result.expected_tokens_per_step == pytest.approx(e)


def test_compare_says_which_lever_wins_on_an_engine_beside_the_ceiling():
    """A trial: which of batch 4, INT4 and k = 4 wins in practice took three visits to the Expected tab.  Compare's
    second row is each pin's expected tokens/s per sequence (the Expected tab's figure, under the session's engine
    preset) with the share of its ceiling it keeps, written so that it multiplies out: on Llama-3-70B INT4 keeps
    58.5 % of its 88.2 tokens/s (58 % × 88.2 = 51.2 would print 51), batch 4 and k = 4 71 % of theirs."""
    from core import Scenario
    from core.expected import expected_step
    from core.pins import compare, compare_metrics, lever_preset

    s = Scenario(model="llama-3-70b")
    rows = compare(lever_preset(s.levers(), s.catalogue), s.catalogue)
    metrics = compare_metrics()
    assert [m.key for m in metrics[:4]] == ["tokens_per_sequence", "expected_tokens", "tokens_aggregate",
                                            "expected_tokens_aggregate"]
    expected, batch = metrics[1], metrics[3]
    assert "generic engine" in expected.label and "prediction" in expected.label
    values = [expected.si(row.result) for row in rows]
    assert values == pytest.approx([expected_step(row.result).expected_tokens_per_s_per_sequence for row in rows],
                                   rel=1e-12)
    assert [round(v, 1) for v in values] == [15.8, 51.6, 42.0]
    # The batch's: batch 4 delivers four sequences' worth (63 tokens/s), the winner once the batch is counted.
    assert [round(batch.si(row.result), 1) for row in rows] == [63.0, 51.6, 42.0]
    texts = [expected.text(row.result) for row in rows]
    # S = 8,192 is past the calibration set's longest context (3,072): each says it extrapolates.
    assert texts == ["16 (71 % of 22.1, if it fit; extrapolated)", "52 (58.5 % of 88.2; extrapolated)",
                     "42 (71 % of 59, if it fit; extrapolated)"]
    for text in texts + [batch.text(row.result) for row in rows]:  # share × ceiling, as printed, is the value
        value, pct, ceiling = (float(x) for x in re.match(r"([\d.]+) \(([\d.]+) % of ([\d.]+)", text).groups())
        assert round(pct / 100 * ceiling) == value
    assert "extrapolated: S = 8,192 tokens" in expected.hover(rows[1].result)  # the set's longest context is 3,072
    vllm = compare_metrics("vLLM")[1]
    assert "vLLM preset" in vllm.label
    assert vllm.si(rows[1].result) == pytest.approx(
        expected_step(rows[1].result, "vLLM").expected_tokens_per_s_per_sequence, rel=1e-12)
    with pytest.raises(ValueError):
        compare_metrics("no such engine")[1].si(rows[0].result)


def test_the_pins_csv_and_json_carry_the_expected_tokens_and_their_engine():
    from core.expected import expected_step
    from core.export import to_json
    from core.pins import Pin, compare
    from core.scenario import Scenario

    rows = compare([Pin("8b", Scenario(model="llama-3-8b").levers())])
    generic, = csv.DictReader(io.StringIO(pins_csv(rows)))
    vllm, = csv.DictReader(io.StringIO(pins_csv(rows, "vLLM")))
    assert generic["expected_engine_preset"] == "generic" and vllm["expected_engine_preset"] == "vLLM"
    for record, engine in ((generic, None), (vllm, "vLLM")):
        e = expected_step(rows[0].result, engine)
        assert float(record["expected_tokens_per_s_per_sequence"]) == pytest.approx(
            e.expected_tokens_per_s_per_sequence, rel=1e-12)
        assert float(record["expected_tokens_per_s_with_kv"]) == pytest.approx(
            float(record["tokens_per_s_with_kv"]) * e.fraction_of_ceiling, rel=1e-12)
    pin, = json.loads(to_json(rows[0].result, rows, "vLLM"))["pins"]
    assert pin["expected_engine_preset"] == "vLLM"
    assert pin["expected_tokens_per_s_per_sequence"] == float(vllm["expected_tokens_per_s_per_sequence"])


def test_the_compare_tabs_expected_row_follows_the_sessions_engine_preset():
    from core.expected import expected_step

    lab = Lab(query={})
    lab.state.tab = "Compare"
    lab.pins.add_preset()
    rows = lab.state.pin_rows
    source = lab.compare.sources["expected_tokens"]
    figure = next(f for f in lab.compare.figures if f.name == "compare-expected_tokens-fig")
    assert source.data["value"] == pytest.approx(
        [expected_step(row.result).expected_tokens_per_s_per_sequence for row in rows], rel=1e-12)
    assert "generic engine" in figure.title.text
    lab.state.engine = "vLLM"
    assert source.data["value"] == pytest.approx(
        [expected_step(row.result, "vLLM").expected_tokens_per_s_per_sequence for row in rows], rel=1e-12)
    assert "vLLM preset" in figure.title.text and "generic" not in figure.title.text
    record = next(csv.DictReader(io.StringIO(lab.compare.download.callback().getvalue())))
    assert record["expected_engine_preset"] == "vLLM"


def test_a_pin_that_does_not_fit_is_hollow_in_every_compare_row_and_the_key_says_so():
    """A trial with 12 pins: the "(if it fit)" labels were left out for room and the pins that do not fit read as any
    other bar.  Their marks are hollow in their own colour, as the roofline's rungs are, and the key says so."""
    lab = Lab(query={})
    lab.state.tab = "Compare"
    lab.pins.add_preset()  # Llama-3-70B on one H100: batch 4 and k = 4 do not fit, INT4 does
    assert [row.result.fits for row in lab.state.pin_rows] == [False, True, False]
    for source in lab.compare.sources.values():
        assert source.data["fill"][1] == source.data["color"][1] and source.data["edge"][1] == "black"
        assert source.data["fill"][0] == source.data["fill"][2] == "white"
        assert source.data["edge"][0] == source.data["color"][0] and source.data["edge_width"][0] == 3
    key = lab.compare.key.object
    assert key.count("hollow: does not fit") == 2


def test_the_scenario_json_carries_the_expected_step_as_the_cli_does():
    """An engineer's trial: the Export tab's JSON had the pins' predictions but none for the scenario itself, which
    ``python -m core explain --json`` gives."""
    from core.expected import expected_step
    from core.export import to_json
    from core.scenario import Scenario

    r = Scenario().evaluate()
    e = expected_step(r, "vLLM")
    scenario = json.loads(to_json(r, (), "vLLM", e))["scenario"]
    assert scenario["expected_engine"] == "vLLM"
    assert scenario["expected_tokens_per_s_per_sequence"] == e.expected_tokens_per_s_per_sequence
    assert scenario["expected_beyond_calibration"] == [
        "S = 8,192 tokens (the set's longest decode context is 3,072)",
        "vLLM's own constants were fitted on 3 measurements (A100 SXM4 80GB, MI300X; TP 4–8; B 1–64): not on this "
        "GPU, not at TP = 1"]
    assert "expected_engine" not in json.loads(to_json(r))["scenario"]
    lab = Lab(query={"engine": "vLLM"})
    download = next(w for w in build_exports(lab.state).select()
                    if "download-json" in (getattr(w, "css_classes", None) or []))
    exported = json.loads(download.callback().getvalue())
    assert exported["scenario"]["expected_engine"] == "vLLM"


def test_a_pins_expected_step_is_worked_out_once_for_both_expected_rows(monkeypatch):
    """The per-sequence and the batch's expected rows read one expected step per pin (each row had its own)."""
    import core.pins as pins_module
    from core import Scenario
    from core.pins import compare, compare_metrics, lever_preset

    s = Scenario(model="llama-3-70b")
    rows = compare(lever_preset(s.levers(), s.catalogue), s.catalogue)
    calls = []
    real = pins_module.expected_step
    monkeypatch.setattr(pins_module, "expected_step", lambda r, engine=None: calls.append(r) or real(r, engine))
    metrics = compare_metrics()
    for metric in metrics:
        for row in rows:
            metric.text(row.result), metric.hover(row.result), metric.value(row.result)
    assert len(calls) == len(rows) == 3


def test_the_export_tabs_scenario_is_explain_json_key_for_key_and_marks_an_approximate_model(tmp_path, capsys):
    """An engineer's trial with a config of keys the lab does not model: the Export tab's JSON had no ``approximate``
    (nor ``model_read``, ``assumptions``) and a null ``expected_ttft_s``, all of which ``explain --json`` gives; the
    ladder's CSV had no mark either."""
    from core.cli import main
    from core.config_reader import config_model_id, config_name, parse_config_text
    from core.export import ladder_csv
    from core.permalink import config_for_link

    text = json.dumps({"_name_or_path": "acme/Weird-7B", "architectures": ["WeirdForCausalLM"], "model_type": "weird",
                       "hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
                       "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000,
                       "max_position_embeddings": 4096, "torch_dtype": "bfloat16", "parallel_attn_mlp": True,
                       "lora_rank": 16})
    lab = Lab(query={"config": config_for_link(text), "model": config_model_id(config_name(parse_config_text(text)))})
    download = next(w for w in build_exports(lab.state).select()
                    if "download-json" in (getattr(w, "css_classes", None) or []))
    web = json.loads(download.callback().getvalue())["scenario"]
    path = tmp_path / "config.json"
    path.write_text(text)
    assert main(["explain", "--config", str(path), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert web == cli
    assert web["approximate"] == ["lora_rank", "parallel_attn_mlp", "model_type"]  # "weird": not a type it knows
    assert web["expected_ttft_s"] > 0 and len(web["expected_ttft_terms"]) > 3
    rungs = list(csv.DictReader(io.StringIO(ladder_csv(lab.state.result))))
    assert {rung["approximate_keys_not_modelled"] for rung in rungs} == {"lora_rank; parallel_attn_mlp; model_type"}


def test_compare_says_what_a_speculating_pins_ceiling_assumes():
    """An engineer's trial: k = 4's "tokens/s per sequence, ceiling" (113 at TP = 2) counts E = 2.53 tokens a verify
    step at α = 0.7, not the k = 4 a bound whatever the drafts would; the tab said nowhere that α is assumed."""
    from app.compare_view import compare_key_html
    from core import Scenario
    from core.pins import compare, lever_preset

    s = Scenario(model="llama-3-70b", tp=2)
    rows = compare(lever_preset(s.levers(), s.catalogue), s.catalogue)
    k4 = rows[2].result
    assert (k4.spec_k, round(k4.expected_tokens_per_step, 2), round(k4.tokens_per_s_per_sequence)) == (4, 2.53, 113)
    html = compare_key_html(rows)
    assert html.count('data-readout="compare-speculation"') == 1
    assert ("k = 4: a speculating pin&#x27;s ceiling counts the E = 2.53 tokens a verify step keeps at the acceptance "
            "rate α = 0.7, not all 4") in html
    assert "The draft model&#x27;s own steps and weights are not counted" in html  # an engineer's trial
    assert "compare-speculation" not in compare_key_html(rows[:2])  # batch 4 and INT4 assume nothing of the kind


def test_the_trio_pressed_twice_is_pinned_once():
    """A trial pressed "Pin batch 4 vs INT4 vs k = 4" twice: six pins, three names each twice."""
    lab = Lab(query={"model": "llama-3-8b"})
    lab.pins.add_preset()
    lab.scenario.batch = 8  # the trio moves B = 1, k = 1: the same three pins
    lab.pins.add_preset()
    assert [p.name.split(" · ")[0] for p in lab.state.pins] == ["batch 4", "INT4 weights", "speculation k=4"]
    assert "pinned already" in lab.pins.message.text
    lab.scenario.model = "llama-3-70b"
    lab.pins.add_preset()
    assert len(lab.state.pins) == 6


def test_the_json_download_evaluates_only_the_prompt_it_adds(monkeypatch):
    """Review: the download evaluated the session's scenario again (for its expected step) although the session holds
    its result; it evaluates only the prefill of one prompt the TTFT needs.  ``explain`` likewise."""
    from core.cli import main
    from core.scenario import Scenario

    lab = Lab(query={"engine": "vLLM"})
    download = next(w for w in build_exports(lab.state).select()
                    if "download-json" in (getattr(w, "css_classes", None) or []))
    phases = []
    real = Scenario.evaluate
    monkeypatch.setattr(Scenario, "evaluate", lambda self: phases.append(self.phase) or real(self))
    download.callback()
    assert phases == ["prefill"]
    phases.clear()
    assert main(["explain", "--json"]) == 0
    assert phases == ["decode", "prefill"]


def test_a_compare_value_reads_whole_over_its_own_bar(trio):
    """Last note's item 1: "23 tokens/s (if it fit)", laid under its mark (the one place nearer its own mark than any
    other's), was struck through by its own grey bar.  Each value is on the page's white, every chart of the tab."""
    from bokeh.models import LabelSet

    labels = [a for fig in trio.compare.figures for a in fig.center if isinstance(a, LabelSet)]
    assert len(labels) == len(trio.compare.figures) >= 4
    assert all(s.background_fill_color == "white" and s.background_fill_alpha >= 0.8 for s in labels)
