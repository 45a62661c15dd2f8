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
  ``calendar_add``, ``shop_checkout``, ...), one tool call per step.
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
from typing import Any

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


class ToolWorldEnvironment(_Episode):
    """One ``tool_world`` episode: its tools as methods, one call per step. The reward is
    the verdict over all calls so far (share of the goals met, 0 after collateral damage)."""

    def _instruction(self) -> str:
        return "Use the tools to do the tasks; the episode ends when they are all done."

    def _check(self, start: EpisodeStart) -> None:
        if not start.tools:
            raise UserInputError(
                f"ToolWorldEnvironment got {start.env!r}, which has no tools; use "
                "AnswerEnvironment for single-answer environments"
            )

    def _call(self, tool: str, **args: Any) -> str:
        from verirl.episodes import tool_call_text

        return self._step(tool_call_text(tool, args))

    def files_list(self) -> str:
        """List the paths of all files.

        Returns:
            The tool's result as JSON.
        """
        return self._call("files.list")

    def files_read(self, path: str) -> str:
        """Read a file.

        Args:
            path: The file's path.

        Returns:
            The file's content, or an error.
        """
        return self._call("files.read", path=path)

    def files_write(self, path: str, content: str) -> str:
        """Create or overwrite a file.

        Args:
            path: The file's path.
            content: The new content (at most 1000 characters).

        Returns:
            "ok", or an error.
        """
        return self._call("files.write", path=path, content=content)

    def files_delete(self, path: str) -> str:
        """Delete a file.

        Args:
            path: The file's path.

        Returns:
            "ok", or an error.
        """
        return self._call("files.delete", path=path)

    def calendar_list(self, day: int) -> str:
        """List the calendar events of one day.

        Args:
            day: The day of the month (1 to 31).

        Returns:
            The events (id, title, day, hour) as JSON.
        """
        return self._call("calendar.list", day=day)

    def calendar_add(self, title: str, day: int, hour: int) -> str:
        """Add a calendar event.

        Args:
            title: The event's title.
            day: The day of the month (1 to 31).
            hour: The hour (0 to 23).

        Returns:
            The new event's id, or an error.
        """
        return self._call("calendar.add", title=title, day=day, hour=hour)

    def calendar_remove(self, event_id: int) -> str:
        """Remove a calendar event.

        Args:
            event_id: The event's id.

        Returns:
            "ok", or an error.
        """
        return self._call("calendar.remove", id=event_id)

    def contacts_find(self, name: str) -> str:
        """Look up a contact.

        Args:
            name: The contact's name.

        Returns:
            The contact's record (email, phone), or an error.
        """
        return self._call("contacts.find", name=name)

    def contacts_update(self, name: str, field: str, value: str) -> str:
        """Change a contact's email or phone.

        Args:
            name: The contact's name.
            field: "email" or "phone".
            value: The new value.

        Returns:
            "ok", or an error.
        """
        return self._call("contacts.update", name=name, field=field, value=value)

    def shop_search(self, query: str) -> str:
        """Search the shop's catalogue.

        Args:
            query: Part of an item's name.

        Returns:
            Matching items and their prices as JSON.
        """
        return self._call("shop.search", query=query)

    def shop_add_to_cart(self, item: str, qty: int) -> str:
        """Put an item in the cart.

        Args:
            item: The item's name.
            qty: How many (1 to 99).

        Returns:
            The cart as JSON, or an error.
        """
        return self._call("shop.add_to_cart", item=item, qty=qty)

    def shop_checkout(self) -> str:
        """Pay for the cart.

        Returns:
            The amount paid, or an error.
        """
        return self._call("shop.checkout")


class EnvironmentFactory:
    """``environment_factory=`` for ``GRPOTrainer``: builds :class:`AnswerEnvironment` (or,
    with ``tools=True``, :class:`ToolWorldEnvironment`) objects over ``source``;
    ``group_size`` = ``num_generations`` when training without a dataset (see the module
    docstring)."""

    def __init__(self, source: Episodes, *, group_size: int = 1, tools: bool = False):
        self.source = source
        self.draws = GroupDraws(group_size)
        self.environment_cls: type[AnswerEnvironment | ToolWorldEnvironment] = (
            ToolWorldEnvironment if tools else AnswerEnvironment
        )
        self.instances: list[AnswerEnvironment | ToolWorldEnvironment] = []

    def __call__(self) -> AnswerEnvironment | ToolWorldEnvironment:
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
