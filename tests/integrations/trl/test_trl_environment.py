"""verirl's gym as TRL 1.16's environment_factory: the environment classes on their own, over a
remote OpenEnv server, and inside a real GRPOTrainer run on a tiny random model."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("trl", reason="the TRL integration needs trl==1.16.0 (extra 'trl')")

from verirl.curriculum import AdaptiveDifficulty
from verirl.envs import get_env
from verirl.envs.agents.tool_world import TURN_SEPARATOR
from verirl.episodes.local import LocalEpisodes
from verirl.errors import UserInputError
from verirl.integrations.problems import identity_columns
from verirl.integrations.trl import (
    AnswerEnvironment,
    CurriculumDataset,
    EnvironmentFactory,
    ToolWorldEnvironment,
)


def _solution(env: str, difficulty: int, seed: int) -> str:
    e = get_env(env)
    return e.solve(e.generate(difficulty, seed))


def test_group_resets_share_a_problem_and_rewards_are_the_verdicts() -> None:
    cur = AdaptiveDifficulty(["addition", "sort_list"], tau_num=2, tau_acc=0.5, window=1)
    factory = EnvironmentFactory(LocalEpisodes(cur), group_size=2)
    envs = [factory() for _ in range(4)]
    prompts = [e.reset(prompt=[{"role": "user", "content": ""}]) for e in envs]
    starts = [e.episode for e in envs]
    assert all(s is not None for s in starts)
    ids = [s.identity for s in starts if s is not None]
    assert ids[0] == ids[1] and ids[2] == ids[3] and ids[0] != ids[2]
    assert prompts[0] is not None and ids[0] and starts[0] is not None
    assert prompts[0].startswith(starts[0].prompt) and "submit_answer" in prompts[0]
    rng = random.Random(0)
    for i, e in enumerate(envs):
        env, d, s = ids[i]
        right = _solution(env, d, s)
        answer = (
            right if i % 2 == 0 else get_env(env).corrupt(get_env(env).generate(d, s), right, rng)
        )
        reply = e.submit_answer(answer)
        assert reply == "Correct." if i % 2 == 0 else reply != "Correct."
        want = get_env(env).verify(get_env(env).generate(d, s), f"\\boxed{{{answer}}}")
        assert e.get_reward() == want.reward
        assert e.submit_answer(right).startswith("The episode is over")
    # every episode reached the curriculum: one correct and one wrong at h = 0 per env → 0.5
    assert cur.window(ids[0][0]) == (1, 1) and cur.window(ids[2][0]) == (1, 1)


def test_no_submission_is_a_wrong_format_verdict_and_rows_name_the_problem() -> None:
    cur = AdaptiveDifficulty(["addition"], tau_num=1, tau_acc=0.5)
    env = EnvironmentFactory(LocalEpisodes(cur))()
    assert env.reset(**identity_columns(get_env("addition").generate(4, 2))) is None
    assert env.episode is not None and env.episode.identity == ("addition", 4, 2)
    assert env.get_reward() == -1.0
    assert cur.counters("addition") == (0, 0) and cur.window("addition") == (0, 0)
    with pytest.raises(UserInputError, match="ToolWorldEnvironment"):
        env.reset(verirl_env="tool_world", verirl_difficulty=0, verirl_seed=0)


def test_refinement_lets_the_model_submit_again() -> None:
    env = AnswerEnvironment(LocalEpisodes(AdaptiveDifficulty(["addition"]), max_turns=2))
    env.reset(verirl_env="addition", verirl_difficulty=1, verirl_seed=3)
    first = env.submit_answer("not a number")
    assert "submit again" in first
    assert env.submit_answer(_solution("addition", 1, 3)) == "Correct."
    assert env.get_reward() == 1.0


def test_tool_world_tools_are_the_toolsets_and_replay_the_plan() -> None:
    from transformers.utils import get_json_schema

    from verirl.tools import build_toolset
    from verirl.tools.calls import decode_transcript

    factory = EnvironmentFactory(LocalEpisodes(AdaptiveDifficulty(["tool_world"])), tools=True)
    env = factory()
    assert isinstance(env, ToolWorldEnvironment)
    assert not hasattr(env, "submit_answer")  # TRL would list it as a tool
    # TRL's schemas of the methods are the toolset's own: the same prompt on both paths
    apps = build_toolset(
        "tool_world", {"world": get_env("tool_world").generate(0, 0).data["world"]}
    )
    assert [get_json_schema(getattr(env, n)) for n in apps.tools()] == apps.schemas()
    env.reset(verirl_env="tool_world", verirl_difficulty=3, verirl_seed=1)
    replies = decode_transcript(_solution("tool_world", 3, 1), TURN_SEPARATOR)
    calls = [c for r in replies for c in r.calls]
    assert len(calls) >= 2
    results = [getattr(env, c.name)(**c.arguments) for c in calls]
    assert "ok" in results and all(not r.startswith("error") for r in results)
    assert env.get_reward() == 1.0
    assert env.files_list().startswith("The episode is over")
    assert env.calendar_remove(3).startswith("The episode is over")  # positional too


@pytest.mark.slow
def test_remote_source_through_openenv(tmp_path: Path) -> None:
    pytest.importorskip("openenv.core", reason="needs openenv-core==0.3.0 (extra 'openenv')")
    from tests.serve.helpers import gym_server
    from verirl.integrations.openenv import OpenEnvEpisodes

    with gym_server(tmp_path / "state.sqlite", ["addition"], tau_num=2, tau_acc=0.5) as url:
        factory = EnvironmentFactory(OpenEnvEpisodes(url), group_size=2)
        envs = [factory() for _ in range(2)]
        for e in envs:
            e.reset()
        ids = [e.episode.identity for e in envs if e.episode is not None]
        assert ids[0] == ids[1] and ids[0][1] == 0
        assert envs[0].submit_answer(_solution(*ids[0])) == "Correct."
        assert envs[0].get_reward() == 1.0 and envs[1].get_reward() == -1.0
        # the server's curriculum saw both episodes: 1 of 2 correct at h = 0 → raised
        probe = factory()
        seen = set()
        for _ in range(12):
            probe.reset()
            assert probe.episode is not None
            seen.add(probe.episode.difficulty)
            probe.get_reward()
        assert 1 in seen


# ---- slow: a real GRPOTrainer run -----------------------------------------------------------
def _tool_tokenizer(model_dir: Path) -> Any:
    from trl.chat_template_utils import qwen2_5_chat_template

    from verirl.models import load_tokenizer

    tok = load_tokenizer(str(model_dir))
    tok.chat_template = qwen2_5_chat_template  # a tool-calling template TRL can parse
    return tok


def _args(out: Path, steps: int) -> Any:
    import torch
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=str(out),
        use_cpu=True,
        model_init_kwargs={"dtype": torch.float32},
        per_device_train_batch_size=4,
        num_generations=2,
        max_completion_length=8,
        max_tool_calling_iterations=1,
        temperature=1.0,
        beta=0.0,
        learning_rate=1e-3,
        max_steps=steps,
        shuffle_dataset=False,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        disable_tqdm=True,
        dataloader_num_workers=0,
        seed=0,
    )


@pytest.mark.slow
def test_grpo_trainer_with_environment_factory(tiny_model_dir: Path, tmp_path: Path) -> None:
    from trl import GRPOTrainer

    cur = AdaptiveDifficulty(["addition", "sort_list"], tau_num=4, tau_acc=0.5, window=1)
    source = LocalEpisodes(cur)
    factory = EnvironmentFactory(source, group_size=2)
    trainer = GRPOTrainer(
        model=str(tiny_model_dir),
        args=_args(tmp_path / "a", 2),
        processing_class=_tool_tokenizer(tiny_model_dir),
        environment_factory=factory,
    )
    trainer.train()
    # 2 steps × 4 rollouts: every rollout was an episode, reset in groups of G = 2
    assert factory.draws.resets == 8 and source.episodes_finished == 8
    assert len(factory.instances) >= 4
    logged = [h for h in trainer.state.log_history if "rewards/AnswerEnvironment/mean" in h]
    assert len(logged) == 2
    for inst in factory.instances[1:]:  # the first is TRL's probe instance
        out = inst.last_outcome
        assert inst.episode is not None and out is not None and out.done
        e = get_env(inst.episode.env)
        assert -1.0 <= out.reward <= 1.0 and (out.reward == 1.0) == out.correct
        assert e.max_difficulty >= inst.episode.difficulty
    # the rewards TRL logged are the verdicts get_reward returned
    mean = sum(i.last_outcome.reward for i in factory.instances[-4:] if i.last_outcome) / 4
    assert logged[-1]["rewards/AnswerEnvironment/mean"] == pytest.approx(mean)
    assert cur.metrics()["curriculum/last/rollouts"] == 1.0  # fed one episode at a time

    # with a CurriculumDataset the rows name the problems (any number of processes)
    cur2 = AdaptiveDifficulty(["addition"], tau_num=1000)
    data = CurriculumDataset(cur2)
    factory2 = EnvironmentFactory(LocalEpisodes(cur2))
    GRPOTrainer(
        model=str(tiny_model_dir),
        args=_args(tmp_path / "b", 1),
        train_dataset=data.dataset(),
        processing_class=_tool_tokenizer(tiny_model_dir),
        environment_factory=factory2,
    ).train()
    used = {i.episode.identity for i in factory2.instances if i.episode is not None}
    assert factory2.draws.resets == 0 and len(used) == 2  # 2 prompts × G = 2, no own draws
    assert all(key[0] == "addition" for key in used)
    assert cur2.counters("addition")[1] == 4  # the 4 episodes at h = 0 reached the curriculum
