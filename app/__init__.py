"""Roofline Lab's Panel dashboard: views that read :class:`core.Scenario`."""

from .lab import create_app

__all__ = ["create_app"]
