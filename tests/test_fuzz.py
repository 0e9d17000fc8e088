"""The fuzz tier (issue 12): every boundary, fed its whole input domain, answers with a documented
refusal naming a field, or with finite, non-negative, in-range results.  CI runs a bounded number of
examples per boundary; ``benchmarks/fuzz_boundaries.py`` runs 10^5 and more."""

from __future__ import annotations

import io
import os
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
from fuzz_strategies import CLI_ARGS, CSV_TEXT, GPU_FORMS, LEVER_SETS, QUERIES, finite_non_negative
from hypothesis import HealthCheck, given, settings

from core.cli import main
from core.hardware import custom_accelerator
from core.measured_points import parse_measurements
from core.permalink import from_query
from core.scenario import LEVERS, Scenario

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
        assert any(word in str(exc) for word in ("name", "bandwidth", "capacity", "peak", "reference", "roof")), exc
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
