"""The ``counting`` family (counting_constrained.py): hand-computed counts, brute-force
cross-checks on small inputs, and the environment self-check."""

from __future__ import annotations

import itertools
import math

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.counting.constrained import (
    count_with_palindrome_upto,
    no_double_triple_subsets,
    range_max_total,
)
from verirl.envs.selfcheck import self_check

NAMES = [
    "no_double_triple_counting",
    "no_adjacent_girl_counting",
    "not_containing_string_counting",
    "number_partition_counting",
    "palindrome_partition_counting",
    "palindromic_substring_number_counting",
    "pair_more_one_counting",
]


def test_family_is_registered() -> None:
    assert {*NAMES, "max_rmq_expectation"} <= set(env_names(family="counting"))


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_no_double_triple() -> None:
    # {1..4}: the forbidden pairs 1-2, 1-3, 2-4 form the path 3-1-2-4, with 8 independent sets
    assert verdict("no_double_triple_counting", "8", n=4).correct
    assert reward("no_double_triple_counting", "7", n=4) == pytest.approx((7 / 8) ** 10)
    for n in range(1, 15):
        brute = sum(
            1
            for r in range(n + 1)
            for sub in itertools.combinations(range(1, n + 1), r)
            if not any(2 * x in sub or 3 * x in sub for x in sub)
        )
        assert no_double_triple_subsets(n) == brute


def test_no_adjacent_girl() -> None:
    # one boy, one girl, two teachers: 24 orders minus 12 with the teachers together
    assert verdict("no_adjacent_girl_counting", "12", boys=1, girls=1).correct
    assert reward("no_adjacent_girl_counting", "24", boys=1, girls=1) == pytest.approx(0.5**10)
    env = get_env("no_adjacent_girl_counting")
    for boys in range(0, 4):
        for girls in range(0, 4):
            people = ["B"] * boys + ["G"] * girls + ["T", "T"]
            brute = sum(
                1
                for order in itertools.permutations(range(len(people)))
                if not any(people[a] == people[b] in "GT" for a, b in itertools.pairwise(order))
            )
            data = {"boys": boys, "girls": girls}
            assert env.solve_int(problem(env.name, **data)) == brute
            assert int(env.solve(problem(env.name, **data))) == brute


def test_not_containing_string() -> None:
    data = {"n": 5, "pattern": "111", "modulus": 1000}
    # strings avoiding 111: 1, 2, 4, 7, 13, 24 for lengths 0..5 (tribonacci)
    assert verdict("not_containing_string_counting", "24", **data).correct
    assert reward("not_containing_string_counting", "25", **data) == 0.0
    assert reward("not_containing_string_counting", "1024", **data) == -0.5
    data = {"n": 12, "pattern": "0110", "modulus": 97}
    brute = sum(1 for bits in itertools.product("01", repeat=12) if "0110" not in "".join(bits))
    assert verdict("not_containing_string_counting", str(brute % 97), **data).correct


def test_number_partition() -> None:
    assert verdict("number_partition_counting", "3", n=7, k=2).correct  # 6+1, 5+2, 4+3
    # 7+2+1, 6+3+1, 5+4+1, 5+3+2
    assert verdict("number_partition_counting", "4", n=10, k=3).correct
    assert reward("number_partition_counting", "5", n=10, k=3) == pytest.approx((4 / 5) ** 10)
    env = get_env("number_partition_counting")
    for n in range(1, 25):
        for k in range(1, 6):
            brute = sum(1 for c in itertools.combinations(range(1, n + 1), k) if sum(c) == n)
            assert env.solve_int(problem(env.name, n=n, k=k)) == brute


def test_palindrome_partition() -> None:
    assert verdict("palindrome_partition_counting", "8", text="aaaab").correct
    assert verdict("palindrome_partition_counting", "2", text="aab").correct
    assert reward("palindrome_partition_counting", "1", text="aab") == pytest.approx(0.5**10)


def test_palindromic_substring_numbers() -> None:
    name = "palindromic_substring_number_counting"
    assert verdict(name, "2", left=10, right=30).correct  # 11, 22
    # 100, 101, 110..119, 121
    assert verdict(name, "13", left=100, right=121).correct
    assert reward(name, "12", left=100, right=121) == pytest.approx((12 / 13) ** 10)
    brute = 0
    for x in range(1, 3000):
        s = str(x)
        subs = (s[i:j] for i in range(len(s)) for j in range(i + 2, len(s) + 1))
        brute += any(t == t[::-1] for t in subs)
        assert count_with_palindrome_upto(x) == brute


def test_pair_more_one() -> None:
    # |S| = 2, |T| = 1: T = 0 with S in {01, 10, 11}, T = 1 with S = 11
    data = {"m": 1, "delta": 1, "modulus": 1_000_000_007}
    assert verdict("pair_more_one_counting", "4", **data).correct
    assert reward("pair_more_one_counting", "5", **data) == 0.0
    env = get_env("pair_more_one_counting")
    for m in range(0, 6):
        for delta in range(0, 4):
            n = m + delta
            brute = sum(
                math.comb(n, i) * math.comb(m, j)
                for i in range(n + 1)
                for j in range(m + 1)
                if i > j
            )
            data = {"m": m, "delta": delta, "modulus": 1_000_000_007}
            assert env.residue(problem(env.name, **data)) == brute
            assert env._sum_of_products(n, m) == brute


def test_max_rmq_expectation() -> None:
    name = "max_rmq_expectation"
    report = self_check(get_env(name))
    assert not report.failures, report.failures
    # (1,1): 3, (1,2): 5, (2,1): 5, (2,2): 6
    assert verdict(name, "19", n=2, m=2).correct
    assert reward(name, "18", n=2, m=2) == 0.0
    env = get_env(name)
    for n in range(1, 5):
        for m in range(1, 5):
            brute = sum(
                sum(max(arr[l : r + 1]) for l in range(n) for r in range(l, n))
                for arr in itertools.product(range(1, m + 1), repeat=n)
            )
            assert range_max_total(n, m) == brute
    big = problem(name, n=12, m=9)  # beyond the brute-force size: the per-range formula
    assert int(env.solve(big)) == range_max_total(12, 9)
