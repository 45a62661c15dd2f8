"""The number helpers families share (kit/numbers.py), against brute force."""

from __future__ import annotations

import math

from verirl.envs.kit.numbers import (
    decimal_digits,
    factorize,
    first_primes,
    is_prime,
    mobius_table,
    totient,
)


def test_is_prime_against_trial_division() -> None:
    for n in range(-3, 3000):
        assert is_prime(n) == (n >= 2 and all(n % d for d in range(2, math.isqrt(n) + 1))), n
    assert is_prime(2**61 - 1) and not is_prime((2**31 - 1) * (2**61 - 1))


def test_totient_against_counting() -> None:
    for n in range(1, 400):
        assert totient(n) == sum(1 for k in range(1, n + 1) if math.gcd(k, n) == 1), n


def test_factorize_and_first_primes() -> None:
    assert factorize(360) == [2, 2, 2, 3, 3, 5]
    assert factorize(97) == [97]
    assert first_primes(6) == [2, 3, 5, 7, 11, 13]


def test_mobius_table_against_factorisation() -> None:
    assert mobius_table(12)[1:] == [1, -1, -1, 0, -1, 1, -1, 0, 0, 1, -1, 0]
    mu = mobius_table(500)
    assert mu[0] == 0 and len(mu) == 501
    for n in range(1, 501):
        f = factorize(n)
        assert mu[n] == (0 if len(set(f)) < len(f) else (-1) ** len(f)), n


def test_decimal_digits_counts_digits_not_signs() -> None:
    assert decimal_digits(7, -12, 1000) == 1 + 2 + 4
    assert decimal_digits() == 0.0
