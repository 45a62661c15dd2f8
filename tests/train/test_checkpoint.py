"""Checkpoints are atomic: a kill at any moment leaves only loadable checkpoints."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from verirl.errors import CheckpointError
from verirl.train.checkpoint import (
    MANIFEST,
    STATE,
    WEIGHTS,
    latest_checkpoint,
    load_checkpoint,
    resumable_checkpoint,
    save_checkpoint,
    validate_checkpoint,
)

_WRITER = """
import sys, torch
from pathlib import Path
from verirl.train.checkpoint import save_checkpoint
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.Linear(256, 256))
step = 0
while True:
    step += 1
    with torch.no_grad():
        for p in model.parameters():
            p.fill_(float(step))
    state = {"payload": torch.zeros(200_000) + step}
    save_checkpoint(Path(sys.argv[1]), step, model, state, keep=2)
"""


def _model() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.Linear(256, 256))


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    m = _model()
    save_checkpoint(tmp_path, 3, m, {"x": 1})
    other = _model()
    seen = {}
    step = load_checkpoint(latest_checkpoint(tmp_path), other, seen.update)
    assert step == 3 and seen["x"] == 1
    for a, b in zip(m.parameters(), other.parameters(), strict=True):
        assert torch.equal(a, b)


def test_keep_prunes_old_checkpoints(tmp_path: Path) -> None:
    m = _model()
    for s in range(1, 5):
        save_checkpoint(tmp_path, s, m, {}, keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint-000003", "checkpoint-000004"]


def test_mismatched_model_is_refused_with_a_reason(tmp_path: Path) -> None:
    save_checkpoint(tmp_path, 1, _model(), {})
    with pytest.raises(ValueError, match="does not match the model"):
        load_checkpoint(latest_checkpoint(tmp_path), torch.nn.Linear(3, 3), lambda s: None)


@pytest.mark.slow
def test_sigkill_at_random_moments_never_leaves_a_broken_checkpoint(tmp_path: Path) -> None:
    rng = random.Random(0)
    for trial in range(6):
        run = tmp_path / f"run{trial}"
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(run)])
        deadline = time.time() + 120
        while latest_checkpoint(run) is None and time.time() < deadline:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.8))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        latest = latest_checkpoint(run)
        assert latest is not None
        validate_checkpoint(latest)  # the manifest matches whatever moment the kill landed
        model = _model()
        state: dict = {}
        step = load_checkpoint(latest, model, state.update)
        assert all(torch.all(p == float(step)) for p in model.parameters())
        assert torch.all(state["payload"] == step)


# ---- manifests, validation, fallback to the newest intact checkpoint -----------------------
def _run_with_checkpoints(tmp_path: Path, steps: int = 3) -> Path:
    m = _model()
    for s in range(1, steps + 1):
        with torch.no_grad():
            for p in m.parameters():
                p.fill_(float(s))
        save_checkpoint(tmp_path, s, m, {"payload": s}, keep=steps)
    return tmp_path


def _truncate(f: Path) -> None:
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2])


def _flip_byte(f: Path) -> None:
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0xFF
    f.write_bytes(bytes(data))


def test_manifest_is_written_and_lists_every_file(tmp_path: Path) -> None:
    path = save_checkpoint(tmp_path, 1, _model(), {})
    manifest = json.loads((path / MANIFEST).read_text())
    assert set(manifest["files"]) == {WEIGHTS, STATE} and manifest["step"] == 1
    for name, meta in manifest["files"].items():
        assert meta["size"] == (path / name).stat().st_size
        assert meta["sha256"] == hashlib.sha256((path / name).read_bytes()).hexdigest()
    validate_checkpoint(path)


@pytest.mark.parametrize(
    ("file", "damage", "message"),
    [
        (STATE, _truncate, "state.pt has"),
        (STATE, lambda f: f.write_bytes(b""), "state.pt has 0 bytes"),
        (WEIGHTS, _flip_byte, "trainable.safetensors does not match its SHA-256"),
        (WEIGHTS, lambda f: f.unlink(), "trainable.safetensors is missing"),
        (MANIFEST, lambda f: f.write_text("{"), "manifest.json is unreadable"),
    ],
)
def test_damage_is_reported_naming_the_file_and_step(tmp_path: Path, file, damage, message) -> None:  # type: ignore[no-untyped-def]
    run = _run_with_checkpoints(tmp_path)
    newest = run / "checkpoint-000003"
    damage(newest / file)
    with pytest.raises(CheckpointError, match=message) as err:
        validate_checkpoint(newest)
    assert "step 3" in str(err.value)
    path, damaged = resumable_checkpoint(run)
    assert path == run / "checkpoint-000002"
    assert len(damaged) == 1 and message in damaged[0] and "\n" not in damaged[0]
    model, state = _model(), {}
    assert load_checkpoint(path, model, state.update) == 2
    assert all(torch.all(p == 2.0) for p in model.parameters())


def test_damage_without_manifest_is_caught_by_loading(tmp_path: Path) -> None:
    run = _run_with_checkpoints(tmp_path)
    for ckpt in run.iterdir():
        (ckpt / MANIFEST).unlink()  # as written before manifests existed
    validate_checkpoint(run / "checkpoint-000003")
    _truncate(run / "checkpoint-000003" / STATE)
    path, damaged = resumable_checkpoint(run)
    assert path == run / "checkpoint-000002" and "state.pt does not load" in damaged[0]
    with pytest.raises(CheckpointError, match=r"state\.pt does not load"):
        load_checkpoint(run / "checkpoint-000003", _model(), lambda s: None)


def test_all_damaged_raises_listing_each(tmp_path: Path) -> None:
    run = _run_with_checkpoints(tmp_path, steps=2)
    for ckpt in run.iterdir():
        _truncate(ckpt / WEIGHTS)
    with pytest.raises(CheckpointError, match="no intact checkpoint") as err:
        resumable_checkpoint(run)
    assert "step 2" in str(err.value) and "step 1" in str(err.value)
    assert resumable_checkpoint(tmp_path / "empty") == (None, [])
