"""Number helpers environment families share: primality, primes, factorisation, totient,
the Möbius function, decimal length."""

from __future__ import annotations

_MR_BASES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)


def is_prime(n: int) -> bool:
    """Miller–Rabin with the first twelve prime bases: exact for n < 3.3·10^24, far above any
    prime these environments generate."""
    if n < 2:
        return False
    for p in _MR_BASES:
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d, s = d // 2, s + 1
    for a in _MR_BASES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def first_primes(count: int) -> list[int]:
    out: list[int] = []
    c = 2
    while len(out) < count:
        if is_prime(c):
            out.append(c)
        c += 1
    return out


def factorize(n: int) -> list[int]:
    """Prime factors of ``n`` with multiplicity, ascending, by trial division (the numbers
    factored here have small prime factors by construction)."""
    out: list[int] = []
    p = 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1 if p == 2 else 2
    if n > 1:
        out.append(n)
    return out


def totient(n: int) -> int:
    """Euler's φ(n) for n ≥ 1: n · Π (1 − 1/p) over the distinct primes p dividing n."""
    phi = n
    for p in set(factorize(n)):
        phi -= phi // p
    return phi


def mobius_table(n: int) -> list[int]:
    """μ(0..n) by a linear sieve (μ(0) is unused and set to 0)."""
    mu = [1] * (n + 1)
    if n >= 0:
        mu[0] = 0
    is_comp = [False] * (n + 1)
    primes: list[int] = []
    for i in range(2, n + 1):
        if not is_comp[i]:
            primes.append(i)
            mu[i] = -1
        for p in primes:
            if i * p > n:
                break
            is_comp[i * p] = True
            if i % p == 0:
                mu[i * p] = 0
                break
            mu[i * p] = -mu[i]
    return mu


def decimal_digits(*numbers: int) -> float:
    """The total count of decimal digits of ``numbers`` (signs not counted): a size measure."""
    return float(sum(len(str(abs(x))) for x in numbers))
