"""Controls generated from the lever table (:data:`core.scenario.LEVERS`).

``pn.Param`` derives one widget per parameter (labels, options, bounds, soft
bounds and steps come from the table); the table's extras choose the rest: a
lever with stops gets a discrete slider, a lever shown in another unit than the
model keeps (the reserve: GiB at the edge, bytes inside) gets a slider in that
unit, and every widget gets the lever's CSS class.  Nothing here restates a
bound or a default.
"""

from __future__ import annotations

import panel as pn

from core.levers import Lever
from core.scenario import LEVERS, Scenario


def stop_label(value: int) -> str:
    """A slider stop as text: multiples of 1024 as "8k", others with thousands separators."""
    return f"{value // 1024}k" if value >= 1024 and value % 1024 == 0 else f"{value:,}"


def build_controls(scenario: Scenario, parameters: list[str] | None = None, compact: bool = False) -> pn.Column:
    """The controls for ``scenario`` (widgets stay linked to it both ways).

    Args:
        parameters: which levers, in table order (default: all of them).
        compact: one horizontal strip of narrow widgets (embed mode).
    """
    parameters = [name for name in LEVERS.names if name in (parameters or LEVERS.names)]
    direct = [name for name in parameters if LEVERS[name].scale == 1]
    widgets = {name: _widget_spec(LEVERS[name], compact) for name in direct}
    panel = pn.Param(scenario, parameters=direct, widgets=widgets, show_name=False, sizing_mode="stretch_width",
                     default_layout=pn.FlexBox if compact else pn.Column)
    for name in direct:
        if LEVERS[name].stops:
            _keep_in_options(scenario, panel, LEVERS[name])
    scaled = [_scaled_slider(scenario, LEVERS[name]) for name in parameters if LEVERS[name].scale != 1]
    if compact or not scaled:
        return panel
    return pn.Column(panel, *scaled, sizing_mode="stretch_width")


def _widget_spec(lever: Lever, compact: bool) -> dict:
    spec: dict = {"css_classes": [lever.css]}
    if lever.stops:
        spec.update(type=pn.widgets.DiscreteSlider, options={stop_label(v): v for v in lever.stops})
    if compact:
        spec["width"] = 150
    return spec


def _scaled_slider(scenario: Scenario, lever: Lever) -> pn.widgets.FloatSlider:
    """A slider in the lever's edge unit (``value × scale`` is the SI value), linked both ways."""
    p = scenario.param[lever.name]
    lo, hi = p.get_soft_bounds()
    value = getattr(scenario, lever.name) / lever.scale
    # A value beyond the soft bounds (set by a link or the command line) widens the
    # slider rather than being clamped: the widget never rewrites the model.
    widget = pn.widgets.FloatSlider(label=lever.label, start=lo / lever.scale, end=max(hi / lever.scale, value),
                                    step=(p.step or lever.scale) / lever.scale, value=value,
                                    sizing_mode="stretch_width", css_classes=[lever.css])
    widget.param.watch(lambda e: setattr(scenario, lever.name, e.new * lever.scale), "value")

    def follow(event) -> None:
        shown = event.new / lever.scale
        widget.param.update(end=max(widget.end, shown), value=shown)

    scenario.param.watch(follow, lever.name)
    return widget


def _keep_in_options(scenario: Scenario, panel: pn.Param, lever: Lever) -> None:
    """A discrete slider only shows values it offers; a scenario value set elsewhere
    (the command line, a tour step, a link) that is not a stop becomes one, so the
    slider never silently disagrees with the model."""
    widget = next(w for w in panel.select(pn.widgets.DiscreteSlider) if lever.css in w.css_classes)

    def admit(value: int) -> None:
        if value not in widget.values:
            widget.options = dict(sorted({**widget.options, stop_label(value): value}.items(), key=lambda kv: kv[1]))
        widget.value = value

    admit(getattr(scenario, lever.name))
    scenario.param.watch(lambda e: admit(e.new), lever.name)
