"""Heavy session work one piece at a time on the shared event loop (app/turns.py, issue 31)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from panel.io.state import set_curdoc
from tornado.ioloop import IOLoop

from app import turns


class FakeDoc:
    """A session's document as the queue sees it: next-tick callbacks run on the loop (or never, or refused)."""

    def __init__(self, mode: str = "run"):
        self.mode = mode

    def add_next_tick_callback(self, callback):
        if self.mode == "closed":
            raise RuntimeError("session destroyed")
        if self.mode == "run":
            IOLoop.current().add_callback(callback)
        # "dropped": accepted, never run (Bokeh ignores the callbacks of a session destroyed meanwhile)


def _run(scenario, seconds: float) -> None:
    """``scenario`` on an event loop of its own, in a thread of its own (after the browser tier, Playwright's sync
    API keeps a loop running in the main thread), for ``seconds``."""
    async def main():
        scenario()
        await asyncio.sleep(seconds)

    errors: list[BaseException] = []

    def thread():
        try:
            asyncio.run(main())
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            errors.append(exc)

    t = threading.Thread(target=thread)
    t.start()
    t.join(30)
    if errors:
        raise errors[0]


def test_pieces_run_one_at_a_time_in_order_with_the_loop_free_between_two():
    log: list[tuple[str, float, float]] = []
    ticks: list[float] = []

    def piece(name):
        def work():
            start = time.perf_counter()
            time.sleep(0.05)  # 50 ms of "build"
            log.append((name, start, time.perf_counter()))
        return work

    def other_session():  # another student's messages: the loop answers them between two pieces
        ticks.append(time.perf_counter())
        if len(ticks) < 200:
            IOLoop.current().call_later(0.005, other_session)

    def scenario():
        for name in "abcd":
            turns.take_turn(FakeDoc(), piece(name))
        other_session()

    _run(scenario, 0.6)
    assert [name for name, *_ in log] == list("abcd")
    for (_, _, end), (_, start, _) in zip(log, log[1:], strict=False):
        assert start - end >= 0.045  # a gap as long as the piece (GAP_FACTOR 1), not back to back
    # Between two pieces the other session's callbacks ran: it waited one piece at a time, not four back to back.
    # (Counted, not timed: a wait measured against 80 ms failed once at 87 ms on a loaded machine.)
    for (_, _, end), (_, start, _) in zip(log, log[1:], strict=False):
        assert any(end <= tick <= start for tick in ticks), "no other session's turn between two pieces"
    assert turns.pending() == 0 and not turns._state["running"]


def test_a_closed_or_silent_session_does_not_stop_the_queue(monkeypatch):
    monkeypatch.setattr(turns, "STALL_S", 0.1)
    ran: list[str] = []

    def scenario():
        turns.take_turn(FakeDoc("closed"), lambda: ran.append("closed"))
        turns.take_turn(FakeDoc("dropped"), lambda: ran.append("dropped"))
        turns.take_turn(FakeDoc(), lambda: ran.append("open"))

    _run(scenario, 0.4)
    assert ran == ["open"]
    assert turns.pending() == 0 and not turns._state["running"]


@pytest.fixture(autouse=True)
def _fresh_queue():
    yield
    turns._queue.clear()
    turns._state.update(running=False, turn=0)


def test_a_served_tabs_first_build_is_turns_made_then_placed(served_application, monkeypatch):
    """Served, opening Hardware queues the view's making; that queues its placing in the page, and that its front
    section (chart and levers): no piece runs in the event that opened the tab, and the tab shows Panel's spinner
    until the last."""
    import gc

    from panel.io.session import generate_session

    from app.lab import Lab

    queued = []
    monkeypatch.setattr(turns, "take_turn", lambda doc, work: queued.append((doc, work)))
    before = {id(o) for o in gc.get_objects() if isinstance(o, Lab)}
    doc = generate_session(served_application).document
    (lab,) = [o for o in gc.get_objects() if isinstance(o, Lab) and id(o) not in before]
    with set_curdoc(doc):
        lab.state.tab = "Hardware"
        assert len(queued) == 1 and lab.hardware is None and lab.tab_bar.loading  # nothing built in the click's event
        queued.pop(0)[1]()
        assert lab.hardware is not None and "Hardware" not in lab._tab_views  # made, not yet in the page
        assert len(queued) == 1 and lab.tab_bar.loading and "Hardware" not in lab._tab_panes
        queued.pop(0)[1]()
        # In the page, its front section (the Kernel atlas: its chart and levers) not yet: a third piece.
        assert lab._tab_views["Hardware"] is lab.hardware and "Hardware" in lab._tab_panes
        assert placeholder(lab.hardware.tabs[0]) and len(queued) == 1 and lab.tab_bar.loading
        queued.pop(0)[1]()
        section = lab.hardware.tabs[0]
        assert section.select(lambda o: getattr(o, "object", None) is lab.hardware.atlas_fig)
    assert not placeholder(lab.hardware.tabs[0]) and lab.hardware.atlas_fig in lab.hardware.figures()
    assert not lab.tab_bar.loading and not lab.tab_content.loading and queued == []
    assert queued == []


class ServedDoc(FakeDoc):
    """A served session's document, as :func:`app.turns.in_pieces` tells one: it has a session context."""

    session_context = object()


def test_in_pieces_gives_each_handed_piece_a_turn_of_its_own_after_its_parent(monkeypatch):
    queued: list = []
    monkeypatch.setattr(turns, "take_turn", lambda doc, work: queued.append(work))
    ran: list[str] = []

    def piece(name, *children):
        def work():
            ran.append(name)
            for child in children:
                turns.later(child)
        return work

    done = []
    turns.in_pieces(ServedDoc(), piece("a", piece("b", piece("c")), piece("d")), lambda: done.append(ran[:]))
    turns.in_pieces(ServedDoc(), piece("other session"))
    turns_taken = 0
    while queued:
        queued.pop(0)()
        turns_taken += 1
    # Each piece its own turn; a piece's own pieces before those handed before it by its parent's siblings.
    assert ran == ["a", "other session", "b", "c", "d"] and turns_taken == 5
    assert done == [["a", "other session", "b", "c", "d"]]


def test_without_a_server_the_pieces_run_at_once_and_an_error_still_ends_the_work():
    ran: list[str] = []
    turns.in_pieces(None, lambda: (ran.append("a"), turns.later(lambda: ran.append("b"))), lambda: ran.append("done"))
    assert ran == ["a", "b", "done"]
    turns.later(lambda: ran.append("outside"))  # outside in_pieces: at once
    assert ran[-1] == "outside"

    ended: list[bool] = []

    def fails():
        raise ValueError("broken piece")

    with pytest.raises(ValueError, match="broken piece"):
        turns.in_pieces(ServedDoc(), fails, lambda: ended.append(True)) or turns._queue[-1][1]()
    assert ended == [True]


def placeholder(tab) -> bool:
    """Whether a tab holds what it shows until it is first opened (app/style.py tab_placeholder)."""
    import panel as pn
    from bokeh.models import Spacer

    return isinstance(tab, pn.pane.Bokeh) and isinstance(tab.object, Spacer)



def _served_lab(served_application):
    import gc

    from panel.io.session import generate_session

    from app.lab import Lab

    before = {id(o) for o in gc.get_objects() if isinstance(o, Lab)}
    doc = generate_session(served_application).document
    (lab,) = [o for o in gc.get_objects() if isinstance(o, Lab) and id(o) not in before]
    return doc, lab


def test_the_tab_pieces_benchmark_times_each_turn_of_a_first_open(served_application):
    """benchmarks/tab_pieces.py: Hardware's first open is the tab change and three pieces (made, placed, the front
    section), each timed; the lab's own queue is back afterwards."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "tab_pieces.py"
    spec = importlib.util.spec_from_file_location("tab_pieces", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    take_turn = turns.take_turn
    times = bench.pieces_ms(served_application, "Hardware")
    assert len(times) == 4 and all(t > 0 for t in times)
    assert turns.take_turn is take_turn
