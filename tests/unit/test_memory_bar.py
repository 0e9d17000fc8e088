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
