"""The data-parallel learner under torchrun (gloo): 2 processes make the same update as one
process on the same global batch, for every loss aggregation."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.conftest import TinyRun
from tests.train.dp_update import MODES, update
from verirl.models import tiny_model
from verirl.train.distributed import ONE_PROCESS, DataParallel

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def assert_same_update(
    a: tuple[dict[str, torch.Tensor], dict[str, float]],
    b: tuple[dict[str, torch.Tensor], dict[str, float]],
) -> None:
    (wa, sa), (wb, sb) = a, b
    assert sa.keys() == sb.keys()
    for k in ("train/loss", "train/grad_norm", "train/kl_ref", "train/clip_frac"):
        assert sa[k] == pytest.approx(sb[k], rel=1e-4, abs=1e-7), k
    delta = torch.cat([(wa[n] - wb[n]).flatten() for n in wa])
    size = torch.cat([wa[n].flatten() for n in wa])
    assert float(delta.norm()) < 1e-5 * float(size.norm())


def test_the_update_moves_every_weight() -> None:
    """Guards against a vacuous comparison: the update changes every weight, so equal weights
    after it mean equal updates."""
    plain, _ = update("token-mean")
    fresh = tiny_model(300, seed=4)
    moved = [n for n, p in fresh.named_parameters() if not torch.equal(p.detach(), plain[n])]
    assert len(moved) == len(plain)
    assert DataParallel(1, 2).shard(torch.arange(7)).tolist() == [1, 3, 5]


def test_the_group_of_one_fills_missing_gradients_and_keeps_its_statistics() -> None:
    """Alone, a parameter no row touched gets the zero gradient (the optimizer's step then
    matches the one a group makes), gradients present stay as they are, statistics too."""
    used, unused = torch.nn.Parameter(torch.ones(2)), torch.nn.Parameter(torch.ones(3))
    used.grad = torch.tensor([0.5, -1.0])
    ONE_PROCESS.reduce_gradients([used, unused])
    assert used.grad.tolist() == [0.5, -1.0] and unused.grad is not None
    assert unused.grad.tolist() == [0.0, 0.0, 0.0]
    assert ONE_PROCESS.sum_stats({"loss": 1.5}) == {"loss": 1.5}
    assert ONE_PROCESS.shard(torch.arange(3)).tolist() == [0, 1, 2]


@pytest.mark.slow
def test_two_gloo_processes_make_the_one_process_update(tmp_path: Path) -> None:
    out = tmp_path / "dp.pt"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")]),
        "OMP_NUM_THREADS": "1",
    }
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_port",
        str(_free_port()),
        str(ROOT / "tests" / "train" / "dp_update.py"),
        str(out),
    ]
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = torch.load(out, weights_only=False)
    assert results["world_size"] == 2
    for mode in MODES:
        assert_same_update(results[mode], update(mode))
    # activation checkpointing in the group: still the one-process (unchecked) update
    assert_same_update(results["token-mean+checkpointing"], update("token-mean"))
    # rows without signal skipped in the group: the one-process update that runs every row
    skipped = results["token-mean+silent groups"]
    assert skipped[1]["train/rows_trained"] == 0.5
    unskipped = update("token-mean", silent_groups=True, skip=False)
    (w_a, s_a), (w_b, s_b) = skipped, unskipped
    assert s_a["train/loss"] == pytest.approx(s_b["train/loss"], rel=1e-4, abs=1e-7)
    assert s_a["train/grad_norm"] == pytest.approx(s_b["train/grad_norm"], rel=1e-4)
    delta = torch.cat([(w_a[n] - w_b[n]).flatten() for n in w_a])
    assert float(delta.norm()) < 1e-5 * float(torch.cat([w.flatten() for w in w_a.values()]).norm())


@pytest.mark.slow
def test_verirl_train_under_torchrun_matches_one_process(
    tiny_run: TinyRun, reference_run: Path, tmp_path: Path
) -> None:
    """``torchrun --nproc_per_node 2 -m verirl.cli train``: rank 0 samples and writes, both
    ranks train; after 2 steps the checkpoint equals a one-process run's."""
    from safetensors.torch import load_file

    from verirl.train.metrics import read_metrics

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")]),
        "OMP_NUM_THREADS": "1",
        "PYTHONWARNINGS": "ignore",
    }
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_port",
        str(_free_port()),
        "-m",
        "verirl.cli",
        "train",
        *tiny_run(tmp_path / "dp", 2),
    ]
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert [r["step"] for r in read_metrics(tmp_path / "dp")] == [1, 2]  # rank 0 alone logs
    shown = proc.stdout + proc.stderr
    assert shown.count("run directory:") == 2  # two ranks ran (not one, as accelerate)
    # the ranks leave the group together after the loop (Backend.training_done): none tears
    # gloo down under a peer, which would abort it
    assert "terminate called" not in shown
    a = load_file(str(tmp_path / "dp" / "checkpoint-000002" / "trainable.safetensors"))
    # one process: the reference tiny run's second step (the same run, two steps further on;
    # the LR schedule is constant)
    b = load_file(str(reference_run / "checkpoint-000002" / "trainable.safetensors"))
    delta = torch.cat([(a[n] - b[n]).flatten() for n in b])
    size = torch.cat([b[n].flatten() for n in b])
    assert float(delta.norm()) < 1e-5 * float(size.norm())
