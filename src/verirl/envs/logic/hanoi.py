"""Logic puzzles, part 3: the Tower of Hanoi from an arbitrary legal position.

``hanoi_min_moves`` asks for the fewest moves (a count: (min/max)^10); ``hanoi_moves`` asks for
the moves themselves, which the verifier simulates: an illegal move is invalid (-0.5), a legal
sequence that ends with every disk on the goal peg earns (optimum/length)^5, one that stops
short earns half of (disks on the goal peg/all)^5. The optimum comes from the classical
recursion; ``solve`` finds it independently by breadth-first search over the 3^n positions.
"""

from __future__ import annotations

import random
import re
from collections import deque
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    count_verdict,
    graded,
    invalid,
    optimum_verdict,
    parse_int,
    satisfied_reward,
)
from verirl.types import Problem, Verdict

PEGS = "ABC"


def hanoi_distance(pegs: list[int], target: int) -> int:
    """Fewest moves to gather all disks (``pegs[i]`` = peg of disk i+1, smallest first) on
    ``target``: move the largest misplaced disk once, smaller ones to the spare peg first."""
    moves = 0
    for disk in range(len(pegs) - 1, -1, -1):
        if pegs[disk] != target:
            moves += 1 + (2**disk - 1)
            target = 3 - pegs[disk] - target
    return moves


def _peg_text(pegs: list[int]) -> str:
    lines = []
    for p in range(3):
        disks = [str(d + 1) for d in range(len(pegs) - 1, -1, -1) if pegs[d] == p]
        lines.append(f"Peg {PEGS[p]}: {', '.join(disks) if disks else '(empty)'}")
    return "\n".join(lines)


def _hanoi_instance(rng: random.Random, n: int) -> dict[str, Any]:
    while True:
        pegs = [rng.randrange(3) for _ in range(n)]
        target = rng.randrange(3)
        if any(p != target for p in pegs):
            return {"pegs": pegs, "target": target}


def _hanoi_intro(data: dict[str, Any]) -> str:
    n = len(data["pegs"])
    return (
        f"Tower of Hanoi with three pegs A, B, C and {n} disks of sizes 1 (smallest) to {n}. "
        "A move takes the top disk of one peg and puts it on another peg, never on a smaller "
        "disk. The disks now sit like this (listed from bottom to top):\n"
        f"{_peg_text(data['pegs'])}\nThe goal is to move all disks onto peg "
        f"{PEGS[data['target']]}."
    )


def _bfs_moves(pegs: list[int], target: int) -> list[tuple[int, int]]:
    """Shortest move list by breadth-first search over the 3^n states (small n only)."""
    start, goal = tuple(pegs), (target,) * len(pegs)
    prev: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[int, int]] | None] = {start: None}
    queue = deque([start])
    while queue:
        state = queue.popleft()
        if state == goal:
            break
        tops = {}
        for disk in range(len(state) - 1, -1, -1):
            tops[state[disk]] = disk  # smallest disk on each peg wins
        for src, disk in tops.items():
            for dst in range(3):
                if dst != src and tops.get(dst, len(state)) > disk:
                    nxt = (*state[:disk], dst, *state[disk + 1 :])
                    if nxt not in prev:
                        prev[nxt] = (state, (src, dst))
                        queue.append(nxt)
    moves: list[tuple[int, int]] = []
    node = goal
    while prev[node] is not None:
        node, move = prev[node]  # type: ignore[misc]
        moves.append(move)
    return moves[::-1]


@ENVIRONMENTS.register("hanoi_min_moves")
class HanoiMinMoves(Environment):
    """Fewest moves from a position to the goal peg; (min/max)^10 credit."""

    size_measure = "number of disks"
    answer_kind = "integer"
    tags = ("logic",)
    difficulty_scales = "disks: 3 + d//2, in a random legal position"
    size_key = "pegs"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        data = _hanoi_instance(rng, 3 + difficulty // 2)
        prompt = (
            f"{_hanoi_intro(data)}\n\nWhat is the fewest number of moves that reaches "
            "the goal? Give a single integer."
        )
        return Instance(prompt, str(hanoi_distance(data["pegs"], data["target"])), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        gold = hanoi_distance(problem.data["pegs"], problem.data["target"])
        return count_verdict(parse_int(answer), gold, "that is not the fewest number of moves")

    def solve(self, problem: Problem) -> str:
        pegs, target = problem.data["pegs"], problem.data["target"]
        if len(pegs) <= 10:
            return str(len(_bfs_moves(pegs, target)))
        return str(hanoi_distance(pegs, target))

    def problem_space(self, difficulty: int) -> int | None:
        space = 3 ** (3 + difficulty // 2 + 1) - 3  # disk pegs × target, minus solved ones
        return space if space < 1000 else None


_MOVE = re.compile(r"([ABC])\s*(?:->|→|-|to|\\to|\\rightarrow)\s*([ABC])", re.IGNORECASE)


@ENVIRONMENTS.register("hanoi_moves")
class HanoiMoves(Environment):
    """A move list, checked by simulation; longer solutions earn (optimum/length)^5."""

    size_measure = "number of disks"
    tags = ("logic",)
    difficulty_scales = "disks: 2 + floor(log2(d + 1)) (the optimal move list stays O(d))"
    size_key = "pegs"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        data = _hanoi_instance(rng, 2 + (difficulty + 1).bit_length() - 1)
        prompt = (
            f"{_hanoi_intro(data)}\n\nReach the goal with as few moves as possible. Give "
            "the moves in order, each written as source->destination (for example A->C), "
            "separated by commas."
        )
        return Instance(prompt, _moves_text(_bfs_moves(data["pegs"], data["target"])), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        text = answer[:200_000]
        moves = [(PEGS.index(a.upper()), PEGS.index(b.upper())) for a, b in _MOVE.findall(text)]
        if not moves or not re.fullmatch(r"[\s,;.\[\]()]*", _MOVE.sub("", text)):
            raise ValueError("expected moves like A->C separated by commas")
        pegs, target = list(problem.data["pegs"]), problem.data["target"]
        stacks: list[list[int]] = [[], [], []]
        for disk in range(len(pegs) - 1, -1, -1):
            stacks[pegs[disk]].append(disk)
        for k, (src, dst) in enumerate(moves, start=1):
            if src == dst or not stacks[src]:
                return invalid(f"move {k} is not possible")
            if stacks[dst] and stacks[dst][-1] < stacks[src][-1]:
                return invalid(f"move {k} puts a disk on a smaller disk")
            stacks[dst].append(stacks[src].pop())
        best = hanoi_distance(pegs, target)
        if len(stacks[target]) != len(pegs):
            score = 0.5 * satisfied_reward(len(stacks[target]), len(pegs), 5.0)
            return graded(score, False, "legal moves, but not all disks reach the goal peg")
        worse = "the goal is reached, but with too many moves"
        return optimum_verdict(len(moves), best, worse, minimise=True)

    def solve(self, problem: Problem) -> str:
        return _moves_text(_bfs_moves(problem.data["pegs"], problem.data["target"]))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        moves = answer.split(", ")
        return ", ".join(moves[:-1]) if len(moves) > 1 else "A->B, B->A, " + answer

    def problem_space(self, difficulty: int) -> int | None:
        disks = 2 + (difficulty + 1).bit_length() - 1
        space = 3 ** (disks + 1) - 3  # disk pegs × target, minus solved ones
        return space if space < 1000 else None


def _moves_text(moves: list[tuple[int, int]]) -> str:
    return ", ".join(f"{PEGS[a]}->{PEGS[b]}" for a, b in moves)
