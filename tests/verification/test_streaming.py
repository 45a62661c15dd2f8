"""Rewards while generating: a finished sequence is verified while the rest still decode,
and the verdicts are the ones verify-after-generate gives."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from verirl.envs import get_env
from verirl.models import load_tokenizer, tiny_model
from verirl.registry import NoParams
from verirl.rewards import RewardContext
from verirl.rewards.env import EnvVerifierReward
from verirl.rewards.stage import RewardStage
from verirl.rollout.base import Generation, OnFinish
from verirl.rollout.collect import COLLECTORS
from verirl.rollout.hf import HFEngine
from verirl.rollout.prompts import PromptFormatter
from verirl.types import Problem, SamplingParams, Verdict
from verirl.verification.batch import BatchVerifier
from verirl.verification.executors import ThreadExecutor

ENV = get_env("addition")
PROBLEMS = [ENV.generate(1, s) for s in range(3)]


def _stage(stream: bool, executor: Any = None) -> RewardStage:
    ctx = RewardContext(verifier=BatchVerifier(executor))
    return RewardStage(EnvVerifierReward(NoParams()), ctx, stream=stream)


def test_submitted_verdicts_are_picked_up_and_equal_verify_alone() -> None:
    texts = [f"\\boxed{{{ENV.solve(p)}}}" for p in PROBLEMS] + ["\\boxed{0}", "no answer"]
    problems = [*PROBLEMS, PROBLEMS[0], PROBLEMS[1]]
    alone = BatchVerifier().verify(problems, texts)
    streamed = BatchVerifier()
    streamed.submit(problems[:3], texts[:3])
    streamed.submit([problems[0]], [texts[0]])  # a duplicate pair: picked up once each
    got = streamed.verify([*problems, problems[0]], [*texts, texts[0]])
    assert got == [*alone, alone[0]]
    assert streamed.metrics()["verified"] == 6  # the five, and the duplicate once more
    assert streamed.discard_streamed() == 0  # everything submitted was picked up


@pytest.fixture(scope="module")
def formatter() -> PromptFormatter:
    return PromptFormatter(load_tokenizer("smollm2-135m-instruct"))


class _Streaming:
    """An engine that hands out its first sequence, then 'decodes' until that sequence's
    verdict exists (proof that verification overlaps generation), then the rest."""

    streams_finished = True

    def __init__(self, texts: list[str], verified: threading.Event) -> None:
        self.texts, self.verified = texts, verified

    def sync_weights(self) -> None: ...

    def generate(
        self,
        prompts: Sequence[Sequence[int]],
        sampling: SamplingParams,
        on_finish: OnFinish | None = None,
    ) -> list[list[Generation]]:
        groups = [
            [Generation((7, 8), (-0.1, -0.2), self.texts[(p + j) % 3], "stop") for j in range(2)]
            for p in range(len(prompts))
        ]
        if on_finish is None:  # verify-after-generate
            return groups
        on_finish(0, 0, groups[0][0])
        assert self.verified.wait(20), "the first sequence was not verified while decoding"
        for p, group in enumerate(groups):
            for j, g in enumerate(group):
                if (p, j) != (0, 0):
                    on_finish(p, j, g)
        return groups


def test_single_turn_verifies_while_decoding_and_verdicts_are_unchanged(
    formatter: PromptFormatter, monkeypatch: pytest.MonkeyPatch
) -> None:
    verified = threading.Event()
    real = type(ENV).verify

    def verify(self: Any, problem: Problem, text: str) -> Verdict:
        out = real(self, problem, text)
        verified.set()
        return out

    monkeypatch.setattr(type(ENV), "verify", verify)
    texts = [f"\\boxed{{{ENV.solve(PROBLEMS[0])}}}", "\\boxed{1}", "none"]
    collector = COLLECTORS.get("single_turn").build({})
    sampling = SamplingParams(n=2, max_new_tokens=4)
    streamed = collector.collect(
        PROBLEMS, _Streaming(texts, verified), formatter, sampling, score=_stage(True)
    )
    verified.set()  # the plain run needs no proof of overlap
    plain = collector.collect(
        PROBLEMS, _Streaming(texts, verified), formatter, sampling, score=_stage(False)
    )
    assert [r.verdict for r in streamed] == [r.verdict for r in plain]
    assert [r.text for r in streamed] == [r.text for r in plain]


def test_multi_turn_episodes_stream_each_turn_with_the_same_verdicts(
    formatter: PromptFormatter,
) -> None:
    """A tiny model's refinement episodes (the feedback turns too), streamed on a thread pool
    against verify-after-generate at the same seed: the same episodes, the same verdicts."""
    tok = formatter.tokenizer
    model = tiny_model(len(tok), seed=0)
    params = {"max_turns": 2, "counterfactual": True, "cf_top_l": 2, "cf_alternatives": 2}
    sampling = SamplingParams(n=2, max_new_tokens=6, seed=0)
    runs = []
    for stream in (True, False):
        collector = COLLECTORS.get("multi_turn").build(params)
        engine = HFEngine(model, tok, seed=0)
        with ThreadExecutor() as pool:
            stage = _stage(stream, pool)
            runs.append(collector.collect(PROBLEMS[:2], engine, formatter, sampling, score=stage))
            assert stage.ctx.verifier.metrics()["verified"] > 0
    streamed, plain = runs
    assert [r.response_ids for r in streamed] == [r.response_ids for r in plain]
    assert [r.verdict for r in streamed] == [r.verdict for r in plain]
    assert [[t.alt_scores for t in r.turns] for r in streamed] == [
        [t.alt_scores for t in r.turns] for r in plain
    ]


@pytest.mark.parametrize(("written", "meant"), [("off", "off"), ("on", "on"), ("auto", "auto")])
def test_a_bare_yaml_on_or_off_is_the_switch_it_names(
    written: str, meant: str, tmp_path: Path
) -> None:
    """YAML 1.1 reads ``stream: off`` as false; the config takes it as 'off'."""
    from verirl.config import load_config

    path = tmp_path / "c.yaml"
    path.write_text(f"verification:\n  stream: {written}\n")
    assert load_config(path, []).verification.stream == meant
    assert load_config(None, [f"verification.stream={written}"]).verification.stream == meant
