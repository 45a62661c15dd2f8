"""Loss terms: per-token terms added to the policy loss, registered by name (``loss.terms``).

The learner's per-token loss, before ``loss.aggregation`` turns it into one number, is

    ℓ_t = w_t · m_t · L^policy_t + Σ_k c_k · ℓ^k_t

with ``w_t`` the off-policy corrections' weights (:mod:`verirl.train.off_policy`), ``m_t`` the
token mask (``loss.token_mask``, :mod:`verirl.train.token_masks`), ``L^policy`` the policy loss
(``loss.policy``) and ``ℓ^k`` the configured terms with their coefficients ``c_k``. A term is
a pure function ``fn(TermInputs, params) -> (per-token [N, R], statistics)`` registered with

- its parameter model (a :class:`TermParams` subclass: ``coef`` and the term's own fields);
- ``needs``: what it reads besides the policy's log-probs — ``"entropy"`` (the policy's
  per-token entropy, differentiable), ``"reference"`` (log-probs of the frozen initial
  policy), or the name of a token source the learner is given (a teacher's log-probs, say);
- ``advantage_gated``: its value and gradient vanish on a token whose advantage is 0 (the
  learner may then skip rows without signal only while every active term is gated);
- ``coefficient``: how ``c_k`` evolves — :class:`StaticCoefficient` (``params.coef``) or a
  controller that reads each optimizer step's statistics (the adaptive entropy bonus).

Adding a term (a distillation loss, a format penalty) is one ``@LOSS_TERMS.register`` in any
module, named in a config as ``loss.terms: {name: {coef: ..., ...}}``; the learner has no branch
per term. KL estimators are registered the same way (:data:`KL_ESTIMATORS`), and so are the
kinds of token source a config can build (:data:`TOKEN_SOURCES`, ``loss.sources``: a teacher
model's log-probs for on-policy distillation, :mod:`verirl.train.distill`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from verirl.registry import Plugin, Registry, Spec

Stats = dict[str, torch.Tensor]


@dataclass(frozen=True)
class TermInputs:
    """What a loss term may read, for the rows of one micro-batch; every tensor [N, R].

    - ``logprobs``: log π_θ of the response tokens, differentiable;
    - ``old_logprobs``: log π_old (the ratio's anchor), no gradient;
    - ``advantages``, ``mask``: token advantages, and 1 on trained tokens;
    - ``entropy``: the policy's per-token entropy, differentiable (None unless a term
      needs ``"entropy"``);
    - ``sources``: per-token values computed once per rollout batch without gradient, by
      name (``"reference"``: log π_ref; a teacher's log-probs, ...).
    """

    logprobs: torch.Tensor
    old_logprobs: torch.Tensor
    advantages: torch.Tensor
    mask: torch.Tensor
    entropy: torch.Tensor | None = None
    sources: Mapping[str, torch.Tensor] = field(default_factory=dict)

    def source(self, name: str) -> torch.Tensor:
        """The per-token values of source ``name``; a clear error when it was not provided."""
        try:
            return self.sources[name]
        except KeyError:
            have = ", ".join(sorted(self.sources)) or "none"
            raise KeyError(f"loss term input {name!r} was not computed (have: {have})") from None


class TermParams(BaseModel):
    """The parameters every term has: its coefficient."""

    model_config = ConfigDict(extra="forbid")
    coef: float = Field(ge=0, description="The term's coefficient c in ℓ = … + c · ℓ^term.")


TermFn = Callable[[TermInputs, Any], tuple[torch.Tensor, Stats]]


class Coefficient(Protocol):
    """The coefficient of one configured term over the run."""

    adaptive: bool  # logged as train/<term>_coef when True

    def value(self) -> float: ...

    def observe(self, stats: Mapping[str, float]) -> None:
        """After each optimizer step, with that step's (group-summed) statistics."""

    def state_dict(self) -> dict[str, float]: ...

    def load_state_dict(self, state: Mapping[str, float]) -> None: ...


@dataclass
class StaticCoefficient:
    """``params.coef`` throughout."""

    coef: float
    adaptive: bool = False

    def value(self) -> float:
        return self.coef

    def observe(self, stats: Mapping[str, float]) -> None:
        return None

    def state_dict(self) -> dict[str, float]:
        return {}

    def load_state_dict(self, state: Mapping[str, float]) -> None:
        return None


def static_coefficient(params: TermParams) -> Coefficient:
    return StaticCoefficient(params.coef)


def _coef_nonzero(params: Any) -> bool:
    return bool(params.coef != 0)


@dataclass(frozen=True)
class LossTerm(Spec[TermFn]):
    """A registered term (see the module docstring): ``part(TermInputs, params) -> (per-token
    loss [N, R], stats)`` with its parameter model (a :class:`TermParams` subclass), and

    - ``needs``: what it reads besides the policy's log-probs;
    - ``advantage_gated``: it vanishes with the advantage;
    - ``coefficient(params)``: how its coefficient evolves (default: ``params.coef``);
    - ``active(params)``: whether the configured term contributes at all (default: coef ≠ 0).
    """

    needs: frozenset[str] = frozenset()
    advantage_gated: bool = False
    coefficient: Callable[[Any], Coefficient] = static_coefficient
    active: Callable[[Any], bool] = _coef_nonzero


LOSS_TERMS: Registry[LossTerm] = Registry("loss term", LossTerm)
"""Loss terms by name (``loss.terms``): ``@LOSS_TERMS.register(name, Params, needs=...,
advantage_gated=..., coefficient=..., active=...)`` on a :data:`TermFn`."""


TOKEN_SOURCES: Registry[Spec[Callable[..., Any]]] = Registry("token source")
"""Kinds of token source a config builds (``loss.sources: {name: {name: kind, params}}``), by
kind: ``@TOKEN_SOURCES.register(kind, Params, description)`` on ``factory(params, learner) ->
fn(batch) -> [N, R]`` (see :data:`verirl.train.learner.TokenSource`), built as
``spec.build(params, learner)``, given the learner whose passes it may reuse. A source marks a
position it has no value for with NaN; the terms reading it skip those."""


def _masked_mean(x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return (x * mask).sum() / mask.sum().clamp(min=1)


# ---- KL to the frozen reference ----------------------------------------------------------------
KLFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
KL_ESTIMATORS: Registry[Spec[KLFn]] = Registry("KL estimator")
"""Per-token estimators of KL(π_θ ‖ π_ref) from samples of π_θ, by name: ``fn(log π_θ [N, R],
log π_ref [N, R]) -> [N, R]`` (Schulman 2020, "Approximating KL divergence", the estimators
k1, k2, k3; with δ = log π_ref − log π_θ)."""


@KL_ESTIMATORS.register("k1")
def kl_k1(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """k1 = −δ = log π_θ − log π_ref: unbiased, high variance, can be negative."""
    return logprobs - ref_logprobs


@KL_ESTIMATORS.register("k2")
def kl_k2(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """k2 = ½ δ²: biased as a value, low variance, ≥ 0; as a loss on samples of π_θ its
    gradient δ·∇log π_θ is the per-token score-function gradient of KL(π_θ ‖ π_ref) (Tang &
    Munos, "On a few pitfalls in KL divergence gradient estimation for RL", arXiv 2506.09477)."""
    return 0.5 * (logprobs - ref_logprobs) ** 2


@KL_ESTIMATORS.register("k3")
def kl_k3(logprobs: torch.Tensor, ref_logprobs: torch.Tensor) -> torch.Tensor:
    """k3 = e^δ − δ − 1: unbiased and always ≥ 0 (GRPO's choice, DeepSeekMath eq. 4)."""
    delta = ref_logprobs - logprobs
    return torch.exp(delta) - delta - 1.0


def kl_penalty(logprobs: torch.Tensor, ref_logprobs: torch.Tensor, estimator: str) -> torch.Tensor:
    """Per-token KL(π_θ ‖ π_ref) by the registered ``estimator`` ([N, R] in and out)."""
    return KL_ESTIMATORS.get(estimator).part(logprobs, ref_logprobs)


class KLParams(TermParams):
    coef: float = Field(
        ge=0,
        description="β of the KL penalty to the initial policy (GRPO, DeepSeekMath: 0.04; "
        "DeepSeek-R1: 0.001; DAPO, RLVE, CER and TRL's default: no KL term).",
    )
    estimator: str = Field(
        "k3",
        description="A registered KL estimator (verirl.train.terms.KL_ESTIMATORS): 'k3' "
        "(GRPO), 'k1', 'k2' (Schulman 2020).",
    )

    @field_validator("estimator")
    @classmethod
    def _known(cls, name: str) -> str:
        if name not in KL_ESTIMATORS:
            raise ValueError(
                f"unknown KL estimator {name!r}; known: {', '.join(KL_ESTIMATORS.names())}"
            )
        return name


@LOSS_TERMS.register("kl", KLParams, needs=frozenset({"reference"}))
def kl_term(inputs: TermInputs, params: KLParams) -> tuple[torch.Tensor, Stats]:
    """The KL penalty to the frozen initial policy (GRPO, Shao et al. 2024, DeepSeekMath
    arXiv 2402.03300, eq. 3): per token ``β · D̂_KL(π_θ ‖ π_ref)`` by ``params.estimator``.
    Statistic ``kl_ref``: the estimate's mean over trained tokens."""
    kl = kl_penalty(inputs.logprobs, inputs.source("reference"), params.estimator)
    return kl, {"kl_ref": _masked_mean(kl, inputs.mask).detach()}


# ---- entropy bonus -------------------------------------------------------------------------------
class EntropyParams(TermParams):
    coef: float = Field(
        ge=0,
        description="c of the entropy bonus −c · H_t (TRL entropy_coef; verl entropy_coeff). "
        "With adaptive: the starting coefficient (TRL: 0).",
    )
    adaptive: bool = Field(
        False,
        description="Adaptive entropy control (Skywork-OR1, arXiv 2505.22312, §3.2; TRL "
        "use_adaptive_entropy): after each optimizer step the coefficient moves by delta "
        "towards keeping the mean entropy at target, and applies only while the last "
        "measured entropy is at or below target.",
    )
    target: float = Field(
        0.2,
        ge=0,
        description="Adaptive only: the target mean per-token entropy in nats (TRL "
        "entropy_target: 0.2; set it near the entropy logged early in the run).",
    )
    delta: float = Field(
        0.005, gt=0, description="Adaptive only: the coefficient's step (TRL: 0.005)."
    )
    coef_min: float = Field(0.0, ge=0, description="Adaptive only: lower bound (TRL: 0).")
    coef_max: float = Field(1.0, ge=0, description="Adaptive only: upper bound (TRL: 1).")

    @model_validator(mode="after")
    def _bounds(self) -> EntropyParams:
        if self.coef_min > self.coef_max:
            raise ValueError(f"coef_min {self.coef_min} > coef_max {self.coef_max}")
        return self


@dataclass
class AdaptiveEntropyCoefficient:
    """Skywork-OR1's adaptive entropy control (He et al., "Skywork Open Reasoner 1 Technical
    Report", arXiv 2505.22312, §3.2.2), as TRL's ``use_adaptive_entropy`` runs it: with e_k
    the mean per-token entropy measured at optimizer step k,

        c_{k+1} = clip(c_k + Δ, c_min, c_max)  if e_k ≤ target
                  clip(c_k − Δ, c_min, c_max)  otherwise

    and the bonus applies at step k+1 only when e_k ≤ target (not at all before the first
    measurement)."""

    params: EntropyParams
    coef: float = 0.0
    last_entropy: float = math.inf
    adaptive: bool = True

    def __post_init__(self) -> None:
        self.coef = self.params.coef

    def value(self) -> float:
        return self.coef if self.last_entropy <= self.params.target else 0.0

    def observe(self, stats: Mapping[str, float]) -> None:
        if "entropy" not in stats:  # no row ran this step: nothing was measured
            return
        e, p = float(stats["entropy"]), self.params
        step = p.delta if e <= p.target else -p.delta
        self.coef = min(max(self.coef + step, p.coef_min), p.coef_max)
        self.last_entropy = e

    def state_dict(self) -> dict[str, float]:
        return {"coef": self.coef, "last_entropy": self.last_entropy}

    def load_state_dict(self, state: Mapping[str, float]) -> None:
        self.coef = float(state["coef"])
        self.last_entropy = float(state["last_entropy"])


def _entropy_coefficient(params: EntropyParams) -> Coefficient:
    if params.adaptive:
        return AdaptiveEntropyCoefficient(params)
    return StaticCoefficient(params.coef)


@LOSS_TERMS.register(
    "entropy",
    EntropyParams,
    needs=frozenset({"entropy"}),
    coefficient=_entropy_coefficient,
    active=lambda p: p.adaptive or p.coef != 0,
)
def entropy_bonus(inputs: TermInputs, params: EntropyParams) -> tuple[torch.Tensor, Stats]:
    """Entropy bonus (Williams & Peng 1991; in RLVR: Skywork-OR1, arXiv 2505.22312, eq. 2's
    entropy term; TRL ``entropy_coef``): per token ``−c · H_t`` with

        H_t = −Σ_v π_θ(v | prefix) log π_θ(v | prefix)

    the policy's entropy at the position (differentiable), so minimising the loss raises it.
    Aggregated like the policy loss (verl's ``agg_loss`` of the entropy; TRL always takes the
    token mean). It does not vanish with the advantage: rows without signal still train."""
    if inputs.entropy is None:
        raise ValueError("the entropy term needs the policy's entropy (declare 'entropy')")
    return -inputs.entropy, {}


# ---- the configured terms ----------------------------------------------------------------------
@dataclass(frozen=True)
class ActiveTerm:
    spec: LossTerm
    params: BaseModel
    coefficient: Coefficient


class LossTerms:
    """The terms a config names (``loss.terms``), active ones only, in order."""

    def __init__(self, configured: Mapping[str, Mapping[str, Any]]) -> None:
        self.terms: list[ActiveTerm] = []
        for name, raw in configured.items():
            spec = LOSS_TERMS.get(name)
            params = spec.parse(raw)
            if spec.active(params):
                self.terms.append(ActiveTerm(spec, params, spec.coefficient(params)))

    @property
    def needs(self) -> frozenset[str]:
        return frozenset().union(*(t.spec.needs for t in self.terms))

    @property
    def advantage_gated(self) -> bool:
        """Every active term vanishes with the advantage (True without terms)."""
        return all(t.spec.advantage_gated for t in self.terms)

    def __bool__(self) -> bool:
        return bool(self.terms)

    def __call__(self, inputs: TermInputs) -> tuple[torch.Tensor, Stats]:
        """Σ_k c_k · ℓ^k [N, R] (zeros without active terms: adding them changes nothing) and
        every term's statistics."""
        total: torch.Tensor | None = None
        stats: Stats = {}
        for t in self.terms:
            value, s = t.spec.part(inputs, t.params)
            scaled = t.coefficient.value() * value
            total = scaled if total is None else total + scaled
            stats.update(s)
        return (torch.zeros_like(inputs.mask) if total is None else total), stats

    def step_stats(self) -> dict[str, float]:
        """Adaptive coefficients, as applied in the step that just ran."""
        adaptive = (t for t in self.terms if t.coefficient.adaptive)
        return {f"{t.spec.name}_coef": t.coefficient.value() for t in adaptive}

    def observe(self, stats: Mapping[str, float]) -> None:
        for t in self.terms:
            t.coefficient.observe(stats)

    def state_dict(self) -> dict[str, dict[str, float]]:
        return {t.spec.name: t.coefficient.state_dict() for t in self.terms}

    def load_state_dict(self, state: Mapping[str, Mapping[str, float]]) -> None:
        for t in self.terms:
            if t.spec.name in state:
                t.coefficient.load_state_dict(state[t.spec.name])


def check_sources(sources: Mapping[str, Plugin], where: str = "loss.sources") -> None:
    """Every configured source names a registered kind and its parameters fit."""
    for name, plugin in sources.items():
        if plugin.name not in TOKEN_SOURCES:
            known = ", ".join(TOKEN_SOURCES.names())
            raise ValueError(
                f"{where}.{name}.name: unknown token source {plugin.name!r}; known: {known}"
            )
        plugin.check_params(TOKEN_SOURCES.get(plugin.name).params, f"{where}.{name}")


def check_terms(configured: Mapping[str, Mapping[str, Any]], where: str = "loss.terms") -> None:
    """Every named term is registered and its parameters fit (``ValueError`` naming the field)."""
    from pydantic import ValidationError

    from verirl.errors import format_errors

    for name, raw in configured.items():
        if name not in LOSS_TERMS:
            known = ", ".join(LOSS_TERMS.names())
            raise ValueError(f"{where}: unknown loss term {name!r}; known: {known}")
        try:
            LOSS_TERMS.get(name).params.model_validate(dict(raw or {}))
        except ValidationError as exc:
            raise ValueError(format_errors(exc, f"{where}.{name}")) from None
