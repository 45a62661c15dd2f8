"""Policy losses and loss aggregation: pure functions over [N, R] tensors (the terms added to
the policy loss, the KL penalty among them, are in :mod:`verirl.train.terms`).

Shapes throughout: ``N`` sequences × ``R`` response tokens; ``mask`` is 1 on trained tokens.

Where the *old* log-probs come from: ``old_logprobs`` in the learner's batch is either the
log-prob the rollout engine recorded while sampling (``optim.old_logprobs = "rollout"``: free,
exact when the engine shares the learner's weights and precision) or a no-grad forward pass of
the learner over the whole batch before the first optimisation step
(``"recompute"``: verl's default; needed when the engine is a different implementation such as
vLLM or samples in another precision). Either way they are fixed for all epochs and
minibatches of one rollout batch, so the ratio π_θ/π_old measures how far the updates of this
batch have moved the policy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field

from verirl.registry import Registry, Spec

Stats = dict[str, torch.Tensor]


class ClippedSurrogateParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    eps_low: float = Field(
        0.2, ge=0, description="Lower clip ε_low: ratio floored at 1 − ε_low (PPO/DAPO: 0.2)."
    )
    eps_high: float = Field(
        0.28,
        ge=0,
        description="Upper clip ε_high: ratio capped at 1 + ε_high. DAPO's clip-higher uses "
        "0.28 (with ε_low 0.2); 0.2 gives symmetric PPO clipping (CER's released code).",
    )
    dual_clip: float | None = Field(
        None,
        gt=1,
        description="Dual-clip constant c (Ye et al. 2020): for negative advantages the loss "
        "is bounded by −c·A. verl's default is 3.0; None disables it.",
    )


LossFn = Callable[
    [torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, Any], tuple[torch.Tensor, Stats]
]


@dataclass(frozen=True)
class PolicyLossSpec(Spec[LossFn]):
    """A registered policy loss (``part``: a :data:`LossFn`). ``advantage_gated``: the loss and
    its gradient vanish on a token whose advantage is 0 — the learner then skips the rows
    whose every advantage is 0 (``optim.skip_zero_advantage_rows``). Leave it False for a loss
    with a term that does not scale with the advantage (an entropy bonus, say)."""

    advantage_gated: bool = False


POLICY_LOSSES: Registry[PolicyLossSpec] = Registry("policy loss", PolicyLossSpec)
"""Policy losses by name (``loss.policy``): ``@POLICY_LOSSES.register(name, params,
advantage_gated=...)`` on a :data:`LossFn`."""


@POLICY_LOSSES.register("clipped_surrogate", ClippedSurrogateParams, advantage_gated=True)
def clipped_surrogate(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    params: ClippedSurrogateParams,
) -> tuple[torch.Tensor, Stats]:
    """PPO's clipped surrogate (Schulman et al. 2017, eq. 7) with clip-higher (DAPO, Yu et
    al. 2025, eq. 10) and optional dual clip (Ye et al. 2020, eq. 5). Per token:

        ρ = exp(log π_θ − log π_old)
        L = −min(ρ·A, clip(ρ, 1 − ε_low, 1 + ε_high)·A)
        dual clip, A < 0:  L = min(L, −c·A)

    Returns the per-token loss [N, R] (to be aggregated) and statistics (clip fraction,
    approximate KL to π_old, mean ratio) over masked tokens.
    """
    log_ratio = logprobs - old_logprobs
    ratio = torch.exp(log_ratio)
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - params.eps_low, 1.0 + params.eps_high)
    loss = torch.maximum(unclipped, clipped)
    if params.dual_clip is not None:
        bounded = torch.minimum(loss, -params.dual_clip * advantages)
        loss = torch.where(advantages < 0, bounded, loss)
    with torch.no_grad():
        denom = mask.sum().clamp(min=1)
        stats = {
            "clip_frac": ((clipped > unclipped).float() * mask).sum() / denom,
            "approx_kl_old": ((0.5 * log_ratio**2) * mask).sum() / denom,
            "ratio_mean": (ratio * mask).sum() / denom,
        }
    return loss, stats


class CISPOParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    eps_high: float = Field(
        4.0,
        gt=0,
        description="Upper clip of the IS weight, r̂ ≤ 1 + ε_high (MiniMax-M1 tunes only this "
        "bound; ScaleRL's ε_max = 5, TRL's epsilon_high=5.0, is 4.0 here).",
    )
    eps_low: float | None = Field(
        None,
        ge=0,
        description="Lower clip r̂ ≥ 1 − ε_low; None: no lower bound (MiniMax-M1 sets ε_low^IS "
        "large).",
    )


@POLICY_LOSSES.register("cispo", CISPOParams, advantage_gated=True)
def cispo(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    params: CISPOParams,
) -> tuple[torch.Tensor, Stats]:
    """CISPO, clipped IS-weight policy optimization (MiniMax, "MiniMax-M1: Scaling Test-Time
    Compute Efficiently with Lightning Attention", arXiv 2506.13585, eq. 4): REINFORCE with the
    importance weight clipped and detached, so no token loses its gradient to the clip:

        J = E[ 1/Σ_i|o_i| · Σ_i Σ_t sg(r̂_i,t) · Â_i,t · log π_θ(o_i,t | q, o_i,<t) ]
        r̂_i,t = clip(r_i,t, 1 − ε_low, 1 + ε_high),  r_i,t = π_θ / π_old

    Per token L = −sg(r̂)·A·log π_θ (its value is not the surrogate's; its gradient −r̂·A·∇log π_θ
    is). The paper's 1/Σ|o_i| is ``loss.aggregation: token-mean``. Returns [N, R] and the
    share of tokens whose weight was clipped, the mean ratio and the approximate KL to π_old."""
    log_ratio = logprobs - old_logprobs
    ratio = torch.exp(log_ratio)
    low = None if params.eps_low is None else 1.0 - params.eps_low
    weight = torch.clamp(ratio, min=low, max=1.0 + params.eps_high).detach()
    loss = -weight * advantages * logprobs
    with torch.no_grad():
        denom = mask.sum().clamp(min=1)
        stats = {
            "clip_frac": ((weight != ratio).float() * mask).sum() / denom,
            "approx_kl_old": ((0.5 * log_ratio**2) * mask).sum() / denom,
            "ratio_mean": (ratio * mask).sum() / denom,
        }
    return loss, stats


class SAPOParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tau_pos: float = Field(
        1.0, gt=0, description="Gate temperature τ for tokens with A > 0 (SAPO: 1.0)."
    )
    tau_neg: float = Field(
        1.05,
        gt=0,
        description="Gate temperature τ for tokens with A ≤ 0 (SAPO: 1.05; larger: the gate "
        "closes faster for negative advantages).",
    )


@POLICY_LOSSES.register("sapo", SAPOParams, advantage_gated=True)
def sapo(
    logprobs: torch.Tensor,
    old_logprobs: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    params: SAPOParams,
) -> tuple[torch.Tensor, Stats]:
    """SAPO, soft adaptive policy optimization (Gao et al., "Soft Adaptive Policy
    Optimization", arXiv 2511.20347): the hard clip replaced by a smooth gate of the ratio,

        J = E[ 1/G Σ_i 1/|y_i| Σ_t f_i,t(r_i,t) · Â_i,t ]
        f_i,t(x) = (4/τ_i,t) · σ(τ_i,t · (x − 1)),  τ_i,t = τ_pos if Â_i,t > 0 else τ_neg

    Per token L = −f(r)·A; its gradient is −w·A·∇log π_θ with w = 4·σ·(1 − σ)·r, 1 on-policy
    (r = 1) and decaying smoothly as r leaves 1. The paper averages per sequence
    (``loss.aggregation: seq-mean-token-mean``, TRL's sapo). Returns [N, R] and the mean gate
    weight w and ratio over masked tokens."""
    ratio = torch.exp(logprobs - old_logprobs)
    tau = torch.where(
        advantages > 0,
        torch.full_like(advantages, params.tau_pos),
        torch.full_like(advantages, params.tau_neg),
    )
    gate = torch.sigmoid(tau * (ratio - 1.0))
    loss = -(4.0 / tau) * gate * advantages
    with torch.no_grad():
        denom = mask.sum().clamp(min=1)
        stats = {
            "sapo_weight_mean": ((4.0 * gate * (1.0 - gate) * ratio) * mask).sum() / denom,
            "ratio_mean": (ratio * mask).sum() / denom,
        }
    return loss, stats


# ---- aggregation -----------------------------------------------------------------------------
@dataclass(frozen=True)
class AggregationScale:
    """Totals of the whole minibatch, so that summing the aggregated losses of its
    micro-batches gives exactly the minibatch's loss (gradient accumulation is exact).

    - ``tokens``: masked tokens in the minibatch; ``sequences``: sequences in it;
    - ``norm_length``: the constant C of ``seq-mean-token-sum-norm`` (Dr. GRPO's generation
      budget; the learner uses the maximum number of new tokens).
    """

    tokens: float
    sequences: float
    norm_length: float


AggFn = Callable[[torch.Tensor, torch.Tensor, AggregationScale], torch.Tensor]
AGGREGATIONS: Registry[Spec[AggFn]] = Registry("loss aggregation")
"""Aggregations by name (``loss.aggregation``): ``part(loss [N, R], mask [N, R], scale)`` → the
minibatch's share of the loss, a scalar. A new one is one more ``@AGGREGATIONS.register``."""


@AGGREGATIONS.register("token-mean")
def token_mean(loss: torch.Tensor, mask: torch.Tensor, scale: AggregationScale) -> torch.Tensor:
    """Σ_i Σ_t l_it / Σ_i |o_i|: every token weighs the same (DAPO's token-level loss)."""
    return (loss * mask).sum() / max(scale.tokens, 1.0)


@AGGREGATIONS.register("seq-mean-token-mean")
def seq_mean_token_mean(
    loss: torch.Tensor, mask: torch.Tensor, scale: AggregationScale
) -> torch.Tensor:
    """(1/N) Σ_i (1/|o_i|) Σ_t l_it: GRPO's original per-sequence mean (and RLVE/slime's)."""
    per_seq = (loss * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)
    return per_seq.sum() / max(scale.sequences, 1.0)


@AGGREGATIONS.register("seq-mean-token-sum")
def seq_mean_token_sum(
    loss: torch.Tensor, mask: torch.Tensor, scale: AggregationScale
) -> torch.Tensor:
    """(1/N) Σ_i Σ_t l_it: per-sequence sums averaged (CER's released configuration)."""
    return (loss * mask).sum() / max(scale.sequences, 1.0)


@AGGREGATIONS.register("seq-mean-token-sum-norm")
def seq_mean_token_sum_norm(
    loss: torch.Tensor, mask: torch.Tensor, scale: AggregationScale
) -> torch.Tensor:
    """(1/N) Σ_i Σ_t l_it / C with a constant C (Dr. GRPO, Liu et al. 2025, eq. 2): no
    dependence on each response's own length, so no length bias."""
    return (loss * mask).sum() / max(scale.sequences * scale.norm_length, 1.0)


# ---- engine/learner mismatch -----------------------------------------------------------------
def logprob_mismatch(
    learner_logprobs: torch.Tensor, engine_logprobs: torch.Tensor, mask: torch.Tensor
) -> dict[str, float]:
    """The rollout–trainer mismatch over masked tokens ([N, R] inputs): how far the rollout
    engine's numerics (its kernels, a low-precision sampling copy) drift from the learner's
    on the same weights.

    - ``engine_logp_diff_mean`` / ``_max``: mean and max of |log π_engine − log π_learner|
      (SkyRL's CI bound on the mean: 0.0104);
    - ``engine_logp_kl``: KL(π_engine ‖ π_learner) per token, estimated from the engine's own
      samples with Schulman's k3 (Schulman 2020, "Approximating KL divergence"): with
      δ = log π_learner − log π_engine, k3 = exp(δ) − δ − 1 ≥ 0 (prime-rl's bound on its
      mean: 0.01).
    """
    delta = learner_logprobs - engine_logprobs
    diff = delta.abs() * mask
    k3 = (torch.exp(delta) - delta - 1.0) * mask
    tokens = float(mask.sum())
    if tokens == 0:
        return {"engine_logp_diff_mean": 0.0, "engine_logp_diff_max": 0.0, "engine_logp_kl": 0.0}
    return {
        "engine_logp_diff_mean": float(diff.sum()) / tokens,
        "engine_logp_diff_max": float(diff.max()),
        "engine_logp_kl": float(k3.sum()) / tokens,
    }
