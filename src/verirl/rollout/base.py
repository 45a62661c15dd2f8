"""The rollout engine interface: token ids in, sampled continuations with log-probs out.

The trainer talks to an engine only through :class:`RolloutEngine`, so a vLLM (or any other)
backend can replace the transformers one without touching the loop. An engine knows nothing
about problems or rewards; :mod:`verirl.rollout.prompts` turns problems into prompt ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from verirl.types import FinishReason, SamplingParams


@dataclass(frozen=True)
class Generation:
    """One sampled continuation of one prompt.

    ``logprobs[t]`` is log π(token_ids[t] | prompt, token_ids[<t]) under the distribution the
    token was sampled from (temperature applied; top-p truncation *not* renormalised into it,
    so it is the policy's own log-prob at that temperature).
    """

    token_ids: tuple[int, ...]
    logprobs: tuple[float, ...]
    text: str
    finish_reason: FinishReason


@runtime_checkable
class RolloutEngine(Protocol):
    """Samples continuations from the current policy."""

    def generate(
        self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        """For each prompt (token ids, chat template applied) draw ``sampling.n``
        continuations. Returns one list of ``n`` generations per prompt, in order."""
        ...

    def sync_weights(self) -> None:
        """Make the next ``generate`` use the learner's latest weights (a no-op for an
        engine that shares the learner's module)."""
        ...
