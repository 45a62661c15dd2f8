"""Hand-computed checks of the policy losses, every aggregation mode and overlong shaping
(a reward wrapper, tested here beside the losses it used to live with)."""

from __future__ import annotations

import math

import pytest
import torch

from verirl.rewards.shaping import overlong_penalty
from verirl.train.loss import (
    AGGREGATIONS,
    AggregationScale,
    CISPOParams,
    ClippedSurrogateParams,
    SAPOParams,
    cispo,
    clipped_surrogate,
    sapo,
)

DAPO = ClippedSurrogateParams(eps_low=0.2, eps_high=0.28)


def test_clipped_surrogate_positive_advantage_clips_at_one_plus_eps_high() -> None:
    # ratios 1 and 1.5, A = 1: token 1 → −1; token 2 → −min(1.5, 1.28) = −1.28 (clipped)
    logp = torch.tensor([[0.0, math.log(1.5)]])
    loss, stats = clipped_surrogate(
        logp, torch.zeros(1, 2), torch.ones(1, 2), torch.ones(1, 2), DAPO
    )
    assert loss.tolist()[0] == pytest.approx([-1.0, -1.28])
    assert float(stats["clip_frac"]) == pytest.approx(0.5)
    assert float(stats["ratio_mean"]) == pytest.approx(1.25)


def test_clipped_surrogate_negative_advantage_and_lower_clip() -> None:
    # A = −1: ratio 1.5 → max(1.5, 1.28) = 1.5 (pessimistic bound keeps the unclipped value);
    # ratio 0.5 → max(0.5, 0.8) = 0.8 (clipped at 1 − ε_low)
    logp = torch.tensor([[math.log(1.5), math.log(0.5)]])
    adv = -torch.ones(1, 2)
    loss, _ = clipped_surrogate(logp, torch.zeros(1, 2), adv, torch.ones(1, 2), DAPO)
    assert loss.tolist()[0] == pytest.approx([1.5, 0.8])


def test_dual_clip_bounds_negative_advantage_loss() -> None:
    # ratio 4, A = −1: plain loss 4; dual clip c = 3 → min(4, 3) = 3. For A = +1 no effect.
    logp = torch.tensor([[math.log(4.0), math.log(4.0)]])
    adv = torch.tensor([[-1.0, 1.0]])
    params = ClippedSurrogateParams(eps_low=0.2, eps_high=0.2, dual_clip=3.0)
    loss, _ = clipped_surrogate(logp, torch.zeros(1, 2), adv, torch.ones(1, 2), params)
    assert loss.tolist()[0] == pytest.approx([3.0, -1.2])
    plain, _ = clipped_surrogate(logp, torch.zeros(1, 2), adv, torch.ones(1, 2), DAPO)
    assert plain.tolist()[0] == pytest.approx([4.0, -1.28])


def test_surrogate_gradient_at_ratio_one_is_the_policy_gradient() -> None:
    logp = torch.tensor([[-0.5, -1.0]], requires_grad=True)
    adv = torch.tensor([[2.0, -3.0]])
    loss, _ = clipped_surrogate(logp, logp.detach(), adv, torch.ones(1, 2), DAPO)
    loss.sum().backward()
    assert logp.grad.tolist()[0] == pytest.approx([-2.0, 3.0])  # d(−ρA)/dlogp = −A at ρ = 1


LOSS = torch.tensor([[1.0, 2.0, 3.0], [4.0, 9.0, 9.0]])
MASK = torch.tensor([[1.0, 1.0, 1.0], [1.0, 0.0, 0.0]])
SCALE = AggregationScale(tokens=4, sequences=2, norm_length=10)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("token-mean", (1 + 2 + 3 + 4) / 4),  # 2.5
        ("seq-mean-token-mean", ((1 + 2 + 3) / 3 + 4 / 1) / 2),  # (2 + 4) / 2 = 3
        ("seq-mean-token-sum", ((1 + 2 + 3) + 4) / 2),  # 5
        ("seq-mean-token-sum-norm", ((1 + 2 + 3) + 4) / (2 * 10)),  # 0.5
    ],
)
def test_aggregation_modes(mode: str, expected: float) -> None:
    assert float(AGGREGATIONS.get(mode).part(LOSS, MASK, SCALE)) == pytest.approx(expected)


@pytest.mark.parametrize("mode", AGGREGATIONS.names())
def test_aggregation_is_exact_under_micro_batching(mode: str) -> None:
    fn = AGGREGATIONS.get(mode).part
    whole = fn(LOSS, MASK, SCALE)
    parts = fn(LOSS[:1], MASK[:1], SCALE) + fn(LOSS[1:], MASK[1:], SCALE)
    assert float(parts) == pytest.approx(float(whole))


def test_overlong_penalty_dapo_eq13() -> None:
    # L_max = 100, L_cache = 20: free up to 80, linear to −1 at 100, −1 beyond
    got = overlong_penalty(torch.tensor([50, 80, 90, 100, 101]), max_length=100, buffer=20)
    assert got.tolist() == pytest.approx([0.0, 0.0, -0.5, -1.0, -1.0])
    with pytest.raises(ValueError, match="buffer"):
        overlong_penalty(torch.tensor([1]), max_length=10, buffer=11)


def test_cispo_clips_and_detaches_the_weight_and_keeps_every_gradient() -> None:
    # ratios 2 and 0.5 (π_old = 0.25 and 1.0 for π = 0.5), A = +1 and −1, ε_high = 0.5:
    # r̂ = min(2, 1.5) = 1.5 and 0.5 (no lower bound); L = −r̂·A·log π:
    # token 1: −1.5·1·log 0.5 = 1.5·0.6931 = 1.0397; token 2: −0.5·(−1)·log 0.5 = −0.3466
    logp = torch.tensor([[math.log(0.5), math.log(0.5)]], requires_grad=True)
    old = torch.tensor([[math.log(0.25), 0.0]])
    adv = torch.tensor([[1.0, -1.0]])
    params = CISPOParams(eps_high=0.5)
    loss, stats = cispo(logp, old, adv, torch.ones(1, 2), params)
    assert loss.tolist()[0] == pytest.approx([1.5 * math.log(2), -0.5 * math.log(2)])
    loss.sum().backward()
    # dL/dlogπ = −r̂·A: the clipped token still has its gradient (PPO's clip would give 0)
    assert logp.grad is not None and logp.grad.tolist()[0] == pytest.approx([-1.5, 0.5])
    assert float(stats["clip_frac"]) == pytest.approx(0.5)
    assert float(stats["ratio_mean"]) == pytest.approx(1.25)
    # a lower bound, when asked: r̂ = max(0.5, 1 − 0.2) = 0.8
    low, _ = cispo(
        logp.detach(), old, adv, torch.ones(1, 2), CISPOParams(eps_high=0.5, eps_low=0.2)
    )
    assert float(low[0, 1]) == pytest.approx(-0.8 * math.log(2))


def test_sapo_soft_gate_by_hand() -> None:
    # ratio 1.5, A = +1, τ_pos = 1: σ(0.5) = 0.622459, L = −4·0.622459 = −2.489836,
    # dL/dlogπ = −4·σ(1−σ)·r·A = −4·0.622459·0.377541·1.5 = −1.409969
    # ratio 1, A = −2, τ_neg = 1.05: σ(0) = ½, L = −(4/1.05)·½·(−2) = 3.809524, dL/dlogπ = 2
    logp = torch.tensor([[math.log(1.5), 0.0]], requires_grad=True)
    adv = torch.tensor([[1.0, -2.0]])
    loss, stats = sapo(logp, torch.zeros(1, 2), adv, torch.ones(1, 2), SAPOParams())
    sig = 1 / (1 + math.exp(-0.5))
    assert loss.tolist()[0] == pytest.approx([-4 * sig, 4 / 1.05])
    loss.sum().backward()
    assert logp.grad is not None
    assert logp.grad.tolist()[0] == pytest.approx([-4 * sig * (1 - sig) * 1.5, 2.0])
    # gate weights 4σ(1−σ)r: 1.409969 and 1 → mean 1.204985
    assert float(stats["sapo_weight_mean"]) == pytest.approx((4 * sig * (1 - sig) * 1.5 + 1) / 2)


def test_the_2026_policy_losses_are_registered_and_advantage_gated() -> None:
    from verirl.train.loss import POLICY_LOSSES

    gated = {name for name, spec in POLICY_LOSSES.items() if spec.advantage_gated}
    assert {"clipped_surrogate", "cispo", "sapo"} <= gated
    logp = torch.randn(2, 3)
    for fn, params in ((cispo, CISPOParams()), (sapo, SAPOParams())):
        loss, _ = fn(logp, torch.zeros(2, 3), torch.zeros(2, 3), torch.ones(2, 3), params)  # type: ignore[operator]
        assert loss.abs().max() == 0.0  # A = 0: nothing
