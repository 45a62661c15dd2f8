"""Reward sources: the scorers that turn rollouts into verdicts (DESIGN.md rule 1).

A reward source is a class registered by name with the pydantic model of its parameters::

    class MyParams(BaseModel): ...

    @register_reward("my_reward", MyParams)
    class MyReward(RewardSource):
        def score(self, rollouts, ctx) -> list[Verdict]: ...

It sees the rollouts of one step (whole groups, so group-aware rewards such as CER can use
every sibling solution) and a :class:`RewardContext` with the tokenizer and the *current*
policy, for rewards that query the policy itself. It returns one verdict per rollout, in
order, and never raises on model output.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from verirl.registry import Registry
from verirl.types import Rollout, Verdict


class NoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")


@dataclass
class RewardContext:
    """What a reward source may use besides the rollouts.

    - ``tokenizer``: the policy's tokenizer.
    - ``model``: the policy module with its current weights (``None`` for rule-based runs).
    - ``device``: where ``model`` lives.
    """

    tokenizer: Any = None
    model: Any = None
    device: str = "cpu"


P = TypeVar("P", bound=BaseModel)


class RewardSource(ABC, Generic[P]):
    """Scores rollouts. Subclasses set ``params`` via the constructor."""

    def __init__(self, params: P) -> None:
        self.params = params

    @abstractmethod
    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        """One verdict per rollout, in order."""

    def metrics(self) -> dict[str, float]:
        """Scalars about the last ``score`` call (e.g. cache hit ratio); empty by default."""
        return {}


@dataclass(frozen=True)
class RewardSpec:
    name: str
    cls: type[RewardSource[Any]]
    params: type[BaseModel]

    def build(self, params: BaseModel | dict[str, Any] | None = None) -> RewardSource[Any]:
        if params is None or isinstance(params, dict):
            params = self.params.model_validate(params or {})
        return self.cls(params)


REWARDS: Registry[RewardSpec] = Registry("reward source")


def register_reward(
    name: str, params: type[BaseModel] = NoParams
) -> Callable[[type[RewardSource[Any]]], type[RewardSource[Any]]]:
    def decorator(cls: type[RewardSource[Any]]) -> type[RewardSource[Any]]:
        REWARDS.register(name)(RewardSpec(name=name, cls=cls, params=params))
        return cls

    return decorator


def get_reward(name: str) -> RewardSpec:
    from verirl import rewards as _pkg  # noqa: F401  (imports every reward module)

    return REWARDS.get(name)
