"""Counting on grids and point sets: non-attacking kings, lattice squares, divisible and
all-ones submatrices, the total area of all triangles.

RLVE-Gym rows RoyalLockCounting, SquareUndamagedPointCounting, SubmatrixSumDivisibleCounting,
UndamagedSubmatrixCounting and SumTriangleArea (Zeng et al. 2025, "RLVE: Scaling Up
Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A). Every answer is a count scored with (min/max)^10; the generator
and the verifier's solver count in two different ways (row-mask DP against a cell-by-cell
profile DP, enumeration by side vector against enumeration by diagonal, brute force over all
rectangles against prefix residues or histograms, all triples against an angular sweep).
"""

from __future__ import annotations

import functools
import math
import random

from verirl.envs.base import ENVIRONMENTS, Instance, IntegerAnswer
from verirl.envs.kit.grids import grid_lines
from verirl.types import Problem

TAGS = ("rlve", "counting")


class _GridCount(IntegerAnswer):
    tags = TAGS
    size_measure = "cells of the grid (or points of the set)"

    def size(self, problem: Problem) -> float:
        d = problem.data
        if "matrix" in d:
            return float(len(d["matrix"]) * len(d["matrix"][0]))
        if "points" in d:
            return float(len(d["points"]))
        return float((d["n"] + 1) * (d.get("m", d["n"]) + 1))


@ENVIRONMENTS.register("royal_lock_counting")
class RoyalLockCounting(_GridCount):
    """Placements of K mutually non-attacking kings on an N × N board."""

    difficulty_scales = "board side N = 3 + d//4 (at most 7); K uniform in 1..⌈N/2⌉²"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(7, 3 + difficulty // 4)
        k = rng.randint(1, ((n + 1) // 2) ** 2)
        masks = [s for s in range(1 << n) if not s & (s << 1)]
        ways = {(s, bin(s).count("1")): 1 for s in masks if bin(s).count("1") <= k}
        for _ in range(n - 1):  # rows: no king next to another, nor diagonally above
            nxt: dict[tuple[int, int], int] = {}
            for (s, c), w in ways.items():
                for t in masks:
                    total = c + bin(t).count("1")
                    if total <= k and not (t & s or t & (s << 1) or t & (s >> 1)):
                        nxt[(t, total)] = nxt.get((t, total), 0) + w
            ways = nxt
        count = sum(w for (_, c), w in ways.items() if c == k)
        plural = "king" if k == 1 else "kings"
        prompt = (
            f"On a {n} × {n} chessboard, you are to place {k} {plural} such that no two kings "
            "attack each other (a king attacks the up to 8 squares next to it horizontally, "
            "vertically and diagonally). How many different placements are there? Kings are "
            "identical: two placements differ when the sets of occupied squares differ."
        )
        return Instance(prompt, str(count), {"n": n, "k": k})

    def solve_int(self, problem: Problem) -> int:
        """Cell-by-cell profile DP: the state holds the last N + 1 cells (row-major)."""
        n, k = problem.data["n"], problem.data["k"]
        states = {(0, 0): 1}
        full = (1 << (n + 1)) - 1
        for cell in range(n * n):
            c = cell % n
            nxt: dict[tuple[int, int], int] = {}
            for (prof, used), w in states.items():
                # bit t is the cell t + 1 places back: 0 left, n-2 above-right, n-1 above,
                # n above-left
                keep = ((prof << 1) & full, used)
                nxt[keep] = nxt.get(keep, 0) + w
                left = c > 0 and prof & 1
                up_left = c > 0 and prof >> n & 1
                up = prof >> (n - 1) & 1
                up_right = c < n - 1 and prof >> (n - 2) & 1
                if used < k and not (left or up_left or up or up_right):
                    put = (((prof << 1) | 1) & full, used + 1)
                    nxt[put] = nxt.get(put, 0) + w
            states = nxt
        return sum(w for (_, used), w in states.items() if used == k)

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"] ** 2)

    def problem_space(self, difficulty: int) -> int | None:
        return min(10**9, ((min(7, 3 + difficulty // 4) + 1) // 2) ** 2)


@ENVIRONMENTS.register("square_undamaged_point_counting")
class SquareUndamagedPointCounting(_GridCount):
    """Squares of any orientation with all four corners on undamaged lattice points."""

    difficulty_scales = "grid (N+1) × (M+1) points, N, M in 2..2 + d//3; 0..(N+1)(M+1)//4 damaged"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = (rng.randint(2, 2 + difficulty // 3) for _ in range(2))
        cells = [(x, y) for x in range(n + 1) for y in range(m + 1)]
        damaged = sorted(rng.sample(cells, rng.randint(0, len(cells) // 4)))
        bad = {tuple(p) for p in damaged}
        ok = {p for p in cells if p not in bad}
        count = 0
        for x, y in ok:  # each square once: by its side vector (a, b) with a > 0, b ≥ 0
            for a in range(1, max(n, m) + 1):
                for b in range(0, max(n, m) + 1):
                    corners = ((x + a, y + b), (x + a - b, y + b + a), (x - b, y + a))
                    if all(c in ok for c in corners):
                        count += 1
        listing = ", ".join(f"({x}, {y})" for x, y in damaged) or "none"
        prompt = (
            f"Consider the lattice points (x, y) with integers 0 ≤ x ≤ {n} and 0 ≤ y ≤ {m}. The "
            f"following points are damaged: {listing}. Count the distinct squares (not "
            "necessarily axis-aligned, of positive area) whose four corners are all undamaged "
            "lattice points of this grid."
        )
        return Instance(prompt, str(count), {"n": n, "m": m, "damaged": [list(p) for p in damaged]})

    def solve_int(self, problem: Problem) -> int:
        """By diagonals: the other two corners of a square with diagonal (p, q); each square
        has two diagonals."""
        n, m = problem.data["n"], problem.data["m"]
        bad = {tuple(p) for p in problem.data["damaged"]}
        ok = [(x, y) for x in range(n + 1) for y in range(m + 1) if (x, y) not in bad]
        good = set(ok)
        twice = 0
        for i, (x1, y1) in enumerate(ok):
            for x2, y2 in ok[i + 1 :]:
                sx, sy, dx, dy = x1 + x2, y1 + y2, x2 - x1, y2 - y1
                # corners: centre ± half the diagonal turned by 90°, doubled to stay integral
                ax, ay, bx, by = sx - dy, sy + dx, sx + dy, sy - dx
                if ax % 2 or ay % 2:
                    continue
                if (ax // 2, ay // 2) in good and (bx // 2, by // 2) in good:
                    twice += 1
        return twice // 2

    def problem_space(self, difficulty: int) -> int | None:
        top = 2 + difficulty // 3
        total = 0
        for n in range(2, top + 1):
            for m in range(2, top + 1):
                cells = (n + 1) * (m + 1)
                total += sum(math.comb(cells, j) for j in range(cells // 4 + 1))
        return min(10**9, total)


@ENVIRONMENTS.register("submatrix_sum_divisible_counting")
class SubmatrixSumDivisibleCounting(_GridCount):
    """Submatrices whose element sum is divisible by K."""

    difficulty_scales = "N, M in 2..3 + d//2 (at most 18); K in 2..3 + d//3; entries 0..9"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = (rng.randint(2, min(18, 3 + difficulty // 2)) for _ in range(2))
        k = rng.randint(2, 3 + difficulty // 3)
        mat = [[rng.randint(0, 9) for _ in range(m)] for _ in range(n)]
        pre = [[0] * (m + 1) for _ in range(n + 1)]
        for i in range(n):
            for j in range(m):
                pre[i + 1][j + 1] = mat[i][j] + pre[i][j + 1] + pre[i + 1][j] - pre[i][j]
        count = sum(
            1
            for r1 in range(n)
            for r2 in range(r1 + 1, n + 1)
            for c1 in range(m)
            for c2 in range(c1 + 1, m + 1)
            if (pre[r2][c2] - pre[r1][c2] - pre[r2][c1] + pre[r1][c1]) % k == 0
        )
        prompt = (
            f"You are given a matrix of size {n} × {m}:\n{grid_lines(mat)}\n\nCount the "
            "non-empty submatrices (choices of a contiguous range of rows and a contiguous range "
            f"of columns) whose elements sum to a multiple of {k}."
        )
        return Instance(prompt, str(count), {"matrix": mat, "k": k})

    def solve_int(self, problem: Problem) -> int:
        mat, k = problem.data["matrix"], problem.data["k"]
        n, m = len(mat), len(mat[0])
        count = 0
        for r1 in range(n):
            cols = [0] * m
            for r2 in range(r1, n):
                for j in range(m):
                    cols[j] += mat[r2][j]
                seen, run = {0: 1}, 0  # equal prefix residues bound a divisible range
                for j in range(m):
                    run = (run + cols[j]) % k
                    count += seen.get(run, 0)
                    seen[run] = seen.get(run, 0) + 1
        return count


@ENVIRONMENTS.register("undamaged_submatrix_counting")
class UndamagedSubmatrixCounting(_GridCount):
    """Submatrices made only of 1s in a 0/1 matrix."""

    difficulty_scales = "N, M in 2..4 + d//2 (at most 18); about one cell in four is 0"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = (rng.randint(2, min(18, 4 + difficulty // 2)) for _ in range(2))
        mat = [[int(rng.random() > 0.25) for _ in range(m)] for _ in range(n)]
        pre = [[0] * (m + 1) for _ in range(n + 1)]
        for i in range(n):
            for j in range(m):
                pre[i + 1][j + 1] = mat[i][j] + pre[i][j + 1] + pre[i + 1][j] - pre[i][j]
        count = sum(
            1
            for r1 in range(n)
            for r2 in range(r1 + 1, n + 1)
            for c1 in range(m)
            for c2 in range(c1 + 1, m + 1)
            if pre[r2][c2] - pre[r1][c2] - pre[r2][c1] + pre[r1][c1] == (r2 - r1) * (c2 - c1)
        )
        prompt = (
            f"You are given a matrix of size {n} × {m}, where each element is either 0 or 1:\n"
            f"{grid_lines(mat)}\n\nCount the non-empty submatrices (choices of a contiguous "
            "range of rows and a contiguous range of columns) that contain only 1s."
        )
        return Instance(prompt, str(count), {"matrix": mat})

    def solve_int(self, problem: Problem) -> int:
        """Per bottom row: column heights of 1s, then for each right column the rectangles
        ending there, extending left while the minimum height allows."""
        mat = problem.data["matrix"]
        m = len(mat[0])
        height = [0] * m
        count = 0
        for row in mat:
            height = [h + 1 if v else 0 for h, v in zip(height, row, strict=True)]
            for right in range(m):
                low = height[right]
                for left in range(right, -1, -1):
                    low = min(low, height[left])
                    if low == 0:
                        break
                    count += low
        return count


@ENVIRONMENTS.register("sum_triangle_area")
class SumTriangleArea(_GridCount):
    """Twice the total area of all triangles with corners among N points."""

    difficulty_scales = "N = 4 + d points with coordinates in 0..10 + 2d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = 4 + difficulty, 10 + 2 * difficulty
        points: list[list[int]] = []
        while len(points) < n:
            p = [rng.randint(0, top), rng.randint(0, top)]
            if p not in points:
                points.append(p)
        total = 0
        for i in range(n):
            for j in range(i + 1, n):
                for k in range(j + 1, n):
                    (ax, ay), (bx, by), (cx, cy) = points[i], points[j], points[k]
                    total += abs((bx - ax) * (cy - ay) - (by - ay) * (cx - ax))
        listing = "\n".join(f"({x}, {y})" for x, y in points)
        prompt = (
            f"There are {n} distinct points in the plane:\n{listing}\n\nFor every choice of three "
            "of these points, take the area of the triangle they form (0 when they are "
            "collinear). Compute twice the sum of these areas over all choices (an integer)."
        )
        return Instance(prompt, str(total), {"points": points})

    def solve_int(self, problem: Problem) -> int:
        """Angular sweep: with the lowest corner as pivot, the later corners sorted by angle
        make every cross product non-negative, so Σ_{j<k} cross(v_j, v_k) is a prefix sum."""
        pts = sorted(map(tuple, problem.data["points"]), key=lambda p: (p[1], p[0]))
        total = 0
        for i, (px, py) in enumerate(pts):
            vecs = [(x - px, y - py) for x, y in pts[i + 1 :]]

            def by_angle(u: tuple[int, int], v: tuple[int, int]) -> int:
                cross = u[0] * v[1] - u[1] * v[0]
                return -1 if cross > 0 else (1 if cross < 0 else 0)

            vecs.sort(key=functools.cmp_to_key(by_angle))
            sx = sy = 0
            for x, y in vecs:  # Σ_{j<k} (x_j y_k − y_j x_k)
                total += sx * y - sy * x
                sx, sy = sx + x, sy + y
        return total
