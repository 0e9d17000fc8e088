"""What ``panel serve app`` builds for a session, built in process with Panel's
own session generator (the one ``panel serve --warm`` uses)."""

from __future__ import annotations

import gc

import pytest
from bokeh.core.validation.check import check_integrity
from bokeh.settings import settings
from panel.io.session import generate_session

from app.notifications import DISCONNECT_NOTICE, READY_NOTICE


@pytest.fixture(scope="module")
def application(served_application):
    return served_application


def session_doc(application):
    """A served session's document (the default page)."""
    return generate_session(application).document


def test_a_served_document_passes_bokehs_integrity_check(application):
    # main.py turns Bokeh's per-session check off for speed; this is where it runs instead.
    doc = session_doc(application)
    refs = set().union(*(root.references() for root in doc.roots))
    assert len(refs) > 100  # the whole page, not an empty document
    issues = check_integrity(refs)
    assert issues.error == [] and issues.warning == []
    assert settings.perform_document_validation() is False
    assert settings.perform_error_diagnostics() is False  # callback signatures: checked by the unit tests' builds
    # A class's sessions alive at once are not rescanned by the cyclic GC every 700 allocations (session_end).
    assert gc.get_threshold() == (20_000, 10, 10)
    # The default scenario: I = 2·B·k/p = 2·1·1/2 FLOP/byte at batch 1, BF16.
    assert list(doc.get_model_by_name("workload").data["x"]) == [1.0]


def test_bokehs_per_model_settings_are_read_once_with_the_environment(application, monkeypatch):
    """main.py keeps the value of two settings Bokeh reads for every model; an operator's environment still counts."""
    from bokeh.settings import SettingProvenance

    kept = (settings.simple_ids, settings.serialize_include_defaults)
    monkeypatch.setenv("BOKEH_SIMPLE_IDS", "no")
    try:
        for setting in kept:
            setting.unset_value()
        doc = session_doc(application)
        assert [s.get_value_with_provenance()[1] for s in kept] == [SettingProvenance.USER_SET] * 2
        assert settings.simple_ids() is False and settings.serialize_include_defaults() is False
        workload = doc.get_model_by_name("workload")
        assert not workload.id.startswith("p")  # Bokeh's unique ids, as the environment asked
        monkeypatch.delenv("BOKEH_SIMPLE_IDS")
        assert settings.simple_ids() is False  # kept: not looked up again for each model
    finally:
        for setting in kept:
            setting.unset_value()
    assert session_doc(application).get_model_by_name("workload").id.startswith("p")


def test_a_served_document_carries_the_connection_notices(application):
    doc = session_doc(application)
    area = doc.get_model_by_name("notifications")
    assert area is not None
    assert area.data.js_events["connection_lost"]["message"] == DISCONNECT_NOTICE
    assert area.data.js_events["document_ready"]["message"] == READY_NOTICE
    assert area.data.js_events["document_ready"]["duration"] > 0  # "ready" fades; "lost" stays (no duration)
    assert "duration" not in area.data.js_events["connection_lost"]


def test_the_class_page_is_served_beside_the_lab(tmp_path):
    """README, *A class of 100*: the exported offline page, served as a static file next to /app."""
    import urllib.request

    from conftest import start_lab, stop_lab

    from app.__main__ import main as app_main

    pages = tmp_path / "class"
    pages.mkdir()
    assert app_main(["export", "--model", "llama-3-8b", "--out", str(pages / "llama-3-8b.html")]) == 0
    proc, url = start_lab(tmp_path / "server.log", ["--static-dirs", f"class={pages}"])
    try:
        with urllib.request.urlopen(url.rsplit("/app", 1)[0] + "/class/llama-3-8b.html", timeout=30) as resp:
            page = resp.read().decode("utf-8")
    finally:
        stop_lab(proc)
    assert "Roofline Lab — Llama-3-8B on NVIDIA H100 SXM5 80GB" in page and len(page) > 1_000_000
