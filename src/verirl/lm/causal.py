"""A causal LM seen as its two halves: the decoder (tokens → final hidden states) and the
output head (hidden states → logits).

Every log-prob verirl takes — the learner's policy pass, π_old, the reference model, the CER
and VeriFree scorers — runs the decoder, then :func:`verirl.lm.head.head_logprobs` on the
positions it needs, so no ``[N, R, V]`` logits tensor is ever built. This works for any
Hugging Face ``*ForCausalLM`` whose ``forward`` is ``lm_head(decoder(...).last_hidden_state)``
(Llama, Qwen2/3, Mistral, SmolLM, Phi-3, ...), optionally followed by a final logit
soft-cap (Gemma 2/3), and for a PEFT wrapper of one (the adapters live inside the decoder's
and head's modules, so they apply; ``disable_adapter()`` too).
"""

from __future__ import annotations

from typing import Any, cast

import torch


class SoftCappedHead(torch.nn.Module):
    """``cap · tanh(lm_head(h) / cap)``: Gemma 2/3's ``final_logit_softcapping``."""

    def __init__(self, lm_head: torch.nn.Module, cap: float) -> None:
        super().__init__()
        self.lm_head = lm_head
        self.cap = float(cap)

    @property
    def weight(self) -> torch.Tensor:
        return cast(torch.Tensor, self.lm_head.weight)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        logits = cast(torch.Tensor, self.lm_head(hidden))
        return torch.tanh(logits / self.cap) * self.cap


class CausalLM:
    """``decoder`` and ``head`` of ``model`` (a transformers causal LM or a PEFT wrapper).

    - :meth:`hidden` runs the decoder with the keyword arguments a causal LM takes
      (``input_ids``, ``attention_mask``, ``position_ids``, ``past_key_values``,
      ``use_cache``) and returns the final hidden states ``[B, S, H]``;
    - :attr:`head` maps hidden states to logits (the model's own ``lm_head`` module, tied or
      not, soft-capped where the model soft-caps).
    """

    def __init__(self, model: torch.nn.Module) -> None:
        base = _base_model(model)
        get_decoder = getattr(base, "get_decoder", None)
        decoder = get_decoder() if callable(get_decoder) else None
        get_head = getattr(base, "get_output_embeddings", None)
        lm_head = get_head() if callable(get_head) else None
        if not isinstance(decoder, torch.nn.Module) or not isinstance(lm_head, torch.nn.Module):
            raise TypeError(
                f"{type(base).__name__} is not a causal LM with a decoder and an output head "
                "(get_decoder() / get_output_embeddings()); verirl trains *ForCausalLM models"
            )
        self.model = model
        self.decoder: torch.nn.Module = decoder
        config: Any = getattr(base, "config", None)
        text = config.get_text_config() if hasattr(config, "get_text_config") else config
        cap = getattr(text, "final_logit_softcapping", None)
        self.head: torch.nn.Module = SoftCappedHead(lm_head, cap) if cap else lm_head
        weight = getattr(lm_head, "weight", None)
        self.vocab_size = int(weight.shape[0]) if isinstance(weight, torch.Tensor) else 0

    def hidden(self, **kwargs: Any) -> torch.Tensor:
        """Final hidden states ``[B, S, H]`` (after the last norm) of one decoder pass."""
        kwargs.pop("logits_to_keep", None)
        return cast(torch.Tensor, self.decoder(**kwargs).last_hidden_state)


def _base_model(model: torch.nn.Module) -> torch.nn.Module:
    """The transformers model inside a PEFT wrapper (the model itself otherwise)."""
    get_base = getattr(model, "get_base_model", None)
    if hasattr(model, "peft_config") and callable(get_base):
        return cast(torch.nn.Module, get_base())
    return model
