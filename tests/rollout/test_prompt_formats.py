"""The prompt follows each environment's answer format (no boxed instruction for Coq)."""

from __future__ import annotations

import pytest

from verirl.envs import get_env
from verirl.rollout.prompts import SYSTEM_VARIANTS, PromptFormatter

SYSTEM = "Solve the task. End your reply with the final answer in \\boxed{}."
EXAMPLES = (("Compute 4 + 3.\n\nPut your final answer within \\boxed{}.", "4 + 3 = 7\n\\boxed{7}"),)


def test_boxed_environment_keeps_the_configured_prompt() -> None:
    msgs = PromptFormatter(None, SYSTEM, EXAMPLES).messages(get_env("addition").generate(0, 0))
    assert msgs[0] == {"role": "system", "content": SYSTEM}
    assert msgs[1]["content"] == EXAMPLES[0][0] and msgs[2]["content"] == EXAMPLES[0][1]


def test_coq_prompt_never_asks_for_boxed() -> None:
    problem = get_env("coq_proofs").generate(0, 0)
    msgs = PromptFormatter(None, SYSTEM, EXAMPLES).messages(problem)
    assert all("\\boxed" not in m["content"] for m in msgs)
    assert "```coq" in msgs[0]["content"]


def test_variation_is_per_problem_and_mixes_zero_shot() -> None:
    f = PromptFormatter(None, SYSTEM, EXAMPLES, SYSTEM_VARIANTS, zero_shot_rate=0.5)
    env = get_env("addition")
    runs = [f.messages(env.generate(1, s)) for s in range(100)]
    assert runs[0] == f.messages(env.generate(1, 0))  # same problem, same prompt
    assert len({m[0]["content"] for m in runs}) == len(SYSTEM_VARIANTS)
    zero = sum(len(m) == 2 for m in runs)
    assert 25 <= zero <= 75
    with pytest.raises(ValueError):
        PromptFormatter(None, SYSTEM, zero_shot_rate=1.5)
