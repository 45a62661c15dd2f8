"""In-process episodes: one in-memory curriculum and verirl's environments.

:class:`LocalGym` implements :class:`~verirl.serve.episode.EpisodeBackend`, so
:class:`~verirl.serve.episode.VerirlEnvironment` runs the same episodes in-process (the
TRL ``environment_factory`` and verifiers adapters, without a server) as ``verirl serve``
does over the wire; :class:`LocalEpisodes` opens those episodes as :class:`LocalSession` s
(the :class:`~verirl.episodes.Episodes` interface the adapters take). Differences from
the server's :class:`~verirl.serve.gym.Gym`: one curriculum (any curriculum name reaches
it), nothing persisted, and every finished episode of an environment the curriculum holds
counts, explicit ones included (the curriculum ignores outcomes outside its window). One
lock guards the curriculum, so environments on several threads share it safely.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from verirl.curriculum import Curriculum, Outcome, Task
from verirl.envs import load_all
from verirl.envs.base import WRONG_FORMAT
from verirl.episodes import MAX_OUTPUT_CHARS, EpisodeSession, episode_module
from verirl.errors import UserInputError
from verirl.serve.gym import Problems, verdict_json
from verirl.serve.settings import ServeConfig
from verirl.types import Problem, Verdict

if TYPE_CHECKING:
    from verirl.serve.episode import VerirlAction, VerirlEnvironment, VerirlObservation


class LocalGym(Problems):
    """Episodes from an in-process curriculum (see the module docstring).

    ``curriculum``: draws the problems of plain resets and is fed every finished episode's
    ``correct`` flag (None: only explicit resets work). ``verifier``: the batched
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
        max_answer_chars: int = MAX_OUTPUT_CHARS,
    ) -> None:
        from verirl.verification.batch import BatchVerifier

        for name, value in (("max_turns", max_turns), ("max_tool_calls", max_tool_calls)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise UserInputError(f"LocalGym: {name} must be an integer >= 1, got {value!r}")
        load_all()
        self.curriculum = curriculum
        self.verifier = verifier or BatchVerifier()
        self.max_turns = max_turns
        self.max_tool_calls = max_tool_calls
        self.settings = ServeConfig(
            default_turns=max_turns,
            default_tool_calls=max_tool_calls,
            max_turns=max(max_turns, max_tool_calls),
            max_answer_chars=max_answer_chars,
            max_body_bytes=max(1_048_576, 12 * max_answer_chars + 65536),
            problem_cache=0,
        )
        self._init_problems()
        self._lock = threading.Lock()
        self.episodes_finished = 0

    # ---- verdicts ---------------------------------------------------------------------
    def verdict(self, problem: Problem, text: str) -> Verdict:
        unreadable = self.unreadable(text)
        if unreadable is not None:
            return unreadable
        verdict = self.verifier.verify([problem], [text])[0]
        if verdict is None:  # not a registered environment: cannot happen after generate
            return Verdict(WRONG_FORMAT, False, f"no verifier for environment {problem.env!r}")
        return verdict

    def verify(
        self, items: Sequence[tuple[Task, str]], curriculum: str | None = None
    ) -> list[dict[str, Any]]:
        out = []
        for task, text in items:
            verdict = self.verdict(self.problem(task.env, task.difficulty, task.seed), text)
            counted = False
            if curriculum is not None:
                counted = self.record_episode(curriculum, task, bool(verdict.correct))
            out.append(verdict_json(verdict) | {"counted": counted})
        return out

    # ---- the curriculum ----------------------------------------------------------------
    def draw(self, curriculum: str) -> Task:
        if self.curriculum is None:
            raise UserInputError(
                "this gym has no curriculum: reset with env, difficulty and seed, or build it "
                "with a curriculum"
            )
        with self._lock:
            return self.curriculum.next_tasks(1)[0]

    def require(self, curriculum: str) -> None:
        """Any name reaches the one curriculum."""

    def record_episode(self, curriculum: str, task: Task, correct: bool) -> bool:
        with self._lock:
            self.episodes_finished += 1
            if self.curriculum is None or task.env not in self.curriculum.environments:
                return False
            self.curriculum.update([Outcome(task.env, task.difficulty, correct)])
            return True

    def window(self, curriculum: str, env: str) -> list[int] | None:
        with self._lock:
            if self.curriculum is None or env not in self.curriculum.environments:
                return None
            low, high = self.curriculum.window(env)
            return [int(low), int(high)]


class LocalEpisodes(LocalGym):
    """Episodes from an in-process curriculum: a :class:`LocalGym` (its arguments) that
    opens :class:`LocalSession` s."""

    def __init__(self, curriculum: Curriculum | None = None, **kwargs: Any) -> None:
        super().__init__(curriculum, **kwargs)

    def session(self) -> LocalSession:
        return LocalSession(self)


class LocalSession(EpisodeSession):
    """One episode stream of a :class:`LocalEpisodes`: a
    :class:`~verirl.serve.episode.VerirlEnvironment` in this process (not thread-safe
    itself; open one per concurrent episode)."""

    def __init__(self, source: LocalGym) -> None:
        super().__init__()
        self.source = source
        self.environment: VerirlEnvironment = episode_module().VerirlEnvironment(source)

    def _reset(self, **kwargs: Any) -> VerirlObservation:
        return self.environment.reset(**kwargs)

    def _send(self, action: VerirlAction) -> VerirlObservation:
        return self.environment.step(action)

    def close(self) -> None:
        self.environment.close()
