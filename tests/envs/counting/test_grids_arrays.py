"""Counting environments on grids and arrays (RLVE rows): hand-computed instances, brute-force
cross-checks, and the self-check."""

from __future__ import annotations

import itertools

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.selfcheck import self_check

GRIDS = env_names(family="counting_grids")
ARRAYS = env_names(family="counting_arrays")


def test_families_are_registered() -> None:
    assert len(GRIDS) == 5 and len(ARRAYS) == 10


@pytest.mark.parametrize("name", GRIDS + ARRAYS)
def test_self_check(name: str) -> None:
    assert self_check(get_env(name)).failures == []


def test_royal_lock_counting() -> None:
    assert verdict("royal_lock_counting", "9", n=3, k=1).correct
    # 36 pairs of squares minus 6 horizontal, 6 vertical and 8 diagonal neighbours
    assert verdict("royal_lock_counting", "16", n=3, k=2).correct
    assert verdict("royal_lock_counting", "1", n=3, k=4).correct  # the four corners
    assert reward("royal_lock_counting", "20", n=3, k=2) == pytest.approx(0.8**10)
    env = get_env("royal_lock_counting")
    cells = list(itertools.product(range(4), repeat=2))
    brute = sum(
        1
        for pick in itertools.combinations(cells, 3)
        if all(
            max(abs(a[0] - b[0]), abs(a[1] - b[1])) > 1 for a, b in itertools.combinations(pick, 2)
        )
    )
    assert env.solve(problem("royal_lock_counting", n=4, k=3)) == str(brute)


def test_square_undamaged_point_counting() -> None:
    name = "square_undamaged_point_counting"
    assert verdict(name, "1", n=1, m=1, damaged=[]).correct
    # 3×3 points: four unit squares, one of side 2, one tilted through the edge midpoints
    assert verdict(name, "6", n=2, m=2, damaged=[]).correct
    assert verdict(name, "2", n=2, m=2, damaged=[[1, 1]]).correct
    assert reward(name, "5", n=2, m=2, damaged=[]) == pytest.approx((5 / 6) ** 10)


def test_submatrix_counts() -> None:
    # sums: 1 2 3 4 (one multiple of 3), rows 3 and 7, columns 4 and 6, all 10
    assert verdict("submatrix_sum_divisible_counting", "3", matrix=[[1, 2], [3, 4]], k=3).correct
    assert verdict("undamaged_submatrix_counting", "5", matrix=[[1, 1], [1, 0]]).correct
    assert reward("undamaged_submatrix_counting", "4", matrix=[[1, 1], [1, 0]]) == pytest.approx(
        0.8**10
    )


def test_sum_triangle_area() -> None:
    square = [[0, 0], [1, 0], [0, 1], [1, 1]]  # four triangles of area 1/2
    assert verdict("sum_triangle_area", "4", points=square).correct
    assert verdict("sum_triangle_area", "0", points=[[0, 0], [1, 1], [2, 2]]).correct
    pts = [[0, 0], [5, 1], [2, 7], [3, 3], [9, 4], [1, 6]]
    brute = sum(
        abs((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]))
        for a, b, c in itertools.combinations(pts, 3)
    )
    assert get_env("sum_triangle_area").solve(problem("sum_triangle_area", points=pts)) == str(
        brute
    )


def test_sequence_counts() -> None:
    assert verdict("same_adjacency_counting", "6", n=3, m=2).correct  # 8 minus 121 and 212
    assert reward("same_adjacency_counting", "5", n=3, m=2) == 0.0  # binary row
    assert verdict("stirling_second", "6", n=3, r=2).correct  # 2^3 − 2
    bounds = [[0, 2], [1, 2]]  # (0,1) (0,2) (1,2)
    assert verdict("range_constrained_increasing_sequence_counting", "3", bounds=bounds).correct
    assert verdict("xor_equation_counting", "2", n=2, r=1, k=1, bits=2).correct
    assert verdict("xor_equation_counting", "3", n=2, r=2, k=0, bits=2).correct
    assert verdict("xor_equation_counting", "16", n=3, r=3, k=0, bits=2).correct
    env = get_env("xor_equation_counting")
    for n, r, k in ((3, 5, 6), (4, 6, 1), (2, 7, 7)):
        brute = sum(1 for xs in itertools.product(range(r + 1), repeat=n) if _xor(xs) == k)
        assert env.solve(problem("xor_equation_counting", n=n, r=r, k=k, bits=3)) == str(brute)


def _xor(xs: tuple[int, ...]) -> int:
    out = 0
    for x in xs:
        out ^= x
    return out


def test_subarray_sums_and_xors() -> None:
    assert verdict("subarray_sum_xor", "2", array=[1, 1]).correct  # 1 ^ 2 ^ 1
    assert verdict("subarray_sum_xor", "0", array=[1, 2]).correct  # 1 ^ 3 ^ 2
    assert verdict("subarray_xor_sum", "6", array=[1, 2]).correct  # 1 + 3 + 2
    assert verdict("subarray_xor_sum", "2", array=[1, 1]).correct  # 1 + 0 + 1
    assert reward("subarray_xor_sum", "7", array=[1, 2]) == 0.0


def test_repeat_sequence_lnds() -> None:
    assert verdict("repeat_sequence_lnds", "2", period=[2, 1], t=2).correct  # 2 1 2 1
    assert verdict("repeat_sequence_lnds", "3", period=[2, 1], t=3).correct  # 2 1 2 1 2 1
    assert reward("repeat_sequence_lnds", "4", period=[2, 1], t=3) == 0.0


def test_string_counts() -> None:
    assert verdict("shared_substring_counting", "3", s="ab", t="ab").correct  # a, b, ab
    assert verdict("shared_substring_counting", "2", s="aa", t="a").correct
    name = "three_string_common_subsequence_counting"
    assert verdict(name, "1", a="a", b="a", c="a").correct
    assert verdict(name, "2", a="aa", b="a", c="a").correct
    assert verdict(name, "3", a="ab", b="ab", c="ab").correct  # a, b, ab
    assert reward(name, "4", a="ab", b="ab", c="ab") == pytest.approx(0.75**10)
    # {0} {01} {1} {0,1} {01,1}: 0 is a prefix of 01
    assert verdict("zero_prefix_subset_counting", "5", words=["0", "01", "1"]).correct
    words = ["0", "01", "011", "1", "10", "00", "111"]
    brute = sum(
        1
        for k in range(1, len(words) + 1)
        for sub in itertools.combinations(words, k)
        if not any(a != b and b.startswith(a) for a in sub for b in sub)
    )
    env = get_env("zero_prefix_subset_counting")
    assert env.solve(problem("zero_prefix_subset_counting", words=words)) == str(brute)
