"""Code refinement: the multi_turn collector on a program-synthesis environment, with the
feedback naming one failing test and never the hidden tests as a whole."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from verirl.config import load_config
from verirl.envs import get_env
from verirl.envs.code.synthesis import perturbed
from verirl.models import load_tokenizer
from verirl.rewards.stage import env_reward_stage
from verirl.rollout.base import Generation
from verirl.rollout.collect import COLLECTORS
from verirl.rollout.prompts import PromptFormatter
from verirl.types import SamplingParams

EXAMPLE = Path(__file__).parents[2] / "examples" / "tcpo_code.yaml"
ENV = get_env("code_list_pipeline")
PROBLEM = ENV.generate(4, 3)
RIGHT = ENV.solve(PROBLEM)
# wrong on every test, then right on the first call only, then right
PLAN = [
    f"```python\n{perturbed(RIGHT, 'solve')}\n```",
    "no code this time",
    f"Fixed:\n```python\n{RIGHT}\n```",
]


class TurnEngine:
    """Returns ``PLAN[t]`` for the t-th assistant turn of the conversation."""

    def __init__(self, tok: Any) -> None:
        self.tok = tok
        self.contexts: list[str] = []

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
            gens = []
            for _ in range(sampling.n):
                tokens = (
                    *self.tok.encode(PLAN[t], add_special_tokens=False),
                    self.tok.eos_token_id,
                )
                gens.append(Generation(tokens, (-0.5,) * len(tokens), PLAN[t], "stop"))
            out.append(gens)
        return out


@pytest.fixture(scope="module")
def tok() -> Any:
    return load_tokenizer("smollm2-135m-instruct")


def test_example_config_is_the_papers_code_setting() -> None:
    cfg = load_config(EXAMPLE)
    params = cfg.rollout.collector.params
    assert params["cf_top_l"] == 10 and params["max_turns"] == 5
    assert all(name.startswith("code_") for name in cfg.curriculum.environments)


def test_refinement_episode_with_one_failing_test_as_feedback(tok: Any) -> None:
    params = dict(load_config(EXAMPLE).rollout.collector.params)
    params["counterfactual"] = False
    collector = COLLECTORS.get("multi_turn").build(params)
    engine = TurnEngine(tok)
    sampling = SamplingParams(n=1, temperature=1.0, max_new_tokens=64, seed=1)
    [episode] = collector.collect(
        [PROBLEM], engine, PromptFormatter(tok), sampling, 0, score=env_reward_stage()
    )
    scores = [t.score for t in episode.turns]
    assert len(episode.turns) == 3 and scores[-1] == 1.0 and episode.turns[-1].correct
    assert scores[0] == 0.0 and scores[1] == 0.0  # no test passes; no code block (-1 -> 0)
    first = episode.turns[0].feedback
    assert first.startswith("0 of ") and "failing test: solve(" in first
    assert first.count("solve(") == 1, "one failing test, not the hidden tests as a whole"
    assert "should return" in first and "got" in first
    assert "code block" in episode.turns[1].feedback
    # the feedback reached the model as the next user message, in the example's template
    assert "Test feedback: 0 of" in engine.contexts[1]
    # no hidden test other than the one named appears in any context the model saw
    named = sum(1 for args, _ in PROBLEM.data["tests"] if json.dumps(args)[1:-1] in first)
    assert named == 1
    leaked = [
        args
        for args, _ in PROBLEM.data["tests"][1:]
        if len(json.dumps(args)) > 12
        and json.dumps(args)[1:-1] not in PROBLEM.prompt
        and json.dumps(args)[1:-1] not in first
        and any(json.dumps(args)[1:-1] in c for c in engine.contexts)
    ]
    assert leaked == []


def test_error_feedback_is_the_errors_last_line() -> None:
    program = "def solve(xs):\n    raise KeyError('no such step')\n"
    verdict = ENV.verify(PROBLEM, f"```python\n{program}```")
    assert not verdict.correct and verdict.reward == 0.0
    assert "raised KeyError: 'no such step'" in verdict.detail
    slow = "def solve(xs):\n    while True:\n        pass\n"
    verdict = ENV.verify(PROBLEM, f"```python\n{slow}```")
    assert "time limit" in verdict.detail and verdict.reward == 0.0
