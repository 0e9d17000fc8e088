"""What a served session lets go of when it ends: a workaround for a Panel bug that loses memory.

The page's notification area (the connection notices, ``app/notifications.py``) outlives its session in one of
Panel's process-wide registries unless told, and kept every closed session whole (its ``Lab``, views and Bokeh
models: ~2 MB per closed session in the 200-session soak; ``tests/unit/test_session_end.py`` ends sessions as
Bokeh's server does and checks that nothing is left).  Panel's document teardown
(``panel.io.document._destroy_document``) drops the document from ``pn.state``'s per-document tables *before* the
session-end hooks run, so ``pn.state._destroy_session`` no longer finds the area and never removes its entry from
``pn.state._views``; that entry holds the document, and the document's pending callbacks hold the session's
components.  An upstream bug, checked on the versions in :data:`CHECKED_ON` (a test fails when the installed ones
differ, so an upgrade re-checks whether the workaround is still needed; holoviz/panel#8605, another
``pn.state._views`` leak, is fixed in 1.9.4 and is not this one).

The page registers no Panel browser callback (``widget.jscallback``): Panel keeps those in a process-wide registry
keyed by the source widget, which a callback naming the page's other widgets kept alive, and with its session
(the test checks that none is registered).

And the garbage a closed session leaves is collected soon (:func:`collect_closed_sessions`), not when Python's
raised GC thresholds next come round (:func:`collect_garbage_for_a_class`).
"""

from __future__ import annotations

import gc
import os
import time

import panel as pn

#: The Panel and Bokeh releases on which the leak was reproduced and the workaround checked.
CHECKED_ON = {"panel": "1.9.4", "bokeh": "3.9.2"}


def _on_session_end(callback) -> bool:
    """Run ``callback(session_context)`` when the served session being built ends; False outside a server."""
    doc = pn.state.curdoc
    if doc is None or doc.session_context is None:
        return False
    doc.on_session_destroyed(callback)
    return True


def release_notification_area() -> None:
    """Workaround (Panel :data:`CHECKED_ON`, the leak above): take this session's notification area out of
    ``pn.state._views`` when the session ends.

    Calls the area's own teardown (``Renderable._server_destroy``, what ``pn.state._destroy_session`` means to
    call): it removes the area's root model for this document and its ``_views`` entry, and does nothing if
    Panel already did.  No-op outside a served session or without a notification area.
    """
    area = pn.state.notifications if pn.state.curdoc is not None else None
    if area is not None:
        _on_session_end(area._server_destroy)


#: The served process's cyclic-GC thresholds (generation-0 allocations, then collections of 0 and of 1).
#: Generation 0 at 5,000 (not Python's 700) keeps the collector from rescanning a class's young objects on every
#: few allocations; not higher, since generation 1 then holds ten times as many and each of its collections held
#: every session's updates 80–130 ms during a paste storm (20–27 ms at 5,000; ``docs/benchmarks.md``).  Full
#: collections wait for 1,000 of generation 1: the garbage a class leaves is closed sessions, collected when they
#: end (:func:`collect_closed_sessions`), and a full collection with thirty sessions open holds the loop 350–550 ms.
GC_THRESHOLDS = (5_000, 10, 1_000)
#: The least time between two full garbage collections run because a session ended (seconds).
COLLECT_EVERY_S = 2.0
#: The most of the server's time those collections may take: after one that took ``d`` seconds, the next
#: waits at least ``d / MAX_GC_SHARE`` (a full collection took 31–47 ms with one session open and 808–840 ms
#: with a hundred, in process on the 2-core machine, 2026-12-01; it holds every session's updates while it runs).
MAX_GC_SHARE = 0.1
_next_collect = [float("-inf")]
#: The name under which Panel schedules its collection after a document ends (``panel.io.document``).
PANEL_GC_TASK = "gc.collect"
#: The clock the interval is measured on (seconds; a test replaces it, not ``time.monotonic`` for everyone).
_clock = time.monotonic


def collect_closed_sessions(_session_context=None) -> bool:
    """Run a full cyclic garbage collection, unless the last one run for this reason was too recent.

    A closed session is mostly cyclic garbage, long-lived by the time it ends (the oldest generation).  The
    served process raises the collector's thresholds (:func:`collect_garbage_for_a_class`), and Panel's own
    collection after a session ends is debounced until the server has been quiet for 5 s, which never happens
    while sessions keep coming and going: the 200-session soak then kept 1.3–1.7 MB per closed session.  So a
    session's end collects, at most once per :data:`COLLECT_EVERY_S` whichever session ends, and never more
    than :data:`MAX_GC_SHARE` of the server's time: a full collection's cost grows with the sessions still
    open (about 40 ms with one, 0.8 s with a hundred: :data:`MAX_GC_SHARE`), and while it runs every open
    session's updates wait.  With a hundred students, a reload mid-class then stalls the others ~0.8 s at most
    every ~8 s, not every 2 s; the garbage waiting meanwhile is the few sessions closed in between.

    Returns:
        True if it collected.
    """
    started = _clock()
    if started < _next_collect[0]:
        return False
    gc.collect()
    # Panel schedules its own full collection 5 s after a document ends; after this one it would find nothing
    # new, and stall every open session a second time (~0.5 s with fifty open: a load test's gc callbacks, 12-01).
    # A document ending later schedules it again.
    if f"{os.getpid()}_{PANEL_GC_TASK}" in pn.state._scheduled:  # Panel's key; it offers cancelling, not listing
        pn.state.cancel_task(PANEL_GC_TASK)
    took = _clock() - started
    _next_collect[0] = started + max(COLLECT_EVERY_S, took / MAX_GC_SHARE)
    return True


def collect_garbage_for_a_class() -> None:
    """Give the served process its GC thresholds, and have the session being built collect when it ends.

    A class is a hundred sessions alive at once, ~4 MB of Python objects each.  With Python's default
    thresholds (700, 10, 10) the cyclic collector rescans them all again and again while the next sessions are
    built: ~34 ms of a ~245 ms session build with 60 sessions open; 9–11 ms with :data:`GC_THRESHOLDS` or
    (20,000, 10, 10) with 40 open, whose longest pauses were 17 and 75 ms (gc callbacks, in process, A/B).
    Closed sessions do not wait for those thresholds: :func:`collect_closed_sessions` runs when a session ends
    (the soak checks the memory comes back).
    """
    gc.set_threshold(*GC_THRESHOLDS)
    _on_session_end(collect_closed_sessions)

