"""Command line for the serving system around the ladder: ``python -m core ladder|batching|paging|...``.

Each subcommand takes the scenario's lever flags (``--model``, ``--gpu``, ``--tp`` …, the lever table's)
and its own, and prints the model's result as text or, with ``--json``, as one strict JSON object
(SI units; never Infinity or NaN).  Examples (the default scenario, Llama-3-70B in BF16, needs TP = 2 to fit
an H100 at all)::

    python -m core ladder --json
    python -m core ladder --rungs continuous_batching,paged_attention
    python -m core batching --tp 2 --requests 1000 --seed 0 --json
    python -m core paging --tp 2 --max-len 2048 --block-size 16
    python -m core disaggregation --tp 2 --prompt-len 2000 --output 300 --rate 4
    python -m core context-parallel --tp 2 --context 1000000
    python -m core training-memory --model llama-3-70b --dp 64

Kept apart from :mod:`core.cli` (which registers these with :func:`add_commands` and hands them to
:func:`run`) so that each file's changes merge on their own.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

from .batching import SHAREGPT, LengthMix, compare_batching
from .context_parallel import HOSTS, ring_attention, ring_host
from .disaggregation import OUTPUT_LEN, RATE, TPOT_TARGET_S, TTFT_TARGET_S, plan_pools
from .explain import rung_bound_word
from .ladder import ARTICLE_ORDER, LadderSettings, climb, ladder_start
from .levers import LeverTable
from .paging import BLOCK_SIZE, POLICIES, compare_paging
from .scenario import LEVERS, Scenario
from .training_memory import DATA_PARALLEL, MICROBATCHES, PIPELINE_STAGES, limits_text, pipeline_bubble, zero_stages
from .units import GiB, fmt_sig, parse_number

__all__ = ["COMMANDS", "add_commands", "run"]

COMMANDS = ("ladder", "batching", "paging", "disaggregation", "context-parallel", "training-memory")


#: The most requests a stream may hold: a second or two of simulation (100,000,000 ran past a minute, a trial).
MAX_REQUESTS = 100_000
#: ``training-memory``'s bounds: N_d up to 2^20 GPUs, P up to the PP lever's 512 stages.
MAX_DATA_PARALLEL = 2**20
MAX_STAGES = 512
#: The longest sequence a flag may name, tokens: the context lever's bound.
MAX_TOKENS = LEVERS["context"].parameter.bounds[1]
#: The most sequences a flag may name (slots, hosts, micro-batches): the batch lever's bound.
MAX_SEQUENCES = LEVERS["batch"].parameter.bounds[1]
#: The deepest speculation a flag may name: the k lever's bound.
MAX_SPEC_K = LEVERS["spec_k"].parameter.bounds[1]


#: What a number flag reads as not finite (then out of range), rather than as not a number.
NON_FINITE = ("inf", "infinity", "nan")


def _within(kind: type, low: float, high: float, accepted: str, above: bool = False):
    """An ``argparse`` type: ``kind`` (int or float) from ``low`` (excluded when ``above``) to ``high``, finite, else
    one line saying what is accepted (``inf`` and ``nan`` had reached the simulations and raised in them)."""
    def convert(text: str):
        shown = text[:20] + ("…" if len(text) > 20 else "")  # a 5,000-digit value was echoed whole
        try:
            # ASCII digits only, as the levers' flags: int() had read "２", "٤" and "1_0" (an attacker's trial)
            number = float(text) if text.strip().lower().lstrip("+-") in NON_FINITE else parse_number(text)
            if kind is int and math.isfinite(number) and not number.is_integer():
                raise ValueError
            value = kind(number) if math.isfinite(number) else number
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"{shown!r}: accepted: {accepted}") from None
        if not (math.isfinite(value) and (value > low if above else value >= low) and value <= high):
            raise argparse.ArgumentTypeError(f"{shown}: out of range; accepted: {accepted}")
        return value
    return convert


RATE_FLAG = _within(float, 0.0, 1e6, "a number of requests per second above 0, at most 1,000,000", above=True)
SECONDS_FLAG = _within(float, 0.0, 3600.0, "seconds above 0, at most 3,600", above=True)
TOKENS_FLAG = _within(int, 1, MAX_TOKENS, f"a whole number of tokens from 1 to {MAX_TOKENS:,}")
SLOTS_FLAG = _within(int, 1, MAX_SEQUENCES, f"a whole number from 1 to {MAX_SEQUENCES:,}")


def _mix_flags(p: argparse.ArgumentParser, requests: int = 1000) -> None:
    p.add_argument("--mix", choices=("sharegpt", "fixed", "uniform", "lognormal"), default="sharegpt",
                   help="request lengths: ShareGPT's (the vLLM paper's Fig. 11a means, lognormal σ = 1; default), "
                        "fixed, uniform or your own lognormal")
    p.add_argument("--prompt", metavar="TOKENS", help="fixed: P; uniform: LOW:HIGH; lognormal: the mean")
    p.add_argument("--output", metavar="TOKENS", help="fixed: O; uniform: LOW:HIGH; lognormal: the mean")
    p.add_argument("--sigma", type=_within(float, 0.0, 10.0, "a number above 0, at most 10", above=True),
                   help="lognormal shape σ (default 1)")
    p.add_argument("--requests", type=_within(int, 1, MAX_REQUESTS, f"a whole number from 1 to {MAX_REQUESTS:,}"),
                   default=requests, help=f"requests in the stream (default {requests}, at most {MAX_REQUESTS:,})")
    p.add_argument("--seed", type=_within(int, 0, 2**32 - 1, "a whole number from 0 to 4,294,967,295"), default=0,
                   help="seed of the stream (default 0)")


def add_commands(sub) -> None:
    """Add the subcommands of :data:`COMMANDS` to ``sub`` (an ``argparse`` subparsers object)."""
    from .cli import config_flag  # registered from core.cli's parser, whose flags these commands share

    def parser(name: str, text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=text, description=text)
        LEVERS.add_arguments(p)
        config_flag(p)
        p.add_argument("--json", action="store_true", help="print one JSON object (SI units)")
        return p

    lad = parser("ladder", "article 004 section 06's seven rungs applied one after another")
    lad.add_argument("--rungs", default=",".join(ARTICLE_ORDER),
                     help=f"rung ids in order, comma-separated (default: {','.join(ARTICLE_ORDER)}); '' for none")
    lad.add_argument("--to-weight-dtype", default="int4", help="the precision weight quantization moves to")
    lad.add_argument("--to-spec-k", type=_within(int, 1, MAX_SPEC_K, f"a whole number from 1 to {MAX_SPEC_K}"),
                     default=4, help="the speculation depth speculative decoding moves to")
    lad.add_argument("--block-size", type=TOKENS_FLAG, default=BLOCK_SIZE, help="PagedAttention's block, tokens")
    lad.add_argument("--ttft", type=SECONDS_FLAG, default=TTFT_TARGET_S, help="disaggregation's TTFT target, s")
    lad.add_argument("--tpot", type=SECONDS_FLAG, default=TPOT_TARGET_S, help="disaggregation's TPOT target, s")
    lad.add_argument("--rate", type=RATE_FLAG, help="disaggregation's request rate, req/s (default: what B serves)")
    _mix_flags(lad)

    bat = parser("batching", "static against continuous batching of a seeded request stream")
    _mix_flags(bat)
    bat.add_argument("--rate", type=RATE_FLAG, help="Poisson arrivals, req/s (default: a backlog at t = 0)")
    bat.add_argument("--slots", type=SLOTS_FLAG, help="most sequences per step (default: what fits at --max-len)")
    bat.add_argument("--max-len", type=TOKENS_FLAG, help="the engine's maximum sequence length (default: --context)")
    bat.add_argument("--steps", action="store_true", help="with --json: every step's effective batch and time")

    pag = parser("paging", "PagedAttention against contiguous KV allocation for a request mix")
    _mix_flags(pag)
    pag.add_argument("--block-size", type=TOKENS_FLAG, default=BLOCK_SIZE,
                     help=f"tokens per block (default {BLOCK_SIZE})")
    pag.add_argument("--max-len", type=TOKENS_FLAG,
                     help="what a contiguous engine reserves per sequence (default: --context)")

    dis = parser("disaggregation", "prefill and decode pools against one colocated pool (prompt: --prompt-len)")
    dis.add_argument("--output", type=_within(int, 2, MAX_TOKENS, f"a whole number of tokens from 2 to {MAX_TOKENS:,}"),
                     default=OUTPUT_LEN, help=f"output tokens per request (default {OUTPUT_LEN})")
    dis.add_argument("--rate", type=RATE_FLAG, default=RATE, help=f"requests per second (default {RATE:g})")
    dis.add_argument("--ttft", type=SECONDS_FLAG, default=TTFT_TARGET_S,
                     help=f"TTFT target, s (default {TTFT_TARGET_S:g})")
    dis.add_argument("--tpot", type=SECONDS_FLAG, default=TPOT_TARGET_S,
                     help=f"TPOT target, s (default {TPOT_TARGET_S:g})")

    cp = parser("context-parallel", "Ring Attention: one sequence (--context) over N hosts")
    cp.add_argument("--hosts", default=",".join(map(str, HOSTS)), help="ring sizes N, comma-separated")

    tm = parser("training-memory", "ZeRO stages per GPU for --model, and the pipeline bubble")
    tm.add_argument("--dp", type=_within(int, 1, MAX_DATA_PARALLEL, f"a whole number from 1 to {MAX_DATA_PARALLEL:,}"),
                    default=DATA_PARALLEL, help=f"data-parallel GPUs N_d (default {DATA_PARALLEL})")
    tm.add_argument("--stages", type=_within(int, 1, MAX_STAGES, f"a whole number from 1 to {MAX_STAGES:,}"),
                    default=PIPELINE_STAGES,
                    help=f"pipeline stages P for the bubble (default {PIPELINE_STAGES})")
    tm.add_argument("--microbatches", default=",".join(map(str, MICROBATCHES)),
                    help="micro-batch counts M, comma-separated")


def _levers_given(args: argparse.Namespace, table: LeverTable = LEVERS) -> dict:
    """The lever flags typed on the command line, decoded (the rest are left to the scenario's own)."""
    from .cli import scenario_from_args  # the one decoding path (and its one-line errors)

    typed = {lever.name for lever in table if getattr(args, lever.name, None) is not None}
    scenario = scenario_from_args(args)
    return {name: getattr(scenario, name) for name in typed}


def _scenario(args: argparse.Namespace) -> Scenario:
    """The scenario the flags set, with ``--config``'s model selected (as ``explain --config`` and the page's Bring
    your own, whose model climbs the Ladder tab: an engineer's trial found these commands refused the flag)."""
    from .cli import add_config_model

    scenario = Scenario(**_levers_given(args))
    add_config_model(scenario, args)
    return scenario


def _pair(text: str | None, name: str) -> tuple[float, float]:
    try:
        low, high = (float(x) for x in str(text).split(":"))
    except ValueError:
        raise ValueError(f"--{name} {text!r}: a uniform range is LOW:HIGH, e.g. 50:500") from None
    return low, high


def _mix(args: argparse.Namespace) -> LengthMix:
    if args.mix == "sharegpt":
        # A mix's flags without --mix were ignored, silently (a trial's "--prompt -1" ran ShareGPT's lengths)
        stray = [f"--{name}" for name in ("prompt", "output", "sigma") if getattr(args, name) is not None]
        if stray:
            raise ValueError(f"{', '.join(stray)} set{'s' if len(stray) == 1 else ''} a request mix of your own: "
                             "add --mix fixed, uniform or lognormal (without it the mix is ShareGPT's)")
        return SHAREGPT
    if args.sigma is not None and args.mix != "lognormal":
        raise ValueError(f"--sigma shapes a lognormal mix, not --mix {args.mix}")
    if args.prompt is None or args.output is None:
        raise ValueError(f"--mix {args.mix} needs --prompt and --output")
    if args.mix == "uniform":
        return LengthMix.uniform(_pair(args.prompt, "prompt"), _pair(args.output, "output"))
    try:
        prompt, output = float(args.prompt), float(args.output)
    except ValueError:
        raise ValueError("--prompt and --output are token counts") from None
    if args.mix == "fixed":
        return LengthMix.fixed(int(prompt), int(output))
    return LengthMix.lognormal(prompt, output, 1.0 if args.sigma is None else args.sigma)


def _ints(text: str, name: str, high: int = MAX_SEQUENCES) -> list[int]:
    """Whole numbers in ASCII digits separated by commas, each from 1 to ``high`` (a ring of 999,999,999 hosts had
    printed a block of 0 tokens; "２" had been read as 2)."""
    try:
        numbers = [parse_number(x) for x in text.split(",") if x.strip()]
        if not all(math.isfinite(n) and n.is_integer() for n in numbers):
            raise ValueError
        values = [int(n) for n in numbers]
    except ValueError:
        raise ValueError(f"--{name} {text[:40]!r}: whole numbers separated by commas") from None
    if any(not 1 <= v <= high for v in values):
        raise ValueError(f"--{name} {text[:40]!r}: each from 1 to {high:,}")
    return values


def run(args: argparse.Namespace) -> str:
    """The text (or JSON) ``args.command`` prints.

    Raises:
        ValueError: an invalid flag value (the caller prints it as one line).
    """
    given = _scenario(args)  # the flags, --config included
    if args.command == "training-memory":
        return _training_memory(args, given)
    if args.command == "ladder":
        settings = LadderSettings(weight_dtype=LEVERS["weight_dtype"].decode(args.to_weight_dtype),
                                  spec_k=int(args.to_spec_k), mix=_mix(args), n_requests=args.requests,
                                  seed=args.seed, block_size=args.block_size, ttft_target_s=args.ttft,
                                  tpot_target_s=args.tpot, request_rate=args.rate)
        rungs = [r.strip() for r in args.rungs.split(",") if r.strip()]
        # The tabs' start: the scenario the flags set (article 004's by default), on the smallest split that fits
        # (a trial's Qwen3-30B-A3B climbed at article 004's TP = 2, where it fits on one GPU, and nothing said so).
        start, note = ladder_start(given)
        out = climb(start, rungs, settings)
        return _dump({**out.to_json(), "start_note": note}) if args.json else _ladder_text(out, note)
    if args.command == "context-parallel":
        # A ring splits one sequence: its host holds the weights at the split given (the ladder's start, grown until
        # the split held all of --context, had made a host of 8 GPUs for --tp 2 and left the ring nothing to do).
        host, note = ring_host(given)
        out = ring_attention(host, _ints(args.hosts, "hosts"))
        return _dump({**out.to_json(), "start_note": note}) if args.json else _said(note, _ring_text(out, host))
    scenario, note = ladder_start(given)  # as the Serving tab: the same numbers for the same flags
    if args.command == "batching":
        out = compare_batching(scenario, _mix(args), args.requests, args.seed, args.slots, args.rate, args.max_len)
        return _dump({**out.to_json(steps=args.steps), "start_note": note}) if args.json else _said(note,
                                                                                                     _batching_text(out))
    if args.command == "paging":
        out = compare_paging(scenario, _mix(args), args.requests, args.seed, args.block_size, args.max_len)
        return _dump({**out.to_json(), "start_note": note}) if args.json else _said(note, _paging_text(out))
    if args.command == "disaggregation":
        # A decode step reads P + O/2 tokens per sequence, its mean over the request, as the Serving tab's: an
        # engineer's trial found --context 4,096 decoding here at 121.6 req/s where the tab, at 2,150, read 163.2.
        out = plan_pools(scenario, args.rate, scenario.prompt_len, args.output, args.ttft, args.tpot)
        return _dump({**out.to_json(), "start_note": note}) if args.json else _said(note, _pools_text(out))


#: The levers ``training-memory`` reads: ZeRO's memory per GPU is the model's, over N_d (``--dp``), against one GPU's
#: capacity (its convention).
TRAINING_LEVERS = ("model", "gpu", "capacity_convention")


def _training_memory(args: argparse.Namespace, given: Scenario) -> str:
    """ZeRO's stages per GPU against one GPU's capacity (as the Serving tab's table), and the pipeline bubble."""
    ignored = [f"--{LEVERS[name].flag}" for name in sorted(_levers_given(args)) if name not in TRAINING_LEVERS]
    if ignored:  # they had been taken and ignored without a word (a trial's --tp 4 --batch 8)
        print(f"warning: training-memory does not read {', '.join(ignored)}: ZeRO's memory per GPU is the model's "
              "over --dp, against one --gpu's capacity", file=sys.stderr)
    model, gpu = given.catalogue.model(given.model), given.catalogue.gpu(given.gpu)
    capacity = gpu.capacity_bytes(given.capacity_convention)  # one GPU's, under the convention: no step to evaluate
    stages = zero_stages(model, args.dp)
    micro = _ints(args.microbatches, "microbatches")
    bubble = pipeline_bubble(args.stages, np.asarray(micro))
    # A config with keys the lab does not model (--config) makes Ψ approximate; the split's note does not apply.
    approximate = model.approximate_sentence
    if args.json:
        return _dump({"model": given.model, "gpu": given.gpu, "capacity_bytes": capacity, "data_parallel": args.dp,
                      "zero": [{**s.to_json(), "over_capacity": s.total_bytes > capacity} for s in stages],
                      "pipeline": {"stages": args.stages, "microbatches": micro,
                                   "bubble": np.atleast_1d(bubble).tolist()},
                      "source": "Rajbhandari et al. 2020 (ZeRO), section 3.1 and Fig. 1; article 004 section 07",
                      "start_note": approximate})
    lines = [*([approximate] if approximate else []),
             f"ZeRO per GPU, {given.model} (Ψ = {stages[0].n_params / 1e9:,.2f}B), N_d = {args.dp}, mixed-precision "
             f"Adam (2 + 2 + 12 bytes per parameter), against one {gpu.name}'s {capacity / GiB:,.1f} GiB "
             f"({capacity / 1e9:,.1f} GB), before activations:"]
    for s in stages:
        lines.append(f"  stage {s.stage}: weights {s.weight_bytes / 1e9:,.2f} GB + gradients "
                     f"{s.gradient_bytes / 1e9:,.2f} GB + optimizer {s.optimizer_bytes / 1e9:,.2f} GB = "
                     f"{s.total_bytes / 1e9:,.2f} GB "
                     f"({s.reduction:,.2f}× less, communication {s.communication_factor:g}×)"
                     + (": over one GPU" if s.total_bytes > capacity else ": fits one GPU"))
    lines.append(f"  {limits_text(args.dp)}")
    lines.append(f"Pipeline bubble (P−1)/(M+P−1), P = {args.stages}: " + ", ".join(
        f"M = {m}: {100 * b:.1f} %" for m, b in zip(micro, np.atleast_1d(bubble), strict=True)))
    return "\n".join(lines)


def _dump(obj: dict) -> str:
    return json.dumps(obj, indent=2, allow_nan=False)


def _said(note: str, text: str) -> str:
    """``text`` under the start's note, where the scenario was moved to a split that fits."""
    return f"{note}\n{text}" if note else text


def _ladder_text(ladder, note: str = "") -> str:
    lines = [f"From {ladder.steps[0].models}." + (f" {note}" if note else ""),
             f"{'rung':34s} {'B':>5s} {'k':>2s} {'p':>4s} {'I':>8s} {'bound':>19s} {'tok/s/seq':>10s} "
             f"{'tok/s/GPU':>10s} {'fits':>5s} {'TTFT ms':>8s} {'TPOT ms':>8s}"]
    for step, note, article in zip(ladder.steps, ladder.speculation_notes(), ladder.article_notes(), strict=True):
        n = step.numbers()
        lines.append(f"{step.title:34s} {n['batch']:5d} {n['k']:2d} {n['p']:4g} {fmt_sig(n['intensity']):>8s} "
                     f"{rung_bound_word(n['bound'], n['intensity'], n['ridge_point']):>19s} "
                     f"{n['tokens_per_s_per_sequence']:10,.1f} {n['tokens_per_s_per_gpu']:10,.1f} "
                     f"{n['max_batch']:5d} {1e3 * n['ttft_s']:8,.1f} {1e3 * n['tpot_s']:8,.2f}")
        if step.summary:
            lines.append(f"    {step.summary}")
        if article:
            lines.append(f"    {article}")
        if note:  # said once, where it starts (as the tab does)
            lines.append(f"    {note}")
    moe = ladder.steps[0].result.model.moe  # the tab's column: the experts B·k tokens touch
    start, end = ladder.steps[0].numbers()["ridge_point"], ladder.final.numbers()["ridge_point"]
    # The quantisation rung can move the compute roof (gpt-oss as stored: its FP4 + BF16 mix, 620 FLOP/byte, to
    # INT4's BF16, 281): the tab dashes the first ridge beside the last, and the text names both (a trial).
    moved = f" at the last rung ({start:,.0f} at the start)" if f"{start:,.0f}" != f"{end:,.0f}" else ""
    lines.append(f"ridge point {end:,.0f} FLOP/byte{moved}; "
                 f"{'I = 2·B·k·N_active / (N_read·p)' if moe else 'I = 2·B·k/p'} on the weights; the bound counts "
                 "the KV reads (\"memory, by KV reads\" where I on the weights alone is past the ridge)")
    return "\n".join(lines)


def _batching_text(c) -> str:
    each = " in each lane" if c.table.lanes > 1 else ""
    lines = [f"{len(c.requests)} requests{each}, {c.mix.label} (seed {c.seed}, "
             + ("a backlog" if c.rate is None else f"{c.rate:g} req/s") + f"), {c.slots_text()}, "
             f"KV read per sequence {c.table.context:,} tokens"
             + ("; tokens/s count every lane" if c.table.lanes > 1 else "")]
    if c.at_max_len:
        lines.append(f"  {c.at_max_len:,} of {len(c.requests):,} requests reach the maximum length "
                     f"{c.max_len:,} (P + O = max_len): the mix's longer ones are cut to it")
    for run in (c.static, c.continuous):
        s = run.summary()
        lines.append(f"  {run.policy:10s}: sustained batch {s['sustained_batch']:6.2f} ({s['time_mean_batch']:6.2f} "
                     "over the run), mean intensity "
                     f"{s['mean_intensity']:7.1f} FLOP/byte, {s['tokens_per_s']:9,.1f} tokens/s, TTFT mean "
                     f"{s['ttft_mean_s']:8.3f} s, TPOT mean {1e3 * (s['tpot_mean_s'] or 0):7.2f} ms, end-to-end "
                     f"{s['e2e_mean_s']:8.3f} s")
    return "\n".join(lines)


def _paging_text(p) -> str:
    lines = [f"{p.mix.label}; maximum length {p.max_len:,}, blocks of {p.block_size}; "
             f"{p.free_words()}"]
    for k in POLICIES:
        a = p.allocations[k]
        tps = p.tokens_per_s[k]
        lines.append(f"  {k:10s}: reserves {a.reserved_per_sequence:8,.1f} tokens per sequence for "
                     f"{a.used_per_sequence:,.1f} used, waste {100 * a.waste_fraction:5.1f} %, {p.fit[k]:5d} fit, "
                     f"batch {p.batch[k]:4d}, " + (f"{tps:,.0f} tokens/s" if tps else "no batch"))
    lines.append("  vLLM: existing systems waste 60-80 %, paging under 4 % (blog.vllm.ai/2023/06/20/vllm.html)")
    return "\n".join(lines)


def _pools_text(d) -> str:
    lines = [f"{d.rate:g} req/s, P = {d.prompt_len:,}, O = {d.output_len:,} (a decode step reads P + O/2 = "
             f"{d.context:,} tokens per sequence), targets TTFT {d.ttft_target_s:g} s, TPOT {1e3 * d.tpot_target_s:g} "
             f"ms; ridge {d.ridge_point:,.0f} FLOP/byte"]
    for pool in (d.prefill, d.decode, d.colocated):
        gpus = "cannot meet the targets" if pool.gpus is None else f"{pool.gpus} GPUs"
        lines.append(f"  {pool.name:9s}: {pool.rate_per_instance:8.3f} req/s per instance, "
                     f"{pool.goodput_per_gpu:8.3f} per GPU, {gpus}; I = {pool.intensity:,.0f} FLOP/byte")
    lines.append(f"  {d.verdict()}")
    return "\n".join(lines)


def _ring_text(ring, scenario: Scenario) -> str:
    head = (f"{scenario.model} on {scenario.gpu}, S = {ring.context:,} tokens; a host is {ring.gpus_per_host} GPU(s); "
            + (ring.hiding_text() or "no link bandwidth in the catalogue: overlap not evaluated"))
    lines = [head]
    for i, n in enumerate(ring.hosts):
        t = "" if ring.transfer_time_s is None else f", transfer {1e3 * ring.transfer_time_s[i]:9.3f} ms"
        lines.append(f"  N = {n:4d}: largest context {ring.max_context[i]:13,d} tokens; block "
                     f"{ring.block_text(i):>12}, compute {1e3 * ring.compute_time_s[i]:11.3f} ms{t}"
                     + (" (hidden)" if ring.hidden[i] else ""))
    return "\n".join(lines)
