"""The examples in the docstrings (``>>>``) of core and app are run: an example that no longer holds misleads a
reader of the function more than no example."""

import doctest
import importlib
import pkgutil

import pytest

import app
import core

# ``__main__`` runs the CLI or writes a page when imported; ``app.main`` builds a page and sets Bokeh's settings
# for the server's process.
MODULES = [m.name for package in (core, app) for m in pkgutil.iter_modules(package.__path__, package.__name__ + ".")
           if not m.name.endswith("__main__") and m.name != "app.main"]


@pytest.mark.parametrize("name", MODULES)
def test_every_docstring_example_holds(name):
    module = importlib.import_module(name)
    failed, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, report=False)
    assert failed == 0, f"{name}: {failed} docstring example(s) do not hold (python -m doctest -v on its file)"
