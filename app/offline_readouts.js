// The offline page's readouts and memory bar, written in the browser as the served lab writes them:
// derivation() is core/explain.py's derivation for one decode step at the page's split (labels and formulas come
// from Python in C.labels / C.formulas, the split, fixed when the page was written, in C.split, the values from
// evaluate()), readoutsHtml() is app/readouts.py's readouts_html, memoryHtml() app/memory_view.py's memory_html and
// communicationLines() app/roofline_view.py's communication_lines.  tests/browser/test_standalone.py compares
// every string with the Python one, on one GPU and split.  Needs app/units.js.
// core/explain.py _sent_parts: the bytes one GPU sends, kind by kind, summed, where more than one kind is sent.
function sentParts(collectives, X, kE, tokens, sent) {
  if (collectives.length < 2) { return ""; }
  const by = {};
  for (const c of collectives) { by[c.name] = c; }
  const first = by["TP all-reduce"] || collectives[0];
  const msg = first.message_bytes_per_token * (first.name === "TP all-reduce" ? 1 : X.tp) * tokens;
  const parts = [];
  if (by["TP all-reduce"]) {
    parts.push("2 × " + (by["TP all-reduce"].calls / 2).toFixed(0) + " × 2 × (" + X.tp + " − 1)/" + X.tp + " × " +
      pyFixed(msg, 0) + " bytes (TP: two all-reduces a layer)");
  }
  if (by["EP all-to-all"]) {
    parts.push("2 × " + (by["EP all-to-all"].calls / 2).toFixed(0) + " × " + kE + " × " + pyFixed(msg, 0) +
      " bytes × (" + X.ep + " − 1)/" + X.ep + " / " + X.tp + " (EP: dispatch and combine a MoE layer, to k_e " +
      "experts, the other groups' share, in TP slices)");
  }
  if (by["PP send"]) { parts.push(pyFixed(msg, 0) + " bytes / " + X.tp + " (PP: one send to the next stage)"); }
  return parts.join(" + ") + " = " + pyFixed(sent, 0) + " bytes; ";
}
// core/explain.py _fpb: whole FLOP/byte from 10,000.
function _fpb(x) { return fmtIntensity(x) + " FLOP/byte"; }
// core/explain.py _quotient_terms: whole FLOP and bytes where the quotient is printed whole
function quotientTerms(flop, sent, intensity) {
  return Math.abs(intensity) < 1e4 ? fmtFlop(flop) + " / " + fmtBytesSmall(sent)
    : pyFixed(flop, 0) + " FLOP / " + pyFixed(sent, 0) + " bytes";
}
function _pct(x) { return fmtSig(100 * x, 3) + " %"; }
// core/explain.py _unfit_value and _unfit_work: a tokens/s of a workload that does not fit in memory says so
function unfitValue(r) { return r.fits ? "" : " (if it fit)"; }
function unfitWork(r) { return r.fits ? "" : "; it does not fit in memory (Step 5), so no engine runs it as set"; }
function _count(x) { return Number.isInteger(x) ? pyFixed(x, 0) : pyFixed(x, 2); }
function attentionWork(C, s, r) {
  // core/explain.py _decode_attention_work: B·k × (Σ FLOP per key over the layers × min(S, cap) + fixed FLOP per
  // token), the terms by GQA (AttentionProfile.decode_terms)
  const a = C.profiles[s.weight_dtype].stages[r.slowest_stage].attention;
  const parts = [];
  for (const [flop, cap] of (s.gqa ? a.decode : a.decode_mha)) {
    const keys = cap === null ? s.context : Math.min(s.context, cap);
    parts.push(_count(flop) + " FLOP per key over the layers × " + pyInt(keys) + " keys" +
      (cap !== null && cap < s.context ? " (S = " + pyInt(s.context) + " capped at " + pyInt(cap) + ")" : ""));
  }
  if (a.per_token) { parts.push(_count(a.per_token) + " FLOP per token of mixers that do not grow with S"); }
  const sum = parts.length === 1 ? parts[0] : "(" + parts.join(" + ") + ")";
  return "B·k = " + pyInt(s.batch * s.spec_k) + " × " + (parts.length ? sum : "0");
}
function launchWork(C, r) {
  // core/explain.py _launch_work: kernels × latency, or with CUDA graphs latency + kernels × node gap
  return (C.cuda_graphs ? fmtSeconds(C.launch_latency_s) + " + " + pyInt(r.kernels_per_step) + " × " +
    fmtSeconds(C.graph_gap_s) : pyInt(r.kernels_per_step) + " × " + fmtSeconds(C.launch_latency_s)) + " = " +
    fmtSeconds(r.launch_overhead_s);
}
function derivation(C, s, r) {
  // {key: {key, label, formula, work, value}} for the keys in C.readout_keys
  const wd = s.weight_dtype, stored = wd === "stored", B = s.batch, k = s.spec_k;
  const F = s.gqa ? C.formulas[wd] : Object.assign({}, C.formulas[wd], C.formulas_mha[wd]);
  // Several GPUs: the quantities that are one GPU's share say so (core/explain.py's split and per_gpu_note).
  const X = C.split, split = X.gpus_per_replica > 1, pp = X.pp;
  const perGpuNote = split ? " (one GPU of " + pyInt(X.gpus_per_replica) + (X.replicas > 1 ? " in each replica" : "") +
    (pp > 1 ? ", of stage " + (r.slowest_stage + 1) + " of " + pp + ", the slowest" : "") + ": its share, see Step 7)"
    : "";
  const peak = fmtFlopsRate(r.peak_flop_per_s), bw = fmtBandwidth(C.bandwidth);
  const att = fmtFlopsRate(r.attainable_flop_per_s_weights), attKv = fmtFlopsRate(r.attainable_flop_per_s_with_kv);
  const gained = pyG(r.expected_tokens_per_step, 3);
  const pw = C.bytes_per_weight[wd];
  const nRead = r.weight_params_read;  // a count of parameters, whatever the format
  const kvShare = r.kv_traffic_bytes / r.bytes_per_step;
  const gb = (x) => fmtBytesGb(x), gib = (x) => fmtBytesGib(x);
  const read = gb(r.weight_bytes_read) + " (" + gib(r.weight_bytes_read);
  const meanStored = "× " + pyG(r.weight_bytes_read / nRead) + " bytes (their mean as stored)";
  const w = {};
  // Step 1: weight traffic; split, the slowest stage's GPU's read beside its own holdings
  const slowest = C.profiles[wd].stages[r.slowest_stage];
  w.weights = [
    C.moe ? pyFixed(nRead, 0) + " " + (split ? "of the " + pyFixed(slowest.params[0] + slowest.params[1], 0) +
      " parameters this GPU holds (" + pyInt(C.n_params) + " in the whole model; " : "of " + pyInt(C.n_params) +
      " parameters (") + "the experts " + pyInt(B * k) + (B * k === 1 ? " token touches) " : " tokens touch) ") +
      (stored && split ? meanStored : stored ? "as stored" : "× " + pyG(pw) + " bytes") + " = " + read +
      (split ? " on this GPU); this GPU holds " + gib(heldBytes(slowest)) + " of the model's " +
        gib(C.n_params * pw) : "); memory holds all " + gib(r.weight_bytes_held))
    : stored && split ? pyFixed(nRead, 0) + " weights on this GPU (of " + pyInt(C.n_params) + " in the whole model) " +
      meanStored + " = " + read + ")" + perGpuNote
    : stored ? pyInt(C.n_params) + " weights as stored, " + pyG(pw, 4) + " bytes each on average = " + read + ")"
    : split ? pyFixed(nRead, 0) + " parameters on this GPU × " + pyG(pw) + " bytes = " + read + ")" + perGpuNote
    : pyInt(C.n_params) + " × " + pyG(pw) + " bytes = " + read + ")",
    pyFixed(r.weight_bytes_read / 1e9, 2) + " GB (" + pyFixed(r.weight_bytes_read / GIB, 2) + " GiB)"];
  // Step 2: arithmetic and the roofline.  Split, both sides of the intensity are one GPU's: its share of N_active
  // (of the slowest stage, which the levers can move under PP) over its N_read.
  const nActiveGpu = r.flop_per_step_weights / (2 * B * k);
  const nActiveShown = split ? pyFixed(nActiveGpu, 0) : pyInt(C.n_active);
  const intensityWork = stored ? "2 × " + nActiveShown + " × " + B + " × " + pyInt(k) + " / " +
      gb(r.weight_bytes_read)
    : C.moe ? "2 × " + B + " × " + pyInt(k) + " × " + nActiveShown + " / (" + pyFixed(nRead, 0) + " × " +
      pyG(pw) + " bytes)"
    : "2 × " + B + " × " + pyInt(k) + " / " + pyG(pw) + " bytes";
  w.flops = ["2 × " + pyFixed(split ? nActiveGpu : C.n_active, 0) + " × " + B + " × " + pyInt(k) + " = " +
    fmtFlop(r.flop_per_step_weights) + " (the articles' weights-only count) + " + fmtFlop(r.attention_flop_per_step) +
    (C.indexer ? " of attention and its indexer (" : " of attention (") + attentionWork(C, s, r) + ") = " +
    fmtFlop(r.flop_per_step), fmtFlop(r.flop_per_step)];
  w.roof = [peak + " dense (" + C.roof_reason[wd] + ")", peak + (C.roof_mix[wd] ? " (" + C.roof_mix[wd] + ")" : "")];
  w["compute-time"] = [fmtFlop(r.flop_per_step) + " / " + peak + " = " + fmtSeconds(r.flop_per_step / r.peak_flop_per_s),
    fmtSeconds(r.flop_per_step / r.peak_flop_per_s)];
  w.intensity = [intensityWork + " = " + _fpb(r.arithmetic_intensity_weights) + C.p_note[wd],
    _fpb(r.arithmetic_intensity_weights)];
  w.ridge = [peak + " / " + bw + " = " + C.ridge[wd][0] + " FLOP/byte", C.ridge[wd][1] + " FLOP/byte"];
  const launch = fmtSeconds(r.launch_overhead_s), gpuTime = fmtSeconds(r.gpu_time_s);
  // Split, the work goes on to what the step sustains with its communication (core/explain.py _sustained).
  // What a step split over GPUs sustains with its communication (core/explain.py _held).
  const held = (flop, stepS, which) => fmtFlop(flop) + " / " + fmtSeconds(stepS) + " (" + which +
    fmtSeconds(r.communication_time_s) + " of it communication) = " + fmtFlopsRate(flop / stepS) + " = " +
    _pct(flop / stepS / r.peak_flop_per_s) + " of peak";
  const sustained = (flop, stepS, which) => split ? "; with communication " + held(flop, stepS, which) : "";
  w.attainable = ["min(" + peak + ", " + bw + " × " + _fpb(r.arithmetic_intensity_weights) + ", " +
    fmtFlop(r.flop_per_step_weights) + " / " + launch + ") = " + att + " = " + _pct(r.peak_fraction_weights) +
    " of peak" + sustained(r.flop_per_step_weights, r.step_time_s_weights, "ignoring KV, "), att];
  w["peak-fraction"] = [att + " / " + peak + " = " + _pct(r.peak_fraction_weights), _pct(r.peak_fraction_weights)];
  w["tokens-no-kv"] = [B + " × " + rateTerms(B, r.expected_tokens_per_step, r.step_time_s_weights).join(" / ") + " = " +
    fmtRate(r.tokens_per_s_weights) + " tokens/s", fmtRate(r.tokens_per_s_weights) + " tokens/s"];
  // Step 3: KV cache
  w["kv-token"] = [C.kv_formula[s.kv_dtype][s.gqa ? 1 : 0] + " = " + fmtBytesSmall(r.kv_bytes_per_token),
    fmtSigWhole(r.kv_bytes_per_token / KIB) + " KiB"];
  // core/explain.py: the digits that make the per-sequence GiB multiply out, and the bytes per step add up
  const seq = (split ? r.kv_bytes_per_sequence_per_gpu : r.kv_bytes_per_sequence) / GIB;
  const seqDigits = factorDigits(seq, s.batch * (split ? pp : 1), r.kv_bytes / GIB);
  const stepDigits = sumDigits([r.weight_bytes_read / 1e9, r.kv_traffic_bytes / 1e9], r.bytes_per_step / 1e9, 2);
  w["kv-total"] = [(split ? pyFixed(seq, seqDigits) + " GiB × " + B + " × " + pp
    : pyFixed(seq, seqDigits) + " GiB × " + B) + " = " + pyFixed(r.kv_bytes / GIB, 2) +
    " GiB = " + pyFixed(r.kv_bytes / 1e9, 2) + " GB at S = " + pyInt(s.context), pyFixed(r.kv_bytes / GIB, 2) + " GiB"];
  // Step 4: what one step moves
  w["bytes-step"] = [fmtBytesGb(r.weight_bytes_read, stepDigits) + " + " + fmtBytesGb(r.kv_traffic_bytes, stepDigits) +
    " = " + fmtBytesGb(r.bytes_per_step, stepDigits),
    gb(r.bytes_per_step)];
  const kvGb = r.kv_traffic_bytes / 1e9;
  const kvDigits = kvGb > 0 ? Math.max(2, 2 - Math.floor(Math.log10(kvGb))) : 2;
  const share = (kvShare >= 0.01 || kvShare === 0 ? pyFixed(100 * kvShare, 0, false) : fmtSig(100 * kvShare, 2)) + " %";
  w["kv-share"] = [fmtBytesGb(r.kv_traffic_bytes, kvDigits) + " / " + fmtBytesGb(r.bytes_per_step, 2) + " = " + share,
    share];
  w["intensity-kv"] = [fmtFlop(r.flop_per_step) + " / (" + pyFixed(r.weight_bytes_read / 1e9, 2) + " GB + " +
    pyFixed(r.kv_traffic_bytes / 1e9, 2) + " GB) = " + _fpb(r.arithmetic_intensity_with_kv),
    _fpb(r.arithmetic_intensity_with_kv)];
  w["attainable-kv"] = ["min(" + peak + ", " + bw + " × " + _fpb(r.arithmetic_intensity_with_kv) + ", " +
    fmtFlop(r.flop_per_step) + " / " + launch + ") = " + attKv + " = " + _pct(r.peak_fraction_with_kv) + " of peak",
    attKv + " (" + _pct(r.peak_fraction_with_kv) + ")"];
  // Split: what the step counting KV reads sustains with its communication (core/explain.py _with_communication).
  const heldRate = r.flop_per_step / r.step_time_s_with_kv;
  w["attainable-comm"] = [held(r.flop_per_step, r.step_time_s_with_kv, ""),
    fmtFlopsRate(heldRate) + " (" + _pct(heldRate / r.peak_flop_per_s) + ")"];
  const rooflineBound = r.arithmetic_intensity_with_kv < r.ridge_point ? "memory" : "compute";
  const byIntensity = _fpb(r.arithmetic_intensity_with_kv) + " " + (rooflineBound === "memory" ? "<" : "≥") + " " +
    pyFixed(r.ridge_point, 1) + " FLOP/byte";
  const overheadBound = r.bound === "overhead";
  // core/explain.py launches_bind_weights_only: the launches outlast the weights-only step, not the whole step's
  const weightsWait = !overheadBound && r.step_time_s_weights === r.launch_overhead_s;
  w.bound = [overheadBound ? "launches " + launch + " > " + gpuTime + " of GPU time: overhead-bound (the roofline " +
    "alone: " + byIntensity + ", " + rooflineBound + "-bound)"
    : byIntensity + "; launches " + launch + " ≤ " + gpuTime + " of GPU time", r.bound + "-bound" +
    (r.bound === "memory" && r.arithmetic_intensity_weights >= r.ridge_point
      ? " by KV reads" : "") + (weightsWait ? "; weights alone: overhead" : "")];
  // core/explain.py _kernels_work: a Llama-style block's kernels per layer, and those outside the layers
  const stageLayers = C.profiles[s.weight_dtype].stages[r.slowest_stage].layers, outside = C.kernels_outside_layers;
  w.overhead = [pyInt(r.kernels_per_step) + " kernels (" + pyInt(stageLayers) + " layers" + (pp > 1 ? " on this GPU" : "") +
    " × " + C.kernels_per_layer + " + " + outside +
    ": a Llama-style block's kernels, whatever each layer's kind)" +
    " → " + launchWork(C, r) + " against " + gpuTime + " of GPU time (" + fmtSeconds(r.compute_time_s) + " of compute, " +
    fmtSeconds(r.memory_time_s) + " of memory" +
    (split ? ", + " + fmtSeconds(r.communication_time_s) + " of communication" : "") + "): " +
    (overheadBound ? "the launches set the step" : weightsWait
      ? "hidden under the GPU's work counting KV reads, not under the weights-only step's: they set the weights-only " +
        "figures" : "hidden under the GPU's work") + "; overhead ceiling " +
    fmtFlopsRate(r.overhead_ceiling_flop_per_s), launch + " (" + (overheadBound ? "overhead-bound"
    : weightsWait ? "binds the weights-only figures" : "not binding") + ")"];
  w["step-time"] = [(split ? "max(" : "") + "max(" + fmtFlop(r.flop_per_step) + " / " + peak + ", " +
    pyFixed(r.bytes_per_step / 1e9, 2) + " GB / " + bw +
    (split ? ") + " + fmtSeconds(r.communication_time_s) + ", " + launch + ")" : ", " + launch + ")") + " = " +
    fmtSeconds(r.step_time_s_with_kv), fmtSeconds(r.step_time_s_with_kv)];
  w.tokens = [B + " × " + rateTerms(B, r.expected_tokens_per_step, r.step_time_s_with_kv).join(" / ") + " = " +
    fmtRate(r.tokens_per_s_with_kv) +
    " tokens/s" + unfitWork(r), fmtRate(r.tokens_per_s_with_kv) + " tokens/s" + unfitValue(r)];
  // Step 5: what fits
  // What one sequence holds on the GPU that runs out first: its stage's share for each of PP micro-batches.
  w["max-batch"] = [floorWork(r.free_for_kv_bytes / GIB, r.kv_bytes_per_sequence_per_gpu * pp / GIB, r.max_batch),
    pyInt(r.max_batch)];
  w.fits = [pyFixed(r.weight_bytes_held / GIB, 2) + " + " + pyFixed(r.kv_bytes / GIB, 2) + " + " +
    pyFixed(C.reserve / GIB, 2) + " = " + pyFixed(r.memory_used_bytes / GIB, 2) + " GiB " + (r.fits ? "≤" : ">") +
    " " + pyFixed(C.capacity / GIB, 2) + " GiB", (C.approximate ? "≈ " : "") + (r.fits ? "yes" : "NO")];
  // Step 6: latency
  w.ttft = ["prefill I (weights) = " + _fpb(r.ttft_intensity) + " → " + fmtSeconds(r.ttft_s), fmtSeconds(r.ttft_s)];
  w.tpot = ["decode I = " + _fpb(r.decode_intensity) + " → " + fmtSeconds(r.verify_step_time_s) + " per step " +
    (pp > 1 ? "× " + pp + " (a token crosses every stage) " : "") + "/ E = " + gained + (gained === "1" ? " token = " : " tokens = ") +
    fmtSeconds(r.tpot_s), fmtSeconds(r.tpot_s)];
  const a = pyFixed(r.acceptance, 2, false);
  w.spec = [(r.acceptance < 1 ? "(1 − " + a + "^" + k + ") / (1 − " + a + ") = " : "α = 1: every draft accepted, E = k = ")
    + pyFixed(r.expected_tokens_per_step, 2, false) + "; " + pyFixed(r.speculative_speedup, 2, false) +
    "× the tokens/s of k = 1" + (k > 1 ? "; the draft model's own steps and weights are not counted" : ""),
    pyFixed(r.expected_tokens_per_step, 2, false)];
  manyGpus(C, s, r, w);
  const out = {};
  for (const key of C.readout_keys) {
    out[key] = {key: key, label: C.labels[key], formula: F[key], work: w[key][0], value: w[key][1]};
  }
  return out;
}
function warnings(C, s, r) {
  // core.scenario's warnings: the split's (fixed, from Python), then what the levers make doubtful, the smallest
  // split that would fit named from evaluate()'s search.
  const out = [...C.split_warnings];
  if (r.weights_shortfall_bytes > 0) {
    // core.scenario.fit_words; the checkpoint's own fit (ScenarioResult.stored_tp, stored_pp)
    const fitWords = (fit, how) => fit === null ? " (no split up to the node and 1,024 GPUs fits " + how + ")" :
      " (TP = " + fit[0] + (fit[1] > 1 ? ", PP = " + fit[1] : "") + " fits " + how + ")";
    const wd = s.weight_dtype, split = C.split.gpus_per_replica > 1;
    const stored = C.stored_hint[wd] && C.stored_hint[wd] + fitWords(r.stored_tp === null ? null
      : [r.stored_tp, r.stored_pp], "as stored");
    out.push("the weights alone (" + pyFixed(r.weight_bytes_held / GIB, 1) + " GiB" + (split ? " per GPU" : "") +
      ") and the reserve do not fit in " + pyFixed(C.capacity / GIB, 1) + " GiB: this needs " +
      (split ? "more GPUs" : "tensor parallelism over several GPUs") + " or smaller weights" +
      fitWords(r.suggested_tp === null ? null : [r.suggested_tp, r.suggested_pp],
        wd === "stored" ? "as stored" : "in " + C.weight_labels[wd]) + stored);
  }
  if (C.max_context && s.context > C.max_context) {
    out.push("S = " + pyInt(s.context) + " tokens is beyond " + C.model_name + "'s trained context of " +
      pyInt(C.max_context));
  }
  return out;
}
// core/explain.py NOT_THE_MODELS: readouts a model's config cannot change, never marked approximate.
const NOT_THE_MODELS = ["ridge", "roof", "capacity", "gpus", "pipeline", "spec"];
function readoutsHtml(rows, showWork, notes, approximate = false) {
  // app/readouts.py readouts_html: a model with keys the lab did not model says "≈" at each value it changes
  const shown = (x) => approximate && !NOT_THE_MODELS.includes(x.key) && !x.value.startsWith("≈") &&
    /[1-9]/.test(x.value) ? "≈ " + x.value : x.value;  // not "no price given", "0 µs"
  const items = rows.map((x) => '<div class="ro" data-key="' + x.key + '"><div class="line"><span class="q">' +
    escHtml(x.label) + '</span><span class="v" data-readout="' + x.key + '">' + escHtml(shown(x)) + "</span></div>" +
    (showWork ? '<div class="f">' + escHtml(x.formula) + '</div><div class="w" data-work="' + x.key + '">' +
      escHtml(x.work) + "</div>" : "") + "</div>").join("");
  const warn = notes.map((n) => '<div class="warn">⚠ ' + escHtml(n) + "</div>").join("");
  return '<div class="readouts">' + items + "</div>" + warn;
}
function memoryHtml(C, s, r) {
  // app/memory_view.py memory_html: one GPU's bar (the stage that runs out first), named when split
  const X = C.split, cap = C.capacity / GIB, used = r.memory_used_bytes / GIB;
  const scale = 100.0 / (Math.max(cap, used) * 1.04);
  const sizes = [r.weight_bytes_held, r.kv_bytes, C.reserve];
  const d = sumDigits(sizes.map((b) => b / GIB), used);  // the parts add to the total as printed
  let left = 0.0;
  const segs = C.memory_parts.map(([name, colour], i) => {
    const g = sizes[i] / GIB, width = g * scale;
    const text = width >= C.memory_min_label_percent ? "<span>" + name + " " + pyFixed(g, d) + " GiB</span>" : "";
    const seg = '<div class="mem-seg" data-part="' + name + '" style="left:' + pyFixed(left, 3, false) + "%;width:" +
      pyFixed(width, 3, false) + "%;background:" + colour + '" title="' + name + ": " + pyFixed(g, Math.max(d, 2)) + ' GiB">' +
      text + "</div>";
    left += width;
    return seg;
  });
  const [fit, cls] = r.fits ? ["fits", "fits"] : ["DOES NOT FIT", "nofit"];
  const verdict = C.approximate ? "≈ " + fit + " (approximate)" : fit;  // a config key the lab does not model
  const legend = C.memory_parts.map(([n, c]) => '<i style="background:' + c + '"></i>' + escHtml(n)).join("");
  const perGpu = X.gpus_per_replica > 1 ? " per GPU (1 of " + pyInt(X.gpus_per_replica) +
    (X.replicas > 1 ? " in each of " + pyInt(X.replicas) + " replicas" : "") + ", TP = " + pyInt(X.tp) + ", PP = " +
    pyInt(X.pp) + (X.ep > 1 ? ", EP = " + pyInt(X.ep) : "") +
    (X.pp > 1 ? "; stage " + (r.memory_stage + 1) + ", which runs out first" : "") + ")" : "";
  return '<div class="mem-title ' + cls + '" data-readout="memory" data-announce-key="memory" data-announce="' +
    (C.approximate ? "Approximately: " : "") + C.memory_said[r.fits ? 1 : 0] + '">Memory' + perGpu + ": " + pyFixed(used, d) +
    " GiB of " +
    pyFixed(cap, 1) + " GiB → " + verdict + " &nbsp;(largest batch at S = " + pyInt(s.context) + ": " +
    pyInt(r.max_batch) + ")</div>" +
    (C.approximate ? '<div class="warn approx" data-readout="memory-approximate">' + escHtml(C.approximate) +
      "</div>" : "") + '<div class="mem-track">' + segs.join("") + '<div class="mem-cap" style="left:' +
    pyFixed(cap * scale, 3, false) + '%"></div></div>' + '<div class="mem-legend">' + legend +
    '<b style="margin-left:10px">┃</b> capacity ' + pyFixed(cap, 1) + " GiB " +
    '<span style="margin-left:14px;white-space:nowrap">(GiB = 2^30 bytes)</span></div>';
}
function floorWork(freeGib, seqGib, n) {
  // core/explain.py _floor_work: as many digits as make the printed quotient floor to n.
  let free = "", seq = "";
  for (let digits = 2; digits < 8; digits++) {
    free = pyFixed(freeGib, digits); seq = fmtSig(seqGib, digits + 2);
    if (seqGib === 0 || Math.floor(Number(free.replace(/,/g, "")) / Number(seq.replace(/,/g, ""))) === n) { break; }
  }
  return "floor(" + free + " GiB / " + seq + " GiB) = " + pyInt(n);
}
function communicationLines(C, s, r) {
  // app/roofline_view.py communication_lines, after a newline: the chart title's lines for a step that sends
  // between GPUs ("" when it sends nothing).
  const sent = r.bytes_sent_per_step;
  if (!(sent > 0)) { return ""; }
  const X = C.split, link = C.profiles[s.weight_dtype].link_bandwidth;
  const share = 100 * r.communication_time_s / r.step_time_s_with_kv;
  const levels = "TP = " + pyInt(X.tp) + (X.pp > 1 ? ", PP = " + pyInt(X.pp) : "") +
    (X.ep > 1 ? ", EP = " + pyInt(X.ep) : "");
  const who = X.replicas > 1 ? "per GPU: 1 of " + pyInt(X.gpus_per_replica) + " (" + levels + ") in each of " +
    pyInt(X.replicas) + " replicas\n" : "per GPU of " + pyInt(X.gpus_per_replica) + " (" + levels + "): ";
  const ridge = link ? " (link ridge P_peak/link: " + fmtSig(r.peak_flop_per_s / link) + ")" : "";
  const took = r.bound === "overhead" ? ", under " + fmtSig(r.step_time_s_with_kv * 1e3, 3) + " ms of launches"
    : " = " + fmtSig(share, 2) + " % of the step";
  return "\n" + who + "communication " + fmtSig(r.communication_time_s * 1e3, 3) + " ms" + took + "\nits I = " +
    fmtIntensity(r.flop_per_step / sent) + " FLOP per byte sent" + ridge;
}

function manyGpus(C, s, r, w) {
  // core/explain.py _many_gpus (Step 7) into w: the split is the page's (C.split), the levers move the rest.
  const X = C.split, p = C.profiles[s.weight_dtype], fmtS = fmtSeconds;
  w.gpus = [X.tp + " × " + X.pp + " × " + X.ep + " × " + X.replicas + " = " + pyInt(X.gpus_total) + " (" +
    C.interconnect + ")", X.replicas > 1 ? pyInt(X.gpus_total) + " (" + pyInt(X.replicas) + " replicas × " +
    pyInt(X.gpus_per_replica) + ")" : pyInt(X.gpus_total)];
  // _weights_per_gpu: a GPU of the stage that runs out of memory first
  const st = C.stage_parts[r.memory_stage], [wEmb, wHead, wRest, wExp] = C.weight_parts[s.weight_dtype];
  const held = [[st.embedding, wEmb], [st.head, wHead], [st.split, wRest], [st.experts, wExp]].filter(([n]) => n)
    .map(([n, x]) => pyInt(n) + " × " + pyG(x)).join(" + ");
  const where = X.pp > 1 ? "stage " + (st.stage + 1) + " of " + X.pp + ", layers " + (st.first + 1) + "–" +
    (st.first + st.layers) + " of " + C.n_layers : "all " + C.n_layers + " layers";
  w["weights-gpu"] = [where + ": (" + held + ") bytes / " + X.tp + " + " + pyInt(st.replicated) + " × " + pyG(wRest) +
    " bytes = " + fmtBytesGib(r.weight_bytes_held) + " of the model's " +
    fmtBytesGib(C.n_params * C.bytes_per_weight[s.weight_dtype]) + (C.moe ? "; " + pyInt(st.experts_per_layer) +
      " routed experts per MoE layer on this GPU's group (ceil of " + C.n_experts + " / " + X.ep + ")" : ""),
    fmtBytesGib(r.weight_bytes_held)];
  // _kv_per_gpu: the fullest stage's KV per token, term by term
  const K = C.kv_gpu[s.gqa ? "gqa" : "mha"], pkv = C.bytes[s.kv_dtype];
  const bpt = (t) => t.elements * pkv + t.own;
  const stages = C.stage_parts.map((_, i) => {
    let sum = 0.0;
    for (const t of K.terms) { if (t.stage_shares[i]) { sum += t.stage_shares[i] * (t.layers * bpt(t)); } }
    return sum;
  });
  let fullest = 0;
  // the fullest; on a tie the memory bar's stage (core/explain.py _kv_per_gpu)
  stages.forEach((x, i) => { if (x > stages[fullest] || (x === stages[fullest] && i === r.memory_stage)) { fullest = i; } });
  const pieces = K.terms.filter((t) => t.here[fullest] && bpt(t)).map((t) => t.here[fullest] + " × " +
    pyGGroup(bpt(t)) + " bytes × " + (t.share === "replicated" ? "1" : t.share === "even" ? "1/" + X.tp
      : "ceil(" + K.h_kv + "/" + X.tp + ")/" + K.h_kv));
  const perGpu = stages[fullest];
  w["kv-gpu"] = [pieces.length ? (X.pp > 1 ? "stage " + (fullest + 1) + " of " + X.pp + ": " : "") + pieces.join(" + ") +
    " = " + fmtBytesSmall(perGpu) + "; " + K.heads_per_gpu + " KV head" + (K.heads_per_gpu > 1 ? "s" : "") +
    " per GPU" + K.replicated : "no layer holds a KV cache that grows with S", fmtSigWhole(perGpu / KIB) + " KiB"];
  // communication: the slowest stage's calls, its bytes over the link
  const sent = r.bytes_sent_per_step, link = p.link_bandwidth ? fmtBandwidth(p.link_bandwidth) : "no link figure";
  let calls = 0;
  for (const c of p.stages[r.slowest_stage].collectives) { calls += c.calls; }
  const wire = p.link_bandwidth ? pyFixed(sent, 0) + " bytes / " + link : "no link figure: the calls only";
  w["comm-time"] = [calls ? sentParts(p.stages[r.slowest_stage].collectives, X, p.experts_per_token,
                                      s.batch * s.spec_k, sent) + wire + " + " + calls + " × " +
    fmtS(p.call_latency_s) + " = " +
    fmtS(r.communication_time_s) + ", against " + fmtS(r.memory_time_s) + " of memory and " + fmtS(r.compute_time_s) +
    " of compute" : "nothing sent on one GPU", fmtS(r.communication_time_s)];
  const commI = r.communication_intensity === null ? "—" : _fpb(r.communication_intensity);
  const ridgeIC = r.interconnect_ridge_point;
  w["comm-intensity"] = [sent ? quotientTerms(r.flop_per_step, sent, r.communication_intensity) + " = " + commI +
    "; interconnect ridge " + (ridgeIC ? fmtSig(ridgeIC) + " FLOP/byte" + (r.communication_intensity < ridgeIC
      ? " (below it, the link takes longer for the bytes than the chip for the FLOPs)"
      : " (above it, the chip takes longer for the FLOPs than the link for the bytes)") : "unknown") +
    // core/explain.py _call_latency: what no intensity counts
    "; beside the bytes, the calls' latency: " + calls + " × " + fmtS(p.call_latency_s) + " = " +
    fmtS(calls * p.call_latency_s) + " of the communication's " + fmtS(r.communication_time_s) +
    commShare(r) : "nothing sent on one GPU", commI];
  w["tokens-aggregate"] = [fmtRate(r.tokens_per_s_with_kv) + " tokens/s × " + X.ep + " × " + X.replicas + " = " +
    fmtRate(r.tokens_per_s_aggregate) + " tokens/s (" + pyInt(r.sequences_in_flight) +
    (r.sequences_in_flight === 1 ? " sequence in flight); " : " sequences in flight); ") +
    "per sequence " + fmtRate(r.tokens_per_s_per_sequence) + " tokens/s" + unfitWork(r),
    fmtRate(r.tokens_per_s_aggregate) + " tokens/s" + unfitValue(r)];
  // the smallest split that fits: evaluate()'s own search over the model's splits (C.splits)
  const tp = r.suggested_tp;
  let fit = r.fits && X.tp === (tp || X.tp) ? "fits as set" : tp ? "TP = " + tp +
    ((r.suggested_pp || 1) > 1 ? ", PP = " + r.suggested_pp : "") : "none up to the node and 1,024 GPUs";
  fit += X.ep > 1 && tp ? " (at EP = " + X.ep + ")" : "";
  w["smallest-fit"] = ["at B = " + s.batch + ", S = " + pyInt(s.context) + ": " + fit, fit];
  // what a token costs, at the price per GPU-hour the page was written with
  const cost = (tps, c) => {
    const price = fmtMoney(r.gpu_hour_price), n = X.gpus_total;
    return [c === null ? "set a price per GPU-hour" : price + " × " + pyInt(n) + " / 3600 / " + fmtSig(tps, 6) +
      " tokens/s × 1e6 = " + fmtMoney(c) + " (" + price + " per GPU-hour, " + pyInt(n) + " GPU" + (n !== 1 ? "s" : "") +
      ", 3,600 s an hour)", fmtMoney(c) + (c === null ? "" : unfitValue(r))];
  };
  w["cost-output"] = cost(r.output_tokens_per_s_aggregate, r.cost_per_million_output_tokens);
  w["cost-prompt"] = cost(r.prompt_tokens_per_s_aggregate, r.cost_per_million_prompt_tokens);
}
function commShare(r) {
  // core/explain.py _comm_share: communication's share of the step, and whether it is the step's largest part
  const comm = r.communication_time_s, stepT = r.step_time_s_with_kv;
  const share = "; communication is " + fmtSeconds(comm) + " / " + fmtSeconds(stepT) + " = " + _pct(comm / stepT) +
    " of the step";
  if (r.bound === "overhead") {
    return share + ": the kernel launches (" + fmtSeconds(r.launch_overhead_s) + ") set it, overhead-bound";
  }
  if (comm > Math.max(r.compute_time_s, r.memory_time_s)) {
    return share + ", its largest part: communication-bound (the Bound readout is the roofline of one GPU's " +
      "own work, " + r.bound + "-bound, which the communication adds to)";
  }
  const [name, t] = r.memory_time_s >= r.compute_time_s ? ["memory", r.memory_time_s] : ["compute", r.compute_time_s];
  return share + ", less than its " + name + " time (" + fmtSeconds(t) + "): the step stays " + r.bound + "-bound";
}
