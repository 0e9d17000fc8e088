"""Controls generated from the Scenario's parameters.

``pn.Param`` derives one widget per parameter (labels, options and bounds come
from ``core.scenario.Scenario``); only the widget *type* is chosen here, plus
one edge conversion: the reserve is edited in GiB while the model keeps bytes.
"""

from __future__ import annotations

import panel as pn

from core.scenario import LEVERS, Scenario
from core.units import GiB

#: Batch sizes offered by the slider: dense where the articles work (1-8, 56)
#: and roughly logarithmic beyond, so 1 -> 4 is a short drag, not a pixel.
BATCH_STOPS = [1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 48, 56, 64, 96, 128, 192, 256, 384, 512, 768, 1024]
CONTEXT_STOPS = [128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072]
PROMPT_STOPS = [128, 256, 512, 1000, 2000, 4000, 8000, 16000, 32000]

# Every lever but the reserve, which gets a GiB slider below (the model keeps bytes).
PARAMETERS = [name for name in LEVERS if name != "reserve_bytes"]


def _token_label(n: int) -> str:
    return f"{n // 1024}k" if n >= 1024 and n % 1024 == 0 else f"{n:,}"


def _stops(values: list[int], label=str) -> dict[str, int]:
    return {label(v): v for v in values}


def build_controls(scenario: Scenario, parameters: list[str] | None = None, compact: bool = False) -> pn.Column:
    """The controls for ``scenario`` (widgets stay linked to it both ways).

    Args:
        parameters: which levers (default: all but the reserve, plus a GiB reserve slider).
        compact: one horizontal strip of narrow widgets (embed mode).
    """
    widgets = {
        "batch": {"type": pn.widgets.DiscreteSlider, "options": _stops(BATCH_STOPS), "css_classes": ["batch"]},
        "spec_k": {"type": pn.widgets.IntSlider, "start": 1, "end": 16, "css_classes": ["spec-k"]},
        "context": {"type": pn.widgets.DiscreteSlider, "options": _stops(CONTEXT_STOPS, _token_label),
                    "css_classes": ["context"]},
        "prompt_len": {"type": pn.widgets.DiscreteSlider, "options": _stops(PROMPT_STOPS, lambda v: f"{v:,}"),
                       "css_classes": ["prompt-len"]},
        "gqa": {"type": pn.widgets.Checkbox, "css_classes": ["gqa"]},
        "acceptance": {"type": pn.widgets.FloatSlider, "start": 0.0, "end": 1.0, "step": 0.05,
                       "css_classes": ["acceptance"]},
    }
    parameters = parameters or PARAMETERS
    if compact:
        widgets = {name: {**widgets.get(name, {}), "width": 150} for name in parameters}
    panel = pn.Param(scenario, parameters=parameters, widgets=widgets, show_name=False, sizing_mode="stretch_width",
                     default_layout=pn.FlexBox if compact else pn.Column)
    for name in ("batch", "context", "prompt_len"):
        if name in parameters:
            _keep_in_options(scenario, panel, name)
    if compact:
        return panel
    reserve = pn.widgets.FloatSlider(label="Reserve for activations and slack (GiB)", start=0, end=16, step=0.5,
                                     value=round(scenario.reserve_bytes / GiB * 2) / 2, sizing_mode="stretch_width")
    reserve.param.watch(lambda e: setattr(scenario, "reserve_bytes", e.new * GiB), "value")
    scenario.param.watch(lambda e: setattr(reserve, "value", e.new / GiB), "reserve_bytes")
    return pn.Column(panel, reserve, sizing_mode="stretch_width")


def _keep_in_options(scenario: Scenario, panel: pn.Param, name: str) -> None:
    """A discrete slider only shows values it offers; a scenario value set elsewhere
    (the command line, a tour step) that is not a stop becomes one, so the slider
    never silently disagrees with the model."""
    label = scenario.param[name].label
    widget = next(w for w in panel.select(pn.widgets.DiscreteSlider) if w.label == label)

    def admit(value: int) -> None:
        if value not in widget.values:
            text = _token_label(value) if name == "context" else f"{value:,}"
            widget.options = dict(sorted({**widget.options, text: value}.items(), key=lambda kv: kv[1]))
        widget.value = value

    admit(getattr(scenario, name))
    scenario.param.watch(lambda e: admit(e.new), name)
