"""The tool-using world: its apps as typed tools (schemas from the signatures), the replayed
state, goal share per turn, collateral damage, and episodes through the tool_calls collector
in SmolLM2's own tool format (results back as tool messages)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from transformers.utils import get_json_schema

from verirl.envs import get_env
from verirl.envs.agents.world_apps import TOOL_NAMES, ToolWorldApps, transcript_of
from verirl.envs.base import TURN_SEPARATOR
from verirl.models import load_tokenizer
from verirl.rewards.stage import env_reward_stage
from verirl.rollout.base import Generation
from verirl.rollout.collect import COLLECTORS
from verirl.rollout.prompts import PromptFormatter
from verirl.tools import ParsedReply, get_format
from verirl.tools.calls import decode_transcript
from verirl.types import SamplingParams

ENV = get_env("tool_world")


def test_api_is_typed_functions_and_bad_calls_change_nothing() -> None:
    apps = ToolWorldApps(ENV.generate(6, 0).data["world"])
    assert set(TOOL_NAMES) == set(apps.tools()) and len(TOOL_NAMES) == 12
    schema = {s["function"]["name"]: s for s in apps.schemas()}
    assert schema["calendar_add"] == get_json_schema(apps.calendar_add)
    props = schema["calendar_add"]["function"]["parameters"]["properties"]
    assert props["day"]["type"] == "integer" and props["title"]["type"] == "string"
    before = json.dumps(apps.world, sort_keys=True)
    assert apps.call("files_read", {"path": 7}).refused
    assert apps.call("files_nuke", {}).refused
    added = apps.call("calendar_add", {"title": "x", "day": 40, "hour": 1})
    assert added.text == "error: day must be 1..31 and hour 0..23" and not added.refused
    assert apps.call("shop_checkout", {}).text == "error: the cart is empty"
    assert json.dumps(apps.world, sort_keys=True) == before
    assert apps.call("files_write", {"path": "a.txt", "content": "hi"}).text == "ok"
    assert apps.call("files_read", {"path": "a.txt"}).text == "hi"


def test_more_difficulty_more_goals_and_apps() -> None:
    goals = [len(ENV.generate(d, 0).data["goals"]) for d in (0, 6, 14)]
    assert goals == [1, 4, 8]
    kinds = {g["kind"] for g in ENV.generate(14, 0).data["goals"]}
    assert {"write", "schedule", "phone", "buy", "save_email", "cancel"} <= kinds


def test_prompt_names_no_api_the_tools_come_through_the_template() -> None:
    problem = ENV.generate(6, 1)
    assert "files_write" not in problem.prompt and problem.prompt.startswith("Tasks:\n1. ")
    assert "without a tool call" in problem.prompt


def test_reward_is_share_of_goals_and_collateral_zeroes_it() -> None:
    problem = ENV.generate(6, 1)
    turns = ENV.solve(problem).split(TURN_SEPARATOR)
    shares = [
        ENV.verify(problem, TURN_SEPARATOR.join(turns[:k])).reward for k in range(1, len(turns) + 1)
    ]
    assert shares == sorted(shares) and shares[-1] == 1.0 and 0 < shares[0] < 1
    victim = sorted(problem.data["world"]["files"])[-1]
    spoiled = (
        ENV.solve(problem)
        + TURN_SEPARATOR
        + transcript_of([("files_write", {"path": victim, "content": "x"})])
    )
    verdict = ENV.verify(problem, spoiled)
    assert verdict.reward == 0.0 and not verdict.correct and "changed" in verdict.detail
    guessed = transcript_of(
        [
            ("files_write", {"path": g["path"], "content": "guess@mail.test"})
            for g in problem.data["goals"]
            if g["kind"] == "save_email"
        ]
    )
    assert ENV.verify(problem, guessed).reward < 1.0


def test_unreadable_turns_and_text_are_wrong_format_not_crashes() -> None:
    problem = ENV.generate(2, 0)
    assert ENV.verify(problem, "I refuse").reward == -1.0
    assert ENV.verify(problem, json.dumps({"error": "unclosed"})).reward == -1.0
    assert ENV.verify(problem, transcript_of([("files_list", {})])).reward == 0.0
    assert all(r.error for r in decode_transcript("{bad" + TURN_SEPARATOR + "[1]", TURN_SEPARATOR))


class ScriptedEngine:
    """Turn t of an episode replies with ``texts[t]`` (the demonstration's assistant message
    is not a turn)."""

    def __init__(self, tok: Any, texts: list[str]) -> None:
        self.tok, self.texts, self.contexts = tok, texts, []

    def sync_weights(self) -> None:
        return None

    def generate(
        self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        out = []
        for ids in prompts:
            text = self.tok.decode(list(ids), skip_special_tokens=False)
            self.contexts.append(text)
            reply = self.texts[text.count("<|im_start|>assistant") - 2]
            tokens = (*self.tok.encode(reply, add_special_tokens=False), self.tok.eos_token_id)
            out.append([Generation(tokens, (-0.3,) * len(tokens), reply, "stop")] * sampling.n)
        return out


def test_episode_in_smollm2_format_with_results_as_tool_messages() -> None:
    tok = load_tokenizer("smollm2-135m-instruct")
    problem = ENV.generate(4, 2)
    replies = decode_transcript(ENV.solve(problem), TURN_SEPARATOR)
    assert len(replies) >= 3
    fmt = get_format("chatml_tools")
    texts = [fmt.render(r) for r in replies] + ["All done."]
    collector = COLLECTORS.get("tool_calls").build({"max_turns": 10})
    engine = ScriptedEngine(tok, texts)
    sampling = SamplingParams(n=1, temperature=1.0, max_new_tokens=64, seed=0)
    [ep] = collector.collect(
        [problem], engine, PromptFormatter(tok), sampling, 0, score=env_reward_stage()
    )
    scores = [t.score for t in ep.turns]
    assert len(ep.turns) == len(replies) + 1, "ends at the reply without a call"
    assert scores == sorted(scores) and scores[-1] == 1.0 and ep.verdict is not None
    assert ep.verdict.correct and ep.verdict.extra["tool_calls"] == len(replies)
    # the tools are in the system block; each result is the next message, as a tool response
    assert '"name": "files_write"' in engine.contexts[0].split("<|im_start|>user")[0]
    assert "<tool_response>\nok\n</tool_response>" in engine.contexts[1]
    metrics = collector.metrics()
    assert metrics["tools/wellformed_rate"] == len(replies) / (len(replies) + 1)
    assert metrics["tools/final_reply_rate"] == 1.0 and metrics["tools/readable_rate"] == 1.0


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
    seen = set()
    for seed in range(5):
        problem = ENV.generate(14, seed)  # 8 goals: every kind once
        world = problem.data["world"]
        for goal in problem.data["goals"]:
            cls = GOALS[goal["kind"]]
            assert issubclass(cls, Goal) and cls.kind == goal["kind"]
            seen.add(goal["kind"])
            assert cls.describe(goal) in problem.prompt
            assert cls.plan(goal, world)
            assert not cls.met(goal, world, world)  # the untouched world fulfils no goal
    assert seen == set(GOALS)


def test_all_calls_in_one_reply_are_replayed_in_order() -> None:
    problem = ENV.generate(6, 3)
    calls = [c for r in decode_transcript(ENV.solve(problem), TURN_SEPARATOR) for c in r.calls]
    one = transcript_of([(c.name, c.arguments) for c in calls], per_turn=len(calls))
    assert ENV.verify(problem, one).correct
    reply = ParsedReply("", tuple(calls))
    assert get_format("chatml_tools").parse(get_format("chatml_tools").render(reply)) == reply


def test_the_tools_offered_grow_with_difficulty_and_replay_agrees() -> None:
    easy, mid, hard = ENV.generate(0, 0), ENV.generate(2, 0), ENV.generate(6, 0)
    assert ENV.offered_tools(easy) == ["files_write"]  # only what the task needs
    assert sorted(ENV.offered_tools(mid)) == sorted(
        n for n in TOOL_NAMES if n.startswith(("files_", "calendar_"))
    )
    assert sorted(ENV.offered_tools(hard)) == sorted(TOOL_NAMES)  # four goals, four apps
    apps = ToolWorldApps(easy.data["world"], ENV.offered_tools(easy))
    assert list(apps.tools()) == ["files_write"]
    assert apps.call("files_list", {}).refused
    # a call to a tool the episode did not offer changes nothing in the verifier's replay
    goal = easy.data["goals"][0]
    done = transcript_of([("files_write", {"path": goal["path"], "content": goal["content"]})])
    extra = transcript_of([("files_delete", {"path": sorted(easy.data["world"]["files"])[0]})])
    assert ENV.verify(easy, done + TURN_SEPARATOR + extra).correct
    victim = transcript_of([("files_delete", {"path": sorted(mid.data["world"]["files"])[0]})])
    assert not ENV.verify(mid, ENV.solve(mid) + TURN_SEPARATOR + victim).correct  # offered
    assert ENV.toolset_params(easy)["tools"] == ["files_write"]
