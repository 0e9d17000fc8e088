"""Pinned scenarios: keep up to eight on the roofline, compare them, rename and remove them."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

import panel as pn

from core.pins import MAX_PINS, Pin, PinRow, compare, lever_preset
from core.precision import get_precision
from core.scenario import Scenario
from core.units import TFLOP, GiB

from .serving_views import SERVING_CSS

#: One colour and one marker per pin slot, distinct from the chart's own glyphs.
STYLES = (
    ("#e377c2", "triangle"), ("#17becf", "square"), ("#bcbd22", "inverted_triangle"), ("#8c564b", "hex"),
    ("#d62728", "star"), ("#7f7f7f", "square_pin"), ("#2ca02c", "triangle_pin"), ("#9467bd", "plus"),
)


class PinsView:
    """Pin controls, the compare table, and the pins drawn on the roofline via ``draw``."""

    def __init__(self, scenario: Scenario, draw: Callable[[list], None], on_change: Callable[[], None]):
        self.scenario = scenario
        self.draw = draw
        self.on_change = on_change
        self.pins: list[Pin] = []
        self.rows: list[PinRow] = []
        self.pin_button = pn.widgets.Button(label="Pin this scenario", css_classes=["pin"], width=170)
        self.preset = pn.widgets.Button(label="Pin batch 4 vs INT4 vs k = 4", css_classes=["pin-preset"], width=210)
        self.which = pn.widgets.Select(label="Pin", options=[], width=180, css_classes=["pin-which"])
        self.new_name = pn.widgets.TextInput(label="New name", width=180, max_length=40, css_classes=["pin-name"])
        self.rename = pn.widgets.Button(label="Rename", width=90, css_classes=["pin-rename"])
        self.remove = pn.widgets.Button(label="Remove", width=90, css_classes=["pin-remove"])
        self.clear = pn.widgets.Button(label="Remove all", width=100, css_classes=["pin-clear"])
        self.table = pn.pane.HTML("", stylesheets=[SERVING_CSS, PIN_CSS], sizing_mode="stretch_width")
        self.message = pn.pane.HTML("", sizing_mode="stretch_width")
        self.pin_button.on_click(lambda _e: self.add(Pin(self._next_name(), self.scenario.levers())))
        self.preset.on_click(lambda _e: self.set_pins(lever_preset(self.scenario.levers())))
        self.rename.on_click(lambda _e: self._rename())
        self.remove.on_click(lambda _e: self._remove())
        self.clear.on_click(lambda _e: self.set_pins([]))
        self.layout = pn.Column(
            pn.Row(self.preset, self.clear),
            self.table,
            pn.Row(self.which, self.new_name, self.rename, self.remove, align="end"),
            sizing_mode="stretch_width",
        )
        self._refresh()

    def _next_name(self) -> str:
        s = self.scenario
        label = f"B={s.batch} k={s.spec_k} {get_precision(s.weight_dtype).label} S={s.context:,}"
        names = {p.name for p in self.pins}
        return label if label not in names else f"{label} ({len(self.pins) + 1})"

    def add(self, pin: Pin) -> None:
        """Pin ``pin``; refused with a message when :data:`MAX_PINS` are pinned."""
        if len(self.pins) >= MAX_PINS:
            self.message.object = f'<div class="warn">Up to {MAX_PINS} pins: remove one first.</div>'
            return
        self.set_pins([*self.pins, pin])

    def set_pins(self, pins: list[Pin]) -> None:
        """Replace every pin (a preset, a permalink, or remove all)."""
        self.pins = list(pins)[:MAX_PINS]
        self._refresh()
        self.on_change()

    def _rename(self) -> None:
        # value_input follows each keystroke; value waits for Enter or blur.
        name = (self.new_name.value_input or "").strip()
        if self.which.value is None or not name:
            self.message.object = '<div class="warn">Choose a pin and type its new name.</div>'
            return
        self.pins[self.which.value] = Pin(name[:40], self.pins[self.which.value].levers)
        self.new_name.value = ""
        self.set_pins(self.pins)

    def _remove(self) -> None:
        if self.which.value is None:
            return
        del self.pins[self.which.value]
        self.set_pins(self.pins)

    def _refresh(self) -> None:
        self.message.object = ""
        self.rows = compare(self.pins, self.scenario.resolve_model, self.scenario.resolve_gpu)
        styled = [(row.pin.name, *STYLES[i], row.result) for i, row in enumerate(self.rows)]
        self.draw(styled)
        self.which.options = {f"{i + 1}. {p.name}": i for i, p in enumerate(self.pins)}
        self.table.object = pins_table_html(self.rows)


def pins_table_html(rows: list[PinRow]) -> str:
    """The compare table: each pin's levers, results, and what differs at a shared intensity."""
    if not rows:
        return ('<div class="caption" data-readout="pins">No pins yet. Pin the current scenario, or pin article '
                "004's three levers (batch 4, INT4, 4-token speculation) and watch them land on one point.</div>")
    head = ("<tr><th></th><th>pin</th><th>levers</th><th>I (FLOP/byte)</th><th>attainable (TFLOP/s)</th>"
            "<th>tokens/s</th><th>KV cache (GiB)</th><th>fits</th></tr>")
    body = []
    for i, row in enumerate(rows):
        r, color = row.result, STYLES[i][0]
        notes = "<br>".join(escape(n) for n in row.notes)
        body.append(
            f'<tr data-pin="{i + 1}"><td style="color:{color}">●</td><td class="name">{escape(row.pin.name)}</td>'
            f'<td class="levers">{escape(r.model.name)} · {escape(r.gpu.id)}<br>B = {r.batch}, k = {r.spec_k}, '
            f"p = {get_precision(r.weight_dtype).label}, p_kv = {get_precision(r.kv_dtype).label}, "
            f"S = {r.context:,}{'' if r.gqa else ', GQA off'}</td>"
            f"<td>{r.arithmetic_intensity_weights:,.4g}</td><td>{r.attainable_flop_per_s_weights / TFLOP:,.4g}</td>"
            f"<td>{r.tokens_per_s_with_kv:,.0f}</td><td>{r.kv_bytes / GiB:,.2f}</td>"
            f"<td>{'yes' if r.fits else 'no'}</td>"
            "</tr>"
            + (
                f'<tr class="notes"><td></td><td colspan="7" class="notes">what still differs: {notes}</td></tr>'
                if notes
                else ""
            )
        )
    return f'<div class="scroll"><table class="lab pins" data-readout="pins">{head}{"".join(body)}</table></div>'


PIN_CSS = """
.scroll { overflow-x: auto; max-width: 100%; }
table.pins td.notes { text-align: left; font-size: 12px; color: #444; border-top: none; }
table.pins td.levers { text-align: left; font-size: 12px; min-width: 170px; }
table.pins td.name { text-align: left; font-weight: 600; }
.warn { color: #b45309; font-size: 13px; }
"""
