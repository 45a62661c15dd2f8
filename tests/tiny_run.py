"""One tiny training run for the tests that train: a tiny random model (``tiny_model_dir``),
the test reward ``test_even_tokens`` (a learnable signal without a real verifier), one CPU
thread, inline verification, no evaluation — the overrides every training test starts from
(the ``tiny_run`` fixture of ``tests/conftest.py`` binds the model), and the CLI helpers the
kill-and-resume tests share."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_STEPS = 4
"""Steps of the ``reference_run`` fixture (tests/conftest.py): the tiny run trained once."""


def tiny_run(model_dir: Path, run_dir: Path, steps: int = 3, *extra: str) -> list[str]:
    """The overrides of a tiny run of ``steps`` steps in ``run_dir`` (3 prompts × 4 samples,
    12 new tokens, two minibatches, a checkpoint every step, the newest kept), then ``extra``
    (later wins)."""
    return [
        f"model.name={model_dir}",
        "model.dtype=fp32",
        "run.plugins=[tests.train.plugin_rewards]",
        "reward.name=test_even_tokens",
        "verification.executor.name=inline",
        "optim.optimizer.name=adamw",  # the library's default (the CLI's is the default job's)
        f"run.dir={run_dir.parent}",
        f"run.name={run_dir.name}",
        f"run.steps={steps}",
        "run.save_every=1",
        "run.threads=1",
        "rollout.prompts_per_step=3",
        "rollout.group_size=4",
        "rollout.max_new_tokens=12",
        "optim.lr=3e-3",
        "optim.weight_decay=0.0",
        "optim.minibatches=2",
        "optim.micro_batch_tokens=200",
        "eval.before_and_after=false",
        *extra,
    ]


def train_cli(args: list[str]) -> subprocess.Popen[str]:
    """``python -m verirl.cli train ARGS`` from the repository root, output captured."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")]),
        "PYTHONWARNINGS": "ignore",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "verirl.cli", "train", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_step(run_dir: Path, step: int, proc: subprocess.Popen[str], limit: float) -> None:
    """Return once ``run_dir/metrics.jsonl`` holds step ``step``; fail when ``proc`` exits
    first or ``limit`` seconds pass."""
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
