"""Measured points (MBU, MFU, gap) and this machine's roofline."""

import pytest

from core import Scenario
from core.cli import main
from core.measure import measure_numpy
from core.measurements import Measurement, analyse, parse_measurements


def test_parse_measurements_reads_rows_and_names_bad_ones():
    rows, problems = parse_measurements("Batch,Context,tokens/s\n1,128,150\n56,8192,2000\n0,5,5\n2,10,nan\n")
    assert rows == [Measurement(1, 128, 150.0), Measurement(56, 8192, 2000.0)]
    assert len(problems) == 2 and problems[0].startswith("row 4:")
    assert parse_measurements("x,y\n1,2\n")[1] == ["the header must name batch, context, tokens_per_s (got: x, y)"]


def test_mbu_and_mfu_of_a_measured_point_by_hand():
    # Llama-3-8B, H100, batch 1, 128 tokens of context, 150 tokens/s measured (article 000: 130-180).
    s = Scenario(model="llama-3-8b")
    (p,) = analyse(s.levers(), [Measurement(1, 128, 150.0)], s.resolve_model, s.resolve_gpu)
    bytes_per_step = 8_030_261_248 * 2 + 128 * 131_072
    assert p.achieved_bandwidth == pytest.approx(bytes_per_step * 150)
    assert p.mbu == pytest.approx(bytes_per_step * 150 / 3.35e12)
    assert round(100 * p.mbu) == 72
    assert p.mfu == pytest.approx(2 * 8_030_261_248 * 150 / 989.4e12)
    assert p.gap == pytest.approx(p.ceiling_tokens_per_s / 150) and round(p.ceiling_tokens_per_s) == 208


def test_measure_numpy_gives_positive_roofs_within_its_budget():
    roofs = measure_numpy(seconds=0.4, copy_bytes=8 * 2**20, n=128)
    assert roofs.flops > 1e8 and roofs.bandwidth > 1e8 and roofs.memory_bytes > 1e9


def test_measure_command_refuses_a_silly_budget(capsys):
    assert main(["measure", "--seconds", "0.1"]) == 2
    assert "--seconds 0.1: out of range; accepted: 0.5 to 600" in capsys.readouterr().err
