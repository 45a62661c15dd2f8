"""Exact linear algebra over the integers and GF(2): determinants, ranks over GF(2), a
linear system with a unique integer solution, spanning trees by the matrix-tree theorem, and
traces of matrix powers (closed walks).

Rows in the spirit of RLVE-Gym's matrix tasks (Zeng et al. 2025, "RLVE: Scaling Up
Reinforcement Learning for Language Models with Adaptive Verifiable Environments",
arXiv:2511.07317, Appendix A: GaussianElimination, Matrix_BinaryExponentiation,
MinimumSpanningTreeCounting). Generators use fraction-free elimination (Bareiss) or
repeated squaring; ``solve`` uses cofactor expansion, rational elimination, brute-force
enumeration or plain repeated multiplication, so the contract tests cross-check them. The
linear system's verifier substitutes the answer into the equations.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    invalid,
    parse_int_list,
    satisfied_verdict,
)
from verirl.envs.kit.answers import SizedInteger
from verirl.envs.kit.linear_algebra import (
    Matrix,
    bareiss_determinant,
    laplacian_minor,
    rational_determinant,
)
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict

TAGS = ("matrices", "linear_algebra")


def _det_cofactor(m: Matrix) -> int:
    if len(m) == 1:
        return m[0][0]
    return sum(
        (-1) ** j * m[0][j] * _det_cofactor([row[:j] + row[j + 1 :] for row in m[1:]])
        for j in range(len(m))
        if m[0][j]
    )


def _matrix_text(m: Matrix) -> str:
    return "\n".join(" ".join(f"{x:>3}" for x in row) for row in m)


@ENVIRONMENTS.register("matrix_determinant")
class MatrixDeterminant(SizedInteger):
    """The determinant of an integer matrix."""

    tags = TAGS
    difficulty_scales = "n = min(9, 2 + d//3); entries in [-(3 + d), 3 + d]"
    size_measure = "matrix side n times the entry bound"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = min(9, 2 + difficulty // 3), 3 + difficulty
        m = [[rng.randint(-top, top) for _ in range(n)] for _ in range(n)]
        prompt = (
            f"Compute the determinant of the following {n} × {n} integer matrix (one row per "
            f"line):\n{_matrix_text(m)}"
        )
        return Instance(prompt, str(bareiss_determinant(m)), {"m": m, "size": n * top})

    def solve_int(self, problem: Problem) -> int:
        m = problem.data["m"]
        return _det_cofactor(m) if len(m) <= 5 else rational_determinant(m)


def _gf2_rank_rows(rows: list[int]) -> int:
    basis: list[int] = []
    for r in rows:
        for b in basis:
            r = min(r, r ^ b)
        if r:
            basis.append(r)
    return len(basis)


@ENVIRONMENTS.register("gf2_matrix_rank")
class Gf2MatrixRank(SizedInteger):
    """The rank over GF(2) (arithmetic modulo 2) of a 0/1 matrix."""

    tags = TAGS
    difficulty_scales = "rows 3 + d//2, columns 3 + d//2 .. 5 + d//2; planted dependencies"
    size_measure = "number of entries"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        r = 3 + difficulty // 2
        c = r + rng.randint(0, 2)
        basis = [rng.randrange(1, 1 << c) for _ in range(rng.randint(max(1, r - 3), r))]
        rows = []
        for _ in range(r):
            v = 0
            for b in basis:
                if rng.random() < 0.5:
                    v ^= b
            rows.append(v)
        m = [[v >> (c - 1 - j) & 1 for j in range(c)] for v in rows]
        prompt = (
            f"What is the rank over GF(2) (all arithmetic modulo 2) of this {r} × {c} matrix "
            f"(one row per line)?\n" + "\n".join(" ".join(map(str, row)) for row in m)
        )
        return Instance(prompt, str(_gf2_rank_rows(rows)), {"m": m, "size": r * c})

    def solve_int(self, problem: Problem) -> int:
        """The column rank: eliminate on the columns; for small matrices, log2 of the size of
        the row space, enumerated."""
        m = problem.data["m"]
        rows = [int("".join(map(str, row)), 2) for row in m]
        if len(rows) <= 12:
            span = {0}
            for r in rows:
                span |= {s ^ r for s in span}
            return len(span).bit_length() - 1
        cols = [int("".join(str(row[j]) for row in m), 2) for j in range(len(m[0]))]
        rank = 0
        pivots: dict[int, int] = {}
        for v in cols:
            while v:
                top = v.bit_length() - 1
                if top not in pivots:
                    pivots[top] = v
                    rank += 1
                    break
                v ^= pivots[top]
        return rank


@ENVIRONMENTS.register("gaussian_elimination")
class GaussianElimination(Environment):
    """A square integer linear system with a unique integer solution: give the unknowns.
    The verifier substitutes the answer; partial credit (equations satisfied / all)^5."""

    tags = TAGS
    answer_kind = "integer_list"
    max_difficulty = 40
    difficulty_scales = "n = min(9, 2 + d//3) unknowns; coefficients in [-(2 + d//2), 2 + d//2]"
    size_measure = "number of unknowns times the coefficient bound"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, top = min(9, 2 + difficulty // 3), 2 + difficulty // 2
        while True:
            a = [[rng.randint(-top, top) for _ in range(n)] for _ in range(n)]
            if bareiss_determinant(a):
                break
        x = [rng.randint(-5 - difficulty, 5 + difficulty) for _ in range(n)]
        b = [sum(c * v for c, v in zip(row, x, strict=True)) for row in a]
        lines = []
        for row, rhs in zip(a, b, strict=True):
            terms = " ".join(
                f"{'-' if c < 0 else '+'} {abs(c)}·x{j + 1}" for j, c in enumerate(row) if c
            ).lstrip("+ ")
            lines.append(f"{terms or '0'} = {rhs}")
        names = ", ".join(f"x{j + 1}" for j in range(n))
        prompt = (
            f"Solve the following system of linear equations in the unknowns {names}; it has "
            "exactly one solution, and it is in integers:\n" + "\n".join(lines) + "\n"
            f"Give the values of {names} in this order, separated by commas."
        )
        return Instance(prompt, ", ".join(map(str, x)), {"a": a, "b": b, "size": n * top})

    def _names(self, problem: Problem) -> tuple[str, ...]:
        return tuple(f"x{j + 1}" for j in range(len(problem.data["a"])))

    def check(self, problem: Problem, answer: str) -> Verdict:
        a, b = problem.data["a"], problem.data["b"]
        got = parse_int_list(answer, self._names(problem))
        if len(got) != len(a):
            return invalid(f"give exactly {len(a)} values")
        good = sum(
            sum(c * v for c, v in zip(row, got, strict=True)) == rhs
            for row, rhs in zip(a, b, strict=True)
        )
        return satisfied_verdict(good, len(a), "equations do not hold")

    def solve(self, problem: Problem) -> str:
        """Cramer's rule with rational determinants."""
        a, b = problem.data["a"], problem.data["b"]
        det = rational_determinant(a)
        out = []
        for j in range(len(a)):
            aj = [[*row[:j], rhs, *row[j + 1 :]] for row, rhs in zip(a, b, strict=True)]
            out.append(str(Fraction(rational_determinant(aj), det)))
        return ", ".join(out)

    def surface_forms(self, problem: Problem) -> list[str]:
        values = self.solve(problem).split(", ")
        named = ", ".join(f"{n} = {v}" for n, v in zip(self._names(problem), values, strict=True))
        return [*normalize.list_forms(values, ordered=True), named]

    def size(self, problem: Problem) -> float:
        return float(problem.data["size"])


def _random_connected_graph(n: int, rng: random.Random, extra: float) -> list[tuple[int, int]]:
    order = list(range(n))
    rng.shuffle(order)
    edges = {tuple(sorted((order[i], order[rng.randrange(i)]))) for i in range(1, n)}
    for u, v in itertools.combinations(range(n), 2):
        if rng.random() < extra:
            edges.add((u, v))
    return sorted(edges)  # type: ignore[arg-type]


@ENVIRONMENTS.register("spanning_tree_count")
class SpanningTreeCount(SizedInteger):
    """The number of spanning trees of a graph (Kirchhoff's matrix-tree theorem)."""

    tags = (*TAGS, "graphs")
    difficulty_scales = "n = min(14, 5 + d//2) vertices; extra edges with probability 0.2-0.5"
    size_measure = "number of edges"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(14, 5 + difficulty // 2)
        edges = [list(e) for e in _random_connected_graph(n, rng, rng.choice([0.2, 0.35, 0.5]))]
        listing = ", ".join(f"({u}, {v})" for u, v in edges)
        prompt = (
            f"An undirected graph has {n} vertices labelled 0 to {n - 1} and these "
            f"{len(edges)} edges: {listing}. How many spanning trees does it have (subsets of "
            f"{n - 1} edges that connect all vertices without a cycle)?"
        )
        answer = bareiss_determinant(laplacian_minor(n, edges))
        return Instance(prompt, str(answer), {"n": n, "edges": edges, "size": len(edges)})

    def solve_int(self, problem: Problem) -> int:
        n, edges = problem.data["n"], problem.data["edges"]
        if math.comb(len(edges), n - 1) > 30_000:
            return rational_determinant(laplacian_minor(n, edges))
        count = 0
        for subset in itertools.combinations(edges, n - 1):
            parent = list(range(n))

            def find(x: int, parent: list[int] = parent) -> int:
                while parent[x] != x:
                    parent[x] = parent[parent[x]]
                    x = parent[x]
                return x

            ok = True
            for u, v in subset:
                ru, rv = find(u), find(v)
                if ru == rv:
                    ok = False
                    break
                parent[ru] = rv
            count += ok
        return count


def _mat_mul(a: Matrix, b: Matrix) -> Matrix:
    return [
        [sum(x * y for x, y in zip(row, col, strict=True)) for col in zip(*b, strict=True)]
        for row in a
    ]


@ENVIRONMENTS.register("matrix_power_trace")
class MatrixPowerTrace(SizedInteger):
    """trace(A^k) for a small integer matrix A."""

    tags = TAGS
    difficulty_scales = "n = min(6, 2 + d//5); k = 2 + d; entries in [-2, 3]"
    size_measure = "matrix side times the exponent"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, k = min(6, 2 + difficulty // 5), 2 + difficulty
        a = [[rng.randint(-2, 3) for _ in range(n)] for _ in range(n)]
        prompt = (
            f"Let A be the {n} × {n} integer matrix below (one row per line). What is the "
            f"trace (the sum of the diagonal entries) of A^{k}, the {k}-th power of A?\n"
            f"{_matrix_text(a)}"
        )
        result = [[int(i == j) for j in range(n)] for i in range(n)]
        base, e = a, k
        while e:
            if e & 1:
                result = _mat_mul(result, base)
            base, e = _mat_mul(base, base), e >> 1
        answer = sum(result[i][i] for i in range(n))
        return Instance(prompt, str(answer), {"a": a, "k": k, "size": n * k})

    def solve_int(self, problem: Problem) -> int:
        """Σ_i (A^k)_{ii} by k - 1 plain multiplications of the vector e_i (closed walks)."""
        a, k = problem.data["a"], problem.data["k"]
        n, total = len(a), 0
        for i in range(n):
            vec = [int(j == i) for j in range(n)]
            for _ in range(k):
                vec = [sum(a[r][c] * vec[c] for c in range(n)) for r in range(n)]
            total += vec[i]
        return total
