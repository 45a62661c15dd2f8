"""The ``matrices`` family (matrices.py): hand-computed verdicts and the self-check."""

from __future__ import annotations

import random

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.selfcheck import self_check

NAMES = [
    "matrix_pooling",
    "matrix_binary_exponentiation",
    "matrix_permutation_main_diagonal_one",
    "matrix_permutation_equivalence",
]


def test_family_is_registered() -> None:
    assert {*NAMES, "minimum_sum_difference_submatrix"} <= set(env_names(family="matrices"))


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_matrix_pooling() -> None:
    data = {"matrix": [[7, 1], [5, 1], [2, 5], [9, 8]], "k": 2}
    assert verdict("matrix_pooling", "7; 5; 9", **data).correct
    assert reward("matrix_pooling", "7; 5; 8", **data) == pytest.approx((2 / 3) ** 5)
    assert reward("matrix_pooling", "7 5 9", **data) == -0.5  # one row of three


def test_matrix_binary_exponentiation() -> None:
    data = {"matrix": [[1, 1], [1, 0]], "k": 10}  # Fibonacci: F11 F10; F10 F9
    assert verdict("matrix_binary_exponentiation", "89 55; 55 34", **data).correct
    assert reward("matrix_binary_exponentiation", "89 55; 55 35", **data) == pytest.approx(0.75**5)


def test_matrix_permutation_main_diagonal_one() -> None:
    data = {"matrix": [[1, 0, 0], [0, 1, 0], [0, 1, 1]]}
    name = "matrix_permutation_main_diagonal_one"
    assert verdict(name, "0 1 2", **data).correct
    assert reward(name, "0 2 1", **data) == pytest.approx((2 / 3) ** 5)
    assert reward(name, "0 1", **data) == -0.5
    assert reward(name, "0 1 1", **data) == -0.5


def test_matrix_permutation_equivalence() -> None:
    data = {"matrix": [[0, 1, 1], [1, 1, 0]], "target": [[0, 1, 1], [1, 0, 1]]}
    name = "matrix_permutation_equivalence"
    assert verdict(name, "1 0; 2 0 1", **data).correct
    assert verdict(name, "0 1; 0 2 1", **data).correct  # another pair of permutations
    assert reward(name, "0 1; 0 1 2", **data) == pytest.approx((4 / 6) ** 5)
    assert reward(name, "0 1", **data) == -0.5


def test_minimum_sum_difference_submatrix() -> None:
    name = "minimum_sum_difference_submatrix"
    report = self_check(get_env(name))
    assert not report.failures, report.failures
    data = {"matrix": [[1, 2, 9], [1, 2, 9]], "r": 2, "c": 2}
    assert verdict(name, "0 1; 0 1", **data).correct  # |1 - 2| twice
    assert reward(name, "0 1; 1 2", **data) == pytest.approx((2 / 14) ** 5)
    assert reward(name, "0 1", **data) == -0.5
    assert reward(name, "0 0; 0 1", **data) == -0.5
    whole = {"matrix": [[19, 16], [18, 19], [4, 16]], "r": 3, "c": 2}
    assert verdict(name, "0 1 2; 0 1", **whole).correct  # 16 across + 21 down
    rng = random.Random(15)
    for _ in range(30):
        n, m = rng.randint(1, 4), rng.randint(2, 4)
        a = [[rng.randint(1, 9) for _ in range(m)] for _ in range(n)]
        r, c = rng.randint(1, n), rng.randint(2, m)
        p = problem(name, matrix=a, r=r, c=c)
        assert get_env(name).check(p, get_env(name).solve(p)).correct  # brute force agrees
