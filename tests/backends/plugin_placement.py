"""A ``run.plugins`` module that registers a placement and a schedule of its own: both are
the built-in local / synchronous ones that write down what the trainer asked of them."""

from __future__ import annotations

from typing import Any

import torch

from verirl.backends import PLACEMENTS, SCHEDULES, Backend, Schedule
from verirl.rollout.base import RolloutEngine
from verirl.train.learner import LearnerSettings, PolicyLearner
from verirl.train.producer import Produced, RolloutProducer
from verirl.verification.executors import Executor

CALLS: list[str] = []


@PLACEMENTS.register("test_recording", description="the local placement, writing every call")
class RecordingBackend(Backend):
    def engine(self, model: torch.nn.Module, tokenizer: Any) -> RolloutEngine:
        CALLS.append("engine")
        return super().engine(model, tokenizer)

    def executor(self) -> Executor:
        CALLS.append("executor")
        return super().executor()

    def learner(self, model: torch.nn.Module, settings: LearnerSettings) -> PolicyLearner:
        CALLS.append("learner")
        return super().learner(model, settings)

    def publish_weights(self, engine: RolloutEngine, version: int) -> dict[str, float]:
        CALLS.append(f"publish {version}")
        return {**super().publish_weights(engine, version), "test/placement_calls": 1.0}

    def close(self) -> None:
        CALLS.append("close")


@SCHEDULES.register("test_counting", description="the synchronous schedule, writing batches")
class CountingSchedule(Schedule):
    def next_rollouts(self, producer: RolloutProducer, version: int) -> Produced:
        CALLS.append(f"rollouts {version}")
        return super().next_rollouts(producer, version)
