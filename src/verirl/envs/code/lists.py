"""Program synthesis of list and array algorithms: a list pipeline, pair sums, maximum
subarray, window extremes, inversions, longest increasing subsequence, merging intervals (see
:mod:`verirl.envs.code.synthesis`). Difficulty adds pipeline steps and variants, and past a
threshold large inputs whose CPU limit rules out the quadratic brute force."""

from __future__ import annotations

import random
from typing import Any, ClassVar

from verirl.envs.base import ENVIRONMENTS
from verirl.envs.code.synthesis import ProgramSynthesis, step_text


# ---- list pipeline --------------------------------------------------------------------------
def ref_list_pipeline(p: dict[str, Any], xs: list[int]) -> list[int]:
    for op, k in p["steps"]:
        if op == "keep_even":
            xs = [x for x in xs if x % 2 == 0]
        elif op == "keep_above":
            xs = [x for x in xs if x > k]
        elif op == "times":
            xs = [x * k for x in xs]
        elif op == "plus":
            xs = [x + k for x in xs]
        elif op == "sort_desc":
            xs = sorted(xs, reverse=True)
        elif op == "prefix_sums":
            out, acc = [], 0
            for x in xs:
                acc += x
                out.append(acc)
            xs = out
        elif op == "unique":
            xs = list(dict.fromkeys(xs))
        elif op == "mod":
            xs = [x % k for x in xs]
        elif op == "diffs":
            xs = [xs[i + 1] - xs[i] for i in range(len(xs) - 1)]
        elif op == "first":
            xs = xs[:k]
    return xs


_LIST_STEPS = {
    "keep_even": "keep only the even numbers",
    "keep_above": "keep only the numbers greater than {k}",
    "times": "multiply every number by {k}",
    "plus": "add {k} to every number",
    "sort_desc": "sort in decreasing order",
    "prefix_sums": "replace the list by its running sums (the i-th item is the sum of the "
    "first i+1)",
    "unique": "keep only the first occurrence of every value",
    "mod": "replace every number x by x mod {k} (Python's %, result in [0, {k}))",
    "diffs": "replace the list by the differences of consecutive items (b - a; one item fewer, "
    "empty if fewer than two)",
    "first": "keep only the first {k} items",
}


@ENVIRONMENTS.register("code_list_pipeline")
class CodeListPipeline(ProgramSynthesis):
    difficulty_scales = "pipeline steps: 1 + difficulty // 3; longer lists"
    signature = "def solve(xs: list[int]) -> list[int]"
    reference = ref_list_pipeline

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        steps = [
            [rng.choice(sorted(_LIST_STEPS)), rng.randint(2, 7)] for _ in range(1 + difficulty // 3)
        ]
        return {"steps": steps}

    def spec(self, p: dict[str, Any]) -> str:
        lines = [
            f"{i + 1}. " + step_text(_LIST_STEPS[op], k=k) for i, (op, k) in enumerate(p["steps"])
        ]
        return "It transforms xs by these steps, in order:\n" + "\n".join(lines)

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def lst(n: int) -> list[int]:
            return [rng.randint(-9, 9) for _ in range(n)]

        fixed: list[list[Any]] = [[lst(5)], [lst(6)], [lst(4)], [[]], [[0]]]
        return fixed + [[lst(rng.randint(0, 8 + 3 * difficulty))] for _ in range(20)]


# ---- algorithmic list tasks with large inputs -------------------------------------------------
def _rand_list(n: int, seed: int, lo: int, hi: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randint(lo, hi) for _ in range(n)]


def _stress_sizes(difficulty: int, start: int = 6) -> list[int]:
    """No large test below ``start``; then one or two of n = 2000 · 1.35^(d - start), capped."""
    if difficulty < start:
        return []
    n = min(30_000, int(2000 * 1.35 ** (difficulty - start)))
    return [n] if difficulty < start + 6 else [n // 2, n]


class _ListAlgorithm(ProgramSynthesis):
    """A list task whose small tests grow with difficulty and large tests start at d = 6."""

    lo: ClassVar[int] = -20
    hi: ClassVar[int] = 20

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {"steps": [1] * (1 + difficulty // 4), **self.variant(difficulty, rng)}

    def variant(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {}

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def lst(n: int) -> list[int]:
            return [rng.randint(self.lo, self.hi) for _ in range(n)]

        out = [self.args(p, lst(6), rng), self.args(p, lst(7), rng), self.args(p, lst(5), rng)]
        out += [self.args(p, lst(1), rng), self.args(p, lst(2), rng)]
        out += [self.args(p, lst(rng.randint(1, 10 + 4 * difficulty)), rng) for _ in range(20)]
        return out

    def args(self, p: dict[str, Any], xs: list[int], rng: random.Random) -> list[Any]:
        return [xs]

    def stress(self, p: dict[str, Any], difficulty: int) -> list[int]:
        return _stress_sizes(difficulty)

    def stress_args(self, p: dict[str, Any], n: int, seed: int) -> list[Any]:
        return self.args(p, _rand_list(n, seed, self.lo * 50, self.hi * 50), random.Random(seed))


def ref_pair_sums(p: dict[str, Any], xs: list[int], target: int) -> int:
    counts: dict[int, int] = {}
    total = 0
    for x in xs:
        total += counts.get(target - x, 0)
        if p["distinct"]:
            counts[x] = 1
        else:
            counts[x] = counts.get(x, 0) + 1
    return total


@ENVIRONMENTS.register("code_pair_sums")
class CodePairSums(_ListAlgorithm):
    difficulty_scales = (
        "longer lists; at d >= 6 large lists rule out O(n^2); d >= 3: each later item "
        "counts once per value"
    )
    signature = "def solve(xs: list[int], target: int) -> int"
    reference = ref_pair_sums

    def variant(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {"distinct": difficulty >= 3}

    def args(self, p: dict[str, Any], xs: list[int], rng: random.Random) -> list[Any]:
        return [xs, rng.randint(-10, 10)]

    def spec(self, p: dict[str, Any]) -> str:
        if p["distinct"]:
            return (
                "It counts the positions j for which some earlier position i < j has "
                "xs[i] + xs[j] == target, where each j counts at most once per distinct "
                "value of xs[i]; equivalently, the number of (distinct earlier value, j) pairs."
            )
        return "It returns the number of index pairs i < j with xs[i] + xs[j] == target."


def ref_max_subarray(p: dict[str, Any], xs: list[int]) -> int:
    best = cur = xs[0]
    for x in xs[1:]:
        cur = max(x, cur + x)
        best = max(best, cur)
    if not p["circular"]:
        return best
    total = sum(xs)
    worst = cur = xs[0]
    for x in xs[1:]:
        cur = min(x, cur + x)
        worst = min(worst, cur)
    return best if worst == total else max(best, total - worst)


@ENVIRONMENTS.register("code_max_subarray")
class CodeMaxSubarray(_ListAlgorithm):
    difficulty_scales = "circular arrays at d >= 4; large lists from d = 6 rule out O(n^2)"
    signature = "def solve(xs: list[int]) -> int"
    reference = ref_max_subarray

    def variant(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {"circular": difficulty >= 4}

    def spec(self, p: dict[str, Any]) -> str:
        text = "xs is non-empty. It returns the largest sum of a non-empty contiguous sub-array"
        if p["circular"]:
            text += (
                ", where xs is circular: a sub-array may wrap from the end to the start "
                "(each position used at most once)"
            )
        return text + "."


def ref_window_max(p: dict[str, Any], xs: list[int], k: int) -> list[int]:
    from collections import deque

    dq: deque[int] = deque()
    out = []
    for i, x in enumerate(xs):
        while dq and (xs[dq[-1]] <= x if p["max"] else xs[dq[-1]] >= x):
            dq.pop()
        dq.append(i)
        if dq[0] <= i - k:
            dq.popleft()
        if i >= k - 1:
            out.append(xs[dq[0]])
    return out


@ENVIRONMENTS.register("code_window_extremes")
class CodeWindowExtremes(_ListAlgorithm):
    difficulty_scales = (
        "window minimum or maximum; large lists and windows from d = 6 rule out O(nk)"
    )
    signature = "def solve(xs: list[int], k: int) -> list[int]"
    reference = ref_window_max

    def variant(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {"max": rng.random() < 0.5}

    def args(self, p: dict[str, Any], xs: list[int], rng: random.Random) -> list[Any]:
        return [xs, rng.randint(1, max(1, len(xs) // 3 if len(xs) > 50 else len(xs)))]

    def spec(self, p: dict[str, Any]) -> str:
        what = "maximum" if p["max"] else "minimum"
        return (
            f"1 <= k <= len(xs). It returns the {what} of every window of k consecutive items, "
            "in order (one value per window: len(xs) - k + 1 of them)."
        )


def ref_inversions(p: dict[str, Any], xs: list[int]) -> int:
    def sort(a: list[int]) -> tuple[list[int], int]:
        if len(a) <= 1:
            return a, 0
        left, x = sort(a[: len(a) // 2])
        right, y = sort(a[len(a) // 2 :])
        merged, count, i, j = [], x + y, 0, 0
        while i < len(left) and j < len(right):
            if right[j] < left[i] or (p["weak"] and right[j] == left[i]):
                merged.append(right[j])
                count += len(left) - i
                j += 1
            else:
                merged.append(left[i])
                i += 1
        return merged + left[i:] + right[j:], count

    return sort(list(xs))[1]


@ENVIRONMENTS.register("code_inversions")
class CodeInversions(_ListAlgorithm):
    difficulty_scales = (
        "pairs with equal values count too at d >= 4; large lists from d = 6 rule out O(n^2)"
    )
    signature = "def solve(xs: list[int]) -> int"
    reference = ref_inversions

    def variant(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {"weak": difficulty >= 4}

    def spec(self, p: dict[str, Any]) -> str:
        rel = ">=" if p["weak"] else ">"
        return f"It returns the number of index pairs i < j with xs[i] {rel} xs[j]."


def ref_lis(p: dict[str, Any], xs: list[int]) -> int:
    import bisect

    tails: list[int] = []
    for x in xs:
        k = bisect.bisect_right(tails, x) if p["non_strict"] else bisect.bisect_left(tails, x)
        if k == len(tails):
            tails.append(x)
        else:
            tails[k] = x
    return len(tails)


@ENVIRONMENTS.register("code_longest_increasing")
class CodeLongestIncreasing(_ListAlgorithm):
    difficulty_scales = "non-decreasing at d >= 3; large lists from d = 6 rule out O(n^2)"
    signature = "def solve(xs: list[int]) -> int"
    reference = ref_lis

    def variant(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {"non_strict": difficulty >= 3}

    def spec(self, p: dict[str, Any]) -> str:
        kind = "non-decreasing" if p["non_strict"] else "strictly increasing"
        return f"It returns the length of the longest {kind} subsequence of xs (0 for [])."


def ref_merge_intervals(p: dict[str, Any], intervals: list[list[int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for a, b in sorted(intervals):
        if out and (a <= out[-1][1] + (1 if p["touch"] else 0)):
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


@ENVIRONMENTS.register("code_merge_intervals")
class CodeMergeIntervals(_ListAlgorithm):
    difficulty_scales = "adjacent integer intervals merge at d >= 3; large inputs from d = 6"
    signature = "def solve(intervals: list[list[int]]) -> list[list[int]]"
    reference = ref_merge_intervals

    def variant(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        return {"touch": difficulty >= 3}

    def args(self, p: dict[str, Any], xs: list[int], rng: random.Random) -> list[Any]:
        return [[[x, x + rng.randint(0, 5)] for x in xs]]

    def spec(self, p: dict[str, Any]) -> str:
        text = (
            "Each interval [a, b] (a <= b) is the set of integers a..b. It merges overlapping "
            "intervals and returns the result sorted by start"
        )
        if p["touch"]:
            text += "; intervals that are adjacent (like [1, 3] and [4, 6]) merge too"
        return text + "."
