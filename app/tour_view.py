"""The guided tour panel: previous / next through :data:`core.tour.TOUR`.

A step sets the scenario (every lever) and shows a caption whose numbers are
filled from the live result; the class can leave the tour at any step and keep
exploring from there, or come back to it.
"""

from __future__ import annotations

from html import escape

import panel as pn
import param

from core.scenario import ScenarioResult
from core.tour import TOUR

from .state import LabState
from .style import STYLESHEET


class TourView(pn.viewable.Viewer):
    """Tour controls and caption for one session; the caption follows the session's result."""

    state = param.ClassSelector(class_=LabState, doc="The session state it follows.")

    def __init__(self, **params):
        super().__init__(**params)
        self.scenario = self.state.scenario
        self.index: int | None = None
        self.prev = pn.widgets.Button(label="◀ Previous", width=110, disabled=True, css_classes=["tour-prev"])
        self.next = pn.widgets.Button(label="Start the tour ▶", color="primary", width=150,
                                      css_classes=["tour-next"])
        self.leave = pn.widgets.Button(label="Leave the tour", width=130, visible=False, css_classes=["tour-leave"])
        self.caption = pn.pane.HTML("", stylesheets=[STYLESHEET], sizing_mode="stretch_width", visible=False)
        self.prev.on_click(lambda _e: self.go(self.index - 1))
        self.next.on_click(lambda _e: self._next())
        self.leave.on_click(lambda _e: self.stop())
        self.layout = pn.Column(
            pn.Row(pn.pane.Markdown("**Guided tour** — the articles' walk-through, step by step", margin=(8, 10)),
                   self.prev, self.next, self.leave),
            self.caption,
            sizing_mode="stretch_width",
        )

    def __panel__(self):
        return self.layout

    @param.depends("state.result", watch=True)
    def _on_result(self) -> None:
        self.update(self.state.result)

    def _next(self) -> None:
        if self.index is None:
            self.go(0)
        elif self.index == len(TOUR) - 1:
            self.stop()  # "Finish" on the last step
        else:
            self.go(self.index + 1)

    def go(self, index: int) -> None:
        """Show step ``index`` (0-based) and set the scenario to it."""
        self.index = max(0, min(index, len(TOUR) - 1))
        self.prev.disabled = self.index == 0
        self.next.label = "Finish ✓" if self.index == len(TOUR) - 1 else "Next ▶"
        self.leave.visible = True
        self.caption.visible = True
        before = self.scenario.levers()
        TOUR[self.index].apply(self.scenario)  # the lab's watcher redraws the views and this caption
        if self.scenario.levers() == before:
            # Two steps can share a scenario (Steps 1 and 2): no lever changed and
            # no watcher fired, so refresh the caption here.
            self.update(self.state.result)

    def stop(self) -> None:
        """Leave the tour; the scenario stays where the step left it."""
        self.index = None
        self.caption.visible = False
        self.leave.visible = False
        self.prev.disabled = True
        self.next.disabled = False
        self.next.label = "Start the tour ▶"

    def update(self, result: ScenarioResult) -> None:
        """Refill the current caption from ``result`` (it follows the controls)."""
        if self.index is None:
            return
        step = TOUR[self.index]
        title, text = step.render(result)
        self.caption.object = (
            f'<div class="tour-card" data-step="{self.index + 1}"><h4>{escape(title)}</h4>'
            f'<div>{escape(text)}</div><div class="src">Step {self.index + 1} of {len(TOUR)} · '
            f"{escape(step.source)}</div></div>"
        )
