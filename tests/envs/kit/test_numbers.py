"""The number helpers families share (kit/numbers.py), against brute force."""

from __future__ import annotations

import math

from verirl.envs.kit.numbers import factorize, first_primes, is_prime, totient


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
