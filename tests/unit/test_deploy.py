"""The shipped multi-process deployment (assets/deploy/): nginx config and compose file agree.

nginx itself is not needed here (``benchmarks/nginx_scaling.py`` runs the file
on loopback); these checks read the files' structure: sticky sessions, the
websocket upgrade, and upstream servers that are exactly the compose services.
"""

from __future__ import annotations

import re

import yaml
from conftest import ROOT

DEPLOY = ROOT / "assets" / "deploy"


def nginx_text() -> str:
    # Comments removed, so a directive that is only mentioned in a comment does not count.
    return "\n".join(line.split("#", 1)[0] for line in (DEPLOY / "nginx.conf").read_text().splitlines())


def upstream_block(text: str) -> str:
    match = re.search(r"upstream\s+roofline_lab\s*\{([^}]*)\}", text)
    assert match, "nginx.conf has no 'upstream roofline_lab { ... }' block"
    return match.group(1)


def compose() -> dict:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text())


def test_nginx_braces_balance_and_directives_end():
    text = nginx_text()
    assert text.count("{") == text.count("}")
    for line in text.splitlines():
        line = line.strip()
        # Every line is a block opener/closer, a directive ending in ';', or blank
        # (the map's value pairs end in ';' too).
        assert not line or line.endswith(("{", "}", ";")), f"unterminated nginx line: {line!r}"


def test_nginx_is_sticky_by_client_address():
    block = upstream_block(nginx_text())
    directives = [d.strip() for d in block.split(";") if d.strip()]
    assert directives[0] == "ip_hash"
    assert all(d.startswith("server ") for d in directives[1:])


def test_nginx_upgrades_websockets():
    text = nginx_text()
    assert re.search(r"map\s+\$http_upgrade\s+\$connection_upgrade\s*\{[^}]*default\s+upgrade;[^}]*''\s+close;", text)
    location = re.search(r"location\s+/\s*\{([^}]*)\}", text).group(1)
    assert "proxy_pass http://roofline_lab;" in location
    assert "proxy_http_version 1.1;" in location
    assert re.search(r"proxy_set_header\s+Upgrade\s+\$http_upgrade;", location)
    assert re.search(r"proxy_set_header\s+Connection\s+\$connection_upgrade;", location)
    # An idle page (a student thinking) outlives the Bokeh server's 37 s keep-alive ping.
    timeout = re.search(r"proxy_read_timeout\s+(\d+)s;", location)
    assert timeout and int(timeout.group(1)) > 37


def test_upstream_servers_are_the_compose_lab_services():
    servers = re.findall(r"server\s+([\w.-]+):(\d+);", upstream_block(nginx_text()))
    services = compose()["services"]
    labs = {name: svc for name, svc in services.items() if name != "nginx"}
    assert len(servers) >= 2
    assert {host for host, _ in servers} == set(labs)
    for host, port in servers:
        command = labs[host]["command"]
        assert command[:3] == ["panel", "serve", "app"]
        assert command[command.index("--port") + 1] == port
        assert port in labs[host]["expose"]
        assert "--use-xheaders" in command  # the client's address comes from nginx's X- headers
        assert "--reuse-sessions" in command  # one session built per page, when its websocket arrives


def test_compose_publishes_nginx_with_this_config_and_the_allowed_origin():
    services = compose()["services"]
    nginx = services["nginx"]
    assert "./nginx.conf:/etc/nginx/nginx.conf:ro" in nginx["volumes"]
    listen = re.search(r"listen\s+(\d+);", nginx_text()).group(1)
    published = [p.split(":") for p in nginx["ports"]]
    assert any(inner == listen for _, inner in published)
    host_port = next(outer for outer, inner in published if inner == listen)
    # The default websocket origin is the address nginx is published on.
    origin = services["lab1"]["environment"]["BOKEH_ALLOW_WS_ORIGIN"]
    assert origin.endswith(f"localhost:{host_port}}}")
    assert set(nginx["depends_on"]) == {name for name in services if name != "nginx"}


def test_nginx_compresses_the_class_page():
    # A trial measured the class page at 1,753,704 bytes uncompressed and 476,903 gzipped: 100 students on
    # classroom Wi-Fi.  panel serve has no HTTP compression for static files; nginx adds it.
    text = nginx_text()
    assert re.search(r"^\s*gzip\s+on;", text, re.M)


def test_stopping_a_multi_process_server_stops_its_workers(tmp_path):
    """README, *Serving a class*: ``--num-procs 2`` forks two workers that outlive their parent's SIGTERM; the
    benchmarks and tests stop them with it (the load test used to leave them serving, and using CPU, after a run)."""
    import psutil
    from conftest import start_lab, stop_lab

    proc, url = start_lab(tmp_path / "lab.log", ["--num-procs", "2"])
    workers = psutil.Process(proc.pid).children(recursive=True)
    assert len(workers) == 2
    stop_lab(proc)
    gone, alive = psutil.wait_procs(workers, timeout=5)
    assert alive == [] and len(gone) == 2


ROOT = DEPLOY.parents[1]


def locked(name: str) -> dict[str, str]:
    """``package -> version`` pinned in the lock file ``name`` (names lower-cased, ``_`` as ``-``)."""
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==([^ \\\n]+)", (ROOT / name).read_text(), flags=re.M)
    return {package.lower().replace("_", "-"): version for package, version in pins}


def test_ci_the_image_and_the_deployment_install_the_locked_versions():
    """tests/run (CI's command) installs requirements-test.lock, the Dockerfile (which compose builds)
    requirements.lock, both with their hashes checked; the two agree where they overlap, every package has
    hashes, and panel and bokeh are the minor releases pyproject.toml allows and the suite runs on."""
    import tomllib
    from importlib.metadata import version

    runtime, test = locked("requirements.lock"), locked("requirements-test.lock")
    assert runtime and all(test.get(package) == v for package, v in runtime.items())
    for name in ("requirements.lock", "requirements-test.lock"):
        text = (ROOT / name).read_text()
        assert all("--hash=sha256:" in block for block in re.split(r"\n(?=[A-Za-z0-9])", text) if "==" in block)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert {"panel>=1.9,<1.10", "bokeh>=3.9,<3.10"} <= set(project["dependencies"])
    assert runtime["panel"].startswith("1.9.") and runtime["bokeh"].startswith("3.9.")
    assert (version("panel"), version("bokeh")) == (runtime["panel"], runtime["bokeh"])  # what this suite runs on
    for dependency in project["dependencies"]:
        assert re.split(r"[<>=!~ ]", dependency)[0].lower() in runtime
    for dependency in project["optional-dependencies"]["test"]:  # a test tool missing from the lock: no fresh CI
        assert re.split(r"[<>=!~ \[]", dependency)[0].lower().replace("_", "-") in test, dependency
    assert "--require-hashes -r requirements-test.lock" in (ROOT / "tests" / "run").read_text()
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "--require-hashes -r requirements.lock" in dockerfile and "COPY requirements.lock" in dockerfile
    assert compose()["x-lab"]["build"] == {"context": "../..", "dockerfile": "Dockerfile"}


def header_buffers() -> tuple[int, int]:
    """``large_client_header_buffers``: (number, bytes each)."""
    match = re.search(r"^\s*large_client_header_buffers\s+(\d+)\s+(\d+)k;", nginx_text(), re.M)
    assert match, "nginx.conf sets no large_client_header_buffers (nginx's default 4 8k answers links over 8 KB 414)"
    return int(match.group(1)), int(match.group(2)) * 1024


def test_nginx_buffers_hold_every_link_the_lab_opens_and_refuse_before_the_server_closes():
    """Issue 31, F2: the recipe answered 414 for links over 8 KB, and the lab writes links up to ~20,500 characters.
    A page's websocket carries its query twice: in its request line, and in the session token (one header)."""
    import random
    import string

    from bokeh.util.token import generate_jwt_token
    from tornado.escape import parse_qs_bytes

    from app.app_hooks import TORNADO_MAX_HEADER_BYTES
    from core.permalink import MAX_LINK_CHARS

    number, size = header_buffers()
    assert number >= 3  # the request line, the token, the rest
    assert size >= len(f"GET /app/ws?{'x' * MAX_LINK_CHARS} HTTP/1.1")
    # The largest token an accepted link makes: ~23,400 characters of text that does not compress (a longer one's
    # websocket request would pass the server's 64 KiB, and app/app_hooks.py refuses it).
    rnd = random.Random(31)
    query = "x=" + "".join(rnd.choice(string.ascii_letters + string.digits) for _ in range(23_400))
    token = generate_jwt_token("s" * 44, extra_payload={"headers": {}, "cookies": {}, "arguments":
                                                        parse_qs_bytes(query, keep_blank_values=True)})
    assert size >= len(f"Sec-WebSocket-Protocol: bokeh, {token}") + 1024
    # A longer request line gets nginx's 414 page: panel serve alone closes the connection at 64 KiB, with no page.
    assert size + 2048 < TORNADO_MAX_HEADER_BYTES


def test_nginx_names_no_version():
    assert re.search(r"^\s*server_tokens\s+off;", nginx_text(), re.M)


def test_every_data_file_core_reads_is_installed_with_it():
    """``pip install .`` (the Dockerfile) installs only the package data pyproject names: a data file left out
    is missing where the lab runs from site-packages (core/expected_spread.json was)."""
    import tomllib

    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["core"]
    on_disk = {p.name for p in (ROOT / "core").glob("*.json")}
    assert on_disk and on_disk <= set(listed)
    assert "model_configs/*.json" in listed
