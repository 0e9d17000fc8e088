"""What ``panel serve app`` builds for a session, built in process with Panel's
own session generator (the one ``panel serve --warm`` uses)."""

from __future__ import annotations

import gc

import pytest
from bokeh.core.validation.check import check_integrity
from bokeh.settings import settings
from panel.io.session import generate_session

from app.notifications import DISCONNECT_NOTICE, READY_NOTICE
from core.model_catalogue import CATALOGUE_DIR


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
    assert gc.get_threshold() == (5_000, 10, 1_000)
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


# -- issue 31, F1: a config is read off the event loop every session shares ---------------------------------------
def served_lab():
    """A :class:`app.lab.Lab` in a document with a session context, as a served session's (its callbacks are
    collected, not run: the test runs them, as the server's event loop would)."""
    from bokeh.application import Application
    from bokeh.application.handlers.function import FunctionHandler

    from app.lab import Lab

    made = {}

    def build(doc):
        made["lab"] = Lab()
        made["lab"].layout.server_doc(doc)

    session = generate_session(Application(FunctionHandler(build)))
    return made["lab"], session.document


def run_next_ticks(doc) -> None:
    """Run the next-tick callbacks the document holds, as the session's event loop would."""
    from bokeh.server.callbacks import NextTickCallback

    for cb in [cb for cb in doc.session_callbacks if isinstance(cb, NextTickCallback)]:
        doc.remove_next_tick_callback(cb)
        cb.callback()


def loop_until(doc, done, seconds: float = 60) -> None:
    """Run the document's next ticks until ``done()``, as the event loop would while a worker reads."""
    import time

    deadline = time.monotonic() + seconds
    while not done():
        assert time.monotonic() < deadline, "the read never came back"
        run_next_ticks(doc)
        time.sleep(0.02)


def test_a_config_is_read_in_a_worker_and_applied_on_the_sessions_next_tick(monkeypatch):
    import json
    import threading

    from fuzz_strategies import heavy_hybrid_config
    from panel.io.state import set_curdoc

    import app.byo_view as byo_view

    lab, doc = served_lab()
    readers, release = [], threading.Event()
    real = byo_view.from_hf_config

    def reader(*args, **kw):
        readers.append(threading.current_thread())
        assert release.wait(30)
        return real(*args, **kw)

    monkeypatch.setattr(byo_view, "from_hf_config", reader)
    monkeypatch.setattr(byo_view, "_READS", byo_view.OrderedDict())  # not read before in this process
    byo = lab.byo
    byo.config_text.value = json.dumps(heavy_hybrid_config())
    with set_curdoc(doc):
        byo._read_config()  # what the button's click runs on the event loop
    # The click returned while the read is still under way: the loop is free for every other session.
    assert "Reading config…" in byo.config_report.object and byo.read_config.loading
    assert lab.state.scenario.model == "llama-3-70b"
    run_next_ticks(doc)  # the loop runs on (Panel's own next ticks): nothing of the read is applied yet
    assert lab.state.scenario.model == "llama-3-70b" and "Reading config…" in byo.config_report.object
    release.set()
    loop_until(doc, lambda: not byo.read_config.loading)
    assert [t.name.startswith("config-reader") for t in readers] == [True]
    assert readers[0] is not threading.main_thread()
    assert lab.state.scenario.model == "config-heavy-hybrid" and lab.state.result.model.n_layers == 2048
    assert "Read heavy-hybrid: now the selected model" in byo.config_report.object
    assert not byo.read_config.loading


def test_a_read_overtaken_by_another_choice_is_dropped():
    import time

    from panel.io.state import set_curdoc

    lab, doc = served_lab()
    byo = lab.byo
    text = (CATALOGUE_DIR / "mistral-7b.json").read_text()

    byo.config_text.value = text
    with set_curdoc(doc):
        byo._read_config()
    lab.state.scenario.model = "qwen2.5-7b"  # the student picks another model while it reads
    loop_until(doc, lambda: not byo.read_config.loading)
    assert lab.state.scenario.model == "qwen2.5-7b"
    assert "not applied: another model was chosen meanwhile" in byo.config_report.object
    assert "keeps Qwen2.5-7B" in byo.config_report.object
    assert not byo.read_config.loading
    # Two reads in a row: only the second is shown, whichever lands first (the first's result is stale).
    with set_curdoc(doc):
        byo._read_config()
        byo.config_text.value = '{"model_type": "llama"}'
        byo._read_config()
    loop_until(doc, lambda: not byo.read_config.loading)
    time.sleep(0.5)  # the first read, overtaken, lands too (or has): it must change nothing
    run_next_ticks(doc)
    assert lab.state.scenario.model == "qwen2.5-7b"
    assert "Refused" in byo.config_report.object and "keeps Qwen2.5-7B" in byo.config_report.object
    assert not byo.read_config.loading


def test_a_config_pasted_again_is_read_once(monkeypatch):
    """A class pastes the config its teacher handed out: one read, the same immutable model for every session."""
    import json

    from fuzz_strategies import heavy_hybrid_config

    import app.byo_view as byo_view
    from core.scenario import Scenario

    monkeypatch.setattr(byo_view, "_READS", byo_view.OrderedDict())
    monkeypatch.setattr(byo_view, "READS_KEPT", 3)
    calls = []
    real = byo_view.from_hf_config
    monkeypatch.setattr(byo_view, "from_hf_config", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    text = json.dumps(heavy_hybrid_config(64))
    first = byo_view._read(text, None, Scenario())
    second = byo_view._read(text, None, Scenario())
    assert len(calls) == 1 and first[1] is second[1] and first[2] == second[2]
    assert first[1].n_layers == 64
    # a file's name names the model when the config does not: another key
    unnamed = json.dumps({k: v for k, v in heavy_hybrid_config(64).items() if k != "_name_or_path"})
    assert byo_view._read(unnamed, ("mine.json", unnamed), Scenario())[1].name == "mine"
    assert byo_view._read(unnamed, None, Scenario())[1].name == "LlamaForCausalLM"  # pasted: its class
    refused = byo_view._read('{"model_type": "llama"}', None, Scenario())
    assert isinstance(refused, byo_view.ConfigError)
    assert len(byo_view._READS) == 3 and len(calls) == 4  # bounded: the oldest read was dropped


def test_a_report_is_made_once_per_model_and_its_apply_reaches_the_browser_as_one_message(monkeypatch):
    """A class pasting one config: one report for the one model (its worker made it 20 times), and the apply's
    changes held into one message (the button, the report and every view of the new model)."""
    import json

    from fuzz_strategies import heavy_hybrid_config
    from panel.io.state import set_curdoc

    import app.byo_view as byo_view

    made = []
    real = byo_view._report_html
    monkeypatch.setattr(byo_view, "_report_html", lambda m: made.append(m) or real(m))
    monkeypatch.setattr(byo_view, "_REPORTS", byo_view.OrderedDict())
    text = json.dumps(heavy_hybrid_config(64))
    reads = [byo_view._read(text, None, served_lab()[0].state.scenario.clone()) for _ in range(3)]
    assert len(made) == 1 and all(r[2] is reads[0][2] for r in reads)
    assert "Read heavy-hybrid: now the selected model" in reads[0][2]

    lab, doc = served_lab()
    byo = lab.byo
    held = []
    byo.config_report.param.watch(lambda _e: held.append(doc.callbacks.hold_value), "object")
    byo.config_text.value = text
    with set_curdoc(doc):
        byo._read_config()
        loop_until(doc, lambda: not byo.read_config.loading)
    assert "Read heavy-hybrid" in byo.config_report.object
    assert len(held) == 2 and held[1] == "combine"  # "Reading config…", then the report inside Panel's hold


def test_reads_landing_together_are_applied_one_session_at_a_time(monkeypatch):
    """Twenty sessions' reads of one config land within milliseconds; applied all at once they held every other
    student's update behind them.  The reader hands a session its read only once the previous one was applied."""
    import json
    import time

    from fuzz_strategies import heavy_hybrid_config
    from panel.io.state import set_curdoc

    import app.byo_view as byo_view

    monkeypatch.setattr(byo_view, "APPLY_WAIT_S", 30.0)  # a session that never applies holds the next up to this
    text = json.dumps(heavy_hybrid_config(64))
    (first, doc1), (second, doc2) = served_lab(), served_lab()
    loop_until(doc1, byo_view._APPLIED.is_set, 5)  # nothing handed over by an earlier test is still pending
    for lab, doc in ((first, doc1), (second, doc2)):
        lab.byo.config_text.value = text
        with set_curdoc(doc):
            lab.byo._read_config()
    time.sleep(2.0)  # both reads are done by now
    run_next_ticks(doc2)  # the second session's loop turns first: its read waits for the first's apply
    assert second.byo.read_config.loading and "Reading config…" in second.byo.config_report.object
    run_next_ticks(doc1)
    assert "Read heavy-hybrid" in first.byo.config_report.object
    loop_until(doc2, lambda: not second.byo.read_config.loading, 5)
    assert "Read heavy-hybrid" in second.byo.config_report.object and byo_view._APPLIED.is_set()


def test_reads_queued_together_leave_the_loop_half_its_time(monkeypatch):
    """Twenty applies handed over back to back kept the loop busy for half a second (15–25 ms each), and the other
    students' moves queued behind them.  After an apply that took d seconds, the reader hands over the next read
    no sooner than d / APPLY_SHARE after that apply began."""
    import json
    import time

    from fuzz_strategies import heavy_hybrid_config
    from panel.io.state import set_curdoc

    import app.byo_view as byo_view

    assert byo_view.APPLY_SHARE == 0.5
    text = json.dumps(heavy_hybrid_config(64))
    lab, doc = served_lab()
    loop_until(doc, byo_view._APPLIED.is_set, 5)  # nothing handed over by an earlier test is still pending
    byo = lab.byo
    started = (byo._generation, byo.scenario.catalogue, byo.scenario.model)
    read = byo_view._read(text, None, byo.scenario.clone())
    began = time.perf_counter()
    with set_curdoc(doc):
        byo._show_read(started, read, served=True)
    ended = time.perf_counter()
    assert "Read heavy-hybrid" in byo.config_report.object and byo_view._APPLIED.is_set()
    # The next may go once as long again has passed as the apply took (within the span measured around it).
    assert ended < byo_view._NEXT_APPLY[0] <= ended + (ended - began)

    handed = []
    monkeypatch.setattr(doc, "add_next_tick_callback", lambda _cb: handed.append(time.perf_counter()))
    byo_view._NEXT_APPLY[0] = time.perf_counter() + 0.3
    asked = time.perf_counter()
    byo._read_and_hand_over(doc, started, text, None, byo.scenario.clone())
    assert len(handed) == 1 and handed[0] - asked >= 0.3
    byo_view._APPLIED.set()  # the session never ran it: the next test's reads may go
