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
    and, for a LoRA model, the adapters — i.e. everything the engine samples with."""
    tensors: dict[str, torch.Tensor] = dict(model.named_parameters())
    tensors.update({f"buffer:{n}": b for n, b in model.named_buffers()})
    return weights_checksum(tensors)


class WeightRing:
    """k + 1 slots of shared-memory copies of the trainable parameters, with each slot's
    version and checksum, and a condition the producer waits on for a version to appear."""

    def __init__(self, model: torch.nn.Module, max_staleness: int, ctx: Any = None) -> None:
        ctx = ctx or mp.get_context("spawn")
        self.size = max_staleness + 1
        trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        self.slots = [
            {n: p.detach().clone().share_memory_() for n, p in trainable} for _ in range(self.size)
        ]
        self.versions = ctx.Array("q", [-1] * self.size)
        self.checksums = ctx.Array("q", [0] * self.size)
        self.latest = ctx.Value("q", -1)
        self.cond = ctx.Condition()

    def publish(self, model: torch.nn.Module, version: int) -> int:
        """Copy ``model``'s trainable parameters in as ``version``; returns its checksum."""
        slot = version % self.size
        params = dict(model.named_parameters())
        with torch.no_grad():
            for name, buf in self.slots[slot].items():
                buf.copy_(params[name].detach())
        checksum = model_checksum(model)
        with self.cond:
            self.versions[slot] = version
            self.checksums[slot] = checksum
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
        with. Raises RuntimeError if that version's slot was already overwritten."""
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
