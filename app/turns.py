"""Heavy session work taken one piece at a time, with the event loop every session shares free between two
(issue 31).

A tab's first build costs the event loop 50–300 ms (its Bokeh models, and Panel and Bokeh walking the page's
whole document when a layout changes).  A class told "open the Hardware tab" sends all its clicks at once; the
loop read them in one poll and ran every build back to back, so every other student's move waited for all of
them (1.4–5 s with ten).  :func:`take_turn` queues a session's build instead and runs one at a time, then leaves
the loop to the others for as long as that build took: a move, which needs a few turns of the loop (read,
evaluate, send), is answered between two builds, not after all of them.  The builds' own students wait longer
(at most twice the queue's work), and see Panel's busy spinner meanwhile.

The queue lives on the server's event loop (Tornado's ``IOLoop``, public API) and runs each piece as the
session's own next-tick callback (``Document.add_next_tick_callback``), with that session's document lock held.

A build that is itself too long for one turn is cut by whoever knows its parts: :func:`in_pieces` runs a piece of
work, and every piece that work hands to :func:`later` gets a turn of its own after it (a view's layout, then
its first section, then that section's charts).  Outside a server, or outside :func:`in_pieces`, :func:`later`
runs its work at once, so a notebook and the unit tests see the whole build when the call returns.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from contextvars import ContextVar

from tornado.ioloop import IOLoop

#: Seconds after which the queue goes on without a piece that never ran (its session closed before its turn:
#: Bokeh drops the callbacks of a destroyed session).
STALL_S = 2.0
#: The longest pause left between two pieces, whatever the last one cost.
MAX_GAP_S = 0.5
#: The pause after a piece, in multiples of what it took: the other sessions get at least half of the loop.
GAP_FACTOR = 1.0

_queue: deque = deque()
_state = {"running": False, "turn": 0}
#: The pieces handed to :func:`later` by the piece of :func:`in_pieces` now running (None outside one).
_handed: ContextVar[dict | None] = ContextVar("roofline_lab_later", default=None)


def later(work: Callable[[], None]) -> None:
    """Run ``work`` in a turn of its own after the piece of :func:`in_pieces` now running; at once outside one.

    A piece's later pieces run before any piece queued after it, in the order they were handed.
    """
    handed = _handed.get()
    if handed is None or not handed["open"]:  # a callback scheduled in a piece runs later with its context copied
        work()
    else:
        handed["pieces"].append(work)


def in_pieces(doc, work: Callable[[], None], done: Callable[[], None] | None = None) -> None:
    """Run ``work`` in ``doc``'s next turn (:func:`take_turn`), each piece it hands to :func:`later` in a later
    turn of its own (and theirs after them), then ``done``.

    ``doc`` is the session's Bokeh document; without one served (None, or no session context: a notebook, the
    unit tests) it all runs at once, before the call returns.  ``done`` runs after the last piece, or after the
    first one that raises (the error then propagates, and the pieces still queued are dropped).
    """
    if doc is None or doc.session_context is None:
        try:
            work()
        finally:
            if done is not None:
                done()
        return
    queue: deque = deque([work])

    def step() -> None:
        handed: dict = {"open": True, "pieces": []}
        token = _handed.set(handed)
        try:
            queue.popleft()()
        except BaseException:
            queue.clear()
            if done is not None:
                done()
            raise
        finally:
            handed["open"] = False
            _handed.reset(token)
        queue.extendleft(reversed(handed["pieces"]))
        if queue:
            take_turn(doc, step)
        elif done is not None:
            done()

    take_turn(doc, step)


def take_turn(doc, work: Callable[[], None]) -> None:
    """Run ``work`` as ``doc``'s next-tick callback once the pieces queued before it have run, one at a time,
    with the event loop left to the other sessions after each for as long as it took (at most MAX_GAP_S).

    Call on the event loop (from a session's callback).  ``work`` of a session closed before its turn is dropped.
    """
    _queue.append((doc, work))
    if not _state["running"]:
        _state["running"] = True
        IOLoop.current().add_callback(_next)


def pending() -> int:
    """Pieces queued and not yet handed to their session."""
    return len(_queue)


def _next() -> None:
    """Hand the oldest piece to its session; when it has run, wait as long as it took, then hand the next."""
    loop = IOLoop.current()
    while _queue:
        doc, work = _queue.popleft()
        _state["turn"] += 1
        turn = _state["turn"]

        def run(work=work, turn=turn) -> None:
            start = time.perf_counter()
            try:
                work()
            finally:
                if _state["turn"] == turn:  # not already given up on (STALL_S)
                    _state["turn"] += 1
                    loop.call_later(min(GAP_FACTOR * (time.perf_counter() - start), MAX_GAP_S), _next)

        try:
            doc.add_next_tick_callback(run)
        except Exception:  # noqa: BLE001, S112 - a session closed meanwhile: nothing to run, take the next
            continue
        loop.call_later(STALL_S, lambda turn=turn: _state["turn"] == turn and _resume())
        return
    _state["running"] = False


def _resume() -> None:
    """A piece never ran within STALL_S (its session closed): go on with the next."""
    _state["turn"] += 1
    _next()
