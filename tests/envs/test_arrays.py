"""The ``arrays`` family (arrays_subsequences.py, arrays_partitions.py): hand-computed
verdicts with their exact partial credit, brute-force cross-checks, and the self-check."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.envs.helpers import reward, verdict
from verirl.envs import get_env
from verirl.envs.arrays_subsequences import best_k_nonadjacent
from verirl.envs.selfcheck import self_check

SUBSEQUENCE_NAMES = [
    "max_non_adjacent_k_element_sum",
    "longest_max_diff_bounded_interval",
    "lis_lds_concatenation",
    "maximum_lexicographical_order_subsequence",
    "max_permutation",
    "monotonic_stack",
]


@pytest.mark.parametrize("name", SUBSEQUENCE_NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_max_non_adjacent_k_element_sum() -> None:
    data = {"values": [5, 1, 1, 5], "k": 2}
    assert verdict("max_non_adjacent_k_element_sum", "0 3", **data).correct
    assert verdict("max_non_adjacent_k_element_sum", "\\{3, 0\\}", **data).correct
    assert reward("max_non_adjacent_k_element_sum", "0 2", **data) == pytest.approx(0.6**5)
    assert reward("max_non_adjacent_k_element_sum", "0 1", **data) == -0.5  # adjacent
    assert reward("max_non_adjacent_k_element_sum", "0", **data) == -0.5  # one index
    rng = random.Random(1)
    for _ in range(100):
        values = [rng.randint(1, 9) for _ in range(rng.randint(1, 9))]
        k = rng.randint(1, 5)
        sums = [
            sum(values[i] for i in c)
            for c in itertools.combinations(range(len(values)), k)
            if all(b - a >= 2 for a, b in itertools.pairwise(c))
        ]
        assert best_k_nonadjacent(values, k) == (max(sums) if sums else None)


def test_longest_max_diff_bounded_interval() -> None:
    data = {"values": [0, 1, 6], "k": 1}
    assert verdict("longest_max_diff_bounded_interval", "0 1", **data).correct
    assert reward("longest_max_diff_bounded_interval", "2 2", **data) == pytest.approx(0.5**5)
    assert reward("longest_max_diff_bounded_interval", "1 2", **data) == -0.5  # spread 5
    assert reward("longest_max_diff_bounded_interval", "1 0", **data) == -0.5


def test_lis_lds_concatenation() -> None:
    data = {"values": [9, 4, 2, 6, 3]}  # longest rise-then-fall: 3 (9 4 2, 4 6 3, ...)
    for answer in ("0 1 2", "1 3 4", "0 3 4"):
        assert verdict("lis_lds_concatenation", answer, **data).correct
    assert reward("lis_lds_concatenation", "1 3", **data) == pytest.approx((2 / 3) ** 5)
    assert reward("lis_lds_concatenation", "1 2 3", **data) == -0.5  # 4 2 6 falls then rises
    assert reward("lis_lds_concatenation", "1 1", **data) == -0.5


def test_maximum_lexicographical_order_subsequence() -> None:
    data = {"values": [1, 3, 2], "k": 2}
    name = "maximum_lexicographical_order_subsequence"
    assert verdict(name, "3 2", **data).correct
    assert reward(name, "1 2", **data) == pytest.approx(0.5**5)  # last value matches
    assert reward(name, "2 3", **data) == -0.5  # not a subsequence
    assert reward(name, "3", **data) == -0.5


def test_max_permutation() -> None:
    data = {"values": [9, 7, 99]}
    assert verdict("max_permutation", "0 2 1", **data).correct  # 9 99 7
    assert verdict("max_permutation", "2 0 1", **data).correct  # 99 9 7, the same number
    assert reward("max_permutation", "1 0 2", **data) == pytest.approx((7999 / 9997) ** 5)
    assert reward("max_permutation", "0 2", **data) == -0.5


def test_monotonic_stack() -> None:
    data = {"values": [4, 2, 4, 3]}
    assert verdict("monotonic_stack", "0 3 0 0", **data).correct
    assert reward("monotonic_stack", "0 3 0 4", **data) == 0.0
    assert reward("monotonic_stack", "0 3 0", **data) == -0.5
