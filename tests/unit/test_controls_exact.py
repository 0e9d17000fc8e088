"""Exact B and S (issue 30): the stop sliders' values typed in a box beside them, carried by the link."""

from __future__ import annotations

import panel as pn

import app.controls as controls_module
from app.controls import lever_widgets
from app.lab import Lab


def exact_box(lab: Lab, css: str) -> pn.widgets.FloatInput:
    return next(w for w in lab.controls.select(pn.widgets.FloatInput) if f"{css}-exact" in w.css_classes)


def test_a_typed_batch_between_the_stops_is_the_model_the_slider_and_the_link():
    lab = Lab(query={})
    box = exact_box(lab, "batch")
    assert box.value == 1
    box.value = 59  # article 000's batch: between the stops 56 and 64
    slider = lever_widgets(lab.controls)["batch"]
    assert lab.scenario.batch == 59 and slider.stops.values[slider.value] == 59
    assert slider.stops.values[12:15] == [56, 59, 64] and slider.format.args["labels"][13] == "59"
    assert lab.link.query()["batch"] == "59"
    assert lab.result.arithmetic_intensity_weights == 59  # I = 2·B·k/p = 2·59·1/2


def test_a_typed_context_is_exact_and_the_box_follows_the_slider():
    lab = Lab(query={})
    box = exact_box(lab, "context")
    box.value = 32768
    assert lab.scenario.context == 32768 and lab.link.query()["context"] == "32768"
    box.value = 3000  # not a stop
    assert lab.scenario.context == 3000 and lab.link.query()["context"] == "3000"
    slider = lever_widgets(lab.controls)["context"]
    slider.value = slider.stops.values.index(8192)
    assert lab.scenario.context == 8192 and box.value == 8192


def test_out_of_range_typing_is_refused_naming_the_range(monkeypatch):
    said = []
    monkeypatch.setattr(controls_module, "notify_refusal", said.append)
    lab = Lab(query={"batch": "8"})
    box = exact_box(lab, "batch")
    box.value = 70000
    assert lab.scenario.batch == 8 and box.value == 8
    assert said == ["Batch B: 70,000 refused; type a whole number from 1 to 65,536."]
    box.value = 0
    assert lab.scenario.batch == 8 and box.value == 8 and "from 1 to 65,536" in said[-1]
    context = exact_box(lab, "context")
    context.value = 2**22
    assert lab.scenario.context == 8192 and said[-1] == ("Context S (tokens): 4,194,304 refused; type a whole number "
                                                          "from 1 to 2,097,152.")
    box.value = None  # the box emptied: the model's value comes back
    assert box.value == 8 and lab.scenario.batch == 8
    # A whole-number box dropped a typed ".": 1.5 became B = 15 in silence (a teacher's trial).  Refused by name.
    box.value = 1.5
    assert (lab.scenario.batch, box.value) == (8, 8)
    assert said[-1] == "Batch B: 1.5 refused; type a whole number from 1 to 65,536."
    box.value = 59.0  # the whole number it is
    assert lab.scenario.batch == 59 and type(lab.scenario.batch) is int


def test_the_embed_strip_has_no_exact_boxes():
    lab = Lab(query={"embed": "true"})
    assert not lab.layout.select(pn.widgets.FloatInput)


def test_each_exact_box_is_named_after_its_levers_symbol():
    """Two boxes were both named "exact": a screen reader read them alike ("exact, spin button").  Each is named
    after its lever's symbol in the articles, those under More levers too."""
    lab = Lab(query={})
    names = lambda: [w.name for w in lab.controls.select(pn.widgets.FloatInput)]  # noqa: E731
    assert names() == ["exact B", "exact S"]
    lab.scenario.tp = 2  # opens More levers, which builds its widgets
    assert names() == ["exact B", "exact S", "exact prompt", "exact TP", "exact PP", "exact EP"]  # no symbol: its word
