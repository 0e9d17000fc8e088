// The offline page's model and its update, run by a Bokeh CustomJS callback.
// The same formulas as core/scenario.py, core/roofline.py and core/models.py, in the same
// order of operations; tests/test_standalone.py checks them against core over random
// scenarios.  Constants (the model's shape, the GPU's roofs, labels) come from Python in C.
function kvPerSeq(C, S, pkv, gqa) {
  // What a sequence holds (ModelSpec.cache_bytes_per_sequence): Σ over the layer groups of layers · elements ·
  // p_kv · min(S, cap) (a window or chunk caps a group's cache; shared-KV layers hold none), then the fixed
  // recurrent state of linear-attention / Mamba layers, whatever S.
  let bytes = 0;
  for (const t of (gqa ? C.kv_terms_gqa : C.kv_terms_mha)) {
    bytes += t.layers * t.elements * pkv * ((t.cap === null) ? S : Math.min(S, t.cap));
  }
  return bytes + C.state_bytes;
}
function kvPerToken(C, pkv, gqa) {
  let bytes = 0;
  for (const t of (gqa ? C.kv_terms_gqa : C.kv_terms_mha)) { bytes += t.layers * t.elements * pkv; }
  return bytes;
}
function attentionPerToken(C, S) {
  // ModelSpec.decode_attention_flop: Σ 4·h_q·d_head·layers · min(S, cap), plus fixed-state layers' own cost.
  let flop = 0;
  for (const t of C.attention_terms) { flop += t.flop * ((t.cap === null) ? S : Math.min(S, t.cap)); }
  return flop + C.attention_fixed;
}
function touched(C, tokens) {
  // Fraction of routed experts `tokens` tokens touch: 1 − (1 − k_e/E)^tokens (uniform routing).
  const m = C.moe;
  return 1.0 - (1.0 - m.per_token / m.experts) ** tokens;
}
function paramsRead(C, tokens) {
  // Mixture-of-experts reads only the experts its tokens touch: E·(1 − (1 − k_e/E)^tokens).
  if (!C.moe) { return C.n_params; }
  const m = C.moe;
  return m.fixed + m.layers * m.per_expert * (m.experts * touched(C, tokens));
}
function weightBytesRead(C, w, tokens) {
  // core.scenario.Weights.read_bytes: "stored" reads each tensor group in its own format.
  if (w === "stored") {
    const st = C.stored;
    return C.moe ? st.fixed + st.routed * (C.moe.experts * touched(C, tokens)) / C.moe.experts : st.fixed + st.routed;
  }
  return paramsRead(C, tokens) * C.bytes_per_weight[w];
}
function evaluate(C, s) {
  const p = C.bytes_per_weight[s.weight_dtype], pkv = C.bytes[s.kv_dtype];
  const peak = C.peak[s.weight_dtype], bw = C.bandwidth, Na = C.n_active;
  const held = C.held[s.weight_dtype];
  const kvseq = kvPerSeq(C, s.context, pkv, s.gqa);
  const attnSeq = s.spec_k * attentionPerToken(C, s.context);
  // Tokens each sequence gains per verify pass (Leviathan et al. 2023); 1 at k = 1.
  const a = C.acceptance;
  const E = (a === 1.0) ? s.spec_k : (1.0 - a ** s.spec_k) / (1.0 - a);
  const ladder = [];
  const ridge = peak / bw;
  const top = Math.min(Math.max(2.0 * (ridge * p / (2.0 * s.spec_k)), 2.0), C.max_batch);
  const n = Math.ceil(Math.log2(top));
  for (let i = 0; i <= n; i++) { ladder.push(rung(2 ** i)); }
  function rung(b) {
    const weight = weightBytesRead(C, s.weight_dtype, b * s.spec_k);
    const flopW = 2.0 * Na * b * s.spec_k;
    const flops = flopW + b * attnSeq;
    const I = flopW / weight;
    const bytes = weight + b * kvseq;
    const Ikv = flops / bytes;
    const att = Math.min(peak, bw * I);
    return {batch: b, flop: flops, intensity: I, intensity_kv: Ikv, attainable: att,
            attainable_kv: Math.min(peak, bw * Ikv), peak_fraction_weights: att / peak,
            tokens_per_s_with_kv: b * E / Math.max(flops / peak, bytes / bw),
            tokens_per_s_weights: b * E / Math.max(flopW / peak, weight / bw),
            weight: weight, fits: held + b * kvseq + C.reserve <= C.capacity};
  }
  const point = rung(s.batch);
  const weight = point.weight;
  const free = C.capacity - held - C.reserve;
  const kvTraffic = s.batch * kvseq;
  return {
    weight_bytes_read: weight, weight_bytes_held: held, flop_per_step: point.flop,
    arithmetic_intensity_weights: point.intensity,
    arithmetic_intensity_with_kv: point.intensity_kv, ridge_point: ridge,
    attainable_flop_per_s_weights: point.attainable,
    peak_fraction_weights: point.peak_fraction_weights, bound: point.intensity_kv < ridge ? "memory" : "compute",
    attainable_flop_per_s_with_kv: point.attainable_kv, peak_fraction_with_kv: point.attainable_kv / peak,
    expected_tokens_per_step: E,
    step_time_s_with_kv: Math.max(point.flop / peak, (weight + kvTraffic) / bw),
    tokens_per_s_with_kv: point.tokens_per_s_with_kv, tokens_per_s_weights: point.tokens_per_s_weights,
    kv_bytes_per_token: kvPerToken(C, pkv, s.gqa),
    kv_bytes: kvTraffic, fits: point.fits, max_batch: Math.floor(Math.max(free, 0.0) / kvseq),
    memory_used_bytes: held + kvTraffic + C.reserve, peak_flop_per_s: peak, ladder: ladder,
  };
}

// ---- update: runs on every widget change ----
const s = {
  batch: C.batch_stops[batch.value], spec_k: spec_k.value, weight_dtype: weight.value, kv_dtype: kv.value,
  context: C.context_stops[context.value], gqa: gqa.active,
};
const r = evaluate(C, s);
const T = 1e12, GiB = 2 ** 30;
const lad = r.ladder;
ladder.data = {
  x: lad.map(q => q.intensity), y: lad.map(q => q.attainable / T), batch: lad.map(q => q.batch),
  pct: lad.map(q => 100 * q.peak_fraction_weights), fits: lad.map(q => q.fits ? "yes" : "no"),
  fill: lad.map(q => q.fits ? C.colors.ladder : "white"), line: lad.map(q => C.colors.ladder),
  label: lad.map(q => "B=" + q.batch),
};
kv_ladder.data = {
  x: lad.map(q => q.intensity_kv), y: lad.map(q => q.attainable_kv / T), batch: lad.map(q => q.batch),
  pct: lad.map(q => 100 * q.attainable_kv / r.peak_flop_per_s), fits: lad.map(q => q.fits ? "yes" : "no"),
};
point.data = {x: [r.arithmetic_intensity_weights], y: [r.attainable_flop_per_s_weights / T], batch: [s.batch],
              pct: [100 * r.peak_fraction_weights], fits: [r.fits ? "yes" : "no"]};
point_kv.data = {x: [r.arithmetic_intensity_with_kv], y: [r.attainable_flop_per_s_with_kv / T], batch: [s.batch],
                 pct: [100 * r.peak_fraction_with_kv], fits: [r.fits ? "yes" : "no"]};
const far = Math.max(r.arithmetic_intensity_weights, lad[lad.length - 1].intensity);
fig.x_range.end = Math.max(1e5, 10 ** Math.ceil(Math.log10(far * 3)));
const X0 = 0.1, X1 = 1e9;
roof.data = {x: [X0, r.ridge_point, X1], y: [C.bandwidth * X0 / T, r.peak_flop_per_s / T, r.peak_flop_per_s / T]};
const sp = C.sparse[s.weight_dtype];
sparse.data = sp ? {x: [X0, sp / C.bandwidth, X1], y: [C.bandwidth * X0 / T, sp / T, sp / T]} : {x: [], y: []};
ridge.data = {x: [r.ridge_point], y: [0.01], text: ["ridge " + Math.round(r.ridge_point) + " FLOP/byte"]};
span.location = r.ridge_point;
const fmt = (x, d) => x.toLocaleString("en-US", {maximumFractionDigits: d});
const sig = (x) => Number(x.toPrecision(4)).toLocaleString("en-US", {maximumFractionDigits: 10});
// Labels and formulas come from Python (core/explain.py's derivation), values from evaluate().
const rows = [
  ["intensity", sig(r.arithmetic_intensity_weights) + " FLOP/byte"],
  ["intensity-kv", sig(r.arithmetic_intensity_with_kv) + " FLOP/byte"],
  ["ridge", fmt(r.ridge_point, 0) + " FLOP/byte"],
  ["attainable", sig(r.attainable_flop_per_s_weights / T) + " TFLOP/s"],
  ["peak-fraction", Number((100 * r.peak_fraction_weights).toPrecision(3)) + " %"],
  ["attainable-kv", sig(r.attainable_flop_per_s_with_kv / T) + " TFLOP/s (" +
   Number((100 * r.peak_fraction_with_kv).toPrecision(3)) + " %)"],
  ["bound", r.bound + "-bound"],
  ["weights", fmt(r.weight_bytes_read / 1e9, 2) + " GB (" + fmt(r.weight_bytes_read / GiB, 2) + " GiB)"],
  ["step-time", sig(r.step_time_s_with_kv * 1e3) + " ms"],
  ["tokens", fmt(r.tokens_per_s_with_kv, 0) + " tokens/s"],
  ["tokens-no-kv", fmt(r.tokens_per_s_weights, 0) + " tokens/s"],
  ["kv-token", sig(r.kv_bytes_per_token / 1024) + " KiB"],
  ["kv-total", fmt(r.kv_bytes / GiB, 2) + " GiB"],
  ["fits", r.fits ? "yes" : "NO"],
  ["max-batch", fmt(r.max_batch, 0)],
];
// Every text written as HTML is escaped: a name typed by a user stays text.
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
  "'": "&#39;"})[c]);
readouts.text = '<table style="font-size:13px;border-collapse:collapse">' + rows.map(
  ([k, v]) => '<tr><td style="padding:2px 10px 2px 0">' + esc(C.labels[k]) +
  '<div style="color:#555;font-size:12px">' + esc(C.formulas[k]) + '</div></td><td style="font-weight:600;' +
  'text-align:right" data-readout="' + k + '">' + esc(v) + '</td></tr>').join("") + '</table>';
results.text = JSON.stringify({...r, inputs: s});
fig.title.text = C.model_name + " on " + C.gpu_name + ", decode\nI = " + sig(r.arithmetic_intensity_weights) +
  " FLOP/byte on the weights (" + Number((100 * r.peak_fraction_weights).toPrecision(3)) +
  " % of peak); counting KV reads " +
  sig(r.arithmetic_intensity_with_kv) + " (" + Number((100 * r.peak_fraction_with_kv).toPrecision(3)) + " %)";
