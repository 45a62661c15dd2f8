"""Number-theory counting environments (counting_number_theory.py): hand-computed instances,
the fast verifier count against the brute-force solver, and the self-check."""

from __future__ import annotations

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import ENVIRONMENTS, env_names, get_env
from verirl.envs.selfcheck import self_check

NAMES = [
    n
    for n in env_names(family="number_counting")
    if ENVIRONMENTS.get(n).part.__module__.endswith(".counting.number_theory")
]


def test_family_is_registered() -> None:
    assert len(NAMES) == 12


def _solved(name: str, **data: object) -> int:
    return int(get_env(name).solve(problem(name, **data)))


def test_add_multiple_divisible_counting() -> None:
    # (3, 6), (6, 12) and (4, 12): a·b / (a + b) = 2, 4, 3
    data = {"l": 1, "r": 12}
    assert _solved("add_multiple_divisible_counting", **data) == 3
    assert verdict("add_multiple_divisible_counting", "3", **data).correct
    assert reward("add_multiple_divisible_counting", "2", **data) == pytest.approx((2 / 3) ** 10)
    assert verdict("add_multiple_divisible_counting", "2", l=4, r=12).correct  # (4, 12), (6, 12)
    assert not verdict("add_multiple_divisible_counting", "1", l=1, r=12).correct
    assert reward("add_multiple_divisible_counting", "three", **data) == -1.0


def test_gcd_counts() -> None:
    # coprime pairs in [1,3]²: all but (2,2) and (3,3)
    assert verdict("gcd_one_counting", "7", n=3, m=3).correct
    assert reward("gcd_one_counting", "6", n=3, m=3) == pytest.approx((6 / 7) ** 10)
    assert _solved("gcd_one_counting", n=3, m=3) == 7
    # prime gcd in [1,4]²: (2,2), (2,4), (4,2), (3,3)
    assert verdict("gcd_prime_counting", "4", n=4, m=4).correct
    assert _solved("gcd_prime_counting", n=4, m=4) == 4
    assert reward("gcd_prime_counting", "5", n=4, m=4) == pytest.approx((4 / 5) ** 10)
    # gcd 2, lcm 12: (2,12), (12,2), (4,6), (6,4)
    assert verdict("gcd_lcm_counting", "4", gcd=2, lcm=12).correct
    assert _solved("gcd_lcm_counting", gcd=2, lcm=12) == 4
    assert verdict("gcd_lcm_counting", "1", gcd=5, lcm=5).correct
    assert reward("gcd_lcm_counting", "2", gcd=2, lcm=12) == pytest.approx(0.5**10)


def test_binary_linear_equation_solution_counting() -> None:
    box = {"x1": 0, "x2": 5, "y1": 0, "y2": 2, "range": 5}
    # x + y - 3 = 0: y in 0..2 gives x = 3, 2, 1
    assert verdict("binary_linear_equation_solution_counting", "3", a=1, b=1, c=-3, **box).correct
    assert _solved("binary_linear_equation_solution_counting", a=1, b=1, c=-3, **box) == 3
    # 2x + 4y + 1 = 0 has no integer solution (odd right side)
    assert verdict("binary_linear_equation_solution_counting", "0", a=2, b=4, c=1, **box).correct
    assert reward("binary_linear_equation_solution_counting", "1", a=2, b=4, c=1, **box) == 0.0
    # -2x + 3y + 1 = 0 on x in [-5, 5], y in [-5, 5]: (2, 1), (-1, -1), (5, 3), (-4, -3)
    wide = {"x1": -5, "x2": 5, "y1": -5, "y2": 5, "range": 5}
    assert verdict("binary_linear_equation_solution_counting", "4", a=-2, b=3, c=1, **wide).correct
    assert _solved("binary_linear_equation_solution_counting", a=-2, b=3, c=1, **wide) == 4


def test_factorial_trailing_zero_count() -> None:
    assert verdict("factorial_trailing_zero_count", "2", n=10, k=10).correct
    # 6! = 720 = 5·12², written 500 in base 12
    assert verdict("factorial_trailing_zero_count", "2", n=6, k=12).correct
    assert _solved("factorial_trailing_zero_count", n=6, k=12) == 2
    assert reward("factorial_trailing_zero_count", "1", n=10, k=10) == pytest.approx(0.5**10)


def test_integer_factorization_counting() -> None:
    assert verdict("integer_factorization_counting", "2", n=12).correct  # 2·6, 3·4
    # 2·12, 3·8, 4·6, 2·3·4
    assert verdict("integer_factorization_counting", "4", n=24).correct
    assert _solved("integer_factorization_counting", n=24) == 4
    assert verdict("integer_factorization_counting", "0", n=7).correct
    assert reward("integer_factorization_counting", "3", n=24) == pytest.approx((3 / 4) ** 10)


def test_circulating_decimal_counting() -> None:
    # values 1, 1/2, 2; in base 10 the denominator 2 is not coprime to 10
    assert verdict("circulating_decimal_counting", "2", n=2, m=2, k=10).correct
    assert verdict("circulating_decimal_counting", "3", n=2, m=2, k=3).correct
    assert _solved("circulating_decimal_counting", n=2, m=2, k=3) == 3
    assert reward("circulating_decimal_counting", "4", n=2, m=2, k=3) == pytest.approx(0.75**10)


def test_fibonacci_containing_counting() -> None:
    # K = 3: a + b = 3 gives (1,2), (2,1); a + 2b = 3 gives (1,1)
    assert verdict("fibonacci_containing_counting", "3", k=3).correct
    # K = 4: (1,3), (2,2), (3,1) from f(2) and (2,1) from f(3)
    assert verdict("fibonacci_containing_counting", "4", k=4).correct
    assert _solved("fibonacci_containing_counting", k=4) == 4
    assert reward("fibonacci_containing_counting", "2", k=4) == pytest.approx(0.5**10)


def test_energy_storage_meter() -> None:
    assert verdict("energy_storage_meter", "2", n=2, m=2, k=0).correct
    # XOR table on {0,1,2}²: 0 1 2 / 1 0 3 / 2 3 0; minus 1, clipped: 1+2+1+2 = 6
    assert verdict("energy_storage_meter", "6", n=3, m=3, k=1).correct
    assert _solved("energy_storage_meter", n=3, m=3, k=1) == 6
    assert reward("energy_storage_meter", "5", n=3, m=3, k=1) == pytest.approx((5 / 6) ** 10)
    assert verdict("energy_storage_meter", "0", n=2, m=2, k=1).correct


def test_halving_chain_counting() -> None:
    # f(1)=1, f(2)=2, f(3)=2, f(6) = 1 + f(1) + f(2) + f(3) = 6
    assert verdict("halving_chain_counting", "6", n=6).correct
    assert _solved("halving_chain_counting", n=6) == 6
    assert verdict("halving_chain_counting", "1", n=1).correct
    assert reward("halving_chain_counting", "3", n=6) == pytest.approx(0.5**10)


def test_fixed_mod_k_selection_counting_is_binary_and_range_checked() -> None:
    data = {"n": 2, "k": 2, "r": 0, "p": 7}  # C(4,0) + C(4,2) + C(4,4) = 8 ≡ 1
    assert verdict("fixed_mod_k_selection_counting", "1", **data).correct
    assert _solved("fixed_mod_k_selection_counting", **data) == 1
    assert reward("fixed_mod_k_selection_counting", "2", **data) == 0.0
    assert reward("fixed_mod_k_selection_counting", "8", **data) == -0.5
    assert verdict("fixed_mod_k_selection_counting", "2", n=1, k=2, r=1, p=1009).correct


@pytest.mark.parametrize("name", NAMES)
def test_fast_count_matches_brute_force(name: str) -> None:
    env = get_env(name)
    for d in (0, 1, 3, 6, 9):
        for seed in range(5):
            p = env.generate(d, seed)
            assert env.solve(p) == p.answer, (d, seed)


@pytest.mark.parametrize("name", NAMES)
def test_self_check_and_distinct_problems(name: str) -> None:
    report = self_check(get_env(name))
    assert not report.failures, report.failures
    env = get_env(name)
    assert len({env.generate(1, s).prompt for s in range(200)}) >= 100
