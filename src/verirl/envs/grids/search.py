"""Search on grids and states: distances to the nearest 1, the largest island, sliding-tile
puzzles and water jugs (RLVE catalogue rows GridBFS, GridComponent, EightDigitPuzzle,
JugPuzzle; Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning for Language Models
with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A).

Move sequences are checked by simulation (any valid sequence within the bound is correct, not
only the planted one); an illegal or malformed move, or a sequence over the bound, is invalid
(−0.5). Distance matrices score mean(cell right)^10; the island size is right or wrong.
"""

from __future__ import annotations

import itertools
import random
import re
from collections import deque

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    IntegerAnswer,
    graded,
    invalid,
    satisfied_reward,
    sequence_reward,
)
from verirl.envs.kit.grids import grid_lines, read_grid
from verirl.envs.kit.wording import plural
from verirl.envs.reading import normalize
from verirl.types import Problem, Verdict

TAGS = ("rlve", "search")
STEPS = ((-1, 0), (1, 0), (0, -1), (0, 1))
MAX_MOVES = 1000


@ENVIRONMENTS.register("grid_bfs")
class GridBfs(Environment):
    """For every cell, the number of up/down/left/right steps to the nearest 1 avoiding X
    cells (−1 for X cells and cells that reach no 1) (RLVE GridBFS). Wrong shape → invalid;
    else mean(cell right)^10. Verifier: multi-source BFS; ``solve``: a BFS from every cell."""

    tags = TAGS
    difficulty_scales = "grid (3 + d//3) × (3 + d//3)"
    size_measure = "number of cells"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, m = 3 + difficulty // 3, 3 + difficulty // 3
        cells = [[rng.choices("01X", weights=(6, 1, 2))[0] for _ in range(m)] for _ in range(n)]
        if not any("1" in row for row in cells):
            cells[rng.randrange(n)][rng.randrange(m)] = "1"
        prompt = (
            f"You are given a {n} × {m} grid; each cell holds 0, 1 or X:\n"
            f"{grid_lines(cells, '')}\n\n"
            "For every cell, find the smallest number of steps (up, down, left or right, never "
            "entering an X cell) from it to a cell holding 1; a cell holding 1 has distance 0. "
            "Write −1 for X cells and for cells from which no 1 can be reached. Give the "
            f"distances as {n} lines of {m} integers separated by spaces."
        )
        data = {"cells": ["".join(row) for row in cells]}
        return Instance(prompt, grid_lines(self._fast(data["cells"])), data)

    @staticmethod
    def _fast(cells: list[str]) -> list[list[int]]:
        n, m = len(cells), len(cells[0])
        dist = [[-1] * m for _ in range(n)]
        queue: deque[tuple[int, int]] = deque()
        for r, c in itertools.product(range(n), range(m)):
            if cells[r][c] == "1":
                dist[r][c] = 0
                queue.append((r, c))
        while queue:
            r, c = queue.popleft()
            for dr, dc in STEPS:
                a, b = r + dr, c + dc
                if 0 <= a < n and 0 <= b < m and cells[a][b] != "X" and dist[a][b] < 0:
                    dist[a][b] = dist[r][c] + 1
                    queue.append((a, b))
        return dist

    def check(self, problem: Problem, answer: str) -> Verdict:
        cells = problem.data["cells"]
        got = read_grid(answer, len(cells), len(cells[0]), single_digits=False)
        flat = [v for row in got for v in row]
        gold = [v for row in self._fast(cells) for v in row]
        ok = flat == gold
        return graded(
            sequence_reward(flat, gold, 10.0), ok, "correct" if ok else "some cells are wrong"
        )

    def solve(self, problem: Problem) -> str:
        cells = problem.data["cells"]
        n, m = len(cells), len(cells[0])
        out = [[-1] * m for _ in range(n)]
        for r, c in itertools.product(range(n), range(m)):
            if cells[r][c] == "X":
                continue
            seen, frontier, d = {(r, c)}, [(r, c)], 0
            while frontier:
                if any(cells[a][b] == "1" for a, b in frontier):
                    out[r][c] = d
                    break
                nxt = []
                for a, b in frontier:
                    for dr, dc in STEPS:
                        x, y = a + dr, b + dc
                        if 0 <= x < n and 0 <= y < m and cells[x][y] != "X" and (x, y) not in seen:
                            seen.add((x, y))
                            nxt.append((x, y))
                frontier, d = nxt, d + 1
        return grid_lines(out)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        rows = [row.split(" ") for row in answer.split("\n")]
        rows[0][0] = str(int(rows[0][0]) + 1)
        return grid_lines(rows)

    def surface_forms(self, problem: Problem) -> list[str]:
        rows = [row.split(" ") for row in self.solve(problem).split("\n")]
        return [
            grid_lines(rows),
            "; ".join(", ".join(r) for r in rows),
            " \\\\ ".join(" & ".join(r) for r in rows),
        ]

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["cells"]) * len(problem.data["cells"][0]))


@ENVIRONMENTS.register("grid_component")
class GridComponent(IntegerAnswer):
    """The size of the largest group of 1-cells connected up/down/left/right (RLVE
    GridComponent); right or wrong. Verifier: BFS; ``solve``: union–find."""

    tags = TAGS
    difficulty_scales = "grid (4 + d//3) × (4 + d//3), 1-density 0.35..0.6"
    size_measure = "number of cells"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = m = 4 + difficulty // 3
        p = rng.uniform(0.35, 0.6)
        cells = ["".join("1" if rng.random() < p else "0" for _ in range(m)) for _ in range(n)]
        prompt = (
            f"You are given a {n} × {m} grid of 0s and 1s:\n"
            + "\n".join(cells)
            + "\n\nTwo 1-cells are connected when they are next to each other horizontally or "
            "vertically (not diagonally); a component is a maximal set of 1-cells connected "
            "through such steps. How many cells does the largest component have (0 if there "
            "is no 1)?"
        )
        data = {"cells": cells}
        return Instance(prompt, str(self._fast(cells)), data)

    @staticmethod
    def _fast(cells: list[str]) -> int:
        """Flood fill over the row-major cell indices, each row followed by one 0 column so
        that a step left or right never wraps into the next row: the 1-cells still to visit
        are a set of ints, and a component is popped from it."""
        m = len(cells[0])
        width = m + 1
        flat = "".join(row[:m] + "0" for row in cells)
        ones = {i for i, ch in enumerate(flat) if ch == "1"}
        best = 0
        while ones:
            stack, size = [ones.pop()], 0
            while stack:
                i = stack.pop()
                size += 1
                for j in (i - 1, i + 1, i - width, i + width):
                    if j in ones:
                        ones.remove(j)
                        stack.append(j)
            best = max(best, size)
        return best

    def check(self, problem: Problem, answer: str) -> Verdict:
        ok = normalize.parse_integer(answer) == self._fast(problem.data["cells"])
        return graded(0.0, ok, "correct" if ok else "that is not the largest component size")

    def solve_int(self, problem: Problem) -> int:
        cells = problem.data["cells"]
        n, m = len(cells), len(cells[0])
        parent = list(range(n * m))

        def find(x: int) -> int:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        for r, c in itertools.product(range(n), range(m)):
            if cells[r][c] == "1":
                for x, y in ((r + 1, c), (r, c + 1)):
                    if x < n and y < m and cells[x][y] == "1":
                        parent[find(r * m + c)] = find(x * m + y)
        sizes: dict[int, int] = {}
        for r, c in itertools.product(range(n), range(m)):
            if cells[r][c] == "1":
                root = find(r * m + c)
                sizes[root] = sizes.get(root, 0) + 1
        return max(sizes.values(), default=0)

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["cells"]) ** 2)


_MOVE = {"U": (-1, 0), "D": (1, 0), "L": (0, -1), "R": (0, 1)}


def _slide(grid: tuple[int, ...], cols: int, move: str) -> tuple[int, ...] | None:
    """Move the blank (0) one step; None when it would leave the grid."""
    at = grid.index(0)
    r, c = divmod(at, cols)
    dr, dc = _MOVE[move]
    x, y = r + dr, c + dc
    rows = len(grid) // cols
    if not (0 <= x < rows and 0 <= y < cols):
        return None
    out = list(grid)
    out[at], out[x * cols + y] = out[x * cols + y], 0
    return tuple(out)


@ENVIRONMENTS.register("eight_digit_puzzle")
class EightDigitPuzzle(Environment):
    """A sliding-tile puzzle: move the blank (0) up/down/left/right to turn the start grid into
    the target within L moves (RLVE EightDigitPuzzle). An illegal move or more than L moves →
    invalid; else (cells matching the target / all)^10. ``solve``: bidirectional BFS."""

    tags = TAGS
    difficulty_scales = "grid (2 + d//10) × (3 + d//10); target 3 + d//2 random moves away"
    size_measure = "move bound L"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        rows, cols = 2 + difficulty // 10, 3 + difficulty // 10
        start = list(range(rows * cols))
        rng.shuffle(start)
        state, last = tuple(start), ""
        moves: list[str] = []
        undo = {"U": "D", "D": "U", "L": "R", "R": "L"}
        while len(moves) < 3 + difficulty // 2:
            mv = rng.choice("UDLR")
            nxt = _slide(state, cols, mv)
            if nxt is None or mv == undo.get(last):
                continue
            state, last = nxt, mv
            moves.append(mv)
        if state == tuple(start):  # a walk around a loop: go one step further
            mv = next(m for m in "UDLR" if _slide(state, cols, m) is not None)
            state = _slide(state, cols, mv)  # type: ignore[assignment]
            moves.append(mv)
        bound = len(moves)
        fmt = lambda g: grid_lines([list(g[r * cols : (r + 1) * cols]) for r in range(rows)])  # noqa: E731
        prompt = (
            f"You are given a {rows} × {cols} grid holding each of the numbers 0 to "
            f"{rows * cols - 1} once; 0 is the blank:\n{fmt(start)}\n\nA move U, D, L or R "
            "swaps the blank with the number above, below, left of or right of it (it must "
            f"stay inside the grid). Using at most {bound} moves, reach this grid:\n"
            f"{fmt(state)}\n\nGive the moves as one string of the letters U, D, L, R."
        )
        data = {"cols": cols, "start": start, "target": list(state), "bound": bound}
        return Instance(prompt, "".join(moves), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        d = problem.data
        text = re.sub(r"[\s,;]", "", normalize.clean(answer)).upper()
        if set(text) - set("UDLR"):
            raise ValueError("moves must be the letters U, D, L, R")
        if len(text) > d["bound"]:
            return invalid(f"use at most {d['bound']} moves")
        state = tuple(d["start"])
        for mv in text:
            nxt = _slide(state, d["cols"], mv)
            if nxt is None:
                return invalid("a move takes the blank outside the grid")
            state = nxt
        good = sum(1 for a, b in zip(state, d["target"], strict=True) if a == b)
        ok = good == len(state)
        return graded(
            satisfied_reward(good, len(state), 10.0), ok, "correct" if ok else "not the target yet"
        )

    def solve(self, problem: Problem) -> str:
        d = problem.data
        return self._bfs(tuple(d["start"]), tuple(d["target"]), d["cols"])

    @staticmethod
    def _bfs(start: tuple[int, ...], goal: tuple[int, ...], cols: int) -> str:
        seen, queue = {start: ""}, deque([start])
        while queue:
            s = queue.popleft()
            if s == goal:
                return seen[s]
            for mv in "UDLR":
                t = _slide(s, cols, mv)
                if t is not None and t not in seen:
                    seen[t] = seen[s] + mv
                    queue.append(t)
        raise ValueError("unreachable target")

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer[:-1]

    def surface_forms(self, problem: Problem) -> list[str]:
        s = self.solve(problem)
        return [s, " ".join(s), ", ".join(s), s.lower()]

    def size(self, problem: Problem) -> float:
        return float(problem.data["bound"])


_JUG_OP = re.compile(r"(fill|empty|pour)\s*\(?\s*(\d+)\s*(?:[,\s]\s*(?:to|into)?\s*(\d+))?\s*\)?")


def _jug_step(state: list[int], caps: list[int], op: tuple[str, int, int | None]) -> bool:
    """Apply one operation in place; False when it names a jug that does not exist."""
    kind, i, j = op
    if not 0 <= i < len(caps) or (kind == "pour") != (j is not None):
        return False
    if kind == "fill":
        state[i] = caps[i]
    elif kind == "empty":
        state[i] = 0
    else:
        assert j is not None
        if not 0 <= j < len(caps) or i == j:
            return False
        amount = min(state[i], caps[j] - state[j])
        state[i] -= amount
        state[j] += amount
    return True


def _jug_moves(text: str) -> list[tuple[str, int, int | None]]:
    """``fill 0; pour 0 1; empty 1`` (also one per line or comma-separated, with optional
    parentheses or "into") as operations; ``ValueError`` for anything else."""
    t = normalize.clean(text).lower()
    parts = [p.strip() for p in re.split(r"[;\n]|,(?=\s*(?:fill|empty|pour))", t) if p.strip()]
    if len(parts) > MAX_MOVES:
        raise ValueError("too many operations")
    ops = []
    for part in parts:
        m = _JUG_OP.fullmatch(part)
        if m is None:
            raise ValueError(f"unknown operation {part[:30]!r}")
        ops.append((m.group(1), int(m.group(2)), int(m.group(3)) if m.group(3) else None))
    return ops


@ENVIRONMENTS.register("jug_puzzle")
class JugPuzzle(Environment):
    """Water jugs: reach exactly T litres in some jug by filling, emptying and pouring (RLVE
    JugPuzzle); right or wrong, a malformed operation or a jug that does not exist is
    invalid. The verifier simulates the operations; ``solve``: BFS over jug contents."""

    tags = TAGS
    difficulty_scales = "2 + d//10 jugs of capacity 3..14 + d; target from a walk of 3 + d moves"
    size_measure = "number of states: product of (capacity + 1)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 2 + difficulty // 10
        while True:
            caps = [rng.randint(3, 14 + difficulty) for _ in range(n)]
            state = [0] * n
            seen_amounts = set()
            for _ in range(3 + difficulty):
                kind = rng.choice(["fill", "empty", "pour", "pour"])
                i, j = rng.sample(range(n), 2)
                _jug_step(state, caps, (kind, i, j if kind == "pour" else None))
                seen_amounts.update(state)
            options = sorted(seen_amounts - {0} - set(caps))
            if options:
                break
        target = rng.choice(options)
        listing = ", ".join(f"jug {i} holds {plural(c, 'litre')}" for i, c in enumerate(caps))
        prompt = (
            f"You have {n} jugs, all initially empty: {listing}. Operations:\n"
            "fill i: fill jug i to the top\nempty i: pour jug i out completely\n"
            "pour i j: pour from jug i into jug j until jug i is empty or jug j is full\n\n"
            f"Give a sequence of operations after which some jug holds exactly "
            f"{plural(target, 'litre')}, one operation per line (or separated by semicolons)."
        )
        data = {"caps": caps, "target": target}
        return Instance(prompt, self._search(caps, target), data)

    @staticmethod
    def _search(caps: list[int], target: int) -> str:
        n = len(caps)
        start = (0,) * n
        back: dict[tuple[int, ...], tuple[tuple[int, ...], str] | None] = {start: None}
        queue = deque([start])
        ops: list[tuple[str, int, int | None]] = [("fill", i, None) for i in range(n)]
        ops += [("empty", i, None) for i in range(n)]
        ops += [("pour", i, j) for i in range(n) for j in range(n) if i != j]
        while queue:
            s = queue.popleft()
            if target in s:
                steps = []
                while back[s] is not None:
                    s, text = back[s]  # type: ignore[misc]
                    steps.append(text)
                return "\n".join(reversed(steps))
            for kind, i, j in ops:
                t = list(s)
                _jug_step(t, caps, (kind, i, j))
                key = tuple(t)
                if key not in back:
                    back[key] = (s, f"{kind} {i}" + ("" if j is None else f" {j}"))
                    queue.append(key)
        raise ValueError("target unreachable")

    def check(self, problem: Problem, answer: str) -> Verdict:
        caps, target = problem.data["caps"], problem.data["target"]
        state = [0] * len(caps)
        for op in _jug_moves(answer):
            if not _jug_step(state, caps, op):
                return invalid("an operation names a jug that does not exist")
        ok = target in state
        return graded(0.0, ok, "correct" if ok else "at the end no jug holds the target amount")

    def solve(self, problem: Problem) -> str:
        return self._search(problem.data["caps"], problem.data["target"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return answer.rsplit("\n", 1)[0] if "\n" in answer else "empty 0"

    def surface_forms(self, problem: Problem) -> list[str]:
        s = self.solve(problem)
        into = re.sub(r"pour (\d+) (\d+)", r"pour \1 into \2", s)
        return [s, s.replace("\n", "; "), s.upper(), into]

    def size(self, problem: Problem) -> float:
        out = 1
        for c in problem.data["caps"]:
            out *= c + 1
        return float(out)
