"""Checkpoints are atomic: a kill at any moment leaves only loadable checkpoints."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from verirl.train.checkpoint import latest_checkpoint, load_checkpoint, save_checkpoint

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
        model = _model()
        state: dict = {}
        step = load_checkpoint(latest, model, state.update)
        assert all(torch.all(p == float(step)) for p in model.parameters())
        assert torch.all(state["payload"] == step)
