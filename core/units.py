"""Unit constants and formatting at the edges.

Everything inside ``core`` is SI: bytes, FLOP, seconds, FLOP/s, bytes/s.
These helpers convert only for display.  Decimal and binary prefixes are never
mixed: ``GB`` always means 1e9 bytes and ``GiB`` always means 2**30 bytes.
"""

from __future__ import annotations

KiB = 2**10
MiB = 2**20
GiB = 2**30
KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
GFLOP = 1e9
TFLOP = 1e12


def fmt_bytes_gb(n: float, digits: int = 2) -> str:
    """``n`` bytes as decimal gigabytes, e.g. ``16.06 GB``."""
    return f"{n / GB:,.{digits}f} GB"


def fmt_bytes_gib(n: float, digits: int = 2) -> str:
    """``n`` bytes as binary gibibytes, e.g. ``14.96 GiB``."""
    return f"{n / GiB:,.{digits}f} GiB"


def fmt_bytes_small(n: float) -> str:
    """Per-token sizes: exact bytes with the KiB or MiB figure, e.g. ``131,072 bytes (128 KiB)``."""
    if n >= MiB:
        return f"{n:,.0f} bytes ({n / MiB:,.2f} MiB)"
    return f"{n:,.0f} bytes ({n / KiB:,.4g} KiB)"


def fmt_flops_rate(x: float) -> str:
    """A FLOP/s figure in TFLOP/s, e.g. ``989.4 TFLOP/s``."""
    return f"{x / TFLOP:,.4g} TFLOP/s"


def fmt_flop(x: float) -> str:
    """A FLOP count in GFLOP, e.g. ``16.06 GFLOP``."""
    return f"{x / GFLOP:,.4g} GFLOP"


def fmt_bandwidth(x: float) -> str:
    """A bytes/s figure in TB/s (1e12 bytes/s), e.g. ``3.35 TB/s``."""
    return f"{x / TB:,.4g} TB/s"


def fmt_seconds(t: float) -> str:
    """A duration in ms (or µs below 0.1 ms), e.g. ``4.79 ms``."""
    if t < 1e-4:
        return f"{t * 1e6:,.3g} µs"
    return f"{t * 1e3:,.4g} ms"
