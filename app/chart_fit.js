// The chart's ranges as the served chart fits them (app/roofline_view.py fit_x_end and fit_y_range), for the
// offline page and the served lab's instant redraw.
function fitXEnd(sources, x1, margin) {
  // The chart's x range's right end, app/roofline_view.py fit_x_end: x1, or the decade past the farthest positive
  // `x` of `sources` (the drawn points, not the roofs) times `margin`.
  let hi = -Infinity;
  for (const src of sources) {
    for (const v of src.data.x) { if (v > 0 && Number.isFinite(v)) { hi = Math.max(hi, v); } }
  }
  return hi > 0 ? Math.max(x1, 10 ** Math.ceil(Math.log10(hi * margin))) : x1;
}

function fitYRange(sources, y0, y1, margin) {
  // The chart's y range, app/roofline_view.py fit_y_range: [y0, y1] widened to whole decades past every positive
  // `y` of `sources` within `margin` of an end (a 10 GFLOP/s part or a CPU roof below, an FP4 roof above).
  let lo = Infinity, hi = -Infinity;
  for (const src of sources) {
    for (const v of src.data.y) { if (v > 0 && Number.isFinite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } }
  }
  if (!(lo <= hi)) { return [y0, y1]; }
  return [lo / margin >= y0 ? y0 : 10 ** Math.floor(Math.log10(lo / margin)),
          hi * margin <= y1 ? y1 : 10 ** Math.ceil(Math.log10(hi * margin))];
}

function rungCommunicationFeet(lad, T) {
  // What each rung's step sustains with its communication, FLOP_weights / step time, over T,
  // app/roofline_view.py rung_communication_feet: NaN for a rung it does not lower below its ceiling.
  return lad.map((q) => {
    const foot = q.flop_weights / q.step_time_s_weights;
    return foot < q.attainable_flop_per_s_weights * (1 - 1e-9) ? foot / T : NaN;
  });
}

function rungOverheadCeilings(lad, T) {
  // Each rung's overhead ceiling FLOP_weights / t_launch over T, app/roofline_view.py rung_overhead_ceilings: NaN
  // for all unless it is what holds some rung down.
  const c = lad.map((q) => q.launch_time_s > 0 ? q.flop_weights / q.launch_time_s : Infinity);
  const binds = c.some((v, i) => Number.isFinite(v) && v <= lad[i].attainable_flop_per_s_weights * (1 + 1e-9));
  return c.map((v) => binds ? v / T : NaN);
}
