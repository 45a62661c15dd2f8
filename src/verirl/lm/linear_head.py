"""Per-token log-probs (and entropies) through a linear output head in tiles, with a backward
pass that rebuilds only the logits.

For an output head ``z = (h Wᵀ + b) / T`` (optionally soft-capped first, ``cap · tanh(y / cap)``)
the log-prob of target ``y_t`` and its gradients are

    log π(y_t) = z_t[y_t] − lse(z_t)
    ∂ log π(y_t) / ∂z_t = onehot(y_t) − softmax(z_t)
    H_t = lse(z_t) − Σ_v softmax(z_t)_v z_t,v,   ∂H_t / ∂z_t,v = −p_v (log p_v + H_t)

so the backward pass needs, per position, only ``lse(z_t)`` (and ``H_t`` for an entropy
gradient) besides the inputs: :class:`LinearHeadLogProbs` saves those two numbers per position
and, in backward, builds each tile's logits once more — one matrix product and one ``exp`` —
turns them into the tile's logit gradient in place and folds it into the input and weight
gradients. This is the "cut cross-entropy" idea (Wijmans et al. 2024, "Cut Your Losses in
Large-Vocabulary Language Models", arXiv:2411.09009, Algorithm 2 and its backward) written with
plain torch operations. The forward pass folds tiles over the vocabulary into a running
logsumexp (Milakov & Gimelshein 2018, "Online normalizer calculation for softmax",
arXiv:1805.02867, Algorithm 3), so a tile is ``rows × cols`` of the ``[M, V]`` logits and no
row of the vocabulary is ever whole:

    m ← max(m, max_v z_v);  s ← s · e^{m_old − m} + Σ_v e^{z_v − m}   (lse = m + log s)

Against a checkpointed chunk of full rows (:func:`verirl.lm.head.head_logprobs`' general path)
the backward pass neither runs the head's forward again as an autograd graph (logsumexp,
gather, entropy) nor produces a ``[V, H]`` weight gradient per chunk to add up: each tile adds
its ``[cols, H]`` slice into one float32 accumulator (float64 for float64 inputs). Tiles are
wide in positions and narrow in the vocabulary, so each matrix product is large and the
weight's slice is read once per pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch

# Vocabulary entries per tile: narrow enough that a tile of many positions stays a few tens of
# MB, wide enough for a full-speed matrix product.
TILE_COLS = 8192


def _tiles(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    rows: int,
    cols: int,
    dtype: torch.dtype,
) -> Iterator[tuple[int, int, int, int, torch.Tensor, torch.Tensor, torch.Tensor | None]]:
    """The tiles of ``hidden @ weightᵀ`` in the order both passes walk them — ``cols`` of the
    vocabulary at a time (its weight and bias slice cast once), ``rows`` positions within:
    ``(r0, r1, c0, c1, hidden rows, weight slice, bias slice)`` in ``dtype``."""
    m, vocab = hidden.shape[0], weight.shape[0]
    for c0 in range(0, vocab, cols):
        c1 = min(c0 + cols, vocab)
        w = weight[c0:c1].to(dtype)
        b = bias[c0:c1].to(dtype) if bias is not None else None
        for r0 in range(0, m, rows):
            r1 = min(r0 + rows, m)
            yield r0, r1, c0, c1, hidden[r0:r1].to(dtype), w, b


def tile_shape(rows: int, vocab: int, budget: int) -> tuple[int, int]:
    """``(rows, cols)`` of a tile holding at most ``budget`` float32 logits: ``cols`` up to
    :data:`TILE_COLS`, as many positions as the budget allows beside them."""
    cols = max(1, min(vocab, TILE_COLS))
    return max(1, min(rows, budget // cols)), cols


def linear_head_logprobs(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    bias: torch.Tensor | None,
    targets: torch.Tensor,
    temperature: float,
    budget: int,
    softcap: float | None = None,
    entropy: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``[M, H]`` hidden states, ``[V, H]`` weight, ``[M]`` targets → log-probs ``[M]`` and,
    when asked, entropies ``[M]`` (float32, or float64 for float64 inputs; differentiable where
    the inputs are), computed in tiles of at most ``budget`` logits."""
    lp, ent = LinearHeadLogProbs.apply(
        hidden, weight, bias, targets, temperature, budget, softcap, entropy
    )
    return lp, (ent if entropy else None)


def _compute_dtype(x: torch.Tensor) -> torch.dtype:
    kind = x.device.type
    if torch.is_autocast_enabled(kind):
        return torch.get_autocast_dtype(kind)
    return x.dtype


def _reduce_dtype(dtype: torch.dtype) -> torch.dtype:
    """The logits' and sums' dtype: float32, or float64 for float64 inputs."""
    return torch.promote_types(dtype, torch.float32)


def _tile_logits(
    h: torch.Tensor,
    w: torch.Tensor,
    b: torch.Tensor | None,
    inv_t: float,
    softcap: float | None,
    reduce: torch.dtype,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """One tile's logits ``z`` in ``reduce`` (float32, or float64 for float64 inputs) and,
    when soft-capped, ``tanh(y / cap)`` (for the backward pass's chain rule)."""
    y = torch.mm(h, w.t())
    if b is not None:
        y = y + b
    y = y.to(reduce)
    capped = None
    if softcap is not None:
        capped = torch.tanh(y / softcap)
        y = capped * softcap
    if inv_t != 1.0:
        y.mul_(inv_t)
    return y, capped


def _accumulate(acc: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """``acc += a @ b`` into ``acc`` (``a`` in ``acc``'s dtype, float32 or float64; ``b`` in the
    compute dtype), without rounding the product to a lower precision first: a CUDA bf16/fp16
    product accumulates in float32 (``out_dtype``), elsewhere the operands are upcast."""
    if b.dtype == acc.dtype:
        acc.addmm_(a, b)
    elif acc.device.type == "cuda":
        acc.add_(torch.mm(a.to(b.dtype), b, out_dtype=torch.float32))
    else:
        acc.addmm_(a, b.to(acc.dtype))


class LinearHeadLogProbs(torch.autograd.Function):
    """See the module docstring. ``forward(hidden, weight, bias, targets, temperature, budget,
    softcap, entropy) → (logprobs, entropy or an empty tensor)``."""

    @staticmethod
    def forward(
        ctx: Any,
        hidden: torch.Tensor,
        weight: torch.Tensor,
        bias: torch.Tensor | None,
        targets: torch.Tensor,
        temperature: float,
        budget: int,
        softcap: float | None,
        entropy: bool,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        dtype = _compute_dtype(hidden)
        m, vocab = hidden.shape[0], weight.shape[0]
        rows, cols = tile_shape(m, vocab, budget)
        inv_t = 1.0 / temperature
        acc, dev = _reduce_dtype(dtype), hidden.device
        run_max = torch.full((m,), -torch.inf, device=dev, dtype=acc)
        run_sum = torch.zeros(m, device=dev, dtype=acc)
        run_zsum = torch.zeros(m, device=dev, dtype=acc)  # B = Σ e^{z−m}(z − m), for the entropy
        picked = torch.zeros(m, device=dev, dtype=acc)
        with torch.autocast(hidden.device.type, enabled=False):
            for r0, r1, c0, c1, h, w, b in _tiles(hidden, weight, bias, rows, cols, dtype):
                z, _ = _tile_logits(h, w, b, inv_t, softcap, acc)
                t = targets[r0:r1] - c0
                inside = (t >= 0) & (t < c1 - c0)
                if bool(inside.any()):
                    at = inside.nonzero().squeeze(1)
                    picked[r0 + at] = z[at, t[at]]
                old = run_max[r0:r1]
                new = torch.maximum(old, z.amax(dim=1))
                shift = old - new  # ≤ 0; −inf on a row's first tile
                rescale = torch.exp(shift)
                z.sub_(new.unsqueeze(1))  # z − m
                e = torch.exp(z)
                before = run_sum[r0:r1]
                if entropy:  # B = Σ e^{z−m}(z − m), moved to the new max, plus this tile
                    moved = torch.where(before > 0, shift, 0.0) * before
                    run_zsum[r0:r1] = (run_zsum[r0:r1] + moved) * rescale + (e * z).sum(1)
                run_sum[r0:r1] = before * rescale + e.sum(dim=1)
                run_max[r0:r1] = new
        lse = run_max + torch.log(run_sum)
        logprobs = picked - lse
        # H = −Σ_v p_v (z_v − lse) = log S − B / S, with S = Σ e^{z−m} and B = Σ e^{z−m}(z − m)
        ent = (torch.log(run_sum) - run_zsum / run_sum) if entropy else lse.new_empty(0)
        ctx.save_for_backward(hidden, weight, bias, targets, lse, ent)
        ctx.settings = (dtype, budget, inv_t, softcap)
        if not entropy:
            ctx.mark_non_differentiable(ent)
        ctx.set_materialize_grads(False)
        return logprobs, ent

    @staticmethod
    def backward(
        ctx: Any, grad_lp: torch.Tensor | None, grad_ent: torch.Tensor | None
    ) -> tuple[torch.Tensor | None, ...]:
        hidden, weight, bias, targets, lse, ent = ctx.saved_tensors
        dtype, budget, inv_t, softcap = ctx.settings
        need_h, need_w, need_b = ctx.needs_input_grad[:3]
        none = (None,) * 8
        if grad_lp is None and (grad_ent is None or ent.numel() == 0):
            return none
        m, vocab = hidden.shape[0], weight.shape[0]
        rows, cols = tile_shape(m, vocab, budget)
        acc, dev = _reduce_dtype(dtype), hidden.device
        grad_h = torch.zeros(hidden.shape, device=dev, dtype=acc) if need_h else None
        grad_w = torch.zeros(weight.shape, device=dev, dtype=acc) if need_w else None
        grad_b = torch.zeros(vocab, device=dev, dtype=acc) if need_b and bias is not None else None
        g_lp = grad_lp.to(acc) if grad_lp is not None else None
        g_ent = grad_ent.to(acc) if grad_ent is not None and ent.numel() else None
        with torch.autocast(hidden.device.type, enabled=False):
            for r0, r1, c0, c1, h, w, b in _tiles(hidden, weight, bias, rows, cols, dtype):
                z, capped = _tile_logits(h, w, b, inv_t, softcap, acc)
                logp = z.sub_(lse[r0:r1].unsqueeze(1))  # log p, in place
                p = torch.exp(logp)
                # ∂L/∂z = g_lp (onehot − p) − g_ent p (log p + H)
                if g_ent is not None:
                    logp.add_(ent[r0:r1].unsqueeze(1)).mul_(p).mul_(-g_ent[r0:r1].unsqueeze(1))
                    grad_z = logp
                    if g_lp is not None:
                        grad_z.sub_(p.mul_(g_lp[r0:r1].unsqueeze(1)))
                else:
                    assert g_lp is not None
                    grad_z = p.mul_(-g_lp[r0:r1].unsqueeze(1))
                if g_lp is not None:
                    t = targets[r0:r1] - c0
                    inside = (t >= 0) & (t < c1 - c0)
                    if bool(inside.any()):
                        at = inside.nonzero().squeeze(1)
                        grad_z[at, t[at]] += g_lp[r0:r1][at]
                if inv_t != 1.0:
                    grad_z.mul_(inv_t)
                if capped is not None:
                    grad_z.mul_(1.0 - capped * capped)
                if grad_h is not None:
                    _accumulate(grad_h[r0:r1], grad_z, w)
                if grad_w is not None:
                    _accumulate(grad_w[c0:c1], grad_z.t(), h)
                if grad_b is not None:
                    grad_b[c0:c1] += grad_z.sum(dim=0)
        return (
            grad_h.to(hidden.dtype) if grad_h is not None else None,
            grad_w.to(weight.dtype) if grad_w is not None else None,
            grad_b.to(bias.dtype) if grad_b is not None else None,
            None,
            None,
            None,
            None,
            None,
        )
