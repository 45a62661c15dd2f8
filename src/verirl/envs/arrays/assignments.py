"""Constructing arrays under constraints: a permutation with no equal subset sums, and an
integer point of a bounded linear system (RLVE catalogue rows DistinctArrayPermutation and
IntegerProgramming; Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning for Language
Models with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A).

Verifiers check the constraints on the answer, so any valid array is correct; an answer of
the wrong shape or outside the allowed values is invalid (−0.5). The permutation row is right
or wrong, the linear system scores (inequalities satisfied / all)^5.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    parse_int_list,
    satisfied_verdict,
)
from verirl.envs.kit.graphs import parse_pairs
from verirl.envs.kit.wording import commas
from verirl.types import Problem, Verdict

TAGS = ("rlve", "construction")


def _no_equal_subset_sum(a: list[int], b: list[int]) -> bool:
    """No non-empty proper index set S has Σ_S a = Σ_S b (subset sums of a − b by DP)."""
    diff = [x - y for x, y in zip(a, b, strict=True)]
    n = len(diff)
    sums = [0] * (1 << n)
    for mask in range(1, 1 << n):
        low = mask & -mask
        sums[mask] = sums[mask ^ low] + diff[low.bit_length() - 1]
        if sums[mask] == 0 and mask != (1 << n) - 1:
            return False
    return True


@ENVIRONMENTS.register("distinct_array_permutation")
class DistinctArrayPermutation(Environment):
    """A permutation B of distinct A such that no non-empty proper set of positions has the
    same sum in A and in B (RLVE DistinctArrayPermutation); right or wrong, not a permutation
    of A → invalid. Generator: each element becomes the next larger one, the largest the
    smallest; ``solve``: search over permutations."""

    tags = TAGS
    difficulty_scales = "N = 3 + d//3 distinct values (at most 15) up to 10N"
    size_measure = "array length N (2^N subsets to check)"
    size_key = "a"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(15, 3 + difficulty // 3)
        a = rng.sample(range(1, 10 * n + 1), n)
        ranked = sorted(a)
        nxt = {v: ranked[(i + 1) % n] for i, v in enumerate(ranked)}
        b = [nxt[v] for v in a]
        prompt = (
            f"You are given an array A of {n} distinct integers (positions 1 to {n}): "
            f"{commas(a)}. Find an array B that is a rearrangement of A such that for every "
            f"non-empty set S of positions other than all {n}, the sum of A over S differs "
            "from the sum of B over S. Give B separated by commas."
        )
        return Instance(prompt, commas(b), {"a": a})

    def check(self, problem: Problem, answer: str) -> Verdict:
        a = problem.data["a"]
        b = parse_int_list(answer)
        if Counter(b) != Counter(a):
            return invalid("B must be a rearrangement of A")
        ok = _no_equal_subset_sum(a, b)
        return graded(0.0, ok, "correct" if ok else "some set of positions has equal sums")

    def solve(self, problem: Problem) -> str:
        a = problem.data["a"]
        for b in itertools.permutations(a):
            if _no_equal_subset_sum(a, list(b)):
                return commas(list(b))
        raise ValueError("no valid permutation")

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return commas(problem.data["a"])  # B = A: every set has equal sums


@ENVIRONMENTS.register("integer_programming")
class IntegerProgramming(Environment):
    """Integers x_i in [0, R] satisfying M linear inequalities (RLVE IntegerProgramming); a
    wrong count or a value outside [0, R] → invalid; else (satisfied / all)^5. ``solve``:
    exhaustive search of the box."""

    tags = TAGS
    difficulty_scales = "N = 3 + d//4 unknowns in [0, 3 + d//5]; M = N·(1 + (d mod 11)/10)"
    size_measure = "search space (R + 1)^N"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, r = 3 + difficulty // 4, 3 + difficulty // 5
        m = int(n * (1 + rng.randint(0, 10) / 10))
        planted = [rng.randint(0, r) for _ in range(n)]
        rows = []
        for _ in range(m):
            coef = [rng.randint(-5, 5) for _ in range(n)]
            if not any(coef):
                coef[rng.randrange(n)] = 1
            rows.append(
                [*coef, sum(c * x for c, x in zip(coef, planted, strict=True)) + rng.randint(0, 3)]
            )
        lines = "\n".join(self._render(row) for row in rows)
        prompt = (
            f"Find integers x[0], ..., x[{n - 1}], each between 0 and {r} inclusive, that "
            f"satisfy all of these {m} inequalities:\n{lines}\n\nGive x[0], ..., x[{n - 1}] "
            "in order, separated by commas."
        )
        data = {"n": n, "r": r, "rows": rows}
        return Instance(prompt, commas(planted), data)

    @staticmethod
    def _render(row: list[int]) -> str:
        terms = [f"{c}*x[{j}]" for j, c in enumerate(row[:-1]) if c]
        return " + ".join(terms).replace("+ -", "- ") + f" <= {row[-1]}"

    def _satisfied(self, rows: list[list[int]], x: list[int]) -> int:
        return sum(1 for row in rows if sum(c * v for c, v in zip(row, x, strict=False)) <= row[-1])

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, r, rows = problem.data["n"], problem.data["r"], problem.data["rows"]
        x = parse_int_list(answer, tuple(f"x[{i}]" for i in range(n)))
        if len(x) != n or any(not 0 <= v <= r for v in x):
            return invalid(f"give {n} integers between 0 and {r}")
        return satisfied_verdict(self._satisfied(rows, x), len(rows), "inequalities fail")

    def solve(self, problem: Problem) -> str:
        n, r, rows = problem.data["n"], problem.data["r"], problem.data["rows"]
        for x in itertools.product(range(r + 1), repeat=n):
            if self._satisfied(rows, list(x)) == len(rows):
                return commas(list(x))
        raise ValueError("infeasible")

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return commas([*parse_int_list(answer), 0])  # one value too many

    def size(self, problem: Problem) -> float:
        return float((problem.data["r"] + 1) ** problem.data["n"])


@ENVIRONMENTS.register("different_color_pairing")
class DifferentColorPairing(Environment):
    """Split N pearls into N/2 pairs whose two pearls have different colours (RLVE
    DifferentColorPairing; possible because no colour covers more than half). Not a perfect
    pairing of the pearls → invalid; else (pairs with two colours / all pairs)^10. ``solve``:
    sort by colour and pair pearl i with pearl i + N/2."""

    tags = TAGS
    difficulty_scales = "N = 6 + 2d pearls, 2 + d//3 colours"
    size_measure = "number of pearls N"
    size_key = "colours"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, k = 6 + 2 * difficulty, 2 + difficulty // 3
        while True:
            colours = [rng.randint(1, k) for _ in range(n)]
            if max(Counter(colours).values()) <= n // 2:
                break
        listing = ", ".join(f"pearl {i}: colour {c}" for i, c in enumerate(colours))
        prompt = (
            f"There are {n} pearls, labeled 0 to {n - 1}, with these colours: {listing}. Split "
            f"them into {n // 2} pairs (every pearl in exactly one pair) so that the two pearls "
            "of every pair have different colours. Give the pairs as (i, j), separated by "
            "commas."
        )
        data = {"colours": colours}
        return Instance(prompt, self._pairs(colours), data)

    def problem_space(self, difficulty: int) -> int | None:
        n, k = 6 + 2 * difficulty, 2 + difficulty // 3
        if n > 12:
            return None
        # colour sequences with every colour at most n/2 times: Σ over colour counts
        ways = [1] + [0] * n  # ways[t]: sequences of the first colours filling t places
        for _ in range(k):
            ways = [
                sum(ways[t - c] * math.comb(t, c) for c in range(min(t, n // 2) + 1))
                for t in range(n + 1)
            ]
        return ways[n]

    @staticmethod
    def _pairs(colours: list[int]) -> str:
        order = sorted(range(len(colours)), key=lambda i: (colours[i], i))
        half = len(colours) // 2
        return ", ".join(f"({order[i]}, {order[i + half]})" for i in range(half))

    def check(self, problem: Problem, answer: str) -> Verdict:
        colours = problem.data["colours"]
        pairs = parse_pairs(answer)
        flat = [v for pair in pairs for v in pair]
        if len(flat) != len(colours) or sorted(flat) != list(range(len(colours))):
            return invalid(f"pair every pearl 0..{len(colours) - 1} exactly once")
        good = sum(1 for i, j in pairs if colours[i] != colours[j])
        ok = good == len(pairs)
        score = (good / len(pairs)) ** 10
        return graded(score, ok, "correct" if ok else f"{len(pairs) - good} pairs share a colour")

    def solve(self, problem: Problem) -> str:
        # independent of _pairs: repeatedly pair a pearl of the most frequent colour with a
        # pearl of another colour (the most frequent colour never exceeds half what is left)
        left: dict[int, list[int]] = {}
        for i, c in enumerate(problem.data["colours"]):
            left.setdefault(c, []).append(i)
        pairs = []
        while any(left.values()):
            ranked = sorted((c for c in left if left[c]), key=lambda c: -len(left[c]))
            a, b = ranked[0], ranked[1]
            pairs.append((left[a].pop(), left[b].pop()))
        return ", ".join(f"({i}, {j})" for i, j in pairs)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rsplit(", (", 1)[0]  # one pair short

    def surface_forms(self, problem: Problem) -> list[str]:
        s = self.solve(problem)
        return [s, s.replace("(", "").replace(")", "").replace(", ", "-", 1), f"[{s}]"]
