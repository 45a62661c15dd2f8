"""reasoning-gym's tasks as verirl environments (``rg/<task>``) and verirl's environments as a
reasoning-gym dataset; see :mod:`verirl.integrations.reasoning_gym`. Importing this module
imports reasoning-gym."""

from __future__ import annotations

import functools
import json
import random
from dataclasses import dataclass
from typing import Any, ClassVar

from verirl.envs.base import (
    ENVIRONMENTS,
    WRONG_FORMAT,
    Environment,
    Instance,
    graded,
)
from verirl.envs.reading.formats import TAGGED
from verirl.errors import UserInputError
from verirl.types import Problem, Verdict

try:
    import reasoning_gym  # noqa: F401  (registers its tasks)
    from reasoning_gym.coaching.base_curriculum import BaseCurriculum
    from reasoning_gym.dataset import ProceduralDataset
    from reasoning_gym.factory import CURRICULA, DATASETS, create_curriculum, register_dataset
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "verirl.integrations.reasoning_gym needs reasoning-gym 0.1.25: pip install 'verirl[bench]'"
    ) from exc

PREFIX = "rg/"
TESTED_REASONING_GYM_VERSION = "0.1.25"


def task_names() -> list[str]:
    """reasoning-gym's tasks that have a curriculum (size parameters by level)."""
    return sorted(n for n in DATASETS if n in CURRICULA)


@functools.cache
def _levels(task: str) -> int:
    """The task's highest curriculum level (over its attributes)."""
    cur = create_curriculum(task)
    return max((len(a.levels) - 1 for a in cur.attributes.values()), default=0)


DATASET_SEED = 20250101
"""The seed of every level's dataset; a problem's own seed picks the entry (its index)."""
INDICES = 2**31
"""Entry indices are drawn from [0, 2^31): dataset seed + index stays below 2^32, the limit of
the numpy seeding some tasks use."""


def _config(task: str, level: int) -> Any:
    cur: BaseCurriculum = create_curriculum(task)
    cur.set_global_level(level)
    return cur.generate_configuration({"seed": DATASET_SEED, "size": INDICES})


@functools.lru_cache(maxsize=512)
def _dataset(task: str, level: int) -> ProceduralDataset:
    """One dataset per (task, level), built once per process: entry ``i`` is reasoning-gym's
    item ``i`` (its generators seed ``Random(dataset_seed + i)`` per item)."""
    dataset_cls, _ = DATASETS[task]
    return dataset_cls(config=_config(task, level))


def _plain(value: Any) -> Any:
    """``value`` as JSON would carry it (tuples become lists; other objects their str)."""
    return json.loads(json.dumps(value, default=str))


class ReasoningGymTask(Environment):
    """Base of the ``rg/<task>`` environments (one subclass per task, made by
    :func:`environment_class`); see the module docstring."""

    task: ClassVar[str]
    family = "reasoning_gym"
    tags: ClassVar[tuple[str, ...]] = ("reasoning_gym",)
    answer_format = TAGGED
    answer_instruction: ClassVar[str] = TAGGED.instruction
    answer_kind = "text"
    clean_answers = False  # reasoning-gym's scorers do their own reading
    size_measure = "prompt length (reasoning-gym's size parameters grow with the level)"

    def _generate(self, difficulty: int, rng: random.Random) -> Instance:
        index = rng.randrange(INDICES)  # from verirl's seeded RNG for (name, difficulty, seed)
        entry = _plain(_dataset(self.task, difficulty)[index])
        return Instance(
            prompt=str(entry["question"]),
            answer=str(entry["answer"]),
            data={"entry": entry, "index": index},
        )

    def check(self, problem: Problem, answer: str) -> Verdict:
        entry = problem.data["entry"]
        dataset = _dataset(self.task, problem.difficulty)
        score = dataset.score_answer(answer.strip(), dict(entry))
        if not isinstance(score, int | float) or score != score:
            return Verdict(WRONG_FORMAT, False, "the scorer gave no number")
        correct = float(score) >= 1.0
        return graded(float(score), correct, "correct" if correct else "not correct")

    def solve(self, problem: Problem) -> str:
        """The generator's answer (reasoning-gym has no independent solver)."""
        return str(problem.data["entry"]["answer"])

    def corrupt(self, problem: Problem, answer: str, rng: random.Random) -> str:
        wrong = super().corrupt(problem, answer, rng)
        return wrong if wrong != answer else answer + " x"


def environment_class(task: str) -> type[ReasoningGymTask]:
    """A new (unregistered) environment class for reasoning-gym's ``task``."""
    if task not in DATASETS or task not in CURRICULA:
        raise UserInputError(
            f"reasoning-gym has no task {task[:100]!r} with a curriculum; "
            f"{len(task_names())} do (verirl.integrations.reasoning_gym.tasks.task_names())"
        )
    top = _levels(task)
    cur = create_curriculum(task)
    scales = ", ".join(sorted(cur.attributes)) or "nothing"
    attrs: dict[str, Any] = {
        "task": task,
        "difficulty_scales": f"reasoning-gym curriculum level 0..{top} of: {scales}",
        "max_difficulty": top,
        "__module__": __name__,
        "__qualname__": f"ReasoningGym_{task}",
    }
    return type(f"ReasoningGym_{task}", (ReasoningGymTask,), attrs)


def register_task(name: str) -> bool:
    """Register ``rg/<task>`` (the on-demand provider ``verirl.envs`` calls for the ``rg/``
    prefix); False when ``name`` is not a reasoning-gym task with a curriculum."""
    task = name.removeprefix(PREFIX)
    if name in ENVIRONMENTS:
        return True
    if not name.startswith(PREFIX) or task not in DATASETS or task not in CURRICULA:
        return False
    ENVIRONMENTS.register(name)(environment_class(task))
    return True


def register_reasoning_gym(tasks: list[str] | None = None) -> list[str]:
    """Register ``rg/<task>`` for ``tasks`` (default: every task with a curriculum) and
    return their verirl names. Idempotent."""
    names = []
    for task in task_names() if tasks is None else tasks:
        name = PREFIX + task.removeprefix(PREFIX)
        if not register_task(name):
            raise UserInputError(f"reasoning-gym has no task {task[:100]!r} with a curriculum")
        names.append(name)
    return names


# ---- the other way: verirl's environments as a reasoning-gym dataset --------------------------
@dataclass
class VerirlDatasetConfig:
    """A reasoning-gym config: entry ``i`` is ``env``'s problem at ``difficulty`` with seed
    ``seed + i``."""

    env: str = "addition"
    difficulty: int = 0
    seed: int = 0
    size: int = 500

    def validate(self) -> None:
        from verirl.envs import get_env

        try:
            environment = get_env(self.env)
        except KeyError:
            raise UserInputError(f"VerirlDatasetConfig: unknown environment {self.env!r}") from None
        for key in ("difficulty", "seed", "size"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise UserInputError(f"VerirlDatasetConfig: {key} must be an integer >= 0")
        if self.difficulty > environment.max_difficulty:
            raise UserInputError(
                f"VerirlDatasetConfig: difficulty {self.difficulty} is above {self.env}'s "
                f"max_difficulty {environment.max_difficulty}"
            )


class VerirlDataset(ProceduralDataset):
    """verirl's environment as a reasoning-gym ``ProceduralDataset``. ``score_answer`` is
    verirl's verifier mapped to reasoning-gym's [0, 1]: 1.0 only when fully correct, the
    partial credit otherwise (verirl's −1 / −0.5 format penalties become 0)."""

    def __init__(self, config: VerirlDatasetConfig) -> None:
        super().__init__(config=config, seed=config.seed, size=config.size)

    def __getitem__(self, idx: int) -> dict[str, Any]:
        from verirl.envs import get_env

        if isinstance(idx, bool) or not isinstance(idx, int) or not 0 <= idx < self.size:
            raise IndexError(f"index {idx!r} out of range for a dataset of size {self.size}")
        cfg = self.config
        problem = get_env(cfg.env).generate(cfg.difficulty, cfg.seed + idx)
        return {
            "question": problem.prompt,
            "answer": problem.answer,
            "metadata": {
                "source_dataset": "verirl",
                "source_index": idx,
                "verirl_env": problem.env,
                "difficulty": problem.difficulty,
                "seed": problem.seed,
            },
        }

    def score_answer(self, answer: str | None, entry: dict[str, Any]) -> float:
        """reasoning-gym's scorer contract: ``answer`` is the extracted answer (or a whole
        output carrying the environment's answer marker); never raises."""
        from verirl.envs import get_env
        from verirl.envs.reading.answers import extract_answer

        if not isinstance(answer, str) or not answer.strip():
            return 0.0
        try:
            meta = entry["metadata"]
            env = get_env(meta["verirl_env"])
            problem = env.generate(int(meta["difficulty"]), int(meta["seed"]))
        except Exception:  # a malformed entry is not an answer to anything
            return 0.0
        output = answer if extract_answer(answer) is not None else env.answer_format.render(answer)
        verdict = env.verify(problem, output)
        if verdict.correct:
            return 1.0
        return float(min(max(verdict.reward, 0.0), 1.0 - 1e-6))


def register_verirl_dataset(name: str = "verirl") -> None:
    """Make ``reasoning_gym.create_dataset(name, env=..., difficulty=..., ...)`` build a
    :class:`VerirlDataset` (idempotent)."""
    if name not in DATASETS:
        register_dataset(name, VerirlDataset, VerirlDatasetConfig)


__all__ = [
    "PREFIX",
    "TESTED_REASONING_GYM_VERSION",
    "ReasoningGymTask",
    "VerirlDataset",
    "VerirlDatasetConfig",
    "environment_class",
    "register_reasoning_gym",
    "register_task",
    "register_verirl_dataset",
    "task_names",
]
