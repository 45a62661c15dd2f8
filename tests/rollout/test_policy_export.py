"""What the vLLM engine's weight sync sends, without vLLM: Hugging Face names, LoRA merged (or
the base alone), only the layers asked for, and the learner's adapter untouched afterwards."""

from __future__ import annotations

import torch

from verirl.models import LoraSettings, apply_lora, tiny_model
from verirl.rollout.policy_export import clean_name, policy_weights


def test_full_model_weights_are_the_state_dict() -> None:
    model = tiny_model(64, seed=1)
    got = dict(policy_weights(model))
    want = model.state_dict()
    assert set(want) <= set(got) | {"lm_head.weight"}
    for name, t in got.items():
        assert torch.equal(t, want[name]) and t.data_ptr() != want[name].data_ptr()
    only = policy_weights(model, lambda n: ".mlp." in n)
    assert only and all(".mlp." in n for n, _ in only)
    assert policy_weights(model, lambda n: False) == []


def test_lora_weights_are_merged_under_plain_names() -> None:
    base = tiny_model(64, seed=2)
    plain = {n: t.clone() for n, t in base.state_dict().items()}
    model = apply_lora(base, LoraSettings(r=4, alpha=8, target_modules=("q_proj", "down_proj")))
    with torch.no_grad():  # a trained adapter: B is no longer zero
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.normal_(0, 0.5, generator=torch.Generator().manual_seed(len(n)))
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    got = dict(policy_weights(model))
    assert not any("lora" in n or "base_layer" in n or n.startswith("base_model") for n in got)
    assert set(got) == set(plain)
    q = "model.layers.0.self_attn.q_proj.weight"
    layer = model.base_model.model.model.layers[0].self_attn.q_proj
    delta = layer.lora_B["default"].weight @ layer.lora_A["default"].weight * (8 / 4)
    assert torch.allclose(got[q], plain[q] + delta, atol=1e-6)
    assert not torch.allclose(got[q], plain[q])
    k = "model.layers.0.self_attn.k_proj.weight"  # not adapted: the base weight
    assert torch.equal(got[k], plain[k])
    # the learner is left bit for bit as it was (PEFT's merge then unmerge rounded its frozen
    # base weights: (W + s·B·A) − s·B·A is not W in floating point)
    for n, p in model.named_parameters():
        assert torch.equal(p, before[n]), n
    # the merged weight is the sum PEFT's merge stores, bit for bit
    with torch.no_grad():
        model.merge_adapter()
        assert torch.equal(got[q], layer.get_base_layer().weight)
        model.unmerge_adapter()


def test_unmerged_weights_are_the_frozen_base() -> None:
    base = tiny_model(64, seed=2)
    plain = {n: t.clone() for n, t in base.state_dict().items()}
    model = apply_lora(base, LoraSettings(r=4, alpha=8, target_modules=("q_proj",)))
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "lora_B" in n:
                p.fill_(0.5)
    got = dict(policy_weights(model, merge=False))
    assert set(got) == set(plain)
    assert all(torch.equal(got[n], plain[n]) for n in got)
    q = "model.layers.0.self_attn.q_proj.weight"
    assert not torch.equal(dict(policy_weights(model))[q], plain[q])  # merged: W + s·B·A


def test_clean_names() -> None:
    assert (
        clean_name("base_model.model.model.layers.3.mlp.up_proj.lora_A.default.weight")
        == "model.layers.3.mlp.up_proj.weight"
    )
    assert (
        clean_name("base_model.model.model.layers.3.mlp.up_proj.base_layer.weight")
        == "model.layers.3.mlp.up_proj.weight"
    )
    assert clean_name("model.norm.weight") == "model.norm.weight"
