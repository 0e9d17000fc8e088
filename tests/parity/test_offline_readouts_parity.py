"""The offline page's words (app/offline_readouts.js) are core's (core/explain.py, app/memory_view.py,
app/roofline_view.py), on one GPU and split over several: every readout's label, formula, work and value (Step 7's
GPU counts, per-GPU shares, communication, aggregate throughput, smallest split and costs too), the warnings, the
memory bar and the chart title's communication lines, character for character.

Runs the JavaScript in an embedded V8 (mini-racer), no browser, over random splits, prices and levers; the browser
test (tests/browser/test_standalone.py) checks the same on written pages over fewer.
"""

from __future__ import annotations

import json
import math
import re

import pytest
from conftest import ROOT, scenario_on
from hypothesis import given, settings
from hypothesis import strategies as st
from py_mini_racer import MiniRacer

from app.memory_view import memory_html
from app.readouts import READOUT_KEYS
from app.roofline_view import RooflineView
from app.standalone import OFFLINE_READOUT_KEYS, constants
from core.explain import quantities
from core.precision import KV_PRECISIONS
from core.scenario import LEVERS

SCRIPTS = ("step.js", "units.js", "offline_readouts.js")


@pytest.fixture(scope="module")
def js():
    """A V8 context holding the page's model, formatting and readouts."""
    ctx = MiniRacer()
    for name in SCRIPTS:
        ctx.eval((ROOT / "app" / name).read_text(encoding="utf-8"))
    return ctx


#: Fixed when the page is written: model, GPU and split (TP, PP, EP, replicas).  Dense and MoE, stored formats
#: in several kinds, a PCIe part without a scale-up node, PP over an odd count of layers; no price, a price, and
#: one so small the costs fall under the money floor.
SETUPS = st.tuples(
    st.sampled_from(["llama-3-8b", "llama-3-70b", "mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3", "gpt-oss-120b",
                     "nemotron-h-56b", "pasted", "pasted-sparse"]),
    st.sampled_from(["h100-sxm", "a100-80gb", "b200", "l4", "custom"]),
    st.sampled_from([(1, 1, 1, 1), (2, 1, 1, 1), (8, 1, 1, 1), (1, 1, 1, 4), (4, 2, 1, 1), (1, 3, 2, 1),
                     (2, 1, 4, 1), (8, 2, 1, 2), (2, 2, 2, 3), (4, 2, 1, 2)]),
    st.sampled_from([0.0, 2.49, 1e-9]))
LEVERS_MOVED = st.fixed_dictionaries({
    "batch": st.sampled_from(LEVERS["batch"].stops), "spec_k": st.integers(1, 16),
    "acceptance": st.sampled_from([0.0, 0.6, 0.75, 1.0]), "context": st.sampled_from(LEVERS["context"].stops),
    "weight_dtype": st.sampled_from(list(LEVERS["weight_dtype"].parameter.objects)),
    "kv_dtype": st.sampled_from(list(KV_PRECISIONS)), "gqa": st.booleans()})

_PAGES: dict = {}

WRITE = ("(s) => { const r = evaluate(C, s); return JSON.stringify({readouts: derivation(C, s, r), "
         "warnings: warnings(C, s, r), memory: memoryHtml(C, s, r), title: communicationLines(C, s, r)}); }")


@settings(max_examples=150, deadline=None)
@given(SETUPS, LEVERS_MOVED)
def test_the_page_words_every_readout_as_core_does_at_its_split(js, setup, levers):
    model, gpu, (tp, pp, ep, replicas), price = setup
    if setup not in _PAGES:  # the page's constants, written once per model, GPU and split
        s = scenario_on(model, gpu, tp=tp, pp=pp, ep=ep, replicas=replicas, phase="decode",
                        gpu_hour_price=price)
        _PAGES[setup] = (s, json.dumps(constants(s, s.evaluate())))
    s, c = _PAGES[setup]
    js.eval(f"var C = {c};")
    got = json.loads(js.eval(f"({WRITE})({json.dumps(levers)})"))
    r = s.clone(**levers).evaluate()
    want = quantities(r)
    # every readout the served lab shows at this split, in its order, Step 7's included ("attainable with
    # communication" only split over GPUs)
    keys = [key for key in READOUT_KEYS if key in want]
    assert ("attainable-comm" in keys) == (tp * pp * ep > 1)
    assert OFFLINE_READOUT_KEYS == READOUT_KEYS and list(got["readouts"]) == keys
    for key in keys:
        q = got["readouts"][key]
        assert (q["label"], q["formula"], q["work"], q["value"]) == (
            want[key].label, want[key].formula, want[key].work, want[key].value), key
    assert got["warnings"] == list(r.warnings)
    assert got["memory"] == memory_html(r, approximate=r.model.approximate_note(see=""))
    lines = RooflineView(r).figure.title.text.split("\n")[3:]  # after the model line and the two intensities
    assert got["title"] == "".join("\n" + line for line in lines)


@settings(max_examples=300, deadline=None)
@given(st.floats(0, 200), st.floats(1e-4, 50))
def test_the_largest_batchs_work_takes_the_digits_its_quotient_needs_as_core_does(js, free, seq):
    from core.explain import _floor_work

    n = math.floor(free / seq)
    assert js.eval(f"floorWork({free!r}, {seq!r}, {n})") == _floor_work(free, seq, n)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(0, 2000), min_size=1, max_size=4), st.floats(-1e-9, 1e-9))
def test_the_decimals_that_make_parts_add_up_are_cores(js, parts, error):
    """The memory bar's parts take the decimals that make them add to its total as printed, offline as served; the
    total a sum of the parts give or take a float's error, as the page computes it."""
    from core.units import sum_digits

    total = sum(parts) + error
    assert js.eval(f"sumDigits({json.dumps(parts)}, {total!r})") == sum_digits(parts, total)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 4096), st.one_of(st.floats(1, 16), st.integers(1, 131_072)), st.floats(1e-7, 1e5),
       st.booleans())
def test_a_tokens_per_s_work_takes_the_digits_cores_does(js, batch, gained, t, whole):
    """"B × E / t = tokens/s": E and t take the digits that make it multiply out, offline as served."""
    from core.units import rate_terms

    got = js.eval(f"JSON.stringify(rateTerms({batch}, {float(gained)!r}, {t!r}, {str(whole).lower()}))")
    assert json.loads(got) == list(rate_terms(batch, float(gained), t, whole))


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.floats(0, 1e18), st.sampled_from([0.0, 1.0, 9_999.0, 10_000.0, 999_999.0, 999_999.9, 1e6,
                                                      999_999_999.0, 1e9, 999_950_000_000.0, 1e12, 1e15])))
def test_a_flop_count_takes_cores_unit_and_digits(js, flop):
    """FLOP, MFLOP, GFLOP, TFLOP or PFLOP, as core writes it (a step under a GFLOP was "0.0001 GFLOP")."""
    from core.units import fmt_flop

    assert js.eval(f"fmtFlop({flop!r})") == fmt_flop(flop)


def test_an_approximate_models_readouts_say_so_at_each_value_as_core_does(js):
    """A new user's trial: Gemma-3-27B's vision_config is not modelled; "Fits in memory ≈ yes" said so, the weight
    bytes, the weights per GPU and the largest batch (the numbers a vision tower changes) did not.  Every readout
    of such a model says "≈" at its value, but the GPU's own (ridge, compute roof), on the page and offline."""
    from app.readouts import readouts_html
    from core.explain import NOT_THE_MODELS

    s = scenario_on("gemma-3-27b", "h100-sxm")
    r = s.evaluate()
    assert r.model.approximate and "vision_config" in r.model.approximate_note()
    html = readouts_html(r)
    values = dict(re.findall(r'data-readout="([a-z-]+)">([^<]*)<', html))
    assert values["weights"].startswith("≈ ") and values["max-batch"].startswith("≈ ")
    assert values["fits"] == "≈ yes"  # marked once, not "≈ ≈ yes"
    # Not the GPU's, the split's or speculation's E, nor a value with no figure (a second trial: "GPUs ≈ 1",
    # "≈ no price given", "≈ 0 µs" of communication on one GPU).
    assert all(not values[k].startswith("≈") for k in NOT_THE_MODELS if k in values)
    assert values["gpus"] == "1" and not values["comm-time"].startswith("≈") and "≈" not in values["cost-output"]
    q = quantities(r)
    rows = [{"key": k, "label": q[k].label, "formula": q[k].formula, "work": q[k].work, "value": q[k].value}
            for k in READOUT_KEYS if k in q]
    got = js.eval(f"readoutsHtml({json.dumps(rows)}, false, {json.dumps(list(r.warnings))}, true)")
    assert got == html
    plain = scenario_on("llama-3-8b", "h100-sxm").evaluate()
    assert "≈" not in readouts_html(plain)


def test_the_page_leaves_unmarked_the_readouts_core_leaves_unmarked(js):
    """An engineer's trial: "≈ Capacity … 80.00 GiB" and "≈ Pipeline … one stage" beside a config key the lab does
    not model, which cannot change either.  Core's list and the page's twin are one list."""
    from core.explain import NOT_THE_MODELS

    assert json.loads(js.eval("JSON.stringify(NOT_THE_MODELS)")) == list(NOT_THE_MODELS)
    assert {"capacity", "pipeline"} <= set(NOT_THE_MODELS)


@pytest.mark.parametrize("model, gpu, mix", [("gpt-oss-120b", "b200", "4,964 TFLOP/s (FP4 + BF16 mix)"),
                                             ("gpt-oss-120b", "h100-sxm", "989.4 TFLOP/s"),
                                             ("deepseek-v3", "b200", "4,380 TFLOP/s (FP8 + BF16 mix)")])
def test_a_roof_of_two_formats_is_named_a_mix_where_its_value_is(js, model, gpu, mix):
    # A trial: the roof of gpt-oss as stored on a B200 read "4,962 TFLOP/s" in the readouts, the chart and its
    # title; only the derivation's work said it was a mix of the FP4 and BF16 roofs.
    s = scenario_on(model, gpu, phase="decode", weight_dtype="stored")
    r = s.evaluate()
    assert quantities(r)["roof"].value == mix
    js.eval(f"var C = {json.dumps(constants(s, r))};")
    levers = {"batch": r.batch, "spec_k": 1, "acceptance": r.acceptance, "context": r.context,
              "weight_dtype": "stored", "kv_dtype": r.kv_dtype, "gqa": r.gqa}
    assert json.loads(js.eval(f"({WRITE})({json.dumps(levers)})"))["readouts"]["roof"]["value"] == mix
