"""Shared fixtures for reward tests: the SmolLM2 tokenizer with a tiny random Llama."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
import torch

from verirl.models import load_tokenizer, tiny_model
from verirl.rewards import RewardContext
from verirl.rollout.prompts import PromptFormatter
from verirl.types import FinishReason, Problem, Rollout


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return load_tokenizer("smollm2-135m-instruct")


@pytest.fixture(scope="module")
def model(tokenizer: Any) -> torch.nn.Module:
    return tiny_model(len(tokenizer), seed=11)


@pytest.fixture(scope="module")
def ctx(tokenizer: Any, model: torch.nn.Module) -> RewardContext:
    return RewardContext(tokenizer=tokenizer, model=model)


@pytest.fixture(scope="module")
def make_rollouts(tokenizer: Any) -> Any:
    """``make_rollouts(problem, texts, group=0, finish=None)`` → rollouts with those texts."""

    def make(
        problem: Problem,
        texts: Sequence[str],
        group: int = 0,
        finish: Sequence[FinishReason] | None = None,
    ) -> list[Rollout]:
        return _rollouts(problem, texts, tokenizer, group, finish)

    return make


def _rollouts(
    problem: Problem,
    texts: Sequence[str],
    tokenizer: Any,
    group: int = 0,
    finish: Sequence[FinishReason] | None = None,
) -> list[Rollout]:
    """Rollouts of ``problem`` with the given output texts (token ids are placeholders: the
    rewards read the text and the prompt ids)."""
    prompt = tuple(PromptFormatter(tokenizer).encode(problem))
    finish = finish or ["stop"] * len(texts)
    return [
        Rollout(problem, group, prompt, (1,), (0.0,), text, f)
        for text, f in zip(texts, finish, strict=True)
    ]
