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
from tests.tiny_run import train_cli, wait_for_step
from verirl.assembly import build
from verirl.config import load_config
from verirl.train.checkpoint import latest_checkpoint
from verirl.train.metrics import read_metrics
from verirl.trainer import Trainer


def test_a_few_steps_change_the_parameters(tiny_run: TinyRun, tmp_path: Path) -> None:
    cfg = load_config(None, tiny_run(tmp_path / "run", 3))
    trainer = Trainer(build(cfg), tmp_path / "run")
    before = {n: p.detach().clone() for n, p in trainer.parts.model.named_parameters()}
    trainer.fit()
    after = trainer.parts.model.named_parameters()
    changed = [n for n, p in after if not torch.equal(p, before[n])]
    assert len(changed) == len(before), "every parameter should receive gradient"
    rows = read_metrics(tmp_path / "run")
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert all(r["train/grad_norm"] > 0 for r in rows)
    assert latest_checkpoint(tmp_path / "run").name == "checkpoint-000003"
    samples = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert [s["step"] for s in samples] == [1] * 4 + [2] * 4 + [3] * 4
    assert {"prompt", "response", "reward", "correct", "detail"} <= samples[0].keys()
    assert (tmp_path / "run" / "final" / "config.json").is_file()  # the exported policy


@pytest.mark.slow
def test_killed_then_resumed_run_matches_uninterrupted_run(
    tiny_run: TinyRun, tmp_path: Path
) -> None:
    straight = tmp_path / "straight"
    proc = train_cli(tiny_run(straight, 4))
    assert proc.wait(timeout=600) == 0, proc.stderr.read()[-3000:]

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
