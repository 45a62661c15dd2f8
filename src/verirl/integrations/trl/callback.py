"""A TRL/transformers ``TrainerCallback`` that connects verirl's pieces to the trainer.

- ``on_train_begin``: hands the trainer's model and processing class to every reward that
  scores with the policy (:class:`~verirl.integrations.trl.rewards.PolicyReward`), since TRL
  1.16 passes reward functions ``trainer_state`` but not the model;
- ``on_log``: adds the curriculum's metrics (windows, counters) to the trainer's logs;
- ``on_save``: writes the curriculum's state next to the checkpoint
  (``<checkpoint>/verirl_curriculum.json``), so a resumed run can restore the windows with
  :func:`load_curriculum_state`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from verirl.curriculum import Curriculum

STATE_FILE = "verirl_curriculum.json"


class VerirlCallback(TrainerCallback):
    """See the module docstring. ``rewards``: reward functions; those with ``bind`` get the
    policy. ``per_env_metrics``: also log every environment's window and counters (six values
    per environment; off by default, RLVE trains on hundreds of environments)."""

    def __init__(
        self,
        curriculum: Curriculum | None = None,
        rewards: Sequence[Any] = (),
        *,
        per_env_metrics: bool = False,
    ) -> None:
        self.curriculum = curriculum
        self.rewards = list(rewards)
        self.per_env_metrics = per_env_metrics

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        model = kwargs.get("model")
        tokenizer = kwargs.get("processing_class") or kwargs.get("tokenizer")
        for reward in self.rewards:
            if getattr(reward, "needs_policy", False):
                reward.bind(model, tokenizer)

    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **_: Any
    ) -> None:
        if logs is None or self.curriculum is None:
            return
        envs = tuple(f"curriculum/{e}/" for e in self.curriculum.environments)
        for key, value in self.curriculum.metrics().items():
            if self.per_env_metrics or not key.startswith(envs):
                logs[key] = value

    def on_save(self, args: Any, state: Any, control: Any, **_: Any) -> None:
        if self.curriculum is None or not state.is_world_process_zero:
            return
        folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / STATE_FILE).write_text(json.dumps(self.curriculum.state_dict()))


def load_curriculum_state(curriculum: Curriculum, checkpoint_dir: str | Path) -> None:
    """Restore the curriculum saved by :class:`VerirlCallback` in ``checkpoint_dir``."""
    curriculum.load_state_dict(json.loads((Path(checkpoint_dir) / STATE_FILE).read_text()))
