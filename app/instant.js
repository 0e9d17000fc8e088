// The served lab's instant redraw: one Bokeh CustomJS per session, after app/step.js (evaluate() and
// its steps) and app/chart_fit.js in the same code, run by each lever's widget (app/instant_levers.js)
// and when the server changes the workload or the constants.  A lever moved in the browser redraws the
// roofline's points, ladders, roofs and overhead ceiling at once, from the constants the server
// keeps in `holder` (app/instant.py); the server's own update follows and agrees (same formulas,
// checked by tests/browser/test_instant_browser.py).  Writes are browser-only (sync: false): the server
// stays the owner of the data.  When a server update for an older lever state lands after a
// newer one was drawn here, the browser's drawing of its current levers wins.
const H = JSON.parse(holder.data.c[0]);
// Until a lever moves in this browser, or outside one GPU decoding, the server draws alone; a chart not on
// the page (another tab is open) is drawn by the server when its tab opens again.
if (holder._instant_read === undefined || !H.on || !holder.data.shown[0]) { return; }
const C = H.c;
const s = holder._instant_read(H);
if (s.batch === undefined || s.context === undefined || !(s.weight_dtype in C.profiles)) { return; }
const r = evaluate(C, s);
const T = 1e12, X0 = H.x0, X1 = H.x_far;
// Already drawn (the server's update of the same levers, or this callback's own write): nothing to do.
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
if (point.data.x.length === 1 && point.data.x[0] === r.arithmetic_intensity_weights &&
    point.data.batch[0] === s.batch && point_kv.data.x.length === 1 &&
    point_kv.data.x[0] === r.arithmetic_intensity_with_kv && ridge.data.x[0] === r.ridge_point &&
    same(Array.from(ladder.data.fits), r.ladder.map((q) => q.fits ? "yes" : "no")) &&
    same(Array.from(kv_ladder.data.x), r.ladder.map((q) => q.arithmetic_intensity_with_kv))) { return; }
const set = (model, attrs) => model.setv(attrs, {sync: false});
const lad = r.ladder;
let past = false;
const labels = lad.map((q) => { const t = past ? "" : "B=" + q.batch; past = past || q.arithmetic_intensity_weights >= r.ridge_point; return t; });
set(ladder, {data: {
  x: lad.map((q) => q.arithmetic_intensity_weights), y: lad.map((q) => q.attainable_flop_per_s_weights / T), batch: lad.map((q) => q.batch),
  pct: lad.map((q) => 100 * q.peak_fraction_weights), fits: lad.map((q) => q.fits ? "yes" : "no"),
  fill: lad.map((q) => q.fits ? C.colors.ladder : "white"), line: lad.map(() => C.colors.ladder), label: labels, overhead: rungOverheadCeilings(lad, T),
  comm_foot: rungCommunicationFeet(lad, T),
}});
set(kv_ladder, {data: {
  x: lad.map((q) => q.arithmetic_intensity_with_kv), y: lad.map((q) => q.attainable_flop_per_s_with_kv / T), batch: lad.map((q) => q.batch),
  pct: lad.map((q) => 100 * q.attainable_flop_per_s_with_kv / r.peak_flop_per_s), fits: lad.map((q) => q.fits ? "yes" : "no"),
}});
const fits = r.fits ? "yes" : "no";
set(point_kv, {data: {x: [r.arithmetic_intensity_with_kv], y: [r.attainable_flop_per_s_with_kv / T],
                      batch: [s.batch], pct: [100 * r.peak_fraction_with_kv], fits: [fits]}});
// The roof, the 2:4 headline and the ridge move with the weight format's compute roof.
const peak = r.peak_flop_per_s, bw = C.bandwidth;
set(roof, {data: {x: [X0, r.ridge_point, X1], y: [bw * X0 / T, Math.min(peak, bw * r.ridge_point) / T, peak / T]}});
const sp = C.sparse[s.weight_dtype];
set(sparse, {data: sp ? {x: [X0, sp / bw, X1], y: [bw * X0 / T, Math.min(sp, bw * (sp / bw)) / T, sp / T]}
                      : {x: [], y: []}});
set(ridge, {data: {x: [r.ridge_point], y: [ridge.data.y[0]],
                   text: [C.ridge[s.weight_dtype][2]]}});
set(span, {location: r.ridge_point});
// The third ceiling: this step's FLOP over its kernels' launch time.
const ceiling = r.flop_per_step / H.launch_s / T;
set(overhead, {data: {x: [X0, X1], y: [ceiling, ceiling], label: overhead.data.label}});
// The workload last: a change of its data is what sets off the redraw check above.
set(point, {data: {x: [r.arithmetic_intensity_weights], y: [r.attainable_flop_per_s_weights / T], batch: [s.batch],
                   pct: [100 * r.peak_fraction_weights], fits: [fits],
                   fill: [r.fits ? C.colors.workload : "white"]}});
// Keep every drawn point on the chart (RooflineView.fit_x: the points, not the roofs), and every point and roof
// (RooflineView.fit_y, from the same sources), the ridge label at its foot.
const shown = ["pins", "measured", "other-phase", "reference-roof"].map(
  (name) => y_range.document && y_range.document.get_model_by_name(name));
const x1 = fitXEnd([point, point_kv, ladder, kv_ladder, ...shown.slice(0, 3).filter((src) => src)], H.x_end,
                   H.x_margin);
if (x_range.end !== x1) { set(x_range, {end: x1}); }
const [y0, y1] = fitYRange([...y_sources, ...shown.filter((src) => src)], H.y0, H.y_end, H.y_margin);
if (y_range.start !== y0 || y_range.end !== y1) { set(y_range, {start: y0, end: y1}); }
if (ridge.data.y[0] !== y0) { set(ridge, {data: {...ridge.data, y: [y0]}}); }
