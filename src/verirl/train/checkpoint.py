"""Atomic checkpoints: a SIGKILL at any moment never leaves one that cannot be loaded.

A checkpoint is a directory ``checkpoint-<step>`` holding the trainable weights (all weights
for full fine-tuning, the adapter for LoRA; safetensors), and ``state.pt`` with the optimizer,
LR schedule, every RNG, the curriculum state and the step. It is written into a temporary
sibling directory, every file is fsynced, and only then is the directory renamed into place —
``rename`` is atomic, so a ``checkpoint-*`` directory is either complete or absent. Leftover
temporary directories from a killed save are ignored and cleaned up by the next save.

Renaming protects against a kill, not against damage afterwards (a full disk, a partial copy
of the run directory, a bad sector). So every checkpoint also holds ``manifest.json``, written
LAST: each file's name, size and SHA-256. :func:`validate_checkpoint` checks the manifest, the
sizes and hashes, and that every file loads; :func:`resumable_checkpoint` walks a run
directory from the newest checkpoint down, reports each damaged one in one line naming the
file, and returns the newest intact one.
"""

from __future__ import annotations

import hashlib
import json
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

from verirl.errors import CheckpointError

_NAME = re.compile(r"^checkpoint-(\d+)$")
WEIGHTS = "trainable.safetensors"
STATE = "state.pt"
MANIFEST = "manifest.json"
MANIFEST_FORMAT = 1


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
    _write_manifest(tmp, step)  # last: a manifest vouches only for files already on disk
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


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _write_manifest(directory: Path, step: int) -> None:
    files = {
        f.name: {"size": f.stat().st_size, "sha256": _sha256(f)}
        for f in sorted(directory.iterdir())
        if f.is_file() and f.name != MANIFEST
    }
    body = {"format": MANIFEST_FORMAT, "step": step, "files": files}
    target = directory / MANIFEST
    target.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    _fsync(target)


def checkpoint_step(path: Path) -> int | None:
    """The step in a ``checkpoint-<step>`` directory name, or None."""
    m = _NAME.match(path.name)
    return int(m.group(1)) if m else None


def validate_checkpoint(path: Path) -> None:
    """Raise :class:`~verirl.errors.CheckpointError` naming the file (and the step) unless the
    checkpoint at ``path`` is intact: its manifest reads, every listed file is there with the
    listed size and SHA-256, and the weights and the state load. A checkpoint written before
    manifests existed (no ``manifest.json``) is checked by loading its files only."""
    step = checkpoint_step(path)
    where = f"checkpoint {path} (step {step})" if step is not None else f"checkpoint {path}"
    if not path.is_dir():
        raise CheckpointError(f"{where}: not a directory")
    manifest_path = path / MANIFEST
    if manifest_path.exists():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            files = manifest["files"]
            if not isinstance(files, dict):
                raise TypeError("'files' is not a mapping")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CheckpointError(f"{where}: {MANIFEST} is unreadable ({exc})") from exc
        for name in (WEIGHTS, STATE):
            if name not in files:
                raise CheckpointError(f"{where}: {MANIFEST} does not list {name}")
        for name, meta in files.items():
            f = path / name
            if not f.is_file():
                raise CheckpointError(f"{where}: {name} is missing")
            size = f.stat().st_size
            if size != meta.get("size"):
                raise CheckpointError(
                    f"{where}: {name} has {size} bytes, the manifest says {meta.get('size')} "
                    "(truncated or replaced)"
                )
            if _sha256(f) != meta.get("sha256"):
                raise CheckpointError(f"{where}: {name} does not match its SHA-256 (corrupt)")
    for name in (WEIGHTS, STATE):
        if not (path / name).is_file():
            raise CheckpointError(f"{where}: {name} is missing")
    _load_weights(path, where)
    _load_state(path, where)


def _load_weights(path: Path, where: str) -> dict[str, torch.Tensor]:
    try:
        return load_file(str(path / WEIGHTS))
    except Exception as exc:  # safetensors raises its own error types for damaged files
        raise CheckpointError(f"{where}: {WEIGHTS} does not load ({exc})") from exc


def _load_state(path: Path, where: str) -> dict[str, Any]:
    try:
        state = torch.load(path / STATE, weights_only=False)
    except Exception as exc:  # torch.load raises EOFError, RuntimeError, UnpicklingError...
        raise CheckpointError(f"{where}: {STATE} does not load ({exc})") from exc
    if not isinstance(state, dict) or "step" not in state or "rng" not in state:
        raise CheckpointError(f"{where}: {STATE} does not hold a training state")
    return state


def resumable_checkpoint(run_dir: Path) -> tuple[Path | None, list[str]]:
    """The newest intact checkpoint of ``run_dir`` and one line per damaged newer checkpoint
    (naming the file), newest first. ``(None, [])`` when the run has no checkpoint; raises
    :class:`~verirl.errors.CheckpointError` listing every problem when it has checkpoints
    but none is intact."""
    if not run_dir.is_dir():
        return None, []
    found = sorted(
        ((s, p) for p in run_dir.iterdir() if (s := checkpoint_step(p)) is not None),
        reverse=True,
    )
    damaged: list[str] = []
    for _, path in found:
        try:
            validate_checkpoint(path)
        except CheckpointError as exc:
            damaged.append(str(exc))
            continue
        return path, damaged
    if damaged:
        raise CheckpointError(f"no intact checkpoint in {run_dir}: " + "; ".join(damaged))
    return None, []


def load_checkpoint(
    path: Path, model: torch.nn.Module, restore: Callable[[dict[str, Any]], None]
) -> int:
    """Load weights into ``model``, hand the saved state to ``restore``, reset the global RNGs;
    return the saved step (the number of completed steps). A file that does not load raises
    :class:`~verirl.errors.CheckpointError` naming it."""
    step = checkpoint_step(path)
    where = f"checkpoint {path} (step {step})" if step is not None else f"checkpoint {path}"
    weights = _load_weights(path, where)
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    missing = trainable - set(weights)
    unexpected = set(weights) - trainable
    if missing or unexpected:
        raise CheckpointError(
            f"checkpoint {path} does not match the model: missing {sorted(missing)[:5]}, "
            f"unexpected {sorted(unexpected)[:5]} (was it written with another model or LoRA "
            "setting?)"
        )
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, tensor in weights.items():
            params[name].copy_(tensor)
    state = _load_state(path, where)
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
