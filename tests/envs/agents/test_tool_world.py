"""The tool-using world: typed API, replayed state, goal share per turn, collateral damage,
and episodes through the multi_turn collector (one call per turn, observation back)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from verirl.envs import get_env
from verirl.envs.agents.tool_world import apply_call, read_calls
from verirl.envs.base import TURN_SEPARATOR
from verirl.models import load_tokenizer
from verirl.rewards.stage import env_reward_stage
from verirl.rollout.base import Generation
from verirl.rollout.collect import get_collector
from verirl.rollout.prompts import PromptFormatter
from verirl.types import SamplingParams

ENV = get_env("tool_world")


def call(tool: str, **args: Any) -> str:
    return "```json\n" + json.dumps({"tool": tool, "args": args}) + "\n```"


def test_api_is_typed_and_bad_calls_change_nothing() -> None:
    world = ENV.generate(6, 0).data["world"]
    before = json.dumps(world, sort_keys=True)
    assert "error" in apply_call(world, "files.read", {"path": 7})
    assert "error" in apply_call(world, "files.nuke", {})
    assert "error" in apply_call(world, "calendar.add", {"title": "x", "day": 40, "hour": 1})
    assert "error" in apply_call(world, "shop.checkout", {})
    assert json.dumps(world, sort_keys=True) == before
    assert apply_call(world, "files.write", {"path": "a.txt", "content": "hi"}) == "ok"
    assert apply_call(world, "files.read", {"path": "a.txt"}) == "hi"


def test_more_difficulty_more_goals_and_apps() -> None:
    goals = [len(ENV.generate(d, 0).data["goals"]) for d in (0, 6, 14)]
    assert goals == [1, 4, 8]
    kinds = {g["kind"] for g in ENV.generate(14, 0).data["goals"]}
    assert {"write", "schedule", "phone", "buy", "save_email", "cancel"} <= kinds


def test_reward_is_share_of_goals_and_collateral_zeroes_it() -> None:
    problem = ENV.generate(6, 1)
    calls = ENV.solve(problem).split(TURN_SEPARATOR)
    shares = []
    for k in range(1, len(calls) + 1):
        shares.append(ENV.verify(problem, TURN_SEPARATOR.join(calls[:k])).reward)
    assert shares == sorted(shares) and shares[-1] == 1.0 and 0 < shares[0] < 1
    victim = sorted(problem.data["world"]["files"])[-1]
    spoiled = TURN_SEPARATOR.join([*calls, call("files.write", path=victim, content="x")])
    verdict = ENV.verify(problem, spoiled)
    assert verdict.reward == 0.0 and not verdict.correct and "changed" in verdict.detail
    # a lookup goal cannot be met by guessing
    guessed = TURN_SEPARATOR.join(
        call("files.write", path=g["path"], content="guess@mail.test")
        for g in problem.data["goals"]
        if g["kind"] == "save_email"
    )
    assert ENV.verify(problem, guessed).reward < 1.0


def test_unreadable_turns_are_observations_not_crashes() -> None:
    problem = ENV.generate(2, 0)
    assert ENV.verify(problem, "I refuse").reward == -1.0
    calls = read_calls("```json\n{bad\n```" + TURN_SEPARATOR + "```json\n[1]\n```")
    assert all(isinstance(c, str) for c in calls)


class CallEngine:
    """Turn t of an episode answers with the reference's t-th call."""

    def __init__(self, tok: Any, calls: list[str]) -> None:
        self.tok, self.calls, self.contexts = tok, calls, []

    def sync_weights(self) -> None:
        return None

    def generate(
        self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        out = []
        for ids in prompts:
            text = self.tok.decode(list(ids))
            self.contexts.append(text)
            t = text.count("<|im_start|>assistant") - 1
            reply = self.calls[t]
            tokens = (*self.tok.encode(reply, add_special_tokens=False), self.tok.eos_token_id)
            out.append([Generation(tokens, (-0.3,) * len(tokens), reply, "stop")] * sampling.n)
        return out


def test_episode_one_call_per_turn_with_observations() -> None:
    tok = load_tokenizer("smollm2-135m-instruct")
    problem = ENV.generate(4, 2)
    calls = ENV.solve(problem).split(TURN_SEPARATOR)
    assert len(calls) >= 3
    collector = get_collector("multi_turn").build(
        {"max_turns": len(calls) + 2, "score_map": "clip", "feedback_template": "{feedback}"}
    )
    engine = CallEngine(tok, calls)
    sampling = SamplingParams(n=1, temperature=1.0, max_new_tokens=64, seed=0)
    [ep] = collector.collect(
        [problem], engine, PromptFormatter(tok), sampling, 0, score=env_reward_stage()
    )
    scores = [t.score for t in ep.turns]
    assert len(ep.turns) == len(calls), "stops at the turn that completes every goal"
    assert scores[-1] == 1.0 and ep.turns[-1].correct and scores == sorted(scores)
    assert all(t.text == c for t, c in zip(ep.turns, calls, strict=True)), "one call per turn"
    # each turn's observation is the next user message
    assert "Observation:" in engine.contexts[1] and "tasks done" in engine.contexts[1]
    assert ep.verdict is not None and ep.verdict.correct


@pytest.mark.parametrize("difficulty", [0, 5, 20])
def test_reference_plan_solves(difficulty: int) -> None:
    for seed in range(5):
        problem = ENV.generate(difficulty, seed)
        assert ENV.verify(problem, ENV.solve(problem)).correct


def test_every_goal_kind_is_one_class_drawn_worded_planned_and_checked() -> None:
    from verirl.envs.agents.tool_world import GOALS, Goal

    assert set(GOALS) == {
        "write", "schedule", "phone", "buy", "save_email", "cancel", "copy", "delete"
    }  # fmt: skip
    env = get_env("tool_world")
    seen = set()
    for seed in range(5):
        problem = env.generate(14, seed)  # 8 goals: every kind once
        world = problem.data["world"]
        for goal in problem.data["goals"]:
            cls = GOALS[goal["kind"]]
            assert issubclass(cls, Goal) and cls.kind == goal["kind"]
            seen.add(goal["kind"])
            assert cls.describe(goal) in problem.prompt
            assert cls.plan(goal, world)
            # the untouched world fulfils no goal
            assert not cls.met(goal, world, world)
    assert seen == set(GOALS)
