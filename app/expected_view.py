"""The Expected tab: the waterfall from the ceiling's tokens/s down to the expected tokens/s, term by term, and the
reality check (published measurements, and the user's own, against the ceiling and the expected step).

HTML only (no Bokeh models), recomputed only while the tab is open (:class:`app.serving_views.TabHTMLView`).
Every number comes from :mod:`core.expected`, :mod:`core.published` and :mod:`core.spread`; this module only
renders them.  Text from the data files (names, formulas, sources) is escaped; a source's ``http(s)`` addresses
become links.
"""

from __future__ import annotations

import re
from html import escape

from core.coverage import beyond_calibration, beyond_text
from core.expected import (
    CEILING_AT,
    ExpectedStep,
    Term,
    above_ceiling,
    ceiling_basis,
    engine_label,
    expected_step,
)
from core.published import rows_for_gpu
from core.scenario import ScenarioResult
from core.spread import speed_ratio, spread_for
from core.units import fmt_rate, fmt_seconds, fmt_seconds_times, fmt_sig

from .readouts import approximate_html
from .state import LabState
from .style import PALETTE, scroll_table

#: An address in a source's text (it ends at a space, a quote or a closing bracket).
URL = re.compile(r"https?://[^\s<>\"'()\[\]]+")
#: Rows of the user's own measurements the reality check computes (each is one evaluation and one expected step).
MAX_USER_ROWS = 20
LOSS, GAIN, KEPT = PALETTE["measured"], PALETTE["roof"], "#e4e4e4"


def linkify(text: str) -> str:
    """``text`` as HTML: escaped, each ``http(s)://`` address in it a link (opened in a new tab), nothing else."""
    out, last = [], 0
    for match in URL.finditer(text):
        url = match.group(0).rstrip(".,;:")
        out.append(escape(text[last:match.start()]))
        out.append(f'<a href="{escape(url, quote=True)}" target="_blank" rel="noopener noreferrer">{escape(url)}</a>')
        last = match.start() + len(url)
    out.append(escape(text[last:]))
    return "".join(out)


def _bar(kept: float, delta: float, top: float, color: str) -> str:
    """A track as wide as ``top``: ``kept`` in grey, then ``delta`` in ``color`` (a floating waterfall bar)."""
    k, d = 100 * kept / top, 100 * delta / top
    return (f'<div class="wf-track"><div style="width:{k:.3f}%;background:{KEPT}"></div>'
            f'<div style="width:{d:.3f}%;background:{color}"></div></div>')


def waterfall_rows(ceiling_s: float, terms: tuple[Term, ...], value, unit: str, scale: float = 1.0,
                   chain: str = "step", mark: str = "", at: str = "") -> str:
    """The waterfall's rows: the ceiling, one row per nonzero term, then the expected value.

    Args:
        ceiling_s: the ceiling's step time (s); terms: the chain's terms (their seconds add to the expected step).
        value: step time (s) -> the number the bars show (tokens/s, falling; or a time, rising).
        unit: its unit, as printed.  scale: a factor on the seconds shown (pipeline stages a prompt crosses).
        chain: the rows' ``data-chain`` ("step" or "ttft").
        mark: before each value the bars show: ``"≈ "`` where the model has config keys the lab does not model
            (:attr:`core.models.ModelSpec.approximate_mark`), as the readouts mark theirs.
        at: after "ceiling (the roofline", where it counts the engine's launches (:data:`core.expected.CEILING_AT`).
    Each row carries ``data-chain``, ``data-term`` and its seconds as ``data-seconds`` (``repr``: the float exactly).
    """
    times = [ceiling_s]
    for t in terms:
        times.append(times[-1] + t.seconds)
    values = [value(t) for t in times]
    top = max(values)
    shown = fmt_rate if unit.startswith("tokens") else fmt_seconds  # tokens/s as the readouts write them

    def fmt(v: float) -> str:
        return mark + shown(v)

    def step(seconds: float) -> str:
        # A prompt crossing PP stages takes each stage's step PP times: said, so that the step's seconds multiply
        # out to the time to first token (a trial found "+ 56.72 ms" beside "the step goes 59.75 ms → 73.93 ms").
        return mark + (f"{fmt_seconds(seconds)} per step" if scale == 1 else
                       f"{fmt_seconds_times(int(scale), seconds)} (a step on each of {int(scale)} pipeline stages)")

    out = [f'<div class="wf-row wf-ends" data-chain="{chain}" data-term="ceiling" data-seconds="{ceiling_s!r}">'
           f'<div class="wf-head"><b>ceiling (the roofline{at})</b>: {step(ceiling_s)} → '
           f'<b>{fmt(values[0])} {unit}</b></div>{_bar(0.0, values[0], top, PALETTE["roof"])}</div>']
    for i, t in enumerate(terms):
        if not t.shown:
            continue
        before, after = values[i], values[i + 1]
        worse = (after < before) if unit.startswith("tokens") else (after > before)
        sign = "+" if t.seconds >= 0 else "−"
        out.append(
            f'<div class="wf-row" data-chain="{chain}" data-term="{escape(t.key, quote=True)}" '
            f'data-seconds="{t.seconds!r}">'
            f'<div class="wf-head"><b>{escape(t.name)}</b>: <span class="wf-s">{sign} '
            f"{fmt_seconds(abs(t.seconds)) if scale == 1 else fmt_seconds_times(int(scale), abs(t.seconds))}"
            f"</span> → {fmt(after)} {unit}</div>"
            f"{_bar(min(before, after), abs(after - before), top, LOSS if worse else GAIN)}"
            f'<div class="wf-formula">{escape(t.formula)}</div>'
            f'<div class="wf-source" data-source="{escape(t.key, quote=True)}">source: '
            f"{linkify(t.source) if t.source else 'none needed'}</div></div>")
    return "".join(out) + (
        f'<div class="wf-row wf-ends" data-chain="{chain}" data-term="expected"><div class="wf-head">'
        "<b>= expected</b>: "
        f"{step(times[-1])} → <b>{fmt(values[-1])} {unit}</b></div>"
        f'{_bar(0.0, values[-1], top, PALETTE["workload"])}</div>')


def waterfall_html(e: ExpectedStep, r: ScenarioResult, ttft: ExpectedStep | None = None) -> str:
    """The decode (or prefill) step's waterfall in tokens/s per sequence, and the time to first token's in
    seconds when ``ttft`` (an :class:`ExpectedStep` with its TTFT chain) is given."""
    per_step = e.ceiling_tokens_per_s_per_sequence * e.ceiling_step_time_s  # tokens per sequence per step (E/PP)
    who = engine_label(e.engine)
    spread = spread_for(r.phase, r.batch, e.parameters.format_class)
    # The share as the readouts write it, with the ceiling's digits that make it multiply out (a trial read "66 %"
    # here beside the readouts' "65.6 % of the ceiling's 195.5").
    pct, whole = e.shares[0]
    share = f"{pct} % of the ceiling's {whole}"
    head = (
        approximate_html(r.model, "expected-approximate") +
        '<div class="caption" data-readout="expected-caption">The <b>ceiling</b> is the roofline\'s step'
        + (f" with its {escape(basis)}" if (basis := ceiling_basis(e)) else "") + "; the "
        f"<b>expected</b> step is a prediction for the <b>{escape(who)}</b> ({escape(e.parameters.weight_format)} "
        f"weights, input embedding {escape(e.embedding_convention)}): the ceiling plus the terms below, each "
        "applied on top of the ones before, with its formula and the source of its constants. The seconds add "
        f"up to the expected step exactly: {fmt_seconds(e.ceiling_step_time_s)} + Σ terms = "
        f"{fmt_seconds(e.expected_step_time_s)}, {share} tokens/s"
        + (f" ({escape(above)})" if (above := above_ceiling(e)) else "") + ". "
        # A new user read the embedding term's row above the ceiling as a prediction beating its bound.
        + ("The ceiling reads the whole input-embedding table every step, as the articles count; an engine "
           "gathers B·k rows of it, so that term alone can lift a row above the ceiling. "
           if any(t.key == "embedding" and t.seconds < 0 for t in e.terms) else "")  # none when tied to the head
        + ("" if r.fits else "This workload does not fit in memory (Step 5): every figure here is what it would "
           "deliver if it fit. ")
        + "Pick the engine in the readouts' <b>Engine preset</b> menu.</div>"
        f'<div class="caption" data-readout="expected-spread">Where published measurements land: in this regime '
        f"({escape(spread.covers)}{'' if spread.used == spread.regime else ', too few scores: all regimes'}) at "
        f"{fmt_sig(spread.low, 2)}–{fmt_sig(spread.high, 2)} × the expected speed (10th–90th percentile, "
        f"median {fmt_sig(spread.median, 2)}; {escape(spread.source)}).</div>"
        + (f'<div class="caption beyond" data-readout="expected-beyond"><b>⚠ Outside what was measured.</b> '
           f"{escape(beyond)}</div>" if (beyond := beyond_text(beyond_calibration(r, e.engine))) else ""))
    mark = r.model.approximate_mark  # "≈ " where the model has a key the lab does not model, on every value
    body = waterfall_rows(e.ceiling_step_time_s, e.terms, lambda t: per_step / t, "tokens/s per sequence",
                          mark=mark, at=CEILING_AT if e.ceiling_rebased else "")
    out = head + f'<div class="waterfall" data-chain="step">{body}</div>'
    if ttft is not None and ttft.ttft_terms:
        pp = r.pp  # a prompt crosses every pipeline stage: the chain is one stage's, the TTFT PP × it
        stage = ttft.ceiling_ttft_s / pp
        rows = waterfall_rows(stage, ttft.ttft_terms, lambda t: t * pp, "time to first token", scale=pp,
                              chain="ttft", mark=mark)
        out += (f'<details class="wf-ttft"><summary>Time to first token, term by term: ceiling '
                f"{mark}{fmt_seconds(ttft.ceiling_ttft_s)}, expected {mark}{fmt_seconds(ttft.expected_ttft_s)}"
                "</summary>"
                f'<div class="waterfall" data-chain="ttft">{rows}</div></details>')
    return out


# -- the reality check ---------------------------------------------------------------------------------------------
def _metric(m) -> str:
    return {"tokens_per_s_per_sequence": "tokens/s per sequence", "tokens_per_s_aggregate": "tokens/s, all",
            "tokens_per_s_per_gpu": "tokens/s per GPU", "latency_s": "latency", "ttft_s": "time to first token"
            }[m.metric]


def _value(m, v: float) -> str:
    return fmt_seconds(v) if m.is_time else f"{fmt_rate(v)}"


def _short(url: str) -> str:
    """A long address as link text: its host and its last path segment (the whole address is the link's target)."""
    rest = url.split("://", 1)[-1]
    host, _, path = rest.partition("/")
    tail = path.rstrip("/").rsplit("/", 1)[-1]
    return rest if len(rest) <= 40 else f"{host}/…/{tail[:40]}"


def _measurement_row(x, same: bool) -> str:
    m = x.measurement
    src = m.source
    url = src.get("url", "")
    link = (f'<a href="{escape(url, quote=True)}" title="{escape(url, quote=True)}" target="_blank" '
            f'rel="noopener noreferrer">{escape(_short(url))}</a>'
            if url.startswith(("https://", "http://")) else escape(url))
    cls = ' class="same-model"' if same else ""
    return (
        f'<tr{cls} data-measurement="{escape(m.id, quote=True)}">'
        f'<td class="k"><b>{escape(m.engine)}</b> · {escape(m.model_as_printed)} · B = {m.batch}, TP = {m.tp}, '
        f"{escape(m.weight_format)}, KV {escape(m.kv_dtype)}, prompt {m.prompt_len:,}, output {m.output_len:,} · "
        f'{_metric(m)}<br><small>{escape(m.engine_version)}; GPU as printed: {escape(m.gpu_as_printed)}; '
        f'{"held out" if m.set == "held_out" else "calibration"}</small>'
        f'<br><small class="src">source: {link}, {escape(src.get("where", ""))}</small></td>'
        f"<td>{_value(m, m.measured)}</td><td>{_value(m, x.ceiling)}</td><td>{_value(m, x.expected)}</td>"
        f"<td>{x.measured_over_ceiling:.2f}</td><td>{speed_ratio(m, x.expected):.2f}</td></tr>")


REALITY_HEAD = ("<tr><th>measurement: engine · model · settings · metric; version, GPU, set; source and row</th>"
                "<th>measured</th><th>ceiling</th><th>expected</th><th>÷ ceil&shy;ing</th>"
                "<th>÷ ex&shy;pected</th></tr>")


def published_html(r: ScenarioResult) -> str:
    """The shipped measurements on ``r``'s GPU against the ceiling and the expected step for their own settings
    (:func:`core.published.shipped_row`): those of ``r``'s model in the table, the other models' folded below it
    (all in the table when none is of ``r``'s model)."""
    rows = rows_for_gpu(r.gpu.id)
    if not rows:
        return (f'<div class="caption" data-readout="reality-none">No published measurement on {escape(r.gpu.name)} '
                "is shipped (core/measurements.json holds 98 on 8 parts: pick an A100, H100, H200, MI300X, L40S or "
                "RTX 4090 to see them).</div>")
    same = [x for x in rows if x.measurement.model == r.model.id]
    others = [x for x in rows if x.measurement.model != r.model.id]
    caption = (
        f'<div class="caption" data-readout="reality-caption"><b>Reality check</b>: {len(rows)} published '
        f"measurement{'s' if len(rows) != 1 else ''} on {escape(r.gpu.name)}"
        + (f", {len(same)} of them of {escape(r.model.name)}" if same else f", none of {escape(r.model.name)}")
        + ", each against the lab's ceiling and the expected step for its own settings (its engine's preset, "
        "format, batch, prompt and output lengths, TP). ÷: measured speed over the ceiling's and the expected "
        "speed (a time's ratio inverted: below 1 is slower). Calibration rows were fitted on (in-sample); held-out "
        "ones never were.</div>")

    def table(xs, flag: bool) -> str:
        body = "".join(_measurement_row(x, flag) for x in xs)
        return scroll_table(REALITY_HEAD + body, "lab reality")

    if not same:
        return caption + table(others, False)
    out = caption + table(same, True)
    if others:
        out += (f'<details class="reality-others"><summary>{len(others)} more on {escape(r.gpu.name)}, other models'
                f"</summary>{table(others, False)}</details>")
    return out


def user_rows_html(state: LabState, cache: dict) -> str:
    """The user's measurements (Bring your own) against the ceiling and the expected step at their B and S."""
    points = state.measured
    if not points:
        return ""
    s = state.scenario
    engine = None if state.engine == "generic" else state.engine
    fixed = tuple(sorted((k, v) for k, v in s.levers().items() if k not in ("batch", "context", "phase", "spec_k")))
    body = []
    for p in points[:MAX_USER_ROWS]:
        m = p.measurement
        key = (fixed, id(s.catalogue), engine, m.batch, m.context)
        if key not in cache:
            r = s.clone(phase="decode", spec_k=1, batch=m.batch, context=m.context).evaluate()
            e = expected_step(r, engine)
            cache[key] = (r.tokens_per_s_with_kv, r.tokens_per_s_with_kv * e.of_scenario_ceiling)
        ceiling, expected = cache[key]
        body.append(f'<tr data-user="{m.batch}-{m.context}"><td>B = {m.batch}, S = {m.context:,}</td>'
                    f"<td>{fmt_rate(m.tokens_per_s)}</td><td>{fmt_rate(ceiling)}</td><td>{fmt_rate(expected)}</td>"
                    f"<td>{m.tokens_per_s / ceiling:.2f}</td><td>{m.tokens_per_s / expected:.2f}</td></tr>")
    more = (f" (the first {MAX_USER_ROWS} of {len(points)})" if len(points) > MAX_USER_ROWS else "")
    return (f'<div class="caption" data-readout="reality-user"><b>Your measurements</b>{more}, tokens/s of the '
            f"batch, against the ceiling and the expected step ({escape(engine_label(engine))}) of this model, GPU "
            "and precisions at each B and S (plain decode, k = 1).</div>"
            '<table class="lab reality-user"><tr><th>settings</th><th>measured tokens/s</th><th>ceiling</th>'
            "<th>expected</th><th>measured ÷ ceiling</th><th>measured ÷ expected</th></tr>"
            f"{''.join(body)}</table>")


def expected_tab_html(state: LabState, cache: dict | None = None) -> str:
    """The whole tab for ``state``: the waterfall (and TTFT's), the reality check, the user's measurements."""
    r, e = state.result, state.expected
    if e is None:
        return f'<div class="warn" data-readout="expected-caption">{escape(state.expected_error)}</div>'
    ttft = None
    if r.phase == "decode":
        engine = None if state.engine == "generic" else state.engine
        try:
            ttft = expected_step(r, engine, ttft_result=state.scenario.clone(phase="prefill", batch=1).evaluate())
        except Exception:  # noqa: BLE001 - the decode chain stands alone when the prefill cannot be evaluated
            ttft = None
    return (waterfall_html(e, r, ttft) + published_html(r)
            + user_rows_html(state, {} if cache is None else cache))
