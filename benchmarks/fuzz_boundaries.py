"""Fuzz every boundary with many inputs (issues 12 and 31): run by hand, not by CI.

    .venv/bin/python benchmarks/fuzz_boundaries.py [--examples 20000] [--only EXPR] [--timeout SECONDS]

Runs the project's fuzz tier — ``tests/property/test_fuzz.py`` (levers, custom-GPU forms,
permalinks and links refused before their page is built, measurement CSV,
measured points through ``analyse()``, the Hardware view's accelerator input,
the command line and its text output) and ``tests/property/test_config_fuzz.py``
(config.json, and the command line's text output for any config and file name)
— with ``--examples`` Hypothesis examples per property instead of CI's few
hundred (the Hardware view's and the command line's text properties run half as
many, the older command-line one a third), and prints how many inputs each
property ran and whether any failed.  A failing property prints Hypothesis's
shrunk counter-example.  ``--only`` picks properties by a pytest ``-k``
expression (issue 31's: ``--only "measured_point or hardware_view or
terminal_control or refused_before"``); ``--timeout`` bounds the run.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = ("tests/property/test_fuzz.py", "tests/property/test_config_fuzz.py")
#: Hypothesis's statistics: a property's name, then one line per phase with its counts.
PROPERTY = re.compile(r"^(tests/\S+::\S+):$", re.M)
COUNTS = re.compile(r"- (\d+) passing, (\d+) failing")


def per_property(out: str) -> dict[str, tuple[int, int]]:
    """(passing, failing) inputs per property, summed over Hypothesis's phases."""
    names = list(PROPERTY.finditer(out))
    counts = {}
    for i, match in enumerate(names):
        block = out[match.end():names[i + 1].start() if i + 1 < len(names) else len(out)]
        found = [(int(p), int(f)) for p, f in COUNTS.findall(block)]
        counts[match.group(1)] = (sum(p for p, _ in found), sum(f for _, f in found))
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20_000, help="Hypothesis examples per property")
    parser.add_argument("--only", metavar="EXPR", help="a pytest -k expression: run only these properties")
    parser.add_argument("--timeout", type=float, default=None, help="stop the run after this many seconds")
    args = parser.parse_args()
    env = {**os.environ, "ROOFLINE_FUZZ_EXAMPLES": str(args.examples), "FUZZ_EXAMPLES": str(args.examples)}
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *FILES, "--hypothesis-show-statistics",
           *(["-k", args.only] if args.only else [])]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        print(f"| fuzzed inputs | stopped after {args.timeout:,.0f} s: no counts (choose fewer --examples) |")
        return 1
    elapsed = time.perf_counter() - start
    out = proc.stdout + proc.stderr
    counts = per_property(out)
    passing = sum(p for p, _ in counts.values())
    failing = sum(f for _, f in counts.values())
    summary = out.strip().splitlines()[-1] if out.strip() else ""
    print(out if proc.returncode else "")
    for name, (p, f) in counts.items():
        print(f"| {name.split('/')[-1]} | {p:,} passing, {f:,} failing |")
    print(f"| fuzzed inputs | {passing + failing:,} ({passing:,} passing, {failing:,} failing) in {elapsed:,.0f} s |")
    print(f"| properties | {summary} |")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
