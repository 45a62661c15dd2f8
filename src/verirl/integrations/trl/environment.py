"""verirl's gym as TRL 1.16's ``environment_factory`` (``GRPOTrainer(environment_factory=...)``).

TRL builds one environment object per rollout from a zero-argument factory, calls
``reset(**row)`` before generation (a returned string is appended to the last user message),
exposes the object's public methods as tools the model calls during generation, and, when the
class defines ``get_reward()``, calls it once per finished rollout as a reward source.

- :class:`AnswerEnvironment`: one tool, :meth:`~AnswerEnvironment.submit_answer` (a
  single-answer environment; with ``max_turns > 1`` a wrong answer returns feedback and the
  model may submit again). :meth:`~AnswerEnvironment.get_reward` returns the final verdict's
  reward (RLVE's [-1, 1]; −1 when nothing was submitted) and ends the episode, which feeds
  ``Verdict.correct`` to the curriculum (RLVE, Zeng et al. 2025, arXiv:2511.07317).
- :class:`ToolWorldEnvironment`: ``tool_world``'s twelve tools as methods (``files_read``,
  ``calendar_add``, ``shop_checkout``, ...), one tool call per step; built from the
  ``tool_world`` toolset by :func:`tool_environment_class` (any registered toolset works), so
  TRL renders the same tool schemas and gets the same results as verirl's own loop.
- :class:`EnvironmentFactory`: the factory to pass; its instances share a
  :class:`~verirl.episodes.Episodes` — local
  (:class:`~verirl.episodes.local.LocalEpisodes`, an in-process curriculum) or remote
  (:class:`~verirl.integrations.openenv.OpenEnvEpisodes`, the curriculum in the server).

GRPO groups: the G rollouts of one prompt must see the same problem. With a
:class:`~verirl.integrations.trl.CurriculumDataset` as ``train_dataset`` each row carries the
problem's identity (``verirl_env``, ``verirl_difficulty``, ``verirl_seed``) and ``reset``
uses it (and returns nothing: the row's prompt already holds the problem) — this works on any
number of processes. Without a dataset, TRL feeds empty placeholder rows in groups of G and
the factory's ``group_size=G`` makes every G consecutive resets share one draw; TRL resets
the rollouts of a batch in order, so this holds on one process (with several, pass the
dataset).
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from verirl.episodes import Episodes, EpisodeStart, GymSession, StepOutcome
from verirl.errors import UserInputError
from verirl.integrations.problems import DIFFICULTY_KEY, ENV_KEY, SEED_KEY

OVER = "The episode is over; no more calls are needed."


class GroupDraws:
    """Hands the same problem to ``group_size`` consecutive resets (a GRPO group)."""

    def __init__(self, group_size: int) -> None:
        if isinstance(group_size, bool) or not isinstance(group_size, int) or group_size < 1:
            raise UserInputError(f"group_size must be an integer >= 1, got {group_size!r}")
        self.group_size = group_size
        self.resets = 0
        self.current: tuple[str, int, int] | None = None
        self._lock = threading.Lock()

    def reset(self, session: GymSession) -> EpisodeStart:
        with self._lock:
            first = self.resets % self.group_size == 0
            self.resets += 1
            if first or self.current is None:
                start = session.reset()  # drawn by the curriculum
                self.current = start.identity
                return start
            return session.reset(*self.current)


class _Episode:
    """What both environment classes share: the episode, ``reset`` and ``get_reward``."""

    def __init__(self, source: Episodes, draws: GroupDraws | None = None) -> None:
        self._source = source
        self._draws = draws or GroupDraws(1)
        self._session: GymSession | None = None
        self._start: EpisodeStart | None = None
        self._last: StepOutcome | None = None
        self._final: StepOutcome | None = None

    # -- TRL's hooks (not tools: TRL skips `reset`, `get_reward` and `_private` names) -------
    def reset(self, **row: Any) -> str | None:
        """Start an episode: the row's problem when it names one, else a curriculum draw
        (shared by the group). Returns the text TRL appends to the prompt."""
        if self._session is None:
            self._session = self._source.session()
            self._session.tool_format = self._reply_format()
        if self._start is not None and self._final is None:  # TRL skipped get_reward
            self._session.finish()
        self._last = self._final = None
        if row.get(ENV_KEY) is not None:
            self._start = self._session.reset(row[ENV_KEY], row[DIFFICULTY_KEY], row[SEED_KEY])
            self._check(self._start)
            return None
        self._start = self._draws.reset(self._session)
        self._check(self._start)
        return self._start.prompt + "\n\n" + self._instruction()

    def get_reward(self) -> float:
        """The final verdict's reward; ends the episode (the curriculum counts it)."""
        if self._session is None or self._start is None:
            raise UserInputError("get_reward before reset")
        if self._final is None:
            self._final = self._session.finish() if not self._done() else self._last
        assert self._final is not None
        return float(self._final.reward)

    # -- helpers -------------------------------------------------------------------------------
    @property
    def last_outcome(self) -> StepOutcome | None:
        """The final outcome once :meth:`get_reward` ran, else the last step's (tests)."""
        return self._final or self._last

    @property
    def episode(self) -> EpisodeStart | None:
        return self._start

    def _instruction(self) -> str:
        return "Submit your final answer with the submit_answer tool."

    def _reply_format(self) -> str | None:
        return None

    def _check(self, start: EpisodeStart) -> None:
        if start.tools:
            raise UserInputError(
                f"{type(self).__name__} got the tool environment {start.env!r}; use "
                "ToolWorldEnvironment for it (EnvironmentFactory(..., tools=True))"
            )

    def _done(self) -> bool:
        return self._last is not None and self._last.done

    def _step(self, output: str) -> str:
        if self._session is None or self._start is None:
            return "No episode has started."
        if self._final is not None or self._done():
            return OVER
        out = self._session.step(output)
        self._last = out
        if out.correct:
            return "Correct."
        return (out.observation or out.detail or "Not correct.") + (
            "" if out.done else "\nYou may submit again."
        )


class AnswerEnvironment(_Episode):
    """One episode of a single-answer verirl environment; see the module docstring."""

    def submit_answer(self, answer: str) -> str:
        """Submit the final answer to the problem; a verifier checks it.

        Args:
            answer: The final answer, written as the problem asks (for example inside \\boxed{}).

        Returns:
            Whether the answer is correct, or what is wrong with it.
        """
        return self._step(_as_output(self._start, answer))


class ToolEnvironment(_Episode):
    """One episode of a tool environment: its toolset's tools as methods (built by
    :func:`tool_environment_class`, with the tools' own signatures and docstrings, so TRL's
    schemas for them are the ones verirl renders), one call per step. A method returns the
    call's result as the local loop and ``verirl serve`` show it; the reward is the verdict
    over all calls so far (``tool_world``: share of the goals met, 0 after collateral
    damage)."""

    toolset: ClassVar[str] = ""
    reply_format: ClassVar[str] = "hermes"
    """The format a call is written in for the gym (any registered one: it reads it back)."""

    def _instruction(self) -> str:
        return "Use the tools to do the tasks; the episode ends when they are all done."

    def _reply_format(self) -> str | None:
        return self.reply_format

    def _check(self, start: EpisodeStart) -> None:
        if not start.tools:
            raise UserInputError(
                f"{type(self).__name__} got {start.env!r}, which has no tools; use "
                "AnswerEnvironment for single-answer environments"
            )

    def _call(self, tool: str, args: dict[str, Any]) -> str:
        from verirl.episodes import tool_call_reply

        if self._session is None or self._start is None:
            return "No episode has started."
        if self._final is not None or self._done():
            return OVER
        out = self._session.step(tool_call_reply(tool, args, self.reply_format))
        self._last = out
        return out.observation


def tool_environment_class(toolset: str) -> type[ToolEnvironment]:
    """A :class:`ToolEnvironment` subclass whose methods are the tools of the registered
    ``toolset`` (same names, signatures, type hints and docstrings), each a step of the
    episode."""
    import inspect
    from typing import get_type_hints

    from verirl.tools.toolset import TOOLSETS, tool_names

    cls = TOOLSETS.get(toolset).part
    methods: dict[str, Any] = {"toolset": toolset}
    for name in tool_names(cls):
        fn = getattr(cls, name)
        methods[name] = _tool_method(name, fn, inspect.signature(fn), get_type_hints(fn))
    title = "".join(part.title() for part in toolset.split("_"))
    return type(f"{title}Environment", (ToolEnvironment,), methods)


def _tool_method(name: str, fn: Any, signature: Any, hints: dict[str, Any]) -> Any:
    def method(self: ToolEnvironment, *args: Any, **kwargs: Any) -> str:
        bound = signature.bind(self, *args, **kwargs)
        bound.apply_defaults()
        arguments = dict(bound.arguments)
        arguments.pop(next(iter(signature.parameters)))  # self
        return self._call(name, arguments)

    method.__name__ = method.__qualname__ = name
    method.__doc__ = fn.__doc__
    method.__signature__ = signature  # type: ignore[attr-defined]
    method.__annotations__ = hints
    return method


ToolWorldEnvironment = tool_environment_class("tool_world")
"""``tool_world``'s twelve tools (``files_read``, ``calendar_add``, ``shop_checkout``, ...)."""


class EnvironmentFactory:
    """``environment_factory=`` for ``GRPOTrainer``: builds :class:`AnswerEnvironment` (or,
    with ``tools=True``, :class:`ToolWorldEnvironment`) objects over ``source``;
    ``group_size`` = ``num_generations`` when training without a dataset (see the module
    docstring)."""

    def __init__(self, source: Episodes, *, group_size: int = 1, tools: bool = False):
        self.source = source
        self.draws = GroupDraws(group_size)
        self.environment_cls: type[AnswerEnvironment | ToolEnvironment] = (
            ToolWorldEnvironment if tools else AnswerEnvironment
        )
        self.instances: list[AnswerEnvironment | ToolEnvironment] = []

    def __call__(self) -> AnswerEnvironment | ToolEnvironment:
        instance = self.environment_cls(self.source, self.draws)
        self.instances.append(instance)
        return instance


def _as_output(start: EpisodeStart | None, answer: str) -> str:
    """The answer as a model output in the environment's format (unchanged when it already
    carries the marker)."""
    from verirl.envs.reading.formats import AnswerFormat

    if not isinstance(answer, str):
        return ""
    style = "boxed" if start is None else start.answer_format
    if style == "boxed" and "\\boxed" in answer:
        return answer
    if style == "tagged" and "<answer>" in answer:
        return answer
    if style == "code":
        return answer if answer.lstrip().startswith("```") else f"```\n{answer.strip()}\n```"
    return AnswerFormat("tagged" if style == "tagged" else "boxed").render(answer)
