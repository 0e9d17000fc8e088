"""The browser's step (app/step.js) is core's (core/step.py): the same numbers on the same profile, to 1e-12.

Runs the JavaScript in an embedded V8 (mini-racer), no browser: random profiles, every term of which is
non-zero somewhere (a term the JavaScript forgets fails), and random scenarios over every lever the browser
moves, on catalogue models and GPUs, a session's own GPU and a pasted config, one GPU and split over several.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from conftest import ROOT, scenario_on
from hypothesis import given, settings
from hypothesis import strategies as st
from py_mini_racer import MiniRacer

from app.standalone import constants
from core.precision import KV_PRECISIONS, PRECISIONS
from core.scenario import LEVERS
from core.step import (
    AttentionProfile,
    CacheProfile,
    Collective,
    Split,
    StageProfile,
    Step,
    StepProfile,
    Workload,
    step,
    workload,
)

STEP_JS = ROOT / "app" / "step.js"
REL = 1e-12


@pytest.fixture(scope="module")
def js():
    """A V8 context holding app/step.js."""
    ctx = MiniRacer()
    ctx.eval(STEP_JS.read_text(encoding="utf-8"))
    return ctx


def run(js, expression: str, *args):
    """``expression(...args)`` in the JavaScript context, its value through JSON (Infinity as a string)."""
    code = (f"JSON.stringify(({expression})(...{json.dumps(args, allow_nan=False)}), "
            "(k, v) => v === Infinity ? 'Infinity' : v)")
    return json.loads(js.eval(code), parse_constant=float)


def same(got, want, where: str) -> None:
    if want is None or isinstance(want, (bool, np.bool_, str, tuple)):
        assert got == (list(want) if isinstance(want, tuple) else want), where
    elif got == "Infinity":
        assert math.isinf(want), where
    else:
        assert got == pytest.approx(float(want), rel=REL, abs=0), where


# -- random profiles: every term present ------------------------------------------------------------------

positive = st.floats(min_value=1e-3, max_value=1e15, allow_nan=False, allow_infinity=False)
caps = st.one_of(st.none(), st.integers(min_value=1, max_value=2**21))


@st.composite
def caches(draw) -> dict:
    """What one sequence holds, by GQA: terms that scale with p_kv, terms in their own format, caps and top k."""
    def one():
        terms = draw(st.lists(st.tuples(positive, st.one_of(st.just(0.0), positive), caps, caps), min_size=1,
                              max_size=3))
        return CacheProfile(tuple(terms), (draw(st.floats(min_value=0, max_value=1e9)),
                                           draw(st.floats(min_value=0, max_value=1e9))))
    return {True: one(), False: one()}


@st.composite
def stage_profiles(draw, experts: int) -> StageProfile:
    windows = st.one_of(st.tuples(st.none(), st.none()), st.tuples(st.integers(1, 2**20), st.none()),
                        st.tuples(st.none(), st.integers(1, 2**20)))
    prefill = tuple((f, *w) for f, w in draw(st.lists(st.tuples(positive, windows), min_size=1, max_size=3)))
    collectives = tuple(Collective(f"c{i}", calls, sent, msg) for i, (calls, sent, msg) in enumerate(draw(
        st.lists(st.tuples(st.integers(1, 1000).map(float), positive, positive), max_size=3))))
    kernels = draw(st.integers(1, 10**5))
    drawn = dict(
        n_active_params=draw(st.floats(min_value=1e6, max_value=1e13)),
        weights=draw(st.tuples(positive, positive if experts else st.just(0.0))),
        params=draw(st.tuples(positive, positive if experts else st.just(0.0))),
        cache=draw(caches()),
        attention=AttentionProfile(tuple(draw(st.lists(st.tuples(positive, caps), min_size=1, max_size=3))),
                                   tuple(draw(st.lists(st.tuples(positive, caps), min_size=1, max_size=3))),
                                   prefill, draw(st.floats(min_value=0, max_value=1e9))),
        collectives=collectives,
        kernels_per_step=kernels,
        launch_s=draw(st.floats(min_value=1e-9, max_value=1.0)),
        layers=draw(st.integers(1, 200)),
    )
    extra = {f.name: draw(st.floats(min_value=1e-6, max_value=1e6))
             for f in dataclasses.fields(StageProfile) if f.name not in drawn}
    return StageProfile(**drawn, **extra)


@st.composite
def profiles(draw) -> StepProfile:
    """A random profile, every term of which is present somewhere: one to four pipeline stages, dense or MoE."""
    experts = draw(st.sampled_from([0, 8, 64, 256]))
    splits = tuple(Split(tp, pp, tuple((draw(positive), draw(caches())) for _ in range(pp)))
                   for tp, pp in draw(st.lists(st.tuples(st.sampled_from([1, 2, 8]), st.integers(1, 3)), max_size=3)))
    drawn = dict(
        peak_flop_per_s=draw(st.floats(min_value=1e10, max_value=1e19)),
        bandwidth=draw(st.floats(min_value=1e9, max_value=1e16)),
        bytes_per_weight=draw(st.sampled_from([0.5, 0.53, 1.0, 2.0, 4.0])),
        stages=tuple(draw(st.lists(stage_profiles(experts), min_size=1, max_size=4))),
        experts=experts,
        experts_per_token=draw(st.integers(1, max(1, min(experts, 16)))) if experts else 0,
        expert_groups=draw(st.integers(1, 64)),
        model_cache=draw(caches()),
        call_latency_s=draw(st.floats(min_value=0, max_value=1e-4)),
        link_bandwidth=draw(st.one_of(st.none(), st.floats(min_value=1e9, max_value=1e13))),
        capacity_bytes=draw(st.floats(min_value=1e9, max_value=1e13)),
        reserve_bytes=draw(st.floats(min_value=0, max_value=1e11)),
        groups=draw(st.integers(1, 1000)),
        gpus=draw(st.integers(1, 10**5)),
        splits=splits,
    )
    # A field added to the profile later is drawn too (a positive number), so its term is exercised.
    extra = {f.name: draw(st.floats(min_value=1e-6, max_value=1e6))
             for f in dataclasses.fields(StepProfile) if f.name not in drawn}
    return StepProfile(**drawn, **extra)


STEP_ARGS = st.fixed_dictionaries({
    "batch": st.integers(1, 65536), "tokens": st.integers(1, 2**21), "context": st.integers(1, 2**21),
    "gained": st.floats(min_value=1.0, max_value=2**21), "p_kv": st.sampled_from([0.5, 1.0, 2.0, 4.0]),
    "gqa": st.booleans(), "prefill": st.booleans()})


@settings(max_examples=300, deadline=None)
@given(profiles(), STEP_ARGS)
def test_the_browser_step_is_the_core_step(js, profile, args):
    want = step(profile, args["batch"], tokens=args["tokens"], context=args["context"], gained=args["gained"],
                p_kv=args["p_kv"], gqa=args["gqa"], prefill=args["prefill"]).at()
    got = run(js, "(p, a) => step(p, a.batch, a.tokens, a.context, a.gained, a.p_kv, a.gqa, a.prefill)",
              profile.to_json(), args)
    assert set(got) == set(want), "the JavaScript step's fields are core.step.Step's"
    for name, value in want.items():
        same(got[name], value, name)


WORKLOAD_ARGS = st.fixed_dictionaries({
    "batch": st.integers(1, 65536), "spec_k": st.integers(1, 64), "context": st.integers(1, 2**21),
    "prompt": st.integers(1, 2**21), "acceptance": st.sampled_from([0.0, 0.3, 0.7, 1.0]),
    "p_kv": st.sampled_from([0.5, 1.0, 2.0, 4.0]), "gqa": st.booleans(), "prefill": st.booleans(),
    "max_batch": st.sampled_from([1, 2, 65536]), "stored_bytes_per_weight": st.sampled_from([None, 0.53, 1.0])})


@settings(max_examples=150, deadline=None)
@given(profiles(), WORKLOAD_ARGS)
def test_the_browser_workload_is_the_core_workload(js, profile, args):
    """Every step a result shows (the workload, its ladder, prefill, TTFT, verify, k = 1) and the figures beside."""
    want = workload(profile, **args)
    got = run(js, "(p, a) => workload(p, a.batch, a.spec_k, a.context, a.prompt, a.acceptance, a.p_kv, a.gqa, "
                  "a.prefill, a.max_batch, a.stored_bytes_per_weight)", profile.to_json(), args)
    assert set(got) == {f.name for f in dataclasses.fields(Workload)}
    for f in dataclasses.fields(Workload):
        value = getattr(want, f.name)
        if not isinstance(value, Step):
            same(got[f.name], value, f.name)
            continue
        rungs = got[f.name] if isinstance(got[f.name], list) else [got[f.name]]
        assert len(rungs) == len(value.batch), f.name
        for i, rung in enumerate(rungs):
            for name, x in value.at(i).items():
                same(rung[name], x, f"{f.name}[{i}].{name}")


def test_every_field_of_the_step_is_written_in_the_browser():
    """A field added to core.step.Step and not to app/step.js is caught by name, before any number."""
    text = STEP_JS.read_text(encoding="utf-8")
    missing = [f for f in Step.__dataclass_fields__ if f"{f}:" not in text and f"out.{f} =" not in text]
    assert not missing


# -- random scenarios over the levers the browser moves --------------------------------------------------

#: The levers the browser moves (the offline page's and the instant redraw's): batch, k, α, S, both formats, GQA.
BROWSER_LEVERS = st.fixed_dictionaries({
    "batch": st.sampled_from(LEVERS["batch"].stops + (7, 59, 1000, 65536)),
    "spec_k": st.integers(1, 16), "acceptance": st.sampled_from([0.0, 0.5, 0.75, 1.0]),
    "context": st.sampled_from(LEVERS["context"].stops + (1, 4097, 2**21)),
    "weight_dtype": st.sampled_from(list(LEVERS["weight_dtype"].parameter.objects)),
    "kv_dtype": st.sampled_from(list(KV_PRECISIONS)), "gqa": st.booleans()})
#: Fixed when the constants are written: the model, the GPU, the split.
SETUPS = st.tuples(
    st.sampled_from(["llama-3-8b", "llama-3-70b", "qwen3-30b-a3b", "gpt-oss-20b", "deepseek-v3", "gemma-3-27b",
                     "qwen3-next-80b-a3b", "nemotron-h-56b", "llama-4-scout", "pasted"]),
    st.sampled_from(["h100-sxm", "a100-80gb", "mi300x", "b200", "custom"]),
    st.sampled_from([(1, 1, 1), (2, 1, 1), (8, 1, 1), (2, 2, 1), (1, 4, 1), (2, 1, 4), (8, 2, 8)]))

#: ScenarioResult's fields the browser's evaluate() writes, and the ladder's (compared by position).
SCALARS = ("weight_bytes_read", "weight_bytes_held", "weight_params_read", "weight_params_held", "flop_per_step",
           "flop_per_step_weights", "attention_flop_per_step", "arithmetic_intensity_weights",
           "arithmetic_intensity_with_kv", "ridge_point", "attainable_flop_per_s_weights",
           "attainable_flop_per_s_with_kv", "peak_fraction_weights", "peak_fraction_with_kv", "bound",
           "acceptance", "expected_tokens_per_step", "step_time_s_with_kv", "step_time_s_weights",
           "tokens_per_s_with_kv", "tokens_per_s_weights", "kv_bytes_per_token", "kv_bytes_per_sequence",
           "kv_bytes_per_token_per_gpu", "kv_bytes_per_sequence_per_gpu", "kv_bytes", "kv_traffic_bytes",
           "bytes_per_step", "fits", "max_batch", "free_for_kv_bytes", "weights_shortfall_bytes",
           "memory_used_bytes", "peak_flop_per_s", "capacity_bytes", "reserve_bytes", "compute_time_s",
           "memory_time_s", "communication_time_s", "gpu_time_s", "bytes_sent_per_step", "launch_overhead_s",
           "overhead_ceiling_flop_per_s", "kernels_per_step", "prefill_intensity", "prefill_attainable_flop_per_s",
           "decode_intensity", "decode_attainable_flop_per_s", "ttft_intensity", "ttft_attainable_flop_per_s",
           "ttft_s", "verify_step_time_s", "tpot_s", "speculative_speedup", "tokens_per_s_aggregate",
           "tokens_per_s_per_sequence", "output_tokens_per_s_aggregate", "total_memory_bytes", "memory_stage",
           "slowest_stage", "suggested_tp", "suggested_pp", "stored_tp", "stored_pp", "prompt_tokens_per_s_aggregate",
           "sequences_in_flight",
           "communication_intensity", "interconnect_ridge_point", "gpu_hour_price", "cost_per_million_output_tokens",
           "cost_per_million_prompt_tokens")
LADDER = ("batch", "arithmetic_intensity_weights", "arithmetic_intensity_with_kv", "attainable_flop_per_s_weights",
          "attainable_flop_per_s_with_kv", "peak_fraction_weights", "tokens_per_s_with_kv", "fits")


def scenario_for(model: str, gpu: str, split: tuple[int, int, int]):
    return scenario_on(model, gpu, prompt_len=3000, reserve_bytes=2.5 * 2**30, tp=split[0], pp=split[1], ep=split[2])


_CONSTANTS: dict = {}


@settings(max_examples=120, deadline=None)
@given(SETUPS, BROWSER_LEVERS)
def test_the_browser_evaluates_a_scenario_as_core_does(js, setup, levers):
    model, gpu, split = setup
    if setup not in _CONSTANTS:  # the page's constants, written once per model, GPU and split
        s = scenario_for(*setup)
        _CONSTANTS[setup] = (s, constants(s, s.evaluate()))
    s, c = _CONSTANTS[setup]
    result = s.clone(**levers).evaluate()
    want = result.to_json()
    got = run(js, "evaluate", c, levers)
    for key in SCALARS:
        same(got[key], want[key], key)
    assert len(got["ladder"]) == len(result.ladder.batch)
    for name in LADDER:
        for i, rung in enumerate(got["ladder"]):
            same(rung[name], getattr(result.ladder, name)[i].item(), f"ladder[{i}].{name}")


def test_the_parity_test_reads_every_field_the_browser_writes(js):
    """Every field the browser's evaluate() returns is compared above (a new one must be added to SCALARS)."""
    s = scenario_for("qwen3-30b-a3b", "h100-sxm", (2, 1, 2))
    got = run(js, "evaluate", constants(s, s.evaluate()), {"batch": 4, "spec_k": 2, "context": 4096,
                                                          "weight_dtype": "bf16", "kv_dtype": "fp8", "gqa": True})
    assert set(got) - {"ladder"} == set(SCALARS)
    assert {p.id for p in PRECISIONS.values()} >= set(KV_PRECISIONS)


def test_the_checkpoints_own_fit_is_carried_by_the_result_on_both_sides(js):
    # DeepSeek-V3 on 8 H100s in BF16 does not fit; its FP8 checkpoint does at TP = 8, PP = 2.  The offline page's
    # warning searched that fit a second time, beside the one its evaluate() had; both now read the result's.
    s = scenario_on("deepseek-v3", "h100-sxm", tp=8, weight_dtype="bf16")
    r = s.evaluate()
    assert (r.suggested_tp, r.suggested_pp, r.stored_tp, r.stored_pp) == (8, 4, 8, 2)
    got = run(js, "evaluate", constants(s, r), {"batch": 1, "spec_k": 1, "context": 8192, "weight_dtype": "bf16",
                                                 "kv_dtype": "bf16", "gqa": True})
    assert (got["stored_tp"], got["stored_pp"]) == (8, 2)
    fits = s.clone(weight_dtype="stored").evaluate()  # picked as stored: no hint of it
    assert (fits.stored_tp, fits.stored_pp) == (None, None)
