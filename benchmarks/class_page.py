"""A class on the offline page, served as a static file beside the lab (run by hand, not by the tests).

    .venv/bin/python benchmarks/class_page.py [--clients 100] [--window 10] [--model llama-3-8b]

The served lab builds a Python session per student (about half a second of CPU
here, see ``load_test.py``); the offline page (``python -m app export``) needs
none: the browser evaluates the model itself.  This writes the page for one
scenario into a directory, serves it with ``panel serve app --static-dirs
class=DIR`` (the teacher keeps the full lab at ``/app``), lets N clients fetch it
within ``--window`` seconds and reports, like ``load_test.py``: time until each
has the whole page (p50/p95/max), the server's CPU per student, errors; and,
once, how long headless Chromium takes from opening the page to its first
drawing (what each student's own machine then spends).

Results print as Markdown and go to ``benchmarks/results/class-page.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import urllib.request
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from conftest import CHROMIUM_ARGS, start_lab, stop_lab, system_chromium  # noqa: E402
from load_test import percentile  # noqa: E402 - one nearest-rank quantile for every benchmark

from core.scenario import Scenario  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"


def fetch_all(url: str, n: int, window: float, size: int) -> tuple[list[float], list[str]]:
    """N clients at evenly spaced times within ``window`` s: seconds until each has the whole page."""
    times: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    t0 = time.monotonic() + 0.2

    def student(i: int) -> None:
        time.sleep(max(0.0, t0 + window * i / n - time.monotonic()))
        start = time.perf_counter()
        try:
            with urllib.request.urlopen(url, timeout=120) as resp:
                body = resp.read()
            if len(body) != size:
                raise RuntimeError(f"got {len(body)} of {size} bytes")
            with lock:
                times.append(time.perf_counter() - start)
        except Exception as exc:  # noqa: BLE001 - counted and reported
            with lock:
                errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=student, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    return times, errors


def first_drawing_s(url: str) -> float:
    """Seconds from opening the page in headless Chromium until its roofline has data (the page's first drawing)."""
    from playwright.sync_api import sync_playwright

    launch = {"args": CHROMIUM_ARGS}
    if system_chromium():
        launch["executable_path"] = system_chromium()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(**launch)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_function("Bokeh.documents.length > 0 && "
                               "Bokeh.documents[0].get_model_by_name('workload').data.x.length > 0", timeout=60_000)
        elapsed = time.perf_counter() - start
        browser.close()
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--window", type=float, default=10.0)
    parser.add_argument("--model", default="llama-3-8b")
    args = parser.parse_args()
    from app.standalone import standalone_html

    pages = RESULTS / "class"
    pages.mkdir(parents=True, exist_ok=True)
    page = pages / f"{args.model}.html"
    page.write_text(standalone_html(Scenario(model=args.model)), encoding="utf-8")
    size = page.stat().st_size
    server, lab_url = start_lab(RESULTS / "class-server.log", ["--reuse-sessions", "--static-dirs", f"class={pages}"])
    url = lab_url.rsplit("/app", 1)[0] + f"/class/{page.name}"
    try:
        proc = psutil.Process(server.pid)
        urllib.request.urlopen(url, timeout=30).read()  # the file is read once before the class arrives
        cpu0 = sum(proc.cpu_times()[:2])
        wall0 = time.perf_counter()
        times, errors = fetch_all(url, args.clients, args.window, size)
        wall = time.perf_counter() - wall0
        cpu = sum(proc.cpu_times()[:2]) - cpu0
        drawing = first_drawing_s(url)
    finally:
        stop_lab(server)
    result = {
        "clients": args.clients, "window_s": args.window, "page_bytes": size, "model": args.model,
        "fetched": len(times), "errors": errors[:10], "error_count": len(errors),
        "page_p50_s": percentile(times, 0.5) if times else None,
        "page_p95_s": percentile(times, 0.95) if times else None,
        "page_max_s": max(times) if times else None,
        "all_done_s": wall, "server_cpu_per_student_s": cpu / max(1, len(times)),
        "chromium_first_drawing_s": drawing,
    }
    (RESULTS / "class-page.json").write_text(json.dumps(result, indent=2))
    print(f"| measure ({args.clients} students fetching the offline page within {args.window:g} s) | result |")
    print("|---|---|")
    print(f"| page ({args.model}) | {size / 1e6:.2f} MB |")
    print(f"| fetched / errors | {len(times)} / {len(errors)} |")
    if times:
        print(f"| time to the whole page p50 / p95 / max | {result['page_p50_s']:.2f} / {result['page_p95_s']:.2f} / "
              f"{result['page_max_s']:.2f} s |")
    print(f"| all done after (first request → last byte) | {wall:.1f} s |")
    print(f"| server CPU per student | {result['server_cpu_per_student_s'] * 1e3:.1f} ms |")
    print(f"| headless Chromium: open → first drawing (on each student's machine) | {drawing:.2f} s |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
