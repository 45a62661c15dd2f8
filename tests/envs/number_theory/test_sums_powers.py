"""Number-theory sums and power environments (RLVE rows): hand-computed instances, brute-force
cross-checks of the verifier's solvers, and the self-check."""

from __future__ import annotations

import itertools
import math

import pytest

from tests.envs.helpers import problem, reward, verdict
from verirl.envs import env_names, get_env
from verirl.envs.selfcheck import self_check

SUMS = env_names(family="number_theory_sums")
POWERS = env_names(family="number_theory_powers")


def test_families_are_registered() -> None:
    assert len(SUMS) == 12 and len(POWERS) == 8


@pytest.mark.parametrize("name", SUMS + POWERS)
def test_self_check(name: str) -> None:
    assert self_check(get_env(name)).failures == []


def test_sum_divisor_num_and_gcd_sums() -> None:
    assert verdict("sum_divisor_num", "8", low=1, high=4).correct  # 1 + 2 + 2 + 3
    assert reward("sum_divisor_num", "7", low=1, high=4) == pytest.approx((7 / 8) ** 10)
    assert verdict("sum_gcd", "5", n=2, m=2, k=1).correct  # 1 + 1 + 1 + 2
    assert verdict("sum_gcd", "7", n=2, m=2, k=2).correct  # 1 + 1 + 1 + 4
    assert reward("sum_gcd", "10", n=2, m=2, k=1) == pytest.approx(0.5**10)
    assert verdict("sum_gcd_with_individual", "15", n=6).correct  # 1 2 3 2 1 6
    assert verdict("sum_lcm", "16", n=2, m=3).correct  # 1 2 3 2 2 6
    assert reward("sum_lcm", "8", n=2, m=3) == pytest.approx(0.5**10)


def test_sum_mod_excludes_equal_indices() -> None:
    # 5 mod i = 0 1 2 1 0, 3 mod j = 0 1 0: only j = 2 counts, i ∈ {1, 3, 4, 5} gives 0+2+1+0
    assert verdict("sum_mod", "3", n=5, m=3).correct
    assert not verdict("sum_mod", "4", n=5, m=3).correct  # 4 would include i = j = 2


def test_phi_divisor_xor_and_euclid_sums() -> None:
    assert verdict("sum_phi_interval", "7", low=4, high=6).correct  # F = 2, 1, 4
    assert verdict("sum_product_divisor_num", "8", n=2, m=2).correct  # d(1) d(2) d(2) d(4)
    assert verdict("sum_xor_divisor_num", "4", n=2, m=2).correct  # d(0)=0, d(3)=2 twice
    assert verdict("sum_pseudo_euclidean", "6", n=2, m=2).correct  # f = 1, 2, 2, 1
    assert reward("sum_pseudo_euclidean", "-6", n=2, m=2) == 0.0


def test_manhattan_curved_surface_counts_sign_patterns() -> None:
    # P(1) = 4·3² (four sign patterns of (1,1,1)); P(2) = 4·3·4² (three orders of (2,1,1))
    assert verdict("sum_manhattan_curved_surface", "36", low=1, high=1).correct
    assert verdict("sum_manhattan_curved_surface", "228", low=1, high=2).correct


def test_two_set_all_coprime_counting() -> None:
    assert verdict("two_set_all_coprime_counting", "2", values=[2, 3]).correct
    # S = {2}, {4} or {2, 4} against T = {3}, and the three swapped pairs
    assert verdict("two_set_all_coprime_counting", "6", values=[2, 3, 4]).correct
    assert reward("two_set_all_coprime_counting", "3", values=[2, 3, 4]) == pytest.approx(0.5**10)


def test_sum_solvers_match_brute_force() -> None:
    def d(x: int) -> int:
        return sum(1 for k in range(1, x + 1) if x % k == 0)

    def phi(x: int) -> int:
        return sum(1 for k in range(1, x + 1) if math.gcd(k, x) == 1)

    env = get_env("sum_product_divisor_num")
    for n, m in ((7, 5), (12, 9)):
        brute = sum(d(i * j) for i in range(1, n + 1) for j in range(1, m + 1))
        assert env.solve(problem("sum_product_divisor_num", n=n, m=m)) == str(brute)
    brute = sum(math.lcm(i, j) for i in range(1, 14) for j in range(1, 10))
    assert get_env("sum_lcm").solve(problem("sum_lcm", n=13, m=9)) == str(brute)
    brute = sum(x - phi(x) for x in range(90, 101))
    assert get_env("sum_phi_interval").solve(problem("sum_phi_interval", low=90, high=100)) == str(
        brute
    )
    brute = sum(math.gcd(i, 60) for i in range(1, 61))
    assert get_env("sum_gcd_with_individual").solve(problem("x", n=60)) == str(brute)


def test_power_cycle_accepts_multiples_with_less_credit() -> None:
    data = {"n": 2, "k": 1}  # last digits 2, 4, 8, 6, 2, ...
    assert verdict("power_cycle", "4", **data).correct
    assert reward("power_cycle", "8", **data) == pytest.approx(0.5)
    assert reward("power_cycle", "3", **data) == 0.0
    assert reward("power_cycle", "0", **data) == -0.5
    assert verdict("power_cycle", "1", n=5, k=1).correct
    assert verdict("power_cycle", "20", n=2, k=2).correct  # 2^i mod 100 has period 20 from 2^2


def test_power_nest_is_canonical() -> None:
    assert verdict("power_nest", "2(2(2)+2+2(0))+2(2+2(0))+2(0)", n=137).correct
    assert verdict("power_nest", "2 + 2(0)", n=3).correct
    assert reward("power_nest", "2(0)+2", n=3) == 0.0  # terms out of order
    assert reward("power_nest", "2+", n=3) == -0.5
    assert reward("power_nest", "2(" * 5000, n=3) == -0.5


def test_prefix_concatenation_and_tower() -> None:
    assert verdict("prefix_concatenation", "112", n=12, modulus=1000).correct
    assert verdict("prefix_concatenation", str(123456789101112 % 7), n=12, modulus=7).correct
    assert reward("prefix_concatenation", "1000", n=12, modulus=1000) == -0.5
    env = get_env("prefix_concatenation")
    for n in (1, 9, 10, 99, 100, 250):
        for m in (7, 1000, 999_983):
            want = int("".join(str(i) for i in range(1, n + 1))) % m
            assert env.solve(problem("prefix_concatenation", n=n, modulus=m)) == str(want)
    assert verdict("self_power_sequence_mod", "1", n=3, modulus=5).correct  # 16 mod 5
    assert verdict("self_power_sequence_mod", "536", n=4, modulus=1000).correct
    assert verdict("self_power_sequence_mod", "6", n=5, modulus=10).correct  # 2^(4k) ends in 6
    from verirl.envs.number_theory.powers import _tower_mod

    for m in range(2, 300):  # the Euler-theorem recursion against the exact tower
        a5 = 2**65536
        assert _tower_mod(6, m) == pow(2, a5, m), m
        assert _tower_mod(5, m) == a5 % m, m


def test_smallest_binary_multiple_and_subset_sum_sequence() -> None:
    assert verdict("smallest_binary_multiple", "37", a=3).correct  # 111
    assert reward("smallest_binary_multiple", "370", a=3) == pytest.approx(0.1**5)  # 1110
    assert reward("smallest_binary_multiple", "4", a=3) == -0.5  # 12
    assert verdict("smallest_binary_multiple", "5", a=2).correct
    # powers of 3: 1, 3, 4, 9, 10, 12, 13, ...
    assert verdict("subset_sum_sequence", "9", n=4, k=3).correct
    assert reward("subset_sum_sequence", "12", n=5, k=3) == pytest.approx((10 / 12) ** 2)


def test_recursive_function_and_sequence_sum() -> None:
    assert verdict("recursive_function", "9", m=2, n=3).correct
    assert verdict("recursive_function", "61", m=3, n=3).correct
    assert reward("recursive_function", "60", m=3, n=3) == 0.0
    from verirl.envs.number_theory.powers import _ackermann_table

    assert [_ackermann_table(3, n) for n in range(6)] == [5, 13, 29, 61, 125, 253]
    data = {"n": 3, "f0": 1, "a": 2, "b": 1, "target": 18}  # F = 1, 3, 7, 15
    assert verdict("recursive_sequence_sum_construction", "3, 1", **data).correct
    assert reward("recursive_sequence_sum_construction", "1, 1", **data) == -0.5
    assert reward("recursive_sequence_sum_construction", "0, 3", **data) == -0.5
    assert reward("recursive_sequence_sum_construction", "2", **data) == 0.0


def test_sum_set_multiplication() -> None:
    # sequences of 2 distinct values from 1..3: 1·2, 1·3, 2·3, each in two orders → 22
    assert verdict("sum_set_multiplication", "22", n=2, k=3).correct
    assert reward("sum_set_multiplication", "11", n=2, k=3) == 0.0
    assert reward("sum_set_multiplication", str(10**9 + 7), n=2, k=3) == -0.5
    brute = sum(math.prod(p) for p in itertools.permutations(range(1, 8), 3)) % (10**9 + 7)
    assert verdict("sum_set_multiplication", str(brute), n=3, k=7).correct
