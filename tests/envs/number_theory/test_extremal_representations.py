"""The ``numbers`` family (numbers_representation.py, numbers_extremal.py): hand-computed
verdicts, and the fast solvers cross-checked against brute force on small inputs."""

from __future__ import annotations

import math

import pytest

from tests.envs.helpers import reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.number_theory.extremal import (
    divisor_count_if_known,
    max_gcd_in_ranges,
    smallest_with_divisors,
)
from verirl.envs.number_theory.representations import (
    fewest_fibonacci_terms,
    from_negative_base,
    next_palindrome,
    to_negative_base,
)
from verirl.envs.selfcheck import self_check

NAMES = [
    "negative_base",
    "minimum_fibonacci_representation",
    "next_palindromic",
    "odl_distance",
    "min_k_divisor_number",
    "min_no_solution_linear_diophantine_equation",
    "max_multiplication_fixed_sum",
    "pan_solar_panels",
    "maximum_divisor",
]


def test_family_is_registered() -> None:
    assert set(NAMES) <= set(env_names(family="numbers"))


@pytest.mark.parametrize("name", NAMES)
def test_self_check(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures


def test_negative_base() -> None:
    # 2 = 1·4 + 1·(-2) + 0 in base -2; -3 = 1·(-3) + 0 in base -3.
    assert verdict("negative_base", "110", n=2, base=2).correct
    assert verdict("negative_base", "0110", n=2, base=2).correct  # a leading zero is harmless
    assert verdict("negative_base", "10", n=-3, base=3).correct
    # "111" is 3: two of three digits match the numeral 110
    assert reward("negative_base", "111", n=2, base=2) == pytest.approx(2 / 3)
    assert reward("negative_base", "112", n=2, base=2) == -0.5  # 2 is no base -2 digit
    assert reward("negative_base", "1 1 0", n=2, base=2) == 1.0
    assert reward("negative_base", "-110", n=2, base=2) == -0.5
    for r in range(2, 11):
        for n in range(-300, 301):
            digits = to_negative_base(n, r)
            assert from_negative_base(digits, r) == n
            assert n == 0 or not digits.startswith("0")


def _fibonacci_bfs(limit: int) -> dict[int, int]:
    """Fewest signed Fibonacci terms for 1..limit by breadth-first search over values in
    [-4·limit, 4·limit]."""
    fibs = [1, 2]
    while fibs[-1] < 8 * limit:
        fibs.append(fibs[-1] + fibs[-2])
    bound = 4 * limit
    dist = {0: 0}
    frontier = [0]
    while frontier:
        nxt = []
        for v in frontier:
            for f in fibs:
                for w in (v + f, v - f):
                    if -bound <= w <= bound and w not in dist:
                        dist[w] = dist[v] + 1
                        nxt.append(w)
        frontier = nxt
    return {k: dist[k] for k in range(1, limit + 1)}


def test_minimum_fibonacci_representation() -> None:
    assert [fewest_fibonacci_terms(k) for k in (1, 4, 7, 10, 12, 17)] == [1, 2, 2, 2, 2, 3]
    assert verdict("minimum_fibonacci_representation", "3", k=17).correct
    assert reward("minimum_fibonacci_representation", "2", k=17) == 0.0
    assert reward("minimum_fibonacci_representation", "0", k=17) == -0.5
    bfs = _fibonacci_bfs(300)
    assert all(fewest_fibonacci_terms(k) == bfs[k] for k in bfs)


def test_next_palindromic() -> None:
    assert verdict("next_palindromic", "88", n=82).correct
    assert reward("next_palindromic", "99", n=82) == pytest.approx((88 / 99) ** 5)
    assert reward("next_palindromic", "89", n=82) == -0.5  # not a palindrome
    assert reward("next_palindromic", "77", n=82) == -0.5  # not above 82
    assert verdict("next_palindromic", "101", n=99).correct
    assert verdict("next_palindromic", "1331", n=1221).correct
    for n in range(0, 3000):
        brute = next(m for m in range(n + 1, 10 * n + 20) if str(m) == str(m)[::-1])
        assert next_palindrome(n) == brute


def test_odl_distance() -> None:
    # 12 = 2²·3, 18 = 2·3², 5: d(12,18) = 2, d(12,5) = 3 + 1, d(18,5) = 3 + 1.
    assert verdict("odl_distance", "2 2 4", values=[12, 18, 5]).correct
    assert reward("odl_distance", "2 2 3", values=[12, 18, 5]) == pytest.approx((2 / 3) ** 5)
    assert reward("odl_distance", "2 2", values=[12, 18, 5]) == -0.5
    assert verdict("odl_distance", "0 0 1", values=[7, 7, 1]).correct


def test_min_k_divisor_number() -> None:
    brute = {}
    for m in range(1, 5000):
        brute.setdefault(sum(1 for d in range(1, m + 1) if m % d == 0), m)
    for k in range(2, 14):
        assert smallest_with_divisors(k) == brute[k]
    assert verdict("min_k_divisor_number", "12", k=6).correct
    assert reward("min_k_divisor_number", "8", k=4) == pytest.approx((6 / 8) ** 2)
    assert reward("min_k_divisor_number", "10", k=4) == pytest.approx((6 / 10) ** 2)
    assert reward("min_k_divisor_number", "9", k=4) == 0.0  # 3 divisors
    assert reward("min_k_divisor_number", "0", k=4) == -0.5
    big = 1_000_003
    assert divisor_count_if_known(2**10 * 3) == 22
    assert divisor_count_if_known(big) == 2 and divisor_count_if_known(big * big) == 3
    assert divisor_count_if_known(big * 1_000_033) is None


def test_frobenius_and_max_product() -> None:
    name = "min_no_solution_linear_diophantine_equation"
    assert verdict(name, "7", a=3, b=5).correct
    assert reward(name, "8", a=3, b=5) == 0.0
    assert get_env(name).solve(get_env(name).generate(30, 0)).isdigit()
    assert verdict("max_multiplication_fixed_sum", "36", n=10).correct
    assert verdict("max_multiplication_fixed_sum", "4", n=4).correct
    assert reward("max_multiplication_fixed_sum", "32", n=10) == 0.0


def test_pan_solar_panels() -> None:
    data = {"a": 5, "b": 7, "c": 10, "d": 14}
    assert verdict("pan_solar_panels", "7 14", **data).correct
    assert reward("pan_solar_panels", "6 12", **data) == pytest.approx((6 / 7) ** 3)
    assert reward("pan_solar_panels", "8 12", **data) == -0.5
    assert reward("pan_solar_panels", "7", **data) == -0.5
    for a in range(1, 40, 3):
        for b in range(a, 60, 7):
            for c in range(1, 30, 4):
                for d in range(c, 70, 9):
                    brute = max(math.gcd(x, y) for x in range(a, b + 1) for y in range(c, d + 1))
                    assert max_gcd_in_ranges(a, b, c, d) == brute


def test_maximum_divisor() -> None:
    data = {"values": [12, 18, 7, 24], "k": 2}
    assert verdict("maximum_divisor", "0 3", **data).correct
    assert reward("maximum_divisor", "0 1", **data) == pytest.approx(0.5**5)
    assert reward("maximum_divisor", "0 0", **data) == -0.5
    assert reward("maximum_divisor", "0 4", **data) == -0.5
