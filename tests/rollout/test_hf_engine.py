"""The transformers engine: log-probs, shared prompt prefixes, stopping, continuous batching,
sequences handed out as they finish, partial rollouts across a weight sync."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch

from verirl.models import tiny_model
from verirl.rollout.base import Generation
from verirl.rollout.hf import HFEngine, _sample, inverse_cdf
from verirl.types import SamplingParams


class ByteTokenizer:
    """One token per byte; id 0 is padding, id 1 is EOS."""

    pad_token_id = 0
    eos_token_id = 1

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return bytes(i - 2 for i in ids if i >= 2).decode("latin-1")

    def encode(self, text: str) -> list[int]:
        return [b + 2 for b in text.encode("latin-1")]


@pytest.fixture(scope="module")
def engine() -> HFEngine:
    model = tiny_model(258, seed=3, hidden_size=32)
    model.generation_config.eos_token_id = 1
    return HFEngine(model, ByteTokenizer(), max_batch_sequences=16)


def _teacher_forced(model: torch.nn.Module, prompt: list[int], out: list[int]) -> torch.Tensor:
    ids = torch.tensor([prompt + out])
    with torch.no_grad():
        logp = torch.log_softmax(model(ids).logits[0, :-1].float(), -1)
    return logp[len(prompt) - 1 :].gather(1, torch.tensor(out)[:, None]).squeeze(1)


def test_logprobs_match_a_teacher_forced_pass_with_padding(engine: HFEngine) -> None:
    prompts = [[5, 6, 7], [9, 10, 11, 12, 13, 14, 15], [20]]  # different lengths → left padding
    gens = engine.generate(prompts, SamplingParams(n=3, max_new_tokens=12, seed=1))
    assert [len(g) for g in gens] == [3, 3, 3]
    for prompt, group in zip(prompts, gens, strict=True):
        for g in group:
            ref = _teacher_forced(engine.model, prompt, list(g.token_ids))
            assert torch.allclose(torch.tensor(g.logprobs), ref, atol=1e-4)
            assert len(g.token_ids) == len(g.logprobs) <= 12


def test_same_seed_same_samples_and_greedy_is_deterministic(engine: HFEngine) -> None:
    sp = SamplingParams(n=2, max_new_tokens=8, seed=7)
    a = engine.generate([[3, 4, 5]], sp)
    b = engine.generate([[3, 4, 5]], sp)
    assert [g.token_ids for g in a[0]] == [g.token_ids for g in b[0]]
    greedy = SamplingParams(n=2, max_new_tokens=8, temperature=0.0)
    g1, g2 = engine.generate([[3, 4, 5]], greedy)[0]
    assert g1.token_ids == g2.token_ids


def test_finish_reasons_and_eos(engine: HFEngine) -> None:
    gens = engine.generate([[5, 6]] * 4, SamplingParams(n=4, max_new_tokens=30, seed=0))
    for g in (g for group in gens for g in group):
        if g.finish_reason == "stop":
            assert g.token_ids[-1] == 1
        else:
            assert len(g.token_ids) == 30 and 1 not in g.token_ids


def test_stop_strings_end_generation_and_truncate_text() -> None:
    class Scripted(torch.nn.Module):  # always predicts the next byte of "ab;cd"
        def __init__(self) -> None:
            super().__init__()
            self.generation_config = type("G", (), {"eos_token_id": 1})()
            self.script = [c + 2 for c in b"ab;cdefgh"]

        def forward(self, input_ids, past_key_values=None, attention_mask=None, **kw):  # type: ignore[no-untyped-def]
            step = attention_mask.shape[1] - 2  # prompts are 2 tokens long
            logits = torch.full((input_ids.shape[0], input_ids.shape[1], 258), -1e9)
            logits[:, -1, self.script[min(step, len(self.script) - 1)]] = 0.0
            if past_key_values is not None and not past_key_values.layers:
                pass
            return type("O", (), {"logits": logits})()

    eng = HFEngine(Scripted(), ByteTokenizer())
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("verirl.rollout.hf.DynamicCache", _NullCache)
        g = eng.generate([[5, 6]], SamplingParams(n=1, max_new_tokens=9, stop=(";",)))[0][0]
    assert g.text == "ab;" and g.finish_reason == "stop"


class _NullCache:
    layers: tuple[object, ...] = ()

    def batch_repeat_interleave(self, n: int) -> None: ...
    def batch_select_indices(self, idx: torch.Tensor) -> None: ...


def test_top_p_only_draws_from_the_nucleus() -> None:
    logits = torch.log(torch.tensor([[0.5, 0.3, 0.15, 0.05]]))
    gen = torch.Generator().manual_seed(0)
    draws = {int(_sample(logits, 1.0, 0.7, gen)[0]) for _ in range(300)}
    assert draws == {0, 1}  # 0.5 + 0.3 ≥ 0.7: tokens 2 and 3 are outside the nucleus
    token, logp = _sample(logits, 1.0, 0.7, gen)
    assert float(logp) == pytest.approx(float(torch.log_softmax(logits, -1)[0, token]))


def test_inverse_cdf_draws_by_hand_and_at_the_right_rates() -> None:
    # cumulative mass 0.1, 0.1, 0.7, 1.0 (token 1 has none): u = 0.05 -> 0, 0.1 -> 2 (the
    # first mass past 0.1), 0.69 -> 2, 0.71 -> 3, 0.999 -> 3; a row of total 2 scales u:
    # 0.11 · 2 = 0.22 is past token 0's 0.2
    probs = torch.tensor([[0.1, 0.0, 0.6, 0.3]] * 5 + [[0.2, 0.0, 1.2, 0.6]])
    u = torch.tensor([[0.05], [0.1], [0.69], [0.71], [0.999], [0.11]])
    assert inverse_cdf(probs, u).tolist() == [0, 2, 2, 3, 3, 2]
    gen = torch.Generator().manual_seed(0)
    logits = torch.log(torch.tensor([[0.1, 0.0, 0.6, 0.3]])).expand(20_000, 4)
    tokens, _ = _sample(logits, 1.0, 1.0, gen)
    rates = torch.bincount(tokens, minlength=4).float() / 20_000
    assert rates[1] == 0 and torch.allclose(rates, torch.tensor([0.1, 0.0, 0.6, 0.3]), atol=0.015)


def test_invalid_sampling_is_rejected(engine: HFEngine) -> None:
    with pytest.raises(ValueError, match="top_p"):
        engine.generate([[1, 2]], SamplingParams(top_p=0.0))
    with pytest.raises(ValueError, match="n must be"):
        engine.generate([[1, 2]], SamplingParams(n=0))


# ---- continuous batching, streaming, partial rollouts ----------------------------------------
PROMPTS = [[5, 6, 7], [9, 10, 11, 12, 13, 14, 15], [20], [30, 31], [40, 41, 42, 43], [50]]


def _eos_model(seed: int = 3) -> torch.nn.Module:
    """A tiny model whose EOS (id 1) is likely enough that responses end at mixed lengths."""
    model = tiny_model(258, seed=seed, hidden_size=32)

    def likelier_eos(module: torch.nn.Module, args: object, out: Any) -> None:
        out.logits[..., 1] += 3.5  # p(EOS) ≈ 1/9 per token

    model.register_forward_hook(likelier_eos)
    model.generation_config.eos_token_id = 1
    return model


def _tokens(gens: list[list[Generation]]) -> list[list[tuple[int, ...]]]:
    return [[g.token_ids for g in group] for group in gens]


def test_without_a_refill_continuous_batching_samples_what_chunks_sample() -> None:
    model = _eos_model()
    sp = SamplingParams(n=2, max_new_tokens=20, seed=5)
    cb = HFEngine(model, ByteTokenizer(), max_batch_sequences=16, continuous_batching=True)
    chunked = HFEngine(model, ByteTokenizer(), max_batch_sequences=16, continuous_batching=False)
    a, b = cb.generate(PROMPTS, sp), chunked.generate(PROMPTS, sp)  # 12 rows fit: no refill
    assert _tokens(a) == _tokens(b)
    assert [[g.logprobs for g in x] for x in a] == [[g.logprobs for g in x] for x in b]
    assert cb.metrics()["joined_prompts"] == 0


def test_refilled_slots_sample_from_the_right_context() -> None:
    """Prompts join a running batch (4 rows, n = 2): every sequence's log-probs still equal a
    teacher-forced pass over its own prompt and tokens, so the joined cache rows, their left
    padding and positions are right; lengths are mixed and every sequence is reported once."""
    model = _eos_model()
    engine = HFEngine(model, ByteTokenizer(), max_batch_sequences=4, continuous_batching=True)
    seen: list[tuple[int, int, Generation]] = []
    gens = engine.generate(
        PROMPTS,
        SamplingParams(n=2, max_new_tokens=16, seed=2),
        on_finish=lambda p, j, g: seen.append((p, j, g)),
    )
    assert engine.metrics()["joined_prompts"] >= 1
    lengths = {len(g.token_ids) for group in gens for g in group}
    assert len(lengths) > 2  # mixed response lengths
    for prompt, group in zip(PROMPTS, gens, strict=True):
        assert len(group) == 2
        for g in group:
            ref = _teacher_forced(model, prompt, list(g.token_ids))
            assert torch.allclose(torch.tensor(g.logprobs), ref, atol=1e-4)
    assert sorted((p, j) for p, j, _ in seen) == [(p, j) for p in range(6) for j in range(2)]
    assert all(gens[p][j] is g for p, j, g in seen)


def test_finished_sequences_are_handed_out_while_others_decode() -> None:
    model = _eos_model()
    forwards = [0]
    model.register_forward_hook(lambda *_: forwards.__setitem__(0, forwards[0] + 1))
    engine = HFEngine(model, ByteTokenizer(), max_batch_sequences=12)
    at_finish: list[int] = []
    engine.generate(
        PROMPTS,
        SamplingParams(n=2, max_new_tokens=24, seed=2),
        on_finish=lambda p, j, g: at_finish.append(forwards[0]),
    )
    assert len(at_finish) == 12
    assert min(at_finish) < forwards[0]  # the first was handed out before the last forward


def test_a_weight_sync_mid_generation_continues_the_sequences_under_new_weights() -> None:
    """Partial rollouts: after step 3 the weights change under the engine; the running
    sequences continue, tokens before the sync keep the old policy's log-probs, tokens after
    carry the new policy's."""
    model = _eos_model()
    old = copy.deepcopy(model)
    engine = HFEngine(model, ByteTokenizer(), max_batch_sequences=8)
    steps = [0]

    def between_steps() -> bool:
        steps[0] += 1
        if steps[0] != 3:
            return False
        with torch.no_grad():
            for p in model.parameters():
                p.add_(0.05 * torch.randn_like(p))
        return True

    sp = SamplingParams(n=2, max_new_tokens=10, seed=4)
    gens = engine.generate(PROMPTS[:3], sp, between_steps=between_steps)
    assert engine.metrics()["partial_sequences"] > 0
    crossed = 0
    for prompt, group in zip(PROMPTS[:3], gens, strict=True):
        for g in group:
            before = _teacher_forced(old, prompt, list(g.token_ids))
            after = _teacher_forced(model, prompt, list(g.token_ids))
            k = min(3, len(g.token_ids))
            assert torch.allclose(torch.tensor(g.logprobs[:k]), before[:k], atol=1e-4)
            if len(g.token_ids) > 3:
                crossed += 1
                assert torch.allclose(torch.tensor(g.logprobs[3:]), after[3:], atol=1e-4)
                assert not torch.allclose(before[3:], after[3:], atol=1e-3)
    assert crossed > 0
