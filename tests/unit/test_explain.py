"""``explain``'s derivation: every printed equation multiplies out."""

import pytest

from core import Scenario


@pytest.mark.parametrize("model, sum_text", [
    ("gemma-3-27b", "52 × 8,192 bytes × 1,024 + 10 × 8,192 bytes × 131,072 = 11.17 GB"),
    ("llama-4-scout", "36 × 4,096 bytes × 8,192 + 12 × 4,096 bytes × 131,072 = 7.65 GB"),
    ("nemotron-h-56b", "10 × 4,096 bytes × 131,072 + 54 × 8,511,488 bytes = 5.83 GB"),
])
def test_kv_per_sequence_multiplies_out_layer_group_by_group_where_windows_or_state_hold(model, sum_text):
    """An engineer's trial: Gemma-3-27B's "KV per sequence: KV per token × S … = 11.17 GB" beside "496 KiB" per
    token, which × 131,072 is 66.6 GB: the windowed layers hold 1,024 tokens.  The sum is written out."""
    from core.explain import quantities

    r = Scenario(model=model, context=131072).evaluate()
    work = quantities(r)["kv-seq"].work
    assert sum_text in work
    terms = r.model.kv_terms(r.kv_bytes_per_element, r.gqa)
    assert sum(t.layers * (t.bytes_per_token * min(131072, t.cap or 131072) + t.fixed_bytes) for t in terms) == \
        pytest.approx(r.kv_bytes_per_sequence, rel=1e-12)
    assert " × " not in quantities(Scenario(model="llama-3-8b").evaluate())["kv-seq"].work  # plain: per token × S


def test_the_capacity_line_gives_the_other_conventions_reading():
    """Article 000, Step 5 reads the H100's 80 GB as 80e9 bytes, 74.5 GiB, and finds 59 sequences; the lab's
    default reads GiB and finds 62.  The capacity line says the other reading (a lecturer's audit found nothing did)."""
    from core.explain import quantities

    binary = quantities(Scenario(model="llama-3-8b", batch=56).evaluate())["capacity"].work
    assert binary.endswith("; the capacity convention's other reading, datasheet GB read as 1e9 bytes (article 000, "
                           "Step 5), gives 74.51 GiB")
    assert round(80e9 / 2**30, 2) == 74.51
    decimal = quantities(Scenario(model="llama-3-8b", capacity_convention="decimal").evaluate())["capacity"].work
    assert decimal.endswith("gives 80.00 GiB")
