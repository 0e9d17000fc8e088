"""Published measurements against the ceiling and the expected step: data, fit, leave-one-out, scores.

``core/measurements.json`` holds decode, static-batch and first-token measurements read from engine
benchmark tables (each with its URL and row).  Every measurement runs through the lab with its own settings
(:func:`lab_results`: the model, GPU, weight lever, KV dtype, batch, context ``prompt + output/2``, TP, CUDA
graphs), gives the ceiling's value of its metric and, through :mod:`core.expected`, the expected value.

The constants :mod:`core.expected` marks "fitted" are fitted here, on the calibration set only
(:func:`fit`): regularised least squares on ``log(expected / measured)``, each constant shrunk toward its
prior in ``core/efficiency.json`` ``priors``, by a small Levenberg–Marquardt loop (numpy; no SciPy in the
lab's dependencies).  The fitted constants (one set per engine: the streaming-kernel efficiency, the
dequantisation factor of each quantised class, the all-reduce α per link, the per-step overhead; shared:
the GPU gap per launch without graphs and the overlap exponent) are stored in ``core/efficiency.json``
``fitted`` by :func:`write_fitted`; a test refits and compares.  :func:`leave_one_out` refits without each
calibration measurement in turn; :func:`scores` gives the median ``|expected ÷ measured − 1|`` and the share
within ±25 %.  The held-out set is never fitted on.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field, fields
from functools import cache
from pathlib import Path

import numpy as np

from . import expected, overhead
from .expected import ChainInputs, ChainParams, chain_inputs, chain_step_times, engine_parameters, load_efficiency
from .hardware import get_accelerator
from .model_catalogue import get_model
from .scenario import ScenarioResult, evaluate

MEASUREMENTS_PATH = Path(__file__).with_name("measurements.json")
METRICS = ("tokens_per_s_per_sequence", "tokens_per_s_aggregate", "tokens_per_s_per_gpu", "latency_s", "ttft_s")
TIMINGS = ("decode", "generate", "ttft")
#: Targets of issue 27 on the held-out set.
TARGET_MEDIAN, TARGET_WITHIN, WITHIN = 0.15, 0.80, 0.25


@dataclass(frozen=True)
class Measurement:
    """One published measurement (a row of ``core/measurements.json``; see its ``_about``)."""

    id: str
    engine: str
    engine_version: str
    gpu: str
    gpu_as_printed: str
    model: str
    model_as_printed: str
    weight_format: str
    kv_dtype: str
    batch: int
    tp: int
    prompt_len: int
    output_len: int
    timing: str
    metric: str
    measured: float
    cuda_graphs: bool
    source: dict = field(compare=False)
    notes: str
    set: str
    preset: str = ""
    interconnect: str | None = None
    collective: str | None = None
    gpu_assumed: bool = False

    @property
    def decode_context(self) -> int:
        """S of the decode step that stands for the generation: the prompt and half the output."""
        return self.prompt_len + self.output_len // 2

    @property
    def is_time(self) -> bool:
        """Whether the metric is a time (lower is faster) rather than a rate."""
        return self.metric in ("latency_s", "ttft_s")


def split_set(measurement_id: str) -> str:
    """The set a measurement belongs to, by ``measurements.json``'s ``split_rule`` (fixed before any fit)."""
    return "held_out" if int(hashlib.sha256(measurement_id.encode()).hexdigest()[:8], 16) % 2 else "calibration"


@cache
def load_measurements(path: Path = MEASUREMENTS_PATH) -> tuple[Measurement, ...]:
    """Every shipped measurement, in file order.

    Raises:
        ValueError: a row with an unknown timing or metric, or an unknown model, GPU or format.
    """
    names = {f.name for f in fields(Measurement)}
    rows = json.loads(Path(path).read_text())["measurements"]
    formats = load_efficiency()["formats"]
    out = []
    for row in rows:
        m = Measurement(**{k: v for k, v in row.items() if k in names})
        if not m.preset:
            m = Measurement(**{**{k: v for k, v in row.items() if k in names}, "preset": m.engine})
        if m.timing not in TIMINGS or m.metric not in METRICS:
            raise ValueError(f"{m.id}: timing {m.timing!r} / metric {m.metric!r} not understood")
        if m.weight_format not in formats:
            raise ValueError(f"{m.id}: unknown weight format {m.weight_format!r}")
        get_model(m.model), get_accelerator(m.gpu)  # raise on unknown ids
        out.append(m)
    return tuple(out)


def calibration_set() -> tuple[Measurement, ...]:
    return tuple(m for m in load_measurements() if m.set == "calibration")


def held_out_set() -> tuple[Measurement, ...]:
    return tuple(m for m in load_measurements() if m.set == "held_out")


@cache
def lab_results(m: Measurement) -> tuple[ScenarioResult | None, ScenarioResult | None]:
    """The lab's (decode step, prefill of the batch) for ``m``'s settings; None where its timing needs none."""
    lever = load_efficiency()["formats"][m.weight_format]["lever"]
    common = dict(weight_dtype=lever, kv_dtype=m.kv_dtype, tp=m.tp, cuda_graphs=m.cuda_graphs)
    gpu, model = get_accelerator(m.gpu), get_model(m.model)
    decode = prefill = None
    if m.timing in ("decode", "generate"):
        decode = evaluate(gpu=gpu, model=model, batch=m.batch, context=m.decode_context, **common)
    if m.timing in ("generate", "ttft"):
        prefill = evaluate(gpu=gpu, model=model, phase="prefill", batch=m.batch, prompt_len=m.prompt_len, **common)
    return decode, prefill


# -- parameters of the fit -----------------------------------------------------------------------------------------
def alpha_group(m: Measurement) -> str:
    """The preset whose all-reduce α a measurement informs (a named collective is its own group)."""
    return f"{m.preset} ({m.collective})" if m.collective else m.preset


def format_class(m: Measurement) -> str:
    return load_efficiency()["formats"][m.weight_format]["class"]


def _link(m: Measurement) -> str | None:
    decode, prefill = lab_results(m)
    return expected.link_kind(decode or prefill, m.interconnect)


def constant_names(m: Measurement) -> list[tuple[str, ...]]:
    """The fitted constants ``m`` informs: its preset's, its format's dequantisation, its link's α, the shared ones."""
    names = [("kernel_efficiency", m.preset), ("kv_efficiency", m.preset), ("gemm_engine_factor", m.preset),
             ("step_overhead_s", m.preset)]
    if get_model(m.model).n_kv_heads < get_model(m.model).n_heads:
        names.append(("grouped_kv_factor", m.preset))
    if not m.cuda_graphs:
        names.append(("launch_cpu_s", m.preset))
    if m.timing in ("generate", "ttft"):
        names.append(("request_overhead_s", m.preset))
    if format_class(m) != "16-bit":
        names.append(("dequant_factor", m.weight_format, m.preset))
    if m.tp > 1:
        names.append(("allreduce_alpha_s", _link(m), alpha_group(m)))
    return names + [("graph_gap_s",) if m.cuda_graphs else ("stream_gap_s",), ("overlap_n",)]


@dataclass(frozen=True)
class Layout:
    """Names, priors (log space) and widths of the fitted constants for a set of measurements."""

    names: tuple[tuple[str, ...], ...]
    prior: np.ndarray
    sigma: np.ndarray

    def index(self, *name: str) -> int:
        return self.names.index(tuple(name))


def layout(ms: tuple[Measurement, ...]) -> Layout:
    """The constants ``ms`` can inform (:func:`constant_names`), with their priors in log space."""
    eff = load_efficiency()
    pri = eff["priors"]
    fixed = {
        "kernel_efficiency": (pri["kernel_efficiency"]["value"], pri["kernel_efficiency"]["sigma"]),
        "kv_efficiency": (pri["kv_efficiency"]["value"], pri["kv_efficiency"]["sigma"]),
        "grouped_kv_factor": (pri["grouped_kv_factor"]["value"], pri["grouped_kv_factor"]["sigma"]),
        "launch_cpu_s": (overhead.LAUNCH_LATENCY_S, pri["launch_cpu_sigma"]),
        "gemm_engine_factor": (pri["gemm_engine_factor"]["value"], pri["gemm_engine_factor"]["sigma"]),
        "step_overhead_s": (pri["step_overhead"]["value"], pri["step_overhead"]["sigma"]),
        "request_overhead_s": (pri["request_overhead"]["value"], pri["request_overhead"]["sigma"]),
        "dequant_factor": (pri["dequant_factor"]["value"], pri["dequant_factor"]["sigma"]),
        "graph_gap_s": (overhead.GRAPH_NODE_GAP_S, pri["graph_gap_sigma"]),
        "stream_gap_s": (eff["launch"]["stream_gap_prior_s"], pri["stream_gap_sigma"]),
        "overlap_n": (eff["overlap"]["prior_n"] - 1.0, pri["overlap_sigma"]),  # n = 1 + exp(theta)
    }
    names, prior, sigma = [], [], []
    for m in ms:
        for name in constant_names(m):
            if name in names:
                continue
            if name[0] == "allreduce_alpha_s":
                value, width = eff["collectives"][name[1]]["alpha_s"], pri["allreduce_alpha_sigma"]
            else:
                value, width = fixed[name[0]]
            names.append(name)
            prior.append(math.log(value))
            sigma.append(width)
    return Layout(tuple(names), np.array(prior), np.array(sigma))


@dataclass(frozen=True)
class Prepared:
    """The measurements of one set as arrays, ready for the vectorised chain."""

    ms: tuple[Measurement, ...]
    decode: ChainInputs
    prefill: ChainInputs
    sourced: ChainParams  # the measured (not fitted) constants per measurement
    measured: np.ndarray
    steps: np.ndarray  # decode steps after the prefill (generate: output_len - 1)


def _params(m: Measurement, result: ScenarioResult) -> expected.EngineParameters:
    return engine_parameters(result, m.preset, weight_format=m.weight_format, cuda_graphs=m.cuda_graphs,
                             interconnect=m.interconnect, collective=m.collective)


@cache
def prepare(ms: tuple[Measurement, ...]) -> Prepared:
    """Chain inputs of every measurement of ``ms`` (decode and prefill; a timing without one repeats the other)."""
    dec, pre, src = [], [], []
    for m in ms:
        decode, prefill = lab_results(m)
        d = chain_inputs(decode, _params(m, decode)) if decode else None
        p = chain_inputs(prefill, _params(m, prefill)) if prefill else None
        dec.append(d or p)
        pre.append(p or d)
        src.append(_params(m, decode or prefill).chain_params())
    sourced = ChainParams(**{f.name: np.array([getattr(s, f.name) for s in src], float) for f in fields(ChainParams)})
    steps = np.array([m.output_len - 1 if m.timing == "generate" else 0 for m in ms], float)
    return Prepared(ms, ChainInputs.stack(dec), ChainInputs.stack(pre), sourced,
                    np.array([m.measured for m in ms], float), steps)


_KINDS = ("kernel_efficiency", "kv_efficiency", "grouped_kv_factor", "dequant_factor", "gemm_engine_factor",
          "overlap_n", "allreduce_alpha_s", "launch_cpu_s", "graph_gap_s", "stream_gap_s", "step_overhead_s",
          "request_overhead_s")
_DEFAULTS = {"kernel_efficiency": 1.0, "kv_efficiency": 1.0, "grouped_kv_factor": 1.0, "dequant_factor": 1.0,
             "gemm_engine_factor": 1.0, "overlap_n": math.inf, "allreduce_alpha_s": 0.0,
             "launch_cpu_s": overhead.LAUNCH_LATENCY_S, "graph_gap_s": 0.0, "stream_gap_s": 0.0,
             "step_overhead_s": 0.0, "request_overhead_s": 0.0}


class Problem:
    """The measurements of one set under one :class:`Layout`: index arrays from constants to measurements, so that
    the expected values for a vector of constants is a few numpy operations (the fit evaluates it many times)."""

    def __init__(self, p: Prepared, lay: Layout):
        self.p, self.lay = p, lay
        where = {name: j for j, name in enumerate(lay.names)}
        self.index = {}
        for kind in _KINDS:
            idx = np.full(len(p.ms), -1)
            for i, m in enumerate(p.ms):
                for name in constant_names(m):
                    if name[0] == kind and name in where:
                        idx[i] = where[name]
            self.index[kind] = idx
        self.timing = np.array([TIMINGS.index(m.timing) for m in p.ms])
        self.work = np.array([1.0 if m.timing != "generate" else float(m.output_len) for m in p.ms])
        self.scale = np.array([{"tokens_per_s_per_sequence": 1.0, "tokens_per_s_aggregate": m.batch,
                                "tokens_per_s_per_gpu": m.batch / m.tp}.get(m.metric, 0.0) for m in p.ms])

    def params(self, theta: np.ndarray) -> ChainParams:
        """Per-measurement :class:`ChainParams`: the sourced constants, the fitted ones from ``theta``."""
        values = np.exp(theta)

        def per(kind: str) -> np.ndarray:
            idx = self.index[kind]
            return np.where(idx >= 0, values[np.maximum(idx, 0)], _DEFAULTS[kind])

        src = self.p.sourced
        fitted = {kind: per(kind) for kind in _KINDS}
        fitted["overlap_n"] = np.where(self.index["overlap_n"] >= 0, 1.0 + fitted["overlap_n"], math.inf)
        return ChainParams(stream_fraction=src.stream_fraction, gemm_fraction=src.gemm_fraction,
                           attention_fraction=src.attention_fraction, bus_bandwidth=src.bus_bandwidth,
                           cuda_graphs=src.cuda_graphs, **fitted)

    def metric(self, t_decode: np.ndarray, t_prefill: np.ndarray) -> np.ndarray:
        """Each measurement's metric from its decode-step and prefill times (seconds)."""
        decode, generate = TIMINGS.index("decode"), TIMINGS.index("generate")
        t = np.where(self.timing == decode, t_decode,
                     np.where(self.timing == generate, t_prefill + self.p.steps * t_decode, t_prefill))
        return np.where(self.scale > 0, self.scale * self.work / t, t)

    def predict(self, theta: np.ndarray) -> np.ndarray:
        """The expected value of each measurement's metric under the constants ``theta``."""
        params = self.params(theta)
        return self.metric(chain_step_times(self.p.decode, params, ends_only=True)[-1],
                           chain_step_times(self.p.prefill, params, ends_only=True)[-1])

    def ceiling(self) -> np.ndarray:
        """The lab's ceiling value of each measurement's metric (the chain's first state)."""
        params = self.params(self.lay.prior)
        return self.metric(chain_step_times(self.p.decode, params)[0], chain_step_times(self.p.prefill, params)[0])

    def residuals(self, theta: np.ndarray) -> np.ndarray:
        fit_part = np.log(self.predict(theta) / self.p.measured)
        return np.concatenate([fit_part, (theta - self.lay.prior) / self.lay.sigma])


# -- the fit -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Fit:
    """Constants fitted on a set of measurements: ``theta`` in log space, laid out by ``layout``."""

    layout: Layout
    theta: np.ndarray
    measurements: tuple[Measurement, ...]

    def value(self, *name: str) -> float:
        v = math.exp(self.theta[self.layout.index(*name)])
        return 1.0 + v if name == ("overlap_n",) else v


def fit(ms: tuple[Measurement, ...], iterations: int = 200, start=None) -> Fit:
    """Fit the constants on ``ms``: minimise Σ log(expected/measured)² + Σ ((θ − prior)/σ)² (Levenberg–Marquardt).

    Raises:
        ValueError: an empty set.
    """
    if not ms:
        raise ValueError("nothing to fit on")
    ms = tuple(ms)
    problem = Problem(prepare(ms), layout(ms))
    lay = problem.lay
    theta = lay.prior.copy() if start is None else start(lay)
    r = problem.residuals(theta)
    cost, damping = float(r @ r), 1e-2
    for _ in range(iterations):
        h = 1e-6
        jac = np.empty((r.size, theta.size))
        for j in range(theta.size):
            step = theta.copy()
            step[j] += h
            jac[:, j] = (problem.residuals(step) - r) / h
        jtj, grad = jac.T @ jac, jac.T @ r
        improved = False
        while damping < 1e8:
            delta = np.linalg.solve(jtj + damping * (np.diag(np.diag(jtj)) + np.eye(theta.size)), -grad)
            trial = theta + delta
            r_trial = problem.residuals(trial)
            c_trial = float(r_trial @ r_trial)
            if np.isfinite(c_trial) and c_trial < cost:
                improved = cost - c_trial > 1e-9 * max(cost, 1.0)
                theta, r, cost, damping = trial, r_trial, c_trial, max(damping / 3, 1e-9)
                break
            damping *= 4
        if not improved:
            break
    return Fit(lay, theta, ms)


# -- scoring -------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """One measurement scored: measured, the ceiling's and the expected value of its metric."""

    measurement: Measurement
    ceiling: float
    expected: float

    @property
    def measured_over_ceiling(self) -> float:
        """Measured speed ÷ the ceiling's speed (≤ 1 unless the ceiling is wrong)."""
        m = self.measurement
        return self.ceiling / m.measured if m.is_time else m.measured / self.ceiling

    @property
    def expected_over_measured(self) -> float:
        """Expected ÷ measured, in the metric's own units (a time's ratio is a speed's inverted: the scores use it
        for the size of the error only)."""
        return self.expected / self.measurement.measured

    @property
    def measured_over_expected(self) -> float:
        """Measured speed ÷ the expected speed, for times and rates alike (below 1: slower than expected), as
        ``measured_over_ceiling`` is, as the lab's Reality check and ``core/expected_spread.json`` state it."""
        m = self.measurement
        return self.expected / m.measured if m.is_time else m.measured / self.expected


def score(fitted: Fit, ms: tuple[Measurement, ...]) -> list[Row]:
    """Each measurement of ``ms`` against the ceiling and against the expected value under ``fitted``."""
    ms = tuple(ms)
    lay = fitted.layout
    # The constants ``ms`` needs that the fit did not see stay at their priors (a new engine or link).
    own = layout(ms)
    theta = own.prior.copy()
    for j, name in enumerate(own.names):
        if name in lay.names:
            theta[j] = fitted.theta[lay.index(*name)]
        elif len(name) > 1:  # a per-engine constant: the fitted engines' median (as engine_parameters does)
            generic = _generic(fitted, name)
            if generic is not None:
                theta[j] = math.log(generic)
    problem = Problem(prepare(ms), own)
    return [Row(m, c, e) for m, c, e in zip(ms, problem.ceiling(), problem.predict(theta), strict=True)]


def _generic(fitted: Fit, name: tuple[str, ...]) -> float | None:
    """The median over fitted engines of a per-engine constant (what a new engine gets)."""
    kind = name[:-1]
    values = [fitted.value(*n) for n in fitted.layout.names if n[:-1] == kind]
    return float(np.median(values)) if values else None


def leave_one_out(ms: tuple[Measurement, ...]) -> list[Row]:
    """Each measurement of ``ms`` scored by a fit on all the others."""
    ms = tuple(ms)
    full = fit(ms)

    def warm(lay: Layout) -> np.ndarray:  # start each refit from the full fit (it converges to its own optimum)
        return np.array([full.theta[full.layout.index(*n)] if n in full.layout.names else lay.prior[j]
                         for j, n in enumerate(lay.names)])

    rows = []
    for i, m in enumerate(ms):
        rows.extend(score(fit(ms[:i] + ms[i + 1:], start=warm), (m,)))
    return rows


def scores(rows: list[Row]) -> dict:
    """Median ``|expected ÷ measured − 1|``, the share within ±25 %, and the measurements above the ceiling."""
    err = np.array([abs(r.expected_over_measured - 1.0) for r in rows])
    ratio = np.array([r.measured_over_ceiling for r in rows])
    return {"n": len(rows), "median_abs_error": float(np.median(err)) if rows else None,
            "within_25": float(np.mean(err <= WITHIN)) if rows else None,
            "measured_over_ceiling_median": float(np.median(ratio)) if rows else None,
            "measured_over_ceiling_min": float(ratio.min()) if rows else None,
            "measured_over_ceiling_max": float(ratio.max()) if rows else None,
            "above_ceiling": [r.measurement.id for r in rows if r.measured_over_ceiling > 1.0]}


# -- the shipped constants -----------------------------------------------------------------------------------------
def fitted_block(fitted: Fit) -> dict:
    """The ``fitted`` block of ``core/efficiency.json`` for ``fitted`` (values, with how many points inform each)."""
    lay, ms = fitted.layout, fitted.measurements
    counts: dict[tuple[str, ...], int] = {}
    for m in ms:
        for k in constant_names(m):
            counts[k] = counts.get(k, 0) + 1
    block: dict = {
        "fitted_on": f"core/measurements.json's calibration set ({len(ms)} measurements)",
        "method": ("regularised least squares on log(expected / measured) with each constant shrunk toward its prior "
                   "(efficiency.json 'priors'); core/published.py fit(). Each constant: value, prior, shift_sigma (how "
                   "far the data moved it from its prior, in prior widths: near 0 means the calibration set barely "
                   "informs it) and points (calibration measurements it enters)"),
    }
    for name in lay.names:
        table = block.setdefault(name[0], {})
        for key in name[1:-1]:
            table = table.setdefault(key, {})
        leaf = name[-1] if len(name) > 1 else "_generic"
        j = lay.index(*name)
        prior = math.exp(lay.prior[j]) + (1.0 if name == ("overlap_n",) else 0.0)
        table[leaf] = {"value": float(f"{fitted.value(*name):.6g}"), "prior": float(f"{prior:.6g}"),
                       "shift_sigma": float(f"{(fitted.theta[j] - lay.prior[j]) / lay.sigma[j]:.3g}"),
                       "points": counts.get(name, 0)}
    for kind in ("kernel_efficiency", "kv_efficiency", "grouped_kv_factor", "gemm_engine_factor", "step_overhead_s",
                 "request_overhead_s", "launch_cpu_s"):
        values = [v["value"] for k, v in block.get(kind, {}).items() if not k.startswith("_")]
        if values:
            block[kind]["_generic"] = {"value": float(f"{np.median(values):.6g}"), "engines": len(values)}
    for kind in ("dequant_factor", "allreduce_alpha_s"):
        for sub in block.get(kind, {}).values():
            values = [v["value"] for k, v in sub.items() if not k.startswith("_")]
            sub["_generic"] = {"value": float(f"{np.median(values):.6g}"), "engines": len(values)}
    return block


def write_fitted(path: Path = expected.EFFICIENCY_PATH) -> dict:
    """Fit on the calibration set and store the constants in ``efficiency.json`` ``fitted`` (returns the block)."""
    block = fitted_block(fit(calibration_set()))
    data = json.loads(Path(path).read_text())
    data["fitted"] = block
    Path(path).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")
    load_efficiency.cache_clear()
    return block


# -- the report ----------------------------------------------------------------------------------------------------
def _table(rows: list[Row]) -> list[str]:
    lines = [f"  {'measurement':48} {'engine preset':23} {'metric':26} {'measured':>9} {'ceiling':>9} {'expected':>9} "
             f"{'meas/ceil':>9} {'meas/exp':>8}  (ratios of speeds: a time's ratio is inverted)"]
    for r in rows:
        m = r.measurement
        lines.append(f"  {m.id[:48]:48} {m.preset[:23]:23} {m.metric:26} {m.measured:>9.4g} {r.ceiling:>9.4g} "
                     f"{r.expected:>9.4g} {r.measured_over_ceiling:>9.2f} {r.measured_over_expected:>8.2f}")
    return lines


def _summary(label: str, s: dict) -> str:
    return (f"{label}: n = {s['n']}, median |expected/measured - 1| = {100 * s['median_abs_error']:.1f} %, "
            f"within ±25 %: {100 * s['within_25']:.0f} %; measured/ceiling median "
            f"{s['measured_over_ceiling_median']:.2f} "
            f"(min {s['measured_over_ceiling_min']:.2f}, max {s['measured_over_ceiling_max']:.2f}); above the ceiling: "
            f"{', '.join(s['above_ceiling']) or 'none'}")


def _row_json(r: Row) -> dict:
    m = r.measurement
    return {"id": m.id, "engine_preset": m.preset, "metric": m.metric, "measured": m.measured, "ceiling": r.ceiling,
            "expected": r.expected, "measured_over_ceiling": r.measured_over_ceiling,
            "measured_over_expected": r.measured_over_expected, "set": m.set, "source": dict(m.source)}


def _sources(rows: list[Row]) -> list[str]:
    """Where each row's measurement was published: its URL and the table row, as ``core/measurements.json`` cites
    them (an engineer's trial found them only in the data file)."""
    return ["Sources (measurements.json: the page and the table row of each)",
            *(f"  {r.measurement.id}: {r.measurement.source.get('url', '')} ({r.measurement.source.get('where', '')})"
              for r in rows)]


def _scored_sets() -> tuple[list[Row], list[Row]]:
    """The held-out set and the calibration set (in-sample), each scored by a fit on the calibration set."""
    fitted = fit(calibration_set())
    return score(fitted, held_out_set()), score(fitted, calibration_set())


def validation_json(loo: bool = True) -> dict:
    """What :func:`validation_text` prints, as one JSON-ready object (SI units; ratios of speeds): the held-out
    rows and the scores of each set, and the targets."""
    held, calib = _scored_sets()
    out = {"held_out": {"rows": [_row_json(r) for r in held], "scores": scores(held)},
           "calibration_in_sample": {"rows": [_row_json(r) for r in calib], "scores": scores(calib)},
           "targets": {"median_abs_error": TARGET_MEDIAN, "within_25": TARGET_WITHIN, "within": WITHIN,
                       "above_ceiling": 0}}
    if loo:
        out["calibration_leave_one_out"] = {"scores": scores(leave_one_out(calibration_set()))}
    return out


def validation_text(loo: bool = True) -> str:
    """The held-out table and the scores (and the calibration set's leave-one-out scores with ``loo``)."""
    held, calib = _scored_sets()
    lines = ["Held-out measurements (nothing was fitted on them)", *_table(held), "",
             _summary("held-out", scores(held)),
             f"the lab's targets: median ≤ {100 * TARGET_MEDIAN:.0f} %, ≥ {100 * TARGET_WITHIN:.0f} % within "
             f"±{100 * WITHIN:.0f} %, none above the ceiling",
             _summary("calibration (in-sample)", scores(calib))]
    if loo:
        lines.append(_summary("calibration (leave-one-out)", scores(leave_one_out(calibration_set()))))
    lines += ["", *_sources(held)]
    return "\n".join(lines)


# -- the lab's reality check: each measurement with the shipped constants ----------------------------------------
def metric_value(m: Measurement, t_decode: float | None, t_prefill: float | None) -> float:
    """``m``'s metric from a decode-step time and a prefill time (seconds; the one its timing does not use may be
    None): decode ``1/t``, generate ``prefill + (output − 1)·t``, ttft the prefill; a rate × its batch (aggregate)
    or batch/TP (per GPU); a latency or TTFT as the time itself (what :class:`Problem` computes on arrays)."""
    t = {"decode": t_decode, "generate": (t_prefill or 0.0) + (m.output_len - 1) * (t_decode or 0.0),
         "ttft": t_prefill}[m.timing]
    if m.is_time:
        return t
    work = float(m.output_len) if m.timing == "generate" else 1.0
    scale = {"tokens_per_s_per_sequence": 1.0, "tokens_per_s_aggregate": m.batch,
             "tokens_per_s_per_gpu": m.batch / m.tp}[m.metric]
    return scale * work / t


@cache
def shipped_row(m: Measurement) -> Row:
    """``m`` against the ceiling and the expected step under the shipped constants (``efficiency.json``
    ``fitted``, as the lab and ``explain --engine`` use them; in-sample for a calibration measurement).

    Cached per measurement (a few ms each, once per process)."""
    ends = []
    for result in lab_results(m):
        if result is None:
            ends.append((None, None))
            continue
        p = _params(m, result)
        states = chain_step_times(chain_inputs(result, p), p.chain_params(), ends_only=True)
        ends.append((float(states[0]), float(states[-1])))
    (c_dec, e_dec), (c_pre, e_pre) = ends
    return Row(m, metric_value(m, c_dec, c_pre), metric_value(m, e_dec, e_pre))


def rows_for_gpu(gpu_id: str) -> list[Row]:
    """:func:`shipped_row` of every shipped measurement on ``gpu_id``, in file order ([] when none)."""
    return [shipped_row(m) for m in load_measurements() if m.gpu == gpu_id]


def warm_rows() -> int:
    """Compute :func:`shipped_row` of every shipped measurement now (a server does it once at start, off the event
    loop, so the first session to open the Expected tab waits for none of them).  Returns how many."""
    return len([shipped_row(m) for m in load_measurements()])
