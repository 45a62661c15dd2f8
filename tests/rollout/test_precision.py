"""The low-precision sampling copy (``rollout.engine.params.precision``): what it samples
with, how it follows the learner's updates, and how the learner learns it is not exact."""

from __future__ import annotations

import pytest
import torch

from verirl.models import LoraSettings, apply_lora, tiny_model
from verirl.rollout.base import ENGINES
from verirl.rollout.hf import HFEngine
from verirl.rollout.precision import (
    INT8_KERNEL_MAX_ROWS,
    LARGE_KERNEL_MAX_ROWS,
    LARGE_WEIGHT_ELEMENTS,
    Int8Embedding,
    Int8WeightLinear,
    SamplingCopy,
)
from verirl.types import SamplingParams


class ByteTokenizer:
    pad_token_id = 0
    eos_token_id = 1

    def decode(self, ids: list[int], skip_special_tokens: bool = True) -> str:
        return bytes(i - 2 for i in ids if i >= 2).decode("latin-1")


def _logp(model: torch.nn.Module, ids: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return torch.log_softmax(model(input_ids=ids).logits.float(), dim=-1)


@pytest.mark.parametrize("precision", ["w8a16", "int8", "bf16"])
def test_the_copy_is_close_and_follows_every_update(precision: str) -> None:
    model = tiny_model(258, seed=1, hidden_size=64)
    copy = SamplingCopy(model, precision)  # type: ignore[arg-type]
    ids = torch.randint(2, 258, (3, 12), generator=torch.Generator().manual_seed(0))
    if precision == "int8":
        assert isinstance(copy.module.lm_head, torch.ao.nn.quantized.dynamic.Linear)
        mlp = copy.module.model.layers[0].mlp
        assert isinstance(mlp.up_proj, torch.ao.nn.quantized.dynamic.Linear)
        assert type(mlp.down_proj) is torch.nn.Linear  # INT8_KEEP_FP32
    if precision == "w8a16":  # every linear layer, the head and the down projection too
        linears = [m for m in copy.module.modules() if isinstance(m, torch.nn.Linear)]
        assert not linears
        assert isinstance(copy.module.model.layers[0].mlp.down_proj, Int8WeightLinear)
        assert isinstance(copy.module.lm_head, Int8WeightLinear)
        embedding = copy.module.model.embed_tokens  # tied: the head's own int8 rows
        assert isinstance(embedding, Int8Embedding) and embedding.shared
        assert embedding.qweight.data_ptr() == copy.module.lm_head.qweight.data_ptr()
        assert copy.module.model.norm.weight.dtype == torch.float32  # the rest fp32
    close = (_logp(model, ids) - _logp(copy.module, ids)).abs().mean()
    assert 0 < close < 0.05  # not the learner's numbers, but near them
    before = _logp(copy.module, ids)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.02 * torch.randn_like(p))
    cost = copy.refresh()
    assert cost["weight_sync_layers"] > 0
    after = _logp(copy.module, ids)
    assert (after - before).abs().mean() > 10 * close  # it moved with the learner ...
    assert (_logp(model, ids) - after).abs().mean() < 0.05  # ... to the learner's weights
    assert copy.refresh()["weight_sync_layers"] == 0  # nothing changed since


# the int8 kernel (few rows, K % 16 == 0); the widened bf16 product (a width the kernel
# cannot read, or a prefill's many rows)
@pytest.mark.parametrize(("width", "rows"), [(16, 1), (3, 1), (16, INT8_KERNEL_MAX_ROWS + 1)])
def test_int8_weights_are_quantized_per_output_channel_by_hand(width: int, rows: int) -> None:
    weight = torch.zeros(2, width)
    weight[:, :3] = torch.tensor([[2.54, -1.0, 0.5], [0.013, -1.27, 0.0]])
    linear = torch.nn.Linear(width, 2, bias=True)
    with torch.no_grad():
        linear.weight.copy_(weight)
        linear.bias.copy_(torch.tensor([0.5, -0.25]))
    layer = Int8WeightLinear.from_linear(linear)
    # row scales max|w| / 127 = 0.02 and 0.01; q = round(w / s): 0.013 / 0.01 = 1.3 -> 1
    assert layer.qweight[:, :3].tolist() == [[127, -50, 25], [1, -127, 0]]
    assert not layer.qweight[:, 3:].any()
    assert torch.allclose(layer.scales.float(), torch.tensor([0.02, 0.01]), rtol=4e-3)
    # y = x · (q s)ᵀ + b at x = (1, 2, 3, 0, …): 2.54 - 2.0 + 1.5 + 0.5; 0.01 - 2.54 - 0.25
    x = torch.zeros(rows, 1, width)
    x[..., :3] = torch.tensor([1.0, 2.0, 3.0])
    y = layer(x)
    assert y.shape == (rows, 1, 2) and y.dtype == torch.float32  # the input's dtype
    assert torch.allclose(y.float(), torch.tensor([2.54, -2.78]).expand(rows, 1, 2), atol=0.02)
    layer.load(2 * linear.weight)  # re-quantized in place: the scales double, q stays
    assert layer.qweight[:, :3].tolist() == [[127, -50, 25], [1, -127, 0]]
    assert torch.allclose(layer.scales.float(), torch.tensor([0.04, 0.02]), rtol=4e-3)


def test_a_large_weight_keeps_the_kernel_for_more_rows() -> None:
    """A decode step of 48 rows widens a decoder layer's small weight to bf16 but keeps the
    int8 kernel for an output head's large one; a prefill's many rows widen both."""
    small = Int8WeightLinear(64, 32, bias=False)
    head = Int8WeightLinear(64, LARGE_WEIGHT_ELEMENTS // 64, bias=False)
    assert small.uses_kernel(INT8_KERNEL_MAX_ROWS) and not small.uses_kernel(48)
    assert head.uses_kernel(48) and head.uses_kernel(LARGE_KERNEL_MAX_ROWS)
    assert not head.uses_kernel(LARGE_KERNEL_MAX_ROWS + 1)
    assert not Int8WeightLinear(24, LARGE_WEIGHT_ELEMENTS // 24 + 1, False).uses_kernel(1)


def test_the_embedding_is_int8_rows_by_hand_and_follows_an_update() -> None:
    """An untied embedding: its own int8 rows (row 0: scale 2.54 / 127 = 0.02, q = 127, -50,
    25; row 1: 0.01, q = 1, -127, 0), looked up and widened; a tied one (the test above)
    reads the head's. After the learner's embedding changes, a refresh re-quantizes it."""
    model = tiny_model(258, seed=2, hidden_size=64)
    model.config.tie_word_embeddings = False
    model.lm_head.weight = torch.nn.Parameter(model.lm_head.weight.detach().clone())
    with torch.no_grad():
        model.model.embed_tokens.weight[:2] = 0.0
        model.model.embed_tokens.weight[:2, :3] = torch.tensor(
            [[2.54, -1.0, 0.5], [0.013, -1.27, 0.0]]
        )
    copy = SamplingCopy(model, "w8a16")
    embedding = copy.module.model.embed_tokens
    assert isinstance(embedding, Int8Embedding) and not embedding.shared
    assert embedding.qweight.data_ptr() != copy.module.lm_head.qweight.data_ptr()
    assert embedding.qweight[:2, :3].tolist() == [[127, -50, 25], [1, -127, 0]]
    looked_up = embedding(torch.tensor([[1, 0]]))
    assert looked_up.shape == (1, 2, 64) and looked_up.dtype == torch.float32
    scales = torch.tensor([0.01, 0.02]).bfloat16().float()  # stored as bf16: 0.4% off
    expected = torch.tensor([[1.0, -127.0, 0.0], [127.0, -50.0, 25.0]]) * scales[:, None]
    assert torch.allclose(looked_up[0, :, :3], expected, atol=1e-6)
    with torch.no_grad():
        model.model.embed_tokens.weight.mul_(2)
    assert copy.refresh()["weight_sync_layers"] == 1  # the embedding alone
    assert torch.allclose(embedding(torch.tensor([0]))[0, :3], 2 * expected[1], atol=2e-4)


def test_a_lora_policy_is_copied_merged() -> None:
    model = apply_lora(tiny_model(258, seed=1, hidden_size=64), LoraSettings(r=4))
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_(0, 0.05)
    copy = SamplingCopy(model, "bf16")
    ids = torch.randint(2, 258, (2, 9), generator=torch.Generator().manual_seed(1))
    assert (_logp(model, ids) - _logp(copy.module, ids)).abs().mean() < 0.05


def test_the_engine_samples_from_the_copy_and_is_not_exact() -> None:
    model = tiny_model(258, seed=3, hidden_size=64)
    model.generation_config.eos_token_id = 1
    engine = HFEngine(model, ByteTokenizer(), precision="int8")
    prompt = [5, 6, 7, 8]
    (group,) = engine.generate([prompt], SamplingParams(n=2, max_new_tokens=8, seed=0))
    assert engine.copy is not None
    for g in group:  # the recorded log-probs are the copy's (its activation scales are
        # computed per call, over the batch: a teacher-forced pass is close, not equal)
        ids = torch.tensor([prompt + list(g.token_ids)])
        sampled = torch.tensor(g.logprobs)
        for module, bound in ((engine.copy.module, 0.02), (model, 0.05)):
            ref = _logp(module, ids)[0, len(prompt) - 1 : -1]
            ref = ref.gather(1, torch.tensor(g.token_ids)[:, None]).squeeze(1)
            assert (sampled - ref).abs().max() < bound
    spec = ENGINES.get("hf")
    assert spec.exact_logprobs({}) and spec.exact_logprobs({"precision": "policy"})
    assert not spec.exact_logprobs({"precision": "int8"})
    assert not ENGINES.get("vllm").exact_logprobs({})


def test_int8_is_refused_off_the_cpu_and_unknown_precisions_are_named() -> None:
    with pytest.raises(ValueError, match=r"one of .*w8a16.*'fp4'"):
        SamplingCopy(tiny_model(258), "fp4")  # type: ignore[arg-type]
