"""Sequences and dynamic programming: terms of arithmetic, geometric and polynomial
sequences, a linear recurrence modulo m, longest increasing / common subsequences, maximum
subarray, coin change, climbing stairs, a minimum-cost grid path and a maximum non-adjacent sum.

Rewards: values and counts get RLVE's (min/max)^10; residues are binary (invalid outside
``[0, m)``). Optimisation tasks ask for the solution itself, which the verifier checks against
the constraints (invalid when it breaks one) and scores by its ratio to the optimum, β = 5:
(answer/optimum)^5 for maximisation, (optimum/answer)^5 for minimisation. Any optimal solution
is correct.
"""

from __future__ import annotations

import itertools
import math
import random
import re

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    IntegerAnswer,
    invalid,
    optimum_verdict,
    parse_int_list,
    wrong_format,
)
from verirl.envs.kit.answers import ResidueAnswer
from verirl.envs.kit.wording import commas
from verirl.types import Problem, Verdict


def _terms(values: list[int]) -> str:
    return ", ".join(f"a({i}) = {v}" for i, v in enumerate(values, 1))


class _SequenceTerm(IntegerAnswer):
    def size(self, problem: Problem) -> float:
        return float(problem.data["index"])


@ENVIRONMENTS.register("arithmetic_sequence_term")
class ArithmeticSequenceTerm(_SequenceTerm):
    size_measure = "index of the asked term"
    difficulty_scales = "asked index ≤ 5 + d²/2; start, step grow with d (any sign from d 3)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        if difficulty < 3:
            start, step = rng.randint(1, 10), rng.randint(1, 5)
        else:
            start = rng.randint(-5 * difficulty, 10 + 5 * difficulty)
            step = rng.choice([-1, 1]) * rng.randint(1, 5 + 2 * difficulty)
        index = 5 + rng.randint(0, difficulty * difficulty // 2)
        shown = [start + i * step for i in range(4)]
        prompt = (
            f"The sequence a(1), a(2), a(3), ... is arithmetic (consecutive terms differ by the "
            f"same amount): {_terms(shown)}. What is a({index})?"
        )
        answer = start + (index - 1) * step
        return Instance(prompt, str(answer), {"shown": shown, "index": index})

    def solve_int(self, problem: Problem) -> int:
        a, index = problem.data["shown"], problem.data["index"]
        value, step = a[-1], a[1] - a[0]
        for _ in range(index - len(a)):
            value += step
        return value

    def problem_space(self, difficulty: int) -> int | None:
        return 50 if difficulty < 2 else None  # start 1..10, step 1..5, index 5


@ENVIRONMENTS.register("geometric_sequence_term")
class GeometricSequenceTerm(_SequenceTerm):
    size_measure = "index of the asked term"
    difficulty_scales = (
        "asked term index 5 + d//2 (+0 or 1); first term up to 12 + 3d; ratio up to 3 + d//4 "
        "(negative from d 6)"
    )

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        start = rng.randint(1, 12 + 3 * difficulty)
        ratio = rng.randint(2, 3 + difficulty // 4)
        if difficulty >= 6 and rng.random() < 0.5:
            ratio = -ratio
        index = 5 + difficulty // 2 + rng.randint(0, 1)
        shown = [start * ratio**i for i in range(4)]
        prompt = (
            "The sequence a(1), a(2), a(3), ... is geometric (each term is the previous one "
            f"times the same integer): {_terms(shown)}. What is a({index})?"
        )
        answer = start * ratio ** (index - 1)
        return Instance(prompt, str(answer), {"shown": shown, "index": index})

    def solve_int(self, problem: Problem) -> int:
        a, index = problem.data["shown"], problem.data["index"]
        value, ratio = a[-1], a[1] // a[0]
        for _ in range(index - len(a)):
            value *= ratio
        return value

    def problem_space(self, difficulty: int) -> int | None:
        signs = 2 if difficulty >= 6 else 1
        space = (12 + 3 * difficulty) * (2 + difficulty // 4) * signs * 2
        return space if space < 1000 else None


@ENVIRONMENTS.register("polynomial_sequence_next")
class PolynomialSequenceNext(IntegerAnswer):
    size_measure = "degree of the hidden polynomial"
    difficulty_scales = "degree 2 + d//5; coefficients up to 6 + d//3 in size (negative from d 3)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        degree = 2 + difficulty // 5
        c = 6 + difficulty // 3
        lo = 0 if difficulty < 3 else -c
        coeffs = [rng.randint(lo, c) for _ in range(degree)]
        coeffs.append(rng.choice([x for x in range(lo, c + 1) if x]))  # leading, non-zero

        def p(n: int) -> int:
            return sum(a * n**i for i, a in enumerate(coeffs))

        shown = [p(n) for n in range(1, degree + 3)]
        prompt = (
            f"The values a(n) = p(n) of a polynomial p with integer coefficients and degree at "
            f"most {degree} are: {_terms(shown)}. What is a({len(shown) + 1})?"
        )
        return Instance(prompt, str(p(len(shown) + 1)), {"shown": shown, "degree": degree})

    def solve_int(self, problem: Problem) -> int:
        rows = [list(problem.data["shown"])]  # finite differences: the last row is constant
        while len(rows[-1]) > 1:
            rows.append([b - a for a, b in zip(rows[-1], rows[-1][1:], strict=False)])
        return sum(row[-1] for row in rows)

    def size(self, problem: Problem) -> float:
        return float(problem.data["degree"])


@ENVIRONMENTS.register("linear_recurrence_mod")
class LinearRecurrenceMod(ResidueAnswer):
    difficulty_scales = (
        "index 6 + 4d (+0..3); multipliers ≤ 1 + d//3; modulus 10, from d 3 ≤ 10^(1 + d//6)"
    )

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        if difficulty == 0:  # Fibonacci-like: the rule fixed, the start and the index vary
            p = q = 1
            a1, a2 = rng.randint(0, 3), rng.randint(0, 3)
        else:
            p, q = (rng.randint(1, 1 + difficulty // 3) for _ in range(2))
            a1, a2 = (rng.randint(0, 3 + difficulty) for _ in range(2))
        m = 10 if difficulty < 3 else rng.randint(7, 7 + 10 ** (1 + difficulty // 6))
        index = 6 + 4 * difficulty + rng.randint(0, 3)
        x, y = a1 % m, a2 % m
        for _ in range(index - 2):
            x, y = y, (p * y + q * x) % m
        prompt = (
            f"A sequence starts with A(1) = {a1} and A(2) = {a2}, and for n > 2, "
            f"A(n) = {p}·A(n-1) + {q}·A(n-2). What is the remainder of A({index}) divided by "
            f"{m}? Give an integer from 0 to {m - 1}."
        )
        data = {"first": [a1, a2], "multipliers": [p, q], "index": index, "modulus": m}
        return Instance(prompt, str(y), data)

    def residue(self, problem: Problem) -> int:
        (x, y), (p, q) = problem.data["first"], problem.data["multipliers"]
        for _ in range(problem.data["index"] - 2):  # exact values, reduced at the end
            x, y = y, p * y + q * x
        return y % problem.data["modulus"]

    def size(self, problem: Problem) -> float:
        return float(problem.data["index"])

    def problem_space(self, difficulty: int) -> int | None:
        if difficulty == 0:
            return 4 * 4 * 4  # start values 0..3, index 6..9
        if difficulty < 3:  # p = q = 1 and modulus 10 below d = 3
            return (4 + difficulty) ** 2 * 4
        return None


def _is_subsequence(sub: list, seq: list) -> bool:
    it = iter(seq)
    return all(any(x == y for y in it) for x in sub)


def _longest_increasing(values: list[int]) -> list[int]:
    """One longest strictly increasing subsequence, by O(n²) dynamic programming."""
    best = [1] * len(values)
    prev = [-1] * len(values)
    for j in range(len(values)):
        for i in range(j):
            if values[i] < values[j] and best[i] + 1 > best[j]:
                best[j], prev[j] = best[i] + 1, i
    j = max(range(len(values)), key=lambda i: best[i])
    out = []
    while j >= 0:
        out.append(values[j])
        j = prev[j]
    return out[::-1]


@ENVIRONMENTS.register("longest_increasing_subsequence")
class LongestIncreasingSubsequence(Environment):
    size_measure = "number of values"
    answer_kind = "integer_list"
    difficulty_scales = "n = 5 + d numbers in 1..2n"
    size_key = "values"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + difficulty
        values = [rng.randint(1, 2 * n) for _ in range(n)]
        prompt = (
            f"Find a longest strictly increasing subsequence of the sequence {commas(values)}: "
            "numbers taken from the sequence in their original order (not necessarily "
            "adjacent), each larger than the one before, as many as possible. Give the numbers "
            "as a comma-separated list; if several are equally long, any of them is accepted."
        )
        return Instance(prompt, commas(_longest_increasing(values)), {"values": values})

    def check(self, problem: Problem, answer: str) -> Verdict:
        sub = parse_int_list(answer)
        if not sub or any(a >= b for a, b in itertools.pairwise(sub)):
            return invalid("the answer is not a strictly increasing list")
        if not _is_subsequence(sub, problem.data["values"]):
            return invalid("the answer is not a subsequence of the given sequence")
        best = len(_longest_increasing(problem.data["values"]))
        return optimum_verdict(len(sub), best, "a longer increasing subsequence exists")

    def solve(self, problem: Problem) -> str:
        return commas(_longest_increasing(problem.data["values"]))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rpartition(",")[0]  # one element shorter (empty if it had one)


def _lcs(a: str, b: str) -> str:
    """One longest common subsequence, by the O(|a|·|b|) table."""
    t = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            t[i][j] = t[i + 1][j + 1] + 1 if a[i] == b[j] else max(t[i + 1][j], t[i][j + 1])
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            out.append(a[i])
            i, j = i + 1, j + 1
        elif t[i + 1][j] >= t[i][j + 1]:
            i += 1
        else:
            j += 1
    return "".join(out)


@ENVIRONMENTS.register("longest_common_subsequence")
class LongestCommonSubsequence(Environment):
    size_measure = "total length of the two strings"
    difficulty_scales = "two strings of 4 + d//2 and 4 + d//2..6 + d//2 letters from 2 + d//6"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        alphabet = "abcdefghij"[: min(10, 2 + difficulty // 6)]
        a = "".join(rng.choice(alphabet) for _ in range(4 + difficulty // 2))
        letters = [rng.choice(alphabet) for _ in range(rng.randint(4, 6) + difficulty // 2)]
        if a[0] not in letters:  # at least one common letter
            letters[rng.randrange(len(letters))] = a[0]
        b = "".join(letters)
        prompt = (
            f'Find a longest common subsequence of "{a}" and "{b}": a string whose letters '
            "appear in both strings in the same order (not necessarily adjacent), as long as "
            "possible. Give the string itself; if several are equally long, any of them is "
            "accepted."
        )
        return Instance(prompt, _lcs(a, b), {"first": a, "second": b})

    def check(self, problem: Problem, answer: str) -> Verdict:
        t = re.sub(r"[\s\"',]", "", answer).lower()
        if not t.isascii() or not t.isalpha() or len(t) > 1000:
            return wrong_format("expected a non-empty string of letters")
        a, b = problem.data["first"], problem.data["second"]
        if not (_is_subsequence(list(t), list(a)) and _is_subsequence(list(t), list(b))):
            return invalid("the answer is not a subsequence of both strings")
        best = len(_lcs(a, b))
        return optimum_verdict(len(t), best, "a longer common subsequence exists")

    def solve(self, problem: Problem) -> str:
        return _lcs(problem.data["first"], problem.data["second"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer[:-1] if len(answer) > 1 else "#"

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["first"]) + len(problem.data["second"]))


@ENVIRONMENTS.register("max_subarray_sum")
class MaxSubarraySum(IntegerAnswer):
    size_measure = "number of values"
    difficulty_scales = "n = 5 + d numbers within ±(5 + 2d)"
    size_key = "values"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        hi = 5 + 2 * difficulty
        values = [rng.randint(-hi, hi) for _ in range(5 + difficulty)]
        if max(values) <= 0:
            values[rng.randrange(len(values))] = rng.randint(1, hi)
        best = run = 0
        for v in values:  # Kadane (the answer is positive: some value is)
            run = max(0, run + v)
            best = max(best, run)
        prompt = (
            f"Consider the list {commas(values)}. What is the largest sum of a block of one or "
            "more consecutive numbers of the list?"
        )
        return Instance(prompt, str(best), {"values": values})

    def solve_int(self, problem: Problem) -> int:
        prefix = [0]
        for v in problem.data["values"]:
            prefix.append(prefix[-1] + v)
        return max(prefix[j] - prefix[i] for j in range(1, len(prefix)) for i in range(j))


def _min_coins(coins: list[int], target: int) -> list[int]:
    """A fewest-coins multiset paying ``target`` exactly (O(target·|coins|))."""
    fewest: list[int | None] = [0] + [None] * target
    last = [0] * (target + 1)  # the last coin of a fewest-coins payment of each amount
    for t in range(1, target + 1):
        for c in coins:
            prev = fewest[t - c] if c <= t else None
            cur = fewest[t]
            if prev is not None and (cur is None or prev + 1 < cur):
                fewest[t], last[t] = prev + 1, c
    if fewest[target] is None:
        raise ValueError("target not reachable")
    out, t = [], target
    while t:
        out.append(last[t])
        t -= last[t]
    return sorted(out, reverse=True)


@ENVIRONMENTS.register("coin_change_min_coins")
class CoinChangeMinCoins(Environment):
    size_measure = "target amount"
    answer_kind = "integer_set"
    difficulty_scales = (
        "2 + d//5 denominations up to 9 + 3d; the amount is a sum of 2 + d to 4 + d coins"
    )

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        coins = sorted(rng.sample(range(1, 10 + 3 * difficulty), 2 + difficulty // 5))
        target = sum(rng.choice(coins) for _ in range(2 + difficulty + rng.randint(0, 2)))
        prompt = (
            f"Coins come in the denominations {commas(coins)}, with an unlimited supply of each. "
            f"Pay exactly {target} using as few coins as possible. List the values of the coins "
            "you use as a comma-separated list, repeating a value for each coin of it."
        )
        return Instance(
            prompt, commas(_min_coins(coins, target)), {"coins": coins, "target": target}
        )

    def check(self, problem: Problem, answer: str) -> Verdict:
        used = parse_int_list(answer.split("=")[0], plus=True)  # "5, 3" / "5 + 3 = 8"
        if not used or any(c not in problem.data["coins"] for c in used):
            return invalid("every coin must be one of the given denominations")
        if sum(used) != problem.data["target"]:
            return invalid("the coins do not add up to the amount")
        best = self._fewest(problem)
        worse = "the amount can be paid with fewer coins"
        return optimum_verdict(len(used), best, worse, minimise=True)

    @staticmethod
    def _fewest(problem: Problem) -> int:
        coins, target = problem.data["coins"], problem.data["target"]
        reach = {0}  # breadth-first over amounts: layer k = amounts payable with k coins
        for k in range(1, target + 1):
            reach = {r + c for r in reach for c in coins if r + c <= target}
            if target in reach:
                return k
        raise ValueError("target not reachable")

    def solve(self, problem: Problem) -> str:
        return commas(_min_coins(problem.data["coins"], problem.data["target"]))

    def size(self, problem: Problem) -> float:
        return float(problem.data["target"])


@ENVIRONMENTS.register("climbing_stairs")
class ClimbingStairs(IntegerAnswer):
    difficulty_scales = (
        "4 + 2d..8 + 3d stairs; 2..4 allowed step sizes drawn from 1..3 + d//4 "
        "(redrawn when the top cannot be reached)"
    )
    size_measure = "number of stairs"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = 3 + difficulty // 4
        while True:
            n = rng.randint(4 + 2 * difficulty, 8 + 3 * difficulty)
            steps = sorted(rng.sample(range(1, top + 1), rng.randint(2, min(4, top))))
            ways = _stair_ways(n, steps)
            if ways:
                break
        prompt = (
            f"A staircase has {n} stairs. Each move climbs {_or_list(steps)} stairs. In how "
            f"many different ways (ordered sequences of moves) can you climb from the bottom to "
            f"exactly the top?"
        )
        data = {"stairs": n, "steps": steps}
        return Instance(prompt, str(ways), data)

    def solve_int(self, problem: Problem) -> int:
        n, steps = problem.data["stairs"], problem.data["steps"]
        return _stair_ways_by_counts(n, steps)

    def size(self, problem: Problem) -> float:
        return float(problem.data["stairs"])

    def problem_space(self, difficulty: int) -> int | None:
        """One prompt per (stairs, step set) with the top reachable; counted up to d = 30."""
        if difficulty > 30:
            return None
        top = 3 + difficulty // 4
        sets = [
            c
            for k in range(2, min(4, top) + 1)
            for c in itertools.combinations(range(1, top + 1), k)
        ]
        stairs = range(4 + 2 * difficulty, 9 + 3 * difficulty)
        return sum(1 for n in stairs for c in sets if _stair_ways(n, list(c)))


def _stair_ways_by_counts(n: int, steps: list[int]) -> int:
    """Ordered move sequences to stair ``n``, another way: for each multiset of moves (how
    many of each size) that sums to ``n``, the multinomial number of its orders."""
    total = 0

    def choose(i: int, left: int, counts: list[int]) -> None:
        nonlocal total
        if i == len(steps):
            if left == 0:
                orders = math.factorial(sum(counts))
                for c in counts:
                    orders //= math.factorial(c)
                total += orders
            return
        for c in range(left // steps[i] + 1):
            choose(i + 1, left - c * steps[i], [*counts, c])

    choose(0, n, [])
    return total


def _stair_ways(n: int, steps: list[int]) -> int:
    ways = [1] + [0] * n  # ways[i]: move sequences reaching stair i
    for i in range(1, n + 1):
        ways[i] = sum(ways[i - s] for s in steps if s <= i)
    return ways[n]


def _or_list(values: list[int]) -> str:
    return ", ".join(map(str, values[:-1])) + " or " + str(values[-1])


@ENVIRONMENTS.register("grid_min_path_sum")
class GridMinPathSum(Environment):
    size_measure = "number of cells"
    difficulty_scales = "grid of 2 + d//3 rows and 3 + d//3 columns; cell costs up to 9 + 3·(d//5)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        rows, cols = 2 + difficulty // 3, 3 + difficulty // 3
        hi = 9 + 3 * (difficulty // 5)
        grid = [[rng.randint(1, hi) for _ in range(cols)] for _ in range(rows)]
        shown = "\n".join(" ".join(f"{v:>2}" for v in row) for row in grid)
        prompt = (
            f"Here is a grid of cell costs with {rows} rows and {cols} columns:\n{shown}\n"
            "Walk from the top-left cell to the bottom-right cell, each step moving one cell "
            "right (R) or down (D). The cost of a walk is the sum of the costs of all the cells "
            "it visits, both ends included. Find a walk of minimum cost and give it as a "
            "string of the letters R and D."
        )
        return Instance(prompt, self._best_path(grid), {"grid": grid})

    def check(self, problem: Problem, answer: str) -> Verdict:
        path = re.sub(r"[\s,\-→>]", "", answer).upper()
        if not path or len(path) > 1000 or set(path) - {"R", "D"}:
            return wrong_format("expected a string of the letters R and D")
        grid = problem.data["grid"]
        if path.count("D") != len(grid) - 1 or path.count("R") != len(grid[0]) - 1:
            return invalid("the walk does not end at the bottom-right cell")
        cost = self._cost(grid, path)
        best = self._cost(grid, self._best_path(grid))
        return optimum_verdict(cost, best, "a cheaper walk exists", minimise=True)

    @staticmethod
    def _cost(grid: list[list[int]], path: str) -> int:
        r = c = 0
        total = grid[0][0]
        for move in path:
            r, c = (r + 1, c) if move == "D" else (r, c + 1)
            total += grid[r][c]
        return total

    @staticmethod
    def _best_path(grid: list[list[int]]) -> str:
        rows, cols = len(grid), len(grid[0])
        # cost[r][c]: cheapest walk from (r, c) to the bottom-right corner
        cost = [[0] * cols for _ in range(rows)]
        for r in range(rows - 1, -1, -1):
            for c in range(cols - 1, -1, -1):
                nxt = [cost[r + 1][c]] if r + 1 < rows else []
                nxt += [cost[r][c + 1]] if c + 1 < cols else []
                cost[r][c] = grid[r][c] + (min(nxt) if nxt else 0)
        path, r, c = "", 0, 0
        while (r, c) != (rows - 1, cols - 1):
            if c + 1 < cols and (r + 1 == rows or cost[r][c + 1] <= cost[r + 1][c]):
                path, c = path + "R", c + 1
            else:
                path, r = path + "D", r + 1
        return path

    def solve(self, problem: Problem) -> str:
        return self._best_path(problem.data["grid"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer + "R"  # walks off the grid's corner

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["grid"]) * len(problem.data["grid"][0]))


@ENVIRONMENTS.register("max_nonadjacent_sum")
class MaxNonAdjacentSum(Environment):
    size_measure = "number of values"
    answer_kind = "integer_list"
    difficulty_scales = "n = 4 + d values in 1..9 + 3d"
    size_key = "values"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        values = [rng.randint(1, 9 + 3 * difficulty) for _ in range(4 + difficulty)]
        prompt = (
            f"The values at positions 1 to {len(values)} are: {commas(values)}. Choose positions, "
            "no two of them next to each other, so that the sum of the chosen values is as "
            "large as possible. Give the chosen positions (numbered from 1) as a "
            "comma-separated list in any order."
        )
        return Instance(prompt, commas(self._best(values)), {"values": values})

    def check(self, problem: Problem, answer: str) -> Verdict:
        chosen = sorted(parse_int_list(answer))
        values = problem.data["values"]
        if any(not 1 <= i <= len(values) for i in chosen):
            return invalid("a position is outside 1 to the number of values")
        if any(b - a < 2 for a, b in itertools.pairwise(chosen)):
            return invalid("two chosen positions are equal or next to each other")
        total = sum(values[i - 1] for i in chosen)
        best = sum(values[i - 1] for i in self._best(values))
        return optimum_verdict(total, best, "a larger sum is possible")

    @staticmethod
    def _best(values: list[int]) -> list[int]:
        """Positions (1-based) of a maximum-sum non-adjacent choice, by DP over prefixes."""
        take, skip = [0] * (len(values) + 1), [0] * (len(values) + 1)
        for i, v in enumerate(values, 1):
            take[i] = skip[i - 1] + v
            skip[i] = max(take[i - 1], skip[i - 1])
        chosen, i, taking = [], len(values), take[-1] >= skip[-1]
        while i > 0:
            if taking:
                chosen.append(i)
                taking = False
            else:
                taking = take[i - 1] >= skip[i - 1]
            i -= 1
        return chosen[::-1]

    def solve(self, problem: Problem) -> str:
        return commas(self._best(problem.data["values"]))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rpartition(",")[0]  # drop one chosen position: a smaller sum
