"""Command line: ``python -m core explain ...``.

Examples::

    python -m core explain --model llama-3-8b --gpu h100-sxm --batch 56 --context 8192
    python -m core explain --model llama-3-70b --gpu h200 --weight-dtype int4 --json
    python -m core list
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from urllib.parse import urlencode

from .config_reader import from_hf_config, parse_config_text
from .explain import explain
from .hardware import (
    CAPACITY_CONVENTIONS,
    accelerator_form,
    catalogue_match,
    custom_accelerator,
    get_accelerator,
    load_accelerators,
)
from .measure import measure
from .model_catalogue import load_models
from .models import ConfigError, ModelSpec
from .permalink import FLAG_NAMES
from .scenario import Scenario, evaluate
from .units import GiB, fmt_bandwidth, fmt_flops_rate


class OneLineError(Exception):
    """A user error, reported as one line."""


class _Parser(argparse.ArgumentParser):
    # argparse prints the whole usage block on an error; the lab promises one
    # line naming the bad value and what is accepted.
    def error(self, message: str):
        raise OneLineError(message)


def _scenario_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default="llama-3-70b", help="model id (see `python -m core list`)")
    p.add_argument("--gpu", default="h100-sxm", help="accelerator id (see `python -m core list`)")
    p.add_argument("--weight-dtype", default="bf16", help="fp32, bf16, fp16, fp8, int8, int4, fp4")
    p.add_argument("--kv-dtype", default="bf16", help="fp32, bf16, fp16, fp8, int8, int4")
    p.add_argument("--batch", type=int, default=1, help="B, concurrent sequences")
    p.add_argument("--spec-k", type=int, default=1, help="k, tokens per weight read (speculation depth)")
    p.add_argument("--context", type=int, default=8192, help="S, tokens of context per sequence")
    p.add_argument("--no-gqa", action="store_true", help="every query head keeps its own K/V")
    p.add_argument("--phase", default="decode", help="decode or prefill")
    p.add_argument("--prompt-len", type=int, default=2000, help="prompt tokens (prefill's k)")
    p.add_argument("--acceptance", type=float, default=0.7, help="α, draft-token acceptance rate (0 to 1)")
    p.add_argument("--reserve", type=float, default=3.0, help="GiB held back for activations and slack")
    p.add_argument("--capacity", default="binary", help="capacity convention: " + ", ".join(CAPACITY_CONVENTIONS))


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m core", description="Roofline Lab: decode and prefill on the roofline.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    ex = sub.add_parser("explain", help="step-by-step derivation of one scenario")
    _scenario_flags(ex)
    ex.add_argument("--config", metavar="PATH", help="a Hugging Face config.json to use instead of --model")
    ex.add_argument("--json", action="store_true", help="print one JSON object (SI units)")
    sub.add_parser("list", help="catalogue ids")
    me = sub.add_parser("measure", help="measure this machine's roofline (bandwidth and matmul), ~30 s")
    me.add_argument("--seconds", type=float, default=30.0, help="time budget in seconds (default 30)")
    me.add_argument("--out", metavar="PATH", help="also write the accelerator as JSON (the lab's custom-GPU form)")
    me.add_argument("--datasheet", metavar="GPU", help="catalogue id whose datasheet roof to draw beside the "
                                                       "measured one (default: the one the device's name names)")
    return parser


def scenario_from_args(args: argparse.Namespace) -> Scenario:
    """A :class:`Scenario` from parsed flags.

    Raises:
        OneLineError: an unknown id or an out-of-range value, naming it.
    """
    values = dict(
        model=args.model, gpu=args.gpu, weight_dtype=args.weight_dtype, kv_dtype=args.kv_dtype,
        batch=args.batch, spec_k=args.spec_k, context=args.context, gqa=not args.no_gqa,
        phase=args.phase, prompt_len=args.prompt_len, capacity_convention=args.capacity,
        acceptance=args.acceptance,
    )
    # Ids are lower case; accept "FP4" or "H100-SXM" as typed.
    for name in ("model", "gpu", "weight_dtype", "kv_dtype", "phase", "capacity_convention"):
        values[name] = values[name].lower()
    scenario = Scenario()
    for name, value in values.items():
        _set(scenario, name, value)
    if not (args.reserve >= 0 and args.reserve < float("inf")):
        raise OneLineError(f"--reserve {args.reserve}: must be a finite number of GiB >= 0")
    scenario.reserve_bytes = args.reserve * GiB
    return scenario


def _set(scenario: Scenario, name: str, value) -> None:
    p = scenario.param[name]
    flag = "--" + FLAG_NAMES[name]
    if hasattr(p, "objects") and p.objects and value not in p.objects:
        raise OneLineError(f"{flag} {value!r}: unknown; accepted: {', '.join(map(str, p.objects))}")
    if getattr(p, "bounds", None) and isinstance(value, (int, float)) and not isinstance(value, bool):
        lo, hi = p.bounds
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise OneLineError(f"{flag} {value}: out of range; accepted: {lo} to {hi}")
    setattr(scenario, name, value)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command == "measure":
            return _measure(args)
        if args.command == "list":
            print("GPUs:   " + ", ".join(load_accelerators()))
            print("models: " + ", ".join(load_models()))
            return 0
        scenario = scenario_from_args(args)
        if args.config:
            model = model_from_file(args.config)
            levers = scenario.levers()
            del levers["model"]
            result = evaluate(gpu=get_accelerator(levers.pop("gpu")), model=model, **levers)
        else:
            result = scenario.evaluate()
    except (OneLineError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        out = result.to_json()
        out["model_read"] = result.model.architecture()
        out["assumptions"] = list(result.model.assumptions)
        print(json.dumps(out, indent=2))
    else:
        print(explain(result))
    return 0


def _measure(args: argparse.Namespace) -> int:
    if not (2 <= args.seconds <= 600):
        # Below ~2 s a cold run can report a fraction of the real bandwidth.
        raise OneLineError(f"--seconds {args.seconds}: out of range; accepted: 2 to 600")
    if args.datasheet:
        get_accelerator(args.datasheet)  # refuse an unknown id before measuring
    roofs = measure(args.seconds)
    gpu = custom_accelerator(f"This machine: {roofs.device}"[:60], bandwidth_tbs=roofs.bandwidth / 1e12,
                             capacity_gb=max(roofs.memory_bytes, GiB) / GiB, bf16=roofs.flops / 1e12,
                             reference=args.datasheet or catalogue_match(roofs.device))
    form = accelerator_form(gpu)
    print(f"{roofs.device}: {fmt_flops_rate(roofs.flops)} ({roofs.flops_kind}), {fmt_bandwidth(roofs.bandwidth)} "
          f"(streaming copy) -> ridge point {roofs.flops / roofs.bandwidth:,.1f} FLOP/byte; the lab's BF16 roof "
          f"is the measured {roofs.flops_kind}")
    print("open it in the lab: /app?" + urlencode({"custom-gpu": json.dumps(form, separators=(",", ":")),
                                                    "gpu": gpu.id}))
    if gpu.reference_id:
        ref = get_accelerator(gpu.reference_id)
        print(
            f"vs the {ref.name} datasheet: {100 * roofs.flops / ref.dense_flop_per_s['bf16']:.0f} % of its dense BF16 "
            f"peak, {100 * roofs.bandwidth / ref.hbm_bandwidth:.0f} % of its bandwidth"
        )
    if args.out:
        Path(args.out).write_text(json.dumps(form, indent=2) + "\n")
        print(f"wrote {args.out}")
    return 0


def model_from_file(path: str) -> ModelSpec:
    """A model from a ``config.json`` on disk.

    Raises:
        OneLineError: unreadable file or a config that cannot be understood.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise OneLineError(f"--config {path}: {exc.strerror}") from None
    try:
        return from_hf_config(parse_config_text(data), model_id=p.stem, name=p.name)
    except ConfigError as exc:
        raise OneLineError(f"--config {path}: {exc}") from None
