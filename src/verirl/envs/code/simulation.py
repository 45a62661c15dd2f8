"""Program synthesis of simulations (see
:mod:`verirl.envs.code.synthesis`): a robot walk, a stack machine, a ledger of events, a
cellular automaton. Difficulty adds rules and variants and grows the inputs."""

from __future__ import annotations

import random
from typing import Any

from verirl.envs.base import ENVIRONMENTS
from verirl.envs.code.synthesis import ProgramSynthesis


def ref_robot(p: dict[str, Any], moves: str) -> list[int]:
    x = y = 0
    seen = {(0, 0)}
    dirs = {"U": (0, 1), "D": (0, -1), "L": (-1, 0), "R": (1, 0)}
    for m in moves:
        dx, dy = dirs[m]
        nx, ny = x + dx, y + dy
        if p["size"]:
            nx, ny = nx % p["size"], ny % p["size"]
        if [nx, ny] in p["walls"]:
            continue
        x, y = nx, ny
        seen.add((x, y))
    return [x, y, len(seen)] if p["count"] else [x, y]


@ENVIRONMENTS.register("code_robot_walk")
class CodeRobotWalk(ProgramSynthesis):
    difficulty_scales = (
        "walls, then visited-cell count (d >= 3), then a wrapping board (d >= 6); longer programs"
    )
    signature = "def solve(moves: str) -> list[int]"
    reference = ref_robot

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        size = rng.randint(4, 9) if difficulty >= 6 else 0
        walls = [[rng.randint(-3, 3), rng.randint(-3, 3)] for _ in range(min(12, difficulty))]
        walls = [w for w in walls if w != [0, 0]]
        if size:
            walls = [[a % size, b % size] for a, b in walls if (a % size, b % size) != (0, 0)]
        return {
            "size": size,
            "walls": walls,
            "count": difficulty >= 3,
            "steps": [1] * (1 + len(walls) // 2 + (difficulty >= 3) + (difficulty >= 6)),
        }

    def spec(self, p: dict[str, Any]) -> str:
        text = (
            "A robot starts at (0, 0). Each character of moves is U (y + 1), D (y - 1), L (x - 1) "
            "or R (x + 1)"
        )
        if p["size"]:
            text += f"; the board wraps: coordinates are taken modulo {p['size']} after every move"
        if p["walls"]:
            text += f". A move into a wall cell is skipped; the walls are {p['walls']}"
        if p["count"]:
            text += (
                ". It returns [x, y, v]: the final position and the number of distinct cells "
                "visited (the start included)."
            )
        else:
            text += ". It returns the final position [x, y]."
        return text

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def prog(n: int) -> str:
            return "".join(rng.choice("UDLR") for _ in range(n))

        return [[prog(6)], [prog(8)], [""], ["UUUU"]] + [
            [prog(rng.randint(0, 10 + 5 * difficulty))] for _ in range(15)
        ]


def ref_stack_machine(p: dict[str, Any], program: list[str]) -> list[int]:
    stack: list[int] = []
    for ins in program:
        op, *arg = ins.split()
        if op == "push":
            stack.append(int(arg[0]))
        elif op == "pop":
            if stack:
                stack.pop()
        elif op in ("add", "mul", "sub"):
            if len(stack) >= 2:
                b, a = stack.pop(), stack.pop()
                stack.append(a + b if op == "add" else a * b if op == "mul" else a - b)
        elif op == "dup":
            if stack:
                stack.append(stack[-1])
        elif op == "swap":
            if len(stack) >= 2:
                stack[-1], stack[-2] = stack[-2], stack[-1]
        elif op == "mod" and stack:
            stack[-1] %= p["mod"]
    return stack


_STACK_OPS = ["push", "pop", "add", "dup", "swap", "mul", "sub", "mod"]


@ENVIRONMENTS.register("code_stack_machine")
class CodeStackMachine(ProgramSynthesis):
    difficulty_scales = (
        "instruction set grows (3 + difficulty // 2 kinds, up to 8); longer programs"
    )
    signature = "def solve(program: list[str]) -> list[int]"
    reference = ref_stack_machine

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        ops = _STACK_OPS[: min(len(_STACK_OPS), 3 + difficulty // 2)]
        return {"ops": ops, "mod": rng.randint(5, 50), "steps": ops}

    def spec(self, p: dict[str, Any]) -> str:
        what = {
            "push": "'push X' pushes the integer X",
            "pop": "'pop' removes the top (nothing happens on an empty stack)",
            "add": "'add' pops b then a and pushes a + b",
            "dup": "'dup' pushes a copy of the top",
            "swap": "'swap' exchanges the top two",
            "mul": "'mul' pops b then a and pushes a * b",
            "sub": "'sub' pops b then a and pushes a - b",
            "mod": f"'mod' replaces the top x by x % {p['mod']}",
        }
        lines = "\n".join(f"- {what[op]}" for op in p["ops"])
        return (
            "It runs a stack machine on the instructions in program, starting from an empty "
            "stack, and returns the final stack (bottom first). An instruction that needs more "
            "items than the stack holds does nothing. Instructions:\n" + lines
        )

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def prog(n: int) -> list[str]:
            out = []
            for _ in range(n):
                op = rng.choice(p["ops"])
                out.append(f"push {rng.randint(-9, 9)}" if op == "push" else op)
            return out

        fixed: list[list[Any]] = [[prog(5)], [prog(7)], [[]], [["pop", "add"]]]
        return fixed + [[prog(rng.randint(1, 6 + 3 * difficulty))] for _ in range(15)]


def ref_ledger(p: dict[str, Any], events: list[list[Any]]) -> dict[str, int]:
    balances: dict[str, int] = {}
    for ev in events:
        kind = ev[0]
        if kind == "open":
            balances.setdefault(ev[1], 0)
        elif kind == "deposit" and ev[1] in balances:
            balances[ev[1]] += ev[2]
        elif kind == "withdraw" and ev[1] in balances:
            cost = ev[2] + p["fee"]
            if balances[ev[1]] >= cost:
                balances[ev[1]] -= cost
        elif kind == "transfer" and ev[1] in balances and ev[2] in balances:
            if ev[1] != ev[2] and balances[ev[1]] >= ev[3]:
                balances[ev[1]] -= ev[3]
                balances[ev[2]] += ev[3]
        elif kind == "close" and ev[1] in balances and balances[ev[1]] == 0:
            del balances[ev[1]]
    return dict(sorted(balances.items()))


@ENVIRONMENTS.register("code_ledger")
class CodeLedger(ProgramSynthesis):
    difficulty_scales = "event kinds grow (withdrawal fee, transfers, closing); longer event logs"
    signature = "def solve(events: list[list]) -> dict[str, int]"
    reference = ref_ledger

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        kinds = ["open", "deposit", "withdraw"]
        if difficulty >= 2:
            kinds.append("transfer")
        if difficulty >= 5:
            kinds.append("close")
        return {"kinds": kinds, "fee": rng.randint(1, 3) if difficulty >= 3 else 0, "steps": kinds}

    def spec(self, p: dict[str, Any]) -> str:
        fee = f" plus a fee of {p['fee']}" if p["fee"] else ""
        what = {
            "open": "['open', name] opens an account with balance 0 (no effect if it exists)",
            "deposit": "['deposit', name, x] adds x",
            "withdraw": f"['withdraw', name, x] takes x{fee}, only if the balance covers it",
            "transfer": "['transfer', a, b, x] moves x from a to b, only if a != b and a's "
            "balance covers x",
            "close": "['close', name] removes the account, only if its balance is 0",
        }
        lines = "\n".join(f"- {what[k]}" for k in p["kinds"])
        return (
            "It replays bank events in order and returns the open accounts' balances as a dict "
            "sorted by name. Events naming an account that is not open are ignored.\n" + lines
        )

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        names = ["ann", "bob", "cy", "dee"]

        def log(n: int) -> list[list[Any]]:
            out: list[list[Any]] = []
            for _ in range(n):
                k = rng.choice(p["kinds"])
                if k in ("open", "close"):
                    out.append([k, rng.choice(names)])
                elif k == "transfer":
                    out.append([k, rng.choice(names), rng.choice(names), rng.randint(1, 30)])
                else:
                    out.append([k, rng.choice(names), rng.randint(1, 30)])
            return out

        fixed: list[list[Any]] = [[log(6)], [log(8)], [[]]]
        return fixed + [[log(rng.randint(1, 8 + 3 * difficulty))] for _ in range(15)]


def ref_life(p: dict[str, Any], grid: list[str], steps: int) -> list[str]:
    rows, cols = len(grid), len(grid[0])
    cells = [[ch == "#" for ch in row] for row in grid]
    for _ in range(steps):
        nxt = [[False] * cols for _ in range(rows)]
        for r in range(rows):
            for c in range(cols):
                n = 0
                for dr in (-1, 0, 1):
                    for dc in (-1, 0, 1):
                        if dr or dc:
                            rr, cc = r + dr, c + dc
                            if p["wrap"]:
                                rr, cc = rr % rows, cc % cols
                            if 0 <= rr < rows and 0 <= cc < cols and cells[rr][cc]:
                                n += 1
                nxt[r][c] = n in p["born"] if not cells[r][c] else n in p["survive"]
        cells = nxt
    return ["".join("#" if v else "." for v in row) for row in cells]


@ENVIRONMENTS.register("code_cellular_automaton")
class CodeCellularAutomaton(ProgramSynthesis):
    difficulty_scales = (
        "wrapping edges at d >= 3, other birth/survival rules at d >= 6; bigger grids, more steps"
    )
    signature = "def solve(grid: list[str], steps: int) -> list[str]"
    reference = ref_life

    def params(self, difficulty: int, rng: random.Random) -> dict[str, Any]:
        born, survive = [3], [2, 3]
        if difficulty >= 6:
            born = sorted(rng.sample(range(1, 9), 2))
            survive = sorted(rng.sample(range(1, 9), 3))
        return {
            "wrap": difficulty >= 3,
            "born": born,
            "survive": survive,
            "steps": [1] * (1 + (difficulty >= 3) + (difficulty >= 6) + difficulty // 4),
        }

    def spec(self, p: dict[str, Any]) -> str:
        edge = (
            "the grid wraps around (a torus)"
            if p["wrap"]
            else "cells outside the grid count as dead"
        )
        return (
            "grid is a non-empty list of equal-length rows of '#' (alive) and '.' (dead). Every "
            "step updates all cells at once from their 8 neighbours: a dead cell becomes alive "
            f"when its live-neighbour count is in {p['born']}, a live cell stays alive when it "
            f"is in {p['survive']}; {edge}. It returns the grid after the given number of steps."
        )

    def cases(self, p: dict[str, Any], difficulty: int, rng: random.Random) -> list[list[Any]]:
        def grid(r: int, c: int) -> list[str]:
            return [
                "".join("#" if rng.random() < 0.35 else "." for _ in range(c)) for _ in range(r)
            ]

        top = 4 + difficulty
        out: list[list[Any]] = [[[".#.", ".#.", ".#."], 1], [grid(4, 5), 2], [["#"], 3]]
        out += [
            [grid(rng.randint(1, top), rng.randint(1, top)), rng.randint(0, 2 + difficulty)]
            for _ in range(12)
        ]
        return out


__all__: list[str] = []
