"""Atomic checkpoints: a SIGKILL at any moment never leaves one that cannot be loaded.

A checkpoint is a directory ``checkpoint-<step>`` holding the trainable weights (all weights
for full fine-tuning, the adapter for LoRA; safetensors), and ``state.pt`` with the optimizer,
LR schedule, every RNG, the curriculum state and the step. It is written into a temporary
sibling directory, every file is fsynced, and only then is the directory renamed into place —
``rename`` is atomic, so a ``checkpoint-*`` directory is either complete or absent. Leftover
temporary directories from a killed save are ignored and cleaned up by the next save.
"""

from __future__ import annotations

import os
import random
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import load_file, save_file

_NAME = re.compile(r"^checkpoint-(\d+)$")
WEIGHTS = "trainable.safetensors"
STATE = "state.pt"


def save_checkpoint(
    run_dir: Path, step: int, model: torch.nn.Module, state: dict[str, Any], keep: int = 2
) -> Path:
    """Write checkpoint ``step`` atomically; keep the ``keep`` most recent ones."""
    run_dir.mkdir(parents=True, exist_ok=True)
    final = run_dir / f"checkpoint-{step:06d}"
    tmp = run_dir / f".tmp-checkpoint-{step:06d}-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    weights = {
        name: p.detach().to("cpu").contiguous().clone()
        for name, p in model.named_parameters()
        if p.requires_grad
    }
    save_file(weights, str(tmp / WEIGHTS))
    full_state = {
        **state,
        "step": step,
        "rng": {
            "python": random.getstate(),
            "numpy": np.random.get_state(),
            "torch": torch.get_rng_state(),
        },
    }
    torch.save(full_state, tmp / STATE)
    for f in tmp.iterdir():
        _fsync(f)
    _fsync(tmp)
    if final.exists():  # re-saving the same step (e.g. after a resume)
        shutil.rmtree(final)
    os.replace(tmp, final)
    _fsync(run_dir)
    _prune(run_dir, keep)
    return final


def latest_checkpoint(run_dir: Path) -> Path | None:
    """The complete checkpoint with the highest step, or None."""
    if not run_dir.is_dir():
        return None
    found = [(int(m.group(1)), p) for p in run_dir.iterdir() if (m := _NAME.match(p.name))]
    found = [(s, p) for s, p in found if (p / STATE).is_file() and (p / WEIGHTS).is_file()]
    return max(found)[1] if found else None


def load_checkpoint(
    path: Path, model: torch.nn.Module, restore: Callable[[dict[str, Any]], None]
) -> int:
    """Load weights into ``model``, hand the saved state to ``restore``, reset the global RNGs;
    return the saved step (the number of completed steps)."""
    weights = load_file(str(path / WEIGHTS))
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    missing = trainable - set(weights)
    unexpected = set(weights) - trainable
    if missing or unexpected:
        raise ValueError(
            f"checkpoint {path} does not match the model: missing {sorted(missing)[:5]}, "
            f"unexpected {sorted(unexpected)[:5]} (was it written with another model or LoRA "
            "setting?)"
        )
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, tensor in weights.items():
            params[name].copy_(tensor)
    state = torch.load(path / STATE, weights_only=False)
    restore(state)
    rng = state["rng"]
    random.setstate(rng["python"])
    np.random.set_state(rng["numpy"])
    torch.set_rng_state(rng["torch"])
    return int(state["step"])


def _prune(run_dir: Path, keep: int) -> None:
    found = sorted((int(m.group(1)), p) for p in run_dir.iterdir() if (m := _NAME.match(p.name)))
    for _, p in found[:-keep]:
        shutil.rmtree(p, ignore_errors=True)
    for p in run_dir.glob(".tmp-checkpoint-*"):
        if not p.name.endswith(f"-{os.getpid()}"):
            shutil.rmtree(p, ignore_errors=True)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
