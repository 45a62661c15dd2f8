"""The registered loggers (``run.loggers``, verirl.train.loggers), each with its real package:
what they write is read back from their own files — TensorBoard's event files, a Weights &
Biases offline run (no network), trackio's local database — and the config that names them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ValidationError

from tests.train import wandb_files
from verirl.assembly import load_config
from verirl.config import ConfigError, Plugin
from verirl.train.loggers import (
    LOGGERS,
    LoggerContext,
    run_loggers,
    start_loggers,
)
from verirl.train.metrics import MetricsLog

ROOT = Path(__file__).resolve().parents[2]
ROWS = {
    1: {"rollout/reward": -0.5, "rollout/accuracy": 0.25, "train/loss": 0.125},
    2: {"rollout/reward": 0.5, "rollout/accuracy": 0.75, "train/loss": float("nan")},
    3: {"rollout/reward": 0.75, "rollout/accuracy": 1.0, "train/loss": 0.0625},
}
FINITE = {s: {k: v for k, v in row.items() if v == v} for s, row in ROWS.items()}


def _log_rows(run_dir: Path, name: str, params: dict[str, Any] | None = None) -> None:
    """Three steps through MetricsLog with the logger ``name`` (a NaN loss at step 2)."""
    chosen = [Plugin(name=name, params=params or {})]
    ctx = LoggerContext(run_dir, run_dir.name, {"run": {"seed": 7}})
    log = MetricsLog(run_dir, loggers=start_loggers(chosen, ctx), total_steps=3)
    for step, row in ROWS.items():
        log.write_step(step, row)
    log.close()


def test_the_three_loggers_are_registered() -> None:
    assert {"tensorboard", "wandb", "trackio"} <= set(LOGGERS.names())


def test_tensorboard_events_hold_every_finite_value(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    _log_rows(tmp_path / "run", "tensorboard")
    events = EventAccumulator(str(tmp_path / "run" / "tensorboard"))
    events.Reload()
    got = {tag: {e.step: e.value for e in events.Scalars(tag)} for tag in events.Tags()["scalars"]}
    want: dict[str, dict[int, float]] = {}
    for step, row in FINITE.items():
        for key, value in row.items():
            want.setdefault(key, {})[step] = value
    assert got == want  # the NaN loss of step 2 is left out


def test_wandb_offline_run_files_hold_the_metrics_and_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("wandb")
    monkeypatch.setenv("WANDB_MODE", "offline")  # no network, whatever the params say
    monkeypatch.setenv("WANDB_SILENT", "true")
    _log_rows(tmp_path / "run", "wandb", {"project": "verirl-test"})
    path = wandb_files.offline_run_file(tmp_path / "run")
    assert path.name == "run-run.wandb"  # the W&B run id is the run's name
    history = wandb_files.wait_for_history(path, len(ROWS))
    logged = {
        s: {k: v for k, v in row.items() if not k.startswith("_")} for s, row in history.items()
    }
    assert logged == FINITE
    assert wandb_files.config(path)["run"] == {"seed": 7}


def test_trackio_local_database_holds_the_metrics(tmp_path: Path) -> None:
    """In a child process: trackio reads TRACKIO_DIR when it is first imported."""
    pytest.importorskip("trackio")
    script = textwrap.dedent(
        f"""
        import json, sys
        from pathlib import Path
        from tests.train.test_loggers import _log_rows
        import trackio
        _log_rows(Path({str(tmp_path / "run")!r}), "trackio", {{"project": "verirl-test"}})
        logs = trackio.SQLiteStorage.get_logs("verirl-test", "run")
        print(json.dumps([{{k: v for k, v in row.items() if "/" in k or k == "step"}}
                          for row in logs]))
        """
    )
    env = {
        **os.environ,
        "TRACKIO_DIR": str(tmp_path / "trackio"),
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
    }
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    assert {r.pop("step"): r for r in rows} == FINITE
    assert "Trackio" not in done.stdout  # trackio's own messages went to stderr
    assert (tmp_path / "trackio" / "verirl-test.db").is_file()


class _NoParams(BaseModel):
    pass


class _Recording:
    """A logger that remembers what it was given (registered by the test below)."""

    started: ClassVar[list[_Recording]] = []

    def __init__(self) -> None:
        self.rows: list[tuple[int, dict[str, float]]] = []
        self.closed = 0
        _Recording.started.append(self)

    def log(self, step: int, metrics: Mapping[str, float]) -> None:
        self.rows.append((step, dict(metrics)))

    def close(self) -> None:
        self.closed += 1


def test_a_plugin_logger_gets_finite_rows_and_is_closed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LOGGERS, "_items", dict(LOGGERS._items))
    monkeypatch.setattr(_Recording, "started", [])
    LOGGERS.register("test_recording", _NoParams)(lambda params, ctx: _Recording())
    _log_rows(tmp_path / "run", "test_recording")
    [logger] = _Recording.started
    assert logger.rows == sorted(FINITE.items()) and logger.closed == 1
    # one that fails to start closes those already started, and the error names the field
    chosen = [Plugin(name="test_recording"), Plugin(name="tensorboard", params={"dir": 3})]
    with pytest.raises(ValidationError, match="dir"):
        start_loggers(chosen, LoggerContext(tmp_path, "r"))
    assert _Recording.started[-1].closed == 1 and not _Recording.started[-1].rows


def test_no_loggers_by_default(tmp_path: Path) -> None:
    assert run_loggers(load_config(None, []), tmp_path) == []


# ---- the config ---------------------------------------------------------------------------------
def test_loggers_by_name_or_with_params() -> None:
    cfg = load_config(None, ["run.loggers=[tensorboard, {name: wandb, params: {mode: offline}}]"])
    assert cfg.run.loggers == [
        Plugin(name="tensorboard"),
        Plugin(name="wandb", params={"mode": "offline"}),
    ]
    assert load_config(None, ["run.loggers=trackio"]).run.loggers == [Plugin(name="trackio")]


def test_the_old_tensorboard_flag_is_a_tensorboard_logger(tmp_path: Path) -> None:
    assert load_config(None, ["run.tensorboard=true"]).run.loggers == [Plugin(name="tensorboard")]
    assert load_config(None, ["run.tensorboard=false"]).run.loggers == []
    both = load_config(None, ["run.tensorboard=true", "run.loggers=[tensorboard]"])
    assert both.run.loggers == [Plugin(name="tensorboard")]
    # an older run directory's config.yaml, as it was dumped
    old = tmp_path / "config.yaml"
    old.write_text("run:\n  tensorboard: true\n  keep_checkpoints: 2\n")
    assert load_config(old, []).run.loggers == [Plugin(name="tensorboard")]
    with pytest.raises(ConfigError, match=r"run\.tensorboard must be true or false"):
        load_config(None, ["run.tensorboard=sometimes"])


def test_an_unknown_logger_or_bad_params_name_the_field() -> None:
    with pytest.raises(ConfigError, match=r"run\.loggers\[1\]\.name: unknown logger 'mlflow'"):
        load_config(None, ["run.loggers=[tensorboard, mlflow]"])
    with pytest.raises(ConfigError, match=r"run\.loggers\[0\]\.params\.mode"):
        load_config(None, ["run.loggers=[{name: wandb, params: {mode: sometimes}}]"])


def test_a_resumed_run_drops_the_tensorboard_steps_after_its_checkpoint(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    _log_rows(tmp_path / "run", "tensorboard")  # steps 1-3; the checkpoint was at step 1
    spec = LOGGERS.get("tensorboard")
    resumed = spec.build({}, LoggerContext(tmp_path / "run", "run", resume_step=1))
    resumed.log(2, {"rollout/reward": 0.0})
    resumed.close()
    events = EventAccumulator(str(tmp_path / "run" / "tensorboard"))
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("rollout/reward")] == [(1, -0.5), (2, 0.0)]
