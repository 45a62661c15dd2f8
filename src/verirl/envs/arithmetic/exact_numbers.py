"""Exact numeric answers: integer K-th roots of large numbers and the squared radius of the
smallest circle enclosing integer points (a rational number).

RLVE-Gym rows RootExtraction and SmallestCircle (Zeng et al. 2025, "RLVE: Scaling Up
Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A). RLVE asks for decimal approximations with a custom passing
threshold; here the quantities are exact (⌊N^(1/K)⌋, and r² as a fraction), so ``correct``
means exactly right. Partial credit follows the rows: 1/(1 + |answer − gold|)^2 for the
root, (min/max)^10 for the squared radius.
"""

from __future__ import annotations

import random
from fractions import Fraction

from verirl.envs.base import ENVIRONMENTS, Environment, Instance, count_reward, graded, parse_int
from verirl.envs.kit.fractions import fraction_text, parse_fraction
from verirl.types import Problem, Verdict

TAGS = ("rlve", "numeric")


@ENVIRONMENTS.register("root_extraction")
class RootExtraction(Environment):
    """⌊N^(1/K)⌋ for a large N; reward 1/(1 + |answer − gold|)^2."""

    tags = TAGS
    answer_kind = "integer"
    difficulty_scales = "K = 2 + d//4; the root has 1 + d//2 digits"
    size_measure = "digits of N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        k = 2 + difficulty // 4
        digits = 1 + difficulty // 2
        root = rng.randint(max(2, 10 ** (digits - 1)), 10**digits - 1)
        n = rng.randint(root**k, (root + 1) ** k - 1)  # ⌊n^(1/k)⌋ = root by construction
        prompt = (
            f"Compute the integer part of the {k}-th root of {n}, that is, the largest integer x "
            f"with x^{k} ≤ {n}."
        )
        return Instance(prompt, str(root), {"n": n, "k": k})

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer)
        gold = int(self.solve(problem))
        ok = value == gold
        score = 1.0 / (1.0 + min(abs(value - gold), 10**6)) ** 2
        return graded(score, ok, "correct" if ok else "the root is not right")

    def solve(self, problem: Problem) -> str:
        """Binary search on x with exact integer powers."""
        n, k = problem.data["n"], problem.data["k"]
        lo, hi = 0, 1
        while hi**k <= n:
            hi *= 2
        while hi - lo > 1:  # lo^k ≤ n < hi^k
            mid = (lo + hi) // 2
            if mid**k <= n:
                lo = mid
            else:
                hi = mid
        return str(lo)

    def size(self, problem: Problem) -> float:
        return float(len(str(problem.data["n"])))

    def problem_space(self, difficulty: int) -> int | None:
        k, digits = 2 + difficulty // 4, 1 + difficulty // 2
        return min(10**9, 10 ** (digits * k) - max(2, 10 ** (digits - 1)) ** k)


Point = tuple[int, int]


def _circle_two(a: Point, b: Point) -> tuple[Fraction, Fraction, Fraction]:
    cx, cy = Fraction(a[0] + b[0], 2), Fraction(a[1] + b[1], 2)
    return cx, cy, (a[0] - cx) ** 2 + (a[1] - cy) ** 2


def _circle_three(a: Point, b: Point, c: Point) -> tuple[Fraction, Fraction, Fraction] | None:
    """The circumcircle, or None for collinear points."""
    d = 2 * (a[0] * (b[1] - c[1]) + b[0] * (c[1] - a[1]) + c[0] * (a[1] - b[1]))
    if d == 0:
        return None
    sa, sb, sc = (p[0] ** 2 + p[1] ** 2 for p in (a, b, c))
    cx = Fraction(sa * (b[1] - c[1]) + sb * (c[1] - a[1]) + sc * (a[1] - b[1]), d)
    cy = Fraction(sa * (c[0] - b[0]) + sb * (a[0] - c[0]) + sc * (b[0] - a[0]), d)
    return cx, cy, (a[0] - cx) ** 2 + (a[1] - cy) ** 2


def _inside(circle: tuple[Fraction, Fraction, Fraction], p: Point) -> bool:
    cx, cy, r2 = circle
    return (p[0] - cx) ** 2 + (p[1] - cy) ** 2 <= r2


@ENVIRONMENTS.register("smallest_circle")
class SmallestCircle(Environment):
    """r² of the smallest circle containing N integer points, as an exact fraction;
    (min/max)^10 credit."""

    tags = TAGS
    answer_kind = "text"
    difficulty_scales = "N = 4 + d//2 points (at most 19) with coordinates in -(5 + d)..5 + d"
    size_measure = "points N"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = min(19, 4 + difficulty // 2), 5 + difficulty
        pts: list[Point] = []
        while len(pts) < n:
            p = (rng.randint(-top, top), rng.randint(-top, top))
            if p not in pts:
                pts.append(p)
        # brute force: the optimum passes through two points (a diameter) or three
        candidates = [_circle_two(a, b) for i, a in enumerate(pts) for b in pts[i + 1 :]]
        for i, a in enumerate(pts):
            for j in range(i + 1, n):
                for k in range(j + 1, n):
                    c = _circle_three(a, pts[j], pts[k])
                    if c is not None:
                        candidates.append(c)
        best = min(c[2] for c in candidates if all(_inside(c, p) for p in pts))
        listing = " ".join(f"({x}, {y})" for x, y in pts)
        prompt = (
            f"You are given {n} points in the plane: {listing}\nFind the smallest circle that "
            "contains all of them (points on the circle count as contained). Give the square of "
            "its radius exactly, as a fraction p/q in lowest terms or an integer."
        )
        return Instance(prompt, fraction_text(best), {"points": [list(p) for p in pts]})

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_fraction(answer)
        gold = self._radius2(problem)
        ok = value == gold
        score = count_reward(float(value), float(gold), 10.0) if value > 0 else 0.0
        return graded(score, ok, "correct" if ok else "the squared radius is not right")

    def _radius2(self, problem: Problem) -> Fraction:
        """Welzl's incremental algorithm (points in a fixed shuffled order), exact."""
        pts: list[Point] = [(x, y) for x, y in problem.data["points"]]
        random.Random(len(pts)).shuffle(pts)
        circle = _circle_two(pts[0], pts[0])
        for i, p in enumerate(pts):
            if _inside(circle, p):
                continue
            circle = _circle_two(p, p)
            for j in range(i):
                q = pts[j]
                if _inside(circle, q):
                    continue
                circle = _circle_two(p, q)
                for k in range(j):
                    r = pts[k]
                    if not _inside(circle, r):
                        circle = _circle_three(p, q, r) or circle
        return circle[2]

    def solve(self, problem: Problem) -> str:
        return fraction_text(self._radius2(problem))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return fraction_text(self._radius2(problem) * Fraction(11, 10))

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["points"]))
