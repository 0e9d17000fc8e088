"""benchmarks/protocol_student.py reads a served document and the server's patches as BokehJS would."""

from __future__ import annotations

import json
import sys

from bokeh.document.events import ColumnDataChangedEvent
from bokeh.protocol import Protocol
from conftest import ROOT

from app.lab import Lab

sys.path.insert(0, str(ROOT / "benchmarks"))
from protocol_student import find_models, open_socket, workload_batch  # noqa: E402


def test_the_student_finds_the_batch_slider_and_reads_the_batch_the_server_sends():
    from bokeh.document import Document

    lab = Lab(query={"batch": "8"})
    doc = Document()
    lab.layout.server_doc(doc)
    reply = Protocol().create("PULL-DOC-REPLY", "request-1", doc)
    ids = find_models(json.loads(reply.content_json)["doc"])  # the document as the wire carries it
    slider = doc.get_model_by_id(ids["slider"])
    workload = doc.get_model_by_id(ids["workload"])
    assert "batch" in slider.css_classes and workload.name == "workload"
    assert ids["value"] == slider.value and list(workload.data["batch"]) == [8]
    # What the server sends when the batch moves, as the student receives it.
    events = []
    doc.on_change(lambda event: events.append(event))
    lab.scenario.batch = 64
    changed = [e for e in events if isinstance(e, ColumnDataChangedEvent) and e.model is workload]
    assert changed, "moving the batch changes the workload source"
    msg = Protocol().create("PATCH-DOC", changed)
    assert workload_batch(msg, workload.id) == 64
    assert workload_batch(msg, "p0") is None  # another model's patch


def test_the_students_socket_sends_each_frame_at_once_as_a_browsers_does():
    """TCP_NODELAY on the student's socket (Chromium and Firefox set it on theirs): with Nagle's algorithm on, each
    Bokeh message's second frame waited for the server's delayed ACK, ~40 ms added to every timed move."""
    import asyncio
    import socket

    from tornado.httpclient import HTTPRequest
    from tornado.httpserver import HTTPServer
    from tornado.testing import bind_unused_port
    from tornado.web import Application
    from tornado.websocket import WebSocketHandler

    async def main():
        listener, port = bind_unused_port()  # 127.0.0.1
        server = HTTPServer(Application([("/ws", WebSocketHandler)]))
        server.add_sockets([listener])
        try:
            ws = await asyncio.wait_for(open_socket(HTTPRequest(f"ws://127.0.0.1:{port}/ws")), 10)
            sock = ws.protocol.stream.socket
            nodelay = sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            ws.close()
            return nodelay
        finally:
            server.stop()

    # A loop of its own in a thread of its own: the suite's browser tests may leave one running in this thread.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(lambda: asyncio.run(main())).result(timeout=30) != 0
