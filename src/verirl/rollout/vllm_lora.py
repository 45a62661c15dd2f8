"""Adapter-only LoRA sync for the vLLM engine (``rollout.engine.params.lora_sync: adapter``).

With a LoRA policy (``model.lora``: W + s·B·A on the adapted layers, Hu et al. 2021,
"LoRA: Low-Rank Adaptation of Large Language Models", arXiv:2106.09685, Eq. 3) vLLM holds the
frozen base weights W, loaded once at start-up, and the adapter through its own LoRA support
(``LLM(enable_lora=True, max_lora_rank=…)``, a ``LoRARequest`` on every request): each
adapted layer computes W·x + s·B·(A·x). A weight sync ships only the adapter:

1. peft's ``save_pretrained`` writes the active adapter (``adapter_model.safetensors`` and
   ``adapter_config.json``: A, B, r, α) into a fresh directory on tmpfs (``/dev/shm`` where
   there is one, so nothing touches a disk);
2. vLLM loads it as a new adapter version — a new ``LoRARequest`` id and name — through
   ``LLMEngine.add_lora``, which validates it, copies it into the LoRA layers' slot and
   activates it before the previous version is removed (a failed load keeps the old one);
3. later requests carry the new ``LoRARequest``. vLLM's prefix-cache block hashes include
   the adapter's name and path, so blocks computed under an older version are never reused:
   no cache reset is needed.

The base weights are never rewritten, so nothing can drift by construction (merging and
unmerging in place would leave W as (W + s·B·A) − s·B·A, which is not W in floating point; the
merged sync avoids that by merging out of place, from the learner's untouched W). vLLM
0.32 loads adapters from a directory only (``LoRARequest.lora_path``; an in-memory tensor
request is an open proposal upstream), hence the tmpfs round trip of a small file.

What it costs (``bench/bench_lora_sync.py``, SmolLM2-135M, r = 16, this 2-core CPU; the
table is in docs/scaling.md): a sync ships 18.7 MiB in 0.09 s against the merged layers'
405 MiB in 0.26 s, but vLLM's CPU LoRA ops (PyTorch reference kernels that gather a copy of
the adapter per token) sample 3-4× slower than the merged weights' GEMMs, so on a CPU the
merged sync (the engine's default) wins a step. On a GPU vLLM's LoRA kernels are Triton
ones; ``bench/gpu_check.py``'s ``vllm_lora`` times both there.

Checking (:func:`adapter_mismatch`): the adapter is read back from the buffers vLLM's LoRA
layers compute with — the activated slot of every ``lora_a_stacked`` / ``lora_b_stacked``
(vLLM stores B pre-multiplied by s, and pads both to ``max_lora_rank`` with zeros) — and
compared bit for bit with the policy's A and s·B; a slot vLLM holds for a layer the policy
does not adapt must be zero.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any

import torch

from verirl.errors import UserInputError

ADAPTER_FILES = ("adapter_model.safetensors", "adapter_config.json")
"""What peft's ``save_pretrained`` writes and vLLM reads (its README.md is neither's concern)."""

VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
"""The values vLLM accepts for ``max_lora_rank`` (``vllm.config.lora.MaxLoRARanks``)."""

AdapterTensors = dict[str, tuple[torch.Tensor, torch.Tensor]]
"""Hugging Face module name → (A, s·B) of a linear layer as vLLM's LoRA slot holds it."""

PolicyAdapter = dict[str, tuple[torch.Tensor, torch.Tensor, float]]
"""Hugging Face module name → (A [r, in], B [out, r], s) of one LoRA layer of the policy."""


def is_lora(model: torch.nn.Module) -> bool:
    """Whether ``model`` is a peft LoRA policy."""
    return hasattr(model, "peft_config")


def _lora_layers(model: torch.nn.Module) -> dict[str, Any]:
    """The LoRA layers of a peft policy by their Hugging Face module name."""
    from peft.tuners.lora import LoraLayer

    base = model.get_base_model() if is_lora(model) else model  # type: ignore[operator]
    return {n: m for n, m in base.named_modules() if isinstance(m, LoraLayer)}


def active_adapter(model: torch.nn.Module) -> str:
    """The one adapter a LoRA policy trains (verirl builds policies with one)."""
    names = list(getattr(model, "peft_config", {}))
    if len(names) != 1:
        raise UserInputError(
            f"rollout.engine.params.lora_sync=adapter syncs one LoRA adapter; the policy has "
            f"{len(names)} ({', '.join(names) or 'none'}): use lora_sync=merged"
        )
    return names[0]


def engine_kwargs(model: torch.nn.Module) -> dict[str, Any]:
    """``vllm.LLM`` arguments that serve ``model``'s adapter: LoRA on, the smallest
    ``max_lora_rank`` vLLM accepts that holds its rank, one adapter at a time, and LoRA
    layers only where the policy has them (vLLM accepts the unfused names, q_proj for its
    qkv_proj)."""
    adapter = active_adapter(model)
    config: Any = model.peft_config[adapter]  # type: ignore[index]
    rank = max([int(config.r), *map(int, (config.rank_pattern or {}).values())])
    fits = [r for r in VLLM_LORA_RANKS if r >= rank]
    if not fits:
        raise UserInputError(
            f"model.lora.r={rank}: vLLM serves LoRA adapters up to rank {VLLM_LORA_RANKS[-1]}; "
            "use rollout.engine.params.lora_sync=merged"
        )
    targets = sorted({name.rsplit(".", 1)[-1] for name in _lora_layers(model)})
    return {
        "enable_lora": True,
        "max_lora_rank": fits[0],
        "max_loras": 1,
        "max_cpu_loras": 1,
        "lora_target_modules": targets,
    }


def policy_adapter(model: torch.nn.Module) -> PolicyAdapter:
    """(A, B, s) of every LoRA layer of the active adapter: s = α/r (α/√r with rsLoRA;
    peft's ``scaling``). Detached, not copied."""
    adapter = active_adapter(model)
    out: PolicyAdapter = {}
    for name, layer in _lora_layers(model).items():
        if adapter in layer.lora_A:
            a = layer.lora_A[adapter].weight.detach()
            b = layer.lora_B[adapter].weight.detach()
            out[name] = (a, b, float(layer.scaling[adapter]))
    return out


def adapter_mismatch(expected: PolicyAdapter, held: AdapterTensors) -> list[str]:
    """The ``<module>.lora_A`` / ``.lora_B`` names whose adapter in vLLM's LoRA slot (``held``,
    padded to ``max_lora_rank``) is not the policy's (``expected``) bit for bit — B as vLLM
    computes its stored s·B: cast to its LoRA dtype, then scaled; a module vLLM holds a
    non-zero slot for but the policy does not adapt is named too."""
    bad = []
    for name, (a, b, s) in expected.items():
        got = held.get(name)
        if got is None:
            bad += [f"{name}.lora_A", f"{name}.lora_B"]
            continue
        ha, hb = got
        r = a.shape[0]
        a_ok = ha.shape[0] >= r and ha.shape[1:] == a.shape[1:]
        a_ok = a_ok and torch.equal(ha[:r].cpu(), a.to(ha.dtype).cpu()) and not ha[r:].any()
        b_ok = hb.shape[1] >= r and hb.shape[0] == b.shape[0]
        sb = b.to(hb.dtype) * s
        b_ok = b_ok and torch.equal(hb[:, :r].cpu(), sb.cpu()) and not hb[:, r:].any()
        bad += [f"{name}.lora_{x}" for x, ok in (("A", a_ok), ("B", b_ok)) if not ok]
    for name, (ha, hb) in held.items():
        if name not in expected and (ha.any() or hb.any()):
            bad.append(f"{name}.lora_A")
    return bad


def _tmpfs() -> str | None:
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and shm.stat().st_mode & 0o002 else None


class AdapterVersions:
    """The adapter versions a ``vllm.LLM`` serves: :meth:`publish` writes the policy's
    adapter to a fresh directory and loads it under a new ``LoRARequest`` (see the module
    docstring); :attr:`request` is the one to send with every request."""

    def __init__(self, llm: Any) -> None:
        from vllm.lora.request import LoRARequest

        self._llm = llm
        self._request_type = LoRARequest
        self._root = Path(tempfile.mkdtemp(prefix="verirl-vllm-lora-", dir=_tmpfs()))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self._root, True)
        self.version = 0
        self.request: Any = None

    def publish(self, model: torch.nn.Module) -> int:
        """Write ``model``'s adapter, load it into vLLM as the next version, drop the
        previous one; return the bytes written."""
        adapter = active_adapter(model)
        version = self.version + 1
        path = self._root / f"v{version}"
        # peft writes the "default" adapter into ``path``, any other into ``path / name``
        model.save_pretrained(  # type: ignore[operator]
            path, selected_adapters=[adapter], save_embedding_layers=False
        )
        where = path if adapter == "default" else path / adapter
        size = sum((where / f).stat().st_size for f in ADAPTER_FILES)  # what vLLM reads
        request = self._request_type(f"verirl-policy-v{version}", version, str(where))
        self._llm.llm_engine.add_lora(request)  # loaded, validated and activated now
        old, self.request, self.version = self.request, request, version
        if old is not None:
            self._llm.llm_engine.remove_lora(old.lora_int_id)
            shutil.rmtree(self._root / f"v{old.lora_int_id}", ignore_errors=True)
        return size

    def read_back(self, packed: dict[str, list[str]]) -> AdapterTensors:
        """The active version's (A, s·B) per Hugging Face module name, as vLLM's LoRA layers
        hold them (see :func:`_read_adapter`)."""
        version = self.version
        got = self._llm.collective_rpc(_read_adapter, args=(version, packed))[0]
        return dict(got)

    def close(self) -> None:
        self._cleanup()


def _read_adapter(worker: Any, lora_id: int, packed: dict[str, list[str]]) -> AdapterTensors:
    """(A, s·B) of adapter ``lora_id`` in every LoRA layer of vLLM's worker: the slot it is
    activated in, ``lora_a_stacked[i][slot, 0]`` / ``lora_b_stacked[i][slot, 0]`` per slice
    (a fused layer — qkv_proj, gate_up_proj — holds one per part, named by the model's
    ``packed`` mapping). Nothing when the adapter is not activated."""
    manager = worker.model_runner.lora_manager._adapter_manager
    slots = list(manager.lora_index_to_id)
    if lora_id not in slots:
        return {}
    slot = slots.index(lora_id)
    out: AdapterTensors = {}
    for name, module in manager.modules.items():
        a_stacked = getattr(module, "lora_a_stacked", None)
        b_stacked = getattr(module, "lora_b_stacked", None)
        if not isinstance(a_stacked, tuple) or not isinstance(b_stacked, tuple):
            continue  # not a linear LoRA layer
        parent, _, leaf = name.rpartition(".")
        parts = packed.get(leaf, [leaf]) if len(a_stacked) > 1 else [leaf]
        for part, a, b in zip(parts, a_stacked, b_stacked, strict=True):
            key = f"{parent}.{part}" if parent else part
            out[key] = (a[slot, 0].detach().clone(), b[slot, 0].detach().clone())
    return out
