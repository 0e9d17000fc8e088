// One step of one GPU, in the browser: core/step.py's step() on a profile serialised by StepProfile.to_json(),
// and core/scenario.py's evaluate() composed of such steps.  The same formulas in the same order of operations;
// tests/parity/test_step_parity.py runs this file (in an embedded JavaScript engine, no browser) against core over
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
function capped(S, ...caps) {
  let out = S;
  for (const c of caps) { if (c !== null && c < out) { out = c; } }
  return out;
}
function fixedBytes(cache, pkv) { return cache.fixed[0] * pkv + cache.fixed[1]; }
function cacheBytes(cache, S, pkv, read) {
  // CacheProfile.bytes_per_sequence: what does not grow with S + Σ (elements·p_kv + own)·min(S, cap[, top k]).
  let bytes = fixedBytes(cache, pkv);
  for (const [e, own, cap, readCap] of cache.terms) {
    bytes += (e * pkv + own) * (read ? capped(S, cap, readCap) : capped(S, cap));
  }
  return bytes;
}
function kvBytesPerToken(cache, pkv) {
  let bytes = 0;
  for (const [e, own] of cache.terms) { bytes += e * pkv + own; }
  return bytes;
}
function decodeAttention(a, S, gqa) {
  // AttentionProfile.decode_flop: the per-token cost + Σ flop_per_key·min(S, cap), the terms by GQA.
  let flop = a.per_token;
  for (const [f, cap] of (gqa ? a.decode : a.decode_mha)) { flop += f * capped(S, cap); }
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
function heldBytes(st) { return st.weights[0] + st.weights[1]; }
function perLaunch(flop, L) { return L > 0 ? flop / L : Infinity; }
function stageStep(p, st, b, t, tokens, context, gained, pkv, gqa, prefill) {
  // core.step._stage_step: one pipeline stage's step at one batch size.
  const cache = st.cache[gqa ? "gqa" : "mha"];
  const perSeqAttention = prefill ? prefillAttention(st.attention, tokens) : tokens * decodeAttention(st.attention, context, gqa);
  const held = cacheBytes(cache, prefill ? tokens : context, pkv, false);
  const movedPerSeq = prefill ? held : cacheBytes(cache, context, pkv, true);
  const peak = p.peak_flop_per_s, bw = p.bandwidth, L = st.launch_s;
  const f = touchedFraction(p, t);
  const weight = st.weights[0] + st.weights[1] * f;
  const flopW = 2.0 * st.n_active_params * t;
  const attention = b * perSeqAttention;
  const flop = flopW + attention;
  const kv = b * movedPerSeq;
  const moved = weight + kv;
  const tc = flop / peak, tm = moved / bw;
  let perToken = 0, calls = 0;
  for (const c of st.collectives) { perToken += c.bytes_per_token; }
  for (const c of st.collectives) { calls += c.calls; }
  const sent = t * perToken;
  const comm = (p.link_bandwidth ? sent / p.link_bandwidth : 0.0 * sent) + calls * p.call_latency_s;
  const gpu = Math.max(tc, tm) + comm;
  const ts = Math.max(gpu, L);
  const tw = Math.max(Math.max(flopW / peak, weight / bw) + comm, L);
  const I = flopW / weight, Ikv = flop / moved;
  const att = Math.min(Math.min(peak, bw * I), perLaunch(flopW, L));
  const attKv = Math.min(Math.min(peak, bw * Ikv), perLaunch(flop, L));
  return {
    arithmetic_intensity_weights: I, arithmetic_intensity_with_kv: Ikv,
    attainable_flop_per_s_weights: att, attainable_flop_per_s_with_kv: attKv,
    peak_fraction_weights: att / peak, peak_fraction_with_kv: attKv / peak,
    flop: flop, flop_weights: flopW, attention_flop: attention, weight_bytes_read: weight,
    params_read: st.params[0] + st.params[1] * f, kv_traffic_bytes: kv, bytes_moved: moved,
    compute_time_s: tc, memory_time_s: tm, communication_time_s: comm, launch_time_s: L, gpu_time_s: gpu,
    step_time_s_with_kv: ts, step_time_s_weights: tw, bytes_sent: sent, tokens_per_s_with_kv: b * gained / ts,
    tokens_per_s_weights: b * gained / tw, bound: L > gpu ? "overhead" : Ikv < peak / bw ? "memory" : "compute",
    experts_touched_fraction: f, held: held,
  };
}
function memoryStage(p, S, pkv, gqa) {
  // core.step.memory_stage: the stage that holds the fewest sequences beside its weights (the fullest by weights
  // when a sequence holds nothing).
  const n = p.stages.length;
  if (n === 1) { return 0; }
  const ratios = p.stages.map((st) => {
    const room = p.capacity_bytes - heldBytes(st) - p.reserve_bytes;
    const kv = n * cacheBytes(st.cache[gqa ? "gqa" : "mha"], S, pkv, false);
    return kv > 0 ? room / kv : (room >= 0 ? Infinity : -Infinity);
  });
  if (ratios.every((r) => r === Infinity)) {
    let best = 0;
    p.stages.forEach((st, i) => { if (heldBytes(st) > heldBytes(p.stages[best])) { best = i; } });
    return best;
  }
  let low = 0;
  ratios.forEach((r, i) => { if (r < ratios[low]) { low = i; } });
  return low;
}
function step(p, b, tokens, context, gained, pkv, gqa, prefill) {
  // core.step.step at one batch size: the slowest stage's step, the memory of the stage that runs out first.
  // Field names are core.step.Step's.
  const t = b * tokens;
  const per = p.stages.map((st) => stageStep(p, st, b, t, tokens, context, gained, pkv, gqa, prefill));
  let slow = 0;
  per.forEach((x, i) => { if (x.step_time_s_with_kv > per[slow].step_time_s_with_kv) { slow = i; } });
  const m = memoryStage(p, prefill ? tokens : context, pkv, gqa);
  const held = per[m].held;
  const used = heldBytes(p.stages[m]) + p.stages.length * b * held + p.reserve_bytes;
  const out = {batch: b, stage: slow};
  for (const [k, v] of Object.entries(per[slow])) { if (k !== "held") { out[k] = v; } }
  out.kv_bytes_per_sequence = held;
  out.memory_used_bytes = used;
  out.fits = used <= p.capacity_bytes;
  return out;
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
function smallestFit(p, B, S, pkv, gqa, pw = p.bytes_per_weight) {
  // core.step.smallest_fit: the first split (fewest GPUs first) whose every GPU holds its weights at pw bytes each
  // (p's precision by default), B sequences of S tokens of KV for each PP micro-batch, and the reserve: [TP, PP],
  // or null.
  const g = gqa ? "gqa" : "mha";
  const fit = p.splits.find((sp) => sp.stages.every(([params, cache]) => params * pw + sp.pp * B *
    cacheBytes(cache[g], S, pkv, false) + p.reserve_bytes <= p.capacity_bytes));
  return fit === undefined ? null : [fit.tp, fit.pp];
}
// storedPw: core.step.workload's stored_bytes_per_weight (its stored_fit): the checkpoint's bytes per weight as
// stored, where it is smaller than the precision picked.
function workload(p, B, k, S, P, a, pkv, gqa, prefill, maxBatch, storedPw = null) {
  // core.step.workload: every step a result shows, on one profile (decode: E tokens per sequence per step,
  // Leviathan et al. 2023; prefill: the prompt).  Field names are core.step.Workload's.
  const E = expectedTokens(a, k);
  const [tokens, gained] = prefill ? [P, P] : [k, E];
  const held = prefill ? P : S, g = gqa ? "gqa" : "mha";
  const at = (b, t, isPrefill) => step(p, b, t, S, gained, pkv, gqa, isPrefill);
  const ridge = p.peak_flop_per_s / p.bandwidth;
  const memory = memoryStage(p, held, pkv, gqa), m = p.stages[memory];
  const room = p.capacity_bytes - heldBytes(m) - p.reserve_bytes;
  const kv = p.stages.length * cacheBytes(m.cache[g], held, pkv, false);
  const fit = smallestFit(p, B, held, pkv, gqa);
  let perGpu = 0;
  for (const st of p.stages) { perGpu = Math.max(perGpu, kvBytesPerToken(st.cache[g], pkv)); }
  return {
    point: at(B, tokens, prefill),
    ladder: batchLadder(ridge, p.bytes_per_weight, tokens, maxBatch).map((b) => at(b, tokens, prefill)),
    prefill: at(B, P, true), ttft: at(1, P, true), verify: at(B, k, false), plain: at(B, 1, false),
    expected_tokens: E, max_batch: kv > 0 ? Math.floor(Math.max(room, 0.0) / kv) : maxBatch, memory_stage: memory,
    weight_bytes_held: heldBytes(m), params_held: m.params[0] + m.params[1], free_for_kv_bytes: room,
    kv_bytes_per_sequence: cacheBytes(p.model_cache[g], held, pkv, false),
    kv_bytes_per_token: kvBytesPerToken(p.model_cache[g], pkv), kv_bytes_per_token_per_gpu: perGpu,
    smallest_fit: fit,
    stored_fit: storedPw === null || room >= 0 ? null : smallestFit(p, B, held, pkv, gqa, storedPw),
  };
}
function evaluate(C, s) {
  // core.scenario.evaluate in decode, of one workload: C.profiles[weight format] (StepProfile.to_json), C.bytes
  // (p_kv by KV format); s: batch, spec_k, context, weight_dtype, kv_dtype, gqa and, optionally, acceptance
  // (else C.acceptance).  Field names are ScenarioResult's.
  // The splits the smallest-fit search tries do not depend on the weight format: sent once, as C.splits.
  const p = C.profiles[s.weight_dtype], pkv = C.bytes[s.kv_dtype];
  if (p.splits === undefined) { p.splits = C.splits; }
  const B = s.batch;
  const a = (s.acceptance === undefined) ? C.acceptance : s.acceptance;
  // The checkpoint's own fit is searched where the warning names it: a stored format smaller than the pick
  // (core.scenario.stored_hint, C.stored_hint).
  const storedPw = C.stored_hint[s.weight_dtype] ? C.bytes_per_weight.stored : null;
  const w = workload(p, B, s.spec_k, s.context, C.prompt_len, a, pkv, s.gqa, false, C.max_batch, storedPw);
  const stored = w.stored_fit;  // searched only where the weights alone do not fit
  const pt = w.point, E = w.expected_tokens, ttft = w.ttft, prefill = w.prefill;
  const ridge = p.peak_flop_per_s / p.bandwidth;
  const free = w.free_for_kv_bytes, groups = p.groups, slow = p.stages[pt.stage], L = slow.launch_s;
  const pp = p.stages.length;
  const price = C.gpu_hour_price === undefined ? 0.0 : C.gpu_hour_price;
  const perMillion = (tps) => (price > 0 ? price * p.gpus / 3600.0 / tps * 1e6 : null);
  return {
    weight_bytes_read: pt.weight_bytes_read, weight_bytes_held: w.weight_bytes_held, flop_per_step: pt.flop,
    // parameters, not bytes: the same count whatever the format
    weight_params_read: pt.params_read, weight_params_held: w.params_held,
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
    kv_bytes: B * (pp * pt.kv_bytes_per_sequence), kv_traffic_bytes: pt.kv_traffic_bytes,
    bytes_per_step: pt.bytes_moved, fits: pt.fits, max_batch: w.max_batch, memory_stage: w.memory_stage,
    slowest_stage: pt.stage,
    free_for_kv_bytes: Math.max(free, 0.0), weights_shortfall_bytes: Math.max(-free, 0.0),
    memory_used_bytes: pt.memory_used_bytes, peak_flop_per_s: p.peak_flop_per_s, capacity_bytes: p.capacity_bytes,
    reserve_bytes: p.reserve_bytes, compute_time_s: pt.compute_time_s, memory_time_s: pt.memory_time_s,
    communication_time_s: pt.communication_time_s, gpu_time_s: pt.gpu_time_s, bytes_sent_per_step: pt.bytes_sent,
    launch_overhead_s: L, overhead_ceiling_flop_per_s: perLaunch(pt.flop, L), kernels_per_step: slow.kernels_per_step,
    prefill_intensity: prefill.arithmetic_intensity_weights,
    prefill_attainable_flop_per_s: prefill.attainable_flop_per_s_weights,
    decode_intensity: pt.arithmetic_intensity_weights, decode_attainable_flop_per_s: pt.attainable_flop_per_s_weights,
    ttft_intensity: ttft.arithmetic_intensity_weights, ttft_attainable_flop_per_s: ttft.attainable_flop_per_s_weights,
    ttft_s: ttft.step_time_s_with_kv * pp, verify_step_time_s: pt.step_time_s_with_kv,
    tpot_s: pt.step_time_s_with_kv * pp / E,
    speculative_speedup: E * w.plain.step_time_s_with_kv / pt.step_time_s_with_kv,
    tokens_per_s_aggregate: pt.tokens_per_s_with_kv * groups,
    tokens_per_s_per_sequence: E / (pp * pt.step_time_s_with_kv),
    output_tokens_per_s_aggregate: groups * B * E / pt.step_time_s_with_kv,
    prompt_tokens_per_s_aggregate: groups * B * C.prompt_len / prefill.step_time_s_with_kv,
    sequences_in_flight: Math.trunc(B * pp * groups),
    // FLOP per byte a GPU sends (null when it sends nothing) and the interconnect's ridge P_peak / link
    communication_intensity: pt.bytes_sent > 0 ? pt.flop / pt.bytes_sent : null,
    interconnect_ridge_point: p.link_bandwidth ? p.peak_flop_per_s / p.link_bandwidth : null,
    // what a token costs at the page's price per GPU-hour (fixed when it is written; null without one)
    gpu_hour_price: price,
    cost_per_million_output_tokens: perMillion(groups * B * E / pt.step_time_s_with_kv),
    cost_per_million_prompt_tokens: perMillion(groups * B * C.prompt_len / prefill.step_time_s_with_kv),
    total_memory_bytes: pt.memory_used_bytes * p.gpus,
    suggested_tp: w.smallest_fit === null ? null : w.smallest_fit[0],
    suggested_pp: w.smallest_fit === null ? null : w.smallest_fit[1],
    stored_tp: stored === null ? null : stored[0], stored_pp: stored === null ? null : stored[1],
    ladder: w.ladder,
  };
}
