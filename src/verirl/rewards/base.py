"""Reward sources: the scorers that turn rollouts into verdicts (scores and credit are separate).

A reward source is a class registered by name with the pydantic model of its parameters::

    class MyParams(BaseModel): ...

    @REWARDS.register("my_reward", MyParams)
    class MyReward(RewardSource):
        def score(self, rollouts, ctx) -> list[Verdict]: ...

It sees the rollouts of one step (whole groups, so group-aware rewards such as CER can use
every sibling solution) and a :class:`RewardContext` with the tokenizer and the *current*
policy, for rewards that query the policy itself. It returns one verdict per rollout, in
order, and never raises on model output.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from verirl.registry import Registry, Spec
from verirl.types import Rollout, Verdict
from verirl.verification.batch import BatchVerifier


@dataclass
class RewardContext:
    """What a reward source may use besides the rollouts.

    - ``tokenizer``: the policy's tokenizer.
    - ``model``: the policy module with its current weights (``None`` for rule-based runs).
    - ``device``: where ``model`` lives; scorers put their batches there (None: the
      model's own device).
    - ``engine``: the run's rollout engine (a scorer may use it: ``scorer: engine`` scores
      with vLLM's prompt log-probs on the engine's weights).
    - ``verifier``: the batched verification stage (environment verifiers through the run's
      executor, proof checkers through the run's provers). Reward sources call it once per
      batch instead of verifying rollout by rollout.
    """

    tokenizer: Any = None
    model: Any = None
    device: str | None = None
    engine: Any = None
    verifier: BatchVerifier = field(default_factory=lambda: BatchVerifier())

    def env_verdicts(self, rollouts: Sequence[Rollout]) -> list[Verdict | None]:
        """The environment verdict of every rollout (``None``: not an environment problem)."""
        return self.verifier.verify([r.problem for r in rollouts], [r.text for r in rollouts])


P = TypeVar("P", bound=BaseModel)


class RewardSource(ABC, Generic[P]):
    """Scores rollouts. Subclasses set ``params`` via the constructor."""

    def __init__(self, params: P) -> None:
        self.params = params

    # e.g. {"policy"}: scores with the policy. Set on the class; a wrapper sets it per instance.
    needs: frozenset[str] = frozenset()
    # True: ``score`` asks ``ctx.env_verdicts`` for every rollout, so the reward stage may
    # start each verification as its rollout finishes (``verification.stream``).
    verifies_each: bool = False

    @abstractmethod
    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        """One verdict per rollout, in order."""

    def produces(self, environments: Sequence[str]) -> frozenset[str]:
        """What this source's verdicts carry besides a reward when trained on
        ``environments`` (e.g. ``"steps"``, per-tactic spans for process credit). The
        default: what the environments' verifiers produce, for sources that pass their
        verdicts on; sources that replace the verdict (CER, exact match) return nothing."""
        return frozenset()

    def metrics(self) -> dict[str, float]:
        """Scalars about the last ``score`` call (e.g. cache hit ratio); empty by default."""
        return {}


REWARDS: Registry[Spec[type[RewardSource[Any]]]] = Registry("reward source")
"""Reward sources by name (``reward``), built as ``spec.build(params)``."""
