"""Key/value caches for the learner's shared-prompt passes that can be replayed.

The learner encodes each distinct prompt once (pass 1), gathers its keys and values to the
rows that continue it, and runs the responses on top (pass 2), with gradients flowing back
through the gather into the one prompt computation. Activation checkpointing replays each
decoder layer's forward during the backward pass; a :class:`~transformers.DynamicCache`
*appends* on every update, so the replay would see a longer cache than the first run and the
recomputed tensors would not match (transformers' own checkpointing therefore drops the cache
altogether). These two caches give the same answer however often a layer calls them:

- :class:`PromptCache` (pass 1, starting empty): an update *stores* the keys and values it is
  given (what appending to an empty cache does) and returns them;
- :class:`ContinuationCache` (pass 2): holds the gathered prompt keys and values; an update
  returns ``prompt ⊕ new`` and stores nothing.
"""

from __future__ import annotations

from typing import Any, cast

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer


class PromptCache(DynamicCache):
    """A cache filled by one forward pass from empty; replaying a layer overwrites its entry
    with the same tensors."""

    def update(
        self,
        key_states: torch.Tensor,
        value_states: torch.Tensor,
        layer_idx: int,
        *args: Any,
        **kwargs: Any,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        while len(self.layers) <= layer_idx:
            self.layers.append(DynamicLayer())
        layer = _layer(self, layer_idx)
        layer.update(key_states[..., :0, :], value_states[..., :0, :])  # initialises it
        layer.keys, layer.values = key_states, value_states
        return key_states, value_states

    def gathered(self, rows: torch.Tensor) -> ContinuationCache:
        """The cache for pass 2: every layer's keys and values indexed by ``rows`` (a
        differentiable gather: gradients of all rows sum into the shared prompt)."""
        kv = [_kv(self, i) for i in range(len(self.layers))]
        return ContinuationCache([(k[rows], v[rows]) for k, v in kv])


class ContinuationCache(DynamicCache):
    """Fixed prompt keys/values; an update returns them with the new ones appended and keeps
    nothing, so a replayed layer sees exactly what the first run saw."""

    def __init__(self, prompt: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        super().__init__(ddp_cache_data=[(k[..., :0, :], v[..., :0, :]) for k, v in prompt])
        for i, (k, v) in enumerate(prompt):
            layer = _layer(self, i)
            layer.keys, layer.values = k, v

    def update(
        self,
        key_states: torch.Tensor,
        value_states: torch.Tensor,
        layer_idx: int,
        *args: Any,
        **kwargs: Any,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        keys, values = _kv(self, layer_idx)
        return torch.cat([keys, key_states], dim=-2), torch.cat([values, value_states], dim=-2)


def _layer(cache: DynamicCache, i: int) -> DynamicLayer:
    """Layer ``i`` of a cache built here: every layer is a full-attention ``DynamicLayer``."""
    return cast(DynamicLayer, cache.layers[i])


def _kv(cache: DynamicCache, i: int) -> tuple[torch.Tensor, torch.Tensor]:
    layer = _layer(cache, i)
    return cast(torch.Tensor, layer.keys), cast(torch.Tensor, layer.values)
