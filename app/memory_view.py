"""Memory bar: weights + KV cache + reserve against the card's capacity (GiB)."""

from __future__ import annotations

from bokeh.models import ColumnDataSource, Span
from bokeh.plotting import figure

from core.hardware import CAPACITY_CONVENTIONS
from core.scenario import ScenarioResult
from core.units import GiB

PARTS = ("weights", "KV cache", "reserve")
COLORS = ("#1f77b4", "#d62728", "#9e9e9e")


class MemoryView:
    """A one-row stacked bar (GiB) with the capacity drawn as a vertical line."""

    def __init__(self, result: ScenarioResult):
        self.source = ColumnDataSource(data=self._data(result))
        self.figure = figure(
            y_range=["memory"], height=150, sizing_mode="stretch_width", toolbar_location=None,
            x_axis_label="GiB (2^30 bytes)", name="memory",
        )
        self.figure.hbar_stack(list(PARTS), y="row", height=0.6, color=list(COLORS), source=self.source,
                               legend_label=list(PARTS))
        self.capacity = Span(location=0, dimension="height", line_color="black", line_width=3)
        self.figure.add_layout(self.capacity)
        legend = self.figure.legend[0]
        legend.label_text_font_size = "11px"
        self.figure.add_layout(legend, "right")
        self.figure.yaxis.visible = False
        self.figure.x_range.start = 0
        self.update(result)

    @staticmethod
    def _data(r: ScenarioResult) -> dict:
        return {
            "row": ["memory"],
            "weights": [r.weight_bytes / GiB],
            "KV cache": [r.kv_bytes / GiB],
            "reserve": [r.reserve_bytes / GiB],
        }

    def update(self, r: ScenarioResult) -> None:
        """Show ``r``'s memory use against its capacity."""
        self.source.data = self._data(r)
        cap = r.capacity_bytes / GiB
        self.capacity.location = cap
        self.figure.x_range.end = max(cap, r.memory_used_bytes / GiB) * 1.08
        verdict = "fits" if r.fits else "DOES NOT FIT"
        self.figure.title.text = (
            f"Memory: {r.memory_used_bytes / GiB:,.1f} GiB of {cap:,.1f} GiB → {verdict}"
            f"   (largest batch at S = {r.context:,}: {r.max_batch:,})"
        )
        self.figure.title.text_color = "#2e7d32" if r.fits else "#c62828"


def capacity_note(r: ScenarioResult) -> str:
    """One sentence saying how the datasheet capacity became bytes (Markdown)."""
    g = r.gpu
    other = "decimal" if r.capacity_convention == "binary" else "binary"
    other_bytes = g.capacity_bytes(other)
    return (
        f"**Capacity:** the datasheet says {g.memory_datasheet_value:g} {g.memory_datasheet_unit} "
        f"{g.memory_type}; the lab reads it as **{r.capacity_bytes / GiB:,.1f} GiB** "
        f"({CAPACITY_CONVENTIONS[r.capacity_convention]}). "
        f"The other reading ({CAPACITY_CONVENTIONS[other]}) gives {other_bytes / GiB:,.1f} GiB."
    )
