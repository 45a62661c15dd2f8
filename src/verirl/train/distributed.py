"""A data-parallel learner: one rollout batch's micro-batches shared out over K processes of
one ``torch.distributed`` group (gloo on CPU, NCCL on GPU).

Why the update is exactly the one-process update. The learner's loss aggregation divides by
*minibatch* totals (masked tokens, sequences, Dr. GRPO's constant; see
:class:`~verirl.train.loss.AggregationScale`), never by a micro-batch's own, so the minibatch
loss is a plain sum over its rows' contributions. Every rank holds the whole batch, draws the
same minibatch order (same seed), computes the same totals, and back-propagates only its
share of the minibatch's rows; the ranks' gradients are then **summed** (not averaged) with
one all-reduce, which gives every rank the gradient of the whole minibatch. Clipping,
AdamW and the schedule then run identically on every rank, so the weights stay equal without
a broadcast. Logged statistics are summed the same way. (Averaging gradients, as DDP does,
would be right only if each rank normalised by its own share; with sequence-mean or
token-mean aggregation over uneven shards it would not be the same update.)

Launch:

- without Ray, ``torchrun --nproc_per_node K -m verirl.cli train ... run.name=NAME`` (each
  process reads ``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``/``MASTER_PORT``:
  :func:`from_environment`). Rank 0 samples, scores, computes advantages and broadcasts the
  collated batch; every rank trains on its share; only rank 0 logs and writes checkpoints,
  and every rank restores from them on ``--resume``;
- on Ray, K learner actors (:mod:`verirl.integrations.ray.learner`) join one group through a
  TCP rendezvous at rank 0's address (:func:`init_group`).

FSDP2 (the ray placement's ``learner.fsdp``; CUDA only): :func:`shard_fsdp2` wraps every
decoder layer and the model with ``torch.distributed.fsdp.fully_shard`` and sets the gradient
divide factor to 1, so FSDP's reduce-scatter sums like the all-reduce above. This path is
written against torch 2.13's API and is NOT TESTED in this repository (no GPU here); the gloo
path is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist


@dataclass(frozen=True)
class DataParallel:
    """This process's place in the learner group. ``sharded_parameters``: gradients are
    already reduced by FSDP, so :meth:`reduce_gradients` must not reduce them again.

    A learner alone is the group of one (:data:`ONE_PROCESS`): every collective is then the
    identity, so the learner runs one code path whatever the group's size."""

    rank: int
    world_size: int
    sharded_parameters: bool = False

    def shard(self, rows: torch.Tensor) -> torch.Tensor:
        """This rank's rows of a minibatch: every ``world_size``-th one from ``rank``."""
        return rows[self.rank :: self.world_size]

    def reduce_gradients(self, params: list[torch.nn.Parameter]) -> None:
        """Sum every parameter's gradient over the group (one flat all-reduce). A parameter
        without a gradient — this rank ran no row touching it, or no row at all (every row of
        the minibatch without signal) — gets a zero one first: the gradient every row would
        have given, on which the optimizer still takes its (momentum) step."""
        if self.sharded_parameters:
            return
        grads = []
        for p in params:
            if p.grad is None:
                p.grad = torch.zeros_like(p)
            grads.append(p.grad)
        if self.world_size == 1:
            return
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat, op=dist.ReduceOp.SUM)
        offset = 0
        for g in grads:
            n = g.numel()
            g.copy_(flat[offset : offset + n].view_as(g))
            offset += n

    def broadcast(self, obj: Any) -> Any:
        """Rank 0's ``obj`` on every rank (pickled; e.g. the step's collated batch)."""
        box = [obj if self.rank == 0 else None]
        if self.world_size > 1:
            dist.broadcast_object_list(box, src=0)
        return box[0]

    def sum_tensor(self, t: torch.Tensor) -> torch.Tensor:
        """``t`` summed over the group (in place; returned)."""
        if self.world_size > 1:
            dist.all_reduce(t, op=dist.ReduceOp.SUM)
        return t

    def sum_stats(self, stats: dict[str, float]) -> dict[str, float]:
        """Every statistic summed over the group. The names are the union of every rank's
        (a rank without rows has none; its missing values count 0), in one order."""
        if self.world_size == 1:
            return stats
        gathered: list[list[str] | None] = [None] * self.world_size
        dist.all_gather_object(gathered, sorted(stats))
        keys = sorted({k for names in gathered for k in names or []})
        t = torch.tensor([stats.get(k, 0.0) for k in keys], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.SUM)
        return {**stats, **dict(zip(keys, t.tolist(), strict=True))}


ONE_PROCESS = DataParallel(0, 1)
"""The group of one: a learner that trains alone."""


def backend_for(device: torch.device) -> str:
    """NCCL for CUDA tensors, gloo otherwise."""
    return "nccl" if device.type == "cuda" else "gloo"


def init_group(
    rank: int, world_size: int, master: str, backend: str = "gloo", timeout_s: float = 300.0
) -> DataParallel:
    """Join the group whose rank 0 listens at ``master`` (``host:port``)."""
    if not dist.is_initialized():
        dist.init_process_group(
            backend,
            init_method=f"tcp://{master}",
            rank=rank,
            world_size=world_size,
            timeout=timedelta(seconds=timeout_s),
        )
    return DataParallel(rank, world_size)


def from_environment(backend: str = "gloo") -> DataParallel:
    """The group ``torchrun`` describes in the environment (:data:`ONE_PROCESS` outside
    torchrun)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return ONE_PROCESS
    if not dist.is_initialized():
        dist.init_process_group(backend, timeout=timedelta(seconds=300))
    return DataParallel(dist.get_rank(), dist.get_world_size())


def leave_group(together: bool = False) -> None:
    """Leave the process group. ``together``: wait at a barrier first, so no rank tears down
    gloo's connections while a peer still uses them (a rank that left early can abort with
    "terminate called without an active exception" while rank 0 is still writing). Ray's
    shutdown leaves without it: a lost actor would never reach the barrier."""
    if dist.is_initialized():
        if together:
            dist.barrier()
        dist.destroy_process_group()


def shard_fsdp2(model: torch.nn.Module) -> Any:  # pragma: no cover - needs CUDA; untested
    """Wrap ``model`` with FSDP2 (``fully_shard`` per decoder layer, then the whole model),
    summing gradients across ranks. NOT TESTED here (see the module docstring)."""
    from torch.distributed.fsdp import fully_shard

    layers = getattr(getattr(model, "model", model), "layers", [])
    for layer in layers:
        fully_shard(layer)
    fully_shard(model)
    setter = getattr(model, "set_gradient_divide_factor", None)
    if setter is not None:
        setter(1.0)
    return model
