"""Hand-computed checks of the policy loss, every aggregation mode, KL and overlong shaping
(a reward wrapper, tested here beside the losses it used to live with)."""

from __future__ import annotations

import math

import pytest
import torch

from verirl.rewards.shaping import overlong_penalty
from verirl.train.loss import (
    AGGREGATIONS,
    AggregationScale,
    ClippedSurrogateParams,
    clipped_surrogate,
    kl_penalty,
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


def test_kl_estimators_by_hand() -> None:
    # π = 0.5, π_ref = 0.25: δ = log(0.25/0.5) = −log 2
    # k1 = −δ = log 2 ≈ 0.6931;  k3 = e^δ − δ − 1 = 0.5 + log 2 − 1 ≈ 0.1931
    logp, ref = torch.tensor([math.log(0.5)]), torch.tensor([math.log(0.25)])
    assert float(kl_penalty(logp, ref, "k1")) == pytest.approx(math.log(2))
    assert float(kl_penalty(logp, ref, "k3")) == pytest.approx(0.5 + math.log(2) - 1)
    assert float(kl_penalty(logp, logp, "k3")) == 0.0
    with pytest.raises(ValueError, match="k2"):
        kl_penalty(logp, ref, "k2")  # type: ignore[arg-type]


def test_overlong_penalty_dapo_eq13() -> None:
    # L_max = 100, L_cache = 20: free up to 80, linear to −1 at 100, −1 beyond
    got = overlong_penalty(torch.tensor([50, 80, 90, 100, 101]), max_length=100, buffer=20)
    assert got.tolist() == pytest.approx([0.0, 0.0, -0.5, -1.0, -1.0])
    with pytest.raises(ValueError, match="buffer"):
        overlong_penalty(torch.tensor([1]), max_length=10, buffer=11)
