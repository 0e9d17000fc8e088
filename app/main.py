"""Entry point for ``panel serve app`` (served at ``/app``)."""

from app.lab import create_app
from app.notifications import enable_connection_notices

enable_connection_notices()
create_app().servable(title="Roofline Lab")
