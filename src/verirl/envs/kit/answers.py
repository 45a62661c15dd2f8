"""Answer kinds families share: integer answers whose instance size is stored with the
problem (:class:`SizedInteger`), counts recomputed by a fast method (:class:`FastCount`) and
residues modulo a number (:class:`ResidueAnswer`)."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

from verirl.envs.base import (
    Environment,
    Instance,
    IntegerAnswer,
    count_verdict,
    graded,
    invalid,
    parse_int,
)
from verirl.envs.kit.numbers import decimal_digits
from verirl.types import Problem, Verdict


class SizedInteger(IntegerAnswer):
    """An :class:`~verirl.envs.base.IntegerAnswer` whose size is ``problem.data["size"]``.

    ``max_difficulty`` is 40 for these families: their solvers and cross-checks were timed
    up to there (most instances stop growing earlier, at the caps their families name)."""

    max_difficulty: ClassVar[int] = 40

    def size(self, problem: Problem) -> float:
        return float(problem.data["size"])


class FastCount(IntegerAnswer):
    """A count that the verifier recomputes with :meth:`count` (fast) while :meth:`solve_int`
    enumerates the definition (brute force, independent). ``size`` is ``data[size_param]``.

    The tags are those of RLVE's counting rows; a family of another subject names its own."""

    tags: ClassVar[tuple[str, ...]] = ("rlve", "counting")
    size_param: ClassVar[str] = "n"

    @abstractmethod
    def count(self, data: dict[str, Any]) -> int:
        """The count, by a fast method."""

    def check(self, problem: Problem, answer: str) -> Verdict:
        gold = self.count(dict(problem.data))
        return count_verdict(parse_int(answer), gold, self.wrong_detail)

    def instance(self, prompt: str, data: dict[str, Any]) -> Instance:
        return Instance(prompt, str(self.count(data)), data)

    def size(self, problem: Problem) -> float:
        return float(problem.data[self.size_param])


class ResidueAnswer(Environment):
    """An answer that is a residue modulo ``data["modulus"]``: binary reward, and an answer
    outside ``[0, modulus)`` is invalid. ``is_right`` may check a property instead of
    equality with :meth:`residue`."""

    answer_kind = "integer"
    size_measure = "decimal digits of the numbers in the problem"

    def residue(self, problem: Problem) -> int:
        raise NotImplementedError

    def is_right(self, problem: Problem, value: int) -> bool:
        return value == self.residue(problem)

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer, self.answer_names, problem.data["modulus"])
        if not 0 <= value < problem.data["modulus"]:
            return invalid("the answer must be a remainder, between 0 and the modulus minus 1")
        ok = self.is_right(problem, value)
        return graded(0.0, ok, "correct" if ok else "the remainder is not right")

    def solve(self, problem: Problem) -> str:
        return str(self.residue(problem))

    def size(self, problem: Problem) -> float:
        return decimal_digits(*(v for v in problem.data.values() if isinstance(v, int)))
