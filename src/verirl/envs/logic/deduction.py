"""Logic puzzles, part 1: knights and knaves, boolean evaluation, seating orders.

Puzzle answers are checked against the puzzle's statements/clues, so any consistent answer is
accepted; RLVE's (satisfied/all)^5 gives partial credit. Grid puzzles (Sudoku, N-queens) are in
:mod:`verirl.envs.logic.sudoku_queens`, the Tower of Hanoi in :mod:`verirl.envs.logic.hanoi`.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterator
from typing import Any

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    satisfied_verdict,
    sequence_reward,
    swap_until_wrong,
)
from verirl.types import Problem, Verdict

_NAMES = (
    "Alice",
    "Bob",
    "Carol",
    "Dave",
    "Erin",
    "Frank",
    "Grace",
    "Heidi",
    "Ivan",
    "Judy",
    "Kevin",
    "Laura",
    "Mike",
    "Nina",
    "Oscar",
    "Peggy",
    "Quinn",
    "Rita",
    "Sam",
    "Tina",
    "Uma",
    "Victor",
    "Wendy",
    "Xavier",
    "Yara",
    "Zack",
)


def people(n: int) -> list[str]:
    """``n`` distinct names (suffixed with a number once the 26 names run out)."""
    return [_NAMES[i % 26] + ("" if i < 26 else str(i // 26 + 1)) for i in range(n)]


def parse_names(text: str, names: list[str]) -> list[int] | None:
    """Indices of the names in ``text`` (separated by commas/spaces), or ``None`` when a token
    is not one of ``names``."""
    index = {name.lower(): i for i, name in enumerate(names)}
    tokens = [t for t in re.split(r"[\s,;>\-→]+", text.strip().strip("[]()")) if t]
    if len(tokens) > 10_000:
        raise ValueError("too many names")
    out = []
    for t in tokens:
        if t.lower() not in index:
            return None
        out.append(index[t.lower()])
    return out


# ---- knights and knaves ------------------------------------------------------------------
def _truth(stmt: list[Any], mask: int) -> bool:
    """Whether statement ``stmt`` holds when bit i of ``mask`` says person i is a knight."""
    kind = stmt[0]
    if kind == "count":
        return mask.bit_count() == stmt[1]
    a = (mask >> stmt[1]) & 1
    if kind == "is":
        return a == stmt[2]
    b = (mask >> stmt[2]) & 1
    return {"same": a == b, "diff": a != b, "and": a & b == 1, "or": a | b == 1, "xor": a ^ b == 1}[
        kind
    ]


def _say(stmt: list[Any], speaker: int, names: list[str]) -> str:
    kind = stmt[0]
    if kind == "count":
        return f"Exactly {stmt[1]} of the {len(names)} of us are knights."

    def who(i: int) -> str:
        return "I" if i == speaker else names[i]

    if kind == "is":
        return f"{who(stmt[1])} is a {'knight' if stmt[2] else 'knave'}."
    first, second = (stmt[2], stmt[1]) if stmt[1] == speaker else (stmt[1], stmt[2])
    a, b = who(first), who(second)  # "Bob and I", never "I and Bob"
    return {
        "same": f"{a} and {b} are of the same kind.",
        "diff": f"{a} and {b} are of different kinds.",
        "and": f"{a} and {b} are both knights.",
        "or": f"At least one of {a} and {b} is a knight.",
        "xor": f"Exactly one of {a} and {b} is a knight.",
    }[kind]


def _random_statement(rng: random.Random, speaker: int, n: int, difficulty: int) -> list[Any]:
    kinds = ["is", "same", "diff", "and", "or", "xor"][: 3 + difficulty]
    if difficulty >= 6:
        kinds.append("count")
    kind = rng.choice(kinds)
    if kind == "count":
        return ["count", rng.randint(0, n)]
    others = [i for i in range(n) if i != speaker]
    if kind == "is":
        return ["is", rng.choice(others), rng.randint(0, 1)]
    a, b = rng.sample([*others, speaker], 2) if n > 2 else (speaker, others[0])
    return [kind, a, b]


def _true_statement(
    rng: random.Random, speaker: int, n: int, difficulty: int, truth: int
) -> list[Any]:
    """``[speaker, statement]`` with a statement that ``speaker`` can make under ``truth``."""
    while True:
        stmt = _random_statement(rng, speaker, n, difficulty)
        if _truth(stmt, truth) == bool((truth >> speaker) & 1):
            return [speaker, stmt]


@ENVIRONMENTS.register("knights_knaves")
class KnightsAndKnaves(Environment):
    """Who is a knight and who a knave; (consistent statements/all)^5 credit."""

    tags = ("logic",)
    difficulty_scales = (
        "islanders: 2 + d//3 (names drawn per seed); statement kinds grow until d = 3; "
        "counts at d >= 6; exactly one consistent assignment"
    )
    size_key = "statements"
    size_measure = "number of statements"
    unique_answer = True
    # Uniqueness is checked by backtracking over 2^n assignments: 22 islanders at d = 60
    # take about 0.3 s a problem, 35 at d = 100 several seconds.
    max_difficulty = 60

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 2 + difficulty // 3
        # who the islanders are varies per seed (in alphabetical order), not only their roles
        names = sorted(rng.sample(_NAMES, n), key=_NAMES.index) if n <= 26 else people(n)
        while True:  # redraw until exactly one assignment is consistent (the prompt says so)
            truth = rng.getrandbits(n)
            statements = [_true_statement(rng, s, n, difficulty, truth) for s in range(n)]
            for _ in range(3 * n):  # add statements until the solution is unique
                if _count_consistent(statements, n, 2) == 1:
                    break
                statements.append(_true_statement(rng, rng.randrange(n), n, difficulty, truth))
            if _count_consistent(statements, n, 2) == 1:
                break
        lines = [f'- {names[s]} says: "{_say(st, s, names)}"' for s, st in statements]
        prompt = (
            f"On an island, knights always tell the truth and knaves always lie. You meet "
            f"{n} islanders: {', '.join(names)}.\n" + "\n".join(lines) + "\n\nDetermine who "
            "is a knight and who is a knave. Give every islander with their role, in the form "
            f'"{names[0]}: knight, {names[1]}: knave" (one entry per islander, separated '
            "by commas)."
        )
        data = {"names": names, "statements": statements}
        return Instance(prompt, _roles_text(names, truth), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        names = problem.data["names"]
        pairs = re.findall(
            # The lookbehind starts a name only at the start of a word: without it every
            # letter of a long word is a start and the scan is quadratic.
            r"(?<![A-Za-z])([A-Za-z]+\d*)\s*(?:[:=-]|\bis\b)?\s*(?:an?\s+)?(knight|knave)",
            answer[:20_000],
            flags=re.IGNORECASE,
        )
        if not pairs:
            raise ValueError("no 'name: role' entries")
        index = {name.lower(): i for i, name in enumerate(names)}
        roles: dict[int, int] = {}
        for name, role in pairs:
            if name.lower() not in index:
                return invalid(f"{name} is not one of the islanders")
            i, r = index[name.lower()], int(role.lower() == "knight")
            if roles.get(i, r) != r:
                return invalid(f"{names[i]} is given two different roles")
            roles[i] = r
        if len(roles) != len(names):
            return invalid("every islander needs a role")
        mask = sum(r << i for i, r in roles.items())
        stmts = problem.data["statements"]
        good = sum(1 for s, st in stmts if _truth(st, mask) == bool((mask >> s) & 1))
        return satisfied_verdict(good, len(stmts), "statements are inconsistent")

    def solve(self, problem: Problem) -> str:
        names, stmts = problem.data["names"], problem.data["statements"]
        for mask in _consistent_masks(stmts, len(names)):
            return _roles_text(names, mask)
        raise RuntimeError("no consistent assignment")

    def count_answers(self, problem: Problem, limit: int = 2) -> int | None:
        return _count_consistent(problem.data["statements"], len(problem.data["names"]), limit)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        names, stmts = problem.data["names"], problem.data["statements"]
        mask = sum(1 << i for i, n in enumerate(names) if f"{n}: knight" in answer)
        for i in range(len(names)):
            if not _consistent(stmts, mask ^ (1 << i)):
                return _roles_text(names, mask ^ (1 << i))
        return answer.split(", ")[0]  # missing islanders: invalid


def _consistent(statements: list[list[Any]], mask: int) -> bool:
    return all(_truth(st, mask) == bool((mask >> s) & 1) for s, st in statements)


def _consistent_masks(statements: list[list[Any]], n: int) -> Iterator[int]:
    """Every assignment (bit i: person i is a knight) consistent with ``statements``, by
    backtracking over the people in order: a statement is checked as soon as everyone it
    mentions (its speaker included) has a role, so dead branches end early."""
    due: list[list[list[Any]]] = [[] for _ in range(n)]
    for speaker, stmt in statements:
        mentioned = [speaker] + ([n - 1] if stmt[0] == "count" else stmt[1:2])
        if stmt[0] not in ("count", "is"):
            mentioned.append(stmt[2])
        due[max(mentioned)].append([speaker, stmt])

    def extend(k: int, mask: int) -> Iterator[int]:
        if k == n:
            yield mask
            return
        for role in (0, 1):
            m = mask | role << k
            if _consistent(due[k], m):
                yield from extend(k + 1, m)

    yield from extend(0, 0)


def _count_consistent(statements: list[list[Any]], n: int, limit: int) -> int:
    """How many assignments are consistent with ``statements``, counting up to ``limit``."""
    return sum(1 for _ in itertools.islice(_consistent_masks(statements, n), limit))


def _roles_text(names: list[str], mask: int) -> str:
    return ", ".join(
        f"{n}: {'knight' if (mask >> i) & 1 else 'knave'}" for i, n in enumerate(names)
    )


# ---- boolean expressions -------------------------------------------------------------------
def _random_formula(rng: random.Random, variables: list[str], leaves: int, neg: bool) -> list:
    if leaves == 1:
        node: list = ["var", rng.choice(variables)]
    else:
        left = rng.randint(1, leaves - 1)
        node = [
            rng.choice(["and", "or", "xor"]),
            _random_formula(rng, variables, left, neg),
            _random_formula(rng, variables, leaves - left, neg),
        ]
    if neg and rng.random() < 0.25:
        node = ["not", node]
    return node


def _show(node: list, top: bool = True) -> str:
    if node[0] == "var":
        return node[1]
    if node[0] == "not":
        return f"NOT {_show(node[1], False)}"
    text = f"{_show(node[1], False)} {node[0].upper()} {_show(node[2], False)}"
    return text if top else f"({text})"


def _value(node: list, env: dict[str, int]) -> int:
    op = node[0]
    if op == "var":
        return env[node[1]]
    if op == "not":
        return 1 - _value(node[1], env)
    a, b = _value(node[1], env), _value(node[2], env)
    return {"and": a & b, "or": a | b, "xor": a ^ b}[op]


_BOOL = {"1": 1, "true": 1, "t": 1, "0": 0, "false": 0, "f": 0}


@ENVIRONMENTS.register("boolean_eval")
class BooleanEvaluation(Environment):
    """Values of boolean formulas under an assignment; element-wise match^5 credit."""

    tags = ("logic",)
    difficulty_scales = (
        "expressions: 1 + d//4; leaves per expression: 2 + d//2; variables: 3 + d//3; "
        "NOT from d = 2"
    )
    size_measure = "operators and variables in all expressions"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        variables = [chr(ord("A") + i) for i in range(min(26, 3 + difficulty // 3))]
        env = {v: rng.randint(0, 1) for v in variables}
        formulas = [
            _random_formula(rng, variables, 2 + difficulty // 2, difficulty >= 2)
            for _ in range(1 + difficulty // 4)
        ]
        values = ", ".join(f"{v} = {'True' if env[v] else 'False'}" for v in variables)
        listed = "\n".join(f"{i + 1}. {_show(f)}" for i, f in enumerate(formulas))
        prompt = (
            f"Let {values}. Evaluate each boolean expression (AND, OR, XOR and NOT have their "
            f"usual meaning; parentheses group):\n{listed}\n\nGive the value of each "
            "expression in order as 1 (true) or 0 (false), separated by commas."
        )
        gold = ", ".join(str(_value(f, env)) for f in formulas)
        return Instance(prompt, gold, {"env": env, "formulas": formulas})

    def check(self, problem: Problem, answer: str) -> Verdict:
        tokens = [t for t in re.split(r"[\s,;]+", answer.strip().strip("[]()").lower()) if t]
        if not tokens or len(tokens) > 1000 or any(t not in _BOOL for t in tokens):
            raise ValueError("expected values 1/0 or true/false")
        got = [_BOOL[t] for t in tokens]
        gold = [int(x) for x in self.solve(problem).split(", ")]
        if len(got) != len(gold):
            return invalid(f"expected {len(gold)} values, got {len(got)}")
        ok = got == gold
        return graded(
            sequence_reward(got, gold, 5.0), ok, "correct" if ok else "some values are wrong"
        )

    def solve(self, problem: Problem) -> str:
        env = dict(problem.data["env"])
        return ", ".join(str(_value(f, env)) for f in problem.data["formulas"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        vals = answer.split(", ")
        vals[0] = "1" if vals[0] == "0" else "0"
        return ", ".join(vals)

    def size(self, problem: Problem) -> float:
        def nodes(tree: object) -> int:
            if isinstance(tree, list) and tree and tree[0] != "var":
                return 1 + sum(nodes(t) for t in tree[1:])
            return 1

        return float(sum(nodes(f) for f in problem.data["formulas"]))


# ---- seating order (zebra-style) ---------------------------------------------------------
def _holds(clue: list[Any], pos: list[int], n: int) -> bool:
    kind, a = clue[0], clue[1]
    if kind == "seat":
        return pos[a] == clue[2]
    if kind == "not_seat":
        return pos[a] != clue[2]
    if kind == "end":
        return pos[a] in (1, n)
    b = clue[2]
    return {
        "left_of": pos[a] < pos[b],
        "next_left": pos[b] == pos[a] + 1,
        "adjacent": abs(pos[a] - pos[b]) == 1,
        "not_adjacent": abs(pos[a] - pos[b]) != 1,
        "gap": abs(pos[a] - pos[b]) == (clue[3] if len(clue) > 3 else -1) + 1,
    }[kind]


def _clue_text(clue: list[Any], names: list[str]) -> str:
    kind, a = clue[0], names[clue[1]]
    if kind == "seat":
        return f"{a} sits in seat {clue[2]}."
    if kind == "not_seat":
        return f"{a} does not sit in seat {clue[2]}."
    if kind == "end":
        return f"{a} sits at one of the two ends of the row."
    b = names[clue[2]]
    if kind == "gap":
        return (
            f"There {'is' if clue[3] == 1 else 'are'} exactly {clue[3]} "
            f"{'person' if clue[3] == 1 else 'people'} between {a} and {b}."
        )
    return {
        "left_of": f"{a} sits somewhere to the left of {b}.",
        "next_left": f"{a} sits immediately to the left of {b}.",
        "adjacent": f"{a} and {b} sit next to each other.",
        "not_adjacent": f"{a} and {b} do not sit next to each other.",
    }[kind]


def _true_clue(rng: random.Random, pos: list[int], n: int) -> list[Any]:
    while True:
        a, b = rng.sample(range(n), 2)
        kind = rng.choice(
            [
                "left_of",
                "next_left",
                "adjacent",
                "not_adjacent",
                "gap",
                "not_seat",
                "end",
                "left_of",
                "gap",
            ]
        )
        clue: list[Any] = [kind, a, b]
        if kind == "gap":
            clue = [kind, a, b, abs(pos[a] - pos[b]) - 1]
        elif kind in ("not_seat", "end"):
            clue = [kind, a, rng.randint(1, n)] if kind == "not_seat" else [kind, a]
        if _holds(clue, pos, n):
            return clue


@ENVIRONMENTS.register("seating_order")
class SeatingOrder(Environment):
    """A seating that meets ordering clues; (clues met/all)^5 credit."""

    size_measure = "number of people"
    tags = ("logic",)
    difficulty_scales = "people in the row: 3 + d//3 (unique solution while n <= 7)"
    size_key = "names"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = 3 + difficulty // 3
        names = people(n)
        order = list(range(n))
        rng.shuffle(order)
        pos = [0] * n
        for seat, person in enumerate(order, start=1):
            pos[person] = seat
        clues: list[list[Any]] = []
        if n <= 7:  # clues that cut the candidate orders, until one is left
            alive = [p for p in itertools.permutations(range(1, n + 1))]
            for _ in range(60 * n):
                if len(alive) <= 1:
                    break
                clue = _true_clue(rng, pos, n)
                kept = [p for p in alive if _holds(clue, list(p), n)]
                if len(kept) < len(alive):
                    clues.append(clue)
                    alive = kept
            for person in range(n):  # fallback: pin seats until unique
                if len(alive) <= 1:
                    break
                clues.append(["seat", person, pos[person]])
                alive = [p for p in alive if p[person] == pos[person]]
        else:
            clues = [_true_clue(rng, pos, n) for _ in range(2 * n)]
        rng.shuffle(clues)
        listed = "\n".join(f"{i + 1}. {_clue_text(c, names)}" for i, c in enumerate(clues))
        prompt = (
            f"{n} people ({', '.join(names)}) sit in a row of {n} seats numbered 1 to {n} "
            f"from left to right, one person per seat. Clues:\n{listed}\n\nFind a seating "
            "that satisfies every clue. Give the names from seat 1 to seat "
            f"{n}, separated by commas."
        )
        gold = ", ".join(names[p] for p in order)
        return Instance(prompt, gold, {"names": names, "clues": clues})

    def check(self, problem: Problem, answer: str) -> Verdict:
        names, clues = problem.data["names"], problem.data["clues"]
        got = parse_names(answer, names)
        if got is None:
            return invalid("the answer names someone who is not in the row")
        n = len(names)
        if len(got) != n or sorted(got) != list(range(n)):
            return invalid("list every person exactly once")
        pos = [0] * n
        for seat, person in enumerate(got, start=1):
            pos[person] = seat
        good = sum(1 for c in clues if _holds(c, pos, n))
        return satisfied_verdict(good, len(clues), "clues are violated")

    def solve(self, problem: Problem) -> str:
        names, clues = problem.data["names"], problem.data["clues"]
        n = len(names)
        pos = [0] * n

        def place(seat: int, free: list[int]) -> bool:  # seat by seat, prune finished clues
            if seat > n:
                return True
            for person in free:
                pos[person] = seat
                consistent = all(_holds(c, pos, n) for c in clues if _placed(c, pos))
                if consistent and place(seat + 1, [p for p in free if p != person]):
                    return True
                pos[person] = 0
            return False

        place(1, list(range(n)))
        return ", ".join(names[p] for p in sorted(range(n), key=lambda p: pos[p]))

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return swap_until_wrong(self, problem, answer)


def _placed(clue: list[Any], pos: list[int]) -> bool:
    people_in = [clue[1]] if clue[0] in ("seat", "not_seat", "end") else clue[1:3]
    return all(pos[p] for p in people_in)
