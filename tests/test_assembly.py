"""The assembly of a run: the schema reads a config, the assembly checks the parts it names
against their registries and each other. Declared requirements: every incompatible pair is
refused at load time, in one line naming both fields; compatible ones load. Then the parts
are built once: the sampling half alone for evaluation and preflight (no learner, no
optimizer), the memory plan once for training and for ``verirl memory`` alike."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import TinyRun
from verirl import assembly
from verirl import config as schema
from verirl.assembly import build, check, load_config, plan
from verirl.backends import Backend
from verirl.cli import main
from verirl.config import ConfigError
from verirl.credit import CREDIT
from verirl.rewards import REWARDS
from verirl.rollout.collect import COLLECTORS
from verirl.train import memory_plan
from verirl.train.health import DETECTORS
from verirl.train.memory_plan import MemoryPlan

MT = "rollout.collector.name=multi_turn"
CF = "rollout.collector.params={counterfactual: true}"


@pytest.mark.parametrize(
    ("overrides", "fields"),
    [
        (["credit.name=tcpo"], ("credit.name", "rollout.collector", "multi-turn")),
        ([MT, "credit.name=tcpo"], ("credit.name", "rollout.collector", "counterfactual")),
        (["credit.name=mt_grpo"], ("credit.name", "rollout.collector", "multi-turn")),
        (["credit.name=trajectory"], ("credit.name", "rollout.collector", "multi-turn")),
        (["credit.name=process"], ("credit.name", "reward 'env'", "steps")),
        (
            ["curriculum.environments=[coq_proofs]", "reward.name=cer", "credit.name=process"],
            ("credit.name", "reward 'cer'", "steps"),
        ),
    ],
)
def test_incompatible_pairs_get_one_line_naming_both(
    overrides: list[str], fields: tuple[str, ...]
) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(None, overrides)
    message = str(err.value)
    assert "\n" not in message
    for f in fields:
        assert f in message


@pytest.mark.parametrize(
    "overrides",
    [
        [MT, CF, "credit.name=tcpo"],
        [MT, "credit.name=tcpo", "credit.params={counterfactual: false}"],
        [MT, "credit.name=mt_grpo"],
        [MT, "reward.name=cer", "credit.name=rloo"],
        ["curriculum.environments=[coq_proofs]", "credit.name=process"],
        ["curriculum.environments=[coq_proofs]", "reward.name=rule", "credit.name=process"],
    ],
)
def test_compatible_combinations_load(overrides: list[str]) -> None:
    load_config(None, overrides)


def test_components_declare_what_they_produce_and_need() -> None:
    assert COLLECTORS.get("single_turn").build({}).produces() == frozenset()
    assert COLLECTORS.get("multi_turn").build({"counterfactual": True}).produces() == {
        "turns",
        "counterfactual",
    }
    assert REWARDS.get("env").build({}).produces(["coq_proofs"]) == {"steps"}
    assert REWARDS.get("env").build({}).produces(["addition"]) == frozenset()
    assert REWARDS.get("cer").build({}).produces(["coq_proofs"]) == frozenset()
    assert REWARDS.get("cer").part.needs == {"policy"}  # type: ignore[attr-defined]
    assert CREDIT.get("process").requirements() == {"steps"}
    assert CREDIT.get("grpo").requirements() == frozenset()
    assert CREDIT.get("tcpo").requirements({"lambda_cf": 0.0}) == {"turns"}


def test_renamed_and_moved_fields_say_where_they_went() -> None:
    with pytest.raises(ConfigError, match=r"model.dtype"):
        load_config(None, ["model.autocast=bf16"])
    with pytest.raises(ConfigError, match=r"reward.overlong"):
        load_config(None, ["loss.overlong.buffer=8"])
    with pytest.raises(ConfigError, match=r"loss.terms.kl.coef=β"):
        load_config(None, ["loss.kl_coef=0.04"])
    with pytest.raises(ConfigError, match=r"rollout.engine.name: unknown rollout engine 'vlm'"):
        load_config(None, ["rollout.engine.name=vlm"])
    with pytest.raises(ConfigError, match=r"verification.executor.name"):
        load_config(None, ["verification.executor.name=gpu"])


def test_the_schema_reads_what_the_assembly_refuses(tmp_path: Path) -> None:
    """``verirl.config`` validates each section on its own; the parts it names are checked by
    :func:`verirl.assembly.check`, on the CLI's load and again by the ``Trainer``, before it
    builds anything (the run directory is not created)."""
    cases = {
        "credit.name=gpro": "credit.name: unknown credit estimator 'gpro'",
        "credit.name=process": "credit.name: 'process' needs verified steps",
        "loss.off_policy.name=nope": "loss.off_policy.name: unknown",
        "optim.schedule=step": "optim.schedule: unknown learning-rate schedule 'step'",
        "loss.terms.kll.coef=0.1": "loss.terms: unknown loss term 'kll'",
        "loss.terms.kl.estimator=k2": "loss.terms.kl.coef",
        "loss.token_mask.name=top20": "loss.token_mask.name: unknown token mask 'top20'",
        "loss.token_mask.params={rho: 2}": "loss.token_mask.params.rho",
        "run.health.stop_on=[nan]": "run.health: stop_on: unknown detector 'nan'",
        "verification.executor.params={workers: 0}": "verification.executor.params.workers",
    }
    for override, message in cases.items():
        cfg = schema.load_config(None, [override])  # the schema alone accepts it
        with pytest.raises(ConfigError) as err:
            check(cfg)
        assert message in str(err.value)
        with pytest.raises(ConfigError, match=re.escape(message)):
            load_config(None, [override])
        with pytest.raises(ConfigError, match=re.escape(message)):
            build(cfg)
        assert not (tmp_path / "run").exists()


def test_check_spells_out_all_detectors_and_keeps_the_rest() -> None:
    cfg = schema.load_config(None, ["run.health.stop_on=[all]"])
    assert cfg.run.health.stop_on == ["all"]
    assert check(cfg) is cfg
    assert cfg.run.health.stop_on == DETECTORS.names()
    assert check(schema.TrainConfig()) == schema.TrainConfig()


def test_evaluation_and_preflight_build_no_learner_and_no_optimizer(
    tiny_run: TinyRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from verirl.preflight import preflight
    from verirl.train import learner

    built: list[str] = []

    def spy(owner: object, name: str) -> None:
        real = getattr(owner, name)
        monkeypatch.setattr(owner, name, lambda *a, **k: built.append(name) or real(*a, **k))

    spy(Backend, "learner")
    spy(learner, "build_optimizer")
    spy(assembly, "plan_memory")
    small = ["eval.problems=1", "eval.difficulties=[0]", "curriculum.environments=[addition]"]
    overrides = tiny_run(tmp_path / "run", 1, *small, "rollout.max_new_tokens=2")
    assert main(["eval", *overrides]) == 0
    preflight(load_config(None, overrides), problems=1)
    assert built == []
    with build(load_config(None, overrides)):  # the same config's training build has them
        assert built == ["plan_memory", "learner", "build_optimizer"]


def test_training_and_verirl_memory_make_one_plan_that_the_learner_takes(
    tiny_run: TinyRun, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planned: list[int] = []
    compute = memory_plan.compute_plan

    def counted(inputs: memory_plan.PlanInputs, limit: float | None = None) -> MemoryPlan:
        planned.append(inputs.step.prompt_tokens)
        return compute(inputs, limit)

    monkeypatch.setattr(memory_plan, "compute_plan", counted)
    monkeypatch.setattr(memory_plan, "memory_limit", lambda device: 0.3e9)  # a tight machine
    overrides = tiny_run(tmp_path / "run", 1, "optim.activation_checkpointing=auto")
    cfg = load_config(None, [*overrides, "run.check_memory=false"])
    with build(cfg) as parts:
        assert parts.memory_plan is not None and parts.memory_plan.activation_checkpointing
        assert parts.learner.settings.activation_checkpointing  # type: ignore[attr-defined]
        tasks = parts.producer.curriculum
        longest = max(len(parts.producer.formatter.encode(p)) for p in tasks.preview(16))
    # one plan: without checkpointing (too big for the machine), then with it
    assert planned == [longest, longest]
    alone = plan(cfg)  # `verirl memory`'s: from the same parts, the same numbers
    assert alone.peak == parts.memory_plan.peak and planned == [longest] * 4
