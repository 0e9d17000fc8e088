"""Benchmark the batching simulation (run by hand, not by the test suite).

    .venv/bin/python benchmarks/bench_batching.py [--requests 1000] [--repeats 30] [--json]

Issue 29's goal: the simulation of 1,000 requests takes <= 50 ms.  Measured on the
article's 70B on two H100s (TP = 2) with ShareGPT lengths (core.batching.SHAREGPT),
a backlog and a Poisson stream at 2 requests/s, and on INT4 weights with 256 slots
(the most steps' work: vLLM's max_num_seqs):

* ``simulate`` alone, static and continuous, on a prepared step table;
* ``compare_batching`` end to end: drawing the stream, the step table (the lab's
  evaluate, batch sweep and prefill step) and both policies.

Prints the median and the worst of ``--repeats`` runs, in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.batching import SHAREGPT, compare_batching, draw_requests, simulate, step_table  # noqa: E402
from core.scenario import Scenario  # noqa: E402

GOAL_MS = 50.0


def timed(fn, repeats: int) -> tuple[float, float]:
    fn()  # warm caches (the catalogue, numpy)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times), max(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args()
    cases = [
        ("70B BF16 TP=2, backlog", Scenario(tp=2), None, None),
        ("70B BF16 TP=2, 2 req/s", Scenario(tp=2), 2.0, None),
        ("70B INT4 TP=2, backlog, 256 slots", Scenario(tp=2, weight_dtype="int4"), None, 256),
    ]
    rows = []
    for label, scenario, rate, slots in cases:
        req = draw_requests(SHAREGPT, args.requests, 0, scenario.context, rate)
        table = step_table(scenario, req, slots or scenario.evaluate().max_batch)
        for policy in ("static", "continuous"):
            med, worst = timed(lambda p=policy, q=req, t=table: simulate(q, t, p), args.repeats)
            rows.append({"case": label, "what": f"simulate {policy}", "median_ms": med, "max_ms": worst})
        med, worst = timed(lambda s=scenario, r=rate, k=slots: compare_batching(s, SHAREGPT, args.requests, 0, k, r),
                           args.repeats)
        rows.append({"case": label, "what": "compare_batching end to end", "median_ms": med, "max_ms": worst})
    if args.json:
        print(json.dumps({"requests": args.requests, "goal_ms": GOAL_MS, "rows": rows}, indent=2))
    else:
        print(f"{args.requests} requests, goal <= {GOAL_MS:g} ms\n")
        print("| case | what | median ms | max ms |\n|---|---|---:|---:|")
        for r in rows:
            print(f"| {r['case']} | {r['what']} | {r['median_ms']:.1f} | {r['max_ms']:.1f} |")
    return 0 if all(r["median_ms"] <= GOAL_MS for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
