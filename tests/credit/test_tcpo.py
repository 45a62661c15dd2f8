"""TCPO credit (arXiv:2608.01667) against hand-computed values, component by component.

Every episode below is laid out as: turn 1 (2 tokens) ▸ feedback glue (1 token) ▸ turn 2
(2 tokens) ▸ …, so turn k occupies tokens [3(k−1), 3(k−1)+2) and the glue token after it
sits at 3(k−1)+2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
import torch

from tests.credit.helpers import episodes, zs
from verirl.credit import CREDIT, CreditInput
from verirl.credit.multiturn import turn_table
from verirl.credit.tcpo import (
    TCPOParams,
    best_future,
    best_prior,
    combined_credit,
    counterfactual_applied,
    counterfactual_credit,
    hindsight_credit,
    hindsight_eligible,
    improvement,
    preservation,
    regression,
    retrospective_credit,
    tcpo_turn_advantages,
)


def close(actual: torch.Tensor, expected: Sequence[Sequence[float]]) -> None:
    torch.testing.assert_close(
        actual, torch.tensor(expected, dtype=torch.float32), atol=1e-5, rtol=1e-5
    )


# Four episodes of one prompt, scores r_{i,k} (τ = 1):
#   E0: 0.2 0.2 1.0   (improves late)
#   E1: 0.5 0.3 0.3   (regresses before any success, never succeeds)
#   E2: 1.0           (success at turn 1)
#   E3: 0.0 0.0 0.0   (never moves)
MIXED = [(0, [0.2, 0.2, 1.0]), (0, [0.5, 0.3, 0.3]), (0, [1.0]), (0, [0.0, 0.0, 0.0])]


@pytest.fixture
def mixed() -> CreditInput:
    return episodes(MIXED)


def test_best_prior_improvement_and_best_future(mixed: CreditInput) -> None:
    t = turn_table(mixed, "test")
    m = best_prior(t.scores, t.valid)
    # m_k = max of the earlier scores, m_1 = 0 (invalid cells follow the padded zeros)
    close(m, [[0, 0.2, 0.2], [0, 0.5, 0.5], [0, 1.0, 1.0], [0, 0, 0]])
    # Δ_k = [r_k − m_k]_+ : E0 0.2, 0, 0.8; E1 0.5, 0, 0; E2 1.0
    delta = torch.where(t.valid, improvement(t.scores, m), torch.zeros(4, 3))
    close(delta, [[0.2, 0, 0.8], [0.5, 0, 0], [1.0, 0, 0], [0, 0, 0]])
    # u_k = max_{t≥k} r_t : E0 1,1,1; E1 0.5,0.3,0.3; E2 1; E3 0,0,0
    close(best_future(t.scores, t.valid), [[1, 1, 1], [0.5, 0.3, 0.3], [1, 0, 0], [0, 0, 0]])


def test_retrospective_is_improvement_only_before_success(mixed: CreditInput) -> None:
    t = turn_table(mixed, "test")
    m = best_prior(t.scores, t.valid)
    # nobody has m_k ≥ τ = 1 on a valid turn except E2's padding: pres and reg vanish there
    assert float((preservation(t.scores, m, 1.0) * t.valid).sum()) == 0.0
    assert float((regression(t.scores, m, 1.0) * t.valid).sum()) == 0.0
    close(
        retrospective_credit(t, TCPOParams(lambda_imp=2.0)),
        [[0.4, 0, 1.6], [1.0, 0, 0], [2.0, 0, 0], [0, 0, 0]],  # 2·Δ
    )


def test_hindsight_leave_one_out_over_eligible_peers(mixed: CreditInput) -> None:
    t = turn_table(mixed, "test")
    # eligible = m_k < 1 and Δ_k = 0:
    #   turn 1: only E3 (E0, E1, E2 improved over m_1 = 0)
    #   turn 2: E0 (0.2 ≤ 0.2), E1 (0.3 ≤ 0.5), E3
    #   turn 3: E1, E3 (E0 improved 0.2 → 1.0)
    elig = hindsight_eligible(t, 1.0)
    assert elig.tolist() == [
        [False, True, False],
        [False, True, True],
        [False, False, False],
        [True, True, True],
    ]
    # turn 1: E3 has no eligible peer → 0
    # turn 2: u = E0 1.0, E1 0.3, E3 0.0
    #   E0: 1.0 − (0.3 + 0.0)/2 = 0.85;  E1: 0.3 − (1.0 + 0.0)/2 = −0.2;
    #   E3: 0.0 − (1.0 + 0.3)/2 = −0.65
    # turn 3: u = E1 0.3, E3 0.0 → E1: 0.3 − 0.0 = 0.3;  E3: 0.0 − 0.3 = −0.3
    close(
        hindsight_credit(t, 1.0),
        [[0, 0.85, 0], [0, -0.2, 0.3], [0, 0, 0], [0, -0.65, -0.3]],
    )


def test_full_tcpo_on_mixed_group(mixed: CreditInput) -> None:
    # c = c_ret + c_hind (all λ = 1, no counterfactual drawn):
    #   turn 1: E0 0.2, E1 0.5, E2 1.0, E3 0.0 + 0
    #   turn 2: E0 0 + 0.85, E1 0 − 0.2, E3 0 − 0.65
    #   turn 3: E0 0.8 + 0, E1 0 + 0.3, E3 0 − 0.3
    t = turn_table(mixed, "test")
    c = combined_credit(t, TCPOParams())
    close(c, [[0.2, 0.85, 0.8], [0.5, -0.2, 0.3], [1.0, 0, 0], [0.0, -0.65, -0.3]])
    z1 = zs([0.2, 0.5, 1.0, 0.0])
    z2 = zs([0.85, -0.2, -0.65])
    z3 = zs([0.8, 0.3, -0.3])
    # γ = 0.5: turn k is scaled by 0.5^(k−1)
    adv = tcpo_turn_advantages(t, TCPOParams(gamma=0.5))
    close(
        adv,
        [
            [z1[0], 0.5 * z2[0], 0.25 * z3[0]],
            [z1[1], 0.5 * z2[1], 0.25 * z3[1]],
            [z1[2], 0, 0],
            [z1[3], 0.5 * z2[2], 0.25 * z3[2]],
        ],
    )
    # the registered estimator writes each turn's value on its 2 tokens, 0 on the glue
    tokens = CREDIT.get("tcpo")(mixed, {"gamma": 0.5})
    assert tokens.shape == (4, 8)
    expected_e0 = [z1[0]] * 2 + [0.0] + [0.5 * z2[0]] * 2 + [0.0] + [0.25 * z3[0]] * 2
    torch.testing.assert_close(tokens[0], torch.tensor(expected_e0), atol=1e-5, rtol=1e-5)
    # E2 stopped after one turn: its padding stays 0
    torch.testing.assert_close(tokens[2], torch.tensor([z1[2]] * 2 + [0.0] * 6))


def test_success_at_turn_one_and_no_eligible_peers() -> None:
    # E0: 1.0 (success at turn 1);  E1: 0.0 then 1.0
    # turn 1: E0 c = Δ = 1.0; E1 is eligible (m=0, Δ=0) but its only peer E0 is not → c = 0
    # z over [1.0, 0.0]: mean 0.5, stdev √0.5 → ±0.5/√0.5 = ±0.70711 (eps negligible)
    # turn 2: only E1 reached it → group of one keeps the raw c = Δ = 1.0
    inp = episodes([(7, [1.0]), (7, [0.0, 1.0])])
    t = turn_table(inp, "test")
    close(hindsight_credit(t, 1.0), [[0, 0], [0, 0]])
    out = CREDIT.get("tcpo")(inp)
    z = 0.5 / math.sqrt(0.5)
    torch.testing.assert_close(
        out,
        torch.tensor([[z, z, 0, 0, 0], [-z, -z, 0, 1.0, 1.0]]),
        atol=1e-5,
        rtol=1e-5,
    )


def test_regression_and_preservation_after_success() -> None:
    # stop_on_success = False data, τ = 1, one episode alone in its group:
    #   r = 0.0, 1.0, 1.0, 0.5;  m = 0, 0, 1.0, 1.0;  Δ = 0, 1.0, 0, 0
    #   pres: turn 3 (m = 1 ≥ τ, Δ = 0, r = 1 ≥ m) → 1; turn 4 (r < m) → 0
    #   reg:  turn 4 → 1·[1.0 − 0.5]_+ = 0.5
    #   c_ret with λ_imp = 1, λ_pres = 0.5, λ_reg = 2:  0, 1.0, 0.5, −1.0
    #   hindsight: turn 1 eligible but no peer → 0; turns 3, 4 are post-success → ineligible
    #   every (prompt, turn) group has one member → raw values kept
    inp = episodes([(0, [0.0, 1.0, 1.0, 0.5])])
    t = turn_table(inp, "test")
    m = best_prior(t.scores, t.valid)
    close(preservation(t.scores, m, 1.0), [[0, 0, 1, 0]])
    close(regression(t.scores, m, 1.0), [[0, 0, 0, 0.5]])
    params = TCPOParams(lambda_pres=0.5, lambda_reg=2.0)
    close(tcpo_turn_advantages(t, params), [[0.0, 1.0, 0.5, -1.0]])
    # with τ = 0.4 the 0.5 at turn 4 no longer drops below success, but still below m = 1.0:
    #   m = 0, 0, 1, 1; pres turn 3 = 1; reg turn 4 = [1 − 0.5]_+ = 0.5 (m ≥ τ) → same c
    close(tcpo_turn_advantages(t, params.model_copy(update={"tau": 0.4})), [[0, 1, 0.5, -1]])


def test_regression_in_a_group_of_different_lengths() -> None:
    # E0: 1.0, 0.0 (regresses after success; stop_on_success = False)
    # E1: 0.0, 0.0, 1.0 ;  E2: 0.0
    # retrospective (λ = 1):  E0: 1.0, −1.0 (reg = 1·[1 − 0]_+);  E1: 0, 0, 1.0;  E2: 0
    # hindsight, turn 1: eligible E1 (u = 1.0), E2 (u = 0.0); E0 improved
    #   E1: 1.0 − 0.0 = 1.0;  E2: 0.0 − 1.0 = −1.0
    # turn 2: E0 is post-success (m = 1 ≥ τ) → ineligible; E1 eligible alone → 0
    # c: turn 1 [1.0, 1.0, −1.0]; turn 2 [−1.0, 0.0]; turn 3 [1.0] (alone → raw)
    inp = episodes([(0, [1.0, 0.0]), (0, [0.0, 0.0, 1.0]), (0, [0.0])])
    t = turn_table(inp, "test")
    close(combined_credit(t, TCPOParams()), [[1.0, -1.0, 0], [1.0, 0.0, 1.0], [-1.0, 0, 0]])
    z1 = zs([1.0, 1.0, -1.0])
    z2 = zs([-1.0, 0.0])
    close(
        tcpo_turn_advantages(t, TCPOParams()),
        [[z1[0], z2[0], 0], [z1[1], z2[1], 1.0], [z1[2], 0, 0]],
    )


# Counterfactual group (τ = 1), scores and alternatives drawn for turn 1:
#   E0: 0.0, 1.0   alts 1, 0, 0, 1   (vary; mean 0.5 → c_cf = 0 − 0.5 = −0.5)
#   E1: 0.0, 0.0   alts 0, 0, 0, 0   (constant, equal to the turn: no contrast)
#   E2: 0.0, 0.5   alts 1, 1, 1, 1   (constant, but the turn is worse: c_cf = −1)
# Hindsight, turn 1 (all eligible; u = 1.0, 0.0, 0.5):
#   E0: 1 − (0 + 0.5)/2 = 0.75;  E1: 0 − (1 + 0.5)/2 = −0.75;  E2: 0.5 − (1 + 0)/2 = 0
# Turn 2: Δ = 1.0, 0, 0.5; only E1 eligible (alone → 0) → c = 1.0, 0.0, 0.5
CF = [(0, [0.0, 1.0]), (0, [0.0, 0.0]), (0, [0.0, 0.5])]
CF_ALTS = {(0, 0): [1.0, 0.0, 0.0, 1.0], (1, 0): [0.0] * 4, (2, 0): [1.0] * 4}


def test_counterfactual_credit_and_when_it_applies() -> None:
    t = turn_table(episodes(CF, CF_ALTS), "test")
    close(counterfactual_credit(t), [[-0.5, 0], [0.0, 0], [-1.0, 0]])
    assert counterfactual_applied(t, "alternatives_vary").tolist() == [
        [True, False],
        [False, False],
        [False, False],
    ]
    assert counterfactual_applied(t, "any_contrast").tolist() == [
        [True, False],
        [False, False],
        [True, False],
    ]


@pytest.mark.parametrize(
    ("update", "turn1"),
    [
        # replace: E0 takes λ_cf·c_cf = −0.5 instead of 0.75; E1, E2 keep hindsight
        ({}, [-0.5, -0.75, 0.0]),
        # add: E0 0.75 + (−0.5) = 0.25
        ({"cf_mode": "add"}, [0.25, -0.75, 0.0]),
        # λ_cf = 2, replace: E0 2·(−0.5) = −1.0
        ({"lambda_cf": 2.0}, [-1.0, -0.75, 0.0]),
        # any_contrast also applies E2's constant-but-better alternatives: −1.0
        ({"cf_apply_when": "any_contrast"}, [-0.5, -0.75, -1.0]),
        # counterfactual off: retrospective + hindsight only
        ({"counterfactual": False}, [0.75, -0.75, 0.0]),
        # λ_hind = 0, add: only the counterfactual survives on turn 1
        ({"lambda_hind": 0.0, "cf_mode": "add"}, [-0.5, 0.0, 0.0]),
    ],
)
def test_counterfactual_refinement_combines(update: dict, turn1: list[float]) -> None:
    inp = episodes(CF, CF_ALTS)
    t = turn_table(inp, "test")
    params = TCPOParams(**update)
    c = combined_credit(t, params)
    close(c, [[turn1[0], 1.0], [turn1[1], 0.0], [turn1[2], 0.5]])
    out = CREDIT.get("tcpo")(inp, params)
    z1, z2 = zs(turn1), zs([1.0, 0.0, 0.5])
    torch.testing.assert_close(
        out[:, [0, 1, 2, 3, 4]],
        torch.tensor([[z1[i], z1[i], 0.0, z2[i], z2[i]] for i in range(3)]),
        atol=1e-5,
        rtol=1e-5,
    )


def test_groups_are_separate_prompts() -> None:
    # the same scores split over two prompts: turn-1 peers only within a prompt
    # prompt 0: E0 0.0, 1.0 ; E1 0.0, 0.0   → turn 1 hindsight ±(1 − 0) = +1, −1
    # prompt 1: E2 0.0, 0.5                 → alone: 0
    inp = episodes([(0, [0.0, 1.0]), (0, [0.0, 0.0]), (1, [0.0, 0.5])])
    close(hindsight_credit(turn_table(inp, "test"), 1.0), [[1.0, 0], [-1.0, 0], [0.0, 0]])


def test_rejects_input_without_turns() -> None:
    inp = CreditInput.from_rewards([1.0, 0.0], [0, 0], lengths=[3, 3])
    with pytest.raises(ValueError, match="multi_turn"):
        CREDIT.get("tcpo")(inp)


def test_rejects_unknown_parameter() -> None:
    with pytest.raises(ValueError, match="lambda_improve"):
        CREDIT.get("tcpo")(episodes(MIXED), {"lambda_improve": 1.0})
