"""Each chart says what it plots to a screen reader: its canvas is drawn, not text (app/style.py describe_chart)."""

from __future__ import annotations

from bokeh.document import Document
from bokeh.models import Plot

from app.hardware_view import SECTIONS
from app.lab import Lab
from app.roofline_view import ROOFLINE_TEXT
from app.state import TABS


def test_every_chart_of_every_tab_carries_its_own_text():
    lab = Lab(query={"pins": '[{"name": "a", "batch": "4"}, {"name": "b", "batch": "64"}]'})
    for tab in TABS:
        lab.state.tab = tab
    for section in SECTIONS:
        lab.hardware.section = section
    doc = Document()
    doc.add_root(lab.layout.get_root(doc))
    plots = [m for m in doc.models if isinstance(m, Plot)]
    texts = {m.name: m.html_attributes.get("data-chart") for m in plots}
    assert len(plots) >= 20, sorted(texts)  # the roofline, throughput, ladder, 2 scaling, compare rows, 10 hardware
    assert all(texts.values()), [name for name, text in texts.items() if not text]
    # Each says its own chart: no two charts of different kinds share a text (Compare's rows differ by metric).
    assert len(set(texts.values())) == len(plots), texts
    assert texts["roofline"].startswith(ROOFLINE_TEXT) and texts["roofline"].endswith("in the readouts.")
    assert "tensor-parallel degree TP" in texts["scaling-time-figure"]
    assert texts["hw-timeline-fig"].endswith("the list under the chart gives each.")


def test_the_embeds_chart_points_to_its_summary():
    lab = Lab(query={"embed": "true"})
    assert lab.roofline.figure.html_attributes["data-chart"].endswith("in the summary above it.")
