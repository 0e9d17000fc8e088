// The offline page's update, run by a Bokeh CustomJS callback on every widget change, after
// app/step.js (evaluate()), app/chart_fit.js, app/units.js and app/offline_readouts.js in the same callback.
// ---- update: runs on every widget change ----
const s = {
  batch: C.batch_stops[batch.value], spec_k: spec_k.value, acceptance: acceptance.value, weight_dtype: weight.value,
  kv_dtype: kv.value, context: C.context_stops[context.value], gqa: gqa.active,
};
const r = evaluate(C, s);
const T = 1e12, X0 = 0.1, X1 = 1e9;
const lad = r.ladder;
ladder.data = {
  x: lad.map(q => q.arithmetic_intensity_weights), y: lad.map(q => q.attainable_flop_per_s_weights / T), batch: lad.map(q => q.batch),
  pct: lad.map(q => 100 * q.peak_fraction_weights), fits: lad.map(q => q.fits ? "yes" : "no"),
  fill: lad.map(q => q.fits ? C.colors.ladder : "white"), line: lad.map(q => C.colors.ladder),
  label: lad.map(q => "B=" + q.batch), overhead: rungOverheadCeilings(lad, T),
  comm_foot: rungCommunicationFeet(lad, T),
};
// Their keys show while a rung's own overhead ceiling holds it down, or its communication lowers its step
// (RooflineView.update does the same).
rungs_item.visible = ladder.data.overhead.some(Number.isFinite);
comm_item.visible = ladder.data.comm_foot.some(Number.isFinite);
for (const renderer of comm_item.renderers) { renderer.visible = comm_item.visible; }
kv_ladder.data = {
  x: lad.map(q => q.arithmetic_intensity_with_kv), y: lad.map(q => q.attainable_flop_per_s_with_kv / T), batch: lad.map(q => q.batch),
  pct: lad.map(q => 100 * q.attainable_flop_per_s_with_kv / r.peak_flop_per_s), fits: lad.map(q => q.fits ? "yes" : "no"),
};
point.data = {x: [r.arithmetic_intensity_weights], y: [r.attainable_flop_per_s_weights / T], batch: [s.batch],
              pct: [100 * r.peak_fraction_weights], fits: [r.fits ? "yes" : "no"],
              fill: [r.fits ? C.colors.workload : "white"]};  // hollow, as a rung, where it does not fit
point_kv.data = {x: [r.arithmetic_intensity_with_kv], y: [r.attainable_flop_per_s_with_kv / T], batch: [s.batch],
                 pct: [100 * r.peak_fraction_with_kv], fits: [r.fits ? "yes" : "no"]};
// The same request's other phase, as the served chart draws it in decode: the prefill of one prompt (TTFT).
other_phase.data = {x: [r.ttft_intensity], y: [r.ttft_attainable_flop_per_s / T], label: [C.other_phase_label]};
// The third ceiling: the step's FLOP over its launch time (the slowest pipeline stage's kernels: with PP the
// levers can move which stage that is), labelled as RooflineView labels it.
overhead.data = {x: [X0, X1], y: [r.overhead_ceiling_flop_per_s / T, r.overhead_ceiling_flop_per_s / T],
                 label: ["overhead ceiling: " + pyInt(r.kernels_per_step) + " kernels × launch = " +
                         fmtSig(r.launch_overhead_s * 1e3, 3) + " ms", ""]};
// Keep every drawn point on the chart (the served chart's rule, RooflineView.fit_x).
const x1 = fitXEnd([point, point_kv, ladder, kv_ladder, other_phase], C.x_end, C.x_margin);
if (fig.x_range.end !== x1) { fig.x_range.end = x1; }
roof.data = {x: [X0, r.ridge_point, X1], y: [C.bandwidth * X0 / T, r.peak_flop_per_s / T, r.peak_flop_per_s / T]};
const sp = C.sparse[s.weight_dtype];
sparse.data = sp ? {x: [X0, sp / C.bandwidth, X1], y: [C.bandwidth * X0 / T, sp / T, sp / T]} : {x: [], y: []};
sparse_item.visible = Boolean(sp);
// Keep every point and roof on the chart (the served chart's rule, RooflineView.fit_y), the ridge label at its foot.
const [y0, y1] = fitYRange([roof, sparse, point, point_kv, ladder, kv_ladder, other_phase], C.y_range[0], C.y_range[1],
                           C.y_margin);
if (fig.y_range.start !== y0 || fig.y_range.end !== y1) { fig.y_range.setv({start: y0, end: y1}); }
ridge.data = {x: [r.ridge_point], y: [y0], text: [C.ridge[s.weight_dtype][2]]};
span.location = r.ridge_point;
// The served chart's title (RooflineView.update, weight_levers, kv_levers, communication_lines): replicas and
// APPROXIMATE_MARK on the first line, the levers that set each intensity, and with a step split over GPUs its
// communication as time and as FLOP per byte sent.
fig.title.text = C.model_name + " · " + C.gpu_name + " · decode" +
  (C.split.replicas > 1 ? " · " + pyInt(C.split.replicas) + " replicas" : "") +
  (r.fits ? "" : C.does_not_fit) + (C.approximate ? " · ≈ approximate" : "") + "\nI = " +
  fmtIntensity(r.arithmetic_intensity_weights) + " FLOP/byte (weights, B = " + s.batch + ", k = " + s.spec_k + ", p = " +
  C.weight_labels[s.weight_dtype] + "): " + fmtSig(100 * r.peak_fraction_weights, 3) + C.of_peak + "\nI = " +
  fmtIntensity(r.arithmetic_intensity_with_kv) + " counting KV reads (S = " + pyInt(s.context) + ", KV " +
  C.kv_labels[s.kv_dtype] + (s.gqa ? "" : ", GQA off") + "): " +
  fmtSig(100 * r.peak_fraction_with_kv, 3) + C.of_peak + communicationLines(C, s, r);
// The text follows a frame later: the readouts, the memory bar and the title make the browser lay the page
// out again, which would hold back the chart's repaint (see README, benchmarks).  During a drag only the
// last move's text is written.
results._write_text = () => {
  // Readouts, show-your-work and the memory bar: the served lab's HTML (labels and formulas from Python).
  const rows = derivation(C, s, r);
  const notes = warnings(C, s, r);
  readouts.text = readoutsHtml(C.readout_keys.map(key => rows[key]), show_work.active, notes, Boolean(C.approximate));
  memory.text = memoryHtml(C, s, r);
  // Served beside the lab (a class page): the reader's scenario, as moved here, opens in the full lab.  Each lever
  // is written as core.levers.Lever.encode writes it.  Opened from a file, a path has no lab to resolve against;
  // an absolute --lab-url still has (a docs writer's trial: a wiki attachment lost the link it was written with).
  if (C.full_lab && (location.protocol.startsWith("http") || /^https?:\/\//i.test(C.full_lab.path))) {
    const q = new URLSearchParams(C.full_lab.query);
    for (const [name, c] of Object.entries(C.full_lab.levers)) {
      const v = s[name];
      q.set(c.flag, c.kind === "bool" ? (Boolean(v) !== c.negated ? "true" : "false")
        : c.kind === "int" ? String(Math.trunc(v))
        : c.kind === "number" ? String(Number((v / c.scale).toPrecision(15))) : String(v));
    }
    const href = new URL(C.full_lab.path + "?" + q.toString(), location.href).href;
    // In a frame (a docs page's iframe) the lab opens in a tab of its own, not inside the frame.
    const framed = window.self !== window.top ? ' target="_blank" rel="noopener noreferrer"' : "";
    link.text = '<a href="' + escHtml(href) + '"' + framed + '>Open this scenario in the full lab</a> ' +
      "(pins, Compare, several GPUs, prefill)";
    link.visible = true;
  }
  // Last: tests and exports read the inputs echoed here as the sign that everything above is written.
  results.text = JSON.stringify({...r, inputs: s, readouts: rows, warnings: notes});
};
if (!results._text_due) {
  results._text_due = true;
  requestAnimationFrame(() => setTimeout(() => { results._text_due = false; results._write_text(); }, 0));
}
