"""app/bokeh_speedups.py: served sessions get the same documents, built with less work."""

from __future__ import annotations

import inspect
import re

import bokeh
import panel
import pytest
from bokeh.core.json_encoder import serialize_json
from bokeh.document import Document
from bokeh.models import ColumnDataSource, Plot, Range1d

from app import bokeh_speedups
from app.lab import Lab
from app.state import TABS
from core import Scenario
from core.hardware import custom_accelerator
from core.permalink import to_query
from core.pins import Pin


def canonical(doc: Document) -> str:
    """The document's JSON as the browser receives it, with the per-build counters renamed in order of
    appearance: model ids (``p1234``), Panel's instance names (``Column00123``) and Python object ids."""
    text = serialize_json(doc.to_json())
    seen: dict[str, str] = {}

    def rename(kind: str):
        return lambda m: seen.setdefault(m.group(0), f"{kind}{len(seen)}")

    text = re.sub(r"\bp\d{4,}\b", rename("id"), text)
    text = re.sub(r"\b[A-Za-z][A-Za-z0-9]*?\d{5}\b", rename("name"), text)
    return re.sub(r"\b\d{12,}\b", rename("object"), text)


def every_tab(query: dict) -> list[str]:
    """A session built from ``query``, serialised with each tab open in turn (a tab's view joins the
    document when it is shown), then after a lever move and a pin."""
    lab = Lab(query=query)
    doc = Document()
    lab.layout.server_doc(doc)
    out = [canonical(doc)]
    if not lab.embed:
        for name in TABS:
            lab.state.tab = name
            out.append(canonical(doc))
    lab.scenario.param.update(batch=16, weight_dtype="int4")
    lab.pin_current()
    out.append(canonical(doc))
    return out


GPU = custom_accelerator("Lab card", bandwidth_tbs=2.0, capacity_gb=48, bf16=400, fp8=800)
MINE = Scenario(batch=4)
MINE.add_gpu(GPU)


@pytest.mark.parametrize("query", [
    {},
    {"embed": "true", "model": "llama-3-8b"},
    {"present": "true", "tour": "6"},
    to_query(MINE.levers(), [Pin("mine", MINE.levers())], custom_gpu=GPU),
    # A hostile link: markup in a pin's name, NaN, 10^30, a repeated key, an unknown model.
    {"batch": ["1e30", "4"], "context": "nan", "model": "<script>x</script>", "pins": '[{"name": "<b>x</b>"}]',
     "tab": "Compare"},
], ids=["default", "embed", "present-tour", "custom-gpu-pins", "hostile"])
def test_the_browser_gets_the_same_document_with_the_patches(query):
    bokeh_speedups.uninstall()
    plain = every_tab(query)
    with bokeh_speedups.installed():
        fast = every_tab(query)
    assert len(plain) == len(fast) and all(len(text) > 50_000 for text in plain)
    for step, (a, b) in enumerate(zip(plain, fast, strict=True)):
        assert a == b, f"step {step} differs"


def _references_both_ways(doc: Document) -> tuple[list[list[str]], list[list[str]]]:
    """Each root's references (model ids), by the patched walk and by Bokeh's own, over the same models."""
    import bokeh.model.util as model_util

    fast = [sorted(m.id for m in root.references()) for root in doc.roots]
    halves = ("visit_immediate_value_references", "visit_value_and_its_immediate_references")  # patches 6 and 13
    patched = {name: getattr(model_util, name) for name in halves}
    for name in halves:
        setattr(model_util, name, bokeh_speedups._ORIGINALS.get(name, patched[name]))
    try:
        plain = [sorted(m.id for m in root.references()) for root in doc.roots]
    finally:
        for name in halves:
            setattr(model_util, name, patched[name])
    return fast, plain


@pytest.mark.skipif(bokeh.__version__ != "3.9.2", reason="patches 6 and 13 were reviewed against Bokeh 3.9.2's code")
@pytest.mark.parametrize("query", [{}, {"embed": "true"}, {"present": "true", "tour": "6"},
                                   to_query(MINE.levers(), [Pin("mine", MINE.levers())], custom_gpu=GPU)],
                         ids=["default", "embed", "present-tour", "custom-gpu-pins"])
def test_the_references_walk_finds_what_bokehs_finds(query):
    """Patches 6 and 13 read stored values, skip scalar defaults and scalars in containers: the same models as
    Bokeh's walk, every tab shown, after a move."""
    with bokeh_speedups.installed():
        assert {"visit_immediate_value_references", "visit_value_and_its_immediate_references"} <= set(
            bokeh_speedups._ORIGINALS)
        lab = Lab(query=query)
        doc = Document()
        lab.layout.server_doc(doc)
        steps = [_references_both_ways(doc)]
        for name in ([] if lab.embed else TABS):
            lab.state.tab = name
            steps.append(_references_both_ways(doc))
        lab.scenario.param.update(batch=16, weight_dtype="int4")
        lab.pin_current()
        steps.append(_references_both_ways(doc))
    for step, (fast, plain) in enumerate(steps):
        assert fast == plain, f"step {step} differs"
    assert sum(map(len, steps[0][0])) > 200  # the whole page


@pytest.mark.skipif(bokeh.__version__ != "3.9.2" or panel.__version__ != "1.9.4",
                    reason="the patches were reviewed against Bokeh 3.9.2's and Panel 1.9.4's code")
def test_the_patches_install_on_the_reviewed_bokeh():
    bokeh_speedups.uninstall()
    with bokeh_speedups.installed() as names:
        assert names == ["PaneBase.__init__", "PaneBase.layout", "PropertyDescriptor.__set__",
                         "PropertyValueContainer.__init__", "ReactiveHTML._get_template", "ReactiveHTML._init_params",
                         "Syncable._init_params", "__init__", "_get_default",
                         "_overridden_defaults", "_register_owner", "_unregister_owner", "has_unstable_default",
                         "prepare_value", "query_properties_with_values", "themed_values", "validate",
                         "visit_immediate_value_references", "visit_value_and_its_immediate_references"]
        # Installing twice changes nothing; leaving the block puts Bokeh's functions back.
        assert bokeh_speedups.install() == names
    assert bokeh_speedups._ORIGINALS == {}
    # The attribute patch 14 added is gone again (Panel's panes keep theirs in the instance).
    assert "layout" not in vars(panel.pane.base.PaneBase)
    from bokeh.core.has_props import HasProps

    assert HasProps.query_properties_with_values is not bokeh_speedups._fast_query_properties_with_values
    # Bokeh's classmethod is back as a classmethod: the MRO merge of a class that overrides defaults.
    from bokeh.models import Slider

    assert isinstance(inspect.getattr_static(HasProps, "_overridden_defaults"), classmethod)
    assert Slider._overridden_defaults()["width"] == 300 and Slider._overridden_defaults()["format"] == "0[.]00"


def test_another_bokehs_code_is_left_alone(monkeypatch):
    bokeh_speedups.uninstall()
    patch = bokeh_speedups._PATCHES["_get_default"]
    monkeypatch.setitem(bokeh_speedups._PATCHES, "_get_default", patch._replace(digest="0" * 64))
    with bokeh_speedups.installed() as names:
        assert "_get_default" not in names
        from bokeh.core.property.descriptors import PropertyDescriptor

        assert PropertyDescriptor._get_default is not bokeh_speedups._cached_get_default
        assert bokeh_speedups._LEFT_ALONE == {"_get_default"}  # not hashed again at the next session
        assert bokeh_speedups.install() == names


def test_defaults_stay_per_instance_and_follow_what_is_set():
    """A remembered default is never shared where Bokeh would copy it, and a set value wins."""
    with bokeh_speedups.installed():
        a, b = ColumnDataSource(), ColumnDataSource()
        a.data["x"] = [1, 2]  # a mutable default: each source has its own
        assert dict(b.data) == {} and a.data["x"] == [1, 2]
        p, q = Plot(), Plot()
        assert p.width == q.width == 600  # an immutable default, read twice
        p.width = 300
        assert (p.width, q.width) == (300, 600)
        # The serialiser sends what was set, and the Instance defaults it always sends.
        rep = p.to_serializable(_Serializer())
        assert rep["attributes"]["width"] == 300 and "x_range" in rep["attributes"]
        p.x_range = Range1d(0, 1)
        assert p.properties_with_values(include_defaults=False)["x_range"].end == 1


def _empty_defaults_as_bokeh_does_them() -> list:
    """What a program sees of new models' empty-container defaults: each its own, mutations kept and sent, a model
    put in one found by ``references()``."""
    from bokeh.models import Column, Div

    a, b = Div(), Div()
    made_at_first = "tags" in a._unstable_default_values
    a.tags.append("x")  # a default list, changed in place
    a.js_property_callbacks.setdefault("change:text", [])
    inner, col = Div(), Column()
    before = inner in col.references()
    col.children.append(inner)
    return [made_at_first, list(a.tags), list(b.tags), a.properties_with_values(include_defaults=False).get("tags"),
            sorted(a.properties_with_values(include_defaults=False)), before, inner in col.references(),
            inner in col.to_serializable(_Serializer())["attributes"]["children"]]


def test_empty_defaults_are_made_when_first_read_with_bokehs_results():
    bokeh_speedups.uninstall()
    plain = _empty_defaults_as_bokeh_does_them()
    with bokeh_speedups.installed():
        lazy = _empty_defaults_as_bokeh_does_them()
    assert plain[0] is True and lazy[0] is False  # Bokeh makes it with the model; the patch when first read
    assert lazy[1:] == plain[1:]
    assert lazy[1:4] == [["x"], [], ["x"]] and lazy[5:] == [False, True, True]


def test_an_invalid_dict_is_refused_with_bokehs_message():
    from bokeh.models import Div

    with bokeh_speedups.installed():
        div = Div(tags=["x"])
        div.js_property_callbacks = {}
        with pytest.raises(ValueError, match=r"expected a dict of type .*invalid values for keys: change:text"):
            div.js_property_callbacks = {"change:text": [3]}
        with pytest.raises(ValueError, match="expected a dict of type"):
            div.js_property_callbacks = ["change:text"]
        assert div.js_property_callbacks == {}


def _themes_as_bokeh_applies_them() -> list:
    """A model with no theme value, one given a theme's values, then the same with the theme taken away: what a
    program reads of each, and what is serialised."""
    from bokeh.models import Div

    plain, themed = Div(), Div()
    before = (plain.themed_values(), themed.themed_values())
    themed.apply_theme({"width": 123, "styles": {"color": "red"}})
    during = (themed.themed_values(), themed.width, dict(themed.styles), plain.width, plain.themed_values())
    serialised = sorted(themed.to_serializable(_Serializer())["attributes"])
    themed.apply_theme({})
    return [before, during, serialised, themed.themed_values(), themed.width, "__themed_values__" in vars(themed)]


def test_theme_values_are_read_as_bokeh_reads_them():
    bokeh_speedups.uninstall()
    plain = _themes_as_bokeh_applies_them()
    with bokeh_speedups.installed():
        fast = _themes_as_bokeh_applies_them()
        from bokeh.core.has_props import HasProps

        assert HasProps.themed_values is bokeh_speedups._themed_values_from_dict
    assert fast == plain
    assert fast[0] == (None, None) and fast[1][1:] == (123, {"color": "red"}, None, None)
    assert fast[3:] == [None, None, False]  # the theme gone: Div's own default width (None) again


@pytest.mark.skipif(bokeh.__version__ != "3.9.2", reason="patch 11 was reviewed against Bokeh 3.9.2's code")
def test_unstable_defaults_are_judged_as_bokeh_judges_them():
    """Patch 11 keeps Bokeh's answer per property and class: the same answer for every property of every model
    of a served page (asked twice: computed, then kept), and for a class that overrides a default."""
    from bokeh.core.properties import Override
    from bokeh.core.property.descriptors import PropertyDescriptor
    from bokeh.models import GlyphRenderer, Slider

    class Tagged(Slider):
        title = Override(default=lambda: "made per model")  # a generated default: unstable in this class only

    with bokeh_speedups.installed():
        assert "has_unstable_default" in bokeh_speedups._ORIGINALS
        bokeh_speedups._UNSTABLE.clear()
        original = bokeh_speedups._ORIGINALS["has_unstable_default"]
        doc = Document()
        Lab().layout.server_doc(doc)
        models = [*doc.models, Tagged(), Slider(), GlyphRenderer()]
        asked = [(d, m) for m in models for d in m.descriptors() if isinstance(d, PropertyDescriptor)]
        for _ in range(2):
            assert [d.has_unstable_default(m) for d, m in asked] == [original(d, m) for d, m in asked]
        assert len(bokeh_speedups._UNSTABLE) > 300 and len(asked) > 5_000
        assert Tagged.lookup("title").has_unstable_default(Tagged()) is True  # same descriptor, another class
        assert Slider.lookup("title").has_unstable_default(Slider()) is False
        assert GlyphRenderer.lookup("view").has_unstable_default(GlyphRenderer()) is True
        assert Slider.lookup("width").has_unstable_default(Slider()) is False
        assert Tagged().title == "made per model" and Slider().title == ""


@pytest.mark.skipif(bokeh.__version__ != "3.9.2", reason="patch 12 was reviewed against Bokeh 3.9.2's code")
def test_a_value_once_accepted_is_not_validated_again_and_the_rest_is_bokehs(monkeypatch):
    """Patch 12: a property remembers the short values it accepted; a refused value is refused (with Bokeh's
    message) every time, a value Bokeh converts is converted every time, and what is remembered is bounded."""
    from bokeh.models import Div, Plot, Title

    with bokeh_speedups.installed():
        assert "prepare_value" in bokeh_speedups._ORIGINALS
        prop = Div.lookup("css_classes").property
        calls = []
        validate = prop.validate
        monkeypatch.setattr(prop, "validate", lambda value, detail=True: calls.append(value) or validate(value, detail))
        a, b = Div(css_classes=["lab", "levers"]), Div(css_classes=["lab", "levers"])
        assert calls.count(["lab", "levers"]) == 1  # the second model's identical list: not validated again
        assert list(b.css_classes) == ["lab", "levers"] and b.css_classes is not a.css_classes  # each its own
        Div(css_classes=["other"])
        assert calls[-1] == ["other"]
        for _ in range(2):
            with pytest.raises(ValueError, match=r"failed to validate Div\(.*\)\.css_classes"):
                Div(css_classes=[3])
        assert calls[-2:] == [[3], [3]]
        for _ in range(2):  # a string Plot.title converts to a Title model, every time
            plot = Plot(title="roofline")
            assert isinstance(plot.title, Title) and plot.title.text == "roofline"
        text = Div.lookup("text").property
        for i in range(300):
            Div(text=f"pin {i}")
        assert len(vars(text)[bokeh_speedups._ACCEPTED_ATTR]) == bokeh_speedups._ACCEPTED_MAX
        # Hostile values: NaN is never equal to itself (each one a new entry, still bounded); 10^30 and a long
        # text are accepted as Bokeh accepts them; markup given as a width is refused, every time.
        start = Range1d.lookup("start").property
        for _ in range(300):
            assert str(Range1d(start=float("nan"), end=1).start) == "nan"
        assert len(vars(start)[bokeh_speedups._ACCEPTED_ATTR]) <= bokeh_speedups._ACCEPTED_MAX
        assert Range1d(start=10**30, end=1).start == 10**30 and Div(text="x" * 100_000).text == "x" * 100_000
        for _ in range(2):
            with pytest.raises(ValueError, match="failed to validate"):
                Plot(width="<b>wide</b>")
    assert bokeh_speedups._ACCEPTED_ATTR not in vars(text)  # forgotten when the patches leave


def _flexboxes_built() -> tuple[list, list[int], dict]:
    """Two FlexBoxes (Panel's ReactiveHTML layout) put in a document: the properties Panel gives their models, how
    many parameter objects each instance copied, and the first one's ``_init_params``."""
    boxes = [panel.FlexBox(panel.pane.HTML(f"<b>{i}</b>"), flex_wrap="wrap", align_items="center") for i in range(2)]
    doc = Document()
    panel.Column(*boxes).server_doc(doc)
    models = [box._models[next(iter(box._models))][0] for box in boxes]
    props = [(m.html, m.attrs, dict(m.data.properties_with_values(include_defaults=False)), m.event_params, m.nodes)
             for m in models]
    return props, [len(box._param__private.params) for box in boxes], boxes[0]._init_params()


@pytest.mark.skipif(panel.__version__ != "1.9.4", reason="patches 7-9 were reviewed against Panel 1.9.4's code")
def test_panels_models_are_built_as_panel_builds_them_without_the_copies():
    bokeh_speedups.uninstall()
    plain_props, plain_copies, plain_init = _flexboxes_built()
    with bokeh_speedups.installed():
        bokeh_speedups._compiled_template.cache_clear()
        fast_props, fast_copies, fast_init = _flexboxes_built()
        compiled = bokeh_speedups._compiled_template.cache_info()
        # Patch 7: a widget's initial properties, as Panel's own _init_params gives them.
        slider = panel.widgets.IntSlider(label="B", start=1, end=64, value=4)
        fast_slider = slider._init_params()
    from panel.reactive import Syncable

    assert fast_slider == bokeh_speedups._ORIGINALS.get("Syncable._init_params", Syncable._init_params)(slider)
    assert fast_slider["value"] == 4 and fast_slider["end"] == 64
    # The same html, attributes, data and nodes, but for the per-build counters: model ids and instance names.
    strip = re.compile(r"\bp\d{3,}\b|\bFlexBox\d{5}\b")
    assert [strip.sub("#", repr(x)) for x in fast_props] == [strip.sub("#", repr(x)) for x in plain_props]
    assert "align-items: ${align_items}" in fast_props[0][0].replace("&quot;", '"')
    assert fast_init.keys() == plain_init.keys() and fast_init["event_params"] == plain_init["event_params"]
    # Panel copied every parameter object of each FlexBox (~27); with patch 8 none.
    assert min(plain_copies) > 20 and fast_copies == [0, 0]
    # Patch 9: the template text of both boxes compiled once.
    assert compiled.misses == 1 and compiled.hits >= 1


class _Serializer:
    """Just enough of Bokeh's serializer for one model's own representation."""

    def add_ref(self, *_):
        pass

    def encode(self, value):
        return value


def _pane_layouts() -> list[tuple]:
    """Panes made with layout arguments, some changed after they were made, and what their layouts hold."""
    html = panel.pane.HTML("<b>x</b>", width=200, margin=(5, 10), sizing_mode="fixed", css_classes=["a"])
    markdown = panel.pane.Markdown("**x**", sizing_mode="stretch_width", visible=False)
    late = panel.pane.HTML("y", width=100)
    late.param.update(width=150, margin=(1, 2, 3, 4), visible=False)  # before its layout is read
    after = panel.pane.Str("z", height=40)
    assert after.layout.height == 40 + 10  # read, then changed: kept in step
    after.param.update(height=60, min_width=30)
    unpacked = panel.panel("plain text", width=120)  # pn.panel reads the layout to unpack it
    out = []
    for pane in (html, markdown, late, after):
        layout = pane.layout
        out.append((type(layout).__name__, list(layout.objects) == [pane], layout.width, layout.height,
                    layout.min_width, layout.margin, layout.sizing_mode, layout.visible, layout.css_classes))
    out.append((type(unpacked).__name__, unpacked.width, unpacked.object))
    return out


@pytest.mark.skipif(panel.__version__ != "1.9.4", reason="patch 14 was reviewed against Panel 1.9.4's code")
def test_a_panes_layout_is_made_when_first_read_as_panel_makes_it():
    bokeh_speedups.uninstall()
    plain = _pane_layouts()
    made_before = panel.pane.HTML("before", width=90)
    its_layout = made_before.layout
    with bokeh_speedups.installed() as names:
        assert {"PaneBase.__init__", "PaneBase.layout"} <= set(names)
        fast = _pane_layouts()
        pane = panel.pane.HTML("x", width=50)
        def syncing(pane) -> int:
            return sum(w.fn == pane._sync_layoutable for w in pane._internal_callbacks)

        assert "layout" not in vars(pane) and syncing(pane) == 0  # no row, no watcher yet
        assert pane.layout is pane.layout and pane[0] is pane and syncing(pane) == 1  # made once, then in step
        assert made_before.layout is its_layout and its_layout.width == 90 + 20  # a pane's margin: 10 each side
        # A pane Panel does not update in place (a Bokeh figure) is rendered on its own through its layout.
        figure = Plot(x_range=Range1d(0, 1), y_range=Range1d(0, 1))
        root = panel.pane.Bokeh(figure).get_root(Document())
        assert type(root).__name__ == "Row" and root.children == [figure]
    assert fast == plain
    assert plain[2][2:8] == (150 + 2 + 4, None, None, 0, None, False)  # the late change (width with its margins)
    assert plain[3][3:5] == (60 + 10, 30)  # the change after the read, kept in step


def _empty_values_set_as_bokeh_sets_them() -> list:
    """Models given empty containers, then other values (with a change callback), then a themed one: what is
    stored, read, serialised and told to the callback."""
    from bokeh.models import Div

    quiet = Div(tags=[], styles={}, css_classes=[])  # what Panel passes for most of its models
    made = dict(quiet._unstable_default_values)
    told = []
    quiet.on_change("tags", lambda attr, old, new: told.append((attr, list(old), list(new))))
    quiet.tags = ["a"]
    quiet.tags.append("b")  # the stored value is Bokeh's wrapper, owned by the model: mutations are told
    attributes = quiet.to_serializable(_Serializer())["attributes"]
    themed = Div()
    themed.apply_theme({"css_classes": ["t"]})
    themed.css_classes = []  # differs from the theme's value: set
    return [made, quiet.tags, quiet.styles, told, sorted(attributes), themed.css_classes,
            "css_classes" in themed._property_values, type(quiet.tags).__name__]


@pytest.mark.skipif(bokeh.__version__ != "3.9.2", reason="patch 15 was reviewed against Bokeh 3.9.2's code")
def test_an_empty_value_set_is_compared_without_making_the_default():
    from bokeh.core.property.descriptors import PropertyDescriptor

    bokeh_speedups.uninstall()
    plain = _empty_values_set_as_bokeh_sets_them()
    with bokeh_speedups.installed() as names:
        assert "PropertyDescriptor.__set__" in names
        fast = _empty_values_set_as_bokeh_sets_them()
        PropertyDescriptor.__set__ = bokeh_speedups._ORIGINALS["PropertyDescriptor.__set__"]
        try:
            without = _empty_values_set_as_bokeh_sets_them()  # the other patches (5 leaves defaults unmade)
        finally:
            PropertyDescriptor.__set__ = bokeh_speedups._set_without_making_the_empty_default
    # Bokeh's __set__ made the three empty defaults to compare with and kept them; the patch makes none.
    assert sorted(without[0]) == ["css_classes", "styles", "tags"] and fast[0] == {}
    assert fast[1:] == plain[1:] == without[1:]
    assert fast[3] == [("tags", [], ["a"]), ("tags", ["a"], ["a", "b"])]
    assert fast[5:] == [[], True, "PropertyValueList"]


def _owners_as_bokeh_keeps_them() -> list:
    """A list shared by two models, mutated, then replaced on one of them: which owners hear each mutation."""
    from bokeh.models import Div

    a, b = Div(), Div()
    heard = []
    a.on_change("css_classes", lambda attr, old, new: heard.append(("a", list(new))))
    b.on_change("css_classes", lambda attr, old, new: heard.append(("b", list(new))))
    a.css_classes = ["x"]
    shared = a.css_classes
    b.css_classes = shared  # the same container, now owned by both
    shared._register_owner(a, Div.lookup("css_classes"))  # registering again adds nothing
    owners_both = sorted((id(o) == id(a), d.name) for o, d in shared._owners)
    shared.append("y")  # both hear it
    a.css_classes = ["z"]  # a lets go of it
    shared.append("w")  # only b hears it
    shared._unregister_owner(a, Div.lookup("css_classes"))  # gone already: nothing happens
    heard[2:4] = sorted(heard[2:4])  # one mutation, two owners: Bokeh's set tells them in either order
    return [heard, owners_both, [(id(o) == id(b), d.name) for o, d in shared._owners], list(b.css_classes)]


@pytest.mark.skipif(bokeh.__version__ != "3.9.2", reason="patch 16 was reviewed against Bokeh 3.9.2's code")
def test_a_containers_owners_are_told_as_bokeh_tells_them():
    from bokeh.core.property.wrappers import PropertyValueContainer

    bokeh_speedups.uninstall()
    plain = _owners_as_bokeh_keeps_them()
    with bokeh_speedups.installed() as names:
        assert {"PropertyValueContainer.__init__", "_register_owner", "_unregister_owner"} <= set(names)
        fast = _owners_as_bokeh_keeps_them()
        assert type(PropertyValueContainer()._owners) is tuple
    heard = [("a", ["x"]), ("b", ["x"])]
    assert fast == plain
    assert fast[0][:2] == heard and fast[0][2:4] == [("a", ["x", "y"]), ("b", ["x", "y"])]
    assert fast[0][4:] == [("a", ["z"]), ("b", ["x", "y", "w"])]
    assert fast[1] == [(False, "css_classes"), (True, "css_classes")] and fast[2:] == [[(True, "css_classes")],
                                                                                        ["x", "y", "w"]]
