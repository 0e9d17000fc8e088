"""The lever table: one row per lever, every surface generated from it (issue 8)."""

from __future__ import annotations

import argparse
import dataclasses

import panel as pn
import param
import pytest

from app.controls import build_controls, lever_widgets
from app.lab import Lab
from app.permalink_view import app_link_state
from core import Scenario
from core.cli import scenario_flags, scenario_from_args
from core.hardware import custom_accelerator
from core.hardware_tour import HARDWARE_TOUR
from core.levers import Lever
from core.measured_points import parse_measurements
from core.permalink import from_query, to_query
from core.pins import Pin, compare
from core.scenario import LEVERS
from core.units import GiB


def other_value(lever: Lever):
    """A valid value of ``lever`` other than its default: what a person would set through a surface."""
    p = lever.parameter
    if isinstance(p, param.Boolean):
        return not p.default
    if isinstance(p, param.Selector):
        return next(v for v in p.objects if v != p.default)
    if lever.stops:
        return next(v for v in lever.stops if v != p.default)
    lo, hi = p.get_soft_bounds()
    return type(p.default)((lo + hi) / 2) if (lo + hi) / 2 != p.default else hi


def test_every_lever_reaches_the_command_line_the_link_and_the_served_controls():
    """Set away from its default through each surface, every lever arrives; the served page has its widget."""
    parser = argparse.ArgumentParser()
    scenario_flags(parser)
    lab = Lab()
    open_more(lab.controls)  # "More levers", built when opened
    widgets = lever_widgets(lab.controls)
    for lever in LEVERS:
        value = other_value(lever)
        argv = [f"--{lever.flag}"] if isinstance(lever.parameter, param.Boolean) else [f"--{lever.flag}",
                                                                                       lever.encode(value)]
        assert getattr(scenario_from_args(parser.parse_args(argv)), lever.name) == value, lever.name
        link = from_query({lever.flag: lever.encode(value)})
        assert link.levers == {lever.name: value} and not link.notices, lever.name
        assert f"--{lever.flag}" in parser.format_help()
        assert lever.name in widgets and lever.css in widgets[lever.name].css_classes, lever.name
    assert set(widgets) == set(LEVERS.names)


def open_more(controls):
    """Open the "More levers" section (built when first opened)."""
    card = next(c for c in controls.select(pn.Card) if "more-levers" in c.css_classes)
    assert card.objects == [] and card.collapsed  # nothing built until someone opens it
    card.collapsed = False
    return card


def test_widgets_take_bounds_soft_bounds_and_stops_from_the_table():
    controls = build_controls(Scenario())
    open_more(controls)
    spec_k = next(w for w in controls.select(pn.widgets.IntSlider) if "spec-k" in w.css_classes)
    assert (spec_k.start, spec_k.end) == LEVERS["spec_k"].parameter.get_soft_bounds() == (1, 16)
    batch = next(w for w in controls.select(pn.widgets.IntSlider) if "batch" in w.css_classes)
    assert tuple(batch.stops.values) == LEVERS["batch"].stops and (batch.start, batch.end) == (0, 21)
    assert batch.format.args["labels"][-3:] == ["512", "768", "1,024"]
    reserve = next(w for w in controls.select(pn.widgets.FloatSlider) if "reserve-bytes" in w.css_classes)
    assert (reserve.start, reserve.end, reserve.value) == (0, 16, 3)  # GiB at the edge, bytes inside


def test_the_reserve_widget_is_in_gib_and_never_rewrites_the_model():
    s = Scenario()
    controls = build_controls(s)
    open_more(controls)
    reserve = next(w for w in controls.select(pn.widgets.FloatSlider) if "reserve-bytes" in w.css_classes)
    reserve.value = 5
    assert s.reserve_bytes == 5 * GiB
    s.reserve_bytes = 100 * GiB  # beyond the slider's soft end: the slider widens
    assert reserve.value == 100 and s.reserve_bytes == 100 * GiB


def test_a_stop_slider_moves_by_stops_and_admits_a_value_set_elsewhere():
    s = Scenario()
    controls = build_controls(s)
    batch = next(w for w in controls.select(pn.widgets.IntSlider) if "batch" in w.css_classes)
    batch.value = 3  # the fourth stop
    assert s.batch == 4
    s.batch = 7  # a link or the command line: not a stop, so it becomes one
    assert batch.stops.values[:8] == [1, 2, 3, 4, 5, 6, 7, 8] and batch.value == 6 and batch.end == 22
    assert batch.format.args["labels"][6] == "7"
    batch.value = 7
    assert s.batch == 8


def test_more_levers_are_built_when_opened_and_open_when_one_moves():
    s = Scenario()
    controls = build_controls(s)
    card = next(c for c in controls.select(pn.Card) if "more-levers" in c.css_classes)
    names = {w.lever for w in controls.select(pn.widgets.Widget) if hasattr(w, "lever")}
    assert names == {lever.name for lever in LEVERS if not lever.more}
    assert card.collapsed and card.objects == []
    s.tp = 2  # a tour step, the "use TP = 2" button: the lever in play shows
    assert not card.collapsed
    tp = next(w for w in card.select(pn.widgets.IntSlider) if "tp" in w.css_classes)
    assert tp.stops.values[tp.value] == 2
    # A link that moves one opens it from the start.
    assert not next(c for c in build_controls(Scenario(acceptance=0.5)).select(pn.Card)).collapsed


def test_selectors_offer_the_session_catalogue():
    s = Scenario()
    controls = build_controls(s)
    gpu = next(w for w in controls.select(pn.widgets.Select) if "gpu" in w.css_classes)
    s.add_gpu(GPU)
    assert gpu.options["Lab card (yours)"] == GPU.id and gpu.value == GPU.id
    gpu.value = "h200"
    assert s.gpu == "h200"


def test_decode_is_one_validation_for_the_link_and_the_command_line():
    lever = LEVERS["reserve_bytes"]
    assert lever.decode("3") == 3 * GiB and lever.encode(3 * GiB) == "3"
    for bad in ("nan", "inf", "-1", "1e300", "abc", "", "9" * 100):
        with pytest.raises(ValueError, match="reserve="):
            lever.decode(bad)
    assert LEVERS["gqa"].decode("true") is False  # --no-gqa=true turns GQA off
    assert LEVERS["batch"].decode("4.0") == 4


@pytest.mark.parametrize("text", ["\uff14", "\uff15\uff16", "\u0664", "\u096a", "4\uff10", "\u00b2", "1_000"])
def test_a_number_is_ascii_digits_wherever_one_is_read(text):
    """Issue 31 (informational): ``float("４")`` is 4.0, so a fullwidth (or Arabic-Indic, Devanagari) digit was read
    as a number in a link, on the command line and in a measurements CSV; an ASCII number is expected there."""
    with pytest.raises(ValueError, match="batch="):
        LEVERS["batch"].decode(text)
    assert from_query({"batch": text}).levers == {}
    rows, problems = parse_measurements(f"batch,context,tokens_per_s\n4,2048,{text}\n")
    assert rows == [] and problems[0].startswith("row 2: tokens/s=")
    app, notices = app_link_state({"tour": text}, ("Roofline",), 9)
    assert app["tour_step"] is None and notices


def test_ascii_numbers_still_read_as_before():
    assert [LEVERS["batch"].decode(t) for t in ("4", " 4 ", "4.0", "+4", "4e0", "40E-1")] == [4] * 6
    assert LEVERS["acceptance"].decode(".5") == 0.5 and LEVERS["acceptance"].decode("1.") == 1.0


def test_cli_levers_not_given_keep_the_table_defaults():
    parser = argparse.ArgumentParser()
    scenario_flags(parser)
    s = scenario_from_args(parser.parse_args(["--batch", "8", "--no-gqa"]))
    assert s.levers() == {**LEVERS.defaults(), "batch": 8, "gqa": False}


# -- the session catalogue: regressions of issue 8's two bugs ----------------------------

GPU = custom_accelerator("Lab card", bandwidth_tbs=2.0, capacity_gb=48, bf16=400, fp8=800)


def test_clone_keeps_the_session_catalogue():
    s = Scenario()
    s.add_gpu(GPU)
    copy = s.clone(batch=4)
    assert copy.gpu == GPU.id and copy.catalogue.is_own(GPU.id) and copy.evaluate().gpu == GPU
    assert not Scenario().catalogue.is_own(GPU.id)  # a fresh scenario does not see another session's GPU


def test_download_page_works_with_a_custom_gpu_and_a_pasted_model():
    import json

    from app.standalone import standalone_html
    from core.config_reader import from_hf_config
    from core.model_catalogue import CATALOGUE_DIR

    s = Scenario()
    s.add_gpu(GPU)
    config = json.loads((CATALOGUE_DIR / "llama-3-8b.json").read_text())
    s.add_model(from_hf_config(config, model_id="config-mine", name="Mine <b>"))
    html = standalone_html(s)
    assert "Lab card" in html and "Mine &lt;b&gt;" in html and "Mine <b>" not in html


def test_pins_in_a_link_keep_its_custom_gpu():
    s = Scenario(batch=4)
    s.add_gpu(GPU)
    pins = [Pin("mine", s.levers())]
    state = from_query(to_query(s.levers(), pins, custom_gpu=GPU))
    assert state.notices == [] and state.pins == pins
    lab = Lab(query=to_query(s.levers(), pins, custom_gpu=GPU))
    assert lab.state.pin_rows[0].result.gpu == GPU


def test_pins_of_a_pasted_model_resolve_in_its_session():
    import json

    from core.config_reader import from_hf_config
    from core.model_catalogue import CATALOGUE_DIR

    s = Scenario()
    model = s.add_model(from_hf_config(json.loads((CATALOGUE_DIR / "mistral-7b.json").read_text()),
                                       model_id="config-m", name="M"))
    (row,) = compare([Pin("p", s.levers())], s.catalogue)
    assert row.result.model == model


def test_a_key_given_twice_is_used_once_and_said():
    state = from_query({"batch": ["4", "8"]})
    assert state.levers == {"batch": 4}
    assert state.notices == ["'batch' was given 2 times; used the first, '4'"]


def test_the_hardware_tab_follows_the_lab_gpu_and_batch():
    lab = Lab()
    lab.state.tab = "Hardware"
    view = lab.hardware
    assert (view.gpu, view.batch) == ("h100-sxm", 1)
    lab.scenario.param.update(gpu="h200", batch=8)
    assert (view.gpu, view.batch) == ("h200", 8)
    lab.scenario.add_gpu(GPU)  # a session's own part is offered in the view too
    assert view.accelerator().id == GPU.id


def test_the_hardware_tabs_batch_and_cuda_graphs_are_the_labs_own():
    """One B and one CUDA-graphs switch on the page: the Hardware tab's widgets, and its tour's steps, move the
    lab's scenario (its readouts, its More levers switch), and the lab's levers move the tab."""
    lab = Lab(Scenario(model="llama-3-8b"), {})
    lab.state.tab = "Hardware"
    view = lab.hardware
    assert (view.batch, view.cuda_graphs) == (1, False)
    view.cuda_graphs = True  # the "Capture the step as one CUDA graph" box of the Three ceilings section
    assert lab.scenario.cuda_graphs is True
    # The lab's own overhead: one graph launch, 4 µs, and 1 µs per node for 32 × 11 + 4 kernels (article 000).
    assert lab.result.launch_overhead_s == pytest.approx(4e-6 + 356 * 1e-6)
    view.batch = 56
    assert lab.scenario.batch == 56 and lab.result.batch == 56
    lab.scenario.param.update(batch=8, cuda_graphs=False)
    assert (view.batch, view.cuda_graphs) == (8, False)
    step = next(s for s in HARDWARE_TOUR if s.settings.get("cuda_graphs"))
    view.go(HARDWARE_TOUR.index(step))  # a tour step that captures the step as one graph sets the lab's switch
    assert lab.scenario.cuda_graphs is True and lab.scenario.batch == step.levers()["batch"] == 1


def test_the_overhead_ceiling_is_a_lever_row_and_a_formula():
    """Issue 14's third ceiling, added as the lever table promises: one row (CUDA graphs) and its formula."""
    assert LEVERS.by_flag("cuda-graphs").name == "cuda_graphs"
    r = Scenario(model="llama-3-8b").evaluate()
    # 32 layers × 11 kernels + 4 outside the layers, 4 µs each (article 000, "a few microseconds").
    assert r.kernels_per_step == 32 * 11 + 4 and r.launch_overhead_s == pytest.approx(356 * 4e-6)
    assert r.overhead_ceiling_flop_per_s == pytest.approx(r.flop_per_step / (356 * 4e-6))
    assert r.bound == "memory"  # 5.1 ms of reads against 1.4 ms of launches
    graphs = Scenario(model="llama-3-8b", cuda_graphs=True).evaluate()
    assert graphs.launch_overhead_s == pytest.approx(4e-6 + 356 * 1e-6)
    assert to_query(Scenario(model="llama-3-8b", cuda_graphs=True).levers())["cuda-graphs"] == "true"


def test_the_browser_gets_the_stops_a_value_set_elsewhere_added():
    import json

    from app.lab import Lab

    lab = Lab(query={})
    lab.scenario.batch = 7  # a tour step or the command line: not one of the slider's stops
    sent = json.loads(lab.instant.holder.data["c"][0])
    assert 7 in sent["stops"]["batch"] and sent["on"]
    lab.scenario.tp = 2  # several GPUs: the browser leaves the chart to the server
    assert json.loads(lab.instant.holder.data["c"][0])["on"] is False


def test_sessions_share_the_browsers_constants_and_never_get_another_scenarios():
    """app/instant.py works the constants out once per process for the shipped catalogue; each session still gets
    its own scenario's (another GPU, a session's own GPU of the same name with other roofs)."""
    import json

    from app.instant import browser_state
    from app.lab import Lab
    from core.hardware import load_catalogue

    first, second = Lab(query={}), Lab(query={})
    assert first.instant.holder.data["c"][0] is second.instant.holder.data["c"][0]  # the same string, sent again
    second.scenario.gpu = "a100-80gb"
    sent = json.loads(second.instant.holder.data["c"][0])
    assert sent == json.loads(json.dumps(browser_state(second.state, second.instant.widgets, second.state.result)))
    assert sent["c"]["bandwidth"] == load_catalogue()["a100-80gb"].hbm_bandwidth
    own = Lab(query={})
    gpu = dataclasses.replace(load_catalogue()["h100-sxm"], id="my-h100", hbm_bandwidth=1.0e12)
    own.scenario.add_gpu(gpu)
    own.scenario.gpu = "my-h100"
    assert json.loads(own.instant.holder.data["c"][0])["c"]["bandwidth"] == 1.0e12
    assert json.loads(first.instant.holder.data["c"][0])["c"]["bandwidth"] == 3.35e12  # H100 SXM5, untouched


def test_a_widget_value_the_lever_refuses_changes_nothing():
    """What a crafted websocket message can put in a widget: the lever's bounds refuse it, the scenario keeps
    its value, the widget goes back to it — no traceback, no value wrapped round (index -1 is not batch 1,024)."""
    s = Scenario(batch=4, spec_k=2)
    controls = build_controls(s)
    open_more(controls)
    widgets = {w.lever: w for w in controls.select(pn.widgets.Widget) if hasattr(w, "lever")}
    for name, bad in (("batch", 999), ("batch", -1), ("spec_k", 10**30), ("spec_k", 0),
                      ("reserve_bytes", float("nan")), ("reserve_bytes", 1e30), ("acceptance", 2.0)):
        before = getattr(s, name)
        widgets[name].value = bad
        assert getattr(s, name) == before, name
    assert widgets["batch"].value == 3 and widgets["spec_k"].value == 2 and widgets["reserve_bytes"].value == 3
    assert widgets["acceptance"].value == 0.7
    widgets["batch"].value = 4  # a good value still goes through
    assert s.batch == 5


def test_the_lab_and_the_offline_page_write_a_slider_stop_alike():
    # Issue 30: the lab's batch slider read "1k" where the offline page's read "1,024", its context "8k" for 8,192.
    from app.standalone import _widget, constants

    scenario = Scenario(model="llama-3-8b")
    controls = build_controls(scenario)
    open_more(controls)
    c = constants(scenario, scenario.evaluate())
    for name, stops in (("batch", c["batch_stops"]), ("context", c["context_stops"])):
        served = next(w for w in controls.select(pn.widgets.IntSlider) if LEVERS[name].css in w.css_classes)
        lab = dict(zip(served.stops.values, served.format.args["labels"], strict=True))
        page = dict(zip(stops, _widget(LEVERS[name], scenario, stops).format.args["labels"], strict=True))
        shared = sorted(set(lab) & set(page))
        assert 1024 in shared and lab[1024] == page[1024] == "1,024"
        assert [lab[v] for v in shared] == [page[v] for v in shared] == [f"{v:,}" for v in shared]


def test_a_long_app_value_in_a_link_is_quoted_cut_and_marked():
    """A trial: ``?tab=`` of 3,000 W's was quoted as exactly 40 W's with no mark, as if that were the whole value."""
    from app.permalink_view import app_link_state

    _state, notices = app_link_state({"tab": "W" * 3000, "engine": "<b>x</b>" * 20}, ("Roofline", "Compare"), 25)
    assert notices[0] == f"ignored tab='{'W' * 40}…': accepted Roofline, Compare"
    assert notices[1].startswith("ignored engine='<b>x</b>") and "…'" in notices[1]
    assert app_link_state({"tab": "W" * 40}, ("Roofline",), 25)[1] == [f"ignored tab='{'W' * 40}': accepted Roofline"]
