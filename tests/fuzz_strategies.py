"""Hypothesis strategies for every boundary the lab reads (issues 12 and 31): levers, custom-GPU forms,
permalink queries, measurement CSV, measured points, command lines and the text they print.  Shared by
tests/property/test_fuzz.py and tests/property/test_config_fuzz.py (a bounded number of examples in CI) and
benchmarks/fuzz_boundaries.py (10^5 and more)."""

from __future__ import annotations

import base64
import json
import math
import zlib
from urllib.parse import urlencode

import param
from hypothesis import strategies as st

from core.hardware import CUSTOM_RANGES, CUSTOM_ROOFS, load_accelerators
from core.scenario import LEVERS

#: Numbers a hostile or careless user types.
NASTY_NUMBERS = st.one_of(
    st.sampled_from([0, -1, 1e-300, 1e300, 10**30, float("nan"), float("inf"), -float("inf"), 2**63, -0.0]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**40), max_value=10**40),
)
#: Text a hostile or careless user types.
NASTY_TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "abc", "NaN", "inf", "-inf", "1e300", "4.5", "0x10", "=HYPERLINK(\"x\")",
                     "[Log in](https://evil.example/)", "<img src=x onerror=alert(1)>", "9" * 5000, "{}", "[]",
                     "null", "true", "\u0000", "1" * 400]),
    NASTY_NUMBERS.map(str),
)


def lever_value(name: str):
    """Valid values of one lever (its whole domain, extremes included)."""
    p = LEVERS[name].parameter
    if isinstance(p, param.Boolean):
        return st.booleans()
    if isinstance(p, param.Selector):
        return st.sampled_from(list(p.objects))
    lo, hi = p.bounds
    if isinstance(p, param.Integer):
        return st.one_of(st.sampled_from([lo, hi]), st.integers(min_value=lo, max_value=hi))
    return st.one_of(st.sampled_from([lo, hi]), st.floats(min_value=lo, max_value=hi, allow_nan=False))


LEVER_SETS = st.fixed_dictionaries({name: lever_value(name) for name in LEVERS.names})

def in_range(field: str):
    """Numbers the custom-GPU form accepts for ``field`` (:data:`core.hardware.CUSTOM_RANGES`): its two ends and
    values spread evenly over its decades (a uniform draw would almost never reach the low decades)."""
    lo, hi = CUSTOM_RANGES[field]
    decades = st.floats(min_value=math.log10(lo), max_value=math.log10(hi))
    return st.one_of(st.sampled_from([lo, hi]), decades.map(lambda e: min(max(10**e, lo), hi)))


#: A custom-GPU form: numbers across (and beyond) the accepted range, sometimes wrong types.
GPU_FORMS = st.fixed_dictionaries(
    {"name": st.one_of(st.text(min_size=1, max_size=60), NASTY_TEXT),
     "bandwidth_tbs": st.one_of(in_range("bandwidth"), st.floats(min_value=1e-300, max_value=1e7), NASTY_NUMBERS,
                                NASTY_TEXT),
     "capacity_gb": st.one_of(in_range("capacity"), st.floats(min_value=1e-300, max_value=1e7), NASTY_NUMBERS),
     "bf16": st.one_of(in_range("peak"), st.floats(min_value=1e-300, max_value=1e7), NASTY_NUMBERS,
                       st.lists(st.integers()))},
    optional={**{roof: st.one_of(in_range("peak"), NASTY_NUMBERS) for roof in CUSTOM_ROOFS if roof != "bf16"},
              "reference": st.one_of(st.sampled_from(list(load_accelerators())), NASTY_TEXT,
                                     st.lists(st.text(max_size=5), max_size=2)),
              "measured": st.one_of(st.booleans(), NASTY_NUMBERS, NASTY_TEXT, st.none())},
)


def _json_text(value) -> str:
    try:
        return json.dumps(value, allow_nan=True)
    except (TypeError, ValueError):
        return "{"


QUERY_KEYS = st.one_of(st.sampled_from([lever.flag for lever in LEVERS] + ["pins", "custom-gpu", "config", "embed"]),
                       NASTY_TEXT)


def _deflated(data: bytes) -> str:
    return base64.urlsafe_b64encode(zlib.compress(data)).decode("ascii").rstrip("=")


#: A link's ``config=``: deflated bytes and JSON (whole, cut short, with bytes after), base64url text, nasty text.
CONFIG_VALUES = st.one_of(
    st.binary(max_size=300).map(_deflated),
    st.dictionaries(st.sampled_from(["num_hidden_layers", "hidden_size", "num_attention_heads", "n_layer",
                                     "vocab_size", "layer_types", "model_type"]) | NASTY_TEXT,
                    NASTY_NUMBERS | NASTY_TEXT | st.lists(NASTY_TEXT, max_size=4), max_size=8)
    .map(lambda d: _deflated(json.dumps(d, allow_nan=True).encode("utf-8", "surrogatepass"))),
    st.tuples(st.binary(max_size=200).map(_deflated), st.integers(0, 40), st.text("AZaz09-_", max_size=8))
    .map(lambda t: t[0][: max(0, len(t[0]) - t[1])] + t[2]),
    st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", max_size=400),
    NASTY_TEXT,
)
QUERY_VALUES = st.one_of(
    NASTY_TEXT,
    GPU_FORMS.map(_json_text),
    st.lists(st.dictionaries(QUERY_KEYS, NASTY_TEXT, max_size=4), max_size=12).map(_json_text),
    st.integers(min_value=1, max_value=3000).map(lambda n: "[" * n + "]" * n),  # deep nesting
    CONFIG_VALUES,
)
#: A permalink query: flag -> one or more values (repeated keys included).
QUERIES = st.dictionaries(QUERY_KEYS, st.one_of(QUERY_VALUES, st.lists(QUERY_VALUES, min_size=1, max_size=3)),
                          max_size=8)

#: Digits Python's ``str.isdigit`` admits: 0-9, other scripts' (Nd: ٤ ４), and those int() refuses (No: ² ①).
ANY_DIGITS = st.text(alphabet=st.characters(categories=("Nd", "No")), min_size=1, max_size=8)
#: A link's query as sent: the lab's own keys and nasty ones, URL-encoded, repeated keys, numbers of every length
#: around the 4,300 digits Python's int() reads, digits of every script, raw text.
LINK_QUERIES = st.one_of(
    QUERIES.map(lambda q: urlencode(q, doseq=True)),
    st.lists(st.tuples(QUERY_KEYS, st.one_of(ANY_DIGITS, st.integers(min_value=4290, max_value=4310).map("9".__mul__),
                                              NASTY_TEXT)), max_size=6).map(urlencode),
    st.text(max_size=300),
    st.sampled_from(["x=" + "a" * 40_000, "&" * 3000, "a&" * 2000, "=" * 100, "%", "%zz=%", "x=%C2%B2"]),
)

#: Measurement CSV text: a header and rows of nasty cells.
CSV_TEXT = st.one_of(
    st.text(max_size=200),
    st.lists(st.tuples(NASTY_TEXT, NASTY_TEXT, NASTY_TEXT), max_size=20).map(
        lambda rows: "batch,context,tokens_per_s\n" + "\n".join(",".join(r) for r in rows)),
)

#: One measured point's fields as given (the CSV reader's output, or anything else): batch, context, tokens/s
#: across and beyond the plausible ranges, tiny positives (5e-324) and wrong types included.
MEASUREMENT_FIELDS = st.tuples(
    st.one_of(st.integers(min_value=1, max_value=65536), NASTY_NUMBERS, st.booleans()),
    st.one_of(st.integers(min_value=1, max_value=2**21), NASTY_NUMBERS),
    st.one_of(st.floats(min_value=1e-3, max_value=1e9), st.sampled_from([5e-324, 1e-300, 1e-3, 1e9, 1e10]),
              NASTY_NUMBERS, NASTY_TEXT),
)

#: Characters a terminal acts on: C0 and C1 controls (ESC, BEL, CSI), DEL and bidi overrides.
TERMINAL_CONTROLS = st.sampled_from(["\x1b", "\x07", "\x9b", "\x7f", "\r", "\b", "\x00", "\u202e", "\u2066",
                                     "\x1b]0;pwned\x07", "\x1b[2J", "\x1b[31m"])
#: Text laced with them (a config's field, a file's name).
CONTROL_TEXT = st.lists(st.one_of(TERMINAL_CONTROLS, st.text(max_size=6)), max_size=6).map("".join)

#: Command lines of ``python -m core explain``.
CLI_ARGS = st.lists(
    st.tuples(st.sampled_from([f"--{lever.flag}" for lever in LEVERS] + ["--json", "--bogus"]), NASTY_TEXT),
    max_size=5,
).map(lambda pairs: [x for pair in pairs for x in pair])


def printable_lines(text: str) -> bool:
    """True when ``text`` holds no character a terminal acts on but its line breaks."""
    return all(c.isprintable() for c in text.replace("\n", ""))


def finite_non_negative(value) -> bool:
    """True for a number that is finite and >= 0 (booleans, text and None pass)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return True
    return math.isfinite(value) and value >= 0


def random_text(n: int, seed: int = 31) -> str:
    """``n`` characters that do not compress (a link's worst case: its session token does not shrink)."""
    import random
    import string

    rnd = random.Random(seed)
    return "".join(rnd.choice(string.ascii_letters + string.digits) for _ in range(n))


#: The layer types the heavy config cycles through (issue 31, F1).
HEAVY_LAYER_TYPES = ("full_attention", "sliding_attention", "chunked_attention", "linear_attention", "mamba")


def heavy_hybrid_config(n_layers: int = 2048) -> dict:
    """Issue 31's F1 config: Llama-3-8B's with ``n_layers`` layers (2,048, the reader's most) whose
    ``layer_types`` cycle full / sliding / chunked / linear attention / Mamba, so the stack is one run per layer
    (37,407 characters as JSON at 2,048 layers).  Inside every limit: read, not refused."""
    from pathlib import Path

    base = json.loads((Path(__file__).resolve().parents[1] / "core" / "model_configs" / "llama-3-8b.json")
                      .read_text(encoding="utf-8"))
    return {**base, "_name_or_path": "heavy-hybrid", "num_hidden_layers": n_layers,
            "layer_types": [HEAVY_LAYER_TYPES[i % len(HEAVY_LAYER_TYPES)] for i in range(n_layers)],
            "sliding_window": 4096, "attention_chunk_size": 8192,
            "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
            "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4,
            "mamba_n_heads": 64, "mamba_d_head": 64, "ssm_state_size": 128, "mamba_d_conv": 4, "n_groups": 8}
