"""Digits and multiplicative orders: integers up to N with non-increasing digits or with a
given digit sum, palindromes in a range, the multiplicative order of a modulo m, a binomial
coefficient modulo a prime (Lucas) and the Pisano period.

Number rows in the spirit of RLVE-Gym (Zeng et al. 2025, "RLVE: Scaling Up Reinforcement
Learning for Language Models with Adaptive Verifiable Environments", arXiv:2511.07317,
Appendix A: DecreasingDigitCounting, DigitLISCounting, DiscreteLogarithm). Generators use
digit DP, Lucas' theorem or the divisors of λ(m); ``solve_int`` brute-forces where the range
is small and uses a second method otherwise (stars and bars, a different digit DP, direct
multiplication, math.comb), so the contract tests cross-check them. Answers are integers
scored with RLVE's (min/max)^10.
"""

from __future__ import annotations

import functools
import math
import random

from verirl.envs.base import ENVIRONMENTS, Instance
from verirl.envs.kit.answers import SizedInteger
from verirl.envs.kit.numbers import totient
from verirl.types import Problem

TAGS = ("number_theory", "digits")


def _non_increasing_up_to(n: int) -> int:
    """Digit DP: numbers 1..n whose digits never increase from left to right."""
    digits = list(map(int, str(n)))

    @functools.cache
    def go(pos: int, prev: int, tight: bool, started: bool) -> int:
        if pos == len(digits):
            return int(started)
        top = digits[pos] if tight else 9
        total = 0
        for d in range(0, top + 1):
            if started and d > prev:
                break
            total += go(pos + 1, d if (started or d) else 9, tight and d == top, started or d > 0)
        return total

    return go(0, 9, True, False)


@ENVIRONMENTS.register("non_increasing_digit_counting")
class NonIncreasingDigitCounting(SizedInteger):
    """How many integers in [1, N] have digits that never increase (like 9751 or 333)."""

    tags = TAGS
    difficulty_scales = "N with 3 + d digits"
    size_measure = "digits of N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randrange(10 ** (2 + difficulty), 10 ** (3 + difficulty))
        prompt = (
            f"How many integers x with 1 ≤ x ≤ {n} have decimal digits that never increase "
            "from left to right (each digit is at most the digit before it, as in 9751, 333 "
            "or 80)?"
        )
        return Instance(prompt, str(_non_increasing_up_to(n)), {"n": n, "size": len(str(n))})

    def solve_int(self, problem: Problem) -> int:
        """Count by length with stars and bars (a non-increasing word of length L over 0..9
        is a multiset: C(L + 9, 9), minus the all-zero one), then for N's own length walk
        its digits."""
        n = problem.data["n"]
        if n <= 50_000:
            return sum(1 for x in range(1, n + 1) if list(str(x)) == sorted(str(x), reverse=True))
        s = str(n)
        total = sum(math.comb(length + 9, 9) - 1 for length in range(1, len(s)))
        # numbers of exactly len(s) digits: first digit ≥ 1; count those ≤ n digit by digit
        # words over digits ≤ d of length L that are non-increasing: C(L + d, d)
        prev = 9
        for i, ch in enumerate(s):
            d = int(ch)
            rest = len(s) - i - 1
            lo = 1 if i == 0 else 0
            for smaller in range(lo, min(d, prev + 1)):
                total += math.comb(rest + smaller, smaller)  # the rest: digits ≤ smaller
            if d > prev:
                return total
            prev = d
        return total + 1  # n itself


@ENVIRONMENTS.register("digit_sum_counting")
class DigitSumCounting(SizedInteger):
    """How many integers in [1, N] have digit sum S."""

    tags = TAGS
    difficulty_scales = "N with 3 + d digits"
    size_measure = "digits of N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randrange(10 ** (2 + difficulty), 10 ** (3 + difficulty))
        target = rng.randint(2, 9 * (3 + difficulty) // 2)
        prompt = (
            f"How many integers x with 1 ≤ x ≤ {n} have a sum of decimal digits equal to {target}?"
        )
        digits = list(map(int, str(n)))

        @functools.cache
        def go(pos: int, left: int, tight: bool) -> int:
            if left < 0:
                return 0
            if pos == len(digits):
                return int(left == 0)
            top = digits[pos] if tight else 9
            return sum(go(pos + 1, left - d, tight and d == top) for d in range(top + 1))

        return Instance(
            prompt, str(go(0, target, True)), {"n": n, "target": target, "size": len(digits)}
        )

    def solve_int(self, problem: Problem) -> int:
        """Split at each digit of N: below it the tail is free, counted by a table of ways
        to write a sum with L digits."""
        n, target = problem.data["n"], problem.data["target"]
        if n <= 50_000:
            return sum(1 for x in range(1, n + 1) if sum(map(int, str(x))) == target)
        s = str(n)
        ways = [[1] + [0] * target]  # ways[L][t]: L free digits summing to t
        for _ in range(len(s)):
            last = ways[-1]
            ways.append(
                [sum(last[t - d] for d in range(10) if t - d >= 0) for t in range(target + 1)]
            )
        total, used = 0, 0
        for i, ch in enumerate(s):
            rest = len(s) - i - 1
            for d in range(int(ch)):
                if used + d <= target:
                    total += ways[rest][target - used - d]
            used += int(ch)
        return total + (used == target)


@ENVIRONMENTS.register("palindrome_range_counting")
class PalindromeRangeCounting(SizedInteger):
    """How many palindromes lie in [L, R]."""

    tags = TAGS
    difficulty_scales = "R with 3 + d digits"
    size_measure = "digits of R"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        hi = rng.randrange(10 ** (2 + difficulty), 10 ** (3 + difficulty))
        lo = rng.randint(1, hi)
        prompt = (
            f"How many integers x with {lo} ≤ x ≤ {hi} are palindromes (read the same "
            "forwards and backwards in decimal, like 7, 44 or 12321)?"
        )
        answer = _palindromes_up_to(hi) - _palindromes_up_to(lo - 1)
        return Instance(prompt, str(answer), {"lo": lo, "hi": hi, "size": len(str(hi))})

    def solve_int(self, problem: Problem) -> int:
        """Generate the palindromes from their halves when the range is long."""
        lo, hi = problem.data["lo"], problem.data["hi"]
        if hi - lo <= 50_000:
            return sum(1 for x in range(lo, hi + 1) if str(x) == str(x)[::-1])
        count = 0
        for length in range(len(str(lo)), len(str(hi)) + 1):
            half = (length + 1) // 2
            first, last = 10 ** (half - 1), 10**half - 1

            # the palindromes of this length grow with their first half: binary search
            def make(h: int, length: int = length) -> int:
                t = str(h)
                return int(t + t[: length // 2][::-1])

            def first_at_least(v: int, first: int = first, last: int = last) -> int:
                a, b = first, last + 1
                while a < b:
                    m = (a + b) // 2
                    if make(m) >= v:
                        b = m
                    else:
                        a = m + 1
                return a

            count += first_at_least(hi + 1) - first_at_least(lo)
        return count


def _palindromes_up_to(n: int) -> int:
    """Palindromes in [1, n]: all shorter lengths (9·10^(⌈L/2⌉-1) each) plus those of n's
    length whose first half is below n's, and n's own mirror if it fits."""
    if n <= 0:
        return 0
    s = str(n)
    total = sum(9 * 10 ** ((length + 1) // 2 - 1) for length in range(1, len(s)))
    half = s[: (len(s) + 1) // 2]
    total += int(half) - 10 ** (len(half) - 1)
    mirror = int(half + half[: len(s) // 2][::-1])
    return total + (mirror <= n)


def _prime_factors(n: int) -> list[int]:
    out, p = [], 2
    while p * p <= n:
        if n % p == 0:
            out.append(p)
            while n % p == 0:
                n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


@ENVIRONMENTS.register("multiplicative_order")
class MultiplicativeOrder(SizedInteger):
    """The least k ≥ 1 with a^k ≡ 1 (mod m), for gcd(a, m) = 1."""

    tags = TAGS
    difficulty_scales = "modulus m up to 50·2^d (at most 10^9)"
    size_measure = "bits of the modulus"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = min(10**9, 50 * 2**difficulty)
        while True:
            m = rng.randint(max(5, top // 4), top)
            a = rng.randint(2, m - 1)
            if math.gcd(a, m) == 1:
                break
        prompt = (
            f"What is the smallest positive integer k such that {a}^k leaves remainder 1 when "
            f"divided by {m}?"
        )
        order = totient(m)  # the order divides φ(m): strip prime factors while it still works
        for p in _prime_factors(order):
            while order % p == 0 and pow(a, order // p, m) == 1:
                order //= p
        return Instance(prompt, str(order), {"a": a, "m": m, "size": m.bit_length()})

    def solve_int(self, problem: Problem) -> int:
        """Multiply step by step while short; otherwise the least divisor of φ(m) that works."""
        a, m = problem.data["a"], problem.data["m"]
        if m <= 200_000:
            x, k = a % m, 1
            while x != 1:
                x, k = x * a % m, k + 1
            return k
        phi = totient(m)
        divisors = sorted(
            {d for i in range(1, math.isqrt(phi) + 1) if phi % i == 0 for d in (i, phi // i)}
        )
        return next(d for d in divisors if pow(a, d, m) == 1)


@ENVIRONMENTS.register("lucas_binomial_mod")
class LucasBinomialMod(SizedInteger):
    """C(n, k) modulo a small prime p, for large n (Lucas' theorem)."""

    tags = TAGS
    difficulty_scales = "n up to 10^(2 + d//2) (at most 10^12); p a prime below 40"
    size_measure = "digits of n"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(10, 10 ** min(12, 2 + difficulty // 2))
        k = rng.randint(1, n - 1)
        p = rng.choice([2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37])
        prompt = (
            f"What is the remainder of the binomial coefficient C({n}, {k}) when divided by {p}?"
        )
        out, a, b = 1, n, k
        while a or b:
            ai, bi = a % p, b % p
            out = out * math.comb(ai, bi) % p  # comb is 0 when bi > ai
            a, b = a // p, b // p
        return Instance(prompt, str(out), {"n": n, "k": k, "p": p, "size": len(str(n))})

    def solve_int(self, problem: Problem) -> int:
        """Exact binomial when small; otherwise Kummer: p divides C(n, k) iff adding k and
        n - k in base p carries, else the product of the digit binomials."""
        n, k, p = problem.data["n"], problem.data["k"], problem.data["p"]
        if n <= 3000:
            return math.comb(n, k) % p
        out, a, b = 1, k, n - k
        while a or b:
            da, db = a % p, b % p
            if da + db >= p:
                return 0
            out = (
                out
                * math.factorial(da + db)
                * pow(math.factorial(da) * math.factorial(db), -1, p)
                % p
            )
            a, b = a // p, b // p
        return out


@ENVIRONMENTS.register("pisano_period")
class PisanoPeriod(SizedInteger):
    """The period of the Fibonacci numbers modulo m."""

    tags = TAGS
    difficulty_scales = "m in [10, 40 + 100d] (at most 3000)"
    size_measure = "the modulus"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        m = rng.randint(10, min(3000, 40 + 100 * difficulty))
        prompt = (
            "The Fibonacci numbers are F(0) = 0, F(1) = 1, F(n) = F(n-1) + F(n-2). Their "
            f"remainders modulo {m} repeat with some period. What is the smallest positive "
            f"integer P such that F(n + P) ≡ F(n) (mod {m}) for every n ≥ 0?"
        )
        a, b, period = 0, 1, 0
        while True:
            a, b = b, (a + b) % m
            period += 1
            if (a, b) == (0, 1):
                break
        return Instance(prompt, str(period), {"m": m, "size": m})

    def problem_space(self, difficulty: int) -> int | None:
        return min(3000, 40 + 100 * difficulty) - 9

    def solve_int(self, problem: Problem) -> int:
        """The period is the order of the matrix [[1, 1], [1, 0]] modulo m (M^n holds F(n)
        and F(n + 1)), which is at most 6m: test each candidate with fast matrix powers."""
        m = problem.data["m"]

        def mat_pow(e: int) -> tuple[int, int, int, int]:
            r = (1, 0, 0, 1)
            base = (1, 1, 1, 0)
            while e:
                if e & 1:
                    r = _mul(r, base, m)
                base, e = _mul(base, base, m), e >> 1
            return r

        for d in range(1, 6 * m + 1):
            if mat_pow(d) == (1, 0, 0, 1):
                return d
        raise AssertionError("the Pisano period is at most 6m")


def _mul(
    x: tuple[int, int, int, int], y: tuple[int, int, int, int], m: int
) -> tuple[int, int, int, int]:
    a, b, c, d = x
    e, f, g, h = y
    return ((a * e + b * g) % m, (a * f + b * h) % m, (c * e + d * g) % m, (c * f + d * h) % m)
