"""Counting with number theory: gcd/lcm pair counts, divisibility, factorials, Fibonacci-like
sequences, bitwise sums and binomial sums (RLVE catalogue rows, Zeng et al. 2025, "RLVE:
Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A).

Every answer is one integer. The verifier recomputes it with a fast method (Möbius sums,
parametrisations, extended Euclid, closed forms) and gives RLVE's count reward (min/max)^10;
``solve`` is an independent brute force over the definition, so the two cross-check each other
in the tests. The one residue answer (a binomial sum modulo p) is right or wrong.
"""

from __future__ import annotations

import functools
import math
import random
from fractions import Fraction
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Instance,
    graded,
    invalid,
    parse_int,
)
from verirl.envs.kit.answers import FastCount
from verirl.envs.kit.numbers import factorize, is_prime, mobius_table
from verirl.types import Problem, Verdict


def _grow(base: float, rate: float, difficulty: int) -> int:
    return int(base * rate**difficulty)


@ENVIRONMENTS.register("add_multiple_divisible_counting")
class AddMultipleDivisibleCounting(FastCount):
    """Pairs L ≤ a < b ≤ R with a·b divisible by a + b (RLVE AddMultiple_Divisible_Counting).

    Fast count: with g = gcd(a, b), a = g·x, b = g·y (x < y coprime), (x + y) | g, so
    a = t·x·(x + y), b = t·y·(x + y) for t ≥ 1; count the t in range for each (x, y)."""

    difficulty_scales = "upper bound R ≤ 30·1.15^d; lower bound L in 1..R/2"
    size_measure = "upper bound R (brute force checks R²/2 pairs)"
    size_param = "r"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        r = rng.randint(6, _grow(30, 1.15, difficulty))
        lo = rng.randint(1, max(1, r // 2))
        prompt = (
            f"How many pairs of integers (a, b) satisfy {lo} ≤ a < b ≤ {r} and the product "
            "a × b is divisible by the sum a + b?"
        )
        return self.instance(prompt, {"l": lo, "r": r})

    def count(self, data: dict[str, Any]) -> int:
        lo, r = data["l"], data["r"]
        total = 0
        y = 2
        while y * (y + 1) <= r:
            for x in range(1, y):
                if y * (x + y) > r:
                    break
                if math.gcd(x, y) != 1:
                    continue
                t_min = -(-lo // (x * (x + y)))
                t_max = r // (y * (x + y))
                total += max(0, t_max - t_min + 1)
            y += 1
        return total

    def solve_int(self, problem: Problem) -> int:
        lo, r = problem.data["l"], problem.data["r"]
        return sum(1 for a in range(lo, r + 1) for b in range(a + 1, r + 1) if a * b % (a + b) == 0)


@ENVIRONMENTS.register("gcd_one_counting")
class GcdOneCounting(FastCount):
    """Pairs (x, y) in [1, N] × [1, M] with gcd(x, y) = 1 (RLVE GCDOne_Counting); fast count
    Σ_d μ(d)·⌊N/d⌋·⌊M/d⌋."""

    difficulty_scales = "N, M ≤ 15·1.2^d"
    size_measure = "N (the search space is N·M pairs)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = _grow(15, 1.2, difficulty)
        n, m = rng.randint(1, top), rng.randint(1, top)
        prompt = (
            f"How many pairs of integers (x, y) with 1 ≤ x ≤ {n} and 1 ≤ y ≤ {m} satisfy "
            "gcd(x, y) = 1?"
        )
        return self.instance(prompt, {"n": n, "m": m})

    def count(self, data: dict[str, Any]) -> int:
        n, m = data["n"], data["m"]
        mu = mobius_table(min(n, m))
        return sum(mu[d] * (n // d) * (m // d) for d in range(1, min(n, m) + 1))

    def solve_int(self, problem: Problem) -> int:
        n, m = problem.data["n"], problem.data["m"]
        return sum(1 for x in range(1, n + 1) for y in range(1, m + 1) if math.gcd(x, y) == 1)


@ENVIRONMENTS.register("gcd_prime_counting")
class GcdPrimeCounting(FastCount):
    """Pairs (x, y) in [1, N] × [1, M] whose gcd is a prime (RLVE GCDPrime_Counting); fast
    count Σ_p Σ_d μ(d)·⌊N/pd⌋·⌊M/pd⌋ over primes p."""

    difficulty_scales = "N, M ≤ 15·1.2^d"
    size_measure = "N (the search space is N·M pairs)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = _grow(15, 1.2, difficulty)
        n, m = rng.randint(2, top + 1), rng.randint(2, top + 1)
        prompt = (
            f"How many pairs of integers (x, y) with 1 ≤ x ≤ {n} and 1 ≤ y ≤ {m} satisfy that "
            "gcd(x, y) is a prime number?"
        )
        return self.instance(prompt, {"n": n, "m": m})

    def count(self, data: dict[str, Any]) -> int:
        n, m = data["n"], data["m"]
        k = min(n, m)
        mu = mobius_table(k)
        total = 0
        for p in range(2, k + 1):
            if mu[p] == -1 and is_prime(p):
                total += sum(mu[d] * (n // (p * d)) * (m // (p * d)) for d in range(1, k // p + 1))
        return total

    def solve_int(self, problem: Problem) -> int:
        n, m = problem.data["n"], problem.data["m"]
        return sum(1 for x in range(1, n + 1) for y in range(1, m + 1) if is_prime(math.gcd(x, y)))


@ENVIRONMENTS.register("gcd_lcm_counting")
class GcdLcmCounting(FastCount):
    """Ordered pairs (P, Q) with gcd G and lcm L (RLVE GcdLcmCounting); fast count 2^ω(L/G)."""

    difficulty_scales = "L ≤ 60·1.3^d (G divides L)"
    size_measure = "L (brute force tries every P ≤ L)"
    size_param = "lcm"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        lcm = rng.randint(2, _grow(60, 1.3, difficulty))
        divisors = [g for g in range(1, math.isqrt(lcm) + 1) if lcm % g == 0]
        divisors += [lcm // g for g in divisors]
        g = rng.choice(sorted(set(divisors)))
        prompt = (
            "How many ordered pairs of positive integers (P, Q) satisfy gcd(P, Q) = "
            f"{g} and lcm(P, Q) = {lcm}?"
        )
        return self.instance(prompt, {"gcd": g, "lcm": lcm})

    def count(self, data: dict[str, Any]) -> int:
        g, lcm = data["gcd"], data["lcm"]
        if lcm % g:
            return 0
        return 2 ** len(set(factorize(lcm // g))) if lcm > g else 1

    def solve_int(self, problem: Problem) -> int:
        g, lcm = problem.data["gcd"], problem.data["lcm"]
        found = 0
        for p in range(1, lcm + 1):
            if lcm % p or (g * lcm) % p:
                continue
            q = g * lcm // p
            if math.gcd(p, q) == g and p * q // g == lcm:
                found += 1
        return found


def _ext_gcd(a: int, b: int) -> tuple[int, int, int]:
    """(g, x, y) with a·x + b·y = g = gcd(a, b) ≥ 0."""
    x0, y0, x1, y1 = 1, 0, 0, 1
    while b:
        q = a // b
        a, b = b, a - q * b
        x0, x1 = x1, x0 - q * x1
        y0, y1 = y1, y0 - q * y1
    if a < 0:
        a, x0, y0 = -a, -x0, -y0
    return a, x0, y0


@ENVIRONMENTS.register("binary_linear_equation_solution_counting")
class BinaryLinearEquationSolutionCounting(FastCount):
    """Integer solutions of a·x + b·y + c = 0 in a box (RLVE
    BinaryLinearEquation_SolutionCounting); fast count by extended Euclid."""

    difficulty_scales = "coefficients and box bounds up to 8·1.3^d in absolute value"
    size_measure = "coefficient and box bound R"
    size_param = "range"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        big = _grow(8, 1.3, difficulty)
        a = rng.choice([-1, 1]) * rng.randint(1, big)
        b = rng.choice([-1, 1]) * rng.randint(1, big)
        x1, y1 = rng.randint(-big, big), rng.randint(-big, big)
        x2, y2 = x1 + rng.randint(0, 2 * big), y1 + rng.randint(0, 2 * big)
        x0, y0 = rng.randint(x1, x2), rng.randint(y1, y2)  # usually at least one solution
        c = -(a * x0 + b * y0) + (rng.randint(1, 3) if rng.random() < 0.1 else 0)
        prompt = (
            f"How many pairs of integers (x, y) satisfy ({a})·x + ({b})·y + ({c}) = 0 with "
            f"{x1} ≤ x ≤ {x2} and {y1} ≤ y ≤ {y2}?"
        )
        data = {"a": a, "b": b, "c": c, "x1": x1, "x2": x2, "y1": y1, "y2": y2, "range": big}
        return self.instance(prompt, data)

    def count(self, data: dict[str, Any]) -> int:
        a, b, c = data["a"], data["b"], data["c"]
        g, u, v = _ext_gcd(a, b)
        if (-c) % g:
            return 0
        k = -c // g
        x0, y0 = u * k, v * k  # a·x0 + b·y0 = -c; general x = x0 + (b/g)t, y = y0 - (a/g)t
        lo, hi = -(10**30), 10**30
        for start, step, low, high in (
            (x0, b // g, data["x1"], data["x2"]),
            (y0, -a // g, data["y1"], data["y2"]),
        ):
            # low ≤ start + step·t ≤ high
            if step > 0:
                lo = max(lo, -((start - low) // step))
                hi = min(hi, (high - start) // step)
            else:
                s = -step
                lo = max(lo, -((high - start) // s))
                hi = min(hi, (start - low) // s)
        return max(0, hi - lo + 1)

    def solve_int(self, problem: Problem) -> int:
        d = problem.data
        a, b, c = d["a"], d["b"], d["c"]
        found = 0
        for x in range(d["x1"], d["x2"] + 1):
            rest = -c - a * x
            if rest % b == 0 and d["y1"] <= rest // b <= d["y2"]:
                found += 1
        return found


@ENVIRONMENTS.register("factorial_trailing_zero_count")
class FactorialTrailingZeroCount(FastCount):
    """Trailing zeros of N! written in base K (RLVE FactorialTrailingZeroCount); fast count by
    Legendre's formula over the prime powers of K."""

    difficulty_scales = "N ≤ 20·1.17^d, base K ≤ 16 + d"
    size_measure = "N (digits of N! grow as N log N)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(2, _grow(20, 1.17, difficulty))
        k = rng.randint(2, 16 + difficulty)
        prompt = (
            f"Compute {n}! (the factorial of {n}, written here in base 10) and express it in "
            f"base {k}. How many trailing zeros does the base-{k} representation have?"
        )
        return self.instance(prompt, {"n": n, "k": k})

    def count(self, data: dict[str, Any]) -> int:
        n, k = data["n"], data["k"]
        best = None
        for p in set(factorize(k)):
            e = factorize(k).count(p)
            legendre, q = 0, p
            while q <= n:
                legendre += n // q
                q *= p
            best = legendre // e if best is None else min(best, legendre // e)
        return int(best or 0)

    def solve_int(self, problem: Problem) -> int:
        n, k = problem.data["n"], problem.data["k"]
        value, zeros = math.factorial(n), 0
        while value % k == 0:
            value //= k
            zeros += 1
        return zeros


@ENVIRONMENTS.register("integer_factorization_counting")
class IntegerFactorizationCounting(FastCount):
    """Ways to write N as a product of at least two distinct integers > 1, order ignored (RLVE
    IntegerFactorizationCounting). Fast count: a 0/1 knapsack over the divisors of N."""

    difficulty_scales = "N ≤ 160·1.3^d"
    size_measure = "N (the number factorised)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(4, _grow(160, 1.3, difficulty))
        prompt = (
            f"In how many ways can {n} be written as a product of two or more distinct integers, "
            "each greater than 1? The order of the factors does not matter (6 × 2 and 2 × 6 "
            "are the same way)."
        )
        return self.instance(prompt, {"n": n})

    def problem_space(self, difficulty: int) -> int:
        return _grow(160, 1.3, difficulty) - 3

    def count(self, data: dict[str, Any]) -> int:
        n = data["n"]
        divisors = sorted(
            {d for i in range(1, math.isqrt(n) + 1) if n % i == 0 for d in (i, n // i)}
        )
        ways = dict.fromkeys(divisors, 0)
        ways[1] = 1  # the empty product
        for f in divisors[1:]:
            for d in reversed(divisors):  # each factor used at most once
                if d % f == 0 and ways[d // f]:
                    ways[d] += ways[d // f]
        return ways[n] - 1  # minus the single factor n itself

    def solve_int(self, problem: Problem) -> int:
        def sets(n: int, smallest: int) -> int:  # sets of distinct factors ≥ smallest
            total = 1 if n >= smallest else 0  # {n} itself
            f = smallest
            while f * (f + 1) <= n:
                if n % f == 0:
                    total += sets(n // f, f + 1)
                f += 1
            return total

        return sets(problem.data["n"], 2) - 1


@ENVIRONMENTS.register("circulating_decimal_counting")
class CirculatingDecimalCounting(FastCount):
    """Distinct values x/y (1 ≤ x ≤ N, 1 ≤ y ≤ M) that are purely periodic in base K (RLVE
    CirculatingDecimalCounting): reduced denominators coprime to K. Fast count
    Σ_{y ≤ M, gcd(y, K) = 1} #{x ≤ N : gcd(x, y) = 1} by Möbius over the divisors of y."""

    difficulty_scales = "N, M ≤ 11·1.2^d; base K ≤ 3 + d//2"
    size_measure = "N (the search space is N·M fractions)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = _grow(11, 1.2, difficulty)
        n, m, k = rng.randint(1, top), rng.randint(1, top), rng.randint(2, 3 + difficulty // 2)
        prompt = (
            f"Count the distinct rational values x/y with 1 ≤ x ≤ {n} and 1 ≤ y ≤ {m} (integers) "
            f"whose expansion in base {k} is purely periodic. A value is purely periodic in base "
            f"{k} exactly when, written as a fraction in lowest terms, its denominator is coprime "
            f"to {k}; integers count (their repeating block is 0). Equal values such as 1/2 and "
            "2/4 are counted once."
        )
        return self.instance(prompt, {"n": n, "m": m, "k": k})

    def count(self, data: dict[str, Any]) -> int:
        n, m, k = data["n"], data["m"], data["k"]
        mu = mobius_table(m)
        coprime_x = [0] * (m + 1)  # coprime_x[y] = #{x ≤ N : gcd(x, y) = 1}
        for d in range(1, m + 1):
            if mu[d]:
                for y in range(d, m + 1, d):
                    coprime_x[y] += mu[d] * (n // d)
        return sum(coprime_x[y] for y in range(1, m + 1) if math.gcd(y, k) == 1)

    def solve_int(self, problem: Problem) -> int:
        n, m, k = problem.data["n"], problem.data["m"], problem.data["k"]
        values = {Fraction(x, y) for x in range(1, n + 1) for y in range(1, m + 1)}
        return sum(1 for v in values if math.gcd(v.denominator, k) == 1)


@ENVIRONMENTS.register("fibonacci_containing_counting")
class FibonacciContainingCounting(FastCount):
    """Pairs of positive (a, b) whose sequence f(0) = a, f(1) = b, f(n) = f(n−1) + f(n−2)
    reaches K at some n ≥ 2 (RLVE FibonacciContainingCounting). Fast count: f(n) =
    F(n−1)·a + F(n)·b, solved for each n, pairs collected in a set."""

    difficulty_scales = "K ≤ 150·1.12^d"
    size_measure = "K (brute force tries K² start pairs)"
    size_param = "k"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        k = rng.randint(2, _grow(150, 1.12, difficulty))
        prompt = (
            "How many pairs of positive integers (a, b) are there such that the sequence "
            "f(0) = a, f(1) = b, f(n) = f(n−1) + f(n−2) for n ≥ 2 has f(n) = "
            f"{k} for at least one n ≥ 2?"
        )
        return self.instance(prompt, {"k": k})

    def problem_space(self, difficulty: int) -> int:
        return _grow(150, 1.12, difficulty) - 1

    def count(self, data: dict[str, Any]) -> int:
        k = data["k"]
        pairs: set[tuple[int, int]] = set()
        fa, fb = 1, 1  # f(n) = fa·a + fb·b, starting at n = 2
        while fa + fb <= k:
            for a in range(1, (k - fb) // fa + 1):
                rest = k - fa * a
                if rest % fb == 0 and rest // fb >= 1:
                    pairs.add((a, rest // fb))
            fa, fb = fb, fa + fb
        return len(pairs)

    def solve_int(self, problem: Problem) -> int:
        k = problem.data["k"]
        found = 0
        for a in range(1, k + 1):
            for b in range(1, k + 1):
                x, y = a, b
                while x + y < k:
                    x, y = y, x + y
                found += x + y == k
        return found


@ENVIRONMENTS.register("energy_storage_meter")
class EnergyStorageMeter(FastCount):
    """Σ max((i XOR j) − K, 0) over 0 ≤ i < N, 0 ≤ j < M (RLVE EnergyStorageMeter). Fast
    count: for each i, [0, M) splits into aligned power-of-two blocks whose XOR images are
    intervals with a closed-form sum."""

    difficulty_scales = "N, M ≤ 10·1.2^d; K below the largest XOR"
    size_measure = "N (the search space is N·M pairs)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = _grow(10, 1.2, difficulty)
        n, m = rng.randint(1, top), rng.randint(1, top)
        k = rng.randint(0, max(n, m))
        prompt = (
            f"Compute the sum of max((i XOR j) − {k}, 0) over all pairs of integers (i, j) with "
            f"0 ≤ i < {n} and 0 ≤ j < {m}, where XOR is the bitwise exclusive or."
        )
        return self.instance(prompt, {"n": n, "m": m, "k": k})

    def count(self, data: dict[str, Any]) -> int:
        n, m, k = data["n"], data["m"], data["k"]

        def clipped_sum(lo: int, hi: int) -> int:  # Σ_{v=lo}^{hi-1} max(v - k, 0)
            lo = max(lo, k + 1)
            if lo >= hi:
                return 0
            return (lo - k + hi - 1 - k) * (hi - lo) // 2

        total = 0
        for i in range(n):
            for bit in range(m.bit_length()):
                if m >> bit & 1:
                    start = (m >> (bit + 1)) << (bit + 1)  # block [start, start + 2^bit)
                    lo = (i ^ start) >> bit << bit
                    total += clipped_sum(lo, lo + (1 << bit))
        return total

    def solve_int(self, problem: Problem) -> int:
        n, m, k = problem.data["n"], problem.data["m"], problem.data["k"]
        return sum(max((i ^ j) - k, 0) for i in range(n) for j in range(m))


@ENVIRONMENTS.register("halving_chain_counting")
class HalvingChainCounting(FastCount):
    """Sequences that start at N where each next term is a positive integer at most half of
    the previous one (RLVE HalvingChainCounting); fast count by prefix sums of
    f(n) = 1 + Σ_{k ≤ n/2} f(k)."""

    difficulty_scales = "N ≤ 150·1.2^d"
    size_measure = "N (the first term; the count grows with it)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(1, _grow(150, 1.2, difficulty))
        prompt = (
            f"Count the finite sequences of positive integers whose first term is {n} and in "
            "which every later term is at most half of the term before it (for example, after "
            "7 the next term can be 1, 2 or 3). The sequence may stop after any term, so the "
            f"one-term sequence ({n}) counts too."
        )
        return self.instance(prompt, {"n": n})

    def problem_space(self, difficulty: int) -> int:
        return _grow(150, 1.2, difficulty)

    def count(self, data: dict[str, Any]) -> int:
        n = data["n"]
        f = [0] * (n + 1)
        prefix = [0] * (n + 1)
        for v in range(1, n + 1):
            f[v] = 1 + prefix[v // 2]
            prefix[v] = prefix[v - 1] + f[v]
        return f[n]

    def solve_int(self, problem: Problem) -> int:
        @functools.cache
        def chains(v: int) -> int:  # the definition: stop here, or continue with any w ≤ v/2
            return 1 + sum(chains(w) for w in range(1, v // 2 + 1))

        return chains(problem.data["n"])


@ENVIRONMENTS.register("fixed_mod_k_selection_counting")
class FixedModKSelectionCounting(FastCount):
    """(Σ_{i ≥ 0} C(n·k, i·k + r)) mod p (RLVE FixedModK_Selection_Counting): right or wrong,
    an answer outside [0, p) is invalid. Fast: (1 + x)^{nk} modulo x^k − 1 and p by repeated
    squaring; brute: the binomial sum."""

    tags = ("rlve", "residue")
    difficulty_scales = "n ≤ 8 + 3d, k ≤ 3 + d//3; p a prime below 10^4 + 10^3·d"
    size_measure = "n (the binomial sum has about n terms)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(1, 8 + 3 * difficulty)
        k = rng.randint(2, 3 + difficulty // 3)
        r = rng.randrange(k)
        p = rng.randint(1000, 10_000 + 1000 * difficulty)
        while not is_prime(p):
            p += 1
        prompt = (
            f"Let n = {n}, k = {k}, r = {r} and p = {p}. Compute (Σ_{{i ≥ 0}} C(n·k, i·k + r)) "
            "mod p, where C(a, b) is the binomial coefficient (0 when b > a). Give an integer "
            f"from 0 to {p - 1}."
        )
        return self.instance(prompt, {"n": n, "k": k, "r": r, "p": p})

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer)
        if not 0 <= value < problem.data["p"]:
            return invalid("the answer must be a remainder, between 0 and p − 1")
        ok = value == self.count(dict(problem.data))
        return graded(0.0, ok, "correct" if ok else "the remainder is not right")

    def count(self, data: dict[str, Any]) -> int:
        n, k, r, p = data["n"], data["k"], data["r"], data["p"]

        def mul(u: list[int], v: list[int]) -> list[int]:
            out = [0] * k
            for i, a in enumerate(u):
                if a:
                    for j, b in enumerate(v):
                        out[(i + j) % k] = (out[(i + j) % k] + a * b) % p
            return out

        result = [1 % p] + [0] * (k - 1)
        base = [0] * k
        base[0] = 1
        base[1 % k] = (base[1 % k] + 1) % p
        e = n * k
        while e:
            if e & 1:
                result = mul(result, base)
            base = mul(base, base)
            e >>= 1
        return result[r]

    def solve_int(self, problem: Problem) -> int:
        n, k, r, p = (problem.data[x] for x in ("n", "k", "r", "p"))
        return sum(math.comb(n * k, i) for i in range(r, n * k + 1, k)) % p
