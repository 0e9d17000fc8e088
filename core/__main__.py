"""``python -m core``: see :mod:`core.cli`."""

import os
import sys

from .cli import main

try:
    code = main()
    sys.stdout.flush()  # a closed pipe is found here, while it can still be caught
except BrokenPipeError:
    # ``python -m core explain --json | head -1``: the reader left. Python's documented answer ("Note on SIGPIPE",
    # the signal module's page): point stdout at devnull, so that the flush at exit does not raise again.
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    code = 1
sys.exit(code)
