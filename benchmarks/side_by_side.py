"""Side by side, in one run: the lab of another checkout, this checkout's lab, and the one-figure yardstick page.

    .venv/bin/python benchmarks/side_by_side.py --ref /tmp/mainref [--rounds 3] [--clients 20]

``--ref`` is a checkout (a ``git worktree`` of main, say) with its own ``.venv``.  Each round runs
``benchmarks/load_test.py`` (a class of ``--clients`` students on one ``panel serve``, loopback only) three
times, alternating: the reference's lab with the reference's code, this checkout's lab, and this checkout's
``benchmarks/one_figure`` (a one-figure, one-slider Panel page served the same way).  On a machine other work
shares, alternating keeps each comparison within minutes; the load average is recorded with each run.

Prints the medians over the rounds of server CPU per session, RSS per joined session and update latency p95,
and the ratios the issue sets targets for (server CPU ≤ 2.5 × the one-figure page's, ≤ 2.5 MB per session);
writes ``benchmarks/results/side-by-side.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
KEYS = ("server_cpu_per_session_s", "rss_per_session_mb", "update_p95_s", "client_error_count", "sessions_ready",
        "load_average_1min_before_after")


def run(checkout: Path, name: str, clients: int, app: str | None) -> dict:
    """One load test in ``checkout`` with its own interpreter; its result."""
    cmd = [str(checkout / ".venv" / "bin" / "python"), str(checkout / "benchmarks" / "load_test.py"),
           "--clients", str(clients), "--name", name, *(["--app", app] if app else [])]
    done = subprocess.run(cmd, cwd=checkout, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    result = json.loads((checkout / "benchmarks" / "results" / f"{name}.json").read_text())
    return {key: result.get(key) for key in KEYS}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ref", type=Path, required=True, help="the other checkout (with its own .venv)")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--clients", type=int, default=20)
    args = p.parse_args(argv)
    configs = (("reference lab", args.ref.resolve(), None), ("this lab", ROOT, None),
               ("one-figure page", ROOT, "benchmarks/one_figure"))
    runs: dict[str, list[dict]] = {label: [] for label, *_ in configs}
    for i in range(args.rounds):
        for label, checkout, app in configs:
            r = run(checkout, f"sbs-{label.split()[0]}-{i}", args.clients, app)
            runs[label].append(r)
            print(f"round {i + 1} {label}: {r['server_cpu_per_session_s'] * 1e3:.0f} ms CPU/session, "
                  f"{r['rss_per_session_mb']:.2f} MB/session, update p95 {r['update_p95_s'] * 1e3:.0f} ms, "
                  f"load {r['load_average_1min_before_after']}", flush=True)

    def median(label: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[label])

    floor = median("one-figure page", "server_cpu_per_session_s")
    print(f"\n{args.rounds} rounds, {args.clients} students each, alternated; os.cpu_count() = {os.cpu_count()}\n")
    print("| page | server CPU per session | × one-figure page | RSS per session | update p95 |")
    print("|---|---|---|---|---|")
    for label, *_ in configs:
        cpu = median(label, "server_cpu_per_session_s")
        print(f"| {label} | {cpu * 1e3:.0f} ms | {cpu / floor:.2f} × | {median(label, 'rss_per_session_mb'):.2f} MB | "
              f"{median(label, 'update_p95_s') * 1e3:.0f} ms |")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "side-by-side.json").write_text(json.dumps({"ref": str(args.ref), "runs": runs}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
