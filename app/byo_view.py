"""Bring your own model, GPU and measurements.

* A Hugging Face ``config.json`` (uploaded or pasted) is read by
  :mod:`core.config_reader`; the lab then shows what it read (L, h, h_kv,
  d_head, parameters total and active, KV per token, the attention pattern) and
  every assumption, so it can be checked against the model card.  A config that
  cannot be understood is refused with the reason, and the current model stays.
* A custom accelerator from its datasheet numbers joins the GPU selector for the
  session (and travels in permalinks), with a warning when a peak looks like a
  2:4-sparsity headline.
* Measured decode points (CSV: batch, context, tokens/s) are set against the
  roof: MBU, MFU and the gap, drawn on the roofline and on throughput vs batch.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import math
import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from html import escape

import panel as pn
import param

from core.config_reader import (
    COUNTED_AT_16_BITS,
    MAX_CONFIG_BYTES,
    config_model_id,
    config_name,
    from_hf_config,
    named_by_file,
    parse_config_text,
)
from core.hardware import custom_accelerator, load_catalogue, peak_order_warnings, sparse_warnings
from core.measured_points import ABOVE_ROOF_CAUSE, MAX_CSV_CHARS, MeasuredPoint, parse_measurements
from core.models import ConfigError, ModelSpec
from core.permalink import (
    MAX_LINK_CONFIG_CHARS,
    MAX_SCENARIO_CHARS,
    LinkState,
    apply_link_gpus,
    config_for_link,
    from_query,
    link_gpus,
    minified,
    read_scenario_file,
    scenario_file,
    to_query,
)
from core.scenario import Scenario, added_levers
from core.units import fmt_rate, fmt_sig, parse_number, underflows

from .layer_strip import layer_strip_html
from .permalink_view import pins_left_out
from .present import DROPPER_TEXT_CSS, INPUT_TEXT_CSS
from .readouts import approximate_html
from .standalone import constants
from .state import LabState
from .style import CODE_CSS, STYLESHEET

#: The size limit of a config.json or a measurements CSV, dropped or pasted, as the lab names it: the config
#: reader's (core.config_reader.MAX_CONFIG_BYTES, 2,000,000 bytes), which the measurements reader shares.
SIZE_LIMIT = f"{MAX_CONFIG_BYTES / 1e6:g} MB"
#: Largest file the browser sends, in FilePond's units (base 1000: "2MB" is 2,000,000 bytes); a larger one is
#: refused in the browser and never reaches the session.
UPLOAD_LIMIT = SIZE_LIMIT.replace(" ", "")
#: A text area keeps one character more than the readers accept: a browser cuts a longer paste to its
#: ``maxlength`` in silence, and what is left over the limit is then refused as too large (a paste cut at the
#: limit itself was read as truncated JSON: "invalid JSON at line 1, column 606").
TEXT_LIMIT = max(MAX_CONFIG_BYTES, MAX_CSV_CHARS) + 1
#: Characters a figure of your GPU form takes (a number, its sign and exponent): the browser cuts a paste there.
FIGURE_LIMIT = 40
#: Largest scenario file the browser sends (FilePond's units, whole ones: "4050KB" is 4,050,000 bytes), the reader's
#: own limit (:data:`core.permalink.MAX_SCENARIO_CHARS`): rounded up to whole MB, a file under it was refused by
#: the browser with a limit the docs do not give (an engineer's trial).
SCENARIO_UPLOAD_LIMIT = f"{-(-MAX_SCENARIO_CHARS // 1000)}KB"


#: The worker for config reads (:meth:`BringYourOwnView._read_config`), shared by every session of the process.
#: Python threads share the GIL, so a read still competes with the event loop for it; the loop gets it back every
#: few milliseconds (sys.getswitchinterval), not after the whole read.  One worker: a second adds no throughput
#: (both hold the same GIL) and takes the loop's share from a half to a third; reads pasted together queue here,
#: not on the loop.  What makes a read cheap is the model caches (core/layers.py, core/profiles.py).
READERS = ThreadPoolExecutor(max_workers=1, thread_name_prefix="config-reader")
#: Set once the last read handed to a session has been applied (or dropped).  Reads of one config pasted by a
#: class land together (the second is a lookup): each session's apply is a few tens of ms on the loop, and twenty
#: queued at once held every other student's update behind them all.  The reader hands the next read over only
#: when the previous one has been applied, so the loop takes the other sessions' messages between two applies.
_APPLIED = threading.Event()
_APPLIED.set()
#: How long the reader waits for a session to apply the read before it hands over the next (a session closed
#: meanwhile never applies it).
APPLY_WAIT_S = 1.0
#: The most of the event loop's time that applies of reads queued together may take.  An apply is each session's own
#: work (its new model evaluated, every view redrawn: 15–25 ms), so twenty handed over back to back still kept the
#: loop busy for half a second, and the other students' moves queued behind them.  After an apply that took ``d``
#: seconds the reader hands over the next no sooner than ``d / APPLY_SHARE`` after that apply began: the students who
#: pasted wait a little longer for their report, the others' updates go between.
APPLY_SHARE = 0.5
#: When the reader may hand over the next read (``time.perf_counter``), set by each apply (:data:`APPLY_SHARE`).
_NEXT_APPLY = [0.0]

log = logging.getLogger(__name__)


#: Configs read, by their text's SHA-256 and the file's name: the model a config gives depends on nothing else, and
#: a class pastes the config its teacher handed out (one read, then the same immutable ModelSpec for every session,
#: whose deployments and browser constants are then kept once).  Refusals are kept too.
READS_KEPT = 32
_READS: OrderedDict[tuple, ModelSpec | ConfigError] = OrderedDict()
_READS_LOCK = threading.Lock()


def _model_of(raw: str | bytes, file_name: str) -> ModelSpec | ConfigError:
    """The model a config's text gives (named, and given its id, as the CLI does:
    :func:`core.config_reader.config_name`, :func:`core.config_reader.config_model_id`), or the
    :class:`ConfigError` that refuses it."""
    try:
        if not raw:
            raise ConfigError(f"choose a config.json file (up to {SIZE_LIMIT}) or paste its text first; a file "
                              f"over {SIZE_LIMIT} is refused by the browser and not sent")
        config = parse_config_text(raw)
        name = config_name(config, file_name)
        return from_hf_config(config, model_id=config_model_id(name), name=name)
    except ConfigError as exc:
        return exc


def form_number(text: str | None, label: str) -> float | None:
    """A number typed into your GPU form, as typed: None when the field is empty; the lab's own minus sign (U+2212,
    as its pages print negatives) read as ``-``, so that the range check refuses the value the user sees.

    Raises:
        ValueError: anything else that is not a number written in ASCII digits, naming the field and the text.
    """
    text = (text or "").strip()
    if not text:
        return None
    try:
        value = parse_number(text.replace("\u2212", "-"))
    except ValueError:
        raise ValueError(f"{label}: {text[:20]!r} is not a number (digits, a point, an exponent)") from None
    if math.isinf(value) or underflows(text, value):
        # 1e-400 reads as 0 and 1e400 as inf: the range check would answer "got 0" to a figure nobody typed
        raise ValueError(f"{label}: {text[:20]!r} is {'too large' if value else 'too small'} for a number the lab "
                         "holds (a float's range, about 1e-308 to 1e308)")
    return int(value) if value.is_integer() and abs(value) < 1e15 else value  # "got -9000", as typed, not -9000.0


def portable_config(raw: str | bytes, file_name: str = "") -> str:
    """A config's text as links and scenario files carry it: minified, and named as the lab named it (when the
    file's name is what names the model, it becomes ``_name_or_path``: :func:`core.config_reader.named_by_file`),
    so a second session reads the same model."""
    text = raw.decode("utf-8", "surrogatepass") if isinstance(raw, bytes) else raw
    if file_name:
        try:
            config = json.loads(text)
        except (ValueError, RecursionError):
            return text
        named = named_by_file(config, file_name)
        if named is not config:
            return json.dumps(named, separators=(",", ":"), ensure_ascii=False)
    return minified(text)


def _read(raw: str | bytes, uploaded: tuple[str, str | bytes] | None, scenario: Scenario, prepare=None):
    """Read a config into a model and evaluate it once in a copy of the session's scenario (so what only the
    model decides is worked out and kept before the session applies it): ``(catalogue, model, report, text)``,
    the first two as :meth:`core.catalogue.Catalogue.with_model` gives them, the report (:func:`report_html`) and
    the config's text as links carry it (:func:`portable_config`); or the :class:`ConfigError` that refuses it.

    Safe in a worker thread: it reads the scenario given (a copy) and the immutable catalogue, and changes neither.
    """
    from_file = bool(uploaded) and raw is uploaded[1]
    file_name = uploaded[0] if from_file else ""
    text = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    key = (hashlib.sha256(text).digest(), file_name)
    with _READS_LOCK:
        model = _READS.get(key)
        if model is not None:
            _READS.move_to_end(key)
    if model is None:
        model = _model_of(raw, file_name)
        with _READS_LOCK:
            _READS[key] = model
            if len(_READS) > READS_KEPT:
                _READS.popitem(last=False)
    if isinstance(model, ConfigError):
        return model
    catalogue, model = scenario.catalogue.with_model(model)
    ahead = Scenario(catalogue=catalogue, **{**scenario.levers(), **added_levers(model)})
    try:
        if prepare is not None:
            prepare(ahead)  # the browser's constants: the profiles of every weight format its model reads
        else:
            constants(ahead, ahead.evaluate())
    except Exception:  # noqa: BLE001 - the session's own evaluation reports what fails; this only warms the caches
        log.debug("evaluating a read config ahead failed", exc_info=True)
    return catalogue, model, report_html(model), portable_config(raw, file_name)


def read_config_then(raw: str | bytes, scenario: Scenario, prepare, done) -> None:
    """Read a config's text as the tab's own read does (:func:`_read`: off the session's event loop when served,
    in :data:`READERS`), then call ``done`` with its outcome in the session's next tick; at once without a server.

    ``done`` gets what :func:`_read` returns, or a :class:`ConfigError` (a fault of the reader is logged and
    named by its type only).
    """
    def outcome(run):
        try:
            return run()
        except Exception as exc:  # noqa: BLE001 - a fault of the reader must stay off the page, and be logged
            log.exception("reading a config failed")
            return ConfigError(f"the lab could not read this config ({type(exc).__name__})")

    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        done(outcome(lambda: _read(raw, None, scenario, prepare)))
        return
    future = READERS.submit(_read, raw, None, scenario.clone(), prepare)
    future.add_done_callback(lambda f: doc.add_next_tick_callback(lambda: done(outcome(f.result))))


def open_scenario(state: LabState, query: dict, config: str | None, prepare=None, *, done,
                  ignore: tuple[str, ...] = (), undoable: bool = True) -> None:
    """Apply a link's or a scenario file's levers, pins and custom GPU (:func:`core.permalink.from_query`), after
    reading the config.json text it carries, if any, into the model they name (:func:`read_config_then`: off the
    event loop when served).

    Args:
        state: the session state whose scenario and pins change.
        query: the link's query parameters (or a scenario file's, :func:`core.permalink.read_scenario_file`).
        config: the config.json text, or None.
        prepare: as :attr:`BringYourOwnView.prepare`.
        done: called with the notices (what was left out, and why) once it is applied, or refused.
        ignore: query keys left to the app (``app.permalink_view.APP_KEYS``).
        undoable: the pins are set as a change Undo reverts (False: the page's opening link).
    """
    scenario = state.scenario
    if config is None:
        link = from_query(query, ignore)
        _apply(state, link, undoable)
        done(link.notices)
        return
    started = (scenario.catalogue, scenario.model)

    def read(outcome) -> None:
        current = scenario.catalogue.model(scenario.model).name
        if isinstance(outcome, ConfigError):
            done([f"ignored config: {outcome}; the lab keeps {current}"])
            return
        if scenario.catalogue is not started[0] or scenario.model != started[1]:
            done([f"ignored config: another model was chosen while it was read; the lab keeps {current}"])
            return
        catalogue, model, _report, text = outcome
        link = from_query(query, ignore, added=model)
        state.configs = {**state.configs, model.id: text}
        scenario.select_added(catalogue, model)
        _apply(state, link, undoable)
        done(link.notices)

    read_config_then(config, scenario, prepare, read)


def _apply(state: LabState, link: LinkState, undoable: bool) -> None:
    """Apply a link's custom GPUs, levers and pins to the session."""
    scenario = state.scenario
    apply_link_gpus(scenario, link)  # the selected GPU's and its pins'
    scenario.param.update(**link.levers)
    if undoable:
        state.set_pins(link.pins)
    else:
        state.pins = list(link.pins)


#: Reports made, by the model's identity (the model kept beside its report, so an id is never reused while its
#: entry lives): a class pasting one config gets one immutable ModelSpec (:data:`_READS`), so one report.
_REPORTS: OrderedDict[int, tuple[ModelSpec, str]] = OrderedDict()


def report_html(model: ModelSpec) -> str:
    """The "Read …: now the selected model" report: what was read, the layer strip, what is not modelled, what was
    assumed, the checkpoint as stored (HTML, every name escaped).  Made with the read, in its worker, once per
    model (:data:`_REPORTS`)."""
    with _READS_LOCK:
        kept = _REPORTS.get(id(model))
        if kept is not None and kept[0] is model:
            _REPORTS.move_to_end(id(model))
            return kept[1]
    report = _report_html(model)
    with _READS_LOCK:
        _REPORTS[id(model)] = (model, report)
        if len(_REPORTS) > READS_KEPT:
            _REPORTS.popitem(last=False)
    return report


def _report_html(model: ModelSpec) -> str:
    q = model.quantization
    # A config that leaves every weight 16-bit (modules_to_not_convert: ["*"]) is not an 8-bit checkpoint (a trial).
    none_quantised = model.stores_every_weight_16_bit()
    precision = ("" if not (q and q.modelled) else
                 f" Its quantization_config ({q.method}) leaves every weight 16-bit: the weight precision is set to "
                 "as stored (BF16)." if none_quantised else
                 f" Its checkpoint is {q.bits}-bit {q.method}: the weight precision is set to as stored (each tensor "
                 "group in its own format).")
    rows = "".join(f'<tr><td class="k">{escape(k)}</td><td class="v">{escape(str(v))}</td></tr>'
                   for k, v in model.architecture().items())
    stored = "".join(f'<tr><td class="k">{escape(g.name)}</td><td class="v">{g.params:,} × '
                     f"{g.bytes_per_weight:.4g} B ({escape(g.format)})</td></tr>" for g in model.stored_breakdown())
    warned = "".join(f"<li>{escape(w)}</li>" for w in model.warnings)
    assumed = "".join(f"<li>{escape(a)}</li>" for a in model.assumptions if a not in model.warnings)
    return (
        f'<div class="ok" data-readout="config">Read {escape(model.name)}: now the selected model.'
        f"{escape(precision)} Check what was read against the model card.</div>"
        + approximate_html(model, "config-approximate")
        + f"{layer_strip_html(model.stack)}<table class=\"lab\">{rows}</table>"
        + (f'<div class="bad" data-readout="config-warnings">Not modelled — the numbers assume otherwise:'
           f"<ul>{warned}</ul></div>" if warned else "")
        + '<div class="warn">How it was read (assumptions for fields the config left out, notes on those it gave):'
        f'<ul>{assumed or "<li>none</li>"}</ul></div>'
        + ('<div class="k">The checkpoint as the lab counts it stored: 16-bit, as engines serve it (its FP32 files '
           'hold twice these bytes):</div>' if any(COUNTED_AT_16_BITS in a for a in model.assumptions)
           else '<div class="k">The checkpoint as stored:</div>')
        + f'<table class="lab">{stored}</table>'
    )


def _upload(widget: pn.widgets.FileDropper) -> tuple[str, str | bytes] | None:
    """The dropped file as ``(name, content)``, or None when there is none."""
    files = widget.value or {}
    return next(iter(files.items()), None)


class _FileOrText:
    """A file dropper and a text area for one input: whichever was given last is the input.

    A dropped file runs ``on_drop`` at once (there is nothing more to type) and empties the text area, which would
    otherwise show another input than the one read; pasted text waits for its button.
    The text area's watcher follows two parameters and is called with one event for each that changed (a paste
    changes both).
    """

    def __init__(self, file: pn.widgets.FileDropper, text: pn.widgets.TextAreaInput, on_drop):
        self.file, self.text, self._on_drop, self._last = file, text, on_drop, "text"
        file.param.watch(self._dropped, "value")
        text.param.watch(lambda *_events: setattr(self, "_last", "text"), ["value", "value_input"])

    def _dropped(self, event) -> None:
        if event.new and (self.text.value or self.text.value_input):
            # The box would show one input beside the report of another (a trial pasted Qwen's config, dropped
            # DeepSeek-V3's, pressed Read: Qwen's JSON stayed in view while DeepSeek-V3 was read): it empties.
            self.text.param.update(value="", value_input="")
        self._last = "file"
        if event.new:
            self._on_drop()

    def given(self) -> tuple[str | bytes, tuple[str, str | bytes] | None]:
        """``(content, upload)``: the dropped file's content if it came last, else the text typed or pasted;
        and the dropped file as ``(name, content)``, or None."""
        uploaded = _upload(self.file)
        text = self.text.value_input or self.text.value or ""
        return (uploaded[1] if self._last == "file" and uploaded else text), uploaded


EXAMPLE_CSV = "batch,context,tokens_per_s\n1,2048,150\n8,2048,1000\n32,2048,3100"


class BringYourOwnView(pn.viewable.Viewer):
    """The controls and reports of the "Bring your own" tab: a model, a GPU, measurements.

    What it reads goes into the session state: a model or GPU into the scenario's
    catalogue (selected at once), measurements into ``state.measurements``; the
    measured table follows ``state.measured``.
    """

    state = param.ClassSelector(class_=LabState, doc="The session state it writes and follows.")
    prepare = param.Callable(default=None, doc="Called in the reader's worker with the scenario that selects a "
                             "model just read (the browser's constants are made there: InstantRedraw.prepare).")

    def __init__(self, **params):
        super().__init__(**params)
        self.scenario = self.state.scenario
        self._generation = 0  # config reads started: a read's result is shown only if none started after it
        # The browser refuses a file over the limit before sending it (FilePond's size check), so
        # a 16 MB upload never reaches, let alone closes, the session's websocket.
        self.config_file = pn.widgets.FileDropper(max_file_size=UPLOAD_LIMIT, multiple=False,
                                                  css_classes=["config-file"], height=90,
                                                  sizing_mode="stretch_width", stylesheets=[DROPPER_TEXT_CSS])
        # Text areas cap input at 5,000 characters by default; a config can be longer, and one
        # over the reader's limit gets its message rather than being cut silently (TEXT_LIMIT).
        self.config_text = pn.widgets.TextAreaInput(placeholder="…or paste a config.json here", height=120,
                                                    max_length=TEXT_LIMIT, sizing_mode="stretch_width",
                                                    css_classes=["config-text"], stylesheets=[INPUT_TEXT_CSS])
        self.read_config = pn.widgets.Button(label="Read config", css_classes=["config-read"], width=140)
        self.config_report = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width")
        self.gpu_name = pn.widgets.TextInput(label="Name", value="My accelerator", width=180, css_classes=["gpu-name"],
                                             stylesheets=[INPUT_TEXT_CSS])
        # Text, read as typed (:func:`form_number`): a number field dropped what it could not parse, so "−5" with
        # the lab's own minus sign became 5 (a trial), a pasted "−9000" NaN, and a typed 0 nothing.
        def figure(label: str, css: str) -> pn.widgets.TextInput:
            return pn.widgets.TextInput(label=label, value="", width=170, max_length=FIGURE_LIMIT, css_classes=[css],
                                        stylesheets=[INPUT_TEXT_CSS])

        self.peaks = {roof: figure(f"{label} dense peak (TFLOP/s)", f"gpu-{roof}")
                      for roof, label in (("bf16", "BF16/FP16"), ("fp8", "FP8"), ("int8", "INT8"), ("fp4", "FP4"))}
        self.bandwidth = figure("Memory bandwidth (TB/s)", "gpu-bw")
        self.capacity = figure("Memory (GB, as printed)", "gpu-capacity")
        # Its scale-up link and node, as the command line's --gpu-link and --gpu-node and a link's custom-gpu= carry
        # them: without a link a split counted only its calls' latency (a hardware engineer's trial).
        self.link = figure("Scale-up link (GB/s per direction, optional)", "gpu-link")
        self.node = figure("GPUs per scale-up node (optional)", "gpu-node")
        datasheets = {"(none)": None, **{g.name: g.id for g in load_catalogue().values()}}
        self.reference = pn.widgets.Select(label="Draw beside the datasheet of", width=220, css_classes=["gpu-ref"],
                                           options=datasheets, stylesheets=[INPUT_TEXT_CSS])
        self.add_gpu = pn.widgets.Button(label="Add GPU", css_classes=["gpu-add"], width=120)
        self.gpu_report = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width")
        self.csv_file = pn.widgets.FileDropper(max_file_size=UPLOAD_LIMIT, multiple=False,
                                               css_classes=["measured-file"], height=90, sizing_mode="stretch_width",
                                               stylesheets=[DROPPER_TEXT_CSS])
        self.csv_text = pn.widgets.TextAreaInput(value="", placeholder=EXAMPLE_CSV, height=100, max_length=TEXT_LIMIT,
                                                 sizing_mode="stretch_width", css_classes=["measured-text"],
                                                 stylesheets=[INPUT_TEXT_CSS])
        self.plot = pn.widgets.Button(label="Plot measurements", css_classes=["measured-plot"], width=170)
        self.measured_report = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width")
        self.share_report = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width")
        self.save_scenario = pn.widgets.FileDownload(
            callback=lambda: io.StringIO(self.scenario_text()), filename="roofline-lab-scenario.json",
            label="Save a scenario file (config, levers, pins)", width=320, css_classes=["scenario-save"])
        self.scenario_file = pn.widgets.FileDropper(max_file_size=SCENARIO_UPLOAD_LIMIT, multiple=False,
                                                    css_classes=["scenario-file"], height=90,
                                                    sizing_mode="stretch_width", stylesheets=[DROPPER_TEXT_CSS])
        self.scenario_file.param.watch(lambda e: e.new and self._open_scenario(), "value")
        self.scenario_report = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width")
        # The file or the pasted text, whichever was given last, is what "Read config" and "Plot" read.
        self._config = _FileOrText(self.config_file, self.config_text, self._read_config)
        self._csv = _FileOrText(self.csv_file, self.csv_text, self._plot)
        self.read_config.on_click(lambda _e: self._read_config())
        self.add_gpu.on_click(lambda _e: self._add_gpu())
        self.plot.on_click(lambda _e: self._plot())
        self.layout = pn.Column(
            pn.pane.Markdown("#### Your model: a Hugging Face config.json"),
            self.config_file, self.config_text, self.read_config, self.config_report,
            pn.pane.Markdown("#### Your GPU (dense figures, not the 2:4-sparsity headline)"),
            pn.FlexBox(self.gpu_name, *self.peaks.values(), self.bandwidth, self.capacity, self.link, self.node,
                       self.reference),
            self.add_gpu, self.gpu_report,
            pn.pane.Markdown("#### Your measurements: decode points, CSV with a header "
                             "`batch,context,tokens_per_s` (plain decode, k = 1, the current model, GPU and "
                             "precisions)", stylesheets=[CODE_CSS]),
            self.csv_file, self.csv_text, self.plot, self.measured_report,
            pn.pane.Markdown("#### Share it: the link, or a scenario file"),
            self.share_report, self.save_scenario,
            pn.pane.Markdown("Open a scenario file (its model, levers and pins replace the lab's):"),
            self.scenario_file, self.scenario_report,
            sizing_mode="stretch_width",
        )
        self.show_measured()
        self.show_share()
        self.show_carried()

    def __panel__(self):
        return self.layout

    # -- your model -----------------------------------------------------------------
    def _read_config(self) -> None:
        """Read the config given last, off the session's event loop when served (:func:`read_off_the_loop`).

        The event loop is every student's: a pasted hybrid of 2,048 layers cost it 1.5 s or more of CPU
        (issue 31), and every other session's update waited.  Served, the read and the new model's first
        evaluation run in a worker (:data:`READERS`) while the page says "Reading config…"; the result is applied
        in the session's own next tick, one session's at a time (:data:`_APPLIED`).  A read overtaken by a newer
        one, or by another model chosen meanwhile, is dropped.  Without a server (a notebook, the unit tests) it
        runs at once.
        """
        raw, uploaded = self._config.given()
        self._generation += 1
        started = (self._generation, self.scenario.catalogue, self.scenario.model)
        doc = pn.state.curdoc
        if doc is None or doc.session_context is None:
            self._show_read(started, _read(raw, uploaded, self.scenario))
            return
        self.read_config.loading = True
        self.config_report.object = ('<div class="warn" data-readout="config" aria-busy="true">Reading config… '
                                     "(a large config takes a moment; the lab stays usable meanwhile)</div>")
        READERS.submit(self._read_and_hand_over, doc, started, raw, uploaded, self.scenario.clone())

    def _read_and_hand_over(self, doc, started: tuple, raw, uploaded, scenario: Scenario) -> None:
        """In the reader's thread: read, wait until the read handed over before has been applied
        (:data:`_APPLIED`), then have the session apply this one on its next tick."""
        done: Future = Future()
        try:
            done.set_result(_read(raw, uploaded, scenario, self.prepare))
        except Exception as exc:  # noqa: BLE001 - reported by the session (_apply_read), logged there
            done.set_exception(exc)
        _APPLIED.wait(APPLY_WAIT_S)
        _APPLIED.clear()
        time.sleep(min(APPLY_WAIT_S, max(0.0, _NEXT_APPLY[0] - time.perf_counter())))
        try:
            doc.add_next_tick_callback(lambda: self._show_read(started, done, served=True))
        except Exception:  # noqa: BLE001 - a session closed meanwhile: nothing to apply, the next may go
            _APPLIED.set()

    def _show_read(self, started: tuple, read, served: bool = False) -> None:
        """Apply a read (its :func:`_read` result, or a future of it) unless the student moved on since it started;
        ``served``: handed over by the reader, which waits for this (:data:`_APPLIED`)."""
        began = time.perf_counter()
        try:
            if started[0] != self._generation:
                return  # a newer read is under way, or was shown: it reports
            with pn.io.hold():  # the new model's views, the report and the button: one message to the browser
                self._apply_read(started, read)
        finally:
            if served:
                now = time.perf_counter()
                _NEXT_APPLY[0] = began + (now - began) / APPLY_SHARE
                _APPLIED.set()

    def _apply_read(self, started: tuple, read) -> None:
        _, catalogue, model_id = started
        self.read_config.loading = False
        current = self.scenario.catalogue.model(self.scenario.model).name
        if self.scenario.catalogue is not catalogue or self.scenario.model != model_id:
            self.config_report.object = ('<div class="warn" data-readout="config">The config read was not applied: '
                                         f"another model was chosen meanwhile. The lab keeps {escape(current)}.</div>")
            return
        try:
            outcome = read.result() if hasattr(read, "result") else read
        except Exception as exc:  # noqa: BLE001 - a fault of the reader must stay off the page, and be logged
            log.exception("reading a config failed")
            outcome = ConfigError(f"the lab could not read this config ({type(exc).__name__})")
        if isinstance(outcome, ConfigError):
            self.config_report.object = (f'<div class="bad" data-readout="config">Refused: {escape(str(outcome))}. '
                                         f"The lab keeps {escape(current)}.</div>")
            return
        catalogue, model, report, text = outcome
        self.state.configs = {**self.state.configs, model.id: text}
        self.scenario.select_added(catalogue, model)
        self.config_report.object = report

    @param.depends("state.configs", "state.result", watch=True)
    def show_carried(self) -> None:
        """A config that came in a link or a scenario file (``config=``), not read on this page: its report as a
        read would give it (the layer strip, L, h, h_kv, d_head, the keys not modelled), so whoever opens a shared
        link can check the model against its model card.  Nothing once a report is shown.  A link's config is
        recorded before its model is selected: the selection (a new result) shows it (a trial's shared link had
        left the tab empty under a readout saying "see what the lab read")."""
        model_id = self.scenario.model
        if not self.config_report.object and model_id in self.state.configs:
            self.config_report.object = report_html(self.scenario.catalogue.model(model_id))

    # -- sharing --------------------------------------------------------------------------
    @param.depends("state.configs", "state.result", "state.pins", watch=True)
    def show_share(self) -> None:
        """Whether the link carries the selected model's config.json (``config=``), or a scenario file must; and
        the pins it leaves out (:func:`app.permalink_view.pins_left_out`)."""
        s = self.scenario
        text = self.state.configs.get(s.model)
        name = escape(s.catalogue.model(s.model).name)
        lost = pins_left_out(self.state)
        if getattr(self, "_shared", None) == (s.model, name, text, lost):
            return  # a lever moved: the same model, the same answer
        self._shared = (s.model, name, text, lost)
        lost = f'<div class="warn" data-readout="share-lost">{escape(lost)}</div>' if lost else ""
        if text is None:
            self.share_report.object = (f'<div class="k" data-readout="share">The link on the address bar opens '
                                        f"{name} with these levers and pins; so does a scenario file.</div>{lost}")
            return
        value = config_for_link(text)
        if value is not None:
            self.share_report.object = (f'<div class="ok" data-readout="share">The link on the address bar carries '
                                        f"{name}'s config.json (config=, {len(value):,} characters compressed, of "
                                        f"{MAX_LINK_CONFIG_CHARS:,} a link may carry) with the levers and pins."
                                        f"</div>{lost}")
        else:
            self.share_report.object = (f'<div class="warn" data-readout="share">{name}\'s config.json is too large '
                                        f"for a link (over {MAX_LINK_CONFIG_CHARS:,} characters compressed): the "
                                        f"link opens the lab without it. Save a scenario file to share it.</div>{lost}")

    def scenario_text(self) -> str:
        """The scenario file of what is on screen: the selected model's config.json text, the levers, the pins
        and the session's own GPU (:func:`core.permalink.scenario_file`)."""
        s = self.scenario
        return scenario_file(to_query(s.levers(), self.state.pins, link_gpus(s, self.state.pins)),
                             self.state.configs.get(s.model))

    def _open_scenario(self) -> None:
        """Reopen a dropped scenario file: its config (read off the event loop), then its levers and pins."""
        uploaded = _upload(self.scenario_file)
        if uploaded is None:
            return
        try:
            query, config = read_scenario_file(uploaded[1])
        except ValueError as exc:
            # "name: why" reads whatever the reason says ("x.json is nests deeper…" did not: an engineer's trial).
            self.scenario_report.object = (f'<div class="bad" data-readout="scenario">Not opened: '
                                           f"{escape(uploaded[0])}: {escape(str(exc))}.</div>")
            return
        self.scenario_report.object = ('<div class="warn" data-readout="scenario" aria-busy="true">Opening '
                                       f"{escape(uploaded[0])}…</div>")
        open_scenario(self.state, query, config, self.prepare, done=lambda notices: self._opened(uploaded[0], notices))

    def _opened(self, name: str, notices: list[str]) -> None:
        left = "".join(f"<li>{escape(n)}</li>" for n in notices)
        model = escape(self.scenario.catalogue.model(self.scenario.model).name)
        self.scenario_report.object = (f'<div class="ok" data-readout="scenario">Opened {escape(name)}: {model}, '
                                       f"its levers and {len(self.state.pins)} pin(s).</div>"
                                       + (f'<div class="warn">Left out:<ul>{left}</ul></div>' if left else ""))

    # -- your GPU ---------------------------------------------------------------------
    def _add_gpu(self) -> None:
        try:
            typed = {roof: form_number(w.value_input or w.value, w.name)
                     for roof, w in self.peaks.items()}
            gpu = custom_accelerator(self.gpu_name.value_input or self.gpu_name.value,
                                     bandwidth_tbs=form_number(self.bandwidth.value_input or self.bandwidth.value,
                                                               self.bandwidth.name),
                                     capacity_gb=form_number(self.capacity.value_input or self.capacity.value,
                                                             self.capacity.name),
                                     link_gbs=form_number(self.link.value_input or self.link.value, self.link.name),
                                     max_node=form_number(self.node.value_input or self.node.value, self.node.name),
                                     reference=self.reference.value,
                                     **{roof: v for roof, v in typed.items() if v is not None})
        except ValueError as exc:
            self.gpu_report.object = f'<div class="bad" data-readout="gpu-form">Not added: {escape(str(exc))}.</div>'
            return
        earlier = self.scenario.catalogue.own_gpus.get(gpu.id)
        self.scenario.add_gpu(gpu)
        warnings = "".join(f'<div class="warn">⚠ {escape(w)}</div>' for w in (*sparse_warnings(gpu),
                                                                                  *peak_order_warnings(gpu)))
        if earlier is not None and earlier != gpu:  # "My GPU" and "my-gpu!" are one id: the second had replaced the
            # first without a word (an attacker's trial); links name a GPU by that id, so it stays one
            warnings += (f'<div class="warn">⚠ it replaces your earlier {escape(earlier.name)} ({escape(gpu.id)}): '
                         "names that differ only in case and punctuation are one GPU; give it another name to keep "
                         "both</div>")
        link = gpu.interconnect
        linked = (f"; link {fmt_sig(link.per_direction_bandwidth / 1e9)} GB/s per direction"
                  + (f", {link.max_node:,} GPUs per node" if link.max_node else "") if link else
                  "; no link figure: a split over GPUs counts only its calls' latency")
        self.gpu_report.object = (f'<div class="ok" data-readout="gpu-form">Added {escape(gpu.name)}: BF16 ridge point '
                                  f"{fmt_sig(gpu.ridge_point(), 3)} FLOP/byte{linked}; now the selected GPU.</div>"
                                  f"{warnings}")

    # -- your measurements ------------------------------------------------------------
    def _plot(self) -> None:
        raw, _ = self._csv.given()
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", "replace")
        if raw.strip():
            rows, problems = parse_measurements(raw)
        else:  # nothing given, or a file the browser refused (over 2 MB) and so never sent
            rows, problems = [], [f"choose a CSV file (up to {SIZE_LIMIT}) or paste its rows first; a file "
                                  f"over {SIZE_LIMIT} is refused by the browser and not sent"]
        self.state.param.update(measurement_problems=problems, measurements=rows)
        self.show_measured()  # the problems alone change nothing the state watches

    @param.depends("state.measured", watch=True)
    def show_measured(self) -> None:
        """The MBU/MFU table of the session's measured points (and what was refused)."""
        points: list[MeasuredPoint] = self.state.measured
        problems = list(self.state.measurement_problems)
        flags = [p for p in points if p.above_roof]
        if flags:
            problems = [*problems, f"{len(flags)} point(s) lie above the roof of {self._roof_name()}: "
                        + ABOVE_ROOF_CAUSE]
        body = "".join(
            f"<tr><td>{p.measurement.batch}</td><td>{p.measurement.context:,}</td>"
            f"<td>{fmt_rate(p.measurement.tokens_per_s)}</td><td>{fmt_rate(p.ceiling_tokens_per_s)}"
            f"{'' if p.fits else ' (if it fit: it does not)'}</td>"
            f"<td>{fmt_sig(100 * p.mbu, 3)} %</td><td>{fmt_sig(100 * p.mfu, 3)} %</td>"
            f"<td>{fmt_sig(p.gap, 3)}×</td></tr>"
            for p in points
        )
        head = ("<tr><th>B</th><th>S</th><th>measured tokens/s</th><th>roofline ceiling</th><th>MBU</th>"
                "<th>MFU</th><th>gap to the roof</th></tr>")
        issues = "".join(f'<div class="bad">{escape(p)}</div>' for p in problems)
        table = (f'<div class="k">Against {escape(self._roof_name())}:</div>'
                 f'<table class="lab" data-readout="measured">{head}{body}</table>') if points else ""
        self.measured_report.object = issues + table

    def _roof_name(self) -> str:
        r = self.state.result
        split = ", ".join(f"{name} = {n}" for name, n in (("TP", r.tp), ("PP", r.pp), ("EP", r.ep)) if n > 1)
        return (f"{r.model.name} on {r.gpu.name}" + (f" ({split}; MBU and MFU are one GPU's)" if split else "")
                + f", weights {'as stored' if r.weight_dtype == 'stored' else r.weight_dtype.upper()}, "
                  f"KV {r.kv_dtype.upper()}")
