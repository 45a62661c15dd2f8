"""Chunked log-probs from hidden states equal the full-logits computation: values, entropies
and gradients, for every chunk size, temperature and mask."""

from __future__ import annotations

import copy

import pytest
import torch

from verirl.lm.head import (
    auto_chunk_tokens,
    entropy_from_logits,
    head_logprobs,
    token_logprobs_from_logits,
)


def _reference(head: torch.nn.Module, hidden: torch.Tensor, targets: torch.Tensor, t: float):  # type: ignore[no-untyped-def]
    """The path before chunking: every position's logits, float32, / T, the target logit
    minus the row's logsumexp."""
    z = head(hidden).float() / t
    return z.gather(-1, targets[..., None]).squeeze(-1) - torch.logsumexp(z, -1), z


def _scale(b: torch.Tensor) -> float:
    return max(1.0, float(b.detach().abs().max()))


def assert_close(a: torch.Tensor, b: torch.Tensor, tol: float = 1e-6) -> None:
    """Equal within ``tol`` of the tensor's scale (max(1, max |b|)) in float32."""
    scale = _scale(b)
    diff = float((a - b).detach().abs().max())
    assert diff <= tol * scale, f"max difference {diff:.3g} at scale {scale:.3g}"


def assert_as_accurate(got: torch.Tensor, today: torch.Tensor, truth: torch.Tensor) -> None:
    """The chunked gradient ``got`` is within 1e-6 (of the scale) of what float32 allows:
    measured against the float64 ``truth``, its error exceeds today's full-logits path's own
    error by at most 1e-6 of the scale. Chunks sum a gradient in another order than one matrix
    product and a one-row chunk takes the matrix-vector kernel, so the two float32 paths differ
    in the last bits by an amount that depends on the CPU's kernels (≤ 3.2e-7 of the scale on
    one host, 1.06e-6 on an AMD EPYC host where today's path is itself 7.8e-7 from float64):
    the direct comparison is therefore bounded at 2e-6, the accuracy one at 1e-6."""
    scale = _scale(truth)
    err = float((got.detach().double() - truth).abs().max())
    err_today = float((today.detach().double() - truth).abs().max())
    assert err <= err_today + 1e-6 * scale, (
        f"error {err:.3g} against float64, today's path {err_today:.3g}, scale {scale:.3g}"
    )
    assert_close(got, today, tol=2e-6)


def _setup(seed: int, bias: bool = False):  # type: ignore[no-untyped-def]
    g = torch.Generator().manual_seed(seed)
    head = torch.nn.Linear(16, 97, bias=bias)
    with torch.no_grad():
        head.weight.copy_(torch.randn(97, 16, generator=g))
        if bias:
            head.bias.copy_(torch.randn(97, generator=g))
    hidden = torch.randn(3, 11, 16, generator=g, requires_grad=True)
    targets = torch.randint(0, 97, (3, 11), generator=g)
    mask = (torch.rand(3, 11, generator=g) > 0.3).float()
    weights = torch.randn(3, 11, generator=g)
    return head, hidden, targets, mask, weights


@pytest.mark.parametrize("chunk", [1, 4, 7, 33, None])
@pytest.mark.parametrize("temperature", [1.0, 0.7])
@pytest.mark.parametrize("bias", [False, True])
def test_values_entropies_and_gradients_equal_the_full_logits(
    chunk: int | None, temperature: float, bias: bool
) -> None:
    head, hidden, targets, mask, weights = _setup(0, bias)
    out = head_logprobs(head, hidden, targets, mask, temperature, chunk, entropy=True)
    (out.logprobs * weights).sum().backward()
    got = [hidden.grad.clone(), *(p.grad.clone() for p in head.parameters())]  # type: ignore[union-attr]
    hidden.grad = None
    head.zero_grad()

    ref, z = _reference(head, hidden, targets, temperature)
    ref = ref * mask
    (ref * weights).sum().backward()
    want = [hidden.grad, *(p.grad for p in head.parameters())]
    head64 = copy.deepcopy(head).double()
    hidden64 = hidden.detach().double().requires_grad_()
    ref64, _ = _reference(head64, hidden64, targets, temperature)
    (ref64 * mask.double() * weights.double()).sum().backward()
    truth = [hidden64.grad, *(p.grad for p in head64.parameters())]
    assert_close(out.logprobs, ref)
    assert out.entropy is not None
    p = torch.softmax(z.detach(), -1)
    ent = -(p * torch.log_softmax(z.detach(), -1)).sum(-1) * mask
    assert torch.allclose(out.entropy, ent, atol=1e-5)
    assert not out.entropy.requires_grad
    for a, b, c in zip(got, want, truth, strict=True):
        assert_as_accurate(a, b, c)  # type: ignore[arg-type]


@pytest.mark.parametrize("chunk", [4, None])
def test_entropy_gradient_equals_the_full_logits(chunk: int | None) -> None:
    """``entropy_grad``: the entropy trains (an entropy bonus); its gradient, recomputed chunk
    by chunk, is the one of H = −Σ softmax(z)·log softmax(z) over the full logits."""
    head, hidden, targets, mask, weights = _setup(1)
    out = head_logprobs(head, hidden, targets, mask, 0.7, chunk, entropy=True, entropy_grad=True)
    assert out.entropy is not None and out.entropy.requires_grad
    (out.entropy * weights).sum().backward()
    got = [hidden.grad.clone(), head.weight.grad.clone()]  # type: ignore[union-attr]
    hidden.grad = None
    head.zero_grad()
    _, z = _reference(head, hidden, targets, 0.7)
    ent = -(torch.softmax(z, -1) * torch.log_softmax(z, -1)).sum(-1) * mask
    (ent * weights).sum().backward()
    assert_close(out.entropy, ent.detach(), tol=1e-5)
    for a, b in zip(got, [hidden.grad, head.weight.grad], strict=True):
        assert_close(a, b, tol=1e-5)  # type: ignore[arg-type]


def test_positions_outside_the_mask_are_zero_and_never_reach_the_head() -> None:
    head, hidden, targets, mask, _ = _setup(1)
    seen: list[int] = []
    head.register_forward_hook(lambda m, i, o: seen.append(i[0].shape[0]))
    out = head_logprobs(head, hidden, targets, mask, chunk_tokens=1000)
    assert sum(seen) == int(mask.sum())
    assert torch.all(out.logprobs[mask == 0] == 0)


def test_no_chunk_holds_more_than_its_positions() -> None:
    """The head sees ``chunk`` positions at a time, forward and (recomputed) backward."""
    head, hidden, targets, _, _ = _setup(2)
    seen: list[int] = []
    head.register_forward_hook(lambda m, i, o: seen.append(i[0].shape[0]))
    head_logprobs(head, hidden, targets, chunk_tokens=5).logprobs.sum().backward()
    # 33 positions: 7 chunks forward, recomputed in backward
    assert max(seen) == 5 and sum(seen) == 2 * 33


def test_no_grad_runs_each_chunk_once() -> None:
    head, hidden, targets, _, _ = _setup(3)
    seen: list[int] = []
    head.register_forward_hook(lambda m, i, o: seen.append(i[0].shape[0]))
    with torch.no_grad():
        out = head_logprobs(head, hidden, targets, chunk_tokens=8)
    assert sum(seen) == 33 and not out.logprobs.requires_grad


def test_empty_mask_and_bad_shapes() -> None:
    head, hidden, targets, _, _ = _setup(4)
    out = head_logprobs(head, hidden, targets, torch.zeros(3, 11), entropy=True)
    assert out.logprobs.shape == (3, 11) and float(out.logprobs.abs().sum()) == 0.0
    with pytest.raises(ValueError, match="do not match targets"):
        head_logprobs(head, hidden, targets[:, :5])
    with pytest.raises(ValueError, match="mask"):
        head_logprobs(head, hidden, targets, torch.ones(3, 5))
    with pytest.raises(ValueError, match="temperature"):
        head_logprobs(head, hidden, targets, temperature=0.0)


def test_token_logprobs_from_logits_and_entropy_by_hand() -> None:
    logits = torch.tensor([[0.0, 0.0, 0.0, 0.0], [2.0, 0.0, 0.0, 0.0]])
    lp = token_logprobs_from_logits(logits, torch.tensor([1, 0]), temperature=2.0)
    # row 0: uniform over 4 → log(1/4); row 1: z = [1, 0, 0, 0] → 1 − log(e + 3)
    assert lp.tolist() == pytest.approx([-1.3862944, 1 - 1.7436683], abs=1e-6)
    ent = entropy_from_logits(logits[:1])
    assert ent.tolist() == pytest.approx([1.3862944], abs=1e-6)  # log 4


def test_auto_chunk_sizes() -> None:
    assert auto_chunk_tokens(49152, "cpu") == 341
    assert auto_chunk_tokens(151936, "cpu") == 110
    assert auto_chunk_tokens(151936, "cuda") == 883
    assert auto_chunk_tokens(10**12, "cpu") == 1


def test_token_logprobs_from_logits_match_log_softmax_with_temperature() -> None:
    torch.manual_seed(0)
    logits = torch.randn(2, 3, 7)
    targets = torch.randint(0, 7, (2, 3))
    for t in (1.0, 0.7):
        ref = torch.log_softmax(logits / t, -1).gather(-1, targets[..., None]).squeeze(-1)
        assert torch.allclose(token_logprobs_from_logits(logits, targets, t), ref, atol=1e-6)
