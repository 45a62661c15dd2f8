"""Counting operation sequences: the ways to sort a permutation of 1..2^N by block swaps
where each block size is used at most once.

RLVE-Gym row SegmentTreeSortingCounting (Zeng et al. 2025, "RLVE: Scaling Up Reinforcement
Learning for Language Models with Adaptive Verifiable Environments", arXiv:2511.07317,
Appendix A). The answer is a count scored (min/max)^10; the generator counts with the usual
level-by-level search (at most two faulty segments per level), the verifier by searching over
orders of operations directly.
"""

from __future__ import annotations

import math
import random

from verirl.envs.base import ENVIRONMENTS, Instance, IntegerAnswer, count_verdict, parse_int
from verirl.types import Problem, Verdict


def _swap_blocks(a: list[int], size: int, x: int, y: int) -> list[int]:
    """Swap the x-th and y-th blocks of length ``size`` (0-based)."""
    b = list(a)
    b[x * size : (x + 1) * size], b[y * size : (y + 1) * size] = (
        a[y * size : (y + 1) * size],
        a[x * size : (x + 1) * size],
    )
    return b


def _runs_ok(a: list[int], size: int) -> bool:
    """Every aligned segment of length ``size`` is a run of consecutive increasing values."""
    return all(
        a[s + k + 1] == a[s + k] + 1 for s in range(0, len(a), size) for k in range(size - 1)
    )


def _level_count(a: list[int], n: int) -> int:
    """Levels from small blocks to large: at level i every aligned segment of length 2^i
    must become a run; at most two faulty segments can be repaired by one swap of
    2^(i-1)-blocks. Each repairing set of k operations can be ordered in k! ways."""
    total = 0

    def search(level: int, arr: list[int], used: int) -> None:
        nonlocal total
        if level > n:
            total += math.factorial(used)
            return
        size, half = 2**level, 2 ** (level - 1)
        bad = [s for s in range(0, len(arr), size) if not _runs_ok(arr[s : s + size], size)]
        if not bad:
            if _runs_ok(arr, half):
                search(level + 1, arr, used)
            return
        if len(bad) > 2:
            return
        blocks = [(s // half, s // half + 1) for s in bad]
        options = [blocks[0]] if len(bad) == 1 else [(p, q) for p in blocks[0] for q in blocks[1]]
        for x, y in options:
            b = _swap_blocks(arr, half, x, y)
            if all(_runs_ok(b[s : s + size], size) for s in range(0, len(b), size)):
                search(level + 1, b, used + 1)

    if _runs_ok(a, 1):
        search(1, a, 0)
    return total


@ENVIRONMENTS.register("segment_tree_sorting_counting")
class SegmentTreeSortingCounting(IntegerAnswer):
    """Operation i (1 ≤ i ≤ N) cuts the array into blocks of length 2^(i-1) and swaps two of
    them; each operation may be used at most once, in any order. How many operation
    sequences sort the array?"""

    tags = ("rlve", "counting")
    difficulty_scales = (
        "N = 2 + d//6 (at most 4, 16 elements); the permutation is 0..3 random ops from sorted"
    )
    size_measure = "array length 2^N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(4, 2 + difficulty // 6)
        a = list(range(1, 2**n + 1))
        for i in rng.sample(range(1, n + 1), rng.randint(0, min(n, 3))):
            size = 2 ** (i - 1)
            x, y = rng.sample(range(2**n // size), 2)
            a = _swap_blocks(a, size, x, y)
        if rng.random() < 0.2:  # sometimes an arbitrary permutation (often unsortable)
            rng.shuffle(a)
        total = _level_count(a, n)
        prompt = (
            f"You are given a permutation of the integers 1 to {2**n}: {' '.join(map(str, a))}\n"
            f"For each i from 1 to {n} there is an operation of type i: cut the current array "
            f"into consecutive blocks of length 2^(i-1) and swap two different blocks. Each type "
            "may be used at most once, and the chosen operations may be performed in any order. "
            "How many different sequences of operations turn the array into 1, 2, 3, ..., "
            f"{2**n}? Two sequences differ if they have different lengths, or differ in the type "
            "or in the swapped blocks of some step; the empty sequence counts when the array is "
            "already sorted."
        )
        return Instance(prompt, str(total), {"a": a, "n": n})

    def solve_int(self, problem: Problem) -> int:
        """Search over sequences directly: at each step any unused type and any pair of its
        blocks, memoised on (array, used types)."""
        a, n = problem.data["a"], problem.data["n"]
        target = list(range(1, 2**n + 1))
        memo: dict[tuple[tuple[int, ...], int], int] = {}

        def count(arr: list[int], used: int) -> int:
            key = (tuple(arr), used)
            if key in memo:
                return memo[key]
            ways = int(arr == target)
            for i in range(1, n + 1):
                if used >> i & 1:
                    continue
                size = 2 ** (i - 1)
                m = len(arr) // size
                for x in range(m):
                    for y in range(x + 1, m):
                        ways += count(_swap_blocks(arr, size, x, y), used | 1 << i)
            memo[key] = ways
            return ways

        return count(list(a), 0)

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer)  # the level search; solve() searches sequences directly
        gold = _level_count(problem.data["a"], problem.data["n"])
        return count_verdict(value, gold, "the number of sequences is not right")

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["a"]))

    def problem_space(self, difficulty: int) -> int | None:
        return min(10**9, math.factorial(2 ** min(4, 2 + difficulty // 6)))
