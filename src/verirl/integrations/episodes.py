"""Episodes of verirl's gym behind one small interface, in-process or over the wire.

The adapters for other trainers (OpenEnv, TRL's ``environment_factory``, verifiers) all need
the same four things from the gym: start an episode (a problem drawn from the curriculum, or
one named by ``(env, difficulty, seed)``), take the model's output as a step, end it with a
verdict, and feed that verdict to the curriculum. :class:`CurriculumSource` is that
interface; it hands out one :class:`GymSession` per concurrent episode.

- :class:`LocalSource`: an in-process :class:`~verirl.curriculum.Curriculum` plus verirl's
  environments, verified through :class:`~verirl.verification.batch.BatchVerifier` (the
  per-call deadline; proof environments through their checker). One lock guards the
  curriculum, so sessions on several threads share it safely.
- :class:`verirl.integrations.openenv.OpenEnvSource`: the same episodes from any OpenEnv
  server that serves verirl's action/observation schema (``verirl serve``, or
  :func:`verirl.integrations.openenv.create_app`); there the curriculum lives in the server.

Episode rules (identical on both paths, so an answer gets the same verdict everywhere):

- ``reset()`` draws ``(env, difficulty, seed)`` from the curriculum; ``reset(env, difficulty,
  seed)`` takes them from the caller (all three, or none).
- ``step(output)``: one model turn. A single-answer environment verifies the turn; with
  ``max_turns > 1`` a wrong answer gets the environment's feedback as the next observation
  (multi-turn refinement) until ``max_turns``. A stateful tool environment (``tool_world``)
  takes one tool call per step; the verdict is over the whole transcript so far and the
  observation is the call's result, for up to ``max_tool_calls`` calls.
- The episode ends when an answer is fully correct, the turns are used up, or ``finish()`` is
  called; then the final verdict (the last turn's; a wrong-format verdict when there was no
  turn) is fed to the curriculum once: ``Verdict.correct``, as RLVE adapts on full
  correctness (Zeng et al. 2025, arXiv:2511.07317), counted for every episode of an
  environment the curriculum holds, explicit ones included. An episode left by a new
  ``reset`` or ``close`` counts its last verdict, or nothing when it had none.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from verirl.curriculum import Curriculum, Outcome, Task
from verirl.envs.base import WRONG_FORMAT
from verirl.errors import UnknownNameError, UserInputError
from verirl.types import Problem, Verdict

MAX_OUTPUT_CHARS = 65536
"""The longest model output a step accepts; longer outputs get a wrong-format verdict
(local) or a validation error (over the wire)."""


@dataclass(frozen=True)
class EpisodeStart:
    """What a new episode shows the model: the problem's identity, its prompt (the answer
    instruction included), how the answer is written (``answer_format``: ``boxed``,
    ``tagged`` or ``code``), the tool names of a tool environment (empty otherwise) and the
    number of turns allowed."""

    env: str
    difficulty: int
    seed: int
    prompt: str
    answer_format: str
    tools: tuple[str, ...]
    max_turns: int

    @property
    def identity(self) -> tuple[str, int, int]:
        return (self.env, self.difficulty, self.seed)


@dataclass(frozen=True)
class StepOutcome:
    """One step's result: the verdict's ``reward`` (RLVE's range [-1, 1]), ``correct``, its
    ``detail``, the ``observation`` shown to the model next (feedback, a tool's result, or
    empty once ``done``), ``done`` and the turn just taken (1-based)."""

    reward: float
    correct: bool
    detail: str
    observation: str
    done: bool
    turn: int
    extra: dict[str, Any] = field(default_factory=dict)


class GymSession(Protocol):
    """One episode at a time (reset, steps, finish); see the module docstring."""

    def reset(
        self, env: str | None = None, difficulty: int | None = None, seed: int | None = None
    ) -> EpisodeStart: ...

    def step(self, output: str) -> StepOutcome: ...

    def finish(self) -> StepOutcome: ...

    def close(self) -> None: ...


class CurriculumSource(Protocol):
    """Where episodes come from: :meth:`session` opens one independent episode stream."""

    def session(self) -> GymSession: ...


def explicit_task(
    env: str | None, difficulty: int | None, seed: int | None
) -> tuple[str, int, int] | None:
    """``(env, difficulty, seed)`` when all three are given, ``None`` when none is; raises
    :class:`UserInputError` naming what is missing or of the wrong type otherwise."""
    given = {"env": env, "difficulty": difficulty, "seed": seed}
    if all(v is None for v in given.values()):
        return None
    missing = [k for k, v in given.items() if v is None]
    if missing:
        raise UserInputError(
            f"reset names a problem only with env, difficulty and seed together; missing: "
            f"{', '.join(missing)}"
        )
    if not isinstance(env, str):
        raise UserInputError(f"reset: env must be a string, got {type(env).__name__}")
    for key in ("difficulty", "seed"):
        value = given[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise UserInputError(f"reset: {key} must be an integer >= 0, got {value!r}")
    assert isinstance(difficulty, int) and isinstance(seed, int)
    return (env, difficulty, seed)


class LocalSource:
    """Episodes from an in-process curriculum and verirl's environments.

    ``curriculum``: draws the problems of plain ``reset()`` calls and is fed every finished
    episode's ``correct`` flag (None: only explicit resets work). ``verifier``: the batched
    verification stage (default: inline, 10 s per verification). ``max_turns``: turns of a
    single-answer environment (1: one answer per episode; more: refinement with feedback).
    ``max_tool_calls``: steps of a stateful tool environment.
    """

    def __init__(
        self,
        curriculum: Curriculum | None = None,
        *,
        verifier: Any = None,
        max_turns: int = 1,
        max_tool_calls: int = 16,
    ) -> None:
        from verirl.verification.batch import BatchVerifier

        for name, value in (("max_turns", max_turns), ("max_tool_calls", max_tool_calls)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UserInputError(f"LocalSource: {name} must be an integer >= 1, got {value!r}")
        self.curriculum = curriculum
        self.verifier = verifier or BatchVerifier()
        self.max_turns = max_turns
        self.max_tool_calls = max_tool_calls
        self._lock = threading.Lock()
        self.episodes_finished = 0

    def session(self) -> LocalSession:
        return LocalSession(self)

    # -- shared state (under the lock) ---------------------------------------------------
    def draw(self) -> Task:
        if self.curriculum is None:
            raise UserInputError(
                "this gym has no curriculum: reset with env, difficulty and seed, or build the "
                "source with a curriculum"
            )
        with self._lock:
            return self.curriculum.next_tasks(1)[0]

    def record(self, env: str, difficulty: int, correct: bool) -> None:
        with self._lock:
            self.episodes_finished += 1
            if self.curriculum is not None and env in self.curriculum.environments:
                self.curriculum.update([Outcome(env, difficulty, correct)])

    def window(self, env: str) -> tuple[int, int] | None:
        with self._lock:
            if self.curriculum is None or env not in self.curriculum.environments:
                return None
            return self.curriculum.window(env)

    def verify(self, problem: Problem, text: str) -> Verdict:
        verdict = self.verifier.verify([problem], [text])[0]
        if verdict is None:  # not a registered environment: cannot happen after generate
            return Verdict(WRONG_FORMAT, False, f"no verifier for environment {problem.env!r}")
        return verdict


class LocalSession:
    """One episode stream of a :class:`LocalSource` (not thread-safe itself; open one per
    concurrent episode)."""

    def __init__(self, source: LocalSource) -> None:
        self.source = source
        self.problem: Problem | None = None
        self.start: EpisodeStart | None = None
        self.turns: list[str] = []
        self.last: Verdict | None = None
        self.done = True
        self._recorded = True

    def reset(
        self, env: str | None = None, difficulty: int | None = None, seed: int | None = None
    ) -> EpisodeStart:
        from verirl.envs import ENVIRONMENTS, get_env

        self._abandon()
        task = explicit_task(env, difficulty, seed)
        if task is None:
            drawn = self.source.draw()
            task = (drawn.env, drawn.difficulty, drawn.seed)
        name, d, s = task
        try:
            environment = get_env(name)
        except UnknownNameError:
            raise UserInputError(
                f"reset: unknown environment {name[:100]!r} ({len(ENVIRONMENTS)} are registered; "
                "`verirl envs` lists them)"
            ) from None
        self.problem = environment.generate(d, s)
        self.turns = []
        self.last = None
        self.done = False
        self._recorded = False
        tools: tuple[str, ...] = ()
        if environment.stateful:
            from verirl.envs.agents.tool_world import TOOLS

            tools = tuple(TOOLS)
        limit = self.source.max_tool_calls if environment.stateful else self.source.max_turns
        self.start = EpisodeStart(
            env=name,
            difficulty=d,
            seed=s,
            prompt=self.problem.prompt,
            answer_format=environment.answer_format.style,
            tools=tools,
            max_turns=limit,
        )
        return self.start

    def step(self, output: str) -> StepOutcome:
        from verirl.envs import get_env

        if self.problem is None or self.start is None:
            raise UserInputError("step before reset: start an episode first")
        if self.done:
            raise UserInputError("step after the episode ended: reset to start a new one")
        environment = get_env(self.problem.env)
        if not isinstance(output, str):
            verdict = Verdict(WRONG_FORMAT, False, "the output must be a string")
        elif len(output) > MAX_OUTPUT_CHARS:
            verdict = Verdict(
                WRONG_FORMAT, False, f"the output is longer than {MAX_OUTPUT_CHARS} characters"
            )
        else:
            self.turns.append(output)
            if environment.stateful:
                from verirl.envs.base import TURN_SEPARATOR

                verdict = self.source.verify(self.problem, TURN_SEPARATOR.join(self.turns))
            else:
                verdict = self.source.verify(self.problem, output)
        turn = len(self.turns) if isinstance(output, str) else len(self.turns) + 1
        self.last = verdict
        done = verdict.correct or turn >= self.start.max_turns
        observation = ""
        if environment.stateful:
            observation = verdict.detail  # the call's result (and the goals' progress)
        elif not done:
            observation = environment.feedback(self.problem, output, verdict)
        if done:
            self._end()
        return StepOutcome(
            reward=float(verdict.reward),
            correct=bool(verdict.correct),
            detail=verdict.detail,
            observation=observation,
            done=done,
            turn=turn,
            extra=dict(verdict.extra),
        )

    def finish(self) -> StepOutcome:
        """End the episode now: the final verdict (wrong format when no turn was taken),
        fed to the curriculum unless it already was."""
        if self.problem is None:
            raise UserInputError("finish before reset: start an episode first")
        verdict = self.last or Verdict(WRONG_FORMAT, False, "the episode ended without an answer")
        self.last = verdict
        if not self._recorded:
            self._end()
        return StepOutcome(
            reward=float(verdict.reward),
            correct=bool(verdict.correct),
            detail=verdict.detail,
            observation="",
            done=True,
            turn=len(self.turns),
            extra=dict(verdict.extra),
        )

    def close(self) -> None:
        self._abandon()

    def _abandon(self) -> None:
        """Leave the current episode: a verdict already given counts; an episode with no
        step and no :meth:`finish` (e.g. openenv's stateless HTTP ``/reset``) gave none and
        is not counted."""
        if self.problem is not None and not self._recorded and self.last is not None:
            self._end()

    def _end(self) -> None:
        assert self.problem is not None and self.last is not None
        self.done = True
        if not self._recorded:
            self._recorded = True
            self.source.record(self.problem.env, self.problem.difficulty, bool(self.last.correct))


def tool_call_text(tool: str, args: dict[str, Any]) -> str:
    """One tool call written the way ``tool_world`` reads it (a ```` ```json ```` block)."""
    import json

    return "```json\n" + json.dumps({"tool": tool, "args": args}) + "\n```"
