"""The environment protocol E = (I, P, R) of RLVE, and the environment registry.

An environment turns ``(difficulty, seed)`` into a :class:`~verirl.types.Problem` (the input
template I filled by the generator P) and scores a model output with a programmatic verifier
R. Writing one means subclassing :class:`Environment` and filling in four methods::

    @ENVIRONMENTS
    class Addition(Environment):
        name = "addition"
        difficulty_scales = "digits per operand: 1 + difficulty"

        def _generate(self, difficulty, rng) -> Instance: ...   # P and I
        def check(self, problem, answer) -> Verdict: ...        # R on the extracted answer
        def solve(self, problem) -> str: ...                    # an independent solver
        def corrupt(self, problem, answer, rng) -> str: ...     # a surely-wrong answer (tests)

An environment's family is the module that defines it (``arithmetic/operations`` for
``envs/arithmetic/operations.py``; :mod:`verirl.envs.families`), never typed by hand.

Rules: generation is pure and deterministic — the random source is seeded from the *string*
``"verirl/<name>/<difficulty>/<seed>"`` (SHA-512 based, so it is the same in every process,
whatever ``PYTHONHASHSEED`` says); verifiers check constraints rather than only comparing with
the stored answer; ``verify`` never raises on any output and keeps the reward in [-1, 1];
``Verdict.detail`` never reveals the answer (it doubles as multi-turn feedback).
"""

from __future__ import annotations

import _random
import itertools
import math
import random
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from hashlib import sha512 as _sha512
from typing import Any, ClassVar, Literal

from verirl.envs.families import module_family, path_family
from verirl.envs.reading import normalize
from verirl.envs.reading.answers import extract_answer
from verirl.envs.reading.formats import BOXED, AnswerFormat
from verirl.envs.reading.normalize import InvalidAnswer
from verirl.errors import UserInputError
from verirl.registry import Registry, Spec
from verirl.types import (
    TURN_SEPARATOR as TURN_SEPARATOR,  # re-exported: environments import it here
)
from verirl.types import Problem, Verdict

# RLVE reward conventions (Zeng et al. 2025, arXiv:2511.07317; its released RLVE-Gym code).
WRONG_FORMAT = -1.0
INVALID = -0.5

BOXED_INSTRUCTION = BOXED.instruction


AnswerKind = Literal["integer", "integer_list", "integer_set", "text"]
"""What an answer is, for the default :meth:`Environment.surface_forms` /
:meth:`Environment.near_misses`: one integer, an ordered list of integers, an unordered
collection (set or multiset) of integers, or anything else ("text": the environment supplies
its own forms)."""


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
    """``<category>/<module>``, from the module that defines the class (set when the class is
    created; :mod:`verirl.envs.families`). Only an environment outside ``verirl.envs`` may set
    it; one that does not gets its module's path."""
    difficulty_scales: ClassVar[str]
    tags: ClassVar[tuple[str, ...]] = ()
    answer_instruction: ClassVar[str] = BOXED_INSTRUCTION
    size_key: ClassVar[str | None] = None  # the ``data`` entry whose length is :meth:`size`
    # Difficulties above this are refused (UserInputError); an environment whose instances
    # stay cheap further up raises it, one that gets slow sooner lowers it.
    max_difficulty: ClassVar[int] = 100
    # Declared requirements (components declare what they need): the proof system whose checker
    # :meth:`verify_batch` uses (None: a pure-Python verifier), and what the verdicts carry
    # beyond a reward ("steps": per-tactic spans for process credit).
    prover: ClassVar[str | None] = None
    produces: ClassVar[frozenset[str]] = frozenset()
    # ---- answer declarations (read by the contract test and the prompt builder) ----------
    answer_format: ClassVar[AnswerFormat] = BOXED
    """How the final answer is written (``\\boxed{}``, ``<answer>``, a fenced block); the
    prompt's system message and few-shot demonstration follow it."""
    answer_kind: ClassVar[AnswerKind] = "text"
    """Drives the default surface forms and near misses; ``"integer_set"`` declares that order
    does not matter, ``"integer_list"`` that it does."""
    clean_answers: ClassVar[bool] = True
    """:meth:`verify` passes the answer through :func:`verirl.envs.reading.normalize.clean`
    (``$…$``, ``\\text{}``, a trailing period, Unicode digits, ...) before :meth:`check`; set False
    where such characters are part of the answer."""
    answer_names: ClassVar[tuple[str, ...]] = ()
    """Variables the prompt names, so that ``x = 16`` (or ``i = 0, j = 2``) is read as the
    value (:func:`verirl.envs.reading.normalize.parse_integer`)."""
    size_measure: ClassVar[str | None] = None
    """What :meth:`size` measures, in words: search-space size, solution length, steps of
    the reference solver, ... (the contract test requires one, and that it grows)."""
    stateful: ClassVar[bool] = False
    """The verifier scores a whole multi-turn transcript (the model's turns joined by
    :data:`TURN_SEPARATOR`) rather than one turn: the multi-turn
    collector then passes it every turn so far (a tool-using world replays the calls)."""
    toolset: ClassVar[str | None] = None
    """A tool environment: the registered toolset (:mod:`verirl.tools`) its episodes call,
    built per episode from :meth:`toolset_params`; its verifier reads the canonical
    transcript of the calls (:mod:`verirl.tools.calls`). ``None``: not a tool environment."""
    unique_answer: ClassVar[bool] = False
    """The prompt promises exactly one answer ("determine who is ..."): the contract test
    then requires :meth:`count_answers` to find exactly one."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        derived = module_family(cls.__module__)
        if derived is None:  # outside the category packages: a plug-in's own, or registered late
            return
        own = cls.__dict__.get("family")
        if own is not None:  # never typed by hand: the file is the name
            raise TypeError(
                f"environment {cls.__qualname__} sets family = {own!r}; an environment in "
                f"{cls.__module__} belongs to the family {derived!r}, named by its module: "
                "remove the attribute"
            )
        cls.family = derived

    # ---- the generator P and template I --------------------------------------------------
    def generate(self, difficulty: int, seed: int) -> Problem:
        """The problem for ``(difficulty, seed)``: same inputs, same problem, in any process.

        Raises :class:`~verirl.errors.UserInputError` naming the difficulty when it is not an
        integer in ``[0, max_difficulty]`` or when the generator cannot build an instance
        that large (e.g. an integer past Python's 4300-digit conversion limit)."""
        if isinstance(difficulty, bool) or not isinstance(difficulty, int) or difficulty < 0:
            raise UserInputError(
                f"{self.name}: difficulty must be an integer >= 0, got {difficulty!r}"
            )
        if difficulty > self.max_difficulty:
            raise UserInputError(
                f"{self.name}: difficulty {difficulty} is above this environment's "
                f"max_difficulty {self.max_difficulty} (instances that large cannot be "
                "generated and verified in bounded time)"
            )
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise UserInputError(f"{self.name}: seed must be an integer, got {seed!r}")
        try:
            inst = self._generate(difficulty, seeded_rng(self.name, difficulty, seed))
        except (OverflowError, MemoryError, RecursionError, ValueError) as exc:
            raise UserInputError(
                f"{self.name}: cannot generate a problem at difficulty {difficulty} "
                f"({type(exc).__name__}: {str(exc)[:120]}); use a lower difficulty"
            ) from exc
        prompt = inst.prompt.rstrip()
        if self.answer_instruction:
            prompt = f"{prompt}\n\n{self.answer_instruction}"
        # positional (env, difficulty, seed, prompt, answer, data): cheaper than keywords
        return Problem(self.name, difficulty, seed, prompt, inst.answer, inst.data)

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
            if self.clean_answers:  # value-preserving cleanup shared by every verifier
                answer = normalize.clean(answer)
            verdict = self.check(problem, answer)
        except InvalidAnswer as exc:  # read, but of the wrong shape: RLVE's invalid answer
            return invalid(str(exc))
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

    # ---- answer-form contract (tests/envs/test_env_contract.py) ---------------------------
    def surface_forms(self, problem: Problem) -> list[str]:
        """Equivalent renderings of a correct answer, each of which must be accepted (written
        inside the answer marker: the contract test passes ``answer_format.render(form)`` to
        :meth:`verify`). The default derives them from :attr:`answer_kind` and
        :meth:`solve`: for an integer ``1\\,576``, ``1{,}576``, ``$1576$``, ``1576.``,
        ``\\text{1576}``, other digit scripts; for lists ``[a, b]``, ``(a, b)``, ``a; b``,
        and for unordered kinds also ``\\{b, a\\}``. Override to add the forms your task
        has (``x = 16``, a word answer's capitalisation, ...)."""
        solution = self.solve(problem)
        if self.answer_kind == "integer":
            return normalize.integer_forms(parse_int(solution))
        if self.answer_kind in ("integer_list", "integer_set"):
            items = [str(v) for v in parse_int_list(solution)]
            return normalize.list_forms(items, ordered=self.answer_kind == "integer_list")
        forms = [solution, f" {solution} "]
        if self.answer_format.style == "boxed" and "{" not in solution and "}" not in solution:
            forms.append(f"\\text{{{solution}}}")
        return forms

    def near_misses(self, problem: Problem) -> list[str]:
        """Close-in-form wrong answers, each of which must be rejected. The default is
        :meth:`corrupt` of the solution plus, by :attr:`answer_kind`, separator traps: for
        an integer ``n`` the digits split by ``, `` / a space / ``;`` (never merged back),
        ``n, n+1``, ``-n``; for lists two items glued together. Override to add the traps
        your task has (a near-equivalent expression, a rounding miss, ...)."""
        solution = self.solve(problem)
        rng = seeded_rng(f"{self.name}/near-miss", problem.difficulty, problem.seed)
        out = [self.corrupt(problem, solution, rng)]
        if self.answer_kind == "integer":
            out += normalize.integer_near_misses(parse_int(solution))
        elif self.answer_kind in ("integer_list", "integer_set"):
            out += normalize.list_near_misses([str(v) for v in parse_int_list(solution)])
        return out

    def count_answers(self, problem: Problem, limit: int = 2) -> int | None:
        """How many distinct correct answers ``problem`` has, counting up to ``limit``;
        ``None`` when the environment does not count them. Environments that set
        :attr:`unique_answer` implement it (e.g. by exhaustive search)."""
        return None

    def problem_space(self, difficulty: int) -> int | None:
        """The number of distinct problems at ``difficulty`` when it is small (the contract
        test then asks for fewer distinct problems among 200 seeds); ``None``: large."""
        return None

    def toolset_params(self, problem: Problem) -> dict[str, Any]:
        """The parameters :attr:`toolset` is built with for ``problem``'s episode (its
        initial state); none by default."""
        return {}

    def feedback(self, problem: Problem, output: str, verdict: Verdict) -> str:
        """What a multi-turn refinement loop tells the model after a wrong answer."""
        return verdict.detail or ("correct" if verdict.correct else "not correct yet")


class IntegerAnswer(Environment):
    """Base for environments whose answer is one integer: RLVE's count reward
    (min/max)^β with β = 10 as partial credit, ``correct`` only for the exact value
    (:func:`count_verdict`; ``wrong_detail`` is the feedback on a wrong value).
    Subclasses implement :meth:`solve_int` (independently of ``problem.answer``)."""

    wrong_detail: ClassVar[str] = "the value is not right"
    answer_kind: ClassVar[AnswerKind] = "integer"
    binary: ClassVar[bool] = False
    """Reward 1 for the exact value and 0 otherwise, no partial credit (the RLVE rows whose
    reward is binary)."""

    def check(self, problem: Problem, answer: str) -> Verdict:
        value = parse_int(answer, self.answer_names)
        gold = self.solve_int(problem)
        if self.binary:
            ok = value == gold
            return graded(0.0, ok, "correct" if ok else self.wrong_detail)
        return count_verdict(value, gold, self.wrong_detail)

    def solve(self, problem: Problem) -> str:
        return str(self.solve_int(problem))

    @abstractmethod
    def solve_int(self, problem: Problem) -> int:
        """The correct integer, computed from ``problem.data``."""


# ---- rewards (RLVE conventions) ----------------------------------------------------------
def ratio_reward(
    numerator: float | Fraction, denominator: float | Fraction, beta: float = 1.0
) -> float:
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
def parse_int(text: str, names: tuple[str, ...] = (), modulus: int | None = None) -> int:
    """Parse an integer answer through :func:`verirl.envs.reading.normalize.parse_integer`: LaTeX
    spacing and thousands separators (``1\\,576``, ``1{,}576``, ``1,576``), ``$…$``,
    ``\\text{}``, a trailing period, any Unicode digits, ``x = 16`` when ``names`` has ``x``,
    ``x \\equiv 16 \\pmod{m}`` when ``modulus`` is ``m``. A separator never merges numbers.

    Raises :class:`~verirl.envs.reading.normalize.InvalidAnswer` (→ −0.5) for several numbers and
    ``ValueError`` (→ −1) when it is not a number at all.
    """
    return normalize.parse_integer(text, names, modulus)


def parse_int_list(
    text: str, names: tuple[str, ...] = (), *, plus: bool = False, whitespace: bool = True
) -> list[int]:
    """Parse ``"3, 1, 2"`` / ``"[3,1,2]"`` / ``"\\{3, 1, 2\\}"`` / ``"3; 1; 2"`` / ``"3 1 2"``
    (and ``"i = 0, j = 2"`` when ``names`` lists i, j; ``"5 + 3"`` when ``plus``) into
    integers, through :func:`verirl.envs.reading.normalize.parse_integers`."""
    return normalize.parse_integers(text, names, plus=plus, whitespace=whitespace)


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
    return _string_seeded(f"verirl/{name}/{difficulty}/{seed}")


def _seed_as_random_does(text: str) -> random.Random:
    """``random.Random(text)`` without its Python-level ``seed``: the same key
    (``random.seed``'s version 2 for a ``str``: the UTF-8 bytes followed by their SHA-512,
    read as a big-endian integer) given straight to the C generator's ``seed``, and
    ``gauss_next`` reset as ``random.Random.seed`` does. Same state, ~1 µs less per problem."""
    data = text.encode()
    rng = _NEW_RANDOM(random.Random)
    _C_SEED(rng, int.from_bytes(data + _sha512(data).digest()))
    rng.gauss_next = None  # type: ignore[attr-defined]  # set by random.Random.seed
    return rng


def _string_seeded_for(probe: str) -> Callable[[str], random.Random]:
    """:func:`_seed_as_random_does` when it gives ``random.Random``'s state on ``probe`` in
    this interpreter (checked once at import), else ``random.Random`` itself."""
    try:
        if _seed_as_random_does(probe).getstate() == random.Random(probe).getstate():
            return _seed_as_random_does
    except Exception:  # another interpreter's random module: the plain constructor
        pass
    return random.Random


_NEW_RANDOM = random.Random.__new__
_C_SEED = _random.Random.seed
_string_seeded = _string_seeded_for("verirl/probe/0/0")


# ---- registry ----------------------------------------------------------------------------
def _is_environment(spec: Spec[type[Environment]]) -> None:
    """An environment registers under its name; one from outside the category packages that
    names no family gets its module's path."""
    cls = spec.part
    cls.name = spec.name
    if not isinstance(getattr(cls, "family", None), str):
        cls.family = path_family(cls.__module__)
    if not isinstance(getattr(cls, "difficulty_scales", None), str):
        raise TypeError(f"environment {cls.__qualname__} must set difficulty_scales")


ENVIRONMENTS: Registry[Spec[type[Environment]]] = Registry("environment", on_add=_is_environment)
"""Environments by name: ``@ENVIRONMENTS.register(name)`` on an :class:`Environment`."""
ON_DEMAND: Registry[Spec[Callable[[str], bool]]] = Registry("on-demand environment prefix")
"""Name prefix → ``register(name) -> bool``: registers an environment of that name on demand
(False for a name it does not know); see :mod:`verirl.envs`."""
_INSTANCES: dict[str, Environment] = {}


def get_env(name: str) -> Environment:
    """The (shared, stateless) instance of environment ``name``."""
    if name not in _INSTANCES:
        _INSTANCES[name] = ENVIRONMENTS.get(name).part()
    return _INSTANCES[name]
