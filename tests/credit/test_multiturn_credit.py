"""Multi-turn credit baselines (trajectory, turn_score, score_diff, mt_grpo), hand-computed.

Layout of every episode: turn k occupies tokens [3(k−1), 3(k−1)+2) and one feedback-glue
token follows each non-final turn.
"""

from __future__ import annotations

import math

import pytest
import torch

from tests.credit.helpers import episodes, zs
from verirl.credit import CREDIT, CreditInput
from verirl.credit.multiturn import broadcast_turns, score_differences, turn_table
from verirl.types import Turn


def per_turn(tokens: torch.Tensor, inp: CreditInput) -> list[list[float]]:
    """Read back one value per turn, checking every token of the turn carries it and every
    glue token is 0."""
    out = []
    for i, ts in enumerate(inp.turns):
        row = []
        for k, t in enumerate(ts):
            span = tokens[i, t.start : t.end]
            assert torch.allclose(span, span[0].expand_as(span)), (i, k)
            row.append(float(span[0]))
            if k + 1 < len(ts):
                assert float(tokens[i, t.end]) == 0.0, f"glue after turn {k + 1} of rollout {i}"
        out.append(row)
    return out


def assert_rows(actual: list[list[float]], expected: list[list[float]]) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        assert a == pytest.approx(e, abs=1e-5)


# prompt 0: E0 0 → 1 (success at turn 2), E1 0, 0, 0 (never), E2 1 (success at turn 1)
# prompt 1 (stop_on_success = False data): E3 1 → 0 (regresses), E4 0, 0
SPEC = [(0, [0.0, 1.0]), (0, [0.0, 0.0, 0.0]), (0, [1.0]), (1, [1.0, 0.0]), (1, [0.0, 0.0])]


def test_trajectory_final_and_best() -> None:
    inp = episodes(SPEC)
    # final scores: prompt 0 → 1, 0, 1: mean 2/3, stdev √(1/3) = 0.57735
    #   z = (1 − 2/3)/0.57735 = 0.57735 ; (0 − 2/3)/0.57735 = −1.15470
    # prompt 1 → 0, 0: equal → 0
    a = (1 / 3) / math.sqrt(1 / 3)
    b = (-2 / 3) / math.sqrt(1 / 3)
    out = per_turn(CREDIT.get("trajectory")(inp), inp)
    assert_rows(out, [[a, a], [b, b, b], [a], [0.0, 0.0], [0.0, 0.0]])
    # best scores: prompt 1 → 1, 0: z = ±0.5/√0.5 = ±0.70711 on every turn
    c = 0.5 / math.sqrt(0.5)
    out = per_turn(CREDIT.get("trajectory")(inp, {"score": "best"}), inp)
    assert_rows(out, [[a, a], [b, b, b], [a], [c, c], [-c, -c]])


def test_turn_score_normalisations() -> None:
    inp = episodes(SPEC)
    # prompt_turn: prompt 0 turn 1 → (0, 0, 1); turn 2 → (1, 0); turn 3 → (0) alone → raw 0
    #              prompt 1 turn 1 → (1, 0); turn 2 → (0, 0) → 0
    t1 = zs([0.0, 0.0, 1.0])  # −0.57735, −0.57735, 1.15470
    t2 = zs([1.0, 0.0])  # ±0.70711
    out = per_turn(CREDIT.get("turn_score")(inp), inp)
    assert_rows(out, [[t1[0], t2[0]], [t1[1], t2[1], 0.0], [t1[2]], [t2[0], 0.0], [t2[1], 0.0]])
    # prompt: all turns of a prompt pooled: prompt 0 → 0,1 | 0,0,0 | 1 ; prompt 1 → 1,0 | 0,0
    p0 = zs([0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
    p1 = zs([1.0, 0.0, 0.0, 0.0])
    out = per_turn(CREDIT.get("turn_score")(inp, {"normalise": "prompt"}), inp)
    assert_rows(out, [p0[0:2], p0[2:5], p0[5:6], p1[0:2], p1[2:4]])
    out = per_turn(CREDIT.get("turn_score")(inp, {"normalise": "none"}), inp)
    assert_rows(out, [list(s) for _, s in SPEC])


def test_score_diff() -> None:
    # r = 0.2, 0.5, 0.3 → d = 0.2 − 0, 0.5 − 0.2, 0.3 − 0.5 = 0.2, 0.3, −0.2
    # r = 1.0, 0.0     → d = 1.0, −1.0 (the regression is penalised)
    inp = episodes([(0, [0.2, 0.5, 0.3]), (0, [1.0, 0.0])])
    torch.testing.assert_close(
        score_differences(turn_table(inp, "test")),
        torch.tensor([[0.2, 0.3, -0.2], [1.0, -1.0, 0.0]]),
    )
    out = per_turn(CREDIT.get("score_diff")(inp, {"normalise": "none"}), inp)
    assert_rows(out, [[0.2, 0.3, -0.2], [1.0, -1.0]])
    # prompt_turn: turn 1 (0.2, 1.0), turn 2 (0.3, −1.0), turn 3 (−0.2) alone → raw
    t1, t2 = zs([0.2, 1.0]), zs([0.3, -1.0])
    out = per_turn(CREDIT.get("score_diff")(inp), inp)
    assert_rows(out, [[t1[0], t2[0], -0.2], [t1[1], t2[1]]])


def test_mt_grpo_turn_term_plus_outcome() -> None:
    inp = episodes(SPEC[:3])
    # outcome (final) z over (1, 0, 1): 0.57735, −1.15470, 0.57735
    o = zs([1.0, 0.0, 1.0])
    # turn term: turn 1 z(0, 0, 1) = −0.57735, −0.57735, 1.15470; turn 2 z(1, 0) = ±0.70711;
    # turn 3: E1 alone → raw 0
    t1, t2 = zs([0.0, 0.0, 1.0]), zs([1.0, 0.0])
    out = per_turn(CREDIT.get("mt_grpo")(inp), inp)
    assert_rows(
        out,
        [
            [t1[0] + o[0], t2[0] + o[0]],  # 0.0, 1.28446
            [t1[1] + o[1], t2[1] + o[1], 0.0 + o[1]],  # −1.73205, −1.86181, −1.15470
            [t1[2] + o[2]],  # 1.73205
        ],
    )
    assert out[1][0] == pytest.approx(-math.sqrt(3), abs=1e-5)
    # outcome_weight 0 leaves the per-turn-index term: equal to turn_score(prompt_turn)
    torch.testing.assert_close(
        CREDIT.get("mt_grpo")(inp, {"outcome_weight": 0.0}), CREDIT.get("turn_score")(inp)
    )


def test_errors_name_the_problem() -> None:
    flat = CreditInput.from_rewards([1.0, 0.0], [0, 0], lengths=[2, 2])
    for name in ("trajectory", "turn_score", "score_diff", "mt_grpo"):
        with pytest.raises(ValueError, match=f"{name}.*multi_turn"):
            CREDIT.get(name)(flat)
    turns = [[Turn(start=0, end=5, text="", score=0.0, correct=False)]]
    with pytest.raises(ValueError, match=r"rollout 0 turn 1.*\[0, 5\).*width 3"):
        broadcast_turns(torch.zeros(1, 1), turns, 3)
