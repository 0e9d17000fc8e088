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

