"""A batch move's server computation is the step and the profile it reads: few modules, no coming and going.

What a student's batch move costs the server is :meth:`Scenario.evaluate` after the move (app/state.py): once
the model is deployed (:func:`core.profiles.deployment`, kept), that must be the steps of one profile
(:func:`core.step.workload`) and the result built from them, not a walk through the model and the split again.
"""

from __future__ import annotations

import sys

from core import Scenario


def module_entries(fn) -> list[str]:
    """The lab's modules (``core.*``) entered while ``fn()`` runs, in order: one entry per call that crosses
    from one module into another (calls within a module, and returns, are not entries)."""
    entries: list[str] = []

    def profile(frame, event, _arg):
        if event != "call":
            return
        module = frame.f_globals.get("__name__", "")
        caller = frame.f_back.f_globals.get("__name__", "") if frame.f_back else ""
        if module.startswith("core.") and module != caller:
            entries.append(module)

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return entries


def returns_to_modules_left(entries: list[str]) -> int:
    """Entries into a module that had already been entered once (and so left)."""
    return len(entries) - len(set(entries))


def test_a_batch_move_is_the_step_on_its_profile():
    for levers in ({}, {"model": "qwen3-30b-a3b", "tp": 2, "ep": 2}, {"model": "deepseek-v3", "tp": 8, "pp": 2},
                   {"model": "gpt-oss-20b", "weight_dtype": "stored", "context": 131072}):
        s = Scenario(**levers)
        s.evaluate()  # the model deployed (a student's first view)
        s.batch = 8
        entries = module_entries(s.evaluate)
        assert "core.step" in entries and "core.profiles" in entries
        assert len(set(entries)) <= 6, entries
        assert returns_to_modules_left(entries) <= 2, entries
        for module in ("core.models", "core.parallelism", "core.layers", "core.hardware", "core.catalogue"):
            assert module not in entries, (module, entries)


def test_the_tracer_sees_a_walk_through_the_model(monkeypatch):
    """The measure can fail: building a deployment walks the model and the split (with the deployments kept by
    core.profiles emptied first: another test may have built this one already in the same process)."""
    from core import profiles

    s = Scenario(model="qwen3-30b-a3b", tp=2)
    monkeypatch.setattr(profiles, "_CACHE", type(profiles._CACHE)())
    entries = module_entries(s.evaluate)
    assert {"core.models", "core.parallelism"} <= set(entries)
    assert returns_to_modules_left(entries) > 2
