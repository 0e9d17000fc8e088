// The roofline model in the browser: one decode step of one GPU, re-evaluated without a server.
// The same formulas as core/scenario.py, core/roofline.py and core/models.py, in the same
// order of operations; tests/test_standalone.py checks them against core over random
// scenarios.  Constants (the model's shape, the GPU's roofs, labels) come from Python in C
// (app/standalone.py:constants).  Used by the offline page (standalone.js) and the served
// lab's instant redraw.
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
function causalPairs(P, window, chunk) {
  // ModelSpec.causal_pairs: (query, key) pairs of causal attention over P tokens, capped by a window or chunks.
  if (window !== null) {
    const w = window;
    return (P <= w) ? P * (P + 1) / 2 : w * (w + 1) / 2 + (P - w) * w;
  }
  if (chunk !== null) {
    const c = chunk, whole = Math.floor(P / c), rest = P - whole * c;
    return whole * c * (c + 1) / 2 + rest * (rest + 1) / 2;
  }
  return P * (P + 1) / 2;
}
function prefillAttention(C, P) {
  // ModelSpec.prefill_attention_flop: P × the fixed-state layers' per-token cost + Σ 4·h_q·d_head·layers · pairs(P).
  let flop = P * C.attention_fixed;
  for (const t of C.prefill_terms) { flop += t.flop * causalPairs(P, t.window, t.chunk); }
  return flop;
}
function expectedTokens(a, k) {
  // Tokens each sequence gains per verify pass of depth k (Leviathan et al. 2023): (1 − α^k)/(1 − α); k at α = 1.
  return (a === 1.0) ? k : (1.0 - a ** k) / (1.0 - a);
}
function perLaunch(flop, L) {
  // The overhead ceiling, FLOP / t_launch (none when launches cost nothing): core.scenario._per_launch.
  return L > 0 ? flop / L : Infinity;
}
function step(C, s, b, k, gained, kvseq, attnSeq) {
  // core.scenario.step_ladder at one batch size on one GPU: b sequences, k tokens per weight read, each gaining
  // `gained` tokens, moving kvseq bytes of cache and adding attnSeq FLOP of attention.
  const peak = C.peak[s.weight_dtype], bw = C.bandwidth, L = C.launch_overhead_s;
  const weight = weightBytesRead(C, s.weight_dtype, b * k);
  const flopW = 2.0 * C.n_active * b * k;
  const flops = flopW + b * attnSeq;
  const I = flopW / weight;
  const bytes = weight + b * kvseq;
  const Ikv = flops / bytes;
  // The roofline under the overhead ceiling (FLOP / t_launch), and a step at least as long as its launches: the
  // third ceiling of article 000, as core.scenario.step_ladder counts it.
  const att = Math.min(Math.min(peak, bw * I), perLaunch(flopW, L));
  const t = Math.max(flops / peak, bytes / bw, L), tW = Math.max(flopW / peak, weight / bw, L);
  return {batch: b, flop: flops, flop_weights: flopW, attention: b * attnSeq, intensity: I, intensity_kv: Ikv, attainable: att,
          attainable_kv: Math.min(Math.min(peak, bw * Ikv), perLaunch(flops, L)), peak_fraction_weights: att / peak,
          tokens_per_s_with_kv: b * gained / t, tokens_per_s_weights: b * gained / tW,
          step_time: t, step_time_weights: tW, compute_time: flops / peak, memory_time: bytes / bw,
          weight: weight, fits: C.held[s.weight_dtype] + b * kvseq + C.reserve <= C.capacity};
}
function evaluate(C, s) {
  // s: the levers (batch, spec_k, context, weight_dtype, kv_dtype, gqa and, optionally, acceptance α, else
  // C.acceptance).  Field names are ScenarioResult's.
  const p = C.bytes_per_weight[s.weight_dtype], pkv = C.bytes[s.kv_dtype];
  const peak = C.peak[s.weight_dtype], bw = C.bandwidth;
  const held = C.held[s.weight_dtype];
  const kvseq = kvPerSeq(C, s.context, pkv, s.gqa);
  const attnToken = attentionPerToken(C, s.context);
  const attnSeq = s.spec_k * attnToken;
  const a = (s.acceptance === undefined) ? C.acceptance : s.acceptance;
  const E = expectedTokens(a, s.spec_k);
  const ladder = [];
  const ridge = peak / bw;
  const top = Math.min(Math.max(2.0 * (ridge * p / (2.0 * s.spec_k)), 2.0), C.max_batch);
  const n = Math.ceil(Math.log2(top));
  for (let i = 0; i <= n; i++) { ladder.push(step(C, s, 2 ** i, s.spec_k, E, kvseq, attnSeq)); }
  const point = step(C, s, s.batch, s.spec_k, E, kvseq, attnSeq);
  const weight = point.weight;
  const free = C.capacity - held - C.reserve;
  const kvTraffic = s.batch * kvseq;
  // One request crosses the roofline twice (article 004): prefill of the prompt (k = prompt length, writing its
  // cache), then decode.  The chart's other-phase point is one prompt alone, the time-to-first-token step.
  const P = C.prompt_len;
  const kvPrompt = kvPerSeq(C, P, pkv, s.gqa), attnPrompt = prefillAttention(C, P);
  const prefill = step(C, s, s.batch, P, P, kvPrompt, attnPrompt);
  const ttft = step(C, s, 1, P, P, kvPrompt, attnPrompt);
  const plain = step(C, s, s.batch, 1, E, kvseq, attnToken);
  // The bound: the ceiling that sets the step (launches when they outlast the GPU's own time), as core's.
  const gpuTime = Math.max(point.compute_time, point.memory_time);
  const bound = C.launch_overhead_s > gpuTime ? "overhead" : point.intensity_kv < ridge ? "memory" : "compute";
  return {
    weight_bytes_read: weight, weight_bytes_held: held, flop_per_step: point.flop,
    // parameters, not bytes: the same count whatever the format (ScenarioResult.weight_params_read / _held)
    weight_params_read: paramsRead(C, s.batch * s.spec_k), weight_params_held: C.n_params,
    // as ScenarioResult: the weights' share is the total less the attention
    flop_per_step_weights: point.flop - point.attention, attention_flop_per_step: point.attention,
    arithmetic_intensity_weights: point.intensity,
    arithmetic_intensity_with_kv: point.intensity_kv, ridge_point: ridge,
    attainable_flop_per_s_weights: point.attainable,
    peak_fraction_weights: point.peak_fraction_weights, bound: bound,
    attainable_flop_per_s_with_kv: point.attainable_kv, peak_fraction_with_kv: point.attainable_kv / peak,
    acceptance: a, expected_tokens_per_step: E,
    step_time_s_with_kv: point.step_time,
    step_time_s_weights: point.step_time_weights,
    tokens_per_s_with_kv: point.tokens_per_s_with_kv, tokens_per_s_weights: point.tokens_per_s_weights,
    kv_bytes_per_token: kvPerToken(C, pkv, s.gqa), kv_bytes_per_sequence: kvseq,
    kv_bytes: kvTraffic, kv_traffic_bytes: kvTraffic, bytes_per_step: weight + kvTraffic,
    fits: point.fits, max_batch: Math.floor(Math.max(free, 0.0) / kvseq),
    free_for_kv_bytes: Math.max(free, 0.0), weights_shortfall_bytes: Math.max(-free, 0.0),
    memory_used_bytes: held + kvTraffic + C.reserve, peak_flop_per_s: peak, capacity_bytes: C.capacity,
    reserve_bytes: C.reserve, compute_time_s: point.compute_time, memory_time_s: point.memory_time,
    launch_overhead_s: C.launch_overhead_s, overhead_ceiling_flop_per_s: perLaunch(point.flop, C.launch_overhead_s),
    gpu_time_s: gpuTime,
    prefill_intensity: prefill.intensity, prefill_attainable_flop_per_s: prefill.attainable,
    decode_intensity: point.intensity, decode_attainable_flop_per_s: point.attainable,
    ttft_intensity: ttft.intensity, ttft_attainable_flop_per_s: ttft.attainable,
    ttft_s: ttft.step_time, verify_step_time_s: point.step_time, tpot_s: point.step_time / E,
    speculative_speedup: E * plain.step_time / point.step_time,
    ladder: ladder,
  };
}
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
