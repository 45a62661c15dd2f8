"""verirl inside TRL 1.16: curriculum dataset, reward functions, callback, rollout_func."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl", reason="the TRL integration needs trl==1.16.0 (extra 'trl')")

from verirl.curriculum import AdaptiveDifficulty
from verirl.envs import get_env
from verirl.errors import UserInputError
from verirl.integrations.problems import ProblemStore, identity_columns
from verirl.integrations.trl import (
    CurriculumDataset,
    EnvReward,
    MultiTurnRollout,
    PolicyReward,
    VerirlCallback,
)
from verirl.integrations.trl.data import check_trl_config
from verirl.types import Problem, Rollout, Verdict
from verirl.verification.batch import BatchVerifier

ENVS = ["addition", "sort_list"]


def _columns(problems: Sequence[Problem]) -> dict[str, list[Any]]:
    rows = [identity_columns(p) for p in problems]
    return {k: [r[k] for r in rows] for k in rows[0]}


def _outputs(problems: Sequence[Problem]) -> list[str]:
    """A right, a corrupted, an unboxed and an empty answer, cycling."""
    rng = random.Random(0)
    out = []
    for i, p in enumerate(problems):
        env = get_env(p.env)
        right = env.solve(p)
        out.append(
            [
                f"so \\boxed{{{right}}}",
                f"\\boxed{{{env.corrupt(p, right, rng)}}}",
                right,
                "\\boxed{}",
            ][i % 4]
        )
    return out


class AlwaysCorrect(BatchVerifier):
    """A verifier that calls every output fully correct (forces the reward high)."""

    def verify(self, problems: Sequence[Problem], texts: Sequence[str]) -> list[Verdict | None]:
        return [Verdict(1.0, True, "forced") for _ in problems]


# ---- fast: the pieces on their own ----------------------------------------------------------
def test_env_reward_equals_the_environment_verifier_and_feeds_the_curriculum() -> None:
    cur = AdaptiveDifficulty(ENVS, tau_num=4, window=1)
    problems = [get_env(ENVS[i % 2]).generate(0, i) for i in range(8)]
    texts = _outputs(problems)
    reward = EnvReward(curriculum=cur)
    logged: dict[str, float] = {}
    got = reward(
        [p.prompt for p in problems],
        [[{"role": "assistant", "content": t}] for t in texts],
        None,
        log_metric=logged.__setitem__,
        **_columns(problems),
    )
    want = [get_env(p.env).verify(p, t) for p, t in zip(problems, texts, strict=True)]
    assert got == [v.reward for v in want]
    assert len(set(got)) >= 3  # right, wrong, wrong format: the check can tell them apart
    # 4 outputs per env at h = 0, 2 of them correct (indices 0 and 4 are right) → no raise
    assert cur.window("addition") == (0, 0) and cur.counters("addition") == (0, 0)
    assert cur.metrics()["curriculum/addition/last_check_acc"] == pytest.approx(
        sum(v.correct for p, v in zip(problems, want, strict=True) if p.env == "addition") / 4
    )
    assert logged["verirl/accuracy"] == sum(v.correct for v in want) / 8


def test_env_reward_returns_none_for_rows_that_are_not_verirl_problems() -> None:
    reward = EnvReward()
    assert reward(["q"], ["\\boxed{1}"], None, answer=["1"]) == [None]


def test_forced_high_outcomes_raise_the_window() -> None:
    cur = AdaptiveDifficulty(["addition"], tau_num=4, window=2)
    reward = EnvReward(curriculum=cur, verifier=AlwaysCorrect())
    problems = [get_env("addition").generate(0, i) for i in range(4)]
    reward([""] * 4, ["x"] * 4, None, **_columns(problems))
    assert cur.window("addition") == (0, 1)


def test_dataset_draws_from_the_moving_window_and_rows_map_back() -> None:
    cur = AdaptiveDifficulty(["addition"], tau_num=2, window=1)
    data = CurriculumDataset(cur)
    stream = iter(data.dataset())
    first = [next(stream) for _ in range(2)]
    assert [r["verirl_difficulty"] for r in first] == [0, 0]
    assert [r["verirl_seed"] for r in first] == [0, 1]
    cur.update([("addition", 0, True), ("addition", 0, True)])
    assert next(stream)["verirl_difficulty"] == 1  # drawn after the window moved
    row = first[0]
    problem = data.store.from_row(row)
    assert problem == get_env("addition").generate(0, 0)
    assert data.problem_for_prompt(row["prompt"]) == problem
    assert row["prompt"][-1] == {"role": "user", "content": problem.prompt}
    # another process regenerates the same problem from the row alone
    assert ProblemStore().from_row(row) == problem


def test_bad_rows_and_configs_are_refused() -> None:
    with pytest.raises(UserInputError, match="not registered"):
        ProblemStore().get("no_such_env", 0, 0)
    with pytest.raises(UserInputError, match="verirl_difficulty"):
        EnvReward()(["q"], ["a"], None, verirl_env=["addition"], verirl_seed=[0])

    class Args:
        shuffle_dataset = True
        max_steps = 3

    with pytest.raises(UserInputError, match="shuffle_dataset"):
        check_trl_config(Args())
    Args.shuffle_dataset, Args.max_steps = False, -1
    with pytest.raises(UserInputError, match="max_steps"):
        check_trl_config(Args())
    with pytest.raises(UserInputError, match="no policy"):
        PolicyReward("cer")(["q"], ["\\boxed{1}"], None, answer=["1"])


def test_cer_reward_function_equals_verirls_cer(tiny_model_dir: Path) -> None:
    from verirl.models import load_policy
    from verirl.rewards.base import RewardContext
    from verirl.rewards.cer import CERParams, CERReward
    from verirl.rollout.prompts import PromptFormatter

    model, tok = load_policy(str(tiny_model_dir))
    fmt = PromptFormatter(tok)
    problems = [get_env("addition").generate(0, s) for s in (0, 1)]
    p0, p1 = problems
    rows = [p0, p0, p0, p1, p1, p1]
    texts = ["so \\boxed{7}", "\\boxed{3} ok", "no answer", "\\boxed{12}", "\\boxed{7}", "x"]
    prompts = [fmt.messages(p) for p in rows]
    ids = [tok.encode(t, add_special_tokens=False) for t in texts]
    fn = PolicyReward("cer")
    fn.bind(model, tok)
    got = fn(prompts, texts, ids, **_columns(rows))
    pids = [tuple(fmt.encode(p)) for p in rows]
    rollouts = [
        Rollout(p, i // 3, pid, tuple(x), (0.0,) * len(x), t, "stop")
        for i, (p, pid, x, t) in enumerate(zip(rows, pids, ids, texts, strict=True))
    ]
    want = CERReward(CERParams()).score(rollouts, RewardContext(tok, model))
    assert got == pytest.approx([v.reward for v in want], abs=1e-9)
    assert got[2] == 0.0 and got[5] == 0.0 and 0.0 < got[0] < 1.0
    assert got[0] != got[1]  # different answers in one group get different rewards
    rule = PolicyReward("rule_cer")
    rule.bind(model, tok)
    right = get_env("addition").solve(p0)
    graded = rule(
        [prompts[0]] * 2, [f"\\boxed{{{right}}}", "\\boxed{3}"], None, **_columns(rows[:2])
    )
    assert graded[0] == 1.0 and 0.0 <= graded[1] < 1.0  # the rule gate, then CER


@pytest.mark.slow
def test_importing_verirl_does_not_import_the_trainers() -> None:
    import subprocess
    import sys

    code = (
        "import sys, verirl, verirl.integrations, verirl.integrations.problems, verirl.curriculum;"
        "print(json.dumps([m for m in ('trl', 'verl', 'datasets') if m in sys.modules]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import json;" + code], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == []


# ---- slow: GRPOTrainer runs on a tiny random model ------------------------------------------
def _config(out: Path, steps: int, **kw: Any) -> Any:
    import torch
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=str(out),
        use_cpu=True,
        model_init_kwargs={"dtype": torch.float32},
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=kw.pop("max_completion_length", 8),
        temperature=1.0,
        beta=0.0,
        learning_rate=1e-3,
        max_steps=steps,
        shuffle_dataset=False,
        gradient_checkpointing=False,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        dataloader_num_workers=0,
        seed=0,
        **kw,
    )


class Recorder:
    """Wraps a reward function and keeps every call's (problem, text, reward) triples."""

    def __init__(self, inner: EnvReward) -> None:
        self.inner = inner
        self.seen: list[tuple[Problem, str, float | None]] = []
        self.__name__ = "recorded"

    def __call__(self, prompts: Any, completions: Any, completion_ids: Any, **kw: Any) -> Any:
        out = self.inner(prompts, completions, completion_ids, **kw)
        self.seen.extend((p, t, v.reward) for p, t, v in self.inner.last)
        assert [v.reward for _, _, v in self.inner.last] == out
        return out


def _trainer(
    model_dir: Path, out: Path, steps: int, rewards: list[Any], data: Any, **kw: Any
) -> Any:
    from trl import GRPOTrainer

    from verirl.models import load_tokenizer

    rollout_func = kw.pop("rollout_func", None)
    args = _config(out, steps, **kw)
    check_trl_config(args)
    return GRPOTrainer(
        model=str(model_dir),
        reward_funcs=rewards,
        args=args,
        train_dataset=data.dataset(),
        processing_class=load_tokenizer(str(model_dir)),
        callbacks=[VerirlCallback(data.curriculum, rewards)],
        rollout_func=rollout_func,
    )


@pytest.mark.slow
def test_grpo_trainer_run_with_verirl_rewards_and_curriculum(
    tiny_model_dir: Path, tmp_path: Path
) -> None:
    # real verifier: the rewards TRL trains on are verirl's own verdicts on the same texts
    cur = AdaptiveDifficulty(ENVS, tau_num=4, window=1)
    data = CurriculumDataset(cur)
    real = Recorder(EnvReward(curriculum=cur, store=data.store))
    cer = PolicyReward("cer", store=data.store)
    trainer = _trainer(tiny_model_dir, tmp_path / "a", 3, [real, cer], data)
    trainer.train()
    assert len(real.seen) == 3 * 4  # 3 steps × 2 prompts × 2 generations
    for problem, text, reward in real.seen:
        assert reward == get_env(problem.env).verify(problem, text).reward
    assert cer.model is trainer.model  # the callback handed over the policy being trained
    assert all(0.0 <= v.reward <= 1.0 for v in cer.last)
    logged = [h for h in trainer.state.log_history if "curriculum/mean_h" in h]
    assert logged and "rewards/verirl_cer/mean" in trainer.state.log_history[0]

    # forced high: every completion "correct" → the window moves and later rows use it
    cur2 = AdaptiveDifficulty(["addition"], tau_num=4, window=1)
    data2 = CurriculumDataset(cur2)
    forced = Recorder(EnvReward(curriculum=cur2, verifier=AlwaysCorrect(), store=data2.store))
    _trainer(tiny_model_dir, tmp_path / "b", 4, [forced], data2).train()
    assert cur2.window("addition")[1] >= 1
    assert max(p.difficulty for p, _, _ in forced.seen) >= 1
    assert cur2.metrics()["curriculum/addition/checks"] >= 1


@pytest.mark.slow
def test_multi_turn_refinement_through_rollout_func(tiny_model_dir: Path, tmp_path: Path) -> None:
    cur = AdaptiveDifficulty(["addition"], tau_num=1000)
    data = CurriculumDataset(cur)
    episodes = MultiTurnRollout(data, {"max_turns": 2})
    reward = Recorder(EnvReward(curriculum=cur, store=data.store))
    trainer = _trainer(
        tiny_model_dir, tmp_path, 2, [reward], data, rollout_func=episodes, max_completion_length=6
    )
    trainer.train()
    assert len(episodes.last) == 4 and len(reward.seen) == 8
    for r in episodes.last:
        final = get_env(r.problem.env).verify(r.problem, r.turns[-1].text)
        assert r.verdict is not None and r.verdict.reward == final.reward
        if len(r.turns) == 2:  # feedback glue between the turns is masked out
            assert 0 in r.mask and r.mask[: r.turns[0].end] == (1,) * r.turns[0].end
    assert [x for _, _, x in reward.seen[-4:]] == [r.verdict.reward for r in episodes.last]
    assert any(len(r.turns) == 2 for r in episodes.last)  # a random model fails turn 1


@pytest.mark.slow
def test_the_example_script_runs(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[3]
    cmd = [
        sys.executable, str(root / "examples" / "trl_grpo.py"), "--model", "tiny",
        "--steps", "2", "--prompts", "2", "--group-size", "2",
        "--max-completion-length", "8", "--reward", "env+cer", "--output-dir", str(tmp_path),
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=str(root / "src"), HF_HUB_OFFLINE="1")
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    steps = [json.loads(x) for x in out.stdout.splitlines() if x.startswith('{"step"')]
    assert [s["step"] for s in steps[:2]] == [1, 2]
    assert "rewards/verirl_env/mean" in steps[0] and "rewards/verirl_cer/mean" in steps[0]
    assert "windows:" in out.stdout


def _rank(rank: int, port: int, out: str) -> None:
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    cur = AdaptiveDifficulty(["addition"], tau_num=4, window=2)
    problems = [get_env("addition").generate(0, 10 * rank + i) for i in range(2)]
    right = [f"\\boxed{{{get_env('addition').solve(p)}}}" for p in problems]
    EnvReward(curriculum=cur)([""] * 2, right, None, **_columns(problems))
    Path(out, f"{rank}.json").write_text(json.dumps(cur.state_dict()))
    dist.destroy_process_group()


@pytest.mark.slow
def test_ranks_gather_outcomes_and_keep_one_curriculum(tmp_path: Path) -> None:
    """Two torch.distributed ranks, 2 correct outcomes each: only together do they reach
    tau_num = 4, so the window moves on both ranks only if the outcomes were gathered."""
    import socket

    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(_rank, args=(port, str(tmp_path)), nprocs=2, join=True)
    states = [json.loads((tmp_path / f"{r}.json").read_text()) for r in range(2)]
    assert states[0] == states[1]
    assert states[0]["levels"]["addition"]["high"] == 1
