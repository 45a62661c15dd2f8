"""Hand-computed GRPO, Dr. GRPO and RLOO advantages."""

from __future__ import annotations

import math

import pytest
import torch

from verirl.credit import CREDIT, CreditInput


def _adv(name: str, rewards: list[float], groups: list[int], **params: float) -> list[float]:
    inp = CreditInput.from_rewards(rewards, groups)
    return CREDIT.get(name)(inp, params or None)[:, 0].tolist()


def test_grpo_z_score_with_unbiased_std() -> None:
    # group [1, 0, 0, 1]: mean 0.5, unbiased std = sqrt(4 · 0.25 / 3) = sqrt(1/3)
    # A = ±0.5 / sqrt(1/3) = ±0.8660
    a = math.sqrt(3) / 2
    assert _adv("grpo", [1, 0, 0, 1], [0, 0, 0, 0]) == pytest.approx([a, -a, -a, a], abs=1e-5)


def test_grpo_groups_are_independent_and_degenerate_groups_get_zero() -> None:
    # group 7: [2, 4] → mean 3, std sqrt(2) → ∓1/sqrt(2); group 9: all equal → 0; singleton → 0
    got = _adv("grpo", [2, 4, 5, 5, 1], [7, 7, 9, 9, 3])
    s = 1 / math.sqrt(2)
    assert got == pytest.approx([-s, s, 0.0, 0.0, 0.0], abs=1e-5)


@pytest.mark.parametrize("name", ["grpo", "dr_grpo", "rloo"])
@pytest.mark.parametrize("value", [0.3, -0.758, 0.1 + 0.2])
def test_a_group_of_equal_rewards_gets_exactly_zero(name: str, value: float) -> None:
    # six float32 copies of 0.3 sum to 1.8000001 and average to 0.3 + 3e-8; against the
    # std of those residuals + 1e-6, GRPO would give every member +0.029. Equal is equal.
    got = _adv(name, [value] * 6 + [1.0, 0.0], [0] * 6 + [1, 1])
    assert got[:6] == [0.0] * 6
    assert got[6] > 0 > got[7]


def test_dr_grpo_has_no_std_division() -> None:
    assert _adv("dr_grpo", [1, 0, 0, 1], [0] * 4) == pytest.approx([0.5, -0.5, -0.5, 0.5])


def test_rloo_leave_one_out_baseline() -> None:
    # r = [1, 0, 0, 2]: A_1 = 1 − (0+0+2)/3 = 1/3; A_2 = 0 − (1+0+2)/3 = −1; A_4 = 2 − 1/3
    got = _adv("rloo", [1, 0, 0, 2], [0] * 4)
    assert got == pytest.approx([1 / 3, -1.0, -1.0, 5 / 3])
    assert _adv("rloo", [3.0], [0]) == [0.0]


def test_advantages_are_broadcast_and_masked() -> None:
    inp = CreditInput.from_rewards([1, 0], [0, 0], lengths=[3, 1])
    out = CREDIT.get("dr_grpo")(inp)
    assert out.tolist() == [[0.5, 0.5, 0.5], [-0.5, 0.0, 0.0]]


def test_unknown_estimator_and_bad_params_are_named() -> None:
    with pytest.raises(KeyError, match="unknown credit estimator 'gpro'"):
        CREDIT.get("gpro")
    with pytest.raises(ValueError, match="eps"):
        CREDIT.get("grpo")(CreditInput.from_rewards([1], [0]), {"eps": -1})


def test_registry_refuses_duplicate_names() -> None:
    from verirl.credit import CREDIT

    with pytest.raises(ValueError, match="already registered"):

        @CREDIT.register("grpo")
        def other(inp: CreditInput, params: object) -> torch.Tensor:
            return inp.response_mask
