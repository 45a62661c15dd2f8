"""Recurrence and permutation counting environments (counting_recurrences.py): hand-computed
values, the fraction reader, the verifier's method against the solver, and the self-check."""

from __future__ import annotations

from fractions import Fraction

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import ENVIRONMENTS, env_names, get_env
from verirl.envs.counting.recurrences import parse_fraction
from verirl.envs.reading.normalize import InvalidAnswer
from verirl.envs.selfcheck import self_check

NAMES = [
    n
    for n in env_names(family="recurrence_counting")
    if ENVIRONMENTS.get(n).part.__module__.endswith(".counting.recurrences")
]


def _solved(name: str, **data: object) -> str:
    return get_env(name).solve(problem(name, **data))


def test_family_is_registered() -> None:
    assert len(NAMES) == 5


def test_fibonacci_and_gcd() -> None:
    fib = {"n": 10, "a": 1, "b": 1, "p": 1, "q": 1, "m": 1000}  # F(10) = 55
    assert verdict("fibonacci", "55", **fib).correct
    assert reward("fibonacci", "56", **fib) == 0.0
    other = {"n": 3, "a": 2, "b": 3, "p": 2, "q": 5, "m": 100}  # 2·3 + 5·2 = 16
    assert verdict("fibonacci", "16", **other).correct
    assert _solved("fibonacci", **other) == "16"
    # gcd(F(12), F(8)) = gcd(144, 21) = 3 = F(4)
    assert verdict("gcd_fibonacci_product", "3", n=12, m=8).correct
    assert _solved("gcd_fibonacci_product", n=12, m=8) == "3"
    assert reward("gcd_fibonacci_product", "21", n=12, m=8) == 0.0


def test_binary_tree_leaf_num_expectation() -> None:
    # n = 3: four chains with one leaf and one full tree with two: 6/5
    for text in ("6/5", "\\frac{6}{5}", "1.2", "$\\frac{6}{5}$"):
        assert verdict("binary_tree_leaf_num_expectation", text, n=3).correct, text
    assert verdict("binary_tree_leaf_num_expectation", "1", n=2).correct
    assert reward("binary_tree_leaf_num_expectation", "1", n=3) == 0.0
    assert reward("binary_tree_leaf_num_expectation", "6/0", n=3) == -0.5
    assert reward("binary_tree_leaf_num_expectation", "six fifths", n=3) == -1.0
    assert _solved("binary_tree_leaf_num_expectation", n=3) == "6/5"
    assert parse_fraction("-3/6") == Fraction(-1, 2)
    with pytest.raises(InvalidAnswer):
        parse_fraction("1/0")


def test_combination_odd_subsequence_counting() -> None:
    name = "combination_odd_subsequence_counting"
    # 3 ⊆ 7, 1 ⊆ 7, 1 ⊆ 3 bitwise: three pairs and the chain 7, 3, 1
    assert verdict(name, "4", values=[7, 3, 1], n=3).correct
    assert verdict(name, "0", values=[1, 3], n=2).correct  # C(1, 3) = 0
    assert verdict(name, "2", values=[6, 2, 4], n=3).correct  # C(2, 4) = 0
    assert _solved(name, values=[7, 3, 1], n=3) == "4"
    assert reward(name, "3", values=[7, 3, 1], n=3) == pytest.approx(0.75**10)


def test_bounded_adjacency_difference_permutation_counting() -> None:
    name = "bounded_adjacency_difference_permutation_counting"
    assert verdict(name, "2", n=4, k=1).correct  # 1234 and 4321
    assert verdict(name, "12", n=4, k=2).correct  # 24 minus the 12 with 1 next to 4
    assert verdict(name, "24", n=4, k=3).correct
    assert _solved(name, n=4, k=2) == "12"
    assert reward(name, "6", n=4, k=2) == pytest.approx(0.5**10)


@pytest.mark.parametrize("name", NAMES)
def test_verifier_method_matches_solver(name: str) -> None:
    env = get_env(name)
    for d in (0, 2, 5, 9):
        for seed in range(5):
            p = env.generate(d, seed)
            assert env.verify(p, f"\\boxed{{{env.solve(p)}}}").correct, (d, seed)


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures
