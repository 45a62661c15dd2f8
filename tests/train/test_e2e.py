"""End to end on a tiny random model: steps run, weights move, kill + resume is exact."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from verirl.config import load_config
from verirl.train.checkpoint import latest_checkpoint
from verirl.train.loop import Trainer
from verirl.train.metrics import read_metrics

ROOT = Path(__file__).resolve().parents[2]


def _overrides(model_dir: Path, run_dir: Path, steps: int = 4) -> list[str]:
    return [
        f"model.name={model_dir}",
        "run.plugins=[tests.train.plugin_rewards]",
        "reward.name=test_even_tokens",
        "optim.weight_decay=0.0",
        f"run.dir={run_dir.parent}",
        f"run.name={run_dir.name}",
        f"run.steps={steps}",
        "run.save_every=1",
        "run.keep_checkpoints=5",
        "run.threads=1",
        "rollout.prompts_per_step=3",
        "rollout.group_size=4",
        "rollout.max_new_tokens=12",
        "optim.lr=3e-3",
        "optim.minibatches=2",
        "optim.micro_batch_tokens=200",
        "eval.before_and_after=false",
    ]


def test_a_few_steps_change_the_parameters(tiny_model_dir: Path, tmp_path: Path) -> None:
    cfg = load_config(None, _overrides(tiny_model_dir, tmp_path / "run", steps=3))
    trainer = Trainer(cfg, tmp_path / "run")
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.fit()
    changed = [n for n, p in trainer.model.named_parameters() if not torch.equal(p, before[n])]
    assert len(changed) == len(before), "every parameter should receive gradient"
    rows = read_metrics(tmp_path / "run")
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert all(r["train/grad_norm"] > 0 for r in rows)
    assert latest_checkpoint(tmp_path / "run").name == "checkpoint-000003"
    samples = [json.loads(x) for x in (tmp_path / "run" / "samples.jsonl").read_text().splitlines()]
    assert [s["step"] for s in samples] == [1] * 4 + [2] * 4 + [3] * 4
    assert {"prompt", "response", "reward", "correct", "detail"} <= samples[0].keys()
    assert (tmp_path / "run" / "final" / "config.json").is_file()  # the exported policy


def _cli(args: list[str]) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore"}
    return subprocess.Popen(
        [sys.executable, "-m", "verirl.cli", "train", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_step(run_dir: Path, step: int, proc: subprocess.Popen[str], limit: float) -> None:
    deadline = time.time() + limit
    path = run_dir / "metrics.jsonl"
    while time.time() < deadline:
        if path.exists() and any(
            json.loads(x)["step"] >= step for x in path.read_text().splitlines() if x.strip()
        ):
            return
        if proc.poll() is not None:
            raise AssertionError(f"training exited early: {proc.stderr.read()[-2000:]}")
        time.sleep(0.05)
    raise AssertionError(f"step {step} not reached in {limit} s")


@pytest.mark.slow
def test_killed_then_resumed_run_matches_uninterrupted_run(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    straight = tmp_path / "straight"
    proc = _cli(_overrides(tiny_model_dir, straight))
    assert proc.wait(timeout=600) == 0, proc.stderr.read()[-3000:]

    killed = tmp_path / "killed"
    proc = _cli(_overrides(tiny_model_dir, killed))
    _wait_for_step(killed, 2, proc, limit=600)
    time.sleep(0.3)  # land the kill somewhere inside step 3 (or its checkpoint write)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    resumed_from = latest_checkpoint(killed)
    assert resumed_from is not None and resumed_from.name < "checkpoint-000004"

    proc = _cli(["--resume", str(killed)])
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
