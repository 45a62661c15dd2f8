"""Ray rollout replicas report ``sync/mismatch``: the weights sent vs the weights held."""

from __future__ import annotations

from typing import Any

import pytest
import torch

pytest.importorskip("ray")

from verirl.integrations.ray import rollout
from verirl.integrations.ray.learner import trainable_state


class _Engine:
    def sync_weights(self) -> None:
        return None


def _replica(model: torch.nn.Module) -> Any:
    replica = object.__new__(rollout.RolloutReplica)
    replica.model, replica.engine = model, _Engine()
    return replica


def test_a_replica_reports_zero_when_the_weights_landed_and_more_when_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    torch.manual_seed(0)
    learner, held = torch.nn.Linear(64, 32), torch.nn.Linear(64, 32)
    replica = _replica(held)
    assert replica.load_weights(trainable_state(learner)) == 0.0
    assert torch.equal(held.weight, learner.weight)
    with torch.no_grad():
        learner.weight.add_(1e-3)  # the next update
    monkeypatch.setattr(rollout, "load_trainable", lambda model, weights: None)  # lost on load
    assert replica.load_weights(trainable_state(learner)) > 1e-4


def test_a_replica_running_a_wrong_merged_lora_weight_reports_a_mismatch() -> None:
    """The LoRA adapters land intact, but the replica's engine runs them with another scaling
    (the merged weight W + s·BA differs): the parameters' checksums agree, the merged-weight
    checksum sent with the weights does not."""
    from peft import LoraConfig, get_peft_model

    from verirl.backends.staleness import merged_checksum

    def lora() -> Any:
        torch.manual_seed(0)
        model = get_peft_model(
            torch.nn.Sequential(torch.nn.Linear(8, 4)),
            LoraConfig(r=2, lora_alpha=4, target_modules=["0"]),
        )
        with torch.no_grad():
            model.base_model.model[0].lora_B["default"].weight.normal_()
        return model

    learner, held = lora(), lora()
    with torch.no_grad():
        learner.base_model.model[0].lora_A["default"].weight.add_(0.1)  # an update
    replica = _replica(held)
    sent = trainable_state(learner)
    assert replica.load_weights(sent, merged_checksum(learner)) == 0.0
    held.base_model.model[0].scaling["default"] *= 3
    assert replica.load_weights(sent, merged_checksum(learner)) == 1.0
    assert replica.load_weights(sent) == 0.0  # the adapters alone do not see it
