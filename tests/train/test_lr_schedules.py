"""The learning-rate schedules by hand: warmup, then the registered shape over the rest."""

from __future__ import annotations

import math

import pytest
import torch

from verirl.errors import UnknownNameError
from verirl.train.lr_schedules import LR_SCHEDULES, lr_factor


def test_registered_shapes_by_hand() -> None:
    assert LR_SCHEDULES.names() == ["constant", "cosine", "linear"]
    assert [LR_SCHEDULES.get("linear").part(p) for p in (0.0, 0.25, 1.0)] == [1.0, 0.75, 0.0]
    # cosine: ½(1 + cos(π/4)) = ½(1 + 0.7071) ≈ 0.8536 a quarter of the way
    cosine = LR_SCHEDULES.get("cosine").part
    assert cosine(0.25) == pytest.approx(0.5 * (1 + math.sqrt(0.5)))
    assert (cosine(0.0), cosine(0.5), cosine(1.0)) == pytest.approx((1.0, 0.5, 0.0))
    assert LR_SCHEDULES.get("constant").part(0.7) == 1.0


def test_warmup_then_linear_decay() -> None:
    # 2 warmup steps of 6: 1/2, 2/2, then 1 − (s − 2)/4 for s = 2..5; clamped after the end
    f = lr_factor("linear", warmup_steps=2, total_steps=6)
    assert [f(s) for s in range(7)] == pytest.approx([0.5, 1.0, 1.0, 0.75, 0.5, 0.25, 0.0])
    assert [lr_factor("constant", 0, 3)(s) for s in range(3)] == [1.0, 1.0, 1.0]


def test_lambda_lr_follows_the_factor() -> None:
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor("cosine", 1, 3))
    lrs = []
    for _ in range(3):
        lrs.append(sched.get_last_lr()[0])
        opt.step()
        sched.step()
    # warmup 1/1, then cosine at progress 0 and 1/2 of the remaining 2 steps
    assert lrs == pytest.approx([0.1, 0.1, 0.05])


def test_an_unknown_schedule_names_what_is_known() -> None:
    with pytest.raises(UnknownNameError, match="known: constant, cosine, linear"):
        lr_factor("step", 0, 10)
