"""Off-policy corrections: pure functions that correct the policy loss for tokens sampled by
a policy other than the one the surrogate is anchored to (``loss.off_policy: {name, params}``).

Three policies can be involved (AReaL's naming):

- π_behav: the policy that *sampled* the tokens (the rollout engine; its log-probs travel with
  every rollout). It differs from the learner's when the engine has its own numerics (vLLM,
  another precision) or when it ran k policy versions behind (the ``bounded_staleness`` schedule).
- π_prox: the learner's own policy at the weights of the update, recomputed without grad
  before the first optimisation step (``optim.old_logprobs = recompute``).
- π_θ: the policy being optimised.

A correction has two parts, both pure:

- ``weights(proximal, behaviour, mask, params) -> (w, stats)``: a detached per-token weight
  [N, R] multiplying the per-token policy loss, computed once per rollout batch;
- ``logprobs(logp, old, mask, params) -> logp'``: a transform of π_θ's log-probs [N, R] before
  the surrogate builds its ratio exp(logp' − old) (identity for all but GSPO).

The learner applies every configured correction in order — weights multiply, transforms chain
— so adding one never adds a branch to the learner. ``needs_proximal`` corrections make
``optim.old_logprobs = auto`` recompute π_prox (without it proximal = behaviour and every
importance weight is 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field, model_validator

from verirl.registry import Registry, Spec

Stats = dict[str, float]
WeightFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, Any], tuple[torch.Tensor, Stats]]
LogprobFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor, Any], torch.Tensor]


def unit_weights(
    proximal: torch.Tensor, behaviour: torch.Tensor, mask: torch.Tensor, params: Any
) -> tuple[torch.Tensor, Stats]:
    """No importance weighting: 1 on every token."""
    return torch.ones_like(mask), {}


def same_logprobs(
    logp: torch.Tensor, old: torch.Tensor, mask: torch.Tensor, params: Any
) -> torch.Tensor:
    """The token ratio unchanged: exp(log π_θ − log π_old) per token."""
    return logp


@dataclass(frozen=True)
class OffPolicyCorrection(Spec[WeightFn]):
    """A registered correction: its token weights (``part``), the log-probs its ratio is
    built on (``logprobs``) and whether it needs the learner's own old log-probs π_prox."""

    logprobs: LogprobFn = same_logprobs
    needs_proximal: bool = False

    @property
    def weights(self) -> WeightFn:
        return self.part


OFF_POLICY: Registry[OffPolicyCorrection] = Registry("off-policy correction", OffPolicyCorrection)
"""Corrections by name (``loss.off_policy``): ``@OFF_POLICY.register(name, params,
logprobs=..., needs_proximal=...)`` on the weights function."""


def _masked_mean(x: torch.Tensor, mask: torch.Tensor) -> float:
    return float((x * mask).sum() / mask.sum().clamp(min=1))


def _log_ratio(proximal: torch.Tensor, behaviour: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (proximal - behaviour) * mask


# ---- none ------------------------------------------------------------------------------------
OFF_POLICY.register("none", description="no correction")(unit_weights)


# ---- truncated importance sampling -------------------------------------------------------------
class TruncatedISParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cap: float = Field(2.0, gt=0, description="Truncation C of the token weight (Yao et al.: 2).")


def truncated_is_weights(
    learner_logprobs: torch.Tensor,
    engine_logprobs: torch.Tensor,
    mask: torch.Tensor,
    cap: float,
) -> torch.Tensor:
    """Truncated importance sampling (TIS) weights (Yao, Liu, Zhang, Shen, Gao, "Your Efficient
    RL Framework Secretly Brings You Off-Policy RL Training", Aug 2025, a blog post with no
    arXiv version, the TIS correction; the same correction as verl's ``tis_imp_ratio_cap`` and
    TRL's ``vllm_importance_sampling_cap``).

    The tokens were sampled by the engine π_engine(·; θ_old) (e.g. vLLM, another kernel or
    precision, or an engine k versions behind), while the surrogate is built on the learner's
    π_learner(·; θ_old). The policy gradient is corrected per token by the detached, truncated
    ratio

        w_t = min( π_learner(y_t | x, y_<t; θ_old) / π_engine(y_t | x, y_<t; θ_old), C )
            = min( exp(log π_learner − log π_engine), C )

    and the per-token policy loss becomes ``w_t · L_t(θ)``. Truncating at C (the blog's
    C = 2) bounds the variance that rare tokens with π_engine ≫ π_learner would otherwise
    add. Shapes: all inputs [N, R]; returns [N, R] (1.0 where ``mask`` is 0), no gradient.
    """
    if cap <= 0:
        raise ValueError(f"the TIS cap must be > 0, got {cap}")
    with torch.no_grad():
        return torch.exp(_log_ratio(learner_logprobs, engine_logprobs, mask)).clamp(max=cap)


@OFF_POLICY.register("truncated_is", TruncatedISParams, "truncated IS (TIS)", needs_proximal=True)
def _tis(
    proximal: torch.Tensor, behaviour: torch.Tensor, mask: torch.Tensor, p: TruncatedISParams
) -> tuple[torch.Tensor, Stats]:
    w = truncated_is_weights(proximal, behaviour, mask, p.cap)
    stats = {
        "tis_weight_mean": _masked_mean(w, mask),
        "tis_truncated_frac": _masked_mean((w >= p.cap).float(), mask),
    }
    return w, stats


# ---- masked importance sampling ----------------------------------------------------------------
class MaskedISParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cap: float = Field(2.0, gt=0, description="Upper bound C: a ratio above it is masked out.")
    level: Literal["token", "sequence"] = Field(
        "token",
        description="'token': each token's own ratio; 'sequence': the product of the "
        "sequence's token ratios, one weight (and one mask decision) per response.",
    )


@OFF_POLICY.register("masked_is", MaskedISParams, needs_proximal=True)
def masked_is_weights(
    proximal: torch.Tensor,
    behaviour: torch.Tensor,
    mask: torch.Tensor,
    params: MaskedISParams,
) -> tuple[torch.Tensor, Stats]:
    """Masked importance sampling (MIS) (Liu, Li, Fu, Wang, Liu, Shen, "When Speed Kills
    Stability: Demystifying RL Collapse from the Training-Inference Mismatch", Sep 2025, a blog
    post with no arXiv version, the token- and sequence-level MIS estimators). Where TIS
    truncates a large ratio to C, MIS drops the token (or the whole sequence) instead:

        token:     ρ_t = π_prox(y_t)/π_behav(y_t),   w_t = ρ_t · 1[ρ_t ≤ C]
        sequence:  ρ   = Π_t ρ_t = exp(Σ_t log ρ_t), w_t = ρ · 1[ρ ≤ C]   for every t of y

    Shapes: [N, R] in, [N, R] out (detached; 1.0 on masked-out padding columns is irrelevant,
    the loss is masked anyway). Stats: mean weight and the share of tokens masked out.
    """
    with torch.no_grad():
        log_ratio = _log_ratio(proximal, behaviour, mask)
        if params.level == "sequence":
            log_ratio = log_ratio.sum(dim=1, keepdim=True).expand_as(mask)
        ratio = torch.exp(log_ratio)
        keep = (ratio <= params.cap).float()
        w = ratio * keep
    return w, {
        "is_weight_mean": _masked_mean(w, mask),
        "is_masked_frac": _masked_mean(1.0 - keep, mask),
    }


# ---- IcePop ------------------------------------------------------------------------------------
class IcePopParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    low: float = Field(0.5, gt=0, description="α: ratios below it are masked (Ring-1T: 0.5).")
    high: float = Field(5.0, gt=0, description="β: ratios above it are masked (Ring-1T: 5).")

    @model_validator(mode="after")
    def _ordered(self) -> IcePopParams:
        if self.low > self.high:
            raise ValueError(f"IcePop needs low <= high, got [{self.low}, {self.high}]")
        return self


@OFF_POLICY.register("icepop", IcePopParams, needs_proximal=True)
def icepop_weights(
    proximal: torch.Tensor,
    behaviour: torch.Tensor,
    mask: torch.Tensor,
    params: IcePopParams,
) -> tuple[torch.Tensor, Stats]:
    """IcePop (Ling Team, "Every Step Evolves: Scaling Reinforcement Learning for Trillion-Scale
    Thinking Model", arXiv 2510.18855, the IcePop objective's masking function): the token's
    gradient is kept with weight ρ_t only while the training/inference ratio stays inside a band,

        ρ_t = π_prox(y_t)/π_behav(y_t),   M(ρ_t) = ρ_t if α ≤ ρ_t ≤ β else 0

    (α = 0.5, β = 5 in the paper). Shapes: [N, R] in and out, detached."""
    with torch.no_grad():
        ratio = torch.exp(_log_ratio(proximal, behaviour, mask))
        keep = ((ratio >= params.low) & (ratio <= params.high)).float()
        w = ratio * keep
    return w, {
        "is_weight_mean": _masked_mean(w, mask),
        "is_masked_frac": _masked_mean(1.0 - keep, mask),
    }


# ---- GSPO --------------------------------------------------------------------------------------
def gspo_logprobs(
    logp: torch.Tensor, old: torch.Tensor, mask: torch.Tensor, params: Any
) -> torch.Tensor:
    """GSPO's sequence-level, length-normalised ratio (Zheng et al., "Group Sequence Policy
    Optimization", arXiv 2507.18071, the definition of s_i(θ) in §4.1 and its GSPO-token form
    in §4.3):

        s_i(θ) = (π_θ(y_i | x) / π_old(y_i | x))^(1/|y_i|) = exp( (1/|y_i|) Σ_t log ρ_{i,t} )
        s_{i,t}(θ) = sg[s_i(θ)] · π_θ(y_{i,t} | ·) / sg[π_θ(y_{i,t} | ·)]

    Returned as log-probs ``logp'`` with ``logp' − old = log s_{i,t}``: every token of a
    response carries the same ratio value (so the surrogate clips once per response, with
    GSPO's small clip range, e.g. ``loss.policy.params`` eps_low 3e-4, eps_high 4e-4), while
    the gradient of each token is still ∇ log π_θ(y_{i,t}) (GSPO-token; with equal token
    advantages, as from GRPO, it equals GSPO's gradient). Shapes: [N, R] in and out."""
    tokens = mask.sum(dim=1, keepdim=True).clamp(min=1)
    seq_log_ratio = (((logp - old) * mask).sum(dim=1, keepdim=True) / tokens).detach()
    return old + seq_log_ratio + logp - logp.detach()


OFF_POLICY.register("gspo", logprobs=gspo_logprobs, description="GSPO's sequence-level ratio")(
    unit_weights
)


# ---- decoupled PPO -----------------------------------------------------------------------------
class DecoupledPPOParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    cap: float | None = Field(
        None,
        gt=0,
        description="Tokens whose behaviour weight π_prox/π_behav exceeds it are masked out "
        "(AReaL's behav_imp_weight_cap); None keeps every token.",
    )


@OFF_POLICY.register("decoupled_ppo", DecoupledPPOParams, needs_proximal=True)
def decoupled_ppo_weights(
    proximal: torch.Tensor,
    behaviour: torch.Tensor,
    mask: torch.Tensor,
    params: DecoupledPPOParams,
) -> tuple[torch.Tensor, Stats]:
    """Decoupled PPO (Fu et al., "AReaL: A Large-Scale Asynchronous Reinforcement Learning
    System for Language Reasoning", arXiv 2505.24298, the decoupled PPO objective of §5; first
    proposed by Hilton, Cobbe, Schulman, "Batch size-invariance for policy optimization", arXiv
    2110.00641): the trust region is anchored to a *proximal* policy (the learner's recomputed
    π_prox at the update's weights), not to the stale policy that sampled, and the behaviour
    gap is corrected by importance sampling:

        J(θ) = E_{y ~ π_behav} [ π_prox(y_t)/π_behav(y_t) ·
                                 min( r_t A_t, clip(r_t, 1 − ε, 1 + ε) A_t ) ],
        r_t = π_θ(y_t)/π_prox(y_t)

    The learner's surrogate already uses π_prox as π_old when it recomputes; this returns the
    detached weight π_prox/π_behav (0 where it exceeds ``cap``). Shapes: [N, R] in and out."""
    with torch.no_grad():
        w = torch.exp(_log_ratio(proximal, behaviour, mask))
        keep = torch.ones_like(w) if params.cap is None else (w <= params.cap).float()
        w = w * keep
    return w, {
        "is_weight_mean": _masked_mean(w, mask),
        "is_masked_frac": _masked_mean(1.0 - keep, mask),
    }


# ---- composition -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Corrections:
    """The configured corrections, in order, with validated parameters."""

    steps: tuple[tuple[OffPolicyCorrection, BaseModel], ...]

    @classmethod
    def build(cls, plugins: list[tuple[str, dict[str, Any]]]) -> Corrections:
        steps = []
        for name, params in plugins:
            spec = OFF_POLICY.get(name)
            steps.append((spec, spec.params.model_validate(params)))
        return cls(tuple(steps))

    @property
    def needs_proximal(self) -> bool:
        return any(spec.needs_proximal for spec, _ in self.steps)

    def weights(
        self, proximal: torch.Tensor, behaviour: torch.Tensor, mask: torch.Tensor
    ) -> tuple[torch.Tensor, Stats]:
        """The product of every correction's weights [N, R] and their merged statistics."""
        total = torch.ones_like(mask)
        stats: Stats = {}
        for spec, params in self.steps:
            w, s = spec.weights(proximal, behaviour, mask, params)
            total = total * w
            stats.update(s)
        return total, stats

    def logprobs(self, logp: torch.Tensor, old: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        for spec, params in self.steps:
            logp = spec.logprobs(logp, old, mask, params)
        return logp
