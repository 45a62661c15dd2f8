"""verirl's gym over OpenEnv (``openenv-core`` 0.3.0); install with ``pip install verirl[openenv]``.

Built on openenv-core's own classes, so any OpenEnv trainer (TRL, SkyRL, torchforge, AReaL,
Unsloth, verifiers' OpenEnv taskset) reaches verirl's environments and adaptive curriculum:

- :class:`VerirlAction`, :class:`VerirlObservation`, :class:`VerirlState`: the schema
  (subclasses of openenv's ``Action`` / ``Observation`` / ``State``; documented below);
- :class:`VerirlEnvironment`: an openenv ``Environment`` (``reset`` / ``step`` / ``state``)
  over one :class:`~verirl.integrations.episodes.LocalSession`; every instance built by one
  :func:`create_app` shares that app's curriculum, so the windows live in the server;
- :func:`create_app`: openenv's own ``create_fastapi_app`` for it (``/health``, ``/schema``,
  ``/reset``, ``/step``, ``/state``, the ``/ws`` session);
- :class:`VerirlEnvClient`: openenv's ``EnvClient`` (WebSocket session) typed for the schema;
- :class:`OpenEnvSource`: a :class:`~verirl.integrations.episodes.CurriculumSource` over that
  client, for the TRL and verifiers adapters (``OpenEnvSource("http://127.0.0.1:8000")``).

The schema (``GET /schema`` serves it as JSON Schema):

- reset: ``{}`` draws ``(env, difficulty, seed)`` from the server's curriculum;
  ``{"env": "addition", "difficulty": 3, "seed": 7}`` names the problem (all three or none).
- action ``VerirlAction``: ``output`` (str, ≤ 65,536 characters) — the model's turn: an
  answer written in the environment's format (``\\boxed{}``, ``<answer>``, a code block), or
  for ``tool_world`` one tool call (a ```` ```json ```` block ``{"tool": ..., "args": {...}}``);
  ``finish`` (bool, default false) — end the episode now (the output is then ignored).
- observation ``VerirlObservation``: ``prompt`` — on reset the problem, afterwards the
  feedback on a wrong answer (refinement) or the tool call's result; ``env``, ``difficulty``,
  ``seed``; ``answer_format``; ``tools`` (tool names, ``tool_world`` only); ``turn`` /
  ``max_turns``; ``correct`` (null before the first step) and ``detail`` (the verdict's
  reason, never the answer); plus openenv's ``reward`` (RLVE's [-1, 1]) and ``done``.
- state ``VerirlState``: openenv's ``episode_id`` / ``step_count`` plus the problem identity,
  ``done``, the last ``reward`` and the environment's curriculum ``window`` ``[low, high]``.
"""

from __future__ import annotations

import uuid
from typing import Any

from verirl.errors import UserInputError
from verirl.integrations.episodes import (
    MAX_OUTPUT_CHARS,
    EpisodeStart,
    LocalSession,
    LocalSource,
    StepOutcome,
    explicit_task,
)

try:
    from openenv.core.client_types import StepResult
    from openenv.core.env_client import EnvClient
    from openenv.core.env_server import Action, Environment, Observation, State
    from openenv.core.env_server.types import EnvironmentMetadata
    from pydantic import Field
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "verirl.integrations.openenv needs openenv-core 0.3: pip install 'verirl[openenv]'"
    ) from exc

TESTED_OPENENV_VERSION = "0.3.0"


class VerirlAction(Action):
    """One model turn (see the module docstring)."""

    output: str = Field(
        default="",
        max_length=MAX_OUTPUT_CHARS,
        description="The model's output: an answer in the environment's answer format, or for "
        'tool_world one tool call as a ```json block {"tool": NAME, "args": {...}}.',
    )
    finish: bool = Field(
        default=False,
        description="End the episode now with the last verdict (a wrong-format verdict when "
        "no turn was taken); the output is ignored.",
    )


class VerirlObservation(Observation):
    """What the model sees (see the module docstring); ``reward`` and ``done`` are openenv's."""

    prompt: str = Field(default="", description="The problem (reset) or the feedback (step).")
    env: str = Field(default="", description="The environment's registered name.")
    difficulty: int = Field(default=0, ge=0)
    seed: int = Field(default=0, ge=0)
    answer_format: str = Field(default="boxed", description="boxed, tagged or code.")
    tools: list[str] = Field(default_factory=list, description="Tool names (tool_world).")
    turn: int = Field(default=0, ge=0, description="Turns taken so far.")
    max_turns: int = Field(default=1, ge=1)
    correct: bool | None = Field(default=None, description="The verdict's fully-correct flag.")
    detail: str = Field(default="", description="The verdict's reason (never the answer).")


class VerirlState(State):
    """openenv's episode id and step count, plus the episode's problem and curriculum window."""

    env: str = ""
    difficulty: int = 0
    seed: int = 0
    done: bool = True
    reward: float | None = None
    window: list[int] | None = None


def _observation(start: EpisodeStart, step: StepOutcome | None = None) -> VerirlObservation:
    if step is None:
        return VerirlObservation(
            prompt=start.prompt,
            env=start.env,
            difficulty=start.difficulty,
            seed=start.seed,
            answer_format=start.answer_format,
            tools=list(start.tools),
            turn=0,
            max_turns=start.max_turns,
            done=False,
            reward=None,
        )
    return VerirlObservation(
        prompt=step.observation,
        env=start.env,
        difficulty=start.difficulty,
        seed=start.seed,
        answer_format=start.answer_format,
        tools=list(start.tools),
        turn=step.turn,
        max_turns=start.max_turns,
        correct=step.correct,
        detail=step.detail[:2000],
        done=step.done,
        reward=step.reward,
    )


class VerirlEnvironment(Environment[VerirlAction, VerirlObservation, VerirlState]):
    """An openenv environment over one episode stream of ``source`` (a
    :class:`~verirl.integrations.episodes.LocalSource`, whose curriculum every instance
    shares). Bad requests (an unknown environment, a difficulty above the environment's
    ``max_difficulty``, a step before reset) raise :class:`~verirl.errors.UserInputError`
    with one line naming what is wrong; model output never raises (it gets a verdict)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, source: LocalSource) -> None:
        super().__init__()
        self.source = source
        self.session: LocalSession = source.session()
        self._state = VerirlState(episode_id=None, step_count=0)

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        env: str | None = None,
        difficulty: int | None = None,
        **kwargs: Any,
    ) -> VerirlObservation:
        if kwargs:
            raise UserInputError(
                f"reset: unknown field(s) {', '.join(sorted(kwargs))[:200]}; "
                "known: env, difficulty, seed, episode_id"
            )
        explicit_task(env, difficulty, seed)  # validates: all three or none
        start = self.session.reset(env, difficulty, seed)
        self._state = VerirlState(
            episode_id=episode_id or str(uuid.uuid4()),
            step_count=0,
            env=start.env,
            difficulty=start.difficulty,
            seed=start.seed,
            done=False,
            window=_window(self.source, start.env),
        )
        return _observation(start)

    def step(
        self, action: VerirlAction, timeout_s: float | None = None, **kwargs: Any
    ) -> VerirlObservation:
        start = self.session.start
        if start is None:
            raise UserInputError("step before reset: start an episode first")
        result = self.session.finish() if action.finish else self.session.step(action.output)
        self._state.step_count += 1
        self._state.done = result.done
        self._state.reward = result.reward
        self._state.window = _window(self.source, start.env)
        return _observation(start, result)

    @property
    def state(self) -> VerirlState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="verirl",
            description="verirl's verifiable environments with an adaptive difficulty "
            "curriculum (RLVE); reset draws a problem, step verifies the model's output",
            version=TESTED_OPENENV_VERSION,
        )

    def close(self) -> None:
        self.session.close()


def _window(source: LocalSource, env: str) -> list[int] | None:
    window = source.window(env)
    return None if window is None else list(window)


def create_app(source: LocalSource, *, max_concurrent_envs: int = 64) -> Any:
    """openenv-core's FastAPI app serving :class:`VerirlEnvironment` over ``source`` (one
    shared curriculum; one environment per ``/ws`` session, a fresh one per HTTP request)."""
    from openenv.core.env_server import create_fastapi_app

    def factory() -> VerirlEnvironment:
        return VerirlEnvironment(source)

    return create_fastapi_app(
        factory, VerirlAction, VerirlObservation, max_concurrent_envs=max_concurrent_envs
    )


class VerirlEnvClient(EnvClient[VerirlAction, VerirlObservation, VerirlState]):
    """openenv's WebSocket client typed for verirl's schema; ``await client.reset()`` /
    ``step(VerirlAction(output=...))``, or ``client.sync()`` for blocking calls."""

    def _step_payload(self, action: VerirlAction) -> dict[str, Any]:
        return action.model_dump(exclude={"metadata"})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[VerirlObservation]:
        obs = dict(payload.get("observation", {}))
        obs["reward"] = payload.get("reward")
        obs["done"] = bool(payload.get("done", False))
        return StepResult(
            observation=VerirlObservation.model_validate(obs),
            reward=payload.get("reward"),
            done=bool(payload.get("done", False)),
        )

    def _parse_state(self, payload: dict[str, Any]) -> VerirlState:
        return VerirlState.model_validate(payload)


class RemoteSession:
    """A :class:`~verirl.integrations.episodes.GymSession` over one OpenEnv ``/ws`` session
    (the server keeps the episode and the curriculum)."""

    def __init__(self, base_url: str, *, message_timeout_s: float = 120.0) -> None:
        self.client = VerirlEnvClient(base_url, message_timeout_s=message_timeout_s).sync()
        self.client.connect()
        self.start: EpisodeStart | None = None
        self.done = True

    def reset(
        self, env: str | None = None, difficulty: int | None = None, seed: int | None = None
    ) -> EpisodeStart:
        task = explicit_task(env, difficulty, seed)
        kwargs: dict[str, Any] = {}
        if task is not None:
            kwargs = {"env": task[0], "difficulty": task[1], "seed": task[2]}
        obs = self.client.reset(**kwargs).observation
        self.start = EpisodeStart(
            env=obs.env,
            difficulty=obs.difficulty,
            seed=obs.seed,
            prompt=obs.prompt,
            answer_format=obs.answer_format,
            tools=tuple(obs.tools),
            max_turns=obs.max_turns,
        )
        self.done = False
        return self.start

    def step(self, output: str) -> StepOutcome:
        if len(output) > MAX_OUTPUT_CHARS:  # the server would refuse it; a verdict instead
            return self.finish_with(-1.0, f"the output is longer than {MAX_OUTPUT_CHARS} chars")
        return self._outcome(self.client.step(VerirlAction(output=output)).observation)

    def finish(self) -> StepOutcome:
        return self._outcome(self.client.step(VerirlAction(finish=True)).observation)

    def finish_with(self, reward: float, detail: str) -> StepOutcome:
        """End the episode on the server (it records its last verdict) and report ``reward``
        for an output that could not be sent."""
        self.finish()
        turn = 0 if self.start is None else self.start.max_turns
        return StepOutcome(reward, False, detail, "", True, turn)

    def _outcome(self, obs: VerirlObservation) -> StepOutcome:
        self.done = obs.done
        return StepOutcome(
            reward=float(obs.reward if obs.reward is not None else -1.0),
            correct=bool(obs.correct),
            detail=obs.detail,
            observation=obs.prompt,
            done=obs.done,
            turn=obs.turn,
        )

    def close(self) -> None:
        self.client.close()


class OpenEnvSource:
    """A :class:`~verirl.integrations.episodes.CurriculumSource` whose episodes come from an
    OpenEnv server at ``base_url`` serving verirl's schema (one ``/ws`` session each)."""

    def __init__(self, base_url: str, *, message_timeout_s: float = 120.0) -> None:
        self.base_url = base_url
        self.message_timeout_s = message_timeout_s

    def session(self) -> RemoteSession:
        return RemoteSession(self.base_url, message_timeout_s=self.message_timeout_s)


__all__ = [
    "TESTED_OPENENV_VERSION",
    "OpenEnvSource",
    "RemoteSession",
    "VerirlAction",
    "VerirlEnvClient",
    "VerirlEnvironment",
    "VerirlObservation",
    "VerirlState",
    "create_app",
]
