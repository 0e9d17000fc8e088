"""Compare's pin labels (app/compare_view.py ``PIN_TICK_CODE``) fit the chart they are drawn on, without a browser."""

from __future__ import annotations

import json

import pytest
from py_mini_racer import MiniRacer

from app.compare_view import AXIS_NAME_LEAST, PIN_TICK_CODE, pin_axis_labels

TRIO = [f"{n} · Llama-3-70B · h100-sxm" for n in ("batch 4", "INT4 weights", "speculation k=4", "baseline")]


def shown(labels: list[str], width: float | None, size: str = "11px") -> list[str]:
    """Each tick's text as BokehJS's CustomJSTickFormatter runs the code (its args and ``tick``, ``index``,
    ``ticks`` the function's parameters)."""
    ctx = MiniRacer()
    plot = "null" if width is None else json.dumps({"inner_width": width,
                                                     "properties": {"inner_width": {"is_unset": False}}})
    ctx.eval(f"const f = (labels, plot, axis, tick, index, ticks) => {{ {PIN_TICK_CODE} }};")
    ticks = [str(i + 1) for i in range(len(labels))]
    return json.loads(ctx.eval(
        f"JSON.stringify({json.dumps(ticks)}.map((t, i, all) => f({json.dumps(labels)}, {plot}, "
        f"{{major_label_text_font_size: {json.dumps(size)}}}, t, i, all)))"))


def test_a_laid_out_wide_chart_shows_the_servers_labels_whole():
    labels = pin_axis_labels(TRIO)
    assert labels == ["1: batch 4", "2: INT4 weights", "3: speculation k…", "4: baseline"]
    assert shown(labels, 560) == labels
    assert shown(labels, None) == labels  # not laid out yet: the server's


@pytest.mark.parametrize("width, size", [(350, "11px"), (300, "11px"), (560, "18px"), (200, "11px")])
def test_on_a_narrow_chart_each_label_fits_its_pins_slot(width, size):
    """A 390-px phone: "2: INT4 weights" and "3: speculation k…" ran into one another ("weights3:")."""
    got = shown(pin_axis_labels(TRIO), width, size)
    per_char = 0.55 * float(size[:-2])
    assert all(len(text) * per_char <= width / len(TRIO) - per_char for text in got), got
    for i, text in enumerate(got):  # its number first, then a cut name with its "…", or the number alone
        number = f"{i + 1}: "
        assert text == str(i + 1) or (text.startswith(number) and len(text) >= len(number) + AXIS_NAME_LEAST)
    assert shown(pin_axis_labels(TRIO), 350)[:3] == ["1: batch 4", "2: INT4 weig…", "3: speculati…"]
