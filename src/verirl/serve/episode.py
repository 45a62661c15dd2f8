"""verirl's environments as one OpenEnv environment (``openenv-core`` 0.3.0's
:class:`openenv.core.env_server.interfaces.Environment`), served by openenv-core's own
``HTTPEnvServer``.

An episode::

    reset(curriculum="run-1")            -> a problem drawn by the named curriculum
    reset(env="addition", difficulty=3, seed=7, turns=3)   -> that exact problem
    step({"answer": "... \\boxed{42}"})  -> reward, done, the verdict, and (multi-turn) the
                                            feedback as the next observation
    step({"finish": true})               -> end now with the last verdict

With ``turns`` = K > 1 a wrong answer gets the environment's feedback (never the reference
answer) as the next observation, until it is correct or K turns are used. A *tool*
environment (``tool_world``) offers its tools in the observation (``tool_schemas``, for the
client's chat template, and a worked ``demonstration``) and takes one model reply per step,
written in the model's own tool-call format (``reset(tool_format=...)``: a registered parser,
``chatml_tools`` by default): the server reads the calls, runs them and answers with the
``tool_messages`` to append (the turn logic of :class:`verirl.tools.ToolSession`, the same
as the local loop's); its verifier replays every call so far. The episode ends at a reply
without a call or after ``serve.default_tool_calls`` replies (unless reset says ``turns``).
openenv-core 0.3's MCP routes (``/mcp``) call tools outside ``step`` — no verdict, no
episode, and ``reset`` is a reserved tool name — so the episode's calls travel in the action,
as the reply that carries them. When the episode ends (a correct answer, the turns used up,
``finish``, or left by a new ``reset`` / ``close`` after at least one verdict), its last
verdict counts towards the episode's curriculum once (committed before the reply).

This is verirl's one episode layer: :class:`VerirlEnvironment` runs over an
:class:`EpisodeBackend`, which the server's :class:`~verirl.serve.gym.Gym` (persistent named
curricula) and :class:`~verirl.episodes.local.LocalGym` (one in-memory curriculum, for the
in-process adapters) both implement, so an answer gets the same episode everywhere.

openenv-core 0.3.0 builds a fresh environment for every HTTP ``/reset`` and ``/step``, so
over plain HTTP an episode is one call: ``/step`` names its problem in the action
(``env``, ``difficulty``, ``seed``, optionally ``curriculum``) and is scored as a single
turn. The stateful episode is the ``/ws`` session.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from openenv.core.env_server.interfaces import Environment as OpenEnvEnvironment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field

from verirl.curriculum import Task
from verirl.envs.base import WRONG_FORMAT
from verirl.errors import UserInputError
from verirl.serve.gym import verdict_json
from verirl.serve.settings import ServeConfig
from verirl.serve.store import check_name
from verirl.tools.formats import TOOL_FORMATS, ToolFormat, get_format
from verirl.tools.session import ToolSession
from verirl.types import Problem, Verdict


class EpisodeBackend(Protocol):
    """What an episode needs from the gym: problems, verdicts and a curriculum to draw from
    and count into. :class:`~verirl.serve.gym.Gym` and :class:`~verirl.episodes.local.LocalGym`
    implement it. Bad names and values raise :class:`~verirl.errors.UserInputError`."""

    settings: ServeConfig

    def environments(self) -> list[dict[str, Any]]: ...

    def problem(self, env: object, difficulty: object, seed: object) -> Problem: ...

    def verdict(self, problem: Problem, text: str) -> Verdict: ...

    def feedback(self, problem: Problem, text: str, verdict: Verdict) -> str: ...

    def verify(
        self, items: list[tuple[Task, str]], curriculum: str | None = None
    ) -> list[dict[str, Any]]: ...

    def draw(self, curriculum: str) -> Task: ...

    def require(self, curriculum: str) -> None: ...

    def record_episode(self, curriculum: str, task: Task, correct: bool) -> bool: ...

    def window(self, curriculum: str, env: str) -> list[int] | None: ...


class VerirlAction(Action):
    """One model turn. ``answer``: the model's output (for a tool environment, its reply
    with the calls in the episode's tool format);
    ``finish``: end the episode now with its last verdict (the answer is then ignored).
    Over plain HTTP ``/step`` (no session) the action names its problem too."""

    answer: str = Field(
        "",
        description="The model's output (longer than serve.max_answer_chars, or not Unicode "
        "text: a wrong-format verdict, status too_long or not_text).",
    )
    finish: bool = Field(
        False,
        description="End the episode now with the last verdict (a wrong-format verdict when "
        "no turn was taken); the answer is ignored.",
    )
    env: str | None = Field(None, max_length=128, description="Problem's environment (HTTP).")
    difficulty: int | None = Field(None, ge=0, description="Problem's difficulty (HTTP).")
    seed: int | None = Field(None, ge=0, lt=2**63, description="Problem's seed (HTTP).")
    curriculum: str | None = Field(
        None, max_length=64, description="Count the verdict towards this curriculum (HTTP)."
    )


class VerirlObservation(Observation):
    """What the model sees: the prompt (at reset) or the feedback on its last turn."""

    prompt: str = Field("", description="The problem statement with its answer instruction.")
    env: str = ""
    difficulty: int = 0
    seed: int = 0
    answer_format: str = Field("", description="boxed, tagged or code.")
    tools: list[str] = Field(default_factory=list, description="Tool names (tool_world).")
    tool_schemas: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The tools' JSON schemas, for apply_chat_template(tools=...) (at reset).",
    )
    tool_format: str | None = Field(
        None, description="The tool-call format the server reads replies in (tool episodes)."
    )
    demonstration: list[dict[str, Any]] = Field(
        default_factory=list,
        description="A worked example as chat messages, shown before the task (at reset).",
    )
    assistant: dict[str, Any] | None = Field(
        None, description="The last reply as the server read it (content and tool_calls)."
    )
    tool_messages: list[dict[str, Any]] = Field(
        default_factory=list,
        description="The messages answering the last reply: tool results, or a user message "
        "saying why its calls could not be read. Append them after the reply.",
    )
    turn: int = Field(0, description="Turns taken so far.")
    max_turns: int = 1
    feedback: str | None = Field(
        None,
        description="What the model sees next: the environment's feedback on a wrong answer, "
        "or a tool call's result (never the reference answer).",
    )
    correct: bool | None = Field(None, description="The last verdict's fully-correct flag.")
    detail: str = Field("", description="The last verdict's reason (never the answer).")
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
    reward: float | None = Field(None, description="The last verdict's reward.")
    window: list[int] | None = Field(
        None, description="The curriculum's difficulty window [low, high] for this env."
    )


_RESET_FIELDS = ("env", "difficulty", "turns", "curriculum", "tool_format")


class VerirlEnvironment(OpenEnvEnvironment[VerirlAction, VerirlObservation, VerirlState]):
    """One session's episode state over a shared :class:`EpisodeBackend` (verifiers,
    curricula). Bad requests raise :class:`~verirl.errors.UserInputError` with one line
    naming what is wrong; model output never raises (it gets a verdict)."""

    SUPPORTS_CONCURRENT_SESSIONS: ClassVar[bool] = True

    def __init__(self, gym: EpisodeBackend) -> None:
        super().__init__()
        self.gym = gym
        self._problem: Problem | None = None
        self._task: Task | None = None
        self._state = VerirlState()
        self._turns: list[str] = []
        self._last: Verdict | None = None
        self._counted = True
        self._tools: ToolSession | None = None

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
        settings = self.gym.settings
        turns = kwargs.get("turns")
        if turns is not None:
            if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:
                raise UserInputError(f"turns must be an integer >= 1, got {ascii(turns)[:40]}")
            if turns > settings.max_turns:
                raise UserInputError(
                    f"turns {turns} is above serve.max_turns ({settings.max_turns})"
                )
        curriculum = kwargs.get("curriculum")
        if curriculum is not None:
            check_name(curriculum)
        fmt = _tool_format(kwargs.get("tool_format"))
        env = kwargs.get("env")
        if env is not None:
            difficulty = kwargs.get("difficulty", 0)
            problem = self.gym.problem(env, difficulty, 0 if seed is None else seed)
            task = Task(problem.env, problem.difficulty, problem.seed)
            if curriculum is not None:
                self.gym.require(curriculum)  # must exist to count towards it
        else:
            if seed is not None or "difficulty" in kwargs:
                raise UserInputError(
                    "seed and difficulty need env: a drawn problem's difficulty and seed come "
                    "from the curriculum (name env to ask for one problem)"
                )
            curriculum = "default" if curriculum is None else curriculum
            task = self.gym.draw(curriculum)
            problem = self.gym.problem(task.env, task.difficulty, task.seed)
        self._abandon()  # the episode left behind counts its last verdict, if it had one
        stateful = _is_stateful(problem.env)
        if turns is None:
            turns = settings.default_tool_calls if stateful else settings.default_turns
        self._close_tools()
        self._tools = _tool_session(problem, fmt)
        self._problem, self._task, self._turns = problem, task, []
        self._last, self._counted = None, False
        self._state = VerirlState(
            episode_id=episode_id,
            env=task.env,
            difficulty=task.difficulty,
            seed=task.seed,
            curriculum=curriculum,
            max_turns=turns,
            window=self._window(),
        )
        if self._tools is None:
            return self._observation(prompt=problem.prompt)
        return self._observation(
            prompt=problem.prompt,
            tool_schemas=self._tools.schemas(),
            demonstration=self._tools.demonstration(),
        )

    def step(
        self, action: VerirlAction, timeout_s: float | None = None, **kwargs: Any
    ) -> VerirlObservation:
        if action.env is not None or self._problem is None:
            return self._single_turn(action)
        if self._state.done:
            raise UserInputError("the episode is over (step after the episode ended): reset")
        if action.finish:
            return self._finish()
        problem, st = self._problem, self._state
        text = action.answer
        self._turns.append(text)
        if self._tools is not None:
            return self._tool_step(text)
        scored = text
        stateful = _is_stateful(problem.env)
        if stateful:
            from verirl.types import TURN_SEPARATOR

            scored = TURN_SEPARATOR.join(self._turns)  # too_long past max_answer_chars
        verdict = self.gym.verdict(problem, scored)
        self._last = verdict
        st.turn += 1
        st.step_count += 1
        st.rewards.append(float(verdict.reward))
        st.reward = float(verdict.reward)
        st.done = bool(verdict.correct) or st.turn >= st.max_turns
        counted = self._count() if st.done else None
        if stateful:
            feedback: str | None = verdict.detail  # the call's result (and the goals' progress)
        else:
            feedback = None if verdict.correct else self.gym.feedback(problem, scored, verdict)
        return self._observation(verdict=verdict, feedback=feedback, counted=counted)

    def close(self) -> None:
        self._abandon()
        self._close_tools()

    # ---- helpers -----------------------------------------------------------------------
    def _tool_step(self, text: str) -> VerirlObservation:
        """One reply of a tool episode: read and answered by the episode's
        :class:`~verirl.tools.ToolSession`, the verdict over the calls so far."""
        assert self._tools is not None and self._problem is not None
        st = self._state
        outcome = self._tools.take_turn(text)
        verdict = self.gym.verdict(self._problem, self._tools.transcript())
        self._last = verdict
        st.turn += 1
        st.step_count += 1
        st.rewards.append(float(verdict.reward))
        st.reward = float(verdict.reward)
        st.done = outcome.final or st.turn >= st.max_turns
        counted = self._count() if st.done else None
        return self._observation(
            verdict=verdict,
            feedback=outcome.observation,
            counted=counted,
            assistant=outcome.reply.message(text),
            tool_messages=list(outcome.messages),
        )

    def _close_tools(self) -> None:
        if self._tools is not None:
            self._tools.close()
            self._tools = None

    def _finish(self) -> VerirlObservation:
        """End the episode now: its last verdict (wrong format when no turn was taken)."""
        st = self._state
        if self._last is None:
            self._last = Verdict(WRONG_FORMAT, False, "the episode ended without an answer")
            st.rewards.append(float(WRONG_FORMAT))
        st.reward = float(self._last.reward)
        st.step_count += 1
        st.done = True
        return self._observation(verdict=self._last, counted=self._count())

    def _abandon(self) -> None:
        """Leave the current episode: a verdict already given counts; an episode with no
        verdict (e.g. openenv's stateless HTTP ``/reset``) is not counted."""
        if self._problem is not None and not self._counted and self._last is not None:
            self._state.done = True
            self._count()

    def _count(self) -> bool | None:
        """Count the last verdict towards the episode's curriculum, once."""
        if self._counted or self._task is None or self._last is None:
            return None
        self._counted = True
        name = self._state.curriculum
        if name is None:
            return None
        counted = self.gym.record_episode(name, self._task, bool(self._last.correct))
        self._state.window = self._window()
        return counted

    def _window(self) -> list[int] | None:
        st = self._state
        if st.curriculum is None or st.env is None:
            return None
        return self.gym.window(st.curriculum, st.env)

    def _single_turn(self, action: VerirlAction) -> VerirlObservation:
        if action.env is None or action.difficulty is None or action.seed is None:
            raise UserInputError(
                "no episode in progress (step before reset): reset first (WebSocket /ws), or "
                "name the problem in the action (env, difficulty, seed) for a one-turn verdict"
            )
        task = Task(action.env, action.difficulty, action.seed)
        result = self.gym.verify([(task, action.answer)], action.curriculum)[0]
        problem = self.gym.problem(task.env, task.difficulty, task.seed)
        counted = result.pop("counted")
        return VerirlObservation(
            env=task.env,
            difficulty=task.difficulty,
            seed=task.seed,
            answer_format=_format(problem.env),
            tools=_tools(problem.env),
            turn=1,
            max_turns=1,
            feedback=None if result["correct"] else result["detail"],
            correct=bool(result["correct"]),
            detail=str(result["detail"])[:2000],
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
        verdict: Verdict | None = None,
        counted: bool | None = None,
        **tools: Any,
    ) -> VerirlObservation:
        st = self._state
        assert self._problem is not None
        return VerirlObservation(
            prompt=prompt,
            env=self._problem.env,
            difficulty=self._problem.difficulty,
            seed=self._problem.seed,
            answer_format=_format(self._problem.env),
            tools=(
                _tools(self._problem.env)
                if self._tools is None
                else sorted(s["function"]["name"] for s in self._tools.schemas())
            ),
            turn=st.turn,
            max_turns=st.max_turns,
            feedback=feedback,
            correct=None if verdict is None else bool(verdict.correct),
            detail="" if verdict is None else verdict.detail[:2000],
            verdict=None if verdict is None else verdict_json(verdict),
            curriculum=st.curriculum,
            counted=counted,
            done=st.done,
            reward=None if verdict is None else float(verdict.reward),
            tool_format=None if self._tools is None else self._tools.fmt.name,
            **tools,
        )


DEFAULT_TOOL_FORMAT = "chatml_tools"
"""The tool-call format a tool episode reads replies in unless reset names one (the default
model's, SmolLM2 with the project's ``chatml_tools`` template)."""


def _tool_format(name: object) -> ToolFormat:
    if name is None:
        return get_format(DEFAULT_TOOL_FORMAT)
    if not isinstance(name, str) or name not in TOOL_FORMATS:
        raise UserInputError(
            f"unknown tool_format {ascii(name)[:60]}; known: {', '.join(TOOL_FORMATS.names())}"
        )
    return get_format(name)


def _tool_session(problem: Problem, fmt: ToolFormat) -> ToolSession | None:
    """The tools of a tool environment's episode (``None`` for any other environment)."""
    from verirl.envs import get_env
    from verirl.tools import build_toolset

    env = get_env(problem.env)
    if env.toolset is None:
        return None
    return ToolSession([build_toolset(env.toolset, env.toolset_params(problem))], fmt)


def _is_stateful(env: str) -> bool:
    from verirl.envs import get_env

    return bool(get_env(env).stateful)


def _tools(env: str) -> list[str]:
    from verirl.envs import get_env
    from verirl.tools.toolset import TOOLSETS, tool_names

    name = get_env(env).toolset
    return [] if name is None else tool_names(TOOLSETS.get(name).part)


def _format(env: str) -> str:
    from verirl.envs import get_env

    return get_env(env).answer_format.style


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
