"""A served session's objects are released when the session ends (app/session_end.py).

The sessions are built with Panel's own session generator and ended the way Bokeh's server ends
them (``ApplicationContext._discard_session``): the document is destroyed, then the application's
``on_session_destroyed`` runs the document's session-end callbacks through the
``DocumentLifecycleHandler`` the server adds to every application.
"""

from __future__ import annotations

import asyncio
import gc
import weakref
from pathlib import Path

import panel as pn
import pytest
from bokeh.application.handlers.document_lifecycle import DocumentLifecycleHandler
from bokeh.command.util import build_single_handler_application
from bokeh.settings import settings
from panel.io.session import generate_session
from panel.links import Callback

from app import bokeh_speedups
from app.lab import Lab
from app.state import TABS

APP = Path(__file__).resolve().parents[1] / "app"


@pytest.fixture(scope="module")
def application():
    """The served application as Bokeh's server runs it; main.py's process-wide settings are put back."""
    app = build_single_handler_application(str(APP))
    app.add(DocumentLifecycleHandler())  # what bokeh.server.tornado.BokehTornado adds to every application
    yield app
    settings.perform_document_validation.unset_value()
    settings.perform_error_diagnostics.unset_value()
    bokeh_speedups.uninstall()
    pn.config.param.update(disconnect_notification="Server connection lost.", ready_notification="",
                           notifications=False)


def live_labs() -> set[int]:
    gc.collect()
    return {id(o) for o in gc.get_objects() if isinstance(o, Lab)}


def end(application, doc) -> None:
    """End the session as Bokeh's server does when its browser has gone."""
    context = doc.session_context
    doc.destroy(None)
    asyncio.run(application.on_session_destroyed(context))


def test_a_closed_session_leaves_nothing_behind(application):
    before = live_labs()
    doc = generate_session(application).document
    labs = [weakref.ref(o) for o in gc.get_objects() if isinstance(o, Lab) and id(o) not in before]
    assert len(labs) == 1
    lab = labs[0]()
    # A session that did things: every tab opened (each view joins the document), a lever moved, a pin.
    for name in TABS:
        lab.state.tab = name
    lab.scenario.param.update(batch=16, weight_dtype="int4")
    lab.pin_current()
    sliders = [w for w in lab.instant.widgets.values() if w in Callback.registry]
    assert len(sliders) >= 2  # the browser's instant redraw is wired (each lever names the others)
    doc.to_json()
    del lab, sliders
    end(application, doc)
    del doc
    gc.collect()
    assert labs[0]() is None, "the closed session's Lab is still alive"


def test_sessions_do_not_accumulate(application):
    # Panel's registry of browser callbacks is process-wide: ending one session must not unhook another's.
    before = live_labs()
    docs = [generate_session(application).document for _ in range(3)]
    assert len(live_labs() - before) == 3
    end(application, docs.pop(0))
    assert len(live_labs() - before) == 2
    survivors = [o for o in gc.get_objects() if isinstance(o, Lab) and id(o) not in before]
    wired = [w for lab in survivors for name, w in lab.instant.widgets.items() if name in ("batch", "spec_k")]
    assert len(wired) == 4 and all(w in Callback.registry for w in wired)  # still redrawn in their browsers
    del survivors, wired
    while docs:
        end(application, docs.pop())
    assert live_labs() - before == set()
