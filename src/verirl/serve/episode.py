"""verirl's environments as one OpenEnv environment (``openenv-core`` 0.3.0's
:class:`openenv.core.env_server.interfaces.Environment`), served by openenv-core's own
``HTTPEnvServer``.

An episode::

    reset(curriculum="run-1")            -> a problem drawn by the named curriculum
    reset(env="addition", difficulty=3, seed=7, turns=3)   -> that exact problem
    step({"answer": "... \\boxed{42}"})  -> reward, done, the verdict, and (multi-turn) the
                                            feedback as the next observation

With ``turns`` = K > 1 a wrong answer gets the environment's feedback (never the reference
answer) as the next observation, until it is correct or K turns are used. A *stateful*
environment (``tool_world``) takes one tool call per step: its verifier replays every call
so far, and the observation is the last call's result. When the episode ends, its last
verdict counts towards the curriculum that drew the problem (committed before the reply).

openenv-core 0.3.0 builds a fresh environment for every HTTP ``/reset`` and ``/step``, so
over plain HTTP an episode is one call: ``/step`` names its problem in the action
(``env``, ``difficulty``, ``seed``, optionally ``curriculum``) and is scored as a single
turn. The stateful episode is the ``/ws`` session.
"""

from __future__ import annotations

from typing import Any, ClassVar

from openenv.core.env_server.interfaces import Environment as OpenEnvEnvironment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field, field_validator

from verirl.curriculum import Task
from verirl.errors import UserInputError
from verirl.serve.gym import Gym, verdict_json
from verirl.serve.store import check_name
from verirl.types import Problem

HARD_ANSWER_LIMIT = 4_000_000
"""Characters an action's answer may have before pydantic refuses it (the configured
``serve.max_answer_chars`` is checked after, with a clearer message)."""


class VerirlAction(Action):
    """One model turn. ``answer``: the model's output (for ``tool_world``, one tool call).
    Over plain HTTP ``/step`` (no session) the action names its problem too."""

    answer: str = Field(..., max_length=HARD_ANSWER_LIMIT, description="The model's output.")
    env: str | None = Field(None, max_length=128, description="Problem's environment (HTTP).")
    difficulty: int | None = Field(None, ge=0, description="Problem's difficulty (HTTP).")
    seed: int | None = Field(None, ge=0, lt=2**63, description="Problem's seed (HTTP).")
    curriculum: str | None = Field(
        None, max_length=64, description="Count the verdict towards this curriculum (HTTP)."
    )

    @field_validator("answer")
    @classmethod
    def _text(cls, value: str) -> str:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("answer is not valid Unicode text (a lone surrogate)") from None
        return value


class VerirlObservation(Observation):
    """What the model sees: the prompt (at reset) or the feedback on its last turn."""

    prompt: str = Field("", description="The problem statement with its answer instruction.")
    env: str = ""
    difficulty: int = 0
    seed: int = 0
    answer_format: str = Field("", description="boxed, tagged or code.")
    turn: int = Field(0, description="Turns taken so far.")
    max_turns: int = 1
    feedback: str | None = Field(None, description="The verifier's feedback on the last turn.")
    verdict: dict[str, Any] | None = Field(None, description="The last turn's verdict.")
    curriculum: str | None = None
    counted: bool | None = Field(None, description="Whether the verdict moved the curriculum.")


class VerirlState(State):
    env: str | None = None
    difficulty: int | None = None
    seed: int | None = None
    curriculum: str | None = None
    turn: int = 0
    max_turns: int = 1
    done: bool = False
    rewards: list[float] = Field(default_factory=list)


_RESET_FIELDS = ("env", "difficulty", "turns", "curriculum")


class VerirlEnvironment(OpenEnvEnvironment[VerirlAction, VerirlObservation, VerirlState]):
    """One session's episode state; the :class:`Gym` (verifiers, curricula) is shared."""

    SUPPORTS_CONCURRENT_SESSIONS: ClassVar[bool] = True

    def __init__(self, gym: Gym) -> None:
        super().__init__()
        self.gym = gym
        self._problem: Problem | None = None
        self._task: Task | None = None
        self._state = VerirlState()
        self._turns: list[str] = []

    # ---- OpenEnv interface -----------------------------------------------------------
    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="verirl",
            description=f"{len(self.gym.environments())} verifiable environments with "
            "adaptive difficulty (RLVE); curricula kept server-side",
            version="0.1.0",
        )

    @property
    def state(self) -> VerirlState:
        return self._state

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        **kwargs: Any,
    ) -> VerirlObservation:
        unknown = sorted(set(kwargs) - set(_RESET_FIELDS))
        if unknown:
            raise UserInputError(
                f"unknown reset field(s) {ascii(unknown)[:200]}; known: seed, "
                f"episode_id, {', '.join(_RESET_FIELDS)}"
            )
        if episode_id is not None and not (
            isinstance(episode_id, str) and len(episode_id) <= 255 and _is_text(episode_id)
        ):
            raise UserInputError("episode_id must be a string of at most 255 characters")
        turns = kwargs.get("turns", self.gym.settings.default_turns)
        if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:
            raise UserInputError(f"turns must be an integer >= 1, got {ascii(turns)[:40]}")
        if turns > self.gym.settings.max_turns:
            raise UserInputError(
                f"turns {turns} is above serve.max_turns ({self.gym.settings.max_turns})"
            )
        curriculum = kwargs.get("curriculum")
        if curriculum is not None:
            check_name(curriculum)
        env = kwargs.get("env")
        if env is not None:
            difficulty = kwargs.get("difficulty", 0)
            problem = self.gym.problem(env, difficulty, 0 if seed is None else seed)
            task = Task(problem.env, problem.difficulty, problem.seed)
            if curriculum is not None:
                self.gym.store.require(curriculum)  # must exist to count towards it
        else:
            if seed is not None or "difficulty" in kwargs:
                raise UserInputError(
                    "seed and difficulty need env: a drawn problem's difficulty and seed come "
                    "from the curriculum (name env to ask for one problem)"
                )
            curriculum = "default" if curriculum is None else curriculum
            task = self.gym.store.issue(curriculum, 1)[0]
            problem = self.gym.problem(task.env, task.difficulty, task.seed)
        self._problem, self._task, self._turns = problem, task, []
        self._state = VerirlState(
            episode_id=episode_id,
            env=task.env,
            difficulty=task.difficulty,
            seed=task.seed,
            curriculum=curriculum,
            max_turns=turns,
        )
        return self._observation(prompt=problem.prompt)

    def step(
        self, action: VerirlAction, timeout_s: float | None = None, **kwargs: Any
    ) -> VerirlObservation:
        if action.env is not None or self._problem is None:
            return self._single_turn(action)
        if self._state.done:
            raise UserInputError("the episode is over: reset for a new problem")
        problem, st = self._problem, self._state
        text = self.gym.check_answer(action.answer)
        self._turns.append(text)
        scored = text
        if _is_stateful(problem.env):
            from verirl.envs.base import TURN_SEPARATOR

            scored = TURN_SEPARATOR.join(self._turns)
            if len(scored) > self.gym.settings.max_answer_chars:
                raise UserInputError(
                    "the episode's transcript is longer than serve.max_answer_chars"
                )
        verdict = self.gym.verdict(problem, scored)
        st.turn += 1
        st.step_count += 1
        st.rewards.append(float(verdict.reward))
        st.done = bool(verdict.correct) or st.turn >= st.max_turns
        counted = None
        if st.done and st.curriculum is not None and self._task is not None:
            outcome = [(self._task, bool(verdict.correct))]
            counted = self.gym.store.record(st.curriculum, outcome)[0]
        feedback = None if verdict.correct else self.gym.feedback(problem, scored, verdict)
        return self._observation(
            feedback=feedback,
            verdict=verdict_json(verdict),
            reward=float(verdict.reward),
            counted=counted,
        )

    # ---- helpers -----------------------------------------------------------------------
    def _single_turn(self, action: VerirlAction) -> VerirlObservation:
        if action.env is None or action.difficulty is None or action.seed is None:
            raise UserInputError(
                "no episode in progress: reset first (WebSocket /ws), or name the problem in "
                "the action (env, difficulty, seed) for a one-turn verdict"
            )
        task = Task(action.env, action.difficulty, action.seed)
        self.gym.check_answer(action.answer)  # a step refuses what /verify scores too_long
        result = self.gym.verify([(task, action.answer)], action.curriculum)[0]
        problem = self.gym.problem(task.env, task.difficulty, task.seed)
        counted = result.pop("counted")
        return VerirlObservation(
            env=task.env,
            difficulty=task.difficulty,
            seed=task.seed,
            answer_format=_format(problem.env),
            turn=1,
            max_turns=1,
            feedback=None if result["correct"] else result["detail"],
            verdict=result,
            curriculum=action.curriculum,
            counted=counted if action.curriculum is not None else None,
            done=True,
            reward=result["reward"],
        )

    def _observation(
        self,
        *,
        prompt: str = "",
        feedback: str | None = None,
        verdict: dict[str, Any] | None = None,
        reward: float | None = None,
        counted: bool | None = None,
    ) -> VerirlObservation:
        st = self._state
        assert self._problem is not None
        return VerirlObservation(
            prompt=prompt,
            env=self._problem.env,
            difficulty=self._problem.difficulty,
            seed=self._problem.seed,
            answer_format=_format(self._problem.env),
            turn=st.turn,
            max_turns=st.max_turns,
            feedback=feedback,
            verdict=verdict,
            curriculum=st.curriculum,
            counted=counted,
            done=st.done,
            reward=reward,
        )


def _is_stateful(env: str) -> bool:
    from verirl.envs import get_env

    return bool(get_env(env).stateful)


def _format(env: str) -> str:
    from verirl.envs import get_env

    return get_env(env).answer_format.style


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
