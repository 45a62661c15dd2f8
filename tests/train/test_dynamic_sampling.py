"""DAPO dynamic sampling: uninformative groups are dropped and refilled, within max_rounds."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from verirl.assembly import build
from verirl.config import load_config
from verirl.models import load_tokenizer, tiny_model
from verirl.rewards import RewardContext, RewardSource
from verirl.rollout.collect import Collector
from verirl.trainer import Trainer
from verirl.types import Problem, Rollout, SamplingParams, Verdict


class ScriptedCollector(Collector):
    """Group i of the whole run gets rewards ``script[i]`` (one per sample)."""

    def __init__(self, script: list[list[float]]) -> None:
        super().__init__(params=None)  # type: ignore[arg-type]
        self.script = script
        self.calls: list[int] = []

    def collect(
        self,
        problems: Sequence[Problem],
        engine,
        formatter,
        sampling: SamplingParams,
        first_group: int = 0,
        *,
        score,
    ) -> list[Rollout]:  # type: ignore[no-untyped-def]
        self.calls.append(len(problems))
        out = []
        for i, p in enumerate(problems):
            for reward in self.script[first_group + i]:
                out.append(
                    Rollout(
                        p,
                        first_group + i,
                        (1, 2),
                        (3,),
                        (0.0,),
                        "x",
                        "stop",
                        verdict=Verdict(reward, reward == 1.0),
                    )
                )
        return out


class NeverCalled(RewardSource):
    def score(self, rollouts: Sequence[Rollout], ctx: RewardContext) -> list[Verdict]:
        raise AssertionError("scripted rollouts are already scored")


@pytest.fixture(scope="module")
def policy():  # type: ignore[no-untyped-def]
    tok = load_tokenizer("smollm2-135m-instruct")
    return tiny_model(len(tok)), tok


def _trainer(
    policy,
    tmp_path: Path,
    script: list[list[float]],
    enabled: bool,  # type: ignore[no-untyped-def]
    rounds: int = 3,
) -> Trainer:
    cfg = load_config(
        None,
        [
            "rollout.prompts_per_step=4",
            "rollout.group_size=2",
            f"dynamic_sampling.enabled={str(enabled).lower()}",
            f"dynamic_sampling.max_rounds={rounds}",
            "curriculum.tau_num=1000",
        ],
    )
    trainer = Trainer(build(cfg, policy), tmp_path)
    trainer.parts.producer.collector = ScriptedCollector(script)
    trainer.parts.producer.reward = NeverCalled(params=None)  # type: ignore[arg-type]
    return trainer


def test_uninformative_groups_are_dropped_and_refilled(policy, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # round 1 (4 groups): 2 informative; round 2 asks for the 2 missing: 1 informative;
    # round 3 asks for 1: informative → 4 kept after 3 rounds, 7 groups generated.
    script = [[1, 0], [1, 1], [0, 0.5], [0, 0], [0, 0], [1, 0], [0, 1], [0.2, 0.2]]
    t = _trainer(policy, tmp_path, script, enabled=True)
    out = t.parts.producer.sample_step()
    assert t.parts.producer.collector.calls == [4, 2, 1]
    assert sorted({r.group for r in out.rollouts}) == [0, 2, 5, 6]
    assert len(out.generated) == 7 * 2
    assert out.stats["rollout/effective_prompt_ratio"] == pytest.approx(4 / 7)
    assert out.stats["rollout/rounds"] == 3
    t.parts.producer.curriculum.update(out.generated)  # the curriculum sees dropped groups too
    assert (
        sum(t.parts.producer.curriculum.counters("addition")[1] for _ in [0])
        + sum(t.parts.producer.curriculum.counters(e)[1] for e in ("multiplication", "chain_sum"))
        == 14
    )


def test_rounds_are_bounded(policy, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    script = [[1, 1]] * 20  # nothing is ever informative
    t = _trainer(policy, tmp_path, script, enabled=True, rounds=2)
    out = t.parts.producer.sample_step()
    assert t.parts.producer.collector.calls == [4, 4]
    assert out.stats["rollout/effective_prompt_ratio"] == 0.0
    assert out.stats["rollout/groups_trained"] == 4  # falls back to the first groups


def test_disabled_keeps_every_group(policy, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    script = [[1, 1], [1, 0], [0, 0], [0.5, 0]]
    t = _trainer(policy, tmp_path, script, enabled=False)
    out = t.parts.producer.sample_step()
    assert t.parts.producer.collector.calls == [4]
    assert len(out.rollouts) == 8
    assert out.stats["rollout/effective_prompt_ratio"] == pytest.approx(0.5)
