"""Entry point for ``panel serve app`` (served at ``/app``)."""

import panel as pn
from bokeh.settings import settings

from app.lab import create_app
from app.notifications import CONNECTION_NOTICES, style_notices

# The bring-your-own tab is built on first open; its file droppers' scripts load with the page,
# as does the notification library for the connection notices (app/notifications.py).
pn.extension("filedropper", **CONNECTION_NOTICES)

# Bokeh checks every new session's document for integrity: ~60 ms of a ~500 ms
# session build (`python benchmarks/load_test.py --profile`).  The lab's
# documents are built the same way for every session, and
# tests/test_served_session.py runs that check on them, so served sessions skip it.
settings.perform_document_validation.set_value(False)
style_notices()
create_app().servable(title="Roofline Lab")
