"""A :class:`~verirl.rollout.scoring.SequenceScorer` on the vLLM engine, for CER.

The scorer validates and de-duplicates the pairs (:func:`~verirl.rollout.scoring.dedup_pairs`,
as the transformers scorers do), sorts them so that pairs sharing a context are sent together,
and asks the engine for the log-probs of each continuation's tokens through its public
:meth:`~verirl.rollout.vllm_engine.VLLMEngine.prompt_logprobs`: one vLLM request over
``context ⊕ continuation`` with ``prompt_logprobs=0`` and ``max_tokens=1`` per pair, vLLM's
automatic prefix caching sharing the key/value blocks of the common contexts (the K + 1
answers scored after one solution, the G solutions after one prompt). A pair's score is the
sum of its continuation's log-probs; an empty continuation scores 0.0 without a request.

The weights are the engine's: the learner's latest after each ``sync_weights`` (which the
training loop calls after every update; the engine also loads whatever changed since its last
sync before scoring), LoRA adapter included, so scores are those of the current policy.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from verirl.rollout.scoring import Pair, ScoringStats, dedup_pairs


@dataclass(frozen=True)
class PromptLogprobs:
    """What :meth:`ScoresPrompts.prompt_logprobs` returns: ``logprobs[i][j]`` is
    log π(seq_i[starts_i + j] | seq_i[: starts_i + j]); ``tokens_run`` counts the positions
    the model computed (those served from the prefix cache excluded); ``passes`` the batched
    requests sent."""

    logprobs: list[list[float]]
    tokens_run: int
    passes: int


class ScoresPrompts(Protocol):
    """The engine API the scorer uses (:class:`~verirl.rollout.vllm_engine.VLLMEngine`)."""

    @property
    def vocab_size(self) -> int: ...

    def prompt_logprobs(
        self, sequences: Sequence[Sequence[int]], starts: Sequence[int]
    ) -> PromptLogprobs: ...


class VLLMScorer:
    """Scores continuations with the engine's prompt log-probs (see the module docstring)."""

    def __init__(self, engine: ScoresPrompts) -> None:
        self.engine = engine
        self.stats = ScoringStats()

    def metrics(self) -> dict[str, float]:
        return self.stats.as_metrics()

    def score(self, pairs: Sequence[Pair]) -> list[float]:
        start = time.perf_counter()
        unique, order, self.stats = dedup_pairs(pairs, self.engine.vocab_size)
        values = [0.0] * len(unique)
        todo = sorted((i for i, (_, x) in enumerate(unique) if x), key=lambda i: unique[i])
        if todo:  # sorted: the pairs of one context, and contexts of one prompt, together
            out = self.engine.prompt_logprobs(
                [unique[i][0] + unique[i][1] for i in todo], [len(unique[i][0]) for i in todo]
            )
            for i, logprobs in zip(todo, out.logprobs, strict=True):
                values[i] = float(sum(logprobs))
            self.stats.forward_calls += out.passes
            self.stats.tokens_forwarded += out.tokens_run
        self.stats.seconds = time.perf_counter() - start
        return [values[i] for i in order]


def prompt_logprobs(
    llm: Any, sequences: Sequence[Sequence[int]], starts: Sequence[int], lora_request: Any = None
) -> PromptLogprobs:
    """log π(seq[t] | seq[:t]) for every position ``t >= start`` of each sequence, from a
    ``vllm.LLM`` (with ``lora_request``'s adapter): one request per sequence with
    ``prompt_logprobs=0`` and ``max_tokens=1``, all in one batch. vLLM skips the prefix cache
    for prompt-log-prob requests by default (cached positions get no log-probs); here it is
    read (``skip_reading_prefix_cache=False``), so the sequences that share a prefix share its
    key/value blocks, and a sequence whose scored positions were partly served from the
    cache is rerun without it."""
    if len(sequences) != len(starts):
        raise ValueError(f"{len(sequences)} sequences but {len(starts)} starts")
    for i, (seq, first) in enumerate(zip(sequences, starts, strict=True)):
        if not 1 <= first <= len(seq):
            raise ValueError(f"sequence {i}: start {first} is outside [1, {len(seq)}]")
    values: list[list[float] | None] = [None] * len(sequences)
    everything = list(range(len(sequences)))
    retry, run = _prompt_pass(llm, everything, sequences, starts, values, lora_request, True)
    passes = 1
    if retry:
        missing, rerun = _prompt_pass(llm, retry, sequences, starts, values, lora_request, False)
        passes, run = 2, run + rerun
        if missing:
            raise RuntimeError("vLLM returned no prompt log-probs without the prefix cache")
    return PromptLogprobs([v for v in values if v is not None], run, passes)


def _prompt_pass(
    llm: Any,
    which: list[int],
    sequences: Sequence[Sequence[int]],
    starts: Sequence[int],
    values: list[list[float] | None],
    lora_request: Any,
    use_cache: bool,
) -> tuple[list[int], int]:
    """One batch of prompt-log-prob requests for the sequences ``which``: fills their
    ``values``; returns those to rerun without the cache and the positions computed."""
    from vllm import SamplingParams

    sp = SamplingParams(
        max_tokens=1, temperature=1.0, prompt_logprobs=0, skip_reading_prefix_cache=not use_cache
    )
    inputs = [{"prompt_token_ids": [int(t) for t in sequences[i]]} for i in which]
    outs = llm.generate(inputs, sp, use_tqdm=False, lora_request=lora_request)
    retry, run = [], 0
    for i, out in zip(which, outs, strict=True):
        seq, first = sequences[i], starts[i]
        cached = int(getattr(out, "num_cached_tokens", 0) or 0)
        run += len(seq) - cached
        entries = out.prompt_logprobs or []
        positions = range(first, len(seq))
        if cached > first or any(
            p >= len(entries) or entries[p] is None or int(seq[p]) not in entries[p]
            for p in positions
        ):
            retry.append(i)
            continue
        values[i] = [float(entries[p][int(seq[p])].logprob) for p in positions]
    return retry, run
