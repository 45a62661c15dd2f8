"""Activation checkpointing of a causal LM's decoder layers, compatible with the learner's
shared prompt prefix.

A checkpointed layer keeps only its input during the forward pass and runs again in the
backward pass to rebuild what its gradient needs (Chen et al. 2016, "Training Deep Nets with
Sublinear Memory Cost", arXiv:1604.06174): activation memory goes from ``layers × (everything
a layer saves)`` to ``layers × hidden + one layer's worth``, for about one more forward pass
of compute. PyTorch's non-reentrant :func:`torch.utils.checkpoint.checkpoint` does the work;
it needs no input to require a gradient, so it works for LoRA (frozen embeddings) as well as
full fine-tuning.

transformers' own ``gradient_checkpointing_enable`` drops the key/value cache of a
checkpointed layer, which the learner's shared-prefix passes need; here the layer keeps its
cache argument and the learner passes caches that replay exactly
(:mod:`verirl.lm.cache`). Layers are wrapped in place (an instance ``forward``), so parameter
names, ``state_dict`` and ``save_pretrained`` are unchanged; checkpointing applies only while
the model is in training mode with gradients enabled (generation and no-grad scoring run the
layers as they are).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch
from torch.utils.checkpoint import checkpoint

from verirl.lm.causal import CausalLM

_MARK = "_verirl_checkpointed"


def decoder_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The repeated blocks of ``model``'s decoder (``decoder.layers``)."""
    decoder = CausalLM(model).decoder
    layers = getattr(decoder, "layers", None)
    if not isinstance(layers, torch.nn.ModuleList) or len(layers) == 0:
        raise TypeError(
            f"{type(decoder).__name__} has no `layers` list of decoder blocks; activation "
            "checkpointing needs one (set optim.activation_checkpointing=false)"
        )
    return list(layers)


def enable_activation_checkpointing(model: torch.nn.Module) -> int:
    """Checkpoint every decoder layer of ``model``; returns how many layers (idempotent)."""
    layers = decoder_layers(model)
    for layer in layers:
        if getattr(layer, _MARK, False):
            continue
        layer.forward = functools.partial(_checkpointed, layer.forward, layer)
        setattr(layer, _MARK, True)
    return len(layers)


def disable_activation_checkpointing(model: torch.nn.Module) -> None:
    """Undo :func:`enable_activation_checkpointing` (the layers' own ``forward`` again)."""
    for layer in decoder_layers(model):
        if getattr(layer, _MARK, False):
            wrapped = layer.forward.args[0]  # type: ignore[attr-defined]
            if getattr(wrapped, "__func__", None) is type(layer).forward:
                del layer.forward
            else:  # an instance forward set by someone else (e.g. accelerate's hooks)
                layer.forward = wrapped
            delattr(layer, _MARK)


def is_checkpointed(model: torch.nn.Module) -> bool:
    return any(getattr(layer, _MARK, False) for layer in decoder_layers(model))


def _checkpointed(
    forward: Callable[..., Any], layer: torch.nn.Module, *args: Any, **kwargs: Any
) -> Any:
    if layer.training and torch.is_grad_enabled():
        return checkpoint(forward, *args, use_reentrant=False, **kwargs)
    return forward(*args, **kwargs)
