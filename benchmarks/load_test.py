"""Load test: a class of N students on one served lab (run by hand, not by the test suite).

    .venv/bin/python benchmarks/load_test.py --clients 20 [--window 10] [--moves 5] [--think 1]
    .venv/bin/python benchmarks/load_test.py --soak 200
    .venv/bin/python benchmarks/load_test.py --profile
    .venv/bin/python benchmarks/load_test.py --clients 50 --server-arg=--num-procs --server-arg=2

Each student is a ``bokeh.client`` session in its own thread, doing what a browser
does against a real ``panel serve app`` on loopback:

1. ``GET /app`` (the server builds the session and answers with the page and its
   token), then a websocket to that session and ``PULL-DOC`` (the server
   serialises the document, the client rebuilds every Bokeh model), then the
   ``document_ready`` event a browser sends once it has rendered.  *Time to
   session ready* runs from the GET to that event.  The N students start at
   evenly spaced times within ``--window`` seconds.
2. Once every student has joined, each moves the batch slider (the Bokeh
   ``Slider`` model inside the ``.batch`` widget, found by its CSS class) up and
   down ``--moves`` times, waiting a random 0.5-1.5 x ``--think`` seconds between
   moves.  *Update latency* runs from setting the slider's value in the client
   document until the server's change of the roofline's ``workload``
   ColumnDataSource has arrived back at that client; the arriving batch is
   checked against the slider's stop, so a lost or wrong update is counted, not
   timed.  A move with no answer within ``--timeout`` seconds is lost.
3. Everyone leaves; Panel's session log lines (launched / destroyed) tell when
   the server has discarded their sessions (Bokeh's defaults: up to ~32 s).
   The same lines count the sessions built: one per student, or some were
   built twice (a websocket that reached a process without its session).

Server CPU (user + system, all server processes) is read with psutil before and
after the join phase and divided by N; RSS is read after warm-up, with everyone
joined, and after everyone left.  The server log is scanned for tracebacks and
errors.  The clients run on the same 2 cores as the server: their own CPU time is
reported next to the server's, so a reader can see what the figures share.

``--soak N`` opens and closes N sessions one after another (same GET + pull +
ready, then close) and reports RSS before and after, once the closed sessions
have been discarded, and the MB retained per closed session.

``--profile`` profiles one session build in process with pyinstrument (the app
script's work plus serialising the document, as ``PULL-DOC`` does) and prints
the profile's top lines; the load and soak runs print them too.

Results print as Markdown and are written to ``benchmarks/results/load-*.json``.
``benchmarks/nginx_scaling.py`` runs the same test against several processes
behind nginx.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import random
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import panel  # noqa: F401 - registers Panel's Bokeh models, so the client can rebuild the session's document
import psutil
from bokeh.client import connection as bokeh_connection
from bokeh.client import pull_session
from bokeh.document.events import MessageSentEvent
from bokeh.events import DocumentReady
from bokeh.models import ColumnDataSource, Slider
from bokeh.util.token import get_session_id

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from conftest import start_lab, stop_lab  # noqa: E402
from protocol_student import ProtocolStudent, StudentThread  # noqa: E402 - benchmarks/ is on the path when run as a script

from core.scenario import LEVERS  # noqa: E402

#: The batch slider's stops, index -> batch (the lever table's).
BATCH_STOPS = LEVERS["batch"].stops

RESULTS = ROOT / "benchmarks" / "results"
# Lines of a server log that mean something went wrong in a session.
ERROR_PATTERN = re.compile(r"Traceback|ERROR|Exception|Error:")
# The soak checks for closed sessions every second and drops them 5 s after
# their last connection closed (the defaults, 17 s and 15 s, only make it wait
# longer).  The class run keeps the defaults: a session the page's GET built is
# also "unused" until its websocket arrives, and a lifetime shorter than that
# wait under load would discard it and make the websocket build a second one.
SOAK_ARGS = ["--check-unused-sessions", "1000", "--unused-session-lifetime", "5000"]
# Panel logs each session's launch and destruction at INFO: the benchmark counts
# them to know when closed sessions are gone, and that each student cost one.
SERVER_ENV = {"PANEL_LOG_LEVEL": "info"}
LAUNCHED = re.compile(r"Session \d+ launching")
DESTROYED = re.compile(r"Session \d+ destroyed")

# How the current thread's websocket connects.  bokeh.client builds the
# websocket request itself, so its ``websocket_connect`` is wrapped here to set:
# * the source address: students behind a load balancer come from different
#   machines; on loopback they come from 127.0.<i>.1 instead, so that nginx's
#   ip_hash (which hashes the first three octets) spreads them as it would
#   spread a class;
# * the handshake's timeout: Tornado's default (20 s) gives up on a busy
#   server long before a browser would, which would count as an error what a
#   student sees as a slow page.
_CLIENT = threading.local()
_websocket_connect = bokeh_connection.websocket_connect


def _websocket_connect_as_student(request, *args, **kwargs):
    source = getattr(_CLIENT, "ip", None)
    if source:
        request.network_interface = source
    timeout = getattr(_CLIENT, "timeout", None)
    if timeout:
        request.connect_timeout = request.request_timeout = timeout
    return _websocket_connect(request, *args, **kwargs)


bokeh_connection.websocket_connect = _websocket_connect_as_student


def alias_generated_models(max_copies: int = 9) -> None:
    """Let the client read the app's own Panel components whatever copy number the server gave them.

    Panel names the Bokeh data model of a custom component (e.g. ``app.a11y.A11yFixes``)
    after its class, with a counter for each time the class is defined; the server
    defines the app's classes once per import path (``A11yFixes2``), this process
    after its own imports (``A11yFixes1``).  The client needs the app's classes
    (``profile_session_build`` imports them the server's way) and these aliases.
    """
    from bokeh.core.has_props import _default_resolver
    from bokeh.model import DataModel

    registry = _default_resolver._known_models  # the deserialiser's name -> class table
    for name, cls in list(registry.items()):
        match = re.fullmatch(r"(.+?)(\d+)", name)
        if match and isinstance(cls, type) and issubclass(cls, DataModel):
            for i in range(1, max_copies + 1):
                registry.setdefault(f"{match.group(1)}{i}", cls)


def percentile(values: list[float], q: float) -> float | None:
    """The ``q`` quantile (0-1, nearest rank) of ``values``; None when there are none.  Shared by the benchmarks."""
    return float(np.percentile(values, 100 * q, method="nearest")) if len(values) else None


def source_ip(index: int, spread: bool) -> str | None:
    """127.0.<i>.1 for student ``index`` when spreading over addresses, else the default."""
    if not spread:
        return None
    return f"127.{1 + index // 250}.{1 + index % 250}.1"


# -- the server side ---------------------------------------------------------------
@dataclass
class Servers:
    """The ``panel serve`` processes under test (one, or several behind a balancer)."""

    procs: list[psutil.Process]
    logs: list[Path]
    url: str
    #: sessions that never expire: with --reuse-sessions each process keeps the
    #: one it answers page requests from.
    permanent: int = 0

    def _all(self) -> list[psutil.Process]:
        """The processes and their children (``--num-procs`` forks workers)."""
        out = []
        for p in self.procs:
            try:
                out += [p, *p.children(recursive=True)]
            except psutil.NoSuchProcess:
                pass
        return out

    def cpu_s(self) -> float:
        """User + system CPU seconds of every server process so far."""
        total = 0.0
        for p in self._all():
            try:
                t = p.cpu_times()
                total += t.user + t.system
            except psutil.NoSuchProcess:
                pass
        return total

    def rss_bytes(self) -> int:
        """Resident memory of every server process, summed."""
        total = 0
        for p in self._all():
            try:
                total += p.memory_info().rss
            except psutil.NoSuchProcess:
                pass
        return total

    def session_counts(self) -> tuple[int, int]:
        """Sessions launched and destroyed so far, from Panel's session log lines."""
        launched = destroyed = 0
        for log in self.logs:
            text = log.read_text(errors="replace")
            launched += len(LAUNCHED.findall(text))
            destroyed += len(DESTROYED.findall(text))
        return launched, destroyed

    def wait_sessions_gone(self, timeout: float = 60.0, destroyed_at_least: int = 0) -> float | None:
        """Wait until no session is held, and at least ``destroyed_at_least`` have been discarded in all;
        seconds waited, or None if they were not all discarded.

        ``--reuse-sessions`` keeps one page-cache session per process for good, built by the first page a
        process serves: held sessions alone cannot tell a warm-up's own session (still to be discarded) from
        the cache of a process the warm-up did not reach.
        """
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            launched, destroyed = self.session_counts()
            if launched - destroyed <= self.permanent and destroyed >= destroyed_at_least:
                return time.monotonic() - t0
            time.sleep(0.5)
        return None

    def log_errors(self) -> list[str]:
        lines = []
        for log in self.logs:
            lines += [line for line in log.read_text(errors="replace").splitlines() if ERROR_PATTERN.search(line)]
        return lines


def start_single_server(extra_args: list[str], log: Path, app: str = "app") -> tuple[Servers, object]:
    os.environ.update(SERVER_ENV)
    proc, url = start_lab(log, extra_args, timeout=120, app=app)
    return Servers([psutil.Process(proc.pid)], [log], url, permanent=reused_sessions(extra_args)), proc


def reused_sessions(server_args: list[str]) -> int:
    """Sessions the server keeps for good: with ``--reuse-sessions`` one page cache per
    process (``--num-procs N`` forks N), else none."""
    if "--reuse-sessions" not in server_args:
        return 0
    if "--num-procs" in server_args:
        return max(1, int(server_args[server_args.index("--num-procs") + 1]))
    return 1


def stop(proc: subprocess.Popen, grace: float = 30.0) -> None:
    """Terminate a server process and the workers it forked; kill what has not exited after ``grace`` seconds."""
    stop_lab(proc, grace)


# -- one student ---------------------------------------------------------------------
class Student(StudentThread):
    """One ``bokeh.client`` session: join, move the batch slider, leave."""

    def __init__(self, index: int, url: str, start_at: float, args, go: threading.Event, leave: threading.Event,
                 spread: bool):
        super().__init__(index, url, start_at, args, go, leave, source_ip(index, spread))
        self._updates: list[tuple[float, int]] = []
        self.session = None

    # The client's IOLoop only runs while a reply is awaited: run it until
    # ``done()`` (or the connection drops), closing the connection on timeout.
    def _pump(self, done, timeout: float) -> bool:
        conn = self.session._connection
        expired = []

        def give_up():
            expired.append(True)
            conn.close("timeout")

        handle = conn.io_loop.call_later(timeout, give_up)
        conn._loop_until(lambda: done() or bool(expired) or not conn.connected)
        conn.io_loop.remove_timeout(handle)
        return done()

    def join_class(self) -> None:
        t0 = time.perf_counter()
        self.session = pull_session(session_id=get_session_id(self.page_token()), url=self.url)
        doc = self.session.document
        self.slider = next(m for m in doc.models if isinstance(m, Slider) and "batch" in m.css_classes)
        self.workload = doc.get_model_by_name("workload")
        if not isinstance(self.workload, ColumnDataSource):
            raise RuntimeError("no 'workload' ColumnDataSource in the document")
        self.workload.on_change("data", lambda _a, _o, new: self._updates.append((time.perf_counter(),
                                                                                  new["batch"][0])))
        # What a browser sends once it has rendered the page; Panel starts
        # pushing changes to a session only after it.
        conn = self.session._connection
        ready = conn._protocol.create("PATCH-DOC", [MessageSentEvent(doc, "bokeh_event", DocumentReady())])
        conn.io_loop.run_sync(lambda: conn.send_message(ready), timeout=self.args.timeout)
        self.ready_s = time.perf_counter() - t0

    def move(self, index: int) -> None:
        seen = len(self._updates)
        t0 = time.perf_counter()
        self.slider.value = index
        if not self._pump(lambda: len(self._updates) > seen, self.args.timeout):
            self.lost += 1
            raise RuntimeError(f"no workload update within {self.args.timeout} s")
        t1, batch = self._updates[seen]
        if batch != BATCH_STOPS[index]:
            self.wrong += 1
        self.latencies.append(t1 - t0)

    def run(self) -> None:
        _CLIENT.ip, _CLIENT.timeout = self.source, self.args.timeout
        cpu0 = time.thread_time()
        rng = random.Random(self.index)
        try:
            time.sleep(max(0.0, self.start_at - time.monotonic()))
            try:
                self.join_class()
            finally:
                self.joined.set()
            self.go.wait()
            position = self.slider.value
            for i in range(self.args.moves):
                time.sleep(rng.uniform(0.5, 1.5) * self.args.think)
                # Walk up the batch stops, then back down: every move changes the batch.
                position = position + 1 if (i // 4) % 2 == 0 else position - 1
                position = min(max(position, 0), len(BATCH_STOPS) - 1)
                self.move(position)
        except Exception as exc:  # noqa: BLE001 - every failure is counted and reported
            self.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            self.cpu_s = time.thread_time() - cpu0
            self.leave.wait()
            self.close()

    def close(self) -> None:
        if self.session is None:
            return
        conn = self.session._connection
        try:
            if conn.connected:
                self.session.close()
                self._pump(lambda: False, 5.0)
        finally:
            conn.io_loop.close(all_fds=True)


def make_student(index: int, url: str, start_at: float, args, go: threading.Event, leave: threading.Event,
                 spread: bool):
    """A student of the kind ``--client`` names: on the wire (default) or a ``bokeh.client`` session."""
    if getattr(args, "client", "protocol") == "bokeh":
        return Student(index, url, start_at, args, go, leave, spread)
    return ProtocolStudent(index, url, start_at, args, go, leave, spread, source_ip=source_ip,
                           stops=list(BATCH_STOPS))


# -- the runs ------------------------------------------------------------------------
def warm_up(url: str) -> None:
    """One session built and closed, so imports and caches do not count against the class."""
    s = Student(-1, url, 0.0, argparse.Namespace(timeout=60, moves=0, think=0), threading.Event(),
                threading.Event(), spread=False)
    s.join_class()
    s.close()


def run_class(servers: Servers, args, spread: bool = False) -> dict:
    """N students join within the window, move the slider, leave; the figures."""
    destroyed0 = servers.session_counts()[1]
    t = time.perf_counter()
    warm_up(servers.url)
    first_session_s = time.perf_counter() - t
    # Its session is discarded (and collected) before the class joins, not mid-class, where the full collection
    # stalled every open session ~0.6 s: 15-32 s with the server's default unused-session check.  A process
    # may instead keep it as its page cache (--reuse-sessions): then nothing is discarded, and after 40 s the
    # class joins anyway.
    servers.wait_sessions_gone(timeout=40, destroyed_at_least=destroyed0 + 1)
    rss_idle = servers.rss_bytes()
    launched0 = servers.session_counts()[0]
    load0 = os.getloadavg()
    go, leave = threading.Event(), threading.Event()
    t_start = time.monotonic() + 0.5
    students = [make_student(i, servers.url, t_start + args.window * i / max(1, args.clients), args, go, leave,
                             spread) for i in range(args.clients)]
    cpu0, wall0 = servers.cpu_s(), time.perf_counter()
    client_cpu0 = time.process_time()
    for s in students:
        s.start()
    for s in students:
        s.joined.wait()
    join_wall = time.perf_counter() - wall0 - 0.5
    cpu_join = servers.cpu_s() - cpu0
    client_cpu_join = time.process_time() - client_cpu0
    time.sleep(1.0)  # let the last document_ready events land before reading memory
    rss_joined = servers.rss_bytes()
    built = servers.session_counts()[0] - launched0
    ready = [s.ready_s for s in students if s.ready_s is not None]

    cpu1, wall1 = servers.cpu_s(), time.perf_counter()
    go.set()
    while any(s.is_alive() and not (s.errors or len(s.latencies) == args.moves) for s in students):
        time.sleep(0.2)
    move_wall = time.perf_counter() - wall1
    cpu_moves = servers.cpu_s() - cpu1
    leave.set()
    for s in students:
        s.join(timeout=30)
    gone_after = servers.wait_sessions_gone()
    rss_left = servers.rss_bytes()

    latencies = [x for s in students for x in s.latencies]
    n_ready = len(ready)
    return {
        "clients": args.clients,
        "first_session_ready_s": first_session_s,
        "window_s": args.window,
        "moves_per_client": args.moves,
        "think_s": args.think,
        "sessions_ready": n_ready,
        "sessions_built": built,
        "load_average_1min_before_after": [round(load0[0], 2), round(os.getloadavg()[0], 2)],
        "ready_p50_s": percentile(ready, 0.5),
        "ready_p95_s": percentile(ready, 0.95),
        "ready_max_s": max(ready) if ready else None,
        "join_wall_s": join_wall,
        "sessions_per_s": n_ready / join_wall if join_wall > 0 else None,
        "server_cpu_per_session_s": cpu_join / max(1, n_ready),
        "client_cpu_per_session_s": client_cpu_join / max(1, n_ready),
        "updates": len(latencies),
        "updates_expected": args.clients * args.moves,
        "update_p50_s": percentile(latencies, 0.5),
        "update_p95_s": percentile(latencies, 0.95),
        "update_max_s": max(latencies) if latencies else None,
        "updates_per_s": len(latencies) / move_wall if move_wall > 0 else None,
        "server_cpu_per_update_s": cpu_moves / max(1, len(latencies)),
        "lost_updates": sum(s.lost for s in students),
        "wrong_updates": sum(s.wrong for s in students),
        "client_errors": [e for s in students for e in s.errors][:20],
        "client_error_count": sum(len(s.errors) for s in students),
        "rss_idle_mb": rss_idle / 1e6,
        "rss_joined_mb": rss_joined / 1e6,
        "rss_per_session_mb": (rss_joined - rss_idle) / 1e6 / max(1, n_ready),
        "rss_after_leave_mb": rss_left / 1e6,
        "sessions_discarded_after_s": gone_after,
    }


#: Seconds the soak waits after the last session is discarded before reading the memory kept: Panel's
#: collection after a session ends runs once the server has been quiet for 5 s (``GC_DEBOUNCE``).
SOAK_QUIET_S = 7.0


def run_soak(servers: Servers, n: int, args) -> dict:
    """Open and close ``n`` sessions one after another; RSS before and after."""
    warm_up(servers.url)
    for _ in range(5):  # a few more, so first-use allocations are not counted as retained
        warm_up(servers.url)
    servers.wait_sessions_gone()
    rss0 = servers.rss_bytes()
    errors, t0 = [], time.perf_counter()
    for i in range(n):
        try:
            warm_up(servers.url)
        except Exception as exc:  # noqa: BLE001 - counted and reported
            errors.append(f"session {i}: {type(exc).__name__}: {exc}")
    wall = time.perf_counter() - t0
    gone = servers.wait_sessions_gone(timeout=60)
    rss_last = servers.rss_bytes()
    # What is kept, not what waits for the collector: the last sessions closed within app/session_end's
    # COLLECT_EVERY_S of each other are collected by Panel's own collection once the server has been quiet for
    # GC_DEBOUNCE (5 s).  Measured at once, the faster the sessions the more of them were still waiting.
    time.sleep(SOAK_QUIET_S)
    rss1 = servers.rss_bytes()
    return {
        "soak_sessions": n,
        "soak_wall_s": wall,
        "rss_before_mb": rss0 / 1e6,
        "rss_after_last_close_mb": rss_last / 1e6,
        "rss_after_mb": rss1 / 1e6,
        "retained_per_closed_session_mb": (rss1 - rss0) / 1e6 / n,
        "sessions_discarded_after_s": gone,
        "client_errors": errors[:20],
        "client_error_count": len(errors),
    }


# -- profile -------------------------------------------------------------------------
def profile_session_build(lines: int = 45, app: str = "app") -> tuple[str, float]:
    """Profile one session build in process; the top of pyinstrument's tree and the build's CPU seconds.

    A build is what the server does for a new session: Panel's own session
    generator (the one ``panel serve --warm`` uses) runs ``app/main.py`` against
    a fresh Document with a session context, so ``.servable()`` turns the layout
    into Bokeh models; then the document is serialised as ``PULL-DOC`` does.
    """
    from bokeh.command.util import build_single_handler_application
    from panel.io.session import generate_session
    from pyinstrument import Profiler

    application = build_single_handler_application(str(ROOT / app))

    def build() -> None:
        session = generate_session(application)
        session.document.to_json()

    build()  # imports and module-level caches are paid once per process, not per session
    t = time.process_time()
    for _ in range(5):
        build()
    cpu = (time.process_time() - t) / 5
    profiler = Profiler(interval=0.0005)
    with profiler:
        build()
    # Shares of the build, not seconds: pyinstrument samples wall time, which
    # other work on a shared machine stretches; the CPU seconds are measured above.
    text = profiler.output_text(unicode=True, color=False, show_all=False, time="percent_of_total")
    return "\n".join(text.splitlines()[:lines]), cpu


# -- report --------------------------------------------------------------------------
def machine() -> dict:
    cpu_model = ""
    try:
        cpu_model = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                         if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    from bokeh import __version__ as bokeh_version
    from panel import __version__ as panel_version

    return {
        "date_utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M"),
        "cpus": psutil.cpu_count(),
        "cpu_model": cpu_model,
        "memory_gb": round(psutil.virtual_memory().total / 1e9, 1),
        "python": platform.python_version(),
        "panel": panel_version,
        "bokeh": bokeh_version,
    }


def fmt(value, scale: float = 1.0, unit: str = "", digits: int = 0) -> str:
    return "—" if value is None else f"{value * scale:,.{digits}f}{unit}"


def print_class_table(r: dict) -> None:
    print(f"| measure ({r['clients']} clients joining within {r['window_s']:g} s, {r['moves_per_client']} moves each) "
          "| result |")
    print("|---|---|")
    print(f"| first session after start-up, alone (join + leave) | {fmt(r['first_session_ready_s'], 1, ' s', 2)} |")
    print(f"| sessions ready / built by the server | {r['sessions_ready']} / {r['sessions_built']} "
          f"(of {r['clients']}) |")
    print(f"| time to session ready p50 / p95 / max | {fmt(r['ready_p50_s'], 1, ' s', 2)} / "
          f"{fmt(r['ready_p95_s'], 1, ' s', 2)} / {fmt(r['ready_max_s'], 1, ' s', 2)} |")
    print(f"| all joined after (first request → last ready) | {fmt(r['join_wall_s'], 1, ' s', 1)} "
          f"({fmt(r['sessions_per_s'], 1, ' sessions/s', 1)}) |")
    print(f"| server CPU per session | {fmt(r['server_cpu_per_session_s'], 1e3, ' ms')} |")
    print(f"| client CPU per session (same machine) | {fmt(r['client_cpu_per_session_s'], 1e3, ' ms')} |")
    print(f"| update latency p50 / p95 / max (all moving) | {fmt(r['update_p50_s'], 1e3, ' ms')} / "
          f"{fmt(r['update_p95_s'], 1e3, ' ms')} / {fmt(r['update_max_s'], 1e3, ' ms')} |")
    print(f"| updates answered / lost / wrong | {r['updates']} of {r['updates_expected']} / {r['lost_updates']} / "
          f"{r['wrong_updates']} ({fmt(r['updates_per_s'], 1, ' per s', 1)}, "
          f"{fmt(r['server_cpu_per_update_s'], 1e3, ' ms')} server CPU each) |")
    print(f"| client errors | {r['client_error_count']} |")
    print(f"| server log lines with errors / tracebacks | {len(r['server_log_errors'])} |")
    print(f"| server RSS idle / all joined / after all left | {fmt(r['rss_idle_mb'], 1, ' MB')} / "
          f"{fmt(r['rss_joined_mb'], 1, ' MB')} / {fmt(r['rss_after_leave_mb'], 1, ' MB')} |")
    print(f"| RSS per joined session | {fmt(r['rss_per_session_mb'], 1, ' MB', 2)} |")
    print(f"| machine load average (1 min) before / after | {r['load_average_1min_before_after'][0]} / "
          f"{r['load_average_1min_before_after'][1]} |")


def print_soak_table(r: dict) -> None:
    print(f"| measure (soak: {r['soak_sessions']} sessions opened and closed) | result |")
    print("|---|---|")
    keys = ("rss_before_mb", "rss_after_last_close_mb", "rss_after_mb")
    before, last, after = (fmt(r.get(k), 1, " MB") for k in keys)
    print(f"| RSS before / right after the last close / {SOAK_QUIET_S:.0f} s later | {before} / {last} / {after} |")
    print(f"| retained per closed session | {fmt(r['retained_per_closed_session_mb'], 1, ' MB', 3)} |")
    print(f"| all sessions discarded | {'yes' if r['sessions_discarded_after_s'] is not None else 'NO'} |")
    print(f"| client errors / server log error lines | {r['client_error_count']} / {len(r['server_log_errors'])} |")


def write_result(name: str, result: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(result, indent=2))
    return path


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--clients", type=int, default=20, help="students; default 20")
    p.add_argument("--client", choices=["protocol", "bokeh"], default="protocol",
                   help="protocol: each student speaks Bokeh's websocket protocol without rebuilding the document "
                        "(benchmarks/protocol_student.py; default); bokeh: a bokeh.client session each")
    p.add_argument("--window", type=float, default=10.0, help="seconds within which they all join; default 10")
    p.add_argument("--moves", type=int, default=5, help="slider moves per student; default 5")
    p.add_argument("--think", type=float, default=1.0, help="mean seconds between a student's moves; default 1")
    p.add_argument("--timeout", type=float, default=120.0,
                   help="seconds before a join or a move counts as failed; default 120")
    p.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                   help="extra `panel serve` argument (repeat; e.g. --server-arg=--num-procs --server-arg=2)")
    p.add_argument("--soak", type=int, metavar="N", help="open and close N sessions (>= 200 for the issue's soak)")
    p.add_argument("--profile", action="store_true", help="only profile one session build in process")
    p.add_argument("--name", help="result file name (default from the mode and client count)")
    p.add_argument("--app", default="app",
                   help="what to serve, relative to the checkout: app (default), or the yardstick page "
                        "benchmarks/one_figure (one figure, one slider)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.clients < 1 or args.moves < 0 or args.window < 0 or (args.soak is not None and args.soak < 1):
        print("error: --clients and --soak must be >= 1, --moves and --window >= 0", file=sys.stderr)
        return 2
    profile, build_cpu = profile_session_build(app=args.app)
    alias_generated_models()
    result: dict = {"machine": machine(), "app": args.app, "server_args": args.server_arg, "client": args.client,
                    "in_process_build_cpu_s": build_cpu}
    if args.profile:
        print(f"one session build, in process: {build_cpu * 1e3:.0f} ms CPU\n\n{profile}")
        return 0
    RESULTS.mkdir(parents=True, exist_ok=True)
    log = RESULTS / "load-server.log"
    server_args = [*(SOAK_ARGS if args.soak else []), *args.server_arg]
    result["server_args"] = server_args
    servers, proc = start_single_server(server_args, log, args.app)
    try:
        if args.soak:
            result.update(run_soak(servers, args.soak, args))
        else:
            result.update(run_class(servers, args))
    finally:
        stop(proc)
    result["server_log_errors"] = servers.log_errors()[:50]
    name = args.name or (f"load-soak-{args.soak}" if args.soak else f"load-{args.clients}")
    path = write_result(name, result)
    m = result["machine"]
    print(f"{m['date_utc']} UTC · {m['cpus']} × {m['cpu_model']} · {m['memory_gb']} GB · Python {m['python']} · "
          f"Panel {m['panel']} · Bokeh {m['bokeh']} · panel serve {' '.join(server_args) or '(defaults)'}\n")
    print_soak_table(result) if args.soak else print_class_table(result)
    for line in result["server_log_errors"][:5]:
        print(f"    server log: {line[:200]}")
    for line in result["client_errors"][:5]:
        print(f"    client: {line[:200]}")
    print(f"\none session build, in process: {build_cpu * 1e3:.0f} ms CPU; profile's top lines:\n\n{profile}\n")
    print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
