"""Problems drawn from verirl's curriculum as a TRL training dataset.

TRL's ``GRPOTrainer`` accepts a ``datasets.Dataset`` or ``datasets.IterableDataset`` (TRL
1.16 refuses a torch dataset). :meth:`CurriculumDataset.dataset` is an infinite
``IterableDataset`` whose generator asks the curriculum for the next task each time TRL reads a
row (RLVE, Zeng et al. 2025, arXiv:2511.07317: ``e ~ Uniform(envs)``, ``d ~ Uniform{ℓ..h}``,
``seed += 1``), so rows drawn after a window moved come from the new window.

Lag: TRL reads a whole generation batch before generating, and the data loader reads one batch
ahead, so the problems of step k+1 may be drawn before the outcomes of step k arrive (as in
asynchronous RLVE trainers). Set ``GRPOConfig(shuffle_dataset=False)``: a shuffled iterable
dataset draws a 1000-row shuffle buffer ahead of training, which would freeze the windows for
that long (:func:`check_trl_config` refuses it).

Each row: ``prompt`` (chat messages built by verirl's :class:`PromptFormatter`, or the plain
problem text with ``conversational=False``), ``answer`` (the reference, for CER) and the
identity columns ``verirl_env``, ``verirl_difficulty``, ``verirl_seed``
(:mod:`verirl.integrations.problems`), which TRL passes to the reward functions.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from verirl.curriculum import Curriculum
from verirl.errors import UserInputError
from verirl.integrations.problems import ProblemStore, identity_columns
from verirl.rollout.prompts import PromptFormatter
from verirl.types import Problem


class CurriculumDataset:
    """Rows drawn on the fly from ``curriculum``; see the module docstring.

    ``formatter`` builds the chat (system message, few-shot demonstrations, the problem);
    its tokenizer is not used here (TRL applies the chat template). ``store`` remembers the
    problems handed out so reward functions need not regenerate them (share it with them).
    """

    def __init__(
        self,
        curriculum: Curriculum,
        formatter: PromptFormatter | None = None,
        *,
        conversational: bool = True,
        store: ProblemStore | None = None,
    ) -> None:
        self.curriculum = curriculum
        self.formatter = formatter or PromptFormatter(tokenizer=None)
        self.conversational = conversational
        self.store = store or ProblemStore()
        self.drawn = 0
        self.by_prompt: dict[str, tuple[str, int, int]] = {}

    def row(self, problem: Problem) -> dict[str, Any]:
        """The dataset row of one problem."""
        prompt: Any = self.formatter.messages(problem) if self.conversational else problem.prompt
        return {"prompt": prompt, "answer": problem.answer, **identity_columns(problem)}

    def draw(self) -> dict[str, Any]:
        """The next row: one task from the curriculum, generated now."""
        task = self.curriculum.next_tasks(1)[0]
        problem = task.generate()
        self.store.put(problem)
        self.by_prompt[problem.prompt] = (problem.env, problem.difficulty, problem.seed)
        if len(self.by_prompt) > self.store.capacity:
            self.by_prompt.pop(next(iter(self.by_prompt)))
        self.drawn += 1
        return self.row(problem)

    def rows(self) -> Iterator[dict[str, Any]]:
        """An endless stream of rows (every call starts a new stream on the same curriculum)."""
        while True:
            yield self.draw()

    def problem_for_prompt(self, prompt: Any) -> Problem:
        """The problem behind a prompt this dataset produced (messages or text): the last
        user message is the problem's own text. Used by :class:`MultiTurnRollout`, which TRL
        gives only the prompts."""
        text = prompt
        if isinstance(prompt, list):
            users = [m.get("content") for m in prompt if m.get("role") == "user"]
            text = users[-1] if users else None
        key = self.by_prompt.get(text) if isinstance(text, str) else None
        if key is None:
            raise UserInputError(
                "rollout got a prompt this CurriculumDataset did not produce (or one drawn "
                f"more than {self.store.capacity} rows ago): {str(text)[:80]!r}"
            )
        return self.store.get(*key)

    def dataset(self) -> Any:
        """A ``datasets.IterableDataset`` over :meth:`rows` (infinite: set ``max_steps``)."""
        from datasets import IterableDataset

        return IterableDataset.from_generator(_Rows(self))


class _Rows:
    """The generator callable ``datasets`` calls (a named class: ``datasets`` fingerprints
    the generator, and this keeps that from walking the curriculum's state)."""

    def __init__(self, source: CurriculumDataset | None) -> None:
        self.source = source

    def __call__(self) -> Iterator[dict[str, Any]]:
        if self.source is None:  # a pickled copy (e.g. a DataLoader worker process)
            raise RuntimeError(
                "CurriculumDataset rows can only be read in the process that holds the "
                "curriculum; use dataloader_num_workers=0 (TRL does for iterable datasets)"
            )
        return self.source.rows()

    def __reduce__(self) -> tuple[Any, ...]:  # fingerprinting pickles; keep it cheap and stable
        return (_Rows, (None,))


def check_trl_config(args: Any) -> None:
    """Refuse GRPOConfig settings under which the curriculum cannot steer the data: a shuffled
    stream (a 1000-row buffer drawn ahead) or no ``max_steps`` (the stream is infinite)."""
    if getattr(args, "shuffle_dataset", False):
        raise UserInputError(
            "GRPOConfig.shuffle_dataset must be False with a CurriculumDataset: shuffling an "
            "iterable dataset draws a 1000-row buffer ahead, so the curriculum's windows "
            "would not reach the data for that long (the curriculum already randomises)"
        )
    if getattr(args, "max_steps", -1) is None or getattr(args, "max_steps", -1) <= 0:
        raise UserInputError(
            "GRPOConfig.max_steps must be > 0 with a CurriculumDataset (an endless stream)"
        )
