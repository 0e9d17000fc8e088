"""Entry point for ``panel serve app`` (served at ``/app``)."""

from app.lab import create_app

create_app().servable(title="Roofline Lab")
