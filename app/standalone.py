"""The offline page: one self-contained HTML file, no server, no network.

The roofline, its ladder and the readouts are the lab's own Bokeh figure
(:class:`app.roofline_view.RooflineView`), written with Bokeh's resources inline
(``bokeh.embed.file_html`` with ``INLINE``).  The reader can still move batch,
speculation depth, weight and KV precision, context and GQA: a CustomJS callback
re-evaluates the scenario in the browser from constants exported here (the
model's shape, the GPU's roofs) with the same formulas as :mod:`core.scenario`,
which ``tests/browser/test_standalone.py`` checks over random scenarios.

The readouts, their "show your work" derivation and the memory bar are written
in the browser as the served lab writes them (``app/offline_readouts.js`` ports
``core/explain.py``'s derivation, ``app/readouts.py`` and ``app/memory_view.py``;
numbers are formatted as ``core/units.py`` does by ``app/units.js``); the labels
and formulas come from Python.  The chart shows the same request's other phase,
the prefill of one prompt, as the served chart does.

The model and the GPU are fixed when the page is written, as are the phase
(decode), the prompt length, the reserve, the capacity convention and the split
(TP, PP, EP and replicas, :data:`core.scenario.ONE_GPU`): the page evaluates the
scenario at its split, one GPU's share as the served lab does, words its readouts
as the served lab does for that split, and says in its header that the split was
fixed when the page was written.  Step 7's readouts (GPUs, per-GPU shares,
communication, aggregate throughput, the smallest split that fits, costs at the
price per GPU-hour the page was written with) are worked in the browser too.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from urllib.parse import urlsplit

import param
from bokeh.document import Document
from bokeh.embed import file_html
from bokeh.events import DocumentReady
from bokeh.layouts import column, row
from bokeh.models import Checkbox, CustomJS, CustomJSTickFormatter, Div, Select, Slider
from bokeh.resources import Resources

from core.explain import p_note, quantities
from core.levers import Lever
from core.overhead import GRAPH_NODE_GAP_S, KERNELS_OUTSIDE_LAYERS, KERNELS_PER_LAYER, LAUNCH_LATENCY_S, STEP_FUSION
from core.permalink import config_for_link, to_query
from core.precision import KV_PRECISIONS, PRECISIONS, roof_mix
from core.profiles import deployment
from core.scenario import DEPLOYMENT_LEVERS, LEVERS, ONE_GPU, Scenario, ScenarioResult, stored_hint
from core.units import GiB, fmt_count, fmt_ridge

from .a11y import REPAIRS
from .controls import STOP_LABEL_JS, stop_label
from .memory_view import MIN_LABEL_PERCENT, PARTS, SAID
from .readouts import READOUT_KEYS, approximate_html
from .roofline_view import DOES_NOT_FIT, OF_PEAK, X_MARGIN, X_RANGE, Y_MARGIN, Y_RANGE, RooflineView, ridge_text
from .style import PALETTE, STYLESHEET

# The browser-side model (core's step on its profile, shared with the served lab's instant redraw) and the
# chart's range fitting, then the page's update, fed constants from Python.
MODEL_SCRIPT = Path(__file__).with_name("step.js")
FIT_SCRIPT = Path(__file__).with_name("chart_fit.js")
SCRIPTS = tuple(Path(__file__).with_name(name) for name in ("units.js", "offline_readouts.js", "standalone.js"))

#: The served readouts the page shows: every one, Step 7's included (GPU counts, per-GPU shares, communication,
#: aggregate throughput, the smallest split that fits, prices).  The split and the price per GPU-hour are fixed
#: when the page is written and travel in the constants (``split``, ``stage_parts``, ``kv_gpu``,
#: ``gpu_hour_price``); the smallest split that fits is ``evaluate()``'s own search over the model's splits
#: (``splits``, which the warnings name too), so none needs the served lab.
OFFLINE_READOUT_KEYS = READOUT_KEYS


class BokehOnlyInline(Resources):
    """Bokeh's own JavaScript and CSS, inline, and nothing else.

    Bokeh adds the external scripts of every model class registered in the
    process; once Panel is imported (the served lab), that includes a script
    fetched from a relative URL, which a page opened from disk cannot load.
    This page uses Bokeh models only, so only Bokeh's bundles go in.
    """

    def __init__(self, components=None):
        # Bokeh itself leaves out the components the page does not use (via clone).
        super().__init__(mode="inline", components=components)

    def clone(self, *, components=None):
        return BokehOnlyInline(components=components if components is not None else list(self.components))

    def _collect_external_resources(self, resource_attr):
        return []


def constants(scenario: Scenario, result: ScenarioResult) -> dict:
    """What the browser needs to re-evaluate the scenario (``app/step.js``): the step profile of each weight
    format (:meth:`core.step.StepProfile.to_json` less its splits, which are the model's and sent once as
    ``splits``), the whole model's cache, labels, formulas and colours."""
    g, m, dep = result.gpu, result.model, result.deployment
    profiles, sparse, per_weight, formulas, formulas_mha, reason, weight_parts, labels = {}, {}, {}, {}, {}, {}, {}, {}
    mixes: dict[str, str] = {}
    ridges: dict[str, list[str]] = {}
    fixed = {name: getattr(scenario, name) for name in DEPLOYMENT_LEVERS if name != "weight_dtype"}
    derived = quantities(result)
    # The derivation's formulas depend on the weight format only as stored or not (core/explain.py's
    # ``stored``), and on GQA only with MLA (its decode attends to the latent, or to the keys and values GQA off
    # expands): two sets, or four, not one per format (tests/browser/test_standalone.py checks every format's
    # own against them, tests/unit/test_model_caches.py the GQA-off ones of MLA and other models).
    by_kind = {(result.weight_dtype == "stored", result.gqa): {key: q.formula for key, q in derived.items()}}

    def kind_formulas(wd: str, gqa: bool) -> dict:
        kind = (wd == "stored", gqa)
        if kind not in by_kind:
            other = quantities(scenario.clone(weight_dtype=wd, gqa=gqa).evaluate())
            by_kind[kind] = {key: q.formula for key, q in other.items()}
        return by_kind[kind]

    for wd in LEVERS["weight_dtype"].parameter.objects:
        at = dep if wd == result.weight_dtype else deployment(m, g, weight_dtype=wd, **fixed)
        profiles[wd] = {key: value for key, value in at.profile.to_json().items() if key != "splits"}
        sparse[wd] = g.sparse_flop_per_s.get(at.roof)
        per_weight[wd], reason[wd], labels[wd] = at.weights.bytes_per_weight, at.roof_reason, at.weights.label
        mixes[wd] = roof_mix(at.roof, at.sixteen_bit_share)
        ridge = at.profile.peak_flop_per_s / at.profile.bandwidth  # the ridge depends on the format alone here
        ridges[wd] = [fmt_ridge(ridge, work=True), fmt_ridge(ridge), ridge_text(ridge, mixes[wd])]
        # Weights held per GPU, by part (embedding, head, the rest, experts): stored, each group's own bytes.
        weight_parts[wd] = list(m.stored_bytes_per_param_parts() if wd == "stored" else (per_weight[wd],) * 4)
        formulas[wd] = kind_formulas(wd, True)
        off = kind_formulas(wd, False) if m.mla else formulas[wd]  # a second evaluation only where it differs
        formulas_mha[wd] = {key: text for key, text in off.items() if text != formulas[wd][key]}
    return {
        "model_name": m.name,
        "gpu_name": g.name,
        "n_params": m.n_params,
        "n_active": m.n_active_params,
        "moe": bool(m.moe),
        "indexer": bool(m.indexer),  # the flops work names a sparse-attention indexer's FLOP with attention's
        "profiles": profiles,
        # Every weight format's profile has the model's splits (they count parameters, not bytes: core.profiles'
        # _splits): sent once, not eight times (72 KB each for a hybrid of 2,048 layers).
        "splits": dep.profile.to_json()["splits"],
        "bytes": {p.id: p.bytes_per_element for p in PRECISIONS.values()},
        "bytes_per_weight": per_weight,
        # the does-not-fit warning's end, by weight format (core.scenario.stored_hint)
        "stored_hint": {wd: stored_hint(m, wd, p, per_weight["stored"]) for wd, p in per_weight.items()},
        "prompt_len": scenario.prompt_len,
        "max_context": m.max_context,
        "max_batch": LEVERS["batch"].parameter.bounds[1],
        "sparse": sparse,
        "bandwidth": g.hbm_bandwidth,
        "capacity": result.capacity_bytes,
        "reserve": result.reserve_bytes,
        "acceptance": result.acceptance,
        "batch_stops": _stops(LEVERS["batch"], scenario.batch),
        "context_stops": _stops(LEVERS["context"], scenario.context),
        # the launch time's product, as core/explain.py writes it (the page does not move CUDA graphs)
        "cuda_graphs": dep.cuda_graphs, "launch_latency_s": LAUNCH_LATENCY_S, "graph_gap_s": GRAPH_NODE_GAP_S,
        "kernels_outside_layers": KERNELS_OUTSIDE_LAYERS, "kernels_per_layer": len(KERNELS_PER_LAYER[STEP_FUSION]),
        # The split, fixed when the page is written (its levers move B, k, α, S, formats and GQA only): what the
        # derivation's words need beside evaluate()'s numbers (core/explain.py's split, one_copy, per_gpu_note).
        "split": {"tp": result.tp, "pp": result.pp, "ep": result.ep, "replicas": result.replicas,
                  "gpus_per_replica": result.gpus_per_replica, "gpus_total": result.gpus_total},
        # What the split makes doubtful (core.profiles' _plan): the same whatever the page's levers.
        "split_warnings": list(dep.warnings),
        # Step 7's words (core/explain.py's _many_gpus, _weights_per_gpu, _kv_per_gpu): the GPUs' link, what one
        # GPU of each stage holds (core.parallelism's stage_parts), the KV terms a stage's GPU holds, the price.
        "interconnect": result.interconnect,
        "n_layers": m.n_layers,
        "n_experts": m.moe.n_experts if m.moe else 0,
        "stage_parts": [_stage_parts(dep.plan.stage_parts(i)) for i in range(result.pp)],
        "weight_parts": weight_parts,
        "kv_gpu": {"gqa" if gqa else "mha": _kv_gpu(result, gqa) for gqa in (False, True)},
        "gpu_hour_price": result.gpu_hour_price,
        "readout_keys": [key for key in OFFLINE_READOUT_KEYS if key in derived],  # the split is this page's
        "labels": {key: q.label for key, q in derived.items()},
        "formulas": formulas,  # with GQA on; with it off, formulas_mha's keys replace theirs
        "formulas_mha": formulas_mha,
        "roof_reason": reason,
        "roof_mix": mixes,  # "FP4 + BF16 mix" beside the Compute roof readout's value, or ""
        # the ridge as the readout's work and value print it, and the chart's label (fmt_ridge, ridge_text)
        "ridge": ridges,
        # the chart title's "p = …" and "KV …" (app/roofline_view.py's weight_levers and kv_levers)
        "weight_labels": labels,
        "kv_labels": {kv: PRECISIONS[kv].label for kv in KV_PRECISIONS},
        "of_peak": OF_PEAK,
        "does_not_fit": DOES_NOT_FIT,
        "p_note": {wd: p_note(m, wd) for wd in LEVERS["weight_dtype"].parameter.objects},
        "kv_formula": {kv: [m.kv_formula(PRECISIONS[kv].bytes_per_element, gqa) for gqa in (False, True)]
                       for kv in KV_PRECISIONS},
        # the model's note when its config has keys the lab does not model: the memory bar's verdict says "≈", the
        # chart's title "≈ approximate".  Without "(see what the lab read)": the page has no Bring your own tab.
        "approximate": m.approximate_note(see=""),
        "memory_parts": PARTS,
        "memory_min_label_percent": MIN_LABEL_PERCENT,
        "memory_said": [SAID[False], SAID[True]],
        "colors": PALETTE,
    }


def _stage_parts(st) -> dict:
    """What one GPU of a pipeline stage holds, by how TP divides it (:class:`core.parallelism.StageParts`)."""
    return {name: getattr(st, name) for name in ("stage", "first", "layers", "embedding", "head", "split", "experts",
                                                  "replicated", "experts_per_layer")}


def _kv_gpu(r: ScenarioResult, gqa: bool) -> dict:
    """The KV terms behind "KV per token per GPU" (core/explain.py ``_kv_per_gpu``) with GQA on or off: each term's
    layers in each pipeline stage, its bytes per token as ``elements·p_kv + own`` (an indexer's FP8 keys do not
    scale with p_kv) and how TP divides it; the KV heads per GPU and the replication note."""
    m, plan = r.model, r.deployment.plan
    counts = plan.stage_layers()
    starts = [sum(counts[:i]) for i in range(len(counts))]
    one, two = m.kv_terms(1.0, gqa), m.kv_terms(2.0, gqa)
    shares = plan.stage_term_shares(one, gqa)  # per stage, per term: the fraction of the term one GPU holds
    terms = []
    for i, (t1, t2) in enumerate(zip(one, two, strict=True)):
        here = [sum(1 for j in t1.layer_indices if a <= j < a + n) for a, n in zip(starts, counts, strict=True)]
        terms.append({"here": here, "layers": t1.layers, "stage_shares": [float(sh[i]) for sh in shares],
                      "elements": t2.bytes_per_token - t1.bytes_per_token,
                      "own": 2 * t1.bytes_per_token - t2.bytes_per_token, "share": t1.tp_share})
    h_kv = m.n_kv_heads if gqa else m.n_heads
    replicated = ", replicated on every TP GPU" if all(t.tp_share == "replicated" or not t.bytes_per_token
                                                        for t in one) else (
        " (replicated: TP > h_kv)" if r.tp > h_kv else "")
    return {"terms": terms, "h_kv": h_kv, "heads_per_gpu": r.deployment.kv_heads_per_gpu[gqa],
            "replicated": replicated}


def _stops(lever: Lever, value: int) -> list[int]:
    return sorted({*lever.stops, value})


#: The levers the offline page can move (the rest are fixed when the page is written).
PAGE_LEVERS = ("batch", "spec_k", "acceptance", "context", "weight_dtype", "kv_dtype", "gqa")



#: The page's roots: the controls, then the chart with the readouts beside it (below it on a narrow window).
PAGE_TEMPLATE = """
{% block preamble %}<meta name="viewport" content="width=device-width, initial-scale=1">{% endblock %}
{% block contents %}
<div>{{ embed(roots.controls) }}</div>
<div style="display: flex; flex-wrap: wrap; align-items: flex-start">
  <div style="flex: 1 1 480px; min-width: 300px; max-width: 100%">{{ embed(roots.roofline) }}</div>
  <div style="flex: 0 1 400px; max-width: 100%">{{ embed(roots.side) }}</div>
</div>
{{ embed(roots.results) }}
{% endblock %}
"""

#: Where the full lab is, from the page served beside it (README, *Serving a class*: ``/class/<page>.html``
#: next to ``/app``).  ``python -m app export --lab-url`` gives another (a page hosted on a docs site).
FULL_LAB = "../app"


def check_lab_url(text: str) -> str:
    """The full lab's address for an exported page's link: an http(s) URL or a path, as given.

    Raises:
        ValueError: another scheme (``javascript:``), a query or a fragment, a space, a quote or an angle bracket,
            over 2,000 characters, or not text.
    """
    if not isinstance(text, str):
        raise ValueError(f"--lab-url: an http(s) address or a path, not {type(text).__name__}")
    if len(text) > 2000 or any(c.isspace() or c in "\"'<>`" or not c.isprintable() for c in text):
        raise ValueError("--lab-url: an http(s) address or a path, without spaces, quotes or angle brackets")
    parts = urlsplit(text)
    # (the page appends "?" and the scenario's query: a query or a fragment of its own would break the link)
    if parts.scheme not in ("", "http", "https") or (parts.scheme and not parts.netloc) or parts.query \
            or parts.fragment:
        raise ValueError(f"--lab-url {text[:40]!r}: accepted an http(s) address (https://lab.example.org/app) or "
                         "a path (../app)")
    return text


def full_lab_link(scenario: Scenario, config: str | None = None, path: str = FULL_LAB) -> dict | None:
    """What the page needs to link its scenario, as moved by the reader, into the full lab.

    Args:
        config: the config.json text of a session's own model: the link carries it as ``config=``
            (:func:`core.permalink.config_for_link`), which the lab reads again.
        path: the full lab's address, relative to the page or absolute (:func:`check_lab_url`); "" for none.

    Returns:
        ``{"path": FULL_LAB, "query": the permalink query of the page's scenario, "levers": {name: codec}}``,
        each codec the lever's flag and how its value is written (:meth:`core.levers.Lever.encode`); or None
        for a pasted model whose config is not given or is too long for a link (a scenario file carries it), and
        where ``path`` is "".
    """
    if not path:
        return None
    query = to_query(scenario.levers(), custom_gpu=scenario.custom_gpu())
    if scenario.catalogue.is_own(scenario.model):
        value = config_for_link(config) if config is not None else None
        if value is None:
            return None
        query["config"] = value

    def codec(lever: Lever) -> dict:
        p = lever.parameter
        kind = ("bool" if isinstance(p, param.Boolean) else "int" if isinstance(p, param.Integer)
                else "number" if isinstance(p, param.Number) else "text")
        return {"flag": lever.flag, "kind": kind, "negated": lever.negated, "scale": lever.scale}

    return {"path": path, "query": query, "levers": {name: codec(LEVERS[name]) for name in PAGE_LEVERS}}


def split_words(r: ScenarioResult) -> str:
    """The split the page was written at, in words: ``"TP = 2, PP = 1, EP = 1, one replica (2 GPUs)"``.

    The values are those evaluated (a TP above the query heads is evaluated at their count, and the warnings say
    so)."""
    gpus = "one GPU" if r.gpus_total == 1 else f"{fmt_count(r.gpus_total)} GPUs"
    replicas = "one replica" if r.replicas == 1 else f"{fmt_count(r.replicas)} replicas"
    levels = ", ".join(f"{LEVERS[n].flag.upper()} = {fmt_count(getattr(r, n))}" for n in ONE_GPU if n != "replicas")
    return f"{levels}, {replicas} ({gpus})"


def _widget(lever: Lever, scenario: Scenario, stops: list[int] | None):
    """A Bokeh widget for ``lever``, generated from the lever table like the served controls."""
    p, value = lever.parameter, getattr(scenario, lever.name)
    if stops:
        return Slider(title=p.label, start=0, end=len(stops) - 1, step=1, value=stops.index(value),
                      css_classes=[lever.css], width=260,
                      # The served sliders' labels and formatter (app/controls.py): one format on both pages.
                      format=CustomJSTickFormatter(args={"labels": [stop_label(v) for v in stops]},
                                                   code=STOP_LABEL_JS))
    if isinstance(p, param.Boolean):
        return Checkbox(label=p.label, active=bool(value), css_classes=[lever.css])
    if isinstance(p, param.Selector):
        return Select(title=p.label, value=value, width=160, css_classes=[lever.css],
                      options=[(v, k) for k, v in p.names.items()] if p.names else list(p.objects))
    lo, hi = p.get_soft_bounds()
    return Slider(title=p.label, start=lo, end=max(hi, value), step=p.step or 1, value=value,
                  css_classes=[lever.css], width=200)


def standalone_html(scenario: Scenario, config: str | None = None, lab_url: str = FULL_LAB) -> str:
    """The page for ``scenario`` as one HTML string (Bokeh resources inline).

    Args:
        scenario: what the page shows (decode, at its split; a session's own GPU and model travel).
        config: the config.json text of the scenario's model when it is a session's own (a pasted config): the
            page's link to the full lab carries it (:func:`full_lab_link`).
        lab_url: where the page's link to the full lab goes (:func:`check_lab_url`; "" for no link): beside the
            page by default, as a class page is served.

    Raises:
        ValueError: a ``lab_url`` :func:`check_lab_url` refuses.

    Every name written into the page is escaped, so a custom GPU or model named
    ``<img onerror=…>`` shows as text.
    """
    # the page shows decode at the scenario's split; a session's own GPU and model travel
    scenario = scenario.clone(phase="decode")
    result = scenario.evaluate()
    c = constants(scenario, result)
    view = RooflineView(result)
    c["other_phase_label"] = view.other_phase.data["label"][0]  # the served chart's words for the same point
    c["y_range"], c["y_margin"] = list(Y_RANGE), Y_MARGIN  # the page widens it as the served chart does
    c["x_end"], c["x_margin"] = X_RANGE[1], X_MARGIN  # and the x range, past the farthest drawn point
    c["full_lab"] = full_lab_link(scenario, config, check_lab_url(lab_url))
    view.other_phase_item.label = {"value": f"other phase: {c['other_phase_label']}"}
    fig = view.figure
    fig.sizing_mode = "stretch_width"
    fig.min_width = 300  # a phone-width window: the legend takes one column there (RooflineView)
    # Pins and the efficiency band are served-lab features.
    legend = fig.legend[0]
    legend.items = [item for item in legend.items if not item.label.value.startswith("60%")]
    stops = {"batch": c["batch_stops"], "context": c["context_stops"]}
    widgets = {name: _widget(LEVERS[name], scenario, stops.get(name)) for name in PAGE_LEVERS}
    # The readouts and the memory bar: the served lab's HTML and stylesheet, written by the page's script.
    show_work = Checkbox(label="Show your work (formulas with values)", active=True, css_classes=["show-work"])
    # Fixed widths beside the chart, capped at the window's on a phone (the row wraps them below the chart).
    readouts = Div(text="", name="readouts", stylesheets=[STYLESHEET], width=380,
                   styles={"max-width": "calc(100% - 10px)"})  # its margins inside the window
    memory = Div(text="", name="memory", stylesheets=[STYLESHEET], sizing_mode="stretch_width",
                 margin=(24, 10, 5, 10))
    # A config key the lab does not model: the note heads the numbers, as in the served lab (its model is fixed).
    approximate = approximate_html(result.model, see="")  # the page has no Bring your own tab to point to
    side = column(*([Div(text=approximate, name="approximate", stylesheets=[STYLESHEET], width=380,
                         styles={"max-width": "calc(100% - 10px)"})] if approximate else []),
                  memory, show_work, readouts, width=400, styles={"max-width": "100%"}, name="side")
    results = Div(text="", visible=False, name="results", render_as_text=True)
    # Served beside the lab (a class page), a link opens the reader's scenario there: pins, Compare, many GPUs.
    link = Div(text="", name="full-lab", css_classes=["full-lab"], visible=False)
    title = f"{result.model.name} on {result.gpu.name}"
    header = Div(
        text=(
            f"<h2 style='margin:4px 0'>Roofline Lab — {escape(title)}</h2>"
            "<div style='font-size:13px;color:#444'>A self-contained copy of the lab: no server, no network. "
            "I = 2·B·k/p; ridge point P_peak/BW; attainable min(P_peak, BW·I), under the overhead ceiling "
            "FLOP / t_launch of the step's kernel launches; KV cache 2·L·h_kv·d_head·S·B·p_kv. "
            f"Capacity {result.capacity_bytes / GiB:,.1f} GiB, reserve {result.reserve_bytes / GiB:,.1f} GiB"
            + (" per GPU" if result.gpus_total > 1 else "") + ", "
            f"prompt {scenario.prompt_len:,} tokens (the prefill point). "
            f"{escape(split_words(result))}, kernels launched "
            + ("as one CUDA graph a step" if result.deployment.cuda_graphs else "one by one, without CUDA graphs")
            + ": fixed when the page was written; open the served lab to change them, and for what an engine is "
            "expected to deliver (the page gives the roofline's ceilings only).</div>"
        )
    )
    args = dict(
        C=c,
        batch=widgets["batch"],
        spec_k=widgets["spec_k"],
        acceptance=widgets["acceptance"],
        context=widgets["context"],
        weight=widgets["weight_dtype"],
        kv=widgets["kv_dtype"],
        gqa=widgets["gqa"],
        show_work=show_work,
        readouts=readouts,
        memory=memory,
        results=results,
        link=link,
        fig=fig,
        ladder=view.ladder,
        kv_ladder=view.kv_ladder,
        point=view.point,
        point_kv=view.point_kv,
        other_phase=view.other_phase,
        overhead=view.overhead,
        roof=view.roof,
        sparse=view.sparse_roof,
        ridge=view.ridge,
        span=view.ridge_span,
        # keys shown only while their series draws something (RooflineView's optional items)
        rungs_item=view.rungs_item,
        comm_item=view.comm_item,
        sparse_item=view.sparse_item,
    )
    code = "\n".join(path.read_text(encoding="utf-8") for path in (MODEL_SCRIPT, FIT_SCRIPT, *SCRIPTS))
    callback = CustomJS(args=args, code=code)
    for widget in [*widgets.values(), show_work]:
        widget.js_on_change("active" if isinstance(widget, Checkbox) else "value", callback)
    # Four roots, placed by PAGE_TEMPLATE: a rewrite of the readouts or the memory bar makes BokehJS lay out
    # again the root it is in, and in one root with the chart that meant measuring the chart's axes and legend
    # again on every move.
    doc = Document()
    controls = column(header, link, row(*widgets.values(), sizing_mode="stretch_width", styles={"flex-wrap": "wrap"}),
                      sizing_mode="stretch_width", name="controls")
    for root in (controls, fig, side, results):
        doc.add_root(root)
    # The browser evaluates once on load, so the page shows its own numbers from the start.
    doc.js_on_event(DocumentReady, callback)
    # The served lab's accessibility repairs (slider handles named and saying the value their title shows, …).
    doc.js_on_event(DocumentReady, CustomJS(code=REPAIRS + "\nkeepFixing();"))
    return file_html(doc, BokehOnlyInline(), title=f"Roofline Lab — {title}", template=PAGE_TEMPLATE)
