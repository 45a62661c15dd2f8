"""Lattice geometry: points inside and on a lattice polygon (Pick's theorem), the area of a
union of rectangles, the best meeting point under the Manhattan distance, the closest pair
and collinear triples.

Geometry rows in the spirit of RLVE-Gym (Zeng et al. 2025, "RLVE: Scaling Up Reinforcement
Learning for Language Models with Adaptive Verifiable Environments", arXiv:2511.07317,
Appendix A: SkaRockGarden, MinSumChebyshevDistance, LargestRectangle_AmongPoints), all in
exact integer arithmetic. Generators use the formula (Pick, coordinate compression, medians,
brute pairs and triples); ``solve_int`` counts lattice points or cells one by one, scans the
axes, sweeps a strip or groups directions, so the contract tests cross-check them. Answers
are integers scored with RLVE's (min/max)^10.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from functools import cmp_to_key

from verirl.envs.base import ENVIRONMENTS, Instance
from verirl.envs.kit.answers import SizedInteger
from verirl.types import Problem

TAGS = ("geometry",)

Point = tuple[int, int]


def _star_polygon(rng: random.Random, n: int, top: int) -> list[Point]:
    """A simple polygon: distinct lattice points sorted by angle around an interior centre
    (no two on one ray), with non-zero area."""
    while True:
        cx, cy = rng.randint(top // 3, 2 * top // 3), rng.randint(top // 3, 2 * top // 3)
        pts: dict[tuple[int, int], Point] = {}
        while len(pts) < n:
            p = (rng.randint(0, top), rng.randint(0, top))
            dx, dy = p[0] - cx, p[1] - cy
            if dx == 0 and dy == 0:
                continue
            g = math.gcd(dx, dy)
            pts.setdefault((dx // g, dy // g), p)  # one point per ray keeps it simple

        def half(d: tuple[int, int]) -> int:
            return 0 if d[1] > 0 or (d[1] == 0 and d[0] > 0) else 1

        def cmp(a: tuple[int, int], b: tuple[int, int]) -> int:
            if half(a) != half(b):
                return half(a) - half(b)
            cross = a[0] * b[1] - a[1] * b[0]
            return -1 if cross > 0 else 1

        rays = sorted(pts, key=cmp_to_key(cmp))
        poly = [pts[r] for r in rays]
        # the centre must see every edge turning left (angles between neighbours < 180°)
        ok = all(
            (a[0] * b[1] - a[1] * b[0]) > 0 for a, b in zip(rays, rays[1:] + rays[:1], strict=True)
        )
        if ok and _twice_area(poly) > 0:
            return poly


def _twice_area(poly: list[Point]) -> int:
    return abs(
        sum(x1 * y2 - x2 * y1 for (x1, y1), (x2, y2) in zip(poly, poly[1:] + poly[:1], strict=True))
    )


def _boundary(poly: list[Point]) -> int:
    return sum(
        math.gcd(abs(x2 - x1), abs(y2 - y1))
        for (x1, y1), (x2, y2) in zip(poly, poly[1:] + poly[:1], strict=True)
    )


def _on_segment(p: Point, a: Point, b: Point) -> bool:
    cross = (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
    return (
        cross == 0
        and min(a[0], b[0]) <= p[0] <= max(a[0], b[0])
        and min(a[1], b[1]) <= p[1] <= max(a[1], b[1])
    )


def _strictly_inside(p: Point, poly: list[Point]) -> bool:
    inside = False
    for a, b in zip(poly, poly[1:] + poly[:1], strict=True):
        if _on_segment(p, a, b):
            return False
        if (a[1] > p[1]) != (b[1] > p[1]):
            # p.x < the edge's x at height p.y, compared without division
            lhs = (p[0] - a[0]) * (b[1] - a[1])
            rhs = (p[1] - a[1]) * (b[0] - a[0])
            if (lhs < rhs) == (b[1] > a[1]):
                inside = not inside
    return inside


def _polygon_text(poly: list[Point]) -> str:
    return ", ".join(f"({x}, {y})" for x, y in poly)


@ENVIRONMENTS.register("polygon_interior_points")
class PolygonInteriorPoints(SizedInteger):
    """Lattice points strictly inside a simple lattice polygon (Pick: I = A - B/2 + 1)."""

    tags = TAGS
    max_difficulty = 30  # the brute-force count scans the bounding box
    difficulty_scales = "4 + d//2 vertices (at most 16) with coordinates in [0, 10 + 4d]"
    size_measure = "number of vertices times the coordinate range"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = min(16, 4 + difficulty // 2), 10 + 4 * difficulty
        poly = _star_polygon(rng, n, top)
        prompt = (
            f"A simple polygon (its edges do not cross) has the vertices {_polygon_text(poly)}, "
            "in this order, joined by straight edges, the last vertex back to the first. How "
            "many points with integer coordinates lie strictly inside it (not on an edge)?"
        )
        answer = (_twice_area(poly) - _boundary(poly) + 2) // 2
        return Instance(prompt, str(answer), {"poly": [list(p) for p in poly], "size": n * top})

    def solve_int(self, problem: Problem) -> int:
        poly = [tuple(p) for p in problem.data["poly"]]
        xs, ys = [p[0] for p in poly], [p[1] for p in poly]
        return sum(
            _strictly_inside((x, y), poly)
            for x in range(min(xs), max(xs) + 1)
            for y in range(min(ys), max(ys) + 1)
        )


@ENVIRONMENTS.register("polygon_boundary_points")
class PolygonBoundaryPoints(SizedInteger):
    """Lattice points on the boundary of a lattice polygon: Σ gcd(|dx|, |dy|)."""

    tags = TAGS
    difficulty_scales = "4 + d//2 vertices (at most 20) with coordinates in [0, 12 + 6d]"
    size_measure = "number of vertices times the coordinate range"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = min(20, 4 + difficulty // 2), 12 + 6 * difficulty
        poly = _star_polygon(rng, n, top)
        prompt = (
            f"A polygon has the vertices {_polygon_text(poly)}, in this order, joined by "
            "straight edges, the last vertex back to the first. How many points with integer "
            "coordinates lie on its edges (vertices included)?"
        )
        return Instance(
            prompt, str(_boundary(poly)), {"poly": [list(p) for p in poly], "size": n * top}
        )

    def solve_int(self, problem: Problem) -> int:
        poly = [tuple(p) for p in problem.data["poly"]]
        found: set[tuple[int, int]] = set()
        for (x1, y1), (x2, y2) in zip(poly, poly[1:] + poly[:1], strict=True):
            for x in range(min(x1, x2), max(x1, x2) + 1):
                if x1 == x2:
                    found |= {(x, y) for y in range(min(y1, y2), max(y1, y2) + 1)}
                elif (y2 - y1) * (x - x1) % (x2 - x1) == 0:
                    found.add((x, y1 + (y2 - y1) * (x - x1) // (x2 - x1)))
        return len(found)


@ENVIRONMENTS.register("rectangle_union_area")
class RectangleUnionArea(SizedInteger):
    """The area covered by the union of axis-parallel rectangles."""

    tags = TAGS
    max_difficulty = 40  # the cell-by-cell count grows with the area
    difficulty_scales = "3 + d rectangles with corners in [0, 20 + 5d]"
    size_measure = "number of rectangles"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = 3 + difficulty, 20 + 5 * difficulty
        rects = []
        for _ in range(n):
            x1, y1 = rng.randint(0, top - 1), rng.randint(0, top - 1)
            rects.append(
                [
                    x1,
                    y1,
                    rng.randint(x1 + 1, min(top, x1 + 4 + top // 3)),
                    rng.randint(y1 + 1, min(top, y1 + 4 + top // 3)),
                ]
            )
        listing = "; ".join(f"from ({a}, {b}) to ({c}, {d})" for a, b, c, d in rects)
        prompt = (
            f"Each of the following {n} axis-parallel rectangles is given by its lower-left and "
            f"upper-right corners: {listing}. What is the total area of the region covered by "
            "at least one rectangle?"
        )
        xs = sorted({v for r in rects for v in (r[0], r[2])})
        ys = sorted({v for r in rects for v in (r[1], r[3])})
        area = 0
        for xa, xb in itertools.pairwise(xs):
            for ya, yb in itertools.pairwise(ys):
                if any(r[0] <= xa and xb <= r[2] and r[1] <= ya and yb <= r[3] for r in rects):
                    area += (xb - xa) * (yb - ya)
        return Instance(prompt, str(area), {"rects": rects, "size": n})

    def solve_int(self, problem: Problem) -> int:
        cells: set[tuple[int, int]] = set()
        for x1, y1, x2, y2 in problem.data["rects"]:
            cells |= {(x, y) for x in range(x1, x2) for y in range(y1, y2)}
        return len(cells)


@ENVIRONMENTS.register("manhattan_meeting_point")
class ManhattanMeetingPoint(SizedInteger):
    """The least total Manhattan distance from one integer point to all given points."""

    tags = TAGS
    difficulty_scales = "5 + 2d points with coordinates in [-(10 + 5d), 10 + 5d]"
    size_measure = "number of points"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = 5 + 2 * difficulty, 10 + 5 * difficulty
        pts = [[rng.randint(-top, top), rng.randint(-top, top)] for _ in range(n)]
        prompt = (
            f"Friends live at the points {', '.join(f'({x}, {y})' for x, y in pts)}. They meet "
            "at one point with integer coordinates, and each walks along the grid (the "
            "distance from (a, b) to (c, d) is |a - c| + |b - d|). What is the smallest "
            "possible total walking distance?"
        )
        xs, ys = sorted(p[0] for p in pts), sorted(p[1] for p in pts)
        mx, my = xs[n // 2], ys[n // 2]
        answer = sum(abs(x - mx) for x in xs) + sum(abs(y - my) for y in ys)
        return Instance(prompt, str(answer), {"pts": pts, "size": n})

    def solve_int(self, problem: Problem) -> int:
        pts = problem.data["pts"]
        total = 0
        for axis in (0, 1):  # the objective separates by axis: scan every coordinate
            vals = [p[axis] for p in pts]
            total += min(sum(abs(v - c) for v in vals) for c in range(min(vals), max(vals) + 1))
        return total


@ENVIRONMENTS.register("closest_pair_distance")
class ClosestPairDistance(SizedInteger):
    """The smallest squared Euclidean distance between two of the given points."""

    tags = TAGS
    difficulty_scales = "6 + 3d distinct points with coordinates in [0, 30 + 10d]"
    size_measure = "number of points"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = 6 + 3 * difficulty, 30 + 10 * difficulty
        pts: list[list[int]] = []
        while len(pts) < n:
            p = [rng.randint(0, top), rng.randint(0, top)]
            if p not in pts:
                pts.append(p)
        prompt = (
            f"You are given {n} points: {', '.join(f'({x}, {y})' for x, y in pts)}. What is the "
            "smallest squared Euclidean distance (dx² + dy²) between two different points?"
        )
        answer = min(
            (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2 for a, b in itertools.combinations(pts, 2)
        )
        return Instance(prompt, str(answer), {"pts": pts, "size": n})

    def solve_int(self, problem: Problem) -> int:
        """Sweep by x, comparing each point only with earlier points within the best width."""
        pts = sorted(tuple(p) for p in problem.data["pts"])
        best = None
        for i, (x, y) in enumerate(pts):
            for j in range(i - 1, -1, -1):
                dx = x - pts[j][0]
                if best is not None and dx * dx >= best:
                    break
                d = dx * dx + (y - pts[j][1]) ** 2
                best = d if best is None else min(best, d)
        assert best is not None
        return best


@ENVIRONMENTS.register("collinear_triples")
class CollinearTriples(SizedInteger):
    """Unordered triples of the given points that lie on one straight line."""

    tags = TAGS
    max_difficulty = 50  # the generator tries every triple
    difficulty_scales = "6 + 2d distinct points in a [0, 4 + d//2]² box"
    size_measure = "number of points"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = 6 + 2 * difficulty, 4 + difficulty // 2
        n = min(n, (top + 1) ** 2 - 2)
        pts: list[list[int]] = []
        while len(pts) < n:
            p = [rng.randint(0, top), rng.randint(0, top)]
            if p not in pts:
                pts.append(p)
        prompt = (
            f"You are given {n} points: {', '.join(f'({x}, {y})' for x, y in pts)}. How many "
            "unordered triples of these points lie on one straight line?"
        )
        answer = sum(
            (b[0] - a[0]) * (c[1] - a[1]) == (b[1] - a[1]) * (c[0] - a[0])
            for a, b, c in itertools.combinations(pts, 3)
        )
        return Instance(prompt, str(answer), {"pts": pts, "size": n})

    def solve_int(self, problem: Problem) -> int:
        """For each point, group the others by reduced direction (up to sign); a triple is
        seen once from each of its three points."""
        pts = problem.data["pts"]
        total = 0
        for i, (x, y) in enumerate(pts):
            dirs: Counter[tuple[int, int]] = Counter()
            for j, (u, v) in enumerate(pts):
                if i != j:
                    dx, dy = u - x, v - y
                    g = math.gcd(dx, dy)
                    dx, dy = dx // g, dy // g
                    if dx < 0 or (dx == 0 and dy < 0):
                        dx, dy = -dx, -dy
                    dirs[(dx, dy)] += 1
            total += sum(k * (k - 1) // 2 for k in dirs.values())
        return total // 3
