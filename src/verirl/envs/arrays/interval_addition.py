"""Intervals, part 2: choose K of M range additions to make the array's minimum as large as
possible.

Row MaxMinimum_AfterIntervalAddition of the RLVE catalogue (Zeng et al., *RLVE: Scaling Up
Reinforcement Learning for Language Models with Adaptive Verifiable Environments*,
arXiv:2511.07317). The verifier applies the chosen additions and grades (minimum/gold)^5. The
optimum comes from a binary search on the target with a greedy sweep (a position below the
target takes, among the unused intervals covering it, the one reaching farthest right);
``solve`` tries every choice of K intervals on small instances.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from collections.abc import Mapping
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    invalid,
    optimum_verdict,
    parse_int_list,
)
from verirl.types import Problem, Verdict

TAGS = ("rlve", "intervals")


def _feasible(values: list[int], intervals: list[list[int]], k: int, add: int, target: int) -> bool:
    n = len(values)
    starts: list[list[int]] = [[] for _ in range(n)]
    for i, (l, _) in enumerate(intervals):
        starts[l].append(i)
    heap: list[tuple[int, int]] = []  # (-right end, index) of intervals started so far
    diff = [0] * (n + 1)
    running, used = 0, 0
    for pos in range(n):
        running += diff[pos]
        for i in starts[pos]:
            heapq.heappush(heap, (-intervals[i][1], i))
        while values[pos] + running * add < target:
            while heap and -heap[0][0] < pos:
                heapq.heappop(heap)
            if not heap or used == k:
                return False
            right, _ = heapq.heappop(heap)
            used += 1
            running += 1
            diff[-right + 1] -= 1
    return True


def best_minimum(values: list[int], intervals: list[list[int]], k: int, add: int) -> int:
    lo, hi = min(values), min(values) + k * add
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _feasible(values, intervals, k, add, mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _apply(values: list[int], intervals: list[list[int]], chosen: list[int], add: int) -> list[int]:
    out = list(values)
    for i in chosen:
        l, r = intervals[i]
        for pos in range(l, r + 1):
            out[pos] += add
    return out


@ENVIRONMENTS.register("max_minimum_after_interval_addition")
class MaxMinimumAfterIntervalAddition(Environment):
    """Choose exactly K of M intervals, each adding D to its positions, to maximise the
    minimum of the array; (minimum/gold)^5 credit."""

    tags = TAGS
    difficulty_scales = "N = 3 + d positions; M = N intervals; K in 1..M-1; values 1..2N"
    size_measure = "number of positions N"
    size_key = "values"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        values = [rng.randint(1, 2 * n) for _ in range(n)]
        intervals = []
        for _ in range(n):
            l = rng.randrange(n)
            intervals.append([l, rng.randint(l, min(n - 1, l + max(1, n // 3)))])
        k = rng.randint(1, n - 1)
        add = rng.randint(1, 3)
        shown = " ".join(f"A[{i}]={v}" for i, v in enumerate(values))
        listing = "\n".join(f"{i}: [{l}, {r}]" for i, (l, r) in enumerate(intervals))
        prompt = (
            f"You are given an array ARRAY of length {n}: {shown}\nand {n} intervals of "
            f"positions (both ends included):\n{listing}\n\nChoose exactly {k} different "
            f"intervals; each chosen interval adds {add} to every position it covers. Make the "
            "minimum of the resulting array as large as possible. Output the indices of the "
            "chosen intervals separated by spaces; if several choices are optimal, any of them "
            "is accepted."
        )
        data = {"values": values, "intervals": intervals, "k": k, "add": add}
        return Instance(prompt, self._greedy_choice(data), data)

    @staticmethod
    def _greedy_choice(data: Mapping[str, Any]) -> str:
        values, intervals, k, add = data["values"], data["intervals"], data["k"], data["add"]
        target = best_minimum(values, intervals, k, add)
        n = len(values)
        chosen: list[int] = []
        covered = [0] * n
        for pos in range(n):
            while values[pos] + covered[pos] * add < target:
                options = [
                    i for i, (l, r) in enumerate(intervals) if l <= pos <= r and i not in chosen
                ]
                pick = max(options, key=lambda i: intervals[i][1])
                chosen.append(pick)
                for x in range(intervals[pick][0], intervals[pick][1] + 1):
                    covered[x] += 1
        rest = [i for i in range(len(intervals)) if i not in chosen]
        chosen += rest[: k - len(chosen)]  # more additions never lower the minimum
        return " ".join(map(str, sorted(chosen)))

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        chosen = parse_int_list(answer)
        if len(chosen) != d["k"] or len(set(chosen)) != d["k"]:
            return invalid(f"choose exactly {d['k']} different intervals")
        if any(not 0 <= i < len(d["intervals"]) for i in chosen):
            return invalid("an interval index is out of range")
        got = min(_apply(d["values"], d["intervals"], chosen, d["add"]))
        best = best_minimum(d["values"], d["intervals"], d["k"], d["add"])
        return optimum_verdict(got, best, "a choice with a larger minimum exists")

    def solve(self, problem: Problem) -> str:
        d = problem.data
        m, k = len(d["intervals"]), d["k"]
        if math.comb(m, k) > 3000:
            return self._greedy_choice(d)
        best = max(
            itertools.combinations(range(m), k),
            key=lambda c: min(_apply(d["values"], d["intervals"], list(c), d["add"])),
        )
        return " ".join(map(str, best))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return f"{answer} {answer.split()[0]}"  # an interval twice
