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


def test_max_rl_divides_the_centring_by_the_group_mean() -> None:
    # group [1, 0, 0, 0]: p̂ = 0.25 → A = (1 − 0.25)/0.25 = 3 and (0 − 0.25)/0.25 = −1;
    # group [1, 1, 0, 1]: p̂ = 0.75 → 1/3 and −1; a group without success → 0
    got = _adv("max_rl", [1, 0, 0, 0, 1, 1, 0, 1, 0, 0], [0] * 4 + [1] * 4 + [2] * 2)
    assert got == pytest.approx([3, -1, -1, -1, 1 / 3, 1 / 3, -1, 1 / 3, 0, 0])
    # the gradient weight per successful sample is 1/K − 1/G (the paper's estimator, G = 4):
    # K = 1: (3)/4 = 1 − 1/4; K = 3: (1/3)/4 = 1/3 − 1/4
    assert got[0] / 4 == pytest.approx(1 / 1 - 1 / 4) and got[4] / 4 == pytest.approx(1 / 3 - 1 / 4)


def test_max_rl_on_graded_rewards_and_on_the_correct_flag() -> None:
    # graded [0.5, −0.5]: mean 0 → the centring alone, ±0.5; [1, 0.5, 0]: mean 0.5 → 1, 0, −1
    got = _adv("max_rl", [0.5, -0.5, 1.0, 0.5, 0.0], [0, 0, 1, 1, 1])
    assert got == pytest.approx([0.5, -0.5, 1.0, 0.0, -1.0])
    # signal 'correct': only the fully-correct flag counts (rewards 1, 0.5, 0 → r = 1, 0, 0)
    inp = CreditInput.from_rewards([1.0, 0.5, 0.0], [0, 0, 0])
    flag = CREDIT.get("max_rl")(inp, {"signal": "correct"})[:, 0].tolist()
    assert flag == pytest.approx([2.0, -1.0, -1.0])  # p̂ = 1/3: (1 − 1/3)/(1/3) = 2


def _with_parts(parts: list[dict[str, float]], groups: list[int]) -> CreditInput:
    from dataclasses import replace

    rewards = [sum(p.values()) for p in parts]
    return replace(CreditInput.from_rewards(rewards, groups), extra=tuple(parts))


def test_gdpo_normalises_each_component_then_the_batch() -> None:
    # two rollouts per group, rewards (format, answer): group 0 (1, 0) and (1, 1); group 1
    # (0, 1) and (1, 1). GRPO on the sums [1, 2] and [1, 2] gives both groups ∓0.7071; GDPO:
    # group 0: format equal → 0; answer [0, 1] → ∓0.7071 (std √0.5) → A = [−0.7071, 0.7071]
    # group 1: format [0, 1] → ∓0.7071, answer equal → 0 → A = [−0.7071, 0.7071]
    # batch: A = [−s, s, −s, s], unbiased std = √(4·0.5/3) = 0.8165 → ±0.8660
    parts = [{"fmt": 1, "ans": 0}, {"fmt": 1, "ans": 1}, {"fmt": 0, "ans": 1}, {"fmt": 1, "ans": 1}]
    inp = _with_parts(parts, [0, 0, 1, 1])
    got = CREDIT.get("gdpo")(inp, {"components": ["fmt", "ans"]})[:, 0].tolist()
    a = math.sqrt(3) / 2
    assert got == pytest.approx([-a, a, -a, a], abs=1e-5)
    # weights: format counts 3×: group 1's spread triples, group 0's does not
    # A = [−s, s, −3s, 3s] with s = 0.7071; batch std √((2·0.5 + 2·4.5)/3) = 1.8257
    w = CREDIT.get("gdpo")(inp, {"components": ["fmt", "ans"], "weights": [3, 1]})[:, 0]
    s = math.sqrt(0.5)
    want = [x * s / math.sqrt(10 / 3) for x in (-1, 1, -3, 3)]
    assert w.tolist() == pytest.approx(want, abs=1e-5)


def test_gdpo_keeps_groups_without_signal_at_zero_and_names_a_missing_component() -> None:
    parts = [{"fmt": 1, "ans": 1}, {"fmt": 1, "ans": 1}, {"fmt": 0, "ans": 1}, {"fmt": 1, "ans": 0}]
    got = CREDIT.get("gdpo")(_with_parts(parts, [0, 0, 1, 1]), {"components": ["fmt", "ans"]})
    assert got[:2].tolist() == [[0.0], [0.0]]
    assert float(got[2, 0]) == 0.0 and float(got[3, 0]) == 0.0  # fmt +, ans − cancel exactly
    # 'reward' and 'correct' are always there
    inp = CreditInput.from_rewards([1.0, 0.0], [0, 0])
    assert CREDIT.get("gdpo")(inp, {"components": ["reward", "correct"]})[:, 0].tolist() == (
        pytest.approx([0.7071, -0.7071], abs=1e-4)
    )
    with pytest.raises(ValueError, match=r"component 'length'.*numbers it has: ans, fmt"):
        CREDIT.get("gdpo")(_with_parts(parts, [0, 0, 1, 1]), {"components": ["length"]})
    with pytest.raises(ValueError, match="2 weights for 1 components"):
        CREDIT.get("gdpo")(inp, {"components": ["reward"], "weights": [1, 2]})
