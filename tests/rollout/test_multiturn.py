"""The multi_turn collector: token bookkeeping, stopping, counterfactual selection, metrics.

Most tests drive the collector with a scripted engine (real SmolLM2 tokenizer, chosen
outputs and log-probs) so every token can be checked exactly; one runs a tiny random model
through the real HFEngine and re-scores the episodes by teacher forcing.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import pytest
import torch

from verirl.credit import CREDIT, CreditInput
from verirl.envs import get_env
from verirl.models import load_tokenizer, tiny_model
from verirl.rewards.stage import env_reward_stage
from verirl.rollout.base import Generation
from verirl.rollout.collect import COLLECTORS
from verirl.rollout.hf import HFEngine
from verirl.rollout.multiturn import MultiTurnParams, feedback_glue, turn_score
from verirl.rollout.prompts import PromptFormatter
from verirl.types import Rollout, SamplingParams, Verdict

ENV = get_env("addition")
PROBLEMS = [ENV.generate(2, 0), ENV.generate(2, 1)]
RIGHT = [ENV.solve(p) for p in PROBLEMS]
WRONG = [str(int(a) + 1) for a in RIGHT]


@pytest.fixture(scope="module")
def tok() -> Any:
    return load_tokenizer("smollm2-135m-instruct")


@pytest.fixture(scope="module")
def formatter(tok: Any) -> PromptFormatter:
    return PromptFormatter(tok)


def right(p: int, tag: str) -> str:
    return f"[{tag}] so the sum is \\boxed{{{RIGHT[p]}}}"


def wrong(p: int, tag: str) -> str:
    return f"[{tag}] so the sum is \\boxed{{{WRONG[p]}}}"


class ScriptedEngine:
    """A RolloutEngine returning chosen outputs: ``plan[p][j]`` is the list of (text, nll) of
    the turns of sample j of problem p (the text carries a unique tag ``[p{p}s{j}]``);
    ``alts[(p, j, t)]`` (j = None for turn 1, whose history has no tag) the alternatives'
    texts for a counterfactual call (recognised by ``n == cf_n``). Every token of a scripted
    output gets log-prob −nll; outputs end with the EOS token."""

    def __init__(
        self,
        tok: Any,
        plan: dict[int, list[list[tuple[str, float]]]],
        alts: dict[tuple[int, int | None, int], list[str]] | None = None,
        cf_n: int = 3,
    ) -> None:
        self.tok = tok
        self.plan = plan
        self.alts = alts or {}
        self.cf_n = cf_n
        self.calls: list[tuple[list[list[int]], SamplingParams]] = []

    def sync_weights(self) -> None:
        return None

    def _gen(self, text: str, nll: float) -> Generation:
        ids = (*self.tok.encode(text, add_special_tokens=False), self.tok.eos_token_id)
        return Generation(ids, (-nll,) * len(ids), text, "stop")

    def generate(
        self, prompts: Sequence[Sequence[int]], sampling: SamplingParams
    ) -> list[list[Generation]]:
        self.calls.append(([list(p) for p in prompts], sampling))
        out = []
        for ids in prompts:
            text = self.tok.decode(list(ids))
            p = next(i for i, prob in enumerate(PROBLEMS) if prob.prompt in text)
            t = text.count("<|im_start|>assistant") - 1  # earlier assistant turns
            tags = [j for j in range(len(self.plan[p])) if f"[p{p}s{j}]" in text]
            j = tags[0] if tags else None
            if sampling.n == self.cf_n:
                out.append([self._gen(a, 1.0) for a in self.alts[(p, j, t)]])
            elif t == 0:
                out.append([self._gen(*self.plan[p][s][0]) for s in range(sampling.n)])
            else:
                out.append([self._gen(*self.plan[p][j][t])])
        return out


def collect(
    engine: ScriptedEngine,
    formatter: PromptFormatter,
    n: int,
    first_group: int = 0,
    **params: Any,
) -> tuple[list[Rollout], dict[str, float]]:
    collector = COLLECTORS.get("multi_turn").build(params)
    sampling = SamplingParams(n=n, temperature=1.0, max_new_tokens=64, seed=123)
    started = time.perf_counter()
    rollouts = collector.collect(
        PROBLEMS, engine, formatter, sampling, first_group, score=env_reward_stage()
    )
    WALL[:] = [time.perf_counter() - started]
    return rollouts, collector.metrics()


WALL: list[float] = []
"""The wall time of the last :func:`collect` call, measured around it: the collector's own
``episode_seconds + cf_seconds`` must fit inside it."""


def check_bookkeeping(r: Rollout, tok: Any, prompts_seen: list[list[int]]) -> None:
    """Every invariant of one episode's token layout."""
    n = len(r.response_ids)
    assert len(r.loss_mask) == n and len(r.logprobs) == n
    in_turn = [0] * n
    for k, t in enumerate(r.turns):
        assert r.response_ids[t.start : t.end] == (
            *tok.encode(t.text, add_special_tokens=False),
            tok.eos_token_id,
        ), "the model's tokens are kept verbatim"
        assert all(lp == pytest.approx(-t.nll) for lp in r.logprobs[t.start : t.end])
        for i in range(t.start, t.end):
            in_turn[i] = 1
        # the turn was sampled from exactly prompt ⊕ response[:start]
        assert [*r.prompt_ids, *r.response_ids[: t.start]] in prompts_seen, f"turn {k + 1}"
        if k > 0:
            assert t.start > r.turns[k - 1].end, "feedback glue sits between turns"
    assert list(r.loss_mask) == in_turn, "loss_mask is 1 exactly on the model's tokens"
    assert all(lp == 0.0 for lp, m in zip(r.logprobs, r.loss_mask, strict=True) if not m)
    assert r.turns[-1].end == n, "the episode ends with the model's last turn"


def test_episodes_stop_on_success_or_after_k_turns(tok: Any, formatter: PromptFormatter) -> None:
    plan = {
        0: [  # s0: wrong, wrong, right (success at 3);  s1: right at once
            [(wrong(0, "p0s0"), 0.5), (wrong(0, "p0s0"), 0.4), (right(0, "p0s0"), 0.3)],
            [(right(0, "p0s1"), 0.2)],
        ],
        1: [  # s0: wrong three times (K limit);  s1: no boxed answer, then right
            [(wrong(1, "p1s0"), 0.5)] * 3,
            [("[p1s1] I am not sure", 0.9), (right(1, "p1s1"), 0.1)],
        ],
    }
    engine = ScriptedEngine(tok, plan)
    rollouts, m = collect(engine, formatter, n=2, first_group=5, max_turns=3)

    assert [r.group for r in rollouts] == [5, 5, 6, 6]
    assert [[t.score for t in r.turns] for r in rollouts] == [
        [0.0, 0.0, 1.0],
        [1.0],
        [0.0, 0.0, 0.0],
        [0.0, 1.0],
    ]
    assert [t.feedback for t in rollouts[3].turns] == [
        "no final answer found in \\boxed{}",
        "correct",
    ]
    # lock-step batching: one call per round over the episodes still running
    assert [(len(p), s.n, s.seed) for p, s in engine.calls] == [
        (2, 2, 123),
        (3, 1, None),
        (2, 1, None),
    ]
    seen = [p for prompts, _ in engine.calls for p in prompts]
    for r in rollouts:
        check_bookkeeping(r, tok, seen)
    # the whole episode is the chat template's rendering of the conversation
    r = rollouts[0]
    history = []
    for t in r.turns[:-1]:
        history.append({"role": "assistant", "content": t.text})
        message = (
            f"Verifier feedback: {t.feedback}\n"
            "Revise your solution and put your final answer within \\boxed{}."
        )
        history.append({"role": "user", "content": message})
    assert [*r.prompt_ids, *r.response_ids[: r.turns[-1].start]] == formatter.encode(
        PROBLEMS[0], history
    )
    # verdict / text are the final turn's; extra summarises the episode
    assert r.text == right(0, "p0s0") and r.verdict is not None and r.verdict.correct
    assert dict(r.verdict.extra) == {
        "best_score": 1.0,
        "turns": 3,
        "success_turn": 3,
        "turn_scores": [0.0, 0.0, 1.0],
    }
    assert rollouts[2].verdict.extra["success_turn"] is None
    seconds = {k: m.pop(k) for k in ("episode_seconds", "cf_seconds")}
    assert seconds["episode_seconds"] > 0
    assert seconds["episode_seconds"] + seconds["cf_seconds"] <= WALL[0]  # seconds, once each
    assert m == {
        "best_turn_pass_at_k": 1.0,  # both problems solved by some episode
        "best_turn_accuracy": 0.75,  # 3 of 4 episodes
        "first_turn_accuracy": 0.25,  # only p0s1
        "turns_to_success": 2.0,  # (3 + 1 + 2) / 3
        "mean_turns": 2.25,  # (3 + 1 + 3 + 2) / 4
        "regression_rate": 0.0,
        "cf_turns": 0.0,
        "cf_applicable_share": 0.0,
        "cf_extra_token_share": 0.0,
    }


def test_continue_after_success_measures_regressions(tok: Any, formatter: PromptFormatter) -> None:
    plan = {
        0: [
            [(right(0, "p0s0"), 0.1), (wrong(0, "p0s0"), 0.1), (right(0, "p0s0"), 0.1)],
            [(right(0, "p0s1"), 0.1)] * 3,
        ],
        1: [[(wrong(1, "p1s0"), 0.1)] * 3, [(wrong(1, "p1s1"), 0.1)] * 3],
    }
    engine = ScriptedEngine(tok, plan)
    rollouts, m = collect(engine, formatter, n=2, max_turns=3, stop_on_success=False)
    assert [len(r.turns) for r in rollouts] == [3, 3, 3, 3]
    assert [t.score for t in rollouts[0].turns] == [1.0, 0.0, 1.0]
    seen = [p for prompts, _ in engine.calls for p in prompts]
    for r in rollouts:
        check_bookkeeping(r, tok, seen)
    # 2 episodes succeeded (p0s0, p0s1); p0s0 dropped below τ afterwards → 1/2
    assert m["regression_rate"] == 0.5
    assert m["best_turn_pass_at_k"] == 0.5 and m["turns_to_success"] == 1.0
    # TCPO on this data: p0s0 turn 2 is a regression after success → negative, p0s1's
    # preserved turn 2 positive (z over (−1, +1) in the (prompt 0, turn 2) group)
    adv = CREDIT.get("tcpo")(CreditInput.from_rollouts(rollouts))
    t2 = rollouts[0].turns[1]
    assert float(adv[0, t2.start]) < 0 < float(adv[1, rollouts[1].turns[1].start])


def test_counterfactual_picks_top_l_surprising_non_improving_turns(
    tok: Any, formatter: PromptFormatter
) -> None:
    plan = {
        0: [  # s0: wrong (nll 2.0), wrong (1.5);  s1: right at once with nll 3.0 (improving)
            [(wrong(0, "p0s0"), 2.0), (wrong(0, "p0s0"), 1.5)],
            [(right(0, "p0s1"), 3.0)],
        ],
        1: [  # s0: wrong (1.0), right (5.0, improving);  s1: wrong (2.5), wrong (0.1)
            [(wrong(1, "p1s0"), 1.0), (right(1, "p1s0"), 5.0)],
            [(wrong(1, "p1s1"), 2.5), (wrong(1, "p1s1"), 0.1)],
        ],
    }
    # non-improving candidates by nll: p1s1 t1 2.5 > p0s0 t1 2.0 > p0s0 t2 1.5 > p1s0 t1 1.0
    alts = {
        (1, None, 0): [right(1, "alt"), wrong(1, "alt"), wrong(1, "alt")],  # 1, 0, 0: vary
        (0, None, 0): [wrong(0, "alt")] * 3,  # 0, 0, 0: constant
        (0, 0, 1): [right(0, "alt"), right(0, "alt"), wrong(0, "alt")],  # 1, 1, 0: vary
    }
    engine = ScriptedEngine(tok, plan, alts, cf_n=3)
    rollouts, m = collect(
        engine,
        formatter,
        n=2,
        max_turns=2,
        counterfactual=True,
        cf_top_l=3,
        cf_alternatives=3,
        cf_temperature=0.7,
    )
    # one extra generate call, batched over the 3 chosen turns, M = 3 each, at T = 0.7
    cf_prompts, cf_sampling = engine.calls[-1]
    assert len(engine.calls) == 3 and len(cf_prompts) == 3
    assert (cf_sampling.n, cf_sampling.temperature, cf_sampling.seed) == (3, 0.7, None)
    p1s1, p0s0 = rollouts[3], rollouts[0]
    assert cf_prompts == [
        list(p1s1.prompt_ids),
        list(p0s0.prompt_ids),
        [*p0s0.prompt_ids, *p0s0.response_ids[: p0s0.turns[1].start]],  # history fixed
    ]
    assert [[t.alt_scores for t in r.turns] for r in rollouts] == [
        [(0.0, 0.0, 0.0), (1.0, 1.0, 0.0)],
        [()],
        [(), ()],
        [(1.0, 0.0, 0.0), ()],
    ]
    assert m["cf_turns"] == 3.0 and m["cf_applicable_share"] == pytest.approx(2 / 3)
    assert m["cf_seconds"] > 0 and m["episode_seconds"] + m["cf_seconds"] <= WALL[0]
    alt_tokens = sum(
        len(tok.encode(a, add_special_tokens=False)) + 1 for texts in alts.values() for a in texts
    )
    episode_tokens = sum(sum(r.loss_mask) for r in rollouts)
    assert m["cf_extra_token_share"] == pytest.approx(alt_tokens / (episode_tokens + alt_tokens))
    # the counterfactual reaches TCPO: p0s0 turn 2 gets r − mean(alt) = 0 − 2/3 instead of
    # its hindsight credit (prompt 0, turn 2 has one episode → raw value kept)
    adv = CREDIT.get("tcpo")(CreditInput.from_rollouts(rollouts))
    assert float(adv[0, p0s0.turns[1].start]) == pytest.approx(-2 / 3, abs=1e-6)


def test_top_l_zero_or_off_draws_nothing(tok: Any, formatter: PromptFormatter) -> None:
    plan = {
        0: [[(wrong(0, "p0s0"), 1.0)]],
        1: [[(wrong(1, "p1s0"), 1.0)]],
    }
    engine = ScriptedEngine(tok, plan)
    rollouts, m = collect(engine, formatter, n=1, max_turns=1, counterfactual=True, cf_top_l=0)
    assert len(engine.calls) == 1 and all(not t.alt_scores for r in rollouts for t in r.turns)
    assert m["turns_to_success"] != m["turns_to_success"]  # NaN: nobody succeeded
    assert math.isnan(m["regression_rate"])


def test_feedback_glue_closes_the_turn_once(tok: Any, formatter: PromptFormatter) -> None:
    end = tok.convert_tokens_to_ids("<|im_end|>")
    start = tok.convert_tokens_to_ids("<|im_start|>")
    answer = tok.encode("\\boxed{3}", add_special_tokens=False)
    with_eos = feedback_glue(formatter, PROBLEMS[0], "try again", [*answer, end])
    cut_off = feedback_glue(formatter, PROBLEMS[0], "try again", answer)  # hit max tokens
    assert cut_off == [end, *with_eos]
    assert with_eos[1] == start and tok.decode(with_eos).endswith("<|im_start|>assistant\n")


def test_turn_score_maps() -> None:
    v = Verdict(0.4, False)
    assert turn_score(v, "correct") == 0.0 and turn_score(v, "clip") == 0.4
    assert turn_score(v, "affine") == pytest.approx(0.7)
    bad = Verdict(-1.0, False)
    assert (turn_score(bad, "clip"), turn_score(bad, "affine")) == (0.0, 0.0)
    assert turn_score(Verdict(1.0, True), "correct") == 1.0


def test_params_are_validated() -> None:
    with pytest.raises(ValueError, match="feedback_template"):
        MultiTurnParams(feedback_template="the answer is {answer}")
    with pytest.raises(ValueError, match="max_turns"):
        MultiTurnParams(max_turns=0)


def test_tiny_model_episodes_match_teacher_forcing(tok: Any, formatter: PromptFormatter) -> None:
    """Real sampling: the recorded log-probs equal the model's log-probs of the stored
    sequence, so each turn was sampled in exactly the context the learner will see."""
    model = tiny_model(len(tok), seed=0)
    engine = HFEngine(model, tok, seed=0)
    collector = COLLECTORS.get("multi_turn").build(
        {"max_turns": 2, "counterfactual": True, "cf_top_l": 2, "cf_alternatives": 2}
    )
    sampling = SamplingParams(n=2, temperature=1.0, max_new_tokens=5, seed=0)
    rollouts = collector.collect(PROBLEMS, engine, formatter, sampling, score=env_reward_stage())
    assert len(rollouts) == 4
    for r in rollouts:
        ids = torch.tensor([[*r.prompt_ids, *r.response_ids]])
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=ids).logits.float(), dim=-1)[0]
        p = len(r.prompt_ids)
        for t in r.turns:
            for i in range(t.start, t.end):
                expected = float(logp[p + i - 1, r.response_ids[i]])
                assert r.logprobs[i] == pytest.approx(expected, abs=1e-4)
        assert sum(r.loss_mask) == sum(t.end - t.start for t in r.turns)
        if r.turns[0].score < 1.0:
            assert len(r.turns) == 2
    chosen = sum(bool(t.alt_scores) for r in rollouts for t in r.turns)
    assert chosen == 2 and collector.metrics()["cf_extra_token_share"] > 0


def test_evaluation_runs_refinement_episodes_without_counterfactual(tok, formatter):
    """Held-out evaluation through a multi-turn collector: a problem counts as solved when any
    turn succeeds, the episode metrics are reported, and no alternatives are sampled even when
    the training collector draws them."""
    from verirl.train.evaluate import evaluate

    plan = {
        0: [[(wrong(0, "p0s0"), 1.0), (right(0, "p0s0"), 1.0)]],  # solved at turn 2
        1: [[(wrong(1, "p1s0"), 1.0), (wrong(1, "p1s0"), 1.0), (wrong(1, "p1s0"), 1.0)]],
    }
    engine = ScriptedEngine(tok, plan, cf_n=3)
    training = COLLECTORS.get("multi_turn").build(
        {"max_turns": 3, "counterfactual": True, "cf_top_l": 5, "cf_alternatives": 3}
    )
    result = evaluate(engine, formatter, PROBLEMS, samples=1, collector=training)
    assert result.accuracy == {"addition": 0.5}
    assert result.counts == {"addition": [(1, 1), (1, 0)]}  # (samples, solved) per problem
    assert all(call[1].n == 1 for call in engine.calls), "no counterfactual call"
    ep = result.episode
    assert ep["best_turn_accuracy"] == 0.5 and ep["first_turn_accuracy"] == 0.0
    assert ep["turns_to_success"] == 2.0 and ep["mean_turns"] == 2.5 and ep["cf_turns"] == 0.0
    assert result.flat("eval")["eval/episode/turns_to_success"] == 2.0
    assert training.params.counterfactual, "the training collector is left unchanged"


def test_eval_metrics_carry_accuracy_per_difficulty() -> None:
    """The held-out accuracy of each environment, per difficulty, next to its mean (the report
    reads ``<env>/accuracy`` as an environment: the per-difficulty keys must not match it)."""
    from pathlib import Path

    from verirl.report import RunData
    from verirl.train.evaluate import EvalResult

    result = EvalResult(
        accuracy={"tool_world": 0.5},
        accuracy_by_difficulty={"tool_world": {0: 1.0, 2: 0.0}},
        mean_reward={"tool_world": 0.0},
        format_rate={"tool_world": 1.0},
    )
    flat = result.flat("eval_after")
    assert flat["eval_after/tool_world/accuracy_d0"] == 1.0
    assert flat["eval_after/tool_world/accuracy_d2"] == 0.0
    assert flat["eval_after/accuracy"] == 0.5
    run = RunData(run_dir=Path("run"), config={}, rows=[{"step": 0, **flat}])
    assert run.eval_envs() == ["tool_world"]


def test_eval_summary_is_the_unbiased_pass_at_k_with_intervals() -> None:
    """avg@n and pass@k from each problem's (samples, solved) pair, by hand: 4 samples with
    1, 0 and 4 solved give pass@2 = mean(1 − C(3,2)/C(4,2), 0, 1) = 0.5, avg@4 = 1.25/3; a
    second environment adds an "all" row over every problem."""
    from verirl.train.evaluate import EvalResult

    result = EvalResult(
        accuracy={"a": 1.25 / 3, "b": 0.5},
        accuracy_by_difficulty={"a": {0: 1.25 / 3}, "b": {0: 0.5}},
        mean_reward={"a": 0.0, "b": 0.0},
        format_rate={"a": 1.0, "b": 1.0},
        counts={"a": [(4, 1), (4, 0), (4, 4)], "b": [(4, 2)]},
    )
    s = result.summary((1, 2))
    assert s["a"]["pass@2"].value == pytest.approx(0.5)
    assert s["a"]["avg@4"].value == pytest.approx(1.25 / 3) == s["a"]["pass@1"].value
    assert s["a"]["pass@2"].low <= 0.5 <= s["a"]["pass@2"].high
    assert s["a"]["pass@2"].method == "bootstrap" and s["a"]["pass@2"].problems == 3
    # b: 1 − C(2,2)/C(4,2) = 5/6; all: the four problems together
    assert s["all"]["pass@2"].value == pytest.approx((0.5 + 0 + 1 + 5 / 6) / 4)
    assert s["all"]["pass@2"].problems == 4
    with pytest.raises(ValueError, match="pass@8 needs at least 8 samples"):
        result.summary((8,))
