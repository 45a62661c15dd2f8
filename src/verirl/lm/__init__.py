"""A causal LM's forward passes, with memory under control: the decoder and the output head
apart (:mod:`~verirl.lm.causal`), per-token log-probs and entropies from hidden states a chunk
at a time (:mod:`~verirl.lm.head`), caches that replay (:mod:`~verirl.lm.cache`), activation
checkpointing (:mod:`~verirl.lm.checkpointing`) and the learner's passes over a batch
(:mod:`~verirl.lm.passes`)."""

from verirl.lm.causal import CausalLM
from verirl.lm.head import TokenLogProbs, auto_chunk_tokens, head_logprobs

__all__ = ["CausalLM", "TokenLogProbs", "auto_chunk_tokens", "head_logprobs"]
