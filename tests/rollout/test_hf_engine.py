"""The transformers engine: log-probs, shared prompt prefixes, stopping."""

from __future__ import annotations

import pytest
import torch

from verirl.models import tiny_model
from verirl.rollout.hf import HFEngine, _sample
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
    eng._generate_chunk = HFEngine._generate_chunk.__get__(eng)  # real loop, scripted model
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


def test_invalid_sampling_is_rejected(engine: HFEngine) -> None:
    with pytest.raises(ValueError, match="top_p"):
        engine.generate([[1, 2]], SamplingParams(top_p=0.0))
    with pytest.raises(ValueError, match="n must be"):
        engine.generate([[1, 2]], SamplingParams(n=0))
