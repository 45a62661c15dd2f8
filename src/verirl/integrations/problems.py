"""Problems as dataset rows and back, and curriculum feedback, shared by the trainer plug-ins.

Other trainers move dataset rows, not :class:`~verirl.types.Problem` objects. A row carries
the problem's identity — ``verirl_env``, ``verirl_difficulty``, ``verirl_seed`` — and
:class:`ProblemStore` turns it back into the problem: from a bounded in-process cache of the
problems it handed out, or by regenerating it, which gives the same problem in any process
because generation is deterministic (same ``(env, difficulty, seed)``, same problem).

:class:`CurriculumFeedback` applies verified outcomes to a curriculum. Under
``torch.distributed`` each rank verifies only its own completions, so the outcomes are
all-gathered first and every rank applies the same list in the same order: the curricula of
all ranks stay identical and keep drawing the same problem stream.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from verirl.curriculum import Curriculum, Outcome
from verirl.errors import UserInputError
from verirl.types import Problem

ENV_KEY = "verirl_env"
DIFFICULTY_KEY = "verirl_difficulty"
SEED_KEY = "verirl_seed"
ROW_KEYS = (ENV_KEY, DIFFICULTY_KEY, SEED_KEY)


def problem_key(problem: Problem) -> tuple[str, int, int]:
    return (problem.env, problem.difficulty, problem.seed)


def identity_columns(problem: Problem) -> dict[str, Any]:
    """The columns that identify ``problem`` in a dataset row."""
    return {ENV_KEY: problem.env, DIFFICULTY_KEY: problem.difficulty, SEED_KEY: problem.seed}


class ProblemStore:
    """Problems by ``(env, difficulty, seed)``: the ones this process handed out (the last
    ``capacity``), otherwise regenerated from the environment (deterministic)."""

    def __init__(self, capacity: int = 65536) -> None:
        if capacity < 1:
            raise UserInputError(f"ProblemStore capacity must be >= 1, got {capacity}")
        self.capacity = capacity
        self._items: OrderedDict[tuple[str, int, int], Problem] = OrderedDict()
        self._lock = threading.Lock()
        self.regenerated = 0

    def put(self, problem: Problem) -> None:
        with self._lock:
            self._items[problem_key(problem)] = problem
            self._items.move_to_end(problem_key(problem))
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def get(self, env: str, difficulty: int, seed: int) -> Problem:
        """The problem; regenerated when this process did not hand it out. Raises
        :class:`UserInputError` naming the row for an unknown environment or bad values."""
        if not isinstance(env, str) or isinstance(difficulty, bool) or isinstance(seed, bool):
            raise UserInputError(
                f"dataset row has {ENV_KEY}={env!r}, {DIFFICULTY_KEY}={difficulty!r}, "
                f"{SEED_KEY}={seed!r}: expected a string and two integers"
            )
        key = (env, int(difficulty), int(seed))
        with self._lock:
            hit = self._items.get(key)
        if hit is not None:
            return hit
        from verirl.envs import get_env, is_env

        if not is_env(env):
            raise UserInputError(
                f"dataset row names environment {env!r} ({ENV_KEY}), which is not registered"
            )
        problem = get_env(env).generate(key[1], key[2])
        self.regenerated += 1
        self.put(problem)
        return problem

    def from_row(self, row: Mapping[str, Any]) -> Problem | None:
        """The problem of a row, or ``None`` when the row has no verirl identity columns."""
        if row.get(ENV_KEY) is None:
            return None
        return self.get(row[ENV_KEY], row[DIFFICULTY_KEY], row[SEED_KEY])

    def from_columns(self, columns: Mapping[str, Sequence[Any]], n: int) -> list[Problem | None]:
        """The problems of ``n`` rows given column-wise (TRL's reward kwargs)."""
        if ENV_KEY not in columns:
            return [None] * n
        for key in ROW_KEYS:
            if key not in columns or len(columns[key]) != n:
                raise UserInputError(
                    f"reward function got column {key!r} with "
                    f"{len(columns.get(key, ()))} values for {n} completions"
                )
        return [
            None if e is None else self.get(e, d, s)
            for e, d, s in zip(
                columns[ENV_KEY], columns[DIFFICULTY_KEY], columns[SEED_KEY], strict=True
            )
        ]


def gather_outcomes(outcomes: list[Outcome]) -> list[Outcome]:
    """Every rank's outcomes, in rank order (the list itself without torch.distributed)."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return outcomes
    parts: list[Any] = [None] * dist.get_world_size()
    plain = [(o.env, o.difficulty, o.correct) for o in outcomes]
    dist.all_gather_object(parts, plain)
    return [Outcome(e, d, c) for part in parts for (e, d, c) in part]


class CurriculumFeedback:
    """Feeds fully-correct flags (never the graded reward) to a curriculum, as RLVE adapts.

    ``distributed=True`` all-gathers the outcomes across ``torch.distributed`` ranks first
    (every rank must then call :meth:`apply` the same number of times, which holds when it is
    called from a trainer's reward computation)."""

    def __init__(self, curriculum: Curriculum, distributed: bool = True) -> None:
        self.curriculum = curriculum
        self.distributed = distributed
        self.updates = 0
        self.raised: list[str] = []

    def apply(self, outcomes: Sequence[Outcome]) -> list[str]:
        """Update the curriculum; returns the environments whose window moved up."""
        items = list(outcomes)
        if self.distributed:
            items = gather_outcomes(items)
        known = set(self.curriculum.environments)
        items = [o for o in items if o.env in known]
        raised = self.curriculum.update(items)
        self.updates += 1
        self.raised.extend(raised)
        return raised
