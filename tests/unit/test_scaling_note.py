"""The Scaling tab's note on what TP does to the KV cache, by attention kind."""

from app.scaling_view import ScalingView
from app.state import LabState
from core.scenario import Scenario


def _note(scenario) -> str:
    view = ScalingView(state=LabState(scenario=scenario))
    view.update()
    return view.note.object


def test_the_note_says_an_mla_cache_is_whole_on_every_tp_gpu():
    # A new user's trial: DeepSeek-V3's note said "Once TP passes h_kv = 128 the KV cache is replicated", where the
    # lab's own readout says the latent is replicated on every TP GPU from TP = 1.
    note = _note(Scenario(model="deepseek-v3", tp=8, pp=2))
    assert "each TP GPU holds all of it from TP = 1" in note and "h_kv" not in note
    note = _note(Scenario(model="llama-3-70b"))
    assert "Once TP passes h_kv = 8 the KV cache is replicated and stops shrinking." in note
