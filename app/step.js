// One step of one GPU, in the browser: core/step.py's step() on a profile serialised by StepProfile.to_json(),
// and core/scenario.py's evaluate() composed of such steps.  The same formulas in the same order of operations;
// tests/test_step_parity.py runs this file (in an embedded JavaScript engine, no browser) against core over
// random profiles and scenarios.  Used by the offline page (standalone.js) and the served lab's instant redraw
// (instant.js).
function causalPairs(P, window, chunk) {
  // core.step.causal_pairs: (query, key) pairs of causal attention over P tokens, capped by a window or chunks.
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
function capped(S, cap) { return cap === null ? S : Math.min(S, cap); }
function kvBytesPerSequence(cache, S, pkv) {
  // CacheProfile.kv_bytes_per_sequence: Σ elements·p_kv·min(S, cap).
  let bytes = 0;
  for (const [e, cap] of cache.terms) { bytes += e * pkv * capped(S, cap); }
  return bytes;
}
function kvBytesPerToken(cache, pkv) {
  let e = 0;
  for (const [x] of cache.terms) { e += x; }
  return e * pkv;
}
function decodeAttention(a, S) {
  // AttentionProfile.decode_flop: the fixed-state layers' per-token cost + Σ flop_per_key·min(S, cap).
  let flop = a.per_token;
  for (const [f, cap] of a.decode) { flop += f * capped(S, cap); }
  return flop;
}
function prefillAttention(a, P) {
  // AttentionProfile.prefill_flop: P × the per-token cost + Σ flop_per_pair·pairs(P).
  let flop = P * a.per_token;
  for (const [f, window, chunk] of a.prefill) { flop += f * causalPairs(P, window, chunk); }
  return flop;
}
function touchedFraction(p, t) {
  // StepProfile.touched_fraction: 1 − (1 − k_e/E)^(EP·t) of this GPU's routed experts (0 for a dense model).
  return p.experts ? 1.0 - (1.0 - p.experts_per_token / p.experts) ** (p.expert_groups * t) : 0.0;
}
function mostLoaded(stages, f) {
  let best = 0.0;
  for (const [fixed, routed] of stages) { best = Math.max(best, fixed + routed * f); }
  return best;
}
function heldBytes(p) { return mostLoaded(p.weight_stages, 1.0); }
function communicationTime(p, t) {
  // StepProfile.communication_time_s: Σ calls·t_call + bytes sent / link.
  let perToken = 0, calls = 0;
  for (const c of p.collectives) { perToken += c.bytes_per_token; calls += c.calls; }
  const sent = t * perToken;
  return (p.link_bandwidth ? sent / p.link_bandwidth : 0.0 * sent) + calls * p.call_latency_s;
}
function bytesSent(p, t) {
  let perToken = 0;
  for (const c of p.collectives) { perToken += c.bytes_per_token; }
  return t * perToken;
}
function perLaunch(flop, L) { return L > 0 ? flop / L : Infinity; }
function step(p, b, tokens, context, gained, pkv, gqa, prefill) {
  // core.step.step at one batch size: field names are core.step.Step's.
  const t = b * tokens;
  const cache = p.cache[gqa ? "gqa" : "mha"];
  const held = prefill ? tokens : context;
  const perSeqAttention = prefill ? prefillAttention(p.attention, tokens) : tokens * decodeAttention(p.attention, context);
  const kvSeq = kvBytesPerSequence(cache, held, pkv) + cache.state_bytes;
  const peak = p.peak_flop_per_s, bw = p.bandwidth, L = p.launch_s;
  const f = touchedFraction(p, t);
  const weight = mostLoaded(p.weight_stages, f);
  const flopW = 2.0 * p.n_active_params * t;
  const attention = b * perSeqAttention;
  const flop = flopW + attention;
  const kv = b * kvSeq;
  const moved = weight + kv;
  const tc = flop / peak, tm = moved / bw;
  const comm = communicationTime(p, t);
  const gpu = Math.max(tc, tm) + comm;
  const ts = Math.max(gpu, L);
  const tw = Math.max(Math.max(flopW / peak, weight / bw) + comm, L);
  const I = flopW / weight, Ikv = flop / moved;
  const att = Math.min(Math.min(peak, bw * I), perLaunch(flopW, L));
  const attKv = Math.min(Math.min(peak, bw * Ikv), perLaunch(flop, L));
  const used = heldBytes(p) + p.stages * kv + p.reserve_bytes;
  const bound = L > gpu ? "overhead" : Ikv < peak / bw ? "memory" : "compute";
  return {
    batch: b, arithmetic_intensity_weights: I, arithmetic_intensity_with_kv: Ikv,
    attainable_flop_per_s_weights: att, attainable_flop_per_s_with_kv: attKv,
    peak_fraction_weights: att / peak, peak_fraction_with_kv: attKv / peak,
    flop: flop, flop_weights: flopW, attention_flop: attention, weight_bytes_read: weight, kv_traffic_bytes: kv,
    bytes_moved: moved, kv_bytes_per_sequence: kvSeq, compute_time_s: tc, memory_time_s: tm,
    communication_time_s: comm, launch_time_s: L, gpu_time_s: gpu, step_time_s_with_kv: ts,
    step_time_s_weights: tw, bytes_sent: bytesSent(p, t), tokens_per_s_with_kv: b * gained / ts,
    tokens_per_s_weights: b * gained / tw, memory_used_bytes: used, fits: used <= p.capacity_bytes, bound: bound,
    experts_touched_fraction: f,
  };
}
function expectedTokens(a, k) {
  // Tokens each sequence gains per verify pass of depth k (Leviathan et al. 2023): (1 − α^k)/(1 − α); k at α = 1.
  return (a === 1.0) ? k : (1.0 - a ** k) / (1.0 - a);
}
function batchLadder(ridge, pw, k, maxBatch) {
  // core.roofline.batch_ladder: B = 1, 2, 4, … to the first power of two at or past twice the ridge's batch.
  const top = Math.min(Math.max(2.0 * (ridge * pw / (2.0 * k)), 2.0), maxBatch);
  const out = [];
  for (let i = 0; i <= Math.ceil(Math.log2(top)); i++) { out.push(2 ** i); }
  return out;
}
function workload(p, B, k, S, P, a, pkv, gqa, prefill, maxBatch) {
  // core.step.workload: every step a result shows, on one profile (decode: E tokens per sequence per step,
  // Leviathan et al. 2023; prefill: the prompt).  Field names are core.step.Workload's.
  const E = expectedTokens(a, k);
  const [tokens, gained] = prefill ? [P, P] : [k, E];
  const at = (b, t, isPrefill) => step(p, b, t, S, gained, pkv, gqa, isPrefill);
  const ridge = p.peak_flop_per_s / p.bandwidth;
  const point = at(B, tokens, prefill);
  const held = heldBytes(p), free = p.capacity_bytes - held - p.reserve_bytes;
  const g = gqa ? "gqa" : "mha", whole = p.model_cache[g];
  return {
    point: point, ladder: batchLadder(ridge, p.bytes_per_weight, tokens, maxBatch).map((b) => at(b, tokens, prefill)),
    prefill: at(B, P, true), ttft: at(1, P, true), verify: at(B, k, false), plain: at(B, 1, false),
    expected_tokens: E, max_batch: Math.floor(Math.max(free, 0.0) / (p.stages * point.kv_bytes_per_sequence)),
    weight_bytes_held: held, params_held: mostLoaded(p.param_stages, 1.0),
    params_read: mostLoaded(p.param_stages, touchedFraction(p, B * tokens)), free_for_kv_bytes: free,
    kv_bytes_per_sequence: kvBytesPerSequence(whole, prefill ? P : S, pkv) + whole.state_bytes,
    kv_bytes_per_token: kvBytesPerToken(whole, pkv), kv_bytes_per_token_per_gpu: kvBytesPerToken(p.cache[g], pkv),
  };
}
function evaluate(C, s) {
  // core.scenario.evaluate in decode, of one workload: C.profiles[weight format] (StepProfile.to_json), C.bytes
  // (p_kv by KV format); s: batch, spec_k, context, weight_dtype, kv_dtype, gqa and, optionally, acceptance
  // (else C.acceptance).  Field names are ScenarioResult's.
  const p = C.profiles[s.weight_dtype], pkv = C.bytes[s.kv_dtype];
  const B = s.batch;
  const a = (s.acceptance === undefined) ? C.acceptance : s.acceptance;
  const w = workload(p, B, s.spec_k, s.context, C.prompt_len, a, pkv, s.gqa, false, C.max_batch);
  const pt = w.point, E = w.expected_tokens, ttft = w.ttft, prefill = w.prefill;
  const ridge = p.peak_flop_per_s / p.bandwidth;
  const free = w.free_for_kv_bytes, groups = p.groups, L = p.launch_s;
  return {
    weight_bytes_read: pt.weight_bytes_read, weight_bytes_held: w.weight_bytes_held, flop_per_step: pt.flop,
    // parameters, not bytes: the same count whatever the format
    weight_params_read: w.params_read, weight_params_held: w.params_held,
    flop_per_step_weights: pt.flop_weights, attention_flop_per_step: pt.attention_flop,
    arithmetic_intensity_weights: pt.arithmetic_intensity_weights,
    arithmetic_intensity_with_kv: pt.arithmetic_intensity_with_kv, ridge_point: ridge,
    attainable_flop_per_s_weights: pt.attainable_flop_per_s_weights,
    attainable_flop_per_s_with_kv: pt.attainable_flop_per_s_with_kv,
    peak_fraction_weights: pt.peak_fraction_weights, peak_fraction_with_kv: pt.peak_fraction_with_kv,
    bound: pt.bound, acceptance: a, expected_tokens_per_step: E,
    step_time_s_with_kv: pt.step_time_s_with_kv, step_time_s_weights: pt.step_time_s_weights,
    tokens_per_s_with_kv: pt.tokens_per_s_with_kv, tokens_per_s_weights: pt.tokens_per_s_weights,
    kv_bytes_per_token: w.kv_bytes_per_token, kv_bytes_per_sequence: w.kv_bytes_per_sequence,
    kv_bytes_per_token_per_gpu: w.kv_bytes_per_token_per_gpu, kv_bytes_per_sequence_per_gpu: pt.kv_bytes_per_sequence,
    kv_bytes: B * p.stages * pt.kv_bytes_per_sequence, kv_traffic_bytes: pt.kv_traffic_bytes,
    bytes_per_step: pt.bytes_moved, fits: pt.fits, max_batch: w.max_batch,
    free_for_kv_bytes: Math.max(free, 0.0), weights_shortfall_bytes: Math.max(-free, 0.0),
    memory_used_bytes: pt.memory_used_bytes, peak_flop_per_s: p.peak_flop_per_s, capacity_bytes: p.capacity_bytes,
    reserve_bytes: p.reserve_bytes, compute_time_s: pt.compute_time_s, memory_time_s: pt.memory_time_s,
    communication_time_s: pt.communication_time_s, gpu_time_s: pt.gpu_time_s, bytes_sent_per_step: pt.bytes_sent,
    launch_overhead_s: L, overhead_ceiling_flop_per_s: perLaunch(pt.flop, L), kernels_per_step: p.kernels_per_step,
    prefill_intensity: prefill.arithmetic_intensity_weights,
    prefill_attainable_flop_per_s: prefill.attainable_flop_per_s_weights,
    decode_intensity: pt.arithmetic_intensity_weights, decode_attainable_flop_per_s: pt.attainable_flop_per_s_weights,
    ttft_intensity: ttft.arithmetic_intensity_weights, ttft_attainable_flop_per_s: ttft.attainable_flop_per_s_weights,
    ttft_s: ttft.step_time_s_with_kv * p.stages, verify_step_time_s: pt.step_time_s_with_kv,
    tpot_s: pt.step_time_s_with_kv * p.stages / E,
    speculative_speedup: E * w.plain.step_time_s_with_kv / pt.step_time_s_with_kv,
    tokens_per_s_aggregate: pt.tokens_per_s_with_kv * groups,
    tokens_per_s_per_sequence: E / (p.stages * pt.step_time_s_with_kv),
    output_tokens_per_s_aggregate: groups * B * E / pt.step_time_s_with_kv,
    total_memory_bytes: pt.memory_used_bytes * p.gpus,
    ladder: w.ladder,
  };
}
