"""Kill a training run at a random moment (maybe inside a checkpoint write), damage its newest
checkpoint, and resume: the run continues from the previous checkpoint and ends exactly where
an uninterrupted run ends; config.yaml is rewritten only after a checkpoint has loaded."""

from __future__ import annotations

import random
import shutil
import signal
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from tests.conftest import TinyRun
from tests.tiny_run import train_cli, wait_for_step
from verirl.train.checkpoint import STATE, WEIGHTS, resumable_checkpoint
from verirl.train.metrics import read_metrics


@pytest.mark.slow
def test_resume_falls_back_past_a_damaged_checkpoint(
    tiny_run: TinyRun, reference_run: Path, tmp_path: Path
) -> None:
    rng = random.Random(1)
    straight = reference_run  # the same tiny run, uninterrupted
    killed = tmp_path / "killed"
    proc = train_cli(tiny_run(killed, 4, "run.keep_checkpoints=2"))  # one to fall back to
    wait_for_step(killed, 2, proc, limit=600)
    deadline = time.time() + 300
    while len(list(killed.glob("checkpoint-*"))) < 2 and time.time() < deadline:
        time.sleep(0.02)  # step 2's checkpoint follows its metrics line
    time.sleep(rng.uniform(0.0, 0.5))  # inside step 3, or its checkpoint write
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    checkpoints = sorted(killed.glob("checkpoint-*"))
    assert len(checkpoints) >= 2
    newest, previous = checkpoints[-1], checkpoints[-2]
    (newest / STATE).write_bytes((newest / STATE).read_bytes()[:100])  # truncated state.pt
    path, damaged = resumable_checkpoint(killed)
    assert path == previous and "state.pt" in damaged[0]

    proc = train_cli(["--resume", str(killed)])
    assert proc.wait(timeout=600) == 0, proc.stderr.read()[-3000:]
    a, b = read_metrics(straight), read_metrics(killed)
    assert [r["step"] for r in b] == [1, 2, 3, 4]
    for ra, rb in zip(a, b, strict=True):
        for key in ("train/loss", "rollout/reward", "train/grad_norm"):
            assert rb[key] == pytest.approx(ra[key], rel=1e-5, abs=1e-7), (ra["step"], key)
    wa = load_file(str(straight / "checkpoint-000004" / WEIGHTS))
    wb = load_file(str(killed / "checkpoint-000004" / WEIGHTS))
    for name in wa:
        assert torch.allclose(wa[name], wb[name], atol=1e-6), name


@pytest.mark.slow
def test_failed_resume_leaves_config_yaml_alone(reference_run: Path, tmp_path: Path) -> None:
    run = shutil.copytree(reference_run, tmp_path / "run")
    for ckpt in run.glob("checkpoint-*"):
        (ckpt / WEIGHTS).write_bytes(b"")
    before = (run / "config.yaml").read_text()
    proc = train_cli(["--resume", str(run), "run.steps=5"])
    assert proc.wait(timeout=600) == 2
    err = proc.stderr.read() + proc.stdout.read()
    assert "no intact checkpoint" in err and "trainable.safetensors" in err
    assert "Traceback" not in err
    assert (run / "config.yaml").read_text() == before
