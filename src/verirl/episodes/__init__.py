"""Episodes of verirl's gym behind one small interface, in-process or over the wire.

The adapters for other trainers (TRL's ``environment_factory``, verifiers) all need the same
four things from the gym: start an episode (a problem drawn from the curriculum, or one named
by ``(env, difficulty, seed)``), take the model's output as a step, end it with a verdict,
and feed that verdict to the curriculum. :class:`Episodes` is that interface; it hands out
one :class:`GymSession` per concurrent episode.

The episodes themselves are :class:`verirl.serve.episode.VerirlEnvironment`'s, the one
episode layer ``verirl serve`` runs too; a session only translates its observations into
:class:`EpisodeStart` / :class:`StepOutcome`:

- :class:`verirl.episodes.local.LocalEpisodes`: in-process episodes, over a
  :class:`~verirl.episodes.local.LocalGym` (an in-process
  :class:`~verirl.curriculum.Curriculum` plus verirl's environments, verified through
  :class:`~verirl.verification.batch.BatchVerifier`), each session a ``VerirlEnvironment``
  over it in this process.
- :class:`verirl.integrations.openenv.OpenEnvEpisodes`: the same episodes from a ``verirl
  serve`` process over OpenEnv's ``/ws`` session; there the curriculum lives in the server.

Episode rules (identical on both paths, so an answer gets the same verdict everywhere):

- ``reset()`` draws ``(env, difficulty, seed)`` from the curriculum; ``reset(env, difficulty,
  seed)`` takes them from the caller (all three, or none).
- ``step(output)``: one model turn. A single-answer environment verifies the turn; with
  ``max_turns > 1`` a wrong answer gets the environment's feedback as the next observation
  (multi-turn refinement) until ``max_turns``. A tool environment (``tool_world``) takes one
  reply per step, its calls written in the session's ``tool_format``; the verdict is over all
  calls so far and the observation is the calls' results (also as chat messages,
  ``StepOutcome.messages``), for up to ``max_tool_calls`` replies; a reply without a call
  ends the episode.
- The episode ends when an answer is fully correct, the turns are used up, or ``finish()`` is
  called; then the final verdict (the last turn's; a wrong-format verdict when there was no
  turn) is fed to the curriculum once: ``Verdict.correct``, as RLVE adapts on full
  correctness (Zeng et al. 2025, arXiv:2511.07317). Locally every episode of an environment
  the curriculum holds counts, explicit ones included; the server counts an episode whose
  problem its curriculum issued (a GRPO group's repeats of a drawn problem included). An
  episode left by a new ``reset`` or ``close`` counts its last verdict, or nothing when it
  had none.
- An output longer than ``MAX_OUTPUT_CHARS`` is not sent: the episode ends with a
  wrong-format verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from verirl.envs.base import WRONG_FORMAT
from verirl.errors import UserInputError

if TYPE_CHECKING:
    from verirl.serve.episode import VerirlAction, VerirlObservation

__all__ = [
    "MAX_OUTPUT_CHARS",
    "EpisodeSession",
    "EpisodeStart",
    "Episodes",
    "GymSession",
    "StepOutcome",
    "explicit_task",
    "tool_call_reply",
]

MAX_OUTPUT_CHARS = 65536
"""The longest model output an episode step takes (``serve.max_answer_chars``'s default)."""


@dataclass(frozen=True)
class EpisodeStart:
    """What a new episode shows the model: the problem's identity, its prompt (the answer
    instruction included), how the answer is written (``answer_format``: ``boxed``,
    ``tagged``, ``code`` or ``tools``), the tool names of a tool environment (empty otherwise)
    and the number of turns allowed; for a tool environment also the tools' JSON schemas (for
    the chat template's ``tools=``), the format its replies are read in and a worked example
    (chat messages)."""

    env: str
    difficulty: int
    seed: int
    prompt: str
    answer_format: str
    tools: tuple[str, ...]
    max_turns: int
    tool_schemas: tuple[dict[str, Any], ...] = ()
    tool_format: str | None = None
    demonstration: tuple[dict[str, Any], ...] = ()

    @property
    def identity(self) -> tuple[str, int, int]:
        return (self.env, self.difficulty, self.seed)


@dataclass(frozen=True)
class StepOutcome:
    """One step's result: the verdict's ``reward`` (RLVE's range [-1, 1]), ``correct``, its
    ``detail``, the ``observation`` shown to the model next (feedback, the tools' results, or
    empty once ``done``), ``done`` and the turn just taken (1-based); for a tool environment
    the reply as read (``assistant``) and the ``messages`` answering it (tool results)."""

    reward: float
    correct: bool
    detail: str
    observation: str
    done: bool
    turn: int
    extra: dict[str, Any] = field(default_factory=dict)
    assistant: dict[str, Any] | None = None
    messages: tuple[dict[str, Any], ...] = ()


class GymSession(Protocol):
    """One episode at a time (reset, steps, finish); see the module docstring.
    ``tool_format``: the format tool episodes' replies are written in (read at reset)."""

    tool_format: str | None

    def reset(
        self, env: str | None = None, difficulty: int | None = None, seed: int | None = None
    ) -> EpisodeStart: ...

    def step(self, output: str) -> StepOutcome: ...

    def finish(self) -> StepOutcome: ...

    def close(self) -> None: ...


class Episodes(Protocol):
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


def episode_module() -> ModuleType:
    """:mod:`verirl.serve.episode` (the episode layer; an openenv-core ``Environment``),
    imported when a session opens, so importing the adapters needs no openenv-core."""
    try:
        import verirl.serve.episode as episode
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError(
            "verirl's episodes are an openenv-core Environment: pip install 'verirl[openenv]'"
        ) from exc
    return episode


class EpisodeSession:
    """A :class:`GymSession` over one :class:`~verirl.serve.episode.VerirlEnvironment`
    episode stream, local or remote: subclasses say how a reset and an action reach it."""

    curriculum: str | None = "default"
    tool_format: str | None = None
    """The tool-call format a tool episode's replies are written in (``None``: the
    server's default, ``chatml_tools``)."""

    def __init__(self) -> None:
        self.start: EpisodeStart | None = None
        self.done = True
        self.last: StepOutcome | None = None

    # -- transport (subclasses) ----------------------------------------------------------
    def _reset(self, **kwargs: Any) -> VerirlObservation:
        raise NotImplementedError

    def _send(self, action: VerirlAction) -> VerirlObservation:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # -- GymSession ----------------------------------------------------------------------
    def reset(
        self, env: str | None = None, difficulty: int | None = None, seed: int | None = None
    ) -> EpisodeStart:
        task = explicit_task(env, difficulty, seed)
        kwargs: dict[str, Any] = {}
        if task is not None:
            kwargs = {"env": task[0], "difficulty": task[1], "seed": task[2]}
        if self.curriculum is not None:
            kwargs["curriculum"] = self.curriculum
        if self.tool_format is not None:
            kwargs["tool_format"] = self.tool_format
        obs = self._reset(**kwargs)
        self.start = EpisodeStart(
            env=obs.env,
            difficulty=obs.difficulty,
            seed=obs.seed,
            prompt=obs.prompt,
            answer_format=obs.answer_format,
            tools=tuple(obs.tools),
            max_turns=obs.max_turns,
            tool_schemas=tuple(obs.tool_schemas),
            tool_format=obs.tool_format,
            demonstration=tuple(obs.demonstration),
        )
        self.done = False
        self.last = None
        return self.start

    def step(self, output: str) -> StepOutcome:
        if self.start is None:
            raise UserInputError("step before reset: start an episode first")
        if self.done:
            raise UserInputError("step after the episode ended: reset to start a new one")
        if not isinstance(output, str):
            return self._end_unsent("the output must be a string")
        if len(output) > MAX_OUTPUT_CHARS:
            return self._end_unsent(f"the output is longer than {MAX_OUTPUT_CHARS} characters")
        try:
            output.encode("utf-8")
        except UnicodeEncodeError:
            return self._end_unsent("the output is not Unicode text (a lone surrogate)")
        return self._outcome(self._send(episode_module().VerirlAction(answer=output)))

    def finish(self) -> StepOutcome:
        """End the episode now: its final verdict (wrong format when no turn was taken),
        counted by the curriculum unless it already was."""
        if self.start is None:
            raise UserInputError("finish before reset: start an episode first")
        if self.done and self.last is not None:
            return self.last
        return self._outcome(self._send(episode_module().VerirlAction(finish=True)))

    # -- helpers -------------------------------------------------------------------------
    def _end_unsent(self, detail: str) -> StepOutcome:
        """An output that cannot be sent: the episode ends (the gym counts its last verdict,
        if any) and this step reports a wrong-format verdict."""
        assert self.start is not None
        ended = self._outcome(self._send(episode_module().VerirlAction(finish=True)))
        self.last = StepOutcome(float(WRONG_FORMAT), False, detail, "", True, ended.turn + 1)
        return self.last

    def _outcome(self, obs: VerirlObservation) -> StepOutcome:
        self.done = obs.done
        verdict = obs.verdict or {}
        self.last = StepOutcome(
            reward=float(obs.reward if obs.reward is not None else WRONG_FORMAT),
            correct=bool(obs.correct),
            detail=obs.detail,
            observation="" if obs.done and not obs.tools else (obs.feedback or ""),
            done=obs.done,
            turn=obs.turn,
            extra=dict(verdict.get("extra") or {}),
            assistant=obs.assistant,
            messages=tuple(obs.tool_messages),
        )
        return self.last


def tool_call_reply(tool: str, args: dict[str, Any], fmt: str) -> str:
    """A reply holding one call of ``tool`` with ``args``, written in tool format ``fmt``
    (what an adapter that receives calls already parsed, as TRL's, sends as the step)."""
    from verirl.tools import ParsedReply, ToolCall, get_format

    return get_format(fmt).render(ParsedReply("", (ToolCall(tool, args),)))
