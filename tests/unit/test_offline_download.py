"""The offline page a session downloads is written off the event loop the class shares (~0.3 s of CPU each)."""

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from app import exports_view
from app.state import LabState
from core import Scenario


def test_the_offline_page_is_written_in_its_worker_thread_from_a_copy_of_the_scenario(monkeypatch):
    seen = []

    def written(scenario, config):
        seen.append((threading.current_thread().name, scenario.batch, config))
        return "<!DOCTYPE html>page"

    monkeypatch.setattr(exports_view, "standalone_html", written)
    state = LabState(scenario=Scenario(batch=4))

    async def click_then_move():
        download = asyncio.ensure_future(exports_view.offline_page(state))
        await asyncio.sleep(0)  # the click's callback has started: the page is being written
        state.scenario.batch = 8  # the student moves on while the page is written: the page is the click's
        return await download

    # In a thread of its own: after the browser tier, Playwright's sync API keeps an event loop running in this one.
    with ThreadPoolExecutor(max_workers=1) as loop_thread:
        page = loop_thread.submit(lambda: asyncio.run(click_then_move())).result()
    assert page.read() == "<!DOCTYPE html>page"
    assert seen == [(seen[0][0], 4, None)] and seen[0][0].startswith("offline-page")


def test_the_download_button_awaits_the_page():
    from param.parameterized import iscoroutinefunction

    exports = exports_view.build_exports(LabState(scenario=Scenario()))
    button = next(w for w in exports.select() if "download-page" in (getattr(w, "css_classes", None) or []))
    assert iscoroutinefunction(button.callback)
