"""verirl's gym as a verifiers 0.4.0 environment (prime-rl, the Environments Hub); install with
``pip install verirl[verifiers]``.

verifiers 0.4.0 (``import verifiers.v1 as vf``) loads an environment from a *taskset id*: a
package exporting one ``vf.Taskset`` subclass in ``__all__`` — ``vf.load_environment(
vf.EnvConfig(taskset={"id": ...}))``, which its eval, serve and GEPA entry points and
prime-rl all go through. verirl installs such a package, ``verirl_gym`` (taskset id
``verirl-gym``: ``--env.taskset.id verirl-gym``; verifiers imports the id's last segment as a
top-level module, so this module's dotted path cannot be the id), exporting
:class:`VerirlTaskset` from here.

- :class:`VerirlTaskset` (config :class:`VerirlTasksetConfig`, under ``--env.taskset.*``):
  ``load()`` yields tasks drawn from an in-process RLVE curriculum
  (:class:`~verirl.curriculum.AdaptiveDifficulty` over ``environments``) *as they are read*,
  so a window that moved applies to the next tasks; ``num_tasks`` bounds it (None: endless).
- :class:`VerirlTask`: its ``@vf.reward`` ``verirl`` is the environment's verdict on the
  rollout's last reply (RLVE's [-1, 1]; verified with the deadline of
  :class:`~verirl.verification.batch.BatchVerifier`), its ``@vf.metric`` ``correct`` the
  fully-correct flag; scoring a task feeds that flag to the taskset's curriculum (RLVE,
  Zeng et al. 2025, arXiv:2511.07317), when the task came from a taskset of this process.

For the curriculum kept server-side, point verifiers' own OpenEnv taskset at ``verirl
serve`` instead; the data here is generated in the trainer's process (verifiers' design).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

from pydantic import Field

from verirl.curriculum import AdaptiveDifficulty, Outcome
from verirl.errors import UserInputError

try:
    import verifiers.v1 as vf
except ImportError as exc:  # pragma: no cover - exercised only without the extra
    raise ImportError(
        "verirl.integrations.verifiers needs verifiers 0.4: pip install 'verirl[verifiers]'"
    ) from exc

TESTED_VERIFIERS_VERSION = "0.4.0"

_CURRICULA: dict[int, tuple[AdaptiveDifficulty, threading.Lock]] = {}
"""The curricula of this process's tasksets (by ``id``), so scoring can feed them."""


class VerirlTaskData(vf.TaskData):
    """One problem's identity; ``prompt`` is its text (the answer instruction included)."""

    env: str
    difficulty: int = Field(ge=0)
    seed: int = Field(ge=0)


class VerirlTaskConfig(vf.TaskConfig):
    """Knobs of each task, under ``--env.taskset.task.*``."""

    verify_timeout_s: float = Field(10.0, gt=0, le=600)
    """Deadline of one verification (a verifier past it gives a timeout verdict)."""


class VerirlTask(vf.Task[VerirlTaskData, vf.State, VerirlTaskConfig]):
    """A verirl problem; the reward is its environment's verifier (see the module docstring)."""

    curriculum_key: int | None = None

    def verdict(self, reply: str) -> Any:
        """The environment's verdict on ``reply`` (a whole model output)."""
        from verirl.envs import get_env
        from verirl.verification.batch import BatchVerifier

        d = self.data
        problem = get_env(d.env).generate(d.difficulty, d.seed)
        verdict = BatchVerifier(timeout_s=self.config.verify_timeout_s).verify([problem], [reply])
        return verdict[0]

    async def _verdict(self, trace: vf.Trace) -> Any:
        cached = trace.info.get("verirl_verdict")
        if cached is not None:
            return cached
        verdict = await asyncio.to_thread(self.verdict, trace.last_reply)
        trace.info["verirl_verdict"] = verdict
        self._feed(bool(verdict.correct))
        return verdict

    def _feed(self, correct: bool) -> None:
        entry = _CURRICULA.get(self.curriculum_key) if self.curriculum_key is not None else None
        if entry is None:
            return
        curriculum, lock = entry
        with lock:
            if self.data.env in curriculum.environments:
                curriculum.update([Outcome(self.data.env, self.data.difficulty, correct)])

    @vf.reward(weight=1.0)
    async def verirl(self, trace: vf.Trace) -> float:
        """RLVE's graded reward in [-1, 1]."""
        return float((await self._verdict(trace)).reward)

    @vf.metric
    async def correct(self, trace: vf.Trace) -> float:
        """1.0 when fully correct (what the curriculum adapts on)."""
        return float((await self._verdict(trace)).correct)


class VerirlTasksetConfig(vf.TasksetConfig):
    """Which problems, under ``--env.taskset.*``. Defaults reproduce RLVE's curriculum."""

    environments: list[str] = Field(default_factory=lambda: ["addition"], min_length=1)
    """verirl environment names (``verirl envs`` lists them; ``rg/<task>`` for reasoning-gym)."""
    num_tasks: int | None = Field(1000, ge=1)
    """How many tasks ``load()`` yields (None: endless)."""
    tau_acc: float = Field(0.9, gt=0, le=1)
    tau_num: int = Field(128, ge=1)
    window: int = Field(4, ge=1)
    initial_difficulty: int = Field(0, ge=0)
    seed: int = Field(0, ge=0)
    """Seeds the curriculum's environment/difficulty sampling."""
    task: VerirlTaskConfig = VerirlTaskConfig()


class VerirlTaskset(vf.Taskset[VerirlTask, VerirlTasksetConfig]):
    """Tasks drawn from an RLVE curriculum as they are read (see the module docstring)."""

    def __init__(self, config: VerirlTasksetConfig) -> None:
        super().__init__(config)
        from verirl.envs import is_env

        unknown = [e for e in config.environments if not is_env(e)]
        if unknown:
            raise UserInputError(f"verirl taskset: unknown environment(s) {unknown[:5]}")
        self.curriculum = AdaptiveDifficulty(
            list(config.environments),
            tau_acc=config.tau_acc,
            tau_num=config.tau_num,
            window=config.window,
            initial_difficulty=config.initial_difficulty,
            seed=config.seed,
        )
        self._lock = threading.Lock()
        _CURRICULA[id(self)] = (self.curriculum, self._lock)
        self.INFINITE = config.num_tasks is None

    def load(self) -> Iterator[VerirlTask]:
        produced = 0
        while self.config.num_tasks is None or produced < self.config.num_tasks:
            with self._lock:
                task = self.curriculum.next_tasks(1)[0]
            problem = task.generate()
            data = VerirlTaskData(
                prompt=problem.prompt,
                env=problem.env,
                difficulty=problem.difficulty,
                seed=problem.seed,
                name=f"{problem.env}/{problem.difficulty}/{problem.seed}",
            )
            out = VerirlTask(data, self.config.task)
            out.curriculum_key = id(self)
            produced += 1
            yield out


__all__ = ["VerirlTaskset"]
