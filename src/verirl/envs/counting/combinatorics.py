"""Combinatorics: binomial coefficients, arrangements of a word, permutations with k fixed
points, lattice paths around blocked cells, inclusion–exclusion counts, Catalan numbers,
stars and bars, integer partitions.

Every answer is a count, scored with RLVE's (min/max)^β, β = 10. Each generator computes its
count by a closed formula or one method, and ``solve`` re-derives it another way (a recurrence
or a dynamic program), so the two cross-check each other in the tests.
"""

from __future__ import annotations

import itertools
import math
import random
import string

from verirl.envs.base import ENVIRONMENTS, Instance, IntegerAnswer
from verirl.envs.kit.wording import plural
from verirl.types import Problem


def _pascal_row(n: int) -> list[int]:
    row = [1]
    for _ in range(n):
        row = [a + b for a, b in zip([0, *row], [*row, 0], strict=True)]
    return row


class _Count(IntegerAnswer):
    """A count; ``size`` is ``data["n"]``."""

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])


@ENVIRONMENTS.register("binomial_coefficient")
class BinomialCoefficient(_Count):
    size_measure = "n"
    difficulty_scales = "n in 3 + d..5 + 2d, k in 1..n-1"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(3 + difficulty, 5 + 2 * difficulty)
        k = rng.randint(1, n - 1)
        prompt = (
            f"Compute the binomial coefficient C({n}, {k}): the number of ways to choose "
            f"{plural(k, 'item')} out of {n} different items, ignoring order."
        )
        return Instance(prompt, str(math.comb(n, k)), {"n": n, "k": k})

    def solve_int(self, problem: Problem) -> int:
        return _pascal_row(problem.data["n"])[problem.data["k"]]

    def problem_space(self, difficulty: int) -> int | None:
        """One prompt per (n, k): n in 3 + d..5 + 2d, k in 1..n - 1."""
        return sum(n - 1 for n in range(3 + difficulty, 6 + 2 * difficulty))


@ENVIRONMENTS.register("word_arrangements")
class WordArrangements(_Count):
    size_measure = "n (word length)"
    difficulty_scales = "word of 3 + d letters drawn from 2 + d//3"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        letters = string.ascii_uppercase[: min(26, 2 + difficulty // 3)]
        word = "".join(rng.choice(letters) for _ in range(n))
        prompt = (
            f'How many different strings can be made by rearranging all the letters of "{word}" '
            "(the original order counts as one of them)?"
        )
        count = math.factorial(n)
        for c in sorted(set(word)):
            count //= math.factorial(word.count(c))
        return Instance(prompt, str(count), {"word": word, "n": n})

    def solve_int(self, problem: Problem) -> int:
        word, placed, count = problem.data["word"], 0, 1
        for c in sorted(set(word)):  # choose the slots of each letter in turn
            k = word.count(c)
            count *= _pascal_row(placed + k)[k]
            placed += k
        return count

    def problem_space(self, difficulty: int) -> int | None:
        space = min(26, 2 + difficulty // 3) ** (3 + difficulty)  # the words themselves
        return space if space < 1000 else None


def _fixed_point_cases(difficulty: int) -> list[tuple[int, int]]:
    """The (n, k) pairs of a level: n in 3 + d..5 + 2d; k fixed points, at most 1 + d//2 and
    n // 2, never n - 1 (no permutation fixes all but one point)."""
    return [
        (n, k)
        for n in range(3 + difficulty, 6 + 2 * difficulty)
        for k in range(min(1 + difficulty // 2, n // 2) + 1)
        if k != n - 1
    ]


@ENVIRONMENTS.register("permutations_with_fixed_points")
class PermutationsWithFixedPoints(_Count):
    size_measure = "n"
    difficulty_scales = "n in 3 + d..5 + 2d; exactly k fixed points, k ≤ min(1 + d//2, n//2)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, k = rng.choice(_fixed_point_cases(difficulty))
        numbers = "1, 2, 3" if n == 3 else f"1, 2, ..., {n}"
        if k == 0:
            prompt = (
                f"How many permutations of {numbers} move every number away from its "
                f"original position (derangements: p(i) ≠ i for every i)?"
            )
        else:
            points = "fixed point" if k == 1 else "fixed points"
            positions = "position" if k == 1 else "positions"
            prompt = (
                f"How many permutations p of {numbers} have exactly {k} {points}, that "
                f"is, exactly {k} {positions} i with p(i) = i?"
            )
        m = n - k  # C(n, k) · !m with !m = Σ (-1)^i m!/i!
        subfactorial = sum((-1) ** i * math.factorial(m) // math.factorial(i) for i in range(m + 1))
        return Instance(prompt, str(math.comb(n, k) * subfactorial), {"n": n, "fixed": k})

    def solve_int(self, problem: Problem) -> int:
        n, k = problem.data["n"], problem.data["fixed"]
        d = [1, 0]  # !m = (m - 1)(!(m-1) + !(m-2))
        for m in range(2, n - k + 1):
            d.append((m - 1) * (d[-1] + d[-2]))
        return _pascal_row(n)[k] * d[n - k]

    def problem_space(self, difficulty: int) -> int | None:
        return len(_fixed_point_cases(difficulty))


def _count_paths(grid: list[str]) -> int:
    """Right/down paths from the top-left to the bottom-right cell avoiding '#'."""
    ways = [0] * len(grid[0])
    ways[0] = 1
    for row in grid:
        for c, cell in enumerate(row):
            if cell == "#":
                ways[c] = 0
            elif c:
                ways[c] += ways[c - 1]
    return ways[-1]


@ENVIRONMENTS.register("lattice_paths_blocked")
class LatticePathsBlocked(_Count):
    size_measure = "grid size"
    difficulty_scales = "grid of 2 + d//3 rows and 3 + d//2 columns, about a fifth of cells blocked"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        rows, cols = 2 + difficulty // 3, 3 + difficulty // 2
        inner = [(r, c) for r in range(rows) for c in range(cols)][1:-1]
        for _ in range(20):  # redraw until some path survives (no blocks after 20 tries)
            blocked = rng.sample(inner, rows * cols // 5)
            grid = [
                "".join("#" if (r, c) in blocked else "." for c in range(cols)) for r in range(rows)
            ]
            if _count_paths(grid):
                break
        else:
            grid = ["." * cols for _ in range(rows)]
        prompt = (
            f"In this grid of {rows} rows and {cols} columns, '.' is an open cell and '#' a "
            f"blocked one:\n" + "\n".join(grid) + "\nHow many paths lead from the top-left cell "
            "to the bottom-right cell if each step moves one cell right or one cell down and "
            "no path may enter a blocked cell?"
        )
        return Instance(prompt, str(_count_paths(grid)), {"grid": grid, "n": rows * cols})

    def solve_int(self, problem: Problem) -> int:
        grid = problem.data["grid"]
        memo: dict[tuple[int, int], int] = {}  # paths from (r, c) to the end, row by row upward
        for r in range(len(grid) - 1, -1, -1):
            for c in range(len(grid[0]) - 1, -1, -1):
                if grid[r][c] == "#":
                    memo[r, c] = 0
                elif (r, c) == (len(grid) - 1, len(grid[0]) - 1):
                    memo[r, c] = 1
                else:
                    memo[r, c] = memo.get((r + 1, c), 0) + memo.get((r, c + 1), 0)
        return memo[0, 0]

    def problem_space(self, difficulty: int) -> int | None:
        """The block patterns that leave a path (plus the open grid, the fallback), counted
        by enumeration while they are few."""
        rows, cols = 2 + difficulty // 3, 3 + difficulty // 2
        inner = [(r, c) for r in range(rows) for c in range(cols)][1:-1]
        if math.comb(len(inner), rows * cols // 5) > 3000:
            return None
        count = 1
        for blocked in itertools.combinations(inner, rows * cols // 5):
            grid = [
                "".join("#" if (r, c) in blocked else "." for c in range(cols)) for r in range(rows)
            ]
            count += bool(_count_paths(grid))
        return count


@ENVIRONMENTS.register("divisible_by_any_count")
class DivisibleByAnyCount(_Count):
    size_measure = "digits of N plus the number of divisors"
    difficulty_scales = "N up to 60·(d+1)²; k = 2 + d//8 divisors (at most 8) in 2..3 + 2d + k"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(10, 60 * (difficulty + 1) ** 2)
        k = min(8, 2 + difficulty // 8)
        divisors = sorted(rng.sample(range(2, 4 + 2 * difficulty + k), k))
        prompt = (
            f"How many integers from 1 to {n} (inclusive) are divisible by at least one of "
            f"{', '.join(map(str, divisors[:-1]))} and {divisors[-1]}?"
        )
        count = sum(1 for x in range(1, n + 1) if any(x % a == 0 for a in divisors))
        return Instance(prompt, str(count), {"n": n, "divisors": divisors})

    def solve_int(self, problem: Problem) -> int:
        n, divisors = problem.data["n"], problem.data["divisors"]
        total = 0  # inclusion–exclusion over non-empty subsets of the divisors
        for mask in range(1, 2 ** len(divisors)):
            chosen = [a for i, a in enumerate(divisors) if mask >> i & 1]
            total += (-1) ** (len(chosen) + 1) * (n // math.lcm(*chosen))
        return total

    def size(self, problem: Problem) -> float:
        return float(len(str(problem.data["n"])) + len(problem.data["divisors"]))


_BALLOT_FORMS = (
    "How many strings of {n} opening and {k} closing parentheses have, in every prefix, at "
    "least as many opening as closing parentheses?",
    "How many paths from (0, 0) to ({n}, {k}) use steps of one unit right or one unit up and "
    "never go above the diagonal y = x?",
)
_CATALAN_FORMS = (
    "How many strings of {n} opening and {n} closing parentheses are balanced (every prefix "
    "has at least as many opening as closing parentheses)?",
    "How many paths from (0, 0) to ({n}, {n}) use steps of one unit right or one unit up and "
    "never go above the diagonal y = x?",
    "In how many ways can a convex polygon with {m} vertices be cut into triangles by "
    "non-crossing diagonals?",
    "How many different full binary trees (every node has 0 or 2 children; left and right "
    "are distinguished) have exactly {n} internal nodes?",
)


def _catalan_cases(difficulty: int) -> list[tuple[str, int, int]]:
    """The (template, n, k) of a level: n in 2 + d..4 + 2d; the Catalan forms (k = n) and
    the ballot forms with 1 ≤ k < n (the Catalan triangle)."""
    cases = []
    for n in range(2 + difficulty, 5 + 2 * difficulty):
        cases += [(form, n, n) for form in _CATALAN_FORMS]
        cases += [(form, n, k) for form in _BALLOT_FORMS for k in range(1, n)]
    return cases


@ENVIRONMENTS.register("catalan_count")
class CatalanCount(_Count):
    size_measure = "n"
    difficulty_scales = (
        "n in 2 + d..4 + 2d (balanced parentheses, Dyck paths, triangulations, trees) and "
        "ballot counts (n opening, k < n closing; paths to (n, k) under the diagonal)"
    )

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        form, n, k = rng.choice(_catalan_cases(difficulty))
        prompt = form.format(n=n, k=k, m=n + 2)
        # the Catalan triangle (n - k + 1)/(n + 1) · C(n + k, k); k = n gives C(2n, n)/(n + 1)
        count = (n - k + 1) * math.comb(n + k, k) // (n + 1)
        return Instance(prompt, str(count), {"n": n, "k": k})

    def solve_int(self, problem: Problem) -> int:
        n, k = problem.data["n"], problem.data.get("k", problem.data["n"])
        # paths[y]: lattice paths to (x, y) with y ≤ x, one column x at a time
        paths = [1] + [0] * k
        for x in range(1, n + 1):
            for y in range(1, min(x, k) + 1):
                paths[y] += paths[y - 1]
        return paths[k]

    def problem_space(self, difficulty: int) -> int | None:
        return len(_catalan_cases(difficulty))


@ENVIRONMENTS.register("stars_and_bars")
class StarsAndBars(_Count):
    size_measure = "n"
    difficulty_scales = (
        "2..3 + d//4 variables summing to 3 + d..5 + 2d; lower bounds 0..1, 0..2 from d 6"
    )

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        k = rng.randint(2, 3 + difficulty // 4)
        n = rng.randint(3 + difficulty, 5 + 2 * difficulty)
        lows = [rng.randint(0, 2 if difficulty >= 6 else 1) for _ in range(k)]
        names = [f"x{i + 1}" for i in range(k)]
        bounds = ", ".join(f"{x} ≥ {lo}" for x, lo in zip(names, lows, strict=True))
        prompt = (
            f"How many solutions in integers does {' + '.join(names)} = {n} have, with {bounds}?"
        )
        count = math.comb(n - sum(lows) + k - 1, k - 1)
        return Instance(prompt, str(count), {"n": n, "lows": lows})

    def solve_int(self, problem: Problem) -> int:
        n, lows = problem.data["n"], problem.data["lows"]
        ways = [1] + [0] * n  # ways[s]: choices of the variables so far summing to s
        for lo in lows:
            ways = [sum(ways[: s - lo + 1]) if s >= lo else 0 for s in range(n + 1)]
        return ways[n]

    def problem_space(self, difficulty: int) -> int | None:
        """One prompt per (k, n, lower bounds)."""
        bounds = 3 if difficulty >= 6 else 2
        sums = 3 + difficulty
        return sum(bounds**k for k in range(2, 4 + difficulty // 4)) * sums


@ENVIRONMENTS.register("integer_partitions")
class IntegerPartitions(_Count):
    size_measure = "n"
    difficulty_scales = (
        "n in 4 + d..6 + 2d; parts at most m (m in 2..n, m = n: no limit); distinct parts or not "
        "(then m large enough for a partition to exist)"
    )

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.randint(4 + difficulty, 6 + 2 * difficulty)
        distinct = rng.random() < 0.5
        m = rng.randint(_least_distinct_max(n) if distinct else 2, n)
        limit = "" if m == n else f", using only parts of size at most {m}"
        kind = "pairwise different positive integers" if distinct else "positive integers"
        example = "" if distinct else " (a part may repeat)"
        prompt = (
            f"In how many ways can {n} be written as a sum of one or more {kind}{limit}"
            f"{example}, where the order of the parts does not matter (so 3 + 1 and 1 + 3 are "
            "the same way)?"
        )
        ways = [1] + [0] * n  # coin-style DP over part sizes (0/1 knapsack when distinct)
        for part in range(1, m + 1):
            steps = range(n, part - 1, -1) if distinct else range(part, n + 1)
            for s in steps:
                ways[s] += ways[s - part]
        return Instance(prompt, str(ways[n]), {"n": n, "max_part": m, "distinct": distinct})

    def solve_int(self, problem: Problem) -> int:
        n, m = problem.data["n"], problem.data["max_part"]
        if problem.data.get("distinct"):
            # q[s][j]: partitions of s into distinct parts ≤ j = q[s][j-1] + q[s-j][j-1]
            q = [[1] * (m + 1)] + [[0] * (m + 1) for _ in range(n)]
            for s in range(1, n + 1):
                for j in range(1, m + 1):
                    q[s][j] = q[s][j - 1] + (q[s - j][j - 1] if s >= j else 0)
            return q[n][m]
        # p[s][j]: partitions of s into parts ≤ j = p[s][j-1] + p[s-j][j]
        p = [[1] * (m + 1)] + [[0] * (m + 1) for _ in range(n)]
        for s in range(1, n + 1):
            for j in range(1, m + 1):
                p[s][j] = p[s][j - 1] + (p[s - j][j] if s >= j else 0)
        return p[n][m]

    def problem_space(self, difficulty: int) -> int | None:
        """One prompt per (n, m, distinct)."""
        ns = range(4 + difficulty, 7 + 2 * difficulty)
        return sum(n - 1 + n - _least_distinct_max(n) + 1 for n in ns)


def _least_distinct_max(n: int) -> int:
    """The least m with 1 + 2 + ... + m ≥ n: below it no partition into distinct parts ≤ m."""
    m = 1
    while m * (m + 1) // 2 < n:
        m += 1
    return m
