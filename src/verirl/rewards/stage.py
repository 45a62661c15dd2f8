"""The step's reward stage: the configured reward source over a batch of rollouts.

:class:`RewardStage` is what collectors call to score rollouts — the single-turn collector
once for the batch, the multi-turn collector once per round of turns and once for the
counterfactual alternatives — so the configured reward (environment verifier, rule, CER,
a prover, shaped or combined) scores every turn of every episode alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from verirl.rewards.base import REWARDS, RewardContext, RewardSource
from verirl.rewards.shaping import OverlongShaping
from verirl.types import Rollout


class RewardStage:
    """``stage(rollouts)`` → the same rollouts with ``verdict`` set by ``source``.

    With ``streams`` (``verification.stream``; only for a source that verifies every
    rollout, ``RewardSource.verifies_each``) a collector hands each rollout to
    :meth:`stream` as its sequence finishes: its environment verification starts at once on
    the verification stage (:meth:`~verirl.verification.batch.BatchVerifier.submit`), and
    the batch call later picks the verdict up.
    """

    def __init__(self, source: RewardSource, ctx: RewardContext, stream: bool = False) -> None:
        self.source = source
        self.ctx = ctx
        self.streams = stream and source.verifies_each

    def stream(self, rollouts: Sequence[Rollout]) -> None:
        """Start verifying ``rollouts`` now (finished while others still decode); the call
        that scores them takes the verdicts. A no-op unless :attr:`streams`."""
        if self.streams and rollouts:
            self.ctx.verifier.submit([r.problem for r in rollouts], [r.text for r in rollouts])

    def __call__(self, rollouts: Sequence[Rollout]) -> list[Rollout]:
        if not rollouts:
            return []
        try:
            verdicts = self.source.score(rollouts, self.ctx)
        finally:
            if self.streams:
                self.ctx.verifier.discard_streamed()  # a source that skipped some
        if len(verdicts) != len(rollouts):
            raise RuntimeError(
                f"reward source {type(self.source).__name__} returned {len(verdicts)} verdicts "
                f"for {len(rollouts)} rollouts"
            )
        return [replace(r, verdict=v) for r, v in zip(rollouts, verdicts, strict=True)]

    def metrics(self) -> dict[str, float]:
        """The source's metrics and the verification counts since the last call."""
        return {**self.source.metrics(), **self.ctx.verifier.metrics()}


def build_reward_source(
    name: str, params: dict[str, object], overlong_buffer: int = 0, max_new_tokens: int = 0
) -> RewardSource:
    """The reward source ``name`` with ``params``, wrapped in DAPO's overlong shaping when
    ``overlong_buffer`` > 0."""
    source = REWARDS.get(name).build(params)
    if overlong_buffer:
        source = OverlongShaping(source, max_new_tokens, overlong_buffer)
    return source


def env_reward_stage(ctx: RewardContext | None = None) -> RewardStage:
    """A stage that scores with the environments' own verifiers (evaluation, tests)."""
    from verirl.registry import NoParams
    from verirl.rewards.env import EnvVerifierReward

    return RewardStage(EnvVerifierReward(NoParams()), ctx or RewardContext())
