"""A :class:`~verirl.rollout.scoring.SequenceScorer` on the vLLM engine, for CER.

Each distinct (context, continuation) pair becomes one vLLM request over ``context ⊕
continuation`` with ``prompt_logprobs=0`` and ``max_tokens=1``: vLLM returns the log-prob of
every prompt token given the tokens before it, and the continuation's positions are summed.
Automatic prefix caching lets the requests that share a context (the K + 1 answers scored
after one solution, the G solutions after one prompt) reuse its key/value blocks: the
requests are sent with ``skip_reading_prefix_cache=False`` (vLLM skips the cache for
prompt-log-prob requests by default, since cached positions get no log-probs) and only the
continuation's log-probs are read. A pair whose continuation was itself partly served from
the cache is rescored without the cache.

The weights are the engine's: the learner's latest after each ``sync_weights``, which the
training loop calls after every update, so scores are those of the current policy.
"""

from __future__ import annotations

from typing import Any

from verirl.rollout.scoring import _TransformersScorer


class VLLMScorer(_TransformersScorer):
    """Scores continuations with vLLM's prompt log-probs (see the module docstring)."""

    def __init__(self, engine: Any) -> None:
        super().__init__(engine.model, pad_id=0)
        self.engine = engine

    def _score_unique(self, pairs: list[tuple[tuple[int, ...], tuple[int, ...]]]) -> list[float]:
        self.engine._sync_if_stale()
        order = sorted(range(len(pairs)), key=lambda i: pairs[i])  # shared contexts together
        values = [0.0] * len(pairs)
        retry = self._run([pairs[i] for i in order], order, values, use_cache=True)
        if retry:
            self._run([pairs[i] for i in retry], retry, values, use_cache=False)
        return values

    def _run(
        self,
        batch: list[tuple[tuple[int, ...], tuple[int, ...]]],
        where: list[int],
        values: list[float],
        use_cache: bool,
    ) -> list[int]:
        vllm = self.engine.vllm
        sp = vllm.SamplingParams(
            max_tokens=1,
            temperature=1.0,
            prompt_logprobs=0,
            skip_reading_prefix_cache=not use_cache,
        )
        inputs = [{"prompt_token_ids": list(c) + list(x)} for c, x in batch]
        outs = self.engine.llm.generate(inputs, sp, use_tqdm=False)
        self.stats.forward_calls += 1
        retry = []
        for (ctx, cont), i, out in zip(batch, where, outs, strict=True):
            cached = int(getattr(out, "num_cached_tokens", 0) or 0)
            self.stats.tokens_forwarded += len(ctx) + len(cont) - cached
            entries = out.prompt_logprobs or []
            positions = range(len(ctx), len(ctx) + len(cont))
            if cached > len(ctx) or any(
                p >= len(entries) or entries[p] is None or tok not in entries[p]
                for p, tok in zip(positions, cont, strict=True)
            ):
                retry.append(i)
                continue
            values[i] = float(
                sum(entries[p][tok].logprob for p, tok in zip(positions, cont, strict=True))
            )
        return retry
