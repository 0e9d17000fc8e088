"""Fuzz every boundary with many inputs (issue 12): run by hand, not by CI.

    .venv/bin/python benchmarks/fuzz_boundaries.py [--examples 20000]

Runs the project's fuzz tier — ``tests/test_fuzz.py`` (levers, custom-GPU forms,
permalinks, measurement CSV, the command line) and ``tests/test_config_fuzz.py``
(config.json) — with ``--examples`` Hypothesis examples per property instead of
CI's few hundred, and prints how many inputs ran and whether any property failed.
A failing property prints Hypothesis's shrunk counter-example.  With the default
20,000 per property the run feeds more than 10^5 inputs across the boundaries.
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
FILES = ("tests/test_fuzz.py", "tests/test_config_fuzz.py")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=20_000, help="Hypothesis examples per property")
    args = parser.parse_args()
    env = {**os.environ, "ROOFLINE_FUZZ_EXAMPLES": str(args.examples), "FUZZ_EXAMPLES": str(args.examples)}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *FILES,
                           "--hypothesis-show-statistics"], cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    out = proc.stdout + proc.stderr
    passing = sum(int(n) for n in re.findall(r"- (\d+) passing, \d+ failing", out))
    failing = sum(int(n) for n in re.findall(r"- \d+ passing, (\d+) failing", out))
    summary = out.strip().splitlines()[-1] if out.strip() else ""
    print(out if proc.returncode else "")
    print(f"| fuzzed inputs | {passing + failing:,} ({passing:,} passing, {failing:,} failing) in {elapsed:,.0f} s |")
    print(f"| properties | {summary} |")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
