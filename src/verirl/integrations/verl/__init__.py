"""verirl inside verl 0.9.1 (``pip install verirl[verl]``, in its own environment: verl pins
``transformers<5.11``).

Importing this package registers, with verl's own registries:

- reward managers ``verirl`` (RLVE's graded rewards, batched verification), ``verirl_process``
  (tactic scores for process credit) and ``verirl_turns`` (per-turn scores for TCPO), in
  :mod:`verirl.integrations.verl.reward`;
- advantage estimators ``verirl_process`` and ``verirl_tcpo``, in
  :mod:`verirl.integrations.verl.advantage`.

Plus :func:`~verirl.integrations.verl.scoring.compute_score` for
``reward.custom_reward_function`` and
:class:`~verirl.integrations.verl.data.CurriculumDataset` for ``data.custom_cls``. verl's Ray
workers must import this package too: ``VERL_USE_EXTERNAL_MODULES=verirl.integrations.verl``.
"""

from __future__ import annotations

from verirl.integrations.verl import advantage, reward
from verirl.integrations.verl.scoring import compute_score

TESTED_VERL_VERSION = "0.9.1"

__all__ = ["TESTED_VERL_VERSION", "advantage", "compute_score", "reward"]
