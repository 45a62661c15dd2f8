"""The tool_calls collector: token-exact tool episodes (sampled ids verbatim, only the glue
tokenized, mask 1 on the model's tokens and 0 on tool output, per-turn spans), unreadable
calls as wrong-format turns, the template check before the first episode, a second tool task
(arithmetic with the calculator), and TCPO's turn-level credit on tool episodes."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
import torch

from verirl.credit import CREDIT, CreditInput
from verirl.envs import TURN_SEPARATOR, get_env
from verirl.errors import UserInputError
from verirl.models import load_tokenizer
from verirl.rewards.stage import env_reward_stage
from verirl.rollout.base import Generation
from verirl.rollout.collect import COLLECTORS
from verirl.rollout.prompts import PromptFormatter
from verirl.tools import get_format
from verirl.tools.bridge import ChatRenderer
from verirl.tools.calls import decode_transcript
from verirl.tools.template_check import compare_episode
from verirl.types import Rollout, SamplingParams

TW = get_env("tool_world")
SMOL = get_format("chatml_tools")


@pytest.fixture(scope="module")
def tok() -> Any:
    return load_tokenizer("smollm2-135m-instruct")


Script = Callable[[int, int, str], str]  # (prompt index, turn, context text) -> reply


class ScriptedEngine:
    """Replies by script; ``split`` samples each reply one character per token (ids no
    tokenizer would produce, so re-encoding would show), else as the tokenizer encodes it."""

    def __init__(self, tok: Any, script: Script, split: bool = False, demo: bool = True):
        self.tok, self.script, self.split, self.demo = tok, script, split, demo
        self.contexts: list[list[int]] = []
        self.calls = 0
        self.n = 1

    def sync_weights(self) -> None:
        return None

    def ids(self, text: str) -> list[int]:
        if not self.split:
            return list(self.tok.encode(text, add_special_tokens=False))
        return [i for ch in text for i in self.tok.encode(ch, add_special_tokens=False)]

    def generate(
        self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        self.calls += 1
        self.n = sampling.n
        out = []
        for p, ids in enumerate(prompts):
            self.contexts.append(list(ids))
            text = self.tok.decode(list(ids), skip_special_tokens=False)
            turn = text.count("<|im_start|>assistant") - (2 if self.demo else 1)
            group = []
            for k in range(sampling.n):
                reply = self.script(p * 100 + k, turn, text)
                tokens = (*self.ids(reply), self.tok.eos_token_id)
                lps = tuple(-0.1 - 0.01 * j for j in range(len(tokens)))
                group.append(Generation(tokens, lps, reply, "stop"))
            out.append(group)
        return out


def plan_script(problem: Any) -> Script:
    replies = [SMOL.render(r) for r in decode_transcript(TW.solve(problem), TURN_SEPARATOR)]
    return lambda i, t, text: replies[t] if t < len(replies) else "Done."


def collect(
    tok: Any, problems: list[Any], engine: ScriptedEngine, n: int = 1, **params: Any
) -> list[Rollout]:
    collector = COLLECTORS.get("tool_calls").build({"max_turns": 8, **params})
    sampling = SamplingParams(n=n, temperature=1.0, max_new_tokens=96, seed=0)
    out = collector.collect(
        problems, engine, PromptFormatter(tok), sampling, score=env_reward_stage()
    )
    collect.last = collector  # type: ignore[attr-defined]
    return out


def test_sampled_ids_are_kept_verbatim_and_only_the_glue_is_tokenized(tok: Any) -> None:
    problem = TW.generate(4, 2)
    engine = ScriptedEngine(tok, plan_script(problem), split=True)
    [ep] = collect(tok, [problem], engine)
    assert ep.loss_mask is not None and ep.verdict is not None and ep.verdict.correct
    mask, resp = ep.loss_mask, ep.response_ids
    covered = set()
    for turn in ep.turns:
        sampled = [*engine.ids(turn.text), tok.eos_token_id]
        assert list(resp[turn.start : turn.end]) == sampled  # verbatim, odd tokens and all
        assert all(mask[turn.start : turn.end])
        covered.update(range(turn.start, turn.end))
    glue = [i for i in range(len(resp)) if i not in covered]
    assert glue and all(mask[i] == 0 and ep.logprobs[i] == 0.0 for i in glue)
    assert all(ep.logprobs[i] < 0 for i in covered)
    # each turn was sampled after exactly the episode's tokens before it
    for turn, context in zip(ep.turns, engine.contexts, strict=True):
        assert context == [*ep.prompt_ids, *resp[: turn.start]]
    # the glue after turn 1 is the tool's result and the next assistant header
    between = tok.decode(list(resp[ep.turns[0].end : ep.turns[1].start]), skip_special_tokens=False)
    result = "<|im_start|>user\n<tool_response>\nok\n</tool_response><|im_end|>\n"
    assert between == "\n" + result + "<|im_start|>assistant\n"


def test_an_episode_of_natural_tokens_equals_a_fresh_rendering(tok: Any) -> None:
    problem = TW.generate(4, 2)
    [ep] = collect(tok, [problem], ScriptedEngine(tok, plan_script(problem)))
    collector = collect.last  # type: ignore[attr-defined]
    setup = collector.setup(tok)
    schemas = collector.session(problem, setup.fmt).schemas()
    renderer = ChatRenderer(tok, setup.template, tuple(schemas))
    demo = collector.session(problem, setup.fmt).demonstration()
    messages = [*demo, {"role": "user", "content": problem.prompt}]
    replies = decode_transcript(TW.solve(problem), TURN_SEPARATOR)
    apps = collector.session(problem, setup.fmt)
    for r in replies:
        out = apps.take_turn(SMOL.render(r))
        messages += [out.reply.message(), *out.messages]
    messages.append({"role": "assistant", "content": "Done."})
    ids = [*ep.prompt_ids, *ep.response_ids]
    spans = [(len(ep.prompt_ids) + t.start, len(ep.prompt_ids) + t.end) for t in ep.turns]
    assert compare_episode(renderer, messages, ids, spans, len(demo) + 1) == []
    assert ids == renderer.ids(messages, add_generation_prompt=False)[: len(ids)]


def test_unreadable_call_is_a_wrong_format_turn_and_the_model_is_told(tok: Any) -> None:
    problem = TW.generate(0, 1)
    right = plan_script(problem)

    def script(i: int, t: int, text: str) -> str:
        return (
            '<tool_call>[{"name": "files_write", "arguments": {'
            if t == 0
            else right(i, t - 1, text)
        )

    engine = ScriptedEngine(tok, script)
    [ep] = collect(tok, [problem], engine)
    first = ep.turns[0]
    assert first.score == 0.0 and not first.correct  # reward -1 -> affine 0
    second = tok.decode(engine.contexts[1], skip_special_tokens=False)
    assert "error: the tool call could not be read (a <tool_call> is not closed" in second
    assert ep.verdict is not None and ep.verdict.correct and len(ep.turns) == 3
    m = collect.last.metrics()  # type: ignore[attr-defined]
    assert m["tools/readable_rate"] == pytest.approx(2 / 3)


def test_refused_calls_are_observations_and_counted(tok: Any) -> None:
    problem = TW.generate(0, 1)
    bad = SMOL.render(
        get_format("chatml_tools").parse(
            '<tool_call>[{"name": "files_write", "arguments": {"path": 3}}]</tool_call>'
        )
    )
    engine = ScriptedEngine(tok, lambda i, t, text: bad if t == 0 else "Done.")
    [ep] = collect(tok, [problem], engine)
    assert "bad arguments" in tok.decode(engine.contexts[1], skip_special_tokens=False)
    m = collect.last.metrics()  # type: ignore[attr-defined]
    assert m["tools/refused_call_rate"] == 1.0 and m["tools/wellformed_rate"] == 0.0
    assert ep.verdict is not None and ep.verdict.reward == 0.0  # a readable call: not -1


def test_a_broken_template_is_refused_before_the_first_episode(tok: Any, tmp_path: Path) -> None:
    from tests.tools.test_template_check import PYTHON_ARGUMENTS

    path = tmp_path / "broken.jinja"
    path.write_text(PYTHON_ARGUMENTS)
    problem = TW.generate(0, 1)
    engine = ScriptedEngine(tok, lambda i, t, text: "Done.", demo=True)
    with pytest.raises(UserInputError, match="not prefix-preserving") as err:
        collect(tok, [problem], engine, chat_template=str(path), format="hermes")
    assert "\n" not in str(err.value) and engine.calls == 0  # nothing was sampled
    [ep] = collect(
        tok, [problem], engine, chat_template=str(path), format="hermes", template_check="warn"
    )
    assert ep.verdict is not None and ep.verdict.reward == -1.0


def test_arithmetic_with_the_calculator_is_a_verified_tool_task(tok: Any) -> None:
    env = get_env("multiplication")
    problem = env.generate(6, 0)
    expression = problem.prompt.split("Compute ")[1].split(".")[0]
    value = str(eval(expression))  # the test's own reference

    def script(i: int, t: int, text: str) -> str:
        if t == 0:
            call = {"name": "calculate", "arguments": {"expression": expression}}
            return f"<tool_call>[{json.dumps(call)}]</tool_call>"
        assert f"<tool_response>\n{value}\n</tool_response>" in text
        return f"The product is \\boxed{{{value}}}."

    engine = ScriptedEngine(tok, script, demo=False)
    [ep] = collect(tok, [problem], engine, toolsets=[{"name": "calculator"}])
    assert [t.score for t in ep.turns] == [0.0, 1.0]  # no answer yet, then the right one
    assert ep.verdict is not None and ep.verdict.correct
    with pytest.raises(UserInputError, match="has no toolset"):
        collect(tok, [problem], ScriptedEngine(tok, script, demo=False))


def test_tcpo_credits_tool_turns_and_never_the_tool_output(tok: Any) -> None:
    problem = TW.generate(2, 4)  # two goals: write, then schedule
    right = plan_script(problem)

    def script(i: int, t: int, text: str) -> str:
        if i % 2 == 0:  # sample 0 does the plan; sample 1 lists files, then stops
            return right(i, t, text)
        return (
            '<tool_call>[{"name": "files_list", "arguments": {}}]</tool_call>'
            if t == 0
            else "Done."
        )

    rollouts = collect(tok, [problem], ScriptedEngine(tok, script), n=2)
    good, bad = rollouts
    assert good.verdict is not None and good.verdict.correct and bad.verdict is not None
    inp = CreditInput.from_rollouts(rollouts)
    adv = CREDIT.get("tcpo")(inp)
    mask = inp.response_mask
    assert torch.all(adv[mask == 0] == 0)  # tool results and headers get no credit
    for i, r in enumerate(rollouts):
        for t in r.turns:
            row = adv[i, t.start : t.end]
            assert torch.allclose(row, row[0].expand_as(row))  # one value per turn
    # turn 1 of the plan improved (a goal met), the other listed files: opposite signs
    assert adv[0, good.turns[0].start] > 0 > adv[1, bad.turns[0].start]
    mt = CREDIT.get("mt_grpo")(inp)
    assert torch.all(mt[mask == 0] == 0)


def test_counterfactual_alternatives_are_scored_from_the_fixed_history(tok: Any) -> None:
    problem = TW.generate(2, 4)  # two goals
    right = plan_script(problem)
    engine: ScriptedEngine

    def script(i: int, t: int, text: str) -> str:
        if engine.n > 1 or t == 0:  # the alternatives (n = M) and turn 1 follow the plan
            return right(i, t, text)
        return FILES_LIST if t == 1 else "Done."  # turn 2 wastes a call

    engine = ScriptedEngine(tok, script)
    [ep] = collect(tok, [problem], engine, counterfactual=True, cf_top_l=1, cf_alternatives=2)
    assert [t.text for t in ep.turns] == [right(0, 0, ""), FILES_LIST, "Done."]
    picked = [k for k, t in enumerate(ep.turns) if t.alt_scores]
    # the longest non-improving turn (highest mean NLL here) gets the alternatives; the plan's
    # second call from the same history completes the task
    assert picked == [1] and ep.turns[1].alt_scores == (1.0, 1.0) and ep.turns[1].score < 1.0
    assert collect.last.metrics()["cf_turns"] == 1.0  # type: ignore[attr-defined]


FILES_LIST = '<tool_call>[{"name": "files_list", "arguments": {}}]</tool_call>'
