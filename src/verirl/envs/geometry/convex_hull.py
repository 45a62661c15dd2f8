"""The area of a convex hull (RLVE catalogue row ConvexHull; Zeng et al. 2025, "RLVE: Scaling
Up Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A).

Integer points make twice the area an integer, so the answer is 2 × area. Reward: RLVE's
(min/max)^5. The verifier uses Andrew's monotone chain; ``solve`` finds the hull edges as the
point pairs with every other point on one side (O(N³)), then takes the shoelace formula over
the edges, so the two cross-check in the tests.
"""

from __future__ import annotations

import itertools
import random

from verirl.envs.base import ENVIRONMENTS, Instance, IntegerAnswer, count_reward, graded
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict


def _cross(o: list[int], a: list[int], b: list[int]) -> int:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


@ENVIRONMENTS.register("convex_hull")
class ConvexHull(IntegerAnswer):
    """Twice the area of the convex hull of N integer points."""

    tags = ("rlve", "geometry")
    difficulty_scales = "N = 5 + d points with coordinates in [0, 10 + 5d]"
    size_measure = "number of points N"
    size_key = "points"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = 5 + difficulty, 10 + 5 * difficulty
        while True:
            points = [[rng.randint(0, top), rng.randint(0, top)] for _ in range(n)]
            if self._twice_area(points) > 0:
                break
        listing = ", ".join(f"({x}, {y})" for x, y in points)
        prompt = (
            f"You are given {n} points in the plane: {listing}. What is twice the area of their "
            "convex hull (the smallest convex polygon containing all of them)? Give 2 × area as "
            "an integer."
        )
        return Instance(prompt, str(self._twice_area(points)), {"points": points})

    @staticmethod
    def _twice_area(points: list[list[int]]) -> int:
        pts = sorted({(x, y) for x, y in points})
        if len(pts) < 3:
            return 0
        hull: list[list[int]] = []
        for seq in (pts, pts[::-1]):  # lower hull, then upper hull
            start = len(hull)
            for p in seq:
                while len(hull) >= start + 2 and _cross(hull[-2], hull[-1], list(p)) <= 0:
                    hull.pop()
                hull.append(list(p))
            hull.pop()
        return abs(
            sum(a[0] * b[1] - a[1] * b[0] for a, b in zip(hull, hull[1:] + hull[:1], strict=True))
        )

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = normalize.parse_integer(answer)
        gold = self._twice_area(problem.data["points"])
        ok = value == gold
        return graded(count_reward(value, gold, 5.0), ok, "correct" if ok else "wrong area")

    def solve_int(self, problem: Problem) -> int:
        pts = sorted({(x, y) for x, y in problem.data["points"]})
        total = 0
        for a, b in itertools.permutations(pts, 2):
            sides = [_cross(list(a), list(b), list(p)) for p in pts if p not in (a, b)]
            if all(s >= 0 for s in sides) and any(s > 0 for s in sides):
                # a → b has the hull on its left: a hull edge, counter-clockwise; collinear
                # points on it are skipped unless a and b are its extreme points
                between = [
                    p
                    for p, s in zip([p for p in pts if p not in (a, b)], sides, strict=True)
                    if s == 0
                    and min(a[0], b[0]) <= p[0] <= max(a[0], b[0])
                    and min(a[1], b[1]) <= p[1] <= max(a[1], b[1])
                ]
                beyond = [
                    p
                    for p, s in zip([p for p in pts if p not in (a, b)], sides, strict=True)
                    if s == 0 and p not in between
                ]
                if not beyond:
                    total += a[0] * b[1] - a[1] * b[0]
        return abs(total)
