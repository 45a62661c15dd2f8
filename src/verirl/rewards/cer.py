"""CER — conditional expectation reward (Xiao, Xu, Cao 2026, arXiv:2603.10624).

The policy itself judges how congruent a generated answer ``a`` is with the reference ``a*``:

    ρ(a, a*) = E_{s' ~ π(·|q, a)} [ π(a* | s', q) ]                           (CER, §3)

estimated from the group's own solutions ``s_1..s_M ~ π(·|q)`` by self-normalised importance
sampling (Eqs. 4–5):

    R(a) = Σ_j π(a|s_j,q) · π(a*|s_j,q) / Σ_j π(a|s_j,q)

computed in log space as ``exp(LSE_j(ℓ*_j + ℓ_j(a)) − LSE_j ℓ_j(a))`` with
``ℓ_j(a) = Σ_t log π(a_t | q ⊕ s_j ⊕ a_<t)`` (summed, not length-normalised). R is a convex
combination of the ``π(a*|s_j)``, so it lies in [0, 1]. For ``a = a*`` it is
``Σ p_j² / Σ p_j`` (Theorem 1's quantity; no shortcut to 1). Identical answer strings share one
set of solutions and so get identical rewards; the reward is a plain float (detached: no
gradient flows through the likelihoods, Eqs. 6–7).

Solutions per answer (``n_samples`` = M ≤ G, release ``prepare_data_for_reward``): for each
distinct answer, the rollouts that produced it are used (M of them at random if there are more),
filled up to M with random other rollouts of the group. The reference column always uses all G
solutions' scores but the estimator only reads the selected rows. With M = G (the release's
16/16) every pair is used.

Answers: the content of the last ``\\boxed{}`` (see :mod:`verirl.rewards.likelihood`). An output
with no answer, or an empty one, gets ``empty_answer_reward`` (0 by default: the release's
log-0 sentinel gives 0); its solution still serves as a context ``s_j`` for the other answers
(the release uses the whole output then).

``rule_cer`` combines the rule verifier with CER; the paper (Xiao et al. 2026, arXiv:2603.10624)
does not publish its Rule+CER combination rule, nor does its released code; the two choices here
are documented on :class:`RuleCERParams`.
"""

from __future__ import annotations

import hashlib
import math
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import torch
from pydantic import Field

from verirl.rewards.base import REWARDS, RewardContext, RewardSource
from verirl.rewards.likelihood import (
    Encoder,
    LikelihoodParams,
    build_scorer,
    group_rollouts,
    reference_ids,
    require_policy,
    split_answer,
)
from verirl.rewards.rule import rule_judgement
from verirl.rollout.scoring import score_grids
from verirl.types import Rollout, Verdict


# ---- the estimator (pure) ---------------------------------------------------------------------
def cer_estimate(
    ref_loglik: torch.Tensor,
    ans_loglik: torch.Tensor,
    selected: torch.Tensor | None = None,
) -> torch.Tensor:
    """CER rewards of K answers from a log-likelihood matrix (Eqs. 4–5, in log space).

    - ``ref_loglik`` [G]: ``ℓ*_j = log π(a* | s_j, q)``.
    - ``ans_loglik`` [G, K]: ``ℓ_j(a_k) = log π(a_k | s_j, q)``; −inf means probability 0.
    - ``selected`` [G, K] bool: solutions used for answer k (the M ≤ G rule); all if ``None``.

    Returns [K] float64 in [0, 1]:
    ``R_k = exp(LSE_{j∈S_k}(ℓ*_j + ℓ_j(a_k)) − LSE_{j∈S_k} ℓ_j(a_k))``, and 0 where no selected
    solution gives ``a_k`` positive probability (the release replaces a log-0 normaliser by 0,
    which gives 0 too). Raises on NaN, +inf, a positive reference log-prob or bad shapes.
    """
    ref = torch.as_tensor(ref_loglik, dtype=torch.float64)
    ans = torch.as_tensor(ans_loglik, dtype=torch.float64)
    if ref.dim() != 1 or ans.dim() != 2 or ans.shape[0] != ref.shape[0]:
        raise ValueError(
            f"cer_estimate: expected ref_loglik [G] and ans_loglik [G, K], got "
            f"{tuple(ref.shape)} and {tuple(ans.shape)}"
        )
    if selected is None:
        selected = torch.ones(ans.shape, dtype=torch.bool)
    if tuple(selected.shape) != tuple(ans.shape):
        raise ValueError(
            f"cer_estimate: selected has shape {tuple(selected.shape)}, expected {tuple(ans.shape)}"
        )
    for name, t in (("ref_loglik", ref), ("ans_loglik", ans)):
        if torch.isnan(t).any() or (t == math.inf).any():
            raise ValueError(f"cer_estimate: {name} contains NaN or +inf")
    if (ref > 1e-4).any():
        raise ValueError(f"cer_estimate: log-probabilities must be <= 0, max {ref.max():.3g}")
    ref = ref.clamp(max=0.0)
    masked = ans.masked_fill(~selected.to(torch.bool), -math.inf)  # [G, K]
    log_den = torch.logsumexp(masked, dim=0)  # [K]
    log_num = torch.logsumexp(masked + ref[:, None], dim=0)  # [K]
    reward = torch.where(
        torch.isfinite(log_den), (log_num - log_den).exp(), torch.zeros_like(log_den)
    )
    return reward.nan_to_num(0.0).clamp(0.0, 1.0)


def select_solutions(
    answer_of: Sequence[int], n_answers: int, m: int, rng: random.Random
) -> torch.Tensor:
    """The M ≤ G rule of the CER release: which solutions estimate each answer's reward.

    ``answer_of[j]`` is the index (0..K−1) of rollout j's distinct answer, or −1 when it has
    none. For answer k with producers ``S_k``: if ``|S_k| >= m`` pick m of them at random,
    else take all of ``S_k`` and fill up to m with random other rollouts of the group.
    Returns bool [G, K]. ``m >= G`` selects everything.
    """
    g = len(answer_of)
    if m < 1:
        raise ValueError(f"select_solutions: m (n_samples) must be >= 1, got {m}")
    for j, k in enumerate(answer_of):
        if not -1 <= k < n_answers:
            raise ValueError(f"select_solutions: answer_of[{j}] = {k} outside [-1, {n_answers})")
    out = torch.zeros((g, n_answers), dtype=torch.bool)
    if m >= g:
        out[:] = True
        return out
    for k in range(n_answers):
        own = [j for j in range(g) if answer_of[j] == k]
        if len(own) >= m:
            chosen = rng.sample(own, m)
        else:
            others = [j for j in range(g) if answer_of[j] != k]
            chosen = own + rng.sample(others, m - len(own))
        out[chosen, k] = True
    return out


# ---- the reward sources ----------------------------------------------------------------------
@dataclass
class _GroupPlan:
    """What one prompt group asks the scorer for.

    ``rows``: indices of its rollouts; ``contexts`` [G]: prompt ⊕ s_j token ids;
    ``continuations``: a* then the K distinct answers; ``mask`` [G, 1 + K]: cells to score;
    ``answer_of`` [G]: each rollout's answer index (−1: none); ``selected`` [G, K]: M ≤ G rule.
    """

    rows: list[int]
    contexts: list[tuple[int, ...]]
    continuations: list[tuple[int, ...]]
    mask: torch.Tensor
    answer_of: list[int]
    selected: torch.Tensor

    @property
    def n_answers(self) -> int:
        return len(self.continuations) - 1


class CERParams(LikelihoodParams):
    n_samples: int | None = Field(
        None,
        ge=1,
        description="M, solutions per distinct answer (M ≤ G; larger values act as G). None = "
        "the group size, as released (algorithm.n_samples = rollout_n = 16); the paper's "
        "Table 3 sweeps M from 1 to 16.",
    )
    empty_answer_reward: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="Reward of an output with no (or an empty) \\boxed{} answer. The release "
        "scores the empty answer as log 0, which yields 0.",
    )
    unanswered_context: Literal["whole_output", "append_marker"] = Field(
        "whole_output",
        description="Context s_j of an output without an answer marker: the whole output (the "
        "release) or the whole output followed by the first marker, so that it asks which "
        "answer this solution would box.",
    )
    seed: int = Field(
        0,
        description="Seed of the M < G subsampling (mixed with the group's "
        "problem and texts, so a reward is a pure function of its inputs).",
    )


@REWARDS.register("cer", CERParams)
class CERReward(RewardSource[CERParams]):
    """``cer``: Verdict.reward = R(a) in [0, 1]; ``correct`` = the rule verifier; ``extra``
    holds ``cer`` (the value), ``answer_found`` and ``distinct_answers`` of the group."""

    verifies_each = True  # every rollout through ctx.env_verdicts

    needs = frozenset({"policy"})

    def __init__(self, params: CERParams) -> None:
        super().__init__(params)
        self._metrics: dict[str, float] = {}

    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        values, found, distinct = self.cer_values(rollouts, ctx)
        out = []
        env_verdicts = ctx.env_verdicts(rollouts)
        for r, v, f, d, env_v in zip(rollouts, values, found, distinct, env_verdicts, strict=True):
            judged = rule_judgement(r.problem, r.text, self.params.judge, env_v)
            detail = "policy-estimated agreement with the reference" if f else "no answer found"
            out.append(
                Verdict(
                    v,
                    judged.correct,
                    detail,
                    extra={"cer": v, "answer_found": f, "distinct_answers": d},
                )
            )
        return out

    def metrics(self) -> dict[str, float]:
        return dict(self._metrics)

    def cer_values(
        self, rollouts: Sequence[Rollout], ctx: RewardContext
    ) -> tuple[list[float], list[bool], list[int]]:
        """CER of every rollout, whether it had an answer, and its group's distinct answers."""
        start = time.perf_counter()
        p = self.params
        require_policy(ctx)
        enc = Encoder(ctx.tokenizer, p)
        values = [p.empty_answer_reward] * len(rollouts)
        found = [False] * len(rollouts)
        distinct = [0] * len(rollouts)
        plans = [self._plan_group(rollouts, idx, enc) for idx in group_rollouts(rollouts)]
        for plan in plans:
            for i, k in zip(plan.rows, plan.answer_of, strict=True):
                found[i] = k >= 0
                distinct[i] = plan.n_answers
        grids = [(plan.contexts, plan.continuations, plan.mask) for plan in plans]
        scorer = build_scorer(ctx, p) if any(plan.n_answers for plan in plans) else None
        if scorer is not None:
            for plan, mat in zip(plans, score_grids(scorer, grids), strict=True):
                if plan.n_answers == 0:
                    continue
                rewards = cer_estimate(mat[:, 0], mat[:, 1:], plan.selected)
                for i, k in zip(plan.rows, plan.answer_of, strict=True):
                    if k >= 0:
                        values[i] = float(rewards[k])
        self._record(rollouts, values, found, distinct, scorer, time.perf_counter() - start)
        return values, found, distinct

    def _plan_group(self, rollouts: Sequence[Rollout], idx: list[int], enc: Encoder) -> _GroupPlan:
        p = self.params
        first = rollouts[idx[0]]
        ref = reference_ids(enc, first.problem.answer, f"group {first.group}")
        contexts: list[tuple[int, ...]] = []
        answer_of: list[int] = []
        answers: dict[str, int] = {}
        for i in idx:
            split = split_answer(rollouts[i].text, p.markers)
            solution = split.solution
            if not split.has_answer and p.unanswered_context == "append_marker":
                solution += p.markers[0]
            contexts.append(enc.context(first.prompt_ids, solution))
            if split.has_answer and split.answer:
                answer_of.append(answers.setdefault(split.answer, len(answers)))
            else:
                answer_of.append(-1)
        g, k = len(idx), len(answers)
        m = min(p.n_samples or g, g)
        selected = select_solutions(answer_of, k, m, random.Random(self._group_seed(rollouts, idx)))
        mask = torch.cat([torch.ones((g, 1), dtype=torch.bool), selected], dim=1)
        if k == 0:
            mask[:] = False  # nothing to reward: skip the reference column as well
        conts = [ref] + [enc.answer(a) for a in answers]
        return _GroupPlan(idx, contexts, conts, mask, answer_of, selected)

    def _group_seed(self, rollouts: Sequence[Rollout], idx: list[int]) -> str:
        h = hashlib.sha256()
        first = rollouts[idx[0]].problem
        h.update(f"{self.params.seed}/{first.env}/{first.difficulty}/{first.seed}".encode())
        for i in idx:
            h.update(b"\0" + rollouts[i].text.encode("utf-8", "replace"))
        return h.hexdigest()

    def _record(
        self,
        rollouts: Sequence[Rollout],
        values: list[float],
        found: list[bool],
        distinct: list[int],
        scorer: object,
        seconds: float,
    ) -> None:
        n = max(1, len(rollouts))
        self._metrics = {
            "cer/mean_reward": sum(values) / n,
            "cer/empty_answer_share": sum(1 for f in found if not f) / n,
            "cer/distinct_answers_per_group": sum(distinct) / n,
            "cer/seconds": seconds,
        }
        if scorer is not None:
            m = scorer.metrics()  # type: ignore[attr-defined]
            self._metrics.update({"cer/" + k.split("/", 1)[-1]: v for k, v in m.items()})
            # the release's ``compression/ratio``: share of score rows left after de-duplication
            self._metrics["cer/compression_ratio"] = m.get("scoring/dedup_ratio", 1.0)


class RuleCERParams(CERParams):
    combine: Literal["gate", "weighted"] = Field(
        "gate",
        description="How rule and CER combine (the paper's Rule+CER rule is unpublished). "
        "'gate': R = 1 when the rule verifier says correct, else CER — the rule's precision "
        "with CER's graded credit for answers it cannot match. 'weighted': "
        "R = rule_weight · 1[correct] + (1 − rule_weight) · CER.",
    )
    rule_weight: float = Field(
        0.5, ge=0.0, le=1.0, description="Weight of the binary rule reward in 'weighted' mode."
    )


@REWARDS.register("rule_cer", RuleCERParams)
class RuleCERReward(RewardSource[RuleCERParams]):
    """``rule_cer``: the rule verifier combined with CER (see :class:`RuleCERParams`); reward
    in [0, 1]; ``extra`` keeps ``cer`` and ``rule``."""

    verifies_each = True  # every rollout through ctx.env_verdicts

    needs = frozenset({"policy"})

    def __init__(self, params: RuleCERParams) -> None:
        super().__init__(params)
        cer_fields = {k: getattr(params, k) for k in CERParams.model_fields}
        self._cer = CERReward(CERParams(**cer_fields))

    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        values, found, _ = self._cer.cer_values(rollouts, ctx)
        p = self.params
        out = []
        env_verdicts = ctx.env_verdicts(rollouts)
        for r, v, f, env_v in zip(rollouts, values, found, env_verdicts, strict=True):
            ok = rule_judgement(r.problem, r.text, p.judge, env_v).correct
            rule = 1.0 if ok else 0.0
            if p.combine == "gate":
                reward = 1.0 if ok else v
            else:
                reward = p.rule_weight * rule + (1.0 - p.rule_weight) * v
            detail = "correct" if ok else ("not correct" if f else "no answer found")
            out.append(Verdict(reward, ok, detail, extra={"cer": v, "rule": rule}))
        return out

    def metrics(self) -> dict[str, float]:
        return self._cer.metrics()
