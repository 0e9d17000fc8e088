"""The guided tour panel: previous / next through :data:`core.tour.TOUR`, by mouse, keyboard or clicker.

A step sets the scenario (every lever) and shows a caption whose numbers are
filled from the live result, with a footnote where the article rounds
differently; the class can leave the tour at any step and keep exploring from
there, come back to it (the lab offers to resume where it left), or jump to any
step.  Keys (presenter clickers send the same): → / PageDown / Space next,
← / PageUp previous, Esc leaves.  The step travels in the permalink
(``tour=5``) through :attr:`LabState.tour_step`.
"""

from __future__ import annotations

from html import escape

import panel as pn
import param
from panel.custom import JSComponent

from core.scenario import LEVERS, ScenarioResult
from core.tour import TOUR, LadderTourStep, step_titles

from .controls import lever_control
from .present import INPUT_TEXT_CSS, PRESENT_CONTROLS, PRESENT_JUMP_CSS, PRESENT_WIDTHS
from .state import LabState
from .style import STYLESHEET

#: The CSS class of present mode's button (``app/lab.py``), whose press the tour's key listener hears.
PRESENT_BUTTON = "present-toggle"


#: The tour's numbers strip's least width beside present mode's header (px; its numbers' own width where wider):
#: 1280 px leaves room for it beside the title and "Leave present mode" (~370 px), 1024 does not, so there it always
#: takes a row of its own.
STRIP_ROW_PX = 700

def key_move(action: str, index: int | None, steps: int, start: int | None) -> int | str | None:
    """What a key or a clicker's press does to a tour of ``steps`` steps shown at ``index`` (None: not running).

    ``"next"`` shows the next step; on the last step it keeps it on screen (the closing summary is what a class reads
    while the teacher sums up: a trial's double tap ended the tour), where "Finish" or Esc ends it.  Not running,
    it shows step ``start`` (None: a press starts nothing, e.g. after "Finish").  ``"previous"`` shows the step
    before, from the second on; ``"leave"`` (Esc) ends a running tour.

    Returns:
        the step to show (0-based), ``"leave"``, or None (nothing to do).
    """
    if index is None:
        return start if action == "next" else None
    if action == "next":
        return index + 1 if index < steps - 1 else None
    if action == "previous":
        return index - 1 if index > 0 else None
    return "leave"


#: On a phone the step's card (and the levers it asks for) follows the tour's buttons, before "Jump to step" and what
#: present mode puts beside it (the pin button, the expected point's switch, the memory verdict): a teacher's link
#: opened at 390 px showed those first and the card a screen down, under the fold.
PHONE_ORDER_CSS = ("@media (max-width: 700px) { .tour-caption, .tour-asks { order: 1; } "
                   ".tour-jump, .pin, .band, .tour-memory { order: 2; } }")


class TourKeys(JSComponent):
    """Listens for the tour's keys on the whole page and sends ``"next"``, ``"previous"`` or ``"leave"``.

    Keys typed into a field, or pressed on a slider or a menu, are left to them; so is Space on a focused button or
    checkbox (it presses it), but not the arrows (a button or a checkbox does nothing with them, and after a click
    on "Next" or on the GQA box the focus stays there).  PageDown and PageUp, what presenter clickers send, drive
    the tour from a focused button or field too (after a click on a card's header the clicker went on scrolling
    the page), and from a slider last moved with the pointer: a card that asks the class to drag a slider must
    not lose the clicker to it.  A slider reached or moved from the keyboard keeps its PageUp/PageDown.
    """

    active = param.Boolean(default=False, doc="Only a running tour, or present mode, takes the keys.")
    presents = param.Boolean(default=False, doc="""
        A press of present mode's button (CSS class :data:`PRESENT_BUTTON`) would start present mode and give the
        keys to this tour: the listener takes them at the click, in the browser, before the server's ``active``
        comes back (a clicker pressed at once after "Present mode" was lost).  The lab's tour sets it
        (:meth:`TourView._take_keys`); the Hardware tab's tour takes the keys on that tab, from the server.""")

    _esm = f"""
    const PRESENT_BUTTON = "{PRESENT_BUTTON}";
    """ + """
    const NEXT = ["ArrowRight", "PageDown", " ", "Spacebar"];
    const PREVIOUS = ["ArrowLeft", "PageUp"];
    const CLICKER = ["PageDown", "PageUp"];
    // A button does nothing with the arrows: after a click on "Next" the focus stays on it and → must still work.
    const ARROWS = ["ArrowRight", "ArrowLeft"];
    // Inputs that are pressed, not typed into: the arrows and a clicker's keys mean nothing to them (a radio
    // group's arrows move its choice, so a radio keeps them).
    const PRESSED = ["button", "checkbox", "submit", "reset", "image", "file", "color"];
    const isSlider = (el) => el.getAttribute("role") === "slider" || el.classList.contains("noUi-handle");
    // Sliders last moved with the pointer: a clicker's keys go to the tour, not to them.
    const dragged = new WeakSet();
    // Escape means nothing to a button, a box that is pressed, a tab or a slider: there it leaves the tour, as the
    // card says (a keyboard trial pressed it on "Next" and stayed); a text box, a menu and a select keep it.  A tab
    // (the lab's tab bar, the Hardware tab's sections: app/a11y.js) keeps its arrows when the keyboard put the focus
    // there; clicked with the pointer, as after a click on "Next", the arrows go on driving the tour.
    function owned(path, key) {
      const clicker = CLICKER.includes(key), arrow = ARROWS.includes(key), esc = key === "Escape";
      return path.some((el) => el instanceof Element && (
        ["TEXTAREA", "SELECT"].includes(el.tagName) || el.isContentEditable ||
        (el.tagName === "INPUT" && !clicker && !((arrow || esc) && PRESSED.includes(el.type))) ||
        (el.tagName === "BUTTON" && !clicker && !arrow && !esc) ||
        (el.getAttribute("role") === "tab" && !clicker && !esc && !el.hasAttribute("data-pointer-focus")) ||
        (isSlider(el) && !esc && !(clicker && dragged.has(el)))));
    }
    export function render({ model }) {
      const el = document.createElement("span");
      el.className = "tour-keys";
      // "Present mode" pressed in this page: the keys are the tour's until the server's word on them comes back.
      let pressed = false;
      const onPresent = (event) => {
        if (event.composedPath().some((e) => e instanceof Element && e.classList.contains(PRESENT_BUTTON))) {
          pressed = model.presents;
        }
      };
      model.on("active", () => { pressed = false; });
      const sliders = (event) => event.composedPath().filter((e) => e instanceof Element && isSlider(e));
      const pointer = (event) => { for (const s of sliders(event)) dragged.add(s); };
      const handler = (event) => {
        // A view rendered again (its layout's children changed, its tab closed) leaves its element: its listener
        // goes with it, or each key would be sent twice (two "next"s, a step skipped).
        if (!el.isConnected) { remove(); return; }
        if (!CLICKER.includes(event.key)) for (const s of sliders(event)) dragged.delete(s);  // the keyboard's now
        if (!(model.active || pressed) || event.altKey || event.ctrlKey || event.metaKey ||
            owned(event.composedPath(), event.key)) {
          return;
        }
        let action = null;
        if (NEXT.includes(event.key)) action = "next";
        else if (PREVIOUS.includes(event.key)) action = "previous";
        else if (event.key === "Escape") action = "leave";
        if (!action) return;
        event.preventDefault();
        // Heard while the event goes down to its target (capture), so a slider's own PageDown never runs.
        if (sliders(event).length) event.stopPropagation();
        model.send_msg(action);
      };
      const remove = () => {
        document.removeEventListener("click", onPresent, true);
        document.removeEventListener("keydown", handler, true);
        document.removeEventListener("pointerdown", pointer, true);
      };
      document.addEventListener("click", onPresent, true);
      document.addEventListener("keydown", handler, true);
      document.addEventListener("pointerdown", pointer, true);
      model.on("remove", remove);
      return el;
    }
    """

    def __init__(self, on_key, **params):
        super().__init__(**params)
        self._on_key = on_key

    def _handle_msg(self, msg) -> None:
        if msg in ("next", "previous", "leave"):
            self._on_key(msg)


class TourView(pn.viewable.Viewer):
    """Tour controls and caption for one session; the caption follows the session's result."""

    state = param.ClassSelector(class_=LabState, doc="The session state it follows.")

    def __init__(self, **params):
        super().__init__(**params)
        self.scenario = self.state.scenario
        self.index: int | None = None
        self.last_index: int | None = None  # where the tour was left, to offer a resume
        self.finished = False  # the last step's "Finish" was pressed
        self.prev = pn.widgets.Button(label="◀ Previous", width=110, disabled=True, css_classes=["tour-prev"])
        self.next = pn.widgets.Button(label="Start the tour ▶", color="primary", width=150,
                                      css_classes=["tour-next"])
        # What a running or left tour shows (its card, "Leave", "Resume"): made when a tour first starts
        # (_running_parts); most sessions never start one.
        self.resume: pn.widgets.Button | None = None
        self.leave: pn.widgets.Button | None = None
        self.caption: pn.pane.HTML | None = None
        # Present mode's strip of the numbers the step is about (TourStep.strip), made with the card; the lab
        # places it (the header, beside the chart): ``place_strip(pane)`` is called once, when it is made.
        self.strip: pn.pane.HTML | None = None
        self.place_strip = None
        # The titles quote each step's own numbers: built once per server process (core.tour.step_titles).
        self.jump = pn.widgets.Select(label="Jump to step", options=self._jump_options(), value=-1, width=260,
                                      css_classes=["tour-jump"], stylesheets=[INPUT_TEXT_CSS])
        self.keys = TourKeys(on_key=self._key, width=0, height=0, margin=0)  # active, presents: _take_keys
        self.intro = pn.pane.Markdown("**Guided tour** — the articles' walk-through, step by step "
                                      "(keys: → next, ← previous, Esc leaves)", margin=(8, 10))
        self.prev.on_click(lambda _e: self.go(self.index - 1))
        self.next.on_click(lambda _e: self._next())
        self.jump.param.watch(self._on_jump, "value")
        # One row of controls, the card on a row of its own below once a tour has started: no column around them.
        # The key listener (0 × 0) is not among them: the page places it where no arrangement rebuilds it
        # (``keys``: present mode moves this row, and a listener built again missed the clicker meanwhile).
        self.bar = self.layout = pn.FlexBox(self.intro, self.prev, self.next, self.jump,
                                            align_items="center", sizing_mode="stretch_width", css_classes=["tour"],
                                            stylesheets=[PHONE_ORDER_CSS])
        self._on_present()

    def beside_jump(self, *widgets) -> None:
        """Show ``widgets`` in the tour's row right after "Jump to step", in order (present mode's pin button and the
        expected point's switch, above the card rather than under it), or, with none, take back those placed there."""
        placed = getattr(self, "_beside", ())
        if list(placed) == list(widgets):
            return
        for widget in placed:
            if widget in self.bar.objects:
                self.bar.remove(widget)
        self._beside = widgets
        at = self.bar.objects.index(self.jump) + 1
        for widget in reversed(widgets):
            self.bar.insert(at, widget)

    def _running_parts(self) -> None:
        """Make the card and the "Leave" and "Resume" buttons, once: when a tour first starts."""
        if self.caption is not None:
            return
        self.resume = pn.widgets.Button(label="Resume", width=170, visible=False, css_classes=["tour-resume"])
        self.leave = pn.widgets.Button(label="Leave the tour", width=130, visible=False, css_classes=["tour-leave"])
        self.caption = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width", visible=False,
                                    css_classes=["tour-caption", *(["present"] if self.state.present else [])],
                                    styles={"flex": "1 1 100%"})  # a row of its own, under the controls
        self.resume.on_click(lambda _e: self.go(self.last_index or 0))
        self.leave.on_click(lambda _e: self.stop())
        self.bar.insert(3, self.leave)  # after "Next", as before "Jump to step"
        self.bar.insert(3, self.resume)
        # Present mode folds the levers away: the ones a step asks the class to move (TourStep.asks) sit above
        # its card, made when a step first asks for them.
        self.asked = pn.FlexBox(sizing_mode="stretch_width", visible=False, css_classes=["tour-asks"],
                                styles={"flex": "1 1 100%"})
        self._ask_controls: dict[str, pn.viewable.Viewable] = {}
        self.bar.append(self.asked)
        self.bar.append(self.caption)
        # At least STRIP_ROW_PX wide or a row of its own: beside "Leave present mode" at 1280 px, under it at 1024 px
        # for every step (it had taken a row of its own at some steps only, and "Next" moved between them; a
        # teacher's trial at 1024 × 768).
        self.strip = pn.pane.HTML("", stylesheets=[STYLESHEET], visible=False, margin=(0, 10),
                                  css_classes=["tour-strip-pane"],
                                  styles={"flex": f"1 1 {STRIP_ROW_PX}px", "min-width": "min-content"})
        if self.place_strip is not None:
            self.place_strip(self.strip)
        self._on_present()  # their widths on a projector

    def __panel__(self):
        return self.layout

    @param.depends("state.tab", watch=True)
    def _on_tab(self) -> None:
        self._take_keys()

    def _take_keys(self) -> None:
        """The page's keys drive a running tour; in present mode a clicker's "next" also starts it. The Hardware
        tab's own tour takes them there."""
        hardware = self.state.tab == "Hardware"
        self.keys.param.update(active=(self.index is not None or self.state.present) and not hardware,
                               presents=not (self.state.present or hardware))

    @param.depends("state.present", watch=True)
    def _on_present(self) -> None:
        # On a projector the buttons say enough; the room reads the card. Their text is 18 px there (the page's
        # PRESENT_CONTROLS), the buttons wider to hold it.
        present = self.state.present
        self.intro.visible = not present
        for widget in (self.prev, self.jump, self.resume, self.leave):
            if widget is not None:
                widget.width = PRESENT_WIDTHS[widget.css_classes[0]][present]
        self._size_next()
        self.jump.stylesheets = [INPUT_TEXT_CSS, *([PRESENT_JUMP_CSS] if present else [])]
        self.bar.styles = PRESENT_CONTROLS[present]
        if self.caption is not None:
            self.caption.css_classes = ["tour-caption", *(["present"] if self.state.present else [])]
            self._show_strip()
            self._show_asks()
        self._take_keys()

    def _show_asks(self) -> None:
        """In present mode, the controls of the levers the current step asks for (none outside a tour)."""
        asks = TOUR[self.index].asks if self.state.present and self.index is not None else ()
        for name in asks:
            if name not in self._ask_controls:
                self._ask_controls[name] = lever_control(self.scenario, LEVERS[name])
        wanted = [self._ask_controls[name] for name in asks]
        if list(self.asked.objects) != wanted:
            self.asked.objects = wanted
        self.asked.visible = bool(wanted)

    def _show_strip(self) -> None:
        """The strip shows in present mode while a step with numbers is on."""
        self.strip.visible = bool(self.state.present and self.index is not None and self.strip.object)

    def _size_next(self) -> None:
        """"Next ▶" during a tour, "Start the tour ▶" before one: each label's width (:data:`PRESENT_WIDTHS`)."""
        running = self.next.label in ("Next ▶", "Finish ✓")
        self.next.width = PRESENT_WIDTHS["tour-next-running" if running else "tour-next"][self.state.present]

    @staticmethod
    def _jump_options() -> dict:
        return {"choose a step…": -1, **{f"{i + 1}. {title}": i for i, title in enumerate(step_titles())}}

    @param.depends("state.result", watch=True)
    def _on_result(self) -> None:
        self.update(self.state.result)

    def _key(self, action: str) -> None:
        # In present mode a clicker starts the tour, or resumes where it was left; a press after "Finish" does nothing.
        start = (self.last_index or 0) if self.state.present and not self.finished else None
        move = key_move(action, self.index, len(TOUR), start)
        if move == "leave":
            self.stop()
        elif move is not None:
            self.go(move)

    def _on_jump(self, event) -> None:
        if event.new is not None and event.new >= 0 and event.new != self.index:
            self.go(event.new)

    def _next(self) -> None:
        if self.index is None:
            self.go(0)
        elif self.index == len(TOUR) - 1:
            self.stop()  # "Finish" on the last step
        else:
            self.go(self.index + 1)

    def go(self, index: int) -> None:
        """Show step ``index`` (0-based) and set the scenario to it."""
        self._running_parts()
        self.index = max(0, min(index, len(TOUR) - 1))
        self.finished = False
        self.prev.disabled = self.index == 0
        self.next.label = "Finish ✓" if self.index == len(TOUR) - 1 else "Next ▶"
        self._size_next()
        self.leave.visible = True
        self.resume.visible = False
        self.caption.visible = True
        self._show_asks()  # what the step asks for changes with the step, not with every move of a lever
        self._take_keys()
        self.jump.value = self.index
        before = self.scenario.levers()
        step = TOUR[self.index]
        step.apply(self.scenario)  # the lab's watcher redraws the views and this caption
        if isinstance(step, LadderTourStep):  # a ladder step shows its rungs on the Ladder tab
            self.state.param.update(ladder=list(step.rungs), tab="Ladder")
        elif self.state.tab != "Roofline":  # the card reads the roofline: back from a ladder step ("Previous",
            # "Jump to step"), or from a tab the class was sent to look at ("Look at the Traffic tab")
            self.state.tab = "Roofline"
        self.state.tour_step = self.index + 1
        if self.scenario.levers() == before:
            # Two steps can share a scenario (Steps 1 and 2): no lever changed and
            # no watcher fired, so refresh the caption here.
            self.update(self.state.result)

    def stop(self) -> None:
        """Leave the tour; the scenario stays where the step left it, and a resume is offered."""
        self._running_parts()
        finished = self.index == len(TOUR) - 1
        self.finished = finished
        self.last_index = None if finished or self.index is None else self.index
        self.index = None
        self.caption.visible = False
        self.leave.visible = False
        self._show_strip()
        self._show_asks()
        self._take_keys()
        self.prev.disabled = True
        self.next.disabled = False
        self.next.label = "Start the tour ▶" if self.last_index is None else "Start again ▶"
        self._size_next()
        self.resume.visible = self.last_index is not None
        if self.last_index is not None:
            self.resume.label = f"Resume at step {self.last_index + 1} ▶"
        self.state.tour_step = None
        self.jump.value = -1

    def update(self, result: ScenarioResult) -> None:
        """Refill the current caption from ``result`` (it follows the controls)."""
        if self.index is None:
            return
        step = TOUR[self.index]
        title, text = step.render(result)
        moved = step.moved(self.state.scenario)
        # Moved off the step, its numbers follow the levers: the article's figures, which the note sets beside the
        # step's own, no longer apply, and a workload that no longer fits says so (a teacher's trial: B = 64 at step
        # 7 read "2,529 tokens/s" under "does not fit", with the article's batch-56 figure beside it).
        note = "" if moved else step.render_footnote(result)
        footnote = f'<div class="footnote">Note: {escape(note)}</div>' if note else ""
        if moved:
            footnote = (f'<div class="footnote" data-readout="tour-moved">You moved {escape("; ".join(moved))}: the '
                        "numbers above are yours, not the step's or the article's."
                        + (" It does not fit in memory: a rate is a ceiling if it fit." if not result.fits else "")
                        + "</div>")
        self.caption.object = (
            f'<div class="tour-card" data-step="{self.index + 1}"><h4>{escape(title)}</h4>'
            f'<div>{escape(text)}</div>{footnote}<div class="src">Step {self.index + 1} of {len(TOUR)} · '
            f"{escape(step.source)}</div></div>"
        )
        self.strip.object = strip_html(step.strip(result), self.index + 1)
        self._show_strip()


def strip_html(numbers: tuple[tuple[str, str], ...], step: int) -> str:
    """Present mode's strip: each ``(value, what it is)`` of :meth:`core.tour.TourStep.strip` as a large figure
    over its name; for a step that quotes no number an empty strip of the same height, so that where the strip
    takes a row of its own (1024 px) "Next" stays put from step 1 to step 2 (a trial's pointer missed it by 46 px)."""
    if not numbers:
        return f'<div class="tour-strip empty" data-strip-step="{step}" aria-hidden="true"></div>'
    cells = "".join(f'<div class="n"><b>{escape(value)}</b><span>{escape(label)}</span></div>'
                    for value, label in numbers)
    return (f'<div class="tour-strip" data-readout="tour-strip" data-strip-step="{step}" role="note" '
            f'aria-label="The numbers of step {step}">{cells}</div>')
