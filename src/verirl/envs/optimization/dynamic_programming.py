"""Classic optimisation by dynamic programming: matrix-chain order, the egg-drop puzzle,
merging adjacent piles, rod cutting, merging any two piles (Huffman), weighted interval
scheduling and unit jobs with deadlines.

Each asks for the optimal value (an integer, scored with RLVE's (min/max)^10, as for the
catalogue's counting rows; Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning for
Language Models with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A, e.g.
MinDivisionSumXor, QuadraticFunctionSegmentation). Generators run the textbook recurrence
or greedy; ``solve_int`` uses exhaustive search on small instances and a different
formulation otherwise (top-down vs bottom-up, a closed form for the egg drop, the two-queue
Huffman merge, a knapsack over job counts), so the contract tests cross-check them.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import itertools
import math
import random

from verirl.envs.base import ENVIRONMENTS, Instance
from verirl.envs.kit.answers import SizedInteger
from verirl.envs.kit.wording import commas
from verirl.types import Problem

TAGS = ("dynamic_programming", "optimization")


@ENVIRONMENTS.register("matrix_chain_multiplication")
class MatrixChainMultiplication(SizedInteger):
    """The fewest scalar multiplications to evaluate a matrix product."""

    tags = TAGS
    difficulty_scales = "3 + d//2 matrices (at most 20), sides 2..10 + d"
    size_measure = "number of matrices"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(20, 3 + difficulty // 2)
        dims = [rng.randint(2, 10 + difficulty) for _ in range(n + 1)]
        shapes = ", ".join(f"M{i + 1} is {dims[i]} × {dims[i + 1]}" for i in range(n))
        prompt = (
            f"The product M1·M2·...·M{n} of {n} matrices is to be computed, where {shapes}. "
            "Multiplying a p × q matrix by a q × r matrix costs p·q·r scalar multiplications, "
            "and you may choose the order (the parenthesisation). What is the smallest total "
            "number of scalar multiplications?"
        )
        cost = [[0] * n for _ in range(n)]
        for length in range(2, n + 1):
            for i in range(n - length + 1):
                j = i + length - 1
                cost[i][j] = min(
                    cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                    for k in range(i, j)
                )
        return Instance(prompt, str(cost[0][n - 1]), {"dims": dims, "size": n})

    def solve_int(self, problem: Problem) -> int:
        dims = problem.data["dims"]

        @functools.cache
        def best(i: int, j: int) -> int:  # matrices i..j-1 (half-open)
            if j - i == 1:
                return 0
            return min(
                best(i, k) + best(k, j) + dims[i] * dims[k] * dims[j] for k in range(i + 1, j)
            )

        return best(0, len(dims) - 1)


@ENVIRONMENTS.register("egg_drop")
class EggDrop(SizedInteger):
    """The fewest drops that always find the critical floor with e eggs and N floors."""

    tags = TAGS
    difficulty_scales = "e in 2..2 + d//6 eggs; N up to 100·(d + 1) floors"
    size_measure = "number of floors"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        eggs = rng.randint(2, 2 + difficulty // 6)
        floors = rng.randint(10, 100 * (difficulty + 1))
        prompt = (
            f"You have {eggs} identical eggs and a building with {floors} floors. There is an "
            f"unknown floor F between 0 and {floors}: an egg dropped from a floor above F "
            "breaks, one dropped from floor F or below survives and can be used again. What is "
            "the smallest number of drops that always determines F, in the worst case, with "
            "the best strategy?"
        )
        t = 0
        while sum(math.comb(t, i) for i in range(1, eggs + 1)) < floors:
            t += 1
        return Instance(prompt, str(t), {"eggs": eggs, "floors": floors, "size": floors})

    def problem_space(self, difficulty: int) -> int | None:
        space = (1 + difficulty // 6) * (100 * (difficulty + 1) - 9)
        return space if space < 400 else None

    def solve_int(self, problem: Problem) -> int:
        """Floors coverable with t drops and e eggs: f(t, e) = f(t-1, e-1) + f(t-1, e) + 1;
        on small buildings, the minimax recurrence over the first drop."""
        eggs, floors = problem.data["eggs"], problem.data["floors"]
        if floors <= 150:
            prev = list(range(floors + 1))  # one egg: linear search
            for _ in range(2, eggs + 1):
                cur = [0] * (floors + 1)
                for n in range(1, floors + 1):
                    cur[n] = 1 + min(max(prev[k - 1], cur[n - k]) for k in range(1, n + 1))
                prev = cur
            return prev[floors]
        f = [0] * (eggs + 1)
        t = 0
        while f[eggs] < floors:
            t += 1
            f = [0] + [f[e - 1] + f[e] + 1 for e in range(1, eggs + 1)]
        return t


@ENVIRONMENTS.register("stone_merging")
class StoneMerging(SizedInteger):
    """Merge adjacent piles until one is left; each merge costs the merged size."""

    tags = TAGS
    difficulty_scales = "4 + d piles (at most 34) of 1..20 + 2d stones"
    size_measure = "number of piles"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        piles = [rng.randint(1, 20 + 2 * difficulty) for _ in range(min(34, 4 + difficulty))]
        prompt = (
            f"Piles of stones stand in a row with sizes {commas(piles)}. A merge joins two "
            "neighbouring piles into one, costing the number of stones in the new pile. What "
            "is the smallest total cost of merging all piles into a single pile?"
        )
        n = len(piles)
        pre = [0, *itertools.accumulate(piles)]
        cost = [[0] * n for _ in range(n)]
        for length in range(2, n + 1):
            for i in range(n - length + 1):
                j = i + length - 1
                cost[i][j] = (
                    pre[j + 1] - pre[i] + min(cost[i][k] + cost[k + 1][j] for k in range(i, j))
                )
        return Instance(prompt, str(cost[0][n - 1]), {"piles": piles, "size": n})

    def solve_int(self, problem: Problem) -> int:
        piles = tuple(problem.data["piles"])
        if len(piles) <= 7:  # every sequence of merges

            @functools.cache
            def go(state: tuple[int, ...]) -> int:
                if len(state) == 1:
                    return 0
                return min(
                    state[i]
                    + state[i + 1]
                    + go((*state[:i], state[i] + state[i + 1], *state[i + 2 :]))
                    for i in range(len(state) - 1)
                )

            return go(piles)

        @functools.cache
        def best(i: int, j: int) -> int:
            if j - i == 1:
                return 0
            return sum(piles[i:j]) + min(best(i, k) + best(k, j) for k in range(i + 1, j))

        return best(0, len(piles))


@ENVIRONMENTS.register("rod_cutting")
class RodCutting(SizedInteger):
    """The best revenue from cutting a rod into pieces with given prices."""

    tags = TAGS
    difficulty_scales = "rod length 5 + 2d; a price for every piece length"
    size_measure = "rod length"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        length = 5 + 2 * difficulty
        prices, p = [], 0
        for _ in range(length):
            p += rng.randint(1, 6)
            prices.append(p)
        table = ", ".join(f"length {i + 1}: {v}" for i, v in enumerate(prices))
        prompt = (
            f"A rod of length {length} can be cut into pieces of integer lengths (or sold "
            f"whole). A piece sells for the following price by its length: {table}. What is "
            "the largest total price obtainable?"
        )
        best = [0] * (length + 1)
        for n in range(1, length + 1):
            best[n] = max(prices[k - 1] + best[n - k] for k in range(1, n + 1))
        return Instance(prompt, str(best[length]), {"prices": prices, "size": length})

    def solve_int(self, problem: Problem) -> int:
        prices = problem.data["prices"]
        length = len(prices)
        if length <= 20:  # every partition of the length

            def parts(n: int, top: int) -> list[list[int]]:
                if n == 0:
                    return [[]]
                return [[k, *rest] for k in range(min(n, top), 0, -1) for rest in parts(n - k, k)]

            return max(sum(prices[k - 1] for k in ps) for ps in parts(length, length))
        best = [0] * (length + 1)  # unbounded knapsack, items outer
        for k in range(1, length + 1):
            for n in range(k, length + 1):
                best[n] = max(best[n], best[n - k] + prices[k - 1])
        return best[length]


@ENVIRONMENTS.register("huffman_merge_cost")
class HuffmanMergeCost(SizedInteger):
    """Merge any two piles at a time (cost = merged size) until one is left."""

    tags = TAGS
    difficulty_scales = "4 + 2d piles of 1..10 + 5d stones"
    size_measure = "number of piles"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        piles = [rng.randint(1, 10 + 5 * difficulty) for _ in range(4 + 2 * difficulty)]
        prompt = (
            f"There are piles of stones with sizes {commas(piles)}. A merge joins any two piles "
            "(not necessarily neighbours) into one, costing the number of stones in the new "
            "pile. What is the smallest total cost of merging all piles into one?"
        )
        heap = list(piles)
        heapq.heapify(heap)
        total = 0
        while len(heap) > 1:
            merged = heapq.heappop(heap) + heapq.heappop(heap)
            total += merged
            heapq.heappush(heap, merged)
        return Instance(prompt, str(total), {"piles": piles, "size": len(piles)})

    def solve_int(self, problem: Problem) -> int:
        piles = sorted(problem.data["piles"])
        if len(piles) <= 6:

            @functools.cache
            def go(state: tuple[int, ...]) -> int:
                if len(state) == 1:
                    return 0
                return min(
                    state[i]
                    + state[j]
                    + go(
                        tuple(
                            sorted(
                                [x for k, x in enumerate(state) if k not in (i, j)]
                                + [state[i] + state[j]]
                            )
                        )
                    )
                    for i, j in itertools.combinations(range(len(state)), 2)
                )

            return go(tuple(piles))
        # two queues: sorted leaves and merged piles (which come out in increasing order)
        leaves, total = list(piles), 0
        merged: list[int] = []
        li = mi = 0
        for _ in range(len(piles) - 1):
            pair = 0
            for _ in range(2):
                if mi >= len(merged) or (li < len(leaves) and leaves[li] <= merged[mi]):
                    pair += leaves[li]
                    li += 1
                else:
                    pair += merged[mi]
                    mi += 1
            merged.append(pair)
            total += pair
        return total


@ENVIRONMENTS.register("weighted_interval_scheduling")
class WeightedIntervalScheduling(SizedInteger):
    """The largest total weight of pairwise disjoint intervals."""

    tags = TAGS
    difficulty_scales = "5 + 2d intervals within [0, 20 + 5d]"
    size_measure = "number of intervals"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, span = 5 + 2 * difficulty, 20 + 5 * difficulty
        intervals = []
        for _ in range(n):
            s = rng.randint(0, span - 1)
            intervals.append(
                [s, rng.randint(s + 1, min(span, s + 3 + span // 4)), rng.randint(1, 20)]
            )
        listing = "; ".join(f"[{s}, {e}) weight {w}" for s, e, w in intervals)
        prompt = (
            f"You are given {n} half-open time intervals [start, end) with weights: {listing}. "
            "Choose some of them so that no two chosen intervals overlap (an interval ending "
            "at t and one starting at t do not overlap). What is the largest possible total "
            "weight?"
        )
        order = sorted(intervals, key=lambda x: x[1])
        ends = [e for _, e, _ in order]
        best = [0] * (n + 1)
        for i, (s, _e, w) in enumerate(order):
            k = bisect.bisect_right(ends, s, 0, i)
            best[i + 1] = max(best[i], best[k] + w)
        return Instance(prompt, str(best[n]), {"intervals": intervals, "size": n})

    def solve_int(self, problem: Problem) -> int:
        iv = problem.data["intervals"]
        if len(iv) <= 13:
            best = 0
            for mask in range(1 << len(iv)):
                chosen = sorted(iv[i] for i in range(len(iv)) if mask >> i & 1)
                if all(a[1] <= b[0] for a, b in itertools.pairwise(chosen)):
                    best = max(best, sum(w for _, _, w in chosen))
            return best
        order = sorted(iv)  # by start: tail[i] = best using intervals i.. only
        starts = [s for s, _, _ in order]
        tail = [0] * (len(order) + 1)
        for i in range(len(order) - 1, -1, -1):
            _s, e, w = order[i]
            nxt = bisect.bisect_left(starts, e, i + 1)
            tail[i] = max(tail[i + 1], w + tail[nxt])
        return tail[0]


@ENVIRONMENTS.register("job_sequencing_deadlines")
class JobSequencingDeadlines(SizedInteger):
    """Unit-time jobs with deadlines and profits on one machine: the largest profit."""

    tags = TAGS
    difficulty_scales = "5 + 2d jobs with deadlines 1..2 + d"
    size_measure = "number of jobs"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + 2 * difficulty
        jobs = [[rng.randint(1, 2 + difficulty), rng.randint(1, 30)] for _ in range(n)]
        listing = "; ".join(
            f"job {i + 1}: deadline {d}, profit {p}" for i, (d, p) in enumerate(jobs)
        )
        prompt = (
            f"One machine runs jobs one at a time; each of the {n} jobs takes one time unit. A "
            "job earns its profit only if it finishes by its deadline (a job with deadline d "
            f"must run in one of the time slots 1, ..., d). The jobs: {listing}. What is the "
            "largest total profit?"
        )
        slots = [False] * (3 + difficulty)
        total = 0
        for d, p in sorted(jobs, key=lambda j: -j[1]):
            for t in range(d, 0, -1):  # the latest free slot by the deadline
                if not slots[t]:
                    slots[t] = True
                    total += p
                    break
        return Instance(prompt, str(total), {"jobs": jobs, "size": n})

    def solve_int(self, problem: Problem) -> int:
        """Jobs by deadline; best[k] = most profit with k jobs scheduled (k ≤ deadline)."""
        best = [0]
        for d, p in sorted(problem.data["jobs"]):
            new = [*list(best), -1]
            for k in range(len(best)):
                if k + 1 <= d and best[k] >= 0:
                    new[k + 1] = max(new[k + 1], best[k] + p)
            best = new
        return max(best)
