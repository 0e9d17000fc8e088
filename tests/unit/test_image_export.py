"""Chart images (issue 30): SVG and PNG at 2x from every chart tab's own toolbar, no switch of the figure's backend."""

from __future__ import annotations

import panel as pn
from bokeh.models import CustomAction, SaveTool

from app.image_export import PNG_SCALE, SAVE_IMAGE_JS
from app.lab import Lab


def actions(fig) -> dict[str, CustomAction]:
    return {a.callback.args["kind"]: a for a in fig.toolbar.tools if isinstance(a, CustomAction)}


def test_every_chart_tab_saves_svg_and_a_2x_png_from_its_toolbar():
    lab = Lab(query={"pins": '[{"name": "a", "batch": "4"}]'})
    for tab in ("Throughput vs B", "Scaling", "Compare"):
        lab.state.tab = tab
    charts = {"roofline": lab.roofline.figure, "throughput-vs-batch": lab.throughput.figure,
              "compare": lab.compare.figures[0]}
    charts.update({f.name.removesuffix("-figure"): f for f in (lab.scaling.times_fig, lab.scaling.rates_fig)})
    assert {"scaling-time", "scaling-rate"} <= set(charts)
    for stem, fig in charts.items():
        saves = actions(fig)
        assert set(saves) == {"svg", "png"}, stem
        assert not any(isinstance(t, SaveTool) for t in fig.toolbar.tools), stem  # 1x PNG behind a prompt
        for action in saves.values():
            args = action.callback.args
            assert args["stem"] == stem and args["scale"] == PNG_SCALE == 2 and action.callback.code == SAVE_IMAGE_JS
            # The roofline and each chart save themselves; Compare's top row saves its whole grid. By name: a model
            # in the toolbar's callbacks would make the grid's figures part of the top one (present mode scaled
            # their markers twice).
            assert args["target"] == ("compare-grid" if stem == "compare" else fig.name), stem
            assert lab.compare.grid.name == "compare-grid"
        assert saves["svg"].description == f"Save as SVG ({stem}-….svg, named after the chart's scenario)"
        assert saves["png"].description == f"Save as PNG at 2× ({stem}-…@2x.png)"


def test_compares_rows_keep_their_own_markers_in_present_mode():
    lab = Lab(query={"present": "true", "pins": '[{"name": "a", "batch": "4"}]', "tab": "Compare"})
    sizes = {g.glyph.size for f in lab.compare.figures for g in f.renderers if hasattr(g.glyph, "marker")}
    assert sizes == {15 * 1.35}  # MARKER_SCALE once, in every row


def test_the_export_tab_no_longer_switches_the_roofline_backend():
    """BokehJS builds a plot's canvas once: a later output_backend = "svg" drew nothing new and saved PNG still."""
    lab = Lab(query={"tab": "Export"})
    export = lab._tab_views["Export"]
    assert not [w for w in export.select(pn.widgets.Checkbox) if "svg" in w.css_classes]
    assert any("saves the chart as you see it, as **SVG**" in md.object for md in export.select(pn.pane.Markdown))
    assert lab.roofline.figure.output_backend == "canvas"
