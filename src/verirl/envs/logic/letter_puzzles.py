"""Decoding additions written in symbols: a base-N addition table in letters, and a
cryptarithm with an unknown digit arrangement (RLVE catalogue rows AdditionTable and
Cryptarithmetic; Zeng et al. 2025, "RLVE: Scaling Up Reinforcement Learning for Language
Models with Adaptive Verifiable Environments", arXiv:2511.07317, Appendix A).

Addition table: in base N, each of N letters stands for a different digit; the table gives every
sum X + Y written in letters. The answer is the digit of each letter. The verifier re-encodes
the table with the answer's digits: reproducing it exactly is correct (so any consistent
decoding is accepted); otherwise mean(digit right)^3 as in the row. An answer that is not a
permutation of 0..N−1 is invalid. ``solve`` uses the classic observation that a letter's
digit is the number of two-digit sums in its row. Cryptarithm: a d that makes the addition
true is correct; otherwise mean(d_i = planted d_i)^3.
"""

from __future__ import annotations

import itertools
import random
import string

from verirl.envs.base import (
    ENVIRONMENTS,
    Environment,
    Instance,
    graded,
    invalid,
    parse_int_list,
    sequence_reward,
)
from verirl.types import Problem, Verdict


def _encode(value: int, base: int, letters: list[str], digit_of: dict[str, int]) -> str:
    """``value`` (< 2·base) in base ``base`` with each digit written as its letter."""
    letter = {d: x for x, d in digit_of.items()}
    if value < base:
        return letter[value]
    return letter[value // base] + letter[value % base]


@ENVIRONMENTS.register("addition_table")
class AdditionTable(Environment):
    """Recover the digits of N letters from their base-N addition table."""

    tags = ("rlve", "puzzles")
    difficulty_scales = "base N = 3 + d (at most 26)"
    size_measure = "base N (the table has N² sums)"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n = min(26, 3 + difficulty)
        letters = sorted(rng.sample(string.ascii_uppercase, n))
        digits = list(range(n))
        rng.shuffle(digits)
        digit_of = dict(zip(letters, digits, strict=True))
        table = [
            [_encode(digit_of[x] + digit_of[y], n, letters, digit_of) for y in letters]
            for x in letters
        ]
        header = "+ | " + " ".join(letters)
        rows = "\n".join(f"{x} | " + " ".join(row) for x, row in zip(letters, table, strict=True))
        prompt = (
            f"We work in base {n}. Each of the {n} letters {', '.join(letters)} stands for a "
            f"different digit from 0 to {n - 1}, but which letter is which digit is unknown. The "
            "table below gives, for the letters X (row) and Y (column), the sum X + Y written "
            f"in base {n} with letters "
            f"(a two-letter entry is a two-digit number):\n{header}\n{rows}\n\nGive the digits "
            f"of {', '.join(letters)} in this order, separated by commas."
        )
        data = {"letters": letters, "table": table}
        return Instance(prompt, ", ".join(str(digit_of[x]) for x in letters), data)

    def check(self, problem: Problem, answer: str) -> Verdict:
        letters, table = problem.data["letters"], problem.data["table"]
        n = len(letters)
        got = parse_int_list(answer, tuple(letters))
        if sorted(got) != list(range(n)):
            return invalid(f"give each digit 0..{n - 1} exactly once, one per letter")
        digit_of = dict(zip(letters, got, strict=True))
        ok = all(
            _encode(digit_of[x] + digit_of[y], n, letters, digit_of) == table[i][j]
            for i, x in enumerate(letters)
            for j, y in enumerate(letters)
        )
        if ok:
            return graded(1.0, True, "correct")
        gold = [int(v) for v in self.solve(problem).split(", ")]
        return graded(
            sequence_reward(got, gold, 3.0), False, "the digits do not reproduce the table"
        )

    def solve(self, problem: Problem) -> str:
        table = problem.data["table"]
        return ", ".join(str(sum(1 for entry in row if len(entry) == 2)) for row in table)

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        digits = answer.split(", ")
        digits[0], digits[1] = digits[1], digits[0]
        return ", ".join(digits)

    def size(self, problem: Problem) -> float:
        return float(len(problem.data["letters"]))


@ENVIRONMENTS.register("cryptarithmetic")
class Cryptarithmetic(Environment):
    """A cryptarithm: in base N the digits are written d[0], …, d[N−1] for an unknown
    permutation d of 0..N−1; an addition written with these symbols is given; find d (RLVE
    Cryptarithmetic). Not a permutation → invalid; a d that makes the addition true is
    correct; otherwise mean(d_i right)^3 against the planted d. ``solve``: all permutations."""

    tags = ("rlve", "puzzles")
    difficulty_scales = "base N = 3 + d//3; addends of 2 + d//4 digits"
    size_measure = "base N (N! candidate permutations)"
    answer_kind = "integer_list"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        n, length = 3 + difficulty // 3, 2 + difficulty // 4
        d = list(range(n))
        rng.shuffle(d)
        a, b = rng.randint(n ** (length - 1), n**length - 1), rng.randint(1, n**length - 1)
        index = {v: i for i, v in enumerate(d)}  # symbol index of each digit value

        def spell(x: int) -> list[int]:
            digits = []
            while True:
                digits.append(index[x % n])
                x //= n
                if not x:
                    return digits[::-1]

        terms = [spell(a), spell(b), spell(a + b)]
        shown = [" ".join(f"d[{i}]" for i in t) for t in terms]
        prompt = (
            f"A number system has base {n} and writes its digits as d[0], d[1], ..., "
            f"d[{n - 1}], where d[0], ..., d[{n - 1}] is some unknown arrangement of 0, 1, ..., "
            f"{n - 1}. Numbers are written most significant digit first, and this addition is "
            f"true:\n{shown[0]}\n+ {shown[1]}\n= {shown[2]}\n\nFind d[0], d[1], ..., d[{n - 1}] "
            "and give them in this order, separated by commas."
        )
        data = {"n": n, "terms": terms, "planted": d}
        return Instance(prompt, ", ".join(map(str, d)), data)

    @staticmethod
    def _holds(terms: list[list[int]], d: list[int] | tuple[int, ...], n: int) -> bool:
        values = []
        for t in terms:
            x = 0
            for i in t:
                x = x * n + d[i]
            values.append(x)
        return values[0] + values[1] == values[2]

    def check(self, problem: Problem, answer: str) -> Verdict:
        n, terms = problem.data["n"], problem.data["terms"]
        got = parse_int_list(answer, tuple(f"d[{i}]" for i in range(n)))
        if sorted(got) != list(range(n)):
            return invalid(f"d must be an arrangement of 0..{n - 1}")
        if self._holds(terms, got, n):
            return graded(1.0, True, "correct")
        score = sequence_reward(got, list(problem.data["planted"]), 3.0)
        return graded(score, False, "the addition does not hold")

    def solve(self, problem: Problem) -> str:
        n, terms = problem.data["n"], problem.data["terms"]
        for d in itertools.permutations(range(n)):
            if self._holds(terms, d, n):
                return ", ".join(map(str, d))
        raise ValueError("no arrangement makes the addition true")

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        d = [int(v) for v in answer.split(", ")]
        n, terms = problem.data["n"], problem.data["terms"]
        for i, j in itertools.combinations(range(n), 2):
            e = list(d)
            e[i], e[j] = e[j], e[i]
            if not self._holds(terms, e, n):
                return ", ".join(map(str, e))
        return ", ".join(map(str, d[:-1]))

    def size(self, problem: Problem) -> float:
        return float(problem.data["n"])
