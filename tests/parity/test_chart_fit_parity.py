"""The chart's browser rules (app/chart_fit.js) are the served chart's (app/roofline_view.py), without a browser.

Each rung's own overhead ceiling and its drop to what its step sustains with communication, on the ladders of
real scenarios (one GPU and split, dense and MoE, with and without CUDA graphs) and on random rungs at the
thresholds; the x and y ranges over random points.  A rule changed on one side only fails here.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from py_mini_racer import MiniRacer

from app.roofline_view import (
    X_MARGIN,
    X_RANGE,
    Y_MARGIN,
    Y_RANGE,
    fit_x_end,
    fit_y_range,
    rung_communication_feet,
    rung_overhead_ceilings,
)
from core import Scenario

T = 1e12  # the chart's y axis is TFLOP/s


@pytest.fixture(scope="module")
def js():
    """A V8 context holding app/chart_fit.js."""
    ctx = MiniRacer()
    ctx.eval((ROOT / "app" / "chart_fit.js").read_text(encoding="utf-8"))
    return ctx


def rungs_in_js(js, function: str, rungs: list[dict]) -> np.ndarray:
    """``function(rungs, T)`` in the JavaScript context, NaN and infinities through JSON as strings."""
    got = json.loads(js.eval(f"JSON.stringify({function}({json.dumps(rungs)}, {T}).map(v => Number.isFinite(v) ? v "
                             ": String(v)))"))
    return np.array([float(v.replace("Infinity", "inf")) if isinstance(v, str) else v for v in got], dtype=float)


def same(got: np.ndarray, want: np.ndarray) -> None:
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    assert np.allclose(got[~np.isnan(got)], want[~np.isnan(want)], rtol=1e-12, atol=0), (got, want)


def ladder_rungs(lad) -> list[dict]:
    return [{"flop_weights": float(lad.flop_weights[i]), "step_time_s_weights": float(lad.step_time_s_weights[i]),
             "launch_time_s": float(lad.launch_time_s[i]),
             "attainable_flop_per_s_weights": float(lad.attainable_flop_per_s_weights[i])}
            for i in range(len(lad.batch))]


@pytest.mark.parametrize("levers", [
    {}, {"tp": 8, "batch": 16}, {"model": "qwen3-30b-a3b", "tp": 2}, {"model": "deepseek-v3", "tp": 8, "pp": 2},
    {"model": "llama-3-8b", "cuda_graphs": False, "gpu": "b200"}, {"model": "mixtral-8x7b", "ep": 2, "tp": 2}])
def test_the_rungs_ceilings_and_communication_bars_are_the_served_charts(js, levers):
    lad = Scenario(**levers).evaluate().ladder
    rungs = ladder_rungs(lad)
    same(rungs_in_js(js, "rungOverheadCeilings", rungs),
         rung_overhead_ceilings(lad.flop_weights, lad.launch_time_s, lad.attainable_flop_per_s_weights) / T)
    same(rungs_in_js(js, "rungCommunicationFeet", rungs),
         rung_communication_feet(lad.flop_weights, lad.step_time_s_weights, lad.attainable_flop_per_s_weights) / T)


RUNG = st.fixed_dictionaries({
    "flop_weights": st.floats(1e6, 1e15), "step_time_s_weights": st.floats(1e-6, 10.0),
    "launch_time_s": st.sampled_from([0.0, 1e-5, 3e-3]), "attainable_flop_per_s_weights": st.floats(1e9, 1e16)})


@settings(max_examples=200, deadline=None)
@given(st.lists(RUNG, min_size=1, max_size=12),
       st.sampled_from([1.0, 1 - 1e-10, 1 - 5e-9, 1 - 2e-8, 1 + 1e-10, 1 + 5e-9, 1 + 2e-8, 0.5]))
def test_random_rungs_at_the_thresholds_agree(js, rungs, near):
    # ``near`` puts some rungs' feet (odd ones) and launch ceilings (every third) on, or a hair either side of,
    # their attainable: the 1e-9 tolerances decide, on both sides alike.
    for i, q in enumerate(rungs):
        if i % 2:
            q["attainable_flop_per_s_weights"] = q["flop_weights"] / q["step_time_s_weights"] * near
        elif i % 3 == 0 and q["launch_time_s"] > 0:
            q["attainable_flop_per_s_weights"] = q["flop_weights"] / q["launch_time_s"] * near
    a = {key: np.array([q[key] for q in rungs]) for key in rungs[0]}
    same(rungs_in_js(js, "rungOverheadCeilings", rungs),
         rung_overhead_ceilings(a["flop_weights"], a["launch_time_s"], a["attainable_flop_per_s_weights"]) / T)
    same(rungs_in_js(js, "rungCommunicationFeet", rungs),
         rung_communication_feet(a["flop_weights"], a["step_time_s_weights"], a["attainable_flop_per_s_weights"]) / T)


POINTS = st.lists(st.floats(1e-4, 1e7, allow_nan=False), min_size=0, max_size=6)


@settings(max_examples=200, deadline=None)
@given(st.lists(POINTS, min_size=1, max_size=4))
def test_the_ranges_fit_the_same_points(js, series):
    sources = json.dumps([{"data": {"x": xs, "y": xs}} for xs in series])
    x_end = js.eval(f"fitXEnd({sources}, {X_RANGE[1]}, {X_MARGIN})")
    y0, y1 = json.loads(js.eval(f"JSON.stringify(fitYRange({sources}, {Y_RANGE[0]}, {Y_RANGE[1]}, {Y_MARGIN}))"))
    assert x_end == pytest.approx(fit_x_end(*series), rel=1e-12)
    assert (y0, y1) == pytest.approx(fit_y_range(*series), rel=1e-12)


_ROOFLINE = ("Llama-3-8B · NVIDIA H100 SXM5 80GB · decode\nI = 4 FLOP/byte (weights, B = {b}, k = {k}, p = {p}): "
             "1.35\u00a0%\u00a0of\u00a0peak\n"
             "I = 4 counting KV reads (S = 8,192, KV BF16): 1.35\u00a0%\u00a0of\u00a0peak")


@pytest.mark.parametrize(("title", "stem", "want"), [
    # The roofline's title: its first line (model, GPU, phase) and the levers in its brackets name the file, so that
    # batch 4, INT4 and k = 4 of one model, one intensity, keep apart (a new user's three images were one name).
    (_ROOFLINE.format(b=4, k=1, p="BF16"), "roofline",
     "roofline-llama-3-8b-nvidia-h100-sxm5-80gb-decode-weights-b-4-k-1-p-bf16-s-8192-kv-bf16"),
    (_ROOFLINE.format(b=1, k=1, p="INT4"), "roofline",
     "roofline-llama-3-8b-nvidia-h100-sxm5-80gb-decode-weights-b-1-k-1-p-int4-s-8192-kv-bf16"),
    (_ROOFLINE.format(b=1, k=4, p="BF16"), "roofline",
     "roofline-llama-3-8b-nvidia-h100-sxm5-80gb-decode-weights-b-1-k-4-p-bf16-s-8192-kv-bf16"),
    # Split over GPUs the communication line names the split: TP = 8 and TP = 4, PP = 2 keep apart; the link ridge's
    # bracket has no lever.
    (_ROOFLINE.format(b=1, k=1, p="BF16") + "\nper GPU of 8 (TP = 4, PP = 2): communication 1.12 ms = 14 % of the "
     "step\nits I = 4,431 FLOP per byte sent (link ridge P_peak/link: 2,199)", "roofline",
     "roofline-llama-3-8b-nvidia-h100-sxm5-80gb-decode-weights-b-1-k-1-p-bf16-s-8192-kv-bf16-tp-4-pp-2"),
    ("Llama-3.1-405B · NVIDIA H200 · decode · does not fit in memory · ≈ approximate", "roofline",
     "roofline-llama-3.1-405b-nvidia-h200-decode-does-not-fit-in-memory-approximate"),
    # Throughput's split is a bracket of levers on its second line; its last line's bracket has no lever: left out.
    ("Llama-3-70B on NVIDIA H100 SXM5 80GB (p = BF16, k = 1, S = 8,192)\none model copy on 8 GPUs (TP = 8, PP = 1)\n"
     "tokens/s vs batch (largest batch that fits: 1,209)", "throughput-vs-batch",
     "throughput-vs-batch-llama-3-70b-on-nvidia-h100-sxm5-80gb-p-bf16-k-1-s-8192-tp-8-pp-1"),
    # Markup, path characters and a name past 160 characters: letters, digits, dots and dashes only, cut at 160.
    ("<b>../../etc/passwd</b> · Ünïcode · " + "x" * 200, "roofline", "roofline-b-etc-passwd-b-unicode-" + "x" * 137),
    ("a\nb (../../x = <i>)", "roofline", "roofline-a-x-i"),
    ("", "compare", "compare"),  # no title and no tag: the chart's name alone
    # A model named in another script keeps its letters (they vanished, leaving the GPU alone); an emoji is a dash.
    ("通义千问 🚀 · NVIDIA H100 · decode", "roofline", "roofline-通义千问-nvidia-h100-decode"),
    ("Модель-7B · H100", "roofline", "roofline-модель-7b-h100"),
])
def test_a_saved_image_is_named_after_its_chart_and_scenario(title, stem, want):
    from app.image_export import SAVE_IMAGE_JS

    ctx = MiniRacer()
    ctx.eval(SAVE_IMAGE_JS.replace("export default", "var save ="))  # the module parses; its default is a function
    assert ctx.eval("typeof save") == "function"
    got = ctx.eval(f"fileStem({json.dumps({'title': {'text': title}} if title else {})}, {json.dumps(stem)})")
    assert got == want


def test_a_grid_without_a_title_is_named_after_its_tag():
    # Compare's grid: its tag says which pins it compares (app/compare_view.py compare_title), so two trios' images
    # keep apart; it was "compare.svg" for every trio.
    from app.image_export import SAVE_IMAGE_JS

    ctx = MiniRacer()
    ctx.eval(SAVE_IMAGE_JS.replace("export default", "var save ="))
    grid = {"tags": ["batch 4 vs INT4 weights vs speculation k=4 · Llama-3-70B · h100-sxm"]}
    assert ctx.eval(f"fileStem({json.dumps(grid)}, 'compare')") == \
        "compare-batch-4-vs-int4-weights-vs-speculation-k-4-llama-3-70b-h100-sxm"
    assert ctx.eval("fileStem({tags: [3]}, 'compare')") == "compare"  # a tag not text: the name alone

