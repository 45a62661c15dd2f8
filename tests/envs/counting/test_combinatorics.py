"""Combinatorics environments: verifiers on hand-computed counts, and brute-force
cross-checks of the solvers on small cases."""

from __future__ import annotations

import itertools
import math

import pytest

from tests.envs.helpers import problem, verdict
from verirl.envs import env_names, get_env


def solved(name: str, **data) -> int:
    return int(get_env(name).solve(problem(name, **data)))


def test_family_is_registered() -> None:
    assert len(env_names(family="combinatorics")) == 8


def test_hand_computed_counts() -> None:
    assert verdict("binomial_coefficient", "10", n=5, k=2).correct
    assert verdict("binomial_coefficient", "9", n=5, k=2).reward == pytest.approx(0.9**10)
    assert verdict("binomial_coefficient", "ten", n=5, k=2).reward == -1.0
    assert verdict("word_arrangements", "3", word="AAB", n=3).correct
    assert verdict("word_arrangements", "34650", word="MISSISSIPPI", n=11).correct
    assert verdict("word_arrangements", "34,650", word="MISSISSIPPI", n=11).correct
    assert verdict("permutations_with_fixed_points", "9", n=4, fixed=0).correct
    assert verdict("permutations_with_fixed_points", "20", n=5, fixed=2).correct  # C(5,2)·!3
    assert verdict("lattice_paths_blocked", "2", grid=["...", ".#.", "..."], n=9).correct
    assert verdict("lattice_paths_blocked", "3", grid=["...", "..."], n=6).correct
    assert verdict("lattice_paths_blocked", "0", grid=[".#", "#."], n=4).correct
    # 2 3 4 6 8 9 10
    assert verdict("divisible_by_any_count", "7", n=10, divisors=[2, 3]).correct
    assert verdict("divisible_by_any_count", "22", n=30, divisors=[2, 3, 5]).correct  # 30 - φ(30)
    assert verdict("catalan_count", "5", n=3).correct
    assert verdict("catalan_count", "14", n=4).correct
    assert verdict("catalan_count", "12", n=4).reward == pytest.approx((12 / 14) ** 10)
    assert verdict("stars_and_bars", "21", n=5, lows=[0, 0, 0]).correct  # C(7, 2)
    assert verdict("stars_and_bars", "6", n=5, lows=[1, 0, 2]).correct  # C(4, 2)
    assert verdict("integer_partitions", "7", n=5, max_part=5).correct
    assert verdict("integer_partitions", "3", n=5, max_part=2).correct  # 221 2111 11111
    assert verdict("integer_partitions", "6", n=5, max_part=2).reward == pytest.approx(0.5**10)


def test_solvers_match_brute_force() -> None:
    for n in range(1, 7):
        perms = list(itertools.permutations(range(n)))
        for k in range(n + 1):
            brute = sum(1 for p in perms if sum(p[i] == i for i in range(n)) == k)
            assert solved("permutations_with_fixed_points", n=n, fixed=k) == brute
    for word in ("ABAB", "AAABC", "ABCDE", "AAAA"):
        brute = len(set(itertools.permutations(word)))
        assert solved("word_arrangements", word=word, n=len(word)) == brute
    for n, divisors in ((50, [4, 6, 9]), (97, [2, 7]), (120, [3, 4, 5, 6])):
        brute = sum(1 for x in range(1, n + 1) if any(x % a == 0 for a in divisors))
        assert solved("divisible_by_any_count", n=n, divisors=divisors) == brute
    for n, lows in ((6, [0, 1, 2]), (4, [0, 0, 0, 0]), (7, [2, 2])):
        brute = sum(
            1
            for xs in itertools.product(range(n + 1), repeat=len(lows))
            if sum(xs) == n and all(x >= lo for x, lo in zip(xs, lows, strict=True))
        )
        assert solved("stars_and_bars", n=n, lows=lows) == brute
    grid = ["..#.", "....", ".#..", "...."]

    def avoids_blocks(moves: tuple[str, ...]) -> bool:
        r = c = 0
        for m in moves:
            r, c = (r + 1, c) if m == "D" else (r, c + 1)
            if grid[r][c] == "#":
                return False
        return True

    brute = sum(map(avoids_blocks, set(itertools.permutations("DDDRRR"))))
    assert solved("lattice_paths_blocked", grid=grid, n=16) == brute
    assert [solved("catalan_count", n=n) for n in range(8)] == [
        math.comb(2 * n, n) // (n + 1) for n in range(8)
    ]


def test_ballot_counts_and_distinct_partitions_match_brute_force() -> None:
    """The Catalan triangle (n opening, k ≤ n closing parentheses, every prefix non-negative)
    and partitions into distinct parts, against enumeration."""
    for n in range(1, 7):
        for k in range(n + 1):
            brute = sum(
                1
                for closes in itertools.combinations(range(n + k), k)
                if all(
                    sum(1 for c in closes if c <= i) <= i + 1 - sum(1 for c in closes if c <= i)
                    for i in range(n + k)
                )
            )
            assert solved("catalan_count", n=n, k=k) == brute, (n, k)
    for n in range(1, 13):
        for m in range(1, n + 1):
            brute = sum(
                1
                for r in range(1, m + 1)
                for parts in itertools.combinations(range(1, m + 1), r)
                if sum(parts) == n
            )
            assert solved("integer_partitions", n=n, max_part=m, distinct=True) == brute


def test_counting_levels_have_many_problems() -> None:
    """Each level draws its parameters per seed: no level is one problem (catalan_count once
    gave 429 for every seed at d = 5) and the documented spaces are what the seeds reach."""
    for name in (
        "catalan_count",
        "permutations_with_fixed_points",
        "stars_and_bars",
        "integer_partitions",
    ):
        env = get_env(name)
        for d in (0, 5):
            answers = {env.generate(d, s).answer for s in range(200)}
            assert len(answers) >= 5, (name, d, answers)
            prompts = {env.generate(d, s).prompt for s in range(2000)}
            space = env.problem_space(d)
            assert space is not None and 0.9 * space <= len(prompts) <= space, (name, d)
