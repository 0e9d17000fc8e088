"""Show your work multiplies out: every equation the derivation prints evaluates to the result it prints.

Each printed line (``label: formula = work``, as ``python -m core explain`` prints it) is parsed: notes in
parentheses and prose are set aside, the line is cut into chains ``a = b = c`` (and ``<``, ``≤``, ``>``, ``≥``)
at ``;``, ``:``, ``,`` and ``→``, and every link whose sides are both arithmetic (numbers with their units, × / + −
^, min, max, floor, ceil) is evaluated.  Each printed number stands for the interval its digits allow (±half a
unit in the last digit; integers the scenario knows exactly, B, k, TP, ..., are exact), so a link holds when the
interval of its left side meets the interval of its printed result: the arithmetic is checked to the printed
precision.  Scenarios are drawn by hypothesis over dense, MoE, hybrid and sparse models, TP, PP, EP and replicas.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import pytest
from conftest import FIELD_CASES
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from core import Scenario, from_hf_config
from core.explain import derivation
from core.model_catalogue import load_models

# -- numbers with units --------------------------------------------------------------------------------------------
#: Unit → scale to SI.  Counts (parameters, tokens, ...) are scale 1.
UNITS = {
    "bytes": 1, "byte": 1, "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40, "kB": 1e3, "MB": 1e6,
    "GB": 1e9, "TB": 1e12, "TB/s": 1e12, "GB/s": 1e9, "FLOP": 1, "GFLOP": 1e9, "TFLOP": 1e12, "PFLOP": 1e15,
    "FLOP/s": 1, "TFLOP/s": 1e12, "GFLOP/s": 1e9, "PFLOP/s": 1e15, "FLOP/byte": 1, "s": 1, "ms": 1e-3, "µs": 1e-6,
    "ns": 1e-9, "min": 60, "h": 3600, "%": 0.01, "tokens/s": 1, "tokens": 1, "token": 1, "parameters": 1, "weights": 1,
    "kernels": 1, "layers": 1, "experts": 1, "GPUs": 1, "calls": 1,
}
#: Words that qualify a number without changing it ("0.45 TB/s per direction", "5.495 ms per step").
QUALIFIERS = ("per direction", "per step", "on this GPU", "per GPU", "per MoE layer", "in all", "dense")
#: Units of counts: a number with one (or none) may be one the scenario knows exactly; any other unit marks a
#: measured, rounded figure (a time, a rate, a share).
COUNT_UNITS = ("bytes", "byte", "B", "tokens", "token", "parameters", "weights", "kernels", "layers", "experts", "GPUs",
               "calls")
FUNCTIONS = ("min", "max", "floor", "ceil")
RELATIONS = {"=": "eq", "≤": "le", "<": "lt", "≥": "ge", ">": "gt"}
NUMBER = re.compile(r"\$?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:e([+-]?\d+))?")


@dataclass(frozen=True)
class Interval:
    lo: float
    hi: float

    def __add__(self, o):
        return Interval(self.lo + o.lo, self.hi + o.hi)

    def __sub__(self, o):
        return Interval(self.lo - o.hi, self.hi - o.lo)

    def __mul__(self, o):
        c = (self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi)
        return Interval(min(c), max(c))

    def __truediv__(self, o):
        if o.lo <= 0 <= o.hi:
            return Interval(-math.inf, math.inf)
        return self * Interval(1 / o.hi, 1 / o.lo)

    def __pow__(self, o):
        c = [a**b for a in (self.lo, self.hi) for b in (o.lo, o.hi) if a >= 0]
        return Interval(min(c), max(c)) if c else Interval(-math.inf, math.inf)

    def meets(self, o, slack: float = 1e-12):
        pad = slack * max(abs(self.lo), abs(self.hi), abs(o.lo), abs(o.hi))
        return self.lo <= o.hi + pad and o.lo <= self.hi + pad


class NotArithmetic(Exception):
    """The text is not (wholly) an arithmetic expression: prose, a symbol, a formula."""


class Parser:
    """Recursive descent over one segment: expr := term (('+'|'−') term)*, term := factor (('×'|'/') factor)*,
    factor := power ('^' power)?, power := number unit? | '(' expr ')' | fn '(' expr (',' expr)* ')'."""

    def __init__(self, text: str, exact: dict[float, float], units: dict[str, float]):
        self.s, self.i, self.exact, self.units, self.has_unit = text.strip(), 0, exact, units, False

    def parse(self, prefix: bool = False) -> Interval:
        """The whole text's value; ``prefix``: the value of its leading expression ("6.44 GB at S" → 6.44 GB)."""
        value = self.expr()
        self.ws()
        if self.i != len(self.s) and not prefix:
            raise NotArithmetic(self.s[self.i:])
        return value

    def ws(self):
        while self.i < len(self.s) and self.s[self.i] == " ":
            self.i += 1

    def peek(self, token: str) -> bool:
        self.ws()
        return self.s.startswith(token, self.i)

    def take(self, token: str) -> bool:
        if self.peek(token):
            self.i += len(token)
            return True
        return False

    def expr(self) -> Interval:
        value = self.term()
        while True:
            if self.take("+"):
                value = value + self.term()
            elif self.take("−") or self.take("- "):
                value = value - self.term()
            else:
                return value

    def term(self) -> Interval:
        value = self.factor()
        while True:
            if self.take("×"):
                value = value * self.factor()
            elif self.take("/"):
                value = value / self.factor()
            else:
                return value

    def factor(self) -> Interval:
        base = self.atom()
        if self.take("^"):
            return base ** self.atom()
        return base

    def atom(self) -> Interval:
        self.ws()
        for fn in FUNCTIONS:
            if self.s.startswith(fn + "(", self.i):
                self.i += len(fn) + 1
                args = [self.expr()]
                while self.take(","):
                    args.append(self.expr())
                if not self.take(")"):
                    raise NotArithmetic(self.s)
                return _apply(fn, args)
        if self.take("("):
            value = self.expr()
            if not self.take(")"):
                raise NotArithmetic(self.s)
            return value * self.unit()  # "(a × 2 + b × 2) bytes"
        if self.take("−"):
            v = self.atom()
            return Interval(-v.hi, -v.lo)
        match = NUMBER.match(self.s, self.i)
        if not match:
            raise NotArithmetic(self.s[self.i:])
        self.i = match.end()
        unit = self.unit_name()
        return self.literal(match, exact_ok=unit is None or unit in COUNT_UNITS) * self.unit(unit)

    def unit_name(self) -> str | None:
        """The unit at the cursor, consumed (longest first: "TFLOP/s" before "TFLOP"), or None."""
        self.ws()
        for unit in sorted(self.units, key=len, reverse=True):
            if self.s.startswith(unit, self.i) and not self.s[self.i + len(unit):self.i + len(unit) + 1].isalnum():
                self.i += len(unit)
                self.has_unit = True
                return unit
        return None

    def unit(self, name: str | None = "") -> Interval:
        name = self.unit_name() if name == "" else name
        scale = self.units[name] if name else 1.0
        return Interval(scale, scale)

    def literal(self, match, exact_ok: bool) -> Interval:
        whole, frac, exp = match.group(1).replace(",", ""), match.group(2), match.group(3)
        x = float(whole + (frac or ""))
        scale = 10.0 ** int(exp) if exp else 1.0
        if frac:
            half = 0.5 * 10.0 ** -(len(frac) - 1)
        elif exp:
            half = 0.0
        elif exact_ok and x in self.exact:
            half = self.exact[x]
        else:  # an integer the text rounded: half a unit, in its last non-zero place past 4 digits (16,720)
            zeros = len(whole) - len(whole.rstrip("0")) if x else 0
            half = 0.5 * 10.0 ** (zeros if len(whole) > 4 else 0)
        return Interval((x - half) * scale, (x + half) * scale)


def _apply(fn: str, args: list[Interval]) -> Interval:
    if fn == "min":
        return Interval(min(a.lo for a in args), min(a.hi for a in args))
    if fn == "max":
        return Interval(max(a.lo for a in args), max(a.hi for a in args))
    (a,) = args
    f = math.floor if fn == "floor" else math.ceil
    return Interval(f(a.lo), f(a.hi))


# -- from a printed line to its relations ----------------------------------------------------------------------------
def _without_notes(text: str) -> str:
    """Drop parenthesised notes: a '(' that follows a number, a unit or a word (not an operator or a function)."""
    out, depth, i = [], 0, 0
    while i < len(text):
        c = text[i]
        if c == "(" and depth == 0:
            before = "".join(out).rstrip()
            if before and not before.endswith(("×", "/", "+", "−", "(", ",", "=", "^", "≤", "<", "≥", ">", ":", ";",
                                               "→")) \
                    and not any(before.endswith(fn) for fn in FUNCTIONS):
                j, d = i, 0
                while j < len(text):
                    d += {"(": 1, ")": -1}.get(text[j], 0)
                    if d == 0:
                        break
                    j += 1
                i = j + 1
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _clean(segment: str) -> str:
    """A segment as arithmetic: qualifiers dropped, prose after 'of' (up to the next operator) dropped.

    "N parameters as stored = X GB" states what a checkpoint holds, each tensor group in its own format: it is
    not arithmetic, and is left unparsed (a GPU's share says its mean bytes per weight: "N × p bytes").
    """
    if "as stored" in segment:
        return "(as stored)"
    segment = segment.replace("% of peak", "%peak")
    for q in QUALIFIERS:
        segment = segment.replace(" " + q, "")
    segment = re.sub(r" of [^×/+−=]*", " ", segment)
    segment = re.sub(r"^(?:[A-Za-z][\w'-]*\s+)+(?=[\d$(])", "", segment.strip())  # "launches 1.07 ms" → "1.07 ms"
    return segment.strip()


SYMBOL = re.compile(r"(?:^|[\s×/(])([A-Za-zα_][\w·]*)$")


def relations(line: str):
    """``(left, relation, right)`` segment texts of every link of every chain in ``line``."""
    text = _without_notes(line)
    for piece in re.split(r";|:\s|,\s(?![^()]*\))|→", text):
        parts = re.split(r"\s(=|≤|<|≥|>)\s", piece)
        segments, ops = parts[0::2], parts[1::2]
        for k, op in enumerate(ops):
            yield segments[k], op, segments[k + 1]


def check_line(line: str, exact: dict[float, float], units: dict[str, float]) -> tuple[int, list[str]]:
    """``(links checked, failures)`` of one printed line."""
    checked, failures = 0, []
    defined: dict[str, str] = {}
    links = list(relations(line))
    for k, (left, op, right) in enumerate(links):
        left_c, right_c = _clean(left), _clean(right)
        symbol = SYMBOL.search(left_c)
        last = left_c.split(" ")[-1]
        if symbol and op == "=" and re.search(r"\d", left_c) and last not in units and last not in UNITS:
            # "... / E = 1 token = 5.495 ms": E is defined here; the chain goes on with E substituted.
            defined[symbol.group(1)] = right_c
            if k + 1 < len(links) and links[k + 1][0] == right:
                substituted = left_c[:symbol.start(1)] + f"({right_c})"
                links[k + 1] = (substituted, links[k + 1][1], links[k + 1][2])
            continue
        try:
            lp = Parser(left_c, exact, units)
            lv = lp.parse()
        except (NotArithmetic, ValueError, OverflowError, ZeroDivisionError):
            continue
        if not NUMBER.match(right_c):
            continue  # "… = 2·L·h_kv": a formula, not a result
        rp = Parser(right_c, exact, units)
        try:  # "2 KV heads per GPU", "6.44 GB at S": the leading expression is the result
            rv = rp.parse(prefix=True)
        except (NotArithmetic, ValueError, OverflowError, ZeroDivisionError):
            continue
        if lp.has_unit != rp.has_unit:  # "28.44 + 3.00 = 34.44 GiB": the bare side is in the other's unit
            bare = {u: 1 for u in units}
            lv, rv = Parser(left_c, exact, bare).parse(), Parser(right_c, exact, bare).parse(prefix=True)
        checked += 1
        ok = {"eq": lv.meets(rv), "le": lv.lo <= rv.hi, "lt": lv.lo < rv.hi, "ge": lv.hi >= rv.lo,
              "gt": lv.hi > rv.lo}[RELATIONS[op]]
        if not ok:
            failures.append(f"{left_c} {op} {right_c}: [{lv.lo:.6g}, {lv.hi:.6g}] vs [{rv.lo:.6g}, {rv.hi:.6g}]")
    return checked, failures


def exact_values(r) -> dict[float, float]:
    """Integers the scenario knows exactly (levers, the model's sizes, split degrees) and the formulas' constants,
    each with its half-width: 0, except E, the tokens a verify gains, printed to 3 significant digits ("2" for
    1.99976 is ±0.005)."""
    m = r.model
    values = {0, 1, 2, 3, 4, 8, 16, 100, 3600, r.batch, r.spec_k, r.tokens_per_read, r.context, r.tp, r.pp, r.ep,
              r.replicas, r.gpus_total, r.gpus_per_replica, m.n_layers, m.n_heads, m.n_kv_heads, m.head_dim,
              m.hidden_size, r.kv_heads_per_gpu, r.layers_per_gpu, r.max_batch, r.kernels_per_step, m.n_params,
              m.n_active_params, r.batch * r.tokens_per_read}
    if m.moe:
        values |= {m.moe.n_experts, m.moe.experts_per_token, int(r.experts_per_gpu)}
    if m.mla:
        values |= {m.mla.kv_lora_rank, m.mla.qk_rope_head_dim, m.mla.qk_nope_head_dim, m.mla.v_head_dim}
    if m.indexer:
        values |= {m.indexer.head_dim, m.indexer.topk, 132}
    for t in m.kv_terms(r.kv_bytes_per_element, r.gqa):
        values |= {t.layers, *range(0, t.layers + 1)}
        if float(t.bytes_per_token).is_integer():
            values.add(t.bytes_per_token)
    plan = r.deployment.plan
    for i in range(r.pp):
        stage = plan.stage_parts(i)
        values |= {stage.embedding, stage.head, stage.split, stage.replicated, stage.experts, stage.first,
                   stage.layers, stage.first + stage.layers - 1, i + 1}
    comm = plan.comm_parts(r.batch, r.tokens_per_read)
    values.add(comm["tp_calls"] + comm["pp_calls"] + comm["ep_calls"])
    out = {float(v): 0.0 for v in values}
    e = r.expected_tokens_per_step
    if not float(e).is_integer():
        shown = float(f"{e:.3g}")
        out[shown] = max(out.get(shown, 0.0), 0.5 * 10.0 ** (math.floor(math.log10(shown)) - 2))
    return out


def printed_lines(r) -> list[tuple[str, str]]:
    """``(key, line)`` of each quantity, as the command line prints it: ``formula = work``."""
    return [(q.key, f"{q.formula} = {q.work}") for step in derivation(r) for q in step.quantities]


def check(r) -> tuple[int, list[str]]:
    exact, units = exact_values(r), {**UNITS, "%peak": r.peak_flop_per_s / 100}
    total, failures = 0, []
    for key, line in printed_lines(r):
        n, bad = check_line(line, exact, units)
        total += n
        failures += [f"[{key}] {b}" for b in bad]
    return total, failures


# -- the checker itself finds the issue's wrong equations --------------------------------------------------------------
def test_the_checker_catches_what_the_issue_found():
    exact = {2.0: 0.0, 8.0: 0.0, 1.0: 0.0}
    n, bad = check_line("I = 2·B·k·N_active / (N_read·p) = 2 × 8 × 1 × 3,353,032,704 / (6,616,404,781 × 2 bytes) = "
                        "2.027 FLOP/byte", exact, UNITS)
    assert n == 1 and bad and "4.05" in bad[0].replace("4.0534", "4.05")
    n, bad = check_line("2 × 8 × 1 × 1,676,516,352 / (6,616,404,781 × 2 bytes) = 2.027 FLOP/byte", exact, UNITS)
    assert (n, bad) == (1, [])
    # units, notes and prose: "13.23 GB / 3.35 TB/s = 3.95 ms", "(12.32 GiB ...)" is a note, "per direction"
    assert check_line("weight bytes / BW = 13.23 GB (12.32 GiB) / 3.35 TB/s = 3.95 ms", exact, UNITS) == (1, [])
    assert check_line("x = 28.44 + 3.00 + 3.00 = 34.44 GiB ≤ 80.00 GiB", exact, UNITS) == (2, [])
    assert check_line("5.495 ms per step / E = 1 token = 5.495 ms", exact, UNITS) == (1, [])
    assert check_line("floor(48.56 GiB / 0.375 GiB) = 129", exact, UNITS) == (1, [])
    assert check_line("floor(48.56 GiB / 0.375 GiB) = 130", exact, UNITS)[1]
    assert check_line("3.197 FLOP/byte < 295.3 FLOP/byte", exact, UNITS) == (1, [])
    assert check_line("3.197 FLOP/byte > 295.3 FLOP/byte", exact, UNITS)[1]


# -- the derivation over scenarios ------------------------------------------------------------------------------------
MODELS = load_models()
HYBRID_AND_SPARSE = {}


def _extra_models():
    """Configs of the newer layer kinds (from the tests' own field cases and configs)."""
    if not HYBRID_AND_SPARSE:
        import json

        from inputs import FALCON_H1_7B, MINIMAX_M1

        folder = FIELD_CASES
        for name in ("sparse-attention-indexer-cache.json", "cross-attention-layers.json"):
            cfg = json.loads((folder / name).read_text())["input"]["config"]
            HYBRID_AND_SPARSE[name] = from_hf_config(cfg, model_id=f"case-{name[:8]}", name=name)
        HYBRID_AND_SPARSE["falcon-h1"] = from_hf_config(FALCON_H1_7B, model_id="falcon-h1", name="H1")
        HYBRID_AND_SPARSE["minimax"] = from_hf_config(MINIMAX_M1, model_id="minimax", name="MiniMax")
    return HYBRID_AND_SPARSE


MODEL_IDS = ["llama-3-8b", "llama-3-70b", "mixtral-8x7b", "qwen3-30b-a3b", "deepseek-v3", "gpt-oss-20b",
             "gemma-3-12b", "nemotron-h-56b", "qwen3-next-80b-a3b", "llama-4-scout", "falcon-7b",
             "sparse-attention-indexer-cache.json", "cross-attention-layers.json", "falcon-h1", "minimax"]


def _scenario(model_id: str, **levers) -> Scenario:
    s = Scenario()
    extra = _extra_models()
    if model_id in extra:
        s.add_model(extra[model_id])
    else:
        s.model = model_id
    s.param.update(**levers)
    return s


SCENARIOS = st.fixed_dictionaries({
    "model": st.sampled_from(MODEL_IDS),
    "gpu": st.sampled_from(["h100-sxm", "h200", "b200", "a100-80gb", "mi300x", "l40s"]),
    "weight_dtype": st.sampled_from(["bf16", "fp8", "int4", "stored"]),
    "kv_dtype": st.sampled_from(["bf16", "fp8"]),
    "batch": st.sampled_from([1, 2, 3, 8, 56, 128, 1000]),
    "spec_k": st.integers(1, 16),
    "acceptance": st.sampled_from([round(0.05 * i, 2) for i in range(21)]),
    "context": st.sampled_from([128, 1000, 4096, 8192, 131072]),
    "phase": st.sampled_from(["decode", "prefill"]),
    "tp": st.sampled_from([1, 2, 4, 8, 16]),
    "pp": st.sampled_from([1, 2, 3, 4]),
    "ep": st.sampled_from([1, 2, 4, 8, 48, 144]),
    "replicas": st.sampled_from([1, 3]),
    "gpu_hour_price": st.sampled_from([0.0, 2.5]),
    "gqa": st.booleans(),
    "cuda_graphs": st.booleans(),
})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCENARIOS)
def test_every_printed_equation_multiplies_out(levers):
    levers = dict(levers)
    r = _scenario(levers.pop("model"), **levers).evaluate()
    total, failures = check(r)
    assert not failures, "\n".join(failures)
    assert total >= 25  # the derivation's equations were found and read, not skipped


@pytest.mark.parametrize("model_id, tp, batch", [("qwen3-30b-a3b", 2, 8), ("qwen3-30b-a3b", 8, 1)])
def test_the_issues_moe_intensity_at_tp(model_id, tp, batch):
    # python -m core explain --model qwen3-30b-a3b --tp 2 --batch 8 printed 2 × 8 × 1 × 3,353,032,704 /
    # (6,616,404,781 × 2 bytes) = 2.027, whose arithmetic is 4.05: one GPU's N_active now stands over its N_read.
    r = _scenario(model_id, tp=tp, batch=batch).evaluate()
    work = next(q for s in derivation(r) for q in s.quantities if q.key == "intensity").work
    n_active_gpu = r.flop_per_step_weights / (2 * batch)
    assert f"× {n_active_gpu:,.0f} / (" in work
    assert check_line(work, exact_values(r), UNITS) == (1, [])


@given(st.floats(0.01, 1e6), st.floats(0.05, 1.0))
def test_a_share_of_a_ceiling_multiplies_out_and_never_rounds_the_ceiling_coarser(ceiling, fraction):
    """core.units.fmt_share: "57.5 % of the ceiling's 479.3" times out to the value as printed, and the ceiling is
    printed with at least the digits fmt_rate gives it (a trial read "of the ceiling's 480" beside 479)."""
    from core.units import fmt_rate, fmt_share

    value = ceiling * fraction
    # Not a value a hair from where its own print rounds the other way (0.9349999… prints 0.93, its product with
    # any short share 0.94): there no short texts can multiply out.
    printed = float(fmt_rate(value).replace(",", ""))
    step = 10 ** (math.floor(math.log10(printed)) - 1) if value < 10 else 1
    assume(abs(abs(value - printed) - step / 2) > 1e-6 * value)
    pct, whole = fmt_share(value, ceiling)
    shown = float(whole.replace(",", ""))
    assert fmt_rate(float(pct) / 100 * shown) == fmt_rate(value)
    if ceiling >= 10:  # at least to the unit, as fmt_rate prints it (10.5 for 10.53, never 10 or 11 for 479.3)
        assert abs(shown - ceiling) <= 0.5
