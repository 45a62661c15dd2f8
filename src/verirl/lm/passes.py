"""The learner's forward passes over a :class:`~verirl.types.Batch`: the final hidden state
that predicts each response token, ``[N, R, H]`` — the log-probs then come from
:func:`verirl.lm.head.head_logprobs`, a chunk of positions at a time.

Two ways, with the same result:

- :func:`response_hidden_full`: one pass over prompt ⊕ response for every row;
- :func:`response_hidden_shared_prefix`: each distinct (left-padded) prompt of the batch is
  encoded once and its keys/values are gathered to the rows that continue it — the G samples
  of a GRPO group — with a differentiable index, so the rows' gradients add up in the one
  prompt computation exactly as they would across separate copies; then the responses run on
  top. The hidden state predicting the first response token is the prompt's last one.

Both take replayable caches (:mod:`verirl.lm.cache`), so either may run with activation
checkpointing (:mod:`verirl.lm.checkpointing`).
"""

from __future__ import annotations

import torch

from verirl.lm.cache import PromptCache
from verirl.lm.causal import CausalLM
from verirl.types import Batch


def response_hidden(lm: CausalLM, batch: Batch, share_prompt_prefix: bool) -> torch.Tensor:
    """``[N, R, H]``: the hidden state from which each response token is predicted."""
    if share_prompt_prefix:
        return response_hidden_shared_prefix(lm, batch)
    return response_hidden_full(lm, batch)


def response_hidden_full(lm: CausalLM, batch: Batch) -> torch.Tensor:
    """One decoder pass over prompt ⊕ response per row."""
    p, r = batch.prompt_width, batch.response_mask.shape[1]
    positions = (batch.attention_mask.cumsum(1) - 1).clamp(min=0)
    hidden = lm.hidden(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=positions,
        use_cache=False,
    )
    return hidden[:, p - 1 : p + r - 1]


def response_hidden_shared_prefix(lm: CausalLM, batch: Batch) -> torch.Tensor:
    """Like :func:`response_hidden_full`, encoding each distinct prompt once."""
    p, r = batch.prompt_width, batch.response_mask.shape[1]
    key = torch.cat([batch.input_ids[:, :p], batch.attention_mask[:, :p]], dim=1)
    uniq, inverse = torch.unique(key, dim=0, return_inverse=True)
    u_ids, u_mask = uniq[:, :p], uniq[:, p:]
    cache = PromptCache()
    first = lm.hidden(
        input_ids=u_ids,
        attention_mask=u_mask,
        position_ids=(u_mask.cumsum(1) - 1).clamp(min=0),
        past_key_values=cache,
        use_cache=True,
    )[:, -1:][inverse]  # [N, 1, H]
    if r == 1:
        return first
    start = u_mask.sum(1)[inverse].unsqueeze(1)
    rest = lm.hidden(
        input_ids=batch.input_ids[:, p : p + r - 1],
        attention_mask=batch.attention_mask[:, : p + r - 1],
        position_ids=start + torch.arange(r - 1, device=start.device).unsqueeze(0),
        past_key_values=cache.gathered(inverse),
        use_cache=True,
    )
    return torch.cat([first, rest], dim=1)
