"""Entry point for ``panel serve app`` (served at ``/app``)."""

from bokeh.settings import settings

from app.lab import create_app
from app.notifications import enable_connection_notices

# Bokeh checks every new session's document for integrity: ~60 ms of a ~500 ms
# session build (`python benchmarks/load_test.py --profile`).  The lab's
# documents are built the same way for every session, and
# tests/test_served_session.py runs that check on them, so served sessions skip it.
settings.perform_document_validation.set_value(False)
enable_connection_notices()
create_app().servable(title="Roofline Lab")
