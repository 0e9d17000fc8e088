"""The lab uses Bokeh, Panel and param through their public API: running ``app/main.py`` as ``panel serve`` does
replaces nothing of theirs (no function, class, method or module constant is swapped for the lab's own)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

import pytest
from panel.io.session import generate_session

LIBRARIES = ("bokeh", "panel", "param", "tornado")
APP = Path(__file__).resolve().parents[2] / "app"


def _code_like(value) -> bool:
    """What a patch replaces: functions, classes, methods and the descriptors that wrap them."""
    return inspect.isroutine(value) or isinstance(value, (type, property, staticmethod, classmethod))


def snapshot() -> dict[tuple[str, str], int]:
    """Identity of every function, class and UPPER_CASE constant of the libraries' loaded modules, and of every
    function, method and descriptor their classes define."""
    seen = {}
    for name, module in list(sys.modules.items()):
        if module is None or name.split(".")[0] not in LIBRARIES:
            continue
        for key, value in list(vars(module).items()):
            if _code_like(value) or key.isupper():
                seen[(name, key)] = id(value)
            if isinstance(value, type) and value.__module__ == name:
                for attr, member in list(vars(value).items()):
                    if _code_like(member):
                        seen[(name, f"{key}.{attr}")] = id(member)
    return seen


@pytest.fixture(scope="module")
def before_and_after(served_application):
    for info in pkgutil.iter_modules([str(APP)]):  # the app's imports of the libraries, loaded first
        if info.name not in ("main", "__main__"):
            importlib.import_module(f"app.{info.name}")
    before = snapshot()
    doc = generate_session(served_application).document  # app/main.py, run for a session as the server runs it
    return before, snapshot(), doc


def test_running_the_app_replaces_nothing_of_bokeh_panel_param_or_tornado(before_and_after):
    before, after, doc = before_and_after
    assert doc.get_model_by_name("workload") is not None  # the lab was built
    assert len(before) > 10_000  # the libraries' modules were read, not an empty snapshot
    changed = sorted(f"{module}.{name}" for (module, name), ident in before.items()
                     if after.get((module, name), ident) != ident)
    assert changed == []


def test_key_internals_are_the_libraries_own(before_and_after):
    """Bokeh's property machinery and Panel's model building (what a speed patch would replace) and Panel's
    stylesheet fallback URL are the libraries' own after a session was built."""
    from bokeh.core.has_props import HasProps
    from bokeh.core.property.descriptors import PropertyDescriptor
    from bokeh.model import util as model_util
    from panel import reactive
    from panel.io import resources
    from panel.pane.base import PaneBase

    for owner, attr in ((HasProps, "__init__"), (HasProps, "themed_values"),
                        (HasProps, "query_properties_with_values"), (PropertyDescriptor, "_get_default"),
                        (PropertyDescriptor, "__set__"), (PaneBase, "__init__"),
                        (reactive.Syncable, "_init_params"), (reactive.ReactiveHTML, "_init_params")):
        function = vars(owner)[attr]
        assert function.__module__ == owner.__module__, (owner, attr, function.__module__)
    assert model_util.visit_value_and_its_immediate_references.__module__ == "bokeh.model.util"
    assert reactive.jinja2 is sys.modules["jinja2"]
    assert reactive.CDN_DIST == resources.CDN_DIST and reactive.CDN_DIST.startswith("https://cdn.holoviz.org/")
