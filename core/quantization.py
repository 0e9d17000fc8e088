"""A checkpoint's quantisation as stored: which tensors are in which format.

:func:`read_quantization` reads a Hugging Face ``quantization_config`` into a
:class:`Quantization`: an ordered list of rules (targets → :class:`TensorFormat`)
and an ignore list.  Formats read, with their bytes per weight (values plus
scales and zero points, amortised per weight):

* **MXFP4** (``quant_method: mxfp4``, gpt-oss): 4-bit E2M1 values and one E8M0
  (8-bit) scale per block of 32: 4.25 bits = 17/32 bytes (OCP Microscaling
  Formats v1.0, section 5); the routed experts only, as transformers' quantiser
  stores them (``Mxfp4GptOssExperts``).
* **NVFP4** (ModelOpt ``quant_algo: NVFP4``; compressed-tensors 4-bit float
  groups of 16): 4-bit values, an FP8 E4M3 scale per 16 and one FP32 scale per
  tensor: 0.5 + 1/16 bytes.
* **ModelOpt FP8**: 1 byte and a per-tensor scale.
* **compressed-tensors** (``config_groups``: ``num_bits``, ``type``,
  ``strategy`` group / tensor_group / channel / tensor / block, ``group_size``,
  ``block_structure``, ``symmetric``): a 16-bit scale per group, block or
  output row (FP8 for 4-bit float groups), plus a ``num_bits`` zero point when
  asymmetric.
* **bitsandbytes**: NF4/FP4 with an FP32 absmax per 64 weights (double
  quantisation: an 8-bit absmax per 64 and an FP32 scale per 256 of those),
  INT8 (LLM.int8) with an FP32 scale per output row.
* **GPTQ / AWQ**: ``bits``-bit values, a 16-bit scale and a ``bits``-bit zero
  point per ``group_size``.
* **FP8 blocks** (``quant_method: fp8``, DeepSeek-V3): 1 byte and an FP32 scale
  per ``weight_block_size`` block (128 × 128 if not given).

Only the weight matrices of linear layers are quantised; norms, biases,
convolutions and the embedding table stay 16-bit, and so does the LM head
unless a rule names it (GPTQ's ``lm_head: true``; compressed-tensors'
``Linear`` targets and ModelOpt's algorithms cover it unless ``ignore`` /
``exclude_modules`` names it).  The ignore list is the
union of ``modules_to_not_convert``, ``ignore``, ``exclude_modules``,
``ignored_layers`` and ``llm_int8_skip_modules``; an entry matches a module
whose dotted name contains it (a run of whole segments), with ``*`` wildcards,
or, prefixed ``re:``, a regular expression matched at the name's start.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

#: Regular expressions longer than this are refused (they are matched against module names).
MAX_PATTERN_CHARS = 300
#: Ignore/target entries beyond this many are refused.
MAX_PATTERNS = 20_000
#: Regular expressions (``re:``) and ``*`` wildcards beyond this many in one key are refused: each is tried against
#: every module name, on the event loop the class shares (Python's ``re`` holds the GIL, so a worker thread does not
#: spare the others).  Exact names are a set, any number of them.
MAX_REGEX_PATTERNS = 16
#: Repetitions of an atom that matches many characters (``.*``, ``\w+``, ``[^.]*``, ``(...)*``) one regular
#: expression may have: each more multiplies the backtracking over a name that does not match (an attacker's
#: ``re:.*.*.*.*.*.*.*.*.*!`` took 34 s and held every session; three take under 6 ms a pattern).
MAX_BROAD_REPEATS = 3


@dataclass(frozen=True)
class TensorFormat:
    """How one group of weights is stored.

    Attributes:
        name: e.g. ``"MXFP4"``, ``"INT4 (group 128)"``.
        bits: bits per value.
        overhead_bytes_per_weight: scales and zero points amortised per weight.
        weight_only: the activations stay 16-bit (W4A16, W8A16: GPTQ, AWQ, a compressed-tensors group with no
            ``input_activations``): the weights are dequantised and multiplied on the BF16 roof.
    """

    name: str
    bits: float
    overhead_bytes_per_weight: float = 0.0
    weight_only: bool = False

    @property
    def bytes_per_weight(self) -> float:
        """Bytes per stored weight: ``bits / 8 + overhead``."""
        return self.bits / 8 + self.overhead_bytes_per_weight


#: The format of every tensor a checkpoint does not quantise.
BF16 = TensorFormat("BF16", 16)


class _Patterns:
    """Module-name patterns: whole-segment substrings, ``*`` wildcards, ``re:`` regular expressions."""

    def __init__(self, patterns: tuple[str, ...]):
        self.exact = {p for p in patterns if not p.startswith("re:") and not any(c in p for c in "*?[")}
        regexes = []
        for p in patterns:
            if p.startswith("re:"):
                regexes.append(f"(?:{p[3:]})")
            elif p not in self.exact:
                core = ".*".join(re.escape(part) for part in p.split("*")).replace(r"\?", ".")
                regexes.append(rf"(?:(?:.*\.)?{core}(?:\..*)?$)")
        self.regex = re.compile("|".join(regexes)) if regexes else None
        self.by_index = any(any(c.isdigit() for c in p) for p in patterns)

    def match(self, name: str) -> bool:
        if self.exact:
            segs = name.split(".")
            for i in range(len(segs)):
                for j in range(i + 1, len(segs) + 1):
                    if ".".join(segs[i:j]) in self.exact:
                        return True
        return bool(self.regex and self.regex.match(name))


@dataclass(frozen=True)
class Quantization:
    """A checkpoint's ``quantization_config``: what its linear weights are stored in.

    Attributes:
        method: ``"gptq"``, ``"awq"``, ``"fp8"``, ``"mxfp4"``, ``"modelopt"``,
            ``"compressed-tensors"``, ``"bitsandbytes"``, ...
        bits: bits per quantised weight of the main format (what the weight
            precision lever is matched against).
        overhead_bytes_per_weight: the main format's scales and zero points per weight.
        rules: ``((targets, format), ...)``: the first rule whose targets match
            a linear weight gives its format; ``"Linear"`` matches every linear
            layer but the LM head.
        ignore: module-name patterns left unquantised.
        lm_head: the LM head is quantised when a rule targets it.
        modelled: False when the method is not one this module reads (its bits
            are then taken as given, without scale overhead; a warning says so).
    """

    method: str
    bits: int
    overhead_bytes_per_weight: float
    rules: tuple[tuple[tuple[str, ...], TensorFormat], ...] = ()
    ignore: tuple[str, ...] = ()
    lm_head: bool = False
    modelled: bool = True
    _matchers: dict = field(default_factory=dict, compare=False, repr=False, hash=False)

    @property
    def main_format(self) -> TensorFormat:
        """The format most weights are stored in."""
        return self.rules[0][1] if self.rules else TensorFormat(self.method, self.bits, self.overhead_bytes_per_weight)

    def _matcher(self, patterns: tuple[str, ...]) -> _Patterns:
        if patterns not in self._matchers:
            self._matchers[patterns] = _Patterns(patterns)
        return self._matchers[patterns]

    def index_sensitive(self) -> bool:
        """Whether some ignore or target entry names particular layer indices (digits)."""
        return self._matcher(self.ignore).by_index or any(self._matcher(t).by_index for t, _ in self.rules)

    def format_for(self, names: tuple[str, ...], linear: bool, lm_head: bool = False) -> TensorFormat:
        """The stored format of a tensor group known by any of ``names`` (dotted module names).

        Args:
            names: the module's names in the configs' dialects (``model.layers.3.mlp.experts`` ...).
            linear: the group is the weight matrices of linear layers (else: norms, biases,
                embeddings, convolutions: never quantised).
            lm_head: the group is the LM head (quantised only when a rule names it).
        """
        if not linear or any(self._matcher(self.ignore).match(n) for n in names):
            return BF16
        for targets, fmt in self.rules:
            named = self._matcher(tuple(t for t in targets if t != "Linear"))
            if any(named.match(n) for n in names):
                return fmt
            if "Linear" in targets and (not lm_head or self.lm_head):
                return fmt
        return BF16


def _number(qc: dict, key: str, problems: list[str], default, *, low: float, high: float):
    value = qc.get(key, default)
    if value is None:
        return default
    ok = (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and math.isfinite(value))
    if not ok or not low <= value <= high:
        problems.append(f"quantization_config.{key} must be a number in {low:g}..{high:g}, got {str(value)[:40]!r}")
        return default
    return value


def _patterns(qc: dict, keys: tuple[str, ...], problems: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for key in keys:
        value = qc.get(key)
        if value is None:
            continue
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(f"quantization_config.{key} must be a list of module names")
            continue
        if len(value) > MAX_PATTERNS:
            problems.append(f"quantization_config.{key} has {len(value):,} entries (at most {MAX_PATTERNS:,})")
            continue
        if _regexes(value) + _regexes(out) > MAX_REGEX_PATTERNS:  # over every key given, not each
            problems.append(f"quantization_config.{key} brings the regular expressions and wildcards to more than "
                            f"{MAX_REGEX_PATTERNS} (each is tried against every module name)")
            continue
        for v in value:
            if v.startswith("re:"):
                why = _costly(v[3:])
                if len(v) > MAX_PATTERN_CHARS or why:
                    problems.append(f"quantization_config.{key}: regular expression {v[:40]!r} "
                                    f"{why or f'has more than {MAX_PATTERN_CHARS} characters'}")
                    continue
                try:
                    re.compile(v[3:])
                except re.error as exc:
                    problems.append(f"quantization_config.{key}: invalid regular expression {v[:40]!r} ({exc})")
                    continue
            elif v.count("*") > MAX_BROAD_REPEATS:  # each * is a .* (_Patterns)
                problems.append(f"quantization_config.{key}: wildcard {v[:40]!r} has more than {MAX_BROAD_REPEATS} *")
                continue
            out.append(v)
    return tuple(out)


_BROAD_ESCAPES = set("wWsSD")


def _costly(pattern: str) -> str:
    r"""Why matching ``pattern`` against module names could take seconds, or ``""``: more than
    :data:`MAX_BROAD_REPEATS` repetitions of atoms that match many characters (``.``, ``\w``, a class, a group), or
    a repeated group holding a repetition or an alternation (``(a+)*``, ``(.|\w)*``: exponential backtracking).

    >>> _costly(r"model\.layers\.\d+\.mlp\..*"), _costly(".*.*.*.*!"), _costly(r"(.|\w)*!")
    ('', 'has 4 repetitions of .*-like atoms (at most 3)', 'has a repeated group holding a repetition or |')
    """
    broad, groups, i, n = 0, [], 0, len(pattern)
    atom = None  # the last atom: None (nothing to repeat), "narrow", "broad" or ("group", inner repeats or |)
    while i < n:
        c = pattern[i]
        if c == "\\":
            atom = "broad" if pattern[i + 1:i + 2] in _BROAD_ESCAPES else "narrow"
            i += 2
            continue
        if c == "[":  # a class, to its closing ] (a ] first, or after ^, is a member)
            j = i + 1 + (pattern[i + 1:i + 2] == "^")
            j += pattern[j:j + 1] == "]"
            while j < n and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            atom, i = "broad", j + 1
            continue
        if c == "(":
            groups.append(False)  # whether it holds a repetition or an alternation
            atom, i = None, i + 1
            continue
        if c == ")":
            inner = groups.pop() if groups else False
            atom, i = ("group", inner), i + 1
            continue
        if c == "|" and groups:
            groups[-1] = True
        repeat = c in "*+" or (c == "{" and re.match(r"\{\d*,(\d*)\}", pattern[i:]) is not None)
        if repeat and atom is not None:
            if c == "{":
                upper = re.match(r"\{\d*,(\d*)\}", pattern[i:]).group(1)
                repeat = upper == "" or int(upper) > 1
            if repeat:
                if isinstance(atom, tuple) and atom[1]:
                    return "has a repeated group holding a repetition or |"
                if atom != "narrow":
                    broad += 1
                if groups:
                    groups[-1] = True
            atom = None
        elif c not in "*+?{":
            atom = "broad" if c == "." else "narrow"
        i += 1
    if broad > MAX_BROAD_REPEATS:
        return f"has {broad} repetitions of .*-like atoms (at most {MAX_BROAD_REPEATS})"
    return ""


IGNORE_KEYS = ("modules_to_not_convert", "ignore", "exclude_modules", "ignored_layers", "llm_int8_skip_modules")


def _compressed_tensors(qc: dict, hidden: int, problems: list[str], notes: list[str]):
    groups = qc.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        problems.append("quantization_config.config_groups must be an object of quantisation groups")
        return ()
    rules = []
    for gname, group in list(groups.items())[:64]:
        where = f"config_groups.{str(gname)[:40]}"
        if not isinstance(group, dict):
            problems.append(f"quantization_config.{where} must be an object")
            continue
        weights = group.get("weights")
        if weights is None:
            continue  # activations only: the weights stay as they are
        if not isinstance(weights, dict):
            problems.append(f"quantization_config.{where}.weights must be an object")
            continue
        sub: list[str] = []
        bits = _number(weights, "num_bits", sub, 8, low=1, high=16)
        group_size = _number(weights, "group_size", sub, 0, low=-1, high=1 << 20)
        problems.extend(p.replace("quantization_config.", f"quantization_config.{where}.weights.") for p in sub)
        strategy = str(weights.get("strategy") or "tensor")[:40]
        kind = str(weights.get("type") or "int")[:20]
        symmetric = weights.get("symmetric", True) is not False
        scale = 1.0 if (kind == "float" and bits == 4) else 2.0  # NVFP4: FP8 scales; otherwise 16-bit
        zero = 0.0 if symmetric else bits / 8
        if strategy in ("group", "tensor_group"):
            if not group_size or group_size <= 0:
                problems.append(f"quantization_config.{where}.weights.group_size must be positive for {strategy}")
                continue
            overhead = (scale + zero) / group_size
        elif strategy == "block":
            block = weights.get("block_structure")
            if (not isinstance(block, list) or len(block) != 2
                    or not all(isinstance(b, int) and not isinstance(b, bool) and 0 < b <= 1 << 16 for b in block)):
                problems.append(f"quantization_config.{where}.weights.block_structure must be two positive integers")
                continue
            overhead = (scale + zero) / (block[0] * block[1])
        elif strategy == "channel":
            overhead = (scale + zero) / max(hidden, 1)  # one scale per output row of ~h inputs
        elif strategy == "tensor":
            overhead = 0.0
        else:
            problems.append(f"quantization_config.{where}.weights.strategy {strategy!r} is not one of group, "
                            "tensor_group, block, channel, tensor")
            continue
        targets = group.get("targets") or ["Linear"]
        if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
            problems.append(f"quantization_config.{where}.targets must be a list of names")
            continue
        targets = _patterns({"targets": targets}, ("targets",), problems)
        name = ("NVFP4" if kind == "float" and bits == 4 and group_size == 16 else
                f"{'FP' if kind == 'float' else 'INT'}{bits:g} ({strategy}{f' {group_size:g}' if group_size else ''})")
        # No input_activations: the activations stay 16-bit (W8A16, W4A16), the weights dequantised to multiply.
        rules.append((targets, TensorFormat(name, bits, overhead, weight_only=not group.get("input_activations"))))
    if len(groups) > 64:
        notes.append(f"quantization_config.config_groups: only the first 64 of {len(groups)} groups read")
    if sum(_regexes(targets) for targets, _ in rules) > MAX_REGEX_PATTERNS:  # 64 groups of 16: 5.7 s a read
        problems.append(f"quantization_config.config_groups' targets have more than {MAX_REGEX_PATTERNS} regular "
                        "expressions and wildcards in all (each is tried against every module name)")
        return ()
    return tuple(rules)


def _regexes(patterns) -> int:
    """How many of ``patterns`` are regular expressions or wildcards (each tried against every module name)."""
    return sum(1 for v in patterns if v.startswith("re:") or "*" in v)


def _kv_cache_note(qc: dict) -> str:
    """What a checkpoint says of its KV cache's precision (compressed-tensors' ``kv_cache_scheme``, ModelOpt's
    ``kv_cache_quant_algo``), as a note: the KV cache's bytes per element are the lab's KV-cache precision lever
    (p_kv), which a config does not set; "" where it says nothing."""
    scheme, algo = qc.get("kv_cache_scheme"), qc.get("kv_cache_quant_algo")
    if isinstance(scheme, dict):
        bits, kind = scheme.get("num_bits"), str(scheme.get("type") or "")[:10]
        what = (f"{bits:g}-bit {kind}".strip() if isinstance(bits, (int, float)) and not isinstance(bits, bool)
                and 0 < bits <= 64 else "a quantised format")
        return (f"quantization_config.kv_cache_scheme: the checkpoint ships its KV cache in {what}; the KV-cache "
                "precision lever "
                "(p_kv) sets the KV bytes here (FP8 for an 8-bit cache)")
    if scheme is not None and scheme is not False:  # a string ("fp8") or another form: said all the same
        return ("quantization_config.kv_cache_scheme: the checkpoint ships its KV cache in a quantised format; the "
                "KV-cache precision lever (p_kv) sets the KV bytes here (FP8 for an 8-bit cache)")
    if algo:
        return (f"quantization_config.kv_cache_quant_algo {str(algo)[:20]}: the checkpoint ships a quantised KV "
                "cache; the KV-cache precision lever (p_kv) sets the KV bytes here (FP8 for an 8-bit cache)")
    return ""


def read_quantization(qc, *, hidden: int, problems: list[str], notes: list[str]) -> Quantization | None:
    """A :class:`Quantization` from a ``quantization_config`` dict (None when there is none).

    Args:
        qc: the config's ``quantization_config`` (any JSON value).
        hidden: the model width h (per-row scales are amortised over h inputs).
        problems: refusals are appended here (each names its field).
        notes: assumptions and warnings are appended here.
    """
    if qc is None:
        return None
    if not isinstance(qc, dict):
        problems.append("quantization_config must be an object")
        return None
    method = str(qc.get("quant_method") or ("modelopt" if "quant_algo" in qc else "unknown"))[:40].lower()
    sub: list[str] = []
    kv_note = _kv_cache_note(qc)
    if kv_note:
        notes.append(kv_note)
    ignore = _patterns(qc, IGNORE_KEYS, sub)
    lm_head = False

    if method in ("gptq", "awq"):
        bits = int(_number(qc, "bits", sub, None, low=2, high=8) or _number(qc, "w_bit", sub, 4, low=2, high=8))
        group = _number(qc, "group_size", sub, None, low=-1, high=1 << 20)
        group = group if group is not None else _number(qc, "q_group_size", sub, 128, low=-1, high=1 << 20)
        if group != int(group):  # an attacker's trial: 128.5 read "group 128.5"
            sub.append(f"quantization_config.group_size must be a whole number, got {group:g}")
        group = int(group)
        if group == 0:  # an engineer's trial: read as "group 0"; GPTQ and AWQ take a size, or -1 for one per row
            sub.append("quantization_config.group_size must be positive, or -1 (one group per output row)")
        # A 16-bit scale and a bits-wide zero point per group; group -1: one per output row.
        overhead = (2 + bits / 8) / (group if group > 0 else max(hidden, 1))
        fmt = TensorFormat(f"INT{bits} ({method.upper()}, {f'group {group}' if group > 0 else 'one group per row'})",
                           bits, overhead, weight_only=True)
        lm_head = qc.get("lm_head") is True
        rules = ((("Linear",), fmt),)
    elif method == "fp8":
        block = qc.get("weight_block_size", [128, 128])
        if block is None:
            overhead, label = 0.0, "per tensor"
        elif (isinstance(block, list) and len(block) == 2
              and all(isinstance(b, int) and not isinstance(b, bool) and 0 < b <= 1 << 16 for b in block)):
            overhead, label = 4 / (block[0] * block[1]), f"{block[0]}×{block[1]} blocks"
        else:
            sub.append("quantization_config.weight_block_size must be two positive integers")
            overhead, label = 0.0, "?"
        rules = ((("Linear",), TensorFormat(f"FP8 ({label})", 8, overhead)),)
    elif method in ("fbgemm_fp8",):
        rules = ((("Linear",), TensorFormat("FP8 (per row)", 8, 4 / max(hidden, 1))),)
    elif method == "mxfp4":
        # Transformers' MXFP4 quantiser replaces the routed experts only (its Mxfp4GptOssExperts); the attention,
        # the router, the embeddings and the head stay 16-bit whether or not modules_to_not_convert names them.
        rules = ((("experts",), TensorFormat("MXFP4", 4, 1 / 32)),)
        notes.append("MXFP4: the routed experts in MXFP4 (transformers' quantiser replaces only those); every other "
                     "linear weight 16-bit")
    elif method == "modelopt":
        lm_head = True  # ModelOpt quantises every linear layer its exclude_modules does not name
        algo = str(qc.get("quant_algo") or "")[:40].upper()
        group = int(_number(qc, "group_size", sub, 16 if algo == "NVFP4" else 128, low=1, high=1 << 20))
        if algo == "NVFP4":
            rules = ((("Linear",), TensorFormat("NVFP4", 4, 1 / group)),)
        elif algo == "FP8":
            rules = ((("Linear",), TensorFormat("FP8 (per tensor)", 8, 0.0)),)
        elif algo in ("W4A8_AWQ", "INT4_AWQ", "W4A16_AWQ"):
            rules = ((("Linear",), TensorFormat(f"INT4 ({algo}, group {group})", 4, 2 / group,
                                                weight_only=algo != "W4A8_AWQ")),)
        else:
            notes.append(f"quantization_config.quant_algo {algo or '(none)'!r} is not modelled: the weights are "
                         "counted as 16-bit")
            problems.extend(sub)
            return Quantization(method, 16, 0.0, (), ignore, False, modelled=False)
    elif method == "compressed-tensors":
        rules = _compressed_tensors(qc, hidden, sub, notes)
        lm_head = True  # "Linear" targets the LM head too unless ``ignore`` names it
    elif method == "bitsandbytes":
        if qc.get("load_in_4bit"):
            kind = str(qc.get("bnb_4bit_quant_type") or "fp4")[:10].upper()
            # absmax per block of 64: FP32, or (double quantisation) 8-bit plus an FP32 per 256 absmax.
            overhead = (1 + 4 / 256) / 64 if qc.get("bnb_4bit_use_double_quant") else 4 / 64
            rules = ((("Linear",), TensorFormat(f"{kind} (bitsandbytes)", 4, overhead)),)
        elif qc.get("load_in_8bit"):
            rules = ((("Linear",), TensorFormat("INT8 (LLM.int8)", 8, 4 / max(hidden, 1))),)
        else:
            sub.append("quantization_config: bitsandbytes with neither load_in_4bit nor load_in_8bit")
            rules = ()
    else:
        # "nbits": HQQ's name for it (a trial: an HQQ 4-bit checkpoint was counted at 16 bits, "nbits" unread).
        bits = _number(qc, "bits" if "bits" in qc or "nbits" not in qc else "nbits", sub, 16, low=1, high=16)
        notes.append(f"quantization_config quant_method {method!r} is not modelled: \"as stored\" counts every "
                     f"linear weight at {bits:g} bits, no scale overhead, embeddings and LM head 16-bit (the weight "
                     "precision lever's formats count every weight at theirs)")
        problems.extend(sub)
        rules = ((("Linear",), TensorFormat(method, bits, 0.0)),) if bits < 16 else ()
        return Quantization(method, int(bits), 0.0, rules, ignore, False, modelled=False)
    problems.extend(sub)
    if not rules:
        return Quantization(method, 16, 0.0, (), ignore, lm_head)
    main = rules[0][1]
    return Quantization(method, int(round(main.bits)), main.overhead_bytes_per_weight, rules, ignore, lm_head)
