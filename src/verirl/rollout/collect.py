"""Collectors: problems in, (unscored or scored) rollouts out.

A collector owns *how* an episode unfolds — one sampled answer per rollout (``single_turn``)
or a multi-turn refinement episode with verifier feedback between turns (``multi_turn``, in
:mod:`verirl.rollout.multiturn`). It is registered by name with the pydantic model of its
parameters, like credit estimators and reward sources, so the trainer never branches on it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence

from pydantic import BaseModel

from verirl.registry import Registry, Spec
from verirl.rollout.base import Generation, OnFinish, RolloutEngine, generate_streaming
from verirl.rollout.prompts import PromptFormatter
from verirl.types import Problem, Rollout, SamplingParams

Scorer = Callable[[Sequence[Rollout]], list[Rollout]]
"""The reward stage as collectors see it: rollouts in, the same rollouts with verdicts out
(:class:`verirl.rewards.stage.RewardStage`). Call it once per batch, not per rollout."""


def streamer(score: Scorer, make: Callable[[int, int, Generation], Rollout]) -> OnFinish | None:
    """The engine callback that hands each finished sequence to the reward stage (its
    verification starts while the rest decode), ``make(prompt, sample, generation)`` building
    the rollout exactly as it will be scored; None when the stage does not stream."""
    if not getattr(score, "streams", False):
        return None
    stream = score.stream  # type: ignore[attr-defined]

    def on_finish(prompt: int, sample: int, gen: Generation) -> None:
        stream([make(prompt, sample, gen)])

    return on_finish


class Collector(ABC):
    """Turns problems into scored rollouts; ``sampling.n`` rollouts per problem, one group
    each. ``produces`` says what the rollouts carry for credit (``"turns"``: multi-turn
    episodes with per-turn scores; ``"counterfactual"``: alternative scores per turn)."""

    def __init__(self, params: BaseModel) -> None:
        self.params = params

    def produces(self) -> frozenset[str]:
        return frozenset()

    @abstractmethod
    def collect(
        self,
        problems: Sequence[Problem],
        engine: RolloutEngine,
        formatter: PromptFormatter,
        sampling: SamplingParams,
        first_group: int = 0,
        *,
        score: Scorer,
    ) -> list[Rollout]:
        """Rollouts of problem ``i`` get group id ``first_group + i``; every rollout comes
        back scored by ``score`` (the run's reward stage)."""

    def metrics(self) -> dict[str, float]:
        """Scalars about the last ``collect`` call (e.g. extra generated tokens)."""
        return {}

    def for_evaluation(self) -> Collector:
        """The collector held-out evaluation should use: the same episodes without any
        training-only extras (e.g. counterfactual resampling). Default: itself."""
        return self


COLLECTORS: Registry[Spec[type[Collector]]] = Registry("collector")
"""Collectors by name (``rollout.collector``), built as ``spec.build(params)``."""


@COLLECTORS.register("single_turn")
class SingleTurn(Collector):
    """One sampled response per rollout, the batch scored by the reward stage at once (each
    response's verification started as it finishes when the stage streams)."""

    def collect(
        self,
        problems: Sequence[Problem],
        engine: RolloutEngine,
        formatter: PromptFormatter,
        sampling: SamplingParams,
        first_group: int = 0,
        *,
        score: Scorer,
    ) -> list[Rollout]:
        prompts = [formatter.encode(p) for p in problems]

        def rollout(i: int, g: Generation) -> Rollout:
            return Rollout(
                problem=problems[i],
                group=first_group + i,
                prompt_ids=tuple(prompts[i]),
                response_ids=g.token_ids,
                logprobs=g.logprobs,
                text=g.text,
                finish_reason=g.finish_reason,
            )

        on_finish = streamer(score, lambda i, _, g: rollout(i, g))
        generations = generate_streaming(engine, prompts, sampling, on_finish)
        if len(generations) != len(problems):
            raise RuntimeError(
                f"engine returned {len(generations)} groups for {len(problems)} prompts"
            )
        return score([rollout(i, g) for i, group in enumerate(generations) for g in group])
