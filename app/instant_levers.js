// The instant redraw's levers (app/instant.py, InstantLevers): find the page's lever widgets (by the CSS class
// the server gave each, `levers`: argument -> class) and the session's one redraw callback (app/instant.js), and
// run the redraw whenever a lever's widget moves in the browser.  The widgets' Bokeh models are looked for again
// when the page's layout changes (a layout rendered again has new models for the same widgets).  A lever the page
// has no widget for (the embed strip has no KV-precision select) reads the server's current value.
export function render({ model, view }) {
  const doc = view.model.document;
  const hooked = new Map();  // widget model -> [its property, the slot connected to it]
  // The widgets' models (a layout rendered again leaves its old models in the document for a while: the one
  // shown is the one with a view), the redraw callback and the holder of its constants.
  const find = () => {
    const f = {redraw: null, holder: null, w: {}, all: []};
    for (const m of doc.all_models) {
      if (m.name === "instant-redraw") { f.redraw = m; }
      else if (m.name === "instant-constants") { f.holder = m; }
      const css = m.css_classes;
      if (!Array.isArray(css) || css.length === 0) { continue; }
      for (const [arg, cls] of Object.entries(model.levers)) {
        if (!css.includes(cls)) { continue; }
        f.all.push(m);
        const shown = window.Bokeh?.index?.find_one?.(m) != null;
        if (shown || !(arg in f.w)) { f.w[arg] = m; }
      }
    }
    return f;
  };
  const read = (w, H) => {
    const id = (name, label) => (name in H.options && label in H.options[name]) ? H.options[name][label] : label;
    const value = (arg, name, get) => w[arg] === undefined ? H.current[name] : get(w[arg]);
    // A stop slider whose stops the server has not confirmed yet (a value just added elsewhere): wait.
    const stop = (arg) => w[arg] === undefined ? H.current[arg]
      : (w[arg].end === H.stops[arg].length - 1 ? H.stops[arg][w[arg].value] : undefined);
    return {batch: stop("batch"), context: stop("context"), spec_k: value("spec_k", "spec_k", (x) => x.value),
            weight_dtype: value("weight", "weight_dtype", (x) => id("weight_dtype", x.value)),
            kv_dtype: value("kv", "kv_dtype", (x) => id("kv_dtype", x.value)),
            gqa: value("gqa", "gqa", (x) => x.active)};
  };
  const run = (source) => {
    const {redraw, holder, w} = find();  // once per move: the redraw reads these widgets
    if (redraw === null || holder === null) { return; }
    holder._instant_read = (H) => read(w, H);
    redraw.execute(source);
    // From now on a server update is redrawn from the widgets too, those shown when it lands.
    holder._instant_read = (H) => read(find().w, H);
  };
  const hook = () => {
    for (const m of find().all) {
      if (hooked.has(m)) { continue; }
      const property = m.properties.value ?? m.properties.active;
      const slot = () => run(m);
      property.change.connect(slot);
      hooked.set(m, [property, slot]);
    }
  };
  let pending = false;
  const relayout = (event) => {
    if (pending || !["children", "tabs", "child", "objects"].includes(event.attr)) { return; }
    pending = true;
    setTimeout(() => { pending = false; hook(); }, 0);
  };
  hook();
  doc.on_change(relayout);
  model.on("remove", () => {
    doc.remove_on_change(relayout);
    for (const [property, slot] of hooked.values()) { property.change.disconnect(slot); }
    hooked.clear();
  });
  return document.createElement("span");
}
