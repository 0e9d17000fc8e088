"""Entry point for ``panel serve app`` (served at ``/app``)."""

import warnings

import panel as pn
from bokeh.settings import settings
from bokeh.util.warnings import BokehUserWarning
from panel.io.resources import LOCAL_DIST

from app import log_hygiene, session_end
from app.lab import create_app
from app.notifications import CONNECTION_NOTICES, style_notices

# The bring-your-own tab is built on first open; its file droppers' scripts load with the page,
# as does the notification library for the connection notices (app/notifications.py).  The lab reads nothing
# of the browser's (pn.state.browser_info): no model for it in every session.
pn.extension("filedropper", browser_info=False, **CONNECTION_NOTICES)

# Bokeh checks every new session's document for integrity: ~60 ms of a ~500 ms
# session build (`python benchmarks/load_test.py --profile`).  The lab's
# documents are built the same way for every session, and
# tests/unit/test_served_session.py runs that check on them, so served sessions skip it.
settings.perform_document_validation.set_value(False)
# Bokeh's documented lever for the same trade (``BOKEH_PERFORM_ERROR_DIAGNOSTICS``): the signature of each of
# the ~280 callbacks Panel registers on a session's models is inspected, ~45 ms of a ~350 ms session build
# (timed around Bokeh's check, 5 builds).  The unit tests build the same views with it on (``Lab()`` in
# process).  Property validation, the other large cost, stays on: with it off Bokeh also skips the conversions
# some properties accept, and the browser got models with unset names.
settings.perform_error_diagnostics.set_value(False)
# Two settings Bokeh reads for every model it makes or serialises (``simple_ids`` for each id,
# ``serialize_include_defaults`` for each model sent) look for their environment variable on every read: ~900
# lookups a session, ~3 ms of ~104 (A/B in one process, 8 × 3 builds).  Each is read once here, the environment
# and Bokeh's config files included as usual, and that value kept for the process.
for _setting in (settings.simple_ids, settings.serialize_include_defaults):
    _setting.set_value(_setting())
# A click on a button of a tab opened after the page loaded (the Pins tab's preset, say) arrives with the button's
# whole model, which the server already has: Bokeh keeps its own and warns "reference already known" in the log
# of every such click.  Panel silences the same warning where it knows it (panel/config.py, VS Code notebooks).
warnings.filterwarnings("ignore", category=BokehUserWarning, message="reference already known")
# A crafted link's unreadable query value is quoted by Panel's log line in full: cut (app/log_hygiene.py).
log_hygiene.install()
# A class's sessions are not rescanned by the cyclic GC again and again; a closed one's garbage is collected soon.
session_end.collect_garbage_for_a_class()


def _serve_stylesheets_locally(doc) -> None:
    """Point the session's stylesheets at this server, as Panel does for a page it renders itself.

    Panel writes its components' stylesheet URLs for its CDN and rewrites them to the
    server's own copies when the page's GET renders the session.  With
    ``--reuse-sessions`` (the class setting) the session a browser talks to is built
    when its websocket connects, not by a GET, and Panel 1.9 skips that rewrite: every
    stylesheet then came from cdn.holoviz.org, and on a network without internet the page
    lost its button, markdown and file-drop styles.  Panel gives every model it builds
    for a document whose template variables name the server's ``dist_url`` a local URL
    (the variable Panel's own page render sets), so recording it before the lab is built,
    through Bokeh's public ``Document.template_variables``, is enough
    (tests/browser/test_no_network_browser.py serves with and without the flag and checks that no
    request leaves the server).
    """
    if doc is None or doc.session_context is None or "dist_url" in doc.template_variables:
        return
    doc.template_variables["dist_url"] = f"{pn.state.rel_path}/{LOCAL_DIST}" if pn.state.rel_path else LOCAL_DIST


_serve_stylesheets_locally(pn.state.curdoc)
style_notices()
session_end.release_notification_area()  # Panel 1.9 would keep it, and with it the whole session (app/session_end.py)
create_app().servable(title="Roofline Lab")
