"""reasoning-gym 0.1.25 both ways (``pip install verirl[bench]`` brings reasoning-gym).

**reasoning-gym's tasks as verirl environments** — ``rg/<task>``, e.g. ``rg/basic_arithmetic``:

- difficulty ``d`` is reasoning-gym's own curriculum level: ``set_global_level(d)`` on the
  task's curriculum (every size attribute at level ``min(d, its last level)``), then
  ``generate_configuration()``; ``max_difficulty`` is the task's highest level, so RLVE's
  window stops there (:class:`~verirl.curriculum.AdaptiveDifficulty` caps ``h`` at it).
- generation is pure: one reasoning-gym dataset per level (a fixed dataset seed, a virtual
  size of 2^31), and the entry's index drawn from verirl's seeded RNG for
  ``(name, difficulty, seed)``; the entry (``question``, ``answer``, ``metadata``) is stored
  JSON-normalised in ``Problem.data`` so it travels between processes.
- the verifier is reasoning-gym's scorer, ``score_answer(answer, entry)`` on the answer in
  ``<answer>…</answer>`` (or ``\\boxed{}``): reward = its score in [0, 1], ``correct`` only
  at 1.0, −1 with no answer marker; a scorer that raises is counted as a verifier error.
- ``solve`` returns the generator's own answer (reasoning-gym has no separate solver).
- Only tasks with a reasoning-gym curriculum are offered (``tasks.task_names()``; the four
  without one have no size parameters to map). They are **not** in verirl's default
  catalogue (``verirl.envs.env_names()``): they register on demand —
  ``get_env("rg/<task>")`` in any process (this package's entry point registers the ``rg/``
  prefix), or ``tasks.register_reasoning_gym()`` for a list — and are listed by
  ``env_names(on_demand=True)``.

**verirl's environments as a reasoning-gym dataset**: ``tasks.VerirlDataset`` (a
``ProceduralDataset``: ``len``, iteration, ``dataset[i]`` entries with ``question`` /
``answer`` / ``metadata``, ``score_answer(answer, entry)``), also registered in
reasoning-gym's factory as ``"verirl"`` by ``tasks.register_verirl_dataset()``, so
``reasoning_gym.create_dataset("verirl", env="addition", difficulty=3, size=100, seed=1)``
works.

The code is :mod:`~verirl.integrations.reasoning_gym.tasks` (it imports reasoning-gym); this
module, the plug-in's entry point, only registers the ``rg/`` prefix.
"""

from __future__ import annotations

from verirl.envs.base import ON_DEMAND


@ON_DEMAND.register("rg/", description="reasoning-gym's tasks (pip install 'verirl[bench]')")
def register_task(name: str) -> bool:
    """Register ``rg/<task>`` (:mod:`~verirl.integrations.reasoning_gym.tasks`)."""
    from verirl.integrations.reasoning_gym.tasks import register_task

    return register_task(name)
