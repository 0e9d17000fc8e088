"""Tile and wave quantisation: article 000's N = 257 and 133-block examples."""

import pytest

from core.waves import TILES, gemm_quantisation, padded, staircase, thread_blocks, waves

H100_PEAK = 989.4e12


def test_n_257_on_a_128_tile_does_the_work_of_384():
    assert padded(257, 128) == 384
    assert padded(256, 128) == 256


def test_133_blocks_on_132_sms_take_two_waves_and_twice_the_time():
    # Article 000: 133 thread blocks on an H100's 132 SMs run two waves and take twice as long
    # as 132, for 0.8 % more work.
    assert waves(132, 132) == 1 and waves(133, 132) == 2
    # 132 blocks: M = 132·128, N = 128; 133 blocks: M = 133·128.
    one = gemm_quantisation(132 * 128, 128, 4096, 128, 128, 132, H100_PEAK)
    two = gemm_quantisation(133 * 128, 128, 4096, 128, 128, 132, H100_PEAK)
    assert (one.blocks, one.waves, two.blocks, two.waves) == (132, 1, 133, 2)
    assert two.time_s / one.time_s == pytest.approx(2.0)
    assert two.useful_flop / one.useful_flop - 1 == pytest.approx(0.0076, abs=0.0001)  # 0.8 % more work
    assert one.efficiency == pytest.approx(1.0)
    assert two.efficiency == pytest.approx(133 / 264)


def test_thread_blocks_counts_tiles():
    assert thread_blocks(4096, 257, 128, 128) == 32 * 3
    assert thread_blocks(4096, 257, *TILES["256×128"]) == 16 * 3


def test_staircase_is_flat_within_a_tile_and_jumps_at_multiples_of_128():
    s = staircase(range(240, 401), 16896, 4096, 128, 128, 132, H100_PEAK)
    n = list(s["n"])
    eff = dict(zip(n, s["efficiency"], strict=True))
    # M = 132·128 fills exactly one wave per 128 columns: full efficiency at N = 256 and 384,
    # N = 257 drops to 257/384.
    assert eff[256] == pytest.approx(1.0) and eff[384] == pytest.approx(1.0)
    assert eff[257] == pytest.approx(257 / 384)
    assert list(s["waves"][[n.index(256), n.index(257), n.index(385)]]) == [2, 3, 4]
    # Executed work is a staircase: padded N constant between risers.
    assert set(s["padded_n"]) == {256, 384, 512}


def test_achieved_throughput_never_exceeds_peak():
    s = staircase(range(1, 600, 7), 4096, 4096, 128, 128, 132, H100_PEAK)
    assert (s["achieved_flop_per_s"] <= H100_PEAK * (1 + 1e-12)).all()


@pytest.mark.parametrize("bad", [0, -3, 2.5, float("nan"), "128", None, True])
def test_bad_shapes_are_refused(bad):
    with pytest.raises(ValueError):
        gemm_quantisation(bad, 128, 128, 128, 128, 132, H100_PEAK)


def test_sm_count_for_waves_says_when_it_assumes():
    from core.hardware import get_accelerator
    from core.waves import sm_count_for_waves

    assert sm_count_for_waves(get_accelerator("h100-sxm")) == (132, "")
    assert sm_count_for_waves(get_accelerator("mi300x")) == (304, "")
    n, note = sm_count_for_waves(get_accelerator("b200"))
    assert n == 132 and "no published SM count" in note
    n, note = sm_count_for_waves(get_accelerator("tpu-v5e"))
    assert n == 132 and "not a GPU" in note
