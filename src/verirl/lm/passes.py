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

MASKED_ATTENTION_COST = 4e-5
"""What a shared prompt costs each response in attention, in token positions of decoder work
per (response position × attended position). The responses then attend to the prompt's keys
through an explicit mask, which torch's CPU attention runs about 1.7× slower than a causal
pass over the whole row (Qwen2.5-0.5B's heads, 100 + 4,096 positions, forward and backward:
1.84 s against 1.09 s a layer, about 700 positions of the layer's other work; this project's
2-core EPYC). Negligible for short responses, it outgrows the prompt saved at a few thousand
response tokens."""


def prefix_sharing_pays(batch: Batch) -> bool:
    """Whether encoding each distinct prompt once saves more than the masked attention costs:
    (N − distinct prompts) × prompt width positions saved, against
    N × :data:`MASKED_ATTENTION_COST` × R × (prompt width + R). A GRPO group of 6 short
    answers shares; 2 samples of 4,096 tokens after a 100-token prompt do not (1,375 positions
    of attention against 100 of prompt)."""
    p, r, n = batch.prompt_width, batch.response_mask.shape[1], len(batch)
    saved = (n - batch.distinct_prompts()[0].shape[0]) * p
    return saved > n * MASKED_ATTENTION_COST * r * (p + r)


def response_hidden(lm: CausalLM, batch: Batch, share_prompt_prefix: bool) -> torch.Tensor:
    """``[N, R, H]``: the hidden state from which each response token is predicted; with
    ``share_prompt_prefix``, each distinct prompt encoded once where that pays
    (:func:`prefix_sharing_pays`)."""
    if share_prompt_prefix and prefix_sharing_pays(batch):
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
    u_ids, u_mask, inverse = batch.distinct_prompts()
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
