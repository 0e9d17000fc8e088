"""The offline page's kvPerSeq and paramsRead (app/roofline_model.js) on the new layer kinds: chunked attention
(Llama-4-Scout), fixed-state layers (Qwen3-Next, Nemotron-H), alternating sliding layers with an MXFP4 checkpoint
(gpt-oss-120b) — the page's numbers equal the core's."""

import json
import random

import pytest
from test_standalone import KEYS, RESULTS, SET, TEXT, offline_page  # noqa: F401  (a fixture)

from app.memory_view import memory_html
from app.readouts import readouts_html
from app.standalone import OFFLINE_READOUT_KEYS
from core import Scenario
from core.precision import KV_PRECISIONS, WEIGHT_PRECISIONS
from core.scenario import LEVERS


@pytest.mark.parametrize("model, gpu", [("llama-4-scout", "h200"), ("qwen3-next-80b-a3b", "h100-sxm"),
                                        ("nemotron-h-56b", "b200"), ("gpt-oss-120b", "h100-sxm")])
def test_page_numbers_equal_the_core_on_every_layer_kind(offline_page, model, gpu):  # noqa: F811
    scenario = Scenario(model=model, gpu=gpu)
    page, _ = offline_page(scenario)
    rng = random.Random(model)
    batches = sorted({*LEVERS["batch"].stops, scenario.batch})
    contexts = sorted({*LEVERS["context"].stops, scenario.context})
    for _ in range(5):
        b, s = rng.randrange(len(batches)), rng.randrange(len(contexts))
        k, w, kv, g = rng.randint(1, 8), rng.choice(WEIGHT_PRECISIONS), rng.choice(KV_PRECISIONS), rng.random() < 0.7
        a = round(0.05 * rng.randint(1, 19), 2)
        page.evaluate(SET, [b, k, w, kv, s, g, a])
        inputs = {"batch": batches[b], "spec_k": k, "acceptance": a, "weight_dtype": w, "kv_dtype": kv,
                  "context": contexts[s], "gqa": g}
        expected = json.dumps(json.dumps(inputs, separators=(",", ":")))
        page.wait_for_function(f"JSON.stringify({RESULTS}.inputs) === {expected}")
        got = page.evaluate(RESULTS)
        result = Scenario(model=model, gpu=gpu, batch=batches[b], spec_k=k, weight_dtype=w, kv_dtype=kv,
                          context=contexts[s], gqa=g, acceptance=a).evaluate()
        want = result.to_json()
        for key in KEYS:  # the prefill point too: chunked, windowed and fixed-state layers cap its attention
            assert got[key] == pytest.approx(want[key], rel=1e-12), key
        assert got["max_batch"] == want["max_batch"]
        assert page.evaluate(TEXT, "memory") == memory_html(result, approximate=result.model.approximate_note(see=""))
        served = readouts_html(result, show_work=True, keys=OFFLINE_READOUT_KEYS)
        assert page.evaluate(TEXT, "readouts") == served  # the smallest split that fits named, as served
    assert page.errors == []
