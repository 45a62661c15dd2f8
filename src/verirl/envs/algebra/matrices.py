"""Matrices: max pooling, a matrix power modulo m, permuting rows and columns of 0/1
matrices (ones on the diagonal, or onto another matrix), and the smoothest submatrix.

Rows MatrixPooling, Matrix_BinaryExponentiation, MatrixPermutation_MainDiagonalOne,
MatrixPermutationEquivalence and MinimumSumDifferenceSubmatrix of the RLVE catalogue (Zeng
et al., *RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive Verifiable
Environments*, arXiv:2511.07317). Computed matrices earn the cell-wise match rate^5; for the
permutation tasks any permutation meeting the target is accepted (they are planted) and partial
credit is the share of target cells met, ^5. A matrix is written row by row, rows separated by
semicolons or new lines (``\\\\`` as in LaTeX also works), entries by spaces or commas.
"""

from __future__ import annotations

import itertools
import random

import networkx as nx

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    optimum_verdict,
    parse_int_list,
    satisfied_reward,
)
from verirl.envs.kit.grids import grid_lines, matrix_text, parse_matrix
from verirl.envs.kit.size_ladder import grown
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict

TAGS = ("rlve", "matrices")


def _count(k: int, noun: str) -> str:
    return f"{k} {noun}" + ("" if k == 1 else "s")


class _MatrixEnv(Environment):
    tags = TAGS
    size_measure = "cells of the input matrix"

    def size(self, problem: Problem) -> float:
        m = problem.data["matrix"]
        return float(len(m) * len(m[0]))


class _ComputedMatrix(_MatrixEnv):
    """The answer is one matrix; reward = share of cells equal to the reference, ^5."""

    def reference(self, problem: Problem) -> list[list[int]]:
        raise NotImplementedError

    def surface_forms(self, problem: Problem) -> list[str]:
        solution = self.solve(problem)
        rows = [r.split() for r in solution.split("; ")]
        return [
            solution,
            "\n".join(" ".join(r) for r in rows),
            " \\\\ ".join(" & ".join(r) for r in rows),
            "[" + ", ".join("[" + ", ".join(r) + "]" for r in rows) + "]",
            "\\begin{pmatrix}" + " \\\\ ".join(" & ".join(r) for r in rows) + "\\end{pmatrix}",
        ]

    def check(self, problem: Problem, answer: str) -> Verdict:
        got = parse_matrix(answer)
        gold = self.reference(problem)
        if len(got) != len(gold) or any(len(a) != len(b) for a, b in zip(got, gold, strict=True)):
            return invalid(f"the result is a {len(gold)} × {len(gold[0])} matrix")
        cells = len(gold) * len(gold[0])
        hits = sum(
            a == b for ra, rb in zip(got, gold, strict=True) for a, b in zip(ra, rb, strict=True)
        )
        return graded((hits / cells) ** 5, hits == cells, f"{cells - hits} entries are not right")


@ENVIRONMENTS.register("matrix_pooling")
class MatrixPooling(_ComputedMatrix):
    """Max pooling with a K × K window and stride 1."""

    difficulty_scales = "N, M up to 4 then int(1.1·x + 1) per level (at most 30); K in 2..min(N, M)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = grown(4, difficulty, 30)
        n, m = rng.randint(2, top), rng.randint(2, top)
        k = rng.randint(2, min(n, m, 2 + difficulty // 4))
        matrix = [[rng.randint(0, 9 + difficulty) for _ in range(m)] for _ in range(n)]
        prompt = (
            f"You are given a matrix of size {n} × {m}:\n{grid_lines(matrix)}\n\nPerform a max "
            f"pooling operation with a kernel size of {k} × {k} and stride 1: the result has "
            f"{_count(n - k + 1, 'row')} and {_count(m - k + 1, 'column')}, and its entry "
            f"(i, j) is the maximum of the {k} × {k} block whose top-left corner is (i, j). "
            "Output the result row by row, rows separated by semicolons and entries by spaces."
        )
        data = {"matrix": matrix, "k": k}
        return Instance(prompt, matrix_text(self._pool(matrix, k)), data)

    @staticmethod
    def _pool(matrix: list[list[int]], k: int) -> list[list[int]]:
        rows = [[max(r[j : j + k]) for j in range(len(r) - k + 1)] for r in matrix]
        return [
            [max(rows[i + a][j] for a in range(k)) for j in range(len(rows[0]))]
            for i in range(len(rows) - k + 1)
        ]

    def reference(self, problem: Problem) -> list[list[int]]:
        return self._pool(problem.data["matrix"], problem.data["k"])

    def solve(self, problem: Problem) -> str:
        matrix, k = problem.data["matrix"], problem.data["k"]
        out = [
            [
                max(matrix[i + a][j + b] for a in range(k) for b in range(k))
                for j in range(len(matrix[0]) - k + 1)
            ]
            for i in range(len(matrix) - k + 1)
        ]
        return matrix_text(out)


def _mat_mul(a: list[list[int]], b: list[list[int]], mod: int) -> list[list[int]]:
    return [
        [sum(x * y for x, y in zip(row, col, strict=True)) % mod for col in zip(*b, strict=True)]
        for row in a
    ]


@ENVIRONMENTS.register("matrix_binary_exponentiation")
class MatrixBinaryExponentiation(_ComputedMatrix):
    """A^K modulo 10000 for a small square matrix."""

    difficulty_scales = "K up to 2·2^d; N in {2, 3, 5, 10} (10 from d 4)"
    modulus = 10_000

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = rng.choice([2, 3, 5, 10] if difficulty >= 4 else [2, 3])
        k = rng.randint(2, 2 * 2**difficulty)
        matrix = [[rng.randint(0, 9) for _ in range(n)] for _ in range(n)]
        prompt = (
            "We use the integer in the i-th row and j-th column to represent the element "
            f"A[i][j] of a matrix. Here is the {n} × {n} matrix A:\n{grid_lines(matrix)}\n\n"
            f"Compute A^{k} (the matrix product of {k} copies of A) with every entry taken "
            f"modulo {self.modulus}. Output the result row by row, rows separated by semicolons "
            "and entries by spaces."
        )
        data = {"matrix": matrix, "k": k}
        return Instance(prompt, matrix_text(self.reference_of(matrix, k)), data)

    def reference_of(self, matrix: list[list[int]], k: int) -> list[list[int]]:
        n = len(matrix)
        result = [[int(i == j) for j in range(n)] for i in range(n)]
        base = matrix
        while k:
            if k & 1:
                result = _mat_mul(result, base, self.modulus)
            base = _mat_mul(base, base, self.modulus)
            k >>= 1
        return result

    def reference(self, problem: Problem) -> list[list[int]]:
        return self.reference_of(problem.data["matrix"], problem.data["k"])

    def solve(self, problem: Problem) -> str:
        # Independent: square-and-multiply from the most significant bit, recursively.
        matrix, mod = problem.data["matrix"], self.modulus

        def power(e: int) -> list[list[int]]:
            if e == 1:
                return [[x % mod for x in row] for row in matrix]
            half = power(e // 2)
            sq = _mat_mul(half, half, mod)
            return _mat_mul(sq, matrix, mod) if e % 2 else sq

        return matrix_text(power(problem.data["k"]))

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["matrix"]) ** 2 * problem.data["k"].bit_length())


# ---- permutations of 0/1 matrices --------------------------------------------------------
def _perm(text: str, n: int) -> list[int] | None:
    values = parse_int_list(text)
    return values if sorted(values) == list(range(n)) else None


def _noisy_binary(rng: random.Random, n: int, m: int, density: float) -> list[list[int]]:
    return [[int(rng.random() < density) for _ in range(m)] for _ in range(n)]


@ENVIRONMENTS.register("matrix_permutation_main_diagonal_one")
class MatrixPermutationMainDiagonalOne(_MatrixEnv):
    """Reorder the rows of a 0/1 matrix so that the main diagonal is all ones (a perfect
    matching is planted); (ones on the diagonal/N)^5 credit."""

    difficulty_scales = "N = 3 + d; noise density 0.3"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty
        matrix = _noisy_binary(rng, n, n, 0.3)
        sigma = rng.sample(range(n), n)
        for i in range(n):
            matrix[sigma[i]][i] = 1  # new row i = old row sigma[i] has a one in column i
        prompt = (
            f"You are given a square matrix of size {n} × {n}, where each element is either 0 "
            f"or 1 (rows and columns numbered from 0):\n{grid_lines(matrix)}\n\nFind a "
            f"permutation P of 0..{n - 1} such that after reordering the rows (the new row i is "
            "the old row P[i]), every entry on the main diagonal is 1. Output P[0], ..., "
            f"P[{n - 1}] separated by spaces."
        )
        return Instance(prompt, " ".join(map(str, sigma)), {"matrix": matrix})

    def check(self, problem: Problem, answer: str) -> Verdict:
        matrix = problem.data["matrix"]
        n = len(matrix)
        p = _perm(answer, n)
        if p is None:
            return invalid(f"P must be a permutation of 0..{n - 1}")
        good = sum(matrix[p[i]][i] for i in range(n))
        return graded(
            satisfied_reward(good, n, 5.0), good == n, f"{n - good} diagonal entries are 0"
        )

    def solve(self, problem: Problem) -> str:
        matrix = problem.data["matrix"]
        n = len(matrix)
        g = nx.Graph()
        rows = [("r", i) for i in range(n)]
        g.add_nodes_from(rows)
        g.add_edges_from((("r", i), ("c", j)) for i in range(n) for j in range(n) if matrix[i][j])
        match = nx.bipartite.hopcroft_karp_matching(g, top_nodes=rows)
        return " ".join(str(match[("c", j)][1]) for j in range(n))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rpartition(" ")[0]  # too short


@ENVIRONMENTS.register("matrix_permutation_equivalence")
class MatrixPermutationEquivalence(_MatrixEnv):
    """Row and column permutations turning A into B (planted); (matching cells/all)^5."""

    difficulty_scales = "N, M in 2..3 + d; density 0.5"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = rng.randint(2, 3 + difficulty), rng.randint(2, 3 + difficulty)
        a = _noisy_binary(rng, n, m, 0.5)
        rows, cols = rng.sample(range(n), n), rng.sample(range(m), m)
        b = [[a[rows[i]][cols[j]] for j in range(m)] for i in range(n)]
        prompt = (
            f"You are given two matrices A and B of size {n} × {m}, where each element is "
            f"either 0 or 1 (rows and columns numbered from 0).\nA:\n{grid_lines(a)}\nB:\n"
            f"{grid_lines(b)}\n\nFind a permutation P of the rows 0..{n - 1} and a permutation "
            f"Q of the columns 0..{m - 1} such that A[P[i]][Q[j]] = B[i][j] for all i and j. "
            "Output P and Q as two lists separated by a semicolon, entries separated by spaces "
            "(P[0] ... ; Q[0] ...)."
        )
        answer = " ".join(map(str, rows)) + "; " + " ".join(map(str, cols))
        return Instance(prompt, answer, {"matrix": a, "target": b})

    def check(self, problem: Problem, answer: str) -> Verdict:
        a, b = problem.data["matrix"], problem.data["target"]
        n, m = len(a), len(a[0])
        parts = normalize.clean(answer).split(";")
        if len(parts) != 2:
            return invalid("give P and Q separated by a semicolon")
        p, q = _perm(parts[0], n), _perm(parts[1], m)
        if p is None or q is None:
            return invalid("P and Q must be permutations of the rows and the columns")
        good = sum(a[p[i]][q[j]] == b[i][j] for i in range(n) for j in range(m))
        return graded(satisfied_reward(good, n * m, 5.0), good == n * m, "some cells differ")

    def solve(self, problem: Problem) -> str:
        # Independent: choose Q column by column (backtracking); rows are then matched as
        # multisets, and P pairs equal rows.
        a, b = problem.data["matrix"], problem.data["target"]
        n, m = len(a), len(a[0])
        q: list[int] = []

        def rows_ok() -> bool:
            left = sorted(tuple(a[i][c] for c in q) for i in range(n))
            right = sorted(tuple(b[i][j] for j in range(len(q))) for i in range(n))
            return left == right

        def extend() -> bool:
            if len(q) == m:
                return True
            for c in range(m):
                if c not in q:
                    q.append(c)
                    if rows_ok() and extend():
                        return True
                    q.pop()
            return False

        if not extend():
            raise RuntimeError("no permutation found")
        free = list(range(n))
        p = []
        for i in range(n):
            row = [b[i][j] for j in range(m)]
            r = next(r for r in free if [a[r][c] for c in q] == row)
            free.remove(r)
            p.append(r)
        return " ".join(map(str, p)) + "; " + " ".join(map(str, q))

    def surface_forms(self, problem: Problem) -> list[str]:
        solution = self.solve(problem)
        return [solution, solution.replace("; ", ";"), f"${solution}$"]

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.split(";")[0]


# ---- a smooth submatrix ------------------------------------------------------------------
def _submatrix_score(a: list[list[int]], rows: list[int], cols: list[int]) -> int:
    """Sum of |differences| between horizontally and vertically adjacent entries."""
    sub = [[a[r][c] for c in cols] for r in rows]
    horizontal = sum(abs(x - y) for row in sub for x, y in itertools.pairwise(row))
    vertical = sum(
        abs(x - y) for up, down in itertools.pairwise(sub) for x, y in zip(up, down, strict=True)
    )
    return horizontal + vertical


def smoothest_submatrix(a: list[list[int]], r: int, c: int) -> tuple[int, str]:
    """Every choice of rows; the columns by a DP over (columns chosen, last column)."""
    n, m = len(a), len(a[0])
    best: tuple[int, str] | None = None
    for rows in itertools.combinations(range(n), r):
        vert = [sum(abs(a[x][j] - a[y][j]) for x, y in itertools.pairwise(rows)) for j in range(m)]
        hor = [[sum(abs(a[x][i] - a[x][j]) for x in rows) for j in range(m)] for i in range(m)]
        dp: list[list[tuple[int, tuple[int, ...]]]] = [[(vert[j], (j,)) for j in range(m)]]
        for _ in range(1, c):
            prev = dp[-1]
            dp.append(
                [
                    min(
                        (
                            (prev[i][0] + hor[i][j] + vert[j], (*prev[i][1], j))
                            for i in range(j)
                            if prev[i][1]
                        ),
                        default=(10**18, ()),
                    )
                    for j in range(m)
                ]
            )
        score, cols = min(dp[-1])
        if cols and (best is None or score < best[0]):
            best = (score, " ".join(map(str, rows)) + "; " + " ".join(map(str, cols)))
    assert best is not None
    return best


@ENVIRONMENTS.register("minimum_sum_difference_submatrix")
class MinimumSumDifferenceSubmatrix(_MatrixEnv):
    """Choose R rows and C columns (kept in order) whose submatrix has the smallest sum of
    |differences| between adjacent entries; (gold/score)^5 credit."""

    difficulty_scales = "N, M in 2..min(8, 3 + d//3); R in 1..N, C in 2..M; values 1..20"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        top = min(8, 3 + difficulty // 3)
        n, m = rng.randint(2, top), rng.randint(2, top)
        r, c = rng.randint(1, n), rng.randint(2, m)
        matrix = [[rng.randint(1, 20) for _ in range(m)] for _ in range(n)]
        prompt = (
            f"You are given a {n} × {m} matrix of integers (with row indices from 0 to {n - 1} "
            f"and column indices from 0 to {m - 1}):\n{grid_lines(matrix)}\n\nChoose {r} "
            f"row{'s' if r > 1 else ''} and {c} columns; they form a {r} × {c} submatrix (in the "
            "original order). Its score is the sum of |x - y| over all pairs of entries that "
            "are next to each other in the submatrix, horizontally or vertically. Make the "
            "score as small as possible. Output the chosen row indices, a semicolon, then the "
            "chosen column indices (e.g. 0 2 ; 1 3); if several choices are optimal, any of "
            "them is accepted."
        )
        data = {"matrix": matrix, "r": r, "c": c}
        return Instance(prompt, smoothest_submatrix(matrix, r, c)[1], data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        a, r, c = problem.data["matrix"], problem.data["r"], problem.data["c"]
        parts = normalize.clean(answer).split(";")
        if len(parts) != 2:
            return invalid("give the rows, a semicolon, then the columns")
        rows, cols = sorted(parse_int_list(parts[0])), sorted(parse_int_list(parts[1]))
        if len(set(rows)) != r or len(rows) != r or len(set(cols)) != c or len(cols) != c:
            return invalid(f"choose {r} distinct rows and {c} distinct columns")
        if any(not 0 <= x < len(a) for x in rows) or any(not 0 <= y < len(a[0]) for y in cols):
            return invalid("an index is out of range")
        got = _submatrix_score(a, rows, cols)
        return optimum_verdict(
            got, smoothest_submatrix(a, r, c)[0], "a smoother choice exists", minimise=True
        )

    def solve(self, problem: Problem) -> str:
        a, r, c = problem.data["matrix"], problem.data["r"], problem.data["c"]
        best = min(
            (_submatrix_score(a, list(rows), list(cols)), rows, cols)
            for rows in itertools.combinations(range(len(a)), r)
            for cols in itertools.combinations(range(len(a[0])), c)
        )
        return " ".join(map(str, best[1])) + "; " + " ".join(map(str, best[2]))

    def surface_forms(self, problem: Problem) -> list[str]:
        solution = self.solve(problem)
        return [solution, solution.replace("; ", ";"), f"${solution}$"]

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.split(";")[0]
