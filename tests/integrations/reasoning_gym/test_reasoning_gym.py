"""reasoning-gym 0.1.25 both ways: its tasks as on-demand verirl environments under the
adaptive curriculum, and verirl's environments as a reasoning-gym dataset."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("reasoning_gym", reason="needs reasoning-gym==0.1.25 (extra 'bench')")

import reasoning_gym

from verirl.curriculum import AdaptiveDifficulty, CurriculumConfig, build_curriculum
from verirl.envs import env_names, get_env, is_env
from verirl.errors import UserInputError
from verirl.integrations.reasoning_gym.tasks import (
    VerirlDataset,
    VerirlDatasetConfig,
    register_reasoning_gym,
    register_verirl_dataset,
    task_names,
)
from verirl.verification.batch import BatchVerifier

pytestmark = pytest.mark.reasoning_gym


def test_tasks_register_on_demand_and_stay_out_of_the_catalogue() -> None:
    before = env_names()
    assert not any(n.startswith("rg/") for n in before)
    env = get_env("rg/basic_arithmetic")  # registered now, on demand
    assert env.name == "rg/basic_arithmetic" and env.max_difficulty >= 2
    assert env_names() == before  # the default catalogue did not change
    assert "rg/basic_arithmetic" in env_names(on_demand=True)
    assert not is_env("rg/no_such_task") and not is_env("no_such_env")
    assert len(task_names()) >= 100
    with pytest.raises(UserInputError, match="no task"):
        register_reasoning_gym(["no_such_task"])


def test_generation_is_deterministic_and_grows_with_the_level() -> None:
    env = get_env("rg/basic_arithmetic")
    assert env.generate(2, 7) == env.generate(2, 7)
    assert env.generate(2, 7).prompt != env.generate(2, 8).prompt
    top = env.max_difficulty

    def mean_len(d: int) -> float:
        return sum(len(env.generate(d, s).prompt) for s in range(12)) / 12

    assert mean_len(0) < mean_len(top)
    with pytest.raises(UserInputError, match="max_difficulty"):
        env.generate(top + 1, 0)


def test_the_verifier_is_reasoning_gyms_scorer() -> None:
    from reasoning_gym.factory import DATASETS

    env = get_env("rg/basic_arithmetic")
    problem = env.generate(1, 3)
    entry = problem.data["entry"]
    right = env.verify(problem, f"so <answer>{problem.answer}</answer>")
    assert right.correct and right.reward == 1.0
    assert env.verify(problem, f"\\boxed{{{problem.answer}}}").correct
    wrong = env.verify(problem, f"<answer>{problem.answer}9</answer>")
    dataset_cls, config_cls = DATASETS["basic_arithmetic"]
    scorer = dataset_cls(config=config_cls(seed=0, size=1))
    assert not wrong.correct
    assert wrong.reward == pytest.approx(scorer.score_answer(f"{problem.answer}9", entry))
    assert env.verify(problem, "no marker").reward == -1.0
    assert BatchVerifier().verify([problem], [f"<answer>{problem.answer}</answer>"])[0] == right


def test_adaptive_curriculum_over_imported_tasks_stops_at_the_top_level() -> None:
    cfg = CurriculumConfig(environments=["rg/leg_counting"], tau_num=2, tau_acc=0.5)
    cur = build_curriculum(cfg)
    assert isinstance(cur, AdaptiveDifficulty)
    top = get_env("rg/leg_counting").max_difficulty
    for _ in range(top + 3):
        h = cur.window("rg/leg_counting")[1]
        cur.update([("rg/leg_counting", h, True), ("rg/leg_counting", h, True)])
    assert cur.window("rg/leg_counting")[1] == top
    problem = cur.sample(1)[0]
    assert problem.env == "rg/leg_counting" and problem.difficulty <= top


def test_verirl_environments_as_a_reasoning_gym_dataset() -> None:
    data = VerirlDataset(VerirlDatasetConfig(env="addition", difficulty=2, seed=10, size=6))
    entries = list(data)
    assert len(data) == len(entries) == 6
    rng = random.Random(0)
    env = get_env("addition")
    for i, entry in enumerate(entries):
        problem = env.generate(2, 10 + i)
        assert entry["question"] == problem.prompt and entry["answer"] == problem.answer
        assert entry["metadata"]["seed"] == 10 + i
        assert data.score_answer(entry["answer"], entry) == 1.0
        assert data.score_answer(f"so \\boxed{{{entry['answer']}}}", entry) == 1.0
        wrong = env.corrupt(problem, entry["answer"], rng)
        assert data.score_answer(wrong, entry) < 1.0
        assert data.score_answer(None, entry) == 0.0
        assert data.score_answer(entry["answer"], {"metadata": {}}) == 0.0
    with pytest.raises(IndexError):
        data[6]
    register_verirl_dataset()
    made = reasoning_gym.create_dataset("verirl", env="sort_list", difficulty=1, seed=3, size=2)
    assert made[1]["metadata"]["verirl_env"] == "sort_list" and made[1]["metadata"]["seed"] == 4
    with pytest.raises(UserInputError, match="unknown environment"):
        reasoning_gym.create_dataset("verirl", env="nope", size=2)
