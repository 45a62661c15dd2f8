"""Credit estimators: scores in, token-level advantages out, kept apart from the scorers.

An estimator is a pure function ``(CreditInput, params) -> Tensor[N, T]`` registered by name
with the pydantic model of its parameters::

    class MyParams(BaseModel):
        scale: float = Field(1.0, description="...")

    @CREDIT.register("my_estimator", MyParams)
    def my_estimator(inp: CreditInput, params: MyParams) -> torch.Tensor:
        '''Shapes, the paper and the equation it implements.'''

The config names the estimator (``credit.name``) and gives its parameters
(``credit.params``), which are validated against the registered model when the config is
loaded, so an unknown or mistyped parameter is reported before any work starts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from pydantic import BaseModel

from verirl.registry import Registry, Spec
from verirl.types import Rollout, Turn


@dataclass(frozen=True)
class CreditInput:
    """Everything an estimator may read. ``N`` rollouts, ``T`` = longest response.

    - ``rewards``        [N] float: each rollout's scalar score.
    - ``correct``        [N] bool: fully correct (proof passed, answer right).
    - ``groups``         [N] long: group id; rollouts of the same prompt share it.
    - ``response_mask``  [N, T] float: 1 on tokens the model produced and is trained on.
    - ``step_starts``    per rollout, the response-token index of the first token of each
      verified step (e.g. proof tactic), in order; empty when the scorer gave no steps.
    - ``first_failed_step`` per rollout, the index (into ``step_starts``) of the first step
      that failed, or ``None``.
    - ``status``         per rollout, the scorer's status word (``"pass"``, ``"error"``,
      ``"timeout"``, ``"incomplete"``, ``"rejected"``...), or ``""``.
    - ``turns``          per rollout, its turns (multi-turn episodes); empty for one turn.
    - ``extra``          per rollout, its verdict's ``extra`` (scorer-specific facts, among
      them the parts of a combined reward: :meth:`component`).
    """

    rewards: torch.Tensor
    correct: torch.Tensor
    groups: torch.Tensor
    response_mask: torch.Tensor
    step_starts: tuple[tuple[int, ...], ...] = ()
    first_failed_step: tuple[int | None, ...] = ()
    status: tuple[str, ...] = ()
    turns: tuple[tuple[Turn, ...], ...] = ()
    extra: tuple[Mapping[str, Any], ...] = ()

    @property
    def n(self) -> int:
        return int(self.rewards.shape[0])

    def component(self, name: str) -> torch.Tensor:
        """[N] float: one part of each rollout's reward — ``"reward"`` (the whole reward),
        ``"correct"`` (1 if fully correct, else 0), or the number the reward source recorded
        under ``name`` in the verdict's ``extra`` (``rule_cer``: ``rule``, ``cer``; DAPO's
        overlong shaping: ``overlong_penalty``). ``ValueError`` naming the rollout and the
        numbers it has when one lacks it."""
        if name == "reward":
            return self.rewards
        if name == "correct":
            return self.correct.to(self.rewards.dtype)
        values = []
        for i, facts in enumerate(self.extra or ({},) * self.n):
            value = facts.get(name)
            if not isinstance(value, int | float):
                numbers = sorted(k for k, v in facts.items() if isinstance(v, int | float))
                raise ValueError(
                    f"reward component {name!r}: rollout {i}'s verdict has no number under "
                    f"extra[{name!r}] (numbers it has: {', '.join(numbers) or 'none'}; "
                    "'reward' and 'correct' are always there)"
                )
            values.append(float(value))
        return torch.tensor(values, dtype=self.rewards.dtype)

    @classmethod
    def from_rewards(
        cls,
        rewards: Sequence[float],
        groups: Sequence[int],
        lengths: Sequence[int] | None = None,
        correct: Sequence[bool] | None = None,
    ) -> CreditInput:
        """A minimal input from plain lists (tests, simple callers). ``lengths`` defaults
        to one token per rollout."""
        r = torch.as_tensor(rewards, dtype=torch.float32)
        lengths = list(lengths) if lengths is not None else [1] * len(r)
        t = max(lengths, default=0)
        mask = torch.zeros(len(r), t)
        for i, n in enumerate(lengths):
            mask[i, :n] = 1.0
        return cls(
            rewards=r,
            correct=torch.as_tensor(
                list(correct) if correct is not None else [x >= 1.0 for x in rewards],
                dtype=torch.bool,
            ),
            groups=torch.as_tensor(groups, dtype=torch.long),
            response_mask=mask,
        )

    @classmethod
    def from_rollouts(
        cls,
        rollouts: Sequence[Rollout],
        step_starts: Sequence[Sequence[int]] | None = None,
        tokenizer: Any = None,
    ) -> CreditInput:
        """Build the input from scored rollouts.

        Verified steps become token positions here, where proof verdicts become credit
        input: when verdicts carry ``steps`` (character spans of the output) and
        ``step_starts`` is not given, each step's first response token is found with
        :func:`verirl.credit.spans.step_token_starts` and ``tokenizer``."""
        if any(r.verdict is None for r in rollouts):
            raise ValueError("every rollout must be scored (verdict set) before credit")
        if step_starts is None and any(r.verdict and r.verdict.steps for r in rollouts):
            if tokenizer is None:
                raise ValueError("verdicts carry steps: CreditInput.from_rollouts needs tokenizer")
            from verirl.credit.spans import step_token_starts

            step_starts = [
                step_token_starts(r.text, r.response_ids, r.verdict.steps, tokenizer)
                if r.verdict and r.verdict.steps
                else ()
                for r in rollouts
            ]
        t = max((len(r.response_ids) for r in rollouts), default=0)
        mask = torch.zeros(len(rollouts), t)
        for i, r in enumerate(rollouts):
            mask[i, : len(r.response_ids)] = torch.as_tensor(r.mask, dtype=torch.float32)
        verdicts = [r.verdict for r in rollouts if r.verdict is not None]  # all set, checked above
        return cls(
            rewards=torch.tensor([v.reward for v in verdicts], dtype=torch.float32),
            correct=torch.tensor([v.correct for v in verdicts], dtype=torch.bool),
            groups=torch.tensor([r.group for r in rollouts], dtype=torch.long),
            response_mask=mask,
            step_starts=tuple(tuple(s) for s in step_starts) if step_starts is not None else (),
            first_failed_step=tuple(v.first_failed_step for v in verdicts),
            status=tuple(str(v.extra.get("status", "")) for v in verdicts),
            turns=tuple(r.turns for r in rollouts),
            extra=tuple(v.extra for v in verdicts),
        )


@dataclass(frozen=True)
class CreditEstimator(Spec[Callable[[CreditInput, Any], torch.Tensor]]):
    """A registered estimator: ``part(inp, params)`` and what the rollouts must carry,
    ``needs`` (a set, or a function of the parameters)."""

    needs: frozenset[str] | Callable[[Any], frozenset[str]] = frozenset()

    def requirements(self, params: BaseModel | dict[str, Any] | None = None) -> frozenset[str]:
        """What the rollouts must carry for this estimator with ``params`` (components declare
        what they need): ``"steps"`` (verified steps in the verdicts), ``"turns"``
        (multi-turn episodes), ``"counterfactual"`` (alternative scores of chosen turns)."""
        if callable(self.needs):
            return frozenset(self.needs(self.parse(params)))
        return self.needs

    def __call__(
        self, inp: CreditInput, params: BaseModel | dict[str, Any] | None = None
    ) -> torch.Tensor:
        out = self.part(inp, self.parse(params))
        expected = tuple(inp.response_mask.shape)
        if tuple(out.shape) != expected:
            raise RuntimeError(
                f"credit estimator {self.name!r} returned shape {tuple(out.shape)}, "
                f"expected {expected}"
            )
        return out * inp.response_mask


CREDIT: Registry[CreditEstimator] = Registry("credit estimator", CreditEstimator)
"""Credit estimators by name (``credit``): ``@CREDIT.register(name, params, needs=...)`` on
``fn(inp, params) -> advantages [N, T]``."""


# ---- small tensor helpers shared by estimators ----------------------------------------------
def broadcast(per_sequence: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """[N] → [N, T]: the same value on every response token."""
    return per_sequence.unsqueeze(1) * mask


def group_index(groups: torch.Tensor) -> tuple[torch.Tensor, int]:
    """Map arbitrary group ids to 0..G-1. Returns (index [N], G)."""
    uniq, inverse = torch.unique(groups, return_inverse=True)
    return inverse, int(uniq.numel())


def group_mean_std(
    values: torch.Tensor, groups: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-element mean, unbiased std (0 for singletons) and size of the element's group.

    A group whose values are all equal has exactly that value as its mean and std 0: a
    float32 sum rounds (six rewards of 0.3 average to 0.3 + 3e-8), and a baseline off by
    that much, divided by ``std + 1e-6``, would give every member of a group without signal
    the same spurious advantage (0.029 there)."""
    idx, g = group_index(groups)
    ones = torch.ones_like(values)
    count = torch.zeros(g).index_add_(0, idx, ones)
    total = torch.zeros(g).index_add_(0, idx, values)
    mean = total / count
    high = torch.full((g,), -torch.inf).scatter_reduce_(0, idx, values, "amax")
    low = torch.full((g,), torch.inf).scatter_reduce_(0, idx, values, "amin")
    mean = torch.where(high == low, high, mean)
    sq = torch.zeros(g).index_add_(0, idx, (values - mean[idx]) ** 2)
    var = torch.where(count > 1, sq / (count - 1).clamp(min=1), torch.zeros_like(sq))
    return mean[idx], var.sqrt()[idx], count[idx]
