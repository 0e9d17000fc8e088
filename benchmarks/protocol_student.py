"""A student who speaks Bokeh's websocket protocol without rebuilding the document (the load test's default).

``bokeh.client`` rebuilds every Bokeh model of a session in Python: ~0.37 s of CPU per
student, on the same two cores as the server it measures, so a class of 100 spent half
the machine on its own clients.  A browser rebuilds the models in JavaScript, on its
own machine.  This student does what the browser's BokehJS does on the wire, with
Bokeh's own protocol classes (``bokeh.protocol``: message framing, the receiver that
reassembles fragments, the serialiser for the one event it sends):

1. ``GET`` the page and read the session token from it;
2. open the websocket (subprotocols ``bokeh`` and the token) with Nagle's algorithm off, as a
   browser's socket has it (:func:`open_socket`), wait for ``ACK``,
   send ``PULL-DOC-REQ`` and read the document's JSON from ``PULL-DOC-REPLY``
   (parsed, not turned into models): the batch slider's id (the ``Slider`` with CSS
   class ``batch``) and the roofline's ``workload`` source's id;
3. send ``document_ready`` in a ``PATCH-DOC``, as a browser does once it has rendered;
4. move the slider: a ``PATCH-DOC`` with one ``ModelChanged`` event for its ``value``,
   then read the server's ``PATCH-DOC`` messages until one changes the ``workload``
   source; its ``batch`` column is decoded with Bokeh's deserialiser and checked.

Same interface as :class:`load_test.Student` (a thread with ``joined``, ``ready_s``,
``latencies``, ``lost``, ``wrong``, ``errors``), so ``run_class`` runs either.
"""

from __future__ import annotations

import asyncio
import http.client
import random
import re
import threading
import time
import urllib.parse
from typing import Any

from bokeh.core.serialization import Deserializer, Serialized, Serializer
from bokeh.events import DocumentReady
from bokeh.protocol import Protocol
from bokeh.protocol.messages.patch_doc import patch_doc
from bokeh.protocol.receiver import Receiver
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect


async def open_socket(request, **kwargs):
    """Tornado's ``websocket_connect(request, **kwargs)``, with ``TCP_NODELAY`` set on the socket, as a browser sets it.

    Chromium's ``TCPClientSocket`` calls ``SetDefaultOptionsForClient``, which sets ``TCP_NODELAY``
    (``net/socket/tcp_socket_posix.cc``); Firefox sets ``PR_SockOpt_NoDelay`` on every socket
    (``netwerk/base/nsSocketTransport2.cpp``).  Tornado's client leaves Nagle's algorithm on, and a Bokeh
    message is several websocket frames (header, metadata, content) written one after another: the second
    waited for the server's delayed ACK (~40 ms on Linux), so every timed move was ~45 ms slower than a
    browser's (110 → 65 ms for one student on an idle loop, 2026-12-03).
    """
    ws = await websocket_connect(request, **kwargs)
    ws.protocol.set_nodelay(True)
    return ws


#: ``document_ready`` as BokehJS sends it (a bokeh_event in a MessageSent patch).
READY_EVENT = {"kind": "MessageSent", "msg_type": "bokeh_event", "msg_data": Serializer().encode(DocumentReady())}


def find_models(doc_json: dict) -> dict[str, Any]:
    """The ids (and the slider's value) this student needs, from a ``PULL-DOC-REPLY``'s document JSON.

    Raises:
        RuntimeError: the document has no batch slider or no ``workload`` source.
    """
    found: dict[str, Any] = {}
    stack: list[Any] = [doc_json]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            attrs = node.get("attributes")
            if node.get("type") == "object" and isinstance(attrs, dict):
                if node.get("name") == "Slider" and "batch" in (attrs.get("css_classes") or []):
                    found["slider"], found["value"] = node["id"], attrs.get("value")
                elif node.get("name") == "ColumnDataSource" and attrs.get("name") == "workload":
                    found["workload"] = node["id"]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    if "slider" not in found or "workload" not in found:
        raise RuntimeError("the document has no batch slider or no 'workload' source")
    return found


def workload_batch(msg, workload_id: str) -> int | None:
    """The batch a server ``PATCH-DOC`` gives the ``workload`` source, or None if it does not change it."""
    for event in msg.content.get("events", []):
        if event.get("model", {}).get("id") != workload_id:
            continue
        rep = event.get("new") if event.get("kind") == "ModelChanged" and event.get("attr") == "data" else \
            event.get("data") if event.get("kind") == "ColumnDataChanged" else None
        if rep is None:
            continue
        data = Deserializer().deserialize(Serialized(content=rep, buffers=list(msg.buffers)))
        return int(data["batch"][0])
    return None


#: The session token in the page a ``GET`` of the app returns.
TOKEN_PATTERN = re.compile(r'"token":"([^"]+)"')


def page_token(url: str, source: str | None, timeout: float) -> str:
    """``GET`` the app's page as a browser would (from ``source``, if given) and return its session token.

    Raises:
        RuntimeError: the server answers other than 200, or the page carries no token.
    """
    parts = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout,
                                      source_address=(source, 0) if source else None)
    try:
        conn.request("GET", parts.path)
        resp = conn.getresponse()
        page = resp.read().decode("utf-8", "replace")
    finally:
        conn.close()
    if resp.status != 200:
        raise RuntimeError(f"GET {parts.path}: HTTP {resp.status}")
    match = TOKEN_PATTERN.search(page)
    if not match:
        raise RuntimeError("the page carries no session token")
    return match.group(1)


class StudentThread(threading.Thread):
    """What every kind of load-test student reports (``load_test.run_class`` reads these), in a thread of its own.

    Args:
        start_at: ``time.monotonic()`` at which to join; go / leave: the class's signals to start moving / leave.
        source: the source address to connect from (None: the default).
    """

    def __init__(self, index: int, url: str, start_at: float, args, go: threading.Event, leave: threading.Event,
                 source: str | None):
        super().__init__(daemon=True, name=f"student-{index}")
        self.index, self.url, self.start_at, self.args = index, url, start_at, args
        self.go, self.leave, self.source = go, leave, source
        self.joined = threading.Event()
        self.ready_s: float | None = None  # seconds from the GET to document_ready
        self.latencies: list[float] = []  # seconds from a move to the server's answer
        self.lost = 0
        self.wrong = 0
        self.errors: list[str] = []
        self.cpu_s = 0.0

    def page_token(self) -> str:
        """This student's page and session token (:func:`page_token`; a busy server gets 4 × the timeout)."""
        return page_token(self.url, self.source, self.args.timeout * 4)


class ProtocolStudent(StudentThread):
    """One student on the wire: join, move the batch slider, leave (see the module's docstring)."""

    def __init__(self, index: int, url: str, start_at: float, args, go: threading.Event, leave: threading.Event,
                 spread: bool, *, source_ip=None, stops=None):
        super().__init__(index, url, start_at, args, go, leave, source_ip(index, spread) if source_ip else None)
        self.stops = stops
        self.position: int | None = None

    # -- the wire ------------------------------------------------------------------------
    async def _send(self, msg) -> None:
        await self.ws.write_message(msg.header_json)
        await self.ws.write_message(msg.metadata_json)
        await self.ws.write_message(msg.content_json)  # the messages sent here carry no binary buffers

    async def _receive(self, timeout: float):
        """The next whole message from the server."""
        deadline = time.monotonic() + timeout
        while True:
            fragment = await asyncio.wait_for(self.ws.read_message(), max(0.0, deadline - time.monotonic()))
            if fragment is None:
                raise RuntimeError("the server closed the connection")
            msg = await self.receiver.consume(fragment)
            if msg is not None:
                return msg

    async def _join(self) -> None:
        t0 = time.perf_counter()
        token = await asyncio.to_thread(self.page_token)
        parts = urllib.parse.urlsplit(self.url)
        ws_url = urllib.parse.urlunsplit(("ws", parts.netloc, parts.path.rstrip("/") + "/ws", "", ""))
        request = HTTPRequest(ws_url, connect_timeout=self.args.timeout, request_timeout=self.args.timeout)
        if self.source:
            request.network_interface = self.source
        self.ws = await open_socket(request, subprotocols=["bokeh", token], max_message_size=64 * 2**20)
        self.protocol = Protocol()
        self.receiver = Receiver(self.protocol)
        ack = await self._receive(self.args.timeout)
        if ack.msgtype != "ACK":
            raise RuntimeError(f"expected ACK, got {ack.msgtype}")
        await self._send(self.protocol.create("PULL-DOC-REQ"))
        while True:
            reply = await self._receive(self.args.timeout)
            if reply.msgtype == "PULL-DOC-REPLY":
                break
        ids = find_models(reply.content["doc"])
        self.slider, self.workload = ids["slider"], ids["workload"]
        self.position = self.stops.index(ids["value"]) if ids["value"] in self.stops else 0
        await self._send(patch_doc(patch_doc.create_header(), {}, {"events": [READY_EVENT]}))
        self.ready_s = time.perf_counter() - t0

    async def _move(self, index: int) -> None:
        event = {"kind": "ModelChanged", "model": {"id": self.slider}, "attr": "value", "new": index}
        t0 = time.perf_counter()
        await self._send(patch_doc(patch_doc.create_header(), {}, {"events": [event]}))
        deadline = time.monotonic() + self.args.timeout
        while True:
            try:
                msg = await self._receive(max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                self.lost += 1
                raise RuntimeError(f"no workload update within {self.args.timeout} s") from None
            batch = workload_batch(msg, self.workload) if msg.msgtype == "PATCH-DOC" else None
            if batch is not None:
                break
        self.latencies.append(time.perf_counter() - t0)
        if batch != self.stops[index]:
            self.wrong += 1

    async def _lesson(self) -> None:
        rng = random.Random(self.index)
        await asyncio.sleep(max(0.0, self.start_at - time.monotonic()))
        try:
            await self._join()
        finally:
            self.joined.set()
        await asyncio.to_thread(self.go.wait)
        position = self.position
        for i in range(self.args.moves):
            await asyncio.sleep(rng.uniform(0.5, 1.5) * self.args.think)
            # Walk up the batch stops, then back down: every move changes the batch.
            position = position + 1 if (i // 4) % 2 == 0 else position - 1
            position = min(max(position, 0), len(self.stops) - 1)
            await self._move(position)

    def run(self) -> None:
        cpu0 = time.thread_time()
        loop = asyncio.new_event_loop()
        try:
            loop.run_until_complete(self._lesson())
        except Exception as exc:  # noqa: BLE001 - every failure is counted and reported
            self.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            self.joined.set()
            self.cpu_s = time.thread_time() - cpu0
            self.leave.wait()
            if getattr(self, "ws", None) is not None:
                loop.run_until_complete(self._leave())
            loop.close()

    async def _leave(self) -> None:
        self.ws.close()
        await asyncio.sleep(0.05)  # the close frame goes out

    def close(self) -> None:
        """Nothing to do outside the thread (the websocket closes when the lesson ends)."""
