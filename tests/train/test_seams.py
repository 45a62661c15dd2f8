"""The seams of a training step: the reward stage scores every turn, the Coq pool checks a
step's proofs in parallel, and a bug is reported as a bug (exit 1), not as bad input."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.provers.coq.marks import needs_coq
from tests.tiny_run import tiny_run
from verirl.assembly import build
from verirl.cli import main
from verirl.config import load_config
from verirl.rewards.cer import CERReward
from verirl.trainer import Trainer


def _base(model_dir: Path, tmp_path: Path, steps: int = 1) -> list[str]:
    """The shared tiny run in ``tmp_path/run``: 2 prompts × 2 samples, the environments'
    reward, no few-shot example."""
    return tiny_run(
        model_dir,
        tmp_path / "run",
        steps,
        "reward.name=env",
        "run.save_every=0",
        "rollout.prompts_per_step=2",
        "rollout.group_size=2",
        "rollout.max_new_tokens=8",
        "rollout.few_shot=[]",
    )


def test_cer_scores_every_turn_of_a_multi_turn_tcpo_run(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    original = CERReward.score

    def spy(self, rollouts, ctx):  # type: ignore[no-untyped-def]
        calls.append(len(rollouts))
        return original(self, rollouts, ctx)

    monkeypatch.setattr(CERReward, "score", spy)
    cfg = load_config(
        None,
        [
            *_base(tiny_model_dir, tmp_path, steps=2),
            # answers of varied CER value, so TCPO has signal (a tiny random model never
            # writes \boxed{} on its own)
            "run.plugins=[tests.train.plugin_engines]",
            "rollout.engine.name=test_fixed_text",
            "rollout.engine.params={texts: ['so \\boxed{1}', 'it is \\boxed{24}', 'hmm']}",
            "optim.old_logprobs=recompute",
            "reward.name=cer",
            "rollout.collector.name=multi_turn",
            "rollout.collector.params={max_turns: 3, stop_on_success: false, score_map: clip, "
            "counterfactual: true, cf_top_l: 2, cf_alternatives: 2}",
            "credit.name=tcpo",
        ],
    )
    with Trainer(build(cfg), tmp_path / "run") as trainer:
        before = [p.detach().clone() for p in trainer.parts.model.parameters()]
        metrics = trainer.train_step()
        rollouts = trainer.last_rollouts
    turns = sum(len(r.turns) for r in rollouts)
    alternatives = sum(len(t.alt_scores) for r in rollouts for t in r.turns)
    assert turns == 4 * 3  # 2 prompts × 2 samples × 3 turns (no early stop)
    assert alternatives == 2 * 2  # top-L = 2 turns, M = 2 alternatives each
    assert sum(calls) == turns + alternatives  # every turn and alternative scored by CER
    assert len(calls) == 3 + 1  # one batched call per round, one for the alternatives
    assert all("cer" in r.verdict.extra for r in rollouts if r.verdict)
    assert metrics["train/grad_norm"] > 0
    after = trainer.parts.model.parameters()
    changed = any((a != b).any() for a, b in zip(before, after, strict=True))
    assert changed


@pytest.mark.coq
@needs_coq
def test_the_coq_pool_checks_a_steps_proofs_in_parallel(
    tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from verirl.provers.coq.idetop import CoqIdeChecker

    active = 0
    peak = 0
    batches: list[int] = []
    lock = threading.Lock()
    check, check_batch = CoqIdeChecker.check, CoqIdeChecker.check_batch

    def counting_check(self, *a, **k):  # type: ignore[no-untyped-def]
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        try:
            time.sleep(0.05)  # make overlap observable even for instant proofs
            return check(self, *a, **k)
        finally:
            with lock:
                active -= 1

    def counting_batch(self, items, **k):  # type: ignore[no-untyped-def]
        batches.append(len(items))
        return check_batch(self, items, **k)

    monkeypatch.setattr(CoqIdeChecker, "check", counting_check)
    monkeypatch.setattr(CoqIdeChecker, "check_batch", counting_batch)
    cfg = load_config(
        None,
        [
            *_base(tiny_model_dir, tmp_path),
            "run.plugins=[tests.train.plugin_engines]",
            "rollout.engine.name=test_fixed_text",
            "rollout.engine.params={texts: ['```coq\nProof. reflexivity. Qed.\n```', "
            "'```coq\nProof. intros. auto. Qed.\n```']}",
            "curriculum.environments=[coq_proofs]",
            "rollout.group_size=4",
            "credit.name=process",
            "optim.old_logprobs=recompute",
            "provers.coq.workers=2",
            # verified after generation: streamed, a proof that ends first is checked alone
            "verification.stream='off'",
        ],
    )
    with Trainer(build(cfg), tmp_path / "run") as trainer:
        metrics = trainer.train_step()
        rollouts = trainer.last_rollouts
    assert batches == [8]  # the whole step (2 prompts × 4) in one batch
    assert peak == 2  # checked two at a time by the pool's two workers
    assert all(r.verdict and r.verdict.extra.get("backend") == "coq-ide" for r in rollouts)
    assert any(r.verdict and r.verdict.steps for r in rollouts)
    assert metrics["reward/verified"] == 8


def test_a_bug_exits_1_with_a_traceback_and_bad_input_exits_2(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [
        *_base(tiny_model_dir, tmp_path),
        "run.plugins=[tests.train.plugin_rewards]",
        "reward.name=test_broken",
    ]
    assert main(["train", *args]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "a shape bug, not bad input" in err
    assert "internal error" in err and "error.txt" in err
    assert "KeyError" in (tmp_path / "run" / "error.txt").read_text()
    assert main(["train", *args[:-1], "reward.name=nope", "run.name=other"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "reward.name: unknown reward source 'nope'" in err


def test_eval_also_reports_a_prompt_never_trained_with(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    from verirl.envs import get_env
    from verirl.train.metrics import read_metrics

    cfg = load_config(
        None,
        [
            *[o for o in _base(tiny_model_dir, tmp_path) if not o.startswith("rollout.few")],
            "eval.before_and_after=true",
            "eval.problems=2",
            "eval.difficulties=[0]",
            "curriculum.environments=[addition]",
            "rollout.prompt_variants=true",
            "rollout.zero_shot_rate=0.5",
        ],
    )
    with Trainer(build(cfg), tmp_path / "run") as trainer:
        summary = trainer.fit()
        problems = [get_env("addition").generate(0, s) for s in range(40)]
        systems = {trainer.parts.producer.formatter.system_message(p) for p in problems}
        shots = [len(trainer.parts.producer.formatter.demonstrations(p)) for p in problems]
        plain = trainer.plain_formatter.messages(problems[0])
    assert len(systems) > 1  # varied system messages, each asking for \boxed{}
    assert all(s and "\\boxed{}" in s for s in systems)
    assert 0 < shots.count(0) < len(shots)  # some problems zero-shot, some with the example
    assert [m["role"] for m in plain] == ["user"]  # no system message, no demonstration
    assert {"before_plain", "after_plain"} <= summary.keys()
    logged = {k for row in read_metrics(tmp_path / "run") for k in row}
    assert {"eval_before_plain/accuracy", "eval_after_plain/accuracy"} <= logged
