// BokehJS 3.9.2's legend rebuilds all its entries (a <div> and a small canvas each) whenever any model its
// items reach changes, data sources included: every slider move redrew the roofline's data and rebuilt its
// ten legend entries: on the offline page ~5 ms of a ~22 ms repaint and ~1 ms of the data write (median of 30
// key presses, bench_lab.py's measure, 3 runs with and without, 2026-12-01).
// Installed once per page, first thing in the roofline's redraw (served: app/instant.py; offline:
// app/standalone.py), it skips that rebuild when nothing an entry shows has changed: the items, their
// labels and visibility, and whether their renderers are hidden or muted (the entry's greyed look).  The
// glyph swatches are still repainted with the chart (the legend stays on the chart's canvas level), and a
// legend rendered afresh (a change to the legend itself, a tab shown again) is built as before.  Only for
// the BokehJS it was written against: another version keeps its own code.
if (globalThis.__rooflineLegendPatch === undefined && typeof Bokeh !== "undefined" && Bokeh.version === "3.9.2") {
  globalThis.__rooflineLegendPatch = "3.9.2";
  const proto = Bokeh.require("models/annotations/legend").LegendView.prototype;
  const renderItems = proto._render_items, render = proto.render;
  const shown = (view) => JSON.stringify(view.model.items.map((item) => [
    item.id, item.visible, item.get_labels_list_from_label_prop(),
    item.renderers.map((r) => [r.id, r.visible, r.muted])]));
  proto.render = function () {
    this.__rendering = true;
    try { return render.call(this); } finally { this.__rendering = false; }
  };
  proto._render_items = function () {
    const now = shown(this);
    if (!this.__rendering && this.entries != null && this.entries.length > 0 && this.__shown === now) { return; }
    this.__shown = now;
    return renderItems.call(this);
  };
}
