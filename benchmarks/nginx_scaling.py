"""Throughput with 1, 2, 4 ``panel serve`` processes behind nginx (run by hand; needs nginx).

    .venv/bin/python benchmarks/nginx_scaling.py [--procs 1 2 4] [--clients 40] [--window 0] [--moves 3]

Runs the shipped ``assets/deploy/nginx.conf`` on loopback: only its upstream
``server`` lines (pointed at K local ``panel serve app`` processes on free
ports) and its ``listen`` line (a free loopback port) are rewritten; ip_hash,
the websocket upgrade and the proxy headers are the file's own.  Then
``benchmarks/load_test.py``'s class run goes through nginx, each student from
its own loopback address 127.0.<i>.1, so ip_hash spreads them as it would spread
a class of machines.  Reports, per K: sessions ready per second (everyone
joining at once by default), time to ready, update latency, sessions built
(== students when stickiness held: each page's GET and websocket reached the
same process) and how ip_hash spread the students over the processes.

nginx is Debian's package (``apt-get install nginx``); this is not part of the
test suite, which only checks the shipped file's structure.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import load_test  # noqa: E402
from load_test import SERVER_ENV, Servers, fmt, machine, reused_sessions, run_class, stop, write_result  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from conftest import start_lab, wait_for_url  # noqa: E402

NGINX_CONF = ROOT / "assets" / "deploy" / "nginx.conf"
UPSTREAM = re.compile(r"(upstream roofline_lab \{\n(?:\s*#.*\n)*\s*ip_hash;\n)((?:\s*server [^;]+;\n)+)")
LISTEN = re.compile(r"listen \d+;")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def loopback_conf(backend_ports: list[int], listen_port: int) -> str:
    """The shipped nginx.conf with its upstream servers and listen line pointed at loopback."""
    text = NGINX_CONF.read_text()
    match = UPSTREAM.search(text)
    if not match or len(LISTEN.findall(text)) != 1:
        raise SystemExit(f"{NGINX_CONF}: no 'upstream roofline_lab {{ ip_hash; server ...; }}' or not one listen line")
    servers = "".join(f"        server 127.0.0.1:{p};\n" for p in backend_ports)
    text = text[:match.start(2)] + servers + text[match.end(2):]
    return LISTEN.sub(f"listen 127.0.0.1:{listen_port};", text)


def start_nginx(conf_text: str, workdir: Path) -> subprocess.Popen:
    (workdir / "logs").mkdir(parents=True, exist_ok=True)
    conf = workdir / "nginx.conf"
    conf.write_text(conf_text)
    cmd = ["nginx", "-p", str(workdir), "-c", str(conf),
           "-g", f"daemon off; pid {workdir / 'nginx.pid'}; error_log {workdir / 'logs' / 'error.log'} warn;"]
    check = subprocess.run([*cmd, "-t"], capture_output=True, text=True)
    if check.returncode != 0:
        raise SystemExit(f"nginx -t failed:\n{check.stderr}")
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=(workdir / "logs" / "stderr.log").open("w"))


def run_k(k: int, args, workdir: Path) -> dict:
    os.environ.update(SERVER_ENV)
    listen = free_port()
    procs, logs = [], []
    nginx = None
    try:
        for i in range(k):
            log = workdir / f"panel-{k}-{i}.log"
            proc, _url = start_lab(log, ["--use-xheaders", "--allow-websocket-origin", f"127.0.0.1:{listen}",
                                         *args.server_arg], timeout=120)
            procs.append(proc)
            logs.append(log)
        ports = [int(p.args[p.args.index("--port") + 1]) for p in procs]
        nginx = start_nginx(loopback_conf(ports, listen), workdir / f"nginx-{k}")
        url = f"http://127.0.0.1:{listen}/app"
        wait_for_url(url, timeout=30.0)
        servers = Servers([psutil.Process(p.pid) for p in procs], logs, url,
                          permanent=k * reused_sessions(args.server_arg))
        servers.wait_sessions_gone()  # the GET above built a session; let it go
        before = [len(load_test.LAUNCHED.findall(log.read_text())) for log in logs]
        result = run_class(servers, args, spread=True)
        # Sessions each process built for the class (the warm-up session included).
        result["per_process_sessions"] = [len(load_test.LAUNCHED.findall(log.read_text())) - b
                                          for log, b in zip(logs, before, strict=True)]
        result["server_log_errors"] = servers.log_errors()[:50]
        result["processes"] = k
        return result
    finally:
        if nginx is not None:
            stop(nginx)
        for proc in procs:
            stop(proc)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--procs", type=int, nargs="+", default=[1, 2, 4], help="process counts to compare")
    p.add_argument("--clients", type=int, default=40)
    p.add_argument("--window", type=float, default=0.0, help="join window in s (default 0: everyone at once)")
    p.add_argument("--moves", type=int, default=3)
    p.add_argument("--think", type=float, default=1.0)
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                   help="extra `panel serve` argument for every process (repeat), e.g. --server-arg=--reuse-sessions")
    p.add_argument("--name", help="result file name (default nginx-scaling-<clients>)")
    args = p.parse_args(argv)
    if shutil.which("nginx") is None:
        print("error: nginx is not installed (Debian: apt-get install nginx)", file=sys.stderr)
        return 2
    load_test.profile_session_build()  # imports the app's components the server's way
    load_test.alias_generated_models()
    runs = []
    result = {"machine": machine(), "nginx_conf": str(NGINX_CONF.relative_to(ROOT)), "server_args": args.server_arg,
              "runs": runs}
    with tempfile.TemporaryDirectory(prefix="roofline-nginx-") as tmp:
        for k in args.procs:
            runs.append(run_k(k, args, Path(tmp)))
            path = write_result(args.name or f"nginx-scaling-{args.clients}", result)  # kept if a later run fails
    m = result["machine"]
    print(f"{m['date_utc']} UTC · {m['cpus']} × {m['cpu_model']} · nginx {nginx_version()} · {args.clients} clients "
          f"joining within {args.window:g} s, {args.moves} moves each · panel serve "
          f"{' '.join(args.server_arg) or '(defaults)'}\n")
    print("| processes | sessions/s | ready p50 / p95 | update p50 / p95 | built / students | per process "
          "| lost / wrong / errors |")
    print("|---|---|---|---|---|---|---|")
    for r in runs:
        print(f"| {r['processes']} | {fmt(r['sessions_per_s'], 1, '', 2)} | {fmt(r['ready_p50_s'], 1, '', 1)} / "
              f"{fmt(r['ready_p95_s'], 1, ' s', 1)} | {fmt(r['update_p50_s'], 1e3)} / "
              f"{fmt(r['update_p95_s'], 1e3, ' ms')} | "
              f"{r['sessions_built']} / "
              f"{r['clients']} | {r['per_process_sessions']} | {r['lost_updates']} / {r['wrong_updates']} / "
              f"{r['client_error_count'] + len(r['server_log_errors'])} |")
    print(f"\nwrote {path.relative_to(ROOT)}")
    return 0


def nginx_version() -> str:
    out = subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr
    return out.strip().rsplit("/", 1)[-1]


if __name__ == "__main__":
    sys.exit(main())
