"""A message pane made when it first has something to say.

Most sessions never see the opening link's notices, a scenario that could not be
evaluated, or a pin's message: each would otherwise be a hidden pane (a Panel object
and a Bokeh model or two) built, serialised and sent with every session's first page.
A :class:`Message` makes its pane on the first non-empty text and hands it to
``place``, which puts it where the page shows it; the page's own arrangement lists
:meth:`Message.shown` where the pane belongs, so a re-arranged page keeps it.
"""

from __future__ import annotations

from collections.abc import Callable

import panel as pn


class Message:
    """An HTML message made on first use.

    Args:
        make: makes the pane (an ``HTML`` or ``Alert`` pane, say), called once, on the first non-empty text.

    Attributes:
        pane: the pane, or None until the first message.
        place: called with the new pane once it is made (None: the page's arrangement will list it).
    """

    def __init__(self, make: Callable[[], pn.pane.Markdown | pn.pane.HTML]):
        self._make = make
        self.pane: pn.pane.Markdown | pn.pane.HTML | None = None
        self.place: Callable[[pn.viewable.Viewable], None] | None = None

    @property
    def text(self) -> str:
        """What the message says now ("" when nothing, or nothing yet)."""
        return "" if self.pane is None else self.pane.object

    @property
    def visible(self) -> bool:
        return self.pane is not None and self.pane.visible

    def say(self, html: str) -> None:
        """Show ``html`` (markup as given: escape what a user wrote); "" hides the message."""
        if self.pane is None:
            if not html:
                return
            self.pane = self._make()
            self.pane.param.update(object=html, visible=True)
            if self.place is not None:
                self.place(self.pane)
            return
        self.pane.param.update(object=html, visible=bool(html))

    def shown(self) -> list[pn.viewable.Viewable]:
        """The pane where a layout lists it: ``[pane]`` once made, else nothing."""
        return [] if self.pane is None else [self.pane]
