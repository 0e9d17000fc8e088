"""The app factory without a server: views read the model and update in place."""

import html
import json

import numpy as np
import panel as pn
import pytest
from conftest import FIELD_CASES, ROOT

from app import create_app
from app.lab import Lab
from app.readouts import rows
from app.state import TABS
from core import Scenario
from core.model_catalogue import CATALOGUE_DIR
from core.units import GiB, fmt_rate, fmt_sig


def test_create_app_is_importable_and_returns_a_layout():
    assert isinstance(create_app(), pn.layout.Panel)


def test_updates_change_data_in_place():
    lab = Lab()
    fig, point, ladder = lab.roofline.figure, lab.roofline.point, lab.roofline.ladder
    lab.scenario.batch = 56
    assert lab.roofline.figure is fig and lab.roofline.point is point and lab.roofline.ladder is ladder
    assert list(point.data["x"]) == [56]
    assert lab.roofline.ridge_span.location == pytest.approx(295.3, abs=0.1)
    lab.scenario.gpu = "h200"
    assert lab.roofline.ridge_span.location == pytest.approx(206.1, abs=0.1)
    assert list(point.data["x"]) == [56]


def test_ladder_rungs_that_do_not_fit_are_hollow():
    lab = Lab(Scenario(model="llama-3-8b", context=8192, capacity_convention="decimal", reserve_bytes=0))
    data = lab.roofline.ladder.data
    fill = dict(zip(data["batch"], data["fill"], strict=True))
    assert fill[32] != "white" and fill[64] == "white"


def test_memory_bar_shows_capacity_and_verdict():
    lab = Lab(Scenario(model="llama-3-8b", batch=56))
    # 14.96 GiB weights + 56 GiB KV + 3 GiB reserve = 73.96 GiB of 80 GiB.
    assert "Memory: 74.0 GiB of 80.0 GiB → fits" in lab.memory.text
    assert "capacity 80.0 GiB" in lab.memory.text
    lab.scenario.gqa = False
    assert "DOES NOT FIT" in lab.memory.text


def test_memory_segments_are_in_gib():
    from app.memory_view import memory_segments

    parts = dict((n, g) for n, _, g in memory_segments(Scenario(model="llama-3-8b", batch=56).evaluate()))
    assert parts["KV cache"] == 56.0 and parts["reserve"] == 3.0
    assert round(parts["weights"], 2) == 14.96


def test_a_failing_evaluation_shows_a_message_and_keeps_the_views(monkeypatch):
    lab = Lab()
    before = dict(lab.roofline.point.data)
    assert lab.error.pane is None  # made when first needed, not with every page

    def broken():
        raise RuntimeError("catalogue <b>unreadable</b>")

    monkeypatch.setattr(lab.scenario, "evaluate", broken)
    lab.scenario.batch = 8
    assert lab.error.visible and "catalogue &lt;b&gt;unreadable&lt;/b&gt;" in lab.error.text
    # At the head of the page, before the tour card, in each arrangement of it.
    for present in (False, True, False):
        lab.state.present = present
        shown = list(lab.layout.select(pn.pane.Alert))
        assert shown == [lab.error.pane]
    assert lab.roofline.point.data == before
    monkeypatch.undo()
    lab.scenario.batch = 4
    assert not lab.error.visible and lab.error.text == ""


def test_every_readout_has_a_unit_or_verdict():
    keys = {x.key for x in rows(Scenario().evaluate())}
    assert {"intensity", "ridge", "attainable", "tokens", "kv-token", "fits", "max-batch"} <= keys


def test_throughput_chart_is_built_when_its_tab_opens_and_then_follows():
    lab = Lab(Scenario(model="llama-3-8b"))
    assert lab.throughput is None
    lab.tab_bar.value = "Throughput vs B"  # a click on its name
    assert lab.throughput is not None
    lab.scenario.batch = 56
    assert list(lab.throughput.current.data["batch"]) == [56]
    assert round(lab.throughput.current.data["tok"][0]) == 2462


def test_the_chart_is_not_redrawn_while_another_tab_is_open_and_catches_up_when_its_tab_opens():
    lab = Lab(Scenario(model="llama-3-8b"))
    lab.tab_bar.value = "Throughput vs B"
    assert lab.instant.holder.data["shown"] == [False]  # the browser's instant redraw leaves the hidden chart alone
    lab.scenario.batch = 56
    assert list(lab.throughput.current.data["batch"]) == [56]
    assert list(lab.roofline.point.data["x"]) == [1]  # not redrawn: nobody sees it
    lab.tab_bar.value = "Roofline"
    assert list(lab.roofline.point.data["x"]) == [56]  # drawn as the tab opens
    assert lab.instant.holder.data["shown"] == [True]
    lab.scenario.batch = 8
    assert list(lab.roofline.point.data["x"]) == [8]  # and it follows again


def test_an_extreme_split_is_counted_with_separators_in_the_throughput_title():
    # The trial's extreme link: DeepSeek-V3 split as far as it goes (TP 128 heads × PP 61 layers × EP 256 experts)
    # is 128 · 61 · 256 = 1,998,848 GPUs a copy; a million replicas.  Counts are written as counts, with separators.
    from core.units import fmt_count

    assert [fmt_count(n) for n in (1, 16, 1_998_848, 1_998_848_000_000)] == ["1", "16", "1,998,848",
                                                                             "1,998,848,000,000"]
    lab = Lab(Scenario(model="deepseek-v3", tp=512, pp=512, ep=1024, replicas=1_000_000))
    lab.state.tab = "Throughput vs B"
    lab._open("Throughput vs B")
    title = lab.throughput.figure.title.text
    assert "\none model copy on 1,998,848 GPUs (TP = 128, PP = 61, EP = 256)\n" in title
    assert "1998848" not in title
    assert {q.key: q for q in rows(lab.result)}["gpus"].value == "1,998,848,000,000 (1,000,000 replicas × 1,998,848)"


def test_format_never_uses_e_notation():
    from core.units import fmt_seconds, fmt_sig

    assert [fmt_sig(x) for x in (1, 0.98133, 128000, 11.8, 1365.33, 2462.4)] == [
        "1", "0.9813", "128,000", "11.8", "1,365", "2,462"]
    assert fmt_seconds(5.486e4) == "15.2 h" and fmt_seconds(0.02274) == "22.74 ms"


def test_x_range_widens_to_keep_far_points_on_the_chart():
    lab = Lab(Scenario(phase="prefill", prompt_len=32000, weight_dtype="fp4"))
    assert lab.roofline.point.data["x"][0] == 128_000
    assert lab.roofline.figure.x_range.end >= 3 * 128_000


def test_x_range_is_set_by_the_drawn_points_only_whichever_way_the_step_was_reached():
    """Tour step 6 (Llama-3-8B, B = 56, S = 8k): the farthest drawn point is the prefill of one 2,000-token prompt,
    I ≈ 2,000 FLOP/byte, so the chart ends at 10^5 (the default), opened by link or by keys.  It used to stretch
    to 10^6 for the prefill of the whole batch (56 × 2,000 = 112,000), which is not drawn; the browser's redraw
    did not, so the axis depended on the path.  A pin far out still widens it."""
    by_link = Lab(query={"present": "true", "tour": "6"})
    by_keys = Lab(query={"present": "true"})
    for step in range(6):
        by_keys.tour.go(step)
    for lab in (by_link, by_keys):
        assert lab.result.batch == 56 and lab.result.prefill_intensity == pytest.approx(112_000)
        assert max(lab.roofline.other_phase.data["x"]) == pytest.approx(2_000, rel=0.01)
        assert lab.roofline.figure.x_range.end == 1e5
    by_link.scenario.param.update(phase="prefill", prompt_len=32000, weight_dtype="fp4", batch=1)
    by_link.pin_current()  # I = 2·1·32,000 / 0.5 = 128,000 (the test above)
    # Back in decode with 2,000-token prompts the other phase is at 2·2,000 / 0.5 = 8,000 and the ladder ends at
    # 2·1,024 / 0.5 = 4,096: only the pin needs 3 × 128,000 → 10^6.
    by_link.scenario.param.update(phase="decode", prompt_len=2000)
    assert max(by_link.roofline.other_phase.data["x"]) == pytest.approx(8_000, rel=0.01)
    assert by_link.roofline.figure.x_range.end == 1e6


# --- bring your own (issue #5) ------------------------------------------------------
GPT2 = ('{"model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "n_positions": 1024, '
        '"vocab_size": 50257, "_name_or_path": "openai-community/gpt2"}')


def test_a_pasted_config_becomes_the_model_and_is_reported():
    lab = Lab()
    lab.byo.config_text.value = GPT2
    lab.byo._read_config()
    assert lab.scenario.model == "config-gpt2"
    assert lab.result.n_params == 124_439_808
    report = lab.byo.config_report.object
    assert "124,439,808" in report and "n_inner absent" in report and "gpt2" in report


def test_the_config_given_last_is_read_a_drop_at_once_and_a_paste_after_it_too():
    # Found by a trial: a paste after a drop read the dropped file (the paste's watcher raised a TypeError on the
    # two events a paste sends, so the lab never learnt the text came last), with the pasted text on screen.
    lab = Lab()
    mixtral = (CATALOGUE_DIR / "mixtral-8x7b.json").read_text()
    lab.byo.config_file.value = {"mixtral.json": mixtral}
    assert "Read mixtral: now the selected model" in lab.byo.config_report.object  # on drop, no button needed
    lab.byo.config_text.param.update(value=GPT2, value_input=GPT2)  # as the browser sends a paste
    lab.byo._read_config()
    assert lab.scenario.model == "config-gpt2"
    lab.byo.config_file.value = {"mixtral-again.json": mixtral}
    assert lab.result.model.name == "mixtral-again"
    # The box no longer shows the pasted GPT-2 beside the dropped file's report (a later trial), and Read reads the
    # file that is the input.
    assert (lab.byo.config_text.value, lab.byo.config_text.value_input) == ("", "")
    lab.byo._read_config()
    assert lab.result.model.name == "mixtral-again"


def test_a_broken_config_is_refused_and_the_model_kept():
    lab = Lab(Scenario(model="llama-3-8b", batch=56))
    for text in ("{not json", '{"num_hidden_layers": NaN}', '{"num_hidden_layers": 2, "hidden_size": 8}',
                 " " * 2_000_000):
        lab.byo.config_text.value = text
        lab.byo._read_config()
        assert "Refused" in lab.byo.config_report.object and "keeps Llama-3-8B" in lab.byo.config_report.object
        assert (lab.scenario.model, lab.scenario.batch) == ("llama-3-8b", 56)
        assert round(lab.result.tokens_per_s_with_kv) == 2462


def add_gpu(lab, name: str = "My accelerator", bandwidth: str = "", capacity: str = "", **peaks: str) -> str:
    """Fill your GPU form as typed and press Add GPU: the form's answer, its HTML unescaped."""
    lab.byo.gpu_name.value = name
    for roof, typed in peaks.items():
        lab.byo.peaks[roof].value = typed
    lab.byo.bandwidth.value, lab.byo.capacity.value = bandwidth, capacity
    lab.byo._add_gpu()
    return html.unescape(lab.byo.gpu_report.object)


def test_a_custom_gpu_joins_the_selector_warns_on_sparse_figures_and_travels_in_the_link():
    lab = Lab()
    add_gpu(lab, "Sparse-ish H100", "3.35", "80", bf16="1979")
    assert lab.scenario.gpu == "custom-sparse-ish-h100"
    assert round(lab.result.ridge_point) == 591
    assert "2:4-sparsity headline" in lab.byo.gpu_report.object
    assert "custom-gpu=" in lab.link.address.query
    from urllib.parse import parse_qsl

    again = Lab(query=dict(parse_qsl(lab.link.address.query[1:])))
    assert again.scenario.gpu == "custom-sparse-ish-h100" and round(again.result.ridge_point) == 591


def test_a_custom_gpus_link_and_node_come_from_the_form_and_travel_in_the_link():
    """A hardware engineer's trial: the form had no link or node fields (the command line's --gpu-link and
    --gpu-node had), so a split of a custom GPU counted only its calls' latency; and FP8 50 under BF16 100 passed
    without a word."""
    from urllib.parse import parse_qsl

    lab = Lab()
    lab.byo.link.value, lab.byo.node.value = "450", "8"
    said = add_gpu(lab, "H20-ish", "4", "96", bf16="148", fp8="50")
    assert "link 450 GB/s per direction, 8 GPUs per node" in said
    assert "FP8 50 TFLOP/s is below the BF16/FP16 peak of 148" in said
    link = lab.scenario.catalogue.own_gpus["custom-h20-ish"].interconnect
    assert (link.per_direction_bandwidth, link.max_node) == (450e9, 8)
    lab.scenario.tp = 8
    assert lab.result.link_bandwidth == 450e9
    again = Lab(query=dict(parse_qsl(lab.link.address.query[1:])))
    assert again.result.link_bandwidth == 450e9 and again.result.tp == 8
    lab.byo.link.value, lab.byo.node.value = "", ""
    assert "no link figure: a split over GPUs counts only its calls' latency" in add_gpu(lab, "Bare", "4", "96",
                                                                                         bf16="148")
    lab.byo.link.value = "0.5"
    assert "Not added" in add_gpu(lab, "Slow", "4", "96", bf16="148")


def test_a_custom_gpu_with_a_missing_number_is_refused():
    lab = Lab()
    assert "Not added: bandwidth (TB/s) is missing: enter a positive number" in add_gpu(lab, bf16="500")
    assert lab.scenario.gpu == "h100-sxm"


def test_measurements_are_drawn_with_their_mbu():
    lab = Lab(Scenario(model="llama-3-8b"))
    lab.byo.csv_text.value = "batch,context,tokens_per_s\n1,128,150\n56,8192,2000\nbad,row,here"
    lab.byo._plot()
    assert list(lab.roofline.measured.data["batch"]) == [1, 56]
    report = lab.byo.measured_report.object
    assert "72 %" in report and "row 4" in report
    lab.scenario.gpu = "h200"  # the same measurements against another roof
    assert "50.2 %" in lab.byo.measured_report.object  # 150 tok/s of 16.07 GB steps over 4.8 TB/s, three digits


def test_the_expected_point_arrives_with_the_marks_layer_when_first_switched_on():
    """The lab's first page, in a document of its own, is 175 Bokeh models (198 with the expected point's renderer,
    whisker and key, a Selection per source, and the link notice, error and pins message made hidden): the expected
    point is made with the marks layer, when first switched on, drawn last (over the workload's star), its key after
    the sparse roof's."""
    from bokeh.document import Document
    from bokeh.models import Whisker

    lab = Lab(query={})
    doc = Document()
    lab.layout.server_doc(doc)
    view = lab.roofline
    assert len(list(doc.models)) <= 175  # a budget: 175 today (4 of them the rungs' communication bars)
    assert doc.get_model_by_name("band") is None and view.band_renderer is None
    assert len({id(r.data_source.selected) for r in view.figure.renderers}) == 1  # one Selection for all
    lab.state.band = True
    assert view.band_renderer.visible and view.band_whisker.visible and list(view.band.data["x"]) == [
        lab.result.arithmetic_intensity_with_kv]
    names = [r.data_source.name for r in view.figure.renderers]
    # Over every series; the labels' leader lines under them all, drawn first (app/label_layout.py's draw_leaders).
    assert names[-1] == "band" and set(names[:2]) == {"pin-labels-leaders", "measured-leaders"}, names
    assert doc.get_model_by_name("band") is view.band
    assert [a for a in view.figure.center if isinstance(a, Whisker)] == [view.band_whisker]
    items = view.legend.items
    assert items.index(view.band_item) == items.index(view.sparse_item) + 1 and view.band_item.visible
    lab.state.band = False
    assert not view.band_renderer.visible and list(view.band.data["x"]) == []


def test_the_marks_layer_arrives_with_the_first_pin_and_the_chart_stays_in_the_document():
    """Pins, measurements and a datasheet twin are one layer of the chart, made when the
    first of them shows (most sessions have none): their labels' layouts run in the browser (app/label_layout.py),
    by name from the sources the instant redraw also holds, with leader lines.  Each series takes its place among
    the chart's series and legend entries.  The chart stays in the document while another tab is shown (a pin
    renamed on the Pins tab changes it there, under the session's lock)."""
    from bokeh.document import Document
    from bokeh.models import CustomJS, Segment

    def layouts(doc):
        return {m.name for m in doc.models if isinstance(m, CustomJS) and (m.name or "").endswith("label-layout")}

    lab = Lab(query={})
    doc = Document()
    lab.layout.server_doc(doc)
    view = lab.roofline
    before = len(list(doc.models))
    assert layouts(doc) == set() and doc.get_model_by_name("pins") is None
    assert not [r for r in view.figure.renderers if isinstance(r.glyph, Segment)]  # no leaders yet
    order = [r.data_source.name for r in view.figure.renderers]
    lab.pin_current()
    assert layouts(doc) == {"pin-label-layout", "measured-label-layout", "reference-label-layout"}
    assert not any(c.name in layouts(doc) for c in view.point.js_property_callbacks["change:data"])  # run by name
    assert len([r for r in view.figure.renderers if isinstance(r.glyph, Segment)]) == 2
    assert list(view.pin_labels.data["xoff"]) == [10] and list(view.pin_labels.data["text"]) == [
        "pin 1: Llama-3-70B · h100-sxm · baseline"]
    names = [r.data_source.name for r in view.figure.renderers if r.data_source.name not in (
        "pin-labels-leaders", "measured-leaders")]
    assert [n for n in names if n in order] == order  # the layer's series go between the chart's own
    assert names.index("pin-roofs") < names.index("roof") and names.index("pins") < names.index("workload")
    labels = [item.label.value for item in view.legend.items]
    assert labels.index("roof of a pinned GPU (faint)") == labels.index("roof: min(P_peak, BW·I)") - 1
    assert len(list(doc.models)) - before > 40  # what the session without pins never builds
    lab.state.tab = "Pins"
    assert view.figure.document is doc and view.pin_labels.document is doc
    lab.state.tab = "Roofline"
    assert view.figure.document is doc


def test_a_second_config_of_the_same_name_becomes_the_model_shown():
    lab = Lab()
    lab.byo.config_text.value = ('{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, '
                                 '"intermediate_size": 128, "vocab_size": 100}')
    lab.byo._read_config()
    first = lab.result.n_params
    lab.byo.config_text.value = ('{"num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4, '
                                 '"intermediate_size": 128, "vocab_size": 100}')
    lab.byo._read_config()
    assert lab.scenario.model == "config-pasted-config-2"
    assert lab.result.n_params != first and lab.result.model.n_layers == 4
    assert "Pasted config (2) (your config)" in lab.scenario.param["model"].names


def test_a_link_says_which_pins_on_another_pasted_model_it_leaves_out():
    """A new user's trial: a pin on a first pasted config, a second config selected and pinned, the link copied:
    opened elsewhere the first pin was ignored ("model='config-…' is not one of …"), and the sender was never
    told.  A link carries one config.json, the selected model's; the Share paragraphs say which pins it leaves."""
    from app.exports_view import build_exports
    from app.permalink_view import pins_left_out

    lab = Lab()
    lab.byo.config_text.value = ('{"_name_or_path": "acme/one", "num_hidden_layers": 2, "hidden_size": 64, '
                                 '"num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100}')
    lab.byo._read_config()
    lab.pin_current()
    assert pins_left_out(lab.state) == ""  # the selected model's config travels with its pin
    first = lab.state.pins[0].name
    lab.byo.config_text.value = lab.byo.config_text.value.replace("acme/one", "acme/two")
    lab.byo._read_config()
    lab.pin_current()
    lost = pins_left_out(lab.state)
    assert lost.startswith("This pin is on another pasted model, whose config.json a link or a scenario file does "
                           f"not carry (they carry the selected model's): “{first}”. Opened elsewhere, it is left out")
    assert 'data-readout="share-lost"' in lab.byo.share_report.object and first in lab.byo.share_report.object
    assert first in build_exports(lab.state).objects[1].object  # the Export tab's Share paragraph
    opened = Lab(query=_link_of(lab))  # what the warning says happens
    assert [p.name for p in opened.state.pins] == [lab.state.pins[1].name]
    lab.scenario.model = "config-one"  # selecting the first model carries its pin, and leaves out the second's
    assert lab.state.pins[1].name in pins_left_out(lab.state) and first not in pins_left_out(lab.state)


def test_a_link_of_a_second_nameless_config_leaves_the_firsts_pin_out_not_renamed():
    """A new user's trial: two nameless Llama configs (1B, then 3B: "LlamaForCausalLM" and "LlamaForCausalLM (2)"),
    each pinned, the 3B's link opened in a fresh session: the 3B was read there as "config-llamaforcausallm", the
    id the 1B had where the link was made, and the 1B's pin came back with the 3B's figures (1,316 tokens/s in
    place of 3,780) where the page had said it would be left out."""
    from app.permalink_view import pins_left_out

    def llama(layers: int) -> str:
        return json.dumps({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": layers, "hidden_size": 2048,
                           "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 8192,
                           "vocab_size": 128256})

    lab = Lab()
    for layers in (16, 28):
        lab.byo.config_text.value = llama(layers)
        lab.byo._read_config()
        lab.pin_current()
    first, second = lab.state.pins
    assert (first.levers["model"], second.levers["model"]) == ("config-llamaforcausallm", "config-llamaforcausallm-2")
    assert f"“{first.name}”" in pins_left_out(lab.state)
    opened = Lab(query=_link_of(lab))
    assert opened.scenario.model == "config-llamaforcausallm" and opened.result.model.n_layers == 28
    assert [p.name for p in opened.state.pins] == [second.name]  # its own figures: the 3B's
    assert opened.state.pins[0].levers["model"] == "config-llamaforcausallm"
    assert any(n.startswith(f"ignored pin {first.name!r}: its model, 'config-llamaforcausallm' where the link was "
                            "made, is another pasted model") for n in opened.state.notices)


def test_the_same_config_pasted_twice_is_one_model():
    """An engineer's trial: pasting the config they had pasted before added "X (2)" beside "X", the same model."""
    lab = Lab()
    text = ('{"_name_or_path": "acme/tiny", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, '
            '"intermediate_size": 128, "vocab_size": 100}')
    lab.byo.config_text.value = text
    lab.byo._read_config()
    lab.scenario.model = "llama-3-8b"
    lab.byo.config_text.value = text + " "  # the same config, pasted again
    lab.byo._read_config()
    assert lab.scenario.model == "config-tiny"  # selected again
    assert [name for name in lab.scenario.param["model"].names if "tiny" in name] == ["tiny (your config)"]


def test_a_long_pasted_config_is_read_whole():
    import json

    cfg = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "intermediate_size": 128,
           "vocab_size": 100, "id2label": {str(i): f"LABEL_{i}" for i in range(400)}}
    lab = Lab()
    assert lab.byo.config_text.max_length >= 2_000_000
    lab.byo.config_text.value = json.dumps(cfg, indent=2)
    assert len(lab.byo.config_text.value) > 5000
    lab.byo._read_config()
    assert lab.result.model.n_layers == 2


def test_a_quantised_checkpoint_selects_its_precision():
    lab = Lab()
    lab.byo.config_text.value = ('{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, '
                                 '"intermediate_size": 128, "vocab_size": 100, '
                                 '"quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 128}}')
    lab.byo._read_config()
    # As stored: the GPTQ linears at 4 bits plus a 16-bit scale and 4-bit zero per 128, the embeddings
    # and LM head at 16 bits; p is the mean over every weight held.
    assert lab.scenario.weight_dtype == "stored"
    m = lab.result.model
    assert lab.result.bytes_per_weight == m.stored_bytes_per_param()
    linear = sum(g.params for g in m.stored_breakdown() if g.bytes_per_weight < 1)
    assert lab.result.weight_bytes_held == pytest.approx(linear * (0.5 + 2.5 / 128) + (m.n_params - linear) * 2)
    assert "4-bit gptq" in lab.byo.config_report.object


def test_mla_show_your_work_is_arithmetic_that_adds_up():
    from app.readouts import rows

    work = {x.key: x.work for x in rows(Scenario(model="deepseek-v3", gpu="b200").evaluate())}
    assert work["kv-token"] == ("L·(kv_lora_rank + qk_rope_head_dim)·p_kv = 61 × (512 + 64) × 2 = "
                                "70,272 bytes (68.62 KiB)")


def test_points_above_the_roof_are_flagged():
    lab = Lab(Scenario(model="llama-3-8b"))
    lab.byo.csv_text.value = "batch,context,tokens_per_s\n1,128,150"
    lab.byo._plot()
    lab.scenario.model = "llama-3-70b"  # the same measurement against a roof it cannot have reached
    assert "lie above the roof of Llama-3-70B" in lab.byo.measured_report.object
    # and beside the chart, where the point is drawn (a new user switched model and read 340 % MBU off it)
    assert ("⚠ 1 measured point on the chart lies above this roof: measured on another model, GPU or precision?"
            in lab.readouts.pane.text)
    assert lab.readouts.pane.text.startswith('<div class="warn" data-readout="measured-above-roof">')  # heads them
    lab.scenario.model = "llama-3-8b"
    assert "measured point" not in lab.readouts.pane.text


def test_the_tour_finishes_on_its_last_step():
    from core.tour import TOUR

    lab = Lab()
    assert lab.tour.caption is None and lab.tour.leave is None  # made when a tour first starts
    lab.tour.go(len(TOUR) - 1)
    assert lab.tour.next.label == "Finish ✓" and not lab.tour.next.disabled and lab.tour.leave.visible
    lab.tour._next()
    assert lab.tour.index is None and not lab.tour.caption.visible


def test_the_throughput_chart_draws_its_end_markers_whole_and_its_shading_label_at_the_shading():
    """A helper's trial: the pins at B = 1 were cut in half by the frame, and "does not fit in 80 G" lost its "iB"
    at the right edge when the shading started far right.  The label is laid out in the browser (PLACE_LABELS,
    tests/browser/test_browser_present.py), from the shading's edge at the foot of the curves."""
    from app.throughput_view import X_RANGE

    lab = Lab(Scenario(model="llama-3-8b", gpu="h100-sxm"))
    lab.state.tab = "Throughput vs B"
    view = lab.throughput
    fig, label = view.figure, view.no_fit_text.data
    assert fig.x_range.start < 0.8 and fig.x_range.end > 1280 and (fig.x_range.start, fig.x_range.end) == X_RANGE
    assert not isinstance(view.no_fit.right, int | float)  # shaded to the frame's edge (a Node)
    assert view.no_fit_label.x_offset == "xoff" and view.no_fit_label.y_offset == "yoff"  # placed in the browser
    lab.scenario.gpu = "h200"  # fits a larger batch: the shading starts further right
    label = view.no_fit_text.data
    assert label["x"] == [lab.result.max_batch + 0.5] and label["text"] == ["does not fit in 141 GiB"]
    assert label["y"] == [min(view.curves.data["with_kv"])]  # from the foot of the curves
    # Shading of a fifth of the axis (B > 248 at S = 2,048 on an H100): the short name, inside it (a trial at 1280
    # px found the full one left of the shading, over batches that fit).
    lab.scenario.param.update(gpu="h100-sxm", context=2048)
    assert lab.result.max_batch == 248 and view.no_fit_text.data["text"] == ["does not fit"]
    assert view.no_fit_text.data["shown"] == ["does not fit"] and view.no_fit_label.text == "shown"
    lab.scenario.param.update(gpu="b200", context=512)  # a batch of 1,024 fits: no shading, no label
    assert lab.result.max_batch >= 1024 and view.no_fit_text.data["text"] == []


def test_the_throughput_title_fits_its_chart_in_two_short_lines():
    lab = Lab(query={})
    lab.state.tab = "Throughput vs B"
    lines = lab.throughput.figure.title.text.split("\n")
    assert lines == ["Llama-3-70B on NVIDIA H100 SXM5 80GB (p = BF16, k = 1, S = 8,192)",
                     "tokens/s vs batch (largest batch that fits: 0)"]
    # The levers the curve depends on are named (a new user's INT4 and k = 4 images were one file name).
    lab.scenario.param.update(weight_dtype="int4", spec_k=4, kv_dtype="fp8", gqa=False)
    assert lab.throughput.figure.title.text.split("\n")[0] == (
        "Llama-3-70B on NVIDIA H100 SXM5 80GB (p = INT4, k = 4, S = 8,192, KV FP8, GQA off)")


def test_tables_and_summaries_never_print_e_notation():
    # Found by a trial: the pins table showed I = 3.2e+04 (Python's ",.4g" past 10^4).
    from app.lab import embed_summary
    from core.pins import Pin

    levers = Scenario(model="llama-3-8b", batch=16384, spec_k=4, weight_dtype="int4").levers()
    lab = Lab()
    lab.pins.add(Pin("huge batch", levers))
    table = lab.pins.table.object
    assert "262,100" in table and "e+" not in table
    assert "e+" not in embed_summary(Scenario(**levers).evaluate())


def test_the_throughput_key_names_pins_and_measurements_only_when_there_are_some():
    # An empty series' key has no symbol: "pins" and "your measurements" used to be listed with none.
    from app.throughput_view import ThroughputView
    from core.pins import Pin

    lab = Lab()
    view = ThroughputView(state=lab.state)
    items = view._optional_items
    assert not any(item.visible for item in items.values())
    lab.pins.add(Pin("a", lab.scenario.levers()))
    assert items["pins (each on its own scenario)"].visible
    assert not items["your measurements"].visible


def test_the_throughput_chart_marks_the_batch_that_reaches_the_ridge():
    # A teacher pointed at the bend by hand for "the batch never reaches the ridge": B = P_peak/BW ÷ (2k/p).
    from app.throughput_view import ThroughputView

    lab = Lab(Scenario(model="llama-3-8b", batch=56), query={})
    view = ThroughputView(state=lab.state)
    r = lab.result
    b = r.ridge_point / (2 * 1 / 2)  # 989.4 TFLOP/s / 3.35 TB/s ÷ 2·k/p with k = 1, p = 2
    assert list(view.ridge.data["batch"]) == pytest.approx([b]) and 295 < b < 296
    # Article 000's caption of this chart, said where it holds: 62 sequences of 8,192 fit, B = 295 never does.
    assert r.max_batch == 62 and view.ridge_item.visible and view.ridge_item.label["value"] == (
        "ridge point: at B = 295, I = 2·B·k/p reaches P_peak/BW = 295 FLOP/byte; the batch never reaches it: "
        "capacity runs out first, at B = 62")
    # on the bend of the ceiling ignoring the cache: its flat top, B·k / (FLOP per step / P_peak) tokens/s
    top = max(view.curves.data["no_kv"])
    assert view.ridge.data["tok"][0] == pytest.approx(top, rel=0.02)
    lab.scenario.weight_dtype = "int4"  # p = 0.5: four times the intensity per sequence, a quarter of the batch
    assert view.ridge.data["batch"][0] == pytest.approx(b / 4) and "at B = 73.8," in view.ridge_item.label["value"]
    lab.scenario.context = 1024  # 74 GiB free for 128 KiB × 1,024 per sequence: B = 73.8 fits, the caption goes
    assert lab.result.max_batch > 74 and "never reaches" not in view.ridge_item.label["value"]
    lab.scenario.phase = "prefill"  # a prompt alone is past the ridge: no batch to mark on the axis
    assert list(view.ridge.data["batch"]) == [] and not view.ridge_item.visible


def test_throughput_draws_a_measurement_at_another_context_apart_with_its_own_ceiling():
    # Issue 30: a point measured at S = 2,048 was drawn on the curve for S = 8,192, above "achievable".
    from app.throughput_view import OTHER_S_KEY, OWN_CEILING_KEY
    from core.measured_points import Measurement

    lab = Lab(Scenario(model="llama-3-8b"))  # S = 8,192
    lab.state.tab = "Throughput vs B"
    view = lab.throughput
    lab.state.measurements = [Measurement(16, 2048, 2500.0), Measurement(16, 8192, 1500.0)]
    curve = dict(zip(view.curves.data["batch"], view.curves.data["with_kv"], strict=True))
    own = lab.scenario.clone(phase="decode", spec_k=1, batch=16, context=2048).evaluate().tokens_per_s_with_kv
    assert curve[16] < 2500 < own  # above the curve at 8,192, under its own ceiling at 2,048
    assert view.measured.data["context"] == [8192] and view.measured.data["tok"] == [1500.0]
    assert view.measured_other.data["context"] == [2048] and view.measured_other.data["tok"] == [2500.0]
    assert view.measured_other.data["ceiling"] == [pytest.approx(own)]
    items = view._optional_items
    assert items[OTHER_S_KEY].label.value == "measured at S = 2,048 (curve at 8,192)"
    assert items[OTHER_S_KEY].visible and items[OWN_CEILING_KEY].visible and items["your measurements"].visible
    lab.scenario.context = 2048  # now the other point is the one measured elsewhere
    assert view.measured.data["context"] == [2048] and view.measured_other.data["context"] == [8192]
    assert items[OTHER_S_KEY].label.value == "measured at S = 8,192 (curve at 2,048)"
    lab.state.measurements = [Measurement(16, 2048, 2500.0)]
    assert view.measured_other.data["batch"] == [] and not items[OTHER_S_KEY].visible


def test_measurements_the_one_given_last_is_plotted_and_nothing_given_says_so():
    lab = Lab(Scenario(model="llama-3-8b"))
    lab.byo._plot()  # nothing given (or a file the browser refused): no "the header must name … (got: nothing)"
    assert lab.state.measurement_problems == ["choose a CSV file (up to 2 MB) or paste its rows first; a file over "
                                              "2 MB is refused by the browser and not sent"]
    lab.byo.csv_file.value = {"m.csv": "batch,context,tokens_per_s\n1,128,150\n"}  # plotted on drop
    assert [m.batch for m in lab.state.measurements] == [1]
    lab.byo.csv_text.param.update(value="batch,context,tokens_per_s\n8,128,900",
                                  value_input="batch,context,tokens_per_s\n8,128,900")
    lab.byo._plot()
    assert [m.batch for m in lab.state.measurements] == [8]


def test_the_roofline_title_of_many_gpus_is_short_lines():
    # Found by a trial: TP's line ("per GPU of 8: communication I = … ; interconnect ridge …") was wider than
    # the chart at 1280 px and cut off at the right in normal mode.
    lab = Lab(Scenario(model="llama-3.1-405b", tp=8), {})
    lines = lab.roofline.figure.title.text.split("\n")
    assert lines[3:] == ["per GPU of 8 (TP = 8): communication 1.54 ms = 4.8 % of the step",
                         "its I = 7,607 FLOP per byte sent (link ridge P_peak/link: 2,199)"]
    # The frame is 479 px wide at 1280 × 720; a 66-character line of the 12 px title takes ~370 px of it.
    assert max(len(line) for line in lines) <= 72
    # Overhead-bound (Llama-3-8B on 8, B = 1: 1.424 ms of launches against 1.03 ms of GPU time) the launches set
    # the step: "0.386 ms = 27 % of the step" read as if the communication lengthened it.
    small = Lab(Scenario(model="llama-3-8b", tp=8), {})
    assert small.result.bound == "overhead"
    assert small.roofline.figure.title.text.split("\n")[3] == (
        "per GPU of 8 (TP = 8): communication 0.386 ms, under 1.42 ms of launches")
    assert max(len(line) for line in small.roofline.figure.title.text.split("\n")) <= 72


# --- the y range widens as the x range does ---------------------------------------------------------------------
def _tiny_gpu():
    """The smallest part the bring-your-own form takes: 0.01 TFLOP/s (10 GFLOP/s), here with 5 GB/s."""
    from core.hardware import custom_accelerator

    return custom_accelerator("tiny", bandwidth_tbs=0.005, capacity_gb=80, bf16=0.01)


def _on_chart(view):
    """Every y the chart keeps (points, roofs) lies inside its y range, with the ridge label at its foot."""
    y = view.figure.y_range
    for src in view.y_sources():
        for v in src.data["y"]:
            assert y.start < v < y.end, (src.name, v, y.start, y.end)
    assert view.ridge.data["y"] == [y.start]


def test_y_range_widens_to_keep_a_10_gflop_part_and_a_cpu_roof_on_the_chart():
    from core.hardware import custom_accelerator

    s = Scenario(model="llama-3-8b")
    s.add_gpu(_tiny_gpu())
    lab = Lab(s)
    view = lab.roofline
    # I = 1 FLOP/byte (BF16, B = 1) on 5 GB/s: 0.005 TFLOP/s, below the old floor of 0.01.
    assert view.point.data["y"][0] == pytest.approx(0.005)
    assert view.roof.data["y"][0] == pytest.approx(0.0005)  # the roof at the chart's left edge, I = 0.1
    assert (view.figure.y_range.start, view.figure.y_range.end) == (1e-4, 2e4)
    _on_chart(view)
    # `python -m core measure` on a laptop: 0.09 TFLOP/s and 0.023 TB/s; the roof rises from 0.0023 at I = 0.1.
    cpu = custom_accelerator("this CPU (measured)", bandwidth_tbs=0.023, capacity_gb=16, bf16=0.09)
    lab.scenario.add_gpu(cpu)
    assert lab.roofline.figure.y_range.start == 1e-4
    _on_chart(lab.roofline)
    # A catalogue GPU keeps the usual range; B200's 2:4 FP8 headline (9 PFLOP/s) gets room above.
    lab.scenario.gpu = "h100-sxm"
    assert (view.figure.y_range.start, view.figure.y_range.end) == (0.01, 2e4)
    _on_chart(view)
    lab.scenario.param.update(gpu="b200", weight_dtype="fp8")
    assert (view.figure.y_range.start, view.figure.y_range.end) == (0.01, 1e5)
    _on_chart(view)


def test_the_pins_table_names_the_phase_and_the_gpu_split():
    # Found by a trial: the levers column left out phase and replicas, so a pin at TP = 8 read like one on one GPU.
    from core.pins import Pin

    lab = Lab(Scenario(model="llama-3-70b"))
    lab.pins.add(Pin("one GPU", lab.scenario.levers()))
    lab.pins.add(Pin("split", Scenario(model="llama-3-70b", tp=8, replicas=2, phase="prefill").levers()))
    table = lab.pins.table.object
    assert "S = 8,192</td>" in table  # one GPU decoding: nothing added
    assert "S = 2,000, prefill, TP = 8, replicas = 2</td>" in table  # in prefill S is the prompt


def _pasted_into(widget: pn.widgets.TextAreaInput, text: str) -> None:
    """What a browser's text area holds after ``text`` is pasted into it: cut to its ``maxlength``."""
    kept = text[: widget.max_length]
    widget.param.update(value=kept, value_input=kept)


@pytest.mark.parametrize("pasted", ['{"num_hidden_layers": 2' + " " * 3_000_000 + "}", "{" + '"a": 1, ' * 300_000])
def test_a_paste_over_the_size_limit_is_refused_as_a_size(pasted):
    """Issue 31, F9: a paste of more than 2,000,000 characters was cut by the text area in silence, and the lab
    reported what was left: "invalid JSON at line 1, column 606"."""
    lab = Lab()
    _pasted_into(lab.byo.config_text, pasted)
    lab.byo._read_config()
    report = lab.byo.config_report.object
    assert "Refused: config is over 2 MB" in report and "JSON" not in report


def test_a_file_the_browser_refused_is_named_by_its_size():
    """Issue 31, F9: a file over 2 MB is refused by the dropper (never sent); then "Read config" said "choose a
    config.json file or paste its text first", as if none had been chosen."""
    lab = Lab()
    lab.byo._read_config()
    assert "up to 2 MB" in lab.byo.config_report.object and "over 2 MB" in lab.byo.config_report.object
    lab.byo._plot()
    assert "choose a CSV file (up to 2 MB)" in lab.byo.measured_report.object
    assert lab.byo.config_file.max_file_size == lab.byo.csv_file.max_file_size == "2MB"  # FilePond's units: 1e6


def test_a_measurements_paste_over_the_size_limit_is_refused_as_a_size():
    lab = Lab()
    _pasted_into(lab.byo.csv_text, "batch,context,tokens_per_s\n" + "1,2048,150\n" * 250_000)
    lab.byo._plot()
    assert lab.state.measurements == []
    assert "the CSV is over 2 MB" in lab.byo.measured_report.object


def test_the_offline_page_tells_a_phone_to_lay_it_out_at_the_phones_width():
    """Without the tag a phone drew the page 980 px wide and shrank it; the page reflows down to 360 px."""
    from app.standalone import standalone_html

    head = standalone_html(Scenario(model="llama-3-8b")).split("</head>")[0]
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in head
    assert "<title>Roofline Lab — Llama-3-8B on NVIDIA H100 SXM5 80GB</title>" in head


def test_the_offline_page_of_a_model_with_keys_not_modelled_says_so_above_its_numbers():
    # Issue 28: no page shows a number that depends on a key the lab did not read without saying so beside it.
    from app.standalone import standalone_html

    html = standalone_html(Scenario(model="deepseek-v3", gpu="b200", weight_dtype="fp8"))
    assert 'data-readout=\\"approximate\\"' in html or 'data-readout="approximate"' in html
    assert "every number here leaves them out" in html
    assert "every number here assumes" not in standalone_html(Scenario(model="llama-3-8b"))


def test_a_config_key_not_modelled_marks_the_headline_numbers_approximate():
    # DeepSeek-V3's config names a multi-token-prediction layer the lab does not count: the readouts open with
    # the note, the memory verdict says "≈ ... (approximate)", and what was read says so too.
    lab = Lab(Scenario(model="deepseek-v3", gpu="b200", weight_dtype="fp8", tp=8))
    readouts = lab.readouts.pane.text
    assert readouts.startswith('<div class="warn approx" data-readout="approximate">≈ Approximate: '
                               "num_nextn_predict_layers not modelled")
    assert "→ ≈ fits (approximate)" in lab.memory.text or "→ ≈ DOES NOT FIT (approximate)" in lab.memory.text
    assert 'data-readout="memory-approximate"' in lab.memory.text
    # So does the readouts' own verdict, the pins table's and Compare's (an engineer's trial: "Fits in memory: yes").
    from core.explain import quantities
    from core.pins import COMPARE_METRICS

    assert quantities(lab.result)["fits"].value == "≈ yes"
    memory = next(m for m in COMPARE_METRICS if m.key == "memory")
    assert memory.note(lab.result) == "≈ fits"
    lab.pin_current()
    assert "<td>≈ yes</td>" in lab.pins.table.object
    # Every figure of the pin is marked where it is: a trial found "1 | 3.35 | 398 memory | 0.75 | ≈ yes", and
    # Compare's bars "398" beside the readouts' "≈ 398 tokens/s".
    r = lab.result
    row = lab.pins.table.object.split('<tr data-pin="1">')[1].split("</tr>")[0]
    assert f"<td>≈ {fmt_sig(r.arithmetic_intensity_weights)}</td>" in row
    assert f"<td>≈ {fmt_rate(r.tokens_per_s_with_kv)}<br>" in row and f"<td>≈ {r.kv_bytes / GiB:,.2f}</td>" in row
    tokens = next(m for m in COMPARE_METRICS if m.key == "tokens_aggregate")
    assert tokens.text(r) == f"≈ {fmt_rate(r.tokens_per_s_with_kv)}"
    assert tokens.hover(r) == f"≈ {fmt_rate(r.tokens_per_s_with_kv)} tokens/s"
    # A model whose every key was read is not marked.
    lab.scenario.model = "llama-3-70b"
    assert (quantities(lab.result)["fits"].value, memory.note(lab.result)) == ("yes", "fits")  # TP = 8 on a B200
    assert tokens.text(lab.result) == fmt_rate(lab.result.tokens_per_s_with_kv)
    assert "approx" not in lab.readouts.pane.text and "approximate" not in lab.memory.text
    # A pasted config with a key the lab does not know is marked where it is reported and where its numbers are.
    import json

    config = json.loads((CATALOGUE_DIR / "qwen2.5-7b.json").read_text())
    lab.byo.config_text.value = json.dumps({**config, "mystery_layers": 12})
    lab.byo._read_config()
    report = lab.byo.config_report.object
    assert 'data-readout="config-approximate"' in report and "mystery_layers not modelled" in report
    assert "mystery_layers" in lab.readouts.pane.text and "(approximate)" in lab.memory.text


def test_a_config_key_not_modelled_marks_the_roofline_title_and_so_its_saved_images():
    # Found by a trial: the readouts and the memory bar said "approximate", the chart (and its PNG/SVG) did not.
    import json

    lab = Lab(Scenario(model="llama-3-8b"), query={})
    assert "approximate" not in lab.roofline.figure.title.text
    config = json.loads((CATALOGUE_DIR / "qwen2.5-7b.json").read_text())
    lab.byo.config_text.value = json.dumps({**config, "mystery_layers": 12})
    lab.byo._read_config()
    assert lab.result.model.approximate
    head = lab.roofline.figure.title.text.split("\n")[0]
    assert head == "Qwen2ForCausalLM · NVIDIA H100 SXM5 80GB · decode · ≈ approximate"  # nameless: its class
    # The embed's one-line title carries it too.
    embed = Lab(Scenario(model="deepseek-v3", gpu="b200", weight_dtype="fp8", tp=8), query={"embed": ["true"]})
    assert embed.roofline.figure.title.text.endswith(" · decode · ≈ approximate")


def test_the_offline_page_marks_its_chart_approximate_and_points_to_no_tab_it_lacks():
    from app.standalone import standalone_html

    html = standalone_html(Scenario(model="deepseek-v3", gpu="b200", weight_dtype="fp8", tp=8))  # it fits
    # The chart's title as written into the page's document (JSON-escaped); its script writes it again as it moves.
    assert "decode \\u00b7 \\u2248 approximate\\nI = " in html
    assert "Approximate: num_nextn_predict_layers not modelled: every number here leaves them out" in html
    assert "see what the lab read" not in html  # the page has no Bring your own tab
    assert "decode \\u00b7 \\u2248 approximate" not in standalone_html(Scenario(model="llama-3-8b"))


def test_the_offline_pages_doc_says_what_it_leaves_out_of_the_served_readouts():
    # Found by a trial: docs/compare-share-embed.md said "Every served readout is on the page"; the page has no
    # Expected tokens/s rows (the served readouts do).
    from app.readouts import readouts_html
    from app.standalone import OFFLINE_READOUT_KEYS, standalone_html
    from core.expected import expected_step

    s = Scenario(model="llama-3-8b")
    r = s.evaluate()
    served = readouts_html(r, expected=expected_step(r))
    assert 'data-key="expected-tokens"' in served and 'data-key="expected-tokens-aggregate"' in served
    assert "expected-tokens" not in OFFLINE_READOUT_KEYS and "expected-tokens" not in standalone_html(s)
    doc = (ROOT / "docs" / "compare-share-embed.md").read_text(encoding="utf-8")
    offline = doc.split("## Offline page")[1].split("\n## ")[0]
    assert "Every served readout is on the page" not in offline
    assert "leaves out" in offline and "*Expected tokens/s* rows" in offline


def test_no_shipped_or_tested_config_shows_numbers_that_depend_on_an_unread_key_unmarked():
    import json

    from core import from_hf_config
    from core.model_catalogue import load_models

    models = list(load_models().values())
    for path in sorted(FIELD_CASES.glob("*.json")):
        cfg = json.loads(path.read_text())["input"]["config"]
        models.append(from_hf_config(cfg, model_id=path.stem, name=path.stem))
    for m in models:
        # Every warning (a key not modelled, a tower not counted) makes the model approximate, and says so.
        assert m.approximate == bool(m.warnings), m.id
        if m.warnings:
            assert m.approximate_note().startswith("approximate: ") and m.architecture()["approximate"]
    marked = {m.id for m in models if m.approximate}
    assert {"deepseek-v3", "gemma-3-12b", "gemma-3-27b", "cross-attention-layers"} <= marked
    assert "gemma-2-9b" not in marked  # its sliding_window_size is sliding_window's other name, now read


# --- a pasted config.json travels in the link, or in a scenario file (issue 30) ------------------------------------
def _link_of(lab: Lab) -> dict:
    from urllib.parse import parse_qs, urlencode

    return parse_qs(urlencode(lab.link.query()), keep_blank_values=True)  # as the page's address holds it


def test_a_link_carries_a_pasted_config_and_opens_the_same_model_levers_and_pins():
    lab = Lab()
    lab.byo.config_file.value = {"my-gpt2.json": GPT2.replace(', "_name_or_path": "openai-community/gpt2"', "")}
    lab.scenario.param.update(batch=17, context=4096, weight_dtype="fp8")
    lab.pin_current()
    query = _link_of(lab)
    assert query["model"] == ["config-my-gpt2"] and len(query["config"][0]) < 300
    assert "carries my-gpt2's config.json" in lab.byo.share_report.object
    opened = Lab(query=query)
    assert opened.state.notices == [] and not opened.link.notice.visible
    s = opened.scenario
    assert (s.model, s.batch, s.context, s.weight_dtype) == ("config-my-gpt2", 17, 4096, "fp8")
    assert s.catalogue.model(s.model).name == "my-gpt2"  # named by the file's name, as in the first session
    assert opened.result.n_params == lab.result.n_params == 124_439_808
    assert opened.state.pins == lab.state.pins and opened.state.pins[0].levers["model"] == "config-my-gpt2"
    assert _link_of(opened)["config"] == query["config"]  # and it passes on
    # Whoever opens the link sees what was read, as the first session did (an engineer's trial: the tab was empty).
    report = opened.byo.config_report.object
    assert report == lab.byo.config_report.object and "layers L" in report and "my-gpt2" in report


def test_the_notices_of_a_link_read_later_head_the_page_once_said():
    """Most pages have no notice: none is built; one said after the page is laid out (the link's config.json read
    off the event loop) is put at the head of the page, above the error of a scenario, in either arrangement."""
    lab = Lab(query={})
    assert lab.link.notice.pane is None and lab.error.pane is None
    lab.state.error = "Could not evaluate this scenario: x"
    lab.state.notices = ["ignored gpu='<i>x</i>': accepted h100-sxm, …"]
    assert lab.link.notice.visible and "&lt;i&gt;x&lt;/i&gt;" in lab.link.notice.text
    assert "<b>Part of this link was ignored</b>; the rest of it applies." in lab.link.notice.text
    # A link ignored whole does not say "part of" it (a new user's trial: 101 parameters).
    whole = Lab(query={f"k{i}": ["1"] for i in range(101)})
    assert whole.link.notice.text.startswith("<b>This link was ignored</b>; the lab opens as it starts.")
    for present in (False, True):
        lab.state.present = present
        panes = [p for p in lab.layout.select(pn.pane.PaneBase) if p in (lab.link.notice.pane, lab.error.pane)]
        assert panes == [lab.link.notice.pane, lab.error.pane]


def test_a_link_whose_config_the_reader_refuses_says_so_and_the_rest_applies():
    from core.permalink import config_for_link

    query = {"config": config_for_link('{"n_layer": "twelve", "n_embd": 768, "n_head": 12}'),
             "model": "config-x", "batch": "9", "gpu": "h200"}
    lab = Lab(query=query)
    assert (lab.scenario.model, lab.scenario.batch, lab.scenario.gpu) == ("llama-3-70b", 9, "h200")
    assert len(lab.state.notices) == 1 and lab.state.notices[0].startswith("ignored config: ")
    assert lab.state.notices[0].endswith("; the lab keeps Llama-3-70B")
    assert lab.link.notice.visible and "ignored config: " in lab.link.notice.text


def test_a_config_too_large_for_a_link_reopens_from_its_scenario_file():
    import json
    import random

    labels = {str(i): "".join(random.Random(i).choices("abcdefghijklmnopqrstuvwxyz", k=12)) for i in range(800)}
    big = json.dumps({**json.loads(GPT2), "id2label": labels}, indent=2)
    lab = Lab()
    lab.byo.config_text.value = big
    lab.byo._read_config()
    lab.scenario.param.update(batch=33, kv_dtype="fp8")
    lab.pin_current()
    lab.scenario.batch = 40
    assert "config" not in lab.link.query() and "too large for a link" in lab.byo.share_report.object
    saved = lab.byo.save_scenario.callback().getvalue()
    assert json.loads(saved)["config"] == json.dumps(json.loads(big), separators=(",", ":"))
    opened = Lab()
    opened.scenario.batch = 2
    opened.byo.scenario_file.value = {"roofline-lab-scenario.json": saved.encode()}
    s = opened.scenario
    assert (s.model, s.batch, s.kv_dtype) == ("config-gpt2", 40, "fp8")
    assert opened.result.n_params == lab.result.n_params
    assert opened.state.pins == lab.state.pins
    assert "Opened roofline-lab-scenario.json: gpt2, its levers and 1 pin(s)." in opened.byo.scenario_report.object
    opened.byo.scenario_file.value = {"notes.json": b'{"kind": "a list"}'}
    assert "Not opened: notes.json: not a scenario file" in opened.byo.scenario_report.object
    opened.byo.scenario_file.value = {"deep.json": ("[" * 5000 + "]" * 5000).encode()}  # an engineer's trial
    assert "Not opened: deep.json: nests deeper than the JSON reader allows." in opened.byo.scenario_report.object
    assert opened.scenario.model == "config-gpt2"
@pytest.mark.parametrize("levers", [{"model": "qwen3-30b-a3b", "tp": 2}, {"model": "mixtral-8x7b", "tp": 2},
                                    {"model": "llama-3-8b"}, {"model": "llama-3-8b", "cuda_graphs": True},
                                    {"model": "llama-3-70b", "tp": 8}])
def test_no_rung_sits_under_a_ceiling_the_roofline_does_not_draw(levers):
    # Issue 30: an MoE at TP = 2 drew its B = 1 rung at 1.58 TFLOP/s, under the memory roof (3.35) and under the
    # drawn overhead ceiling (3.10, the current B's FLOPs with attention): its own ceiling, B = 1's weight FLOPs
    # over the launches, was not drawn.
    # Split over GPUs each rung stays on its ceiling (the articles' figure), and a drawn bar under it marks what
    # its step sustains with the communication.
    from app.roofline_view import COMMUNICATION_RUNGS_KEY, OVERHEAD_RUNGS_KEY

    lab = Lab(Scenario(**levers))
    view, r = lab.roofline, lab.result
    d, lad = view.ladder.data, r.ladder
    y, overhead, foot = np.asarray(d["y"]), np.asarray(d["overhead"]), np.asarray(d["comm_foot"])
    roof = np.minimum(r.peak_flop_per_s, r.bandwidth * np.asarray(d["x"])) / 1e12
    held = y < roof * (1 - 1e-9)  # rungs something other than the roof holds down
    assert np.allclose(overhead[held], y[held])  # each on its own drawn ceiling
    assert view._optional_items[OVERHEAD_RUNGS_KEY].visible == bool(held.any())
    sustained = lad.flop_weights / lad.step_time_s_weights / 1e12
    dropped = sustained < y * (1 - 1e-9)
    assert np.allclose(foot[dropped], sustained[dropped]) and np.isnan(foot[~dropped]).all()
    assert view._optional_items[COMMUNICATION_RUNGS_KEY].visible == bool(dropped.any())
    assert dropped.any() == (r.gpus_per_replica > 1)  # only split over GPUs, where something is communicated
    bars = next(x for x in view.figure.renderers if getattr(x.glyph, "y", None) == "comm_foot")
    star = next(x for x in view.figure.renderers if x.data_source is view.point)
    assert (bars.level, star.level) == ("annotation", "glyph")  # over the star, which sits on the current B's rung
    if levers == {"model": "qwen3-30b-a3b", "tp": 2}:
        assert held[0] and d["y"][0] < view.overhead.data["y"][0]  # B = 1, under the horizontal ceiling too


def test_the_embeds_summary_pairs_tokens_per_s_with_the_flop_rate_that_counts_kv_reads():
    """A docs writer's trial: at S = 65,536 without GQA the summary printed the weights' roofline, 153.6 TFLOP/s
    (15.5 %), beside 27 tokens/s, which counts the KV reads (97 % of the traffic): 153.6 TFLOP/s would be ~1,089
    tokens/s.  By hand: I counting KV = 1.7758 FLOP/byte × 4.8 TB/s (H200) = 8.524 TFLOP/s, 0.862 % of 989.4."""
    from app.lab import embed_summary

    text = embed_summary(Scenario(gpu="h200", batch=32, context=65536, gqa=False).evaluate())
    assert "<b>I = 2·B·k / p = 32 FLOP/byte</b> · ridge 206 · 8.524 TFLOP/s counting KV reads (0.862 % of peak) · " \
           "27 tokens/s ceiling (if it fit) · memory does not fit · Llama-3-70B, BF16, h200" in text
    assert "153.6" not in text
    fits = embed_summary(Scenario(model="llama-3-8b", batch=4).evaluate())
    assert " tokens/s ceiling · memory fits · Llama-3-8B" in fits  # a docs writer read it as an engine's rate


def test_the_embed_names_the_levers_it_has_no_control_for():
    """A docs writer's trial: a link to Qwen3-30B-A3B on MI300Xs with an FP8 cache at TP = 2 showed an embed whose
    summary and drawer said neither (its figures are one GPU's of two, its cache half the bytes)."""
    link = {"embed": "true", "model": "qwen3-30b-a3b", "gpu": "mi300x", "batch": "64", "weight-dtype": "fp8",
            "kv-dtype": "fp8", "context": "32768", "tp": "2", "cuda-graphs": "true"}
    summary = Lab(query=link)._embed_summary.object
    assert summary.endswith("Qwen3-30B-A3B, FP8, mi300x · also set: KV-cache precision p_kv = fp8, TP = 2, "
                            "CUDA graphs on</div>")
    assert "also set" not in Lab(query={"embed": "true", "batch": "4"})._embed_summary.object  # the drawer has B


def test_the_embeds_summary_gives_an_moes_intensity_under_its_own_formula():
    """An engineer's trial: Mixtral at B = 8 in FP8 read "I = 2·B·k/p = 4.885 FLOP/byte", where 2·8·1/1 is 16 (an MoE
    reads experts it does not use for every token): the formula `explain` gives, whose product is the value shown."""
    from app.lab import embed_summary

    r = Scenario(model="mixtral-8x7b", gpu="h200", weight_dtype="fp8", batch=8).evaluate()
    text = embed_summary(r)
    assert "<b>I = 2·B·k·N_active / (N_read·p) = 4.885 FLOP/byte</b>" in text
    assert "2·B·k / p" not in text
    assert round(r.arithmetic_intensity_weights, 3) == 4.885 != 2 * 8 * 1 / 1


def test_the_embeds_key_keeps_it_beside_the_workload_it_names():
    """A docs writer's trial at 500×450 and 360×640: "△ it, counting KV reads" started a line of its own, away from
    "★ your workload"; the two are one entry of the key (an entry never breaks across lines)."""
    import re

    from app.lab import embed_key

    entries = re.findall(r'<span class="k-item">(.*?)</span>(?= <span class="k-item">|</div>)',
                         embed_key(sparse=False, reference=False, pins=0, measured=0, other_phase="prefill"))
    (entry,) = [e for e in entries if "your workload" in e]
    assert "it, counting KV reads" in entry


def test_the_launch_ceiling_is_keyed_only_while_the_chart_shows_it():
    """A teacher's trial: at tour step 12 (a 2,000-token prefill) the launch ceiling sat far above the y axis and the
    legend still listed "launch overhead ceiling at your B"."""
    from app.roofline_view import OVERHEAD_KEY

    lab = Lab(Scenario())
    view = lab.roofline
    assert view.overhead_item.label.value == OVERHEAD_KEY
    assert view.overhead_item.visible and view.overhead.data["y"][0] <= view.figure.y_range.end
    lab.scenario.param.update(phase="prefill", prompt_len=2000)
    assert view.overhead.data["y"][0] > view.figure.y_range.end and not view.overhead_item.visible
    lab.scenario.phase = "decode"
    assert view.overhead_item.visible


def test_the_tabs_are_one_bar_over_the_views_opened_and_only_the_open_ones_shows():
    """The tab names are one control (Bokeh's radio button group) over the views opened so far: the first page holds
    no panel or placeholder for the ten tabs not opened, and a view opened once stays, hidden, while another shows."""
    from bokeh.document import Document
    from bokeh.models import RadioButtonGroup, Spacer, TabPanel, Tabs

    lab = Lab(Scenario(model="llama-3-8b"), query={})
    doc = Document()
    doc.add_root(lab.layout.get_root(doc))
    kinds = {type(m) for m in doc.models}
    assert not kinds & {Tabs, TabPanel, Spacer}
    (bar,) = [m for m in doc.models if isinstance(m, RadioButtonGroup) and "lab-tabs" in m.css_classes]
    assert bar.labels == list(TABS) and bar.active == 0
    assert lab.tab_content.objects == [lab._tab_views["Roofline"]]
    bar.active = TABS.index("Compare")  # a click in the browser
    assert lab.state.tab == "Compare" and lab.compare is not None
    compare, roofline = lab._tab_panes["Compare"], lab._tab_panes["Roofline"]
    assert lab.tab_content.objects == [roofline, compare] and compare.visible and not roofline.visible
    lab.state.tab = "Roofline"  # a tour step or a link
    assert bar.active == 0 and roofline.visible and not compare.visible
    lab.state.tab = "Compare"
    assert lab._tab_panes["Compare"] is compare and len(lab.tab_content.objects) == 2  # kept, not rebuilt


def test_a_link_to_a_tab_opens_that_tab_alone():
    lab = Lab(query={"tab": "KV table"})
    shown = [name for name, pane in lab._tab_panes.items() if pane.visible]
    assert shown == ["KV table"] and lab.tab_bar.value == "KV table"


def test_the_pins_table_names_its_gpu_and_says_its_tokens_are_the_batchs():
    # The Pins table's tokens/s is the whole batch's (the Compare tab's first row is per sequence): its header says
    # so; its levers name the GPU as the selector and the readouts do, not by the catalogue's id.
    from app.pins_view import pins_table_html
    from core.pins import Pin, compare
    from core.units import fmt_rate

    s = Scenario(batch=8)
    html = pins_table_html(compare([Pin("eight", s.levers())], s.catalogue))
    r = s.evaluate()
    # Which traffic each column counts, in view (an engineer's trial read INT4's "11.28 launch ceiling" beside
    # "658 memory" as one row contradicting itself): attainable is the weights-only step's, tokens/s the whole step's.
    assert "ceiling, the batch, with KV reads; " in html and "whole batch (all B sequences)" in html
    assert "TFLOP/s per GPU, weights only" in html
    # The 70B at B = 8 does not fit one H100: its rate says so where it is, as the readouts and Compare do.
    assert not r.fits and f'{fmt_rate(r.tokens_per_s_with_kv)}<br><span class="unit">(if it fit)</span>' in html
    assert "the roofline's ceiling on tokens per second" in html  # a ceiling, as the readouts say (a new user's trial)
    assert f"Llama-3-70B · {r.gpu.name}<br>B = 8" in html and "· h100-sxm<br>" not in html
    assert fmt_rate(r.tokens_per_s_with_kv) in html and r.tokens_per_s_with_kv == 8 * r.tokens_per_s_per_sequence
    assert "micro-batches" not in html
    # Split into stages, the batch's tokens/s counts the PP micro-batches in flight, and says so (a trial: 4 × 28 is
    # not 448 at PP = 4).
    staged = Scenario(model="nemotron-h-56b", batch=4, pp=4)
    r = staged.evaluate()
    html = pins_table_html(compare([Pin("four", staged.levers())], staged.catalogue))
    assert f"<td>{fmt_rate(r.tokens_per_s_with_kv)}<br><span class=\"unit\">B × 4 micro-batches</span>" in html
    assert r.tokens_per_s_with_kv == pytest.approx(4 * 4 * r.tokens_per_s_per_sequence, rel=1e-12)


def test_a_pins_attainable_under_its_launches_says_which_ceiling_holds_it():
    # A teacher's trial: batch 4, INT4 and k = 4 of Llama-3-8B all at I = 4, BW·I = 13.4 TFLOP/s; INT4's row read
    # 11.28, said nowhere. Its step waits on its kernel launches: 16.06 GFLOP / 1.424 ms.
    import re

    from app.pins_view import pins_table_html
    from core.pins import compare, lever_preset

    s = Scenario(model="llama-3-8b")
    html = pins_table_html(compare(lever_preset(s.levers(), s.catalogue), s.catalogue))
    cells = re.findall(r'<tr data-pin="\d">(?:<td.*?</td>){3}<td>[^<]*</td><td>(.*?)</td>', html)
    assert [c.split("<br>")[0] for c in cells] == ["13.4", "11.28", "13.4"]
    r = s.clone(weight_dtype="int4").evaluate()
    assert r.flop_per_step_weights / r.launch_overhead_s / 1e12 == pytest.approx(11.28, abs=0.005)
    assert cells[1].endswith('title="16.06 GFLOP / 1.424 ms of launches, under min(P_peak, BW·I) = 13.4 TFLOP/s">'
                             "launch ceiling</span>")
    assert "launch ceiling" not in cells[0] + cells[2]
    assert "or the step's FLOP over its kernel launches where its weights-only step waits" in html  # the column's
    # the bound under its tokens/s is the step's counting KV reads: 1.519 ms of reads beside 1.424 ms of launches
    assert r.bound == "memory" and r.step_time_s_with_kv > r.launch_overhead_s


@pytest.mark.parametrize("levers, weights, kv", [
    ({"batch": 4}, "(weights, B = 4, k = 1, p = BF16)", "(S = 8,192, KV BF16)"),
    ({"weight_dtype": "int4"}, "(weights, B = 1, k = 1, p = INT4)", "(S = 8,192, KV BF16)"),
    ({"spec_k": 4, "context": 2048, "kv_dtype": "fp8", "gqa": False}, "(weights, B = 1, k = 4, p = BF16)",
     "(S = 2,048, KV FP8, GQA off)"),
    ({"phase": "prefill", "prompt_len": 3000}, "(weights, B = 1, P = 3,000, p = BF16)", "(KV BF16)"),
])
def test_the_roofline_title_names_the_levers_that_set_each_intensity(levers, weights, kv):
    # A saved image of batch 4, of INT4 and of k = 4 showed the same intensity under the same title: each line now
    # names the levers that set it (I = 2·B·k/p; the KV reads add S and p_kv), so the image says which it is.
    lines = Lab(Scenario(**levers), {}).roofline.figure.title.text.split("\n")
    assert lines[1].startswith("I = ") and f"FLOP/byte {weights}: " in lines[1]
    assert f"counting KV reads {kv}: " in lines[2]


def test_the_roofline_title_says_when_the_workload_does_not_fit():
    # A saved chart of Llama-3-70B in BF16 on one H100 (141 GB of weights on 80 GB) read like any other.
    head = Lab(Scenario(), {}).roofline.figure.title.text.split("\n")[0]
    assert head == "Llama-3-70B · NVIDIA H100 SXM5 80GB · decode · does not fit in memory"
    assert "does not fit" not in Lab(Scenario(tp=2), {}).roofline.figure.title.text


def test_the_workload_star_is_hollow_where_it_does_not_fit_as_the_ladders_rungs_are():
    # The ladder's key says "hollow: does not fit"; the star stayed filled on the default page (131.4 GiB of weights
    # in 80 GiB).  The served instant redraw and the offline page write the same column (browser tier).
    from app.roofline_view import POINT_COLOR, RooflineView

    view = RooflineView(Scenario().evaluate())
    star = next(r for r in view.figure.renderers if r.data_source is view.point)
    assert star.glyph.fill_color.field == "fill" and view.point.data["fill"] == ["white"]
    assert RooflineView(Scenario(tp=2).evaluate()).point.data["fill"] == [POINT_COLOR]


def test_a_shared_links_config_shows_what_the_lab_read_on_the_bring_your_own_tab():
    """A trial: a link carrying a pasted config reopened the model and its readouts ("see what the lab read"), but the
    Bring your own tab was empty: the link's config was recorded before its model was selected, and the report
    waited for a config change that did not come."""
    from core.permalink import config_for_link

    text = (ROOT / "tests" / "data" / "jamba-1.5-mini.config.json").read_text()
    lab = Lab()
    lab.state.tab = "Bring your own"
    lab.byo.config_text.value = text
    lab.byo._read_config()
    model = lab.scenario.model
    # The link the page gives on that tab: it opens on the tab, built before the link's config is read.
    query = {"model": [model], "config": [config_for_link(text)], "tab": ["Bring your own"]}
    assert query["config"][0] in lab.link.address.query and "tab=Bring" in lab.link.address.query
    opened = Lab(query=query)
    assert opened.scenario.model == model
    assert opened.byo.config_report.object.startswith('<div class="ok" data-readout="config">Read ')
    assert "How it was read" in opened.byo.config_report.object


def test_the_measurements_table_names_the_split_and_a_ceiling_that_does_not_fit():
    # Llama-3-70B in BF16 (141 GB) on one 80-GB H100 does not fit at any batch: its ceiling was printed bare.
    lab = Lab(Scenario(model="llama-3-70b"))
    lab.byo.csv_text.value = "batch,context,tokens_per_s\n1,128,20"
    lab.byo._plot()
    report = lab.byo.measured_report.object
    assert "Against Llama-3-70B on NVIDIA H100 SXM5 80GB, weights BF16" in report, report
    assert " (if it fit: it does not)</td>" in report
    lab.scenario.tp = 2  # fits on two: the ceiling stands, and the split is named
    report = html.unescape(lab.byo.measured_report.object)
    assert "(TP = 2; MBU and MFU are one GPU's), weights BF16" in report, report
    assert "if it fit" not in report


def test_a_32_bit_checkpoints_stored_table_says_its_2_byte_rows_are_the_labs_count():
    # A trial: the report's note said the FP32 files hold twice the bytes, and the table below it read
    # "The checkpoint as stored: … × 2 B (BF16)" without a word.
    from app.byo_view import report_html
    from core.config_reader import from_hf_config
    cfg = {"hidden_size": 2048, "intermediate_size": 5632, "num_attention_heads": 32, "num_key_value_heads": 4,
           "num_hidden_layers": 22, "vocab_size": 32000}
    fp32 = html.unescape(report_html(from_hf_config({**cfg, "torch_dtype": "float32"}, model_id="t", name="t")))
    assert "The checkpoint as the lab counts it stored: 16-bit, as engines serve it (its FP32 files hold twice" in fp32
    bf16 = html.unescape(report_html(from_hf_config({**cfg, "torch_dtype": "bfloat16"}, model_id="t", name="t")))
    assert "The checkpoint as stored:" in bf16 and "FP32 files" not in bf16


@pytest.mark.parametrize("typed, said", [
    ("\u22129000", "FP4 peak (TFLOP/s) must be a positive number from 0.01 to 1e+07, got -9000.</div>"),
    ("0", "FP4 peak (TFLOP/s) must be a positive number from 0.01 to 1e+07, got 0.</div>"),
    ("9 PFLOP", "FP4 dense peak (TFLOP/s): '9 PFLOP' is not a number"),
    # 1e-400 read as 0 answered "got 0", a figure nobody typed (a trial); 1e400 read as inf
    ("1e-400", "FP4 dense peak (TFLOP/s): '1e-400' is too small for a number the lab holds"),
    ("−1e400", "FP4 dense peak (TFLOP/s): '−1e400' is too large for a number the lab holds"),
    ("0.000e5", "FP4 peak (TFLOP/s) must be a positive number from 0.01 to 1e+07, got 0.</div>"),
])
def test_your_gpu_forms_figures_are_read_as_typed(typed, said):
    # A trial: "−9000" typed with the lab's own minus sign became 9000 (the number field dropped the sign) and the GPU
    # was added with an FP4 roof of 9,000 TFLOP/s; pasted, it read NaN and the FP4 figure was dropped without a word;
    # a 0 was "not given".
    lab = Lab()
    answer = add_gpu(lab, bandwidth="8", capacity="180", bf16="2250", fp4=typed)
    assert f"Not added: {said}" in answer, answer
    assert lab.scenario.gpu == "h100-sxm"


def test_a_gpu_name_a_page_would_not_print_is_refused():
    # An attacker's trial: "abc\u202edcba 7" (a right-to-left override) turned the form's answer backwards.
    lab = Lab()
    answer = add_gpu(lab, "abc\u202edcba 7", "1", "80", bf16="100")
    assert "Not added: name holds a character a page does not print (\\u202e)" in answer, answer
    assert lab.scenario.gpu == "h100-sxm"


def test_a_gpu_whose_name_slugs_as_an_earlier_ones_says_it_replaces_it():
    # An attacker's trial: "My GPU" (BF16 100) then "my-gpu!" (BF16 900) are one id; the second replaced the first
    # without a word.
    lab = Lab()
    first = add_gpu(lab, "My GPU", "1", "80", bf16="100")
    assert "replaces" not in first
    second = add_gpu(lab, "my-gpu!", "1", "80", bf16="900")
    assert "it replaces your earlier My GPU (custom-my-gpu): names that differ only in case and punctuation" in second
    assert lab.scenario.gpu == "custom-my-gpu" and lab.result.peak_flop_per_s == 900e12
    assert "replaces" not in add_gpu(lab, "my-gpu!", "1", "80", bf16="900")  # the same GPU again replaces nothing
