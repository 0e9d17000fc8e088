"""Sixteen speed-ups of Bokeh's property bookkeeping and Panel's model building, for served sessions.

A served session of the lab builds ~270 Bokeh models.  Profiled
(``python benchmarks/load_test.py --profile``), most of its CPU went to reading
property *defaults*, not to the lab: Bokeh recomputes and re-validates the
default of an unset property on every read, walks every property of every model
several times per session (``references()``: when Panel links callbacks, when a
root is added, when the document is frozen), and, when it serialises a model,
reads every property, defaults included, before it drops those it does not
send.  Each patch below leaves what Bokeh computes unchanged and does less work
to get it:

1. ``HasProps.query_properties_with_values(include_defaults=False)`` (the
   serialiser's query) skips the properties it is about to drop before reading
   them.  Bokeh's comment in that function says it reads first only to find
   unset properties; the lab sets every required one (``check_integrity`` and the
   tests below serialise every served document).  Reading them also
   materialised every mutable default (~1 MB of property wrappers per session).
2. ``HasProps._overridden_defaults`` (a merge of the class's MRO, per read) is
   cached per class; it is fixed when the class is made.
3. ``PropertyDescriptor._get_default`` remembers an *immutable* default (None,
   a bool, a number or a string) per property and model class, for a model with
   no theme value for it: Bokeh's own rule for a stable default
   (``has_unstable_default`` false) decides what may be kept, and mutable or
   generated defaults (lists, dicts, models) take Bokeh's path every time.
4. ``Dict.validate`` formats its error message (the property's whole type, e.g.
   ``Dict(String, List(Instance(Callback)))``) before it knows whether there is
   an error: ~6 % of a session, on every model's callback dicts.  A valid dict
   now returns first; an invalid one goes to Bokeh's own code for its message.
5. ``HasProps.__init__`` creates every mutable default of a new model at once (an
   empty list or dict, wrapped to notify the model of changes): ~5,000 wrappers, 1.1 MB
   and ~35 ms per session, most never read.  A list, dict or set property whose default
   is empty (and that neither the class nor a theme overrides) now gets its default
   when first read, by Bokeh's own ``_get``, which stores and wraps it as before
   (an unchanged one is not serialised either way).
6. ``bokeh.model.util.visit_immediate_value_references`` (the ``references()`` walk)
   reads every property that may hold a model; it now skips such a property that was
   never set nor read and whose default is one of those empty containers: it holds no
   model, and reading it would create it (5).  It also reads a set value, or a default
   already made, from the dicts Bokeh's getter reads them from, and skips an unset
   property whose default is None, a number or a string, instead of going through the
   getter for each (~14 ms of walks a session, five walks of ~270 models: −8 ms, A/B in
   one process, 8 × 3 builds).  ``tests/test_bokeh_speedups.py`` compares every served
   document's references with Bokeh's own walk.

7. Panel's ``Syncable._init_params`` (every component, when its model is made) asks for
   ``_synced_params``, a list built from all the component's parameters, once per
   parameter: quadratic in ~35 parameters.  It is now built once per call.
8. Panel's ``ReactiveHTML._init_params`` (``FlexBox``) reads each parameter's object
   through ``self.param[name]``, which makes a per-instance copy of every parameter
   (param's per-instance parameters, ~27 copies per ``FlexBox``); it now reads the
   object param would give without making one (``param.objects(instance="existing")``); the template text
   and scripts it sends are escaped once per text, one string shared by every session.
9. Panel's ``ReactiveHTML._get_template`` compiles its Jinja template for every
   component, from the same few template texts: the compiled template is now kept
   per text (a compiled Jinja template renders any number of contexts).
10. ``HasProps.themed_values`` (read on every default a model looks up: ~10,000 times a session) is
   ``getattr(self, "__themed_values__", None)``; a model without a theme value has no such attribute, so each
   read fell through to ``HasProps.__getattr__`` and raised and caught an ``AttributeError``: ~10 ms of a
   ~113 ms session (A/B in one process, 8 × 3 builds each).  Bokeh stores the dict in the instance's
   ``__dict__`` (``apply_theme``), where it is now read directly.
11. ``PropertyDescriptor.has_unstable_default(obj)`` (asked for every property of every new model, and for
   defaults: ~3,800 times a session) walks the property's type parameters each time; its answer depends only on
   the property and the model's class (the default and the class's overridden defaults, both fixed when the class
   is made), and is now kept per property and class: −10 ms of ~98 ms per session (A/B in one process, 8 × 3
   builds each).
12. ``Property.prepare_value`` validates every value set on a model (~2,700 a session, ~11 ms): the same
   strings, numbers and short lists of strings again and again (sizing modes, CSS classes, colours, labels).
   A value a property has accepted is remembered on that property (type and value; strings up to 100
   characters, lists of up to 16 such strings, at most 256 values per property, so a client sending text
   cannot grow it) and not validated again; everything else Bokeh's ``prepare_value`` does (conversion of
   a value it refuses, transforms, assertions, wrapping) is unchanged: −4.7 ms per session (A/B in one
   process, 8 × 3 builds each).
13. ``bokeh.model.util.visit_value_and_its_immediate_references`` (the other half of the ``references()``
   walk: a value, and the lists, tuples and dicts in it) imported ``Model`` on every call and called itself for
   every string and number in a list or dict (~1,900 calls per walk of the page).  It now returns at once for
   None and bools as well as numbers and strings (none can hold a model) and does not call itself for them:
   −6 ms per session (A/B in one process, 8 × 3 builds each).
14. Panel's ``PaneBase.__init__`` makes every pane a ``layout`` (a ``Row`` holding the pane, read when the pane
   is rendered on its own or unpacked by ``pn.panel``) and watches the pane's ~20 layout parameters to keep it in
   step: a page's thirteen panes all sit in layouts of their own and never read it.  The row, and its watcher,
   are now made when ``layout`` is first read, from the same arguments: −3.5 ms per session (A/B in one
   process, 8 × 3 builds each).
15. ``PropertyDescriptor.__set__`` reads the old value to compare with the new one.  For a list, dict or set
   property whose empty default patch 5 left unmade, that read made it (a wrapper registered to the model);
   when the new value was equal (Panel gives most of its models ``tags=[]``, ``styles={}``,
   ``css_classes=[]``) nothing was set and the made default stayed, never sent: ~220 containers a session.
   The comparison is now against a plain empty container of the default's type (what the read would have
   made, unwrapped); a themed or already made value takes Bokeh's path: −140 KB of Python allocations kept
   per session (1,858 → 1,717 KB, tracemalloc, 10 sessions), ~1 ms.
16. Bokeh's ``PropertyValueContainer`` (every list and dict a model holds, ~500 a session) keeps the models
   owning it in a set: 216 bytes for the one owner nearly every container has.  They are now kept in a tuple
   (registering an owner twice still adds it once; a mutation tells each owner once): −50 KB per session
   (1,717 → 1,666 KB).  The three methods go in together or not at all (one digest, of the class).

Measured in process (5-10 session builds each, the 2-core development machine):
~390 → ~270 ms CPU per session, and ``Document.to_json()`` ~114 → ~28 ms (1–4); 5 and 6:
~205 → ~160 ms per session and 3.36 → 2.27 MB of Python allocations kept per session (tracemalloc, 2026-12-01);
10–13 (with two Bokeh settings read once, ``app/main.py``): ~119 → ~82 ms per session, and 138 → 94–103 ms of
server CPU per session in the load test (``benchmarks/load_test.py``, 100 students, 2026-12-01, 2 × AMD EPYC);
14–16 (with the session frozen out of the young GC generations, ``app/session_end.py``): 89–92 → 76–82 ms per
session with 100 kept open, 1,858 → 1,666 KB kept per session, and 89–93 ms of server CPU and 1.84–1.94 MB of RSS
per session in the load test.

Each patch is installed only if the function it replaces is, character for
character, the one it was written against (a hash of its source, Bokeh 3.9.2 and Panel 1.9.4):
another version keeps its own code, slower and correct.  ``tests/test_bokeh_speedups.py``
builds served documents with and without the patches and compares the JSON the
browser receives.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import logging
import textwrap
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from html import escape
from typing import Any, NamedTuple

import bokeh.model.util as model_util
import jinja2
import param
from bokeh.core.has_props import HasProps
from bokeh.core.property.bases import Property, validation_on
from bokeh.core.property.container import Dict
from bokeh.core.property.descriptors import PropertyDescriptor
from bokeh.core.property.singletons import Intrinsic, Undefined
from bokeh.core.property.wrappers import PropertyValueContainer
from bokeh.model import Model
from panel import reactive as panel_reactive
from panel.pane.base import PaneBase
from panel.reactive import Reactive, ReactiveHTML, Syncable
from panel.util import HTML_SANITIZER
from panel.viewable import Layoutable, Viewable

log = logging.getLogger(__name__)

#: Default values that can be shared between models without copying: immutable (patch 3).  The same types are
#: the values patch 12 remembers and those patch 13's walk does not look into (none can hold a model).
_IMMUTABLE = frozenset({type(None), bool, int, float, str})
_MISSING = object()


def _fast_query_properties_with_values(self: HasProps, query: Callable[[Any], bool], *,
                                       include_defaults: bool = True, include_undefined: bool = False) -> dict:
    """Bokeh's ``query_properties_with_values`` with the unselected properties skipped before they are read."""
    if include_defaults or include_undefined:
        return _ORIGINALS["query_properties_with_values"](self, query, include_defaults=include_defaults,
                                                          include_undefined=include_undefined)
    themed = self.themed_values() or {}
    selected = set(self._property_values) | set(self._unstable_default_values) | set(themed)
    result: dict[str, Any] = {}
    for key in self.properties(_with_props=True):
        if key not in selected:
            continue
        descriptor = self.lookup(key)
        if not query(descriptor):
            continue
        value = descriptor.get_value(self)
        if key not in themed and isinstance(value, PropertyValueContainer) and key in self._unstable_default_values:
            continue
        result[key] = value
    return result


#: (descriptor, model class) -> its immutable default (patch 3).
_STABLE_DEFAULTS: dict[tuple[PropertyDescriptor, type], Any] = {}


def _cached_get_default(self: PropertyDescriptor, obj: HasProps) -> Any:
    """Bokeh's ``_get_default``, remembering an immutable, unthemed default per property and class."""
    themed = obj.themed_values()
    plain = themed is None or self.name not in themed
    if plain:
        value = _STABLE_DEFAULTS.get((self, obj.__class__), _MISSING)
        if value is not _MISSING:
            return value
    value = _ORIGINALS["_get_default"](self, obj)
    if plain and type(value) in _IMMUTABLE and not self.has_unstable_default(obj):
        _STABLE_DEFAULTS[(self, obj.__class__)] = value
    return value


def _themed_values_from_dict(self: HasProps) -> dict[str, Any] | None:
    """Bokeh's ``HasProps.themed_values`` without raising for a model that has none (patch 10)."""
    return self.__dict__.get("__themed_values__")


#: (descriptor, model class) -> Bokeh's has_unstable_default (patch 11).
_UNSTABLE: dict[tuple[PropertyDescriptor, type], bool] = {}


def _cached_has_unstable_default(self: PropertyDescriptor, obj: HasProps) -> bool:
    """Bokeh's ``PropertyDescriptor.has_unstable_default``, kept per property and model class (patch 11)."""
    key = (self, obj.__class__)
    answer = _UNSTABLE.get(key)
    if answer is None:
        answer = _UNSTABLE[key] = _ORIGINALS["has_unstable_default"](self, obj)
    return answer


#: Values a property has accepted (patch 12): kept on the property, as this attribute, at most this many.
_ACCEPTED_ATTR, _ACCEPTED_MAX = "_roofline_lab_accepted", 256
#: The properties holding such a set (to forget them on uninstall).
_ACCEPTING: list[Property] = []


def _accepted_key(value: Any) -> tuple | None:
    """What patch 12 remembers a value by: a short string, a number, a bool, None, or a short list of short
    strings; None for anything else (validated every time)."""
    typ = type(value)
    if typ in _IMMUTABLE:
        return (typ, value) if typ is not str or len(value) <= 100 else None
    if typ is list and len(value) <= 16 and all(type(v) is str and len(v) <= 100 for v in value):
        return (typ, tuple(value))
    return None


def _prepare_value_once_valid(self: Property, owner: HasProps | type[HasProps], name: str, value: Any, *,
                              hint: Any = None) -> Any:
    """Bokeh's ``Property.prepare_value``, skipping the validation of a value this property accepted before."""
    if value is Intrinsic:
        value = self._raw_default()
    if value is Undefined:
        return value

    error = None
    key = _accepted_key(value) if hint is None else None
    accepted = self.__dict__.get(_ACCEPTED_ATTR)
    if key is None or accepted is None or key not in accepted:
        try:
            if validation_on():
                hinted_value = self._hinted_value(value, hint)
                self.validate(hinted_value)
                if key is not None:
                    if accepted is None:
                        accepted = self.__dict__[_ACCEPTED_ATTR] = set()
                        _ACCEPTING.append(self)
                    if len(accepted) < _ACCEPTED_MAX:
                        accepted.add(key)
        except ValueError as e:
            for tp, converter in self.alternatives:
                if tp.is_valid(value):
                    value = converter(value)
                    break
            else:
                error = e

    if error is None:
        value = self.transform(value)
    else:
        obj_repr = owner if isinstance(owner, HasProps) else owner.__name__
        raise ValueError(f"failed to validate {obj_repr}.{name}: {error}")

    if isinstance(owner, HasProps):
        obj = owner

        for fn, msg_or_fn in self.assertions:
            if isinstance(fn, bool):
                result = fn
            else:
                result = fn(obj, value)

            assert isinstance(result, bool)

            if not result:
                if isinstance(msg_or_fn, str):
                    raise ValueError(msg_or_fn)
                else:
                    msg_or_fn(obj, name, value)

    return self.wrap(value)


def _quick_dict_validate(self: Dict, value: Any, detail: bool = True) -> None:
    """Bokeh's ``Dict.validate``, with the message formatted only for an invalid dict (by Bokeh's own code)."""
    super(Dict, self).validate(value, detail)
    if isinstance(value, dict):
        key_is_valid, value_is_valid = self.keys_type.is_valid, self.values_type.is_valid
        if all(key_is_valid(k) for k in value) and all(value_is_valid(v) for v in value.values()):
            return
    _ORIGINALS["validate"](self, value, detail)


def _cached_overridden_defaults(cls: type[HasProps]) -> dict[str, Any]:
    return _overridden_defaults_of(cls)


@functools.cache
def _overridden_defaults_of(cls: type[HasProps]) -> dict[str, Any]:
    return _ORIGINALS["_overridden_defaults"](cls)


#: Empty containers, or their types (a factory), as a property's declared default (patch 5).
_EMPTY_TYPES = (list, dict, set)


def _empty_of(default: Any) -> Any:
    """The empty container a declared empty default stands for: ``[]`` for ``[]`` or ``list``, and so on."""
    return default() if default in _EMPTY_TYPES else type(default)()


@functools.cache
def _lazy_defaults(cls: type[HasProps]) -> frozenset[str]:
    """The properties of ``cls`` whose default is an empty list, dict or set that the class does not override."""
    overridden = cls._overridden_defaults()
    lazy = set()
    for name in cls.properties(_with_props=True):
        prop = cls.lookup(name).property
        default = prop._default
        if name in overridden or not ((type(default) in _EMPTY_TYPES and not default) or default in _EMPTY_TYPES):
            continue
        # Only a default Bokeh wraps (a list, dict or set property): the serialiser leaves an unchanged one out, so
        # whether it was made changes nothing sent.  A sequence property's [] is sent once made (Selection.indices).
        if isinstance(prop.wrap(_empty_of(default)), PropertyValueContainer):
            lazy.add(name)
    return frozenset(lazy)


def _lazy_init(self: HasProps, **properties: Any) -> None:
    """Bokeh's ``HasProps.__init__``, leaving empty-container defaults (not themed) to be made when first read."""
    super(HasProps, self).__init__()
    self._property_values = {}
    self._unstable_default_values = {}
    self._unstable_themed_values = {}
    for name, value in properties.items():
        if value is Undefined or value is Intrinsic:
            continue
        setattr(self, name, value)
    lazy = _lazy_defaults(type(self))
    themed = self.themed_values() or {}
    for name in self.properties(_with_props=True):  # Bokeh's order
        if name in properties or (name in lazy and name not in themed):
            continue
        descriptor = self.lookup(name)
        if descriptor.has_unstable_default(self):
            descriptor._get(self)  # fills in ``_unstable_*_values``
    self._initialized = True


def _set_without_making_the_empty_default(self: PropertyDescriptor, obj: HasProps, value: Any, *,
                                          setter: Any = None) -> None:
    """Bokeh's ``PropertyDescriptor.__set__``, comparing against an unmade empty default without making it (15).

    Bokeh reads the old value to compare (``_set``): for a property whose empty default patch 5 left unmade that
    read makes it, a wrapped container registered to the model, and when the new value is equal (Panel sets
    ``tags=[]``, ``styles={}`` on most models) the made default is kept, never sent.  The comparison is now
    against a plain empty container of the default's type, what the read would have made, unwrapped.
    """
    if not hasattr(obj, '_property_values'):
        # Initial values should be passed in to __init__, not set directly
        class_name = obj.__class__.__name__
        raise RuntimeError(f"Cannot set a property value {self.name!r} on a {class_name} instance "
                           "before HasProps.__init__")

    if self.property.readonly and obj._initialized:
        class_name = obj.__class__.__name__
        raise RuntimeError(f"{class_name}.{self.name} is a readonly property")

    value = self.property.prepare_value(obj, self.name, value)
    name = self.name
    if (name in _lazy_defaults(type(obj)) and name not in obj._property_values
            and name not in obj._unstable_default_values and name not in obj._unstable_themed_values
            and name not in (obj.themed_values() or {})):
        old = _empty_of(self.property._default)
    else:
        old = self._get(obj)
    self._set(obj, old, value, setter=setter)


def _container_init(self: PropertyValueContainer, *args: Any, **kwargs: Any) -> None:
    """Bokeh's ``PropertyValueContainer.__init__`` with its owners in a tuple, not a set (patch 16)."""
    self._owners = ()
    super(PropertyValueContainer, self).__init__(*args, **kwargs)


def _register_owner_once(self: PropertyValueContainer, owner: HasProps, descriptor: PropertyDescriptor) -> None:
    """Bokeh's ``_register_owner``: add (owner, descriptor) if it is not there (patch 16)."""
    item = (owner, descriptor)
    if item not in self._owners:
        self._owners = (*self._owners, item)


def _unregister_owner_if_there(self: PropertyValueContainer, owner: HasProps, descriptor: PropertyDescriptor) -> None:
    """Bokeh's ``_unregister_owner``: drop (owner, descriptor) if it is there (patch 16)."""
    item = (owner, descriptor)
    if item in self._owners:
        self._owners = tuple(x for x in self._owners if x != item)


def _visit_value(obj: Any, visitor: Callable[[Any], None]) -> None:
    """Bokeh's ``visit_value_and_its_immediate_references`` without a call per number or string (patch 13)."""
    typ = type(obj)
    if typ in _IMMUTABLE:
        return
    if typ is list or issubclass(typ, (list, tuple)):
        for item in obj:
            if type(item) not in _IMMUTABLE:
                _visit_value(item, visitor)
    elif issubclass(typ, dict):
        for key, value in obj.items():
            if type(key) not in _IMMUTABLE:
                _visit_value(key, visitor)
            if type(value) not in _IMMUTABLE:
                _visit_value(value, visitor)
    elif issubclass(typ, HasProps):
        if issubclass(typ, Model):
            visitor(obj)
        else:  # not a Model: recurse into it
            model_util.visit_immediate_value_references(obj, visitor)
    elif model_util.is_dataclass(obj):
        for _, value in model_util.entries(obj):
            _visit_value(value, visitor)


@functools.cache
def _scalar_defaults(cls: type[HasProps]) -> frozenset[str]:
    """The properties of ``cls`` that may hold a model but whose default is None, a bool, a number or a string
    (Bokeh's stable defaults, not overridden by the class): unset and unthemed, such a property holds no model."""
    overridden = cls._overridden_defaults()
    props = {name: cls.lookup(name).property for name in cls.properties_with_refs() if name not in overridden}
    return frozenset(name for name, prop in props.items()
                     if not prop._may_have_unstable_default() and type(prop._default) in _IMMUTABLE)


def _visit_skipping_unmade_defaults(value: Any, visitor: Callable[[Any], None]) -> None:
    """Bokeh's ``visit_immediate_value_references``, reading the values Bokeh stores instead of through each
    property's getter, and skipping the unset properties whose default holds no model."""
    visit = model_util.visit_value_and_its_immediate_references
    if not isinstance(value, HasProps):
        visit(value, visitor)
        return
    cls = type(value)
    lazy, scalar = _lazy_defaults(cls), _scalar_defaults(cls)
    set_values, made, themed = value._property_values, value._unstable_default_values, value.themed_values() or {}
    for attr in cls.properties_with_refs():
        # The order of Bokeh's getter (PropertyDescriptor._get, then _get_default): a set value, else a theme's,
        # else a default already made.
        if attr in set_values and set_values[attr] is not Undefined:
            visit(set_values[attr], visitor)
        elif attr in themed:
            visit(getattr(value, attr), visitor)
        elif attr in made:
            visit(made[attr], visitor)
        elif attr in lazy or attr in scalar:
            continue  # an empty list, dict or set not yet made (5), or None, a number or a string: no model
        else:
            visit(getattr(value, attr), visitor)


def _init_params_once(self: Syncable) -> dict[str, Any]:
    """Panel's ``Syncable._init_params`` with ``_synced_params`` built once, not once per parameter."""
    synced = set(self._synced_params)
    params = {}
    for p in self.param:
        if p not in synced:
            continue
        v = getattr(self, p)
        if v is not None:
            params[p] = v
    return params


def _html_init_params(self: ReactiveHTML) -> dict[str, Any]:
    """Panel's ``ReactiveHTML._init_params``, reading parameter objects without making per-instance copies."""
    ignored = list(Reactive.param)
    for child in self._parser.children.values():
        if self._child_config.get(child) != 'literal':
            ignored.append(child)
    params = {
        p: getattr(self, p) for p in list(Layoutable.param)
        if getattr(self, p) is not None and p != 'name'
    }
    data_params, event_params = {}, []
    objects = self.param.objects(instance="existing")  # was self.param[k] for each k: a copy of each
    for k in self.param:
        pobj = objects[k]
        v = getattr(self, k)
        if (
            (k in ignored and k != 'name') or
            ((pobj.precedence or 0) < 0) or
            (isinstance(v, Viewable) and not isinstance(pobj, param.ClassSelector))
        ):
            continue
        if isinstance(v, str):
            v = HTML_SANITIZER.clean(v)
        data_params[k] = v
        if isinstance(pobj, param.Event):
            event_params.append(k)
    html, nodes, self._attrs = self._get_template()
    params.update({
        'attrs': self._attrs,
        'callbacks': self._node_callbacks,
        'data': self._data_model(**self._process_param_change(data_params)),
        'events': self._get_events(),
        'event_params': event_params,
        'html': _escaped(html),
        'nodes': nodes,
        'looped': [node for node, _ in self._parser.looped],
        'scripts': {}
    })
    for trigger, scripts in self._scripts.items():
        if not isinstance(scripts, list):
            scripts = [scripts]
        params['scripts'][trigger] = [
            _escaped(script, strip=True) for script in scripts
        ]
    return params


#: Where a pane made while patch 14 is installed keeps its layout's arguments until the layout is made.
_LAYOUT_KWARGS = "_roofline_lab_layout_kwargs"


def _pane_init_without_layout(self: PaneBase, object: Any = None, **params: Any) -> None:
    """Panel's ``PaneBase.__init__`` without making the pane's wrapping layout (patch 14).

    Panel gives every pane a ``layout`` (a ``Row`` holding it, used when the pane is rendered on its own or
    unpacked by ``pn.panel``) and a watcher on its ~20 layout parameters to keep that row in step; a pane placed
    in a layout never reads it.  The row is now made on first read (:func:`_pane_layout`), from the same
    arguments, and kept in step from then on.
    """
    self._object_changing = False
    super(PaneBase, self).__init__(object=object, **params)
    if not hasattr(self, '_internal_callbacks'):
        self._internal_callbacks = []
    applies = self.applies(self.object, **(params if self._applies_kw else {}))
    if (isinstance(applies, bool) and not applies) and self.object is not None:
        self._type_error(self.object)
    self.__dict__[_LAYOUT_KWARGS] = {
        k: v for k, v in params.items() if k in Layoutable.param and k not in self._skip_layoutable
    }


def _pane_layout(self: PaneBase) -> Any:
    """``PaneBase.layout`` (patch 14): made on first read, as Panel's ``__init__`` made it, then kept in step.

    A pane made before the patch was installed has its layout already, in the same place.
    """
    layout = self.__dict__.get("layout")
    if layout is None:
        kwargs = self.__dict__.pop(_LAYOUT_KWARGS, {})
        layout = self.__dict__["layout"] = self.default_layout(self, **kwargs)
        self._internal_callbacks.append(self.param.watch(self._sync_layoutable, list(Layoutable.param)))
        self._sync_layoutable()
    return layout


def _set_pane_layout(self: PaneBase, value: Any) -> None:
    self.__dict__["layout"] = value


@functools.lru_cache(maxsize=256)
def _escaped(text: str, strip: bool = False) -> str:
    """``escape(textwrap.dedent(text))`` (``.strip()``-ed first if ``strip``), once per text: every session's
    ``FlexBox`` sends the same template and scripts, now one string shared by all (patch 8)."""
    dedented = textwrap.dedent(text)
    return escape(dedented.strip() if strip else dedented)


@functools.lru_cache(maxsize=256)
def _compiled_template(source: str) -> jinja2.Template:
    """A Jinja template compiled once per text (patch 9)."""
    return jinja2.Template(source)


#: What ``panel.reactive`` sees as ``jinja2`` while patch 9 is installed: its one use is
#: ``jinja2.Template(text)`` in ``ReactiveHTML._get_template`` (the reviewed code).
_JINJA_COMPILED_ONCE = types.SimpleNamespace(Template=_compiled_template)


class Patch(NamedTuple):
    """One patch: ``owner.attr`` replaced by ``replacement`` while the reviewed code is what is installed."""

    owner: Any  #: the class or module whose attribute is replaced
    attr: str
    digest: str  #: sha256 of the reviewed function's source (Bokeh 3.9.2, Panel 1.9.4)
    replacement: Any
    #: The function (or class) whose source the digest is of, when it is not the replaced attribute itself:
    #: patch 9 replaces a module's ``jinja2`` for the sake of the one function that uses it; the parts of patches
    #: 14 and 16 share one digest, so that either all of a patch goes in or none.
    reviewed: Callable | type | None = None


#: The reviewed source of Panel's ``PaneBase.__init__`` (patch 14's two parts).
_PANE_INIT_DIGEST = "e183ce8d27dd816f03c126f2507e26651fd25eef7abad678658d4d527ef76b0c"
#: The reviewed source of Bokeh's ``PropertyValueContainer`` (patch 16's three parts).
_CONTAINER_DIGEST = "eb18bcd427c5cdb29818fa1d74334665da7935907d12640db454e1d4af29637d"
#: label -> patch; a label is the replaced function's name, or ``Class.name`` where two share one.
_PATCHES: dict[str, Patch] = {
    "query_properties_with_values": Patch(HasProps, "query_properties_with_values",
                                          "e864a09d384658f4dc59d87fbba3c4893d7f5f60cfa6960edc35c91ec03bc4d8",
                                          _fast_query_properties_with_values),
    "_overridden_defaults": Patch(HasProps, "_overridden_defaults",
                                  "c3b1c82a295e3b8bc947ce04bd61c4d3ebcfd5dd083d2da36852a122b7fb2a4f",
                                  classmethod(_cached_overridden_defaults)),
    "_get_default": Patch(PropertyDescriptor, "_get_default",
                          "6173b5a328b12fc37a7b37c843dc858d2854de88cc2de73dbc20f05ece204918", _cached_get_default),
    "validate": Patch(Dict, "validate", "77a1789b3ab232ec51c978f79abf5744f15defc81d8098339e397ef6c3c062a1",
                      _quick_dict_validate),
    "__init__": Patch(HasProps, "__init__", "8184f3bb9444ab37630421c2562aa825420a3a12000c6aba0edca39dea815f30",
                      _lazy_init),
    "visit_immediate_value_references": Patch(model_util, "visit_immediate_value_references",
                                              "94591d886aacef72ddf1b8eca8993af500d5dab7a030bed6c1b5c54ad3e6309c",
                                              _visit_skipping_unmade_defaults),
    "visit_value_and_its_immediate_references": Patch(model_util, "visit_value_and_its_immediate_references",
                                                      "e018cc9482917eacdd8f2dfb1b3feedf4b113a412ae518ad96f62e6f9d76f627",
                                                      _visit_value),
    "Syncable._init_params": Patch(Syncable, "_init_params",
                                   "3c20aeeded14dbf2c2bc4a9e1a8923c62d511cf4550a0a500fcc0f55013d2d21",
                                   _init_params_once),
    "ReactiveHTML._init_params": Patch(ReactiveHTML, "_init_params",
                                       "f7e830a6d020657dfb6279095e22535ccb75f167b57012cf0e1c401cb8bacb35",
                                       _html_init_params),
    "themed_values": Patch(HasProps, "themed_values",
                           "668c1fc00de346e8af6dac452f8a62bc71df01a543e47f71c960ebcfbbeae765",
                           _themed_values_from_dict),
    "has_unstable_default": Patch(PropertyDescriptor, "has_unstable_default",
                                  "5508a373943696c6224fade7a49dd18cb8bf362dfe128cd4958496318726fbfe",
                                  _cached_has_unstable_default),
    "prepare_value": Patch(Property, "prepare_value",
                           "8cafcfe88f929018e7e9d0277c5d2ae01205c0b8c7bb7d7b9405aad73b7219c9",
                           _prepare_value_once_valid),
    "ReactiveHTML._get_template": Patch(panel_reactive, "jinja2",
                                        "e6ab5fe6860c36e6eb8401331d54930098ca570482e4bf522b0ee7230142dcce",
                                        _JINJA_COMPILED_ONCE, reviewed=ReactiveHTML._get_template),
    "PropertyDescriptor.__set__": Patch(PropertyDescriptor, "__set__",
                                        "dfd39d394331775f081df2db2d246fb42508ded7ec8a279fe86722d543e2c08c",
                                        _set_without_making_the_empty_default),
    # 16: the three go together (a tuple where Bokeh keeps a set): one digest, of the class that has all three.
    "PropertyValueContainer.__init__": Patch(PropertyValueContainer, "__init__", _CONTAINER_DIGEST,
                                             _container_init, reviewed=PropertyValueContainer),
    "_register_owner": Patch(PropertyValueContainer, "_register_owner", _CONTAINER_DIGEST, _register_owner_once,
                             reviewed=PropertyValueContainer),
    "_unregister_owner": Patch(PropertyValueContainer, "_unregister_owner", _CONTAINER_DIGEST,
                               _unregister_owner_if_there, reviewed=PropertyValueContainer),
    # 14: the two go together (one reviewed function): an __init__ that makes no layout, and the layout made on read.
    "PaneBase.__init__": Patch(PaneBase, "__init__", _PANE_INIT_DIGEST, _pane_init_without_layout),
    "PaneBase.layout": Patch(PaneBase, "layout", _PANE_INIT_DIGEST,
                             property(_pane_layout, _set_pane_layout), reviewed=PaneBase.__init__),
}
#: The replaced functions (to call), and the class attributes as found (to put back), while installed.
_ORIGINALS: dict[str, Callable] = {}
_FOUND: dict[str, Any] = {}
#: Targets already found not to be the reviewed code: not hashed again on every session.
_LEFT_ALONE: set[str] = set()


def _source_hash(func: Callable) -> str | None:
    try:
        return hashlib.sha256(inspect.getsource(func).encode()).hexdigest()
    except (OSError, TypeError):  # no source shipped: not the reviewed code
        return None


def install() -> list[str]:
    """Install the patches whose target is the reviewed code; return their labels.

    Idempotent.  A target whose source differs (another Bokeh or Panel) is left alone and logged.
    """
    for label, patch in _PATCHES.items():
        if label in _ORIGINALS or label in _LEFT_ALONE:
            continue
        current = inspect.getattr_static(patch.owner, patch.attr, _MISSING)  # missing: an attribute added (14)
        func = current.__func__ if isinstance(current, classmethod) else current
        if _source_hash(patch.reviewed or func) != patch.digest:
            log.info("bokeh_speedups: %s is not the reviewed code; left as it is", label)
            _LEFT_ALONE.add(label)
            continue
        _ORIGINALS[label], _FOUND[label] = func, current
        setattr(patch.owner, patch.attr, patch.replacement)
    return sorted(_ORIGINALS)


def uninstall() -> None:
    """Put Bokeh's and Panel's own code back and forget what the patches remembered."""
    for label in list(_ORIGINALS):
        patch, found = _PATCHES[label], _FOUND.pop(label)
        if found is _MISSING:
            delattr(patch.owner, patch.attr)
        else:
            setattr(patch.owner, patch.attr, found)
        del _ORIGINALS[label]
    _LEFT_ALONE.clear()
    _STABLE_DEFAULTS.clear()
    _UNSTABLE.clear()
    for prop in _ACCEPTING:
        prop.__dict__.pop(_ACCEPTED_ATTR, None)
    _ACCEPTING.clear()
    _overridden_defaults_of.cache_clear()
    _lazy_defaults.cache_clear()
    _scalar_defaults.cache_clear()
    _compiled_template.cache_clear()
    _escaped.cache_clear()


@contextmanager
def installed() -> Iterator[list[str]]:
    """The patches installed for the duration of a ``with`` block (tests, benchmarks)."""
    already = set(_ORIGINALS)
    names = install()
    try:
        yield names
    finally:
        if not already:
            uninstall()
