"""Adapter-only LoRA sync, the parts that need no vLLM: the engine arguments a LoRA policy asks
for, the adapter as the policy holds it, and the bit-for-bit comparison with vLLM's padded,
pre-scaled LoRA slot (the real engine: tests/rollout/test_vllm_engine.py)."""

from __future__ import annotations

import pytest
import torch

from verirl.errors import UserInputError
from verirl.models import LoraSettings, apply_lora, tiny_model
from verirl.rollout.vllm_lora import adapter_mismatch, engine_kwargs, policy_adapter


def _policy(r: int, targets: tuple[str, ...] = ("q_proj", "down_proj")) -> torch.nn.Module:
    settings = LoraSettings(r=r, alpha=2 * r, target_modules=targets)
    return apply_lora(tiny_model(64, seed=2), settings)


def test_engine_kwargs_fit_the_rank_and_name_the_adapted_modules() -> None:
    kw = engine_kwargs(_policy(4))
    assert kw["enable_lora"] is True and (kw["max_loras"], kw["max_cpu_loras"]) == (1, 1)
    assert kw["max_lora_rank"] == 8  # the smallest rank vLLM accepts that holds r = 4
    assert kw["lora_target_modules"] == ["down_proj", "q_proj"]
    assert engine_kwargs(_policy(16, ("v_proj",)))["max_lora_rank"] == 16
    with pytest.raises(UserInputError, match=r"model\.lora\.r=600.*lora_sync=merged"):
        engine_kwargs(_policy(600, ("q_proj",)))


def test_a_policy_with_two_adapters_is_refused() -> None:
    from peft import LoraConfig

    model = _policy(4)
    model.add_adapter("second", LoraConfig(r=2, target_modules=["q_proj"]))  # type: ignore[operator]
    with pytest.raises(UserInputError, match=r"one LoRA adapter; the policy has 2"):
        engine_kwargs(model)


def test_policy_adapter_is_a_b_and_the_scaling() -> None:
    model = _policy(4)
    got = policy_adapter(model)
    assert set(got) == {
        f"model.layers.{i}.{m}" for i in (0, 1) for m in ("self_attn.q_proj", "mlp.down_proj")
    }
    layer = model.base_model.model.model.layers[1].mlp.down_proj
    a, b, s = got["model.layers.1.mlp.down_proj"]
    assert a is not None and torch.equal(a, layer.lora_A["default"].weight)
    assert torch.equal(b, layer.lora_B["default"].weight)
    assert s == 2.0  # alpha / r = 8 / 4


def test_adapter_mismatch_compares_the_padded_prescaled_slot_bit_for_bit() -> None:
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(2, 3, generator=g), torch.randn(4, 2, generator=g)
    expected = {"m.q_proj": (a, b, 1.5)}

    def slot(a: torch.Tensor, sb: torch.Tensor, rank: int = 8) -> tuple[torch.Tensor, ...]:
        ha, hb = torch.zeros(rank, a.shape[1]), torch.zeros(sb.shape[0], rank)
        ha[: a.shape[0]], hb[:, : sb.shape[1]] = a, sb
        return ha, hb

    held = {"m.q_proj": slot(a, b * 1.5), "m.k_proj": slot(torch.zeros(2, 3), torch.zeros(4, 2))}
    assert adapter_mismatch(expected, held) == []  # a zero slot for k_proj: not adapted, fine
    assert adapter_mismatch(expected, {"m.q_proj": slot(a, b)}) == ["m.q_proj.lora_B"]  # s
    nudged = a.clone()
    nudged[1, 2] = torch.nextafter(nudged[1, 2], torch.tensor(10.0))  # one ulp
    assert adapter_mismatch(expected, {"m.q_proj": slot(nudged, b * 1.5)}) == ["m.q_proj.lora_A"]
    padded = slot(a, b * 1.5)
    padded[1][0, 5] = 1.0  # past the rank: vLLM would add it
    assert adapter_mismatch(expected, {"m.q_proj": padded}) == ["m.q_proj.lora_B"]
    assert adapter_mismatch(expected, {}) == ["m.q_proj.lora_A", "m.q_proj.lora_B"]
    stray = {**held, "m.v_proj": slot(a, b)}  # vLLM adds an adapter the policy lacks
    assert adapter_mismatch(expected, stray) == ["m.v_proj.lora_A"]
