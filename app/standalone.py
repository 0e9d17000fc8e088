"""The offline page: one self-contained HTML file, no server, no network.

The roofline, its ladder and the readouts are the lab's own Bokeh figure
(:class:`app.roofline_view.RooflineView`), written with Bokeh's resources inline
(``bokeh.embed.file_html`` with ``INLINE``).  The reader can still move batch,
speculation depth, weight and KV precision, context and GQA: a CustomJS callback
re-evaluates the scenario in the browser from constants exported here (the
model's shape, the GPU's roofs) with the same formulas as :mod:`core.scenario`,
which ``tests/test_standalone.py`` checks over random scenarios.

The model and the GPU are fixed when the page is written, as are the phase
(decode), the reserve and the capacity convention.
"""

from __future__ import annotations

from bokeh.document import Document
from bokeh.embed import file_html
from bokeh.events import DocumentReady
from bokeh.layouts import column, row
from bokeh.models import Checkbox, CustomJS, CustomJSTickFormatter, Div, Select, Slider
from bokeh.resources import Resources

from core.precision import KV_PRECISIONS, PRECISIONS, WEIGHT_PRECISIONS, compute_roof
from core.scenario import Scenario, ScenarioResult

from .controls import BATCH_STOPS, CONTEXT_STOPS
from .roofline_view import RooflineView

# The browser-side model: the same formulas as core/scenario.py, core/roofline.py
# and core/models.py, in the same order of operations.
MODEL_JS = """
function kvPerSeq(C, S, pkv, gqa) {
  let tokens = 0;
  for (const w of C.windows) { tokens += (w === null) ? S : Math.min(S, w); }
  return (gqa ? C.kv_elements_gqa : C.kv_elements_mha) * pkv * tokens;
}
function paramsRead(C, tokens) {
  // Mixture-of-experts reads only the experts its tokens touch: E·(1 − (1 − k_e/E)^tokens).
  if (!C.moe) { return C.n_params; }
  const m = C.moe;
  return m.fixed + m.layers * m.per_expert * (m.experts * (1.0 - (1.0 - m.per_token / m.experts) ** tokens));
}
function evaluate(C, s) {
  const p = C.weight_bytes[s.weight_dtype], pkv = C.bytes[s.kv_dtype];
  const peak = C.peak[s.weight_dtype], bw = C.bandwidth, N = C.n_params, Na = C.n_active;
  const held = N * p;
  const kvseq = kvPerSeq(C, s.context, pkv, s.gqa);
  // Tokens each sequence gains per verify pass (Leviathan et al. 2023); 1 at k = 1.
  const a = C.acceptance;
  const E = (a === 1.0) ? s.spec_k : (1.0 - a ** s.spec_k) / (1.0 - a);
  const ladder = [];
  const ridge = peak / bw;
  const top = Math.max(2.0 * (ridge * p / (2.0 * s.spec_k)), 2.0);
  const n = Math.ceil(Math.log2(top));
  for (let i = 0; i <= n; i++) { ladder.push(rung(2 ** i)); }
  function rung(b) {
    const read = paramsRead(C, b * s.spec_k);
    const weight = read * p;
    const flops = 2.0 * Na * b * s.spec_k;
    const I = 2.0 * b * s.spec_k / p * (Na / read);
    const bytes = weight + b * kvseq;
    const Ikv = flops / bytes;
    const att = Math.min(peak, bw * I);
    return {batch: b, flops: flops, intensity: I, intensity_kv: Ikv, attainable: att,
            attainable_kv: Math.min(peak, bw * Ikv), peak_fraction: att / peak,
            tokens_per_s: b * E / Math.max(flops / peak, bytes / bw),
            tokens_per_s_without_kv: b * E / Math.max(flops / peak, weight / bw),
            weight: weight, fits: held + b * kvseq + C.reserve <= C.capacity};
  }
  const point = rung(s.batch);
  const weight = point.weight;
  const free = C.capacity - held - C.reserve;
  const kvTraffic = s.batch * kvseq;
  return {
    weight_bytes: weight, weight_bytes_held: held, flops_per_step: point.flops, arithmetic_intensity: point.intensity,
    arithmetic_intensity_with_kv: point.intensity_kv, ridge_point: ridge, attainable_flops: point.attainable,
    peak_fraction: point.peak_fraction, bound: point.intensity_kv < ridge ? "memory" : "compute",
    attainable_flops_with_kv: point.attainable_kv, peak_fraction_with_kv: point.attainable_kv / peak,
    expected_tokens_per_step: E,
    step_time_s: Math.max(point.flops / peak, (weight + kvTraffic) / bw),
    tokens_per_s: point.tokens_per_s, tokens_per_s_without_kv: point.tokens_per_s_without_kv,
    kv_bytes_per_token: C.n_layers * (s.gqa ? C.kv_elements_gqa : C.kv_elements_mha) * pkv,
    kv_bytes: kvTraffic, fits: point.fits, max_batch: Math.floor(Math.max(free, 0.0) / kvseq),
    memory_used_bytes: held + kvTraffic + C.reserve, peak_flops: peak, ladder: ladder,
  };
}
"""

UPDATE_JS = """
const s = {
  batch: C.batch_stops[batch.value], spec_k: spec_k.value, weight_dtype: weight.value, kv_dtype: kv.value,
  context: C.context_stops[context.value], gqa: gqa.active,
};
const r = evaluate(C, s);
const T = 1e12, GiB = 2 ** 30;
const lad = r.ladder;
ladder.data = {
  x: lad.map(q => q.intensity), y: lad.map(q => q.attainable / T), batch: lad.map(q => q.batch),
  pct: lad.map(q => 100 * q.peak_fraction), fits: lad.map(q => q.fits ? "yes" : "no"),
  fill: lad.map(q => q.fits ? "#1f77b4" : "white"), line: lad.map(q => "#1f77b4"),
  label: lad.map(q => "B=" + q.batch),
};
kv_ladder.data = {
  x: lad.map(q => q.intensity_kv), y: lad.map(q => q.attainable_kv / T), batch: lad.map(q => q.batch),
  pct: lad.map(q => 100 * q.attainable_kv / r.peak_flops), fits: lad.map(q => q.fits ? "yes" : "no"),
};
point.data = {x: [r.arithmetic_intensity], y: [r.attainable_flops / T], batch: [s.batch],
              pct: [100 * r.peak_fraction], fits: [r.fits ? "yes" : "no"]};
point_kv.data = {x: [r.arithmetic_intensity_with_kv], y: [r.attainable_flops_with_kv / T], batch: [s.batch],
                 pct: [100 * r.peak_fraction_with_kv], fits: [r.fits ? "yes" : "no"]};
const far = Math.max(r.arithmetic_intensity, lad[lad.length - 1].intensity);
fig.x_range.end = Math.max(1e5, 10 ** Math.ceil(Math.log10(far * 3)));
const X0 = 0.1, X1 = 1e9;
roof.data = {x: [X0, r.ridge_point, X1], y: [C.bandwidth * X0 / T, r.peak_flops / T, r.peak_flops / T]};
const sp = C.sparse[s.weight_dtype];
sparse.data = sp ? {x: [X0, sp / C.bandwidth, X1], y: [C.bandwidth * X0 / T, sp / T, sp / T]} : {x: [], y: []};
ridge.data = {x: [r.ridge_point], y: [0.01], text: ["ridge " + Math.round(r.ridge_point) + " FLOP/byte"]};
span.location = r.ridge_point;
const fmt = (x, d) => x.toLocaleString("en-US", {maximumFractionDigits: d});
const sig = (x) => Number(x.toPrecision(4)).toLocaleString("en-US", {maximumFractionDigits: 10});
const rows = [
  ["intensity", "Arithmetic intensity I = 2·B·k/p", sig(r.arithmetic_intensity) + " FLOP/byte"],
  ["intensity-kv", "Intensity counting KV reads", sig(r.arithmetic_intensity_with_kv) + " FLOP/byte"],
  ["ridge", "Ridge point P_peak/BW", fmt(r.ridge_point, 0) + " FLOP/byte"],
  ["attainable", "Attainable min(P_peak, BW·I)", sig(r.attainable_flops / T) + " TFLOP/s"],
  ["peak-fraction", "Fraction of peak (weights)", Number((100 * r.peak_fraction).toPrecision(3)) + " %"],
  ["attainable-kv", "Attainable counting KV reads", sig(r.attainable_flops_with_kv / T) + " TFLOP/s (" +
   Number((100 * r.peak_fraction_with_kv).toPrecision(3)) + " %)"],
  ["bound", "Bound", r.bound + "-bound"],
  ["weights", "Weight bytes N·p", fmt(r.weight_bytes / 1e9, 2) + " GB"],
  ["step-time", "Step time", sig(r.step_time_s * 1e3) + " ms"],
  ["tokens", "Tokens/s ceiling (counting KV; α = " + C.acceptance + ")", fmt(r.tokens_per_s, 0) + " tokens/s"],
  ["tokens-no-kv", "Tokens/s ignoring KV", fmt(r.tokens_per_s_without_kv, 0) + " tokens/s"],
  ["kv-token", "KV per token 2·L·h_kv·d_head·p_kv", sig(r.kv_bytes_per_token / 1024) + " KiB"],
  ["kv-total", "KV cache (whole batch)", fmt(r.kv_bytes / GiB, 2) + " GiB"],
  ["fits", "Fits in memory", r.fits ? "yes" : "NO"],
  ["max-batch", "Largest batch at S", fmt(r.max_batch, 0)],
];
readouts.text = '<table style="font-size:13px;border-collapse:collapse">' + rows.map(
  ([k, q, v]) => '<tr><td style="padding:2px 10px 2px 0">' + q + '</td><td style="font-weight:600;' +
  'text-align:right" data-readout="' + k + '">' + v + '</td></tr>').join("") + '</table>';
results.text = JSON.stringify({...r, inputs: s});
fig.title.text = C.model_name + " on " + C.gpu_name + ", decode\\nI = " + sig(r.arithmetic_intensity) +
  " FLOP/byte on the weights (" + Number((100 * r.peak_fraction).toPrecision(3)) + " % of peak); counting KV reads " +
  sig(r.arithmetic_intensity_with_kv) + " (" + Number((100 * r.peak_fraction_with_kv).toPrecision(3)) + " %)";
"""


class BokehOnlyInline(Resources):
    """Bokeh's own JavaScript and CSS, inline, and nothing else.

    Bokeh adds the external scripts of every model class registered in the
    process; once Panel is imported (the served lab), that includes a script
    fetched from a relative URL, which a page opened from disk cannot load.
    This page uses Bokeh models only, so only Bokeh's bundles go in.
    """

    def __init__(self, components=None):
        # Bokeh itself leaves out the components the page does not use (via clone).
        super().__init__(mode="inline", components=components)

    def clone(self, *, components=None):
        return BokehOnlyInline(components=components if components is not None else list(self.components))

    def _collect_external_resources(self, resource_attr):
        return []


def constants(scenario: Scenario, result: ScenarioResult) -> dict:
    """What the browser needs to re-evaluate the scenario: SI values and the model's shape."""
    g, m = result.gpu, result.model
    peak, sparse = {}, {}
    for wd in WEIGHT_PRECISIONS:
        roof, _ = compute_roof(wd, g.dense_flops)
        peak[wd] = g.dense_flops[roof]
        sparse[wd] = g.sparse_flops.get(roof)
    moe = None
    if m.moe:
        _, moe_layers, per_expert = m.layer_split()
        moe = {"fixed": m.fixed_params(), "layers": moe_layers, "per_expert": per_expert,
               "experts": m.moe.n_experts, "per_token": m.moe.experts_per_token}
    return {
        "model_name": m.name, "gpu_name": g.name, "n_params": m.n_params, "n_active": m.n_active_params,
        "moe": moe, "n_layers": m.n_layers, "windows": list(m.layer_windows),
        "kv_elements_gqa": m.kv_elements_per_token_per_layer(True),
        "kv_elements_mha": m.kv_elements_per_token_per_layer(False),
        "bytes": {p.id: p.bytes_per_element for p in PRECISIONS.values()},
        "weight_bytes": {p.id: m.weight_bytes_per_param(p.bytes_per_element) for p in PRECISIONS.values()},
        "peak": peak, "sparse": sparse,
        "bandwidth": g.hbm_bandwidth, "capacity": result.capacity_bytes, "reserve": result.reserve_bytes,
        "acceptance": result.acceptance,
        "batch_stops": _stops(BATCH_STOPS, scenario.batch), "context_stops": _stops(CONTEXT_STOPS, scenario.context),
    }


def _stops(stops: list[int], value: int) -> list[int]:
    return sorted({*stops, value})


def standalone_html(scenario: Scenario) -> str:
    """The page for ``scenario`` as one HTML string (Bokeh resources inline)."""
    result = Scenario(**{**scenario.levers(), "phase": "decode"}).evaluate()
    c = constants(scenario, result)
    view = RooflineView(result)
    view.other_phase.data = {"x": [], "y": [], "label": []}
    fig = view.figure
    fig.sizing_mode = "stretch_width"
    # Pins, the other phase and the efficiency band are served-lab features.
    legend = fig.legend[0]
    legend.items = [item for item in legend.items if item.label.value != "same request, other phase"
                    and not item.label.value.startswith("60%")]
    batch = Slider(title="Batch B", start=0, end=len(c["batch_stops"]) - 1, step=1,
                   value=c["batch_stops"].index(scenario.batch), css_classes=["batch"], width=260,
                   format=CustomJSTickFormatter(args={"stops": c["batch_stops"]}, code="return stops[tick]"))
    spec_k = Slider(title="Speculation depth k", start=1, end=16, step=1, value=scenario.spec_k,
                    css_classes=["spec-k"], width=200)
    context = Slider(title="Context S (tokens)", start=0, end=len(c["context_stops"]) - 1, step=1,
                     value=c["context_stops"].index(scenario.context), css_classes=["context"], width=260,
                     format=CustomJSTickFormatter(args={"stops": c["context_stops"]},
                                                  code="return stops[tick].toLocaleString('en-US')"))
    weight = Select(title="Weight precision p", value=scenario.weight_dtype, width=140, css_classes=["weight"],
                    options=[(p, PRECISIONS[p].label) for p in WEIGHT_PRECISIONS])
    kv = Select(title="KV-cache precision p_kv", value=scenario.kv_dtype, width=160, css_classes=["kv"],
                options=[(p, PRECISIONS[p].label) for p in KV_PRECISIONS])
    gqa = Checkbox(label="Grouped-query attention", active=scenario.gqa, css_classes=["gqa"])
    readouts = Div(text="", name="readouts")
    results = Div(text="", visible=False, name="results")
    header = Div(text=(
        f"<h2 style='margin:4px 0'>Roofline Lab — {result.model.name} on {result.gpu.name}</h2>"
        "<div style='font-size:13px;color:#444'>A self-contained copy of the lab: no server, no network. "
        "I = 2·B·k/p; ridge point P_peak/BW; attainable min(P_peak, BW·I); KV cache 2·L·h_kv·d_head·S·B·p_kv. "
        f"Capacity {result.capacity_bytes / 2**30:,.1f} GiB, reserve {result.reserve_bytes / 2**30:,.1f} GiB.</div>"
    ))
    args = dict(C=c, batch=batch, spec_k=spec_k, context=context, weight=weight, kv=kv, gqa=gqa,
                readouts=readouts, results=results, fig=fig, ladder=view.ladder, kv_ladder=view.kv_ladder,
                point=view.point, point_kv=view.point_kv, roof=view.roof, sparse=view.sparse_roof, ridge=view.ridge,
                span=view.ridge_span)
    callback = CustomJS(args=args, code=MODEL_JS + UPDATE_JS)
    for widget, prop in ((batch, "value"), (spec_k, "value"), (context, "value"), (weight, "value"),
                         (kv, "value"), (gqa, "active")):
        widget.js_on_change(prop, callback)
    layout = column(header, row(batch, spec_k, context, weight, kv, gqa),
                    row(fig, readouts, sizing_mode="stretch_width"), results, sizing_mode="stretch_width")
    doc = Document()
    doc.add_root(layout)
    # The browser evaluates once on load, so the page shows its own numbers from the start.
    doc.js_on_event(DocumentReady, callback)
    return file_html(doc, BokehOnlyInline(), title=f"Roofline Lab — {result.model.name} on {result.gpu.name}")
