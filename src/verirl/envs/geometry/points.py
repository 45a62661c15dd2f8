"""Geometry on lattice points: the largest convex polygon and the largest axis-parallel
rectangle with corners among given points.

Rows LargestConvexPolygon and LargestRectangle_AmongPoints of the RLVE catalogue (Zeng et al.,
*RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable
Environments*, arXiv:2511.07317). Coordinates are integers, so areas are exact (twice the
area, by the shoelace formula); verifiers check that the answer is a strictly convex simple
polygon or a rectangle with sides parallel to the axes, and grade (area/gold)^5. The largest
convex polygon is the convex hull (found by Andrew's monotone chain for the answer, by gift
wrapping in the verifier).
"""

from __future__ import annotations

import itertools
import math
import random

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    invalid,
    optimum_verdict,
    parse_int_list,
)
from verirl.envs.kit.size_ladder import grown
from verirl.types import Problem, Verdict

TAGS = ("rlve", "geometry")
Point = tuple[int, int]


def cross(o: Point, a: Point, b: Point) -> int:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def twice_area(poly: list[Point]) -> int:
    return abs(
        sum(p[0] * q[1] - q[0] * p[1] for p, q in zip(poly, poly[1:] + poly[:1], strict=True))
    )


def monotone_chain(points: list[Point]) -> list[int]:
    """Indices of the strict convex hull, counter-clockwise (Andrew's algorithm)."""
    order = sorted(range(len(points)), key=lambda i: points[i])
    lower: list[int] = []
    for i in order:
        while len(lower) >= 2 and cross(points[lower[-2]], points[lower[-1]], points[i]) <= 0:
            lower.pop()
        lower.append(i)
    upper: list[int] = []
    for i in reversed(order):
        while len(upper) >= 2 and cross(points[upper[-2]], points[upper[-1]], points[i]) <= 0:
            upper.pop()
        upper.append(i)
    return lower[:-1] + upper[:-1]


def gift_wrapping_area(points: list[Point]) -> int:
    """Twice the hull area by Jarvis march (the next hull vertex has every point on its left)."""
    start = min(range(len(points)), key=lambda i: points[i])
    hull, current = [], start
    while True:
        hull.append(points[current])
        candidate = (current + 1) % len(points)
        for j in range(len(points)):
            turn = cross(points[current], points[candidate], points[j])
            far = math.dist(points[current], points[j]) > math.dist(
                points[current], points[candidate]
            )
            if turn < 0 or (turn == 0 and far):
                candidate = j
        current = candidate
        if current == start or len(hull) > len(points):
            break
    return twice_area(hull) if len(hull) >= 3 else 0


def _is_strictly_convex(poly: list[Point]) -> bool:
    """All turns strictly the same way and the boundary winds around exactly once."""
    k = len(poly)
    turns = [cross(poly[i], poly[(i + 1) % k], poly[(i + 2) % k]) for i in range(k)]
    if not (all(t > 0 for t in turns) or all(t < 0 for t in turns)):
        return False
    total = 0.0
    for i in range(k):
        a, b, c = poly[i], poly[(i + 1) % k], poly[(i + 2) % k]
        u, v = (b[0] - a[0], b[1] - a[1]), (c[0] - b[0], c[1] - b[1])
        total += math.atan2(u[0] * v[1] - u[1] * v[0], u[0] * v[0] + u[1] * v[1])
    return round(abs(total) / (2 * math.pi)) == 1


def _random_points(rng: random.Random, n: int, span: int) -> list[Point]:
    pts: set[Point] = set()
    while len(pts) < n:
        pts.add((rng.randint(0, span), rng.randint(0, span)))
    out = sorted(pts)
    rng.shuffle(out)
    return out


class _PointsEnv(Environment):
    tags = TAGS
    size_key = "points"
    size_measure = "number of points"

    @staticmethod
    def listing(points: list[Point]) -> str:
        return "\n".join(f"{i}: ({x}, {y})" for i, (x, y) in enumerate(points))


@ENVIRONMENTS.register("largest_convex_polygon")
class LargestConvexPolygon(_PointsEnv):
    """A strictly convex polygon with vertices among the points and the largest area;
    (area/gold)^5 credit, a polygon that is not strictly convex is invalid."""

    difficulty_scales = "N = 5 + d points in [0, 2N]²"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 5 + difficulty
        while True:
            points = _random_points(rng, n, 2 * n)
            if len(monotone_chain(points)) >= 3:
                break
        prompt = (
            f"You are given {n} points in the 2D plane, labeled from 0 to {n - 1}:\n"
            f"{self.listing(points)}\n\nChoose some of them as the vertices of a convex polygon "
            "(every interior angle strictly less than 180 degrees) with the largest possible "
            "area. Output the labels of its vertices in order along the boundary (clockwise "
            "or counter-clockwise), separated by spaces."
        )
        data = {"points": [list(p) for p in points]}
        return Instance(prompt, " ".join(map(str, monotone_chain(points))), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        points = [tuple(p) for p in problem.data["points"]]
        labels = parse_int_list(answer)
        if len(labels) < 3 or len(set(labels)) != len(labels):
            return invalid("a polygon needs at least 3 distinct vertices")
        if any(not 0 <= i < len(points) for i in labels):
            return invalid("a label is not one of the points")
        poly = [points[i] for i in labels]
        if not _is_strictly_convex(poly):
            return invalid("those vertices, in that order, are not a convex polygon")
        return optimum_verdict(
            twice_area(poly), gift_wrapping_area(points), "a larger convex polygon exists"
        )

    def solve(self, problem: Problem) -> str:
        points = [tuple(p) for p in problem.data["points"]]
        return " ".join(map(str, monotone_chain(points)))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        labels = answer.split()
        labels[0], labels[1] = labels[1], labels[0]  # order broken (or a smaller triangle)
        return " ".join(labels) if len(labels) > 3 else " ".join(labels[:2])


@ENVIRONMENTS.register("largest_rectangle_among_points")
class LargestRectangleAmongPoints(_PointsEnv):
    """Four of the points forming an axis-parallel rectangle of the largest area;
    (area/gold)^5 credit, four points that are no such rectangle are invalid."""

    difficulty_scales = "N = 5 then int(1.1·N + 1) per level points on a grid of side ~√(2N)"
    answer_kind = "integer_set"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = grown(5, difficulty, cap=150)
        span = max(3, math.isqrt(2 * n) + 1)
        points = _random_points(rng, n - 4, span)
        x1, x2 = sorted(rng.sample(range(span + 1), 2))
        y1, y2 = sorted(rng.sample(range(span + 1), 2))
        taken = set(points)
        points += [p for p in ((x1, y1), (x1, y2), (x2, y1), (x2, y2)) if p not in taken]
        while len(points) < n:
            p = (rng.randint(0, span), rng.randint(0, span))
            if p not in points:
                points.append(p)
        rng.shuffle(points)
        prompt = (
            f"You are given a set of {n} points in a 2D plane, each represented by its "
            f"coordinates (x, y):\n{self.listing(points)}\n\nChoose four of them that are the "
            "corners of a rectangle with sides parallel to the axes, with the largest possible "
            "area. Output the four labels separated by spaces; if several rectangles are "
            "largest, any of them is accepted."
        )
        data = {"points": [list(p) for p in points]}
        return Instance(prompt, self._best(points)[1], data)

    @staticmethod
    def _best(points: list[Point]) -> tuple[int, str]:
        """Every pair of points as opposite corners; the other two looked up."""
        index = {p: i for i, p in enumerate(points)}
        best = (0, "")
        for (x1, y1), (x2, y2) in itertools.combinations(points, 2):
            if x1 != x2 and y1 != y2 and (x1, y2) in index and (x2, y1) in index:
                area = abs(x2 - x1) * abs(y2 - y1)
                if area > best[0]:
                    corners = sorted(index[p] for p in ((x1, y1), (x2, y2), (x1, y2), (x2, y1)))
                    best = (area, " ".join(map(str, corners)))
        return best

    def check(self, problem: Problem, answer: str) -> Verdict:
        points = [tuple(p) for p in problem.data["points"]]
        labels = parse_int_list(answer)
        if (
            len(labels) != 4
            or len(set(labels)) != 4
            or any(not 0 <= i < len(points) for i in labels)
        ):
            return invalid("give four distinct labels")
        corners = [points[i] for i in labels]
        xs, ys = sorted({x for x, _ in corners}), sorted({y for _, y in corners})
        if len(xs) != 2 or len(ys) != 2 or set(corners) != set(itertools.product(xs, ys)):
            return invalid("those points are not the corners of an axis-parallel rectangle")
        area = (xs[1] - xs[0]) * (ys[1] - ys[0])
        return optimum_verdict(area, self._best(points)[0], "a larger rectangle exists")

    def solve(self, problem: Problem) -> str:
        # Independent: group points by column; every two columns share rows (y values).
        points = [tuple(p) for p in problem.data["points"]]
        columns: dict[int, dict[int, int]] = {}
        for i, (x, y) in enumerate(points):
            columns.setdefault(x, {})[y] = i
        best = (0, "")
        for xa, xb in itertools.combinations(sorted(columns), 2):
            shared = sorted(set(columns[xa]) & set(columns[xb]))
            if len(shared) >= 2:
                lo, hi = shared[0], shared[-1]
                area = (xb - xa) * (hi - lo)
                if area > best[0]:
                    ids = [columns[xa][lo], columns[xa][hi], columns[xb][lo], columns[xb][hi]]
                    best = (area, " ".join(map(str, sorted(ids))))
        return best[1]

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return " ".join(answer.split()[:3])
