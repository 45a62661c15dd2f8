"""Token masks: which response tokens carry the policy gradient (``loss.token_mask``).

A mask is a pure function ``fn(MaskInputs, params) -> (keep [N, R], statistics)`` over the
rows of one minibatch, registered with what it reads. The learner multiplies the per-token
policy loss by ``keep`` (after the off-policy weights, before the loss terms: a KL or entropy
term still covers every token), so tokens outside it add nothing to the loss or the gradient
while still counting in the aggregation's normaliser. ``keep`` is detached.

Masks that read the entropy see the policy's entropies at π_old, from one no-grad pass over
the rollout batch before its first optimizer step (the pass that recomputes π_old when it is
recomputed), and select over the whole minibatch, skipped rows without signal included: the
selection is then the same however the minibatch is split into micro-batches or ranks, and
whether or not rows without signal are skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field

from verirl.registry import Registry, Spec

Stats = dict[str, float]


@dataclass(frozen=True)
class MaskInputs:
    """The rows of one minibatch, [M, R] each: ``mask`` (1 on trained tokens), ``advantages``
    and ``entropy`` (the policy's per-token entropy at π_old, no gradient; None unless the
    mask needs ``"entropy"``)."""

    mask: torch.Tensor
    advantages: torch.Tensor
    entropy: torch.Tensor | None = None


MaskFn = Callable[[MaskInputs, Any], tuple[torch.Tensor, Stats]]


@dataclass(frozen=True)
class TokenMask(Spec[MaskFn]):
    """A registered mask: ``part(MaskInputs, params) -> (keep [M, R], stats)``; ``needs``:
    ``{"entropy"}`` when it reads the entropies."""

    needs: frozenset[str] = frozenset()


TOKEN_MASKS: Registry[TokenMask] = Registry("token mask", TokenMask)
"""Token masks by name (``loss.token_mask: {name, params}``): ``@TOKEN_MASKS.register(name,
Params, needs=...)`` on a :data:`MaskFn`."""


@TOKEN_MASKS.register("none")
def every_token(inputs: MaskInputs, params: BaseModel) -> tuple[torch.Tensor, Stats]:
    """Every token carries gradient (keep = 1)."""
    return torch.ones_like(inputs.mask), {}


class TopEntropyParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rho: float = Field(
        0.2,
        ge=0,
        le=1,
        description="ρ: the share of the minibatch's response tokens, highest entropy first, "
        "that carry the policy gradient (Wang et al. 2025, 'Beyond the 80/20 Rule': 0.2; TRL "
        "top_entropy_quantile). 1 keeps every token.",
    )


@TOKEN_MASKS.register("top_entropy", TopEntropyParams, needs=frozenset({"entropy"}))
def top_entropy(inputs: MaskInputs, params: TopEntropyParams) -> tuple[torch.Tensor, Stats]:
    """Only the high-entropy "forking" tokens carry the policy gradient (Wang et al., "Beyond
    the 80/20 Rule: High-Entropy Minority Tokens Drive Effective Reinforcement Learning for
    LLM Reasoning", arXiv 2506.01939, the indicator of its J_HighEnt objective, DAPO's
    objective restricted to the top-ρ entropy tokens of each batch B):

        keep_t = 1[H_t ≥ τ_ρ^B],   τ_ρ^B = the (1 − ρ)-quantile of H over B's tokens

    (linearly interpolated quantile, ties kept, as TRL's ``top_entropy_quantile``). The batch
    is the minibatch of one optimizer step; ρ = 0.2 keeps its top 20 %. Shapes: [M, R] in and
    out. Statistics: ``top_entropy_threshold`` τ_ρ and ``tokens_kept``, the share kept."""
    if inputs.entropy is None:
        raise ValueError("the top_entropy mask needs the policy's entropies ('entropy')")
    trained = inputs.mask > 0
    values = inputs.entropy[trained].float()
    if values.numel() == 0:
        return torch.zeros_like(inputs.mask), {"top_entropy_threshold": 0.0, "tokens_kept": 0.0}
    threshold = torch.quantile(values, 1.0 - params.rho)
    keep = ((inputs.entropy >= threshold) & trained).to(inputs.mask.dtype)
    return keep, {
        "top_entropy_threshold": float(threshold),
        "tokens_kept": float(keep.sum()) / float(values.numel()),
    }


@dataclass(frozen=True)
class ConfiguredMask:
    """``loss.token_mask`` resolved: the registered mask and its validated parameters."""

    spec: TokenMask
    params: BaseModel

    @classmethod
    def build(cls, name: str, params: dict[str, Any]) -> ConfiguredMask:
        spec = TOKEN_MASKS.get(name)
        return cls(spec, spec.parse(params))

    @property
    def needs(self) -> frozenset[str]:
        return self.spec.needs

    def __call__(self, inputs: MaskInputs) -> tuple[torch.Tensor, Stats]:
        with torch.no_grad():
            keep, stats = self.spec.part(inputs, self.params)
        return keep, stats
