"""Bounded staleness, as data structures shared by the learner and the rollout producer.

Schedule (``max_staleness`` k, first batch index s, e.g. a resumed run's step): batch i is
sampled with the policy of exactly ``version_for(i) = max(s, i − k)`` learner updates, and the
learner trains on batch i at version i, so every batch is exactly ``min(k, i − s)`` versions
stale — never more than k — and which weights sampled which batch does not depend on timing.
That makes a run deterministic for a fixed seed and k, and k = 0 the synchronous loop.

The weights travel through a ring of k + 1 slots of shared-memory tensors: version v lives in
slot v mod (k + 1), next to its checksum. The learner writes version v only after training on
batch v − 1, which the producer finished before; the slot it overwrites held version v − k − 1,
which only batch v − 1 needed. So a slot is never rewritten while the producer may still read
it, and no lock is held while tensors are copied.
"""

from __future__ import annotations

import multiprocessing as mp
import time
import zlib
from collections.abc import Mapping
from typing import Any

import torch


def version_for(batch: int, max_staleness: int, start: int = 0) -> int:
    """The policy version that samples ``batch`` (see the module docstring)."""
    return max(start, batch - max_staleness)


def weights_checksum(tensors: Mapping[str, torch.Tensor]) -> int:
    """A 63-bit checksum of the exact bit patterns of ``tensors`` (name-ordered): any flipped
    bit, swapped element or missing tensor changes it (up to hash collisions)."""
    mask = (1 << 63) - 1
    total = 0
    for name in sorted(tensors):
        t = tensors[name].detach().reshape(-1)
        ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
        bits = t.contiguous().view(ints).to(torch.int64)
        weight = torch.arange(1, bits.numel() + 1, dtype=torch.int64) % 65521 + 1
        part = int((bits * weight).sum()) ^ (int(bits.sum()) << 17)
        total = (total * 1000003 + part + zlib.crc32(name.encode())) & mask
    return total


def model_checksum(model: torch.nn.Module) -> int:
    """:func:`weights_checksum` of every parameter and buffer of ``model`` — the base weights
    and, for a LoRA model, the adapters."""
    tensors: dict[str, torch.Tensor] = dict(model.named_parameters())
    tensors.update({f"buffer:{n}": b for n, b in model.named_buffers()})
    return weights_checksum(tensors)


MERGED_ROWS = 16  # output rows of each adapted layer whose merged weight is checksummed


def merged_lora_weights(
    model: torch.nn.Module, rows: int | None = MERGED_ROWS
) -> dict[str, torch.Tensor]:
    """The effective weight ``W + Σ_a s_a · B_a A_a`` of every LoRA-adapted linear layer of
    ``model`` (PEFT's layout: ``base_layer``, ``lora_A`` / ``lora_B`` per adapter,
    ``scaling``, ``merged``, ``fan_in_fan_out``), computed out of place — the model is not
    touched — and empty for a model without LoRA. ``rows``: only that many evenly spaced
    output rows of each layer (None: all).

    This is what the engine samples with, so it also covers what the parameters alone do
    not: the scaling α/r, which adapters are active, whether an adapter is disabled. Those
    act on every output row of a layer alike, and every row's parameters are covered by
    :func:`model_checksum`, so a few rows per layer suffice and keep the cost per sync
    negligible (all rows: seconds for a 135M model on a busy CPU). The product is a sum of
    r rank-one outer products in a fixed order (elementwise, no matrix-multiply kernel), so
    its bits do not depend on the thread count: the learner and the producer, with
    different threads, compute the same checksum for the same weights."""
    out: dict[str, torch.Tensor] = {}
    with torch.no_grad():
        for name, module in model.named_modules():
            base = getattr(module, "base_layer", None)
            lora_a: Any = getattr(module, "lora_A", None)
            lora_b: Any = getattr(module, "lora_B", None)
            weight = getattr(base, "weight", None)
            if not isinstance(lora_a, torch.nn.ModuleDict) or not isinstance(weight, torch.Tensor):
                continue
            fan_in_fan_out = bool(getattr(module, "fan_in_fan_out", False))
            w = weight.detach().T if fan_in_fan_out else weight.detach()  # [out, in]
            n = w.shape[0]
            pick = (
                torch.arange(n)
                if rows is None or rows >= n
                else torch.linspace(0, n - 1, rows).round().long().unique()
            )
            merged = w[pick].to(torch.float64)
            if not getattr(module, "merged", False) and not getattr(
                module, "disable_adapters", False
            ):
                for adapter in getattr(module, "active_adapters", ()):
                    if adapter not in lora_a or lora_b is None or adapter not in lora_b:
                        continue
                    a = _weight(lora_a[adapter]).to(torch.float64)  # [r, in]
                    b = _weight(lora_b[adapter])[pick].to(torch.float64)  # [rows, r]
                    delta = torch.zeros(b.shape[0], a.shape[1], dtype=torch.float64)
                    for j in range(a.shape[0]):
                        delta += b[:, j : j + 1] * a[j : j + 1, :]
                    scaling: Any = module.scaling
                    merged = merged + delta * float(scaling[adapter])
            out[f"merged:{name}"] = merged
    return out


def _weight(module: Any) -> torch.Tensor:
    w: torch.Tensor = module.weight
    return w.detach()


def merged_checksum(model: torch.nn.Module) -> int:
    """Checksum of :func:`merged_lora_weights` (0 for a model without LoRA)."""
    merged = merged_lora_weights(model)
    return weights_checksum(merged) if merged else 0


def engine_checksum(model: torch.nn.Module) -> tuple[int, int]:
    """(``model_checksum``, checksum of :func:`merged_lora_weights`) of ``model``: what a
    weight sync compares between the learner and the engine (the second is 0 without LoRA)."""
    return model_checksum(model), merged_checksum(model)


class WeightRing:
    """k + 1 slots of shared-memory copies of the trainable parameters, with each slot's
    version and checksums (:func:`engine_checksum`), and a condition the producer waits on
    for a version to appear."""

    def __init__(self, model: torch.nn.Module, max_staleness: int, ctx: Any = None) -> None:
        ctx = ctx or mp.get_context("spawn")
        self.size = max_staleness + 1
        trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        self.slots = [
            {n: p.detach().clone().share_memory_() for n, p in trainable} for _ in range(self.size)
        ]
        self.versions = ctx.Array("q", [-1] * self.size)
        self.checksums = ctx.Array("q", [0] * self.size)
        self.merged_checksums = ctx.Array("q", [0] * self.size)
        self.latest = ctx.Value("q", -1)
        self.cond = ctx.Condition()
        self.stopped = ctx.Event()  # set by the learner: the producer ends at its next wait

    def publish(self, model: torch.nn.Module, version: int) -> int:
        """Copy ``model``'s trainable parameters in as ``version``; returns its checksum
        (:func:`model_checksum`; the merged-LoRA checksum is published next to it)."""
        slot = version % self.size
        params = dict(model.named_parameters())
        with torch.no_grad():
            for name, buf in self.slots[slot].items():
                buf.copy_(params[name].detach())
        checksum, merged = engine_checksum(model)
        with self.cond:
            self.versions[slot] = version
            self.checksums[slot] = checksum
            self.merged_checksums[slot] = merged
            self.latest.value = version
            self.cond.notify_all()
        return checksum

    def wait_for(self, version: int, alive: Any = None, poll_s: float = 0.5) -> float:
        """Block until ``version`` is published; returns the seconds waited. ``alive()``
        returning False (the learner is gone) raises RuntimeError."""
        t0 = time.perf_counter()
        with self.cond:
            while self.latest.value < version:
                self.cond.wait(poll_s)
                if alive is not None and not alive():
                    raise RuntimeError("the learner went away")
        return time.perf_counter() - t0

    def load(self, model: torch.nn.Module, version: int) -> int:
        """Copy ``version``'s weights into ``model``; returns the checksum it was published
        with (:meth:`expected` gives both). Raises RuntimeError if that version's slot was
        already overwritten."""
        slot = version % self.size
        if self.versions[slot] != version:
            raise RuntimeError(
                f"weight version {version} was overwritten by {self.versions[slot]} before "
                "the producer loaded it (the staleness schedule was broken)"
            )
        params = dict(model.named_parameters())
        with torch.no_grad():
            for name, buf in self.slots[slot].items():
                params[name].copy_(buf)
        return int(self.checksums[slot])

    def expected(self, version: int) -> tuple[int, int]:
        """The (parameter, merged-LoRA) checksums ``version`` was published with."""
        slot = version % self.size
        return int(self.checksums[slot]), int(self.merged_checksums[slot])
