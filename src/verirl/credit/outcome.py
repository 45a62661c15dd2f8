"""Outcome-level estimators: one scalar reward (or, for GDPO, one reward per component) per
rollout, broadcast to all its tokens.

Shapes: ``inp.rewards`` [N], ``inp.groups`` [N]; output [N, T] (masked by the caller).
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import BaseModel, ConfigDict, Field, model_validator

from verirl.credit.base import CREDIT, CreditInput, broadcast, group_mean_std


class GRPOParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    eps: float = Field(
        1e-6,
        gt=0,
        description="Added to the group std before dividing (RLVE/DAPO use 1e-6).",
    )


@CREDIT.register("grpo", GRPOParams)
def grpo(inp: CreditInput, params: GRPOParams) -> torch.Tensor:
    """GRPO (Shao et al. 2024, DeepSeekMath eq. 3 outcome supervision):

        A_i = (r_i − mean_g(r)) / (std_g(r) + eps)

    with the unbiased std over the rollout's group g (as ``torch.std``, verl and TRL). A group
    of one rollout, or of equal rewards, gets advantage 0.
    """
    mean, std, _ = group_mean_std(inp.rewards, inp.groups)
    return broadcast((inp.rewards - mean) / (std + params.eps), inp.response_mask)


@CREDIT.register("dr_grpo")
def dr_grpo(inp: CreditInput, params: BaseModel) -> torch.Tensor:
    """Dr. GRPO (Liu et al. 2025, "Understanding R1-Zero-Like Training", §3.2): the group
    baseline without the std division, A_i = r_i − mean_g(r). Pair it with the
    ``seq-mean-token-sum-norm`` aggregation to remove the length bias as the paper does."""
    mean, _, _ = group_mean_std(inp.rewards, inp.groups)
    return broadcast(inp.rewards - mean, inp.response_mask)


@CREDIT.register("rloo")
def rloo(inp: CreditInput, params: BaseModel) -> torch.Tensor:
    """RLOO (Ahmadian et al. 2024, eq. 6): the leave-one-out baseline

        A_i = r_i − (1/(G−1)) Σ_{j≠i} r_j  =  G/(G−1) · (r_i − mean_g(r)),

    0 for a group of one. The estimator CER's released code uses."""
    mean, _, count = group_mean_std(inp.rewards, inp.groups)
    scale = torch.where(count > 1, count / (count - 1).clamp(min=1), torch.zeros_like(count))
    return broadcast(scale * (inp.rewards - mean), inp.response_mask)


class MaxRLParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    signal: Literal["reward", "correct"] = Field(
        "reward",
        description="What counts as success: 'reward' (the rollout's reward, as prime-rl's "
        "max_rl; the paper's when rewards are binary) or 'correct' (the verdict's fully-correct "
        "flag as r ∈ {0, 1}: the paper's estimator on environments with graded rewards).",
    )


@CREDIT.register("max_rl", MaxRLParams)
def max_rl(inp: CreditInput, params: MaxRLParams) -> torch.Tensor:
    """MaxRL (Tajwar et al., "Maximum Likelihood Reinforcement Learning", arXiv 2602.02710):
    the gradient of the log-likelihood of success log p_θ(x), not of p_θ(x) — the estimator of
    its Theorem 1 (the mean of ∇log π over the group's successful samples) with the group's
    mean score as a zero-mean control variate. Per rollout, with r̄ = mean_g(r) = K/G for K
    successes of G,

        (1/K) Σ_i r_i ∇log π(y_i) − (1/G) Σ_i ∇log π(y_i) = (1/G) Σ_i (r_i − r̄)/r̄ · ∇log π(y_i)

    so A_i = (r_i − r̄) / r̄: GRPO's centring divided by the group mean instead of its std,
    which weighs a prompt by 1/p (hard prompts more). When r̄ ≤ 0 (no success; or a graded
    reward's mean at or below 0) the advantage is the centring alone, r_i − r̄, as prime-rl's
    ``max_rl`` (0 for a group without success). Shapes: [N] rewards → [N, T]."""
    r = inp.rewards if params.signal == "reward" else inp.correct.to(inp.rewards.dtype)
    mean, _, _ = group_mean_std(r, inp.groups)
    centred = r - mean
    scale = torch.where(mean > 0, mean, torch.ones_like(mean))
    return broadcast(centred / scale, inp.response_mask)


class GDPOParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    components: list[str] = Field(
        min_length=1,
        description="The reward's parts, each normalised in its group before the sum: numbers "
        "the reward source records in Verdict.extra (rule_cer: 'rule', 'cer'; DAPO's overlong "
        "shaping: 'overlong_penalty'), or 'reward' (the verdict's reward) and 'correct' (1 if "
        "fully correct, else 0).",
    )
    weights: list[float] | None = Field(
        None,
        description="Weight w_k of each component in the sum (None: all 1, the paper's).",
    )
    eps: float = Field(1e-6, gt=0, description="Added to each std before dividing (TRL: 1e-4).")

    @model_validator(mode="after")
    def _one_weight_each(self) -> GDPOParams:
        if self.weights is not None and len(self.weights) != len(self.components):
            raise ValueError(f"{len(self.weights)} weights for {len(self.components)} components")
        return self


@CREDIT.register("gdpo", GDPOParams)
def gdpo(inp: CreditInput, params: GDPOParams) -> torch.Tensor:
    """GDPO (Liu et al., "GDPO: Group reward-Decoupled Normalization Policy Optimization for
    Multi-reward RL Optimization", arXiv 2601.05242, NVlabs): with a reward of n parts r_1..r_n,
    GRPO normalises their sum, so distinct combinations collapse to the same advantage; GDPO
    normalises each part in its group first, sums, then normalises over the batch B:

        A_k,i = (r_k,i − mean_g(r_k)) / (std_g(r_k) + eps)
        A_i   = Σ_k w_k A_k,i
        Â_i   = (A_i − mean_B(A)) / (std_B(A) + eps)

    mean_B(A) is 0 by construction (each A_k sums to 0 over its group), so it is not
    subtracted: a group without signal keeps advantage exactly 0. Unbiased stds, as ``grpo``.
    Shapes: [N] per component → [N, T]."""
    weights = params.weights or [1.0] * len(params.components)
    total = torch.zeros_like(inp.rewards)
    for name, w in zip(params.components, weights, strict=True):
        part = inp.component(name)
        mean, std, _ = group_mean_std(part, inp.groups)
        total = total + w * (part - mean) / (std + params.eps)
    batch_std = total.std() if total.numel() > 1 else torch.zeros(())
    return broadcast(total / (batch_std + params.eps), inp.response_mask)
