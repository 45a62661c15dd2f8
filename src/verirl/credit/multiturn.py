"""Multi-turn credit baselines and the per-turn table every multi-turn estimator reads.

A multi-turn episode (collector ``multi_turn``, :mod:`verirl.rollout.multiturn`) is a rollout
whose ``turns`` hold, for turn k = 1..K_i, the token span ``[start, end)`` of the model's own
tokens in ``response_ids`` and the verifier score r_{i,k} ∈ [0, 1] of that turn's output.
An estimator here computes one advantage per (rollout, turn) and writes it on that turn's
tokens; feedback tokens between turns get 0.

Shapes used throughout: ``N`` rollouts, ``K`` = the most turns of any rollout in the batch,
``T`` = the longest response. Per-turn tables are ``[N, K]`` with a boolean ``valid`` mask
(turn k exists for rollout i).

The baselines are the rungs of TCPO's credit ablation (arXiv:2608.01667: trajectory reward
→ turn reward → score difference → retrospective → + hindsight → full TCPO) plus MT-GRPO
(Zeng et al. 2025, arXiv:2505.11821), TCPO's main baseline:

- ``trajectory``  one score per episode (final or best turn), GRPO within the prompt group,
  on every turn's tokens;
- ``turn_score``  each turn's own score r_{i,k};
- ``score_diff``  the change r_{i,k} − r_{i,k−1} (r_{i,0} = 0);
- ``mt_grpo``     per-turn-index normalised turn score plus the normalised outcome.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import torch
from pydantic import BaseModel, ConfigDict, Field

from verirl.credit.base import CREDIT, CreditInput, group_mean_std
from verirl.types import Turn

TURNS = frozenset({"turns"})  # what these estimators need: multi-turn episodes
Normalisation = Literal["prompt_turn", "prompt", "none"]


# ---- the per-turn table ----------------------------------------------------------------------
@dataclass(frozen=True)
class TurnTable:
    """Per-turn values of a batch of episodes, padded to ``K`` turns.

    - ``scores``     [N, K] float: r_{i,k} (0 where invalid).
    - ``valid``      [N, K] bool: rollout i has a turn k.
    - ``alt_mean``   [N, K] float: mean score of the turn's counterfactual alternatives
      (0 where none were drawn).
    - ``alt_std``    [N, K] float: population std of those scores (0 where none / one).
    - ``has_alt``    [N, K] bool: alternatives were drawn for this turn.
    - ``groups``     [N] long: prompt group of each rollout.
    """

    scores: torch.Tensor
    valid: torch.Tensor
    alt_mean: torch.Tensor
    alt_std: torch.Tensor
    has_alt: torch.Tensor
    groups: torch.Tensor

    @property
    def turn_index(self) -> torch.Tensor:
        """[N, K] long: the 1-based turn index k of every cell."""
        n, k = self.scores.shape
        return torch.arange(1, k + 1).expand(n, k)


def turn_table(inp: CreditInput, estimator: str) -> TurnTable:
    """Gather ``inp.turns`` into padded ``[N, K]`` tensors.

    Raises ``ValueError`` naming ``estimator`` when the input carries no turns (the rollouts
    did not come from a multi-turn collector) or a rollout has none.
    """
    n = inp.n
    if len(inp.turns) != n:
        raise ValueError(
            f"credit estimator {estimator!r} needs multi-turn rollouts: CreditInput.turns has "
            f"{len(inp.turns)} entries for {n} rollouts (collect with the 'multi_turn' collector)"
        )
    empty = [i for i, ts in enumerate(inp.turns) if len(ts) == 0]
    if empty:
        raise ValueError(
            f"credit estimator {estimator!r}: rollouts {empty[:5]} have no turns; every rollout "
            "must be a multi-turn episode with at least one turn"
        )
    k = max(len(ts) for ts in inp.turns)
    scores = torch.zeros(n, k)
    valid = torch.zeros(n, k, dtype=torch.bool)
    alt_mean = torch.zeros(n, k)
    alt_std = torch.zeros(n, k)
    has_alt = torch.zeros(n, k, dtype=torch.bool)
    for i, ts in enumerate(inp.turns):
        for j, turn in enumerate(ts):
            scores[i, j] = float(turn.score)
            valid[i, j] = True
            if turn.alt_scores:
                alts = torch.tensor(turn.alt_scores, dtype=torch.float32)
                alt_mean[i, j] = alts.mean()
                alt_std[i, j] = alts.std(unbiased=False)
                has_alt[i, j] = True
    return TurnTable(scores, valid, alt_mean, alt_std, has_alt, inp.groups)


def prompt_turn_keys(table: TurnTable) -> torch.Tensor:
    """[N, K] long: one id per (prompt group, turn index) pair."""
    k = table.scores.shape[1]
    _, g_idx = torch.unique(table.groups, return_inverse=True)
    return g_idx.unsqueeze(1) * k + torch.arange(k).unsqueeze(0)


def zscore_by_key(
    values: torch.Tensor, valid: torch.Tensor, keys: torch.Tensor, eps: float
) -> torch.Tensor:
    """Z-score the valid cells of ``values`` within groups of equal ``keys``.

    z = (c − mean) / (std + eps), std the unbiased one (as :func:`group_mean_std`, GRPO).
    A group with fewer than two valid cells keeps its raw value (nothing to compare it with;
    TCPO's rule, arXiv:2608.01667). Invalid cells come back as 0.
    """
    out = torch.zeros_like(values)
    if not bool(valid.any()):
        return out
    v = values[valid]
    key = keys[valid]
    mean, std, count = group_mean_std(v, key)
    z = torch.where(count >= 2, (v - mean) / (std + eps), v)
    out[valid] = z
    return out


def normalise(
    values: torch.Tensor, table: TurnTable, how: Normalisation, eps: float
) -> torch.Tensor:
    """Normalise per-turn ``values`` [N, K]: within (prompt, turn index) groups, within the
    prompt group (all turns of all its episodes pooled), or not at all."""
    if how == "prompt_turn":
        return zscore_by_key(values, table.valid, prompt_turn_keys(table), eps)
    if how == "prompt":
        keys = table.groups.unsqueeze(1).expand_as(values)
        return zscore_by_key(values, table.valid, keys, eps)
    return torch.where(table.valid, values, torch.zeros_like(values))


def broadcast_turns(
    per_turn: torch.Tensor, turns: Sequence[Sequence[Turn]], width: int
) -> torch.Tensor:
    """[N, K] → [N, T]: write ``per_turn[i, k]`` on the tokens ``[start, end)`` of turn k of
    rollout i; every other token (prompt feedback between turns, padding) gets 0."""
    out = torch.zeros(per_turn.shape[0], width)
    for i, ts in enumerate(turns):
        for j, turn in enumerate(ts):
            if not 0 <= turn.start <= turn.end <= width:
                raise ValueError(
                    f"rollout {i} turn {j + 1}: token span [{turn.start}, {turn.end}) does not "
                    f"fit in a response of width {width}"
                )
            out[i, turn.start : turn.end] = per_turn[i, j]
    return out


def outcome_scores(table: TurnTable, which: Literal["final", "best"]) -> torch.Tensor:
    """[N]: each episode's final-turn score or its best turn score."""
    last = table.valid.sum(dim=1) - 1
    if which == "final":
        return table.scores.gather(1, last.unsqueeze(1)).squeeze(1)
    masked = torch.where(table.valid, table.scores, torch.full_like(table.scores, -torch.inf))
    return masked.max(dim=1).values


def grpo_z(values: torch.Tensor, groups: torch.Tensor, eps: float) -> torch.Tensor:
    """[N] → [N]: (v − mean_g) / (std_g + eps); 0 for singleton or constant groups."""
    mean, std, _ = group_mean_std(values, groups)
    return (values - mean) / (std + eps)


# ---- estimators ------------------------------------------------------------------------------
_EPS_DESCRIPTION = "Added to the std before dividing in every z-score (GRPO/DAPO use 1e-6)."
_NORM_DESCRIPTION = (
    "How per-turn values are normalised: 'prompt_turn' z-scores within (prompt, turn index) "
    "groups like TCPO (so the ablation changes only the per-turn signal; inherits the "
    "per-turn-index caveat documented on mt_grpo), 'prompt' pools every turn of the prompt's "
    "episodes into one group, 'none' uses the raw values. Groups of one keep the raw value."
)


class TrajectoryParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    score: Literal["final", "best"] = Field(
        "final",
        description="Episode score: the final turn's score (multi-turn GRPO as usually run) or "
        "the best turn's. With stop-on-success the two coincide.",
    )
    eps: float = Field(1e-6, gt=0, description=_EPS_DESCRIPTION)


@CREDIT.register("trajectory", TrajectoryParams, needs=TURNS)
def trajectory(inp: CreditInput, params: TrajectoryParams) -> torch.Tensor:
    """Trajectory-level credit (GRPO on episodes; the first rung of TCPO's ablation).

    R_i = r_{i,K_i} (``score='final'``) or max_k r_{i,k} (``'best'``);
    A_i = (R_i − mean_g R) / (std_g R + eps) within the prompt group g (DeepSeekMath eq. 3),
    written on the tokens of every turn of episode i (feedback tokens 0).
    Shapes: turns per rollout → [N, T].
    """
    table = turn_table(inp, "trajectory")
    adv = grpo_z(outcome_scores(table, params.score), table.groups, params.eps)
    per_turn = adv.unsqueeze(1).expand_as(table.scores)
    return broadcast_turns(per_turn, inp.turns, inp.response_mask.shape[1])


class TurnScoreParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    normalise: Normalisation = Field("prompt_turn", description=_NORM_DESCRIPTION)
    eps: float = Field(1e-6, gt=0, description=_EPS_DESCRIPTION)


@CREDIT.register("turn_score", TurnScoreParams, needs=TURNS)
def turn_score(inp: CreditInput, params: TurnScoreParams) -> torch.Tensor:
    """Raw per-turn score as the turn's credit (the "turn reward" rung of TCPO's ablation).

    c_{i,k} = r_{i,k}, normalised per ``params.normalise`` (default: z-score within
    (prompt, turn index) groups, as TCPO), written on turn k's tokens. With 'prompt_turn'
    this equals ``mt_grpo`` with ``outcome_weight = 0``. Shapes: turns → [N, T].
    """
    table = turn_table(inp, "turn_score")
    adv = normalise(table.scores, table, params.normalise, params.eps)
    return broadcast_turns(adv, inp.turns, inp.response_mask.shape[1])


def score_differences(table: TurnTable) -> torch.Tensor:
    """[N, K]: d_{i,k} = r_{i,k} − r_{i,k−1} with r_{i,0} = 0; 0 on invalid cells."""
    prev = torch.cat([torch.zeros_like(table.scores[:, :1]), table.scores[:, :-1]], dim=1)
    return torch.where(table.valid, table.scores - prev, torch.zeros_like(table.scores))


@CREDIT.register("score_diff", TurnScoreParams, needs=TURNS)
def score_diff(inp: CreditInput, params: TurnScoreParams) -> torch.Tensor:
    """Score difference (the third rung of TCPO's ablation): c_{i,k} = r_{i,k} − r_{i,k−1},
    r_{i,0} = 0, so a regression is penalised and turn 1 is credited with its own score;
    normalised per ``params.normalise``, written on turn k's tokens. Shapes: turns → [N, T].
    """
    table = turn_table(inp, "score_diff")
    adv = normalise(score_differences(table), table, params.normalise, params.eps)
    return broadcast_turns(adv, inp.turns, inp.response_mask.shape[1])


class MTGRPOParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    outcome_weight: float = Field(
        1.0,
        description="λ on the normalised outcome advantage added to every turn (MT-GRPO adds "
        "the outcome term with weight 1 in its two-turn setting; 0 leaves the turn term).",
    )
    outcome: Literal["final", "best"] = Field(
        "final", description="Episode outcome: final turn's score or best turn's score."
    )
    eps: float = Field(1e-6, gt=0, description=_EPS_DESCRIPTION)


@CREDIT.register("mt_grpo", MTGRPOParams, needs=TURNS)
def mt_grpo(inp: CreditInput, params: MTGRPOParams) -> torch.Tensor:
    """MT-GRPO (Zeng et al. 2025, arXiv:2505.11821), generalised from two turns to K:

        A_{i,k} = z_{(g,k)}(r_{i,k}) + λ_O · z_g(R_i)

    z_{(g,k)} z-scores the turn score among the episodes of prompt g that reached turn k
    (per-turn-index normalisation; groups of one keep the raw value), z_g is GRPO's z-score of
    the outcome R_i (final or best turn score) within the prompt group, λ_O =
    ``outcome_weight``. A_{i,k} goes on the tokens of turn k. Shapes: turns → [N, T].

    **Bias warning** (verl-project/verl #7244). Which episodes populate the
    (prompt, turn k) group depends on the policy itself: an episode stops on success (or, in
    agent settings, when the policy ends it), so the turn-k baseline is the mean over the
    *survivors*, a policy-dependent subset of the group, not over all of the prompt's
    episodes. The per-turn baselines then do not cancel in expectation across episodes of
    different lengths: every extra turn an episode takes carries an implicit bonus of
    −E[R_intermediate] relative to stopping, so the estimator is biased whenever the policy
    controls termination — it can learn to prolong or cut episodes for the baseline's sake
    rather than for the score. TCPO's (prompt, turn index) z-score shares the grouping; this
    baseline is kept as the paper's comparison point, not as a recommended estimator.
    """
    table = turn_table(inp, "mt_grpo")
    turn_term = zscore_by_key(table.scores, table.valid, prompt_turn_keys(table), params.eps)
    outcome = grpo_z(outcome_scores(table, params.outcome), table.groups, params.eps)
    adv = turn_term + params.outcome_weight * outcome.unsqueeze(1)
    adv = torch.where(table.valid, adv, torch.zeros_like(adv))
    return broadcast_turns(adv, inp.turns, inp.response_mask.shape[1])
