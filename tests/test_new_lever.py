"""A new lever is a few places, and the parity test fails when its JavaScript is left out.

``tests/data/dummy_lever.patch`` adds a lever the way a contributor would (an extra time every step waits,
``extra_step_s``): its row in the lever table, its field in the step profile, the profile's reading of it,
its term in core's step and in the browser's (``app/step.js``).  Applied to a copy of the lab, the lever
reaches the command line and the link through the table alone, and the parity tests pass; applied without
its JavaScript, they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATCH = ROOT / "tests" / "data" / "dummy_lever.patch"
#: What a copy of the lab needs to run its parity tests.
COPIED = ("core", "app", "tests", "pyproject.toml")
PARITY = ("tests/test_step_parity.py", "-k", "browser_step or evaluates_a_scenario")


def lab_with(tmp_path: Path, name: str, exclude: tuple[str, ...] = ()) -> Path:
    """A copy of the lab with the dummy lever's patch applied (less the files in ``exclude``)."""
    root = tmp_path / name
    for item in COPIED:
        src = ROOT / item
        if src.is_dir():
            shutil.copytree(src, root / item, ignore=shutil.ignore_patterns("__pycache__", ".hypothesis"))
        else:
            shutil.copy2(src, root / item)
    args = ["git", "apply", "-C1", *(f"--exclude={path}" for path in exclude), str(PATCH)]
    subprocess.run(args, cwd=root, check=True, capture_output=True)
    return root


def run(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(root), "HYPOTHESIS_PROFILE": "no-shrink"}
    return subprocess.run([sys.executable, *args], cwd=root, env=env, capture_output=True, text=True, timeout=600)


def test_the_dummy_lever_is_five_places_in_four_files():
    text = PATCH.read_text(encoding="utf-8")
    files = [line.split(" b/")[-1] for line in text.splitlines() if line.startswith("diff --git")]
    hunks = [line for line in text.splitlines() if line.startswith("@@")]
    assert sorted(files) == ["app/step.js", "core/profiles.py", "core/scenario.py", "core/step.py"]
    assert len(hunks) <= 5


@pytest.mark.parametrize("without_js", [False, True], ids=["whole", "without-its-javascript"])
def test_parity_holds_with_the_lever_and_fails_without_its_javascript(tmp_path, without_js):
    root = lab_with(tmp_path, "lab", exclude=("app/step.js",) if without_js else ())
    if not without_js:
        # The table alone gives it a flag (and so a link key): a step waits 1 ms longer.
        plain, extra = (json.loads(run(root, "-m", "core", "explain", "--json", *flags).stdout)
                        for flags in ((), ("--extra-step-s", "0.001")))
        assert extra["step_time_s_with_kv"] == pytest.approx(plain["step_time_s_with_kv"] + 0.001, rel=1e-12)
    tests = run(root, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *PARITY)
    if without_js:
        assert tests.returncode == 1 and "failed" in tests.stdout, tests.stdout[-2000:]
    else:
        assert tests.returncode == 0, tests.stdout[-2000:]
