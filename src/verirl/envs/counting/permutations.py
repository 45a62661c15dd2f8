"""Counting and measuring permutations: up/down patterns, forbidden positions (a 0/1
permanent), words of a multiset with no two equal neighbours, linear extensions of a partial
order, the fewest swaps that sort a permutation and the order of a permutation.

Counting rows in the spirit of RLVE-Gym's permutation counters (Zeng et al. 2025, "RLVE:
Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable
Environments", arXiv:2511.07317, Appendix A: BoundedAdjacencyDifference_Permutation_Counting,
LDSTwo_Counting, InversionPairK_Counting). Each generator and its ``solve_int`` compute the
count by different methods (a prefix-sum DP against brute force or a cubic DP; a subset DP
against Ryser's formula; inclusion–exclusion against a memoised search), so the contract
tests cross-check them. Answers are integers scored with RLVE's (min/max)^10.
"""

from __future__ import annotations

import functools
import itertools
import math
import random
from fractions import Fraction

from verirl.envs.base import ENVIRONMENTS, Instance
from verirl.envs.kit.answers import SizedInteger
from verirl.envs.kit.wording import plural
from verirl.types import Problem

TAGS = ("counting", "permutations")


# ---- up/down patterns ----------------------------------------------------------------------
def _pattern_count_fast(pattern: str) -> int:
    """dp[j] = permutations of the first i+1 positions (relabelled) ending with the j-th
    smallest value; a U step sums the smaller ranks, a D step the larger (prefix sums)."""
    dp = [1]
    for step in pattern:
        size = len(dp) + 1
        prefix = [0]
        for v in dp:
            prefix.append(prefix[-1] + v)
        if step == "U":
            dp = [prefix[j] for j in range(size)]
        else:
            dp = [prefix[-1] - prefix[j] for j in range(size)]
    return sum(dp)


def _pattern_count_slow(pattern: str) -> int:
    n = len(pattern) + 1
    if n <= 7:
        return sum(
            all((p[i] < p[i + 1]) == (c == "U") for i, c in enumerate(pattern))
            for p in itertools.permutations(range(n))
        )
    dp = [1]
    for step in pattern:
        size = len(dp) + 1
        new = [0] * size
        for j in range(size):
            for k, v in enumerate(dp):
                if (step == "U" and k < j) or (step == "D" and k >= j):
                    new[j] += v
        dp = new
    return sum(dp)


@ENVIRONMENTS.register("descent_pattern_counting")
class DescentPatternCounting(SizedInteger):
    """Permutations of 1..n whose rises and falls follow a given U/D word."""

    tags = TAGS
    difficulty_scales = "n = 5 + d (pattern of n - 1 letters)"
    size_measure = "permutation length n"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + difficulty
        pattern = "".join(rng.choice("UD") for _ in range(n - 1))
        prompt = (
            f"Count the permutations p[1], ..., p[{n}] of the integers 1 to {n} that follow "
            f"the pattern {pattern}: for every i from 1 to {n - 1}, p[i] < p[i+1] when the "
            "i-th letter of the pattern is U, and p[i] > p[i+1] when it is D. How many such "
            "permutations are there?"
        )
        return Instance(prompt, str(_pattern_count_fast(pattern)), {"pattern": pattern, "size": n})

    def solve_int(self, problem: Problem) -> int:
        return _pattern_count_slow(problem.data["pattern"])

    def problem_space(self, difficulty: int) -> int | None:
        return 2 ** (4 + difficulty) if difficulty < 20 else None


# ---- forbidden positions (a 0/1 permanent) ---------------------------------------------------
def _allowed(n: int, forbidden: list[list[int]]) -> list[list[bool]]:
    grid = [[True] * n for _ in range(n)]
    for i, v in forbidden:
        grid[i - 1][v - 1] = False
    return grid


def _permanent_subset_dp(grid: list[list[bool]]) -> int:
    n = len(grid)
    ways = [0] * (1 << n)
    ways[0] = 1
    for mask in range(1 << n):
        w = ways[mask]
        if not w:
            continue
        row = mask.bit_count()
        if row == n:
            continue
        for v in range(n):
            if grid[row][v] and not mask >> v & 1:
                ways[mask | 1 << v] += w
    return ways[(1 << n) - 1]


def _permanent_ryser(grid: list[list[bool]]) -> int:
    """Ryser: perm(A) = (-1)^n Σ_S (-1)^|S| Π_i Σ_{j∈S} a_ij."""
    n = len(grid)
    total = 0
    for mask in range(1, 1 << n):
        cols = [j for j in range(n) if mask >> j & 1]
        prod = 1
        for i in range(n):
            s = sum(1 for j in cols if grid[i][j])
            if not s:
                prod = 0
                break
            prod *= s
        total += (-1) ** len(cols) * prod
    return (-1) ** n * total


@ENVIRONMENTS.register("forbidden_position_permutations")
class ForbiddenPositionPermutations(SizedInteger):
    """Permutations with some (position, value) pairs forbidden: a 0/1 permanent."""

    tags = TAGS
    difficulty_scales = "n = min(11, 4 + d//2); each pair forbidden with probability 0.2-0.4"
    size_measure = "permutation length n"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(11, 4 + difficulty // 2)
        q = rng.choice([0.2, 0.3, 0.4])
        forbidden = [[i, v] for i in range(1, n + 1) for v in range(1, n + 1) if rng.random() < q]
        if not forbidden:
            forbidden = [[rng.randint(1, n), rng.randint(1, n)]]
        pairs = ", ".join(f"p[{i}] ≠ {v}" for i, v in forbidden)
        prompt = (
            f"How many permutations p[1], ..., p[{n}] of the integers 1 to {n} satisfy all of "
            f"the following conditions: {pairs}?"
        )
        answer = _permanent_subset_dp(_allowed(n, forbidden))
        return Instance(prompt, str(answer), {"n": n, "forbidden": forbidden, "size": n})

    def solve_int(self, problem: Problem) -> int:
        return _permanent_ryser(_allowed(problem.data["n"], problem.data["forbidden"]))


# ---- multiset words with no equal neighbours ---------------------------------------------------
def _no_adjacent_inclusion_exclusion(counts: list[int]) -> int:
    """Glue each letter's c copies into j blocks (C(c-1, j-1) ways, sign (-1)^(c-j)) and
    arrange the blocks: Σ Π sign·C(c-1, j-1) · (Σj)! / Π j!."""
    poly = [Fraction(1)]
    for c in counts:
        term = [Fraction(0)] * (c + 1)
        for j in range(1, c + 1):
            term[j] = Fraction((-1) ** (c - j) * math.comb(c - 1, j - 1), math.factorial(j))
        new = [Fraction(0)] * (len(poly) + c)
        for a, x in enumerate(poly):
            if x:
                for b, y in enumerate(term):
                    if y:
                        new[a + b] += x * y
        poly = new
    total = sum(x * math.factorial(t) for t, x in enumerate(poly))
    assert total.denominator == 1
    return int(total)


def _no_adjacent_search(counts: list[int]) -> int:
    """Memoised placement, the state reduced to (sorted other counts, last letter's count)."""

    @functools.cache
    def go(others: tuple[int, ...], last: int) -> int:
        if not any(others) and last == 0:
            return 1
        total = 0
        for k, c in enumerate(others):
            if c and (k == 0 or others[k - 1] != c):  # equal counts give equal subtrees
                same = others.count(c)
                rest = list(others)
                rest[k] = last
                total += same * go(tuple(sorted(rest)), c - 1)
        return total

    return go(tuple(sorted(counts)), 0)


@ENVIRONMENTS.register("no_adjacent_equal_arrangements")
class NoAdjacentEqualArrangements(SizedInteger):
    """Words using a multiset of letters exactly, no two equal letters side by side."""

    tags = TAGS
    difficulty_scales = "3 + d//6 letters (at most 7), each used 1..2 + d//4 times (at most 6)"
    size_measure = "word length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        k, top = self._shape(difficulty)
        counts = [rng.randint(1, top) for _ in range(k)]
        letters = "abcdefg"[:k]
        listing = ", ".join(
            plural(c, f"copy of {ch}", f"copies of {ch}")
            for ch, c in zip(letters, counts, strict=True)
        )
        prompt = (
            f"You have the following letters: {listing}. How many different words of length "
            f"{sum(counts)} use every one of these letters exactly once and never have two equal "
            "letters next to each other?"
        )
        answer = _no_adjacent_inclusion_exclusion(counts)
        return Instance(prompt, str(answer), {"counts": counts, "size": sum(counts)})

    def solve_int(self, problem: Problem) -> int:
        return _no_adjacent_search(list(problem.data["counts"]))

    @staticmethod
    def _shape(difficulty: int) -> tuple[int, int]:
        return min(7, 3 + difficulty // 6), min(6, 2 + difficulty // 4)

    def problem_space(self, difficulty: int) -> int | None:
        k, top = self._shape(difficulty)
        return top**k if top**k < 400 else None


# ---- linear extensions -------------------------------------------------------------------------
def _extensions_forward(n: int, before: list[list[int]]) -> int:
    need = [0] * n
    for a, b in before:
        need[b] |= 1 << a
    ways = [0] * (1 << n)
    ways[0] = 1
    for mask in range(1 << n):
        if ways[mask]:
            for v in range(n):
                if not mask >> v & 1 and need[v] & mask == need[v]:
                    ways[mask | 1 << v] += ways[mask]
    return ways[(1 << n) - 1]


def _extensions_backward(n: int, before: list[list[int]]) -> int:
    """Count by removing a maximal element (nothing left must come after it)."""
    if n <= 7:
        return sum(
            all(pos[a] < pos[b] for a, b in before)
            for perm in itertools.permutations(range(n))
            for pos in [{v: i for i, v in enumerate(perm)}]
        )
    after = [0] * n
    for a, b in before:
        after[a] |= 1 << b

    @functools.cache
    def go(left: int) -> int:
        if not left:
            return 1
        return sum(go(left & ~(1 << v)) for v in range(n) if left >> v & 1 and not after[v] & left)

    return go((1 << n) - 1)


@ENVIRONMENTS.register("linear_extension_counting")
class LinearExtensionCounting(SizedInteger):
    """Orderings of n items that respect a list of "a before b" constraints."""

    tags = TAGS
    difficulty_scales = "n = min(13, 4 + d//2) items; about n constraints"
    size_measure = "number of items"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(13, 4 + difficulty // 2)
        hidden = list(range(n))
        rng.shuffle(hidden)
        pairs = set()
        for _ in range(rng.randint(max(1, n // 2), n + 1)):
            i, j = sorted(rng.sample(range(n), 2))
            pairs.add((hidden[i], hidden[j]))
        before = sorted([a, b] for a, b in pairs)
        listing = ", ".join(f"{a} before {b}" for a, b in before)
        prompt = (
            f"In how many ways can the items 0 to {n - 1} be arranged in a row (each item "
            f"exactly once) so that all of these constraints hold: {listing}?"
        )
        answer = _extensions_forward(n, before)
        return Instance(prompt, str(answer), {"n": n, "before": before, "size": n})

    def solve_int(self, problem: Problem) -> int:
        return _extensions_backward(problem.data["n"], problem.data["before"])


# ---- measures of one permutation -----------------------------------------------------------------
def _cycle_lengths(perm: list[int]) -> list[int]:
    seen = [False] * len(perm)
    out = []
    for i in range(len(perm)):
        length = 0
        while not seen[i]:
            seen[i] = True
            i = perm[i] - 1
            length += 1
        if length:
            out.append(length)
    return out


def _random_permutation(n: int, rng: random.Random) -> list[int]:
    perm = list(range(1, n + 1))
    rng.shuffle(perm)
    return perm


@ENVIRONMENTS.register("permutation_min_swaps")
class PermutationMinSwaps(SizedInteger):
    """The fewest swaps (of any two entries) that sort a permutation: n - #cycles."""

    tags = TAGS
    difficulty_scales = "n = 6 + 2d"
    size_measure = "permutation length n"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 6 + 2 * difficulty
        perm = _random_permutation(n, rng)
        prompt = (
            f"You are given a permutation of 1 to {n}: {' '.join(map(str, perm))}\nOne "
            "operation swaps any two entries (not necessarily adjacent). What is the smallest "
            "number of operations that sorts it into increasing order?"
        )
        answer = n - len(_cycle_lengths(perm))
        return Instance(prompt, str(answer), {"perm": perm, "size": n})

    def solve_int(self, problem: Problem) -> int:
        """Greedy: put the right value at each position by one swap, counting the swaps."""
        perm = list(problem.data["perm"])
        where = {v: i for i, v in enumerate(perm)}
        swaps = 0
        for i in range(len(perm)):
            if perm[i] != i + 1:
                j = where[i + 1]
                where[perm[i]], where[i + 1] = j, i
                perm[i], perm[j] = perm[j], perm[i]
                swaps += 1
        return swaps


@ENVIRONMENTS.register("permutation_order")
class PermutationOrder(SizedInteger):
    """The least k ≥ 1 with p^k = identity: the lcm of the cycle lengths."""

    tags = TAGS
    difficulty_scales = "n = 6 + 2d"
    size_measure = "permutation length n"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 6 + 2 * difficulty
        perm = _random_permutation(n, rng)
        prompt = (
            f"A permutation p of 1 to {n} maps i to p[i], where p[1], ..., p[{n}] = "
            f"{' '.join(map(str, perm))}. Applying p repeatedly, what is the smallest positive "
            "number k such that applying it k times maps every i back to itself?"
        )
        return Instance(prompt, str(math.lcm(*_cycle_lengths(perm))), {"perm": perm, "size": n})

    def solve_int(self, problem: Problem) -> int:
        """Compose while the order is small; otherwise each element's own return time."""
        perm = problem.data["perm"]
        n = len(perm)
        cur, k = list(perm), 1
        while k < 2000:
            if all(cur[i] == i + 1 for i in range(n)):
                return k
            cur = [perm[c - 1] for c in cur]
            k += 1
        order = 1
        for i in range(n):
            j, t = perm[i] - 1, 1
            while j != i:
                j, t = perm[j] - 1, t + 1
            order = order * t // math.gcd(order, t)
        return order
