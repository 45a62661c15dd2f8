"""Benchmark statistics: Wilson and bootstrap intervals, pass@k, avg@k — hand-computed."""

from __future__ import annotations

import math

import pytest

from verirl.evals.stats import (
    Z95,
    bootstrap_interval,
    mean_estimate,
    pass_at_k,
    pass_at_k_estimate,
    summarize,
    wilson_interval,
)


def test_wilson_hand_computed() -> None:
    # 8 of 10 at z = 1.96: centre (0.8 + 0.19208) / 1.38415 = 0.71683,
    # half 1.96 * sqrt(0.016 + 0.0096040) / 1.38415 = 0.22657
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.49016, abs=1e-4)
    assert high == pytest.approx(0.94332, abs=1e-4)
    # the closed form at p̂ = 0: [0, z²/(n + z²)]
    low, high = wilson_interval(0, 20)
    assert low == 0.0
    assert high == pytest.approx(Z95**2 / (20 + Z95**2))
    low, high = wilson_interval(20, 20)
    assert high == 1.0 and low == pytest.approx(20 / (20 + Z95**2))
    # symmetric: k of n mirrors n-k of n
    a, b = wilson_interval(3, 17)
    c, d = wilson_interval(14, 17)
    assert a == pytest.approx(1 - d) and b == pytest.approx(1 - c)
    with pytest.raises(ValueError):
        wilson_interval(3, 2)
    with pytest.raises(ValueError):
        wilson_interval(0, 0)


def test_bootstrap_exact_distribution_of_two_problems() -> None:
    # values {0, 1}: resampled means are 0 (1/4), 0.5 (1/2), 1 (1/4): the 2.5% and 97.5%
    # quantiles are 0 and 1
    assert bootstrap_interval([0.0, 1.0]) == (0.0, 1.0)
    # identical values: no spread at all
    assert bootstrap_interval([0.25] * 7) == (0.25, 0.25)


def test_bootstrap_matches_the_normal_interval_for_many_problems() -> None:
    values = [1.0] * 300 + [0.0] * 700  # mean 0.3, se sqrt(0.21 / 1000)
    low, high = bootstrap_interval(values, seed=3)
    half = Z95 * math.sqrt(0.21 / 1000)
    assert low == pytest.approx(0.3 - half, abs=0.004)
    assert high == pytest.approx(0.3 + half, abs=0.004)
    assert bootstrap_interval(values, seed=3) == (low, high)  # seeded: reproducible


def test_pass_at_k_hand_computed() -> None:
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - 3 / 10)  # 1 - C(3,2)/C(5,2)
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - math.comb(7, 5) / math.comb(10, 5))
    assert pass_at_k(200, 13, 100) == pytest.approx(1 - math.comb(187, 100) / math.comb(200, 100))
    assert pass_at_k(4, 0, 2) == 0.0
    assert pass_at_k(4, 3, 2) == 1.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_one_sample_per_problem_is_a_wilson_proportion() -> None:
    est = mean_estimate([(1, 1)] * 8 + [(1, 0)] * 2)
    assert est.value == 0.8 and est.method == "wilson" and est.problems == 10
    assert (est.low, est.high) == pytest.approx(wilson_interval(8, 10))


def test_avg_and_pass_at_k_with_several_samples() -> None:
    counts = [(4, 4), (4, 2), (4, 0)]
    out = summarize(counts, ks=(1, 2, 4))
    assert list(out) == ["avg@4", "pass@1", "pass@2", "pass@4"]
    assert out["avg@4"].value == pytest.approx((1 + 0.5 + 0) / 3)
    assert out["pass@1"].value == out["avg@4"].value
    # pass@2 per problem: 1, 1 - C(2,2)/C(4,2) = 5/6, 0
    assert out["pass@2"].value == pytest.approx((1 + 5 / 6 + 0) / 3)
    assert out["pass@4"].value == pytest.approx(2 / 3)
    for est in out.values():
        assert est.method == "bootstrap"
        assert 0.0 <= est.low <= est.value <= est.high <= 1.0
    # a problem solved by every sample and one by none: the interval spans both ends
    assert pass_at_k_estimate([(2, 2), (2, 0)], 2).low == 0.0


def test_summarize_refuses_bad_counts() -> None:
    with pytest.raises(ValueError, match="same number of samples"):
        summarize([(2, 1), (3, 1)])
    with pytest.raises(ValueError, match="pass@4"):
        summarize([(2, 1)], ks=(4,))
    with pytest.raises(ValueError):
        summarize([])
    with pytest.raises(ValueError):
        summarize([(2, 3)])
