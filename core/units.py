"""Unit constants and formatting at the edges.

Everything inside ``core`` is SI: bytes, FLOP, seconds, FLOP/s, bytes/s.
These helpers convert only for display.  Decimal and binary prefixes are never
mixed: ``GB`` always means 1e9 bytes and ``GiB`` always means 2**30 bytes.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

KiB = 2**10
MiB = 2**20
GiB = 2**30
KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
GFLOP = 1e9
TFLOP = 1e12
#: Seconds in each unit :func:`fmt_seconds` writes, and the significant digits it writes them with.
SECONDS_PER = {"µs": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0}
SECONDS_SIG = {"µs": 3, "ms": 4, "s": 3, "min": 3, "h": 3}


#: A number as a person types one where a number is expected: ASCII digits, an optional sign, point and exponent
#: (``4``, ``-0.5``, ``1e3``, ``.5``).  Python's ``float`` also reads fullwidth ``４``, Arabic-Indic ``٤``,
#: ``1_000``, ``inf`` and ``nan``; none of them is a number here.
NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_number(text: str) -> float:
    """``text`` (surrounding ASCII whitespace allowed) as a float, if it is written as :data:`NUMBER`.

    Raises:
        ValueError: anything else, fullwidth and other non-ASCII digits included.
    """
    stripped = str(text).strip(" \t\r\n")
    if not NUMBER.fullmatch(stripped):
        raise ValueError(f"not a number written in ASCII digits: {str(text)[:20]!r}")
    return float(stripped)


def underflows(text: str, value: float) -> bool:
    """Whether ``text``, read as ``value``, wrote a number too small for a float: nonzero digits before its
    exponent and a value of 0 (``1e-400``).  Readers refuse it rather than take the 0 nobody typed.

    >>> underflows("1e-400", 0.0), underflows("0.000e5", 0.0), underflows("1e-3", 1e-3)
    (True, False, False)
    """
    return value == 0 and any(d in "123456789" for d in text.lower().partition("e")[0])


def fmt_sig(x: float, sig: int = 4) -> str:
    """``x`` to ``sig`` significant digits with thousands separators and never
    in e-notation: ``1,365``, ``128,000``, ``0.9813``, ``11.8``."""
    if x == 0 or not math.isfinite(x):
        return f"{x:g}"
    digits = sig - 1 - math.floor(math.log10(abs(x)))
    text = f"{round(x, digits):,.{max(digits, 0)}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def sum_digits(parts: list[float], total: float | None = None, digits: int = 1, most: int = 6) -> int:
    """The fewest decimals, from ``digits``, at which ``parts`` printed add to ``total`` printed.

    ``parts`` are the values a reader adds, in the unit they are printed in (GB, not bytes); ``total`` is their sum
    as the page computes it (default ``sum(parts)``).  Rounded one by one, 7.746 + 0.244 prints as 7.7 + 0.2
    beside a total of 8.0; at two decimals 7.75 + 0.24 = 7.99.  The check is on the printed decimals, exactly
    (``app/units.js`` ``sumDigits`` the same).  Gives ``most`` if no count below it adds up.

    >>> sum_digits([7.746, 0.244])
    2
    >>> sum_digits([7.7, 0.2])
    1
    """
    total = sum(parts) if total is None else total
    for d in range(digits, most):
        if sum(Decimal(f"{p:.{d}f}") for p in parts) == Decimal(f"{total:.{d}f}"):
            return d
    return most


def factor_digits(x: float, multiplier: float, total: float, digits: int = 3, total_digits: int = 2,
                  most: int = 9) -> int:
    """The fewest decimals, from ``digits``, at which ``x`` printed times ``multiplier`` prints as ``total`` does at
    ``total_digits``: ``0.2047 GiB × 8 × 4 = 6.55 GiB`` where "0.205 GiB × 8 × 4" is 6.56.  Gives ``most`` if no
    count below it does.  ``app/units.js`` ``factorDigits`` the same.

    >>> factor_digits(0.20469, 32, 0.20469 * 32)
    4
    """
    want = f"{total:.{total_digits}f}"
    for d in range(digits, most):
        if f"{float(f'{x:.{d}f}') * multiplier:.{total_digits}f}" == want:
            return d
    return most


def product_digits(a: float, b: float, digits: int = 1, most: int = 4) -> int:
    """The fewest decimals, from ``digits``, at which the percentages of shares ``a`` and ``b`` printed multiply
    to that of ``a·b`` printed: "99.3 % × 50.4 % = 50.0 %" (50.05 % printed at one decimal is 50.0 % or 50.1 %
    by a hair; the check is on the printed digits).  Gives ``most`` if no count below it does.

    >>> product_digits(0.993, 0.504)
    1
    >>> product_digits(0.6655, 0.9985)
    2
    """
    for d in range(digits, most):
        shown = float(f"{100 * a:.{d}f}") * float(f"{100 * b:.{d}f}") / 100
        if f"{shown:.{d}f}" == f"{100 * a * b:.{d}f}":
            return d
    return most


def fmt_sig_whole(x: float) -> str:
    """Four significant digits, or whole from 10,000: a figure that four digits would print with made-up zeros
    (a prefill's "2 × 1 × 32,768 / 2 bytes" is 32,768, which four digits wrote 32,770; a KV cache of 1 GiB a
    token is 1,048,576 KiB, not "1,049,000").  ``app/units.js`` ``fmtSigWhole``."""
    return fmt_sig(x) if abs(x) < 1e4 else f"{x:,.0f}"


def fmt_ridge(x: float, work: bool = False) -> str:
    """A ridge point's number (FLOP/byte): whole from 10 up, two significant digits below, where a measured CPU's
    5.4 printed as 5 (``python -m core measure``); ``work``: the figure a division prints, one decimal from 10 up
    and three significant digits below.  The offline page takes these strings from its constants.

    >>> fmt_ridge(295.31), fmt_ridge(295.31, work=True), fmt_ridge(5.444), fmt_ridge(5.444, work=True)
    ('295', '295.3', '5.4', '5.44')
    """
    if x >= 10 or not math.isfinite(x):
        return f"{x:,.1f}" if work else f"{x:,.0f}"
    return fmt_sig(x, 3 if work else 2)


def fmt_intensity(x: float) -> str:
    """An intensity's number (FLOP/byte), as :func:`fmt_sig_whole`.  ``app/units.js`` ``fmtIntensity``."""
    return fmt_sig_whole(x)


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
    return f"{n:,.0f} bytes ({fmt_sig(n / KiB)} KiB)"


def fmt_flops_rate(x: float) -> str:
    """A FLOP/s figure in TFLOP/s, e.g. ``989.4 TFLOP/s``."""
    return f"{fmt_sig(x / TFLOP)} TFLOP/s"


def fmt_flop(x: float) -> str:
    """A FLOP count in FLOP, MFLOP, GFLOP, TFLOP or PFLOP, four significant digits, e.g. ``16.06 GFLOP``.

    Below a GFLOP in MFLOP, below a MFLOP in FLOP (whole from 10,000): a one-tile GEMM's 2·M·N·K read
    "0.00 of 0.00 GFLOP".  ``app/units.js`` ``fmtFlop``.

    >>> fmt_flop(16.06e9), fmt_flop(2.5e6), fmt_flop(524_288), fmt_flop(999_999_999)
    ('16.06 GFLOP', '2.5 MFLOP', '524,288 FLOP', '1 GFLOP')
    """
    shown = float(f"{x:.4g}") if math.isfinite(x) else x  # the unit of the value as printed: 999,999,999 is 1 GFLOP
    if shown >= 1e15:
        return f"{fmt_sig(x / 1e15)} PFLOP"
    if shown >= 1e12:
        return f"{fmt_sig(x / TFLOP)} TFLOP"
    if shown >= 1e9:
        return f"{fmt_sig(x / GFLOP)} GFLOP"
    if shown >= 1e6:
        return f"{fmt_sig(x / 1e6)} MFLOP"
    return f"{fmt_sig_whole(x)} FLOP"


def fmt_bandwidth(x: float) -> str:
    """A bytes/s figure in TB/s (1e12 bytes/s), e.g. ``3.35 TB/s``."""
    return f"{fmt_sig(x / TB)} TB/s"


def fmt_seconds(t: float) -> str:
    """A duration in µs, ms, s, min or h as fits, e.g. ``4.79 ms``, ``15.2 h``."""
    if t < 1e-4:
        return f"{fmt_sig(t * 1e6, SECONDS_SIG['µs'])} µs"
    if t < 10:
        return f"{fmt_sig(t * 1e3, SECONDS_SIG['ms'])} ms"
    if t < 600:
        return f"{fmt_sig(t, SECONDS_SIG['s'])} s"
    if t < 3 * 3600:
        return f"{fmt_sig(t / 60, SECONDS_SIG['min'])} min"
    return f"{fmt_sig(t / 3600, SECONDS_SIG['h'])} h"


def seconds_value(text: str) -> float:
    """A duration as :func:`fmt_seconds` prints it, back in seconds: ``"42.92 ms"`` → 0.04292.

    Raises:
        ValueError: a text :func:`fmt_seconds` does not write.
    """
    number, _, unit = text.rpartition(" ")
    if unit not in SECONDS_PER:
        raise ValueError(f"not a duration as fmt_seconds writes one: {text[:20]!r}")
    return parse_number(number.replace(",", "")) * SECONDS_PER[unit]


def fmt_seconds_into(t: float, target: str, op) -> str:
    """``t`` seconds as :func:`fmt_seconds` writes it, with as many more digits as make ``op`` of the printed value
    print as ``target``: a time a formula goes on to divide or multiply (``42.3 ms ÷ 0.9493`` is 44.56 ms, where the
    42.2984 ms it stands for gives 44.55).  ``op``: seconds -> seconds."""
    number, unit = fmt_seconds(t).rsplit(" ", 1)
    x, per, sig = t / SECONDS_PER[unit], SECONDS_PER[unit], SECONDS_SIG[unit]
    for digits in range(sig, sig + 6):
        number = fmt_sig(x, digits)
        if fmt_seconds(op(float(number.replace(",", "")) * per)) == target:
            break
    return f"{number} {unit}"


def split_words(tp: int, pp: int = 1, ep: int = 1, replicas: int = 1) -> str:
    """A split as the lab names it: ``"TP = 8"``, with pipeline stages, expert-parallel groups and replicas where
    there are more than one, so that the factors multiply to the GPUs named beside it.

    >>> split_words(8, 4)
    'TP = 8, PP = 4'
    >>> split_words(2, 2, 2)
    'TP = 2, PP = 2, EP = 2'
    """
    rest = [f"{name} = {n}" for name, n in (("PP", pp), ("EP", ep), ("replicas", replicas)) if (n or 1) > 1]
    return ", ".join([f"TP = {tp}", *rest])


def fmt_seconds_change(a: float, b: float) -> str:
    """A duration going from ``a`` to ``b`` seconds, ``"76.149 ms → 78.094 ms"``, both ends with the decimals that
    make their printed difference print as :func:`fmt_seconds` prints ``b − a`` (each end rounded on its own,
    76.15 → 78.09 differs by 1.94 beside a change of 1.945 ms).  Ends in different units are each
    :func:`fmt_seconds`'s.

    >>> fmt_seconds_change(0.0761494, 0.0780944)
    '76.149 ms → 78.094 ms'
    """
    ua, ub = fmt_seconds(a).rsplit(" ", 1)[1], fmt_seconds(b).rsplit(" ", 1)[1]
    want = fmt_seconds(abs(b - a))
    if ua != ub or not (math.isfinite(a) and math.isfinite(b)):
        return f"{fmt_seconds(a)} → {fmt_seconds(b)}"
    per = SECONDS_PER[ua]
    x, y = a / per, b / per
    shown = [fmt_seconds(t).rsplit(" ", 1)[0] for t in (a, b)]  # from the decimals fmt_seconds gives either end
    start = min(len(n.partition(".")[2]) for n in shown)
    for d in range(start, start + 6):
        if fmt_seconds(abs(float(Decimal(f"{y:.{d}f}") - Decimal(f"{x:.{d}f}"))) * per) == want:
            return f"{x:,.{d}f} {ua} → {y:,.{d}f} {ua}"
    return f"{fmt_seconds(a)} → {fmt_seconds(b)}"


def fmt_seconds_times(n: int, t: float) -> str:
    """``n × t = n·t`` for a duration ``t`` (s) taken ``n`` times, with the digits of ``t`` that make the product
    print as :func:`fmt_seconds` prints it: ``4 × 1.3792 ms = 5.517 ms`` (1.379 × 4 is 5.516).

    >>> fmt_seconds_times(4, 0.0597475)
    '4 × 59.75 ms = 239 ms'
    """
    total = fmt_seconds(n * t)
    return f"{n:,} × {fmt_seconds_into(t, total, lambda v: n * v)} = {total}"


def fmt_rate(x: float) -> str:
    """A tokens/s figure: whole numbers from 10 up, 2 significant digits below, e.g. ``2,462``, ``0.14``."""
    return f"{x:,.0f}" if x >= 10 else fmt_sig(x, 2)


def rate_terms(batch: int, gained: float, t: float, whole: bool = False) -> tuple[str, str]:
    """``E`` and ``t`` as the work ``B × E / t = tokens/s`` writes them, with the digits that make it multiply out.

    E (tokens gained per sequence per step) to three significant digits, or whole with separators when ``whole``
    (a prefill's prompt length); ``t`` (s) as :func:`fmt_seconds` writes it.  Each takes one digit more at a time
    until ``B × E / t`` of the printed values prints as :func:`fmt_rate` prints ``B·E/t``: ``1 × 8,192 / 20.91 ms``
    is 391,774, beside a readout of 391,821 (a step of 20.9076 ms).  ``app/units.js`` ``rateTerms`` the same.

    >>> rate_terms(1, 8192, 0.0209076, whole=True)
    ('8,192', '20.9076 ms')
    >>> rate_terms(56, 1.0, 0.0016)
    ('1', '1.6 ms')
    """
    unit = fmt_seconds(t).rsplit(" ", 1)[1] if math.isfinite(t) and t > 0 else None
    e_text, t_text = (f"{gained:,.0f}" if whole else f"{gained:.3g}"), fmt_seconds(t)
    if unit is None or not math.isfinite(gained):
        return e_text, t_text
    want, per, sig = fmt_rate(batch * gained / t), SECONDS_PER[unit], SECONDS_SIG[unit]
    for more in range(8):
        e_text = f"{gained:,.0f}" if whole else f"{gained:.{3 + more}g}"
        number = fmt_sig(t / per, sig + more)
        if fmt_rate(batch * float(e_text.replace(",", "")) / (float(number.replace(",", "")) * per)) == want:
            break
    return e_text, f"{number} {unit}"


def rate_digits(x: float) -> int:
    """The significant digits :func:`fmt_rate` prints ``x`` with: its whole part's from 10 up, else 2.  A figure
    printed beside it in a derivation takes at least these, so it is never coarser than the readout it restates.

    >>> rate_digits(479.3), rate_digits(3851.2), rate_digits(9.66)
    (3, 4, 2)
    """
    return max(2, len(f"{abs(x):.0f}")) if abs(x) >= 10 else 2


def fmt_share(value: float, whole: float, least_pct: int = 2) -> tuple[str, str]:
    """``value`` as a percentage of ``whole`` (two tokens/s figures), and ``whole`` as printed beside it, with the
    fewest digits (the percentage's from two up to the value's digits and three more; the whole's at least three
    and at least its whole part's, so it is never printed coarser than :func:`fmt_rate` prints it) whose product,
    as printed, rounds to ``value`` as :func:`fmt_rate` prints it: a reader who multiplies them gets the value
    shown.

    >>> fmt_share(51.6, 88.2)  # 0.59 × 88.2 = 52.0
    ('59', '88.2')
    >>> fmt_share(128.4, 195.62)  # 0.66 × 196 = 129.4 and 0.656 × 196 = 128.6: the whole's fourth digit
    ('65.6', '195.6')
    >>> fmt_share(275.7, 479.3)  # 0.575 × 479 = 275.4; never "of 480", a ceiling the scenario does not have
    ('57.5', '479.3')
    >>> fmt_share(442.0, 658.4, least_pct=3)  # the same share beside another's that needs three digits
    ('67.1', '658')

    ``least_pct``: the percentage's significant digits at least (two shares of one ratio printed alike).

    Raises:
        ValueError: ``value`` or ``whole`` is not finite, or ``whole`` is not positive (no share to give).
    """
    if not (math.isfinite(value) and math.isfinite(whole) and whole > 0):
        raise ValueError(f"no share of {whole!r} to give for {value!r}: both must be finite and the whole positive")
    wanted = fmt_rate(value)
    least = max(3, rate_digits(whole))  # the whole's digits: never fewer than fmt_rate prints
    most = max(6, len(f"{abs(value):.0f}") + 3)  # the percentage's: a value of n digits needs about n + 2
    first = max(2, least_pct)
    most = max(most, first)
    for extra in range(0, most + 4):  # digits beyond the fewest, shared between the two texts
        for pct_digits in range(first, min(first + extra, most) + 1):
            pct = fmt_sig(100 * value / whole, pct_digits)
            shown = fmt_sig(whole, least + extra - (pct_digits - first))
            if fmt_rate(float(pct.replace(",", "")) / 100 * float(shown.replace(",", ""))) == wanted:
                return pct, shown
    return fmt_sig(100 * value / whole, most), fmt_sig(whole, least + 3)


def fmt_count(n: int) -> str:
    """A whole count (GPUs, replicas, TP, PP) with thousands separators, e.g. ``1,998,848``."""
    return f"{int(n):,}"


#: The smallest sum of money shown as a figure (a hundredth of a cent); below it, "under" this.
MONEY_FLOOR = 1e-4


def fmt_money(dollars: float | None) -> str:
    """US dollars, the one format of every price and cost the lab shows.

    From $1 up to the cent with thousands separators (``$23.81``, ``$11,900,000.00``); below $1 two significant
    digits (``$0.081``); below :data:`MONEY_FLOOR` ``under $0.0001`` (a price of 1e-300, or a cost that underflows
    to 0 although a price was given, is never a 300-digit figure or "no price"); None: ``no price given``.
    """
    if dollars is None:
        return "no price given"
    if not dollars >= MONEY_FLOOR:  # NaN too
        return f"under ${MONEY_FLOOR:.4f}"
    if dollars < 0.995:  # two significant digits below a dollar; from what rounds to $1.00, cents
        return f"${fmt_sig(dollars, 2)}"
    return f"${dollars:,.2f}"
