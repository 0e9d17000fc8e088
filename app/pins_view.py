"""Pinned scenarios: keep up to sixteen on the charts, compare them, rename, remove, undo."""

from __future__ import annotations

from dataclasses import replace
from html import escape

import panel as pn
import param

from core.pins import (
    MAX_PINS,
    Pin,
    PinRow,
    bound_text,
    bound_word,
    default_pin_name,
    given_pin_name,
    lever_preset,
    preset_notes,
)
from core.precision import get_precision
from core.scenario import ONE_GPU, ScenarioResult
from core.units import TFLOP, GiB, fmt_rate, fmt_seconds, fmt_sig

from .message import Message
from .present import INPUT_TEXT_CSS, PRESENT_WIDTHS
from .state import LabState
from .style import PIN_STYLES, STYLESHEET, scroll_table


class PinsView(pn.viewable.Viewer):
    """Pin controls and the compare table; the pins live in the session state (``state.pins``)."""

    state = param.ClassSelector(class_=LabState, doc="The session state it follows.")

    def __init__(self, **params):
        super().__init__(**params)
        self.scenario = self.state.scenario
        # On every page, under the tabs: the pin button and what a pin's change has to say.
        self.pin_button = pn.widgets.Button(label="Pin this scenario", css_classes=["pin"], width=170)
        self.message = Message(lambda: pn.pane.HTML(stylesheets=[STYLESHEET], sizing_mode="stretch_width"))
        self.pin_button.on_click(lambda _e: self.pin_current())
        self._parts: dict | None = None  # the Pins tab's widgets and table (_tab)
        self._trio_text = ""  # the trio's notes (preset_notes) last said, which Compare says too
        self._said = 0  # how many changes the Pins tab's status has said (_status)
        # The Compare tab says what a trio's message says (core.pins.preset_notes): the message goes when it opens,
        # else the paragraph showed twice, under the chart and above the table (a new user's trial).
        self.state.param.watch(self._compare_says_it, "tab")

    def _compare_says_it(self, event) -> None:
        if event.new == "Compare" and self._trio_text and self.message.text == self._trio_text:
            self.message.say("")

    def _tab(self) -> dict:
        """The Pins tab's widgets, table and layout, made when the tab is first shown or one of them used: most
        sessions never open it (eleven Panel objects, ~5 ms of a session's build)."""
        if self._parts is not None:
            return self._parts
        # No hover tooltip: a phone's tap left it on screen, floating over the next tab (a teacher's trial); the
        # table's empty caption says what it adds.
        preset = pn.widgets.Button(label="Pin batch 4 vs INT4 vs k = 4", css_classes=["pin-preset"])
        which = pn.widgets.Select(label="Pin", options=[], width=180, css_classes=["pin-which"],
                                  stylesheets=[INPUT_TEXT_CSS])
        new_name = pn.widgets.TextInput(label="New name", width=180, max_length=40, css_classes=["pin-name"],
                                     stylesheets=[INPUT_TEXT_CSS])
        rename = pn.widgets.Button(label="Rename", css_classes=["pin-rename"])
        remove = pn.widgets.Button(label="Remove", css_classes=["pin-remove"])
        clear = pn.widgets.Button(label="Remove all", css_classes=["pin-clear"])
        undo = pn.widgets.Button(label="↶ Undo", css_classes=["pin-undo"], disabled=True)
        # A wide table (many metrics) scrolls sideways inside its column rather than being cut at the readouts.
        table = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width", styles={"overflow-x": "auto"})
        # What each button did, for a screen reader (app/a11y.js says it): the table redrawn was all it had.
        status = pn.pane.HTML('<div hidden data-announce-key="pins" data-announce="" data-announce-seq="0"></div>',
                              margin=0, sizing_mode="stretch_width")
        preset.on_click(lambda _e: self.add_preset())
        rename.on_click(lambda _e: self._rename())
        remove.on_click(lambda _e: self._remove())
        clear.on_click(lambda _e: self._clear())
        undo.on_click(lambda _e: self.undo_last())
        layout = pn.Column(
            # Rows that wrap: on a narrow column the buttons go under each other, never over the readouts.
            pn.FlexBox(preset, clear, undo, flex_wrap="wrap", sizing_mode="stretch_width"),
            table,
            pn.FlexBox(which, new_name, rename, remove, flex_wrap="wrap", align_items="flex-end",
                       sizing_mode="stretch_width"),
            status,
            sizing_mode="stretch_width",
        )
        self._parts = {"preset": preset, "which": which, "new_name": new_name, "rename": rename, "remove": remove,
                       "clear": clear, "undo": undo, "table": table, "status": status, "layout": layout}
        self._on_present()
        self._refresh()
        return self._parts

    preset = property(lambda self: self._tab()["preset"], doc="Adds article 004's trio of pins.")
    which = property(lambda self: self._tab()["which"], doc="The pin Rename and Remove act on.")
    new_name = property(lambda self: self._tab()["new_name"], doc="The chosen pin's new name.")
    rename = property(lambda self: self._tab()["rename"], doc="Renames the chosen pin.")
    remove = property(lambda self: self._tab()["remove"], doc="Removes the chosen pin.")
    clear = property(lambda self: self._tab()["clear"], doc="Removes every pin (undoable).")
    undo = property(lambda self: self._tab()["undo"], doc="Restores the pins before the last change.")
    table = property(lambda self: self._tab()["table"], doc="The compare table (:func:`pins_table_html`).")
    layout = property(lambda self: self._tab()["layout"], doc="The Pins tab.")

    @param.depends("state.present", watch=True)
    def _on_present(self) -> None:
        if self._parts is not None:
            self._parts["table"].css_classes = ["present"] if self.state.present else []
            for name in ("preset", "clear", "undo", "rename", "remove"):  # wide enough for their 18-px labels
                button = self._parts[name]
                button.width = PRESENT_WIDTHS[button.css_classes[0]][self.state.present]

    def __panel__(self):
        return self.layout

    @property
    def pins(self) -> list[Pin]:
        return self.state.pins

    @property
    def rows(self) -> list[PinRow]:
        return self.state.pin_rows

    def default_name(self) -> str:
        """Model, GPU and the lever that moved since the last pin (:func:`core.pins.default_pin_name`)."""
        return default_pin_name(self.scenario.levers(), self.pins, self.scenario.catalogue)

    def pin_current(self) -> None:
        """Pin the current scenario under its default name."""
        self.add(Pin(self.default_name(), self.scenario.levers()))

    def add(self, pin: Pin) -> None:
        """Pin ``pin``; refused with a message when :data:`MAX_PINS` are pinned."""
        self.message.say("")
        if not self.state.add_pin(pin):
            self.message.say(f'<div class="warn">Up to {MAX_PINS} pins: remove one first.</div>')
            self._announce(f"Not pinned: up to {MAX_PINS} pins; remove one on the Pins tab first.", "error")
            self._status(f"Not pinned: up to {MAX_PINS} pins; remove one first.")
            return
        self._announce(f"Pinned “{pin.name}”: {len(self.pins)} of {MAX_PINS} pins. The Pins and Compare tabs "
                       "compare them.")
        self._status(f"Pinned “{pin.name}”: {len(self.pins)} of {MAX_PINS} pins.")

    def _status(self, text: str) -> None:
        """Say ``text`` to a screen reader on the Pins tab, once built (app/a11y.js reads ``data-announce`` when it
        or its sequence changes): rename, remove, undo and the trio changed only a redrawn table."""
        if self._parts is None:
            return
        self._said += 1
        self._parts["status"].object = (f'<div hidden data-announce-key="pins" data-announce="{escape(text)}" '
                                        f'data-announce-seq="{self._said}"></div>')

    def _announce(self, text: str, kind: str = "info") -> None:
        """Say ``text`` for a few seconds in the page's notification area, which a screen reader reads (Notyf's
        announcer), where the pins are not in view: a pin made from the Roofline tab showed only a marker, and a
        keyboard trial heard nothing.  Not on the Pins tab (its table says it), not in present mode (the tour's card
        holds the corners), and nowhere outside a served session."""
        area = pn.state.notifications
        if area is None or self.state.present or self.state.tab == "Pins":
            return
        getattr(area, kind)(escape(text), duration=4000)

    def add_preset(self) -> None:
        """Add article 004's three levers from the current scenario; earlier pins stay.

        The message then says what the roofline alone does not (:func:`core.pins.preset_notes`): an MoE
        trio's batch 4 and k = 4 touch more experts than batch 1, a trio kept as stored starts there.
        """
        # A trio already pinned (pressed twice, or from B = 8 after B = 1: the same three pins) is not pinned again:
        # a trial's second press made three pins of the same names.
        trio = [pin for pin in lever_preset(self.scenario.levers(), self.scenario.catalogue) if pin not in self.pins]
        if not trio:
            self.message.say('<div class="caption" data-readout="pins-trio">This scenario\'s trio is pinned '
                             "already.</div>")
            self._status("This scenario's trio is pinned already.")
            return
        before = len(self.pins)
        self.set_pins([*self.pins, *trio])
        if len(self.pins) > before:
            names = ", ".join(f"“{p.name}”" for p in self.pins[before:])
            self._status(f"Added {len(self.pins) - before} pins: {names}. {len(self.pins)} of {MAX_PINS} pins.")
        if not self.message.text:
            added = [row for row in self.rows if any(row.pin is pin for pin in trio)]
            self._trio_text = "".join(f'<div class="caption" data-readout="pins-trio">{escape(n)}</div>'
                                      for n in preset_notes(added))
            self.message.say(self._trio_text)

    def set_pins(self, pins: list[Pin]) -> None:
        """Replace every pin (a preset, a permalink, or remove all); the previous set can be undone."""
        self.message.say("")
        left_out = self.state.set_pins(pins)
        if left_out:
            self.message.say(f'<div class="warn">Up to {MAX_PINS} pins: {len(left_out)} not added '
                             "(remove some first).</div>")
            self._status(f"Up to {MAX_PINS} pins: {len(left_out)} not added; remove some first.")

    def undo_last(self) -> None:
        """Restore the pins as they were before the last change."""
        self.message.say("")
        self.state.undo_pins()
        self._status(f"Restored the pins before the last change: {_count(len(self.pins))}.")

    def _rename(self) -> None:
        # value_input follows each keystroke; value waits for Enter or blur.
        name, _ = given_pin_name(self.new_name.value_input or "")  # a bidi override shown as its escape, never run
        if self.which.value is None or not name:
            self.message.say('<div class="warn">Choose a pin and type its new name.</div>')
            self._status("Not renamed: choose a pin and type its new name.")
            return
        pins = list(self.pins)
        pins[self.which.value] = replace(pins[self.which.value], name=name)  # a trio pin keeps its origin
        i = self.which.value
        self.new_name.value = ""
        self.set_pins(pins)
        self._status(f"Renamed pin {i + 1} “{name}”.")

    def _clear(self) -> None:
        had = len(self.pins)
        self.set_pins([])
        if had:
            self._status(f"Removed every pin ({had}); Undo restores them.")

    def _remove(self) -> None:
        if self.which.value is None:
            return
        pins, i = list(self.pins), self.which.value
        gone = pins.pop(i)
        self.set_pins(pins)
        self._status(f"Removed pin {i + 1} “{gone.name}”: {_count(len(pins))} left.")

    @param.depends("state.pin_rows", watch=True)
    def _refresh(self) -> None:
        if self._parts is None:
            return  # the tab is filled when first made
        options = {f"{i + 1}. {p.name}": i for i, p in enumerate(self.pins)}
        # Rename and Remove act on a chosen pin: one is always chosen while there are pins (a blank select
        # beside a table of pins reads as "no pins").
        value = self.which.value if self.which.value in options.values() else (0 if options else None)
        self.which.param.update(options=options, value=value)
        self.table.object = pins_table_html(self.rows)
        self.undo.disabled = not self.state.pin_undo


def _count(n: int) -> str:
    """``n`` pins in words: "no pins", "1 pin", "3 pins"."""
    return "no pins" if n == 0 else f"{n} pin{'s' if n != 1 else ''}"


def _split_text(r) -> str:
    """The phase and the GPU split when they are not one GPU decoding: two pins that differ only there read
    differently (``, prefill, TP = 8, replicas = 2``)."""
    parts = [r.phase] if r.phase != "decode" else []
    parts += [f"{name.upper() if name != 'replicas' else name} = {getattr(r, name):,}"
              for name in ONE_GPU if getattr(r, name) != 1]
    return "".join(f", {part}" for part in parts)


#: The compare table's header: short names (the full one in each's tooltip) over their units, so that the table
#: fits its column at 1280 px, in present mode too, without scrolling sideways (found by a trial).
PINS_TABLE_HEAD = (
    '<tr><th>mark</th><th>pin</th><th>levers</th>'
    '<th><abbr title="arithmetic intensity counting weight reads (FLOP/byte)">I</abbr>'
    '<span class="unit">FLOP/<wbr>byte of weights</span></th>'
    '<th><abbr title="attainable FLOP/s of one GPU on the weights roofline, min(P_peak, BW·I), or the step\'s FLOP '
    'over its kernel launches where its weights-only step waits on them (the third ceiling)">attainable</abbr>'
    '<span class="unit">TFLOP/s per GPU, weights only</span></th>'
    '<th><abbr title="the roofline\'s ceiling on tokens per second of the whole batch (all B sequences) of one model '
    'copy, counting KV-cache reads; the Compare tab gives it per sequence too">tokens/s</abbr>'
    '<span class="unit">ceiling, the batch, with KV reads; <abbr title="what sets its step time: memory, compute, '
    'or its kernel '
    'launches (launch overhead); the word\'s tooltip gives the times">bound</abbr></span></th>'
    '<th><abbr title="KV cache of the whole batch held by one GPU (the most loaded)">KV cache</abbr>'
    '<span class="unit">GiB per GPU</span></th>'
    '<th><abbr title="weights and KV cache fit in each GPU\'s memory">fits</abbr></th></tr>'
)


def _under_launches(r: ScenarioResult) -> str:
    """Under a pin's attainable FLOP/s, where the launches hold it below ``min(P_peak, BW·I)``: the ceiling that does
    (a teacher's trial: INT4's 11.28 beside batch 4's and k = 4's 13.4 at the same I = 4, said nowhere)."""
    roof = float(r.roof(r.arithmetic_intensity_weights))
    if not r.attainable_flop_per_s_weights < roof * (1 - 1e-9):
        return ""
    return (f'<br><span class="unit" title="{fmt_sig(r.flop_per_step_weights / 1e9)} GFLOP / '
            f'{fmt_seconds(r.launch_overhead_s)} '
            f'of launches, under min(P_peak, BW·I) = {fmt_sig(roof / TFLOP)} TFLOP/s">launch ceiling</span>')


def pins_table_html(rows: list[PinRow]) -> str:
    """The compare table: each pin's levers, results, and what differs at a shared intensity."""
    if not rows:
        return ('<div class="caption" data-readout="pins">No pins yet. Pin the current scenario, or pin article '
                "004's three levers with the button above (batch 4, INT4, 4-token speculation): it adds them beside "
                "any pins you have, and they land on one point.</div>")
    head = PINS_TABLE_HEAD
    body = []
    for i, row in enumerate(rows):
        r, (color, marker) = row.result, PIN_STYLES[i]
        approx = r.model.approximate_mark
        notes = "<br>".join(escape(n) for n in row.notes)
        body.append(
            f'<tr data-pin="{i + 1}"><td><span style="color:{color}">●</span> {i + 1}<br>'
            f'<span class="marker">{escape(marker.replace("_", " "))}</span></td>'
            f'<td class="name">{escape(row.pin.name)}</td>'
            f'<td class="levers">{escape(r.model.name)} · {escape(r.gpu.name)}<br>B = {r.batch}, k = {r.spec_k}, '
            f"p = {r.weight_format}, p_kv = {get_precision(r.kv_dtype).label}, "
            f"S = {r.context:,}{'' if r.gqa else ', GQA off'}{escape(_split_text(r))}"
            # the lever that sets the launches (a trial's two INT4 pins read alike at 470 and 1,350 tokens/s)
            f"{', CUDA graphs' if r.deployment.cuda_graphs else ''}</td>"
            # A model with a key the lab does not model: each of its figures is approximate, where it is (≈).
            f"<td>{approx}{fmt_sig(r.arithmetic_intensity_weights)}</td>"
            f"<td>{approx}{fmt_sig(r.attainable_flop_per_s_weights / TFLOP)}{_under_launches(r)}</td>"
            # Under its tokens/s, what bounds it (an MoE's INT4 pin waits on its launches: why it is slowest).
            # Split into stages, the aggregate counts the PP micro-batches in flight (a trial: 4 × 28 is not 448).
            # A pin that does not fit says so where its rate is, as the readouts and Compare do.
            f'<td>{approx}{fmt_rate(r.tokens_per_s_with_kv)}'
            + ("" if r.fits else '<br><span class="unit">(if it fit)</span>')
            + (f'<br><span class="unit">B × {r.pp} micro-batches</span>' if r.pp > 1 else "")
            + f'<br><span class="unit bound" title="{escape(bound_text(r))}">'
            f"{bound_word(r)}</span></td>"
            f"<td>{approx}{r.kv_bytes / GiB:,.2f}</td>"
            f"<td>{approx}{'yes' if r.fits else 'no'}</td>"
            "</tr>"
            + (
                f'<tr class="notes"><td colspan="8" class="notes"><span class="row-note">what still '
                f"differs: {notes}</span></td></tr>"
                if notes
                else ""
            )
        )
    return scroll_table(head + "".join(body), "lab pins sticky-first", ' data-readout="pins"')
