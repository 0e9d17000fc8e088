"""Entry point for ``panel serve app`` (served at ``/app``)."""

import panel as pn

from app.lab import create_app

# The bring-your-own tab is built on first open; its file droppers' scripts load with the page.
pn.extension("filedropper")

create_app().servable(title="Roofline Lab")
