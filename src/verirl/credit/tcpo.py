"""TCPO — Turn-Level Credit Policy Optimization (Liao, Chen, Tang 2026, arXiv:2608.01667).

In multi-turn refinement the verifier scores every turn (r_{i,k} ∈ [0, 1] for episode i of a
prompt, turn k = 1..K_i). TCPO turns those scores into one advantage per turn from three
signals, combines them, normalises within (prompt, turn index) groups, weights early turns,
and broadcasts each turn's value to that turn's tokens. The equations below restate the
paper's; each component is its own function over ``[N, K]`` tables so it can be
tested on its own.

(1) retrospective   m_k = max_{t<k} r_t (m_1 = 0);  Δ_k = [r_k − m_k]_+;
                    pres_k = 1[m_k ≥ τ ∧ Δ_k = 0 ∧ r_k ≥ m_k];  reg_k = 1[m_k ≥ τ]·[m_k − r_k]_+;
                    c^ret_k = λ_imp Δ_k + λ_pres pres_k − λ_reg reg_k
(2) hindsight       u_k = max_{t≥k} r_t;  eligible_k = (m_k < τ) ∧ (Δ_k = 0);
                    c^hind_{i,k} = u_{i,k} − mean_{i'∈peers} u_{i',k} (eligible i' ≠ i, same
                    prompt, same k), 0 without peers or when (i, k) is not eligible
(3) counterfactual  for the turns the collector picked (top-L surprisal, history fixed, M
                    alternatives): c^cf_k = r_k − mean_m r^{(m)}_k, applied as a refinement
                    (see :func:`counterfactual_credit` and ``TCPOParams.cf_mode``)
(4) combine         c_k = c^ret_k + λ_hind c^hind_k (+ λ_cf c^cf_k, per ``cf_mode``);
                    Â = z-score of c within the (prompt, turn index) group (groups of fewer than
                    two turns keep the raw value); Â_k ← γ^{k−1} Â_k; every token of turn k
                    gets Â_k, feedback tokens 0.

The paper publishes none of λ_imp, λ_pres, λ_reg, λ_hind, λ_cf, τ, γ or how the
counterfactual combines; they are fields below with neutral defaults (1.0, τ = 1.0 = fully
correct, γ = 1.0), documented as such and *not* claimed to be the paper's values. L (how
many turns get a counterfactual) and M (alternatives per turn) are the collector's
(``multi_turn``: ``cf_top_l``, ``cf_alternatives``), since they decide what is sampled.

Caveat shared with MT-GRPO: the (prompt, turn index) groups contain only the episodes that
reached turn k, a set the policy influences (verl #7244; see ``mt_grpo``'s docstring).
"""

from __future__ import annotations

from typing import Literal

import torch
from pydantic import BaseModel, ConfigDict, Field

from verirl.credit.base import CREDIT, CreditInput
from verirl.credit.multiturn import (
    TurnTable,
    broadcast_turns,
    prompt_turn_keys,
    turn_table,
    zscore_by_key,
)

_NEUTRAL = " The paper does not publish it; 1.0 is a neutral default, not the paper's value."


class TCPOParams(BaseModel):
    """Coefficients of TCPO (arXiv:2608.01667). Every value the paper leaves unpublished
    has a neutral default and says so."""

    model_config = ConfigDict(extra="forbid")

    lambda_imp: float = Field(
        1.0, description="λ_imp: weight of the improvement Δ_k = [r_k − m_k]_+." + _NEUTRAL
    )
    lambda_pres: float = Field(
        1.0,
        description="λ_pres: bonus for a turn that keeps an already reached success "
        "(m_k ≥ τ, r_k = m_k)." + _NEUTRAL,
    )
    lambda_reg: float = Field(
        1.0,
        description="λ_reg: penalty per unit of score lost after a success "
        "(1[m_k ≥ τ]·[m_k − r_k]_+)." + _NEUTRAL,
    )
    lambda_hind: float = Field(
        1.0,
        description="λ_hind: weight of the hindsight credit u_k − leave-one-out peer mean "
        "on pre-success non-improving turns." + _NEUTRAL,
    )
    lambda_cf: float = Field(
        1.0,
        description="λ_cf: weight of the counterfactual credit r_k − mean(alternatives)."
        + _NEUTRAL,
    )
    counterfactual: bool = Field(
        True,
        description="Use the counterfactual alternatives' scores (Turn.alt_scores) when the "
        "collector drew them. False gives retrospective + hindsight only (the ablation rung "
        "below full TCPO).",
    )
    cf_mode: Literal["replace", "add"] = Field(
        "replace",
        description="How an applied counterfactual combines. 'replace': on that turn "
        "λ_cf·c^cf takes the place of λ_hind·c^hind (the direct fixed-history estimate refines "
        "the hindsight estimate of the same turn); 'add': it is added to it. The paper does "
        "not say which; 'replace' is our reading of 'refinement'.",
    )
    cf_apply_when: Literal["alternatives_vary", "any_contrast"] = Field(
        "alternatives_vary",
        description="When a turn's counterfactual is applied. 'alternatives_vary': the M "
        "alternatives' scores are not all equal (the issue's rule: the verifier separates the "
        "policy's draws from this history). 'any_contrast': the turn's score and its "
        "alternatives' scores are not all equal (also applies when every alternative "
        "succeeds and the turn failed, or the reverse).",
    )
    tau: float = Field(
        1.0,
        description="τ: success threshold on the turn score r ∈ [0, 1]. Keep it equal to the "
        "collector's success_threshold. The paper does not publish it; 1.0 means fully "
        "correct (0/1 maths scores).",
    )
    gamma: float = Field(
        1.0,
        gt=0,
        description="γ: turn k's advantage is multiplied by γ^(k−1) (an early-turn prior "
        "when < 1). The paper does not publish it; 1.0 is neutral.",
    )
    eps: float = Field(
        1e-6, gt=0, description="Added to the std in the (prompt, turn index) z-score."
    )


# ---- (1) retrospective -------------------------------------------------------------------
def best_prior(scores: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """[N, K] → m: m_{i,k} = max_{t<k} r_{i,t}, m_{i,1} = 0 (and never below 0)."""
    r = torch.where(valid, scores, torch.zeros_like(scores))
    shifted = torch.cat([torch.zeros_like(r[:, :1]), r[:, :-1]], dim=1)
    return torch.cummax(shifted.clamp(min=0.0), dim=1).values


def improvement(scores: torch.Tensor, prior: torch.Tensor) -> torch.Tensor:
    """Δ_{i,k} = [r_{i,k} − m_{i,k}]_+."""
    return (scores - prior).clamp(min=0.0)


def preservation(scores: torch.Tensor, prior: torch.Tensor, tau: float) -> torch.Tensor:
    """pres_{i,k} = 1[m_{i,k} ≥ τ ∧ Δ_{i,k} = 0 ∧ r_{i,k} ≥ m_{i,k}] (as 0./1.)."""
    delta = improvement(scores, prior)
    return ((prior >= tau) & (delta == 0) & (scores >= prior)).float()


def regression(scores: torch.Tensor, prior: torch.Tensor, tau: float) -> torch.Tensor:
    """reg_{i,k} = 1[m_{i,k} ≥ τ] · [m_{i,k} − r_{i,k}]_+."""
    return (prior >= tau).float() * (prior - scores).clamp(min=0.0)


def retrospective_credit(table: TurnTable, params: TCPOParams) -> torch.Tensor:
    """c^ret = λ_imp Δ + λ_pres pres − λ_reg reg, [N, K], 0 on invalid cells."""
    r, valid = table.scores, table.valid
    m = best_prior(r, valid)
    c = (
        params.lambda_imp * improvement(r, m)
        + params.lambda_pres * preservation(r, m, params.tau)
        - params.lambda_reg * regression(r, m, params.tau)
    )
    return torch.where(valid, c, torch.zeros_like(c))


# ---- (2) hindsight -----------------------------------------------------------------------
def best_future(scores: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """u_{i,k} = max_{t≥k} r_{i,t} over the episode's own turns; 0 on invalid cells."""
    masked = torch.where(valid, scores, torch.full_like(scores, -torch.inf))
    u = torch.cummax(masked.flip(1), dim=1).values.flip(1)
    return torch.where(valid, u, torch.zeros_like(u))


def hindsight_eligible(table: TurnTable, tau: float) -> torch.Tensor:
    """[N, K] bool: pre-success (m_k < τ) and non-improving (Δ_k = 0) turns."""
    m = best_prior(table.scores, table.valid)
    return table.valid & (m < tau) & (improvement(table.scores, m) == 0)


def hindsight_credit(table: TurnTable, tau: float) -> torch.Tensor:
    """c^hind_{i,k} = u_{i,k} − mean of u_{i',k} over the eligible peers i' ≠ i of the same
    prompt at the same turn index (leave-one-out); 0 when (i, k) is not eligible or has no
    eligible peer. [N, K]."""
    eligible = hindsight_eligible(table, tau)
    u = best_future(table.scores, table.valid)
    keys = prompt_turn_keys(table)
    flat_keys = keys[eligible]
    flat_u = u[eligible]
    out = torch.zeros_like(u)
    if flat_u.numel() == 0:
        return out
    uniq, inv = torch.unique(flat_keys, return_inverse=True)
    count = torch.zeros(uniq.numel()).index_add_(0, inv, torch.ones_like(flat_u))
    total = torch.zeros(uniq.numel()).index_add_(0, inv, flat_u)
    peers = count[inv] - 1
    loo_mean = (total[inv] - flat_u) / peers.clamp(min=1)
    out[eligible] = torch.where(peers > 0, flat_u - loo_mean, torch.zeros_like(flat_u))
    return out


# ---- (3) counterfactual ------------------------------------------------------------------
def counterfactual_applied(
    table: TurnTable, when: Literal["alternatives_vary", "any_contrast"]
) -> torch.Tensor:
    """[N, K] bool: turns whose counterfactual is applied.

    'alternatives_vary': alternatives were drawn and their scores are not all equal
    (population std > 0). 'any_contrast': the scores {r_k} ∪ alternatives are not all equal.
    """
    if when == "alternatives_vary":
        return table.valid & table.has_alt & (table.alt_std > 0)
    # not all equal ⟺ some alternative differs from the mean, or the turn differs from it
    contrast = (table.alt_std > 0) | (table.scores != table.alt_mean)
    return table.valid & table.has_alt & contrast


def counterfactual_credit(table: TurnTable) -> torch.Tensor:
    """c^cf_{i,k} = r_{i,k} − mean_m r^{(m)}_{i,k} where alternatives were drawn, else 0.

    The alternatives are M fresh turns sampled by the behaviour policy from the same history
    h_{i,<k}, so mean_m r^{(m)} estimates the value of that history under the policy and
    c^cf is a one-step advantage of the turn actually taken (positive when it beat them).
    """
    c = table.scores - table.alt_mean
    return torch.where(table.valid & table.has_alt, c, torch.zeros_like(c))


# ---- (4) combine, normalise, weight ------------------------------------------------------
def combined_credit(table: TurnTable, params: TCPOParams) -> torch.Tensor:
    """c = c^ret + λ_hind c^hind, with the counterfactual as a refinement on the turns where
    it applies: 'replace' → c^ret + λ_cf c^cf there; 'add' → c^ret + λ_hind c^hind + λ_cf c^cf.
    [N, K], 0 on invalid cells (before normalisation)."""
    ret = retrospective_credit(table, params)
    hind = params.lambda_hind * hindsight_credit(table, params.tau)
    if not params.counterfactual:
        return ret + hind
    applied = counterfactual_applied(table, params.cf_apply_when)
    cf = params.lambda_cf * counterfactual_credit(table)
    if params.cf_mode == "replace":
        refined = torch.where(applied, cf, hind)
    else:
        refined = hind + torch.where(applied, cf, torch.zeros_like(cf))
    return torch.where(table.valid, ret + refined, torch.zeros_like(ret))


def turn_weights(table: TurnTable, gamma: float) -> torch.Tensor:
    """[N, K]: γ^{k−1} for turn k."""
    return gamma ** (table.turn_index - 1).to(torch.float32)


def tcpo_turn_advantages(table: TurnTable, params: TCPOParams) -> torch.Tensor:
    """Per-turn advantages Â [N, K]: combined credit, z-scored within (prompt, turn index)
    groups (groups of fewer than two turns keep the raw value), times γ^{k−1}."""
    c = combined_credit(table, params)
    z = zscore_by_key(c, table.valid, prompt_turn_keys(table), params.eps)
    return z * turn_weights(table, params.gamma)


def _tcpo_needs(params: TCPOParams) -> frozenset[str]:
    """Turns always; the counterfactual alternatives when that component is on."""
    if params.counterfactual and params.lambda_cf != 0:
        return frozenset({"turns", "counterfactual"})
    return frozenset({"turns"})


@CREDIT.register("tcpo", TCPOParams, needs=_tcpo_needs)
def tcpo(inp: CreditInput, params: TCPOParams) -> torch.Tensor:
    """TCPO turn-level credit (Liao et al. 2026, arXiv:2608.01667; the components (1)–(4)
    restated in this module's docstring).

    Input: ``inp.turns`` (per rollout, its turns with token spans, scores r ∈ [0, 1] and
    optional counterfactual ``alt_scores``), ``inp.groups`` [N] (prompt groups),
    ``inp.response_mask`` [N, T]. Output [N, T]: Â_{i,k} on the tokens of turn k of rollout
    i, 0 on feedback tokens and padding.
    """
    table = turn_table(inp, "tcpo")
    adv = tcpo_turn_advantages(table, params)
    return broadcast_turns(adv, inp.turns, inp.response_mask.shape[1])
