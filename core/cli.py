"""Command line: ``python -m core explain ...``.

Examples::

    python -m core explain --model llama-3-8b --gpu h100-sxm --batch 56 --context 8192
    python -m core explain --model llama-3-70b --gpu h200 --weight-dtype int4 --json
    python -m core explain --model llama-2-7b --gpu a100-80gb --cuda-graphs --engine gpt-fast
    python -m core validate
    python -m core explain --model llama-3-8b --gpu-name H20 --gpu-bf16 148 --gpu-bandwidth 4.0 --gpu-memory 96
    python -m core list --verbose
"""

from __future__ import annotations

import argparse
import json
import stat
import sys
from pathlib import Path
from urllib.parse import urlencode

from . import expected
from .config_reader import MAX_CONFIG_BYTES, config_model_id, config_name, from_hf_config, parse_config_text
from .coverage import beyond_calibration, beyond_text
from .explain import explain
from .export import scenario_json
from .hardware import (
    CUSTOM_RANGES,
    CUSTOM_ROOFS,
    Accelerator,
    CustomAcceleratorError,
    accelerator_form,
    catalogue_match,
    custom_accelerator,
    get_accelerator,
    load_catalogue,
    peak_order_warnings,
    sparse_warnings,
)
from .machine_roofs import measure
from .model_catalogue import load_models
from .models import ConfigError, ModelSpec
from .scenario import LEVERS, Scenario
from .serving_cli import COMMANDS as SERVING_COMMANDS
from .serving_cli import add_commands as add_serving_commands
from .serving_cli import run as run_serving
from .units import GiB, KiB, fmt_bandwidth, fmt_bytes_gib, fmt_flops_rate, fmt_sig


class OneLineError(Exception):
    """A user error, reported as one line."""


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (:class:`OneLineError`), not a usage block."""

    # argparse prints the whole usage block on an error; the lab promises one
    # line naming the bad value and what is accepted.
    def error(self, message: str):
        raise OneLineError(message)


def one_line(message: str) -> str:
    """``message`` with control characters (a newline typed into a flag) written as escapes: one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)


def printable(text: str) -> str:
    """``text`` with every control character but its line breaks written as an escape (ESC as ``\\x1b``): a
    config's field or a file's name holding ESC, BEL or a bidi override is shown, never run by the terminal."""
    return "\n".join(one_line(line) for line in text.split("\n"))


def scenario_flags(p: argparse.ArgumentParser) -> None:
    """One ``--flag`` per lever of the lever table (:data:`core.scenario.LEVERS`)."""
    LEVERS.add_arguments(p)


#: The custom-GPU flags: flag → (custom_accelerator's argument, what it takes, CUSTOM_RANGES row or None).
CUSTOM_GPU_FLAGS = {
    "gpu-name": ("name", "display name, 1 to 60 characters (a GPU not in the catalogue, instead of --gpu)", None),
    **{f"gpu-{roof}": (roof, f"dense {roof.upper() if roof != 'bf16' else 'BF16/FP16'} peak, TFLOP/s (not the "
                       "2:4-sparsity headline)" + ("; required" if roof == "bf16" else ""), "peak")
       for roof in CUSTOM_ROOFS},
    "gpu-bandwidth": ("bandwidth_tbs", "memory bandwidth, TB/s; required", "bandwidth"),
    "gpu-memory": ("capacity_gb", "memory capacity as the datasheet prints it, GB; required", "capacity"),
    "gpu-link": ("link_gbs", "scale-up link (NVLink, ...), GB/s per direction per GPU", "link"),
    "gpu-node": ("max_node", "GPUs one scale-up domain joins", "node"),
    "gpu-reference": ("reference", "catalogue id whose datasheet roof is drawn beside it", None),
}


def custom_gpu_flags(p: argparse.ArgumentParser) -> None:
    """The ``--gpu-*`` flags of a GPU not in the catalogue, checked as the browser's form is
    (:func:`core.hardware.custom_accelerator` against :data:`core.hardware.CUSTOM_RANGES`)."""
    group = p.add_argument_group("a GPU not in the catalogue (its datasheet numbers)")
    for flag, (dest, what, row) in CUSTOM_GPU_FLAGS.items():
        accepted = f" ({CUSTOM_RANGES[row][0]:g} to {CUSTOM_RANGES[row][1]:g})" if row else ""
        group.add_argument(f"--{flag}", dest=f"custom_{dest}", metavar="NAME" if dest == "name" else "X",
                           help=what + accepted)


def custom_gpu_from_args(args: argparse.Namespace) -> tuple[Accelerator, list[str]] | None:
    """The accelerator the ``--gpu-*`` flags describe and its sparse-headline warnings, or None without them.

    Raises:
        OneLineError: a flag without ``--gpu-name``, with ``--gpu``, or a number that is not one or is out of
            range, naming the flag and what it accepts.
    """
    given = {dest: getattr(args, f"custom_{dest}") for dest, _, _ in CUSTOM_GPU_FLAGS.values()
             if getattr(args, f"custom_{dest}", None) is not None}
    if not given:
        return None
    if "name" not in given:
        raise OneLineError(f"--{next(f for f, v in CUSTOM_GPU_FLAGS.items() if v[0] in given)} needs --gpu-name: "
                           "a GPU not in the catalogue is given by its name and numbers")
    if getattr(args, "gpu", None) is not None:
        raise OneLineError("--gpu and --gpu-name: give a catalogue GPU or your own, not both")
    values: dict = {}
    for flag, (dest, _, row) in CUSTOM_GPU_FLAGS.items():
        if dest not in given:
            continue
        if row is None:
            values[dest] = given[dest]
            continue
        try:
            number = float(given[dest])
        except ValueError:
            raise OneLineError(f"--{flag} {given[dest]!r}: not a number; accepted: {CUSTOM_RANGES[row][0]:g} to "
                               f"{CUSTOM_RANGES[row][1]:g}") from None
        values[dest] = int(number) if row == "node" and number.is_integer() else number
    try:
        gpu = custom_accelerator(values.pop("name"), bandwidth_tbs=values.pop("bandwidth_tbs", None),
                                 capacity_gb=values.pop("capacity_gb", None), **values)
    except CustomAcceleratorError as exc:  # it names its argument: the flag is that argument's (or the name's)
        flag = next((f for f, (dest, _, _) in CUSTOM_GPU_FLAGS.items() if dest == exc.field), "gpu-name")
        raise OneLineError(f"--{flag}: {exc}") from None
    return gpu, [*sparse_warnings(gpu), *peak_order_warnings(gpu)]


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m core", description="Roofline Lab: decode and prefill on the roofline.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    ex = sub.add_parser("explain", help="step-by-step derivation of one scenario")
    scenario_flags(ex)
    custom_gpu_flags(ex)
    config_flag(ex)
    ex.add_argument("--json", action="store_true", help="print one JSON object (SI units)")
    expected.add_cli_arguments(ex)
    ls = sub.add_parser("list", help="catalogue ids")
    ls.add_argument("--verbose", "-v", action="store_true",
                    help="each GPU's dense peaks, bandwidth, capacity and link; each model's parameters")
    ls.add_argument("--json", action="store_true", help="the --verbose rows as one JSON object (SI units)")
    va = sub.add_parser("validate", help="published measurements against the ceiling and the expected step")
    va.add_argument("--no-loo", action="store_true",
                    help="skip the calibration set's leave-one-out refits (a few seconds)")
    va.add_argument("--json", action="store_true", help="print one JSON object (SI units; ratios of speeds)")
    me = sub.add_parser("measure", help="measure this machine's roofline (bandwidth and matmul), ~30 s")
    me.add_argument("--seconds", type=float, default=30.0, help="time budget in seconds (default 30)")
    me.add_argument("--out", metavar="PATH", help="also write the accelerator as JSON (the lab's custom-GPU form)")
    me.add_argument("--datasheet", metavar="GPU", help="catalogue id whose datasheet roof to draw beside the "
                                                       "measured one (default: the one the device's name names)")
    add_serving_commands(sub)  # ladder, batching, paging, disaggregation, context-parallel, training-memory
    return parser


#: The precisions of the GPU table's dense-peak columns, in order.
LIST_ROOFS = ("bf16", "fp8", "int8", "fp4", "fp32")


def catalogue_text(verbose: bool = False) -> str:
    """``python -m core list``: the catalogue's ids, or with ``verbose`` one row per GPU and per model.

    A GPU's row: dense peak per precision in TFLOP/s (INT8 in TOP/s; "—" where the datasheet prints none; never
    the 2:4-sparsity headline), HBM bandwidth (TB/s), the BF16 ridge point P_peak/BW (FLOP/byte), capacity as the
    datasheet prints it and as the lab reads it by default (GiB), the scale-up link per direction.  A model's row:
    parameters and, for MoE, those active per token (billions, from its config.json), layers, KV per token at
    BF16 with GQA (KiB) and trained context.
    """
    if not verbose:
        return "GPUs:   " + ", ".join(load_catalogue()) + "\nmodels: " + ", ".join(load_models())
    listed = catalogue_json()

    def peak(g: dict, roof: str) -> str:
        return fmt_sig(g["dense_flop_per_s"][roof] / 1e12) if roof in g["dense_flop_per_s"] else "—"

    # The 16-bit roof is BF16's, or FP16's on a part with no BF16 (the catalogue's sixteen_bit: Volta).
    fp16_only = [g.id for g in load_catalogue().values() if g.sixteen_bit == "FP16"]
    rows = ["GPUs: dense peaks in TFLOP/s (INT8 in TOP/s), not the 2:4-sparsity headline; HBM bandwidth; ridge "
            "point P_peak(16-bit) / BW; capacity as printed → as the lab reads it; scale-up link per direction; "
            f"16-bit: BF16, or FP16 where a part has no BF16 ({', '.join(fp16_only)})",
            f"{'id':<16}" + "".join(f"{'16-bit' if r == 'bf16' else r.upper():>8}" for r in LIST_ROOFS)
            + f"{'HBM TB/s':>10}{'ridge':>7}  {'memory':<28}{'link':>10}  name"]
    for g in listed["gpus"]:
        printed, link = g["memory_as_printed"], g["link_bytes_per_s_per_direction"]
        memory = f"{printed['value']:g} {printed['unit']} {printed['type']} → {fmt_bytes_gib(g['capacity_bytes'])}"
        rows.append(f"{g['id']:<16}" + "".join(f"{peak(g, r):>8}" for r in LIST_ROOFS)
                    + f"{fmt_sig(g['hbm_bandwidth'] / 1e12):>10}{g['ridge_point_bf16']:>7,.0f}  "
                    f"{memory:<28}{(fmt_sig(link / 1e9) + ' GB/s') if link else '—':>10}  {g['name']}")
    rows += ["", "models: parameters in billions (active per token, MoE), layers, KV per token at BF16 with GQA "
                 "(KiB), trained context (tokens)",
             f"{'id':<20}{'params':>9}{'active':>9}{'layers':>8}{'KV KiB':>8}{'context':>12}  name"]
    for m in listed["models"]:
        active = f"{m['active_params'] / 1e9:,.2f}" if m["active_params"] is not None else "—"
        rows.append(f"{m['id']:<20}{m['params'] / 1e9:>9,.2f}{active:>9}{m['layers']:>8}"
                    f"{fmt_sig(m['kv_bytes_per_token_bf16_gqa'] / KiB):>8}{m['trained_context'] or 0:>12,}  "
                    f"{m['name']}")
    return "\n".join(rows)


def catalogue_json() -> dict:
    """``python -m core list --json``: one object per GPU and per model in SI units (FLOP/s, INT8 in OP/s,
    bytes/s, bytes, FLOP/byte); ``list --verbose`` prints these rows (:func:`catalogue_text`)."""
    convention = LEVERS["capacity_convention"].parameter.default
    gpus = [{"id": g.id, "name": g.name, "dense_flop_per_s": dict(g.dense_flop_per_s), "hbm_bandwidth": g.hbm_bandwidth,
             "ridge_point_bf16": g.dense_flop_per_s["bf16"] / g.hbm_bandwidth,
             "memory_as_printed": {"value": g.memory_datasheet_value, "unit": g.memory_datasheet_unit,
                                   "type": g.memory_type},
             "capacity_bytes": g.capacity_bytes(convention), "capacity_convention": convention,
             "link_bytes_per_s_per_direction": g.interconnect.per_direction_bandwidth if g.interconnect else None}
            for g in load_catalogue().values()]
    models = [{"id": m.id, "name": m.name, "params": m.n_params, "active_params": m.n_active_params if m.moe else None,
               "layers": m.n_layers, "kv_bytes_per_token_bf16_gqa": m.kv_bytes_per_token(2.0, True),
               "trained_context": m.max_context} for m in load_models().values()]
    return {"gpus": gpus, "models": models}


def config_flag(p: argparse.ArgumentParser) -> None:
    """``--config PATH``: a Hugging Face config.json instead of ``--model`` (:func:`add_config_model`)."""
    p.add_argument("--config", metavar="PATH", help="a Hugging Face config.json to use instead of --model")


def add_config_model(scenario: Scenario, args: argparse.Namespace) -> None:
    """With ``--config``, the file's model joins ``scenario``'s catalogue and is selected: the bring-your-own tab's
    mechanism (a quantised checkpoint selects its precision, unless ``--weight-dtype`` was given).

    Raises:
        OneLineError: unreadable file or a config that cannot be understood (:func:`model_from_file`).
    """
    if not getattr(args, "config", None):
        return
    model = model_from_file(args.config)
    if getattr(args, "model", None) is not None:  # said, not dropped in silence (an attacker's trial)
        print(f"warning: --model {printable(one_line(str(args.model)))[:40]} is replaced by --config's model "
              f"({printable(one_line(model.name))[:60]})", file=sys.stderr)
    scenario.add_model(model)
    if args.weight_dtype is not None:
        scenario.weight_dtype = LEVERS["weight_dtype"].decode(args.weight_dtype)


def scenario_from_args(args: argparse.Namespace) -> Scenario:
    """A :class:`Scenario` from parsed flags (levers not given keep the table's defaults).

    Raises:
        OneLineError: an unknown id or an out-of-range value, naming the flag and
            what it accepts (the permalink's validation: :meth:`core.levers.Lever.decode`).
    """
    levers = {}
    for lever in LEVERS:
        text = getattr(args, lever.name, None)
        if text is None:
            continue
        try:
            levers[lever.name] = lever.decode(text)
        except ValueError as exc:
            raise OneLineError(f"--{exc}") from None
    return Scenario(**levers)


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command == "measure":
            return _measure(args)
        if args.command == "validate":
            from .published import validation_json, validation_text
            print(json.dumps(validation_json(loo=not args.no_loo), indent=2, allow_nan=False) if args.json
                  else validation_text(loo=not args.no_loo))
            return 0
        if args.command in SERVING_COMMANDS:
            print(run_serving(args))
            return 0
        if args.command == "list":
            print(json.dumps(catalogue_json(), indent=2, allow_nan=False) if args.json
                  else catalogue_text(args.verbose))
            return 0
        scenario = scenario_from_args(args)
        custom = custom_gpu_from_args(args)
        if custom:
            scenario.add_gpu(custom[0])
        add_config_model(scenario, args)
        result = scenario.evaluate()
        expected_step = expected.from_cli(scenario, args, result)
        if args.json:
            out = scenario_json(result, expected_step)  # its gpu_warnings too, as the Export tab's JSON
            text = json.dumps(out, indent=2, allow_nan=False)  # strict JSON: never Infinity or NaN
        else:
            text = printable(explain(result) + "\n\n" + expected.waterfall_text(
                expected_step, fits=result.fits, beyond=beyond_text(beyond_calibration(result, expected_step.engine)),
                approximate=bool(result.model.unmodelled)))
        for warning in (custom[1] if custom else []):  # the browser form's 2:4-sparsity check, on stderr
            print(f"warning: {printable(one_line(warning))}", file=sys.stderr)
    except (OneLineError, ValueError) as exc:
        print(f"error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    print(text)
    return 0


def _measure(args: argparse.Namespace) -> int:
    if not (2 <= args.seconds <= 600):
        # Below ~2 s a cold run can report a fraction of the real bandwidth.
        raise OneLineError(f"--seconds {args.seconds}: out of range; accepted: 2 to 600")
    if args.datasheet:
        get_accelerator(args.datasheet)  # refuse an unknown id before measuring
    roofs = measure(args.seconds)
    gpu = custom_accelerator(f"This machine: {roofs.device}"[:60], bandwidth_tbs=roofs.bandwidth / 1e12,
                             capacity_gib=max(roofs.memory_bytes, GiB) / GiB, bf16=roofs.flops / 1e12,
                             reference=args.datasheet or catalogue_match(roofs.device), measured=True)
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
        print(one_line(f"wrote {args.out}"))
    return 0


def model_from_file(path: str) -> ModelSpec:
    """A model from a ``config.json`` on disk, named and given its id as the lab names a config dropped on Bring
    your own (:func:`core.config_reader.config_name`, :func:`core.config_reader.config_model_id`).

    Raises:
        OneLineError: unreadable file or a config that cannot be understood.
    """
    p = Path(path)
    try:
        if stat.S_ISFIFO(p.stat().st_mode):  # opening one waits for a writer: a trial's command hung until killed
            raise OneLineError(f"--config {path}: a named pipe, not a file")
        with p.open("rb") as f:  # never more than the limit and one byte: /dev/zero is a file too
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise OneLineError(f"--config {path}: {exc.strerror}") from None
    try:
        config = parse_config_text(data)
        name = config_name(config, p.name)
        return from_hf_config(config, model_id=config_model_id(name), name=name)
    except ConfigError as exc:
        raise OneLineError(f"--config {path}: {exc}") from None
