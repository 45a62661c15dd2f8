"""The learner's log-probs (decoder → chunked head) equal the path before this change
(``model(...).logits`` for every response position, float32, / T, target − logsumexp) —
values and gradients — on random models of several shapes: tied and untied embeddings, LoRA,
temperature ≠ 1, the shared prompt prefix on and off, bf16 autocast; and activation
checkpointing leaves the gradients unchanged."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM

from tests.lm.test_head import assert_close
from verirl.config import load_config
from verirl.device import Placement
from verirl.lm.checkpointing import (
    disable_activation_checkpointing,
    enable_activation_checkpointing,
    is_checkpointed,
)
from verirl.lm.head import token_logprobs_from_logits
from verirl.models import LoraSettings, apply_lora
from verirl.train.learner import Learner, LearnerSettings, collate
from verirl.types import Batch, Problem, Rollout, Verdict

VOCAB = 257
PROBLEM = Problem("addition", 0, 0, "x", "1")


def _llama(tied: bool, seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=48,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        tie_word_embeddings=tied,
    )
    return LlamaForCausalLM(cfg)


def _qwen2(seed: int = 0) -> torch.nn.Module:
    """Qwen2's shape in small: untied head, biases on q/k/v."""
    torch.manual_seed(seed)
    cfg = Qwen2Config(
        vocab_size=VOCAB,
        hidden_size=48,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=6,
        num_key_value_heads=2,
        max_position_embeddings=256,
        tie_word_embeddings=False,
    )
    return Qwen2ForCausalLM(cfg)


def _lora(seed: int = 0) -> torch.nn.Module:
    model = apply_lora(_llama(True, seed), LoraSettings(r=4, alpha=8))
    with torch.no_grad():  # LoRA's B starts at zero: give the adapter something to do
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.05)
    return model


MODELS: dict[str, Callable[[], torch.nn.Module]] = {
    "llama-tied": lambda: _llama(True),
    "llama-untied": lambda: _llama(False),
    "qwen2": _qwen2,
    "lora": _lora,
}


def _batch(seed: int = 0) -> Batch:
    """Four groups of three (prompt lengths 5, 9, 5, 12; responses of 1 to 10 tokens), one
    token in the middle of a response masked out (as tool output is in an agent episode)."""
    g = torch.Generator().manual_seed(seed)
    rollouts = []
    for group, plen in enumerate([5, 9, 5, 12]):
        prompt = tuple(torch.randint(3, VOCAB, (plen,), generator=g).tolist())
        for k in range(3):
            n = 1 + 3 * k + group % 2
            resp = tuple(torch.randint(3, VOCAB, (n,), generator=g).tolist())
            mask = tuple(0 if (k == 2 and t == 2) else 1 for t in range(n))
            rollouts.append(
                Rollout(
                    PROBLEM,
                    group,
                    prompt,
                    resp,
                    (0.0,) * n,
                    "t",
                    "stop",
                    loss_mask=mask,
                    verdict=Verdict(float(k), False),
                )
            )
    return collate(rollouts, torch.randn(12, 10, generator=g), pad_id=0)


def _reference_logprobs(
    model: torch.nn.Module, batch: Batch, t: float, share: bool = False
) -> torch.Tensor:
    """The learner's path before this change: every response position's logits, from one
    pass over prompt ⊕ response or (``share``) from a DynamicCache of each distinct prompt."""
    p, r = batch.prompt_width, batch.response_mask.shape[1]
    if not share:
        logits = model(
            input_ids=batch.input_ids,
            attention_mask=batch.attention_mask,
            position_ids=(batch.attention_mask.cumsum(1) - 1).clamp(min=0),
            logits_to_keep=torch.arange(p - 1, p + r - 1),
            use_cache=False,
        ).logits
    else:
        key = torch.cat([batch.input_ids[:, :p], batch.attention_mask[:, :p]], dim=1)
        uniq, inverse = torch.unique(key, dim=0, return_inverse=True)
        u_ids, u_mask = uniq[:, :p], uniq[:, p:]
        cache = DynamicCache()
        first = model(
            input_ids=u_ids,
            attention_mask=u_mask,
            position_ids=(u_mask.cumsum(1) - 1).clamp(min=0),
            past_key_values=cache,
            use_cache=True,
            logits_to_keep=1,
        ).logits[inverse]
        cache.batch_select_indices(inverse)
        rest = model(
            input_ids=batch.input_ids[:, p : p + r - 1],
            attention_mask=batch.attention_mask[:, : p + r - 1],
            position_ids=u_mask.sum(1)[inverse].unsqueeze(1) + torch.arange(r - 1).unsqueeze(0),
            past_key_values=cache,
            use_cache=True,
        ).logits
        logits = torch.cat([first, rest], dim=1)
    return token_logprobs_from_logits(logits, batch.input_ids[:, p:], t) * batch.response_mask


def _learner(model: torch.nn.Module, placement: Placement, *overrides: str) -> Learner:
    """A learner on ``model`` without activation checkpointing (its own test below): the
    reference paths here run the same model with a transformers cache, which a replayed
    layer would append to twice."""
    cfg = load_config(
        None, ["model.dtype=fp32", "optim.activation_checkpointing=false", *overrides]
    )
    return Learner(model, LearnerSettings.from_config(cfg, placement), 1)


def _value_and_grads(
    fn: Callable[[], torch.Tensor], model: torch.nn.Module, weights: torch.Tensor
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    model.zero_grad(set_to_none=True)
    lp = fn()
    (lp * weights).sum().backward()
    params = [p for p in model.parameters() if p.requires_grad]
    return lp.detach(), [
        p.grad.clone() if p.grad is not None else torch.zeros_like(p) for p in params
    ]


CPU = Placement(torch.device("cpu"), None, "fp32")
BF16 = Placement(torch.device("cpu"), torch.bfloat16, "bf16")


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("share", [True, False])
@pytest.mark.parametrize("temperature", [1.0, 0.6])
@pytest.mark.parametrize("chunk", ["auto", "3"])
def test_learner_logprobs_and_gradients_equal_the_full_logits_path(
    name: str, share: bool, temperature: float, chunk: str
) -> None:
    model = MODELS[name]()
    model.train()
    batch = _batch()
    weights = batch.advantages
    learner = _learner(
        model,
        CPU,
        f"optim.share_prompt_prefix={str(share).lower()}",
        f"rollout.temperature={temperature}",
        f"optim.logprob_chunk_tokens={chunk}",
    )
    got, got_g = _value_and_grads(lambda: learner.logprobs(batch), model, weights)
    want, want_g = _value_and_grads(
        lambda: _reference_logprobs(model, batch, temperature, share), model, weights
    )
    full, _ = _value_and_grads(
        lambda: _reference_logprobs(model, batch, temperature), model, weights
    )
    assert_close(got, full)  # and the shared prefix changes nothing
    assert_close(got, want)
    assert len(got_g) == len(want_g) > 0
    for a, b in zip(got_g, want_g, strict=True):
        assert_close(a, b)


@pytest.mark.parametrize("share", [True, False])
def test_bf16_autocast_equals_the_old_path_under_the_same_autocast(share: bool) -> None:
    """Values equal within 1e-6 (bitwise here). Gradients within bf16's resolution: the old
    path's logit gradients are bf16 (the logits are), so its head's backward products round
    to bf16, where the tiled head (:mod:`verirl.lm.linear_head`) keeps the logit gradient in
    float32 and accumulates the products in float32; with the shared prefix the old path also
    indexed the *logits* of each prompt's last position to its G rows and summed their
    gradients back in bf16, the new one indexes the hidden state and sums in float32 — one
    bf16 rounding fewer each."""
    model = _llama(False)
    model.train()
    batch = _batch(1)
    learner = _learner(model, BF16, f"optim.share_prompt_prefix={str(share).lower()}")

    def reference() -> torch.Tensor:
        with BF16.autocast():
            return _reference_logprobs(model, batch, 1.0, share)

    got, got_g = _value_and_grads(lambda: learner.logprobs(batch), model, batch.advantages)
    want, want_g = _value_and_grads(reference, model, batch.advantages)
    assert_close(got, want)
    for a, b in zip(got_g, want_g, strict=True):
        scale = max(1.0, float(b.abs().max()))
        assert float((a - b).abs().max()) <= 2**-7 * scale  # one bf16 ulp of the scale


def _count_calls(module: torch.nn.Module) -> list[int]:
    """Counts ``module``'s forward runs, including a checkpoint's recompute (which calls
    ``forward`` without the module's hooks)."""
    calls: list[int] = []
    forward = module.forward

    def counting(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return forward(*args, **kwargs)

    module.forward = counting  # type: ignore[method-assign]
    return calls


@pytest.mark.parametrize("name", ["llama-tied", "lora"])
@pytest.mark.parametrize("share", [True, False])
def test_activation_checkpointing_leaves_values_and_gradients_unchanged(
    name: str, share: bool
) -> None:
    model = MODELS[name]()
    model.train()
    batch = _batch(2)
    learner = _learner(model, CPU, f"optim.share_prompt_prefix={str(share).lower()}")
    plain, plain_g = _value_and_grads(lambda: learner.logprobs(batch), model, batch.advantages)
    assert enable_activation_checkpointing(model) == 3 and is_checkpointed(model)
    layer0 = model.get_base_model().model.layers[0] if name == "lora" else model.model.layers[0]
    calls = _count_calls(layer0.mlp)
    ckpt, ckpt_g = _value_and_grads(lambda: learner.logprobs(batch), model, batch.advantages)
    passes = 2 if share else 1  # the prompt pass and the response pass
    assert len(calls) == 2 * passes  # each layer ran again in the backward pass
    assert torch.equal(plain, ckpt)
    for a, b in zip(plain_g, ckpt_g, strict=True):
        assert_close(a, b)
    disable_activation_checkpointing(model)
    assert not is_checkpointed(model)


def test_checkpointing_applies_only_when_training_with_gradients() -> None:
    model = _llama(True)
    enable_activation_checkpointing(model)
    calls = _count_calls(model.model.layers[0].mlp)
    ids = torch.randint(0, VOCAB, (2, 6))
    model.eval()
    model(ids).logits.sum().backward()  # eval mode: no recompute
    assert len(calls) == 1
    model.train()
    with torch.no_grad():
        model(ids)
    assert len(calls) == 2


def test_checkpointed_model_keeps_its_state_dict_and_copies_cleanly() -> None:
    import copy

    model = _llama(True)
    keys = list(model.state_dict())
    enable_activation_checkpointing(model)
    assert list(model.state_dict()) == keys
    twin = copy.deepcopy(model)
    with torch.no_grad():
        twin.model.layers[0].mlp.down_proj.weight.zero_()
    ids = torch.randint(0, VOCAB, (1, 5))
    model.train()
    twin.train()
    # the copy runs its own (zeroed) layer, not the original's
    assert not torch.equal(model(ids).logits, twin(ids).logits)


def test_a_prompt_is_shared_only_where_that_pays() -> None:
    """Six samples of a 200-token prompt with 64-token answers: 1,000 prompt positions saved
    against 6 × 4e-5 × 64 × 264 ≈ 4 of attention, shared. Two samples of 4,096 tokens after a
    100-token prompt: 100 saved against 2 × 4e-5 × 4,096 × 4,196 ≈ 1,375, not shared; nor
    distinct prompts (nothing saved)."""
    from verirl.lm.passes import MASKED_ATTENTION_COST, prefix_sharing_pays

    def batch(prompts: list[int], p: int, r: int) -> Batch:
        n = len(prompts)
        ids = torch.tensor(prompts)[:, None].expand(n, p + r).contiguous()
        return Batch(
            input_ids=ids,
            attention_mask=torch.ones(n, p + r, dtype=torch.long),
            response_mask=torch.ones(n, r),
            old_logprobs=torch.zeros(n, r),
            advantages=torch.zeros(n, r),
            rewards=torch.zeros(n),
            truncated=torch.zeros(n, dtype=torch.bool),
        )

    assert MASKED_ATTENTION_COST == 4e-5
    assert prefix_sharing_pays(batch([7] * 6, 200, 64))
    assert not prefix_sharing_pays(batch([7] * 2, 100, 4096))
    assert prefix_sharing_pays(batch([7] * 2, 100, 1024))  # 100 against 92: barely
    assert not prefix_sharing_pays(batch([7, 8, 9], 200, 64))
