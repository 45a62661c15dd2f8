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
