"""Server hooks of ``panel serve app`` (Bokeh's directory-app format reads ``app_hooks.py``): a link no page can
be built for is refused before the page is built, with an error page that says why.

A page's websocket repeats the page's query twice: BokehJS opens ``<path>/ws?<window.location.search>``, and the
session token it sends in ``Sec-WebSocket-Protocol`` holds the page request's headers, cookies and query
arguments (``bokeh.util.token.generate_jwt_token``; compressed, then base64 twice: ~1.8 characters per query
character that does not compress).  Tornado closes a request whose headers pass its 64 KiB, so a 61-64 KB link
opened a white page: its GET was answered, its websocket never connected.

* :func:`on_server_loaded` raises Tornado's cap on a query's parameters (1,000 since Tornado 6.5.8, answered with
  an empty HTTP 400 before any of the lab's code runs) to what its header limit can hold: a link with too many
  keys then reaches the lab, which ignores it as a whole with one notice (:data:`core.permalink.MAX_LINK_KEYS`).
* :func:`process_request` runs for every page request before its session is built (Panel's ``DocHandler``
  calls it, with ``--reuse-sessions`` too): a link :func:`core.permalink.link_refusal` refuses, or one whose
  page's websocket request would pass the header limit, is answered with an HTTP error page naming the reason.

Links of 64 KiB and more never reach these hooks: Tornado closes the connection on reading the request's
headers (behind the nginx recipe, nginx answers them 414 first: ``assets/deploy/nginx.conf``).
"""

from __future__ import annotations

import threading

from bokeh.util.token import generate_jwt_token
from tornado import httputil
from tornado.web import HTTPError

from app import log_hygiene
from core.permalink import LinkRefusal, link_refusal
from core.published import warm_rows

#: Tornado's limit on a request's headers, bytes (``HTTP1ConnectionParameters``' default ``max_header_size``, which
#: ``panel serve`` keeps).
TORNADO_MAX_HEADER_BYTES = 65_536
#: The websocket handshake's own headers beyond the page request's (Upgrade, Connection, Sec-WebSocket-Key,
#: -Version, -Extensions, Origin; ~300 bytes from Chromium), with room to spare.
HANDSHAKE_BYTES = 2_048
#: Below this many query characters the page's websocket request is far inside the limit (the query twice, at
#: most ~3 × 4,096 bytes, and the page request's headers): the token is not built to check it.
CHECKED_FROM_CHARS = 4_096


def on_server_loaded(server_context) -> None:
    """At server start: Tornado reads as many query parameters as its header limit can hold; the server's log
    lines that quote a visitor's link are cut (:mod:`app.log_hygiene`); the Expected tab's published measurements
    are computed once, in a thread of their own (:func:`core.published.warm_rows`, ~0.7 s), not on the event loop
    the first session to open the tab shares."""
    if hasattr(httputil, "ParseUrlEncodedConfig"):  # Tornado >= 6.5.8 caps a query at 1,000 parameters
        httputil.set_parse_body_config(httputil.ParseBodyConfig(
            urlencoded=httputil.ParseUrlEncodedConfig(max_arguments=TORNADO_MAX_HEADER_BYTES)))
    log_hygiene.install()
    threading.Thread(target=warm_rows, name="warm-published-rows", daemon=True).start()


def websocket_request_bytes(request) -> int:
    """Header bytes of the websocket request that the page answered to ``request`` will send (an upper bound).

    Args:
        request: the page's ``tornado.httputil.HTTPServerRequest``.

    Returns:
        the request line (``GET <path>/ws?<query> HTTP/1.1``), the page request's headers again, the session
        token Bokeh builds from them (every header and cookie counted, signed), and :data:`HANDSHAKE_BYTES`.
    """
    payload = {"headers": dict(request.headers), "cookies": {k: m.value for k, m in request.cookies.items()},
               "arguments": request.arguments}
    token = generate_jwt_token("s" * 44, secret_key=b"k" * 32, signed=True, extra_payload=payload)
    line = len(f"GET {request.path}/ws?{request.query} HTTP/1.1\r\n".encode("latin-1", "replace"))
    headers = sum(len(k) + len(v) + 4 for k, v in request.headers.get_all())
    return line + headers + len(f"Sec-WebSocket-Protocol: bokeh, {token}\r\n") + HANDSHAKE_BYTES


def refusal_for(request) -> LinkRefusal | None:
    """Why no page can be built for ``request``'s link (:func:`core.permalink.link_refusal`, and the websocket
    request it would need: :func:`websocket_request_bytes`), or None."""
    refusal = link_refusal(request.query)
    if refusal or len(request.query) <= CHECKED_FROM_CHARS or request.headers.get("Upgrade", "").lower() == "websocket":
        return refusal  # the websocket itself carries the token: its page was checked
    needed = websocket_request_bytes(request)
    if needed > TORNADO_MAX_HEADER_BYTES:
        return LinkRefusal(414, f"this link is {len(request.query):,} characters long; the page's connection would "
                                f"send it twice, {needed:,} bytes of headers, more than the server's "
                                f"{TORNADO_MAX_HEADER_BYTES:,}")
    return None


def process_request(request) -> dict:
    """Refuse a link no page can be built for, before the page is built: an HTTP 414 or 400 whose page says why.

    Raises:
        tornado.web.HTTPError: with the reason as the page's text (Tornado escapes it there).  It is also the
            status line's reason, which Tornado takes only as printable ASCII or Latin-1 without ``<`` (else it
            writes "Unknown"): anything else a key quotes is written as a Python escape (``²`` as ``\\xb2``).
    """
    refusal = refusal_for(request)
    if refusal is not None:
        text = f"Roofline Lab cannot open this link: {refusal.reason}. Open the lab without it: {request.path}"
        raise HTTPError(refusal.status, reason=text.encode("ascii", "backslashreplace").decode().replace("<", "\\x3c"))
    return {}
