"""The hardware view: article 000's hardware story on the catalogue's rooflines.

One param-driven :class:`HardwareView` (a ``pn.viewable.Viewer``) with five
sections, each its own Bokeh figure built once and updated in place:

* Kernel atlas: GEMM, the decode matrix-vector product, elementwise ops (and
  their fusion), naive vs FlashAttention and decode attention on the current
  GPU's roofline, with "show your work";
* Three ceilings: the overhead ceiling beside the two roofs, the three times of a
  decode step and the family of fixes that can help;
* Tiles and waves: achieved GEMM throughput against N, with padded work and waves;
* Hierarchy: SRAM, L2 and HBM roofs with attention's naive and Flash points;
* Generations: several parts' roofs with their ridges, the growth trend against
  Gholami et al. (2024), the memory-wall timeline and the sparse-headline trap;

plus the hardware tour (:data:`core.hardware_tour.HARDWARE_TOUR`).  Every number
comes from ``core`` (kernels, overhead, waves, generations, hardware); this
module only draws.  Usable standalone: ``HardwareView(gpu="h100-sxm")``.
"""

from __future__ import annotations

from html import escape

import numpy as np
import panel as pn
import param
from bokeh.core.properties import value
from bokeh.models import ColumnDataSource, HoverTool, LabelSet, Legend, LegendItem, Span
from bokeh.plotting import figure

from core.generations import (
    ARTICLE_WORKLOADS,
    FLAGSHIPS,
    GENERATIONS,
    GHOLAMI_RATES_PER_2Y,
    GHOLAMI_SOURCE,
    MEMORY_WALL_TIMELINE,
    catalogue_trend,
    compounded_text,
    growth,
)
from core.hardware import load_catalogue
from core.hardware_tour import HARDWARE_BASE, HARDWARE_TOUR, KERNEL_FAMILIES, SECTIONS
from core.kernels import (
    ELEMENTWISE,
    attention_compulsory_bytes,
    decode_attention,
    decode_matvec,
    flash_attention,
    fuse,
    gemm,
    naive_attention,
)
from core.overhead import (
    FIXES,
    GRAPH_NODE_GAP_S,
    LAUNCH_LATENCY_SOURCE,
    fixes_that_cannot_help,
    kernels_per_step,
    three_ceilings,
)
from core.roofline import attainable_flop_per_s
from core.units import TFLOP, MiB, fmt_bandwidth, fmt_flop, fmt_sig, product_digits
from core.waves import TILES, gemm_quantisation, sm_count_for_waves, staircase

from .controls import number_box
from .label_layout import place_labels_in_browser, unplaced
from .present import CARD_HEADER_CSS, PRESENT_CONTROLS, present_figure, wrap_title
from .style import LAST_TICK_ROOM, ONLY_THE_ACTIVE_TAB, describe_chart, series_style, tab_placeholder, text_color
from .style import PALETTE as LAB_PALETTE
from .tour_view import TourKeys, key_move
from .turns import later

X = np.logspace(-2, 5, 120)  # FLOP/byte grid for roofs
#: Each kernel family's (colour, marker) on the atlas: shape as well as colour (naive attention and the elementwise
#: ops were red and green, one olive under deuteranopia).
KERNEL_STYLES = {family: series_style(i)[::2] for i, family in enumerate(
    ("gemm", "matvec", "elementwise", "naive", "flash", "decode_attention"))}
#: The outline (px) of the kernels a tour step speaks of (the others': 1).
FOCUS_LINE_WIDTH = 3.5
#: The Kernel atlas's groups of levers (card titles) and the kernel families each moves.
ATLAS_GROUPS = {"GEMM C = AB": ("gemm",), "Decode matrix-vector (the main lab's B)": ("matvec",),
                "Elementwise ops": ("elementwise",), "Attention (one head)": ("naive", "flash"),
                "Decode attention over the KV cache": ("decode_attention",)}
#: Each memory level's (colour, dash) on the hierarchy chart, and each attention point's (colour, marker).
LEVEL_STYLES = {"HBM": (LAB_PALETTE["roof"], "solid"), "L2": ("#0072B2", "dashed"), "SRAM": ("#CC79A7", "dotdash")}
ATTENTION_STYLES = {"naive": ("#D55E00", "diamond"), "flash": ("#CC79A7", "inverted_triangle"),
                    "once": ("#56B4E9", "star")}
#: The trend chart's series: (colour, dash of the Gholami et al. line, marker of the catalogue's points).
TREND_STYLES = {"peak FLOP/s": ("#D55E00", "dashed", "triangle"), "DRAM bandwidth": ("#0072B2", "dotted", "circle"),
                "interconnect bandwidth": ("#009E73", "dotdash", "square")}
CSS = """
.hw-work { font-family: ui-monospace, monospace; font-size: 12px; line-height: 1.45; }
.hw-work b { font-family: sans-serif; } .hw-decision { font-size: 14px; }
.hw-decision .bind { font-weight: bold; color: #b00020; } .hw-card { background: #fff8e1;
 border-left: 4px solid #ff9800; padding: 6px 12px; font-size: 14px; } .hw-card .src { color: #777; font-size: 12px; }
:host(.present), :host(.present) .hw-work, :host(.present) .hw-decision, :host(.present) .hw-card,
:host(.present) .hw-card .src { font-size: 18px; line-height: 1.3; }
:host(.present) .hw-card h4 { font-size: 20px; margin: 2px 0 4px 0; }
.hw-timeline { font-size: 13px; line-height: 1.4; margin: 4px 0; padding-left: 18px; list-style: none; }
.hw-timeline .source { color: #555; font-size: 12px; }
:host(.present) .hw-timeline, :host(.present) .hw-timeline .source { font-size: 18px; }
"""
TOUR_BUTTON_WIDTHS = (110, 210, 130)  # px: previous, next (or start), leave
#: Present mode's height (px) of each section's main chart: at 1280 × 720 its x axis stays above the fold under the
#: lab's header, the tour's row and a tour card of four lines.
PRESENT_CHART_HEIGHT = 370
#: Lower in present mode: the Tiles section's two charts (staircase and waves) under their readout of three lines,
#: the hierarchy chart with its caption of three lines, and the three ceilings' chart under its decision of two
#: lines, so that all of it shows above the fold at 1280 × 720 under a tour card of three lines (four at step 6).
PRESENT_HEIGHTS = {"hw-stairs": 185, "hw-waves": 100, "hw-hierarchy": 280, "hw-ceilings": 345}
#: Present mode's legend columns, where not one: the three ceilings' key in two, a row less under its chart.
PRESENT_LEGEND_COLUMNS = {"hw-ceilings": 2}
TOUR_TITLE = "<b>Hardware tour</b> — article 000's hardware sections"
#: Present mode's controls (the tour's buttons, each section's levers and headings, the section tabs): text at
#: 18 px, as the main tour's (app/lab.css ``.present``).  Every control carries this sheet from its first render and
#: present mode switches its ``present`` class: a stylesheet added to a control already in the browser never reached
#: it (the tab opened by a click, or the toggle pressed on the tab, left the 12-px headings).
PRESENT_CONTROLS_CSS = ":host(.present), :host(.present) * { font-size: 18px !important; }"  # over the widget's rules
LABELS = {
    "gpu": "Accelerator", "batch": "B (sequences per step)", "matvec_n": "N (rows of W)",
    "matvec_k": "K (columns of W)",
    "gemm_m": "M", "gemm_k": "K", "gemm_n": "N", "ew_chain": "Ops, in order", "fused": "Fuse them into one kernel",
    "ew_elements": "Elements in the tensor", "attn_n": "Sequence length N", "attn_d": "Head dimension d",
    "kv_context": "Context S (cached tokens)", "kv_heads": "KV heads h_kv", "step_params": "Parameters read per step",
    "layers": "Decoder layers", "launch_latency_us": "Launch latency (µs per kernel)",
    "fusion_level": "Kernels per layer",
    "cuda_graphs": "Capture the step as one CUDA graph", "tile": "Output tile", "wave_m": "M (GEMM rows)",
    "wave_k": "K", "n_min": "N from", "n_max": "N to", "n_probe": "Readout at N", "generations": "Parts to overlay",
    "show_sparse": "Show the 2:4-sparsity headline roof",
}
#: A section's charts take at least this width (px) beside its 300-px controls; in a narrower column (the lab's
#: normal layout at 1280 px left them about 200 px; a phone 80) they go under the controls, at the column's width.
CHART_MIN_WIDTH = 480
#: The overhead ceiling's key, without and with the step captured as one CUDA graph (core.overhead.overhead_time).
OVERHEAD_LEGEND = {False: "overhead ceiling: FLOPs / (kernels × launch)",
                   True: "overhead ceiling: FLOPs / (launch + kernels × node gap)"}
MAX_STAIRS = 4000  # points on the staircase chart
SENTINEL = 1e-30  # Bokeh log axes cannot show zero
FALLBACK_SRAM = 228 * 1024  # H100's shared memory per SM, used (and said) where a part publishes none
SRAM_NOTE = ("{gpu} publishes no per-SM SRAM size: FlashAttention's tiling assumes an H100's 228 KiB, "
             "so its point is an illustration, not this part's figure.")


def sram_bytes(gpu) -> float:
    """FlashAttention's SRAM size M for ``gpu`` in bytes (the H100's where the part publishes none; see SRAM_NOTE)."""
    return gpu.sram_per_sm_bytes or FALLBACK_SRAM


#: A kernel's name in brief, by its family, where its full name finds no clear place on the atlas.
BRIEF_NAMES = {"gemm": "GEMM", "matvec": "decode matvec", "naive": "naive attention", "flash": "FlashAttention",
               "decode_attention": "decode attention"}


def brief_name(name: str, family: str) -> str:
    """A kernel's name without its sizes: ``"GEMM"``, or an elementwise op's own (``"LayerNorm × 8,388,608"`` →
    ``"LayerNorm"``, a fused chain ``"fused chain"``)."""
    if family == "elementwise":
        return "fused chain" if "(fused)" in name else name.split(" ×")[0]
    return BRIEF_NAMES[family]


def example_name(intensity: float) -> str:
    """The example kernel's name on the Generations chart: "a kernel at 200" (FLOP/byte)."""
    return f"a kernel at {intensity:,.0f}"


def workloads_data(example: float | None) -> dict[str, list]:
    """The Generations chart's workload triangles: the article's four, and the example kernel at ``example``
    FLOP/byte unless None (columns x, y: TFLOP/s at the chart's foot, text, and the labels' offsets)."""
    names = {**ARTICLE_WORKLOADS, **({} if example is None else {example_name(example): example})}
    return {"x": list(names.values()), "y": [0.08] * len(names), "text": list(names), **unplaced(len(names))}


def _roof(peak: float, bandwidth: float) -> list[float]:
    """The roof over :data:`X` in TFLOP/s (core's ``min(P_peak, BW·I)``)."""
    return list(attainable_flop_per_s(X, peak, bandwidth) / TFLOP)


#: What each chart plots and where its figures are as text, for a screen reader (app/style.py describe_chart).
CHART_TEXTS = {
    "hw-atlas": "Kernel atlas, log-log: each kernel chosen at its arithmetic intensity and attainable TFLOP/s under "
                "the GPU's roof; Show your work lists each kernel's formula, bound and time.",
    "hw-ceilings": "Three ceilings, log-log: the decode step against the compute and memory roofs and the launch "
                   "overhead's ceiling; the line above it gives the three times.",
    "hw-decision": "The decode step's time under each ceiling, overhead, memory and compute, in µs: the longest sets "
                   "the step; the line above the charts gives the three times.",
    "hw-stairs": "Tiles and waves: a GEMM's achieved TFLOP/s against its output columns N, a staircase of whole "
                 "waves of tiles, with the N chosen marked; the line above gives its tiles and waves.",
    "hw-waves": "Tiles and waves: the waves of tiles against N.",
    "hw-hierarchy": "Memory hierarchy, log-log: a roof per memory level, and attention's points at their arithmetic "
                    "intensities; the text under it gives their traffic and intensities.",
    "hw-generations": "Generations, log-log: each GPU's roof and ridge point, and the workloads' intensities; the "
                      "text under it names the workloads.",
    "hw-trend": "Trend since 2017: each part's peak FLOP/s, DRAM bandwidth and interconnect bandwidth as a multiple "
                "of the V100's, against launch year, with Gholami et al.'s rates.",
    "hw-timeline-fig": "The memory wall's timeline: an event per year; the list under the chart gives each.",
}


def _log_figure(name: str, height: int = 430, y_label: str = "attainable performance (TFLOP/s, dense)",
                x_label: str = "arithmetic intensity (FLOP/byte)"):
    fig = figure(x_axis_type="log", y_axis_type="log", height=height, sizing_mode="stretch_width", name=name,
                 x_axis_label=x_label, y_axis_label=y_label, tools="pan,wheel_zoom,reset,save",
                 toolbar_location="above", x_range=(0.05, 1e5), y_range=(0.05, 2e4),
                 min_border_right=LAST_TICK_ROOM)
    return describe_chart(fig, CHART_TEXTS[name])


def _section(controls, charts):
    """A section: its controls, then its charts beside them or, in a column too narrow for both, under them."""
    charts.styles = {"flex": f"1 1 {CHART_MIN_WIDTH}px", "min-width": "0"}
    return pn.FlexBox(controls, charts, flex_wrap="wrap", sizing_mode="stretch_width")


#: Each section's figures (attributes of the view) but the Kernel atlas's, and the method that builds them.
SECTION_FIGURES = {"Three ceilings": ("ceil_fig", "bars_fig"), "Tiles and waves": ("stairs_fig", "waves_fig"),
                   "Hierarchy": ("hier_fig",), "Generations": ("gen_fig", "trend_fig", "timeline_fig")}
SECTION_BUILDERS = {"Three ceilings": "_build_ceilings", "Tiles and waves": "_build_tiles",
                    "Hierarchy": "_build_hierarchy", "Generations": "_build_generations"}
#: The figures whose height present mode caps (PRESENT_HEIGHTS, PRESENT_CHART_HEIGHT), by name.
PRESENT_SIZED = frozenset({"hw-atlas", "hw-ceilings", "hw-hierarchy", "hw-generations", "hw-stairs", "hw-waves"})


def _section_figure(section: str, attribute: str) -> property:
    """A figure of ``section`` as an attribute of the view, built on first read (HardwareView._section_figures)."""
    def get(self):
        self._section_figures(section)
        return self._figs[attribute]
    return property(get, doc=f"The {section} section's {attribute} (built on first read).")



#: The memory-wall timeline in words (article 000, "How the Memory Wall Got Here"): year, event, what it did, source.
TIMELINE_HTML = ('<ol class="hw-timeline" data-readout="timeline">' + "".join(
    f"<li><b>{e.year} · {escape(e.title)}</b>: {escape(e.detail)} <span class=\"source\">({escape(e.source)})</span>"
    "</li>" for e in MEMORY_WALL_TIMELINE) + "</ol>")


class HardwareView(pn.viewable.Viewer):
    """Article 000's hardware sections as one interactive view.

    Params (link ``gpu`` and ``batch`` to the main lab's selector and B):
        gpu: catalogue id (any of :func:`core.hardware.load_catalogue`).
        section: which of :data:`core.hardware_tour.SECTIONS` is in front.
        batch: B, sequences per decode step (matrix-vector product, KV attention, overhead step).
        matvec_n, matvec_k: decode weight matrix N×K.
        gemm_m, gemm_k, gemm_n: GEMM shape.
        ew_elements, ew_chain, fused: elementwise chain over a tensor of that many elements, fused or not.
        attn_n, attn_d: attention sequence length N and head dimension d (one head).
        kv_context, kv_heads, kv_d_head: decode attention over a KV cache (S, h_kv, d_head).
        step_params, layers, launch_latency_us, fusion_level, cuda_graphs: the decode step of the overhead
            section (parameters read per step at BF16, decoder layers, µs per launch).
        tile, wave_m, wave_k, n_min, n_max, n_probe: the tile/wave staircase (GEMM M×N×K against N).
        generations, show_sparse: parts overlaid in the generations chart; the 2:4 headline roof.
        example_intensity: an example kernel marked among the article's workloads there (FLOP/byte, or None).
    """

    gpu = param.Selector(default=HARDWARE_BASE["gpu"], objects={g.name: g.id for g in load_catalogue().values()},
                         doc="catalogue id")
    section = param.Selector(default=SECTIONS[0], objects=list(SECTIONS))
    batch = param.Integer(default=1, bounds=(1, 65536), doc="B (the main lab's Scenario.batch has the same bounds)")
    matvec_n = param.Integer(default=4096, bounds=(1, 131072))
    matvec_k = param.Integer(default=4096, bounds=(1, 131072))
    gemm_m = param.Integer(default=4096, bounds=(1, 65536))
    gemm_k = param.Integer(default=4096, bounds=(1, 65536))
    gemm_n = param.Integer(default=4096, bounds=(1, 65536))
    ew_elements = param.Integer(default=HARDWARE_BASE["ew_elements"], bounds=(1, 2**32))
    ew_chain = param.ListSelector(default=list(HARDWARE_BASE["ew_chain"]), objects=list(ELEMENTWISE))
    fused = param.Boolean(default=False)
    attn_n = param.Integer(default=4096, bounds=(16, 262144))
    attn_d = param.Integer(default=128, bounds=(16, 512))
    kv_context = param.Integer(default=8192, bounds=(1, 1_048_576))
    kv_heads = param.Integer(default=8, bounds=(1, 256))
    kv_d_head = param.Integer(default=128, bounds=(16, 1024))
    step_params = param.Number(default=8.03e9, bounds=(1e6, 2e12), doc="parameters read per decode step")
    layers = param.Integer(default=32, bounds=(1, 1000))
    launch_latency_us = param.Number(default=4.0, bounds=(0.0, 100.0), doc="µs per kernel launch")
    fusion_level = param.Selector(default="unfused", objects=["unfused", "fused"])
    cuda_graphs = param.Boolean(default=False)
    tile = param.Selector(default="128×128", objects=list(TILES))
    wave_m = param.Integer(default=132 * 128, bounds=(1, 1_000_000))
    wave_k = param.Integer(default=4096, bounds=(1, 1_000_000))
    n_min = param.Integer(default=240, bounds=(1, 100_000))
    n_max = param.Integer(default=400, bounds=(2, 100_000))
    n_probe = param.Integer(default=257, bounds=(1, 100_000))
    generations = param.ListSelector(default=list(GENERATIONS),
                                     objects={g.name: g.id for g in load_catalogue().values()})
    show_sparse = param.Boolean(default=False)
    focus = param.ListSelector(default=[], objects=list(KERNEL_FAMILIES),
                               doc="The Kernel atlas's kernels a tour step speaks of (families of KERNEL_FAMILIES): "
                                   "drawn with a heavy outline, their levers' group open in present mode")
    example_intensity = param.Number(default=None, allow_None=True, bounds=(1e-3, 1e6),
                                     doc="An example kernel's arithmetic intensity, FLOP/byte, marked among the "
                                         "article's workloads on the Generations chart (the tour's step 14); None: "
                                         "none")
    present = param.Boolean(default=False, doc="Present mode: the projector look (app/present.py), labels laid out "
                                                "again for its larger text")
    shown = param.Boolean(default=True, doc="Its tab is open (the lab sets it): only then does its tour take the "
                                            "page's keys")

    ceil_fig = _section_figure("Three ceilings", "ceil_fig")
    bars_fig = _section_figure("Three ceilings", "bars_fig")
    stairs_fig = _section_figure("Tiles and waves", "stairs_fig")
    waves_fig = _section_figure("Tiles and waves", "waves_fig")
    hier_fig = _section_figure("Hierarchy", "hier_fig")
    level_lines = _section_figure("Hierarchy", "level_lines")  # its memory levels' roofs
    gen_fig = _section_figure("Generations", "gen_fig")
    trend_fig = _section_figure("Generations", "trend_fig")
    timeline_fig = _section_figure("Generations", "timeline_fig")

    def __init__(self, **params):
        self._custom_gpus: dict = {}
        self._built_heights: dict[str, int] = {}
        super().__init__(**params)
        self.tour_index: int | None = None
        self._before_tour: dict = {}  # the lab's own levers as the tour found them (RESTORED_AFTER_TOUR)
        self._tour_finished = False  # the last step's "Finish" was pressed
        self.error = pn.pane.Alert("", alert_type="danger", visible=False, sizing_mode="stretch_width")
        self._figs: dict = {}  # the other sections' figures, by attribute name, once built (_section_figures)
        self._built_figures: set[str] = set()
        self._build_sources()
        self._build_atlas()
        wrap_title(self.atlas_fig)  # a long part name wraps instead of running past the chart
        self._build_panes()
        self._refresh_all()
        self.param.watch(self._on_change, [p for p in self.param if p not in ("name", "section", "present", "shown")])
        self.param.watch(self._on_section, "section")
        self.param.watch(self._on_present, "present")
        self.param.watch(lambda _e: self._take_keys(), "shown")

    def add_gpu(self, gpu) -> None:
        """Offer a custom or measured :class:`core.hardware.Accelerator` (the main lab's "bring your own" part)
        in the selector and select it; its unpublished fields (SMs, SRAM, L2) get the stated assumptions."""
        self._custom_gpus[gpu.id] = gpu
        names = {k: v for k, v in self.param["gpu"].names.items() if v != gpu.id}
        self.param["gpu"].objects = {**names, f"{gpu.name} (yours)": gpu.id}
        if self.gpu == gpu.id:  # the same name again, new numbers: the selector does not change, the charts do
            self._on_change()
        else:
            self.gpu = gpu.id

    def accelerator(self):
        """The selected :class:`core.hardware.Accelerator`."""
        return self._custom_gpus.get(self.gpu) or load_catalogue()[self.gpu]

    # -- data sources -------------------------------------------------------------
    def _build_sources(self):
        self.atlas_roof = ColumnDataSource({"x": [], "y": []}, name="hw-atlas-roof")
        self.atlas_points = ColumnDataSource({"x": [], "y": [], "name": [], "brief": [], "shown": [], "color": [],
                                              "marker": [], "line_width": [], "time": [], "bound": [], "xoff": [],
                                              "yoff": [], "align": []}, name="hw-kernels")
        self.ceil_roof = ColumnDataSource({"x": [], "y": []}, name="hw-ceil-roof")
        self.ceil_overhead = ColumnDataSource({"x": [], "y": []}, name="hw-overhead-ceiling")
        self.ceil_overhead_item: LegendItem | None = None  # the overhead ceiling's key, once its chart is built
        self.ceil_point = ColumnDataSource({"x": [], "y": [], "label": [], "xoff": [], "yoff": [], "align": []},
                                           name="hw-step")
        self.ceil_bars = ColumnDataSource({"regime": [], "us": [], "color": []}, name="hw-three-times")
        self.stairs = ColumnDataSource({"n": [], "tflops": [], "waves": [], "padded": [], "eff": []},
                                       name="hw-staircase")
        self.stairs_probe = ColumnDataSource({"n": [], "tflops": []}, name="hw-probe")
        self.levels = ColumnDataSource({"x": [], "y": [], "level": [], "color": []}, name="hw-levels")
        self.attn_points = ColumnDataSource({"x": [], "y": [], "name": [], "color": [], "marker": [], "mb": [],
                                             "xoff": [], "yoff": [], "align": []}, name="hw-attention")
        self.gen_roofs = ColumnDataSource({"xs": [], "ys": [], "name": [], "color": [], "dash": []},
                                         name="hw-gen-roofs")
        self.gen_ridges = ColumnDataSource({"x": [], "y": [], "text": [], "color": [], "text_color": [], "marker": [],
                                            "xoff": [], "yoff": [], "align": []}, name="hw-ridges")
        self.gen_sparse = ColumnDataSource({"x": [], "y": []}, name="hw-sparse")
        self.gen_sparse_label = ColumnDataSource({"x": [], "y": [], "text": [], "xoff": [], "yoff": [], "align": []},
                                                 name="hw-sparse-label")
        self.workloads = ColumnDataSource(workloads_data(None), name="hw-workloads")
        self.trend_points = ColumnDataSource({"year": [], "rel": [], "series": [], "name": [], "color": [],
                                              "marker": []},
                                             name="hw-trend")
        self.trend_lines = ColumnDataSource({"xs": [], "ys": [], "series": [], "color": [], "dash": []},
                                           name="hw-gholami")
        self.level_roofs = ColumnDataSource({"xs": [], "ys": [], "color": [], "dash": []}, name="hw-level-roofs")
        # In the Hierarchy chart's top left corner, above the slopes (every attention point lies right of I = 50):
        # beside or under the frame it took the width or the height the chart and its caption need.
        self.level_legend = Legend(items=[LegendItem(label=value(""), renderers=[], index=i, visible=False)
                                          for i in range(len(LEVEL_STYLES))],
                                   location="top_left", name="hw-level-legend", label_text_font_style="bold",
                                   padding=4, margin=4, spacing=0, background_fill_alpha=0.85)
        # The ridge and the peak, set by the inputs whether or not their section's chart is built yet.
        self.atlas_ridge = Span(location=1, dimension="height", line_color="#d62728", line_dash="dotted", line_width=2)
        self.peak_span = Span(location=0, dimension="width", line_color="#2ca02c", line_dash="dashed")
        #: The sources the inputs (the GPU and the levers) fill; the article's workloads are fixed (the example
        #: kernel beside them is not, but is never cleared).
        self._input_sources = (self.atlas_roof, self.atlas_points, self.ceil_roof, self.ceil_overhead, self.ceil_point,
                               self.ceil_bars, self.stairs, self.stairs_probe, self.levels,
                               self.attn_points, self.gen_roofs, self.gen_ridges, self.gen_sparse,
                               self.gen_sparse_label, self.trend_points, self.trend_lines)

    # -- figures --------------------------------------------------------------------
    def _build_atlas(self):
        """The Kernel atlas's chart (the section in front when the tab opens: built with the view)."""
        hover_k = HoverTool(tooltips=[("kernel", "@name"), ("intensity", "@x{0,0.000} FLOP/byte"),
                                      ("attainable", "@y{0,0.0} TFLOP/s"), ("time", "@time"), ("bound", "@bound")])
        f = _log_figure("hw-atlas")
        f.add_tools(hover_k)
        f.line("x", "y", source=self.atlas_roof, color=LAB_PALETTE["roof"], line_width=4,
               legend_label="roof: min(P_peak, BW·I)")
        f.add_layout(self.atlas_ridge)
        marks = f.scatter("x", "y", source=self.atlas_points, size=13, fill_color="color", line_color="black",
                          line_width="line_width",
                          marker="marker")
        hover_k.renderers = [marks]  # the kernels, not the labels' leader lines
        labels = LabelSet(x="x", y="y", text="shown", source=self.atlas_points, text_font_size="11px")
        f.add_layout(labels)
        # Off the roof and the ridge's dotted line (step 1 of the tour drew FlashAttention's name across it); a name
        # with no clear place says its brief form, and none is left out (the hover has every name in full).
        place_labels_in_browser(f, labels, marks.glyph, "name", lines=[self.atlas_roof], spans=[self.atlas_ridge],
                                shown="shown", fallback="brief", keep_all=True)
        f.legend.location = "bottom_right"
        self.atlas_fig = f

    def _build_ceilings(self):
        """The Three ceilings section's charts: the step on its roofs and its three times."""
        g = _log_figure("hw-ceilings", height=420)  # the legend is below the frame
        # Its tools over the frame's top, shown on hover (as the lab's roofline's): a row less above the chart, which
        # lies under the decision's three lines and must end above a projector's fold.
        g.toolbar_inner, g.toolbar.autohide = True, True
        g.line("x", "y", source=self.ceil_roof, color="#2ca02c", line_width=4, legend_label="compute and memory roofs")
        g.line("x", "y", source=self.ceil_overhead, color="#b00020", line_width=3, line_dash="dashed",
               legend_label=OVERHEAD_LEGEND[bool(self.cuda_graphs)])
        self.ceil_overhead_item = g.legend[0].items[-1]  # its formula follows the CUDA-graphs switch
        step = g.scatter("x", "y", source=self.ceil_point, size=15, fill_color="#ff7f0e", line_color="black",
                         legend_label="the decode step")
        step_label = LabelSet(x="x", y="y", text="label", source=self.ceil_point, text_font_size="11px")
        g.add_layout(step_label)
        place_labels_in_browser(g, step_label, step.glyph, "label", lines=[self.ceil_roof, self.ceil_overhead])
        g.add_layout(g.legend[0], "below")  # inside the frame it hid the step's label and the overhead ceiling
        self._figs["ceil_fig"] = g
        bars = figure(y_range=["overhead", "memory", "compute"], height=170, sizing_mode="stretch_width",
                      x_axis_label="time per step (µs)", tools="", toolbar_location=None, name="hw-decision")
        describe_chart(bars, CHART_TEXTS[bars.name])
        bars.hbar(y="regime", right="us", source=self.ceil_bars, height=0.6, color="color")
        self._figs["bars_fig"] = bars

    def _build_tiles(self):
        """The Tiles and waves section's charts: the staircase and its waves, on one N axis."""
        # Their built heights also set what present mode keeps of their frames (app/present.py MIN_FRAME_SHARE): low
        # enough that both fit a 720-px projector under the readout over them.
        s = figure(height=290, sizing_mode="stretch_width", x_axis_label="N (GEMM output columns)",
                   y_axis_label="achieved TFLOP/s (model)", tools="pan,wheel_zoom,reset,save,hover",
                   toolbar_location="above", name="hw-stairs",
                   tooltips=[("N", "@n"), ("TFLOP/s", "@tflops{0,0.0}"), ("waves", "@waves"),
                             ("padded N", "@padded"), ("useful", "@eff{0.0%}")])
        describe_chart(s, CHART_TEXTS[s.name])
        s.step("n", "tflops", source=self.stairs, mode="after", line_width=2, color="#1f77b4")
        s.scatter("n", "tflops", source=self.stairs_probe, size=12, color="#d62728")
        # A quarter of the data's span of room below and above: at the lowest stair the readout's dot, in the
        # projector's short frame, was cut in half by the x axis (a teacher's trial at tour steps 10 and 11).
        s.y_range.range_padding = 0.25
        s.add_layout(self.peak_span)
        self._figs["stairs_fig"] = s
        w = figure(height=140, sizing_mode="stretch_width", x_axis_label="N", y_axis_label="waves",
                   tools="", toolbar_location=None, name="hw-waves")
        describe_chart(w, CHART_TEXTS[w.name])
        w.x_range = s.x_range
        w.step("n", "waves", source=self.stairs, mode="after", line_width=2, color="#9467bd")
        w.yaxis.ticker.min_interval = 1  # a wave is whole: no tick at 1.2 waves
        self._figs["waves_fig"] = w

    def _build_hierarchy(self):
        """The Hierarchy section's chart: a roof per memory level, and attention's three points."""
        h = _log_figure("hw-hierarchy", height=430)
        hover_h = HoverTool(tooltips=[("point", "@name"), ("intensity", "@x{0,0.0}"), ("traffic", "@mb MB")])
        h.add_tools(hover_h)
        level_lines = self._figs["level_lines"] = h.multi_line("xs", "ys", source=self.level_roofs,
                                                               line_color="color", line_width=3, line_dash="dash")
        # Each roof named in a legend, not by a label beside it: the roofs are parallel, 16-20 px apart on an A100 in
        # present mode, and no 18-px name fits between two of them; the middle one's (L2's) leader line then had to
        # cross a neighbour roof (issue 30's trial, hardware tour step 12).  The legend is made with the sources
        # (the inputs name its items whether or not this chart is built yet), its swatches drawn from these roofs.
        for item in self.level_legend.items:
            item.renderers = [level_lines]
        h.add_layout(self.level_legend)
        attn = h.scatter("x", "y", source=self.attn_points, size=14, fill_color="color", line_color="black",
                         marker="marker")
        hover_h.renderers = [attn]  # the attention points, not the roofs or the labels' leader lines
        attn_labels = LabelSet(x="x", y="y", text="name", source=self.attn_points, text_font_size="11px")
        h.add_layout(attn_labels)
        place_labels_in_browser(h, attn_labels, attn.glyph, "name", lines=[self.level_roofs])
        self._figs["hier_fig"] = h

    def _build_generations(self):
        """The Generations section's charts: the parts' roofs and ridges, the trend since 2017, the timeline."""
        gfig = _log_figure("hw-generations", height=460)
        gfig.multi_line("xs", "ys", source=self.gen_roofs, line_color="color", line_width=3, line_dash="dash")
        ridge_labels = LabelSet(x="x", y="y", text="text", source=self.gen_ridges, text_color="text_color",
                                text_font_size="11px", text_font_style="bold")
        gfig.add_layout(ridge_labels)
        ridges = gfig.scatter("x", "y", source=self.gen_ridges, size=11, color="color", marker="marker")
        gfig.line("x", "y", source=self.gen_sparse, color="#555555", line_dash="dashed", line_width=2)
        workloads = gfig.scatter("x", "y", source=self.workloads, marker="triangle", size=12, color="#444444")
        # The workloads' names read across, beside their triangles at the foot of the chart, laid out first; the
        # ridges' labels keep off them (upright names, which the layout did not know, ran under "MI300X: 247").
        workload_labels = LabelSet(x="x", y="y", text="text", source=self.workloads, text_font_size="10px",
                                   text_color="#444444")
        gfig.add_layout(workload_labels)
        place_labels_in_browser(gfig, workload_labels, workloads.glyph, "text", lines=[self.gen_roofs, self.gen_sparse],
                                pad=8)
        # The 2:4 roof's name at its ridge, laid out in the browser inside the frame (at the ridge's right it ran
        # past the chart's right edge), before the ridges' names: it is the subject of the tour's sparse-headline
        # step, and laid out after them it found no clear place among six roofs and was drawn over "A100: 153".
        # The ridges' names then keep off it.
        sparse_label = LabelSet(x="x", y="y", text="text", source=self.gen_sparse_label, text_font_size="11px",
                                text_color="#555555")
        gfig.add_layout(sparse_label)
        place_labels_in_browser(gfig, sparse_label, None, "text", lines=[self.gen_roofs, self.gen_sparse],
                                others=[workload_labels], marks=[ridges])
        place_labels_in_browser(gfig, ridge_labels, ridges.glyph, "text", lines=[self.gen_roofs],
                                others=[workload_labels, sparse_label])
        self._figs["gen_fig"] = gfig
        t = figure(y_axis_type="log", height=420, sizing_mode="stretch_width", x_axis_label="launch year",
                   y_axis_label="× the 2017 value (V100)", tools="pan,wheel_zoom,reset,save,hover",
                   toolbar_location="above", name="hw-trend",
                   tooltips=[("part", "@name"), ("series", "@series"), ("× 2017", "@rel{0,0.0}")])
        describe_chart(t, CHART_TEXTS[t.name])
        t.multi_line("xs", "ys", source=self.trend_lines, line_color="color", line_dash="dash", line_width=2,
                     legend_label="Gholami et al. 2024: 3.0× / 1.6× / 1.4× per 2 years")
        t.scatter("year", "rel", source=self.trend_points, size=10, color="color", marker="marker",
              legend_field="series")
        t.add_layout(t.legend[0], "below")  # inside the frame it covered parts' points (found by a trial)
        self._figs["trend_fig"] = t
        ev = MEMORY_WALL_TIMELINE
        # One row per event, the earliest at the top: five of the seven fall in 2017-2024, and their titles (up to
        # 370 px at 18 px) need rows of their own; each goes right of its year, or left where the frame ends.
        rows = [len(ev) - 1 - i for i in range(len(ev))]
        tl_src = ColumnDataSource({"year": [e.year for e in ev], "y": rows,
                                   "title": [e.title for e in ev], "detail": [e.detail for e in ev],
                                   "source": [e.source for e in ev], **unplaced(len(ev))}, name="hw-timeline")
        tl = figure(height=320, sizing_mode="stretch_width", x_range=(1992, 2034), y_range=(-0.7, len(ev) - 0.3),
                    tools="hover", toolbar_location=None, name="hw-timeline-fig", x_axis_label="year",
                    tooltips=[("", "@title"), ("", "@detail"), ("source", "@source")])
        describe_chart(tl, CHART_TEXTS[tl.name])
        tl.yaxis.visible = False
        tl.ygrid.visible = False
        events = tl.scatter("year", "y", source=tl_src, size=11, color="#6d28d9")
        tl.select_one(HoverTool).renderers = [events]  # the events, not the labels' leader lines
        event_labels = LabelSet(x="year", y="y", text="title", source=tl_src, text_font_size="11px")
        tl.add_layout(event_labels)
        place_labels_in_browser(tl, event_labels, events.glyph, "title")
        self._figs["timeline_fig"] = tl

    # -- panes and layout ------------------------------------------------------------
    def _build_panes(self):
        self.atlas_work = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", css_classes=["hw-work"])
        self.decision = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width")
        self.fixes = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width")
        self.stairs_readout = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width")
        self.hier_text = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width")
        self.gen_text = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width")
        # The timeline's figures in words under it (the chart has room for the titles only; a lecturer's audit found
        # "FP16 8×", "1.30×", "2-4×" and "5-20 %" in its hover only, which a projector never shows).
        self.timeline_text = pn.pane.HTML(TIMELINE_HTML, stylesheets=[CSS], sizing_mode="stretch_width")
        # "Show your work": the formulas under the chart; in present mode, where under the chart they are below the
        # fold, in the chart's place while it is pressed.
        self.show_work = pn.widgets.Toggle(label="Show your work", value=not self.present, width=300,
                                           css_classes=["hw-show-work"])
        self.show_work.param.watch(lambda _e: self._show_work(), "value")
        self.tour_caption = pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", visible=False)
        self.tour_title = pn.pane.HTML(TOUR_TITLE, stylesheets=[CSS], margin=(8, 10))
        self.tour_prev = pn.widgets.Button(label="◀ Previous", width=TOUR_BUTTON_WIDTHS[0], disabled=True,
                                           css_classes=["hw-tour-prev"])
        self.tour_next = pn.widgets.Button(label="Start the hardware tour ▶", color="primary",
                                           width=TOUR_BUTTON_WIDTHS[1], css_classes=["hw-tour-next"])
        self.tour_leave = pn.widgets.Button(label="Leave the tour", width=TOUR_BUTTON_WIDTHS[2], visible=False,
                                            css_classes=["hw-tour-leave"])
        self.tour_prev.on_click(lambda _e: self.go(self.tour_index - 1))
        self.tour_next.on_click(lambda _e: self._tour_next())
        # The same keys and clickers as the main tour: → / PageDown / Space, ← / PageUp, Esc.
        self.tour_keys = TourKeys(on_key=self._tour_key, width=0, height=0, margin=0)
        self.tour_leave.on_click(lambda _e: self.stop_tour())

    def _w(self, name, widget=None, **kw):
        kw.setdefault("name", LABELS.get(name, name))
        return (widget or pn.widgets.IntSlider).from_param(self.param[name], **kw)

    def _typed(self, name: str) -> pn.widgets.FloatInput:
        """A box for parameter ``name``'s number (:func:`app.controls.number_box`: a value out of range is refused
        by name; a typed 0 had stood beside a readout of the last N with no word of why)."""
        return number_box(self, name, label=LABELS.get(name, name), description=self.param[name].doc)

    def _section_parts(self, name: str):
        """Section ``name``'s two Panel columns: its controls, and its charts with their captions."""
        self._section_figures(name)
        if name == "Kernel atlas":
            groups = (
                ("GEMM C = AB", self._w("gemm_m", start=16, end=16384, step=16),
                 self._w("gemm_k", start=16, end=16384, step=16), self._w("gemm_n", start=16, end=16384, step=16)),
                ("Decode matrix-vector (the main lab's B)", self._w("batch", start=1, end=512),
                 self._typed("matvec_n"), self._typed("matvec_k")),
                ("Elementwise ops", self._w("ew_chain", pn.widgets.MultiChoice),
                 self._w("fused", pn.widgets.Checkbox), self._typed("ew_elements")),
                ("Attention (one head)", self._w("attn_n", start=256, end=65536, step=256),
                 self._w("attn_d", start=32, end=256, step=32)),
                ("Decode attention over the KV cache", self._w("kv_context", start=128, end=131072, step=128),
                 self._w("kv_heads", start=1, end=64)))
            # Each group of levers a card of its own: in present mode they fold (their titles stay in view), so
            # that every group, and "Show your work", shows above the fold of a 720-px screen (issue 30's trial:
            # at hardware tour step 1 the levers ran to 1,500 px).
            self.atlas_groups = [pn.Card(*widgets, title=title, collapsed=self._folded(title), width=300,
                                         margin=(2, 0), stylesheets=[CARD_HEADER_CSS], css_classes=["hw-levers"],
                                         styles=PRESENT_CONTROLS[self.present])
                                 for title, *widgets in groups]
            self.atlas_chart = pn.pane.Bokeh(self.atlas_fig, sizing_mode="stretch_width")
            self._show_work()
            return (pn.Column(self.show_work, *self.atlas_groups, width=300),
                            pn.Column(self.atlas_chart, self.atlas_work, sizing_mode="stretch_width"))
        if name == "Three ceilings":
            return (
                pn.Column(self._typed("step_params"), self._w("layers", start=1, end=160),
                          self._w("batch", start=1, end=512),
                          self._w("launch_latency_us", pn.widgets.FloatSlider, start=0.0, end=20.0, step=0.5),
                          self._w("fusion_level", pn.widgets.RadioButtonGroup),
                          self._w("cuda_graphs", pn.widgets.Checkbox),
                          pn.pane.Markdown(f"Launch latency source: {LAUNCH_LATENCY_SOURCE}",
                                           styles={"font-size": "11px"}),
                          width=300),
                # The decision (the three times and the bound) over the charts, the fixes under them: under the
                # charts the decision lay below a 720-px fold at the tour's steps 7-9, which quote its times.
                pn.Column(self.decision, pn.pane.Bokeh(self.ceil_fig, sizing_mode="stretch_width"),
                          pn.pane.Bokeh(self.bars_fig, sizing_mode="stretch_width"), self.fixes,
                          sizing_mode="stretch_width"))
        if name == "Tiles and waves":
            return (
                # A list, not a row of buttons: five tiles ran past the 300-px column, two of them under the chart.
                pn.Column(self._w("tile", pn.widgets.Select), self._typed("wave_m"),
                          self._typed("wave_k"), self._typed("n_min"), self._typed("n_max"),
                          self._typed("n_probe"), width=300),
                # The readout over the charts: under them it fell below a 720-px projector's fold, where tour steps
                # 10 and 11 send the class for their figures.
                pn.Column(self.stairs_readout, pn.pane.Bokeh(self.stairs_fig, sizing_mode="stretch_width"),
                          pn.pane.Bokeh(self.waves_fig, sizing_mode="stretch_width"),
                          sizing_mode="stretch_width"))
        if name == "Hierarchy":
            return (
                pn.Column(self._w("attn_n", start=256, end=65536, step=256),
                          self._w("attn_d", start=32, end=256, step=32), width=300),
                pn.Column(pn.pane.Bokeh(self.hier_fig, sizing_mode="stretch_width"), self.hier_text,
                          sizing_mode="stretch_width"))
        return (
            pn.Column(self._w("generations", pn.widgets.MultiChoice), self._w("show_sparse", pn.widgets.Checkbox),
                      width=300),
            pn.Column(pn.pane.Bokeh(self.gen_fig, sizing_mode="stretch_width"), self.gen_text,
                      pn.pane.Bokeh(self.trend_fig, sizing_mode="stretch_width"),
                      pn.pane.Bokeh(self.timeline_fig, sizing_mode="stretch_width"), self.timeline_text,
                      sizing_mode="stretch_width"))

    def _layout(self):
        # A section is built when it is first shown (most visits see one or two of the five), in place of a
        # spacer, and stays in the page once built: a hidden section is still updated in the document, where
        # Panel gives a component it (re)builds this server's stylesheets; outside it (Panel's dynamic tabs) it
        # gave them its CDN's.
        self._built_sections: set[str] = set()
        self.tabs = pn.Tabs(*((name, tab_placeholder()) for name in SECTIONS), active=SECTIONS.index(self.section),
                            sizing_mode="stretch_width", stylesheets=[ONLY_THE_ACTIVE_TAB])
        self.tabs.param.watch(lambda e: setattr(self, "section", SECTIONS[e.new]), "active")
        # The accelerator and the tour's controls share a row, wrapping in a narrow column (a Row ran the buttons
        # over the lab's readouts): the chart keeps its x axis above the fold at 1280 × 720 under a tour card.
        controls = pn.FlexBox(self._w("gpu", pn.widgets.Select, width=300), self.tour_title, self.tour_prev,
                              self.tour_next, self.tour_leave, self.tour_keys, align_items="flex-end",
                              flex_wrap="wrap", sizing_mode="stretch_width")
        # Its own text sizes, in present mode too (its cards and PRESENT_CONTROLS_CSS set them): not the page's
        # present-mode size, under which its buttons' padding grew and tour step 10's waves chart left the fold.
        return pn.Column(controls, self.tour_caption, self.error, self.tabs, sizing_mode="stretch_width",
                         styles=PRESENT_CONTROLS[False])

    def __panel__(self):
        if not hasattr(self, "_panel"):
            self._panel = self._layout()
            self._present_controls(self._panel)
            later(lambda: self._show_section(self.section))
        return self._panel

    def _show_section(self, name: str) -> None:
        """Build section ``name`` into its tab the first time it is shown (its figures, levers and charts at once:
        a section placed in pieces while the tour moved on sent the browser patches naming models it no longer had,
        "reference ... isn't known")."""
        if name not in self._built_sections:
            self._built_sections.add(name)
            section = _section(*self._section_parts(name))
            self._present_controls(section)
            self.tabs[SECTIONS.index(name)] = (name, section)

    def _present_controls(self, layout) -> None:
        """Give the controls in ``layout`` present mode's sheet, and its class if present mode is on."""
        for obj in self._controls(layout):
            obj.stylesheets = [*obj.stylesheets, PRESENT_CONTROLS_CSS]
            if self.present:
                obj.css_classes = [*obj.css_classes, "present"]

    def _controls(self, layout=None) -> list:
        """The tour's buttons, each built section's levers and headings, the section tabs (18 px in present
        mode); those in ``layout`` only, if given."""
        return (layout or self.__panel__()).select(
            lambda o: isinstance(o, (pn.widgets.Widget, pn.pane.Markdown, pn.Tabs)) and not isinstance(o, TourKeys))

    def _show_work(self) -> None:
        """The atlas's formulas under its chart while "Show your work" is pressed; in present mode in the chart's
        place (the chart back when it is released)."""
        self.atlas_work.visible = self.show_work.value
        if hasattr(self, "atlas_chart"):
            self.atlas_chart.visible = not (self.present and self.show_work.value)

    # -- updates ------------------------------------------------------------------------
    def figures(self) -> list:
        """The view's Bokeh figures built so far: the Kernel atlas's, and each other section's once it is shown
        (or one of its figures read): a first visit sees one or two of the five sections."""
        return [self.atlas_fig, *(self._figs[n] for section in SECTIONS if section in self._built_figures
                                  for n in SECTION_FIGURES[section])]

    def _section_figures(self, section: str) -> None:
        """Build ``section``'s figures, once, and give them the view's present mode."""
        if section in self._built_figures or section not in SECTION_FIGURES:
            return
        self._built_figures.add(section)
        getattr(self, SECTION_BUILDERS[section])()
        figs = [self._figs[n] for n in SECTION_FIGURES[section]]
        for fig in figs:
            wrap_title(fig)
        self._present_figures(figs)

    def _present_figures(self, figs) -> None:
        """``figs`` in the view's present mode or out of it: text, lines and the charts' heights."""
        for fig in figs:  # the labels follow their new size in the browser (place_labels_in_browser)
            present_figure(fig, self.present)
            if fig.name in PRESENT_SIZED:
                built = self._built_heights.setdefault(fig.id, fig.height)
                fig.height = (min(built, PRESENT_HEIGHTS.get(fig.name, PRESENT_CHART_HEIGHT)) if self.present
                              else built)
            if fig.name in PRESENT_LEGEND_COLUMNS:
                fig.legend[0].ncols = PRESENT_LEGEND_COLUMNS[fig.name] if self.present else 1

    def _on_present(self, *_events):
        self._present_figures(self.figures())
        # The tour card, its controls and the sections' captions at 18 px, for the back of the room.
        for pane in (self.atlas_work, self.decision, self.fixes, self.stairs_readout, self.hier_text, self.gen_text,
                     self.timeline_text, self.tour_caption, self.tour_title):
            pane.css_classes = [c for c in pane.css_classes if c != "present"] + (["present"] if self.present else [])
        self.tour_title.object = "<b>Hardware tour</b>" if self.present else TOUR_TITLE  # one row at 18 px
        for button, width in zip((self.tour_prev, self.tour_next, self.tour_leave), TOUR_BUTTON_WIDTHS, strict=True):
            button.width = round(width * (1.4 if self.present else 1))
        for obj in self._controls():
            obj.css_classes = [c for c in obj.css_classes if c != "present"] + (["present"] if self.present else [])
        # The atlas's groups of levers fold on a projector and open again off it; its formulas follow the mode's
        # default (under the chart off it, in the chart's place on demand on it).
        for card in getattr(self, "atlas_groups", ()):
            card.param.update(collapsed=self._folded(card.title), styles=PRESENT_CONTROLS[self.present])
        self.show_work.value = not self.present
        self._show_work()
        self._take_keys()

    def _folded(self, title: str) -> bool:
        """Whether the atlas's group of levers ``title`` is folded: in present mode, unless it moves a kernel the
        tour's step speaks of (step 2 says "shrink N with its slider": its group folded, the class saw no slider)."""
        return self.present and not set(ATLAS_GROUPS[title]) & set(self.focus)

    @param.depends("focus", watch=True)
    def _on_focus(self) -> None:
        for card in getattr(self, "atlas_groups", ()):
            card.collapsed = self._folded(card.title)

    def _take_keys(self) -> None:
        """The page's keys drive a running hardware tour; in present mode a clicker's "next" also starts it.  Only
        while its tab is open: kept in the page behind another tab, the view must leave the keys to the tour shown."""
        if hasattr(self, "tour_keys"):
            self.tour_keys.active = self.shown and (self.tour_index is not None or self.present)

    def _on_section(self, event):
        if hasattr(self, "tabs"):
            self._show_section(event.new)
            self.tabs.active = SECTIONS.index(event.new)

    def _on_change(self, *_events):
        self._refresh_all()
        if self.tour_index is not None:
            self._render_tour()

    def _refresh_all(self):
        try:
            gpu = self.accelerator()
            self._refresh_atlas(gpu)
            self._refresh_ceilings(gpu)
            self._refresh_stairs(gpu)
            self._refresh_hierarchy(gpu)
            self._refresh_generations(gpu)
        except ValueError as exc:  # a refused input: say which, and show no chart of another input under it
            self._clear_charts()
            self.error.object = f"Refused: {exc}"
            self.error.visible = True
            return
        self.error.visible = False

    def _clear_charts(self) -> None:
        """Empty every chart and readout the inputs drive (a refusal must not leave the previous GPU's numbers
        under its alert); the next accepted input draws them again."""
        for src in (*self._input_sources, self.level_roofs):
            src.data = {key: [] for key in src.data}
        for span in (self.atlas_ridge, self.peak_span):
            span.location = None
        for item in self.level_legend.items:
            item.visible = False
        self.atlas_fig.title.text = ""
        for pane in (self.atlas_work, self.decision, self.fixes, self.stairs_readout, self.hier_text, self.gen_text):
            pane.object = ""

    def _refresh_atlas(self, gpu):
        peak = gpu.dense_flop_per_s["bf16"]
        kernels = [
            (gemm(self.gemm_m, self.gemm_k, self.gemm_n), "gemm"),
            (decode_matvec(self.matvec_n, self.matvec_k, self.batch), "matvec"),
        ]
        if self.ew_chain:
            chain = fuse(self.ew_chain, self.ew_elements)
            if self.fused:
                kernels.append((chain.fused, "elementwise"))
            else:
                kernels += [(ELEMENTWISE[n].cost(self.ew_elements), "elementwise") for n in self.ew_chain]
        sram = sram_bytes(gpu)
        kernels += [(naive_attention(self.attn_n, self.attn_d), "naive"),
                    (flash_attention(self.attn_n, self.attn_d, sram), "flash"),
                    (decode_attention(self.kv_context, self.kv_heads, self.kv_d_head, self.batch),
                     "decode_attention")]
        self.atlas_roof.data = {"x": list(X), "y": _roof(peak, gpu.hbm_bandwidth)}
        self.atlas_ridge.location = gpu.ridge_point()
        # The kernels a tour step speaks of are drawn last, over the others: at B = 1 the decode matvec lies under
        # decode attention's marker (both at I = 1), and step 3's outlined matvec could not be seen (a teacher's trial).
        drawn = sorted(kernels, key=lambda kernel: kernel[1] in self.focus)
        xs, ys = [k.intensity for k, _ in drawn], [k.attainable_flop_per_s(gpu) / TFLOP for k, _ in drawn]
        names = [k.name for k, _ in drawn]
        self.atlas_points.data = {
            "x": xs, "y": ys, "name": names, "brief": [brief_name(k.name, f) for k, f in drawn], "shown": names,
            "color": [KERNEL_STYLES[f][0] for _, f in drawn],
            "marker": [KERNEL_STYLES[f][1] for _, f in drawn],
            "line_width": [FOCUS_LINE_WIDTH if f in self.focus else 1 for _, f in drawn],
            "time": [f"{fmt_sig(k.time(gpu) * 1e6)} µs" for k, _ in drawn],
            "bound": [k.bound(gpu) for k, _ in drawn], **unplaced(len(drawn))}
        # Two short lines: one ran under the chart's toolbar, which shares the title's row.
        self.atlas_fig.title.text = (f"{gpu.name}: ridge {gpu.ridge_point():,.0f} FLOP/byte\n"
                                     f"roof: {gpu.roof_kind or 'compute roof'}")
        rows = [f"<b>{escape(k.name)}</b>: {escape(k.formula)}; {k.bound(gpu)}-bound, "
                f"{escape(fmt_sig(k.time(gpu) * 1e6))} µs on this part. <i>{escape(k.source)}</i>" for k, _ in kernels]
        if self.ew_chain:
            f = fuse(self.ew_chain, self.ew_elements)
            rows.append(f"<b>Fusion</b>: {escape(f.fused.formula)}")
        if not gpu.sram_per_sm_bytes:
            rows.append(escape(SRAM_NOTE.format(gpu=gpu.name)))
        self.atlas_work.object = "<br>".join(rows)

    def _refresh_ceilings(self, gpu):
        n_k = kernels_per_step(self.layers, self.fusion_level)
        step = three_ceilings(2 * self.step_params * self.batch, 2 * self.step_params, n_k, gpu,
                              launch_latency_s=self.launch_latency_us * 1e-6, cuda_graphs=self.cuda_graphs)
        self.ceil_roof.data = {"x": list(X), "y": _roof(step.peak_flop_per_s, step.bandwidth)}
        ceiling = step.overhead_ceiling_flop_per_s / TFLOP
        self.ceil_overhead.data = {"x": [X[0], X[-1]], "y": [max(ceiling, SENTINEL)] * 2 if np.isfinite(ceiling)
                                   else [SENTINEL, SENTINEL]}
        self.ceil_point.data = {"x": [step.intensity], "y": [step.achieved_flop_per_s / TFLOP],
                                "label": [f"{step.regime}-bound"], **unplaced(1)}
        colors = {r: ("#b00020" if r == step.regime else "#9e9e9e") for r in FIXES}
        times = {"compute": step.compute_s, "memory": step.memory_s, "overhead": step.overhead_s}
        self.ceil_bars.data = {"regime": list(times), "us": [t * 1e6 for t in times.values()],
                               "color": [colors[r] for r in times]}
        if self.ceil_overhead_item is not None:  # the section's chart, once built
            self.ceil_overhead_item.label = value(OVERHEAD_LEGEND[bool(self.cuda_graphs)])
        # The launches' product as core.overhead.overhead_time computes it, multiplied out to the overhead shown (a
        # teacher's trial read "64 kernels × 4 µs (one CUDA graph)" beside "overhead 68 µs").
        launches = (f"one CUDA graph: {self.launch_latency_us:g} µs + {n_k:,} kernels × {GRAPH_NODE_GAP_S * 1e6:g} µs "
                    f"node gap" if self.cuda_graphs else f"{n_k:,} kernels × {self.launch_latency_us:g} µs")
        self.decision.object = (
            f'<div class="hw-decision">Intensity {fmt_sig(step.intensity)} FLOP/byte against a ridge of '
            f"{gpu.ridge_point():,.0f}; {launches} = {fmt_sig(step.overhead_s * 1e6)} µs of launches. "
            f"Step: compute {fmt_sig(step.compute_s * 1e6)} µs, "
            f"memory {fmt_sig(step.memory_s * 1e6)} µs, overhead {fmt_sig(step.overhead_s * 1e6)} µs → "
            f'<span class="bind">{step.regime}-bound</span>.</div>')
        # "Cannot help" is the three-ceiling model's: the longest time sets the step.  A real engine hides its
        # launches under a memory-bound step only in part, which the Expected tab's chain counts (a hardware
        # engineer's trial: CUDA graphs took 12 % off a memory-bound Llama-3-8B step there, "cannot help" here).
        partly = ("" if step.regime == "overhead" else
                  " In a real engine the launches hide under the step only in part, so CUDA graphs still shave some "
                  "of it: the Expected tab counts that (its launches and overlap terms).")
        self.fixes.object = (
            f'<div class="hw-decision">Fixes that can help this {step.regime}-bound step: '
            f'{escape(", ".join(step.fixes))}. Cannot help here, where the longest of the three times sets the '
            f"step: {escape('; '.join(', '.join(fixes) for fixes in fixes_that_cannot_help(step.regime).values()))}."
            f"{partly}</div>")

    def _refresh_stairs(self, gpu):
        tm, tn = TILES[self.tile]
        sms, sm_note = sm_count_for_waves(gpu)
        peak = gpu.dense_flop_per_s["bf16"]
        lo, asked_hi = sorted((self.n_min, self.n_max))
        hi = min(asked_hi, lo + MAX_STAIRS)
        capped = (f" The chart shows N = {lo:,} to {hi:,} (at most {MAX_STAIRS:,} points), not to {asked_hi:,}."
                  if hi < asked_hi else "")
        # What the chart shows where the boxes leave it to the reader to guess (a teacher's trial: "N from" 240 and
        # "N to" 15 drew 15 to 240 in silence, and a readout off the chart's range stood alone, off every curve).
        if self.n_min > self.n_max:
            capped += f" N from ({self.n_min:,}) is past N to ({self.n_max:,}): the chart shows N = {lo:,} to {hi:,}."
        if not lo <= self.n_probe <= hi:
            capped += f" The readout's N = {self.n_probe:,} lies outside the chart's N = {lo:,} to {hi:,}."
        s = staircase(range(lo, hi + 1), self.wave_m, self.wave_k, tm, tn, sms, peak)
        self.stairs.data = {"n": list(s["n"]), "tflops": list(s["achieved_flop_per_s"] / TFLOP),
                            "waves": list(s["waves"]), "padded": list(s["padded_n"]), "eff": list(s["efficiency"])}
        q = gemm_quantisation(self.wave_m, self.n_probe, self.wave_k, tm, tn, sms, peak)
        self.stairs_probe.data = {"n": [q.n], "tflops": [q.achieved_flop_per_s / TFLOP]}
        self.peak_span.location = peak / TFLOP
        # Two losses, each said as what it is, and their product written out (a teacher's trial read "99.3 % useful"
        # and then "35.43 GFLOP for 17.72 useful", 50 %, as one workload called useful twice), at the decimals that
        # multiply out.
        # The product is the factors' as printed: the whole's share at these decimals, or, where no count of decimals
        # up to four gives that (0.4 % of shapes), a hair from it, and still multiplying out.
        d = product_digits(q.tile_efficiency, q.wave_efficiency)
        a, b = (round(100 * v, d) for v in (q.tile_efficiency, q.wave_efficiency))
        tiles, slots, both = (f"{v:.{d}f} %" for v in (a, b, a * b / 100))
        self.stairs_readout.object = (
            f"<div>N = {q.n:,} on a {escape(self.tile)} tile: padded to {q.padded_m:,} × {q.padded_n:,} "
            f"({tiles} of the padded tiles useful), {q.blocks:,} thread blocks in "
            f"<b>{q.waves:,} wave(s)</b> on {sms} SMs{escape(f' ({sm_note})' if sm_note else '')} "
            f"({slots} of SM slots busy): {tiles} × {slots} = {both} of the work the waves take time for is useful "
            f"({fmt_flop(q.useful_flop)} of {fmt_flop(q.executed_flop)}), "
            f"{fmt_sig(q.achieved_flop_per_s / TFLOP)} of {fmt_sig(peak / TFLOP)} TFLOP/s.{capped}</div>")

    def _refresh_hierarchy(self, gpu):
        peak = gpu.dense_flop_per_s["bf16"]
        levels = gpu.memory_levels()
        colors = {name: color for name, (color, _) in LEVEL_STYLES.items()}
        roofs = self.level_roofs
        roofs.data = {"xs": [list(X) for _ in levels], "ys": [_roof(peak, bw) for _, bw, _ in levels],
                      "color": [colors[n] for n, _, _ in levels],
                      "dash": [LEVEL_STYLES[n][1] for n, _, _ in levels]}
        self.levels.data = {"x": [1.0] * len(levels), "y": [bw / 1e12 for _, bw, _ in levels],
                            "level": [n for n, _, _ in levels], "color": [colors[n] for n, _, _ in levels]}
        # Each roof's name and bandwidth in the legend, in the roofs' order (fastest first).
        names = [f"{n} {fmt_bandwidth(bw)}" for n, bw, _ in levels]  # as the tour's captions print them
        for i, item in enumerate(self.level_legend.items):
            item.update(label=value(names[i] if i < len(names) else ""), visible=i < len(names))  # a text, not a column
        sram = sram_bytes(gpu)
        na = naive_attention(self.attn_n, self.attn_d)
        fa = flash_attention(self.attn_n, self.attn_d, sram)
        floor = attention_compulsory_bytes(self.attn_n, self.attn_d)
        pts = [("naive (S, P in HBM)", na.flop, na.bytes_moved, ATTENTION_STYLES["naive"]),
               ("Flash: HBM, Θ(N²d²/M)", fa.flop, fa.bytes_moved, ATTENTION_STYLES["flash"]),
               ("Flash: Q, K, V, O once", fa.flop, floor, ATTENTION_STYLES["once"])]
        self.attn_points.data = {
            "x": [f / b for _, f, b, _ in pts],
            "y": [attainable_flop_per_s(f / b, peak, gpu.hbm_bandwidth) / TFLOP for _, f, b, _ in pts],
            "name": [n for n, *_ in pts], "color": [c for *_, (c, _) in pts],
            "marker": [m for *_, (_, m) in pts],
            "mb": [f"{b / 1e6:,.1f}" for _, _, b, _ in pts], **unplaced(len(pts))}
        l2_text = f"{gpu.l2_bytes / MiB:,.0f} MiB of L2" if gpu.l2_bytes else "an L2 whose size is unpublished"
        missing = [lvl for lvl in ("SRAM", "L2") if lvl not in {n for n, _, _ in levels}]
        note = (f" No source in the catalogue gives this part's {' or '.join(missing)} bandwidth, so that roof is "
                "not drawn." if missing else "")
        if not gpu.sram_per_sm_bytes:
            note += " " + SRAM_NOTE.format(gpu=gpu.name)
        self.hier_text.object = (
            f"<div>One head, N = {self.attn_n:,}, d = {self.attn_d}: naive attention moves {na.bytes_moved / 1e6:,.1f} "
            f"MB through HBM (I = {na.intensity:,.1f}); FlashAttention, {sram / 1024:,.0f} KiB of SRAM per SM, "
            f"{fa.bytes_moved / 1e6:,.1f} MB (I = {fa.intensity:,.1f}, Dao et al.'s bound) for "
            f"{fa.flop / na.flop:.3f}× the FLOPs: {na.time(gpu) * 1e6:,.1f} µs → {fa.time(gpu) * 1e6:,.1f} µs on the "
            f"HBM roof. With one head's K and V ({2 * self.attn_n * self.attn_d * 2 / MiB:,.1f} MiB) in {l2_text}, "
            f"HBM sees Q, K, V and O once ({floor / 1e6:,.1f} MB): I = {fa.flop / floor:,.0f}, "
            # Dao et al.'s count is an IO bound with no reuse in L2; with it, the forward pass is past the ridge, as
            # FlashAttention-2 runs in practice (a hardware engineer's trial read the 17.7 µs "on the HBM roof" as
            # the lab's claim that FlashAttention is memory-bound).
            + (f"past the ridge ({gpu.ridge_point():,.0f}), compute-bound as in practice."
               if fa.flop / floor >= gpu.ridge_point() else
               f"under the ridge ({gpu.ridge_point():,.0f}); the re-reads land on the faster roofs.")
            + f"{escape(note)}</div>")

    def _refresh_generations(self, gpu):
        ids = list(self.generations)
        cat = load_catalogue()
        xs, ys, names, colors, dashes, markers, rx, ry, rt = [], [], [], [], [], [], [], [], []
        # Each part keeps its style whatever else is overlaid (the tour's step 15 showed the A100 blue, brown at step
        # 13): the default parts by their place in the default list, others after them in the order chosen.
        extra = [gid for gid in ids if gid not in GENERATIONS]
        for gid in ids:
            g = cat[gid]
            i = GENERATIONS.index(gid) if gid in GENERATIONS else len(GENERATIONS) + extra.index(gid)
            c, dash, marker = series_style(i)  # a dash and a marker as well as a colour: H100, H200, MI300X
            dashes.append(dash)
            markers.append(marker)
            xs.append(list(X))
            ys.append(_roof(g.dense_flop_per_s["bf16"], g.hbm_bandwidth))
            names.append(g.name)
            colors.append(c)
            rx.append(g.ridge_point())
            ry.append(g.dense_flop_per_s["bf16"] / TFLOP)
            rt.append(f"{g.short_name}: {g.ridge_point():.0f}")
        self.gen_roofs.data = {"xs": xs, "ys": ys, "name": names, "color": colors, "dash": dashes}
        marks = workloads_data(self.example_intensity)
        if marks["x"] != self.workloads.data["x"]:
            self.workloads.data = marks
        self.gen_ridges.data = {"x": rx, "y": ry, "text": rt, "color": colors,
                                "text_color": [text_color(c) for c in colors], "marker": markers,
                                **unplaced(len(rx))}
        sparse = gpu.sparse_flop_per_s.get("bf16")
        if self.show_sparse and sparse:
            ridge = sparse / gpu.hbm_bandwidth
            self.gen_sparse.data = {"x": list(X), "y": _roof(sparse, gpu.hbm_bandwidth)}
            self.gen_sparse_label.data = {"x": [ridge], "y": [sparse / TFLOP],
                                          "text": [f"{gpu.short_name} 2:4 headline: {ridge:.0f}"],
                                          **unplaced(1)}
        else:
            self.gen_sparse.data = {"x": [], "y": []}
            self.gen_sparse_label.data = {"x": [], "y": [], "text": [], **unplaced(0)}
        trend = catalogue_trend(FLAGSHIPS)
        base = {"peak FLOP/s": trend.peak_flop_per_s[0], "DRAM bandwidth": trend.dram_bandwidth[0],
                "interconnect bandwidth": trend.interconnect_bandwidth[0]}
        series_color = {series: color for series, (color, _, _) in TREND_STYLES.items()}
        pts = {"year": [], "rel": [], "series": [], "name": [], "color": [], "marker": []}
        for j, gid in enumerate(trend.ids):
            for series, arr in (("peak FLOP/s", trend.peak_flop_per_s), ("DRAM bandwidth", trend.dram_bandwidth),
                                ("interconnect bandwidth", trend.interconnect_bandwidth)):
                pts["year"].append(int(trend.years[j]))
                pts["rel"].append(float(arr[j] / base[series]))
                pts["series"].append(series)
                pts["name"].append(cat[gid].name)
                pts["color"].append(series_color[series])
                pts["marker"].append(TREND_STYLES[series][2])
        self.trend_points.data = pts
        years = np.linspace(2017, 2025, 9)
        self.trend_lines.data = {"xs": [list(years)] * 3,
                                 "ys": [[growth(r, y - 2017) for y in years] for r in GHOLAMI_RATES_PER_2Y.values()],
                                 "series": list(GHOLAMI_RATES_PER_2Y),
                                 "color": [TREND_STYLES[s][0] for s in GHOLAMI_RATES_PER_2Y],
                                 "dash": [TREND_STYLES[s][1] for s in GHOLAMI_RATES_PER_2Y]}
        rates = ", ".join(f"{k} {v:.2f}×" for k, v in trend.rates.items())
        example = ("" if self.example_intensity is None else
                   f" and {example_name(self.example_intensity)}, the tour's example")
        trap = (f" The {escape(gpu.name)} datasheet headline {sparse / TFLOP:,.0f} TFLOP/s is the 2:4-sparsity "
                f"figure: it would put the ridge at {sparse / gpu.hbm_bandwidth:,.0f}, twice the dense "
                f"{gpu.ridge_point():,.0f}." if sparse else "")
        # What is above (the roofs), then what is below (the trend): "Lines (peak FLOP/s dashed …)" first, under the
        # roofs' chart, read as its lines (a teacher's trial found its roofs' dashes did not match).
        self.gen_text.object = (
            f"<div>Above, the grey triangles: the article's workloads (batch-1 decode 1, LayerNorm 2.5, batch-56 "
            f"decode 56, training GEMM 500){example}.{trap} Below, the trend since 2017: its lines (peak FLOP/s "
            f"dashed, DRAM dotted, interconnect dot-dash) are {escape(GHOLAMI_SOURCE)}: peak FLOP/s 3.0×, DRAM "
            f"bandwidth 1.6×, interconnect 1.4× per two years; its marks (triangles, circles, squares) this "
            f"catalogue's NVIDIA flagships (V100 → B200), fitted per two years: {escape(rates)}. "
            f"{escape(compounded_text())}</div>")

    # -- the tour ------------------------------------------------------------------------
    def _tour_key(self, action: str) -> None:
        # A stray press after "Finish" starts nothing: the levers stay where the last step left them.
        move = key_move(action, self.tour_index, len(HARDWARE_TOUR), None if self._tour_finished else 0)
        if move == "leave":
            self.stop_tour()
        elif move is not None:
            self.go(move)

    def _tour_next(self):
        if self.tour_index is None:
            self.go(0)
        elif self.tour_index == len(HARDWARE_TOUR) - 1:
            self.stop_tour()
            self._tour_finished = True
        else:
            self.go(self.tour_index + 1)

    #: The levers a tour step sets that are the lab's too (``app/lab.py`` SHARED_LEVERS): put back as they were when
    #: the tour started once it is left or finished (a teacher's trial left it at step 9 with CUDA graphs on in the
    #: main lab, whose overhead ceiling had moved from 45 to 160 TFLOP/s without a word).  The view's own stay.
    RESTORED_AFTER_TOUR = ("batch", "cuda_graphs")

    def go(self, index: int) -> None:
        """Show hardware-tour step ``index`` (0-based): set every lever, bring its section to the front."""
        if self.tour_index is None:
            self._before_tour = {name: getattr(self, name) for name in self.RESTORED_AFTER_TOUR}
        self.tour_index = max(0, min(index, len(HARDWARE_TOUR) - 1))
        self.tour_prev.disabled = self.tour_index == 0
        self.tour_next.label = "Finish ✓" if self.tour_index == len(HARDWARE_TOUR) - 1 else "Next ▶"
        self.tour_leave.visible = self.tour_caption.visible = True
        self._tour_finished = False
        self._take_keys()
        HARDWARE_TOUR[self.tour_index].apply(self)
        self._render_tour()

    def stop_tour(self) -> None:
        """Leave the tour; the view's own levers stay where the step left them (its kernels' outline goes with it),
        the lab's (:attr:`RESTORED_AFTER_TOUR`) go back to where they were when it started."""
        if self.tour_index is not None and self._before_tour:
            self.param.update(**self._before_tour)
            self._before_tour = {}
        self.tour_index = None
        self.focus = []
        self._take_keys()
        self.tour_caption.visible = self.tour_leave.visible = False
        self.tour_prev.disabled = True
        self.tour_next.label = "Start the hardware tour ▶"

    def _render_tour(self):
        step = HARDWARE_TOUR[self.tour_index]
        levers = {k: getattr(self, k) for k in HARDWARE_BASE}
        try:
            title, text = step.render(levers)
        except ValueError as exc:
            title, text = step.title, f"(this step's numbers need valid levers: {exc})"
        self.tour_caption.object = (
            f'<div class="hw-card" data-step="{self.tour_index + 1}"><h4>{escape(title)}</h4><div>{escape(text)}</div>'
            f'<div class="src">Step {self.tour_index + 1} of {len(HARDWARE_TOUR)} · {escape(step.source)}</div></div>')
