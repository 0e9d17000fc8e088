"""The guided tour: each step lands on the scenario it names and quotes the articles' figures."""

import pytest

from core import Scenario
from core.ladder import ARTICLE_ORDER as LADDER_ORDER
from core.ladder import article_start
from core.tour import BASE, GPU_TOUR, LADDER_TOUR, TOUR

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
    # the many-GPU steps: tests/test_scaling_app.py; the ladder's: below
    assert len(EXPECTED) + len(GPU_TOUR) + len(LADDER_TOUR) == len(TOUR)


# The ladder's steps: each shows the rungs so far and quotes the climb's numbers, worked by hand in
# tests/test_ladder.py (B 1 -> 9 -> 48 -> 48 -> 256; I = 2·B·k/p; 49.3 GiB freed by INT4 on each of 2 GPUs).
LADDER_EXPECTED = [
    ((), ["Llama-3-70B at B = 1 on TP = 2", "I = 1 FLOP/byte against a ridge of 295", "22.7 tokens/s per GPU",
          "9 sequences fit"]),
    (("continuous_batching",), ["raises B to 9", "B = 9, I = 9,", "201.6 tokens/s per GPU (22.7 before)",
                                "sustains 2.9"]),
    (("continuous_batching", "weight_quantization"),
     ["49.3 GiB more", "48 sequences fit instead of 9", "B = 48, I = 192", "3,055.5 tokens/s", "memory-bound"]),
    (("continuous_batching", "weight_quantization", "speculative_decoding"),
     ["4 tokens verified", "I = 768 FLOP/byte, past the ridge of 295", "compute-bound", "TPOT 6.28 ms"]),
    (tuple(LADDER_ORDER), ["without it 6 would fit, not 48", "1.3 %", "wasted 93 %", "681 fit instead of 48",
                           "B reaches 256", "4,016.3 tokens/s per GPU", "TPOT of 31.87 ms"]),
]


@pytest.mark.parametrize("step, expected", list(zip(LADDER_TOUR, LADDER_EXPECTED, strict=True)))
def test_ladder_steps_walk_the_rungs(step, expected):
    rungs, quotes = expected
    assert step.rungs == rungs
    s = Scenario(batch=300, gpu="l4")
    step.apply(s)
    assert s.levers() == article_start().levers()  # the article's 70B at B = 1 on TP = 2
    text = " ".join(step.render(s.evaluate()))
    for quote in quotes:
        assert quote in text, quote


def test_ladder_steps_close_the_tour_and_open_the_ladder_tab():
    from app.lab import Lab

    assert TOUR[-len(LADDER_TOUR):] == LADDER_TOUR
    lab = Lab(query={"present": ["true"]})
    first = len(TOUR) - len(LADDER_TOUR)
    lab.tour.go(first)
    assert lab.state.tab == "Ladder" and lab.state.ladder == []
    assert lab.tour.keys.active  # present mode: the keys (a clicker's → too) step through the rungs
    lab.tour._key("next")
    assert lab.state.ladder == ["continuous_batching"]
    assert [s.rung for s in lab.ladder.ladder.steps] == [None, "continuous_batching"]
    lab.tour._key("next")
    lab.tour._key("previous")
    assert lab.state.ladder == ["continuous_batching"] and lab.state.tour_step == first + 2
    query = lab.link.query()
    assert query["tour"] == str(first + 2) and query["ladder"] == "continuous_batching" and query["tab"] == "Ladder"
    again = Lab(query={k: [v] for k, v in query.items()})
    assert again.state.ladder == ["continuous_batching"] and again.state.tab == "Ladder"


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
