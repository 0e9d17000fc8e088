// Formatting at the edges, as core/units.py and Python's format specs do it, so the offline page writes
// every number exactly as the served readouts (tests/browser/test_standalone.py compares the strings).
// Python rounds the exact binary value of a float half to even; Number.toFixed, toPrecision and
// Intl.NumberFormat round its shortest decimal form instead (1946.505 → "1946.50" where Python writes
// "1946.51"), so the rounding here is done on the exact value with BigInt.
function _exact(x) {
  // |x| = m · 2^e exactly (x finite)
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(x));
  const hi = view.getUint32(0), lo = view.getUint32(4), bits = (hi >>> 20) & 0x7ff;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (bits !== 0) { m |= 1n << 52n; }
  return [m, bits === 0 ? -1074 : bits - 1075];
}
function _scaled(x, d) {
  // round(|x| · 10^d) to an integer, ties to even, exactly (d may be negative)
  const [m, e] = _exact(x);
  let num = m, den = 1n;
  if (e >= 0) { num <<= BigInt(e); } else { den <<= BigInt(-e); }
  if (d >= 0) { num *= 10n ** BigInt(d); } else { den *= 10n ** BigInt(-d); }
  const q = num / den, twice = 2n * (num % den);
  return (twice > den || (twice === den && (q & 1n) === 1n)) ? q + 1n : q;
}
function _special(x) { return Number.isNaN(x) ? "nan" : (x > 0 ? "inf" : "-inf"); }
function _sign(x) { return (x < 0 || Object.is(x, -0)) ? "-" : ""; }
function _group(digits) { return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ","); }
function pyFixed(x, d, group = true) {
  // f"{x:,.{d}f}" (group) or f"{x:.{d}f}"
  if (!Number.isFinite(x)) { return _special(x); }
  const s = _scaled(x, d).toString().padStart(d + 1, "0");
  const whole = d > 0 ? s.slice(0, -d) : s;
  return _sign(x) + (group ? _group(whole) : whole) + (d > 0 ? "." + s.slice(-d) : "");
}
function factorDigits(x, multiplier, total, digits = 3, totalDigits = 2, most = 9) {
  // core/units.py factor_digits: the fewest decimals of x that make x printed × multiplier print as total does
  const want = pyFixed(total, totalDigits, false);
  for (let d = digits; d < most; d++) {
    if (pyFixed(parseFloat(pyFixed(x, d, false)) * multiplier, totalDigits, false) === want) { return d; }
  }
  return most;
}
function fmtSigWhole(x) {
  // core/units.py fmt_sig_whole: four significant digits, or whole from 10,000
  return Math.abs(x) < 1e4 ? fmtSig(x) : pyFixed(x, 0);
}
function fmtIntensity(x) { return fmtSigWhole(x); }  // core/units.py fmt_intensity
function sumDigits(parts, total, digits = 1, most = 6) {
  // core/units.py sum_digits: the fewest decimals from `digits` at which the parts printed add to the total printed
  // (exactly: each printed value is its rounded integer of 10^-d)
  const scaled = (x, d) => (x < 0 ? -1n : 1n) * _scaled(x, d);
  for (let d = digits; d < most; d++) {
    if (parts.reduce((a, p) => a + scaled(p, d), 0n) === scaled(total, d)) { return d; }
  }
  return most;
}
function pyG(x, p = 6) {
  // f"{x:.{p}g}": p significant digits, trailing zeros dropped, e-notation below 1e-4 or from 10^p.
  if (!Number.isFinite(x)) { return _special(x); }
  if (x === 0) { return _sign(x) + "0"; }
  let e = Math.floor(Math.log10(Math.abs(x))), q = _scaled(x, p - 1 - e);
  if (q >= 10n ** BigInt(p)) { e += 1; q = _scaled(x, p - 1 - e); }
  if (q < 10n ** BigInt(p - 1)) { e -= 1; q = _scaled(x, p - 1 - e); }
  const strip = (s) => (s.includes(".") ? s.replace(/0+$/, "").replace(/\.$/, "") : s);
  const digits = q.toString();
  if (e < -4 || e >= p) {
    return _sign(x) + strip(digits[0] + "." + digits.slice(1)) + "e" + (e < 0 ? "-" : "+") +
      String(Math.abs(e)).padStart(2, "0");
  }
  return _sign(x) + strip(pyFixed(Math.abs(x), p - 1 - e, false));
}
function pyInt(n) {
  // f"{n:,}" of an integer
  return pyFixed(n, 0);
}
function fmtSig(x, sig = 4) {
  // core.units.fmt_sig: sig significant digits, thousands separators, never e-notation.
  if (x === 0 || !Number.isFinite(x)) { return pyG(x); }
  const digits = sig - 1 - Math.floor(Math.log10(Math.abs(x)));
  // f"{round(x, digits):,.{max(digits, 0)}f}"
  let text = digits >= 0 ? pyFixed(x, digits) : _sign(x) + _group(_scaled(x, digits).toString() + "0".repeat(-digits));
  if (text.includes(".")) { text = text.replace(/0+$/, "").replace(/\.$/, ""); }
  return text;
}
function pyGGroup(x, p = 6) {
  // f"{x:,.{p}g}": pyG with thousands separators in the whole part (none in e-notation)
  const t = pyG(x, p);
  if (t.includes("e") || !Number.isFinite(x)) { return t; }
  const [whole, frac] = t.split(".");
  return _group(whole) + (frac === undefined ? "" : "." + frac);
}
function fmtMoney(dollars) {
  // core.units.fmt_money: cents from $1, two significant digits below, a floor of $0.0001; null: no price given
  if (dollars === null) { return "no price given"; }
  if (!(dollars >= 1e-4)) { return "under $0.0001"; }
  if (dollars < 0.995) { return "$" + fmtSig(dollars, 2); }
  return "$" + pyFixed(dollars, 2);
}
const KIB = 2 ** 10, MIB = 2 ** 20, GIB = 2 ** 30;
function fmtBytesGb(n, digits = 2) { return pyFixed(n / 1e9, digits) + " GB"; }
function fmtBytesGib(n, digits = 2) { return pyFixed(n / GIB, digits) + " GiB"; }
function fmtBytesSmall(n) {
  if (n >= MIB) { return pyFixed(n, 0) + " bytes (" + pyFixed(n / MIB, 2) + " MiB)"; }
  return pyFixed(n, 0) + " bytes (" + fmtSig(n / KIB) + " KiB)";
}
function fmtFlopsRate(x) { return fmtSig(x / 1e12) + " TFLOP/s"; }
function fmtFlop(x) {
  const shown = Number.isFinite(x) ? Number(x.toPrecision(4)) : x;  // core.units.fmt_flop: the unit as printed
  if (shown >= 1e15) { return fmtSig(x / 1e15) + " PFLOP"; }
  if (shown >= 1e12) { return fmtSig(x / 1e12) + " TFLOP"; }
  if (shown >= 1e9) { return fmtSig(x / 1e9) + " GFLOP"; }
  if (shown >= 1e6) { return fmtSig(x / 1e6) + " MFLOP"; }
  return fmtSigWhole(x) + " FLOP";
}
function fmtBandwidth(x) { return fmtSig(x / 1e12) + " TB/s"; }
// core/units.py SECONDS_PER and SECONDS_SIG: seconds in each unit fmtSeconds writes, and its significant digits
const SECONDS_PER = {"µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0};
const SECONDS_SIG = {"µs": 3, "ms": 4, "s": 3, "min": 3, "h": 3};
function fmtSeconds(t) {
  if (t < 1e-4) { return fmtSig(t * 1e6, SECONDS_SIG["µs"]) + " µs"; }
  if (t < 10) { return fmtSig(t * 1e3, SECONDS_SIG.ms) + " ms"; }
  if (t < 600) { return fmtSig(t, SECONDS_SIG.s) + " s"; }
  if (t < 3 * 3600) { return fmtSig(t / 60, SECONDS_SIG.min) + " min"; }
  return fmtSig(t / 3600, SECONDS_SIG.h) + " h";
}
function fmtRate(x) { return x >= 10 ? pyFixed(x, 0) : fmtSig(x, 2); }
function rateTerms(batch, gained, t, whole = false) {
  // core/units.py rate_terms: [E, t] as "B × E / t = tokens/s" writes them, each a digit longer until it multiplies out
  const ok = Number.isFinite(t) && t > 0;
  let eText = whole ? pyFixed(gained, 0) : pyG(gained, 3), tText = fmtSeconds(t);
  if (!ok || !Number.isFinite(gained)) { return [eText, tText]; }
  const unit = tText.slice(tText.lastIndexOf(" ") + 1), per = SECONDS_PER[unit], sig = SECONDS_SIG[unit];
  const want = fmtRate(batch * gained / t), num = (text) => Number(text.replace(/,/g, ""));
  let number = "";
  for (let more = 0; more < 8; more++) {
    eText = whole ? pyFixed(gained, 0) : pyG(gained, 3 + more);
    number = fmtSig(t / per, sig + more);
    if (fmtRate(batch * num(eText) / (num(number) * per)) === want) { break; }
  }
  return [eText, number + " " + unit];
}
// html.escape(text): & < > " ' as Python writes them
function escHtml(s) {
  return String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;",
    "'": "&#x27;"})[c]);
}
