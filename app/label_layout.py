"""Chart labels laid out in the browser, clear of each other, the markers and the lines.

Where a label can go depends on the plot frame's size in pixels and the text's
width in the browser's font, which only the browser knows (and which change with
present mode, the window and zoom): :func:`place_labels_in_browser` attaches
:data:`PLACE_LABELS` to a LabelSet, which picks for each label the side of its
point and the first vertical offset where it meets nothing else, inside the frame
(or, where asked, hides a label that finds no such place: its value stays in the
chart's hover); a label moved away from its point is joined to it by a leader line.
Used by the Hardware tab's charts and the Compare tab's rows.
"""

from __future__ import annotations

from bokeh.models import ColumnDataSource, CustomJS, FactorRange, LabelSet

# Lays out point labels in the browser, where the frame's size and the text's width are known: each label goes
# right of its point (left where it would run past the frame), at the first vertical offset of `steps` (0, ±1, ±2,
# … lines) where its box meets no label placed before it, no label of `others` (LabelSets at fixed offsets, or laid
# out by their own PLACE_LABELS), no marker (its own, and those of the renderers `marks`) and no line of `lines`
# (sources of x/y or xs/ys polylines: the roofs; with `lineFields[j]` = [x, y] the polyline of those two columns of
# `lines[j]`), no bar of `bars` but its own (VBar renderers), inside the frame.
# At each offset it tries both sides and, off its row, centred above or below (with `bothSides` false its
# preferred side and, off its row, centred, first when the preferred side is its left; with "right" only its
# right: a band's name stays inside the band).  Either axis may be log,
# linear or categorical; `glyph` (the markers) may be null (labels of lines).  `pad` px keep a label that far from
# what it meets on its left and right (two names in a row read apart).
# A label that finds no clear place takes the nearest where a line runs through it but no label or marker is under
# it, else the nearest inside the frame; with `shown` (a column name) it is left out: `shown` holds its text or "".
# With `shortField` (a column name; `shown` drawn) a label with no room in the frame beside its point on either side or
# centred says its short form instead, and is never left out: `shown` holds the text it says.  With `fallbackField`
# (`shown` drawn) a label with no clear place tries that column's shorter text before it is left out; with `keepAll`
# too, none is left out: a label with no clear place says its shorter text where that has one.
# With `leaders` (a source of x0/y0/x1/y1 segments in data units; log or linear axes only) a label that had to move
# beyond half a line from its point's marker is joined to it by a leader line.
# Runs when the points, the frame, the axes' ranges or the text size change; writes xoff, yoff and align (for a
# LabelSet with text_baseline "middle") and the leaders only when they differ, so its own write does not run it again.
PLACE_LABELS = r"""
const d = source.data, xf = labels.x.field, yf = labels.y.field, n = d[xf].length;
// A chart not laid out yet (in a tab not shown since the page loaded) has no frame size: BokehJS throws on reading it.
let W = 0, H = 0;
try { W = fig.inner_width; H = fig.inner_height; } catch (e) { return; }
if (!(W > 0 && H > 0) || n === 0) { return; }
const val = (v) => (v !== null && typeof v === "object" && "value" in v) ? v.value : v;
const ctx = document.createElement("canvas").getContext("2d");
const fontOf = (ls) => `${val(ls.text_font_style) || "normal"} ${parseFloat(val(ls.text_font_size)) || 11}px ` +
  `${val(ls.text_font) || "helvetica"}`;
const font = parseFloat(val(labels.text_font_size)) || 11;
const r = (glyph != null ? (parseFloat(val(glyph.size)) || 10) / 2 : 2) + 1, gap = 6, line = 1.25 * font;
// Data to frame pixels, on a log, a linear or a categorical axis (a factor's synthetic coordinate).
const axis = (scale, range, len, flip) => {
  const f = scale.type === "LogScale" ? Math.log10 : scale.type === "CategoricalScale" ? (v) => range.synthetic(v)
    : (v) => v;
  const a = scale.type === "LogScale" ? f(range.start) : range.start;
  const b = scale.type === "LogScale" ? f(range.end) : range.end;
  return flip ? (v) => len - (f(v) - a) / (b - a) * len : (v) => (f(v) - a) / (b - a) * len;
};
const sx = axis(fig.x_scale, fig.x_range, W, false), sy = axis(fig.y_scale, fig.y_range, H, true);
// Frame pixels back to data (the leader lines' ends; log or linear axes).
const inverse = (scale, range, len, flip) => {
  const log = scale.type === "LogScale", f = log ? Math.log10 : (v) => v, a = f(range.start), b = f(range.end);
  return (p) => { const v = a + (flip ? len - p : p) / len * (b - a); return log ? 10 ** v : v; };
};
const ix = inverse(fig.x_scale, fig.x_range, W, false), iy = inverse(fig.y_scale, fig.y_range, H, true);
const lead = {x0: [], y0: [], x1: [], y1: []};
const pts = [];
for (let i = 0; i < n; i++) { pts.push([sx(d[xf][i]), sy(d[yf][i])]); }
const taken = pts.map(([x, y]) => [x - r, x + r, y - r, y + r]);
// The markers a reader could take a label for (this set's labelled points, the other series'): a label of a
// marker without a leader line sits nearer its own marker than any other, else it reads as another's name.
const centres = glyph == null ? [] : pts.filter((_, i) => String(d[field][i]) !== "");
const texts = [];  // the labels' boxes alone (a leader line keeps off them)
for (const other of others) {  // other labels: laid out by their own PLACE_LABELS, or at fixed offsets
  const od = other.source.data, ox = other.x.field, oy = other.y.field, osize = parseFloat(val(other.text_font_size));
  const placed = "xoff" in od, fixed = typeof val(other.x_offset) !== "object";
  if (!placed && !fixed) { continue; }  // to be laid out, not yet
  const base = placed ? "middle" : val(other.text_baseline) || "bottom";
  ctx.font = fontOf(other);
  for (let i = 0; i < od[ox].length; i++) {
    const t = String(od[other.text.field][i]);
    if (!t) { continue; }
    const rows = t.split("\n"), w = Math.max(...rows.map((row) => ctx.measureText(row).width));
    const h = 1.25 * osize * rows.length, a = placed ? od.align[i] : val(other.text_align) || "left";
    const x = sx(od[ox][i]) + (placed ? od.xoff[i] : val(other.x_offset) || 0);
    const y = sy(od[oy][i]) - (placed ? od.yoff[i] : val(other.y_offset) || 0);
    const left = a === "right" ? x - w : a === "center" ? x - w / 2 : x;
    const top = base === "top" ? y : base === "bottom" ? y - h : y - h / 2;
    taken.push([left, left + w, top, top + h]);
    texts.push([left, left + w, top, top + h]);
  }
}
// The chart's keys inside the frame (a Legend at a named location): a label or a leader under one is hidden (at
// 1024 px on a projector the atlas's key covered "B = 1" at the end of two kernels' names).  Its box is worked out
// from its items' text as BokehJS lays a legend out: padding, each entry a glyph, a standoff and its label, entries
// `spacing` apart in `ncols` columns, `margin` from the frame's edge.
for (const legend of fig.center) {
  if (legend.type !== "Legend" || !legend.visible || typeof legend.location !== "string") { continue; }
  const items = legend.items.filter((item) => item.visible !== false);
  if (items.length === 0) { continue; }
  const size = parseFloat(val(legend.label_text_font_size)) || 13;
  ctx.font = `${val(legend.label_text_font_style) || "normal"} ${size}px helvetica`;
  const widths = items.map((item) => ctx.measureText(String(val(item.label) ?? "")).width);
  const cols = Math.max(1, Math.min(items.length, legend.ncols === "auto" || legend.ncols == null ? 1 : legend.ncols));
  const rows = Math.ceil(items.length / cols), pad = legend.padding ?? 10, gap = legend.spacing ?? 3;
  const entry = Math.max(...widths) + (legend.glyph_width ?? 20) + (legend.label_standoff ?? 5);
  const lw = 2 * pad + cols * entry + (cols - 1) * gap;
  const lh = 2 * pad + rows * Math.max(legend.glyph_height ?? 20, 1.2 * size) + (rows - 1) * gap;
  const m = legend.margin ?? 10, where = legend.location;
  const left = where.endsWith("right") ? W - m - lw : where.endsWith("left") ? m : (W - lw) / 2;
  const top = where.startsWith("bottom") ? H - m - lh : where.startsWith("top") ? m : (H - lh) / 2;
  taken.push([left, left + lw, top, top + lh]);
  texts.push([left, left + lw, top, top + lh]);
}
for (const m of marks) {  // other series' markers (renderers of a Scatter): their boxes are taken too
  if (!m.visible) { continue; }
  const md = m.data_source.data, mg = m.glyph, mr = (parseFloat(val(mg.size)) || 10) / 2 + 1;
  const mx = md[mg.x.field] || [], my = md[mg.y.field] || [];
  for (let i = 0; i < mx.length; i++) {
    const x = sx(mx[i]), y = sy(my[i]);
    if (!Number.isFinite(x) || !Number.isFinite(y)) { continue; }
    taken.push([x - mr, x + mr, y - mr, y + mr]);
    centres.push([x, y]);
  }
}
// Bars (renderers of a VBar on a categorical or linear x axis: the Compare rows' pins): a label keeps off every bar
// but its own (its point's, in its own source), `pad` px clear of it as of another label: beside a neighbour's bar
// it read as that pin's value.  [left, right, top, bottom, owner index or -1]
const barBoxes = [];
for (const b of bars) {
  if (!b.visible) { continue; }
  const bd = b.data_source.data, bg = b.glyph, bx = bd[bg.x.field] || [], bt = bd[bg.top.field] || [];
  const span = fig.x_range.end - fig.x_range.start, width = parseFloat(val(bg.width));
  const half = span > 0 && Number.isFinite(width) ? width / 2 / span * W : 0;
  const base = sy(parseFloat(val(bg.bottom)) || 0), ownSource = b.data_source === source;
  for (let i = 0; i < bx.length; i++) {
    const x = sx(bx[i]), y = sy(bt[i]);
    if (!Number.isFinite(x) || !Number.isFinite(y)) { continue; }
    barBoxes.push([x - half, x + half, Math.min(y, base), Math.max(y, base), ownSource ? i : -1]);
  }
}
ctx.font = fontOf(labels);
const polylines = [];
for (let j = 0; j < lines.length; j++) {
  const ld = lines[j].data, named = lineFields[j];
  if (named != null) { polylines.push([ld[named[0]] || [], ld[named[1]] || []]); }
  else if ("xs" in ld) { for (let j = 0; j < ld.xs.length; j++) { polylines.push([ld.xs[j], ld.ys[j]]); } }
  else if ("x" in ld) { polylines.push([ld.x, ld.y]); }
}
const crossings = [];  // the lines, sampled every 2 px or so
for (const [xs, ys] of polylines) {
  for (let j = 0; j + 1 < xs.length; j++) {
    const x0 = sx(xs[j]), y0 = sy(ys[j]), x1 = sx(xs[j + 1]), y1 = sy(ys[j + 1]);
    if (![x0, y0, x1, y1].every(Number.isFinite)) { continue; }
    const k = Math.min(2000, Math.ceil(Math.hypot(x1 - x0, y1 - y0) / 2) + 1);
    for (let s = 0; s <= k; s++) { crossings.push([x0 + (x1 - x0) * s / k, y0 + (y1 - y0) * s / k]); }
  }
}
const solid = crossings.length;  // the samples before it are the polylines', those after it the spans'
for (const s of spans) {  // Spans (a ridge's dotted line across the frame) are lines too, every 2 px
  const at = s.location;
  if (!s.visible || at == null || !Number.isFinite(at)) { continue; }
  const p = s.dimension === "height" ? sx(at) : sy(at);
  if (!Number.isFinite(p)) { continue; }
  const len = s.dimension === "height" ? H : W;
  for (let q = 0; q <= len; q += 2) { crossings.push(s.dimension === "height" ? [p, q] : [q, p]); }
}
// `own`: the index of the label's own marker in `taken`, which a box must not meet but the pad does not apply to (a
// label beside its marker sits `gap` px from it: with a wider pad no label could sit beside its own marker).
const apart = (b, own = -1) => !taken.some((o, j) => {
  const p = j === own ? 0 : pad;
  return b[0] - p < o[1] && o[0] < b[1] + p && b[2] < o[3] && o[2] < b[3];
}) && !barBoxes.some((o) => (own < 0 || o[4] !== own)
  && b[0] - pad < o[1] && o[0] < b[1] + pad && b[2] < o[3] && o[2] < b[3]);
// Whether the segment [x0, y0, x1, y1] runs through the box `o` (sampled every 2 px, 1 px inside its edges).
const through = ([x0, y0, x1, y1], o) => {
  const k = Math.ceil(Math.hypot(x1 - x0, y1 - y0) / 2) || 1;
  for (let j = 0; j <= k; j++) {
    const px = x0 + (x1 - x0) * j / k, py = y0 + (y1 - y0) * j / k;
    if (o[0] + 1 < px && px < o[1] - 1 && o[2] + 1 < py && py < o[3] - 1) { return true; }
  }
  return false;
};
const paths = [];  // the leader lines drawn so far: a label keeps off them as off a line
const inside = (b) => ([x, y]) => b[0] < x && x < b[1] && b[2] < y && y < b[3];
const clear = (b, own = -1) => apart(b, own) && !crossings.some(inside(b)) && !paths.some((s) => through(s, b));
// Clear but for a span (a thin dotted line, such as the ridge's, through the text): better than a leader through
// another label, or a roof through the text.
const clearButSpans = (b, own = -1) => {
  if (!apart(b, own) || paths.some((s) => through(s, b))) { return false; }
  const within = inside(b);
  for (let k = 0; k < solid; k++) { if (within(crossings[k])) { return false; } }  // no copy: runs every redraw
  return true;
};
// Where a label at box `b` would have its leader line (from the edge of the marker at (x, y) to the box's nearest
// point), or null where it stays near enough to its point to need none.
const leaderOf = (b, x, y) => {
  const cx = Math.min(Math.max(x, b[0]), b[1]), cy = Math.min(Math.max(y, b[2]), b[3]);
  const dist = Math.hypot(cx - x, cy - y);
  return leaders != null && dist > r + gap + line / 2 ? [x + (cx - x) * r / dist, y + (cy - y) * r / dist, cx, cy]
    : null;
};
// A leader crosses a line where it passes within 1.5 px of the line's samples, away from its own point (the line
// a roof's label names runs through its point, and a kernel's marker sits on the roof); and it runs through no
// other label's text.
const leaderClear = (b, x, y) => {
  const s = leaderOf(b, x, y);
  if (s === null) { return true; }
  const [x0, y0, x1, y1] = s, dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy || 1;
  if (texts.some((o) => through(s, o))) { return false; }
  return !crossings.some(([px, py]) => {
    if (Math.hypot(px - x, py - y) <= r + 3) { return false; }
    const t = Math.min(1, Math.max(0, ((px - x0) * dx + (py - y0) * dy) / len2));
    return Math.hypot(px - (x0 + t * dx), py - (y0 + t * dy)) < 1.5;
  });
};
const boxDist = (b, px, py) => Math.hypot(Math.max(b[0] - px, 0, px - b[1]), Math.max(b[2] - py, 0, py - b[3]));
const ownNearest = (b, x, y) => {
  if (glyph == null || leaderOf(b, x, y) !== null) { return true; }  // a leader line says whose it is
  const own = boxDist(b, x, y);
  // Nearer by half a line at least: a label about as near another marker, under it, read as that one's (the
  // hierarchy's "naive", 21 px from its diamond and 25 px under FlashAttention's triangle).
  return centres.every(([cx, cy]) => (Math.abs(cx - x) < 0.5 && Math.abs(cy - y) < 0.5)
    || boxDist(b, cx, cy) > own + line / 2);
};
const slide = bothSides === false;  // one side only: off its row, a label may go centred over or under its mark
// `shown` drawn: a label with no clear place is left out (with `keepAll`, never)
const mayHide = shown !== null && shortField == null && !keepAll;
// The labels are placed one after another, each clear of those before it and of their leaders: `layout(order)`
// places them in `order` and says which found no place clear of everything with a clear leader (`worse`), and
// which leaders run through another label (`crossed`: [leader's label, label crossed]).  A label may have been
// crowded out by one placed before it that had other room (the Hardware atlas: "LayerNorm" took the spot whose
// leader "residual add" could draw clear, and residual add's leader then ran through LayerNorm's name), so the
// labels are placed again in other orders (those that fared worse first, together and each alone; a label a
// leader crossed last), and the layout with the fewest defects (a leader through a label, a line through
// a label, a label left out), then the nearest to clear everywhere, is kept.
// The offsets a label tries: whole lines first, then, where none was clear, half lines between them (a label beside
// its point on a rising roof cleared it by half a line: the atlas's "LayerNorm").
const tries = [...steps, ...steps.filter((s) => s !== 0).map((s) => s - Math.sign(s) / 2)];
const baseTaken = taken.length, baseTexts = texts.length;
const layout = (order) => {
taken.length = baseTaken; texts.length = baseTexts; paths.length = 0;
const xoff = new Array(n).fill(0), yoff = new Array(n).fill(0), align = new Array(n).fill("left");
const keep = new Array(n).fill(""), segments = new Array(n).fill(null), boxes = new Array(n).fill(null), worse = [];
const ranks = new Array(n).fill(0);
for (const i of order) {
  if (String(d[field][i]) === "") {  // a row without a label (a roof's other points): nothing to place
    continue;
  }
  const [x, y] = pts[i];
  let text = String(d[field][i]);
  // A label with no room beside its point, on either side or centred over it (three pins' names on a phone), says
  // its short form (the pins' numbers: their names are in the hover and the Pins table) where it has one.
  const roomless = (width) => x + r + gap + width > W && x - r - gap - width < 0 && (x - width / 2 < 0
    || x + width / 2 > W);
  if (shortField != null && d[shortField] && String(d[shortField][i]) && roomless(ctx.measureText(text).width)) {
    text = String(d[shortField][i]);
  }
  // The places `text` may take: the first clear one, and the fallbacks below when none is.
  const attempt = (text) => {
    const w = ctx.measureText(text).width;
    const prefer = bothSides === "right" || x + r + gap + w <= W || x - r - gap - w < 0 ? 1 : -1;
    // The box of the label `step` lines off its point's row, right of it (side 1), left (-1) or centred (0).
    // Centred (`slide`) slides inside the frame as far as it must, still over its mark, and clears the mark (a
    // line's offset is less than a large mark's radius plus half a line).
    const centre = slide ? Math.min(Math.max(x - w / 2, 0), W - w) : x - w / 2;
    const boxAt = (step, side) => {
      const left = side > 0 ? x + r + gap : side < 0 ? x - r - gap - w : centre;
      let top = y + step * line - line / 2;
      if (slide && side === 0) top = step > 0 ? Math.max(top, y + r + 1) : Math.min(top, y - r - 1 - line);
      return [left, left + w, top, top + line];
    };
    // unclaimed: clear with a clear leader, but nearer another marker; offTexts: clear, its leader crossing a line
    // but no label; dotted: clear but for a span through it, its leader crossing no label, nearer its own marker;
    // clearBox: clear, its leader crossing a label; spareOff / spare: no label or marker under it but a line through
    // it, its leader crossing no label / any
    let best = null, first = null, spare = null, spareOff = null, clearBox = null, unclaimed = null, offTexts = null;
    let dotted = null, textless = null;
    for (const step of tries) {
      // 0: centred above or below (off its row only)
      // (`bothSides` false: a label pushed to its left, off its row, goes centred over or under its mark first:
      // beside it, a line off, it sat over the neighbour's bar of a categorical chart, with no leader to say whose.)
      for (const side of bothSides === true ? (step === 0 ? [prefer, -prefer] : [prefer, -prefer, 0])
        : slide && step !== 0 ? (prefer > 0 ? [prefer, 0] : [0, prefer]) : [prefer]) {
        const box = boxAt(step, side);
        if (box[0] < 0 || box[1] > W || box[2] < 0 || box[3] > H) { continue; }
        if (first === null) { first = [step, side, box]; }
        if (keepAll && textless === null
          && !texts.some((o) => box[0] < o[1] && o[0] < box[1] && box[2] < o[3] && o[2] < box[3])) {
          textless = [step, side, box];
        }
        const s = leaderOf(box, x, y), offLabels = s === null || !texts.some((o) => through(s, o));
        if (apart(box, i)) {
          if (spare === null) { spare = [step, side, box]; }
          if (spareOff === null && offLabels) { spareOff = [step, side, box]; }
        }
        if (clear(box, i) && leaderClear(box, x, y)) {
          if (ownNearest(box, x, y)) { best = [step, side, box]; break; }
          if (unclaimed === null) { unclaimed = [step, side, box]; }
        }
        if (clear(box, i)) {
          if (clearBox === null) { clearBox = [step, side, box]; }
          if (offTexts === null && offLabels) { offTexts = [step, side, box]; }
        } else if (dotted === null && offLabels && spans.length > 0 && clearButSpans(box, i) && ownNearest(box, x, y)) {
          dotted = [step, side, box];
        }
      }
      if (best !== null) { break; }
    }
    return {text, w, prefer, boxAt, best, first, spare, spareOff, clearBox, unclaimed, offTexts, dotted, textless,
            found: best !== null || (!ownOnly && (unclaimed !== null || clearBox !== null || dotted !== null))};
  };
  let placed = attempt(text);
  // With `fallbackField` a label with no clear place tries its shorter text (the value without its note: the note
  // is in the hover) before it is left out (a phone's Compare lost INT4's expected value, the row's point).
  // With `keepAll`, a label with no place clear of everything says its shorter text where that has one (the
  // Hardware atlas at 1024 px on a projector: six kernels' names in 18-px text had no room in a 628-px frame), and
  // wherever its own text has no clear place at all: less text over what is there (on a phone two kernels' whole
  // names lay one over the other and ran out of the frame).
  const brief = fallbackField != null && d[fallbackField] ? String(d[fallbackField][i]) : "";
  if (brief !== "" && brief !== text && ((mayHide && !placed.found) || (keepAll && placed.best === null))) {
    const second = attempt(brief);
    if (mayHide ? second.found : second.best !== null || !placed.found) { placed = second; }
  }
  text = placed.text;
  const {w, prefer, boxAt, best, first, spare, spareOff, clearBox, unclaimed, offTexts, dotted, textless} = placed;
  // No place clear of everything: one clear of every line whose leader crosses a line but no label (else one clear
  // but for a span whose leader crosses no label, else one whose leader crosses a label too), then one where a line
  // runs through the text but no label or marker is under it (a wide label among many roofs, the 2:4 headline's),
  // before the nearest place in the frame; a label wider than the frame's room anywhere (three pins' names on a
  // phone) stays beside its point, on the side with room, and the frame cuts it (no leader line from a corner).
  // With `ownOnly` (and `shown`) a label is shown only where it is nearer its own marker than any other: a value
  // nearer a neighbour's mark reads as the neighbour's (Compare with twelve pins on a phone), and its hover has it.
  const loose = ownOnly && mayHide ? null : unclaimed || offTexts || dotted || clearBox;
  // Kept with no such place (`keepAll`), it takes the nearest place with no label under it, over a marker or a line if
  // it must, before the first in the frame: on a phone two kernels' names at one point printed one over the other.
  const rest = mayHide ? null : spareOff || spare || (keepAll ? textless : null);
  const [step, side, box] = best || loose || rest || first || [0, prefer, boxAt(0, prefer)];
  const shows = best !== null || loose !== null || !mayHide;
  // How well it fared (0: clear of everything; 4 and over: a line or a marker under it; 7: no label under it, with
  // `keepAll`; 8: the first place in the frame, a label may be under it; 9: left out)
  const fared = [best, unclaimed, offTexts, clearBox, dotted, spareOff, spare, keepAll ? textless : null];
  const chosen = best || loose || rest;  // null: the first place in the frame (a label may be under it)
  ranks[i] = !shows ? 9 : chosen === null ? 8 : fared.indexOf(chosen);
  if (best === null) { worse.push(i); }
  if (shows) { taken.push(box); texts.push(box); boxes[i] = box; }
  keep[i] = shows ? text : "";
  const slid = slide && side === 0;  // its offsets from its box
  xoff[i] = slid ? box[0] + w / 2 - x : side * (r + gap);
  yoff[i] = slid ? y - (box[2] + line / 2) : -step * line;
  align[i] = side > 0 ? "left" : side < 0 ? "right" : "center";
  // A label moved away from its point (beyond half a line from the point's marker) gets a leader line: from the
  // marker's edge to the box's nearest point.
  segments[i] = shows ? leaderOf(box, x, y) : null;
  if (segments[i] !== null) { paths.push(segments[i]); }
}
const crossed = [];
for (let i = 0; i < n; i++) {
  for (let j = 0; j < n; j++) {
    const crosses = i !== j && segments[i] !== null && boxes[j] !== null && through(segments[i], boxes[j]);
    if (crosses) { crossed.push([i, j]); }
  }
}
// Defects: a leader through a label (it reads as struck out: twice), a label over another (twice), a label with a
// line or a marker under it, or left out; then how far each fared from clear
const defects = 2 * crossed.length + ranks.filter((k) => k >= 4).length + ranks.filter((k) => k === 8).length;
const cost = ranks.reduce((a, b) => a + b, 0);
return {xoff, yoff, align, keep, segments, worse, crossed, defects, cost};
};
const inOrder = [...Array(n).keys()];
const better = (a, b) => a.defects < b.defects || (a.defects === b.defects && a.cost < b.cost);
let result = layout(inOrder);
if (result.defects > 0) {  // only a layout with a defect is tried again (the layout runs on every redraw)
  const orders = [[...result.worse, ...inOrder.filter((i) => !result.worse.includes(i))]];
  for (const [, j] of result.crossed.slice(0, 3)) { orders.push([...inOrder.filter((i) => i !== j), j]); }
  if (result.worse.length > 1) {  // each alone first
    for (const j of result.worse.slice(0, 3)) { orders.push([j, ...inOrder.filter((i) => i !== j)]); }
  }
  for (const order of orders) {
    const again = layout(order);
    if (better(again, result)) { result = again; }
  }
}
const {xoff, yoff, align, keep} = result;
for (const segment of result.segments) {
  if (segment !== null) {
    lead.x0.push(ix(segment[0])); lead.y0.push(iy(segment[1]));
    lead.x1.push(ix(segment[2])); lead.y1.push(iy(segment[3]));
  }
}
const same = (a, b) => a !== undefined && a.length === b.length && b.every((v, i) => a[i] === v);
if (!(same(d.xoff, xoff) && same(d.yoff, yoff) && same(d.align, align) && (shown === null || same(d[shown], keep)))) {
  source.data = {...d, xoff: xoff, yoff: yoff, align: align, ...(shown === null ? {} : {[shown]: keep})};
}
if (leaders != null && !["x0", "y0", "x1", "y1"].every((k) => same(leaders.data[k], lead[k]))) {
  leaders.data = lead;
}
"""

#: The vertical offsets (in lines) a label tries, nearest first.
STEPS = (0, -1, 1, -2, 2, -3, 3, -4, 4, -5, 5, -6, 6, -7, 7, -8, 8)
#: The leader lines' look: thin, grey, under the markers and lines (:func:`draw_leaders` draws them first) and over
#: the grid: on the grid's level a leader straight up from a point on a decade ran under its grid line, unseen (a
#: teacher's trial read "decode attention" as a label with no leader).
LEADER_STYLE = {"line_color": "#777777", "line_width": 1, "level": "glyph"}


#: Runs a layout callback found by its name in the changed model's document: a model other views' callbacks keep in
#: the document (the served roofline's sources and ranges, app/instant.py) calls the chart's layout without holding
#: the chart, which then leaves the document with its tab.  Outside the document (the tab closed) it does nothing.
RELAY = """const doc = cb_obj.document, layout = doc == null ? null : doc.get_model_by_name(layout_name);
if (layout != null) { layout.execute(cb_obj); }"""


def place_labels_in_browser(fig, labels: LabelSet, glyph, field: str, lines=(), others=(), *, steps=STEPS,
                            both_sides: bool | str = True, shown: str | None = None, short: str | None = None,
                            fallback: str | None = None, pad: float = 0, marks=(), bars=(),
                            spans=(), leader_lines: bool = True, own_only: bool = False, keep_all: bool = False,
                            name: str | None = None) -> ColumnDataSource | None:
    """Keep ``labels`` (a LabelSet over ``glyph``'s points, text in ``field``; ``glyph`` None for labels of points
    on a line) apart, off their markers and those of the renderers ``marks`` (Scatter glyphs: the other series),
    off the labels ``others`` (LabelSets at fixed offsets, or laid out by this function before),
    off the polylines of the sources ``lines`` (each a source of x/y or xs/ys columns, or a tuple ``(source, x, y)``
    naming the columns of one polyline) and the Spans ``spans`` (a ridge's line across the frame), with leader
    lines that cross none of those lines where a place allows, and inside ``fig``'s frame (log, linear or
    categorical axes), off the bars of the VBar renderers ``bars`` on a categorical or linear x axis (all but the
    label's own, in its own source),
    whatever the frame's size and the text's size (present mode): :data:`PLACE_LABELS`.  A label tries the
    vertical offsets ``steps`` (lines), on both sides of its point and centred above or below it, or
    (``both_sides`` False) on the side with room or, off its row, centred (first where that side is its left), or
    (``"right"``) on its right only, ``pad`` px clear of what it
    meets on its left and right.
    With ``shown`` (a column of the label source, which ``labels`` must draw as its text) a label that finds no
    clear place is left out rather than drawn over another: ``shown`` holds its text, or "".  With ``short`` too
    (a column of shorter texts), no label is left out: one too wide for the frame beside its point on either side
    and centred says its ``short`` text, and ``shown`` holds the text each says.  With ``fallback`` instead (a
    column of shorter texts, ``shown`` given), a label with no clear place for its text tries its ``fallback`` text
    before it is left out (``shown`` holds the text each says, or ""); with ``keep_all`` too none is left out, and a
    label with no place clear of everything says its ``fallback`` text where that finds one.
    The label source needs ``xoff``, ``yoff`` and ``align`` columns (:func:`unplaced` before the browser's).
    On log or linear axes a label moved away from its point is joined to it by a leader line
    (:data:`LEADER_STYLE`).

    With ``own_only`` (and ``shown``) a label is shown only at a place nearer its own marker than any other's (else
    its ``fallback`` text's, else none): on a chart without leader lines a value nearer a neighbour's mark reads as
    the neighbour's.

    With ``leader_lines`` False the leader lines' source is made but not drawn: :func:`draw_leaders` draws it
    when the chart first has labels (a chart that seldom has any saves the renderer's models).

    With ``name`` (unique in the document) the layout is that named callback, and the models outside ``labels``
    and ``fig`` (the lines', marks' and other labels' sources, the ranges) run it through :data:`RELAY`, by name:
    a model another view's callback holds (the served roofline's sources) would otherwise keep the whole chart in
    the document while its tab is closed, where a change outside the session's lock raised in Bokeh and the
    chart's own callbacks ran on a frame never laid out.

    Returns:
        the leader lines' source (columns x0, y0, x1, y1 in data units, filled in the browser), or None on a
        chart with a categorical axis (no leaders).
    """
    labels.update(x_offset="xoff", y_offset="yoff", text_align="align", text_baseline="middle")
    line_fields = [list(line[1:]) if isinstance(line, tuple) else None for line in lines]
    lines = [line[0] if isinstance(line, tuple) else line for line in lines]
    categorical = any(isinstance(rng, FactorRange) for rng in (fig.x_range, fig.y_range))
    leaders = None
    if not categorical:
        leaders = ColumnDataSource({"x0": [], "y0": [], "x1": [], "y1": []},
                                   name=f"{labels.source.name or 'labels'}-leaders")
        if leader_lines:
            draw_leaders(fig, leaders)
    callback = CustomJS(args={"fig": fig, "source": labels.source, "labels": labels, "glyph": glyph, "field": field,
                              "lines": list(lines), "lineFields": line_fields, "others": list(others),
                              "marks": list(marks), "bars": list(bars), "spans": list(spans), "steps": list(steps),
                              "bothSides": both_sides, "shown": shown, "shortField": short, "fallbackField": fallback,
                              "pad": pad, "leaders": leaders, "ownOnly": own_only, "keepAll": keep_all},
                        code=PLACE_LABELS, **({"name": name} if name else {}))
    own = [(fig, "inner_width"), (fig, "inner_height"), (labels.source, "data"), (labels, "text_font_size"),
           *(((glyph, "size"),) if glyph is not None else ())]
    # Each source once (one may hold two polylines, or the points of two series).
    sources = [*lines, *(other.source for other in others),
               *(mark.data_source for mark in (*marks, *bars) if mark.data_source is not labels.source)]
    outside = [*((src, "data") for src in {id(src): src for src in sources}.values()),
               # Another label's size, and a fixed label's side (the roofline's ridge label changes sides).
               *((other, prop) for other in others for prop in ("text_font_size", "text_align", "x_offset")),
               *((span, prop) for span in spans for prop in ("location", "visible")),
               # A categorical range's factors change with the data (watched); such a range is often shared
               # by several figures, and a callback on it would tie each figure to the others' models.
               *((rng, end) for rng in (fig.x_range, fig.y_range) if not isinstance(rng, FactorRange)
                 for end in ("start", "end"))]
    relay = CustomJS(args={"layout_name": name}, code=RELAY) if name else callback
    for model, prop in own:
        model.js_on_change(prop, callback)
    for model, prop in outside:
        model.js_on_change(prop, relay)
    return leaders


def draw_leaders(fig, leaders: ColumnDataSource) -> None:
    """Draw the leader lines of :func:`place_labels_in_browser`'s ``leaders`` source on ``fig``, first of its glyphs:
    under every marker and line, over the grid."""
    drawn = fig.segment("x0", "y0", "x1", "y1", source=leaders, **LEADER_STYLE)
    fig.renderers = [drawn, *(r for r in fig.renderers if r is not drawn)]


def unplaced(n: int) -> dict[str, list]:
    """Label offsets before the browser lays them out: right of each point."""
    return {"xoff": [10] * n, "yoff": [0] * n, "align": ["left"] * n}
