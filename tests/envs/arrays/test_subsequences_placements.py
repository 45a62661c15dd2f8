"""The ``arrays`` family (arrays_subsequences.py, arrays_partitions.py): hand-computed
verdicts with their exact partial credit, brute-force cross-checks, and the self-check."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.arrays.placements import _greedy_extension, distinct_subsequences
from verirl.envs.arrays.subsequences import best_k_nonadjacent
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


PARTITION_NAMES = [
    "max_mult_split",
    "minimum_max_slicer",
    "making_grade",
    "liz_lollipop",
    "min_swap_two_permutations",
    "k_partition",
]


@pytest.mark.parametrize("name", PARTITION_NAMES)
def test_self_check_partitions(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_family_is_registered() -> None:
    names = SUBSEQUENCE_NAMES + PARTITION_NAMES + ["maximum_subsequence_num", "palembang_bridges"]
    assert set(names) <= set(env_names(family="arrays"))


def test_max_mult_split() -> None:
    data = {"digits": "837", "k": 1}  # 83 · 7 = 581 beats 8 · 37 = 296
    assert verdict("max_mult_split", "2", **data).correct
    assert reward("max_mult_split", "1", **data) == pytest.approx((296 / 581) ** 3)
    assert reward("max_mult_split", "0", **data) == -0.5
    assert reward("max_mult_split", "1 2", **data) == -0.5


def test_minimum_max_slicer() -> None:
    data = {"values": [5, 1, 1, 2], "k": 3}  # 5 | 1 | 1 2 and 5 | 1 1 | 2 reach 5
    assert verdict("minimum_max_slicer", "1 2", **data).correct
    assert verdict("minimum_max_slicer", "3 1", **data).correct
    assert reward("minimum_max_slicer", "2 3", **data) == pytest.approx((5 / 6) ** 3)
    assert reward("minimum_max_slicer", "0 1", **data) == -0.5


def _brute_monotone(values: list[int]) -> int:
    levels = range(min(values), max(values) + 1)
    best = None
    for b in itertools.product(levels, repeat=len(values)):
        pairs = list(itertools.pairwise(b))
        if all(x <= y for x, y in pairs) or all(x >= y for x, y in pairs):
            cost = sum(abs(x - y) for x, y in zip(values, b, strict=True))
            best = cost if best is None else min(best, cost)
    return best


def test_making_grade() -> None:
    data = {"values": [4, 3, 1, 6]}  # 3 3 3 6 costs 1 + 0 + 2 + 0 = 3
    assert _brute_monotone(data["values"]) == 3
    assert verdict("making_grade", "3 3 3 6", **data).correct
    assert reward("making_grade", "4 4 4 6", **data) == pytest.approx((3 / 4) ** 5)
    assert reward("making_grade", "4 3 6 1", **data) == -0.5  # not monotone
    assert reward("making_grade", "3 3 3", **data) == -0.5
    env = get_env("making_grade")
    rng = random.Random(3)
    for _ in range(40):
        values = [rng.randint(0, 5) for _ in range(rng.randint(2, 5))]
        p = problem("making_grade", values=values)
        answer = env.solve(p)
        cost = sum(abs(a - int(b)) for a, b in zip(values, answer.split(), strict=True))
        assert cost == _brute_monotone(values)


def test_liz_lollipop() -> None:
    data = {"values": [1, 2, 2], "queries": [6, 2]}
    assert verdict("liz_lollipop", "-1 -1 2 2", **data).correct
    assert verdict("liz_lollipop", "-1 -1 3 3", **data).correct
    assert reward("liz_lollipop", "1 1 2 2", **data) == pytest.approx(0.5**5)
    assert reward("liz_lollipop", "2 2", **data) == -0.5


def test_min_swap_two_permutations() -> None:
    data = {"a": [3, 1, 1], "b": [2, 3, 2]}
    assert verdict("min_swap_two_permutations", "2", **data).correct
    # swapping 0 and 1 also works (A = 2 3 1, B = 3 1 2) but uses two swaps
    assert reward("min_swap_two_permutations", "0 1", **data) == pytest.approx(0.5**5)
    assert reward("min_swap_two_permutations", "0", **data) == -0.5
    env = get_env("min_swap_two_permutations")
    for seed in range(30):
        p = env.generate(2, seed)
        a, b = p.data["a"], p.data["b"]
        brute = min(
            len(s)
            for r in range(len(a) + 1)
            for s in itertools.combinations(range(len(a)), r)
            if sorted(b[i] if i in s else a[i] for i in range(len(a))) == sorted(set(a + b))
            and sorted(a[i] if i in s else b[i] for i in range(len(a))) == sorted(set(a + b))
        )
        assert len(env.solve(p).split()) == brute


def test_k_partition() -> None:
    data = {"values": [6, 5, 10, 9], "groups": 2}
    assert verdict("k_partition", "1 2 2 1", **data).correct
    assert verdict("k_partition", "2 1 1 2", **data).correct
    assert reward("k_partition", "1 1 2 2", **data) == 0.0
    assert reward("k_partition", "1 2 3 1", **data) == -0.5


CONSTRUCTION_NAMES = ["maximum_subsequence_num", "palembang_bridges"]


@pytest.mark.parametrize("name", CONSTRUCTION_NAMES)
def test_self_check_construction(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_maximum_subsequence_num() -> None:
    assert distinct_subsequences([1, 1]) == 3  # "", 1, 11
    assert distinct_subsequences([1, 1, 0, 1]) == 10
    data = {"sequence": [1, 1], "k": 2, "m": 2}
    assert verdict("maximum_subsequence_num", "0 1", **data).correct
    assert reward("maximum_subsequence_num", "0 0", **data) == pytest.approx(0.9**5)
    assert reward("maximum_subsequence_num", "1 1", **data) == pytest.approx(0.5**5)
    assert reward("maximum_subsequence_num", "0 2", **data) == -0.5
    rng = random.Random(11)
    for _ in range(100):
        seq = [rng.randrange(3) for _ in range(rng.randint(0, 6))]
        subs = {tuple(c) for r in range(len(seq) + 1) for c in itertools.combinations(seq, r)}
        assert distinct_subsequences(seq) == len(subs)
        k, m = rng.randint(2, 3), rng.randint(1, 3)
        brute = max(
            distinct_subsequences(seq + list(t)) for t in itertools.product(range(k), repeat=m)
        )
        assert distinct_subsequences(seq + _greedy_extension(seq, k, m)) == brute


def test_palembang_bridges() -> None:
    data = {"starts": [0, 2], "ends": [10, 4], "k": 1}  # 10 + 2 anywhere in [2, 4]
    assert verdict("palembang_bridges", "3", **data).correct
    assert reward("palembang_bridges", "0", **data) == pytest.approx((12 / 16) ** 5)
    assert reward("palembang_bridges", "3 4", **data) == -0.5
    two = {"starts": [0, 20], "ends": [2, 22], "k": 2}  # one bridge per person: 2 + 2
    assert verdict("palembang_bridges", "1 21", **two).correct
    assert reward("palembang_bridges", "1 1", **two) == pytest.approx((4 / 42) ** 5)
