"""verirl inside TRL 1.16 (``GRPOTrainer``); install with ``pip install verirl[trl]``.

The pieces, each a documented TRL extension point::

    curriculum = AdaptiveDifficulty(["addition", "sorting"], tau_num=128)
    prompts = CurriculumDataset(curriculum, formatter)          # rows drawn on the fly
    reward = EnvReward(curriculum=curriculum)                  # RLVE's graded rewards
    trainer = GRPOTrainer(model, reward_funcs=[reward], train_dataset=prompts.dataset(),
                          args=GRPOConfig(shuffle_dataset=False, max_steps=...),
                          callbacks=[VerirlCallback(curriculum, [reward])])

- :class:`CurriculumDataset`: a ``datasets.IterableDataset`` whose rows are drawn from the
  curriculum when TRL reads them, so the difficulty windows apply to the next batches.
- :class:`EnvReward`: ``reward_funcs`` entry; verifies with the problem's environment through
  :class:`~verirl.verification.batch.BatchVerifier` (time limits, proof checkers) and feeds
  the fully-correct flags to the curriculum.
- :class:`PolicyReward`: CER or Rule+CER scored by the policy being trained (handed over by
  :class:`VerirlCallback`).
- :class:`MultiTurnRollout`: a ``rollout_func`` running verirl's refinement episodes.
- :class:`EnvironmentFactory`: TRL's ``environment_factory`` — episodes from a local or remote
  curriculum, ``submit_answer`` (or a tool environment's own typed tools, e.g.
  :class:`ToolWorldEnvironment`) as the model's tools, and ``get_reward`` returning the verdict
  (:mod:`verirl.integrations.trl.environment`).
"""

from __future__ import annotations

from verirl.integrations.trl.callback import VerirlCallback
from verirl.integrations.trl.data import CurriculumDataset
from verirl.integrations.trl.environment import (
    AnswerEnvironment,
    EnvironmentFactory,
    ToolEnvironment,
    ToolWorldEnvironment,
    tool_environment_class,
)
from verirl.integrations.trl.multiturn import MultiTurnRollout
from verirl.integrations.trl.rewards import EnvReward, PolicyReward, completion_texts

TESTED_TRL_VERSION = "1.16.0"

__all__ = [
    "TESTED_TRL_VERSION",
    "AnswerEnvironment",
    "CurriculumDataset",
    "EnvReward",
    "EnvironmentFactory",
    "MultiTurnRollout",
    "PolicyReward",
    "ToolEnvironment",
    "ToolWorldEnvironment",
    "VerirlCallback",
    "completion_texts",
    "tool_environment_class",
]
