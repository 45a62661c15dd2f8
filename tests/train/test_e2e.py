"""End to end on a tiny random model: steps run, weights move, kill + resume is exact."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from tests.conftest import TinyRun
from tests.tiny_run import REFERENCE_STEPS, train_cli, wait_for_step
from verirl.train.checkpoint import latest_checkpoint
from verirl.train.metrics import read_metrics


def test_a_few_steps_change_the_parameters(reference_run: Path, tiny_model_dir: Path) -> None:
    before = load_file(str(tiny_model_dir / "model.safetensors"))
    after = load_file(str(reference_run / "final" / "model.safetensors"))  # the exported policy
    assert after.keys() == before.keys()
    unchanged = [n for n in before if torch.equal(after[n], before[n])]
    assert unchanged == [], "every parameter should receive gradient"
    rows = read_metrics(reference_run)
    assert [r["step"] for r in rows] == list(range(1, REFERENCE_STEPS + 1))
    assert all(r["train/grad_norm"] > 0 for r in rows)
    kept = sorted(p.name for p in reference_run.iterdir() if p.is_dir())
    assert kept == [f"checkpoint-{s:06d}" for s in range(1, REFERENCE_STEPS + 1)] + ["final"]
    samples = [json.loads(x) for x in (reference_run / "samples.jsonl").read_text().splitlines()]
    per_step = 4  # run.log_samples (its default)
    assert [s["step"] for s in samples] == sorted(list(range(1, REFERENCE_STEPS + 1)) * per_step)
    assert {"prompt", "response", "reward", "correct", "detail"} <= samples[0].keys()


@pytest.mark.slow
def test_killed_then_resumed_run_matches_uninterrupted_run(
    tiny_run: TinyRun, reference_run: Path, tmp_path: Path
) -> None:
    straight = reference_run  # the same tiny run, uninterrupted
    killed = tmp_path / "killed"
    proc = train_cli(tiny_run(killed, 4))
    wait_for_step(killed, 2, proc, limit=600)
    time.sleep(0.3)  # land the kill somewhere inside step 3 (or its checkpoint write)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    resumed_from = latest_checkpoint(killed)
    assert resumed_from is not None and resumed_from.name < "checkpoint-000004"

    proc = train_cli(["--resume", str(killed)])
    assert proc.wait(timeout=600) == 0, proc.stderr.read()[-3000:]

    a, b = read_metrics(straight), read_metrics(killed)
    assert [r["step"] for r in b] == [1, 2, 3, 4]
    # run.keep_checkpoints (1 by default): the newest checkpoint, what --resume needs, and
    # the exported weights
    assert sorted(p.name for p in killed.iterdir() if p.is_dir()) == ["checkpoint-000004", "final"]
    for ra, rb in zip(a, b, strict=True):
        for key in ("train/loss", "rollout/reward", "train/grad_norm", "curriculum/seed_counter"):
            assert rb[key] == pytest.approx(ra[key], rel=1e-5, abs=1e-7), (ra["step"], key)
    wa = load_file(str(straight / "checkpoint-000004" / "trainable.safetensors"))
    wb = load_file(str(killed / "checkpoint-000004" / "trainable.safetensors"))
    assert wa.keys() == wb.keys()
    for name in wa:
        assert torch.allclose(wa[name], wb[name], atol=1e-6), name
    sa = torch.load(straight / "checkpoint-000004" / "state.pt", weights_only=False)
    sb = torch.load(killed / "checkpoint-000004" / "state.pt", weights_only=False)
    assert sa["curriculum"] == sb["curriculum"]
    assert sa["next_group"] == sb["next_group"]
