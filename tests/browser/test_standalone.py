"""The offline page: opened from disk with the network blocked, its numbers equal the core's."""

import json
import random

import pytest
from conftest import LEGEND_ENTRIES, scenario_on
from playwright.sync_api import expect

from app.memory_view import memory_html
from app.readouts import readouts_html
from app.roofline_view import RooflineView
from app.standalone import OFFLINE_READOUT_KEYS, standalone_html
from core import Scenario
from core.explain import quantities
from core.hardware import custom_accelerator
from core.precision import KV_PRECISIONS, WEIGHT_PRECISIONS
from core.scenario import LEVERS

KEYS = (
    "weight_bytes_read",
    "weight_params_read",
    "weight_params_held",
    "flop_per_step",
    "arithmetic_intensity_weights",
    "arithmetic_intensity_with_kv",
    "ridge_point",
    "attainable_flop_per_s_weights",
    "peak_fraction_weights",
    "step_time_s_with_kv",
    "tokens_per_s_with_kv",
    "tokens_per_s_weights",
    "kv_bytes_per_token",
    "kv_bytes",
    "memory_used_bytes",
    "attainable_flop_per_s_with_kv",
    "peak_fraction_with_kv",
    "expected_tokens_per_step",
    "acceptance",
    "step_time_s_weights",
    "kv_bytes_per_sequence",
    "free_for_kv_bytes",
    "overhead_ceiling_flop_per_s",
    "gpu_time_s",
    "launch_overhead_s",
    # the same request's other phase: the batch's prefill and one prompt's (the chart's point, TTFT)
    "prefill_intensity",
    "prefill_attainable_flop_per_s",
    "ttft_intensity",
    "ttft_attainable_flop_per_s",
    "ttft_s",
    "verify_step_time_s",
    "tpot_s",
    "speculative_speedup",
)

# Set the page's widgets as a reader would (through their models), then wait until
# the page's results echo those inputs: CustomJS callbacks run asynchronously.
SET = """
([b, k, w, kv, s, g, a]) => {
  const m = (c) => [...Bokeh.documents[0].all_models].find(x => (x.css_classes || []).includes(c));
  m('batch').value = b; m('spec-k').value = k; m('weight-dtype').value = w; m('kv-dtype').value = kv;
  m('context').value = s; m('gqa').active = g; m('acceptance').value = a;
}
"""
# (an empty text, before the page's script first writes it, reads as {}: a wait on it keeps waiting, where JSON.parse
# threw and ended the wait at once under load)
RESULTS = "JSON.parse(Bokeh.documents[0].get_model_by_name('results').text || '{}')"
TEXT = "(name) => Bokeh.documents[0].get_model_by_name(name).text"
TITLE = "Bokeh.documents[0].get_model_by_name('roofline').title.text"
# The page's constants, as its callback holds them (CustomJS args: a Map in BokehJS 3).
CONSTANTS = ("(() => { const cb = [...Bokeh.documents[0].all_models].find((m) => m.args !== undefined &&"
             " (m.args instanceof Map ? m.args.has('C') : 'C' in m.args));"
             " const C = cb.args instanceof Map ? cb.args.get('C') : cb.args.C;"
             " return JSON.parse(JSON.stringify(C, (k, v) => v instanceof Map ? Object.fromEntries(v) : v)); })()")


RESULTS_WRITTEN = "Bokeh.documents.length > 0 && Bokeh.documents[0].get_model_by_name('results').text.length > 0"


@pytest.fixture
def offline_page(browser, tmp_path):
    """Open a written page from file:// in a context where every network request fails."""
    contexts = []

    def open_page(scenario):
        path = tmp_path / f"{scenario.model}-{scenario.gpu}.html"
        path.write_text(standalone_html(scenario), encoding="utf-8")
        ctx = browser.new_context()
        contexts.append(ctx)
        ctx.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
        page = ctx.new_page()
        page.errors = []
        page.on("console", lambda m: page.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: page.errors.append(str(e)))
        page.goto(path.as_uri())
        page.wait_for_function(RESULTS_WRITTEN)
        return page, path

    yield open_page
    for ctx in contexts:
        ctx.close()


def _scenario(model: str, gpu: str) -> Scenario:
    """A catalogue scenario, or one with a session's own GPU or pasted model (they travel too)."""
    return scenario_on(model, gpu, acceptance=0.75)


def _assert_page_is_the_core(page, scenario, batches, contexts, levers):
    """Set the page's widgets to ``levers`` (batch and context as stop indices) and compare everything with core."""
    b, k, w, kv, s, g, a = levers
    page.evaluate(SET, [b, k, w, kv, s, g, a])
    inputs = {"batch": batches[b], "spec_k": k, "acceptance": int(a) if a in (0, 1) else a,  # as JSON writes it
              "weight_dtype": w, "kv_dtype": kv, "context": contexts[s], "gqa": g}
    expected = json.dumps(json.dumps(inputs, separators=(",", ":")))
    page.wait_for_function(f"JSON.stringify({RESULTS}.inputs) === {expected}")
    got = page.evaluate(RESULTS)
    result = scenario.clone(batch=batches[b], spec_k=k, weight_dtype=w, kv_dtype=kv, context=contexts[s],
                            gqa=g, acceptance=a).evaluate()
    want = result.to_json()
    for key in KEYS:
        assert got[key] == pytest.approx(want[key], rel=1e-12), key
    assert (got["bound"], got["fits"], got["max_batch"]) == (want["bound"], want["fits"], want["max_batch"])
    ladder = result.ladder
    assert [r["batch"] for r in got["ladder"]] == ladder.batch.tolist()
    assert [r["fits"] for r in got["ladder"]] == ladder.fits.tolist()
    # The prefill point sits where the served chart puts it: one prompt alone, on the roof (under the overhead
    # ceiling of its launches).
    other = page.evaluate("Bokeh.documents[0].get_model_by_name('other-phase').data")
    assert list(other["x"]) == [pytest.approx(result.ttft_intensity, rel=1e-12)]
    assert list(other["y"]) == [pytest.approx(result.ttft_attainable_flop_per_s / 1e12, rel=1e-12)]
    # Readouts with their work and the warnings (the smallest split that fits named), the memory bar's segments,
    # words and numbers, and the chart's title: the served lab's, at the page's split.
    assert got["warnings"] == list(result.warnings)
    assert page.evaluate(TEXT, "memory") == memory_html(result, approximate=result.model.approximate_note(see=""))
    rows = {q.key: q for q in quantities(result).values()}
    for key in [key for key in OFFLINE_READOUT_KEYS if key in rows]:  # "attainable-comm" only split
        shown = got["readouts"][key]
        assert (shown["label"], shown["formula"], shown["work"], shown["value"]) == (
            rows[key].label, rows[key].formula, rows[key].work, rows[key].value), key
    assert page.evaluate(TEXT, "readouts") == readouts_html(result, show_work=True, keys=OFFLINE_READOUT_KEYS)
    view = RooflineView(result)
    assert page.evaluate(TITLE) == view.figure.title.text
    # the third ceiling's label: the slowest stage's kernels, which the levers can change under PP
    label = page.evaluate("Array.from(Bokeh.documents[0].get_model_by_name('overhead-ceiling').data.label)")
    assert label == list(view.overhead.data["label"])
    return result


@pytest.mark.parametrize(
    "model, gpu",
    [("llama-3-8b", "h100-sxm"), ("mistral-7b", "a100-80gb"), ("mixtral-8x7b", "h200"), ("deepseek-v3", "b200"),
     ("pasted", "custom"), ("gpt-oss-120b", "b200"), ("nemotron-h-56b", "h100-sxm")],
)
def test_page_numbers_equal_the_core_over_random_scenarios(offline_page, model, gpu):
    # Mistral-7B windows its cache at 4,096 tokens; the A100 has no FP8 roof; Mixtral reads only the experts
    # a batch touches; DeepSeek-V3 caches an MLA latent and carries FP8 block scales; a session's own GPU and
    # a pasted config travel into the page; gpt-oss as stored reads MXFP4 experts beside BF16 attention; the
    # Nemotron-H hybrid holds a fixed Mamba state beside a few KV layers: all must match too.
    scenario = _scenario(model, gpu)
    page, path = offline_page(scenario)
    assert path.stat().st_size <= 3e6
    rng = random.Random(f"{model}-{gpu}")
    batches = sorted({*LEVERS["batch"].stops, scenario.batch})
    contexts = sorted({*LEVERS["context"].stops, scenario.context})
    for _ in range(13):
        b, s = rng.randrange(len(batches)), rng.randrange(len(contexts))
        k, w = rng.randint(1, 16), rng.choice([*WEIGHT_PRECISIONS, "stored"])
        kv, g = rng.choice(KV_PRECISIONS), rng.random() < 0.7
        a = rng.choice([0.0, 1.0, round(0.05 * rng.randint(1, 19), 2)])  # α on the lever's 0.05 steps, both ends
        _assert_page_is_the_core(page, scenario, batches, contexts, [b, k, w, kv, s, g, a])
    assert page.errors == []
    if gpu == "custom":  # names are text, never markup
        assert page.locator("h2").inner_text().endswith("Pasted <i>Qwen</i> on Lab <card>")
        # (the memory bar's legend swatches are the page's only <i> elements)
        assert page.locator("img").count() == 0 and page.locator("i", has_text="Qwen").count() == 0
        assert page.locator("i:not(.mem-legend i)").count() == 0


@pytest.mark.parametrize(
    "model, gpu, split, header",
    [("llama-3-70b", "h100-sxm", {"tp": 2}, "TP = 2, PP = 1, EP = 1, one replica (2 GPUs)"),
     ("mixtral-8x7b", "h200", {"tp": 2, "ep": 4}, "TP = 2, PP = 1, EP = 4, one replica (8 GPUs)"),
     ("deepseek-v3", "b200", {"tp": 8, "ep": 8}, "TP = 8, PP = 1, EP = 8, one replica (64 GPUs)"),
     ("llama-3-70b", "h100-sxm", {"tp": 4, "pp": 2}, "TP = 4, PP = 2, EP = 1, one replica (8 GPUs)"),
     ("qwen3-30b-a3b", "a100-80gb", {"pp": 3, "ep": 2}, "TP = 1, PP = 3, EP = 2, one replica (6 GPUs)"),
     ("llama-3-8b", "h100-sxm", {"replicas": 4}, "TP = 1, PP = 1, EP = 1, 4 replicas (4 GPUs)"),
     ("llama-3-70b", "h100-sxm", {"tp": 8, "pp": 2, "replicas": 2}, "TP = 8, PP = 2, EP = 1, 2 replicas (32 GPUs)"),
     # two L4s hold 65.7 GiB of BF16 weights each in 24 GiB, over PCIe: the split's warning, then the weights',
     # naming the smallest split that fits
     ("llama-3-70b", "l4", {"tp": 2}, "TP = 2, PP = 1, EP = 1, one replica (2 GPUs)")],
)
def test_a_page_written_at_a_split_words_it_as_the_served_lab(offline_page, model, gpu, split, header):
    # Issue 30: the page used to evaluate every scenario on one GPU.  It keeps the split it was written at (TP, PP,
    # EP and replicas are not its levers) and each readout's words follow core's for that split: one GPU's share
    # of the weights and FLOP, KV per GPU × PP micro-batches, communication in the step, TPOT × PP stages, the
    # memory bar of one GPU of N, the warnings and the chart title's communication, as the levers move.
    scenario = scenario_on(model, gpu, acceptance=0.75, **split)
    page, _ = offline_page(scenario)
    assert f"{header}, kernels launched one by one, without CUDA graphs: fixed when the page was written; open the " \
           "served lab to change them" in (
        page.locator("h2 + div").inner_text())
    # Served beside the lab, the page's link opens the same split there (the query is the page's scenario).
    query = page.evaluate(CONSTANTS)["full_lab"]["query"]
    assert {name: query[name] for name in ("tp", "pp", "ep", "replicas")} == {
        name: str(split.get(name, 1)) for name in ("tp", "pp", "ep", "replicas")}
    batches = sorted({*LEVERS["batch"].stops, scenario.batch})
    contexts = sorted({*LEVERS["context"].stops, scenario.context})
    rng = random.Random(f"{model}-{gpu}-{split}")
    results = []
    moves = [[batches.index(1), 1, "bf16", "bf16", contexts.index(8192), True, 0.75],
             [batches.index(256), 4, "stored", "fp8", contexts.index(131072), True, 0.5],  # past capacity
             [batches.index(64), 2, "fp8", "bf16", contexts.index(32768), False, 1.0]]
    for _ in range(3):
        moves.append([rng.randrange(len(batches)), rng.randint(1, 16), rng.choice([*WEIGHT_PRECISIONS, "stored"]),
                      rng.choice(KV_PRECISIONS), rng.randrange(len(contexts)), rng.random() < 0.7,
                      rng.choice([0.0, 1.0, 0.6])])
    for levers in moves:
        results.append(_assert_page_is_the_core(page, scenario, batches, contexts, levers))
    if gpu == "l4":
        assert len(results[0].warnings) == 2 and results[0].warnings[1].endswith("(TP = 8 fits in BF16)")
    one = results[0]
    assert (one.tp, one.pp, one.ep, one.replicas) == tuple(split.get(n, 1) for n in ("tp", "pp", "ep", "replicas"))
    if one.gpus_per_replica > 1:  # the split's own wording is on the page (one GPU's would have failed above)
        assert page.locator("[data-readout=memory]").inner_text().startswith(
            f"Memory per GPU (1 of {one.gpus_per_replica:,}")
        assert "of communication" in page.locator("[data-work=overhead]").inner_text()
    if one.pp > 1:
        assert "(a token crosses every stage)" in page.locator("[data-work=tpot]").inner_text()
    if one.replicas > 1:
        head = page.evaluate(TITLE).split("\n")[0].removesuffix(" · does not fit in memory")  # the last move's
        assert head.endswith(f" · {one.replicas} replicas")
    assert page.errors == []


STEP7 = ("gpus", "weights-gpu", "kv-gpu", "comm-time", "comm-intensity", "tokens-aggregate", "smallest-fit",
         "cost-output", "cost-prompt")


def test_a_split_page_shows_step_7_as_the_served_lab_does_as_batch_moves(offline_page):
    # Issue 30: the page written at TP = 4 × PP = 2 with 2 replicas (and a price per GPU-hour) used to leave out
    # Step 7's readouts.  Opened from disk, each is on the page, with the served lab's label, value and work, and
    # follows the batch slider (the aggregate tokens/s, communication and costs move; GPUs stay 16).
    scenario = scenario_on("llama-3-70b", "h100-sxm", acceptance=0.75, tp=4, pp=2, replicas=2, gpu_hour_price=2.5)
    page, _ = offline_page(scenario)
    batches = sorted({*LEVERS["batch"].stops, scenario.batch})
    contexts = sorted({*LEVERS["context"].stops, scenario.context})
    shown = []
    for b in (1, 16, 128):
        levers = [batches.index(b), 1, "bf16", "bf16", contexts.index(8192), True, 0.75]
        result = _assert_page_is_the_core(page, scenario, batches, contexts, levers)
        want = quantities(result)
        for key in STEP7:
            row = page.locator(f".ro[data-key={key}]")
            assert row.locator(".q").inner_text() == want[key].label, key
            assert page.locator(f"[data-readout={key}]").inner_text() == want[key].value, key
            assert page.locator(f"[data-work={key}]").inner_text() == want[key].work, key
        # the served lab's readouts panel, row for row, from the same result
        assert page.evaluate(TEXT, "readouts") == readouts_html(result, show_work=True)
        shown.append({key: page.locator(f"[data-readout={key}]").inner_text() for key in STEP7})
    assert [x["gpus"] for x in shown] == ["16 (2 replicas × 8)"] * 3
    assert shown[0]["smallest-fit"] == "TP = 2"  # at B = 1 fewer GPUs than TP = 4 × PP = 2 hold it
    assert len({x["tokens-aggregate"] for x in shown}) == 3 and len({x["cost-output"] for x in shown}) == 3
    assert all(x["cost-output"].startswith("$") for x in shown)
    assert page.errors == []


def test_page_agrees_with_the_core_where_the_launches_set_the_step(offline_page):
    # Qwen3-30B-A3B in INT4 at B = 1 and a short context reads ~2 GB in well under a millisecond; its 532 kernels
    # take 2.128 ms to launch: the third ceiling sets the step, on the page as in core (and not at B = 64).
    scenario = Scenario(model="qwen3-30b-a3b")
    page, _ = offline_page(scenario)
    batches = sorted({*LEVERS["batch"].stops, scenario.batch})
    contexts = sorted({*LEVERS["context"].stops, scenario.context})
    for batch, bound in ((1, "overhead"), (64, "memory")):
        levers = [batches.index(batch), 1, "int4", "bf16", contexts.index(128), True, 0.7]
        _assert_page_is_the_core(page, scenario, batches, contexts, levers)
        assert page.evaluate(RESULTS)["bound"] == bound
    assert page.locator("[data-readout=overhead]").inner_text() == "2.128 ms (not binding)"
    page.evaluate(SET, [batches.index(1), 1, "int4", "bf16", contexts.index(128), True, 0.7])
    expect(page.locator("[data-readout=overhead]")).to_have_text("2.128 ms (overhead-bound)")
    expect(page.locator("[data-readout=step-time]")).to_have_text("2.128 ms")
    # BF16 at 8k: the launches outlast the weights' reads (2.00 ms), not the step with the KV's (2.24 ms).
    page.evaluate(SET, [batches.index(1), 1, "bf16", "bf16", contexts.index(8192), True, 0.7])
    expect(page.locator("[data-readout=overhead]")).to_have_text("2.128 ms (binds the weights-only figures)")
    expect(page.locator("[data-readout=bound]")).to_have_text("memory-bound; weights alone: overhead")
    assert page.errors == []


def test_page_opens_offline_and_its_slider_moves_the_dot(offline_page):
    page, _ = offline_page(Scenario(model="llama-3-8b", batch=56))
    assert page.locator("[data-readout=tokens]").inner_text() == "2,462 tokens/s"
    # Hand-checked (Llama-3-8B, BF16, H100 SXM, B = 56, S = 8,192): KV per token 2·32·8·128·2 bytes; the cache
    # 131,072 × 8,192 × 56 bytes = 56.00 GiB; weights 8,030,261,248 × 2 bytes = 14.96 GiB; reserve 3 GiB.
    assert page.locator("[data-work=kv-token]").inner_text() == (
        "2·L·h_kv·d_head·p_kv = 2 × 32 × 8 × 128 × 2 = 131,072 bytes (128 KiB)")
    assert page.locator("[data-work=kv-total]").inner_text() == (
        "1.000 GiB × 56 = 56.00 GiB = 60.13 GB at S = 8,192")
    assert page.locator("[data-work=fits]").inner_text() == "14.96 + 56.00 + 3.00 = 73.96 GiB ≤ 80.00 GiB"
    assert page.locator("[data-readout=memory]").inner_text().startswith(
        "Memory: 74.0 GiB of 80.0 GiB → fits \u00a0(largest batch at S = 8,192: 62)")
    assert page.locator(".mem-seg[data-part='KV cache']").inner_text() == "KV cache 56.0 GiB"
    assert page.locator(".mem-seg[data-part=weights]").inner_text() == "weights 15.0 GiB"
    # The prefill of one 2,000-token prompt: I = 2·1·2,000 / 2 bytes = 2,000 FLOP/byte, past the ridge: on the roof.
    other = page.evaluate("Bokeh.documents[0].get_model_by_name('other-phase').data")
    assert (list(other["x"]), list(other["y"])) == ([2000], [pytest.approx(989.4)])
    assert page.evaluate("Array.from(Bokeh.documents[0].get_model_by_name('workload').data.x)") == [56]
    # After a move the legend is whole, each entry's swatch painted.
    page.locator(".batch .noUi-handle").focus()
    page.keyboard.press("ArrowRight")  # 56 -> 64
    page.wait_for_function("Bokeh.documents[0].get_model_by_name('workload').data.x[0] === 64")
    page.wait_for_timeout(100)
    entries = page.evaluate(LEGEND_ENTRIES)
    assert len(entries) >= 8 and all(ink > 0 for *_, ink in entries), entries
    # The text follows the chart a frame later.
    page.wait_for_function(f"{RESULTS}.inputs.batch === 64")
    assert json.loads(page.evaluate("Bokeh.documents[0].get_model_by_name('results').text"))["fits"] is False
    # α is a lever: k = 4 at α = 0.8 gains (1 − 0.8^4) / 0.2 = 2.952 tokens per verify.
    page.evaluate("[...Bokeh.documents[0].all_models].find(x => (x.css_classes || []).includes('spec-k')).value = 4")
    page.evaluate("[...Bokeh.documents[0].all_models].find(x => (x.css_classes || []).includes('acceptance'))"
                  ".value = 0.8")
    expect_spec = "(1 − 0.80^4) / (1 − 0.80) = 2.95"
    page.wait_for_function(f"JSON.parse(Bokeh.documents[0].get_model_by_name('results').text)"
                           f".readouts.spec.work.startsWith({json.dumps(expect_spec)})")
    assert page.locator("[data-readout=spec]").inner_text() == "2.95"
    assert page.locator("[data-work=spec]").inner_text().startswith(expect_spec)
    # Hiding the work leaves the values.
    page.locator(".show-work input").uncheck()
    expect(page.locator("[data-work]")).to_have_count(0)
    assert page.locator("[data-readout=spec]").inner_text() == "2.95"
    assert page.errors == []


def test_page_fits_a_phone_width_window(offline_page):
    # The class page is this page: students open it on phones.  At 360 px it used to be 480 px wide (the chart's
    # minimum for a two-column legend) and the readouts 400 px: the page scrolled sideways.
    page, _ = offline_page(Scenario(model="llama-3-8b"))
    page.set_viewport_size({"width": 360, "height": 740})
    page.wait_for_function("document.documentElement.scrollWidth <= 360")
    # The legend took one column, and every entry sits inside the window.
    assert page.evaluate("[...Bokeh.documents[0].all_models].find((m) => m.ncols !== undefined).ncols") == 1
    assert page.locator("[data-readout=ridge]").bounding_box()["x"] + 10 < 360
    assert page.errors == []


# Each line of the roofline's title, measured in its font, against the plot frame's width (canvas px).
TITLE_LINES = r"""() => {
  const fig = Bokeh.documents[0].get_model_by_name('roofline'), t = fig.title;
  const val = (v) => (v && typeof v === 'object' && 'value' in v) ? v.value : v;
  const ctx = document.createElement('canvas').getContext('2d');
  ctx.font = `${val(t.text_font_style)} ${val(t.text_font_size)} ${val(t.text_font)}`;
  return {frame: fig.inner_width, lines: t.text.split('\n').map((l) => ctx.measureText(l).width)};
}"""


def test_a_split_pages_title_wraps_inside_a_phones_chart(offline_page):
    # A class page written at TP = 2 and opened at 360 px: the title's communication line ("per GPU of 2:
    # communication 0.966 ms = 4.3 % of the step") ran past the canvas's right edge.
    page, _ = offline_page(scenario_on("llama-3-70b", "h100-sxm", tp=2))
    page.set_viewport_size({"width": 360, "height": 740})
    page.wait_for_function(f"(({TITLE_LINES})()).frame < 320", timeout=10_000)
    page.wait_for_function(f"(t => Math.max(...t.lines) <= t.frame)(({TITLE_LINES})())", timeout=10_000)
    title = page.evaluate(TITLE_LINES)
    assert len(title["lines"]) >= 6, title  # five lines, one of them wrapped
    assert page.errors == []


@pytest.mark.parametrize("own", [False, True], ids=["catalogue", "own-config"])
def test_the_class_page_opens_its_scenario_in_the_full_lab(page, tmp_path, own):
    # README, *Serving a class*: students move the class page's levers, then open the same scenario in the
    # served lab (pins, Compare, several GPUs).  The lab's readouts must equal the page's for what was moved.
    # A page of one's own config.json (``export --config``) carries the config in its link (config=).
    from conftest import start_lab, stop_lab

    from app.__main__ import main as app_main
    from core.model_catalogue import CATALOGUE_DIR

    pages = tmp_path / "class"
    pages.mkdir()
    config = tmp_path / "my-qwen.json"
    config.write_text((CATALOGUE_DIR / "qwen2.5-7b.json").read_text())
    model = ["--config", str(config)] if own else ["--model", "llama-3-8b"]
    assert app_main(["export", *model, "--out", str(pages / "page.html")]) == 0
    proc, url = start_lab(tmp_path / "server.log", ["--static-dirs", f"class={pages}"])
    try:
        page.goto(url.rsplit("/app", 1)[0] + "/class/page.html")
        page.wait_for_function(f"Bokeh.documents.length > 0 && {RESULTS}.inputs !== undefined")
        batches = sorted(LEVERS["batch"].stops)
        page.evaluate(SET, [batches.index(16), 4, "int4", "fp8", sorted(LEVERS["context"].stops).index(32768),
                            False, 0.55])
        page.wait_for_function(f"{RESULTS}.inputs.batch === 16 && {RESULTS}.inputs.acceptance === 0.55")
        keys = ("intensity", "kv-total", "tokens", "spec", "fits")
        shown = {key: page.locator(f"[data-readout={key}]").inner_text() for key in keys}
        href = page.locator(".full-lab a").get_attribute("href")
        assert href.startswith(url + "?") and "batch=16" in href and "no-gqa=true" in href
        assert ("config=" in href) is own
        page.locator(".full-lab a").click()
        page.wait_for_url(url + "?*")
        page.locator("[data-readout=ridge]").wait_for()
        # (with config=, the lab reads the config off the event loop, then shows its model: Qwen2.5-7B's numbers)
        for key in keys:
            expect(page.locator(f"[data-readout={key}]")).to_have_text(shown[key], timeout=15_000)
    finally:
        stop_lab(proc)


def test_a_page_in_a_docs_sites_frame_opens_the_lab_it_names_in_a_tab_of_its_own(page, tmp_path):
    """A docs writer's trial: the page hosted on a docs site, in an iframe, linked to that site's /app (404), and
    the 404 opened inside the frame.  Exported with ``--lab-url``, it links to that lab, in a new tab."""
    import http.server
    import threading

    from app.__main__ import main as app_main

    site = tmp_path / "site"
    site.mkdir()
    assert app_main(["export", "--model", "llama-3-8b", "--out", str(site / "page.html"),
                     "--lab-url", "https://lab.example.org/app"]) == 0
    (site / "doc.html").write_text('<h1>Docs</h1><iframe src="page.html" width="900" height="700"></iframe>')
    handler = lambda *a: http.server.SimpleHTTPRequestHandler(*a, directory=str(site))  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/doc.html")
        frame = page.frame_locator("iframe")
        link = frame.locator(".full-lab a")
        link.wait_for(timeout=60_000)
        assert link.get_attribute("href").startswith("https://lab.example.org/app?")
        assert link.get_attribute("target") == "_blank" and "noopener" in link.get_attribute("rel")
    finally:
        server.shutdown()
        server.server_close()


def test_a_page_written_with_an_absolute_lab_url_links_to_it_from_a_file(browser, tmp_path):
    """A docs writer's trial: ``app export --lab-url http://…/app``, opened from disk (a wiki attachment), showed no
    link: the page linked only when served.  An absolute address needs no server; a relative one still does."""
    scenario = Scenario(model="llama-3-8b", gpu="h100-sxm", batch=56)
    for url, linked in (("https://lab.example.org/app", True), ("../app", False)):
        path = tmp_path / f"page-{linked}.html"
        path.write_text(standalone_html(scenario, lab_url=url), encoding="utf-8")
        ctx = browser.new_context()
        ctx.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort())
        page = ctx.new_page()
        page.goto(path.as_uri())
        page.wait_for_function(RESULTS_WRITTEN)
        text = page.evaluate("Bokeh.documents[0].get_model_by_name('full-lab').text")
        if linked:
            href = page.locator(".full-lab a").get_attribute("href")
            assert href.startswith("https://lab.example.org/app?") and "batch=56" in href and "model=llama-3-8b" in href
        else:
            assert text == ""
        ctx.close()


def test_a_page_of_a_pasted_model_has_no_link_to_the_lab(offline_page):
    # Written without the config's text (only the model), the page offers no link rather than one that opens
    # another model (with the text, the link carries it: test_the_class_page_opens_its_scenario_in_the_full_lab).
    page, _ = offline_page(_scenario("pasted", "custom"))
    assert page.evaluate("Bokeh.documents[0].get_model_by_name('full-lab').text") == ""


def test_the_offline_page_keeps_a_10_gflop_part_on_the_chart(offline_page):
    """The page's own redraw widens the y range as the served chart does (a star at 0.005 TFLOP/s)."""
    s = Scenario(model="llama-3-8b")
    s.add_gpu(custom_accelerator("tiny", bandwidth_tbs=0.005, capacity_gb=80, bf16=0.01))
    page, _ = offline_page(s)
    y = page.evaluate("(() => { const f = Bokeh.documents[0].get_model_by_name('roofline');"
                      " return [f.y_range.start, f.y_range.end]; })()")
    assert y == [1e-4, 2e4]
    star = page.evaluate("Bokeh.documents[0].get_model_by_name('workload').data.y[0]")
    assert star == pytest.approx(0.005) and y[0] < star < y[1]
    assert page.evaluate("Bokeh.documents[0].get_model_by_name('ridge').data.y[0]") == 1e-4
    assert page.errors == []


def test_the_offline_pages_keys_follow_what_is_drawn(offline_page):
    """The keys of series that are often empty follow the page's levers, as the served chart's do: Llama-3-8B on
    an H100 in BF16 at B = 1 waits on its reads (BW·I = 3.35 TFLOP/s under the launches' 11.2); in INT4 its
    B = 1 rung sits under its own overhead ceiling (16.1 GFLOP / 1.424 ms = 11.3 TFLOP/s < BW·I = 12.9)."""
    page, _ = offline_page(Scenario(model="llama-3-8b"))
    items = ("(() => Object.fromEntries([...Bokeh.documents[0].all_models].find(m => m.click_policy !== undefined)"
             ".items.map(i => [i.label.value, i.visible])))()")
    assert page.evaluate(items)["overhead ceiling at each rung's B"] is False
    page.evaluate("[...Bokeh.documents[0].all_models].find(x => (x.css_classes || []).includes('weight-dtype'))"
                  ".value = 'int4'")
    page.wait_for_function(f"{RESULTS}.inputs.weight_dtype === 'int4'")
    assert page.evaluate(items)["overhead ceiling at each rung's B"] is True
    page.evaluate("[...Bokeh.documents[0].all_models].find(x => (x.css_classes || []).includes('weight-dtype'))"
                  ".value = 'bf16'")
    page.wait_for_function(f"{RESULTS}.inputs.weight_dtype === 'bf16'")
    assert page.evaluate(items)["overhead ceiling at each rung's B"] is False
    assert page.errors == []


def test_an_approximate_models_memory_verdict_says_so_where_the_number_is(offline_page):
    """A config key the lab does not model marks the memory verdict "≈ … (approximate)" on the page as on the served
    bar, with the note under it, through every move."""
    from core.config_reader import from_hf_config
    from core.model_catalogue import CATALOGUE_DIR

    config = {**json.loads((CATALOGUE_DIR / "qwen2.5-7b.json").read_text()), "some_new_key": 3}
    s = Scenario()
    s.add_model(from_hf_config(config, model_id="config-new", name="new"))
    page, _ = offline_page(s)
    batches = sorted({*LEVERS["batch"].stops, s.batch})
    contexts = sorted({*LEVERS["context"].stops, s.context})
    _assert_page_is_the_core(page, s, batches, contexts, [batches.index(64), 1, "bf16", "bf16",
                                                          contexts.index(131072), True, 0.7])
    memory = page.locator("[data-readout=memory]").inner_text()
    assert "→ ≈ DOES NOT FIT (approximate)" in memory, memory  # 64 × 131,072 tokens of Qwen2.5-7B's KV
    assert page.locator("[data-readout=memory-approximate]").inner_text() == (
        "approximate: some_new_key not modelled")  # no "(see what the lab read)": the page has no such tab
    # and the chart's title is marked, as the served chart's
    assert page.evaluate(TITLE).split("\n")[0] == (
        "new · NVIDIA H100 SXM5 80GB · decode · does not fit in memory · ≈ approximate")
    assert page.errors == []


def test_the_offline_pages_sliders_say_their_name_and_the_value_their_title_shows(offline_page):
    """A fresh trial: the offline page's slider handles had no name, and a stop slider's announced its index
    ("0.00" for B = 1); the served lab's repairs (app/a11y.js) run on the offline page too."""
    page, _ = offline_page(Scenario(model="llama-3-8b", batch=56))
    handle = page.locator(".batch .noUi-handle")
    expect(handle).to_have_attribute("aria-label", "Batch B")
    expect(handle).to_have_attribute("aria-valuetext", "56")
    handle.focus()
    page.keyboard.press("ArrowRight")  # the next stop: 64
    expect(handle).to_have_attribute("aria-valuetext", "64")
    expect(page.locator(".gqa input[type=checkbox]")).to_have_attribute("aria-label", "Grouped-query attention")
    assert page.errors == []
