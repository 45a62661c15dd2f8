"""Recurrences, expectations and constrained permutations: linear recurrences mod M, gcds of
Fibonacci numbers, the expected leaves of a random binary tree, odd binomial chains and
permutations with bounded neighbour gaps (RLVE catalogue rows Fibonacci, GCDFibonacciProduct,
BinaryTreeLeafNumExpectation, CombinationOddSubsequenceCounting,
BoundedAdjacencyDifference_Permutation_Counting; Zeng et al. 2025, "RLVE: Scaling Up
Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A).

Each verifier computes the answer one way (matrix powers, gcd identities, closed forms,
submask DP, bitmask DP) and ``solve`` another (iteration, exact big integers, tree-counting
DP, subset enumeration, all permutations), so the two cross-check in the tests. Rewards follow
the rows: right or wrong for values, (min/max)^10 for counts.
"""

from __future__ import annotations

import itertools
import math
import random
import re
from fractions import Fraction
from typing import Any

from verirl.envs.base import ENVIRONMENTS, Environment, Instance, graded
from verirl.envs.kit.answers import FastCount
from verirl.envs.kit.fractions import fraction_text
from verirl.envs.kit.wording import plural
from verirl.envs.reading import normalize
from verirl.envs.reading.normalize import InvalidAnswer
from verirl.types import Problem, Verdict

TAGS = ("rlve", "counting")


class _Exact(FastCount):
    """An integer value scored right or wrong (binary rows)."""

    def check(self, problem: Problem, answer: str) -> Verdict:
        ok = normalize.parse_integer(answer) == self.count(dict(problem.data))
        return graded(0.0, ok, "correct" if ok else "the value is not right")


@ENVIRONMENTS.register("fibonacci")
class Fibonacci(_Exact):
    """A[N] mod M for A[1] = a, A[2] = b, A[n] = p·A[n−1] + q·A[n−2] (RLVE Fibonacci). Verifier:
    2 × 2 matrix powers; ``solve``: iteration."""

    difficulty_scales = "N ≤ 10·2^(d/2) (at most 3·10^5), coefficients ≤ 10"
    size_measure = "index N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(3, min(300_000, int(10 * 2 ** (difficulty / 2))))
        a, b, p, q = (rng.randint(0, 10) for _ in range(4))
        m = rng.randint(10, 10_000)
        prompt = (
            f"A sequence has A[1] = {a}, A[2] = {b} and A[n] = {p} × A[n − 1] + {q} × A[n − 2] "
            f"for n > 2. Compute A[{n}] mod {m}."
        )
        return self.instance(prompt, {"n": n, "a": a, "b": b, "p": p, "q": q, "m": m})

    def count(self, data: dict[str, Any]) -> int:
        n, m = data["n"], data["m"]

        def mul(x: list[list[int]], y: list[list[int]]) -> list[list[int]]:
            return [
                [sum(x[i][k] * y[k][j] for k in range(2)) % m for j in range(2)] for i in range(2)
            ]

        result, base, e = [[1, 0], [0, 1]], [[data["p"], data["q"]], [1, 0]], n - 2
        while e:
            if e & 1:
                result = mul(result, base)
            base, e = mul(base, base), e >> 1
        return (result[0][0] * data["b"] + result[0][1] * data["a"]) % m

    def solve_int(self, problem: Problem) -> int:
        d = problem.data
        x, y = d["a"] % d["m"], d["b"] % d["m"]
        for _ in range(d["n"] - 2):
            x, y = y, (d["p"] * y + d["q"] * x) % d["m"]
        return y


def _fib(n: int) -> int:
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


@ENVIRONMENTS.register("gcd_fibonacci_product")
class GcdFibonacciProduct(_Exact):
    """gcd(F(N), F(M)) of Fibonacci numbers, reduced mod 10^9 + 7 (RLVE GCDFibonacciProduct).
    Verifier: the identity gcd(F(N), F(M)) = F(gcd(N, M)); ``solve``: both numbers in full and
    Euclid."""

    difficulty_scales = "N, M ≤ 40 + 20d"
    size_measure = "the larger index"
    size_param = "n"
    MOD = 10**9 + 7

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = 40 + 20 * difficulty
        g = rng.randint(1, max(1, top // 4))
        n, m = g * rng.randint(1, top // g), g * rng.randint(1, top // g)
        n, m = max(n, m), min(n, m)
        prompt = (
            "The Fibonacci numbers are F(1) = F(2) = 1 and F(k) = F(k − 1) + F(k − 2). Compute "
            f"gcd(F({n}), F({m})) mod {self.MOD}."
        )
        return self.instance(prompt, {"n": n, "m": m})

    def count(self, data: dict[str, Any]) -> int:
        return _fib(math.gcd(data["n"], data["m"])) % self.MOD

    def solve_int(self, problem: Problem) -> int:
        a, b = _fib(problem.data["n"]), _fib(problem.data["m"])
        while b:
            a, b = b, a % b
        return a % self.MOD


def parse_fraction(text: str) -> Fraction:
    """``7/5``, ``\\frac{7}{5}``, ``1.4`` or an integer as an exact fraction."""
    t = normalize.clean(text).replace(" ", "")
    m = re.fullmatch(r"(-?)\\frac\{(\d{1,60})\}\{(\d{1,60})\}", t) or re.fullmatch(
        r"(-?)(\d{1,60})/(\d{1,60})", t
    )
    if m:
        if int(m.group(3)) == 0:
            raise InvalidAnswer("zero denominator")
        return Fraction(int(m.group(2)), int(m.group(3))) * (-1 if m.group(1) else 1)
    if re.fullmatch(r"-?\d{1,60}(\.\d{1,60})?", t):
        return Fraction(t)
    raise ValueError("not a fraction")


@ENVIRONMENTS.register("binary_tree_leaf_num_expectation")
class BinaryTreeLeafNumExpectation(Environment):
    """The expected number of leaves of a uniformly random binary tree with N nodes (RLVE
    BinaryTreeLeafNumExpectation), as an exact fraction; right or wrong. Verifier: the closed
    form N(N+1)/(2(2N−1)); ``solve``: counting trees and leaves by DP over subtree sizes."""

    tags = TAGS
    difficulty_scales = "N ≤ 5 + 10d"
    size_measure = "number of nodes N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(1, 5 + 10 * difficulty)
        prompt = (
            f"A binary tree with exactly {plural(n, 'node')} is chosen uniformly at random "
            f"among all distinct binary trees with {plural(n, 'node')} (each node has an "
            "optional left and an optional right child, and left differs from right). "
            "What is the expected number of leaves (nodes with no children)? "
            "Give the exact value as a reduced fraction p/q (or an integer)."
        )
        return Instance(prompt, fraction_text(self._closed(n)), {"n": n})

    @staticmethod
    def _closed(n: int) -> Fraction:
        return Fraction(n * (n + 1), 2 * (2 * n - 1))

    def problem_space(self, difficulty: int) -> int:
        return 5 + 10 * difficulty

    def check(self, problem: Problem, answer: str) -> Verdict:
        ok = parse_fraction(answer) == self._closed(problem.data["n"])
        return graded(0.0, ok, "correct" if ok else "that is not the expected number of leaves")

    def solve(self, problem: Problem) -> str:
        n = problem.data["n"]
        trees, leaves = [1] + [0] * n, [0] * (n + 1)  # size 0: one empty tree, no leaves
        for size in range(1, n + 1):
            for left in range(size):
                right = size - 1 - left
                trees[size] += trees[left] * trees[right]
                leaves[size] += leaves[left] * trees[right] + trees[left] * leaves[right]
            if size == 1:
                leaves[1] = 1
        return fraction_text(Fraction(leaves[n], trees[n]))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return fraction_text(parse_fraction(answer) + 1)

    def surface_forms(self, problem: Problem) -> list[str]:
        x = self._closed(problem.data["n"])
        forms = [fraction_text(x), f"\\frac{{{x.numerator}}}{{{x.denominator}}}"]
        if 10**6 % x.denominator == 0:
            forms.append(str(float(x)))
        return forms

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


@ENVIRONMENTS.register("combination_odd_subsequence_counting")
class CombinationOddSubsequenceCounting(FastCount):
    """Subsequences b_1, …, b_k (k ≥ 2, taken in order) of distinct integers with
    C(b_1, b_2)·C(b_2, b_3)·…·C(b_{k−1}, b_k) odd (RLVE CombinationOddSubsequenceCounting).
    Verifier: by Lucas, C(a, b) is odd iff b's bits are a subset of a's, so a DP over the
    sequence; ``solve``: every subsequence with the binomials computed in full."""

    difficulty_scales = "N = 3 + d distinct values below 2^(3 + d//4)"
    size_measure = "sequence length N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        top = max(n + 1, 2 ** (3 + difficulty // 4))
        values = rng.sample(range(1, top), n)
        prompt = (
            f"You are given a sequence of distinct integers: {', '.join(map(str, values))}. "
            "Count its subsequences b_1, b_2, ..., b_k with k ≥ 2 (elements kept in their "
            "original order, not necessarily adjacent) such that C(b_1, b_2) × C(b_2, b_3) × "
            "... × C(b_{k−1}, b_k) is odd, where C(x, y) is the binomial coefficient (0 when "
            "y > x)."
        )
        return self.instance(prompt, {"values": values, "n": n})

    def count(self, data: dict[str, Any]) -> int:
        values = data["values"]
        ends = [0] * len(values)  # chains of length ≥ 1 ending at i
        for i, v in enumerate(values):
            ends[i] = 1 + sum(ends[j] for j in range(i) if values[j] & v == v)
        return sum(ends) - len(values)

    def solve_int(self, problem: Problem) -> int:
        values = problem.data["values"]
        found = 0
        for k in range(2, len(values) + 1):
            for sub in itertools.combinations(values, k):
                if all(math.comb(a, b) % 2 for a, b in itertools.pairwise(sub)):
                    found += 1
        return found


@ENVIRONMENTS.register("bounded_adjacency_difference_permutation_counting")
class BoundedAdjacencyDifferencePermutationCounting(FastCount):
    """Permutations of 1..N whose neighbours differ by at most K (RLVE
    BoundedAdjacencyDifference_Permutation_Counting). Verifier: DP over (used set, last
    value); ``solve``: all permutations."""

    difficulty_scales = "N = 4 + d//4 (at most 11), K in 1..3"
    size_measure = "N (N! permutations)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, k = min(11, 4 + difficulty // 4), rng.randint(1, 3)
        prompt = (
            f"How many permutations of 1, 2, ..., {n} are there in which every two adjacent "
            f"elements differ by at most {k} (in absolute value)?"
        )
        return self.instance(prompt, {"n": n, "k": k})

    def problem_space(self, difficulty: int) -> int:
        return 3

    def count(self, data: dict[str, Any]) -> int:
        n, k = data["n"], data["k"]
        ways: dict[tuple[int, int], int] = {(1 << v, v): 1 for v in range(n)}
        for _ in range(n - 1):
            nxt: dict[tuple[int, int], int] = {}
            for (mask, last), w in ways.items():
                for v in range(max(0, last - k), min(n, last + k + 1)):
                    if not mask >> v & 1:
                        key = (mask | 1 << v, v)
                        nxt[key] = nxt.get(key, 0) + w
            ways = nxt
        return sum(ways.values())

    def solve_int(self, problem: Problem) -> int:
        n, k = problem.data["n"], problem.data["k"]
        return sum(
            1
            for p in itertools.permutations(range(n))
            if all(abs(a - b) <= k for a, b in itertools.pairwise(p))
        )
