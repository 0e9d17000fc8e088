"""Bring your own in the browser: a pasted config's layer strip stays inside its column."""

import json
from urllib.parse import parse_qsl, urlencode

import pytest

# The trial's paste: Jamba (ai21labs/Jamba-v0.1 config.json's fields) loaded in 4-bit NF4 by bitsandbytes.
JAMBA = {
    "architectures": ["JambaForCausalLM"], "model_type": "jamba", "attn_layer_offset": 4, "attn_layer_period": 8,
    "expert_layer_offset": 1, "expert_layer_period": 2, "hidden_act": "silu", "hidden_size": 4096,
    "intermediate_size": 14336, "mamba_conv_bias": True, "mamba_d_conv": 4, "mamba_d_state": 16,
    "mamba_dt_rank": 256, "mamba_expand": 2, "mamba_proj_bias": False, "max_position_embeddings": 262144,
    "num_attention_heads": 32, "num_experts": 16, "num_experts_per_tok": 2, "num_hidden_layers": 32,
    "num_key_value_heads": 8, "rms_norm_eps": 1e-06, "sliding_window": None, "tie_word_embeddings": False,
    "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": 65536,
    "quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": True, "load_in_8bit": False,
                            "bnb_4bit_quant_type": "nf4", "bnb_4bit_use_double_quant": True,
                            "bnb_4bit_compute_dtype": "bfloat16", "llm_int8_skip_modules": ["mamba"]},
}

# The layer strip's box and the boxes of the elements reading "Tokens/s ceiling ignoring KV" (Readouts), CSS px.
STRIP_AND_READOUTS = r"""() => {
  const out = {strip: null, readouts: []};
  const visit = (root) => {
    for (const el of root.querySelectorAll('.layer-strip')) {
      const r = el.firstElementChild.getBoundingClientRect(), runs = [...el.querySelectorAll('.layer-run')];
      out.strip = {left: r.left, right: r.right, top: r.top, bottom: r.bottom, runs: runs.length,
                   runsRight: Math.max(...runs.map((s) => s.getBoundingClientRect().right))};
    }
    for (const el of root.querySelectorAll('*')) {
      if (el.children.length === 0 && el.textContent.trim().startsWith('Tokens/s ceiling ignoring KV')) {
        const r = el.getBoundingClientRect(); out.readouts.push({left: r.left, right: r.right, top: r.top});
      }
      if (el.shadowRoot) visit(el.shadowRoot);
    }
  };
  visit(document);
  return out; }"""


@pytest.mark.parametrize("size", [{"width": 1280, "height": 720}, {"width": 1400, "height": 1000}],
                         ids=["1280x720", "1400x1000"])
def test_a_32_layer_strip_stays_in_its_column(page, lab_url, size):
    # The trial: Jamba's 32 runs of one layer (Mamba and attention interleaved) ran over the "T" of
    # "Tokens/s ceiling ignoring KV" in the Readouts column beside the strip.
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size(size)
    page.goto(lab_url)
    page.locator("[data-readout=ridge]").first.wait_for()
    page.locator(".lab-tabs .bk-btn", has_text="Bring your own").click()
    page.locator(".config-text textarea").fill(json.dumps(JAMBA))
    page.locator(".config-read button").click()
    page.wait_for_function(f"(({STRIP_AND_READOUTS})()).strip !== null", timeout=15_000)
    page.wait_for_timeout(500)
    found = page.evaluate(STRIP_AND_READOUTS)
    strip = found["strip"]
    assert strip["runs"] >= 20, strip
    assert strip["runsRight"] <= strip["right"] + 1, strip  # every run inside the strip's box
    for readout in found["readouts"]:
        if readout["top"] < strip["bottom"] + 200:  # the Readouts column beside the strip
            assert strip["right"] <= readout["left"], (strip, readout)
    assert page.evaluate("document.scrollingElement.scrollWidth") <= size["width"]
    assert errors == []


def test_a_link_with_a_config_opens_that_model_in_a_fresh_page_and_keeps_it_in_the_address(page, lab_url):
    """Issue 30: the config read in one page travels in its address (config=) and a second page opens it, read off
    the event loop, with the link's levers and pins; a config= that is not one is named in the link's notice."""
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(lab_url)
    page.locator("[data-readout=ridge]").first.wait_for()
    page.locator(".lab-tabs .bk-btn", has_text="Bring your own").click()
    page.locator(".config-text textarea").fill(json.dumps(JAMBA))
    page.locator(".config-read button").click()
    page.wait_for_function("new URLSearchParams(location.search).get('config') !== null", timeout=15_000)
    link = page.evaluate("location.search")
    assert "model=config-jambaforcausallm" in link  # named after architectures[0]: no _name_or_path, no file
    assert "carries JambaForCausalLM's config.json" in page.locator("[data-readout=share]").inner_text()
    fresh = page.context.new_page()
    fresh.on("pageerror", lambda e: errors.append(str(e)))
    query = {**dict(parse_qsl(link.lstrip("?"))), "batch": "24", "embed": "true"}
    fresh.goto(f"{lab_url}?{urlencode(query)}")
    fresh.locator("[data-readout=embed-summary]", has_text="JambaForCausalLM").wait_for(timeout=20_000)
    summary = fresh.locator("[data-readout=embed-summary]").inner_text()
    assert "JambaForCausalLM" in summary and "memory" in summary
    assert fresh.locator(".link-notice").is_hidden()
    open_full = fresh.locator(".open-full").get_attribute("href")
    assert "config=" in open_full and "batch=24" in open_full
    fresh.goto(f"{lab_url}?config=eNo%3Cscript%3E&batch=24&embed=true")
    # In an embed the notices fold under their heading (one here), which opens them
    fresh.locator(".link-notice summary", has_text="(1 notice)").click(timeout=10_000)
    fresh.locator(".link-notice li", has_text="ignored config: not base64url text").wait_for(timeout=10_000)
    summary = fresh.locator("[data-readout=embed-summary]").inner_text()
    assert "I = 2·B·k / p = 24 FLOP/byte" in summary and "Llama-3-70B, BF16" in summary  # B = 24 applies, BF16
    assert errors == []


def test_a_measured_point_above_the_roof_is_plotted_flagged_and_the_next_plot_replaces_it(page, lab_url):
    """An engineer's trial: one measured point above the roof (30 tokens/s where the ceiling is 24) raised in Bokeh (the
    readouts' warning written outside the document's lock, from the button's click): no table, no flag, and each
    later plot of the session failed the same way, the old points still counted."""
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size({"width": 1280, "height": 720})
    page.goto(f"{lab_url}?model=llama-3-70b")  # the trial's way: the lab's first page, then the tab
    page.locator("[data-readout=ridge]").first.wait_for(timeout=30_000)
    page.get_by_role("tab", name="Bring your own").click()
    report = page.locator("[data-readout=measured]")
    page.locator(".measured-text textarea").fill("batch,context,tokens_per_s\n1,2048,30")
    page.wait_for_timeout(1000)
    page.locator(".measured-plot button").click()  # the text goes as the box loses the focus, then the click
    report.wait_for(timeout=15_000)
    flag = page.get_by_text("1 point(s) lie above the roof of Llama-3-70B", exact=False)
    flag.wait_for(timeout=5000)
    page.locator(".measured-text textarea").fill("batch,context,tokens_per_s\n1,2048,10")
    page.wait_for_timeout(1000)
    page.locator(".measured-plot button").click()
    for _ in range(20):
        page.wait_for_timeout(500)
        if flag.count() == 0:
            break
    assert flag.count() == 0 and "10" in report.inner_text()
    assert errors == []



@pytest.mark.parametrize("field, typed, said", [
    # A trial typed −5 TB/s: the field clamped it to 0 and the form answered "got 0", a number nobody typed.
    ("gpu-bw", "-5", "Not added: bandwidth (TB/s) must be a positive number"),
    # Another typed "−9000" (U+2212, as the lab prints negatives) as the FP4 peak: the number field dropped the sign
    # and the GPU was added with FP4 = 9,000 TFLOP/s.
    ("gpu-fp4", "\u22129000", "Not added: FP4 peak (TFLOP/s) must be a positive number"),
], ids=["bandwidth -5", "FP4 with the lab's minus"])
def test_a_negative_figure_in_your_gpu_form_is_refused_as_typed(page, lab_url, field, typed, said):
    page.goto(lab_url)
    page.locator("[data-readout=ridge]").first.wait_for()
    page.locator(".lab-tabs .bk-btn", has_text="Bring your own").click()
    figures = {"gpu-bf16": "2250", "gpu-fp4": "", "gpu-bw": "8", "gpu-capacity": "180"}
    for name, text in figures.items():
        if name == field:
            page.locator(f".{name} input").press_sequentially(typed)
        elif text:
            page.locator(f".{name} input").fill(text)
    page.locator(".gpu-add button").click()
    report = page.locator("[data-readout=gpu-form]")
    report.wait_for()
    shown = report.inner_text()
    assert shown.startswith(said), shown
    assert f"got {typed.replace(chr(0x2212), '-')}" in shown, shown
