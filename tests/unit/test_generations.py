"""Generations and the memory wall: article 000's ridge points and growth rates."""

import numpy as np
import pytest

from core.generations import (
    ARTICLE_WORKLOADS,
    GHOLAMI_RATES_PER_2Y,
    MEMORY_WALL_TIMELINE,
    bound_by_generation,
    catalogue_trend,
    fitted_rate_per_2y,
    growth,
    ridge_growth_per_2y,
    ridge_points,
    sparse_headline,
)
from core.hardware import get_accelerator


def test_ridge_points_printed_in_article_000():
    # "ridge points marked at 139, 153, 295 and 281"; H200 "about 206".
    r = ridge_points(["v100", "a100-80gb", "h100-sxm", "b200", "h200"])
    assert [round(v) for v in r.values()] == [139, 153, 295, 281, 206]


def test_h200_has_43_percent_more_bandwidth_and_the_same_compute():
    h100, h200 = get_accelerator("h100-sxm"), get_accelerator("h200")
    assert h200.dense_flop_per_s == h100.dense_flop_per_s
    assert h200.hbm_bandwidth / h100.hbm_bandwidth - 1 == pytest.approx(0.43, abs=0.005)


def test_gholami_rates_and_what_they_compound_to():
    assert GHOLAMI_RATES_PER_2Y == {"peak FLOP/s": 3.0, "DRAM bandwidth": 1.6, "interconnect bandwidth": 1.4}
    assert ridge_growth_per_2y() == pytest.approx(1.875)
    # Over a decade (five two-year steps): 243× compute against 10.5× bandwidth and 5.4× interconnect.
    assert growth(3.0, 10) == pytest.approx(243)
    assert growth(1.6, 10) == pytest.approx(10.49, abs=0.01)
    assert growth(1.4, 10) == pytest.approx(5.38, abs=0.01)
    assert growth(3.0, 20) / growth(1.6, 20) == pytest.approx(1.875**10)


def test_fitted_rate_recovers_an_exact_series():
    years = [2010, 2012, 2014, 2016]
    assert fitted_rate_per_2y(years, [1, 3, 9, 27]) == pytest.approx(3.0)
    with pytest.raises(ValueError):
        fitted_rate_per_2y([2020, 2020], [1, 2])


def test_catalogue_trend_of_nvidia_flagships():
    t = catalogue_trend()
    assert list(t.years) == [2017, 2020, 2022, 2024, 2024]
    # Hand check of the fit's direction: compute outgrows bandwidth, which outgrows NVLink.
    assert t.rates["peak FLOP/s"] > t.rates["DRAM bandwidth"] > t.rates["interconnect bandwidth"] > 1
    # V100 -> B200: 18× compute, 8.9× bandwidth, 6× NVLink in seven years.
    assert t.peak_flop_per_s[-1] / t.peak_flop_per_s[0] == pytest.approx(18.0)
    assert t.dram_bandwidth[-1] / t.dram_bandwidth[0] == pytest.approx(8.89, abs=0.01)
    assert t.interconnect_bandwidth[-1] / t.interconnect_bandwidth[0] == pytest.approx(6.0)
    assert not np.isnan(t.interconnect_bandwidth).any()


def test_a_faster_gpu_makes_more_of_the_workload_memory_bound():
    # "workloads that were compute-bound on a V100 can be memory-bound on an H100"
    b = bound_by_generation(200)
    assert b["v100"] == "compute" and b["h100-sxm"] == "memory"
    # The article's four workloads: three sit on the diagonal on every generation.
    for name, i in ARTICLE_WORKLOADS.items():
        expected = "compute" if name == "training GEMM" else "memory"
        assert set(bound_by_generation(i).values()) == {expected}, name


def test_sparse_headline_doubles_the_ridge():
    s = sparse_headline("h100-sxm")
    assert round(s.dense_ridge) == 295 and round(s.sparse_ridge) == 591
    assert s.factor == pytest.approx(2.0, abs=0.001)
    # The article's "4,500 for B200 is the sparsity number".
    assert get_accelerator("b200").sparse_flop_per_s["bf16"] == 4.5e15
    with pytest.raises(ValueError, match="no 2:4"):
        sparse_headline("v100")


def test_memory_wall_timeline_from_the_article():
    years = [e.year for e in MEMORY_WALL_TIMELINE]
    assert years == sorted(years) and years[0] == 1995 and years[-1] == 2024
    assert 2009 in years and 2022 in years
    assert all(e.source for e in MEMORY_WALL_TIMELINE)
    assert "1.30×" in next(e.detail for e in MEMORY_WALL_TIMELINE if e.year == 2020)
