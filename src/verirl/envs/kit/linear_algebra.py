"""Exact linear algebra environment families share: integer determinants (Bareiss, and by
fractions as a cross-check) and the graph Laplacian minor of Kirchhoff's theorem."""

from __future__ import annotations

from fractions import Fraction

Matrix = list[list[int]]


def bareiss_determinant(m: Matrix) -> int:
    """Fraction-free Gaussian elimination (Bareiss 1968): exact integer determinant."""
    a = [row[:] for row in m]
    n, sign, prev = len(a), 1, 1
    for k in range(n - 1):
        if a[k][k] == 0:
            swap = next((i for i in range(k + 1, n) if a[i][k]), None)
            if swap is None:
                return 0
            a[k], a[swap] = a[swap], a[k]
            sign = -sign
        for i in range(k + 1, n):
            for j in range(k + 1, n):
                a[i][j] = (a[i][j] * a[k][k] - a[i][k] * a[k][j]) // prev
        prev = a[k][k]
    return sign * a[n - 1][n - 1] if n else 1


def rational_determinant(m: Matrix) -> int:
    a = [[Fraction(x) for x in row] for row in m]
    n, det = len(a), Fraction(1)
    for k in range(n):
        pivot = next((i for i in range(k, n) if a[i][k] != 0), None)
        if pivot is None:
            return 0
        if pivot != k:
            a[k], a[pivot] = a[pivot], a[k]
            det = -det
        det *= a[k][k]
        for i in range(k + 1, n):
            f = a[i][k] / a[k][k]
            for j in range(k, n):
                a[i][j] -= f * a[k][j]
    assert det.denominator == 1
    return int(det)


def laplacian_minor(n: int, edges: list[list[int]]) -> Matrix:
    """The graph Laplacian without its first row and column (Kirchhoff: its determinant
    counts the spanning trees)."""
    lap = [[0] * n for _ in range(n)]
    for u, v in edges:
        lap[u][u] += 1
        lap[v][v] += 1
        lap[u][v] -= 1
        lap[v][u] -= 1
    return [row[1:] for row in lap[1:]]
