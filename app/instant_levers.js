// A lever's widget moved (run by its Panel jscallback): remember how to read the levers from the page's
// widgets, then run the session's one redraw callback (app/instant.js, `redraw`).  A widget the page
// does not have (the embed strip has no KV-precision select) reads the server's current value.
const w = {batch: typeof batch === "undefined" ? null : batch, context: typeof context === "undefined" ? null : context,
           spec_k: typeof spec_k === "undefined" ? null : spec_k, weight_dtype: typeof weight === "undefined" ? null : weight,
           kv_dtype: typeof kv === "undefined" ? null : kv, gqa: typeof gqa === "undefined" ? null : gqa};
holder._instant_read = (H) => {
  const id = (name, label) => (name in H.options && label in H.options[name]) ? H.options[name][label] : label;
  const value = (name, get) => w[name] === null ? H.current[name] : get(w[name]);
  // A stop slider whose stops the server has not confirmed yet (a value just added elsewhere): wait.
  const stop = (name) => w[name] === null ? H.current[name]
    : (w[name].end === H.stops[name].length - 1 ? H.stops[name][w[name].value] : undefined);
  return {batch: stop("batch"), context: stop("context"), spec_k: value("spec_k", (x) => x.value),
          weight_dtype: value("weight_dtype", (x) => id("weight_dtype", x.value)),
          kv_dtype: value("kv_dtype", (x) => id("kv_dtype", x.value)), gqa: value("gqa", (x) => x.active)};
};
redraw.execute(cb_obj);
