"""The fuzz tier (issues 12 and 31): every boundary, fed its whole input domain, answers with a documented
refusal naming a field, or with finite, non-negative, in-range results.  CI runs a bounded number of
examples per boundary; ``benchmarks/fuzz_boundaries.py`` runs 10^5 and more."""

from __future__ import annotations

import dataclasses
import io
import math
import os
import re
from contextlib import redirect_stderr, redirect_stdout
from html import escape
from urllib.parse import parse_qs

import numpy as np
from fuzz_strategies import (
    CLI_ARGS,
    CONFIG_VALUES,
    CONTROL_TEXT,
    CSV_TEXT,
    GPU_FORMS,
    LEVER_SETS,
    LINK_QUERIES,
    MEASUREMENT_FIELDS,
    QUERIES,
    finite_non_negative,
    printable_lines,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from panel.util import parse_query

from core.cli import main
from core.hardware import custom_accelerator
from core.measured_points import Measurement, analyse, parse_measurements
from core.permalink import MAX_LINK_KEYS, from_query, link_refusal
from core.scenario import LEVERS, Scenario
from core.units import fmt_sig

EXAMPLES = int(os.environ.get("ROOFLINE_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=2000, suppress_health_check=[HealthCheck.too_slow])


def assert_sane(result) -> None:
    """Every number of a result finite and >= 0; every ladder entry too."""
    for key, value in result.to_json().items():
        if isinstance(value, list):
            continue
        assert finite_non_negative(value), (key, value)
    for name in result.ladder.__dataclass_fields__:
        values = getattr(result.ladder, name)
        if values.dtype.kind == "U":  # the bound, a word
            assert set(values) <= {"memory", "compute", "overhead"}, name
            continue
        values = np.asarray(values, dtype=float)
        assert np.all(np.isfinite(values)) and np.all(values >= 0), name


@FUZZ
@given(LEVER_SETS)
def test_every_lever_set_evaluates_to_sane_numbers(levers):
    assert_sane(Scenario(**levers).evaluate())


@FUZZ
@given(GPU_FORMS, LEVER_SETS)
def test_a_custom_gpu_form_is_refused_by_field_or_evaluates_sanely(form, levers):
    try:
        gpu = custom_accelerator(**form)
    except ValueError as exc:
        assert any(word in str(exc) for word in ("name", "bandwidth", "capacity", "peak", "reference", "roof",
                                                 "measured")), exc
        return
    s = Scenario(**{k: v for k, v in levers.items() if k != "gpu"})
    s.add_gpu(gpu)
    assert_sane(s.evaluate())


@FUZZ
@given(QUERIES)
def test_a_permalink_never_fails_and_applies_only_valid_values(query):
    state = from_query(query, ignore=("embed",))
    s = Scenario()
    if state.custom_gpu is not None:
        s.add_gpu(state.custom_gpu)
    s.param.update(**state.levers)  # valid by construction
    assert set(state.levers) <= set(LEVERS.names)
    assert all(isinstance(n, str) and len(n) < 2000 for n in state.notices)
    assert_sane(s.evaluate())
    for pin in state.pins:
        assert set(pin.levers) == set(LEVERS.names) and len(pin.name) <= 40


@FUZZ
@given(CONFIG_VALUES)
def test_a_links_config_is_refused_by_name_or_read_by_the_config_reader(value):
    """Issue 30: a link's config= is refused with a notice naming the key, or its text goes to the reader of a
    pasted config, which reads it or refuses it: never a fault."""
    from app.byo_view import _read
    from core.models import ConfigError

    state = from_query({"config": value, "batch": "8"})
    assert state.levers == {"batch": 8}
    if state.config is None:
        assert len(state.notices) == 1 and state.notices[0].startswith("ignored config: ")
        return
    assert state.notices == [] and len(state.config) <= 2_000_000
    outcome = _read(state.config, None, Scenario())
    assert isinstance(outcome, ConfigError) or outcome[1].id.startswith("config-")


@FUZZ
@given(LINK_QUERIES)
def test_a_link_is_refused_before_its_page_is_built_or_read_by_panel_and_the_lab(query):
    """Issue 31, F3/F4: a link the lab lets through is one Panel's reader of the page's address reads without
    raising (it raised for a 4,301-digit value, and for ²), and the lab reads it; one it refuses says why in a line."""
    refusal = link_refusal(query)
    if refusal is not None:
        assert refusal.status in (400, 414) and "\n" not in refusal.reason and len(refusal.reason) < 300
        return
    parse_query("?" + query)  # what Panel's Location does while the page is built
    state = from_query(parse_qs(query, keep_blank_values=True), ignore=("embed",))
    assert len(state.notices) <= MAX_LINK_KEYS + 1 and set(state.levers) <= set(LEVERS.names)


@FUZZ
@given(CSV_TEXT)
def test_measurement_csv_rows_are_in_range_or_refused_with_the_reason(text):
    rows, problems = parse_measurements(text)
    batch, context = LEVERS["batch"].parameter.bounds, LEVERS["context"].parameter.bounds
    for m in rows:
        assert batch[0] <= m.batch <= batch[1] and context[0] <= m.context <= context[1]
        assert 0 < m.tokens_per_s <= 1e9
    assert all(isinstance(p, str) for p in problems)


@settings(max_examples=max(EXAMPLES // 3, 20), deadline=4000, suppress_health_check=[HealthCheck.too_slow])
@given(CLI_ARGS)
def test_the_command_line_answers_or_refuses_in_one_line(args):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["explain", *args])
    assert code in (0, 2)
    if code == 2:
        assert err.getvalue().count("\n") == 1 and err.getvalue().startswith("error: ")
    else:
        assert "Infinity" not in out.getvalue() and "NaN" not in out.getvalue()


def _scenario(levers, form) -> Scenario:
    """A scenario of ``levers``, on the custom GPU ``form`` describes when the form is one the lab accepts."""
    try:
        gpu = custom_accelerator(**form) if form is not None else None
    except ValueError:
        gpu = None
    s = Scenario(**{k: v for k, v in levers.items() if k != "gpu" or gpu is None})
    if gpu is not None:
        s.add_gpu(gpu)
    return s


@FUZZ
@given(LEVER_SETS, st.one_of(st.none(), GPU_FORMS), st.lists(MEASUREMENT_FIELDS, min_size=1, max_size=3))
def test_a_measured_point_is_refused_by_field_or_set_against_the_roof_in_range(levers, form, fields):
    """Issue 31, F5: analyse() of measurements, whatever they say, on any scenario and any GPU the lab accepts."""
    measurements = []
    for batch, context, tokens_per_s in fields:
        try:
            measurements.append(Measurement(batch, context, tokens_per_s))
        except ValueError as exc:
            assert str(exc).startswith(("batch=", "context=", "tokens/s=")) and "\n" not in str(exc), exc
    if not measurements:
        return
    for p in analyse(_scenario(levers, form), measurements):
        for value in (p.intensity, p.achieved_flop_per_s, p.achieved_bandwidth, p.mbu, p.mfu,
                      p.ceiling_tokens_per_s, p.gap):
            assert math.isfinite(value) and value > 0, p  # a point on the log axes, a finite gap
        assert "inf" not in fmt_sig(p.gap, 3) and "nan" not in fmt_sig(100 * p.mbu, 2)


_HARDWARE_VIEW = []


def hardware_view():
    """One Hardware view for every example (building one takes ~0.3 s)."""
    if not _HARDWARE_VIEW:
        from app.hardware_view import HardwareView

        _HARDWARE_VIEW.append(HardwareView())
    return _HARDWARE_VIEW[0]


# No deadline: the first example builds the view (and imports Panel), seconds.
@settings(max_examples=max(EXAMPLES // 2, 20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(GPU_FORMS)
def test_the_hardware_view_draws_every_gpu_the_custom_form_accepts(form):
    """Issue 31, F6: the Hardware tab's accelerator input takes every GPU the custom-GPU form takes, and draws it
    with finite numbers."""
    try:
        gpu = custom_accelerator(**form)
    except ValueError:
        return
    view = hardware_view()
    view.add_gpu(dataclasses.replace(gpu, id="custom-fuzz"))  # one id: the selector does not grow per example
    assert not view.error.visible, view.error.object
    assert view.atlas_fig.title.text.startswith(f"{gpu.name}: ridge ")
    for src in view._input_sources:
        for column, values in src.data.items():
            numbers = [v for v in np.ravel(np.asarray(values, dtype=object)) if isinstance(v, int | float)]
            assert all(math.isfinite(v) for v in numbers), (src.name, column)
    assert view.peak_span.location == gpu.dense_flop_per_s["bf16"] / 1e12
    panes = (view.atlas_work, view.decision, view.fixes, view.stairs_readout, view.hier_text)
    text = " ".join(pane.object for pane in panes)
    assert not re.search(r"\b(nan|inf)\b", text.replace(escape(gpu.name), "")), text


@settings(max_examples=max(EXAMPLES // 2, 20), deadline=4000, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from([f"--{lever.flag}" for lever in LEVERS] + ["--config", "--bogus"]),
                          st.one_of(CONTROL_TEXT, st.sampled_from([lever.default for lever in LEVERS]).map(str))),
                max_size=4).map(lambda pairs: [x for pair in pairs for x in pair]))
def test_the_command_lines_text_output_holds_no_terminal_control(args):
    """Issue 31, F7: whatever a flag says, ``python -m core explain`` (text) writes printable lines, and an error
    one printable line."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["explain", *args])
    assert code in (0, 2)
    assert printable_lines(out.getvalue()) and printable_lines(err.getvalue())
    if code == 2:
        assert err.getvalue().count("\n") == 1 and err.getvalue().startswith("error: ")


@given(st.lists(st.text(max_size=80), min_size=1, max_size=4), st.integers(min_value=0, max_value=3))
def test_a_pin_name_fits_its_limit_and_keeps_every_part_it_can(parts, shorten):
    """Any model name, GPU id and lever text (a pasted config's name, a custom GPU's): the name is at most
    ``MAX_PIN_NAME`` characters; when the parts fit it is them joined whole, and a cut is marked "…"."""
    from core.pins import MAX_PIN_NAME, pin_name

    shorten = shorten % len(parts)
    name = pin_name(parts, shorten=shorten)
    whole = " · ".join(parts)
    assert len(name) <= MAX_PIN_NAME
    assert name == whole if len(whole) <= MAX_PIN_NAME else name.endswith("…") or "… · " in name
