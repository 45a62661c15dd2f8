"""The bounded_staleness schedule at k = 1 with every collection mode: multi-turn (TCPO) and
process-verified (Coq) collection train one version stale, verified on the producer side
only — the learner's process starts no verifier pool and no proof checker of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.provers.coq.marks import needs_coq
from tests.tiny_run import tiny_run
from verirl.assembly import build
from verirl.config import load_config
from verirl.train.metrics import read_metrics
from verirl.trainer import Trainer


def _base(model_dir: Path, run_dir: Path, steps: int = 3) -> list[str]:
    """The shared tiny run, 2 prompts × 2 samples of fixed texts scored by the environments,
    one version stale."""
    return tiny_run(
        model_dir,
        run_dir,
        steps,
        "reward.name=env",
        "run.save_every=0",
        "rollout.prompts_per_step=2",
        "rollout.group_size=2",
        "rollout.max_new_tokens=8",
        "rollout.few_shot=[]",
        "run.schedule.name=bounded_staleness",
        "run.schedule.params.max_staleness=1",
        "run.schedule.params.producer=thread",
        "run.plugins=[tests.train.plugin_engines]",
        "rollout.engine.name=test_fixed_text",
        "optim.old_logprobs=recompute",
    )


def _check_one_stale(trainer: Trainer, run_dir: Path) -> list[dict[str, float]]:
    rows = read_metrics(run_dir)
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert [r["async/staleness_max"] for r in rows] == [0.0, 1.0, 1.0]
    assert all(r["async/dropped"] == 0 and r["sync/mismatch"] == 0 for r in rows)
    assert any(r["train/grad_norm"] > 0 for r in rows)
    # one verifier pool: the producer's; the learner's executor never started a pool
    assert not trainer.parts.verifiers.executor.started  # type: ignore[attr-defined]
    assert trainer.parts.verifiers.provers.started == []
    return rows


def test_k1_with_multi_turn_tcpo_collection(tiny_model_dir: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "tcpo"
    cfg = load_config(
        None,
        [
            *_base(tiny_model_dir, run_dir),
            "verification.executor.name=threads",
            "rollout.engine.params={texts: ['so \\boxed{1}', 'it is \\boxed{24}', 'hmm']}",
            "reward.name=cer",
            "rollout.collector.name=multi_turn",
            "rollout.collector.params={max_turns: 2, stop_on_success: false, score_map: clip, "
            "counterfactual: true, cf_top_l: 1, cf_alternatives: 2}",
            "credit.name=tcpo",
        ],
    )
    with Trainer(build(cfg), run_dir) as trainer:
        trainer.fit()
        rollouts = trainer.last_rollouts
        _check_one_stale(trainer, run_dir)
    assert all(len(r.turns) == 2 for r in rollouts)  # multi-turn rollouts reached the learner
    assert all("cer" in r.verdict.extra for r in rollouts if r.verdict)


@pytest.mark.coq
@needs_coq
def test_k1_with_process_verified_coq_collection(tiny_model_dir: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "coq"
    cfg = load_config(
        None,
        [
            *_base(tiny_model_dir, run_dir),
            "verification.executor.name=inline",
            "rollout.engine.params={texts: ['```coq\nProof. reflexivity. Qed.\n```', "
            "'```coq\nProof. intros. auto. Qed.\n```']}",
            "curriculum.environments=[coq_proofs]",
            "credit.name=process",
            "provers.coq.workers=1",
        ],
    )
    with Trainer(build(cfg), run_dir) as trainer:
        trainer.fit()
        rollouts = trainer.last_rollouts
        rows = _check_one_stale(trainer, run_dir)
    assert all(r.verdict and r.verdict.extra.get("backend") == "coq-ide" for r in rollouts)
    assert any(r.verdict and r.verdict.steps for r in rollouts)
    assert all(r["reward/verified"] == 4 for r in rows)


@pytest.mark.slow
def test_k1_in_a_producer_process_with_a_process_pool_of_verifiers(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    """The default executor (``processes``) starts worker processes inside the producer
    process: it must not be a daemonic process (which may not have children). The producer
    is stopped, its pool with it, when the run ends. On two or more cores the learner (this
    process) and the producer run on one core each, and the learner has its cores back
    after the run."""
    import multiprocessing
    import os

    from verirl.backends.local_stream import available_cores

    run_dir = tmp_path / "pool"
    cfg = load_config(
        None,
        [
            *[
                o
                for o in _base(tiny_model_dir, run_dir)
                if o != "run.schedule.params.producer=thread"
            ],
            "run.schedule.params.producer=process",
            "verification.executor.name=processes",
            "verification.executor.params={workers: 1}",
            "rollout.engine.params={texts: ['\\\\boxed{3}', 'so \\\\boxed{10}', 'hmm']}",
            "curriculum.environments=[addition]",
        ],
    )
    cores = available_cores()
    seen: list[tuple[set[int], set[int]]] = []

    def affinity(step: int, metrics: object) -> None:
        pid = trainer.parts.schedule.stream.producer_pid  # type: ignore[attr-defined]
        seen.append((os.sched_getaffinity(0), os.sched_getaffinity(pid)))

    with Trainer(build(cfg), run_dir) as trainer:
        trainer.fit(progress=affinity if cores and len(cores) >= 2 else None)
        _check_one_stale(trainer, run_dir)
    rows = read_metrics(run_dir)
    assert all(r["reward/verified"] == 4 for r in rows)  # verified in the producer's pool
    assert multiprocessing.active_children() == []  # the producer is gone
    if cores and len(cores) >= 2:
        assert seen[0] == ({cores[0]}, {cores[1]})  # one core each, disjoint
        assert os.sched_getaffinity(0) == set(cores)  # the learner's cores back
