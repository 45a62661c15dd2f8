"""``run.backend`` and ``run.schedule`` are checked against their registries, so a placement
and a schedule registered by a ``run.plugins`` module are chosen by name and a run goes
through them; unknown names are refused in one line naming the field."""

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
    overrides = tiny_run(run, 2, PLUGIN, "run.backend=test_recording", "run.schedule=test_counting")
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


def test_unknown_placement_and_schedule_name_the_field() -> None:
    assert {"local", "torchrun", "ray"} <= set(PLACEMENTS.names())
    assert {"synchronous", "bounded_staleness"} <= set(SCHEDULES.names())
    with pytest.raises(ConfigError, match=r"^run\.backend: unknown placement 'nowhere'; known: "):
        load_config(None, ["run.backend=nowhere"])
    with pytest.raises(ConfigError, match=r"^run\.schedule: unknown schedule 'later'; known: "):
        load_config(None, ["run.schedule=later"])
    with pytest.raises(ConfigError, match=r"contradicts run\.async\.max_staleness=1"):
        load_config(None, ["run.schedule=synchronous", "run.async.max_staleness=1"])
