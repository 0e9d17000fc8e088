"""The memory bar's words (app/memory_view.py): every number with its unit."""

import re

from app.memory_view import memory_html
from core.scenario import Scenario


def test_each_segment_names_its_size_in_gib():
    # The teacher's trial: "KV cache 56.0" beside the header's "60.1 GB KV read" read as the same unit.
    r = Scenario(model="llama-3-8b", gpu="h100-sxm", batch=56, context=8192).evaluate()
    labels = re.findall(r"<span>([^<]*)</span>", memory_html(r))
    assert "KV cache 56.0 GiB" in labels  # 2·32·8·128·8,192·56·2 bytes = 56.0 GiB (60.1 GB)
    assert all(label.endswith(" GiB") for label in labels)


def test_beside_the_ladder_the_bar_says_it_shows_the_labs_scenario_not_the_climb():
    # Issue 30, tour step 25: the card talks of the climbed ladder (681 sequences fit, B = 256) while the bar showed
    # the lab's own scenario (9 fit, B = 1) without saying so.
    from app.lab import Lab
    from core.tour import TOUR, ladder_caption_values

    lab = Lab(query={"present": "true", "tour": "25"})
    assert lab.state.tab == "Ladder"
    shown = lab.memory_view.bar.text
    assert ('<div class="mem-scope" data-readout="memory-scope">The lab&#x27;s scenario at B = 1, before the '
            'ladder&#x27;s rungs</div>') in shown  # above the title
    assert "(largest batch at S = 8,192: 9)" in shown  # the lab's scenario: BF16, B = 1, 8,192 tokens reserved
    climbed = ladder_caption_values(TOUR[24].levers(), TOUR[24].rungs)
    assert (climbed["fit"], climbed["b"]) == (681, 256)  # what the card quotes: not the bar's
    lab.state.tab = "Roofline"  # the bar's scenario is the page's: nothing to say
    assert "memory-scope" not in lab.memory_view.bar.text
