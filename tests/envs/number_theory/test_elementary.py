"""Number-theory environments: verifiers on hand-computed instances, and cross-checks."""

from __future__ import annotations

import pytest

from tests.envs.helpers import reward, verdict
from verirl.envs import env_names
from verirl.envs.kit.numbers import factorize, first_primes, is_prime


def test_family_is_registered() -> None:
    assert len(env_names(family="number_theory")) == 11


def test_is_prime_matches_a_sieve_and_rejects_pseudoprimes() -> None:
    limit = 5000
    sieve = [True] * limit
    sieve[0] = sieve[1] = False
    for i in range(2, limit):
        if sieve[i]:
            for j in range(i * i, limit, i):
                sieve[j] = False
    assert [n for n in range(limit) if is_prime(n)] == [n for n in range(limit) if sieve[n]]
    for composite in (561, 2047, 3215031751, 3825123056546413051, (2**31 - 1) * (2**61 - 1)):
        assert not is_prime(composite)
    assert is_prime(2**61 - 1) and is_prime(2**89 - 1)
    assert first_primes(6) == [2, 3, 5, 7, 11, 13]
    assert factorize(360) == [2, 2, 2, 3, 3, 5] and factorize(97) == [97]


def test_gcd_and_lcm() -> None:
    assert verdict("gcd", "6", numbers=[12, 18]).correct
    assert reward("gcd", "4", numbers=[12, 18]) == pytest.approx((4 / 6) ** 10)
    assert reward("gcd", "six", numbers=[12, 18]) == -1.0
    assert verdict("gcd", "5", numbers=[35, 10, 25]).correct
    assert verdict("lcm", "12", numbers=[4, 6]).correct
    assert reward("lcm", "24", numbers=[4, 6]) == pytest.approx(0.5**10)
    assert verdict("lcm", "1,260", numbers=[4, 9, 5, 7]).correct


def test_modular_power_is_binary_and_range_checked() -> None:
    data = {"base": 3, "exponent": 4, "modulus": 7}  # 81 = 11·7 + 4
    assert verdict("modular_power", "4", **data).correct
    assert reward("modular_power", "5", **data) == 0.0
    assert reward("modular_power", "81", **data) == -0.5  # not reduced
    assert reward("modular_power", "-3", **data) == -0.5
    assert reward("modular_power", "4.5", **data) == -1.0


def test_modular_inverse_checks_the_product() -> None:
    assert verdict("modular_inverse", "5", a=3, modulus=7).correct  # 3·5 = 15 ≡ 1
    assert reward("modular_inverse", "4", a=3, modulus=7) == 0.0
    assert reward("modular_inverse", "12", a=3, modulus=7) == -0.5  # ≡ 5 but out of range
    assert verdict("modular_inverse", "3", a=7, modulus=10).correct  # 7·3 = 21 ≡ 1
    assert not verdict("modular_inverse", "7", a=7, modulus=10).correct  # 49 ≡ 9


def test_prime_factorization_accepts_any_order_and_power_form() -> None:
    n = {"n": 60}
    for text in (
        "2, 2, 3, 5",
        "5, 3, 2, 2",
        "2^2 * 3 * 5",
        "2^{2} \\times 3 \\times 5",
        "60 = 2^2 · 3 · 5",
        "3 2 5 2",
    ):
        assert verdict("prime_factorization", text, **n).correct, text
    # all primes, wrong product: (common factors / longer list)^5
    assert reward("prime_factorization", "2, 3, 5", **n) == pytest.approx((3 / 4) ** 5)
    assert reward("prime_factorization", "2, 2, 3, 7", **n) == pytest.approx((3 / 4) ** 5)
    assert reward("prime_factorization", "4, 3, 5", **n) == -0.5  # 4 is not prime
    assert reward("prime_factorization", "61", **n) == -0.5  # larger than n
    assert reward("prime_factorization", "1, 60", **n) == -0.5
    assert reward("prime_factorization", "2^0, 3", **n) == -1.0
    assert reward("prime_factorization", "2^999999, 3", **n) == -1.0  # exponent capped
    assert reward("prime_factorization", "two, three", **n) == -1.0


def test_divisor_count_totient_and_digit_sum() -> None:
    assert verdict("divisor_count", "6", n=12).correct  # 1 2 3 4 6 12
    assert reward("divisor_count", "5", n=12) == pytest.approx((5 / 6) ** 10)
    assert verdict("euler_totient", "12", n=36).correct
    assert reward("euler_totient", "10", n=36) == pytest.approx((10 / 12) ** 10)
    assert verdict("euler_totient", "8", n=30).correct
    assert verdict("digit_sum", "10", number="1234").correct
    assert reward("digit_sum", "12", number="1234") == pytest.approx((10 / 12) ** 10)


def test_next_prime_scores_the_gap() -> None:
    assert verdict("next_prime", "17", n=13).correct
    # 19 is prime but not the next one: (gap 4 / gap 6)^5
    assert reward("next_prime", "19", n=13) == pytest.approx((4 / 6) ** 5)
    assert reward("next_prime", "15", n=13) == -0.5  # not prime
    assert reward("next_prime", "13", n=13) == -0.5  # not greater than n
    assert reward("next_prime", "101", n=13) == 0.0  # beyond Bertrand's 2n: not tested
    assert verdict("next_prime", "2", n=1).correct


def test_base_conversion_is_digit_wise() -> None:
    data = {"n": 10, "from_base": 10, "to_base": 2}
    for text in ("1010", "01010", "1 0 1 0"):
        assert verdict("base_conversion", text, **data).correct
    assert reward("base_conversion", "1011", **data) == pytest.approx((3 / 4) ** 5)
    assert reward("base_conversion", "101", **data) == 0.0  # wrong length
    assert reward("base_conversion", "1012", **data) == -0.5  # no digit 2 in base 2
    assert reward("base_conversion", "10-10", **data) == -1.0
    hexa = {"n": 255, "from_base": 10, "to_base": 16}
    assert verdict("base_conversion", "ff", **hexa).correct
    assert verdict("base_conversion", "FF", **hexa).correct


def test_chinese_remainder_accepts_any_solution() -> None:
    data = {"moduli": [3, 5], "residues": [2, 3]}  # x ≡ 2 (mod 3), x ≡ 3 (mod 5)
    assert verdict("chinese_remainder", "8", **data).correct
    assert verdict("chinese_remainder", "23", **data).correct  # 8 + 15
    assert reward("chinese_remainder", "2", **data) == pytest.approx(0.5**5)  # only mod 3
    assert reward("chinese_remainder", "0", **data) == 0.0
    assert reward("chinese_remainder", "-7", **data) == -0.5
    assert "1 of the 2" in verdict("chinese_remainder", "2", **data).detail
