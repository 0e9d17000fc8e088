"""A tab's first open, piece by piece: what each turn of the shared event loop costs (run by hand).

    .venv/bin/python benchmarks/tab_pieces.py Hardware [Scaling ...] [--runs 3] [--config FILE | --heavy]

Builds a session in process as ``panel serve app`` would (Panel's session generator, the one ``panel serve
--warm`` uses), opens the named tab, and runs the pieces :mod:`app.turns` would queue one per turn, timing each
with the PATCH-DOC message it makes (Bokeh serialises the patch when the message is created).  Prints each
piece's wall-clock time in milliseconds, the minimum over ``--runs`` sessions: the first figure is the tab
change itself, the others the pieces in the order the loop would run them.  On a served lab the largest piece
is the longest any other student's update can wait behind this student's tab.  ``--config FILE`` reads a
config.json into the session first (not timed), as "Read config" on Bring your own does; ``--heavy`` reads issue
31's heavy config (tests/fuzz_strategies.py ``heavy_hybrid_config``: 2,048 layers of five kinds).
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bokeh.application.handlers.document_lifecycle import DocumentLifecycleHandler  # noqa: E402
from bokeh.command.util import build_single_handler_application  # noqa: E402
from bokeh.protocol import Protocol  # noqa: E402
from panel.io.session import generate_session  # noqa: E402
from panel.io.state import set_curdoc  # noqa: E402

from app import turns  # noqa: E402
from app.lab import Lab  # noqa: E402

BYO = "Bring your own"


def pieces_ms(application, tab: str, config: str | None = None) -> list[float]:
    """One fresh session's first open of ``tab``, after reading ``config`` (a config.json's text) if given: each
    piece's time, ms (the tab change first)."""
    queued: list = []
    take_turn, turns.take_turn = turns.take_turn, lambda doc, work: queued.append(work)  # run here, one at a time
    try:
        return _pieces(application, tab, queued, config)
    finally:
        turns.take_turn = take_turn


def _pieces(application, tab: str, queued: list, config: str | None) -> list[float]:
    before = {id(o) for o in gc.get_objects() if isinstance(o, Lab)}
    doc = generate_session(application).document
    (lab,) = [o for o in gc.get_objects() if isinstance(o, Lab) and id(o) not in before]
    if config is not None:  # as a student does: open Bring your own, then paste and read (at once, not timed)
        with set_curdoc(doc):
            lab.state.tab = BYO
            while queued:
                queued.pop(0)()
        lab.byo.config_text.value = config
        lab.byo._read_config()
        if not lab.scenario.model.startswith("config-"):
            raise SystemExit(f"the config was not read: {lab.byo.config_report.object}")
    events: list = []
    doc.callbacks.on_change(events.append)
    protocol = Protocol()
    times = []
    with set_curdoc(doc):
        work = lambda: setattr(lab.state, "tab", tab)  # noqa: E731
        while work is not None:
            start = time.perf_counter()
            work()
            if events:
                protocol.create("PATCH-DOC", events)
            times.append((time.perf_counter() - start) * 1e3)
            events.clear()
            work = queued.pop(0) if queued else None
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tabs", nargs="+", help="tab names as the lab's tab strip shows them")
    parser.add_argument("--runs", type=int, default=3, help="sessions per tab; the minimum of each piece is shown")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--config", type=Path, help="a config.json to read into each session first")
    source.add_argument("--heavy", action="store_true", help="issue 31's heavy config instead")
    args = parser.parse_args(argv)
    config = args.config.read_text() if args.config else None
    if args.heavy:
        sys.path.insert(0, str(ROOT / "tests"))
        from fuzz_strategies import heavy_hybrid_config

        config = json.dumps(heavy_hybrid_config())
    application = build_single_handler_application(str(ROOT / "app"))
    application.add(DocumentLifecycleHandler())
    for tab in args.tabs:
        runs = [pieces_ms(application, tab, config) for _ in range(args.runs)]
        best = [min(run[i] for run in runs if i < len(run)) for i in range(max(map(len, runs)))]
        print(f"{tab}: pieces " + " / ".join(f"{t:.0f}" for t in best) + f" ms (sum {sum(best):.0f} ms, "
              f"largest {max(best[1:] or best):.0f} ms)")


if __name__ == "__main__":
    main()
