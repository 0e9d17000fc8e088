"""Digits that make printed arithmetic come out (core/units.py): each case worked by hand."""

import pytest

from core.units import (
    factor_digits,
    fmt_intensity,
    fmt_seconds,
    fmt_seconds_change,
    fmt_seconds_times,
    fmt_sig_whole,
    rate_terms,
    seconds_value,
    split_words,
    sum_digits,
)


def test_parts_take_the_decimals_that_make_them_add_to_their_total():
    assert sum_digits([7.746, 0.244]) == 2  # 7.7 + 0.2 = 7.9 beside 8.0; 7.75 + 0.24 = 7.99
    assert sum_digits([7.7, 0.2]) == 1
    assert sum_digits([38.9568, 12.1875, 3.0], 54.1443) == 4  # 38.96 + 12.19 + 3.00 = 54.15 beside 54.14
    assert sum_digits([1.006, 2.006], 3.012, digits=2) == 3  # 1.01 + 2.01 = 3.02 beside 3.01
    assert sum_digits([29.1834, 1.4216], 30.605, digits=2) == 3  # 29.18 + 1.42 = 30.60 beside 30.61 (a trial)
    assert sum_digits([1 / 3, 1 / 3, 1 / 3], 1.0, most=4) == 4  # never adds up: the most it tries


def test_a_factor_takes_the_decimals_that_make_its_product_print_right():
    assert factor_digits(0.20469, 32, 0.20469 * 32) == 4  # 0.205 × 32 = 6.56 beside 6.55; 0.2047 × 32 = 6.5504
    assert factor_digits(2.5, 1, 2.5) == 3
    assert factor_digits(1 / 3, 3, 1.0) == 3  # 0.333 × 3 = 0.999, printed 1.00
    assert factor_digits(1 / 3, 1000, 1000 / 3) == 5  # 0.33333 × 1000 = 333.33
    assert factor_digits(1 / 3, 1000, 1000 / 3, most=4) == 4  # none below 4 tried: the most


def test_a_time_taken_n_times_prints_a_product_that_multiplies_out():
    assert fmt_seconds_times(4, 0.0597475) == "4 × 59.75 ms = 239 ms"
    assert fmt_seconds_times(4, 0.0013792) == "4 × 1.3792 ms = 5.517 ms"  # 4 × 1.379 = 5.516
    assert fmt_seconds_times(4, 0.00100013) == "4 × 1.00013 ms = 4.001 ms"  # 1 and 1.0001 give 4 ms
    assert seconds_value("42.92 ms") == pytest.approx(0.04292) and seconds_value("2.49 µs") == pytest.approx(2.49e-6)
    with pytest.raises(ValueError, match="fmt_seconds"):
        seconds_value("42.92 parsecs")


def test_a_tokens_per_s_work_takes_the_digits_that_multiply_out():
    """gpt-oss-120b as stored on a B200, prefill of 8,192 (a step of 20.9075... ms, 391,821 tokens/s):
    "1 × 8,192 / 20.91 ms" is 391,774; 8,192 / 20.9075 ms is 391,821.  E takes digits too (8 × 2.53 / 7.3583 ms
    is 2,751 beside 2,754)."""
    assert rate_terms(1, 8192, 8192 / 391_821.3, whole=True) == ("8,192", "20.9075 ms")
    e = (1 - 0.7**4) / (1 - 0.7)  # 2.533
    assert rate_terms(8, e, 8 * e / 2753.9) == ("2.533", "7.3583 ms")
    assert rate_terms(56, 1.0, 0.0016) == ("1", "1.6 ms")  # exact at fmt_seconds' digits: nothing added
    assert rate_terms(1, 1.0, float("inf")) == ("1", fmt_seconds(float("inf")))  # nothing to divide: as before


def test_an_intensity_prints_whole_from_ten_thousand():
    assert fmt_intensity(295.3125) == "295.3" and fmt_intensity(9999.4) == "9,999"
    assert fmt_intensity(32768) == "32,768" and fmt_intensity(1830619.7) == "1,830,620"
    assert fmt_sig_whole(1_073_741_824 / 1024) == "1,048,576" and fmt_sig_whole(320.0) == "320"  # KiB a token


def test_a_step_that_changes_prints_ends_that_differ_by_the_change():
    # A trial: "the step goes 76.15 ms → 78.09 ms" beside a term of 1.945 ms (78.09 − 76.15 = 1.94).
    assert fmt_seconds_change(0.0761494, 0.0780944) == "76.149 ms → 78.094 ms"
    assert fmt_seconds_change(0.07615, 0.07809) == "76.15 ms → 78.09 ms"  # already differs by 1.94 ms
    assert fmt_seconds_change(0.0062578, 0.0065402) == "6.2578 ms → 6.5402 ms"  # 0.2824 ms, not 6.258 → 6.54
    assert fmt_seconds_change(1e-5, 2e-5) == "10 µs → 20 µs"
    assert fmt_seconds_change(9.99e-5, 1.01e-4) == "99.9 µs → 0.101 ms"  # two units: each end as fmt_seconds
    for a, b in ((0.0123456, 0.0128765), (0.245, 0.2449), (0.031415, 0.027182)):
        ends = [float(e.split()[0]) * 1e-3 for e in fmt_seconds_change(a, b).split(" → ")]
        assert fmt_seconds(abs(ends[1] - ends[0])) == fmt_seconds(abs(b - a))


def test_a_split_is_named_as_the_lab_names_it():
    assert split_words(8) == "TP = 8" and split_words(2, 1) == "TP = 2" and split_words(8, 4) == "TP = 8, PP = 4"


@pytest.mark.parametrize(("value", "whole"), [(1.0, 0.0), (1.0, -2.0), (float("nan"), 3.0), (1.0, float("inf"))])
def test_a_share_of_nothing_or_of_no_number_is_refused(value, whole):
    from core.units import fmt_share

    with pytest.raises(ValueError, match="no share"):
        fmt_share(value, whole)
