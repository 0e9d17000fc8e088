"""Shared fixtures.  Browser tests use Debian's Chromium when it is installed
(``playwright install`` cannot download a browser on every machine) and serve
the lab with the real ``panel serve app`` command."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import Phase, settings

ROOT = Path(__file__).resolve().parents[1]
#: The field cases (tests/field_cases/): small inputs users of memory and roofline calculators ran into.
FIELD_CASES = ROOT / "tests" / "field_cases"
#: The tiers, one folder each: what a tier's tests need and how long it takes is in the README.
TIERS = ("unit", "property", "parity", "browser")

# Hypothesis's per-example deadline is a timed test: on a loaded 2-core machine the first example (which
# deploys a model) can outlast it, and a speed goal belongs in benchmarks/.  "no-shrink" reports the first
# failing example as found (tests that run the suite on a changed copy of the lab only need to see it fail).
settings.register_profile("lab", deadline=None)
settings.register_profile("no-shrink", deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "lab"))

# Chromium's background services try the network at start-up; on a machine with
# no internet those connections only add noise and delay.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def system_chromium() -> str | None:
    """Path of a system Chromium, or None (then Playwright's own browser is used)."""
    return os.environ.get("ROOFLINE_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    args = {**browser_type_launch_args, "args": CHROMIUM_ARGS}
    exe = system_chromium()
    if exe:
        args["executable_path"] = exe
    return args


#: Where servers started by the tests listen: ``ROOFLINE_TEST_PORTS=51000-51099`` (a range a firewall or a
#: neighbour allows) or, unset, any free port the system gives.
TEST_PORTS = os.environ.get("ROOFLINE_TEST_PORTS", "")


def free_port() -> int:
    """A free loopback port: the first free one of ``ROOFLINE_TEST_PORTS``, else one the system picks.

    Raises:
        RuntimeError: the range is malformed or has no free port.
    """
    if not TEST_PORTS:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return s.getsockname()[1]
    try:
        low, high = (int(x) for x in TEST_PORTS.split("-"))
    except ValueError:
        raise RuntimeError(f"ROOFLINE_TEST_PORTS={TEST_PORTS!r}: give a range, e.g. 51000-51099") from None
    for port in range(low, high + 1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"ROOFLINE_TEST_PORTS={TEST_PORTS}: no free port in the range")


def wait_for_url(url: str, proc: subprocess.Popen | None = None, log: Path | None = None,
                 timeout: float = 60.0) -> None:
    """Wait until ``url`` answers 200; fail early if ``proc`` (the server) exits, quoting its ``log``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"panel serve exited with {proc.returncode}: {log.read_text() if log else ''}")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer within {timeout} s")


def start_lab(log: Path, extra_args: Sequence[str] = (), port: int | None = None,
              timeout: float = 60.0, app: str = "app") -> tuple[subprocess.Popen, str]:
    """Start ``panel serve app`` on a loopback port; wait until it answers.

    The server's log goes to ``log`` (a pipe nobody reads could fill and stall it).

    Args:
        extra_args: more ``panel serve`` arguments, e.g. ``["--num-procs", "2"]``
            or ``["--check-unused-sessions", "1000"]``.
        port: the port to listen on (default: a free one).
        timeout: seconds to wait for the first answer.
        app: what to serve, relative to the checkout (a benchmark serves its yardstick page instead).

    Returns:
        the server process and the app's URL (``/<app's folder name>``).
    """
    port = port or free_port()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "panel", "serve", app, "--port", str(port), "--address", "127.0.0.1",
             "--allow-websocket-origin", f"127.0.0.1:{port}", *extra_args],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}/{Path(app).name}"
    try:
        wait_for_url(url, proc, log, timeout)
    except Exception:
        # Stopped and reaped here: a server left running (terminated, not waited for) was reported by the next
        # test to collect it, as a ResourceWarning turned error, and that test failed instead.
        stop_lab(proc)
        raise
    return proc, url


#: A classroom projector's screen (present mode is laid out for it).
PROJECTOR = {"width": 1280, "height": 720}


def open_on_projector(page, url: str) -> list[str]:
    """Open ``url`` in ``page`` at the projector's size; the page's JavaScript errors, collected as they come."""
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.set_viewport_size(PROJECTOR)
    page.goto(url)
    return errors


@pytest.fixture(scope="session")
def lab_url(tmp_path_factory):
    """URL of the lab served by ``panel serve app`` for the browser tests."""
    proc, url = start_lab(tmp_path_factory.mktemp("server") / "panel-serve.log")
    try:
        yield url
    finally:
        stop_lab(proc)


def stop_lab(proc: subprocess.Popen, grace: float = 10.0) -> None:
    """Stop a server started by :func:`start_lab`, and the workers it forked: asked to stop, then killed if it has
    not within ``grace`` seconds (on a busy machine a server finishing its sessions took longer, and the suite
    reported a teardown error).

    ``panel serve --num-procs N`` forks N workers that outlive their parent's SIGTERM: the load test left them
    serving (and using CPU) after each run.
    """
    import psutil

    try:
        workers = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        workers = []
    proc.terminate()
    for worker in workers:
        try:
            worker.terminate()
        except psutil.NoSuchProcess:
            pass
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=grace)
    _, alive = psutil.wait_procs(workers, timeout=grace)
    for worker in alive:
        worker.kill()


@pytest.fixture(scope="module")
def served_application():
    """``app/`` as ``panel serve app`` runs it, for sessions built in process with Panel's session generator
    (``panel.io.session.generate_session``, the one ``panel serve --warm`` uses).

    With the ``DocumentLifecycleHandler`` Bokeh's server adds to every application, so a session ends as it
    does when served.  ``app/main.py``'s process-wide settings (Bokeh's checks, the GC
    thresholds, the connection notices) are put back afterwards.
    """
    import gc

    import panel as pn
    from bokeh.application.handlers.document_lifecycle import DocumentLifecycleHandler
    from bokeh.command.util import build_single_handler_application
    from bokeh.settings import settings

    app = build_single_handler_application(str(Path(__file__).resolve().parents[1] / "app"))
    app.add(DocumentLifecycleHandler())  # what bokeh.server.tornado.BokehTornado adds to every application
    thresholds = gc.get_threshold()
    yield app
    gc.set_threshold(*thresholds)
    settings.perform_document_validation.unset_value()
    settings.perform_error_diagnostics.unset_value()
    settings.simple_ids.unset_value()
    settings.serialize_include_defaults.unset_value()
    pn.config.param.update(disconnect_notification="Server connection lost.", ready_notification="",
                           notifications=False, browser_info=True)


# The roofline's legend entries (BokehJS draws each as a <div> with a small canvas for its glyph, in a shadow root):
# [label, inactive (greyed), painted pixels in its swatch].
LEGEND_ENTRIES = """(() => {
  const out = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.classList.contains('bk-item') && el.querySelector('canvas')) {
        const c = el.querySelector('canvas'), px = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        let ink = 0;
        for (let i = 3; i < px.length; i += 4) ink += px[i] > 0;
        out.push([el.textContent.trim(), el.classList.contains('bk-inactive'), ink]);
      }
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return out; })()"""


def click_until(page, button: str, expected, tries: int = 4) -> None:
    """Click ``button`` until ``expected`` shows: Panel sends typed text to the server after a debounce, and on a
    loaded machine the first click can reach the server before the text does."""
    for attempt in range(tries):
        if attempt and expected.is_visible():  # the last click landed after its wait: do not click again
            return
        page.locator(button).click()
        try:
            expected.wait_for(timeout=3000)
            return
        except Exception:  # noqa: BLE001 - playwright's TimeoutError; try again, then fail below
            if attempt == tries - 1:
                raise


def scenario_on(model: str, gpu: str, **levers):
    """A scenario of a catalogue model and GPU, or of a session's own GPU (``"custom"``) or pasted config
    (``"pasted"``, Qwen2.5-7B's config.json under another name; ``"pasted-sparse"``, DeepSeek-V3.2's, with its
    sparse-attention indexer): they travel to the browser too."""
    import json

    from core import Scenario
    from core.config_reader import from_hf_config
    from core.hardware import custom_accelerator
    from core.model_catalogue import CATALOGUE_DIR

    s = Scenario(**levers)
    if gpu == "custom":
        s.add_gpu(custom_accelerator("Lab <card>", bandwidth_tbs=1.5, capacity_gb=96, bf16=300, fp8=600))
    else:
        s.gpu = gpu
    if model == "pasted":
        config = json.loads((CATALOGUE_DIR / "qwen2.5-7b.json").read_text())
        s.add_model(from_hf_config(config, model_id="config-pasted", name="Pasted <i>Qwen</i>"))
    elif model == "pasted-sparse":
        config = json.loads((FIELD_CASES / "sparse-attention-indexer-cache.json").read_text())["input"]["config"]
        s.add_model(from_hf_config(config, model_id="config-sparse", name="DeepSeek-V3.2 (pasted)"))
    else:
        s.model = model
    return s


def pytest_collection_modifyitems(config, items):
    """Each test carries its tier's marker, from its folder (``-m unit``, ``-m "not browser"``)."""
    for item in items:
        tier = Path(str(item.path)).parent.name
        if tier in TIERS:
            item.add_marker(getattr(pytest.mark, tier))

