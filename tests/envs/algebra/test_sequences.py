"""Sequence and DP environments: verifiers on hand-computed instances, and brute-force
cross-checks of the optimisation solvers."""

from __future__ import annotations

import itertools
import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.algebra.sequences import _lcs, _longest_increasing, _min_coins


def test_family_is_registered() -> None:
    assert len(env_names(family="sequences_dp")) == 11


def test_sequence_terms() -> None:
    arith = {"shown": [2, 5, 8, 11], "index": 10}  # 2 + 9·3
    assert verdict("arithmetic_sequence_term", "29", **arith).correct
    assert reward("arithmetic_sequence_term", "30", **arith) == pytest.approx((29 / 30) ** 10)
    assert reward("arithmetic_sequence_term", "-29", **arith) == 0.0
    assert verdict("arithmetic_sequence_term", "-7", shown=[8, 5, 2, -1], index=6).correct
    assert verdict("geometric_sequence_term", "96", shown=[3, 6, 12, 24], index=6).correct
    assert verdict("geometric_sequence_term", "-96", shown=[3, -6, 12, -24], index=6).correct
    assert verdict("polynomial_sequence_next", "25", shown=[1, 4, 9, 16], degree=2).correct
    cubes = {"shown": [1, 8, 27, 64, 125], "degree": 3}
    assert verdict("polynomial_sequence_next", "216", **cubes).correct
    assert reward("polynomial_sequence_next", "200", **cubes) == pytest.approx((200 / 216) ** 10)


def test_linear_recurrence_mod() -> None:
    data = {"first": [1, 1], "multipliers": [1, 1], "index": 10, "modulus": 10}  # F(10) = 55
    assert verdict("linear_recurrence_mod", "5", **data).correct
    assert reward("linear_recurrence_mod", "4", **data) == 0.0
    assert reward("linear_recurrence_mod", "55", **data) == -0.5
    # A = 2, 1, 2·1 + 3·2 = 8, 2·8 + 3·1 = 19 → 19 mod 7 = 5
    assert verdict(
        "linear_recurrence_mod", "5", first=[2, 1], multipliers=[2, 3], index=4, modulus=7
    ).correct


def test_longest_increasing_subsequence_accepts_any_longest() -> None:
    data = {"values": [3, 1, 4, 1, 5, 9, 2, 6]}  # longest length 4
    for text in ("3, 4, 5, 6", "1, 4, 5, 9", "3,4,5,9"):
        assert verdict("longest_increasing_subsequence", text, **data).correct
    assert reward("longest_increasing_subsequence", "1, 4, 5", **data) == pytest.approx(
        (3 / 4) ** 5
    )
    assert reward("longest_increasing_subsequence", "4, 3", **data) == -0.5  # not increasing
    assert reward("longest_increasing_subsequence", "1, 1, 5", **data) == -0.5  # not strictly
    assert reward("longest_increasing_subsequence", "1, 2, 5", **data) == -0.5  # out of order
    assert reward("longest_increasing_subsequence", "", **data) == -0.5
    assert reward("longest_increasing_subsequence", "1, x", **data) == -1.0


def test_lis_and_lcs_solvers_match_brute_force() -> None:
    rng = random.Random(0)
    for _ in range(200):
        v = [rng.randint(1, 8) for _ in range(rng.randint(1, 9))]
        best = max(
            len(c)
            for r in range(1, len(v) + 1)
            for c in itertools.combinations(v, r)
            if all(a < b for a, b in itertools.pairwise(c))
        )
        lis = _longest_increasing(v)
        assert len(lis) == best and all(a < b for a, b in itertools.pairwise(lis))
        a = "".join(rng.choice("abc") for _ in range(rng.randint(1, 7)))
        b = "".join(rng.choice("abc") for _ in range(rng.randint(1, 7)))
        common = {"".join(c) for r in range(len(a) + 1) for c in itertools.combinations(a, r)}
        common &= {"".join(c) for r in range(len(b) + 1) for c in itertools.combinations(b, r)}
        assert len(_lcs(a, b)) == max(map(len, common)) and _lcs(a, b) in common


def test_longest_common_subsequence_accepts_any_longest() -> None:
    data = {"first": "abcbdab", "second": "bdcaba"}  # length 4: bcba, bdab, bcab
    for text in ("bdab", "bcba", "BCAB"):
        assert verdict("longest_common_subsequence", text, **data).correct
    assert reward("longest_common_subsequence", "bca", **data) == pytest.approx((3 / 4) ** 5)
    assert reward("longest_common_subsequence", "abcd", **data) == -0.5
    assert reward("longest_common_subsequence", "b1", **data) == -1.0


def test_max_subarray_sum() -> None:
    data = {"values": [-2, 1, -3, 4, -1, 2, 1, -5, 4]}  # 4 - 1 + 2 + 1
    assert verdict("max_subarray_sum", "6", **data).correct
    assert reward("max_subarray_sum", "5", **data) == pytest.approx((5 / 6) ** 10)


def test_coin_change_checks_the_coins() -> None:
    data = {"coins": [1, 3, 4], "target": 6}  # greedy pays 4 + 1 + 1, the optimum 3 + 3
    assert verdict("coin_change_min_coins", "3, 3", **data).correct
    assert reward("coin_change_min_coins", "4, 1, 1", **data) == pytest.approx((2 / 3) ** 5)
    assert reward("coin_change_min_coins", "1, 1, 1, 1, 1, 1", **data) == pytest.approx(
        (2 / 6) ** 5
    )
    assert reward("coin_change_min_coins", "4, 2", **data) == -0.5  # 2 is not a coin
    assert reward("coin_change_min_coins", "4, 3", **data) == -0.5  # pays 7
    assert reward("coin_change_min_coins", "", **data) == -0.5
    assert _min_coins([1, 3, 4], 6) == [3, 3]
    for target in range(1, 40):
        brute = min(
            a + b + c
            for a in range(40)
            for b in range(14)
            for c in range(11)
            if a + 3 * b + 4 * c == target
        )
        assert len(_min_coins([1, 3, 4], target)) == brute


def test_climbing_stairs() -> None:
    assert verdict("climbing_stairs", "8", stairs=5, steps=[1, 2]).correct
    # f(n) = f(n-1) + f(n-3): 1, 1, 1, 2, 3, 4
    assert verdict("climbing_stairs", "4", stairs=5, steps=[1, 3]).correct
    assert reward("climbing_stairs", "7", stairs=5, steps=[1, 2]) == pytest.approx((7 / 8) ** 10)


def test_grid_min_path_sum() -> None:
    data = {"grid": [[1, 3, 1], [1, 5, 1], [4, 2, 1]]}  # R R D D costs 7
    assert verdict("grid_min_path_sum", "RRDD", **data).correct
    assert verdict("grid_min_path_sum", "r r d d", **data).correct
    assert reward("grid_min_path_sum", "DDRR", **data) == pytest.approx((7 / 9) ** 5)
    assert reward("grid_min_path_sum", "RRD", **data) == -0.5
    assert reward("grid_min_path_sum", "RRRD", **data) == -0.5
    assert reward("grid_min_path_sum", "RRDX", **data) == -1.0
    ties = {"grid": [[1, 1], [1, 1]]}
    assert verdict("grid_min_path_sum", "RD", **ties).correct
    assert verdict("grid_min_path_sum", "DR", **ties).correct


def test_max_nonadjacent_sum() -> None:
    data = {"values": [2, 7, 9, 3, 1]}  # positions 1, 3, 5: 12
    assert verdict("max_nonadjacent_sum", "5, 3, 1", **data).correct
    assert reward("max_nonadjacent_sum", "2, 4", **data) == pytest.approx((10 / 12) ** 5)
    assert reward("max_nonadjacent_sum", "1, 2", **data) == -0.5
    assert reward("max_nonadjacent_sum", "3, 3", **data) == -0.5
    assert reward("max_nonadjacent_sum", "0", **data) == -0.5
    assert reward("max_nonadjacent_sum", "6", **data) == -0.5
    ties = {"values": [2, 1, 2, 2]}  # 1 + 3 and 1 + 4 both give 4
    assert verdict("max_nonadjacent_sum", "1, 3", **ties).correct
    assert verdict("max_nonadjacent_sum", "4, 1", **ties).correct
    env = get_env("max_nonadjacent_sum")
    rng = random.Random(1)
    for _ in range(100):
        v = [rng.randint(1, 9) for _ in range(rng.randint(1, 9))]
        best = max(
            sum(v[i] for i in c)
            for r in range(len(v) + 1)
            for c in itertools.combinations(range(len(v)), r)
            if all(b - a > 1 for a, b in itertools.pairwise(c))
        )
        assert sum(v[int(i) - 1] for i in env.solve(problem(env.name, values=v)).split(",")) == best


def test_climbing_stairs_counts_agree_and_levels_vary() -> None:
    """The DP and the multinomial count agree (also for step sets without 1); a level is
    many problems (d = 0 was one prompt in 500 seeds)."""
    env = get_env("climbing_stairs")
    assert verdict("climbing_stairs", "2", stairs=5, steps=[2, 3]).correct  # 2+3, 3+2
    assert verdict("climbing_stairs", "0", stairs=5, steps=[2, 4]).correct
    for d in (0, 3, 9):
        prompts = {env.generate(d, s).prompt for s in range(200)}
        space = env.problem_space(d)
        assert space is not None and min(100, 0.6 * space) <= len(prompts) <= space, d
