"""Process-verified credit (Kim & Yun 2026, arXiv:2606.20068) with hand-computed values."""

from __future__ import annotations

from collections.abc import Sequence

import pydantic
import pytest
import torch

from verirl.credit import CREDIT
from verirl.credit.base import CreditInput
from verirl.credit.process import ProcessParams, tactic_scores
from verirl.types import Problem, Rollout, Verdict

D1, D2 = -0.05, -0.1
PROCESS = CREDIT.get("process")


def make_input(
    correct: Sequence[int],
    groups: Sequence[int],
    steps: Sequence[Sequence[int]],
    first: Sequence[int | None],
    status: Sequence[str],
    *,
    t: int = 8,
    lengths: Sequence[int] | None = None,
) -> CreditInput:
    lengths = list(lengths) if lengths is not None else [t] * len(correct)
    mask = torch.zeros(len(correct), t)
    for i, n in enumerate(lengths):
        mask[i, :n] = 1.0
    return CreditInput(
        rewards=torch.tensor(correct, dtype=torch.float32),
        correct=torch.tensor(correct, dtype=torch.bool),
        groups=torch.tensor(groups),
        response_mask=mask,
        step_starts=tuple(tuple(s) for s in steps),
        first_failed_step=tuple(first),
        status=tuple(status),
    )


def row(t: int = 8, base: float = 0.0, **at: float) -> list[float]:
    """A row of ``t`` values ``base`` with overrides ``at={"t3": v}``."""
    out = [base] * t
    for key, value in at.items():
        out[int(key[1:])] = value
    return out


def close(actual: torch.Tensor, expected: list[list[float]]) -> None:
    torch.testing.assert_close(actual, torch.tensor(expected), atol=1e-5, rtol=0)


# ---- the three kinds of groups ------------------------------------------------------------


def test_mixed_group() -> None:
    # G = 4, one proof passes: g = [1, 0, 0, 0]
    #   mean_g = 0.25
    #   std_g (unbiased) = sqrt((0.75² + 3·0.25²) / 3) = sqrt(0.75 / 3) = 0.5
    #   A_outcome = (1 − 0.25)/0.5 = 1.5 for the pass, (0 − 0.25)/0.5 = −0.5 for the failures
    # process advantages φ − 0.25:
    #   r0 passed, tactics at tokens 0, 3:        1 − 0.25 = 0.75 → 1.5 + 0.75 = 2.25
    #   r1 error at tactic 1 of tokens 0, 2, 5:   φ = [d1, d2, d2] = [−0.05, −0.1, −0.1]
    #        → [−0.30, −0.35, −0.35] → −0.5 − 0.30 = −0.80, −0.5 − 0.35 = −0.85 (twice)
    #   r2 incomplete, tactics at tokens 1, 4:    all_sound → d1 − 0.25 = −0.30 → −0.80
    #   r3 timeout, tactic at token 0, length 6:  all_sound → −0.30 → −0.80; tokens 6, 7 masked
    inp = make_input(
        [1, 0, 0, 0],
        [7, 7, 7, 7],
        [(0, 3), (0, 2, 5), (1, 4), (0,)],
        [None, 1, None, None],
        ["pass", "error", "incomplete", "timeout"],
        lengths=[8, 8, 8, 6],
    )
    close(
        PROCESS(inp),
        [
            row(base=1.5, t0=2.25, t3=2.25),
            row(base=-0.5, t0=-0.80, t2=-0.85, t5=-0.85),
            row(base=-0.5, t1=-0.80, t4=-0.80),
            row(base=-0.5, t0=-0.80, t6=0.0, t7=0.0),
        ],
    )


def test_all_pass_group_gets_zero() -> None:
    # A_outcome = 0 (no spread), A_process = 1 − mean_g = 1 − 1 = 0
    inp = make_input([1, 1], [0, 0], [(0, 2), (1,)], [None, None], ["pass", "pass"])
    close(PROCESS(inp), [row(), row()])


def test_all_fail_group_keeps_the_process_signal() -> None:
    # A_outcome = 0, mean_g = 0, so A_process = φ:
    #   r0 error at tactic 0 (tokens 0, 2): [d2, d2] = [−0.1, −0.1]
    #   r1 incomplete (tokens 1, 3):        [d1, d1] = [−0.05, −0.05]
    inp = make_input([0, 0], [3, 3], [(0, 2), (1, 3)], [0, None], ["error", "incomplete"])
    close(PROCESS(inp), [row(t0=D2, t2=D2), row(t1=D1, t3=D1)])


def test_groups_are_separate() -> None:
    # group 0 = [pass, fail] → mean 0.5, std sqrt(0.5) → z = ±0.5/0.70711 = ±0.70711
    # group 1 = [fail] alone → z = 0, mean 0
    # r1 (error at tactic 0, token 0): −0.70711 + (d2 − 0.5) = −1.30711
    # r2 (error at tactic 0, token 1): 0 + (d2 − 0) = −0.1
    inp = make_input(
        [1, 0, 0], [0, 0, 1], [(), (0,), (1,)], [None, 0, 0], ["pass", "error", "error"], t=2
    )
    close(PROCESS(inp), [[0.70711, 0.70711], [-1.30711, -0.70711], [0.0, D2]])


# ---- first-error propagation and placement ----------------------------------------------------


def fail_alone(first: int | None, status: str, **params: object) -> torch.Tensor:
    """One failed proof in its own group (A_outcome = 0, mean_g = 0, so A = φ), tactics at
    tokens 0, 2, 5, response length 7 of 8."""
    inp = make_input([0], [0], [(0, 2, 5)], [first], [status], lengths=[7])
    return PROCESS(inp, params)


def test_propagation_on_and_off() -> None:
    close(fail_alone(1, "error"), [row(t0=D1, t2=D2, t5=D2)])
    # off: only the first failing tactic gets d2; the later ones are "locally sound"
    close(fail_alone(1, "error", first_error_propagation=False), [row(t0=D1, t2=D2, t5=D1)])


def test_placement_all_tokens() -> None:
    # tactic 0 = tokens 0..1, tactic 1 = tokens 2..4, tactic 2 = tokens 5..6 (end of response)
    close(
        fail_alone(1, "error", placement="all_tokens"),
        [[D1, D1, D2, D2, D2, D2, D2, 0.0]],
    )


def test_placement_last_token() -> None:
    close(fail_alone(1, "error", placement="last_token"), [row(t1=D1, t4=D2, t6=D2)])


# ---- policies for failures without a located tactic ------------------------------------------


@pytest.mark.parametrize(
    ("status", "first", "params", "expected"),
    [
        ("incomplete", None, {}, (D1, D1, D1)),
        ("incomplete", None, {"incomplete_policy": "blame_last"}, (D1, D1, D2)),
        ("error", None, {"incomplete_policy": "blame_last"}, (D1, D1, D2)),  # error in no tactic
        ("timeout", None, {}, (D1, D1, D1)),
        ("timeout", 1, {}, (D1, D1, D1)),  # all_sound ignores a running step
        ("timeout", None, {"timeout_policy": "all_error"}, (D2, D2, D2)),
        ("timeout", 1, {"timeout_policy": "blame_running"}, (D1, D2, D2)),
        ("timeout", None, {"timeout_policy": "blame_running"}, (D1, D1, D1)),
        ("crash", None, {"timeout_policy": "all_error"}, (D2, D2, D2)),
        ("rejected", None, {}, (D2, D2, D2)),
        ("rejected", None, {"rejected_policy": "all_sound"}, (D1, D1, D1)),
    ],
)
def test_policies(
    status: str, first: int | None, params: dict[str, str], expected: tuple[float, ...]
) -> None:
    a, b, c = expected
    close(fail_alone(first, status, **params), [row(t0=a, t2=b, t5=c)])


def test_ablation_switches() -> None:
    # the mixed group of test_mixed_group, rows 0 and 1 only matter here
    inp = make_input(
        [1, 0, 0, 0],
        [0] * 4,
        [(0, 3), (0, 2, 5), (), ()],
        [None, 1, None, None],
        ["pass", "error", "incomplete", "incomplete"],
    )
    # tactic only: no outcome term, so only the tactic tokens move: 0.75 / −0.30, −0.35
    out = PROCESS(inp, {"include_outcome": False})
    close(out[:2], [row(t0=0.75, t3=0.75), row(t0=-0.30, t2=-0.35, t5=-0.35)])
    # no group-mean baseline: φ itself is added: 1.5 + 1 = 2.5; −0.5 + d1 = −0.55 ...
    out = PROCESS(inp, {"process_baseline": "none"})
    close(out[:2], [row(base=1.5, t0=2.5, t3=2.5), row(base=-0.5, t0=-0.55, t2=-0.6, t5=-0.6)])
    # d1 = d2 (the paper's "same tactic reward" ablation)
    out = PROCESS(inp, {"d1": -0.1, "d2": -0.1})
    close(out[1:2], [row(base=-0.5, t0=-0.85, t2=-0.85, t5=-0.85)])


# ---- the parameters and the input contract ----------------------------------------------------


def test_params_defaults_and_descriptions() -> None:
    p = ProcessParams()
    assert (p.d1, p.d2, p.first_error_propagation, p.placement) == (
        -0.05,
        -0.1,
        True,
        "first_token",
    )
    assert (p.incomplete_policy, p.timeout_policy, p.rejected_policy) == (
        "all_sound",
        "all_sound",
        "all_error",
    )
    assert all(f.description for f in ProcessParams.model_fields.values())
    with pytest.raises(pydantic.ValidationError):
        ProcessParams.model_validate({"d3": 1.0})
    with pytest.raises(pydantic.ValidationError):
        ProcessParams.model_validate({"placement": "middle_token"})


def test_tactic_scores_directly() -> None:
    p = ProcessParams()
    assert tactic_scores(3, passed=True, status="pass", first_failed=None, params=p) == [1.0] * 3
    assert tactic_scores(0, passed=False, status="error", first_failed=None, params=p) == []
    assert tactic_scores(2, passed=False, status="", first_failed=0, params=p) == [D2, D2]


def test_bad_inputs_are_named() -> None:
    with pytest.raises(ValueError, match="first_failed_step 3"):
        fail_alone(3, "error")
    bad = make_input([0], [0], [(0, 9)], [None], ["error"])
    with pytest.raises(ValueError, match="increasing token indices"):
        PROCESS(bad)
    short = make_input([0, 0], [0, 0], [(0,)], [None, None], ["error", "error"])
    with pytest.raises(ValueError, match="step_starts has 1 entries for 2 rollouts"):
        PROCESS(short)


def test_from_scored_rollouts() -> None:
    # the path the trainer takes: Verdict.steps / first_failed_step / extra["status"]
    problem = Problem(env="lean", difficulty=0, seed=0, prompt="p", answer="")

    def rollout(correct: bool, first: int | None, status: str) -> Rollout:
        verdict = Verdict(
            reward=float(correct),
            correct=correct,
            first_failed_step=first,
            extra={"status": status},
        )
        return Rollout(
            problem=problem,
            group=0,
            prompt_ids=(1,),
            response_ids=(5, 6, 7, 8),
            logprobs=(0.0,) * 4,
            text="abcd",
            finish_reason="stop",
            verdict=verdict,
        )

    inp = CreditInput.from_rollouts(
        [rollout(True, None, "pass"), rollout(False, 1, "error")], step_starts=[(0, 2), (0, 2)]
    )
    # g = [1, 0]: mean 0.5, std sqrt(0.5) = 0.70711, z = ±0.70711
    # r0: 0.70711 + 0.5 on tokens 0, 2; r1: −0.70711 + (d1 − 0.5) on 0, + (d2 − 0.5) on 2
    close(
        PROCESS(inp),
        [[1.20711, 0.70711, 1.20711, 0.70711], [-1.25711, -0.70711, -1.30711, -0.70711]],
    )
