"""Sequence scorers: the prefix-cache scorer equals full re-encoding and by-hand sums."""

from __future__ import annotations

import math
import random

import pytest
import torch

from verirl.models import tiny_model
from verirl.rollout.scoring import (
    PrefixCacheScorer,
    ReferenceScorer,
    SequenceScorer,
    score_grid,
    score_grids,
)

V = 300


@pytest.fixture(scope="module")
def model() -> torch.nn.Module:
    return tiny_model(V, seed=3)


def _brute(model: torch.nn.Module, ctx: list[int], cont: list[int]) -> float:
    """Σ_t log softmax(logits of one unpadded forward)[cont_t]: the definition, by hand."""
    with torch.no_grad():
        logp = model(torch.tensor([ctx + cont])).logits[0].log_softmax(-1)
    return sum(float(logp[len(ctx) - 1 + t, tok]) for t, tok in enumerate(cont))


def _random_pairs(seed: int) -> list[tuple[list[int], list[int]]]:
    """Contexts sharing a prompt (as in CER), with different solution lengths, one context
    that is a prefix of another, a one-token context, continuations of length 0..6 and
    duplicated pairs."""
    rng = random.Random(seed)
    prompt = [rng.randrange(V) for _ in range(rng.randint(3, 9))]
    contexts = [prompt + [rng.randrange(V) for _ in range(rng.randint(1, 15))] for _ in range(4)]
    contexts.append(contexts[0][: len(prompt) + 1])  # a prefix of another context
    contexts.append([rng.randrange(V)])  # shares nothing, one token
    conts = [[rng.randrange(V) for _ in range(n)] for n in (0, 1, 1, 2, 4, 6)]
    pairs = [(c, x) for c in contexts for x in conts]
    pairs += [pairs[3], pairs[7], pairs[3]]  # duplicates
    rng.shuffle(pairs)
    return pairs


def test_scorers_keep_the_protocols_contract(model: torch.nn.Module) -> None:
    """One float per pair, 0.0 for an empty continuation, and metrics of the last call."""
    pairs = [((1, 2, 3), (4, 5)), ((1, 2, 3), ()), ((6,), (7,))]
    for scorer in (PrefixCacheScorer(model, pad_id=0), ReferenceScorer(model, pad_id=0)):
        assert isinstance(scorer, SequenceScorer)
        out = scorer.score(pairs)
        assert len(out) == 3 and all(isinstance(v, float) for v in out)
        assert out[1] == 0.0 and out[0] < 0.0 and out[2] < 0.0
        assert scorer.metrics()  # describes the call just made


def test_uniform_model_gives_minus_n_log_v() -> None:
    # all weights 0 → logits 0 → every token has probability 1/V, so a continuation of n
    # tokens scores n · log(1/V) = −n · ln 300 = −n · 5.703782…
    zero = tiny_model(V, seed=0)
    with torch.no_grad():
        for p in zero.parameters():
            p.zero_()
    pairs = [([1, 2, 3], [4]), ([1, 2], [5, 6, 7]), ([9], [])]
    expected = [-math.log(V), -3 * math.log(V), 0.0]
    for scorer in (PrefixCacheScorer(zero, pad_id=0), ReferenceScorer(zero, pad_id=0)):
        assert scorer.score(pairs) == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_equals_reference_equals_brute_force(model: torch.nn.Module, seed: int) -> None:
    pairs = _random_pairs(seed)
    fast = PrefixCacheScorer(model, pad_id=0).score(pairs)
    ref = ReferenceScorer(model, pad_id=0).score(pairs)
    brute = [_brute(model, list(c), list(x)) for c, x in pairs]
    assert fast == pytest.approx(ref, abs=1e-4)
    assert ref == pytest.approx(brute, abs=1e-4)
    assert all(math.isfinite(v) and v <= 0 for v in fast)


@pytest.mark.parametrize(
    ("rows", "tokens", "chunk", "shared", "spread"),
    [
        (1, 10_000, 32, 8, 1.5),
        (3, 40, 2, 8, 1.5),
        (64, 16384, 1, 1, 1.0),
        (2, 1, 32, 8, 1.5),
        (64, 16384, 32, 1000, 100.0),  # no shared-prefix families, unbounded padding
    ],
)
def test_batch_limits_do_not_change_scores(
    model: torch.nn.Module, rows: int, tokens: int, chunk: int, shared: int, spread: float
) -> None:
    pairs = _random_pairs(7)
    expected = ReferenceScorer(model, pad_id=0).score(pairs)
    fast = PrefixCacheScorer(
        model,
        pad_id=0,
        max_batch_rows=rows,
        max_batch_tokens=tokens,
        max_contexts_per_chunk=chunk,
        min_shared_prefix=shared,
        max_length_spread=spread,
    )
    ref = ReferenceScorer(model, pad_id=0, max_batch_rows=rows, max_batch_tokens=tokens)
    assert fast.score(pairs) == pytest.approx(expected, abs=1e-4)
    assert ref.score(pairs) == pytest.approx(expected, abs=1e-4)


def test_pad_id_does_not_matter(model: torch.nn.Module) -> None:
    pairs = _random_pairs(4)
    a = PrefixCacheScorer(model, pad_id=0).score(pairs)
    b = PrefixCacheScorer(model, pad_id=V - 1).score(pairs)
    c = ReferenceScorer(model, pad_id=17).score(pairs)
    assert a == pytest.approx(b, abs=1e-5)
    assert a == pytest.approx(c, abs=1e-4)


def test_duplicates_are_scored_once_and_get_the_same_value(model: torch.nn.Module) -> None:
    ctx, cont = [5, 6, 7, 8], [9, 10]
    pairs = [(ctx, cont), (ctx, [11]), (tuple(ctx), tuple(cont)), (ctx, cont)]
    scorer = PrefixCacheScorer(model, pad_id=0)
    out = scorer.score(pairs)
    assert out[0] == out[2] == out[3]
    m = scorer.metrics()
    assert m["scoring/pairs"] == 4 and m["scoring/unique_pairs"] == 2
    assert m["scoring/contexts"] == 1
    assert m["scoring/dedup_ratio"] == pytest.approx(0.5)


def test_prefix_cache_forwards_fewer_tokens(model: torch.nn.Module) -> None:
    rng = random.Random(0)
    prompt = [rng.randrange(V) for _ in range(40)]
    contexts = [prompt + [rng.randrange(V) for _ in range(30)] for _ in range(4)]
    answers = [[rng.randrange(V) for _ in range(3)] for _ in range(5)]
    pairs = [(c, a) for c in contexts for a in answers]
    fast, ref = PrefixCacheScorer(model, pad_id=0), ReferenceScorer(model, pad_id=0)
    assert fast.score(pairs) == pytest.approx(ref.score(pairs), abs=1e-4)
    # reference: 20 rows × 73 tokens; fast: prompt once (40) + 4 solutions (4 × 30) +
    # 20 answer rows of 2 fed tokens (the first answer token comes from the context logits)
    assert ref.metrics()["scoring/tokens_forwarded"] == 20 * 73
    assert fast.metrics()["scoring/tokens_forwarded"] == 40 + 4 * 30 + 20 * 2
    assert fast.metrics()["scoring/token_saving"] == pytest.approx(20 * 73 / 200)
    assert fast.metrics()["scoring/padding_tokens"] == 0  # equal lengths: nothing padded


def test_score_grid_masks_and_fills(model: torch.nn.Module) -> None:
    contexts = [[1, 2, 3], [1, 2, 4, 5]]
    conts = [[7], [8, 9], []]
    mask = torch.tensor([[True, False, True], [True, True, False]])
    grid = score_grid(PrefixCacheScorer(model, pad_id=0), contexts, conts, mask)
    assert grid.shape == (2, 3) and grid.dtype == torch.float64
    assert grid[0, 1] == -math.inf and grid[1, 2] == -math.inf
    assert grid[0, 2] == 0.0  # empty continuation: log 1
    assert float(grid[1, 1]) == pytest.approx(_brute(model, [1, 2, 4, 5], [8, 9]), abs=1e-4)
    grids = score_grids(
        ReferenceScorer(model, pad_id=0), [(contexts, conts, mask), ([[3]], [[4]], None)]
    )
    assert torch.allclose(grids[0], grid, atol=1e-4)  # -inf cells compare equal
    assert float(grids[1][0, 0]) == pytest.approx(_brute(model, [3], [4]), abs=1e-4)
    with pytest.raises(ValueError, match="mask has shape"):
        score_grid(PrefixCacheScorer(model, pad_id=0), contexts, conts, mask[:, :2])


def test_bad_input_is_refused_with_a_clear_error(model: torch.nn.Module) -> None:
    scorer = PrefixCacheScorer(model, pad_id=0)
    with pytest.raises(ValueError, match="pair 1: the context is empty"):
        scorer.score([([1], [2]), ([], [3])])
    with pytest.raises(ValueError, match=r"pair 0: continuation token id 300 is outside"):
        scorer.score([([1], [V])])
    with pytest.raises(ValueError, match="max_batch_rows"):
        ReferenceScorer(model, pad_id=0, max_batch_rows=0)
    with pytest.raises(ValueError, match="max_length_spread"):
        PrefixCacheScorer(model, pad_id=0, max_length_spread=0.5)


def test_training_mode_is_restored_and_no_graph_is_built(model: torch.nn.Module) -> None:
    """Every forward runs in eval mode (no dropout) with autograd off, and the caller's
    training mode comes back."""
    seen: list[tuple[bool, bool]] = []
    hooks = [
        m.register_forward_hook(lambda m, a, o: seen.append((m.training, torch.is_grad_enabled())))
        for m in model.modules()
    ]
    model.train()
    try:
        PrefixCacheScorer(model, pad_id=0).score([([1, 2], [3, 4])])
        assert model.training
    finally:
        model.eval()
        for h in hooks:
            h.remove()
    assert seen and set(seen) == {(False, False)}


def test_bf16_autocast_is_close(model: torch.nn.Module) -> None:
    pairs = _random_pairs(5)
    exact = ReferenceScorer(model, pad_id=0).score(pairs)
    low = PrefixCacheScorer(model, pad_id=0, autocast_dtype=torch.bfloat16).score(pairs)
    assert all(math.isfinite(v) for v in low)
    assert low == pytest.approx(exact, abs=0.15)
    assert low != exact  # the forwards did run in bf16 (verirl.device.autocast)


def test_sliding_window_models_are_scored_only_inside_the_window() -> None:
    from transformers import MistralConfig, MistralForCausalLM

    cfg = MistralConfig(
        vocab_size=V,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=4,
        num_key_value_heads=2,
        sliding_window=16,
    )
    torch.manual_seed(0)
    mistral = MistralForCausalLM(cfg).eval()
    short = [([1, 2, 3, 4], [5, 6]), ([1, 2, 3, 7, 8], [5]), ([1, 2, 3, 4], [9, 9, 9])]
    fast = PrefixCacheScorer(mistral, pad_id=0, min_shared_prefix=1)
    assert fast.score(short) == pytest.approx(
        [_brute(mistral, list(c), list(x)) for c, x in short], abs=1e-4
    )
    long = [(list(range(1, 15)), [5, 6, 7])]  # 17 tokens > window 16
    with pytest.raises(NotImplementedError, match="sliding attention window"):
        fast.score(long)
    assert ReferenceScorer(mistral, pad_id=0).score(long) == pytest.approx(
        [_brute(mistral, *long[0])], abs=1e-4
    )
