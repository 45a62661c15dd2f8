"""Loss terms by hand: the KL estimators and the KL term, the entropy bonus, the adaptive
entropy coefficient, and the configured set (activity, gating, needs, sum, state)."""

from __future__ import annotations

import math

import pytest
import torch

from verirl.errors import UnknownNameError
from verirl.train.terms import (
    KL_ESTIMATORS,
    LOSS_TERMS,
    AdaptiveEntropyCoefficient,
    EntropyParams,
    LossTerms,
    TermInputs,
    check_terms,
    kl_penalty,
)

ONE = torch.ones(1, 2)


def _inputs(logp: torch.Tensor, **kw: object) -> TermInputs:
    return TermInputs(logp, torch.zeros_like(logp), torch.zeros_like(logp), ONE, **kw)  # type: ignore[arg-type]


def test_kl_estimators_by_hand() -> None:
    # π = 0.5, π_ref = 0.25: δ = log(0.25/0.5) = −log 2
    # k1 = −δ = log 2 ≈ 0.6931; k2 = ½ δ² ≈ 0.2402; k3 = e^δ − δ − 1 = 0.5 + log 2 − 1 ≈ 0.1931
    logp, ref = torch.tensor([math.log(0.5)]), torch.tensor([math.log(0.25)])
    assert KL_ESTIMATORS.names() == ["k1", "k2", "k3"]
    assert float(kl_penalty(logp, ref, "k1")) == pytest.approx(math.log(2))
    assert float(kl_penalty(logp, ref, "k2")) == pytest.approx(0.5 * math.log(2) ** 2)
    assert float(kl_penalty(logp, ref, "k3")) == pytest.approx(0.5 + math.log(2) - 1)
    assert float(kl_penalty(logp, logp, "k3")) == 0.0
    with pytest.raises(UnknownNameError, match="k4"):
        kl_penalty(logp, ref, "k4")


def test_k2_gradient_is_delta_times_the_score() -> None:
    # d/dlogπ ½(logπ − logπ_ref)² = logπ − logπ_ref = log 2 here
    logp = torch.tensor([math.log(0.5)], requires_grad=True)
    kl_penalty(logp, torch.tensor([math.log(0.25)]), "k2").sum().backward()
    assert float(logp.grad) == pytest.approx(math.log(2))  # type: ignore[arg-type]


def test_the_kl_term_reads_the_reference_and_reports_its_mean() -> None:
    terms = LossTerms({"kl": {"coef": 0.5, "estimator": "k1"}})
    assert terms.needs == {"reference"} and not terms.advantage_gated
    logp = torch.tensor([[math.log(0.5), math.log(0.5)]])
    ref = torch.tensor([[math.log(0.25), math.log(0.5)]])
    total, stats = terms(_inputs(logp, sources={"reference": ref}))
    # per token: 0.5 · k1 = 0.5 · [log 2, 0]; kl_ref = mean(k1) = log 2 / 2
    assert total.tolist()[0] == pytest.approx([0.5 * math.log(2), 0.0])
    assert float(stats["kl_ref"]) == pytest.approx(math.log(2) / 2)
    with pytest.raises(KeyError, match="'reference' was not computed"):
        terms(_inputs(logp))


def test_entropy_bonus_is_minus_c_times_entropy_and_raises_it() -> None:
    terms = LossTerms({"entropy": {"coef": 0.1}})
    assert terms.needs == {"entropy"} and not terms.advantage_gated
    entropy = torch.tensor([[0.3, 1.2]], requires_grad=True)
    total, _ = terms(_inputs(torch.zeros(1, 2), entropy=entropy))
    assert total.tolist()[0] == pytest.approx([-0.03, -0.12])
    total.sum().backward()
    assert entropy.grad is not None and entropy.grad.tolist()[0] == pytest.approx([-0.1, -0.1])
    assert terms.step_stats() == {}  # a static coefficient is not logged


def test_adaptive_entropy_coefficient_by_hand() -> None:
    """target 0.5, Δ 0.1, from c = 0.15 within [0, 0.3]. Nothing applies before the first
    measurement; then c moves up while the entropy is at or below target (and applies), down
    while above (and does not apply)."""
    params = EntropyParams(coef=0.15, adaptive=True, target=0.5, delta=0.1, coef_max=0.3)
    c = AdaptiveEntropyCoefficient(params)
    seen = []
    for e in (0.4, 0.45, 0.5, 0.9, 0.2):
        seen.append(c.value())
        c.observe({"entropy": e})
    #  value applied:      0 (no measurement), 0.25, 0.3 (capped), 0.3, 0 (0.9 > target)
    #  coefficient after:  0.25, 0.3, 0.3 (cap), 0.2, 0.3
    assert seen == pytest.approx([0.0, 0.25, 0.3, 0.3, 0.0])
    assert c.coef == pytest.approx(0.3) and c.value() == pytest.approx(0.3)
    c.observe({})  # a step where no row ran measures nothing
    assert c.state_dict() == pytest.approx({"coef": 0.3, "last_entropy": 0.2})
    fresh = AdaptiveEntropyCoefficient(params)
    fresh.load_state_dict(c.state_dict())
    assert fresh.value() == c.value()


def test_configured_terms_are_active_summed_and_restorable() -> None:
    assert {"kl", "entropy"} <= set(LOSS_TERMS.names())
    assert not LossTerms({}) and LossTerms({}).advantage_gated
    assert not LossTerms({"kl": {"coef": 0.0}})  # β 0: no term, no reference
    adaptive = LossTerms({"entropy": {"coef": 0.0, "adaptive": True}})
    assert adaptive and adaptive.step_stats() == {"entropy_coef": 0.0}
    both = LossTerms({"kl": {"coef": 2.0, "estimator": "k1"}, "entropy": {"coef": 0.5}})
    logp = torch.tensor([[0.0, -1.0]])
    total, _ = both(
        _inputs(logp, entropy=torch.tensor([[1.0, 2.0]]), sources={"reference": torch.zeros(1, 2)})
    )
    # 2·(logπ − 0) − 0.5·H = [0 − 0.5, −2 − 1]
    assert total.tolist()[0] == pytest.approx([-0.5, -3.0])
    assert LossTerms({})(_inputs(logp))[0].tolist() == [[0.0, 0.0]]
    adaptive.observe({"entropy": 0.1})
    restored = LossTerms({"entropy": {"coef": 0.0, "adaptive": True}})
    restored.load_state_dict(adaptive.state_dict())
    assert (
        restored.state_dict()
        == adaptive.state_dict()
        == {"entropy": {"coef": 0.005, "last_entropy": 0.1}}
    )


def test_check_terms_names_the_field() -> None:
    with pytest.raises(ValueError, match=r"loss.terms: unknown loss term 'kll'; known: "):
        check_terms({"kll": {"coef": 1.0}})
    with pytest.raises(ValueError, match=r"loss.terms.kl.estimator"):
        check_terms({"kl": {"coef": 1.0, "estimator": "k9"}})
    with pytest.raises(ValueError, match=r"loss.terms.kl.coef"):
        check_terms({"kl": {}})
    with pytest.raises(ValueError, match=r"loss.terms.entropy"):
        check_terms({"entropy": {"coef": 0.1, "coef_min": 0.5, "coef_max": 0.2}})
