"""Per-token log-probs (and entropies) from hidden states, a chunk of positions at a time.

The usual way — ``logits = lm_head(h)`` for every position, cast to float32, divided by the
temperature, then ``log_softmax`` — holds vocabulary-sized tensors per token for the whole
backward pass: with a 151,936-token vocabulary one float32 copy of 8 × 4,096 response tokens
is 20 GB, the allocation behind most out-of-memory reports of RL trainers. Here the head runs
on ``chunk`` positions at a time:

    for each chunk c of positions:
        z_c   = head(h_c) / T                     (float32, [c, V])
        lse_c = logsumexp(z_c)                     ([c])
        log π(y_t) = z_c[t, y_t] − lse_c[t]        ([c])
        H_t   = lse_c[t] − Σ_v softmax(z_c)[t, v] · z_c[t, v]     (entropy, when asked)
        free z_c

and each chunk is wrapped in a non-reentrant activation checkpoint, so the backward pass
recomputes ``z_c`` chunk by chunk instead of keeping it: at any moment at most one chunk's
vocabulary-sized tensors are alive. The arithmetic per position is the one of the unchunked
path (same operations in the same order), so values and gradients equal it
(``tests/lm/test_head.py``). This is the "chunked LM head" prime-rl made its RL default
(``fused_lm_head_chunk_size``), written with plain torch operations so it runs on any device.

A plain :class:`torch.nn.Linear` head (soft-capped or not, no hooks) goes through
:mod:`verirl.lm.linear_head` instead: the same values and gradients under the same bound on
live logits, with a backward pass that rebuilds only the logits.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.nn.modules.module import _global_forward_hooks, _global_forward_pre_hooks
from torch.utils.checkpoint import checkpoint

from verirl.lm.causal import SoftCappedHead
from verirl.lm.linear_head import linear_head_logprobs

Head = torch.nn.Module  # hidden [..., H] → logits [..., V]: an lm_head, or a wrapper of one

# Auto chunk size: at most this many bytes of float32 logits per chunk.
AUTO_CHUNK_BYTES = {"cpu": 64 * 2**20, "cuda": 512 * 2**20}
DEFAULT_CHUNK_BYTES = 128 * 2**20


def auto_chunk_tokens(vocab_size: int, device: torch.device | str = "cpu") -> int:
    """Positions per chunk so that one chunk's float32 logits take at most 64 MiB on a CPU
    (cache-friendly, and RSS is what a CPU run pays) or 512 MiB on a GPU (fewer, larger
    matrix products): 341 positions for SmolLM2's 49,152 tokens on a CPU, 110 for Qwen's
    151,936; 2,730 and 883 on a GPU."""
    kind = torch.device(device).type
    budget = AUTO_CHUNK_BYTES.get(kind, DEFAULT_CHUNK_BYTES)
    return max(1, budget // (4 * max(1, vocab_size)))


@dataclass(frozen=True)
class TokenLogProbs:
    """Per-position results of :func:`head_logprobs`, float32 and shaped like the targets:
    ``logprobs`` (differentiable when the inputs are) and ``entropy`` (None when not asked
    for; detached unless asked for with ``entropy_grad``). Positions outside the mask hold 0."""

    logprobs: torch.Tensor
    entropy: torch.Tensor | None = None


def head_logprobs(
    head: Head,
    hidden: torch.Tensor,
    targets: torch.Tensor,
    mask: torch.Tensor | None = None,
    temperature: float = 1.0,
    chunk_tokens: int | None = None,
    entropy: bool = False,
    entropy_grad: bool = False,
) -> TokenLogProbs:
    """``log softmax(head(hidden) / T)[targets]`` per position without the logits tensor.

    - ``head``: the output projection as a module (``model.get_output_embeddings()``, or
      :attr:`verirl.lm.CausalLM.head`, which adds a model's logit soft-capping);
    - ``hidden``: ``[..., H]`` final hidden states (after the last norm);
    - ``targets``: ``[...]`` long, the token each position predicts;
    - ``mask``: ``[...]``, nonzero where a log-prob is wanted; only those positions go through
      the head (padding costs nothing). None: every position;
    - ``chunk_tokens``: positions per chunk (None: :func:`auto_chunk_tokens`);
    - ``entropy``: also the entropy of each position's distribution; ``entropy_grad``: keep
      its gradient (an entropy bonus trains on it), recomputed chunk by chunk like the logits.

    With gradients enabled each chunk is checkpointed, so backward recomputes its logits.
    """
    if hidden.shape[:-1] != targets.shape:
        raise ValueError(
            f"hidden states {tuple(hidden.shape)} do not match targets {tuple(targets.shape)}"
        )
    if temperature <= 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    flat_h = hidden.reshape(-1, hidden.shape[-1])
    flat_t = targets.reshape(-1)
    picked: torch.Tensor | None = None
    if mask is not None:
        if mask.shape != targets.shape:
            raise ValueError(
                f"mask {tuple(mask.shape)} does not match targets {tuple(targets.shape)}"
            )
        picked = mask.reshape(-1).nonzero().squeeze(-1)
        flat_h, flat_t = flat_h[picked], flat_t[picked]
    linear = linear_parts(head)
    if linear is not None and flat_h.shape[0] > 0:
        weight, bias, cap = linear
        positions = chunk_tokens or auto_chunk_tokens(weight.shape[0], flat_h.device)
        lp, ent = linear_head_logprobs(
            flat_h, weight, bias, flat_t, temperature, positions * weight.shape[0], cap, entropy
        )
        if ent is not None and not entropy_grad:
            ent = ent.detach()
    else:
        lp, ent = _chunked(head, flat_h, flat_t, temperature, chunk_tokens, entropy, entropy_grad)
    if picked is None:
        return TokenLogProbs(
            lp.reshape(targets.shape), ent.reshape(targets.shape) if ent is not None else None
        )
    out = lp.new_zeros(targets.numel()).index_copy(0, picked, lp).reshape(targets.shape)
    ent_out = None
    if ent is not None:
        ent_out = ent.new_zeros(targets.numel()).index_copy(0, picked, ent).reshape(targets.shape)
    return TokenLogProbs(out, ent_out)


def linear_parts(head: Head) -> tuple[torch.Tensor, torch.Tensor | None, float | None] | None:
    """``(weight, bias, soft-cap)`` of a head that is a plain :class:`torch.nn.Linear` (or a
    :class:`~verirl.lm.causal.SoftCappedHead` around one) with no hooks: such a head goes
    through :func:`verirl.lm.linear_head.linear_head_logprobs`. None for any other head (a
    LoRA-wrapped or sharded one, a head with hooks that move or change its weight): it runs as
    a module, a checkpointed chunk at a time."""
    cap: float | None = None
    if isinstance(head, SoftCappedHead):
        cap = head.cap
        head = head.lm_head
    if type(head) is not torch.nn.Linear:
        return None
    assert isinstance(head, torch.nn.Linear)  # for the type checker
    hooked = (
        head._forward_hooks
        or head._forward_pre_hooks
        or _global_forward_hooks
        or _global_forward_pre_hooks
    )
    if hooked:
        return None
    return head.weight, head.bias, cap


def _chunked(
    head: Head,
    hidden: torch.Tensor,
    targets: torch.Tensor,
    temperature: float,
    chunk_tokens: int | None,
    entropy: bool,
    entropy_grad: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """[M, H], [M] → log-probs [M] (and entropies [M]), ``chunk_tokens`` rows at a time."""
    m = hidden.shape[0]
    if m == 0:
        empty = hidden.new_zeros(0, dtype=torch.float32)
        return empty, (empty if entropy else None)
    size = chunk_tokens or auto_chunk_tokens(_vocab_hint(head, hidden), hidden.device)
    recompute = torch.is_grad_enabled() and (
        hidden.requires_grad or any(p.requires_grad for p in head.parameters())
    )
    lps: list[torch.Tensor] = []
    ents: list[torch.Tensor] = []
    for start in range(0, m, size):
        h, t = hidden[start : start + size], targets[start : start + size]
        if recompute:
            lp, ent = checkpoint(
                _chunk_logprobs, head, h, t, temperature, entropy, entropy_grad, use_reentrant=False
            )
        else:
            lp, ent = _chunk_logprobs(head, h, t, temperature, entropy, entropy_grad)
        lps.append(lp)
        if ent is not None:
            ents.append(ent)
    lp_all = lps[0] if len(lps) == 1 else torch.cat(lps)
    ent_all = (ents[0] if len(ents) == 1 else torch.cat(ents)) if entropy else None
    return lp_all, ent_all


def _chunk_logprobs(
    head: Head,
    hidden: torch.Tensor,
    targets: torch.Tensor,
    temperature: float,
    entropy: bool,
    entropy_grad: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """One chunk: the same operations, in the same order, as :func:`token_logprobs_from_logits`."""
    logits = head(hidden)
    lp = token_logprobs_from_logits(logits, targets, temperature)
    if not entropy:
        return lp, None
    with torch.set_grad_enabled(entropy_grad and torch.is_grad_enabled()):
        z = logits.float()
        if temperature != 1.0:
            z = z / temperature
        return lp, entropy_from_logits(z)


def token_logprobs_from_logits(
    logits: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """``log softmax(logits / T)[targets]`` in float32 without materialising the log-softmax:
    the target logit minus the row's logsumexp. ``[..., V]``, ``[...]`` → ``[...]``.
    Only for logits that already exist (one position, or a chunk); see :func:`head_logprobs`."""
    z = logits.float()
    if temperature != 1.0:
        z = z / temperature
    picked = z.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    return picked - torch.logsumexp(z, dim=-1)


def entropy_from_logits(z: torch.Tensor) -> torch.Tensor:
    """Entropy of ``softmax(z)`` along the last axis, ``logsumexp(z) − Σ softmax(z)·z``
    (float32 ``z``; the form verl's ``entropy_from_logits`` uses)."""
    p = torch.softmax(z, dim=-1)
    return torch.logsumexp(z, dim=-1) - (p * z).sum(dim=-1)


def _vocab_hint(head: Head, hidden: torch.Tensor) -> int:
    weight = getattr(head, "weight", None)
    if isinstance(weight, torch.Tensor):
        return int(weight.shape[0])
    with torch.no_grad():  # one position tells the vocabulary size of any head
        return int(head(hidden[:1]).shape[-1])
