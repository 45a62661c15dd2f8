"""Optimisation by choosing: Bézout coefficients, centres on a line, best-ratio subsets and
matchings, the smallest discrete logarithm, and the most customers a warehouse can serve (RLVE
catalogue rows, Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning for Language
Models with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A).

The verifier evaluates the answer's own objective (it checks the choice, not a stored one), so
every optimal choice is correct; a choice that breaks the task's constraints is invalid (−0.5).
Partial credit is RLVE's ratio to the optimum: (answer/gold)^5 when maximising, (gold/answer)^β
when minimising. The optimum comes from a fast method (extended Euclid, greedy with binary
search, Dinkelbach's iteration with an exact assignment solver, a heap greedy); ``solve``
finds an optimal choice by exhaustive search, so the two cross-check in the tests.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from fractions import Fraction

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    optimum_verdict,
    parse_int_list,
    ratio_reward,
)
from verirl.envs.kit.wording import commas
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict

TAGS = ("rlve", "optimization")
MAX_ABS = 10**50  # larger coefficients in an answer are invalid (bounds all arithmetic)


def _distinct_labels(answer: str, k: int, n: int) -> list[int] | Verdict:
    labels = parse_int_list(answer)
    if len(labels) != k or len(set(labels)) != k or any(not 0 <= v < n for v in labels):
        return invalid(f"give exactly {k} distinct labels between 0 and {n - 1}")
    return labels


def _fraction_verdict(value: Fraction, best: Fraction, worse: str) -> Verdict:
    ok = value == best
    return graded(ratio_reward(float(value), float(best), 5.0), ok, "correct" if ok else worse)


@ENVIRONMENTS.register("bezout_identity")
class BezoutIdentity(Environment):
    """Integers X with S = Σ A_i·X_i positive and as small as possible (RLVE BezoutIdentity):
    the minimum is gcd(A). S ≤ 0, a wrong length or |X_i| > 10^50 → invalid; else
    (gcd / S)^5. ``solve`` folds the extended Euclidean algorithm over A."""

    tags = TAGS
    difficulty_scales = "N = 2 + d//3 numbers up to 32·1.25^d, sharing a random factor"
    size_measure = "N (numbers) and their size"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 2 + difficulty // 3
        top = int(32 * 1.25**difficulty)
        g = rng.randint(1, 1 + difficulty)
        a = [g * rng.randint(1, max(2, top // g)) * rng.choice([1, -1]) for _ in range(n)]
        prompt = (
            f"You are given an array A of length {n}: {commas(a)}. Find integers X[1], ..., "
            f"X[{n}] such that S = A[1]·X[1] + ... + A[{n}]·X[{n}] is positive and as small as "
            f"possible, with every |X[i]| at most 10^50. Give X[1], ..., X[{n}] separated by "
            "commas."
        )
        data = {"a": a}
        return Instance(prompt, self.solve(Problem(self.name, 0, 0, "", "", data)), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        a = problem.data["a"]
        x = parse_int_list(answer)
        if len(x) != len(a) or any(abs(v) > MAX_ABS for v in x):
            return invalid(f"give {len(a)} integers of absolute value at most 10^50")
        s = sum(u * v for u, v in zip(a, x, strict=True))
        if s <= 0:
            return invalid("S must be positive")
        return optimum_verdict(s, math.gcd(*a), "S is positive but not the smallest", minimise=True)

    def solve(self, problem: Problem) -> str:
        a = problem.data["a"]
        g, coeffs = 0, [0] * len(a)  # invariant: g = Σ a_i·coeffs_i
        for i, v in enumerate(a):
            # extended Euclid on (g, v): p·g + q·v = gcd(g, v)
            r0, r1, p0, p1, q0, q1 = g, v, 1, 0, 0, 1
            while r1:
                t = r0 // r1
                r0, r1, p0, p1, q0, q1 = r1, r0 - t * r1, p1, p0 - t * p1, q1, q0 - t * q1
            if r0 < 0:
                r0, p0, q0 = -r0, -p0, -q0
            coeffs = [c * p0 for c in coeffs]
            coeffs[i] = q0
            g = r0
        return commas(coeffs)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return commas([3 * v for v in parse_int_list(answer)])  # S = 3·gcd

    def size(self, problem: Problem) -> float:
        return float(sum(len(str(abs(v))) for v in problem.data["a"]))


@ENVIRONMENTS.register("axis_kcenter")
class AxisKCenter(Environment):
    """Choose K of N points on a line as centres to minimise the largest distance from a point
    to its nearest centre (RLVE Axis_KCenter); (gold/answer)^5. The optimum: binary search on
    the radius with the greedy cover; ``solve``: all K-subsets."""

    tags = TAGS
    difficulty_scales = "N = 4 + d points in [0, 10N], K in 1..N−1"
    size_measure = "number of points N"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 4 + difficulty
        xs = rng.sample(range(10 * n + 1), n)
        k = rng.randint(1, n - 1)
        lines = ", ".join(f"point {i} at {x}" for i, x in enumerate(xs))
        prompt = (
            f"You are given {n} points on a line, labeled 0 to {n - 1}: {lines}. Choose exactly "
            f"{k} of the points as centres so that the largest distance from any point to its "
            "nearest centre is as small as possible. Give the labels of the chosen points, "
            "separated by commas."
        )
        data = {"xs": xs, "k": k}
        return Instance(prompt, self._greedy(xs, k, self._best(xs, k)), data)

    @staticmethod
    def _radius(xs: list[int], centres: list[int]) -> int:
        return max(min(abs(x - xs[c]) for c in centres) for x in xs)

    @staticmethod
    def _cover(xs: list[int], r: int) -> list[int]:
        """Greedy centres (as labels) covering every point within r."""
        order = sorted(range(len(xs)), key=lambda i: xs[i])
        centres, i = [], 0
        while i < len(order):
            j = i
            while j + 1 < len(order) and xs[order[j + 1]] <= xs[order[i]] + r:
                j += 1
            centres.append(order[j])
            while i < len(order) and xs[order[i]] <= xs[order[j]] + r:
                i += 1
        return centres

    def _best(self, xs: list[int], k: int) -> int:
        lo, hi = 0, max(xs) - min(xs)
        while lo < hi:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if len(self._cover(xs, mid)) <= k else (mid + 1, hi)
        return lo

    def _greedy(self, xs: list[int], k: int, r: int) -> str:
        centres = self._cover(xs, r)
        extra = [i for i in range(len(xs)) if i not in centres][: k - len(centres)]
        return commas(sorted(centres + extra))

    def check(self, problem: Problem, answer: str) -> Verdict:
        xs, k = problem.data["xs"], problem.data["k"]
        labels = _distinct_labels(answer, k, len(xs))
        if isinstance(labels, Verdict):
            return labels
        got = self._radius(xs, labels)
        return optimum_verdict(got, self._best(xs, k), "a smaller radius exists", minimise=True)

    def solve(self, problem: Problem) -> str:
        xs, k = problem.data["xs"], problem.data["k"]
        best = min(
            itertools.combinations(range(len(xs)), k), key=lambda c: self._radius(xs, list(c))
        )
        return commas(list(best))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        xs, labels = problem.data["xs"], parse_int_list(answer)
        order = sorted(range(len(xs)), key=lambda i: xs[i])
        for crowded in (order[: len(labels)], order[-len(labels) :]):  # all centres at one end
            if not self.check(problem, commas(crowded)).correct:
                return commas(crowded)
        return commas(labels[1:])

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["xs"]))


def _best_ratio_subset(a: list[int], b: list[int], k: int) -> tuple[Fraction, list[int]]:
    """max ΣA/ΣB over K-subsets and a subset reaching it, by Dinkelbach's iteration (exact;
    the ratio strictly increases until it is optimal)."""
    lam = Fraction(sum(a[:k]), sum(b[:k]))
    while True:
        pick = sorted(range(len(a)), key=lambda i: a[i] - lam * b[i], reverse=True)[:k]
        new = Fraction(sum(a[i] for i in pick), sum(b[i] for i in pick))
        if new == lam:
            return lam, sorted(pick)
        lam = new


@ENVIRONMENTS.register("fractional_programming")
class FractionalProgramming(Environment):
    """Choose K indices maximising ΣA_i / ΣB_i (RLVE FractionalProgramming); (answer/gold)^5.
    The optimum by Dinkelbach's iteration; ``solve``: all K-subsets."""

    tags = TAGS
    difficulty_scales = "N = 3 + d pairs, values up to 10 + 3d, K in 1..N−1"
    size_measure = "number of pairs N"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = 3 + difficulty, 10 + 3 * difficulty
        a = [rng.randint(1, top) for _ in range(n)]
        b = [rng.randint(1, top) for _ in range(n)]
        k = rng.randint(1, n - 1)
        prompt = (
            f"You are given two arrays of {n} positive integers, indexed 0 to {n - 1}:\nA: "
            f"{commas(a)}\nB: {commas(b)}\n\nChoose exactly {k} distinct indices i_1, ..., i_{k} "
            f"so that (A[i_1] + ... + A[i_{k}]) / (B[i_1] + ... + B[i_{k}]) is as large as "
            "possible. Give the chosen indices separated by commas."
        )
        data = {"a": a, "b": b, "k": k}
        return Instance(prompt, commas(_best_ratio_subset(a, b, k)[1]), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        a, b, k = problem.data["a"], problem.data["b"], problem.data["k"]
        idx = _distinct_labels(answer, k, len(a))
        if isinstance(idx, Verdict):
            return idx
        value = Fraction(sum(a[i] for i in idx), sum(b[i] for i in idx))
        return _fraction_verdict(value, _best_ratio_subset(a, b, k)[0], "a larger ratio exists")

    def solve(self, problem: Problem) -> str:
        a, b, k = problem.data["a"], problem.data["b"], problem.data["k"]
        best = max(
            itertools.combinations(range(len(a)), k),
            key=lambda c: Fraction(sum(a[i] for i in c), sum(b[i] for i in c)),
        )
        return commas(list(best))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        a, b = problem.data["a"], problem.data["b"]
        worst = sorted(range(len(a)), key=lambda i: Fraction(a[i], b[i]))
        return commas(worst[: len(parse_int_list(answer))])

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["a"]))


def _max_assignment(w: list[list[int]]) -> list[int]:
    """A permutation p maximising Σ w[i][p[i]]: the Hungarian algorithm (potentials, O(n³)),
    in exact integers."""
    n = len(w)
    cost = [[-x for x in row] for row in w]
    inf = 4 * (n + 1) * (1 + sum(abs(x) for row in w for x in row))  # above any reduced cost
    u, v, p, way = [0] * (n + 1), [0] * (n + 1), [0] * (n + 1), [0] * (n + 1)
    for i in range(1, n + 1):
        p[0], j0 = i, 0
        minv, used = [inf] * (n + 1), [False] * (n + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = p[j0], inf, 0
            for j in range(1, n + 1):
                if not used[j]:
                    cur = cost[i0 - 1][j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(n + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    out = [0] * n
    for j in range(1, n + 1):
        out[p[j] - 1] = j - 1
    return out


def _best_ratio_matching(a: list[list[int]], b: list[list[int]]) -> Fraction:
    n = len(a)
    lam = Fraction(sum(a[i][i] for i in range(n)), sum(b[i][i] for i in range(n)))
    while True:
        w = [
            [a[i][j] * lam.denominator - b[i][j] * lam.numerator for j in range(n)]
            for i in range(n)
        ]
        p = _max_assignment(w)
        new = Fraction(sum(a[i][p[i]] for i in range(n)), sum(b[i][p[i]] for i in range(n)))
        if new == lam:
            return lam
        lam = new


@ENVIRONMENTS.register("fractional_programming_bipartite_graph_matching")
class FractionalProgrammingBipartiteGraphMatching(Environment):
    """A permutation P maximising Σ A[i][P[i]] / Σ B[i][P[i]] (RLVE
    FractionalProgramming_BipartiteGraphMatching); (answer/gold)^5. The optimum: Dinkelbach's
    iteration over exact Hungarian assignments; ``solve``: all permutations."""

    tags = TAGS
    difficulty_scales = "N × N matrices with N = 3 + d//3, entries 1..10 + 2d"
    size_measure = "matrix side N"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = 3 + difficulty // 3, 10 + 2 * difficulty
        a = [[rng.randint(1, top) for _ in range(n)] for _ in range(n)]
        b = [[rng.randint(1, top) for _ in range(n)] for _ in range(n)]
        show = lambda m: "\n".join(" ".join(map(str, row)) for row in m)  # noqa: E731
        prompt = (
            f"You are given two {n} × {n} matrices A and B (rows and columns indexed 0 to "
            f"{n - 1}):\nA:\n{show(a)}\nB:\n{show(b)}\n\nFind a permutation P[0], ..., P[{n - 1}] "
            f"of 0, ..., {n - 1} that maximises (A[0][P[0]] + ... + A[{n - 1}][P[{n - 1}]]) / "
            f"(B[0][P[0]] + ... + B[{n - 1}][P[{n - 1}]]). Give P[0], ..., P[{n - 1}] separated "
            "by commas."
        )
        data = {"a": a, "b": b}
        lam = _best_ratio_matching(a, b)
        w = [
            [a[i][j] * lam.denominator - b[i][j] * lam.numerator for j in range(n)]
            for i in range(n)
        ]
        return Instance(prompt, commas(_max_assignment(w)), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        a, b = problem.data["a"], problem.data["b"]
        n = len(a)
        p = parse_int_list(answer)
        if sorted(p) != list(range(n)):
            return invalid(f"P must list each of 0..{n - 1} exactly once")
        value = Fraction(sum(a[i][p[i]] for i in range(n)), sum(b[i][p[i]] for i in range(n)))
        return _fraction_verdict(value, _best_ratio_matching(a, b), "a larger ratio exists")

    def solve(self, problem: Problem) -> str:
        a, b = problem.data["a"], problem.data["b"]
        n = len(a)
        best = max(
            itertools.permutations(range(n)),
            key=lambda p: Fraction(
                sum(a[i][p[i]] for i in range(n)), sum(b[i][p[i]] for i in range(n))
            ),
        )
        return commas(list(best))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        p = parse_int_list(answer)
        for i, j in itertools.combinations(range(len(p)), 2):
            q = list(p)
            q[i], q[j] = q[j], q[i]
            if not self.check(problem, commas(q)).correct:
                return commas(q)
        return commas(p[:-1])

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["a"]))


@ENVIRONMENTS.register("discrete_logarithm")
class DiscreteLogarithm(Environment):
    """The smallest y ≥ 0 with a^y ≡ b (mod m) (RLVE DiscreteLogarithm). A negative y is
    invalid; a y that does not satisfy the congruence scores 0; a larger solution scores
    ((gold + 1)/(y + 1))^2 (RLVE's (gold/answer)^2, shifted so that gold = 0 works)."""

    tags = TAGS
    difficulty_scales = "modulus m ≤ 20·1.25^d"
    size_measure = "modulus m (the search space of exponents)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        m = rng.randint(3, int(20 * 1.25**difficulty))
        a = rng.randint(2, m - 1)
        y0 = rng.randint(0, m)
        b = pow(a, y0, m) + m * rng.randint(0, 2)
        prompt = (
            f"Find the smallest non-negative integer y such that ({a}^y) mod {m} = {b} mod {m}."
        )
        data = {"a": a, "b": b, "m": m}
        return Instance(prompt, str(self._smallest(a, b, m)), data)

    @staticmethod
    def _smallest(a: int, b: int, m: int) -> int:
        target, value = b % m, 1 % m
        for y in range(2 * m + 2):  # the powers are periodic after at most m steps
            if value == target:
                return y
            value = value * a % m
        raise ValueError("no solution")

    def check(self, problem: Problem, answer: str) -> Verdict:
        a, b, m = problem.data["a"], problem.data["b"], problem.data["m"]
        y = normalize.parse_integer(answer, ("y",))
        if y < 0 or y > 10**30:
            return invalid("y must be a non-negative integer (at most 10^30)")
        if pow(a, y, m) != b % m:
            return graded(0.0, False, "a^y does not match")
        gold = self._smallest(a, b, m)
        ok = y == gold
        score = ((gold + 1) / (y + 1)) ** 2
        return graded(score, ok, "correct" if ok else "a smaller y works")

    def solve(self, problem: Problem) -> str:
        a, b, m = problem.data["a"], problem.data["b"], problem.data["m"]
        return str(next(y for y in range(2 * m + 2) if pow(a, y, m) == b % m))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return str(int(answer) + 1)

    def size(self, problem: Problem) -> float:
        return float(problem.data["m"])


@ENVIRONMENTS.register("hur_warehouse_store")
class HurWarehouseStore(Environment):
    """A store receives A[i] goods each morning and customer i asks for B[i] that day; serve
    as many customers as possible (RLVE HURWarehouseStore, POI). Serving beyond the stock is
    invalid; else (served / best)^5. The optimum: the heap greedy (serve, and when short drop
    the largest order so far); ``solve``: all subsets."""

    tags = TAGS
    difficulty_scales = "N = 3 + d days, amounts 0..10 + d"
    size_measure = "number of days N"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = 3 + difficulty, 10 + difficulty
        a = [rng.randint(0, top) for _ in range(n)]
        a[0] = max(a[0], 1)
        b = [rng.randint(1, top) for _ in range(n)]
        b[0] = rng.randint(1, a[0])  # someone can always be served
        prompt = (
            f"You run a warehouse store for {n} days, numbered 1 to {n}. On the morning of day "
            "i, A[i] units of goods arrive; later that day customer i asks for B[i] units, and "
            "you either give them all B[i] units from stock at once or turn them away. Stock "
            f"carries over between days.\nA: {commas(a)}\nB: {commas(b)}\n\nServe as many "
            "customers as possible. Give the days of the customers you serve, separated by "
            "commas."
        )
        data = {"a": a, "b": b}
        return Instance(prompt, commas(self._greedy(a, b)), data)

    @staticmethod
    def _greedy(a: list[int], b: list[int]) -> list[int]:
        stock = 0
        served: list[tuple[int, int]] = []  # max-heap of (−B, day)
        for day, (arrive, want) in enumerate(zip(a, b, strict=True), start=1):
            stock += arrive
            if want <= stock:
                stock -= want
                heapq.heappush(served, (-want, day))
            elif served and -served[0][0] > want:
                stock += -heapq.heappop(served)[0] - want
                heapq.heappush(served, (-want, day))
        return sorted(day for _, day in served)

    @staticmethod
    def _feasible(a: list[int], b: list[int], days: set[int]) -> bool:
        stock = 0
        for day, (arrive, want) in enumerate(zip(a, b, strict=True), start=1):
            stock += arrive - (want if day in days else 0)
            if stock < 0:
                return False
        return True

    def check(self, problem: Problem, answer: str) -> Verdict:
        a, b = problem.data["a"], problem.data["b"]
        days = parse_int_list(answer)
        if len(set(days)) != len(days) or any(not 1 <= d <= len(a) for d in days):
            return invalid(f"give distinct days between 1 and {len(a)}")
        if not self._feasible(a, b, set(days)):
            return invalid("the stock runs out: not every listed customer can be served")
        return optimum_verdict(len(days), len(self._greedy(a, b)), "more customers can be served")

    def solve(self, problem: Problem) -> str:
        a, b = problem.data["a"], problem.data["b"]
        best: tuple[int, ...] = ()
        for mask in range(1 << len(a)):
            days = tuple(d + 1 for d in range(len(a)) if mask >> d & 1)
            if len(days) > len(best) and self._feasible(a, b, set(days)):
                best = days
        return commas(list(best))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return commas(parse_int_list(answer)[1:])

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["a"]))
