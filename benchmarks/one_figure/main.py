"""The load test's yardstick: a one-figure, one-slider Panel page (``panel serve benchmarks/one_figure``).

What the lab's per-session cost is compared with (``benchmarks/load_test.py --app benchmarks/one_figure``):
the least a served Panel page with a live chart builds. A log-log Bokeh figure with the roof
``min(P_peak, BW·I)`` of an H100 SXM (989.4 TFLOP/s dense BF16, 3.35 TB/s) and the decode workload's point
at ``I = 2·B·k/p`` (k = 1, p = 2 bytes), and one slider over the lab's batch stops (CSS class ``batch``,
its value the stop's index) whose move the server answers by rewriting the point's source, named
``workload`` with a ``batch`` column, as the lab's is: the load test's students find both by those names.
"""

import panel as pn
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure

from core.scenario import LEVERS

STOPS = list(LEVERS["batch"].stops)
PEAK_TFLOPS, BW_TBS = 989.4, 3.35


def point(batch: int) -> dict:
    intensity = 2 * batch / 2  # FLOP/byte
    return {"x": [intensity], "y": [min(PEAK_TFLOPS, BW_TBS * intensity)], "batch": [batch]}


workload = ColumnDataSource(data=point(STOPS[0]), name="workload")
fig = figure(x_axis_type="log", y_axis_type="log", x_range=(0.1, 1e5), y_range=(0.01, 2e4), height=540,
             sizing_mode="stretch_width", x_axis_label="arithmetic intensity I (FLOP/byte)",
             y_axis_label="attainable TFLOP/s")
fig.line([0.1, PEAK_TFLOPS / BW_TBS, 1e9], [BW_TBS * 0.1, PEAK_TFLOPS, PEAK_TFLOPS], line_width=3)
fig.scatter("x", "y", source=workload, size=14)
slider = pn.widgets.IntSlider(name="Batch B", start=0, end=len(STOPS) - 1, value=0, css_classes=["batch"])


def move(event) -> None:
    workload.data = point(STOPS[event.new])


slider.param.watch(move, "value")
pn.Column(slider, pn.pane.Bokeh(fig), sizing_mode="stretch_width").servable(title="One figure")
