"""Countdown: combine given numbers with + − × ÷ and parentheses to hit a target exactly, or
to get as close to it as possible (RLVE catalogue rows CountdownEqual and CountdownClose; Zeng
et al. 2025, "RLVE: Scaling Up Reinforcement Learning for Language Models with Adaptive
Verifiable Environments", arXiv:2511.07317, Appendix A).

The answer is an arithmetic expression. It is read by a small bounded recursive-descent
parser over exact fractions (never ``eval``); an expression that does not use each given
number exactly once, uses a unary minus, or divides by zero is invalid (−0.5). CountdownEqual
is right or wrong; CountdownClose scores (1 + best gap)/(1 + answer gap) — RLVE's
1/(1 + |answer − target|) rescaled so that the best reachable value scores 1, which is RLVE's
accuracy threshold. The best gap comes from a subset dynamic programme over all values;
``solve`` is the classic pick-two-and-combine search, so the two cross-check in the tests.
"""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from fractions import Fraction

from verirl.envs.base import ENVIRONMENTS, Environment, Instance, graded, invalid
from verirl.envs.reading import normalize
from verirl.envs.reading.normalize import InvalidAnswer
from verirl.types import Problem, Verdict

TAGS = ("rlve", "arithmetic", "search")
MAX_TOKENS = 200
_TOKEN = re.compile(r"\s*(\d+|[-+*/()])")


def tokenize(text: str) -> list[str]:
    """Tokens of an arithmetic answer; LaTeX operators and an ``= value`` tail are accepted."""
    t = normalize.clean(text)
    t = re.sub(r"\\(?:times|cdot|ast)", "*", t).replace("×", "*").replace("·", "*")
    t = re.sub(r"\\div", "/", t).replace("÷", "/").replace("−", "-")
    t = t.replace("[", "(").replace("]", ")").replace("{", "(").replace("}", ")")
    t = re.sub(r"=\s*-?\d+(?:/\d+)?\s*$", "", t).strip()
    tokens, pos = [], 0
    while pos < len(t):
        m = _TOKEN.match(t, pos)
        if m is None:
            if t[pos:].strip() == "":
                break
            raise ValueError("not an arithmetic expression")
        tokens.append(m.group(1))
        pos = m.end()
        if len(tokens) > MAX_TOKENS:
            raise InvalidAnswer("the expression is too long")
    if not tokens:
        raise ValueError("empty expression")
    return tokens


def evaluate(tokens: list[str]) -> tuple[Fraction, list[int]]:
    """(value, numbers used) of a token list; :class:`InvalidAnswer` for a unary minus, a
    division by zero or unbalanced parentheses."""
    pos = 0
    used: list[int] = []

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def expr(depth: int) -> Fraction:
        nonlocal pos
        value = term(depth)
        while peek() in ("+", "-"):
            op = tokens[pos]
            pos += 1
            rhs = term(depth)
            value = value + rhs if op == "+" else value - rhs
        return value

    def term(depth: int) -> Fraction:
        nonlocal pos
        value = atom(depth)
        while peek() in ("*", "/"):
            op = tokens[pos]
            pos += 1
            rhs = atom(depth)
            if op == "/" and rhs == 0:
                raise InvalidAnswer("division by zero")
            value = value * rhs if op == "*" else value / rhs
        return value

    def atom(depth: int) -> Fraction:
        nonlocal pos
        if depth > 50:
            raise InvalidAnswer("too deeply nested")
        tok = peek()
        if tok == "(":
            pos += 1
            value = expr(depth + 1)
            if peek() != ")":
                raise InvalidAnswer("unbalanced parentheses")
            pos += 1
            return value
        if tok is not None and tok.isdigit():
            pos += 1
            if len(tok) > 12:
                raise InvalidAnswer("a number that is not given")
            used.append(int(tok))
            return Fraction(int(tok))
        raise InvalidAnswer("each operator needs a number or a parenthesis on both sides")

    value = expr(0)
    if pos != len(tokens):
        raise InvalidAnswer("unbalanced parentheses")
    return value, used


def reachable(numbers: list[int]) -> dict[Fraction, str]:
    """Every value of an expression using each number exactly once, with one expression for
    it: a dynamic programme over subsets (combining the values of complementary parts)."""
    n = len(numbers)
    table: dict[int, dict[Fraction, str]] = {
        1 << i: {Fraction(v): str(v)} for i, v in enumerate(numbers)
    }
    for mask in range(1, 1 << n):
        if mask in table:
            continue
        out: dict[Fraction, str] = {}
        sub = (mask - 1) & mask
        while sub:
            rest = mask ^ sub
            if sub < rest:  # each split once; both orders are tried below
                for (a, ea), (b, eb) in itertools.product(table[sub].items(), table[rest].items()):
                    for value, text in _combine(a, ea, b, eb):
                        out.setdefault(value, text)
            sub = (sub - 1) & mask
        table[mask] = out
    return table[(1 << n) - 1]


def _combine(a: Fraction, ea: str, b: Fraction, eb: str) -> list[tuple[Fraction, str]]:
    out = [(a + b, f"({ea} + {eb})"), (a * b, f"({ea} * {eb})")]
    out += [(a - b, f"({ea} - {eb})"), (b - a, f"({eb} - {ea})")]
    if b:
        out.append((a / b, f"({ea} / {eb})"))
    if a:
        out.append((b / a, f"({eb} / {ea})"))
    return out


def _strip_outer(text: str) -> str:
    """``(a + b)`` → ``a + b``, but ``(a) * (b)`` stays."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0 and i < len(text) - 1:
            return text
    return text[1:-1]


def pairwise_search(numbers: list[int], target: int, stop_at_exact: bool) -> tuple[Fraction, str]:
    """(gap, expression) closest to ``target`` by the classic Countdown search: pick two
    items, combine them, recurse (every binary tree arises this way); multisets already
    explored are skipped."""
    best: list[tuple[Fraction, str]] = []
    seen: set[tuple[Fraction, ...]] = set()

    def search(items: list[tuple[Fraction, str]]) -> bool:
        key = tuple(sorted(v for v, _ in items))
        if key in seen:
            return False
        seen.add(key)
        if len(items) == 1:
            gap = abs(items[0][0] - target)
            if not best or gap < best[0][0]:
                best[:] = [(gap, items[0][1])]
            return stop_at_exact and gap == 0
        for i, j in itertools.combinations(range(len(items)), 2):
            rest = [x for k, x in enumerate(items) if k not in (i, j)]
            for pick in _combine(*items[i], *items[j]):
                if search([*rest, pick]):
                    return True
        return False

    search([(Fraction(v), str(v)) for v in numbers])
    return best[0]


class _Countdown(Environment):
    tags = TAGS
    size_measure = "number of given numbers"

    def read(self, problem: Problem, answer: str) -> Fraction | Verdict:
        value, used = evaluate(tokenize(answer))
        if Counter(used) != Counter(problem.data["numbers"]):
            return invalid("use each given number exactly once (and no other number)")
        return value

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        return f"{answer} + 1"  # uses a number that is not given

    def surface_forms(self, problem: Problem) -> list[str]:
        s = self.solve(problem)
        target = problem.data["target"]
        forms = [s, s.replace("*", "\\times").replace("/", "\\div"), f"({s})"]
        if problem.data.get("exact", True):
            forms.append(f"{s} = {target}")
        return forms

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["numbers"]))


@ENVIRONMENTS.register("countdown_equal")
class CountdownEqual(_Countdown):
    """Hit the target exactly (RLVE CountdownEqual); right or wrong."""

    difficulty_scales = "3 + d//6 numbers (at most 6), each 1..10 + 2d; target from a random tree"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(6, 3 + difficulty // 6)
        while True:
            numbers = [rng.randint(1, 10 + 2 * difficulty) for _ in range(n)]
            value, text = self._random_tree(rng, list(numbers))
            if value.denominator == 1 and 0 < value <= 10**6:
                break
        target = int(value)
        prompt = (
            f"You are given the numbers {', '.join(map(str, numbers))} and the target "
            f"{target}. Write an arithmetic expression that uses each given number exactly once "
            "(and no other numbers), with +, -, *, / and parentheses, whose value is exactly "
            f"{target}. Division is exact (intermediate results may be fractions); a minus "
            "sign may only stand between two operands."
        )
        data = {"numbers": numbers, "target": target}
        return Instance(prompt, _strip_outer(text), data)

    @staticmethod
    def _random_tree(rng: random.Random, numbers: list[int]) -> tuple[Fraction, str]:
        items = [(Fraction(v), str(v)) for v in numbers]
        rng.shuffle(items)
        while len(items) > 1:
            i, j = rng.sample(range(len(items)), 2)
            (a, ea), (b, eb) = items[i], items[j]
            options = _combine(a, ea, b, eb)
            pick = rng.choice(options)
            items = [x for k, x in enumerate(items) if k not in (i, j)] + [pick]
        return items[0]

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = self.read(problem, answer)
        if isinstance(value, Verdict):
            return value
        ok = value == problem.data["target"]
        return graded(0.0, ok, "correct" if ok else "the expression does not reach the target")

    def solve(self, problem: Problem) -> str:
        gap, text = pairwise_search(list(problem.data["numbers"]), problem.data["target"], True)
        if gap:
            raise ValueError("target not reachable")
        return _strip_outer(text)


@ENVIRONMENTS.register("countdown_close")
class CountdownClose(_Countdown):
    """Get as close to the target as possible (RLVE CountdownClose); (1 + best gap)/(1 + gap),
    correct only at the best reachable gap."""

    difficulty_scales = "3 + d//8 numbers (at most 4), each 1..10 + 2d; target up to 100 + 50d"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(4, 3 + difficulty // 8)
        numbers = [rng.randint(1, 10 + 2 * difficulty) for _ in range(n)]
        target = rng.randint(10, 100 + 50 * difficulty)
        values = reachable(numbers)
        best_value = min(values, key=lambda v: (abs(v - target), v))
        prompt = (
            f"You are given the numbers {', '.join(map(str, numbers))} and the target "
            f"{target}. Write an arithmetic expression that uses each given number exactly once "
            "(and no other numbers), with +, -, *, / and parentheses, whose value is as close "
            f"as possible to {target}. Division is exact (results may be fractions); a minus "
            "sign may only stand between two operands."
        )
        data = {"numbers": numbers, "target": target, "best_gap": str(abs(best_value - target))}
        data["exact"] = False
        return Instance(prompt, _strip_outer(values[best_value]), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = self.read(problem, answer)
        if isinstance(value, Verdict):
            return value
        gap = abs(value - problem.data["target"])
        best = Fraction(problem.data["best_gap"])
        ok = gap == best
        score = float((1 + best) / (1 + gap))
        return graded(score, ok, "correct" if ok else "a closer value can be reached")

    def solve(self, problem: Problem) -> str:
        data = problem.data
        return _strip_outer(pairwise_search(list(data["numbers"]), data["target"], False)[1])
