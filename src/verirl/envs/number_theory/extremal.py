"""Numbers, part 2: extremal integers — the smallest number with K divisors, the Frobenius
number of two coins, the largest product with a fixed sum, the largest gcd in two ranges and
the largest gcd of K chosen numbers.

Rows MinKDivisorNumber, MinNoSolutionLinearDiophantineEquation, MaxMultiplicationFixedSum,
PanSolarPanels and MaximumDivisor of the RLVE catalogue (Zeng et al., *RLVE: Scaling Up
Reinforcement Learning for Language Models with Adaptive Verifiable Environments*,
arXiv:2511.07317). Where an answer is a witness (a pair in the ranges, K indices) the verifier
checks it and grades its objective against the optimum, (answer/gold)^β; a number claimed to
have K divisors is checked by factoring it.
"""

from __future__ import annotations

import math
import random

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    optimum_verdict,
    parse_int,
    parse_int_list,
    ratio_reward,
)
from verirl.envs.kit.numbers import first_primes, is_prime
from verirl.types import Problem, Verdict

TAGS = ("rlve", "numbers")
_SMALL_PRIMES = first_primes(168)  # the primes below 1000


def divisor_count_if_known(n: int) -> int | None:
    """τ(n) when the factorisation of ``n`` ≥ 1 can be completed cheaply (trial division by the
    primes below 1000, then a cofactor that is 1, a prime, or a prime squared); else ``None``."""
    count = 1
    for p in _SMALL_PRIMES:
        if n % p == 0:
            e = 0
            while n % p == 0:
                n //= p
                e += 1
            count *= e + 1
    if n == 1:
        return count
    if n < 1000 * 1000 or is_prime(n):  # no factor below 1000, so below 10^6 it is prime
        return count * 2
    root = math.isqrt(n)
    if root * root == n and is_prime(root):
        return count * 3
    return None


def smallest_with_divisors(k: int) -> int:
    """The smallest positive integer with exactly ``k`` divisors: exponents are non-increasing
    over 2, 3, 5, ... and (e_1 + 1)(e_2 + 1)... = k; search those factorisations of k."""
    primes = first_primes(64)
    best = 2 ** (k - 1)

    def search(rest: int, index: int, max_factor: int, value: int) -> None:
        nonlocal best
        if rest == 1:
            best = min(best, value)
            return
        for f in range(min(rest, max_factor), 1, -1):
            if rest % f == 0:
                nxt = value * primes[index] ** (f - 1)
                if nxt < best:
                    search(rest // f, index + 1, f, nxt)

    search(k, 0, k, 1)
    return best


@ENVIRONMENTS.register("min_k_divisor_number")
class MinKDivisorNumber(Environment):
    """The smallest positive integer with exactly K divisors. A larger number with exactly K
    divisors earns (gold/answer)^2; one with another count (or not checkable) earns 0."""

    tags = TAGS
    difficulty_scales = "K up to 5 + 3d"
    size_measure = "the divisor count K"
    answer_kind = "integer"

    def problem_space(self, difficulty: int) -> int | None:
        return 4 + 3 * difficulty

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        k = rng.randint(2, 5 + 3 * difficulty)
        prompt = (
            f"Find the smallest positive integer M that has exactly {k} distinct positive "
            "divisors (1 and M included). Give M as a single integer."
        )
        return Instance(prompt, str(smallest_with_divisors(k)), {"k": k})

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer)
        if value < 1:
            return invalid("M must be a positive integer")
        if len(str(value)) > 300:
            return invalid("that number is far too large")
        k = problem.data["k"]
        best = smallest_with_divisors(k)
        if value == best:
            return graded(1.0, True)
        if value < best or divisor_count_if_known(value) != k:
            return graded(0.0, False, f"that number does not have exactly {k} divisors")
        return graded(ratio_reward(best, value, 2.0), False, "a smaller number has that many")

    def solve(self, problem: Problem) -> str:
        k = problem.data["k"]
        # Independent: the best over all non-increasing exponent vectors (dynamic programming
        # over divisors of k, one prime at a time).
        primes = first_primes(64)
        table: dict[tuple[int, int], int] = {}

        def best(rest: int, index: int, cap: int) -> int:
            """Smallest product of primes[index:] powers with Π(e + 1) = rest, every factor
            (e + 1) ≤ cap; 0 when impossible."""
            if rest == 1:
                return 1
            key = (rest, index * 10_000 + cap)
            if key not in table:
                options = [
                    primes[index] ** (f - 1) * tail
                    for f in range(2, min(rest, cap) + 1)
                    if rest % f == 0 and (tail := best(rest // f, index + 1, f))
                ]
                table[key] = min(options, default=0)
            return table[key]

        return str(best(k, 0, k))

    def size(self, problem: Problem) -> float:
        return float(problem.data["k"])


@ENVIRONMENTS.register("min_no_solution_linear_diophantine_equation")
class MinNoSolutionLinearDiophantineEquation(Environment):
    """The largest z with no non-negative solution of a·x + b·y = z for coprime a, b (the
    Frobenius number). Binary reward."""

    tags = TAGS
    difficulty_scales = "a, b coprime in 2..16·2^min(16, d//2)"
    size_measure = "a + b"
    answer_kind = "integer"

    def problem_space(self, difficulty: int) -> int | None:
        top = 16 * 2 ** (difficulty // 2)
        if top > 200:
            return None
        pairs = range(2, top + 1)
        return sum(1 for a in pairs for b in pairs if a != b and math.gcd(a, b) == 1)

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = 16 * 2 ** min(16, difficulty // 2)
        while True:
            a, b = rng.randint(2, top), rng.randint(2, top)
            if a != b and math.gcd(a, b) == 1:
                break
        prompt = (
            f"Consider the equation {a}x + {b}y = z. Find the largest non-negative integer z "
            "such that the equation has no solution in non-negative integers x and y. Give z "
            "as a single integer."
        )
        return Instance(prompt, str(a * b - a - b), {"a": a, "b": b})

    def check(self, problem: Problem, answer: str) -> Verdict:
        a, b = problem.data["a"], problem.data["b"]
        ok = parse_int(answer) == a * b - a - b  # Sylvester's formula for coprime a, b
        return graded(0.0, ok, "correct" if ok else "that is not the largest such z")

    def solve(self, problem: Problem) -> str:
        a, b = problem.data["a"], problem.data["b"]
        if a * b <= 300_000:  # mark every representable z below a·b, take the largest gap
            reachable = bytearray(a * b)
            reachable[0] = 1
            for z in range(1, a * b):
                reachable[z] = (z >= a and reachable[z - a]) or (z >= b and reachable[z - b])
            return str(max(z for z in range(a * b) if not reachable[z]))
        # For each residue r mod b the smallest representable z ≡ r (mod b) is a·x for the
        # x in [0, b) with a·x ≡ r; everything that plus a multiple of b is representable.
        inverse = pow(a, -1, b)
        return str(max(a * (r * inverse % b) for r in range(b)) - b)

    def size(self, problem: Problem) -> float:
        return float(problem.data["a"] + problem.data["b"])


@ENVIRONMENTS.register("max_multiplication_fixed_sum")
class MaxMultiplicationFixedSum(Environment):
    """The largest product of positive integers with sum N (a single term N is allowed).
    Binary reward."""

    tags = TAGS
    difficulty_scales = "N up to 10 + 10d"
    size_measure = "the sum N"
    answer_kind = "integer"

    def problem_space(self, difficulty: int) -> int | None:
        return 9 + 9 * difficulty

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(2 + difficulty, 10 + 10 * difficulty)
        prompt = (
            "What is the maximum product of positive integers (not necessarily distinct, any "
            f"number of them, at least one) whose sum is exactly {n}? Give the product as a "
            "single integer."
        )
        q, r = divmod(n, 3)
        gold = n if n <= 4 else (3**q if r == 0 else 3 ** (q - 1) * 4 if r == 1 else 3**q * 2)
        return Instance(prompt, str(gold), {"n": n})

    @staticmethod
    def _best(n: int) -> int:
        best = [0] * (n + 1)
        for s in range(1, n + 1):
            best[s] = max([s] + [i * best[s - i] for i in range(1, s)])
        return best[n]

    def check(self, problem: Problem, answer: str) -> Verdict:
        ok = parse_int(answer) == self._best(problem.data["n"])
        return graded(0.0, ok, "correct" if ok else "that is not the largest product")

    def solve(self, problem: Problem) -> str:
        return str(self._best(problem.data["n"]))

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


def max_gcd_in_ranges(a: int, b: int, c: int, d: int) -> int:
    """max gcd(x, y) over a ≤ x ≤ b, c ≤ y ≤ d: the largest g with a multiple in both ranges.
    On a block of g where b//g and d//g are constant the test is monotone in g, so only the
    block ends are tried (O(√b + √d) blocks)."""
    g, best = 1, 1
    top = min(b, d)
    while g <= top:
        end = min(b // (b // g), d // (d // g), top)
        if end * (b // g) >= a and end * (d // g) >= c:
            best = end
        g = end + 1
    return best


@ENVIRONMENTS.register("pan_solar_panels")
class PanSolarPanels(Environment):
    """Two integers X in [A, B] and Y in [C, D] with the largest gcd; (gcd/gold)^3 credit, a
    pair outside the ranges is invalid (RLVE row PanSolarPanels)."""

    tags = TAGS
    difficulty_scales = "bounds up to 10·1.5^d (at most 10^10)"
    size_measure = "B + D (the range tops)"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = min(10**10, int(10 * 1.5**difficulty))
        a, b = sorted(rng.randint(1, top) for _ in range(2))
        c, d = sorted(rng.randint(1, top) for _ in range(2))
        prompt = (
            "Output two integers X and Y (separated by a space), such that:\n"
            f"- {a} ≤ X ≤ {b}\n- {c} ≤ Y ≤ {d}\n- the greatest common divisor gcd(X, Y) is "
            "as large as possible.\nIf several pairs reach the largest gcd, any of them is "
            "accepted."
        )
        g = max_gcd_in_ranges(a, b, c, d)
        x, y = -(-a // g) * g, -(-c // g) * g
        return Instance(prompt, f"{x} {y}", {"a": a, "b": b, "c": c, "d": d})

    def check(self, problem: Problem, answer: str) -> Verdict:
        p = problem.data
        pair = parse_int_list(answer)
        if len(pair) != 2:
            return invalid("give exactly two integers X and Y")
        x, y = pair
        if not (p["a"] <= x <= p["b"] and p["c"] <= y <= p["d"]):
            return invalid("X or Y is outside its range")
        best = max_gcd_in_ranges(p["a"], p["b"], p["c"], p["d"])
        g = math.gcd(x, y)
        return graded(ratio_reward(g, best, 3.0), g == best, "a pair with a larger gcd exists")

    def solve(self, problem: Problem) -> str:
        p = problem.data
        if p["b"] <= 20_000:  # brute force over g downwards
            for g in range(min(p["b"], p["d"]), 0, -1):
                x, y = -(-p["a"] // g) * g, -(-p["c"] // g) * g
                if x <= p["b"] and y <= p["d"]:
                    return f"{x} {y}"
        g = max_gcd_in_ranges(p["a"], p["b"], p["c"], p["d"])
        return f"{-(-p['a'] // g) * g} {-(-p['c'] // g) * g}"

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return f"{problem.data['b'] + 1} {problem.data['c']}"  # X out of range

    def size(self, problem: Problem) -> float:
        return float(problem.data["b"] + problem.data["d"])


@ENVIRONMENTS.register("maximum_divisor")
class MaximumDivisor(Environment):
    """Choose K elements of an array whose gcd is as large as possible; (gcd/gold)^5 credit,
    anything but K distinct indices is invalid (RLVE row MaximumDivisor)."""

    tags = TAGS
    difficulty_scales = "N = 3, then int(1.2·N + 2) per level (at most 400); values ≤ 20 + 10N"
    size_measure = "length N of the array"
    answer_kind = "integer_set"
    size_key = "values"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3
        for _ in range(difficulty):
            n = min(400, int(n * 1.2 + 2))
        top = 20 + 10 * n
        values = [rng.randint(1, top) for _ in range(n)]
        k = rng.randint(2, max(2, n // 2))
        listing = " ".join(f"A[{i}]={v}" for i, v in enumerate(values))
        prompt = (
            f"You are given an array A of length {n}. The values are as follows (indexing "
            f"starts at 0):\n{listing}\n\nChoose exactly {k} distinct indices so that the "
            "greatest common divisor of the chosen values is as large as possible. Give the "
            f"{k} indices separated by spaces; if several choices are optimal, any of them is "
            "accepted."
        )
        best = self._best(values, k)
        chosen = [i for i, v in enumerate(values) if v % best == 0][:k]
        return Instance(prompt, " ".join(map(str, chosen)), {"values": values, "k": k})

    @staticmethod
    def _best(values: list[int], k: int) -> int:
        """The largest g dividing at least k values (counted over the multiples of g)."""
        top = max(values)
        present = [0] * (top + 1)
        for v in values:
            present[v] += 1
        for g in range(top, 0, -1):
            if sum(present[m] for m in range(g, top + 1, g)) >= k:
                return g
        return 1

    def check(self, problem: Problem, answer: str) -> Verdict:
        values, k = problem.data["values"], problem.data["k"]
        chosen = parse_int_list(answer)
        if len(chosen) != k or len(set(chosen)) != k:
            return invalid(f"choose exactly {k} distinct indices")
        if any(not 0 <= i < len(values) for i in chosen):
            return invalid("an index is out of range")
        g = math.gcd(*(values[i] for i in chosen))
        return optimum_verdict(g, self._best(values, k), "a choice with a larger gcd exists")

    def solve(self, problem: Problem) -> str:
        # Independent: count every divisor of every value, keep the largest counted k times.
        values, k = problem.data["values"], problem.data["k"]
        counts: dict[int, int] = {}
        for v in values:
            for g in range(1, math.isqrt(v) + 1):
                if v % g == 0:
                    for h in {g, v // g}:
                        counts[h] = counts.get(h, 0) + 1
        g = max(h for h, c in counts.items() if c >= k)
        picked = [i for i, v in enumerate(values) if v % g == 0][:k]
        return " ".join(map(str, picked))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rpartition(" ")[0]  # one index short
