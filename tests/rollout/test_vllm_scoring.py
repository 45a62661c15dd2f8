"""The vLLM scorer's own work, without vLLM: validation, de-duplication, the requests it makes
through the engine's public ``prompt_logprobs`` and the sums it returns, against an engine
whose prompt log-probs are a transformers model's (the real engine: tests/rollout/
test_vllm_engine.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
import torch

from verirl.models import tiny_model
from verirl.rollout.scoring import ReferenceScorer, SequenceScorer
from verirl.rollout.vllm_scoring import PromptLogprobs, VLLMScorer

V = 200


class TeacherForcedEngine:
    """``prompt_logprobs`` by one unpadded forward per sequence; records every call."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model = model
        self.calls: list[tuple[list[tuple[int, ...]], list[int]]] = []

    @property
    def vocab_size(self) -> int:
        return V

    def prompt_logprobs(
        self, sequences: Sequence[Sequence[int]], starts: Sequence[int]
    ) -> PromptLogprobs:
        self.calls.append(([tuple(s) for s in sequences], list(starts)))
        out = []
        with torch.no_grad():
            for seq, first in zip(sequences, starts, strict=True):
                logp = self.model(torch.tensor([list(seq)])).logits[0].log_softmax(-1)
                out.append([float(logp[t - 1, seq[t]]) for t in range(first, len(seq))])
        return PromptLogprobs(out, tokens_run=sum(len(s) for s in sequences), passes=1)


def test_scores_are_the_continuations_summed_log_probs_each_unique_pair_asked_once() -> None:
    model = tiny_model(V, seed=5)
    engine = TeacherForcedEngine(model)
    scorer = VLLMScorer(engine)
    assert isinstance(scorer, SequenceScorer)
    b, a = ([5, 6, 7, 9, 9], [4]), ([5, 6, 7, 8], [3, 1])
    pairs = [b, a, ([5, 6, 7, 8], []), a, ([5, 6, 7, 9, 9], [2, 2, 2])]
    got = scorer.score(pairs)
    assert got == pytest.approx(ReferenceScorer(model, pad_id=0).score(pairs), abs=1e-5)
    assert got[2] == 0.0 and got[1] == got[3] and all(math.isfinite(v) for v in got)
    # one request per distinct non-empty pair, sorted so that a context's pairs are adjacent,
    # each starting at its continuation
    assert engine.calls == [
        (
            [(5, 6, 7, 8, 3, 1), (5, 6, 7, 9, 9, 2, 2, 2), (5, 6, 7, 9, 9, 4)],
            [4, 5, 5],
        )
    ]
    m = scorer.metrics()
    assert (m["scoring/pairs"], m["scoring/unique_pairs"], m["scoring/contexts"]) == (5, 4, 2)
    assert m["scoring/tokens_forwarded"] == 6 + 8 + 6 and m["scoring/forward_calls"] == 1
    assert scorer.score([([5], [])]) == [0.0] and len(engine.calls) == 1  # no request


def test_bad_pairs_are_refused_before_any_request() -> None:
    engine = TeacherForcedEngine(tiny_model(V, seed=5))
    scorer = VLLMScorer(engine)
    with pytest.raises(ValueError, match=r"pair 1: continuation token id 200 is outside"):
        scorer.score([([1], [2]), ([1], [V])])
    with pytest.raises(ValueError, match=r"pair 0: the context is empty"):
        scorer.score([([], [2])])
    assert engine.calls == []
