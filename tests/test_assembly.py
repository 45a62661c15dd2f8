"""The assembly of a run: the schema reads a config, the assembly checks the parts it names
against their registries and each other. Declared requirements: every incompatible pair is
refused at load time, in one line naming both fields; compatible ones load."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from verirl import config as schema
from verirl.assembly import check, load_config
from verirl.config import ConfigError
from verirl.credit import CREDIT
from verirl.rewards import REWARDS
from verirl.rollout.collect import COLLECTORS
from verirl.train.health import DETECTORS
from verirl.trainer import Trainer

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
            Trainer(cfg, tmp_path / "run")
        assert not (tmp_path / "run").exists()


def test_check_spells_out_all_detectors_and_keeps_the_rest() -> None:
    cfg = schema.load_config(None, ["run.health.stop_on=[all]"])
    assert cfg.run.health.stop_on == ["all"]
    assert check(cfg) is cfg
    assert cfg.run.health.stop_on == DETECTORS.names()
    assert check(schema.TrainConfig()) == schema.TrainConfig()
