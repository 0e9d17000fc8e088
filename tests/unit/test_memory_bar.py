"""The memory bar's words (app/memory_view.py): every number with its unit."""

import re

import pytest

from app.memory_view import memory_html
from core.scenario import Scenario


def test_each_segment_names_its_size_in_gib():
    # The teacher's trial: "KV cache 56.0" beside the header's "60.1 GB KV read" read as the same unit.
    r = Scenario(model="llama-3-8b", gpu="h100-sxm", batch=56, context=8192).evaluate()
    labels = re.findall(r"<span>([^<]*)</span>", memory_html(r))
    assert "KV cache 56.0 GiB" in labels  # 2·32·8·128·8,192·56·2 bytes = 56.0 GiB (60.1 GB)
    assert all(label.endswith(" GiB") for label in labels)


def test_the_bar_is_not_shown_beside_the_ladder_whose_rows_each_say_what_fits():
    # Issue 30, tour step 25: the card talks of the climbed ladder (681 sequences fit, B = 256) while the bar showed
    # the lab's own scenario (9 fit, B = 1); a line above it saying so did not help a teacher's trial (step 23: "48
    # fit" in the card and the strip, "largest batch: 9" on the bar).
    from app.lab import Lab
    from core.tour import TOUR, ladder_caption_values

    lab = Lab(query={"present": "true", "tour": "25"})
    assert lab.state.tab == "Ladder"
    assert not lab.memory_view.__panel__().visible
    climbed = ladder_caption_values(TOUR[24].levers(), TOUR[24].rungs)
    assert (climbed["fit"], climbed["b"]) == (681, 256)  # what the card and the rows quote
    lab.state.tab = "Roofline"  # the bar's scenario is the page's
    assert lab.memory_view.__panel__().visible and "(largest batch at S = 8,192: 9)" in lab.memory_view.bar.text


@pytest.mark.parametrize(("model", "batch", "title", "parts"), [
    # 38.9568 + 12.1875 + 3 = 54.1443: at two decimals 38.96 + 12.19 + 3.00 = 54.15, beside 54.14
    ("gpt-oss-20b", 64, "54.1443 GiB of", ("weights 38.9568 GiB", "KV cache 12.1875 GiB")),
    ("llama-3-8b", 32, "50.0 GiB of", ("weights 15.0 GiB", "KV cache 32.0 GiB")),
])
def test_the_bars_parts_add_to_the_total_it_prints(model, batch, title, parts):
    """The parts printed on the bar add to the title's total as printed: they take the decimals that make them."""
    html = memory_html(Scenario(model=model, batch=batch).evaluate())
    assert f"Memory: {title}" in html and all(f"<span>{p}</span>" in html for p in parts)
    # every part, as labelled on the bar or (too narrow for words) in its tooltip, at the title's decimals
    decimals = len(title.split()[0].partition(".")[2])
    printed = [float(f"{float(x):.{decimals}f}") for x in re.findall(r'title="[^:"]+: ([\d.]+) GiB"', html)]
    assert len(printed) == 3 and round(sum(printed), decimals) == float(title.split()[0])
