// The offline page's update, run by a Bokeh CustomJS callback on every widget change, after
// app/roofline_model.js (evaluate() and its helpers) in the same callback.
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
