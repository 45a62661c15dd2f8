"""Asynchronous runs lose nothing on resume: checkpoint c holds the batches produced ahead
(c … c + k − 1) and the producer's state after them, so a resumed run ends with the
uninterrupted run's weights at every k; SIGKILLed at random moments and resumed each time,
every run's ledger says lost 0, trained twice 0 (docs/async.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.tiny_run import ROOT, tiny_run
from verirl.assembly import build
from verirl.backends.schedules import BUFFER
from verirl.config import load_config
from verirl.train.ledger import audit_run, read_ledger
from verirl.trainer import Trainer

SMALL = (
    "rollout.prompts_per_step=2",
    "rollout.group_size=2",
    "rollout.max_new_tokens=4",
    "optim.minibatches=1",
    "run.keep_checkpoints=5",
)
K2 = (
    "run.schedule.name=bounded_staleness",
    "run.schedule.params={max_staleness: 2, producer: thread}",
)


def _train(model_dir: Path, run_dir: Path, *extra: str, resume: bool = False) -> Any:
    cfg = load_config(None, [*tiny_run(model_dir, run_dir, 5, *SMALL), *extra])
    with Trainer(build(cfg), run_dir) as t:
        if resume:
            assert t.resume()
        t.fit()
        return {n: p.detach().clone() for n, p in t.parts.model.named_parameters()}


def test_a_checkpoint_holds_the_batches_produced_ahead_and_the_resume_is_exact(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """k = 2: checkpoint 2 holds batches 2 and 3 (sampled with policies 0 and 1, which a
    resumed run no longer has) and the producer's state after batch 3. A run resumed from
    it — as if killed right after writing it — trains them first, produces batch 4 again
    from that state (the same problems), and ends with the uninterrupted run's weights."""
    straight = tmp_path / "straight"
    want = _train(tiny_model_dir, straight, *K2)
    state = torch.load(straight / "checkpoint-000002" / "state.pt", weights_only=False)
    assert [i for i, _ in state[BUFFER]] == [2, 3]
    assert state["next_group"] == 4 * 2  # issued: batches 0-3, two problems each

    killed = tmp_path / "killed"
    killed.mkdir()
    shutil.copytree(straight / "checkpoint-000002", killed / "checkpoint-000002")
    # its ledger: the straight run's up to checkpoint 2, and the issue of batch 4 (sampled
    # with policy 2 by the process that died; its update of step 2 was lost)
    records = list(read_ledger(straight / "ledger.jsonl"))
    upto = records.index({"event": "checkpoint", "step": 2, "buffered": [2, 3]})
    base = [r for r in records[: upto + 1] if r["event"] != "issued" or r["batch"] < 4]
    kept = [*base, *(r for r in records if r["event"] == "issued" and r["batch"] == 4)]
    kept.append(next(r for r in records if r["event"] == "trained" and r["step"] == 2))
    (killed / "ledger.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
    got = _train(tiny_model_dir, killed, *K2, resume=True)
    assert all(torch.equal(want[n], got[n]) for n in want)
    assert any(not torch.equal(want[n], p) for n, p in _initial(tiny_model_dir).items())

    audit = audit_run(killed)
    assert (audit.lost, audit.trained_twice, audit.changed, audit.unrecorded) == (0, 0, 0, 0)
    assert (audit.issued, audit.trained, audit.restored, audit.resumes) == (10, 10, 2, 1)
    assert audit.reissued == 2 and audit.retrained == 1  # batch 4; the update of step 2
    start = [r for r in read_ledger(killed / "ledger.jsonl") if r["event"] == "start"][-1]
    assert start == {"event": "start", "step": 2, "restored": [2, 3]}
    assert "lost 0, trained twice 0" in (killed / "run.log").read_text()

    # resumed synchronously instead: the checkpoint's batches are trained all the same
    sync = tmp_path / "sync"
    sync.mkdir()
    shutil.copytree(straight / "checkpoint-000002", sync / "checkpoint-000002")
    (sync / "ledger.jsonl").write_text("".join(json.dumps(r) + "\n" for r in base))
    _train(tiny_model_dir, sync, resume=True)  # run.schedule: synchronous
    audit = audit_run(sync)
    assert (audit.lost, audit.trained_twice, audit.changed, audit.unrecorded) == (0, 0, 0, 0)
    assert (audit.issued, audit.trained, audit.restored) == (10, 10, 2)


def _initial(model_dir: Path) -> dict[str, torch.Tensor]:
    from verirl.models import load_policy

    model, _ = load_policy(str(model_dir))
    return {n: p.detach() for n, p in model.named_parameters()}


def _drive(model_dir: Path, root: Path, *args: str, timeout: float = 1500) -> dict[str, Any]:
    """Run ``tests/backends/kill_driver.py``; its report."""
    report = root / "report.json"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "src")]),
        "PYTHONWARNINGS": "ignore",
    }
    cmd = [sys.executable, "-m", "tests.backends.kill_driver", "--model", str(model_dir)]
    cmd += ["--root", str(root), "--json", str(report), *args]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(report.read_text())
    return result


def _check(report: dict[str, Any], kills: dict[str, int]) -> None:
    assert sorted(report) == sorted(kills)
    for name, sweep in report.items():
        t = sweep["totals"]
        assert sweep["kills"] == kills[name], name
        assert (t["lost"], t["trained_twice"], t["changed"], t["unrecorded"]) == (0, 0, 0, 0)
        assert t["pending"] == 0 and sweep["ended"], name  # every run was resumed to its end
        assert t["issued"] == t["trained"] > 0, name
        assert sweep["weights_equal"], name  # bit for bit the uninterrupted run's


def test_killed_at_random_moments_and_resumed_nothing_is_lost_or_trained_twice(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """Two SIGKILLs per staleness (k = 1 with a checkpoint every other step, k = 2 with
    one every step) of 4-step runs forked from one warm driver, each resumed to its end;
    the twenty-kill sweep is the slow test."""
    report = _drive(tiny_model_dir, tmp_path, "--ks", "1", "2", "--kills", "2", "--steps", "4")
    _check(report, {"k1": 2, "k2": 2})


@pytest.mark.slow
@pytest.mark.test_all  # ./run.sh test-all; test_killed_at_random_moments… is its stand-in
def test_twenty_kills_per_staleness_and_a_kill_of_the_real_cli(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """Twenty SIGKILLs per staleness (k = 1, 2), and one per staleness of `python -m
    verirl.cli train` with the producer process (which outlives its learner briefly)."""
    report = _drive(tiny_model_dir, tmp_path, "--ks", "1", "2", "--kills", "20", "--cli", "1")
    _check(report, {"k1": 20, "k2": 20, "cli-k1": 1, "cli-k2": 1})
