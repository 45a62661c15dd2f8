"""Outcome-level estimators: one scalar reward per rollout, broadcast to all its tokens.

Shapes: ``inp.rewards`` [N], ``inp.groups`` [N]; output [N, T] (masked by the caller).
"""

from __future__ import annotations

import torch
from pydantic import BaseModel, ConfigDict, Field

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
