"""Permalinks, pins and data export in core (no UI)."""

import base64
import csv
import io
import json
import random
import re
import zlib
from urllib.parse import parse_qs, urlencode

import pytest
from inputs import longest_written_query

from core import Scenario
from core.cli import build_parser
from core.export import LADDER_COLUMNS, ladder_csv, pins_csv, to_json
from core.permalink import from_query, to_query
from core.pins import MAX_PINS, Pin, compare, lever_preset
from core.scenario import LEVERS
from core.units import GiB


def test_round_trip_restores_levers_and_pins_exactly():
    levers = Scenario(model="llama-3-8b", gpu="h200", batch=56, spec_k=3, context=32768, gqa=False,
                      weight_dtype="fp8", kv_dtype="int8", phase="prefill", prompt_len=4000, acceptance=0.85,
                      capacity_convention="decimal", reserve_bytes=1.5 * GiB).levers()
    pins = [Pin("mine", Scenario(batch=7).levers()), *lever_preset(levers)]
    got_levers, got_pins, notices, *_ = from_query(to_query(levers, pins))
    assert notices == []
    assert got_levers == levers
    assert got_pins == pins


def test_query_names_are_the_command_line_flags():
    explain = build_parser()._subparsers._group_actions[0].choices["explain"]
    flags = {s.lstrip("-") for a in explain._actions for s in a.option_strings}
    assert {lever.flag for lever in LEVERS} <= flags


def test_bad_values_are_ignored_with_a_notice_and_the_rest_applies():
    levers, pins, notices, *_ = from_query({
        "model": "llama-3-8b", "batch": "0", "gpu": "h900", "context": "lots", "no-gqa": "maybe",
        "reserve": "-2", "acceptance": "1.5", "spec-k": "4", "colour": "red", "pins": "{not json",
    })
    assert levers == {"model": "llama-3-8b", "spec_k": 4}
    assert pins == []
    text = "\n".join(notices)
    for fragment in ("batch='0' is not a whole number from 1 to 65,536", "gpu='h900' is not one of v100",
                     "context='lots'", "no-gqa='maybe' is not true or false", "reserve='-2'",
                     "acceptance='1.5' is not a number from 0 to 1", "unknown parameter 'colour'",
                     "pins: not valid JSON"):
        assert fragment in text, fragment


def test_a_bad_pin_field_drops_only_that_field():
    _, pins, notices, *_ = from_query({"pins": json.dumps([{"name": "p", "batch": "4", "context": "lots"}, 3])})
    assert len(pins) == 1 and pins[0].levers["batch"] == 4 and pins[0].levers["context"] == 8192
    assert any("pin 'p': ignored context='lots'" in n for n in notices)
    assert any("pin 2: not an object" in n for n in notices)


def test_a_pin_whose_model_or_gpu_is_not_here_is_dropped_not_renamed():
    """A pin of a pasted config (read in another session) would otherwise be Llama-3-70B under the name 'gpt2 · …'."""
    records = [{"name": "gpt2 · h200", "model": "config-gpt2", "gpu": "h200", "batch": "4"},
               {"name": "p", "gpu": "nope"}, {"name": "kept", "model": "llama-3-8b", "batch": "8"}]
    _, pins, notices, *_ = from_query({"pins": json.dumps(records)})
    assert [(p.name, p.levers["model"], p.levers["batch"]) for p in pins] == [("kept", "llama-3-8b", 8)]
    assert any(n.startswith("ignored pin 'gpt2 · h200': model='config-gpt2'") and "Bring your own" in n
               for n in notices), notices
    assert any(n.startswith("ignored pin 'p': gpu='nope'") for n in notices), notices


def test_going_back_keeps_the_pins_of_the_sessions_own_models():
    """Back to an entry of the session's own link: its pins of a config the session read are read in the session's
    catalogue (a fresh one dropped them, as a link opened anew must)."""
    from app.permalink_view import PermalinkView
    from app.state import LabState
    from core.config_reader import from_hf_config
    from core.model_catalogue import CATALOGUE_DIR

    state = LabState(scenario=Scenario())
    model = state.scenario.add_model(from_hf_config(json.loads((CATALOGUE_DIR / "qwen2.5-7b.json").read_text()),
                                                    model_id="config-mine", name="mine"))
    records = [{"name": "mine at B = 4", "model": model.id, "batch": "4"}, {"name": "other", "batch": "8"}]
    view = PermalinkView(state=state)
    view.address.back = "?" + "pins=" + json.dumps(records) + "#1"
    assert [(p.name, p.levers["model"], p.levers["batch"]) for p in state.pins] == [
        ("mine at B = 4", "config-mine", 4), ("other", "llama-3-70b", 8)]


def test_at_most_sixteen_pins():
    many = [{"name": f"p{i}", "batch": str(i + 1)} for i in range(18)]
    _, pins, notices, *_ = from_query({"pins": json.dumps(many)})
    assert len(pins) == MAX_PINS == 16
    assert any("after the first 16" in n for n in notices)


def test_pins_in_links_carry_only_what_differs_from_the_defaults():
    q = to_query(Scenario().levers(), [Pin("b4", Scenario(batch=4).levers())])
    assert json.loads(q["pins"]) == [{"name": "b4", "batch": "4"}]


# --- pins ----------------------------------------------------------------------
def test_the_three_levers_coincide_and_the_table_says_what_differs():
    # With CUDA graphs: without them the INT4 step's weights (4.0 GB, 1.2 ms) are read faster than its 356
    # kernels launch (1.42 ms), and the third ceiling holds that point lower (tests/unit/test_scenario.py).
    rows = compare(lever_preset(Scenario(model="llama-3-8b", cuda_graphs=True).levers()))
    assert [r.pin.name for r in rows] == ["batch 4 · Llama-3-8B · h100-sxm", "INT4 weights · Llama-3-8B · h100-sxm",
                                          "speculation k=4 · Llama-3-8B · h100-sxm"]
    assert {r.result.arithmetic_intensity_weights for r in rows} == {4.0}
    assert len({r.result.attainable_flop_per_s_weights for r in rows}) == 1
    batch, int4, spec = (r.notes for r in rows)
    assert batch == ("B = 4: KV memory grows with B only — 4.00 GiB of cache for 4 sequences",)
    assert int4 == ("INT4 weights: 3.7 GiB held — p changes the weights (and quality), not the KV cache",)
    assert spec[0].startswith("k = 4: pays only with acceptance — at α = 0.70 a verify step yields 2.53 tokens")


def test_pins_at_different_intensities_need_no_notes():
    rows = compare([Pin("a", Scenario(batch=2).levers()), Pin("b", Scenario(batch=8).levers())])
    assert all(r.notes == () for r in rows)


# --- export --------------------------------------------------------------------
def test_ladder_csv_has_unit_headers_and_real_values():
    r = Scenario(model="llama-3-8b").evaluate()
    rows = list(csv.DictReader(io.StringIO(ladder_csv(r))))
    # the scenario first (a docs writer's pasted table had batch and numbers only)
    assert list(rows[0]) == ["model", "gpu", "weight_dtype", "kv_dtype", "spec_k", "context_tokens", "tensor_parallel",
                             "pipeline_parallel", *(h for _, h in LADDER_COLUMNS), "approximate_keys_not_modelled"]
    assert (rows[0]["model"], rows[0]["gpu"], rows[0]["weight_dtype"], rows[0]["context_tokens"]) == (
        "Llama-3-8B", "NVIDIA H100 SXM5 80GB", "bf16", "8192")
    assert rows[0]["approximate_keys_not_modelled"] == ""  # a shipped model: every key modelled
    assert rows[0]["batch"] == "1" and float(rows[0]["attainable_flop_per_s_weights"]) == 3.35e12
    assert rows[-1]["fits_in_memory"] == "False"


def test_pins_csv_and_json():
    rows = compare(lever_preset(Scenario().levers()))
    table = list(csv.DictReader(io.StringIO(pins_csv(rows))))
    assert [t["name"].split(" · ")[0] for t in table] == ["batch 4", "INT4 weights", "speculation k=4"]
    assert [t["differs_by"] for t in table] == ["batch=4", "weight-dtype=int4", "spec-k=4"]
    assert float(table[1]["weight_bytes_read"]) == pytest.approx(70_553_706_496 * 0.5)
    doc = json.loads(to_json(Scenario().evaluate(), rows))
    assert doc["scenario"]["arithmetic_intensity_weights"] == 1
    assert len(doc["ladder"]) == 11  # B = 1 ... 1024, the first power of two past twice the ridge batch 295
    assert doc["pins"][2]["spec_k"] == 4


def test_a_custom_gpu_travels_in_the_link():
    from core.hardware import custom_accelerator

    gpu = custom_accelerator("Lab card", bandwidth_tbs=2.0, capacity_gb=48, bf16=400, fp8=800)
    state = from_query(to_query({**Scenario().levers(), "gpu": gpu.id}, custom_gpu=gpu))
    assert state.notices == []
    assert state.custom_gpu == gpu and state.levers["gpu"] == gpu.id
    bad = from_query({"custom-gpu": '{"name": "x", "bandwidth_tbs": -1, "capacity_gb": 8, "bf16": 10}'})
    assert bad.custom_gpu is None
    # One made on the command line with its scale-up link travels with the link.
    linked = custom_accelerator("H20", bandwidth_tbs=4.0, capacity_gb=96, bf16=148, link_gbs=450, max_node=8)
    state = from_query(to_query({**Scenario().levers(), "gpu": linked.id}, custom_gpu=linked))
    assert state.custom_gpu == linked and state.custom_gpu.interconnect.per_direction_bandwidth == 450e9
    assert "bandwidth (TB/s) must be a positive number from 0.001 to 10000, got -1" in bad.notices[0]


def test_a_link_to_a_session_config_says_why_it_does_not_travel():
    state = from_query({"model": "config-your-model", "batch": "4"})
    assert state.levers == {"batch": 4}
    assert "this link carries no config.json for it: paste it again under Bring your own" in state.notices[0]


def test_whole_numbers_written_as_floats_are_accepted():
    assert from_query({"spec-k": "2.0", "batch": "4"}).levers == {"spec_k": 2, "batch": 4}
    assert "spec-k='2.5'" in from_query({"spec-k": "2.5"}).notices[0]


def test_csv_cells_that_a_spreadsheet_would_run_are_neutralised():
    pins = [Pin('=HYPERLINK("https://evil.example","x")', Scenario().levers()), Pin("+1", Scenario().levers()),
            Pin("plain", Scenario().levers())]
    rows = list(csv.DictReader(io.StringIO(pins_csv(compare(pins)))))
    assert [r["name"] for r in rows] == ['\'=HYPERLINK("https://evil.example","x")', "'+1", "plain"]
    assert float(rows[0]["tokens_per_s_with_kv"]) > 0  # numbers stay numbers


@pytest.mark.parametrize("name", [" =HYPERLINK(\"https://evil.example\")", "\u00a0=1+1", "\n@SUM(A1)", " \t+1",
                                  "\uff1dHYPERLINK(\"https://evil.example\")", "\uff0b1", "\uff0d1", "\uff20SUM(A1)",
                                  "\ufe66cmd", "  \uff1d1"])
def test_a_formula_behind_whitespace_or_in_fullwidth_signs_is_neutralised(name):
    """Issue 31, F10: a name starting with a space then ``=``, or with the fullwidth ``＝`` (which spreadsheets
    read as ``=``), was written without the guard."""
    rows = list(csv.DictReader(io.StringIO(pins_csv(compare([Pin(name, Scenario().levers())])))))
    assert rows[0]["name"] == "'" + name


def test_text_that_only_contains_a_sign_later_is_left_alone():
    rows = list(csv.DictReader(io.StringIO(pins_csv(compare([Pin("batch 4 = fast", Scenario().levers()),
                                                             Pin(" plain", Scenario().levers())])))))
    assert [r["name"] for r in rows] == ["batch 4 = fast", " plain"]


@pytest.mark.parametrize("given, name, notice", [
    ({"a": 1}, "pin 1", "pin 1: ignored its name: not text (a JSON object)"),
    (123, "pin 1", "pin 1: ignored its name: not text (a JSON number)"),
    ([1], "pin 1", "pin 1: ignored its name: not text (a JSON list)"),
    (True, "pin 1", "pin 1: ignored its name: not text (a JSON true/false)"),
    ("y" * 100, "y" * 39 + "…", "pin 1: its name was cut to 40 characters (of 100)"),
    # Cut between words and marked, as the lab's own names are (a trial's "… Llama-3-7" read as a 7B).
    ("a" * 30 + " Llama-3-70B tail", "a" * 30 + " Llama-3…", "pin 1: its name was cut to 40 characters (of 47)"),
    ("batch 4 <b>", "batch 4 <b>", None),
])
def test_a_pins_name_is_text_and_what_is_not_is_said(given, name, notice):
    """A helper's trial: a link's pin named {"a": 1} showed as "{'a': 1}" and a long name was cut, silently."""
    state = from_query({"pins": json.dumps([{"name": given, "batch": "4"}])})
    assert [p.name for p in state.pins] == [name] and state.pins[0].levers["batch"] == 4
    assert state.notices == ([notice] if notice else [])


def test_pins_on_gpus_of_your_own_travel_with_the_link_and_the_scenario_file():
    """An engineer's trial: their own H20 pinned at B = 4, then an H100 and a B200 pinned with the B200 selected; the
    link carried no H20 ("ignored pin 'phi-4 · custom-h20 · B=4': gpu='custom-h20' is not one of …"), nor did a
    second GPU of their own (an L20) survive beside the H20.  Every GPU of the session's own a pin uses travels."""
    from app.lab import Lab
    from core.hardware import custom_accelerator
    from core.permalink import read_scenario_file, scenario_file

    h20 = custom_accelerator("H20", bandwidth_tbs=4.0, capacity_gb=96, bf16=148, fp8=296, int8=296)
    l20 = custom_accelerator("L20", bandwidth_tbs=0.864, capacity_gb=48, bf16=119.5, fp8=239)
    s = Scenario(model="llama-3-8b", batch=4)
    s.add_gpus([l20, h20])
    pins = [Pin(f"on {gpu}", s.clone(gpu=gpu).levers()) for gpu in (l20.id, h20.id, "h100-sxm")]
    s.gpu = "b200"
    lab = Lab(query=to_query(s.levers(), pins, [l20, h20]))
    assert lab.state.notices == [] and [p.name for p in lab.state.pins] == [f"on {l20.id}", f"on {h20.id}",
                                                                          "on h100-sxm"]
    assert lab.scenario.gpu == "b200" and set(lab.scenario.catalogue.own_gpus) == {l20.id, h20.id}
    from app.permalink_view import link_query

    written, carried = link_query(lab.state)
    assert [g["name"] for g in json.loads(written["custom-gpu"])] == ["L20", "H20"] and carried == [l20, h20]
    query, config = read_scenario_file(scenario_file(to_query(s.levers(), pins, [l20, h20]), None))
    assert from_query(query).custom_gpus == (l20, h20) and config is None
    one = from_query(to_query(s.levers(), pins[:1], [l20]))  # one GPU: one object, as links always carried it
    assert one.custom_gpus == (l20,) and one.notices == []
    assert json.loads(to_query(s.levers(), [], l20)["custom-gpu"])["name"] == "L20"
    h20_form = json.loads(to_query(s.levers(), [], h20)["custom-gpu"])
    bad = from_query({"custom-gpu": json.dumps([{"name": "x"}, h20_form])})
    assert bad.custom_gpus == (h20,) and bad.notices[0].startswith("ignored custom-gpu's GPU 1: needs name")
    twice = from_query({"custom-gpu": json.dumps([h20_form, {**h20_form, "bf16": 999}])})  # a crafted link
    assert twice.custom_gpus == (h20,) and twice.notices == [
        "ignored custom-gpu's GPU 2: its name gives the id of an earlier one (custom-h20)"]


def test_a_link_near_its_length_leaves_out_the_pins_gpus_it_has_no_room_for_and_says_so(monkeypatch):
    """A link keeps under its length (:data:`core.permalink.MAX_LINK_CHARS`, here set to 2,500 to reach it with a few
    pins): it carries the first GPUs of the session's own only, and the Share text names the pins it leaves out (a
    scenario file carries them all)."""
    import core.permalink
    from app.permalink_view import link_query, pins_left_out
    from app.state import LabState
    from core.hardware import custom_accelerator
    from core.permalink import gpus_text

    monkeypatch.setattr(core.permalink, "MAX_LINK_CHARS", 2_500)
    gpus = [custom_accelerator(f"{i:02d} GPU of my own " + "x" * 40, bandwidth_tbs=1, capacity_gb=8, bf16=10,
                               fp8=20, int8=20, fp4=40) for i in range(8)]
    s = Scenario(model="llama-3-8b")
    s.add_gpus(gpus)
    pins = [Pin(f"pin {i}", s.clone(gpu=gpu.id).levers()) for i, gpu in enumerate(gpus[1:], 1)]
    s.gpu = gpus[0].id
    state = LabState(s, pins=pins)
    query, carried = link_query(state)
    assert 1 < len(carried) < len(gpus) and carried == gpus[:len(carried)]
    assert len(urlencode(query)) <= 2_500 < len(urlencode({**query, "custom-gpu": gpus_text(gpus[:len(carried) + 1])}))
    lost = ", ".join(f"“pin {i}”" for i in range(len(carried), len(gpus)))
    assert pins_left_out(state) == ("These pins are on a GPU of your own that the link has no room for (it is near "
                                    f"its length limit; a scenario file carries it): {lost}.")
    assert pins_left_out(LabState(s, pins=pins[:1])) == ""  # one pin: room for its GPU


@pytest.mark.parametrize("dollars, text", [
    (None, "no price given"), (0.0, "under $0.0001"), (5e-324, "under $0.0001"), (1e-300, "under $0.0001"),
    (0.0001, "$0.0001"), (0.0807, "$0.081"), (0.2311, "$0.23"), (0.994, "$0.99"), (0.99506, "$1.00"),
    (1.0, "$1.00"), (23.806, "$23.81"),
    (11_900_000.0, "$11,900,000.00"), (1e20, "$100,000,000,000,000,000,000.00"),
])
def test_one_formatter_for_money(dollars, text):
    from core.units import fmt_money

    assert fmt_money(dollars) == text




def test_every_link_the_lab_writes_is_one_it_opens():
    """Issue 31, F2/F3: the lab's longest links must fit its own limits (and so the nginx recipe's buffers)."""
    from core.permalink import MAX_LINK_CHARS, MAX_LINK_KEYS, link_refusal

    query = longest_written_query()
    assert 15_000 < len(query) <= MAX_LINK_CHARS and link_refusal(query) is None
    assert len(query.split("&")) == 31 <= MAX_LINK_KEYS  # the count the notice of too many keys quotes


def test_a_link_with_more_keys_than_the_lab_reads_is_ignored_as_a_whole_with_a_notice():
    """Issue 31, F3: 1,001 query keys got Tornado's HTTP 400 with an empty body; the lab now opens and says why it
    ignored the link (one notice, not 1,001)."""
    state = from_query({f"k{i}": "1" for i in range(1000)} | {"batch": "8"})
    assert state.levers == {} and state.pins == [] and state.custom_gpu is None
    assert state.notices == ["ignored this link: it gives 1,001 parameters, more than the 100 a link can give "
                             "(the lab writes at most 31)"]
    assert from_query({"batch": ["4"] * 101}).notices[0].startswith("ignored this link: it gives 101 parameters")


@pytest.mark.parametrize("query, status, reason", [
    ("x=" + "9" * 4301, 400, "'x' is a number 4,301 digits long"),
    ("batch=4&pins=" + "1" * 5000, 400, "'pins' is a number 5,000 digits long"),
    ("batch=%C2%B2", 400, "'batch' is written in digits other than 0-9 ('²')"),
    ("tour=%E2%91%A0", 400, "'tour' is written in digits other than 0-9 ('①')"),
    ("x=" + "a" * 40_000, 414, "this link is 40,002 characters long; Roofline Lab opens links of up to 32,768"),
])
def test_a_link_no_page_can_be_built_for_is_refused_by_name(query, status, reason):
    """Issue 31, F4 and F3: a value of more than 4,300 digits (or digits such as ² that Python's int() refuses) made
    Panel's reader of the address raise while the page was built: the page's address never updated again and
    every move logged a traceback.  Such a link, and one too long to carry, is refused before the page is built."""
    from core.permalink import link_refusal

    refusal = link_refusal(query)
    assert refusal is not None and refusal.status == status and reason in refusal.reason, refusal


@pytest.mark.parametrize("query", ["", "batch=4", "x=" + "9" * 4300, "batch=%EF%BC%94", "x=" + "9" * 4301 + "a",
                                   "&".join(f"k{i}=1" for i in range(1001)), "pins=" + "[" * 5000])
def test_a_link_a_page_can_be_built_for_is_left_to_the_lab(query):
    from core.permalink import link_refusal

    assert link_refusal(query) is None


# --- a config.json in the link, and in a scenario file (issue 30) -------------------------------------------------
SMALL_CONFIG = ('{\n  "model_type": "gpt2", "n_layer": 12, "n_embd": 768, "n_head": 12, "n_positions": 1024,\n'
                '  "vocab_size": 50257, "_name_or_path": "openai-community/gpt2"\n}')


def test_a_config_travels_in_the_link_deflated_and_comes_back_minified():
    from core.model_catalogue import CATALOGUE_DIR
    from core.permalink import config_for_link, config_from_link

    value = config_for_link(SMALL_CONFIG)
    assert re.fullmatch(r"[A-Za-z0-9_-]+", value)
    assert config_from_link(value) == json.dumps(json.loads(SMALL_CONFIG), separators=(",", ":"))
    shipped = (CATALOGUE_DIR / "deepseek-v3.json").read_text()  # 1,734 characters
    assert len(config_for_link(shipped)) < 0.6 * len(shipped)
    assert json.loads(config_from_link(config_for_link(shipped))) == json.loads(shipped)
    assert from_query({"config": value, "batch": "8"}).config == config_from_link(value)


def test_a_config_too_large_for_a_link_is_not_put_in_one():
    from core.permalink import MAX_LINK_CONFIG_CHARS, config_for_link

    labels = {str(i): "".join(random.Random(i).choices("abcdefghijklmnopqrstuvwxyz", k=12)) for i in range(800)}
    big = json.dumps({**json.loads(SMALL_CONFIG), "id2label": labels})
    assert config_for_link(big) is None
    assert len(config_for_link(SMALL_CONFIG)) <= MAX_LINK_CONFIG_CHARS


def _deflated(data: bytes) -> str:
    return base64.urlsafe_b64encode(zlib.compress(data, 9)).decode().rstrip("=")


@pytest.mark.parametrize("value, says", [
    ("A" * 8_193, "8,193 characters, more than the 8,192 a link's config may have"),
    ("eNo<script>", "not base64url text"),
    ("A", "not base64url text of whole bytes"),
    (base64.urlsafe_b64encode(b"plain text").decode().rstrip("="), "not a deflated (zlib) config"),
    (_deflated(b" " * 3_000_000), "inflates to more than the 2 MB a config may have"),  # 2.9 kB in the link
    (_deflated(b'{"a": "\xff\xfe"}'), "not UTF-8 text once inflated"),
    (_deflated(SMALL_CONFIG.encode())[:-6], "not one whole deflated (zlib) config"),
    (_deflated(SMALL_CONFIG.encode()) + _deflated(b"{}")[:4], "not one whole deflated (zlib) config"),
])
def test_a_hostile_config_value_is_refused_by_name_and_the_rest_of_the_link_applies(value, says):
    state = from_query({"config": value, "batch": "8", "model": "config-gpt2"})
    assert state.config is None and state.levers == {"batch": 8}
    assert state.notices[0].startswith("ignored config: " + says)
    assert "ignored model='config-gpt2'" in state.notices[1] and "carries no config.json" not in state.notices[1]


def test_a_link_with_a_config_leaves_its_model_and_pins_until_the_config_is_read():
    from core.config_reader import from_hf_config, parse_config_text
    from core.permalink import config_for_link

    model = from_hf_config(parse_config_text(SMALL_CONFIG), model_id="config-gpt2", name="gpt2")
    pin = Pin("mine", {**Scenario().levers(), "batch": 12, "model": "config-gpt2"})
    query = {**to_query({**Scenario().levers(), "batch": 12, "model": "config-gpt2"}, [pin]),
             "config": config_for_link(SMALL_CONFIG)}
    first = from_query(query)
    assert "model" not in first.levers and first.levers["batch"] == 12 and first.pins == [] and first.notices == []
    second = from_query(query, added=model)
    assert second.levers["model"] == "config-gpt2" and second.pins == [pin] and second.notices == []
    assert second.config is None


def test_a_link_whose_config_model_is_named_anew_keeps_its_pins_of_that_model():
    """Issue 30: a pasted config without ``_name_or_path`` was "Pasted config" (``config-pasted-config``) in the
    links written before configs were named after their class or ``model_type``; read now, the link's config is
    ``config-gpt2``.  Its pins of that model (by the id its ``model=`` gave it) follow the model; a pin of a shipped
    model stays that model's, and a written id the lab has is never read as the config's."""
    from app.byo_view import _model_of
    from core.permalink import config_for_link

    nameless = json.dumps({k: v for k, v in json.loads(SMALL_CONFIG).items() if k != "_name_or_path"})
    model = _model_of(nameless, "")
    assert (model.name, model.id) == ("gpt2", "config-gpt2")
    old = {**Scenario().levers(), "batch": 12, "model": "config-pasted-config"}
    moved = {**old, "model": "llama-3-8b"}
    pins = [Pin("mine", old), Pin("shipped", {**old, "model": "llama-3-8b", "batch": 4}),
            Pin("moved", moved, origin=old, moves="model")]
    query = {**to_query(old, pins), "config": config_for_link(nameless)}
    state = from_query(query, added=model)
    assert state.notices == [] and state.levers["model"] == "config-gpt2"
    assert [(p.name, p.levers["model"]) for p in state.pins] == [
        ("mine", "config-gpt2"), ("shipped", "llama-3-8b"), ("moved", "llama-3-8b")]
    assert state.pins[2].origin["model"] == "config-gpt2" and state.pins[2].moves == "model"
    # A hand-written link whose model= is a shipped model: its pins of that model are that model's.
    query = {**to_query({**old, "model": "llama-3-8b"}, [Pin("shipped", moved)]), "config": config_for_link(nameless)}
    assert [p.levers["model"] for p in from_query(query, added=model).pins] == ["llama-3-8b"]


def test_a_scenario_file_holds_the_config_text_the_levers_and_the_pins():
    from core.hardware import custom_accelerator
    from core.permalink import SCENARIO_KIND, read_scenario_file, scenario_file

    gpu = custom_accelerator("Lab card", bandwidth_tbs=2.0, capacity_gb=48, bf16=400)
    levers = {**Scenario().levers(), "batch": 24, "gpu": gpu.id}
    query = to_query(levers, [Pin("p", levers)], gpu)
    text = scenario_file(query, SMALL_CONFIG)
    doc = json.loads(text)
    assert doc["kind"] == SCENARIO_KIND and doc["config"] == SMALL_CONFIG and doc["levers"]["batch"] == "24"
    assert read_scenario_file(text) == (query, SMALL_CONFIG)
    assert read_scenario_file(text.encode()) == (query, SMALL_CONFIG)


@pytest.mark.parametrize("text, says", [
    ("x" * 4_050_001, "4,050,001 characters, more than the 4,050,000"),
    (b"\xff{}", "not UTF-8 text"),
    ("{", "not valid JSON"),
    ("[" * 100_000, "nests deeper"),
    ('{"kind": "something else"}', "not a scenario file"),
    ('{"kind": "roofline-lab scenario", "config": {"n_layer": 2}}', "its config must be the config.json's text"),
    ('{"kind": "roofline-lab scenario", "levers": {"batch": 8}}', "its levers must be an object of texts"),
])
def test_a_file_that_is_not_a_scenario_file_is_refused_with_the_reason(text, says):
    from core.permalink import read_scenario_file

    with pytest.raises(ValueError, match=re.escape(says)):
        read_scenario_file(text)


@pytest.mark.parametrize("raw", ["1e3", "+1000", " 1000", "1000.0"])
def test_an_opening_link_is_rewritten_as_the_lab_writes_it(raw):
    """A trial: ``batch=1e3`` and ``batch=+4`` opened at B = 1,000 and 4, but the address bar kept the raw text until a
    lever moved.  The bar shows the lab's own writing from the first drawing; a link already written that way is
    left as it is (no write)."""
    from app.lab import Lab

    lab = Lab(query={"batch": [raw]})
    assert lab.scenario.batch == 1000
    assert parse_qs(lab.link.address.query.lstrip("?"))["batch"] == ["1000"]
    plain = Lab(query={"batch": ["1000"]})
    assert plain.scenario.batch == 1000 and plain.link.address.query == ""


def test_a_scenario_file_with_the_largest_config_reopens_and_a_byte_order_mark_is_read_past():
    """A verifying trial: the lab saved a 2-MB config's scenario file (its text escaped in a JSON string: 2,108,023
    characters) and refused to open it again; a scenario file with a byte-order mark was "not valid JSON"."""
    from core.config_reader import MAX_CONFIG_BYTES
    from core.permalink import read_scenario_file, scenario_file

    # The worst for escaping: a config of escaped quotes, each of its characters written as two in the file.
    config = '{"n_layer": 2, "notes": "' + '\\"' * ((MAX_CONFIG_BYTES - 40) // 2) + '"}'
    assert len(config) <= MAX_CONFIG_BYTES and json.loads(config)["n_layer"] == 2
    text = scenario_file({"batch": "8"}, config)
    assert len(text) > 2 * len(config) - 10_000  # escaped: about twice
    assert read_scenario_file(text) == ({"batch": "8"}, config)
    assert read_scenario_file(("\ufeff" + text).encode()) == ({"batch": "8"}, config)


def test_a_number_too_small_for_a_float_is_refused_not_read_as_zero():
    """An attacker's trial: acceptance=1e-400 became α = 0 without a notice (the float underflows)."""
    state = from_query({"acceptance": "1e-400", "reserve": "5e-999", "batch": "4"})
    assert state.levers == {"batch": 4}
    assert state.notices == ["ignored acceptance='1e-400' is not a number from 0 to 1",
                             f"ignored reserve='5e-999' is not {LEVERS['reserve_bytes'].accepted()}"]
    assert from_query({"acceptance": "0.0e5"}).levers == {"acceptance": 0.0}  # a zero written as one


def test_valid_json_holding_a_number_python_will_not_read_is_said_as_such():
    """An attacker's trial: pins=[{"batch": <4,400 digits>}] was "not valid JSON", and it is valid JSON."""
    huge = '[{"name": "a", "batch": ' + "9" * 4400 + "}]"
    assert from_query({"pins": huge}).notices == ["ignored pins: a number of more than 4,300 digits"]
    assert from_query({"pins": "[{"}).notices == ["ignored pins: not valid JSON"]
