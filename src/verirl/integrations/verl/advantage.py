"""verirl's credit estimators in verl's advantage-estimator registry (``@register_adv_est``).

A verl estimator receives ``token_level_rewards`` [B, T], ``response_mask`` [B, T], the group
``index`` (one uid per prompt, repeated over its ``rollout.n`` samples) and the algorithm
config — nothing else from the batch. What verirl's estimators need beyond that travels inside
``token_level_rewards``, written by the matching reward manager
(:mod:`verirl.integrations.verl.reward`; the encodings are in
:mod:`verirl.integrations.verl.scoring`):

- ``verirl_process`` (``reward_manager.name=verirl_process``): process-verified credit (Kim &
  Yun 2026, arXiv:2606.20068)::

      A_i,t = (g_i − mean_g g) / (std_g g + eps) · mask_i,t
              + Σ_k 1[t = s_ik] · (φ_ik − mean_g g)

  with g_i the proof's pass flag, s_ik the first token of tactic k and φ_ik its tactic score
  — exactly :func:`verirl.credit.process.process` with ``placement="first_token"`` and the
  group-mean baseline (the paper's main setting; ``include_outcome`` / ``process_baseline`` /
  ``eps`` keep their defaults). The tactic scores are computed by the manager with the
  ``reward.verirl.process`` settings (d1, d2, propagation, timeout / rejected policies).
- ``verirl_tcpo`` (``reward_manager.name=verirl_turns``): TCPO (Liao et al. 2026,
  arXiv:2608.01667) retrospective + hindsight credit over the turns of verl's multi-turn
  samples (runs of 1s in ``response_mask``), z-scored within (prompt, turn index), broadcast
  to each turn's tokens — :func:`verirl.credit.tcpo.tcpo` with ``counterfactual=False``.

What does not map: TCPO's counterfactual component (it resamples M alternatives of a turn from
the fixed history, which verl's rollout does not do); process credit with ``placement``
``all_tokens`` / ``last_token`` (the manager writes first tokens only); a passed proof whose
only tactic starts on the response's last token reads as a passed proof without tactics
(outcome advantage only); verl's ``critic/score`` metrics then show the encoded values' sums,
not the pass rate (the pass rate is ``acc`` in the reward extras).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from verl.trainer.ppo.core_algos import register_adv_est

from verirl.credit.base import CreditInput, broadcast, group_mean_std
from verirl.credit.tcpo import TCPOParams, tcpo
from verirl.integrations.verl.scoring import decode_tactic_scores, turn_spans
from verirl.types import Turn


def group_ids(index: Sequence[Any] | None, n: int) -> torch.Tensor:
    """verl's per-sample uids as group ids 0..G−1 (each sample its own group without them)."""
    if index is None:
        return torch.arange(n)
    seen: dict[Any, int] = {}
    return torch.tensor([seen.setdefault(u, len(seen)) for u in list(index)], dtype=torch.long)


@register_adv_est("verirl_process")
def verirl_process_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: Sequence[Any] | None = None,
    config: Any = None,
    eps: float = 1e-6,
    **unused: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Process-verified advantages from the ``verirl_process`` encoding (module docstring).
    Shapes: in [B, T] and [B, T]; out ``(advantages, returns)``, both [B, T]."""
    rewards = token_level_rewards.detach().float().cpu()
    mask = response_mask.detach().float().cpu()
    n, _ = rewards.shape
    groups = group_ids(index, n)
    decoded = [decode_tactic_scores(rewards[i], int(mask[i].sum())) for i in range(n)]
    g = torch.tensor([1.0 if passed else 0.0 for passed, _, _ in decoded])
    mean, std, _ = group_mean_std(g, groups)
    adv = broadcast((g - mean) / (std + eps), mask)
    for i, (_, starts, phi) in enumerate(decoded):
        for s, value in zip(starts, phi, strict=True):
            adv[i, s] += value - float(mean[i])
    adv = adv * mask
    adv = adv.to(token_level_rewards.device)
    return adv, adv


@register_adv_est("verirl_tcpo")
def verirl_tcpo_advantage(
    token_level_rewards: torch.Tensor,
    response_mask: torch.Tensor,
    index: Sequence[Any] | None = None,
    config: Any = None,
    **unused: Any,
) -> tuple[torch.Tensor, torch.Tensor]:
    """TCPO turn-level advantages from the ``verirl_turns`` encoding (module docstring).
    Shapes: in [B, T] and [B, T]; out ``(advantages, returns)``, both [B, T]."""
    rewards = token_level_rewards.detach().float().cpu()
    mask = response_mask.detach().float().cpu()
    n, _ = rewards.shape
    params = TCPOParams(counterfactual=False)
    turns = []
    for i in range(n):
        spans = turn_spans(mask[i], int(torch.nonzero(mask[i]).max()) + 1 if mask[i].any() else 0)
        row = []
        for a, b in spans:
            r = float(rewards[i, b - 1])
            row.append(Turn(start=a, end=b, text="", score=r, correct=r >= params.tau))
        turns.append(tuple(row))
    inp = CreditInput(
        rewards=rewards.sum(dim=1),
        correct=torch.tensor([bool(t) and t[-1].correct for t in turns], dtype=torch.bool),
        groups=group_ids(index, n),
        response_mask=mask,
        turns=tuple(turns),
    )
    adv = tcpo(inp, params) * mask
    adv = adv.to(token_level_rewards.device)
    return adv, adv


__all__ = ["verirl_process_advantage", "verirl_tcpo_advantage"]
