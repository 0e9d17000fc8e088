"""Measured points (MBU, MFU, gap) and this machine's roofline."""

import json
import math
import sys
import time
import types

import pytest

from core import Scenario, machine_roofs
from core.cli import main
from core.machine_roofs import measure_numpy
from core.measured_points import Measurement, analyse, parse_measurements


def test_parse_measurements_reads_rows_and_names_bad_ones():
    rows, problems = parse_measurements("Batch,Context,tokens/s\n1,128,150\n56,8192,2000\n0,5,5\n2,10,nan\n")
    assert rows == [Measurement(1, 128, 150.0), Measurement(56, 8192, 2000.0)]
    assert len(problems) == 2 and problems[0].startswith("row 4:")
    assert parse_measurements("x,y\n1,2\n")[1] == ["the header must name batch, context, tokens_per_s (got: x, y)"]


def test_a_row_with_more_fields_than_the_header_is_refused():
    """``1,1,1,1`` under a three-column header was read as batch 1, context 1, 1 tokens/s with the fourth field
    dropped in silence (found by a trial); a column the header names but the lab does not read is fine."""
    rows, problems = parse_measurements("batch,context,tokens_per_s\n1,1,1,1\n4,2048,500\n")
    assert rows == [Measurement(4, 2048, 500.0)]
    assert problems == ["row 2: 4 fields, but the header names 3; the row is not read"]
    rows, problems = parse_measurements("batch,context,tokens_per_s,notes\n4,2048,500,vLLM 0.6\n")
    assert rows == [Measurement(4, 2048, 500.0)] and problems == []


def test_mbu_and_mfu_of_a_measured_point_by_hand():
    # Llama-3-8B, H100, batch 1, 128 tokens of context, 150 tokens/s measured (article 000: 130-180).
    s = Scenario(model="llama-3-8b")
    (p,) = analyse(s, [Measurement(1, 128, 150.0)])
    bytes_per_step = 8_030_261_248 * 2 + 128 * 131_072
    assert p.achieved_bandwidth == pytest.approx(bytes_per_step * 150)
    assert p.mbu == pytest.approx(bytes_per_step * 150 / 3.35e12)
    assert round(100 * p.mbu) == 72
    # MFU counts every FLOP of the step: the weights' 2·N and attention's 4·h_q·d_head·S·L.
    assert p.mfu == pytest.approx((2 * 8_030_261_248 + 4 * 32 * 128 * 128 * 32) * 150 / 989.4e12)
    assert p.gap == pytest.approx(p.ceiling_tokens_per_s / 150) and round(p.ceiling_tokens_per_s) == 208


def test_measure_numpy_gives_finite_positive_roofs_within_its_budget():
    """What holds on any machine, however loaded: positive, finite roofs, and about the time it was given."""
    began = time.perf_counter()
    roofs = measure_numpy(seconds=0.4, copy_bytes=8 * 2**20, n=128)
    assert 0 < roofs.flops < math.inf and 0 < roofs.bandwidth < math.inf and roofs.memory_bytes > 0
    assert (roofs.device, roofs.flops_kind) == ("CPU (NumPy)", "FP32 matmul")
    assert time.perf_counter() - began < 0.4 + 5  # the budget, plus a last repetition and the set-up


def test_the_best_repetition_is_the_rate(monkeypatch):
    """STREAM's rule: work over the fastest repetition, repeated until the budget is spent (a clock that
    advances 3, 1 and 2 seconds for three runs: 10 units of work at best 10 per second, after three runs)."""
    # began; then per run: its start, its end, the time elapsed, the progress bar
    clock = iter([0.0, 0.0, 3.0, 3.0, 3.0, 3.0, 4.0, 4.0, 4.0, 4.0, 6.0, 6.0, 6.0])
    monkeypatch.setattr(machine_roofs.time, "perf_counter", lambda: next(clock))
    runs = []
    assert machine_roofs._best_rate(10.0, lambda: runs.append(1), budget_s=5.0, start=0.0, total_s=10.0,
                                    label="test") == 10.0
    assert len(runs) == 3


def test_the_gpu_matmul_multiplies_random_operands(monkeypatch):
    """On an H200 the command read 869 TFLOP/s multiplying ones and 782 multiplying random data (constant
    operands toggle fewer bits and hold higher clocks; core/h200_roofline.json): the timed product must be of
    random data. A stand-in ``torch`` records what each operand was made by."""
    class Tensor:
        def __init__(self, maker):
            self.maker = maker

        def numel(self):
            return 2**28

        def copy_(self, other):
            return self

        def __matmul__(self, other):
            products.append((self.maker, other.maker))
            return Tensor("matmul")

    products = []
    fake = types.SimpleNamespace(
        float32="float32", bfloat16="bfloat16",
        ones=lambda *a, **k: Tensor("ones"), randn=lambda *a, **k: Tensor("randn"),
        rand=lambda *a, **k: Tensor("rand"), empty_like=lambda t: Tensor("empty"),
        cuda=types.SimpleNamespace(is_available=lambda: True, synchronize=lambda: None,
                                   get_device_name=lambda: "NVIDIA H200",
                                   get_device_properties=lambda i: types.SimpleNamespace(total_memory=141e9)),
    )
    monkeypatch.setitem(sys.modules, "torch", fake)
    monkeypatch.setattr(machine_roofs, "_progress", lambda *a, **k: None)
    roofs = machine_roofs.measure_torch(seconds=0.01, n=8)
    assert roofs.device == "NVIDIA H200" and roofs.flops_kind == "BF16 matmul"
    assert products and set(products) == {("randn", "randn")}


def test_measure_command_refuses_a_silly_budget(capsys):
    assert main(["measure", "--seconds", "0.1"]) == 2
    assert "--seconds 0.1: out of range; accepted: 2 to 600" in capsys.readouterr().err


def test_device_names_find_their_datasheet():
    from core.hardware import catalogue_match

    assert catalogue_match("NVIDIA H200") == "h200"
    assert catalogue_match("NVIDIA H100 PCIe") == "h100-pcie"
    assert catalogue_match("NVIDIA A100-SXM4-40GB") == "a100-40gb"
    assert catalogue_match("NVIDIA L4") == "l4" and catalogue_match("NVIDIA L40S") == "l40s"
    assert catalogue_match("CPU (NumPy)") is None


def test_a_measured_part_is_drawn_beside_its_datasheet():
    from app.lab import Lab
    from core.hardware import custom_accelerator

    measured = custom_accelerator("This machine: NVIDIA H200", bandwidth_tbs=4.1, capacity_gb=141, bf16=720,
                                  reference="h200")
    lab = Lab()
    lab.scenario.add_gpu(measured)
    ref = lab.roofline.reference.data
    assert ref["label"][0] == "datasheet: NVIDIA H200 SXM 141GB"
    assert ref["y"][1] == 989.4  # the datasheet's dense BF16 roof, TFLOP/s, beside the measured 720
    assert round(lab.result.ridge_point) == round(720 / 4.1)
    assert "reference" in lab.link.address.query or "%22reference%22" in lab.link.address.query


@pytest.mark.parametrize("tokens_per_s", ["5e-324", "1e-300", "0.0009", "1e10"])
def test_an_implausible_throughput_is_refused_with_the_range(tokens_per_s):
    """Issue 31, F5: a tiny but positive tokens/s (5e-324) gave a gap of "inf×" (a 400-digit one at 1e-300) and a
    point at y = 0 on the log axis."""
    rows, problems = parse_measurements(f"batch,context,tokens_per_s\n4,2048,{tokens_per_s}\n4,2048,500\n")
    assert rows == [Measurement(4, 2048, 500.0)]
    assert problems == [f"row 2: tokens/s={tokens_per_s!r} is not a number from 0.001 to 1e+09"]


@pytest.mark.parametrize("kwargs, field", [
    ({"batch": 4, "context": 2048, "tokens_per_s": 5e-324}, "tokens/s"),
    ({"batch": 4, "context": 2048, "tokens_per_s": float("inf")}, "tokens/s"),
    ({"batch": 0, "context": 2048, "tokens_per_s": 100.0}, "batch"),
    ({"batch": 4, "context": 10**12, "tokens_per_s": 100.0}, "context"),
    ({"batch": 4.5, "context": 2048, "tokens_per_s": 100.0}, "batch"),
    ({"batch": True, "context": 2048, "tokens_per_s": 100.0}, "batch"),
])
def test_a_measurement_outside_the_plausible_ranges_cannot_be_made(kwargs, field):
    with pytest.raises(ValueError, match=f"^{field}="):
        Measurement(**kwargs)


def test_the_slowest_plausible_measurement_is_finite_and_on_the_log_axis():
    from app.byo_view import BringYourOwnView
    from app.state import LabState

    state = LabState()
    view = BringYourOwnView(state=state)
    view.csv_text.value = "batch,context,tokens_per_s\n4096,2048,0.001\n1,1,1e9\n"
    view._plot()
    slow, fast = state.measured
    assert 0 < slow.achieved_flop_per_s and 0 < slow.achieved_bandwidth and 0 < slow.mbu < 1e-6
    assert slow.gap == pytest.approx(slow.ceiling_tokens_per_s / 0.001) and fast.above_roof
    report = view.measured_report.object
    assert "inf" not in report and "<td>0.001</td>" in report and "×</td>" in report


def test_a_measured_part_travels_as_measured_and_loses_no_fraction_twice(monkeypatch, capsys):
    """A trial of the H200 page's link: the measured H200 (4.17 TB/s copy, 782 TFLOP/s matrix product) got the
    default fractions taken off again (0.9 of its bandwidth, 0.75 of its BF16 roof), an expected gpt-fast step of
    5.37 ms against the 4.81-5.04 ms the same step measured compiled on that GPU. ``measure`` marks its part
    measured; the link carries it; the expected step takes nothing off a measured bandwidth or BF16 roof."""
    from urllib.parse import parse_qs, urlsplit

    from core import cli
    from core.expected import expected_for_scenario
    from core.machine_roofs import Roofs
    from core.permalink import from_query

    roofs = Roofs("NVIDIA H200", 781.5275897115638e12, 4.166651108484392e12, "BF16 matmul", 150_109_880_320.0)
    monkeypatch.setattr(cli, "measure", lambda seconds: roofs)
    assert main(["measure", "--seconds", "2"]) == 0
    link = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("open it in the lab"))
    query = parse_qs(urlsplit(link.split(": ", 1)[1]).query)
    assert '"measured":true' in query["custom-gpu"][0]
    link_state = from_query(query)
    assert link_state.notices == [] and link_state.custom_gpu.measured
    scenario = Scenario(model="llama-3-8b", context=1024)
    scenario.add_gpu(link_state.custom_gpu)
    e = expected_for_scenario(scenario, "gpt-fast")
    params = {c: getattr(e.parameters, c) for c in ("stream_fraction", "gemm_fraction")}
    assert all(p.value == 1.0 and "measured on the machine" in p.source for p in params.values())
    assert 4.806e-3 * 0.95 < e.expected_step_time_s < 5.037e-3 * 1.05  # core/h200_roofline.json's compiled step


@pytest.mark.parametrize("value", ["true", 1, None, [True]])
def test_a_measured_flag_that_is_not_a_boolean_is_refused_by_name(value):
    from core.hardware import custom_accelerator

    with pytest.raises(ValueError, match="measured must be true or false"):
        custom_accelerator("x", bandwidth_tbs=1.0, capacity_gb=80, bf16=100, measured=value)


def test_a_measured_capacity_has_one_reading():
    """A trial: the measured H200's 139.8 (GiB, as the device reports) was read as 139.8e9 bytes under the decimal
    convention and called "the datasheet's"; a measured capacity is GiB under either convention, and says so."""
    from core.explain import quantities
    from core.hardware import custom_accelerator

    gpu = custom_accelerator("This machine: NVIDIA H200", bandwidth_tbs=4.17, capacity_gb=139.8, bf16=781.5,
                             reference="h200", measured=True)
    for convention in ("binary", "decimal"):
        s = Scenario(capacity_convention=convention)
        s.add_gpu(gpu)
        r = s.evaluate()
        assert r.capacity_bytes == 139.8 * 2**30
        assert quantities(r)["capacity"].work == ("139.8 GiB measured on the machine -> 139.80 GiB "
                                                  "(in GiB already: one reading)")


def test_a_measured_capacity_is_written_in_gib_under_a_gib_name():
    """A researcher's trial: ``measure --out`` wrote ``"capacity_gb": 23.54`` for 25.28 GB (23.54 GiB), a GiB value
    under a GB name.  The form and the link now say ``capacity_gib``; a link written before still opens as GiB."""
    from core.hardware import accelerator_form, custom_accelerator
    from core.permalink import from_query

    gpu = custom_accelerator("This machine: X", bandwidth_tbs=0.02, capacity_gib=23.54, bf16=0.5, measured=True)
    form = accelerator_form(gpu)
    assert form["capacity_gib"] == 23.54 and "capacity_gb" not in form
    assert accelerator_form(custom_accelerator("H20", bandwidth_tbs=4, capacity_gb=96, bf16=148))["capacity_gb"] == 96
    old = {key: value for key, value in form.items() if key != "capacity_gib"} | {"capacity_gb": 23.54}  # before
    for f in (form, old):
        state = from_query({"custom-gpu": [json.dumps(f)], "gpu": [gpu.id], "capacity": ["decimal"]})
        assert state.notices == [] and state.custom_gpus[0].capacity_bytes("decimal") == 23.54 * 2**30
    with pytest.raises(ValueError, match="capacity_gb .* or capacity_gib, not both"):
        custom_accelerator("x", bandwidth_tbs=1, capacity_gb=80, capacity_gib=74.5, bf16=100)


def test_a_byte_order_mark_is_not_part_of_the_first_columns_name():
    """A verifying trial: Excel's "CSV UTF-8" begins with a byte-order mark, and the CSV was refused as "the header
    must name batch (got: \ufeffbatch, …)", the mark invisible."""
    rows, problems = parse_measurements("\ufeffbatch,context,tokens_per_s\n1,2048,10\n")
    assert problems == [] and [(m.batch, m.context, m.tokens_per_s) for m in rows] == [(1, 2048, 10.0)]


@pytest.mark.parametrize("model, levers", [
    ("mixtral-8x7b", dict(tp=2)), ("gpt-oss-120b", dict(gpu="b200", weight_dtype="stored")),
    ("nemotron-h-56b", dict(pp=2)), ("deepseek-v3", dict(tp=8, gpu="h200", weight_dtype="fp8")),
    ("llama-3-70b", dict(kv_dtype="fp8", gqa=False)), ("llama-3-8b", dict(cuda_graphs=True, batch=7, spec_k=4)),
])
def test_measurements_are_set_against_the_roof_in_one_step_with_each_rows_own_evaluation(model, levers):
    """An attacker's trial pasted 1,000 rows: each lever move then evaluated the scenario 1,000 times on the shared
    event loop (1.15-1.5 s for every other student).  One step over every row's B and S gives each row's own
    evaluation exactly: MoE experts touched, a sliding window, a hybrid's state, PP stages, MLA, KV precision."""
    import random

    s = Scenario(model=model, **levers)
    rng = random.Random(7)
    rows = [Measurement(rng.choice([1, 3, 8, 56, 128, 1024]), rng.choice([1, 128, 4097, 8192, 131072]),
                        rng.uniform(10, 5000)) for _ in range(40)]
    for m, p in zip(rows, analyse(s, rows), strict=True):
        r = s.clone(phase="decode", spec_k=1, batch=m.batch, context=m.context).evaluate()
        steps = m.tokens_per_s / m.batch
        assert p.ceiling_tokens_per_s == r.tokens_per_s_with_kv and p.intensity == r.arithmetic_intensity_with_kv
        assert p.achieved_flop_per_s == r.flop_per_step * steps and p.achieved_bandwidth == r.bytes_per_step * steps
        assert p.fits == r.fits and p.mbu == r.bytes_per_step * steps / r.bandwidth
