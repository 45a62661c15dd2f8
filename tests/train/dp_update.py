"""One learner update per loss aggregation on a fixed batch, in this process or as one rank of
a ``torchrun`` group; rank 0 writes the weights and statistics to ``argv[1]``.

Used by tests/train/test_distributed.py (torchrun) and tests/integrations/ray/test_ray.py.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from typing import Any

import torch

from verirl.config import load_config
from verirl.device import resolve_placement
from verirl.models import tiny_model
from verirl.train.distributed import ONE_PROCESS, DataParallel, from_environment, leave_group
from verirl.train.learner import Learner, LearnerSettings, collate
from verirl.types import Problem, Rollout, Verdict

MODES = ["token-mean", "seq-mean-token-mean", "seq-mean-token-sum", "seq-mean-token-sum-norm"]
VOCAB = 300


def rollouts() -> list[Rollout]:
    """Four groups of three responses of uneven lengths (so shards are uneven too)."""
    g = torch.Generator().manual_seed(0)
    out = []
    problem = Problem("addition", 0, 0, "x", "1")
    for group, plen in enumerate([5, 9, 5, 7]):
        prompt = tuple(torch.randint(3, VOCAB, (plen,), generator=g).tolist())
        for k in range(3):
            n = 1 + 3 * k + group
            resp = tuple(torch.randint(3, VOCAB, (n,), generator=g).tolist())
            lp = tuple((-torch.rand(n, generator=g)).tolist())
            v = Verdict(float((k + group) % 3), False)
            out.append(Rollout(problem, group, prompt, resp, lp, "t", "stop", verdict=v))
    return out


def update(
    mode: str,
    dp: DataParallel = ONE_PROCESS,
    checkpointing: bool = False,
    silent_groups: bool = False,
    skip: bool = True,
) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
    """A fresh tiny model, one ``Learner.update`` (2 epochs × 2 minibatches, recomputed old
    log-probs, k3 KL to the reference; activation checkpointing when asked); the new weights
    and the statistics. ``silent_groups``: groups 1 and 3 get advantage 0 and there is no KL
    term, so their rows carry no gradient (skipped unless ``skip`` is False)."""
    cfg = load_config(
        None,
        [
            "model.dtype=fp32",
            f"loss.aggregation={mode}",
            "loss.terms={}" if silent_groups else "loss.terms.kl.coef=0.05",
            f"optim.skip_zero_advantage_rows={str(skip).lower()}",
            "optim.lr=1e-2",
            "optim.epochs=2",
            "optim.minibatches=2",
            "optim.micro_batch_tokens=40",
            "optim.old_logprobs=recompute",
            "optim.weight_decay=0.0",
            f"optim.activation_checkpointing={str(checkpointing).lower()}",
        ],
    )
    model = tiny_model(VOCAB, seed=4)
    settings = LearnerSettings.from_config(
        cfg, resolve_placement("cpu", "fp32"), activation_checkpointing=True
    )
    learner = Learner(model, settings, 1, dp)
    rs = rollouts()
    adv = torch.randn(len(rs), 12, generator=torch.Generator().manual_seed(5))
    if silent_groups:
        adv[torch.tensor([r.group in (1, 3) for r in rs])] = 0.0
    batch = collate([replace(r) for r in rs], adv, pad_id=0)
    stats = learner.update(batch)
    return {n: p.detach().clone() for n, p in model.named_parameters()}, stats


def main(out: str) -> None:
    torch.set_num_threads(1)
    dp = from_environment("gloo")
    results: dict[str, Any] = {m: update(m, dp) for m in MODES}
    results["token-mean+checkpointing"] = update("token-mean", dp, checkpointing=True)
    results["token-mean+silent groups"] = update("token-mean", dp, silent_groups=True)
    if dp.rank == 0:
        results["world_size"] = dp.world_size
        torch.save(results, out)
    leave_group()


if __name__ == "__main__":
    main(sys.argv[1])
