"""The tiled linear head (:mod:`verirl.lm.linear_head`) equals the full-logits computation:
log-probs, entropies and the gradients of both, over tiles split in positions and in the
vocabulary, with a bias, a temperature and a soft-cap; by hand on a 2-token vocabulary."""

from __future__ import annotations

import math

import pytest
import torch

import verirl.lm.linear_head as linear_head
from verirl.lm.causal import SoftCappedHead
from verirl.lm.head import head_logprobs, linear_parts
from verirl.lm.linear_head import linear_head_logprobs, tile_shape


def _reference(
    h: torch.Tensor,
    w: torch.Tensor,
    b: torch.Tensor | None,
    t: torch.Tensor,
    temperature: float,
    cap: float | None,
) -> tuple[torch.Tensor, torch.Tensor]:
    y = h @ w.t() + (b if b is not None else 0)
    if cap is not None:
        y = cap * torch.tanh(y / cap)
    z = y / temperature
    logp = torch.log_softmax(z, -1)
    return logp.gather(-1, t[:, None]).squeeze(-1), -(logp.exp() * logp).sum(-1)


def _inputs(
    seed: int, bias: bool
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    h = torch.randn(13, 16, generator=g, dtype=torch.float64)
    w = torch.randn(37, 16, generator=g, dtype=torch.float64)
    b = torch.randn(37, generator=g, dtype=torch.float64) if bias else None
    t = torch.randint(0, 37, (13,), generator=g)
    return h, w, b, t, torch.randn(13, generator=g, dtype=torch.float64)


@pytest.mark.parametrize(("cols", "budget"), [(37, 10**6), (8, 8 * 4), (5, 5), (37, 37)])
@pytest.mark.parametrize(("temperature", "cap", "bias"), [(1.0, None, False), (0.7, 3.0, True)])
def test_values_and_gradients_equal_the_full_logits(
    monkeypatch: pytest.MonkeyPatch,
    cols: int,
    budget: int,
    temperature: float,
    cap: float | None,
    bias: bool,
) -> None:
    """float64, so the tiled sums and the full ones agree to rounding (1e-10): tiles of
    1–13 positions × 5–37 vocabulary entries, the entropy's gradient as well as the
    log-probs'."""
    monkeypatch.setattr(linear_head, "TILE_COLS", cols)
    h, w, b, t, weights = _inputs(0, bias)
    leaves = [x.clone().requires_grad_() for x in (h, w, *([b] if b is not None else []))]
    lp, ent = linear_head_logprobs(
        leaves[0], leaves[1], leaves[2] if bias else None, t, temperature, budget, cap, True
    )
    assert ent is not None
    (lp * weights + 0.3 * ent * weights.flip(0)).sum().backward()
    got = [x.grad for x in leaves]
    ref = [x.clone().requires_grad_() for x in (h, w, *([b] if b is not None else []))]
    lp_ref, ent_ref = _reference(ref[0], ref[1], ref[2] if bias else None, t, temperature, cap)
    (lp_ref * weights + 0.3 * ent_ref * weights.flip(0)).sum().backward()
    torch.testing.assert_close(lp, lp_ref, rtol=0, atol=1e-10)
    torch.testing.assert_close(ent, ent_ref, rtol=0, atol=1e-10)
    for a, r in zip(got, ref, strict=True):
        torch.testing.assert_close(a, r.grad, rtol=0, atol=1e-10)


def test_by_hand_on_two_tokens() -> None:
    """h = [1], W = [[2], [0]]: logits [2, 0]; log π(0) = 2 − log(e² + 1), π(1) = 1 − π(0);
    d log π(0) / dh = Σ_v (onehot − p)_v W_v = (1 − p0)·2 + (−p1)·0 = 2 p1."""
    h = torch.tensor([[1.0]], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([[2.0], [0.0]], dtype=torch.float64, requires_grad=True)
    lp, ent = linear_head_logprobs(h, w, None, torch.tensor([0]), 1.0, 1, None, True)
    p0 = math.exp(2) / (math.exp(2) + 1)
    p1 = 1 - p0
    assert lp.item() == pytest.approx(2 - math.log(math.exp(2) + 1), abs=1e-12)
    assert ent is not None
    assert ent.item() == pytest.approx(-(p0 * math.log(p0) + p1 * math.log(p1)), abs=1e-12)
    lp.sum().backward()
    assert h.grad is not None and w.grad is not None
    assert h.grad.item() == pytest.approx(2 * p1, abs=1e-12)
    # d log π(0) / dW_v = (onehot − p)_v · h: [1 − p0, −p1]
    assert w.grad.flatten().tolist() == pytest.approx([1 - p0, -p1], abs=1e-12)


def test_a_frozen_weight_gets_no_gradient_and_no_grad_saves_nothing() -> None:
    h, w, _, t, _ = _inputs(1, False)
    hh = h.float().requires_grad_()
    lp, _ = linear_head_logprobs(hh, w.float(), None, t, 1.0, 64, None, False)
    lp.sum().backward()
    assert hh.grad is not None and hh.grad.abs().sum() > 0
    with torch.no_grad():
        lp, ent = linear_head_logprobs(h, w, None, t, 1.0, 64, None, False)
    assert not lp.requires_grad and ent is None


def test_tiles_hold_at_most_the_budget() -> None:
    assert tile_shape(5000, 151936, 110 * 151936) == (2040, 8192)
    assert tile_shape(100, 151936, 110 * 151936) == (100, 8192)  # fewer positions than allowed
    assert tile_shape(5000, 97, 10) == (1, 97)  # one position at the least


def test_head_logprobs_takes_the_tiled_path_for_a_plain_linear_head() -> None:
    """A plain ``Linear`` (soft-capped or not) goes through the tiled head; one with a hook, or
    any other module, runs as a module (the checkpointed chunks)."""
    lin = torch.nn.Linear(4, 9, bias=False)
    assert linear_parts(lin) == (lin.weight, None, None)
    weight, _, cap = linear_parts(SoftCappedHead(lin, 30.0)) or (None, None, None)
    assert weight is lin.weight and cap == 30.0
    hook = lin.register_forward_hook(lambda *a: None)
    assert linear_parts(lin) is None
    hook.remove()
    assert linear_parts(torch.nn.Sequential(lin)) is None
    # the two paths agree (float32, within float32's rounding)
    torch.manual_seed(0)
    hidden = torch.randn(2, 5, 4, requires_grad=True)
    targets = torch.randint(0, 9, (2, 5))
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]]).float()
    tiled = head_logprobs(lin, hidden, targets, mask, 0.8, chunk_tokens=3, entropy=True)
    module = head_logprobs(torch.nn.Sequential(lin), hidden, targets, mask, 0.8, 3, True)
    torch.testing.assert_close(tiled.logprobs, module.logprobs, rtol=0, atol=1e-6)
    assert tiled.entropy is not None and module.entropy is not None
    torch.testing.assert_close(tiled.entropy, module.entropy, rtol=0, atol=1e-5)
    assert not tiled.entropy.requires_grad
    # with the entropy's gradient (an entropy bonus): the same gradients on both paths
    grads = []
    for head in (lin, torch.nn.Sequential(lin)):
        out = head_logprobs(head, hidden, targets, mask, 0.8, 3, entropy=True, entropy_grad=True)
        assert out.entropy is not None and out.entropy.requires_grad
        hidden.grad, lin.weight.grad = None, None
        (out.logprobs.sum() + 0.5 * out.entropy.sum()).backward()
        assert hidden.grad is not None and lin.weight.grad is not None
        grads.append((hidden.grad.clone(), lin.weight.grad.clone()))
    for a, b in zip(*grads, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-5)
