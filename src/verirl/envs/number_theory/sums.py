"""Number theory, sums over ranges: Σ d(i), Σ gcd, Σ lcm, Σ (n mod i), Σ (x − φ(x)), ...

RLVE-Gym rows Sum_DivisorNum, SumGCD, SumGCDWithIndividual, SumLCM, SumMOD, SumPHIInterval,
SumProductDivisorNum, SumXorDivisorNum, SumPseudoEuclidean, SumManhattan_CurvedSurface,
TwoSet_AllCoprime_Counting and SumSetMultiplication (Zeng et al. 2025, "RLVE: Scaling Up
Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A).

Every answer is one integer scored with RLVE's count reward (min/max)^10 and ``correct`` only
for the exact value (the residue of SumSetMultiplication is right or wrong). Each generator
computes the stored answer one way (usually brute force over the range) and the verifier's
solver another (a divisor-sum identity, Möbius inversion, a segmented sieve, Newton's
identities), so the two cross-check each other in the contract tests.
"""

from __future__ import annotations

import math
import random

from verirl.envs.base import ENVIRONMENTS, Instance, IntegerAnswer, graded, invalid, parse_int
from verirl.envs.kit.numbers import factorize, mobius_table, totient
from verirl.types import Problem, Verdict

TAGS = ("rlve", "number_theory")


def divisor_counts(limit: int) -> list[int]:
    """d(0..limit) by a divisor sieve, with d(0) = 0."""
    d = [0] * (limit + 1)
    for k in range(1, limit + 1):
        for m in range(k, limit + 1, k):
            d[m] += 1
    return d


def divisor_count_by_factoring(n: int) -> int:
    """d(n) from the prime factorisation of ``n`` (d(0) = 0)."""
    if n == 0:
        return 0
    exps: dict[int, int] = {}
    for p in factorize(n):
        exps[p] = exps.get(p, 0) + 1
    return math.prod(e + 1 for e in exps.values())


def divisor_summatory(n: int) -> int:
    """D(n) = Σ_{i ≤ n} d(i) = Σ_{k ≤ n} ⌊n/k⌋, in O(√n) blocks of equal quotient."""
    total, k = 0, 1
    while k <= n:
        q = n // k
        last = n // q
        total += q * (last - k + 1)
        k = last + 1
    return total


def _grow(base: int, ratio: float, difficulty: int, cap: int) -> int:
    """RLVE's multiplicative ladder ``base · ratio^d``, capped to keep d = 30 fast."""
    return int(min(cap, base * ratio**difficulty))


class _RangeSum(IntegerAnswer):
    tags = TAGS
    size_measure = "sum of the numbers that bound the ranges (the brute-force search space)"
    pair_bound: tuple[int, int] | None = None  # (5, c): N, M uniform in [2, 5 + c·d]

    def problem_space(self, difficulty: int) -> int | None:
        if self.pair_bound is None:
            return None
        base, step = self.pair_bound
        return min(10**9, (base + step * difficulty - 1) ** 2)

    def size(self, problem: Problem) -> float:
        return float(sum(v for v in problem.data.values() if isinstance(v, int)))


@ENVIRONMENTS.register("sum_divisor_num")
class SumDivisorNum(_RangeSum):
    """Σ d(i) over an interval [L, R], d = number of positive divisors."""

    difficulty_scales = "R up to 10·1.5^d (at most 10^6); L uniform in [1, R]"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        r = rng.randint(
            max(2, _grow(10, 1.5, difficulty, 10**6) // 2), _grow(10, 1.5, difficulty, 10**6)
        )
        lo = rng.randint(1, r)
        total = sum(r // k - (lo - 1) // k for k in range(1, r + 1))  # multiples of k in [L, R]
        prompt = (
            f"Let d(i) be the number of positive divisors of i. Compute the sum of d(i) over all "
            f"integers i with {lo} ≤ i ≤ {r}."
        )
        return Instance(prompt, str(total), {"low": lo, "high": r})

    def solve_int(self, problem: Problem) -> int:
        return divisor_summatory(problem.data["high"]) - divisor_summatory(problem.data["low"] - 1)

    def problem_space(self, difficulty: int) -> int | None:
        top = _grow(10, 1.5, difficulty, 10**6)
        return min(10**9, sum(range(max(2, top // 2), top + 1)))


@ENVIRONMENTS.register("sum_gcd")
class SumGcd(_RangeSum):
    """Σ gcd(i, j)^K over a rectangle of pairs."""

    pair_bound = (5, 4)
    difficulty_scales = "N, M up to 5 + 4d; exponent K = 1 + d//10"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = (rng.randint(2, 5 + 4 * difficulty) for _ in range(2))
        k = 1 + difficulty // 10
        total = sum(math.gcd(i, j) ** k for i in range(1, n + 1) for j in range(1, m + 1))
        power = "GCD(i, j)" if k == 1 else f"GCD(i, j)^{k}"
        prompt = (
            f"Compute the sum of {power} over all pairs of integers (i, j) with 1 ≤ i ≤ {n} and "
            f"1 ≤ j ≤ {m}, where GCD is the greatest common divisor."
        )
        return Instance(prompt, str(total), {"n": n, "m": m, "k": k})

    def solve_int(self, problem: Problem) -> int:
        n, m, k = problem.data["n"], problem.data["m"], problem.data["k"]
        top = min(n, m)
        exact = [0] * (top + 1)  # exact[g] = pairs whose gcd is exactly g
        for g in range(top, 0, -1):
            exact[g] = (n // g) * (m // g) - sum(exact[g * t] for t in range(2, top // g + 1))
        return sum(g**k * exact[g] for g in range(1, top + 1))


@ENVIRONMENTS.register("sum_gcd_with_individual")
class SumGcdWithIndividual(_RangeSum):
    """Σ_{i ≤ N} gcd(i, N)."""

    difficulty_scales = "N up to 32·1.5^d (at most 2·10^5)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = _grow(32, 1.5, difficulty, 200_000)
        n = rng.randint(max(2, top // 2), top)
        total = sum(math.gcd(i, n) for i in range(1, n + 1))
        prompt = f"Compute the sum of GCD(i, {n}) over all integers i with 1 ≤ i ≤ {n}."
        return Instance(prompt, str(total), {"n": n})

    def solve_int(self, problem: Problem) -> int:
        n = problem.data["n"]  # Σ_{g | n} g · φ(n / g)
        divisors = [g for g in range(1, math.isqrt(n) + 1) if n % g == 0]
        divisors += [n // g for g in divisors if g * g != n]
        return sum(g * totient(n // g) for g in divisors)

    def problem_space(self, difficulty: int) -> int | None:
        top = _grow(32, 1.5, difficulty, 200_000)
        return min(10**9, top - max(2, top // 2) + 1)


@ENVIRONMENTS.register("sum_lcm")
class SumLcm(_RangeSum):
    """Σ lcm(i, j) over a rectangle of pairs."""

    pair_bound = (5, 4)
    difficulty_scales = "N, M up to 5 + 4d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = (rng.randint(2, 5 + 4 * difficulty) for _ in range(2))
        total = sum(math.lcm(i, j) for i in range(1, n + 1) for j in range(1, m + 1))
        prompt = (
            f"Compute the sum of LCM(i, j) over all pairs of integers (i, j) with 1 ≤ i ≤ {n} "
            f"and 1 ≤ j ≤ {m}, where LCM is the least common multiple."
        )
        return Instance(prompt, str(total), {"n": n, "m": m})

    def solve_int(self, problem: Problem) -> int:
        n, m = problem.data["n"], problem.data["m"]
        top = min(n, m)
        mu = mobius_table(top)

        def tri(x: int) -> int:
            return x * (x + 1) // 2

        # lcm(i, j) = i j / g; coprime pairs (a, b) by Möbius: Σ_e μ(e) e² S(N/ge) S(M/ge)
        total = 0
        for g in range(1, top + 1):
            a, b = n // g, m // g
            coprime = sum(
                mu[e] * e * e * tri(a // e) * tri(b // e) for e in range(1, min(a, b) + 1)
            )
            total += g * coprime
        return total


@ENVIRONMENTS.register("sum_mod")
class SumMod(_RangeSum):
    """Σ (N mod i)(M mod j) over pairs with i ≠ j."""

    pair_bound = (5, 8)
    difficulty_scales = "N, M up to 5 + 8d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = (rng.randint(2, 5 + 8 * difficulty) for _ in range(2))
        total = sum((n % i) * (m % j) for i in range(1, n + 1) for j in range(1, m + 1) if i != j)
        prompt = (
            f"Compute the sum of ({n} mod i) × ({m} mod j) over all pairs of integers (i, j) "
            f"with 1 ≤ i ≤ {n}, 1 ≤ j ≤ {m} and i ≠ j."
        )
        return Instance(prompt, str(total), {"n": n, "m": m})

    def solve_int(self, problem: Problem) -> int:
        n, m = problem.data["n"], problem.data["m"]
        all_pairs = sum(n % i for i in range(1, n + 1)) * sum(m % j for j in range(1, m + 1))
        return all_pairs - sum((n % i) * (m % i) for i in range(1, min(n, m) + 1))


@ENVIRONMENTS.register("sum_phi_interval")
class SumPhiInterval(_RangeSum):
    """Σ (x − φ(x)) over an interval: the integers in [1, x] not coprime to x."""

    difficulty_scales = "R up to 10^(3 + d//6); interval length 5 + 2d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        r = rng.randint(10 ** (2 + difficulty // 6), 10 ** (3 + difficulty // 6))
        lo = max(1, r - rng.randint(1, 5 + 2 * difficulty))
        # segmented sieve: φ over [lo, r] from the primes up to √r
        phi = list(range(lo, r + 1))
        rest = list(range(lo, r + 1))
        root = math.isqrt(r)
        sieve = bytearray([1]) * (root + 1)
        for p in range(2, root + 1):
            if not sieve[p]:
                continue
            sieve[p * p :: p] = bytearray(len(range(p * p, root + 1, p)))
            for x in range((lo + p - 1) // p * p, r + 1, p):
                phi[x - lo] -= phi[x - lo] // p
                while rest[x - lo] % p == 0:
                    rest[x - lo] //= p
        for i, left in enumerate(rest):
            if left > 1:  # one prime factor above √r
                phi[i] -= phi[i] // left
        total = sum(x - f for x, f in zip(range(lo, r + 1), phi, strict=True))
        prompt = (
            "Define F(x) as the number of integers in the range [1, x] that are not coprime to x "
            f"(share a common factor greater than 1 with x). Compute F({lo}) + F({lo + 1}) + ... "
            f"+ F({r}), the sum of F(x) over all integers x with {lo} ≤ x ≤ {r}."
        )
        return Instance(prompt, str(total), {"low": lo, "high": r})

    def solve_int(self, problem: Problem) -> int:
        lo, r = problem.data["low"], problem.data["high"]
        return sum(x - totient(x) for x in range(lo, r + 1))

    def size(self, problem: Problem) -> float:
        return float(len(str(problem.data["high"])) + problem.data["high"] - problem.data["low"])


@ENVIRONMENTS.register("sum_product_divisor_num")
class SumProductDivisorNum(_RangeSum):
    """Σ d(i·j) over a rectangle of pairs."""

    pair_bound = (5, 3)
    difficulty_scales = "N, M up to 5 + 3d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = (rng.randint(2, 5 + 3 * difficulty) for _ in range(2))
        total = sum(
            divisor_count_by_factoring(i * j) for i in range(1, n + 1) for j in range(1, m + 1)
        )
        prompt = (
            "Let d(x) be the number of positive divisors of x. Compute the sum of d(i × j) over "
            f"all pairs of integers (i, j) with 1 ≤ i ≤ {n} and 1 ≤ j ≤ {m}."
        )
        return Instance(prompt, str(total), {"n": n, "m": m})

    def solve_int(self, problem: Problem) -> int:
        n, m = problem.data["n"], problem.data["m"]
        mu = mobius_table(min(n, m))  # d(ij) = Σ_{x|i, y|j, gcd(x,y)=1} 1
        return sum(
            mu[g] * divisor_summatory(n // g) * divisor_summatory(m // g)
            for g in range(1, min(n, m) + 1)
        )


@ENVIRONMENTS.register("sum_xor_divisor_num")
class SumXorDivisorNum(_RangeSum):
    """Σ d(i XOR j) over a rectangle of pairs, with d(0) = 0."""

    pair_bound = (5, 3)
    difficulty_scales = "N, M up to 5 + 3d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = (rng.randint(2, 5 + 3 * difficulty) for _ in range(2))
        d = divisor_counts(2 * max(n, m))
        total = sum(d[i ^ j] for i in range(1, n + 1) for j in range(1, m + 1))
        prompt = (
            "Let d(x) be the number of positive divisors of x, with d(0) = 0. Compute the sum of "
            f"d(i XOR j) over all pairs of integers (i, j) with 1 ≤ i ≤ {n} and 1 ≤ j ≤ {m}, "
            "where XOR is the bitwise exclusive or."
        )
        return Instance(prompt, str(total), {"n": n, "m": m})

    def solve_int(self, problem: Problem) -> int:
        n, m = problem.data["n"], problem.data["m"]
        counts: dict[int, int] = {}  # how many pairs give each XOR value
        for i in range(1, n + 1):
            for j in range(1, m + 1):
                counts[i ^ j] = counts.get(i ^ j, 0) + 1
        return sum(c * divisor_count_by_factoring(x) for x, c in counts.items())


_PSEUDO_CODE = """def f(a, b):
    if b == 0:
        return 0
    return a // b + f(b, a % b)"""


@ENVIRONMENTS.register("sum_pseudo_euclidean")
class SumPseudoEuclidean(_RangeSum):
    """Σ f(a, b) where f sums the quotients of Euclid's algorithm."""

    pair_bound = (5, 4)
    difficulty_scales = "N, M up to 5 + 4d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = (rng.randint(2, 5 + 4 * difficulty) for _ in range(2))

        def f(a: int, b: int) -> int:
            return 0 if b == 0 else a // b + f(b, a % b)

        total = sum(f(a, b) for a in range(1, n + 1) for b in range(1, m + 1))
        prompt = (
            f"Consider the function f(a, b) defined in Python as follows:\n{_PSEUDO_CODE}\n\n"
            f"Compute the sum of f(a, b) over all pairs of integers (a, b) with 1 ≤ a ≤ {n} and "
            f"1 ≤ b ≤ {m}."
        )
        return Instance(prompt, str(total), {"n": n, "m": m})

    def solve_int(self, problem: Problem) -> int:
        total = 0
        for a0 in range(1, problem.data["n"] + 1):
            for b0 in range(1, problem.data["m"] + 1):
                a, b = a0, b0
                while b:
                    q, r = divmod(a, b)
                    total += q
                    a, b = b, r
        return total


@ENVIRONMENTS.register("sum_manhattan_curved_surface")
class SumManhattanCurvedSurface(_RangeSum):
    """Σ_{k=A..B} P(k), P(k) = Σ (|x| + |y| + |z|)² over integer triples with x·y·z = k."""

    difficulty_scales = "B up to 5·1.5^d (at most 1500); A uniform in [1, B]"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        b = rng.randint(2, _grow(5, 1.5, difficulty, 1500))
        a = rng.randint(1, b)
        total = 0
        for k in range(a, b + 1):  # ordered positive triples, 4 sign patterns each
            for x in range(1, k + 1):
                if k % x:
                    continue
                for y in range(1, k // x + 1):
                    if (k // x) % y == 0:
                        total += 4 * (x + y + k // x // y) ** 2
        prompt = (
            "Define P(k) as the sum of (|x| + |y| + |z|)^2 over all integer triples (x, y, z) "
            f"such that x × y × z = k. Compute the sum of P(k) over all integers k with {a} ≤ k "
            f"≤ {b}."
        )
        return Instance(prompt, str(total), {"low": a, "high": b})

    def solve_int(self, problem: Problem) -> int:
        lo, hi = problem.data["low"], problem.data["high"]
        total = 0
        for x in range(1, hi + 1):
            for y in range(1, hi // x + 1):
                first, last = -(-lo // (x * y)), hi // (x * y)  # z with lo ≤ xyz ≤ hi
                for z in range(max(1, first), last + 1):
                    total += (x + y + z) ** 2
        return 4 * total

    def problem_space(self, difficulty: int) -> int | None:
        return min(10**9, sum(range(2, _grow(5, 1.5, difficulty, 1500) + 1)))


@ENVIRONMENTS.register("two_set_all_coprime_counting")
class TwoSetAllCoprimeCounting(_RangeSum):
    """Ordered pairs (S, T) of disjoint non-empty subsets, every cross pair coprime."""

    difficulty_scales = "set size 4 + d//3 (at most 14) from [2, 10 + 2d] (at most 40)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(14, 4 + difficulty // 3)
        values = sorted(rng.sample(range(2, min(40, 10 + 2 * difficulty) + 1), n))
        total = 0
        for s in range(1, 1 << n):  # for each S, T is any non-empty subset of the allowed rest
            allowed = sum(
                1
                for j in range(n)
                if not s >> j & 1
                and all(math.gcd(values[j], values[i]) == 1 for i in range(n) if s >> i & 1)
            )
            total += (1 << allowed) - 1
        listing = ", ".join(map(str, values))
        prompt = (
            f"You are given the set of integers {{{listing}}}. Count the ordered pairs (S, T) of "
            "subsets of it such that S and T are both non-empty, S and T have no element in "
            "common, and GCD(x, y) = 1 for every x in S and every y in T."
        )
        return Instance(prompt, str(total), {"values": values})

    def solve_int(self, problem: Problem) -> int:
        """DP over the elements; the state is (primes used by S, primes used by T, S
        non-empty, T non-empty)."""
        states: dict[tuple[frozenset[int], frozenset[int], bool, bool], int] = {
            (frozenset(), frozenset(), False, False): 1
        }
        for x in problem.data["values"]:
            ps = frozenset(factorize(x))
            nxt: dict[tuple[frozenset[int], frozenset[int], bool, bool], int] = {}
            for (a, b, sa, tb), c in states.items():
                options = [(a, b, sa, tb)]
                if not ps & b:
                    options.append((a | ps, b, True, tb))
                if not ps & a:
                    options.append((a, b | ps, sa, True))
                for key in options:
                    nxt[key] = nxt.get(key, 0) + c
            states = nxt
        return sum(c for (_, _, sa, tb), c in states.items() if sa and tb)

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["values"]))


_MOD = 10**9 + 7


@ENVIRONMENTS.register("sum_set_multiplication")
class SumSetMultiplication(_RangeSum):
    """Σ over sequences of N distinct integers from [1, K] of their product, modulo 10^9 + 7:
    N! times the elementary symmetric polynomial e_N(1, ..., K). Binary reward."""

    difficulty_scales = "N = 2 + d//3 (at most 12); K up to 8·1.5^d (at most 2000)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(12, 2 + difficulty // 3)
        k = rng.randint(n, max(n, _grow(8, 1.5, difficulty, 2000)))
        e = [1] + [0] * n  # e[j] = e_j(1..v) as v grows: multiply by (1 + v·x)
        for v in range(1, k + 1):
            for j in range(n, 0, -1):
                e[j] = (e[j] + v * e[j - 1]) % _MOD
        total = e[n] * math.factorial(n) % _MOD
        prompt = (
            f"Consider all sequences A[1], ..., A[{n}] of {n} distinct integers chosen from "
            f"[1, {k}] (order matters). Compute the sum of A[1] × A[2] × ... × A[{n}] over all "
            f"such sequences, modulo {_MOD}. Give an integer from 0 to {_MOD - 1}."
        )
        return Instance(prompt, str(total), {"n": n, "k": k})

    def solve_int(self, problem: Problem) -> int:
        """Newton's identities: j·e_j = Σ_{i=1..j} (−1)^(i−1) e_(j−i) p_i, with the power
        sums p_i = 1^i + ... + K^i (all modulo the prime)."""
        n, k = problem.data["n"], problem.data["k"]
        p = [0] * (n + 1)
        for v in range(1, k + 1):
            x = 1
            for i in range(1, n + 1):
                x = x * v % _MOD
                p[i] = (p[i] + x) % _MOD
        e = [1] + [0] * n
        for j in range(1, n + 1):
            acc = sum((-1) ** (i - 1) * e[j - i] * p[i] for i in range(1, j + 1))
            e[j] = acc % _MOD * pow(j, -1, _MOD) % _MOD
        return e[n] * math.factorial(n) % _MOD

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer)
        if not 0 <= value < _MOD:
            return invalid(f"the answer must be a remainder, between 0 and {_MOD - 1}")
        ok = value == self.solve_int(problem)  # RLVE's row is binary; a residue
        return graded(0.0, ok, "correct" if ok else "the remainder is not right")

    def problem_space(self, difficulty: int) -> int | None:
        n = min(12, 2 + difficulty // 3)
        return max(n, _grow(8, 1.5, difficulty, 2000)) - n + 1
