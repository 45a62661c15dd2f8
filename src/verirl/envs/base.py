"""The environment protocol E = (I, P, R) of RLVE, and the environment registry.

An environment turns ``(difficulty, seed)`` into a :class:`~verirl.types.Problem` (the input
template I filled by the generator P) and scores a model output with a programmatic verifier
R. Writing one means subclassing :class:`Environment` and filling in four methods::

    @register_env
    class Addition(Environment):
        name = "addition"
        family = "arithmetic"
        difficulty_scales = "digits per operand: 1 + difficulty"

        def _generate(self, difficulty, rng) -> Instance: ...   # P and I
        def check(self, problem, answer) -> Verdict: ...        # R on the extracted answer
        def solve(self, problem) -> str: ...                    # an independent solver
        def corrupt(self, problem, answer, rng) -> str: ...     # a surely-wrong answer (tests)

Rules (DESIGN.md rule 3): generation is pure and deterministic — the random source is seeded
from the *string* ``"verirl/<name>/<difficulty>/<seed>"`` (SHA-512 based, so it is the same in
every process, whatever ``PYTHONHASHSEED`` says); verifiers check constraints rather than only
comparing with the stored answer; ``verify`` never raises on any output and keeps the reward in
[-1, 1]; ``Verdict.detail`` never reveals the answer (it doubles as multi-turn feedback).
"""

from __future__ import annotations

import itertools
import math
import random
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from verirl.envs.answers import extract_answer
from verirl.registry import Registry
from verirl.types import Problem, Verdict

# RLVE reward conventions (seed-papers.md §2.3).
WRONG_FORMAT = -1.0
INVALID = -0.5

BOXED_INSTRUCTION = "Put your final answer within \\boxed{}."


@dataclass(frozen=True)
class Instance:
    """What a generator produces: the task text, one reference answer, verifier data."""

    prompt: str
    answer: str
    data: dict[str, Any] = field(default_factory=dict)


class Environment(ABC):
    """Base class of every verifiable environment. Instances are stateless."""

    name: ClassVar[str]
    family: ClassVar[str]
    difficulty_scales: ClassVar[str]
    tags: ClassVar[tuple[str, ...]] = ()
    answer_instruction: ClassVar[str] = BOXED_INSTRUCTION
    size_key: ClassVar[str | None] = None  # the ``data`` entry whose length is :meth:`size`
    # Declared requirements (DESIGN.md rule 8): the proof system whose checker
    # :meth:`verify_batch` uses (None: a pure-Python verifier), and what the verdicts carry
    # beyond a reward ("steps": per-tactic spans for process credit).
    prover: ClassVar[str | None] = None
    produces: ClassVar[frozenset[str]] = frozenset()

    # ---- the generator P and template I --------------------------------------------------
    def generate(self, difficulty: int, seed: int) -> Problem:
        """The problem for ``(difficulty, seed)``: same inputs, same problem, in any process."""
        if isinstance(difficulty, bool) or not isinstance(difficulty, int) or difficulty < 0:
            raise ValueError(f"{self.name}: difficulty must be an integer >= 0, got {difficulty!r}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"{self.name}: seed must be an integer, got {seed!r}")
        inst = self._generate(difficulty, seeded_rng(self.name, difficulty, seed))
        prompt = inst.prompt.rstrip()
        if self.answer_instruction:
            prompt = f"{prompt}\n\n{self.answer_instruction}"
        return Problem(
            env=self.name,
            difficulty=difficulty,
            seed=seed,
            prompt=prompt,
            answer=inst.answer,
            data=inst.data,
        )

    @abstractmethod
    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        """Build one instance at ``difficulty`` using only ``rng`` for randomness."""

    # ---- the verifier R ------------------------------------------------------------------
    def verify(self, problem: Problem, output: str) -> Verdict:
        """Score a full model output. Never raises; reward always in [-1, 1]."""
        try:
            answer = extract_answer(output)
        except Exception:  # extraction is total for str; guard non-str input anyway
            answer = None
        if answer is None:
            return Verdict(WRONG_FORMAT, False, "no final answer found in \\boxed{}")
        try:
            verdict = self.check(problem, answer)
        except ValueError as exc:  # the parsers' way of saying "this is not an answer"
            return Verdict(WRONG_FORMAT, False, f"could not read the answer ({type(exc).__name__})")
        except Exception as exc:  # a verifier bug: never crash the trainer, but count it
            return verifier_error(exc)
        return _clamped(verdict)

    def verify_batch(
        self, problems: Sequence[Problem], outputs: Sequence[str], provers: Any = None
    ) -> list[Verdict]:
        """Verdicts for many outputs. Environments backed by a proof checker override this to
        check the batch together; ``provers`` is the run's
        :class:`~verirl.provers.settings.Provers` (None: default settings)."""
        return [self.verify(p, o) for p, o in zip(problems, outputs, strict=True)]

    @abstractmethod
    def check(self, problem: Problem, answer: str) -> Verdict:
        """Score the extracted answer text (the content of the last ``\\boxed{}``)."""

    # ---- self-test hooks -----------------------------------------------------------------
    @abstractmethod
    def solve(self, problem: Problem) -> str:
        """A correct answer computed from ``problem.data`` by a solver, brute force or the
        construction — never by returning ``problem.answer``."""

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        """A surely-wrong variant of a correct ``answer``. The default shifts the last integer
        in it by a non-zero amount; environments where that can stay valid override this."""
        matches = list(re.finditer(r"-?\d+", answer))
        if not matches:
            return answer + "x"
        m = matches[-1]
        shifted = int(m.group()) + rng.choice([-3, -2, -1, 1, 2, 3])
        return answer[: m.start()] + str(shifted) + answer[m.end() :]

    def size(self, problem: Problem) -> float:
        """A size measure of the instance that grows with difficulty: the length of
        ``problem.data[size_key]`` when the class names one, else the prompt length (override
        for a better measure)."""
        if self.size_key is not None:
            return float(len(problem.data[self.size_key]))
        return float(len(problem.prompt))

    def feedback(self, problem: Problem, output: str, verdict: Verdict) -> str:
        """What a multi-turn refinement loop tells the model after a wrong answer."""
        return verdict.detail or ("correct" if verdict.correct else "not correct yet")


class IntegerAnswer(Environment):
    """Base for environments whose answer is one integer: RLVE's count reward
    (min/max)^β with β = 10 as partial credit, ``correct`` only for the exact value
    (:func:`count_verdict`; ``wrong_detail`` is the feedback on a wrong value).
    Subclasses implement :meth:`solve_int` (independently of ``problem.answer``)."""

    wrong_detail: ClassVar[str] = "the value is not right"

    def check(self, problem: Problem, answer: str) -> Verdict:
        return count_verdict(parse_int(answer), self.solve_int(problem), self.wrong_detail)

    def solve(self, problem: Problem) -> str:
        return str(self.solve_int(problem))

    @abstractmethod
    def solve_int(self, problem: Problem) -> int:
        """The correct integer, computed from ``problem.data``."""


# ---- rewards (RLVE conventions) ----------------------------------------------------------
def ratio_reward(numerator: float, denominator: float, beta: float = 1.0) -> float:
    """(numerator/denominator)^β clipped to [0, 1]; 0 when the denominator is not positive."""
    if denominator <= 0 or numerator <= 0:
        return 0.0
    return float(min(1.0, numerator / denominator) ** beta)


def count_reward(answer: float, gold: float, beta: float = 10.0) -> float:
    """RLVE's (min/max)^β for numeric/count answers: 1 when equal, decays with the gap."""
    if answer == gold:
        return 1.0
    lo, hi = min(abs(answer), abs(gold)), max(abs(answer), abs(gold))
    if hi == 0 or (answer < 0) != (gold < 0):
        return 0.0
    return float((lo / hi) ** beta)


def sequence_reward(answer: list[Any], gold: list[Any], beta: float = 5.0) -> float:
    """RLVE's mean([a_i == g_i])^β for element-wise sequences of the same length."""
    if not gold:
        return 1.0 if not answer else 0.0
    hits = sum(1 for a, g in zip(answer, gold, strict=False) if a == g)
    return float((hits / len(gold)) ** beta)


def satisfied_reward(satisfied: int, total: int, beta: float = 5.0) -> float:
    """RLVE's (satisfied/all)^β for constraint problems."""
    if total <= 0:
        return 1.0
    return float((satisfied / total) ** beta)


def graded(score: float, correct: bool, detail: str = "") -> Verdict:
    """A verdict with partial credit ``score`` in [0, 1].

    Correctness is decided by the caller (exact check), never by the float score: a wrong
    answer keeps a reward strictly below 1 even when (min/max)^β rounds to 1.0.
    """
    if correct:
        return Verdict(1.0, True, detail or "correct")
    score = float(min(1.0 - 1e-6, max(0.0, score)))
    return Verdict(score, False, detail or "partly correct")


def count_verdict(value: float, gold: float, wrong: str) -> Verdict:
    """A numeric answer: correct when ``value == gold``, else the count reward (min/max)^10
    with the feedback ``wrong``."""
    ok = value == gold
    return graded(count_reward(value, gold, 10.0), ok, "correct" if ok else wrong)


def optimum_verdict(value: float, best: float, worse: str, *, minimise: bool = False) -> Verdict:
    """A valid answer to an optimisation task whose objective is ``value``: correct when it
    equals the optimum ``best``, else RLVE's (value/best)^5 when maximising or (best/value)^5
    when minimising, with the feedback ``worse``."""
    ok = value == best
    score = ratio_reward(best, value, 5.0) if minimise else ratio_reward(value, best, 5.0)
    return graded(score, ok, "correct" if ok else worse)


def satisfied_verdict(good: int, total: int, unmet: str) -> Verdict:
    """A constraint answer: correct when all ``total`` constraints hold, else RLVE's
    (satisfied/all)^5 with the feedback ``f"{total - good} {unmet}"`` (e.g. ``unmet`` =
    ``"clauses are false"``)."""
    ok = good == total
    detail = "correct" if ok else f"{total - good} {unmet}"
    return graded(satisfied_reward(good, total, 5.0), ok, detail)


def verifier_error(exc: BaseException) -> Verdict:
    """The verdict for a verifier that raised on an output: the format penalty, marked with
    ``extra["verifier_error"]`` so the reward stage counts it (``reward/verifier_errors``)."""
    what = f"{type(exc).__name__}: {exc}"[:300]
    return Verdict(
        WRONG_FORMAT, False, "the verifier failed on this output", extra={"verifier_error": what}
    )


def invalid(detail: str) -> Verdict:
    return Verdict(INVALID, False, detail)


def wrong_format(detail: str) -> Verdict:
    return Verdict(WRONG_FORMAT, False, detail)


def _clamped(v: Verdict) -> Verdict:
    r = v.reward
    if not isinstance(r, int | float) or math.isnan(r):
        return Verdict(WRONG_FORMAT, False, "verifier produced no numeric reward")
    if -1.0 <= r <= 1.0:
        return v
    return Verdict(
        max(-1.0, min(1.0, float(r))), v.correct, v.detail, v.steps, v.first_failed_step, v.extra
    )


# ---- parsing helpers shared by environments ------------------------------------------------
_INT = re.compile(r"[+-]?\d+")


def parse_int(text: str) -> int:
    """Parse an integer answer, tolerating spaces, thousands separators and a trailing dot.

    Raises ``ValueError`` (caught by :meth:`Environment.verify`) when it is not one integer.
    """
    t = text.strip().replace(",", "").replace("\\,", "").replace(" ", "").rstrip(".")
    if len(t) > 4000 or not _INT.fullmatch(t):
        raise ValueError(f"not an integer: {text[:40]!r}")
    return int(t)


def parse_int_list(text: str) -> list[int]:
    """Parse ``"3, 1, 2"`` / ``"[3,1,2]"`` / ``"3 1 2"`` into integers."""
    t = text.strip().strip("[]()").strip()
    if not t:
        return []
    parts = re.split(r"[,\s;]+", t)
    if len(parts) > 100_000:
        raise ValueError("list too long")
    return [parse_int(p) for p in parts if p]


# ---- corruptions shared by environments (self-test hooks) ---------------------------------
def drop_until_wrong(env: Environment, problem: Problem, answer: str) -> str:
    """Drop items from the front of the ``", "``-separated ``answer`` until ``env`` rejects
    it (for answers that stay valid with some items fewer, like a cover)."""
    items = answer.split(", ")
    while items:
        items = items[1:]
        if not env.check(problem, ", ".join(items)).correct:
            break
    return ", ".join(items)


def swap_until_wrong(env: Environment, problem: Problem, answer: str) -> str:
    """The first swap of two items of the ``", "``-separated ``answer`` that ``env`` rejects
    (for orders that other orders may also satisfy); if none, the list without its first
    item."""
    items = answer.split(", ")
    for i, j in itertools.combinations(range(len(items)), 2):
        swapped = list(items)
        swapped[i], swapped[j] = swapped[j], swapped[i]
        if not env.check(problem, ", ".join(swapped)).correct:
            return ", ".join(swapped)
    return ", ".join(items[1:])


# ---- determinism -------------------------------------------------------------------------
def seeded_rng(name: str, difficulty: int, seed: int) -> random.Random:
    """A ``random.Random`` seeded from a string: identical in every process and machine."""
    return random.Random(f"verirl/{name}/{difficulty}/{seed}")


# ---- registry ----------------------------------------------------------------------------
ENVIRONMENTS: Registry[type[Environment]] = Registry("environment")
_INSTANCES: dict[str, Environment] = {}


def register_env(cls: type[Environment]) -> type[Environment]:
    """Class decorator: register an environment under ``cls.name``."""
    for attr in ("name", "family", "difficulty_scales"):
        if not isinstance(getattr(cls, attr, None), str):
            raise TypeError(f"environment {cls.__qualname__} must set the class attribute {attr}")
    return ENVIRONMENTS.register(cls.name)(cls)


def get_env(name: str) -> Environment:
    """The (shared, stateless) instance of environment ``name``."""
    if name not in _INSTANCES:
        _INSTANCES[name] = ENVIRONMENTS.get(name)()
    return _INSTANCES[name]
