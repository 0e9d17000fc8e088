"""The guided tour: each step lands on the scenario it names and quotes the articles' figures."""

import pytest

from core import Scenario
from core.tour import BASE, GPU_TOUR, TOUR

# (step index, levers the step must set, strings its caption must show)
EXPECTED = [
    (0, {"model": "llama-3-8b", "batch": 1}, ["8.03 billion", "16.1 GB", "4.79 ms", "209 tokens/s"]),
    (1, {"model": "llama-3-8b"}, ["16 GFLOP", "0.0162 ms", "ridge point", "1/295 = 0.34 %",
                                  "Article 000 gives 0.0163 ms", "0.01623 ms"]),
    (2, {"context": 8192}, ["131.1 kB per token", "1.07 GB", "17.13 GB", "195.5 tokens/s", "128 KiB per token",
                            "down to 195 tokens/s"]),
    (3, {"batch": 56}, ["intensity 56", "19 % of peak", "11,681 tokens/s", "Article 000 says 11,690"]),
    (4, {"batch": 56, "capacity_convention": "decimal"}, ["74.5 GiB", "15.0 GiB", "only 59 sequences"]),
    (5, {"batch": 56, "context": 8192},
     ["16.1 GB of weights", "60.1 GB of KV cache", "76.2 GB", "22.7 ms", "2,462 tokens/s", "79 %", "other 21 %",
      "about 2,470 tokens per second"]),
    (6, {"model": "llama-3-70b", "batch": 1}, ["intensity 1 against a ridge of 295", "3.4 TFLOP/s of 989", "0.34 %"]),
    (7, {"batch": 4}, ["= 4 FLOP/byte"]),
    (8, {"weight_dtype": "int4", "batch": 1}, ["= 4 FLOP/byte"]),
    (9, {"spec_k": 4, "batch": 1}, ["= 4 FLOP/byte", "2.53 tokens"]),
    (10, {"phase": "prefill"}, ["A 2,000-token prompt", "I = 2,000 FLOP/byte", "ridge of 295", "(1 prompt)",
                                "one prompt alone takes"]),
    (11, {"gpu": "a100-80gb"}, ["ridge of 153", "0.65 %"]),
    (12, {"gpu": "h100-sxm"}, ["295", "0.34 %"]),
    (13, {"gpu": "h200"}, ["206", "0.49 %"]),
    (14, {"model": "qwen2.5-72b", "context": 131072, "gqa": False},
     ["320 GiB", "40 GiB", "trained context 131,072", "Llama-3-70B, whose trained context is 8,192"]),
]


def test_every_step_is_checked():
    assert len(EXPECTED) + len(GPU_TOUR) == len(TOUR)  # the many-GPU steps: tests/unit/test_scaling_app.py


@pytest.mark.parametrize("index, levers, quotes", EXPECTED)
def test_step_lands_on_its_scenario_and_quotes_the_article(index, levers, quotes):
    s = Scenario(batch=300, gpu="l4", spec_k=7)  # start somewhere else: steps must set every lever
    TOUR[index].apply(s)
    for name, value in levers.items():
        assert getattr(s, name) == value, name
    result = s.evaluate()
    title, caption = TOUR[index].render(result)
    for quote in quotes:
        assert quote in " ".join((title, caption, TOUR[index].render_footnote(result))), quote


def test_steps_set_every_lever():
    assert set(BASE) == set(Scenario().levers())
    for step in TOUR:
        assert set(step.settings) <= set(BASE)


def test_the_three_levers_coincide_on_the_tour():
    results = []
    for i in (7, 8, 9):
        s = Scenario()
        TOUR[i].apply(s)
        results.append(s.evaluate())
    assert {r.arithmetic_intensity_weights for r in results} == {4.0}
    assert len({r.attainable_flop_per_s_weights for r in results}) == 1


def test_no_step_teaches_beyond_its_model_trained_context():
    for step in TOUR:
        s = Scenario()
        step.apply(s)
        model = s.catalogue.model(s.model)
        assert not model.max_context or s.context <= model.max_context, step.title


def test_footnotes_mark_where_the_lab_and_the_article_round_differently():
    noted = [i for i, step in enumerate(TOUR) if step.footnote]
    assert {1, 2, 3, 5} <= set(noted)
