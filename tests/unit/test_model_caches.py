"""What depends only on the model is worked out once per model (issue 31, F1), and gives what it gave uncached.

The caches: a stack's groups, its kinds' layers and its runs' starts (kept on the immutable
:class:`core.layers.LayerStack`), a model's cache layers (on the immutable :class:`core.models.ModelSpec`),
the per-stage memory and the smallest-fit splits of :mod:`core.profiles` (bounded LRUs keyed by the model's
identity), a split's JSON, and the offline/instant constants' formulas (as stored or not, GQA on or off).  Each is
checked against a per-layer or per-format recomputation over a few models, the F1 config among them.
"""

from __future__ import annotations

import json
import random

import pytest
from fuzz_strategies import heavy_hybrid_config
from hypothesis import given, settings
from hypothesis import strategies as st

from app.standalone import constants
from core import profiles
from core.config_reader import from_hf_config
from core.explain import quantities
from core.hardware import get_accelerator
from core.layers import LayerKind, LayerStack
from core.model_catalogue import get_model
from core.parallelism import Parallelism
from core.scenario import LEVERS, Scenario

HEAVY = from_hf_config(heavy_hybrid_config(), model_id="config-heavy", name="heavy")
#: Dense, MoE, sliding-window, MLA with a quantised checkpoint, a Mamba hybrid, a linear-attention hybrid, F1's.
MODELS = {mid: get_model(mid) for mid in ("llama-3-8b", "mixtral-8x7b", "gemma-2-9b", "deepseek-v3",
                                          "nemotron-h-56b", "qwen3-next-80b-a3b", "gpt-oss-20b")}
MODELS["heavy"] = HEAVY


def per_layer(stack: LayerStack) -> list[LayerKind]:
    return [kind for kind, n in stack.runs for _ in range(n)]


def naive_groups(kinds: list[LayerKind]) -> tuple:
    counts: dict[LayerKind, int] = {}
    for kind in kinds:
        counts[kind] = counts.get(kind, 0) + 1
    return tuple(counts.items())


def test_the_heavy_config_is_issue_31s():
    assert len(json.dumps(heavy_hybrid_config())) == 37_407
    assert HEAVY.n_layers == 2048 and len(HEAVY.stack.runs) == 2048  # one run per layer: the worst case
    assert [n for _, n in HEAVY.stack.groups()] == [410, 410, 410, 409, 409]
    assert [k.attention for k, _ in HEAVY.stack.groups()] == ["full", "sliding", "chunked", "linear", "mamba"]


@pytest.mark.parametrize("mid", sorted(MODELS))
def test_groups_are_worked_out_once_and_equal_the_per_layer_count(mid):
    stack = MODELS[mid].stack
    assert stack.groups() == naive_groups(per_layer(stack))
    assert stack.groups() is stack.groups()  # kept, not recomputed
    assert stack.n_layers == len(per_layer(stack))
    kinds = per_layer(stack)
    for i in (0, len(kinds) // 3, len(kinds) - 1):
        assert stack.kind_at(i) == kinds[i]
    for bad in (-1, len(kinds)):
        with pytest.raises(IndexError):
            stack.kind_at(bad)


@settings(max_examples=60, deadline=None)
@given(mid=st.sampled_from(sorted(MODELS)), a=st.floats(0, 1), b=st.floats(0, 1))
def test_a_slice_of_the_stack_is_the_layers_in_it(mid, a, b):
    stack = MODELS[mid].stack
    kinds = per_layer(stack)
    start, end = sorted((round(a * len(kinds)), round(b * len(kinds))))
    runs = stack.runs_between(start, end)
    assert [k for k, n in runs for _ in range(n)] == kinds[start:end]
    assert stack.groups_between(start, end) == naive_groups(kinds[start:end])


@pytest.mark.parametrize("mid", sorted(MODELS))
def test_the_cache_terms_cover_the_layers_each_kind_of_cache_is_in(mid):
    m = MODELS[mid]
    kinds = per_layer(m.stack)
    terms = m.kv_terms(2.0)
    assert m.kv_terms(2.0) == terms
    holding = [i for i, k in enumerate(kinds) if k.allocates_kv]
    kv = [t for t in terms if t.what in ("KV", "MLA latent")]
    assert sorted(i for t in kv for i in t.layer_indices) == holding
    assert sum(t.layers for t in kv) == m.n_kv_layers
    for t in terms:
        assert t.layers == len(t.layer_indices) and list(t.layer_indices) == sorted(t.layer_indices)
    # p_kv scales what is per token, not which layers: the layers of every term are the same at another p_kv
    assert [t.layer_indices for t in m.kv_terms(1.0, False)] == [t.layer_indices for t in terms]


def test_the_heavy_models_cache_per_token_multiplies_out():
    # 410 full + 410 sliding + 410 chunked layers hold KV of 2·h_kv·d_head·p = 2·8·128·2 = 4,096 bytes a token
    assert HEAVY.kv_bytes_per_token(2.0) == 1230 * 4096


@pytest.mark.parametrize("mid", ["heavy", "mixtral-8x7b", "nemotron-h-56b"])
@pytest.mark.parametrize("tp,pp", [(1, 2), (2, 4), (8, 16), (4, 128)])
def test_a_stages_share_of_each_term_is_its_layers_there(mid, tp, pp):
    m = MODELS[mid]
    plan = Parallelism(m, tp=tp, pp=pp)
    terms = m.kv_terms(2.0)
    shares = plan.stage_term_shares(terms, True)
    start = 0
    for stage, n in enumerate(plan.stage_layers()):
        for t, share in zip(terms, shares[stage], strict=True):
            here = sum(1 for i in t.layer_indices if start <= i < start + n)
            assert share == (here / t.layers * plan._term_tp_factor(t, True) if here else 0.0)
        assert plan.stage_groups(stage) == naive_groups(per_layer(m.stack)[start:start + n])
        start += n


@pytest.mark.parametrize("mid", ["heavy", "deepseek-v3", "qwen3-next-80b-a3b"])
def test_kept_stage_memory_and_splits_equal_fresh_ones(mid):
    m, gpu = MODELS[mid], get_accelerator("h100-sxm")
    for tp, pp in ((1, 1), (2, 2), (8, 8)):
        plan = Parallelism(m, tp=tp, pp=pp)
        assert profiles._stage_memory(m, plan) == profiles._stage_memory_of(m, plan)
        assert profiles._stage_memory(m, plan) is profiles._stage_memory(m, Parallelism(m, tp=tp, pp=pp))
    kept = profiles._splits(m, 1, gpu)
    assert kept == profiles._splits_of(m, 1, 8, 1024)
    assert [(s.tp, s.pp) for s in kept][:4] == [(1, 1), (2, 1), (4, 1), (8, 1)]
    assert kept[0].to_json() == {"tp": 1, "pp": 1, "stages": [
        [params, {"gqa": _plain(c[True]), "mha": _plain(c[False])}] for params, c in kept[0].stages]}


def _plain(cache) -> dict:
    return {"terms": [list(t) for t in cache.terms], "fixed": list(cache.fixed)}


def test_every_weight_formats_deployment_shares_the_models_splits():
    gpu = get_accelerator("h200")
    levers = {name: getattr(Scenario(), name) for name in ("tp", "pp", "ep", "replicas", "reserve_bytes",
                                                             "capacity_convention", "cuda_graphs")}
    formats = LEVERS["weight_dtype"].parameter.objects
    deps = [profiles.deployment(HEAVY, gpu, weight_dtype=wd, **levers) for wd in formats]
    assert all(d.profile.splits is deps[0].profile.splits for d in deps)
    # the deployment itself is kept by identity: asked again, the same object
    assert profiles.deployment(HEAVY, gpu, weight_dtype="fp8", **levers) is deps[3]


def test_a_reused_id_is_not_a_hit(monkeypatch):
    m, other = MODELS["llama-3-8b"], MODELS["mixtral-8x7b"]
    plan = Parallelism(other, tp=2, pp=2)
    monkeypatch.setitem(profiles._STAGES, (id(other), 2, 2, 1), (m, "llama's, under mixtral's id"))
    assert profiles._stage_memory(other, plan) == profiles._stage_memory_of(other, plan)


def test_the_model_caches_are_bounded(monkeypatch):
    monkeypatch.setattr(profiles, "STAGE_CACHE_SIZE", 5)
    monkeypatch.setattr(profiles, "SPLITS_CACHE_SIZE", 3)
    monkeypatch.setattr(profiles, "_STAGES", profiles.OrderedDict())
    monkeypatch.setattr(profiles, "_SPLITS", profiles.OrderedDict())
    gpu = get_accelerator("h100-sxm")
    base = heavy_hybrid_config(40)
    for i in range(12):  # twelve pasted models, each its own object
        m = from_hf_config({**base, "num_hidden_layers": 40 + i, "layer_types": base["layer_types"][:1] * (40 + i)},
                           model_id=f"config-{i}", name=str(i))
        profiles._splits(m, 1, gpu)
        assert len(profiles._STAGES) <= 5 and len(profiles._SPLITS) <= 3
    assert len(profiles._STAGES) == 5 and len(profiles._SPLITS) == 3


@pytest.mark.parametrize("mid,gpu", [("llama-3-8b", "h100-sxm"), ("gpt-oss-20b", "h100-sxm"),
                                     ("deepseek-v3", "b200"), ("heavy", "a100-40gb"), ("mixtral-8x7b", "l4")])
def test_the_browsers_formulas_are_each_formats_own(mid, gpu):
    s = Scenario()
    if mid == "heavy":
        s.add_model(HEAVY)
    else:
        s.model = mid
    s.gpu = gpu
    s.batch = random.Random(mid).choice(LEVERS["batch"].stops)
    c = constants(s, s.evaluate())
    for wd in LEVERS["weight_dtype"].parameter.objects:
        own = {key: q.formula for key, q in quantities(s.clone(weight_dtype=wd).evaluate()).items()}
        assert c["formulas"][wd] == own, wd
        # GQA off: formulas_mha's keys replace theirs (MLA's decode attention, on the expanded keys and values)
        off = {key: q.formula for key, q in quantities(s.clone(weight_dtype=wd, gqa=False).evaluate()).items()}
        assert {**c["formulas"][wd], **c["formulas_mha"][wd]} == off, wd
        assert set(c["formulas_mha"][wd]) == ({"flops"} if mid == "deepseek-v3" else set()), wd
    assert c["formulas"]["stored"]["intensity"] == "I = 2·N_active·B·k / weight bytes read"
