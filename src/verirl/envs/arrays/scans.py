"""Arrays, scans and greedy choices: window minima, the spiral order of a matrix, stack
sorting moves, the salesman's fatigue for every number of visits, the heaviest increasing
subsequence, the longest affordable stretch with one free board, and one subsequence reversal.

RLVE-Gym rows SlidingWindow, SpiralMatrix, SingleStackSorting, SalesmanFatigue, WeightedLIS,
WIL and SubsequenceReversalLNDS (Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning
for Language Models with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A).
Element-wise answers get mean([gold = answer])^β with an answer of the wrong length invalid;
choices are checked against the constraints and scored (answer/gold)^5.
"""

from __future__ import annotations

import bisect
import itertools
import math
import random
import re
from collections import deque
from collections.abc import Mapping
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    parse_int,
    parse_int_list,
    ratio_reward,
    sequence_reward,
    wrong_format,
)
from verirl.envs.kit.wording import plural
from verirl.types import Problem, Verdict

TAGS = ("rlve", "arrays")


def _elementwise(got: list[int], gold: list[int], beta: float, what: str) -> Verdict:
    if len(got) != len(gold):
        return invalid(f"expected {len(gold)} numbers")
    ok = got == gold
    return graded(
        sequence_reward(got, gold, beta), ok, "correct" if ok else f"some {what} are wrong"
    )


class _ListTask(Environment):
    tags = TAGS
    answer_kind = "integer_list"
    unique_answer = True
    beta = 10.0
    what = "values"

    def check(self, problem: Problem, answer: str) -> Verdict:
        return _elementwise(
            parse_int_list(answer), parse_int_list(self.solve(problem)), self.beta, self.what
        )

    def count_answers(self, problem: Problem, limit: int = 2) -> int | None:
        return 1  # the list is a function of the input


@ENVIRONMENTS.register("sliding_window")
class SlidingWindow(_ListTask):
    """The minimum of every window of K consecutive numbers."""

    difficulty_scales = "N = 5 + d numbers in 0..99; K in 2..N-1"
    size_measure = "numbers N"
    what = "window minima"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + difficulty
        a = [rng.randint(0, 99) for _ in range(n)]
        k = rng.randint(2, n - 1)
        minima = [min(a[i : i + k]) for i in range(n - k + 1)]
        prompt = (
            f"You are given the following list of {n} numbers: {' '.join(map(str, a))}\nFor every "
            f"window of {k} consecutive numbers, from the window starting at the first number to "
            f"the one ending at the last, find the minimum. Give the {n - k + 1} minima in order, "
            "separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, minima)), {"a": a, "k": k})

    def solve(self, problem: Problem) -> str:
        a, k = problem.data["a"], problem.data["k"]
        window: deque[int] = deque()  # indices with increasing values
        out = []
        for i, x in enumerate(a):
            while window and a[window[-1]] >= x:
                window.pop()
            window.append(i)
            if window[0] <= i - k:
                window.popleft()
            if i >= k - 1:
                out.append(a[window[0]])
        return ", ".join(map(str, out))

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["a"]))


@ENVIRONMENTS.register("spiral_matrix")
class SpiralMatrix(_ListTask):
    """The elements of a matrix in clockwise spiral order from the top-left corner."""

    difficulty_scales = "M, N in 2..3 + d//2"
    size_measure = "cells M·N"
    beta = 5.0
    what = "elements"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        m, n = (rng.randint(2, 3 + difficulty // 2) for _ in range(2))
        mat = [[rng.randint(0, 99) for _ in range(n)] for _ in range(m)]
        out: list[int] = []
        grid = [row[:] for row in mat]
        while grid:  # peel the top row, then turn the rest counter-clockwise
            out += grid.pop(0)
            grid = [list(col) for col in zip(*grid, strict=True)][::-1] if grid else []
        prompt = (
            f"You are given a 2D integer matrix of size {m} x {n}:\n"
            + "\n".join(" ".join(map(str, row)) for row in mat)
            + "\n\nList all its elements in clockwise spiral order, starting from the top-left "
            "corner and going right along the first row. Give them separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, out)), {"matrix": mat})

    def solve(self, problem: Problem) -> str:
        mat = problem.data["matrix"]
        top, bottom, left, right = 0, len(mat) - 1, 0, len(mat[0]) - 1
        out: list[int] = []
        while top <= bottom and left <= right:
            out += [mat[top][j] for j in range(left, right + 1)]
            out += [mat[i][right] for i in range(top + 1, bottom + 1)]
            if top < bottom:
                out += [mat[bottom][j] for j in range(right - 1, left - 1, -1)]
            if left < right:
                out += [mat[i][left] for i in range(bottom - 1, top, -1)]
            top, bottom, left, right = top + 1, bottom - 1, left + 1, right - 1
        return ", ".join(map(str, out))

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["matrix"]) * len(problem.data["matrix"][0]))


_OP = re.compile(r"push|pop", re.IGNORECASE)


@ENVIRONMENTS.register("single_stack_sorting")
class SingleStackSorting(Environment):
    """The push/pop sequence that turns the queue 0..N-1 into a given output through one
    stack: mean([gold = answer])^10 over the 2N operations."""

    tags = TAGS
    answer_kind = "text"
    unique_answer = True
    difficulty_scales = "N = 3 + d elements"
    size_measure = "elements N (the answer has 2N operations)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        ops: list[str] = []
        output: list[int] = []
        stack: list[int] = []
        nxt = 0
        while len(output) < n:  # a random valid run: push while possible, pop at random
            if nxt < n and (not stack or rng.random() < 0.5):
                stack.append(nxt)
                nxt += 1
                ops.append("push")
            else:
                output.append(stack.pop())
                ops.append("pop")
        prompt = (
            f"You are given a queue of {n} integers in increasing order from 0 (at the front) to "
            f"{n - 1} (at the back), and an empty stack. Two operations are allowed: push moves "
            "the front element of the queue onto the top of the stack, and pop removes the top "
            "element of the stack and appends it to the output. Give the sequence of exactly "
            f"{2 * n} operations that produces the output {' '.join(map(str, output))}, written "
            'as the words push and pop separated by commas, e.g. "push, push, pop, pop".'
        )
        return Instance(prompt, ", ".join(ops), {"output": output})

    def check(self, problem: Problem, answer: str) -> Verdict:
        target = problem.data["output"]
        words = [w for w in re.split(r"[\s,;]+", answer.strip().strip("[]()")) if w]
        if (
            not words
            or len(words) > 4 * len(target) + 4
            or any(not _OP.fullmatch(w) for w in words)
        ):
            return wrong_format("expected the words push and pop separated by commas")
        ops = [w.lower() for w in words]
        if len(ops) != 2 * len(target):
            return invalid(f"expected exactly {2 * len(target)} operations")
        stack, nxt, out = [], 0, []
        for op in ops:
            if op == "push":
                if nxt == len(target):
                    return invalid("push on an empty queue")
                stack.append(nxt)
                nxt += 1
            else:
                if not stack:
                    return invalid("pop on an empty stack")
                out.append(stack.pop())
        gold = self.solve(problem).split(", ")
        ok = out == target
        return graded(
            sequence_reward(ops, gold, 10.0),
            ok,
            "correct" if ok else "the output is not the target",
        )

    def solve(self, problem: Problem) -> str:
        """Push until the next wanted element is on top, then pop it."""
        ops: list[str] = []
        stack: list[int] = []
        nxt = 0
        for want in problem.data["output"]:
            while not stack or stack[-1] != want:
                stack.append(nxt)
                nxt += 1
                ops.append("push")
            stack.pop()
            ops.append("pop")
        return ", ".join(ops)

    def count_answers(self, problem: Problem, limit: int = 2) -> int | None:
        return 1  # each pop must take the next wanted element: the run is forced

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return "pop, " + answer.split(", ", 1)[1]

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["output"]))

    def problem_space(self, difficulty: int) -> int | None:
        n = 3 + difficulty
        return min(
            10**9, math.comb(2 * n, n) // (n + 1)
        )  # stack-sortable outputs: the Catalan number


@ENVIRONMENTS.register("salesman_fatigue")
class SalesmanFatigue(_ListTask):
    """For X = 1..N, the largest fatigue 2·(farthest distance) + Σ A over X distinct houses."""

    difficulty_scales = "N = 3 + d houses; distances and fatigues up to 10 + 3d"
    size_measure = "houses N"
    beta = 5.0
    what = "maxima"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = 3 + difficulty, 10 + 3 * difficulty
        s = sorted(rng.randint(1, top) for _ in range(n))
        a = [rng.randint(1, top) for _ in range(n)]
        best = []
        for x in range(1, n + 1):  # fix the farthest house j, take the best x-1 others within
            value = 0
            for j in range(n):
                others = sorted((a[i] for i in range(n) if i != j and s[i] <= s[j]), reverse=True)
                if len(others) >= x - 1:
                    value = max(value, 2 * s[j] + a[j] + sum(others[: x - 1]))
            best.append(value)
        pairs = "\n".join(f"(S[{i}], A[{i}]) = ({s[i]}, {a[i]})" for i in range(n))
        prompt = (
            f"A salesman lives at distance 0 on a street; house i is at distance S[i] from him "
            f"and selling there costs fatigue A[i]. The {n} houses are:\n{pairs}\n\nVisiting a set "
            "of distinct houses costs a total fatigue of 2 × (the largest S among them, for the "
            "walk there and back) plus the sum of their A. For each X = 1, 2, ..., "
            f"{n}, find the largest total fatigue over all sets of exactly X houses. Give the {n} "
            "values in order of X, separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, best)), {"s": s, "a": a})

    def solve(self, problem: Problem) -> str:
        """Greedy by A: either the X largest A (distance from among them), or the X-1
        largest A plus the best 2·S + A among the rest."""
        s, a = problem.data["s"], problem.data["a"]
        n = len(s)
        order = sorted(range(n), key=lambda i: -a[i])
        prefix_a, prefix_s = [0], [0]
        for i in order:
            prefix_a.append(prefix_a[-1] + a[i])
            prefix_s.append(max(prefix_s[-1], s[i]))
        suffix = [0] * (n + 1)  # best 2·S + A among order[k:]
        for k in range(n - 1, -1, -1):
            suffix[k] = max(suffix[k + 1], 2 * s[order[k]] + a[order[k]])
        out = [
            max(prefix_a[x] + 2 * prefix_s[x], prefix_a[x - 1] + suffix[x - 1])
            for x in range(1, n + 1)
        ]
        return ", ".join(map(str, out))

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["s"]))


@ENVIRONMENTS.register("weighted_lis")
class WeightedLis(Environment):
    """Indices with strictly increasing A maximising the sum of B: (answer/gold)^5."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "N = 4 + d; A in 1..2N, B in 1..20"
    size_measure = "length N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        a = [rng.randint(1, 2 * n) for _ in range(n)]
        b = [rng.randint(1, 20) for _ in range(n)]
        prompt = (
            f"You are given two arrays A and B, each of length {n} (indexed from 0):\n"
            f"A = {' '.join(map(str, a))}\nB = {' '.join(map(str, b))}\nChoose indices "
            "i1 < i2 < ... < ik (k ≥ 1) with A[i1] < A[i2] < ... < A[ik] (strictly increasing) "
            "so that B[i1] + B[i2] + ... + B[ik] is as large as possible. Give the indices "
            "separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, _heaviest(a, b))), {"a": a, "b": b})

    def check(self, problem: Problem, answer: str) -> Verdict:
        a, b = problem.data["a"], problem.data["b"]
        idx = parse_int_list(answer)
        if not idx or len(idx) > len(a) or any(not 0 <= i < len(a) for i in idx):
            return invalid(f"give between 1 and {len(a)} indices from 0 to {len(a) - 1}")
        if any(i >= j or a[i] >= a[j] for i, j in itertools.pairwise(idx)):
            return invalid("indices and their A values must be strictly increasing")
        value, best = sum(b[i] for i in idx), sum(b[i] for i in _heaviest(a, b))
        ok = value == best
        return graded(
            ratio_reward(value, best, 5.0), ok, "correct" if ok else "a heavier choice exists"
        )

    def solve(self, problem: Problem) -> str:
        return ", ".join(map(str, _heaviest(problem.data["a"], problem.data["b"])))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer + ", " + answer.split(", ")[-1]

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["a"]))


def _heaviest(a: list[int], b: list[int]) -> list[int]:
    best = list(b)
    prev = [-1] * len(a)
    for j in range(len(a)):
        for i in range(j):
            if a[i] < a[j] and best[i] + b[j] > best[j]:
                best[j], prev[j] = best[i] + b[j], i
    j = max(range(len(a)), key=lambda k: best[k])
    out = []
    while j != -1:
        out.append(j)
        j = prev[j]
    return out[::-1]


@ENVIRONMENTS.register("wil")
class Wil(Environment):
    """The longest interval whose sum is at most P once one board of up to D consecutive
    elements is laid (set to 0) inside it: (length/gold)^5."""

    tags = TAGS
    answer_kind = "integer_list"
    difficulty_scales = "N = 3 + d elements in 1..10; D in 1..N; P up to 3N"
    size_measure = "length N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        a = [rng.randint(1, 10) for _ in range(n)]
        d = rng.randint(1, n)
        p = rng.randint(0, 3 * n)
        data = {"a": a, "d": d, "p": p}
        prompt = (
            f"You are given an array A of length {n}, indexed from 1 to {n}: "
            f"{' '.join(map(str, a))}\nYou may choose one interval of at most "
            f"{plural(d, 'consecutive position')} and set the elements there to 0. Find the "
            "longest interval [l, r] such "
            f"that, after doing so (the zeroed positions may be chosen for this interval), the sum "
            f"of A[l..r] is at most {p}. Give l and r separated by a comma."
        )
        return Instance(prompt, "{}, {}".format(*_longest(data)), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        a = problem.data["a"]
        got = parse_int_list(answer)
        if len(got) != 2 or not 1 <= got[0] <= got[1] <= len(a):
            return invalid(f"give l and r with 1 ≤ l ≤ r ≤ {len(a)}")
        l, r = got
        if _cost(problem.data, l, r) > problem.data["p"]:
            return invalid("even with the board, the interval's sum exceeds the limit")
        gold_l, gold_r = _longest(problem.data)
        length, best = r - l + 1, gold_r - gold_l + 1
        ok = length == best
        return graded(
            ratio_reward(length, best, 5.0), ok, "correct" if ok else "a longer interval exists"
        )

    def solve(self, problem: Problem) -> str:
        return "{}, {}".format(*_longest(problem.data))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return f"0, {len(problem.data['a'])}"

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["a"]))


def _cost(data: Mapping[str, Any], l: int, r: int) -> int:
    seg = data["a"][l - 1 : r]
    width = min(data["d"], len(seg))
    return sum(seg) - max(sum(seg[i : i + width]) for i in range(len(seg) - width + 1))


def _longest(data: Mapping[str, Any]) -> tuple[int, int]:
    """Every interval is affordable at length ≤ D (all zeroed), so a best one always exists."""
    n = len(data["a"])
    best = (1, 1)
    for l in range(1, n + 1):
        for r in range(l, n + 1):
            if r - l > best[1] - best[0] and _cost(data, l, r) <= data["p"]:
                best = (l, r)
    return best


@ENVIRONMENTS.register("subsequence_reversal_lnds")
class SubsequenceReversalLnds(Environment):
    """Reverse the values along one chosen subsequence, then take the longest non-decreasing
    subsequence: its largest possible length (binary reward)."""

    tags = TAGS
    answer_kind = "integer"
    difficulty_scales = "N = 4 + d//2 elements (at most 11); values 1..3 + d//4"
    size_measure = "length N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = min(11, 4 + difficulty // 2), 3 + difficulty // 4
        a = [rng.randint(1, top) for _ in range(n)]
        prompt = (
            f"You are given a sequence A of {n} integers: {' '.join(map(str, a))}\nYou may choose "
            "any subsequence of positions i1 < i2 < ... < ik once and reverse the values on them "
            "(the value at i1 swaps with the value at ik, the value at i2 with the one at i(k-1), "
            "and so on). After at most one such reversal, what is the largest possible length of "
            "a longest non-decreasing subsequence of A?"
        )
        return Instance(prompt, str(_reversal_dp(a)), {"a": a})

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer)  # the interval DP, checked against solve()'s brute force
        ok = value == _reversal_dp(problem.data["a"])  # RLVE's row is binary
        return graded(0.0, ok, "correct" if ok else "the length is not right")

    def solve(self, problem: Problem) -> str:
        """Every subsequence reversed, longest non-decreasing subsequence by patience sorting."""
        a = problem.data["a"]
        n, best = len(a), 0
        for mask in range(1 << n):
            picked = [i for i in range(n) if mask >> i & 1]
            b = list(a)
            for i, j in zip(picked, reversed(picked), strict=True):
                b[i] = a[j]
            tails: list[int] = []
            for x in b:
                k = bisect.bisect_right(tails, x)
                tails[k : k + 1] = [x]
            best = max(best, len(tails))
        return str(best)

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["a"]))

    def problem_space(self, difficulty: int) -> int | None:
        return min(10**9, (3 + difficulty // 4) ** min(11, 4 + difficulty // 2))


def _reversal_dp(a: list[int]) -> int:
    """f(l, r, lo, hi): the longest non-decreasing subsequence with values in [lo, hi] that
    can be built from a[l..r] with one subsequence reversed inside it; a[l] may be used as
    the value lo (kept) or, swapped with a[r], as the value hi, and symmetrically."""
    n, top = len(a), max(a)
    memo: dict[tuple[int, int, int, int], int] = {}

    def f(l: int, r: int, lo: int, hi: int) -> int:
        if lo > hi:
            return 0
        if l > r:
            return 0
        if l == r:
            return int(lo <= a[l] <= hi)
        key = (l, r, lo, hi)
        if key not in memo:
            best = max(f(l, r, lo + 1, hi), f(l, r, lo, hi - 1))
            best = max(best, f(l + 1, r, lo, hi) + (a[l] == lo), f(l, r - 1, lo, hi) + (a[r] == hi))
            best = max(best, f(l + 1, r - 1, lo, hi) + (a[r] == lo) + (a[l] == hi))
            memo[key] = best
        return memo[key]

    return f(0, n - 1, 1, top)
