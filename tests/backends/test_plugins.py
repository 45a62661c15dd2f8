"""``run.placement`` and ``run.schedule`` are ``{name, params}`` checked against their
registries, so a placement and a schedule registered by a ``run.plugins`` module are chosen by
name and a run goes through them; unknown names and wrong params are refused in one line
naming the field."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import TinyRun
from verirl.assembly import build, load_config
from verirl.backends import PLACEMENTS, SCHEDULES
from verirl.config import ConfigError
from verirl.train.metrics import read_metrics
from verirl.trainer import Trainer

PLUGIN = "run.plugins=[tests.train.plugin_rewards,tests.backends.plugin_placement]"


def test_a_plugin_placement_and_schedule_run_a_tiny_run(tiny_run: TinyRun, tmp_path: Path) -> None:
    from tests.backends import plugin_placement

    plugin_placement.CALLS.clear()
    run = tmp_path / "run"
    overrides = tiny_run(
        run, 2, PLUGIN, "run.placement.name=test_recording", "run.schedule.name=test_counting"
    )
    with Trainer(build(load_config(None, overrides)), run) as t:
        assert (t.parts.backend.name, t.parts.schedule.name) == ("test_recording", "test_counting")
        t.fit()
    assert plugin_placement.CALLS == [
        "executor",  # the verifiers before the weights load, then the engine over them
        "engine",
        "learner",
        "rollouts 0",
        "publish 1",
        "rollouts 1",
        "publish 2",
        "close",
    ]
    rows = read_metrics(run)
    assert [r["step"] for r in rows] == [1, 2]
    assert all(r["test/placement_calls"] == 1.0 for r in rows)  # its metrics were logged


def test_unknown_placement_and_schedule_and_their_params_name_the_field() -> None:
    assert {"local", "torchrun"} <= set(PLACEMENTS.names())
    assert {"synchronous", "bounded_staleness"} <= set(SCHEDULES.names())
    with pytest.raises(ConfigError, match=r"^run\.placement\.name: unknown placement 'nowhere'"):
        load_config(None, ["run.placement.name=nowhere"])
    with pytest.raises(ConfigError, match=r"^run\.schedule\.name: unknown schedule 'later'"):
        load_config(None, ["run.schedule.name=later"])
    with pytest.raises(ConfigError, match=r"^run\.schedule\.params\.max_staleness: "):
        load_config(
            None, ["run.schedule.name=bounded_staleness", "run.schedule.params.max_staleness=-1"]
        )
    with pytest.raises(ConfigError, match=r"^run\.schedule\.params\.k: "):  # synchronous takes none
        load_config(None, ["run.schedule.params.k=1"])
    k2 = load_config(
        None, ["run.schedule.name=bounded_staleness", "run.schedule.params.max_staleness=2"]
    )
    assert SCHEDULES.get(k2.run.schedule.name).parse(k2.run.schedule.params).max_staleness == 2  # type: ignore[attr-defined]


def test_the_ray_placement_s_settings_live_in_its_plug_in_and_are_checked_by_field() -> None:
    """Ray's settings are the ray placement's params (verirl.integrations.ray.settings), not a
    section of the core config; a wrong one is refused naming the field under the placement."""
    from verirl.config import TrainConfig

    assert "ray" not in TrainConfig.model_fields
    ray = ["run.plugins=[verirl.integrations.ray.placement]", "run.placement.name=ray"]
    cfg = load_config(None, [*ray, "run.placement.params.learner.workers=2"])
    assert PLACEMENTS.get("ray").parse(cfg.run.placement.params).learner.workers == 2  # type: ignore[attr-defined]
    with pytest.raises(ConfigError, match=r"^run\.placement\.params\.verifiers\.actors: "):
        load_config(None, [*ray, "run.placement.params.verifiers.actors=0"])
    with pytest.raises(ConfigError, match=r"^run\.placement\.params\.adress: "):
        load_config(None, [*ray, "run.placement.params.adress=auto"])
