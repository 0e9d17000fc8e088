"""Paste storm: students paste issue 31's heavy config at once while others move a slider (run by hand).

    .venv/bin/python benchmarks/paste_storm.py [--pasters 20] [--movers 10] [--moves 8] [--think 0.5]

Against a real ``panel serve app`` on 127.0.0.1 (bounded: at most 60 s of lesson, then everyone leaves):

* ``--movers`` students (:class:`protocol_student.ProtocolStudent`, Bokeh's protocol on the wire) join, then
  move the batch slider ``--moves`` times; each move is timed until the server's new ``workload`` data arrives.
* ``--pasters`` students open ``?tab=Bring your own``, set the config text area to the heavy config
  (tests/fuzz_strategies.py ``heavy_hybrid_config``: Llama-3-8B with 2,048 layers cycling full / sliding /
  chunked / linear / Mamba, 37 KB) and click "Read config", all within a second of the movers' first moves;
  each is timed until the server's report "Read heavy-hybrid" arrives.
* The event loop's lag: a probe asks the server for a missing path (a 404 Tornado answers on the event loop
  at once) every 20 ms from its own thread; the time above the quiet median is how long the loop was busy
  elsewhere.  The largest such lag during the storm bounds what any one accepted input cost the loop.
* ``--py-spy FILE``: py-spy samples the server's threads from the go to the last report (the storm only, not the
  joins), into FILE in py-spy's raw format (one line a stack and its count).
* ``--asyncio-debug``: the server runs in asyncio's debug mode, whose log names every callback that held the
  loop over 100 ms.  Not the default: that mode records a stack trace for every future and callback the loop
  makes (a third of the loop's time during the storm, sampled with pyinstrument), so it measures a slower
  server than a class gets.

Prints the movers' update p50/p95/max, the pasters' time to the report, the largest loop lag, and the load
average (the machine's other work shares its cores: read the figures beside it).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bokeh.protocol.messages.patch_doc import patch_doc  # noqa: E402
from conftest import start_lab, stop_lab  # noqa: E402
from fuzz_strategies import heavy_hybrid_config  # noqa: E402
from protocol_student import READY_EVENT, TOKEN_PATTERN, ProtocolStudent  # noqa: E402

from app.state import TABS  # noqa: E402
from core.scenario import LEVERS  # noqa: E402

HEAVY = json.dumps(heavy_hybrid_config())


def find_byo(doc_json: dict) -> dict[str, str]:
    """The config text area's and the Read-config button's ids, from a document's JSON."""
    found, stack = {}, [doc_json]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            attrs = node.get("attributes")
            if node.get("type") == "object" and isinstance(attrs, dict):
                classes = attrs.get("css_classes") or []
                if "config-text" in classes:
                    found["text"] = node["id"]
                elif "config-read" in classes:
                    found["button"] = node["id"]
                elif "lab-tabs" in classes:  # the tab bar (a radio button group: its ``active`` is the tab's index)
                    found["tabs"] = node["id"]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


class Paster(ProtocolStudent):
    """A student who opens the Bring-your-own tab, pastes the heavy config and clicks Read config."""

    needs = {"text", "button"}  # what the page must hold (find_byo)

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.read_s: float | None = None
        self.last_report = ""  # the last config readout seen (what a paster without its report was shown)

    def _page_token(self) -> str:
        """The page of ``?tab=Bring your own`` (its query kept) and its session token."""
        parts = urllib.parse.urlsplit(self.url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=self.args.timeout * 4)
        try:
            conn.request("GET", f"{parts.path}?{parts.query}")
            page = conn.getresponse().read().decode("utf-8", "replace")
        finally:
            conn.close()
        match = TOKEN_PATTERN.search(page)
        if not match:
            raise RuntimeError("the page carries no session token")
        return match.group(1)

    async def _join(self) -> None:
        token = await asyncio.to_thread(self._page_token)
        from bokeh.protocol import Protocol
        from bokeh.protocol.receiver import Receiver
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import websocket_connect

        parts = urllib.parse.urlsplit(self.url)
        ws_url = urllib.parse.urlunsplit(("ws", parts.netloc, parts.path.rstrip("/") + "/ws", "", ""))
        self.ws = await websocket_connect(HTTPRequest(ws_url, request_timeout=self.args.timeout),
                                          subprotocols=["bokeh", token], max_message_size=64 * 2**20)
        self.protocol, self.receiver = Protocol(), Receiver(Protocol())
        await self._receive(self.args.timeout)  # ACK
        await self._send(self.protocol.create("PULL-DOC-REQ"))
        while (reply := await self._receive(self.args.timeout)).msgtype != "PULL-DOC-REPLY":
            pass
        self.ids = find_byo(reply.content["doc"])
        if not self.needs <= set(self.ids):
            raise RuntimeError(f"the page lacks {sorted(self.needs - set(self.ids))} (found {sorted(self.ids)})")
        await self._send(patch_doc(patch_doc.create_header(), {}, {"events": [READY_EVENT]}))

    async def _ready(self) -> None:
        """Join at the start time, wait for the class's go, then act within a second of the movers' first moves."""
        await asyncio.sleep(max(0.0, self.start_at - time.monotonic()))
        try:
            await self._join()
        finally:
            self.joined.set()
        await asyncio.to_thread(self.go.wait)
        await asyncio.sleep(0.5 + (self.index % 10) * 0.05)

    async def _lesson(self) -> None:
        await self._ready()
        t0 = time.perf_counter()
        # The same config for everyone (a class pastes the one its teacher handed out), or --distinct: each its own
        # name, so each is read (the lab keeps reads by the config's text).
        text = HEAVY.replace('"heavy-hybrid"', f'"heavy-hybrid-{self.index}"') if self.args.distinct else HEAVY
        events = [{"kind": "ModelChanged", "model": {"id": self.ids["text"]}, "attr": "value", "new": text}]
        await self._send(patch_doc(patch_doc.create_header(), {}, {"events": events}))
        click = {"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": {
            "type": "event", "name": "button_click",
            "values": {"type": "map", "entries": [["model", {"id": self.ids["button"]}]]}}}
        await self._send(patch_doc(patch_doc.create_header(), {}, {"events": [click]}))
        deadline = time.monotonic() + self.args.timeout
        while time.monotonic() < deadline:
            fragment = await asyncio.wait_for(self.ws.read_message(), max(0.0, deadline - time.monotonic()))
            if fragment is None:
                raise RuntimeError("the server closed the connection")
            if isinstance(fragment, str) and "Read heavy-hybrid" in fragment:  # the report's text, unparsed
                self.read_s = time.perf_counter() - t0
                return
            if isinstance(fragment, str) and (at := fragment.find('data-readout=\\"config')) >= 0:
                self.last_report = fragment[at:at + 160]
        raise RuntimeError("no 'Read heavy-hybrid' report within the timeout")


class Opener(Paster):
    """A student who opens a tab never opened in the session (``--open TAB``): the teacher's "everyone open
    Hardware now"; timed until the server's patch with the tab's view arrives."""

    needs = {"tabs"}

    def __init__(self, *args, tab: str, **kw):
        super().__init__(*args, **kw)
        self.tab, self.read_s = tab, None

    async def _lesson(self) -> None:
        await self._ready()
        tabs = self.ids["tabs"]
        t0 = time.perf_counter()
        events = [{"kind": "ModelChanged", "model": {"id": tabs}, "attr": "active", "new": TABS.index(self.tab)}]
        await self._send(patch_doc(patch_doc.create_header(), {}, {"events": events}))
        marker = f'"name":"{self.tab}"'  # the tab's pane, named after it, arriving under the tab bar
        deadline = time.monotonic() + self.args.timeout
        while time.monotonic() < deadline:
            fragment = await asyncio.wait_for(self.ws.read_message(), max(0.0, deadline - time.monotonic()))
            if fragment is None:
                raise RuntimeError("the server closed the connection")
            # The tab's view, put in the page in a piece of its own (app/lab.py _open).
            if isinstance(fragment, str) and marker in fragment:
                self.read_s = time.perf_counter() - t0
                return
        raise RuntimeError(f"the {self.tab} tab's view did not arrive within the timeout")


def probe(url: str, seconds: float) -> None:
    """Every 20 ms for ``seconds``, a request Tornado answers on the event loop at once; prints
    ``monotonic-time seconds-to-answer`` lines.  Run in a process of its own (``--probe URL SECONDS``), so the
    students' threads in this one do not delay it."""
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.perf_counter()
        conn.request("GET", "/no-such-page-loop-probe")
        conn.getresponse().read()
        print(f"{time.monotonic():.4f} {time.perf_counter() - t0:.5f}", flush=True)
        time.sleep(0.02)
    conn.close()


def server_cpu(proc: subprocess.Popen | None) -> tuple[float, float] | None:
    """CPU seconds the server's main thread (its event loop) and its other threads (the config reader, Bokeh's)
    have used so far, or None for a server this run did not start.  A figure of the lab's own work: it does not
    grow with the machine's other load, as the latencies do."""
    if proc is None:
        return None
    import psutil

    threads = psutil.Process(proc.pid).threads()
    loop = sum(t.user_time + t.system_time for t in threads if t.id == proc.pid)
    return loop, sum(t.user_time + t.system_time for t in threads) - loop


#: What asyncio's debug mode logs for a callback that held the event loop longer than slow_callback_duration.
SLOW = re.compile(r"^(\S+ \S+) .*?Executing (.*) took (\d+\.\d+) seconds", re.MULTILINE)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pasters", type=int, default=20)
    p.add_argument("--movers", type=int, default=10)
    p.add_argument("--moves", type=int, default=8)
    p.add_argument("--think", type=float, default=0.5)
    p.add_argument("--timeout", type=float, default=60.0)
    p.add_argument("--open", metavar="TAB", choices=TABS[1:],
                   help="instead of pasting, each of the --pasters opens this tab (never opened in the session)")
    p.add_argument("--distinct", action="store_true", help="each paster's config named apart: every paste is read")
    p.add_argument("--asyncio-debug", action="store_true",
                   help="serve in asyncio's debug mode: its log names each callback over 100 ms (and slows the loop)")
    p.add_argument("--py-spy", metavar="FILE", help="sample the server's threads with py-spy (pip install py-spy) "
                   "during the storm only, from the go to the last report, into FILE (py-spy's raw format)")
    p.add_argument("--url", help="a lab already served on 127.0.0.1 (e.g. under a profiler); default: start one")
    p.add_argument("--probe", nargs=2, metavar=("URL", "SECONDS"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.probe:
        probe(args.probe[0], min(float(args.probe[1]), 90.0))
        return 0
    args.moves, args.timeout = min(args.moves, 40), min(args.timeout, 60.0)
    py_spy = shutil.which("py-spy") or shutil.which("py-spy", path=str(Path(sys.executable).parent))
    if args.py_spy and (args.url or not py_spy):
        raise SystemExit("--py-spy samples a server this run starts (no --url), with py-spy installed")
    stops = list(LEVERS["batch"].stops)
    log = ROOT / "benchmarks" / "results" / "paste-storm-server.log"
    log.parent.mkdir(exist_ok=True)
    # asyncio's debug mode names every callback that holds the server's event loop over 100 ms (its
    # slow_callback_duration) in the server's log: what one accepted input cost the loop.
    if args.asyncio_debug:
        os.environ["PYTHONASYNCIODEBUG"] = "1"
    try:
        if args.url and urllib.parse.urlsplit(args.url).hostname != "127.0.0.1":
            raise SystemExit("--url must be on 127.0.0.1")
        # A session a GET built and its websocket has not yet joined is dropped after Bokeh's unused-session
        # lifetime (15 s): on a loaded machine the class's joins queued longer than that, and a paster's session
        # was built again without the link's tab.  The joins are not what is measured: a minute, as in a lesson.
        proc, url = (None, args.url) if args.url else start_lab(log, ["--unused-session-lifetime", "60000"])
    finally:
        os.environ.pop("PYTHONASYNCIODEBUG", None)
    go, leave = threading.Event(), threading.Event()
    try:
        movers = [ProtocolStudent(i, url, time.monotonic() + 0.2 * i, args, go, leave, False, stops=stops)
                  for i in range(args.movers)]
        # Joins spaced out (a session built for a GET and not connected within Bokeh's unused-session lifetime is
        # built again, without the link's tab); the pastes come together once everyone has joined.
        t0 = time.monotonic() + 0.2 * args.movers
        if args.open:
            pasters = [Opener(100 + i, url, t0 + 0.3 * i, args, go, leave, False, stops=stops, tab=args.open)
                       for i in range(args.pasters)]
        else:
            pasters = [Paster(100 + i, url.replace("/app", "/app?tab=Bring%20your%20own"), t0 + 0.3 * i, args, go,
                              leave, False, stops=stops) for i in range(args.pasters)]
        for s in (*movers, *pasters):
            s.start()
        for s in (*movers, *pasters):
            s.joined.wait(120)
        log_start = log.stat().st_size
        prober = subprocess.Popen([sys.executable, __file__, "--probe", url, "75"], stdout=subprocess.PIPE, text=True)
        time.sleep(4.0)  # the probe's start and the quiet baseline
        t_go, wall_go, load_go = time.monotonic(), time.time(), os.getloadavg()[0]
        cpu_go = server_cpu(proc)
        spy = None
        if args.py_spy:
            spy = subprocess.Popen([py_spy, "record", "-p", str(proc.pid), "-r", "250", "-f", "raw", "-d", "60",
                                    "--nonblocking", "-o", args.py_spy], stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
        go.set()
        end = t_go + 60
        for s in (*movers, *pasters):
            while s.is_alive() and not (s.latencies and len(s.latencies) + s.lost >= args.moves
                                        or getattr(s, "read_s", None) or s.errors) and time.monotonic() < end:
                time.sleep(0.1)
        cpu_end, t_end = server_cpu(proc), time.monotonic()
        if spy is not None:
            spy.send_signal(2)  # py-spy writes what it sampled on SIGINT
            spy.wait(30)
        prober.terminate()
        lags = [tuple(map(float, line.split())) for line in prober.communicate(timeout=10)[0].splitlines()]
    finally:
        leave.set()
        if proc is not None:
            stop_lab(proc)
    quiet = float(np.median([d for t, d in lags if t < t_go])) if lags else 0.0
    storm = [d for t, d in lags if t >= t_go]
    with log.open(encoding="utf-8", errors="replace") as f:
        f.seek(log_start)
        slow = [(float(m.group(3)), m.group(2)[:160]) for m in SLOW.finditer(f.read())
                if dt.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp() >= wall_go]
    lat = np.array([x for s in movers for x in s.latencies]) * 1000
    reads = [s.read_s for s in pasters if s.read_s is not None]
    errors = [e for s in (*movers, *pasters) for e in s.errors]
    print(f"load average (1 min) at the storm's start {load_go:.2f}, at its end {os.getloadavg()[0]:.2f}; "
          f"{os.cpu_count()} cores")
    print(f"movers: {args.movers}, moves timed: {lat.size}, lost: {sum(s.lost for s in movers)}, "
          f"wrong: {sum(s.wrong for s in movers)}")
    if lat.size:
        print(f"update latency p50 {np.percentile(lat, 50):.0f} ms, p95 {np.percentile(lat, 95):.0f} ms, "
              f"max {lat.max():.0f} ms")
    print(f"{'openers of ' + args.open if args.open else 'pasters'}: {args.pasters}, "
          f"{'views' if args.open else 'reports'} arrived: {len(reads)}"
          + (f", time to report p50 {np.median(reads):.2f} s, max {max(reads):.2f} s" if reads else ""))
    if storm:
        print(f"event-loop probe: quiet median {quiet * 1000:.1f} ms; during the storm max {max(storm) * 1000:.0f} ms "
              f"(lag {(max(storm) - quiet) * 1000:.0f} ms), p99 {np.percentile(storm, 99) * 1000:.0f} ms, "
              f"{len(storm)} probes")
    if cpu_go and cpu_end:
        print(f"server CPU during the storm: event loop {cpu_end[0] - cpu_go[0]:.2f} s, other threads "
              f"{cpu_end[1] - cpu_go[1]:.2f} s, over the storm's {t_end - t_go:.1f} s")
    if args.asyncio_debug:
        print(f"callbacks over 100 ms on the server's event loop (asyncio debug): {len(slow)}"
              + (f", largest {max(slow)[0] * 1000:.0f} ms" if slow else ""))
    for took, what in sorted(slow, reverse=True)[:3]:
        print(f"  {took * 1000:.0f} ms: {what}")
    for e in errors[:5]:
        print("error:", e)
    for s in pasters:
        if s.read_s is None:
            print(f"paster {s.index} had no report; the last config readout it was sent: {s.last_report or '(none)'}")
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
