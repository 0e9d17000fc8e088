"""Links of any length or shape against the served lab (issue 31, F3 and F4): each opens a page whose websocket
connects, or is answered with an error page that says what was wrong, never a page that stays white.

Plain HTTP on loopback against ``panel serve app`` (the ``lab_url`` fixture): the page's GET, then the websocket
handshake its browser would send (the page's query in the URL, its session token in ``Sec-WebSocket-Protocol``).
"""

from __future__ import annotations

import base64
import os
import re
import socket
import subprocess
from http.client import HTTPConnection
from urllib.parse import urlsplit

import pytest
from conftest import ROOT
from fuzz_strategies import random_text
from tornado.httputil import HTTPHeaders, HTTPServerRequest, RequestStartLine

from app.app_hooks import TORNADO_MAX_HEADER_BYTES, websocket_request_bytes

#: The headers the tests' page requests send (as a browser would send a few more).
HEADERS = {"User-Agent": "Mozilla/5.0 (X11; Linux x86_64) roofline-link-test", "Accept": "text/html"}


def get_page(lab_url: str, query: str) -> tuple[int, str]:
    """GET the lab at ``?query``: (status, body)."""
    url = urlsplit(lab_url)
    conn = HTTPConnection(url.hostname, url.port, timeout=60)
    try:
        conn.request("GET", f"{url.path}?{query}", headers=HEADERS)
        resp = conn.getresponse()
        return resp.status, resp.read().decode("utf-8", "replace")
    finally:
        conn.close()


def websocket_status(lab_url: str, query: str, page: str) -> str:
    """The status line the server answers the page's websocket handshake with (BokehJS's: ``<path>/ws?<query>``,
    the page's token in ``Sec-WebSocket-Protocol``)."""
    token = re.search(r'"token":"([^"]+)"', page).group(1)
    url = urlsplit(lab_url)
    request = (f"GET {url.path}/ws?{query} HTTP/1.1\r\nHost: {url.netloc}\r\nUpgrade: websocket\r\n"
               f"Connection: Upgrade\r\nSec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n"
               f"Sec-WebSocket-Version: 13\r\nOrigin: http://{url.netloc}\r\nSec-WebSocket-Protocol: bokeh, {token}\r\n"
               + "".join(f"{k}: {v}\r\n" for k, v in HEADERS.items()) + "\r\n")
    with socket.create_connection((url.hostname, url.port), timeout=60) as s:
        s.sendall(request.encode("latin-1"))
        answer = b""
        while b"\r\n" not in answer:
            chunk = s.recv(4096)
            if not chunk:
                return "connection closed"
            answer += chunk
    return answer.split(b"\r\n", 1)[0].decode()


def estimate(lab_url: str, query: str) -> int:
    url = urlsplit(lab_url)
    headers = HTTPHeaders({"Host": url.netloc, "Accept-Encoding": "identity", **HEADERS})
    start = RequestStartLine("GET", f"{url.path}?{query}", "HTTP/1.1")
    return websocket_request_bytes(HTTPServerRequest(start_line=start, headers=headers))


def test_the_labs_longest_link_opens_and_its_websocket_connects(lab_url):
    from inputs import longest_written_query

    query = longest_written_query()
    status, page = get_page(lab_url, query)
    assert status == 200 and websocket_status(lab_url, query, page) == "HTTP/1.1 101 Switching Protocols"


def test_a_link_with_1001_keys_opens_the_lab(lab_url):
    """Issue 31, F3: it got Tornado's HTTP 400 with an empty body."""
    query = "&".join(f"k{i}=1" for i in range(1001))
    status, page = get_page(lab_url, query)
    assert status == 200 and websocket_status(lab_url, query, page) == "HTTP/1.1 101 Switching Protocols"


def test_the_websocket_estimate_holds_at_its_edge(lab_url):
    """The longest incompressible link the lab accepts still connects its websocket; a little longer is refused
    with a page that says why (a 61-64 KB link opened a white page: its websocket request passed 64 KiB)."""
    lo, hi = 4_096, 40_000
    while hi - lo > 1:  # the longest link of random text whose page's websocket request fits
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if estimate(lab_url, "x=" + random_text(mid)) <= TORNADO_MAX_HEADER_BYTES else (lo, mid)
    assert 18_000 < lo < 24_000
    query = "x=" + random_text(lo)
    status, page = get_page(lab_url, query)
    assert status == 200 and websocket_status(lab_url, query, page) == "HTTP/1.1 101 Switching Protocols"
    status, page = get_page(lab_url, "x=" + random_text(lo + 200))
    assert status == 414 and "the page&#x27;s connection would send it twice" in page
    assert "more than the server&#x27;s 65,536" in page and "Open the lab without it: /app" in page


@pytest.mark.parametrize("query, status, says", [
    ("x=" + "a" * 40_000, 414, "this link is 40,002 characters long; Roofline Lab opens links of up to 32,768"),
    ("x=" + "a" * 61_000, 414, "this link is 61,002 characters long"),
    ("batch=4&x=" + "9" * 4301, 400, "&#x27;x&#x27; is a number 4,301 digits long"),
    ("batch=%C2%B2", 400, "&#x27;batch&#x27; is written in digits other than 0-9 (&#x27;\\xb2&#x27;)"),
    ("%3Cscript%3E=%C2%B2", 400, "&#x27;\\x3cscript&gt;&#x27; is written in digits other than 0-9"),
])
def test_a_link_no_page_can_be_built_for_gets_a_page_that_says_why(lab_url, query, status, says):
    """Issue 31, F3 and F4: a 61-64 KB link opened a white page; a 4,301-digit value opened a page whose address
    never updated again (Panel's reader of the address raised while the page was built)."""
    got, page = get_page(lab_url, query)
    assert got == status and says in page and page.startswith("<html><title>")


# -- behind the nginx recipe (assets/deploy/nginx.conf), where nginx is installed ----------------------------------

@pytest.fixture(scope="module")
def nginx_url(tmp_path_factory):
    """The shipped nginx.conf on loopback (its upstream and listen lines rewritten, as benchmarks/nginx_scaling.py
    runs it) in front of one ``panel serve app``."""
    import shutil
    import sys

    # The test command (tests/run) installs Debian's nginx where it is missing; /usr/sbin is not on every PATH.
    binary = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin")
    if binary is None:
        pytest.fail("nginx is not installed: the live proxy tests need its binary (bash tests/run installs Debian's "
                    "package where apt-get can; else apt-get install nginx)")
    from conftest import free_port, start_lab, stop_lab, wait_for_url

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from nginx_scaling import loopback_conf

    work = tmp_path_factory.mktemp("nginx")
    (work / "logs").mkdir()
    listen = free_port()
    lab, lab_url = start_lab(work / "lab.log", ["--use-xheaders", "--allow-websocket-origin", f"127.0.0.1:{listen}"])
    nginx = None
    try:
        (work / "nginx.conf").write_text(loopback_conf([int(urlsplit(lab_url).port)], listen))
        cmd = [binary, "-p", str(work), "-c", str(work / "nginx.conf"),
               "-g", f"daemon off; pid {work / 'nginx.pid'}; error_log {work / 'logs' / 'error.log'} warn;"]
        with (work / "logs" / "stderr.log").open("w") as err:
            nginx = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        url = f"http://127.0.0.1:{listen}/app"
        wait_for_url(url, timeout=30)
        yield url
    finally:
        if nginx is not None:
            nginx.terminate()
            nginx.wait(timeout=10)
        stop_lab(lab)


def test_behind_nginx_the_labs_own_links_open(nginx_url):
    """Issue 31, F2: the recipe answered 414 for links over 8 KB, and the lab writes up to ~20,500 characters
    (~10,000 with ASCII names: 16 pins with 40-character names and every lever moved)."""
    from inputs import longest_written_query

    query = longest_written_query()
    status, page = get_page(nginx_url, query)
    assert status == 200 and websocket_status(nginx_url, query, page) == "HTTP/1.1 101 Switching Protocols"
    query = "x=" + random_text(20_000)  # a link the lab accepts whose token does not compress
    status, page = get_page(nginx_url, query)
    assert status == 200 and websocket_status(nginx_url, query, page) == "HTTP/1.1 101 Switching Protocols"


@pytest.mark.parametrize("length, status, says", [
    (40_000, 414, "Roofline Lab cannot open this link: this link is 40,002 characters long"),
    (60_000, 414, "<title>414 Request-URI Too Large</title>"),  # nginx's own page, before the server's 64 KiB
    (70_000, 414, "<title>414 Request-URI Too Large</title>"),  # panel serve alone closes the connection
])
def test_behind_nginx_a_link_too_long_gets_a_page_that_says_so(nginx_url, length, status, says):
    got, page = get_page(nginx_url, "x=" + "a" * length)
    assert got == status and says in page


def test_nginx_names_no_version(nginx_url):
    url = urlsplit(nginx_url)
    conn = HTTPConnection(url.hostname, url.port, timeout=30)
    try:
        conn.request("GET", "/app?x=" + "a" * 60_000)
        resp = conn.getresponse()
        body = resp.read().decode()
    finally:
        conn.close()
    assert resp.getheader("Server") == "nginx" and "<center>nginx</center>" in body
