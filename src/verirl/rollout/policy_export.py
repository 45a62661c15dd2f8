"""The learner's policy as a plain Hugging Face model, for an engine that holds its own copy
(vLLM): every weight under the name a Hugging Face checkpoint gives it — PEFT's wrapping
dropped, a LoRA policy's adapted layers merged out of place or left as the base alone — and
the model directory an engine starts from."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch


def base_model(model: torch.nn.Module) -> torch.nn.Module:
    get = getattr(model, "get_base_model", None)
    return get() if callable(get) and hasattr(model, "peft_config") else model


def clean_name(name: str) -> str:
    """A learner parameter's name as the plain Hugging Face checkpoint spells it: PEFT's
    ``base_model.model.`` prefix and ``.base_layer`` dropped; a LoRA factor maps to the
    weight of the module it adapts (its merged weight is what changes)."""
    name = name.removeprefix("base_model.model.")
    if ".lora_" in name:
        return name.split(".lora_")[0] + ".weight"
    return name.replace(".base_layer", "")


def policy_weights(
    model: torch.nn.Module,
    keep: Callable[[str], bool] | None = None,
    merge: bool = True,
    clone: bool = True,
) -> list[tuple[str, torch.Tensor]]:
    """(Hugging Face name, tensor) for every weight of the policy (those whose name ``keep``
    accepts); a LoRA policy's adapted layers carry merged weights W + s·B·A, computed out of
    place (:func:`_merged_lora_weights`): PEFT's ``merge_adapter`` / ``unmerge_adapter``
    around the read (as TRL's vLLM sync does) leaves W as (W + s·B·A) − s·B·A, which is not W
    in floating point, so the frozen base drifted by a rounding at every sync. With
    ``merge=False`` they carry the base weights W alone. Tensors are detached copies, or with
    ``clone=False`` detached views of the module's own (for a caller that reads them at once
    and keeps nothing: a whole model's copy would be transient memory at every sync)."""
    if keep is not None and not any(keep(clean_name(n)) for n, _ in model.named_parameters()):
        return []
    base = base_model(model)
    with torch.no_grad():
        merged = _merged_lora_weights(base) if merge and hasattr(model, "peft_config") else {}
        out: dict[str, torch.Tensor] = {}
        for name, tensor in base.state_dict().items():
            clean = clean_name(name)
            if ".lora_" in name or (keep is not None and not keep(clean)) or clean in out:
                continue
            if clean in merged:
                out[clean] = merged[clean]
            else:
                out[clean] = tensor.detach().clone() if clone else tensor.detach()
    return list(out.items())


def _merged_lora_weights(base: torch.nn.Module) -> dict[str, torch.Tensor]:
    """W + s·B·A of every LoRA-adapted layer of ``base`` (its active adapters, PEFT's own
    ``get_delta_weight``: scaling and fan-in/fan-out as PEFT merges them; the same
    floating-point sum ``merge_adapter`` stores), under the plain weight's name. The module
    is not changed. A layer already merged, or with adapters disabled, holds its weight."""
    from peft.tuners.lora import LoraLayer

    out: dict[str, torch.Tensor] = {}
    for name, module in base.named_modules():
        if not isinstance(module, LoraLayer) or module.merged or module.disable_adapters:
            continue
        layer: Any = module  # a concrete LoRA layer (Linear, Embedding, …): get_delta_weight
        weight = layer.get_base_layer().weight.detach()
        merged = weight.clone()
        for adapter in module.active_adapters:
            if adapter in module.lora_A or adapter in getattr(module, "lora_embedding_A", {}):
                merged += layer.get_delta_weight(adapter)
        out[clean_name(f"{name}.weight")] = merged
    return out


def param_versions(model: torch.nn.Module) -> dict[str, int]:
    """Each parameter's in-place version counter (the optimizer bumps it on every step)."""
    return {n: p._version for n, p in model.named_parameters()}


def export_policy(model: torch.nn.Module, tokenizer: Any, path: Path, merge: bool = True) -> None:
    """Write the policy as a plain Hugging Face model directory for vLLM: LoRA merged, or
    with ``merge=False`` its base weights alone (vLLM then serves the adapter)."""
    from safetensors.torch import save_file

    base: Any = base_model(model)
    base.config.save_pretrained(path)
    gen = getattr(base, "generation_config", None)
    if gen is not None:
        gen.save_pretrained(path)
    tensors = dict(policy_weights(model, merge=merge))
    if getattr(base.config, "tie_word_embeddings", False):
        tensors.pop("lm_head.weight", None)
    save_file(
        {k: v.contiguous().cpu() for k, v in tensors.items()}, str(path / "model.safetensors")
    )
    tokenizer.save_pretrained(path)
